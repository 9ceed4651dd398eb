#include "replay/backends/cuda/cuda_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/analysis/verifier.h"
#include "core/ir/computation.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/pipelines.h"
#include "core/support/json_reader.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "core/analysis/cost_model.h"
#include "core/passes/buffer_assignment.h"
#include "replay/backends/cpu/cpu_arena.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/cuda/cuda_driver.h"
#include "replay/backends/kernel_io.h"
#include "replay/codegen/gpu_codegen.h"
#include "replay/evaluator/constant_evaluator.h"

namespace hlowb {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using codegen::RowMajorLayout;

// A dot as one strided-batched cuBLAS GEMM on row-major buffers: batch dimensions lead both
// operands, and each operand's free and contracting dimensions are each contiguous, in either
// order (the second order is passed transposed).
struct GemmPlan {
  cuda::Blas::Type type = cuda::Blas::Type::kF32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool lhs_km = false;  // lhs stored [B, K, M]
  bool rhs_nk = false;  // rhs stored [B, N, K]
  // XLA's cuBLAS custom calls: D = alpha * A.B + beta * C, with C the third operand; the
  // result is element 0 of a tuple whose other elements (the workspace) come back as zeros.
  double alpha = 1, beta = 0;
  bool has_c = false;
  bool tuple_result = false;
  // cuBLASLt epilogues, run as a kernel after the GEMM (EpilogueModuleText): a bias operand
  // added along the result's trailing dimensions, then an activation; with `aux`, the value
  // before the activation is the result's second element.
  enum class Activation { kNone, kRelu, kGelu };
  int bias_operand = -1;
  int bias_trailing_dims = 0;  // the result's trailing dimensions the bias spans
  Activation activation = Activation::kNone;
  bool aux = false;
  const Instruction* epilogue = nullptr;  // the epilogue kernel's fusion (set at compile time)
  bool has_epilogue() const { return bias_operand >= 0 || activation != Activation::kNone; }
  size_t operand_count() const { return 2 + (has_c ? 1 : 0) + (bias_operand >= 0 ? 1 : 0); }
};

bool Consecutive(const std::vector<int64_t>& dims, int64_t first) {
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] != first + static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::optional<GemmPlan> PlanGemm(const Shape& ls, const Shape& rs, const Shape& os,
                                 const DotDimensionNumbers& d) {
  if (!d.lhs_ragged_dimensions.empty() || !d.rhs_group_dimensions.empty()) return std::nullopt;
  if (!ls.IsArray() || !rs.IsArray() || !os.IsArray()) return std::nullopt;
  const PrimitiveType t = os.element_type();
  if ((t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kF16 &&
       t != PrimitiveType::kBF16) ||
      ls.element_type() != t || rs.element_type() != t) {
    return std::nullopt;
  }
  if (!RowMajorLayout(ls) || !RowMajorLayout(rs) || !RowMajorLayout(os)) return std::nullopt;
  const int64_t nb = static_cast<int64_t>(d.lhs_batch_dimensions.size());
  if (static_cast<int64_t>(d.rhs_batch_dimensions.size()) != nb ||
      !Consecutive(d.lhs_batch_dimensions, 0) || !Consecutive(d.rhs_batch_dimensions, 0) ||
      d.lhs_contracting_dimensions.size() != d.rhs_contracting_dimensions.size()) {
    return std::nullopt;
  }
  GemmPlan p;
  p.type = t == PrimitiveType::kF32   ? cuda::Blas::Type::kF32
           : t == PrimitiveType::kF64 ? cuda::Blas::Type::kF64
           : t == PrimitiveType::kF16 ? cuda::Blas::Type::kF16
                                      : cuda::Blas::Type::kBF16;
  for (int64_t i = 0; i < nb; ++i) {
    const int64_t a = ls.dimension(static_cast<int>(i));
    if (a != rs.dimension(static_cast<int>(i))) return std::nullopt;
    p.batch *= a;
  }
  const int64_t nc = static_cast<int64_t>(d.lhs_contracting_dimensions.size());
  const int64_t lfree = ls.rank() - nb - nc, rfree = rs.rank() - nb - nc;
  if (lfree < 0 || rfree < 0) return std::nullopt;
  // Contracting dimensions: last (MK / KN... see below) or first after the batch.
  if (Consecutive(d.lhs_contracting_dimensions, nb + lfree)) {
    p.lhs_km = false;
  } else if (Consecutive(d.lhs_contracting_dimensions, nb)) {
    p.lhs_km = true;
  } else {
    return std::nullopt;
  }
  if (Consecutive(d.rhs_contracting_dimensions, nb)) {
    p.rhs_nk = false;
  } else if (Consecutive(d.rhs_contracting_dimensions, nb + rfree)) {
    p.rhs_nk = true;
  } else {
    return std::nullopt;
  }
  for (int64_t i = 0; i < nc; ++i) {
    const int64_t a = ls.dimension(static_cast<int>(d.lhs_contracting_dimensions[i]));
    if (a != rs.dimension(static_cast<int>(d.rhs_contracting_dimensions[i]))) return std::nullopt;
    p.k *= a;
  }
  std::vector<int64_t> out_dims(ls.dimensions().begin(), ls.dimensions().begin() + nb);
  const int64_t lfree_first = p.lhs_km ? nb + nc : nb;
  for (int64_t i = 0; i < lfree; ++i) {
    p.m *= ls.dimension(static_cast<int>(lfree_first + i));
    out_dims.push_back(ls.dimension(static_cast<int>(lfree_first + i)));
  }
  const int64_t rfree_first = p.rhs_nk ? nb : nb + nc;
  for (int64_t i = 0; i < rfree; ++i) {
    p.n *= rs.dimension(static_cast<int>(rfree_first + i));
    out_dims.push_back(rs.dimension(static_cast<int>(rfree_first + i)));
  }
  if (out_dims != os.dimensions()) return std::nullopt;
  const int64_t limit = int64_t{1} << 31;
  if (p.batch * p.m * p.n == 0 || p.k == 0 || p.m >= limit || p.n >= limit || p.k >= limit ||
      p.batch >= limit) {
    return std::nullopt;
  }
  return p;
}

std::optional<GemmPlan> PlanDot(const Instruction& instr) {
  if (instr.opcode() != Opcode::kDot || instr.operand_count() != 2) return std::nullopt;
  const InstructionAttrs& at = instr.attrs_or_default();
  if (!at.sparsity.empty() || !at.dot_dimension_numbers) return std::nullopt;
  return PlanGemm(instr.operand(0)->shape(), instr.operand(1)->shape(), instr.shape(),
                  *at.dot_dimension_numbers);
}

// XLA's `__cublas$gemm` and `__cublas$lt$matmul` custom calls without an epilogue, from their
// backend_config's gemm_backend_config (alpha_real, beta, dot_dimension_numbers).
std::optional<GemmPlan> PlanCublasCall(const Instruction& instr, std::string* why) {
  if (instr.opcode() != Opcode::kCustomCall) return std::nullopt;
  const std::string& target = instr.attrs_or_default().custom_call_target;
  if (target != "__cublas$gemm" && target != "__cublas$lt$matmul") return std::nullopt;
  const std::string& text = instr.backend_config();
  absl::StatusOr<JsonValue> root = JsonValue::Parse(text.empty() ? "{}" : text);
  if (!root.ok() || !root->is_object()) {
    *why = "its backend_config does not parse";
    return std::nullopt;
  }
  const JsonValue* section = root->Find("gemm_backend_config");
  const JsonValue& cfg = section != nullptr && section->is_object() ? *section : *root;
  const JsonValue* dims = cfg.Find("dot_dimension_numbers");
  if (dims == nullptr || !dims->is_object()) {
    *why = "its backend_config has no dot_dimension_numbers";
    return std::nullopt;
  }
  DotDimensionNumbers dn;
  for (auto [key, field] : {std::pair{"lhs_batch_dimensions", &dn.lhs_batch_dimensions},
                            std::pair{"rhs_batch_dimensions", &dn.rhs_batch_dimensions},
                            std::pair{"lhs_contracting_dimensions", &dn.lhs_contracting_dimensions},
                            std::pair{"rhs_contracting_dimensions", &dn.rhs_contracting_dimensions}}) {
    if (const JsonValue* v = dims->Find(key)) {
      std::optional<std::vector<int64_t>> ints = v->AsIntArray();
      if (!ints) {
        *why = StrCat(key, " is not a list of integers");
        return std::nullopt;
      }
      *field = std::move(*ints);
    }
  }
  // GemmBackendConfig's epilogues, by name or number.
  bool bias = false, aux = false;
  GemmPlan::Activation activation = GemmPlan::Activation::kNone;
  if (const JsonValue* e = cfg.Find("epilogue")) {
    static const char* const kByNumber[] = {"DEFAULT", "BIAS",     "RELU",      "BIAS_RELU",
                                            "GELU",    "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"};
    std::optional<std::string> name = e->AsText();
    if (std::optional<int64_t> number = e->AsInt(); number && *number >= 0 && *number < 8) {
      name = kByNumber[*number];
    }
    static const std::map<std::string, std::tuple<bool, GemmPlan::Activation, bool>> kKnown = {
        {"DEFAULT", {false, GemmPlan::Activation::kNone, false}},
        {"BIAS", {true, GemmPlan::Activation::kNone, false}},
        {"RELU", {false, GemmPlan::Activation::kRelu, false}},
        {"BIAS_RELU", {true, GemmPlan::Activation::kRelu, false}},
        {"GELU", {false, GemmPlan::Activation::kGelu, false}},
        {"GELU_AUX", {false, GemmPlan::Activation::kGelu, true}},
        {"BIAS_GELU", {true, GemmPlan::Activation::kGelu, false}},
        {"BIAS_GELU_AUX", {true, GemmPlan::Activation::kGelu, true}}};
    auto known = name ? kKnown.find(*name) : kKnown.end();
    if (known == kKnown.end()) {
      *why = StrCat("epilogue ", name ? *name : std::string("(unreadable)"), " runs on the host");
      return std::nullopt;
    }
    std::tie(bias, activation, aux) = known->second;
  }
  auto number = [&](const char* key, double fallback) {
    const JsonValue* v = cfg.Find(key);
    return v == nullptr ? fallback : v->AsNumber().value_or(fallback);
  };
  if (number("alpha_imag", 0) != 0) {
    *why = "complex alpha";
    return std::nullopt;
  }
  const Shape& out = instr.shape().IsTuple() && instr.shape().tuple_count() > 0
                         ? instr.shape().tuple_shape(0)
                         : instr.shape();
  const double beta = number("beta", 0);
  const int expected = (beta != 0 ? 3 : 2) + (bias ? 1 : 0);
  if (instr.operand_count() != expected) {
    *why = StrCat(instr.operand_count(), " operands (scales?) where A, B", beta != 0 ? ", C" : "",
                  bias ? ", bias" : "", " are taken");
    return std::nullopt;
  }
  std::optional<GemmPlan> p =
      PlanGemm(instr.operand(0)->shape(), instr.operand(1)->shape(), out, dn);
  if (!p) {
    *why = "cuBLAS here takes f32, f64, f16 and bf16 GEMMs with leading batch dimensions and row-major "
           "operands";
    return std::nullopt;
  }
  if (beta != 0 && (!instr.operand(2)->shape().IsArray() ||
                    instr.operand(2)->shape().dimensions() != out.dimensions() ||
                    instr.operand(2)->shape().element_type() != out.element_type() ||
                    !RowMajorLayout(instr.operand(2)->shape()))) {
    *why = "its C operand is not of the result's shape";
    return std::nullopt;
  }
  p->alpha = number("alpha_real", 1);
  p->beta = beta;
  p->has_c = beta != 0;
  p->tuple_result = instr.shape().IsTuple();
  p->activation = activation;
  p->aux = aux;
  if (bias) {
    p->bias_operand = expected - 1;
    const Shape& bs = instr.operand(p->bias_operand)->shape();
    int64_t m = 1;
    int k = 0;
    if (bs.IsArray() && bs.element_type() == out.element_type() && RowMajorLayout(bs)) {
      m = bs.ElementCount();
      int64_t trailing = 1;
      for (k = 0; k < out.rank() && trailing < m;) trailing *= out.dimension(out.rank() - ++k);
      if (trailing != m) k = 0;
    }
    if (k == 0 || m == 0) {
      *why = "its bias does not span the result's trailing dimensions";
      return std::nullopt;
    }
    p->bias_trailing_dims = k;
  }
  if (aux && (!p->tuple_result || instr.shape().tuple_count() < 2 ||
              !instr.shape().tuple_shape(1).IsArray() ||
              instr.shape().tuple_shape(1).dimensions() != out.dimensions() ||
              !RowMajorLayout(instr.shape().tuple_shape(1)))) {
    *why = "its AUX epilogue has no array of the result's dimensions to write";
    return std::nullopt;
  }
  return p;
}

// The epilogue of GEMM `instr` as an HLO module whose entry root is a loop fusion of the GEMM's
// result D and the bias: D + bias (broadcast along the trailing dimensions), then the
// activation (ReLU; GELU in its tanh form, as cuBLASLt), and with AUX the value before the
// activation as a second output.
std::string EpilogueModuleText(const Instruction& instr, const GemmPlan& p) {
  const Shape& out = instr.shape().IsTuple() ? instr.shape().tuple_shape(0) : instr.shape();
  const std::string t(PrimitiveTypeName(out.element_type()));
  std::string dims;
  for (int d = 0; d < out.rank(); ++d) StrAppend(&dims, d ? "," : "", out.dimension(d));
  const std::string shape = StrCat(t, "[", dims, "]");
  std::string params = StrCat("  d = ", shape, " parameter(0)\n");
  std::string body = params;
  std::string pre = "d";
  if (p.bias_operand >= 0) {
    const Shape& bs = instr.operand(p.bias_operand)->shape();
    std::string trailing, bdims;
    for (int d = out.rank() - p.bias_trailing_dims; d < out.rank(); ++d) {
      StrAppend(&trailing, trailing.empty() ? "" : ",", out.dimension(d));
      StrAppend(&bdims, bdims.empty() ? "" : ",", d);
    }
    std::string bsdims;
    for (int d = 0; d < bs.rank(); ++d) StrAppend(&bsdims, d ? "," : "", bs.dimension(d));
    const std::string bias_param = StrCat("  bias = ", t, "[", bsdims, "] parameter(1)\n");
    params += bias_param;
    body += bias_param;
    StrAppend(&body, "  bias_r = ", t, "[", trailing, "] reshape(bias)\n", "  bias_b = ", shape,
              " broadcast(bias_r), dimensions={", bdims, "}\n", "  pre = ", shape,
              " add(d, bias_b)\n");
    pre = "pre";
  }
  std::string act = pre;
  auto scalar = [&](const std::string& name, const std::string& value) {
    StrAppend(&body, "  ", name, "_s = ", t, "[] constant(", value, ")\n  ", name, " = ", shape,
              " broadcast(", name, "_s), dimensions={}\n");
  };
  if (p.activation == GemmPlan::Activation::kRelu) {
    scalar("zero", "0");
    StrAppend(&body, "  act = ", shape, " maximum(", pre, ", zero)\n");
    act = "act";
  } else if (p.activation == GemmPlan::Activation::kGelu) {
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    scalar("half", "0.5");
    scalar("one", "1");
    scalar("k", "0.7978845608028654");
    scalar("c", "0.044715");
    StrAppend(&body, "  x2 = ", shape, " multiply(", pre, ", ", pre, ")\n", "  x3 = ", shape,
              " multiply(x2, ", pre, ")\n", "  cx3 = ", shape, " multiply(c, x3)\n",
              "  inner = ", shape, " add(", pre, ", cx3)\n", "  kin = ", shape,
              " multiply(k, inner)\n", "  th = ", shape, " tanh(kin)\n", "  onep = ", shape,
              " add(one, th)\n", "  hx = ", shape, " multiply(half, ", pre, ")\n", "  act = ",
              shape, " multiply(hx, onep)\n");
    act = "act";
  }
  std::string root_shape = shape;
  if (p.aux) {
    const Shape& as = instr.shape().tuple_shape(1);
    const std::string aux_shape =
        StrCat(PrimitiveTypeName(as.element_type()), "[", dims, "]");
    StrAppend(&body, "  aux = ", aux_shape, " convert(", pre, ")\n", "  ROOT out = (", shape,
              ", ", aux_shape, ") tuple(", act, ", aux)\n");
    root_shape = StrCat("(", shape, ", ", aux_shape, ")");
  } else {
    StrAppend(&body, "  ROOT out = ", shape, " copy(", act, ")\n");
  }
  return StrCat("HloModule gemm_epilogue\n\nepilogue {\n", body, "}\n\nENTRY e {\n", params,
                "  ROOT f = ", root_shape, " fusion(d", p.bias_operand >= 0 ? ", bias" : "",
                "), kind=kLoop, calls=epilogue\n}\n");
}

// XLA's cuDNN forward convolutions (`__cudnn$convForward`, `__cudnn$convBiasActivationForward`)
// as an HLO module whose entry root is one loop fusion: the convolution with the custom call's
// window, dim_labels and groups (computed in f32, f64 for f64 results), times
// conv_result_scale, plus side_input_scale times the side input, plus the bias along the output
// features, then the activation, converted to the result type once. Empty, with `why`, for
// what it does not take (backward convolutions, other activations).
std::string CudnnConvModuleText(const Instruction& instr, std::string* why) {
  const std::string& target = instr.attrs_or_default().custom_call_target;
  const bool bias_activation = target == "__cudnn$convBiasActivationForward";
  if (target != "__cudnn$convForward" && !bias_activation) {
    if (target.rfind("__cudnn$conv", 0) == 0) *why = "backward convolutions run on the host";
    return "";
  }
  const InstructionAttrs& at = instr.attrs_or_default();
  const Shape& out = instr.shape().IsTuple() && instr.shape().tuple_count() > 0
                         ? instr.shape().tuple_shape(0)
                         : instr.shape();
  const int n = instr.operand_count();
  if (!at.convolution_dimension_numbers || !out.IsArray() || n < 2 ||
      n > (bias_activation ? 4 : 2) || (bias_activation && n < 3)) {
    *why = "its operands or dim_labels are not a forward convolution's";
    return "";
  }
  for (int k = 0; k < n; ++k) {
    if (!instr.operand(k)->shape().IsArray()) {
      *why = "a tuple-shaped operand";
      return "";
    }
  }
  absl::StatusOr<JsonValue> root =
      JsonValue::Parse(instr.backend_config().empty() ? "{}" : instr.backend_config());
  if (!root.ok() || !root->is_object()) {
    *why = "its backend_config does not parse";
    return "";
  }
  const JsonValue* section = root->Find("cudnn_conv_backend_config");
  const JsonValue& cfg = section != nullptr && section->is_object() ? *section : *root;
  auto number = [&](const char* key, double fallback) {
    const JsonValue* v = cfg.Find(key);
    return v == nullptr ? fallback : v->AsNumber().value_or(fallback);
  };
  std::string activation = "kNone";
  if (const JsonValue* v = cfg.Find("activation_mode")) {
    static const char* const kByNumber[] = {"kNone",      "kSigmoid",  "kRelu",     "kRelu6",
                                            "kReluX",     "kTanh",     "kBandPass", "kElu",
                                            "kLeakyRelu", "kGeluExact"};
    if (std::optional<int64_t> i = v->AsInt(); i && *i >= 0 && *i < 10) {
      activation = kByNumber[*i];
    } else if (std::optional<std::string> t = v->AsText()) {
      activation = *t;
    }
  }
  if (activation != "kNone" && activation != "kRelu" && activation != "kRelu6" &&
      activation != "kSigmoid" && activation != "kTanh" && activation != "kLeakyRelu") {
    *why = StrCat("activation ", activation, " runs on the host");
    return "";
  }
  // The window, dim_labels and group counts as the custom call prints them.
  const std::string printed = PrintInstruction(instr);
  auto attribute = [&](const std::string& key) -> std::string {
    const size_t at_key = printed.find(StrCat(", ", key, "="));
    if (at_key == std::string::npos) return "";
    const size_t begin = at_key + 2;
    size_t end = begin + key.size() + 1;
    int depth = 0;
    for (; end < printed.size(); ++end) {
      const char c = printed[end];
      if (c == '{') ++depth;
      if (c == '}') --depth;
      if (depth == 0 && (c == ',' || c == ' ' || c == '\n')) break;
      if (depth < 0) break;
    }
    return printed.substr(begin, end - begin);
  };
  std::string attrs;
  for (const char* key : {"window", "dim_labels", "feature_group_count", "batch_group_count"}) {
    const std::string a = attribute(key);
    if (!a.empty()) StrAppend(&attrs, ", ", a);
  }
  const PrimitiveType ot = out.element_type();
  const PrimitiveType ct = ot == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
  if (!IsFloatingPoint(ot) || IsComplex(ot)) {
    *why = "a non-float convolution";
    return "";
  }
  std::string dims;
  for (int d = 0; d < out.rank(); ++d) StrAppend(&dims, d ? "," : "", out.dimension(d));
  const std::string c = StrCat(PrimitiveTypeName(ct), "[", dims, "]");
  const std::string cs = StrCat(PrimitiveTypeName(ct), "[]");
  std::string params;
  const char* names[] = {"x", "w", "bias", "side"};
  for (int k = 0; k < n; ++k) {
    StrAppend(&params, "  ", names[k], " = ", PrintShape(instr.operand(k)->shape(), false),
              " parameter(", k, ")\n");
  }
  std::string body = params;
  StrAppend(&body, "  conv = ", c, " convolution(x, w)", attrs, "\n");
  std::string v = "conv";
  auto scalar = [&](const std::string& name, double value) {
    char text[64];
    std::snprintf(text, sizeof text, "%.17g", value);
    StrAppend(&body, "  ", name, "_s = ", cs, " constant(", text, ")\n  ", name, " = ", c,
              " broadcast(", name, "_s), dimensions={}\n");
  };
  auto step = [&](const std::string& name, const std::string& expr) {
    StrAppend(&body, "  ", name, " = ", c, " ", expr, "\n");
    v = name;
  };
  const double scale = number("conv_result_scale", 1);
  if (scale != 1) {
    scalar("scale", scale);
    step("scaled", StrCat("multiply(", v, ", scale)"));
  }
  const double side_scale = number("side_input_scale", 0);
  if (n == 4 && side_scale != 0) {
    const std::string before = v;
    StrAppend(&body, "  side_c = ", c, " convert(side)\n");
    scalar("side_scale", side_scale);
    step("side_scaled", "multiply(side_c, side_scale)");
    step("with_side", StrCat("add(", before, ", side_scaled)"));
  }
  if (bias_activation) {
    const int64_t feature = at.convolution_dimension_numbers->output_feature_dimension;
    const Shape bias_shape = Shape::Array(ct, instr.operand(2)->shape().dimensions());
    StrAppend(&body, "  bias_c = ", PrintShape(bias_shape, false), " convert(bias)\n  bias_b = ", c,
              " broadcast(bias_c), dimensions={", feature, "}\n");
    step("biased", StrCat("add(", v, ", bias_b)"));
  }
  if (activation == "kRelu" || activation == "kRelu6") {
    scalar("zero", 0);
    step("relu", StrCat("maximum(", v, ", zero)"));
    if (activation == "kRelu6") {
      scalar("six", 6);
      step("relu6", StrCat("minimum(", v, ", six)"));
    }
  } else if (activation == "kSigmoid") {
    step("sigmoid", StrCat("logistic(", v, ")"));
  } else if (activation == "kTanh") {
    step("tanh", StrCat("tanh(", v, ")"));
  } else if (activation == "kLeakyRelu") {
    scalar("zero", 0);
    scalar("alpha", number("leakyrelu_alpha", 0));
    const std::string x = v;
    step("leaky", StrCat("multiply(", x, ", alpha)"));
    const Shape pred = Shape::Array(PrimitiveType::kPred, out.dimensions());
    StrAppend(&body, "  positive = ", PrintShape(pred, false), " compare(", x,
              ", zero), direction=GT\n");
    step("leaky_relu", StrCat("select(positive, ", x, ", leaky)"));
  }
  const std::string o = PrintShape(out, false);
  StrAppend(&body, "  ROOT out = ", o, " convert(", v, ")\n");
  std::string operands;
  for (int k = 0; k < n; ++k) StrAppend(&operands, k ? ", " : "", names[k]);
  return StrCat("HloModule cudnn_conv\n\nconv_body {\n", body, "}\n\nENTRY e {\n", params,
                "  ROOT f = ", o, " fusion(", operands, "), kind=kLoop, calls=conv_body\n}\n");
}

size_t ByteSize(const Literal& l) { return l.data().size(); }

// A library call's result before the call: an array uninitialised; a tuple's elements (the
// result first, then XLA's workspace) zeros, the workspace staying so.
Literal LibraryCallResult(const Shape& shape) {
  if (!shape.IsTuple()) return Literal::Uninitialized(shape);
  Literal result(shape, /*allocate=*/false);
  std::vector<Literal> elems;
  for (int e = 0; e < shape.tuple_count(); ++e) elems.push_back(Literal(shape.tuple_shape(e)));
  *result.mutable_tuple_elements() = std::move(elems);
  return result;
}

}  // namespace

