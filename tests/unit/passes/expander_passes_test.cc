// Golden tests of the expander and precision passes: batchnorm_expander, logistic-expander,
// rng-expander, rng-bit-generator-expander, comparison-expander,
// stochastic_convert_decomposer, operand_upcaster and float-normalization-bf16. Rewrites are
// checked as text and, where the interpreter can run the module, for the same results on fake
// data (bit for bit for the integer and pred results of the exact expansions).
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/passes/batchnorm_expander.h"
#include "core/passes/comparison_expander.h"
#include "core/passes/float_normalization.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/logistic_expander.h"
#include "core/passes/operand_upcaster.h"
#include "core/passes/rng_bit_generator_expander.h"
#include "core/passes/rng_expander.h"
#include "core/passes/stochastic_convert_decomposer.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
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
using testing::RunPass;

// The pass rewrites `input` into exactly `expected` (and, unless check_semantics is false,
// the result computes what the input does on fake data).
void Golden(HloPass& pass, std::string_view input, std::string_view expected,
            bool check_semantics = true, PassContext* context = nullptr) {
  ExpectRewrite(pass, input, expected, check_semantics, context);
}

// Runs `pass` on `hlo` and checks that the result computes what the input does.
void ExpectSameMeaning(HloPass& pass, std::string_view hlo, uint64_t seed = 7) {
  bool changed = false;
  std::unique_ptr<Module> after = RunPass(pass, hlo, &changed);
  ASSERT_NE(after, nullptr);
  EXPECT_TRUE(changed) << pass.name() << " did not fire on\n" << hlo;
  std::unique_ptr<Module> before = ParseOrDie(hlo);
  ASSERT_NE(before, nullptr);
  ExpectSameResults(*before, *after, seed);
}

bool HasOpcode(const Module& m, Opcode op) {
  for (const auto& c : m.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == op) return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// logistic-expander

TEST(LogisticExpanderTest, ExpandsToReciprocalOfOnePlusExp) {
  LogisticExpander pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT l = f32[4]{0} logistic(p)
})",
         R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  constant = f32[] constant(1)
  broadcast = f32[4]{0} broadcast(constant), dimensions={}
  negate = f32[4]{0} negate(p)
  exponential = f32[4]{0} exponential(negate)
  add = f32[4]{0} add(broadcast, exponential)
  ROOT divide = f32[4]{0} divide(broadcast, add)
})");
}

TEST(LogisticExpanderTest, FuelLimitsRewrites) {
  const char* kTwo = R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  a = f32[4]{0} logistic(p)
  ROOT b = f32[4]{0} logistic(a)
})";
  LogisticExpander pass;
  PassContext none = MakeTestContext();
  none.mutable_options().fuel["logistic-expander"] = 0;
  ExpectNoChange(pass, kTwo, &none);
  PassContext one = MakeTestContext();
  one.mutable_options().fuel["logistic-expander"] = 1;
  Golden(pass, kTwo, R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  constant = f32[] constant(1)
  broadcast = f32[4]{0} broadcast(constant), dimensions={}
  negate = f32[4]{0} negate(p)
  exponential = f32[4]{0} exponential(negate)
  add = f32[4]{0} add(broadcast, exponential)
  divide = f32[4]{0} divide(broadcast, add)
  ROOT b = f32[4]{0} logistic(divide)
})", true, &one);
}

TEST(LogisticExpanderTest, NoLogisticNoChange) {
  LogisticExpander pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  p = f32[4]{0} parameter(0)
  ROOT t = f32[4]{0} tanh(p)
})");
}

// ---------------------------------------------------------------------------------------------
// comparison-expander

TEST(ComparisonExpanderTest, TotalOrderBecomesIntegerCompare) {
  ComparisonExpander pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  ROOT c = pred[4]{0} compare(a, b), direction=LT, type=TOTALORDER
})",
         R"(
HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  constant = s32[] constant(0)
  broadcast = s32[4]{0} broadcast(constant), dimensions={}
  constant.1 = s32[] constant(2147483647)
  broadcast.1 = s32[4]{0} broadcast(constant.1), dimensions={}
  bitcast-convert = s32[4]{0} bitcast-convert(a)
  compare = pred[4]{0} compare(bitcast-convert, broadcast), direction=LT
  xor = s32[4]{0} xor(bitcast-convert, broadcast.1)
  select = s32[4]{0} select(compare, xor, bitcast-convert)
  bitcast-convert.1 = s32[4]{0} bitcast-convert(b)
  compare.1 = pred[4]{0} compare(bitcast-convert.1, broadcast), direction=LT
  xor.1 = s32[4]{0} xor(bitcast-convert.1, broadcast.1)
  select.1 = s32[4]{0} select(compare.1, xor.1, bitcast-convert.1)
  ROOT c.1 = pred[4]{0} compare(select, select.1), direction=LT
})");
}

TEST(ComparisonExpanderTest, SpecialValuesMatchInterpreterBitForBit) {
  ComparisonExpander pass;
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const char* dir : {"LT", "LE", "EQ", "NE", "GE", "GT"}) {
      std::string hlo = StrCat(R"(
HloModule m
ENTRY e {
  a = )", type, R"([9]{0} constant({-nan, -inf, -1.5, -0, 0, 0.25, 1.5, inf, nan})
  b = )", type, R"([9]{0} constant({nan, 0, -0, -inf, -0, 0.25, inf, -1.5, -nan})
  x = )", type, R"([9]{0} reverse(a), dimensions={0}
  c1 = pred[9]{0} compare(a, b), direction=)", dir, R"(, type=TOTALORDER
  c2 = pred[9]{0} compare(a, x), direction=)", dir, R"(, type=TOTALORDER
  c3 = pred[9]{0} compare(a, a), direction=)", dir, R"(, type=TOTALORDER
  ROOT t = (pred[9]{0}, pred[9]{0}, pred[9]{0}) tuple(c1, c2, c3)
})");
      SCOPED_TRACE(StrCat(type, " ", dir));
      ExpectSameMeaning(pass, hlo);
    }
  }
}

TEST(ComparisonExpanderTest, RandomDataAllTypes) {
  ComparisonExpander pass;
  for (const char* type : {"f64", "bf16", "f16", "f8e5m2", "f8e4m3fn"}) {
    SCOPED_TRACE(type);
    ExpectSameMeaning(pass, StrCat(R"(
HloModule m
ENTRY e {
  a = )", type, R"([16]{0} parameter(0)
  b = )", type, R"([16]{0} parameter(1)
  ROOT c = pred[16]{0} compare(a, b), direction=GE, type=TOTALORDER
})"));
  }
}

TEST(ComparisonExpanderTest, OtherComparesUnchanged) {
  ComparisonExpander pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = f32[4]{0} parameter(0)
  b = f32[4]{0} parameter(1)
  c = pred[4]{0} compare(a, b), direction=LT
  i = s32[4]{0} parameter(2)
  d = pred[4]{0} compare(i, i), direction=LT
  u = f8e4m3fnuz[4]{0} parameter(3)
  f = pred[4]{0} compare(u, u), direction=LT, type=TOTALORDER
  ROOT t = (pred[4]{0}, pred[4]{0}, pred[4]{0}) tuple(c, d, f)
})");
}

// ---------------------------------------------------------------------------------------------
// stochastic_convert_decomposer

