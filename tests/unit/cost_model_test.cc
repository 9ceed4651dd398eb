#include "core/analysis/cost_model.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"

namespace hlowb {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

// Finds an instruction by name anywhere in the module.
const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

constexpr std::string_view kModule = R"(
HloModule costs

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  p0 = f32[8,16]{1,0} parameter(0)
  p1 = f32[8,16]{1,0} parameter(1)
  m = f32[8,16]{1,0} multiply(p0, p1)
  e = f32[8,16]{1,0} exponential(m)
  ROOT r = f32[8,16]{1,0} add(e, p0)
}

cond {
  cp = (s32[], f32[4]{0}) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  limit = s32[] constant(10)
  ROOT lt = pred[] compare(ci, limit), direction=LT
}

body {
  bp = (s32[], f32[4]{0}) parameter(0)
  bi = s32[] get-tuple-element(bp), index=0
  bv = f32[4]{0} get-tuple-element(bp), index=1
  one = s32[] constant(1)
  next = s32[] add(bi, one)
  doubled = f32[4]{0} add(bv, bv)
  ROOT bt = (s32[], f32[4]{0}) tuple(next, doubled)
}

small_branch {
  sp = f32[4]{0} parameter(0)
  ROOT sn = f32[4]{0} negate(sp)
}

big_branch {
  gp = f32[4]{0} parameter(0)
  g1 = f32[4]{0} multiply(gp, gp)
  g2 = f32[4]{0} add(g1, gp)
  ROOT g3 = f32[4]{0} tanh(g2)
}

ENTRY main {
  a = f32[8,16]{1,0} parameter(0)
  b = f32[16,32]{1,0} parameter(1)
  ba = f32[4,8,16]{2,1,0} parameter(2)
  bb = f32[4,16,32]{2,1,0} parameter(3)
  img = f32[1,10,10,3]{3,2,1,0} parameter(4)
  ker = f32[3,3,3,8]{3,2,1,0} parameter(5)
  img4 = f32[1,10,10,4]{3,2,1,0} parameter(6)
  ker2 = f32[3,3,2,8]{3,2,1,0} parameter(7)
  upd = f32[2,16]{1,0} parameter(8)
  flag = pred[] parameter(9)
  vec = f32[4]{0} parameter(10)
  sum = f32[8,16]{1,0} add(a, a)
  exp = f32[8,16]{1,0} exponential(a)
  cvt = bf16[8,16]{1,0} convert(a)
  cpy = f32[8,16]{1,0} copy(a)
  dot = f32[8,32]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bdot = f32[4,8,32]{2,1,0} dot(ba, bb), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  conv = f32[1,8,8,8]{3,2,1,0} convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f
  gconv = f32[1,8,8,8]{3,2,1,0} convolution(img4, ker2), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
  zero = f32[] constant(0)
  red = f32[8]{0} reduce(a, zero), dimensions={1}, to_apply=add
  rw = f32[8,8]{1,0} reduce-window(a, zero), window={size=1x2 stride=1x2}, to_apply=add
  fus = f32[8,16]{1,0} fusion(a, sum), kind=kLoop, calls=fused
  sl = f32[4,16]{1,0} slice(a), slice={[0:4], [0:16]}
  i0 = s32[] constant(0)
  dus = f32[8,16]{1,0} dynamic-update-slice(a, upd, i0, i0)
  c0 = s32[] constant(0)
  init = (s32[], f32[4]{0}) tuple(c0, vec)
  loop = (s32[], f32[4]{0}) while(init), condition=cond, body=body
  gte = f32[4]{0} get-tuple-element(loop), index=1
  cnd = f32[4]{0} conditional(flag, vec, vec), true_computation=small_branch, false_computation=big_branch
  ROOT out = (f32[8,32]{1,0}, f32[4,8,32]{2,1,0}, f32[1,8,8,8]{3,2,1,0}, f32[8]{0}, f32[8,16]{1,0}, f32[4,16]{1,0}, f32[8,16]{1,0}, f32[4]{0}, f32[4]{0}, f32[1,8,8,8]{3,2,1,0}, f32[8,8]{1,0}, f32[8,16]{1,0}, bf16[8,16]{1,0}, f32[8,16]{1,0}) tuple(dot, bdot, conv, red, fus, sl, dus, gte, cnd, gconv, rw, exp, cvt, cpy)
}
)";

class CostModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    module_ = Parse(kModule);
    ASSERT_NE(module_, nullptr);
  }
  Cost CostOf(const std::string& name) {
    const Instruction* i = Find(*module_, name);
    return i ? model_.InstructionCost(*i) : Cost();
  }

  std::unique_ptr<Module> module_;
  CostModel model_;
};

TEST(ShapeByteSizeTest, ArraysTuplesAndTokens) {
  EXPECT_EQ(ShapeByteSize(Shape::Array(PrimitiveType::kF32, {8, 16})), 512);
  EXPECT_EQ(ShapeByteSize(Shape::Array(PrimitiveType::kBF16, {10})), 20);
  EXPECT_EQ(ShapeByteSize(Shape::Array(PrimitiveType::kF64, {})), 8);
  EXPECT_EQ(ShapeByteSize(Shape::Array(PrimitiveType::kPred, {3})), 3);
  // Sub-byte types count as unpacked (one byte per element).
  EXPECT_EQ(ShapeByteSize(Shape::Array(PrimitiveType::kS4, {5})), 5);
  EXPECT_EQ(ShapeByteSize(Shape::Tuple({Shape::Array(PrimitiveType::kF32, {2}),
                                        Shape::Array(PrimitiveType::kS8, {3}),
                                        Shape::Token()})),
            8 + 3);
  EXPECT_EQ(ShapeByteSize(Shape::Token()), 0);
}

TEST(ShapeByteSizeTest, SaturatesInsteadOfOverflowing) {
  Shape huge = Shape::Array(PrimitiveType::kF64, {int64_t{1} << 31, int64_t{1} << 31});
  EXPECT_EQ(ShapeByteSize(huge), std::numeric_limits<int64_t>::max());
}

TEST_F(CostModelTest, ElementwiseCountsOneFlopPerElement) {
  // add f32[8,16]: 128 flops; reads 2 × 512 bytes, writes 512.
  EXPECT_EQ(CostOf("sum"), (Cost{128, 0, 1024, 512}));
  // convert counts as elementwise arithmetic; the result is bf16 (2 bytes per element).
  EXPECT_EQ(CostOf("cvt"), (Cost{128, 0, 512, 256}));
}

TEST_F(CostModelTest, TranscendentalsAreCountedSeparately) {
  EXPECT_EQ(CostOf("exp"), (Cost{0, 128, 512, 512}));
  EXPECT_TRUE(IsTranscendental(Opcode::kTanh));
  EXPECT_TRUE(IsTranscendental(Opcode::kRsqrt));
  EXPECT_FALSE(IsTranscendental(Opcode::kAdd));
  EXPECT_FALSE(IsTranscendental(Opcode::kAbs));
}

TEST_F(CostModelTest, CopyMovesDataWithoutFlops) {
  EXPECT_EQ(CostOf("cpy"), (Cost{0, 0, 512, 512}));
}

TEST_F(CostModelTest, DotIsTwoMNK) {
  // [8,16] x [16,32]: 2 · 8 · 32 · 16 = 8192; reads 512 + 2048 bytes, writes 1024.
  EXPECT_EQ(CostOf("dot"), (Cost{8192, 0, 2560, 1024}));
  // Batched: 2 · (4 · 8 · 32) · 16 = 32768.
  EXPECT_EQ(CostOf("bdot").flops, 32768);
  EXPECT_EQ(CostOf("bdot").bytes_accessed(), 4 * 8 * 16 * 4 + 4 * 16 * 32 * 4 + 4 * 8 * 32 * 4);
}