CudaTolerance CudaToleranceFor(PrimitiveType type, bool dot) {
  switch (type) {
    case PrimitiveType::kF64: return dot ? CudaTolerance{1e-8, 1e-8} : CudaTolerance{1e-9, 1e-9};
    case PrimitiveType::kF32: return dot ? CudaTolerance{1e-4, 1e-4} : CudaTolerance{1e-5, 1e-5};
    case PrimitiveType::kF16: return {1.0 / 1024, 1.0 / 1024};
    case PrimitiveType::kBF16: return {1.0 / 128, 1.0 / 128};
    default:
      if (IsSmallFloat(type)) return {0.25, 0.25};
      return {0, 0};
  }
}

absl::Status CudaAvailable() { return cuda::DriverAvailable(); }

std::string CudaDeviceDescription() {
  absl::Status st = cuda::DriverAvailable();
  if (!st.ok()) return std::string(st.message());
  absl::StatusOr<cuda::DeviceInfo> info = cuda::GetDeviceInfo(0);
  if (!info.ok()) return std::string(info.status().message());
  char text[256];
  std::snprintf(text, sizeof text, "%s (%s, %d SMs, %.0f GiB, driver %d.%d)", info->name.c_str(),
                info->arch().c_str(), info->multiprocessors,
                static_cast<double>(info->total_memory) / (1 << 30), info->driver_version / 1000,
                info->driver_version % 1000 / 10);
  return text;
}

