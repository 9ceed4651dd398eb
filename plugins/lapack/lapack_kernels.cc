#include "plugins/lapack/lapack_kernels.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace hlowb::lapack {
namespace {

// x / y, exact for a real y (std::complex division rescales, which costs a rounding even then).
Complex Div(Complex x, Complex y) {
  if (y.imag() == 0) return Complex(x.real() / y.real(), x.imag() / y.real());
  return x / y;
}

// |re| + |im|, the magnitude LAPACK's pivot search (i?amax) compares.
double Abs1(Complex x) { return std::abs(x.real()) + std::abs(x.imag()); }

// Euclidean norm of n elements with stride 1, scaled against overflow.
double Norm2(const Complex* x, int64_t n) {
  double scale = 0, ssq = 1;
  for (int64_t i = 0; i < n; ++i) {
    for (double v : {x[i].real(), x[i].imag()}) {
      if (v == 0) continue;
      const double av = std::abs(v);
      if (scale < av) {
        ssq = 1 + ssq * (scale / av) * (scale / av);
        scale = av;
      } else {
        ssq += (av / scale) * (av / scale);
      }
    }
  }
  return scale * std::sqrt(ssq);
}

}  // namespace

int32_t Potrf(char uplo, int64_t n, Complex* a, int64_t lda) {
  auto A = [&](int64_t i, int64_t j) -> Complex& { return a[i + j * lda]; };
  const bool lower = uplo == 'L';
  // The factor's row (lower) or column (upper) j is read through F(j, k) = L(j, k) or
  // conj(U(k, j)), so both cases share one loop.
  auto F = [&](int64_t j, int64_t k) { return lower ? A(j, k) : std::conj(A(k, j)); };
  for (int64_t j = 0; j < n; ++j) {
    double ajj = A(j, j).real();
    for (int64_t k = 0; k < j; ++k) ajj -= std::norm(F(j, k));
    if (!(ajj > 0)) {  // also NaN
      A(j, j) = ajj;
      return static_cast<int32_t>(j + 1);
    }
    ajj = std::sqrt(ajj);
    A(j, j) = ajj;
    for (int64_t i = j + 1; i < n; ++i) {
      // Lower: L(i, j) = (A(i, j) - sum_k L(i, k) conj(L(j, k))) / L(j, j).
      // Upper: U(j, i) = (A(j, i) - sum_k conj(U(k, j)) U(k, i)) / U(j, j).
      Complex sum = lower ? A(i, j) : A(j, i);
      for (int64_t k = 0; k < j; ++k) {
        sum -= lower ? A(i, k) * std::conj(A(j, k)) : std::conj(A(k, j)) * A(k, i);
      }
      (lower ? A(i, j) : A(j, i)) = sum / ajj;
    }
  }
  return 0;
}

void Trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, Complex alpha,
          const Complex* a, int64_t lda, Complex* b, int64_t ldb) {
  auto B = [&](int64_t i, int64_t j) -> Complex& { return b[i + j * ldb]; };
  if (alpha == Complex(0)) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) B(i, j) = 0;
    }
    return;
  }
  if (alpha != Complex(1)) {
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t i = 0; i < m; ++i) B(i, j) *= alpha;
    }
  }
  const bool left = side == 'L';
  const bool unit = diag == 'U';
  const int64_t k = left ? m : n;
  // The referenced triangle of A, and op(A) over it.
  auto tri = [&](int64_t i, int64_t j) -> Complex {
    if (i == j && unit) return 1;
    const bool in = uplo == 'L' ? i >= j : i <= j;
    return in ? a[i + j * lda] : Complex(0);
  };
  auto op = [&](int64_t i, int64_t j) -> Complex {
    if (trans == 'N') return tri(i, j);
    return trans == 'T' ? tri(j, i) : std::conj(tri(j, i));
  };
  const bool op_lower = (uplo == 'L') == (trans == 'N');
  if (left) {
    // Column c of X: op(A) x = b, forward for a lower op(A), backward for an upper one.
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t s = 0; s < k; ++s) {
        const int64_t i = op_lower ? s : k - 1 - s;
        Complex sum = B(i, c);
        if (op_lower) {
          for (int64_t j = 0; j < i; ++j) sum -= op(i, j) * B(j, c);
        } else {
          for (int64_t j = i + 1; j < k; ++j) sum -= op(i, j) * B(j, c);
        }
        B(i, c) = unit ? sum : Div(sum, op(i, i));
      }
    }
  } else {
    // Row r of X: x op(A) = b, element j from column j of op(A): forward for an upper op(A),
    // backward for a lower one.
    for (int64_t r = 0; r < m; ++r) {
      for (int64_t s = 0; s < k; ++s) {
        const int64_t j = op_lower ? k - 1 - s : s;
        Complex sum = B(r, j);
        if (op_lower) {
          for (int64_t i = j + 1; i < k; ++i) sum -= B(r, i) * op(i, j);
        } else {
          for (int64_t i = 0; i < j; ++i) sum -= B(r, i) * op(i, j);
        }
        B(r, j) = unit ? sum : Div(sum, op(j, j));
      }
    }
  }
}

