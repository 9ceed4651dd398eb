// The embedded compiler's HLO half as one call: the `cpu` and `gpu` pipelines built from the
// passes in XLA's order, or any list of registered passes; then scheduling and buffer
// assignment; with XLA-named dumps. Also the registry of passes by XLA name, for
// `hlowb opt --passes=...` and `--list-passes`.
//
// Deliberately not here: code generation (replay/codegen) and evaluation (replay/evaluator; the
// constant folder's evaluator comes in through CompileOptions).
#ifndef HLOWB_CORE_PASSES_PIPELINES_H_
#define HLOWB_CORE_PASSES_PIPELINES_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/passes/hlo_pass.h"
#include "core/passes/module_dumper.h"
#include "core/passes/pass_pipeline.h"

namespace hlowb {

// The pass names `--passes=` accepts, sorted.
std::vector<std::string> RegisteredPassNames();
// A pass by its XLA name, configured for `platform` ("cpu" or "gpu"); NotFound naming the
// accepted names otherwise.
absl::StatusOr<std::unique_ptr<HloPass>> MakePassByName(std::string_view name,
                                                         std::string_view platform);

// The full HLO pipeline of a target, as XLA's compiler for it runs it (without SPMD
// partitioning): "cpu" or "gpu".
absl::StatusOr<std::unique_ptr<PassPipeline>> BuildTargetPipeline(std::string_view platform);
// A pipeline named "custom" running `passes` (registered names) once each, in order.
absl::StatusOr<std::unique_ptr<PassPipeline>> BuildCustomPipeline(
    const std::vector<std::string>& passes, std::string_view platform);

TargetInfo TargetInfoFor(std::string_view platform);

struct CompileOptions {
  std::string platform = "cpu";
  // Empty: the target's pipeline. Else exactly these passes, in order.
  std::vector<std::string> passes;
  PassOptions pass_options;
  DumpOptions dump_options;
  ConstantEvaluator evaluator;
  const CancelToken* cancel = nullptr;
  // Schedule and assign buffers after the passes (the target pipeline always does; a custom
  // pass list only when asked).
  bool assign_buffers = true;
  // Called after every pass that changed the module (see PipelineObserver::after_change).
  std::function<absl::Status(const Module& module, const PassRecord& record)> after_change;
};

struct CompileResult {
  std::vector<PassRecord> records;
  double pass_seconds = 0;
  double total_seconds = 0;
  // XLA's text forms of the buffer assignment and the memory-usage report (empty when buffers
  // were not assigned).
  std::string buffer_assignment_text;
  std::string memory_usage_report;
  int64_t total_allocation_bytes = 0;
  int64_t kernel_count = 0;
  std::vector<std::string> dump_files;
};

// Verifies `module` (refusing it with every error diagnostic when it does not verify), then
// runs the pipeline in place, then schedules and assigns buffers. Dumps
// `before_optimizations`, the per-pass states asked for, `<platform>_after_optimizations`
// and its buffer assignment and memory-usage report when dumping is on.
absl::StatusOr<CompileResult> CompileModule(Module* module, const CompileOptions& options);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_PIPELINES_H_