absl::StatusOr<std::string> CudaKernelPtx(const Module& module, const std::string& arch) {
  codegen::PtxOptions po;
  po.gpu_arch = arch.empty() ? "sm_80" : arch;
  absl::StatusOr<codegen::PtxProgram> p =
      codegen::CompileToPtx(KernelCandidates(module, /*convolutions=*/true), po);
  if (!p.ok()) return p.status();
  std::string out = StrCat("// ", p->kernels.size(), " kernel(s) for ", p->arch, "; ",
                           p->refused.size(), " instruction(s) left to the interpreter\n");
  for (const codegen::RefusedInstruction& r : p->refused) {
    StrAppend(&out, "// not compiled: ", r.reason, "\n");
  }
  StrAppend(&out, p->ptx);
  return out;
}

struct CudaExecutable::Impl {
  struct Kernel {
    codegen::GpuKernelInfo info;
    int program = 0;  // index into ptx / gpu_modules
  };
  std::unique_ptr<Module> module;
  std::vector<std::string> ptx;
  int programs = 0;
  // Emulated programs (CudaCompileOptions::emulate), one per program.
  std::vector<std::shared_ptr<const codegen::GpuEmulation>> emulations;
  std::unordered_map<const Instruction*, Kernel> kernels;
  std::unordered_map<const Instruction*, GemmPlan> gemms;
  // The modules of kernels that stand for library calls: GEMM epilogues (GemmPlan::epilogue
  // points into them) and cuDNN convolutions (`convs`).
  std::vector<std::unique_ptr<Module>> library_modules;
  // XLA's cuDNN convolution custom calls and the fusion that computes each.
  std::unordered_map<const Instruction*, const Instruction*> convs;
  CudaCompileStats stats;
  std::vector<std::pair<std::string, std::string>> not_compiled;
  bool allow_tf32 = false;
  // Device state; absent when compiled with compile_only.
  std::unique_ptr<cuda::Context> context;
  std::vector<std::unique_ptr<cuda::Module>> gpu_modules;
  std::unique_ptr<cuda::Blas> blas;
  absl::Status blas_status = absl::OkStatus();
  mutable std::mutex mu;  // one instruction on the GPU at a time
  mutable CudaRunStats run_stats;
  // The arena runtime's plan; null when runs go through the driver (stats.arena_refused).
  std::unique_ptr<cpu::ArenaProgram> arena;
  // Reused by every launch (under `mu`): the device copy of the kernel's buffer table, grown as
  // needed; and device copies of the module's own array constants that kernels read, made once.
  mutable cuda::DeviceBuffer table_buffer;
  mutable std::unordered_map<const Literal*, cuda::DeviceBuffer> constant_buffers;

