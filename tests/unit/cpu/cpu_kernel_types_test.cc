// Complex (c64, c128) and sub-byte integer (s1/s2/s4, u1/u2/u4) element types in the cpu
// platform's kernels: every module here must compile with nothing left to the interpreter, and
// its results must agree with the interpreter's (integers and pred bit for bit, complex values
// part by part within the component type's tolerance, and bit for bit where both sides run the
// same code). Inputs sweep the edge cases: infinities, NaNs, signed zeros, overflow and the
// branch cuts for complex values; every value (or every pair of values) of each sub-byte type.
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb {
namespace {

using testing::Disagreement;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

using Pair = std::pair<double, double>;

// Complex values with parts that hit every special case of the formulas: signed zeros, the
// negative real axis from both sides (the branch cut of log, sqrt and power), infinities in
// either part, NaNs, huge parts (overflowing products) and tiny ones (subnormal in f32).
std::vector<Pair> ComplexEdgeValues(bool f64) {
  const double huge = f64 ? 1e300 : 3e38;
  const double tiny = f64 ? 1e-310 : 1e-40;
  return {{0, 0},        {-0.0, 0},     {0, -0.0},     {-0.0, -0.0},  {1, 2},
          {-3, 4},       {0.5, -0.25},  {-1, 0},       {-1, -0.0},    {-2, 1e-30},
          {tiny, -tiny}, {huge, huge},  {-huge, 0.5},  {kInf, 0},     {-kInf, 1},
          {0, kInf},     {1, -kInf},    {kInf, kInf},  {-kInf, -kInf}, {kNan, 0},
          {0, kNan},     {kInf, kNan},  {kNan, -kInf}, {1.5, kNan},   {2, -0.0}};
}

// Plain values spread over a few units, deterministic.
std::vector<Pair> ComplexPlainValues(int n) {
  std::vector<Pair> v;
  for (int i = 0; i < n; ++i) {
    v.push_back({std::sin(1.7 * i) * (1 + i % 5), std::cos(0.9 * i + 0.3) * (1 + i % 3)});
  }
  return v;
}

Literal ComplexLiteral(PrimitiveType t, const std::vector<Pair>& values) {
  Literal l(Shape::Array(t, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == PrimitiveType::kC64) {
      l.mutable_data_as<float>()[2 * i] = static_cast<float>(values[i].first);
      l.mutable_data_as<float>()[2 * i + 1] = static_cast<float>(values[i].second);
    } else {
      l.mutable_data_as<double>()[2 * i] = values[i].first;
      l.mutable_data_as<double>()[2 * i + 1] = values[i].second;
    }
  }
  return l;
}

Literal RealLiteral(PrimitiveType t, const std::vector<double>& values) {
  Literal l(Shape::Array(t, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (t == PrimitiveType::kF32) {
      l.mutable_data_as<float>()[i] = static_cast<float>(values[i]);
    } else {
      l.mutable_data_as<double>()[i] = values[i];
    }
  }
  return l;
}

// Integers of any width (sub-byte ones stored as the literal stores them).
Literal IntLiteral(PrimitiveType t, const std::vector<int64_t>& values) {
  Literal l(Shape::Array(t, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) l.SetBits(i, static_cast<uint64_t>(values[i]));
  return l;
}

// Every value of an integer type of at most 8 bits, lowest first.
std::vector<int64_t> AllValues(PrimitiveType t) {
  const int bits = BitWidth(t);
  const int64_t lo = IsSignedIntegral(t) ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = lo + (int64_t{1} << bits) - 1;
  std::vector<int64_t> v;
  for (int64_t x = lo; x <= hi; ++x) v.push_back(x);
  return v;
}

// Every ordered pair of `values`, as two parallel lists.
template <typename T>
std::pair<std::vector<T>, std::vector<T>> AllPairs(const std::vector<T>& values) {
  std::pair<std::vector<T>, std::vector<T>> out;
  for (const T& a : values) {
    for (const T& b : values) {
      out.first.push_back(a);
      out.second.push_back(b);
    }
  }
  return out;
}

// Bit-for-bit equality of two results, any NaN equal to any NaN: what kernels that compute with
// the interpreter's own formulas (or call its library functions) must give.
std::string BitsDifferExceptNan(const Literal& want, const Literal& got, const std::string& where) {
  if (want.shape().IsTuple()) {
    for (size_t k = 0; k < want.tuple_elements().size(); ++k) {
      std::string d = BitsDifferExceptNan(want.tuple_elements()[k], got.tuple_elements()[k],
                                          where + "{" + std::to_string(k) + "}");
      if (!d.empty()) return d;
    }
    return "";
  }
  const PrimitiveType part = ComplexComponentType(want.shape().element_type());
  for (int64_t i = 0; i < want.component_count(); ++i) {
    const uint64_t a = want.GetBits(i), b = got.GetBits(i);
    if (a == b) continue;
    if (IsFloatingPoint(part)) {
      if (std::isnan(testing::ElementAsDouble(want, i)) &&
          std::isnan(testing::ElementAsDouble(got, i))) {
        continue;
      }
    }
    return where + ": component " + std::to_string(i) + " has bits " + std::to_string(b) +
           ", the interpreter's " + std::to_string(a);
  }
  return "";
}

struct Compiled {
  std::unique_ptr<Module> module;
  std::unique_ptr<CpuExecutable> exe;
};

// Compiles `hlo` as given (or through the cpu pipeline) and checks that every instruction ran
// as a kernel: none on the interpreter, and every fusion whole (not split into one kernel per
// fused instruction after a refusal).
Compiled CompileAllKernels(const std::string& hlo, bool run_passes = false) {
  Compiled c;
  auto m = ParseModule(hlo);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << hlo;
  if (!m.ok()) return c;
  c.module = std::move(*m);
  EXPECT_EQ(CountErrors(VerifyModule(*c.module)), 0) << hlo;
  CpuCompileOptions o;
  o.run_hlo_passes = run_passes;
  auto exe = CpuExecutable::Compile(*c.module, o);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return c;
  c.exe = std::move(*exe);
  std::string reasons;
  for (const auto& [name, why] : c.exe->not_compiled()) reasons += "\n  " + name + ": " + why;
  EXPECT_EQ(c.exe->stats().interpreted, 0) << c.exe->Summary() << reasons;
  EXPECT_GT(c.exe->stats().kernels, 0) << c.exe->Summary();
  for (const Instruction* h : KernelCandidates(c.exe->module())) {
    if (c.exe->IsCompiled(*h)) continue;
    auto ir = CpuKernelIr(c.exe->module(), /*optimized=*/false);
    ADD_FAILURE() << h->name() << " is not a kernel\n"
                  << (ir.ok() ? ir->substr(0, ir->find("\n; ModuleID")) : ir.status().ToString());
  }
  return c;
}

enum class Exactness { kTolerance, kBits };

// Runs `hlo` on the interpreter and as kernels; the results must agree (and be bit-identical up
// to NaN payloads with kBits).
void ExpectAgreement(const std::string& hlo, const std::vector<Literal>& args,
                     Exactness exact = Exactness::kBits, bool run_passes = false) {
  Compiled c = CompileAllKernels(hlo, run_passes);
  ASSERT_NE(c.exe, nullptr);
  auto want = EvaluateModule(*c.module, args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = c.exe->Run(args, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Disagreement(*want, *got, "result"), "") << hlo;
  if (exact == Exactness::kBits) {
    EXPECT_EQ(BitsDifferExceptNan(*want, *got, "result"), "") << hlo;
  }
}

// A module with one parameter per shape and one instruction per line of `body` (each "name =
// ...", using p0, p1, ...); the root is a tuple of those instructions.
std::string TupleModule(const std::vector<std::string>& params,
                        const std::vector<std::pair<std::string, std::string>>& body,
                        const std::string& extra = "") {
  std::string text = "HloModule m\n" + extra + "\nENTRY e {\n";
  for (size_t i = 0; i < params.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + params[i] + " parameter(" + std::to_string(i) +
            ")\n";
  }
  std::string shapes, names;
  for (const auto& [name, rhs] : body) {
    text += "  " + name + " = " + rhs + "\n";
    const std::string shape = rhs.substr(0, rhs.find(' '));
    shapes += (shapes.empty() ? "" : ", ") + shape;
    names += (names.empty() ? "" : ", ") + name;
  }
  text += "  ROOT out = (" + shapes + ") tuple(" + names + ")\n}\n";
  return text;
}

std::string Dims(const std::string& type, int64_t n) {
  return type + "[" + std::to_string(n) + "]";
}

// ---------------------------------------------------------------------------------------------
// Complex element types.

class ComplexKernels : public ::testing::TestWithParam<PrimitiveType> {
 protected:
  PrimitiveType type() const { return GetParam(); }
  bool f64() const { return type() == PrimitiveType::kC128; }
  std::string name() const { return f64() ? "c128" : "c64"; }
  std::string real() const { return f64() ? "f64" : "f32"; }
  std::vector<Pair> Values() const {
    std::vector<Pair> v = ComplexEdgeValues(f64());
    for (const Pair& p : ComplexPlainValues(23)) v.push_back(p);
    return v;
  }
};

TEST_P(ComplexKernels, EveryUnaryOpAgreesOnEdgeValues) {
  const std::vector<Pair> values = Values();
  const std::string c = Dims(name(), values.size()), r = Dims(real(), values.size());
  std::vector<std::pair<std::string, std::string>> body;
  for (const char* op :
       {"negate", "copy", "sign", "exponential", "exponential-minus-one", "log", "log-plus-one",
        "logistic", "sqrt", "rsqrt", "sine", "cosine", "tan", "tanh", "sinh", "cosh", "asin",
        "acos", "atan", "asinh", "acosh", "atanh"}) {
    body.push_back({std::string("u_") + op, c + " " + op + "(p0)"});
  }
  for (std::string op : {"abs", "real", "imag"}) body.push_back({"r_" + op, r + " " + op + "(p0)"});
  for (auto& [n, rhs] : body) {
    for (char& ch : n) ch = ch == '-' ? '_' : ch;
  }
  std::vector<Literal> args;
  args.push_back(ComplexLiteral(type(), values));
  ExpectAgreement(TupleModule({c}, body), args);
}

TEST_P(ComplexKernels, EveryBinaryOpAgreesOnAllPairsOfEdgeValues) {
  auto [lhs, rhs] = AllPairs(ComplexEdgeValues(f64()));
  const std::string c = Dims(name(), lhs.size());
  const std::string p = Dims("pred", lhs.size());
  std::vector<std::pair<std::string, std::string>> body = {
      {"add", c + " add(p0, p1)"},
      {"sub", c + " subtract(p0, p1)"},
      {"mul", c + " multiply(p0, p1)"},
      {"div", c + " divide(p0, p1)"},
      {"pow", c + " power(p0, p1)"},
      {"eq", p + " compare(p0, p1), direction=EQ"},
      {"ne", p + " compare(p0, p1), direction=NE"},
      {"sel", c + " select(eq, p1, p0)"},
  };
  std::vector<Literal> args;
  args.push_back(ComplexLiteral(type(), lhs));
  args.push_back(ComplexLiteral(type(), rhs));
  ExpectAgreement(TupleModule({c, c}, body), args);
}

TEST_P(ComplexKernels, ComplexFromPartsAndConvertsAgree) {
  const std::vector<Pair> values = ComplexEdgeValues(f64());
  const int64_t n = values.size();
  std::vector<double> re, im;
  for (const Pair& v : values) {
    re.push_back(v.first);
    im.push_back(v.second);
  }
  const std::string c = Dims(name(), n), r = Dims(real(), n);
  const std::string other = f64() ? "c64" : "c128";
  std::vector<std::pair<std::string, std::string>> body = {
      {"z", c + " complex(p0, p1)"},
      {"widen", Dims(other, n) + " convert(z)"},
      {"back", c + " convert(widen)"},
      {"from_real", c + " convert(p0)"},
      {"to_real", r + " convert(z)"},
      {"to_s32", Dims("s32", n) + " convert(z)"},
      {"to_u8", Dims("u8", n) + " convert(z)"},
      {"to_s4", Dims("s4", n) + " convert(z)"},
      {"to_pred", Dims("pred", n) + " convert(z)"},
      {"to_f16", Dims("f16", n) + " convert(z)"},
      {"to_bf16", Dims("bf16", n) + " convert(z)"},
      {"from_s32", c + " convert(p2)"},
      {"from_u4", c + " convert(p3)"},
      {"from_pred", c + " convert(p4)"},
      {"from_f16", c + " convert(p5)"},
  };
  std::vector<int64_t> ints, u4s, preds;
  for (int64_t i = 0; i < n; ++i) {
    ints.push_back((i * 7919) % 2001 - 1000);
    u4s.push_back(i % 16);
    preds.push_back(i % 3 == 0);
  }
  std::vector<Literal> args;
  args.push_back(RealLiteral(f64() ? PrimitiveType::kF64 : PrimitiveType::kF32, re));
  args.push_back(RealLiteral(f64() ? PrimitiveType::kF64 : PrimitiveType::kF32, im));
  args.push_back(IntLiteral(PrimitiveType::kS32, ints));
  args.push_back(IntLiteral(PrimitiveType::kU4, u4s));
  args.push_back(IntLiteral(PrimitiveType::kPred, preds));
  Literal halves(Shape::Array(PrimitiveType::kF16, {n}));
  for (int64_t i = 0; i < n; ++i) halves.SetBits(i, (0x3c00 + 37 * i) & 0xffff);
  args.push_back(std::move(halves));
  ExpectAgreement(TupleModule({r, r, Dims("s32", n), Dims("u4", n), Dims("pred", n),
                               Dims("f16", n)},
                              body),
                  args);
}

// One loop fusion mixing inline arithmetic, helper calls, constants (a scalar and an array),
// data movement and a real-valued output.
TEST_P(ComplexKernels, FusedCombinationsAgree) {
  const std::string t = name(), f = real();
  const std::string hlo = R"(HloModule m
fused {
  a = )" + t + R"([4,6] parameter(0)
  b = )" + t + R"([6] parameter(1)
  k = )" + t + R"([] constant((0.5, -2))
  ka = )" + t + R"([6] constant({(1, 0), (0, 1), (-1, 0), (0, -1), (2, 2), (-0.5, 3)})
  bb = )" + t + R"([4,6] broadcast(b), dimensions={1}
  kk = )" + t + R"([4,6] broadcast(k), dimensions={}
  kb = )" + t + R"([4,6] broadcast(ka), dimensions={1}
  m = )" + t + R"([4,6] multiply(a, bb)
  s = )" + t + R"([4,6] add(m, kk)
  e = )" + t + R"([4,6] exponential(s)
  d = )" + t + R"([4,6] divide(e, kb)
  l = )" + t + R"([4,6] log(d)
  tr = )" + t + R"([6,4] transpose(l), dimensions={1,0}
  rv = )" + t + R"([6,4] reverse(tr), dimensions={0}
  rs = )" + t + R"([4,6] reshape(rv)
  n = )" + t + R"([4,6] negate(rs)
  x = )" + t + R"([4,6] subtract(n, a)
  mag = )" + f + R"([4,6] abs(x)
  re = )" + f + R"([4,6] real(x)
  sum = )" + f + R"([4,6] add(mag, re)
  ROOT out = ()" + t + "[4,6], " + f + R"([4,6]) tuple(x, sum)
}
ENTRY e {
  a = )" + t + R"([4,6] parameter(0)
  b = )" + t + R"([6] parameter(1)
  ROOT f = ()" + t + "[4,6], " + f + R"([4,6]) fusion(a, b), kind=kLoop, calls=fused
})";
  std::vector<Pair> av = ComplexPlainValues(24);
  av[3] = {0, 0};
  av[7] = {-1, 0};
  av[11] = {kInf, 1};
  av[13] = {kNan, 2};
  std::vector<Literal> args;
  args.push_back(ComplexLiteral(type(), av));
  args[0] = [&] {
    Literal l(Shape::Array(type(), {4, 6}));
    *l.mutable_data() = args[0].data();
    return l;
  }();
  args.push_back(ComplexLiteral(type(), ComplexPlainValues(6)));
  ExpectAgreement(hlo, args);
}

TEST_P(ComplexKernels, DataMovementAgrees) {
  const std::string t = name();
  const std::string hlo = R"(HloModule m
fused_dus {
  a = )" + t + R"([5,4] parameter(0)
  u = )" + t + R"([2,3] parameter(1)
  j = s4[] parameter(2)
  one = s4[] constant(1)
  k = s4[] add(j, one)
  ROOT d = )" + t + R"([5,4] dynamic-update-slice(a, u, k, j)
}
ENTRY e {
  a = )" + t + R"([5,4] parameter(0)
  b = )" + t + R"([3] parameter(1)
  u = )" + t + R"([2,3] parameter(2)
  i = s32[] parameter(3)
  j = s4[] parameter(4)
  pv = )" + t + R"([] constant((-1.5, 0.25))
  bc = )" + t + R"([2,3] broadcast(b), dimensions={1}
  rs = )" + t + R"([4,5] reshape(a)
  tr = )" + t + R"([4,5] transpose(a), dimensions={1,0}
  sl = )" + t + R"([2,2] slice(a), slice={[1:5:2], [0:4:3]}
  cc = )" + t + R"([5,8] concatenate(a, a), dimensions={1}
  pd = )" + t + R"([12,7] pad(a, pv), padding=2_1_1x1_2
  rv = )" + t + R"([5,4] reverse(a), dimensions={0,1}
  ds = )" + t + R"([2,3] dynamic-slice(a, i, i), dynamic_slice_sizes={2,3}
  du = )" + t + R"([5,4] fusion(a, u, j), kind=kLoop, calls=fused_dus
  cp = )" + t + R"([5,4] copy(a)
  ROOT out = ()" + t + "[2,3], " + t + "[4,5], " + t + "[4,5], " + t + "[2,2], " + t + "[5,8], " +
                          t + "[12,7], " + t + "[5,4], " + t + "[2,3], " + t + "[5,4], " + t +
                          R"([5,4]) tuple(bc, rs, tr, sl, cc, pd, rv, ds, du, cp)
})";
  auto shaped = [&](const std::vector<Pair>& v, std::vector<int64_t> dims) {
    Literal flat = ComplexLiteral(type(), v);
    Literal l(Shape::Array(type(), std::move(dims)));
    *l.mutable_data() = flat.data();
    return l;
  };
  std::vector<Literal> args;
  args.push_back(shaped(ComplexPlainValues(20), {5, 4}));
  args.push_back(shaped(ComplexPlainValues(3), {3}));
  const std::vector<Pair> edges = ComplexEdgeValues(f64());
  args.push_back(shaped(std::vector<Pair>(edges.begin() + 14, edges.begin() + 20), {2, 3}));
  Literal i(Shape::Array(PrimitiveType::kS32, {}));
  i.SetBits(0, 2);
  args.push_back(std::move(i));
  Literal j(Shape::Array(PrimitiveType::kS4, {}));
  j.SetBits(0, static_cast<uint64_t>(-1));  // a negative column start, clamped to 0
  args.push_back(std::move(j));
  ExpectAgreement(hlo, args);
}

// Row and column reductions (the column form accumulates in the output buffer), with add and
// multiply reducers, and a map through a complex computation.
TEST_P(ComplexKernels, ReductionsAndMapAgree) {
  const std::string t = name();
  const std::string hlo = R"(HloModule m
add {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] add(x, y)
}
mul {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] multiply(x, y)
}
fma {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  m = )" + t + R"([] multiply(x, y)
  ROOT s = )" + t + R"([] subtract(m, x)
}
ENTRY e {
  a = )" + t + R"([6,5] parameter(0)
  z = )" + t + R"([] constant((0, 0))
  one = )" + t + R"([] constant((1, 0))
  rows = )" + t + R"([6] reduce(a, z), dimensions={1}, to_apply=add
  cols = )" + t + R"([5] reduce(a, z), dimensions={0}, to_apply=add
  prod = )" + t + R"([6] reduce(a, one), dimensions={1}, to_apply=mul
  colprod = )" + t + R"([5] reduce(a, one), dimensions={0}, to_apply=mul
  all = )" + t + R"([] reduce(a, z), dimensions={0,1}, to_apply=add
  mp = )" + t + R"([6,5] map(a, a), dimensions={0,1}, to_apply=fma
  ROOT out = ()" + t + "[6], " + t + "[5], " + t + "[6], " + t + "[5], " + t + "[], " + t +
                          R"([6,5]) tuple(rows, cols, prod, colprod, all, mp)
})";
  std::vector<Pair> v = ComplexPlainValues(30);
  v[4] = {kInf, 0};   // Annex G recovery inside a product
  v[9] = {0, -0.0};
  Literal flat = ComplexLiteral(type(), v);
  Literal a(Shape::Array(type(), {6, 5}));
  *a.mutable_data() = flat.data();
  std::vector<Literal> args;
  args.push_back(std::move(a));
  ExpectAgreement(hlo, args);
}

