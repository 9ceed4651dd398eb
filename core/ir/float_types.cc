#include "core/ir/float_types.h"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"

namespace hlowb {
namespace {

// Where a type keeps its NaN(s).
enum class NaNStyle {
  kNone,          // f4e2m1fn: no NaN at all.
  kIeee,          // Exponent all ones with a nonzero mantissa; inf has a zero mantissa.
  kAllOnes,       // f8e4m3fn: only S.1111.111 (exponent all ones is otherwise a normal binade).
  kNegativeZero,  // fnuz: only the "negative zero" pattern 1.0000.000.
  kE8M0,          // f8e8m0fnu: only 0xFF.
};

struct Format {
  int total_bits;
  int exponent_bits;
  int mantissa_bits;
  int bias;
  bool has_inf;
  NaNStyle nan;
  bool has_negative_zero;
};

std::optional<Format> GetFormat(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
      return Format{16, 5, 10, 15, true, NaNStyle::kIeee, true};
    case PrimitiveType::kBF16:
      return Format{16, 8, 7, 127, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF32:
      return Format{32, 8, 23, 127, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF64:
      return Format{64, 11, 52, 1023, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF8E5M2:
      return Format{8, 5, 2, 15, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF8E4M3:
      return Format{8, 4, 3, 7, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF8E3M4:
      return Format{8, 3, 4, 3, true, NaNStyle::kIeee, true};
    case PrimitiveType::kF8E4M3FN:
      return Format{8, 4, 3, 7, false, NaNStyle::kAllOnes, true};
    case PrimitiveType::kF8E4M3B11FNUZ:
      return Format{8, 4, 3, 11, false, NaNStyle::kNegativeZero, false};
    case PrimitiveType::kF8E5M2FNUZ:
      return Format{8, 5, 2, 16, false, NaNStyle::kNegativeZero, false};
    case PrimitiveType::kF8E4M3FNUZ:
      return Format{8, 4, 3, 8, false, NaNStyle::kNegativeZero, false};
    case PrimitiveType::kF4E2M1FN:
      return Format{4, 2, 1, 1, false, NaNStyle::kNone, true};
    case PrimitiveType::kF8E8M0FNU:
      return Format{8, 8, 0, 127, false, NaNStyle::kE8M0, false};
    default:
      return std::nullopt;
  }
}

uint64_t LowMask(int bits) { return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1; }

bool IsSigned(const Format& f) { return f.nan != NaNStyle::kE8M0; }
uint64_t SignBit(const Format& f) { return IsSigned(f) ? uint64_t{1} << (f.total_bits - 1) : 0; }
uint64_t MagnitudeMask(const Format& f) { return LowMask(f.total_bits - (IsSigned(f) ? 1 : 0)); }
uint64_t MantissaMask(const Format& f) { return LowMask(f.mantissa_bits); }
uint64_t ExponentAllOnes(const Format& f) { return LowMask(f.exponent_bits) << f.mantissa_bits; }

uint64_t MaxFiniteMagnitude(const Format& f) {
  switch (f.nan) {
    case NaNStyle::kIeee:
      return ExponentAllOnes(f) - 1;  // Largest exponent below all-ones, mantissa all ones.
    case NaNStyle::kAllOnes:
      return MagnitudeMask(f) - 1;
    case NaNStyle::kNegativeZero:
    case NaNStyle::kNone:
      return MagnitudeMask(f);
    case NaNStyle::kE8M0:
      return 0xFE;
  }
  return 0;
}

bool IsNaN(const Format& f, uint64_t bits) {
  const uint64_t mag = bits & MagnitudeMask(f);
  switch (f.nan) {
    case NaNStyle::kNone:
      return false;
    case NaNStyle::kIeee:
      return (mag & ExponentAllOnes(f)) == ExponentAllOnes(f) && (mag & MantissaMask(f)) != 0;
    case NaNStyle::kAllOnes:
      return mag == MagnitudeMask(f);
    case NaNStyle::kNegativeZero:
      return bits == SignBit(f);
    case NaNStyle::kE8M0:
      return bits == 0xFF;
  }
  return false;
}

bool IsInf(const Format& f, uint64_t bits) {
  return f.has_inf && (bits & MagnitudeMask(f)) == ExponentAllOnes(f);
}

// The NaN a conversion produces (ml_dtypes' +/-quiet_NaN()).
uint64_t CanonicalNaN(const Format& f, bool negative) {
  const uint64_t sign = negative ? SignBit(f) : 0;
  switch (f.nan) {
    case NaNStyle::kIeee:
      return sign | ExponentAllOnes(f) | (uint64_t{1} << (f.mantissa_bits - 1));
    case NaNStyle::kAllOnes:
      return sign | MagnitudeMask(f);
    case NaNStyle::kNegativeZero:
      return SignBit(f);
    case NaNStyle::kE8M0:
      return 0xFF;
    case NaNStyle::kNone:
      // ml_dtypes: quiet_NaN() of float4_e2m1fn is 0b1000 and negation flips the sign bit.
      return negative ? 0 : SignBit(f);
  }
  return 0;
}

// What an overflowing or infinite value converts to (ml_dtypes' +/-infinity()).
uint64_t OverflowBits(const Format& f, bool negative) {
  const uint64_t sign = negative ? SignBit(f) : 0;
  if (f.has_inf) return sign | ExponentAllOnes(f);
  switch (f.nan) {
    case NaNStyle::kAllOnes:
      return sign | MagnitudeMask(f);
    case NaNStyle::kNegativeZero:
      return SignBit(f);
    case NaNStyle::kE8M0:
      return 0xFF;
    case NaNStyle::kNone:
      return sign | MaxFiniteMagnitude(f);  // f4e2m1fn saturates.
    case NaNStyle::kIeee:
      break;
  }
  return sign | ExponentAllOnes(f);
}

uint64_t ZeroBits(const Format& f, bool negative) {
  return negative && f.has_negative_zero ? SignBit(f) : 0;
}

// Splits a finite, nonzero |value| into significand * 2^(exponent - 52) with the significand's
// bit 52 set (double denormals are normalized).
void Decompose(double magnitude, uint64_t* significand, int* exponent) {
  const uint64_t raw = std::bit_cast<uint64_t>(magnitude);
  const int biased = static_cast<int>(raw >> 52);
  const uint64_t fraction = raw & LowMask(52);
  if (biased == 0) {
    const int shift = std::countl_zero(fraction) - 11;
    *significand = fraction << shift;
    *exponent = -1022 - shift;
  } else {
    *significand = fraction | (uint64_t{1} << 52);
    *exponent = biased - 1023;
  }
}

// significand / 2^shift rounded to nearest, ties to even. `significand` < 2^53, shift >= 1.
uint64_t ShiftRightRoundEven(uint64_t significand, int shift) {
  if (shift > 54) return 0;  // Less than a quarter: rounds to zero.
  const uint64_t quotient = significand >> shift;
  const uint64_t remainder = significand & LowMask(shift);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (remainder > half || (remainder == half && (quotient & 1) != 0)) return quotient + 1;
  return quotient;
}

uint64_t EncodeE8M0(double value, bool* overflowed) {
  if (std::isnan(value) || std::isinf(value) || value <= 0.0) return 0xFF;
  uint64_t significand;
  int exponent;
  Decompose(value, &significand, &exponent);
  // Mantissa >= 1.5 rounds up to the next power of two (ml_dtypes rounds the implicit bit,
  // which is always odd, so the tie goes up).
  if (significand >= (uint64_t{3} << 51)) ++exponent;
  const int biased = exponent + 127;
  if (biased >= 255) {
    *overflowed = true;
    return 0xFF;
  }
  if (biased < 0) return 0x00;  // No zero: everything small becomes 2^-127.
  return static_cast<uint64_t>(biased);
}

// Encodes a double into any format but f64. Sets *overflowed when a finite value's rounded
// magnitude exceeds the largest finite value.
uint64_t Encode(const Format& f, double value, bool* overflowed) {
  *overflowed = false;
  if (f.nan == NaNStyle::kE8M0) return EncodeE8M0(value, overflowed);
  const bool negative = std::signbit(value);
  if (std::isnan(value)) return CanonicalNaN(f, negative);
  if (std::isinf(value)) return OverflowBits(f, negative);
  if (value == 0.0) return ZeroBits(f, negative);

  uint64_t significand;
  int exponent;
  Decompose(std::fabs(value), &significand, &exponent);
  const int target_exponent = exponent + f.bias;  // Biased exponent if the result is normal.
  int shift = 52 - f.mantissa_bits;
  if (target_exponent < 1) shift += 1 - target_exponent;  // Denormal: fewer bits survive.
  const uint64_t rounded = ShiftRightRoundEven(significand, shift);
  // For a normal result `rounded` still holds the implicit bit, which adds one to the exponent
  // field; a carry out of the mantissa moves to the next binade the same way.
  const uint64_t base =
      target_exponent > 1 ? static_cast<uint64_t>(target_exponent - 1) << f.mantissa_bits : 0;
  const uint64_t magnitude = base + rounded;
  if (magnitude > MaxFiniteMagnitude(f)) {
    *overflowed = true;
    return OverflowBits(f, negative);
  }
  if (magnitude == 0) return ZeroBits(f, negative);
  return (negative ? SignBit(f) : 0) | magnitude;
}

double Decode(const Format& f, uint64_t bits) {
  bits &= LowMask(f.total_bits);
  if (f.total_bits == 64) return std::bit_cast<double>(bits);
  if (f.nan == NaNStyle::kE8M0) {
    if (bits == 0xFF) return std::numeric_limits<double>::quiet_NaN();
    return std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  const bool negative = (bits & SignBit(f)) != 0;
  if (IsNaN(f, bits)) {
    uint64_t raw = (uint64_t{0x7FF} << 52) | (uint64_t{1} << 51);
    if (f.nan == NaNStyle::kIeee) {
      raw = (uint64_t{0x7FF} << 52) | ((bits & MantissaMask(f)) << (52 - f.mantissa_bits));
    }
    if (negative) raw |= uint64_t{1} << 63;
    return std::bit_cast<double>(raw);
  }
  if (IsInf(f, bits)) {
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  const uint64_t magnitude = bits & MagnitudeMask(f);
  const int exponent_field = static_cast<int>(magnitude >> f.mantissa_bits);
  const uint64_t mantissa = magnitude & MantissaMask(f);
  double result;
  if (exponent_field == 0) {
    result = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    result = std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa_bits)),
                        exponent_field - f.bias - f.mantissa_bits);
  }
  return negative ? -result : result;
}

std::string TypeName(PrimitiveType type) {
  std::string_view name = PrimitiveTypeName(type);
  if (name.empty()) return absl::StrFormat("<type %d>", static_cast<int>(type));
  return std::string(name);
}

absl::Status NotFloatError(PrimitiveType type) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is not a floating-point type", TypeName(type)));
}

// Shortest text that reads back as exactly `value` (std::to_chars picks plain or exponent
// notation, whichever is shorter): 65520 -> "65520", 1e100 -> "1e+100".
std::string ShortestDoubleString(double value) {
  char buffer[64];
  auto [ptr, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (ec != std::errc()) return absl::StrFormat("%.17g", value);
  return std::string(buffer, ptr);
}

template <typename T>
bool ParsesBackTo(const std::string& text, T value) {
  T parsed = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
  return ec == std::errc() && ptr == text.data() + text.size() && parsed == value;
}

}  // namespace

bool FloatTypeHasInfinity(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f && f->has_inf;
}

bool FloatTypeHasNaN(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f && f->nan != NaNStyle::kNone;
}

bool FloatTypeHasNegativeZero(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f && f->has_negative_zero;
}

uint64_t FloatTypeMaxFiniteBits(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f ? MaxFiniteMagnitude(*f) : 0;
}

double FloatTypeMaxFinite(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f ? Decode(*f, MaxFiniteMagnitude(*f)) : 0.0;
}

int FloatTypeMantissaBits(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f ? f->mantissa_bits : 0;
}

int FloatTypeNaNPayloadBits(PrimitiveType type) {
  std::optional<Format> f = GetFormat(type);
  return f && f->nan == NaNStyle::kIeee ? f->mantissa_bits : 0;
}

uint64_t DefaultNaNPayload(PrimitiveType type) {
  const int payload_bits = FloatTypeNaNPayloadBits(type);
  return payload_bits > 0 ? uint64_t{1} << (payload_bits - 1) : 0;
}

bool IsNaNBits(PrimitiveType type, uint64_t bits) {
  std::optional<Format> f = GetFormat(type);
  return f && IsNaN(*f, bits & LowMask(f->total_bits));
}

bool IsInfinityBits(PrimitiveType type, uint64_t bits) {
  std::optional<Format> f = GetFormat(type);
  return f && IsInf(*f, bits & LowMask(f->total_bits));
}

uint64_t NaNPayload(PrimitiveType type, uint64_t bits) {
  if (FloatTypeNaNPayloadBits(type) == 0 || !IsNaNBits(type, bits)) return 0;
  return bits & LowMask(FloatTypeMantissaBits(type));
}

double FloatBitsToDouble(PrimitiveType type, uint64_t bits) {
  std::optional<Format> f = GetFormat(type);
  return f ? Decode(*f, bits) : 0.0;
}

uint64_t DoubleToFloatBits(PrimitiveType type, double value) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return 0;
  if (f->total_bits == 64) return std::bit_cast<uint64_t>(value);
  bool overflowed;
  return Encode(*f, value, &overflowed);
}

absl::StatusOr<uint64_t> NaNBits(PrimitiveType type, bool negative,
                                 std::optional<uint64_t> payload) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return NotFloatError(type);
  if (f->nan == NaNStyle::kNone) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has no NaN encoding", TypeName(type)));
  }
  if (!payload.has_value()) return CanonicalNaN(*f, negative);
  const int payload_bits = FloatTypeNaNPayloadBits(type);
  if (payload_bits == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has a single NaN encoding and takes no NaN payload (got 0x%x)",
                        TypeName(type), *payload));
  }
  if (*payload == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "NaN payload for %s must be nonzero (a zero mantissa encodes infinity)", TypeName(type)));
  }
  if ((*payload & ~LowMask(payload_bits)) != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "NaN payload 0x%x does not fit the %d mantissa bits of %s (largest payload 0x%x)", *payload,
        payload_bits, TypeName(type), LowMask(payload_bits)));
  }
  return (negative ? SignBit(*f) : 0) | ExponentAllOnes(*f) | *payload;
}

absl::StatusOr<uint64_t> InfinityBits(PrimitiveType type, bool negative) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return NotFloatError(type);
  if (!f->has_inf && f->nan == NaNStyle::kNone) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s has neither infinity nor NaN, so %sinf cannot be represented",
                        TypeName(type), negative ? "-" : ""));
  }
  return OverflowBits(*f, negative);
}

absl::StatusOr<uint64_t> FiniteDoubleToFloatBits(PrimitiveType type, double value) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return NotFloatError(type);
  if (!std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrFormat("expected a finite value for %s, got %s",
                                                      TypeName(type), ShortestDoubleString(value)));
  }
  if (f->total_bits == 64) return std::bit_cast<uint64_t>(value);
  if (f->nan == NaNStyle::kE8M0) {
    bool overflowed = false;
    const uint64_t bits = EncodeE8M0(value, &overflowed);
    if (bits == 0xFF) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "value %s is out of range for %s: its finite values are the powers of two in "
          "[2^-127, 2^127] (no zero, no negative values)",
          ShortestDoubleString(value), TypeName(type)));
    }
    return bits;
  }
  bool overflowed = false;
  const uint64_t bits = Encode(*f, value, &overflowed);
  if (overflowed) {
    const std::string max = ShortestDoubleString(Decode(*f, MaxFiniteMagnitude(*f)));
    return absl::InvalidArgumentError(
        absl::StrFormat("value %s is out of range for %s: its finite values lie in [-%s, %s]",
                        ShortestDoubleString(value), TypeName(type), max, max));
  }
  return bits;
}

namespace {

// Text for NaN and infinity; nullopt for finite values.
std::optional<std::string> FormatSpecial(const Format& f, PrimitiveType type, uint64_t bits) {
  const bool negative = (bits & SignBit(f)) != 0;
  if (IsNaN(f, bits)) {
    std::string text = negative ? "-nan" : "nan";
    if (FloatTypeNaNPayloadBits(type) > 0) {
      const uint64_t payload = NaNPayload(type, bits);
      if (payload != DefaultNaNPayload(type)) absl::StrAppendFormat(&text, "(0x%x)", payload);
    }
    return text;
  }
  if (IsInf(f, bits)) return std::string(negative ? "-inf" : "inf");
  return std::nullopt;
}

// std::numeric_limits<T>::max_digits10 as ml_dtypes/Eigen define it: ceil(1 + p * log10(2)),
// p being the significand precision including the implicit bit.
int MaxDigits10(const Format& f) {
  return static_cast<int>(std::ceil(1.0 + (f.mantissa_bits + 1) * 0.30102999566398120));
}

}  // namespace

std::string FormatFloatBits(PrimitiveType type, uint64_t bits) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return std::string();
  bits &= LowMask(f->total_bits);
  if (std::optional<std::string> special = FormatSpecial(*f, type, bits)) return *special;
  const double value = Decode(*f, bits);
  if (type == PrimitiveType::kF32) {
    std::string text = absl::StrFormat("%.6g", value);
    if (!ParsesBackTo(text, static_cast<float>(value))) text = absl::StrFormat("%.9g", value);
    return text;
  }
  if (type == PrimitiveType::kF64) {
    std::string text = absl::StrFormat("%.15g", value);
    if (!ParsesBackTo(text, value)) text = absl::StrFormat("%.17g", value);
    return text;
  }
  return absl::StrFormat("%.*g", MaxDigits10(*f), value);
}

std::string FormatFloatBitsShortest(PrimitiveType type, uint64_t bits) {
  std::optional<Format> f = GetFormat(type);
  if (!f) return std::string();
  bits &= LowMask(f->total_bits);
  if (std::optional<std::string> special = FormatSpecial(*f, type, bits)) return *special;
  const double value = Decode(*f, bits);
  for (int precision = 1; precision < 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    bool round_trips;
    if (type == PrimitiveType::kF32) {
      round_trips = ParsesBackTo(text, static_cast<float>(value));
    } else if (type == PrimitiveType::kF64) {
      round_trips = ParsesBackTo(text, value);
    } else {
      double parsed = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), parsed);
      round_trips = ec == std::errc() && DoubleToFloatBits(type, parsed) == bits;
    }
    if (round_trips) return text;
  }
  return absl::StrFormat("%.17g", value);
}

}  // namespace hlowb
