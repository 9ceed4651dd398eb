// sort (variadic, along one dimension, custom comparator) and topk. Sorting is always stable so
// results are deterministic. A comparator that is `compare(p0, p1)` LT/GT runs on typed keys;
// any other comparator runs through the interpreter for every comparison.
#include <algorithm>
#include <numeric>

#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/semantics.h"

namespace hlowb::eval {
namespace {

// Sort key of element i as a double-or-int pair usable with operator<.
struct Key {
  double f = 0;
  int64_t i = 0;
  uint64_t u = 0;
};

enum class KeyKind { kFloat, kTotal, kSigned, kUnsigned };

void ReadKeys(const Literal& wide, KeyKind kind, std::vector<Key>* keys) {
  int64_t n = wide.element_count();
  keys->resize(n);
  PrimitiveType t = wide.shape().element_type();
  for (int64_t j = 0; j < n; ++j) {
    Key& k = (*keys)[j];
    if (t == PrimitiveType::kF64 || t == PrimitiveType::kF32) {
      double v = t == PrimitiveType::kF64 ? wide.data_as<double>()[j] : wide.data_as<float>()[j];
      k.f = v;
      k.i = TotalOrderKey(v);
    } else if (IsUnsignedIntegral(t) || t == PrimitiveType::kPred) {
      k.u = wide.GetBits(j);
      k.i = static_cast<int64_t>(k.u);
    } else {
      k.i = wide.GetInt(j);
      k.u = static_cast<uint64_t>(k.i);
    }
  }
  (void)kind;
}

bool KeyLess(const Key& a, const Key& b, KeyKind kind) {
  switch (kind) {
    case KeyKind::kFloat: return a.f < b.f;
    case KeyKind::kTotal:
    case KeyKind::kSigned: return a.i < b.i;
    case KeyKind::kUnsigned: return a.u < b.u;
  }
  return false;
}

}  // namespace

absl::StatusOr<Literal> EvalSort(Evaluator& ev, const Instruction& instr, const Operands& ops) {
  if (ops.empty() || instr.dimensions().size() != 1) return Invalid(instr, "sort needs one dimension");
  const Shape& s = ops[0]->shape();
  int64_t dim = instr.dimensions()[0];
  if (dim < 0 || dim >= s.rank()) return Invalid(instr, "sort dimension out of range");
  for (const Literal* o : ops) {
    if (o->shape().dimensions() != s.dimensions()) return Invalid(instr, "sort operands differ in shape");
  }
  const Computation* comp =
      instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
  if (comp == nullptr || comp->parameter_count() != static_cast<int>(2 * ops.size())) {
    return Invalid(instr, "sort comparator must take two scalars per operand");
  }
  // Fast comparator: compare(p0, p1) or compare(p1, p0) with LT/GT.
  bool fast = false, greater = false;
  KeyKind kind = KeyKind::kFloat;
  const Instruction* root = comp->root();
  if (root->opcode() == Opcode::kCompare && root->operand_count() == 2) {
    const Instruction* a = root->operand(0);
    const Instruction* b = root->operand(1);
    const Instruction* p0 = comp->parameter(0);
    const Instruction* p1 = comp->parameter(1);
    ComparisonDirection d = root->attrs_or_default().comparison_direction;
    bool swapped = a == p1 && b == p0;
    if (((a == p0 && b == p1) || swapped) &&
        (d == ComparisonDirection::kLt || d == ComparisonDirection::kGt) &&
        !IsComplex(s.element_type())) {
      fast = true;
      greater = (d == ComparisonDirection::kGt) != swapped;
      PrimitiveType t = s.element_type();
      ComparisonType ct = root->attrs_or_default().comparison_type;
      if (IsFloatingPoint(t)) kind = ct == ComparisonType::kTotalOrder ? KeyKind::kTotal : KeyKind::kFloat;
      else if (ct == ComparisonType::kSigned || (ct == ComparisonType::kDefault && IsSignedIntegral(t))) kind = KeyKind::kSigned;
      else kind = KeyKind::kUnsigned;
      if (IsIntegral(t) && ct == ComparisonType::kSigned && IsUnsignedIntegral(t)) fast = false;
      if (IsIntegral(t) && ct == ComparisonType::kUnsigned && IsSignedIntegral(t)) fast = false;
    }
  }
  const auto& dims = s.dimensions();
  int64_t len = dims[dim];
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t stride = strides[dim];
  std::vector<int64_t> outer_dims = dims;
  outer_dims[dim] = 1;
  std::vector<Literal> outs;
  for (const Literal* o : ops) {
    Literal c(Shape::Array(o->shape().element_type(), dims));
    *c.mutable_data() = o->data();
    outs.push_back(std::move(c));
  }
  std::vector<Key> keys;
  Literal wide_holder;
  if (fast) ReadKeys(*WidenIfNarrow(ops[0], &wide_holder), kind, &keys);
  std::vector<int64_t> perm(len), pos(len);
  absl::Status error;
  std::vector<Literal> scalars(2 * ops.size());
  Operands args(2 * ops.size());
  if (s.element_type() != PrimitiveType::kInvalid && Product(dims) > 0) {
    std::vector<int64_t> idx(s.rank(), 0);
    do {
      int64_t base = 0;
      for (int d = 0; d < s.rank(); ++d) base += idx[d] * strides[d];
      for (int64_t j = 0; j < len; ++j) pos[j] = base + j * stride;
      std::iota(perm.begin(), perm.end(), 0);
      if (fast) {
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
          return greater ? KeyLess(keys[pos[y]], keys[pos[x]], kind)
                         : KeyLess(keys[pos[x]], keys[pos[y]], kind);
        });
      } else {
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t x, int64_t y) {
          if (!error.ok()) return false;
          for (size_t k = 0; k < ops.size(); ++k) {
            scalars[2 * k] = ScalarFrom(*ops[k], pos[x]);
            scalars[2 * k + 1] = ScalarFrom(*ops[k], pos[y]);
            args[2 * k] = &scalars[2 * k];
            args[2 * k + 1] = &scalars[2 * k + 1];
          }
          auto r = ev.CallScalar(*comp, args);
          if (!r.ok()) {
            error = r.status();
            return false;
          }
          if (r->shape().element_type() != PrimitiveType::kPred) {
            error = Invalid(instr, "sort comparator must return pred[]");
            return false;
          }
          return r->data_as<bool>()[0];
        });
        if (!error.ok()) return error;
      }
      for (size_t k = 0; k < ops.size(); ++k) {
        for (int64_t j = 0; j < len; ++j) CopyElement(*ops[k], pos[perm[j]], &outs[k], pos[j]);
      }
    } while (NextIndex(idx, outer_dims));
  }
  if (ops.size() == 1) return std::move(outs[0]);
  std::vector<Shape> shapes;
  for (const Literal& o : outs) shapes.push_back(o.shape());
  Literal t(Shape::Tuple(shapes), false);
  *t.mutable_tuple_elements() = std::move(outs);
  return t;
}

