// "simplify-sorts": drops operands of a multi-operand sort that do nothing. An operand can go
// when no get-tuple-element reads its sorted output and the comparator never reads its two
// parameters (so it does not influence the order). The sort is rebuilt with the remaining
// operands and a comparator without the dropped parameters (renumbered); a sort left with a
// single operand returns an array instead of a tuple. The get-tuple-elements of the kept
// outputs are re-pointed at the new sort.
//
// Deliberately not done: sorts whose tuple result is used other than through
// get-tuple-element (including a sort that is a computation's root), sorts with control
// dependencies, and sorts whose outputs are all unused (removing those is DCE's job).
#ifndef HLOWB_CORE_PASSES_SORT_SIMPLIFIER_H_
#define HLOWB_CORE_PASSES_SORT_SIMPLIFIER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class SortSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "simplify-sorts"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_SORT_SIMPLIFIER_H_
