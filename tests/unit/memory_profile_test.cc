// The memory view's engine and `hlowb memory`: reading XLA's buffer-assignment texts (a
// hand-written fixture whose every figure is worked out by hand, and what jaxlib 0.4.13, 0.4.35,
// 0.6.2 and 0.10.2 wrote for one program), the live-bytes timelines and peaks computed from
// them, the checks against what the files state, line-numbered errors on truncated and garbled
// input (and no crash on any prefix or byte flip), and the command's text, JSON and comparison
// output. Real dumps of every conformance program are checked in
// tests/unit/replay/xla_memory_test.cc.
#include "core/analysis/memory_profile.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <regex>
#include <string>
#include <vector>

#include "core/analysis/memory_report.h"
#include "core/support/file_util.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::CommandResult;
using testing::RunHlowb;

const fs::path kDir = fs::path(HLOWB_SOURCE_DIR) / "tests" / "golden" / "memory";
const fs::path kHandBa =
    kDir / "hand" / "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt";
const fs::path kHandReport =
    kDir / "hand" / "module_0001.jit_f.cpu_after_optimizations-memory-usage-report.txt";

std::string Read(const fs::path& p) {
  absl::StatusOr<std::string> text = ReadFileToString(p.string());
  EXPECT_TRUE(text.ok()) << p;
  return text.ok() ? *text : std::string();
}

bool Contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs of spaces as one, for table rows.
std::string Squeeze(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  return out;
}

// Every text of one buffer assignment in a folder, in the reader's order.
std::vector<MemoryText> FolderTexts(const fs::path& dir) {
  std::vector<MemoryText> texts;
  for (const std::string& suffix : MemoryFileSuffixes()) {
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string name = e.path().filename().string();
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        texts.push_back({name, Read(e.path())});
      }
    }
  }
  return texts;
}

MemoryProfile ReadOrDie(const std::vector<MemoryText>& texts) {
  absl::StatusOr<MemoryProfile> p = ReadXlaMemoryProfile(texts);
  EXPECT_TRUE(p.ok()) << p.status().message();
  return p.ok() ? *std::move(p) : MemoryProfile();
}

std::vector<MemoryText> Hand() {
  return {{"ba.txt", Read(kHandBa)}, {"report.txt", Read(kHandReport)}};
}

// Invariants every finished profile keeps.
void ExpectConsistent(const MemoryProfile& p, const std::string& what) {
  ASSERT_EQ(p.live_bytes.size(), p.points.size()) << what;
  ASSERT_EQ(p.value_bytes.size(), p.points.size()) << what;
  int64_t max_live = 0;
  for (size_t t = 0; t < p.points.size(); ++t) {
    EXPECT_LE(p.live_bytes[t], p.value_bytes[t]) << what << " at " << t;
    max_live = std::max(max_live, p.live_bytes[t]);
  }
  EXPECT_EQ(p.peak.bytes, max_live) << what;
  EXPECT_LE(p.peak.bytes, p.total_bytes) << what;
  // Per-allocation steps add up to live_bytes, and never exceed their allocation.
  std::vector<int64_t> sum(p.points.size(), 0);
  for (size_t a = 0; a < p.allocation_steps.size(); ++a) {
    const auto& steps = p.allocation_steps[a];
    for (size_t k = 0; k < steps.size(); ++k) {
      EXPECT_LE(steps[k].bytes, p.allocations[a].size) << what;
      const int64_t until =
          k + 1 < steps.size() ? steps[k + 1].point : static_cast<int64_t>(p.points.size());
      for (int64_t t = steps[k].point; t < until; ++t) sum[t] += steps[k].bytes;
    }
  }
  EXPECT_EQ(sum, p.live_bytes) << what;
}

