#include "replay/backends/cpu/cpu_fft.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <numbers>
#include <vector>

#include <unsupported/Eigen/FFT>

#include "core/ir/attributes.h"

namespace hlowb::cpu {
namespace {

using Complex = std::complex<double>;
using EigenFft = Eigen::FFT<double>;

// Longest transform taken: kissfft counts in int, and a chirp-z transform of length n runs
// power-of-two transforms of up to 4n.
constexpr int64_t kMaxLength = int64_t{1} << 29;
// Lines of one dimension that lie next to each other in memory are gathered this many at a time,
// so that the gather reads whole cache lines.
constexpr int64_t kTile = 8;
// Complex values a thread is given at least per part of a dimension's lines.
constexpr int64_t kGrainValues = int64_t{1} << 15;

int64_t LargestPrimeFactor(int64_t n) {
  int64_t largest = 1;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      largest = p;
      n /= p;
    }
  }
  return std::max(largest, n);
}

// Length of the power-of-two transforms that a chirp-z transform of length n convolves with.
int64_t ChirpLength(int64_t n) {
  return static_cast<int64_t>(std::bit_ceil(static_cast<uint64_t>(2 * n - 1)));
}

// kissfft spends about n * p on a generic radix-p stage; a chirp-z transform costs two
// power-of-two transforms of length m, about m log2 m each at a similar constant. The chirp-z
// transform is taken where it is clearly cheaper.
bool UseChirp(int64_t n) {
  const int64_t p = LargestPrimeFactor(n);
  if (p <= 5) return false;  // kissfft has dedicated butterflies for 2, 3, 4 and 5
  const int64_t m = ChirpLength(n);
  return n * p > 2 * m * static_cast<int64_t>(std::bit_width(static_cast<uint64_t>(m)));
}

// What one thread needs to run line transforms: its own Eigen FFT object (its plan cache and
// buffers are not safe to share) and scratch lines.
struct Workspace {
  Workspace() {
    fft.SetFlag(EigenFft::Unscaled);
    fft.SetFlag(EigenFft::HalfSpectrum);
  }
  EigenFft fft;
  std::vector<Complex> chirp_in, chirp_out;  // the chirp-z convolution's buffers
  std::vector<Complex> line, spectrum;       // full lines for the real transforms' fallbacks
  std::vector<Complex> half;                 // an IRFFT line's half spectrum, cleaned
  std::vector<Complex> in, out;              // gathered lines and their transforms
  std::vector<double> reals;
};

