// The xla-cpu platform: modules replayed on the interpreter against real XLA's CPU backend agree
// (f32, s32, bf16, tuples of mixed types), from the library and from `hlowb replay`; XLA's own
// error text reaches the user; a helper that hangs is killed at the timeout, one that crashes
// or a missing Python is reported. Tests that need real XLA skip, saying why, when the
// project's .venv (scripts/setup) or HLOWB_PYTHON has no jax. The corpus comparison runs only
// with HLOWB_XLA_CPU_CORPUS=1 (it starts one helper per module, minutes in all).
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "plugins/api/custom_call_registry.h"
#include "plugins/builtin/builtin_plugins.h"
#include "gtest/gtest.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "replay/session.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using ::hlowb::testing::Parse;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Why real XLA is unavailable, or nullopt when a Python with jax is there (checked once).
const std::optional<std::string>& WhyNoJax() {
  static const std::optional<std::string> why = []() -> std::optional<std::string> {
    auto python = FindXlaPython();
    if (!python.ok()) return std::string(python.status().message());
    std::string cmd = "'" + *python + "' -c 'import jax, ml_dtypes' >/dev/null 2>&1";
    int status = std::system(cmd.c_str());
    if (status != 0) {
      return *python + " cannot import jax; run scripts/setup or set HLOWB_PYTHON";
    }
    return std::nullopt;
  }();
  return why;
}

#define SKIP_WITHOUT_JAX()                                                                  \
  if (WhyNoJax()) GTEST_SKIP() << "real XLA is not available: " << *WhyNoJax()

// Sets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// An executable shell script standing in for Python, set as HLOWB_PYTHON for one scope.
class FakePython {
 public:
  FakePython(const std::string& name, const std::string& body)
      : path_(fs::temp_directory_path() /
              ("hlowb_xla_cpu_test_" + std::to_string(getpid()) + "_" + name + ".sh")) {
    std::ofstream(path_) << "#!/bin/sh\n" << body << "\n";
    chmod(path_.c_str(), 0755);
    env_.emplace("HLOWB_PYTHON", path_.string());
  }
  ~FakePython() {
    env_.reset();
    std::error_code ec;
    fs::remove(path_, ec);
  }

 private:
  fs::path path_;
  std::optional<ScopedEnv> env_;
};

absl::StatusOr<ReplayReport> ReplayAgainstXla(const std::string& text, uint64_t seed = 7) {
  auto module = Parse(text);
  if (module == nullptr) return absl::InvalidArgumentError("test module does not parse");
  ReplayOptions options;
  options.platform = "interpreter";
  options.reference_platform = "xla-cpu";
  options.seed = seed;
  options.xla_cpu_timeout_seconds = 120;
  return ReplaySession(*module, options).Run();
}

void ExpectAgreement(const absl::StatusOr<ReplayReport>& report) {
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->iterations.size(), 1u);
  const ReplayIteration& it = report->iterations[0];
  ASSERT_TRUE(it.reference_result.has_value());
  ASSERT_TRUE(it.comparison.has_value());
  EXPECT_TRUE(it.comparison->ok()) << it.comparison->ToString();
  EXPECT_EQ(it.compared_against, "reference platform xla-cpu");
  EXPECT_TRUE(it.reference_result->shape().Compatible(it.result.shape()));
  EXPECT_TRUE(Contains(report->xla_optimized_module, "HloModule"))
      << report->xla_optimized_module;
  EXPECT_FALSE(report->xla_jaxlib_version.empty());
}

TEST(XlaCpu, ElementwiseF32Agrees) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayAgainstXla(R"(
HloModule elementwise_f32
ENTRY e {
  a = f32[3,4] parameter(0)
  b = f32[3,4] parameter(1)
  m = f32[3,4] multiply(a, b)
  s = f32[3,4] add(m, a)
  t = f32[3,4] tanh(s)
  ROOT r = f32[3,4] maximum(t, b)
}
)");
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(report));
  // The results are XLA's numbers, not a copy of the interpreter's arguments.
  const ReplayIteration& it = report->iterations[0];
  EXPECT_FALSE(*it.reference_result == it.arguments[0]);
}

