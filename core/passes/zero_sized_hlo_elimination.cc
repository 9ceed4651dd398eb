#include "core/passes/zero_sized_hlo_elimination.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

bool Eligible(const Instruction& instr) {
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.IsDynamic() || shape.ElementCount() != 0) return false;
  if (instr.opcode() == Opcode::kParameter || instr.opcode() == Opcode::kConstant) return false;
  return !HasSideEffect(instr);
}

}  // namespace

absl::StatusOr<bool> ZeroSizedHloElimination::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  const absl::flat_hash_set<const Computation*> fusion = FusedComputations(*module);
  for (const auto& comp : module->computations()) {
    if (fusion.contains(comp.get())) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      if (!Eligible(*instr)) continue;
      if (editor.user_count(instr) == 0 && !instr->IsRoot()) continue;
      if (!context.ConsumeFuel(name())) continue;
      Instruction* empty = editor.AddConstant(Literal(instr->shape()));
      editor.ReplaceAllUsesWith(instr, empty);
      comp_changed = true;
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlowb
