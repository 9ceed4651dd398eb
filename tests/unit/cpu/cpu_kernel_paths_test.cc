// Fast paths of the cpu kernels that must keep the interpreter's answers: wide values (f64,
// 32- and 64-bit integers) rounded once to bf16 and f16 inline instead of through the runtime
// converter, and f32/f64 sums reassociated into vector lanes (within the platform's float
// tolerance) while other reducers keep the interpreter's order.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/float_types.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb {
namespace {

std::unique_ptr<Module> Parse(const char* text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

Literal F64s(const std::vector<double>& v) {
  Literal l = Literal::Uninitialized(Shape::Array(PrimitiveType::kF64, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.mutable_data_as<double>()[i] = v[i];
  return l;
}

Literal S32s(const std::vector<int32_t>& v) {
  Literal l = Literal::Uninitialized(Shape::Array(PrimitiveType::kS32, {static_cast<int64_t>(v.size())}));
  for (size_t i = 0; i < v.size(); ++i) l.mutable_data_as<int32_t>()[i] = v[i];
  return l;
}

// Values where rounding f64 to f32 first and then to the narrow type would give another answer
// than rounding once (the f32 step lands exactly halfway), and the edges: ties, overflow,
// subnormals, zeros, infinities and NaN.
std::vector<double> TrapDoubles() {
  const double inf = std::numeric_limits<double>::infinity();
  return {1.0 + std::ldexp(1, -8) + std::ldexp(1, -30),   // bf16: rounds up, not to even
          -(1.0 + std::ldexp(1, -8) + std::ldexp(1, -30)),
          1.0 + std::ldexp(1, -11) + std::ldexp(1, -40),  // f16: rounds up
          1.0 + std::ldexp(1, -8),                        // an exact bf16 tie: to even (1.0)
          1.0 + 3 * std::ldexp(1, -8),                    // a tie that rounds up to even
          3.3895313892515355e38,                          // bf16 max finite
          3.4e38, 1e39, -1e300, 65504.0, 65520.0, 65519.99,  // overflow edges of bf16 and f16
          std::ldexp(1, -133), std::ldexp(1.5, -134), std::ldexp(1, -150),  // bf16 subnormals
          std::ldexp(1, -24), std::ldexp(1.5, -25), std::ldexp(1, -26),    // f16 subnormals
          0.0, -0.0, inf, -inf, std::nan(""), 0.1, -2.718281828459045, 123456.789};
}

TEST(CpuKernelPaths, WideValuesRoundOnceToBf16AndF16) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  d = f64[26] parameter(0)
  i = s32[8] parameter(1)
  a = bf16[26] convert(d)
  b = f16[26] convert(d)
  c = bf16[8] convert(i)
  f = f16[8] convert(i)
  l = s64[8] convert(i)
  k = u32[8] convert(i)
  g = bf16[8] convert(l)
  h = bf16[8] convert(k)
  ROOT t = (bf16[26], f16[26], bf16[8], f16[8], bf16[8], bf16[8]) tuple(a, b, c, f, g, h)
}
)");
  ASSERT_NE(m, nullptr);
  const std::vector<double> doubles = TrapDoubles();
  ASSERT_EQ(doubles.size(), 26u);
  // 2^24 + 2^16 + 1: through f32 it becomes the bf16 tie 2^24 + 2^16 and then 2^24.
  std::vector<Literal> args;
  args.push_back(F64s(doubles));
  args.push_back(S32s({(1 << 24) + (1 << 16) + 1, -((1 << 24) + (1 << 16) + 1), 2049, 65519,
                       2147483647, -2147483647 - 1, 0, -3}));
  CpuCompileOptions o;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  // The kernels round inline: no call into the runtime converter is left for bf16 and f16.
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->find("hlowb_f64_to_narrow"), std::string::npos);
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t k = 0; k < want->tuple_elements().size(); ++k) {
    const Literal& w = want->tuple_elements()[k];
    const Literal& g = got->tuple_elements()[k];
    for (int64_t e = 0; e < w.element_count(); ++e) {
      EXPECT_EQ(w.GetBits(e), g.GetBits(e)) << "output " << k << " element " << e;
    }
  }
  // And the interpreter's answers are the single roundings themselves.
  const Literal& bf = got->tuple_elements()[0];
  EXPECT_EQ(bf.GetBits(0), 0x3f81u);  // 1 + 2^-7
  EXPECT_EQ(bf.GetBits(1), 0xbf81u);
  EXPECT_EQ(bf.GetBits(3), 0x3f80u);  // tie to even
  EXPECT_EQ(bf.GetBits(4), 0x3f82u);
  EXPECT_EQ(bf.GetBits(7), 0x7f80u);  // 1e39 overflows to infinity
  const Literal& h = got->tuple_elements()[1];
  EXPECT_EQ(h.GetBits(2), 0x3c01u);   // 1 + 2^-10
  EXPECT_EQ(h.GetBits(9), 0x7bffu);   // 65504
  EXPECT_EQ(h.GetBits(10), 0x7c00u);  // 65520 is the tie above 65504: infinity
  const Literal& ci = got->tuple_elements()[2];
  EXPECT_EQ(ci.GetBits(0), DoubleToFloatBits(PrimitiveType::kBF16, 16908288.0));  // 2^24 + 2^17
  EXPECT_EQ(ci.GetBits(0), 0x4b81u);
}