TEST(XlaCpu, S32AgreesExactly) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayAgainstXla(R"(
HloModule integers
ENTRY e {
  a = s32[8] parameter(0)
  b = s32[8] parameter(1)
  m = s32[8] multiply(a, b)
  x = s32[8] xor(m, a)
  ROOT r = s32[8] subtract(x, b)
}
)");
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(report));
  const ReplayIteration& it = report->iterations[0];
  EXPECT_TRUE(*it.reference_result == it.result);
}

TEST(XlaCpu, Bf16Agrees) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayAgainstXla(R"(
HloModule bf16
ENTRY e {
  a = bf16[16] parameter(0)
  b = bf16[16] parameter(1)
  ROOT r = bf16[16] add(a, b)
}
)");
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(report));
  const ReplayIteration& it = report->iterations[0];
  EXPECT_EQ(it.reference_result->shape().element_type(), PrimitiveType::kBF16);
  EXPECT_TRUE(*it.reference_result == it.result);
}

// A bf16 product rounded before an exp that amplifies the rounding (exp of values near 60,
// where one bf16 ulp is 0.25 and moves the result by 28%). XLA by default may keep the product
// in f32 (--xla_allow_excess_precision); the reference turns that off unless the user's
// XLA_FLAGS says otherwise, so it rounds where the module says, as the interpreter does.
constexpr char kRoundedBeforeExp[] = R"(
HloModule rounded_before_exp
ENTRY e {
  p = f32[512] parameter(0)
  i = f32[512] iota(), iota_dimension=0
  k = f32[] constant(0.13)
  kb = f32[512] broadcast(k), dimensions={}
  ik = f32[512] multiply(i, kb)
  x = f32[512] add(ik, p)
  h = bf16[512] convert(x)
  c = bf16[] constant(0.7)
  cb = bf16[512] broadcast(c), dimensions={}
  m = bf16[512] multiply(h, cb)
  f = f32[512] convert(m)
  ROOT r = f32[512] exponential(f)
}
)";

TEST(XlaCpu, ReferenceRoundsBf16WhereTheModuleSays) {
  SKIP_WITHOUT_JAX();
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(ReplayAgainstXla(kRoundedBeforeExp)));
}

TEST(XlaCpu, UsersExcessPrecisionSettingWins) {
  SKIP_WITHOUT_JAX();
  // With XLA's excess precision on, the product skips its rounding and the exp results move by
  // up to a quarter: the comparison must see it.
  ScopedEnv flags("XLA_FLAGS", "--xla_allow_excess_precision=true");
  auto report = ReplayAgainstXla(kRoundedBeforeExp);
  ASSERT_TRUE(report.ok()) << report.status();
  const ReplayIteration& it = report->iterations[0];
  ASSERT_TRUE(it.comparison.has_value());
  EXPECT_FALSE(it.comparison->ok());
  EXPECT_GT(it.comparison->outputs[0].max_rel_error, 0.05) << it.comparison->ToString();
}

TEST(XlaCpu, NestedTupleOfMixedTypesAgrees) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayAgainstXla(R"(
HloModule tuples
ENTRY e {
  a = f64[2,3] parameter(0)
  b = u8[5] parameter(1)
  c = c64[2] parameter(2)
  p = (s64[4], f16[3]) parameter(3)
  s = s64[4] get-tuple-element(p), index=0
  h = f16[3] get-tuple-element(p), index=1
  neg = f64[2,3] negate(a)
  gt = pred[2,3] compare(a, neg), direction=GT
  cc = c64[2] multiply(c, c)
  inner = (pred[2,3], u8[5]) tuple(gt, b)
  ROOT out = ((pred[2,3], u8[5]), f64[2,3], c64[2], s64[4], f16[3]) tuple(inner, neg, cc, s, h)
}
)");
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(report));
  const ReplayIteration& it = report->iterations[0];
  ASSERT_EQ(it.reference_result->tuple_elements().size(), 5u);
  EXPECT_TRUE(*it.reference_result == it.result);
}

