// Golden tests for the fusion passes: instruction fusion (cpu "fusion" and gpu
// "priority-fusion"), multi-output fusion, fusion merger, horizontal loop fusion, and
// CountKernels; plus a run over the corpus checking the verifier and, where the interpreter is
// quick, the results.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "core/analysis/verifier.h"
#include "core/passes/fusion_merger.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/horizontal_fusion.h"
#include "core/passes/instruction_fusion.h"
#include "core/passes/multi_output_fusion.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::ExpectSameResults;
using testing::MakeTestContext;
using testing::Normalize;
using testing::ParseOrDie;

// ----- InstructionFusion (cpu: "fusion") -----

TEST(InstructionFusionTest, Names) {
  EXPECT_EQ(InstructionFusion("cpu").name(), "fusion");
  EXPECT_EQ(InstructionFusion("gpu").name(), "priority-fusion");
}

constexpr char kElementwiseChain[] = R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  add = f32[8]{0} add(p0, p1)
  negate = f32[8]{0} negate(add)
  ROOT multiply = f32[8]{0} multiply(negate, p1)
}
)";

TEST(InstructionFusionTest, CpuFusesElementwiseChain) {
  InstructionFusion pass("cpu");
  ExpectRewrite(pass, kElementwiseChain, R"(
HloModule m

fused_computation {
  param_0 = f32[8]{0} parameter(0)
  param_1.1 = f32[8]{0} parameter(1)
  add = f32[8]{0} add(param_1.1, param_0)
  negate = f32[8]{0} negate(add)
  ROOT multiply = f32[8]{0} multiply(negate, param_0)
}

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  ROOT fusion = f32[8]{0} fusion(p1, p0), kind=kLoop, calls=fused_computation
}
)");
}

TEST(InstructionFusionTest, FuelZeroChangesNothing) {
  InstructionFusion pass("cpu");
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["fusion"] = 0;
  ExpectNoChange(pass, kElementwiseChain, &ctx);
}

TEST(InstructionFusionTest, FuelOneFusesOnce) {
  InstructionFusion pass("cpu");
  PassContext ctx = MakeTestContext();
  ctx.mutable_options().fuel["fusion"] = 1;
  ExpectRewrite(pass, kElementwiseChain, R"(
HloModule m

fused_computation {
  param_0 = f32[8]{0} parameter(0)
  param_1 = f32[8]{0} parameter(1)
  negate = f32[8]{0} negate(param_1)
  ROOT multiply = f32[8]{0} multiply(negate, param_0)
}

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  add = f32[8]{0} add(p0, p1)
  ROOT fusion = f32[8]{0} fusion(p1, add), kind=kLoop, calls=fused_computation
}
)",
                /*check_semantics=*/true, &ctx);
}

constexpr char kRowReduction[] = R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  multiply = f32[4,8]{1,0} multiply(p0, p0)
  zero = f32[] constant(0)
  ROOT reduce = f32[4]{0} reduce(multiply, zero), dimensions={1}, to_apply=sum
}
)";

TEST(InstructionFusionTest, CpuFusesRowReductionAsLoop) {
  InstructionFusion pass("cpu");
  ExpectRewrite(pass, kRowReduction, R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

fused_computation {
  param_1 = f32[4,8]{1,0} parameter(0)
  zero = f32[] constant(0)
  multiply = f32[4,8]{1,0} multiply(param_1, param_1)
  ROOT reduce = f32[4]{0} reduce(multiply, zero), dimensions={1}, to_apply=sum
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  ROOT fusion = f32[4]{0} fusion(p0), kind=kLoop, calls=fused_computation
}
)");
}

// The scalar init value joins the fusion once its user is one, as in XLA's GPU dumps.
TEST(InstructionFusionTest, GpuFusesReductionAsInputFusion) {
  InstructionFusion pass("gpu");
  ExpectRewrite(pass, kRowReduction, R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

fused_computation {
  param_1 = f32[4,8]{1,0} parameter(0)
  zero = f32[] constant(0)
  multiply = f32[4,8]{1,0} multiply(param_1, param_1)
  ROOT reduce = f32[4]{0} reduce(multiply, zero), dimensions={1}, to_apply=sum
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  ROOT fusion = f32[4]{0} fusion(p0), kind=kInput, calls=fused_computation
}
)");
}

TEST(InstructionFusionTest, CpuFusesMajorDimensionReductionToo) {
  InstructionFusion pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  multiply = f32[4,8]{1,0} multiply(p0, p0)
  zero = f32[] constant(0)
  ROOT reduce = f32[8]{0} reduce(multiply, zero), dimensions={0}, to_apply=sum
}
)",
                R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