constexpr char kReductions[] = R"(HloModule m
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] maximum(x, y)
}
squares {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  yy = f32[] multiply(y, y)
  ROOT s = f32[] add(x, yy)
}
ENTRY e {
  a = f32[37,4099] parameter(0)
  x = f32[37,4099] exponential(a)
  z = f32[] constant(0)
  s = f32[37] reduce(x, z), dimensions={1}, to_apply=sum
  m = f32[37] reduce(a, z), dimensions={1}, to_apply=max
  q = f32[37] reduce(a, z), dimensions={1}, to_apply=squares
  ROOT t = (f32[37], f32[37], f32[37]) tuple(s, m, q)
}
)";

TEST(CpuKernelPaths, RowSumsAreReassociatedOtherReducersAreNot) {
  std::unique_ptr<Module> m = Parse(kReductions);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  Literal a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {37, 4099}));
  for (int64_t i = 0; i < a.element_count(); ++i) {
    a.mutable_data_as<float>()[i] = static_cast<float>(3 * std::sin(0.37 * static_cast<double>(i)));
  }
  args.push_back(std::move(a));
  CpuCompileOptions o;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  // The plain sum's accumulation may be reassociated (and so vectorised); nothing else is.
  size_t reassoc = 0;
  for (size_t at = ir->find(" reassoc "); at != std::string::npos; at = ir->find(" reassoc ", at + 1)) {
    ++reassoc;
    const size_t line = ir->rfind('\n', at);
    EXPECT_NE(ir->substr(line, at - line).find("fadd"), std::string::npos)
        << ir->substr(line, 120);
  }
  EXPECT_EQ(reassoc, 1u) << *ir;
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::Disagreement(*want, *got, "reductions"), "");
  // The maximum and the sum of squares keep the interpreter's order: bit for bit.
  EXPECT_TRUE(want->tuple_elements()[1] == got->tuple_elements()[1]);
  EXPECT_TRUE(want->tuple_elements()[2] == got->tuple_elements()[2]);
}

// Reductions to a scalar inside a fusion (a global norm: the sum of the sums of squares of
// several arrays, gathered through a concatenate) are emitted once, before the loop over the
// output, not inside it, where the concatenate's selects would run every operand's reduction
// for each element of the outer reduction (and a larger output would run them per row).
TEST(CpuKernelPaths, ScalarReductionsAreComputedOnceBeforeTheOutputLoop) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[4099] parameter(0)
  p1 = f32[513,7] parameter(1)
  z = f32[] constant(0)
  q0 = f32[4099] multiply(p0, p0)
  sum0 = f32[] reduce(q0, z), dimensions={0}, to_apply=add
  q1 = f32[513,7] multiply(p1, p1)
  sum1 = f32[] reduce(q1, z), dimensions={0,1}, to_apply=add
  r0 = f32[1] reshape(sum0)
  r1 = f32[1] reshape(sum1)
  c = f32[2] concatenate(r0, r1), dimensions={0}
  total = f32[] reduce(c, z), dimensions={0}, to_apply=add
  ROOT norm = f32[] sqrt(total)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{4099}, std::vector<int64_t>{513, 7}}) {
    Literal a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, dims));
    for (int64_t i = 0; i < a.element_count(); ++i) {
      a.mutable_data_as<float>()[i] = static_cast<float>(std::cos(0.11 * static_cast<double>(i)));
    }
    args.push_back(std::move(a));
  }
  auto exe = CpuExecutable::Compile(*m, CpuCompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  EXPECT_EQ((*exe)->stats().kernels, 1) << (*exe)->Summary();
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  // Blocks appear in the order they were made: the three reductions' loops come before the
  // output loop, and none after it.
  const size_t output_loop = ir->find("\nrows.header");
  ASSERT_NE(output_loop, std::string::npos) << *ir;
  auto count = [&](size_t from, size_t to) {
    int n = 0;
    for (size_t at = ir->find("\nred0.header", from); at != std::string::npos && at < to;
         at = ir->find("\nred0.header", at + 1)) {
      ++n;
    }
    return n;
  };
  EXPECT_EQ(count(0, output_loop), 3) << *ir;
  EXPECT_EQ(count(output_loop, std::string::npos), 0) << *ir;
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::Disagreement(*want, *got, "global norm"), "");
}

