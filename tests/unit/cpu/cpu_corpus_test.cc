// Agreement over the shared XLA corpus: every module the interpreter runs also runs on the cpu
// platform (the cpu pass pipeline, then LLVM kernels) and agrees with the interpreter: integers
// and pred bit for bit, floats within CpuToleranceFor(type) (cpu_backend.h states the table).
// Inputs are the interpreter corpus test's deterministic pattern. Modules whose interpreter run
// takes longer than a few seconds are left to the benchmark, with a line saying so. Skips, saying
// why, when the corpus folder is absent.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::CorpusFiles;
using testing::Disagreement;
using testing::Pattern;

constexpr double kMaxInterpreterSeconds = 3.0;

TEST(CpuCorpus, EveryModuleTheInterpreterRunsAgreesOnCpu) {
  std::vector<std::string> files = CorpusFiles(HLOWB_CORPUS_DIR);
  if (files.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";

  EvaluatorOptions options;
  options.memory_budget_bytes = uint64_t{2} << 30;
  options.elided_constant = [](const Instruction& instr) -> absl::StatusOr<Literal> {
    return Pattern(instr.shape(), 1);
  };
  CpuCompileOptions cpu;
  cpu.cache_dir = "";  // every module compiles from scratch here
  int agreed = 0, total = 0, slow = 0, in_arena = 0;
  int64_t kernels = 0, interpreted = 0;
  double compile_seconds = 0;
  std::string report;
  for (const std::string& path : files) {
    auto text = ReadFileToString(path);
    ASSERT_TRUE(text.ok()) << path;
    std::vector<std::string_view> parts = SplitInputFile(*text);
    for (size_t p = 0; p < parts.size(); ++p) {
      std::string label = fs::path(path).filename().string() +
                          (parts.size() > 1 ? "#" + std::to_string(p) : "");
      auto module = ParseModule(parts[p]);
      if (!module.ok() || (*module)->entry() == nullptr) continue;
      if (CountErrors(VerifyModule(**module)) > 0) continue;
      const Computation* entry = (*module)->entry();
      std::vector<Literal> args;
      for (int i = 0; i < entry->parameter_count(); ++i) {
        args.push_back(Pattern(entry->parameter(i)->shape(), i));
      }
      auto t0 = std::chrono::steady_clock::now();
      auto want = EvaluateModule(**module, args, options);
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!want.ok()) continue;  // the interpreter's own test reports what it cannot run
      if (secs > kMaxInterpreterSeconds) {
        ++slow;
        report += "  " + label + ": left to the benchmark (interpreter " + std::to_string(secs) +
                  " s)\n";
        continue;
      }
      ++total;
      auto exe = CpuExecutable::Compile(**module, cpu);
      ASSERT_TRUE(exe.ok()) << label << ": " << exe.status();
      kernels += (*exe)->stats().kernels;
      interpreted += (*exe)->stats().interpreted;
      if ((*exe)->RunsInArena()) {
        ++in_arena;
      } else {
        report += "  " + label + ": on the driver (" + (*exe)->stats().arena_refused + ")\n";
      }
      compile_seconds += (*exe)->stats().total_seconds;
      auto got = (*exe)->Run(args, options);
      ASSERT_TRUE(got.ok()) << label << ": " << got.status();
      std::string d = Disagreement(*want, *got, "result");
      EXPECT_TRUE(d.empty()) << label << ": " << d << "\n  " << (*exe)->Summary();
      if (d.empty()) ++agreed;
    }
  }
  std::cout << "cpu corpus: " << agreed << " of " << total << " modules agree with the "
            << "interpreter; " << kernels << " kernels, " << interpreted
            << " instructions on the interpreter; " << in_arena << " ran in the arena; compile "
            << compile_seconds << " s; " << slow << " left to the benchmark\n"
            << report;
  EXPECT_GT(total, 50);
  EXPECT_GT(kernels, 0);
  // Modules the arena runtime refuses (asynchronous pairs) run on the driver.
  EXPECT_GT(in_arena, total * 3 / 4) << report;
}

}  // namespace
}  // namespace hlowb
