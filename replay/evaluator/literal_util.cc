// Helpers shared by the op families: widening/narrowing of narrow floats, sub-byte wrapping,
// index arithmetic, scalar extraction, error messages.
#include <cmath>

#include "core/ir/float_types.h"
#include "replay/evaluator/eval_internal.h"

namespace hlowb::eval {

bool IsNarrowFloat(PrimitiveType t) {
  return IsFloatingPoint(t) && t != PrimitiveType::kF32 && t != PrimitiveType::kF64;
}
bool IsSubByteInt(PrimitiveType t) { return IsIntegral(t) && BitWidth(t) < 8; }
bool IsNativeType(PrimitiveType t) { return IsArrayType(t) && !IsNarrowFloat(t); }

Literal WidenToF64(const Literal& narrow) {
  PrimitiveType t = narrow.shape().element_type();
  // Every element is written below.
  Literal out = Literal::Uninitialized(Shape::Array(PrimitiveType::kF64, narrow.shape().dimensions()));
  double* o = out.mutable_data_as<double>();
  int64_t n = narrow.element_count();
  if (ByteWidth(t) == 1) {
    // 256-entry table: decode each possible byte once.
    double table[256];
    for (int b = 0; b < 256; ++b) table[b] = FloatBitsToDouble(t, static_cast<uint64_t>(b));
    const uint8_t* a = narrow.data_as<uint8_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = table[a[i]];
  } else if (t == PrimitiveType::kBF16) {
    const uint16_t* a = narrow.data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) {
      uint32_t bits = uint32_t{a[i]} << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      o[i] = f;
    }
  } else {
    const uint16_t* a = narrow.data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = FloatBitsToDouble(t, a[i]);
  }
  return out;
}

namespace {

inline __attribute__((always_inline)) uint16_t Bf16FromDouble(double d) {
  // Round to odd into float (keeps a sticky bit, so the second rounding cannot double-round),
  // then round to nearest even into bf16. Matches DoubleToFloatBits(kBF16, d).
  float f = static_cast<float>(d);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  if (std::isnan(d)) return static_cast<uint16_t>(((b >> 16) & 0x8000) | 0x7FC0);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    if (std::fabs(static_cast<double>(f)) > std::fabs(d)) b -= 1;
    b |= 1;
  }
  uint32_t lsb = (b >> 16) & 1;
  b += 0x7FFF + lsb;
  return static_cast<uint16_t>(b >> 16);
}

}  // namespace

uint16_t DoubleToBF16Bits(double d) { return Bf16FromDouble(d); }

Literal NarrowFromF64(const Literal& wide, PrimitiveType type) {
  // Every element is written below.
  Literal out = Literal::Uninitialized(Shape::Array(type, wide.shape().dimensions()));
  const double* a = wide.data_as<double>();
  int64_t n = wide.element_count();
  if (ByteWidth(type) == 1) {
    uint8_t* o = out.mutable_data_as<uint8_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint8_t>(DoubleToFloatBits(type, a[i]));
  } else if (type == PrimitiveType::kBF16) {
    uint16_t* o = out.mutable_data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = Bf16FromDouble(a[i]);
  } else {
    uint16_t* o = out.mutable_data_as<uint16_t>();
    for (int64_t i = 0; i < n; ++i) o[i] = static_cast<uint16_t>(DoubleToFloatBits(type, a[i]));
  }
  return out;
}

const Literal* WidenIfNarrow(const Literal* l, Literal* holder) {
  if (!IsNarrowFloat(l->shape().element_type())) return l;
  *holder = WidenToF64(*l);
  return holder;
}

double RoundThrough(PrimitiveType type, double v) {
  return FloatBitsToDouble(type, DoubleToFloatBits(type, v));
}

void NormalizeSubByte(Literal* l) {
  PrimitiveType t = l->shape().element_type();
  int bits = BitWidth(t);
  uint8_t* d = l->mutable_data_as<uint8_t>();
  int64_t n = l->element_count();
  uint8_t mask = static_cast<uint8_t>((1u << bits) - 1);
  if (IsSignedIntegral(t)) {
    for (int64_t i = 0; i < n; ++i) {
      uint8_t v = d[i] & mask;
      if ((v >> (bits - 1)) & 1) v |= static_cast<uint8_t>(~mask);
      d[i] = v;
    }
  } else {
    for (int64_t i = 0; i < n; ++i) d[i] &= mask;
  }
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

static absl::Status CheckShape(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) {
      absl::Status st = CheckShape(s);
      if (!st.ok()) return st;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  for (int i = 0; i < shape.rank(); ++i) {
    if (shape.dimension(i) < 0) {
      return absl::InvalidArgumentError("shape has an unbounded or negative dimension");
    }
  }
  if (shape.ElementCount() < 0) return absl::ResourceExhaustedError("shape is too large");
  return absl::OkStatus();
}

absl::StatusOr<Literal> NewLiteral(const Shape& shape) {
  absl::Status st = CheckShape(shape);
  if (!st.ok()) return st;
  return Literal(shape);
}

Literal ScalarFrom(const Literal& from, int64_t i) {
  Literal s(Shape::Array(from.shape().element_type(), {}));
  CopyElement(from, i, &s, 0);
  return s;
}

Literal ScalarOfType(PrimitiveType t) { return Literal(Shape::Array(t, {})); }

int64_t IndexValue(const Literal& l, int64_t i) {
  PrimitiveType t = l.shape().element_type();
  if (IsUnsignedIntegral(t)) {
    uint64_t v = l.GetBits(i);
    return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
  }
  return l.GetInt(i);
}

std::string InstrRef(const Instruction& instr) {
  return StrCat("%", instr.name(), " (", OpcodeName(instr.opcode()), ")");
}

absl::Status Unimplemented(const Instruction& instr, const std::string& what) {
  return absl::UnimplementedError(StrCat("evaluator: ", what, " is not supported, in ",
                                         InstrRef(instr)));
}

absl::Status Invalid(const Instruction& instr, const std::string& what) {
  return absl::InvalidArgumentError(StrCat("evaluator: ", what, ", in ", InstrRef(instr)));
}

ScalarComputation ScalarComputation::Analyze(const Computation* c) {
  ScalarComputation sc;
  sc.computation = c;
  if (c == nullptr || c->parameter_count() != 2 || c->root() == nullptr) return sc;
  const Instruction* root = c->root();
  const Instruction* p0 = c->parameter(0);
  const Instruction* p1 = c->parameter(1);
  if (p0 == nullptr || p1 == nullptr || root->operand_count() != 2) return sc;
  if (!p0->shape().IsScalar() || !root->shape().IsScalar() ||
      p0->shape().element_type() != root->shape().element_type() ||
      p1->shape().element_type() != root->shape().element_type()) {
    return sc;
  }
  switch (root->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if ((root->operand(0) == p0 && root->operand(1) == p1) ||
          (root->operand(0) == p1 && root->operand(1) == p0)) {
        // Commutative for every type except NaN choice in max/min: keep operand order then.
        if ((root->opcode() == Opcode::kMaximum || root->opcode() == Opcode::kMinimum) &&
            root->operand(0) != p0) {
          return sc;
        }
        sc.simple_binary = true;
        sc.op = root->opcode();
      }
      break;
    case Opcode::kSubtract:
    case Opcode::kDivide:
      if (root->operand(0) == p0 && root->operand(1) == p1) {
        sc.simple_binary = true;
        sc.op = root->opcode();
      }
      break;
    default: break;
  }
  return sc;
}

}  // namespace hlowb::eval
