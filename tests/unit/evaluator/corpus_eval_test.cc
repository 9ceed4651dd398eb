// Every self-contained module of the shared XLA corpus evaluates on simple deterministic
// inputs (parameters and elided constants filled with a small repeating pattern), or fails
// with Unimplemented naming the exact unsupported feature; and two runs give identical
// results. Skips, saying why, when the corpus folder is absent.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/analysis/verifier.h"
#include "core/ir/float_types.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

using testing::CorpusFiles;
using testing::Pattern;

namespace fs = std::filesystem;

TEST(EvalCorpus, EveryModuleEvaluatesOrNamesTheUnsupportedFeature) {
  std::vector<std::string> files = CorpusFiles(HLOWB_CORPUS_DIR);
  if (files.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";
  EvaluatorOptions options;
  options.memory_budget_bytes = uint64_t{2} << 30;
  options.elided_constant = [](const Instruction& instr) -> absl::StatusOr<Literal> {
    return Pattern(instr.shape(), 1);
  };
  int ok = 0, unsupported = 0, parts_total = 0;
  std::string report;
  // HLOWB_CORPUS_FILTER=substring limits the run to matching files (for profiling).
  const char* filter = std::getenv("HLOWB_CORPUS_FILTER");
  for (const std::string& path : files) {
    if (filter != nullptr && path.find(filter) == std::string::npos) continue;
    auto read = ReadFileToString(path);
    ASSERT_TRUE(read.ok()) << path;
    std::string text = std::move(*read);
    std::vector<std::string_view> parts = SplitInputFile(text);
    for (size_t p = 0; p < parts.size(); ++p) {
      std::string label = fs::path(path).filename().string() +
                          (parts.size() > 1 ? "#" + std::to_string(p) : "");
      auto module = ParseModule(parts[p]);
      if (!module.ok() || (*module)->entry() == nullptr) continue;  // parse is the parser's test
      if (CountErrors(VerifyModule(**module)) > 0) {
        report += "  " + label + ": skipped, the verifier rejects it (not a valid module)\n";
        continue;
      }
      ++parts_total;
      auto t0 = std::chrono::steady_clock::now();
      const Computation* entry = (*module)->entry();
      std::vector<Literal> args;
      for (int i = 0; i < entry->parameter_count(); ++i) {
        args.push_back(Pattern(entry->parameter(i)->shape(), i));
      }
      auto first = EvaluateModule(**module, args, options);
      if (!first.ok()) {
        EXPECT_EQ(first.status().code(), absl::StatusCode::kUnimplemented)
            << label << ": " << first.status();
        ++unsupported;
        report += "  " + label + ": " + std::string(first.status().message()) + "\n";
        continue;
      }
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (secs > 0.5) report += "  " + label + ": " + std::to_string(secs) + " s\n";
      auto second = EvaluateModule(**module, args, options);
      ASSERT_TRUE(second.ok()) << label << ": " << second.status();
      EXPECT_TRUE(*first == *second) << label << ": two runs differ";
      ++ok;
    }
  }
  std::cout << "corpus: " << ok << " of " << parts_total << " modules evaluated, " << unsupported
            << " report an unsupported feature\n"
            << report;
}

}  // namespace
}  // namespace hlowb
