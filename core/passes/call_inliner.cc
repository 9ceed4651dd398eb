#include "core/passes/call_inliner.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

bool Inlineable(const Instruction& call) {
  if (call.opcode() != Opcode::kCall || call.called_computations().size() != 1) return false;
  const Computation* callee = call.called_computations()[0];
  if (callee == nullptr || callee == call.parent() || callee->root() == nullptr) return false;
  if (callee->execution_thread() != call.parent()->execution_thread()) return false;
  if (callee->parameter_count() != call.operand_count()) return false;
  for (const Instruction* p : callee->parameters()) {
    if (p == nullptr) return false;
  }
  return true;
}

// Copies the callee of `call` into the editor's computation and rewires every use of the call.
// The call itself is taken out of the instruction list.
absl::Status InlineCall(Instruction* call, ComputationEditor& editor) {
  Computation* callee = call->called_computations()[0];
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int i = 0; i < callee->parameter_count(); ++i) map[callee->parameter(i)] = call->operand(i);
  std::vector<Instruction*> clones;
  for (const Instruction* instr : callee->instructions()) {
    if (instr->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    operands.reserve(instr->operands().size());
    for (Instruction* op : instr->operands()) {
      auto it = map.find(op);
      if (it == map.end()) {
        return absl::InvalidArgumentError(
            StrCat("call-inliner: operand ", op ? op->name() : "<null>", " of ", instr->name(),
                   " in ", callee->name(), " is not defined before it"));
      }
      operands.push_back(it->second);
    }
    Instruction* clone = editor.AddLike(*instr, instr->shape(), std::move(operands));
    clone->mutable_control_predecessors()->clear();
    map[instr] = clone;
    clones.push_back(clone);
  }
  // Control edges inside the callee, then the call's own edges: its predecessors go before the
  // copies that depend on nothing copied, its successors after the copies nothing copied uses.
  absl::flat_hash_set<const Instruction*> clone_set(clones.begin(), clones.end());
  absl::flat_hash_set<const Instruction*> used_inside;
  for (const Instruction* instr : callee->instructions()) {
    if (instr->opcode() == Opcode::kParameter) continue;
    Instruction* clone = map[instr];
    for (Instruction* p : instr->control_predecessors()) {
      auto it = map.find(p);
      if (it != map.end() && clone_set.contains(it->second)) {
        clone->mutable_control_predecessors()->push_back(it->second);
      }
    }
  }
  for (Instruction* clone : clones) {
    for (Instruction* op : clone->operands()) used_inside.insert(op);
    for (Instruction* p : clone->control_predecessors()) used_inside.insert(p);
  }
  if (!call->control_predecessors().empty()) {
    for (Instruction* clone : clones) {
      bool depends_inside = false;
      for (Instruction* op : clone->operands()) depends_inside |= clone_set.contains(op);
      depends_inside |= !clone->control_predecessors().empty();
      if (depends_inside) continue;
      for (Instruction* p : call->control_predecessors()) {
        clone->mutable_control_predecessors()->push_back(p);
      }
    }
  }
  std::vector<Instruction*> sinks;
  for (Instruction* clone : clones) {
    if (!used_inside.contains(clone)) sinks.push_back(clone);
  }
  for (Instruction* successor : editor.control_successors(call)) {
    auto& preds = *successor->mutable_control_predecessors();
    preds.erase(std::remove(preds.begin(), preds.end(), call), preds.end());
    for (Instruction* s : sinks) {
      if (std::find(preds.begin(), preds.end(), s) == preds.end()) preds.push_back(s);
    }
  }
  Instruction* new_root = map[callee->root()];
  editor.ReplaceAllUsesWith(call, new_root);
  std::vector<Instruction*> remaining = editor.computation()->instructions();
  remaining.erase(std::remove(remaining.begin(), remaining.end(), call), remaining.end());
  editor.computation()->SetInstructions(std::move(remaining));
  editor.RebuildUsers();
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> CallInliner::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  // Callees come before callers, so a callee's own calls are already inlined when it is copied.
  std::vector<Computation*> comps;
  for (const auto& c : module->computations()) comps.push_back(c.get());
  for (Computation* comp : comps) {
    ComputationEditor editor(comp, &names);
    bool comp_changed = false;
    // Repeats for callees that (against the usual order) come after their callers.
    for (int round = 0; round < 64; ++round) {
      std::vector<Instruction*> calls;
      for (Instruction* instr : comp->instructions()) {
        if (Inlineable(*instr)) calls.push_back(instr);
      }
      bool round_changed = false;
      for (Instruction* call : calls) {
        if (!context.ConsumeFuel(name())) continue;
        absl::Status s = InlineCall(call, editor);
        if (!s.ok()) return s;
        round_changed = true;
      }
      if (!round_changed) break;
      comp_changed = true;
      editor.Finish();
    }
    changed |= comp_changed;
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
