// Automatic reduction of a failing module, after XLA's hlo_bisect and C-Reduce: shrinks the
// module while the failure persists (failure.h says what "the same failure" means for each
// kind) and returns the smallest module found, with the arguments that make it fail.
//
// How it shrinks, cheapest and biggest wins first, each step kept only when the candidate
// still fails the same way:
//   1. Cut at the failure: the entry's root becomes the instruction where the failure starts.
//      nonfinite: the first instruction that introduced the NaN/Inf; when it lives in a
//      called computation (a loop body at iteration k, a fusion), that computation becomes the
//      entry, its parameters taking the values they had at that moment. mismatch against a
//      reference module: the first entry instruction whose value differs from the reference's
//      value of the same name. mismatch between platforms: the first entry value that differs
//      when every value is an output. error: the instruction the message names. Otherwise (and
//      when those fail): a binary search over prefixes of the entry.
//   2. Cut below it: the module above a height of the root's operand graph is replaced by
//      parameters (the smallest height that still fails).
//   3. To a fixpoint, ddmin-style (large chunks first, halving when a chunk does not keep the
//      failure): inline calls, pick a conditional's branch, unfuse fusions, lower loop trip
//      counts whose bound is a constant, replace entry instructions by parameters, replace
//      instructions (in any computation) by zeros, bypass instructions whose operand has their
//      shape; after every step dead instructions, unused parameters and uncalled computations
//      go.
// New parameters take the value the instruction had in a run of the module they were cut from
// (captured on the interpreter; capture.h), so the kept part sees its real data; where no value
// was captured (over the capture budget, or in crash reductions, where a capture run would
// crash) they take seeded fake data. Shapes are not shrunk.
//
// The result is verified at the end: printed, parsed back and run again with its arguments.
//
// Threading: synchronous; call from a worker thread. Progress goes to the callback (on the
// calling thread); `cancel` stops it between candidates (and stops a candidate's run), returning
// the smallest module so far. Crash reductions (and run_in_child) fork for every candidate:
// from a process with many threads of its own (the desktop window), run the reducer in the
// replay worker process rather than in-process.
//
// Arguments come from the first replay iteration; multi-device modules reduce with the
// session's device handling, but captured values come from a single-device interpreter run.
#ifndef HLOWB_REPLAY_REDUCE_REDUCER_H_
#define HLOWB_REPLAY_REDUCE_REDUCER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/reduce/failure.h"
#include "replay/session.h"

namespace hlowb {

struct ReduceOptions {
  FailureKind until = FailureKind::kNonfinite;
  // The platforms (mismatch compares platform with reference_platform), error bounds, seed,
  // custom calls, host transfers and cpu compile options. Candidates run one iteration.
  ReplayOptions replay;
  // The original's arguments: the literals file's first iteration, else the snapshot's, else
  // fake data from replay.seed (replay.force_fake_data forces that).
  ReplayInputs inputs;
  // mismatch without a reference platform: the module whose values are right. Its entry takes
  // the same arguments; a candidate's root must have the value the reference module's
  // instruction of the same name has (a tuple of values for a tuple of them). Must outlive
  // the call.
  const Module* reference_module = nullptr;
  // Wall-clock limit of the whole reduction; the smallest module so far is returned then.
  double time_limit_seconds = 300;
  // Limit per candidate run; 0: four times the run time of the smallest failing module so far
  // plus half a second (a candidate that takes longer is taken not to fail).
  double candidate_timeout_seconds = 0;
  // Run every candidate in a forked child (crash reductions always do).
  bool run_in_child = false;
  // The most bytes of captured values held at once.
  uint64_t capture_budget_bytes = uint64_t{2} << 30;
};

struct ReduceProgress {
  std::string phase;  // "cut", "extract", "parameters", ...
  int64_t original_instructions = 0;
  int64_t instructions = 0;  // of the smallest failing module so far
  int64_t candidates = 0;    // tried so far
  int64_t accepted = 0;
  double elapsed_seconds = 0;
};
using ReduceProgressFn = std::function<void(const ReduceProgress&)>;

struct ReduceStep {
  std::string phase;
  int64_t instructions = 0;  // after the step
  double elapsed_seconds = 0;
};

struct ReduceResult {
  std::unique_ptr<Module> module;  // the smallest module that fails the same way
  std::vector<Literal> arguments;  // its arguments, one per entry parameter
  // mismatch against a reference module: the value the reduced module's root should have.
  std::optional<Literal> expected_result;
  // Whether `hlowb replay` with the same seed makes these arguments by itself (fake data), so
  // no literals file is needed to reproduce the failure.
  bool arguments_are_fake_data = false;
  reduce::FailureSignature signature;
  std::string failure;          // how the original fails
  std::string reduced_failure;  // how the reduced module fails, from the final check
  bool verified = false;        // the final check (print, parse, run) shows the same failure
  int64_t original_instructions = 0;
  int64_t reduced_instructions = 0;
  double seconds = 0;
  int64_t candidates = 0;
  int64_t accepted = 0;
  std::string stopped;  // "fixpoint", "time limit", "cancelled"
  std::vector<ReduceStep> steps;
  std::vector<std::string> notes;  // what could not be done, and why
};

// Reduces `module`. InvalidArgument for options that do not fit (mismatch with neither a
// reference platform nor a reference module, both, arguments that do not fit);
// FailedPrecondition when the original does not fail the way `options.until` asks (the
// message says what happened instead); Cancelled when cancelled before the original was run.
absl::StatusOr<ReduceResult> ReduceModule(const Module& module, const ReduceOptions& options,
                                          const ReduceProgressFn& progress = nullptr,
                                          const CancelToken* cancel = nullptr);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_REDUCE_REDUCER_H_