TEST(MemoryProfile, HandWrittenBufferAssignmentExactFigures) {
  MemoryProfile p = ReadOrDie(Hand());
  ExpectConsistent(p, "hand");
  EXPECT_EQ(p.source, "xla");
  EXPECT_EQ(p.points, (std::vector<std::string>{"p0", "c", "a", "b", "d", "out", ""}));
  // p0 all along; c 1-3; a 2-3 and d 4-5 share bytes 0..4095 of the temp allocation; b 3-4
  // and the loop's element 4-4 share bytes 4096..8191; the loop's index table (16 bytes) at 4;
  // out from 5.
  EXPECT_EQ(p.live_bytes, (std::vector<int64_t>{4096, 4100, 8196, 12292, 12304, 10240, 6144}));
  EXPECT_EQ(p.value_bytes, (std::vector<int64_t>{4096, 4100, 8196, 12292, 16400, 10240, 6144}));
  EXPECT_EQ(p.peak.point, 4);
  EXPECT_EQ(p.peak.bytes, 12304);
  EXPECT_EQ(p.PointName(p.peak.point), "d");
  ASSERT_EQ(p.live_at_peak.size(), 4u);
  std::vector<std::string> at_peak;
  for (int64_t b : p.live_at_peak) {
    const MemoryBuffer& buf = p.buffers[b];
    std::string names;
    for (int64_t v : buf.values) names += p.values[v].Name() + " ";
    at_peak.push_back(std::to_string(buf.allocation) + "@" + std::to_string(buf.offset) + ":" +
                      std::to_string(buf.size) + " " + names);
  }
  EXPECT_EQ(at_peak, (std::vector<std::string>{"0@0:4096 p0{} ", "4@0:4096 a{} d{} ",
                                               "4@4096:4096 b{} loop{1} ", "5@0:16 loop{} "}));
  // XLA's rule: at 4 the entries (b, d, loop{1}, loop{}) count before the exits (a, c), and the
  // loop's element counts as its instruction's whole shape (the 16-byte index table).
  EXPECT_EQ(p.xla_peak.point, 4);
  EXPECT_EQ(p.xla_peak.value_bytes, 16400);
  EXPECT_EQ(p.xla_peak.instruction_shape_bytes, 4096 * 3 + 16 + 16);
  // Totals by kind.
  EXPECT_EQ(p.total_bytes, 14360);
  EXPECT_EQ(p.BytesOfKind(MemoryKind::kParameter), 4096);
  EXPECT_EQ(p.BytesOfKind(MemoryKind::kOutput), 2048);
  EXPECT_EQ(p.BytesOfKind(MemoryKind::kTemp), 8192 + 16);
  EXPECT_EQ(p.BytesOfKind(MemoryKind::kConstant), 4);
  EXPECT_EQ(p.BytesOfKind(MemoryKind::kThreadLocal), 4);
  EXPECT_EQ(p.kind_count[static_cast<int>(MemoryKind::kTemp)], 2);
  EXPECT_EQ(p.values_without_live_range, 1);  // add.r, thread-local
  // Allocation attributes.
  ASSERT_EQ(p.allocations.size(), 6u);
  EXPECT_EQ(p.allocations[0].parameter_number, 0);
  EXPECT_EQ(p.allocations[0].parameter_shape, "f32[1024]");
  EXPECT_EQ(p.allocations[0].parameter_index, "{}");
  EXPECT_EQ(p.allocations[3].output_shape, "f32[512]");
  EXPECT_TRUE(p.allocations[3].maybe_live_out);
  EXPECT_EQ(p.allocations[5].kind, MemoryKind::kTemp);
  // The temp allocation: a from 2, b joins at 3, a and d hand over at 4, d alone at 5.
  ASSERT_EQ(p.allocation_steps[4].size(), 4u);
  EXPECT_EQ(p.allocation_steps[4][0].point, 2);
  EXPECT_EQ(p.allocation_steps[4][1].bytes, 8192);
  EXPECT_EQ(p.allocation_steps[4][2].point, 5);
  EXPECT_EQ(p.allocation_steps[4][3].bytes, 0);
  // What the files state, and that it agrees.
  EXPECT_EQ(p.stated.total_bytes_used, 14360);
  EXPECT_EQ(p.stated.report_total_bytes, 14360);
  EXPECT_EQ(p.stated.peak_point, 4);
  EXPECT_EQ(p.stated.peak_bytes, 16400);
  EXPECT_EQ(p.stated.breakdown_peak_bytes, 16400);
  EXPECT_EQ(p.stated.schedule_max, 6);
  EXPECT_EQ(p.stated.peak_measure, StatedMemory::PeakMeasure::kValueBytes);
  EXPECT_EQ(p.skipped_lines, 1);  // "Fragmentation: ..."
  EXPECT_TRUE(CheckStatedMemory(p).empty());
}

