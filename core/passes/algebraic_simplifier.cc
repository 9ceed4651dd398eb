#include "core/passes/algebraic_simplifier.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/analysis/shape_inference.h"
#include "core/ir/float_types.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {

namespace {

// ----- element-type and constant helpers -----

bool IsIntOrPred(PrimitiveType t) { return IsIntegral(t) || t == PrimitiveType::kPred; }
bool IsRealFloat(PrimitiveType t) { return IsFloatingPoint(t); }

uint64_t WidthMask(PrimitiveType t) {
  if (t == PrimitiveType::kPred) return 1;
  int w = BitWidth(t);
  return w >= 64 ? ~uint64_t{0} : (uint64_t{1} << w) - 1;
}

// The constant behind `instr` (itself, or the scalar/array constant under broadcasts).
const Literal* ConstantBehind(const Instruction& instr) {
  const Instruction* c = &instr;
  while (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1) c = c->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->literal()) return nullptr;
  const Literal& lit = *c->literal();
  if (lit.elided() || !lit.shape().IsArray() || lit.element_count() == 0) return nullptr;
  return &lit;
}

bool IsConstantLike(const Instruction& instr) {
  const Instruction* c = &instr;
  while (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1) c = c->operand(0);
  return c->opcode() == Opcode::kConstant;
}

// Bits of the single value every element of a (non-complex) constant holds.
std::optional<uint64_t> UniformBits(const Instruction& instr) {
  const Literal* lit = ConstantBehind(instr);
  if (!lit || IsComplex(lit->shape().element_type())) return std::nullopt;
  uint64_t first = lit->GetBits(0);
  for (int64_t i = 1; i < lit->element_count(); ++i) {
    if (lit->GetBits(i) != first) return std::nullopt;
  }
  return first & WidthMask(lit->shape().element_type());
}

// Integer value of a uniform integer constant (sign-extended for signed types).
std::optional<int64_t> UniformInt(const Instruction& instr) {
  PrimitiveType t = instr.shape().element_type();
  if (!IsIntegral(t)) return std::nullopt;
  std::optional<uint64_t> bits = UniformBits(instr);
  if (!bits) return std::nullopt;
  int w = BitWidth(t);
  uint64_t v = *bits;
  if (IsSignedIntegral(t) && w < 64 && ((v >> (w - 1)) & 1)) v |= ~uint64_t{0} << w;
  if (IsUnsignedIntegral(t) && w == 64 && (v >> 63)) return std::nullopt;  // beyond int64
  return static_cast<int64_t>(v);
}

std::optional<double> UniformValue(const Instruction& instr) {
  if (!IsConstantLike(instr)) return std::nullopt;
  return UniformConstantValue(instr);
}

bool IsValue(const Instruction& instr, double v) {
  std::optional<double> u = UniformValue(instr);
  return u.has_value() && *u == v;
}
bool IsPositiveZero(const Instruction& instr) {
  std::optional<double> u = UniformValue(instr);
  return u.has_value() && *u == 0 && !std::signbit(*u);
}
bool IsNegativeZero(const Instruction& instr) {
  std::optional<double> u = UniformValue(instr);
  return u.has_value() && *u == 0 && std::signbit(*u);
}
bool IsAllOnes(const Instruction& instr) {
  PrimitiveType t = instr.shape().element_type();
  if (!IsIntOrPred(t)) return false;
  std::optional<uint64_t> b = UniformBits(instr);
  return b.has_value() && *b == WidthMask(t);
}
bool IsZeroBits(const Instruction& instr) {
  std::optional<uint64_t> b = UniformBits(instr);
  return b.has_value() && *b == 0;
}

bool HasInfinity(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
         t == PrimitiveType::kF64;
}

// Lowest (highest when `high`) value of the element type, as bits; nullopt when the type has
// no such value this pass recognises.
std::optional<uint64_t> ExtremeBits(PrimitiveType t, bool high) {
  if (IsIntegral(t)) {
    uint64_t mask = WidthMask(t);
    int w = BitWidth(t);
    if (IsUnsignedIntegral(t)) return high ? mask : 0;
    uint64_t min_bits = uint64_t{1} << (w - 1);
    return high ? (mask >> 1) : min_bits;
  }
  if (HasInfinity(t)) return DoubleToFloatBits(t, high ? INFINITY : -INFINITY);
  return std::nullopt;
}

bool IsExtreme(const Instruction& instr, bool high) {
  PrimitiveType t = instr.shape().element_type();
  std::optional<uint64_t> want = ExtremeBits(t, high);
  std::optional<uint64_t> have = UniformBits(instr);
  return want && have && (*want & WidthMask(t)) == *have;
}

Literal BitsLiteral(PrimitiveType t, uint64_t bits) {
  Shape s = Shape::Array(t, {});
  s.SetDefaultLayout();
  Literal lit(s);
  lit.SetBits(0, bits);
  return lit;
}

// k when v == 2^k (v > 0).
std::optional<int> Log2Exact(int64_t v) {
  if (v <= 0 || (v & (v - 1)) != 0) return std::nullopt;
  int k = 0;
  while ((int64_t{1} << k) != v) ++k;
  return k;
}

// Orders two uniform constants of the same type; nullopt when either is not one or NaN.
std::optional<bool> ConstantLessOrEqual(const Instruction& lo, const Instruction& hi) {
  PrimitiveType t = lo.shape().element_type();
  if (t != hi.shape().element_type()) return std::nullopt;
  if (IsSignedIntegral(t)) {
    std::optional<int64_t> a = UniformInt(lo), b = UniformInt(hi);
    if (!a || !b) return std::nullopt;
    return *a <= *b;
  }
  if (IsUnsignedIntegral(t)) {
    std::optional<uint64_t> a = UniformBits(lo), b = UniformBits(hi);
    if (!a || !b) return std::nullopt;
    return *a <= *b;
  }
  if (!IsRealFloat(t)) return std::nullopt;
  std::optional<double> a = UniformValue(lo), b = UniformValue(hi);
  if (!a || !b || std::isnan(*a) || std::isnan(*b)) return std::nullopt;
  return *a <= *b;
}

