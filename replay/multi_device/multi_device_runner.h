// Runs one module on replica_count × num_partitions devices at once, as threads in this
// process: one reference evaluator per device, each knowing its replica and partition id, all
// meeting at their collective ops in one Rendezvous (rendezvous.h). It is the multi-device
// counterpart of EvaluateModule; choosing arguments and comparing results is the session's
// job (multi_device_replay.h), and it does not model device memory, streams or timing.
#ifndef HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_RUNNER_H_
#define HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_RUNNER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "replay/evaluator/evaluator.h"
#include "replay/multi_device/collective_groups.h"

namespace hlowb {

// Devices a run may have: one thread each.
inline constexpr int64_t kMaxDevices = 1024;

struct MultiDeviceOptions {
  DeviceGrid grid;
  // Options every device's evaluator starts from. memory_budget_bytes is shared: each device
  // gets an equal part. `cancel` is watched for the whole run. `progress` reports device 0's
  // progress. `on_instruction` is replaced by the per-device callback below; `collectives` is
  // set per device, and so is `host_transfer` when the per-device one below is set.
  EvaluatorOptions evaluator;
  // Per-device host transfers: when set, device d's evaluator gets host_transfer(d) as its
  // EvaluatorOptions::host_transfer (called from that device's thread only).
  std::function<std::function<absl::StatusOr<Literal>(const Instruction&, const Literal*)>(
      int64_t device)>
      host_transfer;
  // Per-device instruction events; calls are serialised (never concurrent).
  std::function<void(int64_t device, const InstructionEvent&)> on_instruction;
  // When set, each device runs the module through this (a compiled platform's runtime, which
  // installs its own hooks) instead of EvaluateModule; its options are the device's.
  std::function<absl::StatusOr<Literal>(const std::vector<Literal>&, const EvaluatorOptions&)>
      run_module;
  // Longest one device may wait at one collective (a backstop; deadlocks end at once).
  double collective_timeout_seconds = 600;
};

struct DeviceRunResult {
  Literal result;
  double seconds = 0;  // wall time of this device's evaluation
};

// Runs the entry computation on every device of options.grid. `arguments` holds one argument
// list per device (device order, see DeviceGrid), or a single list every device shares.
// Returns each device's result in device order. Errors: the first failing device's error
// prefixed with the device ("device 2 (replica 2, partition 0): ..."), a collective deadlock
// (FailedPrecondition naming each waiting device, its instruction and what it waits for) or
// timeout (DeadlineExceeded), Cancelled, or InvalidArgument for a bad grid or argument count.
absl::StatusOr<std::vector<DeviceRunResult>> EvaluateOnDevices(
    const Module& module, const std::vector<std::vector<Literal>>& arguments,
    const MultiDeviceOptions& options);

// Checks a requested device grid: both counts >= 1 and at most kMaxDevices devices.
absl::Status CheckDeviceGrid(const DeviceGrid& grid);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_MULTI_DEVICE_MULTI_DEVICE_RUNNER_H_
