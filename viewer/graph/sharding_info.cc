#include "viewer/graph/sharding_info.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/ir/computation.h"
#include "core/ir/opcode.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb::graph {
namespace {

std::string_view SubgroupName(SubgroupType t) {
  switch (t) {
    case SubgroupType::kReplicated: return "replicated";
    case SubgroupType::kManual: return "manual";
    case SubgroupType::kUnreduced: return "unreduced";
    case SubgroupType::kMaximal: return "maximal";
  }
  return "?";
}

std::string Join(const std::vector<int64_t>& v, std::string_view sep = ",") {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s.append(sep);
    s.append(std::to_string(v[i]));
  }
  return s;
}

// "1,234,567".
std::string Grouped(int64_t n) {
  std::string digits = std::to_string(n);
  std::string out;
  const size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && i >= first && (i - first) % 3 == 0) out.push_back(',');
    out.push_back(digits[i]);
  }
  return out;
}

// Product of `dims`; false when one is below 1 or the product passes `limit`.
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool BoundedProduct(const std::vector<int64_t>& dims, int64_t limit, int64_t* out) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 1) return false;
    if (p > limit / d) return false;
    p *= d;
  }
  *out = p;
  return true;
}

void StripMetadata(Sharding* s) {
  s->metadata.clear();
  for (Sharding& e : s->tuple_elements) StripMetadata(&e);
}

void Leaves(const Shape& shape, std::vector<const Shape*>* out) {
  if (shape.IsTuple()) {
    for (const Shape& e : shape.tuple_shapes()) Leaves(e, out);
  } else {
    out->push_back(&shape);
  }
}

DecodedSharding Invalid(DecodedSharding d, std::string why) {
  d.kind = ShardingKind::kInvalid;
  d.error = "invalid sharding: " + why;
  d.key = "invalid";
  d.label = "invalid";
  d.devices.clear();
  d.shard_shape.clear();
  d.padding.clear();
  d.full_shape.clear();
  return d;
}

// Fills the device order of a tiled sharding; an error text when it cannot be right.
std::string DecodeDevices(const Sharding& s, int64_t tiles, DecodedSharding* d) {
  if (s.iota) {
    const IotaDeviceList& iota = *s.iota;
    d->iota = StrCat("[", Join(iota.dims), "]<=[", Join(iota.reshape_dims), "]");
    if (!iota.transpose_perm.empty()) StrAppend(&d->iota, "T(", Join(iota.transpose_perm), ")");
    const std::vector<int64_t>& rdims = iota.reshape_dims.empty() ? iota.dims : iota.reshape_dims;
    int64_t total = 0;
    if (!BoundedProduct(rdims, kMaxShardingTiles, &total) || total != tiles) {
      return StrCat("the iota reshape [", Join(rdims), "] does not hold the ", Grouped(tiles),
                    " tiles of the grid [", Join(d->grid), "]");
    }
    if (!iota.transpose_perm.empty()) {
      std::vector<bool> seen(rdims.size(), false);
      bool ok = iota.transpose_perm.size() == rdims.size();
      for (int64_t p : iota.transpose_perm) {
        if (!ok) break;
        if (p < 0 || p >= static_cast<int64_t>(rdims.size()) || seen[p]) {
          ok = false;
        } else {
          seen[p] = true;
        }
      }
      if (!ok) {
        return StrCat("T(", Join(iota.transpose_perm), ") is not a permutation of the ",
                      rdims.size(), " iota dimensions");
      }
    }
    d->iota_meaning = StrCat("devices 0..", tiles - 1, " laid out as [", Join(rdims), "]");
    if (!iota.transpose_perm.empty()) {
      std::vector<int64_t> transposed;
      for (int64_t p : iota.transpose_perm) transposed.push_back(rdims[p]);
      StrAppend(&d->iota_meaning, ", transposed by (", Join(iota.transpose_perm), ") to [",
                Join(transposed), "]");
    }
    StrAppend(&d->iota_meaning, ", read row-major into the grid [", Join(d->grid), "]");
    if (tiles <= kMaxExpandedDevices) d->devices = iota.Expand();
    d->grid_text = d->iota;
    return {};
  }
  if (static_cast<int64_t>(s.devices.size()) != tiles) {
    return StrCat("the device list has ", Grouped(static_cast<int64_t>(s.devices.size())),
                  s.devices.size() == 1 ? " device" : " devices", " but the tile grid [",
                  Join(d->grid), "] has ", Grouped(tiles), " tiles");
  }
  std::vector<int64_t> sorted = s.devices;
  std::sort(sorted.begin(), sorted.end());
  if (!sorted.empty() && sorted.front() < 0) {
    return StrCat("device ", sorted.front(), " is negative");
  }
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i] == sorted[i - 1]) return StrCat("device ", sorted[i], " holds two tiles");
  }
  if (tiles <= kMaxExpandedDevices) d->devices = s.devices;
  std::string list = Join(s.devices);
  if (const size_t cut = list.size() > 48 ? list.rfind(',', 47) : std::string::npos;
      cut != std::string::npos) {
    list.resize(cut);
    list += ",…";
  }
  d->grid_text = StrCat("[", Join(d->grid), "]", list);
  return {};
}

DecodedSharding DecodeTiled(const Sharding& s, const Shape& shape, bool shape_is_shard,
                            DecodedSharding d) {
  d.grid = !s.tile_dims.empty() ? s.tile_dims : s.iota ? s.iota->dims : std::vector<int64_t>();
  if (d.grid.empty()) return Invalid(std::move(d), "devices=[] has no tile dimensions");
  for (size_t i = 0; i < d.grid.size(); ++i) {
    if (d.grid[i] < 1) {
      return Invalid(std::move(d), StrCat("tile dimension ", i, " is ", d.grid[i],
                                          " (every dimension needs at least one tile)"));
    }
  }
  int64_t tiles = 0;
  if (!BoundedProduct(d.grid, kMaxShardingTiles, &tiles)) {
    return Invalid(std::move(d), StrCat("the tile grid [", Join(d.grid), "] has more than ",
                                        Grouped(kMaxShardingTiles), " tiles"));
  }
  if (s.last_tile_dim_replicate && !s.last_tile_dims.empty()) {
    return Invalid(std::move(d), "last_tile_dim_replicate and last_tile_dims cannot both be set");
  }
  d.last_tile_dim_replicate = s.last_tile_dim_replicate;
  const size_t subgroup_dims = s.last_tile_dim_replicate ? 1 : s.last_tile_dims.size();
  if (subgroup_dims > d.grid.size()) {
    return Invalid(std::move(d), StrCat(subgroup_dims, " subgroup dimensions but the tile grid [",
                                        Join(d.grid), "] has only ", d.grid.size()));
  }
  const size_t data_rank = d.grid.size() - subgroup_dims;
  d.data_tiles.assign(d.grid.begin(), d.grid.begin() + static_cast<std::ptrdiff_t>(data_rank));
  bool replicated_subgroup = false;
  for (size_t i = 0; i < subgroup_dims; ++i) {
    ShardingSubgroup g;
    g.type = s.last_tile_dim_replicate ? SubgroupType::kReplicated : s.last_tile_dims[i];
    g.size = d.grid[data_rank + i];
    if (g.type == SubgroupType::kReplicated) {
      d.replication *= g.size;
      replicated_subgroup = true;
    }
    d.subgroups.push_back(g);
  }
  d.kind = replicated_subgroup ? ShardingKind::kPartiallyReplicated : ShardingKind::kTiled;
  d.num_devices = tiles;
  if (std::string error = DecodeDevices(s, tiles, &d); !error.empty()) {
    return Invalid(std::move(d), std::move(error));
  }
  if (!shape.IsArray()) {
    return Invalid(std::move(d), shape.IsTuple()
                                     ? "a tiled sharding on a tuple needs one sharding per element"
                                     : "only arrays can be tiled");
  }
  if (static_cast<int>(data_rank) != shape.rank()) {
    return Invalid(std::move(d),
                   StrCat("the tile grid [", Join(d.grid), "] splits ", data_rank,
                          data_rank == 1 ? " dimension" : " dimensions", " but ",
                          PrintShape(shape, false), " has ", shape.rank()));
  }
  Shape out = shape;
  out.clear_layout();
  std::vector<std::string> padding;
  for (int i = 0; i < shape.rank(); ++i) {
    const int64_t dim = shape.dimension(i);
    const int64_t n = d.data_tiles[i];
    if (dim == Shape::kUnboundedSize || n == 1) continue;
    if (shape_is_shard) {
      const bool fits = dim <= std::numeric_limits<int64_t>::max() / n;
      (*out.mutable_dimensions())[i] = fits ? dim * n : dim;
      continue;
    }
    const int64_t each = dim / n + (dim % n != 0 ? 1 : 0);
    (*out.mutable_dimensions())[i] = each;
    if (dim % n != 0) {
      padding.push_back(StrCat("dimension ", i, ": ", dim, " in ", n, " tiles of ", each, " (",
                               each * n - dim, " padding)"));
    }
  }
  if (shape_is_shard) {
    d.shard_shape = PrintShape(shape, false);
    d.full_shape = PrintShape(out, false);
  } else {
    d.shard_shape = PrintShape(out, false);
    for (size_t i = 0; i < padding.size(); ++i) StrAppend(&d.padding, i ? "; " : "", padding[i]);
  }
  // The key: the grid, the device order and the subgroup types.
  d.key = StrCat(ShardingKindName(d.kind), " [", Join(d.grid), "]");
  if (!d.devices.empty()) {
    StrAppend(&d.key, Join(d.devices));
  } else {
    StrAppend(&d.key, d.grid_text);
  }
  for (const ShardingSubgroup& g : d.subgroups) StrAppend(&d.key, " ", SubgroupName(g.type));
  d.label = StrCat(ShardingKindName(d.kind), " ", d.grid_text);
  if (s.last_tile_dim_replicate) {
    StrAppend(&d.label, " last_tile_dim_replicate");
  } else if (!d.subgroups.empty()) {
    StrAppend(&d.label, " {");
    for (size_t i = 0; i < d.subgroups.size(); ++i) {
      StrAppend(&d.label, i ? "," : "", SubgroupName(d.subgroups[i].type));
    }
    StrAppend(&d.label, "}");
  }
  return d;
}

