#include "core/passes/stochastic_convert_decomposer.h"

#include <cmath>
#include <cstdint>
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


bool Decomposable(const Instruction& instr) {
  if (instr.operand_count() != 2 || !instr.shape().IsArray()) return false;
  const Shape& x = instr.operand(0)->shape();
  const Shape& r = instr.operand(1)->shape();
  PrimitiveType to = instr.shape().element_type();
  if (!x.IsArray() || !r.IsArray() || !x.SameDimensions(r) ||
      !x.SameDimensions(instr.shape())) {
    return false;
  }
  if (!IsFloatingPoint(x.element_type()) || BitWidth(x.element_type()) < 8) return false;
  if (!IsUnsignedIntegral(r.element_type()) ||
      BitWidth(r.element_type()) != BitWidth(x.element_type())) {
    return false;
  }
  return IsIntegral(to) && BitWidth(to) >= 8;
}

// Builds the expansion of one stochastic-convert in its computation.
class Decomposer {
 public:
  Decomposer(ComputationEditor* editor, const Instruction& instr)
      : editor_(*editor), dims_shape_(instr.shape()) {}

  Shape Like(PrimitiveType type) const {
    Shape s = dims_shape_;
    s.set_element_type(type);
    return s;
  }
  Instruction* Splat(Literal scalar) {
    PrimitiveType type = scalar.shape().element_type();
    Instruction* c = AddScalarConstant(editor_, std::move(scalar));
    if (dims_shape_.rank() == 0) return c;
    Instruction* b = editor_.Add(Opcode::kBroadcast, Like(type), {c});
    b->set_has_dimensions(true);
    return b;
  }
  Instruction* Splat(PrimitiveType type, double value) {
    return Splat(ScalarLiteral(type, value));
  }
  Instruction* SplatBits(PrimitiveType type, uint64_t bits) {
    Shape s = Shape::Array(type, {});
    s.SetDefaultLayout();
    Literal lit(s);
    lit.SetBits(0, bits);
    return Splat(std::move(lit));
  }
  Instruction* Unary(Opcode op, Instruction* x) { return editor_.Add(op, x->shape(), {x}); }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return editor_.Add(op, a->shape(), {a, b});
  }
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection d) {
    Instruction* c = editor_.Add(Opcode::kCompare, Like(PrimitiveType::kPred), {a, b});
    c->mutable_attrs()->comparison_direction = d;
    return c;
  }
  Instruction* Select(Instruction* p, Instruction* a, Instruction* b) {
    return editor_.Add(Opcode::kSelect, a->shape(), {p, a, b});
  }
  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape().element_type() == type) return x;
    return editor_.Add(Opcode::kConvert, Like(type), {x});
  }

  Instruction* Build(Instruction* operand, Instruction* random, PrimitiveType to) {
    const PrimitiveType random_type = random->shape().element_type();
    const int random_bits = BitWidth(random_type);
    // f64 operands (with u64 bits) work in f64; every narrower float widens exactly to f32.
    const PrimitiveType wide =
        random_bits == 64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
    Instruction* x = Convert(operand, wide);
    Instruction* magnitude = Unary(Opcode::kAbs, x);
    Instruction* integer_part = Unary(Opcode::kFloor, magnitude);
    Instruction* fraction = Binary(Opcode::kSubtract, magnitude, integer_part);
    // fraction * 2^bits is exact (a power-of-two scaling of a value below 1).
    Instruction* scaled =
        Binary(Opcode::kMultiply, fraction, Splat(wide, std::ldexp(1.0, random_bits)));
    Instruction* round_up;
    if (random_bits == 64) {
      // bits < fraction * 2^64, with the bits rounded to f64 first.
      round_up = Compare(Convert(random, wide), scaled, ComparisonDirection::kLt);
    } else {
      // For integer bits, bits < y exactly when bits < ceil(y); ceil(y) < 2^bits fits.
      Instruction* threshold = Convert(Unary(Opcode::kCeil, scaled), random_type);
      round_up = Compare(random, threshold, ComparisonDirection::kLt);
    }
    Instruction* rounded = Binary(Opcode::kAdd, integer_part,
                                  Select(round_up, Splat(wide, 1.0), Splat(wide, 0.0)));
    Instruction* negative = Compare(x, Splat(wide, 0.0), ComparisonDirection::kLt);
    Instruction* signed_value = Select(negative, Unary(Opcode::kNegate, rounded), rounded);
    // Saturate at the result type's limits (both are powers of two, exact in `wide`).
    const int to_bits = BitWidth(to);
    const bool is_signed = IsSignedIntegral(to);
    const double low = is_signed ? -std::ldexp(1.0, to_bits - 1) : 0.0;
    const double high_plus_one = std::ldexp(1.0, is_signed ? to_bits - 1 : to_bits);
    const uint64_t all_ones = to_bits == 64 ? ~uint64_t{0} : (uint64_t{1} << to_bits) - 1;
    const uint64_t min_bits = is_signed ? (uint64_t{1} << (to_bits - 1)) : 0;
    const uint64_t max_bits = is_signed ? (all_ones >> 1) : all_ones;
    Instruction* too_low = Compare(signed_value, Splat(wide, low), ComparisonDirection::kLt);
    Instruction* too_high =
        Compare(signed_value, Splat(wide, high_plus_one), ComparisonDirection::kGe);
    Instruction* result = Convert(signed_value, to);
    result = Select(too_low, SplatBits(to, min_bits), result);
    result = Select(too_high, SplatBits(to, max_bits), result);
    Instruction* is_nan = Compare(x, x, ComparisonDirection::kNe);
    return Select(is_nan, SplatBits(to, 0), result);
  }

 private:
  ComputationEditor& editor_;
  Shape dims_shape_;
};

}  // namespace

absl::StatusOr<bool> StochasticConvertDecomposer::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kStochasticConvert && Decomposable(*instr)) {
        targets.push_back(instr);
      }
    }
    if (targets.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* instr : targets) {
      if (!context.ConsumeFuel(name())) break;
      Decomposer d(&editor, *instr);
      Instruction* result =
          d.Build(instr->operand(0), instr->operand(1), instr->shape().element_type());
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