// A stated figure our reading does not reproduce is reported, not hidden.
TEST(MemoryProfile, DisagreementsWithTheFilesAreReported) {
  auto with = [](const std::string& from, const std::string& to) {
    std::vector<MemoryText> texts = Hand();
    const size_t at = texts[0].text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    texts[0].text.replace(at, from.size(), to);
    return ReadOrDie(texts);
  };
  auto joined = [](const MemoryProfile& p) {
    std::string all;
    for (const std::string& c : CheckStatedMemory(p)) all += c + "\n";
    return all;
  };
  EXPECT_TRUE(Contains(joined(with("Total bytes used: 14360", "Total bytes used: 14000")),
                       "states 14000 bytes used; its allocations add up to 14360"));
  const std::string moved = joined(with("Live ranges at 4 (peak)", "Live ranges at 3 (peak)"));
  EXPECT_TRUE(Contains(moved,
                       "states 16400 bytes live at point 3 (value-bytes); its live ranges "
                       "give 12292"))
      << moved;
  EXPECT_TRUE(Contains(moved, "lists 5 values live at point 3; its live ranges give 4")) << moved;
  EXPECT_TRUE(Contains(moved, "the peak at point 3; XLA's rule picks point 4")) << moved;
  EXPECT_TRUE(Contains(joined(with("peak usage: 16 400 bytes", "peak usage: 16 300 bytes")),
                       "breakdown states 16300 bytes"));
}

// What each jaxlib wrote for conf_while_loop, each in its own form, read to the same figures
// and checked against what each states.
TEST(MemoryProfile, EveryReleasesFormReadsAndAgreesWithItsStatedPeak) {
  struct Case {
    std::string release;
    size_t texts;
    int64_t total;
    std::optional<int64_t> report_total;
    int64_t stated_point, stated_bytes;
    StatedMemory::PeakMeasure measure;
    int64_t points;
  };
  const auto kInstr = StatedMemory::PeakMeasure::kInstructionShapeBytes;
  const auto kValue = StatedMemory::PeakMeasure::kValueBytes;
  const std::vector<Case> cases = {
      {"jaxlib-0.4.13", 1, 164, std::nullopt, 11, 189, kInstr, 24},
      {"jaxlib-0.4.35", 2, 212, 212, 11, 189, kInstr, 24},
      {"jaxlib-0.6.2", 2, 212, 212, 13, 116, kValue, 26},
      {"jaxlib-0.10.2", 4, 212, 212, 13, 116, kValue, 26},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.release);
    std::vector<MemoryText> texts = FolderTexts(kDir / c.release);
    ASSERT_EQ(texts.size(), c.texts);
    MemoryProfile p = ReadOrDie(texts);
    ExpectConsistent(p, c.release);
    EXPECT_EQ(p.total_bytes, c.total);
    EXPECT_EQ(p.stated.total_bytes_used, c.total);
    EXPECT_EQ(p.stated.report_total_bytes, c.report_total);
    EXPECT_EQ(p.stated.peak_point, c.stated_point);
    EXPECT_EQ(p.stated.peak_bytes, c.stated_bytes);
    EXPECT_EQ(p.stated.peak_measure, c.measure);
    EXPECT_EQ(static_cast<int64_t>(p.points.size()), c.points);
    // Our reading of the allocations and live ranges gives XLA's peak point and XLA's figure
    // in XLA's measure; the occupied-bytes peak is never above it nor above the allocations.
    EXPECT_EQ(p.xla_peak.point, c.stated_point);
    EXPECT_EQ(c.measure == kValue ? p.xla_peak.value_bytes : p.xla_peak.instruction_shape_bytes,
              c.stated_bytes);
    EXPECT_EQ(p.peak.bytes, 116);
    EXPECT_LE(p.peak.bytes, p.xla_peak.value_bytes);
    EXPECT_TRUE(CheckStatedMemory(p).empty()) << CheckStatedMemory(p)[0];
    EXPECT_EQ(p.skipped_lines, 0);
    EXPECT_EQ(p.values_without_live_range, 3);  // the reduce's three thread-local values
    if (c.release == "jaxlib-0.10.2") {
      EXPECT_EQ(p.stated.breakdown_peak_bytes, 116);
    }
  }
}