TEST(StochasticConvertDecomposerTest, F32ToS32) {
  StochasticConvertDecomposer pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  r = u32[4]{0} parameter(1)
  ROOT s = s32[4]{0} stochastic-convert(x, r)
})",
         R"(
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  r = u32[4]{0} parameter(1)
  abs = f32[4]{0} abs(x)
  floor = f32[4]{0} floor(abs)
  subtract = f32[4]{0} subtract(abs, floor)
  constant = f32[] constant(4.2949673e+09)
  broadcast = f32[4]{0} broadcast(constant), dimensions={}
  multiply = f32[4]{0} multiply(subtract, broadcast)
  ceil = f32[4]{0} ceil(multiply)
  convert = u32[4]{0} convert(ceil)
  compare = pred[4]{0} compare(r, convert), direction=LT
  constant.1 = f32[] constant(0)
  broadcast.1 = f32[4]{0} broadcast(constant.1), dimensions={}
  constant.2 = f32[] constant(1)
  broadcast.2 = f32[4]{0} broadcast(constant.2), dimensions={}
  select = f32[4]{0} select(compare, broadcast.2, broadcast.1)
  add = f32[4]{0} add(floor, select)
  constant.3 = f32[] constant(0)
  broadcast.3 = f32[4]{0} broadcast(constant.3), dimensions={}
  compare.1 = pred[4]{0} compare(x, broadcast.3), direction=LT
  negate = f32[4]{0} negate(add)
  select.1 = f32[4]{0} select(compare.1, negate, add)
  constant.4 = f32[] constant(-2.14748365e+09)
  broadcast.4 = f32[4]{0} broadcast(constant.4), dimensions={}
  compare.2 = pred[4]{0} compare(select.1, broadcast.4), direction=LT
  constant.5 = f32[] constant(2.14748365e+09)
  broadcast.5 = f32[4]{0} broadcast(constant.5), dimensions={}
  compare.3 = pred[4]{0} compare(select.1, broadcast.5), direction=GE
  convert.1 = s32[4]{0} convert(select.1)
  constant.6 = s32[] constant(-2147483648)
  broadcast.6 = s32[4]{0} broadcast(constant.6), dimensions={}
  select.2 = s32[4]{0} select(compare.2, broadcast.6, convert.1)
  constant.7 = s32[] constant(2147483647)
  broadcast.7 = s32[4]{0} broadcast(constant.7), dimensions={}
  select.3 = s32[4]{0} select(compare.3, broadcast.7, select.2)
  compare.4 = pred[4]{0} compare(x, x), direction=NE
  constant.8 = s32[] constant(0)
  broadcast.8 = s32[4]{0} broadcast(constant.8), dimensions={}
  ROOT select.4 = s32[4]{0} select(compare.4, broadcast.8, select.3)
})");
}

TEST(StochasticConvertDecomposerTest, MatchesInterpreterAcrossTypes) {
  StochasticConvertDecomposer pass;
  struct Case {
    const char* from;
    const char* bits;
    const char* to;
  };
  for (const Case& c : {Case{"f32", "u32", "s32"}, Case{"f32", "u32", "s8"},
                        Case{"f32", "u32", "u16"}, Case{"f16", "u16", "s8"},
                        Case{"bf16", "u16", "u8"}, Case{"f64", "u64", "s64"},
                        Case{"f64", "u64", "u32"}, Case{"f32", "u32", "s64"}}) {
    SCOPED_TRACE(StrCat(c.from, " ", c.bits, " ", c.to));
    // Scaled fake data (in [-0.1, 0.2]) reaches fractions, integers and the saturation limits.
    ExpectSameMeaning(pass, StrCat(R"(
HloModule m
ENTRY e {
  x = )", c.from, R"([64]{0} parameter(0)
  k = )", c.from, R"([] constant(1500)
  kb = )", c.from, R"([64]{0} broadcast(k), dimensions={}
  y = )", c.from, R"([64]{0} multiply(x, kb)
  r = )", c.bits, R"([64]{0} parameter(1)
  ROOT s = )", c.to, R"([64]{0} stochastic-convert(y, r)
})"));
  }
}

TEST(StochasticConvertDecomposerTest, SpecialValues) {
  StochasticConvertDecomposer pass;
  ExpectSameMeaning(pass, R"(
HloModule m
ENTRY e {
  x = f32[10]{0} constant({nan, -nan, inf, -inf, -0, 0.5, -0.5, 127.75, -128.5, 3e9})
  r = u32[10]{0} constant({0, 1, 2, 3, 4, 2147483647, 2147483648, 3221225471, 2147483648, 7})
  a = s8[10]{0} stochastic-convert(x, r)
  b = u8[10]{0} stochastic-convert(x, r)
  c = s32[10]{0} stochastic-convert(x, r)
  ROOT t = (s8[10]{0}, u8[10]{0}, s32[10]{0}) tuple(a, b, c)
})");
}

TEST(StochasticConvertDecomposerTest, SubByteResultUnchanged) {
  StochasticConvertDecomposer pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  x = f32[4]{0} parameter(0)
  r = u32[4]{0} parameter(1)
  ROOT s = s4[4]{0} stochastic-convert(x, r)
})");
}

// ---------------------------------------------------------------------------------------------
// batchnorm_expander

constexpr char kBatchNormTraining[] = R"(
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  offset = f32[3]{0} parameter(2)
  ROOT bn = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
})";

constexpr char kBatchNormInference[] = R"(
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  offset = f32[3]{0} parameter(2)
  mean = f32[3]{0} parameter(3)
  v = f32[3]{0} parameter(4)
  var = f32[3]{0} multiply(v, v)
  ROOT bn = f32[2,3]{1,0} batch-norm-inference(x, scale, offset, mean, var), epsilon=0.001, feature_index=1
})";

constexpr char kBatchNormGrad[] = R"(
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  mean = f32[3]{0} parameter(2)
  v = f32[3]{0} parameter(3)
  var = f32[3]{0} multiply(v, v)
  dy = f32[2,3]{1,0} parameter(4)
  ROOT bn = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1
})";

// Values of a literal as doubles.
std::vector<double> Values(const Literal& l) {
  std::vector<double> v(static_cast<size_t>(l.element_count()));
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = LiteralElementAsDouble(l, i);
  return v;
}

// Batch-norm training / grad computed in f64 from the module's arguments, for modules shaped
// like kBatchNormTraining (x, scale, offset) and kBatchNormGrad (x, scale, mean, v, dy; the
// variance is v * v). The reference interpreter's batch-norm-training and -grad cannot serve:
// they return tuples whose elements hold no data (see the report).
std::vector<std::vector<double>> BatchNormReference(bool training,
                                                    const std::vector<int64_t>& dims,
                                                    int64_t feature, double epsilon,
                                                    const std::vector<Literal>& args) {
  const std::vector<double> x = Values(args[0]);
  const std::vector<double> scale = Values(args[1]);
  const int64_t features = dims[feature];
  int64_t stride = 1;
  for (size_t i = feature + 1; i < dims.size(); ++i) stride *= dims[i];
  const int64_t total = static_cast<int64_t>(x.size());
  const double n = static_cast<double>(total / features);
  auto feat = [&](int64_t i) { return (i / stride) % features; };
  std::vector<double> mean(features, 0), var(features, 0);
  if (training) {
    for (int64_t i = 0; i < total; ++i) mean[feat(i)] += x[i];
    for (double& m : mean) m /= n;
    for (int64_t i = 0; i < total; ++i) {
      var[feat(i)] += (x[i] - mean[feat(i)]) * (x[i] - mean[feat(i)]);
    }
    for (double& v : var) v /= n;
    const std::vector<double> offset = Values(args[2]);
    std::vector<double> y(total);
    for (int64_t i = 0; i < total; ++i) {
      const int64_t c = feat(i);
      y[i] = (x[i] - mean[c]) / std::sqrt(var[c] + epsilon) * scale[c] + offset[c];
    }
    return {y, mean, var};
  }
  mean = Values(args[2]);
  const std::vector<double> v = Values(args[3]);
  for (int64_t c = 0; c < features; ++c) {
    var[c] = static_cast<double>(static_cast<float>(v[c] * v[c]));
  }
  const std::vector<double> dy = Values(args[4]);
  std::vector<double> sum_g(features, 0), sum_gx(features, 0), grad_scale(features);
  for (int64_t i = 0; i < total; ++i) {
    sum_g[feat(i)] += dy[i];
    sum_gx[feat(i)] += dy[i] * (x[i] - mean[feat(i)]);
  }
  for (int64_t c = 0; c < features; ++c) grad_scale[c] = sum_gx[c] / std::sqrt(var[c] + epsilon);
  std::vector<double> dx(total);
  for (int64_t i = 0; i < total; ++i) {
    const int64_t c = feat(i);
    dx[i] = scale[c] / std::sqrt(var[c] + epsilon) *
            (dy[i] - sum_g[c] / n - (x[i] - mean[c]) * sum_gx[c] / n / (var[c] + epsilon));
  }
  return {dx, grad_scale, sum_g};
}