TEST(XlaCpu, XlaErrorTextIsReported) {
  SKIP_WITHOUT_JAX();
  auto module = Parse(R"(
HloModule rejected
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="hlowb_no_such_target"
}
)");
  ReplayOptions options;
  options.platform = "xla-cpu";
  auto report = ReplaySession(*module, options).Run();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInvalidArgument) << report.status();
  std::string message(report.status().message());
  EXPECT_TRUE(Contains(message, "XLA (jaxlib ")) << message;
  EXPECT_TRUE(Contains(message, "hlowb_no_such_target")) << message;
}

TEST(XlaCpu, ElidedConstantsGetTheInterpretersValues) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayAgainstXla(R"(
HloModule elided
ENTRY e {
  a = f32[6] parameter(0)
  c = f32[6] constant({...})
  ROOT r = f32[6] add(a, c)
}
)");
  ASSERT_NO_FATAL_FAILURE(ExpectAgreement(report));
}

TEST(XlaCpu, CliComparesTheSampleWithXla) {
  SKIP_WITHOUT_JAX();
  std::string cmd = std::string(HLOWB_BINARY) + " replay " + HLOWB_SOURCE_DIR +
                    "/resources/samples/sample.hlo --reference_platform=xla-cpu 2>&1";
  std::string output;
  FILE* pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
  int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << output;
  EXPECT_TRUE(Contains(output, "reference platform: xla-cpu")) << output;
  EXPECT_TRUE(Contains(output, "comparison with reference platform xla-cpu: OK")) << output;
}

TEST(XlaCpu, HangingHelperIsKilledAtTheTimeout) {
  FakePython python("hang", "echo started; exec sleep 30");
  auto module = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n");
  ReplayOptions options;
  options.platform = "xla-cpu";
  options.xla_cpu_timeout_seconds = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto report = ReplaySession(*module, options).Run();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kDeadlineExceeded) << report.status();
  EXPECT_TRUE(Contains(std::string(report.status().message()), "was killed"))
      << report.status();
  EXPECT_TRUE(Contains(std::string(report.status().message()), "started")) << report.status();
  EXPECT_LT(seconds, 10);
}

TEST(XlaCpu, CliHelperTimeoutFlag) {
  FakePython python("hang_cli", "echo started; exec sleep 30");
  const fs::path path = fs::temp_directory_path() /
                        ("hlowb_xla_cpu_timeout_" + std::to_string(getpid()) + ".hlo");
  std::ofstream(path) << "HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n";
  auto run = [&](const std::string& flags) {
    std::string cmd = std::string(HLOWB_BINARY) + " replay " + path.string() +
                      " --platform=xla-cpu " + flags + " 2>&1";
    std::string output;
    FILE* pipe = popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while (pipe != nullptr && (n = fread(buf, 1, sizeof(buf), pipe)) > 0) output.append(buf, n);
    const int status = pipe != nullptr ? pclose(pipe) : -1;
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : -1, output);
  };
  auto t0 = std::chrono::steady_clock::now();
  auto [code, out] = run("--xla_cpu_helper_timeout=0.5");
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(code, 1) << out;
  EXPECT_TRUE(Contains(out, "was killed")) << out;
  EXPECT_LT(seconds, 10);
  auto [bad_code, bad_out] = run("--xla_cpu_helper_timeout=soon");
  EXPECT_EQ(bad_code, 2) << bad_out;
  EXPECT_TRUE(Contains(bad_out, "--xla_cpu_helper_timeout must be a positive number")) << bad_out;
  fs::remove(path);
}

TEST(XlaCpu, CrashingHelperIsReportedWithItsOutput) {
  FakePython python("crash", "echo 'Fatal: boom' >&2; exit 3");
  auto module = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n");
  ReplayOptions options;
  options.platform = "interpreter";
  options.reference_platform = "xla-cpu";
  auto report = ReplaySession(*module, options).Run();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInternal) << report.status();
  std::string message(report.status().message());
  EXPECT_TRUE(Contains(message, "reference platform: ")) << message;
  EXPECT_TRUE(Contains(message, "exited with status 3")) << message;
  EXPECT_TRUE(Contains(message, "Fatal: boom")) << message;
}

