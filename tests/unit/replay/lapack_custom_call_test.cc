// jax's CPU LAPACK custom calls (plugins/lapack) and the TopK custom call with XLA's own
// comparators (plugins/topk). Every result is held against an expectation computed here
// independently: worked small cases, the defining identity of each factorization (L L^H = A,
// op(A) X = B, P A = L U, Q R = A with Q^H Q = I), LAPACK's conventions (info, 1-based pivots,
// the reflector sign, the triangle LAPACK leaves alone), the evaluator's own cholesky and
// triangular-solve ops, and a stable sort written out in the test.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "plugins/api/custom_call_registry.h"
#include "plugins/builtin/builtin_plugins.h"
#include "replay/compare/compare.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Parse;
using C = std::complex<double>;

absl::StatusOr<Literal> RunHlo(const std::string& hlo, const std::vector<Literal>& args) {
  auto m = ParseModule(hlo);
  if (!m.ok()) return m.status();
  EvaluatorOptions eo;
  eo.custom_call =
      CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), CustomCallDispatchOptions{})
          ->AsFunction();
  return EvaluateModule(**m, args, eo);
}

// A literal of `type` (f32, f64, c64, c128, s32) from values in row-major order.
Literal Make(PrimitiveType type, const std::vector<int64_t>& dims, const std::vector<C>& values) {
  Literal l(Shape::Array(type, dims));
  EXPECT_EQ(static_cast<size_t>(l.element_count()), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    switch (type) {
      case PrimitiveType::kF32: l.mutable_data_as<float>()[i] = values[i].real(); break;
      case PrimitiveType::kF64: l.mutable_data_as<double>()[i] = values[i].real(); break;
      case PrimitiveType::kC64:
        l.mutable_data_as<std::complex<float>>()[i] = std::complex<float>(values[i]);
        break;
      case PrimitiveType::kC128: l.mutable_data_as<C>()[i] = values[i]; break;
      case PrimitiveType::kS32: l.mutable_data_as<int32_t>()[i] = values[i].real(); break;
      default: ADD_FAILURE() << "unsupported type";
    }
  }
  return l;
}

C At(const Literal& l, int64_t i) {
  switch (l.shape().element_type()) {
    case PrimitiveType::kF32: return l.data_as<float>()[i];
    case PrimitiveType::kF64: return l.data_as<double>()[i];
    case PrimitiveType::kC64: return C(l.data_as<std::complex<float>>()[i]);
    case PrimitiveType::kC128: return l.data_as<C>()[i];
    case PrimitiveType::kS32: return l.data_as<int32_t>()[i];
    default: ADD_FAILURE() << "unsupported type"; return 0;
  }
}

std::vector<C> Values(const Literal& l) {
  std::vector<C> v(l.element_count());
  for (int64_t i = 0; i < l.element_count(); ++i) v[i] = At(l, i);
  return v;
}

std::vector<C> Random(int64_t count, bool complex, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<C> v(count);
  for (C& x : v) {
    const double re = u(gen);
    x = C(re, complex ? u(gen) : 0.0);
  }
  return v;
}

// Row-major n x n matrices, batch after batch.
struct Mat {
  int64_t rows, cols;
  std::vector<C> v;
  C& operator()(int64_t i, int64_t j) { return v[i * cols + j]; }
  C operator()(int64_t i, int64_t j) const { return v[i * cols + j]; }
};

Mat Block(const std::vector<C>& values, int64_t b, int64_t rows, int64_t cols) {
  Mat m{rows, cols, {}};
  m.v.assign(values.begin() + b * rows * cols, values.begin() + (b + 1) * rows * cols);
  return m;
}

Mat Mul(const Mat& a, const Mat& b) {
  Mat c{a.rows, b.cols, std::vector<C>(a.rows * b.cols)};
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < b.cols; ++j) {
      for (int64_t k = 0; k < a.cols; ++k) c(i, j) += a(i, k) * b(k, j);
    }
  }
  return c;
}

Mat Adjoint(const Mat& a) {
  Mat t{a.cols, a.rows, std::vector<C>(a.v.size())};
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) t(j, i) = std::conj(a(i, j));
  }
  return t;
}

double MaxDiff(const Mat& a, const Mat& b) {
  double d = 0;
  for (size_t i = 0; i < a.v.size(); ++i) d = std::max(d, std::abs(a.v[i] - b.v[i]));
  return d;
}

// Hermitian positive definite: B B^H + n I.
std::vector<C> SpdBatch(int64_t batch, int64_t n, bool complex, uint32_t seed) {
  std::vector<C> r = Random(batch * n * n, complex, seed), out;
  for (int64_t b = 0; b < batch; ++b) {
    Mat m = Block(r, b, n, n);
    Mat a = Mul(m, Adjoint(m));
    for (int64_t i = 0; i < n; ++i) a(i, i) += static_cast<double>(n);
    out.insert(out.end(), a.v.begin(), a.v.end());
  }
  return out;
}

const char* TypeName(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF32: return "f32";
    case PrimitiveType::kF64: return "f64";
    case PrimitiveType::kC64: return "c64";
    default: return "c128";
  }
}

char Letter(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF32: return 's';
    case PrimitiveType::kF64: return 'd';
    case PrimitiveType::kC64: return 'c';
    default: return 'z';
  }
}

