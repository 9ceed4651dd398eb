// `hlowb reduce` and the reducer behind it (replay/reduce/reducer.h) on seeded failures: a
// wrong rewrite between two states of a module, a NaN inside a while loop, a crash in a
// custom-call handler, a mismatch between the interpreter and the cpu platform, a verifier
// error. Each reduced module must verify (unless failing the verifier is the failure), fail the
// same way when run again from its printed text, and keep at most 10% of the original's
// instructions. The corpus tests seed a NaN into ssd_mobilenet (default suite) and into
// attention_model (HLOWB_REDUCE_TIMING=1, several minutes) and check the time limits the
// reduction must meet.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/data/literals_file.h"
#include "replay/reduce/edits.h"
#include "replay/reduce/reducer.h"
#include "replay_test_util.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::Parse;
using testing::RunHlowb;

// Builds HLO text: an elementwise chain over f32[16,8] values that stay small (each step is the
// fractional part of a sum, a maximum, a minimum, a negation or an absolute value of recent
// values; all exact, so every platform computes the same bits), every value used and a change
// anywhere visible in the result. `special` may replace step k's line: it gets the step's name
// and two operand names and returns the line(s), or "" for the ordinary step.
using Special = std::function<std::string(int k, const std::string& name, const std::string& a,
                                          const std::string& b)>;

constexpr char kShape[] = "f32[16,8]";

struct Chain {
  std::vector<std::string> lines;
  std::string last;
};

Chain MakeChain(const std::string& prefix, const std::vector<std::string>& inputs, int steps,
                uint32_t seed, const Special& special = nullptr) {
  Chain c;
  uint64_t state = seed * 2654435761u + 1;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<uint32_t>(state >> 33);
  };
  std::vector<std::string> values = inputs;
  std::vector<bool> used(values.size(), false);
  for (int k = 0; k < steps; ++k) {
    const size_t ia = values.size() - 1 - next() % std::min<size_t>(2, values.size());
    const size_t ib = next() % values.size();
    const std::string& a = values[ia];
    const std::string& b = values[ib];
    const std::string name = StrCat(prefix, "v", k);
    std::string line = special ? special(k, name, a, b) : std::string();
    if (line.empty()) {
      switch (next() % 8) {
        case 4: line = StrCat("  ", name, " = ", kShape, " maximum(", a, ", ", b, ")"); break;
        case 5: line = StrCat("  ", name, " = ", kShape, " minimum(", a, ", ", b, ")"); break;
        case 6: line = StrCat("  ", name, " = ", kShape, " negate(", a, ")"); break;
        case 7: line = StrCat("  ", name, " = ", kShape, " abs(", a, ")"); break;
        default:
          line = StrCat("  ", name, "s = ", kShape, " add(", a, ", ", b, ")\n  ", name,
                        "f = ", kShape, " floor(", name, "s)\n  ", name, " = ", kShape,
                        " subtract(", name, "s, ", name, "f)");
          break;
      }
    }
    used[ia] = true;
    if (line.find(b) != std::string::npos) used[ib] = true;
    c.lines.push_back(line);
    values.push_back(name);
    used.push_back(false);
  }
  // Fold whatever nothing read into the result, so that every step counts.
  std::string last = values.back();
  used.back() = true;
  int fold = 0;
  for (size_t i = inputs.size(); i < values.size(); ++i) {
    if (used[i]) continue;
    const std::string name = StrCat(prefix, "fold", fold++);
    c.lines.push_back(StrCat("  ", name, " = ", kShape, " add(", last, ", ", values[i], ")"));
    last = name;
  }
  c.last = last;
  return c;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const std::string& l : lines) StrAppend(&out, l, "\n");
  return out;
}

// ENTRY e(p0, p1) = the chain of `steps` steps.
std::string ChainModule(const std::string& name, int steps, uint32_t seed,
                        const Special& special = nullptr) {
  Chain c = MakeChain("", {"p0", "p1"}, steps, seed, special);
  return StrCat("HloModule ", name, "\n\nENTRY e {\n  p0 = ", kShape,
                " parameter(0)\n  p1 = ", kShape, " parameter(1)\n", Join(c.lines),
                "  ROOT r = ", kShape, " negate(", c.last, ")\n}\n");
}

