#include "replay/backends/cpu/cpu_library_calls.h"

#include <cblas.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "core/ir/attributes.h"
#include "core/ir/float_types.h"
#include "replay/backends/cpu/cpu_fft.h"
#include "replay/evaluator/prng.h"

namespace hlowb::cpu {
namespace {

bool IsTakenType(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF16;
}

float Bf16ToF32(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Round to nearest even; NaN becomes the canonical quiet NaN with its sign, as the interpreter's
// encoder gives.
uint16_t F32ToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

// f16 goes through the exact converters the interpreter uses (f16 is rare here, and portable
// half-precision arithmetic types are not available on every compiler).
float F16ToF32(uint16_t h) {
  return static_cast<float>(FloatBitsToDouble(PrimitiveType::kF16, h));
}

uint16_t F32ToF16(float f) {
  return static_cast<uint16_t>(DoubleToFloatBits(PrimitiveType::kF16, static_cast<double>(f)));
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

float WidenF32(float f) { return f; }
float WidenBf16(uint16_t b) { return Bf16ToF32(b); }
float WidenF16(uint16_t h) { return F16ToF32(h); }

// Widens the array `src` (element type `type`, row-major `dims`) to f32 with its dimensions
// permuted: destination dimension j is source dimension perm[j]. Rows of the destination are
// split across threads.
template <typename Src, float (*widen)(Src)>
void PermuteRows(const Src* src, const std::vector<int64_t>& dims, const std::vector<int64_t>& perm,
                 float* dst, const ParallelFor& parallel_for) {
  const int rank = static_cast<int>(dims.size());
  if (rank == 0) {
    dst[0] = widen(src[0]);
    return;
  }
  const std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> out_dims(rank), out_strides(rank);
  for (int j = 0; j < rank; ++j) {
    out_dims[j] = dims[perm[j]];
    out_strides[j] = strides[perm[j]];
  }
  const int64_t inner = out_dims[rank - 1];
  const int64_t inner_stride = out_strides[rank - 1];
  const int64_t rows = inner == 0 ? 0 : Product(out_dims) / inner;
  parallel_for(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1)),
               [&](int64_t begin, int64_t end) {
                 std::vector<int64_t> idx(rank, 0);
                 int64_t r = begin;
                 for (int j = rank - 2; j >= 0; --j) {
                   idx[j] = r % out_dims[j];
                   r /= out_dims[j];
                 }
                 for (int64_t row = begin; row < end; ++row) {
                   int64_t base = 0;
                   for (int j = 0; j < rank - 1; ++j) base += idx[j] * out_strides[j];
                   float* d = dst + row * inner;
                   const Src* s = src + base;
                   if (inner_stride == 1) {
                     for (int64_t i = 0; i < inner; ++i) d[i] = widen(s[i]);
                   } else {
                     for (int64_t i = 0; i < inner; ++i) d[i] = widen(s[i * inner_stride]);
                   }
                   for (int j = rank - 2; j >= 0; --j) {
                     if (++idx[j] < out_dims[j]) break;
                     idx[j] = 0;
                   }
                 }
               });
}

// `x` as f32 in the dimension order `perm` (see PermuteRows), into `storage`; returns the data.
// An f32 array already in that order is used in place.
const float* AsF32(const Literal& x, const std::vector<int64_t>& perm, std::vector<float>* storage,
                   const ParallelFor& parallel_for) {
  const PrimitiveType t = x.shape().element_type();
  if (t == PrimitiveType::kF32 && IsIdentity(perm)) return x.data_as<float>();
  storage->resize(static_cast<size_t>(std::max<int64_t>(x.element_count(), 1)));
  const std::vector<int64_t>& dims = x.shape().dimensions();
  if (t == PrimitiveType::kF32) {
    PermuteRows<float, WidenF32>(x.data_as<float>(), dims, perm, storage->data(), parallel_for);
  } else if (t == PrimitiveType::kBF16) {
    PermuteRows<uint16_t, WidenBf16>(x.data_as<uint16_t>(), dims, perm, storage->data(),
                                     parallel_for);
  } else {
    PermuteRows<uint16_t, WidenF16>(x.data_as<uint16_t>(), dims, perm, storage->data(),
                                    parallel_for);
  }
  return storage->data();
}

// Writes the f32 values `v` (row-major, the literal's own dimension order) into `out`, rounding
// to its element type.
void StoreRounded(const float* v, Literal* out, const ParallelFor& parallel_for) {
  const int64_t n = out->element_count();
  const PrimitiveType t = out->shape().element_type();
  if (t == PrimitiveType::kF32) {
    if (v != out->data_as<float>()) std::memcpy(out->mutable_data_as<float>(), v, n * sizeof(float));
    return;
  }
  uint16_t* d = out->mutable_data_as<uint16_t>();
  parallel_for(n, 1 << 16, [&](int64_t b, int64_t e) {
    if (t == PrimitiveType::kBF16) {
      for (int64_t i = b; i < e; ++i) d[i] = F32ToBf16(v[i]);
    } else {
      for (int64_t i = b; i < e; ++i) d[i] = F32ToF16(v[i]);
    }
  });
}

bool FitsBlasInt(int64_t v) { return v >= 0 && v <= INT_MAX; }

// Hot loops are compiled for AVX-512 and AVX2 too, and the best the CPU runs is picked at load
// time (the rest of the build targets the baseline x86-64).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define HLOWB_VECTOR_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HLOWB_VECTOR_CLONES
#endif

// C[M, N] = op(A) op(B) through OpenBLAS. Its threads pay off only on large products that are
// wide, or narrow with a huge left operand: on the narrow ones of convolutions and transformer
// layers (N = 32..128) its second thread made the product up to twice as slow on the 2-thread
// build machines, while a [30522, 3648] x [3648, 128] product (a vocabulary projection) ran in
// 0.30 s on two threads against 0.50 s on one.
bool SgemmUsesThreads(int64_t M, int64_t N, int64_t K) {
  const bool wide_or_huge = N >= 256 || M * K >= (int64_t{1} << 26);
  return wide_or_huge && M * N * K >= (int64_t{1} << 25);
}

// OpenBLAS's threads on (all of them) or off for the next call.
void UseBlasThreads(bool threaded) {
  static const int default_threads = openblas_get_num_threads();
  static std::atomic<int> current{default_threads};
  const int want = threaded ? default_threads : 1;
  if (current.exchange(want) != want) openblas_set_num_threads(want);
}

void Sgemm(bool ta, bool tb, int64_t M, int64_t N, int64_t K, const float* a, int64_t lda,
           const float* b, int64_t ldb, float* c, int64_t ldc) {
  UseBlasThreads(SgemmUsesThreads(M, N, K));
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(M), static_cast<int>(N), static_cast<int>(K), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), 0.0f, c, static_cast<int>(ldc));
}

// Depthwise convolution of output pixels [begin, end): out[p, c * Og + m] = sum over kernel
// positions k of in[source(p, k), c] * ker[k, c * Og + m].
HLOWB_VECTOR_CLONES
void DepthwiseRange(const float* __restrict in, const float* __restrict ker,
                    float* __restrict out, const int64_t* __restrict source, int64_t begin,
                    int64_t end, int64_t OS, int64_t KS, int64_t IS, int64_t C, int64_t Og) {
  const int64_t O = C * Og;
  int64_t n = begin / OS, o = begin % OS;
  for (int64_t p = begin; p < end; ++p) {
    float* __restrict orow = out + p * O;
    for (int64_t j = 0; j < O; ++j) orow[j] = 0.0f;
    for (int64_t k = 0; k < KS; ++k) {
      const int64_t src = source[o * KS + k];
      if (src < 0) continue;
      const float* __restrict x = in + (n * IS + src) * C;
      const float* __restrict wk = ker + k * O;
      if (Og == 1) {
        for (int64_t c = 0; c < C; ++c) orow[c] += x[c] * wk[c];
      } else {
        for (int64_t c = 0; c < C; ++c) {
          for (int64_t m = 0; m < Og; ++m) orow[c * Og + m] += x[c] * wk[c * Og + m];
        }
      }
    }
    if (++o == OS) {
      o = 0;
      ++n;
    }
  }
}

bool ValidDims(const std::vector<int64_t>& dims, int rank) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

struct DotPlan {
  int64_t B = 1, M = 1, N = 1, K = 1;
  bool ltrans = false, rtrans = false;
  std::vector<int64_t> lperm, rperm;  // lhs to [B, M, K] or [B, K, M]; rhs to [B, K, N] or [B, N, K]
};

