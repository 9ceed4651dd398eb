// Parser and printer throughput on the largest corpus modules, beside a same-run baseline that
// only reads the bytes and counts lines (the floor any text reader pays). Reported counters:
// bytes_per_second (MB/s), instructions/s, and ratio_to_baseline (parser time / baseline time).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

struct Input {
  std::string name;
  std::string text;
  int64_t instructions = 0;
};

const std::vector<Input>& Inputs() {
  static const auto* inputs = [] {
    auto* v = new std::vector<Input>();
    std::vector<std::pair<uintmax_t, fs::path>> files;
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(HLOWB_CORPUS_DIR, ec)) {
      if (e.is_regular_file() && e.path().extension() == ".hlo") {
        files.emplace_back(e.file_size(), e.path());
      }
    }
    std::sort(files.rbegin(), files.rend());
    for (size_t i = 0; i < files.size() && i < 3; ++i) {
      auto text = ReadFileToString(files[i].second.string());
      if (!text.ok()) continue;
      Input in{files[i].second.filename().string(), *text, 0};
      auto m = ParseModule(in.text);
      if (m.ok()) in.instructions = (*m)->instruction_count();
      v->push_back(std::move(in));
    }
    return v;
  }();
  return *inputs;
}

size_t CountLines(const std::string& s) {
  size_t n = 0;
  const char* p = s.data();
  const char* end = p + s.size();
  while ((p = static_cast<const char*>(std::memchr(p, '\n', end - p)))) {
    ++n;
    ++p;
  }
  return n;
}

// Baseline seconds for one read-and-count of input `i`, measured in this process (median of
// 21 runs), so that parser figures can be given as a ratio that means the same on a noisy host.
double BaselineSeconds(size_t i) {
  static std::vector<double> cache(Inputs().size(), -1);
  if (cache[i] >= 0) return cache[i];
  const Input& in = Inputs()[i];
  std::vector<double> runs;
  for (int r = 0; r < 21; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::string copy = in.text;
    size_t lines = CountLines(copy);
    benchmark::DoNotOptimize(lines);
    auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double>(t1 - t0).count());
  }
  std::sort(runs.begin(), runs.end());
  cache[i] = runs[runs.size() / 2];
  return cache[i];
}

void BM_Baseline_ReadAndCountLines(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  for (auto _ : state) {
    std::string copy = in.text;
    benchmark::DoNotOptimize(CountLines(copy));
  }
  state.SetLabel(in.name);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(in.text.size()));
}

void BM_Parse(benchmark::State& state) {
  const size_t index = static_cast<size_t>(state.range(0));
  const Input& in = Inputs()[index];
  double baseline = BaselineSeconds(index);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) {
    auto m = ParseModule(in.text);
    if (!m.ok()) {
      state.SkipWithError(std::string(m.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(m);
  }
  auto t1 = std::chrono::steady_clock::now();
  state.SetLabel(in.name);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(in.text.size()));
  state.counters["instructions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * in.instructions), benchmark::Counter::kIsRate);
  // How many read-and-count-lines passes one parse costs, on this machine, in this run.
  double per_parse = std::chrono::duration<double>(t1 - t0).count() /
                     static_cast<double>(std::max<int64_t>(1, state.iterations()));
  state.counters["x_baseline"] = per_parse / baseline;
  state.counters["baseline_MB/s"] = static_cast<double>(in.text.size()) / baseline / 1e6;
}

void BM_PrintLong(benchmark::State& state) {
  const Input& in = Inputs()[state.range(0)];
  auto m = ParseModule(in.text);
  if (!m.ok()) {
    state.SkipWithError("parse failed");
    return;
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string s = PrintModule(**m);
    bytes = s.size();
    benchmark::DoNotOptimize(s);
  }
  state.SetLabel(in.name);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
  state.counters["instructions/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * in.instructions), benchmark::Counter::kIsRate);
}

void Register() {
  for (size_t i = 0; i < Inputs().size(); ++i) {
    benchmark::RegisterBenchmark("BM_Baseline_ReadAndCountLines", BM_Baseline_ReadAndCountLines)
        ->Arg(static_cast<int64_t>(i))
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark("BM_Parse", BM_Parse)->Arg(static_cast<int64_t>(i))->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark("BM_PrintLong", BM_PrintLong)->Arg(static_cast<int64_t>(i))->Unit(benchmark::kMillisecond);
  }
}

}  // namespace
}  // namespace hlowb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (hlowb::Inputs().empty()) {
    std::fprintf(stderr, "no corpus at %s; nothing to measure\n", HLOWB_CORPUS_DIR);
    return 0;
  }
  hlowb::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
