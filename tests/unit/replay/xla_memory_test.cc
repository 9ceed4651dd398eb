// The memory view on real XLA dumps: tests/conformance/jax_programs.py (21 programs) runs once
// under `hlowb capture` with the pinned jax, and every cpu_after_optimizations buffer assignment
// it leaves (allocations, values, live ranges and memory-usage report, in today's split form) is
// read and held against what XLA states in it:
//   - the allocations add up to "Total bytes used" and to the memory-usage report's total;
//   - from the live ranges we read, XLA's own rule picks the point XLA names in "Live ranges at
//     T (peak)", and the bytes of the values live there are the cumulative total XLA lists and
//     the stack-trace breakdown repeats;
//   - the allocation bytes held by live values (what the view draws) are, at XLA's point, never
//     above that figure, and their peak never above the allocations. Their peak may lie
//     elsewhere and above XLA's figure: XLA's rule sizes tuple elements by their tuple's index
//     table, so the point it names is not the maximum of either measure (gather, bf16_matmul
//     and shard_map today);
//   - hlowb's own assignment of the same after-optimizations module, under XLA's schedule,
//     gives a profile too;
//   - `hlowb memory DIR:MODULE` says it all agrees, and compares two states.
// Without the pinned jax in .venv the test skips, saying so.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/analysis/memory_report.h"
#include "core/dump/dump_index.h"
#include "core/passes/memory_profile_builder.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunCommand;
using testing::RunHlowb;

