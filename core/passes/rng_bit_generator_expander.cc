#include "core/passes/rng_bit_generator_expander.h"

#include <array>
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


constexpr PrimitiveType kU32 = PrimitiveType::kU32;
constexpr PrimitiveType kU64 = PrimitiveType::kU64;

bool Expandable(const Instruction& instr) {
  if (instr.operand_count() != 1) return false;
  const Shape& rs = instr.shape();
  if (!rs.IsTuple() || rs.tuple_count() != 2 || !rs.tuple_shape(1).IsArray()) return false;
  const Shape& bits = rs.tuple_shape(1);
  const Shape& state = instr.operand(0)->shape();
  if (!state.IsArray() || state.element_type() != kU64 || state.rank() != 1 ||
      state.IsDynamic() || bits.IsDynamic() || !rs.tuple_shape(0).IsArray()) {
    return false;
  }
  const int width = BitWidth(bits.element_type());
  if (IsComplex(bits.element_type()) || bits.element_type() == PrimitiveType::kPred ||
      (width != 8 && width != 16 && width != 32 && width != 64)) {
    return false;
  }
  if (bits.ElementCount() <= 0) return false;
  RandomAlgorithm algorithm = instr.attrs_or_default().rng_algorithm;
  const int64_t state_size = state.dimension(0);
  if (algorithm == RandomAlgorithm::kThreeFry) return state_size == 2;
  return state_size == 2 || state_size == 3;  // philox (default)
}

// Emits u32/u64 arithmetic in one computation.
class Emitter {
 public:
  explicit Emitter(ComputationEditor* editor) : editor_(*editor) {}