fused_computation {
  param_1 = f32[4,8]{1,0} parameter(0)
  zero = f32[] constant(0)
  multiply = f32[4,8]{1,0} multiply(param_1, param_1)
  ROOT reduce = f32[8]{0} reduce(multiply, zero), dimensions={0}, to_apply=sum
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  ROOT fusion = f32[8]{0} fusion(p0), kind=kLoop, calls=fused_computation
}
)");
}

// A reduction that keeps the minor-most dimension (a column reduction) takes its producers in
// but is not taken into its consumer: there each output element would walk the operand with a
// stride. A row reduction (the minor-most dimension folded) is taken in.
TEST(InstructionFusionTest, CpuKeepsAColumnReductionOutOfItsConsumer) {
  InstructionFusion pass("cpu");
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[6,4,8]{2,1,0} parameter(0)
  square = f32[6,4,8]{2,1,0} multiply(p0, p0)
  twice = f32[6,4,8]{2,1,0} add(p0, p0)
  zero = f32[] constant(0)
  columns = f32[8]{0} reduce(square, zero), dimensions={0,1}, to_apply=sum
  rows = f32[6]{0} reduce(twice, zero), dimensions={1,2}, to_apply=sum
  c1 = bf16[8]{0} convert(columns)
  c2 = bf16[6]{0} convert(rows)
  ROOT t = (bf16[8]{0}, bf16[6]{0}) tuple(c1, c2)
}
)", &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  const Instruction* c1 = m->entry()->root()->operand(0);
  const Instruction* c2 = m->entry()->root()->operand(1);
  // The column reduction is the root of its own fusion (with its multiply), and the convert
  // reads it.
  EXPECT_EQ(c1->opcode(), Opcode::kConvert) << PrintInstruction(*c1);
  const Instruction* columns = c1->operand(0);
  ASSERT_EQ(columns->opcode(), Opcode::kFusion) << PrintInstruction(*columns);
  EXPECT_EQ(columns->called_computations()[0]->root()->opcode(), Opcode::kReduce);
  EXPECT_EQ(columns->called_computations()[0]->root()->dimensions(),
            (std::vector<int64_t>{0, 1}));
  // The row reduction went into its consumer's fusion.
  ASSERT_EQ(c2->opcode(), Opcode::kFusion) << PrintInstruction(*c2);
  bool row_reduce_inside = false;
  for (const Instruction* h : c2->called_computations()[0]->instructions()) {
    row_reduce_inside |= h->opcode() == Opcode::kReduce;
  }
  EXPECT_TRUE(row_reduce_inside) << PrintComputation(*c2->called_computations()[0]);
}

TEST(InstructionFusionTest, CpuDuplicatesCheapSharedProducer) {
  InstructionFusion pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  s = f32[] parameter(1)
  broadcast = f32[8]{0} broadcast(s), dimensions={}
  add = f32[8]{0} add(p0, broadcast)
  multiply = f32[8]{0} multiply(p0, broadcast)
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(add, multiply)
}
)",
                R"(
HloModule m

fused_computation {
  param_0 = f32[8]{0} parameter(0)
  param_1 = f32[] parameter(1)
  broadcast.1 = f32[8]{0} broadcast(param_1), dimensions={}
  ROOT multiply = f32[8]{0} multiply(param_0, broadcast.1)
}

fused_computation.1 {
  param_0.1 = f32[8]{0} parameter(0)
  param_1.1 = f32[] parameter(1)
  broadcast = f32[8]{0} broadcast(param_1.1), dimensions={}
  ROOT add = f32[8]{0} add(param_0.1, broadcast)
}

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  s = f32[] parameter(1)
  fusion.1 = f32[8]{0} fusion(p0, s), kind=kLoop, calls=fused_computation.1
  fusion = f32[8]{0} fusion(p0, s), kind=kLoop, calls=fused_computation
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(fusion.1, fusion)
}
)");
}

// A scalar constant goes into every fusion that reads it, even when one of its users is an
// instruction outside any fusion at the time (here the broadcast, copied into the first fusion
// before the second takes it): a fusion that read it as a parameter could not fold it (a
// power's constant exponent, say).
TEST(InstructionFusionTest, CpuCopiesScalarConstantsIntoEveryFusionThatReadsThem) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  c = f32[] constant(3)
  b = f32[8]{0} broadcast(c), dimensions={}
  add = f32[8]{0} add(p0, b)
  power = f32[8]{0} power(p0, b)
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(add, power)
}
)");
  InstructionFusion pass("cpu");
  PassContext context = MakeTestContext();
  absl::StatusOr<bool> changed = pass.Run(m.get(), context);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  int fusions = 0;
  for (const Instruction* h : m->entry()->instructions()) {
    if (h->opcode() != Opcode::kFusion) continue;
    ++fusions;
    for (const Instruction* o : h->operands()) {
      EXPECT_NE(o->opcode(), Opcode::kConstant) << h->name() << " reads a constant operand";
    }
    int constants = 0;
    for (const Instruction* f : h->called_computations()[0]->instructions()) {
      constants += f->opcode() == Opcode::kConstant;
    }
    EXPECT_EQ(constants, 1) << h->name();
  }
  EXPECT_EQ(fusions, 2);
  EXPECT_EQ(CountErrors(VerifyModule(*m)), 0);
}

