#include "core/analysis/shape_inference.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/dot_sparsity.h"
#include "core/ir/module.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

using PT = PrimitiveType;

constexpr int64_t kUnbounded = Shape::kUnboundedSize;

#define SI_RETURN_IF_ERROR(expr)           \
  do {                                     \
    absl::Status si_status = (expr);       \
    if (!si_status.ok()) return si_status; \
  } while (0)

#define SI_CONCAT_INNER(a, b) a##b
#define SI_CONCAT(a, b) SI_CONCAT_INNER(a, b)
#define SI_ASSIGN_OR_RETURN(lhs, expr) \
  SI_ASSIGN_OR_RETURN_IMPL(SI_CONCAT(si_statusor_, __LINE__), lhs, expr)
#define SI_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = *std::move(tmp)

std::string Str(const Shape& s) { return PrintShape(s, /*print_layout=*/false); }

std::string Str(const std::vector<int64_t>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) StrAppend(&out, i ? "," : "", v[i]);
  out += "}";
  return out;
}

std::string TypeName(PT t) { return std::string(PrimitiveTypeName(t)); }

absl::Status Invalid(std::string msg) { return absl::InvalidArgumentError(std::move(msg)); }
absl::Status Unimpl(std::string msg) { return absl::UnimplementedError(std::move(msg)); }

bool CheckedAdd(int64_t a, int64_t b, int64_t* out) { return !__builtin_add_overflow(a, b, out); }
bool CheckedMul(int64_t a, int64_t b, int64_t* out) { return !__builtin_mul_overflow(a, b, out); }

// Unbounded (`?`) sizes match any size, as in XLA's unbounded-dynamism rules.
bool DimsMatch(int64_t a, int64_t b) { return a == b || a == kUnbounded || b == kUnbounded; }

bool SameDimensionSizes(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int i = 0; i < a.rank(); ++i) {
    if (!DimsMatch(a.dimension(i), b.dimension(i))) return false;
  }
  return true;
}

bool HasUnboundedDim(const Shape& s) {
  for (int64_t d : s.dimensions()) {
    if (d == kUnbounded) return true;
  }
  return false;
}

bool SameTypeIgnoringFp(PT a, PT b) { return a == b || (IsFloatingPoint(a) && IsFloatingPoint(b)); }

// XLA keeps the wider floating-point type when mixed precisions meet.
PT HigherPrecision(PT a, PT b) {
  if (a == b || !IsFloatingPoint(a) || !IsFloatingPoint(b)) return a;
  return BitWidth(b) > BitWidth(a) ? b : a;
}

std::vector<bool> DynamicFlags(const Shape& s) {
  std::vector<bool> v(s.rank());
  for (int i = 0; i < s.rank(); ++i) v[i] = s.is_dynamic_dimension(i);
  return v;
}

Shape MakeArray(PT type, std::vector<int64_t> dims, const std::vector<bool>& dynamic = {}) {
  Shape s = Shape::Array(type, std::move(dims));
  for (size_t i = 0; i < dynamic.size() && static_cast<int>(i) < s.rank(); ++i) {
    if (dynamic[i]) s.set_dynamic_dimension(static_cast<int>(i), true);
  }
  return s;
}

// Same dimensions (and dynamic flags) as `s`, another element type, no layout.
Shape WithType(const Shape& s, PT type) { return MakeArray(type, s.dimensions(), DynamicFlags(s)); }

Shape Scalar(PT type) { return Shape::Array(type, {}); }

bool IsScalarOf(const Shape& s, PT type) { return s.IsScalar() && s.element_type() == type; }

bool CompatibleImpl(const Shape& a, const Shape& b, bool ignore_fp) {
  if (a.IsTuple() || b.IsTuple() || a.IsBuffer() || b.IsBuffer()) {
    if (a.element_type() != b.element_type() || a.tuple_count() != b.tuple_count()) return false;
    for (int i = 0; i < a.tuple_count(); ++i) {
      if (!CompatibleImpl(a.tuple_shape(i), b.tuple_shape(i), ignore_fp)) return false;
    }
    return true;
  }
  if (a.element_type() != b.element_type() &&
      !(ignore_fp && IsFloatingPoint(a.element_type()) && IsFloatingPoint(b.element_type()))) {
    return false;
  }
  return a.dimensions() == b.dimensions();
}

absl::Status ValidateShapeImpl(const Shape& s, int depth, bool check_layout) {
  if (depth > 1000) return Invalid("shape nests too deeply");
  const PT t = s.element_type();
  if (t == PT::kInvalid || !IsValidPrimitiveTypeNumber(static_cast<int32_t>(t))) {
    return Invalid("shape has no valid element type");
  }
  if (s.IsTuple()) {
    if (s.rank() != 0) return Invalid("a tuple shape cannot have dimensions");
    for (const Shape& e : s.tuple_shapes()) {
      SI_RETURN_IF_ERROR(ValidateShapeImpl(e, depth + 1, check_layout));
    }
    return absl::OkStatus();
  }
  if (s.IsBuffer()) {
    if (s.tuple_count() != 1 || !s.tuple_shape(0).IsArray()) {
      return Invalid("a buffer shape must wrap one array shape");
    }
    return ValidateShapeImpl(s.tuple_shape(0), depth + 1, check_layout);
  }
  if (!s.tuple_shapes().empty()) return Invalid("a non-tuple shape has tuple elements");
  if (!s.IsArray()) {
    if (s.rank() != 0) return Invalid(StrCat(TypeName(t), " shapes have no dimensions"));
    return absl::OkStatus();
  }
  for (int i = 0; i < s.rank(); ++i) {
    if (s.dimension(i) < 0 && s.dimension(i) != kUnbounded) {
      return Invalid(StrCat("dimension ", i, " of ", Str(s), " is negative"));
    }
  }
  if (check_layout && s.has_layout() && !s.layout().minor_to_major.empty()) {
    const std::vector<int64_t>& m2m = s.layout().minor_to_major;
    std::vector<bool> seen(s.rank(), false);
    bool ok = static_cast<int>(m2m.size()) == s.rank();
    for (size_t i = 0; ok && i < m2m.size(); ++i) {
      ok = m2m[i] >= 0 && m2m[i] < s.rank() && !seen[m2m[i]];
      if (ok) seen[m2m[i]] = true;
    }
    if (!ok) {
      return Invalid(StrCat("layout ", Str(m2m), " of ", Str(s), " is not a permutation of 0..",
                            s.rank() - 1));
    }
  }
  return absl::OkStatus();
}

