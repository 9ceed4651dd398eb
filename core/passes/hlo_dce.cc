#include "core/passes/hlo_dce.h"

#include "core/support/strings.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {

absl::StatusOr<bool> HloDce::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> saved = comp->instructions();
    ComputationEditor editor(comp.get(), &names);
    if (!editor.Finish(/*remove_dead=*/true)) continue;
    // One unit of fuel per computation cleaned.
    if (!context.ConsumeFuel(name())) {
      comp->SetInstructions(std::move(saved));
      continue;
    }
    changed = true;
  }
  changed |= RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