std::optional<DotPlan> PlanDot(const Instruction& instr, const Shape& ls, const Shape& rs) {
  if (instr.opcode() != Opcode::kDot || instr.operand_count() != 2) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.sparsity.empty() || !at.dot_dimension_numbers) return std::nullopt;
  const DotDimensionNumbers& d = *at.dot_dimension_numbers;
  if (!d.lhs_ragged_dimensions.empty() || !d.rhs_group_dimensions.empty()) return std::nullopt;
  const Shape& os = instr.shape();
  if (!os.IsArray() || !ls.IsArray() || !rs.IsArray()) return std::nullopt;
  if (!IsTakenType(os.element_type()) || !IsTakenType(ls.element_type()) ||
      !IsTakenType(rs.element_type())) {
    return std::nullopt;
  }
  const int lr = ls.rank(), rr = rs.rank();
  if (d.lhs_batch_dimensions.size() != d.rhs_batch_dimensions.size() ||
      d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return std::nullopt;
  }
  std::vector<int64_t> lused = d.lhs_batch_dimensions, rused = d.rhs_batch_dimensions;
  lused.insert(lused.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  rused.insert(rused.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  if (!ValidDims(lused, lr) || !ValidDims(rused, rr)) return std::nullopt;
  auto free_dims = [](int rank, const std::vector<int64_t>& used) {
    std::vector<int64_t> f;
    for (int i = 0; i < rank; ++i) {
      if (std::find(used.begin(), used.end(), i) == used.end()) f.push_back(i);
    }
    return f;
  };
  const std::vector<int64_t> lf = free_dims(lr, lused), rf = free_dims(rr, rused);
  DotPlan plan;
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < d.lhs_batch_dimensions.size(); ++i) {
    const int64_t a = ls.dimension(static_cast<int>(d.lhs_batch_dimensions[i]));
    if (a != rs.dimension(static_cast<int>(d.rhs_batch_dimensions[i]))) return std::nullopt;
    plan.B *= a;
    out_dims.push_back(a);
  }
  for (size_t i = 0; i < d.lhs_contracting_dimensions.size(); ++i) {
    const int64_t a = ls.dimension(static_cast<int>(d.lhs_contracting_dimensions[i]));
    if (a != rs.dimension(static_cast<int>(d.rhs_contracting_dimensions[i]))) return std::nullopt;
    plan.K *= a;
  }
  for (int64_t x : lf) {
    plan.M *= ls.dimension(static_cast<int>(x));
    out_dims.push_back(ls.dimension(static_cast<int>(x)));
  }
  for (int64_t x : rf) {
    plan.N *= rs.dimension(static_cast<int>(x));
    out_dims.push_back(rs.dimension(static_cast<int>(x)));
  }
  if (out_dims != os.dimensions()) return std::nullopt;
  if (plan.B * plan.M * plan.N == 0 || plan.K == 0 || !FitsBlasInt(plan.M) ||
      !FitsBlasInt(plan.N) || !FitsBlasInt(plan.K)) {
    return std::nullopt;
  }
  // An operand stored with its contracting dimensions before its free ones is passed transposed
  // instead of being copied.
  std::vector<int64_t> l_mk = d.lhs_batch_dimensions, l_km = d.lhs_batch_dimensions;
  l_mk.insert(l_mk.end(), lf.begin(), lf.end());
  l_mk.insert(l_mk.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  l_km.insert(l_km.end(), d.lhs_contracting_dimensions.begin(), d.lhs_contracting_dimensions.end());
  l_km.insert(l_km.end(), lf.begin(), lf.end());
  std::vector<int64_t> r_kn = d.rhs_batch_dimensions, r_nk = d.rhs_batch_dimensions;
  r_kn.insert(r_kn.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  r_kn.insert(r_kn.end(), rf.begin(), rf.end());
  r_nk.insert(r_nk.end(), rf.begin(), rf.end());
  r_nk.insert(r_nk.end(), d.rhs_contracting_dimensions.begin(), d.rhs_contracting_dimensions.end());
  plan.ltrans = !IsIdentity(l_mk) && IsIdentity(l_km);
  plan.rtrans = !IsIdentity(r_kn) && IsIdentity(r_nk);
  plan.lperm = plan.ltrans ? l_km : l_mk;
  plan.rperm = plan.rtrans ? r_nk : r_kn;
  return plan;
}

// Windows are unrolled this many floats at a time (16 MiB); an im2col row may be 4 times that.
constexpr int64_t kBlockFloats = int64_t{1} << 22;
constexpr int64_t kMaxIm2colRow = kBlockFloats * 4;

struct ConvPlan {
  // Canonical orders: input [N, spatial..., C], kernel [spatial..., I, O], output
  // [N, spatial..., O]; ip/kp/op give each canonical dimension's place in the operand.
  std::vector<int64_t> ip, kp, op;
  Window w;
  int64_t G = 1, Nb = 0, C = 0, I = 0, O = 0, Og = 0;
  std::vector<int64_t> in_sp, k_sp, o_sp;
  int64_t IS = 0, KS = 0, OS = 0, P = 0;
};

std::optional<ConvPlan> PlanConvolution(const Instruction& instr, const Shape& is,
                                        const Shape& ks) {
  if (instr.opcode() != Opcode::kConvolution || instr.operand_count() != 2) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.convolution_dimension_numbers || at.batch_group_count != 1 ||
      at.feature_group_count < 1) {
    return std::nullopt;
  }
  const ConvolutionDimensionNumbers& dn = *at.convolution_dimension_numbers;
  const Shape& os = instr.shape();
  if (!os.IsArray() || !is.IsArray() || !ks.IsArray()) return std::nullopt;
  if (!IsTakenType(os.element_type()) || !IsTakenType(is.element_type()) ||
      !IsTakenType(ks.element_type())) {
    return std::nullopt;
  }
  const int ns = static_cast<int>(dn.input_spatial_dimensions.size());
  if (dn.kernel_spatial_dimensions.size() != static_cast<size_t>(ns) ||
      dn.output_spatial_dimensions.size() != static_cast<size_t>(ns) || is.rank() != ns + 2 ||
      ks.rank() != ns + 2 || os.rank() != ns + 2) {
    return std::nullopt;
  }
  std::vector<int64_t> ip{dn.input_batch_dimension}, kp, op{dn.output_batch_dimension};
  for (int i = 0; i < ns; ++i) {
    ip.push_back(dn.input_spatial_dimensions[i]);
    kp.push_back(dn.kernel_spatial_dimensions[i]);
    op.push_back(dn.output_spatial_dimensions[i]);
  }
  ip.push_back(dn.input_feature_dimension);
  kp.push_back(dn.kernel_input_feature_dimension);
  kp.push_back(dn.kernel_output_feature_dimension);
  op.push_back(dn.output_feature_dimension);
  if (!ValidDims(ip, ns + 2) || !ValidDims(kp, ns + 2) || !ValidDims(op, ns + 2)) {
    return std::nullopt;
  }
  Window w = at.window.value_or(Window());
  if (w.empty()) {
    w.assign(ns, WindowDimension{});
    for (int i = 0; i < ns; ++i) w[i].size = ks.dimension(static_cast<int>(kp[i]));
  }
  if (static_cast<int>(w.size()) != ns) return std::nullopt;
  const int64_t G = at.feature_group_count;
  const int64_t Nb = is.dimension(static_cast<int>(dn.input_batch_dimension));
  const int64_t C = is.dimension(static_cast<int>(dn.input_feature_dimension));
  const int64_t I = ks.dimension(static_cast<int>(dn.kernel_input_feature_dimension));
  const int64_t O = ks.dimension(static_cast<int>(dn.kernel_output_feature_dimension));
  if (C != I * G || O % G != 0 || os.dimension(static_cast<int>(dn.output_batch_dimension)) != Nb ||
      os.dimension(static_cast<int>(dn.output_feature_dimension)) != O) {
    return std::nullopt;
  }
  const int64_t Og = O / G;
  std::vector<int64_t> in_sp(ns), k_sp(ns), o_sp(ns);
  for (int i = 0; i < ns; ++i) {
    in_sp[i] = is.dimension(static_cast<int>(ip[i + 1]));
    k_sp[i] = ks.dimension(static_cast<int>(kp[i]));
    o_sp[i] = os.dimension(static_cast<int>(op[i + 1]));
    if (k_sp[i] != w[i].size || w[i].stride <= 0 || w[i].base_dilation <= 0 ||
        w[i].window_dilation <= 0) {
      return std::nullopt;
    }
  }
  const int64_t IS = Product(in_sp), KS = Product(k_sp), OS = Product(o_sp);
  const int64_t P = Nb * OS;  // output pixels
  if (P == 0 || O == 0 || KS * I == 0) return std::nullopt;
  constexpr int64_t kMaxTable = int64_t{1} << 26;
  if (OS * KS > kMaxTable) return std::nullopt;
  const bool depthwise = I == 1 && G == C;
  if (!depthwise && (!FitsBlasInt(KS * I) || !FitsBlasInt(O) || !FitsBlasInt(C) ||
                     KS * I > kMaxIm2colRow)) {
    return std::nullopt;
  }
  return ConvPlan{std::move(ip), std::move(kp), std::move(op), std::move(w), G, Nb, C, I, O, Og,
                  std::move(in_sp), std::move(k_sp), std::move(o_sp), IS, KS, OS, P};
}

}  // namespace