// A while loop of 50 iterations whose body runs a chain over its state; step 40 of the body
// takes log(|a| + 29.5 - i), which first holds NaNs in iteration 30. Chains before and after
// the loop in the entry.
std::string LoopNaNModule() {
  Chain before = MakeChain("pre_", {"p0", "p1"}, 80, 11);
  Chain body = MakeChain(
      "b_", {"x", "y"}, 150, 12,
      [](int k, const std::string& name, const std::string& a, const std::string&) -> std::string {
        if (k != 40) return "";
        return StrCat("  ", name, "abs = ", kShape, " abs(", a, ")\n  ", name, "arg = ", kShape,
                      " add(", name, "abs, shift)\n  ", "seeded_log = ", kShape, " log(", name,
                      "arg)\n  ", name, " = ", kShape, " minimum(seeded_log, ", a, ")");
      });
  Chain after = MakeChain("post_", {"out"}, 40, 13);
  return StrCat(
      "HloModule loop_nan\n\ncond {\n  t = (s32[], ", kShape, ", ", kShape,
      ") parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n  n = s32[] constant(50)\n"
      "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n\nbody {\n  t = (s32[], ",
      kShape, ", ", kShape,
      ") parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n  x = ", kShape,
      " get-tuple-element(t), index=1\n  y = ", kShape,
      " get-tuple-element(t), index=2\n  fi = f32[] convert(i)\n  c = f32[] constant(29.5)\n"
      "  d = f32[] subtract(c, fi)\n  shift = ",
      kShape, " broadcast(d), dimensions={}\n", Join(body.lines),
      "  one = s32[] constant(1)\n"
      "  i2 = s32[] add(i, one)\n  ROOT next = (s32[], ",
      kShape, ", ", kShape, ") tuple(i2, ", body.last, ", y)\n}\n\nENTRY e {\n  p0 = ", kShape,
      " parameter(0)\n  p1 = ", kShape, " parameter(1)\n", Join(before.lines),
      "  zero = s32[] constant(0)\n  init = (s32[], ", kShape, ", ", kShape, ") tuple(zero, ",
      before.last, ", p1)\n  w = (s32[], ", kShape, ", ", kShape,
      ") while(init), condition=cond, body=body\n  out = ", kShape,
      " get-tuple-element(w), index=1\n", Join(after.lines), "  ROOT r = ", kShape, " negate(",
      after.last, ")\n}\n");
}

int64_t Count(const Module& m) { return reduce::CountInstructions(m); }

