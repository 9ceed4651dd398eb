#include "plugins/cublas/cublas_plugin.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include "core/ir/float_types.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

struct Epilogue {
  bool bias = false;
  Activation activation = Activation::kNone;
  bool aux = false;  // a second output with the pre-activation value
};

absl::StatusOr<Epilogue> ParseEpilogue(const JsonValue* v) {
  Epilogue e;
  if (v == nullptr) return e;
  std::string name;
  if (std::optional<int64_t> n = v->AsInt()) {
    // GemmBackendConfig.Epilogue numbering.
    static const char* const kByNumber[] = {"DEFAULT", "BIAS",     "RELU",      "BIAS_RELU",
                                            "GELU",    "GELU_AUX", "BIAS_GELU", "BIAS_GELU_AUX"};
    if (*n < 0 || *n >= 8) return absl::InvalidArgumentError(StrCat("unknown epilogue ", *n));
    name = kByNumber[*n];
  } else if (std::optional<std::string> t = v->AsText()) {
    name = *t;
  } else {
    return absl::InvalidArgumentError("epilogue is neither a name nor a number");
  }
  std::string rest = name;
  auto take = [&rest](const std::string& part) {
    size_t p = rest.find(part);
    if (p == std::string::npos) return false;
    rest.erase(p, part.size());
    return true;
  };
  e.aux = take("_AUX");
  e.bias = take("BIAS");
  if (take("RELU")) {
    e.activation = Activation::kRelu;
  } else if (take("GELU")) {
    e.activation = Activation::kGeluTanh;
  } else if (take("SILU") || take("SWISH")) {
    e.activation = Activation::kSilu;
  }
  take("DEFAULT");
  for (char c : rest) {
    if (c != '_') return absl::UnimplementedError(StrCat("epilogue ", name));
  }
  if (e.aux && e.activation == Activation::kNone) {
    return absl::UnimplementedError(StrCat("epilogue ", name));
  }
  return e;
}

absl::StatusOr<DotDimensionNumbers> ParseDotDims(const JsonValue& cfg) {
  const JsonValue* d = cfg.Find("dot_dimension_numbers");
  if (d == nullptr || !d->is_object()) {
    return absl::InvalidArgumentError("backend_config has no dot_dimension_numbers");
  }
  DotDimensionNumbers dn;
  for (auto [key, field] :
       {std::pair{"lhs_batch_dimensions", &dn.lhs_batch_dimensions},
        std::pair{"rhs_batch_dimensions", &dn.rhs_batch_dimensions},
        std::pair{"lhs_contracting_dimensions", &dn.lhs_contracting_dimensions},
        std::pair{"rhs_contracting_dimensions", &dn.rhs_contracting_dimensions}}) {
    const JsonValue* v = d->Find(key);
    if (v == nullptr) continue;
    std::optional<std::vector<int64_t>> ints = v->AsIntArray();
    if (!ints) return absl::InvalidArgumentError(StrCat(key, " is not a list of integers"));
    *field = std::move(*ints);
  }
  return dn;
}

double NumberOr(const JsonValue& cfg, const char* key, double fallback) {
  const JsonValue* v = cfg.Find(key);
  if (v == nullptr) return fallback;
  return v->AsNumber().value_or(fallback);
}

absl::StatusOr<double> ScalarValue(const Literal& l, const char* what) {
  if (!l.shape().IsArray() || l.element_count() != 1) {
    return absl::InvalidArgumentError(
        StrCat(what, " must be a scalar, got ", PrintShape(l.shape(), false)));
  }
  absl::StatusOr<std::vector<double>> v = ToDoubles(l);
  if (!v.ok()) return v.status();
  return (*v)[0];
}

// Result tuple: [D, aux?, damax?, zeros...].
absl::StatusOr<Literal> AssembleResult(const Instruction& instr, Literal d,
                                       std::optional<Literal> aux, std::optional<double> damax) {
  const Shape& shape = instr.shape();
  if (!shape.IsTuple()) {
    if (aux || damax) {
      return absl::InvalidArgumentError(
          "the epilogue or damax_output needs a tuple result, but the result is an array");
    }
    return d;
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(d));
  if (aux) {
    if (shape.tuple_count() < 2 || !shape.tuple_shape(1).IsArray()) {
      return absl::InvalidArgumentError("no array tuple element for aux");
    }
    absl::StatusOr<Literal> a = ConvertLiteral(*aux, shape.tuple_shape(1).element_type());
    if (!a.ok()) return a.status();
    elements.push_back(std::move(*a));
  }
  if (damax) {
    size_t k = elements.size();
    if (static_cast<int>(k) >= shape.tuple_count() || !shape.tuple_shape(k).IsArray()) {
      return absl::InvalidArgumentError("no array tuple element for damax");
    }
    absl::StatusOr<Literal> m =
        FromDoubles(shape.tuple_shape(k).element_type(), shape.tuple_shape(k).dimensions(),
                    std::vector<double>(shape.tuple_shape(k).ElementCount(), *damax));
    if (!m.ok()) return m.status();
    elements.push_back(std::move(*m));
  }
  for (int k = static_cast<int>(elements.size()); k < shape.tuple_count(); ++k) {
    elements.push_back(Literal(shape.tuple_shape(k)));  // workspace
  }
  Literal t(shape, /*allocate=*/false);
  *t.mutable_tuple_elements() = std::move(elements);
  return t;
}