int32_t Getrf(int64_t m, int64_t n, Complex* a, int64_t lda, int32_t* ipiv) {
  auto A = [&](int64_t i, int64_t j) -> Complex& { return a[i + j * lda]; };
  int32_t info = 0;
  const int64_t steps = std::min(m, n);
  for (int64_t j = 0; j < steps; ++j) {
    // The first entry of largest magnitude; a NaN first entry stays the pivot, as in i?amax.
    int64_t p = j;
    double best = Abs1(A(j, j));
    for (int64_t i = j + 1; i < m; ++i) {
      if (Abs1(A(i, j)) > best) {
        best = Abs1(A(i, j));
        p = i;
      }
    }
    ipiv[j] = static_cast<int32_t>(p + 1);
    if (A(p, j) != Complex(0)) {
      if (p != j) {
        for (int64_t c = 0; c < n; ++c) std::swap(A(j, c), A(p, c));
      }
      for (int64_t i = j + 1; i < m; ++i) A(i, j) = Div(A(i, j), A(j, j));
    } else if (info == 0) {
      info = static_cast<int32_t>(j + 1);
    }
    for (int64_t c = j + 1; c < n; ++c) {
      const Complex u = A(j, c);
      for (int64_t i = j + 1; i < m; ++i) A(i, c) -= A(i, j) * u;
    }
  }
  return info;
}

void Geqrf(int64_t m, int64_t n, Complex* a, int64_t lda, Complex* tau) {
  auto A = [&](int64_t i, int64_t j) -> Complex& { return a[i + j * lda]; };
  const int64_t k = std::min(m, n);
  for (int64_t j = 0; j < k; ++j) {
    // larfg on (alpha, x) = A(j:m, j).
    const Complex alpha = A(j, j);
    Complex* x = &A(j + 1, j);
    const int64_t len = m - j - 1;
    const double xnorm = Norm2(x, len);
    Complex t = 0;
    if (xnorm != 0 || alpha.imag() != 0) {
      const double norm = std::hypot(std::hypot(alpha.real(), alpha.imag()), xnorm);
      const double beta = std::signbit(alpha.real()) ? norm : -norm;
      t = Complex((beta - alpha.real()) / beta, -alpha.imag() / beta);
      const Complex scale = Div(Complex(1), alpha - beta);
      for (int64_t i = 0; i < len; ++i) x[i] *= scale;
      A(j, j) = beta;
    }
    tau[j] = t;
    if (t == Complex(0)) continue;
    // Apply H^H = I - conj(tau) v v^H to the columns after j, with v = (1, x).
    for (int64_t c = j + 1; c < n; ++c) {
      Complex w = A(j, c);
      for (int64_t i = 0; i < len; ++i) w += std::conj(x[i]) * A(j + 1 + i, c);
      const Complex f = std::conj(t) * w;
      A(j, c) -= f;
      for (int64_t i = 0; i < len; ++i) A(j + 1 + i, c) -= x[i] * f;
    }
  }
}

void Orgqr(int64_t m, int64_t n, int64_t k, Complex* a, int64_t lda, const Complex* tau) {
  auto A = [&](int64_t i, int64_t j) -> Complex& { return a[i + j * lda]; };
  // The reflectors' vectors, read before Q overwrites them.
  std::vector<Complex> v(static_cast<size_t>(m * k));
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t r = i + 1; r < m; ++r) v[r + i * m] = A(r, i);
  }
  for (int64_t c = 0; c < n; ++c) {
    for (int64_t r = 0; r < m; ++r) A(r, c) = r == c ? 1 : 0;
  }
  // Q = H(1) (H(2) ... (H(k) I)).
  for (int64_t i = k - 1; i >= 0; --i) {
    const Complex t = tau[i];
    if (t == Complex(0)) continue;
    for (int64_t c = 0; c < n; ++c) {
      Complex w = A(i, c);
      for (int64_t r = i + 1; r < m; ++r) w += std::conj(v[r + i * m]) * A(r, c);
      const Complex f = t * w;
      A(i, c) -= f;
      for (int64_t r = i + 1; r < m; ++r) A(r, c) -= v[r + i * m] * f;
    }
  }
}

}  // namespace hlowb::lapack
