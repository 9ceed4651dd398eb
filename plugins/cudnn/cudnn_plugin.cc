#include "plugins/cudnn/cudnn_plugin.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

enum class ConvKind { kForward, kBiasActivationForward, kBackwardInput, kBackwardFilter };

struct CudnnConfig {
  double conv_result_scale = 1;
  double side_input_scale = 0;
  Activation activation = Activation::kNone;
  double leakyrelu_alpha = 0;
};

absl::StatusOr<Activation> ParseActivation(const JsonValue* v) {
  if (v == nullptr) return Activation::kNone;
  std::string name;
  if (std::optional<int64_t> n = v->AsInt()) {
    // stream_executor::dnn::ActivationMode numbering.
    static const char* const kByNumber[] = {"kNone",      "kSigmoid",  "kRelu",     "kRelu6",
                                            "kReluX",     "kTanh",     "kBandPass", "kElu",
                                            "kLeakyRelu", "kGeluExact"};
    if (*n < 0 || *n >= 10) return absl::InvalidArgumentError(StrCat("activation mode ", *n));
    name = kByNumber[*n];
  } else if (std::optional<std::string> t = v->AsText()) {
    name = *t;
  }
  if (name == "kNone" || name.empty()) return Activation::kNone;
  if (name == "kRelu") return Activation::kRelu;
  if (name == "kRelu6") return Activation::kRelu6;
  if (name == "kSigmoid") return Activation::kSigmoid;
  if (name == "kTanh") return Activation::kTanh;
  if (name == "kElu") return Activation::kElu;
  if (name == "kLeakyRelu") return Activation::kLeakyRelu;
  if (name == "kGeluExact") return Activation::kGeluErf;
  return absl::UnimplementedError(StrCat("cuDNN activation mode ", name));
}

absl::StatusOr<CudnnConfig> ParseConfig(const Instruction& instr) {
  absl::StatusOr<JsonValue> root = ParseBackendConfig(instr);
  if (!root.ok()) return root.status();
  const JsonValue& cfg = ConfigSection(*root, "cudnn_conv_backend_config");
  CudnnConfig c;
  if (const JsonValue* v = cfg.Find("conv_result_scale")) {
    c.conv_result_scale = v->AsNumber().value_or(1);
  }
  if (const JsonValue* v = cfg.Find("side_input_scale")) {
    c.side_input_scale = v->AsNumber().value_or(0);
  }
  if (const JsonValue* v = cfg.Find("leakyrelu_alpha"))
    c.leakyrelu_alpha = v->AsNumber().value_or(0);
  absl::StatusOr<Activation> act = ParseActivation(cfg.Find("activation_mode"));
  if (!act.ok()) return act.status();
  c.activation = *act;
  return c;
}

absl::StatusOr<Literal> Convolve(const Literal& lhs, const Literal& rhs, const Window& window,
                                 const ConvolutionDimensionNumbers& dn, int64_t feature_groups,
                                 int64_t batch_groups, const std::vector<int64_t>& out_dims) {
  ScratchComputation s;
  Instruction* a = s.Parameter(lhs.shape());
  Instruction* b = s.Parameter(rhs.shape());
  Instruction* conv =
      s.Add(Opcode::kConvolution, Shape::Array(PrimitiveType::kF64, out_dims), {a, b});
  InstructionAttrs* at = conv->mutable_attrs();
  at->window = window;
  at->convolution_dimension_numbers = dn;
  at->feature_group_count = feature_groups;
  at->batch_group_count = batch_groups;
  return s.Run(conv, {&lhs, &rhs});
}

