// Modules that share a name are separate timelines: a program compiled five times (five ids of
// one name, different contents) and a pass-by-pass module next to another compilation of the
// same name, in the index, `hlowb passes` and `hlowb diff DIR:MODULE:STEP`. The one join is a
// compilation whose dump XLA split over two ids (before_optimizations under one, the rest under
// the next), and the timeline says so.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "core/dump/dump_index.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

// A module whose entry negates its parameter `negates` times; `tag` names the instructions so
// that the file tells which module and state it came from.
std::string ChainModule(const std::string& name, const std::string& tag, int negates) {
  std::string text = "HloModule " + name + "\n\nENTRY main {\n  p = f32[4] parameter(0)\n";
  std::string last = "p";
  for (int i = 1; i <= negates; ++i) {
    std::string n = tag + "." + std::to_string(i);
    text += "  " + std::string(i == negates ? "ROOT " : "") + n + " = f32[4] negate(" + last +
            ")\n";
    last = n;
  }
  return text + "}\n";
}

std::string Id(int id) { return absl::StrFormat("%04d", id); }

class SameNameDump : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("hlowb_same_name_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& file, const std::string& text) {
    std::ofstream(dir_ / file) << text;
  }

  // Five compilations of jit__psum: before, after and the two buffer-assignment variants each,
  // with contents that differ between the ids.
  void WriteFiveCompilations() {
    for (int id : {1, 11, 27, 31, 41}) {
      const std::string prefix = "module_" + Id(id) + ".jit__psum.";
      const std::string tag = "m" + std::to_string(id);
      Write(prefix + "before_optimizations.txt", ChainModule("jit__psum", tag, 1 + id % 7));
      Write(prefix + "after_optimizations.txt", ChainModule("jit__psum", tag, 1));
      Write(prefix + "after_optimizations_before_buffer_assignment.txt",
            ChainModule("jit__psum", tag, 1));
      Write(prefix + "after_optimizations_after_buffer_assignment.txt",
            ChainModule("jit__psum", tag, 1));
    }
  }

  // Two pass-by-pass compilations of jit_step (ids 90 and 96), 18 states each: before, steps
  // 0000-0015, after. In module 96 step k has k+1 negates (named neg96.*); in module 90 every
  // state has one (named other.*).
  void WritePassByPass() {
    for (int id : {90, 96}) {
      const std::string prefix = "module_" + Id(id) + ".jit_step.";
      auto text = [&](int negates) {
        return id == 96 ? ChainModule("jit_step", "neg96", negates)
                        : ChainModule("jit_step", "other", 1);
      };
      Write(prefix + "before_optimizations.txt", text(1));
      for (int step = 0; step < 16; ++step) {
        Write(prefix + Id(step) + ".pipe.after_p" + std::to_string(step) + ".before_p" +
                  std::to_string(step + 1) + ".txt",
              text(step + 1));
      }
      Write(prefix + "after_optimizations.txt", text(16));
    }
  }

  fs::path dir_;
};

using CliRun = testing::CommandResult;
CliRun Hlowb(const std::string& args) { return testing::RunHlowb(args); }

