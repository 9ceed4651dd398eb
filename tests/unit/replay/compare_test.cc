// Literal comparison: error bounds (both must be exceeded), XLA's NaN/Inf rules, exact integers,
// the worst-element report, tuples and statistics.
#include "replay/compare/compare.h"

#include "gtest/gtest.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;

ComparisonReport Cmp(const std::string& expected, const std::string& actual, ErrorBounds b = {}) {
  return CompareLiterals(Lit(expected), Lit(actual), b);
}

TEST(Compare, DefaultBoundsAreRunHloModules) {
  ErrorBounds b;
  EXPECT_EQ(b.abs, 1e-3);
  EXPECT_EQ(b.rel, 1e-3);
}

TEST(Compare, MismatchNeedsBothBoundsExceeded) {
  EXPECT_TRUE(Cmp("f32[1]{0} {1}", "f32[1]{0} {1.0005}").ok());       // abs 5e-4
  EXPECT_TRUE(Cmp("f32[1]{0} {1000}", "f32[1]{0} {1000.5}").ok());    // abs 0.5, rel 5e-4
  EXPECT_TRUE(Cmp("f32[1]{0} {0}", "f32[1]{0} {0.0005}").ok());       // rel inf, abs 5e-4
  EXPECT_FALSE(Cmp("f32[1]{0} {0}", "f32[1]{0} {0.01}").ok());        // rel inf, abs 0.01
  EXPECT_FALSE(Cmp("f32[1]{0} {1}", "f32[1]{0} {1.1}").ok());
  ErrorBounds loose{0.2, 0.2};
  EXPECT_TRUE(Cmp("f32[1]{0} {1}", "f32[1]{0} {1.1}", loose).ok());
  ErrorBounds tight_abs{0, 1};  // rel 0.1 <= 1: fine although abs is exceeded
  EXPECT_TRUE(Cmp("f32[1]{0} {1}", "f32[1]{0} {1.1}", tight_abs).ok());
  EXPECT_TRUE(Cmp("f32[2]{0} {0, -0}", "f32[2]{0} {-0, 0}", ErrorBounds{0, 0}).ok());
}

TEST(Compare, NaNRules) {
  // NaN matches NaN whatever the sign or payload.
  EXPECT_TRUE(Cmp("f32[2]{0} {nan, -nan}", "f32[2]{0} {-nan, nan(0x123)}").ok());
  ComparisonReport r = Cmp("f32[3]{0} {nan, 1, 2}", "f32[3]{0} {1, nan, 2}");
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_EQ(r.outputs[0].mismatches, 2);
  EXPECT_EQ(r.outputs[0].nan_mismatches, 2);
  EXPECT_TRUE(std::isinf(r.outputs[0].max_abs_error));
  // relaxed_nans: an expected NaN matches anything, not the other way round.
  ErrorBounds relaxed;
  relaxed.relaxed_nans = true;
  EXPECT_TRUE(Cmp("f32[1]{0} {nan}", "f32[1]{0} {5}", relaxed).ok());
  EXPECT_FALSE(Cmp("f32[1]{0} {5}", "f32[1]{0} {nan}", relaxed).ok());
  EXPECT_TRUE(Cmp("bf16[1]{0} {nan}", "bf16[1]{0} {-nan}").ok());
}

TEST(Compare, InfRules) {
  EXPECT_TRUE(Cmp("f32[2]{0} {inf, -inf}", "f32[2]{0} {inf, -inf}", ErrorBounds{0, 0}).ok());
  EXPECT_FALSE(Cmp("f32[1]{0} {inf}", "f32[1]{0} {-inf}", ErrorBounds{1e30, 1e30}).ok());
  // Inf against a finite value: infinite errors, whatever the bounds.
  EXPECT_FALSE(Cmp("f32[1]{0} {3.40282347e+38}", "f32[1]{0} {inf}", ErrorBounds{1e38, 1e38}).ok());
  EXPECT_FALSE(Cmp("f32[1]{0} {inf}", "f32[1]{0} {1}", ErrorBounds{1e38, 1e38}).ok());
  // fewer_infs_ok: an actual inf compares as the largest finite value.
  ErrorBounds fewer;
  fewer.fewer_infs_ok = true;
  EXPECT_TRUE(Cmp("f32[1]{0} {3.40282347e+38}", "f32[1]{0} {inf}", fewer).ok());
  EXPECT_FALSE(Cmp("f32[1]{0} {1}", "f32[1]{0} {inf}", fewer).ok());
  EXPECT_FALSE(Cmp("f32[1]{0} {inf}", "f32[1]{0} {3.40282347e+38}", fewer).ok());
}

TEST(Compare, IntegersAndPredAreExact) {
  ErrorBounds huge{1e9, 1e9};
  EXPECT_FALSE(Cmp("s32[2]{0} {5, 7}", "s32[2]{0} {6, 7}", huge).ok());
  EXPECT_TRUE(Cmp("s32[2]{0} {5, -7}", "s32[2]{0} {5, -7}", huge).ok());
  EXPECT_FALSE(Cmp("pred[2]{0} {true, false}", "pred[2]{0} {true, true}", huge).ok());
  EXPECT_FALSE(Cmp("u64[1]{0} {18446744073709551615}", "u64[1]{0} {18446744073709551614}", huge).ok());
  ComparisonReport r = Cmp("s4[3]{0} {-8, 1, 7}", "s4[3]{0} {-8, 1, -1}");
  ASSERT_EQ(r.outputs[0].worst.size(), 1u);
  EXPECT_EQ(r.outputs[0].worst[0].expected, "7");
  EXPECT_EQ(r.outputs[0].worst[0].actual, "-1");
}