  // Launches kernel `k` over the device buffers in `table` (operands, constants, outputs), timed;
  // call with `mu` held.
  absl::Status Launch(const Kernel& k, const std::vector<cuda::DevicePtr>& table) const;
  // GEMM `p` on device buffers a, b into c (which holds C first when p.has_c), timed; call with
  // `mu` held.
  absl::Status Gemm(const GemmPlan& p, cuda::DevicePtr a, cuda::DevicePtr b,
                    cuda::DevicePtr c) const;
  cpu::ArenaCode ArenaCode(std::function<absl::StatusOr<Literal>(const Instruction&)> elided,
                           ConstantCache* constant_cache) const;
};

absl::Status CudaExecutable::Impl::Launch(const Kernel& k,
                                          const std::vector<cuda::DevicePtr>& table) const {
  cuda::Context* ctx = context.get();
  const size_t table_bytes = table.size() * sizeof(cuda::DevicePtr);
  if (table_buffer.bytes() < table_bytes) {
    // The previous launch has finished (TimeMs waits), so its table can go.
    table_buffer.Reset();
    absl::StatusOr<cuda::DeviceBuffer> grown =
        cuda::DeviceBuffer::Make(ctx, std::max<size_t>(table_bytes, 64 * sizeof(cuda::DevicePtr)));
    if (!grown.ok()) return grown.status();
    table_buffer = std::move(*grown);
  }
  if (absl::Status st = ctx->CopyToDevice(table_buffer.ptr(), table.data(), table_bytes);
      !st.ok()) {
    return st;
  }
  int64_t count = k.info.iteration_count;
  if (count <= 0) return absl::OkStatus();
  cuda::DevicePtr table_ptr = table_buffer.ptr();
  void* params[] = {&table_ptr, &count};
  // One step per thread (the most loads in flight); the kernel's grid-stride loop covers what a
  // grid of 2^31 - 1 blocks does not.
  const int block = k.info.block_size;
  const int64_t per_block =
      std::max<int64_t>(1, int64_t{block} * std::max(1, k.info.elements_per_thread) /
                               std::max(1, k.info.threads_per_element));
  const int64_t max_grid = (int64_t{1} << 31) - 1;
  const int grid =
      static_cast<int>(std::min<int64_t>((count + per_block - 1) / per_block, max_grid));
  cuda::Module* gpu_module = gpu_modules[k.program].get();
  absl::StatusOr<float> ms =
      ctx->TimeMs([&] { return gpu_module->Launch(k.info.kernel_name, grid, block, params); });
  if (!ms.ok()) return ms.status();
  run_stats.kernel_ms += *ms;
  ++run_stats.kernel_launches;
  return absl::OkStatus();
}

