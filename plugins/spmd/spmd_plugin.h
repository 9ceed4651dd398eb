// The SPMD partitioner's marker custom calls.
//
//   Sharding              identity (it only annotates its operand with a sharding)
//   SPMDFullToShardShape  full -> shard: the tile this device's partition owns, i.e. a slice of
//                         the full value at that tile's offset, zero-padded where a shard
//                         extends past the end of an unevenly divided dimension
//   SPMDShardToFullShape  shard -> full: every partition of this device's replica gives its
//                         shard (an exchange between the devices) and each is placed at its
//                         tile's offset
//
// On one device the replay stands for partition 0: FullToShard takes partition 0's tile, and
// ShardToFull places partition 0's shard in a zero value (the other tiles are not there).
// The tile assignment comes from the tiled sharding next to the call: the operand's for
// FullToShard (the preceding Sharding call), the instruction's own for ShardToFull, falling back
// to the other one; without a tiled sharding the offset is 0. A sharding's device list names
// partitions; trailing tile dimensions (replication, subgroups) only repeat tiles.
#ifndef HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_
#define HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterSpmdPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_
