// The CPU code generator's public face: HLO instructions in, native kernels out. A kernel
// computes one instruction of a module (a loop or reduction fusion, or a single elementwise,
// data-movement or reduce instruction) straight from raw buffers, in the logical row-major
// element order that Literal stores. Kernels are emitted as LLVM IR (kernel_emitter.cc),
// optimised for the host CPU at O2 (vectorised, AVX-512 where present), compiled to objects in
// parallel, cached on disk by content, and linked into an ORC JIT (cpu_jit.cc). LLVM's headers
// stay inside this folder: nothing here exposes an LLVM type.
//
// What a kernel can do is decided by the emitter while emitting: an instruction whose opcode,
// element type or layout it does not handle is refused with the reason, and the caller computes
// that instruction some other way (the cpu backend hands it to the interpreter).
#ifndef HLOWB_REPLAY_CODEGEN_CPU_JIT_H_
#define HLOWB_REPLAY_CODEGEN_CPU_JIT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/support/cancel.h"

namespace hlowb::codegen {

// buffers: the instruction's operands in order, then the array constants the kernel reads (see
// KernelInfo::constants), then one output per array the instruction produces (the leaves of a
// tuple-shaped result, in order). The kernel computes the linear output elements [begin, end)
// of its iteration space (KernelInfo::iteration_count); disjoint ranges may run in parallel.
using KernelFn = void (*)(void* const* buffers, int64_t begin, int64_t end);

// A compiled scalar computation with P parameters and R results (the leaves of a tuple root, in
// order): args[0..P) point to the parameters' values and args[P..P+R) to where the results go,
// one element each in Literal's storage format (pred a byte, narrow floats their bits, sub-byte
// integers a byte, complex values {re, im}). Every parameter is read before any result is
// written, so a result may overwrite a parameter. Safe to call from several threads at once.
using ScalarFn = void (*)(void* const* args);

struct KernelInfo {
  const Instruction* instruction = nullptr;
  std::string function_name;
  // Array constants inside a fused computation whose data the kernel reads from a buffer.
  std::vector<const Instruction*> constants;
  int num_outputs = 1;
  int64_t iteration_count = 0;
  // Rough work per output element (instructions, times the reduced elements for reductions),
  // for deciding how finely to split a kernel across threads.
  int64_t cost_per_element = 1;
  // An in-place form (CPU only) of a dynamic-update-slice, or of a fusion whose root is one: the
  // output buffer is the storage of operand `in_place_operand` (InPlaceUpdatedOperand), which
  // the kernel never reads, and it writes only the updated elements; its iteration space is the
  // update's elements. -1 for ordinary kernels. Compile returns it after the instruction's
  // ordinary kernel.
  int in_place_operand = -1;
  // GPU kernels (KernelForm::cooperative_reductions): the threads that compute one output
  // element together; 1 for kernels whose threads each compute their own elements.
  int threads_per_element = 1;
  // A tiled transpose (KernelForm::tiled_transposes): iteration_count counts tiles.
  bool tiled_transpose = false;
  KernelFn fn = nullptr;
};

struct RefusedInstruction {
  const Instruction* instruction = nullptr;
  std::string reason;
};

struct JitOptions {
  int opt_level = 2;
  // Objects are cached here by the hash of their unoptimised IR, the LLVM version, the host CPU
  // and its features, and the optimisation level. Empty: no cache.
  std::string cache_dir;
  // When set, every compiled chunk's IR (before and after optimisation) and assembly are written
  // here as <dump_prefix>.ir-no-opt.ll, .ir-with-opt.ll and .s (chunks after the first get a
  // .N suffix before the extension), XLA's names for these dumps.
  std::string dump_dir;
  std::string dump_prefix = "module";
  // Compile threads; 0 = one per hardware thread.
  int compile_threads = 0;
  // Kernels per LLVM module (the unit of caching and of parallel compilation).
  int kernels_per_module = 48;
  const CancelToken* cancel = nullptr;
};

struct JitStats {
  int64_t kernels = 0;
  int64_t modules = 0;
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t corrupt_cache_entries = 0;  // unreadable or failing their checksum; rebuilt
  // Kernels whose code is the same as an earlier kernel's (repeated layers of a model): they run
  // that kernel's compiled code, and only the distinct kernels are optimised and compiled.
  int64_t shared_kernels = 0;
  // In-place forms compiled besides the kernels (not counted in `kernels`).
  int64_t in_place_kernels = 0;
  double emit_seconds = 0;
  double optimize_and_codegen_seconds = 0;  // summed over compile threads
  double link_seconds = 0;
  double total_seconds = 0;
  std::vector<std::string> dump_files;  // the IR and assembly dumps written
};

// Default cache folder: $HLOWB_CACHE_DIR, else $XDG_CACHE_HOME/hlowb/cpu-kernels, else
// ~/.cache/hlowb/cpu-kernels.
std::string DefaultKernelCacheDir();
// "16.0.6", and the host CPU as LLVM names it ("znver4").
std::string LlvmVersionString();
std::string HostCpuName();

class CpuJit {
 public:
  static absl::StatusOr<std::unique_ptr<CpuJit>> Create(const JitOptions& options);
  ~CpuJit();
  CpuJit(const CpuJit&) = delete;
  CpuJit& operator=(const CpuJit&) = delete;

