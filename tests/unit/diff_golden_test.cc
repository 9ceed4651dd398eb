// Golden tests for the structural diff: tests/golden/diff/NAME.a.hlo and NAME.b.hlo give
// NAME.diff.golden (text report with every row) and NAME.unified.golden (aligned text diff).
// HLOWB_UPDATE_GOLDEN=1 rewrites the goldens.
#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "core/analysis/diff.h"
#include "core/analysis/fingerprint.h"
#include "core/analysis/timeline.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "tests/unit/fusion_states.h"

using hlowb::testing::kAfterFusion;
using hlowb::testing::kBeforeFusion;


namespace hlowb {
namespace {

namespace fs = std::filesystem;

fs::path Dir() { return fs::path(HLOWB_SOURCE_DIR) / "tests" / "golden" / "diff"; }

std::unique_ptr<Module> Load(const fs::path& p) {
  auto text = ReadFileToString(p.string());
  EXPECT_TRUE(text.ok());
  auto m = ParseModule(*text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

void Check(const fs::path& golden, const std::string& actual) {
  if (std::getenv("HLOWB_UPDATE_GOLDEN")) {
    ASSERT_TRUE(WriteStringToFile(golden.string(), actual).ok());
    return;
  }
  auto expected = ReadFileToString(golden.string());
  ASSERT_TRUE(expected.ok()) << "missing " << golden;
  if (*expected != actual) {
    fs::path out = golden;
    out.replace_extension(".actual");
    (void)WriteStringToFile(out.string(), actual);
    ADD_FAILURE() << "golden mismatch " << golden << " (actual in " << out << ")\n" << actual;
  }
}

// One line per side-by-side line: the kind (' ' unchanged, '~' changed, '+' added, '-'
// removed), A's text padded to one column, " | ", B's text.
std::string FormatSideBySide(const std::vector<SideBySideLine>& lines) {
  size_t width = 0;
  for (const SideBySideLine& l : lines) width = std::max(width, l.left.size());
  std::string out;
  for (const SideBySideLine& l : lines) {
    const char mark = l.kind == DiffKind::kChanged   ? '~'
                      : l.kind == DiffKind::kAdded   ? '+'
                      : l.kind == DiffKind::kRemoved ? '-'
                                                     : ' ';
    out += mark;
    out += ' ';
    out += l.left;
    out += std::string(width - l.left.size(), ' ');
    out += " | ";
    out += l.right;
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += '\n';
  }
  return out;
}

std::vector<std::string> Cases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(Dir(), ec)) {
    std::string f = e.path().filename().string();
    if (f.size() > 6 && f.substr(f.size() - 6) == ".a.hlo") names.push_back(f.substr(0, f.size() - 6));
  }
  std::sort(names.begin(), names.end());
  return names;
}

class DiffGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(DiffGolden, Report) {
  auto a = Load(Dir() / (GetParam() + ".a.hlo"));
  auto b = Load(Dir() / (GetParam() + ".b.hlo"));
  ASSERT_TRUE(a && b);
  ModuleDiff diff = DiffModules(*a, *b);
  Check(Dir() / (GetParam() + ".diff.golden"), FormatDiffText(diff, true));
  Check(Dir() / (GetParam() + ".unified.golden"),
        FormatUnifiedDiff(diff, GetParam() + ".a.hlo", GetParam() + ".b.hlo"));
  Check(Dir() / (GetParam() + ".sidebyside.golden"), FormatSideBySide(BuildSideBySide(diff)));
}

INSTANTIATE_TEST_SUITE_P(Golden, DiffGolden, ::testing::ValuesIn(Cases()));

TEST(Diff, IdenticalModulesHaveNoChanges) {
  auto a = Load(Dir() / "fusion_and_renames.a.hlo");
  auto b = Load(Dir() / "fusion_and_renames.a.hlo");
  ModuleDiff diff = DiffModules(*a, *b);
  EXPECT_EQ(diff.counts.changed + diff.counts.added + diff.counts.removed, 0);
  EXPECT_EQ(diff.counts.unchanged, a->entry()->instruction_count());
  EXPECT_EQ(FingerprintModule(*a).hash, FingerprintModule(*b).hash);
}

TEST(Diff, FingerprintIgnoresNamesButNotStructure) {
  auto a = ParseModule("HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n ROOT n = f32[2] negate(p)\n}\n");
  auto renamed = ParseModule(
      "HloModule other\nENTRY f {\n x = f32[2] parameter(0), metadata={op_name=\"q\"}\n ROOT y = f32[2] negate(x)\n}\n");
  auto changed = ParseModule("HloModule m\nENTRY e {\n p = f32[2] parameter(0)\n ROOT n = f32[2] abs(p)\n}\n");
  ASSERT_TRUE(a.ok() && renamed.ok() && changed.ok());
  EXPECT_EQ(FingerprintModule(**a).hash, FingerprintModule(**renamed).hash);
  EXPECT_NE(FingerprintModule(**a).hash, FingerprintModule(**changed).hash);
}

// Both sides have every line; a matched pair shares its line; the side opposite an added or
// removed instruction is blank; every row of the diff appears once, in order.
TEST(Diff, SideBySideAlignsMatchedInstructions) {
  auto a = Load(Dir() / "fusion_and_renames.a.hlo");
  auto b = Load(Dir() / "fusion_and_renames.b.hlo");
  ModuleDiff diff = DiffModules(*a, *b);
  std::vector<SideBySideLine> lines = BuildSideBySide(diff);
  size_t rows = 0;
  for (const ComputationDiff& c : diff.computations) rows += c.rows.size();
  size_t instruction_lines = 0;
  bool saw_rename = false;
  for (const SideBySideLine& l : lines) {
    if (l.type != SideBySideLine::Type::kInstruction) continue;
    ++instruction_lines;
    EXPECT_EQ(l.left.empty(), l.a == nullptr);
    EXPECT_EQ(l.right.empty(), l.b == nullptr);
    if (l.a) {
      EXPECT_NE(l.left.find(l.a->name()), std::string::npos) << l.left;
    }
    if (l.b) {
      EXPECT_NE(l.right.find(l.b->name()), std::string::npos) << l.right;
    }
    if (l.kind == DiffKind::kAdded) {
      EXPECT_TRUE(l.a == nullptr && l.b != nullptr);
    }
    if (l.kind == DiffKind::kRemoved) {
      EXPECT_TRUE(l.b == nullptr && l.a != nullptr);
    }
    if (l.a && l.b && l.a->name() == "neg.3") {
      EXPECT_EQ(l.b->name(), "negate.7");
      EXPECT_NE(l.note.find("renamed from neg.3"), std::string::npos) << l.note;
      EXPECT_NE(l.note.find("changed: operands"), std::string::npos) << l.note;
      saw_rename = true;
    }
    if (l.kind == DiffKind::kRemoved && l.a->name() == "add.1") {
      EXPECT_EQ(l.note, "removed (fused into fusion)");
    }
  }
  EXPECT_EQ(instruction_lines, rows);
  EXPECT_TRUE(saw_rename);
}

TEST(Diff, ReportsRenamesAndFusion) {
  auto a = Load(Dir() / "fusion_and_renames.a.hlo");
  auto b = Load(Dir() / "fusion_and_renames.b.hlo");
  ModuleDiff diff = DiffModules(*a, *b);
  const Instruction* neg = a->entry()->FindInstruction("neg.3");
  ASSERT_NE(diff.MatchOfA(neg), nullptr);
  EXPECT_EQ(diff.MatchOfA(neg)->name(), "negate.7");
  EXPECT_EQ(diff.MatchOfA(a->entry()->FindInstruction("add.1")), nullptr);  // fused away
  EXPECT_EQ(diff.MatchOfB(b->entry()->FindInstruction("fusion")), nullptr);  // new
  EXPECT_GE(diff.counts.renamed, 3);
}

}  // namespace
}  // namespace hlowb