std::optional<absl::StatusOr<Literal>> LibraryDot(const Instruction& instr, const Literal& lhs,
                                                  const Literal& rhs,
                                                  const ParallelFor& parallel_for) {
  std::optional<DotPlan> plan = PlanDot(instr, lhs.shape(), rhs.shape());
  if (!plan) return std::nullopt;
  const int64_t B = plan->B, M = plan->M, N = plan->N, K = plan->K;
  const bool ltrans = plan->ltrans, rtrans = plan->rtrans;
  const Shape& os = instr.shape();
  std::vector<float> lbuf, rbuf;
  const float* a = AsF32(lhs, plan->lperm, &lbuf, parallel_for);
  const float* b = AsF32(rhs, plan->rperm, &rbuf, parallel_for);
  Literal out = Literal::Uninitialized(os);
  std::vector<float> cbuf;
  float* c = os.element_type() == PrimitiveType::kF32
                 ? out.mutable_data_as<float>()
                 : (cbuf.resize(static_cast<size_t>(B * M * N)), cbuf.data());
  if (M == 1 || N == 1) {
    // A vector times a matrix (an RNN or decoder step's [1, K] x [K, N]) is bound by reading
    // the matrix: OpenBLAS's GEMV, on its threads when the matrix is large, reads it at memory
    // speed where its GEMM with one row took three times as long ([1, 4096] x [4096, 4096]:
    // 10.5 -> 3.3 ms). Each result is one dot product over K, so the split does not change it.
    const bool threaded = B == 1 && M * N * K >= (int64_t{1} << 20);
    auto gemvs = [&](int64_t first, int64_t last) {
      if (!threaded) UseBlasThreads(false);
      for (int64_t bi = first; bi < last; ++bi) {
        const float* ab = a + bi * M * K;
        const float* bb = b + bi * K * N;
        float* cb = c + bi * M * N;
        if (M == 1) {
          // c[n] = sum_k a[k] b[k, n]: b is [K, N] (or [N, K] when rtrans).
          cblas_sgemv(CblasRowMajor, rtrans ? CblasNoTrans : CblasTrans,
                      static_cast<int>(rtrans ? N : K), static_cast<int>(rtrans ? K : N), 1.0f,
                      bb, static_cast<int>(rtrans ? K : N), ab, 1, 0.0f, cb, 1);
        } else {
          // c[m] = sum_k a[m, k] b[k]: a is [M, K] (or [K, M] when ltrans).
          cblas_sgemv(CblasRowMajor, ltrans ? CblasTrans : CblasNoTrans,
                      static_cast<int>(ltrans ? K : M), static_cast<int>(ltrans ? M : K), 1.0f,
                      ab, static_cast<int>(ltrans ? M : K), bb, 1, 0.0f, cb, 1);
        }
      }
    };
    if (threaded) {
      UseBlasThreads(true);
      gemvs(0, B);
    } else if (B > 1 && B * M * N * K >= (int64_t{1} << 20)) {
      parallel_for(B, 1, gemvs);
    } else {
      gemvs(0, B);
    }
    StoreRounded(c, &out, parallel_for);
    return absl::StatusOr<Literal>(std::move(out));
  }
  auto gemms = [&](int64_t first, int64_t last) {
    for (int64_t bi = first; bi < last; ++bi) {
      Sgemm(ltrans, rtrans, M, N, K, a + bi * M * K, ltrans ? M : K, b + bi * K * N,
            rtrans ? K : N, c + bi * M * N, N);
    }
  };
  static const int64_t kThreads = std::max(1u, std::thread::hardware_concurrency());
  if (B > 1 && !SgemmUsesThreads(M, N, K) && B * M * N * K >= (int64_t{1} << 22)) {
    // Batch elements too small for OpenBLAS's threads run side by side on the pool, one
    // single-threaded GEMM each (attention's [48 x 2, 512, 512] products: about 2x faster).
    parallel_for(B, 1, gemms);
  } else if (B == 1 && kThreads > 1 && (!SgemmUsesThreads(M, N, K) || N < 256) &&
             M * N * K >= (int64_t{1} << 25) && M >= 64 * kThreads) {
    // A narrow product (N < 256) with many rows: one single-threaded GEMM per block of rows,
    // side by side on the pool, instead of OpenBLAS's own threads or none (a transformer
    // layer's [24576, 512] x [512, 128]: 73-77 ms -> 50 ms; the vocabulary gradients
    // [3648, 30522] x [30522, 128]: 295 -> 262 ms, and its transposed-lhs twin about 15%).
    // Fixed blocks (multiples of 64 rows), whatever the pool's size: a row's sums depend on
    // where it falls in OpenBLAS's blocking, so the same blocks give the same bits.
    const int64_t rows = ((M + kThreads - 1) / kThreads + 63) / 64 * 64;
    const int64_t blocks = (M + rows - 1) / rows;
    parallel_for(blocks, 1, [&](int64_t first, int64_t last) {
      for (int64_t blk = first; blk < last; ++blk) {
        const int64_t m0 = blk * rows, m1 = std::min(M, m0 + rows);
        Sgemm(ltrans, rtrans, m1 - m0, N, K, a + (ltrans ? m0 : m0 * K), ltrans ? M : K, b,
              rtrans ? K : N, c + m0 * N, N);
      }
    });
  } else {
    gemms(0, B);
  }
  StoreRounded(c, &out, parallel_for);
  return absl::StatusOr<Literal>(std::move(out));
}