// Checks that every entry of `dims` is in [0, bound) and appears once; with `sorted`, also
// that they ascend. `what` names the list in messages ("offset_dims of gather").
absl::Status CheckDimList(const std::vector<int64_t>& dims, int64_t bound, bool sorted,
                          std::string_view what) {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(bound, 0)), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i];
    if (d < 0 || d >= bound) {
      return Invalid(StrCat(what, " ", Str(dims), " contains ", d, ", which is out of range [0, ",
                            bound, ")"));
    }
    if (seen[d]) return Invalid(StrCat(what, " ", Str(dims), " lists dimension ", d, " twice"));
    seen[d] = true;
    if (sorted && i > 0 && dims[i - 1] > d) {
      return Invalid(StrCat(what, " ", Str(dims), " must be sorted"));
    }
  }
  return absl::OkStatus();
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Output size of one window dimension (XLA's InferWindowOutputShape), with checked arithmetic.
absl::StatusOr<int64_t> WindowOutputSize(int64_t base, const WindowDimension& w, int dim,
                                         std::string_view op) {
  if (w.size <= 0) {
    return Invalid(StrCat("window size in dimension ", dim, " of ", op, " is ", w.size,
                          "; it must be positive"));
  }
  if (w.stride <= 0) {
    return Invalid(StrCat("window stride in dimension ", dim, " of ", op, " is ", w.stride,
                          "; it must be positive"));
  }
  if (w.base_dilation < 1 || w.window_dilation < 1) {
    return Invalid(StrCat("window dilation in dimension ", dim, " of ", op, " must be at least 1"));
  }
  if (base == kUnbounded) return Unimpl(StrCat(op, " over an unbounded dimension"));
  auto overflow = [&] {
    return Invalid(StrCat("window arithmetic in dimension ", dim, " of ", op, " overflows"));
  };
  int64_t dilated_base = 0;
  if (base > 0) {
    if (!CheckedMul(base - 1, w.base_dilation, &dilated_base) ||
        !CheckedAdd(dilated_base, 1, &dilated_base)) {
      return overflow();
    }
  }
  int64_t padded;
  if (!CheckedAdd(w.padding_low, dilated_base, &padded) ||
      !CheckedAdd(padded, w.padding_high, &padded)) {
    return overflow();
  }
  int64_t dilated_window;
  if (!CheckedMul(w.size - 1, w.window_dilation, &dilated_window) ||
      !CheckedAdd(dilated_window, 1, &dilated_window)) {
    return overflow();
  }
  if (dilated_window > padded) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

struct Signature {
  std::string name;
  std::vector<const Shape*> params;
  const Shape* result = nullptr;
};

absl::StatusOr<Signature> GetSignature(const Computation& c) {
  Signature sig;
  sig.name = c.name();
  for (int i = 0; i < c.parameter_count(); ++i) {
    const Instruction* p = c.parameter(i);
    if (p == nullptr) {
      return Invalid(StrCat("computation ", c.name(), " has no parameter(", i,
                            ") but has parameter(", c.parameter_count() - 1, ")"));
    }
    if (!HasDeclaredShape(*p)) {
      return Unimpl(StrCat("parameter ", i, " of computation ", c.name(), " has no known shape"));
    }
    sig.params.push_back(&p->shape());
  }
  if (c.root() == nullptr) return Invalid(StrCat("computation ", c.name(), " has no root"));
  if (!HasDeclaredShape(*c.root())) {
    return Unimpl(StrCat("the root of computation ", c.name(), " has no known shape"));
  }
  sig.result = &c.root()->shape();
  return sig;
}

class Inferrer {
 public:
  explicit Inferrer(const Instruction& instr) : instr_(instr), op_(OpcodeName(instr.opcode())) {}

  absl::StatusOr<Shape> Run();

 private:
  const Shape& operand(int i) const { return instr_.operand(i)->shape(); }
  int count() const { return instr_.operand_count(); }
  const InstructionAttrs& attrs() const { return instr_.attrs_or_default(); }
  const Shape* declared() const { return HasDeclaredShape(instr_) ? &instr_.shape() : nullptr; }
  absl::Status NeedDeclared(std::string_view what) const {
    return Unimpl(StrCat("the ", what, " of ", op_,
                         " cannot be inferred; it comes from the declared result shape"));
  }

  absl::Status CheckOperands() const;
  absl::Status ExpectCount(int n) const;
  absl::Status ExpectAtLeast(int n) const;
  absl::Status ExpectArray(int i) const;
  absl::Status ExpectToken(int i) const;
  absl::Status ExpectIntegralScalarIndices(int first, int last, std::string_view what) const;
  absl::StatusOr<const Computation*> Called(size_t i, std::string_view role) const;
  absl::StatusOr<int64_t> SingleDimension() const;
  std::optional<int64_t> GroupSize() const;
  absl::Status VerifyReducer(const Signature& sig, const std::vector<const Shape*>& inits,
                             const std::vector<PT>& input_types, std::string_view role) const;
  absl::StatusOr<PT> ResultTypeFor(PT from_operands) const;
  absl::StatusOr<Shape> DotLike(const Shape& lhs, const Shape& rhs, const DotDimensionNumbers& d,
                                int64_t rhs_group_dim) const;
  absl::StatusOr<Shape> WindowShape(const Shape& base, const Window& window, PT type) const;

  absl::StatusOr<Shape> Unary();
  absl::StatusOr<Shape> Binary();
  absl::StatusOr<Shape> Compare();
  absl::StatusOr<Shape> Select();
  absl::StatusOr<Shape> Clamp();
  absl::StatusOr<Shape> Convert();
  absl::StatusOr<Shape> BitcastConvert();
  absl::StatusOr<Shape> StochasticConvert();
  absl::StatusOr<Shape> ReducePrecision();
  absl::StatusOr<Shape> Constant();
  absl::StatusOr<Shape> Iota();
  absl::StatusOr<Shape> Broadcast();
  absl::StatusOr<Shape> Reshape();
  absl::StatusOr<Shape> DynamicReshape();
  absl::StatusOr<Shape> Transpose();
  absl::StatusOr<Shape> Slice();
  absl::StatusOr<Shape> DynamicSlice();
  absl::StatusOr<Shape> DynamicUpdateSlice();
  absl::StatusOr<Shape> Concatenate();
  absl::StatusOr<Shape> Pad();
  absl::StatusOr<Shape> Reverse();
  absl::StatusOr<Shape> Gather();
  absl::StatusOr<Shape> Scatter();
  absl::StatusOr<Shape> Reduce();
  absl::StatusOr<Shape> ReduceWindow();
  absl::StatusOr<Shape> SelectAndScatter();
  absl::StatusOr<Shape> Dot();
  absl::StatusOr<Shape> RaggedDot();
  absl::StatusOr<Shape> ScaledDot();
  absl::StatusOr<Shape> Convolution();
  absl::StatusOr<Shape> Fft();
  absl::StatusOr<Shape> TriangularSolve();
  absl::StatusOr<Shape> Cholesky();
  absl::StatusOr<Shape> Sort();
  absl::StatusOr<Shape> TopK();
  absl::StatusOr<Shape> Tuple();
  absl::StatusOr<Shape> GetTupleElement();
  absl::StatusOr<Shape> While();
  absl::StatusOr<Shape> Conditional();
  absl::StatusOr<Shape> Call();
  absl::StatusOr<Shape> Map();
  absl::StatusOr<Shape> Fusion();
  absl::StatusOr<Shape> AllReduce();
  absl::StatusOr<Shape> AllGather(bool start);
  absl::StatusOr<Shape> ReduceScatter();
  absl::StatusOr<Shape> AllToAll();
  absl::StatusOr<Shape> CollectivePermute(bool start);
  absl::StatusOr<Shape> TupleElementOfOperand(int64_t index, std::string_view what);
  absl::StatusOr<Shape> AsyncStart();
  absl::StatusOr<Shape> AsyncUpdate();
  absl::StatusOr<Shape> CopyStart();
  absl::StatusOr<Shape> CopyDone();
  absl::StatusOr<Shape> Send();
  absl::StatusOr<Shape> Recv();
  absl::StatusOr<Shape> RecvDone();
  absl::StatusOr<Shape> Infeed();
  absl::StatusOr<Shape> Outfeed();
  absl::StatusOr<Shape> AfterAll();
  absl::StatusOr<Shape> AddDependency();
  absl::StatusOr<Shape> GetDimensionSize();
  absl::StatusOr<Shape> SetDimensionSize();
  absl::StatusOr<Shape> Rng();
  absl::StatusOr<Shape> RngBitGenerator();
  absl::StatusOr<Shape> BatchNorm();

  const Instruction& instr_;
  const std::string op_;
};

absl::Status Inferrer::CheckOperands() const {
  for (int i = 0; i < count(); ++i) {
    const Instruction* o = instr_.operand(i);
    if (o == nullptr) return Invalid(StrCat("operand ", i, " of ", op_, " is missing"));
    if (!HasDeclaredShape(*o)) {
      return Unimpl(StrCat("operand ", i, " of ", op_, " (", o->name(), ") has no known shape"));
    }
    // A malformed operand shape is the operand's fault (and reported there); layouts do not
    // matter to inference.
    absl::Status s = ValidateShapeImpl(o->shape(), 0, /*check_layout=*/false);
    if (!s.ok()) {
      return Unimpl(StrCat("operand ", i, " of ", op_, " has an invalid shape: ", s.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status Inferrer::ExpectCount(int n) const {
  if (count() != n) {
    return Invalid(StrCat(op_, " takes ", n, " operand", n == 1 ? "" : "s", " but has ", count()));
  }
  return absl::OkStatus();
}

absl::Status Inferrer::ExpectAtLeast(int n) const {
  if (count() < n) {
    return Invalid(
        StrCat(op_, " takes at least ", n, " operand", n == 1 ? "" : "s", " but has ", count()));
  }
  return absl::OkStatus();
}

absl::Status Inferrer::ExpectArray(int i) const {
  if (!operand(i).IsArray()) {
    return Invalid(
        StrCat("operand ", i, " of ", op_, " must be an array but has shape ", Str(operand(i))));
  }
  return absl::OkStatus();
}

absl::Status Inferrer::ExpectToken(int i) const {
  if (!operand(i).IsToken()) {
    return Invalid(
        StrCat("operand ", i, " of ", op_, " must be a token but has shape ", Str(operand(i))));
  }
  return absl::OkStatus();
}

// Operands [first, last) must be integral scalars of one type (start indices).
absl::Status Inferrer::ExpectIntegralScalarIndices(int first, int last,
                                                   std::string_view what) const {
  for (int i = first; i < last; ++i) {
    const Shape& s = operand(i);
    if (!s.IsScalar() || !IsIntegral(s.element_type())) {
      return Invalid(StrCat("operand ", i, " of ", op_, " is a ", what,
                            " and must be an integral scalar, but has shape ", Str(s)));
    }
    if (s.element_type() != operand(first).element_type()) {
      return Invalid(StrCat("operand ", i, " of ", op_, " has shape ", Str(s), " but operand ",
                            first, " has ", Str(operand(first)),
                            "; all start indices must have the same type"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<const Computation*> Inferrer::Called(size_t i, std::string_view role) const {
  const auto& called = instr_.called_computations();
  if (i >= called.size() || called[i] == nullptr) {
    return Invalid(StrCat(op_, " needs ", role));
  }
  return called[i];
}

absl::StatusOr<int64_t> Inferrer::SingleDimension() const {
  if (instr_.dimensions().size() != 1) {
    return Invalid(StrCat(op_, " needs dimensions={d} with exactly one dimension, got ",
                          Str(instr_.dimensions())));
  }
  return instr_.dimensions()[0];
}

// The size of each replica group when the instruction or the module config determine it.
// Module counts of 1 are XLA's "not set" default, so they determine nothing (as in XLA's
// verifier, which then trusts the declared shape).
std::optional<int64_t> Inferrer::GroupSize() const {
  const InstructionAttrs& a = attrs();
  const Module* m = instr_.parent() ? instr_.parent()->parent() : nullptr;
  const int64_t replicas = m ? m->config().replica_count : 1;
  const int64_t partitions = m ? m->config().num_partitions : 1;
  // XLA's group modes. all-reduce, all-gather and reduce-scatter carry use_global_device_ids
  // as a plain bool (absent = false), so a channel id alone means cross-replica-and-partition
  // for them; for the other collectives it means cross-partition.
  const Opcode op = instr_.opcode();
  const bool has_global_ids_field =
      op == Opcode::kAllReduce || op == Opcode::kAllReduceStart || op == Opcode::kAllGather ||
      op == Opcode::kAllGatherStart || op == Opcode::kReduceScatter;
  std::optional<bool> global_ids = a.use_global_device_ids;
  if (has_global_ids_field && !global_ids) global_ids = false;
  enum class Mode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };
  Mode mode = !a.channel_id ? Mode::kCrossReplica
              : !global_ids  ? Mode::kCrossPartition
              : !*global_ids ? Mode::kCrossReplicaAndPartition
                             : Mode::kFlattenedId;
  std::optional<int64_t> listed;
  if (a.replica_groups) {
    if (a.replica_groups->mesh) {
      std::vector<std::vector<int64_t>> groups = a.replica_groups->mesh->Expanded();
      if (groups.empty()) return std::nullopt;
      listed = static_cast<int64_t>(groups[0].size());
    } else if (a.replica_groups->iota) {
      if (a.replica_groups->iota->dims.size() != 2) return std::nullopt;
      listed = a.replica_groups->iota->dims[1];
    } else if (!a.replica_groups->groups.empty()) {
      listed = static_cast<int64_t>(a.replica_groups->groups[0].size());
    }
  }
  int64_t size = 1;
  switch (mode) {
    case Mode::kCrossReplica:
      size = listed ? *listed : replicas;
      break;
    case Mode::kCrossPartition:
      size = listed ? *listed : partitions;
      break;
    case Mode::kCrossReplicaAndPartition:
      // Groups list replica ids; each spans every partition.
      if (!CheckedMul(listed ? *listed : replicas, partitions, &size)) return std::nullopt;
      break;
    case Mode::kFlattenedId:
      if (!listed) return std::nullopt;  // flattened ids need explicit groups
      size = *listed;
      break;
  }
  if (!m && !listed) return std::nullopt;
  if (size <= 1 && !listed) return std::nullopt;
  return size;
}

// XLA's VerifyReducerShape: `sig` must take (accumulators..., inputs...) scalars and return
// one scalar or a tuple of scalars per input.
absl::Status Inferrer::VerifyReducer(const Signature& sig, const std::vector<const Shape*>& inits,
                                     const std::vector<PT>& input_types,
                                     std::string_view role) const {
  const size_t n = input_types.size();
  const std::string who = StrCat(role, " computation ", sig.name, " of ", op_);
  if (sig.params.size() != 2 * n) {
    return Invalid(StrCat(who, " must take ", 2 * n, " parameters but takes ", sig.params.size()));
  }
  std::vector<const Shape*> acc;
  if (sig.result->IsArray()) {
    if (n != 1) {
      return Invalid(
          StrCat(who, " must return a tuple of ", n, " scalars but returns ", Str(*sig.result)));
    }
    acc.push_back(sig.result);
  } else if (sig.result->IsTuple() && static_cast<size_t>(sig.result->tuple_count()) == n) {
    for (const Shape& e : sig.result->tuple_shapes()) acc.push_back(&e);
  } else {
    return Invalid(StrCat(who, " must return ",
                          n == 1 ? "a scalar" : StrCat("a tuple of ", n, " scalars"),
                          " but returns ", Str(*sig.result)));
  }
  for (const Shape* a : acc) {
    if (!a->IsScalar()) {
      return Invalid(StrCat(who, " must return scalars but returns ", Str(*sig.result)));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (!ShapesCompatible(*acc[i], *sig.params[i])) {
      return Invalid(StrCat(who, ": parameter ", i, " has shape ", Str(*sig.params[i]),
                            " but the accumulator it receives has shape ", Str(*acc[i])));
    }
    if (i < inits.size() && !ShapesCompatibleIgnoringFpPrecision(*acc[i], *inits[i])) {
      return Invalid(StrCat("init value ", i, " of ", op_, " has shape ", Str(*inits[i]), " but ",
                            role, " computation ", sig.name, " accumulates ", Str(*acc[i])));
    }
    const Shape input_scalar = Scalar(input_types[i]);
    if (!ShapesCompatibleIgnoringFpPrecision(input_scalar, *sig.params[n + i])) {
      return Invalid(StrCat(who, ": parameter ", n + i, " has shape ", Str(*sig.params[n + i]),
                            " but the input elements are ", Str(input_scalar)));
    }
    if (!ShapesCompatibleIgnoringFpPrecision(*acc[i], *sig.params[n + i])) {
      return Invalid(StrCat(who, ": parameter ", n + i, " has shape ", Str(*sig.params[n + i]),
                            " but the accumulator has shape ", Str(*acc[i])));
    }
  }
  return absl::OkStatus();
}

// Dot and convolution accept a "preferred element type": the declared one wins.
absl::StatusOr<PT> Inferrer::ResultTypeFor(PT from_operands) const {
  const Shape* d = declared();
  if (d == nullptr) return from_operands;
  if (!d->IsArray()) {
    return Invalid(StrCat(op_, " produces an array but its declared shape is ", Str(*d)));
  }
  return d->element_type();
}

absl::StatusOr<Shape> Inferrer::WindowShape(const Shape& base, const Window& window,
                                            PT type) const {
  if (static_cast<int64_t>(window.size()) != base.rank()) {
    return Invalid(StrCat("the window of ", op_, " has ", window.size(),
                          " dimensions but its operand ", Str(base), " has rank ", base.rank()));
  }
  std::vector<int64_t> dims(base.rank());
  for (int i = 0; i < base.rank(); ++i) {
    SI_ASSIGN_OR_RETURN(dims[i], WindowOutputSize(base.dimension(i), window[i], i, op_));
  }
  return MakeArray(type, std::move(dims), DynamicFlags(base));
}

// ----------------------------------------------------------------------------------------------
// Elementwise

absl::StatusOr<Shape> Inferrer::Unary() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  const Shape& s = operand(0);
  const Opcode op = instr_.opcode();
  if (op == Opcode::kCopy) return s;
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const PT t = s.element_type();
  auto bad = [&](std::string_view want) {
    return Invalid(StrCat(op_, " needs ", want, " operand but operand 0 has shape ", Str(s)));
  };
  switch (op) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      if (!IsFloatingPoint(t)) return bad("a floating-point");
      return s;
    case Opcode::kReal:
    case Opcode::kImag:
      if (IsComplex(t)) return WithType(s, ComplexComponentType(t));
      if (IsFloatingPoint(t)) return s;
      return bad("a floating-point or complex");
    case Opcode::kAbs:
      if (IsComplex(t)) return WithType(s, ComplexComponentType(t));
      if (IsSignedIntegral(t) || IsFloatingPoint(t)) return s;
      return bad("a signed, floating-point or complex");
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      if (!IsIntegral(t)) return bad("an integral");
      return s;
    case Opcode::kNegate:
      if (!IsIntegral(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
        return bad("an integral, floating-point or complex");
      }
      return s;
    case Opcode::kSign:
      if (!IsSignedIntegral(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
        return bad("a signed, floating-point or complex");
      }
      return s;
    case Opcode::kNot:
      if (t != PT::kPred && !IsIntegral(t)) return bad("a pred or integral");
      return s;
    case Opcode::kIsFinite:
      if (!IsFloatingPoint(t)) return bad("a floating-point");
      return WithType(s, PT::kPred);
    default:
      // The transcendental functions (exp, log, tanh, ...).
      if (!IsFloatingPoint(t) && !IsComplex(t)) return bad("a floating-point or complex");
      return s;
  }
}

absl::StatusOr<Shape> Inferrer::Binary() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& a = operand(0);
  const Shape& b = operand(1);
  if (!SameTypeIgnoringFp(a.element_type(), b.element_type()) || !SameDimensionSizes(a, b)) {
    return Invalid(
        StrCat("operand 1 of ", op_, " has shape ", Str(b), " but operand 0 has ", Str(a)));
  }
  const PT t = a.element_type();
  switch (instr_.opcode()) {
    case Opcode::kSubtract:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
      if (t == PT::kPred) {
        return Invalid(StrCat(op_, " needs arithmetic operands but they have shape ", Str(a)));
      }
      break;
    case Opcode::kMulhi:
      if (!IsIntegral(t)) {
        return Invalid(StrCat(op_, " needs integral operands but they have shape ", Str(a)));
      }
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (t != PT::kPred && !IsIntegral(t)) {
        return Invalid(
            StrCat(op_, " needs pred or integral operands but they have shape ", Str(a)));
      }
      break;
    case Opcode::kComplex:
      if (a.element_type() == PT::kF32 && b.element_type() == PT::kF32) {
        return WithType(a, PT::kC64);
      }
      if (a.element_type() == PT::kF64 && b.element_type() == PT::kF64) {
        return WithType(a, PT::kC128);
      }
      return Invalid(
          StrCat(op_, " needs two f32 or two f64 operands, got ", Str(a), " and ", Str(b)));
    default:
      break;
  }
  Shape result = a;
  const PT wide = HigherPrecision(a.element_type(), b.element_type());
  if (wide != a.element_type()) result = WithType(a, wide);
  for (int i = 0; i < b.rank(); ++i) {
    if (b.is_dynamic_dimension(i)) result.set_dynamic_dimension(i, true);
  }
  return result;
}

absl::StatusOr<Shape> Inferrer::Compare() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& a = operand(0);
  const Shape& b = operand(1);
  if (!SameTypeIgnoringFp(a.element_type(), b.element_type()) || !SameDimensionSizes(a, b)) {
    return Invalid(
        StrCat("operand 1 of compare has shape ", Str(b), " but operand 0 has ", Str(a)));
  }
  Shape result = WithType(a, PT::kPred);
  for (int i = 0; i < b.rank(); ++i) {
    if (b.is_dynamic_dimension(i)) result.set_dynamic_dimension(i, true);
  }
  return result;
}

absl::StatusOr<Shape> Inferrer::Select() {
  SI_RETURN_IF_ERROR(ExpectCount(3));
  for (int i = 0; i < 3; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& pred = operand(0);
  const Shape& on_true = operand(1);
  const Shape& on_false = operand(2);
  if (pred.element_type() != PT::kPred) {
    return Invalid(
        StrCat("operand 0 of select must have element type pred but has shape ", Str(pred)));
  }
  if (!SameTypeIgnoringFp(on_true.element_type(), on_false.element_type()) ||
      !SameDimensionSizes(on_true, on_false)) {
    return Invalid(StrCat("operand 2 of select has shape ", Str(on_false), " but operand 1 has ",
                          Str(on_true)));
  }
  // A scalar predicate selects whole arrays; XLA accepts it.
  if (!pred.IsScalar() && !SameDimensionSizes(pred, on_true)) {
    return Invalid(StrCat("operand 0 of select has shape ", Str(pred),
                          " but must be a scalar or match operand 1 (", Str(on_true), ")"));
  }
  const PT wide = HigherPrecision(on_true.element_type(), on_false.element_type());
  return wide == on_true.element_type() ? on_true : WithType(on_true, wide);
}

absl::StatusOr<Shape> Inferrer::Clamp() {
  SI_RETURN_IF_ERROR(ExpectCount(3));
  for (int i = 0; i < 3; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& x = operand(1);
  for (int i : {0, 2}) {
    const Shape& bound = operand(i);
    // Scalar bounds apply to every element; XLA accepts them.
    if (!SameTypeIgnoringFp(bound.element_type(), x.element_type()) ||
        (!bound.IsScalar() && !SameDimensionSizes(bound, x))) {
      return Invalid(StrCat("operand ", i, " of clamp has shape ", Str(bound),
                            " but must be a scalar or match operand 1 (", Str(x), ")"));
    }
  }
  return x;
}

// ----------------------------------------------------------------------------------------------
// Conversions

absl::StatusOr<Shape> Inferrer::Convert() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("target element type");
  if (!d->IsArray()) {
    return Invalid(StrCat("convert produces an array but its declared shape is ", Str(*d)));
  }
  return WithType(operand(0), d->element_type());
}

absl::StatusOr<Shape> Inferrer::BitcastConvert() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("target element type");
  if (!d->IsArray()) {
    return Invalid(StrCat("bitcast-convert produces an array but its declared shape is ", Str(*d)));
  }
  const Shape& s = operand(0);
  const PT from = s.element_type();
  const PT to = d->element_type();
  if (IsComplex(from) != IsComplex(to)) {
    return Invalid(StrCat("bitcast-convert cannot convert between complex and real types (", Str(s),
                          " to ", TypeName(to), ")"));
  }
  const int in_bits = BitWidth(from);
  const int out_bits = BitWidth(to);
  if (in_bits <= 0 || out_bits <= 0 ||
      std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return Invalid(StrCat("bitcast-convert cannot convert ", TypeName(from), " to ", TypeName(to),
                          ": the bit widths do not divide"));
  }
  std::vector<int64_t> dims = s.dimensions();
  std::vector<bool> dynamic = DynamicFlags(s);
  if (in_bits > out_bits) {
    // Each element splits into `ratio` narrower ones along a new minor dimension.
    dims.push_back(in_bits / out_bits);
    dynamic.push_back(false);
  } else if (in_bits < out_bits) {
    const int64_t ratio = out_bits / in_bits;
    if (dims.empty() || dims.back() != ratio) {
      return Invalid(StrCat("bitcast-convert from ", Str(s), " to ", TypeName(to),
                            " needs a minor dimension of size ", ratio));
    }
    dims.pop_back();
    dynamic.pop_back();
  }
  return MakeArray(to, std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::StochasticConvert() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& s = operand(0);
  const Shape& random = operand(1);
  if (!IsFloatingPoint(s.element_type())) {
    return Invalid(StrCat("stochastic-convert needs a floating-point operand, got ", Str(s)));
  }
  if (!IsUnsignedIntegral(random.element_type()) ||
      BitWidth(random.element_type()) != BitWidth(s.element_type())) {
    return Invalid(StrCat("operand 1 of stochastic-convert must be unsigned with as many bits as ",
                          "operand 0 (", Str(s), ") but has shape ", Str(random)));
  }
  if (!SameDimensionSizes(s, random)) {
    return Invalid(StrCat("operand 1 of stochastic-convert has shape ", Str(random),
                          " but operand 0 has ", Str(s)));
  }
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("target element type");
  if (!d->IsArray()) {
    return Invalid(
        StrCat("stochastic-convert produces an array but its declared shape is ", Str(*d)));
  }
  return WithType(s, d->element_type());
}

absl::StatusOr<Shape> Inferrer::ReducePrecision() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  if (!IsFloatingPoint(s.element_type())) {
    return Invalid(StrCat("reduce-precision needs a floating-point operand, got ", Str(s)));
  }
  if (attrs().exponent_bits < 1) {
    return Invalid(
        StrCat("reduce-precision needs exponent_bits >= 1, got ", attrs().exponent_bits));
  }
  if (attrs().mantissa_bits < 0) {
    return Invalid(
        StrCat("reduce-precision needs mantissa_bits >= 0, got ", attrs().mantissa_bits));
  }
  return s;
}

// ----------------------------------------------------------------------------------------------
// Constants and shape manipulation

absl::StatusOr<Shape> Inferrer::Constant() {
  SI_RETURN_IF_ERROR(ExpectCount(0));
  if (instr_.literal() == nullptr) return NeedDeclared("shape");
  return instr_.literal()->shape();
}

absl::StatusOr<Shape> Inferrer::Iota() {
  SI_RETURN_IF_ERROR(ExpectCount(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("shape");
  if (!d->IsArray() || d->rank() == 0) {
    return Invalid(
        StrCat("iota produces an array of rank >= 1 but its declared shape is ", Str(*d)));
  }
  const PT t = d->element_type();
  if (!IsIntegral(t) && !IsFloatingPoint(t) && !IsComplex(t)) {
    return Invalid(StrCat("iota needs an integral, floating-point or complex type, got ", Str(*d)));
  }
  if (instr_.iota_dimension() < 0 || instr_.iota_dimension() >= d->rank()) {
    return Invalid(
        StrCat("iota_dimension=", instr_.iota_dimension(), " is out of range for ", Str(*d)));
  }
  return *d;
}

absl::StatusOr<Shape> Inferrer::Broadcast() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const std::vector<int64_t>& dims = instr_.dimensions();
  const Shape* d = declared();
  if (d == nullptr) {
    // dimensions= maps operand dimensions into the result; it does not give the new sizes, so
    // only a scalar broadcast to a scalar is determined.
    if (s.IsScalar() && dims.empty()) return MakeArray(s.element_type(), {});
    return NeedDeclared("result dimensions");
  }
  if (!d->IsArray()) {
    return Invalid(StrCat("broadcast produces an array but its declared shape is ", Str(*d)));
  }
  if (d->element_type() != s.element_type()) {
    return Invalid(StrCat("broadcast cannot change the element type: operand 0 has shape ", Str(s),
                          " but the result is ", Str(*d)));
  }
  if (static_cast<int64_t>(dims.size()) != s.rank()) {
    return Invalid(StrCat(
        "broadcast dimensions=", Str(dims),
        " must list one result dimension per operand dimension; operand 0 has shape ", Str(s)));
  }
  SI_RETURN_IF_ERROR(CheckDimList(dims, d->rank(), /*sorted=*/false, "dimensions of broadcast"));
  for (int i = 0; i < s.rank(); ++i) {
    if (!DimsMatch(d->dimension(static_cast<int>(dims[i])), s.dimension(i))) {
      return Invalid(StrCat("broadcast maps operand dimension ", i, " (size ", s.dimension(i),
                            ") to result dimension ", dims[i], " (size ",
                            d->dimension(static_cast<int>(dims[i])), ")"));
    }
  }
  return MakeArray(s.element_type(), d->dimensions(), DynamicFlags(*d));
}

absl::StatusOr<Shape> Inferrer::Reshape() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("result dimensions");
  if (!d->IsArray()) {
    return Invalid(StrCat("reshape produces an array but its declared shape is ", Str(*d)));
  }
  if (HasUnboundedDim(s) || HasUnboundedDim(*d)) {
    return Unimpl("reshape with unbounded dimensions");
  }
  const int64_t in = s.ElementCount();
  const int64_t out = d->ElementCount();
  if (in < 0 || out < 0) return Invalid("reshape element count overflows");
  if (in != out) {
    return Invalid(StrCat("reshape from ", Str(s), " (", in, " elements) to ", Str(*d), " (", out,
                          " elements) changes the element count"));
  }
  return MakeArray(s.element_type(), d->dimensions(), DynamicFlags(*d));
}

absl::StatusOr<Shape> Inferrer::DynamicReshape() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("result dimensions");
  if (!d->IsArray()) {
    return Invalid(StrCat("dynamic-reshape produces an array but its declared shape is ", Str(*d)));
  }
  if (count() != d->rank() + 1) {
    return Invalid(StrCat("dynamic-reshape to ", Str(*d), " needs ", d->rank() + 1,
                          " operands (the array and one size per result dimension) but has ",
                          count()));
  }
  for (int i = 1; i < count(); ++i) {
    if (!IsScalarOf(operand(i), PT::kS32)) {
      return Invalid(StrCat("operand ", i,
                            " of dynamic-reshape is a size and must be s32[] but has shape ",
                            Str(operand(i))));
    }
  }
  if (HasUnboundedDim(s) || HasUnboundedDim(*d)) {
    return Unimpl("dynamic-reshape with unbounded dimensions");
  }
  const int64_t in = s.ElementCount();
  const int64_t out = d->ElementCount();
  if (in < 0 || out < 0) return Invalid("dynamic-reshape element count overflows");
  if (in != out) {
    return Invalid(StrCat("dynamic-reshape from ", Str(s), " to ", Str(*d),
                          " changes the element count (bounds ", in, " vs ", out, ")"));
  }
  return MakeArray(s.element_type(), d->dimensions(), DynamicFlags(*d));
}

absl::StatusOr<Shape> Inferrer::Transpose() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const std::vector<int64_t>& perm = instr_.dimensions();
  if (static_cast<int64_t>(perm.size()) != s.rank()) {
    return Invalid(StrCat("transpose dimensions=", Str(perm), " is not a permutation of the ",
                          s.rank(), " dimensions of operand 0 (", Str(s), ")"));
  }
  SI_RETURN_IF_ERROR(CheckDimList(perm, s.rank(), /*sorted=*/false, "dimensions of transpose"));
  std::vector<int64_t> dims(s.rank());
  std::vector<bool> dynamic(s.rank());
  for (int i = 0; i < s.rank(); ++i) {
    dims[i] = s.dimension(static_cast<int>(perm[i]));
    dynamic[i] = s.is_dynamic_dimension(static_cast<int>(perm[i]));
  }
  return MakeArray(s.element_type(), std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::Slice() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const std::vector<SliceDimension>& slice = attrs().slice;
  if (static_cast<int64_t>(slice.size()) != s.rank()) {
    return Invalid(StrCat("slice has ", slice.size(), " ranges but operand 0 (", Str(s),
                          ") has rank ", s.rank()));
  }
  std::vector<int64_t> dims(s.rank());
  std::vector<bool> dynamic(s.rank());
  for (int i = 0; i < s.rank(); ++i) {
    const SliceDimension& r = slice[i];
    const std::string range = StrCat("[", r.start, ":", r.limit, ":", r.stride, "]");
    if (r.start < 0) {
      return Invalid(StrCat("slice range ", range, " in dimension ", i, " starts below 0"));
    }
    if (r.stride <= 0) {
      return Invalid(
          StrCat("slice range ", range, " in dimension ", i, " needs a positive stride"));
    }
    if (r.start > r.limit) {
      return Invalid(StrCat("slice range ", range, " in dimension ", i, " ends before it starts"));
    }
    if (s.dimension(i) != kUnbounded && r.limit > s.dimension(i)) {
      return Invalid(StrCat("slice range ", range, " in dimension ", i, " exceeds the size ",
                            s.dimension(i), " of operand 0 (", Str(s), ")"));
    }
    const int64_t span = r.limit - r.start;  // no overflow: 0 <= start <= limit
    dims[i] = span / r.stride + (span % r.stride != 0 ? 1 : 0);
    // Slicing one element out of a dynamic dimension makes it static.
    dynamic[i] = dims[i] != 1 && s.is_dynamic_dimension(i);
  }
  return MakeArray(s.element_type(), std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::DynamicSlice() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  if (count() == 2 && operand(1).IsArray() && operand(1).rank() == 1) {
    // Legacy form: one rank-1 vector of start indices.
    if (!IsIntegral(operand(1).element_type()) || operand(1).dimension(0) != s.rank()) {
      return Invalid(StrCat("operand 1 of dynamic-slice must be an integral vector of ", s.rank(),
                            " start indices but has shape ", Str(operand(1))));
    }
  } else {
    if (count() - 1 != s.rank()) {
      return Invalid(StrCat("dynamic-slice of ", Str(s), " needs ", s.rank(),
                            " start indices but has ", count() - 1));
    }
    SI_RETURN_IF_ERROR(ExpectIntegralScalarIndices(1, count(), "start index"));
  }
  const std::vector<int64_t>& sizes = attrs().slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != s.rank()) {
    return Invalid(StrCat("dynamic-slice has ", sizes.size(),
                          " dynamic_slice_sizes but operand 0 (", Str(s), ") has rank ", s.rank()));
  }
  for (int i = 0; i < s.rank(); ++i) {
    if (sizes[i] < 0 || (s.dimension(i) != kUnbounded && sizes[i] > s.dimension(i))) {
      return Invalid(StrCat("dynamic_slice_sizes ", Str(sizes), " of dynamic-slice does not fit ",
                            "in operand 0 (", Str(s), ") in dimension ", i));
    }
  }
  return MakeArray(s.element_type(), sizes);
}

absl::StatusOr<Shape> Inferrer::DynamicUpdateSlice() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(3));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& s = operand(0);
  const Shape& update = operand(1);
  if (count() == 3 && operand(2).IsArray() && operand(2).rank() == 1) {
    if (!IsIntegral(operand(2).element_type()) || operand(2).dimension(0) != s.rank()) {
      return Invalid(StrCat("operand 2 of dynamic-update-slice must be an integral vector of ",
                            s.rank(), " start indices but has shape ", Str(operand(2))));
    }
  } else {
    if (count() - 2 != s.rank()) {
      return Invalid(StrCat("dynamic-update-slice of ", Str(s), " needs ", s.rank(),
                            " start indices but has ", count() - 2));
    }
    SI_RETURN_IF_ERROR(ExpectIntegralScalarIndices(2, count(), "start index"));
  }
  if (update.rank() != s.rank() || !SameTypeIgnoringFp(update.element_type(), s.element_type())) {
    return Invalid(StrCat("operand 1 of dynamic-update-slice has shape ", Str(update),
                          " but must have the rank and element type of operand 0 (", Str(s), ")"));
  }
  for (int i = 0; i < s.rank(); ++i) {
    if (s.dimension(i) != kUnbounded && update.dimension(i) != kUnbounded &&
        update.dimension(i) > s.dimension(i)) {
      return Invalid(StrCat("operand 1 of dynamic-update-slice (", Str(update),
                            ") is larger than operand 0 (", Str(s), ") in dimension ", i));
    }
  }
  return s;
}

absl::StatusOr<Shape> Inferrer::Concatenate() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  const Shape& first = operand(0);
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  if (dim < 0 || dim >= first.rank()) {
    return Invalid(
        StrCat("concatenate dimension ", dim, " is out of range for operand 0 (", Str(first), ")"));
  }
  std::vector<int64_t> dims = first.dimensions();
  std::vector<bool> dynamic = DynamicFlags(first);
  PT type = first.element_type();
  for (int i = 1; i < count(); ++i) {
    const Shape& s = operand(i);
    bool ok =
        s.rank() == first.rank() && SameTypeIgnoringFp(s.element_type(), first.element_type());
    for (int j = 0; ok && j < s.rank(); ++j) {
      ok = j == dim || DimsMatch(s.dimension(j), first.dimension(j));
    }
    if (!ok) {
      return Invalid(StrCat("operand ", i, " of concatenate has shape ", Str(s),
                            " but operand 0 has ", Str(first),
                            "; they may differ only in dimension ", dim));
    }
    type = HigherPrecision(type, s.element_type());
    if (dims[dim] == kUnbounded || s.dimension(static_cast<int>(dim)) == kUnbounded) {
      dims[dim] = kUnbounded;
    } else if (!CheckedAdd(dims[dim], s.dimension(static_cast<int>(dim)), &dims[dim])) {
      return Invalid("concatenate result size overflows");
    }
    for (int j = 0; j < s.rank(); ++j) {
      if (s.is_dynamic_dimension(j)) dynamic[j] = true;
    }
  }
  return MakeArray(type, std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::Pad() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& s = operand(0);
  const Shape& value = operand(1);
  if (!value.IsScalar() || !SameTypeIgnoringFp(value.element_type(), s.element_type())) {
    return Invalid(
        StrCat("operand 1 of pad is the padding value and must be a scalar of the element type of "
               "operand 0 (",
               Str(s), ") but has shape ", Str(value)));
  }
  if (!attrs().padding) return Invalid("pad needs padding=");
  const PaddingConfig& padding = *attrs().padding;
  if (static_cast<int64_t>(padding.size()) != s.rank()) {
    return Invalid(StrCat("pad has padding for ", padding.size(), " dimensions but operand 0 (",
                          Str(s), ") has rank ", s.rank()));
  }
  std::vector<int64_t> dims(s.rank());
  for (int i = 0; i < s.rank(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.interior < 0) {
      return Invalid(StrCat("pad has negative interior padding ", p.interior, " in dimension ", i));
    }
    const int64_t size = s.dimension(i);
    if (size == kUnbounded) return Unimpl("pad of an unbounded dimension");
    int64_t interior_total = 0;
    int64_t result = 0;
    if (!CheckedMul(std::max<int64_t>(size - 1, 0), p.interior, &interior_total) ||
        !CheckedAdd(size, interior_total, &result) || !CheckedAdd(result, p.low, &result) ||
        !CheckedAdd(result, p.high, &result)) {
      return Invalid(StrCat("pad result size overflows in dimension ", i));
    }
    if (result < 0) {
      return Invalid(StrCat("pad makes dimension ", i, " of ", Str(s), " negative (", result, ")"));
    }
    dims[i] = result;
  }
  return MakeArray(HigherPrecision(s.element_type(), value.element_type()), std::move(dims),
                   DynamicFlags(s));
}

absl::StatusOr<Shape> Inferrer::Reverse() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(CheckDimList(instr_.dimensions(), operand(0).rank(), /*sorted=*/false,
                                  "dimensions of reverse"));
  return operand(0);
}

// ----------------------------------------------------------------------------------------------
// Gather / scatter

absl::StatusOr<Shape> Inferrer::Gather() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& input = operand(0);
  const Shape& indices = operand(1);
  if (!IsIntegral(indices.element_type())) {
    return Invalid(
        StrCat("operand 1 of gather holds indices and must be integral, got ", Str(indices)));
  }
  if (!attrs().gather_dimension_numbers) {
    return Invalid(
        "gather needs offset_dims=, collapsed_slice_dims=, start_index_map=, index_vector_dim= and "
        "slice_sizes=");
  }
  const GatherDimensionNumbers& d = *attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = attrs().slice_sizes;
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > indices.rank()) {
    return Invalid(StrCat("index_vector_dim=", ivd, " of gather is out of range [0, ",
                          indices.rank(), "] for indices ", Str(indices)));
  }
  // Indices of shape [A,B] with index_vector_dim=2 are read as [A,B,1].
  std::vector<int64_t> expanded = indices.dimensions();
  std::vector<bool> expanded_dynamic = DynamicFlags(indices);
  if (ivd == indices.rank()) {
    expanded.push_back(1);
    expanded_dynamic.push_back(false);
  }
  const int64_t in_rank = input.rank();
  const int64_t batch_rank = static_cast<int64_t>(expanded.size()) - 1;
  const int64_t out_rank = static_cast<int64_t>(d.offset_dims.size()) + batch_rank;
  SI_RETURN_IF_ERROR(
      CheckDimList(d.offset_dims, out_rank, /*sorted=*/true, "offset_dims of gather"));
  if (static_cast<int64_t>(d.start_index_map.size()) != expanded[ivd]) {
    return Invalid(StrCat("start_index_map ", Str(d.start_index_map), " of gather has ",
                          d.start_index_map.size(), " entries but the index vector dimension ", ivd,
                          " of the indices has size ", expanded[ivd]));
  }
  SI_RETURN_IF_ERROR(
      CheckDimList(d.start_index_map, in_rank, /*sorted=*/false, "start_index_map of gather"));
  SI_RETURN_IF_ERROR(CheckDimList(d.collapsed_slice_dims, in_rank, /*sorted=*/true,
                                  "collapsed_slice_dims of gather"));
  SI_RETURN_IF_ERROR(CheckDimList(d.operand_batching_dims, in_rank, /*sorted=*/true,
                                  "operand_batching_dims of gather"));
  SI_RETURN_IF_ERROR(CheckDimList(d.start_indices_batching_dims,
                                  static_cast<int64_t>(expanded.size()), /*sorted=*/false,
                                  "start_indices_batching_dims of gather"));
  if (d.operand_batching_dims.size() != d.start_indices_batching_dims.size()) {
    return Invalid("gather needs as many operand_batching_dims as start_indices_batching_dims");
  }
  for (size_t i = 0; i < d.operand_batching_dims.size(); ++i) {
    const int64_t od = d.operand_batching_dims[i];
    const int64_t id = d.start_indices_batching_dims[i];
    if (id == ivd) {
      return Invalid("start_indices_batching_dims of gather cannot contain index_vector_dim");
    }
    if (Contains(d.collapsed_slice_dims, od) || Contains(d.start_index_map, od)) {
      return Invalid(StrCat("operand batching dimension ", od,
                            " of gather cannot also be collapsed or indexed"));
    }
    if (!DimsMatch(input.dimension(static_cast<int>(od)), expanded[id])) {
      return Invalid(StrCat("gather batching dimension ", od, " of operand 0 (", Str(input),
                            ") does not match dimension ", id, " of the indices (", Str(indices),
                            ")"));
    }
  }
  if (static_cast<int64_t>(slice_sizes.size()) != in_rank) {
    return Invalid(StrCat("gather has ", slice_sizes.size(), " slice_sizes but operand 0 (",
                          Str(input), ") has rank ", in_rank));
  }
  if (static_cast<int64_t>(d.offset_dims.size() + d.collapsed_slice_dims.size() +
                           d.operand_batching_dims.size()) != in_rank) {
    return Invalid(StrCat("gather must account for every operand dimension: offset_dims ",
                          Str(d.offset_dims), ", collapsed_slice_dims ",
                          Str(d.collapsed_slice_dims), " and operand_batching_dims ",
                          Str(d.operand_batching_dims), " do not add up to rank ", in_rank));
  }
  for (int64_t i = 0; i < in_rank; ++i) {
    const int64_t size = input.dimension(static_cast<int>(i));
    if (slice_sizes[i] < 0 || (size != kUnbounded && slice_sizes[i] > size)) {
      return Invalid(StrCat("slice_sizes ", Str(slice_sizes), " of gather do not fit operand 0 (",
                            Str(input), ") in dimension ", i));
    }
  }
  std::vector<bool> removed(in_rank, false);
  for (int64_t c : d.collapsed_slice_dims) removed[c] = true;
  for (int64_t b : d.operand_batching_dims) removed[b] = true;
  for (int64_t i = 0; i < in_rank; ++i) {
    if (removed[i] && slice_sizes[i] > 1) {
      return Invalid(StrCat("gather collapses operand dimension ", i, " but its slice size is ",
                            slice_sizes[i], "; collapsed slice sizes must be 0 or 1"));
    }
  }
  std::vector<bool> is_offset(out_rank, false);
  for (int64_t o : d.offset_dims) is_offset[o] = true;
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  int64_t next_in = 0;
  int64_t next_index = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (is_offset[i]) {
      while (next_in < in_rank && removed[next_in]) ++next_in;
      if (next_in >= in_rank) return Invalid("gather offset dimensions are inconsistent");
      dims.push_back(slice_sizes[next_in]);
      dynamic.push_back(slice_sizes[next_in] == input.dimension(static_cast<int>(next_in)) &&
                        input.is_dynamic_dimension(static_cast<int>(next_in)));
      ++next_in;
    } else {
      if (next_index == ivd) ++next_index;
      if (next_index >= static_cast<int64_t>(expanded.size())) {
        return Invalid("gather batch dimensions are inconsistent");
      }
      dims.push_back(expanded[next_index]);
      dynamic.push_back(expanded_dynamic[next_index]);
      ++next_index;
    }
  }
  return MakeArray(input.element_type(), std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::Scatter() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(3));
  if (count() % 2 != 1) {
    return Invalid(
        StrCat("scatter takes N operands, the indices and N updates (an odd count) but has ",
               count(), " operands"));
  }
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const int n = count() / 2;
  const Shape& indices = operand(n);
  if (!IsIntegral(indices.element_type())) {
    return Invalid(StrCat("operand ", n, " of scatter holds indices and must be integral, got ",
                          Str(indices)));
  }
  if (!attrs().scatter_dimension_numbers) {
    return Invalid(
        "scatter needs update_window_dims=, inserted_window_dims=, scatter_dims_to_operand_dims= "
        "and index_vector_dim=");
  }
  const ScatterDimensionNumbers& d = *attrs().scatter_dimension_numbers;
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > indices.rank()) {
    return Invalid(StrCat("index_vector_dim=", ivd, " of scatter is out of range [0, ",
                          indices.rank(), "] for indices ", Str(indices)));
  }
  std::vector<int64_t> expanded = indices.dimensions();
  if (ivd == indices.rank()) expanded.push_back(1);
  const Shape& operand0 = operand(0);
  const Shape& updates0 = operand(n + 1);
  for (int i = 1; i < n; ++i) {
    if (!SameDimensionSizes(operand(i), operand0)) {
      return Invalid(StrCat("operand ", i, " of scatter has shape ", Str(operand(i)),
                            " but operand 0 has ", Str(operand0)));
    }
    if (!SameDimensionSizes(operand(n + 1 + i), updates0)) {
      return Invalid(StrCat("operand ", n + 1 + i, " of scatter has shape ",
                            Str(operand(n + 1 + i)), " but the first update (operand ", n + 1,
                            ") has ", Str(updates0)));
    }
  }
  const int64_t in_rank = operand0.rank();
  const int64_t upd_rank = updates0.rank();
  SI_RETURN_IF_ERROR(CheckDimList(d.update_window_dims, upd_rank, /*sorted=*/true,
                                  "update_window_dims of scatter"));
  SI_RETURN_IF_ERROR(CheckDimList(d.inserted_window_dims, in_rank, /*sorted=*/true,
                                  "inserted_window_dims of scatter"));
  SI_RETURN_IF_ERROR(CheckDimList(d.input_batching_dims, in_rank, /*sorted=*/true,
                                  "input_batching_dims of scatter"));
  SI_RETURN_IF_ERROR(CheckDimList(d.scatter_indices_batching_dims,
                                  static_cast<int64_t>(expanded.size()), /*sorted=*/false,
                                  "scatter_indices_batching_dims of scatter"));
  if (d.input_batching_dims.size() != d.scatter_indices_batching_dims.size()) {
    return Invalid("scatter needs as many input_batching_dims as scatter_indices_batching_dims");
  }
  for (size_t i = 0; i < d.input_batching_dims.size(); ++i) {
    const int64_t od = d.input_batching_dims[i];
    const int64_t id = d.scatter_indices_batching_dims[i];
    if (id == ivd) {
      return Invalid("scatter_indices_batching_dims of scatter cannot contain index_vector_dim");
    }
    if (Contains(d.inserted_window_dims, od) || Contains(d.scatter_dims_to_operand_dims, od)) {
      return Invalid(StrCat("input batching dimension ", od,
                            " of scatter cannot also be inserted or indexed"));
    }
    if (!DimsMatch(operand0.dimension(static_cast<int>(od)), expanded[id])) {
      return Invalid(StrCat("scatter batching dimension ", od, " of operand 0 (", Str(operand0),
                            ") does not match dimension ", id, " of the indices (", Str(indices),
                            ")"));
    }
  }
  if (static_cast<int64_t>(d.update_window_dims.size() + d.inserted_window_dims.size() +
                           d.input_batching_dims.size()) != in_rank) {
    return Invalid(StrCat("scatter must account for every operand dimension: update_window_dims ",
                          Str(d.update_window_dims), ", inserted_window_dims ",
                          Str(d.inserted_window_dims), " and input_batching_dims ",
                          Str(d.input_batching_dims), " do not add up to rank ", in_rank));
  }
  if (static_cast<int64_t>(d.scatter_dims_to_operand_dims.size()) != expanded[ivd]) {
    return Invalid(StrCat("scatter_dims_to_operand_dims ", Str(d.scatter_dims_to_operand_dims),
                          " of scatter has ", d.scatter_dims_to_operand_dims.size(),
                          " entries but the index vector dimension ", ivd,
                          " of the indices has size ", expanded[ivd]));
  }
  SI_RETURN_IF_ERROR(CheckDimList(d.scatter_dims_to_operand_dims, in_rank, /*sorted=*/false,
                                  "scatter_dims_to_operand_dims of scatter"));
  const int64_t expected_upd_rank =
      static_cast<int64_t>(expanded.size()) - 1 + static_cast<int64_t>(d.update_window_dims.size());
  if (upd_rank != expected_upd_rank) {
    return Invalid(StrCat("scatter updates must have rank ", expected_upd_rank, " but operand ",
                          n + 1, " has shape ", Str(updates0)));
  }
  // Window dimensions of the updates are bounded by the matching operand dimensions.
  std::vector<int64_t> window_bounds;
  for (int64_t i = 0; i < in_rank; ++i) {
    if (!Contains(d.inserted_window_dims, i) && !Contains(d.input_batching_dims, i)) {
      window_bounds.push_back(operand0.dimension(static_cast<int>(i)));
    }
  }
  for (size_t i = 0; i < d.update_window_dims.size() && i < window_bounds.size(); ++i) {
    const int64_t u = updates0.dimension(static_cast<int>(d.update_window_dims[i]));
    if (window_bounds[i] != kUnbounded && u != kUnbounded && u > window_bounds[i]) {
      return Invalid(StrCat("scatter update window dimension ", d.update_window_dims[i], " (size ",
                            u, ") exceeds the operand bound ", window_bounds[i]));
    }
  }
  int64_t next_index = 0;
  for (int64_t i = 0; i < upd_rank; ++i) {
    if (Contains(d.update_window_dims, i)) continue;
    if (next_index == ivd) ++next_index;
    if (next_index >= static_cast<int64_t>(expanded.size())) break;
    if (!DimsMatch(updates0.dimension(static_cast<int>(i)), expanded[next_index])) {
      return Invalid(StrCat("scatter update dimension ", i, " of ", Str(updates0),
                            " must match dimension ", next_index, " of the indices (", Str(indices),
                            ")"));
    }
    ++next_index;
  }
  SI_ASSIGN_OR_RETURN(const Computation* to_apply, Called(0, "a to_apply= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*to_apply));
  std::vector<Shape> init_scalars;
  std::vector<PT> update_types;
  for (int i = 0; i < n; ++i) {
    init_scalars.push_back(Scalar(operand(i).element_type()));
    update_types.push_back(operand(n + 1 + i).element_type());
  }
  std::vector<const Shape*> inits;
  for (const Shape& s : init_scalars) inits.push_back(&s);
  SI_RETURN_IF_ERROR(VerifyReducer(sig, inits, update_types, "to_apply"));
  if (n == 1) return operand0;
  std::vector<Shape> elements;
  for (int i = 0; i < n; ++i) elements.push_back(operand(i));
  return Shape::Tuple(std::move(elements));
}

// ----------------------------------------------------------------------------------------------
// Reductions and windows

absl::StatusOr<Shape> Inferrer::Reduce() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(2));
  if (count() % 2 != 0) {
    return Invalid(StrCat("reduce takes N inputs and N init values (an even count) but has ",
                          count(), " operands"));
  }
  const int n = count() / 2;
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& first = operand(0);
  for (int i = 1; i < n; ++i) {
    if (!SameDimensionSizes(operand(i), first)) {
      return Invalid(StrCat("input ", i, " of reduce has shape ", Str(operand(i)),
                            " but input 0 has ", Str(first)));
    }
  }
  SI_RETURN_IF_ERROR(
      CheckDimList(instr_.dimensions(), first.rank(), /*sorted=*/false, "dimensions of reduce"));
  SI_ASSIGN_OR_RETURN(const Computation* to_apply, Called(0, "a to_apply= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*to_apply));
  std::vector<const Shape*> inits;
  std::vector<PT> types;
  for (int i = 0; i < n; ++i) {
    inits.push_back(&operand(n + i));
    types.push_back(operand(i).element_type());
  }
  SI_RETURN_IF_ERROR(VerifyReducer(sig, inits, types, "to_apply"));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int i = 0; i < first.rank(); ++i) {
    if (!Contains(instr_.dimensions(), i)) {
      dims.push_back(first.dimension(i));
      dynamic.push_back(first.is_dynamic_dimension(i));
    }
  }
  if (sig.result->IsArray()) return MakeArray(sig.result->element_type(), dims, dynamic);
  std::vector<Shape> elements;
  for (const Shape& e : sig.result->tuple_shapes()) {
    elements.push_back(MakeArray(e.element_type(), dims, dynamic));
  }
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> Inferrer::ReduceWindow() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(2));
  if (count() % 2 != 0) {
    return Invalid(StrCat("reduce-window takes N inputs and N init values (an even count) but has ",
                          count(), " operands"));
  }
  const int n = count() / 2;
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  for (int i = 1; i < n; ++i) {
    if (!SameDimensionSizes(operand(i), operand(0))) {
      return Invalid(StrCat("input ", i, " of reduce-window has shape ", Str(operand(i)),
                            " but input 0 has ", Str(operand(0))));
    }
  }
  SI_ASSIGN_OR_RETURN(const Computation* to_apply, Called(0, "a to_apply= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*to_apply));
  std::vector<const Shape*> inits;
  std::vector<PT> types;
  for (int i = 0; i < n; ++i) {
    inits.push_back(&operand(n + i));
    types.push_back(operand(i).element_type());
  }
  SI_RETURN_IF_ERROR(VerifyReducer(sig, inits, types, "to_apply"));
  const Window empty;
  const Window& window = attrs().window ? *attrs().window : empty;
  std::vector<Shape> outputs;
  for (int i = 0; i < n; ++i) {
    SI_ASSIGN_OR_RETURN(Shape out, WindowShape(operand(i), window, operand(n + i).element_type()));
    outputs.push_back(std::move(out));
  }
  if (sig.result->IsArray()) return outputs[0];
  return Shape::Tuple(std::move(outputs));
}

absl::StatusOr<Shape> Inferrer::SelectAndScatter() {
  SI_RETURN_IF_ERROR(ExpectCount(3));
  for (int i = 0; i < 3; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& s = operand(0);
  const Shape& source = operand(1);
  const Shape& init = operand(2);
  SI_ASSIGN_OR_RETURN(const Computation* select, Called(0, "a select= computation"));
  SI_ASSIGN_OR_RETURN(const Computation* scatter, Called(1, "a scatter= computation"));
  SI_ASSIGN_OR_RETURN(const Signature select_sig, GetSignature(*select));
  SI_ASSIGN_OR_RETURN(const Signature scatter_sig, GetSignature(*scatter));
  const Shape element = Scalar(s.element_type());
  if (select_sig.params.size() != 2) {
    return Invalid(StrCat("select computation ", select_sig.name,
                          " of select-and-scatter must take 2 parameters but takes ",
                          select_sig.params.size()));
  }
  if (!ShapesCompatible(*select_sig.result, Scalar(PT::kPred))) {
    return Invalid(StrCat("select computation ", select_sig.name,
                          " of select-and-scatter must return pred[] but returns ",
                          Str(*select_sig.result)));
  }
  for (int i = 0; i < 2; ++i) {
    if (!ShapesCompatibleIgnoringFpPrecision(element, *select_sig.params[i])) {
      return Invalid(StrCat("parameter ", i, " of select computation ", select_sig.name,
                            " has shape ", Str(*select_sig.params[i]), " but operand 0 has ",
                            "elements ", Str(element)));
    }
  }
  SI_RETURN_IF_ERROR(VerifyReducer(scatter_sig, {&init}, {source.element_type()}, "scatter"));
  const Window empty;
  const Window& window = attrs().window ? *attrs().window : empty;
  SI_ASSIGN_OR_RETURN(const Shape windowed, WindowShape(s, window, s.element_type()));
  if (!SameDimensionSizes(windowed, source) ||
      !SameTypeIgnoringFp(source.element_type(), s.element_type())) {
    return Invalid(StrCat("operand 1 of select-and-scatter has shape ", Str(source),
                          " but the window over operand 0 produces ", Str(windowed)));
  }
  return s;
}

// ----------------------------------------------------------------------------------------------
// Dot-like

absl::StatusOr<Shape> Inferrer::DotLike(const Shape& lhs, const Shape& rhs,
                                        const DotDimensionNumbers& d, int64_t rhs_group_dim) const {
  SI_RETURN_IF_ERROR(CheckDimList(d.lhs_contracting_dimensions, lhs.rank(), false,
                                  StrCat("lhs_contracting_dims of ", op_)));
  SI_RETURN_IF_ERROR(CheckDimList(d.rhs_contracting_dimensions, rhs.rank(), false,
                                  StrCat("rhs_contracting_dims of ", op_)));
  SI_RETURN_IF_ERROR(
      CheckDimList(d.lhs_batch_dimensions, lhs.rank(), false, StrCat("lhs_batch_dims of ", op_)));
  SI_RETURN_IF_ERROR(
      CheckDimList(d.rhs_batch_dimensions, rhs.rank(), false, StrCat("rhs_batch_dims of ", op_)));
  for (int64_t c : d.lhs_contracting_dimensions) {
    if (Contains(d.lhs_batch_dimensions, c)) {
      return Invalid(StrCat(op_, " uses lhs dimension ", c, " as both batch and contracting"));
    }
  }
  for (int64_t c : d.rhs_contracting_dimensions) {
    if (Contains(d.rhs_batch_dimensions, c) || c == rhs_group_dim) {
      return Invalid(
          StrCat(op_, " uses rhs dimension ", c, " twice (batch, contracting or group)"));
    }
  }
  if (Contains(d.rhs_batch_dimensions, rhs_group_dim)) {
    return Invalid(StrCat(op_, " uses rhs dimension ", rhs_group_dim, " as both batch and group"));
  }
  if (d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return Invalid(StrCat(op_, " has ", d.lhs_contracting_dimensions.size(),
                          " lhs contracting dimensions but ", d.rhs_contracting_dimensions.size(),
                          " rhs contracting dimensions"));
  }
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size()) {
    return Invalid(StrCat(op_, " has ", d.lhs_batch_dimensions.size(), " lhs batch dimensions but ",
                          d.rhs_batch_dimensions.size(), " rhs batch dimensions"));
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    const int64_t l = lhs.dimension(static_cast<int>(d.lhs_contracting_dimensions[i]));
    const int64_t r = rhs.dimension(static_cast<int>(d.rhs_contracting_dimensions[i]));
    if (!DimsMatch(l, r)) {
      return Invalid(StrCat(op_, " contracts lhs dimension ", d.lhs_contracting_dimensions[i],
                            " (size ", l, ") with rhs dimension ", d.rhs_contracting_dimensions[i],
                            " (size ", r, "); lhs is ", Str(lhs), ", rhs is ", Str(rhs)));
    }
  }
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    const int64_t l = lhs.dimension(static_cast<int>(d.lhs_batch_dimensions[i]));
    const int64_t r = rhs.dimension(static_cast<int>(d.rhs_batch_dimensions[i]));
    if (!DimsMatch(l, r)) {
      return Invalid(StrCat(op_, " batch dimension ", i, " has size ", l, " in lhs ", Str(lhs),
                            " but ", r, " in rhs ", Str(rhs)));
    }
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t b : d.lhs_batch_dimensions) {
    dims.push_back(lhs.dimension(static_cast<int>(b)));
    dynamic.push_back(lhs.is_dynamic_dimension(static_cast<int>(b)));
  }
  for (int i = 0; i < lhs.rank(); ++i) {
    if (!Contains(d.lhs_contracting_dimensions, i) && !Contains(d.lhs_batch_dimensions, i)) {
      dims.push_back(lhs.dimension(i));
      dynamic.push_back(lhs.is_dynamic_dimension(i));
    }
  }
  for (int i = 0; i < rhs.rank(); ++i) {
    if (!Contains(d.rhs_contracting_dimensions, i) && !Contains(d.rhs_batch_dimensions, i) &&
        i != rhs_group_dim) {
      dims.push_back(rhs.dimension(i));
      dynamic.push_back(rhs.is_dynamic_dimension(i));
    }
  }
  SI_ASSIGN_OR_RETURN(const PT type,
                      ResultTypeFor(HigherPrecision(lhs.element_type(), rhs.element_type())));
  return MakeArray(type, std::move(dims), dynamic);
}

absl::StatusOr<Shape> Inferrer::Dot() {
  const DotDimensionNumbers none;
  const DotDimensionNumbers& d =
      attrs().dot_dimension_numbers ? *attrs().dot_dimension_numbers : none;
  if (attrs().sparsity.empty()) {
    SI_RETURN_IF_ERROR(ExpectCount(2));
    SI_RETURN_IF_ERROR(ExpectArray(0));
    SI_RETURN_IF_ERROR(ExpectArray(1));
    return DotLike(operand(0), operand(1), d, -1);
  }
  // Older XLA's structured sparsity: one u16 metadata operand per descriptor follows lhs and
  // rhs; a sparse operand's sparse dimension holds N/M of the dense size.
  auto descriptors = ParseDotSparsity(attrs().sparsity);
  if (!descriptors.ok()) return Invalid(std::string(descriptors.status().message()));
  SI_RETURN_IF_ERROR(ExpectCount(2 + static_cast<int>(descriptors->size())));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  Shape dense[2] = {operand(0), operand(1)};
  for (size_t i = 0; i < descriptors->size(); ++i) {
    const DotSparsity& sp = (*descriptors)[i];
    const Shape& sparse = operand(sp.operand);
    const char* side = sp.operand == 0 ? "lhs" : "rhs";
    const std::vector<int64_t>& contracting =
        sp.operand == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
    if (sp.dimension < 0 || sp.dimension >= sparse.rank() ||
        !Contains(contracting, sp.dimension)) {
      return Invalid(StrCat("sparsity ", sp.ToString(), " of ", op_, " names ", side,
                            " dimension ", sp.dimension, ", which is not a contracting "
                            "dimension of ", Str(sparse)));
    }
    const int64_t compressed = sparse.dimension(static_cast<int>(sp.dimension));
    auto dense_size = DenseSparseDimension(sp, compressed);
    if (!dense_size.ok()) {
      return Invalid(StrCat(side, " of ", op_, ": ", dense_size.status().message()));
    }
    std::vector<int64_t> dims = sparse.dimensions();
    dims[sp.dimension] = *dense_size;
    dense[sp.operand] = MakeArray(sparse.element_type(), dims, DynamicFlags(sparse));
    const Shape& meta = operand(2 + static_cast<int>(i));
    std::vector<int64_t> meta_dims = sparse.dimensions();
    meta_dims[sp.dimension] = MetadataDimension(sp, compressed);
    if (meta.element_type() != PT::kU16 || meta.dimensions() != meta_dims) {
      return Invalid(StrCat("operand ", 2 + i, " of ", op_, " holds the ", sp.ToString(),
                            " sparsity metadata of ", side, " ", Str(sparse), " and must be ",
                            Str(Shape::Array(PT::kU16, meta_dims)), ", got ", Str(meta)));
    }
  }
  return DotLike(dense[0], dense[1], d, -1);
}

absl::StatusOr<Shape> Inferrer::ScaledDot() {
  SI_RETURN_IF_ERROR(ExpectCount(4));
  for (int i = 0; i < 4; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const DotDimensionNumbers none;
  const DotDimensionNumbers& d =
      attrs().dot_dimension_numbers ? *attrs().dot_dimension_numbers : none;
  // Operands are (lhs, lhs_scale, rhs, rhs_scale); the scales do not shape the result.
  return DotLike(operand(0), operand(2), d, -1);
}

absl::StatusOr<Shape> Inferrer::RaggedDot() {
  SI_RETURN_IF_ERROR(ExpectCount(3));
  for (int i = 0; i < 3; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& lhs = operand(0);
  const Shape& rhs = operand(1);
  const Shape& group_sizes = operand(2);
  if (!IsIntegral(group_sizes.element_type()) || group_sizes.rank() < 1) {
    return Invalid(
        StrCat("operand 2 of ragged-dot holds group sizes and must be an integral array of rank >= "
               "1, got ",
               Str(group_sizes)));
  }
  const int64_t groups = group_sizes.dimension(group_sizes.rank() - 1);
  const DotDimensionNumbers none;
  const DotDimensionNumbers& d =
      attrs().dot_dimension_numbers ? *attrs().dot_dimension_numbers : none;
  if (d.lhs_ragged_dimensions.size() != 1) {
    return Invalid(StrCat("ragged-dot needs exactly one lhs_ragged_dims entry, got ",
                          Str(d.lhs_ragged_dimensions)));
  }
  const int64_t ragged = d.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.rank()) {
    return Invalid(StrCat("lhs_ragged_dims ", Str(d.lhs_ragged_dimensions),
                          " of ragged-dot is out of range for lhs ", Str(lhs)));
  }
  const bool contracting = Contains(d.lhs_contracting_dimensions, ragged);
  const bool batch = Contains(d.lhs_batch_dimensions, ragged);
  if (contracting || batch) {
    if (!d.rhs_group_dimensions.empty()) {
      return Invalid(StrCat("ragged-dot with a ragged ", contracting ? "contracting" : "batch",
                            " dimension takes no rhs_group_dims, got ",
                            Str(d.rhs_group_dimensions)));
    }
    SI_ASSIGN_OR_RETURN(Shape result, DotLike(lhs, rhs, d, -1));
    if (batch) return result;
    // A ragged contracting dimension yields one result per group, stacked in front.
    std::vector<int64_t> dims = result.dimensions();
    std::vector<bool> dynamic = DynamicFlags(result);
    dims.insert(dims.begin(), groups);
    dynamic.insert(dynamic.begin(), false);
    return MakeArray(result.element_type(), std::move(dims), dynamic);
  }
  if (d.rhs_group_dimensions.size() != 1) {
    return Invalid(
        StrCat("ragged-dot with a ragged non-contracting dimension needs exactly one "
               "rhs_group_dims entry, got ",
               Str(d.rhs_group_dimensions)));
  }
  const int64_t group_dim = d.rhs_group_dimensions[0];
  if (group_dim < 0 || group_dim >= rhs.rank()) {
    return Invalid(StrCat("rhs_group_dims ", Str(d.rhs_group_dimensions),
                          " of ragged-dot is out of range for rhs ", Str(rhs)));
  }
  if (!DimsMatch(rhs.dimension(static_cast<int>(group_dim)), groups)) {
    return Invalid(StrCat("ragged-dot rhs group dimension ", group_dim, " of ", Str(rhs),
                          " must match the ", groups, " groups of operand 2 (", Str(group_sizes),
                          ")"));
  }
  return DotLike(lhs, rhs, d, group_dim);
}

absl::StatusOr<Shape> Inferrer::Convolution() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& lhs = operand(0);
  const Shape& rhs = operand(1);
  if (!attrs().convolution_dimension_numbers) return Invalid("convolution needs dim_labels=");
  const ConvolutionDimensionNumbers& d = *attrs().convolution_dimension_numbers;
  const int64_t fgc = attrs().feature_group_count;
  const int64_t bgc = attrs().batch_group_count;
  if (fgc <= 0) return Invalid(StrCat("feature_group_count=", fgc, " must be positive"));
  if (bgc <= 0) return Invalid(StrCat("batch_group_count=", bgc, " must be positive"));
  if (fgc > 1 && bgc > 1) {
    return Invalid(
        "convolution cannot have both feature_group_count and batch_group_count above 1");
  }
  const size_t spatial = d.input_spatial_dimensions.size();
  if (d.kernel_spatial_dimensions.size() != spatial ||
      d.output_spatial_dimensions.size() != spatial) {
    return Invalid("convolution dim_labels name different numbers of spatial dimensions");
  }
  const Window empty;
  const Window& window = attrs().window ? *attrs().window : empty;
  if (window.size() != spatial) {
    return Invalid(StrCat("convolution window has ", window.size(),
                          " dimensions but dim_labels name ", spatial, " spatial dimensions"));
  }
  const int64_t rank = static_cast<int64_t>(spatial) + 2;
  if (lhs.rank() != rank || rhs.rank() != rank) {
    return Invalid(StrCat("convolution with ", spatial,
                          " spatial dimensions needs operands of rank ", rank, ", got ", Str(lhs),
                          " and ", Str(rhs)));
  }
  auto labels = [](int64_t a, int64_t b, const std::vector<int64_t>& s) {
    std::vector<int64_t> v = {a, b};
    v.insert(v.end(), s.begin(), s.end());
    return v;
  };
  SI_RETURN_IF_ERROR(CheckDimList(
      labels(d.input_batch_dimension, d.input_feature_dimension, d.input_spatial_dimensions), rank,
      false, "input dim_labels of convolution"));
  SI_RETURN_IF_ERROR(
      CheckDimList(labels(d.kernel_input_feature_dimension, d.kernel_output_feature_dimension,
                          d.kernel_spatial_dimensions),
                   rank, false, "kernel dim_labels of convolution"));
  SI_RETURN_IF_ERROR(CheckDimList(
      labels(d.output_batch_dimension, d.output_feature_dimension, d.output_spatial_dimensions),
      rank, false, "output dim_labels of convolution"));
  if (HasUnboundedDim(lhs) || HasUnboundedDim(rhs)) {
    return Unimpl("convolution with unbounded dimensions");
  }
  auto dim = [](const Shape& s, int64_t i) { return s.dimension(static_cast<int>(i)); };
  const int64_t input_batch = dim(lhs, d.input_batch_dimension);
  const int64_t input_features = dim(lhs, d.input_feature_dimension);
  const int64_t kernel_in = dim(rhs, d.kernel_input_feature_dimension);
  const int64_t kernel_out = dim(rhs, d.kernel_output_feature_dimension);
  if (kernel_out % bgc != 0) {
    return Invalid(StrCat("convolution kernel output features (", kernel_out,
                          ") must be a multiple of batch_group_count=", bgc));
  }
  if (input_features % fgc != 0 || input_features / fgc != kernel_in) {
    return Invalid(StrCat("convolution input features (", input_features,
                          ") divided by feature_group_count=", fgc,
                          " must equal the kernel input features (", kernel_in, "); lhs is ",
                          Str(lhs), ", rhs is ", Str(rhs)));
  }
  if (kernel_out % fgc != 0) {
    return Invalid(StrCat("convolution kernel output features (", kernel_out,
                          ") must be a multiple of feature_group_count=", fgc));
  }
  if (input_batch % bgc != 0) {
    return Invalid(StrCat("convolution input batch (", input_batch,
                          ") must be a multiple of batch_group_count=", bgc));
  }
  std::vector<int64_t> dims(rank);
  std::vector<bool> dynamic(rank, false);
  dims[d.output_batch_dimension] = input_batch / bgc;
  dims[d.output_feature_dimension] = kernel_out;
  dynamic[d.output_batch_dimension] =
      lhs.is_dynamic_dimension(static_cast<int>(d.input_batch_dimension));
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kernel_size = dim(rhs, d.kernel_spatial_dimensions[i]);
    if (window[i].size != kernel_size) {
      return Invalid(StrCat("convolution window size ", window[i].size, " in spatial dimension ", i,
                            " does not match the kernel (", Str(rhs), ")"));
    }
    SI_ASSIGN_OR_RETURN(dims[d.output_spatial_dimensions[i]],
                        WindowOutputSize(dim(lhs, d.input_spatial_dimensions[i]), window[i],
                                         static_cast<int>(i), op_));
    dynamic[d.output_spatial_dimensions[i]] =
        lhs.is_dynamic_dimension(static_cast<int>(d.input_spatial_dimensions[i]));
  }
  SI_ASSIGN_OR_RETURN(const PT type,
                      ResultTypeFor(HigherPrecision(lhs.element_type(), rhs.element_type())));
  return MakeArray(type, std::move(dims), dynamic);
}

// ----------------------------------------------------------------------------------------------
// Linear algebra and FFT

absl::StatusOr<Shape> Inferrer::Fft() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  const std::vector<int64_t>& len = attrs().fft_length;
  const int64_t fft_rank = static_cast<int64_t>(len.size());
  if (fft_rank < 1 || fft_rank > 3) {
    return Invalid(StrCat("fft needs fft_length with 1 to 3 entries, got ", Str(len)));
  }
  if (s.rank() < fft_rank) {
    return Invalid(
        StrCat("fft of rank ", fft_rank, " needs an operand of at least that rank, got ", Str(s)));
  }
  for (int64_t l : len) {
    if (l < 0) return Invalid(StrCat("fft_length ", Str(len), " contains a negative length"));
  }
  const PT t = s.element_type();
  const int r = s.rank();
  switch (attrs().fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) {
        return Invalid(StrCat("FFT and IFFT need a complex operand, got ", Str(s)));
      }
      return s;
    case FftType::kRfft: {
      if (t != PT::kF32 && t != PT::kF64) {
        return Invalid(StrCat("RFFT needs an f32 or f64 operand, got ", Str(s)));
      }
      for (int64_t i = 0; i < fft_rank; ++i) {
        if (!DimsMatch(s.dimension(static_cast<int>(r - fft_rank + i)), len[i])) {
          return Invalid(StrCat("RFFT needs the minor dimensions of ", Str(s),
                                " to match fft_length ", Str(len)));
        }
      }
      Shape result = WithType(s, t == PT::kF32 ? PT::kC64 : PT::kC128);
      if (len.back() != 0) (*result.mutable_dimensions())[r - 1] = len.back() / 2 + 1;
      return result;
    }
    case FftType::kIrfft: {
      if (!IsComplex(t)) return Invalid(StrCat("IRFFT needs a complex operand, got ", Str(s)));
      for (int64_t i = 0; i + 1 < fft_rank; ++i) {
        if (!DimsMatch(s.dimension(static_cast<int>(r - fft_rank + i)), len[i])) {
          return Invalid(StrCat("IRFFT needs the minor dimensions of ", Str(s),
                                " to match fft_length ", Str(len)));
        }
      }
      const int64_t minor = s.dimension(r - 1);
      if ((minor != 0 || len.back() != 0) && !DimsMatch(minor, len.back() / 2 + 1)) {
        return Invalid(StrCat("IRFFT needs the minor dimension of ", Str(s), " to be ",
                              len.back() / 2 + 1, " for fft_length ", Str(len)));
      }
      Shape result = WithType(s, ComplexComponentType(t));
      (*result.mutable_dimensions())[r - 1] = len.back();
      return result;
    }
  }
  return Invalid("fft has an unknown fft_type");
}

