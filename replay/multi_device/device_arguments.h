// Arguments for every device of a multi-device replay, with the --hlo_argument_mode values of
// XLA's multihost HLO runner (xla/tools/multihost_hlo_runner, FunctionalHloRunner):
//
//   use_random_inputs         fake data (replay/data/fake_data.h rules) drawn per device, in
//                             device order from one engine, so devices get different values.
//   use_shared_random_inputs  one set of fake data, given to every device.
//   use_zeros_as_input        every byte zero (index constraints are not respected, as in XLA).
//   use_device_id_as_input    every element of every argument holds the device's XLA id
//                             (partition * num_replicas + replica under XLA's default device
//                             assignment) converted to the element type; pred elements are
//                             true when the id is even, as XLA's runner fills them.
//   uninitialized             XLA leaves device buffers uninitialised; a replay must be
//                             reproducible, so they are zeros here.
//
// It makes values only; which source a replay uses (snapshot, literals file, a mode) is the
// session's decision.
#ifndef HLOWB_REPLAY_MULTI_DEVICE_DEVICE_ARGUMENTS_H_
#define HLOWB_REPLAY_MULTI_DEVICE_DEVICE_ARGUMENTS_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "replay/data/fake_data.h"
#include "replay/multi_device/collective_groups.h"

namespace hlowb {

enum class ArgumentMode : uint8_t {
  kUseRandomInputs,
  kUseSharedRandomInputs,
  kUseZerosAsInput,
  kUseDeviceIdAsInput,
  kUninitialized,
};

// InvalidArgument listing the accepted names for anything else.
absl::StatusOr<ArgumentMode> ParseArgumentMode(std::string_view name);
std::string_view ArgumentModeName(ArgumentMode mode);

// Argument lists for the devices of `grid`: one list per device in device order, or a single
// list when the mode gives every device the same values (shared random, zeros,
// uninitialized). Random modes draw from `engine`.
absl::StatusOr<std::vector<std::vector<Literal>>> MakeDeviceArguments(
    const Module& module, ArgumentMode mode, const DeviceGrid& grid, FakeDataEngine* engine,
    bool use_large_float_range);

// A literal of `shape` (tuples recursively) whose every element is `value` converted to the
// element type (pred: value is even), as use_device_id_as_input fills arguments.
absl::StatusOr<Literal> MakeFilledLiteral(const Shape& shape, int64_t value);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_MULTI_DEVICE_DEVICE_ARGUMENTS_H_