std::optional<absl::StatusOr<Literal>> LibraryConvolution(const Instruction& instr,
                                                          const Literal& lhs, const Literal& rhs,
                                                          const ParallelFor& parallel_for) {
  std::optional<ConvPlan> plan = PlanConvolution(instr, lhs.shape(), rhs.shape());
  if (!plan) return std::nullopt;
  const Shape& os = instr.shape();
  const int ns = static_cast<int>(plan->in_sp.size());
  const std::vector<int64_t>&ip = plan->ip, &kp = plan->kp, &op = plan->op;
  const Window& w = plan->w;
  const std::vector<int64_t>&in_sp = plan->in_sp, &k_sp = plan->k_sp, &o_sp = plan->o_sp;
  const int64_t G = plan->G, Nb = plan->Nb, C = plan->C, I = plan->I, O = plan->O, Og = plan->Og;
  const int64_t IS = plan->IS, KS = plan->KS, OS = plan->OS, P = plan->P;
  // Where each (output position, kernel position) reads the input, per spatial dimension and
  // then combined (-1: padding or between dilated elements).
  std::vector<std::vector<int64_t>> per_dim(ns);
  for (int d = 0; d < ns; ++d) {
    per_dim[d].assign(o_sp[d] * k_sp[d], -1);
    for (int64_t o = 0; o < o_sp[d]; ++o) {
      for (int64_t k = 0; k < k_sp[d]; ++k) {
        const int64_t kk = w[d].window_reversal ? k_sp[d] - 1 - k : k;
        const int64_t p = o * w[d].stride + kk * w[d].window_dilation - w[d].padding_low;
        if (p < 0 || p % w[d].base_dilation != 0) continue;
        const int64_t q = p / w[d].base_dilation;
        if (q < in_sp[d]) per_dim[d][o * k_sp[d] + k] = q;
      }
    }
  }
  // source[o * KS + k]: the input pixel (linear over the input's spatial dimensions) or -1.
  std::vector<int64_t> source(static_cast<size_t>(OS * KS));
  {
    const std::vector<int64_t> in_strides = RowMajorStrides(in_sp);
    std::vector<int64_t> oidx(ns, 0);
    for (int64_t o = 0; o < OS; ++o) {
      std::vector<int64_t> kidx(ns, 0);
      for (int64_t k = 0; k < KS; ++k) {
        int64_t lin = 0;
        for (int d = 0; d < ns && lin >= 0; ++d) {
          const int64_t q = per_dim[d][oidx[d] * k_sp[d] + kidx[d]];
          lin = q < 0 ? -1 : lin + q * in_strides[d];
        }
        source[o * KS + k] = lin;
        for (int d = ns - 1; d >= 0; --d) {
          if (++kidx[d] < k_sp[d]) break;
          kidx[d] = 0;
        }
      }
      for (int d = ns - 1; d >= 0; --d) {
        if (++oidx[d] < o_sp[d]) break;
        oidx[d] = 0;
      }
    }
  }
  std::vector<float> in_buf, ker_buf;
  const float* in = AsF32(lhs, ip, &in_buf, parallel_for);
  const float* ker = AsF32(rhs, kp, &ker_buf, parallel_for);  // [KS, I, O]
  // The canonical result [N, spatial..., O] is written straight into the result when that is
  // its own order and type: output dimension op[j] is canonical dimension j.
  std::vector<int64_t> inverse(op.size());
  for (size_t j = 0; j < op.size(); ++j) inverse[op[j]] = static_cast<int64_t>(j);
  Literal result = Literal::Uninitialized(os);
  const bool in_place = IsIdentity(inverse) && os.element_type() == PrimitiveType::kF32;
  std::vector<float> out_buf(in_place ? 0 : static_cast<size_t>(P * O));
  float* out = in_place ? result.mutable_data_as<float>() : out_buf.data();

  if (I == 1 && G == C) {
    // Depthwise: out[p, c * Og + m] = sum_k in[src(p, k), c] * ker[k, 0, c * Og + m].
    parallel_for(P, std::max<int64_t>(1, 8192 / std::max<int64_t>(KS * O, 1)),
                 [&](int64_t begin, int64_t end) {
                   DepthwiseRange(in, ker, out, source.data(), begin, end, OS, KS, IS, C, Og);
                 });
  } else {
    const int64_t row = KS * I;  // one im2col row: every kernel position's input features
    bool direct = G == 1 && KS == 1 && IS == OS && source[0] == 0;
    for (int64_t o = 0; direct && o < OS; ++o) direct = source[o] == o;
    if (direct) {
      // A 1x1 window that reads every input pixel once: the input is already the matrix.
      for (int64_t start = 0; start < P; start += INT_MAX / 2) {
        const int64_t rows = std::min<int64_t>(P - start, INT_MAX / 2);
        Sgemm(false, false, rows, O, C, in + start * C, C, ker, O, out + start * O, O);
      }
    } else {
      const int64_t block = std::max<int64_t>(1, std::min<int64_t>(P, kBlockFloats / row));
      std::vector<float> col(static_cast<size_t>(block * row));
      for (int64_t g = 0; g < G; ++g) {
        for (int64_t p0 = 0; p0 < P; p0 += block) {
          const int64_t rows = std::min(block, P - p0);
          parallel_for(rows, std::max<int64_t>(1, 4096 / row), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t p = p0 + r, n = p / OS, o = p % OS;
              float* dst = col.data() + r * row;
              for (int64_t k = 0; k < KS; ++k) {
                const int64_t src = source[o * KS + k];
                if (src < 0) {
                  std::fill(dst + k * I, dst + (k + 1) * I, 0.0f);
                } else {
                  std::memcpy(dst + k * I, in + (n * IS + src) * C + g * I, I * sizeof(float));
                }
              }
            }
          });
          Sgemm(false, false, rows, Og, row, col.data(), row, ker + g * Og, O,
                out + p0 * O + g * Og, O);
        }
      }
    }
  }
  std::vector<int64_t> canon_dims{Nb};
  canon_dims.insert(canon_dims.end(), o_sp.begin(), o_sp.end());
  canon_dims.push_back(O);
  if (!in_place && IsIdentity(inverse)) {
    StoreRounded(out, &result, parallel_for);
  } else if (!in_place) {
    std::vector<float> permuted(out_buf.size());
    PermuteRows<float, WidenF32>(out, canon_dims, inverse, permuted.data(), parallel_for);
    StoreRounded(permuted.data(), &result, parallel_for);
  }
  return absl::StatusOr<Literal>(std::move(result));
}