absl::StatusOr<Shape> Inferrer::TriangularSolve() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_RETURN_IF_ERROR(ExpectArray(1));
  const Shape& a = operand(0);
  const Shape& b = operand(1);
  if ((!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) ||
      a.element_type() != b.element_type()) {
    return Invalid(
        StrCat("triangular-solve needs floating-point or complex operands of one type, got ",
               Str(a), " and ", Str(b)));
  }
  if (a.rank() < 2 || b.rank() != a.rank()) {
    return Invalid(StrCat("triangular-solve needs operands of equal rank >= 2, got ", Str(a),
                          " and ", Str(b)));
  }
  const int r = a.rank();
  if (!DimsMatch(a.dimension(r - 2), a.dimension(r - 1))) {
    return Invalid(StrCat(
        "operand 0 of triangular-solve must be square in its two minor dimensions, got ", Str(a)));
  }
  if (!DimsMatch(a.dimension(r - 1), b.dimension(attrs().left_side ? r - 2 : r - 1))) {
    return Invalid(StrCat("triangular-solve operands ", Str(a), " and ", Str(b),
                          " do not share their solve dimension (left_side=",
                          attrs().left_side ? "true" : "false", ")"));
  }
  for (int i = 0; i < r - 2; ++i) {
    if (!DimsMatch(a.dimension(i), b.dimension(i))) {
      return Invalid(StrCat("triangular-solve operands ", Str(a), " and ", Str(b),
                            " have different batch dimensions"));
    }
  }
  if (attrs().transpose_a == TriangularTranspose::kInvalid) {
    return Invalid("triangular-solve needs transpose_a=NO_TRANSPOSE, TRANSPOSE or ADJOINT");
  }
  return b;
}

