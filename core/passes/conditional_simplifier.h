// "simplify-conditional": replaces a conditional whose branch is known (a constant predicate or
// branch index, or a single branch) by an inlined copy of that branch, and drops tuple outputs
// of a conditional that nothing reads from every branch.
//
// A constant branch index outside [0, N) selects the last branch, as the conditional does at
// run time. The inlined branch keeps its side effects (it still runs exactly once).
//
// Deliberately not done: conditionals with control dependencies are not inlined; outputs are
// only dropped when every user reads the result through get-tuple-element and each branch is
// called by this conditional alone; unused branch operands are not pruned, and cheap branches
// are not turned into selects.
#ifndef HLOWB_CORE_PASSES_CONDITIONAL_SIMPLIFIER_H_
#define HLOWB_CORE_PASSES_CONDITIONAL_SIMPLIFIER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class ConditionalSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "simplify-conditional"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_CONDITIONAL_SIMPLIFIER_H_
