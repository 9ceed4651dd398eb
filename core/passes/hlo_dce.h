// "dce": removes instructions whose results nothing uses (keeping parameters, roots and
// instructions with side effects) in every computation, then computations nothing calls.
#ifndef HLOWB_CORE_PASSES_HLO_DCE_H_
#define HLOWB_CORE_PASSES_HLO_DCE_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class HloDce : public HloPass {
 public:
  std::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_DCE_H_
