// Conformance with real XLA: tests/conformance/jax_programs.py (21 JAX programs: networks,
// control flow, sort and top-k, gather and scatter, threefry, FFT, linear algebra, bf16, integer
// ops, reductions and an 8-device shard_map) runs once per suite under `hlowb capture
// --pass-by-pass --snapshots` with the pinned jax, and the dump it leaves is held against our
// reading of it:
//
//   - every program gave its module (jit_conf_<name>) and every file of the dump is recognised;
//   - every HLO text state XLA wrote (before_optimizations, each pass step, after_optimizations)
//     parses, verifies and re-prints byte for byte;
//   - every HloSnapshot replays on the interpreter to the result XLA recorded in it;
//   - the 8-device program, for which XLA writes no snapshot (its CPU client dumps snapshots of
//     single-device executions only), replays on 8 devices from the global argument and result
//     the program recorded in a run_hlo_module literals file;
//   - our `cpu` pipeline compiles every module's before_optimizations, and its kernel count and
//     allocation bytes are printed beside XLA's (from cpu_after_optimizations and its buffer
//     assignment).
//
// Without the pinned jax in .venv every test skips, saying so.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/memory_report.h"
#include "core/analysis/verifier.h"
#include "core/dump/dump_index.h"
#include "core/passes/instruction_fusion.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"
#include "replay/evaluator/constant_evaluator.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

using testing::CommandResult;
using testing::RunCommand;
using testing::RunHlowb;

