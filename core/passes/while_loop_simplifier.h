// "simplify-while-loops": removes while loops that provably never run their body (the
// condition is false on the initial state), inlines loops that provably run it exactly once, and
// drops loop-state tuple elements that nothing observes (an element the body only passes along
// or only uses to compute itself, that the condition never reads and whose final value is
// either unused or equal to its initial value).
//
// Trip counts are proven by pattern: a condition that is a constant, or a comparison of
// integer loop-state elements (and constants) whose initial values are constants and which the
// body steps by a constant or passes through unchanged. Anything else is left alone.
//
// Deliberately not done: loops whose condition has side effects are never removed or inlined;
// zero-trip loops are removed only when the body has no side effects either; loops whose body
// or condition is shared with another caller keep their state; token elements are never
// dropped; no other simplifications (flattening nested state tuples, merging duplicate
// elements, sinking constants: separate passes do that).
#ifndef HLOWB_CORE_PASSES_WHILE_LOOP_SIMPLIFIER_H_
#define HLOWB_CORE_PASSES_WHILE_LOOP_SIMPLIFIER_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/hlo_pass.h"

namespace hlowb {

class WhileLoopSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "simplify-while-loops"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

// How many times the while loop `loop` runs its body, when the pattern above proves it and it is
// below `limit`; nullopt otherwise. The count is found by stepping the proven start values, so
// it costs up to `limit` steps.
std::optional<int64_t> KnownTripCount(const Instruction& loop, int64_t limit);

// Copies every instruction of `callee` into the computation `editor` edits, parameter N standing
// for args[N], and returns the copy of the callee's root. Copies get fresh names; computations
// the callee's instructions call are shared, not cloned. The caller redirects uses and calls
// editor.Finish(). Errors name the callee when a parameter has no argument.
absl::StatusOr<Instruction*> InlineComputation(ComputationEditor& editor, const Computation& callee,
                                               const std::vector<Instruction*>& args);

// Takes `instr` out of `computation`'s instruction list even when it has side effects (for
// replacing a control-flow instruction by an inlined copy of what it runs). The caller has
// already redirected every use of it; the editor of that computation must call Finish() next.
void EraseInstruction(Computation* computation, const Instruction* instr);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_WHILE_LOOP_SIMPLIFIER_H_
