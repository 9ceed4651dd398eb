// Helpers shared by the replay tests.
#ifndef HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_

#include <memory>
#include <string>

#include "core/ir/module.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlowb::testing {

inline std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline Literal Lit(const std::string& text) {
  auto l = ParseShapedLiteral(text);
  EXPECT_TRUE(l.ok()) << text << ": " << l.status();
  return l.ok() ? std::move(*l) : Literal();
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_