absl::Status CudaExecutable::Impl::Gemm(const GemmPlan& p, cuda::DevicePtr a, cuda::DevicePtr b,
                                        cuda::DevicePtr c) const {
  // Row-major C[M,N] = A[M,K] B[K,N] is column-major C^T = B^T A^T: cuBLAS's m = N, n = M.
  absl::StatusOr<float> ms = context->TimeMs([&] {
    return blas->Gemm(p.type, p.rhs_nk, p.lhs_km, p.n, p.m, p.k, p.alpha, b, p.rhs_nk ? p.k : p.n,
                      p.k * p.n, a, p.lhs_km ? p.m : p.k, p.m * p.k, p.beta, c, p.n, p.m * p.n,
                      p.batch);
  });
  if (!ms.ok()) return ms.status();
  run_stats.gemm_ms += *ms;
  ++run_stats.gemm_calls;
  return absl::OkStatus();
}

cpu::ArenaCode CudaExecutable::Impl::ArenaCode(
    std::function<absl::StatusOr<Literal>(const Instruction&)> elided,
    ConstantCache* constant_cache) const {
  cpu::ArenaCode code;
  cuda::Context* ctx = context.get();
  code.allocate = [ctx](size_t bytes) -> void* {
    absl::StatusOr<cuda::DevicePtr> p = ctx->AllocManaged(bytes);
    return p.ok() ? reinterpret_cast<void*>(*p) : nullptr;
  };
  code.release = [ctx](void* p, size_t) { ctx->Free(reinterpret_cast<cuda::DevicePtr>(p)); };
  code.prepared = [ctx](void* p, size_t bytes) {
    return ctx->PrefetchToDevice(reinterpret_cast<cuda::DevicePtr>(p), bytes);
  };
  auto own_cache = std::make_shared<ConstantCache>();
  if (constant_cache == nullptr) constant_cache = own_cache.get();
  code.kernel = [this, ctx, elided, constant_cache, own_cache](
                    const Instruction& instr, const std::vector<void*>& ops,
                    const std::vector<void*>& outs) -> std::optional<absl::Status> {
    for (void* op : ops) {
      if (op == nullptr) return std::nullopt;  // a tuple-shaped operand
    }
    auto dev = [](void* p) { return static_cast<cuda::DevicePtr>(reinterpret_cast<uintptr_t>(p)); };
    if (auto g = gemms.find(&instr); g != gemms.end() && blas != nullptr) {
      const GemmPlan& p = g->second;
      const size_t results = p.aux ? 2 : 1;
      if (ops.size() != p.operand_count() || outs.size() < results) return std::nullopt;
      std::lock_guard<std::mutex> lock(mu);
      if (p.tuple_result) {
        // The workspace elements come back as zeros.
        for (size_t e = results; e < outs.size(); ++e) {
          const int64_t bytes = ShapeByteSize(instr.shape().tuple_shape(static_cast<int>(e)));
          if (absl::Status st = ctx->Memset(dev(outs[e]), 0, static_cast<size_t>(bytes));
              !st.ok()) {
            return st;
          }
        }
      }
      // With an epilogue the GEMM writes a temporary that the epilogue's kernel reads.
      cuda::DeviceBuffer temp;
      cuda::DevicePtr d = dev(outs[0]);
      if (p.has_epilogue()) {
        const Shape& ds =
            instr.shape().IsTuple() ? instr.shape().tuple_shape(0) : instr.shape();
        absl::StatusOr<cuda::DeviceBuffer> t =
            cuda::DeviceBuffer::Make(ctx, static_cast<size_t>(ShapeByteSize(ds)));
        if (!t.ok()) return t.status();
        temp = std::move(*t);
        d = temp.ptr();
      }
      if (p.has_c && d != dev(ops[2])) {
        const int64_t bytes = ShapeByteSize(instr.operand(2)->shape());
        if (absl::Status st = ctx->CopyDeviceToDevice(d, dev(ops[2]), static_cast<size_t>(bytes));
            !st.ok()) {
          return st;
        }
      }
      if (absl::Status st = Gemm(p, dev(ops[0]), dev(ops[1]), d); !st.ok()) return st;
      if (!p.has_epilogue()) return absl::OkStatus();
      std::vector<cuda::DevicePtr> table{d};
      if (p.bias_operand >= 0) table.push_back(dev(ops[p.bias_operand]));
      for (size_t e = 0; e < results; ++e) table.push_back(dev(outs[e]));
      return Launch(kernels.at(p.epilogue), table);
    }
    if (auto c = convs.find(&instr); c != convs.end()) {
      // A cuDNN convolution: its kernel writes the result; the workspace comes back as zeros.
      std::lock_guard<std::mutex> lock(mu);
      for (size_t e = 1; e < outs.size(); ++e) {
        const int64_t bytes = ShapeByteSize(instr.shape().tuple_shape(static_cast<int>(e)));
        if (absl::Status st = ctx->Memset(dev(outs[e]), 0, static_cast<size_t>(bytes)); !st.ok()) {
          return st;
        }
      }
      std::vector<cuda::DevicePtr> table;
      for (void* op : ops) table.push_back(dev(op));
      table.push_back(dev(outs[0]));
      return Launch(kernels.at(c->second), table);
    }
    auto it = kernels.find(&instr);
    if (it == kernels.end() || it->second.program >= static_cast<int>(gpu_modules.size()) ||
        static_cast<int>(outs.size()) != it->second.info.num_outputs) {
      return std::nullopt;
    }
    const Kernel& k = it->second;
    std::optional<absl::StatusOr<std::vector<const Literal*>>> constants =
        KernelConstantLiterals(k.info.constants, elided, constant_cache);
    if (!constants.has_value()) return std::nullopt;
    if (!constants->ok()) return constants->status();
    std::lock_guard<std::mutex> lock(mu);
    std::vector<cuda::DevicePtr> table;
    for (void* op : ops) table.push_back(dev(op));
    // The array constants inside a fusion are not the arena's values: the module's own are
    // copied to the device once, values made for elided ones for each launch.
    std::vector<cuda::DeviceBuffer> elided_buffers;
    for (size_t q = 0; q < (*constants)->size(); ++q) {
      const Literal* c = (**constants)[q];
      const bool own = c == k.info.constants[q]->literal();
      if (auto cached = constant_buffers.find(c); own && cached != constant_buffers.end()) {
        table.push_back(cached->second.ptr());
        continue;
      }
      absl::StatusOr<cuda::DeviceBuffer> b = cuda::DeviceBuffer::Make(ctx, ByteSize(*c));
      if (!b.ok()) return b.status();
      if (absl::Status st = ctx->CopyToDevice(b->ptr(), c->data().data(), ByteSize(*c)); !st.ok()) {
        return st;
      }
      table.push_back(b->ptr());
      if (own) {
        constant_buffers.emplace(c, std::move(*b));
      } else {
        elided_buffers.push_back(std::move(*b));
      }
    }
    for (void* o : outs) table.push_back(dev(o));
    return Launch(k, table);
  };
  return code;
}

