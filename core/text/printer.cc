#include "core/text/printer.h"

#include <functional>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "core/support/strings.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "core/ir/float_types.h"

namespace hlowb {

void AppendLayout(const Layout& layout, std::string* out);
void AppendMetadata(const OpMetadata& metadata, std::string* out);

namespace {

// Decimal digits of v appended to out (the printer's hot path: dimensions, indices, ids).
inline void AppendInt(int64_t v, std::string* out) {
  char buf[absl::numbers_internal::kFastToBufferSize];
  char* end = absl::numbers_internal::FastIntToBuffer(v, buf);
  out->append(buf, static_cast<size_t>(end - buf));
}

void AppendIntList(const std::vector<int64_t>& v, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out->push_back(',');
    AppendInt(v[i], out);
  }
  out->push_back('}');
}

// `s` in double quotes with C escapes, as QuoteString; names and paths rarely need escaping,
// so those are copied as they are.
void AppendQuoted(std::string_view s, std::string* out) {
  bool plain = true;
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f || c == '"' || c == '\\' || c == '\'') {
      plain = false;
      break;
    }
  }
  out->push_back('"');
  if (plain) {
    out->append(s);
  } else {
    out->append(absl::CEscape(absl::string_view(s.data(), s.size())));
  }
  out->push_back('"');
}

std::string IntList(const std::vector<int64_t>& v) {
  std::string s;
  AppendIntList(v, &s);
  return s;
}

std::string BoolList(const std::vector<bool>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) StrAppend(&s, i ? "," : "", v[i] ? "true" : "false");
  return s + "}";
}

std::string IotaList(const IotaDeviceList& iota) {
  std::string s = StrCat("[", absl::StrJoin(iota.dims, ","), "]<=[",
                               absl::StrJoin(iota.reshape_dims, ","), "]");
  if (!iota.transpose_perm.empty()) StrAppend(&s, "T(", absl::StrJoin(iota.transpose_perm, ","), ")");
  return s;
}

bool IsIdentifier(std::string_view s) {
  if (s.empty()) return false;
  char c = s[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return false;
  for (char ch : s) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
          ch == '_' || ch == '.' || ch == '-')) {
      return false;
    }
  }
  return true;
}

