// Differential replay across passes: a dump directory written by the test, in which one pass
// changes the numerics; `hlowb replay DIR --module=M --bisect_passes` must name that pass, skip
// states whose parameters changed, and not run states that did not change the program.
#include "replay/bisect/pass_bisect.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "core/support/file_util.h"
#include "gtest/gtest.h"
#include "tests/unit/command_util.h"
#include "replay_fixtures.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Parse;
using testing::kAlgsimp;
using testing::kBad;
using testing::kBefore;
using testing::kLayout;

constexpr char kReshaped[] = R"(
HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT r = f32[2,4] exponential(x)
}
)";

TimelineInput State(const std::string& label, const std::string& pass, const Module* m) {
  TimelineInput in;
  in.label = label;
  in.pass = pass;
  in.pipeline = "opt";
  in.is_pass = !pass.empty();
  in.module = m;
  return in;
}

TEST(BisectPasses, NamesThePassThatChangesTheNumerics) {
  auto before = Parse(kBefore), algsimp = Parse(kAlgsimp), layout = Parse(kLayout),
       bad = Parse(kBad);
  std::vector<TimelineInput> states{
      State("before_optimizations", "", before.get()),
      State("0000 opt: algsimp", "algsimp", algsimp.get()),
      State("0001 opt: cse", "cse", algsimp.get()),  // unchanged
      State("0002 opt: layout-assignment", "layout-assignment", layout.get()),
      State("0003 opt: bad-math", "bad-math", bad.get()),
      State("0004 opt: dce", "dce", bad.get()),
  };
  PassBisectOptions o;
  auto r = BisectPasses(states, 0, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->rows.size(), 6u);
  EXPECT_EQ(r->rows[0].verdict, BisectVerdict::kBaseline);
  EXPECT_EQ(r->rows[1].verdict, BisectVerdict::kMatch);
  EXPECT_EQ(r->rows[2].verdict, BisectVerdict::kUnchanged);
  EXPECT_EQ(r->rows[3].verdict, BisectVerdict::kMatch) << r->rows[3].detail;
  EXPECT_EQ(r->rows[4].verdict, BisectVerdict::kDiverged);
  EXPECT_EQ(r->rows[5].verdict, BisectVerdict::kNotRun);
  EXPECT_EQ(r->first_divergent, 4);
  EXPECT_EQ(r->states_run, 4);  // baseline, algsimp, layout-assignment, bad-math
  std::string text = r->ToString();
  EXPECT_NE(text.find("first divergence: after pass bad-math"), std::string::npos) << text;
}

TEST(BisectPasses, SkipsStatesWhoseParametersChangedAndCanGoOn) {
  auto before = Parse(kBefore), reshaped = Parse(kReshaped), bad = Parse(kBad);
  std::vector<TimelineInput> states{
      State("before_optimizations", "", before.get()),
      State("0000 opt: reshape-params", "reshape-params", reshaped.get()),
      State("0001 opt: bad-math", "bad-math", bad.get()),
      State("0002 opt: not-loaded", "not-loaded", nullptr),
  };
  states[3].error = "parse error";
  PassBisectOptions o;
  o.stop_at_first = false;
  auto r = BisectPasses(states, 0, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->rows[1].verdict, BisectVerdict::kSkipped);
  EXPECT_NE(r->rows[1].detail.find("f32[2,4]"), std::string::npos) << r->rows[1].detail;
  EXPECT_EQ(r->rows[2].verdict, BisectVerdict::kDiverged);
  EXPECT_EQ(r->rows[3].verdict, BisectVerdict::kFailed);
  EXPECT_EQ(r->first_divergent, 2);
}

TEST(BisectPasses, LooseBoundsFindNoDivergence) {
  auto before = Parse(kBefore), bad = Parse(kBad);
  std::vector<TimelineInput> states{State("before_optimizations", "", before.get()),
                                    State("0000 opt: bad-math", "bad-math", bad.get())};
  PassBisectOptions o;
  o.replay.bounds.abs = 1;
  o.replay.bounds.rel = 1;
  auto r = BisectPasses(states, 0, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->first_divergent, -1);
  EXPECT_NE(r->ToString().find("no state diverged"), std::string::npos);
  EXPECT_FALSE(BisectPasses(states, 5, o).ok());
}

using Result = testing::CommandResult;
Result Hlowb(const std::string& args) { return testing::RunHlowb(args); }

TEST(BisectPassesCli, DumpDirectoryBuiltInTheTest) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hlowb_bisect_" + std::to_string(getpid()));
  ASSERT_TRUE(testing::WriteBisectDump(dir.string()).ok());
  Result r = Hlowb("replay " + dir.string() + " --module=m --bisect_passes");
  EXPECT_EQ(r.code, 1) << r.out;  // a divergence was found
  EXPECT_NE(r.out.find("first divergence: after pass bad-math (pipeline opt)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("DIVERGED"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unchanged"), std::string::npos) << r.out;

  Result loose = Hlowb("replay " + dir.string() +
                       " --module=m --bisect_passes --abs_error_bound=10 --rel_error_bound=10");
  EXPECT_EQ(loose.code, 0) << loose.out;
  EXPECT_NE(loose.out.find("no state diverged"), std::string::npos) << loose.out;

  Result no_module = Hlowb("replay " + dir.string() + " --bisect_passes");
  EXPECT_EQ(no_module.code, 2) << no_module.out;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
