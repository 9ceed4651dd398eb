// End-to-end tests of the hlowb command line: output and exit codes (0 ok, 1 input error,
// 2 usage error), run against the built binary.
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code = -1;
  std::string out;  // stdout and stderr together
};

Result RunHlowb(const std::string& args) {
  std::string cmd = std::string(HLOWB_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  int status = pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Sample(const std::string& rel) {
  return (fs::path(HLOWB_SOURCE_DIR) / "resources" / "samples" / rel).string();
}

fs::path TempFile(const std::string& name, const std::string& content) {
  fs::path p = fs::temp_directory_path() / (std::to_string(getpid()) + "_" + name);
  std::ofstream(p) << content;
  return p;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(RunHlowb("").exit_code, 2);
  EXPECT_EQ(RunHlowb("frobnicate").exit_code, 2);
  EXPECT_EQ(RunHlowb("print").exit_code, 2);
  EXPECT_EQ(RunHlowb("print a b").exit_code, 2);
  EXPECT_EQ(RunHlowb("print x --format=medium").exit_code, 2);
  EXPECT_EQ(RunHlowb("info x --no-such-flag").exit_code, 2);
  EXPECT_EQ(RunHlowb("passes " + Sample("dump")).exit_code, 2);  // --module missing
  Result help = RunHlowb("help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: hlowb"), std::string::npos);
}

TEST(Cli, InfoSummarizesTheSample) {
  Result r = RunHlowb("info " + Sample("sample.hlo"));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("module: jit_mlp_loss"), std::string::npos);
  EXPECT_NE(r.out.find("computations: 4"), std::string::npos);
  EXPECT_NE(r.out.find("instructions: 40"), std::string::npos);
  EXPECT_NE(r.out.find("  reduce: 4"), std::string::npos);
  EXPECT_NE(r.out.find("root: multiply.1: f32[]"), std::string::npos);
  EXPECT_NE(r.out.find("layouts: present"), std::string::npos);
}

TEST(Cli, InputErrorsExitOneWithLocation) {
  fs::path bad = TempFile("bad.hlo", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT q = f32[4] nope(p)\n}\n");
  Result r = RunHlowb("print " + bad.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("bad.hlo:4:19: unknown opcode 'nope'"), std::string::npos) << r.out;
  EXPECT_EQ(RunHlowb("info /nonexistent/file.hlo").exit_code, 1);
  fs::remove(bad);
}

TEST(Cli, PrintShortFormToFileAndBack) {
  fs::path out = fs::temp_directory_path() / (std::to_string(getpid()) + "_short.hlo");
  Result r = RunHlowb("print " + Sample("sample.hlo") + " --format=short -o " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  Result again = RunHlowb("print " + out.string() + " --format=short");
  ASSERT_EQ(again.exit_code, 0);
  std::ifstream in(out);
  std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(again.out, written);
  EXPECT_EQ(written.find('%'), std::string::npos);
  fs::remove(out);
}

TEST(Cli, SplitInputFile) {
  fs::path f = TempFile("split.hlo",
                        "HloModule a\nENTRY e {\n ROOT p = f32[] parameter(0)\n}\n// -----\n"
                        "HloModule b\nENTRY e {\n ROOT p = s32[] parameter(0)\n}\n");
  Result r = RunHlowb("info --split-input-file " + f.string());
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("module: a"), std::string::npos);
  EXPECT_NE(r.out.find("module: b"), std::string::npos);
  EXPECT_EQ(RunHlowb("info " + f.string()).exit_code, 1);  // without the flag: two modules in one
  fs::remove(f);
}

TEST(Cli, VerifyReportsProblems) {
  EXPECT_EQ(RunHlowb("verify " + Sample("sample.hlo")).exit_code, 0);
  fs::path f = TempFile("wrong.hlo", "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT n = f32[5] negate(p)\n}\n");
  Result r = RunHlowb("verify " + f.string());
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n"), std::string::npos);
  fs::remove(f);
}

TEST(Cli, DumpDirectoryCommands) {
  Result index = RunHlowb("index " + Sample("dump"));
  ASSERT_EQ(index.exit_code, 0) << index.out;
  EXPECT_NE(index.out.find("module 0001 jit_train_step: 13 states (11 pass steps), 2 artifacts"),
            std::string::npos) << index.out;
  Result json = RunHlowb("index " + Sample("dump") + " --format=json");
  EXPECT_NE(json.out.find("\"name\":\"jit_train_step\""), std::string::npos);

  Result passes = RunHlowb("passes " + Sample("dump") + " --module=jit_train_step");
  ASSERT_EQ(passes.exit_code, 0) << passes.out;
  EXPECT_NE(passes.out.find("5 of 11 passes changed the module"), std::string::npos) << passes.out;
  EXPECT_NE(passes.out.find("* 0002 simplification: cse  changed  81 instructions (-7)"),
            std::string::npos) << passes.out;
  EXPECT_NE(passes.out.find("  0003 simplification: dce  unchanged"), std::string::npos);

  Result diff = RunHlowb("diff " + Sample("dump") + ":1:6 " + Sample("dump") + ":1:7");
  ASSERT_EQ(diff.exit_code, 0) << diff.out;
  EXPECT_NE(diff.out.find("- maximum.16 maximum [fused into loop_maximum_fusion]"), std::string::npos)
      << diff.out;
  Result unified = RunHlowb("diff " + Sample("dump") + ":1:before " + Sample("dump") +
                       ":1:after --format=unified");
  EXPECT_NE(unified.out.find("+loop_maximum_fusion = f32[8,32]{1,0} fusion(dot.8, Arg_0.1)"),
            std::string::npos)
      << unified.out;
  EXPECT_EQ(RunHlowb("diff " + Sample("dump") + ":1:99 " + Sample("sample.hlo")).exit_code, 1);

  Result trace = RunHlowb("trace " + Sample("dump") + " --module=1 --instruction=constant.31");
  ASSERT_EQ(trace.exit_code, 0) << trace.out;
  EXPECT_NE(trace.out.find("0002 simplification: cse  -  removed"), std::string::npos) << trace.out;
  Result created = RunHlowb("trace " + Sample("dump") + " --module=1 --instruction=loop_maximum_fusion --step=after");
  EXPECT_NE(created.out.find("0007 fusion: priority-fusion  loop_maximum_fusion  created"), std::string::npos)
      << created.out;
}

}  // namespace

// info, print, verify and diff read every format convert writes, and give the same answers
// as on the text they came from.
TEST(Cli, CommandsReadProtoFormats) {
  const std::string text = Sample("sample.hlo");
  Result reference = RunHlowb("print " + text);
  ASSERT_EQ(reference.exit_code, 0) << reference.out;
  for (const char* ext : {"hlo.pb", "pbtxt", "pb.gz", "hlo_snapshot.pb"}) {
    SCOPED_TRACE(ext);
    fs::path out = fs::temp_directory_path() / (std::to_string(getpid()) + "_cli." + ext);
    Result c = RunHlowb("convert " + text + " -o " + out.string());
    ASSERT_EQ(c.exit_code, 0) << c.out;
    Result p = RunHlowb("print " + out.string());
    ASSERT_EQ(p.exit_code, 0) << p.out;
    // Snapshot conversion warns that the snapshot has no arguments; the module is the same.
    EXPECT_NE(p.out.find(reference.out), std::string::npos) << p.out;
    Result v = RunHlowb("verify " + out.string());
    EXPECT_EQ(v.exit_code, 0) << v.out;
    Result d = RunHlowb("diff " + out.string() + " " + text);
    EXPECT_EQ(d.exit_code, 0) << d.out;
    EXPECT_NE(d.out.find("0 changed, 0 added, 0 removed"), std::string::npos) << d.out;
    fs::remove(out);
  }
  fs::path bad = TempFile("bad.pb", "definitely not a proto\x01\x02");
  Result r = RunHlowb("info " + bad.string());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("formats tried"), std::string::npos) << r.out;
  fs::remove(bad);
}
