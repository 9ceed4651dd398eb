#include "tests/unit/passes/pass_test_util.h"

#include <algorithm>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/compare/compare.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/constant_evaluator.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb::testing {

std::unique_ptr<Module> ParseOrDie(std::string_view hlo) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(hlo);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << hlo;
  if (!m.ok()) return nullptr;
  return *std::move(m);
}

std::string Normalize(const Module& module) {
  PrintOptions o = PrintOptions::Short();
  o.print_metadata = false;
  return PrintModule(module, o);
}

std::string NormalizeText(std::string_view hlo) {
  std::unique_ptr<Module> m = ParseOrDie(hlo);
  return m ? Normalize(*m) : std::string("<parse error>");
}

PassContext MakeTestContext() {
  PassContext ctx;
  ctx.mutable_options().verify_after_each_pass = true;
  ctx.set_evaluator(InterpreterConstantEvaluator());
  return ctx;
}

std::unique_ptr<Module> RunPass(HloPass& pass, std::string_view hlo, bool* changed,
                                PassContext* context) {
  std::unique_ptr<Module> m = ParseOrDie(hlo);
  if (!m) return nullptr;
  PassContext local = MakeTestContext();
  PassContext& ctx = context ? *context : local;
  absl::StatusOr<bool> r = pass.Run(m.get(), ctx);
  EXPECT_TRUE(r.ok()) << pass.name() << ": " << r.status().message();
  if (!r.ok()) return nullptr;
  if (changed) *changed = *r;
  for (const VerifierDiagnostic& d : VerifyModule(*m)) {
    EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError)
        << "after " << pass.name() << ": " << d.ToString() << "\n"
        << Normalize(*m);
  }
  return m;
}

void ExpectRewrite(HloPass& pass, std::string_view input, std::string_view expected,
                   bool check_semantics, PassContext* context) {
  bool changed = false;
  std::unique_ptr<Module> after = RunPass(pass, input, &changed, context);
  ASSERT_NE(after, nullptr);
  EXPECT_TRUE(changed) << pass.name() << " reported no change";
  EXPECT_EQ(Normalize(*after), NormalizeText(expected));
  if (check_semantics) {
    std::unique_ptr<Module> before = ParseOrDie(input);
    ASSERT_NE(before, nullptr);
    ExpectSameResults(*before, *after);
  }
}

void ExpectNoChange(HloPass& pass, std::string_view input, PassContext* context) {
  bool changed = true;
  std::unique_ptr<Module> after = RunPass(pass, input, &changed, context);
  ASSERT_NE(after, nullptr);
  EXPECT_FALSE(changed) << pass.name() << " reported a change";
  EXPECT_EQ(Normalize(*after), NormalizeText(input));
}

bool ExpectSameResults(const Module& before, const Module& after, uint64_t seed) {
  FakeDataOptions fo;
  fo.seed = seed;
  absl::StatusOr<std::vector<Literal>> args = MakeFakeArguments(before, fo);
  EXPECT_TRUE(args.ok()) << args.status().message();
  if (!args.ok()) return false;
  absl::StatusOr<Literal> a = EvaluateModule(before, *args);
  EXPECT_TRUE(a.ok()) << "before: " << a.status().message();
  absl::StatusOr<Literal> b = EvaluateModule(after, *args);
  EXPECT_TRUE(b.ok()) << "after: " << b.status().message();
  if (!a.ok() || !b.ok()) return false;
  ErrorBounds bounds;
  bounds.abs = 1e-5;
  bounds.rel = 1e-5;
  ComparisonReport report = CompareLiterals(*a, *b, bounds);
  EXPECT_TRUE(report.ok()) << report.ToString() << "\nbefore:\n"
                           << Normalize(before) << "\nafter:\n"
                           << Normalize(after);
  return report.ok();
}

const std::vector<CorpusModule>& CorpusModules() {
  static const std::vector<CorpusModule>* corpus = [] {
    namespace fs = std::filesystem;
    auto* out = new std::vector<CorpusModule>();
    std::vector<std::string> files;
    std::error_code ec;
    if (fs::is_directory(HLOWB_CORPUS_DIR, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(HLOWB_CORPUS_DIR, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".hlo" || ext == ".txt")) {
          files.push_back(entry.path().string());
        }
      }
    }
    std::sort(files.begin(), files.end());
    for (const std::string& path : files) {
      absl::StatusOr<std::string> text = ReadFileToString(path);
      if (!text.ok()) continue;
      std::vector<std::string_view> parts = SplitInputFile(*text);
      for (size_t p = 0; p < parts.size(); ++p) {
        out->push_back({StrCat(fs::path(path).filename().string(),
                               parts.size() > 1 ? StrCat("#", p + 1) : std::string()),
                        std::string(parts[p])});
      }
    }
    return out;
  }();
  return *corpus;
}

std::unique_ptr<Module> ParseValidModule(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  if (!m.ok() || (*m)->entry() == nullptr || CountErrors(VerifyModule(**m)) > 0) return nullptr;
  return *std::move(m);
}

}  // namespace hlowb::testing
