#include "replay/reduce/failure.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "core/analysis/verifier.h"
#include "core/support/strings.h"

namespace hlowb {

std::string_view FailureKindName(FailureKind kind) {
  switch (kind) {
    case FailureKind::kMismatch: return "mismatch";
    case FailureKind::kNonfinite: return "nonfinite";
    case FailureKind::kCrash: return "crash";
    case FailureKind::kError: return "error";
  }
  return "?";
}

absl::StatusOr<FailureKind> ParseFailureKind(std::string_view text) {
  for (FailureKind k : {FailureKind::kMismatch, FailureKind::kNonfinite, FailureKind::kCrash,
                        FailureKind::kError}) {
    if (text == FailureKindName(k)) return k;
  }
  return absl::InvalidArgumentError(
      StrCat("unknown --until '", text, "': expected mismatch, nonfinite, crash or error"));
}

namespace reduce {
namespace {

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string FirstLine(std::string_view text) {
  size_t end = text.find('\n');
  std::string line(text.substr(0, end));
  while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
  return line;
}

// Cancels its token when `seconds` have passed (if positive) or when `outer` fires.
class Watchdog {
 public:
  Watchdog(double seconds, const CancelToken* outer) : outer_(outer) {
    if (seconds <= 0 && outer == nullptr) return;
    const auto deadline =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(
                           std::chrono::duration<double>(seconds > 0 ? seconds : 1e9));
    thread_ = std::thread([this, deadline] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!done_) {
        cv_.wait_for(lock, std::chrono::milliseconds(20));
        if (done_) break;
        if (outer_ != nullptr && outer_->IsCancelled()) token_.Cancel();
        if (Clock::now() >= deadline) {
          expired_ = true;
          token_.Cancel();
        }
      }
    });
  }
  ~Watchdog() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  const CancelToken* token() const { return &token_; }
  bool expired() const { return expired_; }

 private:
  const CancelToken* outer_;
  CancelToken token_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::atomic<bool> expired_{false};
};

std::string OneLine(std::string s) {
  for (char& ch : s) {
    if (ch == '\n' || ch == '\r') ch = ' ';
  }
  return s;
}

// Observation <-> the few lines a child writes back.
std::string Serialize(const Observation& o) {
  const FailureSignature& s = o.signature;
  return StrCat(o.failed ? 1 : 0, " ", o.invalid ? 1 : 0, " ", s.entry_parameter ? 1 : 0, " ",
                s.verifier ? 1 : 0, " ", s.code, " ", s.signal, "\n", OneLine(s.instruction), "\n",
                OneLine(s.opcode), "\n", OneLine(s.introduced), "\n", OneLine(s.message), "\n",
                OneLine(o.description), "\n");
}

bool Deserialize(const std::string& text, Observation* o) {
  std::istringstream in(text);
  std::string head;
  if (!std::getline(in, head)) return false;
  std::istringstream h(head);
  int failed = 0, invalid = 0, entry_parameter = 0, verifier = 0;
  FailureSignature& s = o->signature;
  if (!(h >> failed >> invalid >> entry_parameter >> verifier >> s.code >> s.signal)) return false;
  o->failed = failed != 0;
  o->invalid = invalid != 0;
  s.entry_parameter = entry_parameter != 0;
  s.verifier = verifier != 0;
  return std::getline(in, s.instruction) && std::getline(in, s.opcode) &&
         std::getline(in, s.introduced) && std::getline(in, s.message) &&
         std::getline(in, o->description);
}

std::string Describe(const NonfiniteFinding& f) {
  if (f.entry_parameter) return StrCat(f.introduced, " in argument %", f.instruction);
  std::string where = f.context.empty() ? std::string() : StrCat(" in %", f.computation);
  for (const NonfiniteContext& c : f.context) {
    if (c.loop_iteration >= 0) {
      StrAppend(&where, ", iteration ", c.loop_iteration, " of %", c.caller);
    }
  }
  return StrCat(f.introduced, " introduced by %", f.instruction, " (", f.opcode, ")", where);
}

// The message without the ", in %w (while)" notes the evaluator adds for each calling
// instruction on the way out: they change when the failing computation becomes the entry.
std::string WithoutCallers(std::string message) {
  static constexpr std::string_view kCallers =
      " while call conditional fusion async-start async-update async-done map reduce "
      "reduce-window sort scatter select-and-scatter all-reduce reduce-scatter ";
  message = FirstLine(message);
  while (true) {
    const size_t at = message.rfind(", in %");
    if (at == std::string::npos || message.back() != ')') break;
    const size_t open = message.rfind(" (");
    if (open == std::string::npos || open < at) break;
    const std::string opcode = message.substr(open + 2, message.size() - open - 3);
    if (kCallers.find(" " + opcode + " ") == std::string_view::npos) break;
    message.resize(at);
  }
  return message;
}

}  // namespace

std::string MaskMessage(std::string_view message) {
  std::string line = FirstLine(message);
  std::string out;
  for (size_t i = 0; i < line.size(); ++i) {
    if (line[i] >= '0' && line[i] <= '9') {
      if (out.empty() || out.back() != '#') out += '#';
      continue;
    }
    out += line[i];
  }
  return out;
}