// The reduced module's text parsed back, run again: the same failure.
void ExpectFailsTheSameWay(const ReduceResult& r, const ReduceOptions& options,
                           bool verifier_failure = false) {
  ASSERT_NE(r.module, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> again = ParseModule(PrintModule(*r.module));
  ASSERT_TRUE(again.ok()) << again.status();
  const int errors = CountErrors(VerifyModule(**again));
  if (verifier_failure) {
    EXPECT_GT(errors, 0);
  } else {
    EXPECT_EQ(errors, 0) << PrintModule(**again);
  }
  reduce::OracleOptions oo;
  oo.kind = options.until;
  oo.replay = options.replay;
  oo.verifier_failure = verifier_failure;
  if (r.expected_result) {
    const Literal expected = *r.expected_result;
    oo.expected = [expected](const Module&) { return std::optional<Literal>(expected); };
  }
  reduce::FailureOracle oracle(std::move(oo));
  reduce::Observation o = oracle.Observe(**again, r.arguments, 60, nullptr);
  EXPECT_TRUE(o.failed) << o.description << "\n" << PrintModule(**again);
  EXPECT_TRUE(reduce::SameFailure(r.signature, o.signature)) << o.description;
  EXPECT_TRUE(r.verified) << r.reduced_failure;
}

void ExpectAtMostTenPercent(const ReduceResult& r) {
  EXPECT_GT(r.original_instructions, 100);
  EXPECT_LE(r.reduced_instructions * 10, r.original_instructions)
      << r.reduced_instructions << " of " << r.original_instructions << "\n"
      << PrintModule(*r.module);
  EXPECT_EQ(r.reduced_instructions, Count(*r.module));
}

bool HasInstruction(const Module& m, const std::string& name, Opcode opcode) {
  for (const auto& c : m.computations()) {
    const Instruction* i = c->FindInstruction(name);
    if (i != nullptr && i->opcode() == opcode) return true;
  }
  return false;
}

class ReduceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hlowb_reduce_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

// --- Library -----------------------------------------------------------------------------------

TEST_F(ReduceTest, WrongRewriteBetweenTwoStates) {
  auto state = [](const std::string& opcode) {
    return ChainModule("rewrite", 300, 7,
                       [opcode](int k, const std::string& name, const std::string& a,
                                const std::string& b) -> std::string {
                         if (k != 170) return "";
                         return StrCat("  ", name, " = ", kShape, " ", opcode, "(", a, ", ", b,
                                       ")");
                       });
  };
  std::unique_ptr<Module> before = Parse(state("add"));
  std::unique_ptr<Module> after = Parse(state("subtract"));
  ASSERT_NE(before, nullptr);
  ASSERT_NE(after, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kMismatch;
  options.reference_module = before.get();
  options.time_limit_seconds = 60;
  absl::StatusOr<ReduceResult> r = ReduceModule(*after, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_TRUE(HasInstruction(*r->module, "v170", Opcode::kSubtract)) << PrintModule(*r->module);
  ASSERT_TRUE(r->expected_result.has_value());
  ExpectFailsTheSameWay(*r, options);
}

// Shrinking shapes: once the module is small, the entry parameters lose halves of their
// dimensions while the failure holds. log of a sum of fake data is NaN only where the sum is
// negative, so the reduced array must keep such an element; every dimension ends at 1, and the
// module still verifies and fails the same way.
TEST_F(ReduceTest, ShrinksArraysWhileTheFailureHolds) {
  std::unique_ptr<Module> m = Parse(R"(HloModule shrink

ENTRY main {
  p0 = f32[64,48]{0,1} parameter(0)
  p1 = f32[64,48]{0,1} parameter(1)
  s = f32[64,48]{0,1} add(p0, p1)
  l = f32[64,48]{0,1} log(s)
  e = f32[64,48]{0,1} exponential(l)
  ROOT t = f32[64,48]{0,1} tanh(e)
}
)");
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  options.time_limit_seconds = 60;
  std::vector<std::string> phases;
  absl::StatusOr<ReduceResult> r =
      ReduceModule(*m, options, [&](const ReduceProgress& p) { phases.push_back(p.phase); });
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->signature.instruction, "l");
  EXPECT_NE(std::find(phases.begin(), phases.end(), "shapes"), phases.end());
  const Computation* entry = r->module->entry();
  ASSERT_NE(entry, nullptr);
  ASSERT_FALSE(entry->parameters().empty());
  for (const Instruction* p : entry->parameters()) {
    EXPECT_EQ(p->shape().dimensions(), (std::vector<int64_t>{1, 1})) << p->name();
    EXPECT_TRUE(p->shape().has_layout() && p->shape().layout().minor_to_major ==
                                               std::vector<int64_t>({0, 1}))
        << p->name();
  }
  const Instruction* log = entry->FindInstruction("l");
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->shape().dimensions(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(CountErrors(VerifyModule(*r->module)), 0);
  ExpectFailsTheSameWay(*r, options);
}

// A parameter whose extent is fixed by what reads it (a broadcast's declared shape) keeps it:
// the rewrite refuses instead of making a module that does not verify.
TEST(ReduceEdits, ShrinkParametersRefusesFixedShapes) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(R"(HloModule fixed

ENTRY main {
  p0 = f32[8]{0} parameter(0)
  b = f32[8,4]{1,0} broadcast(p0), dimensions={0}
  ROOT n = f32[8,4]{1,0} negate(b)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  reduce::Candidate c;
  c.module = std::move(*m);
  Literal arg(c.module->entry()->parameters()[0]->shape());
  for (int i = 0; i < 8; ++i) arg.mutable_data_as<float>()[i] = static_cast<float>(i);
  c.arguments.push_back(std::move(arg));
  reduce::Candidate copy = reduce::CopyCandidate(c);
  EXPECT_FALSE(reduce::ShrinkParameters(&copy, {"p0"}, 0, 4, 4));
  EXPECT_FALSE(reduce::ShrinkParameters(&c, {"p0"}, 1, 0, 1));   // no such dimension
  EXPECT_FALSE(reduce::ShrinkParameters(&c, {"nope"}, 0, 0, 4));  // no such parameter

  // Elementwise users follow, and the argument keeps the chosen window, in row-major order.
  absl::StatusOr<std::unique_ptr<Module>> m2 = ParseModule(R"(HloModule follow

ENTRY main {
  p0 = f32[4,3]{1,0} parameter(0)
  ROOT n = f32[4,3]{1,0} negate(p0)
}
)");
  ASSERT_TRUE(m2.ok()) << m2.status();
  reduce::Candidate d;
  d.module = std::move(*m2);
  Literal a2(d.module->entry()->parameters()[0]->shape());
  for (int i = 0; i < 12; ++i) a2.mutable_data_as<float>()[i] = static_cast<float>(i);
  d.arguments.push_back(std::move(a2));
  ASSERT_TRUE(reduce::ShrinkParameters(&d, {"p0"}, 0, 2, 2));
  EXPECT_EQ(d.module->entry()->root()->shape().dimensions(), (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(d.arguments[0].element_count(), 6);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(d.arguments[0].data_as<float>()[i], 6.0f + i) << i;
  ASSERT_TRUE(reduce::ShrinkParameters(&d, {"p0"}, 1, 1, 1));
  ASSERT_EQ(d.arguments[0].element_count(), 2);
  EXPECT_EQ(d.arguments[0].data_as<float>()[0], 7.0f);
  EXPECT_EQ(d.arguments[0].data_as<float>()[1], 10.0f);
  EXPECT_EQ(CountErrors(VerifyModule(*d.module)), 0);
}

TEST_F(ReduceTest, NaNInsideAWhileLoop) {
  std::unique_ptr<Module> m = Parse(LoopNaNModule());
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  options.time_limit_seconds = 60;
  std::vector<std::string> phases;
  absl::StatusOr<ReduceResult> r =
      ReduceModule(*m, options, [&](const ReduceProgress& p) { phases.push_back(p.phase); });
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_EQ(r->signature.instruction, "seeded_log");
  EXPECT_EQ(r->signature.opcode, "log");
  EXPECT_NE(r->failure.find("iteration 30 of %w"), std::string::npos) << r->failure;
  EXPECT_TRUE(HasInstruction(*r->module, "seeded_log", Opcode::kLog));
  EXPECT_FALSE(phases.empty());
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, CrashInACustomCallHandler) {
  std::unique_ptr<Module> m = Parse(ChainModule(
      "crash", 200, 5,
      [](int k, const std::string& name, const std::string& a, const std::string&) -> std::string {
        if (k != 120) return "";
        return StrCat("  ", name, " = ", kShape, " custom-call(", a,
                      "), custom_call_target=\"boom\"");
      }));
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kCrash;
  options.time_limit_seconds = 60;
  // A handler with a bug: it dies of SIGSEGV. Candidates run in children, so the test survives.
  options.replay.custom_call = [](const Instruction& instr, const std::vector<const Literal*>&,
                                  DeviceCollectives*) -> absl::StatusOr<Literal> {
    if (instr.attrs_or_default().custom_call_target == "boom") std::raise(SIGSEGV);
    return absl::UnimplementedError("no handler");
  };
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_EQ(r->signature.signal, SIGSEGV);
  EXPECT_TRUE(HasInstruction(*r->module, "v120", Opcode::kCustomCall)) << PrintModule(*r->module);
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, MismatchBetweenTheInterpreterAndCpu) {
  // Exact operations agree bit for bit on both platforms; tanh does not (the cpu platform's
  // kernel is a polynomial, the interpreter's the C library's), so with zero error bounds the
  // mismatch starts at the tanh.
  std::unique_ptr<Module> m = Parse(ChainModule(
      "cpu_mismatch", 100, 3,
      [](int k, const std::string& name, const std::string& a, const std::string&) -> std::string {
        if (k != 60) return "";
        return StrCat("  ", name, " = ", kShape, " tanh(", a, ")");
      }));
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kMismatch;
  options.replay.platform = "cpu";
  options.replay.reference_platform = "interpreter";
  options.replay.bounds.abs = 0;
  options.replay.bounds.rel = 0;
  options.replay.cpu.cache_dir.clear();
  options.time_limit_seconds = 120;
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_TRUE(HasInstruction(*r->module, "v60", Opcode::kTanh)) << PrintModule(*r->module);
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, VerifierError) {
  std::unique_ptr<Module> m =
      Parse(ChainModule("bad_shape", 300, 9,
                        [](int k, const std::string& name, const std::string& a,
                           const std::string& b) -> std::string {
                          if (k != 200) return "";
                          return StrCat("  ", name, " = f32[16,9] add(", a, ", ", b, ")");
                        }));
  ASSERT_NE(m, nullptr);
  ASSERT_GT(CountErrors(VerifyModule(*m)), 0);
  ReduceOptions options;
  options.until = FailureKind::kError;
  options.time_limit_seconds = 60;
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_TRUE(r->signature.verifier);
  EXPECT_NE(r->signature.message.find("%v#"), std::string::npos) << r->signature.message;
  EXPECT_TRUE(HasInstruction(*r->module, "v200", Opcode::kAdd)) << PrintModule(*r->module);
  ExpectFailsTheSameWay(*r, options, /*verifier_failure=*/true);
}

TEST_F(ReduceTest, ErrorKeepsTheSameErrorNotAnyError) {
  // The replay fails at the custom call without a handler; the reduction keeps that error.
  std::unique_ptr<Module> m = Parse(ChainModule(
      "unimplemented", 150, 4,
      [](int k, const std::string& name, const std::string& a, const std::string&) -> std::string {
        if (k != 100) return "";
        return StrCat("  ", name, " = ", kShape, " custom-call(", a,
                      "), custom_call_target=\"not_here\"");
      }));
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kError;
  options.time_limit_seconds = 60;
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectAtMostTenPercent(*r);
  EXPECT_FALSE(r->signature.verifier);
  EXPECT_NE(r->signature.message.find("not_here"), std::string::npos) << r->signature.message;
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, ErrorInsideALoopBodyMakesTheBodyTheEntry) {
  // The custom call without a handler runs in the loop body; the error names it, so its
  // computation becomes the entry (on fake data: the error does not depend on values).
  std::unique_ptr<Module> m = Parse(R"(HloModule loop_error
cond {
  t = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(40)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  t = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  x = f32[8] get-tuple-element(t), index=1
  a = f32[8] negate(x)
  b = f32[8] abs(a)
  c = f32[8] add(a, b)
  bad = f32[8] custom-call(c), custom_call_target="not_here"
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[8]) tuple(i2, bad)
}
ENTRY e {
  p = f32[8] parameter(0)
  q = f32[8] exponential(p)
  z = s32[] constant(0)
  init = (s32[], f32[8]) tuple(z, q)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  out = f32[8] get-tuple-element(w), index=1
  ROOT r = f32[8] negate(out)
})");
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kError;
  options.time_limit_seconds = 60;
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->reduced_instructions, 2) << PrintModule(*r->module);
  EXPECT_EQ(r->module->entry()->name(), "body");
  EXPECT_TRUE(HasInstruction(*r->module, "bad", Opcode::kCustomCall));
  // The note naming the loop the error came out of is not part of the failure.
  EXPECT_EQ(r->signature.message.find("%w (while)"), std::string::npos) << r->signature.message;
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, RejectsWhatCannotBeReduced) {
  std::unique_ptr<Module> m = Parse(ChainModule("fine", 50, 1));
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("does not reproduce"), std::string::npos) << r.status();

  options.until = FailureKind::kMismatch;
  r = ReduceModule(*m, options);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(r.status())) << r.status();

  options.until = FailureKind::kCrash;
  r = ReduceModule(*m, options);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("did not crash"), std::string::npos) << r.status();
}

TEST_F(ReduceTest, CancelAndTimeLimitReturnTheSmallestSoFar) {
  std::unique_ptr<Module> m = Parse(LoopNaNModule());
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  CancelToken cancel;
  // Cancelled as soon as the first step was kept.
  absl::StatusOr<ReduceResult> r = ReduceModule(
      *m, options,
      [&](const ReduceProgress& p) {
        if (p.accepted > 0) cancel.Cancel();
      },
      &cancel);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stopped, "cancelled");
  EXPECT_EQ(r->accepted, 1);
  EXPECT_LT(r->reduced_instructions, r->original_instructions);
  EXPECT_TRUE(r->verified) << r->reduced_failure;

  options.time_limit_seconds = 0.001;
  r = ReduceModule(*m, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->stopped, "time limit");
  EXPECT_EQ(r->reduced_instructions, r->original_instructions);
  EXPECT_TRUE(r->verified);
}