std::string Join(const std::vector<int64_t>& dims) {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s;
}

// Column-major matrices: the two last dimensions swapped in minor-to-major order.
std::string ColumnMajor(int rank) {
  std::string s = "{" + std::to_string(rank - 2) + "," + std::to_string(rank - 1);
  for (int d = rank - 3; d >= 0; --d) s += "," + std::to_string(d);
  return s + "}";
}

std::string RowMajor(int rank) {
  std::string s = "{";
  for (int d = rank - 1; d >= 0; --d) s += std::to_string(d) + (d ? "," : "");
  return s + "}";
}

std::string PotrfModule(PrimitiveType t, const std::vector<int64_t>& dims, char uplo,
                        const std::string& layout) {
  const std::string shape = std::string(TypeName(t)) + "[" + Join(dims) + "]" + layout;
  const std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  return "HloModule potrf\nENTRY e {\n  a = " + shape + " parameter(0)\n  ROOT c = (" + shape +
         ", s32[" + Join(batch) + "]) custom-call(a), custom_call_target=\"lapack_" +
         Letter(t) + "potrf_ffi\", operand_layout_constraints={" + shape +
         "}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, "
         "backend_config={uplo = " + std::to_string(static_cast<int>(uplo)) + " : ui8}\n}\n";
}

// --- potrf -------------------------------------------------------------------------------------

// The textbook factor of [[4, 12, -16], [12, 37, -43], [-16, -43, 98]] is
// [[2, 0, 0], [6, 1, 0], [-8, 5, 3]].
const std::vector<C> kSpd3 = {4, 12, -16, 12, 37, -43, -16, -43, 98};

TEST(LapackPotrf, LowerFactorKeepsTheUpperTriangleAsGiven) {
  auto r = RunHlo(PotrfModule(PrimitiveType::kF32, {3, 3}, 'L', "{0,1}"),
               {Make(PrimitiveType::kF32, {3, 3}, kSpd3)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<C>{2, 12, -16, 6, 1, -43, -8, 5, 3}));
  EXPECT_EQ(At(r->tuple_elements()[1], 0), C(0));
}

TEST(LapackPotrf, UpperFactorKeepsTheLowerTriangleAsGiven) {
  auto r = RunHlo(PotrfModule(PrimitiveType::kF64, {3, 3}, 'U', "{0,1}"),
               {Make(PrimitiveType::kF64, {3, 3}, kSpd3)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<C>{2, 6, -8, 12, 1, 5, -16, -43, 3}));
}

// Row-major matrices reach LAPACK transposed: uplo 'L' then factors the logical upper triangle.
TEST(LapackPotrf, RowMajorLayoutIsSeenTransposed) {
  auto r = RunHlo(PotrfModule(PrimitiveType::kF32, {3, 3}, 'L', "{1,0}"),
               {Make(PrimitiveType::kF32, {3, 3}, kSpd3)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<C>{2, 6, -8, 12, 1, 5, -16, -43, 3}));
}

TEST(LapackPotrf, BatchesReconstructTheInputInEveryType) {
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kC64,
                          PrimitiveType::kC128}) {
    for (char uplo : {'L', 'U'}) {
      SCOPED_TRACE(std::string(TypeName(t)) + " uplo " + uplo);
      const bool complex = IsComplex(t);
      const int64_t n = 5;
      std::vector<C> a = SpdBatch(6, n, complex, 11);
      auto r = RunHlo(PotrfModule(t, {2, 3, n, n}, uplo, ColumnMajor(4)),
                      {Make(t, {2, 3, n, n}, a)});
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<C> f = Values(r->tuple_elements()[0]);
      EXPECT_EQ(Values(r->tuple_elements()[1]), std::vector<C>(6, 0));
      const bool single = t == PrimitiveType::kF32 || t == PrimitiveType::kC64;
      for (int64_t b = 0; b < 6; ++b) {
        Mat in = Block(a, b, n, n), got = Block(f, b, n, n), tri{n, n, std::vector<C>(n * n)};
        for (int64_t i = 0; i < n; ++i) {
          EXPECT_GT(got(i, i).real(), 0);
          EXPECT_EQ(got(i, i).imag(), 0);
          for (int64_t j = 0; j < n; ++j) {
            const bool in_factor = uplo == 'L' ? j <= i : j >= i;
            if (in_factor) {
              tri(i, j) = got(i, j);
            } else {  // the triangle LAPACK does not reference keeps the input
              EXPECT_LT(std::abs(got(i, j) - in(i, j)), single ? 1e-5 : 1e-14);
            }
          }
        }
        Mat product = uplo == 'L' ? Mul(tri, Adjoint(tri)) : Mul(Adjoint(tri), tri);
        EXPECT_LT(MaxDiff(product, in), single ? 1e-4 : 1e-12) << "batch " << b;
      }
    }
  }
}

// LAPACK stops at the first non-positive pivot: info is its 1-based column, that diagonal entry
// holds the pivot, and the other matrices of the batch factor normally.
TEST(LapackPotrf, InfoNamesTheFirstNonPositivePivot) {
  std::vector<C> a = {4, 2, 2, 10,   // PD: L = [[2, 0], [1, 3]]
                      1, 2, 2, 1,    // pivot 2 is 1 - 4 = -3
                      -1, 0, 0, 1};  // pivot 1 is -1
  auto r = RunHlo(PotrfModule(PrimitiveType::kF64, {3, 2, 2}, 'L', ColumnMajor(3)),
               {Make(PrimitiveType::kF64, {3, 2, 2}, a)});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<C>{0, 2, 1}));
  EXPECT_EQ(Values(r->tuple_elements()[0]),
            (std::vector<C>{2, 2, 1, 3, 1, 2, 2, -3, -1, 0, 0, 1}));
}

