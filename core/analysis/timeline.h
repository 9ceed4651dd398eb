// The pass timeline of one module: its states in compiler order with, for each, whether the
// pass changed the module (by structural fingerprint — a rename or a metadata edit is not a
// change) and the instruction-count delta. Also provenance: where an instruction came from
// and where it went, across all states.
#ifndef HLOWB_CORE_ANALYSIS_TIMELINE_H_
#define HLOWB_CORE_ANALYSIS_TIMELINE_H_

#include <functional>
#include <string>
#include <vector>

#include "core/ir/module.h"

namespace hlowb {

struct TimelineInput {
  std::string label;     // "before_optimizations", "0003 simplification: algsimp", ...
  int64_t step = -1;
  std::string pipeline;
  std::string pass;
  bool is_pass = false;  // a per-pass step (counts toward "N of M passes")
  const Module* module = nullptr;  // null when it failed to load
  std::string error;
};

struct TimelineRow {
  TimelineInput input;
  uint64_t fingerprint = 0;
  int64_t instruction_count = 0;
  bool changed = false;  // differs structurally from the previous loaded state
  int64_t delta = 0;     // instruction count minus the previous loaded state's
};

struct Timeline {
  std::vector<TimelineRow> rows;
  int passes = 0;
  int changed_passes = 0;
  std::string Summary() const;  // "N of M passes changed the module"
};

Timeline BuildTimeline(std::vector<TimelineInput> inputs);
std::string FormatTimelineText(const Timeline& timeline);
std::string FormatTimelineJson(const Timeline& timeline);

// One state's view of a traced instruction.
struct ProvenanceStep {
  std::string label;
  std::string name;   // the instruction's name in this state; empty when absent
  std::string event;  // "present", "created", "changed (...)", "renamed from X", "removed",
                      // "fused into X", "absent", "not loaded"
};

// Follows `instruction` (a name in states[start]) backward and forward through the states,
// matching it across each adjacent pair with the structural diff. An instruction fused into a
// fusion is followed on as its copy inside the fused computation (event "fused into X", the
// copy's name), and a fused copy back to the instruction it was. `progress` (optional) is
// called after each pair is compared with the number compared and the most there can be;
// returning false stops the trace, which then returns nothing with `error` "cancelled".
std::vector<ProvenanceStep> TraceInstruction(
    const std::vector<TimelineInput>& states, int start, const std::string& instruction,
    std::string* error, const std::function<bool(int done, int total)>& progress = nullptr);
std::string FormatProvenanceText(const std::vector<ProvenanceStep>& steps);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_TIMELINE_H_
