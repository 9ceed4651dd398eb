// Golden tests for the parser and printer: text in, text out.
//   tests/golden/print/NAME.hlo   -> NAME.long.golden and NAME.short.golden
//   tests/golden/errors/NAME.hlo  -> NAME.err.golden (the parser's diagnostic)
// On a mismatch the test writes NAME.<kind>.actual beside the golden and prints a line diff.
// HLOWB_UPDATE_GOLDEN=1 rewrites the goldens instead (review the diff before committing).
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

fs::path GoldenDir() { return fs::path(HLOWB_SOURCE_DIR) / "tests" / "golden"; }

std::vector<std::string> Inputs(const std::string& sub) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(GoldenDir() / sub, ec)) {
    if (e.path().extension() == ".hlo") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string LineDiff(const std::string& expected, const std::string& actual) {
  std::istringstream a(expected), b(actual);
  std::string la, lb, out;
  int line = 0, shown = 0;
  while (shown < 10) {
    bool ga = static_cast<bool>(std::getline(a, la));
    bool gb = static_cast<bool>(std::getline(b, lb));
    if (!ga && !gb) break;
    ++line;
    if (ga && gb && la == lb) continue;
    out += "line " + std::to_string(line) + ":\n  - " + (ga ? la : "<eof>") + "\n  + " +
           (gb ? lb : "<eof>") + "\n";
    ++shown;
  }
  return out;
}

void CompareGolden(const fs::path& golden, const std::string& actual) {
  fs::path actual_path = golden;
  actual_path.replace_extension(".actual");
  if (std::getenv("HLOWB_UPDATE_GOLDEN")) {
    ASSERT_TRUE(WriteStringToFile(golden.string(), actual).ok());
    return;
  }
  auto expected = ReadFileToString(golden.string());
  ASSERT_TRUE(expected.ok()) << "missing golden " << golden
                             << " (run with HLOWB_UPDATE_GOLDEN=1 to create it)";
  if (*expected != actual) {
    (void)WriteStringToFile(actual_path.string(), actual);
    ADD_FAILURE() << "golden mismatch: " << golden << "\nactual written to " << actual_path
                  << "\n" << LineDiff(*expected, actual);
  } else {
    std::error_code ec;
    fs::remove(actual_path, ec);
  }
}

class PrintGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PrintGolden, LongAndShortForms) {
  fs::path input = GoldenDir() / "print" / (GetParam() + ".hlo");
  auto text = ReadFileToString(input.string());
  ASSERT_TRUE(text.ok());
  ParseOptions options;
  options.file_name = GetParam() + ".hlo";
  auto module = ParseModule(*text, options);
  ASSERT_TRUE(module.ok()) << module.status();
  // Golden inputs are valid HLO: the verifier must accept them.
  for (const VerifierDiagnostic& d : VerifyModule(**module)) {
    EXPECT_NE(d.severity, VerifierDiagnostic::Severity::kError) << d.ToString();
  }
  for (bool long_form : {true, false}) {
    PrintOptions po = long_form ? PrintOptions::Long() : PrintOptions::Short();
    std::string printed = PrintModule(**module, po);
    CompareGolden(GoldenDir() / "print" / (GetParam() + (long_form ? ".long.golden" : ".short.golden")),
                  printed);
    // The printed form must read back to the same module.
    auto again = ParseModule(printed);
    ASSERT_TRUE(again.ok()) << again.status();
    std::string why;
    EXPECT_TRUE(ModulesEqual(**module, **again, &why)) << why;
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, PrintGolden, ::testing::ValuesIn(Inputs("print")));

class ErrorGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(ErrorGolden, Diagnostic) {
  fs::path input = GoldenDir() / "errors" / (GetParam() + ".hlo");
  auto text = ReadFileToString(input.string());
  ASSERT_TRUE(text.ok());
  ParseOptions options;
  options.file_name = GetParam() + ".hlo";
  auto module = ParseModule(*text, options);
  ASSERT_FALSE(module.ok()) << GetParam() << " was expected to fail to parse";
  CompareGolden(GoldenDir() / "errors" / (GetParam() + ".err.golden"),
                std::string(module.status().message()) + "\n");
}

INSTANTIATE_TEST_SUITE_P(Golden, ErrorGolden, ::testing::ValuesIn(Inputs("errors")));

TEST(GoldenInventory, HasCases) {
  EXPECT_GE(Inputs("print").size(), 5u);
  EXPECT_GE(Inputs("errors").size(), 10u);
}

}  // namespace
}  // namespace hlowb
