// The control-flow passes (simplify-while-loops, while-loop-invariant-code-motion,
// simplify-conditional) and reshape-mover: golden rewrites checked for meaning on fake data,
// the cases that must not fire, fuel, and a verifier-clean run over the shared corpus.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/passes/conditional_simplifier.h"
#include "core/passes/copy_insertion.h"
#include "core/passes/reshape_mover.h"
#include "core/passes/while_loop_invariant_code_motion.h"
#include "core/passes/while_loop_simplifier.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::MakeTestContext;
using testing::Normalize;

PassContext ContextWithFuel(std::string_view pass, int64_t fuel) {
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel[std::string(pass)] = fuel;
  return ctx;
}

// ===== simplify-while-loops =====

// A counter loop `i < 5` doubling x; the start value of i is the placeholder $START.
constexpr char kCounterLoop[] = R"(
HloModule m

cond {
  c.p = (s32[], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(5)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.y = f32[4] add(b.x, b.x)
  ROOT b.t = (s32[], f32[4]) tuple(b.next, b.y)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  i0 = s32[] constant($START)
  init = (s32[], f32[4]) tuple(i0, x0)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)";

std::string CounterLoop(int start) {
  std::string text = kCounterLoop;
  text.replace(text.find("$START"), 6, std::to_string(start));
  return text;
}

TEST(WhileLoopSimplifier, RemovesZeroTripCounterLoop) {
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, CounterLoop(10), R"(
HloModule m

ENTRY e {
  x0 = f32[4] parameter(0)
  i0 = s32[] constant(10)
  ROOT init = (s32[], f32[4]) tuple(i0, x0)
}
)");
}

TEST(WhileLoopSimplifier, StartEqualToBoundIsZeroTrip) {
  WhileLoopSimplifier pass;
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, CounterLoop(5), &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  EXPECT_EQ(m->computations().size(), 1u);
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kTuple);
}

TEST(WhileLoopSimplifier, RemovesLoopWhoseConditionIsConstantFalse) {
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = f32[4] parameter(0)
  ROOT c.f = pred[] constant(false)
}

body {
  b.p = f32[4] parameter(0)
  ROOT b.y = f32[4] exponential(b.p)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  neg = f32[4] negate(x0)
  ROOT w = f32[4] while(neg), condition=cond, body=body
}
)",
                R"(
HloModule m

ENTRY e {
  x0 = f32[4] parameter(0)
  ROOT neg = f32[4] negate(x0)
}
)");
}

TEST(WhileLoopSimplifier, InlinesOneTripLoop) {
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, CounterLoop(4), R"(
HloModule m

ENTRY e {
  x0 = f32[4] parameter(0)
  i0 = s32[] constant(4)
  init = (s32[], f32[4]) tuple(i0, x0)
  b.i.1 = s32[] get-tuple-element(init), index=0
  b.one.1 = s32[] constant(1)
  b.next.1 = s32[] add(b.i.1, b.one.1)
  b.x.1 = f32[4] get-tuple-element(init), index=1
  b.y.1 = f32[4] add(b.x.1, b.x.1)
  ROOT b.t.1 = (s32[], f32[4]) tuple(b.next.1, b.y.1)
}
)");
}

TEST(WhileLoopSimplifier, InlinesOneTripCountDownLoopWithBoundInState) {
  // i counts down from 3 while i > n, n being a pass-through element that starts at 2.
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], s32[], f32[2]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] get-tuple-element(c.p), index=1
  ROOT c.gt = pred[] compare(c.i, c.n), direction=GT
}

body {
  b.p = (s32[], s32[], f32[2]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.n = s32[] get-tuple-element(b.p), index=1
  b.one = s32[] constant(1)
  b.next = s32[] subtract(b.i, b.one)
  b.x = f32[2] get-tuple-element(b.p), index=2
  b.y = f32[2] sine(b.x)
  ROOT b.t = (s32[], s32[], f32[2]) tuple(b.next, b.n, b.y)
}

ENTRY e {
  x0 = f32[2] parameter(0)
  i0 = s32[] constant(3)
  n0 = s32[] constant(2)
  init = (s32[], s32[], f32[2]) tuple(i0, n0, x0)
  w = (s32[], s32[], f32[2]) while(init), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=2
}
)",
                R"(
