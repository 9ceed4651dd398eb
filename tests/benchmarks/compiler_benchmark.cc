// The embedded compiler's HLO pipeline against real XLA, and its speed.
//
// hlowb_compiler_benchmark [XLA_DUMP_DIR]
//
// 1. For every module of XLA_DUMP_DIR (a real XLA CPU dump made by tests/benchmarks/
//    jax_programs.py with the pinned jax) that has both `before_optimizations.txt` and
//    `cpu_after_optimizations.txt`: our `cpu` pipeline compiles XLA's input, and the table
//    gives kernels (fusions plus unfused non-trivial instructions, counted the same way on both
//    modules) and total allocation bytes (our buffer assignment against the sizes in XLA's
//    `-buffer-assignment.txt`), each as our / XLA's. Goal: both <= 1.1x.
// 2. The full `cpu` pipeline (passes, scheduling, buffer assignment) on the corpus's
//    8,170-instruction attention_model, best of 3, beside the time to parse the same module in
//    the same run (the baseline). Goal: <= 1 s.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "core/analysis/memory_report.h"
#include "core/passes/instruction_fusion.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "replay/evaluator/constant_evaluator.h"

namespace fs = std::filesystem;
using namespace hlowb;

namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The total of the allocations in XLA's -buffer-assignment.txt at `path`, read with the
// texts beside it (0 when it does not read).
int64_t XlaAllocationBytes(const std::string& path) {
  absl::StatusOr<MemoryProfile> profile = ReadXlaMemoryProfileFiles(path);
  return profile.ok() ? profile->total_bytes : 0;
}

std::unique_ptr<Module> ParseFile(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFileToString(path, int64_t{1} << 30);
  if (!text.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(*text);
  if (!m.ok()) {
    std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(m.status().message()).c_str());
    return nullptr;
  }
  return *std::move(m);
}

void CompareWithXla(const std::string& dir) {
  // module prefix -> files
  std::map<std::string, std::map<std::string, std::string>> modules;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    for (const char* stage : {".before_optimizations.txt", ".cpu_after_optimizations.txt",
                              ".cpu_after_optimizations-buffer-assignment.txt"}) {
      if (name.size() > std::strlen(stage) &&
          name.compare(name.size() - std::strlen(stage), std::string::npos, stage) == 0) {
        modules[name.substr(0, name.size() - std::strlen(stage))][stage] = e.path().string();
      }
    }
  }
  std::printf("%-44s %8s %8s %7s %12s %12s %7s\n", "module (real XLA CPU dump)", "kernels",
              "xla", "ratio", "alloc bytes", "xla", "ratio");
  double worst_kernels = 0, worst_bytes = 0;
  int n = 0;
  for (const auto& [prefix, files] : modules) {
    if (files.size() != 3) continue;
    std::unique_ptr<Module> before = ParseFile(files.at(".before_optimizations.txt"));
    std::unique_ptr<Module> after = ParseFile(files.at(".cpu_after_optimizations.txt"));
    if (!before || !after) continue;
    CompileOptions options;
    options.platform = "cpu";
    options.evaluator = InterpreterConstantEvaluator();
    absl::StatusOr<CompileResult> r = CompileModule(before.get(), options);
    if (!r.ok()) {
      std::printf("%-44s compile failed: %s\n", prefix.c_str(),
                  std::string(r.status().message()).c_str());
      continue;
    }
    int64_t xla_kernels = CountKernels(*after);
    int64_t xla_bytes = XlaAllocationBytes(files.at(".cpu_after_optimizations-buffer-assignment.txt"));
    double kr = xla_kernels ? double(r->kernel_count) / xla_kernels : 0;
    double br = xla_bytes ? double(r->total_allocation_bytes) / xla_bytes : 0;
    worst_kernels = std::max(worst_kernels, kr);
    worst_bytes = std::max(worst_bytes, br);
    ++n;
    std::printf("%-44s %8lld %8lld %6.2fx %12lld %12lld %6.2fx\n", prefix.c_str(),
                static_cast<long long>(r->kernel_count), static_cast<long long>(xla_kernels),
                kr, static_cast<long long>(r->total_allocation_bytes),
                static_cast<long long>(xla_bytes), br);
  }
  std::printf("%d modules; worst kernels ratio %.2fx, worst allocation ratio %.2fx (goal <= 1.10x)\n\n",
              n, worst_kernels, worst_bytes);
}

void PipelineSpeed() {
  std::string path = std::string(HLOWB_CORPUS_DIR) + "/benchmarks/xla__service__attention_model.hlo";
  absl::StatusOr<std::string> text = ReadFileToString(path, int64_t{1} << 30);
  if (!text.ok()) {
    std::printf("pipeline speed: %s is absent, skipped\n", path.c_str());
    return;
  }
  double best_parse = 1e9, best_compile = 1e9, best_passes = 1e9;
  int64_t instructions = 0;
  for (int i = 0; i < 3; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(*text);
    best_parse = std::min(best_parse, Seconds(t0));
    if (!m.ok()) return;
    instructions = 0;
    for (const auto& c : (*m)->computations()) instructions += c->instruction_count();
    CompileOptions options;
    options.platform = "cpu";
    options.evaluator = InterpreterConstantEvaluator();
    options.pass_options.verify_after_each_pass = false;
    t0 = std::chrono::steady_clock::now();
    absl::StatusOr<CompileResult> r = CompileModule(m->get(), options);
    double secs = Seconds(t0);
    if (!r.ok()) {
      std::printf("pipeline speed: compile failed: %s\n", std::string(r.status().message()).c_str());
      return;
    }
    best_compile = std::min(best_compile, secs);
    best_passes = std::min(best_passes, r->pass_seconds);
  }
  std::printf("cpu pipeline on attention_model (%lld instructions): %.3f s in all (%.3f s in "
              "passes), parse %.3f s in the same run = %.1fx the parse; goal <= 1 s\n",
              static_cast<long long>(instructions), best_compile, best_passes, best_parse,
              best_compile / best_parse);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) CompareWithXla(argv[1]);
  PipelineSpeed();
  return 0;
}