TEST(InstructionFusionTest, CpuCopiesACheapScalingOfADotIntoEveryUser) {
  // Attention's scaled scores: the scaling reads a dot, which no loop fusion takes in, so a
  // copy of it in each user adds one multiply per element and saves a kernel and a round trip.
  constexpr char kHlo[] = R"(
HloModule m

max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] maximum(x, y)
}

ENTRY e {
  a = f32[8,8]{1,0} parameter(0)
  b = f32[8,8]{1,0} parameter(1)
  d = f32[8,8]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = f32[] constant(0.125)
  bc = f32[8,8]{1,0} broadcast(c), dimensions={}
  s = f32[8,8]{1,0} multiply(d, bc)
  init = f32[] constant(-inf)
  m = f32[8]{0} reduce(s, init), dimensions={1}, to_apply=max
  mb = f32[8,8]{1,0} broadcast(m), dimensions={0}
  ROOT sub = f32[8,8]{1,0} subtract(s, mb)
}
)";
  InstructionFusion pass("cpu");
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, kHlo, &changed);
  ASSERT_TRUE(m);
  EXPECT_TRUE(changed);
  // The dot, the reduction's fusion and the subtraction's fusion; no kernel for the scaling.
  EXPECT_EQ(CountKernels(*m), 3) << Normalize(*m);
  int fusions_with_multiply = 0;
  for (const Instruction* i : m->entry()->instructions()) {
    EXPECT_NE(i->opcode(), Opcode::kMultiply) << Normalize(*m);
    if (i->opcode() != Opcode::kFusion) continue;
    for (const Instruction* f : i->called_computations()[0]->instructions()) {
      if (f->opcode() == Opcode::kMultiply) {
        ++fusions_with_multiply;
        break;
      }
    }
  }
  EXPECT_EQ(fusions_with_multiply, 2) << Normalize(*m);
  std::unique_ptr<Module> before = ParseOrDie(kHlo);
  ASSERT_TRUE(before);
  EXPECT_TRUE(ExpectSameResults(*before, *m));
}

TEST(InstructionFusionTest, DoesNotDuplicateExpensiveProducer) {
  InstructionFusion cpu("cpu");
  InstructionFusion gpu("gpu");
  constexpr char kHlo[] = R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  exponential = f32[8]{0} exponential(p0)
  add = f32[8]{0} add(exponential, p0)
  multiply = f32[8]{0} multiply(exponential, p0)
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(add, multiply)
}
)";
  ExpectNoChange(cpu, kHlo);
  ExpectNoChange(gpu, kHlo);
}

TEST(InstructionFusionTest, CpuKeepsAReductionOutOfAFusionThatBroadcastsItsResultLater) {
  // softmax-like: the row sums go through a convert and a reshape before a broadcast brings them
  // back to the input's size. Fusing the reduce into that consumer would recompute each row's
  // sum once per element of the row.
  InstructionFusion cpu("cpu");
  constexpr char kHlo[] = R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[64,512]{1,0} parameter(0)
  zero = f32[] constant(0)
  e = f32[64,512]{1,0} exponential(p0)
  r = f32[64]{0} reduce(e, zero), dimensions={1}, to_apply=sum
  c = bf16[64]{0} convert(r)
  c2 = f32[64]{0} convert(c)
  rs = f32[64,1]{1,0} reshape(c2)
  rs2 = f32[64]{0} reshape(rs)
  b = f32[64,512]{1,0} broadcast(rs2), dimensions={0}
  ROOT d = f32[64,512]{1,0} divide(e, b)
}
)";
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(cpu, kHlo, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  for (const auto& comp : m->computations()) {
    bool has_reduce = false, has_widening_broadcast = false;
    for (const Instruction* i : comp->instructions()) {
      has_reduce |= i->opcode() == Opcode::kReduce;
      has_widening_broadcast |= i->opcode() == Opcode::kBroadcast &&
                                i->shape().ElementCount() > i->operand(0)->shape().ElementCount();
    }
    EXPECT_FALSE(has_reduce && has_widening_broadcast)
        << comp->name() << " recomputes the reduction per broadcast element:\n"
        << Normalize(*m);
  }
}