// jax's lowering of cholesky (potrf, then the lower triangle where info == 0, NaN elsewhere)
// agrees with the evaluator's cholesky op.
TEST(LapackPotrf, JaxPatternMatchesTheCholeskyOp) {
  const char* custom = R"(
HloModule jax_cholesky
ENTRY e {
  x = f32[2,4,4] parameter(0)
  xt = f32[2,4,4] transpose(x), dimensions={0,2,1}
  xx = f32[2,4,4] dot(x, xt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  i0 = s32[4,4] iota(), iota_dimension=0
  i1 = s32[4,4] iota(), iota_dimension=1
  eye = pred[4,4] compare(i0, i1), direction=EQ
  four = f32[] constant(4)
  zero = f32[] constant(0)
  fours = f32[4,4] broadcast(four), dimensions={}
  zeros = f32[4,4] broadcast(zero), dimensions={}
  d = f32[4,4] select(eye, fours, zeros)
  db = f32[2,4,4] broadcast(d), dimensions={1,2}
  spd = f32[2,4,4]{1,2,0} add(xx, db)
  c = (f32[2,4,4]{1,2,0}, s32[2]) custom-call(spd), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[2,4,4]{1,2,0}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  l = f32[2,4,4]{1,2,0} get-tuple-element(c), index=0
  info = s32[2] get-tuple-element(c), index=1
  z = s32[] constant(0)
  zb = s32[2] broadcast(z), dimensions={}
  ok = pred[2] compare(info, zb), direction=EQ
  okb = pred[2,4,4] broadcast(ok), dimensions={0}
  qnan = f32[] constant(nan)
  nans = f32[2,4,4] broadcast(qnan), dimensions={}
  lo = f32[2,4,4] select(okb, l, nans)
  ge = pred[4,4] compare(i0, i1), direction=GE
  geb = pred[2,4,4] broadcast(ge), dimensions={1,2}
  zb3 = f32[2,4,4] broadcast(zero), dimensions={}
  ROOT r = f32[2,4,4] select(geb, lo, zb3)
}
)";
  const char* plain = R"(
HloModule plain
ENTRY e {
  x = f32[2,4,4] parameter(0)
  xt = f32[2,4,4] transpose(x), dimensions={0,2,1}
  xx = f32[2,4,4] dot(x, xt), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  i0 = s32[4,4] iota(), iota_dimension=0
  i1 = s32[4,4] iota(), iota_dimension=1
  eye = pred[4,4] compare(i0, i1), direction=EQ
  four = f32[] constant(4)
  zero = f32[] constant(0)
  fours = f32[4,4] broadcast(four), dimensions={}
  zeros = f32[4,4] broadcast(zero), dimensions={}
  d = f32[4,4] select(eye, fours, zeros)
  db = f32[2,4,4] broadcast(d), dimensions={1,2}
  spd = f32[2,4,4] add(xx, db)
  ROOT r = f32[2,4,4] cholesky(spd), lower=true
}
)";
  auto pm = Parse(plain);
  ASSERT_TRUE(pm);
  auto args = MakeFakeArguments(*pm, FakeDataOptions{5, false});
  ASSERT_TRUE(args.ok()) << args.status();
  auto want = EvaluateModule(*pm, *args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = RunHlo(custom, *args);
  ASSERT_TRUE(got.ok()) << got.status();
  ComparisonReport c = CompareLiterals(*want, *got, ErrorBounds{1e-5, 1e-5}, 3);
  EXPECT_TRUE(c.ok()) << c.ToString();
}