HloModule m

ENTRY e {
  x0 = f32[2] parameter(0)
  i0 = s32[] constant(3)
  n0 = s32[] constant(2)
  init = (s32[], s32[], f32[2]) tuple(i0, n0, x0)
  b.i.1 = s32[] get-tuple-element(init), index=0
  b.one.1 = s32[] constant(1)
  b.next.1 = s32[] subtract(b.i.1, b.one.1)
  b.n.1 = s32[] get-tuple-element(init), index=1
  b.x.1 = f32[2] get-tuple-element(init), index=2
  b.y.1 = f32[2] sine(b.x.1)
  b.t.1 = (s32[], s32[], f32[2]) tuple(b.next.1, b.n.1, b.y.1)
  ROOT r = f32[2] get-tuple-element(b.t.1), index=2
}
)");
}

TEST(WhileLoopSimplifier, LeavesLoopsRunningTwiceOrMore) {
  WhileLoopSimplifier pass;
  ExpectNoChange(pass, CounterLoop(3));
  ExpectNoChange(pass, CounterLoop(0));
}

TEST(WhileLoopSimplifier, KnownTripCountStepsTheProvenCounter) {
  for (int start : {0, 3, 5, 9, -4}) {
    auto m = ParseModule(CounterLoop(start));
    ASSERT_TRUE(m.ok()) << m.status();
    const Instruction* loop = (*m)->entry()->root();
    const int64_t want = std::max(0, 5 - start);
    EXPECT_EQ(KnownTripCount(*loop, 100), std::optional<int64_t>(want)) << "start " << start;
    // At or past the limit: not known.
    EXPECT_EQ(KnownTripCount(*loop, want), std::nullopt) << "start " << start;
  }
  // Not a while loop.
  auto m = ParseModule(CounterLoop(0));
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(KnownTripCount(*(*m)->entry()->root()->operand(0), 100), std::nullopt);
}

TEST(WhileLoopSimplifier, KnownTripCountSeesThroughTheCopiesOfCopyInsertion) {
  for (int start : {0, 3}) {
    auto m = ParseModule(CounterLoop(start));
    ASSERT_TRUE(m.ok()) << m.status();
    PassContext ctx;
    CopyInsertion copies;
    auto changed = copies.Run(m->get(), ctx);
    ASSERT_TRUE(changed.ok()) << changed.status();
    ASSERT_TRUE(*changed) << "copy insertion added no copy to the counter loop";
    const Instruction* loop = nullptr;
    for (const Instruction* h : (*m)->entry()->instructions()) {
      if (h->opcode() == Opcode::kWhile) loop = h;
    }
    ASSERT_NE(loop, nullptr);
    EXPECT_EQ(KnownTripCount(*loop, 100), std::optional<int64_t>(std::max(0, 5 - start)))
        << "start " << start;
  }
}

TEST(WhileLoopSimplifier, LeavesDataDependentTripCount) {
  WhileLoopSimplifier pass;
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], s32[]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] get-tuple-element(c.p), index=1
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], s32[]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.n = s32[] get-tuple-element(b.p), index=1
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  ROOT b.t = (s32[], s32[]) tuple(b.next, b.n)
}

ENTRY e {
  n0 = s32[] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], s32[]) tuple(i0, n0)
  ROOT w = (s32[], s32[]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopSimplifier, KeepsZeroTripLoopWithSideEffectInBody) {
  WhileLoopSimplifier pass;
  std::string text = CounterLoop(10);
  const std::string from = "b.y = f32[4] add(b.x, b.x)";
  text.replace(text.find(from), from.size(),
               "b.y = f32[4] custom-call(b.x), custom_call_target=\"log\", "
               "custom_call_has_side_effect=true");
  ExpectNoChange(pass, text);
}

TEST(WhileLoopSimplifier, KeepsOneTripLoopWithSideEffectInCondition) {
  WhileLoopSimplifier pass;
  std::string text = CounterLoop(4);
  const std::string from = "c.n = s32[] constant(5)";
  text.replace(text.find(from), from.size(),
               "c.n = s32[] custom-call(), custom_call_target=\"bound\", "
               "custom_call_has_side_effect=true");
  ExpectNoChange(pass, text);
}