TEST(Compare, WorstElementsWithMultiIndex) {
  ComparisonReport r = CompareLiterals(
      Lit("f32[3,4]{1,0} {{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}}"),
      Lit("f32[3,4]{1,0} {{0, 1.5, 2, 3}, {4, 5, 6, 7.25}, {8, 19, 10, 11}}"), ErrorBounds{}, 2);
  ASSERT_EQ(r.outputs.size(), 1u);
  const OutputComparison& o = r.outputs[0];
  EXPECT_EQ(o.element_count, 12);
  EXPECT_EQ(o.mismatches, 3);
  EXPECT_DOUBLE_EQ(o.max_abs_error, 10);
  ASSERT_EQ(o.worst.size(), 2u);  // capped
  EXPECT_EQ(o.worst[0].index, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(o.worst[0].expected, "9");
  EXPECT_EQ(o.worst[0].actual, "19");
  EXPECT_DOUBLE_EQ(o.worst[0].abs_error, 10);
  EXPECT_EQ(o.worst[1].index, (std::vector<int64_t>{0, 1}));
  EXPECT_DOUBLE_EQ(o.worst[1].rel_error, 0.5);
  std::string text = r.ToString();
  EXPECT_NE(text.find("MISMATCH"), std::string::npos) << text;
  EXPECT_NE(text.find("3 of 12 elements mismatch"), std::string::npos) << text;
  EXPECT_NE(text.find("at {2,1}: expected 9, actual 19"), std::string::npos) << text;
}

TEST(Compare, TuplesElementWise) {
  ComparisonReport r = CompareLiterals(Lit("(f32[2]{0}, (s32[], pred[])) ({1, 2}, (3, true))"),
                                       Lit("(f32[2]{0}, (s32[], pred[])) ({1, 2.5}, (3, true))"));
  ASSERT_EQ(r.outputs.size(), 3u);
  EXPECT_EQ(r.outputs[0].output, (ShapeIndex{0}));
  EXPECT_EQ(r.outputs[1].output, (ShapeIndex{1, 0}));
  EXPECT_EQ(r.outputs[2].output, (ShapeIndex{1, 1}));
  EXPECT_FALSE(r.outputs[0].ok());
  EXPECT_TRUE(r.outputs[1].ok());
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.ToString().find("result {0}"), std::string::npos) << r.ToString();
}

TEST(Compare, ShapeMismatchIsReported) {
  ComparisonReport r = Cmp("f32[2]{0} {1, 2}", "f32[3]{0} {1, 2, 3}");
  ASSERT_EQ(r.outputs.size(), 1u);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.outputs[0].error.find("shape mismatch"), std::string::npos);
  EXPECT_FALSE(Cmp("f32[1]{0} {1}", "f64[1]{0} {1}").ok());
}

TEST(Compare, ComplexPartsAndNarrowFloats) {
  ComparisonReport r = Cmp("c64[2]{0} {(1, 2), (3, 4)}", "c64[2]{0} {(1.5, 2.5), (3, 4.0001)}");
  EXPECT_EQ(r.outputs[0].mismatches, 1);  // both parts of element 0 differ: counted once
  EXPECT_EQ(r.outputs[0].worst[0].expected, "(1, 2)");
  EXPECT_EQ(r.outputs[0].worst[0].actual, "(1.5, 2.5)");
  EXPECT_TRUE(Cmp("bf16[2]{0} {1, 2}", "bf16[2]{0} {1, 2}", ErrorBounds{0, 0}).ok());
  EXPECT_FALSE(Cmp("bf16[1]{0} {1}", "bf16[1]{0} {1.0078125}").ok());
  EXPECT_TRUE(Cmp("f8e4m3fn[1]{0} {1}", "f8e4m3fn[1]{0} {1.125}", ErrorBounds{0.2, 0.2}).ok());
}

TEST(Compare, Statistics) {
  LiteralStatistics s = ComputeStatistics(Lit("f32[5]{0} {1, -3, nan, inf, 2}"));
  EXPECT_EQ(s.elements, 5);
  EXPECT_EQ(s.nan_count, 1);
  EXPECT_EQ(s.inf_count, 1);
  EXPECT_EQ(s.finite_count, 3);
  EXPECT_EQ(s.min, -3);
  EXPECT_EQ(s.max, 2);
  EXPECT_DOUBLE_EQ(s.mean, 0);
  LiteralStatistics t = ComputeStatistics(Lit("(s32[2]{0}, u8[1]{0}) ({-1, 5}, {200})"));
  EXPECT_EQ(t.elements, 3);
  EXPECT_EQ(t.max, 200);
  EXPECT_EQ(t.min, -1);
}

}  // namespace
}  // namespace hlowb