TEST(InstructionFusionTest, NeverFusesSideEffectsCustomCallsOrLargeConstants) {
  InstructionFusion cpu("cpu");
  InstructionFusion gpu("gpu");
  constexpr char kHlo[] = R"(
HloModule m

ENTRY e {
  p0 = f32[4]{0} parameter(0)
  lo = f32[] constant(0)
  hi = f32[] constant(1)
  rng = f32[4]{0} rng(lo, hi), distribution=rng_uniform
  cc = f32[4]{0} custom-call(p0), custom_call_target="foo"
  big = f32[4]{0} constant({1, 2, 3, 4})
  add = f32[4]{0} add(rng, cc)
  add.1 = f32[4]{0} add(big, p0)
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(add, add.1)
}
)";
  bool changed = true;
  std::unique_ptr<Module> m = testing::RunPass(cpu, kHlo, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(changed) << Normalize(*m);
  m = testing::RunPass(gpu, kHlo, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(changed) << Normalize(*m);
}

TEST(InstructionFusionTest, CpuOutputFusesMatrixVectorDotWithAdd) {
  InstructionFusion pass("cpu");
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  p0 = f32[1,4]{1,0} parameter(0)
  p1 = f32[4,8]{1,0} parameter(1)
  bias = f32[1,8]{1,0} parameter(2)
  dot = f32[1,8]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT add = f32[1,8]{1,0} add(bias, dot)
}
)",
                R"(
HloModule m

fused_computation {
  param_0 = f32[1,8]{1,0} parameter(0)
  param_1 = f32[1,4]{1,0} parameter(1)
  param_2 = f32[4,8]{1,0} parameter(2)
  dot = f32[1,8]{1,0} dot(param_1, param_2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT add = f32[1,8]{1,0} add(param_0, dot)
}

ENTRY e {
  p0 = f32[1,4]{1,0} parameter(0)
  p1 = f32[4,8]{1,0} parameter(1)
  bias = f32[1,8]{1,0} parameter(2)
  ROOT fusion = f32[1,8]{1,0} fusion(bias, p0, p1), kind=kOutput, calls=fused_computation
}
)");
}

TEST(InstructionFusionTest, CpuLeavesMatrixMatrixDotAlone) {
  InstructionFusion pass("cpu");
  ExpectNoChange(pass, R"(
HloModule m

ENTRY e {
  p0 = f32[4,4]{1,0} parameter(0)
  p1 = f32[4,4]{1,0} parameter(1)
  dot = f32[4,4]{1,0} dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT add = f32[4,4]{1,0} add(dot, p1)
}
)");
}

TEST(InstructionFusionTest, GpuFusesProducerIntoAllUsers) {
  InstructionFusion pass("gpu");
  ExpectRewrite(pass, R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  add = f32[8]{0} add(p0, p1)
  negate = f32[8]{0} negate(add)
  abs = f32[8]{0} abs(add)
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(negate, abs)
}
)",
                R"(
HloModule m

fused_computation {
  param_0 = f32[8]{0} parameter(0)
  param_1 = f32[8]{0} parameter(1)
  add.1 = f32[8]{0} add(param_0, param_1)
  ROOT negate = f32[8]{0} negate(add.1)
}

fused_computation.1 {
  param_0.1 = f32[8]{0} parameter(0)
  param_1.1 = f32[8]{0} parameter(1)
  add = f32[8]{0} add(param_0.1, param_1.1)
  ROOT abs = f32[8]{0} abs(add)
}

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  fusion = f32[8]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation
  fusion.1 = f32[8]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[8]{0}, f32[8]{0}) tuple(fusion, fusion.1)
}
)");
}

// The gpu pass prices each fusion with the device model: recomputing a producer's work for
// every element of a large broadcast pays only while the arithmetic stays under the memory
// traffic it saves.
std::string BroadcastOfExponentialChain(int exponentials) {
  std::string body = "  p = f32[64]{0} parameter(0)\n";
  std::string last = "p";
  for (int i = 0; i < exponentials; ++i) {
    std::string name = StrCat("e", i);
    StrAppend(&body, "  ", name, " = f32[64]{0} exponential(", last, ")\n");
    last = name;
  }
  body = StrCat(body, "  ROOT r = f32[64]{0} negate(", last, ")\n");
  return StrCat(R"(
HloModule m

chain {
)", body, R"(}

ENTRY e {
  p0 = f32[64]{0} parameter(0)
  f = f32[64]{0} fusion(p0), kind=kLoop, calls=chain
  ROOT b = f32[64,65536]{1,0} broadcast(f), dimensions={0}
}
)");
}

TEST(InstructionFusionTest, GpuCostModelKeepsHeavyProducerOutOfALargeBroadcast) {
  InstructionFusion pass("gpu");
  // Twelve exponentials per element, repeated for 65536 copies each: ~12 us of special-function
  // work against the ~5 us the broadcast's 16 MiB write takes. Left apart.
  ExpectNoChange(pass, BroadcastOfExponentialChain(12));
}