bool IsRoundingOp(Opcode op) {
  return op == Opcode::kFloor || op == Opcode::kCeil || op == Opcode::kRoundNearestEven ||
         op == Opcode::kRoundNearestAfz;
}

// Precision (significand digits incl. the implicit bit) of the standard float types.
int FloatDigits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return 11;
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF32: return 24;
    case PrimitiveType::kF64: return 53;
    default: return 0;
  }
}
int FloatExponentBits(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16: return 5;
    case PrimitiveType::kBF16: return 8;
    case PrimitiveType::kF32: return 8;
    case PrimitiveType::kF64: return 11;
    default: return 0;
  }
}

// True when converting every value of `from` to `to` is exact (so converting back restores it).
bool ConvertIsExact(PrimitiveType from, PrimitiveType to) {
  if (from == to) return true;
  if (IsComplex(from) || IsComplex(to) || !IsArrayType(to)) return false;
  if (from == PrimitiveType::kPred) return true;
  if (IsIntegral(from)) {
    int w = BitWidth(from);
    bool s = IsSignedIntegral(from);
    if (IsSignedIntegral(to)) return s ? BitWidth(to) >= w : BitWidth(to) > w;
    if (IsUnsignedIntegral(to)) return !s && BitWidth(to) >= w;
    int digits = FloatDigits(to);
    return digits > 0 && digits >= (s ? w - 1 : w);
  }
  int from_digits = FloatDigits(from), to_digits = FloatDigits(to);
  if (from_digits == 0 || to_digits == 0) return false;
  return to_digits >= from_digits && FloatExponentBits(to) >= FloatExponentBits(from);
}

// The binary op a reducer computation applies to its two parameters, if it is that simple.
std::optional<Opcode> ReducerOp(const Computation* comp) {
  if (!comp || comp->parameter_count() != 2 || comp->instruction_count() != 3) {
    return std::nullopt;
  }
  const Instruction* root = comp->root();
  if (!root || root->operand_count() != 2 || !root->shape().IsScalar()) return std::nullopt;
  switch (root->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
      break;
    default:
      return std::nullopt;
  }
  const Instruction* p0 = comp->parameter(0);
  const Instruction* p1 = comp->parameter(1);
  if (!p0 || !p1) return std::nullopt;
  if (!((root->operand(0) == p0 && root->operand(1) == p1) ||
        (root->operand(0) == p1 && root->operand(1) == p0))) {
    return std::nullopt;
  }
  return root->opcode();
}

ComparisonDirection Mirror(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    default: return d;
  }
}

ComparisonDirection Invert(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq: return ComparisonDirection::kNe;
    case ComparisonDirection::kNe: return ComparisonDirection::kEq;
    case ComparisonDirection::kGt: return ComparisonDirection::kLe;
    case ComparisonDirection::kLe: return ComparisonDirection::kGt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLt;
    case ComparisonDirection::kLt: return ComparisonDirection::kGe;
  }
  return d;
}

bool IsCommutative(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return true;
    default:
      return false;
  }
}