// True when `s` is one balanced {...} block (quotes respected), so it can be printed unquoted
// and read back unchanged.
bool IsBalancedDict(std::string_view s) {
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

std::string_view EnumName(ComparisonDirection d) {
  static constexpr std::string_view k[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  return k[static_cast<int>(d)];
}
std::string_view EnumName(ComparisonType t) {
  static constexpr std::string_view k[] = {"", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  return k[static_cast<int>(t)];
}
std::string_view EnumName(FusionKind k) {
  static constexpr std::string_view n[] = {"kLoop", "kInput", "kOutput", "kCustom"};
  return n[static_cast<int>(k)];
}
std::string_view EnumName(FftType t) {
  static constexpr std::string_view n[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  return n[static_cast<int>(t)];
}
std::string_view EnumName(RandomDistribution d) {
  static constexpr std::string_view n[] = {"", "rng_uniform", "rng_normal"};
  return n[static_cast<int>(d)];
}
std::string_view EnumName(RandomAlgorithm a) {
  static constexpr std::string_view n[] = {"rng_default", "rng_three_fry", "rng_philox"};
  return n[static_cast<int>(a)];
}
std::string_view EnumName(TriangularTranspose t) {
  static constexpr std::string_view n[] = {"", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"};
  return n[static_cast<int>(t)];
}
std::string_view EnumName(CustomCallSchedule s) {
  static constexpr std::string_view n[] = {"SCHEDULE_NONE", "SCHEDULE_LATEST", "SCHEDULE_EARLIEST"};
  return n[static_cast<int>(s)];
}
std::string_view EnumName(CustomCallApiVersion v) {
  static constexpr std::string_view n[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL",
                                           "API_VERSION_STATUS_RETURNING",
                                           "API_VERSION_STATUS_RETURNING_UNIFIED",
                                           "API_VERSION_TYPED_FFI"};
  return n[static_cast<int>(v)];
}
std::string_view EnumName(PaddingType p) {
  static constexpr std::string_view n[] = {"", "PADDING_VALID", "PADDING_SAME"};
  return n[static_cast<int>(p)];
}
std::string_view EnumName(ConvolutionKind k) {
  static constexpr std::string_view n[] = {"unset", "fprop", "dgrad", "wgrad"};
  return n[static_cast<int>(k)];
}
std::string_view EnumName(Precision p) {
  static constexpr std::string_view n[] = {"default", "high", "highest", "packed_nibble"};
  return n[static_cast<int>(p)];
}
std::string_view EnumName(SubgroupType t) {
  static constexpr std::string_view n[] = {"replicated", "manual", "unreduced", "maximal"};
  return n[static_cast<int>(t)];
}

std::string ShapeIndexText(const ShapeIndex& index) { return IntList(index); }

std::string WindowText(const Window& window) {
  if (window.empty()) return "{}";
  std::vector<std::string> parts;
  auto dims = [&](auto get) {
    std::vector<std::string> v;
    for (const WindowDimension& d : window) v.push_back(StrCat(get(d)));
    return absl::StrJoin(v, "x");
  };
  auto any = [&](auto pred) {
    for (const WindowDimension& d : window) {
      if (pred(d)) return true;
    }
    return false;
  };
  parts.push_back("size=" + dims([](const WindowDimension& d) { return d.size; }));
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    parts.push_back("stride=" + dims([](const WindowDimension& d) { return d.stride; }));
  }
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    std::vector<std::string> v;
    for (const WindowDimension& d : window) v.push_back(StrCat(d.padding_low, "_", d.padding_high));
    parts.push_back("pad=" + absl::StrJoin(v, "x"));
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    parts.push_back("lhs_dilate=" + dims([](const WindowDimension& d) { return d.base_dilation; }));
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    parts.push_back("rhs_dilate=" + dims([](const WindowDimension& d) { return d.window_dilation; }));
  }
  if (any([](const WindowDimension& d) { return d.window_reversal; })) {
    parts.push_back("rhs_reversal=" +
                    dims([](const WindowDimension& d) { return d.window_reversal ? 1 : 0; }));
  }
  return "{" + absl::StrJoin(parts, " ") + "}";
}

std::string DimLabelsText(const ConvolutionDimensionNumbers& d) {
  auto side = [](int64_t a_dim, char a, int64_t b_dim, char b, const std::vector<int64_t>& spatial) {
    int64_t rank = 2 + static_cast<int64_t>(spatial.size());
    rank = std::max({rank, a_dim + 1, b_dim + 1});
    for (int64_t s : spatial) rank = std::max(rank, s + 1);
    rank = std::min<int64_t>(rank, 64);
    std::string s(static_cast<size_t>(rank), '?');
    if (a_dim >= 0 && a_dim < rank) s[a_dim] = a;
    if (b_dim >= 0 && b_dim < rank) s[b_dim] = b;
    for (size_t i = 0; i < spatial.size(); ++i) {
      if (spatial[i] >= 0 && spatial[i] < rank) s[spatial[i]] = static_cast<char>('0' + i);
    }
    return s;
  };
  return StrCat(
      side(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f', d.input_spatial_dimensions),
      "_",
      side(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
           d.kernel_spatial_dimensions),
      "->",
      side(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
           d.output_spatial_dimensions));
}

std::string PaddingText(const PaddingConfig& p) {
  bool interior = false;
  for (const PaddingDimension& d : p) interior |= d.interior != 0;
  std::vector<std::string> parts;
  for (const PaddingDimension& d : p) {
    parts.push_back(interior ? StrCat(d.low, "_", d.high, "_", d.interior)
                             : StrCat(d.low, "_", d.high));
  }
  return absl::StrJoin(parts, "x");
}

std::string MeshReplicaGroupsText(const MeshReplicaGroups& m) {
  const bool angle = m.style == MeshReplicaGroups::Style::kAngle;
  auto name = [&](const std::string& n) {
    return m.quote ? StrCat(std::string(1, m.quote), n, std::string(1, m.quote)) : n;
  };
  std::vector<std::string> axes;
  for (size_t i = 0; i < m.axis_names.size() && i < m.axis_sizes.size(); ++i) {
    axes.push_back(StrCat(name(m.axis_names[i]), "=", m.axis_sizes[i]));
  }
  std::string out = StrCat(angle ? "@mesh<" : "mesh[", absl::StrJoin(axes, ","), angle ? ">" : "]");
  std::string devices;
  if (m.device_iota) {
    devices = StrCat("[", absl::StrJoin(m.device_iota->reshape_dims, ","), "]");
    if (!m.device_iota->transpose_perm.empty()) {
      StrAppend(&devices, "T(", absl::StrJoin(m.device_iota->transpose_perm, ","), ")");
    }
  } else if (!m.device_ids.empty()) {
    devices = absl::StrJoin(m.device_ids, ",");
  }
  if (m.device_iota || !m.device_ids.empty()) {
    StrAppend(&out, angle ? "(" : ", device_ids=(", devices, ")");
  }
  std::vector<std::string> refs;
  for (const MeshAxisRef& r : m.axes) {
    std::string ref = r.by_index || r.axis < 0 || r.axis >= static_cast<int64_t>(m.axis_names.size())
                          ? name(StrCat(r.axis))
                          : name(m.axis_names[static_cast<size_t>(r.axis)]);
    if (r.has_sub()) StrAppend(&ref, ":(", r.pre_size, ")", r.size);
    refs.push_back(std::move(ref));
  }
  StrAppend(&out, " {", absl::StrJoin(refs, ","), "}");
  return out;
}

std::string ReplicaGroupsText(const ReplicaGroups& g) {
  if (g.mesh) return MeshReplicaGroupsText(*g.mesh);
  if (g.iota) return IotaList(*g.iota);
  std::vector<std::string> parts;
  for (const auto& group : g.groups) parts.push_back(IntList(group));
  return "{" + absl::StrJoin(parts, ",") + "}";
}

std::string AliasingText(const std::vector<OutputOperandAlias>& a) {
  std::vector<std::string> parts;
  for (const OutputOperandAlias& e : a) {
    parts.push_back(StrCat(ShapeIndexText(e.output_index), ": (", e.operand, ", ",
                                 ShapeIndexText(e.operand_index), ")"));
  }
  return "{" + absl::StrJoin(parts, ", ") + "}";
}

std::string FrontendAttributesText(const FrontendAttributes& f) {
  std::vector<std::string> parts;
  for (const auto& e : f.entries) {
    std::string key = IsIdentifier(e.key) ? e.key : QuoteString(e.key);
    parts.push_back(StrCat(key, "=", e.is_dict && IsBalancedDict(e.value) ? e.value
                                                                              : QuoteString(e.value)));
  }
  return "{" + absl::StrJoin(parts, ",") + "}";
}

std::string DoubleText(double v) {
  // Shortest form that reads back to the same double.
  for (int precision = 6; precision <= 17; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, v);
    if (std::strtod(s.c_str(), nullptr) == v) return s;
  }
  return absl::StrFormat("%.17g", v);
}

std::string FloatText(float v) {
  for (int precision = 6; precision <= 9; ++precision) {
    std::string s = absl::StrFormat("%.*g", precision, static_cast<double>(v));
    if (std::strtof(s.c_str(), nullptr) == v) return s;
  }
  return absl::StrFormat("%.9g", static_cast<double>(v));
}

void AppendComponent(const Literal& lit, PrimitiveType type, int64_t component, std::string* out) {
  uint64_t bits = lit.GetBits(component);
  if (IsFloatingPoint(type)) {
    out->append(FormatFloatBits(type, bits));
  } else if (IsSignedIntegral(type)) {
    StrAppend(out, lit.GetInt(component));
  } else {
    StrAppend(out, bits);
  }
}

void AppendElement(const Literal& lit, int64_t index, bool scalar, std::string* out) {
  PrimitiveType type = lit.shape().element_type();
  if (type == PrimitiveType::kPred) {
    bool v = lit.GetBits(index) != 0;
    out->append(scalar ? (v ? "true" : "false") : (v ? "1" : "0"));
  } else if (IsComplex(type)) {
    PrimitiveType c = ComplexComponentType(type);
    out->push_back('(');
    AppendComponent(lit, c, 2 * index, out);
    out->append(", ");
    AppendComponent(lit, c, 2 * index + 1, out);
    out->push_back(')');
  } else {
    AppendComponent(lit, type, index, out);
  }
}

void AppendLiteralData(const Literal& lit, std::string* out) {
  const Shape& shape = lit.shape();
  if (shape.IsTuple()) {
    if (lit.elided()) {
      out->append("{...}");
      return;
    }
    out->append("( ");
    for (size_t i = 0; i < lit.tuple_elements().size(); ++i) {
      if (i) out->append(", ");
      AppendLiteralData(lit.tuple_elements()[i], out);
    }
    out->append(" )");
    return;
  }
  if (!shape.IsArray()) return;
  if (lit.elided()) {
    out->append("{...}");
    return;
  }
  if (shape.rank() == 0) {
    AppendElement(lit, 0, true, out);
    return;
  }
  // XLA's literal text: the multi-line form of Literal::ToString (innermost rows of rank >= 2
  // padded inside their braces when longer than one element, "/*iK=N*/" marks above rank 3),
  // with every run of spaces and newlines then written as one space.
  const int rank = shape.rank();
  int64_t linear = 0;
  std::vector<int64_t> index;
  std::string raw;
  auto open = [&](int dims_left) {
    if (rank == 1) {
      raw.push_back('{');
    } else if (dims_left == 1) {
      raw.append(shape.dimension(rank - 1) <= 1 ? "  {" : "  { ");
    } else if (rank > 3 && !index.empty()) {
      StrAppend(&raw, "{ /*i", index.size() - 1, "=", index.back(), "*/\n");
    } else {
      raw.append("{\n");
    }
  };
  auto close = [&](int dims_left) {
    if (rank == 1) {
      raw.push_back('}');
    } else if (dims_left == 1) {
      raw.append(shape.dimension(rank - 1) <= 1 ? "}" : " }");
    } else {
      raw.append("\n}");
    }
  };
  auto print_dim = [&](auto&& self, int dim) -> void {
    if (dim == rank) {
      AppendElement(lit, linear++, false, &raw);
      return;
    }
    const int dims_left = rank - dim;
    open(dims_left);
    const int64_t n = shape.dimension(dim);
    for (int64_t i = 0; i < n; ++i) {
      index.push_back(i);
      self(self, dim + 1);
      index.pop_back();
      if (i + 1 < n) raw.append(dims_left > 1 ? ",\n" : ", ");
    }
    close(dims_left);
  };
  print_dim(print_dim, 0);
  bool pending_space = false;
  bool first = true;
  for (char c : raw) {
    if (c == ' ' || c == '\n') {
      pending_space = true;
      continue;
    }
    if (pending_space && !first) out->push_back(' ');
    pending_space = false;
    first = false;
    out->push_back(c);
  }
}

void AppendShardingText(const Sharding& s, std::string* out) {
  if (s.type == ShardingType::kTuple) {
    out->push_back('{');
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      if (i) out->append(", ");
      if (i > 0 && i % 5 == 0) StrAppend(out, "/*index=", i, "*/");
      AppendShardingText(s.tuple_elements[i], out);
    }
    out->push_back('}');
    return;
  }
  if (s.type == ShardingType::kRaw) {
    StrAppend(out, "{", s.raw, "}");
    return;
  }
  std::vector<std::string> parts;
  switch (s.type) {
    case ShardingType::kReplicated: parts.push_back("replicated"); break;
    case ShardingType::kManual: parts.push_back("manual"); break;
    case ShardingType::kUnknown: parts.push_back("unknown"); break;
    case ShardingType::kUnreduced: parts.push_back("unreduced"); break;
    case ShardingType::kMaximal:
      parts.push_back(StrCat("maximal device=", s.devices.empty() ? 0 : s.devices[0]));
      break;
    case ShardingType::kTiled:
      if (s.iota) {
        parts.push_back("devices=" + IotaList(*s.iota));
      } else {
        parts.push_back(StrCat("devices=[", absl::StrJoin(s.tile_dims, ","), "]",
                                     absl::StrJoin(s.devices, ",")));
      }
      break;
    default:
      break;
  }
  if (s.last_tile_dim_replicate) parts.push_back("last_tile_dim_replicate");
  if (!s.last_tile_dims.empty()) {
    std::vector<std::string> t;
    for (SubgroupType st : s.last_tile_dims) t.push_back(std::string(EnumName(st)));
    parts.push_back("last_tile_dims={" + absl::StrJoin(t, ", ") + "}");
  }
  if (s.shard_group == Sharding::ShardGroup::kAs) parts.push_back(StrCat("shard_as ", s.shard_group_id));
  if (s.shard_group == Sharding::ShardGroup::kLike) parts.push_back(StrCat("shard_like ", s.shard_group_id));
  if (s.metadata.size() == 1) {
    parts.push_back("metadata=" + PrintMetadata(s.metadata[0]));
  } else if (s.metadata.size() > 1) {
    std::vector<std::string> m;
    for (const OpMetadata& md : s.metadata) m.push_back(PrintMetadata(md));
    parts.push_back("metadata={" + absl::StrJoin(m, ", ") + "}");
  }
  StrAppend(out, "{", absl::StrJoin(parts, " "), "}");
}

// Short form drops the '%' sigil, except where the bare name would not lex as a name (it
// starts with a digit or '-', or is a keyword).
bool NeedsSigil(std::string_view name) {
  if (name.empty()) return true;
  const char c = name[0];
  if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')) return true;
  // Words the lexer reads as something other than a name: keywords, element types, "nan".
  return name == "ROOT" || name == "ENTRY" || name == "HloModule" || name == "true" ||
         name == "false" || name == "nan" || ParsePrimitiveType(name).has_value();
}

}  // namespace

const Instruction* AsyncWrappedInstruction(const Instruction& start) {
  if (start.opcode() != Opcode::kAsyncStart || start.called_computations().size() != 1 ||
      start.called_computations()[0] == nullptr) {
    return nullptr;
  }
  const Computation* called = start.called_computations()[0];
  const Instruction* root = called->root();
  if (root == nullptr || !CanBeAsyncSugar(root->opcode()) ||
      root->operand_count() != start.operand_count() ||
      called->instruction_count() != root->operand_count() + 1) {
    return nullptr;
  }
  for (int k = 0; k < root->operand_count(); ++k) {
    const Instruction* op = root->operand(k);
    if (op == nullptr || op->opcode() != Opcode::kParameter || op->parameter_number() != k) {
      return nullptr;
    }
  }
  return root;
}

namespace {

// For async-start/update/done marked as sugar: the wrapped instruction, so that they print as
// `<op>-start` / `-update` / `-done`; nullptr otherwise.
const Instruction* AsyncSugarWrapped(const Instruction& instr) {
  if (!instr.async_sugar()) return nullptr;
  const Instruction* start = &instr;
  while ((start->opcode() == Opcode::kAsyncUpdate || start->opcode() == Opcode::kAsyncDone) &&
         start->operand_count() == 1 && start->operand(0) != nullptr) {
    start = start->operand(0);
  }
  return AsyncWrappedInstruction(*start);
}

void AppendCanonicalComputation(const Computation& comp, const PrintOptions& options, int indent,
                                bool nested, std::string* out);

// A shape as XLA's parser completes it: arrays without a layout get the default one.
void AppendShapeWithDefaultLayout(const Shape& shape, std::string* out) {
  if (shape.IsTuple()) {
    out->push_back('(');
    for (int i = 0; i < shape.tuple_count(); ++i) {
      if (i) out->append(", ");
      if (i > 0 && i % 5 == 0) StrAppend(out, "/*index=", i, "*/");
      AppendShapeWithDefaultLayout(shape.tuple_shape(i), out);
    }
    out->push_back(')');
    return;
  }
  AppendShape(shape, true, out);
  if (shape.IsArray() && !shape.has_layout() && shape.rank() > 0) {
    out->push_back('{');
    for (int d = shape.rank() - 1; d >= 0; --d) StrAppend(out, d, d > 0 ? "," : "");
    out->push_back('}');
  }
}

// Whether every element of an array literal has the bits of `value` (0 or 1) in its type.
bool LiteralIsAll(const Literal& lit, int value) {
  const PrimitiveType type = lit.shape().element_type();
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (IsComplex(type)) {
      const PrimitiveType c = ComplexComponentType(type);
      if (FloatBitsToDouble(c, lit.GetBits(2 * i)) != value ||
          FloatBitsToDouble(c, lit.GetBits(2 * i + 1)) != 0) {
        return false;
      }
    } else if (IsFloatingPoint(type)) {
      if (FloatBitsToDouble(type, lit.GetBits(i)) != value) return false;
    } else if (type == PrimitiveType::kPred || IsUnsignedIntegral(type)) {
      if (lit.GetBits(i) != static_cast<uint64_t>(value)) return false;
    } else if (lit.GetInt(i) != value) {
      return false;
    }
  }
  return true;
}

void StripShardingMetadata(Sharding* s) {
  s->metadata.clear();
  for (Sharding& e : s->tuple_elements) StripShardingMetadata(&e);
}

class InstructionPrinter {
 public:
  InstructionPrinter(const PrintOptions& options, std::string* out) : o_(options), out_(out) {}
  // The canonical forms: names from `names` (tmp_N, assigned on first use), called
  // computations written in place one level deeper than `indent`.
  InstructionPrinter(const PrintOptions& options, std::string* out,
                     absl::flat_hash_map<const Instruction*, std::string>* names, int indent)
      : o_(options), out_(out), names_(names), indent_(indent) {}

  void PrintSignature(const Instruction& instr) {
    AppendShape(instr.shape(), true, out_);
    StrAppend(out_, " ", OpcodeName(instr.opcode()));
    PrintPayloadAndAttributes(instr);
  }

  void PrintPayloadAndAttributes(const Instruction& instr) {
    out_->push_back('(');
    if (instr.opcode() == Opcode::kConstant && instr.literal()) {
      AppendLiteralData(*instr.literal(), out_);
    } else if (instr.opcode() == Opcode::kParameter) {
      StrAppend(out_, instr.parameter_number());
    } else {
      StrAppend(out_, instr.operand_count());
    }
    out_->push_back(')');
    PrintAttributes(instr);
  }

  void Print(const Instruction& instr) {
    if (names_ != nullptr) {
      PrintCanonical(instr);
      return;
    }
    const bool long_form = o_.form == PrintOptions::Form::kLong;
    if (instr.IsRoot()) out_->append("ROOT ");
    if (long_form || NeedsSigil(instr.name())) out_->push_back('%');
    StrAppend(out_, instr.name(), " = ");
    AppendShape(instr.shape(), true, out_);
    const Instruction* wrapped = AsyncSugarWrapped(instr);
    OpenOperands(instr, wrapped);
    if (instr.opcode() == Opcode::kConstant) {
      if (instr.literal()) AppendLiteralData(*instr.literal(), out_);
    } else if (instr.opcode() == Opcode::kParameter) {
      StrAppend(out_, instr.parameter_number());
    } else {
      for (int i = 0; i < instr.operand_count(); ++i) {
        if (i) out_->append(", ");
        const Instruction* op = instr.operand(i);
        if (o_.print_operand_index && i > 0 && i % 5 == 0) {
          out_->append("/*index=");
          AppendInt(i, out_);
          out_->append("*/");
        }
        if (long_form) {
          if (o_.print_operand_shape) {
            AppendShape(op->shape(), true, out_);
            out_->push_back(' ');
          }
          out_->push_back('%');
        } else if (NeedsSigil(op->name())) {
          out_->push_back('%');
        }
        out_->append(op->name());
      }
    }
    out_->push_back(')');
    CloseWithAttributes(instr, wrapped);
  }

 private:
  // " opcode(" or, for async sugar, " <wrapped opcode>-start(" (-update, -done).
  void OpenOperands(const Instruction& instr, const Instruction* wrapped) {
    if (wrapped != nullptr) {
      StrAppend(out_, " ", OpcodeName(wrapped->opcode()),
                instr.opcode() == Opcode::kAsyncStart    ? "-start("
                : instr.opcode() == Opcode::kAsyncUpdate ? "-update("
                                                         : "-done(");
    } else {
      StrAppend(out_, " ", OpcodeName(instr.opcode()), "(");
    }
  }

  // The attributes after the operands: for a sugared start, the wrapped instruction's, then
  // the start's own.
  void CloseWithAttributes(const Instruction& instr, const Instruction* wrapped) {
    if (wrapped != nullptr && instr.opcode() == Opcode::kAsyncStart) {
      PrintAttributes(*wrapped);
      const InstructionAttrs& a = instr.attrs_or_default();
      if (!a.async_execution_thread.empty()) {
        Attr("async_execution_thread", QuoteString(a.async_execution_thread));
      }
      PrintCommon(instr, /*print_called=*/false);
      return;
    }
    PrintAttributes(instr);
  }

  bool canonical() const { return names_ != nullptr; }
  bool fingerprint() const { return o_.canonical == PrintOptions::Canonical::kFingerprint; }

  const std::string& CanonicalName(const Instruction* instr) {
    auto [it, inserted] = names_->try_emplace(instr);
    if (inserted) it->second = StrCat("tmp_", names_->size() - 1);
    return it->second;
  }

  void PrintCanonical(const Instruction& instr) {
    if (instr.IsRoot()) out_->append("ROOT ");
    StrAppend(out_, CanonicalName(&instr), " = ");
    AppendShapeWithDefaultLayout(instr.shape(), out_);
    const Instruction* wrapped = AsyncSugarWrapped(instr);
    OpenOperands(instr, wrapped);
    if (instr.opcode() == Opcode::kConstant) {
      AppendCanonicalConstant(instr);
    } else if (instr.opcode() == Opcode::kParameter) {
      StrAppend(out_, instr.parameter_number());
    } else {
      for (int i = 0; i < instr.operand_count(); ++i) {
        if (i) out_->append(", ");
        const Instruction* op = instr.operand(i);
        AppendShapeWithDefaultLayout(op->shape(), out_);
        StrAppend(out_, " ", CanonicalName(op));
      }
    }
    out_->push_back(')');
    CloseWithAttributes(instr, wrapped);
  }

  // XLA elides constants of more than 10 elements and tuple constants; the fingerprint form
  // keeps only all-zero (0), all-one (1) and integer constants.
  void AppendCanonicalConstant(const Instruction& instr) {
    const Literal* lit = instr.literal();
    if (lit == nullptr || lit->elided() || !lit->shape().IsArray()) {
      out_->append("{...}");
      return;
    }
    if (fingerprint()) {
      if (LiteralIsAll(*lit, 0)) {
        out_->append("0");
      } else if (LiteralIsAll(*lit, 1)) {
        out_->append("1");
      } else if (IsIntegral(lit->shape().element_type())) {
        AppendLiteralData(*lit, out_);
      } else {
        out_->append("{...}");
      }
      return;
    }
    if (lit->element_count() > 10) {
      out_->append("{...}");
      return;
    }
    AppendLiteralData(*lit, out_);
  }

  std::string Body(const Computation* c) const {
    std::string body;
    if (c != nullptr) AppendCanonicalComputation(*c, o_, indent_ + 1, /*nested=*/true, &body);
    return body;
  }
  std::string Bodies(const std::vector<Computation*>& called, std::string_view sep) const {
    std::string out;
    for (size_t i = 0; i < called.size(); ++i) {
      if (i) out.append(sep);
      out.append(Body(called[i]));
    }
    return out;
  }



  void Attr(std::string_view name, std::string_view value) {
    StrAppend(out_, ", ", name, "=", value);
  }
  std::string CompName(const Computation* c) const {
    std::string name = c ? c->name() : std::string("<null>");
    return o_.form == PrintOptions::Form::kLong || NeedsSigil(name) ? "%" + name : name;
  }

  void PrintAttributes(const Instruction& instr) {
    const Opcode op = instr.opcode();
    const InstructionAttrs& a = instr.attrs_or_default();
    const bool has_attrs = instr.attrs() != nullptr;

    // Opcode-specific attributes, in XLA's order where it has one.
    if (op == Opcode::kGetTupleElement) {
      out_->append(", index=");
      AppendInt(instr.tuple_index(), out_);
    }
    if (op == Opcode::kIota) Attr("iota_dimension", StrCat(instr.iota_dimension()));
    if (has_attrs) {
      if (a.channel_id) Attr("channel_id", StrCat(*a.channel_id));
      if (a.replica_groups) {
        if (fingerprint() && (a.replica_groups->iota || a.replica_groups->mesh)) {
          ReplicaGroups full;
          full.groups = a.replica_groups->Expanded();
          Attr("replica_groups", ReplicaGroupsText(full));
        } else {
          Attr("replica_groups", ReplicaGroupsText(*a.replica_groups));
        }
      }
      if (a.constrain_layout) Attr("constrain_layout", "true");
      if (!a.legacy_mode.empty()) Attr("mode", a.legacy_mode);
      if (!a.source_target_pairs.empty()) {
        std::vector<std::string> p;
        for (const auto& [s, t] : a.source_target_pairs) p.push_back(StrCat("{", s, ",", t, "}"));
        Attr("source_target_pairs", "{" + absl::StrJoin(p, ",") + "}");
      }
      if (!a.permute_slice_sizes.empty()) {
        std::vector<std::string> p;
        for (const auto& v : a.permute_slice_sizes) p.push_back(IntList(v));
        Attr("slice_sizes", "{" + absl::StrJoin(p, ",") + "}");
      }
      if (op == Opcode::kReduceScatter && a.use_global_device_ids) {
        Attr("use_global_device_ids", *a.use_global_device_ids ? "true" : "false");
      }
    }
    if (instr.has_dimensions()) {
      out_->append(", dimensions=");
      AppendIntList(instr.dimensions(), out_);
    } else if (canonical() && op == Opcode::kBroadcast) {
      Attr("dimensions", "{}");  // XLA's parser fills in a scalar broadcast's empty list
    }
    if (!has_attrs) {
      PrintCommon(instr);
      return;
    }
    if (op != Opcode::kReduceScatter && a.use_global_device_ids) {
      Attr("use_global_device_ids", *a.use_global_device_ids ? "true" : "false");
    }
    if (op == Opcode::kCompare) {
      Attr("direction", EnumName(a.comparison_direction));
      if (a.comparison_type != ComparisonType::kDefault) Attr("type", EnumName(a.comparison_type));
    }
    if (op == Opcode::kReducePrecision) {
      Attr("exponent_bits", StrCat(a.exponent_bits));
      Attr("mantissa_bits", StrCat(a.mantissa_bits));
    }
    if (a.inferred_dimension != -1) Attr("inferred_dimension", StrCat(a.inferred_dimension));
    if (!a.slice.empty()) {
      bool strided = false;
      for (const SliceDimension& d : a.slice) strided |= d.stride != 1;
      std::vector<std::string> r;
      for (const SliceDimension& d : a.slice) {
        r.push_back(strided ? StrCat("[", d.start, ":", d.limit, ":", d.stride, "]")
                            : StrCat("[", d.start, ":", d.limit, "]"));
      }
      Attr("slice", "{" + absl::StrJoin(r, ", ") + "}");
    }
    if (a.padding) Attr("padding", PaddingText(*a.padding));
    if (a.window) Attr("window", WindowText(*a.window));
    if (a.convolution_dimension_numbers) {
      Attr("dim_labels", DimLabelsText(*a.convolution_dimension_numbers));
    }
    if (a.feature_group_count != 1) Attr("feature_group_count", StrCat(a.feature_group_count));
    if (a.batch_group_count != 1) Attr("batch_group_count", StrCat(a.batch_group_count));
    if (a.dot_dimension_numbers) {
      const DotDimensionNumbers& d = *a.dot_dimension_numbers;
      if (!d.lhs_batch_dimensions.empty()) Attr("lhs_batch_dims", IntList(d.lhs_batch_dimensions));
      Attr("lhs_contracting_dims", IntList(d.lhs_contracting_dimensions));
      if (!d.rhs_batch_dimensions.empty()) Attr("rhs_batch_dims", IntList(d.rhs_batch_dimensions));
      Attr("rhs_contracting_dims", IntList(d.rhs_contracting_dimensions));
      if (!d.lhs_ragged_dimensions.empty()) Attr("lhs_ragged_dims", IntList(d.lhs_ragged_dimensions));
      if (!d.rhs_group_dimensions.empty()) Attr("rhs_group_dims", IntList(d.rhs_group_dimensions));
    }
    if (!a.sparsity.empty()) Attr("sparsity", a.sparsity);
    if (!a.precision_config.operand_precision.empty()) {
      std::vector<std::string> p;
      for (Precision x : a.precision_config.operand_precision) p.push_back(std::string(EnumName(x)));
      Attr("operand_precision", "{" + absl::StrJoin(p, ",") + "}");
    }
    if (!a.precision_config.algorithm.empty()) Attr("algorithm", a.precision_config.algorithm);
    if (a.conv_kind != ConvolutionKind::kUnset) Attr("conv_kind", EnumName(a.conv_kind));
    if (a.gather_dimension_numbers) {
      const GatherDimensionNumbers& g = *a.gather_dimension_numbers;
      Attr("offset_dims", IntList(g.offset_dims));
      Attr("collapsed_slice_dims", IntList(g.collapsed_slice_dims));
      Attr("start_index_map", IntList(g.start_index_map));
      if (!g.operand_batching_dims.empty()) Attr("operand_batching_dims", IntList(g.operand_batching_dims));
      if (!g.start_indices_batching_dims.empty()) {
        Attr("start_indices_batching_dims", IntList(g.start_indices_batching_dims));
      }
      Attr("index_vector_dim", StrCat(g.index_vector_dim));
    }
    if (a.scatter_dimension_numbers) {
      const ScatterDimensionNumbers& s = *a.scatter_dimension_numbers;
      Attr("update_window_dims", IntList(s.update_window_dims));
      Attr("inserted_window_dims", IntList(s.inserted_window_dims));
      Attr("scatter_dims_to_operand_dims", IntList(s.scatter_dims_to_operand_dims));
      if (!s.input_batching_dims.empty()) Attr("input_batching_dims", IntList(s.input_batching_dims));
      if (!s.scatter_indices_batching_dims.empty()) {
        Attr("scatter_indices_batching_dims", IntList(s.scatter_indices_batching_dims));
      }
      Attr("index_vector_dim", StrCat(s.index_vector_dim));
    }
    if (!a.slice_sizes.empty() || op == Opcode::kGather || op == Opcode::kDynamicSlice) {
      if (op == Opcode::kDynamicSlice) {
        Attr("dynamic_slice_sizes", IntList(a.slice_sizes));
      } else {
        Attr("slice_sizes", IntList(a.slice_sizes));
      }
    }
    if (a.indices_are_sorted) Attr("indices_are_sorted", "true");
    if (a.unique_indices) Attr("unique_indices", "true");
    if (op == Opcode::kFusion) {
      Attr("kind", EnumName(a.fusion_kind));
    }
    // A fusion's aliasing follows its kind; a custom call's follows its target, layout
    // constraints, side effect and literal, as XLA's HloCustomCallInstruction prints them.
    const bool custom_call = op == Opcode::kCustomCall;
    if (!a.output_operand_aliasing.empty() && !custom_call) {
      Attr("output_to_operand_aliasing", AliasingText(a.output_operand_aliasing));
    }
    if (a.padding_type != PaddingType::kInvalid) Attr("padding_type", EnumName(a.padding_type));
    if (!a.custom_call_target.empty() || custom_call) {
      Attr("custom_call_target", QuoteString(a.custom_call_target));
    }
    if (a.operand_layout_constraints) {
      std::vector<std::string> s;
      for (const Shape& sh : *a.operand_layout_constraints) s.push_back(PrintShape(sh));
      Attr("operand_layout_constraints", "{" + absl::StrJoin(s, ", ") + "}");
    }
    if (a.custom_call_has_side_effect) Attr("custom_call_has_side_effect", "true");
    if (a.custom_call_literal) Attr("literal", PrintShapedLiteral(*a.custom_call_literal));
    if (!a.output_operand_aliasing.empty() && custom_call) {
      Attr("output_to_operand_aliasing", AliasingText(a.output_operand_aliasing));
    }
    if (a.schedule != CustomCallSchedule::kNone) Attr("schedule", EnumName(a.schedule));
    if (a.api_version != CustomCallApiVersion::kOriginal) Attr("api_version", EnumName(a.api_version));
    if (op == Opcode::kFft) {
      Attr("fft_type", EnumName(a.fft_type));
      Attr("fft_length", IntList(a.fft_length));
    } else if (!a.fft_length.empty()) {
      Attr("fft_length", IntList(a.fft_length));
    }
    if (a.left_side) Attr("left_side", "true");
    if (a.lower) Attr("lower", "true");
    if (a.unit_diagonal) Attr("unit_diagonal", "true");
    if (a.transpose_a != TriangularTranspose::kInvalid) Attr("transpose_a", EnumName(a.transpose_a));
    if (op == Opcode::kBatchNormGrad || op == Opcode::kBatchNormInference ||
        op == Opcode::kBatchNormTraining) {
      Attr("epsilon", FloatText(a.epsilon));
      Attr("feature_index", StrCat(a.feature_index));
    }
    if (a.distribution != RandomDistribution::kInvalid) Attr("distribution", EnumName(a.distribution));
    if (op == Opcode::kRngBitGenerator) Attr("algorithm", EnumName(a.rng_algorithm));
    if (op == Opcode::kRngGetAndUpdateState) Attr("delta", StrCat(a.delta));
    if (!a.infeed_config.empty() && !fingerprint()) {
      Attr("infeed_config", QuoteString(a.infeed_config));
    }
    if (a.outfeed_shape) Attr("outfeed_shape", PrintShape(*a.outfeed_shape));
    if (!a.outfeed_config.empty() && !fingerprint()) {
      Attr("outfeed_config", QuoteString(a.outfeed_config));
    }
    if (a.is_host_transfer) Attr("is_host_transfer", "true");
    if (a.cross_program_prefetch_index) {
      Attr("cross_program_prefetch_index", StrCat(*a.cross_program_prefetch_index));
    }
    if (op == Opcode::kTopK) {
      Attr("k", StrCat(a.k));
      Attr("largest", a.largest ? "true" : "false");
    }
    if (a.num_carries != 0) Attr("num_carries", StrCat(a.num_carries));
    if (a.is_reverse) Attr("is_reverse", "true");
    if (a.is_associative != TriState::kUnspecified) {
      Attr("is_associative", a.is_associative == TriState::kTrue ? "true" : "false");
    }
    if (a.is_stable) Attr("is_stable", "true");
    if (!a.async_execution_thread.empty()) {
      Attr("async_execution_thread", QuoteString(a.async_execution_thread));
    }
    if (op == Opcode::kDomain) {
      std::vector<std::string> d;
      d.push_back("kind=" + QuoteString(a.domain_kind));
      if (a.domain_entry_sharding) d.push_back("entry=" + PrintSharding(*a.domain_entry_sharding));
      if (a.domain_exit_sharding) d.push_back("exit=" + PrintSharding(*a.domain_exit_sharding));
      Attr("domain", "{" + absl::StrJoin(d, ", ") + "}");
    }
    // XLA's fingerprint form leaves parameter replication out.
    if (!a.parameter_replication.empty() && !fingerprint()) {
      Attr("parameter_replication", BoolList(a.parameter_replication));
    }
    for (const auto& [name, value] : a.unknown) Attr(name, value);
    PrintCommon(instr);
  }

  // The called-computation attributes in XLA's names: `one` writes a single computation,
  // `list` a braced list (names, or bodies written in place in the canonical forms).
  void PrintCalled(const Instruction& instr,
                   const std::function<std::string(const Computation*)>& one,
                   const std::function<std::string(const std::vector<Computation*>&)>& list) {
    const auto& called = instr.called_computations();
    if (called.empty()) return;
    const InstructionAttrs& a = instr.attrs_or_default();
    switch (instr.opcode()) {
      case Opcode::kWhile:
        if (called.size() == 2) {
          Attr("condition", one(called[0]));
          Attr("body", one(called[1]));
          return;
        }
        break;
      case Opcode::kSelectAndScatter:
        if (called.size() == 2) {
          Attr("select", one(called[0]));
          Attr("scatter", one(called[1]));
          return;
        }
        break;
      case Opcode::kConditional:
        if (instr.operand_count() > 0 &&
            instr.operand(0)->shape().element_type() == PrimitiveType::kPred && called.size() == 2) {
          Attr("true_computation", one(called[0]));
          Attr("false_computation", one(called[1]));
          return;
        }
        Attr("branch_computations", list(called));
        return;
      case Opcode::kFusion:
      case Opcode::kAsyncStart:
        if (called.size() == 1) {
          Attr("calls", one(called[0]));
          return;
        }
        break;
      default:
        break;
    }
    if (called.size() == 1 && !a.called_computations_as_list) {
      Attr("to_apply", one(called[0]));
      return;
    }
    Attr("called_computations", list(called));
  }


  void PrintCommon(const Instruction& instr, bool print_called = true) {
    const InstructionAttrs& a = instr.attrs_or_default();
    if (canonical() && print_called) {
      // Bodies written in place, as XLA's full-bodies mode prints them.
      PrintCalled(
          instr, [this](const Computation* c) { return "\n" + Body(c); },
          [this](const std::vector<Computation*>& cs) {
            return "{\n" + Bodies(cs, ",\n") + "\n}";
          });
    } else if (o_.print_references && print_called) {
      PrintCalled(
          instr, [this](const Computation* c) { return CompName(c); },
          [this](const std::vector<Computation*>& cs) {
            std::vector<std::string> names;
            for (const Computation* c : cs) names.push_back(CompName(c));
            return "{" + absl::StrJoin(names, ", ") + "}";
          });
    }
    if (a.is_composite) Attr("is_composite", "true");
    if (instr.sharding() && canonical()) {
      // Without the sharding's metadata: the canonical forms print no metadata.
      Sharding bare = *instr.sharding();
      StripShardingMetadata(&bare);
      Attr("sharding", PrintSharding(bare));
    } else if (instr.sharding()) {
      Attr("sharding", PrintSharding(*instr.sharding()));
    }
    if (instr.frontend_attributes() && !instr.frontend_attributes()->entries.empty()) {
      Attr("frontend_attributes", FrontendAttributesText(*instr.frontend_attributes()));
    }
    if (o_.print_references && !canonical() && !instr.control_predecessors().empty()) {
      std::vector<std::string> names;
      for (const Instruction* p : instr.control_predecessors()) {
        names.push_back((o_.form == PrintOptions::Form::kLong || NeedsSigil(p->name()) ? "%" : "") +
                        p->name());
      }
      Attr("control-predecessors", "{" + absl::StrJoin(names, ", ") + "}");
    }
    if (a.statistics) {
      std::vector<std::string> s;
      s.push_back(StrCat("visualizing_index=", a.statistics->visualizing_index));
      for (const Statistic& st : a.statistics->statistics) {
        s.push_back(StrCat(st.name, "=", DoubleText(st.value)));
      }
      Attr("statistics", "{" + absl::StrJoin(s, ",") + "}");
    }
    if (a.result_accuracy) {
      const ResultAccuracy& r = *a.result_accuracy;
      if (r.mode == ResultAccuracy::Mode::kTolerance) {
        Attr("result_accuracy", StrCat("{tolerance={atol=", DoubleText(r.atol), ",rtol=",
                                             DoubleText(r.rtol), ",ulps=", r.ulps, "}}"));
      } else {
        Attr("result_accuracy", r.mode == ResultAccuracy::Mode::kHighest ? "{mode=highest}"
                                                                         : "{mode=default}");
      }
    }
    if (!a.origin.empty()) Attr("origin", a.origin);
    if (o_.print_metadata && !canonical() && instr.metadata() && !instr.metadata()->empty()) {
      out_->append(", metadata=");
      AppendMetadata(*instr.metadata(), out_);
    }
    if (o_.print_backend_config && !canonical() && !instr.backend_config().empty()) {
      const std::string& bc = instr.backend_config();
      Attr("backend_config", IsBalancedDict(bc) ? bc : QuoteString(bc));
    }
  }

  const PrintOptions& o_;
  std::string* out_;
  absl::flat_hash_map<const Instruction*, std::string>* names_ = nullptr;
  int indent_ = 0;
};

void AppendCanonicalComputation(const Computation& comp, const PrintOptions& options, int indent,
                                bool nested, std::string* out) {
  const std::string tab(2 * indent, ' ');
  const bool print_ids = options.canonical != PrintOptions::Canonical::kFingerprint;
  out->append(tab);
  if (!nested && print_ids) StrAppend(out, comp.name(), " ");
  out->append("{\n");
  absl::flat_hash_map<const Instruction*, std::string> names;
  names.reserve(comp.instructions().size());
  InstructionPrinter printer(options, out, &names, indent);
  // XLA prints a scheduled module's computations in their schedule (the file's order), but
  // fusion bodies and computations written in place in post order.
  const Module* module = comp.parent();
  bool scheduled = !nested && module != nullptr && module->config().is_scheduled;
  if (scheduled) {
    for (const auto& other : module->computations()) {
      for (const Instruction* instr : other->instructions()) {
        if (instr->opcode() != Opcode::kFusion) continue;
        for (const Computation* c : instr->called_computations()) {
          if (c == &comp) scheduled = false;
        }
      }
    }
  }
  const std::vector<const Instruction*> order =
      scheduled ? std::vector<const Instruction*>(comp.instructions().begin(),
                                                  comp.instructions().end())
                : XlaInstructionPostOrder(comp);
  for (const Instruction* instr : order) {
    StrAppend(out, tab, "  ");
    printer.Print(*instr);
    out->push_back('\n');
  }
  StrAppend(out, tab, "}");
  if (print_ids && !comp.execution_thread().empty()) {
    StrAppend(out, ", execution_thread=", QuoteString(comp.execution_thread()));
  }
}

void AppendComputation(const Computation& comp, const PrintOptions& options, std::string* out) {
  const bool long_form = options.form == PrintOptions::Form::kLong;
  if (comp.is_entry()) out->append("ENTRY ");
  if (long_form) {
    StrAppend(out, "%", comp.name(), " (");
    bool first = true;
    for (const Instruction* p : comp.parameters()) {
      if (!p) continue;
      if (!first) out->append(", ");
      first = false;
      StrAppend(out, NeedsSigil(p->name()) ? "%" : "", p->name(), ": ");
      AppendShape(p->shape(), false, out);
    }
    out->append(") -> ");
    if (comp.root()) AppendShape(comp.root()->shape(), false, out);
    out->append(" {\n");
  } else {
    StrAppend(out, NeedsSigil(comp.name()) ? "%" : "", comp.name(), " {\n");
  }
  InstructionPrinter printer(options, out);
  for (const Instruction* instr : comp.instructions()) {
    out->append("  ");
    printer.Print(*instr);
    out->push_back('\n');
  }
  out->push_back('}');
  if (!comp.execution_thread().empty()) {
    StrAppend(out, ", execution_thread=", QuoteString(comp.execution_thread()));
  }
  if (options.print_name_after_closing_brace && comp.instructions().size() > 5) {
    StrAppend(out, " // ", comp.name());
  }
}

}  // namespace