absl::StatusOr<Shape> Inferrer::Cholesky() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& a = operand(0);
  if (!IsFloatingPoint(a.element_type()) && !IsComplex(a.element_type())) {
    return Invalid(StrCat("cholesky needs a floating-point or complex operand, got ", Str(a)));
  }
  if (a.rank() < 2 || !DimsMatch(a.dimension(a.rank() - 2), a.dimension(a.rank() - 1))) {
    return Invalid(StrCat(
        "cholesky needs an operand of rank >= 2 that is square in its two minor dimensions, got ",
        Str(a)));
  }
  return a;
}

// ----------------------------------------------------------------------------------------------
// Sorting

absl::StatusOr<Shape> Inferrer::Sort() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& keys = operand(0);
  for (int i = 1; i < count(); ++i) {
    if (!SameDimensionSizes(operand(i), keys)) {
      return Invalid(StrCat("operand ", i, " of sort has shape ", Str(operand(i)),
                            " but operand 0 has ", Str(keys)));
    }
  }
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  if (dim < 0 || dim >= keys.rank()) {
    return Invalid(StrCat("sort dimension ", dim, " is out of range for ", Str(keys)));
  }
  SI_ASSIGN_OR_RETURN(const Computation* cmp, Called(0, "a to_apply= comparator"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*cmp));
  if (sig.params.size() != 2 * static_cast<size_t>(count())) {
    return Invalid(StrCat("comparator ", sig.name, " of sort must take ", 2 * count(),
                          " parameters but takes ", sig.params.size()));
  }
  if (!ShapesCompatible(*sig.result, Scalar(PT::kPred))) {
    return Invalid(StrCat("comparator ", sig.name, " of sort must return pred[] but returns ",
                          Str(*sig.result)));
  }
  for (size_t p = 0; p < sig.params.size(); ++p) {
    const Shape element = Scalar(operand(static_cast<int>(p / 2)).element_type());
    if (!ShapesCompatibleIgnoringFpPrecision(element, *sig.params[p])) {
      return Invalid(StrCat("parameter ", p, " of comparator ", sig.name, " has shape ",
                            Str(*sig.params[p]), " but must be ", Str(element)));
    }
  }
  if (count() == 1) return keys;
  std::vector<Shape> elements;
  for (int i = 0; i < count(); ++i) elements.push_back(operand(i));
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> Inferrer::TopK() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape& s = operand(0);
  if (s.rank() < 1) return Invalid(StrCat("topk needs an operand of rank >= 1, got ", Str(s)));
  const int64_t k = attrs().k;
  const int64_t last = s.dimension(s.rank() - 1);
  if (k < 0 || (last != kUnbounded && k > last)) {
    return Invalid(StrCat("topk k=", k, " is out of range for the minor dimension of ", Str(s)));
  }
  std::vector<int64_t> dims = s.dimensions();
  dims.back() = k;
  std::vector<bool> dynamic = DynamicFlags(s);
  dynamic.back() = false;
  return Shape::Tuple(
      {MakeArray(s.element_type(), dims, dynamic), MakeArray(PT::kS32, dims, dynamic)});
}