TEST(XlaCpu, XlaCheckFailureNamesTheFailedCheck) {
  FakePython python("abort", R"sh(
echo "I1126 10:00:00.000000 1 client.cc:1] starting" >&2
echo "F1126 10:00:00.000001 1 shape.h:397] Check failed: has_layout() f16[1000]" >&2
echo "*** Check failure stack trace: ***" >&2
kill -ABRT $$)sh");
  auto module = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n");
  ReplayOptions options;
  options.platform = "xla-cpu";
  auto report = ReplaySession(*module, options).Run();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kInternal) << report.status();
  std::string message(report.status().message());
  EXPECT_TRUE(Contains(message, "XLA aborted")) << message;
  EXPECT_TRUE(Contains(message, "Check failed: has_layout() f16[1000]")) << message;
  EXPECT_FALSE(Contains(message, "stack trace")) << message;
}

TEST(XlaCpu, PythonWithoutJaxSaysHowToGetIt) {
  FakePython python("nojax", R"sh(
echo "python cannot import jax (No module named 'jax')" > "$2/message.txt"
printf 'hlowb-xla-cpu-result 1\nstatus no_jax\n' > "$2/result.txt")sh");
  auto module = Parse("HloModule m\nENTRY e {\n  ROOT a = f32[2] parameter(0)\n}\n");
  ReplayOptions options;
  options.platform = "xla-cpu";
  auto report = ReplaySession(*module, options).Run();
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.status().code(), absl::StatusCode::kFailedPrecondition) << report.status();
  std::string message(report.status().message());
  EXPECT_TRUE(Contains(message, "cannot import jax")) << message;
  EXPECT_TRUE(Contains(message, "scripts/setup")) << message;
  EXPECT_TRUE(Contains(message, "HLOWB_PYTHON")) << message;
}

TEST(XlaCpu, MissingPythonFailsThePlatformCheck) {
  ScopedEnv python("HLOWB_PYTHON", "/nonexistent/hlowb/python");
  absl::Status st = CheckPlatform("xla-cpu");
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition) << st;
  EXPECT_TRUE(Contains(std::string(st.message()), "scripts/setup")) << st;
}

// Several devices: XLA's host devices stand in for ours, device d = replica d / P,
// partition d % P. The ids each device reports pin the mapping down; the collectives check
// that our rendezvous and XLA agree on groups, channels and permutation pairs.
absl::StatusOr<ReplayReport> ReplayDevicesAgainstXla(const std::string& text,
                                                     const std::string& argument_mode = "") {
  auto module = Parse(text);
  if (module == nullptr) return absl::InvalidArgumentError("test module does not parse");
  ReplayOptions options;
  options.platform = "interpreter";
  options.reference_platform = "xla-cpu";
  options.seed = 11;
  options.hlo_argument_mode = argument_mode;
  options.xla_cpu_timeout_seconds = 120;
  return ReplaySession(*module, options).Run();
}

void ExpectEveryDeviceAgrees(const absl::StatusOr<ReplayReport>& report, size_t devices) {
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->iterations.size(), 1u);
  const ReplayIteration& it = report->iterations[0];
  ASSERT_EQ(it.devices.size(), devices);
  for (const DeviceReplay& d : it.devices) {
    ASSERT_TRUE(d.reference_result.has_value());
    ASSERT_TRUE(d.comparison.has_value());
    EXPECT_TRUE(d.comparison->ok()) << "replica " << d.replica << " partition " << d.partition
                                    << ": " << d.comparison->ToString();
  }
  EXPECT_TRUE(Contains(report->xla_optimized_module, "HloModule"));
}

TEST(XlaCpu, ReplicasAndPartitionsAgree) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayDevicesAgainstXla(R"(HloModule m, replica_count=2, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  p = f32[4] parameter(0)
  all = f32[4] all-reduce(p), replica_groups={{0,1,2,3}}, to_apply=add, channel_id=1, use_global_device_ids=true
  pairs = f32[4] all-reduce(p), replica_groups={{0,2},{1,3}}, to_apply=add, channel_id=2, use_global_device_ids=true
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  swap = f32[4] collective-permute(p), channel_id=3, source_target_pairs={{0,1},{1,0}}
  gathered = f32[8] all-gather(p), channel_id=4, replica_groups={{0,1},{2,3}}, dimensions={0}, use_global_device_ids=true
  ROOT t = (f32[4], f32[4], u32[], u32[], f32[4], f32[8]) tuple(all, pairs, pid, rid, swap, gathered)
})");
  ExpectEveryDeviceAgrees(report, 4);
  // The device ids came back per device, not one device's for all.
  ASSERT_TRUE(report.ok());
  const auto& devices = report->iterations[0].devices;
  EXPECT_NE(devices[0].reference_result->tuple_elements()[2],
            devices[1].reference_result->tuple_elements()[2]);
  EXPECT_NE(devices[0].reference_result->tuple_elements()[3],
            devices[2].reference_result->tuple_elements()[3]);
}