  static Shape ArrayShape(PrimitiveType type, std::vector<int64_t> dims) {
    const bool scalar = dims.empty();
    Shape s = Shape::Array(type, std::move(dims));
    if (!scalar) s.SetDefaultLayout();
    return s;
  }
  Instruction* Scalar(PrimitiveType type, uint64_t bits) {
    Literal lit(ArrayShape(type, {}));
    lit.SetBits(0, bits);
    return AddScalarConstant(editor_, std::move(lit));
  }
  // `scalar` broadcast to the shape of `like`.
  Instruction* Splat(Instruction* scalar, const Shape& like) {
    if (like.rank() == 0) return scalar;
    Shape s = like;
    s.set_element_type(scalar->shape().element_type());
    Instruction* b = editor_.Add(Opcode::kBroadcast, s, {scalar});
    b->set_has_dimensions(true);
    return b;
  }
  Instruction* Splat(PrimitiveType type, uint64_t bits, const Shape& like) {
    return Splat(Scalar(type, bits), like);
  }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) {
    return editor_.Add(op, a->shape(), {a, b});
  }
  Instruction* Convert(Instruction* x, PrimitiveType type) {
    Shape s = x->shape();
    s.set_element_type(type);
    return editor_.Add(Opcode::kConvert, s, {x});
  }
  Instruction* BitcastConvert(Instruction* x, PrimitiveType type) {
    Shape s = x->shape();
    s.set_element_type(type);
    return editor_.Add(Opcode::kBitcastConvert, s, {x});
  }
  Instruction* ShiftRight(Instruction* x, int amount) {
    return Binary(Opcode::kShiftRightLogical, x,
                  Splat(x->shape().element_type(), static_cast<uint64_t>(amount), x->shape()));
  }
  Instruction* ShiftLeft(Instruction* x, int amount) {
    return Binary(Opcode::kShiftLeft, x,
                  Splat(x->shape().element_type(), static_cast<uint64_t>(amount), x->shape()));
  }
  Instruction* Low32(Instruction* x) { return Convert(x, kU32); }
  Instruction* High32(Instruction* x) { return Convert(ShiftRight(x, 32), kU32); }
  Instruction* RotateLeft(Instruction* x, int amount) {
    return Binary(Opcode::kOr, ShiftLeft(x, amount), ShiftRight(x, 32 - amount));
  }
  // low | high << 32 as u64.
  Instruction* Join(Instruction* low, Instruction* high) {
    return Binary(Opcode::kOr, Convert(low, kU64), ShiftLeft(Convert(high, kU64), 32));
  }
  Instruction* Compare(Instruction* a, Instruction* b, ComparisonDirection d) {
    Shape s = a->shape();
    s.set_element_type(PrimitiveType::kPred);
    Instruction* c = editor_.Add(Opcode::kCompare, s, {a, b});
    c->mutable_attrs()->comparison_direction = d;
    return c;
  }
  Instruction* Select(Instruction* p, Instruction* a, Instruction* b) {
    return editor_.Add(Opcode::kSelect, a->shape(), {p, a, b});
  }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    return editor_.Add(Opcode::kReshape, ArrayShape(x->shape().element_type(), std::move(dims)),
                       {x});
  }
  Instruction* Slice(Instruction* x, std::vector<int64_t> limits) {
    std::vector<SliceDimension> slice;
    for (int64_t l : limits) slice.push_back({0, l, 1});
    Instruction* s =
        editor_.Add(Opcode::kSlice, ArrayShape(x->shape().element_type(), limits), {x});
    s->mutable_attrs()->slice = std::move(slice);
    return s;
  }
  // Element `i` of a rank-1 array as a scalar.
  Instruction* Element(Instruction* x, int64_t i) {
    Instruction* s = editor_.Add(Opcode::kSlice, ArrayShape(x->shape().element_type(), {1}), {x});
    s->mutable_attrs()->slice = {{i, i + 1, 1}};
    return Reshape(s, {});
  }
  Instruction* Concatenate(std::vector<Instruction*> parts, int64_t dim) {
    std::vector<int64_t> dims = parts[0]->shape().dimensions();
    dims[dim] = 0;
    for (Instruction* p : parts) dims[dim] += p->shape().dimension(static_cast<int>(dim));
    const Shape shape = ArrayShape(parts[0]->shape().element_type(), dims);
    Instruction* c = editor_.Add(Opcode::kConcatenate, shape, std::move(parts));
    *c->mutable_dimensions() = {dim};
    c->set_has_dimensions(true);
    return c;
  }
  // scalar + [0, 1, ..., count - 1] as u64[count].
  Instruction* Counters(Instruction* start, int64_t count) {
    Shape s = ArrayShape(kU64, {count});
    Instruction* iota = editor_.Add(Opcode::kIota, s, {});
    iota->set_index(0);
    return Binary(Opcode::kAdd, Splat(start, s), iota);
  }

  // Three-fry 2x32 (20 rounds) of each counter under `key` (a u64 scalar).
  std::array<Instruction*, 2> ThreeFry(Instruction* counters, Instruction* key) {
    static constexpr int kRotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
    const Shape& s = counters->shape();
    Instruction* k0 = Low32(key);
    Instruction* k1 = High32(key);
    Instruction* k2 =
        Binary(Opcode::kXor, Binary(Opcode::kXor, Scalar(kU32, 0x1BD11BDAu), k0), k1);
    Instruction* keys[3] = {k0, k1, k2};
    Instruction* x0 = Binary(Opcode::kAdd, Low32(counters), Splat(k0, s));
    Instruction* x1 = Binary(Opcode::kAdd, High32(counters), Splat(k1, s));
    for (int group = 0; group < 5; ++group) {
      for (int r = 0; r < 4; ++r) {
        x0 = Binary(Opcode::kAdd, x0, x1);
        x1 = RotateLeft(x1, kRotations[(group % 2) * 4 + r]);
        x1 = Binary(Opcode::kXor, x1, x0);
      }
      x0 = Binary(Opcode::kAdd, x0, Splat(keys[(group + 1) % 3], s));
      Instruction* injected = Binary(Opcode::kAdd, keys[(group + 2) % 3],
                                     Scalar(kU32, static_cast<uint64_t>(group + 1)));
      x1 = Binary(Opcode::kAdd, x1, Splat(injected, s));
    }
    return {x0, x1};
  }

  // Philox 4x32 (10 rounds) of the 128-bit counters (low, high) under `key` (u64 scalar).
  std::array<Instruction*, 4> Philox(Instruction* low, Instruction* high, Instruction* key) {
    const Shape& s = low->shape();
    Instruction* x[4] = {Low32(low), High32(low), Low32(high), High32(high)};
    Instruction* k0 = Low32(key);
    Instruction* k1 = High32(key);
    for (int round = 0; round < 10; ++round) {
      Shape wide = s;
      wide.set_element_type(kU64);
      Instruction* p0 =
          Binary(Opcode::kMultiply, Convert(x[0], kU64), Splat(kU64, 0xD2511F53u, wide));
      Instruction* p1 =
          Binary(Opcode::kMultiply, Convert(x[2], kU64), Splat(kU64, 0xCD9E8D57u, wide));
      Instruction* y0 = Binary(Opcode::kXor, Binary(Opcode::kXor, High32(p1), x[1]),
                               Splat(k0, s));
      Instruction* y1 = Low32(p1);
      Instruction* y2 = Binary(Opcode::kXor, Binary(Opcode::kXor, High32(p0), x[3]),
                               Splat(k1, s));
      Instruction* y3 = Low32(p0);
      x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
      if (round + 1 < 10) {
        k0 = Binary(Opcode::kAdd, k0, Scalar(kU32, 0x9E3779B9u));
        k1 = Binary(Opcode::kAdd, k1, Scalar(kU32, 0xBB67AE85u));
      }
    }
    return {x[0], x[1], x[2], x[3]};
  }

  // Interleaves equally shaped rank-1 arrays element by element: [a0, b0, c0, a1, b1, ...].
  Instruction* Interleave(const std::vector<Instruction*>& parts) {
    const int64_t m = parts[0]->shape().dimension(0);
    std::vector<Instruction*> columns;
    for (Instruction* p : parts) columns.push_back(Reshape(p, {m, 1}));
    Instruction* stacked = Concatenate(std::move(columns), 1);
    return Reshape(stacked, {m * static_cast<int64_t>(parts.size())});
  }

  ComputationEditor& editor() { return editor_; }

 private:
  ComputationEditor& editor_;
};