absl::StatusOr<Literal> EvalTopK(const Instruction& instr, const Literal& x) {
  const Shape& s = x.shape();
  if (s.rank() < 1) return Invalid(instr, "topk needs rank >= 1");
  int64_t k = instr.attrs_or_default().k;
  bool largest = instr.attrs_or_default().largest;
  int64_t n = s.dimension(s.rank() - 1);
  if (k < 0 || k > n) return Invalid(instr, StrCat("k=", k, " exceeds the last dimension ", n));
  Literal wide_holder;
  std::vector<Key> keys;
  KeyKind kind = IsFloatingPoint(s.element_type()) ? KeyKind::kTotal
                 : IsUnsignedIntegral(s.element_type()) ? KeyKind::kUnsigned
                                                        : KeyKind::kSigned;
  if (IsComplex(s.element_type())) return Unimplemented(instr, "topk of complex values");
  ReadKeys(*WidenIfNarrow(&x, &wide_holder), kind, &keys);
  std::vector<int64_t> out_dims = s.dimensions();
  out_dims.back() = k;
  Literal values(Shape::Array(s.element_type(), out_dims));
  Literal indices(Shape::Array(PrimitiveType::kS32, out_dims));
  int64_t rows = n == 0 ? 0 : x.element_count() / n;
  std::vector<int64_t> perm(n);
  for (int64_t r = 0; r < rows; ++r) {
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      return largest ? KeyLess(keys[r * n + b], keys[r * n + a], kind)
                     : KeyLess(keys[r * n + a], keys[r * n + b], kind);
    });
    for (int64_t j = 0; j < k; ++j) {
      CopyElement(x, r * n + perm[j], &values, r * k + j);
      indices.mutable_data_as<int32_t>()[r * k + j] = static_cast<int32_t>(perm[j]);
    }
  }
  std::vector<Literal> elems;
  elems.push_back(std::move(values));
  elems.push_back(std::move(indices));
  Literal t(Shape::Tuple({elems[0].shape(), elems[1].shape()}), false);
  *t.mutable_tuple_elements() = std::move(elems);
  return t;
}

}  // namespace hlowb::eval
