#include "plugins/lapack/lapack_plugin.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ir/instruction.h"
#include "core/ir/layout_offsets.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/ffi/ffi_attributes.h"
#include "plugins/lapack/lapack_kernels.h"

namespace hlowb {
namespace {

using lapack::Complex;
using Operands = std::vector<const Literal*>;

enum class Routine { kPotrf, kTrsm, kGetrf, kGeqrf, kOrgqr };

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

std::vector<int64_t> BatchDims(const std::vector<int64_t>& dims) {
  return std::vector<int64_t>(dims.begin(), dims.end() - 2);
}

std::vector<int64_t> Append(std::vector<int64_t> dims, int64_t last) {
  dims.push_back(last);
  return dims;
}

std::string Dims(PrimitiveType type, const std::vector<int64_t>& dims) {
  return PrintShape(Shape::Array(type, dims), false);
}

absl::Status Invalid(const std::string& what) { return absl::InvalidArgumentError(what); }


// The layout operand k is handed over in: the custom call's constraint, else the operand's own.
const Shape& OperandLayout(const Instruction& instr, int k, const Literal& value) {
  const auto& constraints = instr.attrs_or_default().operand_layout_constraints;
  if (constraints.has_value() && k < static_cast<int>(constraints->size()) &&
      (*constraints)[k].has_layout()) {
    return (*constraints)[k];
  }
  if (k < instr.operand_count() && instr.operand(k)->shape().has_layout()) {
    return instr.operand(k)->shape();
  }
  return value.shape();
}

// The elements of a float or complex array in memory order.
absl::StatusOr<std::vector<Complex>> ReadMemory(const Literal& value, const Shape& layout) {
  const Shape& s = value.shape();
  if (layout.dimensions() != s.dimensions()) {
    return Invalid(StrCat("the layout constraint ", PrintShape(layout, true),
                          " does not match the operand ", PrintShape(s, false)));
  }
  absl::StatusOr<std::vector<int64_t>> offsets = LayoutMemoryOffsets(layout);
  if (!offsets.ok()) return offsets.status();
  std::vector<Complex> memory(offsets->size());
  for (size_t i = 0; i < offsets->size(); ++i) {
    Complex v;
    switch (s.element_type()) {
      case PrimitiveType::kF32: v = value.data_as<float>()[i]; break;
      case PrimitiveType::kF64: v = value.data_as<double>()[i]; break;
      case PrimitiveType::kC64: {
        const std::complex<float> c = value.data_as<std::complex<float>>()[i];
        v = Complex(c.real(), c.imag());
        break;
      }
      case PrimitiveType::kC128: v = value.data_as<Complex>()[i]; break;
      default:
        return Invalid(StrCat("element type ", PrimitiveTypeName(s.element_type()),
                              " is not one LAPACK computes"));
    }
    memory[(*offsets)[i]] = v;
  }
  return memory;
}

// An array of `shape` (element type, dimensions, layout) whose memory holds `memory`.
absl::StatusOr<Literal> WriteMemory(const std::vector<Complex>& memory, const Shape& shape) {
  absl::StatusOr<std::vector<int64_t>> offsets = LayoutMemoryOffsets(shape);
  if (!offsets.ok()) return offsets.status();
  Literal out(Shape::Array(shape.element_type(), shape.dimensions()));
  for (size_t i = 0; i < offsets->size(); ++i) {
    const Complex v = memory[(*offsets)[i]];
    switch (shape.element_type()) {
      case PrimitiveType::kF32:
        out.mutable_data_as<float>()[i] = static_cast<float>(v.real());
        break;
      case PrimitiveType::kF64: out.mutable_data_as<double>()[i] = v.real(); break;
      case PrimitiveType::kC64:
        out.mutable_data_as<std::complex<float>>()[i] =
            std::complex<float>(static_cast<float>(v.real()), static_cast<float>(v.imag()));
        break;
      case PrimitiveType::kC128: out.mutable_data_as<Complex>()[i] = v; break;
      default:
        return Invalid(StrCat("element type ", PrimitiveTypeName(shape.element_type()),
                              " is not one LAPACK computes"));
    }
  }
  return out;
}

absl::StatusOr<Literal> WriteMemory(const std::vector<int32_t>& memory, const Shape& shape) {
  absl::StatusOr<std::vector<int64_t>> offsets = LayoutMemoryOffsets(shape);
  if (!offsets.ok()) return offsets.status();
  Literal out(Shape::Array(PrimitiveType::kS32, shape.dimensions()));
  for (size_t i = 0; i < offsets->size(); ++i) {
    out.mutable_data_as<int32_t>()[i] = memory[(*offsets)[i]];
  }
  return out;
}

absl::Status ExpectArray(const Shape& got, PrimitiveType type, const std::vector<int64_t>& dims,
                         std::string_view what) {
  if (got.IsArray() && got.element_type() == type && got.dimensions() == dims) {
    return absl::OkStatus();
  }
  return Invalid(StrCat(what, " is ", PrintShape(got, false), "; expected ", Dims(type, dims)));
}

// The matrices operand: `type`, at least two dimensions; its dimensions.
absl::StatusOr<std::vector<int64_t>> MatrixDims(const Literal& value, PrimitiveType type,
                                                std::string_view what) {
  const Shape& s = value.shape();
  if (!s.IsArray() || s.element_type() != type || s.rank() < 2) {
    return Invalid(StrCat(what, " is ", PrintShape(s, false), "; expected ",
                          PrimitiveTypeName(type), "[batch..., rows, cols]"));
  }
  return s.dimensions();
}

absl::Status ExpectTuple(const Shape& out, int count, std::string_view results) {
  if (out.IsTuple() && out.tuple_count() == count) return absl::OkStatus();
  return Invalid(StrCat("the result is ", PrintShape(out, false), "; expected a tuple ",
                        results));
}

absl::Status ExpectOperands(const Operands& ops, size_t min, size_t max, std::string_view what) {
  if (ops.size() >= min && ops.size() <= max) return absl::OkStatus();
  return Invalid(StrCat("takes ", what, "; got ", ops.size(), " operands"));
}

Literal MakeTuple(const Shape& out, std::vector<Literal> elements) {
  Literal result(out, /*allocate=*/false);
  *result.mutable_tuple_elements() = std::move(elements);
  return result;
}

// A character attribute (ui8 in backend_config) that must be one of `allowed`.
absl::StatusOr<char> CharAttribute(const FfiAttributeMap& attrs, std::string_view name,
                                   std::string_view allowed) {
  std::string choices;
  for (char c : allowed) {
    choices += StrCat(choices.empty() ? "" : ", ", "'", std::string(1, c), "' (",
                      static_cast<int>(c), ")");
  }
  for (const auto& [key, value] : attrs) {
    if (key != name) continue;
    if (value.kind != FfiAttribute::Kind::kScalar || !IsIntegral(value.type) ||
        value.bytes.empty()) {
      return Invalid(StrCat("attribute ", name, " = ", value.ToString(),
                            " is not an integer character; expected one of ", choices));
    }
    uint64_t v = 0;
    for (size_t i = value.bytes.size(); i-- > 0;) v = (v << 8) | value.bytes[i];
    for (char c : allowed) {
      if (v == static_cast<uint64_t>(c)) return c;
    }
    return Invalid(StrCat("attribute ", name, " = ", value.ToString(), " is not one of ",
                          choices));
  }
  return Invalid(StrCat("backend_config has no ", name, " attribute; expected one of ", choices,
                        " as ", name, " = N : ui8"));
}

absl::StatusOr<FfiAttributeMap> Attributes(const Instruction& instr) {
  absl::StatusOr<FfiAttributeMap> attrs = ParseFfiAttributes(instr.backend_config());
  if (!attrs.ok()) {
    return Invalid(StrCat("backend_config is not an FFI attribute dictionary: ",
                          attrs.status().message()));
  }
  return attrs;
}

// The dimensions of the one operand of potrf, getrf and geqrf: a batch of matrices of `type`.
absl::StatusOr<std::vector<int64_t>> OneMatrixOperand(const Operands& ops, PrimitiveType type) {
  if (absl::Status st = ExpectOperands(ops, 1, 1, "one operand (the matrices)"); !st.ok()) {
    return st;
  }
  return MatrixDims(*ops[0], type, "the operand");
}

absl::StatusOr<Literal> Potrf(const Instruction& instr, const Operands& ops, PrimitiveType type) {
  absl::StatusOr<std::vector<int64_t>> dims = OneMatrixOperand(ops, type);
  if (!dims.ok()) return dims.status();
  const int64_t n = dims->back();
  if ((*dims)[dims->size() - 2] != n) {
    return Invalid(StrCat("the operand ", Dims(type, *dims), " does not hold square matrices"));
  }
  const Shape& out = instr.shape();
  const std::vector<int64_t> batch_dims = BatchDims(*dims);
  if (absl::Status st = ExpectTuple(out, 2, "(factor, info)"); !st.ok()) return st;
  if (absl::Status st = ExpectArray(out.tuple_shape(0), type, *dims, "result 0 (factor)");
      !st.ok()) {
    return st;
  }
  if (absl::Status st = ExpectArray(out.tuple_shape(1), PrimitiveType::kS32, batch_dims,
                                    "result 1 (info)");
      !st.ok()) {
    return st;
  }
  absl::StatusOr<FfiAttributeMap> attrs = Attributes(instr);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<char> uplo = CharAttribute(*attrs, "uplo", "LU");
  if (!uplo.ok()) return uplo.status();
  absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[0], OperandLayout(instr, 0, *ops[0]));
  if (!a.ok()) return a.status();
  const int64_t batch = Product(batch_dims, 0, batch_dims.size());
  std::vector<int32_t> info(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) info[b] = lapack::Potrf(*uplo, n, a->data() + b * n * n, n);
  absl::StatusOr<Literal> factor = WriteMemory(*a, out.tuple_shape(0));
  if (!factor.ok()) return factor.status();
  absl::StatusOr<Literal> info_value = WriteMemory(info, out.tuple_shape(1));
  if (!info_value.ok()) return info_value.status();
  std::vector<Literal> elements;
  elements.push_back(std::move(*factor));
  elements.push_back(std::move(*info_value));
  return MakeTuple(out, std::move(elements));
}

absl::StatusOr<Literal> Trsm(const Instruction& instr, const Operands& ops, PrimitiveType type) {
  if (absl::Status st = ExpectOperands(ops, 2, 3, "two operands (a, b) and optionally alpha");
      !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<int64_t>> b_dims = MatrixDims(*ops[1], type, "operand 1 (b)");
  if (!b_dims.ok()) return b_dims.status();
  absl::StatusOr<FfiAttributeMap> attrs = Attributes(instr);
  if (!attrs.ok()) return attrs.status();
  absl::StatusOr<char> side = CharAttribute(*attrs, "side", "LR");
  if (!side.ok()) return side.status();
  absl::StatusOr<char> uplo = CharAttribute(*attrs, "uplo", "LU");
  if (!uplo.ok()) return uplo.status();
  absl::StatusOr<char> trans = CharAttribute(*attrs, "trans_x", "NTC");
  if (!trans.ok()) return trans.status();
  absl::StatusOr<char> diag = CharAttribute(*attrs, "diag", "NU");
  if (!diag.ok()) return diag.status();
  const std::vector<int64_t> batch_dims = BatchDims(*b_dims);
  const int64_t m = (*b_dims)[b_dims->size() - 2], n = b_dims->back();
  const int64_t k = *side == 'L' ? m : n;
  if (absl::Status st = ExpectArray(ops[0]->shape(), type, Append(Append(batch_dims, k), k),
                                    StrCat("operand 0 (a, for side '", std::string(1, *side),
                                           "' and b ", Dims(type, *b_dims), ")"));
      !st.ok()) {
    return st;
  }
  Complex alpha = 1;
  if (ops.size() == 3) {
    if (absl::Status st = ExpectArray(ops[2]->shape(), type, {}, "operand 2 (alpha)"); !st.ok()) {
      return st;
    }
    absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[2], ops[2]->shape());
    if (!a.ok()) return a.status();
    alpha = (*a)[0];
  }
  if (absl::Status st = ExpectArray(instr.shape(), type, *b_dims, "the result"); !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[0], OperandLayout(instr, 0, *ops[0]));
  if (!a.ok()) return a.status();
  absl::StatusOr<std::vector<Complex>> b = ReadMemory(*ops[1], OperandLayout(instr, 1, *ops[1]));
  if (!b.ok()) return b.status();
  const int64_t batch = Product(batch_dims, 0, batch_dims.size());
  for (int64_t i = 0; i < batch; ++i) {
    lapack::Trsm(*side, *uplo, *trans, *diag, m, n, alpha, a->data() + i * k * k, k,
                 b->data() + i * m * n, m);
  }
  return WriteMemory(*b, instr.shape());
}

absl::StatusOr<Literal> Getrf(const Instruction& instr, const Operands& ops, PrimitiveType type) {
  absl::StatusOr<std::vector<int64_t>> dims = OneMatrixOperand(ops, type);
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t> batch_dims = BatchDims(*dims);
  const int64_t m = (*dims)[dims->size() - 2], n = dims->back(), k = std::min(m, n);
  const Shape& out = instr.shape();
  if (absl::Status st = ExpectTuple(out, 3, "(lu, ipiv, info)"); !st.ok()) return st;
  if (absl::Status st = ExpectArray(out.tuple_shape(0), type, *dims, "result 0 (lu)"); !st.ok()) {
    return st;
  }
  if (absl::Status st = ExpectArray(out.tuple_shape(1), PrimitiveType::kS32,
                                    Append(batch_dims, k), "result 1 (ipiv)");
      !st.ok()) {
    return st;
  }
  if (absl::Status st = ExpectArray(out.tuple_shape(2), PrimitiveType::kS32, batch_dims,
                                    "result 2 (info)");
      !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[0], OperandLayout(instr, 0, *ops[0]));
  if (!a.ok()) return a.status();
  const int64_t batch = Product(batch_dims, 0, batch_dims.size());
  std::vector<int32_t> ipiv(static_cast<size_t>(batch * k)), info(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    info[b] = lapack::Getrf(m, n, a->data() + b * m * n, m, ipiv.data() + b * k);
  }
  std::vector<Literal> elements;
  for (auto value : {WriteMemory(*a, out.tuple_shape(0)), WriteMemory(ipiv, out.tuple_shape(1)),
                     WriteMemory(info, out.tuple_shape(2))}) {
    if (!value.ok()) return value.status();
    elements.push_back(std::move(*value));
  }
  return MakeTuple(out, std::move(elements));
}

absl::StatusOr<Literal> Geqrf(const Instruction& instr, const Operands& ops, PrimitiveType type) {
  absl::StatusOr<std::vector<int64_t>> dims = OneMatrixOperand(ops, type);
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t> batch_dims = BatchDims(*dims);
  const int64_t m = (*dims)[dims->size() - 2], n = dims->back(), k = std::min(m, n);
  const Shape& out = instr.shape();
  if (absl::Status st = ExpectTuple(out, 2, "(qr, tau)"); !st.ok()) return st;
  if (absl::Status st = ExpectArray(out.tuple_shape(0), type, *dims, "result 0 (qr)"); !st.ok()) {
    return st;
  }
  if (absl::Status st = ExpectArray(out.tuple_shape(1), type, Append(batch_dims, k),
                                    "result 1 (tau)");
      !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[0], OperandLayout(instr, 0, *ops[0]));
  if (!a.ok()) return a.status();
  const int64_t batch = Product(batch_dims, 0, batch_dims.size());
  std::vector<Complex> tau(static_cast<size_t>(batch * k));
  for (int64_t b = 0; b < batch; ++b) {
    lapack::Geqrf(m, n, a->data() + b * m * n, m, tau.data() + b * k);
  }
  std::vector<Literal> elements;
  for (auto value : {WriteMemory(*a, out.tuple_shape(0)), WriteMemory(tau, out.tuple_shape(1))}) {
    if (!value.ok()) return value.status();
    elements.push_back(std::move(*value));
  }
  return MakeTuple(out, std::move(elements));
}

absl::StatusOr<Literal> Orgqr(const Instruction& instr, const Operands& ops, PrimitiveType type) {
  if (absl::Status st = ExpectOperands(ops, 2, 2, "two operands (a, tau)"); !st.ok()) return st;
  absl::StatusOr<std::vector<int64_t>> dims = MatrixDims(*ops[0], type, "operand 0 (a)");
  if (!dims.ok()) return dims.status();
  const std::vector<int64_t> batch_dims = BatchDims(*dims);
  const int64_t m = (*dims)[dims->size() - 2], n = dims->back();
  const Shape& tau_shape = ops[1]->shape();
  if (!tau_shape.IsArray() || tau_shape.rank() != static_cast<int>(batch_dims.size()) + 1) {
    return Invalid(StrCat("operand 1 (tau) is ", PrintShape(tau_shape, false), "; expected ",
                          PrimitiveTypeName(type), "[batch..., k]"));
  }
  const int64_t k = tau_shape.dimensions().back();
  if (absl::Status st = ExpectArray(tau_shape, type, Append(batch_dims, k), "operand 1 (tau)");
      !st.ok()) {
    return st;
  }
  if (!(m >= n && n >= k)) {
    return Invalid(StrCat("needs rows >= cols >= reflectors; got a ", Dims(type, *dims),
                          " and ", k, " reflectors"));
  }
  if (absl::Status st = ExpectArray(instr.shape(), type, *dims, "the result"); !st.ok()) {
    return st;
  }
  absl::StatusOr<std::vector<Complex>> a = ReadMemory(*ops[0], OperandLayout(instr, 0, *ops[0]));
  if (!a.ok()) return a.status();
  absl::StatusOr<std::vector<Complex>> tau =
      ReadMemory(*ops[1], OperandLayout(instr, 1, *ops[1]));
  if (!tau.ok()) return tau.status();
  const int64_t batch = Product(batch_dims, 0, batch_dims.size());
  for (int64_t b = 0; b < batch; ++b) {
    lapack::Orgqr(m, n, k, a->data() + b * m * n, m, tau->data() + b * k);
  }
  return WriteMemory(*a, instr.shape());
}

struct RoutineInfo {
  Routine routine;
  const char* name;  // the target's name after the type letter
  const char* summary;
};

}  // namespace

