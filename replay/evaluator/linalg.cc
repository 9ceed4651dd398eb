// cholesky, triangular-solve and the batch-norm family, computed in complex<double> or double
// (exact widening of every float input) and rounded once to the result type. Cholesky of a
// matrix that is not positive definite gives NaN for that matrix (XLA leaves it unspecified);
// the unused triangle of the result is zero.
#include <cmath>
#include <limits>

#include "replay/evaluator/eval_internal.h"

namespace hlowb::eval {

absl::StatusOr<Literal> EvalCholesky(const Instruction& instr, const Literal& a) {
  const Shape& s = a.shape();
  if (s.rank() < 2 || s.dimension(s.rank() - 1) != s.dimension(s.rank() - 2)) {
    return Invalid(instr, "cholesky needs square matrices in the last two dimensions");
  }
  if (!IsFloatingPoint(s.element_type()) && !IsComplex(s.element_type())) {
    return Unimplemented(instr, "cholesky of a non-float type");
  }
  bool lower = instr.attrs_or_default().lower;
  auto w = EvalConvert(a, PrimitiveType::kC128);
  if (!w.ok()) return w.status();
  int64_t n = s.dimension(s.rank() - 1);
  int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  Literal out(Shape::Array(PrimitiveType::kC128, s.dimensions()));
  const c128* in = w->data_as<c128>();
  c128* o = out.mutable_data_as<c128>();
  for (int64_t b = 0; b < batches; ++b) {
    const c128* A = in + b * n * n;
    c128* R = o + b * n * n;
    // Work on L (lower). For upper, A = U^H U with U = L^H: use A^T's lower part = conj.
    auto at = [&](int64_t i, int64_t j) { return lower ? A[i * n + j] : std::conj(A[j * n + i]); };
    std::vector<c128> L(n * n, c128(0));
    bool ok = true;
    for (int64_t j = 0; j < n && ok; ++j) {
      double d = at(j, j).real();
      for (int64_t k = 0; k < j; ++k) d -= std::norm(L[j * n + k]);
      if (!(d > 0)) { ok = false; break; }
      double ljj = std::sqrt(d);
      L[j * n + j] = ljj;
      for (int64_t i = j + 1; i < n; ++i) {
        c128 sum = at(i, j);
        for (int64_t k = 0; k < j; ++k) sum -= L[i * n + k] * std::conj(L[j * n + k]);
        L[i * n + j] = sum / ljj;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (!ok) R[i * n + j] = c128(std::numeric_limits<double>::quiet_NaN(), 0);
        else R[i * n + j] = lower ? L[i * n + j] : std::conj(L[j * n + i]);
      }
    }
  }
  return EvalConvert(out, s.element_type());
}

absl::StatusOr<Literal> EvalTriangularSolve(const Instruction& instr, const Literal& a,
                                            const Literal& b) {
  const InstructionAttrs& at = instr.attrs_or_default();
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  if (as.rank() < 2 || bs.rank() != as.rank()) return Invalid(instr, "triangular-solve ranks");
  int64_t m = as.dimension(as.rank() - 1);
  if (as.dimension(as.rank() - 2) != m) return Invalid(instr, "a must be square");
  int64_t rows = bs.dimension(bs.rank() - 2), cols = bs.dimension(bs.rank() - 1);
  if ((at.left_side ? rows : cols) != m) return Invalid(instr, "b does not match a");
  auto wa = EvalConvert(a, PrimitiveType::kC128);
  auto wb = EvalConvert(b, PrimitiveType::kC128);
  if (!wa.ok()) return wa.status();
  if (!wb.ok()) return wb.status();
  int64_t batches = m == 0 ? 0 : a.element_count() / (m * m);
  Literal out(Shape::Array(PrimitiveType::kC128, bs.dimensions()));
  bool trans = at.transpose_a == TriangularTranspose::kTranspose ||
               at.transpose_a == TriangularTranspose::kAdjoint;
  bool conj = at.transpose_a == TriangularTranspose::kAdjoint;
  for (int64_t bt = 0; bt < batches; ++bt) {
    const c128* A = wa->data_as<c128>() + bt * m * m;
    const c128* B = wb->data_as<c128>() + bt * rows * cols;
    c128* X = out.mutable_data_as<c128>() + bt * rows * cols;
    // op(a) with only the referenced triangle.
    std::vector<c128> M(m * m, c128(0));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        bool in_tri = at.lower ? j <= i : j >= i;
        c128 v = in_tri ? A[i * m + j] : c128(0);
        if (i == j && at.unit_diagonal) v = 1;
        if (trans) M[j * m + i] = conj ? std::conj(v) : v;
        else M[i * m + j] = v;
      }
    }
    bool m_lower = at.lower != trans;
    // Left: M X = B (X is m x cols). Right: X M = B  <=>  M^T X^T = B^T.
    int64_t nrhs = at.left_side ? cols : rows;
    for (int64_t r = 0; r < nrhs; ++r) {
      auto bget = [&](int64_t i) { return at.left_side ? B[i * cols + r] : B[r * cols + i]; };
      auto xref = [&](int64_t i) -> c128& { return at.left_side ? X[i * cols + r] : X[r * cols + i]; };
      // Coefficient (i, j) of the system matrix.
      auto coef = [&](int64_t i, int64_t j) { return at.left_side ? M[i * m + j] : M[j * m + i]; };
      bool sys_lower = at.left_side ? m_lower : !m_lower;
      for (int64_t step = 0; step < m; ++step) {
        int64_t i = sys_lower ? step : m - 1 - step;
        c128 sum = bget(i);
        if (sys_lower) {
          for (int64_t j = 0; j < i; ++j) sum -= coef(i, j) * xref(j);
        } else {
          for (int64_t j = i + 1; j < m; ++j) sum -= coef(i, j) * xref(j);
        }
        xref(i) = sum / coef(i, i);
      }
    }
  }
  return EvalConvert(out, bs.element_type());
}

