// The pass framework: pipelines, fixed points, options, verification, fuel, dumps, and the
// editing toolkit the passes share.
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/dump/dump_names.h"
#include "core/passes/hlo_dce.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/module_dumper.h"
#include "core/passes/pass_pipeline.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "tests/unit/passes/pass_test_util.h"

namespace hlowb {
namespace {

using testing::ExpectNoChange;
using testing::ExpectRewrite;
using testing::Normalize;
using testing::NormalizeText;
using testing::ParseOrDie;

constexpr char kDeadCode[] = R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  dead = f32[4] multiply(p0, p1)
  dead2 = f32[4] exponential(dead)
  ROOT add = f32[4] add(p0, p1)
}
)";

TEST(HloDce, RemovesUnusedInstructions) {
  HloDce dce;
  ExpectRewrite(dce, kDeadCode, R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  ROOT add = f32[4] add(p0, p1)
}
)");
}

TEST(HloDce, KeepsSideEffectsAndUnusedParameters) {
  HloDce dce;
  ExpectNoChange(dce, R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  tok = token[] after-all()
  out = token[] outfeed(p1, tok), outfeed_shape=f32[4]{0}
  ROOT n = f32[4] negate(p0)
}
)");
}

TEST(HloDce, RemovesComputationsNothingCalls) {
  HloDce dce;
  ExpectRewrite(dce, R"(
HloModule m

unused {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
)",
                R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
)");
}

TEST(HloDce, NoFuelNoChange) {
  HloDce dce;
  PassContext ctx = testing::MakeTestContext();
  ctx.mutable_options().fuel["dce"] = 0;
  bool changed = true;
  std::unique_ptr<Module> m = testing::RunPass(dce, kDeadCode, &changed, &ctx);
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(changed);
  EXPECT_EQ(Normalize(*m), NormalizeText(kDeadCode));
  EXPECT_TRUE(ctx.fuel_exhausted());
}

// ----- the editing toolkit -----

TEST(HloEdit, NameUniquerFollowsXlaStyle) {
  std::unique_ptr<Module> m = ParseOrDie(kDeadCode);
  NameUniquer names(*m);
  EXPECT_EQ(names.Unique("add"), "add.1");
  EXPECT_EQ(names.Unique("add.7"), "add.2");
  EXPECT_EQ(names.Unique("fresh"), "fresh");
  EXPECT_EQ(names.Unique("fresh"), "fresh.1");
  EXPECT_EQ(names.Unique("p0"), "p0.1");
}

TEST(HloEdit, ReplaceAllUsesAndFinishOrdersDefsBeforeUses) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  a = f32[4] add(p0, p0)
  ROOT b = f32[4] multiply(a, p0)
}
)");
  ASSERT_NE(m, nullptr);
  NameUniquer names(*m);
  Computation* entry = m->entry();
  ComputationEditor editor(entry, &names);
  Instruction* a = entry->FindInstruction("a");
  Instruction* p0 = entry->FindInstruction("p0");
  EXPECT_EQ(editor.user_count(p0), 2);
  absl::StatusOr<Instruction*> neg = editor.AddInferred(Opcode::kNegate, {p0});
  ASSERT_TRUE(neg.ok()) << neg.status().message();
  EXPECT_EQ(editor.ReplaceAllUsesWith(a, *neg), 1);
  EXPECT_TRUE(editor.Finish());
  EXPECT_EQ(Normalize(*m), NormalizeText(R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  negate = f32[4] negate(p0)
  ROOT b = f32[4] multiply(negate, p0)
}
)"));
}

TEST(HloEdit, CloneModuleIsDeepAndEqual) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p0 = f32[4,8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(p0, z), dimensions={1}, to_apply=add
}
)");
  ASSERT_NE(m, nullptr);
  std::unique_ptr<Module> copy = CloneModule(*m);
  std::string why;
  EXPECT_TRUE(ModulesEqual(*m, *copy, &why)) << why;
  // The copy's reduce calls the copy's computation, not the original's.
  EXPECT_EQ(copy->entry()->root()->called_computations()[0]->parent(), copy.get());
  EXPECT_TRUE(testing::ExpectSameResults(*m, *copy));
}

TEST(HloEdit, UniformConstantLooksThroughBroadcast) {
  std::unique_ptr<Module> m = ParseOrDie(R"(
HloModule m

ENTRY e {
  c = f32[] constant(1)
  b = f32[3] broadcast(c), dimensions={}
  v = f32[3] constant({2, 2, 3})
  ROOT t = (f32[3], f32[3]) tuple(b, v)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(IsUniformConstant(*m->entry()->FindInstruction("b"), 1.0));
  EXPECT_FALSE(IsUniformConstant(*m->entry()->FindInstruction("b"), 0.0));
  EXPECT_FALSE(UniformConstantValue(*m->entry()->FindInstruction("v")).has_value());
}

// ----- pipelines -----

// Counts its runs and changes the module (renames the root) `changes` times.
class CountingPass : public HloPass {
 public:
  CountingPass(std::string name, int changes) : name_(std::move(name)), changes_(changes) {}
  std::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module* module, PassContext&) override {
    ++runs_;
    if (changes_ <= 0) return false;
    --changes_;
    module->entry()->root()->set_name(module->entry()->root()->name() + "x");
    return true;
  }
  int runs() const { return runs_; }

 private:
  std::string name_;
  int changes_;
  int runs_ = 0;
};

// Breaks the module: gives the root a shape its operands cannot produce.
class BreakingPass : public HloPass {
 public:
  std::string_view name() const override { return "breaker"; }
  absl::StatusOr<bool> Run(Module* module, PassContext&) override {
    Instruction* root = module->entry()->root();
    root->set_shape(module->InternShape(Shape::Array(PrimitiveType::kS32, {7})));
    return true;
  }
};

constexpr char kSmall[] = R"(
HloModule m

ENTRY e {
  p0 = f32[4] parameter(0)
  ROOT n = f32[4] negate(p0)
}
)";

TEST(PassPipeline, FixedPointRunsUntilNothingChanges) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  PassPipeline pipeline("outer");
  PassPipeline& fix = pipeline.AddFixedPoint("simplification");
  CountingPass& a = fix.AddPass<CountingPass>("a", 3);
  CountingPass& b = fix.AddPass<CountingPass>("b", 0);
  std::vector<PassRecord> records;
  PipelineObserver observer;
  observer.records = &records;
  pipeline.set_observer(observer);
  PassContext ctx;
  absl::StatusOr<bool> r = pipeline.Run(m.get(), ctx);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(*r);
  EXPECT_EQ(a.runs(), 4);  // three changing iterations, then one quiet one
  EXPECT_EQ(b.runs(), 4);
  ASSERT_EQ(records.size(), 8u);
  EXPECT_EQ(records[0].pipeline, "simplification");
  EXPECT_TRUE(records[0].changed);
  EXPECT_FALSE(records[1].changed);
  EXPECT_EQ(records[6].iteration, 3);
  EXPECT_FALSE(records[6].changed);
}

TEST(PassPipeline, FixedPointLimitNamesThePassThatKeepsChanging) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  PassPipeline pipeline("outer");
  PassPipeline& fix = pipeline.AddFixedPoint("simplification");
  fix.AddPass<CountingPass>("quiet", 0);
  fix.AddPass<CountingPass>("restless", 1000);
  PassContext ctx;
  ctx.mutable_options().fixed_point_max_iterations = 5;
  absl::StatusOr<bool> r = pipeline.Run(m.get(), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("restless"), std::string::npos) << r.status().message();
  EXPECT_EQ(r.status().message().find("quiet"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("5 iterations"), std::string::npos);
}

TEST(PassPipeline, DisabledAndEnabledOnlyPasses) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  PassPipeline pipeline("p");
  CountingPass& a = pipeline.AddPass<CountingPass>("a", 1);
  CountingPass& b = pipeline.AddPass<CountingPass>("b", 1);
  CountingPass& c = pipeline.AddPass<CountingPass>("c", 1);
  PassContext ctx;
  ctx.mutable_options().disabled_passes = {"b"};
  ASSERT_TRUE(pipeline.Run(m.get(), ctx).ok());
  EXPECT_EQ(a.runs(), 1);
  EXPECT_EQ(b.runs(), 0);
  EXPECT_EQ(c.runs(), 1);
  PassContext only;
  only.mutable_options().enabled_passes_only = {"b"};
  ASSERT_TRUE(pipeline.Run(m.get(), only).ok());
  EXPECT_EQ(a.runs(), 1);
  EXPECT_EQ(b.runs(), 1);
  EXPECT_EQ(c.runs(), 1);
}

TEST(PassPipeline, VerifierStopsAtTheBreakingPassWithItsName) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  PassPipeline pipeline("p");
  pipeline.AddPass<CountingPass>("fine", 1);
  pipeline.AddPass<BreakingPass>();
  CountingPass& after = pipeline.AddPass<CountingPass>("after", 1);
  PassContext ctx;
  ctx.mutable_options().verify_after_each_pass = true;
  absl::StatusOr<bool> r = pipeline.Run(m.get(), ctx);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("pass 'breaker' in pipeline 'p'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("nx"), std::string::npos) << "names the instruction: " << msg;
  EXPECT_NE(msg.find("the module before the pass"), std::string::npos) << msg;
  EXPECT_EQ(after.runs(), 0);
}

TEST(ModuleDumper, WritesXlaNamesTheDumpIndexRecognises) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  m->set_id(42);
  m->set_name("jit_f");
  std::string dir =
      (std::filesystem::temp_directory_path() / "hlowb_pipeline_dump_test").string();
  std::filesystem::remove_all(dir);
  DumpOptions dump;
  PassOptions passes;
  ASSERT_TRUE(ApplyXlaFlags("--xla_dump_to=" + dir +
                                " --xla_dump_hlo_pass_re=.* --xla_dump_hlo_as_text"
                                " --xla_dump_hlo_as_proto --xla_disable_hlo_passes=x,y",
                            &dump, &passes)
                  .ok());
  EXPECT_EQ(passes.disabled_passes, (std::vector<std::string>{"x", "y"}));
  ModuleDumper dumper(dump, *m);
  ASSERT_TRUE(dumper.enabled());
  ASSERT_TRUE(dumper.DumpModule(*m, "before_optimizations").ok());
  PassPipeline pipeline("simplification");
  pipeline.AddPass<CountingPass>("a", 1);
  pipeline.AddPass<CountingPass>("quiet", 0);
  pipeline.AddPass<CountingPass>("b", 1);
  PipelineObserver observer;
  observer.dumper = &dumper;
  pipeline.set_observer(observer);
  PassContext ctx;
  ASSERT_TRUE(pipeline.Run(m.get(), ctx).ok());
  ASSERT_TRUE(dumper.DumpModule(*m, "cpu_after_optimizations").ok());
  std::vector<std::string> names;
  for (const std::string& path : dumper.written()) {
    names.push_back(std::filesystem::path(path).filename().string());
  }
  std::vector<std::string> expected = {
      "module_0042.jit_f.before_optimizations.txt",
      "module_0042.jit_f.before_optimizations.hlo.pb",
      "module_0042.jit_f.0000.simplification.after_pipeline-start.before_a.txt",
      "module_0042.jit_f.0000.simplification.after_pipeline-start.before_a.hlo.pb",
      "module_0042.jit_f.0001.simplification.after_a.before_quiet.txt",
      "module_0042.jit_f.0001.simplification.after_a.before_quiet.hlo.pb",
      // `quiet` changed nothing: with the regex `.*` it is not dumped.
      "module_0042.jit_f.0002.simplification.after_b.before_pipeline-end.txt",
      "module_0042.jit_f.0002.simplification.after_b.before_pipeline-end.hlo.pb",
      "module_0042.jit_f.cpu_after_optimizations.txt",
      "module_0042.jit_f.cpu_after_optimizations.hlo.pb",
  };
  EXPECT_EQ(names, expected);
  for (const std::string& n : names) {
    DumpName parsed = ParseDumpFileName(n);
    EXPECT_TRUE(IsModuleStateKind(parsed.kind)) << n;
    EXPECT_EQ(parsed.module_id, 42) << n;
    EXPECT_EQ(parsed.module_name, "jit_f") << n;
  }
  DumpName step = ParseDumpFileName(names[4]);
  EXPECT_EQ(step.stage, StageKind::kPassStep);
  EXPECT_EQ(step.step, 1);
  EXPECT_EQ(step.pipeline, "simplification");
  EXPECT_EQ(step.pass, "a");
  EXPECT_EQ(step.next_pass, "quiet");
  EXPECT_EQ(ParseDumpFileName(names[8]).stage, StageKind::kAfterOptimizations);
  // The text dump re-parses to the module as it was after the pipeline.
  absl::StatusOr<std::string> text = ReadFileToString(dir + "/" + names[8], 1 << 20);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(NormalizeText(*text), Normalize(*m));
  std::filesystem::remove_all(dir);
}

TEST(ModuleDumper, OtherRegexKeepsUnchangedPassesAndModuleReFilters) {
  std::unique_ptr<Module> m = ParseOrDie(kSmall);
  DumpOptions dump;
  dump.dump_to = (std::filesystem::temp_directory_path() / "hlowb_dump_re_test").string();
  dump.pass_re = "quiet";
  ModuleDumper dumper(dump, *m);
  EXPECT_TRUE(dumper.WantsPassDump("p", "quiet", "b", /*changed=*/false));
  EXPECT_FALSE(dumper.WantsPassDump("p", "a", "b", /*changed=*/true));
  dump.module_re = "^other$";
  ModuleDumper filtered(dump, *m);
  EXPECT_FALSE(filtered.enabled());
}

TEST(XlaFlags, BadValuesAreErrorsUnknownFlagsReported) {
  DumpOptions dump;
  PassOptions passes;
  std::vector<std::string> unknown;
  EXPECT_FALSE(ApplyXlaFlags("--xla_dump_hlo_as_text=maybe", &dump, &passes).ok());
  EXPECT_FALSE(ApplyXlaFlags("--xla_fuel=algsimp", &dump, &passes).ok());
  ASSERT_TRUE(ApplyXlaFlags("--xla_fuel=algsimp=3,dce=0 --xla_cpu_whatever=1", &dump, &passes,
                            &unknown)
                  .ok());
  EXPECT_EQ(passes.fuel["algsimp"], 3);
  EXPECT_EQ(passes.fuel["dce"], 0);
  EXPECT_EQ(unknown, (std::vector<std::string>{"--xla_cpu_whatever=1"}));
}

}  // namespace
}  // namespace hlowb