absl::Status RegisterLapackPlugin(CustomCallRegistry* registry) {
  const struct {
    char letter;
    PrimitiveType type;
  } types[] = {{'s', PrimitiveType::kF32},
               {'d', PrimitiveType::kF64},
               {'c', PrimitiveType::kC64},
               {'z', PrimitiveType::kC128}};
  const RoutineInfo routines[] = {
      {Routine::kPotrf, "potrf", "Cholesky factorization with LAPACK's info (jaxlib potrf)"},
      {Routine::kTrsm, "trsm", "triangular solve with several right-hand sides (jaxlib trsm)"},
      {Routine::kGetrf, "getrf", "LU factorization with partial pivoting (jaxlib getrf)"},
      {Routine::kGeqrf, "geqrf", "Householder QR factorization (jaxlib geqrf)"},
      {Routine::kOrgqr, "orgqr", "Q from Householder reflectors (jaxlib orgqr/ungqr)"},
  };
  for (const auto& t : types) {
    for (const RoutineInfo& r : routines) {
      const bool complex = IsComplex(t.type);
      std::string name = r.name;
      if (r.routine == Routine::kOrgqr && complex) name = "ungqr";
      const PrimitiveType type = t.type;
      const Routine routine = r.routine;
      CustomCallFn fn = [routine, type](const Instruction& instr,
                                        const Operands& ops) -> absl::StatusOr<Literal> {
        switch (routine) {
          case Routine::kPotrf: return Potrf(instr, ops, type);
          case Routine::kTrsm: return Trsm(instr, ops, type);
          case Routine::kGetrf: return Getrf(instr, ops, type);
          case Routine::kGeqrf: return Geqrf(instr, ops, type);
          case Routine::kOrgqr: return Orgqr(instr, ops, type);
        }
        return absl::InternalError("unknown LAPACK routine");
      };
      absl::Status st = registry->Register({StrCat("lapack_", std::string(1, t.letter), name,
                                                   "_ffi"),
                                            "cpu", "lapack", r.summary, std::move(fn), {}});
      if (!st.ok()) return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace hlowb