std::string QuoteString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  AppendQuoted(s, &out);
  return out;
}

void AppendShape(const Shape& shape, bool print_layout, std::string* out) {
  if (shape.IsTuple()) {
    out->push_back('(');
    for (int i = 0; i < shape.tuple_count(); ++i) {
      if (i) out->append(", ");
      if (i > 0 && i % 5 == 0) StrAppend(out, "/*index=", i, "*/");
      AppendShape(shape.tuple_shape(i), print_layout, out);
    }
    out->push_back(')');
    return;
  }
  if (shape.IsBuffer()) {
    out->append("b(");
    if (shape.tuple_count() == 1) AppendShape(shape.tuple_shape(0), print_layout, out);
    out->push_back(')');
    return;
  }
  out->append(PrimitiveTypeName(shape.element_type()));
  out->push_back('[');
  for (int i = 0; i < shape.rank(); ++i) {
    if (i) out->push_back(',');
    if (shape.is_unbounded_dimension(i)) {
      out->push_back('?');
      continue;
    }
    if (shape.is_dynamic_dimension(i)) out->append("<=");
    AppendInt(shape.dimension(i), out);
  }
  out->push_back(']');
  if (print_layout && shape.has_layout()) {
    const Layout& layout = shape.layout();
    // Like XLA, a scalar's empty layout is not printed: XLA's parser takes no `{}` there.
    if (shape.rank() != 0 || !layout.minor_to_major.empty() || !layout.HasOnlyMinorToMajor()) {
      AppendLayout(layout, out);
    }
  }
}

