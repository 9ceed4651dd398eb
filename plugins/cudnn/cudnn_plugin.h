// cuDNN convolution custom calls as XLA:GPU emits them, computed on the host through the
// evaluator's convolution, driven by the instruction's own window=, dim_labels= and
// feature_group_count= and its CudnnConvBackendConfig ("cudnn_conv_backend_config" inside
// GpuBackendConfig, or at top level as older XLA wrote it):
//
//   __cudnn$convForward                 (input, filter) -> scale * conv(input, filter)
//   __cudnn$convBiasActivationForward   (input, filter, bias[, side_input]) ->
//                                         act(scale * conv + side_input_scale * side + bias)
//   __cudnn$convBackwardInput           (d_output, filter) -> d_input
//   __cudnn$convBackwardFilter          (input, d_output) -> d_filter
//
// As in XLA, window and dim_labels describe the forward convolution for all four kinds: the
// "input" labels name the result of a backward-input call and the "output" labels its operand;
// a backward-filter call's result has the kernel labels. The backward kinds are computed as
// the adjoint convolutions (dilated, reversed-window for d_input; batch-grouped for d_filter),
// grouped convolutions included. The result tuple's workspace comes back as zeros.
//
// Activations: kNone, kRelu, kRelu6, kSigmoid, kTanh, kElu, kLeakyRelu (leakyrelu_alpha),
// kGeluExact. Not modelled: kReluX/kBandPass, int8 vectorized layouts, f8 graph convolutions
// and cuDNN's algorithm-dependent rounding (everything is computed in double precision).
#ifndef HLOWB_PLUGINS_CUDNN_CUDNN_PLUGIN_H_
#define HLOWB_PLUGINS_CUDNN_CUDNN_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterCudnnPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_CUDNN_CUDNN_PLUGIN_H_