  // Emits, compiles and links kernels for `instructions` (which must outlive the JIT). Those the
  // emitter refuses come back in `refused`, and the rest in the result, each with its entry
  // point. Errors: LLVM failing to compile or link what it was given, Cancelled.
  absl::StatusOr<std::vector<KernelInfo>> Compile(
      const std::vector<const Instruction*>& instructions, std::vector<RefusedInstruction>* refused);

  // Compiles scalar computations (sort comparators, scatter combiners: scalar parameters, a
  // scalar or a tuple of scalars as the result) into ScalarFns. The result has one entry per
  // computation, null for those the emitter refuses, whose reason is at the same position in
  // `refused` (empty for the others). Errors: LLVM failing to compile or link, Cancelled.
  absl::StatusOr<std::vector<ScalarFn>> CompileScalarFunctions(
      const std::vector<const Computation*>& computations, std::vector<std::string>* refused);

  const JitStats& stats() const;

 private:
  CpuJit();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The unoptimised and optimised LLVM IR the emitter makes for `instructions` (for
// `hlowb opt --stage=llvm`), with refused instructions listed as comments at the top.
absl::StatusOr<std::string> EmitLlvmIrText(const std::vector<const Instruction*>& instructions,
                                           bool optimized);

// Whether `s` is laid out row-major (no layout, or minor_to_major descending, untiled): the
// element order kernels and library calls read and write.
bool RowMajorLayout(const Shape& s);

// Internal: the emitter (kernel_emitter.cc), used by cpu_jit.cc. Emits one LLVM module holding a
// kernel for every instruction it accepts into `llvm_module` (an llvm::Module*, kept opaque so
// this header needs no LLVM). `first_index` numbers the kernels' function names.
struct EmittedKernel {
  KernelInfo info;
  int index = 0;  // position in the instruction list given to Compile
};
// The shape of the kernels EmitKernels makes; the default is the CPU's.
struct KernelForm {
  // > 0 (GPU kernels: one thread's elements): a call computes the elements
  // begin + k * element_stride below `end`, k < elements_per_call, all of them before storing
  // any when there are that many; 0 is the CPU's form, a loop over [begin, end).
  int elements_per_call = 0;
  int64_t element_stride = 1;
  // GPU kernels of one element per call: a kernel whose outputs are reduces over rows of 32 or
  // more elements (or over columns, for few outputs) is a cooperative reduction. A call then
  // computes output element `begin` with a group of KernelInfo::threads_per_element threads
  // (a warp, or the whole block for rows of 256 or more), the group's lanes (thread index
  // modulo the group) folding every group-th element, combining through warp shuffles and,
  // for a block, shared memory and barriers; lane 0 stores. All of a group's threads must make
  // the same calls.
  bool cooperative_reductions = false;
  // GPU kernels: a kernel whose one output is a transpose that moves the innermost dimension
  // (both it and the dimension that becomes innermost of 32 elements or more) is tiled: a call
  // computes 32x32 tile `begin` with the whole block, which reads the tile along the input's
  // rows into shared memory and, after a barrier, writes it along the output's rows, so both
  // sides are coalesced (KernelInfo::tiled_transpose; threads_per_element is the block).
  bool tiled_transposes = false;
  int block_size = 256;
  // GPU kernels compiled for the host's GPU emulator (gpu_emulator.h): shared memory comes from
  // hlowb_emu_shared_memory() rather than an array in the shared address space.
  bool emulated = false;
};
absl::Status EmitKernels(void* llvm_module, const std::vector<const Instruction*>& instructions,
                         int first_index, std::vector<EmittedKernel>* emitted,
                         std::vector<RefusedInstruction>* refused, const KernelForm& form = {});

// Internal: emits `void <name_prefix>K(ptr args)` for each accepted computation K into
// `llvm_module`; `names` gets each function's name (empty when refused) and `refused` the reasons.
absl::Status EmitScalarFunctions(void* llvm_module,
                                 const std::vector<const Computation*>& computations,
                                 const std::string& name_prefix, std::vector<std::string>* names,
                                 std::vector<std::string>* refused);

}  // namespace hlowb::codegen

#endif  // HLOWB_REPLAY_CODEGEN_CPU_JIT_H_