std::string PrintShape(const Shape& shape, bool print_layout) {
  std::string s;
  AppendShape(shape, print_layout, &s);
  return s;
}

void AppendLayout(const Layout& l, std::string* out) {
  out->push_back('{');
  for (size_t i = 0; i < l.minor_to_major.size(); ++i) {
    if (i) out->push_back(',');
    AppendInt(l.minor_to_major[i], out);
  }
  if (!l.HasOnlyMinorToMajor()) {
    out->push_back(':');
    if (!l.dim_levels.empty()) {
      out->append("D(");
      for (size_t i = 0; i < l.dim_levels.size(); ++i) {
        static constexpr char kTypes[] = {'D', 'C', 'S', 'H'};
        const DimLevel& level = l.dim_levels[i];
        if (i) out->push_back(',');
        out->push_back(kTypes[static_cast<int>(level.type)]);
        if (!level.unique) out->push_back('+');
        if (!level.ordered) out->push_back('~');
      }
      out->push_back(')');
    }
    if (!l.tiles.empty()) {
      out->push_back('T');
      for (const Tile& t : l.tiles) {
        out->push_back('(');
        for (size_t i = 0; i < t.dimensions.size(); ++i) {
          if (i) out->push_back(',');
          if (t.dimensions[i] == Tile::kCombineDimension) {
            out->push_back('*');
          } else {
            AppendInt(t.dimensions[i], out);
          }
        }
        out->push_back(')');
      }
    }
    if (l.tail_padding_alignment_in_elements != 1) {
      StrAppend(out, "L(", l.tail_padding_alignment_in_elements, ")");
    }
    if (l.index_primitive_type != PrimitiveType::kInvalid) {
      StrAppend(out, "#(", PrimitiveTypeName(l.index_primitive_type), ")");
    }
    if (l.pointer_primitive_type != PrimitiveType::kInvalid) {
      StrAppend(out, "*(", PrimitiveTypeName(l.pointer_primitive_type), ")");
    }
    if (l.element_size_in_bits != 0) StrAppend(out, "E(", l.element_size_in_bits, ")");
    if (l.memory_space != 0) StrAppend(out, "S(", l.memory_space, ")");
    if (!l.split_configs.empty()) {
      out->append("SC");
      for (const SplitConfig& c : l.split_configs) {
        StrAppend(out, "(", c.dimension, ":", absl::StrJoin(c.split_indices, ","), ")");
      }
    }
    if (l.physical_shape) {
      out->append("P(");
      AppendShape(*l.physical_shape, true, out);
      out->push_back(')');
    }
    if (l.dynamic_shape_metadata_prefix_bytes != 0) {
      StrAppend(out, "M(", l.dynamic_shape_metadata_prefix_bytes, ")");
    }
  }
  out->push_back('}');
}

