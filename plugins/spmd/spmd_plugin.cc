#include "plugins/spmd/spmd_plugin.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

const Sharding* TiledSharding(const Instruction* instr) {
  if (instr == nullptr || instr->sharding() == nullptr) return nullptr;
  const Sharding* s = instr->sharding();
  return s->type == ShardingType::kTiled ? s : nullptr;
}


// The tile index of `partition` along each of the first `rank` tile dimensions (zeros when the
// sharding is absent or does not list the partition). A sharding's device list names
// partitions; trailing tile dimensions (replication, subgroups) are not array dimensions.
std::vector<int64_t> PartitionTile(const Sharding* s, int rank, int64_t partition) {
  std::vector<int64_t> tile(rank, 0);
  if (s == nullptr || s->tile_dims.empty()) return tile;
  std::vector<int64_t> devices = s->iota ? s->iota->Expand() : s->devices;
  auto it = std::find(devices.begin(), devices.end(), partition);
  if (it == devices.end()) return tile;
  int64_t linear = it - devices.begin();
  std::vector<int64_t> index(s->tile_dims.size(), 0);
  for (int d = static_cast<int>(s->tile_dims.size()) - 1; d >= 0; --d) {
    int64_t size = std::max<int64_t>(s->tile_dims[d], 1);
    index[d] = linear % size;
    linear /= size;
  }
  for (int d = 0; d < rank && d < static_cast<int>(index.size()); ++d) tile[d] = index[d];
  return tile;
}

// Copies the overlap of `shard` (placed at `offset` inside the full value) between the two.
// full_to_shard: reads the full value into a shard-shaped result; otherwise the reverse.
// `out` has the result's shape (a shard, or the full value that already holds other tiles).
void MoveTile(const Literal& src, const std::vector<int64_t>& shard_dims,
              const std::vector<int64_t>& full_dims, const std::vector<int64_t>& offset,
              bool full_to_shard, Literal* out) {
  const int rank = static_cast<int>(shard_dims.size());
  const int eb = src.element_bytes();
  std::vector<int64_t> full_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) full_strides[d] = full_strides[d + 1] * full_dims[d + 1];
  int64_t shard_count = 1;
  for (int64_t v : shard_dims) shard_count *= v;
  std::vector<int64_t> idx(rank, 0);
  for (int64_t linear = 0; linear < shard_count; ++linear) {
    bool inside = true;
    int64_t full_linear = 0;
    for (int d = 0; d < rank; ++d) {
      int64_t p = idx[d] + offset[d];
      if (p >= full_dims[d]) inside = false;
      full_linear += p * full_strides[d];
    }
    if (inside) {
      int64_t from = full_to_shard ? full_linear : linear;
      int64_t to = full_to_shard ? linear : full_linear;
      std::memcpy(out->mutable_data()->data() + to * eb, src.data().data() + from * eb, eb);
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shard_dims[d]) break;
      idx[d] = 0;
    }
  }
}

absl::StatusOr<Literal> EvalShardingIdentity(const Instruction& instr, const Operands& ops) {
  if (ops.size() != 1) return absl::InvalidArgumentError("Sharding takes one operand");
  if (!ops[0]->shape().Compatible(instr.shape())) {
    return absl::InvalidArgumentError(StrCat("operand ", PrintShape(ops[0]->shape(), false),
                                             " differs from the result ",
                                             PrintShape(instr.shape(), false)));
  }
  return *ops[0];
}

// What a shard conversion needs: the full and shard dimensions and the tiled sharding that
// places the shards.
struct ShardConversion {
  std::vector<int64_t> full;
  std::vector<int64_t> shard;
  const Sharding* sharding = nullptr;
  int rank = 0;
};

absl::StatusOr<ShardConversion> PrepareConversion(const Instruction& instr, const Operands& ops,
                                                  bool full_to_shard) {
  if (ops.size() != 1) return absl::InvalidArgumentError("takes one operand");
  const Shape& in = ops[0]->shape();
  const Shape& out = instr.shape();
  if (!in.IsArray() || !out.IsArray() || in.rank() != out.rank() ||
      in.element_type() != out.element_type()) {
    return absl::InvalidArgumentError(StrCat("operand ", PrintShape(in, false), " and result ",
                                             PrintShape(out, false),
                                             " must be arrays of one type and rank"));
  }
  for (int d = 0; d < in.rank(); ++d) {
    if (in.dimension(d) < 0 || out.dimension(d) < 0) {
      return absl::UnimplementedError("unbounded dimensions cannot be converted");
    }
  }
  ShardConversion c;
  c.full = full_to_shard ? in.dimensions() : out.dimensions();
  c.shard = full_to_shard ? out.dimensions() : in.dimensions();
  c.rank = in.rank();
  const Instruction* operand = instr.operand_count() > 0 ? instr.operand(0) : nullptr;
  c.sharding = full_to_shard ? TiledSharding(operand) : TiledSharding(&instr);
  if (c.sharding == nullptr) c.sharding = full_to_shard ? TiledSharding(&instr) : TiledSharding(operand);
  return c;
}

