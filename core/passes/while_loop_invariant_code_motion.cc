#include "core/passes/while_loop_invariant_code_motion.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// Instructions of `comp` with every operand before its users (the stored order usually is one
// already; this does not rely on it).
std::vector<Instruction*> PostOrder(const Computation& comp) {
  std::vector<Instruction*> order;
  absl::flat_hash_set<const Instruction*> in_comp(comp.instructions().begin(),
                                                  comp.instructions().end());
  absl::flat_hash_map<const Instruction*, uint8_t> state;  // 1 = visiting, 2 = done
  for (Instruction* start : comp.instructions()) {
    if (state[start] != 0) continue;
    std::vector<std::pair<Instruction*, int>> stack{{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [instr, next] = stack.back();
      if (next < instr->operand_count()) {
        Instruction* op = instr->operand(next++);
        if (op && in_comp.contains(op) && state[op] == 0) {
          state[op] = 1;
          stack.push_back({op, 0});
        }
        continue;
      }
      state[instr] = 2;
      order.push_back(instr);
      stack.pop_back();
    }
  }
  return order;
}

// Invariant instructions that are not hoisted unless something hoisted needs them.
bool NotWorthHoistingAlone(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    default:
      return false;
  }
}

// Never moved out of a loop, whatever their operands. `ordered` holds the instructions that
// something depends on by a control edge.
bool Unmovable(const Instruction& instr,
               const absl::flat_hash_set<const Instruction*>& ordered) {
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kAfterAll:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return true;
    default:
      break;
  }
  if (!instr.control_predecessors().empty() || ordered.contains(&instr)) return true;
  return HasSideEffect(instr);
}

class Hoister {
 public:
  Hoister(Module* module, PassContext& context, std::string_view pass_name)
      : module_(module), context_(context), pass_name_(pass_name), names_(*module) {}

  bool Run() {
    bool changed = false;
    callers_ = ComputeCallers(*module_);
    std::vector<Computation*> comps;
    for (const auto& c : module_->computations()) comps.push_back(c.get());
    for (Computation* comp : comps) {
      if (context_.cancelled()) break;
      std::vector<Instruction*> loops;
      for (Instruction* i : comp->instructions()) {
        if (i->opcode() == Opcode::kWhile) loops.push_back(i);
      }
      if (loops.empty()) continue;
      ComputationEditor editor(comp, &names_);
      bool comp_changed = false;
      for (Instruction* loop : loops) comp_changed |= HoistFrom(editor, loop);
      if (comp_changed) {
        editor.Finish();
        changed = true;
      }
    }
    return changed;
  }

 private:
  bool CalledOnlyBy(const Computation* comp, const Instruction* caller) const {
    auto it = callers_.find(comp);
    if (it == callers_.end()) return false;
    for (const Instruction* c : it->second) {
      if (c != caller) return false;
    }
    return true;
  }

  bool HoistFrom(ComputationEditor& editor, Instruction* loop) {
    if (loop->called_computations().size() != 2 || loop->operand_count() != 1) return false;
    Computation* cond = loop->called_computations()[0];
    Computation* body = loop->called_computations()[1];
    if (!cond || !body || cond == body || cond == editor.computation() ||
        body == editor.computation()) {
      return false;
    }
    const Shape& state = loop->shape();
    if (!state.IsTuple() || body->parameter_count() != 1 || cond->parameter_count() != 1) {
      return false;
    }
    const int n = state.tuple_count();
    Instruction* root = body->root();
    if (!root || root->opcode() != Opcode::kTuple || root->operand_count() != n) return false;
    if (!CalledOnlyBy(cond, loop) || !CalledOnlyBy(body, loop)) return false;
    Instruction* body_param = body->parameter(0);

    ComputationEditor body_editor(body, &names_);
    // The state grows: every reader of the whole state (a call, a nested tuple) would see the
    // wrong shape, so both computations must read it element by element.
    for (const Instruction* u : body_editor.users(body_param)) {
      if (u->opcode() != Opcode::kGetTupleElement) return false;
    }
    {
      ComputationEditor cond_editor(cond, &names_);
      for (const Instruction* u : cond_editor.users(cond->parameter(0))) {
        if (u->opcode() != Opcode::kGetTupleElement) return false;
      }
      if (cond->root() == cond->parameter(0)) return false;
    }
    // Elements the body passes through unchanged.
    std::vector<bool> invariant_element(n, false);
    for (int k = 0; k < n; ++k) {
      const Instruction* next = root->operand(k);
      invariant_element[k] = next->opcode() == Opcode::kGetTupleElement &&
                             next->operand(0) == body_param && next->tuple_index() == k;
    }
    absl::flat_hash_set<const Instruction*> ordered;
    for (const Instruction* i : body->instructions()) {
      for (const Instruction* pred : i->control_predecessors()) ordered.insert(pred);
    }
    absl::flat_hash_set<const Instruction*> invariant;
    absl::flat_hash_set<const Instruction*> constant_derived;
    std::vector<Instruction*> hoisted;  // in post order
    absl::flat_hash_set<const Instruction*> hoisted_set;
    const std::vector<Instruction*> order = PostOrder(*body);
    for (Instruction* instr : order) {
      if (instr == root) continue;
      if (instr->opcode() == Opcode::kGetTupleElement && instr->operand(0) == body_param) {
        if (instr->tuple_index() >= 0 && instr->tuple_index() < n &&
            invariant_element[instr->tuple_index()]) {
          invariant.insert(instr);
        }
        continue;
      }
      if (Unmovable(*instr, ordered)) continue;
      if (instr->shape().IsTuple() && instr->opcode() != Opcode::kTuple) continue;
      bool all_invariant = true;
      for (const Instruction* op : instr->operands()) {
        if (!invariant.contains(op)) {
          all_invariant = false;
          break;
        }
      }
      if (!all_invariant) continue;
      invariant.insert(instr);
      // Values computed from constants alone (a converted or reshaped constant) stay where they
      // are: constant folding turns them into constants the body's fusions and simplifications
      // can see, while a hoisted one becomes an opaque loop-state element.
      bool from_constants = instr->opcode() == Opcode::kConstant;
      if (!from_constants && instr->operand_count() > 0) {
        from_constants = true;
        for (const Instruction* op : instr->operands()) {
          from_constants &= constant_derived.contains(op);
        }
      }
      if (from_constants) {
        constant_derived.insert(instr);
        continue;
      }
      if (NotWorthHoistingAlone(*instr) || instr->shape().IsTuple()) continue;
      if (body_editor.user_count(instr) == 0) continue;
      if (!context_.ConsumeFuel(pass_name_)) break;
      hoisted.push_back(instr);
      hoisted_set.insert(instr);
    }
    if (hoisted.empty()) return false;

    // Copies in front of the loop: loop-state elements read the initial state.
    Instruction* init = loop->operand(0);
    absl::flat_hash_map<const Instruction*, Instruction*> outside;
    std::vector<Instruction*> init_elements(n, nullptr);
    auto init_element = [&](int k) {
      if (!init_elements[k]) {
        if (init->opcode() == Opcode::kTuple && init->operand_count() == n) {
          init_elements[k] = init->operand(k);
        } else {
          init_elements[k] = editor.Add(Opcode::kGetTupleElement, state.tuple_shape(k), {init});
          init_elements[k]->set_index(k);
        }
      }
      return init_elements[k];
    };
    // Operands precede users in `order`, so copying in that order finds operands copied.
    absl::flat_hash_set<const Instruction*> needed(hoisted.begin(), hoisted.end());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (!needed.contains(*it)) continue;
      if ((*it)->opcode() == Opcode::kGetTupleElement && (*it)->operand(0) == body_param) {
        continue;
      }
      for (const Instruction* op : (*it)->operands()) needed.insert(op);
    }
    for (Instruction* instr : order) {
      if (!needed.contains(instr)) continue;
      if (instr->opcode() == Opcode::kGetTupleElement && instr->operand(0) == body_param) {
        outside[instr] = init_element(static_cast<int>(instr->tuple_index()));
        continue;
      }
      std::vector<Instruction*> operands;
      for (const Instruction* op : instr->operands()) operands.push_back(outside.at(op));
      outside[instr] = editor.AddLike(*instr, instr->shape(), std::move(operands));
    }

