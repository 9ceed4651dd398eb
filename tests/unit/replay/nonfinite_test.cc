// The NaN/Inf locator: modules with an injected NaN or Inf, at the top level, inside a fusion
// inside a while loop (with the iteration), inside called computations and reducers; masks of
// -inf that are deliberate; arguments that bring the NaN; clean modules.
#include "replay/compare/nonfinite.h"

#include "gtest/gtest.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

NonfiniteReport Find(const std::string& text, std::vector<Literal> args = {}) {
  auto m = Parse(text);
  EXPECT_TRUE(m);
  ReplayInputs inputs;
  if (!args.empty()) inputs.snapshot_arguments = std::move(args);
  auto r = FindNonfinite(*m, ReplayOptions(), std::move(inputs));
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(*r) : NonfiniteReport();
}

TEST(FindNonfinite, NamesTheInstructionThatIntroducesTheNaN) {
  NonfiniteReport r = Find(R"(
HloModule top
ENTRY e {
  x = f32[4] parameter(0)
  one = f32[] constant(1)
  b1 = f32[4] broadcast(one), dimensions={}
  y = f32[4] subtract(x, b1)
  l = f32[4] log(y)
  e = f32[4] exponential(l)
  ROOT r = f32[4] add(e, x)
}
)");
  ASSERT_TRUE(r.found) << r.ToString();
  EXPECT_EQ(r.finding.instruction, "l");
  EXPECT_EQ(r.finding.opcode, "log");
  EXPECT_EQ(r.finding.introduced, "NaN");
  EXPECT_TRUE(r.finding.context.empty());
  EXPECT_EQ(r.finding.result.nan_count, 4);
  ASSERT_EQ(r.finding.operands.size(), 1u);
  EXPECT_EQ(r.finding.operands[0].name, "y");
  EXPECT_EQ(r.finding.operands[0].statistics.nan_count, 0);
  EXPECT_EQ(r.finding.operands[0].statistics.finite_count, 4);
  EXPECT_LT(r.finding.operands[0].statistics.max, 0);  // fake data in [-0.1, 0.2], minus 1
  EXPECT_EQ(r.argument_source, "fake data (seed 42)");
  std::string text = r.ToString();
  EXPECT_NE(text.find("NaN introduced by %l (log)"), std::string::npos) << text;
  EXPECT_NE(text.find("operand 0 %y"), std::string::npos) << text;
}

TEST(FindNonfinite, InsideAFusionInsideAWhileLoopWithTheIteration) {
  // sqrt(2.5 + 0 - i) turns NaN at i = 3.
  NonfiniteReport r = Find(testing::kLoopNaNModule, {Lit("f32[4]{0} {0, 0, 0, 0}")});
  ASSERT_TRUE(r.found) << r.ToString();
  EXPECT_EQ(r.finding.instruction, "s");
  EXPECT_EQ(r.finding.computation, "fused_sqrt");
  ASSERT_EQ(r.finding.context.size(), 2u) << r.ToString();
  EXPECT_EQ(r.finding.context[0].caller, "w");
  EXPECT_EQ(r.finding.context[0].role, "while body");
  EXPECT_EQ(r.finding.context[0].computation, "body");
  EXPECT_EQ(r.finding.context[0].loop_iteration, 3);
  EXPECT_EQ(r.finding.context[1].caller, "f");
  EXPECT_EQ(r.finding.context[1].role, "fused computation");
  EXPECT_EQ(r.finding.context[1].loop_iteration, -1);
  ASSERT_EQ(r.finding.operands.size(), 1u);
  EXPECT_EQ(r.finding.operands[0].name, "d");
  EXPECT_DOUBLE_EQ(r.finding.operands[0].statistics.min, -0.5);
  std::string text = r.ToString();
  EXPECT_NE(text.find("%w (while) -> while body %body, iteration 3"), std::string::npos) << text;
  EXPECT_NE(text.find("%f (fusion) -> fused computation %fused_sqrt"), std::string::npos) << text;
}

TEST(FindNonfinite, NestedLoopsReportEveryIteration) {
  // The outer loop runs 3 times, the inner 4 times; sqrt(9 - (4 * outer + inner)) is NaN first
  // at outer 2, inner 2.
  NonfiniteReport r = Find(R"(
HloModule nested
icond {
  t = (s32[], s32[]) parameter(0)
  j = s32[] get-tuple-element(t), index=1
  four = s32[] constant(4)
  ROOT lt = pred[] compare(j, four), direction=LT
}
ibody {
  t = (s32[], s32[]) parameter(0)
  o = s32[] get-tuple-element(t), index=0
  j = s32[] get-tuple-element(t), index=1
  four = s32[] constant(4)
  nine = s32[] constant(9)
  o4 = s32[] multiply(o, four)
  k = s32[] add(o4, j)
  v = s32[] subtract(nine, k)
  fv = f32[] convert(v)
  sq = f32[] sqrt(fv)
  one = s32[] constant(1)
  j2 = s32[] add(j, one)
  ROOT out = (s32[], s32[]) tuple(o, j2)
}
ocond {
  t = s32[] parameter(0)
  three = s32[] constant(3)
  ROOT lt = pred[] compare(t, three), direction=LT
}
obody {
  o = s32[] parameter(0)
  z = s32[] constant(0)
  init = (s32[], s32[]) tuple(o, z)
  w = (s32[], s32[]) while(init), condition=icond, body=ibody
  one = s32[] constant(1)
  ROOT o2 = s32[] add(o, one)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=ocond, body=obody
}
)");
  ASSERT_TRUE(r.found) << r.ToString();
  EXPECT_EQ(r.finding.instruction, "sq");
  EXPECT_EQ(r.finding.introduced, "NaN");
  ASSERT_EQ(r.finding.context.size(), 2u) << r.ToString();
  EXPECT_EQ(r.finding.context[0].computation, "obody");
  EXPECT_EQ(r.finding.context[0].loop_iteration, 2);  // outer
  EXPECT_EQ(r.finding.context[1].computation, "ibody");
  EXPECT_EQ(r.finding.context[1].loop_iteration, 2);  // inner
}