TEST(XlaCpu, CrossReplicaCollectivesAgree) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayDevicesAgainstXla(R"(HloModule m, replica_count=4

add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}

ENTRY e {
  p = s32[8] parameter(0)
  sum = s32[8] all-reduce(p), replica_groups={{0,1},{2,3}}, to_apply=add
  scattered = s32[4] reduce-scatter(p), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=add
  a2a = s32[8] all-to-all(p), replica_groups={{0,1,2,3}}, dimensions={0}
  ROOT t = (s32[8], s32[4], s32[8]) tuple(sum, scattered, a2a)
})",
                                        "use_device_id_as_input");
  ExpectEveryDeviceAgrees(report, 4);
}

// XLA's CPU backend sums a bf16 all-reduce in f32 and rounds once. {256, 1 x 7} sums to 263,
// which rounds to 264; a fold that rounded after every step would stay at 256. Fake bf16 data
// on 8 replicas is summed too.
TEST(XlaCpu, Bf16AllReduceIsTheRoundedSum) {
  SKIP_WITHOUT_JAX();
  auto report = ReplayDevicesAgainstXla(R"(HloModule m, replica_count=8

add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(b, a)
}

ENTRY e {
  p = bf16[4,300] parameter(0)
  sum = bf16[4,300] all-reduce(p), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  big = bf16[] constant(256)
  one = bf16[] constant(1)
  v = bf16[] select(first, big, one)
  vb = bf16[4] broadcast(v), dimensions={}
  vsum = bf16[4] all-reduce(vb), replica_groups={}, to_apply=add
  ROOT t = (bf16[4,300], bf16[4]) tuple(sum, vsum)
})");
  ExpectEveryDeviceAgrees(report, 8);
  ASSERT_TRUE(report.ok());
  for (const DeviceReplay& d : report->iterations[0].devices) {
    EXPECT_EQ(PrintShapedLiteral(d.result.tuple_elements()[1]), "bf16[4] {264, 264, 264, 264}");
  }
}

TEST(XlaCpu, DeviceCountBeyondTheLimitIsRefused) {
  FakePython python("unused", "exit 1");
  std::vector<std::vector<Literal>> lists(1);
  auto run = RunHloTextOnXlaCpuDevices("HloModule m", Shape::Array(PrimitiveType::kF32, {}),
                                       lists, kMaxXlaCpuDevices + 1, 1);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument) << run.status();
  EXPECT_TRUE(Contains(std::string(run.status().message()), "devices")) << run.status();
}

