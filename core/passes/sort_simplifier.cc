#include "core/passes/sort_simplifier.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

// Parameter numbers the comparator's result depends on.
std::set<int64_t> LiveParameters(const Computation& comparator) {
  std::set<int64_t> out;
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack;
  if (comparator.root()) stack.push_back(comparator.root());
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (i == nullptr || !seen.insert(i).second) continue;
    if (i->opcode() == Opcode::kParameter) out.insert(i->parameter_number());
    for (const Instruction* op : i->operands()) stack.push_back(op);
    for (const Instruction* p : i->control_predecessors()) stack.push_back(p);
  }
  return out;
}

// A copy of `comparator` that reads only the parameters of the operands in `kept` (original
// operand numbers, ascending), renumbered. Null when the comparator is not well formed.
Computation* RebuildComparator(Module* module, const Computation& comparator,
                               const std::vector<int64_t>& kept, NameUniquer& names) {
  absl::flat_hash_map<int64_t, int64_t> new_number;  // old parameter number -> new
  for (size_t j = 0; j < kept.size(); ++j) {
    new_number[2 * kept[j]] = static_cast<int64_t>(2 * j);
    new_number[2 * kept[j] + 1] = static_cast<int64_t>(2 * j + 1);
  }
  // Instructions the root reaches, in the comparator's order.
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack{comparator.root()};
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (i == nullptr || !live.insert(i).second) continue;
    for (const Instruction* op : i->operands()) stack.push_back(op);
    for (const Instruction* p : i->control_predecessors()) stack.push_back(p);
  }
  auto comp = std::make_unique<Computation>(names.Unique(comparator.name()));
  comp->set_execution_thread(comparator.execution_thread());
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  std::vector<Instruction*> params(2 * kept.size(), nullptr);
  std::vector<Instruction*> body;
  for (const Instruction* src : comparator.instructions()) {
    const bool is_param = src->opcode() == Opcode::kParameter;
    if (is_param) {
      auto it = new_number.find(src->parameter_number());
      if (it == new_number.end()) continue;  // a dropped operand's parameter
      Instruction* dst = module->NewInstruction(src->opcode(), "", &src->shape());
      CopyInstructionFields(*src, dst);
      dst->set_name(names.Unique(src->name()));
      dst->set_index(it->second);
      map[src] = dst;
      params[it->second] = dst;
      continue;
    }
    if (!live.contains(src)) continue;
    Instruction* dst = module->NewInstruction(src->opcode(), "", &src->shape());
    CopyInstructionFields(*src, dst);
    dst->set_name(names.Unique(src->name()));
    map[src] = dst;
    body.push_back(dst);
  }
  for (const Instruction* src : comparator.instructions()) {
    auto self = map.find(src);
    if (self == map.end()) continue;
    for (Instruction* op : src->operands()) {
      auto it = map.find(op);
      if (it == map.end()) return nullptr;
      self->second->mutable_operands()->push_back(it->second);
    }
    for (Instruction* p : src->control_predecessors()) {
      auto it = map.find(p);
      if (it != map.end()) self->second->mutable_control_predecessors()->push_back(it->second);
    }
  }
  for (Instruction* p : params) {
    if (p == nullptr) return nullptr;
    comp->AddInstruction(p);
  }
  for (Instruction* i : body) comp->AddInstruction(i);
  auto root = map.find(comparator.root());
  if (root == map.end()) return nullptr;
  comp->set_root(root->second);
  // Right after the old comparator, so it stays before every caller.
  auto& comps = *module->mutable_computations();
  size_t pos = 0;
  while (pos < comps.size() && comps[pos].get() != &comparator) ++pos;
  comp->set_parent(module);
  int64_t max_id = -1;
  for (const auto& c : comps) max_id = std::max(max_id, c->id());
  comp->set_id(max_id + 1);
  Computation* result = comp.get();
  comps.insert(comps.begin() + static_cast<std::ptrdiff_t>(std::min(pos + 1, comps.size())),
               std::move(comp));
  return result;
}

// Rewrites one sort; true when it changed.
bool SimplifySort(Instruction* sort, ComputationEditor& editor, NameUniquer& names,
                  PassContext& context, std::string_view pass_name) {
  const int n = sort->operand_count();
  if (n < 2 || !sort->shape().IsTuple() || sort->shape().tuple_count() != n) return false;
  if (sort->called_computations().size() != 1 || sort->called_computations()[0] == nullptr) {
    return false;
  }
  if (sort->IsRoot() || !sort->control_predecessors().empty() ||
      !editor.control_successors(sort).empty()) {
    return false;
  }
  const Computation& comparator = *sort->called_computations()[0];
  std::vector<bool> needed(n, false);
  const std::vector<Instruction*> users = editor.users(sort);
  for (const Instruction* u : users) {
    if (u->opcode() != Opcode::kGetTupleElement) return false;
    if (u->tuple_index() < 0 || u->tuple_index() >= n) return false;
    needed[u->tuple_index()] = true;
  }
  bool any_output_used = false;
  for (bool b : needed) any_output_used |= b;
  if (!any_output_used) return false;
  for (int64_t p : LiveParameters(comparator)) {
    if (p >= 0 && p / 2 < n) needed[p / 2] = true;
  }
  std::vector<int64_t> kept;
  for (int i = 0; i < n; ++i) {
    if (needed[i]) kept.push_back(i);
  }
  if (static_cast<int>(kept.size()) == n) return false;
  if (!context.ConsumeFuel(pass_name)) return false;
  Module* module = editor.module();
  Computation* new_comparator = RebuildComparator(module, comparator, kept, names);
  if (new_comparator == nullptr) return false;

  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  for (int64_t i : kept) {
    operands.push_back(sort->operand(static_cast<int>(i)));
    shapes.push_back(sort->shape().tuple_shape(static_cast<int>(i)));
  }
  Shape shape = kept.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  Instruction* new_sort = editor.AddLike(*sort, shape, std::move(operands));
  *new_sort->mutable_called_computations() = {new_comparator};
  absl::flat_hash_map<int64_t, int64_t> new_index;
  for (size_t j = 0; j < kept.size(); ++j) new_index[kept[j]] = static_cast<int64_t>(j);
  for (Instruction* gte : users) {
    if (kept.size() == 1) {
      editor.ReplaceAllUsesWith(gte, new_sort);
    } else {
      editor.ReplaceOperand(gte, 0, new_sort);
      gte->set_index(new_index[gte->tuple_index()]);
    }
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> SortSimplifier::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  std::vector<Computation*> comps;
  for (const auto& c : module->computations()) comps.push_back(c.get());
  for (Computation* comp : comps) {
    ComputationEditor editor(comp, &names);
    bool comp_changed = false;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      if (instr->opcode() != Opcode::kSort) continue;
      comp_changed |= SimplifySort(instr, editor, names, context, name());
    }
    if (comp_changed) {
      editor.Finish();
      changed = true;
    }
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
