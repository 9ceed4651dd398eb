// The reference evaluator: runs a verified module on the CPU with XLA's semantics, one
// instruction at a time, on host literals. It is the ground truth the compiled backends are
// compared against, so it favours exactness and clear errors over speed, while keeping typed
// loops (no per-element virtual calls) and BLAS for float dot/convolution so real models
// finish. Multi-device collectives and custom-call targets belong to later layers: here a
// module with replica_count × num_partitions > 1 runs as a single device (collectives across
// one device), and custom calls go to an optional handler.
#ifndef HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_
#define HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb {

struct InstructionEvent {
  const Instruction* instruction = nullptr;
  double seconds = 0;            // wall time spent on this instruction
  const Literal* result = nullptr;  // valid only during the callback
  int64_t loop_iteration = -1;   // inside a while body: the iteration number
};

struct EvaluatorOptions {
  // Stop with ResourceExhausted before allocating when live buffers would exceed this.
  uint64_t memory_budget_bytes = uint64_t{8} << 30;
  const CancelToken* cancel = nullptr;
  ProgressFn progress;  // done/total instructions of the entry computation
  // Called after every instruction (including inside called computations) when set.
  std::function<void(const InstructionEvent&)> on_instruction;
  // Seed for rng ops that XLA leaves implementation-defined (rng, rng-get-and-update-state).
  uint64_t seed = 42;
  // custom-call handler: return the result literal, or UnimplementedError naming the target.
  std::function<absl::StatusOr<Literal>(const Instruction&, const std::vector<const Literal*>&)>
      custom_call;
  // Values for constants whose data was elided (`{...}`) in the input. Unset: such a constant
  // stops evaluation with FailedPrecondition naming it.
  std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant;
};

// Runs the entry computation on `arguments` (one literal per entry parameter, shapes must be
// compatible) and returns the root's value.
absl::StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<Literal>& arguments,
                                       const EvaluatorOptions& options = {});

// Runs one computation (e.g. a fused computation or a reducer) on the given arguments.
absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<const Literal*>& arguments,
                                            const EvaluatorOptions& options = {});

}  // namespace hlowb

#endif  // HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_
