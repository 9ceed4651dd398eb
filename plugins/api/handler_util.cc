#include "plugins/api/handler_util.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "core/support/strings.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

ScratchComputation::ScratchComputation() : module_(std::make_unique<Module>("scratch")) {
  auto c = std::make_unique<Computation>("scratch");
  computation_ = module_->AddComputation(std::move(c));
  module_->set_entry(computation_);
}

Instruction* ScratchComputation::Parameter(const Shape& shape) {
  Instruction* p = module_->NewInstruction(Opcode::kParameter, StrCat("p", parameters_),
                                           module_->InternShape(shape));
  p->set_index(parameters_++);
  computation_->AddInstruction(p);
  return p;
}

Instruction* ScratchComputation::Add(Opcode opcode, const Shape& shape,
                                     const std::vector<Instruction*>& operands) {
  Instruction* i = module_->NewInstruction(opcode, StrCat("op", computation_->instruction_count()),
                                           module_->InternShape(shape));
  *i->mutable_operands() = operands;
  computation_->AddInstruction(i);
  return i;
}

absl::StatusOr<Literal> ScratchComputation::Run(Instruction* root,
                                                const std::vector<const Literal*>& args) {
  computation_->set_root(root);
  return EvaluateComputation(*computation_, args);
}

absl::StatusOr<Literal> ConvertLiteral(const Literal& literal, PrimitiveType type) {
  if (!literal.shape().IsArray()) {
    return absl::InvalidArgumentError("only array values can be converted");
  }
  if (literal.shape().element_type() == type) return literal;
  ScratchComputation s;
  Instruction* p = s.Parameter(literal.shape());
  Instruction* c = s.Add(Opcode::kConvert, Shape::Array(type, literal.shape().dimensions()), {p});
  return s.Run(c, {&literal});
}

absl::StatusOr<std::vector<double>> ToDoubles(const Literal& literal) {
  const Shape& s = literal.shape();
  if (!s.IsArray() || IsComplex(s.element_type())) {
    return absl::InvalidArgumentError(
        StrCat("expected a real-typed array, got ", PrimitiveTypeName(s.element_type())));
  }
  absl::StatusOr<Literal> wide = ConvertLiteral(literal, PrimitiveType::kF64);
  if (!wide.ok()) return wide.status();
  const double* d = wide->data_as<double>();
  return std::vector<double>(d, d + wide->element_count());
}

absl::StatusOr<Literal> FromDoubles(PrimitiveType type, const std::vector<int64_t>& dims,
                                    const std::vector<double>& values) {
  Literal wide(Shape::Array(PrimitiveType::kF64, dims));
  if (static_cast<size_t>(wide.element_count()) != values.size()) {
    return absl::InternalError("value count does not match the dimensions");
  }
  if (!values.empty()) {
    std::memcpy(wide.mutable_data()->data(), values.data(), values.size() * sizeof(double));
  }
  return ConvertLiteral(wide, type);
}

absl::StatusOr<Literal> EvaluateDot(const Literal& lhs, const Literal& rhs,
                                    const DotDimensionNumbers& dnums, PrimitiveType result_type) {
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  if (!ls.IsArray() || !rs.IsArray()) return absl::InvalidArgumentError("dot of non-arrays");
  auto check = [](const std::vector<int64_t>& dims, int rank, const char* what) -> absl::Status {
    std::vector<bool> seen(rank, false);
    for (int64_t d : dims) {
      if (d < 0 || d >= rank || seen[d]) {
        return absl::InvalidArgumentError(
            StrCat(what, " dimension ", d, " is out of range or repeated (rank ", rank, ")"));
      }
      seen[d] = true;
    }
    return absl::OkStatus();
  };
  for (auto [dims, rank, what] :
       {std::tuple{&dnums.lhs_batch_dimensions, ls.rank(), "lhs batch"},
        std::tuple{&dnums.rhs_batch_dimensions, rs.rank(), "rhs batch"},
        std::tuple{&dnums.lhs_contracting_dimensions, ls.rank(), "lhs contracting"},
        std::tuple{&dnums.rhs_contracting_dimensions, rs.rank(), "rhs contracting"}}) {
    if (absl::Status st = check(*dims, rank, what); !st.ok()) return st;
  }
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size() ||
      dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError("dot dimension numbers do not pair up");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    int64_t l = ls.dimension(dnums.lhs_batch_dimensions[i]);
    if (l != rs.dimension(dnums.rhs_batch_dimensions[i])) {
      return absl::InvalidArgumentError("dot batch dimensions differ in size");
    }
    dims.push_back(l);
  }
  for (size_t i = 0; i < dnums.lhs_contracting_dimensions.size(); ++i) {
    if (ls.dimension(dnums.lhs_contracting_dimensions[i]) !=
        rs.dimension(dnums.rhs_contracting_dimensions[i])) {
      return absl::InvalidArgumentError("dot contracting dimensions differ in size");
    }
  }
  auto free_dims = [&dims](const Shape& s, const std::vector<int64_t>& batch,
                           const std::vector<int64_t>& contracting) {
    for (int d = 0; d < s.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
        dims.push_back(s.dimension(d));
      }
    }
  };
  free_dims(ls, dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  free_dims(rs, dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  ScratchComputation s;
  Instruction* a = s.Parameter(ls);
  Instruction* b = s.Parameter(rs);
  Instruction* dot = s.Add(Opcode::kDot, Shape::Array(result_type, dims), {a, b});
  dot->mutable_attrs()->dot_dimension_numbers = dnums;
  return s.Run(dot, {&lhs, &rhs});
}

absl::StatusOr<JsonValue> ParseBackendConfig(const Instruction& instr) {
  const std::string& text = instr.backend_config();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) return JsonValue::Parse("{}");
  absl::StatusOr<JsonValue> v = JsonValue::Parse(text);
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        StrCat(InstructionRef(instr), ": ", std::string(v.status().message())));
  }
  if (!v->is_object()) {
    return absl::InvalidArgumentError(
        StrCat(InstructionRef(instr), ": backend_config is not a JSON object"));
  }
  return v;
}

const JsonValue& ConfigSection(const JsonValue& root, std::string_view key) {
  const JsonValue* inner = root.Find(key);
  return inner != nullptr && inner->is_object() ? *inner : root;
}

double Activate(Activation activation, double x, double alpha) {
  switch (activation) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0 ? x : (std::isnan(x) ? x : 0.0);
    case Activation::kRelu6: return std::isnan(x) ? x : std::min(std::max(x, 0.0), 6.0);
    case Activation::kGeluTanh: {
      constexpr double kSqrt2OverPi = 0.7978845608028654;
      return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
    }
    case Activation::kGeluErf: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case Activation::kSilu: return x / (1.0 + std::exp(-x));
    case Activation::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
    case Activation::kElu: return x > 0 ? x : alpha * std::expm1(x);
    case Activation::kLeakyRelu: return x > 0 ? x : alpha * x;
  }
  return x;
}

bool IsF8Type(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: return true;
    default: return false;
  }
}

std::string InstructionRef(const Instruction& instr) { return StrCat("%", instr.name()); }

const Shape& PrimaryResultShape(const Instruction& instr) {
  const Shape& s = instr.shape();
  if (s.IsTuple() && s.tuple_count() > 0) return s.tuple_shape(0);
  return s;
}

}  // namespace hlowb
