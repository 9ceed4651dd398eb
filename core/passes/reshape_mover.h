// "reshape-mover": moves reshapes and transposes from the operands of an elementwise
// instruction to its result, so that one rearrangement after the operation replaces one per
// operand: add(reshape(a), reshape(b)) becomes reshape(add(a, b)).
//
// An elementwise instruction moves when one operand is a reshape or transpose that really
// rearranges something other than a constant or a scalar broadcast, and every other operand is
// either an equivalent rearrangement (same kind, same input dimensions, same permutation) or
// trivially rearranged: a constant (which gets the inverse reshape/transpose, left for constant
// folding) or a broadcast of a scalar (re-broadcast to the new shape). A candidate is skipped
// when one of its rearranged operands has a user that is not itself moved, since that
// rearrangement would then stay and the move would add one rather than save one.
//
// Deliberately not done: fusion computations are left alone; one sweep per run (a chain of
// elementwise operations moves one step per run, as in XLA's pipelines that repeat it);
// dynamic shapes and operations whose operands differ in dimensions (scalar clamp bounds) are
// skipped; rearranged broadcasts of vectors are not treated as cheap.
#ifndef HLOWB_CORE_PASSES_RESHAPE_MOVER_H_
#define HLOWB_CORE_PASSES_RESHAPE_MOVER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class ReshapeMover : public HloPass {
 public:
  std::string_view name() const override { return "reshape-mover"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_RESHAPE_MOVER_H_
