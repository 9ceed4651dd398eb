#include "core/passes/operand_upcaster.h"

#include <vector>

#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// True when every value of `from` converts to `to` exactly and `to` is the wider type.
bool CanUpcast(PrimitiveType from, PrimitiveType to) {
  if (from == to) return false;
  if (IsFloatingPoint(from) && IsFloatingPoint(to)) {
    if (BitWidth(to) <= BitWidth(from)) return false;
    // f32 and f64 hold every narrower float; bf16 holds the 8-bit formats.
    return to == PrimitiveType::kF32 || to == PrimitiveType::kF64 ||
           (to == PrimitiveType::kBF16 && BitWidth(from) <= 8);
  }
  if (IsComplex(to)) {
    const PrimitiveType component = ComplexComponentType(to);
    if (IsComplex(from)) return CanUpcast(ComplexComponentType(from), component);
    return IsFloatingPoint(from) && (from == component || CanUpcast(from, component));
  }
  if (IsIntegral(from) && IsIntegral(to)) {
    if (BitWidth(to) <= BitWidth(from)) return false;
    // Unsigned widens to either signedness; signed only to signed.
    return IsSignedIntegral(to) || IsUnsignedIntegral(from);
  }
  return false;
}

// The type the target computes a dot/convolution with result type `result` in.
PrimitiveType ComputeType(PrimitiveType result, const TargetInfo& target) {
  if (result == PrimitiveType::kBF16 && !target.native_bf16_dot) return PrimitiveType::kF32;
  if (result == PrimitiveType::kF16 && !target.native_f16_dot) return PrimitiveType::kF32;
  return result;
}

// Operands whose types take part in the arithmetic (dot: lhs, rhs; sparse-dot metadata and
// any further operands are left alone).
int DataOperandCount(const Instruction& instr) { return instr.operand_count() >= 2 ? 2 : 0; }

bool IsPackedNibble(const Instruction& instr, int operand) {
  const auto& precision = instr.attrs_or_default().precision_config.operand_precision;
  return operand < static_cast<int>(precision.size()) &&
         precision[operand] == Precision::kPackedNibble;
}

bool NeedsRewrite(const Instruction& instr, const TargetInfo& target) {
  if (instr.opcode() != Opcode::kDot && instr.opcode() != Opcode::kConvolution) return false;
  if (!instr.shape().IsArray()) return false;
  const PrimitiveType result = instr.shape().element_type();
  const PrimitiveType compute = ComputeType(result, target);
  if (compute != result) {
    for (int i = 0; i < DataOperandCount(instr); ++i) {
      const PrimitiveType t = instr.operand(i)->shape().element_type();
      if (t != compute && !CanUpcast(t, compute)) return false;
      if (IsPackedNibble(instr, i)) return false;
    }
    return DataOperandCount(instr) == 2;
  }
  for (int i = 0; i < DataOperandCount(instr); ++i) {
    const Shape& s = instr.operand(i)->shape();
    if (s.IsArray() && CanUpcast(s.element_type(), compute) && !IsPackedNibble(instr, i)) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> OperandUpcaster::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      if (NeedsRewrite(*instr, context.target())) targets.push_back(instr);
    }
    if (targets.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* instr : targets) {
      if (!context.ConsumeFuel(name())) break;
      const PrimitiveType result = instr->shape().element_type();
      const PrimitiveType compute = ComputeType(result, context.target());
      std::vector<Instruction*> operands = instr->operands();
      for (int i = 0; i < DataOperandCount(*instr); ++i) {
        Instruction* op = operands[i];
        if (op->shape().element_type() == compute || IsPackedNibble(*instr, i) ||
            !CanUpcast(op->shape().element_type(), compute)) {
          continue;
        }
        Shape s = op->shape();
        s.set_element_type(compute);
        operands[i] = editor.Add(Opcode::kConvert, s, {op});
      }
      if (compute == result) {
        for (int i = 0; i < instr->operand_count(); ++i) {
          if (operands[i] != instr->operand(i)) editor.ReplaceOperand(instr, i, operands[i]);
        }
      } else {
        Shape wide = instr->shape();
        wide.set_element_type(compute);
        Instruction* computed = editor.AddLike(*instr, wide, operands);
        Instruction* narrowed = editor.Add(Opcode::kConvert, instr->shape(), {computed});
        editor.ReplaceAllUsesWith(instr, narrowed);
      }
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