// ----------------------------------------------------------------------------------------------
// Tuples, control flow, calls

absl::StatusOr<Shape> Inferrer::Tuple() {
  std::vector<Shape> elements;
  elements.reserve(count());
  for (int i = 0; i < count(); ++i) elements.push_back(operand(i));
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> Inferrer::GetTupleElement() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  const Shape& s = operand(0);
  if (!s.IsTuple()) {
    return Invalid(StrCat("operand 0 of get-tuple-element must be a tuple but has shape ", Str(s)));
  }
  const int64_t index = instr_.tuple_index();
  if (index < 0 || index >= s.tuple_count()) {
    return Invalid(StrCat("get-tuple-element index=", index, " is out of range for ", Str(s)));
  }
  return s.tuple_shape(static_cast<int>(index));
}

absl::StatusOr<Shape> Inferrer::While() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  if (instr_.called_computations().size() != 2) {
    return Invalid("while needs condition= and body=");
  }
  SI_ASSIGN_OR_RETURN(const Computation* cond, Called(0, "a condition= computation"));
  SI_ASSIGN_OR_RETURN(const Computation* body, Called(1, "a body= computation"));
  SI_ASSIGN_OR_RETURN(const Signature cond_sig, GetSignature(*cond));
  SI_ASSIGN_OR_RETURN(const Signature body_sig, GetSignature(*body));
  const Shape& init = operand(0);
  if (cond_sig.params.size() != 1) {
    return Invalid(StrCat("condition computation ", cond_sig.name,
                          " of while must take 1 parameter but takes ", cond_sig.params.size()));
  }
  if (body_sig.params.size() != 1) {
    return Invalid(StrCat("body computation ", body_sig.name,
                          " of while must take 1 parameter but takes ", body_sig.params.size()));
  }
  if (!ShapesCompatible(*cond_sig.result, Scalar(PT::kPred))) {
    return Invalid(StrCat("condition computation ", cond_sig.name,
                          " of while must return pred[] but returns ", Str(*cond_sig.result)));
  }
  if (!ShapesCompatible(*body_sig.params[0], init)) {
    return Invalid(StrCat("body computation ", body_sig.name, " of while takes ",
                          Str(*body_sig.params[0]), " but the while operand has shape ",
                          Str(init)));
  }
  if (!ShapesCompatible(*cond_sig.params[0], init)) {
    return Invalid(StrCat("condition computation ", cond_sig.name, " of while takes ",
                          Str(*cond_sig.params[0]), " but the while operand has shape ",
                          Str(init)));
  }
  if (!ShapesCompatible(*body_sig.result, init)) {
    return Invalid(StrCat("body computation ", body_sig.name, " of while returns ",
                          Str(*body_sig.result), " but the loop state has shape ", Str(init)));
  }
  return init;
}

