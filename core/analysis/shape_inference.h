// Result-shape inference for HLO instructions, following XLA's rules
// (xla/service/shape_inference.cc and the shape checks of xla/service/hlo_verifier.cc).
//
// InferShape looks only at the instruction's opcode, its operands' shapes, its attributes, the
// signatures of the computations it calls and, where the operands cannot determine it, the
// parts of the declared result shape that XLA takes from the declaration (the target type of
// convert, the dimensions of reshape, the data shape of recv/infeed, ...). A declared shape
// "exists" when its element type is not kInvalid; the parser leaves it kInvalid when the text
// omits the shape.
//
// Errors come in two kinds so callers can tell them apart:
//   * absl::UnimplementedError: the shape cannot be inferred without (more of) a declared
//     shape, or an operand's own shape is not known yet, or the opcode's rules are not
//     modelled (custom-call, scan, shuffle, ...). This says nothing about validity.
//   * absl::InvalidArgumentError: the instruction violates XLA's rules; the message says what
//     is wrong, e.g. "operand 1 of add has shape f32[3] but operand 0 has f32[4]".
//
// Results carry no layout, except where the result is by rule an operand's shape (copy, tuple
// elements, get-tuple-element, while, ...), which keeps the operand's layout. Dynamic
// dimension flags are propagated on a best-effort basis; compare results with
// ShapesCompatible, which ignores them as XLA's ShapeUtil::Compatible does.
//
// Inference never aborts: null operands, missing called computations, out-of-range dimension
// numbers, absurd sizes and arithmetic overflow all come back as errors. Operands and called
// computations must be resolved (non-null) for a result; an operand whose own shape is not
// known yet (kInvalid) gives UnimplementedError.
#ifndef HLOWB_CORE_ANALYSIS_SHAPE_INFERENCE_H_
#define HLOWB_CORE_ANALYSIS_SHAPE_INFERENCE_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/shape.h"

namespace hlowb {

absl::StatusOr<Shape> InferShape(const Instruction& instr);

// True when the instruction carries a result shape (the parser leaves the element type
// kInvalid when the text omits it).
bool HasDeclaredShape(const Instruction& instr);

// XLA's ShapeUtil::Compatible: same element types and dimension sizes, recursively through
// tuples; layouts and dynamic-dimension flags are ignored.
bool ShapesCompatible(const Shape& a, const Shape& b);
// As ShapesCompatible, but any two floating-point element types match (XLA's
// CompatibleIgnoringFpPrecision).
bool ShapesCompatibleIgnoringFpPrecision(const Shape& a, const Shape& b);

// Checks a shape's own invariants: a valid element type, non-negative (or unbounded `?`)
// dimensions, no dimensions on tokens and opaque values, buffers wrapping arrays, and a
// layout whose minor_to_major list (when present) is a permutation of 0..rank-1.
absl::Status ValidateShape(const Shape& shape);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_SHAPE_INFERENCE_H_
