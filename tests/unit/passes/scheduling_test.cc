// Golden tests of the memory-minimising scheduler and of copy insertion.
#include <algorithm>
#include <string>

#include "core/passes/copy_insertion.h"
#include "core/passes/hlo_memory_scheduler.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::MakeTestContext;
using testing::ParseOrDie;
using testing::RunPass;

// Both broadcasts are live at once in the given order; scheduling each slice right after its
// broadcast keeps only one 4 KiB array alive.
constexpr char kBadOrder[] = R"(
HloModule m
ENTRY e {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  x1 = f32[1024]{0} broadcast(p0), dimensions={}
  x2 = f32[1024]{0} broadcast(p1), dimensions={}
  sl1 = f32[1]{0} slice(x1), slice={[0:1]}
  sl2 = f32[1]{0} slice(x2), slice={[0:1]}
  ROOT r = f32[1]{0} add(sl1, sl2)
}
)";

constexpr char kGoodOrder[] = R"(
HloModule m, is_scheduled=true
ENTRY e {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  x1 = f32[1024]{0} broadcast(p0), dimensions={}
  sl1 = f32[1]{0} slice(x1), slice={[0:1]}
  x2 = f32[1024]{0} broadcast(p1), dimensions={}
  sl2 = f32[1]{0} slice(x2), slice={[0:1]}
  ROOT r = f32[1]{0} add(sl1, sl2)
}
)";

TEST(HloMemoryScheduler, ReordersToLowerPeak) {
  HloMemoryScheduler pass;
  ExpectRewrite(pass, kBadOrder, kGoodOrder);
}

TEST(HloMemoryScheduler, PeakHelperSeesTheReduction) {
  std::unique_ptr<Module> before = ParseOrDie(kBadOrder);
  std::unique_ptr<Module> after = ParseOrDie(kGoodOrder);
  ASSERT_TRUE(before && after);
  int64_t bad = ComputationPeakBytes(*before->entry());
  int64_t good = ComputationPeakBytes(*after->entry());
  // Two parameters, both broadcasts and a slice versus one broadcast at a time.
  EXPECT_EQ(bad, 8 + 4096 + 4096 + 4);
  EXPECT_EQ(good, 8 + 4096 + 4 + 4);
  EXPECT_LT(good, bad);
}

TEST(HloMemoryScheduler, GoodOrderIsKept) {
  HloMemoryScheduler pass;
  ExpectNoChange(pass, kGoodOrder);
}

TEST(HloMemoryScheduler, OnlyMarksAnUnscheduledModule) {
  HloMemoryScheduler pass;
  std::string input = kGoodOrder;
  input.replace(input.find(", is_scheduled=true"), 19, "");
  ExpectRewrite(pass, input, kGoodOrder);
}

TEST(HloMemoryScheduler, HonoursControlPredecessors) {
  // sl1 must wait for x2: the schedule cannot free x1 early.
  constexpr char kInput[] = R"(
HloModule m
ENTRY e {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  x1 = f32[1024]{0} broadcast(p0), dimensions={}
  x2 = f32[1024]{0} broadcast(p1), dimensions={}
  sl1 = f32[1]{0} slice(x1), slice={[0:1]}, control-predecessors={x2}
  sl2 = f32[1]{0} slice(x2), slice={[0:1]}
  ROOT r = f32[1]{0} add(sl1, sl2)
}
)";
  HloMemoryScheduler pass;
  bool changed = false;
  std::unique_ptr<Module> m = RunPass(pass, kInput, &changed);
  ASSERT_TRUE(m);
  EXPECT_TRUE(m->config().is_scheduled);
  const auto& order = m->entry()->instructions();
  auto pos = [&](const std::string& name) {
    return std::find_if(order.begin(), order.end(),
                        [&](const Instruction* i) { return i->name() == name; }) -
           order.begin();
  };
  EXPECT_LT(pos("x2"), pos("sl1"));
  EXPECT_LT(pos("x1"), pos("sl1"));
}