absl::StatusOr<Shape> Inferrer::Conditional() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(2));
  const Shape& index = operand(0);
  const size_t branches = instr_.called_computations().size();
  if (IsScalarOf(index, PT::kPred)) {
    if (branches != 2) {
      return Invalid(StrCat(
          "conditional with a pred index needs true_computation= and false_computation=, got ",
          branches, " computations"));
    }
  } else if (IsScalarOf(index, PT::kS32)) {
    if (branches < 1) return Invalid("conditional needs branch_computations=");
  } else {
    return Invalid(
        StrCat("operand 0 of conditional must be pred[] or s32[] but has shape ", Str(index)));
  }
  if (static_cast<size_t>(count()) != branches + 1) {
    return Invalid(StrCat("conditional with ", branches, " branches takes ", branches + 1,
                          " operands but has ", count()));
  }
  std::optional<Shape> result;
  for (size_t j = 0; j < branches; ++j) {
    SI_ASSIGN_OR_RETURN(const Computation* branch, Called(j, "a branch computation"));
    SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*branch));
    if (sig.params.size() != 1) {
      return Invalid(StrCat("branch computation ", sig.name,
                            " of conditional must take 1 parameter but takes ", sig.params.size()));
    }
    const Shape& arg = operand(static_cast<int>(j + 1));
    if (!ShapesCompatible(*sig.params[0], arg)) {
      return Invalid(StrCat("branch computation ", sig.name, " takes ", Str(*sig.params[0]),
                            " but operand ", j + 1, " of conditional has shape ", Str(arg)));
    }
    if (!result) {
      result = *sig.result;
    } else if (!ShapesCompatible(*result, *sig.result)) {
      return Invalid(StrCat("branch computation ", sig.name, " returns ", Str(*sig.result),
                            " but branch 0 returns ", Str(*result)));
    }
  }
  return *result;
}

