#include "core/analysis/timeline.h"

#include <algorithm>

#include "core/analysis/diff.h"
#include "core/analysis/fingerprint.h"
#include "core/support/json.h"
#include "absl/strings/str_format.h"
#include "core/support/strings.h"

namespace hlowb {

std::string Timeline::Summary() const {
  return StrCat(changed_passes, " of ", passes, " passes changed the module");
}

Timeline BuildTimeline(std::vector<TimelineInput> inputs) {
  Timeline t;
  const TimelineRow* previous = nullptr;
  for (TimelineInput& in : inputs) {
    TimelineRow row;
    row.input = std::move(in);
    if (row.input.module) {
      ModuleFingerprint fp = FingerprintModule(*row.input.module);
      row.fingerprint = fp.hash;
      row.instruction_count = fp.instruction_count;
      if (previous) {
        row.changed = fp.hash != previous->fingerprint;
        row.delta = fp.instruction_count - previous->instruction_count;
      }
    }
    if (row.input.is_pass) {
      ++t.passes;
      t.changed_passes += row.changed;
    }
    t.rows.push_back(std::move(row));
    if (t.rows.back().input.module) previous = &t.rows.back();
  }
  return t;
}

std::string FormatTimelineText(const Timeline& t) {
  std::string out;
  for (const TimelineRow& r : t.rows) {
    std::string status;
    if (!r.input.module) {
      status = "not loaded: " + r.input.error;
    } else {
      bool first = &r == &t.rows.front() || std::none_of(&t.rows.front(), &r, [](const TimelineRow& p) {
        return p.input.module != nullptr;
      });
      status = StrCat(first ? "initial" : r.changed ? "changed" : "unchanged", "  ",
                      r.instruction_count, " instructions");
      if (r.delta != 0) StrAppend(&status, " (", r.delta > 0 ? "+" : "", r.delta, ")");
    }
    StrAppend(&out, r.changed ? "* " : "  ", r.input.label, "  ", status, "\n");
  }
  StrAppend(&out, t.Summary(), "\n");
  return out;
}

std::string FormatTimelineJson(const Timeline& t) {
  std::string out = StrCat("{\"passes\":", t.passes, ",\"changed_passes\":", t.changed_passes,
                           ",\"states\":[");
  for (size_t i = 0; i < t.rows.size(); ++i) {
    const TimelineRow& r = t.rows[i];
    StrAppend(&out, i ? "," : "", "{\"label\":", JsonQuote(r.input.label), ",\"step\":",
              r.input.step, ",\"pipeline\":", JsonQuote(r.input.pipeline), ",\"pass\":",
              JsonQuote(r.input.pass), ",\"loaded\":", r.input.module ? "true" : "false");
    if (r.input.module) {
      StrAppend(&out, ",\"changed\":", r.changed ? "true" : "false", ",\"instructions\":",
                r.instruction_count, ",\"delta\":", r.delta, ",\"fingerprint\":\"",
                absl::StrFormat("%016x", r.fingerprint), "\"");
    } else {
      StrAppend(&out, ",\"error\":", JsonQuote(r.input.error));
    }
    out += "}";
  }
  out += "]}\n";
  return out;
}

namespace {

const Instruction* FindByName(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

const InstructionDiff* RowForA(const ModuleDiff& d, const Instruction* a) {
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.a == a) return &r;
    }
  }
  return nullptr;
}

const InstructionDiff* RowForB(const ModuleDiff& d, const Instruction* b) {
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.b == b) return &r;
    }
  }
  return nullptr;
}

// The removed row whose instruction became `b` inside a fusion; null if none.
const InstructionDiff* FusedRowFor(const ModuleDiff& d, const Instruction* b) {
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& r : c.rows) {
      if (r.kind == DiffKind::kRemoved && r.fused_as == b && r.fused_into) return &r;
    }
  }
  return nullptr;
}

