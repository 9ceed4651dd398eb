// The cpu platform's fft library call (cpu_fft.h): every fft_type in c64 and c128 over 1-D, 2-D
// and 3-D transforms with batch dimensions and power-of-two, odd, prime (the chirp-z path
// included) and unit lengths agrees with the interpreter on seeded random data within the cpu
// tolerance table (f32's per component for c64, f64's for c128); known transforms come out
// right; empty shapes run; forms it cannot take are declined; a compiled module runs the fft as a
// library call. A last test prints the time against the interpreter's.
#include "replay/backends/cpu/cpu_fft.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb {
namespace {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

// Splits [0, n) into parts of `grain` run on up to 4 threads, so that the call's per-thread
// state is exercised as the cpu platform's pool exercises it.
void ThreadedFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  const int64_t parts = std::min<int64_t>(4, std::max<int64_t>(1, n / std::max<int64_t>(grain, 1)));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < parts; ++p) {
    const int64_t b = n * p / parts, e = n * (p + 1) / parts;
    threads.emplace_back([&body, b, e] { body(b, e); });
  }
  for (std::thread& t : threads) t.join();
}

void SerialFor(int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& body) {
  if (n > 0) body(0, n);
}

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

// One fft instruction as a module: "HloModule m / ENTRY { p = <in> parameter(0); ROOT f = <out>
// fft(p), ... }".
struct FftModule {
  std::unique_ptr<Module> module;
  const Instruction* fft = nullptr;
};

FftModule ParseFft(const std::string& in, const std::string& out, const std::string& type,
                   const std::vector<int64_t>& lengths) {
  std::string fl;
  for (size_t i = 0; i < lengths.size(); ++i) fl += (i ? "," : "") + std::to_string(lengths[i]);
  const std::string text = "HloModule m\nENTRY e {\n  p = " + in +
                           " parameter(0)\n  ROOT f = " + out + " fft(p), fft_type=" + type +
                           ", fft_length={" + fl + "}\n}\n";
  FftModule m;
  auto parsed = ParseModule(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  if (!parsed.ok()) return m;
  m.module = std::move(*parsed);
  m.fft = m.module->entry()->root();
  return m;
}

// Uniform [-1, 1) values in every component, from a fixed seed.
Literal Random(PrimitiveType type, const std::vector<int64_t>& dims, uint64_t seed) {
  Literal l(Shape::Array(type, dims));
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t n = l.component_count();
  for (int64_t i = 0; i < n; ++i) {
    if (type == PrimitiveType::kF32 || type == PrimitiveType::kC64) {
      l.mutable_data_as<float>()[i] = static_cast<float>(u(engine));
    } else {
      l.mutable_data_as<double>()[i] = u(engine);
    }
  }
  return l;
}

double Component(const Literal& l, int64_t i) {
  const PrimitiveType t = l.shape().element_type();
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kC64) return l.data_as<float>()[i];
  return l.data_as<double>()[i];
}

// How far `got` is from `want`, component by component: the largest absolute difference, and
// the largest difference as a fraction of the cpu tolerance of the component type.
struct Error {
  double max_abs = 0;
  double worst_fraction = 0;
  std::string worst;
};

Error Compare(const Literal& want, const Literal& got) {
  Error e;
  if (want.shape().element_type() != got.shape().element_type() ||
      want.shape().dimensions() != got.shape().dimensions()) {
    e.worst_fraction = INFINITY;
    e.worst = "shapes differ";
    return e;
  }
  const PrimitiveType t = want.shape().element_type();
  const CpuTolerance tol =
      CpuToleranceFor(t == PrimitiveType::kF32 || t == PrimitiveType::kC64 ? PrimitiveType::kF32
                                                                           : PrimitiveType::kF64);
  for (int64_t i = 0; i < want.component_count(); ++i) {
    const double a = Component(want, i), b = Component(got, i);
    const double d = std::isnan(a) && std::isnan(b) ? 0 : std::fabs(a - b);
    const double f = std::isnan(d) ? INFINITY : d / (tol.absolute + tol.relative * std::fabs(a));
    e.max_abs = std::max(e.max_abs, d);
    if (f > e.worst_fraction) {
      e.worst_fraction = f;
      e.worst = "component " + std::to_string(i) + " is " + std::to_string(b) +
                ", the interpreter says " + std::to_string(a);
    }
  }
  return e;
}