// The same kind of module through the cpu pass pipeline, which fuses it: still all kernels.
TEST_P(ComplexKernels, PipelineFusionsCompileCompletely) {
  const std::string t = name(), f = real();
  const std::string hlo = R"(HloModule m
add {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] add(x, y)
}
ENTRY e {
  re = )" + f + R"([64,32] parameter(0)
  im = )" + f + R"([64,32] parameter(1)
  z = )" + t + R"([64,32] complex(re, im)
  sq = )" + t + R"([64,32] multiply(z, z)
  ex = )" + t + R"([64,32] exponential(sq)
  sq2 = )" + t + R"([64,32] sqrt(ex)
  zero = )" + t + R"([] constant((0, 0))
  r = )" + t + R"([64] reduce(sq2, zero), dimensions={1}, to_apply=add
  ROOT m = )" + f + R"([64] abs(r)
})";
  std::vector<double> re, im;
  for (int i = 0; i < 64 * 32; ++i) {
    re.push_back(std::sin(0.37 * i));
    im.push_back(std::cos(0.11 * i) * 1.5);
  }
  const PrimitiveType rt = f64() ? PrimitiveType::kF64 : PrimitiveType::kF32;
  Literal a(Shape::Array(rt, {64, 32})), b(Shape::Array(rt, {64, 32}));
  *a.mutable_data() = RealLiteral(rt, re).data();
  *b.mutable_data() = RealLiteral(rt, im).data();
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  ExpectAgreement(hlo, args, Exactness::kBits, /*run_passes=*/true);
}

