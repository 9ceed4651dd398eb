#include "core/passes/comparison_expander.h"

#include <cstdint>
#include <memory>
#include <optional>
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


// The signed integer type whose order the keys of `type` use, for the float types whose bit
// patterns are sign-magnitude with one sign bit.
std::optional<PrimitiveType> KeyType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16: return PrimitiveType::kS16;
    case PrimitiveType::kF32: return PrimitiveType::kS32;
    case PrimitiveType::kF64: return PrimitiveType::kS64;
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E3M4: return PrimitiveType::kS8;
    default: return std::nullopt;
  }
}

// A scalar literal of the signed integer `type` holding `value` exactly.
Literal IntScalar(PrimitiveType type, int64_t value) {
  Shape s = Shape::Array(type, {});
  s.SetDefaultLayout();
  Literal lit(s);
  lit.SetBits(0, static_cast<uint64_t>(value));
  return lit;
}

// The total-order key of `value`: bits ^ (negative ? max : 0), computed as
// select(bits < 0, bits ^ max, bits).
Instruction* TotalOrderKey(ComputationEditor& editor, Instruction* value, PrimitiveType key_type,
                           Instruction* zero, Instruction* max) {
  Shape key_shape = value->shape();
  key_shape.set_element_type(key_type);
  Shape pred_shape = value->shape();
  pred_shape.set_element_type(PrimitiveType::kPred);
  Instruction* bits = editor.Add(Opcode::kBitcastConvert, key_shape, {value});
  Instruction* negative = editor.Add(Opcode::kCompare, pred_shape, {bits, zero});
  negative->mutable_attrs()->comparison_direction = ComparisonDirection::kLt;
  Instruction* flipped = editor.Add(Opcode::kXor, key_shape, {bits, max});
  return editor.Add(Opcode::kSelect, key_shape, {negative, flipped, bits});
}

}  // namespace

absl::StatusOr<bool> ComparisonExpander::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> compares;
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() != Opcode::kCompare || instr->operand_count() != 2) continue;
      if (instr->attrs_or_default().comparison_type != ComparisonType::kTotalOrder) continue;
      const Shape& a = instr->operand(0)->shape();
      const Shape& b = instr->operand(1)->shape();
      if (!a.IsArray() || !b.IsArray() || a.element_type() != b.element_type() ||
          !a.SameDimensions(b) || !instr->shape().IsArray() ||
          !KeyType(a.element_type()).has_value()) {
        continue;
      }
      compares.push_back(instr);
    }
    if (compares.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* instr : compares) {
      if (!context.ConsumeFuel(name())) break;
      Instruction* lhs = instr->operand(0);
      Instruction* rhs = instr->operand(1);
      PrimitiveType key_type = *KeyType(lhs->shape().element_type());
      Shape key_shape = lhs->shape();
      key_shape.set_element_type(key_type);
      const int bits = BitWidth(key_type);
      const int64_t max_value =
          bits == 64 ? INT64_MAX : static_cast<int64_t>((uint64_t{1} << (bits - 1)) - 1);
      Instruction* zero_scalar = AddScalarConstant(editor, IntScalar(key_type, 0));
      Instruction* zero = editor.Add(Opcode::kBroadcast, key_shape, {zero_scalar});
      zero->set_has_dimensions(true);
      Instruction* max_scalar = AddScalarConstant(editor, IntScalar(key_type, max_value));
      Instruction* max = editor.Add(Opcode::kBroadcast, key_shape, {max_scalar});
      max->set_has_dimensions(true);
      Instruction* lhs_key = TotalOrderKey(editor, lhs, key_type, zero, max);
      Instruction* rhs_key = TotalOrderKey(editor, rhs, key_type, zero, max);
      Instruction* compare = editor.AddLike(*instr, instr->shape(), {lhs_key, rhs_key});
      compare->mutable_attrs()->comparison_type = ComparisonType::kDefault;
      editor.ReplaceAllUsesWith(instr, compare);
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
