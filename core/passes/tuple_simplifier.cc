#include "core/passes/tuple_simplifier.h"

#include <vector>

#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// What `instr` can be replaced by, or null.
Instruction* Simplified(Instruction* instr) {
  if (instr->opcode() == Opcode::kGetTupleElement && instr->operand_count() == 1) {
    Instruction* tuple = instr->operand(0);
    const int64_t index = instr->tuple_index();
    if (tuple->opcode() != Opcode::kTuple || index < 0 || index >= tuple->operand_count()) {
      return nullptr;
    }
    Instruction* element = tuple->operand(static_cast<int>(index));
    return element->shape() == instr->shape() ? element : nullptr;
  }
  if (instr->opcode() == Opcode::kTuple && instr->operand_count() > 0) {
    Instruction* source = nullptr;
    for (int i = 0; i < instr->operand_count(); ++i) {
      Instruction* op = instr->operand(i);
      if (op->opcode() != Opcode::kGetTupleElement || op->tuple_index() != i ||
          op->operand_count() != 1) {
        return nullptr;
      }
      if (source == nullptr) source = op->operand(0);
      if (op->operand(0) != source) return nullptr;
    }
    if (!source->shape().IsTuple() || source->shape().tuple_count() != instr->operand_count() ||
        !(source->shape() == instr->shape())) {
      return nullptr;
    }
    return source;
  }
  return nullptr;
}

}  // namespace

absl::StatusOr<bool> TupleSimplifier::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      Instruction* replacement = Simplified(instr);
      if (replacement == nullptr || replacement == instr) continue;
      if (editor.user_count(instr) == 0 && !instr->IsRoot()) continue;
      if (!context.ConsumeFuel(name())) continue;
      editor.ReplaceAllUsesWith(instr, replacement);
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
