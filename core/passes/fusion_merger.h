// "fusion_merger": a loop fusion whose result only other fusions (loop or input fusions) read
// is merged into each of them when that lowers memory traffic: the merged consumers read the
// producer's operands instead of its result, so the producer's result is never written or read
// back. Bytes come from core/analysis/cost_model.h's ShapeByteSize; a producer containing
// expensive instructions is merged only when it has a single user (never recomputed).
//
// Deliberately not here: XLA's GPU occupancy and code-size heuristics; merging into output
// fusions or into non-fusion users.
#ifndef HLOWB_CORE_PASSES_FUSION_MERGER_H_
#define HLOWB_CORE_PASSES_FUSION_MERGER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class FusionMerger : public HloPass {
 public:
  std::string_view name() const override { return "fusion_merger"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_FUSION_MERGER_H_