TEST(WhileLoopSimplifier, OneTripLoopKeepsBodySideEffectOnce) {
  WhileLoopSimplifier pass;
  std::string text = CounterLoop(4);
  const std::string from = "b.y = f32[4] add(b.x, b.x)";
  text.replace(text.find(from), from.size(),
               "b.y = f32[4] custom-call(b.x), custom_call_target=\"log\", "
               "custom_call_has_side_effect=true");
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, text, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  ASSERT_EQ(m->computations().size(), 1u);
  int custom_calls = 0;
  for (const Instruction* i : m->entry()->instructions()) {
    custom_calls += i->opcode() == Opcode::kCustomCall;
    EXPECT_NE(i->opcode(), Opcode::kWhile);
  }
  EXPECT_EQ(custom_calls, 1);
}

TEST(WhileLoopSimplifier, RemovesDeadAndPassThroughElements) {
  // Element 2 (acc) only feeds itself and is never read after the loop; element 3 (k) is
  // passed through and read after the loop, so it becomes the initial value.
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.y = f32[4] multiply(b.x, b.x)
  b.acc = f32[4] get-tuple-element(b.p), index=2
  b.acc2 = f32[4] add(b.acc, b.acc)
  b.k = f32[4] get-tuple-element(b.p), index=3
  ROOT b.t = (s32[], f32[4], f32[4], f32[4]) tuple(b.next, b.y, b.acc2, b.k)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  k0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[4], f32[4]) tuple(i0, x0, x0, k0)
  w = (s32[], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  y = f32[4] get-tuple-element(w), index=1
  k = f32[4] get-tuple-element(w), index=3
  ROOT r = f32[4] add(y, k)
}
)",
                R"(
HloModule m

cond {
  c.p = (s32[], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.y = f32[4] multiply(b.x, b.x)
  ROOT tuple = (s32[], f32[4]) tuple(b.next, b.y)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  k0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  tuple.1 = (s32[], f32[4]) tuple(i0, x0)
  w = (s32[], f32[4]) while(tuple.1), condition=cond, body=body
  y = f32[4] get-tuple-element(w), index=1
  ROOT r = f32[4] add(y, k0)
}
)");
}

TEST(WhileLoopSimplifier, RebuildsFullStateForWholeTupleUsers) {
  // The loop is the entry root: the pass-through element 1 leaves the state and the root
  // becomes a tuple of the smaller loop's element and the initial value.
  WhileLoopSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[3]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(7)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[3]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.k = f32[3] get-tuple-element(b.p), index=1
  ROOT b.t = (s32[], f32[3]) tuple(b.next, b.k)
}

ENTRY e {
  k0 = f32[3] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[3]) tuple(i0, k0)
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body
}
)",
                R"(
HloModule m

cond {
  c.p = (s32[]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(7)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  ROOT tuple = (s32[]) tuple(b.next)
}

ENTRY e {
  k0 = f32[3] parameter(0)
  i0 = s32[] constant(0)
  tuple.1 = (s32[]) tuple(i0)
  w = (s32[]) while(tuple.1), condition=cond, body=body
  get-tuple-element = s32[] get-tuple-element(w), index=0
  ROOT tuple.2 = (s32[], f32[3]) tuple(get-tuple-element, k0)
}
)");
}

TEST(WhileLoopSimplifier, KeepsElementsTheConditionOrOtherElementsRead) {
  // x feeds y; the side-effecting element feeds only itself but has a side effect.
  WhileLoopSimplifier pass;
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.y = f32[4] get-tuple-element(b.p), index=2
  b.xy = f32[4] add(b.x, b.y)
  b.s = f32[4] get-tuple-element(b.p), index=3
  b.s2 = f32[4] custom-call(b.s), custom_call_target="log", custom_call_has_side_effect=true
  ROOT b.t = (s32[], f32[4], f32[4], f32[4]) tuple(b.next, b.x, b.xy, b.s2)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[4], f32[4]) tuple(i0, x0, x0, x0)
  w = (s32[], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT y = f32[4] get-tuple-element(w), index=2
}
)");
}

