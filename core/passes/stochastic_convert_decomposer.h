// "stochastic_convert_decomposer": rewrites stochastic-convert (float -> integer, rounding up
// with a probability equal to the discarded fraction) into plain HLO. |x| is split into its
// integer part and fraction; the fraction, scaled by 2^bits of the random operand, is compared
// with the random bits; the integer part is bumped by one when the bits are below it; the sign
// is put back, out-of-range values saturate to the result type's limits and NaN becomes 0.
// The rewrite is exact: it reproduces the reference interpreter's stochastic-convert bit for
// bit.
//
// Deliberately not here: stochastic rounding to float result types (XLA defines it only for
// integer results) and random operands that are not unsigned integers as wide as the operand;
// such instructions are left unchanged.
#ifndef HLOWB_CORE_PASSES_STOCHASTIC_CONVERT_DECOMPOSER_H_
#define HLOWB_CORE_PASSES_STOCHASTIC_CONVERT_DECOMPOSER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class StochasticConvertDecomposer : public HloPass {
 public:
  std::string_view name() const override { return "stochastic_convert_decomposer"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_STOCHASTIC_CONVERT_DECOMPOSER_H_