std::string SignalName(int signal) {
  switch (signal) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTRAP: return "SIGTRAP";
    default: return StrCat("signal ", signal);
  }
}

bool SameFailure(const FailureSignature& want, const FailureSignature& got) {
  if (want.kind != got.kind) return false;
  switch (want.kind) {
    case FailureKind::kMismatch: return true;
    case FailureKind::kNonfinite:
      return want.introduced == got.introduced && want.entry_parameter == got.entry_parameter &&
             want.opcode == got.opcode && want.instruction == got.instruction;
    case FailureKind::kCrash: return want.signal == got.signal;
    case FailureKind::kError:
      return want.verifier == got.verifier && want.code == got.code && want.message == got.message;
  }
  return false;
}

FailureOracle::FailureOracle(OracleOptions options) : options_(std::move(options)) {}

Observation FailureOracle::Observe(
    const Module& module, const std::vector<Literal>& arguments, double timeout_seconds,
    const CancelToken* cancel, const std::function<void(const InstructionProfile&)>& watch) const {
  if (options_.run_in_child || options_.kind == FailureKind::kCrash) {
    return ObserveInChild(module, arguments, timeout_seconds, cancel);
  }
  const auto start = Clock::now();
  Watchdog watchdog(timeout_seconds, cancel);
  Observation o = ObserveHere(module, arguments, watchdog.token(), watch);
  o.seconds = Since(start);
  if (watchdog.expired()) {
    o = Observation();
    o.signature.kind = options_.kind;
    o.timed_out = true;
    o.seconds = Since(start);
    o.description = StrCat("stopped after the ", static_cast<int>(timeout_seconds + 0.5),
                           " s a candidate may run");
  }
  return o;
}

Observation FailureOracle::ObserveHere(
    const Module& module, const std::vector<Literal>& arguments, const CancelToken* cancel,
    const std::function<void(const InstructionProfile&)>& watch) const {
  Observation o;
  FailureSignature& sig = o.signature;
  sig.kind = options_.kind;
  std::vector<VerifierDiagnostic> diags = VerifyModule(module);
  const VerifierDiagnostic* first_error = nullptr;
  for (const VerifierDiagnostic& d : diags) {
    if (d.severity == VerifierDiagnostic::Severity::kError) {
      first_error = &d;
      break;
    }
  }
  if (options_.kind == FailureKind::kError && options_.verifier_failure) {
    if (first_error == nullptr) {
      o.description = "the module verifies";
      return o;
    }
    o.failed = true;
    sig.verifier = true;
    sig.code = static_cast<int>(absl::StatusCode::kInvalidArgument);
    // The computation is left out: it changes when a computation becomes the entry.
    sig.message = MaskMessage(StrCat(first_error->instruction.empty()
                                         ? std::string()
                                         : StrCat("%", first_error->instruction, ": "),
                                     first_error->message));
    o.description = StrCat("verifier: ", FirstLine(first_error->ToString()));
    return o;
  }
  if (first_error != nullptr) {
    o.invalid = true;
    o.description = StrCat("does not verify: ", FirstLine(first_error->ToString()));
    return o;
  }

  ReplayOptions ro = options_.replay;
  ro.iterations = 1;
  ro.force_fake_data = false;
  ro.hlo_argument_mode.clear();
  ro.on_instruction = watch;
  ReplayInputs inputs;
  IterationLiterals literals;
  literals.arguments = arguments;
  inputs.literal_iterations.push_back(std::move(literals));
  auto cancelled = [cancel] { return cancel != nullptr && cancel->IsCancelled(); };

  switch (options_.kind) {
    case FailureKind::kNonfinite: {
      ro.reference_platform.clear();
      absl::StatusOr<NonfiniteReport> r = FindNonfinite(module, ro, std::move(inputs), cancel);
      if (!r.ok()) {
        o.description = StrCat("the run stopped: ", FirstLine(std::string(r.status().message())));
        return o;
      }
      if (!r->found) {
        o.description = "no NaN or Inf appears";
        return o;
      }
      o.failed = true;
      sig.introduced = r->finding.introduced;
      if (!r->compiled_platform.empty()) {
        if (r->interpreter_finding) {
          // The compiled code names its own instructions (a fusion, where a NaN can show up
          // first when an Inf went in); the failure is told by the module's instruction.
          const NonfiniteFinding& f = *r->interpreter_finding;
          sig.instruction = f.instruction;
          sig.opcode = f.opcode;
          sig.introduced = f.introduced;
          sig.entry_parameter = f.entry_parameter;
          o.finding = f;
          o.description = StrCat(Describe(f), " (located by the interpreter; ",
                                 r->compiled_platform, " computes a NaN or Inf too)");
        } else {
          sig.opcode = r->finding.opcode;
          sig.entry_parameter = r->finding.entry_parameter;
          o.description =
              StrCat(r->finding.introduced, " introduced by a ", r->finding.opcode, " of the ",
                     r->compiled_platform, " platform's code; the interpreter computes none");
        }
      } else {
        const NonfiniteFinding& f = r->finding;
        sig.instruction = f.instruction;
        sig.opcode = f.opcode;
        sig.entry_parameter = f.entry_parameter;
        o.finding = f;
        o.description = Describe(f);
      }
      return o;
    }
    case FailureKind::kMismatch: {
      std::optional<Literal> expected;
      if (options_.expected) {
        expected = options_.expected(module);
        if (!expected) {
          o.description = "no expected value for the module's root";
          return o;
        }
        ro.reference_platform.clear();
      }
      absl::StatusOr<ReplayReport> r = ReplaySession(module, ro, std::move(inputs)).Run(cancel);
      if (!r.ok()) {
        o.description = StrCat("the run stopped: ", FirstLine(std::string(r.status().message())));
        return o;
      }
      if (r->iterations.empty()) {
        o.description = "nothing ran";
        return o;
      }
      if (expected) {
        ComparisonReport cmp = CompareLiterals(*expected, r->iterations[0].result, ro.bounds, 3);
        o.failed = !cmp.ok();
        o.description = StrCat("against the reference module: ", FirstLine(cmp.ToString()));
        return o;
      }
      if (!r->compared()) {
        o.description = "nothing to compare with";
        return o;
      }
      o.failed = !r->all_match();
      const ReplayIteration& it = r->iterations[0];
      o.description = it.comparison
                          ? StrCat(it.compared_against, ": ", FirstLine(it.comparison->ToString()))
                          : std::string(o.failed ? "MISMATCH" : "OK");
      return o;
    }
    case FailureKind::kCrash:
    case FailureKind::kError: {
      absl::StatusOr<ReplayReport> r = ReplaySession(module, ro, std::move(inputs)).Run(cancel);
      if (r.ok()) {
        o.description = "ran to the end";
        return o;
      }
      if (cancelled()) {
        o.description = "cancelled";
        return o;
      }
      o.description = StrCat(absl::StatusCodeToString(r.status().code()), ": ",
                             FirstLine(std::string(r.status().message())));
      if (options_.kind == FailureKind::kError) {
        o.failed = true;
        sig.code = static_cast<int>(r.status().code());
        sig.message = MaskMessage(WithoutCallers(std::string(r.status().message())));
      }
      return o;
    }
  }
  return o;
}

