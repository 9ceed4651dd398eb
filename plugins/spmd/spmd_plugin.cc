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


// The tile index of device 0 along each of the first `rank` tile dimensions (zeros when the
// sharding is absent or device 0 is not in it).
std::vector<int64_t> DeviceZeroTile(const Sharding* s, int rank) {
  std::vector<int64_t> tile(rank, 0);
  if (s == nullptr || s->tile_dims.empty()) return tile;
  std::vector<int64_t> devices = s->iota ? s->iota->Expand() : s->devices;
  auto it = std::find(devices.begin(), devices.end(), 0);
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
absl::StatusOr<Literal> MoveTile(const Literal& src, const Shape& result_shape,
                                 const std::vector<int64_t>& shard_dims,
                                 const std::vector<int64_t>& full_dims,
                                 const std::vector<int64_t>& offset, bool full_to_shard) {
  Literal out(Shape::Array(result_shape.element_type(), result_shape.dimensions()));
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
      std::memcpy(out.mutable_data()->data() + to * eb, src.data().data() + from * eb, eb);
    }
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < shard_dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
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

absl::StatusOr<Literal> EvalShardShape(const Instruction& instr, const Operands& ops,
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
  const std::vector<int64_t>& full = full_to_shard ? in.dimensions() : out.dimensions();
  const std::vector<int64_t>& shard = full_to_shard ? out.dimensions() : in.dimensions();
  const Instruction* operand = instr.operand_count() > 0 ? instr.operand(0) : nullptr;
  const Sharding* s = full_to_shard ? TiledSharding(operand) : TiledSharding(&instr);
  if (s == nullptr) s = full_to_shard ? TiledSharding(&instr) : TiledSharding(operand);
  std::vector<int64_t> tile = DeviceZeroTile(s, in.rank());
  std::vector<int64_t> offset(in.rank());
  for (int d = 0; d < in.rank(); ++d) offset[d] = tile[d] * shard[d];
  return MoveTile(*ops[0], out, shard, full, offset, full_to_shard);
}

}  // namespace

absl::Status RegisterSpmdPlugin(CustomCallRegistry* registry) {
  absl::Status st = registry->Register(
      {"Sharding", "", "spmd", "sharding annotation: identity", EvalShardingIdentity});
  if (!st.ok()) return st;
  st = registry->Register({"SPMDFullToShardShape", "", "spmd",
                           "full value -> device 0's shard (slice, zero-padded)",
                           [](const Instruction& instr, const Operands& ops) {
                             return EvalShardShape(instr, ops, true);
                           }});
  if (!st.ok()) return st;
  return registry->Register(
      {"SPMDShardToFullShape", "", "spmd",
       "device 0's shard -> full value (placed at its offset, zero elsewhere)",
       [](const Instruction& instr, const Operands& ops) {
         return EvalShardShape(instr, ops, false);
       }});
}

}  // namespace hlowb