TEST(ReduceEdits, TripCountOfAConstantBound) {
  std::unique_ptr<Module> m = Parse(testing::kLoopNaNModule);
  ASSERT_NE(m, nullptr);
  std::vector<reduce::TripBound> bounds = reduce::FindTripBounds(*m);
  ASSERT_EQ(bounds.size(), 1u);
  EXPECT_EQ(bounds[0].computation, "cond");
  EXPECT_EQ(bounds[0].value, 6);
  reduce::Candidate c{std::move(m), {}};
  ASSERT_TRUE(reduce::SetTripBound(&c, bounds[0], 4));
  EXPECT_EQ(reduce::FindTripBounds(*c.module)[0].value, 4);
}

TEST(ReduceEdits, ReplaceWithParametersKeepsNamesAndDropsTheDead) {
  std::unique_ptr<Module> m = Parse(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[4] negate(a)
  ROOT c = f32[4] add(b, p)
})");
  ASSERT_NE(m, nullptr);
  reduce::Candidate c{std::move(m), {testing::Lit("f32[4]{0} {1, 2, 3, 4}")}};
  std::vector<std::pair<std::string, Literal>> values;
  values.emplace_back("b", testing::Lit("f32[4]{0} {5, 6, 7, 8}"));
  ASSERT_EQ(reduce::ReplaceWithParameters(&c, std::move(values)), 1);
  reduce::Cleanup(&c, false);
  EXPECT_EQ(CountErrors(VerifyModule(*c.module)), 0) << PrintModule(*c.module);
  EXPECT_EQ(c.module->entry()->FindInstruction("a"), nullptr);
  const Instruction* b = c.module->entry()->FindInstruction("b");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->opcode(), Opcode::kParameter);
  ASSERT_EQ(c.arguments.size(), 2u);
  EXPECT_EQ(c.arguments[b->parameter_number()], testing::Lit("f32[4]{0} {5, 6, 7, 8}"));

  // The original parameter, once unused, goes with its argument.
  ASSERT_TRUE(reduce::CutAt(&c, "b").ok());
  reduce::Cleanup(&c, false);
  EXPECT_EQ(reduce::CountInstructions(*c.module), 1);
  ASSERT_EQ(c.arguments.size(), 1u);
  EXPECT_EQ(c.arguments[0], testing::Lit("f32[4]{0} {5, 6, 7, 8}"));
}

// --- Command line ------------------------------------------------------------------------------

TEST_F(ReduceTest, CliWrongRewriteReproducesWithReplay) {
  auto state = [](const std::string& opcode) {
    return ChainModule("rewrite", 200, 8,
                       [opcode](int k, const std::string& name, const std::string& a,
                                const std::string& b) -> std::string {
                         if (k != 120) return "";
                         return StrCat("  ", name, " = ", kShape, " ", opcode, "(", a, ", ", b,
                                       ")");
                       });
  };
  const std::string before = Write("before.hlo", state("add"));
  const std::string after = Write("after.hlo", state("subtract"));
  const std::string out = Path("reduced.hlo");
  testing::CommandResult r =
      RunHlowb("reduce " + after + " --until=mismatch --reference_module=" + before + " -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(checked: fails the same way)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reproduce: hlowb replay " + out +
                       " --input_literals_file=" + Path("reduced.literals.pb")),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("instructions left"), std::string::npos) << r.out;  // progress
  // The literals file carries the arguments and the reference module's value: replay compares.
  testing::CommandResult replay =
      RunHlowb("replay " + out + " --input_literals_file=" + Path("reduced.literals.pb"));
  EXPECT_EQ(replay.code, 1) << replay.out;
  EXPECT_NE(replay.out.find("MISMATCH"), std::string::npos) << replay.out;
  std::unique_ptr<Module> reduced = Parse([&] {
    std::ifstream in(out);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }());
  ASSERT_NE(reduced, nullptr);
  EXPECT_TRUE(HasInstruction(*reduced, "v120", Opcode::kSubtract));
}