DecodedSharding DecodeOne(const Sharding& s, const Shape& shape, bool shape_is_shard) {
  DecodedSharding d;
  {
    Sharding bare = s;
    StripMetadata(&bare);
    d.text = PrintSharding(bare);
  }
  if (s.metadata.size() == 1) {
    d.metadata = PrintMetadata(s.metadata[0]);
  } else {
    for (size_t i = 0; i < s.metadata.size(); ++i) {
      StrAppend(&d.metadata, i ? ", " : "", PrintMetadata(s.metadata[i]));
    }
  }
  if (s.shard_group == Sharding::ShardGroup::kAs) {
    d.shard_group = StrCat("shard_as ", s.shard_group_id);
  }
  if (s.shard_group == Sharding::ShardGroup::kLike) {
    d.shard_group = StrCat("shard_like ", s.shard_group_id);
  }
  const std::string whole = PrintShape(shape, false);
  auto fixed = [&](ShardingKind kind) {
    d.kind = kind;
    d.key = std::string(ShardingKindName(kind));
    d.label = d.key;
    if (shape_is_shard) {
      d.full_shape = whole;
    }
    d.shard_shape = whole;
    return d;
  };
  switch (s.type) {
    case ShardingType::kReplicated: return fixed(ShardingKind::kReplicated);
    case ShardingType::kManual: return fixed(ShardingKind::kManual);
    case ShardingType::kUnknown: return fixed(ShardingKind::kUnknown);
    case ShardingType::kUnreduced: return fixed(ShardingKind::kUnreduced);
    case ShardingType::kMaximal: {
      d.device = s.devices.empty() ? 0 : s.devices[0];
      if (d.device < 0) return Invalid(std::move(d), StrCat("device ", d.device, " is negative"));
      d.num_devices = 1;
      return fixed(ShardingKind::kMaximal);
    }
    case ShardingType::kRaw: {
      d.kind = ShardingKind::kUndecoded;
      d.key = "undecoded";
      d.label = "not decoded";
      return d;
    }
    case ShardingType::kTiled: return DecodeTiled(s, shape, shape_is_shard, std::move(d));
    case ShardingType::kTuple: break;
  }
  // Tuples: one sharding per leaf of the shape.
  d.kind = ShardingKind::kTuple;
  d.label = "tuple";
  std::vector<const Shape*> leaves;
  if (shape.IsTuple()) Leaves(shape, &leaves);
  if (!shape.IsTuple()) {
    return Invalid(std::move(d), StrCat("a tuple sharding of ", s.tuple_elements.size(),
                                        " elements on the non-tuple shape ", whole));
  }
  if (leaves.size() != s.tuple_elements.size()) {
    return Invalid(std::move(d),
                   StrCat(s.tuple_elements.size(), " element shardings for a tuple of ",
                          leaves.size(), leaves.size() == 1 ? " element" : " elements"));
  }
  for (size_t i = 0; i < leaves.size(); ++i) {
    const Sharding& e = s.tuple_elements[i];
    if (e.type == ShardingType::kTuple) {
      DecodedSharding bad;
      bad.text = "{...}";
      d.elements.push_back(Invalid(std::move(bad), "a tuple sharding inside a tuple sharding"));
      continue;
    }
    d.elements.push_back(DecodeOne(e, *leaves[i], shape_is_shard));
  }
  return d;
}

}  // namespace