TEST(LapackPotrf, RefusesWhatItCannotCompute) {
  auto missing = RunHlo(
      R"(HloModule m
ENTRY e {
  a = f32[2,2]{0,1} parameter(0)
  ROOT c = (f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", api_version=API_VERSION_TYPED_FFI
})",
      {Make(PrimitiveType::kF32, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("backend_config has no uplo attribute"),
            std::string::npos)
      << missing.status();
  auto bad = RunHlo(PotrfModule(PrimitiveType::kF32, {2, 2}, 'X', "{0,1}"),
                 {Make(PrimitiveType::kF32, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("attribute uplo = 88 : u8 is not one of 'L' (76), 'U'"),
            std::string::npos)
      << bad.status();
  auto wrong_type = RunHlo(
      R"(HloModule m
ENTRY e {
  a = f64[2,2]{0,1} parameter(0)
  ROOT c = (f64[2,2]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_spotrf_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
})",
      {Make(PrimitiveType::kF64, {2, 2}, {1, 0, 0, 1})});
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_NE(wrong_type.status().message().find("the operand is f64[2,2]; expected f32"),
            std::string::npos)
      << wrong_type.status();
}

// --- trsm --------------------------------------------------------------------------------------

struct TrsmCase {
  char side, uplo, trans, diag;
};

std::string TrsmModule(PrimitiveType t, const std::vector<int64_t>& a_dims,
                       const std::vector<int64_t>& b_dims, const std::string& a_layout,
                       const std::string& b_layout, TrsmCase c, bool alpha = false) {
  const std::string ts = TypeName(t);
  const std::string as = ts + "[" + Join(a_dims) + "]" + a_layout;
  const std::string bs = ts + "[" + Join(b_dims) + "]" + b_layout;
  auto ch = [](char x) { return std::to_string(static_cast<int>(x)) + " : ui8"; };
  return "HloModule trsm\nENTRY e {\n  a = " + as + " parameter(0)\n  b = " + bs +
         " parameter(1)\n" + (alpha ? "  s = " + ts + "[] parameter(2)\n" : "") +
         "  ROOT x = " + bs + " custom-call(a, b" + (alpha ? ", s" : "") +
         "), custom_call_target=\"lapack_" + Letter(t) + "trsm_ffi\", " +
         "operand_layout_constraints={" + as + ", " + bs + (alpha ? ", " + ts + "[]" : "") +
         "}, output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, " +
         "backend_config={diag = " + ch(c.diag) + ", side = " + ch(c.side) +
         ", trans_x = " + ch(c.trans) + ", uplo = " + ch(c.uplo) + "}\n}\n";
}

// op(A) as the test reads it: the named triangle of A (ones on a unit diagonal), transposed or
// conjugate-transposed.
Mat OpA(const Mat& a, TrsmCase c) {
  Mat t{a.rows, a.cols, std::vector<C>(a.v.size())};
  for (int64_t i = 0; i < a.rows; ++i) {
    for (int64_t j = 0; j < a.cols; ++j) {
      const bool in = c.uplo == 'L' ? j <= i : j >= i;
      t(i, j) = i == j && c.diag == 'U' ? C(1) : in ? a(i, j) : C(0);
    }
  }
  if (c.trans == 'N') return t;
  Mat h = Adjoint(t);
  if (c.trans == 'T') {
    for (C& x : h.v) x = std::conj(x);
  }
  return h;
}

// Every side, triangle, transposition and diagonal, on batched real and complex matrices:
// op(A) X = alpha B (left) or X op(A) = alpha B (right), and B's values in the triangle A does
// not reference make no difference.
TEST(LapackTrsm, SolvesEveryVariantInEveryType) {
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kC64,
                          PrimitiveType::kC128}) {
    for (char side : {'L', 'R'}) {
      for (char uplo : {'L', 'U'}) {
        for (char trans : {'N', 'T', 'C'}) {
          for (char diag : {'N', 'U'}) {
            const TrsmCase c{side, uplo, trans, diag};
            SCOPED_TRACE(std::string(TypeName(t)) + " side " + side + " uplo " + uplo +
                         " trans " + trans + " diag " + diag);
            const bool complex = IsComplex(t);
            const int64_t batch = 2, m = 4, n = 3, k = side == 'L' ? m : n;
            std::vector<C> a = Random(batch * k * k, complex, 21);
            for (int64_t b = 0; b < batch; ++b) {
              for (int64_t i = 0; i < k; ++i) a[b * k * k + i * k + i] += 4.0;
            }
            std::vector<C> bv = Random(batch * m * n, complex, 22);
            const bool with_alpha = side == 'R' && trans == 'C';
            const C alpha = complex ? C(0.5, -2) : C(-1.5);
            std::vector<Literal> args;
            args.push_back(Make(t, {batch, k, k}, a));
            args.push_back(Make(t, {batch, m, n}, bv));
            if (with_alpha) args.push_back(Make(t, {}, {alpha}));
            auto r = RunHlo(TrsmModule(t, {batch, k, k}, {batch, m, n}, ColumnMajor(3),
                                    ColumnMajor(3), c, with_alpha),
                         args);
            ASSERT_TRUE(r.ok()) << r.status();
            // Read the inputs as the kernel got them (rounded to the type).
            std::vector<C> a_in = Values(args[0]), b_in = Values(args[1]);
            const C scale = with_alpha ? At(args[2], 0) : C(1);
            std::vector<C> x = Values(*r);
            const bool single = t == PrimitiveType::kF32 || t == PrimitiveType::kC64;
            for (int64_t b = 0; b < batch; ++b) {
              Mat op = OpA(Block(a_in, b, k, k), c), xb = Block(x, b, m, n);
              Mat lhs = side == 'L' ? Mul(op, xb) : Mul(xb, op);
              Mat rhs = Block(b_in, b, m, n);
              for (C& v : rhs.v) v *= scale;
              EXPECT_LT(MaxDiff(lhs, rhs), single ? 2e-5 : 1e-13) << "batch " << b;
            }
          }
        }
      }
    }
  }
}

// The handler and the evaluator's triangular-solve op agree on every variant.
TEST(LapackTrsm, MatchesTheTriangularSolveOp) {
  for (char side : {'L', 'R'}) {
    for (char uplo : {'L', 'U'}) {
      for (char trans : {'N', 'T'}) {
        for (char diag : {'N', 'U'}) {
          SCOPED_TRACE(std::string("side ") + side + " uplo " + uplo + " trans " + trans +
                       " diag " + diag);
          const int64_t m = 5, n = 3, k = side == 'L' ? m : n;
          const std::string a_shape = "f32[2," + std::to_string(k) + "," + std::to_string(k) + "]";
          const std::string plain =
              "HloModule plain\nENTRY e {\n  a = " + a_shape + " parameter(0)\n  b = f32[2,5,3] "
              "parameter(1)\n  ROOT x = f32[2,5,3] triangular-solve(a, b), left_side=" +
              (side == 'L' ? "true" : "false") + ", lower=" + (uplo == 'L' ? "true" : "false") +
              ", unit_diagonal=" + (diag == 'U' ? "true" : "false") +
              ", transpose_a=" + (trans == 'N' ? "NO_TRANSPOSE" : "TRANSPOSE") + "\n}\n";
          std::vector<C> a = Random(2 * k * k, false, 31);
          for (int64_t b = 0; b < 2; ++b) {
            for (int64_t i = 0; i < k; ++i) a[b * k * k + i * k + i] += 4.0;
          }
          std::vector<Literal> args;
          args.push_back(Make(PrimitiveType::kF32, {2, k, k}, a));
          args.push_back(Make(PrimitiveType::kF32, {2, m, n}, Random(2 * m * n, false, 32)));
          auto pm = Parse(plain);
          ASSERT_TRUE(pm);
          auto want = EvaluateModule(*pm, args);
          ASSERT_TRUE(want.ok()) << want.status();
          auto got = RunHlo(TrsmModule(PrimitiveType::kF32, {2, k, k}, {2, m, n}, ColumnMajor(3),
                                    ColumnMajor(3), {side, uplo, trans, diag}),
                         args);
          ASSERT_TRUE(got.ok()) << got.status();
          ComparisonReport c = CompareLiterals(*want, *got, ErrorBounds{1e-5, 1e-5}, 3);
          EXPECT_TRUE(c.ok()) << c.ToString();
        }
      }
    }
  }
}

// A row-major A reaches LAPACK transposed: uplo 'L', no transposition, solves with the logical
// upper triangle transposed.
TEST(LapackTrsm, RowMajorMatrixIsSeenTransposed) {
  std::vector<C> a = Random(16, false, 41);
  for (int i = 0; i < 4; ++i) a[i * 4 + i] += 4.0;
  std::vector<Literal> args;
  args.push_back(Make(PrimitiveType::kF64, {4, 4}, a));
  args.push_back(Make(PrimitiveType::kF64, {4, 2}, Random(8, false, 42)));
  auto got = RunHlo(TrsmModule(PrimitiveType::kF64, {4, 4}, {4, 2}, "{1,0}", "{0,1}",
                            {'L', 'L', 'N', 'N'}),
                 args);
  ASSERT_TRUE(got.ok()) << got.status();
  Mat op = OpA(Block(a, 0, 4, 4), {'L', 'U', 'T', 'N'});
  Mat lhs = Mul(op, Block(Values(*got), 0, 4, 2));
  EXPECT_LT(MaxDiff(lhs, Block(Values(args[1]), 0, 4, 2)), 1e-13);
}

TEST(LapackTrsm, RefusesMismatchedOperandsAndBadAttributes) {
  std::vector<Literal> args;
  args.push_back(Make(PrimitiveType::kF32, {3, 3}, Random(9, false, 1)));
  args.push_back(Make(PrimitiveType::kF32, {4, 2}, Random(8, false, 2)));
  auto r = RunHlo(TrsmModule(PrimitiveType::kF32, {3, 3}, {4, 2}, "{0,1}", "{0,1}",
                          {'L', 'L', 'N', 'N'}),
               args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("operand 0 (a, for side 'L' and b f32[4,2]) is f32[3,3]; "
                                      "expected f32[4,4]"),
            std::string::npos)
      << r.status();
  std::vector<Literal> ok_args;
  ok_args.push_back(Make(PrimitiveType::kF32, {2, 2}, {1, 0, 0, 1}));
  ok_args.push_back(Make(PrimitiveType::kF32, {2, 2}, {1, 2, 3, 4}));
  auto bad = RunHlo(TrsmModule(PrimitiveType::kF32, {2, 2}, {2, 2}, "{0,1}", "{0,1}",
                            {'L', 'L', 'X', 'N'}),
                 ok_args);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("attribute trans_x = 88 : u8 is not one of 'N' (78), "
                                        "'T' (84), 'C' (67)"),
            std::string::npos)
      << bad.status();
}

// --- getrf -------------------------------------------------------------------------------------

std::string GetrfModule(PrimitiveType t, const std::vector<int64_t>& dims) {
  const std::string shape = std::string(TypeName(t)) + "[" + Join(dims) + "]" +
                            ColumnMajor(static_cast<int>(dims.size()));
  std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  std::vector<int64_t> piv = batch;
  piv.push_back(std::min(dims[dims.size() - 2], dims.back()));
  return "HloModule getrf\nENTRY e {\n  a = " + shape + " parameter(0)\n  ROOT c = (" + shape +
         ", s32[" + Join(piv) + "], s32[" + Join(batch) + "]) custom-call(a), " +
         "custom_call_target=\"lapack_" + Letter(t) + "getrf_ffi\", operand_layout_constraints={" +
         shape + "}, output_to_operand_aliasing={{0}: (0, {})}, " +
         "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n";
}

TEST(LapackGetrf, WorkedCaseAndZeroPivot) {
  // [[1, 2], [3, 4]]: row 2 is the pivot; L = [[1, 0], [1/3, 1]], U = [[3, 4], [0, 2/3]].
  // [[0, 5], [0, 1]]: column 1 is zero, so info = 1, no swap; the second step pivots on 1.
  auto r = RunHlo(GetrfModule(PrimitiveType::kF64, {2, 2, 2}),
               {Make(PrimitiveType::kF64, {2, 2, 2}, {1, 2, 3, 4, 0, 5, 0, 1})});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<C> lu = Values(r->tuple_elements()[0]);
  EXPECT_EQ(lu[0], C(3));
  EXPECT_EQ(lu[1], C(4));
  EXPECT_EQ(lu[2], C(1.0 / 3));
  EXPECT_NEAR(lu[3].real(), 2.0 / 3, 1e-15);
  EXPECT_EQ(std::vector<C>(lu.begin() + 4, lu.end()), (std::vector<C>{0, 5, 0, 1}));
  EXPECT_EQ(Values(r->tuple_elements()[1]), (std::vector<C>{2, 2, 1, 2}));
  EXPECT_EQ(Values(r->tuple_elements()[2]), (std::vector<C>{0, 1}));
}

// P A = L U for wide, tall and square batches: the pivots swap rows in order, and no entry of L
// exceeds 1 in modulus (sqrt(2) for complex values, whose pivots compare |re| + |im|).
TEST(LapackGetrf, PivotedFactorsReconstructTheInput) {
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kC64,
                          PrimitiveType::kC128}) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{4, 4}, {5, 3}, {3, 5}}) {
      SCOPED_TRACE(std::string(TypeName(t)) + " " + std::to_string(m) + "x" + std::to_string(n));
      const int64_t batch = 3, k = std::min(m, n);
      std::vector<Literal> args;
      args.push_back(Make(t, {batch, m, n}, Random(batch * m * n, IsComplex(t), 51)));
      auto r = RunHlo(GetrfModule(t, {batch, m, n}), args);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<C> a = Values(args[0]), lu = Values(r->tuple_elements()[0]);
      std::vector<C> piv = Values(r->tuple_elements()[1]);
      EXPECT_EQ(Values(r->tuple_elements()[2]), std::vector<C>(batch, 0));
      const bool single = t == PrimitiveType::kF32 || t == PrimitiveType::kC64;
      for (int64_t b = 0; b < batch; ++b) {
        Mat pa = Block(a, b, m, n), f = Block(lu, b, m, n);
        for (int64_t i = 0; i < k; ++i) {
          const int64_t p = static_cast<int64_t>(piv[b * k + i].real()) - 1;
          ASSERT_GE(p, i);
          ASSERT_LT(p, m);
          for (int64_t j = 0; j < n; ++j) std::swap(pa(i, j), pa(p, j));
        }
        Mat l{m, k, std::vector<C>(m * k)}, u{k, n, std::vector<C>(k * n)};
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            if (j < i && j < k) {
              l(i, j) = f(i, j);
              EXPECT_LE(std::abs(f(i, j)), (IsComplex(t) ? std::sqrt(2.0) : 1.0) + 1e-6);
            }
            if (i == j && i < k) l(i, j) = 1;
            if (j >= i && i < k) u(i, j) = f(i, j);
          }
        }
        EXPECT_LT(MaxDiff(Mul(l, u), pa), single ? 1e-5 : 1e-13) << "batch " << b;
      }
    }
  }
}