std::string Changes(const InstructionDiff& r) {
  std::string s;
  for (const std::string& c : r.changes) {
    if (c != "name") StrAppend(&s, s.empty() ? "" : ", ", c);
  }
  return s;
}

}  // namespace

std::vector<ProvenanceStep> TraceInstruction(const std::vector<TimelineInput>& states, int start,
                                             const std::string& instruction, std::string* error,
                                             const std::function<bool(int, int)>& progress) {
  const int n = static_cast<int>(states.size());
  std::vector<ProvenanceStep> steps(n);
  for (int i = 0; i < n; ++i) {
    steps[i].label = states[i].label;
    steps[i].event = states[i].module ? "absent" : "not loaded";
  }
  if (start < 0 || start >= n || !states[start].module) {
    *error = "the starting state is not loaded";
    return {};
  }
  const Instruction* origin = FindByName(*states[start].module, instruction);
  if (!origin) {
    *error = StrCat("no instruction named '", instruction, "' in state ", states[start].label);
    return {};
  }
  steps[start].name = origin->name();
  steps[start].event = "present";
  int compared = 0;
  const int most = n - 1;
  auto keep_going = [&] { return !progress || progress(++compared, most); };
  // Forward.
  const Instruction* cur = origin;
  for (int i = start; i + 1 < n && cur; ++i) {
    if (!states[i + 1].module) break;
    ModuleDiff d = DiffModules(*states[i].module, *states[i + 1].module);
    if (!keep_going()) {
      *error = "cancelled";
      return {};
    }
    const InstructionDiff* r = RowForA(d, cur);
    if (r && r->kind == DiffKind::kRemoved && r->fused_into && r->fused_as) {
      // Fused away: followed on inside the fusion's computation.
      steps[i + 1].name = r->fused_as->name();
      steps[i + 1].event = StrCat("fused into ", r->fused_into->name());
      cur = r->fused_as;
      continue;
    }
    if (!r || r->kind == DiffKind::kRemoved) {
      steps[i + 1].event = r && r->fused_into ? StrCat("fused into ", r->fused_into->name()) : "removed";
      cur = nullptr;
      break;
    }
    steps[i + 1].name = r->b->name();
    std::string changes = Changes(*r);
    if (r->kind == DiffKind::kChanged && !changes.empty()) {
      steps[i + 1].event = StrCat("changed (", changes, ")");
    } else {
      steps[i + 1].event = "present";
    }
    if (r->a->name() != r->b->name()) StrAppend(&steps[i + 1].event, ", renamed from ", r->a->name());
    cur = r->b;
  }
  // Backward.
  cur = origin;
  for (int i = start; i > 0 && cur; --i) {
    if (!states[i - 1].module) break;
    ModuleDiff d = DiffModules(*states[i - 1].module, *states[i].module);
    if (!keep_going()) {
      *error = "cancelled";
      return {};
    }
    const InstructionDiff* r = RowForB(d, cur);
    if (const InstructionDiff* fused = FusedRowFor(d, cur)) {
      // An instruction of a fused computation that was a top-level one before the fusion.
      steps[i].event = StrCat("fused into ", fused->fused_into->name());
      steps[i - 1].name = fused->a->name();
      steps[i - 1].event = "present";
      cur = fused->a;
      continue;
    }
    if (!r || r->kind == DiffKind::kAdded) {
      steps[i].event = steps[i].event == "present" ? "created" : StrCat("created; ", steps[i].event);
      break;
    }
    steps[i - 1].name = r->a->name();
    steps[i - 1].event = "present";
    cur = r->a;
  }
  return steps;
}

std::string FormatProvenanceText(const std::vector<ProvenanceStep>& steps) {
  std::string out;
  for (const ProvenanceStep& s : steps) {
    StrAppend(&out, s.label, "  ", s.name.empty() ? "-" : s.name, "  ", s.event, "\n");
  }
  return out;
}

}  // namespace hlowb
