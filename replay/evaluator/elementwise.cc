// Elementwise operations: unary, binary, compare, select, clamp, convert, bitcast-convert,
// reduce-precision, stochastic-convert, iota and map. Loops are typed per element type; the
// opcode switch sits outside the loop.
#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

#include "core/ir/float_types.h"
#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/semantics.h"

namespace hlowb::eval {
namespace {

Shape ArrayLike(PrimitiveType t, const Shape& dims_from) {
  return Shape::Array(t, dims_from.dimensions());
}

template <typename T>
T MulHi(T a, T b) {
  if constexpr (sizeof(T) == 8) {
    using W = std::conditional_t<std::is_signed_v<T>, __int128, unsigned __int128>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
    return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> (sizeof(T) * 8));
  }
}

// The result of an elementwise op, which writes every element: left unset when the element
// type O fills the storage exactly (no zeroing pass), zeroed otherwise.
template <typename O>
Literal ElementwiseResult(PrimitiveType out_type, const Shape& like) {
  Literal out = Literal::Uninitialized(ArrayLike(out_type, like));
  if (static_cast<size_t>(out.element_bytes()) != sizeof(O)) {
    std::fill(out.mutable_data()->begin(), out.mutable_data()->end(), uint8_t{0});
  }
  return out;
}

template <typename T, typename F>
Literal Map1(const Literal& x, PrimitiveType out_type, F f) {
  using O = decltype(f(T{}));
  Literal out = ElementwiseResult<O>(out_type, x.shape());
  const T* a = x.data_as<T>();
  O* o = out.mutable_data_as<O>();
  int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
  return out;
}

template <typename T, typename F>
Literal Map2(const Literal& x, const Literal& y, PrimitiveType out_type, F f) {
  using O = decltype(f(T{}, T{}));
  Literal out = ElementwiseResult<O>(out_type, x.shape());
  const T* __restrict a = x.data_as<T>();
  const T* __restrict b = y.data_as<T>();
  O* __restrict o = out.mutable_data_as<O>();
  int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
  return out;
}

template <typename T>
absl::StatusOr<Literal> UnaryTyped(Opcode op, const Literal& x, PrimitiveType t,
                                   const Instruction* instr) {
  auto bad = [&]() -> absl::Status {
    std::string what = StrCat(OpcodeName(op), " on ", PrimitiveTypeName(t));
    return instr ? Unimplemented(*instr, what) : absl::UnimplementedError(what);
  };
  const int bits = BitWidth(t);
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kNot: return Map1<T>(x, t, [](bool v) { return !v; });
      case Opcode::kCopy:
      case Opcode::kAbs: return Map1<T>(x, t, [](bool v) { return v; });
      default: return bad();
    }
  } else if constexpr (kIsInt<T>) {
    switch (op) {
      case Opcode::kCopy: return Map1<T>(x, t, [](T v) { return v; });
      case Opcode::kNegate: return Map1<T>(x, t, [](T v) { return WrapSub<T>(0, v); });
      case Opcode::kAbs:
        return Map1<T>(x, t, [](T v) {
          if constexpr (std::is_signed_v<T>) return v < 0 ? WrapSub<T>(0, v) : v;
          return v;
        });
      case Opcode::kSign:
        return Map1<T>(x, t, [](T v) -> T {
          if constexpr (std::is_signed_v<T>) return v < 0 ? T(-1) : (v > 0 ? T(1) : T(0));
          return v > 0 ? T(1) : T(0);
        });
      case Opcode::kNot: return Map1<T>(x, t, [](T v) { return static_cast<T>(~v); });
      case Opcode::kPopulationCount:
        return Map1<T>(x, t, [bits](T v) {
          using U = std::make_unsigned_t<T>;
          U u = static_cast<U>(v);
          if (bits < static_cast<int>(sizeof(T) * 8)) u &= static_cast<U>((U{1} << bits) - 1);
          return static_cast<T>(std::popcount(u));
        });
      case Opcode::kClz:
        return Map1<T>(x, t, [bits](T v) {
          using U = std::make_unsigned_t<T>;
          U u = static_cast<U>(v);
          int storage = sizeof(T) * 8;
          if (bits < storage) u &= static_cast<U>((U{1} << bits) - 1);
          return static_cast<T>(std::countl_zero(u) - (storage - bits));
        });
      default: return bad();
    }
  } else if constexpr (kIsFloat<T>) {
    switch (op) {
      case Opcode::kCopy: return Map1<T>(x, t, [](T v) { return v; });
      case Opcode::kNegate: return Map1<T>(x, t, [](T v) { return -v; });
      case Opcode::kAbs: return Map1<T>(x, t, [](T v) { return std::fabs(v); });
      case Opcode::kSign:
        return Map1<T>(x, t, [](T v) -> T {
          if (std::isnan(v) || v == 0) return v;
          return v < 0 ? T(-1) : T(1);
        });
      case Opcode::kFloor: return Map1<T>(x, t, [](T v) { return std::floor(v); });
      case Opcode::kCeil: return Map1<T>(x, t, [](T v) { return std::ceil(v); });
      case Opcode::kRoundNearestAfz: return Map1<T>(x, t, [](T v) { return std::round(v); });
      case Opcode::kRoundNearestEven:
        return Map1<T>(x, t, [](T v) {
          return std::isfinite(v) ? static_cast<T>(RoundHalfEven(v)) : v;
        });
      case Opcode::kExp: return Map1<T>(x, t, [](T v) { return std::exp(v); });
      case Opcode::kExpm1: return Map1<T>(x, t, [](T v) { return std::expm1(v); });
      case Opcode::kLog: return Map1<T>(x, t, [](T v) { return std::log(v); });
      case Opcode::kLog1p: return Map1<T>(x, t, [](T v) { return std::log1p(v); });
      case Opcode::kLogistic:
        return Map1<T>(x, t, [](T v) { return static_cast<T>(T(1) / (T(1) + std::exp(-v))); });
      case Opcode::kSqrt: return Map1<T>(x, t, [](T v) { return std::sqrt(v); });
      case Opcode::kRsqrt: return Map1<T>(x, t, [](T v) { return T(1) / std::sqrt(v); });
      case Opcode::kCbrt: return Map1<T>(x, t, [](T v) { return std::cbrt(v); });
      case Opcode::kSin: return Map1<T>(x, t, [](T v) { return std::sin(v); });
      case Opcode::kCos: return Map1<T>(x, t, [](T v) { return std::cos(v); });
      case Opcode::kTan: return Map1<T>(x, t, [](T v) { return std::tan(v); });
      case Opcode::kTanh: return Map1<T>(x, t, [](T v) { return std::tanh(v); });
      case Opcode::kSinh: return Map1<T>(x, t, [](T v) { return std::sinh(v); });
      case Opcode::kCosh: return Map1<T>(x, t, [](T v) { return std::cosh(v); });
      case Opcode::kAsin: return Map1<T>(x, t, [](T v) { return std::asin(v); });
      case Opcode::kAcos: return Map1<T>(x, t, [](T v) { return std::acos(v); });
      case Opcode::kAtan: return Map1<T>(x, t, [](T v) { return std::atan(v); });
      case Opcode::kAsinh: return Map1<T>(x, t, [](T v) { return std::asinh(v); });
      case Opcode::kAcosh: return Map1<T>(x, t, [](T v) { return std::acosh(v); });
      case Opcode::kAtanh: return Map1<T>(x, t, [](T v) { return std::atanh(v); });
      case Opcode::kErf: return Map1<T>(x, t, [](T v) { return std::erf(v); });
      case Opcode::kIsFinite:
        return Map1<T>(x, PrimitiveType::kPred, [](T v) { return bool(std::isfinite(v)); });
      default: return bad();
    }
  } else {  // complex
    using R = typename T::value_type;
    PrimitiveType rt = ComplexComponentType(t);
    switch (op) {
      case Opcode::kCopy: return Map1<T>(x, t, [](T v) { return v; });
      case Opcode::kNegate: return Map1<T>(x, t, [](T v) { return -v; });
      case Opcode::kAbs: return Map1<T>(x, rt, [](T v) { return std::abs(v); });
      case Opcode::kReal: return Map1<T>(x, rt, [](T v) { return v.real(); });
      case Opcode::kImag: return Map1<T>(x, rt, [](T v) { return v.imag(); });
      case Opcode::kSign:
        return Map1<T>(x, t, [](T v) { return v == T(0) ? v : v / std::abs(v); });
      case Opcode::kExp: return Map1<T>(x, t, [](T v) { return std::exp(v); });
      case Opcode::kExpm1: return Map1<T>(x, t, [](T v) { return std::exp(v) - T(1); });
      case Opcode::kLog: return Map1<T>(x, t, [](T v) { return std::log(v); });
      case Opcode::kLog1p: return Map1<T>(x, t, [](T v) { return std::log(v + T(1)); });
      case Opcode::kLogistic:
        return Map1<T>(x, t, [](T v) { return T(1) / (T(1) + std::exp(-v)); });
      case Opcode::kSqrt: return Map1<T>(x, t, [](T v) { return std::sqrt(v); });
      case Opcode::kRsqrt: return Map1<T>(x, t, [](T v) { return T(1) / std::sqrt(v); });
      case Opcode::kSin: return Map1<T>(x, t, [](T v) { return std::sin(v); });
      case Opcode::kCos: return Map1<T>(x, t, [](T v) { return std::cos(v); });
      case Opcode::kTan: return Map1<T>(x, t, [](T v) { return std::tan(v); });
      case Opcode::kTanh: return Map1<T>(x, t, [](T v) { return std::tanh(v); });
      case Opcode::kSinh: return Map1<T>(x, t, [](T v) { return std::sinh(v); });
      case Opcode::kCosh: return Map1<T>(x, t, [](T v) { return std::cosh(v); });
      case Opcode::kAsin: return Map1<T>(x, t, [](T v) { return std::asin(v); });
      case Opcode::kAcos: return Map1<T>(x, t, [](T v) { return std::acos(v); });
      case Opcode::kAtan: return Map1<T>(x, t, [](T v) { return std::atan(v); });
      case Opcode::kAsinh: return Map1<T>(x, t, [](T v) { return std::asinh(v); });
      case Opcode::kAcosh: return Map1<T>(x, t, [](T v) { return std::acosh(v); });
      case Opcode::kAtanh: return Map1<T>(x, t, [](T v) { return std::atanh(v); });
      case Opcode::kIsFinite:
        return Map1<T>(x, PrimitiveType::kPred, [](T v) {
          return bool(std::isfinite(v.real()) && std::isfinite(v.imag()));
        });
      default: (void)sizeof(R); return bad();
    }
  }
}