absl::StatusOr<Shape> Inferrer::Call() {
  SI_ASSIGN_OR_RETURN(const Computation* callee, Called(0, "a to_apply= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*callee));
  if (sig.params.size() != static_cast<size_t>(count())) {
    return Invalid(StrCat("computation ", sig.name, " called by call takes ", sig.params.size(),
                          " parameters but call passes ", count(), " operands"));
  }
  for (int i = 0; i < count(); ++i) {
    if (!ShapesCompatible(*sig.params[i], operand(i))) {
      return Invalid(StrCat("operand ", i, " of call has shape ", Str(operand(i)),
                            " but parameter ", i, " of ", sig.name, " is ", Str(*sig.params[i])));
    }
  }
  return *sig.result;
}

absl::StatusOr<Shape> Inferrer::Map() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape* arg = &operand(0);
  for (int i = 1; i < count(); ++i) {
    const Shape& s = operand(i);
    if (SameDimensionSizes(s, *arg)) continue;
    // XLA lets scalars mix with arrays of any shape in map.
    if (s.IsScalar()) continue;
    if (arg->IsScalar()) {
      arg = &s;
      continue;
    }
    return Invalid(StrCat("operand ", i, " of map has shape ", Str(s), " but operand 0 has ",
                          Str(operand(0))));
  }
  if (instr_.has_dimensions()) {
    const std::vector<int64_t>& dims = instr_.dimensions();
    bool ok = static_cast<int64_t>(dims.size()) == arg->rank();
    for (size_t i = 0; ok && i < dims.size(); ++i) ok = dims[i] == static_cast<int64_t>(i);
    if (!ok) {
      return Invalid(StrCat("map dimensions=", Str(dims), " must be 0..", arg->rank() - 1,
                            " (map applies to every dimension)"));
    }
  }
  SI_ASSIGN_OR_RETURN(const Computation* f, Called(0, "a to_apply= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*f));
  if (sig.params.size() != static_cast<size_t>(count())) {
    return Invalid(StrCat("computation ", sig.name, " applied by map takes ", sig.params.size(),
                          " parameters but map has ", count(), " operands"));
  }
  if (!sig.result->IsScalar()) {
    return Invalid(StrCat("computation ", sig.name,
                          " applied by map must return a scalar but returns ", Str(*sig.result)));
  }
  for (int i = 0; i < count(); ++i) {
    if (!sig.params[i]->IsScalar() ||
        !SameTypeIgnoringFp(sig.params[i]->element_type(), operand(i).element_type())) {
      return Invalid(StrCat("parameter ", i, " of computation ", sig.name, " has shape ",
                            Str(*sig.params[i]), " but map operand ", i, " has shape ",
                            Str(operand(i))));
    }
  }
  return MakeArray(sig.result->element_type(), arg->dimensions(), DynamicFlags(*arg));
}

absl::StatusOr<Shape> Inferrer::Fusion() {
  if (instr_.called_computations().size() != 1) {
    return Invalid(StrCat("fusion needs exactly one calls= computation, got ",
                          instr_.called_computations().size()));
  }
  SI_ASSIGN_OR_RETURN(const Computation* fused, Called(0, "a calls= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*fused));
  if (sig.params.size() > static_cast<size_t>(count())) {
    return Invalid(StrCat("fused computation ", sig.name, " takes ", sig.params.size(),
                          " parameters but fusion has only ", count(), " operands"));
  }
  for (size_t i = 0; i < sig.params.size(); ++i) {
    if (!ShapesCompatible(*sig.params[i], operand(static_cast<int>(i)))) {
      return Invalid(StrCat("operand ", i, " of fusion has shape ",
                            Str(operand(static_cast<int>(i))), " but parameter ", i, " of ",
                            sig.name, " is ", Str(*sig.params[i])));
    }
  }
  return *sig.result;
}

// ----------------------------------------------------------------------------------------------
// Collectives

absl::StatusOr<Shape> Inferrer::AllReduce() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  if (!instr_.called_computations().empty()) {
    SI_ASSIGN_OR_RETURN(const Computation* f, Called(0, "a to_apply= computation"));
    SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*f));
    if (sig.params.size() != 2) {
      return Invalid(StrCat("reduction computation ", sig.name, " of ", op_,
                            " must take 2 parameters but takes ", sig.params.size()));
    }
  }
  if (count() == 1) return operand(0);
  return Tuple();
}

absl::StatusOr<Shape> Inferrer::AllGather(bool start) {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  for (int i = 0; i < count(); ++i) {
    if (dim < 0 || dim >= operand(i).rank()) {
      return Invalid(StrCat(op_, " dimension ", dim, " is out of range for operand ", i, " (",
                            Str(operand(i)), ")"));
    }
  }
  std::optional<int64_t> shards = GroupSize();
  if (!shards) {
    // Like XLA's verifier, fall back on the declared shape for the shard count.
    const Shape* d = declared();
    const Shape* out0 = nullptr;
    if (d != nullptr) {
      const Shape* gathered = d;
      if (start) gathered = d->IsTuple() && d->tuple_count() == 2 ? &d->tuple_shape(1) : nullptr;
      if (gathered != nullptr) {
        out0 = count() == 1                                         ? gathered
               : gathered->IsTuple() && gathered->tuple_count() > 0 ? &gathered->tuple_shape(0)
                                                                    : nullptr;
      }
    }
    if (out0 == nullptr || !out0->IsArray() || out0->rank() <= dim) {
      return Unimpl(StrCat("the shard count of ", op_,
                           " is unknown without replica_groups= or a declared result shape"));
    }
    const int64_t in = operand(0).dimension(static_cast<int>(dim));
    const int64_t out = out0->dimension(static_cast<int>(dim));
    if (in == kUnbounded || out == kUnbounded) {
      return Unimpl(StrCat(op_, " over an unbounded dimension"));
    }
    shards = in > 0 ? (out + in - 1) / in : 1;
  }
  if (*shards <= 0) return Invalid(StrCat(op_, " has an empty replica group"));
  std::vector<Shape> results;
  for (int i = 0; i < count(); ++i) {
    Shape r = operand(i);
    r.clear_layout();
    int64_t& size = (*r.mutable_dimensions())[dim];
    if (size != kUnbounded && !CheckedMul(size, *shards, &size)) {
      return Invalid(StrCat(op_, " result size overflows"));
    }
    results.push_back(std::move(r));
  }
  Shape gathered = count() == 1 ? results[0] : Shape::Tuple(results);
  if (!start) return gathered;
  Shape input = count() == 1 ? operand(0) : Tuple().value();
  return Shape::Tuple({std::move(input), std::move(gathered)});
}

absl::StatusOr<Shape> Inferrer::ReduceScatter() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  for (int i = 0; i < count(); ++i) {
    if (dim < 0 || dim >= operand(i).rank()) {
      return Invalid(StrCat("reduce-scatter dimension ", dim, " is out of range for operand ", i,
                            " (", Str(operand(i)), ")"));
    }
  }
  std::optional<int64_t> shards = GroupSize();
  if (!shards) {
    const Shape* d = declared();
    const Shape* out0 = nullptr;
    if (d != nullptr) {
      out0 = count() == 1 ? d : d->IsTuple() && d->tuple_count() > 0 ? &d->tuple_shape(0) : nullptr;
    }
    if (out0 == nullptr || !out0->IsArray() || out0->rank() <= dim) {
      return Unimpl(
          "the shard count of reduce-scatter is unknown without replica_groups= or a declared "
          "result shape");
    }
    const int64_t in = operand(0).dimension(static_cast<int>(dim));
    const int64_t out = out0->dimension(static_cast<int>(dim));
    if (in == kUnbounded || out == kUnbounded) {
      return Unimpl("reduce-scatter over an unbounded dimension");
    }
    shards = out > 0 ? (in + out - 1) / out : 1;
  }
  if (*shards <= 0) return Invalid("reduce-scatter has an empty replica group");
  std::vector<Shape> results;
  for (int i = 0; i < count(); ++i) {
    Shape r = operand(i);
    r.clear_layout();
    int64_t& size = (*r.mutable_dimensions())[dim];
    if (size != kUnbounded) {
      if (size % *shards != 0) {
        return Invalid(StrCat("reduce-scatter cannot split dimension ", dim, " of operand ", i,
                              " (", Str(operand(i)), ") into ", *shards, " shards"));
      }
      size /= *shards;
    }
    results.push_back(std::move(r));
  }
  if (count() == 1) return results[0];
  return Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> Inferrer::AllToAll() {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const std::optional<int64_t> split_count = GroupSize();
  if (instr_.has_dimensions()) {
    SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
    for (int i = 0; i < count(); ++i) {
      const Shape& s = operand(i);
      if (dim < 0 || dim >= s.rank()) {
        return Invalid(StrCat("all-to-all split dimension ", dim, " is out of range for operand ",
                              i, " (", Str(s), ")"));
      }
      const int64_t size = s.dimension(static_cast<int>(dim));
      if (split_count && *split_count > 0 && size != kUnbounded && size % *split_count != 0) {
        return Invalid(StrCat("all-to-all cannot split dimension ", dim, " of ", Str(s), " into ",
                              *split_count, " parts"));
      }
    }
    if (count() == 1) return operand(0);
    return Tuple();
  }
  for (int i = 1; i < count(); ++i) {
    if (!ShapesCompatible(operand(i), operand(0))) {
      return Invalid(StrCat("operand ", i, " of all-to-all has shape ", Str(operand(i)),
                            " but operand 0 has ", Str(operand(0))));
    }
  }
  if (split_count && *split_count != count()) {
    return Invalid(StrCat("all-to-all without dimensions= needs one operand per group member (",
                          *split_count, ") but has ", count()));
  }
  return Tuple();
}

absl::StatusOr<Shape> Inferrer::CollectivePermute(bool start) {
  SI_RETURN_IF_ERROR(ExpectAtLeast(1));
  // The in-place form passes (input, output, input offsets, output offsets).
  const bool in_place = count() == 4 && operand(2).IsTuple();
  Shape in;
  Shape out;
  if (count() == 1) {
    SI_RETURN_IF_ERROR(ExpectArray(0));
    in = out = operand(0);
  } else if (in_place) {
    in = operand(0);
    out = operand(1);
  } else {
    in = out = Tuple().value();
  }
  if (!start) return out;
  std::vector<Shape> elements = {std::move(in), std::move(out)};
  const Shape* d = declared();
  if (d != nullptr && d->IsTuple() && d->tuple_count() >= 2) {
    // The context buffers after (input, output) vary by backend; take them as declared.
    for (int i = 2; i < d->tuple_count(); ++i) elements.push_back(d->tuple_shape(i));
  } else {
    elements.push_back(Scalar(PT::kU32));
    elements.push_back(Scalar(PT::kU32));
  }
  return Shape::Tuple(std::move(elements));
}

// The `index`th element of operand 0, which must be a tuple (the -done ops).
absl::StatusOr<Shape> Inferrer::TupleElementOfOperand(int64_t index, std::string_view what) {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  const Shape& s = operand(0);
  if (!s.IsTuple() || s.tuple_count() <= index) {
    return Invalid(StrCat("operand 0 of ", op_, " must be ", what, " but has shape ", Str(s)));
  }
  return s.tuple_shape(static_cast<int>(index));
}

// ----------------------------------------------------------------------------------------------
// Asynchronous ops, channels and I/O

absl::StatusOr<Shape> Inferrer::AsyncStart() {
  SI_ASSIGN_OR_RETURN(const Computation* wrapped, Called(0, "a calls= computation"));
  SI_ASSIGN_OR_RETURN(const Signature sig, GetSignature(*wrapped));
  if (sig.params.size() != static_cast<size_t>(count())) {
    return Invalid(StrCat("computation ", sig.name, " wrapped by async-start takes ",
                          sig.params.size(), " parameters but async-start has ", count(),
                          " operands"));
  }
  for (int i = 0; i < count(); ++i) {
    if (!ShapesCompatible(*sig.params[i], operand(i))) {
      return Invalid(StrCat("operand ", i, " of async-start has shape ", Str(operand(i)),
                            " but parameter ", i, " of ", sig.name, " is ", Str(*sig.params[i])));
    }
  }
  std::vector<Shape> elements;
  SI_ASSIGN_OR_RETURN(Shape operands, Tuple());
  elements.push_back(std::move(operands));
  elements.push_back(*sig.result);
  const Shape* d = declared();
  if (d != nullptr && d->IsTuple() && d->tuple_count() >= 2) {
    // Context elements after (operands, result) are backend state; take them as declared.
    for (int i = 2; i < d->tuple_count(); ++i) elements.push_back(d->tuple_shape(i));
  }
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> Inferrer::AsyncUpdate() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  const Shape& s = operand(0);
  if (!s.IsTuple() || s.tuple_count() < 2) {
    return Invalid(StrCat(
        "operand 0 of ", op_,
        " must be an async-start or async-update result ((operands), result, ...) but has shape ",
        Str(s)));
  }
  return s;
}

absl::StatusOr<Shape> Inferrer::CopyStart() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  return Shape::Tuple({operand(0), operand(0), Scalar(PT::kU32)});
}

absl::StatusOr<Shape> Inferrer::CopyDone() {
  SI_RETURN_IF_ERROR(TupleElementOfOperand(1, "a copy-start result (dest, src, context)").status());
  const Shape& s = operand(0);
  if (!ShapesCompatible(s.tuple_shape(0), s.tuple_shape(1))) {
    return Invalid(StrCat("copy-done needs source and destination of one shape, got ", Str(s)));
  }
  return s.tuple_shape(0);
}

absl::StatusOr<Shape> Inferrer::Send() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectToken(1));
  return Shape::Tuple({operand(0), Scalar(PT::kU32), Shape::Token()});
}

