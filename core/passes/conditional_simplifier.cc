#include "core/passes/conditional_simplifier.h"

#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/while_loop_simplifier.h"

namespace hlowb {
namespace {

// The branch a conditional takes when it is known before it runs.
std::optional<int64_t> KnownBranch(const Instruction& cond) {
  const int64_t branches = static_cast<int64_t>(cond.called_computations().size());
  if (branches == 1) return 0;
  const Instruction* selector = cond.operand(0);
  if (selector->opcode() != Opcode::kConstant || !selector->literal()) return std::nullopt;
  const Literal& lit = *selector->literal();
  if (lit.elided() || !lit.shape().IsScalar() || lit.element_count() != 1) return std::nullopt;
  const PrimitiveType type = lit.shape().element_type();
  if (type == PrimitiveType::kPred) {
    if (branches != 2) return std::nullopt;
    return lit.GetBits(0) != 0 ? 0 : 1;  // true_computation, false_computation
  }
  if (!IsIntegral(type)) return std::nullopt;
  const bool is_signed = IsSignedIntegral(type);
  const int64_t index = is_signed ? lit.GetInt(0) : static_cast<int64_t>(lit.GetBits(0));
  if ((is_signed && index < 0) || index >= branches ||
      (!is_signed && lit.GetBits(0) >= static_cast<uint64_t>(branches))) {
    return branches - 1;
  }
  return index;
}

class Simplifier {
 public:
  Simplifier(Module* module, PassContext& context, std::string_view pass_name)
      : module_(module), context_(context), pass_name_(pass_name), names_(*module) {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    std::vector<Computation*> comps;
    for (const auto& c : module_->computations()) comps.push_back(c.get());
    for (Computation* comp : comps) {
      if (context_.cancelled()) break;
      std::vector<Instruction*> conds;
      for (Instruction* i : comp->instructions()) {
        if (i->opcode() == Opcode::kConditional) conds.push_back(i);
      }
      if (conds.empty()) continue;
      ComputationEditor editor(comp, &names_);
      bool comp_changed = false;
      for (Instruction* cond : conds) {
        absl::StatusOr<bool> r = Simplify(editor, cond);
        if (!r.ok()) return r.status();
        comp_changed |= *r;
      }
      if (comp_changed) {
        editor.Finish();
        changed = true;
      }
    }
    if (changed) RemoveUnreachableComputations(module_);
    return changed;
  }

 private:
  absl::StatusOr<bool> Simplify(ComputationEditor& editor, Instruction* cond) {
    const auto& branches = cond->called_computations();
    if (branches.empty() || cond->operand_count() != static_cast<int>(branches.size()) + 1) {
      return false;
    }
    for (const Computation* b : branches) {
      if (!b || b == editor.computation() || b->parameter_count() != 1) return false;
    }
    std::optional<int64_t> taken = KnownBranch(*cond);
    if (taken && cond->control_predecessors().empty() &&
        editor.control_successors(cond).empty()) {
      if (!context_.ConsumeFuel(pass_name_)) return false;
      absl::StatusOr<Instruction*> result = InlineComputation(
          editor, *branches[*taken], {cond->operand(static_cast<int>(*taken) + 1)});
      if (!result.ok()) return result.status();
      editor.ReplaceAllUsesWith(cond, *result);
      EraseInstruction(editor.computation(), cond);
      callers_dirty_ = true;
      return true;
    }
    return RemoveUnusedOutputs(editor, cond);
  }

  const absl::flat_hash_map<const Computation*, std::vector<Instruction*>>& Callers() {
    if (callers_dirty_) {
      callers_ = ComputeCallers(*module_);
      callers_dirty_ = false;
    }
    return callers_;
  }

  bool CalledOnlyBy(const Computation* comp, const Instruction* caller) {
    auto it = Callers().find(comp);
    if (it == Callers().end()) return false;
    for (const Instruction* c : it->second) {
      if (c != caller) return false;
    }
    return true;
  }

  bool RemoveUnusedOutputs(ComputationEditor& editor, Instruction* cond) {
    const Shape& shape = cond->shape();
    if (!shape.IsTuple() || shape.tuple_count() == 0 || cond->IsRoot()) return false;
    const std::vector<Instruction*> users = editor.users(cond);
    if (users.empty()) return false;
    const int n = shape.tuple_count();
    std::vector<bool> used(n, false);
    for (const Instruction* u : users) {
      if (u->opcode() != Opcode::kGetTupleElement || u->tuple_index() >= n) return false;
      used[u->tuple_index()] = true;
    }
    std::vector<int64_t> new_index(n, -1);
    std::vector<Shape> kept;
    for (int k = 0; k < n; ++k) {
      if (!used[k]) continue;
      new_index[k] = static_cast<int64_t>(kept.size());
      kept.push_back(shape.tuple_shape(k));
    }
    if (static_cast<int>(kept.size()) == n) return false;
    // Each branch must be this conditional's alone, and listed once.
    const auto& branches = cond->called_computations();
    for (size_t b = 0; b < branches.size(); ++b) {
      if (!CalledOnlyBy(branches[b], cond) || !branches[b]->root()) return false;
      for (size_t c = 0; c < b; ++c) {
        if (branches[c] == branches[b]) return false;
      }
    }
    if (!context_.ConsumeFuel(pass_name_)) return false;
    const Shape* new_shape = module_->InternShape(Shape::Tuple(kept));
    for (Computation* branch : branches) {
      ComputationEditor branch_editor(branch, &names_);
      Instruction* root = branch->root();
      std::vector<Instruction*> elements;
      for (int k = 0; k < n; ++k) {
        if (!used[k]) continue;
        if (root->opcode() == Opcode::kTuple && root->operand_count() == n) {
          elements.push_back(root->operand(k));
        } else {
          Instruction* g =
              branch_editor.Add(Opcode::kGetTupleElement, shape.tuple_shape(k), {root});
          g->set_index(k);
          elements.push_back(g);
        }
      }
      branch_editor.SetRoot(branch_editor.Add(Opcode::kTuple, *new_shape, elements));
      branch_editor.Finish();
    }
    cond->set_shape(new_shape);
    for (Instruction* u : users) u->set_index(new_index[u->tuple_index()]);
    return true;
  }

  Module* module_;
  PassContext& context_;
  std::string_view pass_name_;
  NameUniquer names_;
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers_;
  bool callers_dirty_ = true;
};

}  // namespace

absl::StatusOr<bool> ConditionalSimplifier::Run(Module* module, PassContext& context) {
  Simplifier simplifier(module, context, name());
  return simplifier.Run();
}

}  // namespace hlowb