CudaExecutable::CudaExecutable() : impl_(std::make_unique<Impl>()) {}
CudaExecutable::~CudaExecutable() {
  if (impl_ == nullptr) return;
  impl_->table_buffer.Reset();
  impl_->constant_buffers.clear();
  impl_->blas.reset();
  impl_->gpu_modules.clear();
  impl_->context.reset();
}
const Module& CudaExecutable::module() const { return *impl_->module; }
const CudaCompileStats& CudaExecutable::stats() const { return impl_->stats; }
const std::vector<std::string>& CudaExecutable::ptx_programs() const { return impl_->ptx; }
const std::vector<std::pair<std::string, std::string>>& CudaExecutable::not_compiled() const {
  return impl_->not_compiled;
}
bool CudaExecutable::RunsInArena() const { return impl_->arena != nullptr; }

CudaRunStats CudaExecutable::run_stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->run_stats;
}

absl::StatusOr<std::unique_ptr<CudaExecutable>> CudaExecutable::Compile(
    const Module& module, const CudaCompileOptions& options) {
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<CudaExecutable> exe(new CudaExecutable());
  Impl& impl = *exe->impl_;
  impl.allow_tf32 = options.allow_tf32;
  std::string arch = options.gpu_arch;
  if (options.emulate) {
    impl.context = cuda::Context::CreateEmulated();
  } else if (!options.compile_only) {
    absl::StatusOr<std::unique_ptr<cuda::Context>> ctx = cuda::Context::Create(options.device_ordinal);
    if (!ctx.ok()) return ctx.status();
    impl.context = std::move(*ctx);
    if (arch.empty()) arch = impl.context->info().arch();
  }
  if (arch.empty()) arch = "sm_80";
  absl::StatusOr<std::unique_ptr<Module>> prepared = PrepareModuleForKernels(
      module, "gpu", options.run_hlo_passes, options.pass_options, options.dump_options,
      options.cancel, &impl.stats.pass_seconds, &impl.stats.dump_files);
  if (!prepared.ok()) return prepared.status();
  impl.module = std::move(*prepared);
  codegen::PtxOptions po;
  po.gpu_arch = arch;
  po.opt_level = options.opt_level;
  po.cancel = options.cancel;
  po.emulate = options.emulate;
  {
    ModuleDumper dumper(options.dump_options, *impl.module);
    if (dumper.enabled()) {
      po.dump_dir = options.dump_options.dump_to;
      po.dump_prefix = dumper.file_prefix();
    }
  }
  // cuBLAS: f32, f64, f16 and bf16 dots and XLA's cuBLAS custom calls; the rest of them on the host.
  for (const auto& c : impl.module->computations()) {
    for (const Instruction* h : c->instructions()) {
      std::string why;
      std::optional<GemmPlan> plan =
          h->opcode() == Opcode::kDot ? PlanDot(*h) : PlanCublasCall(*h, &why);
      if (h->opcode() == Opcode::kCustomCall) {
        std::string conv_why;
        const std::string text = CudnnConvModuleText(*h, &conv_why);
        if (!text.empty()) {
          absl::StatusOr<std::unique_ptr<Module>> cm = ParseModule(text);
          if (!cm.ok()) {
            return absl::InternalError(StrCat("the convolution kernel of %", h->name(),
                                              " does not parse: ", cm.status().message()));
          }
          impl.convs.emplace(h, (*cm)->entry()->root());
          impl.library_modules.push_back(*std::move(cm));
          continue;
        }
        if (!conv_why.empty()) why = conv_why;
      }
      if (plan) {
        if (plan->has_epilogue()) {
          // The epilogue's kernel is compiled with the module's (see below).
          absl::StatusOr<std::unique_ptr<Module>> em =
              ParseModule(EpilogueModuleText(*h, *plan));
          if (!em.ok()) {
            return absl::InternalError(StrCat("the epilogue of %", h->name(),
                                              " does not parse: ", em.status().message()));
          }
          plan->epilogue = (*em)->entry()->root();
          impl.library_modules.push_back(*std::move(em));
        }
        impl.gemms.emplace(h, *plan);
        ++impl.stats.library_calls;
        continue;
      }
      // Convolutions are kernels (the code generator's, counted with its refusals).
      if (h->opcode() == Opcode::kDot || h->opcode() == Opcode::kCustomCall) {
        ++impl.stats.interpreted;
        ++impl.stats.interpreted_by_opcode[std::string(OpcodeName(h->opcode()))];
        impl.not_compiled.emplace_back(
            h->name(), h->opcode() == Opcode::kDot
                           ? "cuBLAS takes f32, f64, f16 and bf16 dots with leading batch "
                             "dimensions and row-major operands"
                           : StrCat("custom call ", h->attrs_or_default().custom_call_target,
                                    " runs on the host",
                                    why.empty() ? std::string() : StrCat(": ", why)));
      }
    }
  }
  auto cg_start = std::chrono::steady_clock::now();
  // Fusions the generator refuses are compiled instruction by instruction from their fused
  // computation (the driver then walks it), as on the cpu platform: a second PTX program.
  std::vector<const Instruction*> candidates =
      KernelCandidates(*impl.module, /*convolutions=*/true);
  for (const auto& [h, plan] : impl.gemms) {
    if (plan.epilogue != nullptr) candidates.push_back(plan.epilogue);
  }
  for (const auto& [h, fusion] : impl.convs) candidates.push_back(fusion);
  std::vector<codegen::RefusedInstruction> refused;
  for (int round = 0; round < 2 && !candidates.empty(); ++round) {
    if (round == 1) po.dump_prefix += ".unfused";
    absl::StatusOr<codegen::PtxProgram> program = codegen::CompileToPtx(candidates, po);
    if (!program.ok()) return program.status();
    candidates.clear();
    for (codegen::RefusedInstruction& r : program->refused) {
      if (round == 0 && r.instruction->opcode() == Opcode::kFusion &&
          !r.instruction->called_computations().empty()) {
        for (const Instruction* h : r.instruction->called_computations()[0]->instructions()) {
          if (IsKernelCandidate(*h, /*convolutions=*/true)) candidates.push_back(h);
        }
      }
      refused.push_back(std::move(r));
    }
    impl.stats.arch = program->arch;
    impl.stats.dump_files.insert(impl.stats.dump_files.end(), program->dump_files.begin(),
                                 program->dump_files.end());
    if (program->kernels.empty()) continue;
    const int index = impl.programs++;
    if (options.emulate) {
      impl.emulations.push_back(program->emulation);
    } else {
      impl.ptx.push_back(program->ptx);
    }
    for (codegen::GpuKernelInfo& k : program->kernels) {
      if (k.tiled_transpose) {
        ++impl.stats.tiled_transposes;
      } else if (k.threads_per_element > 1) {
        ++impl.stats.cooperative_kernels;
      }
      impl.kernels.emplace(k.instruction, Impl::Kernel{std::move(k), index});
    }
  }
  impl.stats.codegen_seconds = Since(cg_start);
  // A GEMM whose epilogue kernel was refused runs on the host.
  for (auto it = impl.gemms.begin(); it != impl.gemms.end();) {
    if (it->second.epilogue == nullptr || impl.kernels.count(it->second.epilogue) > 0) {
      ++it;
      continue;
    }
    --impl.stats.library_calls;
    ++impl.stats.interpreted;
    ++impl.stats.interpreted_by_opcode["custom-call"];
    impl.not_compiled.emplace_back(it->first->name(), "its epilogue's kernel was not compiled");
    it = impl.gemms.erase(it);
  }
  for (auto it = impl.convs.begin(); it != impl.convs.end();) {
    if (impl.kernels.count(it->second) > 0) {
      ++it;
      continue;
    }
    ++impl.stats.interpreted;
    ++impl.stats.interpreted_by_opcode["custom-call"];
    impl.not_compiled.emplace_back(it->first->name(), "its convolution kernel was not compiled");
    it = impl.convs.erase(it);
  }
  for (const codegen::RefusedInstruction& r : refused) {
    if (r.instruction->opcode() == Opcode::kFusion) continue;  // counted through its body
    ++impl.stats.interpreted;
    ++impl.stats.interpreted_by_opcode[std::string(OpcodeName(r.instruction->opcode()))];
    impl.not_compiled.emplace_back(r.instruction->name(), r.reason);
  }
  impl.stats.kernels = static_cast<int64_t>(impl.kernels.size());
  if (impl.context != nullptr) {
    auto load_start = std::chrono::steady_clock::now();
    for (const std::string& ptx : impl.ptx) {
      absl::StatusOr<std::unique_ptr<cuda::Module>> m = impl.context->LoadPtx(ptx);
      if (!m.ok()) return m.status();
      impl.gpu_modules.push_back(std::move(*m));
    }
    for (int p = 0; p < static_cast<int>(impl.emulations.size()); ++p) {
      std::map<std::string, codegen::GpuKernelInfo> infos;
      for (const auto& [h, k] : impl.kernels) {
        if (k.program == p) infos.emplace(k.info.kernel_name, k.info);
      }
      impl.gpu_modules.push_back(impl.context->LoadEmulated(
          [emulation = impl.emulations[p], infos = std::move(infos)](
              const std::string& name, int grid, int block, void** params) -> absl::Status {
            auto it = infos.find(name);
            if (it == infos.end()) return absl::NotFoundError(StrCat("no kernel ", name));
            if (block != it->second.block_size) {
              return absl::InvalidArgumentError(StrCat(name, " takes blocks of ",
                                                       it->second.block_size, " threads"));
            }
            void* table = reinterpret_cast<void*>(*static_cast<cuda::DevicePtr*>(params[0]));
            const int64_t count = *static_cast<int64_t*>(params[1]);
            return emulation->Launch(it->second, table, count, grid);
          }));
    }
    if (impl.context->emulated() && !impl.gemms.empty()) {
      impl.blas = cuda::Blas::CreateEmulated(impl.context.get());
    } else if (!impl.gemms.empty()) {
      absl::StatusOr<std::unique_ptr<cuda::Blas>> blas =
          cuda::Blas::Create(impl.context.get(), options.allow_tf32);
      if (blas.ok()) {
        impl.blas = std::move(*blas);
      } else {
        // Without cuBLAS the dots run on the interpreter; the summary says why.
        impl.blas_status = blas.status();
        for (const auto& [h, plan] : impl.gemms) {
          ++impl.stats.interpreted;
          ++impl.stats.interpreted_by_opcode["dot"];
          impl.not_compiled.emplace_back(h->name(), std::string(blas.status().message()));
        }
        impl.stats.library_calls -= static_cast<int64_t>(impl.gemms.size());
        impl.gemms.clear();
      }
    }
    impl.stats.load_seconds = Since(load_start);
  }
  if (!options.run_hlo_passes) {
    impl.stats.arena_refused = "the module was not compiled by the gpu pipeline (its copies may "
                               "not make buffer sharing safe)";
  } else if (!options.arena) {
    impl.stats.arena_refused = "switched off";
  } else if (impl.context == nullptr) {
    impl.stats.arena_refused = "compiled without a device";
  } else {
    cpu::ArenaPlanOptions ao;
    ao.inputs_in_block = true;
    absl::StatusOr<std::unique_ptr<cpu::ArenaProgram>> arena =
        cpu::ArenaProgram::Plan(*impl.module, ao);
    if (arena.ok()) {
      impl.arena = *std::move(arena);
      impl.stats.arena_bytes = impl.arena->stats().total_bytes();
    } else {
      impl.stats.arena_refused = std::string(arena.status().message());
    }
  }
  impl.stats.total_seconds = Since(start);
  return exe;
}

