#include "core/ir/primitive_type.h"

#include <array>

namespace hlowb {
namespace {

struct TypeRow {
  PrimitiveType type;
  std::string_view name;
  int bits;
  int bytes;
};

constexpr std::array<TypeRow, 33> kTypes = {{
    {PrimitiveType::kPred, "pred", 8, 1},
    {PrimitiveType::kS8, "s8", 8, 1},
    {PrimitiveType::kS16, "s16", 16, 2},
    {PrimitiveType::kS32, "s32", 32, 4},
    {PrimitiveType::kS64, "s64", 64, 8},
    {PrimitiveType::kU8, "u8", 8, 1},
    {PrimitiveType::kU16, "u16", 16, 2},
    {PrimitiveType::kU32, "u32", 32, 4},
    {PrimitiveType::kU64, "u64", 64, 8},
    {PrimitiveType::kF16, "f16", 16, 2},
    {PrimitiveType::kF32, "f32", 32, 4},
    {PrimitiveType::kF64, "f64", 64, 8},
    {PrimitiveType::kTuple, "tuple", 0, 0},
    {PrimitiveType::kOpaque, "opaque", 0, 0},
    {PrimitiveType::kC64, "c64", 64, 8},
    {PrimitiveType::kBF16, "bf16", 16, 2},
    {PrimitiveType::kToken, "token", 0, 0},
    {PrimitiveType::kC128, "c128", 128, 16},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8, 1},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8, 1},
    {PrimitiveType::kS4, "s4", 4, 1},
    {PrimitiveType::kU4, "u4", 4, 1},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8, 1},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8, 1},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8, 1},
    {PrimitiveType::kS2, "s2", 2, 1},
    {PrimitiveType::kU2, "u2", 2, 1},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8, 1},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8, 1},
    {PrimitiveType::kS1, "s1", 1, 1},
    {PrimitiveType::kU1, "u1", 1, 1},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4, 1},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8, 1},
}};

const TypeRow* Find(PrimitiveType type) {
  for (const TypeRow& row : kTypes) {
    if (row.type == type) return &row;
  }
  return nullptr;
}

}  // namespace

std::string_view PrimitiveTypeName(PrimitiveType type) {
  if (type == PrimitiveType::kBuffer) return "b";
  const TypeRow* row = Find(type);
  return row ? row->name : std::string_view();
}

std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name) {
  // The types nearly every module uses, without the table scan (the lexer asks for each word).
  if (name.size() == 3 && name[1] == '3' && name[2] == '2') {
    if (name[0] == 'f') return PrimitiveType::kF32;
    if (name[0] == 's') return PrimitiveType::kS32;
    if (name[0] == 'u') return PrimitiveType::kU32;
  } else if (name.size() == 4 && name == "pred") {
    return PrimitiveType::kPred;
  } else if (name.size() == 4 && name == "bf16") {
    return PrimitiveType::kBF16;
  }
  if (name == "opaque_type") return PrimitiveType::kOpaque;
  if (name.empty() || name.size() > 13) return std::nullopt;
  for (const TypeRow& row : kTypes) {
    if (row.name.size() == name.size() && row.name[0] == name[0] && row.name == name) {
      return row.type == PrimitiveType::kTuple ? std::nullopt : std::optional(row.type);
    }
  }
  return std::nullopt;
}

const PrimitiveType* AllPrimitiveTypes(int* count) {
  static const auto* all = [] {
    auto* v = new std::array<PrimitiveType, kTypes.size() + 1>();
    for (size_t i = 0; i < kTypes.size(); ++i) (*v)[i] = kTypes[i].type;
    (*v)[kTypes.size()] = PrimitiveType::kBuffer;
    return v;
  }();
  *count = static_cast<int>(all->size());
  return all->data();
}

bool IsValidPrimitiveTypeNumber(int32_t number) {
  return number >= 1 && number <= 34;
}

bool IsSignedIntegral(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
      return true;
    default:
      return false;
  }
}

bool IsUnsignedIntegral(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsSmallFloat(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E3M4:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
    case PrimitiveType::kF4E2M1FN:
    case PrimitiveType::kF8E8M0FNU:
      return true;
    default:
      return false;
  }
}

bool IsFloatingPoint(PrimitiveType t) {
  return t == PrimitiveType::kF32 || t == PrimitiveType::kF64 || IsSmallFloat(t);
}

bool IsComplex(PrimitiveType t) { return t == PrimitiveType::kC64 || t == PrimitiveType::kC128; }

bool IsArrayType(PrimitiveType t) {
  return t == PrimitiveType::kPred || IsIntegral(t) || IsFloatingPoint(t) || IsComplex(t);
}

int BitWidth(PrimitiveType t) {
  if (!IsArrayType(t)) return 0;
  return Find(t)->bits;
}

int ByteWidth(PrimitiveType t) {
  if (!IsArrayType(t)) return 0;
  return Find(t)->bytes;
}

PrimitiveType ComplexComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

}  // namespace hlowb