std::string PrintLayout(const Layout& l) {
  std::string s;
  AppendLayout(l, &s);
  return s;
}

std::string PrintLiteralData(const Literal& literal) {
  std::string s;
  AppendLiteralData(literal, &s);
  return s;
}

std::string PrintShapedLiteral(const Literal& literal) {
  return StrCat(PrintShape(literal.shape()), " ", PrintLiteralData(literal));
}

namespace {

void AppendLiteralAsXla(const Literal& lit, std::string* out) {
  const Shape& shape = lit.shape();
  if (shape.IsTuple()) {
    out->append("(\n");
    for (size_t i = 0; i < lit.tuple_elements().size(); ++i) {
      if (i) out->append(",\n");
      AppendLiteralAsXla(lit.tuple_elements()[i], out);
    }
    out->append("\n)");
    return;
  }
  if (shape.element_type() == PrimitiveType::kToken) {
    out->append("token");
    return;
  }
  if (!shape.IsArray()) return;
  AppendShape(shape, /*print_layout=*/false, out);
  out->push_back(' ');
  if (lit.elided()) {
    out->append("{...}");
    return;
  }
  const int rank = shape.rank();
  if (rank == 0) {
    AppendElement(lit, 0, /*scalar=*/true, out);
    return;
  }
  int64_t linear = 0;
  std::vector<int64_t> index;  // the indices of the enclosing dimensions
  auto print_dim = [&](auto&& self, int dim) -> void {
    const int64_t n = shape.dimension(dim);
    const int remaining = rank - dim;
    // Opening brace.
    if (rank == 1) {
      out->push_back('{');
    } else if (remaining == 1) {
      out->append(n <= 1 ? "  {" : "  { ");
    } else if (rank > 3 && !index.empty()) {
      StrAppend(out, "{ /*i", index.size() - 1, "=", index.back(), "*/\n");
    } else {
      out->append("{\n");
    }
    for (int64_t i = 0; i < n; ++i) {
      if (remaining == 1) {
        AppendElement(lit, linear++, /*scalar=*/false, out);
      } else {
        index.push_back(i);
        self(self, dim + 1);
        index.pop_back();
      }
      if (i + 1 < n) out->append(remaining > 1 ? ",\n" : ", ");
    }
    // Closing brace.
    if (rank == 1) {
      out->push_back('}');
    } else if (remaining == 1) {
      out->append(n <= 1 ? "}" : " }");
    } else {
      out->append("\n}");
    }
  };
  print_dim(print_dim, 0);
}

}  // namespace

