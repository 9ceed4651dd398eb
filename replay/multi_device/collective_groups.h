// Which devices take part in a collective op together, with XLA's rules
// (xla/service/collective_ops_utils: CollectiveOpGroupMode, GetParticipatingDevicesGroups).
// Pure functions of an instruction's attributes and the device grid; the rendezvous uses them
// and tests check them directly. They do not run anything.
//
// Group mode, from channel_id and use_global_device_ids:
//   * all-reduce, all-gather, reduce-scatter (and their -start forms), whose
//     use_global_device_ids is a plain boolean in XLA (unset = false):
//       no channel_id                               -> cross-replica
//       channel_id, use_global_device_ids false      -> cross-replica-and-partition
//       channel_id, use_global_device_ids=true       -> flattened ids
//       no channel_id, use_global_device_ids=true    -> error, as in XLA
//   * all-to-all, ragged-all-to-all, collective-broadcast, collective-permute(-start):
//       no channel_id -> cross-replica; channel_id -> cross-partition
//
// What the ids in replica_groups mean, per mode (empty replica_groups = one group of every
// id; not allowed for flattened ids):
//   cross-replica: replica ids; each group runs once per partition, within that partition.
//   cross-partition: partition ids; each group runs once per replica, within that replica.
//   cross-replica-and-partition: replica ids; a group holds those replicas in every partition
//     (replica-major order).
//   flattened ids: replica * num_partitions + partition.
// A device's rank in its group (the order of all-gather's concatenation, reduce-scatter's
// shards, all-to-all's chunks) is its position in the group as listed.
#ifndef HLOWB_REPLAY_MULTI_DEVICE_COLLECTIVE_GROUPS_H_
#define HLOWB_REPLAY_MULTI_DEVICE_COLLECTIVE_GROUPS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/attributes.h"
#include "core/ir/instruction.h"

namespace hlowb {

enum class CollectiveGroupMode : uint8_t {
  kCrossReplica,
  kCrossPartition,
  kCrossReplicaAndPartition,
  kFlattenedId,
};
std::string_view CollectiveGroupModeName(CollectiveGroupMode mode);

// The devices of a run. Device index d is XLA's flattened id: replica d / num_partitions,
// partition d % num_partitions.
struct DeviceGrid {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;

  int64_t size() const { return num_replicas * num_partitions; }
  int64_t Device(int64_t replica, int64_t partition) const {
    return replica * num_partitions + partition;
  }
  int64_t Replica(int64_t device) const { return device / num_partitions; }
  int64_t Partition(int64_t device) const { return device % num_partitions; }
  // XLA's device id under its default device assignment (ComputationPlacer):
  // partition * num_replicas + replica. use_device_id_as_input fills arguments with it.
  int64_t XlaDeviceId(int64_t device) const {
    return Partition(device) * num_replicas + Replica(device);
  }
  // "device 3 (replica 1, partition 1)".
  std::string Describe(int64_t device) const;
};

absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(const Instruction& instr);

// The explicit device order of an iota list: iota(prod(reshape_dims)) reshaped, transposed by
// transpose_perm, flattened row-major. InvalidArgument for inconsistent lists.
absl::StatusOr<std::vector<int64_t>> ExpandIotaDeviceList(const IotaDeviceList& iota);

// replica_groups in explicit form, whichever way they were written ({} stays empty).
absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups);

// Every device group of `instr` on `grid` (device indices, each group in rank order), as
// XLA's GetParticipatingDevicesGroups forms them. InvalidArgument when an id is out of range
// for its mode or a device falls in two groups. Devices in no group are simply absent.
absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveDeviceGroups(const Instruction& instr,
                                                                         const DeviceGrid& grid);

// collective-permute: source_target_pairs as (source device, target device) on `grid`. Pairs
// name replica ids (cross-replica; applied in every partition) or partition ids
// (cross-partition; applied in every replica). InvalidArgument for ids out of range, or two
// pairs with the same target (a device receives at most one value).
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermuteDevicePairs(
    const Instruction& instr, const DeviceGrid& grid);

// The frontend attribute naming a device-to-device send/recv's pairs.
inline constexpr std::string_view kSendRecvSourceTargetPairsKey =
    "_xla_send_recv_source_target_pairs";

// Parses "{{0,1},{1,2}}" (spaces allowed; "{}" is no pair). InvalidArgument otherwise.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSourceTargetPairs(
    std::string_view text);

// Device-to-device send/recv: the pairs of its _xla_send_recv_source_target_pairs frontend
// attribute as (source device, target device) on `grid`. As in XLA, a channel_id > 0 makes
// the ids partition ids (pairs applied in every replica), otherwise replica ids (applied in
// every partition). InvalidArgument when the attribute is missing or malformed, for ids out
// of range, or when a device is the source or the target of two pairs.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvDevicePairs(
    const Instruction& instr, const DeviceGrid& grid);

// The frontend attribute that makes a send/recv conditional (XLA's pipelined loops).
inline constexpr std::string_view kSendRecvValidationKey = "_xla_send_recv_validation";

// A send/recv's _xla_send_recv_validation, aligned with SendRecvDevicePairs: for each device
// pair, the range [first, last] of the instruction's executions (counted from 0 on each
// device) in which the pair transfers; "invalid" is an empty range for every pair. Empty when
// the attribute is absent (every execution transfers). InvalidArgument when the ranges do not
// match the pairs.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvValidationBounds(
    const Instruction& instr, const DeviceGrid& grid);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_MULTI_DEVICE_COLLECTIVE_GROUPS_H_
