// "dot_decomposer": brings every dot into the canonical form backends emit directly:
//   lhs [batch..., M, K]  x  rhs [batch..., K, N]  ->  [batch..., M, N]
// with the batch dimensions leading and in order, one contracting and one non-contracting
// dimension per operand. A dot that is not canonical (several contracting or non-contracting
// dimensions, none contracting, or batch dimensions not leading) gets transposes that move
// batch, non-contracting and contracting dimensions into that order, reshapes that merge the
// non-contracting and the contracting dimensions, a canonical dot, and a reshape back to the
// original result shape. Transposes and reshapes that would do nothing are left out.
//
// Deliberately not done: sparse dots (extra operands or a sparsity descriptor), ragged and
// scaled dots, dots with dynamic dimensions, dots inside fusion computations, and dots that
// are already canonical (a matrix-vector dot with a single contracting dimension stays).
#ifndef HLOWB_CORE_PASSES_DOT_DECOMPOSER_H_
#define HLOWB_CORE_PASSES_DOT_DECOMPOSER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class DotDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "dot_decomposer"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_DOT_DECOMPOSER_H_
