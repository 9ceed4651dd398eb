// "copy-insertion": adds `copy` instructions where buffers that are updated or returned in
// place would otherwise be shared by values that must stay apart, so that buffer assignment
// (buffer_assignment.h) can alias while loops, conditionals and the entry's output freely:
//   - entry root: an output element that is an entry parameter (unless input_output_alias
//     names exactly that pair), a constant, or the same buffer as an earlier output element
//     gets a copy;
//   - while init: an element that is a parameter, a constant, a repeat of another element, or
//     a value something other than the loop also reads gets a copy (the loop updates its
//     buffer in place);
//   - while body root: an element that is not the body's own computed value for that index
//     (a parameter element moved to another index, a constant, a repeat) gets a copy; so does
//     a computed value written while the parameter element of the same index may still be
//     read (the copy is ordered after those reads by control predecessors);
//   - conditional branch roots: parameter elements, constants and repeats get copies.
// Tuple-shaped values that are not tuple instructions are taken apart with get-tuple-element
// and rebuilt with a tuple around the copies.
//
// Deliberately not done: removal of copies that a later analysis could prove redundant, copies
// for in-place custom calls, and copies in embedded or fused computations.
#ifndef HLOWB_CORE_PASSES_COPY_INSERTION_H_
#define HLOWB_CORE_PASSES_COPY_INSERTION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

// True when `user` may write its result over `operand`'s buffer while reading it: elementwise
// operations on same-sized elements, a dynamic-update-slice into its first operand, and loop
// fusions that read the operand only at the element they write (or update it with a root
// dynamic-update-slice). Copy insertion and buffer assignment share this rule.
bool CanUpdateOperandInPlace(const Instruction& user, const Instruction& operand);

// The operand whose storage a dynamic-update-slice, or a loop fusion whose root is one, can
// become its result with only the updated elements written (the first operand of the
// dynamic-update-slice, read nowhere else in the instruction); -1 for other instructions.
// The runtimes update in place when nothing reads that operand's value afterwards.
int InPlaceUpdatedOperand(const Instruction& instr);

class CopyInsertion : public HloPass {
 public:
  std::string_view name() const override { return "copy-insertion"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_COPY_INSERTION_H_