// f32 exp is inline (no slow path when lanes overflow): within 2 ulp of the interpreter's
// everywhere it is finite and normal, exactly 0, infinity and NaN where those are the answer,
// and within the tolerance where the result is subnormal.
TEST(CpuKernelPaths, InlineExpIsAccurateAcrossTheWholeRange) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  a = f32[20011] parameter(0)
  ROOT x = f32[20011] exponential(a)
}
)");
  ASSERT_NE(m, nullptr);
  Literal a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {20011}));
  float* v = a.mutable_data_as<float>();
  for (int i = 0; i < 20000; ++i) v[i] = -110.0f + 200.0f * static_cast<float>(i) / 20000.0f;
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::nanf(""),
                            88.7228317f, 88.7228394f, -103.972084f, -87.3365479f, 0.0f, -0.0f,
                            1e-8f, -1e-8f};
  for (int i = 0; i < 11; ++i) v[20000 + i] = specials[i];
  std::vector<Literal> args;
  args.push_back(std::move(a));
  CpuCompileOptions o;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  // Inline: no call to the math library's exp is left in the kernel.
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_EQ(ir->find("llvm.exp"), std::string::npos);
  EXPECT_EQ(ir->find("expf"), std::string::npos);
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok() && got.ok());
  const float* w = want->data_as<float>();
  const float* g = got->data_as<float>();
  for (int i = 0; i < 20011; ++i) {
    if (std::isnan(w[i]) || std::isinf(w[i]) || w[i] == 0) {
      EXPECT_EQ(std::isnan(w[i]), std::isnan(g[i])) << "exp(" << v[i] << ")";
      if (!std::isnan(w[i])) {
        EXPECT_EQ(w[i], g[i]) << "exp(" << v[i] << ")";
      }
      continue;
    }
    if (w[i] < std::numeric_limits<float>::min()) {  // subnormal: the table's absolute bound
      EXPECT_LE(std::fabs(w[i] - g[i]), 1e-5) << "exp(" << v[i] << ")";
      continue;
    }
    int32_t wb, gb;
    std::memcpy(&wb, &w[i], 4);
    std::memcpy(&gb, &g[i], 4);
    EXPECT_LE(std::abs(wb - gb), 2) << "exp(" << v[i] << ") = " << w[i] << ", kernel " << g[i];
  }
}

