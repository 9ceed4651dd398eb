// Golden text-in/text-out helpers for pass tests: parse a module, run one pass, compare the
// printed result with the expected module (both normalised by parse + print, so either may be
// written in the long or short form), check the verifier is still happy, and check that the
// rewrite kept the module's meaning by evaluating both states on the same fake arguments.
#ifndef HLOWB_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/module.h"
#include "core/passes/hlo_pass.h"

namespace hlowb::testing {

// Parses or fails the test (returns null then).
std::unique_ptr<Module> ParseOrDie(std::string_view hlo);
// The module in the form tests compare: short text without metadata.
std::string Normalize(const Module& module);
// `text` parsed and printed by Normalize.
std::string NormalizeText(std::string_view hlo);

// A context with the interpreter's constant evaluator installed.
PassContext MakeTestContext();

// Runs `pass` on `hlo` and returns the result; *changed receives the pass's answer. The result
// must verify without errors (checked with EXPECT).
std::unique_ptr<Module> RunPass(HloPass& pass, std::string_view hlo, bool* changed,
                                PassContext* context = nullptr);

// The pass changes `input` into exactly `expected`, which still computes the same values on
// fake data (checked unless check_semantics is false).
void ExpectRewrite(HloPass& pass, std::string_view input, std::string_view expected,
                   bool check_semantics = true, PassContext* context = nullptr);
// The pass reports no change and leaves the text as it was.
void ExpectNoChange(HloPass& pass, std::string_view input, PassContext* context = nullptr);

// Both modules give the same entry results on the same seeded fake arguments (integers and
// pred bit-exact, floats within 1e-5 relative / absolute). Returns false (with a test failure)
// otherwise; modules the evaluator cannot run are a failure too.
bool ExpectSameResults(const Module& before, const Module& after, uint64_t seed = 7);

// One module of the shared corpus: "file.hlo#2" and its text.
struct CorpusModule {
  std::string label;
  std::string text;
};
// Every module of HLOWB_CORPUS_DIR (.hlo and .txt files, split at `// -----` lines), sorted by
// path and read once per test binary; empty when the folder is absent.
const std::vector<CorpusModule>& CorpusModules();
// `text` parsed, when it parses into a module with an entry that the verifier accepts; null
// otherwise (the parser's and verifier's own tests cover those files).
std::unique_ptr<Module> ParseValidModule(std::string_view text);

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_
