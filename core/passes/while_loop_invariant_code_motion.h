// "while-loop-invariant-code-motion": computes loop-invariant work once, before the loop. An
// instruction of a while body is invariant when every operand is: loop-state elements the body
// passes through unchanged, constants, and other invariant instructions. Invariant
// instructions worth hoisting are copied in front of the while (together with the cheap
// invariant instructions they need) and, where the body still needs their value, passed in as
// new elements appended to the loop state.
//
// Deliberately not done: instructions with side effects or control dependencies, parameters,
// after-all and domain instructions, and tuple-shaped results are never hoisted. Following
// XLA's defaults, constants, iota, replica/partition ids and the cheap data movement
// (broadcast, reshape, bitcast, transpose, slice, reverse, tuple, get-tuple-element) are not
// hoisted on their own: that would only grow the loop state. Loops whose body or condition is
// shared with another caller are left alone, as are bodies whose root is not a tuple. No
// size-inflation limit is applied.
#ifndef HLOWB_CORE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
#define HLOWB_CORE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class WhileLoopInvariantCodeMotion : public HloPass {
 public:
  std::string_view name() const override { return "while-loop-invariant-code-motion"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_WHILE_LOOP_INVARIANT_CODE_MOTION_H_
