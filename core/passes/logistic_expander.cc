#include "core/passes/logistic_expander.h"

#include <memory>
#include <vector>

#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// A scalar constant. Its shape carries no layout, so it prints as `f32[]` the way XLA prints
// scalars.
Instruction* AddScalarConstant(ComputationEditor& editor, Literal literal) {
  Instruction* c = editor.Add(Opcode::kConstant,
                              Shape::Array(literal.shape().element_type(), {}), {}, "constant");
  c->set_literal(std::make_unique<Literal>(std::move(literal)));
  return c;
}

}  // namespace

absl::StatusOr<bool> LogisticExpander::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> logistics;
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() != Opcode::kLogistic || instr->operand_count() != 1) continue;
      const Shape& shape = instr->shape();
      if (!shape.IsArray() || !(IsFloatingPoint(shape.element_type()) ||
                                IsComplex(shape.element_type()))) {
        continue;
      }
      logistics.push_back(instr);
    }
    if (logistics.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* instr : logistics) {
      if (!context.ConsumeFuel(name())) break;
      Instruction* x = instr->operand(0);
      const Shape& shape = instr->shape();
      Instruction* one_scalar = AddScalarConstant(editor, ScalarLiteral(shape.element_type(), 1.0));
      Instruction* one = editor.Add(Opcode::kBroadcast, shape, {one_scalar});
      one->set_has_dimensions(true);
      Instruction* neg = editor.Add(Opcode::kNegate, shape, {x});
      Instruction* exp = editor.Add(Opcode::kExp, shape, {neg});
      Instruction* denominator = editor.Add(Opcode::kAdd, shape, {one, exp});
      Instruction* result = editor.Add(Opcode::kDivide, shape, {one, denominator});
      if (instr->metadata()) {
        for (Instruction* i : {neg, exp, denominator, result}) {
          *i->mutable_metadata() = *instr->metadata();
        }
      }
      editor.ReplaceAllUsesWith(instr, result);
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