template <typename T>
absl::StatusOr<Literal> BinaryTyped(Opcode op, const Literal& x, const Literal& y,
                                    PrimitiveType t, const Instruction* instr) {
  auto bad = [&]() -> absl::Status {
    std::string what = StrCat(OpcodeName(op), " on ", PrimitiveTypeName(t));
    return instr ? Unimplemented(*instr, what) : absl::UnimplementedError(what);
  };
  const int bits = BitWidth(t);
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kAnd:
      case Opcode::kMultiply:
      case Opcode::kMinimum: return Map2<T>(x, y, t, [](bool a, bool b) { return a && b; });
      case Opcode::kOr:
      case Opcode::kAdd:
      case Opcode::kMaximum: return Map2<T>(x, y, t, [](bool a, bool b) { return a || b; });
      case Opcode::kXor:
      case Opcode::kSubtract: return Map2<T>(x, y, t, [](bool a, bool b) { return a != b; });
      default: return bad();
    }
  } else if constexpr (kIsInt<T>) {
    switch (op) {
      case Opcode::kAdd: return Map2<T>(x, y, t, WrapAdd<T>);
      case Opcode::kSubtract: return Map2<T>(x, y, t, WrapSub<T>);
      case Opcode::kMultiply: return Map2<T>(x, y, t, WrapMul<T>);
      case Opcode::kDivide: return Map2<T>(x, y, t, IntDivide<T>);
      case Opcode::kRemainder: return Map2<T>(x, y, t, IntRemainder<T>);
      case Opcode::kMaximum: return Map2<T>(x, y, t, NanPropagatingMax<T>);
      case Opcode::kMinimum: return Map2<T>(x, y, t, NanPropagatingMin<T>);
      case Opcode::kPower: return Map2<T>(x, y, t, IntPower<T>);
      case Opcode::kAnd: return Map2<T>(x, y, t, [](T a, T b) { return T(a & b); });
      case Opcode::kOr: return Map2<T>(x, y, t, [](T a, T b) { return T(a | b); });
      case Opcode::kXor: return Map2<T>(x, y, t, [](T a, T b) { return T(a ^ b); });
      case Opcode::kShiftLeft:
        return Map2<T>(x, y, t, [bits](T a, T b) { return ShiftLeft<T>(a, b, bits); });
      case Opcode::kShiftRightLogical:
        return Map2<T>(x, y, t, [bits](T a, T b) { return ShiftRightLogical<T>(a, b, bits); });
      case Opcode::kShiftRightArithmetic:
        return Map2<T>(x, y, t,
                       [bits](T a, T b) { return ShiftRightArithmetic<T>(a, b, bits); });
      case Opcode::kMulhi:
        if (bits < 8) return bad();
        return Map2<T>(x, y, t, MulHi<T>);
      default: return bad();
    }
  } else if constexpr (kIsFloat<T>) {
    switch (op) {
      case Opcode::kAdd: return Map2<T>(x, y, t, [](T a, T b) { return a + b; });
      case Opcode::kSubtract: return Map2<T>(x, y, t, [](T a, T b) { return a - b; });
      case Opcode::kMultiply: return Map2<T>(x, y, t, [](T a, T b) { return a * b; });
      case Opcode::kDivide: return Map2<T>(x, y, t, [](T a, T b) { return a / b; });
      case Opcode::kRemainder: return Map2<T>(x, y, t, [](T a, T b) { return std::fmod(a, b); });
      case Opcode::kMaximum: return Map2<T>(x, y, t, NanPropagatingMax<T>);
      case Opcode::kMinimum: return Map2<T>(x, y, t, NanPropagatingMin<T>);
      case Opcode::kPower: return Map2<T>(x, y, t, [](T a, T b) { return std::pow(a, b); });
      case Opcode::kAtan2: return Map2<T>(x, y, t, [](T a, T b) { return std::atan2(a, b); });
      case Opcode::kComplex: {
        PrimitiveType ct = t == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128;
        return Map2<T>(x, y, ct, [](T a, T b) { return std::complex<T>(a, b); });
      }
      default: return bad();
    }
  } else {
    switch (op) {
      case Opcode::kAdd: return Map2<T>(x, y, t, [](T a, T b) { return a + b; });
      case Opcode::kSubtract: return Map2<T>(x, y, t, [](T a, T b) { return a - b; });
      case Opcode::kMultiply: return Map2<T>(x, y, t, [](T a, T b) { return a * b; });
      case Opcode::kDivide: return Map2<T>(x, y, t, [](T a, T b) { return a / b; });
      case Opcode::kPower: return Map2<T>(x, y, t, [](T a, T b) { return std::pow(a, b); });
      default: return bad();
    }
  }
}

