// Per-instruction isolation: the status table for interpreter against interpreter (all
// MATCHED), a test platform that disagrees on one instruction (MISMATCH, sorted last), one that
// fails (RUNTIME ERROR), custom calls (reference SKIPPED), instructions that cannot run alone,
// and inputs taken from the full run rather than fake data.
#include "replay/compare/isolation.h"

#include <unistd.h>

#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "plugins/builtin/builtin_plugins.h"
#include "replay/evaluator/evaluator.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

constexpr char kModule[] = R"(
HloModule iso
fused {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  m = f32[4] multiply(p0, p1)
  ROOT t = f32[4] tanh(m)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  f = f32[4] fusion(a, x), kind=kLoop, calls=fused
  c = f32[] constant(2)
  b = f32[4] broadcast(c), dimensions={}
  s = f32[4] subtract(f, b)
  ROOT r = (f32[4], f32[4]) tuple(s, a)
}
)";

std::vector<Literal> Args() {
  std::vector<Literal> args;
  args.push_back(Lit("f32[4]{0} {1, 2, 3, 4}"));
  args.push_back(Lit("f32[4]{0} {0.5, -1, 2, 0}"));
  return args;
}

TEST(IsolateInstructions, InterpreterAgainstInterpreterAllMatch) {
  auto m = Parse(kModule);
  IsolationOptions o;
  auto r = IsolateInstructions(*m, Args(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  // a, f, b, s get rows; parameters, the constant and the tuple do not.
  ASSERT_EQ(r->rows.size(), 4u);
  for (const IsolatedInstruction& row : r->rows) {
    EXPECT_EQ(row.test, IsolationStatus::kMatched) << row.name << ": " << row.status;
    EXPECT_EQ(row.reference, IsolationStatus::kMatched) << row.name;
    EXPECT_EQ(row.status, "OK");
  }
  EXPECT_TRUE(r->ok());
  EXPECT_EQ(r->Count(IsolationStatus::kMatched), 4);
  std::string table = r->ToTable();
  EXPECT_NE(table.find(" Reference            | Test                 | Instruction"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find(" MATCHED              | MATCHED              | 4"), std::string::npos)
      << table;
}

TEST(IsolateInstructions, CpuPlatformCompilesEachInstructionAndMatches) {
  auto m = Parse(kModule);
  IsolationOptions o;
  o.platform = kCpuPlatform;
  const std::filesystem::path cache =
      std::filesystem::temp_directory_path() / ("hlowb_iso_cpu_" + std::to_string(::getpid()));
  std::error_code ec;
  std::filesystem::remove_all(cache, ec);
  o.cpu.cache_dir = cache.string();
  auto r = IsolateInstructions(*m, Args(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 4u);
  for (const IsolatedInstruction& row : r->rows) {
    EXPECT_EQ(row.test, IsolationStatus::kMatched) << row.name << ": " << row.status;
  }
  // The test side really compiled kernels: the cpu platform's kernel cache was filled.
  int entries = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(cache, ec)) {
    entries += e.is_regular_file() ? 1 : 0;
  }
  EXPECT_GT(entries, 0);
  std::filesystem::remove_all(cache, ec);
}

TEST(IsolateInstructions, InputsComeFromTheFullRun) {
  // A test platform that reports what it was fed: the fusion's first operand must be the full
  // run's value of `a` (x + y), not fake data.
  auto m = Parse(kModule);
  IsolationOptions o;
  std::vector<Literal> fed;
  o.test_runner = [&fed](const Module& piece,
                         const std::vector<Literal>& args) -> absl::StatusOr<Literal> {
    if (piece.entry()->root()->name() == "f") fed = args;
    return EvaluateModule(piece, args);
  };
  auto r = IsolateInstructions(*m, Args(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  // Parameters follow the original instruction order: x, then a.
  ASSERT_EQ(fed.size(), 2u);
  EXPECT_EQ(fed[0], Lit("f32[4]{0} {1, 2, 3, 4}"));
  EXPECT_EQ(fed[1], Lit("f32[4]{0} {1.5, 1, 5, 4}"));
}

TEST(IsolateInstructions, DisagreeingAndFailingPlatformsSortLast) {
  auto m = Parse(kModule);
  IsolationOptions o;
  o.test_runner = [](const Module& piece,
                     const std::vector<Literal>& args) -> absl::StatusOr<Literal> {
    const std::string& root = piece.entry()->root()->name();
    if (root == "s") return absl::InternalError("backend crashed on subtract");
    absl::StatusOr<Literal> r = EvaluateModule(piece, args);
    if (r.ok() && root == "f") r->mutable_data_as<float>()[2] += 0.5f;  // a wrong element
    return r;
  };
  auto r = IsolateInstructions(*m, Args(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_FALSE(r->ok());
  // run_hlo_module's order: MATCHED first, then RUNTIME ERROR, MISMATCH last.
  EXPECT_EQ(r->rows[0].test, IsolationStatus::kMatched);
  EXPECT_EQ(r->rows[1].test, IsolationStatus::kMatched);
  EXPECT_EQ(r->rows[2].name, "s");
  EXPECT_EQ(r->rows[2].test, IsolationStatus::kRuntimeError);
  EXPECT_NE(r->rows[2].status.find("backend crashed"), std::string::npos);
  EXPECT_EQ(r->rows[3].name, "f");
  EXPECT_EQ(r->rows[3].test, IsolationStatus::kMismatch);
  EXPECT_EQ(r->rows[3].reference, IsolationStatus::kMismatch);
  ASSERT_TRUE(r->rows[3].comparison.has_value());
  EXPECT_EQ(r->rows[3].comparison->total_mismatches(), 1);
  EXPECT_NE(r->rows[3].status.find("1 mismatching element"), std::string::npos)
      << r->rows[3].status;
  std::string table = r->ToTable();
  EXPECT_LT(table.find("| s "), table.find("| f "));
}

TEST(IsolateInstructions, NoReferencePlatformMeansRan) {
  auto m = Parse(kModule);
  IsolationOptions o;
  o.reference_platform.clear();
  auto r = IsolateInstructions(*m, Args(), o);
  ASSERT_TRUE(r.ok()) << r.status();
  for (const IsolatedInstruction& row : r->rows) {
    EXPECT_EQ(row.test, IsolationStatus::kRan);
    EXPECT_EQ(row.reference, IsolationStatus::kDidntRun);
  }
}

TEST(IsolateInstructions, CustomCallsSkipTheReferenceAndStatefulOpsCannotRunAlone) {
  auto m = Parse(R"(
HloModule cc
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
  tok = token[] after-all()
  o = u64[2] rng-get-and-update-state(), delta=4
  ROOT n = f32[2,2] negate(g)
}
)");
  auto d = CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), {});
  IsolationOptions o;
  o.custom_call = d->AsFunction();
  std::vector<Literal> args;
  args.push_back(Lit("f32[2,3]{1,0} {{1, 2, 3}, {4, 5, 6}}"));
  args.push_back(Lit("f32[3,2]{1,0} {{1, 0}, {0, 1}, {1, 1}}"));
  auto r = IsolateInstructions(*m, args, o);
  ASSERT_TRUE(r.ok()) << r.status();
  std::map<std::string, IsolatedInstruction> by_name;
  for (const IsolatedInstruction& row : r->rows) by_name[row.name] = row;
  ASSERT_EQ(by_name.count("g"), 1u);
  EXPECT_EQ(by_name["g"].test, IsolationStatus::kRan);
  EXPECT_EQ(by_name["g"].reference, IsolationStatus::kSkipped);
  EXPECT_EQ(by_name["o"].test, IsolationStatus::kSkipped);
  EXPECT_EQ(by_name["tok"].test, IsolationStatus::kSkipped);
  EXPECT_EQ(by_name["n"].test, IsolationStatus::kMatched);
  EXPECT_TRUE(r->ok());
}

TEST(IsolateInstructions, UnknownPlatformIsAnError) {
  auto m = Parse(kModule);
  IsolationOptions o;
  o.platform = "tpu";
  EXPECT_FALSE(IsolateInstructions(*m, Args(), o).ok());
  o.platform = "interpreter";
  EXPECT_FALSE(IsolateInstructions(*m, {Lit("f32[4]{0} {1, 2, 3, 4}")}, o).ok());
}

}  // namespace
}  // namespace hlowb
