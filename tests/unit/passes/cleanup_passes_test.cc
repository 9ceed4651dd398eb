// Golden tests for the cleanup passes: cse, tuple-simplifier, call-inliner,
// flatten-call-graph, zero_sized_hlo_elimination, constant_folding, simplify-sorts and
// dot_decomposer. Each rewrite is checked text-in/text-out and, where the interpreter can run
// the module, for unchanged results on fake data; each pass also runs over the corpus.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/call_inliner.h"
#include "core/passes/dot_decomposer.h"
#include "core/passes/flatten_call_graph.h"
#include "core/passes/hlo_constant_folding.h"
#include "core/passes/hlo_cse.h"
#include "core/passes/sort_simplifier.h"
#include "core/passes/tuple_simplifier.h"
#include "core/passes/zero_sized_hlo_elimination.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::MakeTestContext;
using testing::Normalize;
using testing::ParseOrDie;
using testing::RunPass;

// ---------------------------------------------------------------------------------------------
// cse

TEST(HloCseTest, MergesIdenticalInstructions) {
  HloCse pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} add(p0, p0)
  b = f32[4]{0} add(p0, p0)
  ROOT m = f32[4]{0} multiply(a, b)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} add(p0, p0)
  ROOT m = f32[4]{0} multiply(a, a)
}
)");
}

TEST(HloCseTest, MergesChainsOfDuplicates) {
  HloCse pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  a1 = f32[4]{0} add(p0, p1)
  a2 = f32[4]{0} add(p0, p1)
  n1 = f32[4]{0} negate(a1)
  n2 = f32[4]{0} negate(a2)
  m1 = f32[4]{0} multiply(n1, p1)
  m2 = f32[4]{0} multiply(n2, p1)
  ROOT s = f32[4]{0} subtract(m1, m2)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  a1 = f32[4]{0} add(p0, p1)
  n1 = f32[4]{0} negate(a1)
  m1 = f32[4]{0} multiply(n1, p1)
  ROOT s = f32[4]{0} subtract(m1, m1)
}
)");
}

TEST(HloCseTest, MergesEqualConstantsAndTheirUsers) {
  HloCse pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[2]{0} parameter(0)
  c1 = f32[2]{0} constant({1, 2})
  c2 = f32[2]{0} constant({1, 2})
  c3 = f32[2]{0} constant({1, 3})
  a = f32[2]{0} add(c1, p0)
  b = f32[2]{0} add(c2, p0)
  c = f32[2]{0} add(c3, p0)
  ROOT t = (f32[2]{0}, f32[2]{0}, f32[2]{0}) tuple(a, b, c)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[2]{0} parameter(0)
  c1 = f32[2]{0} constant({1, 2})
  c3 = f32[2]{0} constant({1, 3})
  a = f32[2]{0} add(c1, p0)
  c = f32[2]{0} add(c3, p0)
  ROOT t = (f32[2]{0}, f32[2]{0}, f32[2]{0}) tuple(a, a, c)
}
)");
}

TEST(HloCseTest, MergesReducesWithStructurallyEqualComputations) {
  HloCse pass;
  ExpectRewrite(pass, R"(
HloModule m
sum1 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
sum2 {
  x2 = f32[] parameter(0)
  y2 = f32[] parameter(1)
  ROOT sum = f32[] add(x2, y2)
}
ENTRY main {
  p0 = f32[4,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  r1 = f32[4]{0} reduce(p0, zero), dimensions={1}, to_apply=sum1
  r2 = f32[4]{0} reduce(p0, zero), dimensions={1}, to_apply=sum2
  ROOT d = f32[4]{0} divide(r1, r2)
}
)",
                R"(
HloModule m
sum1 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
sum2 {
  x2 = f32[] parameter(0)
  y2 = f32[] parameter(1)
  ROOT sum = f32[] add(x2, y2)
}
ENTRY main {
  p0 = f32[4,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  r1 = f32[4]{0} reduce(p0, zero), dimensions={1}, to_apply=sum1
  ROOT d = f32[4]{0} divide(r1, r1)
}
)");
}

TEST(HloCseTest, KeepsSideEffectingInstructionsApart) {
  HloCse pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r1 = f32[4]{0} rng(lo, hi), distribution=rng_uniform
  r2 = f32[4]{0} rng(lo, hi), distribution=rng_uniform
  ROOT s = f32[4]{0} subtract(r1, r2)
}
)");
}