// f32 powers with a small integral constant exponent are multiplied out (no math library call)
// and agree with the interpreter's powf to the last bit here, signs of negative bases, zeros,
// infinities and NaN included.
TEST(CpuKernelPaths, SmallIntegralPowersAreMultipliedOut) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
f {
  x = f32[4099] parameter(0)
  three = bf16[] constant(3)
  t = f32[] convert(three)
  e3 = f32[4099] broadcast(t), dimensions={}
  p3 = f32[4099] power(x, e3)
  m2 = f32[] constant(-2)
  em2 = f32[4099] broadcast(m2), dimensions={}
  pm2 = f32[4099] power(x, em2)
  five = f32[] constant(5)
  e5 = f32[4099] broadcast(five), dimensions={}
  p5 = f32[4099] power(x, e5)
  half = f32[] constant(0.5)
  eh = f32[4099] broadcast(half), dimensions={}
  ph = f32[4099] power(x, eh)
  ROOT r = (f32[4099], f32[4099], f32[4099], f32[4099]) tuple(p3, pm2, p5, ph)
}
ENTRY e {
  a = f32[4099] parameter(0)
  ROOT f = (f32[4099], f32[4099], f32[4099], f32[4099]) fusion(a), kind=kLoop, calls=f
}
)");
  ASSERT_NE(m, nullptr);
  Literal a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {4099}));
  float* v = a.mutable_data_as<float>();
  for (int i = 0; i < 4090; ++i) v[i] = static_cast<float>(-7.0 + 14.0 * i / 4090.0) * 1.37f;
  const float specials[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(), std::nanf(""), 1e13f,
                            -1e13f, 1e-30f, -3e-39f};
  for (int i = 0; i < 9; ++i) v[4090 + i] = specials[i];
  std::vector<Literal> args;
  args.push_back(std::move(a));
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  // Only the 0.5 power still calls pow.
  size_t calls = 0;
  for (size_t at = ir->find("call float @llvm.pow"); at != std::string::npos;
       at = ir->find("call float @llvm.pow", at + 1)) {
    ++calls;
  }
  EXPECT_EQ(calls, 1u);
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  int exact = 0, finite = 0;
  for (int k = 0; k < 4; ++k) {
    const float* w = want->tuple_elements()[k].data_as<float>();
    const float* g = got->tuple_elements()[k].data_as<float>();
    for (int i = 0; i < 4099; ++i) {
      if (std::isnan(w[i])) {
        EXPECT_TRUE(std::isnan(g[i])) << "output " << k << " at " << v[i];
        continue;
      }
      EXPECT_EQ(std::signbit(w[i]), std::signbit(g[i])) << "output " << k << " at " << v[i];
      if (std::isinf(w[i]) || w[i] == 0) {
        EXPECT_EQ(w[i], g[i]) << "output " << k << " at " << v[i];
        continue;
      }
      // glibc's powf is within 0.82 ulp, not always correctly rounded: one ulp apart at most.
      int32_t wb, gb;
      std::memcpy(&wb, &w[i], 4);
      std::memcpy(&gb, &g[i], 4);
      EXPECT_LE(std::abs(wb - gb), 1) << "output " << k << " at " << v[i];
      exact += wb == gb;
      ++finite;
    }
  }
  EXPECT_GE(exact, finite - finite / 100) << exact << " of " << finite << " bit for bit";
}

// One f32 literal per entry parameter of `m` (all f32), element i of parameter p being
// value(i, p).
std::vector<Literal> F32Arguments(const Module& m,
                                  const std::function<double(int64_t, int)>& value) {
  std::vector<Literal> args;
  for (int p = 0; p < m.entry()->parameter_count(); ++p) {
    Literal x = Literal::Uninitialized(m.entry()->parameter(p)->shape());
    for (int64_t i = 0; i < x.element_count(); ++i) {
      x.mutable_data_as<float>()[i] = static_cast<float>(value(i, p));
    }
    args.push_back(std::move(x));
  }
  return args;
}

// Runs `m` (whose dots are `library_calls` library calls) on pools of one and two threads:
// both agree with the interpreter and with each other bit for bit.
void ExpectLibraryDotsAgreeOnOneAndTwoThreads(const Module& m, const std::vector<Literal>& args,
                                              int64_t library_calls, const char* name) {
  auto want = EvaluateModule(m, args);
  ASSERT_TRUE(want.ok()) << want.status();
  std::optional<Literal> first;
  for (int threads : {1, 2}) {
    CpuCompileOptions o;
    o.threads = threads;
    auto exe = CpuExecutable::Compile(m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().library_calls, library_calls) << (*exe)->Summary();
    auto got = (*exe)->Run(args, {});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(testing::Disagreement(*want, *got, name), "");
    if (first) {
      EXPECT_TRUE(*first == *got) << name << ": one and two threads differ";
    } else {
      first = std::move(*got);
    }
  }
}

// A batched dot whose products are too small for OpenBLAS's threads runs its batch elements
// side by side on the pool: the same bits as on one thread, and the interpreter's values.
TEST(CpuKernelPaths, BatchedDotsSplitTheBatchAcrossThreads) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  a = f32[24,128,64] parameter(0)
  b = f32[24,64,128] parameter(1)
  ROOT d = f32[24,128,128] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args =
      F32Arguments(*m, [](int64_t i, int p) { return std::cos(0.01 * i + p); });
  ExpectLibraryDotsAgreeOnOneAndTwoThreads(*m, args, 1, "dot");
}

