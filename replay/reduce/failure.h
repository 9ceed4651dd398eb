// What "still fails the same way" means to the reducer (reducer.h): the four kinds of failure
// `hlowb reduce --until=` names, the signature that tells one failure from another, and the
// oracle that verifies a candidate module, runs it and says whether it shows the failure.
//
//  * mismatch: the test platform's result differs from the reference platform's beyond the
//    error bounds, or from an expected value the caller supplies (a reference module's value of
//    the same instruction). Any mismatch counts.
//  * nonfinite: a NaN or Inf appears (replay/compare/nonfinite.h); the same failure is the same
//    first instruction (by name and opcode, as the interpreter locates it in the module itself)
//    introducing the same kind of value, and not through an argument. On a compiled platform
//    the platform must compute a NaN or Inf too; when the interpreter computes none there, the
//    failure is the compiled code's kind of value and opcode, with the interpreter still clean.
//  * crash: the run dies of a signal; the same failure is the same signal. Runs happen in a
//    forked child, so the crash ends the child and not the reducer.
//  * error: the replay returns an error, or the module fails verification; the same failure is
//    the same status code and the same first line of the message with digits masked (sizes and
//    counts change as the module shrinks; names are kept by the reducer's rewrites).
//
// Every candidate is verified first; one that does not verify is rejected unless failing the
// verifier is the failure being kept. Runs are bounded by a timeout (a hang is not a failure of
// any kind) and by the caller's cancel token.
#ifndef HLOWB_REPLAY_REDUCE_FAILURE_H_
#define HLOWB_REPLAY_REDUCE_FAILURE_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/compare/nonfinite.h"
#include "replay/session.h"

namespace hlowb {

enum class FailureKind { kMismatch, kNonfinite, kCrash, kError };
// "mismatch", "nonfinite", "crash", "error".
std::string_view FailureKindName(FailureKind kind);
// InvalidArgument naming the accepted words.
absl::StatusOr<FailureKind> ParseFailureKind(std::string_view text);

namespace reduce {

struct FailureSignature {
  FailureKind kind = FailureKind::kNonfinite;
  // nonfinite: the instruction that introduced the value as the interpreter names it (empty
  // when only a compiled platform computes it), its opcode, "NaN" / "Inf" / "NaN and Inf",
  // and whether it came in through an argument.
  std::string instruction;
  std::string opcode;
  std::string introduced;
  bool entry_parameter = false;
  // crash: the signal.
  int signal = 0;
  // error: from the verifier or from the run, the status code, the masked first line.
  bool verifier = false;
  int code = 0;
  std::string message;
};

// Whether `got` is the failure `want` describes.
bool SameFailure(const FailureSignature& want, const FailureSignature& got);
// The first line of `message` with every run of digits replaced by '#'.
std::string MaskMessage(std::string_view message);
// "SIGSEGV", "SIGABRT", ... or "signal N".
std::string SignalName(int signal);

struct Observation {
  bool failed = false;  // the kind of failure asked about happened
  FailureSignature signature;
  std::string description;  // what happened, one line
  double seconds = 0;
  bool timed_out = false;
  bool invalid = false;  // the module does not verify (and that is not the failure)
  // nonfinite: the finding located in the module's own instructions, with its call path.
  std::optional<NonfiniteFinding> finding;
};

struct OracleOptions {
  FailureKind kind = FailureKind::kNonfinite;
  // Platforms, error bounds, custom calls, host transfers. Iterations, fake data and argument
  // modes are ignored: candidates run once on the arguments they are given.
  ReplayOptions replay;
  // mismatch without a reference platform: the value the module's root should have, or
  // nullopt when it is not known (the module is then not judged to fail).
  std::function<std::optional<Literal>(const Module&)> expected;
  // error: the failure is a verifier error (the module is verified, not run).
  bool verifier_failure = false;
  // Run every candidate in a forked child (always so for crash).
  bool run_in_child = false;
};

class FailureOracle {
 public:
  explicit FailureOracle(OracleOptions options);

  // Verifies `module` and runs it on `arguments`. `timeout_seconds` <= 0: no limit. `watch`
  // sees the run's instruction events (ReplayOptions::on_instruction) when it runs in this
  // process.
  Observation Observe(const Module& module, const std::vector<Literal>& arguments,
                      double timeout_seconds, const CancelToken* cancel,
                      const std::function<void(const InstructionProfile&)>& watch = nullptr) const;

  const OracleOptions& options() const { return options_; }

 private:
  Observation ObserveHere(const Module& module, const std::vector<Literal>& arguments,
                          const CancelToken* cancel,
                          const std::function<void(const InstructionProfile&)>& watch) const;
  Observation ObserveInChild(const Module& module, const std::vector<Literal>& arguments,
                             double timeout_seconds, const CancelToken* cancel) const;

  OracleOptions options_;
};

// A forked child's end: how it ended and what it wrote back.
struct ChildResult {
  bool started = false;
  bool signaled = false;  // died of a signal the parent did not send
  int signal = 0;
  bool exited = false;
  int exit_code = 0;
  bool timed_out = false;
  bool cancelled = false;
  std::string payload;
};
// Runs `work` in a forked child (core dumps off, standard output and error discarded) and
// returns what it returned. The child is killed after `timeout_seconds` (> 0) or when `cancel`
// fires.
ChildResult RunInChild(const std::function<std::string()>& work, double timeout_seconds,
                       const CancelToken* cancel);

}  // namespace reduce
}  // namespace hlowb

#endif  // HLOWB_REPLAY_REDUCE_FAILURE_H_