namespace {

// Gather's index values as the interpreter reads them: unsigned values above INT64_MAX saturate.
int64_t IndexAt(const Literal& l, int64_t i) {
  const PrimitiveType t = l.shape().element_type();
  if (IsUnsignedIntegral(t)) {
    const uint64_t v = l.GetBits(i);
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  return l.GetInt(i);
}

bool Has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct GatherPlan {
  std::vector<int64_t> offset_operand_dims;  // operand dims of the output's offset dims, in order
  std::vector<int64_t> batch_out_dims;       // output dims that are not offset dims
  std::vector<int64_t> idx_batch_dims;       // indices dims other than index_vector_dim
  std::vector<int64_t> batching_pos;         // per operand batching dim: its batch position
  int64_t run = 0;                           // contiguous elements per copied run
};

// Takes gathers whose output's last dimension is an offset dimension over the operand's last
// dimension: each output row is one contiguous run of the operand.
std::optional<GatherPlan> PlanGather(const Instruction& instr, const Shape& os, const Shape& is) {
  if (instr.opcode() != Opcode::kGather || instr.operand_count() != 2) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.gather_dimension_numbers) return std::nullopt;
  const GatherDimensionNumbers& d = *at.gather_dimension_numbers;
  const Shape& out = instr.shape();
  if (!os.IsArray() || !is.IsArray() || !out.IsArray() || !IsIntegral(is.element_type()) ||
      IsComplex(os.element_type()) || out.element_type() != os.element_type() ||
      out.ElementCount() <= 0 || os.ElementCount() <= 0) {
    return std::nullopt;
  }
  const int orank = os.rank(), irank = is.rank();
  if (static_cast<int>(at.slice_sizes.size()) != orank || orank == 0) return std::nullopt;
  for (int i = 0; i < orank; ++i) {
    if (at.slice_sizes[i] < 0 || at.slice_sizes[i] > os.dimension(i)) return std::nullopt;
  }
  const int64_t ivd = d.index_vector_dim;
  if (ivd < 0 || ivd > irank) return std::nullopt;
  const int64_t vec_len = ivd < irank ? is.dimension(static_cast<int>(ivd)) : 1;
  if (vec_len != static_cast<int64_t>(d.start_index_map.size())) return std::nullopt;
  for (int64_t x : d.start_index_map) {
    if (x < 0 || x >= orank) return std::nullopt;
  }
  GatherPlan plan;
  for (int i = 0; i < orank; ++i) {
    if (!Has(d.collapsed_slice_dims, i) && !Has(d.operand_batching_dims, i)) {
      plan.offset_operand_dims.push_back(i);
    }
  }
  if (plan.offset_operand_dims.size() != d.offset_dims.size() || d.offset_dims.empty()) {
    return std::nullopt;
  }
  for (int i = 0; i < out.rank(); ++i) {
    if (!Has(d.offset_dims, i)) plan.batch_out_dims.push_back(i);
  }
  for (int i = 0; i < irank; ++i) {
    if (i != ivd) plan.idx_batch_dims.push_back(i);
  }
  if (plan.idx_batch_dims.size() != plan.batch_out_dims.size()) return std::nullopt;
  for (size_t k = 0; k < plan.batch_out_dims.size(); ++k) {
    if (out.dimension(static_cast<int>(plan.batch_out_dims[k])) !=
        is.dimension(static_cast<int>(plan.idx_batch_dims[k]))) {
      return std::nullopt;
    }
  }
  for (size_t k = 0; k < d.offset_dims.size(); ++k) {
    if (out.dimension(static_cast<int>(d.offset_dims[k])) !=
        at.slice_sizes[plan.offset_operand_dims[k]]) {
      return std::nullopt;
    }
  }
  if (d.start_indices_batching_dims.size() != d.operand_batching_dims.size()) return std::nullopt;
  for (int64_t sd : d.start_indices_batching_dims) {
    auto it = std::find(plan.idx_batch_dims.begin(), plan.idx_batch_dims.end(), sd);
    if (it == plan.idx_batch_dims.end()) return std::nullopt;
    plan.batching_pos.push_back(it - plan.idx_batch_dims.begin());
  }
  if (d.offset_dims.back() != out.rank() - 1 || plan.offset_operand_dims.back() != orank - 1) {
    return std::nullopt;
  }
  plan.run = at.slice_sizes[orank - 1];
  return plan;
}

}  // namespace

