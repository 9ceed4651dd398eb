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
  if (groups.mesh) {
    std::string problem = groups.mesh->Validate();
    if (!problem.empty()) return absl::InvalidArgumentError(problem);
    return groups.mesh->Expanded();
  }
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

namespace {

// Pairs of ids (replica ids, or partition ids when `cross_partition`) as device pairs, applied
// in every partition (or replica). `what` names the pairs in errors.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> IdPairsToDevices(
    const Instruction& instr, const std::vector<std::pair<int64_t, int64_t>>& pairs,
    bool cross_partition, const DeviceGrid& grid, bool unique_sources) {
  const int64_t limit = cross_partition ? grid.num_partitions : grid.num_replicas;
  const char* id_kind = cross_partition ? "partition" : "replica";
  std::set<int64_t> targets, sources;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const auto& [s, t] : pairs) {
    if (s < 0 || s >= limit || t < 0 || t >= limit) {
      return absl::InvalidArgumentError(StrCat(Ref(instr), " pairs {", s, ",", t, "} name a ",
                                               id_kind, " id outside 0..", limit - 1));
    }
    if (!targets.insert(t).second) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " sends to ", id_kind, " ", t, " more than once"));
    }
    if (unique_sources && !sources.insert(s).second) {
      return absl::InvalidArgumentError(
          StrCat(Ref(instr), " sends from ", id_kind, " ", s, " more than once"));
    }
  }
  const int64_t others = cross_partition ? grid.num_replicas : grid.num_partitions;
  for (int64_t o = 0; o < others; ++o) {
    for (const auto& [s, t] : pairs) {
      if (cross_partition) {
        out.emplace_back(grid.Device(o, s), grid.Device(o, t));
      } else {
        out.emplace_back(grid.Device(s, o), grid.Device(t, o));
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> PermuteDevicePairs(
    const Instruction& instr, const DeviceGrid& grid) {
  auto mode = GetCollectiveGroupMode(instr);
  if (!mode.ok()) return mode.status();
  return IdPairsToDevices(instr, instr.attrs_or_default().source_target_pairs,
                          *mode == CollectiveGroupMode::kCrossPartition, grid,
                          /*unique_sources=*/false);
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParseSourceTargetPairs(
    std::string_view text) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  std::string t;
  for (char c : text) {
    if (c != ' ' && c != '\t' && c != '\n') t += c;
  }
  auto bad = [&] {
    return absl::InvalidArgumentError(
        StrCat("source-target pairs '", text, "' are not of the form {{0,1},{1,2}}"));
  };
  if (t.size() < 2 || t.front() != '{' || t.back() != '}') return bad();
  size_t i = 1;
  const size_t end = t.size() - 1;
  auto number = [&](int64_t* v) {
    size_t start = i;
    while (i < end && t[i] >= '0' && t[i] <= '9') ++i;
    if (i == start || i - start > 12) return false;
    *v = std::stoll(t.substr(start, i - start));
    return true;
  };
  while (i < end) {
    int64_t s = 0, d = 0;
    if (t[i++] != '{' || !number(&s) || i >= end || t[i++] != ',' || !number(&d) || i >= end ||
        t[i++] != '}') {
      return bad();
    }
    pairs.emplace_back(s, d);
    if (i < end && t[i++] != ',') return bad();
    if (i == end && t[i - 1] == ',') return bad();
  }
  return pairs;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvDevicePairs(
    const Instruction& instr, const DeviceGrid& grid) {
  const FrontendAttributes* fa = instr.frontend_attributes();
  const std::string* value = nullptr;
  if (fa != nullptr) {
    for (const FrontendAttributes::Entry& e : fa->entries) {
      if (e.key == kSendRecvSourceTargetPairsKey) value = &e.value;
    }
  }
  if (value == nullptr) {
    return absl::InvalidArgumentError(
        StrCat(Ref(instr), " between devices needs the frontend attribute ",
               kSendRecvSourceTargetPairsKey, "={{source,target},...}"));
  }
  auto pairs = ParseSourceTargetPairs(*value);
  if (!pairs.ok()) {
    return absl::InvalidArgumentError(StrCat(Ref(instr), ": ", pairs.status().message()));
  }
  const bool cross_partition = instr.attrs_or_default().channel_id.value_or(0) > 0;
  return IdPairsToDevices(instr, *pairs, cross_partition, grid, /*unique_sources=*/true);
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> SendRecvValidationBounds(
    const Instruction& instr, const DeviceGrid& grid) {
  const FrontendAttributes* fa = instr.frontend_attributes();
  const std::string* value = nullptr;
  const std::string* pairs_value = nullptr;
  if (fa != nullptr) {
    for (const FrontendAttributes::Entry& e : fa->entries) {
      if (e.key == kSendRecvValidationKey) value = &e.value;
      if (e.key == kSendRecvSourceTargetPairsKey) pairs_value = &e.value;
    }
  }
  if (value == nullptr) return std::vector<std::pair<int64_t, int64_t>>{};
  if (pairs_value == nullptr) {
    return absl::InvalidArgumentError(StrCat(Ref(instr), " has ", kSendRecvValidationKey,
                                             " but no ", kSendRecvSourceTargetPairsKey));
  }
  auto pairs = ParseSourceTargetPairs(*pairs_value);
  if (!pairs.ok()) {
    return absl::InvalidArgumentError(StrCat(Ref(instr), ": ", pairs.status().message()));
  }
  std::vector<std::pair<int64_t, int64_t>> bounds;
  if (*value == "invalid") {
    bounds.assign(pairs->size(), {1, 0});  // an empty range: never
  } else {
    auto parsed = ParseSourceTargetPairs(*value);
    if (!parsed.ok() || parsed->size() != pairs->size()) {
      return absl::InvalidArgumentError(StrCat(
          Ref(instr), ": ", kSendRecvValidationKey, "=", *value, " must be \"invalid\" or one ",
          "{first,last} execution range per source-target pair (", pairs->size(), ")"));
    }
    bounds = std::move(*parsed);
  }
  const bool cross_partition = instr.attrs_or_default().channel_id.value_or(0) > 0;
  const int64_t others = cross_partition ? grid.num_replicas : grid.num_partitions;
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t o = 0; o < others; ++o) out.insert(out.end(), bounds.begin(), bounds.end());
  return out;
}

}  // namespace hlowb
