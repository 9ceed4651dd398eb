#include "core/passes/pass_pipeline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/support/strings.h"
#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/module_dumper.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb {

bool PassContext::ConsumeFuel(std::string_view pass_name) {
  auto it = fuel_used_.find(pass_name);
  if (it == fuel_used_.end()) it = fuel_used_.emplace(std::string(pass_name), 0).first;
  auto limit = options_.fuel.find(std::string(pass_name));
  if (limit != options_.fuel.end() && it->second >= limit->second) {
    fuel_exhausted_ = true;
    return false;
  }
  ++it->second;
  return true;
}

int64_t PassContext::FuelUsed(std::string_view pass_name) const {
  auto it = fuel_used_.find(pass_name);
  return it == fuel_used_.end() ? 0 : it->second;
}

PassPipeline& PassPipeline::AddFixedPoint(std::string name) {
  PassPipeline& p = AddPass<PassPipeline>(std::move(name));
  p.set_fixed_point(true);
  return p;
}

PassPipeline& PassPipeline::AddSubPipeline(std::string name) {
  return AddPass<PassPipeline>(std::move(name));
}

bool PassPipeline::Enabled(const HloPass& pass, const PassContext& context) const {
  const PassOptions& o = context.options();
  std::string_view n = pass.name();
  if (std::find(o.disabled_passes.begin(), o.disabled_passes.end(), n) !=
      o.disabled_passes.end()) {
    return false;
  }
  if (!pass.IsPipeline() && !o.enabled_passes_only.empty() &&
      std::find(o.enabled_passes_only.begin(), o.enabled_passes_only.end(), n) ==
          o.enabled_passes_only.end()) {
    return false;
  }
  return true;
}

namespace {

// The first error of the verifier, or OK.
absl::Status VerifyAfter(const Module& module, std::string_view pipeline, std::string_view pass,
                         const Module* before, ModuleDumper* dumper) {
  std::vector<VerifierDiagnostic> diags = VerifyModule(module);
  for (const VerifierDiagnostic& d : diags) {
    if (d.severity != VerifierDiagnostic::Severity::kError) continue;
    std::string where;
    if (before) {
      std::string text = PrintModule(*before);
      std::string file;
      if (dumper && dumper->enabled()) {
        absl::Status st = dumper->DumpFile(StrCat("before_", pass, ".broken.txt"), text);
        if (st.ok() && !dumper->written().empty()) file = dumper->written().back();
      } else {
        file = StrCat(std::filesystem::temp_directory_path().string(), "/hlowb_before_", pass, "_", module.name(), ".txt");
        if (!WriteStringToFile(file, text).ok()) file.clear();
      }
      if (!file.empty()) where = StrCat(" (the module before the pass: ", file, ")");
    }
    return absl::InternalError(StrCat("pass '", pass, "' in pipeline '", pipeline,
                                            "' broke the module: ", d.ToString(), where));
  }
  return absl::OkStatus();
}

// The name of the next pass that will run after index i, or "pipeline-end".
std::string NextName(const std::vector<std::unique_ptr<HloPass>>& passes, size_t i,
                     const std::vector<bool>& enabled) {
  for (size_t j = i + 1; j < passes.size(); ++j) {
    if (enabled[j]) return std::string(passes[j]->name());
  }
  return "pipeline-end";
}

}  // namespace

