// rng-bit-generator against the published known-answer vectors of the Threefry-2x32-20 and
// Philox-4x32-10 generators, plus the state update and output arrangement rules.
#include <cstdint>
#include <string>

#include "gtest/gtest.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace hlowb::testing {
namespace {

std::string Rbg(const std::string& algorithm, const std::string& state_type,
                const std::string& state, const std::string& bits_type) {
  std::string alg = algorithm.empty() ? "" : ", algorithm=" + algorithm;
  return Op("(" + state_type + ", " + bits_type + ") rng-bit-generator(p0)" + alg, {state_type},
            {state_type + " " + state});
}

std::string U(uint64_t v) { return std::to_string(v); }

TEST(RngBitGenerator, ThreeFryKnownAnswers) {
  // Zero key and counter: the first block is (0x6b200159, 0x99ba4efe).
  std::string zero = Rbg("rng_three_fry", "u64[2]", "{0, 0}", "u32[2]");
  EXPECT_NE(zero.find("{" + U(0x6b200159) + ", " + U(0x99ba4efe) + "}"), std::string::npos)
      << zero;
  EXPECT_NE(zero.find("{0, 1}"), std::string::npos) << zero;  // one counter value used
  // Key (0x13198a2e, 0x03707344), counter (0x243f6a88, 0x85a308d3) -> (0xc4923a9c, 0x483df7a0).
  const std::string state = "{" + U(0x0370734413198a2eull) + ", " + U(0x85a308d3243f6a88ull) + "}";
  std::string pi64 = Rbg("rng_three_fry", "u64[2]", state, "u64[]");
  EXPECT_NE(pi64.find(U(0x483df7a0c4923a9cull)), std::string::npos) << pi64;
  std::string all_ones = Rbg("rng_three_fry", "u64[2]", "{18446744073709551615, 18446744073709551615}",
                             "u32[2]");
  EXPECT_NE(all_ones.find("{" + U(0x1cb996fc) + ", " + U(0xbb002be7) + "}"), std::string::npos)
      << all_ones;
}

TEST(RngBitGenerator, ThreeFryInterleavesHalvesAlongTheFirstEvenDimension) {
  // u32[3,2]: split along dimension 1; row r is the block of counter r.
  std::string a = Rbg("rng_three_fry", "u64[2]", "{0, 0}", "u32[3,2]");
  std::string b = Rbg("rng_three_fry", "u64[2]", "{0, 1}", "u32[2]");
  // Row 1 of a equals the first block at counter 1 (a's rows print as "{ x, y }", b's vector
  // as "{x, y}").
  size_t open = b.rfind('{');
  std::string block1 = "{ " + b.substr(open + 1, b.find('}', open) - open - 1) + " }";
  EXPECT_NE(a.find(block1), std::string::npos) << a << "\n" << b;
  EXPECT_NE(a.find("{0, 3}"), std::string::npos) << a;  // counter advanced by 3
  // Odd sizes: u32[3] uses two counter values and drops the last word.
  std::string odd = Rbg("rng_three_fry", "u64[2]", "{0, 0}", "u32[3]");
  EXPECT_NE(odd.find("{0, 2}"), std::string::npos) << odd;
  EXPECT_NE(odd.find("{" + U(0x6b200159) + ", " + U(0x99ba4efe) + ", "), std::string::npos) << odd;
}

TEST(RngBitGenerator, PhiloxKnownAnswers) {
  std::string zero = Rbg("rng_philox", "u64[3]", "{0, 0, 0}", "u32[4]");
  EXPECT_NE(zero.find("{" + U(0x6627e8d5) + ", " + U(0xe169c58d) + ", " + U(0xbc57ac4c) + ", " +
                      U(0x9b00dbd8) + "}"),
            std::string::npos)
      << zero;
  EXPECT_NE(zero.find("{0, 1, 0}"), std::string::npos) << zero;
  // Key (0xa4093822, 0x299f31d0), counter (0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344).
  const std::string state = "{" + U(0x299f31d0a4093822ull) + ", " + U(0x85a308d3243f6a88ull) +
                            ", " + U(0x0370734413198a2eull) + "}";
  std::string pi = Rbg("rng_philox", "u64[3]", state, "u32[4]");
  EXPECT_NE(pi.find("{" + U(0xd16cfe09) + ", " + U(0x94fdcceb) + ", " + U(0x5001e420) + ", " +
                    U(0x24126ea1) + "}"),
            std::string::npos)
      << pi;
  // The default algorithm is philox.
  EXPECT_EQ(Rbg("", "u64[3]", "{0, 0, 0}", "u32[4]"), zero);
}

TEST(RngBitGenerator, PhiloxCounterCarriesAndShortState) {
  // Low word at its maximum: the next block carries into the high word.
  std::string carry = Rbg("rng_philox", "u64[3]", "{0, 18446744073709551615, 0}", "u32[8]");
  EXPECT_NE(carry.find("{0, 1, 1}"), std::string::npos) << carry;
  // u64[2] state: the key doubles as the counter's high word; the state keeps two elements.
  std::string two = Rbg("rng_philox", "u64[2]", "{0, 0}", "u32[4]");
  EXPECT_NE(two.find("{" + U(0x6627e8d5) + ", "), std::string::npos) << two;
  EXPECT_NE(two.find("{0, 1}"), std::string::npos) << two;
  // 64-bit outputs take two words each: u64[2] is one block.
  std::string wide = Rbg("rng_philox", "u64[3]", "{0, 0, 0}", "u64[2]");
  EXPECT_NE(wide.find(U(0xe169c58d6627e8d5ull)), std::string::npos) << wide;
  EXPECT_NE(wide.find("{0, 1, 0}"), std::string::npos) << wide;
  // Narrow outputs keep the low bits of each 32-bit word.
  std::string narrow = Rbg("rng_philox", "u64[3]", "{0, 0, 0}", "u16[1]");
  EXPECT_NE(narrow.find("{" + U(0xe8d5) + "}"), std::string::npos) << narrow;
}

TEST(RngBitGenerator, BadStateIsAnError) {
  std::string r = Rbg("rng_three_fry", "u64[3]", "{0, 0, 0}", "u32[2]");
  EXPECT_NE(r.find("u64[2]"), std::string::npos) << r;
}

}  // namespace
}  // namespace hlowb::testing
