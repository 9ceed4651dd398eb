// cuBLAS GEMM custom calls as XLA:GPU emits them: "__cublas$gemm" (legacy cuBLAS),
// "__cublas$lt$matmul" and "__cublas$lt$matmul$f8" (cuBLASLt), computed on the host from their
// GemmBackendConfig (inside GpuBackendConfig's "gemm_backend_config", or at top level as older
// XLA wrote it):
//
//   D = d_scale * act(alpha * a_scale * b_scale * dot(A, B) + beta * c_scale * C + bias)
//
// with the dot over "dot_dimension_numbers", C the operand after A and B when beta != 0, the
// four f32 scalar scales (a, b, c, d) next for f8 GEMMs, and the vector bias last when the
// epilogue has BIAS (added along the output's trailing, right-hand-side free dimensions).
// Epilogues: DEFAULT, BIAS, RELU, BIAS_RELU, GELU (tanh approximation), BIAS_GELU, SILU,
// BIAS_SILU, and the *_AUX forms whose second output is the pre-activation value. An f8 result
// saturates at the type's largest finite value, as XLA's fused clamp did; damax_output adds the
// largest |value| before d_scale. Further tuple elements (the workspace) come back as zeros.
//
// Computed in double precision and rounded once; not a model of cuBLAS's accumulation order,
// tensor-core rounding or algorithm choice. Complex GEMMs support DEFAULT epilogues only.
#ifndef HLOWB_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_
#define HLOWB_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterCublasPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_CUBLAS_CUBLAS_PLUGIN_H_
