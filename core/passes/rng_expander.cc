#include "core/passes/rng_expander.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <vector>

#include "absl/container/flat_hash_set.h"
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


bool Expandable(const Instruction& instr, const ComputationEditor& editor) {
  if (instr.operand_count() != 2 || !instr.control_predecessors().empty() ||
      !editor.control_successors(&instr).empty()) {
    return false;
  }
  const Shape& s = instr.shape();
  if (!s.IsArray() || s.IsDynamic() || s.ElementCount() <= 0) return false;
  const PrimitiveType t = s.element_type();
  for (const Instruction* op : instr.operands()) {
    if (!op->shape().IsScalar() || op->shape().element_type() != t) return false;
  }
  const RandomDistribution dist = instr.attrs_or_default().distribution;
  const bool is_float = t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 ||
                        t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
  const bool is_int = IsIntegral(t) && BitWidth(t) >= 8;
  if (dist == RandomDistribution::kUniform) return is_float || is_int;
  if (dist == RandomDistribution::kNormal) return is_float;
  return false;
}

class Expander {
 public:
  Expander(ComputationEditor* editor, const Instruction& rng) : editor_(*editor), rng_(rng) {}

  Instruction* Build() {
    const Shape& shape = rng_.shape();
    const PrimitiveType t = shape.element_type();
    const int64_t n = shape.ElementCount();
    const bool wide = BitWidth(t) == 64;
    const PrimitiveType bits_type = wide ? PrimitiveType::kU64 : PrimitiveType::kU32;
    const bool normal = rng_.attrs_or_default().distribution == RandomDistribution::kNormal;
    const int64_t draws = normal ? 2 * n : n;
    Instruction* bits = Bits(bits_type, draws);  // rank 1
    Instruction* a = rng_.operand(0);
    Instruction* b = rng_.operand(1);
    if (IsIntegral(t)) return Integer(bits, a, b);
    const PrimitiveType w = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
    const int mantissa = wide ? 53 : 24;
    if (!normal) {
      Instruction* u = UnitInterval(Reshape(bits, shape.dimensions()), w, mantissa, false);
      Instruction* aw = Splat(Convert(a, w), u->shape());
      Instruction* bw = Splat(Convert(b, w), u->shape());
      Instruction* x =
          Binary(Opcode::kAdd, aw, Binary(Opcode::kMultiply, Binary(Opcode::kSubtract, bw, aw), u));
      Instruction* xt = Convert(x, t);
      Instruction* at = t == w ? aw : Splat(a, xt->shape());
      Instruction* bt = t == w ? bw : Splat(b, xt->shape());
      Instruction* below = Compare(xt, bt, ComparisonDirection::kLt);
      return Finish(Select(below, xt, at));
    }
    Instruction* first = Reshape(Slice(bits, 0, n), shape.dimensions());
    Instruction* second = Reshape(Slice(bits, n, 2 * n), shape.dimensions());
    Instruction* u1 = UnitInterval(first, w, mantissa, true);
    Instruction* u2 = UnitInterval(second, w, mantissa, false);
    const Shape& ws = u1->shape();
    Instruction* radius = Unary(
        Opcode::kSqrt, Binary(Opcode::kMultiply, Splat(w, -2.0, ws), Unary(Opcode::kLog, u1)));
    Instruction* angle = Binary(Opcode::kMultiply, Splat(w, 2 * std::numbers::pi, ws), u2);
    Instruction* z = Binary(Opcode::kMultiply, radius, Unary(Opcode::kCos, angle));
    Instruction* x = Binary(Opcode::kAdd, Splat(Convert(a, w), ws),
                            Binary(Opcode::kMultiply, Splat(Convert(b, w), ws), z));
    return Finish(Convert(x, t));
  }

 private:
  // `count` random words from a philox rng-bit-generator on a fresh state.
  Instruction* Bits(PrimitiveType type, int64_t count) {
    const int64_t words = type == PrimitiveType::kU64 ? 2 * count : count;
    const int64_t blocks = (words + 3) / 4;
    Shape state_shape = ArrayShape(PrimitiveType::kU64, {2});
    Instruction* state = editor_.Add(Opcode::kRngGetAndUpdateState, state_shape, {});
    state->mutable_attrs()->delta = blocks;
    Shape bits_shape = ArrayShape(type, {count});
    Instruction* rbg = editor_.Add(Opcode::kRngBitGenerator,
                                   Shape::Tuple({state_shape, bits_shape}), {state});
    rbg->mutable_attrs()->rng_algorithm = RandomAlgorithm::kPhilox;
    Instruction* gte = editor_.Add(Opcode::kGetTupleElement, bits_shape, {rbg});
    gte->set_index(1);
    return gte;
  }

  // Uniform values in [0, 1) (or (0, 1] when `open_at_zero`) from the top `mantissa` bits.
  Instruction* UnitInterval(Instruction* bits, PrimitiveType w, int mantissa,
                            bool open_at_zero) {
    const int width = BitWidth(bits->shape().element_type());
    Instruction* top = Binary(Opcode::kShiftRightLogical, bits,
                              SplatBits(bits->shape().element_type(),
                                        static_cast<uint64_t>(width - mantissa), bits->shape()));
    Instruction* value = Convert(top, w);
    if (open_at_zero) value = Binary(Opcode::kAdd, value, Splat(w, 1.0, value->shape()));
    return Binary(Opcode::kMultiply, value, Splat(w, std::ldexp(1.0, -mantissa), value->shape()));
  }

