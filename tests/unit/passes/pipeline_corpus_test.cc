// Every module of the shared XLA corpus goes through the `cpu` and `gpu` pipelines with the
// verifier after every pass (no failure, no crash), and every pass keeps the meaning: for the
// modules the interpreter runs quickly, the state after each changing pass computes the same
// outputs as the state before it on the same fake arguments (integers and pred bit-exact,
// floats within the replay tolerances). Skips, saying why, when the corpus folder is absent.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/compare/compare.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/constant_evaluator.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

// Modules whose first evaluation takes longer are compiled and verified but not re-evaluated
// after every pass (the suite must stay fast).
constexpr double kMaxEvalSeconds = 0.25;

// Gives elided constants (`{...}`) seeded fake values, so that every state of the module sees
// the same data.
absl::Status FillElidedConstants(Module* module) {
  FakeDataOptions options;
  options.seed = 99;
  for (const auto& comp : module->computations()) {
    for (Instruction* instr : comp->instructions()) {
      if (instr->opcode() != Opcode::kConstant || !instr->literal() ||
          !instr->literal()->elided()) {
        continue;
      }
      absl::StatusOr<Literal> value = MakeFakeElidedConstant(*module, *instr, options);
      if (!value.ok()) return value.status();
      instr->set_literal(std::make_unique<Literal>(*std::move(value)));
    }
  }
  return absl::OkStatus();
}

void RunCorpusThroughPipeline(const std::string& platform) {
  const std::vector<testing::CorpusModule>& corpus = testing::CorpusModules();
  if (corpus.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";
  int compiled = 0, checked = 0, not_run = 0, skipped = 0;
  int64_t passes_checked = 0;
  std::string report;
  for (const testing::CorpusModule& cm : corpus) {
    if (std::getenv("HLOWB_VERBOSE")) std::cerr << platform << ": " << cm.label << std::endl;
    absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModule(cm.text);
    if (!parsed.ok() || (*parsed)->entry() == nullptr) continue;  // the parser's tests cover it
    Module* module = parsed->get();
    if (CountErrors(VerifyModule(*module)) > 0) {
      ++skipped;
      report += "  " + cm.label + ": skipped, the verifier rejects it\n";
      continue;
    }
    if (!FillElidedConstants(module).ok()) {
      ++skipped;
      report += "  " + cm.label + ": skipped, elided constants cannot be faked\n";
      continue;
    }
    // The reference result, if the interpreter runs the module quickly.
    std::vector<Literal> args;
    std::optional<Literal> expected;
    {
      FakeDataOptions fo;
      fo.seed = 5;
      absl::StatusOr<std::vector<Literal>> a = MakeFakeArguments(*module, fo);
      if (a.ok()) {
        auto t0 = std::chrono::steady_clock::now();
        absl::StatusOr<Literal> r = EvaluateModule(*module, *a);
        double secs =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r.ok() && secs <= kMaxEvalSeconds) {
          args = *std::move(a);
          expected = *std::move(r);
        } else {
          ++not_run;
          report += "  " + cm.label + ": compiled and verified only (" +
                    (r.ok() ? StrCat("evaluation takes ", secs, " s")
                            : std::string(r.status().message())) +
                    ")\n";
        }
      }
    }
    std::optional<Literal> previous = expected;
    std::string previous_pass = "the input";
    CompileOptions options;
    options.platform = platform;
    options.evaluator = InterpreterConstantEvaluator();
    options.pass_options.verify_after_each_pass = true;
    if (expected) {
      options.after_change = [&](const Module& m, const PassRecord& record) -> absl::Status {
        ++passes_checked;
        absl::StatusOr<Literal> now = EvaluateModule(m, args);
        if (!now.ok()) {
          return absl::InternalError(StrCat("after pass '", record.pass,
                                            "' the module no longer evaluates: ",
                                            now.status().message()));
        }
        ComparisonReport cmp = CompareLiterals(*previous, *now);
        if (!cmp.ok()) {
          return absl::InternalError(StrCat("pass '", record.pass, "' (pipeline '",
                                            record.pipeline, "') changed the outputs of ",
                                            previous_pass, ": ", cmp.ToString()));
        }
        previous = *std::move(now);
        previous_pass = StrCat("pass '", record.pass, "'");
        return absl::OkStatus();
      };
    }
    absl::StatusOr<CompileResult> result = CompileModule(module, options);
    EXPECT_TRUE(result.ok()) << cm.label << " (" << platform << "): " << result.status().message();
    if (!result.ok()) continue;
    ++compiled;
    EXPECT_TRUE(module->config().is_scheduled) << cm.label;
    EXPECT_EQ(CountErrors(VerifyModule(*module)), 0) << cm.label;
    EXPECT_FALSE(result->buffer_assignment_text.empty()) << cm.label;
    if (expected) ++checked;
  }
  std::cout << platform << " pipeline over the corpus: " << compiled
            << " modules compiled with the verifier after every pass; " << checked
            << " evaluated after each of their changing passes (" << passes_checked
            << " pass states) with unchanged outputs; " << not_run << " compiled only; "
            << skipped << " skipped\n"
            << report;
  EXPECT_GT(compiled, 50);
  EXPECT_GT(checked, 30);
}

TEST(PipelineCorpus, CpuPipelineVerifiesAndKeepsMeaning) { RunCorpusThroughPipeline("cpu"); }

TEST(PipelineCorpus, GpuPipelineVerifiesAndKeepsMeaning) { RunCorpusThroughPipeline("gpu"); }

}  // namespace
}  // namespace hlowb