// Runs the expander on a training or grad module and compares its results on fake data with
// BatchNormReference.
void ExpectBatchNormMatchesReference(const std::string& hlo, bool training,
                                     const std::vector<int64_t>& dims, int64_t feature,
                                     double epsilon) {
  BatchNormExpander pass;
  bool changed = false;
  std::unique_ptr<Module> after = RunPass(pass, hlo, &changed);
  ASSERT_NE(after, nullptr);
  ASSERT_TRUE(changed);
  EXPECT_FALSE(HasOpcode(*after, Opcode::kBatchNormTraining));
  EXPECT_FALSE(HasOpcode(*after, Opcode::kBatchNormGrad));
  FakeDataOptions options;
  options.seed = 11;
  absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(*after, options);
  ASSERT_TRUE(args.ok()) << args.status().message();
  absl::StatusOr<Literal> out = EvaluateModule(*after, *args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  ASSERT_EQ(out->tuple_elements().size(), 3u);
  const std::vector<std::vector<double>> expected =
      BatchNormReference(training, dims, feature, epsilon, *args);
  for (int k = 0; k < 3; ++k) {
    const std::vector<double> actual = Values(out->tuple_elements()[k]);
    ASSERT_EQ(actual.size(), expected[k].size()) << "output " << k;
    for (size_t i = 0; i < actual.size(); ++i) {
      EXPECT_NEAR(actual[i], expected[k][i], 1e-4 * (1 + std::abs(expected[k][i])))
          << "output " << k << " element " << i;
    }
  }
}

TEST(BatchNormExpanderTest, Training) {
  BatchNormExpander pass;
  Golden(pass, kBatchNormTraining, R"(
HloModule m
add_computation {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add = f32[] add(lhs, rhs)
}

ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  offset = f32[3]{0} parameter(2)
  constant = f32[] constant(2)
  broadcast = f32[3]{0} broadcast(constant), dimensions={}
  constant.1 = f32[] constant(0)
  reduce = f32[3]{0} reduce(x, constant.1), dimensions={0}, to_apply=add_computation
  multiply = f32[2,3]{1,0} multiply(x, x)
  constant.2 = f32[] constant(0)
  reduce.1 = f32[3]{0} reduce(multiply, constant.2), dimensions={0}, to_apply=add_computation
  divide = f32[3]{0} divide(reduce, broadcast)
  divide.1 = f32[3]{0} divide(reduce.1, broadcast)
  multiply.1 = f32[3]{0} multiply(divide, divide)
  subtract = f32[3]{0} subtract(divide.1, multiply.1)
  constant.3 = f32[] constant(0.001)
  broadcast.1 = f32[2,3]{1,0} broadcast(constant.3), dimensions={}
  broadcast.2 = f32[2,3]{1,0} broadcast(subtract), dimensions={1}
  add.1 = f32[2,3]{1,0} add(broadcast.2, broadcast.1)
  rsqrt = f32[2,3]{1,0} rsqrt(add.1)
  broadcast.3 = f32[2,3]{1,0} broadcast(divide), dimensions={1}
  subtract.1 = f32[2,3]{1,0} subtract(x, broadcast.3)
  multiply.2 = f32[2,3]{1,0} multiply(subtract.1, rsqrt)
  broadcast.4 = f32[2,3]{1,0} broadcast(scale), dimensions={1}
  multiply.3 = f32[2,3]{1,0} multiply(multiply.2, broadcast.4)
  broadcast.5 = f32[2,3]{1,0} broadcast(offset), dimensions={1}
  add.2 = f32[2,3]{1,0} add(multiply.3, broadcast.5)
  ROOT tuple = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) tuple(add.2, divide, subtract)
})", /*check_semantics=*/false);
  ExpectBatchNormMatchesReference(kBatchNormTraining, true, {2, 3}, 1, 0.001);
}

TEST(BatchNormExpanderTest, Inference) {
  BatchNormExpander pass;
  Golden(pass, kBatchNormInference, R"(
HloModule m
ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  offset = f32[3]{0} parameter(2)
  mean = f32[3]{0} parameter(3)
  v = f32[3]{0} parameter(4)
  var = f32[3]{0} multiply(v, v)
  constant = f32[] constant(0.001)
  broadcast = f32[3]{0} broadcast(constant), dimensions={}
  add = f32[3]{0} add(var, broadcast)
  rsqrt = f32[3]{0} rsqrt(add)
  multiply = f32[3]{0} multiply(scale, rsqrt)
  multiply.1 = f32[3]{0} multiply(mean, multiply)
  subtract = f32[3]{0} subtract(offset, multiply.1)
  broadcast.1 = f32[2,3]{1,0} broadcast(multiply), dimensions={1}
  multiply.2 = f32[2,3]{1,0} multiply(x, broadcast.1)
  broadcast.2 = f32[2,3]{1,0} broadcast(subtract), dimensions={1}
  ROOT add.1 = f32[2,3]{1,0} add(multiply.2, broadcast.2)
})");
}