TEST(HloCseTest, KeepsDifferentAttributesAndLayoutsApart) {
  HloCse pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  lt = pred[4]{0} compare(p0, p1), direction=LT
  gt = pred[4]{0} compare(p0, p1), direction=GT
  lo = f32[2]{0} slice(p0), slice={[0:2]}
  hi = f32[2]{0} slice(p0), slice={[2:4]}
  q = f32[2,2]{1,0} parameter(2)
  c1 = f32[2,2]{1,0} copy(q)
  c2 = f32[2,2]{0,1} copy(q)
  ROOT t = (pred[4]{0}, pred[4]{0}, f32[2]{0}, f32[2]{0}, f32[2,2]{1,0}, f32[2,2]{0,1}) tuple(lt, gt, lo, hi, c1, c2)
}
)");
}

TEST(HloCseTest, KeepsDifferentOperandOrderAndParametersApart) {
  HloCse pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  a = f32[4]{0} subtract(p0, p1)
  b = f32[4]{0} subtract(p1, p0)
  ROOT m = f32[4]{0} multiply(a, b)
}
)");
}

TEST(HloCseTest, FuelZeroMergesNothing) {
  HloCse pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["cse"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} add(p0, p0)
  b = f32[4]{0} add(p0, p0)
  ROOT m = f32[4]{0} multiply(a, b)
}
)",
                 &ctx);
}

TEST(HloCseTest, FuelOneMergesOnlyTheFirstPair) {
  HloCse pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["cse"] = 1;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  a = f32[4]{0} add(p0, p0)
  b = f32[4]{0} add(p0, p0)
  c = f32[4]{0} negate(p0)
  d = f32[4]{0} negate(p0)
  m = f32[4]{0} multiply(a, b)
  ROOT n = f32[4]{0} multiply(c, d)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  c = f32[4]{0} negate(p0)
  d = f32[4]{0} negate(p0)
  ROOT n = f32[4]{0} multiply(c, d)
}
)",
                /*check_semantics=*/true, &ctx);
}

// ---------------------------------------------------------------------------------------------
// tuple-simplifier

TEST(TupleSimplifierTest, GetTupleElementOfTuple) {
  TupleSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = s32[2]{0} parameter(1)
  t = (f32[4]{0}, s32[2]{0}) tuple(p0, p1)
  g = s32[2]{0} get-tuple-element(t), index=1
  ROOT n = s32[2]{0} negate(g)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = s32[2]{0} parameter(1)
  ROOT n = s32[2]{0} negate(p1)
}
)");
}

TEST(TupleSimplifierTest, NestedTuplesCollapse) {
  TupleSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  a = f32[4]{0} parameter(0)
  b = f32[3]{0} parameter(1)
  c = f32[2]{0} parameter(2)
  inner = (f32[4]{0}, f32[3]{0}) tuple(a, b)
  outer = ((f32[4]{0}, f32[3]{0}), f32[2]{0}) tuple(inner, c)
  g0 = (f32[4]{0}, f32[3]{0}) get-tuple-element(outer), index=0
  g1 = f32[3]{0} get-tuple-element(g0), index=1
  ROOT r = f32[3]{0} negate(g1)
}
)",
                R"(
HloModule m
ENTRY main {
  a = f32[4]{0} parameter(0)
  b = f32[3]{0} parameter(1)
  c = f32[2]{0} parameter(2)
  ROOT r = f32[3]{0} negate(b)
}
)");
}

TEST(TupleSimplifierTest, TupleOfAllElementsIsTheSource) {
  TupleSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p = (f32[4]{0}, s32[]) parameter(0)
  g0 = f32[4]{0} get-tuple-element(p), index=0
  g1 = s32[] get-tuple-element(p), index=1
  t = (f32[4]{0}, s32[]) tuple(g0, g1)
  ROOT r = ((f32[4]{0}, s32[]), f32[4]{0}) tuple(t, g0)
}
)",
                R"(
HloModule m
ENTRY main {
  p = (f32[4]{0}, s32[]) parameter(0)
  g0 = f32[4]{0} get-tuple-element(p), index=0
  ROOT r = ((f32[4]{0}, s32[]), f32[4]{0}) tuple(p, g0)
}
)");
}

