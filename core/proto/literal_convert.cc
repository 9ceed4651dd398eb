#include "core/proto/literal_convert.h"

#include <bit>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/proto/xla_data.pb.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }

std::string TypeName(PrimitiveType t) {
  std::string_view n = PrimitiveTypeName(t);
  return n.empty() ? StrCat("type#", static_cast<int>(t)) : std::string(n);
}

// ---------------------------------------------------------------------------------------------
// Shapes and layouts

absl::StatusOr<Layout> LayoutFromProto(const xla::LayoutProto& p, int rank,
                                       const ProtoLimits& limits, int depth);
absl::StatusOr<Shape> ShapeFromProtoImpl(const xla::ShapeProto& p, const ProtoLimits& limits,
                                         int depth);

absl::StatusOr<PrimitiveType> TypeFromNumber(int32_t n, bool allow_invalid) {
  if (n == 0 && allow_invalid) return PrimitiveType::kInvalid;
  if (!IsValidPrimitiveTypeNumber(n)) return Invalid(StrCat("invalid element type number ", n));
  return static_cast<PrimitiveType>(n);
}

absl::StatusOr<Layout> LayoutFromProto(const xla::LayoutProto& p, int rank,
                                       const ProtoLimits& limits, int depth) {
  Layout l;
  if (p.minor_to_major_size() != 0 && p.minor_to_major_size() != rank) {
    return Invalid(StrCat("layout lists ", p.minor_to_major_size(),
                          " dimensions in minor_to_major but the shape has rank ", rank));
  }
  l.minor_to_major.assign(p.minor_to_major().begin(), p.minor_to_major().end());
  if ((p.dim_unique_size() != 0 && p.dim_unique_size() != p.dim_level_types_size()) ||
      (p.dim_ordered_size() != 0 && p.dim_ordered_size() != p.dim_level_types_size())) {
    return Invalid("layout dim_unique/dim_ordered do not match dim_level_types in length");
  }
  if (p.dim_level_types_size() > limits.max_rank) {
    return Invalid(StrCat("layout has ", p.dim_level_types_size(), " dimension level types"));
  }
  for (int i = 0; i < p.dim_level_types_size(); ++i) {
    int t = p.dim_level_types(i);
    if (t < 0 || t > 3) return Invalid(StrCat("invalid dimension level type ", t));
    DimLevel level;
    level.type = static_cast<DimLevelType>(t);
    level.unique = p.dim_unique_size() == 0 || p.dim_unique(i);
    level.ordered = p.dim_ordered_size() == 0 || p.dim_ordered(i);
    l.dim_levels.push_back(level);
  }
  for (const xla::TileProto& t : p.tiles()) {
    if (t.dimensions_size() > limits.max_rank) {
      return Invalid(StrCat("a layout tile has ", t.dimensions_size(), " dimensions"));
    }
    l.tiles.push_back(Tile{std::vector<int64_t>(t.dimensions().begin(), t.dimensions().end())});
  }
  l.tail_padding_alignment_in_elements =
      p.tail_padding_alignment_in_elements() == 0 ? 1 : p.tail_padding_alignment_in_elements();
  absl::StatusOr<PrimitiveType> index_type = TypeFromNumber(p.index_primitive_type(), true);
  if (!index_type.ok())
    return Invalid(StrCat("layout index_primitive_type: ", index_type.status().message()));
  absl::StatusOr<PrimitiveType> pointer_type = TypeFromNumber(p.pointer_primitive_type(), true);
  if (!pointer_type.ok())
    return Invalid(StrCat("layout pointer_primitive_type: ", pointer_type.status().message()));
  l.index_primitive_type = *index_type;
  l.pointer_primitive_type = *pointer_type;
  l.element_size_in_bits = p.element_size_in_bits();
  l.memory_space = p.memory_space();
  for (const xla::SplitConfigProto& s : p.split_configs()) {
    l.split_configs.push_back(SplitConfig{
        s.dimension(), std::vector<int64_t>(s.split_indices().begin(), s.split_indices().end())});
  }
  if (p.has_physical_shape()) {
    absl::StatusOr<Shape> physical = ShapeFromProtoImpl(p.physical_shape(), limits, depth + 1);
    if (!physical.ok()) {
      return Invalid(StrCat("layout physical_shape: ", physical.status().message()));
    }
    l.physical_shape = std::make_shared<const Shape>(std::move(*physical));
  }
  l.dynamic_shape_metadata_prefix_bytes = p.dynamic_shape_metadata_prefix_bytes();
  return l;
}

