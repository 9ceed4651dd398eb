#include "replay/compare/nonfinite.h"

#include <cstdio>
#include <functional>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "replay/backends/cpu/cpu_backend.h"

namespace hlowb {

bool AppliesScalarComputation(Opcode op) {
  switch (op) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kMap:
    case Opcode::kSort:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kCustomCall: return true;
    default: return false;
  }
}

namespace {

// (device, instruction): multi-device runs report every device's events.
using DeviceInstr = std::pair<int64_t, const Instruction*>;
struct DeviceInstrHash {
  size_t operator()(const DeviceInstr& k) const {
    return std::hash<const void*>()(k.second) * 31 + std::hash<int64_t>()(k.first);
  }
};

struct CallSite {
  const Instruction* caller = nullptr;
  std::string role;
};

std::string RoleOf(const Instruction& caller, size_t k) {
  switch (caller.opcode()) {
    case Opcode::kWhile: return k == 0 ? "while condition" : "while body";
    case Opcode::kFusion: return "fused computation";
    case Opcode::kConditional: return StrCat("branch ", k);
    case Opcode::kAsyncStart: return "async computation";
    default: return "called computation";
  }
}

std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

std::string Stats(const LiteralStatistics& s) {
  std::string out = StrCat(s.elements, " element", s.elements == 1 ? "" : "s", ", ", s.nan_count,
                           " NaN, ", s.inf_count, " Inf");
  if (s.finite_count > 0) {
    StrAppend(&out, "; finite: min ", Num(s.min), ", max ", Num(s.max), ", mean ", Num(s.mean));
  } else {
    StrAppend(&out, "; no finite values");
  }
  return out;
}

}  // namespace

namespace {

// The finding's lines: what, where, the result and each operand.
void AppendFinding(const NonfiniteFinding& f, const std::string& argument_source,
                   const std::string& compiled_platform, std::string* out) {
  if (f.entry_parameter) {
    StrAppend(out, f.introduced, " in argument %", f.instruction, " (", f.shape,
              ") of the entry computation, replay iteration ", f.replay_iteration + 1,
              " (arguments from ", argument_source, ")\n");
  } else {
    StrAppend(out, f.introduced, " introduced by %", f.instruction, " (", f.opcode, ") ", f.shape,
              " in replay iteration ", f.replay_iteration + 1,
              f.device != 0 ? StrCat(", device ", f.device) : std::string(), " (arguments from ",
              argument_source, ")\n");
  }
  if (!compiled_platform.empty()) {
    StrAppend(out, "  where: computation %", f.computation, " of the module as the ",
              compiled_platform, " platform compiled it\n");
  } else if (f.context.empty()) {
    StrAppend(out, "  where: entry computation %", f.computation, "\n");
  } else {
    StrAppend(out, "  where (outermost first):\n");
    for (const NonfiniteContext& c : f.context) {
      StrAppend(out, "    %", c.caller, " (", c.caller_opcode, ") -> ", c.role, " %",
                c.computation);
      if (c.loop_iteration >= 0) StrAppend(out, ", iteration ", c.loop_iteration);
      StrAppend(out, "\n");
    }
  }
  StrAppend(out, "  result: ", Stats(f.result), "\n");
  for (size_t i = 0; i < f.operands.size(); ++i) {
    const NonfiniteOperand& o = f.operands[i];
    StrAppend(out, "  operand ", i, " %", o.name, " ", o.shape, ": ", Stats(o.statistics), "\n");
  }
}

}  // namespace

std::string NonfiniteReport::ToString() const {
  std::string out;
  if (!found) {
    StrAppend(&out, "no NaN or Inf appeared in any instruction's result (", iterations_run,
              " iteration", iterations_run == 1 ? "" : "s", ", arguments from ", argument_source,
              ")\n");
    return out;
  }
  StrAppend(&out, "first non-finite value",
            compiled_platform.empty() ? std::string() : StrCat(" on ", compiled_platform), ": ");
  AppendFinding(finding, argument_source, compiled_platform, &out);
  if (interpreter_checked) {
    if (interpreter_finding) {
      StrAppend(&out, "in the module's own instructions (the interpreter, same arguments): ");
      AppendFinding(*interpreter_finding, argument_source, "", &out);
    } else {
      StrAppend(&out, "the interpreter computes no NaN or Inf up to that iteration on the same "
                      "arguments: the ", compiled_platform, " platform differs from it there "
                      "(compare them with --isolate_instructions)\n");
    }
  }
  return out;
}

