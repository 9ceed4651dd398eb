#include "core/passes/fusion_merger.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/analysis/cost_model.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/instruction_fusion.h"

namespace hlowb {
namespace {

using fusion::Piece;

// Merged fused computations larger than this are not created.
constexpr int64_t kMaxFusedInstructions = 200;

int64_t FusedSize(const Instruction& instr) {
  return instr.called_computations().empty()
             ? 1
             : instr.called_computations()[0]->instruction_count();
}

bool IsLoopFusion(const Instruction& instr) {
  return instr.opcode() == Opcode::kFusion &&
         instr.attrs_or_default().fusion_kind == FusionKind::kLoop &&
         instr.called_computations().size() == 1;
}

bool IsMergeTarget(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFusion || instr.called_computations().size() != 1) return false;
  FusionKind k = instr.attrs_or_default().fusion_kind;
  return k == FusionKind::kLoop || k == FusionKind::kInput;
}

}  // namespace

absl::StatusOr<bool> FusionMerger::Run(Module* module, PassContext& context) {
  NameUniquer names(*module);
  bool changed = false;
  bool out_of_fuel = false;
  fusion::Removed gone;
  for (Computation* comp : fusion::FusibleComputations(*module)) {
    if (out_of_fuel || context.cancelled()) break;
    ComputationEditor editor(comp, &names);
    const absl::flat_hash_set<const Instruction*> control_preds =
        fusion::ControlPredecessorSet(*comp);
    auto usable = [&](const Instruction* i) {
      return !gone.contains(i) && !fusion::IsDead(editor, i) &&
             i->control_predecessors().empty() && !control_preds.contains(i);
    };
    int64_t rewrites = 0;
    std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* producer : instrs) {
      if (out_of_fuel) break;
      if (!usable(producer) || !IsLoopFusion(*producer) || !producer->shape().IsArray() ||
          producer == comp->root()) {
        continue;
      }
      std::vector<Instruction*> users = fusion::LiveUsers(editor, producer, gone);
      if (users.empty()) continue;
      bool ok = true;
      for (const Instruction* u : users) {
        ok &= usable(u) && IsMergeTarget(*u) &&
              FusedSize(*u) + FusedSize(*producer) <= kMaxFusedInstructions;
      }
      if (!ok) continue;
      // Never recompute expensive work in several consumers.
      if (users.size() > 1 && fusion::IsExpensive(*producer)) continue;
      // Memory traffic now: the producer reads its operands, writes its result, and every
      // user reads the result back. Merged: every user reads the producer's operands it does
      // not read already.
      absl::flat_hash_set<const Instruction*> inputs(producer->operands().begin(),
                                                     producer->operands().end());
      int64_t input_bytes = 0;
      for (const Instruction* o : inputs) input_bytes += ShapeByteSize(o->shape());
      const int64_t result_bytes = ShapeByteSize(producer->shape());
      const int64_t now = input_bytes + result_bytes * (1 + static_cast<int64_t>(users.size()));
      int64_t merged = 0;
      for (const Instruction* u : users) {
        absl::flat_hash_set<const Instruction*> read(u->operands().begin(), u->operands().end());
        for (const Instruction* o : inputs) {
          if (!read.contains(o)) merged += ShapeByteSize(o->shape());
        }
      }
      if (merged > now) continue;
      for (size_t i = 0; i < users.size(); ++i) {
        if (!context.ConsumeFuel(name())) {
          out_of_fuel = true;
          break;
        }
        const bool last = i + 1 == users.size();
        absl::StatusOr<Instruction*> f = fusion::CombineIntoFusion(
            editor, {Piece{users[i], true, false}, Piece{producer, false, !last}},
            users[i]->attrs_or_default().fusion_kind, &gone);
        if (!f.ok()) return f.status();
        fusion::NoteRewrite(editor, &rewrites);
        changed = true;
      }
    }
    editor.Finish();
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
