// Differential replay across compiler passes, behind `hlowb replay DIR --module=M
// --bisect_passes`: replays the module state after every pass that changed the program (the
// pass timeline's structural fingerprints decide which did) with the arguments the baseline
// (before_optimizations) ran with, compares each result with the baseline's, and names the
// first pass after which the outputs diverge beyond the error bounds.
//
// States are walked in compiler order, not binary-searched: a pass that breaks numerics can be
// followed by one that hides the damage, and "first" must mean first. The walk stops at the
// first divergence unless asked to go on. A state whose entry parameters differ from the
// baseline's in more than layout (count, element type or dimensions) cannot take the same
// arguments; it is reported and skipped, as is one whose result cannot be compared with the
// baseline's. States that did not load, or failed to run (for example a custom call without a
// handler), are reported and the walk continues.
//
// Not here: choosing or opening the states (the dump index and loader do that) or shrinking
// the module (extract.h).
#ifndef HLOWB_REPLAY_BISECT_PASS_BISECT_H_
#define HLOWB_REPLAY_BISECT_PASS_BISECT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/timeline.h"
#include "core/support/cancel.h"
#include "replay/compare/compare.h"
#include "replay/session.h"

namespace hlowb {

struct PassBisectOptions {
  // Platform, seed, bounds, custom-call handler, memory budget. Its reference platform,
  // iterations and on_instruction are ignored: each state runs once on `replay.platform`.
  ReplayOptions replay;
  // Where the baseline's arguments come from (snapshot, literals file); fake data otherwise.
  ReplayInputs inputs;
  bool stop_at_first = true;
};

enum class BisectVerdict {
  kBaseline,
  kUnchanged,  // same program as the state before it: not run
  kMatch,
  kDiverged,
  kSkipped,  // parameters or results do not line up with the baseline's
  kFailed,   // did not load or did not run
  kNotRun,   // after the first divergence
};
std::string_view BisectVerdictName(BisectVerdict verdict);

struct PassBisectRow {
  std::string label;  // "0007 optimization: algsimp"
  std::string pipeline;
  std::string pass;
  BisectVerdict verdict = BisectVerdict::kNotRun;
  std::string detail;
  std::optional<ComparisonReport> comparison;
};

struct PassBisectReport {
  std::string module_name;
  std::string argument_source;
  ErrorBounds bounds;
  std::vector<PassBisectRow> rows;  // from the baseline on, in compiler order
  int first_divergent = -1;         // index into rows, -1 when nothing diverged
  int states_run = 0;
  std::string ToString() const;
};

// `states` in compiler order (as for BuildTimeline); `baseline` indexes the
// before_optimizations state. InvalidArgument when the baseline did not load; the baseline's
// own replay errors are returned as they are.
absl::StatusOr<PassBisectReport> BisectPasses(const std::vector<TimelineInput>& states,
                                              int baseline, const PassBisectOptions& options,
                                              const CancelToken* cancel = nullptr,
                                              const ProgressFn& progress = nullptr);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_BISECT_PASS_BISECT_H_
