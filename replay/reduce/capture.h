// Values the reducer feeds to the parameters it creates: what an instruction computed in a run
// of the module it replaces, so that the part of the module that is kept sees the data it saw
// in the full run (as per-instruction isolation does, see replay/compare/isolation.h). Runs are
// on the interpreter, whose instructions are the module's own (a compiled platform runs an
// optimised copy), with the replay options' custom calls, host transfers and seed.
//
// Not here: deciding what to capture (reducer.cc) or running candidates (failure.h).
#ifndef HLOWB_REPLAY_REDUCE_CAPTURE_H_
#define HLOWB_REPLAY_REDUCE_CAPTURE_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/session.h"

namespace hlowb::reduce {

struct CapturedValues {
  std::unordered_map<std::string, Literal> values;  // by instruction name
  uint64_t bytes = 0;
  // How the run ended: values computed before an error are still captured.
  absl::Status run_status;
};

// Values of the entry computation's instructions in one run of `module` on `arguments`: those
// named in `wanted` (every one when null), while they fit in `budget_bytes`. The run stops
// early once every wanted value is in.
CapturedValues CaptureEntryValues(const Module& module, const std::vector<Literal>& arguments,
                                  const ReplayOptions& replay,
                                  const std::unordered_set<std::string>* wanted,
                                  uint64_t budget_bytes, const CancelToken* cancel);

// The arguments computation `computation` was called with when its instruction `instruction`
// first produced a NaN or Inf (the loop state of that iteration, for a while body). NotFound
// when that never happens.
absl::StatusOr<std::vector<Literal>> CaptureAtFirstNonfinite(
    const Module& module, const std::vector<Literal>& arguments, const ReplayOptions& replay,
    const std::string& computation, const std::string& instruction, const CancelToken* cancel);

// Keeps, during one run, the values each computation's current execution still needs, so that
// when the run stops at an instruction (a NaN/Inf search does at its finding) the values of its
// operands and the arguments of its computation are at hand. A value is held until its last
// user in that execution has run — for good when that user's result holds a NaN or Inf — and
// parameters for the whole execution. Events of instructions that are not this module's (a
// compiled platform's) are ignored, and so are computations applied to scalars (reducers,
// comparators), which run once per element. Values that do not fit in the budget are not held.
class LiveValueHolder {
 public:
  LiveValueHolder(const Module& module, uint64_t budget_bytes);
  LiveValueHolder(const LiveValueHolder&) = delete;
  LiveValueHolder& operator=(const LiveValueHolder&) = delete;

  // For ReplayOptions::on_instruction (or FindNonfinite's). The holder must outlive the run.
  std::function<void(const InstructionProfile&)> Hook();
  // The value `instruction` of `computation` had in the computation's latest execution.
  const Literal* Value(const std::string& computation, const std::string& instruction) const;
  // The arguments of the latest execution of `computation`, when every one is held.
  std::optional<std::vector<Literal>> Arguments(const std::string& computation) const;

 private:
  struct Frame {
    std::unordered_map<const Instruction*, Literal> values;
    std::unordered_map<const Instruction*, int> remaining;  // uses still to run
    std::unordered_set<const Instruction*> seen;            // in this execution
    std::vector<const Instruction*> release;  // after the next event of the computation
  };
  void OnEvent(const InstructionProfile& p);
  void Drop(Frame* f, const Instruction* instr);

  const Module& module_;
  uint64_t budget_bytes_;
  uint64_t bytes_ = 0;
  std::unordered_map<const Computation*, std::unordered_map<const Instruction*, int>> uses_;
  std::unordered_map<const Computation*, Frame> frames_;
  std::mutex mu_;
};

// Bytes a literal holds (tuple elements included).
uint64_t LiteralBytes(const Literal& literal);

}  // namespace hlowb::reduce

#endif  // HLOWB_REPLAY_REDUCE_CAPTURE_H_