TEST(HloMemoryScheduler, KeepsSideEffectOrder) {
  constexpr char kInput[] = R"(
HloModule m
ENTRY e {
  a = f32[256]{0} rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform
  b = f32[256]{0} rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform
  sb = f32[1]{0} slice(b), slice={[0:1]}
  sa = f32[1]{0} slice(a), slice={[0:1]}
  ROOT r = f32[1]{0} subtract(sa, sb)
}
)";
  HloMemoryScheduler pass;
  bool changed = false;
  std::unique_ptr<Module> m = RunPass(pass, kInput, &changed);
  ASSERT_TRUE(m);
  const auto& order = m->entry()->instructions();
  auto pos = [&](const std::string& name) {
    return std::find_if(order.begin(), order.end(),
                        [&](const Instruction* i) { return i->name() == name; }) -
           order.begin();
  };
  EXPECT_LT(pos("a"), pos("b"));
}

TEST(HloMemoryScheduler, NoFuelNoChange) {
  HloMemoryScheduler pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["hlo-memory-scheduler"] = 0;
  ExpectNoChange(pass, kBadOrder, &ctx);
}

// ----- copy insertion -----

TEST(CopyInsertion, EntryRootParameterAndRepeat) {
  CopyInsertion pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p0)
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(p0, a, a)
}
)",
                R"(
HloModule m
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p0)
  copy = f32[4]{0} copy(p0)
  copy.1 = f32[4]{0} copy(a)
  ROOT tuple = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(copy, a, copy.1)
}
)");
}

TEST(CopyInsertion, EntryRootConstant) {
  CopyInsertion pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  ROOT c = f32[2]{0} constant({1, 2})
}
)",
                R"(
HloModule m
ENTRY e {
  c = f32[2]{0} constant({1, 2})
  ROOT copy = f32[2]{0} copy(c)
}
)");
}

TEST(CopyInsertion, TupleParameterAtRootIsTakenApart) {
  CopyInsertion pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY e {
  ROOT p = (f32[2]{0}, s32[]) parameter(0)
}
)",
                R"(
HloModule m
ENTRY e {
  p = (f32[2]{0}, s32[]) parameter(0)
  get-tuple-element = f32[2]{0} get-tuple-element(p), index=0
  copy = f32[2]{0} copy(get-tuple-element)
  get-tuple-element.1 = s32[] get-tuple-element(p), index=1
  copy.1 = s32[] copy(get-tuple-element.1)
  ROOT tuple = (f32[2]{0}, s32[]) tuple(copy, copy.1)
}
)");
}

TEST(CopyInsertion, AliasedOutputParameterIsLeftAlone) {
  CopyInsertion pass;
  ExpectNoChange(pass, R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  ROOT p0 = f32[4]{0} parameter(0)
}
)");
}

TEST(CopyInsertion, ComputedOutputsNeedNothing) {
  CopyInsertion pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} negate(p0)
  b = f32[4]{0} exponential(p0)
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(a, b)
}
)");
}

constexpr char kSwapLoop[] = R"(
HloModule w
cond {
  cp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  x = f32[4]{0} get-tuple-element(bp), index=1
  y = f32[4]{0} get-tuple-element(bp), index=2
  ROOT r = (s32[], f32[4]{0}, f32[4]{0}) tuple(ni, y, x)
}
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4]{0}, f32[4]{0}) tuple(zero, p0, p1)
  w = (s32[], f32[4]{0}, f32[4]{0}) while(init), condition=cond, body=body
  ROOT out = f32[4]{0} get-tuple-element(w), index=1
}
)";