TEST(WhileLoopSimplifier, NoFuelNoChange) {
  WhileLoopSimplifier pass;
  PassContext ctx = ContextWithFuel(pass.name(), 0);
  ExpectNoChange(pass, CounterLoop(10), &ctx);
  ExpectNoChange(pass, CounterLoop(4), &ctx);
  EXPECT_TRUE(ctx.fuel_exhausted());
}

// ===== while-loop-invariant-code-motion =====

TEST(WhileLoopInvariantCodeMotion, HoistsInvariantComputation) {
  // exp(x) * 2 depends only on x, which the body passes through: it is computed once before
  // the loop (the constant goes along) and enters the loop as a new state element.
  WhileLoopInvariantCodeMotion pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.e = f32[4] exponential(b.x)
  b.two = f32[4] constant({2, 2, 2, 2})
  b.e2 = f32[4] multiply(b.e, b.two)
  b.acc = f32[4] get-tuple-element(b.p), index=2
  b.acc2 = f32[4] add(b.acc, b.e2)
  ROOT b.t = (s32[], f32[4], f32[4]) tuple(b.next, b.x, b.acc2)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(i0, x0, a0)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)",
                R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.acc = f32[4] get-tuple-element(b.p), index=2
  get-tuple-element = f32[4] get-tuple-element(b.p), index=3
  b.acc2 = f32[4] add(b.acc, get-tuple-element)
  ROOT tuple = (s32[], f32[4], f32[4], f32[4]) tuple(b.next, b.x, b.acc2, get-tuple-element)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  b.e.1 = f32[4] exponential(x0)
  b.two.1 = f32[4] constant({2, 2, 2, 2})
  b.e2.1 = f32[4] multiply(b.e.1, b.two.1)
  tuple.1 = (s32[], f32[4], f32[4], f32[4]) tuple(i0, x0, a0, b.e2.1)
  w = (s32[], f32[4], f32[4], f32[4]) while(tuple.1), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)");
}

TEST(WhileLoopInvariantCodeMotion, ReadsInvariantsFromAnInitialStateThatIsNotATuple) {
  // The initial state is a parameter: the hoisted copy reads element 1 through a new
  // get-tuple-element, and the longer state is assembled from such reads. (Not evaluated: a
  // fake counter could make the loop run for very long.)
  WhileLoopInvariantCodeMotion pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.e = f32[4] exponential(b.x)
  b.acc = f32[4] get-tuple-element(b.p), index=2
  b.acc2 = f32[4] add(b.acc, b.e)
  ROOT b.t = (s32[], f32[4], f32[4]) tuple(b.next, b.x, b.acc2)
}

ENTRY e {
  init = (s32[], f32[4], f32[4]) parameter(0)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)",
                R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.acc = f32[4] get-tuple-element(b.p), index=2
  get-tuple-element.3 = f32[4] get-tuple-element(b.p), index=3
  b.acc2 = f32[4] add(b.acc, get-tuple-element.3)
  ROOT tuple = (s32[], f32[4], f32[4], f32[4]) tuple(b.next, b.x, b.acc2, get-tuple-element.3)
}

ENTRY e {
  init = (s32[], f32[4], f32[4]) parameter(0)
  get-tuple-element.1 = s32[] get-tuple-element(init), index=0
  get-tuple-element = f32[4] get-tuple-element(init), index=1
  get-tuple-element.2 = f32[4] get-tuple-element(init), index=2
  b.e.1 = f32[4] exponential(get-tuple-element)
  tuple.1 = (s32[], f32[4], f32[4], f32[4]) tuple(get-tuple-element.1, get-tuple-element,
      get-tuple-element.2, b.e.1)
  w = (s32[], f32[4], f32[4], f32[4]) while(tuple.1), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)",
                /*check_semantics=*/false);
}

