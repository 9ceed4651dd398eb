#include "replay/multi_device/collective_groups.h"

#include <set>

#include "core/ir/opcode.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

// Bounds the devices an iota list may name, so a corrupt list cannot allocate the impossible.

std::string Ref(const Instruction& instr) {
  return StrCat("%", instr.name(), " (", OpcodeName(instr.opcode()), ")");
}

bool UsesBooleanGlobalIds(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string_view CollectiveGroupModeName(CollectiveGroupMode mode) {
  switch (mode) {
    case CollectiveGroupMode::kCrossReplica: return "cross-replica";
    case CollectiveGroupMode::kCrossPartition: return "cross-partition";
    case CollectiveGroupMode::kCrossReplicaAndPartition: return "cross-replica-and-partition";
    case CollectiveGroupMode::kFlattenedId: return "flattened-id";
  }
  return "?";
}

std::string DeviceGrid::Describe(int64_t device) const {
  return StrCat("device ", device, " (replica ", Replica(device), ", partition ",
                Partition(device), ")");
}

absl::StatusOr<CollectiveGroupMode> GetCollectiveGroupMode(const Instruction& instr) {
  const InstructionAttrs& a = instr.attrs_or_default();
  const bool has_channel = a.channel_id.has_value();
  switch (instr.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      break;
    default:
      return absl::InvalidArgumentError(StrCat(Ref(instr), " is not a collective op"));
  }
  if (!UsesBooleanGlobalIds(instr.opcode())) {
    return has_channel ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
  }
  const bool global = a.use_global_device_ids.value_or(false);
  if (!has_channel) {
    if (global) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " has use_global_device_ids=true without a channel_id; XLA "
                 "rejects this combination"));
    }
    return CollectiveGroupMode::kCrossReplica;
  }
  return global ? CollectiveGroupMode::kFlattenedId
                : CollectiveGroupMode::kCrossReplicaAndPartition;
}

absl::StatusOr<std::vector<int64_t>> ExpandIotaDeviceList(const IotaDeviceList& iota) {
  std::vector<int64_t> out = iota.Expand();
  if (out.empty()) {
    return absl::InvalidArgumentError(
        "iota device list is empty, too large, has reshape dimensions that do not hold its "
        "devices, or a transpose that is not a permutation");
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ExpandReplicaGroups(const ReplicaGroups& groups) {
  if (!groups.iota) return groups.groups;
  auto flat = ExpandIotaDeviceList(*groups.iota);
  if (!flat.ok()) return flat.status();
  if (groups.iota->dims.empty() || groups.iota->dims.back() <= 0) {
    return absl::InvalidArgumentError("iota replica groups need a positive group size");
  }
  const int64_t size = groups.iota->dims.back();
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < flat->size(); i += static_cast<size_t>(size)) {
    out.emplace_back(flat->begin() + static_cast<std::ptrdiff_t>(i),
                     flat->begin() + static_cast<std::ptrdiff_t>(i + size));
  }
  return out;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> CollectiveDeviceGroups(const Instruction& instr,
                                                                         const DeviceGrid& grid) {
  auto mode = GetCollectiveGroupMode(instr);
  if (!mode.ok()) return mode.status();
  const InstructionAttrs& a = instr.attrs_or_default();
  std::vector<std::vector<int64_t>> ids;
  if (a.replica_groups) {
    auto expanded = ExpandReplicaGroups(*a.replica_groups);
    if (!expanded.ok()) {
      return absl::InvalidArgumentError(
          StrCat("replica_groups of ", Ref(instr), ": ", expanded.status().message()));
    }
    ids = std::move(*expanded);
  }
  const int64_t R = grid.num_replicas;
  const int64_t P = grid.num_partitions;
  int64_t limit = R;
  std::string_view id_kind = "replica";
  if (*mode == CollectiveGroupMode::kCrossPartition) {
    limit = P;
    id_kind = "partition";
  } else if (*mode == CollectiveGroupMode::kFlattenedId) {
    limit = R * P;
    id_kind = "flattened device";
  }
  if (ids.empty()) {
    if (*mode == CollectiveGroupMode::kFlattenedId) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " uses flattened device ids (channel_id with "
                 "use_global_device_ids=true) and so needs explicit replica_groups"));
    }
    ids.emplace_back();
    for (int64_t i = 0; i < limit; ++i) ids.back().push_back(i);
  }
  for (const auto& g : ids) {
    if (g.empty()) return absl::InvalidArgumentError(StrCat(Ref(instr), " has an empty group"));
    for (int64_t id : g) {
      if (id < 0 || id >= limit) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), " (", CollectiveGroupModeName(*mode), ") names ", id_kind, " id ",
                   id, " but the run has ", limit, " (", R, " replica", R == 1 ? "" : "s",
                   " x ", P, " partition", P == 1 ? "" : "s", ")"));
      }
    }
  }
  std::vector<std::vector<int64_t>> out;
  switch (*mode) {
    case CollectiveGroupMode::kCrossReplica:
      for (const auto& g : ids) {
        for (int64_t p = 0; p < P; ++p) {
          out.emplace_back();
          for (int64_t r : g) out.back().push_back(grid.Device(r, p));
        }
      }
      break;
    case CollectiveGroupMode::kCrossPartition:
      for (const auto& g : ids) {
        for (int64_t r = 0; r < R; ++r) {
          out.emplace_back();
          for (int64_t p : g) out.back().push_back(grid.Device(r, p));
        }
      }
      break;
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      for (const auto& g : ids) {
        out.emplace_back();
        for (int64_t r : g) {
          for (int64_t p = 0; p < P; ++p) out.back().push_back(grid.Device(r, p));
        }
      }
      break;
    case CollectiveGroupMode::kFlattenedId:
      out = ids;
      break;
  }
  std::set<int64_t> seen;
  for (const auto& g : out) {
    for (int64_t d : g) {
      if (!seen.insert(d).second) {
        return absl::InvalidArgumentError(
            StrCat(Ref(instr), " puts ", grid.Describe(d), " in more than one group (or twice "
                   "in one); replica_groups must not repeat an id"));
      }
    }
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermuteDevicePairs(
    const Instruction& instr, const DeviceGrid& grid) {
  auto mode = GetCollectiveGroupMode(instr);
  if (!mode.ok()) return mode.status();
  const bool cross_partition = *mode == CollectiveGroupMode::kCrossPartition;
  const int64_t limit = cross_partition ? grid.num_partitions : grid.num_replicas;
  std::set<int64_t> targets;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [s, t] : instr.attrs_or_default().source_target_pairs) {
    if (s < 0 || s >= limit || t < 0 || t >= limit) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " pairs {", s, ",", t, "} name a ",
                 cross_partition ? "partition" : "replica", " id outside 0..", limit - 1));
    }
    if (!targets.insert(t).second) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " sends to ", cross_partition ? "partition " : "replica ", t,
                 " more than once"));
    }
  }
  const int64_t others = cross_partition ? grid.num_replicas : grid.num_partitions;
  for (int64_t o = 0; o < others; ++o) {
    for (const auto& [s, t] : instr.attrs_or_default().source_target_pairs) {
      if (cross_partition) {
        out.emplace_back(grid.Device(o, s), grid.Device(o, t));
      } else {
        out.emplace_back(grid.Device(s, o), grid.Device(t, o));
      }
    }
  }
  return out;
}

}  // namespace hlowb