TEST(BatchNormExpanderTest, Grad) {
  BatchNormExpander pass;
  Golden(pass, kBatchNormGrad, R"(
HloModule m
add_computation {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT add.1 = f32[] add(lhs, rhs)
}

ENTRY e {
  x = f32[2,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  mean = f32[3]{0} parameter(2)
  v = f32[3]{0} parameter(3)
  var = f32[3]{0} multiply(v, v)
  dy = f32[2,3]{1,0} parameter(4)
  constant = f32[] constant(2)
  broadcast = f32[3]{0} broadcast(constant), dimensions={}
  constant.1 = f32[] constant(0.001)
  broadcast.1 = f32[3]{0} broadcast(constant.1), dimensions={}
  add = f32[3]{0} add(var, broadcast.1)
  rsqrt = f32[3]{0} rsqrt(add)
  broadcast.2 = f32[2,3]{1,0} broadcast(mean), dimensions={1}
  subtract = f32[2,3]{1,0} subtract(x, broadcast.2)
  constant.2 = f32[] constant(0)
  reduce = f32[3]{0} reduce(dy, constant.2), dimensions={0}, to_apply=add_computation
  multiply = f32[2,3]{1,0} multiply(dy, subtract)
  constant.3 = f32[] constant(0)
  reduce.1 = f32[3]{0} reduce(multiply, constant.3), dimensions={0}, to_apply=add_computation
  multiply.1 = f32[3]{0} multiply(reduce.1, rsqrt)
  divide = f32[3]{0} divide(reduce, broadcast)
  multiply.2 = f32[3]{0} multiply(broadcast, add)
  divide.1 = f32[3]{0} divide(reduce.1, multiply.2)
  broadcast.3 = f32[2,3]{1,0} broadcast(divide.1), dimensions={1}
  multiply.3 = f32[2,3]{1,0} multiply(subtract, broadcast.3)
  broadcast.4 = f32[2,3]{1,0} broadcast(divide), dimensions={1}
  subtract.1 = f32[2,3]{1,0} subtract(dy, broadcast.4)
  subtract.2 = f32[2,3]{1,0} subtract(subtract.1, multiply.3)
  multiply.4 = f32[3]{0} multiply(scale, rsqrt)
  broadcast.5 = f32[2,3]{1,0} broadcast(multiply.4), dimensions={1}
  multiply.5 = f32[2,3]{1,0} multiply(broadcast.5, subtract.2)
  ROOT tuple = (f32[2,3]{1,0}, f32[3]{0}, f32[3]{0}) tuple(multiply.5, multiply.1, reduce)
})", /*check_semantics=*/false);
  ExpectBatchNormMatchesReference(kBatchNormGrad, false, {2, 3}, 1, 0.001);
}

TEST(BatchNormExpanderTest, Rank4EveryFeatureIndex) {
  const std::vector<int64_t> dims = {4, 5, 3, 6};
  const std::string shape = "f32[4,5,3,6]{3,2,1,0}";
  for (int feature = 0; feature < 4; ++feature) {
    SCOPED_TRACE(feature);
    const std::string f = std::to_string(feature);
    const std::string fs = StrCat("f32[", dims[feature], "]{0}");
    ExpectBatchNormMatchesReference(
        StrCat("HloModule m\nENTRY e {\n  x = ", shape, " parameter(0)\n  scale = ", fs,
               " parameter(1)\n  offset = ", fs, " parameter(2)\n  ROOT t = (", shape, ", ", fs,
               ", ", fs, ") batch-norm-training(x, scale, offset), epsilon=0.01, feature_index=",
               f, "\n}\n"),
        true, dims, feature, 0.01);
    ExpectBatchNormMatchesReference(
        StrCat("HloModule m\nENTRY e {\n  x = ", shape, " parameter(0)\n  scale = ", fs,
               " parameter(1)\n  mean = ", fs, " parameter(2)\n  v = ", fs,
               " parameter(3)\n  var = ", fs, " multiply(v, v)\n  dy = ", shape,
               " parameter(4)\n  ROOT g = (", shape, ", ", fs, ", ", fs,
               ") batch-norm-grad(x, scale, mean, var, dy), epsilon=0.01, feature_index=", f,
               "\n}\n"),
        false, dims, feature, 0.01);
    BatchNormExpander pass;
    ExpectSameMeaning(
        pass, StrCat("HloModule m\nENTRY e {\n  x = ", shape, " parameter(0)\n  scale = ", fs,
                     " parameter(1)\n  offset = ", fs, " parameter(2)\n  mean = ", fs,
                     " parameter(3)\n  v = ", fs, " parameter(4)\n  var = ", fs,
                     " multiply(v, v)\n  ROOT i = ", shape,
                     " batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, "
                     "feature_index=", f, "\n}\n"));
  }
}

TEST(BatchNormExpanderTest, OptionsSelectOps) {
  BatchNormExpanderOptions options;
  options.rewrite_inference_op = false;
  options.rewrite_grad_op = false;
  BatchNormExpander training_only(options);
  ExpectNoChange(training_only, kBatchNormInference);
  ExpectNoChange(training_only, kBatchNormGrad);
  bool changed = false;
  std::unique_ptr<Module> m = RunPass(training_only, kBatchNormTraining, &changed);
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(changed);
  EXPECT_FALSE(HasOpcode(*m, Opcode::kBatchNormTraining));
}

TEST(BatchNormExpanderTest, DynamicShapeUnchanged) {
  BatchNormExpander pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  x = f32[<=8,3]{1,0} parameter(0)
  scale = f32[3]{0} parameter(1)
  offset = f32[3]{0} parameter(2)
  ROOT bn = (f32[<=8,3]{1,0}, f32[3]{0}, f32[3]{0}) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
})");
}

// ---------------------------------------------------------------------------------------------
// rng-bit-generator-expander

TEST(RngBitGeneratorExpanderTest, ThreeFryGolden) {
  RngBitGeneratorExpander pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  s = u64[2]{0} parameter(0)
  ROOT r = (u64[2]{0}, u32[2]{0}) rng-bit-generator(s), algorithm=rng_three_fry
})",
         R"(