// Narrow products with many rows (N < 256) run as one GEMM per block of rows on the pool; the
// blocks cover every row once, whichever operand is transposed, and each row's sums are the
// same whatever the split.
TEST(CpuKernelPaths, NarrowProductsSplitTheirRowsAcrossThreads) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  a = f32[4099,128] parameter(0)
  b = f32[128,96] parameter(1)
  t = f32[128,4099] parameter(2)
  plain = f32[4099,96] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  lhs_transposed = f32[4099,96] dot(t, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  ROOT r = (f32[4099,96], f32[4099,96]) tuple(plain, lhs_transposed)
}
)");
  ASSERT_NE(m, nullptr);
  // Positive values: sums without cancellation, so f32 GEMMs meet the f32 tolerance.
  std::vector<Literal> args =
      F32Arguments(*m, [](int64_t i, int p) { return 1.5 + std::sin(0.003 * i + p); });
  ExpectLibraryDotsAgreeOnOneAndTwoThreads(*m, args, 2, "narrow dots");
}

// Products with one row or one column run as matrix-vector products (GEMV), whichever operand
// is stored transposed, batched or not: the interpreter's values, and the same bits on one and
// two threads.
TEST(CpuKernelPaths, VectorMatrixProductsRunAsMatrixVectorProducts) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  x = f32[1,1024] parameter(0)
  w = f32[1024,1200] parameter(1)
  wt = f32[1200,1024] parameter(2)
  v = f32[1024] parameter(3)
  bx = f32[8,1,256] parameter(4)
  bw = f32[8,256,300] parameter(5)
  row = f32[1,1200] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  row_t = f32[1,1200] dot(x, wt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  col = f32[1200] dot(wt, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  col_t = f32[1200] dot(w, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  batched = f32[8,1,300] dot(bx, bw), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  ROOT r = (f32[1,1200], f32[1,1200], f32[1200], f32[1200], f32[8,1,300]) tuple(row, row_t, col, col_t, batched)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args =
      F32Arguments(*m, [](int64_t i, int p) { return 1.25 + std::sin(0.007 * i + 3 * p); });
  ExpectLibraryDotsAgreeOnOneAndTwoThreads(*m, args, 5, "matrix-vector dots");
}

// A fusion whose root is a dynamic-update-slice has an in-place kernel: in a loop that fills
// its state block by block (the update computed in the fusion, the last start clamped), each
// iteration writes only the update into the state's one array. Where the operand is read again
// afterwards, the ordinary kernel leaves it as it was.
TEST(CpuKernelPaths, UpdatesOfALoopStateAreWrittenInPlace) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
fused {
  acc = f32[6,130] parameter(0)
  i = s32[] parameter(1)
  v = f32[2,130] parameter(2)
  f = f32[] convert(i)
  fb = f32[2,130] broadcast(f), dimensions={}
  upd = f32[2,130] multiply(v, fb)
  z = s32[] constant(0)
  ROOT u = f32[6,130] dynamic-update-slice(acc, upd, i, z)
}
cond {
  p = (s32[], f32[6,130], f32[2,130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(6)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[6,130], f32[2,130]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[6,130] get-tuple-element(p), index=1
  v = f32[2,130] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  u = f32[6,130] fusion(acc, i, v), kind=kLoop, calls=fused
  ROOT t = (s32[], f32[6,130], f32[2,130]) tuple(j, u, v)
}
ENTRY e {
  x = f32[6,130] parameter(0)
  v = f32[2,130] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[6,130], f32[2,130]) tuple(zero, x, v)
  w = (s32[], f32[6,130], f32[2,130]) while(init), condition=cond, body=body
  filled = f32[6,130] get-tuple-element(w), index=1
  a = f32[6,130] negate(x)
  three = s32[] constant(3)
  b = f32[6,130] fusion(a, three, v), kind=kLoop, calls=fused
  c = f32[6,130] add(a, b)
  ROOT r = (f32[6,130], f32[6,130], f32[6,130]) tuple(filled, b, c)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args =
      F32Arguments(*m, [](int64_t i, int p) { return 0.25 * i - 7 * p; });
  auto want = EvaluateModule(*m, args);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().in_place_kernels, 2) << (*exe)->Summary();
  std::vector<const uint8_t*> storage;
  EvaluatorOptions eo;
  eo.on_instruction = [&](const InstructionEvent& ev) {
    if (ev.instruction->name() == "u") storage.push_back(ev.result->data().data());
  };
  auto got = (*exe)->Run(args, eo);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::Disagreement(*want, *got, "in-place updates"), "");
  EXPECT_TRUE(*want == *got) << "the updates are not bit-exact";
  ASSERT_EQ(storage.size(), 6u);
  for (size_t k = 1; k < storage.size(); ++k) {
    EXPECT_EQ(storage[k], storage[0]) << "iteration " << k << " copied the state";
  }
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_NE(ir->find("_in_place"), std::string::npos);
}

// Float max and min reductions keep eight partial results in their innermost loop: rows whose
// length is not a multiple of eight, reductions over two dimensions, NaNs (which win), signed
// zeros and infinities give the interpreter's values; the kernel has the partial loop.
TEST(CpuKernelPaths, MaxAndMinReductionsKeepPartialResults) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = f32[] maximum(a, b)
}
min {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT c = f64[] minimum(a, b)
}
ENTRY e {
  x = f32[37,1003] parameter(0)
  y = f64[6,5,203] parameter(1)
  lo = f32[] constant(-inf)
  hi = f64[] constant(inf)
  rows = f32[37] reduce(x, lo), dimensions={1}, to_apply=max
  planes = f64[6] reduce(y, hi), dimensions={1,2}, to_apply=min
  ROOT r = (f32[37], f64[6]) tuple(rows, planes)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  Literal x = Literal::Uninitialized(m->entry()->parameter(0)->shape());
  float* xs = x.mutable_data_as<float>();
  for (int64_t i = 0; i < x.element_count(); ++i) xs[i] = static_cast<float>(std::sin(0.37 * i) * 100);
  xs[5 * 1003 + 1001] = std::numeric_limits<float>::quiet_NaN();  // in a row's last elements
  xs[9 * 1003 + 4] = std::numeric_limits<float>::infinity();
  for (int64_t j = 0; j < 1003; ++j) xs[12 * 1003 + j] = j % 2 == 0 ? 0.0f : -0.0f;
  args.push_back(std::move(x));
  Literal y = Literal::Uninitialized(m->entry()->parameter(1)->shape());
  double* ys = y.mutable_data_as<double>();
  for (int64_t i = 0; i < y.element_count(); ++i) ys[i] = std::cos(0.11 * i) * 10;
  ys[2 * 1015 + 700] = std::numeric_limits<double>::quiet_NaN();
  args.push_back(std::move(y));
  auto want = EvaluateModule(*m, args);
  ASSERT_TRUE(want.ok()) << want.status();
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(testing::Disagreement(*want, *got, "max and min"), "");
  const float* rows = got->tuple_elements()[0].data_as<float>();
  EXPECT_TRUE(std::isnan(rows[5]));
  EXPECT_EQ(rows[9], std::numeric_limits<float>::infinity());
  EXPECT_EQ(rows[12], 0.0f);
  EXPECT_TRUE(std::isnan(got->tuple_elements()[1].data_as<double>()[2]));
  auto ir = CpuKernelIr((*exe)->module(), /*optimized=*/false);
  ASSERT_TRUE(ir.ok()) << ir.status();
  EXPECT_NE(ir->find(".partials"), std::string::npos);
}