absl::StatusOr<bool> PassPipeline::RunOnce(Module* module, PassContext& context, int iteration,
                                           std::vector<std::string>* changed_passes) {
  std::vector<bool> enabled(passes_.size());
  for (size_t i = 0; i < passes_.size(); ++i) enabled[i] = Enabled(*passes_[i], context);
  ModuleDumper* dumper = observer_.dumper;
  if (dumper && iteration == 0) {
    std::string first = NextName(passes_, static_cast<size_t>(-1), enabled);
    if (dumper->WantsPassDump(name_, "pipeline-start", first, true)) {
      absl::Status st = dumper->DumpPassStep(*module, name_, "pipeline-start", first);
      if (!st.ok()) return st;
    }
  }
  bool changed = false;
  for (size_t i = 0; i < passes_.size(); ++i) {
    if (!enabled[i]) continue;
    if (context.cancelled()) return absl::CancelledError("compilation cancelled");
    HloPass& pass = *passes_[i];
    if (auto* sub = dynamic_cast<PassPipeline*>(&pass)) {
      PipelineObserver inner = sub->observer_;
      if (!inner.records) inner.records = observer_.records;
      if (!inner.dumper) inner.dumper = observer_.dumper;
      if (!inner.after_change) inner.after_change = observer_.after_change;
      sub->observer_ = inner;
    }
    std::unique_ptr<Module> before;
    const bool verify = context.options().verify_after_each_pass && !pass.IsPipeline();
    if (verify) before = CloneModule(*module);
    const int64_t fuel_before = context.FuelUsed(pass.name());
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> result = pass.Run(module, context);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!result.ok()) {
      if (pass.IsPipeline()) return result.status();
      return absl::Status(result.status().code(),
                          StrCat("pass '", pass.name(), "' in pipeline '", name_,
                                       "': ", result.status().message()));
    }
    const bool pass_changed = *result;
    changed |= pass_changed;
    if (pass_changed && changed_passes) changed_passes->push_back(std::string(pass.name()));
    PassRecord record;
    if (!pass.IsPipeline()) {
      int64_t count = 0;
      for (const auto& c : module->computations()) count += c->instruction_count();
      record = {name_, std::string(pass.name()), pass_changed, seconds,
                iteration, count, context.FuelUsed(pass.name()) - fuel_before};
      if (observer_.records) observer_.records->push_back(record);
    }
    if (verify && pass_changed) {
      absl::Status st = VerifyAfter(*module, name_, pass.name(), before.get(), dumper);
      if (!st.ok()) return st;
    }
    if (observer_.after_change && pass_changed && !pass.IsPipeline()) {
      absl::Status st = observer_.after_change(*module, record);
      if (!st.ok()) return st;
    }
    if (dumper) {
      // Like XLA, a nested pipeline also dumps in its parent after it ends.
      std::string next = NextName(passes_, i, enabled);
      if (dumper->WantsPassDump(name_, pass.name(), next, pass_changed)) {
        absl::Status st = dumper->DumpPassStep(*module, name_, pass.name(), next);
        if (!st.ok()) return st;
      }
    }
  }
  return changed;
}

absl::StatusOr<bool> PassPipeline::Run(Module* module, PassContext& context) {
  if (!fixed_point_) return RunOnce(module, context, 0, nullptr);
  const int limit = std::max(1, context.options().fixed_point_max_iterations);
  bool any = false;
  for (int iteration = 0; iteration < limit; ++iteration) {
    std::vector<std::string> changed_passes;
    absl::StatusOr<bool> changed = RunOnce(module, context, iteration, &changed_passes);
    if (!changed.ok()) return changed.status();
    if (!*changed) return any;
    any = true;
    if (iteration + 1 == limit) {
      std::sort(changed_passes.begin(), changed_passes.end());
      changed_passes.erase(std::unique(changed_passes.begin(), changed_passes.end()),
                           changed_passes.end());
      return absl::InternalError(StrCat(
          "fixed-point pipeline '", name_, "' still changed the module after ", limit,
          " iterations; passes that kept changing it: ", absl::StrJoin(changed_passes, ", ")));
    }
  }
  return any;
}

std::vector<std::string> ListPassNames(const PassPipeline& pipeline) {
  std::vector<std::string> out;
  std::function<void(const PassPipeline&)> walk = [&](const PassPipeline& p) {
    for (const auto& pass : p.passes()) {
      if (auto* sub = dynamic_cast<const PassPipeline*>(pass.get())) {
        walk(*sub);
      } else if (std::find(out.begin(), out.end(), pass->name()) == out.end()) {
        out.push_back(std::string(pass->name()));
      }
    }
  };
  walk(pipeline);
  return out;
}

}  // namespace hlowb