HloModule m
ENTRY e {
  s = u64[2]{0} parameter(0)
  slice = u64[1]{0} slice(s), slice={[0:1]}
  reshape = u64[] reshape(slice)
  slice.1 = u64[1]{0} slice(s), slice={[1:2]}
  reshape.1 = u64[] reshape(slice.1)
  iota = u64[1]{0} iota(), iota_dimension=0
  broadcast = u64[1]{0} broadcast(reshape.1), dimensions={}
  add = u64[1]{0} add(broadcast, iota)
  convert = u32[] convert(reshape)
  constant = u64[] constant(32)
  shift-right-logical = u64[] shift-right-logical(reshape, constant)
  convert.1 = u32[] convert(shift-right-logical)
  constant.1 = u32[] constant(466688986)
  xor = u32[] xor(constant.1, convert)
  xor.1 = u32[] xor(xor, convert.1)
  broadcast.1 = u32[1]{0} broadcast(convert), dimensions={}
  convert.2 = u32[1]{0} convert(add)
  add.1 = u32[1]{0} add(convert.2, broadcast.1)
  broadcast.2 = u32[1]{0} broadcast(convert.1), dimensions={}
  constant.2 = u64[] constant(32)
  broadcast.3 = u64[1]{0} broadcast(constant.2), dimensions={}
  shift-right-logical.1 = u64[1]{0} shift-right-logical(add, broadcast.3)
  convert.3 = u32[1]{0} convert(shift-right-logical.1)
  add.2 = u32[1]{0} add(convert.3, broadcast.2)
  add.3 = u32[1]{0} add(add.1, add.2)
  constant.3 = u32[] constant(19)
  broadcast.4 = u32[1]{0} broadcast(constant.3), dimensions={}
  shift-right-logical.2 = u32[1]{0} shift-right-logical(add.2, broadcast.4)
  constant.4 = u32[] constant(13)
  broadcast.5 = u32[1]{0} broadcast(constant.4), dimensions={}
  shift-left = u32[1]{0} shift-left(add.2, broadcast.5)
  or = u32[1]{0} or(shift-left, shift-right-logical.2)
  xor.2 = u32[1]{0} xor(or, add.3)
  add.4 = u32[1]{0} add(add.3, xor.2)
  constant.5 = u32[] constant(17)
  broadcast.6 = u32[1]{0} broadcast(constant.5), dimensions={}
  shift-right-logical.3 = u32[1]{0} shift-right-logical(xor.2, broadcast.6)
  constant.6 = u32[] constant(15)
  broadcast.7 = u32[1]{0} broadcast(constant.6), dimensions={}
  shift-left.1 = u32[1]{0} shift-left(xor.2, broadcast.7)
  or.1 = u32[1]{0} or(shift-left.1, shift-right-logical.3)
  xor.3 = u32[1]{0} xor(or.1, add.4)
  add.5 = u32[1]{0} add(add.4, xor.3)
  constant.7 = u32[] constant(6)
  broadcast.8 = u32[1]{0} broadcast(constant.7), dimensions={}
  shift-right-logical.4 = u32[1]{0} shift-right-logical(xor.3, broadcast.8)
  constant.8 = u32[] constant(26)
  broadcast.9 = u32[1]{0} broadcast(constant.8), dimensions={}
  shift-left.2 = u32[1]{0} shift-left(xor.3, broadcast.9)
  or.2 = u32[1]{0} or(shift-left.2, shift-right-logical.4)
  xor.4 = u32[1]{0} xor(or.2, add.5)
  add.6 = u32[1]{0} add(add.5, xor.4)
  constant.9 = u32[] constant(26)
  broadcast.10 = u32[1]{0} broadcast(constant.9), dimensions={}
  shift-right-logical.5 = u32[1]{0} shift-right-logical(xor.4, broadcast.10)
  constant.10 = u32[] constant(6)
  broadcast.11 = u32[1]{0} broadcast(constant.10), dimensions={}
  shift-left.3 = u32[1]{0} shift-left(xor.4, broadcast.11)
  or.3 = u32[1]{0} or(shift-left.3, shift-right-logical.5)
  xor.5 = u32[1]{0} xor(or.3, add.6)
  broadcast.12 = u32[1]{0} broadcast(convert.1), dimensions={}
  add.7 = u32[1]{0} add(add.6, broadcast.12)
  constant.11 = u32[] constant(1)
  add.8 = u32[] add(xor.1, constant.11)
  broadcast.13 = u32[1]{0} broadcast(add.8), dimensions={}
  add.9 = u32[1]{0} add(xor.5, broadcast.13)
  add.10 = u32[1]{0} add(add.7, add.9)
  constant.12 = u32[] constant(15)
  broadcast.14 = u32[1]{0} broadcast(constant.12), dimensions={}
  shift-right-logical.6 = u32[1]{0} shift-right-logical(add.9, broadcast.14)
  constant.13 = u32[] constant(17)
  broadcast.15 = u32[1]{0} broadcast(constant.13), dimensions={}
  shift-left.4 = u32[1]{0} shift-left(add.9, broadcast.15)
  or.4 = u32[1]{0} or(shift-left.4, shift-right-logical.6)
  xor.6 = u32[1]{0} xor(or.4, add.10)
  add.11 = u32[1]{0} add(add.10, xor.6)
  constant.14 = u32[] constant(3)
  broadcast.16 = u32[1]{0} broadcast(constant.14), dimensions={}
  shift-right-logical.7 = u32[1]{0} shift-right-logical(xor.6, broadcast.16)
  constant.15 = u32[] constant(29)
  broadcast.17 = u32[1]{0} broadcast(constant.15), dimensions={}
  shift-left.5 = u32[1]{0} shift-left(xor.6, broadcast.17)
  or.5 = u32[1]{0} or(shift-left.5, shift-right-logical.7)
  xor.7 = u32[1]{0} xor(or.5, add.11)
  add.12 = u32[1]{0} add(add.11, xor.7)
  constant.16 = u32[] constant(16)
  broadcast.18 = u32[1]{0} broadcast(constant.16), dimensions={}
  shift-right-logical.8 = u32[1]{0} shift-right-logical(xor.7, broadcast.18)
  constant.17 = u32[] constant(16)
  broadcast.19 = u32[1]{0} broadcast(constant.17), dimensions={}
  shift-left.6 = u32[1]{0} shift-left(xor.7, broadcast.19)
  or.6 = u32[1]{0} or(shift-left.6, shift-right-logical.8)
  xor.8 = u32[1]{0} xor(or.6, add.12)
  add.13 = u32[1]{0} add(add.12, xor.8)
  constant.18 = u32[] constant(8)
  broadcast.20 = u32[1]{0} broadcast(constant.18), dimensions={}
  shift-right-logical.9 = u32[1]{0} shift-right-logical(xor.8, broadcast.20)
  constant.19 = u32[] constant(24)
  broadcast.21 = u32[1]{0} broadcast(constant.19), dimensions={}
  shift-left.7 = u32[1]{0} shift-left(xor.8, broadcast.21)
  or.7 = u32[1]{0} or(shift-left.7, shift-right-logical.9)
  xor.9 = u32[1]{0} xor(or.7, add.13)
  broadcast.22 = u32[1]{0} broadcast(xor.1), dimensions={}
  add.14 = u32[1]{0} add(add.13, broadcast.22)
  constant.20 = u32[] constant(2)
  add.15 = u32[] add(convert, constant.20)
  broadcast.23 = u32[1]{0} broadcast(add.15), dimensions={}
  add.16 = u32[1]{0} add(xor.9, broadcast.23)
  add.17 = u32[1]{0} add(add.14, add.16)
  constant.21 = u32[] constant(19)
  broadcast.24 = u32[1]{0} broadcast(constant.21), dimensions={}
  shift-right-logical.10 = u32[1]{0} shift-right-logical(add.16, broadcast.24)
  constant.22 = u32[] constant(13)
  broadcast.25 = u32[1]{0} broadcast(constant.22), dimensions={}
  shift-left.8 = u32[1]{0} shift-left(add.16, broadcast.25)
  or.8 = u32[1]{0} or(shift-left.8, shift-right-logical.10)
  xor.10 = u32[1]{0} xor(or.8, add.17)
  add.18 = u32[1]{0} add(add.17, xor.10)
  constant.23 = u32[] constant(17)
  broadcast.26 = u32[1]{0} broadcast(constant.23), dimensions={}
  shift-right-logical.11 = u32[1]{0} shift-right-logical(xor.10, broadcast.26)
  constant.24 = u32[] constant(15)
  broadcast.27 = u32[1]{0} broadcast(constant.24), dimensions={}
  shift-left.9 = u32[1]{0} shift-left(xor.10, broadcast.27)
  or.9 = u32[1]{0} or(shift-left.9, shift-right-logical.11)
  xor.11 = u32[1]{0} xor(or.9, add.18)
  add.19 = u32[1]{0} add(add.18, xor.11)
  constant.25 = u32[] constant(6)
  broadcast.28 = u32[1]{0} broadcast(constant.25), dimensions={}
  shift-right-logical.12 = u32[1]{0} shift-right-logical(xor.11, broadcast.28)
  constant.26 = u32[] constant(26)
  broadcast.29 = u32[1]{0} broadcast(constant.26), dimensions={}
  shift-left.10 = u32[1]{0} shift-left(xor.11, broadcast.29)
  or.10 = u32[1]{0} or(shift-left.10, shift-right-logical.12)
  xor.12 = u32[1]{0} xor(or.10, add.19)
  add.20 = u32[1]{0} add(add.19, xor.12)
  constant.27 = u32[] constant(26)
  broadcast.30 = u32[1]{0} broadcast(constant.27), dimensions={}
  shift-right-logical.13 = u32[1]{0} shift-right-logical(xor.12, broadcast.30)
  constant.28 = u32[] constant(6)
  broadcast.31 = u32[1]{0} broadcast(constant.28), dimensions={}
  shift-left.11 = u32[1]{0} shift-left(xor.12, broadcast.31)
  or.11 = u32[1]{0} or(shift-left.11, shift-right-logical.13)
  xor.13 = u32[1]{0} xor(or.11, add.20)
  broadcast.32 = u32[1]{0} broadcast(convert), dimensions={}
  add.21 = u32[1]{0} add(add.20, broadcast.32)
  constant.29 = u32[] constant(3)
  add.22 = u32[] add(convert.1, constant.29)
  broadcast.33 = u32[1]{0} broadcast(add.22), dimensions={}
  add.23 = u32[1]{0} add(xor.13, broadcast.33)
  add.24 = u32[1]{0} add(add.21, add.23)
  constant.30 = u32[] constant(15)
  broadcast.34 = u32[1]{0} broadcast(constant.30), dimensions={}
  shift-right-logical.14 = u32[1]{0} shift-right-logical(add.23, broadcast.34)
  constant.31 = u32[] constant(17)
  broadcast.35 = u32[1]{0} broadcast(constant.31), dimensions={}
  shift-left.12 = u32[1]{0} shift-left(add.23, broadcast.35)
  or.12 = u32[1]{0} or(shift-left.12, shift-right-logical.14)
  xor.14 = u32[1]{0} xor(or.12, add.24)
  add.25 = u32[1]{0} add(add.24, xor.14)
  constant.32 = u32[] constant(3)
  broadcast.36 = u32[1]{0} broadcast(constant.32), dimensions={}
  shift-right-logical.15 = u32[1]{0} shift-right-logical(xor.14, broadcast.36)
  constant.33 = u32[] constant(29)
  broadcast.37 = u32[1]{0} broadcast(constant.33), dimensions={}
  shift-left.13 = u32[1]{0} shift-left(xor.14, broadcast.37)
  or.13 = u32[1]{0} or(shift-left.13, shift-right-logical.15)
  xor.15 = u32[1]{0} xor(or.13, add.25)
  add.26 = u32[1]{0} add(add.25, xor.15)
  constant.34 = u32[] constant(16)
  broadcast.38 = u32[1]{0} broadcast(constant.34), dimensions={}
  shift-right-logical.16 = u32[1]{0} shift-right-logical(xor.15, broadcast.38)
  constant.35 = u32[] constant(16)
  broadcast.39 = u32[1]{0} broadcast(constant.35), dimensions={}
  shift-left.14 = u32[1]{0} shift-left(xor.15, broadcast.39)
  or.14 = u32[1]{0} or(shift-left.14, shift-right-logical.16)
  xor.16 = u32[1]{0} xor(or.14, add.26)
  add.27 = u32[1]{0} add(add.26, xor.16)
  constant.36 = u32[] constant(8)
  broadcast.40 = u32[1]{0} broadcast(constant.36), dimensions={}
  shift-right-logical.17 = u32[1]{0} shift-right-logical(xor.16, broadcast.40)
  constant.37 = u32[] constant(24)
  broadcast.41 = u32[1]{0} broadcast(constant.37), dimensions={}
  shift-left.15 = u32[1]{0} shift-left(xor.16, broadcast.41)
  or.15 = u32[1]{0} or(shift-left.15, shift-right-logical.17)
  xor.17 = u32[1]{0} xor(or.15, add.27)
  broadcast.42 = u32[1]{0} broadcast(convert.1), dimensions={}
  add.28 = u32[1]{0} add(add.27, broadcast.42)
  constant.38 = u32[] constant(4)
  add.29 = u32[] add(xor.1, constant.38)
  broadcast.43 = u32[1]{0} broadcast(add.29), dimensions={}
  add.30 = u32[1]{0} add(xor.17, broadcast.43)
  add.31 = u32[1]{0} add(add.28, add.30)
  constant.39 = u32[] constant(19)
  broadcast.44 = u32[1]{0} broadcast(constant.39), dimensions={}
  shift-right-logical.18 = u32[1]{0} shift-right-logical(add.30, broadcast.44)
  constant.40 = u32[] constant(13)
  broadcast.45 = u32[1]{0} broadcast(constant.40), dimensions={}
  shift-left.16 = u32[1]{0} shift-left(add.30, broadcast.45)
  or.16 = u32[1]{0} or(shift-left.16, shift-right-logical.18)
  xor.18 = u32[1]{0} xor(or.16, add.31)
  add.32 = u32[1]{0} add(add.31, xor.18)
  constant.41 = u32[] constant(17)
  broadcast.46 = u32[1]{0} broadcast(constant.41), dimensions={}
  shift-right-logical.19 = u32[1]{0} shift-right-logical(xor.18, broadcast.46)
  constant.42 = u32[] constant(15)
  broadcast.47 = u32[1]{0} broadcast(constant.42), dimensions={}
  shift-left.17 = u32[1]{0} shift-left(xor.18, broadcast.47)
  or.17 = u32[1]{0} or(shift-left.17, shift-right-logical.19)
  xor.19 = u32[1]{0} xor(or.17, add.32)
  add.33 = u32[1]{0} add(add.32, xor.19)
  constant.43 = u32[] constant(6)
  broadcast.48 = u32[1]{0} broadcast(constant.43), dimensions={}
  shift-right-logical.20 = u32[1]{0} shift-right-logical(xor.19, broadcast.48)
  constant.44 = u32[] constant(26)
  broadcast.49 = u32[1]{0} broadcast(constant.44), dimensions={}
  shift-left.18 = u32[1]{0} shift-left(xor.19, broadcast.49)
  or.18 = u32[1]{0} or(shift-left.18, shift-right-logical.20)
  xor.20 = u32[1]{0} xor(or.18, add.33)
  add.34 = u32[1]{0} add(add.33, xor.20)
  constant.45 = u32[] constant(26)
  broadcast.50 = u32[1]{0} broadcast(constant.45), dimensions={}
  shift-right-logical.21 = u32[1]{0} shift-right-logical(xor.20, broadcast.50)
  constant.46 = u32[] constant(6)
  broadcast.51 = u32[1]{0} broadcast(constant.46), dimensions={}
  shift-left.19 = u32[1]{0} shift-left(xor.20, broadcast.51)
  or.19 = u32[1]{0} or(shift-left.19, shift-right-logical.21)
  xor.21 = u32[1]{0} xor(or.19, add.34)
  broadcast.52 = u32[1]{0} broadcast(xor.1), dimensions={}
  add.35 = u32[1]{0} add(add.34, broadcast.52)
  constant.47 = u32[] constant(5)
  add.36 = u32[] add(convert, constant.47)
  broadcast.53 = u32[1]{0} broadcast(add.36), dimensions={}
  add.37 = u32[1]{0} add(xor.21, broadcast.53)
  reshape.2 = u32[1,1,1,1]{3,2,1,0} reshape(add.35)
  reshape.3 = u32[1,1,1,1]{3,2,1,0} reshape(add.37)
  concatenate = u32[1,1,2,1]{3,2,1,0} concatenate(reshape.2, reshape.3), dimensions={2}
  reshape.4 = u32[1,2,1]{2,1,0} reshape(concatenate)
  reshape.5 = u32[2]{0} reshape(reshape.4)
  constant.48 = u64[] constant(1)
  add.38 = u64[] add(reshape.1, constant.48)
  reshape.6 = u64[1]{0} reshape(add.38)
  concatenate.1 = u64[2]{0} concatenate(slice, reshape.6), dimensions={0}
  ROOT tuple = (u64[2]{0}, u32[2]{0}) tuple(concatenate.1, reshape.5)
})");
}

