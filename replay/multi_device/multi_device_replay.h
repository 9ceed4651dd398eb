// The multi-device path of ReplaySession (replay/session.h): for every iteration it chooses
// each device's arguments, runs the module on all devices at once (EvaluateOnDevices), runs
// the reference platform the same way when there is one, and compares per device. The session
// calls it after verification when the run has more than one device; it adds no options of
// its own beyond ReplayOptions.
//
// Arguments: --hlo_argument_mode when set (device_arguments.h); else, as on one device, the
// literals file's iteration or the snapshot's arguments (the same on every device), else fake
// data drawn per device. Comparison: each device against the reference platform's same
// device; without a reference platform, device 0 against the result the inputs carry (a
// snapshot records one device's result). ReplayOptions::custom_call is called from every
// device's thread, concurrently; on_instruction calls are serialised and carry the device.
// Host transfers (--host_transfers=zeros|fake): each device feeds its own from its own seeded
// stream (data/host_transfers.h); the warnings name the instructions per device.
#ifndef HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_REPLAY_H_
#define HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_REPLAY_H_

#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"
#include "replay/multi_device/collective_groups.h"
#include "replay/session.h"

namespace hlowb {

// The devices a replay runs: ReplayOptions::num_replicas / num_partitions where set (> 0),
// else the module's replica_count / num_partitions. InvalidArgument for negative counts or
// more devices than a run may have.
absl::StatusOr<DeviceGrid> ReplayDeviceGrid(const Module& module, const ReplayOptions& options);

// Runs every iteration on `grid` and appends them to `report` (whose compile times and
// warnings the session has filled). Errors as ReplaySession::Run, plus collective deadlocks
// and timeouts (see rendezvous.h).
// A compiled platform's run (the cpu backend): the optimised module that runs in place of the
// session's, and the evaluator hook that hands instructions to its kernels (given the run's
// elided-constant source). Empty members: the interpreter runs the session's module.
struct CompiledRun {
  // A platform that runs every device at once elsewhere (xla-cpu): given the argument lists
  // (one per device, or one for all) and the iteration, each device's result; it sets the
  // run's wall time. When set, the members below are unused.
  std::function<absl::StatusOr<std::vector<Literal>>(const std::vector<std::vector<Literal>>&,
                                                     int iteration, double* seconds)>
      external;
  const Module* module = nullptr;
  std::function<decltype(EvaluatorOptions::compiled)(
      std::function<absl::StatusOr<Literal>(const Instruction&)>, ConstantCache*)>
      make_hook;
  // A runtime of its own that each device runs the module through (the cpu platform), which
  // installs its own hooks; when set, make_hook is unused.
  std::function<absl::StatusOr<Literal>(const std::vector<Literal>&, const EvaluatorOptions&)>
      run;
};

absl::Status RunMultiDeviceIterations(const Module& module, const ReplayOptions& options,
                                      const ReplayInputs& inputs, const DeviceGrid& grid,
                                      const CancelToken* cancel, const ProgressFn& progress,
                                      ReplayReport* report, const CompiledRun& test = {},
                                      const CompiledRun& reference = {});

}  // namespace hlowb

#endif  // HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_REPLAY_H_
