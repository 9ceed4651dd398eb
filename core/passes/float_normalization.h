// "float-normalization-bf16": for a target without bf16 arithmetic (the CPU), computes bf16
// elementwise operations, compares, reduce and reduce-window in f32: bf16 operands are
// converted to f32, the operation runs in f32 and a bf16 result is converted back. A reduce's
// or reduce-window's scalar reducer is cloned with its bf16 values made f32 (and used only by
// the f32 instruction). Data movement (broadcast, reshape, transpose, slice, concatenate,
// select, copy, tuple, ...) and convert stay in bf16, as the target handles them natively.
//
// Deliberately not here: dot and convolution (operand_upcaster's business), variadic reduces,
// reducers containing anything but parameters, constants and elementwise scalar arithmetic
// (left in bf16), other low-precision types (f16, f8), and the removal of the convert pairs the
// rewrite leaves between neighbouring operations (algebraic simplification's job).
#ifndef HLOWB_CORE_PASSES_FLOAT_NORMALIZATION_H_
#define HLOWB_CORE_PASSES_FLOAT_NORMALIZATION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class FloatNormalization : public HloPass {
 public:
  std::string_view name() const override { return "float-normalization-bf16"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_FLOAT_NORMALIZATION_H_