absl::StatusOr<Shape> ShapeFromProtoImpl(const xla::ShapeProto& p, const ProtoLimits& limits,
                                         int depth) {
  if (depth > limits.max_shape_depth) {
    return Invalid(StrCat("shape nesting is deeper than the limit of ", limits.max_shape_depth));
  }
  absl::StatusOr<PrimitiveType> type = TypeFromNumber(p.element_type(), false);
  if (!type.ok()) return type.status();
  const bool composite = *type == PrimitiveType::kTuple || *type == PrimitiveType::kBuffer;
  if (!composite && p.tuple_shapes_size() > 0) {
    return Invalid(
        StrCat(TypeName(*type), " shape has ", p.tuple_shapes_size(), " tuple element shapes"));
  }
  if (!IsArrayType(*type)) {
    if (p.dimensions_size() > 0) {
      return Invalid(StrCat(TypeName(*type), " shape has ", p.dimensions_size(), " dimensions"));
    }
    if (*type == PrimitiveType::kToken) return Shape::Token();
    if (*type == PrimitiveType::kOpaque) return Shape::Opaque();
    std::vector<Shape> elements;
    elements.reserve(p.tuple_shapes_size());
    for (int i = 0; i < p.tuple_shapes_size(); ++i) {
      absl::StatusOr<Shape> e = ShapeFromProtoImpl(p.tuple_shapes(i), limits, depth + 1);
      if (!e.ok()) return Invalid(StrCat("tuple element ", i, ": ", e.status().message()));
      elements.push_back(std::move(*e));
    }
    if (*type == PrimitiveType::kBuffer) {
      if (elements.size() != 1 || !elements[0].IsArray()) {
        return Invalid("a buffer shape must wrap exactly one array shape");
      }
      return Shape::Buffer(std::move(elements[0]));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (p.dimensions_size() > limits.max_rank) {
    return Invalid(
        StrCat("shape has rank ", p.dimensions_size(), ", above the limit of ", limits.max_rank));
  }
  if (p.is_dynamic_dimension_size() != 0 && p.is_dynamic_dimension_size() != p.dimensions_size()) {
    return Invalid(StrCat("shape has ", p.dimensions_size(), " dimensions but ",
                          p.is_dynamic_dimension_size(), " is_dynamic_dimension flags"));
  }
  Shape shape = Shape::Array(*type, {});
  int64_t elements = 1;
  bool overflow = false;
  for (int i = 0; i < p.dimensions_size(); ++i) {
    int64_t d = p.dimensions(i);
    bool dynamic = p.is_dynamic_dimension_size() > 0 && p.is_dynamic_dimension(i);
    if (d == Shape::kUnboundedSize) {
      if (!dynamic) {
        return Invalid(StrCat("dimension ", i, " is unbounded (", d, ") but not dynamic"));
      }
    } else if (d < 0) {
      return Invalid(StrCat("dimension ", i, " has negative size ", d));
    } else if (d != 0 && elements > limits.max_shape_elements / d) {
      overflow = true;
    } else {
      elements *= d;
    }
    shape.add_dimension(d, dynamic);
  }
  if (overflow || elements > limits.max_shape_elements) {
    std::string dims;
    for (int i = 0; i < p.dimensions_size(); ++i) StrAppend(&dims, i ? "," : "", p.dimensions(i));
    return Invalid(StrCat("shape ", TypeName(*type), "[", dims, "] has more than ",
                          limits.max_shape_elements,
                          " elements (the reader's limit; see ProtoLimits::max_shape_elements)"));
  }
  if (p.has_layout()) {
    absl::StatusOr<Layout> layout = LayoutFromProto(p.layout(), shape.rank(), limits, depth);
    if (!layout.ok()) return layout.status();
    *shape.mutable_layout() = std::move(*layout);
  }
  return shape;
}

// ---------------------------------------------------------------------------------------------
// Literal data order

// Calls f(physical_position, row_major_index) for every element of an array with `dims`, in
// the physical order of `minor_to_major` (which must be a permutation of 0..rank-1).
template <typename F>
void ForEachPhysical(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major,
                     int64_t count, F&& f) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> stride(rank, 1);
  for (int k = rank - 2; k >= 0; --k) stride[k] = stride[k + 1] * dims[k + 1];
  std::vector<int64_t> coord(rank, 0);
  int64_t logical = 0;
  for (int64_t p = 0; p < count; ++p) {
    f(p, logical);
    for (int j = 0; j < rank; ++j) {
      int64_t dim = minor_to_major[j];
      if (++coord[dim] < dims[dim]) {
        logical += stride[dim];
        break;
      }
      logical -= (dims[dim] - 1) * stride[dim];
      coord[dim] = 0;
    }
  }
}

// The physical order of `shape`: its layout's minor_to_major, or row-major without a layout.
absl::StatusOr<std::vector<int64_t>> PhysicalOrder(const Shape& shape) {
  const int rank = shape.rank();
  std::vector<int64_t> m2m;
  if (shape.has_layout() && !shape.layout().minor_to_major.empty()) {
    m2m = shape.layout().minor_to_major;
    std::vector<bool> seen(rank, false);
    for (int64_t d : m2m) {
      if (d < 0 || d >= rank || seen[d]) {
        std::string s;
        for (int64_t x : m2m) StrAppend(&s, s.empty() ? "" : ",", x);
        return Invalid(
            StrCat("layout {", s, "} is not a permutation of the ", rank, " dimensions"));
      }
      seen[d] = true;
    }
  } else {
    for (int i = rank - 1; i >= 0; --i) m2m.push_back(i);
  }
  return m2m;
}

bool IsRowMajor(const std::vector<int64_t>& m2m) {
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return false;
  }
  return true;
}