std::string RngBitGeneratorModule(const std::string& algorithm, const std::string& state,
                                  const std::string& bits) {
  return StrCat(R"(
HloModule m
ENTRY e {
  s = )", state, R"( parameter(0)
  ROOT r = ()", state, ", ", bits, R"() rng-bit-generator(s), algorithm=)", algorithm, R"(
})");
}

TEST(RngBitGeneratorExpanderTest, ThreeFryMatchesInterpreter) {
  RngBitGeneratorExpander pass;
  for (const char* bits : {"u32[]", "u32[4]{0}", "u32[3,5]{1,0}", "s32[5,2]{1,0}",
                           "f32[2,3]{1,0}", "u8[7]{0}", "f16[3,3]{1,0}", "u64[3]{0}",
                           "s64[2,2]{1,0}", "f64[5]{0}", "u32[2,3]{0,1}"}) {
    SCOPED_TRACE(bits);
    ExpectSameMeaning(pass, RngBitGeneratorModule("rng_three_fry", "u64[2]{0}", bits));
  }
}

TEST(RngBitGeneratorExpanderTest, PhiloxMatchesInterpreter) {
  RngBitGeneratorExpander pass;
  for (const char* algorithm : {"rng_philox", "rng_default"}) {
    for (const char* state : {"u64[2]{0}", "u64[3]{0}"}) {
      for (const char* bits : {"u32[]", "u32[4]{0}", "u32[5]{0}", "u32[3,5]{1,0}",
                               "f32[2,3]{1,0}", "s16[9]{0}", "bf16[2,5]{1,0}", "u64[3]{0}",
                               "s64[2,2]{1,0}", "f64[5]{0}"}) {
        SCOPED_TRACE(StrCat(algorithm, " ", state, " ", bits));
        ExpectSameMeaning(pass, RngBitGeneratorModule(algorithm, state, bits));
      }
    }
  }
}

