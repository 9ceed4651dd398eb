// "transpose-folding": a transpose that feeds a dot is folded into the dot's dimension numbers
// (the dot reads the transpose's operand directly), as XLA's CPU and GPU compilers do before
// layout assignment: GEMM libraries read either operand transposed, so the transpose's copy of
// the data is not needed. Only when the fold keeps the dot's result shape: batch dimensions and
// the free dimensions of the operand must keep their relative order.
//
// Deliberately not done: folding into convolutions, and removing a transpose other users still
// read (dead code elimination does that once nothing reads it).
#ifndef HLOWB_CORE_PASSES_TRANSPOSE_FOLDING_H_
#define HLOWB_CORE_PASSES_TRANSPOSE_FOLDING_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class TransposeFolding : public HloPass {
 public:
  std::string_view name() const override { return "transpose-folding"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_TRANSPOSE_FOLDING_H_