absl::StatusOr<Literal> ComplexGemm(const Instruction& instr, const Literal& a, const Literal& b,
                                    const DotDimensionNumbers& dn, std::complex<double> alpha,
                                    double beta, const Literal* c, const Shape& out) {
  absl::StatusOr<Literal> acc = EvaluateDot(a, b, dn, PrimitiveType::kC128);
  if (!acc.ok()) return acc.status();
  if (acc->shape().dimensions() != out.dimensions()) {
    return absl::InvalidArgumentError("the dot's dimensions differ from the result's");
  }
  auto* v = acc->mutable_data_as<std::complex<double>>();
  Literal cc;
  if (c != nullptr) {
    absl::StatusOr<Literal> conv = ConvertLiteral(*c, PrimitiveType::kC128);
    if (!conv.ok()) return conv.status();
    if (conv->element_count() != acc->element_count()) {
      return absl::InvalidArgumentError("the C operand's size differs from the result's");
    }
    cc = std::move(*conv);
  }
  for (int64_t i = 0; i < acc->element_count(); ++i) {
    v[i] *= alpha;
    if (c != nullptr) v[i] += beta * cc.data_as<std::complex<double>>()[i];
  }
  absl::StatusOr<Literal> d = ConvertLiteral(*acc, out.element_type());
  if (!d.ok()) return d.status();
  return AssembleResult(instr, std::move(*d), std::nullopt, std::nullopt);
}