TEST(RngBitGeneratorExpanderTest, PhiloxCounterCarry) {
  // The low counter word wraps inside the draw: the high word (state[2]) must carry.
  RngBitGeneratorExpander pass;
  for (const char* state : {"u64[3]{0} constant({12345, 18446744073709551614, 77})",
                            "u64[2]{0} constant({12345, 18446744073709551615})"}) {
    SCOPED_TRACE(state);
    const std::string shape = std::string(state).substr(0, 9);
    ExpectSameMeaning(pass, StrCat(R"(
HloModule m
ENTRY e {
  s = )", state, R"(
  ROOT r = ()", shape, R"(, u32[16]{0}) rng-bit-generator(s), algorithm=rng_philox
})"));
  }
}

TEST(RngBitGeneratorExpanderTest, UnsupportedUnchanged) {
  RngBitGeneratorExpander pass;
  ExpectNoChange(pass, RngBitGeneratorModule("rng_three_fry", "u64[2]{0}", "pred[4]{0}"));
  ExpectNoChange(pass, RngBitGeneratorModule("rng_philox", "u64[2]{0}", "u32[0]{0}"));
}

// ---------------------------------------------------------------------------------------------
// rng-expander

TEST(RngExpanderTest, UniformGolden) {
  RngExpander pass;
  // The expansion draws different values than the interpreter's rng: structure only here.
  Golden(pass, R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[4]{0} rng(a, b), distribution=rng_uniform
})",
         R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  rng-get-and-update-state = u64[2]{0} rng-get-and-update-state(), delta=1
  rng-bit-generator = (u64[2]{0}, u32[4]{0}) rng-bit-generator(rng-get-and-update-state), algorithm=rng_philox
  get-tuple-element = u32[4]{0} get-tuple-element(rng-bit-generator), index=1
  constant = u32[] constant(8)
  broadcast = u32[4]{0} broadcast(constant), dimensions={}
  shift-right-logical = u32[4]{0} shift-right-logical(get-tuple-element, broadcast)
  convert = f32[4]{0} convert(shift-right-logical)
  constant.1 = f32[] constant(5.96046448e-08)
  broadcast.1 = f32[4]{0} broadcast(constant.1), dimensions={}
  multiply = f32[4]{0} multiply(convert, broadcast.1)
  broadcast.2 = f32[4]{0} broadcast(a), dimensions={}
  broadcast.3 = f32[4]{0} broadcast(b), dimensions={}
  subtract = f32[4]{0} subtract(broadcast.3, broadcast.2)
  multiply.1 = f32[4]{0} multiply(subtract, multiply)
  add = f32[4]{0} add(broadcast.2, multiply.1)
  compare = pred[4]{0} compare(add, broadcast.3), direction=LT
  ROOT select = f32[4]{0} select(compare, add, broadcast.2)
})", /*check_semantics=*/false);
}

// Expands every rng of `hlo` down to integer arithmetic and evaluates the result.
Literal ExpandAndEvaluate(const std::string& hlo) {
  std::unique_ptr<Module> m = ParseOrDie(hlo);
  if (!m) return Literal();
  PassContext context = MakeTestContext();
  RngExpander rng;
  RngBitGeneratorExpander bits;
  absl::StatusOr<bool> r1 = rng.Run(m.get(), context);
  EXPECT_TRUE(r1.ok() && *r1) << hlo;
  absl::StatusOr<bool> r2 = bits.Run(m.get(), context);
  EXPECT_TRUE(r2.ok() && *r2) << hlo;
  EXPECT_EQ(CountErrors(VerifyModule(*m)), 0) << Normalize(*m);
  EXPECT_FALSE(HasOpcode(*m, Opcode::kRng));
  EXPECT_FALSE(HasOpcode(*m, Opcode::kRngBitGenerator));
  absl::StatusOr<Literal> out = EvaluateModule(*m, {});
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *std::move(out) : Literal();
}

std::string RngModule(const std::string& type, const std::string& a, const std::string& b,
                      const std::string& distribution, int64_t n) {
  return StrCat(R"(
HloModule m
ENTRY e {
  a = )", type, "[] constant(", a, R"()
  b = )", type, "[] constant(", b, R"()
  ROOT r = )", type, "[", n, "]{0} rng(a, b), distribution=", distribution, R"(
})");
}

TEST(RngExpanderTest, UniformFloatsInRange) {
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    SCOPED_TRACE(type);
    Literal out = ExpandAndEvaluate(RngModule(type, "2", "5", "rng_uniform", 4096));
    ASSERT_EQ(out.element_count(), 4096);
    double sum = 0, lo = 1e9, hi = -1e9;
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const double v = LiteralElementAsDouble(out, i);
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    EXPECT_GE(lo, 2.0);
    EXPECT_LT(hi, 5.0);
    EXPECT_LT(lo, 2.05);
    EXPECT_GT(hi, 4.9);
    EXPECT_NEAR(sum / 4096, 3.5, 0.1);
  }
}

TEST(RngExpanderTest, NormalHasMeanAndDeviation) {
  for (const char* type : {"f32", "f64"}) {
    SCOPED_TRACE(type);
    Literal out = ExpandAndEvaluate(RngModule(type, "1", "2", "rng_normal", 8192));
    ASSERT_EQ(out.element_count(), 8192);
    double sum = 0, sum_sq = 0;
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const double v = LiteralElementAsDouble(out, i);
      ASSERT_TRUE(std::isfinite(v));
      sum += v;
      sum_sq += v * v;
    }
    const double mean = sum / 8192;
    const double deviation = std::sqrt(sum_sq / 8192 - mean * mean);
    EXPECT_NEAR(mean, 1.0, 0.1);
    EXPECT_NEAR(deviation, 2.0, 0.1);
  }
}

TEST(RngExpanderTest, UniformIntegersCoverRange) {
  for (const char* type : {"s32", "s8", "u16", "s64", "u64"}) {
    SCOPED_TRACE(type);
    const bool is_unsigned = type[0] == 'u';
    const int64_t a = is_unsigned ? 3 : -3;
    Literal out = ExpandAndEvaluate(
        RngModule(type, std::to_string(a), std::to_string(a + 7), "rng_uniform", 2048));
    ASSERT_EQ(out.element_count(), 2048);
    std::set<int64_t> seen;
    for (int64_t i = 0; i < out.element_count(); ++i) {
      const int64_t v = static_cast<int64_t>(LiteralElementAsDouble(out, i));
      EXPECT_GE(v, a);
      EXPECT_LT(v, a + 7);
      seen.insert(v);
    }
    EXPECT_EQ(seen.size(), 7u);
  }
  // An empty range gives a.
  Literal out = ExpandAndEvaluate(RngModule("s32", "4", "4", "rng_uniform", 16));
  for (int64_t i = 0; i < out.element_count(); ++i) EXPECT_EQ(LiteralElementAsDouble(out, i), 4);
}

TEST(RngExpanderTest, UnsupportedUnchanged) {
  RngExpander pass;
  ExpectNoChange(pass, RngModule("pred", "false", "true", "rng_uniform", 4));
  // Control dependencies would be lost: left alone.
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  r1 = f32[4]{0} rng(a, b), distribution=rng_uniform
  ROOT r2 = f32[4]{0} rng(a, b), distribution=rng_uniform, control-predecessors={r1}
})");
}

// ---------------------------------------------------------------------------------------------
// operand_upcaster

