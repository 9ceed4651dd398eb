#include "replay/backends/cpu/cpu_sort_scatter.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "core/ir/attributes.h"
#include "core/ir/computation.h"
#include "replay/evaluator/scatter_pairs.h"

namespace hlowb::cpu {
namespace {

bool IsScalarOf(const Shape& s, PrimitiveType t) {
  return s.IsArray() && s.rank() == 0 && s.element_type() == t;
}

// Element types the compiled functions read and write (the emitter's, less the f8 types).
bool TypeTaken(PrimitiveType t) {
  if (t == PrimitiveType::kPred || IsIntegral(t) || IsComplex(t)) return true;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) return true;
  return t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

// An array operand with its data present, of `type` and `dims`.
bool UsableArray(const Literal* l, PrimitiveType type, const std::vector<int64_t>& dims) {
  if (l == nullptr || l->elided() || !l->shape().IsArray()) return false;
  if (l->shape().element_type() != type || l->shape().dimensions() != dims) return false;
  return static_cast<int64_t>(l->data().size()) >=
         l->element_count() * static_cast<int64_t>(l->element_bytes());
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

Literal CopyOf(const Literal& from) {
  Literal out = Literal::Uninitialized(Shape::Array(from.shape().element_type(),
                                                    from.shape().dimensions()));
  const size_t bytes = static_cast<size_t>(from.element_count()) * from.element_bytes();
  if (bytes > 0) std::memcpy(out.mutable_data()->data(), from.data().data(), bytes);
  return out;
}

absl::StatusOr<Literal> Result(std::vector<Literal> outs) {
  if (outs.size() == 1) return std::move(outs[0]);
  std::vector<Shape> shapes;
  for (const Literal& o : outs) shapes.push_back(o.shape());
  Literal t(Shape::Tuple(shapes), false);
  *t.mutable_tuple_elements() = std::move(outs);
  return t;
}

bool SortTakes(const Instruction& instr) {
  const int n = instr.operand_count();
  if (n < 1 || instr.dimensions().size() != 1 || instr.called_computations().size() != 1) {
    return false;
  }
  const Computation* comp = instr.called_computations()[0];
  if (comp == nullptr || comp->parameter_count() != 2 * n || comp->root() == nullptr) return false;
  const Shape& s0 = instr.operand(0)->shape();
  if (!s0.IsArray()) return false;
  const int64_t dim = instr.dimensions()[0];
  if (dim < 0 || dim >= s0.rank()) return false;
  for (int k = 0; k < n; ++k) {
    const Shape& s = instr.operand(k)->shape();
    if (!s.IsArray() || s.dimensions() != s0.dimensions() || !TypeTaken(s.element_type())) {
      return false;
    }
    if (!IsScalarOf(comp->parameter(2 * k)->shape(), s.element_type()) ||
        !IsScalarOf(comp->parameter(2 * k + 1)->shape(), s.element_type())) {
      return false;
    }
  }
  return IsScalarOf(comp->root()->shape(), PrimitiveType::kPred);
}

bool ScatterTakes(const Instruction& instr) {
  const int count = instr.operand_count();
  if (count < 3 || count % 2 == 0 || instr.called_computations().size() != 1) return false;
  if (!instr.attrs_or_default().scatter_dimension_numbers) return false;
  const int n = (count - 1) / 2;
  const Computation* comp = instr.called_computations()[0];
  if (comp == nullptr || comp->parameter_count() != 2 * n || comp->root() == nullptr) return false;
  const Shape& indices = instr.operand(n)->shape();
  if (!indices.IsArray() || !IsIntegral(indices.element_type())) return false;
  const Shape& root = comp->root()->shape();
  if (n > 1 && (!root.IsTuple() || static_cast<int>(root.tuple_shapes().size()) != n)) return false;
  for (int k = 0; k < n; ++k) {
    const Shape& o = instr.operand(k)->shape();
    const Shape& u = instr.operand(n + 1 + k)->shape();
    if (!o.IsArray() || !u.IsArray() || !TypeTaken(o.element_type())) return false;
    const PrimitiveType t = o.element_type();
    if (u.element_type() != t || o.dimensions() != instr.operand(0)->shape().dimensions() ||
        u.dimensions() != instr.operand(n + 1)->shape().dimensions()) {
      return false;
    }
    if (!IsScalarOf(comp->parameter(k)->shape(), t) ||
        !IsScalarOf(comp->parameter(n + k)->shape(), t)) {
      return false;
    }
    if (!IsScalarOf(n == 1 ? root : root.tuple_shapes()[k], t)) return false;
  }
  return true;
}

}  // namespace

bool LibrarySortScatterTakes(const Instruction& instr) {
  if (instr.opcode() == Opcode::kSort) return SortTakes(instr);
  if (instr.opcode() == Opcode::kScatter) return ScatterTakes(instr);
  return false;
}

std::optional<absl::StatusOr<Literal>> LibrarySort(const Instruction& instr,
                                                   const std::vector<const Literal*>& operands,
                                                   ScalarFn comparator,
                                                   const ParallelFor& parallel_for) {
  if (comparator == nullptr || instr.opcode() != Opcode::kSort || !SortTakes(instr) ||
      static_cast<int>(operands.size()) != instr.operand_count()) {
    return std::nullopt;
  }
  const size_t n = operands.size();
  const std::vector<int64_t> dims = instr.operand(0)->shape().dimensions();
  for (size_t k = 0; k < n; ++k) {
    if (!UsableArray(operands[k], instr.operand(static_cast<int>(k))->shape().element_type(),
                     dims)) {
      return std::nullopt;
    }
  }
  const int64_t dim = instr.dimensions()[0];
  const int64_t len = dims[dim];
  const int64_t stride = RowMajorStrides(dims)[dim];
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  std::vector<Literal> outs;
  std::vector<const uint8_t*> in(n);
  std::vector<uint8_t*> out(n);
  std::vector<int64_t> bytes(n);
  for (size_t k = 0; k < n; ++k) {
    outs.push_back(Literal::Uninitialized(Shape::Array(operands[k]->shape().element_type(), dims)));
    in[k] = operands[k]->data().data();
    bytes[k] = operands[k]->element_bytes();
  }
  for (size_t k = 0; k < n; ++k) out[k] = outs[k].mutable_data()->data();
  const int64_t slices = total == 0 ? 0 : total / len;
  // Slice s starts at the s-th position of the dimensions other than `dim`, in row-major order.
  auto sort_slices = [&](int64_t begin, int64_t end) {
    std::vector<int64_t> perm(len), pos(len);
    std::vector<void*> args(2 * n + 1);
    uint8_t less = 0;
    args[2 * n] = &less;
    for (int64_t s = begin; s < end; ++s) {
      const int64_t base = (s / stride) * len * stride + s % stride;
      for (int64_t j = 0; j < len; ++j) pos[j] = base + j * stride;
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
        for (size_t k = 0; k < n; ++k) {
          args[2 * k] = const_cast<uint8_t*>(in[k] + pos[x] * bytes[k]);
          args[2 * k + 1] = const_cast<uint8_t*>(in[k] + pos[y] * bytes[k]);
        }
        comparator(args.data());
        return less != 0;
      });
      for (size_t k = 0; k < n; ++k) {
        const int64_t b = bytes[k];
        for (int64_t j = 0; j < len; ++j) {
          std::memcpy(out[k] + pos[j] * b, in[k] + pos[perm[j]] * b, b);
        }
      }
    }
  };
  if (slices > 0) {
    // A slice costs about len * log2(len) comparisons; a part gets some 16K of them at least.
    int64_t log_len = 1;
    while ((int64_t{1} << log_len) < len) ++log_len;
    parallel_for(slices, std::max<int64_t>(1, 16384 / std::max<int64_t>(1, len * log_len)),
                 sort_slices);
  }
  return Result(std::move(outs));
}

