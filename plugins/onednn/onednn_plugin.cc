#include "plugins/onednn/onednn_plugin.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

float FloatFromBits(int64_t bits) {
  uint32_t u = static_cast<uint32_t>(static_cast<int32_t>(bits));
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) s[d] = s[d + 1] * dims[d + 1];
  return s;
}

// For each element of `dims` (row-major), the index into a value of `from` broadcast to it
// numpy-style (right-aligned, size-1 dimensions repeat). InvalidArgument when incompatible.
absl::StatusOr<std::vector<int64_t>> BroadcastIndex(const std::vector<int64_t>& from,
                                                    const std::vector<int64_t>& dims) {
  const int rank = static_cast<int>(dims.size());
  const int frank = static_cast<int>(from.size());
  if (frank > rank) {
    return absl::InvalidArgumentError(StrCat("cannot broadcast rank ", frank, " to rank ", rank));
  }
  std::vector<int64_t> fstrides = Strides(from);
  std::vector<int64_t> step(rank, 0);  // source stride per result dimension
  for (int d = 0; d < frank; ++d) {
    int rd = rank - frank + d;
    if (from[d] == dims[rd]) {
      step[rd] = fstrides[d];
    } else if (from[d] != 1) {
      return absl::InvalidArgumentError(
          StrCat("dimension ", d, " of size ", from[d], " does not broadcast to ", dims[rd]));
    }
  }
  int64_t count = 1;
  for (int64_t v : dims) count *= v;
  std::vector<int64_t> out(count);
  std::vector<int64_t> idx(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t src = 0;
    for (int d = 0; d < rank; ++d) src += idx[d] * step[d];
    out[i] = src;
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

absl::StatusOr<std::string> OpName(const JsonValue& v) {
  if (std::optional<int64_t> n = v.AsInt()) {
    // OneDnnFusionConfig / OneDnnMatMulConfig FusionKind numbering.
    static const char* const kByNumber[] = {"UNDEFINED", "BIAS",      "RELU",       "TANH",
                                            "GELU_ERF",  "GELU_TANH", "BINARY_ADD", "LINEAR",
                                            "ELU",       "RELU6",     "SIGMOID"};
    if (*n < 0 || *n >= 11) return absl::InvalidArgumentError(StrCat("fused op ", *n));
    return std::string(kByNumber[*n]);
  }
  if (std::optional<std::string> t = v.AsText()) return *t;
  return absl::InvalidArgumentError("a fused op is neither a name nor a number");
}

absl::StatusOr<Literal> EvalMatmul(const Instruction& instr, const Operands& ops) {
  absl::StatusOr<JsonValue> root = ParseBackendConfig(instr);
  if (!root.ok()) return root.status();
  const JsonValue& cfg = ConfigSection(*root, "onednn_matmul_config");
  auto flag = [&cfg](const char* key) {
    const JsonValue* v = cfg.Find(key);
    return v != nullptr && v->AsBool().value_or(false);
  };
  const bool ta = flag("transpose_a"), tb = flag("transpose_b");
  std::vector<std::string> fused;
  const JsonValue* fusions = cfg.Find("fusions");
  const JsonValue* list = cfg.Find("fused_ops");
  if (fusions != nullptr && fusions->Find("ops") != nullptr) list = fusions->Find("ops");
  if (list != nullptr) {
    if (!list->is_array()) return absl::InvalidArgumentError("fused ops are not a list");
    for (const JsonValue& v : list->array()) {
      absl::StatusOr<std::string> name = OpName(v);
      if (!name.ok()) return name.status();
      fused.push_back(*name);
    }
  }
  double alpha = 1;
  const JsonValue* alpha_bits = cfg.Find("alpha_typecast");
  if (fusions != nullptr && fusions->Find("alpha_typecast") != nullptr) {
    alpha_bits = fusions->Find("alpha_typecast");
  }
  if (alpha_bits != nullptr && alpha_bits->AsInt()) alpha = FloatFromBits(*alpha_bits->AsInt());

  if (ops.size() < 2) return absl::InvalidArgumentError("matmul needs two operands");
  const Shape& as = ops[0]->shape();
  const Shape& bs = ops[1]->shape();
  if (!as.IsArray() || !bs.IsArray() || as.rank() < 2 || bs.rank() < 2) {
    return absl::UnimplementedError("matmul operands of rank below 2");
  }
  const int ar = as.rank(), br = bs.rank();
  const int64_t m = as.dimension(ta ? ar - 1 : ar - 2), k = as.dimension(ta ? ar - 2 : ar - 1);
  const int64_t kb = bs.dimension(tb ? br - 1 : br - 2), n = bs.dimension(tb ? br - 2 : br - 1);
  if (k != kb) {
    return absl::InvalidArgumentError(StrCat("contracting sizes differ: ", k, " and ", kb));
  }
  std::vector<int64_t> abatch(as.dimensions().begin(), as.dimensions().end() - 2);
  std::vector<int64_t> bbatch(bs.dimensions().begin(), bs.dimensions().end() - 2);
  const size_t nb = std::max(abatch.size(), bbatch.size());
  std::vector<int64_t> batch(nb, 1);
  for (size_t i = 0; i < nb; ++i) {
    int64_t x = i + abatch.size() >= nb ? abatch[i + abatch.size() - nb] : 1;
    int64_t y = i + bbatch.size() >= nb ? bbatch[i + bbatch.size() - nb] : 1;
    if (x != y && x != 1 && y != 1) {
      return absl::InvalidArgumentError("batch dimensions do not broadcast");
    }
    batch[i] = std::max(x, y);
  }
  absl::StatusOr<std::vector<int64_t>> amap = BroadcastIndex(abatch, batch);
  absl::StatusOr<std::vector<int64_t>> bmap = BroadcastIndex(bbatch, batch);
  if (!amap.ok()) return amap.status();
  if (!bmap.ok()) return bmap.status();
  absl::StatusOr<std::vector<double>> av = ToDoubles(*ops[0]);
  absl::StatusOr<std::vector<double>> bv = ToDoubles(*ops[1]);
  if (!av.ok()) return av.status();
  if (!bv.ok()) return bv.status();
  const int64_t batches = static_cast<int64_t>(amap->size());
  // Canonical [batches, m, k] x [batches, k, n] for one batched dot.
  Literal lhs(Shape::Array(PrimitiveType::kF64, {batches, m, k}));
  Literal rhs(Shape::Array(PrimitiveType::kF64, {batches, k, n}));
  double* pl = lhs.mutable_data_as<double>();
  double* pr = rhs.mutable_data_as<double>();
  for (int64_t b = 0; b < batches; ++b) {
    const double* sa = av->data() + (*amap)[b] * m * k;
    const double* sb = bv->data() + (*bmap)[b] * k * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) pl[(b * m + i) * k + j] = ta ? sa[j * m + i] : sa[i * k + j];
    }
    for (int64_t i = 0; i < k; ++i) {
      for (int64_t j = 0; j < n; ++j) pr[(b * k + i) * n + j] = tb ? sb[j * k + i] : sb[i * n + j];
    }
  }
  DotDimensionNumbers dn;
  dn.lhs_batch_dimensions = {0};
  dn.rhs_batch_dimensions = {0};
  dn.lhs_contracting_dimensions = {2};
  dn.rhs_contracting_dimensions = {1};
  absl::StatusOr<Literal> prod = EvaluateDot(lhs, rhs, dn, PrimitiveType::kF64);
  if (!prod.ok()) return prod.status();
  std::vector<int64_t> out_dims = batch;
  out_dims.push_back(m);
  out_dims.push_back(n);
  const Shape& out = instr.shape();
  if (!out.IsArray() || out.dimensions() != out_dims) {
    return absl::InvalidArgumentError(
        StrCat("the product has dimensions [",
               PrintShape(Shape::Array(PrimitiveType::kF64, out_dims), false),
               "] but the result is ", PrintShape(out, false)));
  }
  const int64_t count = prod->element_count();
  std::vector<double> acc(prod->data_as<double>(), prod->data_as<double>() + count);
  size_t next = 2;
  for (const std::string& op : fused) {
    if (op == "BIAS" || op == "BINARY_ADD") {
      if (next >= ops.size()) return absl::InvalidArgumentError(StrCat(op, " without an operand"));
      const Literal& addend = *ops[next++];
      absl::StatusOr<std::vector<double>> v = ToDoubles(addend);
      if (!v.ok()) return v.status();
      absl::StatusOr<std::vector<int64_t>> map =
          BroadcastIndex(addend.shape().dimensions(), out_dims);
      if (!map.ok()) return map.status();
      for (int64_t i = 0; i < count; ++i) acc[i] += (*v)[(*map)[i]];
      continue;
    }
    static const std::pair<const char*, Activation> kActivations[] = {
        {"RELU", Activation::kRelu},         {"TANH", Activation::kTanh},
        {"GELU_ERF", Activation::kGeluErf},  {"GELU_TANH", Activation::kGeluTanh},
        {"ELU", Activation::kElu},           {"RELU6", Activation::kRelu6},
        {"SIGMOID", Activation::kSigmoid},   {"SWISH", Activation::kSilu}};
    if (op == "LINEAR") {
      for (double& v : acc) v *= alpha;
      continue;
    }
    const Activation* a = nullptr;
    for (const auto& [name, activation] : kActivations) {
      if (op == name) a = &activation;
    }
    if (a == nullptr) return absl::UnimplementedError(StrCat("oneDNN matmul fused op ", op));
    for (double& v : acc) v = Activate(*a, v);
  }
  if (next != ops.size()) {
    return absl::InvalidArgumentError(
        StrCat(ops.size(), " operands, but the fused ops use ", next));
  }
  return FromDoubles(out.element_type(), out.dimensions(), acc);
}