std::string_view ShardingKindName(ShardingKind kind) {
  switch (kind) {
    case ShardingKind::kNone: return "no sharding";
    case ShardingKind::kReplicated: return "replicated";
    case ShardingKind::kMaximal: return "maximal";
    case ShardingKind::kTiled: return "tiled";
    case ShardingKind::kPartiallyReplicated: return "partially replicated";
    case ShardingKind::kManual: return "manual";
    case ShardingKind::kUnknown: return "unknown";
    case ShardingKind::kUnreduced: return "unreduced";
    case ShardingKind::kTuple: return "tuple";
    case ShardingKind::kUndecoded: return "not decoded";
    case ShardingKind::kInvalid: return "invalid";
  }
  return "?";
}

DecodedSharding DecodeSharding(const Sharding& sharding, const Shape& shape,
                               bool shape_is_shard) {
  return DecodeOne(sharding, shape, shape_is_shard);
}

DecodedSharding DecodeInstructionSharding(const Instruction& instruction, bool shape_is_shard) {
  if (instruction.sharding() == nullptr) {
    DecodedSharding d;
    d.label = std::string(ShardingKindName(ShardingKind::kNone));
    d.key = d.label;
    return d;
  }
  return DecodeOne(*instruction.sharding(), instruction.shape(), shape_is_shard);
}

