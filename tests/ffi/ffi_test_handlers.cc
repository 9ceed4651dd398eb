// XLA FFI handlers written the way a user writes them: against the FFI headers that ship with
// jaxlib (xla/ffi/api/ffi.h), built into a shared library, registered in JAX with
// jax.ffi.register_ffi_target and loaded by `hlowb replay --custom_call_library=`. The FFI tests
// run the same program through JAX and through our replay and compare the results.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

// y = x / sqrt(mean(x^2 over the last dimension) + eps).
ffi::Error RmsNormImpl(float eps, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  const auto dims = x.dimensions();
  if (dims.size() == 0) return ffi::Error::InvalidArgument("rms_norm: x must have rank >= 1");
  const int64_t width = dims.back();
  const int64_t rows = width == 0 ? 0 : static_cast<int64_t>(x.element_count()) / width;
  const float* in = x.typed_data();
  float* out = y->typed_data();
  for (int64_t r = 0; r < rows; ++r) {
    float sum = 0.0f;
    for (int64_t c = 0; c < width; ++c) sum += in[r * width + c] * in[r * width + c];
    const float scale = 1.0f / std::sqrt(sum / static_cast<float>(width) + eps);
    for (int64_t c = 0; c < width; ++c) out[r * width + c] = in[r * width + c] * scale;
  }
  return ffi::Error::Success();
}

// Every attribute kind: out[i] = sign * (x[i] * weights[i % n] + offset) for f32 or f64 x, and
// idx doubled (or incremented, by `mode`) as a second, s32 result.
ffi::Error MixImpl(int64_t offset, ffi::Span<const int64_t> weights, std::string_view mode,
                   bool negate, ffi::AnyBuffer x, ffi::Buffer<ffi::S32> idx,
                   ffi::Result<ffi::AnyBuffer> out, ffi::ResultBuffer<ffi::S32> idx_out) {
  if (weights.size() == 0) return ffi::Error::InvalidArgument("mix: weights is empty");
  const double sign = negate ? -1.0 : 1.0;
  const size_t n = x.element_count();
  if (x.element_type() == ffi::F32) {
    const float* in = x.typed_data<float>();
    float* o = out->typed_data<float>();
    for (size_t i = 0; i < n; ++i) {
      o[i] = static_cast<float>(sign * (in[i] * static_cast<double>(weights[i % weights.size()]) +
                                        static_cast<double>(offset)));
    }
  } else if (x.element_type() == ffi::F64) {
    const double* in = x.typed_data<double>();
    double* o = out->typed_data<double>();
    for (size_t i = 0; i < n; ++i) {
      o[i] = sign * (in[i] * static_cast<double>(weights[i % weights.size()]) +
                     static_cast<double>(offset));
    }
  } else {
    return ffi::Error::InvalidArgument("mix: x must be f32 or f64");
  }
  const int32_t* in_idx = idx.typed_data();
  int32_t* out_idx = idx_out->typed_data();
  for (size_t i = 0; i < idx.element_count(); ++i) {
    if (mode == "double") {
      out_idx[i] = in_idx[i] * 2;
    } else if (mode == "increment") {
      out_idx[i] = in_idx[i] + 1;
    } else {
      return ffi::Error::InvalidArgument("mix: mode must be \"double\" or \"increment\"");
    }
  }
  return ffi::Error::Success();
}

// Attributes as one dictionary: y = x * scale + bias, `scale` an f32 and `bias` an f64.
ffi::Error DictScaleImpl(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y,
                         ffi::Dictionary attrs) {
  auto scale = attrs.get<float>("scale");
  if (scale.has_error()) return scale.error();
  auto bias = attrs.get<double>("bias");
  if (bias.has_error()) return bias.error();
  for (size_t i = 0; i < x.element_count(); ++i) {
    y->typed_data()[i] = x.typed_data()[i] * *scale + static_cast<float>(*bias);
  }
  return ffi::Error::Success();
}

// Always fails, so tests can check that a handler's error reaches the user.
ffi::Error FailImpl(ffi::AnyBuffer, ffi::Result<ffi::AnyBuffer>) {
  return ffi::Error(ffi::ErrorCode::kFailedPrecondition, "the handler refused on purpose");
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(HlowbTestRmsNorm, RmsNormImpl,
                              ffi::Ffi::Bind()
                                  .Attr<float>("eps")
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HlowbTestMix, MixImpl,
                              ffi::Ffi::Bind()
                                  .Attr<int64_t>("offset")
                                  .Attr<ffi::Span<const int64_t>>("weights")
                                  .Attr<std::string_view>("mode")
                                  .Attr<bool>("negate")
                                  .Arg<ffi::AnyBuffer>()
                                  .Arg<ffi::Buffer<ffi::S32>>()
                                  .Ret<ffi::AnyBuffer>()
                                  .Ret<ffi::Buffer<ffi::S32>>());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HlowbTestDictScale, DictScaleImpl,
                              ffi::Ffi::Bind()
                                  .Arg<ffi::Buffer<ffi::F32>>()
                                  .Ret<ffi::Buffer<ffi::F32>>()
                                  .Attrs());

XLA_FFI_DEFINE_HANDLER_SYMBOL(HlowbTestFail, FailImpl,
                              ffi::Ffi::Bind().Arg<ffi::AnyBuffer>().Ret<ffi::AnyBuffer>());