    // Hoisted values the body still reads become new loop-state elements.
    std::vector<Instruction*> live_in;
    for (Instruction* h : hoisted) {
      for (const Instruction* u : body_editor.users(h)) {
        if (!hoisted_set.contains(u)) {
          live_in.push_back(h);
          break;
        }
      }
    }
    std::vector<Shape> shapes = state.tuple_shapes();
    std::vector<Instruction*> init_operands;
    for (int k = 0; k < n; ++k) init_operands.push_back(init_element(k));
    for (Instruction* h : live_in) {
      shapes.push_back(h->shape());
      init_operands.push_back(outside.at(h));
    }
    const Shape* new_state = module_->InternShape(Shape::Tuple(shapes));

    std::vector<Instruction*> root_operands = root->operands();
    for (size_t m = 0; m < live_in.size(); ++m) {
      Instruction* g = body_editor.Add(Opcode::kGetTupleElement, live_in[m]->shape(),
                                       {body_param});
      g->set_index(n + static_cast<int64_t>(m));
      body_editor.ReplaceAllUsesWith(live_in[m], g);
      for (Instruction*& op : root_operands) {
        if (op == live_in[m]) op = g;
      }
      root_operands.push_back(g);
    }
    body_param->set_shape(new_state);
    body_editor.SetRoot(body_editor.Add(Opcode::kTuple, *new_state, root_operands));
    body_editor.Finish();
    cond->parameter(0)->set_shape(new_state);

    // The loop itself: a longer state; users outside see the old prefix.
    const std::vector<Instruction*> loop_users = editor.users(loop);
    const bool was_root = loop->IsRoot();
    Instruction* new_init = editor.Add(Opcode::kTuple, *new_state, init_operands);
    loop->set_shape(new_state);
    editor.ReplaceOperand(loop, 0, new_init);
    std::vector<Instruction*> whole_state_users;
    for (Instruction* u : loop_users) {
      if (u->opcode() != Opcode::kGetTupleElement) whole_state_users.push_back(u);
    }
    if (!whole_state_users.empty() || was_root) {
      std::vector<Instruction*> elements;
      for (int k = 0; k < n; ++k) {
        Instruction* g = editor.Add(Opcode::kGetTupleElement, state.tuple_shape(k), {loop});
        g->set_index(k);
        elements.push_back(g);
      }
      Instruction* prefix = editor.Add(Opcode::kTuple, state, elements);
      for (Instruction* u : whole_state_users) {
        for (int i = 0; i < u->operand_count(); ++i) {
          if (u->operand(i) == loop) editor.ReplaceOperand(u, i, prefix);
        }
      }
      if (was_root) editor.SetRoot(prefix);
    }
    return true;
  }

  Module* module_;
  PassContext& context_;
  std::string_view pass_name_;
  NameUniquer names_;
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers_;
};

}  // namespace

absl::StatusOr<bool> WhileLoopInvariantCodeMotion::Run(Module* module, PassContext& context) {
  Hoister hoister(module, context, name());
  return hoister.Run();
}

}  // namespace hlowb