TEST_F(ReduceTest, CliNaNInsideAWhileLoop) {
  const std::string in = Write("loop.hlo", LoopNaNModule());
  const std::string out = Path("loop_reduced.hlo");
  testing::CommandResult r = RunHlowb("reduce " + in + " --until=nonfinite -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("NaN introduced by %seeded_log (log) in %body, iteration 30 of %w"),
            std::string::npos)
      << r.out;
  testing::CommandResult replay =
      RunHlowb("replay " + out + " --input_literals_file=" + Path("loop_reduced.literals.pb") +
               " --find_nonfinite");
  EXPECT_EQ(replay.code, 1) << replay.out;
  EXPECT_NE(replay.out.find("NaN introduced by %seeded_log (log)"), std::string::npos)
      << replay.out;
}

TEST_F(ReduceTest, CliCrashInACustomCallPlugin) {
  const std::string library = HLOWB_FFI_TEST_LIBRARY;
  if (library.empty()) {
    GTEST_SKIP() << "this build has no XLA FFI support: the FFI headers come with jaxlib "
                    "(scripts/setup installs it into .venv; reconfigure afterwards)";
  }
  const std::string in =
      Write("crash.hlo", ChainModule("plugin_crash", 200, 6,
                                     [](int k, const std::string& name, const std::string& a,
                                        const std::string&) -> std::string {
                                       if (k != 100) return "";
                                       return StrCat("  ", name, " = ", kShape, " custom-call(", a,
                                                     "), custom_call_target=\"crash\", "
                                                     "api_version=API_VERSION_TYPED_FFI");
                                     }));
  const std::string out = Path("crash_reduced.hlo");
  const std::string plugin = " --custom_call_library=" + library + ",crash=HlowbTestCrash";
  testing::CommandResult r = RunHlowb("reduce " + in + " --until=crash -o " + out + plugin);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("failure (--until=crash): crashed (SIGSEGV)"), std::string::npos) << r.out;
  std::unique_ptr<Module> reduced = Parse([&] {
    std::ifstream f(out);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  }());
  ASSERT_NE(reduced, nullptr);
  EXPECT_LE(reduce::CountInstructions(*reduced) * 10, 200);
  EXPECT_TRUE(HasInstruction(*reduced, "v100", Opcode::kCustomCall));
  // Replaying the reduced module crashes the same way (the shell reports 128 + SIGSEGV).
  const std::string literals = fs::exists(Path("crash_reduced.literals.pb"))
                                   ? " --input_literals_file=" + Path("crash_reduced.literals.pb")
                                   : std::string();
  testing::CommandResult replay = RunHlowb("replay " + out + literals + plugin);
  EXPECT_TRUE(replay.code == -1 || replay.code == 128 + SIGSEGV) << replay.code << replay.out;
}

