// ReplaySession: runs a module on a test platform (and optionally a reference platform) the
// way XLA's run_hlo_module does, and compares the results. Synchronous: call Run() from a
// worker thread in the UI; it checks the cancel token between instructions (through the
// evaluator) and reports progress through the sink.
//
// Platforms: "interpreter" (the reference evaluator; "reference" is accepted as an alias)
// runs here; "xla-cpu" runs real XLA's CPU backend in a helper process when a Python with jax
// is found (replay/backends/xla/xla_cpu_backend.h; single device only); "cpu" ("host" is an
// alias) compiles the module for this machine (replay/backends/cpu/cpu_backend.h: the cpu pass
// pipeline, then LLVM kernels; what the kernels do not cover runs on the interpreter) once per
// session, then runs every iteration and device on it; "cuda" ("gpu" is an alias) does the same
// for the NVIDIA GPU (replay/backends/cuda/cuda_backend.h: the gpu pass pipeline, then PTX
// kernels and cuBLAS) and fails with FailedPrecondition naming what is missing when there is
// no driver or GPU. "rocm" is not built yet (FailedPrecondition); anything else is
// InvalidArgument.
//
// Arguments, per iteration, in run_hlo_module's order of preference: fake data when
// force_fake_data is set; else the literals file's iteration; else the snapshot's arguments;
// else fake data (seeded; one engine for all iterations, so iterations differ but a seed
// reproduces the whole run). Constants whose data was elided (`{...}`) get seeded fake data
// too (with a warning), so modules dumped without large constants still replay.
//
// Comparison: against the reference platform's result when there is one, else against the
// expected result the inputs carry (the snapshot's result, or the literals file's result).
//
// Devices: the module's replica_count × num_partitions, or ReplayOptions::num_replicas /
// num_partitions. Several devices run as threads with real collectives
// (replay/multi_device/multi_device_replay.h); results and comparisons are then per device.
#ifndef HLOWB_REPLAY_SESSION_H_
#define HLOWB_REPLAY_SESSION_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "replay/compare/compare.h"
#include "replay/evaluator/evaluator.h"
#include "replay/data/literals_file.h"

