// `hlowb opt`: the embedded compiler from the command line, against the built binary. Our own
// dumps must read like XLA's: `hlowb index` recognises every file, `hlowb passes` lists the
// states in order with change flags, and `hlowb replay DIR --bisect_passes` finds no pass that
// changes the outputs.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/analysis/verifier.h"
#include "core/proto/open_file.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
};

Result Hlowb(const std::string& args, const std::string& env = "") {
  std::string cmd = env + " " + std::string(HLOWB_BINARY) + " " + args + " 2>&1";
  Result r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) r.out.append(buf, n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string Sample() {
  return (fs::path(HLOWB_SOURCE_DIR) / "resources" / "samples" / "sample.hlo").string();
}

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("hlowb_opt_" + name + "_" + std::to_string(getpid()));
  fs::remove_all(p);
  return p;
}

TEST(OptCli, ListsPassesAndRefusesUnknownOnes) {
  Result list = Hlowb("opt --list-passes");
  ASSERT_EQ(list.code, 0) << list.out;
  for (const char* pass : {"algsimp", "cse", "dce", "fusion", "priority-fusion",
                           "layout-assignment", "copy-insertion", "hlo-memory-scheduler",
                           "simplify-while-loops", "batchnorm_expander"}) {
    EXPECT_NE(list.out.find(std::string(pass) + "\n"), std::string::npos) << pass;
  }
  Result bad = Hlowb("opt " + Sample() + " --passes=algsimp,no-such-pass");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("unknown pass 'no-such-pass'"), std::string::npos) << bad.out;
  EXPECT_EQ(Hlowb("opt " + Sample() + " --platform=tpu").code, 2);
}

TEST(OptCli, CpuPipelineGivesAScheduledVerifiedModule) {
  fs::path out = TempDir("cpu") / "out.hlo";
  fs::create_directories(out.parent_path());
  Result r = Hlowb("opt " + Sample() + " --platform=cpu --pass-stats -o " + out.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("algsimp"), std::string::npos) << "pass statistics: " << r.out;
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("is_scheduled=true"), std::string::npos);
  EXPECT_NE(text.find("fusion("), std::string::npos) << "the cpu pipeline fuses";
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(CountErrors(VerifyModule(**m)), 0);

  Result ba = Hlowb("opt " + Sample() + " --stage=buffer-assignment");
  ASSERT_EQ(ba.code, 0) << ba.out;
  EXPECT_NE(ba.out.find("allocation 0: size "), std::string::npos) << ba.out;
  fs::remove_all(out.parent_path());
}

TEST(OptCli, DisabledPassesFromFlagsAndXlaFlags) {
  fs::path dir = TempDir("disabled");
  fs::create_directories(dir);
  fs::path chain = dir / "chain.hlo";
  std::ofstream(chain) << "HloModule chain\n\nENTRY e {\n  p = f32[64]{0} parameter(0)\n"
                          "  a = f32[64]{0} exponential(p)\n  b = f32[64]{0} add(a, p)\n"
                          "  ROOT n = f32[64]{0} negate(b)\n}\n";
  Result fused = Hlowb("opt " + chain.string());
  ASSERT_EQ(fused.code, 0) << fused.out;
  EXPECT_NE(fused.out.find("fusion("), std::string::npos) << fused.out;
  Result r = Hlowb("opt " + chain.string() + " --xla_disable_hlo_passes=fusion");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("fusion("), std::string::npos) << "fusion was disabled: " << r.out;
  Result env = Hlowb("opt " + chain.string(), "XLA_FLAGS=--xla_disable_hlo_passes=fusion");
  ASSERT_EQ(env.code, 0) << env.out;
  EXPECT_EQ(env.out.find("fusion("), std::string::npos) << "XLA_FLAGS is read: " << env.out;
  Result only = Hlowb("opt " + chain.string() + " --passes=fusion,dce");
  ASSERT_EQ(only.code, 0) << only.out;
  EXPECT_NE(only.out.find("fusion("), std::string::npos) << only.out;
  EXPECT_EQ(only.out.find("is_scheduled=true"), std::string::npos) << "a pass list only";
  Result bad = Hlowb("opt " + chain.string() + " --xla_dump_hlo_as_text=perhaps");
  EXPECT_EQ(bad.code, 2) << bad.out;
  fs::remove_all(dir);
}