// Where a file stops early or a line is garbled, the error names the text and the line.
TEST(MemoryProfile, TruncatedAndGarbledTextsNameTheLine) {
  const std::string ba = Read(kHandBa);
  const std::string report = Read(kHandReport);
  auto error_of = [&](const std::string& text, bool with_report = true) {
    std::vector<MemoryText> texts = {{"f.txt", text}};
    if (with_report) texts.push_back({"r.txt", report});
    absl::StatusOr<MemoryProfile> p = ReadXlaMemoryProfile(texts);
    return p.ok() ? std::string("OK") : std::string(p.status().message());
  };
  auto cut_after = [&](const std::string& marker) {
    const size_t at = ba.find(marker);
    EXPECT_NE(at, std::string::npos) << marker;
    return ba.substr(0, at + marker.size());
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = ba;
    t.replace(t.find(from), from.size(), to);
    return t;
  };
  // Cut inside a value line.
  EXPECT_EQ(error_of(cut_after(" value: <5 b @0> (size=40")),
            "f.txt:12: expected '(size=S,offset=O)' after the value");
  // Cut after the allocations, without the total that follows them.
  EXPECT_TRUE(Contains(error_of(cut_after("(f32[], f32[1024]{0})\n")),
                       "f.txt:16: the buffer assignment ends after allocation 5 without its "
                       "'Total bytes used' line: the file looks truncated"));
  // Cut inside a used value.
  EXPECT_TRUE(Contains(error_of(cut_after("<8 loop{} (phi) @0>\n positions:\n")),
                       "f.txt:28: the text ends inside the used value <8 loop{} (phi) @0>"));
  // Cut inside the instruction sequence, the live ranges, an allocation heading.
  EXPECT_TRUE(Contains(error_of(cut_after("    3:b\n")),
                       "f.txt:40: the text ends inside the HloLiveRange's InstructionSequence"));
  EXPECT_TRUE(Contains(error_of(cut_after("    d{}:4-5\n")),
                       "f.txt:48: the text ends inside the BufferLiveRange section"));
  EXPECT_EQ(error_of(cut_after("allocation 4: size 8192, preall")),
            "f.txt:10: the allocation heading does not end with ':' (truncated?)");
  EXPECT_TRUE(Contains(error_of(cut_after("    d{}:4-")), "f.txt:48: expected 'name{index}:"));
  // Garbled lines.
  EXPECT_EQ(error_of(replaced("allocation 1: size 4,", "allocation 1: size four,")),
            "f.txt:4: expected 'allocation N: size S...'");
  EXPECT_EQ(error_of(replaced("(size=4096,offset=4096)", "(size=4096,offset=6000)")),
            "f.txt:12: the value b{} (offset 6000, size 4096) lies outside allocation 4 (size "
            "8192)");
  EXPECT_EQ(error_of(replaced("    4:d\n", "    7:d\n")),
            "f.txt:41: program point 7 where 4 was expected");
  EXPECT_EQ(error_of(replaced("b{}:3-4", "b{}:4-3")),
            "f.txt:47: the live range of b{} ends (3) before it starts (4)");
  EXPECT_EQ(error_of(replaced("(cumulative: 8192 bytes)", "(cumulative: 8000 bytes)")),
            "f.txt:54: cumulative 8000 bytes does not follow from the sizes above (8192)");
  EXPECT_EQ(error_of(replaced("    c{}:1-3\n", "    c{}:1-3\n    c{}:1-2\n")),
            "f.txt:46: a second live range for c{}");
  EXPECT_EQ(error_of(replaced("HloLiveRange (max 6)", "HloLiveRange (max 9)")),
            "f.txt:60: HloLiveRange (max 9) lists only 6 instructions");
  // Texts that are not buffer assignments at all.
  EXPECT_TRUE(Contains(error_of(std::string("\x7f"
                                            "ELF\x02\x01\x01",
                                            7),
                                false),
                       "f.txt: not one of XLA's buffer-assignment texts"));
  EXPECT_TRUE(Contains(error_of(report.substr(0, 10), false), "not one of XLA's"));
  EXPECT_EQ(error_of("Memory Space: default (color=0)\nTotal bytes: 1", false),
            "no buffer assignment: none of the texts starts with 'BufferAssignment:'");
  std::vector<MemoryText> bad_report = {{"f.txt", ba}, {"r.txt", "Memory Space: default\n"}};
  EXPECT_EQ(ReadXlaMemoryProfile(bad_report).status().message(),
            "r.txt: the memory-usage report states no total ('Total bytes used:' or 'Total "
            "bytes:'); the file looks truncated");
}