absl::StatusOr<Literal> EvalLayerNorm(const Instruction& instr, const Operands& ops) {
  absl::StatusOr<JsonValue> root = ParseBackendConfig(instr);
  if (!root.ok()) return root.status();
  const JsonValue& cfg = ConfigSection(*root, "onednn_layer_norm_config");
  double eps = 0;
  if (const JsonValue* e = cfg.Find("epsilon_typecast"); e != nullptr && e->AsInt()) {
    eps = FloatFromBits(*e->AsInt());
  }
  if (ops.empty() || ops.size() > 3) {
    return absl::InvalidArgumentError("layer norm takes (x[, scale[, shift]])");
  }
  const Shape& xs = ops[0]->shape();
  if (!xs.IsArray() || xs.rank() < 1) return absl::InvalidArgumentError("x must be an array");
  const int64_t c = xs.dimensions().back();
  absl::StatusOr<std::vector<double>> x = ToDoubles(*ops[0]);
  if (!x.ok()) return x.status();
  std::vector<double> scale(c, 1.0), shift(c, 0.0);
  for (size_t i = 1; i < ops.size(); ++i) {
    absl::StatusOr<std::vector<double>> v = ToDoubles(*ops[i]);
    if (!v.ok()) return v.status();
    if (static_cast<int64_t>(v->size()) != c) {
      return absl::InvalidArgumentError(StrCat(i == 1 ? "scale" : "shift", " has ", v->size(),
                                               " elements for a last dimension of ", c));
    }
    (i == 1 ? scale : shift) = std::move(*v);
  }
  const int64_t rows = c == 0 ? 0 : static_cast<int64_t>(x->size()) / c;
  std::vector<double> y(x->size());
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = x->data() + r * c;
    double mean = 0;
    for (int64_t j = 0; j < c; ++j) mean += row[j];
    mean /= static_cast<double>(c);
    double var = 0;
    for (int64_t j = 0; j < c; ++j) var += (row[j] - mean) * (row[j] - mean);
    var /= static_cast<double>(c);
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t j = 0; j < c; ++j) y[r * c + j] = (row[j] - mean) * inv * scale[j] + shift[j];
  }
  const Shape& out = instr.shape();
  if (!out.IsArray() || out.dimensions() != xs.dimensions()) {
    return absl::InvalidArgumentError("the result's dimensions differ from x's");
  }
  return FromDoubles(out.element_type(), out.dimensions(), y);
}