// --- geqrf and orgqr/ungqr ---------------------------------------------------------------------

std::string QrModule(PrimitiveType t, const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  const std::string ts = TypeName(t);
  const std::string shape = ts + "[" + Join(dims) + "]" + ColumnMajor(rank);
  std::vector<int64_t> tau(dims.begin(), dims.end() - 2);
  tau.push_back(std::min(dims[rank - 2], dims.back()));
  const std::string tau_shape = ts + "[" + Join(tau) + "]" + RowMajor(rank - 1);
  const std::string q = IsComplex(t) ? "ungqr" : "orgqr";
  return "HloModule qr\nENTRY e {\n  a = " + shape + " parameter(0)\n  f = (" + shape + ", " +
         tau_shape + ") custom-call(a), custom_call_target=\"lapack_" + Letter(t) +
         "geqrf_ffi\", operand_layout_constraints={" + shape +
         "}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, "
         "backend_config={}\n  r = " + shape + " get-tuple-element(f), index=0\n  tau = " +
         tau_shape + " get-tuple-element(f), index=1\n  q = " + shape +
         " custom-call(r, tau), custom_call_target=\"lapack_" + Letter(t) + q +
         "_ffi\", operand_layout_constraints={" + shape + ", " + tau_shape +
         "}, output_to_operand_aliasing={{}: (0, {})}, api_version=API_VERSION_TYPED_FFI, "
         "backend_config={}\n  ROOT t = (" + shape + ", " + tau_shape + ", " + shape +
         ") tuple(r, tau, q)\n}\n";
}

