// "operand_upcaster": makes dot and convolution compute in their result type. An operand whose
// element type is narrower than the result's (bf16 x bf16 -> f32, s8 x s8 -> s32) is converted
// to the result type first. Target-driven: when the target has no native bf16 (or f16) dot,
// such dots and convolutions with a bf16 (f16) result compute in f32 (operands converted to
// f32, the dot in f32, the result converted back).
//
// Deliberately not here: operands with packed-nibble precision (kept narrow on purpose),
// sparse-dot metadata operands, conversions between integer and float types, and any
// narrowing; element types are never changed where the result type is not wider.
#ifndef HLOWB_CORE_PASSES_OPERAND_UPCASTER_H_
#define HLOWB_CORE_PASSES_OPERAND_UPCASTER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class OperandUpcaster : public HloPass {
 public:
  std::string_view name() const override { return "operand_upcaster"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_OPERAND_UPCASTER_H_