TEST(InstructionFusionTest, GpuCostModelFusesCheapProducerIntoALargeBroadcast) {
  InstructionFusion pass("gpu");
  // One exponential per element stays under the memory time: fusing saves a launch.
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, BroadcastOfExponentialChain(1), &changed);
  ASSERT_TRUE(m);
  EXPECT_TRUE(changed);
  const Instruction* root = m->entry()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  const Computation* fused = root->called_computations()[0];
  bool has_broadcast = false, has_exponential = false;
  for (const Instruction* i : fused->instructions()) {
    has_broadcast |= i->opcode() == Opcode::kBroadcast;
    has_exponential |= i->opcode() == Opcode::kExp;
  }
  EXPECT_TRUE(has_broadcast);
  EXPECT_TRUE(has_exponential);
}

TEST(InstructionFusionTest, GpuRepricesTheFusionsItMakes) {
  // Each fusion re-prices the new fusion and its operands: the chain ends as one kernel only
  // if the producers whose user became a fusion are queued again.
  InstructionFusion pass("gpu");
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, R"(
HloModule m

ENTRY e {
  p0 = f32[1024,1024]{1,0} parameter(0)
  p1 = f32[1024,1024]{1,0} parameter(1)
  b = f32[1024,1024]{1,0} add(p0, p1)
  a = f32[1024,1024]{1,0} multiply(b, p1)
  ROOT big = f32[1024,1024]{1,0} subtract(a, p0)
}
)", &changed);
  ASSERT_TRUE(m);
  EXPECT_TRUE(changed);
  EXPECT_EQ(CountKernels(*m), 1);
  EXPECT_EQ(m->entry()->root()->opcode(), Opcode::kFusion);
}

TEST(InstructionFusionTest, FusesInsideWhileBodyButNotReducers) {
  InstructionFusion pass("cpu");
  bool changed = false;
  std::unique_ptr<Module> m = testing::RunPass(pass, R"(
HloModule m

cond {
  c = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(c), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  b = (s32[], f32[8]{0}) parameter(0)
  i = s32[] get-tuple-element(b), index=0
  one = s32[] constant(1)
  next = s32[] add(i, one)
  v = f32[8]{0} get-tuple-element(b), index=1
  neg = f32[8]{0} negate(v)
  abs = f32[8]{0} abs(neg)
  ROOT r = (s32[], f32[8]{0}) tuple(next, abs)
}

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[8]{0}) tuple(zero, p0)
  w = (s32[], f32[8]{0}) while(init), condition=cond, body=body
  ROOT out = f32[8]{0} get-tuple-element(w), index=1
}
)",
                                                 &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  const Computation* body = m->FindComputation("body");
  ASSERT_NE(body, nullptr);
  int fusions = 0;
  for (const Instruction* i : body->instructions()) fusions += i->opcode() == Opcode::kFusion;
  EXPECT_EQ(fusions, 1) << Normalize(*m);
  // The condition's compare has only a parameter-derived operand and a constant: untouched.
  EXPECT_EQ(m->FindComputation("cond")->instruction_count(), 4);
}

// ----- MultiOutputFusion -----

TEST(MultiOutputFusionTest, FusesSiblingsReadingTheSameOperand) {
  MultiOutputFusion pass;
  ExpectRewrite(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  param_1.1 = f32[16]{0} parameter(1)
  ROOT add = f32[16]{0} add(param_0.1, param_1.1)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion, fusion.1)
}
)",
                R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  param_1.1 = f32[16]{0} parameter(1)
  negate = f32[16]{0} negate(param_0)
  add = f32[16]{0} add(param_0, param_1.1)
  ROOT tuple = (f32[16]{0}, f32[16]{0}) tuple(negate, add)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion = (f32[16]{0}, f32[16]{0}) fusion(p0, p1), kind=kLoop, calls=fused_computation
  get-tuple-element = f32[16]{0} get-tuple-element(fusion), index=0
  get-tuple-element.1 = f32[16]{0} get-tuple-element(fusion), index=1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(get-tuple-element, get-tuple-element.1)
}
)");
}