std::optional<absl::StatusOr<Literal>> LibraryGather(const Instruction& instr,
                                                     const Literal& operand, const Literal& indices,
                                                     const ParallelFor& parallel_for) {
  std::optional<GatherPlan> plan = PlanGather(instr, operand.shape(), indices.shape());
  if (!plan) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  const GatherDimensionNumbers& d = *at.gather_dimension_numbers;
  const Shape& os = operand.shape();
  const Shape& out_shape = instr.shape();
  const int orank = os.rank(), out_rank = out_shape.rank(), irank = indices.shape().rank();
  const std::vector<int64_t> ostrides = RowMajorStrides(os.dimensions());
  const std::vector<int64_t> istrides = RowMajorStrides(indices.shape().dimensions());
  const int64_t ivd = d.index_vector_dim;
  const size_t bytes = static_cast<size_t>(operand.element_bytes());
  Literal out = Literal::Uninitialized(out_shape);
  const int64_t run = plan->run;
  const int64_t rows = run == 0 ? 0 : out_shape.ElementCount() / run;
  const uint8_t* src = operand.data().data();
  uint8_t* dst = out.mutable_data()->data();
  std::vector<int64_t> out_dims = out_shape.dimensions();
  parallel_for(rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(run, 1)),
               [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(out_rank, 0), start(orank);
    for (int64_t row = begin; row < end; ++row) {
      int64_t r = row;
      for (int j = out_rank - 2; j >= 0; --j) {
        idx[j] = r % out_dims[j];
        r /= out_dims[j];
      }
      // The index vector of this row's batch position.
      int64_t base = 0;
      for (size_t b = 0; b < plan->idx_batch_dims.size(); ++b) {
        base += idx[plan->batch_out_dims[b]] * istrides[plan->idx_batch_dims[b]];
      }
      std::fill(start.begin(), start.end(), 0);
      for (size_t k = 0; k < d.start_index_map.size(); ++k) {
        const int64_t at_k = ivd < irank ? base + static_cast<int64_t>(k) * istrides[ivd] : base;
        start[d.start_index_map[k]] = IndexAt(indices, at_k);
      }
      for (size_t j = 0; j < d.operand_batching_dims.size(); ++j) {
        start[d.operand_batching_dims[j]] = idx[plan->batch_out_dims[plan->batching_pos[j]]];
      }
      int64_t lin = 0;
      for (int od = 0; od < orank; ++od) {
        lin += std::clamp<int64_t>(start[od], 0, os.dimension(od) - at.slice_sizes[od]) *
               ostrides[od];
      }
      for (size_t k = 0; k + 1 < d.offset_dims.size(); ++k) {
        lin += idx[d.offset_dims[k]] * ostrides[plan->offset_operand_dims[k]];
      }
      std::memcpy(dst + row * run * bytes, src + lin * bytes, run * bytes);
    }
  });
  return absl::StatusOr<Literal>(std::move(out));
}

namespace {

// The bits array of a philox rng-bit-generator this call computes: 8-, 16-, 32- and 64-bit
// element types (not pred, complex or sub-byte), u64[2] or u64[3] state.
bool RngBitGeneratorTaken(const Instruction& instr) {
  if (instr.opcode() != Opcode::kRngBitGenerator || instr.operand_count() != 1) return false;
  const RandomAlgorithm a = instr.attrs_or_default().rng_algorithm;
  if (a != RandomAlgorithm::kDefault && a != RandomAlgorithm::kPhilox) return false;
  const Shape& rs = instr.shape();
  if (!rs.IsTuple() || rs.tuple_count() != 2 || !rs.tuple_shape(0).IsArray() ||
      !rs.tuple_shape(1).IsArray()) {
    return false;
  }
  const Shape& ss = instr.operand(0)->shape();
  if (!ss.IsArray() || ss.element_type() != PrimitiveType::kU64 || ss.rank() != 1 ||
      ss.dimensions()[0] < 2 || ss.dimensions()[0] > 3 || !(rs.tuple_shape(0) == ss)) {
    return false;
  }
  const PrimitiveType t = rs.tuple_shape(1).element_type();
  const int width = BitWidth(t);
  return t != PrimitiveType::kPred && !IsComplex(t) &&
         (width == 8 || width == 16 || width == 32 || width == 64) &&
         rs.tuple_shape(1).ElementCount() > 0;
}

// Stores the low bytes of `v` as one element of `bytes` bytes (the interpreter's SetBits for
// 8- to 64-bit types on a little-endian host).
inline void StoreLow(uint8_t* dst, int bytes, uint64_t v) { std::memcpy(dst, &v, bytes); }

#if defined(__x86_64__) && defined(__GNUC__)
#define HLOWB_PHILOX_AVX2 1
// The low and high words of the eight 32 x 32 -> 64-bit products a * m.
__attribute__((target("avx2"))) inline void Multiply32x8(__m256i a, __m256i m, __m256i* lo,
                                                         __m256i* hi) {
  const __m256i even = _mm256_mul_epu32(a, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(a, 32), m);
  *lo = _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA);
  *hi = _mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA);
}