// The shared corpus on the interpreter against XLA's CPU backend. Lists what XLA cannot
// compile (with XLA's message), where the two disagree, and what the interpreter lacks.
TEST(XlaCpuCorpus, InterpreterAgainstXla) {
  SKIP_WITHOUT_JAX();
  if (std::getenv("HLOWB_XLA_CPU_CORPUS") == nullptr) {
    GTEST_SKIP() << "set HLOWB_XLA_CPU_CORPUS=1 to compare the corpus with XLA (one helper "
                    "process per module, minutes in all)";
  }
  std::vector<std::string> files;
  std::error_code ec;
  fs::path root(HLOWB_CORPUS_DIR);
  if (fs::is_directory(root, ec)) {
    for (const auto& entry : fs::recursive_directory_iterator(root, ec)) {
      std::string ext = entry.path().extension().string();
      if (entry.is_regular_file() && (ext == ".hlo" || ext == ".txt")) {
        files.push_back(entry.path().string());
      }
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) GTEST_SKIP() << "corpus folder " << HLOWB_CORPUS_DIR << " is absent";

  int agree = 0, disagree = 0, xla_rejects = 0, xla_aborts = 0, interpreter_lacks = 0, other = 0,
      total = 0;
  std::string xla_report, abort_report, mismatch_report, interpreter_report, other_report;
  for (const std::string& path : files) {
    auto text = ReadFileToString(path);
    ASSERT_TRUE(text.ok()) << path;
    std::vector<std::string_view> parts = SplitInputFile(*text);
    for (size_t p = 0; p < parts.size(); ++p) {
      std::string label = fs::path(path).filename().string() +
                          (parts.size() > 1 ? "#" + std::to_string(p + 1) : "");
      auto module = ParseModule(parts[p]);
      if (!module.ok() || (*module)->entry() == nullptr) continue;
      if (CountErrors(VerifyModule(**module)) > 0) continue;
      ++total;
      ReplayOptions options;
      options.seed = 1234;
      options.memory_budget_bytes = uint64_t{2} << 30;
      options.reference_platform = "xla-cpu";
      options.xla_cpu_timeout_seconds = 120;
      auto report = ReplaySession(**module, options).Run();
      std::string message(report.ok() ? "" : report.status().message());
      if (!report.ok() && Contains(message, "no custom-call handler")) {
        // The interpreter computes zeros for a call it has no handler for, so that the module
        // reaches XLA and the list says whether XLA can run it.
        CustomCallDispatchOptions zeros;
        zeros.fallback = CustomCallFallback::kZeros;
        options.custom_call =
            CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), zeros)->AsFunction();
        report = ReplaySession(**module, options).Run();
        message = report.ok() ? "" : std::string(report.status().message());
      }
      // One line per module: the first line of the message.
      std::string first_line = message.substr(0, message.find('\n'));
      if (report.ok()) {
        if (report->all_match()) {
          ++agree;
        } else {
          ++disagree;
          const ComparisonReport& c = *report->iterations[0].comparison;
          std::string verdict = c.ToString();
          mismatch_report += "  " + label + ": " + verdict.substr(0, verdict.find('\n')) + "\n";
        }
      } else if (Contains(message, "reference platform: XLA (jaxlib")) {
        ++xla_rejects;
        std::string xla = message.substr(message.find("the module: ") + 12);
        // XLA's first informative line.
        std::string line = xla.substr(0, xla.find('\n'));
        xla_report += "  " + label + ": " + line.substr(0, 300) + "\n";
      } else if (Contains(message, "reference platform: XLA aborted")) {
        ++xla_aborts;
        abort_report += "  " + label + ": " + first_line.substr(first_line.find("): ") + 3) + "\n";
      } else if (report.status().code() == absl::StatusCode::kUnimplemented ||
                 report.status().code() == absl::StatusCode::kResourceExhausted) {
        ++interpreter_lacks;
        interpreter_report += "  " + label + ": " + first_line.substr(0, 200) + "\n";
      } else {
        ++other;
        other_report += "  " + label + ": " + first_line.substr(0, 300) + "\n";
      }
      // A helper that crashes or hangs is a bug, whatever the module.
      EXPECT_NE(report.status().code(), absl::StatusCode::kDeadlineExceeded) << label;
      EXPECT_FALSE(Contains(message, "xla-cpu helper (")) << label << ": " << message;
    }
  }
  std::cout << "interpreter vs xla-cpu over the corpus: " << total << " modules; " << agree
            << " agree, " << disagree << " disagree, " << xla_rejects
            << " XLA cannot compile or run, " << xla_aborts << " XLA aborts on, "
            << interpreter_lacks
            << " the interpreter cannot run, " << other << " other errors\n"
            << "XLA cannot compile or run:\n" << xla_report
            << "XLA aborts (a failed internal check):\n" << abort_report
            << "disagree:\n" << mismatch_report
            << "interpreter cannot run:\n" << interpreter_report
            << "other errors:\n" << other_report;
  EXPECT_GT(agree, 0);
  // Every module both sides run must agree (XLA's reference rounds where the module says, and
  // 16-bit all-reduces are the rounded sums on both).
  EXPECT_EQ(disagree, 0) << mismatch_report;
}

}  // namespace
}  // namespace hlowb
