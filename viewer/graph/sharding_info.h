// What an instruction's `sharding=` means, decoded for people: its kind (replicated, maximal on
// one device, tiled, partially replicated, manual, unknown, per-element for tuples), the tile
// grid and the device order with iota forms (`[2,4]<=[4,2]T(1,0)`) expanded, the subgroup
// dimensions (`last_tile_dim_replicate`, `last_tile_dims={manual, replicated}`), how many
// devices take part, and the shape each device holds (each tiled dimension divided by its tile
// count, rounded up, saying where that needs padding). Shardings that cannot be right (a device
// list that does not match the grid, a grid with more dimensions than the shape, grids of
// billions of tiles) decode to an "invalid sharding: ..." explanation, never a crash.
//
// It also tells whether a module is a per-partition program (after SPMD partitioning: each
// instruction's shape is one partition's), and assigns the sharding colours of the graph view:
// equal shardings share a legend entry, different tile grids or device orders get different
// ones.
//
// Plain C++ (no Qt) so that the graph builder's tooltips and a worker thread can use it. It does
// not check a module against a device assignment or propagate shardings.
#ifndef HLOWB_VIEWER_GRAPH_SHARDING_INFO_H_
#define HLOWB_VIEWER_GRAPH_SHARDING_INFO_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/attributes.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "core/ir/shape.h"

namespace hlowb::graph {

enum class ShardingKind : uint8_t {
  kNone,                 // the instruction has no sharding attribute
  kReplicated,           // every device holds all of it
  kMaximal,              // one device holds all of it
  kTiled,                // split into tiles, one device per tile
  kPartiallyReplicated,  // split into tiles, each tile on a group of devices
  kManual,               // the program handles the partitioning itself
  kUnknown,              // left for propagation to decide
  kUnreduced,            // partial results not yet reduced across devices
  kTuple,                // one sharding per tuple element
  kUndecoded,            // a form this version keeps verbatim (e.g. mesh-based)
  kInvalid,              // cannot be right; DecodedSharding::error says why
};

// "replicated", "maximal", "tiled", "partially replicated", ...
std::string_view ShardingKindName(ShardingKind kind);

// One trailing dimension of the tile grid that does not split data.
struct ShardingSubgroup {
  SubgroupType type = SubgroupType::kReplicated;
  int64_t size = 1;
};

// Devices listed or laid out at most: larger grids are described, not expanded.
constexpr int64_t kMaxExpandedDevices = 65536;
// Grids with more tiles than this are refused as invalid.
constexpr int64_t kMaxShardingTiles = int64_t{1} << 24;

struct DecodedSharding {
  ShardingKind kind = ShardingKind::kNone;
  // kInvalid: "invalid sharding: <what is wrong>".
  std::string error;
  // The sharding as printed, without metadata: "{devices=[2,4]<=[8]}".
  std::string text;
  // kMaximal: the device.
  int64_t device = -1;
  // Tiled kinds: the whole tile grid (data dimensions, then subgroup dimensions), the tiles per
  // data dimension, and the subgroups.
  std::vector<int64_t> grid;
  std::vector<int64_t> data_tiles;
  std::vector<ShardingSubgroup> subgroups;
  bool last_tile_dim_replicate = false;
  // The grid and device order as written: "[2,4]<=[8]" or "[2,2]0,2,1,3".
  std::string grid_text;
  // The iota form when written that way ("[2,4]<=[4,2]T(1,0)") and what it stands for.
  std::string iota;
  std::string iota_meaning;
  // Devices in grid order (row-major); empty when more than kMaxExpandedDevices.
  std::vector<int64_t> devices;
  // Devices taking part: the grid's size for tiled kinds, 1 for maximal, 0 when not known
  // (replicated, manual: every device of the program).
  int64_t num_devices = 0;
  // Devices holding each tile (the product of the replicated subgroups).
  int64_t replication = 1;
  // The shape each device holds ("f32[8,8]") and, when some tiled dimension does not divide
  // evenly, how it is padded ("dimension 1: 10 in 4 tiles of 3 (2 padding)").
  std::string shard_shape;
  std::string padding;
  // For a per-partition program: the shape before partitioning (each partition's times the
  // tiles; an upper bound when a dimension was padded).
  std::string full_shape;
  // The sharding's own metadata and shard group, printed; empty when none.
  std::string metadata;
  std::string shard_group;
  // kTuple: one per leaf of the tuple shape.
  std::vector<DecodedSharding> elements;
  // Equal for equal shardings (the grid and device order, not metadata); tuples: empty.
  std::string key;
  // A short name for legends: "tiled [2,4]<=[8]", "maximal", "partially replicated ...".
  std::string label;
};

// Decodes `sharding` for a value of `shape`. `shape_is_shard`: the shape is already one
// partition's (a per-partition program), so the full shape is computed instead of the shard's.
DecodedSharding DecodeSharding(const Sharding& sharding, const Shape& shape,
                               bool shape_is_shard = false);
// The instruction's sharding; kind kNone when it has none.
DecodedSharding DecodeInstructionSharding(const Instruction& instruction,
                                          bool shape_is_shard = false);

// Which devices hold each tile of the data: one line per tile index over the data dimensions
// ("[0,1]" -> {1, 5}), at most `max_tiles` tiles. Empty when the devices are not expanded.
struct ShardingTile {
  std::vector<int64_t> index;
  std::vector<int64_t> devices;
};
std::vector<ShardingTile> ShardingTiles(const DecodedSharding& decoded, size_t max_tiles = 64);

// One line for tooltips: "tiled [2,4]<=[8]: 8 devices, each f32[8,8]".
std::string ShardingSummary(const DecodedSharding& decoded);

// Whether a module is a per-partition program: SPMD partitioning has run (num_partitions > 1,
// and the entry is XLA's partitioned "_spmd" one, or no instruction but the entry parameters
// carries a sharding other than manual and no sharding custom call is left), so each shape is
// one partition's.
struct ModulePartitioning {
  bool per_partition_program = false;
  int64_t num_partitions = 1;
};
ModulePartitioning PartitioningOf(const Module& module);

// The graph view's sharding colours of a module. Entry 0 is "no sharding"; the others are
// distinct shardings in order of first appearance (computations in module order, instructions
// in order), where all maximal shardings share one entry and so do all replicated, manual,
// unknown, unreduced, undecoded and invalid ones. Tiled and partially replicated entries have
// a `slot`: their index among those, for a palette of distinct colours.
struct ShardingLegendEntry {
  ShardingKind kind = ShardingKind::kNone;
  std::string label;
  int slot = -1;
};
struct ShardingColoring {
  std::vector<ShardingLegendEntry> entries;
  // Per instruction with a sharding: entry indices, one per tuple element (one for the rest).
  std::unordered_map<const Instruction*, std::vector<int>> of;
  ModulePartitioning partitioning;
};
ShardingColoring ColorBySharding(const Module& module);

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_SHARDING_INFO_H_
