// Extraction (`hlowb extract`): which instructions a given height keeps, what becomes a
// parameter, called computations copied along, and output that parses, verifies and computes
// what the original computed at that instruction.
#include "replay/compare/extract.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"
#include "replay/evaluator/evaluator.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

constexpr char kModule[] = R"(
HloModule ex
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
fused {
  f0 = f32[4] parameter(0)
  ROOT e = f32[4] exponential(f0)
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  a = f32[4] add(x, y)
  m = f32[4] multiply(a, x)
  f = f32[4] fusion(m), kind=kLoop, calls=fused
  zero = f32[] constant(0)
  r = f32[] reduce(f, zero), dimensions={0}, to_apply=add
  ROOT out = (f32[], f32[4]) tuple(r, a)
}
)";

std::vector<std::string> Names(const Computation& c) {
  std::vector<std::string> out;
  for (const Instruction* i : c.instructions()) {
    out.push_back(StrCat(i->name(), i->opcode() == Opcode::kParameter ? "(p)" : ""));
  }
  return out;
}

TEST(ExtractModule, HeightDecidesWhatBecomesAParameter) {
  auto m = Parse(kModule);
  const Instruction* r = m->entry()->FindInstruction("r");
  auto h0 = ExtractModule(*m, *r, 0);
  ASSERT_TRUE(h0.ok()) << h0.status();
  // The constant stays a constant; the fusion becomes a parameter.
  EXPECT_EQ(Names(*h0->module->entry()), (std::vector<std::string>{"f(p)", "zero", "r"}));
  ASSERT_EQ(h0->parameter_sources.size(), 1u);
  EXPECT_EQ(h0->parameter_sources[0]->name(), "f");
  EXPECT_NE(h0->module->FindComputation("add"), nullptr);
  EXPECT_EQ(h0->module->FindComputation("fused"), nullptr);

  auto h2 = ExtractModule(*m, *r, 2);
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(Names(*h2->module->entry()),
            (std::vector<std::string>{"x(p)", "a(p)", "m", "f", "zero", "r"}));
  EXPECT_NE(h2->module->FindComputation("fused"), nullptr);

  auto all = ExtractModule(*m, *r, -1);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(Names(*all->module->entry()),
            (std::vector<std::string>{"x(p)", "y(p)", "a", "m", "f", "zero", "r"}));
  EXPECT_EQ(all->module->entry()->root()->name(), "r");
}

TEST(ExtractModule, ConstantsOnlyWhereAKeptInstructionReadsThem) {
  auto m = Parse(R"(
HloModule c
ENTRY e {
  x = f32[4] parameter(0)
  c = f32[] constant(3)
  b = f32[4] broadcast(c), dimensions={}
  a = f32[4] add(x, b)
  ROOT n = f32[4] negate(a)
}
)");
  const Instruction* n = m->entry()->FindInstruction("n");
  auto h0 = ExtractModule(*m, *n, 0);
  ASSERT_TRUE(h0.ok());
  EXPECT_EQ(Names(*h0->module->entry()), (std::vector<std::string>{"a(p)", "n"}));
  auto h1 = ExtractModule(*m, *n, 1);
  ASSERT_TRUE(h1.ok());
  EXPECT_EQ(Names(*h1->module->entry()), (std::vector<std::string>{"x(p)", "b(p)", "a", "n"}));
  auto h2 = ExtractModule(*m, *n, 2);
  ASSERT_TRUE(h2.ok());
  EXPECT_EQ(Names(*h2->module->entry()), (std::vector<std::string>{"x(p)", "c", "b", "a", "n"}));
}

TEST(ExtractModule, OutputParsesVerifiesAndComputesTheSameValue) {
  auto m = Parse(kModule);
  std::vector<Literal> args{Lit("f32[4]{0} {0.1, 0.2, 0.3, 0.4}"), Lit("f32[4]{0} {1, 2, 3, 4}")};
  auto full = EvaluateModule(*m, args);
  ASSERT_TRUE(full.ok());
  for (int height : {-1, 1, 3}) {
    auto piece = ExtractModule(*m, *m->entry()->FindInstruction("r"), height);
    ASSERT_TRUE(piece.ok());
    std::string text = PrintModule(*piece->module);
    auto reparsed = ParseModule(text);
    ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << text;
    EXPECT_EQ(CountErrors(VerifyModule(**reparsed)), 0) << text;
    if (height == -1) {
      auto v = EvaluateModule(**reparsed, args);
      ASSERT_TRUE(v.ok()) << v.status();
      EXPECT_EQ(*v, full->tuple_elements()[0]);
    }
  }
}

TEST(ExtractModule, InstructionsInsideCalledComputations) {
  auto m = Parse(kModule);
  auto e = FindInstructionByName(*m, "%e");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->parent()->name(), "fused");
  auto piece = ExtractModule(*m, **e, 0);
  ASSERT_TRUE(piece.ok());
  EXPECT_EQ(piece->module->entry()->name(), "fused");
  EXPECT_EQ(CountErrors(VerifyModule(*piece->module)), 0);
  auto missing = FindInstructionByName(*m, "mul");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(absl::IsNotFound(missing.status()));
}

using Result = testing::CommandResult;
Result Hlowb(const std::string& args) { return testing::RunHlowb(args); }

TEST(ExtractCli, PrintsAModuleThatParsesAndVerifies) {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("hlowb_extract_" + std::to_string(getpid()) + ".hlo"))
                         .string();
  ASSERT_TRUE(WriteStringToFile(path, kModule).ok());
  Result r = Hlowb("extract " + path + " --instruction=m --height=1");
  EXPECT_EQ(r.code, 0) << r.out;
  auto parsed = ParseModule(r.out);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << r.out;
  EXPECT_EQ(CountErrors(VerifyModule(**parsed)), 0);
  EXPECT_EQ((*parsed)->entry()->root()->name(), "m");
  EXPECT_EQ((*parsed)->entry()->parameter_count(), 2);  // x, y: a is kept at height 1

  Result missing = Hlowb("extract " + path + " --instruction=nope");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.out.find("no instruction named 'nope'"), std::string::npos) << missing.out;
  Result usage = Hlowb("extract " + path);
  EXPECT_EQ(usage.code, 2);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hlowb