bool IsIdentityPermutation(const std::vector<int64_t>& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// `shape` with a default layout when `like` has a layout, and none when it has none, so that
// new instructions follow the convention of the instructions they replace.
Shape Conform(Shape shape, const Shape& like) {
  if (like.has_layout()) {
    shape.SetDefaultLayout();
  } else {
    shape.clear_layout();
  }
  return shape;
}

// ----- the per-sweep rewriter -----

// Runs one sweep of the rewrite table over one computation.
class Sweeper {
 public:
  Sweeper(const AlgebraicSimplifierOptions& options, PassContext& context, std::string_view name,
          Computation* comp, NameUniquer* names)
      : options_(options), context_(context), pass_name_(name), editor_(comp, names) {}

  // True when something changed; `out_of_fuel` is set when the fuel ran out.
  bool Run(bool* out_of_fuel) {
    Computation* comp = editor_.computation();
    absl::flat_hash_set<const Instruction*> has_control_successor;
    for (const Instruction* i : comp->instructions()) {
      for (const Instruction* p : i->control_predecessors()) has_control_successor.insert(p);
    }
    std::vector<Instruction*> order = comp->instructions();
    for (Instruction* instr : order) {
      if (out_of_fuel_) break;
      if (editor_.user_count(instr) == 0 && comp->root() != instr) continue;
      if (!instr->control_predecessors().empty() || has_control_successor.contains(instr)) {
        continue;
      }
      if (!Eligible(*instr)) continue;
      Visit(instr);
    }
    if (changed_) editor_.Finish();
    *out_of_fuel = out_of_fuel_;
    return changed_;
  }

 private:
  bool Eligible(const Instruction& instr) {
    if (HasSideEffect(instr) || instr.shape().IsDynamic()) return false;
    for (const Instruction* op : instr.operands()) {
      if (!op || HasSideEffect(*op) || op->shape().IsDynamic()) return false;
    }
    return true;
  }

  bool Fuel() {
    if (out_of_fuel_) return false;
    if (!context_.ConsumeFuel(pass_name_)) {
      out_of_fuel_ = true;
      return false;
    }
    changed_ = true;
    return true;
  }

  bool ShapeOk(const Shape& old_shape, const Shape& new_shape) const {
    if (options_.is_layout_sensitive) return old_shape == new_shape;
    return ShapesCompatible(old_shape, new_shape);
  }

  // Replaces `old` by an instruction that already exists.
  bool ReplaceWith(Instruction* old, Instruction* repl) {
    if (repl == old || !ShapeOk(old->shape(), repl->shape())) return false;
    if (!Fuel()) return false;
    editor_.ReplaceAllUsesWith(old, repl);
    return true;
  }
  // Replaces `old` by a new instruction created after Fuel() succeeded.
  bool Done(Instruction* old, Instruction* repl) {
    editor_.ReplaceAllUsesWith(old, repl);
    return true;
  }

  Instruction* Unary(Opcode op, const Shape& shape, Instruction* x) {
    return editor_.Add(op, shape, {x});
  }
  Instruction* Binary(Opcode op, const Shape& shape, Instruction* x, Instruction* y) {
    return editor_.Add(op, shape, {x, y});
  }
  Instruction* Broadcast(const Shape& shape, Instruction* x, std::vector<int64_t> dims) {
    Instruction* b = editor_.Add(Opcode::kBroadcast, shape, {x});
    *b->mutable_dimensions() = std::move(dims);
    b->set_has_dimensions(true);
    return b;
  }
  // A value of `shape` whose elements are all `scalar` (a constant, broadcast when not scalar).
  Instruction* Filled(const Shape& shape, Literal scalar) {
    Instruction* c =
        editor_.Add(Opcode::kConstant, Conform(scalar.shape(), shape), {}, "constant");
    c->set_literal(std::make_unique<Literal>(std::move(scalar)));
    if (shape.IsScalar()) return c;
    return Broadcast(shape, c, {});
  }
  Instruction* FilledValue(const Shape& shape, double v) {
    return Filled(shape, ScalarLiteral(shape.element_type(), v));
  }
  Instruction* FilledBits(const Shape& shape, uint64_t bits) {
    return Filled(shape, BitsLiteral(shape.element_type(), bits));
  }
  // `x` (scalar) broadcast to `shape`, or `x` itself when it already has that shape.
  Instruction* BroadcastScalar(const Shape& shape, Instruction* x) {
    if (shape.IsScalar()) return x;
    return Broadcast(shape, x, {});
  }

  void Visit(Instruction* instr) {
    Opcode op = instr->opcode();
    if (IsCommutative(op) && instr->operand_count() == 2 && CanonicalizeOperands(instr)) return;
    switch (op) {
      case Opcode::kAdd: HandleAdd(instr); break;
      case Opcode::kSubtract: HandleSubtract(instr); break;
      case Opcode::kMultiply: HandleMultiply(instr); break;
      case Opcode::kDivide: HandleDivide(instr); break;
      case Opcode::kRemainder: HandleRemainder(instr); break;
      case Opcode::kNegate: HandleNegate(instr); break;
      case Opcode::kNot: HandleNot(instr); break;
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightArithmetic:
      case Opcode::kShiftRightLogical:
        // R23
        if (IsIntegral(instr->shape().element_type()) && IsZeroBits(*instr->operand(1))) {
          ReplaceWith(instr, instr->operand(0));
        }
        break;
      case Opcode::kAnd: HandleAnd(instr); break;
      case Opcode::kOr: HandleOr(instr); break;
      case Opcode::kXor: HandleXor(instr); break;
      case Opcode::kMaximum:
      case Opcode::kMinimum: HandleMinMax(instr); break;
      case Opcode::kSelect: HandleSelect(instr); break;
      case Opcode::kCompare: HandleCompare(instr); break;
      case Opcode::kClamp: HandleClamp(instr); break;
      case Opcode::kPower: HandlePower(instr); break;
      case Opcode::kReshape: HandleReshape(instr); break;
      case Opcode::kTranspose: HandleTranspose(instr); break;
      case Opcode::kBroadcast: HandleBroadcast(instr); break;
      case Opcode::kSlice: HandleSlice(instr); break;
      case Opcode::kConcatenate: HandleConcatenate(instr); break;
      case Opcode::kPad: HandlePad(instr); break;
      case Opcode::kReverse: HandleReverse(instr); break;
      case Opcode::kCopy: HandleCopy(instr); break;
      case Opcode::kBitcast: HandleBitcast(instr); break;
      case Opcode::kDynamicSlice: HandleDynamicSlice(instr); break;
      case Opcode::kDynamicUpdateSlice: HandleDynamicUpdateSlice(instr); break;
      case Opcode::kGetTupleElement: HandleGetTupleElement(instr); break;
      case Opcode::kTuple: HandleTuple(instr); break;
      case Opcode::kConvert:
      case Opcode::kBitcastConvert: HandleConvert(instr); break;
      case Opcode::kReduce: HandleReduce(instr); break;
      case Opcode::kDot: HandleDot(instr); break;
      case Opcode::kIota: HandleIota(instr); break;
      case Opcode::kSort: HandleSort(instr); break;
      case Opcode::kReducePrecision: HandleReducePrecision(instr); break;
      default:
        HandleUnary(instr);
        break;
    }
  }

  // R64: constants to the right of commutative operations.
  bool CanonicalizeOperands(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    if (!IsConstantLike(*a) || IsConstantLike(*b)) return false;
    if (!Fuel()) return true;
    editor_.ReplaceOperand(instr, 0, b);
    editor_.ReplaceOperand(instr, 1, a);
    return true;
  }

  void HandleAdd(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (IsValue(*b, 0)) {  // R1
      ReplaceWith(instr, a);
      return;
    }
    if (b->opcode() == Opcode::kNegate || a->opcode() == Opcode::kNegate) {  // R17
      bool right = b->opcode() == Opcode::kNegate;
      Instruction* x = right ? a : b;
      Instruction* y = right ? b->operand(0) : a->operand(0);
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kSubtract, instr->shape(), x, y));
      return;
    }
    if (IsIntegral(t)) {  // R22
      for (int i = 0; i < 2; ++i) {
        Instruction* sub = instr->operand(i);
        Instruction* other = instr->operand(1 - i);
        if (sub->opcode() == Opcode::kSubtract && sub->operand(1) == other) {
          ReplaceWith(instr, sub->operand(0));
          return;
        }
      }
    }
  }

  void HandleSubtract(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    bool ints = IsIntegral(t);
    if (IsPositiveZero(*b)) {  // R2
      ReplaceWith(instr, a);
      return;
    }
    if ((ints && IsValue(*a, 0)) || (IsRealFloat(t) && IsNegativeZero(*a))) {  // R3
      if (!Fuel()) return;
      Done(instr, Unary(Opcode::kNegate, instr->shape(), b));
      return;
    }
    if (ints && a == b) {  // R4
      if (!Fuel()) return;
      Done(instr, FilledValue(instr->shape(), 0));
      return;
    }
    if (b->opcode() == Opcode::kNegate) {  // R18
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kAdd, instr->shape(), a, b->operand(0)));
      return;
    }
    if (ints && a->opcode() == Opcode::kAdd) {  // R21
      if (a->operand(1) == b) {
        ReplaceWith(instr, a->operand(0));
      } else if (a->operand(0) == b) {
        ReplaceWith(instr, a->operand(1));
      }
    }
  }

  void HandleMultiply(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (IsValue(*b, 1)) {  // R5
      ReplaceWith(instr, a);
      return;
    }
    if (IsIntOrPred(t) && IsZeroBits(*b)) {  // R6
      ReplaceWith(instr, b);
      return;
    }
    if ((IsSignedIntegral(t) || IsRealFloat(t)) && IsValue(*b, -1)) {  // R7
      if (!Fuel()) return;
      Done(instr, Unary(Opcode::kNegate, instr->shape(), a));
      return;
    }
    if (IsIntegral(t)) {  // R12
      std::optional<int64_t> v = UniformInt(*b);
      std::optional<int> k = v ? Log2Exact(*v) : std::nullopt;
      if (k && *k >= 1) {
        if (!Fuel()) return;
        Instruction* amount = FilledValue(instr->shape(), *k);
        Done(instr, Binary(Opcode::kShiftLeft, instr->shape(), a, amount));
        return;
      }
    }
    if (a->opcode() == Opcode::kNegate && b->opcode() == Opcode::kNegate) {  // R19
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kMultiply, instr->shape(), a->operand(0), b->operand(0)));
    }
  }

  void HandleDivide(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (IsValue(*b, 1)) {  // R8
      ReplaceWith(instr, a);
      return;
    }
    if (IsRealFloat(t) && IsValue(*b, -1)) {  // R9
      if (!Fuel()) return;
      Done(instr, Unary(Opcode::kNegate, instr->shape(), a));
      return;
    }
    if (IsRealFloat(t)) {  // R10
      std::optional<double> v = UniformValue(*b);
      if (!v || !std::isfinite(*v) || *v == 0) return;
      int exp = 0;
      double mant = std::frexp(std::fabs(*v), &exp);
      if (mant != 0.5) return;  // not a power of two
      double r = 1.0 / *v;
      Literal lit = ScalarLiteral(t, r);
      if (LiteralElementAsDouble(lit, 0) != r) return;  // reciprocal not exact in this type
      if (!Fuel()) return;
      Instruction* c = Filled(instr->shape(), std::move(lit));
      Done(instr, Binary(Opcode::kMultiply, instr->shape(), a, c));
      return;
    }
    if (IsUnsignedIntegral(t)) {  // R11
      std::optional<int64_t> v = UniformInt(*b);
      std::optional<int> k = v ? Log2Exact(*v) : std::nullopt;
      if (k && *k >= 1) {
        if (!Fuel()) return;
        Instruction* amount = FilledValue(instr->shape(), *k);
        Done(instr, Binary(Opcode::kShiftRightLogical, instr->shape(), a, amount));
      }
    }
  }

  void HandleRemainder(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (!IsIntegral(t)) return;
    std::optional<int64_t> v = UniformInt(*b);
    if (!v) return;
    if (*v == 1) {  // R14
      if (!Fuel()) return;
      Done(instr, FilledValue(instr->shape(), 0));
      return;
    }
    std::optional<int> k = Log2Exact(*v);
    if (IsUnsignedIntegral(t) && k && *k >= 1) {  // R13
      if (!Fuel()) return;
      Instruction* mask = FilledBits(instr->shape(), static_cast<uint64_t>(*v - 1));
      Done(instr, Binary(Opcode::kAnd, instr->shape(), a, mask));
    }
  }

  void HandleNegate(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->opcode() == Opcode::kNegate) {  // R15
      ReplaceWith(instr, a->operand(0));
      return;
    }
    if (a->opcode() == Opcode::kSubtract && IsIntegral(instr->shape().element_type())) {  // R20
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kSubtract, instr->shape(), a->operand(1), a->operand(0)));
    }
  }

  void HandleNot(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->opcode() == Opcode::kNot) {  // R16
      ReplaceWith(instr, a->operand(0));
      return;
    }
    if (a->opcode() == Opcode::kCompare && a->operand_count() == 2 &&
        IsIntOrPred(a->operand(0)->shape().element_type())) {  // R34
      if (!Fuel()) return;
      Instruction* c = editor_.AddLike(*a, instr->shape(), {a->operand(0), a->operand(1)});
      c->mutable_attrs()->comparison_direction =
          Invert(a->attrs_or_default().comparison_direction);
      Done(instr, c);
    }
  }

  // R32/R33: x op not(x).
  static bool IsNotPair(const Instruction* a, const Instruction* b) {
    return (b->opcode() == Opcode::kNot && b->operand(0) == a) ||
           (a->opcode() == Opcode::kNot && a->operand(0) == b);
  }

  void HandleAnd(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    if (!IsIntOrPred(instr->shape().element_type())) return;
    if (IsAllOnes(*b)) {  // R24
      ReplaceWith(instr, a);
    } else if (IsZeroBits(*b)) {  // R25
      ReplaceWith(instr, b);
    } else if (a == b) {  // R28
      ReplaceWith(instr, a);
    } else if (IsNotPair(a, b)) {  // R32
      if (!Fuel()) return;
      Done(instr, FilledBits(instr->shape(), 0));
    }
  }

  void HandleOr(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (!IsIntOrPred(t)) return;
    if (IsZeroBits(*b)) {  // R26
      ReplaceWith(instr, a);
    } else if (IsAllOnes(*b)) {  // R27
      ReplaceWith(instr, b);
    } else if (a == b) {  // R29
      ReplaceWith(instr, a);
    } else if (IsNotPair(a, b)) {  // R33
      if (!Fuel()) return;
      Done(instr, FilledBits(instr->shape(), WidthMask(t)));
    }
  }

  void HandleXor(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    if (!IsIntOrPred(instr->shape().element_type())) return;
    if (a == b) {  // R30
      if (!Fuel()) return;
      Done(instr, FilledBits(instr->shape(), 0));
    } else if (IsZeroBits(*b)) {  // R31
      ReplaceWith(instr, a);
    }
  }

  void HandleMinMax(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    bool is_max = instr->opcode() == Opcode::kMaximum;
    if (a == b) {  // R35, R36
      ReplaceWith(instr, a);
      return;
    }
    if (IsExtreme(*b, /*high=*/!is_max)) {  // R37, R38
      ReplaceWith(instr, a);
      return;
    }
    // R49: max(min(x, hi), lo); R50: min(max(x, lo), hi).
    Opcode inner_op = is_max ? Opcode::kMinimum : Opcode::kMaximum;
    if (a->opcode() != inner_op || !IsConstantLike(*b) || !IsConstantLike(*a->operand(1)) ||
        IsConstantLike(*a->operand(0))) {
      return;
    }
    Instruction* lo = is_max ? b : a->operand(1);
    Instruction* hi = is_max ? a->operand(1) : b;
    std::optional<bool> ordered = ConstantLessOrEqual(*lo, *hi);
    if (!ordered || !*ordered) return;
    if (!Fuel()) return;
    Done(instr, editor_.Add(Opcode::kClamp, instr->shape(), {lo, a->operand(0), hi}));
  }

  void HandleClamp(Instruction* instr) {
    Instruction* lo = instr->operand(0);
    Instruction* x = instr->operand(1);
    Instruction* hi = instr->operand(2);
    if (IsExtreme(*lo, /*high=*/false) && IsExtreme(*hi, /*high=*/true)) {  // R51
      ReplaceWith(instr, x);
    }
  }

  void HandleSelect(Instruction* instr) {
    Instruction* p = instr->operand(0);
    Instruction* a = instr->operand(1);
    Instruction* b = instr->operand(2);
    if (std::optional<uint64_t> pv = UniformBits(*p);
        pv && p->shape().element_type() == PrimitiveType::kPred) {  // R39, R40
      ReplaceWith(instr, *pv ? a : b);
      return;
    }
    if (a == b) {  // R41
      ReplaceWith(instr, a);
      return;
    }
    if (p->opcode() == Opcode::kNot) {  // R42
      if (!Fuel()) return;
      Instruction* q = p->operand(0);
      editor_.ReplaceOperand(instr, 0, q);
      editor_.ReplaceOperand(instr, 1, b);
      editor_.ReplaceOperand(instr, 2, a);
      return;
    }
    if (instr->shape().element_type() == PrimitiveType::kPred &&
        ShapesCompatible(p->shape(), instr->shape())) {
      if (IsAllOnes(*a) && IsZeroBits(*b)) {  // R43
        ReplaceWith(instr, p);
      } else if (IsZeroBits(*a) && IsAllOnes(*b)) {  // R44
        if (!Fuel()) return;
        Done(instr, Unary(Opcode::kNot, instr->shape(), p));
      }
    }
  }

  void HandleCompare(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    ComparisonDirection dir = instr->attrs_or_default().comparison_direction;
    PrimitiveType t = a->shape().element_type();
    if (IsConstantLike(*a) && !IsConstantLike(*b)) {  // R47
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, b);
      editor_.ReplaceOperand(instr, 1, a);
      instr->mutable_attrs()->comparison_direction = Mirror(dir);
      return;
    }
    if (a == b && IsIntOrPred(t)) {  // R45, R46
      bool result = dir == ComparisonDirection::kEq || dir == ComparisonDirection::kGe ||
                    dir == ComparisonDirection::kLe;
      if (!Fuel()) return;
      Done(instr, FilledBits(instr->shape(), result ? 1 : 0));
      return;
    }
    if (t == PrimitiveType::kPred) {  // R48
      if ((dir == ComparisonDirection::kEq && IsAllOnes(*b)) ||
          (dir == ComparisonDirection::kNe && IsZeroBits(*b))) {
        ReplaceWith(instr, a);
      }
    }
  }

  void HandlePower(Instruction* instr) {
    Instruction* a = instr->operand(0);
    Instruction* b = instr->operand(1);
    PrimitiveType t = instr->shape().element_type();
    if (IsComplex(t)) return;
    if (IsValue(*b, 1)) {  // R60
      ReplaceWith(instr, a);
    } else if (IsValue(*b, 2)) {  // R61
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kMultiply, instr->shape(), a, a));
    } else if (IsValue(*b, 0)) {  // R62
      if (!Fuel()) return;
      Done(instr, FilledValue(instr->shape(), 1));
    } else if (IsRealFloat(t) && IsValue(*b, -1)) {  // R63
      if (!Fuel()) return;
      Done(instr, Binary(Opcode::kDivide, instr->shape(), FilledValue(instr->shape(), 1), a));
    }
  }

  // R87: shape operations of a broadcast scalar stay a broadcast scalar.
  bool ShapeOpOfScalarBroadcast(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->opcode() != Opcode::kBroadcast || a->operand_count() != 1 ||
        !a->operand(0)->shape().IsScalar() || !instr->shape().IsArray() ||
        instr->shape().element_type() != a->shape().element_type()) {
      return false;
    }
    if (!Fuel()) return true;
    Done(instr, BroadcastScalar(instr->shape(), a->operand(0)));
    return true;
  }

  void HandleReshape(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (ShapesCompatible(a->shape(), instr->shape())) {  // R65
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kReshape) {  // R66
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, a->operand(0));
      return;
    }
    ShapeOpOfScalarBroadcast(instr);
  }

  void HandleTranspose(Instruction* instr) {
    Instruction* a = instr->operand(0);
    const std::vector<int64_t>& perm = instr->dimensions();
    if (IsIdentityPermutation(perm)) {  // R67
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kTranspose &&
        a->dimensions().size() == perm.size()) {  // R68
      std::vector<int64_t> composed(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) composed[i] = a->dimensions()[perm[i]];
      Instruction* x = a->operand(0);
      if (IsIdentityPermutation(composed)) {
        ReplaceWith(instr, x);
        return;
      }
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, x);
      *instr->mutable_dimensions() = composed;
      return;
    }
    ShapeOpOfScalarBroadcast(instr);
  }

  void HandleBroadcast(Instruction* instr) {
    Instruction* a = instr->operand(0);
    const std::vector<int64_t>& dims = instr->dimensions();
    if (a->shape().SameDimensions(instr->shape()) && IsIdentityPermutation(dims) &&
        static_cast<int>(dims.size()) == a->shape().rank()) {  // R70
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kBroadcast && a->operand_count() == 1) {  // R69
      std::vector<int64_t> composed;
      for (int64_t d : a->dimensions()) {
        if (d < 0 || d >= static_cast<int64_t>(dims.size())) return;
        composed.push_back(dims[d]);
      }
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, a->operand(0));
      *instr->mutable_dimensions() = composed;
    }
  }

  void HandleSlice(Instruction* instr) {
    Instruction* a = instr->operand(0);
    const std::vector<SliceDimension>& sl = instr->attrs_or_default().slice;
    if (static_cast<int>(sl.size()) != a->shape().rank()) return;
    bool full = true;
    for (int d = 0; d < a->shape().rank(); ++d) {
      if (sl[d].start != 0 || sl[d].limit != a->shape().dimension(d) || sl[d].stride != 1) {
        full = false;
      }
    }
    if (full) {  // R71
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kSlice &&
        a->attrs_or_default().slice.size() == sl.size()) {  // R72
      const std::vector<SliceDimension>& inner = a->attrs_or_default().slice;
      std::vector<SliceDimension> composed(sl.size());
      for (size_t d = 0; d < sl.size(); ++d) {
        int64_t n = instr->shape().dimension(static_cast<int>(d));
        SliceDimension& c = composed[d];
        if (n == 0) {
          c = {0, 0, 1};
          continue;
        }
        c.start = inner[d].start + sl[d].start * inner[d].stride;
        c.stride = inner[d].stride * sl[d].stride;
        c.limit = c.start + (n - 1) * c.stride + 1;
      }
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, a->operand(0));
      instr->mutable_attrs()->slice = composed;
      return;
    }
    if (a->opcode() == Opcode::kConcatenate && a->dimensions().size() == 1) {  // R73
      int64_t cd = a->dimensions()[0];
      if (cd < 0 || cd >= static_cast<int64_t>(sl.size())) return;
      int64_t n = instr->shape().dimension(static_cast<int>(cd));
      if (n <= 0) return;
      int64_t first = sl[cd].start;
      int64_t last = sl[cd].start + (n - 1) * sl[cd].stride;
      int64_t offset = 0;
      for (Instruction* op : a->operands()) {
        int64_t size = op->shape().dimension(static_cast<int>(cd));
        if (first >= offset && last < offset + size) {
          std::vector<SliceDimension> adjusted = sl;
          adjusted[cd].start = first - offset;
          adjusted[cd].limit = last - offset + 1;
          if (!Fuel()) return;
          editor_.ReplaceOperand(instr, 0, op);
          instr->mutable_attrs()->slice = adjusted;
          return;
        }
        offset += size;
      }
      return;
    }
    ShapeOpOfScalarBroadcast(instr);
  }

  void HandleConcatenate(Instruction* instr) {
    if (instr->operand_count() == 1) {  // R74
      ReplaceWith(instr, instr->operand(0));
      return;
    }
    if (instr->shape().ElementCount() <= 0) return;
    std::vector<Instruction*> kept;
    for (Instruction* op : instr->operands()) {
      if (op->shape().ElementCount() != 0) kept.push_back(op);
    }
    if (kept.size() == static_cast<size_t>(instr->operand_count()) || kept.empty()) return;
    if (kept.size() == 1) {  // R75
      ReplaceWith(instr, kept[0]);
      return;
    }
    if (!Fuel()) return;
    Done(instr, editor_.AddLike(*instr, instr->shape(), kept));
  }

  void HandlePad(Instruction* instr) {
    const std::optional<PaddingConfig>& pc = instr->attrs_or_default().padding;
    if (!pc) return;
    for (const PaddingDimension& d : *pc) {
      if (d.low != 0 || d.high != 0 || d.interior != 0) return;
    }
    ReplaceWith(instr, instr->operand(0));  // R76
  }

  void HandleReverse(Instruction* instr) {
    Instruction* a = instr->operand(0);
    bool trivial = true;
    for (int64_t d : instr->dimensions()) {
      if (d < 0 || d >= a->shape().rank()) return;
      if (a->shape().dimension(static_cast<int>(d)) > 1) trivial = false;
    }
    if (trivial) {  // R77
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kReverse) {  // R78
      std::vector<int64_t> d1 = instr->dimensions(), d2 = a->dimensions();
      std::sort(d1.begin(), d1.end());
      std::sort(d2.begin(), d2.end());
      if (d1 == d2) {
        ReplaceWith(instr, a->operand(0));
        return;
      }
    }
    ShapeOpOfScalarBroadcast(instr);
  }

  void HandleCopy(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->shape() == instr->shape()) {  // R80
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kCopy) {  // R79
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, a->operand(0));
    }
  }

  void HandleBitcast(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->shape() == instr->shape()) {  // R82
      ReplaceWith(instr, a);
      return;
    }
    if (a->opcode() == Opcode::kBitcast) {  // R81
      if (!Fuel()) return;
      editor_.ReplaceOperand(instr, 0, a->operand(0));
    }
  }

  void HandleDynamicSlice(Instruction* instr) {
    Instruction* x = instr->operand(0);
    const Shape& xs = x->shape();
    if (!xs.IsArray() || instr->operand_count() != 1 + xs.rank()) return;
    if (instr->shape().SameDimensions(xs)) {  // R99
      ReplaceWith(instr, x);
      return;
    }
    if (options_.is_layout_sensitive) return;
    std::vector<SliceDimension> sl(xs.rank());
    for (int d = 0; d < xs.rank(); ++d) {
      const Instruction* idx = instr->operand(1 + d);
      if (idx->opcode() != Opcode::kConstant || !idx->shape().IsScalar()) return;
      std::optional<int64_t> v;
      if (IsUnsignedIntegral(idx->shape().element_type())) {
        std::optional<uint64_t> bits = UniformBits(*idx);
        if (!bits) return;
        v = static_cast<int64_t>(std::min<uint64_t>(*bits, uint64_t{1} << 62));
      } else {
        v = UniformInt(*idx);
      }
      if (!v) return;
      int64_t size = instr->shape().dimension(d);
      int64_t start = std::clamp<int64_t>(*v, 0, xs.dimension(d) - size);
      sl[d] = {start, start + size, 1};
    }
    if (!Fuel()) return;  // R83
    Instruction* s = editor_.Add(Opcode::kSlice, instr->shape(), {x});
    s->mutable_attrs()->slice = sl;
    Done(instr, s);
  }

  void HandleDynamicUpdateSlice(Instruction* instr) {
    Instruction* x = instr->operand(0);
    Instruction* u = instr->operand(1);
    if (u->shape().SameDimensions(x->shape())) ReplaceWith(instr, u);  // R84
  }

  void HandleGetTupleElement(Instruction* instr) {
    Instruction* a = instr->operand(0);
    if (a->opcode() != Opcode::kTuple) return;
    int64_t i = instr->tuple_index();
    if (i < 0 || i >= a->operand_count()) return;
    ReplaceWith(instr, a->operand(static_cast<int>(i)));  // R85
  }

  void HandleTuple(Instruction* instr) {
    if (instr->operand_count() == 0) return;
    Instruction* source = nullptr;
    for (int i = 0; i < instr->operand_count(); ++i) {
      const Instruction* g = instr->operand(i);
      if (g->opcode() != Opcode::kGetTupleElement || g->tuple_index() != i) return;
      if (source && g->operand(0) != source) return;
      source = g->operand(0);
    }
    if (!source->shape().IsTuple() || source->shape().tuple_count() != instr->operand_count()) {
      return;
    }
    ReplaceWith(instr, source);  // R86
  }

  void HandleConvert(Instruction* instr) {
    Instruction* a = instr->operand(0);
    PrimitiveType to = instr->shape().element_type();
    if (a->shape().element_type() == to) {  // R89
      ReplaceWith(instr, a);
      return;
    }
    if (instr->opcode() == Opcode::kConvert && a->opcode() == Opcode::kConvert) {  // R90
      Instruction* x = a->operand(0);
      if (x->shape().element_type() == to &&
          ConvertIsExact(to, a->shape().element_type())) {
        ReplaceWith(instr, x);
        return;
      }
    }
    if (instr->opcode() == Opcode::kConvert) HandleUnary(instr);
  }

  void HandleReducePrecision(Instruction* instr) {
    PrimitiveType t = instr->shape().element_type();
    const InstructionAttrs& at = instr->attrs_or_default();
    int digits = FloatDigits(t);
    if (digits == 0) return;
    if (at.exponent_bits >= FloatExponentBits(t) && at.mantissa_bits >= digits - 1) {
      ReplaceWith(instr, instr->operand(0));  // R59
    }
  }

  void HandleReduce(Instruction* instr) {
    if (instr->operand_count() != 2 || instr->called_computations().size() != 1 ||
        !instr->shape().IsArray()) {
      return;
    }
    Instruction* x = instr->operand(0);
    Instruction* init = instr->operand(1);
    if (!x->shape().IsArray() || !init->shape().IsScalar()) return;
    if (x->shape().ElementCount() == 0) {  // R94
      if (!Fuel()) return;
      Done(instr, BroadcastScalar(instr->shape(), init));
      return;
    }
    std::optional<Opcode> op = ReducerOp(instr->called_computations()[0]);
    if (!op) return;
    const std::vector<int64_t>& dims = instr->dimensions();
    if (dims.empty()) {  // R91
      if (!Fuel()) return;
      Done(instr, Binary(*op, instr->shape(), x, BroadcastScalar(instr->shape(), init)));
      return;
    }
    bool all_unit = true;
    for (int64_t d : dims) {
      if (d < 0 || d >= x->shape().rank()) return;
      if (x->shape().dimension(static_cast<int>(d)) != 1) all_unit = false;
    }
    if (all_unit && !options_.is_layout_sensitive) {  // R92
      if (!Fuel()) return;
      Instruction* r = editor_.Add(Opcode::kReshape, instr->shape(), {x});
      Done(instr, Binary(*op, instr->shape(), r, BroadcastScalar(instr->shape(), init)));
      return;
    }
    bool idempotent = *op == Opcode::kMaximum || *op == Opcode::kMinimum ||
                      *op == Opcode::kAnd || *op == Opcode::kOr;
    if (idempotent && x->opcode() == Opcode::kBroadcast && x->operand_count() == 1) {  // R93
      Instruction* y = x->operand(0);
      const std::vector<int64_t>& bdims = x->dimensions();
      std::vector<int64_t> kept;
      for (int d = 0; d < x->shape().rank(); ++d) {
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(d);
      }
      if (kept != bdims || !ShapesCompatible(y->shape(), instr->shape())) return;
      if (!Fuel()) return;
      Done(instr, Binary(*op, instr->shape(), y, BroadcastScalar(instr->shape(), init)));
    }
  }

  void HandleDot(Instruction* instr) {
    if (instr->operand_count() != 2 || !instr->attrs_or_default().dot_dimension_numbers) return;
    const DotDimensionNumbers& dn = *instr->attrs_or_default().dot_dimension_numbers;
    if (!dn.lhs_batch_dimensions.empty() || !dn.rhs_batch_dimensions.empty() ||
        !dn.lhs_ragged_dimensions.empty() || !dn.rhs_group_dimensions.empty() ||
        dn.lhs_contracting_dimensions.size() != dn.rhs_contracting_dimensions.size() ||
        !instr->attrs_or_default().sparsity.empty()) {
      return;
    }
    Instruction* lhs = instr->operand(0);
    Instruction* rhs = instr->operand(1);
    const Shape& ls = lhs->shape();
    const Shape& rs = rhs->shape();
    int64_t contracted = 1;
    for (int64_t d : dn.lhs_contracting_dimensions) {
      if (d < 0 || d >= ls.rank()) return;
      contracted *= ls.dimension(static_cast<int>(d));
    }
    for (int64_t d : dn.rhs_contracting_dimensions) {
      if (d < 0 || d >= rs.rank()) return;
    }
    if (contracted == 0) {  // R95
      if (instr->shape().ElementCount() <= 0) return;
      if (!Fuel()) return;
      Done(instr, FilledValue(instr->shape(), 0));
      return;
    }
    PrimitiveType t = instr->shape().element_type();
    if (contracted != 1 || !options_.enable_dot_strength_reduction ||
        options_.is_layout_sensitive || ls.element_type() != t || rs.element_type() != t ||
        !instr->attrs_or_default().precision_config.algorithm.empty()) {
      return;
    }
    // R96: no summation left; every result element is one product.
    auto free_dims = [](const Shape& s, const std::vector<int64_t>& contracting) {
      std::vector<int64_t> out;
      for (int d = 0; d < s.rank(); ++d) {
        if (std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
          out.push_back(s.dimension(d));
        }
      }
      return out;
    };
    std::vector<int64_t> lf = free_dims(ls, dn.lhs_contracting_dimensions);
    std::vector<int64_t> rf = free_dims(rs, dn.rhs_contracting_dimensions);
    std::vector<int64_t> all = lf;
    all.insert(all.end(), rf.begin(), rf.end());
    if (all != instr->shape().dimensions()) return;
    if (!Fuel()) return;
    auto squeeze_and_broadcast = [&](Instruction* x, const std::vector<int64_t>& free,
                                     int64_t first_dim) {
      Instruction* y = x;
      if (static_cast<int64_t>(free.size()) != x->shape().rank()) {
        y = editor_.Add(Opcode::kReshape, Conform(Shape::Array(t, free), instr->shape()), {x});
      }
      if (y->shape().SameDimensions(instr->shape())) return y;
      std::vector<int64_t> dims;
      for (size_t i = 0; i < free.size(); ++i) dims.push_back(first_dim + i);
      return Broadcast(instr->shape(), y, dims);
    };
    Instruction* l = squeeze_and_broadcast(lhs, lf, 0);
    Instruction* r = squeeze_and_broadcast(rhs, rf, static_cast<int64_t>(lf.size()));
    Done(instr, Binary(Opcode::kMultiply, instr->shape(), l, r));
  }

  void HandleIota(Instruction* instr) {
    const Shape& s = instr->shape();
    int64_t d = instr->iota_dimension();
    if (!s.IsArray() || d < 0 || d >= s.rank() || s.dimension(static_cast<int>(d)) != 1) return;
    if (!Fuel()) return;  // R97
    Done(instr, FilledValue(s, 0));
  }

  void HandleSort(Instruction* instr) {
    if (instr->operand_count() == 0 || instr->dimensions().size() != 1) return;
    const Shape& s0 = instr->operand(0)->shape();
    int64_t d = instr->dimensions()[0];
    if (d < 0 || d >= s0.rank() || s0.dimension(static_cast<int>(d)) > 1) return;
    if (instr->operand_count() == 1) {  // R98
      ReplaceWith(instr, instr->operand(0));
      return;
    }
    if (!instr->shape().IsTuple()) return;
    if (!Fuel()) return;
    Done(instr, editor_.Add(Opcode::kTuple, instr->shape(), instr->operands()));
  }

  void HandleUnary(Instruction* instr) {
    Opcode op = instr->opcode();
    OpcodeCategory cat = OpcodeCategoryOf(op);
    bool unary = (cat == OpcodeCategory::kUnary || cat == OpcodeCategory::kUnaryAccuracy ||
                  op == Opcode::kConvert) &&
                 op != Opcode::kCopy && instr->operand_count() == 1;
    if (!unary) return;
    Instruction* a = instr->operand(0);
    PrimitiveType t = instr->shape().element_type();
    switch (op) {
      case Opcode::kAbs:
        if (a->opcode() == Opcode::kAbs) {  // R52
          ReplaceWith(instr, a);
          return;
        }
        if (a->opcode() == Opcode::kNegate) {  // R53
          if (!Fuel()) return;
          editor_.ReplaceOperand(instr, 0, a->operand(0));
          return;
        }
        if (IsUnsignedIntegral(t)) {  // R54
          ReplaceWith(instr, a);
          return;
        }
        break;
      case Opcode::kSign:
        if (a->opcode() == Opcode::kSign) {  // R56
          ReplaceWith(instr, a);
          return;
        }
        break;
      case Opcode::kReal:
      case Opcode::kImag:
        if (a->opcode() == Opcode::kComplex) {  // R57, R58
          ReplaceWith(instr, a->operand(op == Opcode::kReal ? 0 : 1));
          return;
        }
        break;
      default:
        if (IsRoundingOp(op) && IsRoundingOp(a->opcode())) {  // R55
          ReplaceWith(instr, a);
          return;
        }
        break;
    }
    // R88: op(broadcast(scalar)) => broadcast(op(scalar)).
    if (a->opcode() == Opcode::kBroadcast && a->operand_count() == 1 &&
        a->operand(0)->shape().IsScalar() && instr->shape().IsArray() &&
        !instr->shape().IsScalar()) {
      if (!Fuel()) return;
      Shape scalar = Conform(Shape::Array(t, {}), instr->shape());
      Instruction* s = editor_.AddLike(*instr, scalar, {a->operand(0)});
      Done(instr, Broadcast(instr->shape(), s, {}));
    }
  }

  const AlgebraicSimplifierOptions& options_;
  PassContext& context_;
  std::string_view pass_name_;
  ComputationEditor editor_;
  bool changed_ = false;
  bool out_of_fuel_ = false;
};

}  // namespace

