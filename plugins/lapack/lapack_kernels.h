// The LAPACK routines jax's CPU custom calls run (potrf, trsm, getrf, geqrf, orgqr/ungqr),
// written out as the unblocked reference algorithms on one column-major matrix: element (i, j)
// at a[i + j * lda], the storage LAPACK itself uses. Every element type is computed in
// complex<double> (a real matrix has zero imaginary parts throughout), so one routine serves
// s, d, c and z; callers round once to the element type. Outputs agree with LAPACK's up to
// rounding, including what LAPACK leaves in place (the triangle potrf does not reference, the
// columns after a failed potrf step) and its status values (info).
//
// Not here: buffers, layouts, batches and attributes (plugins/lapack/lapack_plugin.cc), and
// blocked or multithreaded variants, whose results differ only in rounding.
#ifndef HLOWB_PLUGINS_LAPACK_LAPACK_KERNELS_H_
#define HLOWB_PLUGINS_LAPACK_LAPACK_KERNELS_H_

#include <complex>
#include <cstdint>

namespace hlowb::lapack {

using Complex = std::complex<double>;

// Cholesky factorization of a Hermitian positive definite n x n matrix: uplo 'L' gives
// A = L L^H in the lower triangle, 'U' gives A = U^H U in the upper one; the other triangle is
// not referenced and keeps its values, and the imaginary part of the diagonal is ignored.
// Returns 0, or j (1-based) when the leading minor of order j is not positive definite; then
// A(j, j) holds the non-positive pivot, columns (rows for 'U') before j hold the factor, and
// the rest is untouched.
int32_t Potrf(char uplo, int64_t n, Complex* a, int64_t lda);

// Solves op(A) X = alpha B (side 'L', A is m x m) or X op(A) = alpha B (side 'R', A is n x n)
// in place of the m x n matrix B. A is lower ('L') or upper ('U') triangular, the other
// triangle not referenced; op is trans 'N' (A), 'T' (A^T) or 'C' (A^H); diag 'U' takes the
// diagonal as ones without reading it. No check for singularity: a zero pivot gives inf/NaN.
void Trsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, Complex alpha,
          const Complex* a, int64_t lda, Complex* b, int64_t ldb);

// LU factorization with partial pivoting of an m x n matrix: A = P L U, L unit lower (stored
// below the diagonal), U upper. ipiv (min(m, n) entries, 1-based) names the row swapped with
// row i at step i; the pivot is the first entry of largest |re| + |im| in its column. Returns 0,
// or i (1-based) for the first exactly zero U(i, i); the factorization is completed either way.
int32_t Getrf(int64_t m, int64_t n, Complex* a, int64_t lda, int32_t* ipiv);

// QR factorization of an m x n matrix by Householder reflectors: R on and above the diagonal,
// below it the vectors v_i (v_i(i) = 1 implied), tau (min(m, n) entries) their scalars:
// A = Q R with Q = H(1) ... H(k), H(i) = I - tau_i v_i v_i^H. Reflectors follow LAPACK's
// larfg: beta = -sign(re alpha) |(alpha, x)| is real, tau = 0 when nothing is to be reflected.
void Geqrf(int64_t m, int64_t n, Complex* a, int64_t lda, Complex* tau);

// The first n columns of Q = H(1) ... H(k) from k reflectors as Geqrf stores them, in place of
// the m x n matrix A (m >= n >= k, checked by the caller).
void Orgqr(int64_t m, int64_t n, int64_t k, Complex* a, int64_t lda, const Complex* tau);

}  // namespace hlowb::lapack

#endif  // HLOWB_PLUGINS_LAPACK_LAPACK_KERNELS_H_
