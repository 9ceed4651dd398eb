// The embedded compiler's pass interface. A pass rewrites a module in place and reports whether
// it changed anything; a pipeline (pass_pipeline.h) runs passes in order, verifies, times and
// dumps them. Passes never print, never abort on user input (they return a Status naming the
// instruction), and take every option through PassContext so that a pipeline run can be
// repeated exactly (bisection, fuel).
//
// Deliberately not here: pass registration by name (pass_registry.h) and the cpu/gpu pass
// lists (pipelines.h).
#ifndef HLOWB_CORE_PASSES_HLO_PASS_H_
#define HLOWB_CORE_PASSES_HLO_PASS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb {

// Evaluates one instruction whose operands are all known literals (constant folding). core
// cannot evaluate HLO itself (the evaluator lives in replay/), so whoever builds the pipeline
// passes the evaluator in; without one, constant folding does nothing.
using ConstantEvaluator = std::function<absl::StatusOr<Literal>(
    const Instruction& instruction, const std::vector<const Literal*>& operands)>;

// What the target looks like to target-dependent passes.
struct TargetInfo {
  std::string platform = "cpu";  // "cpu" or "gpu"
  // Element types the target computes natively for dots/convolutions; others are upcast by
  // operand upcasting (e.g. the CPU computes bf16 dots in f32).
  bool native_bf16_dot = false;
  bool native_f16_dot = false;
  int64_t pointer_size = 8;
};

// Options shared by every pass of a run.
struct PassOptions {
  // --xla_disable_hlo_passes: passes (by name) that are skipped.
  std::vector<std::string> disabled_passes;
  // --xla_enable_hlo_passes_only: when not empty, only these passes run.
  std::vector<std::string> enabled_passes_only;
  // --xla_fuel=pass=N,...: the pass may make at most N rewrites; the rest of its work is
  // skipped (for bisecting which rewrite breaks a module).
  std::map<std::string, int64_t> fuel;
  // Verify the module after every pass (--xla_verify_after_passes style); on by default in
  // debug builds.
  bool verify_after_each_pass =
#ifdef NDEBUG
      false;
#else
      true;
#endif
  // Constant folding: largest result (in elements) a folded constant may have.
  int64_t constant_folding_max_elements = 45 * 1000 * 1000 / 4;
  // Fixed-point sub-pipelines stop with an error naming the pass that keeps changing after
  // this many iterations.
  int fixed_point_max_iterations = 25;
};

class PassContext {
 public:
  PassContext() = default;
  explicit PassContext(PassOptions options) : options_(std::move(options)) {}

  const PassOptions& options() const { return options_; }
  PassOptions& mutable_options() { return options_; }
  const TargetInfo& target() const { return target_; }
  void set_target(TargetInfo t) { target_ = std::move(t); }
  const ConstantEvaluator& evaluator() const { return evaluator_; }
  void set_evaluator(ConstantEvaluator e) { evaluator_ = std::move(e); }
  const CancelToken* cancel() const { return cancel_; }
  void set_cancel(const CancelToken* c) { cancel_ = c; }
  bool cancelled() const { return cancel_ && cancel_->IsCancelled(); }

  // Called by a pass before each individual rewrite. False when the pass's fuel (if limited)
  // is spent: the pass must then leave that rewrite (and any later one) undone.
  bool ConsumeFuel(std::string_view pass_name);
  // Rewrites a pass has made so far (counted by ConsumeFuel), for reports.
  int64_t FuelUsed(std::string_view pass_name) const;
  // True when a fuel limit was hit during the run.
  bool fuel_exhausted() const { return fuel_exhausted_; }

 private:
  PassOptions options_;
  TargetInfo target_;
  ConstantEvaluator evaluator_;
  const CancelToken* cancel_ = nullptr;
  std::map<std::string, int64_t, std::less<>> fuel_used_;
  bool fuel_exhausted_ = false;
};

class HloPass {
 public:
  virtual ~HloPass() = default;
  // XLA's name for the pass ("algsimp", "dce", "cse", ...): used in dumps and options.
  virtual std::string_view name() const = 0;
  // Rewrites `module`; true if anything changed. An error leaves the module in whatever state
  // the pass reached (the pipeline reports it with the state before the pass).
  virtual absl::StatusOr<bool> Run(Module* module, PassContext& context) = 0;
  // Pipelines contain passes; they report as such so that options and dumps treat them apart.
  virtual bool IsPipeline() const { return false; }
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_PASS_H_
