// Runs passes in order, the way XLA's HloPassPipeline does: skips disabled passes, times each
// pass, records whether it changed the module, verifies after each pass when asked (stopping
// with the pass's name, the verifier's diagnostic and the state before the pass), and writes
// per-pass dumps named `NNNN.<pipeline>.after_<pass>.before_<next>`. A fixed-point pipeline
// repeats until nothing changes and fails, naming the passes that kept changing, after the
// iteration limit.
#ifndef HLOWB_CORE_PASSES_PASS_PIPELINE_H_
#define HLOWB_CORE_PASSES_PASS_PIPELINE_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/passes/hlo_pass.h"

namespace hlowb {

class ModuleDumper;

// One pass run, in run order (a fixed-point pipeline's passes appear once per iteration).
struct PassRecord {
  std::string pipeline;
  std::string pass;
  bool changed = false;
  double seconds = 0;
  int iteration = 0;              // fixed-point iteration (0 outside fixed points)
  int64_t instructions_after = 0;  // instructions in the module after the pass
  int64_t fuel_used = 0;           // rewrites counted by ConsumeFuel
};

// Where a pipeline run reports to. Every member is optional.
struct PipelineObserver {
  std::vector<PassRecord>* records = nullptr;
  ModuleDumper* dumper = nullptr;
  // Called after every leaf pass that changed the module (after verification); an error stops
  // the pipeline with it. For checks between passes (e.g. that a pass kept the meaning).
  std::function<absl::Status(const Module& module, const PassRecord& record)> after_change;
};

class PassPipeline : public HloPass {
 public:
  explicit PassPipeline(std::string name) : name_(std::move(name)) {}

  std::string_view name() const override { return name_; }
  bool IsPipeline() const override { return true; }

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }
  void AddPass(std::unique_ptr<HloPass> pass) { passes_.push_back(std::move(pass)); }
  // A sub-pipeline that runs until no pass changes the module.
  PassPipeline& AddFixedPoint(std::string name);
  // A nested pipeline that runs once.
  PassPipeline& AddSubPipeline(std::string name);

  void set_fixed_point(bool v) { fixed_point_ = v; }
  bool fixed_point() const { return fixed_point_; }
  const std::vector<std::unique_ptr<HloPass>>& passes() const { return passes_; }

  void set_observer(PipelineObserver observer) { observer_ = observer; }

  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

 private:
  absl::StatusOr<bool> RunOnce(Module* module, PassContext& context, int iteration,
                               std::vector<std::string>* changed_passes);
  bool Enabled(const HloPass& pass, const PassContext& context) const;

  std::string name_;
  bool fixed_point_ = false;
  std::vector<std::unique_ptr<HloPass>> passes_;
  PipelineObserver observer_;
};

// Every leaf pass name in `pipeline` (depth first, each once), for --list-passes.
std::vector<std::string> ListPassNames(const PassPipeline& pipeline);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_PASS_PIPELINE_H_
