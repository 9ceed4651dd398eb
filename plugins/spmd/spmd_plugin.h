// The SPMD partitioner's marker custom calls, with single-device semantics: the replay stands
// for device 0 of the tile assignment.
//
//   Sharding              identity (it only annotates its operand with a sharding)
//   SPMDFullToShardShape  full -> shard: the tile device 0 owns, i.e. a slice of the full value
//                         at that tile's offset, zero-padded where a shard extends past the
//                         end of an unevenly divided dimension
//   SPMDShardToFullShape  shard -> full: a zero value of the full shape with the shard placed at
//                         device 0's tile offset (the other devices' tiles are not available on
//                         one device)
//
// The tile assignment comes from the tiled sharding next to the call: the operand's for
// FullToShard (the preceding Sharding call), the instruction's own for ShardToFull, falling back
// to the other one; without a tiled sharding the offset is 0. Not here: exchanging shards
// between devices (multi-device replay does that), or partial/subgroup replication beyond
// reading the tile dimensions.
#ifndef HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_
#define HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterSpmdPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_SPMD_SPMD_PLUGIN_H_