  Instruction* Integer(Instruction* bits, Instruction* a, Instruction* b) {
    const Shape& shape = rng_.shape();
    const PrimitiveType u = bits->shape().element_type();
    Instruction* shaped = Reshape(bits, shape.dimensions());
    Instruction* au = Convert(a, u);
    Instruction* range = Binary(Opcode::kSubtract, Convert(b, u), au);
    Instruction* valid = Compare(b, a, ComparisonDirection::kGt);
    Instruction* safe_range = Select(valid, range, ScalarBits(u, 1));
    Instruction* offset = Binary(Opcode::kRemainder, shaped, Splat(safe_range, shaped->shape()));
    Instruction* value = Convert(Binary(Opcode::kAdd, Splat(au, shaped->shape()), offset),
                                 shape.element_type());
    return Finish(Select(Splat(valid, value->shape()), value, Splat(a, value->shape())));
  }

  // Gives the result the rng's declared shape (layout included).
  Instruction* Finish(Instruction* value) {
    if (value->shape() == rng_.shape()) return value;
    return editor_.Add(Opcode::kCopy, rng_.shape(), {value});
  }

  static Shape ArrayShape(PrimitiveType type, std::vector<int64_t> dims) {
    const bool scalar = dims.empty();
    Shape s = Shape::Array(type, std::move(dims));
    if (!scalar) s.SetDefaultLayout();
    return s;
  }
  Instruction* ScalarBits(PrimitiveType type, uint64_t bits) {
    Literal lit(ArrayShape(type, {}));
    lit.SetBits(0, bits);
    return AddScalarConstant(editor_, std::move(lit));
  }
  Instruction* Splat(Instruction* scalar, const Shape& like) {
    if (like.rank() == 0) return scalar;
    Shape s = like;
    s.set_element_type(scalar->shape().element_type());
    Instruction* b = editor_.Add(Opcode::kBroadcast, s, {scalar});
    b->set_has_dimensions(true);
    return b;
  }
  Instruction* Splat(PrimitiveType type, double value, const Shape& like) {
    return Splat(AddScalarConstant(editor_, ScalarLiteral(type, value)), like);
  }
  Instruction* SplatBits(PrimitiveType type, uint64_t bits, const Shape& like) {
    return Splat(ScalarBits(type, bits), like);
  }
  Instruction* Unary(Opcode op, Instruction* x) { return editor_.Add(op, x->shape(), {x}); }
  Instruction* Binary(Opcode op, Instruction* x, Instruction* y) {
    return editor_.Add(op, x->shape(), {x, y});
  }
  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape().element_type() == type) return x;
    Shape s = x->shape();
    s.set_element_type(type);
    return editor_.Add(Opcode::kConvert, s, {x});
  }
  Instruction* Compare(Instruction* x, Instruction* y, ComparisonDirection d) {
    Shape s = x->shape();
    s.set_element_type(PrimitiveType::kPred);
    Instruction* c = editor_.Add(Opcode::kCompare, s, {x, y});
    c->mutable_attrs()->comparison_direction = d;
    return c;
  }
  Instruction* Select(Instruction* p, Instruction* x, Instruction* y) {
    return editor_.Add(Opcode::kSelect, x->shape(), {p, x, y});
  }
  Instruction* Reshape(Instruction* x, const std::vector<int64_t>& dims) {
    if (x->shape().dimensions() == dims) return x;
    return editor_.Add(Opcode::kReshape, ArrayShape(x->shape().element_type(), dims), {x});
  }
  Instruction* Slice(Instruction* x, int64_t start, int64_t limit) {
    Instruction* s = editor_.Add(Opcode::kSlice,
                                 ArrayShape(x->shape().element_type(), {limit - start}), {x});
    s->mutable_attrs()->slice = {{start, limit, 1}};
    return s;
  }

  ComputationEditor& editor_;
  const Instruction& rng_;
};

}  // namespace

absl::StatusOr<bool> RngExpander::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    bool has_rng = false;
    for (const Instruction* instr : comp->instructions()) {
      has_rng |= instr->opcode() == Opcode::kRng;
    }
    if (!has_rng) continue;
    ComputationEditor editor(comp.get(), &names);
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kRng && Expandable(*instr, editor)) {
        targets.push_back(instr);
      }
    }
    absl::flat_hash_set<const Instruction*> replaced;
    for (Instruction* instr : targets) {
      if (!context.ConsumeFuel(name())) break;
      Expander expander(&editor, *instr);
      Instruction* result = expander.Build();
      editor.ReplaceAllUsesWith(instr, result);
      replaced.insert(instr);
    }
    if (replaced.empty()) continue;
    editor.Finish();
    // rng has a side effect, so Finish keeps it: drop the replaced ones here.
    std::vector<Instruction*> kept;
    for (Instruction* instr : comp->instructions()) {
      if (!replaced.contains(instr)) kept.push_back(instr);
    }
    comp->SetInstructions(std::move(kept));
    changed = true;
  }
  return changed;
}

}  // namespace hlowb