namespace hlowb {
namespace {

// Provenance across three states: renamed by the first step, fused away by the second; the
// progress callback sees every comparison and can stop the trace.
TEST(Provenance, TraceReportsProgressAndStops) {
  auto s0 = Load(Dir() / "fusion_and_renames.a.hlo");
  auto s1 = Load(Dir() / "fusion_and_renames.a.hlo");
  auto s2 = Load(Dir() / "fusion_and_renames.b.hlo");
  ASSERT_TRUE(s0 && s1 && s2);
  std::vector<TimelineInput> states(3);
  states[0].label = "before";
  states[0].module = s0.get();
  states[1].label = "0001 p: algsimp";
  states[1].module = s1.get();
  states[2].label = "0002 f: fusion";
  states[2].module = s2.get();
  std::string error;
  std::vector<std::pair<int, int>> calls;
  std::vector<ProvenanceStep> steps =
      TraceInstruction(states, 1, "add.1", &error, [&](int done, int total) {
        calls.emplace_back(done, total);
        return true;
      });
  ASSERT_EQ(steps.size(), 3u) << error;
  EXPECT_EQ(steps[0].name, "add.1");
  EXPECT_EQ(steps[1].event, "present");
  EXPECT_EQ(steps[2].event, "fused into fusion");
  EXPECT_EQ(steps[2].name, "add.1");  // followed on inside fused_computation
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0], std::make_pair(1, 2));
  EXPECT_EQ(calls[1], std::make_pair(2, 2));

