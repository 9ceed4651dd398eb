// The `cuda` platform: modules compiled to PTX by the embedded code generator
// (replay/codegen/gpu_codegen.h) and run on an NVIDIA GPU through the driver API, which is
// loaded with dlopen (cuda_driver.h), so hlowb starts and the other platforms work without one.
//
// Two ways in:
//  - a module as written (jax's before-optimizations HLO, a corpus test): the embedded `gpu`
//    pipeline runs first (simplification, fusion, scheduling), then every loop and reduction
//    fusion and every elementwise, data-movement, gather, reduce and convolution instruction
//    becomes one kernel (convolutions a thread per output element, not cuDNN);
//  - XLA's optimized GPU HLO as it is (`run_hlo_passes = false`, `hlowb replay
//    --run_test_hlo_passes=false`; an is_scheduled module from a
//    `*gpu_after_optimizations*` dump): each fusion becomes one kernel from its fused
//    computation, so the kernel boundaries are XLA's own, and the `__cublas$gemm` and
//    `__cublas$lt$matmul` custom calls run in cuBLAS with their backend_config (alpha, beta,
//    dot dimensions), their epilogues (BIAS, RELU, GELU and their combinations, AUX) as one
//    kernel after the GEMM; XLA's cuDNN forward convolutions (`__cudnn$convForward`,
//    `__cudnn$convBiasActivationForward`: scale, side input, bias, activation) are one kernel
//    each, generated here rather than cuDNN's; backward convolutions run on the host.
// f32, f64, f16 and bf16 dots, and cuBLAS custom calls of those types, are cuBLAS GEMMs (16-bit
// ones summing in f32); what neither the generator nor cuBLAS takes (sort, scatter, rng, fft,
// other custom calls, collectives, the narrow-float forms the generator refuses) is computed by
// the interpreter for that instruction, so a module always runs and never gives an answer the
// interpreter would not. The summary says what was not compiled and why.
//
// Without a GPU the same kernels run on the host's GPU emulator (CudaCompileOptions::emulate,
// `--cuda_emulate`): CI checks the platform's results that way.
//
// Running walks the module with the reference evaluator's driver, which asks the compiled
// kernels first: a kernel's operands are copied to device buffers, it runs, and its results
// are copied back. Kernel and GEMM times are measured with CUDA events and reported in the
// run's statistics.
//
// Float results agree with the interpreter within the per-type tolerances below; integer and
// pred results agree bit for bit. TF32 is off by default (`allow_tf32`, `hlowb replay
// --cuda_allow_tf32`); with it on, f32 GEMMs round their inputs to 10 mantissa bits and these
// tolerances no longer hold for dots.
//
// | type          | tolerance vs interpreter (relative / absolute) | why                          |
// |---------------|------------------------------------------------|------------------------------|
// | pred, s*, u*  | exact                                          | same semantics               |
// | f32           | 1e-5 / 1e-5 (dots: 1e-4 / 1e-4)                | libdevice math is within 2   |
// |               |                                                | ulp; cuBLAS sums in another  |
// |               |                                                | order than the interpreter   |
// | f64           | 1e-9 / 1e-9 (dots: 1e-8 / 1e-8)                | as for f32                   |
// | f16, bf16     | one unit in the last place of the type         | rounded per instruction      |
#ifndef HLOWB_REPLAY_BACKENDS_CUDA_CUDA_BACKEND_H_
#define HLOWB_REPLAY_BACKENDS_CUDA_CUDA_BACKEND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/passes/hlo_pass.h"
#include "core/passes/module_dumper.h"
#include "core/support/cancel.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

inline constexpr char kCudaPlatform[] = "cuda";

struct CudaTolerance {
  double relative = 0;
  double absolute = 0;
};
// Tolerance for an element of `type` computed by `opcode`'s kernel or library call.
CudaTolerance CudaToleranceFor(PrimitiveType type, bool dot = false);

// Whether the cuda platform can run here: a driver, a GPU; the error says what is missing.
absl::Status CudaAvailable();
// "NVIDIA H200 (sm_90, 132 SMs, 140 GiB, driver 13.0)", or the reason it is unavailable.
std::string CudaDeviceDescription();