// Fusions with the same code (a model's repeated layers) are optimised and compiled once and
// run the same entry point; each still reads its own operands and constants.
TEST(CpuKernelPaths, RepeatedKernelsShareTheirCompiledCode) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
f1 {
  a = f32[64,33] parameter(0)
  c = f32[33] constant({1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33})
  b = f32[64,33] broadcast(c), dimensions={1}
  ROOT r = f32[64,33] multiply(a, b)
}
f2 {
  x = f32[64,33] parameter(0)
  k = f32[33] constant({3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3,3})
  y = f32[64,33] broadcast(k), dimensions={1}
  ROOT z = f32[64,33] multiply(x, y)
}
f3 {
  x = f32[64,33] parameter(0)
  ROOT z = f32[64,33] add(x, x)
}
ENTRY e {
  p = f32[64,33] parameter(0)
  u = f32[64,33] fusion(p), kind=kLoop, calls=f1
  v = f32[64,33] fusion(u), kind=kLoop, calls=f2
  w = f32[64,33] fusion(v), kind=kLoop, calls=f3
  ROOT t = (f32[64,33], f32[64,33], f32[64,33]) tuple(u, v, w)
}
)");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args;
  Literal p = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {64, 33}));
  for (int64_t i = 0; i < p.element_count(); ++i) p.mutable_data_as<float>()[i] = 0.5f * i;
  args.push_back(std::move(p));
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().kernels, 3) << (*exe)->Summary();
  EXPECT_EQ((*exe)->stats().shared_kernels, 1) << (*exe)->Summary();
  EXPECT_NE((*exe)->Summary().find("3 kernels (2 distinct)"), std::string::npos)
      << (*exe)->Summary();
  auto want = EvaluateModule(*m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*want == *got);
}

}  // namespace
}  // namespace hlowb