  error.clear();
  steps = TraceInstruction(states, 1, "add.1", &error, [](int, int) { return false; });
  EXPECT_TRUE(steps.empty());
  EXPECT_EQ(error, "cancelled");
}

const InstructionDiff* RemovedRow(const ModuleDiff& d, const std::string& name) {
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.kind == DiffKind::kRemoved && r.a->name() == name) return &r;
    }
  }
  return nullptr;
}

// Each fused instruction is reported with the fusion that took it — a grown fusion as well as
// a new one, told apart by what the fused copy reads — and the copy it became.
TEST(Diff, SaysWhichFusionTookARemovedInstruction) {
  auto a = ParseModule(kBeforeFusion);
  auto b = ParseModule(kAfterFusion);
  ASSERT_TRUE(a.ok() && b.ok());
  const ModuleDiff d = DiffModules(**a, **b);
  const InstructionDiff* add2 = RemovedRow(d, "add.2");
  const InstructionDiff* add3 = RemovedRow(d, "add.3");
  ASSERT_TRUE(add2 && add3);
  ASSERT_NE(add2->fused_into, nullptr);
  EXPECT_EQ(add2->fused_into->name(), "fusion");
  ASSERT_NE(add2->fused_as, nullptr);
  EXPECT_EQ(add2->fused_as->name(), "add.5");
  ASSERT_NE(add3->fused_into, nullptr);
  EXPECT_EQ(add3->fused_into->name(), "fusion.1");
  ASSERT_NE(add3->fused_as, nullptr);
  EXPECT_EQ(add3->fused_as->name(), "add.6");
  EXPECT_NE(FormatDiffText(d).find("- add.2 add [fused into fusion]"), std::string::npos)
      << FormatDiffText(d);
  bool noted = false;
  for (const SideBySideLine& l : BuildSideBySide(d)) {
    if (l.kind == DiffKind::kRemoved && l.a != nullptr && l.a->name() == "add.3") {
      EXPECT_EQ(l.note, "removed (fused into fusion.1)");
      noted = true;
    }
  }
  EXPECT_TRUE(noted);
}

// History goes on inside the fused computation, forward from the top-level instruction and
// backward from its fused copy.
TEST(Provenance, TraceContinuesIntoTheFusedComputation) {
  auto s0 = ParseModule(kBeforeFusion);
  auto s1 = ParseModule(kAfterFusion);
  auto s2 = ParseModule(kAfterFusion);
  ASSERT_TRUE(s0.ok() && s1.ok() && s2.ok());
  std::vector<TimelineInput> states(3);
  states[0].label = "before";
  states[0].module = s0->get();
  states[1].label = "0001 f: fusion";
  states[1].module = s1->get();
  states[2].label = "0002 f: dce";
  states[2].module = s2->get();
  std::string error;
  std::vector<ProvenanceStep> steps = TraceInstruction(states, 0, "add.2", &error);
  ASSERT_EQ(steps.size(), 3u) << error;
  EXPECT_EQ(steps[0].name, "add.2");
  EXPECT_EQ(steps[1].name, "add.5");
  EXPECT_EQ(steps[1].event, "fused into fusion");
  EXPECT_EQ(steps[2].name, "add.5");
  EXPECT_EQ(steps[2].event, "present");

  steps = TraceInstruction(states, 2, "add.6", &error);
  ASSERT_EQ(steps.size(), 3u) << error;
  EXPECT_EQ(steps[2].name, "add.6");
  EXPECT_EQ(steps[1].name, "add.6");
  EXPECT_EQ(steps[1].event, "fused into fusion.1");
  EXPECT_EQ(steps[0].name, "add.3");
  EXPECT_EQ(steps[0].event, "present");
}

}  // namespace
}  // namespace hlowb
