#include "core/passes/horizontal_fusion.h"

#include <map>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/analysis/cost_model.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/instruction_fusion.h"

namespace hlowb {
namespace {

using fusion::Piece;

// "Small" loop fusions: results up to this many bytes and fused computations up to this many
// instructions; at most this many fusions per horizontal fusion.
constexpr int64_t kMaxResultBytes = 1 << 20;
constexpr int64_t kMaxFusedInstructions = 64;
constexpr size_t kMaxBatch = 16;

bool IsSmallLoopFusion(const Instruction& instr) {
  return instr.opcode() == Opcode::kFusion &&
         instr.attrs_or_default().fusion_kind == FusionKind::kLoop &&
         instr.called_computations().size() == 1 && instr.shape().IsArray() &&
         ShapeByteSize(instr.shape()) <= kMaxResultBytes &&
         instr.called_computations()[0]->instruction_count() <= kMaxFusedInstructions;
}

}  // namespace

absl::StatusOr<bool> HorizontalLoopFusion::Run(Module* module, PassContext& context) {
  NameUniquer names(*module);
  bool changed = false;
  bool out_of_fuel = false;
  fusion::Removed gone;
  for (Computation* comp : fusion::FusibleComputations(*module)) {
    if (out_of_fuel || context.cancelled()) break;
    ComputationEditor editor(comp, &names);
    const absl::flat_hash_set<const Instruction*> control_preds =
        fusion::ControlPredecessorSet(*comp);
    int64_t rewrites = 0;
    std::vector<Instruction*> instrs = comp->instructions();
    for (auto it = instrs.rbegin(); it != instrs.rend() && !out_of_fuel; ++it) {
      Instruction* consumer = *it;
      if (gone.contains(consumer)) continue;
      // Candidates: small loop fusions only `consumer` reads. Each having `consumer` as its
      // only user, none can reach another, so they are independent.
      std::map<PrimitiveType, std::vector<Instruction*>> by_type;
      absl::flat_hash_set<const Instruction*> seen;
      for (Instruction* o : consumer->operands()) {
        if (!seen.insert(o).second || gone.contains(o) || !IsSmallLoopFusion(*o)) continue;
        if (fusion::LiveUsers(editor, o, gone).size() != 1 || o == comp->root()) continue;
        if (!o->control_predecessors().empty() || control_preds.contains(o)) {
          continue;
        }
        by_type[o->shape().element_type()].push_back(o);
      }
      for (auto& [type, group] : by_type) {
        for (size_t start = 0; start + 1 < group.size() && !out_of_fuel; start += kMaxBatch) {
          std::vector<Piece> pieces;
          for (size_t i = start; i < group.size() && i < start + kMaxBatch; ++i) {
            pieces.push_back(Piece{group[i], true, false});
          }
          if (pieces.size() < 2) break;
          if (!context.ConsumeFuel(name())) {
            out_of_fuel = true;
            break;
          }
          absl::StatusOr<Instruction*> f = fusion::CombineIntoFusion(
              editor, pieces, FusionKind::kLoop, &gone, "horizontally_fused_computation",
              /*reuse_first=*/false);
          if (!f.ok()) return f.status();
          fusion::NoteRewrite(editor, &rewrites);
          changed = true;
        }
      }
    }
    editor.Finish();
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