int Count(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

TEST_F(SameNameDump, FiveCompilationsOfOneNameAreFiveTimelines) {
  WriteFiveCompilations();
  auto index = IndexDumpDirectory(dir_.string());
  ASSERT_TRUE(index.ok()) << index.status();
  ASSERT_EQ(index->modules.size(), 5u);
  for (const DumpModule& m : index->modules) {
    EXPECT_EQ(m.split_partner, -1) << m.id_text;
    const std::vector<DumpState> timeline = index->Timeline(m);
    ASSERT_EQ(timeline.size(), 4u) << m.id_text;
    int before = 0;
    for (const DumpState& s : timeline) {
      EXPECT_EQ(s.module_id, m.id) << m.id_text << " " << s.label;
      before += s.stage == StageKind::kBeforeOptimizations;
    }
    EXPECT_EQ(before, 1) << m.id_text;
  }
  // The shared name stays a hint.
  ASSERT_EQ(index->groups.size(), 1u);
  EXPECT_EQ(index->groups[0].modules.size(), 5u);

  CliRun listing = Hlowb("index " + dir_.string());
  ASSERT_EQ(listing.code, 0) << listing.out;
  EXPECT_EQ(Count(listing.out, "same function as ids 0001,0011,0027,0031,0041"), 5)
      << listing.out;

  // `hlowb passes` on one id lists that id's four states and no other's.
  CliRun passes = Hlowb("passes " + dir_.string() + " --module=27");
  ASSERT_EQ(passes.code, 0) << passes.out;
  EXPECT_EQ(Count(passes.out, "before_optimizations"), 1) << passes.out;
  EXPECT_EQ(Count(passes.out, "\n"), 5) << passes.out;  // four states and the summary
}

TEST_F(SameNameDump, PassByPassModuleKeepsItsOwnStates) {
  WritePassByPass();
  auto index = IndexDumpDirectory(dir_.string());
  ASSERT_TRUE(index.ok()) << index.status();
  const DumpModule* m = index->FindModule("96");
  ASSERT_NE(m, nullptr);
  const std::vector<DumpState> timeline = index->Timeline(*m);
  ASSERT_EQ(timeline.size(), 18u);
  std::set<int64_t> steps;
  for (const DumpState& s : timeline) {
    EXPECT_EQ(s.module_id, 96) << s.label;
    if (s.stage == StageKind::kPassStep) {
      EXPECT_TRUE(steps.insert(s.step).second) << "step " << s.step << " repeats";
    }
  }
  EXPECT_EQ(steps.size(), 16u);

  // DIR:96:5 is module 96's step 5 (six negates), not module 90's.
  CliRun diff =
      Hlowb("diff " + dir_.string() + ":96:4 " + dir_.string() + ":96:5 --format=unified");
  ASSERT_EQ(diff.code, 0) << diff.out;
  EXPECT_NE(diff.out.find("neg96.6"), std::string::npos) << diff.out;
  EXPECT_EQ(diff.out.find("other."), std::string::npos) << diff.out;

  // `hlowb passes --module=96`: 18 states, each step once.
  CliRun passes = Hlowb("passes " + dir_.string() + " --module=96");
  ASSERT_EQ(passes.code, 0) << passes.out;
  EXPECT_EQ(Count(passes.out, "0005 pipe: p5"), 1) << passes.out;
  EXPECT_EQ(Count(passes.out, "before_optimizations"), 1) << passes.out;
  EXPECT_EQ(Count(passes.out, "\n"), 19) << passes.out;  // 18 states and the summary
}

TEST_F(SameNameDump, SplitCompilationIsJoinedOnlyWhenTheNamesProveIt) {
  // One compilation under 21 (before_optimizations and its configuration) and 23 (the rest).
  const std::string name = "jit_train_step";
  Write("module_0021.jit_train_step.before_optimizations.txt", ChainModule(name, "a", 2));
  Write("module_0021.jit_train_step.execution_options.txt", "");
  Write("module_0023.jit_train_step.after_optimizations.txt", ChainModule(name, "a", 1));
  Write("module_0023.jit_train_step.after_optimizations-buffer-assignment.txt", "");
  Write("module_0023.jit_train_step.after_optimizations_after_buffer_assignment.txt",
        ChainModule(name, "a", 1));
  // Another name between them, and a later compilation with its own before_optimizations and
  // a lone after_optimizations after it: neither joins 21 or 23.
  Write("module_0022.jit_other.before_optimizations.txt", ChainModule("jit_other", "o", 1));
  Write("module_0030.jit_train_step.before_optimizations.txt", ChainModule(name, "b", 3));
  Write("module_0030.jit_train_step.after_optimizations.txt", ChainModule(name, "b", 1));
  Write("module_0031.jit_train_step.after_optimizations.txt", ChainModule(name, "c", 1));
  auto index = IndexDumpDirectory(dir_.string());
  ASSERT_TRUE(index.ok()) << index.status();
  const DumpModule* first = index->FindModule("21");
  const DumpModule* second = index->FindModule("23");
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->split_partner, second - index->modules.data());
  EXPECT_EQ(second->split_partner, first - index->modules.data());
  for (const DumpModule* m : {first, second}) {
    const std::vector<DumpState> timeline = index->Timeline(*m);
    ASSERT_EQ(timeline.size(), 3u) << m->id_text;
    EXPECT_EQ(timeline[0].stage, StageKind::kBeforeOptimizations);
    EXPECT_EQ(timeline[0].module_id, 21);
    EXPECT_EQ(timeline[1].stage, StageKind::kAfterOptimizations);
    EXPECT_EQ(timeline[1].module_id, 23);
    EXPECT_EQ(timeline[2].stage, StageKind::kAfterOptimizationsVariant);
  }
  // The timeline names the id a joined state came from.
  EXPECT_EQ(index->Timeline(*first)[1].label, "after_optimizations (module 0023)");
  EXPECT_EQ(index->Timeline(*second)[0].label, "before_optimizations (module 0021)");
  EXPECT_EQ(index->Timeline(*second)[1].label, "after_optimizations");

  for (const char* id : {"22", "30", "31"}) {
    const DumpModule* m = index->FindModule(id);
    ASSERT_NE(m, nullptr) << id;
    EXPECT_EQ(m->split_partner, -1) << id;
    for (const DumpState& s : index->Timeline(*m)) EXPECT_EQ(s.module_id, m->id) << id;
  }

  CliRun listing = Hlowb("index " + dir_.string());
  ASSERT_EQ(listing.code, 0) << listing.out;
  EXPECT_NE(listing.out.find("module 0021 jit_train_step: 1 states (0 pass steps), 1 artifacts, "),
            std::string::npos)
      << listing.out;
  EXPECT_EQ(Count(listing.out, "(its dump is split over the two ids)"), 2) << listing.out;
  EXPECT_NE(listing.out.find("one compilation with id 0023"), std::string::npos) << listing.out;

  // The command line follows the same timeline: 23's before state is 21's file.
  CliRun diff = Hlowb("diff " + dir_.string() + ":23:before " + dir_.string() +
                   ":23:after --format=unified");
  ASSERT_EQ(diff.code, 0) << diff.out;
  EXPECT_NE(diff.out.find("a.2"), std::string::npos) << diff.out;
}

}  // namespace
}  // namespace hlowb