// Every prefix of a buffer assignment, and thousands of random byte changes, give a profile
// or an error naming the text: never a crash, never an inconsistent profile.
TEST(MemoryProfile, AnyPrefixOrByteFlipIsHandled) {
  std::vector<MemoryText> texts = FolderTexts(kDir / "jaxlib-0.10.2");
  texts.push_back({"hand.txt", Read(kHandBa)});
  std::mt19937 rng(1234);
  int ok = 0, errors = 0;
  for (const MemoryText& t : texts) {
    auto check = [&](const std::string& text) {
      std::vector<MemoryText> one = {{t.name, text}};
      if (t.name != "hand.txt") {
        // The split form needs its siblings; keep them whole and vary this one.
        one.clear();
        for (const MemoryText& o : texts) {
          if (o.name != "hand.txt") one.push_back(o.name == t.name ? MemoryText{t.name, text} : o);
        }
      }
      absl::StatusOr<MemoryProfile> p = ReadXlaMemoryProfile(one);
      if (p.ok()) {
        ++ok;
        ExpectConsistent(*p, t.name);
      } else {
        ++errors;
        const std::string msg(p.status().message());
        EXPECT_TRUE(msg.rfind(t.name, 0) == 0 || msg.rfind("no buffer assignment", 0) == 0 ||
                    msg.find(".txt:") != std::string::npos)
            << msg;
      }
    };
    for (size_t n = 0; n <= t.text.size(); n += 7) check(t.text.substr(0, n));
    for (int k = 0; k < 300; ++k) {
      std::string text = t.text;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) {
        text[rng() % text.size()] = static_cast<char>("0123456789:{}<>(), -\n|xA"[rng() % 24]);
      }
      check(text);
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(errors, 0);
}

TEST(MemoryProfile, SparklineAndByteFormats) {
  EXPECT_EQ(MemorySparkline({0, 1, 5, 9, 9, 0}, 10), " .+@@ ");
  EXPECT_EQ(MemorySparkline({0, 0, 9, 0, 0, 0, 0, 9}, 4), " @ @");
  EXPECT_EQ(MemorySparkline({}, 10), "");
  EXPECT_EQ(FormatMemoryBytes(212), "212 B");
  EXPECT_EQ(FormatMemoryBytes(14360), "14.0 KiB");
  EXPECT_EQ(FormatMemoryBytes(3 << 20), "3.00 MiB");
  EXPECT_EQ(FormatMemoryBytes(int64_t{300} << 30), "300 GiB");
}

TEST(MemoryCli, ReportsTotalsPeakAndBuffersLiveThere) {
  CommandResult r = RunHlowb("memory " + kHandBa.string() + " --top=3");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* line : {
           "allocations: 6, 14360 bytes (14.0 KiB)\n",
           "  parameter         1         4096 bytes  4.00 KiB\n",
           "  temp              2         8208 bytes  8.02 KiB\n",
           "  thread-local      1            4 bytes  4 B\n",
           "program points: 7; values: 9 (8 with a live range)\n",
           "peak: 12304 bytes (12.0 KiB) at point 4 (d): allocation bytes held by live values\n",
           "XLA's peak (HloLiveRange, each live value counted): 16400 bytes at point 4 (d)\n",
           "the files state: peak 16400 bytes at point 4, total 14360 bytes, memory-usage report "
           "total 14360 bytes; all agree\n",
           "note: 1 unrecognised lines were skipped\n",
           "  |--*@@%+|\n",
           "largest buffers live at the peak (3 of 4):\n",
           "          4096  0 parameter                 0  p0{}\n",
           "          4096  4 temp                      0  d{}\n",
           "          4096  4 temp                   4096  b{}, loop{1} (phi)\n",
       }) {
    EXPECT_TRUE(Contains(r.out, line)) << "missing: " << line << "in:\n" << r.out;
  }
  EXPECT_FALSE(Contains(r.out, "loop{} (phi)\n")) << "--top=3 shows three buffers";
}