template <typename T, typename KeyFn>
Literal CompareLoop(const Literal& x, const Literal& y, ComparisonDirection d, KeyFn key) {
  Literal out(ArrayLike(PrimitiveType::kPred, x.shape()));
  const T* a = x.data_as<T>();
  const T* b = y.data_as<T>();
  bool* o = out.mutable_data_as<bool>();
  int64_t n = x.element_count();
  using K = decltype(key(a[0]));
  if constexpr (kIsComplex<K>) {
    for (int64_t i = 0; i < n; ++i) {
      bool eq = key(a[i]) == key(b[i]);
      o[i] = d == ComparisonDirection::kEq ? eq : !eq;
    }
  } else {
    switch (d) {
#define HLOWB_CMP_CASE(D, OP) \
  case ComparisonDirection::D: \
    for (int64_t i = 0; i < n; ++i) o[i] = key(a[i]) OP key(b[i]); \
    break;
      HLOWB_CMP_CASE(kEq, ==)
      HLOWB_CMP_CASE(kNe, !=)
      HLOWB_CMP_CASE(kGe, >=)
      HLOWB_CMP_CASE(kGt, >)
      HLOWB_CMP_CASE(kLe, <=)
      HLOWB_CMP_CASE(kLt, <)
#undef HLOWB_CMP_CASE
    }
  }
  return out;
}