// Philox4x32-10 of the eight counter blocks low + b .. low + b + 7 (the carry into `high`
// per block), eight blocks per AVX2 register: the same rounds as eval::Philox4x32, with the
// 32 x 32 -> 64-bit products of the even and odd lanes recombined into their low and high
// words. words[k][j] is word k of block j.
__attribute__((target("avx2"))) void Philox4x32Avx2(uint64_t low, uint64_t high, uint64_t key,
                                                      int64_t b, uint32_t words[4][8]) {
  alignas(32) uint32_t x[4][8];
  for (int j = 0; j < 8; ++j) {
    const uint64_t lo = low + static_cast<uint64_t>(b + j);
    const uint64_t hi = high + (lo < low ? 1 : 0);
    x[0][j] = static_cast<uint32_t>(lo);
    x[1][j] = static_cast<uint32_t>(lo >> 32);
    x[2][j] = static_cast<uint32_t>(hi);
    x[3][j] = static_cast<uint32_t>(hi >> 32);
  }
  __m256i x0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(x[0]));
  __m256i x1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(x[1]));
  __m256i x2 = _mm256_load_si256(reinterpret_cast<const __m256i*>(x[2]));
  __m256i x3 = _mm256_load_si256(reinterpret_cast<const __m256i*>(x[3]));
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(0xD2511F53u));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(0xCD9E8D57u));
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    __m256i lo0, hi0, lo1, hi1;
    Multiply32x8(x0, m0, &lo0, &hi0);
    Multiply32x8(x2, m1, &lo1, &hi1);
    const __m256i y0 = _mm256_xor_si256(_mm256_xor_si256(hi1, x1),
                                        _mm256_set1_epi32(static_cast<int>(k0)));
    const __m256i y2 = _mm256_xor_si256(_mm256_xor_si256(hi0, x3),
                                        _mm256_set1_epi32(static_cast<int>(k1)));
    x0 = y0;
    x1 = lo1;
    x2 = y2;
    x3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[0]), x0);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[1]), x1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[2]), x2);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(words[3]), x3);
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

}  // namespace

std::optional<absl::StatusOr<Literal>> LibraryRngBitGenerator(const Instruction& instr,
                                                              const Literal& state,
                                                              const ParallelFor& parallel_for) {
  if (!RngBitGeneratorTaken(instr) || !(state.shape() == instr.operand(0)->shape()) ||
      state.elided()) {
    return std::nullopt;
  }
  const Shape& bits_shape = instr.shape().tuple_shape(1);
  const int width = BitWidth(bits_shape.element_type());
  const int bytes = width / 8;
  const int64_t state_size = state.shape().dimensions()[0];
  const uint64_t* st = state.data_as<uint64_t>();
  const uint64_t key = st[0];
  const uint64_t low = st[1];
  const uint64_t high = state_size >= 3 ? st[2] : key;
  const int64_t n = bits_shape.ElementCount();
  const int64_t words = width == 64 ? 2 * n : n;
  const int64_t blocks = (words + 3) / 4;

  Literal new_state = Literal::Uninitialized(state.shape());
  uint64_t* ns = new_state.mutable_data_as<uint64_t>();
  for (int64_t i = 0; i < state_size; ++i) ns[i] = st[i];
  const uint64_t new_low = low + static_cast<uint64_t>(blocks);
  ns[1] = new_low;
  if (state_size >= 3) ns[2] = high + (new_low < low ? 1 : 0);

  Literal bits = Literal::Uninitialized(bits_shape);
  uint8_t* out = bits.mutable_data()->data();
  // Block b gives elements 4b..4b+3 (64-bit results: 2b and 2b+1, low word first), as the
  // interpreter lays them out; blocks are independent, so they split across the pool.
  auto store = [&](int64_t b, const eval::Words4& w) {
    if (width == 64) {
      for (int k = 0; k < 2 && b * 2 + k < n; ++k) {
        StoreLow(out + (b * 2 + k) * 8, 8, uint64_t{w.w[2 * k]} | (uint64_t{w.w[2 * k + 1]} << 32));
      }
    } else if (width == 32 && b * 4 + 3 < n) {
      std::memcpy(out + b * 16, w.w, 16);
    } else {
      for (int k = 0; k < 4 && b * 4 + k < n; ++k) StoreLow(out + (b * 4 + k) * bytes, bytes, w.w[k]);
    }
  };
  parallel_for(blocks, 1 << 14, [&](int64_t begin, int64_t end) {
    int64_t b = begin;
#ifdef HLOWB_PHILOX_AVX2
    if (HasAvx2()) {
      uint32_t words[4][8];
      for (; b + 8 <= end; b += 8) {
        Philox4x32Avx2(low, high, key, b, words);
        for (int j = 0; j < 8; ++j) {
          store(b + j, eval::Words4{{words[0][j], words[1][j], words[2][j], words[3][j]}});
        }
      }
    }
#endif
    for (; b < end; ++b) {
      const uint64_t lo = low + static_cast<uint64_t>(b);
      const uint64_t hi = high + (lo < low ? 1 : 0);
      store(b, eval::Philox4x32(lo, hi, key));
    }
  });
  Literal result(instr.shape(), /*allocate=*/false);
  (*result.mutable_tuple_elements())[0] = std::move(new_state);
  (*result.mutable_tuple_elements())[1] = std::move(bits);
  return absl::StatusOr<Literal>(std::move(result));
}

bool LibraryTakes(const Instruction& instr) {
  if (LibraryFftTakes(instr)) return true;
  if (RngBitGeneratorTaken(instr)) return true;
  if (instr.operand_count() != 2) return false;
  const Shape& l = instr.operand(0)->shape();
  const Shape& r = instr.operand(1)->shape();
  if (instr.opcode() == Opcode::kDot) return PlanDot(instr, l, r).has_value();
  if (instr.opcode() == Opcode::kConvolution) return PlanConvolution(instr, l, r).has_value();
  if (instr.opcode() == Opcode::kGather) return PlanGather(instr, l, r).has_value();
  return false;
}

}  // namespace hlowb::cpu

