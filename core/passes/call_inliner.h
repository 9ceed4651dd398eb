// "call-inliner": replaces every `call` instruction by a copy of the computation it calls,
// placed in the caller (copied instructions get fresh module-unique names; the callee's
// parameters become the call's operands). Calls inside the callee are inlined first, so one
// run leaves no calls behind. Computations that nothing calls afterwards are removed. Control
// dependencies of the call are moved onto the copied instructions.
//
// Deliberately not done: inlining calls whose callee runs on another execution thread, and
// inlining anything but `call` (fusions, while bodies, conditional branches, reduce
// computations stay where they are).
#ifndef HLOWB_CORE_PASSES_CALL_INLINER_H_
#define HLOWB_CORE_PASSES_CALL_INLINER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class CallInliner : public HloPass {
 public:
  std::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_CALL_INLINER_H_