constexpr char kShardedModule[] = "jit_conf_shard_map";
constexpr int kShardedDevices = 8;

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The first line where two texts differ, for failure messages.
std::string FirstDifference(const std::string& a, const std::string& b) {
  size_t line = 1, start = 0;
  const size_t n = std::min(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    if (a[i] != b[i]) {
      const size_t ea = a.find('\n', start), eb = b.find('\n', start);
      return "line " + std::to_string(line) + ":\n  XLA wrote: " + a.substr(start, ea - start) +
             "\n  we print:  " + b.substr(start, eb - start);
    }
    if (a[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return a.size() == b.size() ? ""
                              : "lengths differ at the end (" + std::to_string(a.size()) + " vs " +
                                    std::to_string(b.size()) + " bytes)";
}

// The line of `text` that contains `part` (empty when none).
std::string LineWith(const std::string& text, const std::string& part) {
  const size_t at = text.find(part);
  if (at == std::string::npos) return "";
  const size_t start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
  const size_t end = text.find('\n', at);
  return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// The total of the allocations in XLA's -buffer-assignment.txt at `path`, read with the
// texts beside it (0 when it does not read).
int64_t XlaAllocationBytes(const std::string& path) {
  absl::StatusOr<MemoryProfile> profile = ReadXlaMemoryProfileFiles(path);
  return profile.ok() ? profile->total_bytes : 0;
}

class XlaConformanceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    shared_ = new Shared;
    const std::string python = std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python";
    if (access(python.c_str(), X_OK) != 0 || RunCommand(python + " -c 'import jax'").code != 0) {
      shared_->skip = std::string("needs the pinned jax in ") + HLOWB_SOURCE_DIR +
                      "/.venv (scripts/setup creates it)";
      return;
    }
    shared_->root =
        fs::temp_directory_path() / ("hlowb_xla_conformance_" + std::to_string(getpid()));
    fs::remove_all(shared_->root);
    fs::create_directories(shared_->root);
    shared_->dump = shared_->root / "dump";
    shared_->literals = shared_->root / "literals";
    const auto t0 = std::chrono::steady_clock::now();
    // The user's XLA_FLAGS would change what XLA dumps; the program adds its device count.
    shared_->capture = RunHlowb(
        "capture -o " + shared_->dump.string() + " --pass-by-pass --snapshots --no-open -- " +
            python + " " + HLOWB_SOURCE_DIR +
            "/tests/conformance/jax_programs.py --literals-dir=" + shared_->literals.string(),
        "-u XLA_FLAGS");
    std::printf("capture: %.1f s\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::smatch m;
    if (std::regex_search(shared_->capture.out, m, std::regex(R"(\nprograms: ([^\n]*))"))) {
      std::istringstream names(m[1].str());
      std::string name;
      while (names >> name) shared_->programs.push_back(name);
    }
    auto index = IndexDumpDirectory(shared_->dump.string());
    if (index.ok()) {
      shared_->index = std::move(*index);
    } else {
      shared_->index_error = std::string(index.status().message());
    }
  }

  static void TearDownTestSuite() {
    if (shared_ != nullptr && !shared_->root.empty()) fs::remove_all(shared_->root);
    delete shared_;
    shared_ = nullptr;
  }

  void SetUp() override {
    if (!shared_->skip.empty()) GTEST_SKIP() << shared_->skip;
    ASSERT_EQ(shared_->capture.code, 0) << "hlowb capture failed:\n" << shared_->capture.out;
    ASSERT_TRUE(shared_->index_error.empty()) << shared_->index_error;
  }

  static const DumpIndex& Index() { return shared_->index; }
  static std::string Path(int file) { return (shared_->dump / Index().files[file].path).string(); }
  // The module state file of `module` whose name ends in `suffix` ("" when none).
  static std::string StateFile(const DumpModule& module, const std::string& suffix) {
    for (const DumpState& s : module.states) {
      if (s.text_file >= 0 && EndsWith(Index().files[s.text_file].path, suffix)) {
        return Path(s.text_file);
      }
    }
    return "";
  }
  static std::string ArtifactFile(const DumpModule& module, const std::string& suffix) {
    for (int a : module.artifacts) {
      if (EndsWith(Index().files[a].path, suffix)) return Path(a);
    }
    return "";
  }
  static std::vector<const DumpModule*> ConformanceModules() {
    std::vector<const DumpModule*> out;
    for (const DumpModule& m : Index().modules) {
      if (m.name.rfind("jit_conf_", 0) == 0) out.push_back(&m);
    }
    return out;
  }

  struct Shared {
    std::string skip;
    fs::path root, dump, literals;
    CommandResult capture;
    std::vector<std::string> programs;  // as the program printed them: conf_<name>
    DumpIndex index;
    std::string index_error;
  };
  static Shared* shared_;
};

XlaConformanceTest::Shared* XlaConformanceTest::shared_ = nullptr;

TEST_F(XlaConformanceTest, EveryProgramGaveItsModuleAndEveryFileIsRecognised) {
  ASSERT_GE(shared_->programs.size(), 20u) << "the program's last line names the programs it ran:\n"
                                           << shared_->capture.out;
  std::set<std::string> module_names;
  for (const DumpModule* m : ConformanceModules()) module_names.insert(m->name);
  for (const std::string& program : shared_->programs) {
    SCOPED_TRACE(program);
    ASSERT_TRUE(module_names.count("jit_" + program)) << "no module jit_" << program;
    const DumpModule* m = Index().FindModule("jit_" + program);
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(StateFile(*m, ".before_optimizations.txt").empty());
    EXPECT_FALSE(StateFile(*m, ".cpu_after_optimizations.txt").empty());
    EXPECT_FALSE(ArtifactFile(*m, ".cpu_after_optimizations-buffer-assignment.txt").empty());
    int pass_steps = 0;
    for (const DumpState& s : m->states) pass_steps += s.stage == StageKind::kPassStep;
    EXPECT_GE(pass_steps, 5) << "--pass-by-pass dumps every pass that changed the module";
  }
  EXPECT_EQ(module_names.size(), shared_->programs.size())
      << "one module per program, each compiled once";
  EXPECT_TRUE(Index().unrecognized.empty()) << Index().unrecognized.size() << " unrecognised, e.g. "
                                            << Index().files[Index().unrecognized.front()].path;

  // Snapshots: one per single-device execution, whatever sign XLA's run id has; the index finds
  // every snapshot file there is.
  int snapshot_files = 0, indexed_snapshots = 0;
  for (const auto& e : fs::recursive_directory_iterator(shared_->dump)) {
    snapshot_files += std::regex_match(e.path().filename().string(),
                                       std::regex(R"(module_\d+\..*\.snapshot\.-?\d+\.pb)"));
  }
  for (const DumpFile& f : Index().files)
    indexed_snapshots += f.name.kind == DumpFileKind::kSnapshot;
  EXPECT_EQ(indexed_snapshots, snapshot_files);
  EXPECT_EQ(snapshot_files, static_cast<int>(shared_->programs.size()) - 1)
      << "every single-device program wrote a snapshot";

  // The command line says the same.
  CommandResult index = RunHlowb("index " + shared_->dump.string());
  ASSERT_EQ(index.code, 0) << index.out;
  EXPECT_TRUE(Contains(index.out, " 0 unrecognised\n")) << LineWith(index.out, "unrecognised");
  EXPECT_FALSE(Contains(index.out, "other-module-file"))
      << LineWith(index.out, "other-module-file");
  EXPECT_TRUE(Contains(shared_->capture.out,
                       std::to_string(snapshot_files) + " snapshots, 0 unrecognised files"))
      << LineWith(shared_->capture.out, "captured ");
}

TEST_F(XlaConformanceTest, EveryHloStateParsesVerifiesAndReprintsByteForByte) {
  int states = 0, parsed = 0, verified = 0, identical = 0;
  std::string first_parse_error, first_verify_error, first_difference;
  std::map<std::string, int> differing_per_module;
  for (const DumpModule* m : ConformanceModules()) {
    for (const DumpState& s : m->states) {
      if (s.text_file < 0) continue;
      const std::string path = Path(s.text_file);
      auto text = ReadFileToString(path);
      ASSERT_TRUE(text.ok()) << text.status();
      ++states;
      const std::string where =
          m->name + " " + s.label + " (" + Index().files[s.text_file].path + ")";
      auto module = ParseModule(*text);
      if (!module.ok()) {
        if (first_parse_error.empty())
          first_parse_error = where + ": " + std::string(module.status().message());
        continue;
      }
      ++parsed;
      std::vector<VerifierDiagnostic> diagnostics = VerifyModule(**module);
      if (CountErrors(diagnostics) == 0) {
        ++verified;
      } else if (first_verify_error.empty()) {
        for (const VerifierDiagnostic& d : diagnostics) {
          if (d.severity == VerifierDiagnostic::Severity::kError) {
            first_verify_error = where + ": " + d.ToString();
            break;
          }
        }
      }
      const std::string printed = PrintModule(**module, DetectPrintOptions(*text));
      if (printed == *text) {
        ++identical;
      } else {
        ++differing_per_module[m->name];
        if (first_difference.empty())
          first_difference = where + ": " + FirstDifference(*text, printed);
      }
    }
  }
  std::printf(
      "HLO text states of the jit_conf_* modules: %d; parsed %d, verified %d, re-printed "
      "byte-identical %d\n",
      states, parsed, verified, identical);
  for (const auto& [name, n] : differing_per_module) {
    std::printf("  %s: %d states re-print differently\n", name.c_str(), n);
  }
  EXPECT_GE(states, 20 * 10) << "the dump looks incomplete";
  EXPECT_EQ(parsed, states) << "first parse error: " << first_parse_error;
  EXPECT_EQ(verified, parsed) << "first verifier error: " << first_verify_error;
  EXPECT_EQ(identical, parsed) << "first difference: " << first_difference;

  // `hlowb print`'s default style is the file's own: the before and after states of every
  // module come back unchanged through the command line too.
  for (const DumpModule* m : ConformanceModules()) {
    for (const char* suffix : {".before_optimizations.txt", ".cpu_after_optimizations.txt"}) {
      const std::string path = StateFile(*m, suffix);
      if (path.empty()) continue;
      CommandResult cli = RunHlowb("print " + path);
      auto text = ReadFileToString(path);
      ASSERT_TRUE(text.ok());
      EXPECT_EQ(cli.code, 0) << path << "\n" << cli.out;
      EXPECT_TRUE(cli.out == *text) << path << ": " << FirstDifference(*text, cli.out);
    }
  }
}

TEST_F(XlaConformanceTest, EverySnapshotReplaysToXlasRecordedResult) {
  int snapshots = 0, agreeing = 0;
  std::vector<std::string> failures;
  std::set<std::string> with_snapshot;
  for (const DumpModule* m : ConformanceModules()) {
    for (int a : m->artifacts) {
      if (Index().files[a].name.kind != DumpFileKind::kSnapshot) continue;
      ++snapshots;
      with_snapshot.insert(m->name);
      CommandResult r = RunHlowb("replay " + Path(a));
      const std::string comparison = LineWith(r.out, "comparison with snapshot result:");
      if (r.code == 0 && Contains(comparison, "comparison with snapshot result: OK")) {
        ++agreeing;
        continue;
      }
      std::string why = comparison;
      if (why.empty()) why = LineWith(r.out, "FAILED:");
      if (why.empty()) why = r.out.substr(0, 400);
      failures.push_back(m->name + " (" + Index().files[a].path + ", exit " +
                         std::to_string(r.code) + "):\n    " + why);
    }
  }
  std::printf("snapshots: %d; the interpreter's result agrees with XLA's in %d\n", snapshots,
              agreeing);
  for (const std::string& f : failures) {
    ADD_FAILURE() << "the replay does not reproduce XLA's recorded result: " << f;
  }
  EXPECT_GE(snapshots, 20);
  for (const DumpModule* m : ConformanceModules()) {
    if (m->name != kShardedModule) {
      EXPECT_TRUE(with_snapshot.count(m->name)) << m->name << " wrote no snapshot";
    }
  }
}

// XLA's CPU client writes an HloSnapshot only when an execution runs on one device (its
// multi-device path dumps nothing), so the 8-device program has none. The program records its
// global argument and XLA's global result in a run_hlo_module literals file instead, and the
// module state that still takes global values (after shardy-xla: SPMDFullToShardShape gives
// each partition its tile, SPMDShardToFullShape gathers the partitions' shards) replays on 8
// devices with real all-reduce, all-gather and collective-permute between them. Device 0's
// result, gathered from all 8 partitions, is compared with XLA's.
TEST_F(XlaConformanceTest, ShardedProgramReplaysOnEightDevicesAgainstXla) {
  const DumpModule* m = Index().FindModule(kShardedModule);
  ASSERT_NE(m, nullptr);
  for (int a : m->artifacts) {
    EXPECT_NE(Index().files[a].name.kind, DumpFileKind::kSnapshot)
        << Index().files[a].path
        << ": XLA now writes snapshots of multi-device executions; replay them here (one per "
           "device?) instead of the literals file";
  }
  std::printf(
      "%s: XLA wrote no snapshot (the CPU client dumps single-device executions only); "
      "replaying the recorded global argument and result on %d devices\n",
      kShardedModule, kShardedDevices);
  std::string state;
  for (const DumpState& s : m->states) {
    if (s.pass == "shardy-xla" && s.text_file >= 0) state = Path(s.text_file);
  }
  ASSERT_FALSE(state.empty()) << "no state after the shardy-xla pass";
  auto text = ReadFileToString(state);
  ASSERT_TRUE(text.ok());
  ASSERT_TRUE(Contains(*text, "num_partitions=8")) << state;
  for (const char* op : {"SPMDFullToShardShape", "SPMDShardToFullShape", "all-reduce(",
                         "all-gather(", "collective-permute("}) {
    EXPECT_TRUE(Contains(*text, op)) << state << " has no " << op;
  }
  const fs::path literals = shared_->literals / (std::string(kShardedModule) + ".literals.txt");
  ASSERT_TRUE(fs::exists(literals)) << "the program did not write " << literals;
  CommandResult r = RunHlowb("replay " + state + " --input_literals_file=" + literals.string());
  std::printf("%s\n", LineWith(r.out, "comparison with").c_str());
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "devices: 8 (1 replica x 8 partitions)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "arguments from literals file iteration 1 (every device)")) << r.out;
  for (int d = 0; d < kShardedDevices; ++d) {
    EXPECT_TRUE(Contains(r.out, "device " + std::to_string(d) + " (replica 0, partition " +
                                    std::to_string(d) + "): run"))
        << r.out;
  }
  EXPECT_TRUE(Contains(r.out, "comparison with literals file result (iteration 1) (device 0): OK"))
      << r.out;
}

TEST_F(XlaConformanceTest, CpuPipelineKernelsAndAllocationBytesBesideXlas) {
  struct Row {
    std::string module;
    int64_t kernels = 0, xla_kernels = 0, bytes = 0, xla_bytes = 0;
  };
  std::vector<Row> rows;
  for (const DumpModule* m : ConformanceModules()) {
    SCOPED_TRACE(m->name);
    const std::string before = StateFile(*m, ".before_optimizations.txt");
    const std::string after = StateFile(*m, ".cpu_after_optimizations.txt");
    const std::string assignment =
        ArtifactFile(*m, ".cpu_after_optimizations-buffer-assignment.txt");
    ASSERT_FALSE(before.empty() || after.empty() || assignment.empty());
    auto before_text = ReadFileToString(before);
    auto after_text = ReadFileToString(after);
    ASSERT_TRUE(before_text.ok() && after_text.ok());
    auto ours = ParseModule(*before_text);
    auto xla = ParseModule(*after_text);
    ASSERT_TRUE(ours.ok()) << ours.status();
    ASSERT_TRUE(xla.ok()) << xla.status();
    CompileOptions options;
    options.platform = "cpu";
    options.evaluator = InterpreterConstantEvaluator();
    auto compiled = CompileModule(ours->get(), options);
    EXPECT_TRUE(compiled.ok()) << "our cpu pipeline: " << compiled.status();
    if (!compiled.ok()) continue;
    Row row{m->name, compiled->kernel_count, CountKernels(**xla), compiled->total_allocation_bytes,
            XlaAllocationBytes(assignment)};
    EXPECT_GT(row.kernels, 0);
    EXPECT_GT(row.xla_kernels, 0);
    EXPECT_GT(row.bytes, 0);
    EXPECT_GT(row.xla_bytes, 0) << "no allocation lines in " << assignment;
    EXPECT_FALSE(compiled->buffer_assignment_text.empty());
    rows.push_back(row);
  }
  auto ratio = [](int64_t a, int64_t b) { return b > 0 ? static_cast<double>(a) / b : 0.0; };
  // A loose bound that only a broken fusion pass or buffer assignment crosses. The sharded
  // module is left out: XLA's figures are one partition's after SPMD partitioning, ours the
  // whole unpartitioned program.
  for (const Row& r : rows) {
    if (r.module == kShardedModule) continue;
    EXPECT_TRUE(ratio(r.kernels, r.xla_kernels) >= 0.25 && ratio(r.kernels, r.xla_kernels) <= 4)
        << r.module << ": " << r.kernels << " kernels against XLA's " << r.xla_kernels;
    EXPECT_TRUE(ratio(r.bytes, r.xla_bytes) >= 0.25 && ratio(r.bytes, r.xla_bytes) <= 4)
        << r.module << ": " << r.bytes << " allocation bytes against XLA's " << r.xla_bytes;
  }
  std::ostringstream table;
  table << std::left << std::setw(30) << "module" << std::right << std::setw(9) << "kernels"
        << std::setw(6) << "xla" << std::setw(8) << "ratio" << std::setw(12) << "alloc bytes"
        << std::setw(10) << "xla" << std::setw(8) << "ratio"
        << "\n";
  for (const Row& r : rows) {
    table << std::left << std::setw(30) << r.module << std::right << std::setw(9) << r.kernels
          << std::setw(6) << r.xla_kernels << std::setw(7) << std::fixed << std::setprecision(2)
          << ratio(r.kernels, r.xla_kernels) << "x" << std::setw(12) << r.bytes << std::setw(10)
          << r.xla_bytes << std::setw(7) << ratio(r.bytes, r.xla_bytes) << "x\n";
  }
  std::cout << "our cpu pipeline on XLA's before_optimizations against XLA CPU's "
               "cpu_after_optimizations:\n"
            << table.str() << "(" << kShardedModule
            << ": XLA's figures are per partition after SPMD partitioning, ours for the "
               "unpartitioned program)\n";
  EXPECT_EQ(rows.size(), ConformanceModules().size());
}

}  // namespace
}  // namespace hlowb
