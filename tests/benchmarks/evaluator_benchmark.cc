// Evaluator throughput against baselines measured in the same run:
//   * f32 elementwise add of 16M elements vs memcpy of the same bytes (goal: within 4x);
//   * bf16 add of 16M elements (computed through f64 in cache-sized blocks) vs memcpy of the
//     same bytes (half the f32 baseline's);
//   * f32 dot 1024x1024x1024 vs cblas_sgemm called directly (goal: >= 80%).
// Each evaluator benchmark reports `vs_baseline`: its time divided by the baseline's
// (add) or the baseline's time divided by its own (dot, i.e. fraction of sgemm speed).
#include <cblas.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/text/parser.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {
namespace {

constexpr int64_t kAddElements = int64_t{16} << 20;
constexpr int kDotN = 1024;

double g_memcpy_seconds = 0;
double g_sgemm_seconds = 0;

Literal Filled(PrimitiveType t, std::vector<int64_t> dims, float v) {
  Literal l(Shape::Array(t, dims));
  float* p = l.mutable_data_as<float>();
  for (int64_t i = 0; i < l.element_count(); ++i) p[i] = v + static_cast<float>(i % 13);
  return l;
}

void BM_MemcpyBaseline(benchmark::State& state) {
  std::vector<float> a(kAddElements, 1.0f), b(kAddElements);
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(b.data(), a.data(), a.size() * sizeof(float));
    benchmark::DoNotOptimize(b.data());
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
  }
  g_memcpy_seconds = total / n;
  state.SetBytesProcessed(state.iterations() * kAddElements * 4);
}

void BM_EvaluatorAddF32(benchmark::State& state) {
  auto m = ParseModule(
      "HloModule m\nENTRY e { a = f32[16777216] parameter(0)  b = f32[16777216] parameter(1)\n"
      "  ROOT r = f32[16777216] add(a, b) }\n");
  std::vector<Literal> args;
  args.push_back(Filled(PrimitiveType::kF32, {kAddElements}, 1));
  args.push_back(Filled(PrimitiveType::kF32, {kAddElements}, 2));
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = EvaluateModule(**m, args);
    benchmark::DoNotOptimize(r);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
  }
  state.counters["vs_memcpy_x"] = g_memcpy_seconds > 0 ? (total / n) / g_memcpy_seconds : 0;
  state.SetBytesProcessed(state.iterations() * kAddElements * 4);
}

void BM_EvaluatorAddBF16(benchmark::State& state) {
  auto m = ParseModule(
      "HloModule m\nENTRY e { a = bf16[16777216] parameter(0)  b = bf16[16777216] parameter(1)\n"
      "  ROOT r = bf16[16777216] add(a, b) }\n");
  std::vector<Literal> args;
  for (uint16_t base : {uint16_t{0x3F80}, uint16_t{0x4000}}) {  // 1.0 and 2.0, then upwards
    Literal l(Shape::Array(PrimitiveType::kBF16, {kAddElements}));
    uint16_t* p = l.mutable_data_as<uint16_t>();
    for (int64_t i = 0; i < kAddElements; ++i) p[i] = static_cast<uint16_t>(base + i % 13);
    args.push_back(std::move(l));
  }
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = EvaluateModule(**m, args);
    benchmark::DoNotOptimize(r);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
  }
  // memcpy of the same bytes: half of the f32 baseline's.
  state.counters["vs_memcpy_x"] = g_memcpy_seconds > 0 ? (total / n) / (g_memcpy_seconds / 2) : 0;
  state.SetBytesProcessed(state.iterations() * kAddElements * 2);
}

void BM_SgemmBaseline(benchmark::State& state) {
  std::vector<float> a(kDotN * kDotN, 1.0f), b(kDotN * kDotN, 0.5f), c(kDotN * kDotN);
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kDotN, kDotN, kDotN, 1.0f, a.data(),
                kDotN, b.data(), kDotN, 0.0f, c.data(), kDotN);
    benchmark::DoNotOptimize(c.data());
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
  }
  g_sgemm_seconds = total / n;
  state.counters["GFLOPs"] = 2.0 * kDotN * kDotN * kDotN / g_sgemm_seconds * 1e-9;
}

void BM_EvaluatorDotF32(benchmark::State& state) {
  auto m = ParseModule(
      "HloModule m\nENTRY e { a = f32[1024,1024] parameter(0)  b = f32[1024,1024] parameter(1)\n"
      "  ROOT r = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0} }\n");
  std::vector<Literal> args;
  args.push_back(Filled(PrimitiveType::kF32, {kDotN, kDotN}, 1));
  args.push_back(Filled(PrimitiveType::kF32, {kDotN, kDotN}, 0.5));
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = EvaluateModule(**m, args);
    benchmark::DoNotOptimize(r);
    total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ++n;
  }
  double secs = total / n;
  state.counters["GFLOPs"] = 2.0 * kDotN * kDotN * kDotN / secs * 1e-9;
  state.counters["fraction_of_sgemm"] = g_sgemm_seconds > 0 ? g_sgemm_seconds / secs : 0;
}

BENCHMARK(BM_MemcpyBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluatorAddF32)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluatorAddBF16)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SgemmBaseline)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluatorDotF32)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hlowb

BENCHMARK_MAIN();