std::string CudaExecutable::Summary() const {
  const CudaCompileStats& s = impl_->stats;
  std::string by;
  std::vector<std::pair<int64_t, std::string>> sorted;
  for (const auto& [op, n] : s.interpreted_by_opcode) sorted.emplace_back(-n, op);
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [n, op] : sorted) StrAppend(&by, by.empty() ? "" : ", ", op, " ", -n);
  char secs[200];
  std::snprintf(secs, sizeof secs,
                "compiled for %s in %.2f s (passes %.2f s, LLVM %.2f s, driver load %.2f s)",
                s.arch.c_str(), s.total_seconds, s.pass_seconds, s.codegen_seconds,
                s.load_seconds);
  const std::string runtime =
      s.arena_refused.empty()
          ? StrCat("runs in a ", HumanReadableNumBytes(s.arena_bytes), " arena of managed memory")
          : StrCat("runs on the driver (", s.arena_refused, ")");
  return StrCat(s.kernels, " kernel", s.kernels == 1 ? "" : "s",
                s.cooperative_kernels + s.tiled_transposes > 0
                    ? StrCat(" (",
                             s.cooperative_kernels > 0
                                 ? StrCat(s.cooperative_kernels, " reducing by warps or blocks")
                                 : std::string(),
                             s.cooperative_kernels > 0 && s.tiled_transposes > 0 ? ", " : "",
                             s.tiled_transposes > 0
                                 ? StrCat(s.tiled_transposes, " tiled transpose",
                                          s.tiled_transposes == 1 ? "" : "s")
                                 : std::string(),
                             ")")
                    : std::string(),
                "; ", s.library_calls,
                " cuBLAS call", s.library_calls == 1 ? "" : "s", "; ", s.interpreted,
                " instruction", s.interpreted == 1 ? "" : "s", " on the interpreter",
                by.empty() ? std::string() : StrCat(" (", by, ")"), "; ", runtime, "; ", secs);
}

std::function<std::optional<absl::StatusOr<Literal>>(const Instruction&,
                                                     const std::vector<const Literal*>&)>