// Which LiteralProto field holds a type's data.
enum class Slot { kPreds, kS32, kS64, kU32, kU64, kF32, kF64, kC64, kC128, kBytes };

Slot SlotFor(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred:
      return Slot::kPreds;
    case PrimitiveType::kS32:
      return Slot::kS32;
    case PrimitiveType::kS64:
      return Slot::kS64;
    case PrimitiveType::kU32:
      return Slot::kU32;
    case PrimitiveType::kU64:
      return Slot::kU64;
    case PrimitiveType::kF32:
      return Slot::kF32;
    case PrimitiveType::kF64:
      return Slot::kF64;
    case PrimitiveType::kC64:
      return Slot::kC64;
    case PrimitiveType::kC128:
      return Slot::kC128;
    default:
      return Slot::kBytes;
  }
}

// The bytes field of the 8-bit, 16-bit and sub-byte types; nullptr for others.
std::string* MutableBytesField(PrimitiveType t, xla::LiteralProto* p) {
  switch (t) {
    case PrimitiveType::kS1:
      return p->mutable_s1s();
    case PrimitiveType::kS2:
      return p->mutable_s2s();
    case PrimitiveType::kS4:
      return p->mutable_s4s();
    case PrimitiveType::kS8:
      return p->mutable_s8s();
    case PrimitiveType::kU1:
      return p->mutable_u1s();
    case PrimitiveType::kU2:
      return p->mutable_u2s();
    case PrimitiveType::kU4:
      return p->mutable_u4s();
    case PrimitiveType::kU8:
      return p->mutable_u8s();
    case PrimitiveType::kS16:
      return p->mutable_s16s();
    case PrimitiveType::kU16:
      return p->mutable_u16s();
    case PrimitiveType::kF16:
      return p->mutable_f16s();
    case PrimitiveType::kBF16:
      return p->mutable_bf16s();
    case PrimitiveType::kF8E5M2:
      return p->mutable_f8e5m2s();
    case PrimitiveType::kF8E4M3:
      return p->mutable_f8e4m3s();
    case PrimitiveType::kF8E4M3FN:
      return p->mutable_f8e4m3fns();
    case PrimitiveType::kF8E4M3B11FNUZ:
      return p->mutable_f8e4m3b11fnuzs();
    case PrimitiveType::kF8E3M4:
      return p->mutable_f8e3m4s();
    case PrimitiveType::kF8E5M2FNUZ:
      return p->mutable_f8e5m2fnuzs();
    case PrimitiveType::kF8E4M3FNUZ:
      return p->mutable_f8e4m3fnuzs();
    case PrimitiveType::kF4E2M1FN:
      return p->mutable_f4e2m1fns();
    case PrimitiveType::kF8E8M0FNU:
      return p->mutable_f8e8m0fnus();
    default:
      return nullptr;
  }
}