TEST(TupleSimplifierTest, WhileBodyRepackingIsRemoved) {
  TupleSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
cond {
  cp = (s32[], f32[2]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  limit = s32[] constant(3)
  ROOT lt = pred[] compare(ci, limit), direction=LT
}
body {
  bp = (s32[], f32[2]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[2]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  packed = (s32[], f32[2]{0}) tuple(next, v)
  again = s32[] get-tuple-element(packed), index=0
  ROOT out = (s32[], f32[2]{0}) tuple(again, v)
}
ENTRY main {
  init = (s32[], f32[2]{0}) parameter(0)
  ROOT w = (s32[], f32[2]{0}) while(init), condition=cond, body=body
}
)",
                R"(
HloModule m
cond {
  cp = (s32[], f32[2]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  limit = s32[] constant(3)
  ROOT lt = pred[] compare(ci, limit), direction=LT
}
body {
  bp = (s32[], f32[2]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v = f32[2]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  ROOT out = (s32[], f32[2]{0}) tuple(next, v)
}
ENTRY main {
  init = (s32[], f32[2]{0}) parameter(0)
  ROOT w = (s32[], f32[2]{0}) while(init), condition=cond, body=body
}
)",
                /*check_semantics=*/false);
}

TEST(TupleSimplifierTest, ReorderedOrPartialTuplesStay) {
  TupleSimplifier pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p = (f32[4]{0}, f32[4]{0}) parameter(0)
  q = (f32[4]{0}, f32[4]{0}) parameter(1)
  g0 = f32[4]{0} get-tuple-element(p), index=0
  g1 = f32[4]{0} get-tuple-element(p), index=1
  h1 = f32[4]{0} get-tuple-element(q), index=1
  swapped = (f32[4]{0}, f32[4]{0}) tuple(g1, g0)
  mixed = (f32[4]{0}, f32[4]{0}) tuple(g0, h1)
  partial = (f32[4]{0}) tuple(g0)
  ROOT r = ((f32[4]{0}, f32[4]{0}), (f32[4]{0}, f32[4]{0}), (f32[4]{0})) tuple(swapped, mixed, partial)
}
)");
}

// ---------------------------------------------------------------------------------------------
// call-inliner

TEST(CallInlinerTest, InlinesASingleCall) {
  CallInliner pass;
  ExpectRewrite(pass, R"(
HloModule m
callee {
  x = f32[4]{0} parameter(0)
  y = f32[4]{0} parameter(1)
  s = f32[4]{0} add(x, y)
  ROOT m = f32[4]{0} multiply(s, y)
}
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  c = f32[4]{0} call(p0, p1), to_apply=callee
  ROOT n = f32[4]{0} negate(c)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  p1 = f32[4]{0} parameter(1)
  s.1 = f32[4]{0} add(p0, p1)
  m.1 = f32[4]{0} multiply(s.1, p1)
  ROOT n = f32[4]{0} negate(m.1)
}
)");
}

TEST(CallInlinerTest, InlinesNestedCallsAndEveryCallSite) {
  CallInliner pass;
  ExpectRewrite(pass, R"(
HloModule m
inner {
  a = f32[2]{0} parameter(0)
  ROOT e = f32[2]{0} exponential(a)
}
outer {
  b = f32[2]{0} parameter(0)
  ci = f32[2]{0} call(b), to_apply=inner
  ROOT n = f32[2]{0} negate(ci)
}
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} call(p), to_apply=outer
  c2 = f32[2]{0} call(c1), to_apply=outer
  ROOT t = (f32[2]{0}, f32[2]{0}) tuple(c1, c2)
}
)",
                R"(
HloModule m
ENTRY main {
  p = f32[2]{0} parameter(0)
  e.2 = f32[2]{0} exponential(p)
  n.1 = f32[2]{0} negate(e.2)
  e.3 = f32[2]{0} exponential(n.1)
  n.2 = f32[2]{0} negate(e.3)
  ROOT t = (f32[2]{0}, f32[2]{0}) tuple(n.1, n.2)
}
)");
}

TEST(CallInlinerTest, InlinesCallsInsideWhileBodiesAndKeepsSharedComputations) {
  CallInliner pass;
  ExpectRewrite(pass, R"(
HloModule m
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
step {
  v = f32[3]{0} parameter(0)
  zero = f32[] constant(0)
  r = f32[] reduce(v, zero), dimensions={0}, to_apply=add_f32
  b = f32[3]{0} broadcast(r), dimensions={}
  ROOT sum = f32[3]{0} add(v, b)
}
cond {
  cp = (s32[], f32[3]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  limit = s32[] constant(2)
  ROOT lt = pred[] compare(ci, limit), direction=LT
}
body {
  bp = (s32[], f32[3]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v0 = f32[3]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  stepped = f32[3]{0} call(v0), to_apply=step
  ROOT out = (s32[], f32[3]{0}) tuple(next, stepped)
}
ENTRY main {
  p = f32[3]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[3]{0}) tuple(z, p)
  w = (s32[], f32[3]{0}) while(init), condition=cond, body=body
  ROOT res = f32[3]{0} get-tuple-element(w), index=1
}
)",
                R"(
HloModule m
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
cond {
  cp = (s32[], f32[3]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  limit = s32[] constant(2)
  ROOT lt = pred[] compare(ci, limit), direction=LT
}
body {
  bp = (s32[], f32[3]{0}) parameter(0)
  i = s32[] get-tuple-element(bp), index=0
  v0 = f32[3]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(i, one)
  zero.1 = f32[] constant(0)
  r.1 = f32[] reduce(v0, zero.1), dimensions={0}, to_apply=add_f32
  b.1 = f32[3]{0} broadcast(r.1), dimensions={}
  sum.1 = f32[3]{0} add(v0, b.1)
  ROOT out = (s32[], f32[3]{0}) tuple(next, sum.1)
}
ENTRY main {
  p = f32[3]{0} parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[3]{0}) tuple(z, p)
  w = (s32[], f32[3]{0}) while(init), condition=cond, body=body
  ROOT res = f32[3]{0} get-tuple-element(w), index=1
}
)");
}