// The unscaled 1-D transform of one length in one direction. Built once per dimension and read
// by every thread.
class LinePlan {
 public:
  LinePlan(int64_t n, bool inverse) : n_(n), inverse_(inverse) {
    if (n < 2 || !UseChirp(n)) return;
    // Bluestein: with c[k] = exp(-+i pi k^2 / n), X[k] = c[k] * sum_j (x[j] c[j]) conj(c[k - j]),
    // a convolution with conj(c), done as a cyclic one of length m_ >= 2n - 1.
    m_ = ChirpLength(n);
    chirp_.resize(n);
    const double sign = inverse ? 1.0 : -1.0;
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle exact and small however large k is.
      const int64_t r = (k * k) % (2 * n);
      const double angle = std::numbers::pi * static_cast<double>(r) / static_cast<double>(n);
      chirp_[k] = Complex(std::cos(angle), sign * std::sin(angle));
    }
    std::vector<Complex> filter(m_, Complex(0, 0));
    filter[0] = std::conj(chirp_[0]);
    for (int64_t k = 1; k < n; ++k) filter[k] = filter[m_ - k] = std::conj(chirp_[k]);
    kernel_.resize(m_);
    EigenFft fft;
    fft.SetFlag(EigenFft::Unscaled);
    fft.fwd(kernel_.data(), filter.data(), m_);
    for (Complex& x : kernel_) x /= static_cast<double>(m_);
  }

  // The transform of in[0, n) into out[0, n); the two do not overlap.
  void Run(const Complex* in, Complex* out, Workspace& ws) const {
    if (n_ <= 1) {
      if (n_ == 1) out[0] = in[0];
      return;
    }
    if (m_ == 0) {
      if (inverse_) {
        ws.fft.inv(out, in, n_);
      } else {
        ws.fft.fwd(out, in, n_);
      }
      return;
    }
    ws.chirp_in.assign(m_, Complex(0, 0));
    ws.chirp_out.resize(m_);
    for (int64_t k = 0; k < n_; ++k) ws.chirp_in[k] = in[k] * chirp_[k];
    ws.fft.fwd(ws.chirp_out.data(), ws.chirp_in.data(), m_);
    for (int64_t k = 0; k < m_; ++k) ws.chirp_out[k] *= kernel_[k];
    ws.fft.inv(ws.chirp_in.data(), ws.chirp_out.data(), m_);
    for (int64_t k = 0; k < n_; ++k) out[k] = ws.chirp_in[k] * chirp_[k];
  }

  // RFFT of one line: the first n/2+1 outputs of the forward transform of the n reals `in`.
  void RunReal(const double* in, Complex* out, Workspace& ws) const {
    if (n_ >= 2 && m_ == 0) {
      ws.fft.fwd(out, in, n_);  // the half spectrum only (HalfSpectrum)
      return;
    }
    ws.line.resize(n_);
    ws.spectrum.resize(n_);
    for (int64_t j = 0; j < n_; ++j) ws.line[j] = Complex(in[j], 0);
    Run(ws.line.data(), ws.spectrum.data(), ws);
    std::copy(ws.spectrum.begin(), ws.spectrum.begin() + n_ / 2 + 1, out);
  }

  // IRFFT of one line, unscaled: n reals from the n/2+1 entries of `in`, read as one half of a
  // conjugate-symmetric spectrum. The imaginary parts of the zero-frequency bin and of the n/2
  // bin (even n) are dropped first, as the interpreter's real output implies: the interpreter
  // zeroes the former and takes the real part of the transform, to which the latter adds nothing.
  void RunHalfInverse(const Complex* in, double* out, Workspace& ws) const {
    const int64_t half = n_ / 2 + 1;
    ws.half.assign(in, in + half);
    ws.half[0] = Complex(ws.half[0].real(), 0);
    if (n_ % 2 == 0) ws.half[n_ / 2] = Complex(ws.half[n_ / 2].real(), 0);
    if (n_ >= 2 && m_ == 0) {
      ws.fft.inv(out, ws.half.data(), n_);
      return;
    }
    ws.line.resize(n_);
    ws.spectrum.resize(n_);
    for (int64_t j = 0; j < n_; ++j) {
      ws.line[j] = j < half ? ws.half[j] : std::conj(ws.half[n_ - j]);
    }
    Run(ws.line.data(), ws.spectrum.data(), ws);
    for (int64_t j = 0; j < n_; ++j) out[j] = ws.spectrum[j].real();
  }

 private:
  int64_t n_;
  bool inverse_;
  int64_t m_ = 0;                // the chirp-z convolution length; 0: kissfft directly
  std::vector<Complex> chirp_;   // c[k]
  std::vector<Complex> kernel_;  // the transform of the convolution filter, divided by m_
};

// Transforms every line of the row-major array `data` (dimensions `dims`) along dimension `d`
// in place, dividing by the length afterwards when `divide`.
void TransformAlong(Complex* data, const std::vector<int64_t>& dims, int d, bool inverse,
                    bool divide, const ParallelFor& parallel_for) {
  const int64_t len = dims[d];
  if (len <= 1) return;  // the identity, and dividing by 1 changes nothing
  int64_t outer = 1, stride = 1;
  for (int i = 0; i < d; ++i) outer *= dims[i];
  for (size_t i = d + 1; i < dims.size(); ++i) stride *= dims[i];
  if (outer == 0 || stride == 0) return;
  const LinePlan plan(len, inverse);
  const double n = static_cast<double>(len);
  const int64_t tile = std::min(stride, kTile);
  const int64_t tiles_per_block = (stride + tile - 1) / tile;
  parallel_for(outer * tiles_per_block, std::max<int64_t>(1, kGrainValues / (len * tile)),
               [&](int64_t begin, int64_t end) {
                 Workspace ws;
                 ws.in.resize(len * tile);
                 ws.out.resize(len * tile);
                 for (int64_t t = begin; t < end; ++t) {
                   const int64_t first = (t % tiles_per_block) * tile;
                   const int64_t width = std::min(tile, stride - first);
                   Complex* base = data + (t / tiles_per_block) * len * stride + first;
                   for (int64_t j = 0; j < len; ++j) {
                     for (int64_t c = 0; c < width; ++c) ws.in[c * len + j] = base[j * stride + c];
                   }
                   for (int64_t c = 0; c < width; ++c) {
                     plan.Run(&ws.in[c * len], &ws.out[c * len], ws);
                   }
                   for (int64_t j = 0; j < len; ++j) {
                     for (int64_t c = 0; c < width; ++c) {
                       const Complex v = ws.out[c * len + j];
                       base[j * stride + c] = divide ? v / n : v;
                     }
                   }
                 }
               });
}

