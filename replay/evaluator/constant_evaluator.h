// The reference interpreter as the compiler's constant folder: evaluates one instruction on
// literal operands (core/passes/hlo_pass.h's ConstantEvaluator), so that core's passes fold
// constants with exactly the semantics replay uses.
#ifndef HLOWB_REPLAY_EVALUATOR_CONSTANT_EVALUATOR_H_
#define HLOWB_REPLAY_EVALUATOR_CONSTANT_EVALUATOR_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

ConstantEvaluator InterpreterConstantEvaluator();

}  // namespace hlowb

#endif  // HLOWB_REPLAY_EVALUATOR_CONSTANT_EVALUATOR_H_