TEST(WhileLoopInvariantCodeMotion, DoesNotHoistConstantsOrCheapBroadcastsAlone) {
  WhileLoopInvariantCodeMotion pass;
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.s = f32[] get-tuple-element(b.p), index=2
  b.bs = f32[4] broadcast(b.s), dimensions={}
  b.c = f32[4] constant({1, 2, 3, 4})
  b.acc = f32[4] get-tuple-element(b.p), index=1
  b.acc1 = f32[4] add(b.acc, b.bs)
  b.acc2 = f32[4] add(b.acc1, b.c)
  ROOT b.t = (s32[], f32[4], f32[]) tuple(b.next, b.acc2, b.s)
}

ENTRY e {
  a0 = f32[4] parameter(0)
  s0 = f32[] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[]) tuple(i0, a0, s0)
  ROOT w = (s32[], f32[4], f32[]) while(init), condition=cond, body=body
}
)");
}

// A value computed from constants alone (here bf16 3 converted to f32 for a power, as float
// normalisation leaves it) is not hoisted: folded in place it is a constant the body's
// simplifications and fusions see; hoisted it would be an opaque loop-state element.
TEST(WhileLoopInvariantCodeMotion, DoesNotHoistValuesComputedFromConstantsAlone) {
  WhileLoopInvariantCodeMotion pass;
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.three = bf16[] constant(3)
  b.three.f = f32[] convert(b.three)
  b.e = f32[4] broadcast(b.three.f), dimensions={}
  b.acc = f32[4] get-tuple-element(b.p), index=1
  b.pow = f32[4] power(b.acc, b.e)
  ROOT b.t = (s32[], f32[4]) tuple(b.next, b.pow)
}

ENTRY e {
  a0 = f32[4] parameter(0)
  i0 = s32[] constant(0)
  init = (s32[], f32[4]) tuple(i0, a0)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopInvariantCodeMotion, HoistsThroughCheapOperandsAndKeepsRootShape) {
  // multiply(broadcast(s), broadcast(s)) is hoisted with a copy of the broadcast; the loop is
  // the entry root, so the root becomes the old-shaped prefix of the longer state.
  WhileLoopInvariantCodeMotion pass;
  ExpectRewrite(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.s = f32[] get-tuple-element(b.p), index=2
  b.bs = f32[4] broadcast(b.s), dimensions={}
  b.sq = f32[4] multiply(b.bs, b.bs)
  b.acc = f32[4] get-tuple-element(b.p), index=1
  b.acc1 = f32[4] add(b.acc, b.sq)
  ROOT b.t = (s32[], f32[4], f32[]) tuple(b.next, b.acc1, b.s)
}

ENTRY e {
  a0 = f32[4] parameter(0)
  s0 = f32[] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[]) tuple(i0, a0, s0)
  ROOT w = (s32[], f32[4], f32[]) while(init), condition=cond, body=body
}
)",
                R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.s = f32[] get-tuple-element(b.p), index=2
  b.acc = f32[4] get-tuple-element(b.p), index=1
  get-tuple-element = f32[4] get-tuple-element(b.p), index=3
  b.acc1 = f32[4] add(b.acc, get-tuple-element)
  ROOT tuple = (s32[], f32[4], f32[], f32[4]) tuple(b.next, b.acc1, b.s, get-tuple-element)
}

ENTRY e {
  a0 = f32[4] parameter(0)
  s0 = f32[] parameter(1)
  i0 = s32[] constant(0)
  b.bs.1 = f32[4] broadcast(s0), dimensions={}
  b.sq.1 = f32[4] multiply(b.bs.1, b.bs.1)
  tuple.1 = (s32[], f32[4], f32[], f32[4]) tuple(i0, a0, s0, b.sq.1)
  w = (s32[], f32[4], f32[], f32[4]) while(tuple.1), condition=cond, body=body
  get-tuple-element.1 = s32[] get-tuple-element(w), index=0
  get-tuple-element.2 = f32[4] get-tuple-element(w), index=1
  get-tuple-element.3 = f32[] get-tuple-element(w), index=2
  ROOT tuple.2 = (s32[], f32[4], f32[]) tuple(get-tuple-element.1, get-tuple-element.2,
      get-tuple-element.3)
}
)");
}