absl::StatusOr<Literal> EvalBatchNorm(const Instruction& instr, const Operands& ops) {
  const InstructionAttrs& at = instr.attrs_or_default();
  const Literal& x = *ops[0];
  const Shape& s = x.shape();
  int64_t f = at.feature_index;
  if (f < 0 || f >= s.rank()) return Invalid(instr, "feature_index out of range");
  PrimitiveType t = s.element_type();
  std::vector<Literal> w;
  for (const Literal* o : ops) {
    auto c = EvalConvert(*o, PrimitiveType::kF64);
    if (!c.ok()) return c.status();
    w.push_back(std::move(*c));
  }
  int64_t F = s.dimension(f);
  std::vector<int64_t> strides = RowMajorStrides(s.dimensions());
  int64_t total = x.element_count();
  int64_t per = F == 0 ? 0 : total / F;
  auto feat = [&](int64_t i) { return (i / strides[f]) % F; };
  const double* X = w[0].data_as<double>();
  double eps = at.epsilon;
  auto make = [&](const std::vector<double>& v, std::vector<int64_t> dims) -> absl::StatusOr<Literal> {
    Literal l(Shape::Array(PrimitiveType::kF64, dims));
    std::copy(v.begin(), v.end(), l.mutable_data_as<double>());
    return EvalConvert(l, t);
  };
  std::vector<double> mean(F, 0), var(F, 0);
  if (instr.opcode() == Opcode::kBatchNormInference) {
    for (int64_t c = 0; c < F; ++c) {
      mean[c] = w[3].data_as<double>()[c];
      var[c] = w[4].data_as<double>()[c];
    }
  } else if (instr.opcode() == Opcode::kBatchNormTraining) {
    for (int64_t i = 0; i < total; ++i) mean[feat(i)] += X[i];
    for (auto& m : mean) m /= per > 0 ? per : 1;
    for (int64_t i = 0; i < total; ++i) var[feat(i)] += (X[i] - mean[feat(i)]) * (X[i] - mean[feat(i)]);
    for (auto& v : var) v /= per > 0 ? per : 1;
  } else {
    for (int64_t c = 0; c < F; ++c) {
      mean[c] = w[2].data_as<double>()[c];
      var[c] = w[3].data_as<double>()[c];
    }
  }
  const double* scale = w[1].data_as<double>();
  std::vector<double> y(total);
  if (instr.opcode() != Opcode::kBatchNormGrad) {
    const double* offset = w[2].data_as<double>();
    for (int64_t i = 0; i < total; ++i) {
      int64_t c = feat(i);
      y[i] = (X[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
    }
    auto out = make(y, s.dimensions());
    if (!out.ok() || instr.opcode() == Opcode::kBatchNormInference) return out;
    auto m = make(mean, {F});
    auto v = make(var, {F});
    if (!m.ok()) return m.status();
    if (!v.ok()) return v.status();
    Literal tup(Shape::Tuple({out->shape(), m->shape(), v->shape()}), false);
    (*tup.mutable_tuple_elements())[0] = std::move(*out);
    (*tup.mutable_tuple_elements())[1] = std::move(*m);
    (*tup.mutable_tuple_elements())[2] = std::move(*v);
    return tup;
  }
  const double* G = w[4].data_as<double>();
  std::vector<double> sum_g(F, 0), sum_gx(F, 0);
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = feat(i);
    sum_g[c] += G[i];
    sum_gx[c] += G[i] * (X[i] - mean[c]);
  }
  std::vector<double> gscale(F), goffset = sum_g;
  for (int64_t c = 0; c < F; ++c) gscale[c] = sum_gx[c] / std::sqrt(var[c] + eps);
  for (int64_t i = 0; i < total; ++i) {
    int64_t c = feat(i);
    double inv = 1.0 / std::sqrt(var[c] + eps);
    double n = per > 0 ? per : 1;
    y[i] = scale[c] * inv *
           (G[i] - sum_g[c] / n - (X[i] - mean[c]) * sum_gx[c] / n / (var[c] + eps));
  }
  auto go = make(y, s.dimensions());
  auto gs = make(gscale, {F});
  auto gf = make(goffset, {F});
  if (!go.ok()) return go.status();
  if (!gs.ok()) return gs.status();
  if (!gf.ok()) return gf.status();
  Literal tup(Shape::Tuple({go->shape(), gs->shape(), gf->shape()}), false);
  (*tup.mutable_tuple_elements())[0] = std::move(*go);
  (*tup.mutable_tuple_elements())[1] = std::move(*gs);
  (*tup.mutable_tuple_elements())[2] = std::move(*gf);
  return tup;
}

}  // namespace hlowb::eval
