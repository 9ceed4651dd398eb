// dot and convolution. Both bring their operands into a canonical layout (dot: [batch, M, K] x
// [batch, K, N]; convolution: im2col per batch and feature group) and multiply with one GEMM
// kernel: OpenBLAS for f32/f64/c64/c128, exact wrapping loops for integers. Operands are first
// converted to the compute type: the result type when it is native, f64 for narrow float
// results (rounded once at the end), matching XLA's "operands upcast to the result type".
#include <cblas.h>

#include <algorithm>
#include <memory>

#include "absl/strings/str_join.h"
#include "core/ir/dot_sparsity.h"
#include "core/text/printer.h"
#include "replay/evaluator/collective_kernels.h"
#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/semantics.h"

namespace hlowb::eval {
namespace {

// C[M,N] = A[M,K] * B[K,N], row-major, overwriting C.
template <typename T>
void Gemm(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, int64_t ldb, T* c,
          int64_t ldc) {
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c,
                ldc);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c,
                ldc);
  } else if constexpr (std::is_same_v<T, c64>) {
    c64 one(1), zero(0);
    cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, a, lda, b, ldb, &zero,
                c, ldc);
  } else if constexpr (std::is_same_v<T, c128>) {
    c128 one(1), zero(0);
    cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, &one, a, lda, b, ldb, &zero,
                c, ldc);
  } else {
    for (int64_t i = 0; i < m; ++i) {
      T* crow = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) crow[j] = T(0);
      for (int64_t p = 0; p < k; ++p) {
        T av = a[i * lda + p];
        const T* brow = b + p * ldb;
        if constexpr (std::is_same_v<T, bool>) {
          if (av) for (int64_t j = 0; j < n; ++j) crow[j] = crow[j] || brow[j];
        } else {
          for (int64_t j = 0; j < n; ++j) crow[j] = WrapAdd<T>(crow[j], WrapMul<T>(av, brow[j]));
        }
      }
    }
  }
}

// Compute type for a dot/convolution with result type `rt`.
PrimitiveType ComputeType(PrimitiveType rt) {
  if (IsNarrowFloat(rt)) return PrimitiveType::kF64;
  if (IsSubByteInt(rt)) return IsSignedIntegral(rt) ? PrimitiveType::kS64 : PrimitiveType::kU64;
  return rt;
}

// `x` in compute type `ct`: `x` itself when it is of that type (no copy of a large weight on
// every product), else a converted copy kept in `*holder`.
absl::StatusOr<const Literal*> ToComputeType(const Literal& x, PrimitiveType ct, Literal* holder) {
  if (x.shape().element_type() == ct) return &x;
  absl::StatusOr<Literal> converted = EvalConvert(x, ct);
  if (!converted.ok()) return converted.status();
  *holder = std::move(*converted);
  return holder;
}

absl::StatusOr<Literal> FromComputeType(Literal r, PrimitiveType rt) {
  if (r.shape().element_type() == rt) return r;
  return EvalConvert(r, rt);
}

}  // namespace