TEST(WhileLoopInvariantCodeMotion, LeavesSideEffectsAndVariantValues) {
  WhileLoopInvariantCodeMotion pass;
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.log = f32[4] custom-call(b.x), custom_call_target="log", custom_call_has_side_effect=true
  b.acc = f32[4] get-tuple-element(b.p), index=2
  b.e = f32[4] exponential(b.acc)
  b.acc2 = f32[4] add(b.e, b.log)
  ROOT b.t = (s32[], f32[4], f32[4]) tuple(b.next, b.x, b.acc2)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(i0, x0, a0)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)");
}

TEST(WhileLoopInvariantCodeMotion, NoFuelNoChange) {
  WhileLoopInvariantCodeMotion pass;
  PassContext ctx = ContextWithFuel(pass.name(), 0);
  ExpectNoChange(pass, R"(
HloModule m

cond {
  c.p = (s32[], f32[4], f32[4]) parameter(0)
  c.i = s32[] get-tuple-element(c.p), index=0
  c.n = s32[] constant(3)
  ROOT c.lt = pred[] compare(c.i, c.n), direction=LT
}

body {
  b.p = (s32[], f32[4], f32[4]) parameter(0)
  b.i = s32[] get-tuple-element(b.p), index=0
  b.one = s32[] constant(1)
  b.next = s32[] add(b.i, b.one)
  b.x = f32[4] get-tuple-element(b.p), index=1
  b.e = f32[4] exponential(b.x)
  b.acc = f32[4] get-tuple-element(b.p), index=2
  b.acc2 = f32[4] add(b.acc, b.e)
  ROOT b.t = (s32[], f32[4], f32[4]) tuple(b.next, b.x, b.acc2)
}

ENTRY e {
  x0 = f32[4] parameter(0)
  a0 = f32[4] parameter(1)
  i0 = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(i0, x0, a0)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)",
                 &ctx);
}

// ===== simplify-conditional =====

constexpr char kBranches[] = R"(
HloModule m

on_true {
  t.p = (f32[4], f32[4]) parameter(0)
  t.a = f32[4] get-tuple-element(t.p), index=0
  t.b = f32[4] get-tuple-element(t.p), index=1
  t.s = f32[4] add(t.a, t.b)
  ROOT t.r = (f32[4], f32[4]) tuple(t.s, t.a)
}

on_false {
  f.p = f32[4] parameter(0)
  f.n = f32[4] negate(f.p)
  ROOT f.r = (f32[4], f32[4]) tuple(f.n, f.p)
}
)";

std::string WithEntry(std::string_view entry) {
  return StrCat(kBranches, "\n", entry);
}

TEST(ConditionalSimplifier, InlinesTrueBranchOfConstantPredicate) {
  ConditionalSimplifier pass;
  ExpectRewrite(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] constant(true)
  ab = (f32[4], f32[4]) tuple(a, b)
  c = (f32[4], f32[4]) conditional(p, ab, a), true_computation=on_true, false_computation=on_false
  ROOT r = f32[4] get-tuple-element(c), index=0
}
)"),
                R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ab = (f32[4], f32[4]) tuple(a, b)
  t.a.1 = f32[4] get-tuple-element(ab), index=0
  t.b.1 = f32[4] get-tuple-element(ab), index=1
  t.s.1 = f32[4] add(t.a.1, t.b.1)
  t.r.1 = (f32[4], f32[4]) tuple(t.s.1, t.a.1)
  ROOT r = f32[4] get-tuple-element(t.r.1), index=0
}
)");
}

TEST(ConditionalSimplifier, InlinesFalseBranchOfConstantPredicate) {
  ConditionalSimplifier pass;
  ExpectRewrite(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] constant(false)
  ab = (f32[4], f32[4]) tuple(a, b)
  ROOT c = (f32[4], f32[4]) conditional(p, ab, a),
      true_computation=on_true, false_computation=on_false
}
)"),
                R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  f.n.1 = f32[4] negate(a)
  ROOT f.r.1 = (f32[4], f32[4]) tuple(f.n.1, a)
}
)");
}

TEST(ConditionalSimplifier, OutOfRangeIndexTakesLastBranch) {
  ConditionalSimplifier pass;
  ExpectRewrite(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  i = s32[] constant(7)
  ab = (f32[4], f32[4]) tuple(a, b)
  ROOT c = (f32[4], f32[4]) conditional(i, ab, a), branch_computations={on_true, on_false}
}
)"),
                R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  f.n.1 = f32[4] negate(a)
  ROOT f.r.1 = (f32[4], f32[4]) tuple(f.n.1, a)
}
)");
}