CudaExecutable::Hook(std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant,
                     ConstantCache* constant_cache) const {
  Impl* impl = impl_.get();
  std::shared_ptr<ConstantCache> own_cache;
  if (constant_cache == nullptr) {
    own_cache = std::make_shared<ConstantCache>();
    constant_cache = own_cache.get();
  }
  using Result = std::optional<absl::StatusOr<Literal>>;
  return [impl, elided_constant, constant_cache, own_cache](
             const Instruction& instr, const std::vector<const Literal*>& ops) -> Result {
    if (impl->context == nullptr) return std::nullopt;  // compiled without a device
    auto fail = [](absl::Status st) { return Result(absl::StatusOr<Literal>(std::move(st))); };
    cuda::Context* ctx = impl->context.get();
    auto upload = [&](const Literal& l) -> absl::StatusOr<cuda::DeviceBuffer> {
      absl::StatusOr<cuda::DeviceBuffer> b = cuda::DeviceBuffer::Make(ctx, ByteSize(l));
      if (!b.ok()) return b.status();
      if (absl::Status st = ctx->CopyToDevice(b->ptr(), l.data().data(), ByteSize(l)); !st.ok()) {
        return st;
      }
      return b;
    };
    // cuBLAS dots and XLA's cuBLAS custom calls.
    if (auto g = impl->gemms.find(&instr); g != impl->gemms.end() && impl->blas != nullptr) {
      const GemmPlan& p = g->second;
      if (ops.size() != p.operand_count()) return std::nullopt;
      for (const Literal* op : ops) {
        if (!op->shape().IsArray()) return std::nullopt;
      }
      std::lock_guard<std::mutex> lock(impl->mu);
      auto t0 = std::chrono::steady_clock::now();
      absl::StatusOr<cuda::DeviceBuffer> a = upload(*ops[0]);
      if (!a.ok()) return fail(a.status());
      absl::StatusOr<cuda::DeviceBuffer> b = upload(*ops[1]);
      if (!b.ok()) return fail(b.status());
      Literal result = LibraryCallResult(instr.shape());
      Literal& d = p.tuple_result ? (*result.mutable_tuple_elements())[0] : result;
      absl::StatusOr<cuda::DeviceBuffer> c =
          p.has_c ? upload(*ops[2]) : cuda::DeviceBuffer::Make(ctx, ByteSize(d));
      if (!c.ok()) return fail(c.status());
      impl->run_stats.copy_seconds += Since(t0);
      if (absl::Status st = impl->Gemm(p, a->ptr(), b->ptr(), c->ptr()); !st.ok()) {
        return fail(st);
      }
      // The epilogue's kernel reads the GEMM's result (and the bias) and writes D (and AUX).
      std::vector<std::pair<Literal*, cuda::DeviceBuffer>> results;
      if (p.has_epilogue()) {
        std::vector<cuda::DevicePtr> table{c->ptr()};
        absl::StatusOr<cuda::DeviceBuffer> bias =
            p.bias_operand >= 0 ? upload(*ops[p.bias_operand]) : cuda::DeviceBuffer();
        if (!bias.ok()) return fail(bias.status());
        if (p.bias_operand >= 0) table.push_back(bias->ptr());
        for (int e = 0; e < (p.aux ? 2 : 1); ++e) {
          Literal* out = p.tuple_result ? &(*result.mutable_tuple_elements())[e] : &result;
          absl::StatusOr<cuda::DeviceBuffer> o = cuda::DeviceBuffer::Make(ctx, ByteSize(*out));
          if (!o.ok()) return fail(o.status());
          table.push_back(o->ptr());
          results.emplace_back(out, std::move(*o));
        }
        if (absl::Status st = impl->Launch(impl->kernels.at(p.epilogue), table); !st.ok()) {
          return fail(st);
        }
      }
      auto t1 = std::chrono::steady_clock::now();
      if (results.empty()) {
        if (absl::Status st = ctx->CopyToHost(d.mutable_data()->data(), c->ptr(), ByteSize(d));
            !st.ok()) {
          return fail(st);
        }
      }
      for (auto& [out, buffer] : results) {
        if (absl::Status st =
                ctx->CopyToHost(out->mutable_data()->data(), buffer.ptr(), ByteSize(*out));
            !st.ok()) {
          return fail(st);
        }
      }
      impl->run_stats.copy_seconds += Since(t1);
      return Result(absl::StatusOr<Literal>(std::move(result)));
    }
    if (auto conv = impl->convs.find(&instr); conv != impl->convs.end()) {
      for (const Literal* op : ops) {
        if (!op->shape().IsArray()) return std::nullopt;
      }
      Literal result = LibraryCallResult(instr.shape());
      Literal& out = instr.shape().IsTuple() ? (*result.mutable_tuple_elements())[0] : result;
      std::lock_guard<std::mutex> lock(impl->mu);
      std::vector<cuda::DeviceBuffer> buffers;
      std::vector<cuda::DevicePtr> table;
      for (const Literal* op : ops) {
        absl::StatusOr<cuda::DeviceBuffer> b = upload(*op);
        if (!b.ok()) return fail(b.status());
        table.push_back(b->ptr());
        buffers.push_back(std::move(*b));
      }
      absl::StatusOr<cuda::DeviceBuffer> o = cuda::DeviceBuffer::Make(ctx, ByteSize(out));
      if (!o.ok()) return fail(o.status());
      table.push_back(o->ptr());
      if (absl::Status st = impl->Launch(impl->kernels.at(conv->second), table); !st.ok()) {
        return fail(st);
      }
      if (absl::Status st = ctx->CopyToHost(out.mutable_data()->data(), o->ptr(), ByteSize(out));
          !st.ok()) {
        return fail(st);
      }
      return Result(absl::StatusOr<Literal>(std::move(result)));
    }
    auto it = impl->kernels.find(&instr);
    if (it == impl->kernels.end() ||
        it->second.program >= static_cast<int>(impl->gpu_modules.size())) {
      return std::nullopt;
    }
    const codegen::GpuKernelInfo& k = it->second.info;
    std::vector<const Literal*> inputs;
    for (const Literal* op : ops) {
      if (!op->shape().IsArray()) return std::nullopt;
      inputs.push_back(op);
    }
    std::optional<absl::StatusOr<std::vector<const Literal*>>> constants =
        KernelConstantLiterals(k.constants, elided_constant, constant_cache);
    if (!constants.has_value()) return std::nullopt;
    if (!constants->ok()) return fail(constants->status());
    inputs.insert(inputs.end(), (*constants)->begin(), (*constants)->end());
    Literal result;
    std::vector<Literal*> outs;
    MakeKernelResult(instr.shape(), &result, &outs);
    if (static_cast<int>(outs.size()) != k.num_outputs) return std::nullopt;
    std::lock_guard<std::mutex> lock(impl->mu);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<cuda::DeviceBuffer> buffers;
    std::vector<cuda::DevicePtr> table;
    for (const Literal* in : inputs) {
      absl::StatusOr<cuda::DeviceBuffer> b = upload(*in);
      if (!b.ok()) return fail(b.status());
      table.push_back(b->ptr());
      buffers.push_back(std::move(*b));
    }
    const size_t first_out = buffers.size();
    for (Literal* o : outs) {
      absl::StatusOr<cuda::DeviceBuffer> b = cuda::DeviceBuffer::Make(ctx, ByteSize(*o));
      if (!b.ok()) return fail(b.status());
      table.push_back(b->ptr());
      buffers.push_back(std::move(*b));
    }
    impl->run_stats.copy_seconds += Since(t0);
    if (absl::Status st = impl->Launch(it->second, table); !st.ok()) return fail(st);
    auto t1 = std::chrono::steady_clock::now();
    for (size_t o = 0; o < outs.size(); ++o) {
      if (absl::Status st = ctx->CopyToHost(outs[o]->mutable_data()->data(),
                                            buffers[first_out + o].ptr(), ByteSize(*outs[o]));
          !st.ok()) {
        return fail(st);
      }
    }
    impl->run_stats.copy_seconds += Since(t1);
    return Result(absl::StatusOr<Literal>(std::move(result)));
  };
}

absl::StatusOr<Literal> CudaExecutable::Run(const std::vector<Literal>& arguments,
                                            EvaluatorOptions options) const {
  options.compiled = Hook(options.elided_constant, options.constant_cache);
  if (impl_->arena != nullptr) {
    const cpu::ArenaCode code = impl_->ArenaCode(options.elided_constant, options.constant_cache);
    return impl_->arena->Run(arguments, options, code);
  }
  return EvaluateModule(*impl_->module, arguments, options);
}

}  // namespace hlowb