TEST(MultiOutputFusionTest, FusesSiblingReductions) {
  MultiOutputFusion pass;
  ExpectRewrite(pass, R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

fused_computation {
  param_0 = f32[4,8]{1,0} parameter(0)
  multiply = f32[4,8]{1,0} multiply(param_0, param_0)
  zero = f32[] constant(0)
  ROOT reduce = f32[4]{0} reduce(multiply, zero), dimensions={1}, to_apply=sum
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  zero.1 = f32[] constant(0)
  reduce.1 = f32[4]{0} reduce(p0, zero.1), dimensions={1}, to_apply=sum
  fusion = f32[4]{0} fusion(p0), kind=kInput, calls=fused_computation
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(reduce.1, fusion)
}
)",
                R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

fused_computation.1 {
  param_0.1 = f32[4,8]{1,0} parameter(0)
  param_1 = f32[] parameter(1)
  reduce.1 = f32[4]{0} reduce(param_0.1, param_1), dimensions={1}, to_apply=sum
  multiply = f32[4,8]{1,0} multiply(param_0.1, param_0.1)
  zero = f32[] constant(0)
  reduce = f32[4]{0} reduce(multiply, zero), dimensions={1}, to_apply=sum
  ROOT tuple = (f32[4]{0}, f32[4]{0}) tuple(reduce.1, reduce)
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  zero.1 = f32[] constant(0)
  fusion.1 = (f32[4]{0}, f32[4]{0}) fusion(p0, zero.1), kind=kInput, calls=fused_computation.1
  get-tuple-element = f32[4]{0} get-tuple-element(fusion.1), index=0
  get-tuple-element.1 = f32[4]{0} get-tuple-element(fusion.1), index=1
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(get-tuple-element, get-tuple-element.1)
}
)");
}

TEST(MultiOutputFusionTest, FusesProducerWithOtherUsersIntoConsumer) {
  MultiOutputFusion pass;
  ExpectRewrite(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT exponential = f32[16]{0} exponential(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  param_1.1 = f32[16]{0} parameter(1)
  ROOT add = f32[16]{0} add(param_0.1, param_1.1)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(fusion, p1), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion, fusion.1)
}
)",
                R"(
HloModule m

fused_computation.1 {
  param_1.1 = f32[16]{0} parameter(0)
  param_0 = f32[16]{0} parameter(1)
  exponential = f32[16]{0} exponential(param_0)
  add = f32[16]{0} add(exponential, param_1.1)
  ROOT tuple = (f32[16]{0}, f32[16]{0}) tuple(add, exponential)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion.1 = (f32[16]{0}, f32[16]{0}) fusion(p1, p0), kind=kLoop, calls=fused_computation.1
  get-tuple-element.1 = f32[16]{0} get-tuple-element(fusion.1), index=1
  get-tuple-element = f32[16]{0} get-tuple-element(fusion.1), index=0
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(get-tuple-element.1, get-tuple-element)
}
)");
}

TEST(MultiOutputFusionTest, LeavesDifferentShapesAndDependentSiblingsAlone) {
  MultiOutputFusion pass;
  // Different iteration spaces.
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  ROOT slice = f32[8]{0} slice(param_0.1), slice={[0:8]}
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[8]{0} fusion(p0), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[8]{0}) tuple(fusion, fusion.1)
}
)");
  // fusion.1 reads fusion through a custom call: merging them would form a cycle.
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  param_1.1 = f32[16]{0} parameter(1)
  ROOT add = f32[16]{0} add(param_0.1, param_1.1)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  cc = f32[16]{0} custom-call(fusion), custom_call_target="foo"
  fusion.1 = f32[16]{0} fusion(p0, cc), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion, fusion.1)
}
)");
}

// ----- FusionMerger -----

TEST(FusionMergerTest, MergesProducerIntoAllFusionUsers) {
  FusionMerger pass;
  ExpectRewrite(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  param_1 = f32[16]{0} parameter(1)
  ROOT add = f32[16]{0} add(param_0, param_1)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0.1)
}

fused_computation.2 {
  param_0.2 = f32[16]{0} parameter(0)
  param_1.2 = f32[16]{0} parameter(1)
  ROOT multiply = f32[16]{0} multiply(param_0.2, param_1.2)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(fusion), kind=kLoop, calls=fused_computation.1
  fusion.2 = f32[16]{0} fusion(fusion, p0), kind=kLoop, calls=fused_computation.2
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion.1, fusion.2)
}
)",
                R"(
HloModule m

fused_computation.1 {
  param_0.3 = f32[16]{0} parameter(0)
  param_1.3 = f32[16]{0} parameter(1)
  add.1 = f32[16]{0} add(param_0.3, param_1.3)
  ROOT negate = f32[16]{0} negate(add.1)
}

fused_computation.2 {
  param_1.2 = f32[16]{0} parameter(0)
  param_1 = f32[16]{0} parameter(1)
  add = f32[16]{0} add(param_1.2, param_1)
  ROOT multiply = f32[16]{0} multiply(add, param_1.2)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion.1 = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation.1
  fusion.2 = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation.2
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion.1, fusion.2)
}
)");
}

TEST(FusionMergerTest, LeavesProducerWithNonFusionUserAlone) {
  FusionMerger pass;
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  param_1 = f32[16]{0} parameter(1)
  ROOT add = f32[16]{0} add(param_0, param_1)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0.1)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[16]{0} parameter(1)
  fusion = f32[16]{0} fusion(p0, p1), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(fusion), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion, fusion.1)
}
)");
}