absl::StatusOr<Literal> Interpret(const FftModule& m, const Literal& arg) {
  std::vector<Literal> args;
  args.push_back(arg);
  return EvaluateModule(*m.module, args);
}

Literal Library(const FftModule& m, const Literal& arg,
                const cpu::ParallelFor& parallel_for = ThreadedFor) {
  EXPECT_TRUE(cpu::LibraryFftTakes(*m.fft));
  std::optional<absl::StatusOr<Literal>> r = cpu::LibraryFft(*m.fft, arg, parallel_for);
  EXPECT_TRUE(r.has_value());
  if (!r.has_value()) return Literal();
  EXPECT_TRUE(r->ok()) << r->status();
  return r->ok() ? std::move(**r) : Literal();
}

struct Form {
  std::vector<int64_t> batch;
  std::vector<int64_t> lengths;
};

const char* const kTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};

// The operand and result dimensions of `type` over `f`.
void FormDims(const std::string& type, const Form& f, std::vector<int64_t>* in,
              std::vector<int64_t>* out) {
  *in = f.batch;
  in->insert(in->end(), f.lengths.begin(), f.lengths.end());
  *out = *in;
  const int64_t half = f.lengths.back() / 2 + 1;
  if (type == "RFFT") out->back() = half;
  if (type == "IRFFT") in->back() = half;
}

// Runs every fft_type over `forms` in both precisions against the interpreter and returns the
// largest errors seen, per precision.
void AgreeWithInterpreter(const std::vector<Form>& forms, Error* single, Error* dbl) {
  uint64_t seed = 1;
  for (const bool wide : {false, true}) {
    const PrimitiveType c = wide ? PrimitiveType::kC128 : PrimitiveType::kC64;
    const PrimitiveType r = wide ? PrimitiveType::kF64 : PrimitiveType::kF32;
    const std::string cn = wide ? "c128" : "c64", rn = wide ? "f64" : "f32";
    Error* total = wide ? dbl : single;
    for (const char* type : kTypes) {
      const std::string t = type;
      for (const Form& f : forms) {
        std::vector<int64_t> in, out;
        FormDims(t, f, &in, &out);
        const bool real_in = t == "RFFT", real_out = t == "IRFFT";
        const std::string in_shape = (real_in ? rn : cn) + Dims(in);
        const std::string out_shape = (real_out ? rn : cn) + Dims(out);
        const std::string label =
            out_shape + " fft(" + in_shape + "), fft_type=" + t + ", fft_length=" + Dims(f.lengths);
        SCOPED_TRACE(label);
        FftModule m = ParseFft(in_shape, out_shape, t, f.lengths);
        ASSERT_NE(m.fft, nullptr);
        const Literal arg = Random(real_in ? r : c, in, seed++);
        auto want = Interpret(m, arg);
        ASSERT_TRUE(want.ok()) << want.status();
        const Literal got = Library(m, arg);
        const Error e = Compare(*want, got);
        EXPECT_LE(e.worst_fraction, 1.0) << e.worst;
        total->max_abs = std::max(total->max_abs, e.max_abs);
        if (e.worst_fraction >= total->worst_fraction) {
          total->worst_fraction = e.worst_fraction;
          total->worst = label;
        }
      }
    }
  }
}

TEST(CpuFft, OneDimensionalTransformsAgreeWithTheInterpreter) {
  // Powers of two, 4k+2 and odd lengths (kissfft's two real-input paths), primes on kissfft's
  // generic radix (7, 13) and on the chirp-z path (97, 1009), composites with a generic radix
  // (49, 176) or a chirp (2 x 97), and length 1 with and without batch dimensions.
  const std::vector<Form> forms = {
      {{}, {8}},   {{3}, {64}}, {{2}, {6}},    {{2}, {10}},    {{4}, {7}},    {{3}, {13}},
      {{2}, {15}}, {{2}, {49}}, {{2}, {176}},  {{4}, {97}},    {{2}, {194}},  {{1}, {1009}},
      {{}, {1}},   {{5}, {1}},  {{2, 3}, {2}}, {{2, 2}, {12}}, {{1}, {1000}},
  };
  Error single, dbl;
  AgreeWithInterpreter(forms, &single, &dbl);
  std::printf(
      "1-D: c64 max abs error %.3g (%.3g of the tolerance, %s)\n"
      "     c128 max abs error %.3g (%.3g of the tolerance, %s)\n",
      single.max_abs, single.worst_fraction, single.worst.c_str(), dbl.max_abs, dbl.worst_fraction,
      dbl.worst.c_str());
}