namespace hlowb {

// Per-instruction event for overlays: time and statistics of the result.
struct InstructionProfile {
  const Instruction* instruction = nullptr;
  double seconds = 0;
  int64_t loop_iteration = -1;  // inside a while body: the iteration number
  int iteration = 0;            // replay iteration (0-based)
  bool reference = false;       // true for the reference platform's run
  int64_t device = 0;           // multi-device runs: the device (see DeviceReplay)
  LiteralStatistics statistics;
  const Literal* value = nullptr;  // the result; valid only during the callback
};

// --host_transfers: what the host sends to infeed and host recvs. kError stops at the first
// such instruction, naming it; kZeros sends zeros; kFake sends seeded fake data (on several
// devices each device draws its own stream, seeded from the seed and the device, so runs
// repeat and devices differ).
enum class HostTransferMode : uint8_t { kError, kZeros, kFake };
// "error", "zeros", "fake".
std::string_view HostTransferModeName(HostTransferMode mode);
// Parses a --host_transfers value; InvalidArgument naming the flag and the accepted words.
absl::StatusOr<HostTransferMode> ParseHostTransferMode(std::string_view text);

struct ReplayOptions {
  std::string platform = "interpreter";
  std::string reference_platform;  // empty: no reference run
  int iterations = 1;
  uint64_t seed = 42;
  bool force_fake_data = false;
  bool use_large_float_range = false;
  bool run_test_hlo_passes = true;       // accepted; the interpreter runs no HLO passes
  bool run_reference_hlo_passes = true;  // likewise
  bool fake_elided_constants = true;
  ErrorBounds bounds;
  int max_reported_elements = 5;
  uint64_t memory_budget_bytes = uint64_t{8} << 30;
  // Devices (replay/multi_device): 0 = the module's replica_count / num_partitions. More than
  // one device runs the multi-device path (one thread per device, real collectives).
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  // XLA multihost runner's --hlo_argument_mode (device_arguments.h); when set it replaces the
  // snapshot / literals file / fake data choice. Empty: that choice, with fake data drawn per
  // device on several devices.
  std::string hlo_argument_mode;
  double collective_timeout_seconds = 600;
  // What the host sends to infeed and to host recvs (see HostTransferMode). Values for outfeed
  // and host sends are dropped. The report's warnings say which instructions were fed, per
  // device on several devices.
  HostTransferMode host_transfers = HostTransferMode::kError;
  // Statistics of every instruction's result cost a pass over it; only when set.
  std::function<void(const InstructionProfile&)> on_instruction;
  // Whether on_instruction's events carry the result's statistics (false: timing only).
  bool instruction_statistics = true;
  // Computes custom-call instructions (see plugins/api/custom_call_registry.h); unset: a custom
  // call stops the replay with Unimplemented naming its target.
  CustomCallHook custom_call;
  // The xla-cpu platform's helper process is killed after this long (per run).
  double xla_cpu_timeout_seconds = 600;
  // The user's FFI handlers, registered in XLA too when the xla-cpu platform runs.
  std::vector<XlaFfiHandler> xla_cpu_ffi_handlers;
  // The cpu platform's compilation: kernel cache, dumps, passes' flags, threads.
  // run_hlo_passes is taken from run_test_hlo_passes / run_reference_hlo_passes.
  CpuCompileOptions cpu;
  // The cuda platform's compilation: target arch, TF32, dumps, passes' flags; run_hlo_passes
  // likewise taken from run_test_hlo_passes / run_reference_hlo_passes. With the cuda platform
  // under test, --xla_dump_hlo_snapshots follows these dump options instead of cpu's.
  CudaCompileOptions cuda;
};

// Data the input brings besides the module.
struct ReplayInputs {
  // From a snapshot.
  std::optional<std::vector<Literal>> snapshot_arguments;
  std::optional<Literal> snapshot_result;
  // From --input_literals_file.
  std::vector<IterationLiterals> literal_iterations;
};

// One device of a multi-device iteration. Device d is replica d / num_partitions, partition
// d % num_partitions.
struct DeviceReplay {
  int64_t replica = 0;
  int64_t partition = 0;
  std::vector<Literal> arguments;  // empty when every device got the iteration's arguments
  Literal result;
  std::optional<Literal> reference_result;
  std::optional<ComparisonReport> comparison;
  double run_seconds = 0;
};

struct ReplayIteration {
  std::vector<Literal> arguments;
  std::string argument_source;  // "fake data (seed 42)", "snapshot", "literals file iteration 2"
  Literal result;
  std::optional<Literal> reference_result;
  double run_seconds = 0;
  double reference_seconds = 0;
  // Set when there was something to compare against.
  std::optional<ComparisonReport> comparison;
  std::string compared_against;  // "reference platform interpreter", "snapshot result", ...
  // Multi-device runs: every device; arguments, result, reference_result and comparison above
  // are then device 0's.
  std::vector<DeviceReplay> devices;
};

struct ReplayReport {
  std::string module_name;
  std::string platform;
  std::string reference_platform;
  // The interpreter has no compilation: this is the verification and preparation time.
  double compile_seconds = 0;
  double reference_compile_seconds = 0;
  // cpu and cuda runs: what was compiled and what was left to the interpreter
  // (CpuExecutable::Summary, CudaExecutable::Summary).
  std::string compile_summary;
  std::string reference_compile_summary;
  // xla-cpu runs: XLA's optimized module (the first run's) and the jaxlib that compiled it.
  std::string xla_optimized_module;
  std::string xla_jaxlib_version;
  std::vector<std::string> warnings;
  // Files written under --xla_dump_to: the cpu or cuda compile's dumps, then one
  // `<module>.snapshot.<N>.pb` per iteration with --xla_dump_hlo_snapshots.
  std::vector<std::string> dump_files;
  std::vector<ReplayIteration> iterations;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  bool compared() const;
  bool all_match() const;  // true when nothing was compared
  // For --output_literals_file.
  std::vector<IterationLiterals> ToIterationLiterals() const;
};

// Checks a platform name; FailedPrecondition for known platforms that cannot run here (cuda
// without a driver or GPU, xla-cpu without jax, rocm), InvalidArgument for unknown names.
// `cuda_emulated`: cuda runs on the host's GPU emulator (CudaCompileOptions::emulate), which
// needs no driver.
absl::Status CheckPlatform(const std::string& platform, bool cuda_emulated = false);
// Whether `platform` runs a compiled, optimised copy of the module (cpu, host, cuda, gpu), so
// its instructions are not the module's own.
bool CompilesModule(const std::string& platform);

class ReplaySession {
 public:
  // `module` must outlive the session.
  ReplaySession(const Module& module, ReplayOptions options, ReplayInputs inputs = {});

  // Runs all iterations. Errors: the evaluator's (Unimplemented naming the unsupported
  // feature, ResourceExhausted for the memory budget), InvalidArgument for arguments that do
  // not fit, Cancelled when the token fired.
  absl::StatusOr<ReplayReport> Run(const CancelToken* cancel = nullptr,
                                   const ProgressFn& progress = nullptr);

 private:
  const Module& module_;
  ReplayOptions options_;
  ReplayInputs inputs_;
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_SESSION_H_