std::string PrintLiteralAsXla(const Literal& literal) {
  std::string s;
  AppendLiteralAsXla(literal, &s);
  return s;
}

std::string PrintSharding(const Sharding& sharding) {
  std::string s;
  AppendShardingText(sharding, &s);
  return s;
}

void AppendMetadata(const OpMetadata& m, std::string* out) {
  out->push_back('{');
  bool first = true;
  auto key = [&](std::string_view k) {
    if (!first) out->push_back(' ');
    first = false;
    out->append(k);
  };
  auto quoted = [&](std::string_view k, const std::string& v) {
    if (v.empty()) return;
    key(k);
    AppendQuoted(v, out);
  };
  auto number = [&](std::string_view k, int64_t v) {
    if (v == 0) return;
    key(k);
    AppendInt(v, out);
  };
  quoted("op_type=", m.op_type);
  quoted("op_name=", m.op_name);
  quoted("source_file=", m.source_file);
  number("source_line=", m.source_line);
  number("source_end_line=", m.source_end_line);
  number("source_column=", m.source_column);
  number("source_end_column=", m.source_end_column);
  if (!m.profile_type.empty()) {
    key("profile_type=");
    AppendIntList(m.profile_type, out);
  }
  quoted("deduplicated_name=", m.deduplicated_name);
  if (m.preserve_layout) key("preserve_layout=true");
  quoted("scheduling_name=", m.scheduling_name);
  number("stack_frame_id=", m.stack_frame_id);
  out->push_back('}');
}