TEST(CpuFft, MultiDimensionalTransformsAgreeWithTheInterpreter) {
  const std::vector<Form> forms = {
      {{}, {16, 16}},   {{2}, {6, 10}},  {{}, {7, 13}},    {{1}, {1, 5}},
      {{}, {5, 1}},     {{3}, {4, 97}},  {{}, {97, 4}},    {{}, {4, 6, 8}},
      {{2}, {3, 5, 7}}, {{}, {2, 1, 9}}, {{2}, {9, 4, 2}}, {{}, {32, 64}},
  };
  Error single, dbl;
  AgreeWithInterpreter(forms, &single, &dbl);
  std::printf(
      "2-D/3-D: c64 max abs error %.3g (%.3g of the tolerance, %s)\n"
      "         c128 max abs error %.3g (%.3g of the tolerance, %s)\n",
      single.max_abs, single.worst_fraction, single.worst.c_str(), dbl.max_abs, dbl.worst_fraction,
      dbl.worst.c_str());
}

TEST(CpuFft, LargePrimeLengthAgreesWithTheInterpreter) {
  FftModule m = ParseFft("c128[4099]", "c128[4099]", "FFT", {4099});
  ASSERT_NE(m.fft, nullptr);
  const Literal arg = Random(PrimitiveType::kC128, {4099}, 99);
  auto want = Interpret(m, arg);
  ASSERT_TRUE(want.ok()) << want.status();
  const Error e = Compare(*want, Library(m, arg));
  EXPECT_LE(e.worst_fraction, 1.0) << e.worst;
  std::printf("c128[4099] FFT: max abs error %.3g\n", e.max_abs);
}

TEST(CpuFft, DeltaTransformsToAPhaseRamp) {
  // The FFT of a unit impulse at position s is exp(-2 pi i k s / n); at s = 0 all ones.
  for (int64_t n : {1, 2, 7, 16, 97, 1009}) {
    for (int64_t s : {int64_t{0}, n / 3}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " s=" + std::to_string(s));
      FftModule m = ParseFft("c128[" + std::to_string(n) + "]", "c128[" + std::to_string(n) + "]",
                             "FFT", {n});
      ASSERT_NE(m.fft, nullptr);
      Literal delta(Shape::Array(PrimitiveType::kC128, {n}));
      delta.mutable_data_as<c128>()[s] = 1;
      const Literal got = Library(m, delta);
      for (int64_t k = 0; k < n; ++k) {
        const double angle = -2 * std::numbers::pi * static_cast<double>((k * s) % n) / n;
        EXPECT_NEAR(got.data_as<c128>()[k].real(), std::cos(angle), 1e-12) << k;
        EXPECT_NEAR(got.data_as<c128>()[k].imag(), std::sin(angle), 1e-12) << k;
      }
    }
  }
  // 2-D in c64: the delta at the origin of a 5 x 6 plane gives ones everywhere.
  FftModule m = ParseFft("c64[2,5,6]", "c64[2,5,6]", "FFT", {5, 6});
  ASSERT_NE(m.fft, nullptr);
  Literal delta(Shape::Array(PrimitiveType::kC64, {2, 5, 6}));
  delta.mutable_data_as<c64>()[0] = 1;
  delta.mutable_data_as<c64>()[30] = 1;
  const Literal got = Library(m, delta);
  for (int64_t i = 0; i < 60; ++i) EXPECT_EQ(got.data_as<c64>()[i], c64(1, 0)) << i;
}

