// "zero_sized_hlo_elimination": an instruction whose result is an array with no elements
// (a dimension of size 0) computes nothing; it is replaced by an empty constant of the same
// shape, which lets DCE drop whatever fed it. Runs on every computation except fusion
// computations.
//
// Deliberately not done: parameters, constants, side-effecting instructions (their effect
// matters even when the result is empty), tuples and tokens, and shapes with dynamic
// dimensions (whose runtime size is not known to be zero).
#ifndef HLOWB_CORE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
#define HLOWB_CORE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class ZeroSizedHloElimination : public HloPass {
 public:
  std::string_view name() const override { return "zero_sized_hlo_elimination"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_ZERO_SIZED_HLO_ELIMINATION_H_
