// Elementwise semantics: unary, binary, compare, select, clamp, convert, bitcast-convert,
// reduce-precision on each element type class (pred, signed, unsigned, sub-byte, f32, f64,
// narrow floats, complex). Expected values are written by hand from the definitions.
#include "gtest/gtest.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace hlowb::testing {
namespace {

std::string Un(const std::string& op, const std::string& type, const std::string& values,
               const std::string& out_type = "") {
  std::string ot = out_type.empty() ? type : out_type;
  return Op(ot + " " + op + "(p0)", {type}, {type + " " + values});
}
std::string Bin(const std::string& op, const std::string& type, const std::string& a,
                const std::string& b, const std::string& out_type = "") {
  std::string ot = out_type.empty() ? type : out_type;
  return Op(ot + " " + op + "(p0, p1)", {type, type}, {type + " " + a, type + " " + b});
}

TEST(EvalElementwise, AddEveryTypeClass) {
  EXPECT_EQ(Bin("add", "f32[3]", "{1, 2, 3}", "{10, 20, 30.5}"), "f32[3] {11, 22, 33.5}");
  EXPECT_EQ(Bin("add", "f64[2]", "{0.5, -1}", "{0.25, 1}"), "f64[2] {0.75, 0}");
  EXPECT_EQ(Bin("add", "s32[2]", "{2147483647, -5}", "{1, 3}"), "s32[2] {-2147483648, -2}");
  EXPECT_EQ(Bin("add", "u8[2]", "{255, 7}", "{1, 1}"), "u8[2] {0, 8}");
  EXPECT_EQ(Bin("add", "s4[3]", "{7, -8, 3}", "{1, -1, 2}"), "s4[3] {-8, 7, 5}");
  EXPECT_EQ(Bin("add", "u4[2]", "{15, 3}", "{1, 4}"), "u4[2] {0, 7}");
  EXPECT_EQ(Bin("add", "u2[2]", "{3, 1}", "{1, 1}"), "u2[2] {0, 2}");
  EXPECT_EQ(Bin("add", "bf16[2]", "{1, 256}", "{0.00390625, 1}"), "bf16[2] {1, 256}");
  EXPECT_EQ(Bin("add", "f16[2]", "{1, 65504}", "{0.0009765625, 65504}"), "f16[2] {1.001, inf}");
  EXPECT_EQ(Bin("add", "f8e4m3fn[2]", "{1, 448}", "{0.125, 448}"), "f8e4m3fn[2] {1.12, nan}");
  EXPECT_EQ(Bin("add", "c64[1]", "{(1, 2)}", "{(3, -1)}"), "c64[1] {(4, 1)}");
  EXPECT_EQ(Bin("add", "c128[1]", "{(1, 2)}", "{(0.5, 0.5)}"), "c128[1] {(1.5, 2.5)}");
}

// Narrow floats are computed block by block; results must not depend on where the blocks
// fall. 20,000 elements span several blocks and end inside one.
TEST(EvalElementwise, NarrowFloatsAcrossBlocks) {
  const std::string module = R"(HloModule m
ENTRY e {
  i = s32[20000] iota(), iota_dimension=0
  m = s32[] constant(128)
  mb = s32[20000] broadcast(m), dimensions={}
  r = s32[20000] remainder(i, mb)
  f = bf16[20000] convert(r)
  one = bf16[] constant(1)
  ob = bf16[20000] broadcast(one), dimensions={}
  s = bf16[20000] add(f, ob)
  ROOT n = bf16[20000] negate(s)
}
)";
  std::string expected = "bf16[20000] {";
  for (int i = 0; i < 20000; ++i) {
    expected += (i ? ", " : "") + std::to_string(-(i % 128 + 1));
  }
  expected += "}";
  EXPECT_EQ(hlowb::testing::Run(module), expected);

