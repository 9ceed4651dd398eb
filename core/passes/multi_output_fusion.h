// "multi_output_fusion": merges fusions that would otherwise read the same data twice or write
// a value only to read it back, into one fusion with a tuple root; the old users read their
// values through get-tuple-element.
//   siblings: two fusions (loop or reduction input fusions) or plain reductions that read the
//             same non-scalar operand, have the same iteration space (equal result shapes, or
//             equal reduction inputs and dimensions) and no data path between them;
//   producer-consumer: a loop fusion or elementwise instruction with several users is fused
//             into one of its fusion users, its value kept as an extra output for the others
//             (only when no other path leads from it to that user, which would form a cycle).
//
// Deliberately not here: XLA's GPU profitability model (shared-memory budgets, the "heavy
// reduction" checks, transpose heroes); only the structural conditions above and a size limit.
#ifndef HLOWB_CORE_PASSES_MULTI_OUTPUT_FUSION_H_
#define HLOWB_CORE_PASSES_MULTI_OUTPUT_FUSION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class MultiOutputFusion : public HloPass {
 public:
  std::string_view name() const override { return "multi_output_fusion"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_MULTI_OUTPUT_FUSION_H_