TEST_F(CostModelTest, ConvolutionIsTwoOutputKernelSpatialFeatures) {
  // 2 · 512 outputs · 3·3 window · 3 input features = 27648.
  EXPECT_EQ(CostOf("conv").flops, 27648);
  // Two feature groups: each output sees 4 / 2 = 2 input features: 2 · 512 · 9 · 2 = 18432.
  EXPECT_EQ(CostOf("gconv").flops, 18432);
  // Bytes: input 300·4, kernel 216·4, output 512·4.
  EXPECT_EQ(CostOf("conv").operand_bytes, 1200 + 864);
  EXPECT_EQ(CostOf("conv").result_bytes, 2048);
}

TEST_F(CostModelTest, ReduceCountsInputElements) {
  // f32[8,16] reduced to f32[8]: 128 flops; reads 512 + 4 (init), writes 32.
  EXPECT_EQ(CostOf("red"), (Cost{128, 0, 516, 32}));
  // reduce-window 1x2 producing [8,8]: 64 outputs · 2 = 128.
  EXPECT_EQ(CostOf("rw").flops, 128);
}

TEST_F(CostModelTest, FusionSumsFusedFlopsButOnlyItsOwnBytes) {
  // multiply 128 + add 128 flops, exponential 128 transcendentals; bytes: two f32[8,16]
  // operands in, one out — the fused instructions' own traffic is not counted.
  EXPECT_EQ(CostOf("fus"), (Cost{256, 128, 1024, 512}));
}

TEST_F(CostModelTest, WhileCountsBodyAndConditionOnce) {
  // body: add s32 (1) + add f32[4] (4); condition: compare (1). Bytes: the while's operand and
  // result tuples (s32 + f32[4] = 20 bytes each).
  EXPECT_EQ(CostOf("loop"), (Cost{6, 0, 20, 20}));
}

TEST_F(CostModelTest, ConditionalTakesTheMostExpensiveBranch) {
  // small: negate (4). big: multiply (4) + add (4) + tanh (4 transcendentals).
  Cost c = CostOf("cnd");
  EXPECT_EQ(c.flops, 8);
  EXPECT_EQ(c.transcendentals, 4);
  EXPECT_EQ(c.operand_bytes, 1 + 16 + 16);
  EXPECT_EQ(c.result_bytes, 16);
}

TEST_F(CostModelTest, DataMovementAndSlicing) {
  EXPECT_EQ(CostOf("a"), Cost());       // parameter
  EXPECT_EQ(CostOf("gte"), Cost());     // get-tuple-element
  EXPECT_EQ(CostOf("init"), Cost());    // tuple
  EXPECT_EQ(CostOf("zero"), (Cost{0, 0, 0, 4}));  // a constant is written once
  // slice reads only the window it returns: 4·16·4 = 256 bytes each way.
  EXPECT_EQ(CostOf("sl"), (Cost{0, 0, 256, 256}));
  // dynamic-update-slice reads the update (2·16·4 = 128) and two s32 indices, writes 128.
  EXPECT_EQ(CostOf("dus"), (Cost{0, 0, 136, 128}));
}

TEST_F(CostModelTest, ComputationAndModuleTotals) {
  const Computation* fused = module_->FindComputation("fused");
  ASSERT_NE(fused, nullptr);
  Cost f = model_.ComputationCost(*fused);
  EXPECT_EQ(f.flops, 256);
  EXPECT_EQ(f.transcendentals, 128);
  // The entry: the sum of its instructions' flops.
  const int64_t expected_flops = 128 /*sum*/ + 128 /*cvt*/ + 8192 + 32768 + 27648 + 18432 +
                                 128 /*red*/ + 128 /*rw*/ + 256 /*fus*/ + 6 /*loop*/ + 8 /*cnd*/;
  Cost total = model_.ModuleCost(*module_);
  EXPECT_EQ(total.flops, expected_flops);
  EXPECT_EQ(total.transcendentals, 128 /*exp*/ + 128 /*fus*/ + 4 /*cnd*/);
  // A fresh model and the cached one agree.
  CostModel fresh;
  EXPECT_EQ(fresh.ModuleCost(*module_), total);
}