struct CudaCompileOptions {
  // Run the gpu pass pipeline first; false compiles the module as given (XLA's optimized HLO).
  bool run_hlo_passes = true;
  PassOptions pass_options;
  DumpOptions dump_options;  // the pipeline's dumps plus .ir-no-opt.ll, .ir-with-opt.ll, .ptx
  int device_ordinal = 0;
  // Target for the PTX; empty: the device's (clamped to sm_90), or sm_80 without a device.
  std::string gpu_arch;
  int opt_level = 2;
  bool allow_tf32 = false;
  // Compile only: emit PTX without a device (CudaPtx, `hlowb opt --stage=ptx`, CI).
  bool compile_only = false;
  // Run on the host's GPU emulator instead of a GPU (replay/codegen/gpu_emulator.h): the same
  // kernels, compiled for the host, run with the GPU's threads, warps, shuffles, barriers and
  // shared memory; device memory is host memory; cuBLAS calls are a host GEMM taking the same
  // arguments. Needs no driver. It checks the platform's code, not its speed (times are the
  // host's), and math functions are the C library's, not libdevice's. `hlowb replay
  // --platform=cuda --cuda_emulate`.
  bool emulate = false;
  // Run in the arena runtime (replay/backends/cpu/cpu_arena.h) over one block of managed memory
  // where buffer assignment places every value: arguments and constants are copied in once,
  // kernels and cuBLAS work on pointers into it, and values stay on the device between them.
  // false, or a module the arena cannot run (compiled as given, asynchronous pairs), runs on
  // the evaluator's driver, copying each kernel's operands to the device and its results back;
  // the summary says which. `--cuda_arena=false`.
  bool arena = true;
  const CancelToken* cancel = nullptr;
};

struct CudaCompileStats {
  double pass_seconds = 0;
  double codegen_seconds = 0;  // LLVM: emit, optimise, PTX
  double load_seconds = 0;     // the driver's PTX compilation and module load
  double total_seconds = 0;
  int64_t kernels = 0;
  // Kernels whose threads compute each element together (reductions by warps or blocks).
  int64_t cooperative_kernels = 0;
  // Transposes through shared-memory tiles (not counted in cooperative_kernels).
  int64_t tiled_transposes = 0;
  int64_t library_calls = 0;   // cuBLAS GEMMs
  int64_t interpreted = 0;
  std::map<std::string, int64_t> interpreted_by_opcode;
  std::string arch;
  std::vector<std::string> dump_files;
  int64_t arena_bytes = 0;     // the arena's block (temp, outputs, copies of the inputs)
  std::string arena_refused;   // why the module runs on the driver instead; empty in the arena
};

struct CudaRunStats {
  int64_t kernel_launches = 0;
  int64_t gemm_calls = 0;
  double kernel_ms = 0;  // device time of kernels (CUDA events)
  double gemm_ms = 0;    // device time of cuBLAS calls
  double copy_seconds = 0;
};

// The PTX for an already optimised `module` (`hlowb opt --stage=ptx`), for `arch` (sm_80 when
// empty), with the refused instructions listed as comments at the top.
absl::StatusOr<std::string> CudaKernelPtx(const Module& module, const std::string& arch);

class CudaExecutable {
 public:
  static absl::StatusOr<std::unique_ptr<CudaExecutable>> Compile(const Module& module,
                                                                 const CudaCompileOptions& options);
  ~CudaExecutable();

  const Module& module() const;
  const CudaCompileStats& stats() const;
  // The PTX programs loaded: the kernels of the module's instructions, then (when a fusion was
  // refused) those of the refused fusions' own instructions.
  const std::vector<std::string>& ptx_programs() const;
  std::string Summary() const;
  const std::vector<std::pair<std::string, std::string>>& not_compiled() const;

  absl::StatusOr<Literal> Run(const std::vector<Literal>& arguments, EvaluatorOptions options) const;
  std::function<std::optional<absl::StatusOr<Literal>>(const Instruction&,
                                                       const std::vector<const Literal*>&)>
  Hook(std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
       ConstantCache* constant_cache = nullptr) const;
  // Statistics of the runs so far (summed).
  CudaRunStats run_stats() const;
  // Whether runs go through the arena runtime (CudaCompileOptions::arena).
  bool RunsInArena() const;

 private:
  CudaExecutable();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_BACKENDS_CUDA_CUDA_BACKEND_H_