TEST(ConditionalSimplifier, InlinesSingleBranch) {
  ConditionalSimplifier pass;
  ExpectRewrite(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  i = s32[] parameter(1)
  ROOT c = (f32[4], f32[4]) conditional(i, a), branch_computations={on_false}
}
)"),
                R"(
HloModule m

ENTRY e {
  a = f32[4] parameter(0)
  i = s32[] parameter(1)
  f.n.1 = f32[4] negate(a)
  ROOT f.r.1 = (f32[4], f32[4]) tuple(f.n.1, a)
}
)");
}

TEST(ConditionalSimplifier, RemovesUnusedOutputs) {
  ConditionalSimplifier pass;
  ExpectRewrite(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] parameter(2)
  ab = (f32[4], f32[4]) tuple(a, b)
  c = (f32[4], f32[4]) conditional(p, ab, a), true_computation=on_true, false_computation=on_false
  ROOT r = f32[4] get-tuple-element(c), index=1
}
)"),
                R"(
HloModule m

on_true {
  t.p = (f32[4], f32[4]) parameter(0)
  t.a = f32[4] get-tuple-element(t.p), index=0
  ROOT tuple = (f32[4]) tuple(t.a)
}

on_false {
  f.p = f32[4] parameter(0)
  ROOT tuple.1 = (f32[4]) tuple(f.p)
}

ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] parameter(2)
  ab = (f32[4], f32[4]) tuple(a, b)
  c = (f32[4]) conditional(p, ab, a), true_computation=on_true, false_computation=on_false
  ROOT r = f32[4] get-tuple-element(c), index=0
}
)");
}

TEST(ConditionalSimplifier, LeavesUnknownPredicateWithAllOutputsUsed) {
  ConditionalSimplifier pass;
  ExpectNoChange(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] parameter(2)
  ab = (f32[4], f32[4]) tuple(a, b)
  ROOT c = (f32[4], f32[4]) conditional(p, ab, a),
      true_computation=on_true, false_computation=on_false
}
)"));
}

TEST(ConditionalSimplifier, KeepsOutputsOfSharedBranches) {
  // on_false is called by two conditionals: its outputs cannot shrink for one of them.
  ConditionalSimplifier pass;
  ExpectNoChange(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] parameter(2)
  ab = (f32[4], f32[4]) tuple(a, b)
  c1 = (f32[4], f32[4]) conditional(p, ab, a), true_computation=on_true, false_computation=on_false
  c2 = (f32[4], f32[4]) conditional(p, ab, b), true_computation=on_true, false_computation=on_false
  r1 = f32[4] get-tuple-element(c1), index=1
  r2 = f32[4] get-tuple-element(c2), index=1
  ROOT r = f32[4] add(r1, r2)
}
)"));
}

TEST(ConditionalSimplifier, NoFuelNoChange) {
  ConditionalSimplifier pass;
  PassContext ctx = ContextWithFuel(pass.name(), 0);
  ExpectNoChange(pass, WithEntry(R"(
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  p = pred[] constant(true)
  ab = (f32[4], f32[4]) tuple(a, b)
  ROOT c = (f32[4], f32[4]) conditional(p, ab, a),
      true_computation=on_true, false_computation=on_false
}
)"),
                 &ctx);
}

// ===== reshape-mover =====

TEST(ReshapeMover, SinksReshapesThroughAdd) {
  ReshapeMover pass;
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)",
                R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  s.1 = f32[2,3] add(a, b)
  ROOT ra.1 = f32[6] reshape(s.1)
}
)");
}