INSTANTIATE_TEST_SUITE_P(Types, ComplexKernels,
                         ::testing::Values(PrimitiveType::kC64, PrimitiveType::kC128),
                         [](const auto& info) {
                           return std::string(PrimitiveTypeName(info.param));
                         });

// Complex opcodes with no kernel form are refused with a reason (and still computed, by the
// interpreter), never computed some other way.
TEST(ComplexKernelRefusals, UnsupportedOpcodesRunOnTheInterpreterWithAReason) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  ROOT c = c64[4] cbrt(a)
})";
  auto m = ParseModule(hlo);
  ASSERT_TRUE(m.ok()) << m.status();
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(**m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().kernels, 0);
  ASSERT_EQ((*exe)->not_compiled().size(), 1u);
  EXPECT_NE((*exe)->not_compiled()[0].second.find("on c64"), std::string::npos)
      << (*exe)->not_compiled()[0].second;
}

// ---------------------------------------------------------------------------------------------
// Sub-byte integer types.

class SubByteKernels : public ::testing::TestWithParam<PrimitiveType> {
 protected:
  PrimitiveType type() const { return GetParam(); }
  std::string name() const { return std::string(PrimitiveTypeName(type())); }
};

// Every binary op on every pair of values: wrap-around at both ends, division by zero and by
// -1, shifts by every amount (negative amounts read as huge), comparisons of each kind.
TEST_P(SubByteKernels, EveryBinaryOpAgreesOnAllPairs) {
  auto [lhs, rhs] = AllPairs(AllValues(type()));
  const int64_t n = lhs.size();
  const std::string t = Dims(name(), n), p = Dims("pred", n);
  std::vector<std::pair<std::string, std::string>> body = {
      {"add", t + " add(p0, p1)"},
      {"sub", t + " subtract(p0, p1)"},
      {"mul", t + " multiply(p0, p1)"},
      {"div", t + " divide(p0, p1)"},
      {"rem", t + " remainder(p0, p1)"},
      {"max", t + " maximum(p0, p1)"},
      {"min", t + " minimum(p0, p1)"},
      {"and", t + " and(p0, p1)"},
      {"or", t + " or(p0, p1)"},
      {"xor", t + " xor(p0, p1)"},
      {"shl", t + " shift-left(p0, p1)"},
      {"shrl", t + " shift-right-logical(p0, p1)"},
      {"shra", t + " shift-right-arithmetic(p0, p1)"},
      {"sel", t + " select(lt, p0, p1)"},
  };
  const std::string kind = IsSignedIntegral(type()) ? "SIGNED" : "UNSIGNED";
  for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    body.push_back({std::string("c") + dir, p + " compare(p0, p1), direction=" + dir});
    body.push_back({std::string("c") + dir + "_typed",
                    p + " compare(p0, p1), direction=" + dir + ", type=" + kind});
  }
  body.insert(body.begin(), {"lt", p + " compare(p0, p1), direction=LT"});
  std::vector<Literal> args;
  args.push_back(IntLiteral(type(), lhs));
  args.push_back(IntLiteral(type(), rhs));
  ExpectAgreement(TupleModule({t, t}, body), args);
}