TEST(FusionMergerTest, DoesNotRecomputeExpensiveProducerOrAddTraffic) {
  FusionMerger pass;
  // exponential is expensive and has two users.
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT exponential = f32[16]{0} exponential(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0.1)
}

fused_computation.2 {
  param_0.2 = f32[16]{0} parameter(0)
  ROOT abs = f32[16]{0} abs(param_0.2)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(fusion), kind=kLoop, calls=fused_computation.1
  fusion.2 = f32[16]{0} fusion(fusion), kind=kLoop, calls=fused_computation.2
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion.1, fusion.2)
}
)");
  // A broadcast producer whose users would each read the large input: more traffic.
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[1024]{0} parameter(0)
  slice = f32[1]{0} slice(param_0), slice={[0:1]}
  reshape = f32[] reshape(slice)
  ROOT broadcast = f32[4]{0} broadcast(reshape), dimensions={}
}

fused_computation.1 {
  param_0.1 = f32[4]{0} parameter(0)
  ROOT negate = f32[4]{0} negate(param_0.1)
}

fused_computation.2 {
  param_0.2 = f32[4]{0} parameter(0)
  ROOT abs = f32[4]{0} abs(param_0.2)
}

ENTRY e {
  p0 = f32[1024]{0} parameter(0)
  fusion = f32[4]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[4]{0} fusion(fusion), kind=kLoop, calls=fused_computation.1
  fusion.2 = f32[4]{0} fusion(fusion), kind=kLoop, calls=fused_computation.2
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(fusion.1, fusion.2)
}
)");
}

// ----- HorizontalLoopFusion -----

TEST(HorizontalLoopFusionTest, FusesIndependentLoopFusions) {
  HorizontalLoopFusion pass;
  ExpectRewrite(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0)
}

fused_computation.1 {
  param_0.1 = f32[8]{0} parameter(0)
  ROOT abs = f32[8]{0} abs(param_0.1)
}

fused_computation.2 {
  param_0.2 = s32[8]{0} parameter(0)
  ROOT negate.2 = s32[8]{0} negate(param_0.2)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  p2 = s32[8]{0} parameter(2)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[8]{0} fusion(p1), kind=kLoop, calls=fused_computation.1
  fusion.2 = s32[8]{0} fusion(p2), kind=kLoop, calls=fused_computation.2
  ROOT t = (f32[16]{0}, f32[8]{0}, s32[8]{0}) tuple(fusion, fusion.1, fusion.2)
}
)",
                R"(
HloModule m

fused_computation.2 {
  param_0.2 = s32[8]{0} parameter(0)
  ROOT negate.2 = s32[8]{0} negate(param_0.2)
}

horizontally_fused_computation {
  param_0 = f32[16]{0} parameter(0)
  param_0.1 = f32[8]{0} parameter(1)
  negate = f32[16]{0} negate(param_0)
  abs = f32[8]{0} abs(param_0.1)
  ROOT tuple = (f32[16]{0}, f32[8]{0}) tuple(negate, abs)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  p1 = f32[8]{0} parameter(1)
  p2 = s32[8]{0} parameter(2)
  fusion.2 = s32[8]{0} fusion(p2), kind=kLoop, calls=fused_computation.2
  fusion.3 = (f32[16]{0}, f32[8]{0}) fusion(p0, p1), kind=kLoop,
      calls=horizontally_fused_computation
  get-tuple-element = f32[16]{0} get-tuple-element(fusion.3), index=0
  get-tuple-element.1 = f32[8]{0} get-tuple-element(fusion.3), index=1
  ROOT t = (f32[16]{0}, f32[8]{0}, s32[8]{0}) tuple(get-tuple-element, get-tuple-element.1,
      fusion.2)
}
)");
}

TEST(HorizontalLoopFusionTest, LeavesSharedOrLoneFusionsAlone) {
  HorizontalLoopFusion pass;
  ExpectNoChange(pass, R"(
HloModule m

fused_computation {
  param_0 = f32[16]{0} parameter(0)
  ROOT negate = f32[16]{0} negate(param_0)
}

fused_computation.1 {
  param_0.1 = f32[16]{0} parameter(0)
  ROOT abs = f32[16]{0} abs(param_0.1)
}

ENTRY e {
  p0 = f32[16]{0} parameter(0)
  fusion = f32[16]{0} fusion(p0), kind=kLoop, calls=fused_computation
  fusion.1 = f32[16]{0} fusion(fusion), kind=kLoop, calls=fused_computation.1
  ROOT t = (f32[16]{0}, f32[16]{0}) tuple(fusion, fusion.1)
}
)");
}