TEST(CallInlinerTest, ControlDependenciesMoveOntoTheCopies) {
  CallInliner pass;
  ExpectRewrite(pass, R"(
HloModule m
callee {
  x = f32[4]{0} parameter(0)
  e = f32[4]{0} exponential(x)
  ROOT n = f32[4]{0} negate(e)
}
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  before = f32[4]{0} abs(p0)
  c = f32[4]{0} call(p0), to_apply=callee, control-predecessors={before}
  after = f32[4]{0} sqrt(p0), control-predecessors={c}
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(before, c, after)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  before = f32[4]{0} abs(p0)
  e.1 = f32[4]{0} exponential(p0), control-predecessors={before}
  n.1 = f32[4]{0} negate(e.1)
  after = f32[4]{0} sqrt(p0), control-predecessors={n.1}
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(before, n.1, after)
}
)");
}

TEST(CallInlinerTest, NoCallsNoChange) {
  CallInliner pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(p0)
}
)");
}

TEST(CallInlinerTest, FuelZeroInlinesNothing) {
  CallInliner pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["call-inliner"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
callee {
  x = f32[4]{0} parameter(0)
  ROOT n = f32[4]{0} negate(x)
}
ENTRY main {
  p0 = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} call(p0), to_apply=callee
}
)",
                 &ctx);
}

// ---------------------------------------------------------------------------------------------
// flatten-call-graph

TEST(FlattenCallGraphTest, SecondCallGetsAClone) {
  FlattenCallGraph pass;
  ExpectRewrite(pass, R"(
HloModule m
f {
  x = f32[2]{0} parameter(0)
  ROOT n = f32[2]{0} negate(x)
}
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} call(p), to_apply=f
  ROOT c2 = f32[2]{0} call(c1), to_apply=f
}
)",
                R"(
HloModule m
f {
  x = f32[2]{0} parameter(0)
  ROOT n = f32[2]{0} negate(x)
}
f.clone {
  x.clone = f32[2]{0} parameter(0)
  ROOT n.clone = f32[2]{0} negate(x.clone)
}
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} call(p), to_apply=f
  ROOT c2 = f32[2]{0} call(c1), to_apply=f.clone
}
)");
}

TEST(FlattenCallGraphTest, NestedSharedCalleesAreClonedRecursively) {
  FlattenCallGraph pass;
  ExpectRewrite(pass, R"(
HloModule m
g {
  y = f32[2]{0} parameter(0)
  ROOT e = f32[2]{0} exponential(y)
}
f {
  x = f32[2]{0} parameter(0)
  ROOT c = f32[2]{0} call(x), to_apply=g
}
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} call(p), to_apply=f
  ROOT c2 = f32[2]{0} call(c1), to_apply=f
}
)",
                R"(
HloModule m
g {
  y = f32[2]{0} parameter(0)
  ROOT e = f32[2]{0} exponential(y)
}
g.clone {
  y.clone = f32[2]{0} parameter(0)
  ROOT e.clone = f32[2]{0} exponential(y.clone)
}
f {
  x = f32[2]{0} parameter(0)
  ROOT c = f32[2]{0} call(x), to_apply=g
}
f.clone {
  x.clone = f32[2]{0} parameter(0)
  ROOT c.clone = f32[2]{0} call(x.clone), to_apply=g.clone
}
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} call(p), to_apply=f
  ROOT c2 = f32[2]{0} call(c1), to_apply=f.clone
}
)");
}

TEST(FlattenCallGraphTest, WhileSharingBodyAndEmbeddedUseAreSplit) {
  FlattenCallGraph pass;
  ExpectRewrite(pass, R"(
HloModule m
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
cond {
  cp = s32[] parameter(0)
  limit = s32[] constant(5)
  ROOT lt = pred[] compare(cp, limit), direction=LT
}
body {
  bp = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] call(bp, one), to_apply=add_s32
}
ENTRY main {
  p = s32[] parameter(0)
  w1 = s32[] while(p), condition=cond, body=body
  w2 = s32[] while(w1), condition=cond, body=body
  v = s32[3]{0} parameter(1)
  zero = s32[] constant(0)
  r = s32[] reduce(v, zero), dimensions={0}, to_apply=add_s32
  ROOT t = (s32[], s32[]) tuple(w2, r)
}
)",
                R"(