TEST(CostModelStandaloneTest, MapAndAllReduceApplyTheirComputation) {
  std::unique_ptr<Module> m = Parse(R"(
HloModule apply

mul_add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  p = f32[] multiply(x, y)
  ROOT s = f32[] add(p, x)
}

ENTRY main {
  a = f32[10]{0} parameter(0)
  b = f32[10]{0} parameter(1)
  mp = f32[10]{0} map(a, b), dimensions={0}, to_apply=mul_add
  ROOT ar = f32[10]{0} all-reduce(mp), replica_groups={}, to_apply=mul_add
}
)");
  ASSERT_NE(m, nullptr);
  CostModel model;
  EXPECT_EQ(model.InstructionCost(*Find(*m, "mp")).flops, 20);  // 10 applications × 2
  EXPECT_EQ(model.InstructionCost(*Find(*m, "ar")).flops, 20);
  EXPECT_EQ(EstimateInstructionCost(*Find(*m, "mp")).bytes_accessed(), 40 + 40 + 40);
}

#ifdef HLOWB_CORPUS_DIR
// Every corpus module: costs are defined (non-negative) for every instruction, the module total
// is at least any entry instruction's, and a dot or convolution somewhere has flops.
TEST(CostModelCorpusTest, EveryInstructionHasACost) {
  namespace fs = std::filesystem;
  const fs::path root(HLOWB_CORPUS_DIR);
  std::error_code ec;
  if (!fs::exists(root, ec)) GTEST_SKIP() << "corpus not found at " << HLOWB_CORPUS_DIR;
  int modules = 0;
  int64_t with_flops = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".hlo") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string text = ss.str();
    for (std::string_view part : SplitInputFile(text)) {
      absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(part);
      if (!m.ok()) continue;
      ++modules;
      CostModel model;
      for (const auto& c : (*m)->computations()) {
        for (const Instruction* instr : c->instructions()) {
          const Cost cost = model.InstructionCost(*instr);
          ASSERT_GE(cost.flops, 0) << entry.path() << " " << instr->name();
          ASSERT_GE(cost.transcendentals, 0) << entry.path() << " " << instr->name();
          ASSERT_GE(cost.operand_bytes, 0) << entry.path() << " " << instr->name();
          ASSERT_GE(cost.result_bytes, 0) << entry.path() << " " << instr->name();
          if ((instr->opcode() == Opcode::kDot || instr->opcode() == Opcode::kConvolution) &&
              cost.flops > 0) {
            ++with_flops;
          }
        }
      }
      const Cost total = model.ModuleCost(**m);
      if ((*m)->entry() != nullptr) {
        for (const Instruction* instr : (*m)->entry()->instructions()) {
          EXPECT_LE(model.InstructionCost(*instr).flops, total.flops) << entry.path();
        }
      }
    }
  }
  EXPECT_GT(modules, 10);
  EXPECT_GT(with_flops, 0);
}
#endif

}  // namespace
TEST(CostModel, CountMagnitudeGivesThreeSignificantDigitsAndASuffix) {
  EXPECT_EQ(CountMagnitude(0), "0");
  EXPECT_EQ(CountMagnitude(9999), "9999");
  EXPECT_EQ(CountMagnitude(12345), "12.3 K");
  EXPECT_EQ(CountMagnitude(1234567), "1.23 M");
  EXPECT_EQ(CountMagnitude(int64_t{182500000000}), "182 G");
  EXPECT_EQ(CountMagnitude(INT64_MAX), "9.22 E");
}

}  // namespace hlowb