  // A pred result (is-finite) from an f16 operand, across blocks.
  const std::string finite = R"(HloModule m
ENTRY e {
  i = s32[20000] iota(), iota_dimension=0
  f = f16[20000] convert(i)
  ROOT k = pred[20000] is-finite(f)
}
)";
  // f16 holds integers up to 65504 exactly enough to stay finite: every element is.
  std::string all_true = "pred[20000] {";
  for (int i = 0; i < 20000; ++i) all_true += i ? ", 1" : "1";
  all_true += "}";
  EXPECT_EQ(hlowb::testing::Run(finite), all_true);
}

TEST(EvalElementwise, ArithmeticBinaries) {
  EXPECT_EQ(Bin("subtract", "s8[2]", "{-128, 5}", "{1, 7}"), "s8[2] {127, -2}");
  EXPECT_EQ(Bin("multiply", "s16[2]", "{300, -3}", "{300, 4}"), "s16[2] {24464, -12}");
  EXPECT_EQ(Bin("multiply", "c64[1]", "{(1, 2)}", "{(3, 4)}"), "c64[1] {(-5, 10)}");
  EXPECT_EQ(Bin("divide", "s32[4]", "{7, -7, 7, -7}", "{2, 2, -2, -2}"), "s32[4] {3, -3, -3, 3}");
  EXPECT_EQ(Bin("divide", "f32[2]", "{1, -1}", "{0, 0}"), "f32[2] {inf, -inf}");
  EXPECT_EQ(Bin("remainder", "s32[4]", "{7, -7, 7, -7}", "{3, 3, -3, -3}"), "s32[4] {1, -1, 1, -1}");
  EXPECT_EQ(Bin("remainder", "f32[2]", "{5.5, -5.5}", "{2, 2}"), "f32[2] {1.5, -1.5}");
  EXPECT_EQ(Bin("power", "f32[2]", "{2, 9}", "{10, 0.5}"), "f32[2] {1024, 3}");
  EXPECT_EQ(Bin("power", "s32[5]", "{2, 3, 2, -1, 0}", "{10, 3, -1, -3, 0}"), "s32[5] {1024, 27, 0, -1, 1}");
  EXPECT_EQ(Bin("atan2", "f64[2]", "{0, 1}", "{-1, 0}"), "f64[2] {3.1415926535897931, 1.5707963267948966}");
  EXPECT_EQ(Bin("maximum", "u32[2]", "{4294967295, 1}", "{0, 2}"), "u32[2] {4294967295, 2}");
  EXPECT_EQ(Bin("minimum", "s64[2]", "{-9223372036854775808, 1}", "{0, 2}"), "s64[2] {-9223372036854775808, 1}");
  EXPECT_EQ(Bin("mulhi", "s32[2]", "{65536, -1}", "{65536, 1}"), "s32[2] {1, -1}");
  EXPECT_EQ(Bin("mulhi", "u32[1]", "{4294967295}", "{4294967295}"), "u32[1] {4294967294}");
  EXPECT_EQ(Op("c64[2] complex(p0, p1)", {"f32[2]", "f32[2]"}, {"f32[2] {1, 2}", "f32[2] {3, 4}"}),
            "c64[2] {(1, 3), (2, 4)}");
}