TEST(CpuFft, InverseTransformsGiveTheInputBack) {
  for (const std::vector<int64_t>& dims : std::vector<std::vector<int64_t>>{
           {3, 97}, {2, 1000}, {4099}, {6, 10}, {3, 5, 7}, {1}, {2, 2018}}) {
    const std::vector<int64_t> lengths(dims.end() - std::min<size_t>(dims.size(), 2), dims.end());
    SCOPED_TRACE(Dims(dims) + " over " + Dims(lengths));
    for (const bool wide : {false, true}) {
      const std::string c = (wide ? "c128" : "c64") + Dims(dims);
      FftModule fwd = ParseFft(c, c, "FFT", lengths), inv = ParseFft(c, c, "IFFT", lengths);
      ASSERT_NE(fwd.fft, nullptr);
      ASSERT_NE(inv.fft, nullptr);
      const Literal x = Random(wide ? PrimitiveType::kC128 : PrimitiveType::kC64, dims, 5);
      const Literal back = Library(inv, Library(fwd, x));
      double worst = 0;
      for (int64_t i = 0; i < x.component_count(); ++i) {
        worst = std::max(worst, std::fabs(Component(back, i) - Component(x, i)));
      }
      EXPECT_LE(worst, wide ? 1e-12 : 2e-6);
    }
    // Real data through RFFT and IRFFT.
    const std::string r = "f64" + Dims(dims);
    std::vector<int64_t> half = dims;
    half.back() = dims.back() / 2 + 1;
    FftModule rfft = ParseFft(r, "c128" + Dims(half), "RFFT", lengths);
    FftModule irfft = ParseFft("c128" + Dims(half), r, "IRFFT", lengths);
    ASSERT_NE(rfft.fft, nullptr);
    ASSERT_NE(irfft.fft, nullptr);
    const Literal x = Random(PrimitiveType::kF64, dims, 6);
    const Literal back = Library(irfft, Library(rfft, x));
    for (int64_t i = 0; i < x.element_count(); ++i) {
      ASSERT_NEAR(back.data_as<double>()[i], x.data_as<double>()[i], 1e-12) << i;
    }
  }
}

TEST(CpuFft, IrfftIgnoresTheImaginaryPartsOfTheZeroAndHalfBinsLikeTheInterpreter) {
  // Half spectra whose zero-frequency and (even n) n/2 bins carry imaginary parts: the result is
  // that of the same spectra with those parts zero, and the interpreter's. In 2-D the parts the
  // last dimension drops are those left after the first dimension's inverse transform, so the
  // first dimension's bins keep theirs.
  for (const Form& f : std::vector<Form>{{{3}, {8}},
                                         {{3}, {10}},
                                         {{3}, {9}},
                                         {{2}, {97}},
                                         {{}, {4, 8}},
                                         {{}, {5, 7}},
                                         {{2}, {1}}}) {
    for (const bool wide : {false, true}) {
      const std::string c = wide ? "c128" : "c64", r = wide ? "f64" : "f32";
      std::vector<int64_t> in, out;
      FormDims("IRFFT", f, &in, &out);
      SCOPED_TRACE(c + Dims(in) + " -> " + r + Dims(out));
      FftModule m = ParseFft(c + Dims(in), r + Dims(out), "IRFFT", f.lengths);
      ASSERT_NE(m.fft, nullptr);
      Literal x = Random(wide ? PrimitiveType::kC128 : PrimitiveType::kC64, in, 11);
      Literal cleaned = x;
      const int64_t n = f.lengths.back(), half = in.back();
      for (int64_t row = 0; row < x.element_count() / half; ++row) {
        for (int64_t bin : {int64_t{0}, n % 2 == 0 ? n / 2 : int64_t{-1}}) {
          if (bin < 0) continue;
          const int64_t at = 2 * (row * half + bin) + 1;  // the imaginary component
          if (wide) {
            x.mutable_data_as<double>()[at] = 3.0 + static_cast<double>(row);
          } else {
            x.mutable_data_as<float>()[at] = 3.0f + static_cast<float>(row);
          }
        }
      }
      auto want = Interpret(m, x);
      ASSERT_TRUE(want.ok()) << want.status();
      const Literal got = Library(m, x);
      const Error e = Compare(*want, got);
      EXPECT_LE(e.worst_fraction, 1.0) << e.worst;
      if (f.lengths.size() == 1) {
        // In 1-D those parts are the input's own, and nothing of them reaches the output.
        for (int64_t row = 0; row < x.element_count() / half; ++row) {
          for (int64_t bin : {int64_t{0}, n % 2 == 0 ? n / 2 : int64_t{-1}}) {
            if (bin < 0) continue;
            const int64_t at = 2 * (row * half + bin) + 1;
            if (wide) {
              cleaned.mutable_data_as<double>()[at] = 0;
            } else {
              cleaned.mutable_data_as<float>()[at] = 0;
            }
          }
        }
        const Error same = Compare(Library(m, cleaned), got);
        EXPECT_LE(same.max_abs, wide ? 1e-14 : 1e-6);
      }
    }
  }
}