absl::StatusOr<Literal> EvalGemm(const Instruction& instr, const Operands& ops, bool f8_target) {
  absl::StatusOr<JsonValue> root = ParseBackendConfig(instr);
  if (!root.ok()) return root.status();
  const JsonValue& cfg = ConfigSection(*root, "gemm_backend_config");
  absl::StatusOr<DotDimensionNumbers> dn = ParseDotDims(cfg);
  if (!dn.ok()) return dn.status();
  absl::StatusOr<Epilogue> epilogue = ParseEpilogue(cfg.Find("epilogue"));
  if (!epilogue.ok()) return epilogue.status();
  // Every XLA writer sets alpha_real; a hand-written config without it means 1.
  const double alpha_real = NumberOr(cfg, "alpha_real", 1.0);
  const double alpha_imag = NumberOr(cfg, "alpha_imag", 0.0);
  const double beta = NumberOr(cfg, "beta", 0.0);
  const JsonValue* damax_flag = cfg.Find("damax_output");
  const bool damax_output = damax_flag != nullptr && damax_flag->AsBool().value_or(false);

  if (ops.size() < 2) return absl::InvalidArgumentError("a GEMM needs at least two operands");
  const Literal& a = *ops[0];
  const Literal& b = *ops[1];
  size_t next = 2;
  auto remaining = [&] { return ops.size() - next; };
  const Literal* c = nullptr;
  if (beta != 0) {
    if (remaining() == 0) return absl::InvalidArgumentError("beta != 0 but there is no C operand");
    c = ops[next++];
  }
  // f8 GEMMs carry four scalar scales (a, b, c, d) after the matrices.
  double scale[4] = {1, 1, 1, 1};
  bool has_d_scale = false;
  bool f8_inputs = IsF8Type(a.shape().element_type()) || IsF8Type(b.shape().element_type());
  if (f8_target || f8_inputs) {
    bool four_scalars = remaining() >= 4;
    for (size_t k = 0; four_scalars && k < 4; ++k) {
      four_scalars = ops[next + k]->shape().IsArray() && ops[next + k]->element_count() == 1;
    }
    if (four_scalars) {
      static const char* const kNames[] = {"a_scale", "b_scale", "c_scale", "d_scale"};
      for (int k = 0; k < 4; ++k) {
        absl::StatusOr<double> s = ScalarValue(*ops[next + k], kNames[k]);
        if (!s.ok()) return s.status();
        scale[k] = *s;
      }
      next += 4;
      has_d_scale = true;
    } else if (f8_target) {
      return absl::InvalidArgumentError(
          "an f8 GEMM needs four scalar scale operands (a, b, c, d) after the matrices");
    }
  }
  const Literal* bias = nullptr;
  if (epilogue->bias) {
    if (remaining() == 0) return absl::InvalidArgumentError("BIAS epilogue without a bias operand");
    bias = ops[next++];
  }
  if (remaining() != 0) {
    return absl::InvalidArgumentError(
        StrCat(ops.size(), " operands, but the config accounts for ", next, " (A, B",
               c ? ", C" : "", has_d_scale ? ", 4 scales" : "", bias ? ", bias" : "", ")"));
  }
  const Shape& out = PrimaryResultShape(instr);
  if (!out.IsArray()) return absl::InvalidArgumentError("the GEMM result is not an array");

  if (IsComplex(out.element_type()) || IsComplex(a.shape().element_type())) {
    if (epilogue->bias || epilogue->activation != Activation::kNone || has_d_scale) {
      return absl::UnimplementedError("complex GEMM with an epilogue or scales");
    }
    return ComplexGemm(instr, a, b, *dn, {alpha_real, alpha_imag}, beta, c, out);
  }

  absl::StatusOr<Literal> acc_lit = EvaluateDot(a, b, *dn, PrimitiveType::kF64);
  if (!acc_lit.ok()) return acc_lit.status();
  if (acc_lit->shape().dimensions() != out.dimensions()) {
    return absl::InvalidArgumentError(StrCat("dot(A, B) has dimensions ",
                                             PrintShape(acc_lit->shape(), false),
                                             " but the result is ", PrintShape(out, false)));
  }
  const int64_t n = acc_lit->element_count();
  std::vector<double> acc(acc_lit->data_as<double>(), acc_lit->data_as<double>() + n);
  const double ab_scale = alpha_real * scale[0] * scale[1];
  for (double& v : acc) v *= ab_scale;
  if (c != nullptr) {
    absl::StatusOr<std::vector<double>> cv = ToDoubles(*c);
    if (!cv.ok()) return cv.status();
    if (static_cast<int64_t>(cv->size()) != n) {
      return absl::InvalidArgumentError("the C operand's size differs from the result's");
    }
    for (int64_t i = 0; i < n; ++i) acc[i] += beta * scale[2] * (*cv)[i];
  }
  if (bias != nullptr) {
    absl::StatusOr<std::vector<double>> bv = ToDoubles(*bias);
    if (!bv.ok()) return bv.status();
    // A vector bias spans the trailing (rhs free) dimensions; a full-size bias adds elementwise.
    const int64_t m = static_cast<int64_t>(bv->size());
    if (m == 0 || n % m != 0) {
      return absl::InvalidArgumentError(
          StrCat("bias of ", m, " elements does not tile the ", n, "-element result"));
    }
    for (int64_t i = 0; i < n; ++i) acc[i] += (*bv)[i % m];
  }
  std::optional<Literal> aux;
  if (epilogue->aux) {
    absl::StatusOr<Literal> pre = FromDoubles(PrimitiveType::kF64, out.dimensions(), acc);
    if (!pre.ok()) return pre.status();
    aux = std::move(*pre);
  }
  double amax = 0;
  for (double& v : acc) {
    v = Activate(epilogue->activation, v);
    if (std::isnan(v)) {
      amax = v;
    } else if (!std::isnan(amax) && std::fabs(v) > amax) {
      amax = std::fabs(v);
    }
  }
  if (has_d_scale) {
    for (double& v : acc) v *= scale[3];
  }
  if (IsF8Type(out.element_type())) {
    const double limit = FloatTypeMaxFinite(out.element_type());
    for (double& v : acc) {
      if (v > limit) v = limit;
      if (v < -limit) v = -limit;
    }
  }
  absl::StatusOr<Literal> d = FromDoubles(out.element_type(), out.dimensions(), acc);
  if (!d.ok()) return d.status();
  return AssembleResult(instr, std::move(*d), std::move(aux),
                        damax_output ? std::optional<double>(amax) : std::nullopt);
}

}  // namespace

absl::Status RegisterCublasPlugin(CustomCallRegistry* registry) {
  struct Target {
    const char* name;
    bool f8;
    const char* summary;
  };
  const Target kTargets[] = {
      {"__cublas$gemm", false, "cuBLAS GEMM: alpha * dot(A, B) + beta * C"},
      {"__cublas$lt$matmul", false,
       "cuBLASLt matmul with bias/ReLU/GELU epilogues (and f8 scales when the inputs are f8)"},
      {"__cublas$lt$matmul$f8", true,
       "cuBLASLt f8 matmul: scales a, b, c, d, epilogues, saturation, damax"},
  };
  for (const Target& t : kTargets) {
    bool f8 = t.f8;
    absl::Status st = registry->Register(
        {t.name, "gpu", "cublas", t.summary,
         [f8](const Instruction& instr, const Operands& ops) { return EvalGemm(instr, ops, f8); },
         {}});
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

}  // namespace hlowb