// [[3], [4]]: alpha 3, |x| 4, so beta = -5, tau = (beta - alpha) / beta = 1.6 and the stored
// vector is 4 / (alpha - beta) = 0.5; Q's column is H e1 = (1 - tau, -tau v) = (-0.6, -0.8).
TEST(LapackGeqrf, WorkedReflector) {
  auto r = RunHlo(QrModule(PrimitiveType::kF64, {2, 1}),
               {Make(PrimitiveType::kF64, {2, 1}, {3, 4})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Values(r->tuple_elements()[0]), (std::vector<C>{-5, 0.5}));
  EXPECT_NEAR(At(r->tuple_elements()[1], 0).real(), 1.6, 1e-15);
  std::vector<C> q = Values(r->tuple_elements()[2]);
  EXPECT_NEAR(q[0].real(), -0.6, 1e-15);
  EXPECT_NEAR(q[1].real(), -0.8, 1e-15);
}

// Q R = A and Q^H Q = I for tall and square batches; R's diagonal has LAPACK's sign
// (-sign(re a_jj) at the step that made it, which for column 0 is the input's).
TEST(LapackGeqrf, QTimesRIsTheInputAndQIsOrthonormal) {
  for (PrimitiveType t : {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kC64,
                          PrimitiveType::kC128}) {
    for (auto [m, n] : {std::pair<int64_t, int64_t>{5, 3}, {4, 4}}) {
      SCOPED_TRACE(std::string(TypeName(t)) + " " + std::to_string(m) + "x" + std::to_string(n));
      const int64_t batch = 2, k = std::min(m, n);
      std::vector<Literal> args;
      args.push_back(Make(t, {batch, m, n}, Random(batch * m * n, IsComplex(t), 61)));
      auto r = RunHlo(QrModule(t, {batch, m, n}), args);
      ASSERT_TRUE(r.ok()) << r.status();
      std::vector<C> a = Values(args[0]), f = Values(r->tuple_elements()[0]);
      std::vector<C> q = Values(r->tuple_elements()[2]);
      const bool single = t == PrimitiveType::kF32 || t == PrimitiveType::kC64;
      const double tol = single ? 2e-5 : 1e-13;
      for (int64_t b = 0; b < batch; ++b) {
        Mat in = Block(a, b, m, n), fb = Block(f, b, m, n), qb = Block(q, b, m, n);
        Mat rr{n, n, std::vector<C>(n * n)};
        for (int64_t i = 0; i < k; ++i) {
          for (int64_t j = i; j < n; ++j) rr(i, j) = fb(i, j);
        }
        double col0 = 0;
        for (int64_t i = 0; i < m; ++i) col0 += std::norm(in(i, 0));
        EXPECT_NEAR(rr(0, 0).real(), (in(0, 0).real() < 0 ? 1 : -1) * std::sqrt(col0), tol);
        EXPECT_EQ(rr(0, 0).imag(), 0);
        EXPECT_LT(MaxDiff(Mul(qb, rr), in), tol) << "batch " << b;
        Mat eye{n, n, std::vector<C>(n * n)};
        for (int64_t i = 0; i < n; ++i) eye(i, i) = 1;
        EXPECT_LT(MaxDiff(Mul(Adjoint(qb), qb), eye), tol) << "batch " << b;
      }
    }
  }
}

TEST(LapackOrgqr, RefusesMoreColumnsThanRows) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  t = f32[2] parameter(1)
  ROOT q = f32[2,3]{0,1} custom-call(a, t), custom_call_target="lapack_sorgqr_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={}
})";
  std::vector<Literal> args;
  args.push_back(Make(PrimitiveType::kF32, {2, 3}, Random(6, false, 3)));
  args.push_back(Make(PrimitiveType::kF32, {2}, {0, 0}));
  auto r = RunHlo(hlo, args);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("needs rows >= cols >= reflectors"), std::string::npos)
      << r.status();
}