TEST(FindNonfinite, DeliberateMinusInfinityMasksAreNotReported) {
  // The -inf mask and the select that applies it only pass -inf along; -inf - -inf is the bug.
  NonfiniteReport r = Find(R"(
HloModule mask
ENTRY e {
  x = f32[4] parameter(0)
  ninf = f32[] constant(-inf)
  bn = f32[4] broadcast(ninf), dimensions={}
  zero = f32[] constant(0)
  bz = f32[4] broadcast(zero), dimensions={}
  keep = pred[4] compare(x, bz), direction=GT
  m = f32[4] select(keep, x, bn)
  d = f32[4] subtract(m, m)
  ROOT r = f32[4] add(d, x)
}
)",
                           {Lit("f32[4]{0} {1, -2, 3, -4}")});
  ASSERT_TRUE(r.found) << r.ToString();
  EXPECT_EQ(r.finding.instruction, "d");
  EXPECT_EQ(r.finding.introduced, "NaN");
  EXPECT_EQ(r.finding.result.nan_count, 2);
  EXPECT_EQ(r.finding.operands[0].statistics.inf_count, 2);
  EXPECT_EQ(r.argument_source, "snapshot");
}

TEST(FindNonfinite, OverflowToInfinity) {
  NonfiniteReport r = Find(R"(
HloModule overflow
ENTRY e {
  x = f32[3] parameter(0)
  k = f32[] constant(1000)
  bk = f32[3] broadcast(k), dimensions={}
  big = f32[3] multiply(x, bk)
  ROOT e = f32[3] exponential(big)
}
)",
                           {Lit("f32[3]{0} {0.001, 0.5, 1}")});
  ASSERT_TRUE(r.found);
  EXPECT_EQ(r.finding.instruction, "e");
  EXPECT_EQ(r.finding.introduced, "Inf");
  EXPECT_EQ(r.finding.result.inf_count, 2);
  EXPECT_EQ(r.finding.result.finite_count, 1);
}

TEST(FindNonfinite, AnArgumentThatBringsTheNaN) {
  NonfiniteReport r = Find(R"(
HloModule arg
ENTRY e {
  x = f32[2] parameter(0)
  y = f32[2] parameter(1)
  ROOT s = f32[2] add(x, y)
}
)",
                           {Lit("f32[2]{0} {1, 2}"), Lit("f32[2]{0} {nan, 3}")});
  ASSERT_TRUE(r.found);
  EXPECT_TRUE(r.finding.entry_parameter);
  EXPECT_EQ(r.finding.instruction, "y");
  EXPECT_NE(r.ToString().find("in argument %y"), std::string::npos) << r.ToString();
}

TEST(FindNonfinite, CalledComputationsAndReducersAreSearched) {
  // A NaN made inside a call's computation names the inner instruction; one made by a reducer
  // is blamed on the reduce that applies it.
  NonfiniteReport call = Find(R"(
HloModule call
callee {
  p = f32[3] parameter(0)
  ROOT q = f32[3] rsqrt(p)
}
ENTRY e {
  x = f32[3] parameter(0)
  n = f32[3] negate(x)
  ROOT c = f32[3] call(n), to_apply=callee
}
)",
                              {Lit("f32[3]{0} {1, 2, 3}")});
  ASSERT_TRUE(call.found);
  EXPECT_EQ(call.finding.instruction, "q");
  ASSERT_EQ(call.finding.context.size(), 1u);
  EXPECT_EQ(call.finding.context[0].caller, "c");
  EXPECT_EQ(call.finding.context[0].role, "called computation");

  NonfiniteReport reduce = Find(R"(
HloModule reduce
weird {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  d = f32[] subtract(a, b)
  ROOT s = f32[] sqrt(d)
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = f32[] constant(0)
  ROOT r = f32[] reduce(x, zero), dimensions={0}, to_apply=weird
}
)",
                                {Lit("f32[4]{0} {1, 2, 3, 4}")});
  ASSERT_TRUE(reduce.found);
  EXPECT_EQ(reduce.finding.instruction, "r");
  EXPECT_TRUE(reduce.finding.context.empty());
}

TEST(FindNonfinite, CleanModuleFindsNothing) {
  NonfiniteReport r = Find(R"(
HloModule clean
ENTRY e {
  x = f32[4] parameter(0)
  ROOT t = f32[4] tanh(x)
}
)");
  EXPECT_FALSE(r.found);
  EXPECT_EQ(r.iterations_run, 1);
  EXPECT_NE(r.ToString().find("no NaN or Inf"), std::string::npos);
}

}  // namespace
}  // namespace hlowb
