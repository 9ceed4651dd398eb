// End-to-end replay of the graphsage and ssd_mobilenet corpus modules against a roofline
// estimate measured in the same run:
//   * sgemm speed: cblas_sgemm 1024x1024x1024 (OpenBLAS, its default threads), FLOP/s;
//   * memory speed: memcpy of 256 MiB, counted as read + write traffic (2 x bytes) per second.
// A module's roofline time is flops / sgemm speed + bytes / memory speed, where flops are
// 2*M*N*K of every dot and convolution, and bytes are the operand and result bytes of every
// entry instruction (fusions counted at their boundary; parameters, constants, tuples,
// get-tuple-element and bitcasts move nothing). Each model benchmark reports `roofline_ms` and
// `x_roofline` (measured time / roofline time; 1 would be perfect).
//
// The modules' arguments and elided constants are seeded fake data generated once, outside the
// timed loop, as `hlowb replay` would generate them; the timed part is EvaluateModule.
#include <cblas.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {
namespace {

double g_flops_per_second = 0;
double g_bytes_per_second = 0;

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best of `reps` timings of `fn`.
template <typename Fn>
double Best(int reps, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, Seconds(t0));
  }
  return best;
}

void MeasureBaselines() {
  constexpr int n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  // One untimed call first: OpenBLAS starts its threads lazily.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
  double sgemm = Best(10, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  });
  g_flops_per_second = 2.0 * n * n * n / sgemm;
  constexpr size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double copy = Best(10, [&] {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  });
  g_bytes_per_second = 2.0 * bytes / copy;
  std::printf("baselines (same run): cblas_sgemm 1024^3 %.1f GFLOP/s; memcpy 256 MiB %.2f GB/s "
              "(read+write)\n",
              g_flops_per_second / 1e9, g_bytes_per_second / 1e9);
}

int64_t Bytes(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) n += Bytes(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  return std::max<int64_t>(s.ElementCount(), 0) * ByteWidth(s.element_type());
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dimension(static_cast<int>(d));
  return p;
}

double Flops(const Instruction& instr) {
  const InstructionAttrs& a = instr.attrs_or_default();
  if (instr.opcode() == Opcode::kDot && a.dot_dimension_numbers) {
    return 2.0 * std::max<int64_t>(instr.shape().ElementCount(), 0) *
           Product(instr.operand(0)->shape(), a.dot_dimension_numbers->lhs_contracting_dimensions);
  }
  if (instr.opcode() == Opcode::kConvolution && a.convolution_dimension_numbers) {
    const ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
    const Shape& kernel = instr.operand(1)->shape();
    return 2.0 * std::max<int64_t>(instr.shape().ElementCount(), 0) *
           Product(kernel, dn.kernel_spatial_dimensions) *
           kernel.dimension(static_cast<int>(dn.kernel_input_feature_dimension));
  }
  double f = 0;
  if (instr.opcode() == Opcode::kFusion || instr.opcode() == Opcode::kCall) {
    for (const Computation* c : instr.called_computations()) {
      for (const Instruction* i : c->instructions()) f += Flops(*i);
    }
  }
  return f;
}

struct Roofline {
  double flops = 0;
  double bytes = 0;
};

Roofline Estimate(const Module& m) {
  Roofline r;
  for (const Instruction* instr : m.entry()->instructions()) {
    r.flops += Flops(*instr);
    switch (instr->opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
      case Opcode::kBitcast:
        continue;
      default:
        break;
    }
    r.bytes += static_cast<double>(Bytes(instr->shape()));
    for (const Instruction* op : instr->operands()) r.bytes += static_cast<double>(Bytes(op->shape()));
  }
  return r;
}

struct Prepared {
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;
  std::map<const Instruction*, Literal> constants;
  Roofline roofline;
};

std::unique_ptr<Prepared> Prepare(const std::string& file, std::string* error) {
  auto text = ReadFileToString(std::string(HLOWB_CORPUS_DIR) + "/benchmarks/" + file);
  if (!text.ok()) {
    *error = std::string(text.status().message());
    return nullptr;
  }
  auto m = ParseModule(*text);
  if (!m.ok()) {
    *error = std::string(m.status().message());
    return nullptr;
  }
  auto p = std::make_unique<Prepared>();
  p->module = std::move(*m);
  FakeDataOptions options;
  auto args = MakeFakeArguments(*p->module, options);
  if (!args.ok()) {
    *error = std::string(args.status().message());
    return nullptr;
  }
  p->arguments = std::move(*args);
  for (const auto& comp : p->module->computations()) {
    for (const Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kConstant && instr->literal() && instr->literal()->elided()) {
        auto l = MakeFakeElidedConstant(*p->module, *instr, options);
        if (!l.ok()) {
          *error = std::string(l.status().message());
          return nullptr;
        }
        p->constants.emplace(instr, std::move(*l));
      }
    }
  }
  p->roofline = Estimate(*p->module);
  return p;
}

void BM_ReplayModel(benchmark::State& state, const char* file) {
  std::string error;
  std::unique_ptr<Prepared> p = Prepare(file, &error);
  if (p == nullptr) {
    state.SkipWithError(("cannot prepare " + std::string(file) + ": " + error).c_str());
    return;
  }
  EvaluatorOptions options;
  const auto* constants = &p->constants;
  options.elided_constant = [constants](const Instruction& i) -> absl::StatusOr<Literal> {
    auto it = constants->find(&i);
    if (it == constants->end()) return absl::NotFoundError(i.name());
    return it->second;
  };
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = EvaluateModule(*p->module, p->arguments, options);
    total += Seconds(t0);
    ++n;
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  double roofline = p->roofline.flops / g_flops_per_second + p->roofline.bytes / g_bytes_per_second;
  state.counters["gflop"] = p->roofline.flops / 1e9;
  state.counters["mbytes"] = p->roofline.bytes / 1e6;
  state.counters["roofline_ms"] = roofline * 1e3;
  state.counters["x_roofline"] = n > 0 ? (total / n) / roofline : 0;
}

void BM_SgemmBaseline(benchmark::State& state) {
  constexpr int n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n / 1e9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

void BM_MemcpyBaseline(benchmark::State& state) {
  constexpr size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes * 2));
}

// Wall time throughout: OpenBLAS (and BLAS inside the evaluator) runs on several threads.
BENCHMARK(BM_SgemmBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MemcpyBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, graphsage, "xla__backends__cpu__benchmarks__hlo__graphsage_tf.hlo")
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, ssd_mobilenet,
                  "xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo")
    ->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hlowb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  hlowb::MeasureBaselines();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
