#include "replay/bisect/pass_bisect.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

// Why `module`'s entry parameters cannot take `arguments`, or "" when they can.
std::string ParameterMismatch(const Module& module, const std::vector<Literal>& arguments) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return "no entry computation";
  if (entry->parameter_count() != static_cast<int>(arguments.size())) {
    return StrCat("the entry takes ", entry->parameter_count(), " parameters, the baseline ",
                  arguments.size());
  }
  for (int i = 0; i < entry->parameter_count(); ++i) {
    const Instruction* p = entry->parameter(i);
    if (p == nullptr) return StrCat("parameter ", i, " is missing");
    const Shape& a = arguments[i].shape();
    if (!p->shape().Compatible(a)) {
      return StrCat("parameter ", i, " (%", p->name(), ") is ", PrintShape(p->shape(), false),
                    ", the baseline's ", PrintShape(a, false));
    }
  }
  return "";
}

std::string Summary(const ComparisonReport& c) {
  int64_t elements = 0;
  double max_abs = 0, max_rel = 0;
  for (const OutputComparison& o : c.outputs) {
    elements += o.element_count;
    max_abs = std::max(max_abs, o.max_abs_error);
    max_rel = std::max(max_rel, o.max_rel_error);
  }
  std::ostringstream s;
  s << c.total_mismatches() << " of " << elements << " elements mismatch, max abs error "
    << std::setprecision(4) << max_abs << ", max rel error " << max_rel;
  return s.str();
}

}  // namespace

std::string_view BisectVerdictName(BisectVerdict verdict) {
  switch (verdict) {
    case BisectVerdict::kBaseline: return "baseline";
    case BisectVerdict::kUnchanged: return "unchanged";
    case BisectVerdict::kMatch: return "MATCH";
    case BisectVerdict::kDiverged: return "DIVERGED";
    case BisectVerdict::kSkipped: return "SKIPPED";
    case BisectVerdict::kFailed: return "FAILED";
    case BisectVerdict::kNotRun: return "not run";
  }
  return "?";
}

std::string PassBisectReport::ToString() const {
  std::ostringstream out;
  out << "pass bisection of module " << module_name << ": " << rows.size()
      << " states from before_optimizations, " << states_run << " replayed; arguments from "
      << argument_source << "; bounds abs " << bounds.abs << ", rel " << bounds.rel << "\n";
  size_t width = 0;
  for (const PassBisectRow& r : rows) width = std::max(width, r.label.size());
  for (const PassBisectRow& r : rows) {
    out << "  " << std::left << std::setw(static_cast<int>(width)) << r.label << "  "
        << BisectVerdictName(r.verdict);
    if (!r.detail.empty()) out << ": " << r.detail;
    out << "\n";
  }
  if (first_divergent >= 0) {
    const PassBisectRow& r = rows[first_divergent];
    out << "first divergence: after pass " << (r.pass.empty() ? r.label : r.pass);
    if (!r.pipeline.empty()) out << " (pipeline " << r.pipeline << ")";
    out << " [" << r.label << "]: " << r.detail << "\n";
    if (r.comparison) out << "  " << r.comparison->ToString();
  } else {
    out << "no state diverged from before_optimizations beyond the bounds\n";
  }
  return out.str();
}

absl::StatusOr<PassBisectReport> BisectPasses(const std::vector<TimelineInput>& states,
                                              int baseline, const PassBisectOptions& options,
                                              const CancelToken* cancel,
                                              const ProgressFn& progress) {
  if (baseline < 0 || baseline >= static_cast<int>(states.size()) ||
      states[baseline].module == nullptr) {
    return absl::InvalidArgumentError(
        "the before_optimizations state is missing or did not load; it is the baseline every "
        "other state is compared with");
  }
  Timeline timeline = BuildTimeline(states);
  ReplayOptions replay = options.replay;
  replay.reference_platform.clear();
  replay.iterations = 1;
  replay.on_instruction = nullptr;

  PassBisectReport report;
  report.module_name = states[baseline].module->name();
  report.bounds = replay.bounds;

  ReplaySession base_session(*states[baseline].module, replay, options.inputs);
  absl::StatusOr<ReplayReport> base = base_session.Run(cancel);
  if (!base.ok()) {
    return absl::Status(base.status().code(), StrCat("baseline ", states[baseline].label, ": ",
                                                     std::string(base.status().message())));
  }
  const std::vector<Literal>& arguments = base->iterations[0].arguments;
  const Literal& expected = base->iterations[0].result;
  report.argument_source = base->iterations[0].argument_source;
  report.states_run = 1;
  PassBisectRow first;
  first.label = states[baseline].label;
  first.verdict = BisectVerdict::kBaseline;
  report.rows.push_back(std::move(first));

  const int total = static_cast<int>(states.size()) - baseline - 1;
  for (int i = baseline + 1; i < static_cast<int>(states.size()); ++i) {
    if (cancel != nullptr && cancel->IsCancelled()) {
      return absl::CancelledError("pass bisection cancelled");
    }
    if (progress) progress(i - baseline, total, states[i].label);
    PassBisectRow row;
    row.label = states[i].label;
    row.pipeline = states[i].pipeline;
    row.pass = states[i].pass;
    const bool diverged_before = report.first_divergent >= 0;
    if (diverged_before && options.stop_at_first) {
      row.verdict = BisectVerdict::kNotRun;
    } else if (states[i].module == nullptr) {
      row.verdict = BisectVerdict::kFailed;
      row.detail = StrCat("did not load: ", states[i].error);
    } else if (!timeline.rows[i].changed) {
      row.verdict = BisectVerdict::kUnchanged;
      row.detail = "same program as the state before it";
    } else if (std::string why = ParameterMismatch(*states[i].module, arguments); !why.empty()) {
      row.verdict = BisectVerdict::kSkipped;
      row.detail = StrCat("cannot take the baseline's arguments: ", why);
    } else {
      ReplayInputs inputs;
      inputs.snapshot_arguments = arguments;
      inputs.snapshot_result = expected;
      ReplayOptions run_options = replay;
      run_options.force_fake_data = false;
      ReplaySession session(*states[i].module, run_options, std::move(inputs));
      absl::StatusOr<ReplayReport> run = session.Run(cancel);
      ++report.states_run;
      if (!run.ok()) {
        if (absl::IsCancelled(run.status())) return run.status();
        row.verdict = BisectVerdict::kFailed;
        row.detail = std::string(run.status().message());
      } else {
        const ComparisonReport& cmp = *run->iterations[0].comparison;
        std::string shape_error;
        for (const OutputComparison& o : cmp.outputs) {
          if (!o.error.empty() && shape_error.empty()) shape_error = o.error;
        }
        if (!shape_error.empty()) {
          row.verdict = BisectVerdict::kSkipped;
          row.detail = StrCat("result cannot be compared with the baseline's: ", shape_error);
        } else if (cmp.ok()) {
          row.verdict = BisectVerdict::kMatch;
        } else {
          row.verdict = BisectVerdict::kDiverged;
          row.detail = Summary(cmp);
          row.comparison = cmp;
          if (!diverged_before) report.first_divergent = static_cast<int>(report.rows.size());
        }
      }
    }
    report.rows.push_back(std::move(row));
  }
  return report;
}

}  // namespace hlowb