TEST_F(ReduceTest, CliVerifierError) {
  const std::string in = Write(
      "bad.hlo", ChainModule("bad_shape", 200, 2,
                             [](int k, const std::string& name, const std::string& a,
                                const std::string& b) -> std::string {
                               if (k != 150) return "";
                               return StrCat("  ", name, " = f32[16,9] add(", a, ", ", b, ")");
                             }));
  const std::string out = Path("bad_reduced.hlo");
  testing::CommandResult r = RunHlowb("reduce " + in + " --until=error -o " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("reproduce: hlowb verify " + out), std::string::npos) << r.out;
  testing::CommandResult verify = RunHlowb("verify " + out);
  EXPECT_NE(verify.code, 0) << verify.out;
  EXPECT_NE(verify.out.find("v150"), std::string::npos) << verify.out;
}

TEST_F(ReduceTest, CliBadInput) {
  const std::string good = Write("fine.hlo", ChainModule("fine", 20, 1));
  const std::string out = Path("o.hlo");

  testing::CommandResult r = RunHlowb("reduce " + good + " --until=sometimes -o " + out);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("unknown --until 'sometimes'"), std::string::npos) << r.out;

  r = RunHlowb("reduce " + good + " --until=nonfinite");
  EXPECT_EQ(r.code, 2) << r.out;

  r = RunHlowb("reduce " + good + " --until=mismatch -o " + out);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--reference_platform=P and --reference_module=FILE"), std::string::npos)
      << r.out;

  r = RunHlowb("reduce " +
               Write("broken.hlo", "HloModule x\nENTRY e {\n  p = f32[ parameter(0)\n}\n") +
               " --until=error -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("error: "), std::string::npos) << r.out;

  r = RunHlowb("reduce " + good + " --until=nonfinite -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("does not reproduce on the original module (--until=nonfinite): no NaN or "
                       "Inf appears"),
            std::string::npos)
      << r.out;
  EXPECT_FALSE(fs::exists(out));

  r = RunHlowb("reduce " + Path("absent.hlo") + " --until=crash -o " + out);
  EXPECT_EQ(r.code, 1) << r.out;

  r = RunHlowb("reduce " + good + " --until=crash -o " + out + " --time_limit=soon");
  EXPECT_EQ(r.code, 2) << r.out;
}

// --- Corpus ------------------------------------------------------------------------------------

