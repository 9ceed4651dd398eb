// The NaN/Inf locator behind `hlowb replay --find_nonfinite`: replays a module and names the
// first instruction, in execution order, whose result holds a NaN or an infinity that its
// operands did not already hold — inside fusions (the fused computation's instruction, not
// the fusion), while loops (with the iteration number of every enclosing loop), conditionals
// and called computations — with statistics of its result and of each operand's value at that
// moment.
//
// What counts: a NaN in the result when no operand holds a NaN, or an infinity when no operand
// holds a NaN or an infinity. Values that only pass a non-finite value along (get-tuple-element,
// the parameters of fused and called computations, a select that picks a -inf mask) are not
// reported, and neither are constants: `constant(-inf)` as a max-reduction's init value or an
// attention mask is deliberate. An entry parameter holding NaN or Inf is reported (the bad
// value came in with the arguments). Scalar computations applied by reduce, map, sort,
// scatter and the like are judged through the instruction that applies them.
//
// It runs the test platform only (no reference run) and stops at the first finding. On the cpu
// and cuda platforms the finding is also located on the interpreter, in the module's own
// instructions (see NonfiniteReport::interpreter_finding).
#ifndef HLOWB_REPLAY_COMPARE_NONFINITE_H_
#define HLOWB_REPLAY_COMPARE_NONFINITE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/compare/compare.h"
#include "replay/session.h"

namespace hlowb {

// One step from the entry computation down to the instruction, outermost first.
struct NonfiniteContext {
  std::string caller;           // the calling instruction, e.g. "while.3"
  std::string caller_opcode;    // "while", "fusion", "call", "conditional", ...
  std::string computation;      // the called computation, e.g. "body.7"
  std::string role;             // "while body", "while condition", "fused computation", ...
  int64_t loop_iteration = -1;  // for while bodies and conditions: the 0-based iteration
};

struct NonfiniteOperand {
  std::string name;
  std::string shape;
  LiteralStatistics statistics;
};

struct NonfiniteFinding {
  std::string instruction;
  std::string opcode;
  std::string shape;
  std::string computation;
  std::vector<NonfiniteContext> context;  // empty for the entry computation
  int replay_iteration = 0;               // which --iterations run, 0-based
  int64_t device = 0;                     // multi-device runs: the device
  bool entry_parameter = false;           // the bad value came in as an argument
  LiteralStatistics result;
  std::vector<NonfiniteOperand> operands;
  // "NaN", "Inf" or "NaN and Inf": what appeared here that the operands did not hold.
  std::string introduced;
};

struct NonfiniteReport {
  std::string module_name;
  std::string argument_source;  // "fake data (seed 42)", "snapshot", ...
  int iterations_run = 0;
  bool found = false;
  NonfiniteFinding finding;
  // On a compiled platform (cpu, cuda) the finding names an instruction of the module as that
  // platform compiled it (a fusion the compiler made, say). The search is then repeated on the
  // interpreter with the same arguments up to that replay iteration, to name the instruction of
  // the module itself: `interpreter_finding` when the interpreter also finds one, nothing when
  // it computes no NaN or Inf there (the compiled platform then differs from the interpreter).
  std::string compiled_platform;  // empty: the interpreter ran
  bool interpreter_checked = false;
  std::optional<NonfiniteFinding> interpreter_finding;
  std::vector<std::string> warnings;
  // A readable report: where, the call path with loop iterations, result and operand
  // statistics. Deterministic (no times, no pointers).
  std::string ToString() const;
};

// Whether `op` applies its called computation to scalars, element by element or pair by pair
// (reduce, reduce-window, map, sort, scatter, select-and-scatter, all-reduce, reduce-scatter,
// custom-call).
bool AppliesScalarComputation(Opcode op);

// Replays `module` with `options` (its reference platform is ignored) and `inputs`, over
// options.iterations runs, until a finding. options.on_instruction, when set, sees every event
// up to and including the finding's, before the search looks at it (on a compiled platform,
// the events of that platform's run and then of the interpreter's run that locates the
// finding). Errors are the replay's.
absl::StatusOr<NonfiniteReport> FindNonfinite(const Module& module, ReplayOptions options,
                                              ReplayInputs inputs,
                                              const CancelToken* cancel = nullptr);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_COMPARE_NONFINITE_H_