absl::StatusOr<NonfiniteReport> FindNonfinite(const Module& module, ReplayOptions options,
                                              ReplayInputs inputs, const CancelToken* cancel) {
  NonfiniteReport report;
  report.module_name = module.name();
  // Where the arguments come from, by the session's rule (see session.h).
  const bool argument_mode = !options.hlo_argument_mode.empty();
  const bool from_literals =
      !argument_mode && !options.force_fake_data && !inputs.literal_iterations.empty();
  if (argument_mode) {
    report.argument_source = StrCat("--hlo_argument_mode=", options.hlo_argument_mode);
  } else if (from_literals) {
    report.argument_source = "the literals file";
  } else if (!options.force_fake_data && inputs.snapshot_arguments.has_value()) {
    report.argument_source = "snapshot";
  } else {
    report.argument_source =
        StrCat("fake data (seed ", options.seed,
               options.use_large_float_range ? ", large float range" : "", ")");
  }

  // Who calls each computation, and which computations are applied to scalars.
  std::unordered_map<const Computation*, CallSite> callers;
  std::unordered_set<const Computation*> scalar_applied;
  for (const auto& comp : module.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      const auto& called = instr->called_computations();
      for (size_t k = 0; k < called.size(); ++k) {
        if (called[k] == nullptr) continue;
        callers.emplace(called[k], CallSite{instr, RoleOf(*instr, k)});
        if (AppliesScalarComputation(instr->opcode())) scalar_applied.insert(called[k]);
      }
    }
  }
  // Whatever a scalar computation calls is judged with it. Callers come after callees in
  // definition order, so a backward pass settles chains.
  for (auto it = module.computations().rbegin(); it != module.computations().rend(); ++it) {
    auto site = callers.find(it->get());
    if (site != callers.end() && scalar_applied.count(site->second.caller->parent()) > 0) {
      scalar_applied.insert(it->get());
    }
  }

  std::mutex mu;
  std::unordered_map<DeviceInstr, LiteralStatistics, DeviceInstrHash> latest;
  // Condition evaluations per while instruction (and device): the current loop iteration.
  std::unordered_map<DeviceInstr, int64_t, DeviceInstrHash> condition_runs;
  std::optional<NonfiniteFinding> finding;
  int max_iteration = -1;
  CancelToken stop;

  options.reference_platform.clear();
  std::function<void(const InstructionProfile&)> watcher = std::move(options.on_instruction);
  options.instruction_statistics = true;
  options.on_instruction = [&, watcher](const InstructionProfile& p) {
    std::lock_guard<std::mutex> lock(mu);
    if (finding) return;
    if (watcher) watcher(p);
    if (cancel != nullptr && cancel->IsCancelled()) {
      stop.Cancel();
      return;
    }
    const Instruction* instr = p.instruction;
    if (instr == nullptr) return;
    max_iteration = std::max(max_iteration, p.iteration);
    const int64_t device = p.device;
    latest[{device, instr}] = p.statistics;
    const Computation* comp = instr->parent();
    if (comp != nullptr && instr == comp->root()) {
      auto site = callers.find(comp);
      if (site != callers.end() && site->second.role == "while condition") {
        ++condition_runs[{device, site->second.caller}];
      }
    }
    if (instr->opcode() == Opcode::kWhile) condition_runs[{device, instr}] = 0;  // loop done
    if (comp == nullptr || scalar_applied.count(comp) > 0) return;
    if (instr->opcode() == Opcode::kConstant) return;
    const bool entry_parameter = instr->opcode() == Opcode::kParameter && comp == module.entry();
    if (instr->opcode() == Opcode::kParameter && !entry_parameter) return;
    const LiteralStatistics& s = p.statistics;
    if (s.nan_count == 0 && s.inf_count == 0) return;
    bool operand_nan = false, operand_inf = false;
    for (const Instruction* op : instr->operands()) {
      auto it = latest.find({device, op});
      if (it == latest.end()) continue;
      operand_nan = operand_nan || it->second.nan_count > 0;
      operand_inf = operand_inf || it->second.inf_count > 0;
    }
    const bool new_nan = s.nan_count > 0 && !operand_nan;
    const bool new_inf = s.inf_count > 0 && !operand_nan && !operand_inf;
    if (!new_nan && !new_inf) return;

    NonfiniteFinding f;
    f.instruction = instr->name();
    f.opcode = std::string(OpcodeName(instr->opcode()));
    f.shape = PrintShape(instr->shape(), false);
    f.computation = comp->name();
    f.replay_iteration = p.iteration;
    f.device = device;
    f.entry_parameter = entry_parameter;
    f.result = s;
    f.introduced = new_nan && new_inf ? "NaN and Inf" : new_nan ? "NaN" : "Inf";
    for (const Instruction* op : instr->operands()) {
      NonfiniteOperand o;
      o.name = op->name();
      o.shape = PrintShape(op->shape(), false);
      if (auto it = latest.find({device, op}); it != latest.end()) o.statistics = it->second;
      f.operands.push_back(std::move(o));
    }
    const Computation* c = comp;
    for (int guard = 0; c != nullptr && c != module.entry() && guard < 256; ++guard) {
      auto site = callers.find(c);
      if (site == callers.end()) break;
      NonfiniteContext ctx;
      ctx.caller = site->second.caller->name();
      ctx.caller_opcode = std::string(OpcodeName(site->second.caller->opcode()));
      ctx.computation = c->name();
      ctx.role = site->second.role;
      if (site->second.caller->opcode() == Opcode::kWhile) {
        auto runs = condition_runs.find({device, site->second.caller});
        ctx.loop_iteration =
            runs == condition_runs.end() ? 0 : std::max<int64_t>(runs->second - 1, 0);
      }
      f.context.insert(f.context.begin(), std::move(ctx));
      c = site->second.caller->parent();
    }
    finding = std::move(f);
    stop.Cancel();
  };

  const bool compiled = CompilesModule(options.platform);
  std::optional<ReplayOptions> again;
  std::optional<ReplayInputs> again_inputs;
  if (compiled) {
    again = options;
    again->on_instruction = watcher;
    again_inputs = inputs;
  }
  ReplaySession session(module, std::move(options), std::move(inputs));
  absl::StatusOr<ReplayReport> run = session.Run(&stop);
  report.iterations_run = max_iteration + 1;
  if (finding) {
    report.found = true;
    report.finding = std::move(*finding);
    if (from_literals) {
      report.argument_source =
          StrCat("literals file iteration ", report.finding.replay_iteration + 1);
    }
    if (compiled) {
      report.compiled_platform = again->platform;
      report.finding.context.clear();  // the compiled module's computations have no callers map
      again->platform = "interpreter";
      again->iterations = report.finding.replay_iteration + 1;
      absl::StatusOr<NonfiniteReport> local =
          FindNonfinite(module, *std::move(again), *std::move(again_inputs), cancel);
      if (local.ok()) {
        report.interpreter_checked = true;
        if (local->found) report.interpreter_finding = local->finding;
      } else {
        report.warnings.push_back(StrCat("the interpreter could not locate the finding in the "
                                         "module's own instructions: ",
                                         local.status().message()));
      }
    }
    return report;
  }
  if (cancel != nullptr && cancel->IsCancelled()) {
    return absl::CancelledError("NaN/Inf search cancelled");
  }
  if (!run.ok()) return run.status();
  report.warnings = run->warnings;
  report.iterations_run = static_cast<int>(run->iterations.size());
  if (!run->iterations.empty()) report.argument_source = run->iterations[0].argument_source;
  return report;
}

}  // namespace hlowb