TEST(CpuFft, EmptyShapesRunAndMatchTheInterpreter) {
  struct Case {
    const char* in;
    const char* out;
    const char* type;
    std::vector<int64_t> lengths;
  };
  const Case cases[] = {
      {"c64[0,8]", "c64[0,8]", "FFT", {8}},          {"c128[3,0]", "c128[3,0]", "IFFT", {0}},
      {"c64[0,4,6]", "c64[0,4,6]", "FFT", {4, 6}},   {"f32[3,0]", "c64[3,1]", "RFFT", {0}},
      {"f64[2,4,0]", "c128[2,4,1]", "RFFT", {4, 0}}, {"f32[0,8]", "c64[0,5]", "RFFT", {8}},
      {"c64[2,1]", "f32[2,0]", "IRFFT", {0}},        {"c128[0,5]", "f64[0,8]", "IRFFT", {8}},
      {"c64[4,0,3]", "f32[4,0,4]", "IRFFT", {0, 4}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.in) + " " + c.type);
    FftModule m = ParseFft(c.in, c.out, c.type, c.lengths);
    ASSERT_NE(m.fft, nullptr);
    const Literal arg = Random(m.fft->operand(0)->shape().element_type(),
                               m.fft->operand(0)->shape().dimensions(), 3);
    auto want = Interpret(m, arg);
    ASSERT_TRUE(want.ok()) << want.status();
    const Literal got = Library(m, arg);
    EXPECT_TRUE(*want == got);
  }
}

TEST(CpuFft, DeclinesWhatItCannotTake) {
  struct Case {
    const char* in;
    const char* out;
    const char* type;
    std::vector<int64_t> lengths;
  };
  const Case cases[] = {
      {"c64[2,2,2,2]", "c64[2,2,2,2]", "FFT", {2, 2, 2, 2}},  // four dimensions
      {"c64[8]", "c128[8]", "FFT", {8}},                      // mixed precision
      {"f32[8]", "c128[5]", "RFFT", {8}},
      {"c64[8]", "c64[8]", "FFT", {4}},  // lengths unlike the shape
      {"f32[8]", "c64[4]", "RFFT", {8}},
      {"c64[4]", "f32[8]", "IRFFT", {8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.in) + " -> " + c.out);
    FftModule m = ParseFft(c.in, c.out, c.type, c.lengths);
    ASSERT_NE(m.fft, nullptr);
    EXPECT_FALSE(cpu::LibraryFftTakes(*m.fft));
    const Literal arg = Random(m.fft->operand(0)->shape().element_type(),
                               m.fft->operand(0)->shape().dimensions(), 3);
    EXPECT_FALSE(cpu::LibraryFft(*m.fft, arg, SerialFor).has_value());
  }
}