TEST_P(SubByteKernels, EveryUnaryOpAndClampAgree) {
  const std::vector<int64_t> v = AllValues(type());
  const int64_t n = v.size();
  const std::string t = Dims(name(), n);
  const int bits = BitWidth(type());
  const int64_t lo = IsSignedIntegral(type()) ? -(int64_t{1} << (bits - 1)) : 0;
  const int64_t hi = lo + (int64_t{1} << bits) - 1;
  // The clamp bounds stay inside the range: one above the minimum, one below the maximum.
  const std::string lo_text = std::to_string(std::min(lo + 1, hi));
  const std::string hi_text = std::to_string(std::max(hi - 1, lo));
  std::vector<std::pair<std::string, std::string>> body = {
      {"neg", t + " negate(p0)"},
      {"not", t + " not(p0)"},
      {"pop", t + " popcnt(p0)"},
      {"clz", t + " count-leading-zeros(p0)"},
      {"cp", t + " copy(p0)"},
      // abs and sign take signed operands only.
      {"abs", t + (IsSignedIntegral(type()) ? " abs(p0)" : " copy(p0)")},
      {"sign", t + (IsSignedIntegral(type()) ? " sign(p0)" : " not(p0)")},
      {"lo", name() + "[] constant(" + lo_text + ")"},
      {"hi", name() + "[] constant(" + hi_text + ")"},
      {"clamped", t + " clamp(lo, p0, hi)"},
  };
  std::vector<Literal> args;
  args.push_back(IntLiteral(type(), v));
  ExpectAgreement(TupleModule({t}, body), args);
}