std::string ReadCorpus(const std::string& name) {
  const fs::path p = fs::path(HLOWB_CORPUS_DIR) / "benchmarks" / name;
  std::ifstream in(p);
  if (!in) return "";
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// After the line defining `target` (HLO text; names with or without '%'), `seed` defines
// %nan_seed from it; every other use of `target` reads %nan_seed instead.
std::string SeedAfter(const std::string& text, const std::string& target, const std::string& seed) {
  std::istringstream in(text);
  std::string line, out;
  const std::string def1 = "  " + target + " = ";
  const std::string def2 = "  %" + target + " = ";
  while (std::getline(in, line)) {
    const bool defines = line.rfind(def1, 0) == 0 || line.rfind(def2, 0) == 0;
    if (!defines) {
      for (const std::string& ref : {"%" + target + ",", "%" + target + ")", " " + target + ",",
                                     "(" + target + ",", " " + target + ")", "(" + target + ")"}) {
        size_t at = 0;
        while ((at = line.find(ref, at)) != std::string::npos) {
          const size_t name_at = at + (ref[0] == '%' ? 1 : 1);
          line.replace(name_at, target.size(), "nan_seed");
          at = name_at + 8;
        }
      }
    }
    out += line + "\n";
    if (defines) out += seed + "\n";
  }
  return out;
}

TEST_F(ReduceTest, SsdMobilenetWithASeededNaN) {
  const std::string text = ReadCorpus("xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo");
  if (text.empty()) GTEST_SKIP() << "corpus not found under " << HLOWB_CORPUS_DIR;
  // Deep in the graph (the 19x19 feature map): log(-x) of a batch-norm output, which is
  // positive there, so every element turns NaN.
  const std::string seeded =
      SeedAfter(text, "FusedBatchNormV3.173",
                "  %nan_seed.neg = bf16[1,19,19,512]{3,2,1,0} negate(%FusedBatchNormV3.173)\n"
                "  %nan_seed = bf16[1,19,19,512]{3,2,1,0} log(%nan_seed.neg)");
  std::unique_ptr<Module> m = Parse(seeded);
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  options.time_limit_seconds = 120;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << "ssd_mobilenet with a seeded NaN: " << r->original_instructions << " -> "
            << r->reduced_instructions << " instructions in " << seconds << " s\n";
  ExpectAtMostTenPercent(*r);
  EXPECT_EQ(r->signature.instruction, "nan_seed");
  EXPECT_LE(seconds, 60);
  ExpectFailsTheSameWay(*r, options);
}

TEST_F(ReduceTest, AttentionModelWithASeededNaN) {
  if (std::getenv("HLOWB_REDUCE_TIMING") == nullptr) {
    GTEST_SKIP() << "takes minutes; set HLOWB_REDUCE_TIMING=1 to run it";
  }
  const std::string text = ReadCorpus("xla__service__attention_model.hlo");
  if (text.empty()) GTEST_SKIP() << "corpus not found under " << HLOWB_CORPUS_DIR;
  // Inside the inner training loop's body (the L2 loss of a gradient, in the backward pass of
  // its first iteration): log(-x) of a value that is zero there, so -inf.
  const std::string seeded =
      SeedAfter(text, "multiply.3928",
                "  nan_seed.negate = f32[2,2,64]{2,1,0} negate(multiply.3928)\n"
                "  nan_seed = f32[2,2,64]{2,1,0} log(nan_seed.negate)");
  std::unique_ptr<Module> m = Parse(seeded);
  ASSERT_NE(m, nullptr);
  ReduceOptions options;
  options.until = FailureKind::kNonfinite;
  options.replay.host_transfers = HostTransferMode::kFake;
  options.time_limit_seconds = 600;
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<ReduceResult> r = ReduceModule(*m, options, [](const ReduceProgress& p) {
    std::cout << "  " << p.elapsed_seconds << " s: " << p.phase << ", " << p.instructions
              << " instructions\n";
  });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(r.ok()) << r.status();
  std::cout << "attention_model with a seeded NaN: " << r->original_instructions << " -> "
            << r->reduced_instructions << " instructions in " << seconds << " s\n";
  ExpectAtMostTenPercent(*r);
  EXPECT_EQ(r->signature.instruction, "nan_seed");
  EXPECT_LE(seconds, 300);
  ExpectFailsTheSameWay(*r, options);
}

}  // namespace
}  // namespace hlowb
