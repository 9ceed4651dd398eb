#include "core/proto/proto_convert.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/proto/hlo.pb.h"
#include "core/proto/xla_data.pb.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "google/protobuf/descriptor.h"

namespace hlowb {
namespace {

using google::protobuf::RepeatedField;

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

template <typename R>
std::vector<int64_t> ToVec(const R& r) {
  return std::vector<int64_t>(r.begin(), r.end());
}

template <typename T>
void AssignInts(const std::vector<int64_t>& v, RepeatedField<T>* field) {
  field->Reserve(static_cast<int>(v.size()));
  for (int64_t x : v) field->Add(static_cast<T>(x));
}

// ---------------------------------------------------------------------------------------------
// Enum spellings

constexpr std::string_view kDirectionNames[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
constexpr std::string_view kComparisonTypeNames[] = {"", "FLOAT", "TOTALORDER", "SIGNED",
                                                     "UNSIGNED"};
constexpr std::string_view kFusionKindNames[] = {"kLoop", "kInput", "kOutput", "kCustom"};

template <size_t N>
int FindName(const std::string_view (&names)[N], std::string_view s) {
  for (size_t i = 0; i < N; ++i) {
    if (!names[i].empty() && names[i] == s) return static_cast<int>(i);
  }
  return -1;
}

// The comparison type XLA uses when none is given (Comparison::DefaultComparisonType).
ComparisonType DefaultComparisonType(PrimitiveType t) {
  if (IsFloatingPoint(t) || IsComplex(t)) return ComparisonType::kFloat;
  if (IsSignedIntegral(t)) return ComparisonType::kSigned;
  if (IsUnsignedIntegral(t) || t == PrimitiveType::kPred) return ComparisonType::kUnsigned;
  return ComparisonType::kDefault;
}

// PrecisionConfig.Algorithm values <-> the text spelling ("dot_bf16_bf16_f32").
std::string AlgorithmText(int value) {
  const google::protobuf::EnumValueDescriptor* v =
      xla::PrecisionConfig::Algorithm_descriptor()->FindValueByNumber(value);
  if (!v || value == 0) return "";
  std::string s = v->name();
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s.rfind("alg_", 0) == 0) s = s.substr(4);
  return s;
}

int AlgorithmValue(const std::string& text) {
  std::string upper = "ALG_" + text;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const google::protobuf::EnumValueDescriptor* v =
      xla::PrecisionConfig::Algorithm_descriptor()->FindValueByName(upper);
  return v ? v->number() : -1;
}

// Opcodes whose printed form shows some attribute even when every attribute has its default
// value, so whether the attribute block exists is visible in text.
bool AttrsAlwaysShown(Opcode op) {
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kReducePrecision:
    case Opcode::kGather:
    case Opcode::kDynamicSlice:
    case Opcode::kFusion:
    case Opcode::kCustomCall:
    case Opcode::kFft:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kDomain:
    case Opcode::kTopK:
      return true;
    default:
      return false;
  }
}

// Opcodes XLA always prints `dimensions={...}` for (even when empty).
bool AlwaysHasDimensions(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReduce:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kScan:
      return true;
    default:
      return false;
  }
}

// Collectives XLA always prints `replica_groups=` for (as `{}` when there are none).
bool AlwaysHasReplicaGroups(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

bool IsCollectivePermute(Opcode op) {
  return op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart;
}

// Same test as the printer's: one balanced {...} block, quotes respected.
bool LooksLikeDict(std::string_view s) {
  if (s.size() < 2 || s.front() != '{' || s.back() != '}') return false;
  int depth = 0;
  for (size_t p = 0; p < s.size(); ++p) {
    char c = s[p];
    if (c == '"' || c == '\'') {
      char q = c;
      ++p;
      while (p < s.size() && s[p] != q) p += (s[p] == '\\') ? 2 : 1;
      if (p >= s.size()) return false;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0 && p + 1 != s.size()) return false;
    }
  }
  return depth == 0;
}

// Context for reading one instruction: where it is (for messages, built only when needed) and
// where warnings go.
struct ReadContext {
  const ProtoReadOptions* options = nullptr;
  std::vector<std::string>* warnings = nullptr;  // null when re-reading our own output
  const std::string* prefix = nullptr;           // "module 'm', computation 'c' (id 3)"
  std::string_view instruction;                  // empty at module or computation level
  int64_t id = 0;
  std::string Where() const {
    std::string s = prefix ? *prefix : std::string();
    if (!instruction.empty()) StrAppend(&s, ", instruction '", instruction, "' (id ", id, ")");
    return s;
  }
  void Warn(std::string_view what) const {
    if (warnings) warnings->push_back(StrCat(Where(), ": ", what));
  }
  absl::Status Error(std::string_view what) const { return Invalid(StrCat(Where(), ": ", what)); }
};

template <typename E>
absl::StatusOr<E> EnumFrom(int value, int max, std::string_view what, const ReadContext& ctx) {
  if (value < 0 || value > max) {
    return ctx.Error(StrCat("invalid ", what, " value ", value));
  }
  return static_cast<E>(value);
}

// ---------------------------------------------------------------------------------------------
// Metadata, frontend attributes

void MetadataToProto(const OpMetadata& m, xla::OpMetadata* p) {
  p->set_op_type(m.op_type);
  p->set_op_name(m.op_name);
  p->set_source_file(m.source_file);
  p->set_source_line(m.source_line);
  p->set_source_end_line(m.source_end_line);
  p->set_source_column(m.source_column);
  p->set_source_end_column(m.source_end_column);
  for (int64_t t : m.profile_type) p->add_profile_type(static_cast<xla::ProfileType>(t));
  p->set_deduplicated_name(m.deduplicated_name);
  p->set_scheduling_name(m.scheduling_name);
  p->set_stack_frame_id(m.stack_frame_id);
  p->set_preserve_layout(m.preserve_layout);
}

OpMetadata MetadataFromProto(const xla::OpMetadata& p, bool* dropped) {
  OpMetadata m;
  m.op_type = p.op_type();
  m.op_name = p.op_name();
  m.source_file = p.source_file();
  m.source_line = p.source_line();
  m.source_end_line = p.source_end_line();
  m.source_column = p.source_column();
  m.source_end_column = p.source_end_column();
  for (int t : p.profile_type()) m.profile_type.push_back(t);
  m.deduplicated_name = p.deduplicated_name();
  m.scheduling_name = p.scheduling_name();
  m.stack_frame_id = p.stack_frame_id();
  m.preserve_layout = p.preserve_layout();
  if (dropped && (p.size_of_generated_code_in_bytes() != 0 ||
                  p.size_of_memory_working_set_in_bytes() != 0 || p.has_profile_info())) {
    *dropped = true;
  }
  return m;
}

// Writes attributes into the proto map. Keys whose dict flag differs from what the value looks
// like go to `flips`; a repeated key cannot be stored and is reported in `duplicates`.
void FrontendAttributesToProto(const FrontendAttributes& f, xla::FrontendAttributes* p,
                               google::protobuf::RepeatedPtrField<std::string>* flips,
                               std::vector<std::string>* duplicates) {
  auto* map = p->mutable_map();
  for (const FrontendAttributes::Entry& e : f.entries) {
    if (map->count(e.key)) {
      duplicates->push_back(e.key);
      continue;
    }
    (*map)[e.key] = e.value;
    if (e.is_dict != LooksLikeDict(e.value)) *flips->Add() = e.key;
  }
}