TEST(CpuFft, CompiledModulesRunFftAsALibraryCall) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  x = f32[4,96] parameter(0)
  y = c64[3,32,20] parameter(1)
  r = c64[4,49] fft(x), fft_type=RFFT, fft_length={96}
  b = f32[4,96] fft(r), fft_type=IRFFT, fft_length={96}
  d = f32[4,96] subtract(b, x)
  s = c64[3,32,20] fft(y), fft_type=FFT, fft_length={32,20}
  ROOT t = (f32[4,96], c64[3,32,20], c64[4,49]) tuple(d, s, r)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Random(PrimitiveType::kF32, {4, 96}, 21));
  args.push_back(Random(PrimitiveType::kC64, {3, 32, 20}, 22));
  auto exe = CpuExecutable::Compile(**m, CpuCompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status();
  const CpuCompileStats& stats = (*exe)->stats();
  EXPECT_EQ(stats.library_calls, 3) << (*exe)->Summary();
  EXPECT_EQ(stats.interpreted_by_opcode.count("fft"), 0u) << (*exe)->Summary();
  EXPECT_EQ((*exe)->Summary().find("fft"), std::string::npos) << (*exe)->Summary();
  for (const auto& [name, reason] : (*exe)->not_compiled()) {
    EXPECT_TRUE(name != "r" && name != "b" && name != "s") << name << ": " << reason;
  }
  // The run-time hook answers for every fft itself rather than leaving it to the interpreter.
  auto hook = (*exe)->Hook(nullptr);
  int answered = 0;
  for (const Instruction* h : (*exe)->module().entry()->instructions()) {
    if (h->opcode() != Opcode::kFft) continue;
    const Literal operand(h->operand(0)->shape());
    std::optional<absl::StatusOr<Literal>> r = hook(*h, {&operand});
    ASSERT_TRUE(r.has_value()) << h->name();
    ASSERT_TRUE(r->ok()) << r->status();
    ++answered;
  }
  EXPECT_EQ(answered, 3);
  auto want = EvaluateModule(**m, args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->tuple_elements().size(), 3u);
  EXPECT_EQ(testing::Disagreement(want->tuple_elements()[0], got->tuple_elements()[0], "d"), "");
  for (size_t i = 1; i < 3; ++i) {
    const Error e = Compare(want->tuple_elements()[i], got->tuple_elements()[i]);
    EXPECT_LE(e.worst_fraction, 1.0) << i << ": " << e.worst;
  }
  // RFFT then IRFFT gives the input back.
  for (int64_t i = 0; i < 4 * 96; ++i) {
    EXPECT_NEAR(got->tuple_elements()[0].data_as<float>()[i], 0.0f, 1e-6f) << i;
  }
}

double SecondsOf(const std::function<void()>& f, int repeats) {
  double best = INFINITY;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

TEST(CpuFft, TimeAgainstTheInterpreter) {
  struct Case {
    const char* in;
    const char* out;
    const char* type;
    std::vector<int64_t> lengths;
  };
  const Case cases[] = {
      {"c64[64,1024]", "c64[64,1024]", "FFT", {1024}},
      {"c64[256,256]", "c64[256,256]", "FFT", {256, 256}},
      {"f32[64,1024]", "c64[64,513]", "RFFT", {1024}},
      {"c64[16,1000]", "c64[16,1000]", "FFT", {1000}},
      {"c64[16,1009]", "c64[16,1009]", "FFT", {1009}},
  };
  for (const Case& c : cases) {
    FftModule m = ParseFft(c.in, c.out, c.type, c.lengths);
    ASSERT_NE(m.fft, nullptr);
    const Shape& shape = m.fft->operand(0)->shape();
    const Literal arg = Random(shape.element_type(), shape.dimensions(), 8);
    std::vector<Literal> args;
    args.push_back(arg);
    auto exe = CpuExecutable::Compile(*m.module, CpuCompileOptions());
    ASSERT_TRUE(exe.ok()) << exe.status();
    // The best of three runs, except where one run already takes long.
    const auto interpret = [&] { ASSERT_TRUE(EvaluateModule(*m.module, args).ok()); };
    double interpreter = SecondsOf(interpret, 1);
    if (interpreter < 0.2) interpreter = std::min(interpreter, SecondsOf(interpret, 2));
    const double one_thread = SecondsOf([&] { Library(m, arg, SerialFor); }, 5);
    const double platform = SecondsOf([&] { ASSERT_TRUE((*exe)->Run(args, {}).ok()); }, 5);
    std::printf(
        "%-13s %-5s fft_length=%-10s interpreter %8.2f ms, library 1 thread %7.3f ms "
        "(x%.0f), cpu platform %7.3f ms (x%.0f)\n",
        c.in, c.type, Dims(c.lengths).c_str(), interpreter * 1e3, one_thread * 1e3,
        interpreter / one_thread, platform * 1e3, interpreter / platform);
  }
}

}  // namespace
}  // namespace hlowb