HloModule m
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
add_s32.clone {
  a.clone = s32[] parameter(0)
  b.clone = s32[] parameter(1)
  ROOT s.clone = s32[] add(a.clone, b.clone)
}
add_s32.clone.clone {
  a.clone.clone = s32[] parameter(0)
  b.clone.clone = s32[] parameter(1)
  ROOT s.clone.clone = s32[] add(a.clone.clone, b.clone.clone)
}
cond {
  cp = s32[] parameter(0)
  limit = s32[] constant(5)
  ROOT lt = pred[] compare(cp, limit), direction=LT
}
cond.clone {
  cp.clone = s32[] parameter(0)
  limit.clone = s32[] constant(5)
  ROOT lt.clone = pred[] compare(cp.clone, limit.clone), direction=LT
}
body {
  bp = s32[] parameter(0)
  one = s32[] constant(1)
  ROOT next = s32[] call(bp, one), to_apply=add_s32.clone
}
body.clone {
  bp.clone = s32[] parameter(0)
  one.clone = s32[] constant(1)
  ROOT next.clone = s32[] call(bp.clone, one.clone), to_apply=add_s32.clone.clone
}
ENTRY main {
  p = s32[] parameter(0)
  w1 = s32[] while(p), condition=cond, body=body
  w2 = s32[] while(w1), condition=cond.clone, body=body.clone
  v = s32[3]{0} parameter(1)
  zero = s32[] constant(0)
  r = s32[] reduce(v, zero), dimensions={0}, to_apply=add_s32
  ROOT t = (s32[], s32[]) tuple(w2, r)
}
)");
}

TEST(FlattenCallGraphTest, EmbeddedOnlySharingStays) {
  FlattenCallGraph pass;
  ExpectNoChange(pass, R"(
HloModule m
add_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  p = f32[4,3]{1,0} parameter(0)
  zero = f32[] constant(0)
  r1 = f32[4]{0} reduce(p, zero), dimensions={1}, to_apply=add_f32
  r2 = f32[3]{0} reduce(p, zero), dimensions={0}, to_apply=add_f32
  ROOT t = (f32[4]{0}, f32[3]{0}) tuple(r1, r2)
}
)");
}

// ---------------------------------------------------------------------------------------------
// zero_sized_hlo_elimination

TEST(ZeroSizedHloEliminationTest, ZeroElementResultsBecomeEmptyConstants) {
  ZeroSizedHloElimination pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p = f32[4,3]{1,0} parameter(0)
  s = f32[0,3]{1,0} slice(p), slice={[0:0], [0:3]}
  n = f32[0,3]{1,0} negate(s)
  ROOT c = f32[4,3]{1,0} concatenate(n, p), dimensions={0}
}
)",
                R"(
HloModule m
ENTRY main {
  p = f32[4,3]{1,0} parameter(0)
  constant.1 = f32[0,3]{1,0} constant({  })
  ROOT c = f32[4,3]{1,0} concatenate(constant.1, p), dimensions={0}
}
)");
}

TEST(ZeroSizedHloEliminationTest, ZeroSizedRootIsReplaced) {
  ZeroSizedHloElimination pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p0 = s32[0]{0} parameter(0)
  p1 = s32[0]{0} parameter(1)
  ROOT a = s32[0]{0} add(p0, p1)
}
)",
                R"(
HloModule m
ENTRY main {
  p0 = s32[0]{0} parameter(0)
  p1 = s32[0]{0} parameter(1)
  ROOT constant = s32[0]{0} constant({})
}
)");
}

TEST(ZeroSizedHloEliminationTest, ParametersConstantsAndSideEffectsStay) {
  ZeroSizedHloElimination pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  p0 = f32[0]{0} parameter(0)
  c = f32[0]{0} constant({})
  e = f32[0]{0} custom-call(p0), custom_call_target="effect", custom_call_has_side_effect=true
  ROOT t = (f32[0]{0}, f32[0]{0}, f32[0]{0}) tuple(p0, c, e)
}
)");
}

// ---------------------------------------------------------------------------------------------
// constant_folding

TEST(HloConstantFoldingTest, FoldsChains) {
  HloConstantFolding pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  p = f32[2]{0} parameter(0)
  c1 = f32[2]{0} constant({1, 2})
  c2 = f32[2]{0} constant({3, 4})
  a = f32[2]{0} add(c1, c2)
  m = f32[2]{0} multiply(a, c2)
  ROOT r = f32[2]{0} add(m, p)
}
)",
                R"(