namespace {

// The dot of `lhs` and `rhs` under `d`, with result element type `rt` (errors name `instr`).
absl::StatusOr<Literal> DotGeneral(const Instruction& instr, const DotDimensionNumbers& d,
                                   PrimitiveType rt, const Literal& lhs, const Literal& rhs) {
  const Shape& ls = lhs.shape();
  const Shape& rsh = rhs.shape();
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size() ||
      d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return Invalid(instr, "dot dimension numbers do not pair up");
  }
  auto free_dims = [](int rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> f;
    for (int i = 0; i < rank; ++i) {
      if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) {
        f.push_back(i);
      }
    }
    return f;
  };
  for (int64_t x : d.lhs_batch_dimensions) if (x < 0 || x >= ls.rank()) return Invalid(instr, "dot dimension out of range");
  for (int64_t x : d.lhs_contracting_dimensions) if (x < 0 || x >= ls.rank()) return Invalid(instr, "dot dimension out of range");
  for (int64_t x : d.rhs_batch_dimensions) if (x < 0 || x >= rsh.rank()) return Invalid(instr, "dot dimension out of range");
  for (int64_t x : d.rhs_contracting_dimensions) if (x < 0 || x >= rsh.rank()) return Invalid(instr, "dot dimension out of range");
  std::vector<int64_t> lf = free_dims(ls.rank(), d.lhs_batch_dimensions, d.lhs_contracting_dimensions);
  std::vector<int64_t> rf = free_dims(rsh.rank(), d.rhs_batch_dimensions, d.rhs_contracting_dimensions);
  int64_t B = 1, M = 1, N = 1, K = 1;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    int64_t a = ls.dimension(d.lhs_batch_dimensions[i]);
    if (a != rsh.dimension(d.rhs_batch_dimensions[i])) return Invalid(instr, "batch sizes differ");
    B *= a;
    out_dims.push_back(a);
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    int64_t a = ls.dimension(d.lhs_contracting_dimensions[i]);
    if (a != rsh.dimension(d.rhs_contracting_dimensions[i])) {
      return Invalid(instr, "contracting sizes differ");
    }
    K *= a;
  }
  for (int64_t x : lf) { M *= ls.dimension(x); out_dims.push_back(ls.dimension(x)); }
  for (int64_t x : rf) { N *= rsh.dimension(x); out_dims.push_back(rsh.dimension(x)); }
  PrimitiveType ct = ComputeType(rt);
  Literal lc_holder, rc_holder;
  auto lc = ToComputeType(lhs, ct, &lc_holder);
  if (!lc.ok()) return lc.status();
  auto rc = ToComputeType(rhs, ct, &rc_holder);
  if (!rc.ok()) return rc.status();
  std::vector<int64_t> lperm = d.lhs_batch_dimensions, rperm = d.rhs_batch_dimensions;
  lperm.insert(lperm.end(), lf.begin(), lf.end());
  lperm.insert(lperm.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  rperm.insert(rperm.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  rperm.insert(rperm.end(), rf.begin(), rf.end());
  auto identity = [](const std::vector<int64_t>& p) {
    for (size_t i = 0; i < p.size(); ++i) if (p[i] != static_cast<int64_t>(i)) return false;
    return true;
  };
  Literal lt_holder, rt_holder;
  const Literal* a = *lc;
  const Literal* b = *rc;
  if (!identity(lperm)) { lt_holder = TransposeLiteral(**lc, lperm); a = &lt_holder; }
  if (!identity(rperm)) { rt_holder = TransposeLiteral(**rc, rperm); b = &rt_holder; }
  Literal out(Shape::Array(ct, out_dims));
  absl::Status st = DispatchNative(ct, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* pa = a->data_as<T>();
    const T* pb = b->data_as<T>();
    T* pc = out.mutable_data_as<T>();
    if (M * N == 0) return absl::OkStatus();
    for (int64_t bi = 0; bi < B; ++bi) {
      if (K == 0) {
        std::fill(pc + bi * M * N, pc + (bi + 1) * M * N, T(0));
        continue;
      }
      Gemm<T>(M, N, K, pa + bi * M * K, K, pb + bi * K * N, N, pc + bi * M * N, N);
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return Unimplemented(instr, StrCat("dot producing ", PrimitiveTypeName(rt)));
  return FromComputeType(std::move(out), rt);
}

// `x` without its size-1 dimension `dim` (row-major data is unchanged).
Literal DropUnitDimension(Literal x, int64_t dim) {
  std::vector<int64_t> dims = x.shape().dimensions();
  dims.erase(dims.begin() + dim);
  Literal out(Shape::Array(x.shape().element_type(), dims), /*allocate=*/false);
  *out.mutable_data() = std::move(*x.mutable_data());
  return out;
}

// `x` with a new leading dimension of size 1.
Literal AddLeadingUnitDimension(Literal x) {
  std::vector<int64_t> dims = x.shape().dimensions();
  dims.insert(dims.begin(), 1);
  Literal out(Shape::Array(x.shape().element_type(), dims), /*allocate=*/false);
  *out.mutable_data() = std::move(*x.mutable_data());
  return out;
}

// Dimension numbers of `d` for an rhs that lost dimension `removed`.
std::vector<int64_t> ShiftPast(const std::vector<int64_t>& dims, int64_t removed) {
  std::vector<int64_t> out;
  for (int64_t x : dims) out.push_back(x > removed ? x - 1 : x);
  return out;
}

// Group i's rows: [start, start + size) clipped to `extent` (groups past the end are empty).
std::vector<std::pair<int64_t, int64_t>> GroupRanges(const Literal& group_sizes, int64_t extent) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  int64_t start = 0;
  for (int64_t i = 0; i < group_sizes.element_count(); ++i) {
    int64_t size = std::max<int64_t>(group_sizes.GetInt(i), 0);
    const int64_t begin = std::min(start, extent);
    const int64_t end = std::min(start + size, extent);
    ranges.emplace_back(begin, end - begin);
    start = start + size > extent ? extent : start + size;
  }
  return ranges;
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& instr, const Literal& lhs, const Literal& rhs) {
  const auto& dn = instr.attrs_or_default().dot_dimension_numbers;
  return DotGeneral(instr, dn.value_or(DotDimensionNumbers()), instr.shape().element_type(), lhs,
                    rhs);
}

namespace {

// The dense form of a compressed sparse dot operand: every kept element at the position its
// metadata gives, zeros elsewhere. Errors name `instr`: a metadata shape that does not fit, or
// two kept elements of one group at the same position.
absl::StatusOr<Literal> DecompressSparseOperand(const Instruction& instr, const DotSparsity& sp,
                                                const Literal& sparse, const Literal& meta) {
  const Shape& ss = sparse.shape();
  const std::string what = StrCat(sp.operand == 0 ? "lhs" : "rhs", " sparsity ", sp.ToString());
  if (!ss.IsArray() || sp.dimension < 0 || sp.dimension >= ss.rank()) {
    return Invalid(instr, StrCat(what, ": dimension ", sp.dimension, " is out of range for ",
                                 PrintShape(ss, false)));
  }
  const int dim = static_cast<int>(sp.dimension);
  const int64_t compressed = ss.dimension(dim);
  auto dense_size = DenseSparseDimension(sp, compressed);
  if (!dense_size.ok()) {
    return Invalid(instr, StrCat(what, ": ", dense_size.status().message()));
  }
  std::vector<int64_t> meta_dims = ss.dimensions();
  meta_dims[dim] = MetadataDimension(sp, compressed);
  if (!meta.shape().IsArray() || meta.shape().element_type() != PrimitiveType::kU16 ||
      meta.shape().dimensions() != meta_dims) {
    return Invalid(instr, StrCat(what, ": the metadata must be ",
                                 PrintShape(Shape::Array(PrimitiveType::kU16, meta_dims), false),
                                 " for ", PrintShape(ss, false), ", got ",
                                 PrintShape(meta.shape(), false)));
  }
  std::vector<int64_t> dense_dims = ss.dimensions();
  dense_dims[dim] = *dense_size;
  Literal out(Shape::Array(ss.element_type(), dense_dims));  // zero bits: 0 in every type
  // Row-major: element (outer, c, inner) with `inner` running over the dimensions after `dim`.
  int64_t inner = 1;
  for (int k = dim + 1; k < ss.rank(); ++k) inner *= ss.dimension(k);
  const int64_t outer = compressed == 0 || inner == 0 ? 0 : sparse.element_count() / (compressed * inner);
  const int64_t words = meta_dims[dim];
  const int64_t per_word = sp.KeptPerWord();
  const int64_t bits = sp.BitsPerIndex();
  const uint16_t* pm = meta.data_as<uint16_t>();
  std::vector<bool> taken(static_cast<size_t>(out.element_count()), false);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t c = 0; c < compressed; ++c) {
      const int64_t w = c / per_word;
      const int64_t j = c % per_word;
      const int64_t group = c / sp.n;
      for (int64_t in = 0; in < inner; ++in) {
        const uint16_t word = pm[(o * words + w) * inner + in];
        const int64_t pos = (word >> (j * bits)) & (sp.m - 1);
        const int64_t k = group * sp.m + pos;
        const int64_t di = (o * *dense_size + k) * inner + in;
        if (taken[di]) {
          // Report the index of the sparse operand whose slot collides.
          std::vector<int64_t> idx(ss.rank(), 0);
          int64_t lin = (o * compressed + c) * inner + in;
          for (int q = ss.rank() - 1; q >= 0; --q) {
            idx[q] = lin % ss.dimension(q);
            lin /= ss.dimension(q);
          }
          return Invalid(instr, StrCat(what, ": the metadata puts two kept elements of one group "
                                       "at position ", pos, " (the second is element {",
                                       absl::StrJoin(idx, ","), "} of the sparse operand; "
                                       "metadata word ", word, ")"));
        }
        taken[di] = true;
        CopyElement(sparse, (o * compressed + c) * inner + in, &out, di);
      }
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalSparseDot(const Instruction& instr, const Operands& ops) {
  auto descriptors = ParseDotSparsity(instr.attrs_or_default().sparsity);
  if (!descriptors.ok()) return Invalid(instr, std::string(descriptors.status().message()));
  if (ops.size() != 2 + descriptors->size()) {
    return Invalid(instr, StrCat("sparsity ", instr.attrs_or_default().sparsity, " needs ",
                                 2 + descriptors->size(), " operands (lhs, rhs and one "
                                 "metadata operand per sparse operand), got ", ops.size()));
  }
  const DotDimensionNumbers d =
      instr.attrs_or_default().dot_dimension_numbers.value_or(DotDimensionNumbers());
  Literal dense[2];
  const Literal* operands[2] = {ops[0], ops[1]};
  for (size_t i = 0; i < descriptors->size(); ++i) {
    const DotSparsity& sp = (*descriptors)[i];
    const std::vector<int64_t>& contracting =
        sp.operand == 0 ? d.lhs_contracting_dimensions : d.rhs_contracting_dimensions;
    if (std::find(contracting.begin(), contracting.end(), sp.dimension) == contracting.end()) {
      return Invalid(instr, StrCat("sparsity ", sp.ToString(), " names a dimension that is not "
                                   "contracting"));
    }
    auto decompressed = DecompressSparseOperand(instr, sp, *ops[sp.operand], *ops[2 + i]);
    if (!decompressed.ok()) return decompressed.status();
    dense[sp.operand] = std::move(*decompressed);
    operands[sp.operand] = &dense[sp.operand];
  }
  return DotGeneral(instr, d, instr.shape().element_type(), *operands[0], *operands[1]);
}

namespace {

// Ragged-dot whose group sizes differ per row: group_sizes is [prefix..., g], the prefix being
// the lhs dimensions before the ragged one that are batch dimensions or of the ragged one's
// kind (free for a ragged free dimension, contracting for a ragged contracting dimension), in
// lhs order. Each prefix index has its own partition of the ragged dimension.
//   ragged free dimension: output element (.., r, ..) is group(prefix, r)'s dot, computed in
//     full per group and chosen per element (a select, so an unchosen group's Inf or NaN never
//     reaches it); rows no group covers stay 0;
//   ragged contracting dimension: result g contracts only group g's part of the dimension;
//     both operands are zeroed outside it, so an excluded Inf meets a 0 only as 0 * 0.
absl::StatusOr<Literal> RaggedDotPerRow(const Instruction& instr, const Literal& lhs,
                                        const Literal& rhs, const Literal& group_sizes) {
  const DotDimensionNumbers d =
      instr.attrs_or_default().dot_dimension_numbers.value_or(DotDimensionNumbers());
  const PrimitiveType rt = instr.shape().element_type();
  const int64_t ragged = d.lhs_ragged_dimensions[0];
  auto index_of = [](const std::vector<int64_t>& v, int64_t x) -> int64_t {
    auto it = std::find(v.begin(), v.end(), x);
    return it == v.end() ? -1 : it - v.begin();
  };
  const bool contracting = index_of(d.lhs_contracting_dimensions, ragged) >= 0;
  std::vector<int64_t> prefix;  // lhs dimensions
  for (int64_t i = 0; i < ragged; ++i) {
    const bool batch = index_of(d.lhs_batch_dimensions, i) >= 0;
    const bool is_contracting = index_of(d.lhs_contracting_dimensions, i) >= 0;
    if (batch || (contracting ? is_contracting : !is_contracting)) prefix.push_back(i);
  }
  const Shape& gs = group_sizes.shape();
  bool fits = gs.rank() == static_cast<int>(prefix.size()) + 1;
  for (size_t k = 0; fits && k < prefix.size(); ++k) {
    fits = gs.dimension(static_cast<int>(k)) == lhs.shape().dimension(prefix[k]);
  }
  if (!fits) {
    std::vector<int64_t> want;
    for (int64_t p : prefix) want.push_back(lhs.shape().dimension(p));
    return Invalid(instr, StrCat("group_sizes ", PrintShape(gs, false), " must be [",
                                 absl::StrJoin(want, ","), want.empty() ? "" : ",",
                                 "groups]: the lhs dimensions before the ragged one that are "
                                 "batch dimensions or ",
                                 contracting ? "contracting" : "free", ", then the groups"));
  }
  const int64_t groups = gs.dimension(gs.rank() - 1);
  const int64_t extent = lhs.shape().dimension(ragged);
  // The group of ragged index `r` in prefix row `row`; -1 when no group covers it.
  auto group_of = [&](int64_t row, int64_t r) -> int64_t {
    int64_t start = 0;
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t size = std::max<int64_t>(group_sizes.GetInt(row * groups + g), 0);
      if (r >= start && r < start + size && r < extent) return g;
      start += size;
    }
    return -1;
  };
  // Row-major multi-index of a linear index.
  auto unravel = [](const Shape& shape, int64_t linear, std::vector<int64_t>* idx) {
    idx->assign(shape.rank(), 0);
    for (int q = shape.rank() - 1; q >= 0; --q) {
      (*idx)[q] = linear % shape.dimension(q);
      linear /= shape.dimension(q);
    }
  };
  // The prefix row of an element, given where each prefix lhs dimension sits in its shape.
  auto row_of = [&](const std::vector<int64_t>& idx, const std::vector<int64_t>& where) {
    int64_t row = 0;
    for (size_t k = 0; k < prefix.size(); ++k) {
      row = row * gs.dimension(static_cast<int>(k)) + idx[where[k]];
    }
    return row;
  };
  std::vector<int64_t> idx;
  if (contracting) {
    // Where the prefix dimensions and the ragged one sit in rhs.
    const int64_t rhs_ragged =
        d.rhs_contracting_dimensions[index_of(d.lhs_contracting_dimensions, ragged)];
    std::vector<int64_t> in_lhs = prefix, in_rhs;
    for (int64_t p : prefix) {
      const int64_t b = index_of(d.lhs_batch_dimensions, p);
      in_rhs.push_back(b >= 0 ? d.rhs_batch_dimensions[b]
                              : d.rhs_contracting_dimensions[index_of(
                                    d.lhs_contracting_dimensions, p)]);
    }
    // `x` with the elements outside group g zeroed.
    auto keep_group = [&](const Literal& x, const std::vector<int64_t>& where, int64_t dim,
                          int64_t g) {
      Literal out = x;
      const size_t width = static_cast<size_t>(x.element_bytes());
      for (int64_t i = 0; i < x.element_count(); ++i) {
        unravel(x.shape(), i, &idx);
        if (group_of(row_of(idx, where), idx[dim]) != g) {
          std::memset(out.mutable_data()->data() + static_cast<size_t>(i) * width, 0, width);
        }
      }
      return out;
    };
    std::vector<Literal> parts;
    DotDimensionNumbers plain = d;
    plain.lhs_ragged_dimensions.clear();
    for (int64_t g = 0; g < groups; ++g) {
      auto part = DotGeneral(instr, plain, rt, keep_group(lhs, in_lhs, ragged, g),
                             keep_group(rhs, in_rhs, rhs_ragged, g));
      if (!part.ok()) return part.status();
      parts.push_back(AddLeadingUnitDimension(std::move(*part)));
    }
    Literal out(instr.shape());
    std::vector<const Literal*> ptrs;
    for (const Literal& p : parts) ptrs.push_back(&p);
    if (absl::Status st = ConcatenateAlongDimension(ptrs, 0, &out); !st.ok()) {
      return Invalid(instr, std::string(st.message()));
    }
    return out;
  }
  // A ragged free dimension.
  if (d.rhs_group_dimensions.size() != 1) {
    return Invalid(instr, "ragged-dot needs exactly one rhs_group_dims entry");
  }
  const int64_t group_dim = d.rhs_group_dimensions[0];
  if (group_dim < 0 || group_dim >= rhs.shape().rank() ||
      rhs.shape().dimension(group_dim) != groups) {
    return Invalid(instr, "rhs_group_dims does not match the number of groups");
  }
  DotDimensionNumbers sub = d;
  sub.rhs_batch_dimensions = ShiftPast(d.rhs_batch_dimensions, group_dim);
  sub.rhs_contracting_dimensions = ShiftPast(d.rhs_contracting_dimensions, group_dim);
  sub.lhs_ragged_dimensions.clear();
  sub.rhs_group_dimensions.clear();
  // Where each lhs dimension lands in the result: batch dimensions first, then lhs's free
  // dimensions in order.
  std::vector<int64_t> out_of(lhs.shape().rank(), -1);
  int64_t next = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  for (int64_t i = 0; i < lhs.shape().rank(); ++i) {
    const int64_t b = index_of(d.lhs_batch_dimensions, i);
    if (b >= 0) {
      out_of[i] = b;
    } else if (index_of(d.lhs_contracting_dimensions, i) < 0) {
      out_of[i] = next++;
    }
  }
  std::vector<int64_t> where;
  for (int64_t p : prefix) where.push_back(out_of[p]);
  Literal out(instr.shape());  // zeros where no group covers a row
  const size_t width = static_cast<size_t>(out.element_bytes());
  for (int64_t g = 0; g < groups; ++g) {
    auto r = SliceAlongDimension(rhs, group_dim, g, 1);
    if (!r.ok()) return Invalid(instr, std::string(r.status().message()));
    auto full = DotGeneral(instr, sub, rt, lhs, DropUnitDimension(std::move(*r), group_dim));
    if (!full.ok()) return full.status();
    for (int64_t i = 0; i < out.element_count(); ++i) {
      unravel(out.shape(), i, &idx);
      if (group_of(row_of(idx, where), idx[out_of[ragged]]) != g) continue;
      std::memcpy(out.mutable_data()->data() + static_cast<size_t>(i) * width,
                  full->data().data() + static_cast<size_t>(i) * width, width);
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<Literal> EvalRaggedDot(const Instruction& instr, const Literal& lhs,
                                      const Literal& rhs, const Literal& group_sizes) {
  const DotDimensionNumbers d =
      instr.attrs_or_default().dot_dimension_numbers.value_or(DotDimensionNumbers());
  const PrimitiveType rt = instr.shape().element_type();
  if (d.lhs_ragged_dimensions.size() != 1) {
    return Invalid(instr, "ragged-dot needs exactly one lhs_ragged_dims entry");
  }
  const int64_t ragged = d.lhs_ragged_dimensions[0];
  if (ragged < 0 || ragged >= lhs.shape().rank()) {
    return Invalid(instr, "lhs_ragged_dims is out of range");
  }
  if (!IsIntegral(group_sizes.shape().element_type()) || group_sizes.shape().rank() < 1) {
    return Invalid(instr, "group_sizes must be an integer array");
  }
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // A ragged batch dimension: every group is an ordinary batched dot.
  if (contains(d.lhs_batch_dimensions, ragged)) return DotGeneral(instr, d, rt, lhs, rhs);
  if (group_sizes.shape().rank() > 1) return RaggedDotPerRow(instr, lhs, rhs, group_sizes);
  const auto ranges = GroupRanges(group_sizes, lhs.shape().dimension(ragged));
  Literal out = Literal(instr.shape());  // zeros: rows (or groups) no group covers stay 0
  if (contains(d.lhs_contracting_dimensions, ragged)) {
    // A ragged contracting dimension: result i contracts only group i's slice of it.
    const int64_t pos = std::find(d.lhs_contracting_dimensions.begin(),
                                  d.lhs_contracting_dimensions.end(), ragged) -
                        d.lhs_contracting_dimensions.begin();
    const int64_t rhs_dim = d.rhs_contracting_dimensions[pos];
    std::vector<Literal> parts;
    for (const auto& [start, size] : ranges) {
      auto l = SliceAlongDimension(lhs, ragged, start, size);
      if (!l.ok()) return Invalid(instr, std::string(l.status().message()));
      auto r = SliceAlongDimension(rhs, rhs_dim, start, size);
      if (!r.ok()) return Invalid(instr, std::string(r.status().message()));
      auto part = DotGeneral(instr, d, rt, *l, *r);
      if (!part.ok()) return part.status();
      parts.push_back(AddLeadingUnitDimension(std::move(*part)));
    }
    std::vector<const Literal*> ptrs;
    for (const Literal& p : parts) ptrs.push_back(&p);
    if (absl::Status st = ConcatenateAlongDimension(ptrs, 0, &out); !st.ok()) {
      return Invalid(instr, std::string(st.message()));
    }
    return out;
  }
  // A ragged non-contracting dimension: group i's rows multiply rhs's group i.
  if (d.rhs_group_dimensions.size() != 1) {
    return Invalid(instr, "ragged-dot needs exactly one rhs_group_dims entry");
  }
  const int64_t group_dim = d.rhs_group_dimensions[0];
  if (group_dim < 0 || group_dim >= rhs.shape().rank() ||
      rhs.shape().dimension(group_dim) != group_sizes.element_count()) {
    return Invalid(instr, "rhs_group_dims does not match the number of groups");
  }
  DotDimensionNumbers sub = d;
  sub.rhs_batch_dimensions = ShiftPast(d.rhs_batch_dimensions, group_dim);
  sub.rhs_contracting_dimensions = ShiftPast(d.rhs_contracting_dimensions, group_dim);
  sub.lhs_ragged_dimensions.clear();
  sub.rhs_group_dimensions.clear();
  // Where the ragged dimension lands in the result: after the batch dimensions, at its place
  // among lhs's free dimensions.
  int64_t out_dim = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  for (int64_t i = 0; i < ragged; ++i) {
    if (!contains(d.lhs_batch_dimensions, i) && !contains(d.lhs_contracting_dimensions, i)) {
      ++out_dim;
    }
  }
  std::vector<Literal> parts;
  int64_t covered = 0;
  for (size_t g = 0; g < ranges.size(); ++g) {
    const auto [start, size] = ranges[g];
    auto l = SliceAlongDimension(lhs, ragged, start, size);
    if (!l.ok()) return Invalid(instr, std::string(l.status().message()));
    auto r = SliceAlongDimension(rhs, group_dim, static_cast<int64_t>(g), 1);
    if (!r.ok()) return Invalid(instr, std::string(r.status().message()));
    auto part = DotGeneral(instr, sub, rt, *l, DropUnitDimension(std::move(*r), group_dim));
    if (!part.ok()) return part.status();
    parts.push_back(std::move(*part));
    covered = start + size;
  }
  const int64_t extent = lhs.shape().dimension(ragged);
  if (covered < extent) {
    // Rows after the last group: zeros.
    std::vector<int64_t> dims = instr.shape().dimensions();
    dims[out_dim] = extent - covered;
    parts.emplace_back(Shape::Array(rt, dims));
  }
  std::vector<const Literal*> ptrs;
  for (const Literal& p : parts) ptrs.push_back(&p);
  if (absl::Status st = ConcatenateAlongDimension(ptrs, out_dim, &out); !st.ok()) {
    return Invalid(instr, std::string(st.message()));
  }
  return out;
}

absl::StatusOr<Literal> EvalScaledDot(const Instruction& instr, const Literal& lhs,
                                      const Literal& lhs_scale, const Literal& rhs,
                                      const Literal& rhs_scale) {
  // Each operand times its scale, the scale's element covering a block of operand elements
  // (operand dimension / scale dimension along every dimension), in f32; then a dot.
  auto dequantize = [&](const Literal& x, const Literal& scale,
                        const char* which) -> absl::StatusOr<Literal> {
    const Shape& xs = x.shape();
    const Shape& ss = scale.shape();
    if (xs.rank() != ss.rank()) {
      return Invalid(instr, StrCat(which, " scale must have the rank of its operand"));
    }
    std::vector<int64_t> block(xs.rank());
    for (int d = 0; d < xs.rank(); ++d) {
      if (ss.dimension(d) <= 0 || xs.dimension(d) % ss.dimension(d) != 0) {
        return Invalid(instr, StrCat(which, " scale dimension ", d, " (", ss.dimension(d),
                                     ") must divide the operand's (", xs.dimension(d), ")"));
      }
      block[d] = xs.dimension(d) / ss.dimension(d);
    }
    auto xf = EvalConvert(x, PrimitiveType::kF32);
    if (!xf.ok()) return xf.status();
    auto sf = EvalConvert(scale, PrimitiveType::kF32);
    if (!sf.ok()) return sf.status();
    float* px = xf->mutable_data_as<float>();
    const float* ps = sf->data_as<float>();
    std::vector<int64_t> idx(xs.rank(), 0);
    for (int64_t i = 0; i < xf->element_count(); ++i) {
      int64_t si = 0;
      for (int d = 0; d < xs.rank(); ++d) si = si * ss.dimension(d) + idx[d] / block[d];
      px[i] *= ps[si];
      for (int d = xs.rank() - 1; d >= 0; --d) {
        if (++idx[d] < xs.dimension(d)) break;
        idx[d] = 0;
      }
    }
    return xf;
  };
  auto l = dequantize(lhs, lhs_scale, "lhs");
  if (!l.ok()) return l.status();
  auto r = dequantize(rhs, rhs_scale, "rhs");
  if (!r.ok()) return r.status();
  return EvalDot(instr, *l, *r);
}

absl::StatusOr<Literal> EvalConvolution(const Instruction& instr, const Literal& lhs,
                                        const Literal& rhs) {
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.convolution_dimension_numbers) return Invalid(instr, "missing dim_labels");
  const ConvolutionDimensionNumbers& dn = *at.convolution_dimension_numbers;
  const Shape& os = instr.shape();
  const int ns = static_cast<int>(dn.input_spatial_dimensions.size());
  if (dn.kernel_spatial_dimensions.size() != static_cast<size_t>(ns) ||
      dn.output_spatial_dimensions.size() != static_cast<size_t>(ns) ||
      lhs.shape().rank() != ns + 2 || rhs.shape().rank() != ns + 2 || os.rank() != ns + 2) {
    return Invalid(instr, "convolution ranks do not match dim_labels");
  }
  Window w = at.window.value_or(Window());
  if (w.empty()) {
    w.assign(ns, WindowDimension{});
    for (int i = 0; i < ns; ++i) w[i].size = rhs.shape().dimension(dn.kernel_spatial_dimensions[i]);
  }
  if (static_cast<int>(w.size()) != ns) return Invalid(instr, "window rank mismatch");
  for (const auto& wd : w) {
    if (wd.stride <= 0 || wd.base_dilation <= 0 || wd.window_dilation <= 0) {
      return Invalid(instr, "window has a non-positive stride or dilation");
    }
  }
  const int64_t fgc = at.feature_group_count, bgc = at.batch_group_count;
  const int64_t N = lhs.shape().dimension(dn.input_batch_dimension);
  const int64_t C = lhs.shape().dimension(dn.input_feature_dimension);
  const int64_t I = rhs.shape().dimension(dn.kernel_input_feature_dimension);
  const int64_t O = rhs.shape().dimension(dn.kernel_output_feature_dimension);
  const int64_t ON = os.dimension(dn.output_batch_dimension);
  if (fgc <= 0 || bgc <= 0 || C != I * fgc || O % fgc != 0 || O % bgc != 0 || N % bgc != 0 ||
      ON != N / bgc || os.dimension(dn.output_feature_dimension) != O) {
    return Invalid(instr, "convolution feature/batch group sizes are inconsistent");
  }
  std::vector<int64_t> in_sp(ns), k_sp(ns), o_sp(ns);
  for (int i = 0; i < ns; ++i) {
    in_sp[i] = lhs.shape().dimension(dn.input_spatial_dimensions[i]);
    k_sp[i] = rhs.shape().dimension(dn.kernel_spatial_dimensions[i]);
    o_sp[i] = os.dimension(dn.output_spatial_dimensions[i]);
    if (k_sp[i] != w[i].size) return Invalid(instr, "window size differs from the kernel size");
  }
  PrimitiveType rt = os.element_type();
  PrimitiveType ct = ComputeType(rt);
  Literal lc_holder, rc_holder;
  auto lc = ToComputeType(lhs, ct, &lc_holder);
  if (!lc.ok()) return lc.status();
  auto rc = ToComputeType(rhs, ct, &rc_holder);
  if (!rc.ok()) return rc.status();
  // Canonical: input [N, C, sp...], kernel [O, I, sp...], output [ON, O, sp...].
  std::vector<int64_t> ip{dn.input_batch_dimension, dn.input_feature_dimension};
  std::vector<int64_t> kp{dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension};
  for (int i = 0; i < ns; ++i) {
    ip.push_back(dn.input_spatial_dimensions[i]);
    kp.push_back(dn.kernel_spatial_dimensions[i]);
  }
  Literal in = TransposeLiteral(**lc, ip);
  Literal ker = TransposeLiteral(**rc, kp);
  const int64_t IS = Product(in_sp), KS = Product(k_sp), OSz = Product(o_sp);
  const int64_t Og = O / fgc;        // output features per feature group
  const int64_t Ob = O / bgc;        // output features per batch group
  const int64_t Nb = N / bgc;        // input batches per batch group
  std::vector<int64_t> can_out_dims{ON, O};
  can_out_dims.insert(can_out_dims.end(), o_sp.begin(), o_sp.end());
  Literal out(Shape::Array(ct, can_out_dims));
  // For each (output spatial position, kernel position): the input spatial linear index or -1.
  std::vector<int64_t> src_index(static_cast<size_t>(KS) * OSz, -1);
  {
    std::vector<int64_t> in_strides = RowMajorStrides(in_sp);
    std::vector<int64_t> kidx(ns, 0);
    int64_t kk = 0;
    do {
      std::vector<int64_t> oidx(ns, 0);
      int64_t oo = 0;
      do {
        int64_t lin = 0;
        bool ok = true;
        for (int d = 0; d < ns && ok; ++d) {
          int64_t k = w[d].window_reversal ? k_sp[d] - 1 - kidx[d] : kidx[d];
          int64_t p = oidx[d] * w[d].stride + k * w[d].window_dilation - w[d].padding_low;
          if (p < 0 || p % w[d].base_dilation != 0) { ok = false; break; }
          int64_t q = p / w[d].base_dilation;
          if (q >= in_sp[d]) ok = false;
          lin += q * in_strides[d];
        }
        if (ok) src_index[kk * OSz + oo] = lin;
        ++oo;
      } while (ns > 0 && NextIndex(oidx, o_sp));
      ++kk;
    } while (ns > 0 && NextIndex(kidx, k_sp));
  }
  int64_t valid = 0;
  for (int64_t v : src_index) valid += v >= 0;
  const bool sparse = I > 0 && valid * 4 < static_cast<int64_t>(src_index.size());
  Literal kerk;  // kernel as [KS, O, I] for the sparse path
  if (sparse) {
    Literal k3(Shape::Array(ct, {O, I, KS}));
    *k3.mutable_data() = ker.data();
    kerk = TransposeLiteral(k3, {2, 0, 1});
  }
  absl::Status st = DispatchNative(ct, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    const T* pin = in.data_as<T>();
    const T* pk = ker.data_as<T>();
    T* po = out.mutable_data_as<T>();
    // unique_ptr rather than vector: vector<bool> has no data().
    std::unique_ptr<T[]> col(sparse ? nullptr : new T[static_cast<size_t>(I) * KS * OSz]());
    std::unique_ptr<T[]> tmp(new T[static_cast<size_t>(O) * OSz]());
    if (sparse) {
      // Per kernel position: only the output columns that position reaches (base dilation and
      // padding leave most (position, column) pairs empty), as one GEMM each.
      // Columns of all output batches share the kernel, so they go into one GEMM.
      std::vector<int64_t> cols;
      std::unique_ptr<T[]> xs(new T[static_cast<size_t>(I) * OSz * ON]());
      std::unique_ptr<T[]> acc(new T[static_cast<size_t>(O) * OSz * ON]());
      const T* pkk = kerk.data_as<T>();
      for (int64_t g = 0; g < fgc; ++g) {
        for (int64_t bg = 0; bg < bgc; ++bg) {
          int64_t o_begin = std::max(g * Og, bg * Ob), o_end = std::min((g + 1) * Og, (bg + 1) * Ob);
          if (o_begin >= o_end) continue;
          int64_t m = o_end - o_begin;
          for (int64_t k = 0; k < KS; ++k) {
            cols.clear();
            const int64_t* src = src_index.data() + k * OSz;
            for (int64_t o = 0; o < OSz; ++o) if (src[o] >= 0) cols.push_back(o);
            if (cols.empty()) continue;
            int64_t nv = static_cast<int64_t>(cols.size()), width = nv * ON;
            for (int64_t i = 0; i < I; ++i) {
              for (int64_t n = 0; n < ON; ++n) {
                const T* plane = pin + ((bg * Nb + n) * C + g * I + i) * IS;
                T* xrow = xs.get() + i * width + n * nv;
                for (int64_t c = 0; c < nv; ++c) xrow[c] = plane[src[cols[c]]];
              }
            }
            Gemm<T>(m, width, I, pkk + (k * O + o_begin) * I, I, xs.get(), width, acc.get(), width);
            for (int64_t o = 0; o < m; ++o) {
              for (int64_t n = 0; n < ON; ++n) {
                T* orow = po + (n * O + o_begin + o) * OSz;
                const T* arow = acc.get() + o * width + n * nv;
                for (int64_t c = 0; c < nv; ++c) {
                  if constexpr (std::is_same_v<T, bool>) orow[cols[c]] = orow[cols[c]] || arow[c];
                  else orow[cols[c]] = WrapAdd<T>(orow[cols[c]], arow[c]);
                }
              }
            }
          }
        }
      }
      return absl::OkStatus();
    }
    for (int64_t n = 0; n < ON; ++n) {
      for (int64_t g = 0; g < fgc; ++g) {
        for (int64_t bg = 0; bg < bgc; ++bg) {
          // Output features in both feature group g and batch group bg.
          int64_t o_begin = std::max(g * Og, bg * Ob), o_end = std::min((g + 1) * Og, (bg + 1) * Ob);
          if (o_begin >= o_end) continue;
          int64_t in_batch = bg * Nb + n;
          // im2col: rows (i, k), columns output positions.
          for (int64_t i = 0; i < I; ++i) {
            const T* plane = pin + (in_batch * C + g * I + i) * IS;
            for (int64_t k = 0; k < KS; ++k) {
              T* row = col.get() + (i * KS + k) * OSz;
              const int64_t* src = src_index.data() + k * OSz;
              for (int64_t o = 0; o < OSz; ++o) row[o] = src[o] >= 0 ? plane[src[o]] : T(0);
            }
          }
          int64_t m = o_end - o_begin;
          if (I * KS == 0) {
            std::fill(tmp.get(), tmp.get() + m * OSz, T(0));
          } else {
            Gemm<T>(m, OSz, I * KS, pk + o_begin * I * KS, I * KS, col.get(), OSz, tmp.get(), OSz);
          }
          for (int64_t o = 0; o < m; ++o) {
            std::copy(tmp.get() + o * OSz, tmp.get() + (o + 1) * OSz,
                      po + (n * O + o_begin + o) * OSz);
          }
        }
      }
    }
    return absl::OkStatus();
  });
  if (!st.ok()) return Unimplemented(instr, StrCat("convolution producing ", PrimitiveTypeName(rt)));
  // Canonical output dim j sits at output dim perm_out[j]; transpose back.
  std::vector<int64_t> op{dn.output_batch_dimension, dn.output_feature_dimension};
  for (int i = 0; i < ns; ++i) op.push_back(dn.output_spatial_dimensions[i]);
  std::vector<int64_t> inverse(op.size());
  for (size_t j = 0; j < op.size(); ++j) inverse[op[j]] = j;
  Literal result = TransposeLiteral(out, inverse);
  return FromComputeType(std::move(result), rt);
}

}  // namespace hlowb::eval