TEST(MemoryCli, JsonCarriesTheTimelineAndIntervals) {
  CommandResult r = RunHlowb("memory " + kHandBa.string() + " --format=json");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* part : {
           "\"schema\": \"hlowb.memory/1\"",
           "\"points\": [\"p0\", \"c\", \"a\", \"b\", \"d\", \"out\", \"\"]",
           "\"live_bytes\": [4096, 4100, 8196, 12292, 12304, 10240, 6144]",
           "\"value_bytes\": [4096, 4100, 8196, 12292, 16400, 10240, 6144]",
           "\"peak\": {\"point\": 4, \"instruction\": \"d\", \"bytes\": 12304, \"buffers\": [0, 4, "
           "5, 6]}",
           "\"xla_peak\": {\"point\": 4, \"instruction\": \"d\", \"value_bytes\": 16400, "
           "\"instruction_shape_bytes\": 12320}",
           "\"checks\": []",
           "\"steps\": [[2, 4096], [3, 8192], [5, 4096], [6, 0]]",
           "{\"id\": 7, \"instruction\": \"loop\", \"index\": \"{1}\", \"phi\": true, \"shape\": "
           "\"f32[1024]{0}\", \"allocation\": 4, \"offset\": 4096, \"size\": 4096, \"start\": 4, "
           "\"end\": 4, \"buffer\": 5}",
           "{\"allocation\": 4, \"offset\": 0, \"size\": 4096, \"values\": [4, 6], \"live\": [[2, "
           "5]]}",
           "\"skipped_lines\": 1\n}\n",
       }) {
    EXPECT_TRUE(Contains(r.out, part)) << "missing: " << part << "\nin:\n" << r.out;
  }
}

TEST(MemoryCli, DumpDirectoryAddressingAndTwoStates) {
  // DIR:MODULE by name and by id: XLA's buffer assignment with the texts beside it.
  for (const std::string ref : {"jaxlib-0.10.2:jit_conf_while_loop", "jaxlib-0.10.2:8"}) {
    CommandResult r = RunHlowb("memory " + (kDir / ref).string());
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(Contains(r.out, ":jit_conf_while_loop:cpu_after_optimizations\n")) << r.out;
    EXPECT_TRUE(Contains(r.out, "-live-range.txt")) << r.out;
    EXPECT_TRUE(Contains(r.out,
                         "the files state: peak 116 bytes at point 13, total 212 bytes, "
                         "memory-usage report total 212 bytes; all agree"))
        << r.out;
  }
  // Two releases side by side.
  CommandResult cmp = RunHlowb("memory " + (kDir / "jaxlib-0.4.13:jit_conf_while_loop").string() +
                               " " + (kDir / "jaxlib-0.10.2:jit_conf_while_loop").string());
  ASSERT_EQ(cmp.code, 0) << cmp.out;
  const std::string rows = Squeeze(cmp.out);
  EXPECT_TRUE(Contains(rows, "\npeak bytes 116 116 +0 +0.0%\n")) << cmp.out;
  EXPECT_TRUE(Contains(rows, "\nXLA's peak bytes 181 116 -65 -35.9%\n")) << cmp.out;
  EXPECT_TRUE(Contains(rows, "\ntotal bytes 164 212 +48 +29.3%\n")) << cmp.out;
  EXPECT_TRUE(Contains(rows, "\n temp 40 88 +48 +120.0%\n")) << cmp.out;
  EXPECT_TRUE(Contains(rows, "\n thread-local 12 12 +0 +0.0%\n")) << cmp.out;
  EXPECT_TRUE(Contains(cmp.out, "peak point: A 14 (constant.12), B 13 (constant.4)")) << cmp.out;
  CommandResult json =
      RunHlowb("memory " + kHandBa.string() + " " + kHandBa.string() + " --format=json");
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_TRUE(Contains(json.out, "\"schema\": \"hlowb.memory-compare/1\"")) << json.out;
  EXPECT_TRUE(Contains(json.out, "\"delta\": {\"peak_bytes\": 0, \"total_bytes\": 0")) << json.out;
  // Input and usage errors.
  CommandResult none = RunHlowb("memory " + (kDir / "hand:no_such_module").string());
  EXPECT_EQ(none.code, 1);
  EXPECT_TRUE(Contains(none.out, "no module 'no_such_module'")) << none.out;
  CommandResult dir = RunHlowb("memory " + (kDir / "hand").string());
  EXPECT_EQ(dir.code, 1);
  EXPECT_TRUE(Contains(dir.out, "is a directory: name a module")) << dir.out;
  EXPECT_EQ(RunHlowb("memory " + kHandBa.string() + " --format=xml").code, 2);
  EXPECT_EQ(RunHlowb("memory " + kHandBa.string() + " --top=many").code, 2);
  EXPECT_EQ(RunHlowb("memory").code, 2);
  EXPECT_EQ(RunHlowb("memory " + kHandBa.string() + " --pipeline=cpu").code, 1);
}

