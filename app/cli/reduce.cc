// `hlowb reduce FILE --until=mismatch|nonfinite|crash|error [replay flags] -o OUT`: shrinks a
// failing module while it keeps failing the same way (replay/reduce/reducer.h), writes the
// smallest module found to OUT as HLO text — with a run_hlo_module literals file next to it
// when its arguments are not what `hlowb replay` makes by itself — and prints how much smaller
// it got, how it fails, and the command that shows it failing. Progress goes to stderr.
// SIGINT or SIGTERM stops the reduction the way --time_limit does (the smallest failing module
// so far is checked and written; "stopped: cancelled"); a second one ends the process at once.
// Exit code 0 when the reduced module was written and the final check saw it fail the same
// way, 1 when the input could not be read, the original does not fail, or the check did not
// hold, 2 for usage errors.
#include <cctype>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/replay_tools.h"
#include "core/proto/open_file.h"
#include "core/support/cancel.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/data/literals_file.h"
#include "replay/reduce/reducer.h"

namespace hlowb::cli {
namespace {

constexpr char kUsage[] =
    "usage: hlowb reduce FILE --until=mismatch|nonfinite|crash|error -o OUT\n"
    "         [--platform=P] [--reference_platform=P | --reference_module=FILE]\n"
    "         [--abs_error_bound=X] [--rel_error_bound=X] [--seed=S] [--force_fake_data]\n"
    "         [--use_large_float_range] [--input_literals_file=F]\n"
    "         [--custom_call_library=LIB.so[,target=symbol,...]] [--custom_call_fallback=M]\n"
    "         [--host_transfers=error|zeros|fake] [--time_limit=SECONDS]\n"
    "         [--candidate_timeout=SECONDS] [--run_in_child] [--literals_out=F]\n"
    "         [--xla_cpu_enable_kernel_cache=true|false] [--xla_cpu_kernel_cache_dir=DIR]\n"
    "         [--cpu_arena=true|false]\n"
    "         [--cuda_arch=sm_NN] [--cuda_allow_tf32] [--cuda_emulate]\n"
    "         [--cuda_arena=true|false]\n"
    "Shrinks FILE's first module while it fails the same way, and writes the smallest module\n"
    "found to OUT (HLO text). Failures:\n"
    "  mismatch   the platform's result differs from --reference_platform's beyond the error\n"
    "             bounds, or from the value --reference_module (the same module before a wrong\n"
    "             rewrite, say) computes for the instruction of the same name\n"
    "  nonfinite  the same first instruction introduces a NaN or Inf (as --find_nonfinite)\n"
    "  crash      the run dies of the same signal (candidates run in a child process)\n"
    "  error      the replay fails with the same status and message, or the module fails\n"
    "             verification with the same error\n"
    "Replay flags mean what they mean to hlowb replay. Parameters the reduction creates take\n"
    "the values the instructions they stand for had (captured on the interpreter), so OUT\n"
    "comes with a literals file (--literals_out, default OUT's name with .literals.pb) unless\n"
    "its arguments are the fake data hlowb replay makes from the seed. --time_limit (default\n"
    "300) stops with the smallest module so far; --candidate_timeout (default: 4x the last\n"
    "failing run + 0.5 s) bounds each candidate's run. SIGINT or SIGTERM (Ctrl+C) stops early\n"
    "the same way; a second one ends the process.\n";

bool ParseSeconds(const Args& args, const std::string& name, double* out) {
  if (!args.Has(name)) return true;
  try {
    size_t used = 0;
    const std::string v = args.Get(name);
    *out = std::stod(v, &used);
    return used == v.size() && *out > 0 && std::isfinite(*out);
  } catch (...) {
    return false;
  }
}

std::string LiteralsPath(const std::string& out) {
  const size_t slash = out.find_last_of('/');
  const size_t dot = out.find_last_of('.');
  if (dot != std::string::npos && (slash == std::string::npos || dot > slash)) {
    return out.substr(0, dot) + ".literals.pb";
  }
  return out + ".literals.pb";
}

std::string ShellQuote(const std::string& s) {
  bool plain = !s.empty();
  for (char ch : s) {
    plain = plain && (std::isalnum(static_cast<unsigned char>(ch)) || ch == '/' || ch == '.' ||
                      ch == '_' || ch == '-' || ch == '=' || ch == ',' || ch == ':' || ch == '+');
  }
  if (plain) return s;
  std::string q = "'";
  for (char ch : s) {
    if (ch == '\'') {
      q += "'\\''";
    } else {
      q += ch;
    }
  }
  return q + "'";
}

// The token SIGINT and SIGTERM cancel (a lock-free atomic store is async-signal-safe). It
// lives as long as the process, and the handler stays installed to the end: a stop that comes
// while the result is being written is then a no-op instead of ending the process before its
// output is flushed.
CancelToken g_stop_token;

extern "C" void StopReduction(int /*signal*/) { g_stop_token.Cancel(); }

// Installs StopReduction for SIGINT and SIGTERM. SA_RESETHAND: the second signal takes the
// default action and ends the process.
void StopOnSignal() {
  struct sigaction action = {};
  action.sa_handler = StopReduction;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), s < 10 ? "%.2f s" : "%.1f s", s);
  return buf;
}

}  // namespace