// The complex literal `x` (c64 or c128) as complex<double> values in `out`.
void LoadComplex(const Literal& x, Complex* out, const ParallelFor& parallel_for) {
  const int64_t count = x.element_count();
  if (x.shape().element_type() == PrimitiveType::kC128) {
    std::memcpy(static_cast<void*>(out), x.data().data(), count * sizeof(Complex));
    return;
  }
  const std::complex<float>* in = x.data_as<std::complex<float>>();
  parallel_for(count, 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = Complex(in[i].real(), in[i].imag());
  });
}

// Rounds `values` into the c64 literal `out`.
void StoreC64(const Complex* values, Literal* out, const ParallelFor& parallel_for) {
  std::complex<float>* o = out->mutable_data_as<std::complex<float>>();
  parallel_for(out->element_count(), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      o[i] = std::complex<float>(static_cast<float>(values[i].real()),
                                 static_cast<float>(values[i].imag()));
    }
  });
}

// Whether the fft `instr` of an operand of shape `in` is a form LibraryFft computes.
bool Takes(const Instruction& instr, const Shape& in) {
  if (instr.opcode() != Opcode::kFft || instr.operand_count() != 1) return false;
  const Shape& out = instr.shape();
  if (!in.IsArray() || !out.IsArray() || in.rank() != out.rank()) return false;
  const InstructionAttrs& at = instr.attrs_or_default();
  const std::vector<int64_t>& lengths = at.fft_length;
  const int rank = in.rank();
  const int count = static_cast<int>(lengths.size());
  if (count < 1 || count > 3 || count > rank) return false;
  const PrimitiveType it = in.element_type(), ot = out.element_type();
  bool types = false;
  switch (at.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      types = it == ot && (it == PrimitiveType::kC64 || it == PrimitiveType::kC128);
      break;
    case FftType::kRfft:
      types = (it == PrimitiveType::kF32 && ot == PrimitiveType::kC64) ||
              (it == PrimitiveType::kF64 && ot == PrimitiveType::kC128);
      break;
    case FftType::kIrfft:
      types = (it == PrimitiveType::kC64 && ot == PrimitiveType::kF32) ||
              (it == PrimitiveType::kC128 && ot == PrimitiveType::kF64);
      break;
  }
  if (!types) return false;
  for (int64_t n : lengths) {
    if (n < 0 || n > kMaxLength) return false;
  }
  std::vector<int64_t> want_in = in.dimensions();
  for (int i = 0; i < count; ++i) want_in[rank - count + i] = lengths[i];
  std::vector<int64_t> want_out = want_in;
  if (at.fft_type == FftType::kRfft) want_out.back() = lengths.back() / 2 + 1;
  if (at.fft_type == FftType::kIrfft) want_in.back() = lengths.back() / 2 + 1;
  return in.dimensions() == want_in && out.dimensions() == want_out;
}

}  // namespace

bool LibraryFftTakes(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFft || instr.operand_count() != 1) return false;
  return Takes(instr, instr.operand(0)->shape());
}

