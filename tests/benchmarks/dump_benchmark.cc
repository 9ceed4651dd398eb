// Dump-directory benchmarks, each beside a same-run baseline:
//   BM_IndexDirectory      indexing 10,000 files   vs  BM_Baseline_ReadDirAndStat (the raw walk)
//   BM_Diff10k             diff of two 10,000-instruction states  vs  BM_Baseline_Parse10k
//   BM_TimelineFingerprint fingerprints of a 200-step module  vs  BM_Baseline_Parse10k
// Goals (issue): index <= 0.3 s, diff <= 0.2 s.
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/analysis/diff.h"
#include "core/analysis/fingerprint.h"
#include "core/dump/dump_index.h"
#include "core/text/parser.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

const fs::path& DumpDir() {
  static const fs::path* dir = [] {
    auto* d = new fs::path(fs::temp_directory_path() / ("hlowb_bench_dump_" + std::to_string(getpid())));
    fs::create_directories(*d);
    // 50 modules x (before + 196 pass steps + after + buffer assignment + ll) = 10,000 files.
    for (int m = 0; m < 50; ++m) {
      char base[64];
      std::snprintf(base, sizeof(base), "module_%04d.jit_step_%d.", m, m);
      auto touch = [&](const std::string& suffix) { std::ofstream(*d / (base + suffix)) << "x"; };
      touch("before_optimizations.txt");
      for (int s = 0; s < 196; ++s) {
        char step[96];
        std::snprintf(step, sizeof(step), "%04d.pipeline_%d.after_pass%d.before_pass%d.txt", s, s / 20,
                      s, s + 1);
        touch(step);
      }
      touch("after_optimizations.txt");
      touch("after_optimizations-buffer-assignment.txt");
      touch("ir-no-opt.ll");
    }
    return d;
  }();
  return *dir;
}

void BM_Baseline_ReadDirAndStat(benchmark::State& state) {
  for (auto _ : state) {
    DIR* d = opendir(DumpDir().c_str());
    int n = 0;
    while (dirent* e = readdir(d)) {
      struct stat s;
      if (fstatat(dirfd(d), e->d_name, &s, AT_SYMLINK_NOFOLLOW) == 0) ++n;
    }
    closedir(d);
    benchmark::DoNotOptimize(n);
  }
}

void BM_IndexDirectory(benchmark::State& state) {
  size_t files = 0;
  for (auto _ : state) {
    auto index = IndexDumpDirectory(DumpDir().string());
    files = index->files.size();
    benchmark::DoNotOptimize(index);
  }
  state.counters["files"] = static_cast<double>(files);
}

// A layered module of n instructions; `variant` renames and perturbs some of them.
std::string MakeModule(int n, bool variant) {
  std::string s = "HloModule big\n\nENTRY main {\n  p0 = f32[16]{0} parameter(0)\n  p1 = f32[16]{0} parameter(1)\n";
  std::vector<std::string> names = {"p0", "p1"};
  for (int i = 0; i < n - 3; ++i) {
    std::string name = (variant && i % 10 == 3) ? "renamed." + std::to_string(i) : "v." + std::to_string(i);
    const std::string& a = names[names.size() - 1];
    const std::string& b = names[names.size() > 7 ? names.size() - 7 : 0];
    const char* op = (variant && i % 97 == 5) ? "subtract" : (i % 3 == 0 ? "add" : i % 3 == 1 ? "multiply" : "maximum");
    s += "  " + name + " = f32[16]{0} " + op + "(" + a + ", " + b + ")\n";
    names.push_back(name);
  }
  s += "  ROOT r = f32[16]{0} negate(" + names.back() + ")\n}\n";
  return s;
}

const std::string& TextA() {
  static const std::string* s = new std::string(MakeModule(10000, false));
  return *s;
}
const std::string& TextB() {
  static const std::string* s = new std::string(MakeModule(10000, true));
  return *s;
}

void BM_Baseline_Parse10k(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(ParseModule(TextB()));
}

void BM_Diff10k(benchmark::State& state) {
  auto a = ParseModule(TextA());
  auto b = ParseModule(TextB());
  int changed = 0;
  for (auto _ : state) {
    ModuleDiff d = DiffModules(**a, **b);
    changed = d.counts.changed + d.counts.added + d.counts.removed;
    benchmark::DoNotOptimize(d);
  }
  state.counters["instructions"] = static_cast<double>((*b)->entry()->instruction_count());
  state.counters["changed_rows"] = changed;
}

void BM_TimelineFingerprint(benchmark::State& state) {
  // 200 states of a 1,000-instruction module, alternating two variants.
  auto a = ParseModule(MakeModule(1000, false));
  auto b = ParseModule(MakeModule(1000, true));
  for (auto _ : state) {
    uint64_t h = 0;
    for (int step = 0; step < 200; ++step) h ^= FingerprintModule(step % 2 ? **b : **a).hash;
    benchmark::DoNotOptimize(h);
  }
  state.counters["states"] = 200;
}

BENCHMARK(BM_Baseline_ReadDirAndStat)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_IndexDirectory)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Baseline_Parse10k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Diff10k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TimelineFingerprint)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hlowb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  std::error_code ec;
  std::filesystem::remove_all(hlowb::DumpDir(), ec);
  return 0;
}
