// `hlowb replay`: exit codes and output on resources/samples/sample.hlo, literal files through
// the command line, the compiled platforms (cpu; cuda, which says what is missing without a
// driver or GPU).
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/data/literals_file.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

struct Result {
  int code = -1;
  std::string output;  // stdout and stderr
};

Result Replay(const std::string& args) {
  std::string cmd = std::string(HLOWB_BINARY) + " replay " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.output.append(buf, n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

const std::string kSample = std::string(HLOWB_SOURCE_DIR) + "/resources/samples/sample.hlo";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("hlowb_replay_cli_" + std::to_string(getpid()) + "_" + name)).string();
}

bool Contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ReplayCli, RunsTheSampleAndPrintsTimes) {
  Result r = Replay(kSample + " --platform=interpreter");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "module jit_mlp_loss")) << r.output;
  EXPECT_TRUE(Contains(r.output, "compile: ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "; run ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "arguments from fake data (seed 42)")) << r.output;
  EXPECT_TRUE(Contains(r.output, "comparison: none")) << r.output;
}

TEST(ReplayCli, ReferencePlatformVerdict) {
  Result r = Replay(kSample + " --platform=interpreter --reference_platform=interpreter "
                              "--iterations=2 --abs_error_bound=1e-5 --rel_error_bound=1e-5");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "reference run ")) << r.output;
  EXPECT_TRUE(Contains(r.output, "iteration 2:")) << r.output;
  EXPECT_TRUE(Contains(r.output, "comparison with reference platform interpreter: OK")) << r.output;
}

TEST(ReplayCli, PrintLiteralsAndSeedDeterminism) {
  Result a = Replay(kSample + " --print_literals --seed=7");
  Result b = Replay(kSample + " --print_literals --seed=7");
  Result c = Replay(kSample + " --print_literals --seed=8");
  ASSERT_EQ(a.code, 0) << a.output;
  EXPECT_TRUE(Contains(a.output, "argument 0 (x): f32[8,16]")) << a.output;
  EXPECT_TRUE(Contains(a.output, "result: f32[] ")) << a.output;
  auto strip_times = [](std::string s) {
    std::string out;
    size_t pos = 0;
    while (pos < s.size()) {
      size_t eol = s.find('\n', pos);
      std::string line = s.substr(pos, eol == std::string::npos ? std::string::npos : eol - pos + 1);
      if (line.find(" ms") == std::string::npos && line.find(" s\n") == std::string::npos) out += line;
      if (eol == std::string::npos) break;
      pos = eol + 1;
    }
    return out;
  };
  EXPECT_EQ(strip_times(a.output), strip_times(b.output));
  EXPECT_NE(strip_times(a.output), strip_times(c.output));
}

TEST(ReplayCli, CompiledPlatforms) {
  // cpu is built: it compiles, says what it compiled, and agrees with the interpreter.
  Result cpu = Replay(kSample + " --platform=cpu --reference_platform=interpreter "
                                "--xla_cpu_enable_kernel_cache=false --profile=3");
  EXPECT_EQ(cpu.code, 0) << cpu.output;
  EXPECT_TRUE(Contains(cpu.output, "kernel")) << cpu.output;
  EXPECT_TRUE(Contains(cpu.output, "profile (cpu")) << cpu.output;
  EXPECT_TRUE(Contains(cpu.output, "comparison with reference platform interpreter: OK")) << cpu.output;
}

TEST(ReplayCli, CudaPlatform) {
  // Malformed cuda flags are usage errors, GPU or not.
  EXPECT_EQ(Replay(kSample + " --platform=cuda --cuda_arch=90").code, 2);
  EXPECT_EQ(Replay(kSample + " --platform=cuda --cuda_arch=sm_x0").code, 2);
  EXPECT_EQ(Replay(kSample + " --platform=cuda --cuda_allow_tf32=maybe").code, 2);
  const bool gpu = CudaAvailable().ok();
  for (const std::string flags :
       {"--platform=cuda --reference_platform=interpreter",
        "--platform=gpu --cuda_arch=sm_80 --reference_platform=interpreter",
        "--reference_platform=cuda"}) {
    Result r = Replay(kSample + " " + flags);
    if (gpu) {
      EXPECT_EQ(r.code, 0) << flags << "\n" << r.output;
      EXPECT_TRUE(Contains(r.output, "cuda device: ")) << r.output;
      EXPECT_TRUE(Contains(r.output, "kernel")) << r.output;
      continue;
    }
    // No driver or GPU here: a clear error naming what is missing, not a usage error.
    EXPECT_EQ(r.code, 1) << flags << "\n" << r.output;
    EXPECT_FALSE(Contains(r.output, "not built yet")) << r.output;
    EXPECT_TRUE(Contains(r.output, "driver")) << r.output;
    EXPECT_TRUE(Contains(r.output, "--platform=cpu")) << r.output;
  }
  // --cuda_allow_tf32 is a known flag (TF32 may round the sample's dots past the bounds, so
  // only its acceptance is checked).
  Result tf32 = Replay(kSample + " --platform=cuda --cuda_allow_tf32");
  EXPECT_FALSE(Contains(tf32.output, "unknown option")) << tf32.output;
  EXPECT_NE(tf32.code, 2) << tf32.output;
  Result help = Replay("");
  EXPECT_TRUE(Contains(help.output, "cuda (also 'gpu'")) << help.output;
  EXPECT_TRUE(Contains(help.output, "--cuda_allow_tf32")) << help.output;
  EXPECT_TRUE(Contains(help.output, "--cuda_emulate")) << help.output;
  // --cuda_emulate runs the platform on the host's GPU emulator, GPU or not, and agrees.
  Result emulated = Replay(kSample + " --platform=cuda --cuda_emulate "
                                     "--reference_platform=interpreter");
  EXPECT_EQ(emulated.code, 0) << emulated.output;
  EXPECT_TRUE(Contains(emulated.output, "cuda device: the host's GPU emulator")) << emulated.output;
  EXPECT_TRUE(Contains(emulated.output, "compiled for the host's GPU emulator")) << emulated.output;
  EXPECT_TRUE(Contains(emulated.output, "comparison with reference platform interpreter: OK"))
      << emulated.output;
  // Several devices on the one (emulated) GPU: each in its own arena, an all-reduce across
  // them, the replica id per device.
  const std::string path = TempPath("replicas.hlo");
  {
    std::ofstream out(path);
    out << R"(HloModule replicas
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1000] parameter(0)
  id = u32[] replica-id()
  f = f32[] convert(id)
  fb = f32[1000] broadcast(f), dimensions={}
  y = f32[1000] multiply(x, fb)
  e = f32[1000] exponential(y)
  ROOT r = f32[1000] all-reduce(e), replica_groups={}, to_apply=add
}
)";
  }
  Result replicas = Replay(path + " --platform=cuda --cuda_emulate --num_replicas=2 "
                                  "--reference_platform=interpreter");
  std::filesystem::remove(path);
  EXPECT_EQ(replicas.code, 0) << replicas.output;
  EXPECT_TRUE(Contains(replicas.output, "runs in a")) << replicas.output;
  EXPECT_TRUE(Contains(replicas.output, "device 1 (replica 1, partition 0)")) << replicas.output;
  EXPECT_FALSE(Contains(replicas.output, "FAILED")) << replicas.output;
}

TEST(ReplayCli, UsageErrors) {
  EXPECT_EQ(Replay("").code, 2);
  EXPECT_EQ(Replay(kSample + " --no_such_flag").code, 2);
  EXPECT_EQ(Replay(kSample + " --iterations=0").code, 2);
  EXPECT_EQ(Replay(kSample + " --abs_error_bound=x").code, 2);
  EXPECT_EQ(Replay(kSample + " --platform=tpu").code, 2);
  EXPECT_EQ(Replay(kSample + " --input_format=json").code, 2);
  EXPECT_EQ(Replay(kSample + " --run_test_hlo_passes=maybe").code, 2);
  EXPECT_EQ(Replay(kSample + " --run_test_hlo_passes=false").code, 0);
  Result host = Replay(kSample + " --host_transfers=sometimes");
  EXPECT_EQ(host.code, 2) << host.output;
  EXPECT_TRUE(Contains(host.output, "--host_transfers must be error, zeros or fake, not "
                                    "'sometimes'"))
      << host.output;
  EXPECT_EQ(Replay(kSample + " --host_transfers=zeros").code, 0);
}

TEST(ReplayCli, InputErrors) {
  Result missing = Replay("/nonexistent/m.hlo");
  EXPECT_EQ(missing.code, 1) << missing.output;
  Result format = Replay(kSample + " --input_format=snapshot");
  EXPECT_EQ(format.code, 1) << format.output;
  EXPECT_TRUE(Contains(format.output, "not --input_format=snapshot")) << format.output;
  EXPECT_EQ(Replay(kSample + " --input_format=hlo").code, 0);
}

TEST(ReplayCli, LiteralsFilesRoundTripAndMismatchExitCode) {
  std::string out = TempPath("out.pb");
  Result w = Replay(kSample + " --reference_platform=interpreter --output_literals_file=" + out);
  ASSERT_EQ(w.code, 0) << w.output;
  auto lits = ReadRunHloModuleLiterals(out);
  ASSERT_TRUE(lits.ok()) << lits.status();
  ASSERT_EQ(lits->size(), 1u);
  EXPECT_EQ((*lits)[0].arguments.size(), 5u);
  ASSERT_TRUE((*lits)[0].result.has_value());
  ASSERT_TRUE((*lits)[0].reference_result.has_value());

  // Replaying the written file reproduces the result.
  Result again = Replay(kSample + " --input_literals_file=" + out);
  EXPECT_EQ(again.code, 0) << again.output;
  EXPECT_TRUE(Contains(again.output, "arguments from literals file iteration 1")) << again.output;
  EXPECT_TRUE(Contains(again.output, "comparison with literals file result (iteration 1): OK"))
      << again.output;

  // A wrong expected result: exit 1 and the worst element.
  (*lits)[0].result = testing::Lit("f32[] 12345");
  std::string bad = TempPath("bad.pbtxt");
  ASSERT_TRUE(WriteRunHloModuleLiterals(bad, *lits).ok());
  Result mismatch = Replay(kSample + " --input_literals_file=" + bad);
  EXPECT_EQ(mismatch.code, 1) << mismatch.output;
  EXPECT_TRUE(Contains(mismatch.output, "MISMATCH")) << mismatch.output;
  EXPECT_TRUE(Contains(mismatch.output, "at {}: expected 12345")) << mismatch.output;
  // --force_fake_data ignores the file's arguments.
  Result fake = Replay(kSample + " --force_fake_data --input_literals_file=" + bad);
  EXPECT_EQ(fake.code, 0) << fake.output;
  std::filesystem::remove(out);
  std::filesystem::remove(bad);
}

TEST(ReplayCli, UnsupportedFeatureIsReported) {
  std::string path = TempPath("infeed.hlo");
  FILE* f = fopen(path.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fputs("HloModule m\nENTRY e {\n  t = token[] after-all()\n"
        "  i = (f32[2], token[]) infeed(t)\n  ROOT g = f32[2] get-tuple-element(i), index=0\n}\n", f);
  fclose(f);
  Result r = Replay(path);
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(Contains(r.output, "infeed")) << r.output;
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace hlowb
