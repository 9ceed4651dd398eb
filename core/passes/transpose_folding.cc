#include "core/passes/transpose_folding.h"

#include <algorithm>

#include "core/passes/hlo_edit.h"

namespace hlowb {

namespace {

// The dimensions of an operand of rank `rank` that are neither batch nor contracting.
std::vector<int64_t> FreeDims(int64_t rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
        std::find(contracting.begin(), contracting.end(), d) == contracting.end()) {
      out.push_back(d);
    }
  }
  return out;
}

bool Increasing(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] <= v[i - 1]) return false;
  }
  return true;
}

// Folds operand `side` of `dot` (a transpose) into the dimension numbers; false when the fold
// would change the result shape.
bool FoldSide(Instruction* dot, int side, ComputationEditor& editor) {
  Instruction* t = dot->operand(side);
  if (t->opcode() != Opcode::kTranspose || t->operand_count() != 1) return false;
  const std::vector<int64_t>& perm = t->dimensions();
  const int64_t rank = t->shape().rank();
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  DotDimensionNumbers dn = *dot->attrs()->dot_dimension_numbers;
  std::vector<int64_t>& batch = side == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
  std::vector<int64_t>& contracting =
      side == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
  // Dimension d of the transpose is dimension perm[d] of its operand.
  std::vector<int64_t> free = FreeDims(rank, batch, contracting);
  std::vector<int64_t> new_free;
  for (int64_t d : free) new_free.push_back(perm[d]);
  std::vector<int64_t> new_batch;
  for (int64_t d : batch) new_batch.push_back(perm[d]);
  // The result lists batch dimensions in the order given and free dimensions in increasing
  // operand order: the free ones must stay increasing after mapping.
  if (!Increasing(new_free)) return false;
  batch = new_batch;
  for (int64_t& d : contracting) d = perm[d];
  dot->mutable_attrs()->dot_dimension_numbers = dn;
  editor.ReplaceOperand(dot, side, t->mutable_operands()->at(0));
  return true;
}

// transpose(dot(a, b)) with dimensions={1,0} of a matrix product (no batch dimensions, one
// free dimension per side) is dot(b, a): the product computed the other way round, in the
// transpose's shape. Only when nothing else reads the dot.
bool FoldTransposeOfDot(Instruction* t, ComputationEditor& editor) {
  if (t->opcode() != Opcode::kTranspose || t->dimensions() != std::vector<int64_t>{1, 0}) {
    return false;
  }
  Instruction* dot = t->operand(0);
  if (dot->opcode() != Opcode::kDot || dot->operand_count() != 2 || !dot->attrs() ||
      !dot->attrs()->dot_dimension_numbers || !dot->attrs()->sparsity.empty() ||
      editor.user_count(dot) != 1 || dot->IsRoot() || !dot->control_predecessors().empty() ||
      !editor.control_successors(dot).empty()) {
    return false;
  }
  const DotDimensionNumbers& dn = *dot->attrs()->dot_dimension_numbers;
  if (!dn.lhs_batch_dimensions.empty() || !dn.lhs_ragged_dimensions.empty() ||
      dot->shape().rank() != 2 || dot->operand(0)->shape().rank() != 2 ||
      dot->operand(1)->shape().rank() != 2) {
    return false;
  }
  Instruction* swapped = editor.AddLike(*dot, t->shape(), {dot->operand(1), dot->operand(0)});
  DotDimensionNumbers& sn = *swapped->mutable_attrs()->dot_dimension_numbers;
  std::swap(sn.lhs_contracting_dimensions, sn.rhs_contracting_dimensions);
  PrecisionConfig& pc = swapped->mutable_attrs()->precision_config;
  if (pc.operand_precision.size() == 2) std::swap(pc.operand_precision[0], pc.operand_precision[1]);
  editor.ReplaceAllUsesWith(t, swapped);
  return true;
}

}  // namespace

absl::StatusOr<bool> TransposeFolding::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  for (const auto& comp : module->computations()) {
    std::vector<Instruction*> dots;
    std::vector<Instruction*> transposes;
    for (Instruction* i : comp->instructions()) {
      if (i->opcode() == Opcode::kTranspose && i->operand_count() == 1 &&
          i->operand(0)->opcode() == Opcode::kDot) {
        transposes.push_back(i);
      }
      if (i->opcode() == Opcode::kDot && i->operand_count() == 2 && i->attrs() &&
          i->attrs()->dot_dimension_numbers && i->attrs()->sparsity.empty() &&
          i->attrs()->dot_dimension_numbers->lhs_ragged_dimensions.empty()) {
        dots.push_back(i);
      }
    }
    if (dots.empty()) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    for (Instruction* t : transposes) {
      if (!context.ConsumeFuel(name())) break;
      comp_changed |= FoldTransposeOfDot(t, editor);
    }
    for (Instruction* dot : dots) {
      for (int side = 0; side < 2; ++side) {
        if (dot->operand(side)->opcode() != Opcode::kTranspose) continue;
        if (!context.ConsumeFuel(name())) return changed || comp_changed;
        comp_changed |= FoldSide(dot, side, editor);
      }
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  return changed;
}

}  // namespace hlowb
