// XLA's edge-case semantics as this evaluator implements them: one table, in one place. Each row
// names the behaviour, the rule, and the constant or function below that encodes it; the
// evaluator tests (tests/unit/evaluator/edge_cases_test.cc) check every row.
//
// | Case                                  | Rule (what XLA's interpreter and CPU backend do)    |
// |---------------------------------------|-----------------------------------------------------|
// | integer x / 0                         | -1 (all bits set; UINT_MAX for unsigned)            |
// | integer x % 0                         | x                                                   |
// | INT_MIN / -1                          | INT_MIN (no trap)                                   |
// | INT_MIN % -1                          | 0                                                   |
// | add/sub/mul/negate/abs overflow       | two's complement wrap (abs(INT_MIN) = INT_MIN)      |
// | shift by >= bit width (or negative,   | shift-left, shift-right-logical: 0;                 |
// |   read as unsigned)                   | shift-right-arithmetic: sign fill (0 or -1)         |
// | maximum/minimum with NaN              | NaN propagates: if lhs is NaN → lhs, else if rhs is |
// |                                       | NaN → rhs, else std::max/std::min (ties return lhs, |
// |                                       | so max(-0, +0) = -0)                                |
// | float → int convert                   | truncate toward zero, saturate to [MIN, MAX],       |
// |                                       | NaN → 0; float → unsigned: negatives → 0            |
// | x → pred convert                      | x != 0 (NaN → true); pred → x: 0 or 1               |
// | complex → real convert                | real part; real → complex: imaginary part 0         |
// | int → int convert                     | two's complement truncation / sign extension        |
// | → f16/bf16/f8/f4 rounding             | round to nearest even from the exact value; above   |
// |                                       | max finite: ±inf where the type has inf, else the   |
// |                                       | type's NaN (f8e4m3fn, fnuz, e8m0), f4e2m1fn ±6      |
// |                                       | (core/ir/float_types.h DoubleToFloatBits)           |
// | narrow-float arithmetic               | computed exactly in f64, rounded once to the type;  |
// |                                       | reductions round after every step (as the type's    |
// |                                       | own arithmetic would); dot/conv accumulate in f64   |
// |                                       | and round once                                      |
// | compare, default/FLOAT type           | IEEE: NaN unordered (only NE is true)               |
// | compare, TOTALORDER                   | -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN by   |
// |                                       | sign-magnitude bits (TotalOrderKey)                 |
// | compare SIGNED/UNSIGNED on ints       | reinterpret the bits with that signedness           |
// | gather / dynamic-slice start indices  | clamped per dimension to [0, dim - slice_size]      |
// | dynamic-update-slice start indices    | clamped to [0, dim - update_size]                   |
// | scatter index out of bounds           | the whole update window for that index is skipped   |
// | scatter duplicate indices             | applied in row-major order of the update scatter    |
// |                                       | dims: acc = to_apply(acc, update), deterministic    |
// | sort                                  | stable (std::stable_sort) whatever is_stable says,  |
// |                                       | so results are deterministic                        |
// | rng (uniform/normal)                  | implementation-defined in XLA; here a splitmix64    |
// |                                       | stream from EvaluatorOptions::seed                  |
// | rng-bit-generator                     | NOT YET: returns Unimplemented. To do: three-fry   |
// |                                       | and philox bit-exact with XLA's lib/prng.cc, with  |
// |                                       | default = philox (XLA's CPU/GPU choice)             |
// | integer power                         | exponent < 0: 1 if base is 1, ±1 if base is -1,     |
// |                                       | else 0; 0^0 = 1; wraps on overflow                  |
// | reduce-precision                      | XLA's bit recipe on the source type's bits (RNE     |
// |                                       | mantissa, overflow → ±inf, exponent underflow → ±0, |
// |                                       | NaN kept); narrow f8/f4 inputs go through f64       |
// | round-nearest-even / -afz             | ties to even / ties away from zero                  |
// | sign                                  | -1, 0, +1; sign(±0) = ±0, sign(NaN) = NaN;          |
// |                                       | complex: x/|x| (0 for 0)                            |
#ifndef HLOWB_REPLAY_EVALUATOR_SEMANTICS_H_
#define HLOWB_REPLAY_EVALUATOR_SEMANTICS_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace hlowb::eval {

