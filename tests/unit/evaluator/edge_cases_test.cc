// One test per row of the edge-case table in replay/evaluator/semantics.h.
#include "gtest/gtest.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace hlowb::testing {
namespace {

std::string Bin(const std::string& op, const std::string& type, const std::string& a,
                const std::string& b) {
  return Op(type + " " + op + "(p0, p1)", {type, type}, {type + " " + a, type + " " + b});
}

TEST(EvalEdgeCases, IntegerDivisionAndRemainder) {
  EXPECT_EQ(Bin("divide", "s32[2]", "{7, -7}", "{0, 0}"), "s32[2] {-1, -1}");
  EXPECT_EQ(Bin("divide", "u8[1]", "{7}", "{0}"), "u8[1] {255}");
  EXPECT_EQ(Bin("remainder", "s32[2]", "{7, -7}", "{0, 0}"), "s32[2] {7, -7}");
  EXPECT_EQ(Bin("divide", "s32[1]", "{-2147483648}", "{-1}"), "s32[1] {-2147483648}");
  EXPECT_EQ(Bin("remainder", "s32[1]", "{-2147483648}", "{-1}"), "s32[1] {0}");
  EXPECT_EQ(Bin("divide", "s8[1]", "{-128}", "{-1}"), "s8[1] {-128}");
  EXPECT_EQ(Bin("divide", "s4[2]", "{-8, 5}", "{-1, 0}"), "s4[2] {-8, -1}");
}

TEST(EvalEdgeCases, ShiftsByBitWidthOrMore) {
  EXPECT_EQ(Bin("shift-left", "s32[3]", "{1, 1, 1}", "{31, 32, -1}"), "s32[3] {-2147483648, 0, 0}");
  EXPECT_EQ(Bin("shift-right-logical", "s32[2]", "{-1, -1}", "{28, 32}"), "s32[2] {15, 0}");
  EXPECT_EQ(Bin("shift-right-arithmetic", "s32[3]", "{-8, -8, 8}", "{1, 40, 40}"), "s32[3] {-4, -1, 0}");
  EXPECT_EQ(Bin("shift-right-arithmetic", "u8[2]", "{128, 128}", "{1, 8}"), "u8[2] {192, 255}");
  EXPECT_EQ(Bin("shift-left", "u4[2]", "{1, 1}", "{3, 4}"), "u4[2] {8, 0}");
  EXPECT_EQ(Bin("shift-right-logical", "s4[2]", "{-1, -1}", "{1, 4}"), "s4[2] {7, 0}");
}

TEST(EvalEdgeCases, MaxMinPropagateNaN) {
  EXPECT_EQ(Bin("maximum", "f32[3]", "{nan, 1, -0}", "{1, nan, 0}"), "f32[3] {nan, nan, -0}");
  EXPECT_EQ(Bin("minimum", "f32[2]", "{nan, 1}", "{1, nan}"), "f32[2] {nan, nan}");
  EXPECT_EQ(Bin("maximum", "bf16[1]", "{nan}", "{1}"), "bf16[1] {nan}");
}

TEST(EvalEdgeCases, FloatToIntSaturatesAndNaNIsZero) {
  EXPECT_EQ(Op("s8[4] convert(p0)", {"f32[4]"}, {"f32[4] {1000, -1000, nan, -0.9}"}),
            "s8[4] {127, -128, 0, 0}");
  EXPECT_EQ(Op("u16[2] convert(p0)", {"f64[2]"}, {"f64[2] {-inf, inf}"}), "u16[2] {0, 65535}");
  EXPECT_EQ(Op("s64[1] convert(p0)", {"f32[1]"}, {"f32[1] {1e30}"}), "s64[1] {9223372036854775807}");
}

TEST(EvalEdgeCases, NarrowFloatRounding) {
  // Ties to even: bf16 1 + 2^-8 is halfway between 1 and 1+2^-7 -> 1; 1 + 3*2^-8 -> 1 + 2^-6.
  EXPECT_EQ(Op("bf16[2] convert(p0)", {"f32[2]"}, {"f32[2] {1.00390625, 1.01171875}"}),
            "bf16[2] {1, 1.016}");
  // Overflow: inf where the type has it, NaN for e4m3fn, saturation for e2m1fn.
  EXPECT_EQ(Op("f8e5m2[1] convert(p0)", {"f32[1]"}, {"f32[1] {70000}"}), "f8e5m2[1] {inf}");
  EXPECT_EQ(Op("f8e4m3fn[1] convert(p0)", {"f32[1]"}, {"f32[1] {500}"}), "f8e4m3fn[1] {nan}");
  EXPECT_EQ(Op("f4e2m1fn[1] convert(p0)", {"f32[1]"}, {"f32[1] {-9}"}), "f4e2m1fn[1] {-6}");
  EXPECT_EQ(Op("f8e4m3b11fnuz[1] convert(p0)", {"f32[1]"}, {"f32[1] {-0}"}), "f8e4m3b11fnuz[1] {0}");
  EXPECT_EQ(Op("f8e8m0fnu[1] convert(p0)", {"f32[1]"}, {"f32[1] {3}"}), "f8e8m0fnu[1] {4}");
  EXPECT_EQ(Op("f8e3m4[1] convert(p0)", {"f32[1]"}, {"f32[1] {1.03125}"}), "f8e3m4[1] {1}");
  EXPECT_EQ(Op("f8e5m2fnuz[1] convert(p0)", {"f32[1]"}, {"f32[1] {1e9}"}), "f8e5m2fnuz[1] {-nan}");
  EXPECT_EQ(Op("f8e4m3[1] convert(p0)", {"f32[1]"}, {"f32[1] {1e9}"}), "f8e4m3[1] {inf}");
  // Arithmetic rounds once from the exact result.
  EXPECT_EQ(Bin("multiply", "f16[1]", "{3}", "{0.33325195}"), "f16[1] {1}");  // tie -> even
}

TEST(EvalEdgeCases, TotalOrderCompare) {
  EXPECT_EQ(Op("pred[4] compare(p0, p1), direction=LT, type=TOTALORDER", {"f32[4]", "f32[4]"},
               {"f32[4] {-nan, -inf, -0, inf}", "f32[4] {-inf, -0, 0, nan}"}),
            "pred[4] {1, 1, 1, 1}");
  EXPECT_EQ(Op("pred[1] compare(p0, p1), direction=EQ, type=TOTALORDER", {"f32[1]", "f32[1]"},
               {"f32[1] {nan}", "f32[1] {nan}"}),
            "pred[1] {1}");
}

TEST(EvalEdgeCases, IndexClamping) {
  EXPECT_EQ(Op("s32[1,2] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0}, "
               "index_vector_dim=1, slice_sizes={2}",
               {"s32[3]", "s32[1,1]"}, {"s32[3] {1, 2, 3}", "s32[1,1] {{-5}}"}),
            "s32[1,2] { { 1, 2 } }");
  EXPECT_EQ(Op("s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}", {"s32[3]", "s64[]"},
               {"s32[3] {1, 2, 3}", "s64[] 9223372036854775807"}),
            "s32[2] {2, 3}");
  EXPECT_EQ(Op("s32[3] dynamic-update-slice(p0, p1, p2)", {"s32[3]", "s32[2]", "s32[]"},
               {"s32[3] {0, 0, 0}", "s32[2] {1, 2}", "s32[] -4"}),
            "s32[3] {1, 2, 0}");
}

TEST(EvalEdgeCases, ScatterDuplicatesInOrderAndOutOfBoundsSkipped) {
  // Non-commutative combiner (a*10 + b) shows the order: 0 -> 1 -> 12.
  EXPECT_EQ(Op("s32[2] scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb",
               {"s32[2]", "s32[3,1]", "s32[3]"},
               {"s32[2] {0, 0}", "s32[3,1] {{0}, {0}, {2}}", "s32[3] {1, 2, 3}"},
               "comb { a = s32[] parameter(0)  b = s32[] parameter(1)  t = s32[] constant(10)  "
               "m = s32[] multiply(a, t)  ROOT r = s32[] add(m, b) }"),
            "s32[2] {12, 0}");
  // A window [2] starting at 1 in a [2] operand leaves it: skipped entirely.
  EXPECT_EQ(Op("s32[2] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb",
               {"s32[2]", "s32[1,1]", "s32[1,2]"},
               {"s32[2] {5, 5}", "s32[1,1] {{1}}", "s32[1,2] {{1, 1}}"},
               "comb { a = s32[] parameter(0)  ROOT b = s32[] parameter(1) }"),
            "s32[2] {5, 5}");
}

TEST(EvalEdgeCases, IntegerPowerAndWrap) {
  EXPECT_EQ(Bin("power", "s32[4]", "{1, -1, -1, 2}", "{-5, -5, -4, 31}"), "s32[4] {1, -1, 1, -2147483648}");
  EXPECT_EQ(Bin("power", "u8[1]", "{2}", "{9}"), "u8[1] {0}");
}

}  // namespace
}  // namespace hlowb::testing
