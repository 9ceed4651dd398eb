// Every self-contained module of the shared XLA corpus replays with fake data (elided constants
// included), or reports the exact unsupported feature; two replays with the same seed give
// identical arguments and results. Skips, saying why, when the corpus folder is absent.
// Modules whose parameters would need more than kMaxArgumentBytes are skipped with a message
// to keep the suite fast.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "gtest/gtest.h"
#include "replay/session.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kMaxArgumentBytes = int64_t{256} << 20;

int64_t ShapeBytes(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) n += ShapeBytes(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  int64_t count = s.ElementCount();
  return count < 0 ? INT64_MAX / 4 : count * ByteWidth(s.element_type());
}

TEST(CorpusReplay, EveryModuleReplaysWithFakeDataDeterministically) {
  std::vector<std::string> files;
  std::error_code ec;
  fs::path root(HLOWB_CORPUS_DIR);
  if (fs::is_directory(root, ec)) {
    for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
      std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".hlo" || ext == ".txt")) {
        files.push_back(entry.path().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";

  int replayed = 0, unsupported = 0, skipped = 0, total = 0;
  std::string report;
  for (const std::string& path : files) {
    auto text = ReadFileToString(path);
    ASSERT_TRUE(text.ok()) << path;
    std::vector<std::string_view> parts = SplitInputFile(*text);
    for (size_t p = 0; p < parts.size(); ++p) {
      std::string label = fs::path(path).filename().string() +
                          (parts.size() > 1 ? "#" + std::to_string(p + 1) : "");
      auto module = ParseModule(parts[p]);
      if (!module.ok() || (*module)->entry() == nullptr) continue;  // the parser's tests cover it
      if (CountErrors(VerifyModule(**module)) > 0) {
        ++skipped;
        report += "  " + label + ": skipped, not a valid module (the verifier rejects it)\n";
        continue;
      }
      int64_t bytes = 0;
      for (const Instruction* param : (*module)->entry()->parameters()) {
        if (param != nullptr) bytes += ShapeBytes(param->shape());
      }
      if (bytes > kMaxArgumentBytes) {
        ++skipped;
        report += "  " + label + ": skipped, arguments need " + std::to_string(bytes >> 20) + " MiB\n";
        continue;
      }
      ++total;
      ReplayOptions options;
      options.seed = 1234;
      options.memory_budget_bytes = uint64_t{2} << 30;
      auto t0 = std::chrono::steady_clock::now();
      auto first = ReplaySession(**module, options).Run();
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!first.ok()) {
        // The evaluator's gaps are reported, not failed on; anything else is a bug.
        EXPECT_TRUE(first.status().code() == absl::StatusCode::kUnimplemented ||
                    first.status().code() == absl::StatusCode::kResourceExhausted)
            << label << ": " << first.status();
        ++unsupported;
        report += "  " + label + ": " + std::string(first.status().message()) + "\n";
        continue;
      }
      auto second = ReplaySession(**module, options).Run();
      ASSERT_TRUE(second.ok()) << label << ": " << second.status();
      const ReplayIteration& a = first->iterations[0];
      const ReplayIteration& b = second->iterations[0];
      ASSERT_EQ(a.arguments.size(), b.arguments.size());
      for (size_t i = 0; i < a.arguments.size(); ++i) {
        EXPECT_TRUE(a.arguments[i] == b.arguments[i]) << label << ": argument " << i << " differs";
      }
      EXPECT_TRUE(a.result == b.result) << label << ": two replays with seed 1234 differ";
      if (secs > (std::getenv("HLOWB_REPLAY_TIMES") ? 0.0 : 0.5)) report += "  " + label + ": " + std::to_string(secs) + " s per replay\n";
      ++replayed;
    }
  }
  std::cout << "corpus replay: " << replayed << " of " << total
            << " modules replayed twice with identical results, " << unsupported
            << " report an unsupported feature, " << skipped << " skipped\n"
            << report;
  EXPECT_GT(replayed, 0);
}

}  // namespace
}  // namespace hlowb