TEST(LapackPlugin, RegistersEveryTypeOnCpu) {
  CustomCallRegistry registry = BuiltinCustomCallRegistry();
  for (const char* routine : {"potrf", "trsm", "getrf", "geqrf"}) {
    for (char letter : {'s', 'd', 'c', 'z'}) {
      const std::string target = std::string("lapack_") + letter + routine + "_ffi";
      EXPECT_NE(registry.Find(target, "cpu"), nullptr) << target;
      EXPECT_EQ(registry.Find(target, "gpu"), nullptr) << target;
    }
  }
  for (const char* target : {"lapack_sorgqr_ffi", "lapack_dorgqr_ffi", "lapack_cungqr_ffi",
                             "lapack_zungqr_ffi"}) {
    EXPECT_NE(registry.Find(target, "cpu"), nullptr) << target;
  }
}

// --- TopK with XLA's comparators ---------------------------------------------------------------

// Stable sort of each row by `before(a, b)` (a goes first), keeping k; values and indices.
void ExpectedTopK(const std::vector<float>& x, int64_t n, int64_t k,
                  const std::function<bool(float, float, int64_t, int64_t)>& before,
                  std::vector<float>* values, std::vector<int32_t>* indices) {
  for (size_t r = 0; r < x.size() / n; ++r) {
    std::vector<int64_t> idx(n);
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
      return before(x[r * n + a], x[r * n + b], a, b);
    });
    for (int64_t j = 0; j < k; ++j) {
      values->push_back(x[r * n + idx[j]]);
      indices->push_back(static_cast<int32_t>(idx[j]));
    }
  }
}

