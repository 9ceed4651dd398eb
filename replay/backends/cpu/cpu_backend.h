// The `cpu` platform: modules compiled for the host CPU. Compilation runs the embedded
// compiler's cpu pipeline (core/passes: simplification, fusion, layout, copy insertion,
// scheduling), then hands every loop and reduction fusion and every elementwise,
// data-movement and reduce instruction to the LLVM code generator (replay/codegen); f32, bf16
// and f16 dots and convolutions are library calls into OpenBLAS, gathers are row copies
// (cpu_library_calls.h), philox rng-bit-generators are a parallel library call with the
// interpreter's generator (cpu_library_calls.h), ffts run through Eigen's FFT (cpu_fft.h), and
// sorts and scatters run the interpreter's algorithms with their comparators and combiners
// compiled (cpu_sort_scatter.h).
// A run places every value where buffer assignment put it (cpu_arena.h: one arena per run and
// device, loop state updated in place, parameters read where the caller keeps them and never
// written). The modules the arena runtime refuses (asynchronous pairs, modules compiled as
// given) walk the optimised module with the reference
// evaluator's driver, a literal per value. Either way the compiled kernels and library calls are
// asked first: kernels run on a thread pool straight from the operands' buffers, and what the
// generator and the library calls refused (custom calls,
// collectives, control flow, sorts and scatters whose comparator or combiner the generator
// refuses, and the forms of gather, dot, convolution and fft the calls do not take; rng is
// turned into rng-bit-generator and arithmetic by the pipeline, which also unrolls three-fry
// generators into kernels) is computed by the interpreter for that
// instruction, so a module always runs and never gives an answer the interpreter would not.
// The summary says which instructions were not compiled and why. A dynamic-update-slice, or a
// fusion whose root is one, also gets an in-place kernel that writes only the update into the
// updated operand's storage; the driver runs it when nothing reads that operand afterwards.
//
// Float results agree with the interpreter within the per-type tolerances below; integer and
// pred results agree bit for bit (the kernels implement semantics.h's edge cases).
//
// | type             | tolerance vs interpreter (relative / absolute) | why                     |
// |------------------|------------------------------------------------|-------------------------|
// | pred, s*, u*     | exact                                          | same semantics          |
// | f64, f32         | 1e-5 / 1e-5 (f64: 1e-9 / 1e-9)                 | fused code keeps values |
// |                  |                                                | in registers; vector    |
// |                  |                                                | math; sums and products |
// |                  |                                                | reduced in vector lanes;|
// |                  |                                                | max and min in eight    |
// |                  |                                                | partials (the sign of a |
// |                  |                                                | zero, which NaN)        |
// | c64, c128        | as f32 and f64, for each of the two parts      | as their parts; complex |
// |                  |                                                | functions run the       |
// |                  |                                                | interpreter's formulas  |
// | f16, bf16, f8*   | one unit in the last place of the type         | rounded per instruction |
// |                  | (f16 2^-10, bf16 2^-7 relative)                | like the interpreter    |
#ifndef HLOWB_REPLAY_BACKENDS_CPU_CPU_BACKEND_H_
#define HLOWB_REPLAY_BACKENDS_CPU_CPU_BACKEND_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/passes/module_dumper.h"
#include "core/passes/hlo_pass.h"
#include "core/support/cancel.h"
#include "replay/backends/cpu/cpu_arena.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

inline constexpr char kCpuPlatform[] = "cpu";

// Tolerances for comparing cpu results with the interpreter's, by element type (see the table
// above).
struct CpuTolerance {
  double relative = 0;
  double absolute = 0;
};
CpuTolerance CpuToleranceFor(PrimitiveType type);

struct CpuCompileOptions {
  // Run the cpu pass pipeline first (run_hlo_module's --run_test_hlo_passes); false compiles the
  // module as given.
  bool run_hlo_passes = true;
  PassOptions pass_options;
  // --xla_dump_to and friends: the pipeline's dumps plus the kernels' LLVM IR and assembly
  // (module_NNNN.<name>.ir-no-opt.ll, .ir-with-opt.ll, .s).
  DumpOptions dump_options;
  // Compiled-kernel cache folder; empty: no cache. DefaultKernelCacheDir() is the usual one.
  std::string cache_dir;
  int opt_level = 2;
  // Run on buffer assignment's buffers (cpu_arena.h) when the module allows it; false runs every
  // module on the evaluator's driver, a literal per value.
  bool arena = true;
  // Threads for compiling and for running kernels; 0 = one per hardware thread.
  int threads = 0;
  const CancelToken* cancel = nullptr;
};