HloModule m
ENTRY main {
  p = f32[2]{0} parameter(0)
  constant.1 = f32[2]{0} constant({12, 24})
  ROOT r = f32[2]{0} add(constant.1, p)
}
)");
}

TEST(HloConstantFoldingTest, FoldsReduceAndConvert) {
  HloConstantFolding pass;
  ExpectRewrite(pass, R"(
HloModule m
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  c = s32[2,3]{1,0} constant({{1, 2, 3}, {4, 5, 6}})
  zero = s32[] constant(0)
  r = s32[2]{0} reduce(c, zero), dimensions={1}, to_apply=add_s32
  ROOT f = f32[2]{0} convert(r)
}
)",
                R"(
HloModule m
add_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY main {
  ROOT constant.1 = f32[2]{0} constant({6, 15})
}
)");
}

TEST(HloConstantFoldingTest, BroadcastsIotasAndRngStay) {
  HloConstantFolding pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  c = f32[] constant(2)
  b = f32[1000]{0} broadcast(c), dimensions={}
  i = f32[1000]{0} iota(), iota_dimension=0
  a = f32[1000]{0} add(b, i)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  r = f32[1000]{0} rng(lo, hi), distribution=rng_uniform
  ROOT m = f32[1000]{0} multiply(a, r)
}
)");
}

TEST(HloConstantFoldingTest, DeviceIdsAndCollectivesStay) {
  // Which replica or partition runs, and what a group's devices combine, is known only when the
  // program runs on its devices: folding them as one device would change multi-device results.
  HloConstantFolding pass;
  ExpectNoChange(pass, R"(
HloModule m, replica_count=2, num_partitions=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  r = u32[] replica-id()
  p = u32[] partition-id()
  s = u32[] add(r, p)
  f = f32[] convert(s)
  c = f32[4]{0} constant({1, 2, 3, 4})
  a = f32[4]{0} all-reduce(c), replica_groups={{0,1}}, to_apply=add
  b = f32[4]{0} broadcast(f), dimensions={}
  ROOT m = f32[4]{0} multiply(a, b)
}
)");
}

TEST(HloConstantFoldingTest, ElidedConstantsAndTuplesStay) {
  HloConstantFolding pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  e = f32[4]{0} constant({...})
  n = f32[4]{0} negate(e)
  c = f32[2]{0} constant({1, 2})
  t = (f32[2]{0}, f32[4]{0}) tuple(c, n)
  ROOT g = f32[4]{0} get-tuple-element(t), index=1
}
)");
}

TEST(HloConstantFoldingTest, RespectsTheSizeLimit) {
  HloConstantFolding pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().constant_folding_max_elements = 3;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  c1 = f32[4]{0} constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} negate(c1)
}
)",
                 &ctx);
}

TEST(HloConstantFoldingTest, NothingWithoutAnEvaluator) {
  HloConstantFolding pass;
  PassContext ctx;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  c1 = f32[4]{0} constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} negate(c1)
}
)",
                 &ctx);
}

TEST(HloConstantFoldingTest, FuelZeroFoldsNothing) {
  HloConstantFolding pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["constant_folding"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  c1 = f32[4]{0} constant({1, 2, 3, 4})
  ROOT n = f32[4]{0} negate(c1)
}
)",
                 &ctx);
}

// ---------------------------------------------------------------------------------------------
// simplify-sorts

TEST(SortSimplifierTest, UnusedValuesAreDropped) {
  SortSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
less {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
ENTRY main {
  keys = f32[8]{0} parameter(0)
  values = s32[8]{0} parameter(1)
  sort = (f32[8]{0}, s32[8]{0}) sort(keys, values), dimensions={0}, to_apply=less
  ROOT g = f32[8]{0} get-tuple-element(sort), index=0
}
)",
                R"(
HloModule m
less.1 {
  k0.1 = f32[] parameter(0)
  k1.1 = f32[] parameter(1)
  ROOT lt.1 = pred[] compare(k0.1, k1.1), direction=LT
}
ENTRY main {
  keys = f32[8]{0} parameter(0)
  values = s32[8]{0} parameter(1)
  ROOT sort.1 = f32[8]{0} sort(keys), dimensions={0}, to_apply=less.1
}
)");
}