std::vector<int64_t> TileOffset(const ShardConversion& c, int64_t partition) {
  std::vector<int64_t> tile = PartitionTile(c.sharding, c.rank, partition);
  std::vector<int64_t> offset(c.rank);
  for (int d = 0; d < c.rank; ++d) offset[d] = tile[d] * c.shard[d];
  return offset;
}

Literal ZerosOf(const Instruction& instr) {
  return Literal(Shape::Array(instr.shape().element_type(), instr.shape().dimensions()));
}

// FullToShard on `partition`: its tile of the full value.
absl::StatusOr<Literal> FullToShard(const Instruction& instr, const Operands& ops,
                                    int64_t partition) {
  auto c = PrepareConversion(instr, ops, true);
  if (!c.ok()) return c.status();
  Literal out = ZerosOf(instr);
  MoveTile(*ops[0], c->shard, c->full, TileOffset(*c, partition), true, &out);
  return out;
}

// ShardToFull from the shards of `partitions` (values[i] is partitions[i]'s shard).
absl::StatusOr<Literal> ShardToFull(const Instruction& instr, const Operands& ops,
                                    const std::vector<int64_t>& partitions,
                                    const std::vector<const Literal*>& values) {
  auto c = PrepareConversion(instr, ops, false);
  if (!c.ok()) return c.status();
  Literal out = ZerosOf(instr);
  for (size_t i = 0; i < partitions.size(); ++i) {
    if (!values[i]->shape().Compatible(ops[0]->shape())) {
      return absl::InvalidArgumentError(
          StrCat("partition ", partitions[i], " holds a shard of shape ",
                 PrintShape(values[i]->shape(), false), ", this one ",
                 PrintShape(ops[0]->shape(), false)));
    }
    MoveTile(*values[i], c->shard, c->full, TileOffset(*c, partitions[i]), false, &out);
  }
  return out;
}

absl::StatusOr<Literal> DeviceShardToFull(const Instruction& instr, const Operands& ops,
                                          DeviceCollectives& device) {
  if (ops.size() != 1) return absl::InvalidArgumentError("takes one operand");
  // Every partition of this replica contributes its shard; the full value is their tiles put
  // together (tiles that several partitions hold, under replication, hold the same values).
  std::vector<int64_t> devices = device.ReplicaDevices();
  auto shards = device.ExchangeValues(instr, devices, *ops[0]);
  if (!shards.ok()) return shards.status();
  std::vector<int64_t> partitions;
  std::vector<const Literal*> values;
  for (size_t p = 0; p < devices.size(); ++p) {
    partitions.push_back(static_cast<int64_t>(p));
    values.push_back(&(*shards)[p]);
  }
  return ShardToFull(instr, ops, partitions, values);
}

}  // namespace

absl::Status RegisterSpmdPlugin(CustomCallRegistry* registry) {
  CustomCallHandlerInfo sharding{"Sharding", "", "spmd", "sharding annotation: identity",
                                 EvalShardingIdentity, {}};
  if (absl::Status st = registry->Register(std::move(sharding)); !st.ok()) return st;
  CustomCallHandlerInfo full_to_shard{
      "SPMDFullToShardShape", "", "spmd",
      "full value -> this partition's tile (slice, zero-padded); partition 0 on one device",
      [](const Instruction& instr, const Operands& ops) { return FullToShard(instr, ops, 0); },
      [](const Instruction& instr, const Operands& ops, DeviceCollectives& device) {
        return FullToShard(instr, ops, device.partition_id());
      }};
  if (absl::Status st = registry->Register(std::move(full_to_shard)); !st.ok()) return st;
  CustomCallHandlerInfo shard_to_full{
      "SPMDShardToFullShape", "", "spmd",
      "every partition's tile -> the full value; on one device partition 0's tile, zeros "
      "elsewhere",
      [](const Instruction& instr, const Operands& ops) {
        return ShardToFull(instr, ops, {0}, {ops.empty() ? nullptr : ops[0]});
      },
      DeviceShardToFull};
  return registry->Register(std::move(shard_to_full));
}

}  // namespace hlowb
