// "horizontal_loop_fusion" (the GPU pipeline's pass): small loop fusions that are independent
// of each other (each read only by the same consumer, e.g. the operands of one tuple or
// concatenate) and produce the same element type are fused side by side into one
// multi-output loop fusion ("horizontally_fused_computation") with a tuple root, so they run
// as one kernel launch instead of several.
//
// Deliberately not here: XLA's sliced-input form (outputs flattened, concatenated and sliced
// back), which only changes how the kernel is emitted; the tuple-root form computes the same.
#ifndef HLOWB_CORE_PASSES_HORIZONTAL_FUSION_H_
#define HLOWB_CORE_PASSES_HORIZONTAL_FUSION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class HorizontalLoopFusion : public HloPass {
 public:
  std::string_view name() const override { return "horizontal_loop_fusion"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HORIZONTAL_FUSION_H_