// Name of the proto field that holds a type's data (for messages).
std::string FieldNameFor(PrimitiveType t) {
  switch (SlotFor(t)) {
    case Slot::kPreds:
      return "preds";
    case Slot::kS32:
      return "s32s";
    case Slot::kS64:
      return "s64s";
    case Slot::kU32:
      return "u32s";
    case Slot::kU64:
      return "u64s";
    case Slot::kF32:
      return "f32s";
    case Slot::kF64:
      return "f64s";
    case Slot::kC64:
      return "c64s";
    case Slot::kC128:
      return "c128s";
    case Slot::kBytes:
      break;
  }
  return TypeName(t) + "s";
}

const std::string& BytesField(PrimitiveType t, const xla::LiteralProto& p) {
  // The const accessors mirror MutableBytesField; kept separate to avoid mutating the input.
  switch (t) {
    case PrimitiveType::kS1:
      return p.s1s();
    case PrimitiveType::kS2:
      return p.s2s();
    case PrimitiveType::kS4:
      return p.s4s();
    case PrimitiveType::kS8:
      return p.s8s();
    case PrimitiveType::kU1:
      return p.u1s();
    case PrimitiveType::kU2:
      return p.u2s();
    case PrimitiveType::kU4:
      return p.u4s();
    case PrimitiveType::kU8:
      return p.u8s();
    case PrimitiveType::kS16:
      return p.s16s();
    case PrimitiveType::kU16:
      return p.u16s();
    case PrimitiveType::kF16:
      return p.f16s();
    case PrimitiveType::kBF16:
      return p.bf16s();
    case PrimitiveType::kF8E5M2:
      return p.f8e5m2s();
    case PrimitiveType::kF8E4M3:
      return p.f8e4m3s();
    case PrimitiveType::kF8E4M3FN:
      return p.f8e4m3fns();
    case PrimitiveType::kF8E4M3B11FNUZ:
      return p.f8e4m3b11fnuzs();
    case PrimitiveType::kF8E3M4:
      return p.f8e3m4s();
    case PrimitiveType::kF8E5M2FNUZ:
      return p.f8e5m2fnuzs();
    case PrimitiveType::kF8E4M3FNUZ:
      return p.f8e4m3fnuzs();
    case PrimitiveType::kF4E2M1FN:
      return p.f4e2m1fns();
    case PrimitiveType::kF8E8M0FNU:
      return p.f8e8m0fnus();
    default: {
      static const std::string* empty = new std::string();
      return *empty;
    }
  }
}

// Number of values in the field that should hold `t`'s data.
int64_t DataSize(PrimitiveType t, const xla::LiteralProto& p) {
  switch (SlotFor(t)) {
    case Slot::kPreds:
      return p.preds_size();
    case Slot::kS32:
      return p.s32s_size();
    case Slot::kS64:
      return p.s64s_size();
    case Slot::kU32:
      return p.u32s_size();
    case Slot::kU64:
      return p.u64s_size();
    case Slot::kF32:
      return p.f32s_size();
    case Slot::kF64:
      return p.f64s_size();
    case Slot::kC64:
      return p.c64s_size();
    case Slot::kC128:
      return p.c128s_size();
    case Slot::kBytes:
      return static_cast<int64_t>(BytesField(t, p).size());
  }
  return 0;
}

