#include "core/passes/reshape_mover.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

bool IsRearrange(const Instruction* instr) {
  return (instr->opcode() == Opcode::kReshape || instr->opcode() == Opcode::kTranspose) &&
         instr->operand_count() == 1 && instr->shape().IsArray() &&
         instr->operand(0)->shape().IsArray();
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// A reshape or transpose that changes nothing.
bool IsNopRearrange(const Instruction* rearrange) {
  if (rearrange->opcode() == Opcode::kReshape) {
    return rearrange->shape().SameDimensions(rearrange->operand(0)->shape());
  }
  return IsIdentityPermutation(rearrange->dimensions());
}

// Rearranges `a` and `b` undo the same way: same kind, same result and input dimensions, same
// permutation.
bool AreEquivalentRearranges(const Instruction* a, const Instruction* b) {
  if (a->opcode() != b->opcode() || !a->shape().SameDimensions(b->shape()) ||
      !a->operand(0)->shape().SameDimensions(b->operand(0)->shape())) {
    return false;
  }
  return a->opcode() == Opcode::kReshape || a->dimensions() == b->dimensions();
}

// `instr` can take the shape `rearrange` reads from for free: a constant or a scalar broadcast.
bool CanTriviallyRearrange(const Instruction* instr, const Instruction* rearrange) {
  if (IsNopRearrange(rearrange)) return true;
  if (instr->opcode() == Opcode::kConstant) return true;
  return instr->opcode() == Opcode::kBroadcast && instr->operand_count() == 1 &&
         instr->operand(0)->shape().IsScalar();
}

// The rearranged operand worth moving, if any.
const Instruction* FirstNontrivialRearrange(const Instruction* instr) {
  for (const Instruction* op : instr->operands()) {
    if (IsRearrange(op) && !CanTriviallyRearrange(op->operand(0), op)) return op;
  }
  return nullptr;
}

const Instruction* MoveCandidateRearrange(const Instruction* instr) {
  if (!IsElementwise(instr->opcode()) || instr->operand_count() == 0 ||
      !instr->shape().IsArray() || instr->shape().IsDynamic() || HasSideEffect(*instr) ||
      !instr->control_predecessors().empty()) {
    return nullptr;
  }
  for (const Instruction* op : instr->operands()) {
    if (!op->shape().IsArray() || !op->shape().SameDimensions(instr->shape())) return nullptr;
  }
  const Instruction* rearrange = FirstNontrivialRearrange(instr);
  if (!rearrange || rearrange->operand(0)->shape().IsDynamic()) return nullptr;
  for (const Instruction* op : instr->operands()) {
    const bool ok = IsRearrange(op) ? AreEquivalentRearranges(op, rearrange)
                                    : CanTriviallyRearrange(op, rearrange);
    if (!ok) return nullptr;
  }
  return rearrange;
}

std::vector<int64_t> InversePermutation(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inverse(perm.size(), 0);
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = static_cast<int64_t>(i);
  return inverse;
}

// `shape` (the input of the moved rearrangement) with `type` as its element type.
Shape WithElementType(const Shape& shape, PrimitiveType type) {
  Shape s = shape;
  s.set_element_type(type);
  return s;
}

}  // namespace

absl::StatusOr<bool> ReshapeMover::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  // Fused computations are compiled as a unit; leave their insides alone.
  absl::flat_hash_set<const Computation*> fused;
  for (const auto& c : module->computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == Opcode::kFusion) {
        for (const Computation* f : i->called_computations()) fused.insert(f);
      }
    }
  }
  for (const auto& comp_ptr : module->computations()) {
    Computation* comp = comp_ptr.get();
    if (fused.contains(comp)) continue;
    if (context.cancelled()) break;
    ComputationEditor editor(comp, &names);
    std::vector<Instruction*> candidates;
    absl::flat_hash_set<const Instruction*> candidate_set;
    for (Instruction* i : comp->instructions()) {
      if (MoveCandidateRearrange(i)) {
        candidates.push_back(i);
        candidate_set.insert(i);
      }
    }
    // Drop candidates whose rearranged operands would survive the move (another user keeps
    // them); repeat, since dropping one can strand another's operand.
    bool dropped = true;
    while (dropped) {
      dropped = false;
      for (Instruction* c : candidates) {
        if (!candidate_set.contains(c)) continue;
        for (const Instruction* op : c->operands()) {
          if (!IsRearrange(op)) continue;
          bool all_candidates = !op->IsRoot();
          for (const Instruction* u : editor.users(op)) {
            if (!candidate_set.contains(u)) all_candidates = false;
          }
          if (!all_candidates) {
            candidate_set.erase(c);
            dropped = true;
            break;
          }
        }
      }
    }
    bool comp_changed = false;
    for (Instruction* instr : candidates) {
      if (!candidate_set.contains(instr)) continue;
      const Instruction* rearrange = MoveCandidateRearrange(instr);
      if (!rearrange) continue;
      if (!context.ConsumeFuel(name())) break;
      const Shape& input_shape = rearrange->operand(0)->shape();
      std::vector<Instruction*> operands;
      for (Instruction* op : instr->operands()) {
        if (IsRearrange(op)) {
          operands.push_back(op->operand(0));
          continue;
        }
        const Shape shape = WithElementType(input_shape, op->shape().element_type());
        if (op->opcode() == Opcode::kBroadcast) {
          Instruction* b = editor.Add(Opcode::kBroadcast, shape, {op->operand(0)});
          b->set_has_dimensions(true);
          operands.push_back(b);
        } else if (rearrange->opcode() == Opcode::kReshape) {
          operands.push_back(editor.Add(Opcode::kReshape, shape, {op}));
        } else {
          Instruction* t = editor.Add(Opcode::kTranspose, shape, {op});
          *t->mutable_dimensions() = InversePermutation(rearrange->dimensions());
          t->set_has_dimensions(true);
          operands.push_back(t);
        }
      }
      Instruction* moved = editor.AddLike(
          *instr, WithElementType(input_shape, instr->shape().element_type()), operands);
      Instruction* result = editor.AddLike(*rearrange, instr->shape(), {moved});
      editor.ReplaceAllUsesWith(instr, result);
      comp_changed = true;
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlowb
