// ReplaySession: platforms, argument sources, comparison, cancel, progress, per-instruction
// callback, determinism per seed.
#include "replay/session.h"

#include <atomic>

#include "core/support/file_util.h"
#include "gtest/gtest.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

std::unique_ptr<Module> Sample() {
  auto text = ReadFileToString(std::string(HLOWB_SOURCE_DIR) + "/resources/samples/sample.hlo");
  EXPECT_TRUE(text.ok());
  return Parse(*text);
}

constexpr char kAdd[] = R"(
HloModule add
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT r = f32[4] add(a, b)
}
)";

TEST(ReplaySession, RunsWithReferenceAndCompares) {
  auto m = Sample();
  ReplayOptions o;
  o.reference_platform = "interpreter";
  o.iterations = 2;
  ReplaySession s(*m, o);
  auto r = s.Run();
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->iterations.size(), 2u);
  EXPECT_TRUE(r->compared());
  EXPECT_TRUE(r->all_match());
  for (const ReplayIteration& it : r->iterations) {
    ASSERT_TRUE(it.comparison.has_value());
    EXPECT_TRUE(it.comparison->ok());
    EXPECT_EQ(it.compared_against, "reference platform interpreter");
    EXPECT_EQ(it.argument_source, "fake data (seed 42)");
    EXPECT_TRUE(it.reference_result.has_value());
  }
  // One engine across iterations: the iterations get different arguments.
  EXPECT_FALSE(r->iterations[0].arguments[0] == r->iterations[1].arguments[0]);
}

TEST(ReplaySession, SameSeedSameResults) {
  auto m = Sample();
  ReplayOptions o;
  o.seed = 7;
  auto a = ReplaySession(*m, o).Run();
  auto b = ReplaySession(*m, o).Run();
  o.seed = 8;
  auto c = ReplaySession(*m, o).Run();
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_TRUE(a->iterations[0].result == b->iterations[0].result);
  for (size_t i = 0; i < a->iterations[0].arguments.size(); ++i) {
    EXPECT_TRUE(a->iterations[0].arguments[i] == b->iterations[0].arguments[i]);
  }
  EXPECT_FALSE(a->iterations[0].arguments[0] == c->iterations[0].arguments[0]);
}

TEST(ReplaySession, HostTransfersAreFedOnlyWhenAsked) {
  auto m = Parse(testing::kHostTransferModule);

  ASSERT_NE(m, nullptr);
  ReplayOptions o;
  auto stopped = ReplaySession(*m, o).Run();
  ASSERT_FALSE(stopped.ok());
  EXPECT_NE(stopped.status().message().find("%in"), std::string::npos) << stopped.status();
  EXPECT_NE(stopped.status().message().find("--host_transfers"), std::string::npos);

  o.host_transfers = HostTransferMode::kZeros;
  auto zeros = ReplaySession(*m, o).Run();
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  // Zeros from the host: the result is the argument.
  EXPECT_TRUE(zeros->iterations[0].result == zeros->iterations[0].arguments[0]);
  std::string warnings;
  for (const std::string& w : zeros->warnings) warnings += w + "\n";
  EXPECT_NE(warnings.find("fed with zeros: in, r"), std::string::npos) << warnings;
  EXPECT_NE(warnings.find("dropped: o, s"), std::string::npos) << warnings;

  o.host_transfers = HostTransferMode::kFake;
  auto fake = ReplaySession(*m, o).Run();
  auto again = ReplaySession(*m, o).Run();
  ASSERT_TRUE(fake.ok() && again.ok());
  EXPECT_FALSE(fake->iterations[0].result == fake->iterations[0].arguments[0]);
  EXPECT_TRUE(fake->iterations[0].result == again->iterations[0].result);  // seeded

}

TEST(ReplaySession, HostTransferModeWordsRoundTrip) {
  for (HostTransferMode m :
       {HostTransferMode::kError, HostTransferMode::kZeros, HostTransferMode::kFake}) {
    auto parsed = ParseHostTransferMode(HostTransferModeName(m));
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, m);
  }
  EXPECT_EQ(HostTransferModeName(HostTransferMode::kZeros), "zeros");
  auto bad = ParseHostTransferMode("sometimes");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("--host_transfers must be error, zeros or fake"),
            std::string::npos);
  EXPECT_NE(bad.status().message().find("'sometimes'"), std::string::npos);
  EXPECT_FALSE(ParseHostTransferMode("").ok());
  EXPECT_FALSE(ParseHostTransferMode("Zeros").ok());
}

TEST(ReplaySession, PlatformsNotBuiltAndUnknown) {
  auto m = Parse(kAdd);
  for (const char* cuda : {"cuda", "gpu"}) {
    // cuda without a driver or GPU (CI) says what is missing and what to use instead; with
    // one it compiles, says what it compiled, and agrees with the interpreter.
    ReplayOptions o;
    o.platform = cuda;
    o.reference_platform = "interpreter";
    auto r = ReplaySession(*m, o).Run();
    if (CudaAvailable().ok()) {
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_TRUE(r->all_match());
      EXPECT_FALSE(r->compile_summary.empty());
      EXPECT_TRUE(CheckPlatform(cuda).ok());
      continue;
    }
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    const std::string message(r.status().message());
    EXPECT_EQ(message.find("not built yet"), std::string::npos) << message;
    EXPECT_NE(message.find("driver"), std::string::npos) << message;
    EXPECT_NE(message.find("--platform=cpu"), std::string::npos) << message;
    EXPECT_NE(message.find(std::string(CudaAvailable().message())), std::string::npos)
        << message;
    // As reference platform too.
    ReplayOptions ref;
    ref.reference_platform = cuda;
    EXPECT_EQ(ReplaySession(*m, ref).Run().status().code(),
              absl::StatusCode::kFailedPrecondition);
  }
  {
    ReplayOptions o;
    o.platform = "rocm";
    auto r = ReplaySession(*m, o).Run();
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(std::string(r.status().message()).find("not built yet"), std::string::npos);
  }
  EXPECT_TRUE(CompilesModule("cpu") && CompilesModule("host") && CompilesModule("cuda") &&
              CompilesModule("gpu"));
  EXPECT_FALSE(CompilesModule("interpreter") || CompilesModule("xla-cpu"));
  {
    // cpu runs, compiled, and matches the interpreter as reference.
    ReplayOptions o;
    o.platform = "cpu";
    o.reference_platform = "interpreter";
    o.cpu.cache_dir = "";
    auto r = ReplaySession(*m, o).Run();
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->compared());
    EXPECT_TRUE(r->all_match());
    EXPECT_NE(r->compile_summary.find("kernel"), std::string::npos) << r->compile_summary;
  }
  ReplayOptions o;
  o.reference_platform = "tpu";
  EXPECT_EQ(ReplaySession(*m, o).Run().status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(CheckPlatform("tpu").message()).find("cuda"), std::string::npos);
  o.reference_platform = "reference";  // run_hlo_module's name for the interpreter
  EXPECT_TRUE(ReplaySession(*m, o).Run().ok());
}

TEST(ReplaySession, SnapshotArgumentsAndExpectedResult) {
  auto m = Parse(kAdd);
  ReplayInputs in;
  in.snapshot_arguments = std::vector<Literal>{};
  in.snapshot_arguments->push_back(Lit("f32[4]{0} {1, 2, 3, 4}"));
  in.snapshot_arguments->push_back(Lit("f32[4]{0} {10, 20, 30, 40}"));
  in.snapshot_result = Lit("f32[4]{0} {11, 22, 33, 45}");
  auto r = ReplaySession(*m, {}, in).Run();
  ASSERT_TRUE(r.ok()) << r.status();
  const ReplayIteration& it = r->iterations[0];
  EXPECT_EQ(it.argument_source, "snapshot");
  EXPECT_TRUE(it.result == Lit("f32[4]{0} {11, 22, 33, 44}"));
  ASSERT_TRUE(it.comparison.has_value());
  EXPECT_EQ(it.compared_against, "snapshot result");
  EXPECT_FALSE(it.comparison->ok());
  ASSERT_EQ(it.comparison->outputs[0].worst.size(), 1u);
  EXPECT_EQ(it.comparison->outputs[0].worst[0].index, (std::vector<int64_t>{3}));
  EXPECT_FALSE(r->all_match());

  // --force_fake_data ignores the snapshot's arguments (and so its result).
  ReplayOptions fake;
  fake.force_fake_data = true;
  auto f = ReplaySession(*m, fake, in).Run();
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->iterations[0].argument_source, "fake data (seed 42)");
  EXPECT_FALSE(f->compared());

  // Arguments that do not fit the parameters.
  ReplayInputs wrong;
  wrong.snapshot_arguments = std::vector<Literal>{};
  wrong.snapshot_arguments->push_back(Lit("f32[3]{0} {1, 2, 3}"));
  wrong.snapshot_arguments->push_back(Lit("f32[4]{0} {1, 2, 3, 4}"));
  auto w = ReplaySession(*m, {}, wrong).Run();
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(w.status().message()).find("argument 0 has shape f32[3]"),
            std::string::npos) << w.status();
}

TEST(ReplaySession, LiteralFileIterations) {
  auto m = Parse(kAdd);
  ReplayInputs in;
  in.literal_iterations.resize(1);
  in.literal_iterations[0].arguments.push_back(Lit("f32[4]{0} {1, 1, 1, 1}"));
  in.literal_iterations[0].arguments.push_back(Lit("f32[4]{0} {1, 2, 3, 4}"));
  in.literal_iterations[0].result = Lit("f32[4]{0} {2, 3, 4, 5}");
  auto r = ReplaySession(*m, {}, in).Run();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->iterations[0].argument_source, "literals file iteration 1");
  EXPECT_TRUE(r->compared());
  EXPECT_TRUE(r->all_match());
  // The report converts back to a literals file.
  std::vector<IterationLiterals> out = r->ToIterationLiterals();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(*out[0].result == Lit("f32[4]{0} {2, 3, 4, 5}"));
  ReplayOptions more;
  more.iterations = 2;
  auto two = ReplaySession(*m, more, in).Run();
  EXPECT_EQ(two.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ReplaySession, CancelBeforeAndDuringRun) {
  auto m = Sample();
  CancelToken before;
  before.Cancel();
  auto r = ReplaySession(*m, {}).Run(&before);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);

  // Cancelled from the per-instruction callback after a few instructions.
  CancelToken during;
  std::atomic<int> seen{0};
  ReplayOptions o;
  o.on_instruction = [&](const InstructionProfile&) {
    if (++seen == 3) during.Cancel();
  };
  auto d = ReplaySession(*m, o).Run(&during);
  EXPECT_EQ(d.status().code(), absl::StatusCode::kCancelled) << d.status();
  EXPECT_LT(seen.load(), 10);
}

TEST(ReplaySession, ProgressAndPerInstructionStatistics) {
  auto m = Parse(kAdd);
  ReplayOptions o;
  o.reference_platform = "interpreter";
  std::vector<InstructionProfile> events;
  o.on_instruction = [&](const InstructionProfile& p) { events.push_back(p); };
  int64_t last_done = -1, last_total = 0;
  bool monotone = true;
  ProgressFn progress = [&](int64_t done, int64_t total, const std::string&) {
    monotone &= done >= last_done;
    last_done = done;
    last_total = total;
  };
  ReplayInputs in;
  in.snapshot_arguments = std::vector<Literal>{};
  in.snapshot_arguments->push_back(Lit("f32[4]{0} {1, 2, 3, 4}"));
  in.snapshot_arguments->push_back(Lit("f32[4]{0} {0, 0, 0, nan}"));
  auto r = ReplaySession(*m, o, in).Run(nullptr, progress);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(monotone);
  EXPECT_GT(last_total, 0);
  EXPECT_EQ(last_done, last_total);
  const InstructionProfile* root = nullptr;
  bool saw_reference = false;
  for (const InstructionProfile& p : events) {
    ASSERT_NE(p.instruction, nullptr);
    EXPECT_GE(p.seconds, 0);
    if (p.instruction->name() == "r" && !p.reference) root = &p;
    saw_reference |= p.reference;
  }
  EXPECT_TRUE(saw_reference);
  ASSERT_NE(root, nullptr);
  EXPECT_EQ(root->statistics.elements, 4);
  EXPECT_EQ(root->statistics.nan_count, 1);
  EXPECT_EQ(root->statistics.min, 1);
  EXPECT_EQ(root->statistics.max, 3);
}

TEST(ReplaySession, ElidedConstantsGetSeededFakeData) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  c = f32[8] constant({...})
  ROOT r = f32[8] multiply(a, c)
}
)");
  ReplayOptions o;
  auto a = ReplaySession(*m, o).Run();
  auto b = ReplaySession(*m, o).Run();
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->warnings.size(), 1u);
  EXPECT_NE(a->warnings[0].find("1 constant had elided data"), std::string::npos);
  EXPECT_TRUE(a->iterations[0].result == b->iterations[0].result);
  o.fake_elided_constants = false;
  auto c = ReplaySession(*m, o).Run();
  EXPECT_FALSE(c.ok());
}

TEST(ReplaySession, InvalidModuleIsRejectedBeforeRunning) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT r = f32[5] negate(a)
}
)");
  auto r = ReplaySession(*m, {}).Run();
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("does not verify"), std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace hlowb