// The kernel of the adjoint of a grouped convolution: K2[kof = co, kif = g * Cin_g + ci] =
// W[kif = ci, kof = g * Cout_g + co]. Dimension positions stay where they are.
absl::StatusOr<Literal> RegroupKernel(const Literal& w, int64_t kif, int64_t kof, int64_t groups) {
  std::vector<int64_t> dims = w.shape().dimensions();
  const int64_t cin_g = dims[kif];
  const int64_t cout = dims[kof];
  if (cout % groups != 0) {
    return absl::InvalidArgumentError("output features are not divisible by the group count");
  }
  const int64_t cout_g = cout / groups;
  std::vector<int64_t> new_dims = dims;
  new_dims[kif] = cin_g * groups;
  new_dims[kof] = cout_g;
  Literal out(Shape::Array(w.shape().element_type(), new_dims));
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> src_strides(rank, 1);
  for (int d = rank - 2; d >= 0; --d) src_strides[d] = src_strides[d + 1] * dims[d + 1];
  const int eb = w.element_bytes();
  std::vector<int64_t> idx(rank, 0);
  for (int64_t linear = 0; linear < out.element_count(); ++linear) {
    int64_t g = idx[kif] / cin_g, ci = idx[kif] % cin_g, co = idx[kof];
    int64_t src = 0;
    for (int d = 0; d < rank; ++d) {
      int64_t v = d == kif ? ci : d == kof ? g * cout_g + co : idx[d];
      src += v * src_strides[d];
    }
    std::memcpy(out.mutable_data()->data() + linear * eb, w.data().data() + src * eb, eb);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < new_dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

absl::Status CheckWindow(const Window& w, size_t spatial, bool backward) {
  if (w.size() != spatial) {
    return absl::InvalidArgumentError(
        StrCat("window has ", w.size(), " dimensions, dim_labels ", spatial, " spatial ones"));
  }
  for (const WindowDimension& d : w) {
    if (d.stride <= 0 || d.window_dilation <= 0 || d.base_dilation <= 0) {
      return absl::InvalidArgumentError("window has a non-positive stride or dilation");
    }
    if (backward && (d.base_dilation != 1 || d.window_reversal)) {
      return absl::UnimplementedError(
          "backward convolution with lhs dilation or window reversal in its forward window");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> EvalConv(const Instruction& instr, const Operands& ops, ConvKind kind) {
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.convolution_dimension_numbers) {
    return absl::InvalidArgumentError("the custom call has no dim_labels");
  }
  const ConvolutionDimensionNumbers& fwd = *at.convolution_dimension_numbers;
  const size_t ns = fwd.input_spatial_dimensions.size();
  absl::StatusOr<CudnnConfig> cfg = ParseConfig(instr);
  if (!cfg.ok()) return cfg.status();
  const Shape& out = PrimaryResultShape(instr);
  if (!out.IsArray() || static_cast<size_t>(out.rank()) != ns + 2) {
    return absl::InvalidArgumentError("the result's rank does not match dim_labels");
  }
  const size_t want = kind == ConvKind::kBiasActivationForward ? 3 : 2;
  if (ops.size() < want || ops.size() > (kind == ConvKind::kBiasActivationForward ? 4u : 2u)) {
    return absl::InvalidArgumentError(StrCat("unexpected operand count ", ops.size()));
  }
  for (size_t i = 0; i < 2; ++i) {
    if (!ops[i]->shape().IsArray() || static_cast<size_t>(ops[i]->shape().rank()) != ns + 2) {
      return absl::InvalidArgumentError(StrCat("operand ", i, " rank does not match dim_labels"));
    }
  }
  Window window = at.window.value_or(Window());
  const int64_t groups = at.feature_group_count;
  if (groups <= 0 || at.batch_group_count <= 0) {
    return absl::InvalidArgumentError("group counts must be positive");
  }
  absl::StatusOr<Literal> acc;
  if (kind == ConvKind::kForward || kind == ConvKind::kBiasActivationForward) {
    if (window.empty()) {
      for (size_t i = 0; i < ns; ++i) {
        WindowDimension d;
        d.size = ops[1]->shape().dimension(fwd.kernel_spatial_dimensions[i]);
        window.push_back(d);
      }
    }
    if (absl::Status st = CheckWindow(window, ns, false); !st.ok()) return st;
    acc = Convolve(*ops[0], *ops[1], window, fwd, groups, at.batch_group_count, out.dimensions());
  } else if (kind == ConvKind::kBackwardInput) {
    // d_input[i] = sum_k d_output_dilated[i + pad_low - k * dil] * w[k]: a stride-1 convolution
    // over d_output dilated by the forward stride, with the window reversed.
    if (absl::Status st = CheckWindow(window, ns, true); !st.ok()) return st;
    if (at.batch_group_count != 1) return absl::UnimplementedError("batch groups in d_input");
    const Literal& dout = *ops[0];
    ConvolutionDimensionNumbers dn;
    dn.input_batch_dimension = fwd.output_batch_dimension;
    dn.input_feature_dimension = fwd.output_feature_dimension;
    dn.input_spatial_dimensions = fwd.output_spatial_dimensions;
    dn.kernel_input_feature_dimension = fwd.kernel_output_feature_dimension;
    dn.kernel_output_feature_dimension = fwd.kernel_input_feature_dimension;
    dn.kernel_spatial_dimensions = fwd.kernel_spatial_dimensions;
    dn.output_batch_dimension = fwd.input_batch_dimension;
    dn.output_feature_dimension = fwd.input_feature_dimension;
    dn.output_spatial_dimensions = fwd.input_spatial_dimensions;
    Window bw(ns);
    for (size_t i = 0; i < ns; ++i) {
      const WindowDimension& f = window[i];
      const int64_t in_size = out.dimension(fwd.input_spatial_dimensions[i]);
      const int64_t out_size = dout.shape().dimension(fwd.output_spatial_dimensions[i]);
      const int64_t span = (f.size - 1) * f.window_dilation;
      bw[i].size = f.size;
      bw[i].stride = 1;
      bw[i].base_dilation = f.stride;
      bw[i].window_dilation = f.window_dilation;
      bw[i].window_reversal = true;
      bw[i].padding_low = span - f.padding_low;
      bw[i].padding_high = in_size - ((out_size - 1) * f.stride + 1) - bw[i].padding_low + span;
    }
    const Literal* kernel = ops[1];
    Literal regrouped;
    if (groups > 1) {
      absl::StatusOr<Literal> k = RegroupKernel(*ops[1], fwd.kernel_input_feature_dimension,
                                                fwd.kernel_output_feature_dimension, groups);
      if (!k.ok()) return k.status();
      regrouped = std::move(*k);
      kernel = &regrouped;
    }
    acc = Convolve(dout, *kernel, bw, dn, groups, 1, out.dimensions());
  } else {
    // d_filter[k] = sum_{b, o} input[o * stride + k * dil - pad_low] * d_output[o]: the batch
    // dimension is contracted, the forward feature groups become batch groups.
    if (absl::Status st = CheckWindow(window, ns, true); !st.ok()) return st;
    if (at.batch_group_count != 1) return absl::UnimplementedError("batch groups in d_filter");
    const Literal& input = *ops[0];
    const Literal& dout = *ops[1];
    ConvolutionDimensionNumbers dn;
    dn.input_batch_dimension = fwd.input_feature_dimension;
    dn.input_feature_dimension = fwd.input_batch_dimension;
    dn.input_spatial_dimensions = fwd.input_spatial_dimensions;
    dn.kernel_input_feature_dimension = fwd.output_batch_dimension;
    dn.kernel_output_feature_dimension = fwd.output_feature_dimension;
    dn.kernel_spatial_dimensions = fwd.output_spatial_dimensions;
    dn.output_batch_dimension = fwd.kernel_input_feature_dimension;
    dn.output_feature_dimension = fwd.kernel_output_feature_dimension;
    dn.output_spatial_dimensions = fwd.kernel_spatial_dimensions;
    Window bw(ns);
    for (size_t i = 0; i < ns; ++i) {
      const WindowDimension& f = window[i];
      const int64_t in_size = input.shape().dimension(fwd.input_spatial_dimensions[i]);
      const int64_t out_size = dout.shape().dimension(fwd.output_spatial_dimensions[i]);
      bw[i].size = out_size;
      bw[i].stride = f.window_dilation;
      bw[i].window_dilation = f.stride;
      bw[i].padding_low = f.padding_low;
      bw[i].padding_high = (f.size - 1) * f.window_dilation + (out_size - 1) * f.stride + 1 -
                           in_size - f.padding_low;
    }
    acc = Convolve(input, dout, bw, dn, 1, groups, out.dimensions());
  }
  if (!acc.ok()) return acc.status();

  const int64_t n = acc->element_count();
  double* v = acc->mutable_data_as<double>();
  for (int64_t i = 0; i < n; ++i) v[i] *= cfg->conv_result_scale;
  if (kind == ConvKind::kBiasActivationForward) {
    absl::StatusOr<std::vector<double>> bias = ToDoubles(*ops[2]);
    if (!bias.ok()) return bias.status();
    const int64_t features = out.dimension(fwd.output_feature_dimension);
    if (static_cast<int64_t>(bias->size()) != features) {
      return absl::InvalidArgumentError(
          StrCat("bias has ", bias->size(), " elements for ", features, " output features"));
    }
    int64_t stride = 1;
    for (int d = out.rank() - 1; d > fwd.output_feature_dimension; --d) stride *= out.dimension(d);
    std::vector<double> side;
    if (ops.size() == 4 && cfg->side_input_scale != 0) {
      absl::StatusOr<std::vector<double>> s = ToDoubles(*ops[3]);
      if (!s.ok()) return s.status();
      if (static_cast<int64_t>(s->size()) != n) {
        return absl::InvalidArgumentError("the side input's size differs from the result's");
      }
      side = std::move(*s);
    }
    for (int64_t i = 0; i < n; ++i) {
      if (!side.empty()) v[i] += cfg->side_input_scale * side[i];
      v[i] += (*bias)[(i / stride) % features];
    }
  }
  if (kind == ConvKind::kForward || kind == ConvKind::kBiasActivationForward) {
    for (int64_t i = 0; i < n; ++i) v[i] = Activate(cfg->activation, v[i], cfg->leakyrelu_alpha);
  }
  absl::StatusOr<Literal> result = ConvertLiteral(*acc, out.element_type());
  if (!result.ok()) return result.status();
  if (!instr.shape().IsTuple()) return result;
  std::vector<Literal> elements;
  elements.push_back(std::move(*result));
  for (int k = 1; k < instr.shape().tuple_count(); ++k) {
    elements.push_back(Literal(instr.shape().tuple_shape(k)));  // workspace
  }
  Literal t(instr.shape(), /*allocate=*/false);
  *t.mutable_tuple_elements() = std::move(elements);
  return t;
}

}  // namespace

absl::Status RegisterCudnnPlugin(CustomCallRegistry* registry) {
  struct Target {
    const char* name;
    ConvKind kind;
    const char* summary;
  };
  const Target kTargets[] = {
      {"__cudnn$convForward", ConvKind::kForward, "cuDNN forward convolution"},
      {"__cudnn$convBiasActivationForward", ConvKind::kBiasActivationForward,
       "cuDNN fused convolution + side input + bias + activation"},
      {"__cudnn$convBackwardInput", ConvKind::kBackwardInput,
       "cuDNN convolution gradient with respect to the input"},
      {"__cudnn$convBackwardFilter", ConvKind::kBackwardFilter,
       "cuDNN convolution gradient with respect to the filter"},
  };
  for (const Target& t : kTargets) {
    ConvKind kind = t.kind;
    absl::Status st = registry->Register(
        {t.name, "gpu", "cudnn", t.summary, [kind](const Instruction& instr, const Operands& ops) {
           return EvalConv(instr, ops, kind);
         },
         {}});
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace hlowb