// ----- CountKernels -----

TEST(CountKernelsTest, CountsFusionsAndUnfusedWork) {
  std::unique_ptr<Module> m = ParseOrDie(kElementwiseChain);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountKernels(*m), 3);  // add, negate, multiply
  InstructionFusion pass("cpu");
  PassContext ctx = MakeTestContext();
  ASSERT_TRUE(pass.Run(m.get(), ctx).ok());
  EXPECT_EQ(CountKernels(*m), 1);  // one fusion; parameters are not kernels

  std::unique_ptr<Module> t = ParseOrDie(R"(
HloModule m

ENTRY e {
  p0 = f32[8]{0} parameter(0)
  c = f32[8]{0} constant({1, 2, 3, 4, 5, 6, 7, 8})
  b = f32[2,4]{1,0} bitcast(p0)
  add = f32[8]{0} add(p0, c)
  ROOT t = (f32[2,4]{1,0}, f32[8]{0}) tuple(b, add)
}
)");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(CountKernels(*t), 1);
}

// ----- Corpus -----

// Runs `pass` over every corpus module that parses and verifies; the result must verify, and
// where the interpreter runs the original quickly, compute the same values. `pre` (if any) runs
// first, so that passes working on fusions find some.
void RunOverCorpus(HloPass& pass, HloPass* pre = nullptr) {
  if (testing::CorpusModules().empty()) {
    GTEST_SKIP() << "corpus not found at " << HLOWB_CORPUS_DIR;
  }
  int modules = 0;
  int changed_modules = 0;
  int checked = 0;
  for (const testing::CorpusModule& cm : testing::CorpusModules()) {
    std::unique_ptr<Module> parsed = testing::ParseValidModule(cm.text);
    if (!parsed) continue;
    ++modules;
    std::unique_ptr<Module> before = CloneModule(*parsed);
    std::unique_ptr<Module> m = std::move(parsed);
    PassContext ctx = MakeTestContext();
    const std::string& where = cm.label;
    if (pre) {
      absl::StatusOr<bool> p = pre->Run(m.get(), ctx);
      ASSERT_TRUE(p.ok()) << pre->name() << " on " << where << ": " << p.status().message();
    }
    absl::StatusOr<bool> r = pass.Run(m.get(), ctx);
    ASSERT_TRUE(r.ok()) << pass.name() << " on " << where << ": " << r.status().message();
    if (!*r) continue;
    ++changed_modules;
    for (const VerifierDiagnostic& d : VerifyModule(*m)) {
      EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
          << pass.name() << " on " << where << ": " << d.ToString();
    }
    // Semantics: only modules the interpreter finishes quickly, and only if it can run the
    // original at all (no custom calls, collectives, ...).
    int64_t elements = 0;
    for (const Instruction* p : before->entry()->parameters()) {
      if (!p) continue;
      std::vector<const Shape*> stack{&p->shape()};
      while (!stack.empty()) {
        const Shape* sh = stack.back();
        stack.pop_back();
        if (sh->IsArray()) elements += sh->ElementCount() < 0 ? (1 << 20) : sh->ElementCount();
        for (const Shape& e : sh->tuple_shapes()) stack.push_back(&e);
      }
    }
    if (elements > (1 << 16) || CountKernels(*before) > 200) continue;
    FakeDataOptions fo;
    fo.seed = 7;
    absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(*before, fo);
    if (!args.ok()) continue;
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> ref = EvaluateModule(*before, *args);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!ref.ok() || secs > 0.2) continue;
    SCOPED_TRACE(where);
    EXPECT_TRUE(ExpectSameResults(*before, *m));
    ++checked;
  }
  std::cout << pass.name() << ": " << modules << " corpus modules, " << changed_modules
            << " changed, " << checked << " checked on the interpreter\n";
  EXPECT_GT(modules, 0);
}

TEST(FusionCorpusTest, CpuInstructionFusion) {
  InstructionFusion pass("cpu");
  RunOverCorpus(pass);
}

TEST(FusionCorpusTest, GpuPriorityFusion) {
  InstructionFusion pass("gpu");
  RunOverCorpus(pass);
}

TEST(FusionCorpusTest, MultiOutputFusion) {
  MultiOutputFusion pass;
  InstructionFusion pre("gpu");
  RunOverCorpus(pass, &pre);
}

TEST(FusionCorpusTest, FusionMerger) {
  FusionMerger pass;
  InstructionFusion pre("gpu");
  RunOverCorpus(pass, &pre);
}

TEST(FusionCorpusTest, HorizontalLoopFusion) {
  HorizontalLoopFusion pass;
  InstructionFusion pre("gpu");
  RunOverCorpus(pass, &pre);
}

}  // namespace
}  // namespace hlowb
