// `hlowb capture`: usage errors, a command that does not exist, how XLA_FLAGS and the JAX cache
// settings reach the program (a shell script stands in for it, so this runs without jax), a failing
// program whose dump is still indexed, and, where the pinned jax is installed, a real pass-by-pass
// capture of resources/samples/capture_sample.py.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

using Result = testing::CommandResult;
Result RunShell(const std::string& cmd) { return testing::RunCommand(cmd); }

// `env` is a prefix of `env` arguments (e.g. "-u XLA_FLAGS A=b").
Result Hlowb(const std::string& args, const std::string& env = "") {
  return RunShell("env " + env + " " + std::string(HLOWB_BINARY) + " " + args);
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CaptureCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("hlowb_capture_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // The stand-in program: records what it was given, writes a one-module dump where --xla_dump_to
    // (the last one, as XLA reads it) says, prints a line, exits $FAKE_EXIT.
    fake_ = dir_ / "fake_program.sh";
    std::ofstream(fake_) << "#!/bin/sh\n"
                         << "printf '%s\\n' \"$XLA_FLAGS\" > '" << (dir_ / "flags.txt").string()
                         << "'\n"
                         << "printf '%s\\n' \"${JAX_ENABLE_COMPILATION_CACHE-unset}\" "
                            "\"${JAX_COMPILATION_CACHE_DIR-unset}\" > '"
                         << (dir_ / "cache.txt").string() << "'\n"
                         << "for f in $XLA_FLAGS; do case $f in --xla_dump_to=*) "
                            "d=${f#--xla_dump_to=};; esac; done\n"
                         << "printf 'HloModule jit_fake\\n\\nENTRY e {\\n  p = f32[4] "
                            "parameter(0)\\n  ROOT n = f32[4] negate(p)\\n}\\n' > "
                            "\"$d/module_0000.jit_fake.before_optimizations.txt\"\n"
                         << "echo \"fake program ran with $# arguments\"\n"
                         << "exit ${FAKE_EXIT-0}\n";
    fs::permissions(fake_, fs::perms::owner_all);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  fs::path fake_;
};

TEST_F(CaptureCliTest, UsageErrors) {
  for (const char* args :
       {"capture", "capture --no-open", "capture -o x", "capture --", "capture --no-open --",
        "capture --bogus -- true", "capture stray -- true", "capture --module-re= -- true"}) {
    Result r = Hlowb(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("usage: hlowb capture"), std::string::npos) << args << "\n" << r.out;
  }
  Result help = Hlowb("help");
  EXPECT_NE(help.out.find("capture [-o DIR]"), std::string::npos) << help.out;
}

TEST_F(CaptureCliTest, MissingCommandIsAnInputError) {
  fs::path out = dir_ / "dump";
  Result r = Hlowb("capture --no-open -o " + out.string() + " -- hlowb-no-such-program-xyz a b");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("cannot run 'hlowb-no-such-program-xyz'"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out)) << "the empty dump folder it made is removed";
  Result path = Hlowb("capture --no-open -o " + out.string() + " -- /nonexistent/prog");
  EXPECT_EQ(path.code, 1) << path.out;
  EXPECT_NE(path.out.find("No such file"), std::string::npos) << path.out;
}

TEST_F(CaptureCliTest, AppendsDumpFlagsToTheUsersAndTurnsTheCacheOff) {
  fs::path out = dir_ / "dump";
  Result r = Hlowb("capture --no-open --pass-by-pass --snapshots --module-re=jit_.* -o " +
                       out.string() + " -- " + fake_.string() + " one two",
                   "XLA_FLAGS='--xla_dump_to=/nonexistent/elsewhere "
                   "--xla_cpu_use_thunk_runtime' "
                   "JAX_COMPILATION_CACHE_DIR=/tmp/some-cache "
                   "JAX_ENABLE_COMPILATION_CACHE=true");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(ReadFile(dir_ / "flags.txt"),
            "--xla_dump_to=/nonexistent/elsewhere --xla_cpu_use_thunk_runtime "
            "--xla_dump_to=" +
                out.string() +
                " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto "
                "--xla_dump_hlo_pass_re=.*"
                " --xla_dump_hlo_snapshots --xla_dump_hlo_module_re=jit_.*\n");
  EXPECT_EQ(ReadFile(dir_ / "cache.txt"), "false\nunset\n");
  // Warned: the user's own dump folder is overridden, and the cache they set is not used.
  EXPECT_NE(r.out.find("warning: XLA_FLAGS already has "
                       "--xla_dump_to=/nonexistent/elsewhere"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("warning: JAX_COMPILATION_CACHE_DIR=/tmp/some-cache"), std::string::npos)
      << r.out;
  // The program's own output passes through, and the dump is indexed.
  EXPECT_NE(r.out.find("fake program ran with 2 arguments"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("captured " + out.string() +
                       ": 1 module, 1 state (0 pass steps), 0 snapshots, 0 "
                       "unrecognised files"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("module 0000 jit_fake"), std::string::npos) << r.out;

  // Without options and without user flags: the complete dump flags only, no warnings.
  fs::path plain = dir_ / "plain";
  Result p = Hlowb("capture --no-open -o " + plain.string() + " -- " + fake_.string(),
                   "-u XLA_FLAGS -u JAX_COMPILATION_CACHE_DIR");
  ASSERT_EQ(p.code, 0) << p.out;
  EXPECT_EQ(ReadFile(dir_ / "flags.txt"), "--xla_dump_to=" + plain.string() +
                                              " --xla_dump_hlo_as_text --xla_dump_hlo_as_proto\n");
  EXPECT_EQ(p.out.find("warning"), std::string::npos) << p.out;
  EXPECT_NE(p.out.find("persistent compilation cache"), std::string::npos) << p.out;
}

TEST_F(CaptureCliTest, DefaultFolderAndNoDisplay) {
  // Without -o: a new hlowb-capture-<timestamp> folder in the working directory; without a display
  // the window is not started, and the command to open it later is printed.
  Result r =
      RunShell("cd " + dir_.string() + " && env -u DISPLAY -u WAYLAND_DISPLAY -u QT_QPA_PLATFORM " +
               std::string(HLOWB_BINARY) + " capture -- " + fake_.string());
  ASSERT_EQ(r.code, 0) << r.out;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(r.out, m, std::regex("captured (/[^:]*/hlowb-capture-[0-9]{8}-[0-9]{6}):")))
      << r.out;
  EXPECT_TRUE(fs::exists(fs::path(m[1].str()) / "module_0000.jit_fake.before_optimizations.txt"));
  EXPECT_EQ(fs::path(m[1].str()).parent_path(), dir_);
  EXPECT_NE(r.out.find("later: hlowb gui " + m[1].str()), std::string::npos) << r.out;
}

TEST_F(CaptureCliTest, FailingCommandIsReportedAndItsDumpStillIndexed) {
  fs::path out = dir_ / "dump";
  Result r = Hlowb("capture --no-open -o " + out.string() + " -- " + fake_.string(), "FAKE_EXIT=3");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("the command exited with status 3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("captured " + out.string() + ": 1 module"), std::string::npos) << r.out;

  // A program that dumps nothing: said so, exit 1, and no empty folder left behind.
  fs::path none = dir_ / "none";
  Result n = Hlowb("capture --no-open -o " + none.string() + " -- true");
  EXPECT_EQ(n.code, 1) << n.out;
  EXPECT_NE(n.out.find("nothing was dumped"), std::string::npos) << n.out;
  EXPECT_FALSE(fs::exists(none));
}

bool HaveJax(std::string* python) {
  *python = std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python";
  if (access(python->c_str(), X_OK) != 0) return false;
  return RunShell(*python + " -c 'import jax'").code == 0;
}

TEST_F(CaptureCliTest, RealJaxPassByPassCapture) {
  std::string python;
  if (!HaveJax(&python)) {
    GTEST_SKIP() << "needs the pinned jax in " << HLOWB_SOURCE_DIR
                 << "/.venv (scripts/setup creates it)";
  }
  fs::path out = dir_ / "jax";
  const std::string sample = std::string(HLOWB_SOURCE_DIR) + "/resources/samples/capture_sample.py";
  Result r =
      Hlowb("capture --no-open --pass-by-pass -o " + out.string() + " -- " + python + " " + sample,
            "-u XLA_FLAGS");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("step 1: loss"), std::string::npos) << "the program's output: " << r.out;
  EXPECT_NE(r.out.find(", 0 unrecognised files"), std::string::npos) << r.out;

  Result index = Hlowb("index " + out.string());
  ASSERT_EQ(index.code, 0) << index.out;
  EXPECT_NE(index.out.find(" 0 unrecognised\n"), std::string::npos) << index.out;
  EXPECT_EQ(index.out.find("other-module-file"), std::string::npos) << index.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      index.out, m, std::regex(R"(module \d+ jit_train_step: \d+ states \((\d+) pass)")))
      << index.out;
  EXPECT_GE(std::stoi(m[1].str()), 1) << index.out;

  // Every text state parses and verifies.
  std::istringstream lines(index.out);
  std::string line;
  int verified = 0;
  std::regex state(R"(^  state .*: (\S+\.txt)\b)");
  while (std::getline(lines, line)) {
    if (!std::regex_search(line, m, state)) continue;
    Result v = Hlowb("verify " + (out / m[1].str()).string());
    EXPECT_EQ(v.code, 0) << m[1].str() << "\n" << v.out;
    ++verified;
  }
  EXPECT_GE(verified, 3);
}

}  // namespace
}  // namespace hlowb