absl::StatusOr<bool> AlgebraicSimplifier::Run(Module* module, PassContext& context) {
  if (module == nullptr) return absl::InvalidArgumentError("algsimp: no module");
  NameUniquer names(*module);
  bool changed = false;
  std::vector<Computation*> comps;
  for (const auto& c : module->computations()) comps.push_back(c.get());
  for (Computation* comp : comps) {
    if (comp->root() == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("algsimp: computation ", comp->name(), " has no root instruction"));
    }
    for (const Instruction* i : comp->instructions()) {
      for (const Instruction* op : i->operands()) {
        if (op == nullptr) {
          return absl::InvalidArgumentError(
              StrCat("algsimp: instruction ", i->name(), " has an unresolved operand"));
        }
      }
    }
  }
  for (Computation* comp : comps) {
    for (int sweep = 0; sweep < std::max(1, options_.max_sweeps); ++sweep) {
      if (context.cancelled()) return absl::CancelledError("algsimp: cancelled");
      bool out_of_fuel = false;
      Sweeper sweeper(options_, context, name(), comp, &names);
      bool swept = sweeper.Run(&out_of_fuel);
      changed |= swept;
      if (out_of_fuel) return changed;
      if (!swept) break;
    }
  }
  return changed;
}

}  // namespace hlowb