std::optional<absl::StatusOr<Literal>> LibraryFft(const Instruction& instr, const Literal& operand,
                                                  const ParallelFor& parallel_for) {
  if (operand.elided() || !Takes(instr, operand.shape())) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  const Shape& out_shape = instr.shape();
  // Every output is a sum over inputs: with no inputs (an RFFT of length 0 included) the
  // result is zeros, and with no outputs there is nothing to compute.
  if (operand.element_count() == 0 || out_shape.ElementCount() == 0) {
    return absl::StatusOr<Literal>(Literal(out_shape));
  }
  const std::vector<int64_t>& in_dims = operand.shape().dimensions();
  const int rank = static_cast<int>(in_dims.size());
  const int count = static_cast<int>(at.fft_length.size());
  const int first = rank - count;
  const int64_t n = at.fft_length.back();
  Literal out = Literal::Uninitialized(out_shape);
  // c128 results are transformed in place in the result; c64 ones in a double copy.
  const bool c128_out = out_shape.element_type() == PrimitiveType::kC128;
  std::vector<Complex> storage;
  switch (at.fft_type) {
    case FftType::kFft:
    case FftType::kIfft: {
      const bool inverse = at.fft_type == FftType::kIfft;
      if (!c128_out) storage.resize(operand.element_count());
      Complex* data = c128_out ? out.mutable_data_as<Complex>() : storage.data();
      LoadComplex(operand, data, parallel_for);
      for (int i = 0; i < count; ++i) {
        TransformAlong(data, in_dims, first + i, inverse, inverse, parallel_for);
      }
      if (!c128_out) StoreC64(data, &out, parallel_for);
      break;
    }
    case FftType::kRfft: {
      // The last dimension as real-input transforms into the half spectrum, then the others.
      const int64_t half = n / 2 + 1;
      const int64_t rows = operand.element_count() / n;
      if (!c128_out) storage.resize(out.element_count());
      Complex* data = c128_out ? out.mutable_data_as<Complex>() : storage.data();
      const bool f64_in = operand.shape().element_type() == PrimitiveType::kF64;
      const LinePlan plan(n, false);
      parallel_for(rows, std::max<int64_t>(1, kGrainValues / n), [&](int64_t b, int64_t e) {
        Workspace ws;
        ws.reals.resize(n);
        for (int64_t r = b; r < e; ++r) {
          if (f64_in) {
            std::memcpy(ws.reals.data(), operand.data_as<double>() + r * n, n * sizeof(double));
          } else {
            const float* row = operand.data_as<float>() + r * n;
            for (int64_t j = 0; j < n; ++j) ws.reals[j] = row[j];
          }
          plan.RunReal(ws.reals.data(), data + r * half, ws);
        }
      });
      for (int i = 0; i + 1 < count; ++i) {
        TransformAlong(data, out_shape.dimensions(), first + i, false, false, parallel_for);
      }
      if (!c128_out) StoreC64(data, &out, parallel_for);
      break;
    }
    case FftType::kIrfft: {
      // The inverse transforms of the other dimensions on the half spectrum first, then the
      // last dimension as half-spectrum-to-real transforms, in the interpreter's order (the
      // imaginary parts it drops are those left after the other dimensions).
      const int64_t half = in_dims.back();
      const int64_t rows = operand.element_count() / half;
      storage.resize(operand.element_count());
      LoadComplex(operand, storage.data(), parallel_for);
      for (int i = 0; i + 1 < count; ++i) {
        TransformAlong(storage.data(), in_dims, first + i, true, true, parallel_for);
      }
      const bool f64_out = out_shape.element_type() == PrimitiveType::kF64;
      const LinePlan plan(n, true);
      const double scale = static_cast<double>(n);
      parallel_for(rows, std::max<int64_t>(1, kGrainValues / n), [&](int64_t b, int64_t e) {
        Workspace ws;
        ws.reals.resize(n);
        for (int64_t r = b; r < e; ++r) {
          plan.RunHalfInverse(storage.data() + r * half, ws.reals.data(), ws);
          if (f64_out) {
            double* row = out.mutable_data_as<double>() + r * n;
            for (int64_t j = 0; j < n; ++j) row[j] = ws.reals[j] / scale;
          } else {
            float* row = out.mutable_data_as<float>() + r * n;
            for (int64_t j = 0; j < n; ++j) row[j] = static_cast<float>(ws.reals[j] / scale);
          }
        }
      });
      break;
    }
  }
  return absl::StatusOr<Literal>(std::move(out));
}

}  // namespace hlowb::cpu
