// The GPU code generator: HLO instructions in, PTX out. It is the CPU generator's elemental
// emitter (kernel_emitter.cc) pointed at LLVM's NVPTX backend: every instruction the emitter
// accepts becomes one `.entry` kernel whose threads each compute output elements of the
// instruction's iteration space (a grid-stride loop), so a loop fusion is one pass over memory
// with no temporaries. Reductions over rows of 32 elements or more (or over columns, when there
// are few outputs) are cooperative: a warp, or the whole block for rows of 256 or more, computes
// each output element, its lanes folding strided elements, then combining through warp shuffles
// and, across a block's warps, shared memory (KernelForm in cpu_jit.h). Math functions are bound to CUDA's libdevice (linked from the toolkit's
// nvvm/libdevice/libdevice.10.bc); kernels that would need a host helper (the f8 and other
// narrow-float converters) are refused with the reason, and the caller computes that instruction
// some other way. LLVM's headers stay inside replay/codegen: nothing here exposes an LLVM type.
//
// LLVM 16's NVPTX backend knows targets up to sm_90 and PTX ISA 7.8, so newer GPUs get sm_90 PTX,
// which their driver compiles (CUDA 13's ptxas and driver accept sm_90 PTX for sm_90a, sm_100
// and sm_120).
#ifndef HLOWB_REPLAY_CODEGEN_GPU_CODEGEN_H_
#define HLOWB_REPLAY_CODEGEN_GPU_CODEGEN_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/support/cancel.h"
#include "replay/codegen/cpu_jit.h"

namespace hlowb::codegen {

// One kernel of a PTX program. Its parameters are (ptr buffers, i64 count): `buffers` is a device
// array of device pointers laid out as for the CPU kernels (operands, then `constants`, then one
// output per array result), all 256-byte aligned (as cuMemAlloc gives them), and `count` is
// `iteration_count`. It must be launched with `block_size` threads per block (a thread's elements
// are `block_size` apart); any grid covers the space (blocks stride by the grid).
struct GpuKernelInfo {
  const Instruction* instruction = nullptr;
  std::string kernel_name;
  std::vector<const Instruction*> constants;
  int num_outputs = 1;
  int64_t iteration_count = 0;
  int64_t cost_per_element = 1;
  int block_size = 256;
  // Elements each thread computes per step of its grid-stride loop (block_size apart, loaded
  // together): 4 for elementwise and data-movement kernels, 1 for those that reduce.
  int elements_per_thread = 1;
  // Threads that compute each element together (a cooperative reduction, KernelForm in
  // cpu_jit.h: 32, a warp, or block_size, the block); 1 for kernels whose threads each compute
  // their own elements. A grid then covers block_size / threads_per_element elements per block.
  int threads_per_element = 1;
  // A tiled transpose (KernelForm::tiled_transposes): `iteration_count` counts its 32x32 tiles,
  // one per block.
  bool tiled_transpose = false;
};

class GpuEmulation;

struct PtxOptions {
  // "sm_80", "sm_90", ...; targets past sm_90 are emitted for sm_90 (see above).
  std::string gpu_arch = "sm_80";
  int opt_level = 2;
  // libdevice.10.bc; empty: FindLibdevice(). Without it, kernels that call math functions are
  // refused.
  std::string libdevice_path;
  // When set, the program's IR (before and after optimisation) and PTX are written here as
  // <dump_prefix>.ir-no-opt.ll, .ir-with-opt.ll and .ptx, XLA's names for these dumps.
  std::string dump_dir;
  std::string dump_prefix = "module";
  const CancelToken* cancel = nullptr;
  // Compile the same kernels for the host's GPU emulator instead of PTX (`emulation` below; no
  // PTX, no libdevice: math functions are the C library's).
  bool emulate = false;
};

struct PtxProgram {
  std::string ptx;
  std::string arch;  // the target the PTX was emitted for ("sm_90")
  std::vector<GpuKernelInfo> kernels;
  std::vector<RefusedInstruction> refused;
  double emit_seconds = 0;
  double optimize_seconds = 0;
  double codegen_seconds = 0;
  std::vector<std::string> dump_files;
  // With PtxOptions::emulate: the kernels, compiled for the host.
  std::shared_ptr<const GpuEmulation> emulation;
};

// libdevice.10.bc under $CUDA_PATH, $CUDA_HOME, /usr/local/cuda or /usr/lib/cuda; "" if none.
std::string FindLibdevice();
// The highest sm LLVM's NVPTX backend targets here (90), and `arch` clamped to it ("sm_100" ->
// "sm_90"). Error: not of the form sm_NN.
int MaxNvptxSm();
absl::StatusOr<std::string> ClampGpuArch(const std::string& arch);

// Emits, optimises and compiles to PTX a kernel for each of `instructions` the emitter accepts
// (they must outlive the result); the rest come back in `refused`. Errors: a bad arch, LLVM
// failing on what it was given, Cancelled.
absl::StatusOr<PtxProgram> CompileToPtx(const std::vector<const Instruction*>& instructions,
                                        const PtxOptions& options);

// The kernels of a program compiled for the host's GPU emulator (gpu_emulator.h).
class GpuEmulation {
 public:
  struct Impl;
  explicit GpuEmulation(std::unique_ptr<Impl> impl);
  ~GpuEmulation();
  // Runs `kernel` as a launch of `grid` blocks of kernel.block_size threads would, with `table`
  // the (host) array of buffer pointers. Errors: as EmulateLaunch.
  absl::Status Launch(const GpuKernelInfo& kernel, void* table, int64_t count, int64_t grid,
                      const CancelToken* cancel = nullptr) const;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::codegen

#endif  // HLOWB_REPLAY_CODEGEN_GPU_CODEGEN_H_
