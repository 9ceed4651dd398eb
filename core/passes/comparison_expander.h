// "comparison-expander": rewrites floating-point compares with type=TOTALORDER into signed
// integer compares of the values' bit patterns. The bits are bitcast to a signed integer of
// the same width and, for negative values, every bit but the sign is flipped; the signed order
// of those keys is the total order -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
//
// Deliberately not here: compares of other types (left alone), the f8 formats without a sign
// bit or with a single NaN in place of -0 (f8e8m0fnu and the FNUZ formats, whose bit order is
// not their value order) and the 4-bit float, which are left unchanged.
#ifndef HLOWB_CORE_PASSES_COMPARISON_EXPANDER_H_
#define HLOWB_CORE_PASSES_COMPARISON_EXPANDER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class ComparisonExpander : public HloPass {
 public:
  std::string_view name() const override { return "comparison-expander"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_COMPARISON_EXPANDER_H_