TEST_P(SubByteKernels, ConvertsAgreeAtTheEdges) {
  const std::vector<int64_t> v = AllValues(type());
  const int64_t n = v.size();
  const std::string t = Dims(name(), n);
  // Wide integers past both ends of every sub-byte range and of a byte.
  const std::vector<int64_t> wide = {0,  1,   -1,  2,   -2,  3,    -3,   7,     -8,    8,
                                     -9, 15,  16,  17,  127, -128, 128,  -129,  255,   256,
                                     1000, -1000, 65535, -65536, 2147483647, -2147483647 - 1};
  // Floats with fractions, past the byte's range, infinities and NaN.
  const std::vector<double> floats = {0,    -0.0,  0.5,  -0.5,  1.5,    -1.5,  2.99,  -2.99,
                                      7.9,  -8.5,  8.5,  15.5,  16,     100,   -100,  127.9,
                                      128,  -129,  300,  1e10,  -1e10,  kInf,  -kInf, kNan};
  const int64_t nw = wide.size(), nf = floats.size();
  const PrimitiveType other_t =
      IsSignedIntegral(type()) ? (BitWidth(type()) == 4 ? PrimitiveType::kU2 : PrimitiveType::kU4)
                               : (BitWidth(type()) == 4 ? PrimitiveType::kS2 : PrimitiveType::kS4);
  const std::string other(PrimitiveTypeName(other_t));
  const std::string same_width = std::string(IsSignedIntegral(type()) ? "u" : "s") +
                                 std::to_string(BitWidth(type()));
  std::vector<std::pair<std::string, std::string>> body = {
      {"from_s32", Dims(name(), nw) + " convert(p1)"},
      {"from_f32", Dims(name(), nf) + " convert(p2)"},
      {"h", Dims("f16", nf) + " convert(p2)"},
      {"from_f16", Dims(name(), nf) + " convert(h)"},
      {"pr", Dims("pred", nw) + " convert(p1)"},
      {"from_pred", Dims(name(), nw) + " convert(pr)"},
      {"to_s32", Dims("s32", n) + " convert(p0)"},
      {"to_u8", Dims("u8", n) + " convert(p0)"},
      {"to_s8", Dims("s8", n) + " convert(p0)"},
      {"to_f32", Dims("f32", n) + " convert(p0)"},
      {"to_bf16", Dims("bf16", n) + " convert(p0)"},
      {"to_pred", Dims("pred", n) + " convert(p0)"},
      {"to_other", Dims(other, n) + " convert(p0)"},
      {"bitcast", Dims(same_width, n) + " bitcast-convert(p0)"},
      {"bitcast_back", t + " bitcast-convert(bitcast)"},
  };
  std::vector<Literal> args;
  args.push_back(IntLiteral(type(), v));
  args.push_back(IntLiteral(PrimitiveType::kS32, wide));
  args.push_back(RealLiteral(PrimitiveType::kF32, floats));
  ExpectAgreement(TupleModule({t, Dims("s32", nw), Dims("f32", nf)}, body), args);
}

