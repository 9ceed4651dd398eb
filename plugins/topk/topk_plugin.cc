#include "plugins/topk/topk_plugin.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "core/ir/computation.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

// Whether a two-parameter comparator is compare(p0, p1) or compare(p1, p0) with an ordering
// direction: true keeps the largest values, false the smallest; nullopt for anything else.
std::optional<bool> PlainCompareKeepsLargest(const Computation& cmp) {
  const Instruction* root = cmp.root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter ||
      root->operand(0)->parameter_number() == root->operand(1)->parameter_number()) {
    return std::nullopt;
  }
  const bool swapped = root->operand(0)->parameter_number() == 1;
  switch (root->attrs_or_default().comparison_direction) {
    case ComparisonDirection::kGt:
    case ComparisonDirection::kGe: return !swapped;
    case ComparisonDirection::kLt:
    case ComparisonDirection::kLe: return swapped;
    default: return std::nullopt;
  }
}

// The comparator's parameters must be scalars: two of the value type, then (optionally) two of
// one integer type for the indices.
absl::Status CheckComparator(const Computation& cmp, PrimitiveType value_type) {
  const int params = cmp.parameter_count();
  if (params != 2 && params != 4) {
    return absl::InvalidArgumentError(
        StrCat("TopK comparator %", cmp.name(), " takes ", params,
               " parameters; expected 2 (two values) or 4 (two values, then two indices)"));
  }
  for (int i = 0; i < params; ++i) {
    const Shape& s = cmp.parameter(i)->shape();
    const bool ok = s.IsScalar() && (i < 2 ? s.element_type() == value_type
                                           : IsIntegral(s.element_type()));
    if (!ok) {
      return absl::InvalidArgumentError(
          StrCat("TopK comparator %", cmp.name(), " parameter ", i, " is ",
                 PrintShape(s, false), "; expected ",
                 i < 2 ? StrCat(PrimitiveTypeName(value_type), "[]")
                       : std::string("an integer scalar (the index)")));
    }
  }
  const Instruction* root = cmp.root();
  if (root == nullptr || !root->shape().IsScalar() ||
      root->shape().element_type() != PrimitiveType::kPred) {
    return absl::InvalidArgumentError(
        StrCat("TopK comparator %", cmp.name(), " must return pred[]"));
  }
  return absl::OkStatus();
}

// The first k elements of every row (last dimension n) of `sorted`.
Literal LeadingColumns(const Literal& sorted, int64_t n, int64_t k) {
  std::vector<int64_t> dims = sorted.shape().dimensions();
  dims.back() = k;
  Literal out(Shape::Array(sorted.shape().element_type(), dims));
  const int eb = sorted.element_bytes();
  const int64_t rows = n == 0 ? 0 : sorted.element_count() / n;
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(out.mutable_data()->data() + r * k * eb, sorted.data().data() + r * n * eb,
                static_cast<size_t>(k * eb));
  }
  return out;
}

absl::StatusOr<Literal> Iota(PrimitiveType type, const std::vector<int64_t>& dims) {
  std::vector<double> values(static_cast<size_t>(Shape::Array(type, dims).ElementCount()));
  const int64_t n = dims.back();
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % n);
  return FromDoubles(type, dims, values);
}

// Values and iota sorted together along the last dimension by a four-parameter comparator
// (value_lhs, value_rhs, index_lhs, index_rhs), through the evaluator's stable sort.
absl::StatusOr<std::pair<Literal, Literal>> SortWithIndices(const Computation& cmp,
                                                            const Literal& x) {
  const Shape& in = x.shape();
  const PrimitiveType index_type = cmp.parameter(2)->shape().element_type();
  absl::StatusOr<Literal> iota = Iota(index_type, in.dimensions());
  if (!iota.ok()) return iota.status();
  ScratchComputation s;
  Instruction* values = s.Parameter(in);
  Instruction* indices = s.Parameter(iota->shape());
  Instruction* sort = s.Add(Opcode::kSort, Shape::Tuple({in, iota->shape()}), {values, indices});
  sort->mutable_dimensions()->push_back(in.rank() - 1);
  sort->set_has_dimensions(true);
  sort->mutable_attrs()->is_stable = true;
  // The comparator stays in its own module; the evaluator only follows the pointer.
  sort->mutable_called_computations()->push_back(const_cast<Computation*>(&cmp));
  absl::StatusOr<Literal> sorted = s.Run(sort, {&x, &*iota});
  if (!sorted.ok()) return sorted.status();
  std::vector<Literal>& elements = *sorted->mutable_tuple_elements();
  return std::make_pair(std::move(elements[0]), std::move(elements[1]));
}