// The expansion of one rng-bit-generator: a tuple (new state, bits).
Instruction* Expand(ComputationEditor* editor, const Instruction& instr) {
  Emitter e(editor);
  Instruction* state = instr.operand(0);
  const Shape& bits_shape = instr.shape().tuple_shape(1);
  const Shape& state_out_shape = instr.shape().tuple_shape(0);
  const PrimitiveType type = bits_shape.element_type();
  const int width = BitWidth(type);
  const std::vector<int64_t>& dims = bits_shape.dimensions();
  const int64_t n = bits_shape.ElementCount();
  const int64_t state_size = state->shape().dimension(0);
  RandomAlgorithm algorithm = instr.attrs_or_default().rng_algorithm;

  Instruction* key = e.Element(state, 0);
  Instruction* key_slice = key->operand(0);  // u64[1] slice of the state
  Instruction* raw = nullptr;                // u32 (width <= 32) or u64 bits, rank 1
  std::vector<Instruction*> new_state = {key_slice};

  if (algorithm == RandomAlgorithm::kThreeFry) {
    Instruction* counter = e.Element(state, 1);
    int64_t used = 0;
    if (width == 64) {
      std::array<Instruction*, 2> w = e.ThreeFry(e.Counters(counter, n), key);
      raw = e.Reshape(e.Join(w[0], w[1]), dims);
      used = n;
    } else if (dims.empty()) {
      std::array<Instruction*, 2> w = e.ThreeFry(e.Counters(counter, 1), key);
      raw = e.Reshape(w[0], {});
      used = 1;
    } else {
      int split = -1;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] % 2 == 0) {
          split = static_cast<int>(i);
          break;
        }
      }
      if (split < 0) {
        for (size_t i = 0; i < dims.size(); ++i) {
          if (split < 0 || dims[i] > dims[split]) split = static_cast<int>(i);
        }
      }
      int64_t outer = 1, inner = 1;
      for (int i = 0; i < split; ++i) outer *= dims[i];
      for (size_t i = split + 1; i < dims.size(); ++i) inner *= dims[i];
      const int64_t d = dims[split], half = (d + 1) / 2;
      used = outer * half * inner;
      std::array<Instruction*, 2> w = e.ThreeFry(e.Counters(counter, used), key);
      // Word a goes to position 2j along the split dimension, word b to 2j + 1.
      Instruction* a = e.Reshape(w[0], {outer, half, 1, inner});
      Instruction* b = e.Reshape(w[1], {outer, half, 1, inner});
      Instruction* joined = e.Reshape(e.Concatenate({a, b}, 2), {outer, 2 * half, inner});
      if (2 * half != d) joined = e.Slice(joined, {outer, d, inner});
      raw = e.Reshape(joined, dims);
    }
    Instruction* advanced = e.Binary(Opcode::kAdd, counter,
                                     e.Scalar(kU64, static_cast<uint64_t>(used)));
    new_state.push_back(e.Reshape(advanced, {1}));
  } else {
    Instruction* low = e.Element(state, 1);
    Instruction* high = state_size >= 3 ? e.Element(state, 2) : key;
    Instruction* high_plus_one = e.Binary(Opcode::kAdd, high, e.Scalar(kU64, 1));
    const int64_t words = width == 64 ? 2 * n : n;
    const int64_t blocks = (words + 3) / 4;
    Instruction* lows = e.Counters(low, blocks);
    const Shape& block_shape = lows->shape();
    Instruction* carry = e.Compare(lows, e.Splat(low, block_shape), ComparisonDirection::kLt);
    Instruction* highs =
        e.Select(carry, e.Splat(high_plus_one, block_shape), e.Splat(high, block_shape));
    std::array<Instruction*, 4> w = e.Philox(lows, highs, key);
    Instruction* flat = width == 64
                            ? e.Interleave({e.Join(w[0], w[1]), e.Join(w[2], w[3])})
                            : e.Interleave({w[0], w[1], w[2], w[3]});
    if (flat->shape().dimension(0) != n) flat = e.Slice(flat, {n});
    raw = e.Reshape(flat, dims);
    Instruction* new_low =
        e.Binary(Opcode::kAdd, low, e.Scalar(kU64, static_cast<uint64_t>(blocks)));
    new_state.push_back(e.Reshape(new_low, {1}));
    if (state_size >= 3) {
      Instruction* wrapped = e.Compare(new_low, low, ComparisonDirection::kLt);
      new_state.push_back(e.Reshape(e.Select(wrapped, high_plus_one, high), {1}));
    }
  }

  // Words to the result type: keep the low bits, then reinterpret.
  Instruction* bits = raw;
  const PrimitiveType unsigned_type = width == 64   ? kU64
                                      : width == 32 ? kU32
                                      : width == 16 ? PrimitiveType::kU16
                                                    : PrimitiveType::kU8;
  if (unsigned_type != raw->shape().element_type()) bits = e.Convert(bits, unsigned_type);
  if (type != unsigned_type) bits = e.BitcastConvert(bits, type);
  // Give the results the declared layouts.
  if (!(bits->shape() == bits_shape)) bits = editor->Add(Opcode::kCopy, bits_shape, {bits});
  Instruction* state_result = e.Concatenate(std::move(new_state), 0);
  if (!(state_result->shape() == state_out_shape)) {
    state_result = editor->Add(Opcode::kCopy, state_out_shape, {state_result});
  }
  return editor->Add(Opcode::kTuple, instr.shape(), {state_result, bits});
}

}  // namespace

absl::StatusOr<bool> RngBitGeneratorExpander::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() != Opcode::kRngBitGenerator || !Expandable(*instr)) continue;
      const RandomAlgorithm algorithm = instr->attrs_or_default().rng_algorithm;
      if (keep_philox_ &&
          (algorithm == RandomAlgorithm::kPhilox || algorithm == RandomAlgorithm::kDefault)) {
        continue;
      }
      targets.push_back(instr);
    }
    if (targets.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* instr : targets) {
      if (!context.ConsumeFuel(name())) break;
      Instruction* result = Expand(&editor, *instr);
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