std::string PrintMetadata(const OpMetadata& m) {
  std::string s;
  AppendMetadata(m, &s);
  return s;
}

std::string InstructionSignature(const Instruction& instr) {
  PrintOptions options = PrintOptions::Short();
  options.print_metadata = false;
  options.print_references = false;
  std::string s;
  InstructionPrinter(options, &s).PrintSignature(instr);
  return s;
}

std::string InstructionAttributeSignature(const Instruction& instr) {
  PrintOptions options = PrintOptions::Short();
  options.print_metadata = false;
  options.print_references = false;
  std::string s;
  InstructionPrinter(options, &s).PrintPayloadAndAttributes(instr);
  return s;
}

std::string PrintInstruction(const Instruction& instr, const PrintOptions& options) {
  std::string s;
  InstructionPrinter(options, &s).Print(instr);
  return s;
}

std::string PrintComputation(const Computation& comp, const PrintOptions& options) {
  std::string s;
  AppendComputation(comp, options, &s);
  return s;
}

std::vector<const Instruction*> XlaInstructionPostOrder(const Computation& comp) {
  const auto& instrs = comp.instructions();
  absl::flat_hash_set<const Instruction*> has_user;
  for (const Instruction* instr : instrs) {
    for (const Instruction* op : instr->operands()) has_user.insert(op);
  }
  enum State : uint8_t { kNew, kVisiting, kVisited };
  absl::flat_hash_map<const Instruction*, State> state;
  state.reserve(instrs.size());
  std::vector<const Instruction*> order;
  order.reserve(instrs.size());
  std::vector<const Instruction*> stack;
  auto push = [&](const Instruction* i) {
    auto it = state.find(i);
    if (it == state.end() || it->second != kVisited) stack.push_back(i);
  };
  for (const Instruction* root : instrs) {
    if (has_user.contains(root)) continue;
    push(root);
    while (!stack.empty()) {
      const Instruction* current = stack.back();
      State& st = state.try_emplace(current, kNew).first->second;
      if (st != kNew) {
        stack.pop_back();
        if (st != kVisited) {
          st = kVisited;
          order.push_back(current);
        }
        continue;
      }
      st = kVisiting;
      const auto& ops = current->operands();
      for (auto it = ops.rbegin(); it != ops.rend(); ++it) push(*it);
      for (const Instruction* p : current->control_predecessors()) push(p);
    }
  }
  // Instructions on a cycle never finish; keep them rather than lose them.
  if (order.size() != instrs.size()) {
    absl::flat_hash_set<const Instruction*> placed(order.begin(), order.end());
    for (const Instruction* instr : instrs) {
      if (!placed.contains(instr)) order.push_back(instr);
    }
  }
  return order;
}

namespace {

// XLA's called-computation order: a while's body before its condition.
std::vector<const Computation*> CalledInXlaOrder(const Instruction& instr) {
  std::vector<const Computation*> called;
  for (const Computation* c : instr.called_computations()) called.push_back(c);
  if (instr.opcode() == Opcode::kWhile && called.size() == 2) std::swap(called[0], called[1]);
  return called;
}

// HloComputation::MakeEmbeddedComputationsList: the computations `comp` calls, directly or
// not, each after the ones it calls, walking instructions in the computation's order.
void AppendEmbedded(const Computation& comp, absl::flat_hash_set<const Computation*>* visited,
                    std::vector<const Computation*>* out) {
  struct Frame {
    const Computation* comp;
    size_t next;
  };
  std::vector<Frame> stack;
  auto push_called = [&](const Instruction& instr) {
    std::vector<const Computation*> called = CalledInXlaOrder(instr);
    for (auto it = called.rbegin(); it != called.rend(); ++it) {
      if (*it != nullptr && visited->insert(*it).second) stack.push_back({*it, 0});
    }
  };
  for (const Instruction* instr : comp.instructions()) {
    push_called(*instr);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.comp->instructions().size()) {
        out->push_back(top.comp);
        stack.pop_back();
        continue;
      }
      const Instruction* next = top.comp->instructions()[top.next++];
      push_called(*next);
    }
  }
}

}  // namespace

std::vector<const Computation*> XlaComputationPostOrder(const Module& module) {
  absl::flat_hash_set<const Computation*> called;
  for (const auto& comp : module.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      for (const Computation* c : instr->called_computations()) called.insert(c);
    }
  }
  absl::flat_hash_set<const Computation*> added;
  std::vector<const Computation*> order;
  for (const auto& comp : module.computations()) {
    if (called.contains(comp.get())) continue;
    std::vector<const Computation*> embedded;
    absl::flat_hash_set<const Computation*> visited;
    AppendEmbedded(*comp, &visited, &embedded);
    for (const Computation* e : embedded) {
      if (added.insert(e).second) order.push_back(e);
    }
    if (added.insert(comp.get()).second) order.push_back(comp.get());
  }
  // Computations only reachable through a cycle of calls: keep them too.
  for (const auto& comp : module.computations()) {
    if (added.insert(comp.get()).second) order.push_back(comp.get());
  }
  return order;
}