std::optional<absl::StatusOr<Literal>> LibraryScatter(const Instruction& instr,
                                                      const std::vector<const Literal*>& operands,
                                                      ScalarFn combiner,
                                                      const ParallelFor& parallel_for) {
  if (combiner == nullptr || instr.opcode() != Opcode::kScatter || !ScatterTakes(instr) ||
      static_cast<int>(operands.size()) != instr.operand_count()) {
    return std::nullopt;
  }
  const size_t n = (operands.size() - 1) / 2;
  const std::vector<int64_t>& odims = instr.operand(0)->shape().dimensions();
  const std::vector<int64_t>& udims = instr.operand(static_cast<int>(n) + 1)->shape().dimensions();
  for (size_t k = 0; k < n; ++k) {
    const PrimitiveType t = instr.operand(static_cast<int>(k))->shape().element_type();
    if (!UsableArray(operands[k], t, odims) || !UsableArray(operands[n + 1 + k], t, udims)) {
      return std::nullopt;
    }
  }
  const Literal& indices = *operands[n];
  if (!UsableArray(&indices, instr.operand(static_cast<int>(n))->shape().element_type(),
                   instr.operand(static_cast<int>(n))->shape().dimensions())) {
    return std::nullopt;
  }
  // The updates' targets in the interpreter's order; what it calls malformed it reports itself.
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> listed = eval::ScatterPairs(
      instr, instr.operand(0)->shape(), indices, instr.operand(static_cast<int>(n) + 1)->shape());
  if (!listed.ok()) return std::nullopt;
  std::vector<std::pair<int64_t, int64_t>>& pairs = *listed;

  std::vector<Literal> outs;
  std::vector<uint8_t*> out(n);
  std::vector<const uint8_t*> upd(n);
  std::vector<int64_t> bytes(n);
  for (size_t k = 0; k < n; ++k) {
    outs.push_back(CopyOf(*operands[k]));
    upd[k] = operands[n + 1 + k]->data().data();
    bytes[k] = operands[k]->element_bytes();
  }
  for (size_t k = 0; k < n; ++k) out[k] = outs[k].mutable_data()->data();
  // The combiner reads every parameter before writing a result, so it writes in place.
  auto apply = [&](const std::pair<int64_t, int64_t>* begin,
                   const std::pair<int64_t, int64_t>* end) {
    std::vector<void*> args(3 * n);
    for (const std::pair<int64_t, int64_t>* p = begin; p != end; ++p) {
      for (size_t k = 0; k < n; ++k) {
        uint8_t* o = out[k] + p->first * bytes[k];
        args[k] = o;
        args[n + k] = const_cast<uint8_t*>(upd[k] + p->second * bytes[k]);
        args[2 * n + k] = o;
      }
      combiner(args.data());
    }
  };
  const int64_t elements = static_cast<int64_t>(operands[0]->element_count());
  constexpr int64_t kParallelPairs = int64_t{1} << 15;
  if (static_cast<int64_t>(pairs.size()) < kParallelPairs || elements < 2) {
    apply(pairs.data(), pairs.data() + pairs.size());
    return Result(std::move(outs));
  }
  // Group the pairs by ranges of the operand elements they write, keeping their order within a
  // group (a stable counting sort), then combine the groups in parallel.
  const int64_t groups = std::min<int64_t>(elements, 256);
  const int64_t per_group = (elements + groups - 1) / groups;
  std::vector<int64_t> first(groups + 1, 0);
  for (const auto& p : pairs) ++first[p.first / per_group + 1];
  for (int64_t g = 0; g < groups; ++g) first[g + 1] += first[g];
  std::vector<std::pair<int64_t, int64_t>> grouped(pairs.size());
  {
    std::vector<int64_t> at(first.begin(), first.end() - 1);
    for (const auto& p : pairs) grouped[at[p.first / per_group]++] = p;
  }
  pairs.clear();
  pairs.shrink_to_fit();
  parallel_for(groups, 1, [&](int64_t begin, int64_t end) {
    apply(grouped.data() + first[begin], grouped.data() + first[end]);
  });
  return Result(std::move(outs));
}

}  // namespace hlowb::cpu
