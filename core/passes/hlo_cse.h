// "cse": common subexpression elimination inside each computation. Constants with equal
// literals and equal shapes are merged first; then, in definition order, an instruction that
// computes exactly what an earlier one computes (same opcode, result shape with layout,
// attributes, sharding, operands and called computations, the latter compared by structure)
// is replaced by the earlier one. Repeats until nothing merges, so chains collapse.
//
// Deliberately not done: merging instructions with side effects, token results or control
// dependencies; merging zero-operand instructions other than constants, replica-id and
// partition-id (parameters and iotas stay apart); merging elided constants (their values are
// unknown); treating add(a, b) and add(b, a) as equal; merging across computations.
#ifndef HLOWB_CORE_PASSES_HLO_CSE_H_
#define HLOWB_CORE_PASSES_HLO_CSE_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class HloCse : public HloPass {
 public:
  std::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_CSE_H_