TEST(SortSimplifierTest, MiddleOperandOfThreeIsDropped) {
  SortSimplifier pass;
  ExpectRewrite(pass, R"(
HloModule m
less {
  k0 = s32[] parameter(0)
  k1 = s32[] parameter(1)
  a0 = f32[] parameter(2)
  a1 = f32[] parameter(3)
  b0 = f32[] parameter(4)
  b1 = f32[] parameter(5)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
ENTRY main {
  keys = s32[6]{0} parameter(0)
  a = f32[6]{0} parameter(1)
  b = f32[6]{0} parameter(2)
  sort = (s32[6]{0}, f32[6]{0}, f32[6]{0}) sort(keys, a, b), dimensions={0}, to_apply=less
  gk = s32[6]{0} get-tuple-element(sort), index=0
  gb = f32[6]{0} get-tuple-element(sort), index=2
  ROOT t = (s32[6]{0}, f32[6]{0}) tuple(gk, gb)
}
)",
                R"(
HloModule m
less.1 {
  k0.1 = s32[] parameter(0)
  k1.1 = s32[] parameter(1)
  b0.1 = f32[] parameter(2)
  b1.1 = f32[] parameter(3)
  ROOT lt.1 = pred[] compare(k0.1, k1.1), direction=LT
}
ENTRY main {
  keys = s32[6]{0} parameter(0)
  a = f32[6]{0} parameter(1)
  b = f32[6]{0} parameter(2)
  sort.1 = (s32[6]{0}, f32[6]{0}) sort(keys, b), dimensions={0}, to_apply=less.1
  gk = s32[6]{0} get-tuple-element(sort.1), index=0
  gb = f32[6]{0} get-tuple-element(sort.1), index=1
  ROOT t = (s32[6]{0}, f32[6]{0}) tuple(gk, gb)
}
)");
}

TEST(SortSimplifierTest, OperandsTheComparatorReadsStay) {
  SortSimplifier pass;
  ExpectNoChange(pass, R"(
HloModule m
less {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  eq = pred[] compare(k0, k1), direction=EQ
  klt = pred[] compare(k0, k1), direction=LT
  vlt = pred[] compare(v0, v1), direction=LT
  ROOT r = pred[] select(eq, vlt, klt)
}
ENTRY main {
  keys = f32[8]{0} parameter(0)
  values = s32[8]{0} parameter(1)
  sort = (f32[8]{0}, s32[8]{0}) sort(keys, values), dimensions={0}, to_apply=less
  ROOT g = f32[8]{0} get-tuple-element(sort), index=0
}
)");
}

TEST(SortSimplifierTest, SortUsedAsAWholeStays) {
  SortSimplifier pass;
  ExpectNoChange(pass, R"(
HloModule m
less {
  k0 = f32[] parameter(0)
  k1 = f32[] parameter(1)
  v0 = s32[] parameter(2)
  v1 = s32[] parameter(3)
  ROOT lt = pred[] compare(k0, k1), direction=LT
}
ENTRY main {
  keys = f32[8]{0} parameter(0)
  values = s32[8]{0} parameter(1)
  ROOT sort = (f32[8]{0}, s32[8]{0}) sort(keys, values), dimensions={0}, to_apply=less
}
)");
}

// ---------------------------------------------------------------------------------------------
// dot_decomposer

TEST(DotDecomposerTest, MergesTwoContractingDimensions) {
  DotDecomposer pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  l = f32[2,3,4]{2,1,0} parameter(0)
  r = f32[3,4,5]{2,1,0} parameter(1)
  ROOT d = f32[2,5]{1,0} dot(l, r), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}
}
)",
                R"(
HloModule m
ENTRY main {
  l = f32[2,3,4]{2,1,0} parameter(0)
  r = f32[3,4,5]{2,1,0} parameter(1)
  reshape = f32[2,12]{1,0} reshape(l)
  reshape.1 = f32[12,5]{1,0} reshape(r)
  ROOT d.1 = f32[2,5]{1,0} dot(reshape, reshape.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(DotDecomposerTest, MovesBatchDimensionsFirst) {
  DotDecomposer pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  l = f32[3,2,4]{2,1,0} parameter(0)
  r = f32[2,4,5]{2,1,0} parameter(1)
  ROOT d = f32[2,3,5]{2,1,0} dot(l, r), lhs_batch_dims={1}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)",
                R"(
HloModule m
ENTRY main {
  l = f32[3,2,4]{2,1,0} parameter(0)
  r = f32[2,4,5]{2,1,0} parameter(1)
  transpose = f32[2,3,4]{2,1,0} transpose(l), dimensions={1,0,2}
  ROOT d.1 = f32[2,3,5]{2,1,0} dot(transpose, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
}
)");
}

TEST(DotDecomposerTest, MergesNonContractingDimensionsAndReshapesBack) {
  DotDecomposer pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  l = f32[2,4,3]{2,1,0} parameter(0)
  r = f32[5,4]{1,0} parameter(1)
  ROOT d = f32[2,3,5]{2,1,0} dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
)",
                R"(
HloModule m
ENTRY main {
  l = f32[2,4,3]{2,1,0} parameter(0)
  r = f32[5,4]{1,0} parameter(1)
  transpose = f32[2,3,4]{2,1,0} transpose(l), dimensions={0,2,1}
  reshape = f32[6,4]{1,0} reshape(transpose)
  transpose.1 = f32[4,5]{1,0} transpose(r), dimensions={1,0}
  d.1 = f32[6,5]{1,0} dot(reshape, transpose.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT reshape.1 = f32[2,3,5]{2,1,0} reshape(d.1)
}
)");
}