TEST(MemoryCli, TruncatedFileIsAnInputErrorNamingItsLine) {
  const fs::path dir = fs::temp_directory_path() / ("hlowb_memory_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string ba = Read(kHandBa);
  const fs::path cut = dir / "module_0001.jit_f.cpu_after_optimizations-buffer-assignment.txt";
  std::ofstream(cut) << ba.substr(0, ba.find("    d{}:4-5"));
  CommandResult r = RunHlowb("memory " + cut.string());
  EXPECT_EQ(r.code, 1);
  EXPECT_TRUE(Contains(r.out, cut.string() + ":47: the text ends inside the BufferLiveRange "
                                             "section"))
      << r.out;
  fs::remove_all(dir);
}

// An HLO file gets hlowb's own assignment: its own schedule when it has one, else copies and
// the memory scheduler.
TEST(MemoryCli, HloFileGetsHlowbsOwnAssignment) {
  const fs::path dir = fs::temp_directory_path() / ("hlowb_memory_hlo_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path scheduled = dir / "scheduled.hlo";
  std::ofstream(scheduled) << R"(HloModule m, is_scheduled=true

ENTRY e {
  p = f32[256]{0} parameter(0)
  a = f32[256]{0} exponential(p)
  b = f32[256]{0} negate(a)
  ROOT c = f32[256]{0} add(b, p)
}
)";
  CommandResult r = RunHlowb("memory " + scheduled.string());
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(Contains(r.out, "source: hlowb's buffer assignment\n")) << r.out;
  EXPECT_TRUE(Contains(r.out, "schedule: the module's own schedule (is_scheduled=true)\n"))
      << r.out;
  EXPECT_TRUE(Contains(r.out, "program points: 4;")) << r.out;
  // b writes over a (elementwise, a's last use), so the peak is at c, not at b.
  EXPECT_TRUE(Contains(r.out, "peak: 3072 bytes (3.00 KiB) at point 3 (c)")) << r.out;
  EXPECT_TRUE(Contains(r.out, "  temp              1         1024 bytes")) << r.out;
  const fs::path unscheduled = dir / "unscheduled.hlo";
  std::ofstream(unscheduled) << R"(HloModule m

ENTRY e {
  p = f32[256]{0} parameter(0)
  a = f32[256]{0} exponential(p)
  ROOT b = f32[256]{0} negate(a)
}
)";
  CommandResult u = RunHlowb("memory " + unscheduled.string() + " " + scheduled.string());
  ASSERT_EQ(u.code, 0) << u.out;
  EXPECT_TRUE(Contains(u.out, "A: " + unscheduled.string() + " (hlowb's buffer assignment)"))
      << u.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
