// Per-instruction isolation behind `hlowb replay --isolate_instructions`, after
// run_hlo_module's flag of the same name: every instruction of the entry computation runs on
// its own, as a one-instruction module (extract.h, height 0), on the test platform and on the
// reference platform, fed with the values its operands had in a full run of the module on the
// interpreter (not with fake data, so each instruction sees realistic inputs; the interpreter's
// run is the one whose values belong to the module's own instructions, since the cpu platform
// runs an optimised copy), and the two results are compared. On the cpu and cuda platforms each
// isolated instruction is compiled by itself; on xla-cpu each runs through real XLA. The
// outcome is run_hlo_module's status table, one row per instruction with a (reference, test)
// status pair, sorted the way it sorts them (MATCHED first, MISMATCH last), followed by a count
// per status pair.
//
// Statuses: MATCHED / MISMATCH (compared within the bounds or not), RAN (no reference
// platform, or the reference was skipped), SKIPPED (the instruction cannot run alone: infeed,
// outfeed, send/recv, stateful rng, a custom call's reference run as in run_hlo_module, or an
// input that was not captured within the memory budget), DIDN'T RUN (the full run stopped
// before it), COMPILATION ERROR (the isolated module does not verify), RUNTIME ERROR.
//
// Parameters, constants, tuples and get-tuple-elements only move values and get no row.
// Memory: a captured value is released as soon as its last user has been isolated, so the
// extra memory is the live set of the full run, bounded by memory_budget_bytes.
#ifndef HLOWB_REPLAY_COMPARE_ISOLATION_H_
#define HLOWB_REPLAY_COMPARE_ISOLATION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/compare/compare.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

// run_hlo_module's ModuleResult, in its order (the table sorts by it).
enum class IsolationStatus {
  kMatched,
  kRan,
  kSkipped,
  kDidntRun,
  kOtherError,
  kCompilationError,
  kRuntimeError,
  kMismatch,
};
std::string_view IsolationStatusName(IsolationStatus status);

struct IsolationOptions {
  std::string platform = "interpreter";
  std::string reference_platform = "interpreter";  // empty: no reference run (status RAN)
  ErrorBounds bounds;
  int max_reported_elements = 3;
  uint64_t seed = 42;
  bool use_large_float_range = false;  // for fake values of elided constants
  bool fake_elided_constants = true;
  uint64_t memory_budget_bytes = uint64_t{8} << 30;
  CustomCallHook custom_call;
  const CancelToken* cancel = nullptr;
  ProgressFn progress;  // per isolated instruction
  // How the cpu platform compiles each isolated instruction (cache, threads).
  CpuCompileOptions cpu;
  // How the cuda platform compiles each isolated instruction (arch, TF32).
  CudaCompileOptions cuda;
  // Runs an isolated module on the test platform; unset: the platform named by `platform`.
  // A seam for backends that run elsewhere, and for tests that need a disagreeing platform.
  std::function<absl::StatusOr<Literal>(const Module&, const std::vector<Literal>&)> test_runner;
};

struct IsolatedInstruction {
  std::string name;
  std::string opcode;
  int order = 0;  // position in the entry computation
  IsolationStatus reference = IsolationStatus::kDidntRun;
  IsolationStatus test = IsolationStatus::kDidntRun;
  std::string status;  // "OK", or what went wrong / the mismatch summary
  std::optional<ComparisonReport> comparison;
};

struct IsolationReport {
  std::string module_name;
  std::string platform;
  std::string reference_platform;
  std::vector<IsolatedInstruction> rows;  // sorted as the table prints them
  std::string full_run_error;             // set when the full run stopped early
  int Count(IsolationStatus test) const;
  bool ok() const;  // no mismatch and no error
  // run_hlo_module's two tables: per instruction, then counts per (reference, test) pair.
  std::string ToTable() const;
};

// `arguments` are the entry computation's arguments (as a replay would use them).
// InvalidArgument for platforms that cannot run or arguments that do not fit.
absl::StatusOr<IsolationReport> IsolateInstructions(const Module& module,
                                                    const std::vector<Literal>& arguments,
                                                    const IsolationOptions& options);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_COMPARE_ISOLATION_H_
