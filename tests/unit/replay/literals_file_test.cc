// run_hlo_module literal files: round trip in binary and text form, XLA's field numbers, errors.
#include "replay/data/literals_file.h"

#include <unistd.h>

#include <filesystem>

#include "core/support/file_util.h"
#include "gtest/gtest.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;

std::vector<IterationLiterals> Sample() {
  std::vector<IterationLiterals> its(2);
  its[0].arguments.push_back(Lit("f32[2,3]{1,0} {{1, 2, 3}, {4, 5, nan}}"));
  its[0].arguments.push_back(Lit("s4[3]{0} {-8, 0, 7}"));
  its[0].result = Lit("(bf16[2]{0}, pred[]) ({1.5, -inf}, true)");
  its[0].reference_result = Lit("(bf16[2]{0}, pred[]) ({1.5, -inf}, false)");
  its[1].arguments.push_back(Lit("c64[1]{0} {(1, -2)}"));
  its[1].arguments.push_back(Lit("u64[1]{0} {18446744073709551615}"));
  its[1].result = Lit("f8e4m3fn[2]{0} {448, -0.5}");
  return its;
}

void ExpectSame(const std::vector<IterationLiterals>& a, const std::vector<IterationLiterals>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].arguments.size(), b[i].arguments.size());
    for (size_t k = 0; k < a[i].arguments.size(); ++k) {
      EXPECT_TRUE(a[i].arguments[k] == b[i].arguments[k]) << "iteration " << i << " argument " << k;
    }
    ASSERT_EQ(a[i].result.has_value(), b[i].result.has_value());
    if (a[i].result) {
      EXPECT_TRUE(*a[i].result == *b[i].result);
    }
    ASSERT_EQ(a[i].reference_result.has_value(), b[i].reference_result.has_value());
    if (a[i].reference_result) {
      EXPECT_TRUE(*a[i].reference_result == *b[i].reference_result);
    }
  }
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("hlowb_replay_" + std::to_string(getpid()) + "_" + name)).string();
}

TEST(LiteralsFile, BinaryAndTextRoundTrip) {
  std::vector<IterationLiterals> its = Sample();
  for (const char* name : {"lits.pb", "lits.pbtxt", "lits.txt"}) {
    std::string path = TempPath(name);
    ASSERT_TRUE(WriteRunHloModuleLiterals(path, its).ok());
    auto back = ReadRunHloModuleLiterals(path);
    ASSERT_TRUE(back.ok()) << name << ": " << back.status();
    ExpectSame(its, *back);
    std::filesystem::remove(path);
  }
  auto text = EncodeRunHloModuleLiterals(its, true);
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("iterations {"), std::string::npos);
  EXPECT_NE(text->find("reference_result {"), std::string::npos);
}

TEST(LiteralsFile, UsesXlaFieldNumbers) {
  std::vector<IterationLiterals> its(1);
  its[0].arguments.push_back(Lit("s32[] 1"));
  its[0].result = Lit("s32[] 2");
  its[0].reference_result = Lit("s32[] 3");
  auto bytes = EncodeRunHloModuleLiterals(its, false);
  ASSERT_TRUE(bytes.ok());
  // RunHloModuleLiterals.iterations = 1 (length-delimited: tag 0x0A); inside it arguments = 2
  // (0x12), result = 3 (0x1A), reference_result = 4 (0x22).
  ASSERT_GT(bytes->size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>((*bytes)[0]), 0x0A);
  std::string inner = bytes->substr(2);
  EXPECT_EQ(static_cast<uint8_t>(inner[0]), 0x12);
  size_t pos = 2 + static_cast<uint8_t>(inner[1]);
  EXPECT_EQ(static_cast<uint8_t>(inner[pos]), 0x1A);
  pos += 2 + static_cast<uint8_t>(inner[pos + 1]);
  EXPECT_EQ(static_cast<uint8_t>(inner[pos]), 0x22);
}

TEST(LiteralsFile, ErrorsNameTheFile) {
  auto missing = ReadRunHloModuleLiterals("/nonexistent/lits.pb");
  EXPECT_FALSE(missing.ok());
  auto junk = ParseRunHloModuleLiterals("iterations { arguments { shape { element_type: F32 ", "x.txt");
  ASSERT_FALSE(junk.ok());
  EXPECT_NE(std::string(junk.status().message()).find("x.txt"), std::string::npos);
  // A literal whose data does not fit its shape.
  auto bad = ParseRunHloModuleLiterals(
      "iterations { arguments { shape { element_type: F32 dimensions: 3 } f32s: 1 } }", "bad.txt");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("argument 0"), std::string::npos)
      << bad.status();
  auto empty = ParseRunHloModuleLiterals("", "empty.pb");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace hlowb