FrontendAttributes FrontendAttributesFromProto(const xla::FrontendAttributes& p) {
  FrontendAttributes f;
  for (const auto& [key, value] : p.map()) f.entries.push_back({key, value, LooksLikeDict(value)});
  std::sort(f.entries.begin(), f.entries.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  return f;
}

void ApplyDictFlips(const google::protobuf::RepeatedPtrField<std::string>& flips,
                    FrontendAttributes* f) {
  for (const std::string& key : flips) {
    for (FrontendAttributes::Entry& e : f->entries) {
      if (e.key == key) e.is_dict = !e.is_dict;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Shardings

// An iota device list must describe a real device set: sizes non-negative, at most 2^32
// devices, the same count before and after the reshape, and a permutation of the reshape
// dimensions. (Expanding an absurd one would try to allocate the impossible.)
// With strict=false (lists from the workbench's own extras, which keep whatever HLO text
// said) only the sizes are checked.
absl::Status CheckIota(const std::vector<int64_t>& dims, const std::vector<int64_t>& reshape,
                       const std::vector<int64_t>& perm, std::string_view what,
                       const ReadContext& ctx, bool strict = true) {
  constexpr int64_t kMaxDevices = int64_t{1} << 32;
  auto product = [&](const std::vector<int64_t>& v, int64_t* out) {
    int64_t n = 1;
    for (int64_t d : v) {
      if (d < 0 || (d != 0 && n > kMaxDevices / d)) return false;
      n *= d;
    }
    *out = n;
    return n <= kMaxDevices;
  };
  int64_t a = 0, b = 0;
  if (!product(dims, &a) || !product(reshape, &b)) {
    return ctx.Error(StrCat(what, ": negative sizes or more than ", kMaxDevices, " devices"));
  }
  if (!strict) return absl::OkStatus();
  if (a != b) {
    return ctx.Error(StrCat(what, ": ", a, " devices in the tile/group dimensions but ", b,
                            " in the iota reshape dimensions"));
  }
  if (!perm.empty()) {
    std::vector<bool> seen(reshape.size(), false);
    for (int64_t p : perm) {
      if (p < 0 || p >= static_cast<int64_t>(reshape.size()) || seen[p]) {
        return ctx.Error(StrCat(what, ": the transpose is not a permutation of the ",
                                reshape.size(), " reshape dimensions"));
      }
      seen[p] = true;
    }
  }
  return absl::OkStatus();
}

bool IotaValid(const IotaDeviceList& iota) {
  static const ProtoReadOptions* const kOptions = new ProtoReadOptions();
  ReadContext ctx{kOptions, nullptr, nullptr, {}, 0};
  return CheckIota(iota.dims, iota.reshape_dims, iota.transpose_perm, "", ctx).ok();
}

// True when XLA's OpSharding cannot state `s` (mesh-based shardings, or an iota tile
// assignment XLA's reader would refuse); such shardings travel in the extras only.
bool NeedsMirror(const Sharding& s) {
  if (s.type == ShardingType::kRaw) return true;
  if (s.iota && !IotaValid(*s.iota)) return true;
  for (const Sharding& e : s.tuple_elements) {
    if (NeedsMirror(e)) return true;
  }
  return false;
}

xla::OpSharding::Type SubgroupToProto(SubgroupType t) {
  switch (t) {
    case SubgroupType::kReplicated:
      return xla::OpSharding::REPLICATED;
    case SubgroupType::kManual:
      return xla::OpSharding::MANUAL;
    case SubgroupType::kUnreduced:
      return xla::OpSharding::UNREDUCED;
    case SubgroupType::kMaximal:
      return xla::OpSharding::MAXIMAL;
  }
  return xla::OpSharding::REPLICATED;
}

std::vector<int64_t> IdentityPerm(size_t n) {
  std::vector<int64_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<int64_t>(i);
  return v;
}

// Requires !NeedsMirror(s).
void ShardingToProto(const Sharding& s, xla::OpSharding* p) {
  switch (s.type) {
    case ShardingType::kReplicated:
      p->set_type(xla::OpSharding::REPLICATED);
      break;
    case ShardingType::kMaximal:
      p->set_type(xla::OpSharding::MAXIMAL);
      p->add_tile_assignment_dimensions(1);
      for (int64_t d : s.devices) p->add_tile_assignment_devices(d);
      break;
    case ShardingType::kTiled:
      p->set_type(xla::OpSharding::OTHER);
      AssignInts(s.tile_dims, p->mutable_tile_assignment_dimensions());
      if (s.iota) {
        AssignInts(s.iota->reshape_dims, p->mutable_iota_reshape_dims());
        AssignInts(s.iota->transpose_perm.empty() ? IdentityPerm(s.iota->reshape_dims.size())
                                                  : s.iota->transpose_perm,
                   p->mutable_iota_transpose_perm());
      } else {
        AssignInts(s.devices, p->mutable_tile_assignment_devices());
      }
      break;
    case ShardingType::kManual:
      p->set_type(xla::OpSharding::MANUAL);
      break;
    case ShardingType::kUnknown:
      p->set_type(xla::OpSharding::UNKNOWN);
      break;
    case ShardingType::kUnreduced:
      p->set_type(xla::OpSharding::UNREDUCED);
      break;
    case ShardingType::kTuple:
      p->set_type(xla::OpSharding::TUPLE);
      for (const Sharding& e : s.tuple_elements) ShardingToProto(e, p->add_tuple_shardings());
      break;
    case ShardingType::kRaw:
      break;
  }
  p->set_replicate_on_last_tile_dim(s.last_tile_dim_replicate);
  for (SubgroupType t : s.last_tile_dims) p->add_last_tile_dims(SubgroupToProto(t));
  if (s.shard_group != Sharding::ShardGroup::kNone) {
    p->set_is_shard_group(true);
    p->set_shard_group_id(s.shard_group_id);
    p->set_shard_group_type(s.shard_group == Sharding::ShardGroup::kAs ? xla::OpSharding::AS
                                                                       : xla::OpSharding::LIKE);
  }
  for (const OpMetadata& m : s.metadata) MetadataToProto(m, p->add_metadata());
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

absl::StatusOr<Sharding> ShardingFromProto(const xla::OpSharding& p, const ReadContext& ctx,
                                           int depth) {
  if (depth > ctx.options->limits.max_shape_depth) {
    return ctx.Error("sharding nesting is too deep");
  }
  if (p.has_named_sharding()) {
    return absl::UnimplementedError("named (mesh-based) OpSharding is not supported");
  }
  Sharding s;
  switch (p.type()) {
    case xla::OpSharding::REPLICATED:
      s.type = ShardingType::kReplicated;
      break;
    case xla::OpSharding::MAXIMAL:
      s.type = ShardingType::kMaximal;
      if (p.tile_assignment_devices_size() < 1) {
        return ctx.Error("maximal sharding names no device");
      }
      s.devices = {p.tile_assignment_devices(0)};
      break;
    case xla::OpSharding::TUPLE:
      s.type = ShardingType::kTuple;
      for (const xla::OpSharding& e : p.tuple_shardings()) {
        absl::StatusOr<Sharding> element = ShardingFromProto(e, ctx, depth + 1);
        if (!element.ok()) return element.status();
        s.tuple_elements.push_back(std::move(*element));
      }
      break;
    case xla::OpSharding::OTHER:
      s.type = ShardingType::kTiled;
      if (p.tile_assignment_dimensions_size() == 0) {
        return ctx.Error("tiled sharding has no tile_assignment_dimensions");
      }
      s.tile_dims = ToVec(p.tile_assignment_dimensions());
      if (p.iota_reshape_dims_size() > 0) {
        if (p.iota_transpose_perm_size() != 0 &&
            p.iota_transpose_perm_size() != p.iota_reshape_dims_size()) {
          return ctx.Error("sharding iota_transpose_perm and iota_reshape_dims differ in length");
        }
        IotaDeviceList iota;
        iota.dims = s.tile_dims;
        iota.reshape_dims = ToVec(p.iota_reshape_dims());
        iota.transpose_perm = ToVec(p.iota_transpose_perm());
        absl::Status st = CheckIota(iota.dims, iota.reshape_dims, iota.transpose_perm,
                                    "iota tile assignment", ctx);
        if (!st.ok()) return st;
        if (IsIdentity(iota.transpose_perm)) iota.transpose_perm.clear();
        s.iota = std::move(iota);
      } else if (p.tile_assignment_devices_size() > 0) {
        s.devices = ToVec(p.tile_assignment_devices());
      } else {
        return ctx.Error("tiled sharding has neither tile_assignment_devices nor iota dimensions");
      }
      break;
    case xla::OpSharding::MANUAL:
      s.type = ShardingType::kManual;
      break;
    case xla::OpSharding::UNKNOWN:
      s.type = ShardingType::kUnknown;
      break;
    case xla::OpSharding::UNREDUCED:
      s.type = ShardingType::kUnreduced;
      break;
    default:
      return ctx.Error(StrCat("invalid sharding type ", static_cast<int>(p.type())));
  }
  s.last_tile_dim_replicate = p.replicate_on_last_tile_dim();
  for (int t : p.last_tile_dims()) {
    switch (t) {
      case xla::OpSharding::REPLICATED:
        s.last_tile_dims.push_back(SubgroupType::kReplicated);
        break;
      case xla::OpSharding::MANUAL:
        s.last_tile_dims.push_back(SubgroupType::kManual);
        break;
      case xla::OpSharding::UNREDUCED:
        s.last_tile_dims.push_back(SubgroupType::kUnreduced);
        break;
      case xla::OpSharding::MAXIMAL:
        s.last_tile_dims.push_back(SubgroupType::kMaximal);
        break;
      default:
        return ctx.Error(StrCat("invalid sharding subgroup type ", t));
    }
  }
  if (p.is_shard_group()) {
    s.shard_group = p.shard_group_type() == xla::OpSharding::LIKE ? Sharding::ShardGroup::kLike
                                                                  : Sharding::ShardGroup::kAs;
    s.shard_group_id = p.shard_group_id();
  }
  for (const xla::OpMetadata& m : p.metadata()) s.metadata.push_back(MetadataFromProto(m, nullptr));
  return s;
}

void ShardingToMirror(const Sharding& s, xla::HlowbSharding* p) {
  p->set_type(static_cast<xla::HlowbSharding::Type>(s.type));
  AssignInts(s.tile_dims, p->mutable_tile_dims());
  AssignInts(s.devices, p->mutable_devices());
  if (s.iota) {
    p->set_has_iota(true);
    AssignInts(s.iota->dims, p->mutable_iota_dims());
    AssignInts(s.iota->reshape_dims, p->mutable_iota_reshape_dims());
    AssignInts(s.iota->transpose_perm, p->mutable_iota_transpose_perm());
  }
  p->set_last_tile_dim_replicate(s.last_tile_dim_replicate);
  for (SubgroupType t : s.last_tile_dims) p->add_last_tile_dims(static_cast<int>(t));
  p->set_shard_group(static_cast<int>(s.shard_group));
  p->set_shard_group_id(s.shard_group_id);
  for (const OpMetadata& m : s.metadata) MetadataToProto(m, p->add_metadata());
  for (const Sharding& e : s.tuple_elements) ShardingToMirror(e, p->add_tuple_elements());
  p->set_raw(s.raw);
}

absl::StatusOr<Sharding> ShardingFromMirror(const xla::HlowbSharding& p, const ReadContext& ctx,
                                            int depth) {
  if (depth > ctx.options->limits.max_shape_depth) return ctx.Error("sharding nesting is too deep");
  Sharding s;
  if (p.type() < 0 || p.type() > static_cast<int>(ShardingType::kRaw)) {
    return ctx.Error(StrCat("invalid hlowb sharding type ", static_cast<int>(p.type())));
  }
  s.type = static_cast<ShardingType>(p.type());
  s.tile_dims = ToVec(p.tile_dims());
  s.devices = ToVec(p.devices());
  if (p.has_iota()) {
    s.iota = IotaDeviceList{ToVec(p.iota_dims()), ToVec(p.iota_reshape_dims()),
                            ToVec(p.iota_transpose_perm())};
    absl::Status st = CheckIota(s.iota->dims, s.iota->reshape_dims, s.iota->transpose_perm,
                                "hlowb sharding", ctx, /*strict=*/false);
    if (!st.ok()) return st;
  }
  s.last_tile_dim_replicate = p.last_tile_dim_replicate();
  for (int t : p.last_tile_dims()) {
    if (t < 0 || t > 3) return ctx.Error(StrCat("invalid hlowb subgroup type ", t));
    s.last_tile_dims.push_back(static_cast<SubgroupType>(t));
  }
  if (p.shard_group() < 0 || p.shard_group() > 2) return ctx.Error("invalid hlowb shard group");
  s.shard_group = static_cast<Sharding::ShardGroup>(p.shard_group());
  s.shard_group_id = p.shard_group_id();
  for (const xla::OpMetadata& m : p.metadata()) s.metadata.push_back(MetadataFromProto(m, nullptr));
  for (const xla::HlowbSharding& e : p.tuple_elements()) {
    absl::StatusOr<Sharding> element = ShardingFromMirror(e, ctx, depth + 1);
    if (!element.ok()) return element.status();
    s.tuple_elements.push_back(std::move(*element));
  }
  s.raw = p.raw();
  return s;
}

// ---------------------------------------------------------------------------------------------
// Replica groups, sparsity, small attribute messages

void MeshToProto(const MeshReplicaGroups& m, xla::MeshAxesReplicaGroupListProto* p) {
  for (size_t i = 0; i < m.axis_names.size() && i < m.axis_sizes.size(); ++i) {
    xla::MeshProto::MeshAxis* axis = p->mutable_mesh()->add_axes();
    axis->set_name(m.axis_names[i]);
    axis->set_size(m.axis_sizes[i]);
  }
  std::vector<int64_t> devices = m.Devices();
  bool identity = true;
  for (size_t i = 0; i < devices.size(); ++i) identity = identity && devices[i] == static_cast<int64_t>(i);
  if (!identity) AssignInts(devices, p->mutable_mesh()->mutable_device_ids());
  for (const MeshAxisRef& r : m.axes) {
    xla::AxisRefProto* a = p->add_axes();
    a->set_mesh_axis_index(r.axis);
    if (r.has_sub()) {
      a->mutable_sub_axis_info()->set_pre_size(r.pre_size);
      a->mutable_sub_axis_info()->set_size(r.size);
    }
  }
}

absl::StatusOr<MeshReplicaGroups> MeshFromProto(const xla::MeshAxesReplicaGroupListProto& p,
                                                const ReadContext& ctx) {
  MeshReplicaGroups m;
  for (const auto& axis : p.mesh().axes()) {
    m.axis_names.push_back(axis.name());
    m.axis_sizes.push_back(axis.size());
  }
  m.device_ids = ToVec(p.mesh().device_ids());
  for (const xla::AxisRefProto& a : p.axes()) {
    MeshAxisRef r;
    r.axis = a.mesh_axis_index();
    if (a.has_sub_axis_info()) {
      r.pre_size = a.sub_axis_info().pre_size();
      r.size = a.sub_axis_info().size();
      if (r.pre_size <= 0) return ctx.Error("mesh-axes replica groups: a sub-axis pre-size must be positive");
    }
    m.axes.push_back(r);
  }
  std::string problem = m.Validate();
  if (!problem.empty()) return ctx.Error(StrCat("mesh-axes replica groups: ", problem));
  return m;
}

void ReplicaGroupsToMirror(const std::optional<ReplicaGroups>& g, xla::HlowbReplicaGroups* p) {
  p->set_present(g.has_value());
  if (!g) return;
  if (g->iota) {
    p->set_has_iota(true);
    AssignInts(g->iota->dims, p->mutable_iota_dims());
    AssignInts(g->iota->reshape_dims, p->mutable_iota_reshape_dims());
    AssignInts(g->iota->transpose_perm, p->mutable_iota_transpose_perm());
  }
  for (const auto& group : g->groups) AssignInts(group, p->add_groups()->mutable_values());
  if (g->mesh) {
    const MeshReplicaGroups& m = *g->mesh;
    MeshToProto(m, p->mutable_mesh());
    p->set_mesh_style(m.style == MeshReplicaGroups::Style::kAngle ? 1 : 0);
    p->set_mesh_quote(m.quote);
    if (m.device_iota) {
      p->set_mesh_has_device_iota(true);
      AssignInts(m.device_iota->reshape_dims, p->mutable_mesh_iota_reshape_dims());
      AssignInts(m.device_iota->transpose_perm, p->mutable_mesh_iota_transpose_perm());
    }
    for (const MeshAxisRef& r : m.axes) p->add_mesh_axis_by_index(r.by_index);
  }
}

absl::StatusOr<std::optional<ReplicaGroups>> ReplicaGroupsFromMirror(
    const xla::HlowbReplicaGroups& p, const ReadContext& ctx) {
  if (!p.present()) return std::optional<ReplicaGroups>();
  ReplicaGroups g;
  if (p.has_iota()) {
    g.iota = IotaDeviceList{ToVec(p.iota_dims()), ToVec(p.iota_reshape_dims()),
                            ToVec(p.iota_transpose_perm())};
    absl::Status st = CheckIota(g.iota->dims, g.iota->reshape_dims, g.iota->transpose_perm,
                                "hlowb replica groups", ctx, /*strict=*/false);
    if (!st.ok()) return st;
  }
  for (const xla::HlowbInt64List& l : p.groups()) g.groups.push_back(ToVec(l.values()));
  if (p.has_mesh()) {
    absl::StatusOr<MeshReplicaGroups> m = MeshFromProto(p.mesh(), ctx);
    if (!m.ok()) return m.status();
    m->style = p.mesh_style() == 1 ? MeshReplicaGroups::Style::kAngle
                                   : MeshReplicaGroups::Style::kBracket;
    const int32_t q = p.mesh_quote();
    if (q != 0 && q != '\'' && q != '"') return ctx.Error("hlowb replica groups: bad mesh quote");
    m->quote = static_cast<char>(q);
    if (p.mesh_has_device_iota()) {
      m->device_ids.clear();
      m->device_iota = IotaDeviceList{m->axis_sizes, ToVec(p.mesh_iota_reshape_dims()),
                                      ToVec(p.mesh_iota_transpose_perm())};
    }
    for (int i = 0; i < p.mesh_axis_by_index_size() && i < static_cast<int>(m->axes.size()); ++i) {
      m->axes[static_cast<size_t>(i)].by_index = p.mesh_axis_by_index(i);
    }
    std::string problem = m->Validate();
    if (!problem.empty()) return ctx.Error(StrCat("hlowb replica groups: ", problem));
    g.mesh = std::move(*m);
  }
  return g;
}

absl::StatusOr<IotaDeviceList> IotaFromProto(const xla::IotaReplicaGroupListProto& p,
                                             const ReadContext& ctx) {
  if (p.num_replica_groups() < 0 || p.num_devices_per_group() < 0) {
    return ctx.Error("iota replica groups have a negative count");
  }
  if (p.iota_transpose_perm_size() != 0 &&
      p.iota_transpose_perm_size() != p.iota_reshape_dims_size()) {
    return ctx.Error(
        "iota replica groups: iota_transpose_perm and iota_reshape_dims differ in "
        "length");
  }
  IotaDeviceList iota;
  iota.dims = {p.num_replica_groups(), p.num_devices_per_group()};
  iota.reshape_dims = ToVec(p.iota_reshape_dims());
  iota.transpose_perm = ToVec(p.iota_transpose_perm());
  absl::Status st =
      CheckIota(iota.dims, iota.reshape_dims, iota.transpose_perm, "iota replica groups", ctx);
  if (!st.ok()) return st;
  if (IsIdentity(iota.transpose_perm)) iota.transpose_perm.clear();
  return iota;
}

void IotaToProto(const IotaDeviceList& iota, xla::IotaReplicaGroupListProto* p) {
  p->set_num_replica_groups(iota.dims.size() > 0 ? iota.dims[0] : 0);
  p->set_num_devices_per_group(iota.dims.size() > 1 ? iota.dims[1] : 0);
  AssignInts(iota.reshape_dims, p->mutable_iota_reshape_dims());
  AssignInts(
      iota.transpose_perm.empty() ? IdentityPerm(iota.reshape_dims.size()) : iota.transpose_perm,
      p->mutable_iota_transpose_perm());
}

// Parses `L.1@2:4_R.0@2:4`; false if the text has another form.
bool ParseSparsity(std::string_view text, std::vector<xla::SparsityDescriptor>* out) {
  if (text.empty()) return false;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('_', pos);
    std::string_view item = text.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (item.size() < 7 || (item[0] != 'L' && item[0] != 'R') || item[1] != '.') return false;
    size_t at = item.find('@');
    size_t colon = item.find(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || colon < at) return false;
    auto number = [](std::string_view s, int32_t* v) {
      if (s.empty() || s.size() > 9) return false;
      int32_t x = 0;
      for (char c : s) {
        if (c < '0' || c > '9') return false;
        x = x * 10 + (c - '0');
      }
      *v = x;
      return true;
    };
    int32_t dim, n, m;
    if (!number(item.substr(2, at - 2), &dim) || !number(item.substr(at + 1, colon - at - 1), &n) ||
        !number(item.substr(colon + 1), &m)) {
      return false;
    }
    xla::SparsityDescriptor d;
    d.set_type(xla::SPARSITY_STRUCTURED_N_M);
    d.set_index(item[0] == 'L' ? 0 : 1);
    d.set_dimension(dim);
    d.set_n(n);
    d.set_m(m);
    out->push_back(d);
    if (end == std::string_view::npos) break;
    pos = end + 1;
  }
  return true;
}

std::string SparsityText(const google::protobuf::RepeatedPtrField<xla::SparsityDescriptor>& v,
                         bool* ok) {
  std::string s;
  for (const xla::SparsityDescriptor& d : v) {
    if (d.type() != xla::SPARSITY_STRUCTURED_N_M) *ok = false;
    StrAppend(&s, s.empty() ? "" : "_", d.index() == 0 ? "L." : "R.", d.dimension(), "@", d.n(),
              ":", d.m());
  }
  return s;
}

void DotDimsToProto(const DotDimensionNumbers& d, xla::DotDimensionNumbers* p) {
  AssignInts(d.lhs_contracting_dimensions, p->mutable_lhs_contracting_dimensions());
  AssignInts(d.rhs_contracting_dimensions, p->mutable_rhs_contracting_dimensions());
  AssignInts(d.lhs_batch_dimensions, p->mutable_lhs_batch_dimensions());
  AssignInts(d.rhs_batch_dimensions, p->mutable_rhs_batch_dimensions());
}

DotDimensionNumbers DotDimsFromProto(const xla::DotDimensionNumbers& p) {
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = ToVec(p.lhs_contracting_dimensions());
  d.rhs_contracting_dimensions = ToVec(p.rhs_contracting_dimensions());
  d.lhs_batch_dimensions = ToVec(p.lhs_batch_dimensions());
  d.rhs_batch_dimensions = ToVec(p.rhs_batch_dimensions());
  return d;
}

// ---------------------------------------------------------------------------------------------
// Instructions: IR -> proto (without extras)

struct WriteContext {
  const ProtoWriteOptions* options;
  std::vector<std::string>* warnings;  // never null inside the writer
  const std::string* prefix;           // "module 'm'" or "computation 'c'"
  std::string_view instruction;        // empty outside instructions
  std::string Where() const {
    std::string s = *prefix;
    if (!instruction.empty()) StrAppend(&s, ", instruction '", instruction, "'");
    return s;
  }
  void Warn(std::string_view what) const { warnings->push_back(StrCat(Where(), ": ", what)); }
};

absl::Status EncodeAttrs(const Instruction& instr, xla::HloInstructionProto* p,
                         xla::HlowbInstructionExtras* ext, const WriteContext& ctx) {
  const Opcode op = instr.opcode();
  const InstructionAttrs& a = *instr.attrs();
  if (a.window) {
    xla::Window* w = p->mutable_window();
    for (const WindowDimension& d : *a.window) {
      xla::WindowDimension* wd = w->add_dimensions();
      wd->set_size(d.size);
      wd->set_stride(d.stride);
      wd->set_padding_low(d.padding_low);
      wd->set_padding_high(d.padding_high);
      wd->set_window_dilation(d.window_dilation);
      wd->set_base_dilation(d.base_dilation);
      wd->set_window_reversal(d.window_reversal);
    }
  }
  if (a.convolution_dimension_numbers) {
    const ConvolutionDimensionNumbers& d = *a.convolution_dimension_numbers;
    xla::ConvolutionDimensionNumbers* c = p->mutable_convolution_dimension_numbers();
    c->set_input_batch_dimension(d.input_batch_dimension);
    c->set_input_feature_dimension(d.input_feature_dimension);
    AssignInts(d.input_spatial_dimensions, c->mutable_input_spatial_dimensions());
    c->set_kernel_input_feature_dimension(d.kernel_input_feature_dimension);
    c->set_kernel_output_feature_dimension(d.kernel_output_feature_dimension);
    AssignInts(d.kernel_spatial_dimensions, c->mutable_kernel_spatial_dimensions());
    c->set_output_batch_dimension(d.output_batch_dimension);
    c->set_output_feature_dimension(d.output_feature_dimension);
    AssignInts(d.output_spatial_dimensions, c->mutable_output_spatial_dimensions());
  }
  if (a.feature_group_count != 1 || op == Opcode::kConvolution) {
    p->set_feature_group_count(a.feature_group_count);
  }
  if (a.batch_group_count != 1 || op == Opcode::kConvolution) {
    p->set_batch_group_count(a.batch_group_count);
  }
  p->set_conv_kind(static_cast<xla::ConvolutionKind>(a.conv_kind));
  if (a.dot_dimension_numbers) {
    const DotDimensionNumbers& d = *a.dot_dimension_numbers;
    if (op == Opcode::kRaggedDot || !d.lhs_ragged_dimensions.empty() ||
        !d.rhs_group_dimensions.empty()) {
      xla::RaggedDotDimensionNumbers* r = p->mutable_ragged_dot_dimension_numbers();
      DotDimsToProto(d, r->mutable_dot_dimension_numbers());
      AssignInts(d.lhs_ragged_dimensions, r->mutable_lhs_ragged_dimensions());
      AssignInts(d.rhs_group_dimensions, r->mutable_rhs_group_dimensions());
    } else {
      DotDimsToProto(d, p->mutable_dot_dimension_numbers());
    }
  }
  if (!a.precision_config.operand_precision.empty() || !a.precision_config.algorithm.empty()) {
    xla::PrecisionConfig* pc = p->mutable_precision_config();
    for (Precision x : a.precision_config.operand_precision) {
      pc->add_operand_precision(static_cast<xla::PrecisionConfig::Precision>(x));
    }
    if (!a.precision_config.algorithm.empty()) {
      int v = AlgorithmValue(a.precision_config.algorithm);
      if (v > 0) {
        pc->set_algorithm(static_cast<xla::PrecisionConfig::Algorithm>(v));
      } else {
        ctx.Warn(StrCat("algorithm=", a.precision_config.algorithm,
                        " is not in XLA's PrecisionConfig.Algorithm enum"));
      }
    }
  }
  if (!a.sparsity.empty()) {
    std::vector<xla::SparsityDescriptor> descriptors;
    if (ParseSparsity(a.sparsity, &descriptors)) {
      for (auto& d : descriptors) *p->add_dot_sparsity() = std::move(d);
    }
  }
  if (a.gather_dimension_numbers) {
    const GatherDimensionNumbers& g = *a.gather_dimension_numbers;
    xla::GatherDimensionNumbers* gp = p->mutable_gather_dimension_numbers();
    AssignInts(g.offset_dims, gp->mutable_offset_dims());
    AssignInts(g.collapsed_slice_dims, gp->mutable_collapsed_slice_dims());
    AssignInts(g.start_index_map, gp->mutable_start_index_map());
    gp->set_index_vector_dim(g.index_vector_dim);
    AssignInts(g.operand_batching_dims, gp->mutable_operand_batching_dims());
    AssignInts(g.start_indices_batching_dims, gp->mutable_start_indices_batching_dims());
  }
  if (a.scatter_dimension_numbers) {
    const ScatterDimensionNumbers& s = *a.scatter_dimension_numbers;
    xla::ScatterDimensionNumbers* sp = p->mutable_scatter_dimension_numbers();
    AssignInts(s.update_window_dims, sp->mutable_update_window_dims());
    AssignInts(s.inserted_window_dims, sp->mutable_inserted_window_dims());
    AssignInts(s.scatter_dims_to_operand_dims, sp->mutable_scatter_dims_to_operand_dims());
    sp->set_index_vector_dim(s.index_vector_dim);
    AssignInts(s.input_batching_dims, sp->mutable_input_batching_dims());
    AssignInts(s.scatter_indices_batching_dims, sp->mutable_scatter_indices_batching_dims());
  }
  if (op == Opcode::kGather) {
    AssignInts(a.slice_sizes, p->mutable_gather_slice_sizes());
  } else if (IsCollectivePermute(op)) {
    for (const auto& v : a.permute_slice_sizes) {
      for (int64_t x : v) p->add_dynamic_slice_sizes(x);
    }
  } else {
    AssignInts(a.slice_sizes, p->mutable_dynamic_slice_sizes());
  }
  p->set_indices_are_sorted(a.indices_are_sorted);
  p->set_unique_indices(a.unique_indices);
  for (const SliceDimension& d : a.slice) {
    auto* s = p->add_slice_dimensions();
    s->set_start(d.start);
    s->set_limit(d.limit);
    s->set_stride(d.stride);
  }
  if (a.padding) {
    xla::PaddingConfig* pc = p->mutable_padding_config();
    for (const PaddingDimension& d : *a.padding) {
      auto* pd = pc->add_dimensions();
      pd->set_edge_padding_low(d.low);
      pd->set_edge_padding_high(d.high);
      pd->set_interior_padding(d.interior);
    }
  }
  if (op == Opcode::kCompare || a.comparison_direction != ComparisonDirection::kEq) {
    p->set_comparison_direction(
        std::string(kDirectionNames[static_cast<int>(a.comparison_direction)]));
  }
  ComparisonType ctype = a.comparison_type;
  if (ctype == ComparisonType::kDefault && op == Opcode::kCompare && instr.operand_count() > 0) {
    ctype = DefaultComparisonType(instr.operand(0)->shape().element_type());
  }
  if (ctype != ComparisonType::kDefault) {
    p->set_comparison_type(std::string(kComparisonTypeNames[static_cast<int>(ctype)]));
  }
  p->set_exponent_bits(a.exponent_bits);
  p->set_mantissa_bits(a.mantissa_bits);
  if (a.channel_id && *a.channel_id > 0) p->set_channel_id(*a.channel_id);
  if (a.replica_groups) {
    if (a.replica_groups->mesh) {
      if (!a.replica_groups->mesh->Validate().empty()) {
        ctx.Warn("inconsistent mesh-axes replica groups cannot be written to XLA's fields");
      } else {
        MeshToProto(*a.replica_groups->mesh, p->mutable_mesh_axes_replica_group_list());
      }
    } else if (a.replica_groups->iota && !IotaValid(*a.replica_groups->iota)) {
      ctx.Warn("inconsistent iota replica groups cannot be written to XLA's fields");
    } else if (a.replica_groups->iota) {
      IotaToProto(*a.replica_groups->iota,
                  p->mutable_collective_device_list()->mutable_iota_replica_group_list());
      IotaToProto(*a.replica_groups->iota, p->mutable_iota_collective_device_list());
    } else {
      for (const auto& group : a.replica_groups->groups) {
        AssignInts(group, p->add_replica_groups()->mutable_replica_ids());
      }
    }
  }
  p->set_constrain_layout(a.constrain_layout || a.operand_layout_constraints.has_value());
  if (a.operand_layout_constraints) {
    for (const Shape& s : *a.operand_layout_constraints) {
      ShapeToProto(s, p->add_operand_shapes_with_layout());
    }
  }
  p->set_use_global_device_ids(a.use_global_device_ids.value_or(false));
  for (const auto& [source, target] : a.source_target_pairs) {
    auto* st = p->add_source_target_pairs();
    st->set_source(source);
    st->set_target(target);
  }
  p->set_custom_call_target(a.custom_call_target);
  if (op == Opcode::kCustomCall || a.api_version != CustomCallApiVersion::kOriginal) {
    p->set_custom_call_api_version(static_cast<xla::CustomCallApiVersion>(a.api_version));
  }
  p->set_custom_call_schedule(static_cast<xla::CustomCallSchedule>(a.schedule));
  p->set_custom_call_has_side_effect(a.custom_call_has_side_effect);
  if (a.custom_call_literal && op != Opcode::kConstant) {
    // Written as given: adding a layout would change how `literal=` prints.
    absl::Status st = LiteralToProto(*a.custom_call_literal, p->mutable_literal(),
                                     /*add_default_layout=*/false);
    if (!st.ok()) return Invalid(StrCat(ctx.Where(), ": literal=: ", st.message()));
  }
  p->set_padding_type(static_cast<xla::PaddingType>(a.padding_type));
  for (const OutputOperandAlias& o : a.output_operand_aliasing) {
    auto* op_alias = p->add_output_operand_aliasing();
    AssignInts(o.output_index, op_alias->mutable_output_shape_index());
    op_alias->set_operand_index(o.operand);
    AssignInts(o.operand_index, op_alias->mutable_operand_shape_index());
  }
  if (op == Opcode::kFusion || a.fusion_kind != FusionKind::kLoop) {
    p->set_fusion_kind(std::string(kFusionKindNames[static_cast<int>(a.fusion_kind)]));
  }
  p->set_fft_type(static_cast<xla::FftType>(a.fft_type));
  AssignInts(a.fft_length, p->mutable_fft_length());
  if (op == Opcode::kTriangularSolve || a.left_side || a.unit_diagonal ||
      a.transpose_a != TriangularTranspose::kInvalid || (a.lower && op != Opcode::kCholesky)) {
    xla::TriangularSolveOptions* t = p->mutable_triangular_solve_options();
    t->set_left_side(a.left_side);
    t->set_lower(a.lower && op != Opcode::kCholesky);
    t->set_unit_diagonal(a.unit_diagonal);
    t->set_transpose_a(static_cast<xla::TriangularSolveOptions::Transpose>(a.transpose_a));
  }
  if (op == Opcode::kCholesky) p->mutable_cholesky_options()->set_lower(a.lower);
  p->set_epsilon(a.epsilon);
  p->set_feature_index(a.feature_index);
  p->set_distribution(static_cast<xla::RandomDistribution>(a.distribution));
  p->set_rng_algorithm(static_cast<xla::RandomAlgorithm>(a.rng_algorithm));
  p->set_delta(a.delta);
  p->set_infeed_config(a.infeed_config);
  p->set_outfeed_config(a.outfeed_config);
  if (a.outfeed_shape) ShapeToProto(*a.outfeed_shape, p->mutable_outfeed_shape());
  p->set_is_host_transfer(a.is_host_transfer);
  if (a.cross_program_prefetch_index) {
    p->set_cross_program_prefetch_index(*a.cross_program_prefetch_index);
  }
  p->set_k(a.k);
  if (op == Opcode::kTopK) p->set_largest(a.largest);
  p->set_num_carries(a.num_carries);
  p->set_is_reverse(a.is_reverse);
  p->set_is_associative(static_cast<xla::TriState>(a.is_associative));
  p->set_is_stable(a.is_stable);
  p->set_is_composite(a.is_composite);
  p->set_async_execution_thread(a.async_execution_thread);
  if (a.domain_entry_sharding && !NeedsMirror(*a.domain_entry_sharding)) {
    ShardingToProto(*a.domain_entry_sharding, p->mutable_domain_entry_sharding());
  }
  if (a.domain_exit_sharding && !NeedsMirror(*a.domain_exit_sharding)) {
    ShardingToProto(*a.domain_exit_sharding, p->mutable_domain_exit_sharding());
  }
  if (!a.parameter_replication.empty()) {
    auto* pr = p->mutable_parameter_replication();
    for (bool b : a.parameter_replication) pr->add_replicated_at_leaf_buffers(b);
  }
  if (a.statistics) {
    xla::StatisticsViz* sv = p->mutable_statistics_viz();
    sv->set_stat_index_to_visualize(a.statistics->visualizing_index);
    for (const Statistic& st : a.statistics->statistics) {
      auto* s = sv->add_statistics();
      s->set_stat_name(st.name);
      s->set_stat_val(st.value);
    }
  }
  if (a.result_accuracy) {
    xla::ResultAccuracy* r = p->mutable_result_accuracy();
    if (a.result_accuracy->mode == ResultAccuracy::Mode::kTolerance) {
      auto* t = r->mutable_tolerance();
      t->set_atol(a.result_accuracy->atol);
      t->set_rtol(a.result_accuracy->rtol);
      t->set_ulps(a.result_accuracy->ulps);
    } else {
      r->set_mode(a.result_accuracy->mode == ResultAccuracy::Mode::kHighest
                      ? xla::ResultAccuracy::HIGHEST
                      : xla::ResultAccuracy::DEFAULT);
    }
  }
  // Items XLA's schema has no field for.
  for (const auto& [name, value] : a.unknown) {
    auto* u = ext->add_unknown_attributes();
    u->set_name(name);
    u->set_value(value);
    ctx.Warn(StrCat("attribute '", name,
                    "' is not modeled by this version; XLA's schema has no "
                    "field for it"));
  }
  if (!a.legacy_mode.empty()) ext->set_legacy_mode(a.legacy_mode);
  if (!a.origin.empty()) {
    ext->set_origin(a.origin);
    ctx.Warn("origin= (original value) is not written to XLA's original_value field");
  }
  return absl::OkStatus();
}

void EncodeIndexAndDimensions(const Instruction& instr, xla::HloInstructionProto* p) {
  const Opcode op = instr.opcode();
  switch (op) {
    case Opcode::kParameter:
      p->set_parameter_number(instr.parameter_number());
      break;
    case Opcode::kGetTupleElement:
      p->set_tuple_index(instr.tuple_index());
      break;
    case Opcode::kIota:
      p->add_dimensions(instr.iota_dimension());
      return;
    case Opcode::kReshape: {
      int64_t inferred = instr.attrs_or_default().inferred_dimension;
      if (inferred != -1) p->add_dimensions(inferred);
      return;
    }
    default:
      break;
  }
  for (int64_t d : instr.dimensions()) p->add_dimensions(d);
}

namespace {

// XLA prints an async-start as "<op>-start" sugar when it wraps one instruction
// (AsyncWrappedInstruction); its updates and dones follow the start.
bool XlaPrintsAsyncSugar(const Instruction& i) {
  if (i.opcode() == Opcode::kAsyncUpdate || i.opcode() == Opcode::kAsyncDone) {
    return i.operand_count() == 1 && i.operand(0) != nullptr && i.operand(0)->async_sugar();
  }
  return AsyncWrappedInstruction(i) != nullptr;
}

}  // namespace

absl::Status EncodeInstruction(const Instruction& instr, xla::HloInstructionProto* p,
                               xla::HlowbInstructionExtras* ext, const WriteContext& ctx) {
  const Opcode op = instr.opcode();
  p->set_name(instr.name());
  p->set_opcode(std::string(OpcodeName(op)));
  ShapeToProto(instr.shape(), p->mutable_shape());
  p->set_id(instr.id());
  for (const Instruction* o : instr.operands()) p->add_operand_ids(o->id());
  for (const Instruction* c : instr.control_predecessors()) p->add_control_predecessor_ids(c->id());
  std::vector<Computation*> called = instr.called_computations();
  // XLA orders a while's computations {body, condition}; the IR {condition, body}.
  if (op == Opcode::kWhile && called.size() == 2) std::swap(called[0], called[1]);
  for (const Computation* c : called) p->add_called_computation_ids(c->id());
  if (instr.metadata() && !instr.metadata()->empty()) {
    MetadataToProto(*instr.metadata(), p->mutable_metadata());
  }
  EncodeIndexAndDimensions(instr, p);
  if (op == Opcode::kConstant && instr.literal() && !instr.literal()->elided()) {
    absl::Status st = LiteralToProto(*instr.literal(), p->mutable_literal());
    if (!st.ok()) return Invalid(StrCat(ctx.Where(), ": constant: ", st.message()));
  }
  if (instr.sharding()) {
    if (NeedsMirror(*instr.sharding())) {
      ctx.Warn(
          "this sharding (mesh-based, or an inconsistent iota tile assignment) cannot be "
          "written to XLA's OpSharding");
    } else {
      ShardingToProto(*instr.sharding(), p->mutable_sharding());
    }
  }
  if (instr.frontend_attributes() && !instr.frontend_attributes()->entries.empty()) {
    std::vector<std::string> duplicates;
    FrontendAttributesToProto(*instr.frontend_attributes(), p->mutable_frontend_attributes(),
                              ext->mutable_frontend_attribute_dict_flips(), &duplicates);
    for (const std::string& key : duplicates) {
      ctx.Warn(StrCat("frontend attribute '", key, "' is given twice; only the first is kept"));
    }
  }
  p->set_backend_config(instr.backend_config());
  if (instr.attrs()) {
    absl::Status st = EncodeAttrs(instr, p, ext, ctx);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Instructions: proto -> IR

// Decodes everything except name, opcode, shape, id, operands, control predecessors and called
// computations (the caller resolves those). Opcode-specific attributes go to `a`; the caller
// decides whether the instruction gets an attribute block.
absl::Status DecodeInstructionFields(const xla::HloInstructionProto& p, Instruction* instr,
                                     PrimitiveType operand0_type, bool decode_literal,
                                     InstructionAttrs* a, const ReadContext& ctx) {
  const Opcode op = instr->opcode();
  const ProtoLimits& limits = ctx.options->limits;
  // Index slot and dimensions.
  switch (op) {
    case Opcode::kParameter:
      if (p.parameter_number() < 0) {
        return ctx.Error(StrCat("negative parameter number ", p.parameter_number()));
      }
      instr->set_index(p.parameter_number());
      break;
    case Opcode::kGetTupleElement:
      instr->set_index(p.tuple_index());
      break;
    case Opcode::kIota:
      instr->set_index(p.dimensions_size() > 0 ? p.dimensions(0) : 0);
      break;
    case Opcode::kReshape:
      a->inferred_dimension = p.dimensions_size() > 0 ? p.dimensions(0) : -1;
      break;
    default:
      *instr->mutable_dimensions() = ToVec(p.dimensions());
      instr->set_has_dimensions(AlwaysHasDimensions(op) || p.dimensions_size() > 0);
      break;
  }
  // Literal: constant data, or a custom call's literal=.
  if (op == Opcode::kConstant) {
    if (decode_literal) {
      if (p.has_literal()) {
        absl::StatusOr<Literal> lit = LiteralFromProto(p.literal(), limits);
        if (!lit.ok()) return ctx.Error(StrCat("constant: ", lit.status().message()));
        if (!lit->shape().Compatible(instr->shape())) {
          return ctx.Error("the constant's literal shape differs from the instruction's shape");
        }
        instr->set_literal(std::make_unique<Literal>(std::move(*lit)));
      } else {
        auto lit = std::make_unique<Literal>(instr->shape(), /*allocate=*/false);
        if (instr->shape().IsArray() || instr->shape().IsTuple()) lit->set_elided(true);
        instr->set_literal(std::move(lit));
      }
    }
  } else if (p.has_literal()) {
    absl::StatusOr<Literal> lit = LiteralFromProto(p.literal(), limits);
    if (!lit.ok()) return ctx.Error(StrCat("literal: ", lit.status().message()));
    a->custom_call_literal = std::move(*lit);
  }
  if (p.has_metadata()) {
    bool dropped = false;
    OpMetadata m = MetadataFromProto(p.metadata(), &dropped);
    if (dropped) ctx.Warn("metadata code-size/working-set/profile fields are not converted");
    if (!m.empty()) *instr->mutable_metadata() = std::move(m);
  }
  if (p.has_sharding()) {
    absl::StatusOr<Sharding> s = ShardingFromProto(p.sharding(), ctx, 0);
    if (s.ok()) {
      instr->set_sharding(std::make_unique<Sharding>(std::move(*s)));
    } else if (absl::IsUnimplemented(s.status())) {
      ctx.Warn(StrCat("sharding dropped: ", s.status().message()));
    } else {
      return s.status();
    }
  }
  if (p.has_frontend_attributes() && !p.frontend_attributes().map().empty()) {
    *instr->mutable_frontend_attributes() = FrontendAttributesFromProto(p.frontend_attributes());
  }
  instr->set_backend_config(p.backend_config());

  // Opcode-specific attributes.
  if (p.has_window()) {
    Window w;
    for (const xla::WindowDimension& d : p.window().dimensions()) {
      w.push_back(WindowDimension{d.size(), d.stride(), d.padding_low(), d.padding_high(),
                                  d.base_dilation(), d.window_dilation(), d.window_reversal()});
    }
    a->window = std::move(w);
  }
  if (p.has_convolution_dimension_numbers()) {
    const xla::ConvolutionDimensionNumbers& c = p.convolution_dimension_numbers();
    ConvolutionDimensionNumbers d;
    d.input_batch_dimension = c.input_batch_dimension();
    d.input_feature_dimension = c.input_feature_dimension();
    d.input_spatial_dimensions = ToVec(c.input_spatial_dimensions());
    d.kernel_input_feature_dimension = c.kernel_input_feature_dimension();
    d.kernel_output_feature_dimension = c.kernel_output_feature_dimension();
    d.kernel_spatial_dimensions = ToVec(c.kernel_spatial_dimensions());
    d.output_batch_dimension = c.output_batch_dimension();
    d.output_feature_dimension = c.output_feature_dimension();
    d.output_spatial_dimensions = ToVec(c.output_spatial_dimensions());
    a->convolution_dimension_numbers = std::move(d);
  }
  a->feature_group_count = p.feature_group_count() == 0 ? 1 : p.feature_group_count();
  a->batch_group_count = p.batch_group_count() == 0 ? 1 : p.batch_group_count();
  {
    absl::StatusOr<ConvolutionKind> k =
        EnumFrom<ConvolutionKind>(p.conv_kind(), 3, "conv_kind", ctx);
    if (!k.ok()) return k.status();
    a->conv_kind = *k;
  }
  if (p.has_ragged_dot_dimension_numbers()) {
    const xla::RaggedDotDimensionNumbers& r = p.ragged_dot_dimension_numbers();
    DotDimensionNumbers d = DotDimsFromProto(r.dot_dimension_numbers());
    d.lhs_ragged_dimensions = ToVec(r.lhs_ragged_dimensions());
    d.rhs_group_dimensions = ToVec(r.rhs_group_dimensions());
    a->dot_dimension_numbers = std::move(d);
  } else if (p.has_dot_dimension_numbers()) {
    a->dot_dimension_numbers = DotDimsFromProto(p.dot_dimension_numbers());
  }
  if (p.has_precision_config()) {
    bool all_default = true;
    for (int v : p.precision_config().operand_precision()) {
      absl::StatusOr<Precision> x = EnumFrom<Precision>(v, 3, "operand precision", ctx);
      if (!x.ok()) return x.status();
      a->precision_config.operand_precision.push_back(*x);
      all_default &= *x == Precision::kDefault;
    }
    // XLA writes DEFAULT for every operand and prints nothing in that case.
    if (all_default) a->precision_config.operand_precision.clear();
    int alg = p.precision_config().algorithm();
    if (alg != 0) {
      a->precision_config.algorithm = AlgorithmText(alg);
      if (a->precision_config.algorithm.empty()) {
        ctx.Warn(StrCat("unknown dot algorithm value ", alg, " dropped"));
      }
    }
  }
  if (p.dot_sparsity_size() > 0) {
    bool ok = true;
    a->sparsity = SparsityText(p.dot_sparsity(), &ok);
    if (!ok) return ctx.Error("dot_sparsity has an unknown sparsity type");
  }
  if (p.has_gather_dimension_numbers()) {
    const xla::GatherDimensionNumbers& g = p.gather_dimension_numbers();
    GatherDimensionNumbers d;
    d.offset_dims = ToVec(g.offset_dims());
    d.collapsed_slice_dims = ToVec(g.collapsed_slice_dims());
    d.start_index_map = ToVec(g.start_index_map());
    d.operand_batching_dims = ToVec(g.operand_batching_dims());
    d.start_indices_batching_dims = ToVec(g.start_indices_batching_dims());
    d.index_vector_dim = g.index_vector_dim();
    a->gather_dimension_numbers = std::move(d);
  }
  if (p.has_scatter_dimension_numbers()) {
    const xla::ScatterDimensionNumbers& s = p.scatter_dimension_numbers();
    ScatterDimensionNumbers d;
    d.update_window_dims = ToVec(s.update_window_dims());
    d.inserted_window_dims = ToVec(s.inserted_window_dims());
    d.scatter_dims_to_operand_dims = ToVec(s.scatter_dims_to_operand_dims());
    d.input_batching_dims = ToVec(s.input_batching_dims());
    d.scatter_indices_batching_dims = ToVec(s.scatter_indices_batching_dims());
    d.index_vector_dim = s.index_vector_dim();
    a->scatter_dimension_numbers = std::move(d);
  }
  if (p.gather_slice_sizes_size() > 0) {
    a->slice_sizes = ToVec(p.gather_slice_sizes());
  } else if (IsCollectivePermute(op)) {
    if (p.dynamic_slice_sizes_size() > 0) {
      // One list per source-target pair, each as long as the operand's rank.
      int64_t pairs = std::max(1, p.source_target_pairs_size());
      int64_t per = p.dynamic_slice_sizes_size() / pairs;
      if (per == 0 || per * pairs != p.dynamic_slice_sizes_size())
        per = p.dynamic_slice_sizes_size();
      for (int64_t i = 0; i < p.dynamic_slice_sizes_size(); i += per) {
        a->permute_slice_sizes.emplace_back(p.dynamic_slice_sizes().begin() + i,
                                            p.dynamic_slice_sizes().begin() + i + per);
      }
    }
  } else {
    a->slice_sizes = ToVec(p.dynamic_slice_sizes());
  }
  a->indices_are_sorted = p.indices_are_sorted();
  a->unique_indices = p.unique_indices();
  for (const auto& s : p.slice_dimensions()) {
    a->slice.push_back(SliceDimension{s.start(), s.limit(), s.stride()});
  }
  if (p.has_padding_config()) {
    PaddingConfig pc;
    for (const auto& d : p.padding_config().dimensions()) {
      pc.push_back(
          PaddingDimension{d.edge_padding_low(), d.edge_padding_high(), d.interior_padding()});
    }
    a->padding = std::move(pc);
  }
  if (!p.comparison_direction().empty()) {
    int d = FindName(kDirectionNames, p.comparison_direction());
    if (d < 0)
      return ctx.Error(StrCat("unknown comparison direction '", p.comparison_direction(), "'"));
    a->comparison_direction = static_cast<ComparisonDirection>(d);
  }
  if (!p.comparison_type().empty()) {
    int t = FindName(kComparisonTypeNames, p.comparison_type());
    if (t < 0) return ctx.Error(StrCat("unknown comparison type '", p.comparison_type(), "'"));
    a->comparison_type = static_cast<ComparisonType>(t);
    // XLA writes the type always but prints it only when it is not the default.
    if (op == Opcode::kCompare && a->comparison_type == DefaultComparisonType(operand0_type)) {
      a->comparison_type = ComparisonType::kDefault;
    }
  }
  a->exponent_bits = p.exponent_bits();
  a->mantissa_bits = p.mantissa_bits();
  if (p.channel_id() > 0) {
    a->channel_id = p.channel_id();
  } else if (p.all_reduce_id() > 0) {
    a->channel_id = p.all_reduce_id();
  }
  // Replica groups: newest fields first, then the older forms.
  if (p.has_mesh_axes_replica_group_list()) {
    absl::StatusOr<MeshReplicaGroups> m = MeshFromProto(p.mesh_axes_replica_group_list(), ctx);
    if (!m.ok()) return m.status();
    ReplicaGroups g;
    g.mesh = std::move(*m);
    a->replica_groups = std::move(g);
  } else if (p.has_iota_collective_device_list()) {
    absl::StatusOr<IotaDeviceList> iota = IotaFromProto(p.iota_collective_device_list(), ctx);
    if (!iota.ok()) return iota.status();
    a->replica_groups = ReplicaGroups{std::move(*iota), {}, {}};
  } else if (p.has_collective_device_list() &&
             p.collective_device_list().has_iota_replica_group_list()) {
    absl::StatusOr<IotaDeviceList> iota =
        IotaFromProto(p.collective_device_list().iota_replica_group_list(), ctx);
    if (!iota.ok()) return iota.status();
    a->replica_groups = ReplicaGroups{std::move(*iota), {}, {}};
  } else if (p.has_collective_device_list() &&
             p.collective_device_list().replica_groups_size() > 0) {
    ReplicaGroups g;
    for (const auto& r : p.collective_device_list().replica_groups()) {
      g.groups.push_back(ToVec(r.replica_ids()));
    }
    a->replica_groups = std::move(g);
  } else if (p.replica_groups_size() > 0) {
    ReplicaGroups g;
    for (const auto& r : p.replica_groups()) g.groups.push_back(ToVec(r.replica_ids()));
    a->replica_groups = std::move(g);
  } else if (AlwaysHasReplicaGroups(op)) {
    a->replica_groups = ReplicaGroups{};
  }
  if (op == Opcode::kCustomCall) {
    if (p.constrain_layout()) {
      std::vector<Shape> shapes;
      for (int i = 0; i < p.operand_shapes_with_layout_size(); ++i) {
        absl::StatusOr<Shape> s = ShapeFromProto(p.operand_shapes_with_layout(i), limits);
        if (!s.ok())
          return ctx.Error(StrCat("operand_shapes_with_layout ", i, ": ", s.status().message()));
        shapes.push_back(std::move(*s));
      }
      a->operand_layout_constraints = std::move(shapes);
    }
  } else {
    a->constrain_layout = p.constrain_layout();
  }
  if (p.use_global_device_ids()) a->use_global_device_ids = true;
  for (const auto& st : p.source_target_pairs()) {
    a->source_target_pairs.emplace_back(st.source(), st.target());
  }
  a->custom_call_target = p.custom_call_target();
  if (p.custom_call_api_version() != 0) {
    absl::StatusOr<CustomCallApiVersion> v =
        EnumFrom<CustomCallApiVersion>(p.custom_call_api_version(), 4, "api_version", ctx);
    if (!v.ok()) return v.status();
    a->api_version = *v;
  }
  {
    absl::StatusOr<CustomCallSchedule> s =
        EnumFrom<CustomCallSchedule>(p.custom_call_schedule(), 2, "custom_call_schedule", ctx);
    if (!s.ok()) return s.status();
    a->schedule = *s;
  }
  a->custom_call_has_side_effect = p.custom_call_has_side_effect();
  {
    absl::StatusOr<PaddingType> t = EnumFrom<PaddingType>(p.padding_type(), 2, "padding_type", ctx);
    if (!t.ok()) return t.status();
    a->padding_type = *t;
  }
  for (const auto& o : p.output_operand_aliasing()) {
    a->output_operand_aliasing.push_back(OutputOperandAlias{
        ToVec(o.output_shape_index()), o.operand_index(), ToVec(o.operand_shape_index())});
  }
  a->called_computations_as_list = op == Opcode::kCustomCall;
  if (!p.fusion_kind().empty()) {
    int k = FindName(kFusionKindNames, p.fusion_kind());
    if (k < 0) return ctx.Error(StrCat("unknown fusion kind '", p.fusion_kind(), "'"));
    a->fusion_kind = static_cast<FusionKind>(k);
  }
  {
    absl::StatusOr<FftType> t = EnumFrom<FftType>(p.fft_type(), 3, "fft_type", ctx);
    if (!t.ok()) return t.status();
    a->fft_type = *t;
  }
  a->fft_length = ToVec(p.fft_length());
  if (p.has_triangular_solve_options()) {
    const auto& t = p.triangular_solve_options();
    a->left_side = t.left_side();
    a->lower = t.lower();
    a->unit_diagonal = t.unit_diagonal();
    absl::StatusOr<TriangularTranspose> tr =
        EnumFrom<TriangularTranspose>(t.transpose_a(), 3, "transpose_a", ctx);
    if (!tr.ok()) return tr.status();
    a->transpose_a = *tr;
  }
  if (p.has_cholesky_options()) a->lower = a->lower || p.cholesky_options().lower();
  a->epsilon = p.epsilon();
  a->feature_index = p.feature_index();
  {
    absl::StatusOr<RandomDistribution> d =
        EnumFrom<RandomDistribution>(p.distribution(), 2, "distribution", ctx);
    if (!d.ok()) return d.status();
    a->distribution = *d;
    absl::StatusOr<RandomAlgorithm> r =
        EnumFrom<RandomAlgorithm>(p.rng_algorithm(), 2, "rng_algorithm", ctx);
    if (!r.ok()) return r.status();
    a->rng_algorithm = *r;
  }
  a->delta = p.delta();
  a->infeed_config = p.infeed_config();
  a->outfeed_config = p.outfeed_config();
  if (p.has_outfeed_shape()) {
    absl::StatusOr<Shape> s = ShapeFromProto(p.outfeed_shape(), limits);
    if (!s.ok()) return ctx.Error(StrCat("outfeed_shape: ", s.status().message()));
    a->outfeed_shape = std::move(*s);
  }
  a->is_host_transfer = p.is_host_transfer();
  if (p.optional_cross_program_prefetch_index_case() ==
      xla::HloInstructionProto::kCrossProgramPrefetchIndex) {
    a->cross_program_prefetch_index = p.cross_program_prefetch_index();
  }
  a->k = p.k();
  if (op == Opcode::kTopK) a->largest = p.largest();
  a->num_carries = p.num_carries();
  a->is_reverse = p.is_reverse();
  {
    absl::StatusOr<TriState> t = EnumFrom<TriState>(p.is_associative(), 2, "is_associative", ctx);
    if (!t.ok()) return t.status();
    a->is_associative = *t;
  }
  a->is_stable = p.is_stable();
  a->is_composite = p.is_composite();
  a->async_execution_thread =
      p.async_execution_thread() == "main" ? "" : p.async_execution_thread();
  if (op == Opcode::kDomain) a->domain_kind = "sharding";
  for (int side = 0; side < 2; ++side) {
    const bool has = side == 0 ? p.has_domain_entry_sharding() : p.has_domain_exit_sharding();
    if (!has) continue;
    absl::StatusOr<Sharding> s =
        ShardingFromProto(side == 0 ? p.domain_entry_sharding() : p.domain_exit_sharding(), ctx, 0);
    if (!s.ok()) {
      if (absl::IsUnimplemented(s.status())) {
        ctx.Warn(StrCat("domain sharding dropped: ", s.status().message()));
        continue;
      }
      return s.status();
    }
    (side == 0 ? a->domain_entry_sharding : a->domain_exit_sharding) = std::move(*s);
  }
  if (p.has_parameter_replication()) {
    for (bool b : p.parameter_replication().replicated_at_leaf_buffers()) {
      a->parameter_replication.push_back(b);
    }
  }
  if (p.has_statistics_viz()) {
    StatisticsViz sv;
    sv.visualizing_index = p.statistics_viz().stat_index_to_visualize();
    for (const auto& s : p.statistics_viz().statistics()) {
      sv.statistics.push_back(Statistic{s.stat_name(), s.stat_val()});
    }
    a->statistics = std::move(sv);
  }
  if (p.has_result_accuracy()) {
    const xla::ResultAccuracy& r = p.result_accuracy();
    ResultAccuracy ra;
    if (r.specs_case() == xla::ResultAccuracy::kTolerance) {
      ra.mode = ResultAccuracy::Mode::kTolerance;
      ra.atol = r.tolerance().atol();
      ra.rtol = r.tolerance().rtol();
      ra.ulps = r.tolerance().ulps();
    } else if (r.specs_case() == xla::ResultAccuracy::kMode) {
      if (r.mode() < 0 || r.mode() > 1) {
        return ctx.Error(StrCat("invalid result_accuracy mode ", static_cast<int>(r.mode())));
      }
      ra.mode = r.mode() == xla::ResultAccuracy::HIGHEST ? ResultAccuracy::Mode::kHighest
                                                         : ResultAccuracy::Mode::kDefault;
    }
    a->result_accuracy = ra;
  }
  if (p.has_original_value()) ctx.Warn("original_value is not converted");
  return absl::OkStatus();
}

// Applies the workbench's overrides; `no_attributes` reports whether the instruction should
// have no attribute block.
absl::Status ApplyInstructionExtras(const xla::HloInstructionProto& p, Instruction* instr,
                                    InstructionAttrs* a, bool* no_attributes,
                                    const ReadContext& ctx) {
  const xla::HlowbInstructionExtras& e = p.hlowb_extras();
  for (const auto& u : e.unknown_attributes()) a->unknown.emplace_back(u.name(), u.value());
  if (!e.legacy_mode().empty()) a->legacy_mode = e.legacy_mode();
  if (!e.sparsity().empty()) a->sparsity = e.sparsity();
  if (!e.origin().empty()) a->origin = e.origin();
  if (e.has_domain_kind()) a->domain_kind = e.domain_kind();
  *no_attributes = e.no_attributes();
  if (e.has_dimensions_present()) instr->set_has_dimensions(e.dimensions_present());
  if (e.has_dimensions()) *instr->mutable_dimensions() = ToVec(e.dimensions().values());
  if (e.has_index()) instr->set_index(e.index());
  if (e.has_inferred_dimension()) a->inferred_dimension = e.inferred_dimension();
  if (e.has_comparison_type()) {
    absl::StatusOr<ComparisonType> t =
        EnumFrom<ComparisonType>(e.comparison_type(), 4, "hlowb comparison_type", ctx);
    if (!t.ok()) return t.status();
    a->comparison_type = *t;
  }
  if (e.has_use_global_device_ids()) {
    int v = e.use_global_device_ids();
    if (v == 0) {
      a->use_global_device_ids.reset();
    } else {
      a->use_global_device_ids = v == 2;
    }
  }
  if (e.has_channel_id_presence()) {
    if (e.channel_id_presence() == 0) {
      a->channel_id.reset();
    } else {
      a->channel_id = e.channel_id_value();
    }
  }
  if (e.has_replica_groups()) {
    absl::StatusOr<std::optional<ReplicaGroups>> g =
        ReplicaGroupsFromMirror(e.replica_groups(), ctx);
    if (!g.ok()) return g.status();
    a->replica_groups = std::move(*g);
  }
  if (e.has_called_computations_as_list()) {
    a->called_computations_as_list = e.called_computations_as_list();
  }
  if (e.has_permute_slice_sizes()) {
    a->permute_slice_sizes.clear();
    for (const auto& l : e.permute_slice_sizes())
      a->permute_slice_sizes.push_back(ToVec(l.values()));
  }
  if (e.has_slice_sizes()) a->slice_sizes = ToVec(e.slice_sizes().values());
  if (e.has_constrain_layout()) a->constrain_layout = e.constrain_layout();
  if (e.has_operand_layout_constraints_presence()) {
    if (e.operand_layout_constraints_presence() == 0) {
      a->operand_layout_constraints.reset();
    } else {
      std::vector<Shape> shapes;
      for (int i = 0; i < p.operand_shapes_with_layout_size(); ++i) {
        absl::StatusOr<Shape> s =
            ShapeFromProto(p.operand_shapes_with_layout(i), ctx.options->limits);
        if (!s.ok()) return ctx.Error(StrCat("operand_shapes_with_layout: ", s.status().message()));
        shapes.push_back(std::move(*s));
      }
      a->operand_layout_constraints = std::move(shapes);
    }
  }
  if (e.has_largest()) a->largest = e.largest();
  if (e.has_operand_precision()) {
    a->precision_config.operand_precision.clear();
    for (int v : e.operand_precision()) {
      absl::StatusOr<Precision> x = EnumFrom<Precision>(v, 3, "hlowb operand precision", ctx);
      if (!x.ok()) return x.status();
      a->precision_config.operand_precision.push_back(*x);
    }
  }
  if (e.has_algorithm()) a->precision_config.algorithm = e.algorithm();
  if (e.has_feature_group_count()) a->feature_group_count = e.feature_group_count();
  if (e.has_batch_group_count()) a->batch_group_count = e.batch_group_count();
  if (e.has_sharding()) {
    absl::StatusOr<Sharding> s = ShardingFromMirror(e.sharding(), ctx, 0);
    if (!s.ok()) return s.status();
    instr->set_sharding(std::make_unique<Sharding>(std::move(*s)));
  }
  if (e.no_sharding()) instr->set_sharding(nullptr);
  if (e.has_domain_entry_sharding()) {
    absl::StatusOr<Sharding> s = ShardingFromMirror(e.domain_entry_sharding(), ctx, 0);
    if (!s.ok()) return s.status();
    a->domain_entry_sharding = std::move(*s);
  }
  if (e.has_domain_exit_sharding()) {
    absl::StatusOr<Sharding> s = ShardingFromMirror(e.domain_exit_sharding(), ctx, 0);
    if (!s.ok()) return s.status();
    a->domain_exit_sharding = std::move(*s);
  }
  if (e.has_api_version()) {
    absl::StatusOr<CustomCallApiVersion> v =
        EnumFrom<CustomCallApiVersion>(e.api_version(), 4, "hlowb api_version", ctx);
    if (!v.ok()) return v.status();
    a->api_version = *v;
  }
  if (e.frontend_attribute_dict_flips_size() > 0 && instr->frontend_attributes()) {
    ApplyDictFlips(e.frontend_attribute_dict_flips(), instr->mutable_frontend_attributes());
  }
  if (e.has_result_accuracy_presence() && e.result_accuracy_presence() == 0) {
    a->result_accuracy.reset();
  }
  return absl::OkStatus();
}

void FinishAttrs(Instruction* instr, InstructionAttrs&& a, bool no_attributes) {
  static const InstructionAttrs* const kDefaults = new InstructionAttrs();
  if ((AttrsAlwaysShown(instr->opcode()) && !no_attributes) || !(a == *kDefaults)) {
    *instr->mutable_attrs() = std::move(a);
  }
}

bool SameSharding(const Sharding* x, const Sharding* y) {
  if (!x || !y) return x == y;
  return *x == *y;
}

bool SameFrontendAttributes(const FrontendAttributes* x, const FrontendAttributes* y) {
  bool xe = !x || x->entries.empty();
  bool ye = !y || y->entries.empty();
  if (xe || ye) return xe == ye;
  return *x == *y;
}

bool SameMetadata(const OpMetadata* x, const OpMetadata* y) {
  bool xe = !x || x->empty();
  bool ye = !y || y->empty();
  if (xe || ye) return xe == ye;
  return *x == *y;
}

// Fills the extras that make a re-read of `p` reproduce `instr`, by re-reading `p` and
// comparing. What still differs afterwards cannot be carried at all and is reported.
absl::Status ComputeInstructionExtras(const Instruction& instr, xla::HloInstructionProto* p,
                                      const WriteContext& wctx) {
  static const ProtoReadOptions* const kReadOptions = new ProtoReadOptions();
  ReadContext rctx{kReadOptions, nullptr, wctx.prefix, wctx.instruction, instr.id()};
  const Opcode op = instr.opcode();
  const PrimitiveType operand0_type = instr.operand_count() > 0
                                          ? instr.operand(0)->shape().element_type()
                                          : PrimitiveType::kInvalid;
  xla::HlowbInstructionExtras* e = p->mutable_hlowb_extras();

  Instruction scratch(op, instr.name(), &instr.shape());
  InstructionAttrs sa;
  absl::Status st =
      DecodeInstructionFields(*p, &scratch, operand0_type, /*decode_literal=*/false, &sa, rctx);
  if (!st.ok())
    return absl::InternalError(StrCat("re-reading the written instruction: ", st.message()));
  const InstructionAttrs& xa = instr.attrs_or_default();

  if (AttrsAlwaysShown(op) && !instr.attrs()) e->set_no_attributes(true);
  if (scratch.has_dimensions() != instr.has_dimensions())
    e->set_dimensions_present(instr.has_dimensions());
  if (scratch.dimensions() != instr.dimensions()) {
    AssignInts(instr.dimensions(), e->mutable_dimensions()->mutable_values());
  }
  if (scratch.index() != instr.index()) e->set_index(instr.index());
  if (sa.inferred_dimension != xa.inferred_dimension)
    e->set_inferred_dimension(xa.inferred_dimension);
  if (sa.comparison_type != xa.comparison_type) {
    e->set_comparison_type(static_cast<int>(xa.comparison_type));
  }
  if (sa.use_global_device_ids != xa.use_global_device_ids) {
    e->set_use_global_device_ids(!xa.use_global_device_ids ? 0
                                                           : (*xa.use_global_device_ids ? 2 : 1));
  }
  if (sa.channel_id != xa.channel_id) {
    e->set_channel_id_presence(xa.channel_id ? 1 : 0);
    e->set_channel_id_value(xa.channel_id.value_or(0));
  }
  if (sa.replica_groups != xa.replica_groups) {
    ReplicaGroupsToMirror(xa.replica_groups, e->mutable_replica_groups());
  }
  if (sa.called_computations_as_list != xa.called_computations_as_list) {
    e->set_called_computations_as_list(xa.called_computations_as_list);
  }
  if (sa.permute_slice_sizes != xa.permute_slice_sizes) {
    e->set_has_permute_slice_sizes(true);
    for (const auto& v : xa.permute_slice_sizes)
      AssignInts(v, e->add_permute_slice_sizes()->mutable_values());
  }
  if (sa.slice_sizes != xa.slice_sizes)
    AssignInts(xa.slice_sizes, e->mutable_slice_sizes()->mutable_values());
  if (sa.constrain_layout != xa.constrain_layout) e->set_constrain_layout(xa.constrain_layout);
  if (sa.operand_layout_constraints.has_value() != xa.operand_layout_constraints.has_value()) {
    e->set_operand_layout_constraints_presence(xa.operand_layout_constraints ? 1 : 0);
  }
  if (sa.largest != xa.largest) e->set_largest(xa.largest);
  if (sa.precision_config.operand_precision != xa.precision_config.operand_precision) {
    e->set_has_operand_precision(true);
    for (Precision x : xa.precision_config.operand_precision)
      e->add_operand_precision(static_cast<int>(x));
  }
  if (sa.precision_config.algorithm != xa.precision_config.algorithm) {
    e->set_algorithm(xa.precision_config.algorithm);
  }
  if (sa.feature_group_count != xa.feature_group_count) {
    e->set_feature_group_count(xa.feature_group_count);
  }
  if (sa.batch_group_count != xa.batch_group_count) e->set_batch_group_count(xa.batch_group_count);
  if (sa.domain_kind != xa.domain_kind) e->set_domain_kind(xa.domain_kind);
  if (sa.domain_entry_sharding != xa.domain_entry_sharding && xa.domain_entry_sharding) {
    ShardingToMirror(*xa.domain_entry_sharding, e->mutable_domain_entry_sharding());
  }
  if (sa.domain_exit_sharding != xa.domain_exit_sharding && xa.domain_exit_sharding) {
    ShardingToMirror(*xa.domain_exit_sharding, e->mutable_domain_exit_sharding());
  }
  if (sa.api_version != xa.api_version) e->set_api_version(static_cast<int>(xa.api_version));
  if (sa.result_accuracy.has_value() != xa.result_accuracy.has_value()) {
    e->set_result_accuracy_presence(xa.result_accuracy ? 1 : 0);
  }
  if (sa.sparsity != xa.sparsity) e->set_sparsity(xa.sparsity);
  if (!SameSharding(scratch.sharding(), instr.sharding())) {
    if (instr.sharding()) {
      ShardingToMirror(*instr.sharding(), e->mutable_sharding());
    } else {
      e->set_no_sharding(true);
    }
  }

  // Check: applying the extras must reproduce the instruction.
  bool no_attributes = false;
  st = ApplyInstructionExtras(*p, &scratch, &sa, &no_attributes, rctx);
  if (!st.ok()) return absl::InternalError(StrCat("re-reading the written extras: ", st.message()));
  // The literal is not re-read (it is exact by construction); compare without it.
  if (op != Opcode::kConstant) sa.custom_call_literal = xa.custom_call_literal;
  FinishAttrs(&scratch, std::move(sa), no_attributes);
  std::vector<std::string> lost;
  if (!(scratch.attrs_or_default() == xa)) lost.push_back("opcode-specific attributes");
  if (AttrsAlwaysShown(op) && (scratch.attrs() == nullptr) != (instr.attrs() == nullptr)) {
    lost.push_back("attribute block presence");
  }
  if (scratch.has_dimensions() != instr.has_dimensions() ||
      scratch.dimensions() != instr.dimensions()) {
    lost.push_back("dimensions");
  }
  if (scratch.index() != instr.index()) lost.push_back("index");
  if (!SameSharding(scratch.sharding(), instr.sharding())) lost.push_back("sharding");
  if (!SameFrontendAttributes(scratch.frontend_attributes(), instr.frontend_attributes())) {
    lost.push_back("frontend attributes");
  }
  if (!SameMetadata(scratch.metadata(), instr.metadata())) lost.push_back("metadata");
  if (scratch.backend_config() != instr.backend_config()) lost.push_back("backend_config");
  for (const std::string& what : lost) wctx.Warn(StrCat(what, " cannot be represented"));
  return absl::OkStatus();
}

// Names the extras fields that are set (for loss reports).
std::string SetFieldNames(const google::protobuf::Message& m) {
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  std::string s;
  for (const auto* f : fields) StrAppend(&s, s.empty() ? "" : ", ", f->name());
  return s;
}

// ---------------------------------------------------------------------------------------------
// Orders

// Positions of instructions in an order where operands come first; keeps `order` where it
// already has that property. Returns false on a cycle through operands.
bool OperandsFirst(const std::vector<Instruction*>& order, std::vector<Instruction*>* out) {
  absl::flat_hash_map<const Instruction*, int> pos;
  for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = static_cast<int>(i);
  bool ok = true;
  for (size_t i = 0; i < order.size() && ok; ++i) {
    for (const Instruction* o : order[i]->operands()) {
      auto it = pos.find(o);
      if (it == pos.end() || it->second >= static_cast<int>(i)) ok = false;
    }
  }
  if (ok) {
    *out = order;
    return true;
  }
  // Depth-first post-order, roots and operands in their given order.
  out->clear();
  std::vector<int> state(order.size(), 0);  // 0 new, 1 open, 2 done
  for (size_t root = 0; root < order.size(); ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, int>> stack = {{static_cast<int>(root), 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const auto& ops = order[node]->operands();
      if (next < static_cast<int>(ops.size())) {
        auto it = pos.find(ops[next++]);
        if (it == pos.end()) continue;
        int child = it->second;
        if (state[child] == 1) return false;
        if (state[child] == 0) {
          state[child] = 1;
          stack.push_back({child, 0});
        }
        continue;
      }
      state[node] = 2;
      out->push_back(order[node]);
      stack.pop_back();
    }
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Module: IR -> proto

absl::Status ModuleToProto(const Module& module, xla::HloModuleProto* proto,
                           const ProtoWriteOptions& options, std::vector<std::string>* warnings) {
  std::vector<std::string> local_warnings;
  std::vector<std::string>* w = warnings ? warnings : &local_warnings;
  const size_t first_warning = w->size();
  const std::string module_where = StrCat("module '", module.name(), "'");
  WriteContext mctx{&options, w, &module_where, {}};
  proto->Clear();
  proto->set_name(module.name());
  proto->set_id(module.id());
  const ModuleConfig& config = module.config();
  xla::HlowbModuleExtras* mext = proto->mutable_hlowb_extras();

  // Ids must be unique for references to resolve; renumber when they are not.
  bool comp_ids_ok = true;
  {
    absl::flat_hash_set<int64_t> seen;
    for (const auto& c : module.computations()) comp_ids_ok &= seen.insert(c->id()).second;
  }
  absl::flat_hash_map<const Computation*, int64_t> comp_id;
  for (size_t i = 0; i < module.computations().size(); ++i) {
    const Computation* c = module.computations()[i].get();
    comp_id[c] = comp_ids_ok ? c->id() : static_cast<int64_t>(i);
  }
  if (!comp_ids_ok) mctx.Warn("computation ids are not unique; renumbered 0, 1, ...");

  // Callees before callers, keeping the textual order where it already has that property.
  std::vector<const Computation*> text_order;
  for (const auto& c : module.computations()) text_order.push_back(c.get());
  std::vector<const Computation*> comp_order;
  {
    // Iterative depth-first post-order (call chains can be deeper than the stack).
    absl::flat_hash_map<const Computation*, int> state;  // 1 open, 2 done
    bool cycle = false;
    struct Frame {
      const Computation* comp;
      size_t instr = 0;
      size_t callee = 0;
    };
    for (const Computation* root : text_order) {
      if (state[root] != 0) continue;
      std::vector<Frame> stack = {{root}};
      state[root] = 1;
      while (!stack.empty()) {
        Frame& f = stack.back();
        const auto& instrs = f.comp->instructions();
        const Computation* next = nullptr;
        while (f.instr < instrs.size() && !next) {
          const auto& called = instrs[f.instr]->called_computations();
          if (f.callee < called.size()) {
            const Computation* c = called[f.callee++];
            if (!c || !comp_id.contains(c)) continue;
            int& st = state[c];
            if (st == 1) cycle = true;
            if (st == 0) next = c;
          } else {
            ++f.instr;
            f.callee = 0;
          }
        }
        if (next) {
          state[next] = 1;
          stack.push_back({next});
          continue;
        }
        state[f.comp] = 2;
        comp_order.push_back(f.comp);
        stack.pop_back();
      }
    }
    if (cycle) {
      mctx.Warn("computations call each other in a cycle; XLA will reject this module");
      comp_order = text_order;
    }
  }
  if (comp_order != text_order) {
    for (const Computation* c : text_order) mext->add_computation_order(comp_id[c]);
  }

  absl::flat_hash_set<const Computation*> fusion_called;
  for (const Computation* c : text_order) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == Opcode::kFusion) {
        for (const Computation* callee : i->called_computations()) fusion_called.insert(callee);
      }
    }
  }

  // Instruction ids: unique within each computation or renumbered module-wide.
  absl::flat_hash_map<const Instruction*, int64_t> renumbered;
  bool instr_ids_ok = true;
  for (const Computation* c : text_order) {
    absl::flat_hash_set<int64_t> seen;
    for (const Instruction* i : c->instructions()) instr_ids_ok &= seen.insert(i->id()).second;
  }
  if (!instr_ids_ok) {
    mctx.Warn("instruction ids are not unique within a computation; renumbered");
    int64_t next = 0;
    for (const Computation* c : text_order) {
      for (const Instruction* i : c->instructions()) renumbered[i] = next++;
    }
  }
  auto id_of = [&](const Instruction* i) { return instr_ids_ok ? i->id() : renumbered[i]; };

  xla::HloScheduleProto* schedule = config.is_scheduled ? proto->mutable_schedule() : nullptr;
  bool any_loss = false;
  for (const Computation* c : comp_order) {
    xla::HloComputationProto* cp = proto->add_computations();
    cp->set_name(c->name());
    cp->set_id(comp_id[c]);
    cp->set_execution_thread(c->execution_thread());
    cp->set_is_fusion_computation(fusion_called.contains(c));
    if (c->root()) cp->set_root_id(id_of(c->root()));
    xla::ProgramShapeProto* ps = cp->mutable_program_shape();
    for (const Instruction* param : c->parameters()) {
      if (!param) continue;
      ShapeToProto(param->shape(), ps->add_parameters());
      ps->add_parameter_names(param->name());
    }
    if (c->root()) ShapeToProto(c->root()->shape(), ps->mutable_result());

    std::vector<Instruction*> order;
    if (!OperandsFirst(c->instructions(), &order)) {
      mctx.Warn(StrCat("computation '", c->name(),
                       "' has a cycle through operands; XLA will reject this module"));
      order = c->instructions();
    }
    const bool sequenced = schedule && !fusion_called.contains(c);
    if (sequenced) {
      auto& seq = (*schedule->mutable_sequences())[comp_id[c]];
      for (const Instruction* i : c->instructions()) seq.add_instruction_ids(id_of(i));
    } else if (order != c->instructions()) {
      for (const Instruction* i : c->instructions()) {
        cp->mutable_hlowb_extras()->add_instruction_order(id_of(i));
      }
    }
    const std::string comp_where = StrCat("computation '", c->name(), "'");
    for (const Instruction* instr : order) {
      WriteContext ictx{&options, w, &comp_where, instr->name()};
      xla::HloInstructionProto* ip = cp->add_instructions();
      xla::HlowbInstructionExtras ext;
      absl::Status st = EncodeInstruction(*instr, ip, &ext, ictx);
      if (!st.ok()) return st;
      if (!instr_ids_ok) {
        ip->set_id(id_of(instr));
        ip->clear_operand_ids();
        for (const Instruction* o : instr->operands()) ip->add_operand_ids(id_of(o));
        ip->clear_control_predecessor_ids();
        for (const Instruction* o : instr->control_predecessors()) {
          ip->add_control_predecessor_ids(id_of(o));
        }
      }
      if (!comp_ids_ok) {
        ip->clear_called_computation_ids();
        std::vector<Computation*> called = instr->called_computations();
        if (instr->opcode() == Opcode::kWhile && called.size() == 2)
          std::swap(called[0], called[1]);
        for (const Computation* callee : called) ip->add_called_computation_ids(comp_id[callee]);
      }
      if ((instr->opcode() == Opcode::kAsyncStart || instr->opcode() == Opcode::kAsyncUpdate ||
           instr->opcode() == Opcode::kAsyncDone) &&
          instr->async_sugar() != XlaPrintsAsyncSugar(*instr)) {
        ext.set_async_sugar(instr->async_sugar());
      }
      // Items written straight into the extras by the encoder.
      ip->mutable_hlowb_extras()->MergeFrom(ext);
      st = ComputeInstructionExtras(*instr, ip, ictx);
      if (!st.ok()) return st;
      if (ip->hlowb_extras().ByteSizeLong() == 0) {
        ip->clear_hlowb_extras();
      } else if (!options.workbench_extensions) {
        any_loss = true;
        ictx.Warn(StrCat("dropped (not in XLA's schema): ", SetFieldNames(ip->hlowb_extras())));
        ip->clear_hlowb_extras();
      }
    }
    if (cp->hlowb_extras().ByteSizeLong() == 0) {
      cp->clear_hlowb_extras();
    } else if (!options.workbench_extensions) {
      any_loss = true;
      mctx.Warn(StrCat("computation '", c->name(), "': textual instruction order dropped"));
      cp->clear_hlowb_extras();
    }
  }

  // Entry.
  if (const Computation* entry = module.entry()) {
    proto->set_entry_computation_name(entry->name());
    proto->set_entry_computation_id(comp_id[entry]);
    xla::ProgramShapeProto* hps = proto->mutable_host_program_shape();
    if (config.entry_computation_layout) {
      for (const Shape& s : config.entry_computation_layout->parameters) {
        ShapeToProto(s, hps->add_parameters());
      }
      ShapeToProto(config.entry_computation_layout->result, hps->mutable_result());
    } else {
      // XLA requires host_program_shape; derive it from the entry's signature.
      mext->set_no_entry_computation_layout(true);
      for (const Instruction* param : entry->parameters()) {
        if (param) ShapeToProto(param->shape(), hps->add_parameters());
      }
      if (entry->root()) ShapeToProto(entry->root()->shape(), hps->mutable_result());
    }
    for (const Instruction* param : entry->parameters()) {
      if (param) hps->add_parameter_names(param->name());
    }
  }

  // Aliasing and donors.
  if (config.has_input_output_alias || !config.input_output_alias.empty()) {
    auto* io = proto->mutable_input_output_alias();
    for (const InputOutputAlias& a : config.input_output_alias) {
      auto* e = io->add_entries();
      AssignInts(a.output_index, e->mutable_output_shape_index());
      e->set_parameter_number(a.parameter_number);
      AssignInts(a.parameter_index, e->mutable_parameter_shape_index());
      e->set_kind(a.must_alias ? xla::MUST_ALIAS : xla::MAY_ALIAS);
    }
  }
  if (config.has_input_output_alias != !config.input_output_alias.empty()) {
    mext->set_has_input_output_alias(config.has_input_output_alias);
  }
  if (config.has_buffer_donor || !config.buffer_donors.empty()) {
    auto* bd = proto->mutable_buffer_donor();
    for (const BufferDonor& d : config.buffer_donors) {
      auto* e = bd->add_entries();
      e->set_parameter_number(d.parameter_number);
      AssignInts(d.parameter_index, e->mutable_parameter_shape_index());
    }
  }
  if (config.has_buffer_donor != !config.buffer_donors.empty()) {
    mext->set_has_buffer_donor(config.has_buffer_donor);
  }
  if (!config.frontend_attributes.entries.empty()) {
    std::vector<std::string> duplicates;
    FrontendAttributesToProto(config.frontend_attributes, proto->mutable_frontend_attributes(),
                              mext->mutable_frontend_attribute_dict_flips(), &duplicates);
    for (const std::string& key : duplicates) {
      mctx.Warn(StrCat("frontend attribute '", key, "' is given twice; only the first is kept"));
    }
  }
  // Stack frames.
  const StackFrameIndex& sf = module.stack_frames();
  if (!sf.empty()) {
    xla::StackFrameIndexProto* sp = proto->mutable_stack_frame_index();
    for (const std::string& s : sf.file_names) sp->add_file_names(s);
    for (const std::string& s : sf.function_names) sp->add_function_names(s);
    for (const FileLocation& l : sf.file_locations) {
      auto* lp = sp->add_file_locations();
      lp->set_file_name_id(l.file_name_id);
      lp->set_function_name_id(l.function_name_id);
      lp->set_line(l.line);
      lp->set_end_line(l.end_line);
      lp->set_column(l.column);
      lp->set_end_column(l.end_column);
    }
    for (const StackFrame& f : sf.stack_frames) {
      auto* fp = sp->add_stack_frames();
      fp->set_file_location_id(f.file_location_id);
      fp->set_parent_frame_id(f.parent_frame_id);
    }
  }

  // Header attributes XLA keeps outside HloModuleProto.
  auto config_only = [&](std::string_view what) {
    mctx.Warn(StrCat(what, " is kept by XLA in HloModuleConfig, not in HloModuleProto"));
  };
  if (config.replica_count != 1) {
    mext->set_replica_count(config.replica_count);
    config_only(StrCat("replica_count=", config.replica_count));
  }
  if (config.num_partitions != 1) {
    mext->set_num_partitions(config.num_partitions);
    config_only(StrCat("num_partitions=", config.num_partitions));
  }
  if (config.alias_passthrough_params) {
    mext->set_alias_passthrough_params(true);
    config_only("alias_passthrough_params=true");
  }
  const std::vector<bool> kDefaultPropagation = {false};
  if (config.allow_spmd_sharding_propagation_to_parameters != kDefaultPropagation) {
    for (bool b : config.allow_spmd_sharding_propagation_to_parameters) {
      mext->mutable_allow_spmd_sharding_propagation_to_parameters()->add_values(b);
    }
    mext->mutable_allow_spmd_sharding_propagation_to_parameters();
    config_only("allow_spmd_sharding_propagation_to_parameters");
  }
  if (config.allow_spmd_sharding_propagation_to_output != kDefaultPropagation) {
    for (bool b : config.allow_spmd_sharding_propagation_to_output) {
      mext->mutable_allow_spmd_sharding_propagation_to_output()->add_values(b);
    }
    mext->mutable_allow_spmd_sharding_propagation_to_output();
    config_only("allow_spmd_sharding_propagation_to_output");
  }
  if (!config.origin_recovery_table.empty()) {
    mext->set_origin_recovery_table(config.origin_recovery_table);
    mctx.Warn("origin_recovery_table is not written to XLA's original_value_recovery_table");
  }
  for (const auto& [name, value] : config.unknown) {
    auto* u = mext->add_unknown_attributes();
    u->set_name(name);
    u->set_value(value);
    mctx.Warn(StrCat("header attribute '", name, "' is not modeled by this version"));
  }
  if (mext->ByteSizeLong() == 0) {
    proto->clear_hlowb_extras();
  } else if (!options.workbench_extensions) {
    any_loss = true;
    mctx.Warn(StrCat("dropped (not in XLA's schema): ", SetFieldNames(*mext)));
    proto->clear_hlowb_extras();
  }
  if (any_loss && options.fail_on_loss) {
    std::string msg = "the module cannot be written to XLA's schema without loss:";
    for (size_t i = first_warning; i < w->size(); ++i) StrAppend(&msg, "\n  ", (*w)[i]);
    return absl::FailedPreconditionError(msg);
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Module: proto -> IR

namespace {

// Finds a cycle among `nodes` where edges(i) lists successor indices; returns the node indices
// on the cycle (empty if none).
std::vector<int> FindCycle(int n, const std::function<const std::vector<int>&(int)>& edges) {
  std::vector<int> state(n, 0);
  for (int root = 0; root < n; ++root) {
    if (state[root]) continue;
    std::vector<std::pair<int, size_t>> stack = {{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const std::vector<int>& succ = edges(node);
      if (next < succ.size()) {
        int child = succ[next++];
        if (state[child] == 1) {
          std::vector<int> cycle;
          size_t start = 0;
          while (stack[start].first != child) ++start;
          for (size_t k = start; k < stack.size(); ++k) cycle.push_back(stack[k].first);
          return cycle;
        }
        if (state[child] == 0) {
          state[child] = 1;
          stack.push_back({child, 0});
        }
        continue;
      }
      state[node] = 2;
      stack.pop_back();
    }
  }
  return {};
}

// Interns instruction shapes. Array shapes with dense layouts (nearly every instruction in a
// real module, tiled TPU/GPU layouts included) skip the full conversion when an equal shape was
// seen before: they are matched field by field against the cached IR shape.
class ShapeInterner {
 public:
  ShapeInterner(Module* module, const ProtoLimits& limits) : module_(module), limits_(limits) {}

  absl::StatusOr<const Shape*> Intern(const xla::ShapeProto& p) {
    const bool simple = IsSimple(p);
    uint64_t h = 0;
    if (simple) {
      h = Hash(p);
      auto it = cache_.find(h);
      if (it != cache_.end() && Matches(*it->second, p)) return it->second;
    }
    absl::StatusOr<Shape> shape = ShapeFromProto(p, limits_);
    if (!shape.ok()) return shape.status();
    const Shape* interned = module_->InternShape(*shape);
    if (simple) cache_[h] = interned;
    return interned;
  }

 private:
  static bool IsSimple(const xla::ShapeProto& p) {
    if (!IsValidPrimitiveTypeNumber(p.element_type()) ||
        !IsArrayType(static_cast<PrimitiveType>(p.element_type())) || p.tuple_shapes_size() > 0) {
      return false;
    }
    if (!p.has_layout()) return true;
    const xla::LayoutProto& l = p.layout();
    return l.dim_level_types_size() == 0 && l.dim_unique_size() == 0 && l.dim_ordered_size() == 0 &&
           !l.has_physical_shape() &&
           IsValidPrimitiveTypeNumber(l.index_primitive_type()) ==
               (l.index_primitive_type() != 0) &&
           IsValidPrimitiveTypeNumber(l.pointer_primitive_type()) ==
               (l.pointer_primitive_type() != 0);
  }
  static uint64_t Hash(const xla::ShapeProto& p) {
    uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(p.element_type());
    auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull + (h >> 29); };
    for (int64_t d : p.dimensions()) mix(static_cast<uint64_t>(d));
    mix(0xd1);
    for (bool d : p.is_dynamic_dimension()) mix(d);
    mix(p.has_layout() ? 0x1a : 0x2b);
    const xla::LayoutProto& l = p.layout();
    for (int64_t d : l.minor_to_major()) mix(static_cast<uint64_t>(d));
    for (const xla::TileProto& t : l.tiles()) {
      mix(0x7e);
      for (int64_t d : t.dimensions()) mix(static_cast<uint64_t>(d));
    }
    mix(static_cast<uint64_t>(l.tail_padding_alignment_in_elements()));
    mix(static_cast<uint64_t>(l.element_size_in_bits()));
    mix(static_cast<uint64_t>(l.memory_space()));
    mix(static_cast<uint64_t>(l.index_primitive_type()) << 8 |
        static_cast<uint64_t>(l.pointer_primitive_type()));
    mix(static_cast<uint64_t>(l.dynamic_shape_metadata_prefix_bytes()));
    for (const xla::SplitConfigProto& c : l.split_configs()) {
      mix(static_cast<uint64_t>(c.dimension()));
      for (int64_t i : c.split_indices()) mix(static_cast<uint64_t>(i));
    }
    return h;
  }
  template <typename R>
  static bool SameInts(const std::vector<int64_t>& v, const R& r) {
    if (static_cast<int>(v.size()) != r.size()) return false;
    for (size_t i = 0; i < v.size(); ++i) {
      if (v[i] != r.Get(static_cast<int>(i))) return false;
    }
    return true;
  }
  static bool Matches(const Shape& s, const xla::ShapeProto& p) {
    if (static_cast<int>(s.element_type()) != p.element_type() || s.rank() != p.dimensions_size() ||
        s.has_layout() != p.has_layout()) {
      return false;
    }
    for (int i = 0; i < s.rank(); ++i) {
      bool dynamic = p.is_dynamic_dimension_size() > 0 && p.is_dynamic_dimension(i);
      if (s.dimension(i) != p.dimensions(i) || s.is_dynamic_dimension(i) != dynamic) return false;
    }
    if (!s.has_layout()) return true;
    const Layout& l = s.layout();
    const xla::LayoutProto& lp = p.layout();
    if (!l.dim_levels.empty() || l.physical_shape ||
        !SameInts(l.minor_to_major, lp.minor_to_major()) ||
        static_cast<int>(l.tiles.size()) != lp.tiles_size() ||
        l.tail_padding_alignment_in_elements !=
            std::max<int64_t>(1, lp.tail_padding_alignment_in_elements()) ||
        l.element_size_in_bits != lp.element_size_in_bits() ||
        l.memory_space != lp.memory_space() ||
        static_cast<int>(l.index_primitive_type) != lp.index_primitive_type() ||
        static_cast<int>(l.pointer_primitive_type) != lp.pointer_primitive_type() ||
        l.dynamic_shape_metadata_prefix_bytes != lp.dynamic_shape_metadata_prefix_bytes() ||
        static_cast<int>(l.split_configs.size()) != lp.split_configs_size()) {
      return false;
    }
    for (size_t i = 0; i < l.tiles.size(); ++i) {
      if (!SameInts(l.tiles[i].dimensions, lp.tiles(static_cast<int>(i)).dimensions()))
        return false;
    }
    for (size_t i = 0; i < l.split_configs.size(); ++i) {
      const xla::SplitConfigProto& c = lp.split_configs(static_cast<int>(i));
      if (l.split_configs[i].dimension != c.dimension() ||
          !SameInts(l.split_configs[i].split_indices, c.split_indices())) {
        return false;
      }
    }
    return true;
  }

  Module* module_;
  const ProtoLimits& limits_;
  absl::flat_hash_map<uint64_t, const Shape*> cache_;
};

// Reorders `items` (ids in proto order) to follow `sequence`, which must list each id once.
absl::Status Reorder(const std::vector<int64_t>& sequence, std::vector<Instruction*>* items,
                     std::string_view what) {
  if (sequence.size() != items->size()) {
    return Invalid(StrCat(what, " lists ", sequence.size(),
                          " instructions but the computation has ", items->size()));
  }
  absl::flat_hash_map<int64_t, Instruction*> by_id;
  for (Instruction* i : *items) by_id[i->id()] = i;
  std::vector<Instruction*> out;
  out.reserve(items->size());
  absl::flat_hash_set<int64_t> used;
  for (int64_t id : sequence) {
    auto it = by_id.find(id);
    if (it == by_id.end())
      return Invalid(StrCat(what, " names instruction id ", id, ", which does not exist"));
    if (!used.insert(id).second)
      return Invalid(StrCat(what, " lists instruction id ", id, " twice"));
    out.push_back(it->second);
  }
  *items = std::move(out);
  return absl::OkStatus();
}

}  // namespace

namespace {

// Marks the sugar on a decoded module: the workbench's own record where the proto has one
// (`decided`), else XLA's rule. Instructions are visited operands first.
void MarkAsyncSugar(Module* module, const absl::flat_hash_map<const Instruction*, bool>& decided) {
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> order;
    if (!OperandsFirst(comp->instructions(), &order)) order = comp->instructions();
    for (Instruction* i : order) {
      if (i->opcode() != Opcode::kAsyncStart && i->opcode() != Opcode::kAsyncUpdate &&
          i->opcode() != Opcode::kAsyncDone) {
        continue;
      }
      auto it = decided.find(i);
      i->set_async_sugar(it != decided.end() ? it->second : XlaPrintsAsyncSugar(*i));
    }
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Module>> ModuleFromProto(const xla::HloModuleProto& proto,
                                                        const ProtoReadOptions& options,
                                                        std::vector<std::string>* warnings) {
  const std::string mwhere = StrCat("module '", proto.name(), "'");
  ReadContext mctx{&options, warnings, &mwhere, {}, 0};
  const bool use_ext = options.apply_workbench_extensions;
  if (proto.computations_size() == 0) return mctx.Error("has no computations");
  auto module = std::make_unique<Module>(proto.name());
  module->set_id(proto.id());
  // Async instructions whose sugar the workbench recorded (else XLA's rule decides).
  absl::flat_hash_map<const Instruction*, bool> sugar_decided;

  // Computations, by id and name.
  struct PendingComputation {
    const xla::HloComputationProto* proto;
    std::unique_ptr<Computation> comp;
    std::vector<Instruction*> instrs;  // proto order
    std::vector<Instruction*> order;   // final order (schedule or textual)
    // Instruction id -> position in the proto's instruction list.
    absl::flat_hash_map<int64_t, int> by_id;
    // Every operand and control predecessor precedes its user in the proto (no cycle possible).
    bool dependency_order = true;
  };
  std::vector<PendingComputation> comps(proto.computations_size());
  absl::flat_hash_map<int64_t, int> comp_index;
  absl::flat_hash_map<std::string, int> comp_by_name;
  for (int ci = 0; ci < proto.computations_size(); ++ci) {
    const xla::HloComputationProto& cp = proto.computations(ci);
    if (cp.name().empty())
      return mctx.Error(StrCat("computation ", ci, " (id ", cp.id(), ") has no name"));
    if (!comp_index.emplace(cp.id(), ci).second) {
      return mctx.Error(StrCat("computations '", proto.computations(comp_index[cp.id()]).name(),
                               "' and '", cp.name(), "' have the same id ", cp.id()));
    }
    if (!comp_by_name.emplace(cp.name(), ci).second) {
      return mctx.Error(StrCat("two computations are named '", cp.name(), "'"));
    }
    comps[ci].proto = &cp;
    comps[ci].comp = std::make_unique<Computation>(cp.name());
    comps[ci].comp->set_id(cp.id());
    comps[ci].comp->set_execution_thread(cp.execution_thread() == "main" ? ""
                                                                         : cp.execution_thread());
  }

  // Instructions.
  ShapeInterner shapes(module.get(), options.limits);
  for (PendingComputation& pc : comps) {
    const xla::HloComputationProto& cp = *pc.proto;
    const std::string cwhere = StrCat(mwhere, ", computation '", cp.name(), "' (id ", cp.id(), ")");
    if (cp.instructions_size() == 0) return Invalid(StrCat(cwhere, ": has no instructions"));
    absl::flat_hash_set<absl::string_view> names;
    names.reserve(cp.instructions_size());
    pc.by_id.reserve(cp.instructions_size());
    pc.instrs.reserve(cp.instructions_size());
    for (const xla::HloInstructionProto& ip : cp.instructions()) {
      auto iwhere = [&] {
        return StrCat(cwhere, ", instruction '", ip.name(), "' (id ", ip.id(), ")");
      };
      if (ip.name().empty())
        return Invalid(StrCat(cwhere, ": instruction id ", ip.id(), " has no name"));
      if (!names.insert(absl::string_view(ip.name())).second) {
        return Invalid(StrCat(cwhere, ": two instructions are named '", ip.name(), "'"));
      }
      std::optional<Opcode> op = ParseOpcode(ip.opcode());
      if (!op) return Invalid(StrCat(iwhere(), ": unknown opcode '", ip.opcode(), "'"));
      if (!ip.has_shape()) return Invalid(StrCat(iwhere(), ": has no shape"));
      absl::StatusOr<const Shape*> shape = shapes.Intern(ip.shape());
      if (!shape.ok()) return Invalid(StrCat(iwhere(), ": shape: ", shape.status().message()));
      Instruction* instr = module->NewInstruction(*op, ip.name(), *shape);
      instr->set_id(ip.id());
      if (!pc.by_id.emplace(ip.id(), static_cast<int>(pc.instrs.size())).second) {
        return Invalid(StrCat(cwhere, ": instructions '", pc.instrs[pc.by_id[ip.id()]]->name(),
                              "' and '", ip.name(), "' have the same id ", ip.id()));
      }
      pc.instrs.push_back(instr);
    }
  }

  // References, attributes.
  for (PendingComputation& pc : comps) {
    const xla::HloComputationProto& cp = *pc.proto;
    const std::string cwhere = StrCat(mwhere, ", computation '", cp.name(), "' (id ", cp.id(), ")");
    for (int ii = 0; ii < cp.instructions_size(); ++ii) {
      const xla::HloInstructionProto& ip = cp.instructions(ii);
      Instruction* instr = pc.instrs[ii];
      ReadContext ictx{&options, warnings, &cwhere, ip.name(), ip.id()};
      instr->mutable_operands()->reserve(ip.operand_ids_size());
      for (int k = 0; k < ip.operand_ids_size(); ++k) {
        auto it = pc.by_id.find(ip.operand_ids(k));
        if (it == pc.by_id.end()) {
          return ictx.Error(StrCat("operand ", k, " refers to id ", ip.operand_ids(k),
                                   ", which is not an instruction of this computation"));
        }
        pc.dependency_order &= it->second < ii;
        instr->mutable_operands()->push_back(pc.instrs[it->second]);
      }
      for (int k = 0; k < ip.control_predecessor_ids_size(); ++k) {
        auto it = pc.by_id.find(ip.control_predecessor_ids(k));
        if (it == pc.by_id.end()) {
          return ictx.Error(StrCat("control predecessor ", k, " refers to id ",
                                   ip.control_predecessor_ids(k),
                                   ", which is not an instruction of this computation"));
        }
        pc.dependency_order &= it->second < ii;
        instr->mutable_control_predecessors()->push_back(pc.instrs[it->second]);
      }
      for (int k = 0; k < ip.called_computation_ids_size(); ++k) {
        auto it = comp_index.find(ip.called_computation_ids(k));
        if (it == comp_index.end()) {
          return ictx.Error(StrCat("called computation ", k, " has id ",
                                   ip.called_computation_ids(k), ", which is not in the module"));
        }
        instr->mutable_called_computations()->push_back(comps[it->second].comp.get());
      }
      if (instr->opcode() == Opcode::kWhile && instr->called_computations().size() == 2) {
        std::swap((*instr->mutable_called_computations())[0],
                  (*instr->mutable_called_computations())[1]);
      }
      PrimitiveType operand0_type = instr->operand_count() > 0
                                        ? instr->operand(0)->shape().element_type()
                                        : PrimitiveType::kInvalid;
      InstructionAttrs a;
      absl::Status st =
          DecodeInstructionFields(ip, instr, operand0_type, /*decode_literal=*/true, &a, ictx);
      if (!st.ok()) return st;
      bool no_attributes = false;
      if (use_ext && ip.has_hlowb_extras()) {
        st = ApplyInstructionExtras(ip, instr, &a, &no_attributes, ictx);
        if (!st.ok()) return st;
        if (ip.hlowb_extras().has_async_sugar()) {
          sugar_decided[instr] = ip.hlowb_extras().async_sugar();
        }
      }
      FinishAttrs(instr, std::move(a), no_attributes);
    }
  }

  // Order inside each computation: proto order, the schedule, or the textual order.
  const bool scheduled = proto.has_schedule();
  for (const auto& [cid, seq] : proto.schedule().sequences()) {
    if (!comp_index.contains(cid)) {
      return mctx.Error(StrCat("the schedule has a sequence for computation id ", cid,
                               ", which is not in the module"));
    }
  }
  for (PendingComputation& pc : comps) {
    const xla::HloComputationProto& cp = *pc.proto;
    const std::string cwhere = StrCat(mwhere, ", computation '", cp.name(), "'");
    pc.order = pc.instrs;
    auto seq = proto.schedule().sequences().find(cp.id());
    if (seq != proto.schedule().sequences().end()) {
      absl::Status st = Reorder(ToVec(seq->second.instruction_ids()), &pc.order,
                                StrCat(cwhere, ": the schedule"));
      if (!st.ok()) return st;
    }
    if (use_ext && cp.hlowb_extras().instruction_order_size() > 0) {
      absl::Status st = Reorder(ToVec(cp.hlowb_extras().instruction_order()), &pc.order,
                                StrCat(cwhere, ": hlowb instruction_order"));
      if (!st.ok()) return st;
    }
    // Cycles through operands or control edges. When the proto lists every operand and control
    // predecessor first (as XLA writes it) there can be none, whatever the final order.
    std::vector<int> cycle;
    if (!pc.dependency_order) {
      absl::flat_hash_map<const Instruction*, int> pos;
      pos.reserve(pc.order.size());
      for (size_t i = 0; i < pc.order.size(); ++i) pos[pc.order[i]] = static_cast<int>(i);
      std::vector<std::vector<int>> edges(pc.order.size());
      for (size_t i = 0; i < pc.order.size(); ++i) {
        for (const Instruction* o : pc.order[i]->operands()) edges[i].push_back(pos[o]);
        for (const Instruction* o : pc.order[i]->control_predecessors()) {
          edges[i].push_back(pos[o]);
        }
      }
      cycle = FindCycle(static_cast<int>(pc.order.size()),
                        [&](int i) -> const std::vector<int>& { return edges[i]; });
    }
    if (!cycle.empty()) {
      std::string path;
      for (int i : cycle) StrAppend(&path, pc.order[i]->name(), " -> ");
      StrAppend(&path, pc.order[cycle.front()]->name());
      return Invalid(StrCat(cwhere, ": instructions depend on each other in a cycle: ", path));
    }
    // Parameters: numbers unique and within the instruction count.
    absl::flat_hash_map<int64_t, const Instruction*> params;
    for (const Instruction* i : pc.order) {
      if (i->opcode() != Opcode::kParameter) continue;
      if (i->parameter_number() >= static_cast<int64_t>(pc.order.size())) {
        return Invalid(StrCat(cwhere, ": parameter '", i->name(), "' has number ",
                              i->parameter_number(), " but the computation has only ",
                              pc.order.size(), " instructions"));
      }
      auto [it, inserted] = params.emplace(i->parameter_number(), i);
      if (!inserted) {
        return Invalid(StrCat(cwhere, ": parameters '", it->second->name(), "' and '", i->name(),
                              "' have the same number ", i->parameter_number()));
      }
    }
    for (Instruction* i : pc.order) pc.comp->AddInstruction(i);
    auto root = pc.by_id.find(cp.root_id());
    if (root == pc.by_id.end()) {
      return Invalid(
          StrCat(cwhere, ": root id ", cp.root_id(), " is not an instruction of this computation"));
    }
    pc.comp->set_root(pc.instrs[root->second]);
  }

  // Calls must not form cycles.
  {
    std::vector<std::vector<int>> edges(comps.size());
    for (size_t ci = 0; ci < comps.size(); ++ci) {
      for (const Instruction* i : comps[ci].order) {
        for (const Computation* callee : i->called_computations()) {
          edges[ci].push_back(comp_index[callee->id()]);
        }
      }
    }
    std::vector<int> cycle = FindCycle(static_cast<int>(comps.size()),
                                       [&](int i) -> const std::vector<int>& { return edges[i]; });
    if (!cycle.empty()) {
      std::string path;
      for (int i : cycle) StrAppend(&path, comps[i].comp->name(), " -> ");
      StrAppend(&path, comps[cycle.front()].comp->name());
      return mctx.Error(StrCat("computations call each other in a cycle: ", path));
    }
  }

  // Computation order: proto order, or the textual order kept by the workbench.
  std::vector<int> comp_order(comps.size());
  for (size_t i = 0; i < comps.size(); ++i) comp_order[i] = static_cast<int>(i);
  const xla::HlowbModuleExtras& mext = proto.hlowb_extras();
  if (use_ext && mext.computation_order_size() > 0) {
    if (mext.computation_order_size() != static_cast<int>(comps.size())) {
      return mctx.Error("hlowb computation_order does not list every computation once");
    }
    absl::flat_hash_set<int> used;
    for (int k = 0; k < mext.computation_order_size(); ++k) {
      auto it = comp_index.find(mext.computation_order(k));
      if (it == comp_index.end() || !used.insert(it->second).second) {
        return mctx.Error("hlowb computation_order does not list every computation once");
      }
      comp_order[k] = it->second;
    }
  }
  std::vector<Computation*> comp_ptrs(comps.size());
  for (int ci : comp_order) comp_ptrs[ci] = module->AddComputation(std::move(comps[ci].comp));

  // Entry.
  Computation* entry = nullptr;
  if (!proto.entry_computation_name().empty()) {
    auto it = comp_by_name.find(proto.entry_computation_name());
    if (it == comp_by_name.end()) {
      return mctx.Error(
          StrCat("entry computation '", proto.entry_computation_name(), "' is not in the module"));
    }
    entry = comp_ptrs[it->second];
    if (comp_index.contains(proto.entry_computation_id()) &&
        comp_ptrs[comp_index[proto.entry_computation_id()]] != entry) {
      return mctx.Error(StrCat("entry_computation_name '", proto.entry_computation_name(),
                               "' and entry_computation_id ", proto.entry_computation_id(),
                               " name different computations"));
    }
  } else if (comp_index.contains(proto.entry_computation_id())) {
    entry = comp_ptrs[comp_index[proto.entry_computation_id()]];
  } else {
    return mctx.Error(
        StrCat("entry computation id ", proto.entry_computation_id(), " is not in the module"));
  }
  module->set_entry(entry);

  // Header.
  ModuleConfig& config = module->config();
  config.is_scheduled = scheduled;
  if (proto.has_host_program_shape() && !(use_ext && mext.no_entry_computation_layout())) {
    ProgramShape ps;
    const auto& hps = proto.host_program_shape();
    for (int i = 0; i < hps.parameters_size(); ++i) {
      absl::StatusOr<Shape> s = ShapeFromProto(hps.parameters(i), options.limits);
      if (!s.ok())
        return mctx.Error(StrCat("host_program_shape parameter ", i, ": ", s.status().message()));
      ps.parameters.push_back(std::move(*s));
    }
    absl::StatusOr<Shape> r = hps.has_result() ? ShapeFromProto(hps.result(), options.limits)
                                               : absl::StatusOr<Shape>(Shape::Tuple({}));
    if (!r.ok()) return mctx.Error(StrCat("host_program_shape result: ", r.status().message()));
    ps.result = std::move(*r);
    config.entry_computation_layout = std::move(ps);
  }
  for (const auto& e : proto.input_output_alias().entries()) {
    config.input_output_alias.push_back(
        InputOutputAlias{ToVec(e.output_shape_index()), e.parameter_number(),
                         ToVec(e.parameter_shape_index()), e.kind() == xla::MUST_ALIAS});
  }
  config.has_input_output_alias = !config.input_output_alias.empty();
  for (const auto& e : proto.buffer_donor().entries()) {
    config.buffer_donors.push_back(
        BufferDonor{e.parameter_number(), ToVec(e.parameter_shape_index())});
  }
  config.has_buffer_donor = !config.buffer_donors.empty();
  if (proto.has_frontend_attributes()) {
    config.frontend_attributes = FrontendAttributesFromProto(proto.frontend_attributes());
  }
  if (proto.has_stack_frame_index()) {
    const auto& sp = proto.stack_frame_index();
    StackFrameIndex& sf = module->stack_frames();
    sf.file_names.assign(sp.file_names().begin(), sp.file_names().end());
    sf.function_names.assign(sp.function_names().begin(), sp.function_names().end());
    for (const auto& l : sp.file_locations()) {
      sf.file_locations.push_back(FileLocation{l.file_name_id(), l.function_name_id(), l.line(),
                                               l.end_line(), l.column(), l.end_column()});
    }
    for (const auto& f : sp.stack_frames()) {
      sf.stack_frames.push_back(StackFrame{f.file_location_id(), f.parent_frame_id()});
    }
  }
  if (use_ext && proto.has_hlowb_extras()) {
    if (mext.replica_count() != 0) config.replica_count = mext.replica_count();
    if (mext.num_partitions() != 0) config.num_partitions = mext.num_partitions();
    config.alias_passthrough_params = mext.alias_passthrough_params();
    if (mext.has_allow_spmd_sharding_propagation_to_parameters()) {
      const auto& v = mext.allow_spmd_sharding_propagation_to_parameters().values();
      config.allow_spmd_sharding_propagation_to_parameters.assign(v.begin(), v.end());
    }
    if (mext.has_allow_spmd_sharding_propagation_to_output()) {
      const auto& v = mext.allow_spmd_sharding_propagation_to_output().values();
      config.allow_spmd_sharding_propagation_to_output.assign(v.begin(), v.end());
    }
    config.origin_recovery_table = mext.origin_recovery_table();
    for (const auto& u : mext.unknown_attributes())
      config.unknown.emplace_back(u.name(), u.value());
    if (mext.has_has_input_output_alias())
      config.has_input_output_alias = mext.has_input_output_alias();
    if (mext.has_has_buffer_donor()) config.has_buffer_donor = mext.has_buffer_donor();
    ApplyDictFlips(mext.frontend_attribute_dict_flips(), &config.frontend_attributes);
  }

  // Fields the IR has no place for.
  auto dropped = [&](bool present, std::string_view what) {
    if (present) mctx.Warn(StrCat(what, " is not converted"));
  };
  dropped(proto.cross_program_prefetches_size() > 0, "cross_program_prefetches");
  dropped(proto.is_dynamic(), "is_dynamic");
  dropped(proto.has_spmd_output_sharding(), "spmd_output_sharding");
  dropped(proto.spmd_parameters_shardings_size() > 0, "spmd_parameters_shardings");
  dropped(proto.use_auto_spmd_partitioning(), "use_auto_spmd_partitioning");
  dropped(proto.profile_info_size() > 0, "profile_info");
  dropped(proto.has_device_assignment(), "device_assignment");
  dropped(proto.has_original_value_recovery_table(), "original_value_recovery_table");
  MarkAsyncSugar(module.get(), sugar_decided);
  return module;
}

}  // namespace hlowb