absl::StatusOr<Literal> EvalSoftmax(const Instruction& instr, const Operands& ops) {
  if (ops.size() != 1) return absl::InvalidArgumentError("softmax takes one operand");
  const Shape& xs = ops[0]->shape();
  if (!xs.IsArray() || xs.rank() < 1) return absl::InvalidArgumentError("x must be an array");
  absl::StatusOr<JsonValue> root = ParseBackendConfig(instr);
  if (!root.ok()) return root.status();
  int64_t axis = xs.rank() - 1;
  if (const JsonValue* cfg = root->Find("onednn_softmax_config")) {
    const JsonValue* a = cfg->Find("softmax_axis");
    axis = a != nullptr && a->AsInt() ? *a->AsInt() : 0;
  }
  if (axis < 0 || axis >= xs.rank()) {
    return absl::InvalidArgumentError(StrCat("softmax axis ", axis, " out of range"));
  }
  absl::StatusOr<std::vector<double>> x = ToDoubles(*ops[0]);
  if (!x.ok()) return x.status();
  const std::vector<int64_t>& dims = xs.dimensions();
  int64_t inner = 1;
  for (int d = static_cast<int>(axis) + 1; d < xs.rank(); ++d) inner *= dims[d];
  const int64_t len = dims[axis];
  const int64_t outer = len * inner == 0 ? 0 : static_cast<int64_t>(x->size()) / (len * inner);
  std::vector<double> y(x->size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      double mx = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) mx = std::max(mx, (*x)[base + j * inner]);
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) {
        y[base + j * inner] = std::exp((*x)[base + j * inner] - mx);
        sum += y[base + j * inner];
      }
      for (int64_t j = 0; j < len; ++j) y[base + j * inner] /= sum;
    }
  }
  const Shape& out = instr.shape();
  if (!out.IsArray() || out.dimensions() != dims) {
    return absl::InvalidArgumentError("the result's dimensions differ from x's");
  }
  return FromDoubles(out.element_type(), out.dimensions(), y);
}

}  // namespace

absl::Status RegisterOneDnnPlugin(CustomCallRegistry* registry) {
  absl::Status st = registry->Register(
      {"__onednn$matmul", "cpu", "onednn", "oneDNN matmul with fused post-ops", EvalMatmul, {}});
  if (!st.ok()) return st;
  st = registry->Register({"__onednn$layernorm", "cpu", "onednn",
                           "oneDNN layer normalization over the last dimension", EvalLayerNorm, {}});
  if (!st.ok()) return st;
  return registry->Register(
      {"__onednn$softmax", "cpu", "onednn", "oneDNN softmax along one axis", EvalSoftmax, {}});
}

}  // namespace hlowb