// Two's complement wrapping arithmetic for integers (plain arithmetic otherwise).
template <typename T>
T WrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename T>
T WrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <typename T>
T WrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
  } else {
    return a * b;
  }
}

// Integer x / 0: all bits set.
inline constexpr int64_t kIntDivByZeroResult = -1;

template <typename T>
T IntDivide(T a, T b) {
  if (b == 0) return static_cast<T>(kIntDivByZeroResult);
  if constexpr (std::is_signed_v<T>) {
    if (b == -1 && a == std::numeric_limits<T>::min()) return a;
  }
  return static_cast<T>(a / b);
}

template <typename T>
T IntRemainder(T a, T b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;
  }
  return static_cast<T>(a % b);
}

// `bits` is the logical width (4 for s4 even though it is stored in a byte).
template <typename T>
T ShiftLeft(T a, T b, int bits) {
  using U = std::make_unsigned_t<T>;
  U n = static_cast<U>(b);
  if (n >= static_cast<U>(bits)) return 0;
  return static_cast<T>(static_cast<U>(a) << n);
}
template <typename T>
T ShiftRightLogical(T a, T b, int bits) {
  using U = std::make_unsigned_t<T>;
  U n = static_cast<U>(b);
  if (n >= static_cast<U>(bits)) return 0;
  U ua = static_cast<U>(a);
  if (bits < static_cast<int>(sizeof(T) * 8)) ua &= (U{1} << bits) - 1;  // sub-byte: logical bits
  return static_cast<T>(ua >> n);
}
template <typename T>
T ShiftRightArithmetic(T a, T b, int bits) {
  using U = std::make_unsigned_t<T>;
  using S = std::make_signed_t<T>;
  U n = static_cast<U>(b);
  S sa = static_cast<S>(a);  // sub-byte signed values are stored sign-extended already
  if constexpr (std::is_unsigned_v<T>) {
    if (bits < static_cast<int>(sizeof(T) * 8) && ((a >> (bits - 1)) & 1)) {
      sa = static_cast<S>(a | static_cast<T>(~((U{1} << bits) - 1)));
    }
  }
  if (n >= static_cast<U>(bits)) return static_cast<T>(sa < 0 ? -1 : 0);
  return static_cast<T>(sa >> n);
}

template <typename T>
T NanPropagatingMax(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return (a < b) ? b : a;
}
template <typename T>
T NanPropagatingMin(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
  }
  return (b < a) ? b : a;
}

// Saturating float → integer conversion; NaN → 0.
template <typename I, typename F>
I SaturatingFloatToInt(F f) {
  if (std::isnan(f)) return 0;
  if (f <= static_cast<F>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  // max() may round up when converted to F (e.g. INT32_MAX → 2^31 in float): compare with >=.
  if (f >= static_cast<F>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(f);
}

// Key whose signed integer order is XLA's total order on floats.
inline int64_t TotalOrderKey(double v) {
  int64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? bits ^ std::numeric_limits<int64_t>::max() : bits;
}
inline int32_t TotalOrderKey(float v) {
  int32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits < 0 ? bits ^ std::numeric_limits<int32_t>::max() : bits;
}

template <typename T>
T IntPower(T base, T exp) {
  if constexpr (std::is_signed_v<T>) {
    if (exp < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exp & 1) ? -1 : 1;
      return 0;
    }
  }
  using U = std::make_unsigned_t<T>;
  U result = 1, b = static_cast<U>(base);
  U e = static_cast<U>(exp);
  while (e) {
    if (e & 1) result = static_cast<U>(result * b);
    b = static_cast<U>(b * b);
    e >>= 1;
  }
  return static_cast<T>(result);
}

// Round half to even, for any finite double.
inline double RoundHalfEven(double x) {
  double r = std::round(x);  // half away from zero
  if (std::fabs(x - std::trunc(x)) == 0.5) r = 2.0 * std::round(x / 2.0);
  return r;
}

}  // namespace hlowb::eval

#endif  // HLOWB_REPLAY_EVALUATOR_SEMANTICS_H_
