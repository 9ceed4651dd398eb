// Bit-exact numerics for XLA's floating-point element types: decoding element bits to double,
// encoding a double into element bits with the rounding and special-value rules XLA and
// ml_dtypes use, NaN/infinity construction for the HLO text parser, and the text spelling the
// HLO printer uses for each value.
//
// Bits are always the element's storage bits in the low bits of a uint64_t (f16/bf16: 16 bits,
// f8 variants: 8 bits, f4e2m1fn: 4 bits, f32: 32, f64: 64); higher bits of inputs are ignored
// and higher bits of outputs are zero.
//
// Deliberately not here: arithmetic on these types, conversions between two narrow types
// (go through double: every narrow value is exactly representable as a double), complex types,
// and lexing of HLO text (callers hand in an already parsed double, sign or NaN payload).
// Non-floating-point types are not errors for the query functions; they answer false/0.
#ifndef HLOWB_CORE_IR_FLOAT_TYPES_H_
#define HLOWB_CORE_IR_FLOAT_TYPES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/primitive_type.h"

namespace hlowb {

// --- Properties of a type -----------------------------------------------------------------------

bool FloatTypeHasInfinity(PrimitiveType type);
// False only for f4e2m1fn (and non-float types).
bool FloatTypeHasNaN(PrimitiveType type);
// False for the fnuz types and f8e8m0fnu.
bool FloatTypeHasNegativeZero(PrimitiveType type);
// Largest finite value (f8e4m3fn: 448, f4e2m1fn: 6, f8e8m0fnu: 2^127, f32: FLT_MAX, ...).
double FloatTypeMaxFinite(PrimitiveType type);
// Bits of the largest finite value.
uint64_t FloatTypeMaxFiniteBits(PrimitiveType type);
// Number of explicit mantissa (trailing significand) bits: f32 23, f8e4m3fn 3, f8e8m0fnu 0.
int FloatTypeMantissaBits(PrimitiveType type);
// How many mantissa bits a NaN can carry as a payload, as XLA's NanPayloadBits counts them: the
// mantissa width for the IEEE-like types (f16, bf16, f32, f64, f8e5m2, f8e4m3, f8e3m4), and 0
// for the types with a single NaN encoding (f8e4m3fn, the fnuz types, f8e8m0fnu) or none.
int FloatTypeNaNPayloadBits(PrimitiveType type);
// The payload of the type's default quiet NaN: the top mantissa bit when the type has payload
// bits (f32: 0x400000), otherwise 0.
uint64_t DefaultNaNPayload(PrimitiveType type);

// --- Classifying bits ---------------------------------------------------------------------------

bool IsNaNBits(PrimitiveType type, uint64_t bits);
bool IsInfinityBits(PrimitiveType type, uint64_t bits);
// The payload (mantissa bits) of a NaN, for payload-aware printing. 0 when `bits` is not a NaN
// or the type has no payload bits (FloatTypeNaNPayloadBits(type) == 0).
uint64_t NaNPayload(PrimitiveType type, uint64_t bits);

// --- Conversions --------------------------------------------------------------------------------

// Exact decode of any float type's bits (f16, bf16, f32, f64, all f8 variants, f4e2m1fn,
// f8e8m0fnu). A NaN decodes to a quiet double NaN with the same sign; for the IEEE-like types
// the payload is kept in the top mantissa bits of the double.
double FloatBitsToDouble(PrimitiveType type, uint64_t bits);

// Encodes `value` with round-to-nearest-even directly from the double (no intermediate float,
// so no double rounding), following ml_dtypes' non-saturating conversion:
//  * Overflow (the rounded magnitude exceeds the max finite value) and +/-inf give +/-inf on
//    types with infinity. On types without infinity they give that type's NaN (f8e4m3fn: sign
//    kept, 0x7F/0xFF; fnuz: 0x80; f8e8m0fnu: 0xFF), except f4e2m1fn, which has no NaN either
//    and saturates to +/-6 (ml_dtypes' numeric_limits<float4_e2m1fn>::infinity() is max()).
//  * NaN gives the type's canonical quiet NaN, with the sign where the type has one; f64 keeps
//    the input bits unchanged. f4e2m1fn follows ml_dtypes: its quiet_NaN() is the pattern 0b1000
//    (-0) and the sign is applied by negation, so +NaN -> 0x8 and -NaN -> 0x0.
//  * Denormals are rounded exactly; values below half the smallest denormal become zero.
//  * Negative zero (and negative values that round to zero) become +0 on types without -0.
//  * f8e8m0fnu (unsigned, value 2^(e-127), no zero) rounds to the nearest power of two with a
//    mantissa of exactly 1.5 rounding up; values below 2^-127 become 2^-127 (0x00); zero,
//    negative values, NaN, inf and values >= 1.5 * 2^127 become NaN (0xFF).
uint64_t DoubleToFloatBits(PrimitiveType type, double value);

// For parsing HLO literals: the bits of a NaN with the given sign and optional payload (the
// mantissa bits; nullopt means the default quiet payload). InvalidArgument if the type has no
// NaN (f4e2m1fn), or a payload is given that is zero or does not fit the type's NaN payload
// bits. Types with a single NaN encoding (FloatTypeNaNPayloadBits == 0) accept no payload;
// their sign is kept where the encoding has one (f8e4m3fn) and ignored otherwise.
absl::StatusOr<uint64_t> NaNBits(PrimitiveType type, bool negative,
                                 std::optional<uint64_t> payload);

// Bits of +/-inf. For types without infinity this is what XLA's conversion of an infinite value
// gives: the type's NaN (f8e4m3fn: sign kept; fnuz and f8e8m0fnu: the single NaN). f4e2m1fn has
// neither infinity nor NaN: InvalidArgument (the conversion would silently give +/-6).
absl::StatusOr<uint64_t> InfinityBits(PrimitiveType type, bool negative);

// For parsing: converts a finite decimal value (as parsed into a double) to the type, rejecting
// values whose magnitude, rounded to the type's precision, exceeds the largest finite value
// (so f16 accepts 65519 but rejects 65520, f4e2m1fn accepts 6.9 but rejects 7). For f8e8m0fnu
// zero and negative values are rejected too. Underflow to zero or a denormal is accepted. The
// error is InvalidArgument naming the type and its finite range. A non-finite value is an error
// as well: use NaNBits / InfinityBits for those.
absl::StatusOr<uint64_t> FiniteDoubleToFloatBits(PrimitiveType type, double value);

// Text for a value as XLA's HLO printer writes it (xla/util.cc RoundTripFpToString):
//  * f32: "%.6g", or "%.9g" when the short form does not parse back to the same float.
//  * f64: "%.15g", or "%.17g" when the short form does not parse back to the same double.
//  * narrower types: "%.<max_digits10>g" (XLA's GenericRoundTripFpToString), max_digits10 being
//    ceil(1 + precision * log10(2)): f16 5, bf16 4, the f8e4m3* types and f8e3m4 3,
//    f8e5m2/f8e5m2fnuz/f4e2m1fn/f8e8m0fnu 2. So bf16 0.1 prints "0.1001", as in XLA
//    dumps. The text always reads back (strtod, then DoubleToFloatBits) to the same bits.
//  * "inf", "-inf", "nan", "-nan" (the sign of a NaN is its sign bit, so the fnuz NaN 0x80
//    prints "-nan" as it does in XLA, where it converts to a negative double NaN); a NaN whose
//    payload is not the default quiet payload prints "nan(0x<hex payload>)" / "-nan(0x..)",
//    only for types with NaN payload bits. Negative zero prints "-0".
// Non-float types give an empty string.
std::string FormatFloatBits(PrimitiveType type, uint64_t bits);

// Like FormatFloatBits, but finite values use the shortest "%.Ng" that reads back to the same
// bits (f32 through strtof-exact parsing, others through DoubleToFloatBits); e.g. bf16 0.1 ->
// "0.1", f8e4m3fn 448 -> "4.5e+02". Not what XLA prints; for displays and diagnostics.
std::string FormatFloatBitsShortest(PrimitiveType type, uint64_t bits);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_FLOAT_TYPES_H_