TEST(EvalElementwise, BitwiseAndLogical) {
  EXPECT_EQ(Bin("and", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"), "pred[4] {0, 0, 0, 1}");
  EXPECT_EQ(Bin("or", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"), "pred[4] {0, 1, 1, 1}");
  EXPECT_EQ(Bin("xor", "pred[4]", "{0, 0, 1, 1}", "{0, 1, 0, 1}"), "pred[4] {0, 1, 1, 0}");
  EXPECT_EQ(Un("not", "pred[2]", "{0, 1}"), "pred[2] {1, 0}");
  EXPECT_EQ(Bin("and", "u8[1]", "{12}", "{10}"), "u8[1] {8}");
  EXPECT_EQ(Bin("or", "s32[1]", "{12}", "{3}"), "s32[1] {15}");
  EXPECT_EQ(Bin("xor", "u16[1]", "{65535}", "{255}"), "u16[1] {65280}");
  EXPECT_EQ(Un("not", "s8[2]", "{0, 5}"), "s8[2] {-1, -6}");
  EXPECT_EQ(Un("not", "u4[2]", "{0, 5}"), "u4[2] {15, 10}");
  EXPECT_EQ(Un("popcnt", "u32[2]", "{255, 4294967295}"), "u32[2] {8, 32}");
  EXPECT_EQ(Un("popcnt", "s4[2]", "{-1, 3}"), "s4[2] {4, 2}");
  EXPECT_EQ(Un("count-leading-zeros", "u32[3]", "{0, 1, 4294967295}"), "u32[3] {32, 31, 0}");
  EXPECT_EQ(Un("count-leading-zeros", "s4[3]", "{0, 1, -1}"), "s4[3] {4, 3, 0}");
}

TEST(EvalElementwise, Unaries) {
  EXPECT_EQ(Un("abs", "s32[2]", "{-5, -2147483648}"), "s32[2] {5, -2147483648}");
  EXPECT_EQ(Un("abs", "f32[2]", "{-1.5, -0}"), "f32[2] {1.5, 0}");
  EXPECT_EQ(Un("abs", "c64[1]", "{(3, -4)}", "f32[1]"), "f32[1] {5}");
  EXPECT_EQ(Un("negate", "s8[1]", "{-128}"), "s8[1] {-128}");
  EXPECT_EQ(Un("negate", "u8[1]", "{1}"), "u8[1] {255}");
  EXPECT_EQ(Un("negate", "bf16[1]", "{1.5}"), "bf16[1] {-1.5}");
  EXPECT_EQ(Un("sign", "f32[4]", "{-2, 0, 3, nan}"), "f32[4] {-1, 0, 1, nan}");
  EXPECT_EQ(Un("sign", "s32[3]", "{-7, 0, 9}"), "s32[3] {-1, 0, 1}");
  EXPECT_EQ(Un("sign", "c64[1]", "{(3, 4)}"), "c64[1] {(0.6, 0.8)}");
  EXPECT_EQ(Un("floor", "f32[2]", "{-1.5, 1.5}"), "f32[2] {-2, 1}");
  EXPECT_EQ(Un("ceil", "f32[2]", "{-1.5, 1.5}"), "f32[2] {-1, 2}");
  EXPECT_EQ(Un("round-nearest-afz", "f32[4]", "{0.5, 1.5, 2.5, -2.5}"), "f32[4] {1, 2, 3, -3}");
  EXPECT_EQ(Un("round-nearest-even", "f32[4]", "{0.5, 1.5, 2.5, -2.5}"), "f32[4] {0, 2, 2, -2}");
  EXPECT_EQ(Un("exponential", "f64[2]", "{0, 1}"), "f64[2] {1, 2.7182818284590451}");
  EXPECT_EQ(Un("exponential-minus-one", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("log", "f32[3]", "{1, 0, -1}"), "f32[3] {0, -inf, -nan}");
  EXPECT_EQ(Un("log-plus-one", "f32[1]", "{0}"), "f32[1] {0}");
  EXPECT_EQ(Un("logistic", "f32[1]", "{0}"), "f32[1] {0.5}");
  EXPECT_EQ(Un("sqrt", "f32[2]", "{4, -1}"), "f32[2] {2, -nan}");
  EXPECT_EQ(Un("rsqrt", "f32[1]", "{4}"), "f32[1] {0.5}");
  EXPECT_EQ(Un("cbrt", "f32[1]", "{-8}"), "f32[1] {-2}");
  EXPECT_EQ(Un("sine", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("cosine", "f64[1]", "{0}"), "f64[1] {1}");
  EXPECT_EQ(Un("tan", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("tanh", "f32[1]", "{0}"), "f32[1] {0}");
  EXPECT_EQ(Un("sinh", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("cosh", "f64[1]", "{0}"), "f64[1] {1}");
  EXPECT_EQ(Un("asin", "f64[1]", "{1}"), "f64[1] {1.5707963267948966}");
  EXPECT_EQ(Un("acos", "f64[1]", "{1}"), "f64[1] {0}");
  EXPECT_EQ(Un("atan", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("asinh", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("acosh", "f64[1]", "{1}"), "f64[1] {0}");
  EXPECT_EQ(Un("atanh", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("erf", "f64[1]", "{0}"), "f64[1] {0}");
  EXPECT_EQ(Un("is-finite", "f32[4]", "{1, inf, -inf, nan}", "pred[4]"), "pred[4] {1, 0, 0, 0}");
  EXPECT_EQ(Un("is-finite", "bf16[2]", "{1, inf}", "pred[2]"), "pred[2] {1, 0}");
  EXPECT_EQ(Un("real", "c64[1]", "{(1, 2)}", "f32[1]"), "f32[1] {1}");
  EXPECT_EQ(Un("imag", "c128[1]", "{(1, 2)}", "f64[1]"), "f64[1] {2}");
  EXPECT_EQ(Un("exponential", "c128[1]", "{(0, 0)}"), "c128[1] {(1, 0)}");
  EXPECT_EQ(Un("copy", "f8e5m2[2]", "{1, -2}"), "f8e5m2[2] {1, -2}");
  EXPECT_EQ(Un("sqrt", "f16[1]", "{2}"), "f16[1] {1.4141}");
  EXPECT_EQ(Un("exponential", "f8e4m3fn[1]", "{1}"), "f8e4m3fn[1] {2.75}");
}

TEST(EvalElementwise, CompareDirectionsAndTypes) {
  const char* dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  const char* expect[] = {"pred[3] {0, 1, 0}", "pred[3] {1, 0, 1}", "pred[3] {0, 1, 1}",
                          "pred[3] {0, 0, 1}", "pred[3] {1, 1, 0}", "pred[3] {1, 0, 0}"};
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(Op(std::string("pred[3] compare(p0, p1), direction=") + dirs[i], {"s32[3]", "s32[3]"},
                 {"s32[3] {1, 2, 3}", "s32[3] {2, 2, 2}"}),
              expect[i])
        << dirs[i];
  }
  // Unsigned view of signed bits: -1 is the largest.
  EXPECT_EQ(Op("pred[1] compare(p0, p1), direction=GT, type=UNSIGNED", {"s32[1]", "s32[1]"},
               {"s32[1] {-1}", "s32[1] {1}"}),
            "pred[1] {1}");
  EXPECT_EQ(Op("pred[1] compare(p0, p1), direction=GT, type=SIGNED", {"u8[1]", "u8[1]"},
               {"u8[1] {255}", "u8[1] {1}"}),
            "pred[1] {0}");
  // FLOAT: NaN unordered; TOTALORDER: -0 < +0 and NaN above inf.
  EXPECT_EQ(Op("pred[3] compare(p0, p1), direction=LT", {"f32[3]", "f32[3]"},
               {"f32[3] {nan, -0, 1}", "f32[3] {1, 0, inf}"}),
            "pred[3] {0, 0, 1}");
  EXPECT_EQ(Op("pred[3] compare(p0, p1), direction=LT, type=TOTALORDER", {"f32[3]", "f32[3]"},
               {"f32[3] {inf, -0, -nan}", "f32[3] {nan, 0, -inf}"}),
            "pred[3] {1, 1, 1}");
  EXPECT_EQ(Op("pred[2] compare(p0, p1), direction=NE", {"f32[2]", "f32[2]"},
               {"f32[2] {nan, 1}", "f32[2] {nan, 1}"}),
            "pred[2] {1, 0}");
  EXPECT_EQ(Op("pred[2] compare(p0, p1), direction=EQ", {"c64[2]", "c64[2]"},
               {"c64[2] {(1, 2), (1, 2)}", "c64[2] {(1, 2), (1, 3)}"}),
            "pred[2] {1, 0}");
  EXPECT_EQ(Op("pred[2] compare(p0, p1), direction=GE", {"bf16[2]", "bf16[2]"},
               {"bf16[2] {1, 2}", "bf16[2] {1, 3}"}),
            "pred[2] {1, 0}");
  EXPECT_EQ(Op("pred[2] compare(p0, p1), direction=GT", {"pred[2]", "pred[2]"},
               {"pred[2] {1, 0}", "pred[2] {0, 1}"}),
            "pred[2] {1, 0}");
}

TEST(EvalElementwise, SelectAndClamp) {
  EXPECT_EQ(Op("f32[3] select(p0, p1, p2)", {"pred[3]", "f32[3]", "f32[3]"},
               {"pred[3] {1, 0, 1}", "f32[3] {1, 2, 3}", "f32[3] {10, 20, 30}"}),
            "f32[3] {1, 20, 3}");
  EXPECT_EQ(Op("s8[2] select(p0, p1, p2)", {"pred[]", "s8[2]", "s8[2]"},
               {"pred[] 0", "s8[2] {1, 2}", "s8[2] {3, 4}"}),
            "s8[2] {3, 4}");
  EXPECT_EQ(Op("f32[4] clamp(p0, p1, p2)", {"f32[]", "f32[4]", "f32[]"},
               {"f32[] 0", "f32[4] {-1, 0.5, 7, nan}", "f32[] 6"}),
            "f32[4] {0, 0.5, 6, nan}");
  EXPECT_EQ(Op("s32[3] clamp(p0, p1, p2)", {"s32[3]", "s32[3]", "s32[3]"},
               {"s32[3] {0, 0, 5}", "s32[3] {-3, 3, 1}", "s32[3] {2, 2, 9}"}),
            "s32[3] {0, 2, 5}");
}

TEST(EvalElementwise, Convert) {
  EXPECT_EQ(Op("s32[5] convert(p0)", {"f32[5]"}, {"f32[5] {1.9, -1.9, 3e10, -3e10, nan}"}),
            "s32[5] {1, -1, 2147483647, -2147483648, 0}");
  EXPECT_EQ(Op("u8[3] convert(p0)", {"f32[3]"}, {"f32[3] {-5, 300, 7.5}"}), "u8[3] {0, 255, 7}");
  EXPECT_EQ(Op("pred[4] convert(p0)", {"f32[4]"}, {"f32[4] {0, -0, 2, nan}"}), "pred[4] {0, 0, 1, 1}");
  EXPECT_EQ(Op("f32[2] convert(p0)", {"pred[2]"}, {"pred[2] {1, 0}"}), "f32[2] {1, 0}");
  EXPECT_EQ(Op("s8[2] convert(p0)", {"s32[2]"}, {"s32[2] {300, -129}"}), "s8[2] {44, 127}");
  EXPECT_EQ(Op("s4[2] convert(p0)", {"s32[2]"}, {"s32[2] {9, -9}"}), "s4[2] {-7, 7}");
  EXPECT_EQ(Op("u32[1] convert(p0)", {"s8[1]"}, {"s8[1] {-1}"}), "u32[1] {4294967295}");
  EXPECT_EQ(Op("bf16[3] convert(p0)", {"f64[3]"}, {"f64[3] {1.00390625, 1.01171875, 1e39}"}),
            "bf16[3] {1, 1.016, inf}");
  EXPECT_EQ(Op("f16[2] convert(p0)", {"f32[2]"}, {"f32[2] {65519, 65520}"}), "f16[2] {65504, inf}");
  EXPECT_EQ(Op("f8e4m3fn[2] convert(p0)", {"f32[2]"}, {"f32[2] {464, 1000}"}),
            "f8e4m3fn[2] {448, nan}");
  EXPECT_EQ(Op("f8e5m2[2] convert(p0)", {"f32[2]"}, {"f32[2] {1.125, 1e6}"}), "f8e5m2[2] {1, inf}");
  EXPECT_EQ(Op("f4e2m1fn[2] convert(p0)", {"f32[2]"}, {"f32[2] {2.5, 100}"}), "f4e2m1fn[2] {2, 6}");
  EXPECT_EQ(Op("f8e4m3fnuz[1] convert(p0)", {"f32[1]"}, {"f32[1] {-0}"}), "f8e4m3fnuz[1] {0}");
  EXPECT_EQ(Op("bf16[1] convert(p0)", {"f8e4m3fn[1]"}, {"f8e4m3fn[1] {448}"}), "bf16[1] {448}");
  EXPECT_EQ(Op("s32[2] convert(p0)", {"bf16[2]"}, {"bf16[2] {-2.5, 1e30}"}), "s32[2] {-2, 2147483647}");
  EXPECT_EQ(Op("f32[1] convert(p0)", {"c64[1]"}, {"c64[1] {(3, 4)}"}), "f32[1] {3}");
  EXPECT_EQ(Op("c128[1] convert(p0)", {"s32[1]"}, {"s32[1] {5}"}), "c128[1] {(5, 0)}");
  EXPECT_EQ(Op("f32[1] convert(p0)", {"s64[1]"}, {"s64[1] {16777217}"}), "f32[1] {16777216}");
}

TEST(EvalElementwise, BitcastConvert) {
  EXPECT_EQ(Op("u32[2] bitcast-convert(p0)", {"f32[2]"}, {"f32[2] {1, -2}"}),
            "u32[2] {1065353216, 3221225472}");
  EXPECT_EQ(Op("u8[4] bitcast-convert(p0)", {"s32[]"}, {"s32[] 258"}), "u8[4] {2, 1, 0, 0}");
  EXPECT_EQ(Op("u16[] bitcast-convert(p0)", {"u8[2]"}, {"u8[2] {1, 2}"}), "u16[] 513");
  EXPECT_EQ(Op("u4[2] bitcast-convert(p0)", {"u8[]"}, {"u8[] 171"}), "u4[2] {11, 10}");
  EXPECT_EQ(Op("s4[2] bitcast-convert(p0)", {"u4[2]"}, {"u4[2] {15, 7}"}), "s4[2] {-1, 7}");
  EXPECT_EQ(Op("u16[1] bitcast-convert(p0)", {"bf16[1]"}, {"bf16[1] {1}"}), "u16[1] {16256}");
}

TEST(EvalElementwise, ReducePrecision) {
  // To bf16's precision (8 exponent, 7 mantissa bits), round to nearest even.
  EXPECT_EQ(Op("f32[3] reduce-precision(p0), exponent_bits=8, mantissa_bits=7", {"f32[3]"},
               {"f32[3] {1.00390625, 1.01171875, nan}"}),
            "f32[3] {1, 1.015625, nan}");
  // To f16's range: overflow to inf, tiny to zero.
  EXPECT_EQ(Op("f32[2] reduce-precision(p0), exponent_bits=5, mantissa_bits=10", {"f32[2]"},
               {"f32[2] {70000, 1e-10}"}),
            "f32[2] {inf, 0}");
  EXPECT_EQ(Op("bf16[1] reduce-precision(p0), exponent_bits=8, mantissa_bits=2", {"bf16[1]"},
               {"bf16[1] {1.375}"}),
            "bf16[1] {1.5}");
}

TEST(EvalElementwise, StochasticConvert) {
  // |x| = 1.25: fraction .25 of 2^8 = 64; random 10 < 64 rounds up, 200 does not.
  EXPECT_EQ(Op("s32[3] stochastic-convert(p0, p1)", {"f32[3]", "u32[3]"},
               {"f32[3] {1.25, 1.25, -1.25}", "u32[3] {1073741823, 3221225472, 0}"}),
            "s32[3] {2, 1, -2}");
}

TEST(EvalElementwise, Map) {
  EXPECT_EQ(hlowb::testing::Run(R"(
HloModule m
sq { a = f32[] parameter(0)  b = f32[] parameter(1)  m = f32[] multiply(a, a)  ROOT s = f32[] subtract(m, b) }
ENTRY e {
  p0 = f32[3] parameter(0)
  p1 = f32[3] parameter(1)
  ROOT r = f32[3] map(p0, p1), dimensions={0}, to_apply=sq
})",
                {"f32[3] {1, 2, 3}", "f32[3] {1, 1, 1}"}),
            "f32[3] {0, 3, 8}");
}

}  // namespace
}  // namespace hlowb::testing
