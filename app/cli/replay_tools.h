// The "finding the problem" side of `hlowb replay`, kept out of replay.cc so that file stays
// about running and comparing: custom-call handling (--custom_call_fallback), the NaN/Inf
// locator (--find_nonfinite), per-instruction isolation (--isolate_instructions) and
// differential replay across passes (DIR --module=M --bisect_passes). `hlowb bundle` reuses
// the custom-call setup.
#ifndef HLOWB_APP_CLI_REPLAY_TOOLS_H_
#define HLOWB_APP_CLI_REPLAY_TOOLS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "app/cli/cli.h"
#include "plugins/api/custom_call_registry.h"
#include "replay/session.h"

namespace hlowb::cli {

// The built-in custom-call handlers with the fallback --custom_call_fallback names (default
// error). `platform` is the platform the module was compiled for ("" when unknown); values a
// snapshot or literals file recorded feed the "snapshot" fallback. Handlers of
// --custom_call_library are registered too and, when `ffi_handlers` is given, listed there (the
// xla-cpu platform registers them in XLA as well).
absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> MakeCustomCallDispatcher(
    const Args& args, const std::string& platform, const Module& module,
    const ReplayInputs& inputs, std::vector<XlaFfiHandler>* ffi_handlers = nullptr);

// --cuda_arch's value: sm_ and two or three digits (sm_80, sm_90, sm_100); InvalidArgument
// naming the flag otherwise.
absl::Status CheckCudaArch(const std::string& arch);

// The flags `hlowb replay` and `hlowb reduce` share, into `options`: --platform (default
// interpreter) and --reference_platform, each checked with CheckPlatform; the cpu kernel cache
// (--xla_cpu_kernel_cache_dir, --xla_cpu_enable_kernel_cache); the cuda platform's
// --cuda_allow_tf32 and --cuda_emulate (bare flags), --cuda_arch=sm_NN and
// --cuda_arena=true|false; --seed;
// --abs_error_bound and --rel_error_bound. A malformed value is InvalidArgument naming the flag (a usage error); a
// platform that cannot run here keeps CheckPlatform's status.
absl::Status ParseSharedReplayFlags(const Args& args, ReplayOptions* options);

struct ReplayToolOutcome {
  bool handled = false;  // the tool ran instead of the plain replay
  int exit_code = kOk;
  std::shared_ptr<CustomCallDispatcher> dispatcher;  // for PrintCustomCallNotes
};

// Installs the custom-call dispatcher into `options` and, for --find_nonfinite or
// --isolate_instructions, runs that tool on the module and prints its report.
ReplayToolOutcome RunReplayTools(const Args& args, const std::string& label, const Module& module,
                                 const std::string& compile_platform, const ReplayInputs& inputs,
                                 ReplayOptions* options);

// "  note: custom-call %x ...: replayed with zeros" lines, when a fallback was used.
void PrintCustomCallNotes(const ReplayToolOutcome& outcome);

// `hlowb replay DIR --module=M --bisect_passes [flags]`. Returns the exit code.
int RunBisectPasses(const Args& args, const ReplayOptions& options,
                    const std::vector<IterationLiterals>& input_literals);

}  // namespace hlowb::cli

#endif  // HLOWB_APP_CLI_REPLAY_TOOLS_H_
