// Element types of XLA arrays, numbered exactly as xla_data.proto's PrimitiveType so the
// numbers can be written to protos unchanged. Only naming and classification live here;
// numeric conversions for the small float formats live in float_types.h.
#ifndef HLOWB_CORE_IR_PRIMITIVE_TYPE_H_
#define HLOWB_CORE_IR_PRIMITIVE_TYPE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlowb {

enum class PrimitiveType : int32_t {
  kInvalid = 0,
  kPred = 1,
  kS1 = 30,
  kS2 = 26,
  kS4 = 21,
  kS8 = 2,
  kS16 = 3,
  kS32 = 4,
  kS64 = 5,
  kU1 = 31,
  kU2 = 27,
  kU4 = 22,
  kU8 = 6,
  kU16 = 7,
  kU32 = 8,
  kU64 = 9,
  kF16 = 10,
  kF32 = 11,
  kBF16 = 16,
  kF64 = 12,
  kF8E5M2 = 19,
  kF8E4M3 = 28,
  kF8E4M3FN = 20,
  kF8E4M3B11FNUZ = 23,
  kF8E3M4 = 29,
  kF8E5M2FNUZ = 24,
  kF8E4M3FNUZ = 25,
  kF4E2M1FN = 32,
  kF8E8M0FNU = 33,
  kC64 = 15,
  kC128 = 18,
  kTuple = 13,
  kOpaque = 14,
  kToken = 17,
  kBuffer = 34,
};

// Text spelling used in HLO ("f32", "opaque", ...). Empty for kInvalid.
std::string_view PrimitiveTypeName(PrimitiveType type);
// Accepts every spelling the HLO lexer accepts, including "opaque_type". Rejects "tuple" and
// "buffer", which are not element-type keywords in text.
std::optional<PrimitiveType> ParsePrimitiveType(std::string_view name);
// Every valid type, in enum-number order (useful for tests and tables).
const PrimitiveType* AllPrimitiveTypes(int* count);
bool IsValidPrimitiveTypeNumber(int32_t number);

bool IsSignedIntegral(PrimitiveType type);
bool IsUnsignedIntegral(PrimitiveType type);
inline bool IsIntegral(PrimitiveType t) { return IsSignedIntegral(t) || IsUnsignedIntegral(t); }
bool IsFloatingPoint(PrimitiveType type);  // f16, bf16, f32, f64 and every f8/f4 variant
bool IsSmallFloat(PrimitiveType type);     // floating point narrower than 32 bits
bool IsComplex(PrimitiveType type);
// Array element types (everything but tuple, token, opaque, buffer, invalid).
bool IsArrayType(PrimitiveType type);
// Logical bit width (s4 -> 4, c64 -> 64, pred -> 8 as XLA counts it). 0 for non-array types.
int BitWidth(PrimitiveType type);
// Bytes one element occupies in an unpacked host buffer (sub-byte types take one byte).
int ByteWidth(PrimitiveType type);
// For complex types: the component type (c64 -> f32). Otherwise the type itself.
PrimitiveType ComplexComponentType(PrimitiveType type);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_PRIMITIVE_TYPE_H_
