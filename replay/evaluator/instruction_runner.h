// Single instructions computed by the reference evaluator outside a computation walk, for
// runtimes that drive the walk themselves (the cpu platform's arena runtime) and hand the
// interpreter what their compiled code does not take. One runner keeps the state a run shares
// across instructions (the rng stream, the called computations' plans), so a runtime uses one
// per run.
#ifndef HLOWB_REPLAY_EVALUATOR_INSTRUCTION_RUNNER_H_
#define HLOWB_REPLAY_EVALUATOR_INSTRUCTION_RUNNER_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

namespace eval {
class Evaluator;
}  // namespace eval

class InstructionRunner {
 public:
  // `options` must outlive the runner.
  explicit InstructionRunner(const EvaluatorOptions& options);
  ~InstructionRunner();
  InstructionRunner(const InstructionRunner&) = delete;
  InstructionRunner& operator=(const InstructionRunner&) = delete;

  // The value of `instr` for the given operand values, as the evaluator computes it (called
  // computations such as reducers and fused computations run as usual, asking
  // EvaluatorOptions::compiled first). Not for while loops and conditionals, whose bodies the
  // caller runs.
  absl::StatusOr<Literal> Compute(const Instruction& instr,
                                  const std::vector<const Literal*>& operands);

 private:
  std::unique_ptr<eval::Evaluator> evaluator_;
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_EVALUATOR_INSTRUCTION_RUNNER_H_