struct CpuCompileStats {
  double pass_seconds = 0;
  double codegen_seconds = 0;
  double total_seconds = 0;
  int64_t kernels = 0;
  // Dots, convolutions (OpenBLAS), gathers (row copies), ffts (Eigen), sorts and scatters
  // (compiled comparators and combiners).
  int64_t library_calls = 0;
  int64_t interpreted = 0;    // instructions the interpreter computes (control flow excluded)
  int64_t cache_hits = 0;
  int64_t cache_misses = 0;
  int64_t corrupt_cache_entries = 0;
  int64_t shared_kernels = 0;  // kernels running another kernel's identical compiled code
  // In-place forms of dynamic-update-slice kernels (run when the updated operand is read for the
  // last time), besides `kernels`.
  int64_t in_place_kernels = 0;
  // Bytes one run allocates in the arena runtime (temp and output allocations, private copies of
  // parameters and constants the program writes); arena_refused says why a module runs on the
  // driver instead.
  int64_t arena_bytes = 0;
  std::string arena_refused;
  // Why instructions were not compiled: "dot" -> 12, ...
  std::map<std::string, int64_t> interpreted_by_opcode;
  std::vector<std::string> dump_files;
};

// Whether the driver walks past `h` to ask a compiled kernel for it: not parameters, constants,
// tuples, control flow, custom calls, dots and convolutions (library calls), collectives or
// async ops.
// `convolutions`: convolutions too (the cuda platform compiles them; the cpu platform calls a
// library).
bool IsKernelCandidate(const Instruction& h, bool convolutions = false);
// The instructions the cpu platform offers the code generator, in the order it compiles them:
// every candidate of the entry and of what control flow calls from it.
std::vector<const Instruction*> KernelCandidates(const Module& module, bool convolutions = false);
// The LLVM IR of the kernels for an already optimised `module` (`hlowb opt --stage=llvm`).
absl::StatusOr<std::string> CpuKernelIr(const Module& module, bool optimized);

class CpuExecutable {
 public:
  // Compiles `module` (left untouched: the executable owns an optimised copy).
  static absl::StatusOr<std::unique_ptr<CpuExecutable>> Compile(const Module& module,
                                                                const CpuCompileOptions& options);
  ~CpuExecutable();

  // The module that runs (after the passes).
  const Module& module() const;
  const CpuCompileStats& stats() const;
  // "312 kernels; 40 instructions on the interpreter (dot 12, gather 8, ...); compiled in 1.2 s
  // (passes 0.3 s, LLVM 0.9 s; cache 3 hits, 0 misses)".
  std::string Summary() const;
  // Whether runs place values by buffer assignment (cpu_arena.h); modules the arena runtime
  // refuses (stats().arena_refused) run on the driver.
  bool RunsInArena() const;
  // Whether `instr` (an instruction of module()) runs as a compiled kernel.
  bool IsCompiled(const Instruction& instr) const;
  // Reasons, per instruction name, for what was not compiled.
  const std::vector<std::pair<std::string, std::string>>& not_compiled() const;

  // Runs the entry computation. `options` is the evaluator's (cancel, progress, custom calls,
  // host transfers, collectives, elided constants); its `compiled` hook is set here.
  absl::StatusOr<Literal> Run(const std::vector<Literal>& arguments,
                              EvaluatorOptions options) const;
  // The hook Run installs on the driver, for callers that drive the evaluator themselves.
  // `elided_constant` supplies data for constants elided in the input; may be empty. With a
  // `constant_cache`, elided constants inside kernels are made once and shared with every run
  // that uses the cache; without one, once per hook.
  std::function<std::optional<absl::StatusOr<Literal>>(const Instruction&,
                                                       const std::vector<const Literal*>&)>
  Hook(std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
       ConstantCache* constant_cache = nullptr) const;

 private:
  CpuExecutable();
  // The in-place hook Run installs on the driver (EvaluatorOptions::compiled_in_place): the
  // in-place forms of dynamic-update-slices and of fusions whose root is one write only the
  // update into the operand's storage. Arguments as Hook's.
  std::function<std::optional<absl::Status>(const Instruction&, const std::vector<const Literal*>&,
                                             Literal*)>
  InPlaceHook(std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
              ConstantCache* constant_cache) const;
  // The kernels as the arena runtime calls them (buffers instead of literals).
  cpu::ArenaCode ArenaCodeFor(
      std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
      ConstantCache* constant_cache) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_BACKENDS_CPU_CPU_BACKEND_H_