absl::StatusOr<Shape> Inferrer::Recv() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectToken(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("received data shape");
  if (!d->IsTuple() || d->tuple_count() != 3) {
    return Invalid(
        StrCat("recv produces (data, u32[], token[]) but its declared shape is ", Str(*d)));
  }
  return Shape::Tuple({d->tuple_shape(0), Scalar(PT::kU32), Shape::Token()});
}

absl::StatusOr<Shape> Inferrer::RecvDone() {
  SI_ASSIGN_OR_RETURN(Shape data, TupleElementOfOperand(0, "a recv result"));
  return Shape::Tuple({std::move(data), Shape::Token()});
}

absl::StatusOr<Shape> Inferrer::Infeed() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectToken(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("fed data shape");
  if (!d->IsTuple() || d->tuple_count() != 2 || !d->tuple_shape(1).IsToken()) {
    return Invalid(StrCat("infeed produces (data, token[]) but its declared shape is ", Str(*d)));
  }
  return Shape::Tuple({d->tuple_shape(0), Shape::Token()});
}

absl::StatusOr<Shape> Inferrer::Outfeed() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectToken(1));
  if (attrs().outfeed_shape && !ShapesCompatible(*attrs().outfeed_shape, operand(0))) {
    return Invalid(StrCat("outfeed_shape=", Str(*attrs().outfeed_shape),
                          " does not match operand 0 (", Str(operand(0)), ")"));
  }
  return Shape::Token();
}

absl::StatusOr<Shape> Inferrer::AfterAll() {
  for (int i = 0; i < count(); ++i) SI_RETURN_IF_ERROR(ExpectToken(i));
  return Shape::Token();
}

absl::StatusOr<Shape> Inferrer::AddDependency() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectToken(1));
  return operand(0);
}

absl::StatusOr<Shape> Inferrer::GetDimensionSize() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  const Shape& s = operand(0);
  if (dim < 0 || dim >= s.rank()) {
    return Invalid(StrCat("get-dimension-size dimension ", dim, " is out of range for ", Str(s)));
  }
  if (s.dimension(static_cast<int>(dim)) > std::numeric_limits<int32_t>::max()) {
    return Invalid(
        StrCat("get-dimension-size: dimension ", dim, " of ", Str(s), " does not fit in s32"));
  }
  return Scalar(PT::kS32);
}

absl::StatusOr<Shape> Inferrer::SetDimensionSize() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  SI_ASSIGN_OR_RETURN(const int64_t dim, SingleDimension());
  const Shape& s = operand(0);
  if (dim < 0 || dim >= s.rank()) {
    return Invalid(StrCat("set-dimension-size dimension ", dim, " is out of range for ", Str(s)));
  }
  if (!IsScalarOf(operand(1), PT::kS32)) {
    return Invalid(
        StrCat("operand 1 of set-dimension-size must be s32[] but has shape ", Str(operand(1))));
  }
  if (s.dimension(static_cast<int>(dim)) > std::numeric_limits<int32_t>::max()) {
    return Invalid(
        StrCat("set-dimension-size: dimension ", dim, " of ", Str(s), " does not fit in s32"));
  }
  Shape result = s;
  result.set_dynamic_dimension(static_cast<int>(dim), true);
  return result;
}

absl::StatusOr<Shape> Inferrer::Rng() {
  SI_RETURN_IF_ERROR(ExpectCount(2));
  const Shape& a = operand(0);
  const Shape& b = operand(1);
  if (!a.IsScalar() || !b.IsScalar() || a.element_type() != b.element_type()) {
    return Invalid(
        StrCat("rng needs two scalar operands of one type, got ", Str(a), " and ", Str(b)));
  }
  const PT t = a.element_type();
  switch (attrs().distribution) {
    case RandomDistribution::kUniform:
      if (!IsFloatingPoint(t) && !IsIntegral(t) && t != PT::kPred) {
        return Invalid(
            StrCat("rng_uniform needs floating-point, integral or pred operands, got ", Str(a)));
      }
      break;
    case RandomDistribution::kNormal:
      if (!IsFloatingPoint(t)) {
        return Invalid(StrCat("rng_normal needs floating-point operands, got ", Str(a)));
      }
      break;
    case RandomDistribution::kInvalid:
      return Invalid("rng needs distribution=rng_uniform or rng_normal");
  }
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("result dimensions");
  if (!d->IsArray()) {
    return Invalid(StrCat("rng produces an array but its declared shape is ", Str(*d)));
  }
  return MakeArray(t, d->dimensions(), DynamicFlags(*d));
}

absl::StatusOr<Shape> Inferrer::RngBitGenerator() {
  SI_RETURN_IF_ERROR(ExpectCount(1));
  SI_RETURN_IF_ERROR(ExpectArray(0));
  const Shape* d = declared();
  if (d == nullptr) return NeedDeclared("generated bits shape");
  if (!d->IsTuple()) return *d;  // older XLA: bits only, no state
  if (d->tuple_count() != 2) {
    return Invalid(
        StrCat("rng-bit-generator produces (state, bits) but its declared shape is ", Str(*d)));
  }
  return Shape::Tuple({operand(0), d->tuple_shape(1)});
}

absl::StatusOr<Shape> Inferrer::BatchNorm() {
  const Opcode op = instr_.opcode();
  const int n = op == Opcode::kBatchNormTraining ? 3 : 5;
  SI_RETURN_IF_ERROR(ExpectCount(n));
  for (int i = 0; i < n; ++i) SI_RETURN_IF_ERROR(ExpectArray(i));
  const Shape& s = operand(0);
  const int64_t feature_index = attrs().feature_index;
  if (!IsFloatingPoint(s.element_type())) {
    return Invalid(StrCat(op_, " needs a floating-point operand, got ", Str(s)));
  }
  if (s.rank() < 1 || feature_index < 0 || feature_index >= s.rank()) {
    return Invalid(
        StrCat("feature_index=", feature_index, " of ", op_, " is out of range for ", Str(s)));
  }
  const int64_t features = s.dimension(static_cast<int>(feature_index));
  // batch-norm-grad's last operand is the output gradient, shaped like the operand.
  const int vectors = op == Opcode::kBatchNormGrad ? n - 1 : n;
  for (int i = 1; i < vectors; ++i) {
    const Shape& v = operand(i);
    if (v.rank() != 1 || !DimsMatch(v.dimension(0), features) ||
        !SameTypeIgnoringFp(v.element_type(), s.element_type())) {
      return Invalid(StrCat("operand ", i, " of ", op_, " must be a vector of the ", features,
                            " features of operand 0 (", Str(s), ") but has shape ", Str(v)));
    }
  }
  if (op == Opcode::kBatchNormGrad) {
    const Shape& grad = operand(4);
    if (!SameDimensionSizes(grad, s) ||
        !SameTypeIgnoringFp(grad.element_type(), s.element_type())) {
      return Invalid(StrCat("operand 4 of batch-norm-grad has shape ", Str(grad),
                            " but operand 0 has ", Str(s)));
    }
  }
  if (op == Opcode::kBatchNormInference) return s;
  const Shape feature_vector = MakeArray(s.element_type(), {features});
  return Shape::Tuple({s, feature_vector, feature_vector});
}

absl::StatusOr<Shape> Inferrer::Run() {
  SI_RETURN_IF_ERROR(CheckOperands());
  switch (instr_.opcode()) {
    case Opcode::kAbs:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCeil:
    case Opcode::kClz:
    case Opcode::kCopy:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kPopulationCount:
    case Opcode::kReal:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
      return Unary();
    case Opcode::kAdd:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kComplex:
    case Opcode::kDivide:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMulhi:
    case Opcode::kMultiply:
    case Opcode::kOr:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSubtract:
    case Opcode::kXor:
      return Binary();
    case Opcode::kCompare:
      return Compare();
    case Opcode::kSelect:
      return Select();
    case Opcode::kClamp:
      return Clamp();
    case Opcode::kConvert:
      return Convert();
    case Opcode::kBitcastConvert:
      return BitcastConvert();
    case Opcode::kStochasticConvert:
      return StochasticConvert();
    case Opcode::kReducePrecision:
      return ReducePrecision();
    case Opcode::kConstant:
      return Constant();
    case Opcode::kParameter:
      SI_RETURN_IF_ERROR(ExpectCount(0));
      return NeedDeclared("shape");
    case Opcode::kIota:
      return Iota();
    case Opcode::kBitcast:
      SI_RETURN_IF_ERROR(ExpectCount(1));
      return NeedDeclared("shape");
    case Opcode::kBroadcast:
      return Broadcast();
    case Opcode::kReshape:
      return Reshape();
    case Opcode::kDynamicReshape:
      return DynamicReshape();
    case Opcode::kTranspose:
      return Transpose();
    case Opcode::kSlice:
      return Slice();
    case Opcode::kDynamicSlice:
      return DynamicSlice();
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice();
    case Opcode::kConcatenate:
      return Concatenate();
    case Opcode::kPad:
      return Pad();
    case Opcode::kReverse:
      return Reverse();
    case Opcode::kGather:
      return Gather();
    case Opcode::kScatter:
      return Scatter();
    case Opcode::kReduce:
      return Reduce();
    case Opcode::kReduceWindow:
      return ReduceWindow();
    case Opcode::kSelectAndScatter:
      return SelectAndScatter();
    case Opcode::kDot:
      return Dot();
    case Opcode::kRaggedDot:
      return RaggedDot();
    case Opcode::kScaledDot:
      return ScaledDot();
    case Opcode::kConvolution:
      return Convolution();
    case Opcode::kFft:
      return Fft();
    case Opcode::kTriangularSolve:
      return TriangularSolve();
    case Opcode::kCholesky:
      return Cholesky();
    case Opcode::kSort:
      return Sort();
    case Opcode::kTopK:
      return TopK();
    case Opcode::kTuple:
      return Tuple();
    case Opcode::kGetTupleElement:
      return GetTupleElement();
    case Opcode::kWhile:
      return While();
    case Opcode::kConditional:
      return Conditional();
    case Opcode::kCall:
      return Call();
    case Opcode::kMap:
      return Map();
    case Opcode::kFusion:
      return Fusion();
    case Opcode::kCustomCall:
      return Unimpl("the result shape of custom-call comes only from its declaration");
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return AllReduce();
    case Opcode::kAllReduceDone:
      SI_RETURN_IF_ERROR(ExpectCount(1));
      return operand(0);
    case Opcode::kAllGather:
      return AllGather(/*start=*/false);
    case Opcode::kAllGatherStart:
      return AllGather(/*start=*/true);
    case Opcode::kAllGatherDone:
      return TupleElementOfOperand(1, "an all-gather-start result (input, output)");
    case Opcode::kReduceScatter:
      return ReduceScatter();
    case Opcode::kAllToAll:
      return AllToAll();
    case Opcode::kRaggedAllToAll:
      SI_RETURN_IF_ERROR(ExpectCount(6));
      SI_RETURN_IF_ERROR(ExpectArray(0));
      SI_RETURN_IF_ERROR(ExpectArray(1));
      return operand(1);  // the output buffer, updated in place
    case Opcode::kCollectiveBroadcast:
      SI_RETURN_IF_ERROR(ExpectAtLeast(1));
      if (count() == 1) return operand(0);
      return Tuple();
    case Opcode::kCollectivePermute:
      return CollectivePermute(/*start=*/false);
    case Opcode::kCollectivePermuteStart:
      return CollectivePermute(/*start=*/true);
    case Opcode::kCollectivePermuteDone:
      return TupleElementOfOperand(1, "a collective-permute-start result (input, output, ...)");
    case Opcode::kCollectiveReduce:
      return Unimpl("collective-reduce shape rules are not modelled");
    case Opcode::kAsyncStart:
      return AsyncStart();
    case Opcode::kAsyncUpdate:
      return AsyncUpdate();
    case Opcode::kAsyncDone: {
      SI_RETURN_IF_ERROR(AsyncUpdate().status());
      return operand(0).tuple_shape(1);
    }
    case Opcode::kCopyStart:
      return CopyStart();
    case Opcode::kCopyDone:
      return CopyDone();
    case Opcode::kSend:
      return Send();
    case Opcode::kSendDone:
      SI_RETURN_IF_ERROR(ExpectCount(1));
      return Shape::Token();
    case Opcode::kRecv:
      return Recv();
    case Opcode::kRecvDone:
      return RecvDone();
    case Opcode::kInfeed:
      return Infeed();
    case Opcode::kOutfeed:
      return Outfeed();
    case Opcode::kAfterAll:
      return AfterAll();
    case Opcode::kAddDependency:
      return AddDependency();
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      SI_RETURN_IF_ERROR(ExpectCount(1));
      return operand(0);
    case Opcode::kGetDimensionSize:
      return GetDimensionSize();
    case Opcode::kSetDimensionSize:
      return SetDimensionSize();
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      SI_RETURN_IF_ERROR(ExpectCount(0));
      return Scalar(PT::kU32);
    case Opcode::kRng:
      return Rng();
    case Opcode::kRngBitGenerator:
      return RngBitGenerator();
    case Opcode::kRngGetAndUpdateState:
      SI_RETURN_IF_ERROR(ExpectCount(0));
      return MakeArray(PT::kU64, {2});
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return BatchNorm();
    case Opcode::kScan:
      return Unimpl("scan shape rules are not modelled");
    case Opcode::kShuffle:
      return Unimpl("shuffle shape rules are not modelled");
  }
  return Unimpl(StrCat("no shape rule for opcode ", op_));
}

}  // namespace

bool HasDeclaredShape(const Instruction& instr) {
  return instr.shape().element_type() != PrimitiveType::kInvalid;
}

bool ShapesCompatible(const Shape& a, const Shape& b) { return CompatibleImpl(a, b, false); }

bool ShapesCompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  return CompatibleImpl(a, b, true);
}

absl::Status ValidateShape(const Shape& shape) {
  return ValidateShapeImpl(shape, 0, /*check_layout=*/true);
}

absl::StatusOr<Shape> InferShape(const Instruction& instr) { return Inferrer(instr).Run(); }

}  // namespace hlowb