std::vector<ShardingTile> ShardingTiles(const DecodedSharding& d, size_t max_tiles) {
  std::vector<ShardingTile> out;
  if (d.devices.empty() || d.grid.empty()) return out;
  const size_t data_rank = d.data_tiles.size();
  int64_t per_tile = 1;
  for (size_t i = data_rank; i < d.grid.size(); ++i) per_tile *= d.grid[i];
  const int64_t tiles = static_cast<int64_t>(d.devices.size()) / std::max<int64_t>(per_tile, 1);
  std::vector<int64_t> index(data_rank, 0);
  for (int64_t t = 0; t < tiles && out.size() < max_tiles; ++t) {
    ShardingTile tile;
    tile.index = index;
    for (int64_t k = 0; k < per_tile; ++k) tile.devices.push_back(d.devices[t * per_tile + k]);
    out.push_back(std::move(tile));
    for (size_t i = data_rank; i-- > 0;) {
      if (++index[i] < d.grid[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

std::string ShardingSummary(const DecodedSharding& d) {
  switch (d.kind) {
    case ShardingKind::kNone: return "no sharding";
    case ShardingKind::kInvalid: return d.error;
    case ShardingKind::kUndecoded: return StrCat("sharding ", d.text, " (not decoded)");
    case ShardingKind::kMaximal: return StrCat("maximal: all of it on device ", d.device);
    case ShardingKind::kReplicated: return "replicated: every device holds all of it";
    case ShardingKind::kManual: return "manual: partitioned by the program itself";
    case ShardingKind::kUnknown: return "unknown: left to sharding propagation";
    case ShardingKind::kUnreduced: return "unreduced: partial results across devices";
    case ShardingKind::kTuple: {
      std::string s = StrCat("tuple of ", d.elements.size(), ":");
      for (size_t i = 0; i < d.elements.size(); ++i) {
        if (i == 8) {
          StrAppend(&s, "\n  … ", d.elements.size() - 8, " more");
          break;
        }
        StrAppend(&s, "\n  {", i, "} ", ShardingSummary(d.elements[i]));
      }
      return s;
    }
    case ShardingKind::kTiled:
    case ShardingKind::kPartiallyReplicated: {
      std::string s = StrCat(d.label, ": ", Grouped(d.num_devices), " devices");
      if (d.replication > 1) StrAppend(&s, ", each tile on ", d.replication);
      if (!d.full_shape.empty()) {
        StrAppend(&s, ", full shape ", d.full_shape);
      } else if (!d.shard_shape.empty()) {
        StrAppend(&s, ", each device ", d.shard_shape);
        if (!d.padding.empty()) StrAppend(&s, " (padded)");
      }
      return s;
    }
  }
  return d.text;
}

ModulePartitioning PartitioningOf(const Module& module) {
  ModulePartitioning p;
  p.num_partitions = module.config().num_partitions;
  if (p.num_partitions <= 1) return p;
  const Computation* entry = module.entry();
  auto all_manual = [](const Sharding& s) {
    if (s.type == ShardingType::kTuple) {
      for (const Sharding& e : s.tuple_elements) {
        if (e.type != ShardingType::kManual) return false;
      }
      return true;
    }
    return s.type == ShardingType::kManual;
  };
  bool sharded_parameters = false;
  bool communicates = false;
  for (const auto& c : module.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == Opcode::kCustomCall) {
        const std::string& target = i->attrs_or_default().custom_call_target;
        if (target == "Sharding" || target == "SPMDFullToShardShape" ||
            target == "SPMDShardToFullShape" || target.rfind("xla.sdy.", 0) == 0) {
          return p;  // sharding annotations still waiting for the partitioner
        }
      }
      if (OpcodeCategoryOf(i->opcode()) == OpcodeCategory::kCollective ||
          i->opcode() == Opcode::kPartitionId) {
        communicates = true;
      }
      if (i->sharding() == nullptr || all_manual(*i->sharding())) continue;
      if (c.get() == entry && i->opcode() == Opcode::kParameter) {
        sharded_parameters = true;
        continue;
      }
      // Any other sharded instruction: still one program for all partitions, unless XLA named
      // the entry as partitioned.
      if (entry == nullptr || !EndsWith(entry->name(), "_spmd")) return p;
    }
  }
  const bool spmd_entry = entry != nullptr && EndsWith(entry->name(), "_spmd");
  p.per_partition_program = spmd_entry || !sharded_parameters || communicates;
  return p;
}

ShardingColoring ColorBySharding(const Module& module) {
  ShardingColoring out;
  out.partitioning = PartitioningOf(module);
  const bool shard_shapes = out.partitioning.per_partition_program;
  ShardingLegendEntry none;
  none.kind = ShardingKind::kNone;
  none.label = std::string(ShardingKindName(ShardingKind::kNone));
  out.entries.push_back(none);
  std::unordered_map<std::string, int> by_key;
  int slots = 0;
  auto entry_of = [&](const DecodedSharding& d) {
    auto [it, added] = by_key.emplace(d.key, static_cast<int>(out.entries.size()));
    if (added) {
      ShardingLegendEntry e;
      e.kind = d.kind;
      e.label = d.label;
      if (d.kind == ShardingKind::kTiled || d.kind == ShardingKind::kPartiallyReplicated) {
        e.slot = slots++;
      }
      out.entries.push_back(std::move(e));
    }
    return it->second;
  };
  for (const auto& c : module.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->sharding() == nullptr) continue;
      const DecodedSharding d = DecodeOne(*i->sharding(), i->shape(), shard_shapes);
      std::vector<int>& indices = out.of[i];
      if (d.kind == ShardingKind::kTuple) {
        for (const DecodedSharding& e : d.elements) indices.push_back(entry_of(e));
        if (indices.empty()) indices.push_back(0);
      } else {
        indices.push_back(entry_of(d));
      }
    }
  }
  return out;
}

}  // namespace hlowb::graph
