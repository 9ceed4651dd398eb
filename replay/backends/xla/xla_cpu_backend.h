// The `xla-cpu` platform: runs a module on real XLA's CPU backend through a helper process
// (xla_cpu_helper.py, built into hlowb) started with a Python that has jax installed. hlowb
// links no XLA code; the helper compiles the module's HLO text with the installed jaxlib and
// runs it once, exchanging arguments and results as raw element files in a temporary folder.
//
// It does not run several devices (replicas/partitions), feed infeed or host transfers, or
// call hlowb's custom-call handlers: XLA compiles what it is given and reports its own errors.
// A helper that crashes, hangs past the timeout or is cancelled is killed and becomes an error;
// the caller never waits on it without bound.
#ifndef HLOWB_REPLAY_BACKENDS_XLA_XLA_CPU_BACKEND_H_
#define HLOWB_REPLAY_BACKENDS_XLA_XLA_CPU_BACKEND_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb {

// The platform name ReplayOptions and `hlowb replay` use.
inline constexpr char kXlaCpuPlatform[] = "xla-cpu";

// The Python that runs the helper: $HLOWB_PYTHON when set; else the first `.venv/bin/python`
// found in the folders above the running executable, above the current directory, or in the
// source folder hlowb was built from (scripts/setup creates it there). FailedPrecondition
// saying how to get one when there is none. Does not check that jax imports (that costs a
// second; the helper reports it).
absl::StatusOr<std::string> FindXlaPython();

// A user's XLA FFI handler for a custom-call target: registered in the helper's jax (with
// jax.ffi.register_ffi_target) before compiling, so XLA runs the same handler our replay does.
struct XlaFfiHandler {
  std::string library;  // shared object path
  std::string target;   // custom_call_target
  std::string symbol;   // exported handler
};

struct XlaCpuOptions {
  std::string python;  // empty: FindXlaPython()
  std::vector<XlaFfiHandler> ffi_handlers;
  double timeout_seconds = 600;
  const CancelToken* cancel = nullptr;
  // Values for constants whose data was elided (`{...}`); XLA would otherwise fill them with
  // its own pattern. Unset: such modules are refused.
  std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant;
  // Leave the exchange folder in place (its path is in XlaCpuRun::exchange_dir) for debugging.
  bool keep_exchange_dir = false;
};

struct XlaCpuRun {
  Literal result;
  double compile_seconds = 0;  // XLA's compilation, as the helper measured it
  double run_seconds = 0;      // one execution, as the helper measured it
  std::string optimized_module;  // XLA's optimized HLO text (may be empty)
  std::string jaxlib_version;
  std::string method;  // which jaxlib API compiled the module
  std::string exchange_dir;  // only with keep_exchange_dir
};

// Compiles and runs `module` on XLA's CPU backend with `arguments` (one per entry parameter,
// shapes as the parameters'). Errors: FailedPrecondition when there is no Python
// with jax (saying to run scripts/setup or set HLOWB_PYTHON) or the jaxlib's API is not one the
// helper knows (naming the version); InvalidArgument carrying XLA's own message when XLA
// rejects or fails to run the module; DeadlineExceeded when the helper ran past the timeout;
// Internal when it crashed; Cancelled; Unimplemented for tokens or opaque values at the module
// boundary.
absl::StatusOr<XlaCpuRun> RunOnXlaCpu(const Module& module, const std::vector<Literal>& arguments,
                                      const XlaCpuOptions& options = {});

// Several devices: one result per device, device d being replica d / num_partitions and
// partition d % num_partitions (XLA's device assignment [replica][partition] = d).
// `device_arguments` holds one list for every device or one list per device. The helper runs
// XLA's CPU client with that many host devices; with more than one partition the module is
// compiled as the per-device program it is (every instruction manually sharded), as our
// multi-device replay runs it.
inline constexpr int64_t kMaxXlaCpuDevices = 64;
struct XlaCpuDevicesRun {
  std::vector<Literal> results;  // by device
  double compile_seconds = 0;
  double run_seconds = 0;  // one execution on all devices
  std::string optimized_module;
  std::string jaxlib_version;
  std::string method;
  std::string exchange_dir;
};
absl::StatusOr<XlaCpuDevicesRun> RunOnXlaCpuDevices(
    const Module& module, const std::vector<std::vector<Literal>>& device_arguments,
    int64_t num_replicas, int64_t num_partitions, const XlaCpuOptions& options = {});
absl::StatusOr<XlaCpuDevicesRun> RunHloTextOnXlaCpuDevices(
    const std::string& hlo_text, const Shape& result_shape,
    const std::vector<std::vector<Literal>>& device_arguments, int64_t num_replicas,
    int64_t num_partitions, const XlaCpuOptions& options = {});

// Same, for HLO text that is already printed.
absl::StatusOr<XlaCpuRun> RunHloTextOnXlaCpu(const std::string& hlo_text, const Shape& result_shape,
                                             const std::vector<Literal>& arguments,
                                             const XlaCpuOptions& options = {});

}  // namespace hlowb

#endif  // HLOWB_REPLAY_BACKENDS_XLA_XLA_CPU_BACKEND_H_
