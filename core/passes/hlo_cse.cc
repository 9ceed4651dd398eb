#include "core/passes/hlo_cse.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

bool ContainsToken(const Shape& shape) {
  if (shape.IsToken()) return true;
  for (const Shape& s : shape.tuple_shapes()) {
    if (ContainsToken(s)) return true;
  }
  return false;
}

// Gives structurally equal computations the same class number, so that two reduces with
// distinct but identical `to_apply` computations still merge.
class ComputationClasses {
 public:
  int64_t ClassOf(const Computation* comp) {
    if (comp == nullptr) return -1;
    auto it = memo_.find(comp);
    if (it != memo_.end()) return it->second;
    // Recursion guard for malformed call graphs: a unique class while in progress.
    memo_[comp] = next_unique_--;
    absl::flat_hash_map<const Instruction*, int64_t> position;
    const auto& instrs = comp->instructions();
    for (size_t i = 0; i < instrs.size(); ++i) position[instrs[i]] = static_cast<int64_t>(i);
    std::string key = StrCat("thread=", comp->execution_thread(), ";");
    for (const Instruction* instr : instrs) {
      StrAppend(&key, InstructionSignature(*instr), "[");
      for (const Instruction* op : instr->operands()) {
        auto p = position.find(op);
        StrAppend(&key, p == position.end() ? int64_t{-1} : p->second, ",");
      }
      StrAppend(&key, "]{");
      for (const Computation* c : instr->called_computations()) StrAppend(&key, ClassOf(c), ",");
      StrAppend(&key, "}<");
      for (const Instruction* p : instr->control_predecessors()) {
        auto q = position.find(p);
        StrAppend(&key, q == position.end() ? int64_t{-1} : q->second, ",");
      }
      StrAppend(&key, ">;");
    }
    auto r = position.find(comp->root());
    StrAppend(&key, "root=", r == position.end() ? int64_t{-1} : r->second);
    auto [cls, inserted] = classes_.try_emplace(std::move(key), next_class_);
    if (inserted) ++next_class_;
    memo_[comp] = cls->second;
    return cls->second;
  }

 private:
  absl::flat_hash_map<const Computation*, int64_t> memo_;
  absl::flat_hash_map<std::string, int64_t> classes_;
  int64_t next_class_ = 0;
  int64_t next_unique_ = -2;
};

// Merges equal constants; returns true when something merged.
bool CombineConstants(ComputationEditor& editor,
                      const absl::flat_hash_set<const Instruction*>& has_control_edges,
                      std::string_view pass_name, PassContext& context) {
  bool changed = false;
  absl::flat_hash_map<size_t, std::vector<Instruction*>> buckets;
  const std::vector<Instruction*> instrs = editor.computation()->instructions();
  for (Instruction* instr : instrs) {
    if (instr->opcode() != Opcode::kConstant || instr->literal() == nullptr) continue;
    if (instr->literal()->elided() || has_control_edges.contains(instr)) continue;
    const Literal& lit = *instr->literal();
    size_t h = absl::HashOf(instr->shape().Hash(),
                            std::string_view(reinterpret_cast<const char*>(lit.data().data()),
                                             lit.data().size()));
    std::vector<Instruction*>& bucket = buckets[h];
    Instruction* match = nullptr;
    for (Instruction* candidate : bucket) {
      if (candidate->shape() == instr->shape() && *candidate->literal() == lit) {
        match = candidate;
        break;
      }
    }
    if (match == nullptr) {
      bucket.push_back(instr);
      continue;
    }
    if (!context.ConsumeFuel(pass_name)) continue;
    editor.ReplaceAllUsesWith(instr, match);
    changed = true;
  }
  return changed;
}

bool Eligible(const Instruction& instr,
              const absl::flat_hash_set<const Instruction*>& has_control_edges) {
  if (instr.opcode() == Opcode::kParameter || instr.opcode() == Opcode::kConstant) return false;
  if (instr.operand_count() == 0 && instr.opcode() != Opcode::kReplicaId &&
      instr.opcode() != Opcode::kPartitionId) {
    return false;
  }
  if (has_control_edges.contains(&instr)) return false;
  if (ContainsToken(instr.shape())) return false;
  return !HasSideEffect(instr);
}

}  // namespace

absl::StatusOr<bool> HloCse::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  ComputationClasses classes;
  for (const auto& comp : module->computations()) {
    absl::flat_hash_set<const Instruction*> has_control_edges;
    for (const Instruction* instr : comp->instructions()) {
      if (instr->control_predecessors().empty()) continue;
      has_control_edges.insert(instr);
      for (const Instruction* p : instr->control_predecessors()) has_control_edges.insert(p);
    }
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = CombineConstants(editor, has_control_edges, name(), context);
    // One sweep in definition order merges whole chains, since users are keyed after their
    // operands were merged; repeat in case the input order was not defs-before-uses.
    for (int sweep = 0; sweep < 8; ++sweep) {
      bool sweep_changed = false;
      absl::flat_hash_map<std::string, Instruction*> seen;
      const std::vector<Instruction*> instrs = comp->instructions();
      for (Instruction* instr : instrs) {
        if (!Eligible(*instr, has_control_edges)) continue;
        std::string key = InstructionSignature(*instr);
        key.append("|");
        for (const Instruction* op : instr->operands()) {
          StrAppend(&key, reinterpret_cast<uintptr_t>(op), ",");
        }
        key.append("|");
        for (const Computation* c : instr->called_computations()) {
          StrAppend(&key, classes.ClassOf(c), ",");
        }
        auto [it, inserted] = seen.try_emplace(std::move(key), instr);
        if (inserted || it->second == instr) continue;
        if (!context.ConsumeFuel(name())) continue;
        editor.ReplaceAllUsesWith(instr, it->second);
        sweep_changed = true;
      }
      if (!sweep_changed) break;
      comp_changed = true;
      editor.Finish();
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlowb
