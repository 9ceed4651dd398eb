#include "core/ir/float_types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/primitive_type.h"

namespace hlowb {
namespace {

using PT = PrimitiveType;

constexpr PT kSmallTypes[] = {
    PT::kF16,        PT::kBF16,          PT::kF8E5M2,    PT::kF8E4M3,
    PT::kF8E4M3FN,   PT::kF8E4M3B11FNUZ, PT::kF8E3M4,    PT::kF8E5M2FNUZ,
    PT::kF8E4M3FNUZ, PT::kF4E2M1FN,      PT::kF8E8M0FNU,
};

constexpr PT kAllFloatTypes[] = {
    PT::kF16,        PT::kBF16,     PT::kF32,           PT::kF64,    PT::kF8E5M2,
    PT::kF8E4M3,     PT::kF8E4M3FN, PT::kF8E4M3B11FNUZ, PT::kF8E3M4, PT::kF8E5M2FNUZ,
    PT::kF8E4M3FNUZ, PT::kF4E2M1FN, PT::kF8E8M0FNU,
};

std::string Name(PT type) { return std::string(PrimitiveTypeName(type)); }

uint64_t PatternCount(PT type) { return uint64_t{1} << BitWidth(type); }

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

uint64_t F32Bits(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t F64Bits(double d) { return std::bit_cast<uint64_t>(d); }

TEST(FloatTypesTest, SmallTypesAreTheNarrowFloats) {
  for (PT type : kSmallTypes) {
    EXPECT_TRUE(IsSmallFloat(type)) << Name(type);
    EXPECT_LE(BitWidth(type), 16) << Name(type);
  }
}

TEST(FloatTypesTest, Properties) {
  struct Row {
    PT type;
    bool inf, nan, negative_zero;
  };
  const Row rows[] = {
      {PT::kF16, true, true, true},
      {PT::kBF16, true, true, true},
      {PT::kF32, true, true, true},
      {PT::kF64, true, true, true},
      {PT::kF8E5M2, true, true, true},
      {PT::kF8E4M3, true, true, true},
      {PT::kF8E3M4, true, true, true},
      {PT::kF8E4M3FN, false, true, true},
      {PT::kF8E4M3B11FNUZ, false, true, false},
      {PT::kF8E5M2FNUZ, false, true, false},
      {PT::kF8E4M3FNUZ, false, true, false},
      {PT::kF4E2M1FN, false, false, true},
      {PT::kF8E8M0FNU, false, true, false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(Name(row.type));
    EXPECT_EQ(FloatTypeHasInfinity(row.type), row.inf);
    EXPECT_EQ(FloatTypeHasNaN(row.type), row.nan);
    EXPECT_EQ(FloatTypeHasNegativeZero(row.type), row.negative_zero);
  }
  EXPECT_FALSE(FloatTypeHasNaN(PT::kS32));
  EXPECT_FALSE(FloatTypeHasInfinity(PT::kC64));
  EXPECT_EQ(FloatTypeMaxFinite(PT::kS8), 0.0);
}

TEST(FloatTypesTest, KnownValues) {
  struct Row {
    PT type;
    double max_finite;
    uint64_t max_bits;
    double min_denormal;  // Value of bits 0x1 (f8e8m0fnu: of bits 0x0).
    uint64_t one;
    uint64_t minus_two_and_a_half;
  };
  const Row rows[] = {
      {PT::kF16, 65504, 0x7BFF, 0x1p-24, 0x3C00, 0xC100},
      {PT::kBF16, 0x1.FEp127, 0x7F7F, 0x1p-133, 0x3F80, 0xC020},
      {PT::kF32, FLT_MAX, 0x7F7FFFFF, 0x1p-149, 0x3F800000, 0xC0200000},
      {PT::kF64, DBL_MAX, 0x7FEFFFFFFFFFFFFF, 0x1p-1074, 0x3FF0000000000000, 0xC004000000000000},
      {PT::kF8E5M2, 57344, 0x7B, 0x1p-16, 0x3C, 0xC1},
      {PT::kF8E4M3, 240, 0x77, 0x1p-9, 0x38, 0xC2},
      {PT::kF8E3M4, 15.5, 0x6F, 0x1p-6, 0x30, 0xC4},
      {PT::kF8E4M3FN, 448, 0x7E, 0x1p-9, 0x38, 0xC2},
      {PT::kF8E4M3B11FNUZ, 30, 0x7F, 0x1p-13, 0x58, 0xE2},
      {PT::kF8E5M2FNUZ, 57344, 0x7F, 0x1p-17, 0x40, 0xC5},
      {PT::kF8E4M3FNUZ, 240, 0x7F, 0x1p-10, 0x40, 0xCA},
      // -2.5 is a tie between -2 (0b1100) and -3 (0b1101): even gives -2.
      {PT::kF4E2M1FN, 6, 0x7, 0.5, 0x2, 0xC},
      // Negative values are NaN in the unsigned f8e8m0fnu.
      {PT::kF8E8M0FNU, 0x1p127, 0xFE, 0x1p-127, 0x7F, 0xFF},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(Name(row.type));
    EXPECT_EQ(FloatTypeMaxFinite(row.type), row.max_finite);
    EXPECT_EQ(FloatTypeMaxFiniteBits(row.type), row.max_bits);
    EXPECT_EQ(FloatBitsToDouble(row.type, row.max_bits), row.max_finite);
    EXPECT_EQ(DoubleToFloatBits(row.type, row.max_finite), row.max_bits);
    const uint64_t denormal_bits = row.type == PT::kF8E8M0FNU ? 0 : 1;
    EXPECT_EQ(FloatBitsToDouble(row.type, denormal_bits), row.min_denormal);
    EXPECT_EQ(DoubleToFloatBits(row.type, row.min_denormal), denormal_bits);
    EXPECT_EQ(DoubleToFloatBits(row.type, 1.0), row.one);
    EXPECT_EQ(FloatBitsToDouble(row.type, row.one), 1.0);
    EXPECT_EQ(DoubleToFloatBits(row.type, -2.5), row.minus_two_and_a_half);
  }
  EXPECT_EQ(FloatBitsToDouble(PT::kF16, 0xC100), -2.5);
  EXPECT_EQ(FloatBitsToDouble(PT::kF8E4M3FNUZ, 0xCA), -2.5);
  EXPECT_EQ(FloatBitsToDouble(PT::kF8E8M0FNU, 0x80), 2.0);
  EXPECT_EQ(FloatBitsToDouble(PT::kF32, F32Bits(0.1f)), static_cast<double>(0.1f));
  EXPECT_EQ(DoubleToFloatBits(PT::kF32, 0.1), F32Bits(0.1f));
  EXPECT_EQ(FloatBitsToDouble(PT::kF64, F64Bits(0.1)), 0.1);
  // Higher bits than the type's width are ignored.
  EXPECT_EQ(FloatBitsToDouble(PT::kF8E4M3FN, 0x1238), 1.0);
}

TEST(FloatTypesTest, NaNAndInfinityBitsClassify) {
  EXPECT_TRUE(IsNaNBits(PT::kF8E4M3FN, 0x7F));
  EXPECT_TRUE(IsNaNBits(PT::kF8E4M3FN, 0xFF));
  EXPECT_FALSE(IsNaNBits(PT::kF8E4M3FN, 0x7E));
  EXPECT_FALSE(IsNaNBits(PT::kF8E4M3FN, 0x78));  // 256: exponent all ones is a normal binade.
  EXPECT_TRUE(IsNaNBits(PT::kF8E5M2FNUZ, 0x80));
  EXPECT_FALSE(IsNaNBits(PT::kF8E5M2FNUZ, 0x00));
  EXPECT_FALSE(IsNaNBits(PT::kF8E5M2FNUZ, 0xFF));
  EXPECT_TRUE(IsNaNBits(PT::kF8E8M0FNU, 0xFF));
  EXPECT_FALSE(IsNaNBits(PT::kF8E8M0FNU, 0x00));
  EXPECT_TRUE(IsNaNBits(PT::kF8E5M2, 0x7D));
  EXPECT_TRUE(IsInfinityBits(PT::kF8E5M2, 0xFC));
  EXPECT_FALSE(IsInfinityBits(PT::kF8E4M3FN, 0x78));
  for (PT type : kSmallTypes) {
    SCOPED_TRACE(Name(type));
    int nans = 0, infs = 0;
    for (uint64_t bits = 0; bits < PatternCount(type); ++bits) {
      const double value = FloatBitsToDouble(type, bits);
      EXPECT_EQ(std::isnan(value), IsNaNBits(type, bits)) << bits;
      EXPECT_EQ(std::isinf(value), IsInfinityBits(type, bits)) << bits;
      if (IsNaNBits(type, bits)) {
        ++nans;
        EXPECT_EQ(std::signbit(value), bits >> (BitWidth(type) - 1) == 1 && type != PT::kF8E8M0FNU);
      }
      infs += IsInfinityBits(type, bits);
    }
    EXPECT_EQ(infs, FloatTypeHasInfinity(type) ? 2 : 0);
    if (!FloatTypeHasNaN(type)) {
      EXPECT_EQ(nans, 0);
    } else if (FloatTypeHasInfinity(type)) {
      EXPECT_EQ(nans, 2 * ((1 << FloatTypeMantissaBits(type)) - 1));
    } else if (type == PT::kF8E4M3FN) {
      EXPECT_EQ(nans, 2);
    } else {
      EXPECT_EQ(nans, 1);
    }
  }
}

// Every bit pattern decodes and encodes back to itself (NaNs: to a NaN).
TEST(FloatTypesTest, ExhaustiveRoundTrip) {
  for (PT type : kSmallTypes) {
    SCOPED_TRACE(Name(type));
    for (uint64_t bits = 0; bits < PatternCount(type); ++bits) {
      const double value = FloatBitsToDouble(type, bits);
      const uint64_t back = DoubleToFloatBits(type, value);
      if (IsNaNBits(type, bits)) {
        EXPECT_TRUE(IsNaNBits(type, back)) << bits;
      } else {
        ASSERT_EQ(back, bits) << "value " << value;
      }
    }
  }
}

// Non-negative finite values strictly increase with the bit pattern, up to the max finite value
// (this covers f4e2m1fn and the unsigned f8e8m0fnu too).
TEST(FloatTypesTest, ExhaustiveDecodeIsMonotonic) {
  for (PT type : kSmallTypes) {
    SCOPED_TRACE(Name(type));
    const uint64_t magnitude_count =
        type == PT::kF8E8M0FNU ? PatternCount(type) : PatternCount(type) / 2;
    double previous = -1;
    for (uint64_t bits = 0; bits < magnitude_count; ++bits) {
      if (IsNaNBits(type, bits) || IsInfinityBits(type, bits)) continue;
      const double value = FloatBitsToDouble(type, bits);
      EXPECT_GT(value, previous) << bits;
      previous = value;
    }
    EXPECT_EQ(previous, FloatTypeMaxFinite(type));
  }
}

// Reference rounding by brute force: the nearest finite value, ties to the even bit pattern
// (f8e8m0fnu: ties up). Only for |value| <= max finite.
uint64_t ReferenceRound(PT type, double value) {
  const bool e8m0 = type == PT::kF8E8M0FNU;
  const uint64_t sign_bit = e8m0 ? 0 : PatternCount(type) / 2;
  const double magnitude = std::fabs(value);
  uint64_t best = 0;
  double best_error = kInf;
  for (uint64_t bits = 0; bits < (e8m0 ? PatternCount(type) : sign_bit); ++bits) {
    if (IsNaNBits(type, bits) || IsInfinityBits(type, bits)) continue;
    const double error = std::fabs(FloatBitsToDouble(type, bits) - magnitude);
    const bool tie = error == best_error;
    if (error < best_error || (tie && !e8m0 && (bits & 1) == 0 && (best & 1) == 1) ||
        (tie && e8m0 && bits > best)) {
      best = bits;
      best_error = error;
    }
  }
  const bool negative = std::signbit(value);
  if (!negative) return best;
  if (best == 0 && !FloatTypeHasNegativeZero(type)) return 0;
  return best | sign_bit;
}

std::vector<double> InterestingValues(PT type) {
  // Every representable value, every midpoint between neighbours, and the doubles just beside
  // each midpoint.
  std::vector<double> values;
  std::vector<double> finite;
  const uint64_t magnitude_count =
      type == PT::kF8E8M0FNU ? PatternCount(type) : PatternCount(type) / 2;
  for (uint64_t bits = 0; bits < magnitude_count; ++bits) {
    if (IsNaNBits(type, bits) || IsInfinityBits(type, bits)) continue;
    finite.push_back(FloatBitsToDouble(type, bits));
  }
  for (size_t i = 0; i < finite.size(); ++i) {
    values.push_back(finite[i]);
    if (i + 1 < finite.size()) {
      const double mid = (finite[i] + finite[i + 1]) / 2;
      values.push_back(mid);
      values.push_back(std::nextafter(mid, kInf));
      values.push_back(std::nextafter(mid, -kInf));
    }
  }
  values.push_back(finite.front() / 2);
  values.push_back(finite.front() / 3);
  values.push_back(std::numeric_limits<double>::denorm_min());
  return values;
}

TEST(FloatTypesTest, RoundingMatchesBruteForceNearest) {
  for (PT type : kSmallTypes) {
    if (BitWidth(type) > 8) continue;  // The brute force is quadratic.
    SCOPED_TRACE(Name(type));
    for (double magnitude : InterestingValues(type)) {
      for (double value : {magnitude, -magnitude}) {
        if (type == PT::kF8E8M0FNU && !(value > 0)) continue;
        ASSERT_EQ(DoubleToFloatBits(type, value), ReferenceRound(type, value))
            << std::hexfloat << value;
      }
    }
  }
}

// For f16 the compiler's _Float16 gives an independent, correctly rounded reference.
#ifdef __FLT16_MAX__
uint64_t HardwareF16Bits(double value) {
  const _Float16 half = static_cast<_Float16>(value);
  return std::bit_cast<uint16_t>(half);
}

TEST(FloatTypesTest, F16MatchesCompilerConversion) {
  for (double magnitude : InterestingValues(PT::kF16)) {
    for (double value : {magnitude, -magnitude}) {
      ASSERT_EQ(DoubleToFloatBits(PT::kF16, value), HardwareF16Bits(value))
          << std::hexfloat << value;
    }
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> exponent(-30, 17);
  std::uniform_real_distribution<double> mantissa(1, 2);
  for (int i = 0; i < 200000; ++i) {
    const double value = std::ldexp(mantissa(rng), static_cast<int>(exponent(rng)));
    ASSERT_EQ(DoubleToFloatBits(PT::kF16, value), HardwareF16Bits(value)) << std::hexfloat << value;
    ASSERT_EQ(DoubleToFloatBits(PT::kF16, -value), HardwareF16Bits(-value))
        << std::hexfloat << -value;
  }
}
#endif

TEST(FloatTypesTest, F32MatchesHardwareConversion) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 500000; ++i) {
    // Random doubles of every magnitude, plus f32 neighbourhoods and midpoints.
    const double value = std::bit_cast<double>(rng());
    if (std::isnan(value)) continue;
    ASSERT_EQ(DoubleToFloatBits(PT::kF32, value), F32Bits(static_cast<float>(value)))
        << std::hexfloat << value;
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isnan(f) || std::isinf(f)) continue;
    const double next = std::nextafter(f, std::numeric_limits<float>::infinity());
    const double mid = (static_cast<double>(f) + next) / 2;
    for (double probe :
         {static_cast<double>(f), mid, std::nextafter(mid, kInf), std::nextafter(mid, -kInf)}) {
      ASSERT_EQ(DoubleToFloatBits(PT::kF32, probe), F32Bits(static_cast<float>(probe)))
          << std::hexfloat << probe;
    }
    ASSERT_EQ(FloatBitsToDouble(PT::kF32, F32Bits(f)), static_cast<double>(f));
  }
}

TEST(FloatTypesTest, F64IsIdentity) {
  for (double value : {0.0, -0.0, 1.0, 0.1, DBL_MAX, -DBL_MIN, 0x1p-1074, kInf, -kInf}) {
    EXPECT_EQ(DoubleToFloatBits(PT::kF64, value), F64Bits(value));
    EXPECT_EQ(F64Bits(FloatBitsToDouble(PT::kF64, F64Bits(value))), F64Bits(value));
  }
  EXPECT_EQ(DoubleToFloatBits(PT::kF64, std::bit_cast<double>(uint64_t{0xFFF0000000000123})),
            uint64_t{0xFFF0000000000123});
}

TEST(FloatTypesTest, TiesToEven) {
  // f16 around 1: the spacing is 2^-10.
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 1 + 0x1p-11), 0x3C00u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 1 + 3 * 0x1p-11), 0x3C02u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, std::nextafter(1 + 0x1p-11, 2.0)), 0x3C01u);
  // f16 denormals: half of the smallest goes to zero, one and a half to two.
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 0x1p-25), 0x0000u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, -0x1p-25), 0x8000u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 3 * 0x1p-25), 0x0002u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, std::nextafter(0x1p-25, 1.0)), 0x0001u);
  // bf16.
  EXPECT_EQ(DoubleToFloatBits(PT::kBF16, 1 + 0x1p-8), 0x3F80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kBF16, 1 + 3 * 0x1p-8), 0x3F82u);
  // f8e4m3fn around 1 (spacing 1/8) and at the top of the range.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, 1.0625), 0x38u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, 1.1875), 0x3Au);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, 464), 0x7Eu);  // Tie between 448 and 480.
  // f8e5m2, f8e3m4.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2, 1.125), 0x3Cu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2, 1.375), 0x3Eu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E3M4, 1 + 1.0 / 32), 0x30u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E3M4, 1 + 3.0 / 32), 0x32u);
  // f4e2m1fn: values 0, 0.5, 1, 1.5, 2, 3, 4, 6.
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 0.25), 0x0u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 0.75), 0x2u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 1.25), 0x2u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 2.5), 0x4u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 3.5), 0x6u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 5), 0x6u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, -5.0001), 0xFu);
  // f8e8m0fnu: nearest power of two, 1.5 rounds up.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 1.5), 0x80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, std::nextafter(1.5, 0.0)), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 3), 0x81u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0.75), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1p-127), 0x00u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1p-140), 0x00u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1.8p-127), 0x01u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1p-1074), 0x00u);
}

// Rounding through float first would round twice and land on the wrong side of a tie.
TEST(FloatTypesTest, NoDoubleRounding) {
  struct Row {
    PT type;
    double value;
    uint64_t expected;
  };
  const Row rows[] = {
      {PT::kF16, 1 + 0x1p-11 + 0x1p-40, 0x3C01},
      {PT::kBF16, 1 + 0x1p-8 + 0x1p-30, 0x3F81},
      {PT::kF8E4M3FN, 1 + 0x1p-4 + 0x1p-30, 0x39},
      {PT::kF8E5M2, -(1 + 0x1p-3 + 0x1p-35), 0xBD},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(Name(row.type));
    EXPECT_EQ(DoubleToFloatBits(row.type, row.value), row.expected);
    // The float detour really is wrong here, so this case can tell the two apart.
    const double via_float = static_cast<float>(row.value);
    EXPECT_NE(DoubleToFloatBits(row.type, via_float), row.expected);
  }
}

TEST(FloatTypesTest, OverflowPerType) {
  // Types with infinity: overflow gives inf.
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 65519), 0x7BFFu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, 65520), 0x7C00u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF16, -1e6), 0xFC00u);
  EXPECT_EQ(DoubleToFloatBits(PT::kBF16, 1e39), 0x7F80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF32, 1e39), 0x7F800000u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF32, -DBL_MAX), 0xFF800000u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2, 61439), 0x7Bu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2, 61440), 0x7Cu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3, 247.99), 0x77u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3, 248), 0x78u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E3M4, 15.7), 0x6Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E3M4, -15.75), 0xF0u);
  for (PT type : {PT::kF16, PT::kBF16, PT::kF32, PT::kF8E5M2, PT::kF8E4M3, PT::kF8E3M4}) {
    SCOPED_TRACE(Name(type));
    EXPECT_TRUE(IsInfinityBits(type, DoubleToFloatBits(type, kInf)));
    EXPECT_TRUE(IsInfinityBits(type, DoubleToFloatBits(type, -kInf)));
    EXPECT_LT(FloatBitsToDouble(type, DoubleToFloatBits(type, -kInf)), 0);
  }
  // f8e4m3fn: NaN, sign kept.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, 465), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, -1000), 0xFFu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, kInf), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FN, -kInf), 0xFFu);
  // fnuz: the single NaN.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3B11FNUZ, 30.9), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3B11FNUZ, 31), 0x80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3B11FNUZ, -31), 0x80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2FNUZ, 61439), 0x7Fu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E5M2FNUZ, 61440), 0x80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FNUZ, 248), 0x80u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E4M3FNUZ, -kInf), 0x80u);
  // f4e2m1fn: saturates.
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 6.9), 0x7u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, 100), 0x7u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, -100), 0xFu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, kInf), 0x7u);
  EXPECT_EQ(DoubleToFloatBits(PT::kF4E2M1FN, -kInf), 0xFu);
  // f8e8m0fnu: NaN.
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1.7p127), 0xFEu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, 0x1.8p127), 0xFFu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, DBL_MAX), 0xFFu);
  EXPECT_EQ(DoubleToFloatBits(PT::kF8E8M0FNU, kInf), 0xFFu);
}

TEST(FloatTypesTest, NaNEncodesToCanonicalNaN) {
  struct Row {
    PT type;
    uint64_t positive, negative;
  };
  const Row rows[] = {
      {PT::kF16, 0x7E00, 0xFE00},         {PT::kBF16, 0x7FC0, 0xFFC0},
      {PT::kF32, 0x7FC00000, 0xFFC00000}, {PT::kF8E5M2, 0x7E, 0xFE},
      {PT::kF8E4M3, 0x7C, 0xFC},          {PT::kF8E3M4, 0x78, 0xF8},
      {PT::kF8E4M3FN, 0x7F, 0xFF},        {PT::kF8E4M3B11FNUZ, 0x80, 0x80},
      {PT::kF8E5M2FNUZ, 0x80, 0x80},      {PT::kF8E4M3FNUZ, 0x80, 0x80},
      {PT::kF4E2M1FN, 0x8, 0x0},  // ml_dtypes: quiet_NaN() is -0, negated to +0.
      {PT::kF8E8M0FNU, 0xFF, 0xFF},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(Name(row.type));
    EXPECT_EQ(DoubleToFloatBits(row.type, kNaN), row.positive);
    EXPECT_EQ(DoubleToFloatBits(row.type, -kNaN), row.negative);
    // A NaN with a payload is canonicalized too.
    EXPECT_EQ(DoubleToFloatBits(row.type, std::bit_cast<double>(uint64_t{0x7FF0000000000001})),
              row.positive);
  }
}

TEST(FloatTypesTest, NegativeZero) {
  for (PT type : kAllFloatTypes) {
    SCOPED_TRACE(Name(type));
    const uint64_t bits = DoubleToFloatBits(type, -0.0);
    const uint64_t tiny = DoubleToFloatBits(type, -1e-300);
    if (type == PT::kF8E8M0FNU) {
      EXPECT_EQ(bits, 0xFFu);  // No zero at all.
    } else if (FloatTypeHasNegativeZero(type)) {
      EXPECT_EQ(bits, uint64_t{1} << (BitWidth(type) - 1));
      EXPECT_TRUE(std::signbit(FloatBitsToDouble(type, bits)));
      if (type != PT::kF64) {
        EXPECT_EQ(tiny, bits);
      }
    } else {
      EXPECT_EQ(bits, 0u);
      EXPECT_EQ(tiny, 0u);
    }
    if (type != PT::kF8E8M0FNU) {
      EXPECT_EQ(DoubleToFloatBits(type, 0.0), 0u);
    }
  }
}

TEST(FloatTypesTest, NaNBits) {
  EXPECT_EQ(*NaNBits(PT::kF32, false, std::nullopt), 0x7FC00000u);
  EXPECT_EQ(*NaNBits(PT::kF32, true, std::nullopt), 0xFFC00000u);
  EXPECT_EQ(*NaNBits(PT::kF32, false, 1), 0x7F800001u);
  EXPECT_EQ(*NaNBits(PT::kF32, true, 0x7FFFFF), 0xFFFFFFFFu);
  EXPECT_EQ(*NaNBits(PT::kF64, false, std::nullopt), 0x7FF8000000000000u);
  EXPECT_EQ(*NaNBits(PT::kF64, false, 0xFFFFFFFFFFFFF), 0x7FFFFFFFFFFFFFFFu);
  EXPECT_EQ(*NaNBits(PT::kF16, false, 0x3FF), 0x7FFFu);
  EXPECT_EQ(*NaNBits(PT::kBF16, true, 0x1), 0xFF81u);
  EXPECT_EQ(*NaNBits(PT::kF8E5M2, false, 0x1), 0x7Du);
  EXPECT_EQ(*NaNBits(PT::kF8E4M3, false, std::nullopt), 0x7Cu);
  EXPECT_EQ(*NaNBits(PT::kF8E3M4, true, 0xF), 0xFFu);
  EXPECT_EQ(*NaNBits(PT::kF8E4M3FN, false, std::nullopt), 0x7Fu);
  EXPECT_EQ(*NaNBits(PT::kF8E4M3FN, true, std::nullopt), 0xFFu);
  EXPECT_EQ(*NaNBits(PT::kF8E4M3FNUZ, true, std::nullopt), 0x80u);
  EXPECT_EQ(*NaNBits(PT::kF8E5M2FNUZ, false, std::nullopt), 0x80u);
  EXPECT_EQ(*NaNBits(PT::kF8E8M0FNU, false, std::nullopt), 0xFFu);

  absl::StatusOr<uint64_t> result = NaNBits(PT::kF32, false, 0);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("nonzero"), std::string::npos);
  result = NaNBits(PT::kF32, false, 0x800000);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("0x800000"), std::string::npos);
  EXPECT_NE(result.status().message().find("f32"), std::string::npos);
  EXPECT_FALSE(NaNBits(PT::kF16, false, 0x400).ok());
  EXPECT_FALSE(NaNBits(PT::kF8E5M2, false, 0x4).ok());
  result = NaNBits(PT::kF4E2M1FN, false, std::nullopt);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("f4e2m1fn"), std::string::npos);
  EXPECT_FALSE(NaNBits(PT::kF8E4M3FN, false, 0x7).ok());
  EXPECT_FALSE(NaNBits(PT::kF8E4M3FNUZ, false, 0x1).ok());
  EXPECT_FALSE(NaNBits(PT::kS32, false, std::nullopt).ok());
  for (PT type : kAllFloatTypes) {
    if (!FloatTypeHasNaN(type)) continue;
    SCOPED_TRACE(Name(type));
    EXPECT_TRUE(IsNaNBits(type, *NaNBits(type, false, std::nullopt)));
    EXPECT_TRUE(IsNaNBits(type, *NaNBits(type, true, std::nullopt)));
  }
}

TEST(FloatTypesTest, NaNPayload) {
  EXPECT_EQ(NaNPayload(PT::kF32, 0x7FC00000), 0x400000u);
  EXPECT_EQ(NaNPayload(PT::kF32, 0xFF800123), 0x123u);
  EXPECT_EQ(NaNPayload(PT::kF32, 0x7F800000), 0u);  // inf
  EXPECT_EQ(NaNPayload(PT::kF32, 0x3F800000), 0u);
  EXPECT_EQ(NaNPayload(PT::kF16, 0x7C01), 0x1u);
  EXPECT_EQ(NaNPayload(PT::kF8E5M2, 0x7F), 0x3u);
  EXPECT_EQ(NaNPayload(PT::kF8E4M3FN, 0x7F), 0u);  // Single NaN: no payload bits.
  EXPECT_EQ(DefaultNaNPayload(PT::kF32), 0x400000u);
  EXPECT_EQ(DefaultNaNPayload(PT::kF64), 0x8000000000000u);
  EXPECT_EQ(DefaultNaNPayload(PT::kBF16), 0x40u);
  EXPECT_EQ(DefaultNaNPayload(PT::kF8E4M3), 0x4u);
  EXPECT_EQ(DefaultNaNPayload(PT::kF8E4M3FNUZ), 0u);
  EXPECT_EQ(FloatTypeNaNPayloadBits(PT::kF8E3M4), 4);
  EXPECT_EQ(FloatTypeNaNPayloadBits(PT::kF8E8M0FNU), 0);
  // Decoding keeps an IEEE payload in the double's top mantissa bits.
  EXPECT_EQ(F64Bits(FloatBitsToDouble(PT::kF32, 0xFF800123)),
            0xFFF0000000000000u | (uint64_t{0x123} << 29));
}

TEST(FloatTypesTest, InfinityBits) {
  EXPECT_EQ(*InfinityBits(PT::kF32, false), 0x7F800000u);
  EXPECT_EQ(*InfinityBits(PT::kF32, true), 0xFF800000u);
  EXPECT_EQ(*InfinityBits(PT::kF64, true), 0xFFF0000000000000u);
  EXPECT_EQ(*InfinityBits(PT::kF16, false), 0x7C00u);
  EXPECT_EQ(*InfinityBits(PT::kBF16, true), 0xFF80u);
  EXPECT_EQ(*InfinityBits(PT::kF8E5M2, true), 0xFCu);
  EXPECT_EQ(*InfinityBits(PT::kF8E4M3, false), 0x78u);
  EXPECT_EQ(*InfinityBits(PT::kF8E3M4, false), 0x70u);
  // No infinity: the NaN the conversion of inf gives.
  EXPECT_EQ(*InfinityBits(PT::kF8E4M3FN, false), 0x7Fu);
  EXPECT_EQ(*InfinityBits(PT::kF8E4M3FN, true), 0xFFu);
  EXPECT_EQ(*InfinityBits(PT::kF8E4M3B11FNUZ, true), 0x80u);
  EXPECT_EQ(*InfinityBits(PT::kF8E5M2FNUZ, false), 0x80u);
  EXPECT_EQ(*InfinityBits(PT::kF8E4M3FNUZ, false), 0x80u);
  EXPECT_EQ(*InfinityBits(PT::kF8E8M0FNU, false), 0xFFu);
  absl::StatusOr<uint64_t> result = InfinityBits(PT::kF4E2M1FN, true);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("f4e2m1fn"), std::string::npos);
  EXPECT_FALSE(InfinityBits(PT::kPred, false).ok());
  for (PT type : kAllFloatTypes) {
    if (type == PT::kF4E2M1FN) continue;
    SCOPED_TRACE(Name(type));
    EXPECT_EQ(*InfinityBits(type, false), DoubleToFloatBits(type, kInf));
    EXPECT_EQ(*InfinityBits(type, true), DoubleToFloatBits(type, -kInf));
  }
}

TEST(FloatTypesTest, FiniteDoubleToFloatBits) {
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF16, 65504), 0x7BFFu);
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF16, -65519), 0xFBFFu);  // Rounds to the max.
  absl::StatusOr<uint64_t> result = FiniteDoubleToFloatBits(PT::kF16, 65520);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("f16"), std::string::npos);
  EXPECT_NE(result.status().message().find("65504"), std::string::npos);
  EXPECT_NE(result.status().message().find("65520"), std::string::npos);

  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E4M3FN, 448), 0x7Eu);
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E4M3FN, 464), 0x7Eu);
  result = FiniteDoubleToFloatBits(PT::kF8E4M3FN, -465);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("[-448, 448]"), std::string::npos);
  EXPECT_NE(result.status().message().find("f8e4m3fn"), std::string::npos);

  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF4E2M1FN, 6.9), 0x7u);
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF4E2M1FN, 7).ok());
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF4E2M1FN, -100).ok());
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF4E2M1FN, -0.1), 0x8u);

  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF8E4M3B11FNUZ, 31).ok());
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E4M3B11FNUZ, 30.9), 0x7Fu);
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF8E5M2, 1e5).ok());
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E5M2, 1e-30), 0u);  // Underflow is fine.

  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E8M0FNU, 1e-50), 0x00u);
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF8E8M0FNU, 4), 0x81u);
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF8E8M0FNU, 0).ok());
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF8E8M0FNU, -1).ok());
  result = FiniteDoubleToFloatBits(PT::kF8E8M0FNU, 0x1.8p127);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("f8e8m0fnu"), std::string::npos);

  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF32, FLT_MAX), 0x7F7FFFFFu);
  result = FiniteDoubleToFloatBits(PT::kF32, 3.5e38);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("[-3.4028234663852886e+38, 3.4028234663852886e+38]"),
            std::string::npos);
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kF64, DBL_MAX), F64Bits(DBL_MAX));
  EXPECT_EQ(*FiniteDoubleToFloatBits(PT::kBF16, -65505), 0xC780u);

  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF32, kInf).ok());
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kF16, kNaN).ok());
  EXPECT_FALSE(FiniteDoubleToFloatBits(PT::kS32, 1).ok());

  // Everything in range agrees with DoubleToFloatBits.
  for (PT type : kSmallTypes) {
    SCOPED_TRACE(Name(type));
    for (double value : InterestingValues(type)) {
      if (type == PT::kF8E8M0FNU && value == 0) continue;
      absl::StatusOr<uint64_t> bits = FiniteDoubleToFloatBits(type, value);
      ASSERT_TRUE(bits.ok()) << value << ": " << bits.status();
      EXPECT_EQ(*bits, DoubleToFloatBits(type, value));
    }
  }
}

TEST(FloatTypesTest, FormatF32) {
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(1.0f)), "1");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(0.1f)), "0.1");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(1e10f)), "1e+10");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(FLT_MAX)), "3.40282347e+38");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(-0.0f)), "-0");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(0.0f)), "0");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(-2.5f)), "-2.5");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(1.0f / 3)), "0.333333343");
  // Any 6-digit neighbour of the smallest denormal reads back to it.
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(0x1p-149f)), "1.4013e-45");
  EXPECT_EQ(FormatFloatBits(PT::kF32, F32Bits(std::nextafter(1.0f, 2.0f))), "1.00000012");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0x7F800000), "inf");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0xFF800000), "-inf");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0x7FC00000), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0xFFC00000), "-nan");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0x7F800001), "nan(0x1)");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0xFFC12345), "-nan(0x412345)");
  EXPECT_EQ(FormatFloatBits(PT::kF32, 0x7FFFFFFF), "nan(0x7fffff)");
}

TEST(FloatTypesTest, FormatF64) {
  EXPECT_EQ(FormatFloatBits(PT::kF64, F64Bits(0.1)), "0.1");
  EXPECT_EQ(FormatFloatBits(PT::kF64, F64Bits(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(FormatFloatBits(PT::kF64, F64Bits(1e100)), "1e+100");
  EXPECT_EQ(FormatFloatBits(PT::kF64, F64Bits(-0.0)), "-0");
  EXPECT_EQ(FormatFloatBits(PT::kF64, F64Bits(DBL_MAX)), "1.7976931348623157e+308");
  EXPECT_EQ(FormatFloatBits(PT::kF64, 0x7FF8000000000000), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF64, 0xFFF0000000000002), "-nan(0x2)");
  EXPECT_EQ(FormatFloatBits(PT::kF64, 0xFFF0000000000000), "-inf");
}

TEST(FloatTypesTest, FormatSmallTypes) {
  // XLA prints narrow types with "%.<max_digits10>g".
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x3C00), "1");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x7BFF), "65504");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x3555), "0.33325");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x2E66), "0.099976");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x0001), "5.9605e-08");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x8000), "-0");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x7E00), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0xFE00), "-nan");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0x7C01), "nan(0x1)");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0xFD00), "-nan(0x100)");
  EXPECT_EQ(FormatFloatBits(PT::kF16, 0xFC00), "-inf");
  EXPECT_EQ(FormatFloatBits(PT::kBF16, 0x3F80), "1");
  EXPECT_EQ(FormatFloatBits(PT::kBF16, 0x3DCD), "0.1001");
  EXPECT_EQ(FormatFloatBits(PT::kBF16, 0x7F7F), "3.39e+38");
  EXPECT_EQ(FormatFloatBits(PT::kBF16, 0x7FC1), "nan(0x41)");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FN, 0x7E), "448");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FN, 0x7F), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FN, 0xFF), "-nan");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FN, 0xC2), "-2.5");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FN, 0x01), "0.00195");
  EXPECT_EQ(FormatFloatBits(PT::kF8E4M3FNUZ, 0x80), "-nan");
  EXPECT_EQ(FormatFloatBits(PT::kF8E5M2FNUZ, 0x00), "0");
  EXPECT_EQ(FormatFloatBits(PT::kF8E5M2, 0x7B), "5.7e+04");
  EXPECT_EQ(FormatFloatBits(PT::kF8E5M2, 0x7D), "nan(0x1)");
  EXPECT_EQ(FormatFloatBits(PT::kF8E5M2, 0x7E), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF8E5M2, 0x7C), "inf");
  EXPECT_EQ(FormatFloatBits(PT::kF8E3M4, 0x6F), "15.5");
  EXPECT_EQ(FormatFloatBits(PT::kF8E3M4, 0x7F), "nan(0xf)");
  EXPECT_EQ(FormatFloatBits(PT::kF4E2M1FN, 0x7), "6");
  EXPECT_EQ(FormatFloatBits(PT::kF4E2M1FN, 0x8), "-0");
  EXPECT_EQ(FormatFloatBits(PT::kF4E2M1FN, 0x9), "-0.5");
  EXPECT_EQ(FormatFloatBits(PT::kF8E8M0FNU, 0x7F), "1");
  EXPECT_EQ(FormatFloatBits(PT::kF8E8M0FNU, 0xFF), "nan");
  EXPECT_EQ(FormatFloatBits(PT::kF8E8M0FNU, 0x85), "64");
  EXPECT_EQ(FormatFloatBits(PT::kF8E8M0FNU, 0xFE), "1.7e+38");
  EXPECT_EQ(FormatFloatBits(PT::kS32, 1), "");
}

TEST(FloatTypesTest, FormatShortest) {
  EXPECT_EQ(FormatFloatBitsShortest(PT::kBF16, 0x3DCD), "0.1");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF16, 0x7BFF), "6.55e+04");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF8E4M3FN, 0x7E), "4.5e+02");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF8E4M3FN, 0xFF), "-nan");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF32, F32Bits(FLT_MAX)), "3.4028235e+38");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF32, 0x7F800001), "nan(0x1)");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF64, F64Bits(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF4E2M1FN, 0x8), "-0");
  EXPECT_EQ(FormatFloatBitsShortest(PT::kF8E8M0FNU, 0x7F), "1");
}

int MaxDigits10(PT type) {
  switch (type) {
    case PT::kF16:
      return 5;
    case PT::kBF16:
      return 4;
    case PT::kF8E5M2:
    case PT::kF8E5M2FNUZ:
    case PT::kF4E2M1FN:
    case PT::kF8E8M0FNU:
      return 2;
    default:
      return 3;
  }
}

// For every bit pattern of every narrow type: the XLA-style text is "%.<max_digits10>g", the
// shortest text is the first printf precision that round-trips, and both parse back (strtod,
// then DoubleToFloatBits) to the same bits. NaNs print with the right sign and payload.
TEST(FloatTypesTest, ExhaustiveFormatRoundTrip) {
  for (PT type : kSmallTypes) {
    SCOPED_TRACE(Name(type));
    for (uint64_t bits = 0; bits < PatternCount(type); ++bits) {
      const std::string text = FormatFloatBits(type, bits);
      const std::string shortest = FormatFloatBitsShortest(type, bits);
      ASSERT_FALSE(text.empty());
      if (IsNaNBits(type, bits)) {
        const bool negative = bits >> (BitWidth(type) - 1) == 1 && type != PT::kF8E8M0FNU;
        std::string expected = negative ? "-nan" : "nan";
        if (NaNPayload(type, bits) != DefaultNaNPayload(type)) {
          char payload[32];
          std::snprintf(payload, sizeof(payload), "(0x%llx)",
                        static_cast<unsigned long long>(NaNPayload(type, bits)));
          expected += payload;
        }
        ASSERT_EQ(text, expected);
        ASSERT_EQ(shortest, expected);
        continue;
      }
      for (const std::string& printed : {text, shortest}) {
        char* end = nullptr;
        const double parsed = std::strtod(printed.c_str(), &end);
        ASSERT_EQ(*end, '\0') << printed;
        ASSERT_EQ(DoubleToFloatBits(type, parsed), bits) << printed;
      }
      if (IsInfinityBits(type, bits)) {
        EXPECT_EQ(text, bits >> (BitWidth(type) - 1) ? "-inf" : "inf");
        continue;
      }
      const double value = FloatBitsToDouble(type, bits);
      char buffer[64];
      std::snprintf(buffer, sizeof(buffer), "%.*g", MaxDigits10(type), value);
      ASSERT_EQ(text, buffer);
      std::string first_round_trip;
      for (int precision = 1; precision <= 17 && first_round_trip.empty(); ++precision) {
        std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
        if (DoubleToFloatBits(type, std::strtod(buffer, nullptr)) == bits) {
          first_round_trip = buffer;
        }
      }
      ASSERT_EQ(shortest, first_round_trip);
    }
  }
}

TEST(FloatTypesTest, SampledF32FormatRoundTrip) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 300000; ++i) {
    const uint32_t bits = static_cast<uint32_t>(rng());
    const float value = std::bit_cast<float>(bits);
    if (std::isnan(value)) continue;
    const std::string text = FormatFloatBits(PT::kF32, bits);
    char* end = nullptr;
    const float parsed = std::strtof(text.c_str(), &end);
    ASSERT_EQ(*end, '\0') << text;
    ASSERT_EQ(F32Bits(parsed), bits) << text;
    // XLA's rule: the %.6g form whenever it round-trips.
    char short_form[64];
    std::snprintf(short_form, sizeof(short_form), "%.6g", static_cast<double>(value));
    if (std::strtof(short_form, nullptr) == value) {
      ASSERT_EQ(text, short_form);
    } else {
      char long_form[64];
      std::snprintf(long_form, sizeof(long_form), "%.9g", static_cast<double>(value));
      ASSERT_EQ(text, long_form);
    }
  }
}

}  // namespace
}  // namespace hlowb
