// The oneDNN custom calls XLA:CPU emits when built with oneDNN, computed on the host from their
// CPU BackendConfig:
//
//   __onednn$matmul     (a, b, post-op operands...) -> post_ops(a @ b). "onednn_matmul_config":
//                       transpose_a / transpose_b swap the two minor dimensions; leading
//                       (batch) dimensions broadcast numpy-style; fused_ops (or fusions.ops)
//                       apply in order: BIAS and BINARY_ADD consume the next operand and add it
//                       broadcast numpy-style, RELU, TANH, GELU_ERF, GELU_TANH, ELU, RELU6,
//                       SIGMOID, SWISH, and LINEAR (multiply by alpha_typecast read as a float).
//   __onednn$layernorm  (x, scale, shift) -> (x - mean) / sqrt(var + eps) * scale + shift over
//                       the last dimension; eps is epsilon_typecast read as a float.
//   __onednn$softmax    (x) -> softmax along onednn_softmax_config.softmax_axis (the last axis
//                       when the config is absent).
//
// Computed in double precision and rounded once to the result type; not a model of oneDNN's
// blocked accumulation, weight prepacking or scratchpads (those only change rounding).
#ifndef HLOWB_PLUGINS_ONEDNN_ONEDNN_PLUGIN_H_
#define HLOWB_PLUGINS_ONEDNN_ONEDNN_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterOneDnnPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_ONEDNN_ONEDNN_PLUGIN_H_