// Fields other than `expected` (and the shape) that carry data. Checked field by field rather
// than through reflection, which costs more than the conversion of a small constant.
std::vector<std::string> UnexpectedDataFields(const xla::LiteralProto& p,
                                              std::string_view expected) {
  std::vector<std::string> out;
  auto check = [&](std::string_view name, bool has_data) {
    if (has_data && name != expected) out.emplace_back(name);
  };
  check("preds", p.preds_size() > 0);
  check("s1s", !p.s1s().empty());
  check("s2s", !p.s2s().empty());
  check("s4s", !p.s4s().empty());
  check("s8s", !p.s8s().empty());
  check("u1s", !p.u1s().empty());
  check("u2s", !p.u2s().empty());
  check("u4s", !p.u4s().empty());
  check("u8s", !p.u8s().empty());
  check("s32s", p.s32s_size() > 0);
  check("s64s", p.s64s_size() > 0);
  check("u32s", p.u32s_size() > 0);
  check("u64s", p.u64s_size() > 0);
  check("f32s", p.f32s_size() > 0);
  check("f64s", p.f64s_size() > 0);
  check("c64s", p.c64s_size() > 0);
  check("c128s", p.c128s_size() > 0);
  check("tuple_literals", p.tuple_literals_size() > 0);
  check("f16s", !p.f16s().empty());
  check("bf16s", !p.bf16s().empty());
  check("u16s", !p.u16s().empty());
  check("s16s", !p.s16s().empty());
  check("f4e2m1fns", !p.f4e2m1fns().empty());
  check("f8e3m4s", !p.f8e3m4s().empty());
  check("f8e4m3b11fnuzs", !p.f8e4m3b11fnuzs().empty());
  check("f8e4m3fns", !p.f8e4m3fns().empty());
  check("f8e4m3fnuzs", !p.f8e4m3fnuzs().empty());
  check("f8e4m3s", !p.f8e4m3s().empty());
  check("f8e5m2fnuzs", !p.f8e5m2fnuzs().empty());
  check("f8e5m2s", !p.f8e5m2s().empty());
  check("f8e8m0fnus", !p.f8e8m0fnus().empty());
  check("sparse_indices", p.sparse_indices_size() > 0);
  return out;
}

int ValuesPerElement(PrimitiveType t) { return IsComplex(t) ? 2 : 1; }

// Width in bytes of one value in a bytes field (2 for 16-bit types, else 1).
int BytesWidth(PrimitiveType t) { return ByteWidth(t) == 2 ? 2 : 1; }

