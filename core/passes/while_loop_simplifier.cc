#include "core/passes/while_loop_simplifier.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/support/strings.h"

namespace hlowb {

absl::StatusOr<Instruction*> InlineComputation(ComputationEditor& editor, const Computation& callee,
                                               const std::vector<Instruction*>& args) {
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  for (const Instruction* instr : callee.instructions()) {
    if (instr->opcode() == Opcode::kParameter) {
      int64_t n = instr->parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return absl::InvalidArgumentError(StrCat("cannot inline ", callee.name(), ": parameter ",
                                                 instr->name(), " has no argument"));
      }
      copies[instr] = args[n];
    }
  }
  for (const Instruction* instr : callee.instructions()) {
    if (instr->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    operands.reserve(instr->operand_count());
    for (Instruction* op : instr->operands()) {
      auto it = copies.find(op);
      if (it == copies.end()) {
        return absl::InvalidArgumentError(StrCat("cannot inline ", callee.name(), ": operand ",
                                                 op ? op->name() : "<null>", " of ",
                                                 instr->name(), " is not defined before it"));
      }
      operands.push_back(it->second);
    }
    Instruction* copy = editor.AddLike(*instr, instr->shape(), std::move(operands));
    for (Instruction* pred : instr->control_predecessors()) {
      auto it = copies.find(pred);
      if (it != copies.end() && it->second->parent() == editor.computation() &&
          pred->opcode() != Opcode::kParameter) {
        copy->mutable_control_predecessors()->push_back(it->second);
      }
    }
    copies[instr] = copy;
  }
  auto it = copies.find(callee.root());
  if (it == copies.end()) {
    return absl::InvalidArgumentError(StrCat("cannot inline ", callee.name(), ": no root"));
  }
  return it->second;
}

void EraseInstruction(Computation* computation, const Instruction* instr) {
  std::vector<Instruction*> kept;
  kept.reserve(computation->instructions().size());
  for (Instruction* i : computation->instructions()) {
    if (i != instr) kept.push_back(i);
  }
  computation->SetInstructions(std::move(kept));
}

namespace {

// ----- trip counts -----

// `bits` reduced to the width of integer type `type` (sign-extended for signed types).
uint64_t WrapToType(uint64_t bits, PrimitiveType type) {
  const int width = BitWidth(type);
  if (width <= 0 || width >= 64) return bits;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (IsSignedIntegral(type) && ((bits >> (width - 1)) & 1)) bits |= ~mask;
  return bits;
}

// The value of a scalar integer constant, as wrapped bits.
std::optional<uint64_t> ScalarIntBits(const Literal& literal) {
  PrimitiveType t = literal.shape().element_type();
  if (literal.elided() || !literal.shape().IsScalar() || !IsIntegral(t) ||
      literal.element_count() != 1) {
    return std::nullopt;
  }
  uint64_t bits = IsSignedIntegral(t) ? static_cast<uint64_t>(literal.GetInt(0))
                                      : literal.GetBits(0);
  return WrapToType(bits, t);
}

std::optional<uint64_t> ConstantIntBits(const Instruction* instr) {
  if (instr->opcode() != Opcode::kConstant || !instr->literal()) return std::nullopt;
  return ScalarIntBits(*instr->literal());
}

bool CompareBits(uint64_t a, uint64_t b, ComparisonDirection dir, bool is_signed) {
  auto lt = [&](uint64_t x, uint64_t y) {
    return is_signed ? static_cast<int64_t>(x) < static_cast<int64_t>(y) : x < y;
  };
  switch (dir) {
    case ComparisonDirection::kEq:
      return a == b;
    case ComparisonDirection::kNe:
      return a != b;
    case ComparisonDirection::kLt:
      return lt(a, b);
    case ComparisonDirection::kLe:
      return !lt(b, a);
    case ComparisonDirection::kGt:
      return lt(b, a);
    case ComparisonDirection::kGe:
      return !lt(a, b);
  }
  return false;
}

// True when `instr` is get-tuple-element `index` (any index when index < 0) of `comp`'s
// parameter 0.
bool IsStateElement(const Instruction* instr, const Computation& comp, int64_t index = -1) {
  return instr->opcode() == Opcode::kGetTupleElement && instr->operand_count() == 1 &&
         comp.parameter_count() == 1 && instr->operand(0) == comp.parameter(0) &&
         (index < 0 || instr->tuple_index() == index);
}

// `instr` without the copies around it (copy insertion puts them on loop state).
const Instruction* SkipCopies(const Instruction* instr) {
  while (instr->opcode() == Opcode::kCopy && instr->operand_count() == 1) instr = instr->operand(0);
  return instr;
}

// The initial value of loop-state element `k` when it is a scalar integer constant.
std::optional<uint64_t> InitialValue(const Instruction* init, int64_t k) {
  if (init->opcode() == Opcode::kTuple) {
    if (k >= init->operand_count()) return std::nullopt;
    return ConstantIntBits(SkipCopies(init->operand(static_cast<int>(k))));
  }
  if (init->opcode() == Opcode::kConstant && init->literal() && !init->literal()->elided()) {
    const auto& elements = init->literal()->tuple_elements();
    if (k >= static_cast<int64_t>(elements.size())) return std::nullopt;
    return ScalarIntBits(elements[k]);
  }
  return std::nullopt;
}

// What the body adds to element `k` on every iteration (0 when it passes it through), when
// that is a constant.
std::optional<uint64_t> BodyStep(const Computation& body, int64_t k, PrimitiveType type) {
  const Instruction* root = body.root();
  if (!root || root->opcode() != Opcode::kTuple || k >= root->operand_count()) {
    return std::nullopt;
  }
  const Instruction* next = SkipCopies(root->operand(static_cast<int>(k)));
  if (IsStateElement(next, body, k)) return 0;
  if (next->operand_count() != 2) return std::nullopt;
  const Instruction* a = next->operand(0);
  const Instruction* b = next->operand(1);
  if (next->opcode() == Opcode::kAdd) {
    if (IsStateElement(a, body, k)) return ConstantIntBits(b);
    if (IsStateElement(b, body, k)) return ConstantIntBits(a);
  }
  if (next->opcode() == Opcode::kSubtract && IsStateElement(a, body, k)) {
    std::optional<uint64_t> step = ConstantIntBits(b);
    if (step) return WrapToType(uint64_t{0} - *step, type);
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> KnownTripCount(const Instruction& loop, int64_t limit) {
  if (loop.opcode() != Opcode::kWhile || loop.called_computations().size() < 2 ||
      loop.operand_count() != 1) {
    return std::nullopt;
  }
  const Computation* cond = loop.called_computations()[0];
  const Computation* body = loop.called_computations()[1];
  const Instruction* root = cond->root();
  if (!root) return std::nullopt;
  if (root->opcode() == Opcode::kConstant && root->literal() && !root->literal()->elided() &&
      root->shape().IsScalar() && root->shape().element_type() == PrimitiveType::kPred) {
    if (root->literal()->GetBits(0) == 0) return 0;
    return std::nullopt;
  }
  if (root->opcode() != Opcode::kCompare || root->operand_count() != 2) return std::nullopt;
  const PrimitiveType type = root->operand(0)->shape().element_type();
  if (!IsIntegral(type) || !root->operand(0)->shape().IsScalar()) return std::nullopt;
  // Each side: a constant, or a loop-state element with a constant start and step.
  struct Side {
    uint64_t value = 0;
    uint64_t step = 0;
  };
  Side sides[2];
  for (int s = 0; s < 2; ++s) {
    const Instruction* op = root->operand(s);
    if (std::optional<uint64_t> c = ConstantIntBits(op)) {
      sides[s].value = *c;
      continue;
    }
    if (!IsStateElement(op, *cond)) return std::nullopt;
    std::optional<uint64_t> start = InitialValue(loop.operand(0), op->tuple_index());
    std::optional<uint64_t> step = BodyStep(*body, op->tuple_index(), type);
    if (!start || !step) return std::nullopt;
    sides[s].value = *start;
    sides[s].step = *step;
  }
  const ComparisonType ct = root->attrs_or_default().comparison_type;
  const bool is_signed = ct == ComparisonType::kSigned ||
                         (ct != ComparisonType::kUnsigned && IsSignedIntegral(type));
  const ComparisonDirection dir = root->attrs_or_default().comparison_direction;
  for (int64_t trip = 0; trip < limit; ++trip) {
    if (!CompareBits(sides[0].value, sides[1].value, dir, is_signed)) return trip;
    for (Side& side : sides) side.value = WrapToType(side.value + side.step, type);
  }
  return std::nullopt;
}

namespace {

// 0 or 1 when the loop provably runs its body that many times; nullopt otherwise.
std::optional<int64_t> SmallTripCount(const Instruction& loop) { return KnownTripCount(loop, 2); }

bool ComputationHasSideEffect(const Computation& comp) {
  for (const Instruction* i : comp.instructions()) {
    if (HasSideEffect(*i)) return true;
  }
  return false;
}

bool ComputationHasControlEdges(const Computation& comp) {
  for (const Instruction* i : comp.instructions()) {
    if (!i->control_predecessors().empty()) return true;
  }
  return false;
}

bool ContainsToken(const Shape& shape) {
  if (shape.IsToken()) return true;
  for (const Shape& s : shape.tuple_shapes()) {
    if (ContainsToken(s)) return true;
  }
  return false;
}

// ----- the rewrites -----

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
      std::vector<Instruction*> loops;
      for (Instruction* i : comp->instructions()) {
        if (i->opcode() == Opcode::kWhile) loops.push_back(i);
      }
      if (loops.empty()) continue;
      ComputationEditor editor(comp, &names_);
      bool comp_changed = false;
      for (Instruction* loop : loops) {
        absl::StatusOr<bool> r = SimplifyLoop(editor, loop);
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
  absl::StatusOr<bool> SimplifyLoop(ComputationEditor& editor, Instruction* loop) {
    if (loop->called_computations().size() != 2 || loop->operand_count() != 1 ||
        !loop->called_computations()[0] || !loop->called_computations()[1]) {
      return false;
    }
    const Computation* cond = loop->called_computations()[0];
    const Computation* body = loop->called_computations()[1];
    const bool has_control_edges =
        !loop->control_predecessors().empty() || !editor.control_successors(loop).empty();
    if (!has_control_edges && !ComputationHasSideEffect(*cond)) {
      std::optional<int64_t> trips = SmallTripCount(*loop);
      if (trips == 0 && !ComputationHasSideEffect(*body)) {
        if (!context_.ConsumeFuel(pass_name_)) return false;
        editor.ReplaceAllUsesWith(loop, loop->operand(0));
        EraseInstruction(editor.computation(), loop);
        return true;
      }
      if (trips == 1) {
        if (!context_.ConsumeFuel(pass_name_)) return false;
        absl::StatusOr<Instruction*> result =
            InlineComputation(editor, *body, {loop->operand(0)});
        if (!result.ok()) return result.status();
        editor.ReplaceAllUsesWith(loop, *result);
        EraseInstruction(editor.computation(), loop);
        callers_dirty_ = true;
        return true;
      }
    }
    return RemoveDeadElements(editor, loop);
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

  // Drops loop-state elements nothing observes; see the header.
  absl::StatusOr<bool> RemoveDeadElements(ComputationEditor& editor, Instruction* loop) {
    Computation* cond = loop->called_computations()[0];
    Computation* body = loop->called_computations()[1];
    const Shape& state = loop->shape();
    if (!state.IsTuple() || state.tuple_count() < 2 || cond == body) return false;
    if (cond->parameter_count() != 1 || body->parameter_count() != 1) return false;
    Instruction* root = body->root();
    const int n = state.tuple_count();
    if (!root || root->opcode() != Opcode::kTuple || root->operand_count() != n) return false;
    if (!CalledOnlyBy(cond, loop) || !CalledOnlyBy(body, loop)) return false;
    if (ComputationHasControlEdges(*cond) || ComputationHasControlEdges(*body)) return false;

    ComputationEditor cond_editor(cond, &names_);
    ComputationEditor body_editor(body, &names_);
    std::vector<bool> used(n, false);
    // The condition reads an element through get-tuple-element; anything else reads them all.
    for (const Instruction* u : cond_editor.users(cond->parameter(0))) {
      if (u->opcode() != Opcode::kGetTupleElement || u->tuple_index() >= n) return false;
      used[u->tuple_index()] = true;
    }
    if (cond->root() == cond->parameter(0)) return false;
    const Instruction* body_param = body->parameter(0);
    for (const Instruction* u : body_editor.users(body_param)) {
      if (u->opcode() != Opcode::kGetTupleElement || u->tuple_index() >= n) return false;
    }
    // Outside uses of the final state.
    std::vector<bool> observed(n, false);
    if (loop->IsRoot()) std::fill(observed.begin(), observed.end(), true);
    for (const Instruction* u : editor.users(loop)) {
      if (u->opcode() == Opcode::kGetTupleElement) {
        if (u->tuple_index() >= n) return false;
        observed[u->tuple_index()] = true;
      } else {
        std::fill(observed.begin(), observed.end(), true);
      }
    }
    // Candidates first: the flow analysis below is only worth it when one exists.
    std::vector<bool> candidate(n, false);
    bool any_candidate = false;
    for (int k = 0; k < n; ++k) {
      if (used[k] || ContainsToken(state.tuple_shape(k))) continue;
      const bool pass_through = IsStateElement(root->operand(k), *body, k);
      if (observed[k] && !pass_through) continue;
      candidate[k] = true;
      any_candidate = true;
    }
    if (!any_candidate) return false;
    // For every body instruction: the root position its value flows into, or -2 when it
    // flows into several.
    absl::flat_hash_map<const Instruction*, int> feeds;
    feeds.reserve(body->instruction_count());
    for (int j = 0; j < n; ++j) {
      std::vector<const Instruction*> stack{root->operand(j)};
      while (!stack.empty()) {
        const Instruction* i = stack.back();
        stack.pop_back();
        auto [it, inserted] = feeds.try_emplace(i, j);
        if (!inserted) {
          if (it->second == j || it->second == -2) continue;  // seen for j, or already shared
          it->second = -2;
        }
        for (const Instruction* op : i->operands()) stack.push_back(op);
      }
    }
    std::vector<bool> remove(n, false);
    int removed = 0;
    for (int k = 0; k < n; ++k) {
      if (!candidate[k]) continue;
      // Everything computed from element k must flow only into element k, without side
      // effects.
      bool self_contained = true;
      std::vector<const Instruction*> stack;
      absl::flat_hash_set<const Instruction*> seen;
      for (const Instruction* g : body_editor.users(body_param)) {
        if (g->tuple_index() == k) stack.push_back(g);
      }
      while (!stack.empty() && self_contained) {
        const Instruction* i = stack.back();
        stack.pop_back();
        if (i == root || !seen.insert(i).second) continue;
        if (HasSideEffect(*i)) self_contained = false;
        auto f = feeds.find(i);
        if (f != feeds.end() && f->second != k) self_contained = false;
        for (const Instruction* u : body_editor.users(i)) stack.push_back(u);
      }
      if (!self_contained) continue;
      remove[k] = true;
      ++removed;
    }
    if (removed == 0 || removed == n) return false;
    if (!context_.ConsumeFuel(pass_name_)) return false;

    // New state shape and index mapping.
    std::vector<int64_t> new_index(n, -1);
    std::vector<Shape> kept_shapes;
    for (int k = 0; k < n; ++k) {
      if (remove[k]) continue;
      new_index[k] = static_cast<int64_t>(kept_shapes.size());
      kept_shapes.push_back(state.tuple_shape(k));
    }
    const Shape* new_state = module_->InternShape(Shape::Tuple(kept_shapes));

    // Condition and body: new parameter shape, renumbered elements, smaller root.
    for (ComputationEditor* e : {&cond_editor, &body_editor}) {
      Instruction* param = e->computation()->parameter(0);
      param->set_shape(new_state);
      for (Instruction* g : e->users(param)) {
        if (new_index[g->tuple_index()] >= 0) g->set_index(new_index[g->tuple_index()]);
      }
    }
    // Gets of removed elements keep their old index: only what the new root leaves dead uses
    // them, and Finish drops them.
    std::vector<Instruction*> root_operands;
    for (int k = 0; k < n; ++k) {
      if (!remove[k]) root_operands.push_back(root->operand(k));
    }
    body_editor.SetRoot(body_editor.Add(Opcode::kTuple, *new_state, root_operands));
    body_editor.Finish();
    cond_editor.Finish();

    // The caller: a smaller initial tuple, renumbered gets, removed elements read from the
    // initial state.
    Instruction* init = loop->operand(0);
    std::vector<Instruction*> init_elements(n, nullptr);
    auto init_element = [&](int k) {
      if (!init_elements[k]) {
        if (init->opcode() == Opcode::kTuple) {
          init_elements[k] = init->operand(k);
        } else {
          init_elements[k] = editor.Add(Opcode::kGetTupleElement, state.tuple_shape(k), {init});
          init_elements[k]->set_index(k);
        }
      }
      return init_elements[k];
    };
    std::vector<Instruction*> new_init_operands;
    for (int k = 0; k < n; ++k) {
      if (!remove[k]) new_init_operands.push_back(init_element(k));
    }
    Instruction* new_init = editor.Add(Opcode::kTuple, *new_state, new_init_operands);
    const std::vector<Instruction*> loop_users = editor.users(loop);
    const bool was_root = loop->IsRoot();
    loop->set_shape(new_state);
    editor.ReplaceOperand(loop, 0, new_init);
    std::vector<Instruction*> whole_state_users;
    for (Instruction* u : loop_users) {
      if (u->opcode() != Opcode::kGetTupleElement) {
        whole_state_users.push_back(u);
        continue;
      }
      const int k = static_cast<int>(u->tuple_index());
      if (remove[k]) {
        editor.ReplaceAllUsesWith(u, init_element(k));
      } else {
        u->set_index(new_index[k]);
      }
    }
    if (!whole_state_users.empty() || was_root) {
      std::vector<Instruction*> elements;
      for (int k = 0; k < n; ++k) {
        if (remove[k]) {
          elements.push_back(init_element(k));
        } else {
          Instruction* g = editor.Add(Opcode::kGetTupleElement, state.tuple_shape(k), {loop});
          g->set_index(new_index[k]);
          elements.push_back(g);
        }
      }
      Instruction* full = editor.Add(Opcode::kTuple, state, elements);
      for (Instruction* u : whole_state_users) {
        for (int i = 0; i < u->operand_count(); ++i) {
          if (u->operand(i) == loop) editor.ReplaceOperand(u, i, full);
        }
      }
      if (was_root) editor.SetRoot(full);
    }
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

absl::StatusOr<bool> WhileLoopSimplifier::Run(Module* module, PassContext& context) {
  Simplifier simplifier(module, context, name());
  return simplifier.Run();
}

}  // namespace hlowb
