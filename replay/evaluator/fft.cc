// fft: FFT, IFFT, RFFT and IRFFT over the innermost fft_length.size() (1 to 3) dimensions,
// computed in complex<double> (radix-2 when the length is a power of two, a direct DFT
// otherwise) and rounded to the result type. IFFT/IRFFT divide by the length per dimension.
#include <cmath>
#include <numbers>

#include "replay/evaluator/eval_internal.h"

namespace hlowb::eval {
namespace {

void Dft1(std::vector<c128>& v, bool inverse) {
  size_t n = v.size();
  if (n <= 1) return;
  double sign = inverse ? 1.0 : -1.0;
  if ((n & (n - 1)) == 0) {
    for (size_t i = 1, j = 0; i < n; ++i) {
      size_t bit = n >> 1;
      for (; j & bit; bit >>= 1) j ^= bit;
      j ^= bit;
      if (i < j) std::swap(v[i], v[j]);
    }
    for (size_t len = 2; len <= n; len <<= 1) {
      double ang = sign * 2 * std::numbers::pi / static_cast<double>(len);
      for (size_t i = 0; i < n; i += len) {
        for (size_t j = 0; j < len / 2; ++j) {
          c128 w = std::polar(1.0, ang * static_cast<double>(j));
          c128 u = v[i + j], t = v[i + j + len / 2] * w;
          v[i + j] = u + t;
          v[i + j + len / 2] = u - t;
        }
      }
    }
  } else {
    std::vector<c128> out(n);
    for (size_t k = 0; k < n; ++k) {
      c128 acc = 0;
      for (size_t j = 0; j < n; ++j) {
        acc += v[j] * std::polar(1.0, sign * 2 * std::numbers::pi *
                                          static_cast<double>((k * j) % n) / static_cast<double>(n));
      }
      out[k] = acc;
    }
    v = std::move(out);
  }
  if (inverse) {
    for (auto& x : v) x /= static_cast<double>(n);
  }
}

// Transforms `data` (row-major over dims) along dimension d.
void AlongDim(std::vector<c128>& data, const std::vector<int64_t>& dims, int d, bool inverse) {
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t len = dims[d], stride = strides[d];
  if (len == 0) return;
  int64_t total = Product(dims);
  std::vector<c128> line(len);
  for (int64_t base = 0; base < total; ++base) {
    if ((base / stride) % len != 0) continue;
    for (int64_t j = 0; j < len; ++j) line[j] = data[base + j * stride];
    Dft1(line, inverse);
    for (int64_t j = 0; j < len; ++j) data[base + j * stride] = line[j];
  }
}

}  // namespace

absl::StatusOr<Literal> EvalFft(const Instruction& instr, const Literal& x) {
  const InstructionAttrs& at = instr.attrs_or_default();
  const auto& fl = at.fft_length;
  int rank = x.shape().rank();
  int L = static_cast<int>(fl.size());
  if (L < 1 || L > 3 || L > rank) return Invalid(instr, "fft_length must name 1 to 3 dimensions");
  auto wide = EvalConvert(x, PrimitiveType::kC128);
  if (!wide.ok()) return wide.status();
  std::vector<int64_t> dims = x.shape().dimensions();
  std::vector<c128> data(wide->data_as<c128>(), wide->data_as<c128>() + wide->element_count());
  const Shape& rs = instr.shape();
  switch (at.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      for (int i = 0; i < L; ++i) AlongDim(data, dims, rank - L + i, at.fft_type == FftType::kIfft);
      break;
    case FftType::kRfft: {
      for (int i = 0; i < L; ++i) AlongDim(data, dims, rank - L + i, false);
      // Keep n/2+1 entries of the last dimension.
      std::vector<int64_t> out_dims = dims;
      out_dims.back() = fl.back() / 2 + 1;
      std::vector<c128> out(Product(out_dims));
      int64_t rows = dims.back() == 0 ? 0 : Product(dims) / dims.back();
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < out_dims.back(); ++j) out[r * out_dims.back() + j] = data[r * dims.back() + j];
      }
      data = std::move(out);
      dims = out_dims;
      break;
    }
    case FftType::kIrfft: {
      for (int i = 0; i < L - 1; ++i) AlongDim(data, dims, rank - L + i, true);
      int64_t n = fl.back(), half = dims.back();
      std::vector<int64_t> out_dims = dims;
      out_dims.back() = n;
      int64_t rows = half == 0 ? 0 : Product(dims) / half;
      std::vector<c128> out(Product(out_dims));
      std::vector<c128> line(n);
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
          if (j < half && j <= n / 2) line[j] = data[r * half + j];
          else line[j] = std::conj(data[r * half + (n - j)]);
        }
        if (n > 0) line[0] = c128(line[0].real(), 0);
        Dft1(line, true);
        for (int64_t j = 0; j < n; ++j) out[r * n + j] = c128(line[j].real(), 0);
      }
      data = std::move(out);
      dims = out_dims;
      break;
    }
  }
  Literal c(Shape::Array(PrimitiveType::kC128, dims));
  std::copy(data.begin(), data.end(), c.mutable_data_as<c128>());
  return EvalConvert(c, rs.element_type());
}

}  // namespace hlowb::eval