TEST(XlaMemory, EveryConformanceBufferAssignmentAgreesWithWhatXlaStates) {
  const std::string python = std::string(HLOWB_SOURCE_DIR) + "/.venv/bin/python";
  if (access(python.c_str(), X_OK) != 0 || RunCommand(python + " -c 'import jax'").code != 0) {
    GTEST_SKIP() << "needs the pinned jax in " << HLOWB_SOURCE_DIR
                 << "/.venv (scripts/setup creates it)";
  }
  const fs::path root =
      fs::temp_directory_path() / ("hlowb_xla_memory_" + std::to_string(getpid()));
  fs::remove_all(root);
  const fs::path dump = root / "dump";
  const auto t0 = std::chrono::steady_clock::now();
  CommandResult capture = RunHlowb("capture -o " + dump.string() + " --no-open -- " + python + " " +
                                       HLOWB_SOURCE_DIR + "/tests/conformance/jax_programs.py",
                                   "-u XLA_FLAGS");
  std::printf("capture: %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  ASSERT_EQ(capture.code, 0) << capture.out;
  absl::StatusOr<DumpIndex> index = IndexDumpDirectory(dump.string());
  ASSERT_TRUE(index.ok()) << index.status().message();

  int files = 0, below = 0, above = 0;
  std::printf("%-32s %10s %10s %12s %10s %12s\n", "module", "XLA peak", "at point", "occupied",
              "at point", "allocations");
  for (const DumpModule& m : index->modules) {
    if (m.name.rfind("jit_conf_", 0) != 0) continue;
    std::string ba_path, after_path;
    for (int a : m.artifacts) {
      const DumpFile& f = index->files[a];
      if (f.name.kind == DumpFileKind::kBufferAssignment &&
          f.name.stage_text == "cpu_after_optimizations") {
        ba_path = (dump / f.path).string();
      }
    }
    for (const DumpState& s : m.states) {
      if (s.stage == StageKind::kAfterOptimizations && s.text_file >= 0) {
        after_path = (dump / index->files[s.text_file].path).string();
      }
    }
    SCOPED_TRACE(m.name);
    ASSERT_FALSE(ba_path.empty()) << "no cpu_after_optimizations-buffer-assignment.txt";
    std::vector<MemoryText> texts;
    const std::string base = MemoryFileBase(ba_path);
    for (const std::string& suffix : MemoryFileSuffixes()) {
      absl::StatusOr<std::string> text = ReadFileToString(base + suffix);
      ASSERT_TRUE(text.ok()) << base + suffix << ": today's XLA writes all four texts";
      texts.push_back({base + suffix, *std::move(text)});
    }
    absl::StatusOr<MemoryProfile> read = ReadXlaMemoryProfile(texts);
    ASSERT_TRUE(read.ok()) << read.status().message();
    const MemoryProfile& p = *read;
    ++files;
    const StatedMemory& s = p.stated;
    EXPECT_EQ(s.total_bytes_used, p.total_bytes);
    EXPECT_EQ(s.report_total_bytes, p.total_bytes);
    ASSERT_TRUE(s.peak_point.has_value());
    ASSERT_TRUE(s.peak_bytes.has_value());
    EXPECT_EQ(s.peak_measure, StatedMemory::PeakMeasure::kValueBytes);
    EXPECT_EQ(p.xla_peak.point, *s.peak_point);
    EXPECT_EQ(p.xla_peak.value_bytes, *s.peak_bytes);
    EXPECT_EQ(s.breakdown_peak_bytes, s.peak_bytes);
    EXPECT_TRUE(CheckStatedMemory(p).empty()) << CheckStatedMemory(p)[0];
    EXPECT_EQ(p.skipped_lines, 0);
    EXPECT_EQ(p.unallocated_live_ranges, 0);
    EXPECT_LE(p.peak.bytes, p.total_bytes);
    for (size_t t = 0; t < p.points.size(); ++t) EXPECT_LE(p.live_bytes[t], p.value_bytes[t]);
    EXPECT_LE(p.live_bytes[*s.peak_point], *s.peak_bytes);
    if (p.peak.bytes < *s.peak_bytes) ++below;
    if (p.peak.bytes > *s.peak_bytes) ++above;
    std::printf("%-32s %10lld %10lld %12lld %10lld %12lld\n", m.name.c_str(),
                static_cast<long long>(*s.peak_bytes), static_cast<long long>(*s.peak_point),
                static_cast<long long>(p.peak.bytes), static_cast<long long>(p.peak.point),
                static_cast<long long>(p.total_bytes));

    // hlowb's assignment of the module XLA scheduled.
    ASSERT_FALSE(after_path.empty());
    absl::StatusOr<std::string> hlo = ReadFileToString(after_path);
    ASSERT_TRUE(hlo.ok());
    absl::StatusOr<std::unique_ptr<Module>> module = ParseModule(*hlo);
    ASSERT_TRUE(module.ok()) << module.status().message();
    ASSERT_TRUE((*module)->config().is_scheduled);
    absl::StatusOr<MemoryProfileResult> own = ComputeMemoryProfile(module->get());
    ASSERT_TRUE(own.ok()) << own.status().message();
    EXPECT_EQ(own->schedule, "the module's own schedule (is_scheduled=true)");
    EXPECT_LE(own->profile.peak.bytes, own->profile.total_bytes);
  }
  EXPECT_GE(files, 20);
  std::printf(
      "%d buffer assignments read; XLA's stated peak reproduced in all; the occupied "
      "peak is below it in %d, above it in %d\n",
      files, below, above);

  CommandResult text = RunHlowb("memory " + dump.string() + ":jit_conf_mlp_train");
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("; all agree\n"), std::string::npos) << text.out;
  CommandResult compare = RunHlowb("memory " + dump.string() + ":jit_conf_mlp_train:before " +
                                   dump.string() + ":jit_conf_mlp_train");
  ASSERT_EQ(compare.code, 0) << compare.out;
  EXPECT_NE(compare.out.find("(hlowb's buffer assignment)\nB: "), std::string::npos) << compare.out;
  EXPECT_NE(compare.out.find(":cpu_after_optimizations (XLA's buffer assignment)\n"),
            std::string::npos)
      << compare.out;
  fs::remove_all(root);
}

}  // namespace
}  // namespace hlowb