absl::Status WriteArrayData(const Literal& lit, const std::vector<int64_t>& m2m,
                            xla::LiteralProto* p) {
  const Shape& shape = lit.shape();
  const PrimitiveType t = shape.element_type();
  const int64_t n = lit.element_count();
  const int per = ValuesPerElement(t);
  if (static_cast<int64_t>(lit.data().size()) !=
      n * per * static_cast<int64_t>(lit.component_bytes())) {
    return absl::InternalError(StrCat("literal of shape ", TypeName(t), " holds ",
                                      lit.data().size(), " bytes, inconsistent with its shape"));
  }
  if (n * per > std::numeric_limits<int32_t>::max()) {
    return Invalid(StrCat("the literal has ", n, " elements, too many for a LiteralProto"));
  }
  const bool row_major = IsRowMajor(m2m);
  auto for_each = [&](auto&& f) {
    if (row_major) {
      for (int64_t i = 0; i < n; ++i) f(i, i);
    } else {
      ForEachPhysical(shape.dimensions(), m2m, n, f);
    }
  };
  switch (SlotFor(t)) {
    case Slot::kPreds: {
      auto* f = p->mutable_preds();
      f->Reserve(static_cast<int>(n));
      for_each([&](int64_t, int64_t l) { f->Add(lit.GetBits(l) != 0); });
      return absl::OkStatus();
    }
    case Slot::kS32: {
      auto* f = p->mutable_s32s();
      f->Reserve(static_cast<int>(n));
      for_each([&](int64_t, int64_t l) { f->Add(static_cast<int32_t>(lit.GetBits(l))); });
      return absl::OkStatus();
    }
    case Slot::kU32: {
      auto* f = p->mutable_u32s();
      f->Reserve(static_cast<int>(n));
      for_each([&](int64_t, int64_t l) { f->Add(static_cast<uint32_t>(lit.GetBits(l))); });
      return absl::OkStatus();
    }
    case Slot::kS64: {
      auto* f = p->mutable_s64s();
      f->Reserve(static_cast<int>(n));
      for_each([&](int64_t, int64_t l) { f->Add(static_cast<int64_t>(lit.GetBits(l))); });
      return absl::OkStatus();
    }
    case Slot::kU64: {
      auto* f = p->mutable_u64s();
      f->Reserve(static_cast<int>(n));
      for_each([&](int64_t, int64_t l) { f->Add(lit.GetBits(l)); });
      return absl::OkStatus();
    }
    case Slot::kF32:
    case Slot::kC64: {
      auto* f = t == PrimitiveType::kF32 ? p->mutable_f32s() : p->mutable_c64s();
      f->Reserve(static_cast<int>(n * per));
      for_each([&](int64_t, int64_t l) {
        for (int c = 0; c < per; ++c) {
          f->Add(std::bit_cast<float>(static_cast<uint32_t>(lit.GetBits(l * per + c))));
        }
      });
      return absl::OkStatus();
    }
    case Slot::kF64:
    case Slot::kC128: {
      auto* f = t == PrimitiveType::kF64 ? p->mutable_f64s() : p->mutable_c128s();
      f->Reserve(static_cast<int>(n * per));
      for_each([&](int64_t, int64_t l) {
        for (int c = 0; c < per; ++c) f->Add(std::bit_cast<double>(lit.GetBits(l * per + c)));
      });
      return absl::OkStatus();
    }
    case Slot::kBytes: {
      std::string* out = MutableBytesField(t, p);
      if (!out) return Invalid(StrCat("cannot write literals of type ", TypeName(t)));
      const int w = BytesWidth(t);
      out->resize(static_cast<size_t>(n * w));
      char* dst = out->data();
      for_each([&](int64_t pos, int64_t l) {
        uint64_t bits = lit.GetBits(l);
        dst[pos * w] = static_cast<char>(bits & 0xff);
        if (w == 2) dst[pos * w + 1] = static_cast<char>((bits >> 8) & 0xff);
      });
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status ReadArrayData(const xla::LiteralProto& p, const std::vector<int64_t>& m2m,
                           Literal* lit) {
  const Shape& shape = lit->shape();
  const PrimitiveType t = shape.element_type();
  const int64_t n = lit->element_count();
  const int per = ValuesPerElement(t);
  const bool row_major = IsRowMajor(m2m);
  auto for_each = [&](auto&& f) {
    if (row_major) {
      for (int64_t i = 0; i < n; ++i) f(i, i);
    } else {
      ForEachPhysical(shape.dimensions(), m2m, n, f);
    }
  };
  switch (SlotFor(t)) {
    case Slot::kPreds:
      for_each([&](int64_t pos, int64_t l) { lit->SetBits(l, p.preds(static_cast<int>(pos))); });
      break;
    case Slot::kS32:
      for_each([&](int64_t pos, int64_t l) {
        lit->SetBits(l, static_cast<uint32_t>(p.s32s(static_cast<int>(pos))));
      });
      break;
    case Slot::kU32:
      for_each([&](int64_t pos, int64_t l) { lit->SetBits(l, p.u32s(static_cast<int>(pos))); });
      break;
    case Slot::kS64:
      for_each([&](int64_t pos, int64_t l) {
        lit->SetBits(l, static_cast<uint64_t>(p.s64s(static_cast<int>(pos))));
      });
      break;
    case Slot::kU64:
      for_each([&](int64_t pos, int64_t l) { lit->SetBits(l, p.u64s(static_cast<int>(pos))); });
      break;
    case Slot::kF32:
    case Slot::kC64: {
      const auto& f = t == PrimitiveType::kF32 ? p.f32s() : p.c64s();
      for_each([&](int64_t pos, int64_t l) {
        for (int c = 0; c < per; ++c) {
          lit->SetBits(l * per + c,
                       std::bit_cast<uint32_t>(f.Get(static_cast<int>(pos * per + c))));
        }
      });
      break;
    }
    case Slot::kF64:
    case Slot::kC128: {
      const auto& f = t == PrimitiveType::kF64 ? p.f64s() : p.c128s();
      for_each([&](int64_t pos, int64_t l) {
        for (int c = 0; c < per; ++c) {
          lit->SetBits(l * per + c,
                       std::bit_cast<uint64_t>(f.Get(static_cast<int>(pos * per + c))));
        }
      });
      break;
    }
    case Slot::kBytes: {
      const std::string& in = BytesField(t, p);
      const int w = BytesWidth(t);
      const unsigned char* src = reinterpret_cast<const unsigned char*>(in.data());
      for_each([&](int64_t pos, int64_t l) {
        uint64_t bits = src[pos * w];
        if (w == 2) bits |= static_cast<uint64_t>(src[pos * w + 1]) << 8;
        lit->SetBits(l, bits);
      });
      break;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> LiteralFromProtoImpl(const xla::LiteralProto& p, const Shape* expected,
                                             const ProtoLimits& limits, int depth) {
  if (depth > limits.max_shape_depth) {
    return Invalid(StrCat("literal nesting is deeper than the limit of ", limits.max_shape_depth));
  }
  Shape shape;
  if (p.has_shape() && p.shape().element_type() != 0) {
    absl::StatusOr<Shape> s = ShapeFromProto(p.shape(), limits);
    if (!s.ok()) return Invalid(StrCat("literal shape: ", s.status().message()));
    shape = std::move(*s);
    if (expected && !shape.Compatible(*expected)) {
      return Invalid("a tuple element literal's shape differs from the tuple's element shape");
    }
  } else if (expected) {
    shape = *expected;
  } else {
    return Invalid("literal has no shape");
  }
  if (shape.IsTuple()) {
    std::vector<std::string> extra = UnexpectedDataFields(p, "tuple_literals");
    if (!extra.empty()) {
      return Invalid(StrCat("tuple literal carries element data in field '", extra[0], "'"));
    }
    if (p.tuple_literals_size() != shape.tuple_count()) {
      return Invalid(StrCat("tuple literal has ", p.tuple_literals_size(),
                            " element literals but its shape has ", shape.tuple_count(),
                            " elements"));
    }
    Literal lit(shape, /*allocate=*/false);
    for (int i = 0; i < shape.tuple_count(); ++i) {
      absl::StatusOr<Literal> e =
          LiteralFromProtoImpl(p.tuple_literals(i), &shape.tuple_shape(i), limits, depth + 1);
      if (!e.ok()) return Invalid(StrCat("tuple element ", i, ": ", e.status().message()));
      (*lit.mutable_tuple_elements())[i] = std::move(*e);
    }
    return lit;
  }
  if (!shape.IsArray()) {
    std::vector<std::string> extra = UnexpectedDataFields(p, "");
    if (!extra.empty()) {
      return Invalid(StrCat(TypeName(shape.element_type()), " literal carries data in field '",
                            extra[0], "'"));
    }
    return Literal(shape, /*allocate=*/false);
  }
  if (shape.IsDynamic()) {
    return Invalid("literals with dynamic dimensions are not supported");
  }
  const PrimitiveType t = shape.element_type();
  const int64_t n = shape.ElementCount();
  const std::string field = FieldNameFor(t);
  std::vector<std::string> extra = UnexpectedDataFields(p, field);
  if (!extra.empty()) {
    return Invalid(StrCat(TypeName(t), " literal carries data in field '", extra[0],
                          "' (its values belong in '", field, "')"));
  }
  const int64_t want = n * ValuesPerElement(t) * (SlotFor(t) == Slot::kBytes ? BytesWidth(t) : 1);
  const int64_t have = DataSize(t, p);
  if (have != want) {
    return Invalid(StrCat(TypeName(t), " literal with ", n, " elements needs ", want,
                          SlotFor(t) == Slot::kBytes ? " bytes" : " values", " in '", field,
                          "' but has ", have));
  }
  absl::StatusOr<std::vector<int64_t>> m2m = PhysicalOrder(shape);
  if (!m2m.ok()) return m2m.status();
  Literal lit(shape);
  absl::Status st = ReadArrayData(p, *m2m, &lit);
  if (!st.ok()) return st;
  return lit;
}

}  // namespace

void LayoutToProto(const Layout& l, xla::LayoutProto* p) {
  for (int64_t d : l.minor_to_major) p->add_minor_to_major(d);
  bool any_not_unique = false;
  bool any_not_ordered = false;
  for (const DimLevel& level : l.dim_levels) {
    p->add_dim_level_types(static_cast<xla::DimLevelType>(level.type));
    any_not_unique |= !level.unique;
    any_not_ordered |= !level.ordered;
  }
  for (const DimLevel& level : l.dim_levels) {
    if (any_not_unique) p->add_dim_unique(level.unique);
    if (any_not_ordered) p->add_dim_ordered(level.ordered);
  }
  for (const Tile& t : l.tiles) {
    xla::TileProto* tp = p->add_tiles();
    for (int64_t d : t.dimensions) tp->add_dimensions(d);
  }
  if (l.tail_padding_alignment_in_elements != 1) {
    p->set_tail_padding_alignment_in_elements(l.tail_padding_alignment_in_elements);
  }
  p->set_index_primitive_type(static_cast<xla::PrimitiveType>(l.index_primitive_type));
  p->set_pointer_primitive_type(static_cast<xla::PrimitiveType>(l.pointer_primitive_type));
  p->set_element_size_in_bits(l.element_size_in_bits);
  p->set_memory_space(l.memory_space);
  for (const SplitConfig& s : l.split_configs) {
    xla::SplitConfigProto* sp = p->add_split_configs();
    sp->set_dimension(s.dimension);
    for (int64_t i : s.split_indices) sp->add_split_indices(i);
  }
  if (l.physical_shape) ShapeToProto(*l.physical_shape, p->mutable_physical_shape());
  p->set_dynamic_shape_metadata_prefix_bytes(l.dynamic_shape_metadata_prefix_bytes);
}

void ShapeToProto(const Shape& shape, xla::ShapeProto* p) {
  p->set_element_type(static_cast<xla::PrimitiveType>(shape.element_type()));
  if (shape.IsTuple() || shape.IsBuffer()) {
    for (const Shape& t : shape.tuple_shapes()) ShapeToProto(t, p->add_tuple_shapes());
    return;
  }
  if (!shape.IsArray()) return;
  bool dynamic = false;
  for (int i = 0; i < shape.rank(); ++i) {
    p->add_dimensions(shape.dimension(i));
    dynamic |= shape.is_dynamic_dimension(i);
  }
  if (dynamic) {
    for (int i = 0; i < shape.rank(); ++i)
      p->add_is_dynamic_dimension(shape.is_dynamic_dimension(i));
  }
  if (shape.has_layout()) LayoutToProto(shape.layout(), p->mutable_layout());
}

absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto, const ProtoLimits& limits) {
  return ShapeFromProtoImpl(proto, limits, 0);
}

absl::Status LiteralToProto(const Literal& literal, xla::LiteralProto* proto,
                            bool add_default_layout) {
  if (literal.elided()) {
    return Invalid("the literal's data is elided ({...}); there are no values to write");
  }
  Shape shape = literal.shape();
  if (add_default_layout && shape.IsArray() && !shape.has_layout()) shape.SetDefaultLayout();
  if (add_default_layout && shape.IsTuple()) {
    // Only elements without a layout get the default one.
    std::function<void(Shape*)> fill = [&](Shape* s) {
      if (s->IsArray() && !s->has_layout()) s->SetDefaultLayout();
      for (Shape& e : *s->mutable_tuple_shapes()) fill(&e);
    };
    fill(&shape);
  }
  ShapeToProto(shape, proto->mutable_shape());
  if (shape.IsTuple()) {
    if (literal.tuple_elements().size() != static_cast<size_t>(shape.tuple_count())) {
      return absl::InternalError("tuple literal has the wrong number of elements");
    }
    for (const Literal& e : literal.tuple_elements()) {
      absl::Status st = LiteralToProto(e, proto->add_tuple_literals(), add_default_layout);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  if (shape.IsDynamic()) return Invalid("literals with dynamic dimensions cannot be written");
  absl::StatusOr<std::vector<int64_t>> m2m = PhysicalOrder(shape);
  if (!m2m.ok()) return m2m.status();
  return WriteArrayData(literal, *m2m, proto);
}

absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto,
                                         const ProtoLimits& limits) {
  return LiteralFromProtoImpl(proto, nullptr, limits, 0);
}

}  // namespace hlowb