// Values sorted along the last dimension by a two-parameter comparator evaluated for every
// comparison (a stable merge sort, which stays well defined for a comparator that is not a
// strict weak order), with their s32 positions.
absl::StatusOr<std::pair<Literal, Literal>> SortByComparator(const Computation& cmp,
                                                             const Literal& x) {
  const Shape& in = x.shape();
  const int64_t n = in.dimensions().back();
  const int64_t rows = n == 0 ? 0 : x.element_count() / n;
  const int eb = x.element_bytes();
  Literal values(in);
  Literal indices(Shape::Array(PrimitiveType::kS32, in.dimensions()));
  Literal lhs(Shape::Array(in.element_type(), {}));
  Literal rhs(Shape::Array(in.element_type(), {}));
  absl::Status error;
  // True when element b of the row must come before element a.
  auto before = [&](int64_t base, int64_t b, int64_t a) {
    if (!error.ok()) return false;
    std::memcpy(lhs.mutable_data()->data(), x.data().data() + (base + b) * eb, eb);
    std::memcpy(rhs.mutable_data()->data(), x.data().data() + (base + a) * eb, eb);
    absl::StatusOr<Literal> r = EvaluateComputation(cmp, {&lhs, &rhs});
    if (!r.ok()) {
      error = r.status();
      return false;
    }
    return r->data_as<bool>()[0];
  };
  std::vector<int64_t> perm(n), scratch(n);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * n;
    for (int64_t i = 0; i < n; ++i) perm[i] = i;
    for (int64_t width = 1; width < n && error.ok(); width *= 2) {
      for (int64_t lo = 0; lo < n; lo += 2 * width) {
        const int64_t mid = std::min(lo + width, n), hi = std::min(lo + 2 * width, n);
        int64_t i = lo, j = mid, o = lo;
        while (i < mid && j < hi) {
          scratch[o++] = before(base, perm[j], perm[i]) ? perm[j++] : perm[i++];
        }
        while (i < mid) scratch[o++] = perm[i++];
        while (j < hi) scratch[o++] = perm[j++];
      }
      std::swap(perm, scratch);
    }
    if (!error.ok()) return error;
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(values.mutable_data()->data() + (base + i) * eb,
                  x.data().data() + (base + perm[i]) * eb, eb);
      indices.mutable_data_as<int32_t>()[base + i] = static_cast<int32_t>(perm[i]);
    }
  }
  return std::make_pair(std::move(values), std::move(indices));
}

// The evaluator's topk op (largest or smallest first, ties by lower index).
absl::StatusOr<std::pair<Literal, Literal>> PlainTopK(const Literal& x, int64_t k, bool largest) {
  const Shape& in = x.shape();
  std::vector<int64_t> dims = in.dimensions();
  dims.back() = k;
  ScratchComputation s;
  Instruction* p = s.Parameter(in);
  Instruction* topk = s.Add(Opcode::kTopK,
                            Shape::Tuple({Shape::Array(in.element_type(), dims),
                                          Shape::Array(PrimitiveType::kS32, dims)}),
                            {p});
  topk->mutable_attrs()->k = k;
  topk->mutable_attrs()->largest = largest;
  absl::StatusOr<Literal> r = s.Run(topk, {&x});
  if (!r.ok()) return r.status();
  std::vector<Literal>& elements = *r->mutable_tuple_elements();
  return std::make_pair(std::move(elements[0]), std::move(elements[1]));
}

absl::StatusOr<Literal> EvalTopKCall(const Instruction& instr, const Operands& ops) {
  if (ops.size() != 1) return absl::InvalidArgumentError("TopK takes one operand");
  const Shape& out = instr.shape();
  const Shape& in = ops[0]->shape();
  if (!out.IsTuple() || out.tuple_count() != 2 || !out.tuple_shape(0).IsArray() ||
      !out.tuple_shape(1).IsArray() || !IsIntegral(out.tuple_shape(1).element_type()) ||
      !in.IsArray() || in.rank() < 1 || out.tuple_shape(0).rank() != in.rank()) {
    return absl::InvalidArgumentError(
        StrCat("TopK expects an array operand and a (values, integer indices) result; got ",
               PrintShape(in, false), " -> ", PrintShape(out, false)));
  }
  const int64_t n = in.dimensions().back();
  const int64_t k = out.tuple_shape(0).dimensions().back();
  if (k < 0 || k > n) {
    return absl::InvalidArgumentError(
        StrCat("TopK result keeps ", k, " of ", n, " elements along the last dimension"));
  }
  const Computation* cmp =
      instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
  absl::StatusOr<std::pair<Literal, Literal>> r;
  std::optional<bool> plain = true;  // no comparator: largest first
  if (cmp != nullptr) {
    if (absl::Status st = CheckComparator(*cmp, in.element_type()); !st.ok()) return st;
    plain = cmp->parameter_count() == 2 ? PlainCompareKeepsLargest(*cmp) : std::nullopt;
  }
  if (plain.has_value()) {
    r = PlainTopK(*ops[0], k, *plain);
  } else {
    r = cmp->parameter_count() == 4 ? SortWithIndices(*cmp, *ops[0])
                                    : SortByComparator(*cmp, *ops[0]);
    if (r.ok()) {
      r->first = LeadingColumns(r->first, n, k);
      r->second = LeadingColumns(r->second, n, k);
    }
  }
  if (!r.ok()) return r.status();
  std::vector<Literal> elements;
  elements.push_back(std::move(r->first));
  elements.push_back(std::move(r->second));
  const PrimitiveType index_type = out.tuple_shape(1).element_type();
  if (elements[1].shape().element_type() != index_type) {
    absl::StatusOr<Literal> idx = ConvertLiteral(elements[1], index_type);
    if (!idx.ok()) return idx.status();
    elements[1] = std::move(*idx);
  }
  Literal result(out, /*allocate=*/false);
  *result.mutable_tuple_elements() = std::move(elements);
  return result;
}

}  // namespace

absl::Status RegisterTopKPlugin(CustomCallRegistry* registry) {
  return registry->Register(
      {"TopK", "", "topk", "top-k values and indices along the last dimension", EvalTopKCall, {}});
}

}  // namespace hlowb