TEST(OperandUpcasterTest, Bf16DotToF32) {
  OperandUpcaster pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  a = bf16[2,3]{1,0} parameter(0)
  b = bf16[3,4]{1,0} parameter(1)
  ROOT d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
         R"(
HloModule m
ENTRY e {
  a = bf16[2,3]{1,0} parameter(0)
  b = bf16[3,4]{1,0} parameter(1)
  convert = f32[2,3]{1,0} convert(a)
  convert.1 = f32[3,4]{1,0} convert(b)
  ROOT d = f32[2,4]{1,0} dot(convert, convert.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(OperandUpcasterTest, Int8DotToS32) {
  OperandUpcaster pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  a = s8[2,3]{1,0} parameter(0)
  b = s32[3,4]{1,0} parameter(1)
  ROOT d = s32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})",
         R"(
HloModule m
ENTRY e {
  a = s8[2,3]{1,0} parameter(0)
  b = s32[3,4]{1,0} parameter(1)
  convert = s32[2,3]{1,0} convert(a)
  ROOT d = s32[2,4]{1,0} dot(convert, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
}

TEST(OperandUpcasterTest, Bf16DotComputedInF32WithoutNativeSupport) {
  OperandUpcaster pass;
  const char* kDot = R"(
HloModule m
ENTRY e {
  a = bf16[2,3]{1,0} parameter(0)
  b = bf16[3,4]{1,0} parameter(1)
  ROOT d = bf16[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  Golden(pass, kDot, R"(
HloModule m
ENTRY e {
  a = bf16[2,3]{1,0} parameter(0)
  b = bf16[3,4]{1,0} parameter(1)
  convert = f32[2,3]{1,0} convert(a)
  convert.1 = f32[3,4]{1,0} convert(b)
  d.1 = f32[2,4]{1,0} dot(convert, convert.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT convert.2 = bf16[2,4]{1,0} convert(d.1)
})");
  PassContext native = MakeTestContext();
  TargetInfo target;
  target.native_bf16_dot = true;
  native.set_target(target);
  ExpectNoChange(pass, kDot, &native);
}

TEST(OperandUpcasterTest, ConvolutionOperandsUpcast) {
  OperandUpcaster pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  x = f16[1,5,5,2]{3,2,1,0} parameter(0)
  k = f16[3,3,2,4]{3,2,1,0} parameter(1)
  ROOT c = f32[1,3,3,4]{3,2,1,0} convolution(x, k), window={size=3x3}, dim_labels=b01f_01io->b01f
})",
         R"(
HloModule m
ENTRY e {
  x = f16[1,5,5,2]{3,2,1,0} parameter(0)
  k = f16[3,3,2,4]{3,2,1,0} parameter(1)
  convert = f32[1,5,5,2]{3,2,1,0} convert(x)
  convert.1 = f32[3,3,2,4]{3,2,1,0} convert(k)
  ROOT c = f32[1,3,3,4]{3,2,1,0} convolution(convert, convert.1), window={size=3x3}, dim_labels=b01f_01io->b01f
})");
}

TEST(OperandUpcasterTest, SameTypesUnchanged) {
  OperandUpcaster pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  b = f32[3,4]{1,0} parameter(1)
  d = f32[2,4]{1,0} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = s8[2,3]{1,0} parameter(2)
  j = s8[3,4]{1,0} parameter(3)
  k = s32[2,4]{1,0} dot(i, j), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={packed_nibble,packed_nibble}
  ROOT t = (f32[2,4]{1,0}, s32[2,4]{1,0}) tuple(d, k)
})");
}

// ---------------------------------------------------------------------------------------------
// float-normalization-bf16

TEST(FloatNormalizationTest, ElementwiseInF32) {
  FloatNormalization pass;
  Golden(pass, R"(
HloModule m
ENTRY e {
  a = bf16[4]{0} parameter(0)
  b = bf16[4]{0} parameter(1)
  s = bf16[4]{0} add(a, b)
  c = pred[4]{0} compare(s, a), direction=GT
  x = bf16[4]{0} exponential(s)
  ROOT t = (bf16[4]{0}, pred[4]{0}) tuple(x, c)
})",
         R"(
HloModule m
ENTRY e {
  a = bf16[4]{0} parameter(0)
  b = bf16[4]{0} parameter(1)
  convert = f32[4]{0} convert(a)
  convert.1 = f32[4]{0} convert(b)
  s.1 = f32[4]{0} add(convert, convert.1)
  convert.2 = bf16[4]{0} convert(s.1)
  convert.3 = f32[4]{0} convert(convert.2)
  x.1 = f32[4]{0} exponential(convert.3)
  convert.4 = bf16[4]{0} convert(x.1)
  c.1 = pred[4]{0} compare(convert.3, convert), direction=GT
  ROOT t = (bf16[4]{0}, pred[4]{0}) tuple(convert.4, c.1)
})");
}

TEST(FloatNormalizationTest, ReduceWithWidenedReducer) {
  FloatNormalization pass;
  const char* kReduce = R"(
HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  ROOT s = bf16[] add(x, y)
}
ENTRY e {
  p = bf16[8,16]{1,0} parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[8]{0} reduce(p, z), dimensions={1}, to_apply=add
})";
  // bf16 accumulation rounds at every step; the f32 one does not, so the results differ in
  // the last bf16 bits: compared with a bf16 tolerance below.
  Golden(pass, kReduce, R"(
HloModule m
add_f32 {
  x.1 = f32[] parameter(0)
  y.1 = f32[] parameter(1)
  ROOT s.1 = f32[] add(x.1, y.1)
}

ENTRY e {
  p = bf16[8,16]{1,0} parameter(0)
  z = bf16[] constant(0)
  convert = f32[8,16]{1,0} convert(p)
  convert.1 = f32[] convert(z)
  r.1 = f32[8]{0} reduce(convert, convert.1), dimensions={1}, to_apply=add_f32
  ROOT convert.2 = bf16[8]{0} convert(r.1)
})", /*check_semantics=*/false);
  bool changed = false;
  std::unique_ptr<Module> after = RunPass(pass, kReduce, &changed);
  std::unique_ptr<Module> before = ParseOrDie(kReduce);
  ASSERT_NE(after, nullptr);
  ASSERT_NE(before, nullptr);
  Literal x(before->entry()->parameter(0)->shape());
  for (int64_t i = 0; i < x.element_count(); ++i) {
    x.SetBits(i, FilledLiteral(Shape::Array(PrimitiveType::kBF16, {}), 0.01 * (i % 7)).GetBits(0));
  }
  absl::StatusOr<Literal> a = EvaluateModule(*before, {x});
  absl::StatusOr<Literal> b = EvaluateModule(*after, {x});
  ASSERT_TRUE(a.ok() && b.ok());
  for (int64_t i = 0; i < a->element_count(); ++i) {
    const double va = LiteralElementAsDouble(*a, i), vb = LiteralElementAsDouble(*b, i);
    EXPECT_NEAR(va, vb, 0.02 * std::abs(va) + 1e-3) << i;
  }
}

TEST(FloatNormalizationTest, DataMovementAndF32Unchanged) {
  FloatNormalization pass;
  ExpectNoChange(pass, R"(
HloModule m
ENTRY e {
  a = bf16[4]{0} parameter(0)
  b = bf16[2,4]{1,0} broadcast(a), dimensions={1}
  r = bf16[8]{0} reshape(b)
  f = f32[8]{0} convert(r)
  g = f32[8]{0} add(f, f)
  ROOT t = (bf16[8]{0}, f32[8]{0}) tuple(r, g)
})");
}

// ---------------------------------------------------------------------------------------------
// Every pass over the corpus: modules that verify before the pass still verify after it.

TEST(ExpanderPassesCorpusTest, VerifierCleanAfterEveryPass) {
  if (testing::CorpusModules().empty()) {
    GTEST_SKIP() << "corpus directory " << HLOWB_CORPUS_DIR << " not found";
  }
  std::vector<std::unique_ptr<HloPass>> passes;
  passes.push_back(std::make_unique<BatchNormExpander>());
  passes.push_back(std::make_unique<LogisticExpander>());
  passes.push_back(std::make_unique<RngExpander>());
  passes.push_back(std::make_unique<RngBitGeneratorExpander>());
  passes.push_back(std::make_unique<ComparisonExpander>());
  passes.push_back(std::make_unique<StochasticConvertDecomposer>());
  passes.push_back(std::make_unique<OperandUpcaster>());
  passes.push_back(std::make_unique<FloatNormalization>());
  int modules = 0;
  for (const testing::CorpusModule& cm : testing::CorpusModules()) {
    std::unique_ptr<Module> parsed = testing::ParseValidModule(cm.text);
    if (!parsed) continue;
    ++modules;
    for (const auto& pass : passes) {
      std::unique_ptr<Module> m = CloneModule(*parsed);
      PassContext context = MakeTestContext();
      absl::StatusOr<bool> r = pass->Run(m.get(), context);
      ASSERT_TRUE(r.ok()) << pass->name() << " on " << cm.label << ": " << r.status().message();
      if (!*r) continue;
      for (const VerifierDiagnostic& d : VerifyModule(*m)) {
        EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
            << pass->name() << " on " << cm.label << ": " << d.ToString();
      }
    }
  }
  EXPECT_GT(modules, 0) << "no corpus module parsed and verified";
}

}  // namespace
}  // namespace hlowb