void ExpectTopK(const Literal& got, const std::vector<float>& values,
                const std::vector<int32_t>& indices) {
  ASSERT_EQ(got.tuple_elements().size(), 2u);
  const Literal& v = got.tuple_elements()[0];
  const Literal& i = got.tuple_elements()[1];
  ASSERT_EQ(static_cast<size_t>(v.element_count()), values.size());
  for (size_t j = 0; j < values.size(); ++j) {
    // Bitwise: -0 and +0, and NaNs, must come out as they went in.
    uint32_t a, b;
    std::memcpy(&a, &v.data_as<float>()[j], 4);
    std::memcpy(&b, &values[j], 4);
    EXPECT_EQ(a, b) << "value " << j << ": " << v.data_as<float>()[j] << " vs " << values[j];
    EXPECT_EQ(i.data_as<int32_t>()[j], indices[j]) << "index " << j;
  }
}

Literal F32(const std::vector<int64_t>& dims, const std::vector<float>& x) {
  Literal l(Shape::Array(PrimitiveType::kF32, dims));
  std::memcpy(l.mutable_data()->data(), x.data(), x.size() * sizeof(float));
  return l;
}

// Rows with ties, both zeros, infinities and NaNs of both signs.
std::vector<float> TopKInput() {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  return {1.5f, -2.0f, 3.0f, 3.0f, 0.0f, -0.0f, 7.0f, 3.0f, -inf, 2.0f,
          -0.0f, 0.0f, -0.0f, nan, -nan, inf, -1.0f, inf, 5.0f, -5.0f,
          2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f, 2.0f};
}

// XLA's optimized CPU module passes the comparator of the sort it replaced: the values and their
// indices, floats ordered by the total order -NaN < -inf < ... < -0 < +0 < ... < inf < NaN.
TEST(TopKHandler, XlasTotalOrderComparatorWithIndices) {
  const char* hlo = R"(
HloModule t
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  zero = s32[] constant(0)
  max = s32[] constant(2147483647)
  ba = s32[] bitcast(a)
  bb = s32[] bitcast(b)
  xa = s32[] xor(max, ba)
  na = pred[] compare(ba, zero), direction=LT
  xb = s32[] xor(max, bb)
  nb = pred[] compare(bb, zero), direction=LT
  ka = s32[] select(na, xa, ba)
  kb = s32[] select(nb, xb, bb)
  ROOT gt = pred[] compare(ka, kb), direction=GT
}
ENTRY e {
  x = f32[3,10] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK", called_computations={cmp}
}
)";
  std::vector<float> x = TopKInput();
  auto r = RunHlo(hlo, {F32({3, 10}, x)});
  ASSERT_TRUE(r.ok()) << r.status();
  auto key = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? i ^ 0x7fffffff : i;
  };
  std::vector<float> values;
  std::vector<int32_t> indices;
  ExpectedTopK(x, 10, 4, [&](float a, float b, int64_t, int64_t) { return key(a) > key(b); },
               &values, &indices);
  ExpectTopK(*r, values, indices);
  // The expectation itself: the first row keeps 7 and the tie of 3s in index order.
  EXPECT_EQ(indices[0], 6);
  EXPECT_EQ(indices[1], 2);
  EXPECT_EQ(indices[2], 3);
  EXPECT_EQ(indices[3], 7);
}

// A comparator that reads the indices: ties go to the higher index.
TEST(TopKHandler, ComparatorCanOrderByIndex) {
  const char* hlo = R"(
HloModule t
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ia = s32[] parameter(2)
  ib = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  later = pred[] compare(ia, ib), direction=GT
  tie = pred[] and(eq, later)
  ROOT r = pred[] or(gt, tie)
}
ENTRY e {
  x = f32[2,5] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", called_computations={cmp}
}
)";
  std::vector<float> x = {1, 4, 4, 0, 4, 2, 2, 9, 2, 2};
  auto r = RunHlo(hlo, {F32({2, 5}, x)});
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectTopK(*r, {4, 4, 4, 9, 2, 2}, {4, 2, 1, 2, 4, 3});
}

// A two-parameter comparator that is not a plain compare: largest magnitude first.
TEST(TopKHandler, TwoParameterComparatorRunsAsWritten) {
  const char* hlo = R"(
HloModule t
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  aa = f32[] abs(a)
  ab = f32[] abs(b)
  ROOT gt = pred[] compare(aa, ab), direction=GT
}
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", to_apply=cmp
}
)";
  std::vector<float> x = {1, -6, 3, 6, -3, 0.5f, -2, 2, -8, 1, 2, 7};
  auto r = RunHlo(hlo, {F32({2, 6}, x)});
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<float> values;
  std::vector<int32_t> indices;
  ExpectedTopK(x, 6, 3,
               [](float a, float b, int64_t, int64_t) { return std::abs(a) > std::abs(b); },
               &values, &indices);
  ExpectTopK(*r, values, indices);
  EXPECT_EQ(indices, (std::vector<int32_t>{1, 3, 2, 2, 5, 0}));
}

TEST(TopKHandler, RefusesAComparatorOfThreeParameters) {
  const char* hlo = R"(
HloModule t
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] parameter(2)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[2,6] parameter(0)
  ROOT t = (f32[2,3], s32[2,3]) custom-call(x), custom_call_target="TopK", to_apply=cmp
}
)";
  auto r = RunHlo(hlo, {F32({2, 6}, std::vector<float>(12, 1))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("takes 3 parameters; expected 2 (two values) or 4"),
            std::string::npos)
      << r.status();
}

}  // namespace
}  // namespace hlowb