TEST(CopyInsertion, WhileInitAndSwappingBody) {
  CopyInsertion pass;
  // The init's constant and parameters are copied; the counter is updated in place; the
  // swapped elements go through buffers of their own and each write waits for the other
  // element's read.
  ExpectRewrite(pass, kSwapLoop, R"(
HloModule w
cond {
  cp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  lim = s32[] constant(3)
  ROOT lt = pred[] compare(ci, lim), direction=LT
}
body {
  bp = (s32[], f32[4]{0}, f32[4]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  one = s32[] constant(1)
  ni = s32[] add(i, one)
  x = f32[4]{0} get-tuple-element(bp), index=1
  y = f32[4]{0} get-tuple-element(bp), index=2
  copy = f32[4]{0} copy(y)
  copy.2 = f32[4]{0} copy(x)
  copy.1 = f32[4]{0} copy(copy), control-predecessors={copy.2}
  copy.3 = f32[4]{0} copy(copy.2), control-predecessors={copy}
  ROOT tuple = (s32[], f32[4]{0}, f32[4]{0}) tuple(ni, copy.1, copy.3)
}
ENTRY e {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  zero = s32[] constant(0)
  copy.4 = s32[] copy(zero)
  copy.5 = f32[4]{0} copy(p0)
  copy.6 = f32[4]{0} copy(p1)
  tuple.1 = (s32[], f32[4]{0}, f32[4]{0}) tuple(copy.4, copy.5, copy.6)
  w = (s32[], f32[4]{0}, f32[4]{0}) while(tuple.1), condition=cond, body=body
  ROOT out = f32[4]{0} get-tuple-element(w), index=1
}
)");
}

TEST(CopyInsertion, BodyOverwritingAReadElementGetsOrderedCopy) {
  // The dot reads x and writes the loop buffer of x: it cannot update in place.
  CopyInsertion pass;
  constexpr char kInput[] = R"(
HloModule w
cond {
  cp = (s32[], f32[2,2]{1,0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  ROOT lt = pred[] compare(ci, s32[] constant(2)), direction=LT
}
body {
  bp = (s32[], f32[2,2]{1,0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  ni = s32[] add(i, s32[] constant(1))
  x = f32[2,2]{1,0} get-tuple-element(bp), index=1
  d = f32[2,2]{1,0} dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (s32[], f32[2,2]{1,0}) tuple(ni, d)
}
ENTRY e {
  p0 = f32[2,2]{1,0} parameter(0)
  a = f32[2,2]{1,0} negate(p0)
  init = (s32[], f32[2,2]{1,0}) tuple(s32[] constant(0), a)
  ROOT w = (s32[], f32[2,2]{1,0}) while(init), condition=cond, body=body
}
)";
  bool changed = false;
  std::unique_ptr<Module> m = RunPass(pass, kInput, &changed);
  ASSERT_TRUE(m);
  EXPECT_TRUE(changed);
  const Computation* body = m->FindComputation("body");
  ASSERT_NE(body, nullptr);
  const Instruction* root = body->root();
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->name(), "ni");
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kCopy);
  EXPECT_EQ(root->operand(1)->operand(0)->name(), "d");
  // The init's fresh value `a` is only read by the loop: no copy; the constant is copied.
  const Instruction* w = m->entry()->root();
  EXPECT_EQ(w->operand(0)->operand(1)->name(), "a");
  EXPECT_EQ(w->operand(0)->operand(0)->opcode(), Opcode::kCopy);
  std::unique_ptr<Module> before = ParseOrDie(kInput);
  testing::ExpectSameResults(*before, *m);
}

TEST(CopyInsertion, ConditionalBranchReturningItsParameter) {
  CopyInsertion pass;
  ExpectRewrite(pass, R"(
HloModule c
tb {
  tp = f32[4]{0} parameter(0)
  ROOT tn = f32[4]{0} negate(tp)
}
fb {
  ROOT fp = f32[4]{0} parameter(0)
}
ENTRY e {
  pr = pred[] parameter(0)
  p0 = f32[4]{0} parameter(1)
  ROOT c = f32[4]{0} conditional(pr, p0, p0), true_computation=tb, false_computation=fb
}
)",
                R"(
HloModule c
tb {
  tp = f32[4]{0} parameter(0)
  ROOT tn = f32[4]{0} negate(tp)
}
fb {
  fp = f32[4]{0} parameter(0)
  ROOT copy = f32[4]{0} copy(fp)
}
ENTRY e {
  pr = pred[] parameter(0)
  p0 = f32[4]{0} parameter(1)
  ROOT c = f32[4]{0} conditional(pr, p0, p0), true_computation=tb, false_computation=fb
}
)");
}

TEST(CopyInsertion, SecondRunChangesNothing) {
  CopyInsertion pass;
  bool changed = false;
  std::unique_ptr<Module> once = RunPass(pass, kSwapLoop, &changed);
  ASSERT_TRUE(once);
  EXPECT_TRUE(changed);
  ExpectNoChange(pass, testing::Normalize(*once));
}

TEST(CopyInsertion, NoFuelNoChange) {
  CopyInsertion pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["copy-insertion"] = 0;
  ExpectNoChange(pass, kSwapLoop, &ctx);
}

}  // namespace
}  // namespace hlowb