TEST(DotDecomposerTest, OuterProductGetsAUnitContractingDimension) {
  DotDecomposer pass;
  ExpectRewrite(pass, R"(
HloModule m
ENTRY main {
  l = f32[2]{0} parameter(0)
  r = f32[3]{0} parameter(1)
  ROOT d = f32[2,3]{1,0} dot(l, r)
}
)",
                R"(
HloModule m
ENTRY main {
  l = f32[2]{0} parameter(0)
  r = f32[3]{0} parameter(1)
  reshape = f32[2,1]{1,0} reshape(l)
  reshape.1 = f32[1,3]{1,0} reshape(r)
  ROOT d.1 = f32[2,3]{1,0} dot(reshape, reshape.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(DotDecomposerTest, CanonicalDotsStay) {
  DotDecomposer pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  mm = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ba = f32[5,2,3]{2,1,0} parameter(2)
  bb = f32[5,3,4]{2,1,0} parameter(3)
  bmm = f32[5,2,4]{2,1,0} dot(ba, bb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  v = f32[3]{0} parameter(4)
  mv = f32[2]{0} dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,4]{1,0}, f32[5,2,4]{2,1,0}, f32[2]{0}) tuple(mm, bmm, mv)
}
)");
}

TEST(DotDecomposerTest, FuelZeroRewritesNothing) {
  DotDecomposer pass;
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["dot_decomposer"] = 0;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY main {
  l = f32[2]{0} parameter(0)
  r = f32[3]{0} parameter(1)
  ROOT d = f32[2,3]{1,0} dot(l, r)
}
)",
                 &ctx);
}

// ---------------------------------------------------------------------------------------------
// Corpus: every pass leaves every valid corpus module valid.

void RunOverCorpus(HloPass& pass) {
  if (testing::CorpusModules().empty()) {
    GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";
  }
  int modules = 0;
  int changed_modules = 0;
  int evaluated_modules = 0;
  for (const testing::CorpusModule& cm : testing::CorpusModules()) {
    std::unique_ptr<Module> module = testing::ParseValidModule(cm.text);
    if (!module) continue;
    ++modules;
    const std::string& label = cm.label;
    std::unique_ptr<Module> before = CloneModule(*module);
    PassContext ctx = MakeTestContext();
    absl::StatusOr<bool> changed = pass.Run(module.get(), ctx);
    ASSERT_TRUE(changed.ok()) << pass.name() << " on " << label << ": "
                              << changed.status().message();
    int errors = 0;
    for (const VerifierDiagnostic& d : VerifyModule(*module)) {
      EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
          << pass.name() << " on " << label << ": " << d.ToString();
      errors += d.severity == VerifierDiagnostic::Severity::kError;
    }
    if (!*changed || errors > 0) continue;
    ++changed_modules;
    // Where the interpreter can run the module as it was, the rewritten module must give the
    // same results on the same fake arguments.
    FakeDataOptions fake;
    fake.seed = 7;
    absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(*before, fake);
    if (!args.ok()) continue;
    EvaluatorOptions eval;
    eval.memory_budget_bytes = uint64_t{1} << 30;
    if (!EvaluateModule(*before, *args, eval).ok()) continue;
    ++evaluated_modules;
    SCOPED_TRACE(label);
    testing::ExpectSameResults(*before, *module);
  }
  EXPECT_GT(modules, 0);
  std::cout << pass.name() << ": " << modules << " corpus modules, " << changed_modules
            << " changed, " << evaluated_modules << " of those compared on fake data\n";
}

TEST(CleanupPassesCorpusTest, Cse) {
  HloCse pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, TupleSimplifier) {
  TupleSimplifier pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, CallInliner) {
  CallInliner pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, FlattenCallGraph) {
  FlattenCallGraph pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, ZeroSizedHloElimination) {
  ZeroSizedHloElimination pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, ConstantFolding) {
  HloConstantFolding pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, SortSimplifier) {
  SortSimplifier pass;
  RunOverCorpus(pass);
}
TEST(CleanupPassesCorpusTest, DotDecomposer) {
  DotDecomposer pass;
  RunOverCorpus(pass);
}

}  // namespace
}  // namespace hlowb