TEST(OptCli, PtxStageShowsTheCudaKernelsWithoutAGpu) {
  fs::path dir = TempDir("ptx");
  fs::create_directories(dir);
  fs::path m = dir / "small.hlo";
  std::ofstream(m) << "HloModule small\n\nENTRY e {\n  a = f32[64] parameter(0)\n"
                      "  b = f32[64] parameter(1)\n  s = f32[64] add(a, b)\n"
                      "  ROOT x = f32[64] exponential(s)\n}\n";
  Result stages = Hlowb("opt --list-stages");
  ASSERT_EQ(stages.code, 0) << stages.out;
  EXPECT_NE(stages.out.find("ptx\n"), std::string::npos) << stages.out;

  Result ptx = Hlowb("opt " + m.string() + " --platform=gpu --stage=ptx");
  ASSERT_EQ(ptx.code, 0) << ptx.out;
  EXPECT_NE(ptx.out.find(".entry"), std::string::npos) << ptx.out;
  EXPECT_NE(ptx.out.find(".target sm_80"), std::string::npos) << "default arch: " << ptx.out;
  Result sm90 = Hlowb("opt " + m.string() + " --platform=gpu --stage=ptx --cuda_arch=sm_90");
  ASSERT_EQ(sm90.code, 0) << sm90.out;
  EXPECT_NE(sm90.out.find(".entry"), std::string::npos) << sm90.out;
  EXPECT_NE(sm90.out.find(".target sm_90"), std::string::npos) << sm90.out;
  EXPECT_EQ(sm90.out.find(".target sm_80"), std::string::npos) << sm90.out;

  // PTX is the gpu platform's; the cpu platform's kernels are --stage=llvm.
  Result cpu = Hlowb("opt " + m.string() + " --platform=cpu --stage=ptx");
  EXPECT_EQ(cpu.code, 2) << cpu.out;
  EXPECT_NE(cpu.out.find("--stage=ptx needs --platform=gpu"), std::string::npos) << cpu.out;
  EXPECT_EQ(Hlowb("opt " + m.string() + " --stage=ptx").code, 2) << "cpu is the default";
  EXPECT_EQ(Hlowb("opt " + m.string() + " --platform=gpu --stage=ptx --cuda_arch=90").code, 2);
  EXPECT_EQ(Hlowb("opt " + m.string() + " --platform=gpu --cuda_arch=sm_90").code, 2)
      << "--cuda_arch goes with --stage=ptx";
  fs::remove_all(dir);
}

TEST(OptCli, InvalidModuleIsRefusedBeforeAnyPass) {
  fs::path dir = TempDir("invalid");
  fs::create_directories(dir);
  fs::path bad = dir / "bad.hlo";
  std::ofstream(bad) << "HloModule bad\n\nENTRY e {\n  p = f32[4] parameter(0)\n"
                        "  ROOT a = f32[5] add(p, p)\n}\n";
  Result r = Hlowb("opt " + bad.string());
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("does not verify; no pass was run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("e/a: declared shape f32[5]"), std::string::npos)
      << "names the instruction and what is wrong: " << r.out;
  fs::remove_all(dir);
}

TEST(OptCli, OwnDumpsReadLikeXlasAndBisectCleanly) {
  fs::path dir = TempDir("dump");
  Result r = Hlowb("opt " + Sample() + " --platform=cpu --xla_dump_to=" + dir.string() +
                   " --xla_dump_hlo_pass_re=.* -o /dev/null");
  ASSERT_EQ(r.code, 0) << r.out;
  int states = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.find(".txt") != std::string::npos) ++states;
  }
  EXPECT_GT(states, 5);
  EXPECT_TRUE(fs::exists(dir / "module_0000.jit_mlp_loss.before_optimizations.txt"));
  EXPECT_TRUE(fs::exists(dir / "module_0000.jit_mlp_loss.cpu_after_optimizations.txt"));
  EXPECT_TRUE(
      fs::exists(dir / "module_0000.jit_mlp_loss.cpu_after_optimizations-buffer-assignment.txt"));
  EXPECT_TRUE(fs::exists(dir /
                         "module_0000.jit_mlp_loss.cpu_after_optimizations-memory-usage-report.txt"));

  Result index = Hlowb("index " + dir.string());
  ASSERT_EQ(index.code, 0) << index.out;
  EXPECT_NE(index.out.find(" 1 modules, 0 unrecognised"), std::string::npos) << index.out;
  EXPECT_NE(index.out.find("HLO_passes_through_layout_assignment"), std::string::npos)
      << index.out;

  Result passes = Hlowb("passes " + dir.string() + " --module=0");
  ASSERT_EQ(passes.code, 0) << passes.out;
  EXPECT_NE(passes.out.find("HLO_passes_after_layout_assignment: fusion  changed"),
            std::string::npos)
      << passes.out;
  EXPECT_NE(passes.out.find("cpu_after_optimizations"), std::string::npos) << passes.out;

  Result diff = Hlowb("diff " + dir.string() + ":0:before " + dir.string() + ":0:after");
  ASSERT_EQ(diff.code, 0) << diff.out;
  EXPECT_NE(diff.out.find("fusion"), std::string::npos) << "the fusions show as added: " << diff.out;
  Result trace = Hlowb("trace " + dir.string() + " --module=0 --instruction=exponential.1");
  EXPECT_EQ(trace.code, 0) << trace.out;
  EXPECT_NE(trace.out.find("fused into fusion"), std::string::npos) << "exponential.1 was fused: " << trace.out;

  Result bisect = Hlowb("replay " + dir.string() + " --module=0 --bisect_passes");
  EXPECT_EQ(bisect.code, 0) << bisect.out;
  EXPECT_NE(bisect.out.find("no state diverged"), std::string::npos) << bisect.out;
  // The same walk with every state compiled and run on the cpu platform.
  Result bisect_cpu = Hlowb("replay " + dir.string() +
                            " --module=0 --bisect_passes --platform=cpu "
                            "--xla_cpu_enable_kernel_cache=false");
  EXPECT_EQ(bisect_cpu.code, 0) << bisect_cpu.out;
  EXPECT_NE(bisect_cpu.out.find("no state diverged"), std::string::npos) << bisect_cpu.out;
  fs::remove_all(dir);
}

// --xla_dump_hlo_snapshots on a replay: each iteration leaves an HloSnapshot of the module that
// ran (the cpu platform's optimised module) with its arguments and result, named as XLA's CPU
// client names them; the dump index recognises them and replaying one reproduces its result.
TEST(OptCli, ReplayDumpsSnapshotsThatReplayAgain) {
  fs::path dir = TempDir("snapshots");
  Result r = Hlowb("replay " + Sample() +
                   " --platform=cpu --xla_cpu_enable_kernel_cache=false --iterations=2"
                   " --xla_dump_to=" + dir.string() +
                   " --xla_dump_hlo_snapshots --xla_dump_hlo_as_proto");
  ASSERT_EQ(r.code, 0) << r.out;
  const fs::path first = dir / "module_0000.jit_mlp_loss.snapshot.0.pb";
  const fs::path second = dir / "module_0000.jit_mlp_loss.snapshot.1.pb";
  ASSERT_TRUE(fs::exists(first)) << r.out;
  ASSERT_TRUE(fs::exists(second)) << r.out;
  EXPECT_NE(r.out.find("snapshot: " + first.string()), std::string::npos) << r.out;
  // The compile's proto dump carries its buffer assignment.
  absl::StatusOr<OpenedHloFile> optimized =
      OpenHloFile((dir / "module_0000.jit_mlp_loss.cpu_after_optimizations.hlo.pb").string());
  ASSERT_TRUE(optimized.ok()) << optimized.status();
  EXPECT_NE(optimized->buffer_assignment, nullptr);

  absl::StatusOr<OpenedHloFile> snap = OpenHloFile(first.string());
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_TRUE(snap->is_snapshot);
  ASSERT_EQ(snap->modules.size(), 1u);
  const Module& ran = *snap->modules[0].module;
  EXPECT_EQ(snap->execution_platform, "Host");
  EXPECT_EQ(static_cast<int64_t>(snap->arguments.size()), ran.entry()->parameter_count());
  ASSERT_TRUE(snap->result.has_value());
  // It is the module the cpu platform ran: after its passes (fused, scheduled).
  EXPECT_TRUE(ran.config().is_scheduled);
  bool fused = false;
  for (const Instruction* i : ran.entry()->instructions()) fused |= i->opcode() == Opcode::kFusion;
  EXPECT_TRUE(fused);

  Result index = Hlowb("index " + dir.string());
  ASSERT_EQ(index.code, 0) << index.out;
  EXPECT_NE(index.out.find(" 0 unrecognised"), std::string::npos) << index.out;

  // Replaying the snapshot on the interpreter compares with the result the cpu run recorded.
  Result again = Hlowb("replay " + first.string());
  EXPECT_EQ(again.code, 0) << again.out;
  EXPECT_NE(again.out.find("arguments from snapshot"), std::string::npos) << again.out;
  EXPECT_NE(again.out.find("comparison with snapshot result: "), std::string::npos) << again.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