int RunReduce(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(
          argv, {"force_fake_data", "use_large_float_range", "run_in_child", "cuda_allow_tf32",
                 "cuda_emulate"},
          {"o", "until", "platform", "reference_platform", "reference_module", "seed",
           "abs_error_bound", "rel_error_bound", "input_literals_file", "custom_call_fallback",
           "custom_call_library", "host_transfers", "time_limit", "candidate_timeout",
           "literals_out", "xla_cpu_enable_kernel_cache", "xla_cpu_kernel_cache_dir",
           "cpu_arena", "cuda_arch", "cuda_arena"},
          &args, &error) ||
      args.positional.size() != 1 || !args.Has("o") || !args.Has("until")) {
    std::cerr << "hlowb reduce: "
              << (error.empty() ? "expected FILE, --until=KIND and -o OUT" : error) << "\n"
              << kUsage;
    return kUsageError;
  }
  auto usage_error = [](const std::string& message) {
    std::cerr << "hlowb reduce: " << message << "\n" << kUsage;
    return kUsageError;
  };

  ReduceOptions options;
  absl::StatusOr<FailureKind> until = ParseFailureKind(args.Get("until"));
  if (!until.ok()) return usage_error(std::string(until.status().message()));
  options.until = *until;
  ReplayOptions& replay = options.replay;
  if (absl::Status st = ParseSharedReplayFlags(args, &replay); !st.ok()) {
    if (absl::IsInvalidArgument(st)) return usage_error(std::string(st.message()));
    std::cerr << "error: " << st.message() << "\n";
    return kInputError;
  }
  if (options.until != FailureKind::kMismatch &&
      (args.Has("reference_platform") || args.Has("reference_module"))) {
    return usage_error("--reference_platform and --reference_module go with --until=mismatch");
  }
  if (options.until == FailureKind::kMismatch &&
      args.Has("reference_platform") == args.Has("reference_module")) {
    return usage_error(
        "--until=mismatch needs one of --reference_platform=P and --reference_module=FILE");
  }
  if (auto mode = ParseHostTransferMode(args.Get("host_transfers", "error")); mode.ok()) {
    replay.host_transfers = *mode;
  } else {
    return usage_error(std::string(mode.status().message()));
  }
  replay.force_fake_data = args.Has("force_fake_data");
  replay.use_large_float_range = args.Has("use_large_float_range");
  if (!ParseSeconds(args, "time_limit", &options.time_limit_seconds)) {
    return usage_error("--time_limit must be a positive number of seconds");
  }
  if (!ParseSeconds(args, "candidate_timeout", &options.candidate_timeout_seconds)) {
    return usage_error("--candidate_timeout must be a positive number of seconds");
  }
  options.run_in_child = args.Has("run_in_child");
  const std::string out_path = args.Get("o");
  const std::string literals_path = args.Get("literals_out", LiteralsPath(out_path));

  // The module and what it brings.
  const std::string& path = args.positional[0];
  absl::StatusOr<OpenedHloFile> opened = OpenHloFile(path);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().message() << "\n";
    return kInputError;
  }
  for (const std::string& w : opened->warnings) std::cerr << "warning: " << w << "\n";
  if (opened->modules.empty()) {
    std::cerr << "error: " << path << " holds no module\n";
    return kInputError;
  }
  if (opened->modules.size() > 1) {
    std::cerr << "warning: " << path << " holds " << opened->modules.size()
              << " modules; reducing the first\n";
  }
  const Module& module = *opened->modules[0].module;
  if (opened->is_snapshot) {
    options.inputs.snapshot_arguments = opened->arguments;
    options.inputs.snapshot_result = opened->result;
  }
  if (args.Has("input_literals_file")) {
    auto read = ReadRunHloModuleLiterals(args.Get("input_literals_file"));
    if (!read.ok()) {
      std::cerr << "error: " << read.status().message() << "\n";
      return kInputError;
    }
    options.inputs.literal_iterations = std::move(*read);
  }
  std::unique_ptr<Module> reference;
  if (args.Has("reference_module")) {
    absl::StatusOr<OpenedHloFile> ref = OpenHloFile(args.Get("reference_module"));
    if (!ref.ok()) {
      std::cerr << "error: " << ref.status().message() << "\n";
      return kInputError;
    }
    if (ref->modules.empty()) {
      std::cerr << "error: " << args.Get("reference_module") << " holds no module\n";
      return kInputError;
    }
    reference = std::move(ref->modules[0].module);
    options.reference_module = reference.get();
  }
  absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> dispatcher = MakeCustomCallDispatcher(
      args, opened->execution_platform, module, options.inputs, &replay.xla_cpu_ffi_handlers);
  if (!dispatcher.ok()) return usage_error(std::string(dispatcher.status().message()));
  replay.custom_call = (*dispatcher)->AsFunction();

  std::cerr << "hlowb reduce: " << path << ", module " << module.name() << ", until "
            << FailureKindName(options.until) << " on " << replay.platform
            << (replay.reference_platform.empty() ? std::string()
                                                  : " vs " + replay.reference_platform)
            << ", time limit " << Seconds(options.time_limit_seconds) << "\n";
  std::string last_phase;
  int64_t last_count = -1;
  double last_print = 0;
  auto progress = [&](const ReduceProgress& p) {
    if (p.phase == last_phase && p.instructions == last_count &&
        p.elapsed_seconds - last_print < 10) {
      return;
    }
    last_phase = p.phase;
    last_count = p.instructions;
    last_print = p.elapsed_seconds;
    char buf[160];
    std::snprintf(buf, sizeof(buf),
                  "reduce: %7.1f s  %-20s %lld instructions left (of %lld), "
                  "%lld candidates, %lld kept\n",
                  p.elapsed_seconds, p.phase.c_str(), static_cast<long long>(p.instructions),
                  static_cast<long long>(p.original_instructions),
                  static_cast<long long>(p.candidates), static_cast<long long>(p.accepted));
    std::cerr << buf;
  };
  StopOnSignal();
  absl::StatusOr<ReduceResult> result = ReduceModule(module, options, progress, &g_stop_token);
  if (!result.ok()) {
    std::cerr << "error: " << path << ": " << result.status().message() << "\n";
    return kInputError;
  }

  // OUT, and the literals file when the arguments need one.
  {
    std::ofstream out(out_path, std::ios::binary);
    out << PrintModule(*result->module);
    if (!out) {
      std::cerr << "error: cannot write " << out_path << "\n";
      return kInputError;
    }
  }
  const bool write_literals =
      !result->arguments.empty() && (!result->arguments_are_fake_data || result->expected_result);
  const bool expected_in_literals = result->expected_result.has_value();
  if (write_literals || expected_in_literals) {
    IterationLiterals it;
    it.arguments = result->arguments;
    it.result = result->expected_result;
    if (absl::Status st = WriteRunHloModuleLiterals(literals_path, {it}); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return kInputError;
    }
  }

  // The command that shows the reduced module failing.
  std::string cmd;
  if (result->signature.verifier) {
    cmd = StrCat("hlowb verify ", ShellQuote(out_path));
  } else {
    cmd = StrCat("hlowb replay ", ShellQuote(out_path));
    if (replay.platform != "interpreter") StrAppend(&cmd, " --platform=", replay.platform);
    if (!replay.reference_platform.empty()) {
      StrAppend(&cmd, " --reference_platform=", replay.reference_platform);
    }
    if (write_literals || expected_in_literals) {
      StrAppend(&cmd, " --input_literals_file=", ShellQuote(literals_path));
    } else {
      if (args.Has("seed")) StrAppend(&cmd, " --seed=", replay.seed);
      if (replay.use_large_float_range) StrAppend(&cmd, " --use_large_float_range");
    }
    if (options.until == FailureKind::kMismatch) {
      if (args.Has("abs_error_bound")) {
        StrAppend(&cmd, " --abs_error_bound=", args.Get("abs_error_bound"));
      }
      if (args.Has("rel_error_bound")) {
        StrAppend(&cmd, " --rel_error_bound=", args.Get("rel_error_bound"));
      }
    }
    if (args.Has("host_transfers")) {
      StrAppend(&cmd, " --host_transfers=", args.Get("host_transfers"));
    }
    for (const auto& [name, value] : args.options) {
      if (name == "custom_call_library" || name == "custom_call_fallback") {
        StrAppend(&cmd, " --", name, "=", ShellQuote(value));
      }
    }
    if (options.until == FailureKind::kNonfinite) StrAppend(&cmd, " --find_nonfinite");
  }

  const ReduceResult& r = *result;
  char ratio[32];
  std::snprintf(
      ratio, sizeof(ratio), "%.1f%%",
      r.original_instructions > 0 ? 100.0 * r.reduced_instructions / r.original_instructions : 0.0);
  std::cout << "hlowb reduce: " << path << ": module " << module.name() << "\n";
  std::cout << "  failure (--until=" << FailureKindName(options.until) << "): " << r.failure
            << "\n";
  std::cout << "  instructions: " << r.original_instructions << " -> " << r.reduced_instructions
            << " (" << ratio << ")\n";
  std::cout << "  reduced module: " << r.reduced_failure
            << (r.verified ? " (checked: fails the same way)"
                           : " (CHECK FAILED: the written module does not fail the same way)")
            << "\n";
  std::cout << "  time: " << Seconds(r.seconds) << ", " << r.candidates << " candidates, "
            << r.accepted << " kept; stopped: " << r.stopped << "\n";
  for (const std::string& note : r.notes) std::cout << "  note: " << note << "\n";
  std::cout << "  wrote " << out_path;
  if (write_literals || expected_in_literals) {
    std::cout << " and " << literals_path
              << (expected_in_literals ? " (arguments and the expected result)" : " (arguments)");
  }
  std::cout << "\n  reproduce: " << cmd << "\n";
  return r.verified ? kOk : kInputError;
}

}  // namespace hlowb::cli