// Narrow-float elementwise ops in blocks: each block of the operands is widened exactly to f64,
// computed there and rounded once back (or kept, for a pred result), so the f64 copies stay in
// cache instead of becoming full-size temporaries. The operands have the same element count;
// the result has the first operand's dimensions.
constexpr int64_t kNarrowBlock = 8192;

template <typename Compute>
absl::StatusOr<Literal> NarrowInBlocks(const std::vector<const Literal*>& operands,
                                       const Compute& compute) {
  const Literal& first = *operands[0];
  const PrimitiveType t = first.shape().element_type();
  const int64_t n = first.element_count();
  const size_t width = static_cast<size_t>(first.element_bytes());
  Literal out;
  size_t out_width = 0;
  std::vector<Literal> blocks(operands.size()), wide(operands.size());
  std::vector<const Literal*> wide_ptrs(operands.size());
  for (int64_t start = 0; start == 0 || start < n; start += kNarrowBlock) {
    const int64_t len = std::min(kNarrowBlock, n - start);
    for (size_t k = 0; k < operands.size(); ++k) {
      if (n <= kNarrowBlock) {
        wide[k] = WidenToF64(*operands[k]);
      } else {
        blocks[k] = Literal::Uninitialized(Shape::Array(t, {len}));
        std::memcpy(blocks[k].mutable_data()->data(),
                    operands[k]->data().data() + static_cast<size_t>(start) * width,
                    static_cast<size_t>(len) * width);
        wide[k] = WidenToF64(blocks[k]);
      }
      wide_ptrs[k] = &wide[k];
    }
    absl::StatusOr<Literal> r = compute(wide_ptrs);
    if (!r.ok()) return r.status();
    Literal piece = r->shape().element_type() == PrimitiveType::kF64 ? NarrowFromF64(*r, t)
                                                                     : std::move(*r);
    if (n <= kNarrowBlock) return piece;  // one block, with the operand's dimensions
    if (start == 0) {
      out = Literal::Uninitialized(
          Shape::Array(piece.shape().element_type(), first.shape().dimensions()));
      out_width = static_cast<size_t>(out.element_bytes());
    }
    std::memcpy(out.mutable_data()->data() + static_cast<size_t>(start) * out_width,
                piece.data().data(), static_cast<size_t>(len) * out_width);
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalUnary(const Instruction& instr, const Literal& x) {
  PrimitiveType t = x.shape().element_type();
  Opcode op = instr.opcode();
  if (IsNarrowFloat(t)) {
    return NarrowInBlocks({&x}, [&](const std::vector<const Literal*>& wide) {
      return UnaryTyped<double>(op, *wide[0], PrimitiveType::kF64, &instr);
    });
  }
  auto r = DispatchNative(t, [&](auto tag) -> absl::StatusOr<Literal> {
    using T = typename decltype(tag)::type;
    return UnaryTyped<T>(op, x, t, &instr);
  });
  if (r.ok() && IsSubByteInt(r->shape().element_type())) NormalizeSubByte(&*r);
  return r;
}

absl::StatusOr<Literal> ApplyBinaryOp(Opcode op, const Literal& a, const Literal& b,
                                      const Instruction* instr) {
  PrimitiveType t = a.shape().element_type();
  if (b.shape().element_type() != t || a.element_count() != b.element_count()) {
    std::string what = StrCat("operands of ", OpcodeName(op), " differ in type or size");
    return instr ? Invalid(*instr, what) : absl::InvalidArgumentError(what);
  }
  if (IsNarrowFloat(t)) {
    if (op == Opcode::kComplex) {
      return instr ? Unimplemented(*instr, "complex of narrow floats")
                   : absl::UnimplementedError("complex of narrow floats");
    }
    return NarrowInBlocks({&a, &b}, [&](const std::vector<const Literal*>& wide) {
      return BinaryTyped<double>(op, *wide[0], *wide[1], PrimitiveType::kF64, instr);
    });
  }
  auto r = DispatchNative(t, [&](auto tag) -> absl::StatusOr<Literal> {
    using T = typename decltype(tag)::type;
    return BinaryTyped<T>(op, a, b, t, instr);
  });
  if (r.ok() && IsSubByteInt(t)) NormalizeSubByte(&*r);
  return r;
}

absl::StatusOr<Literal> EvalBinary(const Instruction& instr, const Literal& a, const Literal& b) {
  return ApplyBinaryOp(instr.opcode(), a, b, &instr);
}

absl::StatusOr<Literal> EvalCompare(const Instruction& instr, const Literal& a, const Literal& b) {
  PrimitiveType t = a.shape().element_type();
  if (b.shape().element_type() != t || a.element_count() != b.element_count()) {
    return Invalid(instr, "compare operands differ in type or size");
  }
  const InstructionAttrs& at = instr.attrs_or_default();
  ComparisonDirection d = at.comparison_direction;
  ComparisonType ct = at.comparison_type;
  Literal holder_a, holder_b;
  const Literal* pa = WidenIfNarrow(&a, &holder_a);
  const Literal* pb = WidenIfNarrow(&b, &holder_b);
  PrimitiveType wt = pa->shape().element_type();
  if (wt == PrimitiveType::kF32 || wt == PrimitiveType::kF64) {
    if (ct == ComparisonType::kTotalOrder) {
      if (wt == PrimitiveType::kF32) {
        return CompareLoop<float>(*pa, *pb, d, [](float v) { return TotalOrderKey(v); });
      }
      return CompareLoop<double>(*pa, *pb, d, [](double v) { return TotalOrderKey(v); });
    }
    if (wt == PrimitiveType::kF32) return CompareLoop<float>(*pa, *pb, d, [](float v) { return v; });
    return CompareLoop<double>(*pa, *pb, d, [](double v) { return v; });
  }
  if (IsComplex(wt)) {
    if (d != ComparisonDirection::kEq && d != ComparisonDirection::kNe) {
      return Invalid(instr, "complex values compare only with EQ or NE");
    }
    if (wt == PrimitiveType::kC64) return CompareLoop<c64>(*pa, *pb, d, [](c64 v) { return v; });
    return CompareLoop<c128>(*pa, *pb, d, [](c128 v) { return v; });
  }
  return DispatchNative(wt, [&](auto tag) -> absl::StatusOr<Literal> {
    using T = typename decltype(tag)::type;
    if constexpr (kIsInt<T> || std::is_same_v<T, bool>) {
      if (ct == ComparisonType::kSigned && !std::is_same_v<T, bool>) {
        using S = std::make_signed_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
        return CompareLoop<T>(*pa, *pb, d, [](T v) { return static_cast<S>(v); });
      }
      if (ct == ComparisonType::kUnsigned && !std::is_same_v<T, bool>) {
        using U = std::make_unsigned_t<std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>>;
        int bits = BitWidth(t);
        U mask = bits >= static_cast<int>(sizeof(U) * 8) ? static_cast<U>(~U{0})
                                                         : static_cast<U>((U{1} << bits) - 1);
        return CompareLoop<T>(*pa, *pb, d, [mask](T v) { return static_cast<U>(v) & mask; });
      }
      return CompareLoop<T>(*pa, *pb, d, [](T v) { return v; });
    } else {
      return Unimplemented(instr, "compare on this type");
    }
  });
}

absl::StatusOr<Literal> EvalSelect(const Instruction& instr, const Operands& ops) {
  const Literal& pred = *ops[0];
  const Literal& on_true = *ops[1];
  const Literal& on_false = *ops[2];
  if (on_true.shape().IsTuple()) {
    // Legacy tuple select: a scalar predicate picks a whole tuple.
    return pred.data_as<bool>()[0] ? on_true : on_false;
  }
  if (on_true.element_count() != on_false.element_count() ||
      on_true.shape().element_type() != on_false.shape().element_type()) {
    return Invalid(instr, "select branches differ in type or size");
  }
  bool scalar_pred = pred.element_count() == 1 && pred.shape().rank() == 0;
  if (!scalar_pred && pred.element_count() != on_true.element_count()) {
    return Invalid(instr, "select predicate shape does not match its operands");
  }
  Literal out(ArrayLike(on_true.shape().element_type(), on_true.shape()));
  const bool* p = pred.data_as<bool>();
  int eb = on_true.element_bytes();
  int64_t n = on_true.element_count();
  auto select = [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = on_true.data_as<T>();
    const T* b = on_false.data_as<T>();
    T* o = out.mutable_data_as<T>();
    if (scalar_pred) {
      std::memcpy(o, p[0] ? a : b, n * sizeof(T));
    } else {
      for (int64_t i = 0; i < n; ++i) o[i] = p[i] ? a[i] : b[i];
    }
  };
  switch (eb) {
    case 1: select(Tag<uint8_t>{}); break;
    case 2: select(Tag<uint16_t>{}); break;
    case 4: select(Tag<uint32_t>{}); break;
    case 8: select(Tag<uint64_t>{}); break;
    case 16: select(Tag<c128>{}); break;
    default: return Invalid(instr, "unexpected element width");
  }
  return out;
}

absl::StatusOr<Literal> EvalClamp(const Instruction& instr, const Operands& ops) {
  // clamp(min, x, max) = min(max(x, min), max), with scalar bounds broadcast.
  const Literal& x = *ops[1];
  auto expand = [&](const Literal& bound) -> Literal {
    if (bound.element_count() == x.element_count() && bound.shape().rank() == x.shape().rank()) {
      return bound;
    }
    Literal out(x.shape());
    int eb = bound.element_bytes();
    for (int64_t i = 0; i < x.element_count(); ++i) {
      std::memcpy(out.mutable_data()->data() + i * eb, bound.data().data(), eb);
    }
    return out;
  };
  if ((ops[0]->element_count() != 1 && ops[0]->element_count() != x.element_count()) ||
      (ops[2]->element_count() != 1 && ops[2]->element_count() != x.element_count())) {
    return Invalid(instr, "clamp bounds must be scalars or match the operand's shape");
  }
  Literal lo = expand(*ops[0]), hi = expand(*ops[2]);
  Literal xs(Shape::Array(x.shape().element_type(), x.shape().dimensions()));
  *xs.mutable_data() = x.data();
  auto m = ApplyBinaryOp(Opcode::kMaximum, xs, lo, &instr);
  if (!m.ok()) return m.status();
  return ApplyBinaryOp(Opcode::kMinimum, *m, hi, &instr);
}

// ---------------------------------------------------------------------------------------------
// convert

namespace {

template <typename From, typename To>
To ConvertOne(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    if constexpr (kIsComplex<From>) return v.real() != 0 || v.imag() != 0;
    else return v != From(0);
  } else if constexpr (kIsComplex<To>) {
    using R = typename To::value_type;
    if constexpr (kIsComplex<From>) return To(static_cast<R>(v.real()), static_cast<R>(v.imag()));
    else return To(static_cast<R>(v), R(0));
  } else if constexpr (kIsComplex<From>) {
    return ConvertOne<typename From::value_type, To>(v.real());
  } else if constexpr (kIsInt<To> && kIsFloat<From>) {
    return SaturatingFloatToInt<To, From>(v);
  } else {
    return static_cast<To>(v);
  }
}

template <typename From, typename To>
void ConvertLoop(const Literal& x, Literal* out) {
  const From* a = x.data_as<From>();
  To* o = out->mutable_data_as<To>();
  int64_t n = x.element_count();
  for (int64_t i = 0; i < n; ++i) o[i] = ConvertOne<From, To>(a[i]);
}

}  // namespace

absl::StatusOr<Literal> EvalConvert(const Literal& x, PrimitiveType to) {
  PrimitiveType from = x.shape().element_type();
  if (!IsArrayType(to) || !x.shape().IsArray()) {
    return absl::InvalidArgumentError("convert needs array operands and result");
  }
  Literal holder;
  const Literal* src = &x;
  if (IsNarrowFloat(from)) {
    if (IsNarrowFloat(to)) {
      // Narrow → narrow goes through the exact double value.
      return NarrowFromF64(WidenToF64(x), to);
    }
    holder = WidenToF64(x);
    src = &holder;
    from = PrimitiveType::kF64;
  }
  if (IsNarrowFloat(to)) {
    // Any native type → double, then one rounding to the narrow type. s64/u64 beyond 2^53 round
    // twice here; every narrow type's range ends far below that, so only ties could differ.
    if (IsComplex(from)) {
      auto real = EvalConvert(*src, from == PrimitiveType::kC64 ? PrimitiveType::kF64
                                                                : PrimitiveType::kF64);
      if (!real.ok()) return real.status();
      return NarrowFromF64(*real, to);
    }
    auto wide = EvalConvert(*src, PrimitiveType::kF64);
    if (!wide.ok()) return wide.status();
    return NarrowFromF64(*wide, to);
  }
  Literal out(ArrayLike(to, x.shape()));
  absl::Status st = DispatchNative(from, [&](auto ftag) -> absl::Status {
    using F = typename decltype(ftag)::type;
    return DispatchNative(to, [&](auto ttag) -> absl::Status {
      using T = typename decltype(ttag)::type;
      ConvertLoop<F, T>(*src, &out);
      return absl::OkStatus();
    });
  });
  if (!st.ok()) return st;
  if (IsSubByteInt(to)) NormalizeSubByte(&out);
  return out;
}

absl::StatusOr<Literal> EvalBitcastConvert(const Instruction& instr, const Literal& x) {
  const Shape& rs = instr.shape();
  Literal out(Shape::Array(rs.element_type(), rs.dimensions()));
  int in_bits = BitWidth(x.shape().element_type());
  int out_bits = BitWidth(rs.element_type());
  if (static_cast<int64_t>(in_bits) * x.element_count() !=
      static_cast<int64_t>(out_bits) * out.element_count()) {
    return Invalid(instr, "bitcast-convert changes the total number of bits");
  }
  bool sub_byte = IsSubByteInt(x.shape().element_type()) || IsSubByteInt(rs.element_type()) ||
                  x.shape().element_type() == PrimitiveType::kPred ||
                  rs.element_type() == PrimitiveType::kPred || in_bits < 8 || out_bits < 8;
  if (!sub_byte) {
    *out.mutable_data() = x.data();
    return out;
  }
  // Bit stream, least significant bits of element 0 first.
  int64_t total = static_cast<int64_t>(in_bits) * x.element_count();
  std::vector<uint8_t> stream((total + 7) / 8, 0);
  for (int64_t i = 0; i < x.element_count(); ++i) {
    uint64_t v = x.GetBits(i);
    for (int b = 0; b < in_bits; ++b) {
      int64_t pos = i * in_bits + b;
      if ((v >> b) & 1) stream[pos / 8] |= uint8_t(1u << (pos % 8));
    }
  }
  for (int64_t i = 0; i < out.element_count(); ++i) {
    uint64_t v = 0;
    for (int b = 0; b < out_bits; ++b) {
      int64_t pos = i * out_bits + b;
      if ((stream[pos / 8] >> (pos % 8)) & 1) v |= uint64_t{1} << b;
    }
    out.SetBits(i, v);
  }
  return out;
}

// XLA's reduce-precision recipe on an IEEE-like type's own bits.
static uint64_t ReducePrecisionBits(uint64_t x, int nbits, int src_exp, int src_man, int exp_bits,
                                    int man_bits) {
  uint64_t all = nbits == 64 ? ~uint64_t{0} : ((uint64_t{1} << nbits) - 1);
  uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_man;
  uint64_t man_mask = (uint64_t{1} << src_man) - 1;
  bool is_nan = (x & exp_mask) == exp_mask && (x & man_mask) != 0;
  uint64_t orig = x;
  if (man_bits < src_man) {
    uint64_t last_bit_mask = uint64_t{1} << (src_man - man_bits);
    uint64_t base_bias = (last_bit_mask >> 1) - 1;
    uint64_t last_bit = (x & last_bit_mask) >> (src_man - man_bits);
    x = (x + last_bit + base_bias) & all;
    x &= ~(last_bit_mask - 1) & all;
  }
  if (exp_bits < src_exp) {
    uint64_t sign_mask = uint64_t{1} << (nbits - 1);
    int64_t bias = (int64_t{1} << (src_exp - 1)) - 1;
    int64_t reduced_bias = exp_bits > 0 ? (int64_t{1} << (exp_bits - 1)) - 1 : 0;
    uint64_t max_exp = static_cast<uint64_t>(bias + reduced_bias) << src_man;
    uint64_t min_exp = static_cast<uint64_t>(bias - reduced_bias) << src_man;
    uint64_t xe = x & exp_mask;
    if (xe > max_exp) {
      x = (x & sign_mask) | exp_mask;
    } else if (xe <= min_exp) {
      x = x & sign_mask;
    }
  }
  if (is_nan && man_bits > 0) return orig;
  if (is_nan) return (orig & (uint64_t{1} << (nbits - 1))) | exp_mask;  // NaN → inf-like: keep NaN
  return x;
}

absl::StatusOr<Literal> EvalReducePrecision(const Instruction& instr, const Literal& x) {
  PrimitiveType t = x.shape().element_type();
  int eb = instr.attrs_or_default().exponent_bits;
  int mb = instr.attrs_or_default().mantissa_bits;
  if (eb < 1 || mb < 0) return Invalid(instr, "reduce-precision needs exponent_bits >= 1");
  int nbits, se, sm;
  switch (t) {
    case PrimitiveType::kF16: nbits = 16; se = 5; sm = 10; break;
    case PrimitiveType::kBF16: nbits = 16; se = 8; sm = 7; break;
    case PrimitiveType::kF32: nbits = 32; se = 8; sm = 23; break;
    case PrimitiveType::kF64: nbits = 64; se = 11; sm = 52; break;
    default: {
      if (!IsFloatingPoint(t)) return Invalid(instr, "reduce-precision needs a float operand");
      Literal wide = WidenToF64(x);
      Literal out = wide;
      for (int64_t i = 0; i < wide.element_count(); ++i) {
        out.SetBits(i, ReducePrecisionBits(wide.GetBits(i), 64, 11, 52, eb, mb));
      }
      return NarrowFromF64(out, t);
    }
  }
  Literal out(Shape::Array(t, x.shape().dimensions()));
  for (int64_t i = 0; i < x.element_count(); ++i) {
    uint64_t r = ReducePrecisionBits(x.GetBits(i), nbits, se, sm, eb, mb);
    if (IsNaNBits(t, x.GetBits(i)) && mb == 0) r = x.GetBits(i);
    out.SetBits(i, r);
  }
  return out;
}

absl::StatusOr<Literal> EvalStochasticConvert(const Instruction& instr, const Operands& ops) {
  // XLA: round |x| down to an integer, then up by one when the random bits, read as a fraction
  // of 2^bits, are below the discarded fraction; saturating, NaN → 0; sign reapplied.
  const Literal& x = *ops[0];
  const Literal& r = *ops[1];
  PrimitiveType to = instr.shape().element_type();
  if (!IsIntegral(to)) return Unimplemented(instr, "stochastic-convert to a non-integer type");
  Literal wide_holder;
  const Literal* w = WidenIfNarrow(&x, &wide_holder);
  auto wd = EvalConvert(*w, PrimitiveType::kF64);
  if (!wd.ok()) return wd.status();
  int rbits = BitWidth(r.shape().element_type());
  Literal out(ArrayLike(to, x.shape()));
  double lo = IsSignedIntegral(to) ? -std::ldexp(1.0, BitWidth(to) - 1) : 0;
  double hi = IsSignedIntegral(to) ? std::ldexp(1.0, BitWidth(to) - 1) - 1
                                   : std::ldexp(1.0, BitWidth(to)) - 1;
  for (int64_t i = 0; i < x.element_count(); ++i) {
    double v = wd->data_as<double>()[i];
    int64_t result;
    if (std::isnan(v)) {
      result = 0;
    } else {
      double a = std::fabs(v);
      double fl = std::floor(a);
      double frac = a - fl;
      double rnd = static_cast<double>(r.GetBits(i)) / std::ldexp(1.0, rbits);
      if (rnd < frac) fl += 1;
      double s = v < 0 ? -fl : fl;
      s = std::min(std::max(s, lo), hi);
      result = static_cast<int64_t>(s);
    }
    out.SetBits(i, static_cast<uint64_t>(result));
  }
  return out;
}

absl::StatusOr<Literal> EvalIota(const Instruction& instr) {
  const Shape& s = instr.shape();
  int64_t dim = instr.iota_dimension();
  if (dim < 0 || dim >= s.rank()) return Invalid(instr, "iota_dimension out of range");
  auto lit = NewLiteral(Shape::Array(s.element_type(), s.dimensions()));
  if (!lit.ok()) return lit.status();
  std::vector<int64_t> strides = RowMajorStrides(s.dimensions());
  int64_t n = lit->element_count();
  int64_t size = s.dimension(dim);
  Literal values(Shape::Array(PrimitiveType::kS64, {size}));
  for (int64_t i = 0; i < size; ++i) values.mutable_data_as<int64_t>()[i] = i;
  auto conv = EvalConvert(values, s.element_type());
  if (!conv.ok()) return conv.status();
  for (int64_t i = 0; i < n; ++i) CopyElement(*conv, (i / strides[dim]) % size, &*lit, i);
  return lit;
}

absl::StatusOr<Literal> EvalMap(Evaluator& ev, const Instruction& instr, const Operands& ops) {
  if (instr.called_computations().empty()) return Invalid(instr, "map without to_apply");
  const Computation* c = instr.called_computations()[0];
  ScalarComputation sc = ScalarComputation::Analyze(c);
  if (sc.simple_binary && ops.size() == 2 &&
      ops[0]->shape().element_type() == instr.shape().element_type()) {
    auto r = ApplyBinaryOp(sc.op, *ops[0], *ops[1], &instr);
    if (r.ok()) return r;
  }
  Literal out(Shape::Array(instr.shape().element_type(), instr.shape().dimensions()));
  int64_t n = out.element_count();
  for (const Literal* op : ops) {
    if (op->element_count() != n) return Invalid(instr, "map operands differ in size");
  }
  std::vector<Literal> scalars(ops.size());
  Operands args(ops.size());
  for (int64_t i = 0; i < n; ++i) {
    for (size_t k = 0; k < ops.size(); ++k) {
      scalars[k] = ScalarFrom(*ops[k], i);
      args[k] = &scalars[k];
    }
    auto r = ev.CallScalar(*c, args);
    if (!r.ok()) return r.status();
    CopyElement(*r, 0, &out, i);
  }
  return out;
}

}  // namespace hlowb::eval