void AppendModule(const Module& module, const PrintOptions& options, std::string* out) {
  const ModuleConfig& c = module.config();
  const bool canonical = options.canonical != PrintOptions::Canonical::kNone;
  if (canonical && options.canonical == PrintOptions::Canonical::kFingerprint) {
    out->append("HloModule ");
  } else if (canonical) {
    StrAppend(out, "HloModule ", module.name());
  } else {
    StrAppend(out, "HloModule ", NeedsSigil(module.name()) ? "%" : "", module.name());
  }
  if (c.is_scheduled) out->append(", is_scheduled=true");
  if (c.has_input_output_alias) {
    std::vector<std::string> e;
    for (const InputOutputAlias& a : c.input_output_alias) {
      e.push_back(StrCat(ShapeIndexText(a.output_index), ": (", a.parameter_number, ", ",
                               ShapeIndexText(a.parameter_index), ", ",
                               a.must_alias ? "must-alias" : "may-alias", ")"));
    }
    StrAppend(out, ", input_output_alias={ ", absl::StrJoin(e, ", "), e.empty() ? "}" : " }");
  }
  if (c.has_buffer_donor) {
    std::vector<std::string> e;
    for (const BufferDonor& d : c.buffer_donors) {
      e.push_back(StrCat("(", d.parameter_number, ", ", ShapeIndexText(d.parameter_index), ")"));
    }
    StrAppend(out, ", buffer_donor={ ", absl::StrJoin(e, ", "), e.empty() ? "}" : " }");
  }
  if (c.alias_passthrough_params) out->append(", alias_passthrough_params=true");
  // XLA's parser always sets the entry layout, so the canonical forms always print it.
  std::optional<ProgramShape> computed_layout;
  if (canonical && !c.entry_computation_layout && module.entry() != nullptr) {
    computed_layout.emplace();
    for (const Instruction* p : module.entry()->parameters()) {
      if (p != nullptr) computed_layout->parameters.push_back(p->shape());
    }
    if (module.entry()->root() != nullptr) computed_layout->result = module.entry()->root()->shape();
  }
  const std::optional<ProgramShape>& entry_layout =
      c.entry_computation_layout ? c.entry_computation_layout : computed_layout;
  if (entry_layout) {
    out->append(", entry_computation_layout={(");
    const std::vector<Shape>& params = entry_layout->parameters;
    for (size_t i = 0; i < params.size(); ++i) {
      if (i) out->append(", ");
      if (i > 0 && i % 5 == 0) StrAppend(out, "/*index=", i, "*/");
      if (canonical) {
        AppendShapeWithDefaultLayout(params[i], out);
      } else {
        AppendShape(params[i], true, out);
      }
    }
    out->append(")->");
    if (canonical) {
      AppendShapeWithDefaultLayout(entry_layout->result, out);
    } else {
      AppendShape(entry_layout->result, true, out);
    }
    out->push_back('}');
  }
  // Always a brace list, as XLA prints them ("{true}" for one entry too).
  auto bools = [&](std::string_view name, const std::vector<bool>& v) {
    if (v.empty() || (v.size() == 1 && !v[0])) return;
    StrAppend(out, ", ", name, "=", BoolList(v));
  };
  bools("allow_spmd_sharding_propagation_to_parameters",
        c.allow_spmd_sharding_propagation_to_parameters);
  bools("allow_spmd_sharding_propagation_to_output", c.allow_spmd_sharding_propagation_to_output);
  if (c.replica_count != 1) StrAppend(out, ", replica_count=", c.replica_count);
  if (c.num_partitions != 1) StrAppend(out, ", num_partitions=", c.num_partitions);
  if (!c.frontend_attributes.entries.empty()) {
    StrAppend(out, ", frontend_attributes=", FrontendAttributesText(c.frontend_attributes));
  }
  if (!c.origin_recovery_table.empty()) {
    StrAppend(out, ", origin_recovery_table=", c.origin_recovery_table);
  }
  for (const auto& [name, value] : c.unknown) StrAppend(out, ", ", name, "=", value);
  out->push_back('\n');
  const StackFrameIndex& sf = module.stack_frames();
  if (!sf.empty() && !canonical) {  // the canonical forms carry no stack frames
    // Each table ends with a blank line, as XLA prints them.
    out->append("\nFileNames\n");
    for (size_t i = 0; i < sf.file_names.size(); ++i) {
      StrAppend(out, i + 1, " ", QuoteString(sf.file_names[i]), "\n");
    }
    out->append("\nFunctionNames\n");
    for (size_t i = 0; i < sf.function_names.size(); ++i) {
      StrAppend(out, i + 1, " ", QuoteString(sf.function_names[i]), "\n");
    }
    out->append("\nFileLocations\n");
    for (size_t i = 0; i < sf.file_locations.size(); ++i) {
      const FileLocation& l = sf.file_locations[i];
      StrAppend(out, i + 1, " {file_name_id=", l.file_name_id, " function_name_id=",
                      l.function_name_id, " line=", l.line, " end_line=", l.end_line,
                      " column=", l.column, " end_column=", l.end_column, "}\n");
    }
    out->append("\nStackFrames\n");
    for (size_t i = 0; i < sf.stack_frames.size(); ++i) {
      const StackFrame& f = sf.stack_frames[i];
      StrAppend(out, i + 1, " {file_location_id=", f.file_location_id,
                      " parent_frame_id=", f.parent_frame_id + 1, "}\n");
    }
    out->push_back('\n');
  }
  out->push_back('\n');
  // Computations that "<op>-start" sugar wraps are implied by the sugar, not printed.
  absl::flat_hash_set<const Computation*> implied;
  absl::flat_hash_set<const Computation*> called_otherwise;
  for (const auto& comp : module.computations()) {
    for (const Instruction* i : comp->instructions()) {
      const bool sugar = i->opcode() == Opcode::kAsyncStart && AsyncSugarWrapped(*i) != nullptr;
      for (const Computation* c : i->called_computations()) {
        (sugar ? implied : called_otherwise).insert(c);
      }
    }
  }
  if (canonical) {
    // The canonical form follows XLA's computation post order; the fingerprint form keeps the
    // module's own order, as XLA 0.10's printer does.
    std::vector<const Computation*> order;
    if (options.canonical == PrintOptions::Canonical::kFingerprint) {
      for (const auto& comp : module.computations()) order.push_back(comp.get());
    } else {
      order = XlaComputationPostOrder(module);
    }
    for (const Computation* comp : order) {
      if (implied.contains(comp) && !called_otherwise.contains(comp) && !comp->is_entry()) {
        continue;
      }
      if (comp->is_entry()) out->append("ENTRY ");
      AppendCanonicalComputation(*comp, options, 0, /*nested=*/false, out);
      out->append("\n\n");
    }
    return;
  }
  for (const auto& comp : module.computations()) {
    if (implied.contains(comp.get()) && !called_otherwise.contains(comp.get()) &&
        !comp->is_entry()) {
      continue;
    }
    AppendComputation(*comp, options, out);
    out->append("\n\n");
  }
}

std::string PrintModule(const Module& module, const PrintOptions& options) {
  std::string s;
  s.reserve(static_cast<size_t>(module.instruction_count()) * 96 + 256);
  AppendModule(module, options, &s);
  return s;
}

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

// For an instruction line ("  [ROOT ]name = shape opcode(operands)..."): the position of the
// parenthesis that opens its operands, npos when the line is not an instruction or is a
// constant or parameter (whose parentheses hold no operands).
size_t OperandListOpen(std::string_view line) {
  size_t eq = line.find(" = ");
  if (eq == std::string_view::npos) return std::string_view::npos;
  size_t i = eq + 3;
  // Skip the result shape: a tuple's balanced parentheses, else up to the space.
  if (i < line.size() && line[i] == '(') {
    int depth = 0;
    for (; i < line.size(); ++i) {
      if (line[i] == '(') ++depth;
      if (line[i] == ')' && --depth == 0) {
        ++i;
        break;
      }
    }
  } else {
    while (i < line.size() && line[i] != ' ') ++i;
  }
  while (i < line.size() && line[i] == ' ') ++i;
  size_t open = i;
  while (open < line.size() && (IsNameChar(line[open]))) ++open;
  if (open >= line.size() || line[open] != '(') return std::string_view::npos;
  std::string_view opcode = line.substr(i, open - i);
  if (opcode == "constant" || opcode == "parameter") return std::string_view::npos;
  return open;
}

// 1 when the line's first operand carries a shape, 0 when it is a bare name, -1 when the line
// does not tell (no operands, a constant or parameter, or not an instruction).
int OperandShapeEvidence(std::string_view line) {
  const size_t open = OperandListOpen(line);
  if (open == std::string_view::npos) return -1;
  size_t k = open + 1;
  if (k < line.size() && line[k] == ')') return -1;
  if (line.substr(k, 2) == "/*") return -1;
  if (k < line.size() && line[k] == '(') return 1;  // a tuple-shaped operand
  if (k < line.size() && line[k] == '%') return 0;
  size_t end = k;
  while (end < line.size() && IsNameChar(line[end])) ++end;
  if (end < line.size() && line[end] == '[') return 1;  // "f32[4]{0} %a"
  return 0;
}

// For an instruction with six or more operands: 1 when its sixth operand is marked
// `/*index=5*/`, 0 when it is not; -1 when the line does not tell.
int OperandIndexEvidence(std::string_view line) {
  const size_t open = OperandListOpen(line);
  if (open == std::string_view::npos) return -1;
  int depth = 0;
  int commas = 0;
  for (size_t k = open + 1; k < line.size(); ++k) {
    const char c = line[k];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      if (depth == 0) return -1;  // the list closed before a sixth operand
      --depth;
    } else if (c == '"') {
      return -1;
    } else if (c == ',' && depth == 0 && ++commas == 5) {
      size_t n = k + 1;
      while (n < line.size() && line[n] == ' ') ++n;
      return line.substr(n, 11) == "/*index=5*/" ? 1 : 0;
    }
  }
  return -1;
}

}  // namespace

PrintOptions DetectPrintOptions(std::string_view text) {
  PrintOptions options = PrintOptions::Long();
  bool form_known = false;
  bool shapes_known = false;
  bool index_known = false;
  bool brace_known = false;
  size_t pos = 0;
  while (pos < text.size() && !(form_known && shapes_known && index_known && brace_known)) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    if (line[0] != ' ' && !form_known && line.back() == '{' && line.rfind("HloModule", 0) != 0) {
      // A computation header: "[ENTRY ]%name (p: f32[]) -> f32[] {" or "[ENTRY ]name {".
      std::string_view h = line;
      if (h.rfind("ENTRY ", 0) == 0) h.remove_prefix(6);
      const bool long_form = (!h.empty() && h[0] == '%') || h.find(" -> ") != std::string_view::npos;
      options.form = long_form ? PrintOptions::Form::kLong : PrintOptions::Form::kShort;
      if (!long_form) {
        options.print_operand_shape = false;
        options.print_operand_index = false;
        shapes_known = true;
      }
      form_known = true;
      continue;
    }
    if (line[0] == '}' && !brace_known) {
      // Older XLA wrote "} // name" after computations of more than five instructions.
      if (line.find(" // ") != std::string_view::npos) {
        options.print_name_after_closing_brace = true;
        brace_known = true;
      }
      continue;
    }
    if (line.rfind("  ", 0) == 0 && form_known) {
      if (!shapes_known) {
        const int evidence = OperandShapeEvidence(line);
        if (evidence >= 0) {
          options.print_operand_shape = evidence == 1;
          shapes_known = true;
        }
      }
      if (!index_known) {
        const int evidence = OperandIndexEvidence(line);
        if (evidence >= 0) {
          options.print_operand_index = evidence == 1;
          index_known = true;
        }
      }
    }
  }
  return options;
}

}  // namespace hlowb