Observation FailureOracle::ObserveInChild(const Module& module,
                                          const std::vector<Literal>& arguments,
                                          double timeout_seconds, const CancelToken* cancel) const {
  const auto start = Clock::now();
  ChildResult child =
      RunInChild([&] { return Serialize(ObserveHere(module, arguments, nullptr, nullptr)); },
                 timeout_seconds, cancel);
  Observation o;
  o.signature.kind = options_.kind;
  o.seconds = Since(start);
  if (!child.started) {
    o.description = StrCat("could not start a child process: ", std::strerror(errno));
  } else if (child.timed_out) {
    o.timed_out = true;
    o.description = StrCat("stopped after the ", static_cast<int>(timeout_seconds + 0.5),
                           " s a candidate may run");
  } else if (child.cancelled) {
    o.description = "cancelled";
  } else if (child.signaled) {
    o.failed = options_.kind == FailureKind::kCrash;
    o.signature.signal = child.signal;
    o.description = StrCat("crashed (", SignalName(child.signal), ")");
  } else if (child.exit_code != 0 || !Deserialize(child.payload, &o)) {
    o = Observation();
    o.signature.kind = options_.kind;
    o.description = StrCat("the child process exited with status ", child.exit_code);
  } else if (options_.kind == FailureKind::kCrash) {
    o.failed = false;
    o.description = StrCat("did not crash: ", o.description);
  }
  o.seconds = Since(start);
  return o;
}

ChildResult RunInChild(const std::function<std::string()>& work, double timeout_seconds,
                       const CancelToken* cancel) {
  ChildResult r;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return r;
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return r;
  }
  if (pid == 0) {
    close(fds[0]);
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) {
      dup2(devnull, 1);
      dup2(devnull, 2);
    }
    const std::string out = work();
    size_t written = 0;
    while (written < out.size()) {
      const ssize_t n = write(fds[1], out.data() + written, out.size() - written);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  r.started = true;
  const auto start = Clock::now();
  bool killed = false;
  char buf[4096];
  while (true) {
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = poll(&pfd, 1, 20);
    if (ready > 0) {
      const ssize_t n = read(fds[0], buf, sizeof(buf));
      if (n > 0) {
        r.payload.append(buf, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        break;
      }
    }
    if (killed) continue;
    if (cancel != nullptr && cancel->IsCancelled()) {
      kill(pid, SIGKILL);
      killed = true;
      r.cancelled = true;
    } else if (timeout_seconds > 0 && Since(start) > timeout_seconds) {
      kill(pid, SIGKILL);
      killed = true;
      r.timed_out = true;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    if (!killed) {
      r.signaled = true;
      r.signal = WTERMSIG(status);
    }
  } else if (WIFEXITED(status)) {
    r.exited = true;
    r.exit_code = WEXITSTATUS(status);
  }
  return r;
}

}  // namespace reduce
}  // namespace hlowb
