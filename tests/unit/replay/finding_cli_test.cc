// The "finding the problem" command line: `hlowb replay --find_nonfinite`,
// `--isolate_instructions` (on the interpreter and on cpu), `--custom_call_fallback`, and
// `hlowb bundle`'s folder.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"
#include "replay/data/literals_file.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

using Result = testing::CommandResult;
Result Hlowb(const std::string& args) { return testing::RunHlowb(args); }

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

class FindingCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hlowb_finding_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    EXPECT_TRUE(WriteStringToFile(path, text).ok());
    return path;
  }
  fs::path dir_;
};

// The shared NaN fixture: with the fake data of seed 42 the NaN still comes in iteration 3.
constexpr const char* kLoopNaN = testing::kLoopNaNModule;

TEST_F(FindingCli, FindNonfiniteNamesTheFusedInstructionAndIteration) {
  std::string path = Write("loop.hlo", kLoopNaN);
  Result r = Hlowb("replay " + path + " --find_nonfinite");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(Contains(r.out, "NaN introduced by %s (sqrt)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "%w (while) -> while body %body, iteration 3")) << r.out;
  EXPECT_TRUE(Contains(r.out, "%f (fusion) -> fused computation %fused_sqrt")) << r.out;
  EXPECT_TRUE(Contains(r.out, "operand 0 %d f32[4]")) << r.out;
}

TEST_F(FindingCli, FindNonfiniteOnCpuNamesTheModulesOwnInstruction) {
  std::string path = Write("loop.hlo", kLoopNaN);
  Result r = Hlowb("replay " + path + " --find_nonfinite --platform=cpu");
  EXPECT_EQ(r.code, 1) << r.out;
  // Found on the compiled module (a fusion the cpu pipeline made)...
  EXPECT_TRUE(Contains(r.out, "first non-finite value on cpu: NaN introduced by %")) << r.out;
  EXPECT_TRUE(Contains(r.out, "of the module as the cpu platform compiled it")) << r.out;
  // ...and located in the module's own instructions on the interpreter.
  EXPECT_TRUE(Contains(r.out, "in the module's own instructions (the interpreter, same "
                              "arguments): NaN introduced by %s (sqrt)"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "%w (while) -> while body %body, iteration 3")) << r.out;
}

TEST_F(FindingCli, IsolateInstructionsOnCpuCompilesEachInstruction) {
  std::string path = Write("loop.hlo", kLoopNaN);
  Result r = Hlowb("replay " + path + " --isolate_instructions --platform=cpu "
                   "--reference_platform=interpreter --xla_cpu_enable_kernel_cache=false");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "MATCHED              | MATCHED              | 4")) << r.out;
  EXPECT_FALSE(Contains(r.out, "MISMATCH")) << r.out;
}

TEST_F(FindingCli, IsolateInstructionsPrintsTheStatusTable) {
  std::string path = Write("loop.hlo", kLoopNaN);
  Result r = Hlowb("replay " + path + " --isolate_instructions --reference_platform=interpreter");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, " Reference            | Test                 | Instruction"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "| w ")) << r.out;
  EXPECT_TRUE(Contains(r.out, "MATCHED              | MATCHED              | 4")) << r.out;
  EXPECT_FALSE(Contains(r.out, "MISMATCH")) << r.out;
}

constexpr char kGemm[] = R"(
HloModule gemm
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
  m = f32[2,2] custom-call(g), custom_call_target="vendor$secret"
  ROOT n = f32[2,2] negate(m)
}
)";

TEST_F(FindingCli, UnknownCustomCallAndFallbacks) {
  std::string path = Write("gemm.hlo", kGemm);
  Result plain = Hlowb("replay " + path);
  EXPECT_EQ(plain.code, 1) << plain.out;
  EXPECT_TRUE(Contains(plain.out, "vendor$secret")) << plain.out;
  EXPECT_TRUE(Contains(plain.out, "%m")) << plain.out;
  Result zeros = Hlowb("replay " + path + " --custom_call_fallback=zeros");
  EXPECT_EQ(zeros.code, 0) << zeros.out;
  EXPECT_TRUE(Contains(zeros.out,
                       "note: custom-call %m (target \"vendor$secret\"): no handler; "
                       "replayed with zeros"))
      << zeros.out;
  Result bad = Hlowb("replay " + path + " --custom_call_fallback=guess");
  EXPECT_EQ(bad.code, 2) << bad.out;
}

TEST_F(FindingCli, BundleFolderHasEverythingToRerun) {
  std::string path = Write("loop.hlo", kLoopNaN);
  fs::path out = dir_ / "bundle";
  Result r =
      Hlowb("bundle " + path + " --seed=7 --reference_platform=interpreter -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* f :
       {"module.hlo", "module.hlo.pb", "snapshot.hlo_snapshot.pb", "arguments.literals.pb",
        "flags.txt", "platform.txt", "report.txt", "README.md"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  // The module, as text and as a proto, is the input module.
  auto text = ReadFileToString((out / "module.hlo").string());
  ASSERT_TRUE(text.ok());
  auto m = ParseModule(*text);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ((*m)->name(), "loop_nan");
  auto proto = OpenHloFile((out / "module.hlo.pb").string());
  ASSERT_TRUE(proto.ok()) << proto.status();
  EXPECT_TRUE(ModulesEqual(*proto->modules[0].module, **m));
  // The snapshot carries the arguments the replay used (seed 7) and the result.
  auto snap = OpenHloFile((out / "snapshot.hlo_snapshot.pb").string());
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_TRUE(snap->is_snapshot);
  ASSERT_EQ(snap->arguments.size(), 1u);
  ASSERT_TRUE(snap->result.has_value());
  auto lits = ReadRunHloModuleLiterals((out / "arguments.literals.pb").string());
  ASSERT_TRUE(lits.ok()) << lits.status();
  ASSERT_EQ(lits->size(), 1u);
  EXPECT_EQ((*lits)[0].arguments[0], snap->arguments[0]);
  // Rerunning the snapshot reproduces the recorded result.
  Result rerun = Hlowb("replay " + (out / "snapshot.hlo_snapshot.pb").string());
  EXPECT_TRUE(Contains(rerun.out, "comparison with snapshot result: OK")) << rerun.out;
  // Flags, platform, report and README.
  auto flags = ReadFileToString((out / "flags.txt").string());
  EXPECT_EQ(*flags, "--seed=7\n--reference_platform=interpreter\n");
  auto platform = ReadFileToString((out / "platform.txt").string());
  EXPECT_TRUE(Contains(*platform, "hlowb 0.1.0")) << *platform;
  EXPECT_TRUE(Contains(*platform, "os: ")) << *platform;
  EXPECT_TRUE(Contains(*platform, "cpu: ")) << *platform;
  auto report = ReadFileToString((out / "report.txt").string());
  EXPECT_TRUE(Contains(*report, "arguments from fake data (seed 7)")) << *report;
  EXPECT_TRUE(Contains(*report, "comparison with reference platform interpreter")) << *report;
  EXPECT_TRUE(Contains(*report, "NaN introduced by %s (sqrt)")) << *report;
  auto readme = ReadFileToString((out / "README.md").string());
  EXPECT_TRUE(Contains(*readme, "hlowb replay snapshot.hlo_snapshot.pb --seed=7")) << *readme;
  EXPECT_TRUE(Contains(*readme, "run_hlo_module --platform=Interpreter")) << *readme;
  EXPECT_TRUE(Contains(*readme, "--input_literals_file=arguments.literals.pb")) << *readme;

  // Deterministic: a second bundle of the same input is byte-identical but for platform.txt.
  fs::path again = dir_ / "again";
  ASSERT_EQ(
      Hlowb("bundle " + path + " --seed=7 --reference_platform=interpreter -o " + again.string())
          .code,
      0);
  for (const char* f : {"module.hlo", "module.hlo.pb", "snapshot.hlo_snapshot.pb",
                        "arguments.literals.pb", "flags.txt", "report.txt", "README.md"}) {
    EXPECT_EQ(*ReadFileToString((out / f).string()), *ReadFileToString((again / f).string())) << f;
  }
  EXPECT_EQ(Hlowb("bundle " + path).code, 2);
}

TEST_F(FindingCli, BundleOfAFailingReplayReportsTheFailure) {
  std::string path = Write("gemm.hlo", kGemm);
  fs::path out = dir_ / "bundle";
  Result r = Hlowb("bundle " + path + " -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out / "module.hlo"));
  EXPECT_FALSE(fs::exists(out / "snapshot.hlo_snapshot.pb"));  // no arguments were made
  auto report = ReadFileToString((out / "report.txt").string());
  EXPECT_TRUE(Contains(*report, "FAILED: custom-call %m has target \"vendor$secret\"")) << *report;
  auto readme = ReadFileToString((out / "README.md").string());
  EXPECT_TRUE(Contains(*readme, "hlowb replay module.hlo")) << *readme;
}

}  // namespace
}  // namespace hlowb