// Fused arithmetic chains, constants, iota past the type's range, row and column reductions
// that wrap, a sub-byte dynamic-slice index, and a map.
TEST_P(SubByteKernels, FusionsReductionsAndIotaAgree) {
  const std::string t = name();
  // s1 holds -1 and 0 only: its "one" is -1.
  const std::string one = type() == PrimitiveType::kS1 ? "-1" : "1";
  const std::string hlo = R"(HloModule m
add {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] add(x, y)
}
mx {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] maximum(x, y)
}
mul {
  x = )" + t + R"([] parameter(0)
  y = )" + t + R"([] parameter(1)
  ROOT s = )" + t + R"([] multiply(x, y)
}
fused {
  a = )" + t + R"([8,6] parameter(0)
  b = )" + t + R"([8,6] parameter(1)
  one = )" + t + R"([] constant()" + one + R"()
  ones = )" + t + R"([8,6] broadcast(one), dimensions={}
  io = )" + t + R"([8,6] iota(), iota_dimension=0
  m = )" + t + R"([8,6] multiply(a, b)
  s = )" + t + R"([8,6] add(m, io)
  sh = )" + t + R"([8,6] shift-right-arithmetic(s, ones)
  x = )" + t + R"([8,6] xor(sh, b)
  w = s32[8,6] convert(x)
  k = s32[] constant(3)
  kk = s32[8,6] broadcast(k), dimensions={}
  ws = s32[8,6] multiply(w, kk)
  back = )" + t + R"([8,6] convert(ws)
  ROOT out = ()" + t + R"([8,6], s32[8,6]) tuple(back, ws)
}
ENTRY e {
  a = )" + t + R"([8,6] parameter(0)
  b = )" + t + R"([8,6] parameter(1)
  j = )" + t + R"([] parameter(2)
  f = ()" + t + R"([8,6], s32[8,6]) fusion(a, b), kind=kLoop, calls=fused
  g = )" + t + R"([8,6] get-tuple-element(f), index=0
  z = )" + t + R"([] constant(0)
  rows = )" + t + R"([8] reduce(a, z), dimensions={1}, to_apply=add
  cols = )" + t + R"([6] reduce(a, z), dimensions={0}, to_apply=add
  colmax = )" + t + R"([6] reduce(b, z), dimensions={0}, to_apply=mx
  one = )" + t + R"([] constant()" + one + R"()
  prod = )" + t + R"([8] reduce(b, one), dimensions={1}, to_apply=mul
  io = )" + t + R"([40] iota(), iota_dimension=0
  ds = )" + t + R"([3,6] dynamic-slice(g, j, z), dynamic_slice_sizes={3,6}
  mp = )" + t + R"([8,6] map(a, b), dimensions={0,1}, to_apply=mul
  gw = s32[8,6] get-tuple-element(f), index=1
  ROOT out = ()" + t + R"([8,6], s32[8,6], )" + t + "[8], " + t + "[6], " + t + "[6], " + t +
                          "[8], " + t + "[40], " + t + "[3,6], " + t + R"([8,6])
      tuple(g, gw, rows, cols, colmax, prod, io, ds, mp)
})";
  const std::vector<int64_t> all = AllValues(type());
  std::vector<int64_t> av, bv;
  for (int i = 0; i < 48; ++i) {
    av.push_back(all[(i * 5 + 1) % all.size()]);
    bv.push_back(all[(i * 3 + all.size() - 1) % all.size()]);
  }
  auto shaped = [&](const std::vector<int64_t>& v, std::vector<int64_t> dims) {
    Literal flat = IntLiteral(type(), v);
    Literal l(Shape::Array(type(), std::move(dims)));
    *l.mutable_data() = flat.data();
    return l;
  };
  std::vector<Literal> args;
  args.push_back(shaped(av, {8, 6}));
  args.push_back(shaped(bv, {8, 6}));
  args.push_back(shaped({all.back()}, {}));
  ExpectAgreement(hlo, args);
}

INSTANTIATE_TEST_SUITE_P(Types, SubByteKernels,
                         ::testing::Values(PrimitiveType::kS1, PrimitiveType::kS2,
                                           PrimitiveType::kS4, PrimitiveType::kU1,
                                           PrimitiveType::kU2, PrimitiveType::kU4),
                         [](const auto& info) {
                           return std::string(PrimitiveTypeName(info.param));
                         });

// mulhi has no sub-byte form in the interpreter, so the kernels refuse it too.
TEST(SubByteKernelRefusals, MulhiIsRefusedWithAReason) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  a = s4[4] parameter(0)
  b = s4[4] parameter(1)
  ROOT c = s4[4] mulhi(a, b)
})");
  ASSERT_TRUE(m.ok()) << m.status();
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(**m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().kernels, 0);
  ASSERT_EQ((*exe)->not_compiled().size(), 1u);
  EXPECT_NE((*exe)->not_compiled()[0].second.find("mulhi on s4"), std::string::npos)
      << (*exe)->not_compiled()[0].second;
}

}  // namespace
}  // namespace hlowb