TEST(ReshapeMover, SinksTransposeWithConstantAndScalarBroadcast) {
  ReshapeMover pass;
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  ta = f32[3,2] transpose(a), dimensions={1,0}
  c = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  s = f32[] constant(0.5)
  bs = f32[3,2] broadcast(s), dimensions={}
  m = f32[3,2] multiply(ta, c)
  ROOT r = f32[3,2] subtract(m, bs)
}
)",
                R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  c = f32[3,2] constant({{1, 2}, {3, 4}, {5, 6}})
  s = f32[] constant(0.5)
  bs = f32[3,2] broadcast(s), dimensions={}
  transpose = f32[2,3] transpose(c), dimensions={1,0}
  m.1 = f32[2,3] multiply(a, transpose)
  ta.1 = f32[3,2] transpose(m.1), dimensions={1,0}
  ROOT r = f32[3,2] subtract(ta.1, bs)
}
)");
}

TEST(ReshapeMover, SinksIntoCompareWithOtherResultType) {
  ReshapeMover pass;
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  a = s32[4,2] parameter(0)
  b = s32[4,2] parameter(1)
  ra = s32[8] reshape(a)
  rb = s32[8] reshape(b)
  ROOT lt = pred[8] compare(ra, rb), direction=LT
}
)",
                R"(
HloModule m

ENTRY e {
  a = s32[4,2] parameter(0)
  b = s32[4,2] parameter(1)
  lt.1 = pred[4,2] compare(a, b), direction=LT
  ROOT ra.1 = pred[8] reshape(lt.1)
}
)");
}

TEST(ReshapeMover, LeavesDifferentReshapesAndReshapesWithOtherUsers) {
  ReshapeMover pass;
  // Operands reshaped from different shapes.
  ExpectNoChange(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)");
  // A reshape the root also needs would survive: moving would add a reshape.
  ExpectNoChange(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  s = f32[6] add(ra, rb)
  ROOT t = (f32[6], f32[6]) tuple(s, ra)
}
)");
  // Only rearranged constants and a non-rearranged parameter: nothing worth moving.
  ExpectNoChange(pass, R"(
HloModule m

ENTRY e {
  a = f32[6] parameter(0)
  c = f32[2,3] constant({{1, 2, 3}, {4, 5, 6}})
  rc = f32[6] reshape(c)
  ROOT s = f32[6] add(a, rc)
}
)");
}

TEST(ReshapeMover, NoFuelNoChange) {
  ReshapeMover pass;
  PassContext ctx = ContextWithFuel(pass.name(), 0);
  ExpectNoChange(pass, R"(
HloModule m

ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[2,3] parameter(1)
  ra = f32[6] reshape(a)
  rb = f32[6] reshape(b)
  ROOT s = f32[6] add(ra, rb)
}
)",
                 &ctx);
}

// ===== corpus =====

namespace fs = std::filesystem;

// Runs `pass` over every corpus module that parses and verifies; the verifier must stay clean.
void RunOverCorpus(HloPass& pass) {
  const std::vector<testing::CorpusModule>& corpus = testing::CorpusModules();
  if (corpus.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";
  int ran = 0;
  for (const testing::CorpusModule& cm : corpus) {
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(cm.text);
    if (!m.ok() || CountErrors(VerifyModule(**m)) > 0) continue;
    PassContext ctx = MakeTestContext();
    absl::StatusOr<bool> r = pass.Run(m->get(), ctx);
    EXPECT_TRUE(r.ok()) << cm.label << ": " << r.status().message();
    for (const VerifierDiagnostic& d : VerifyModule(**m)) {
      EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
          << cm.label << " after " << pass.name() << ": " << d.ToString();
    }
    ++ran;
  }
  EXPECT_GT(ran, 0);
}

TEST(ControlFlowPassesCorpus, WhileLoopSimplifierKeepsModulesValid) {
  WhileLoopSimplifier pass;
  RunOverCorpus(pass);
}

TEST(ControlFlowPassesCorpus, WhileLoopInvariantCodeMotionKeepsModulesValid) {
  WhileLoopInvariantCodeMotion pass;
  RunOverCorpus(pass);
}

TEST(ControlFlowPassesCorpus, ConditionalSimplifierKeepsModulesValid) {
  ConditionalSimplifier pass;
  RunOverCorpus(pass);
}

TEST(ControlFlowPassesCorpus, ReshapeMoverKeepsModulesValid) {
  ReshapeMover pass;
  RunOverCorpus(pass);
}

}  // namespace
}  // namespace hlowb
