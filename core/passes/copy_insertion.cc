#include "core/passes/copy_insertion.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/hlo_memory_scheduler.h"

namespace hlowb {
namespace {

// Where a value comes from: the instruction that defines it and the index in that
// instruction's shape, looking through the instructions that only pass values on.
struct Source {
  const Instruction* instr = nullptr;
  ShapeIndex index;
  bool operator<(const Source& o) const {
    return std::tie(instr, index) < std::tie(o.instr, o.index);
  }
  bool operator==(const Source& o) const { return instr == o.instr && index == o.index; }
};

bool PassesOperandOn(Opcode op) {
  return op == Opcode::kBitcast || op == Opcode::kAddDependency || op == Opcode::kDomain ||
         op == Opcode::kOptimizationBarrier;
}

Source SourceOf(const Instruction* instr, ShapeIndex index) {
  for (int guard = 0; guard < 100000; ++guard) {
    if (instr->opcode() == Opcode::kGetTupleElement && instr->operand_count() == 1) {
      index.insert(index.begin(), instr->tuple_index());
      instr = instr->operand(0);
    } else if (instr->opcode() == Opcode::kTuple && !index.empty() &&
               index[0] < instr->operand_count()) {
      const Instruction* next = instr->operand(static_cast<int>(index[0]));
      index.erase(index.begin());
      instr = next;
    } else if (PassesOperandOn(instr->opcode()) && instr->operand_count() >= 1) {
      instr = instr->operand(0);
    } else {
      break;
    }
  }
  return Source{instr, std::move(index)};
}

// Array leaves of `shape` (tokens and opaque values are never copied).
void CollectArrayLeaves(const Shape& shape, ShapeIndex* prefix, std::vector<ShapeIndex>* out) {
  if (shape.IsTuple()) {
    for (int i = 0; i < shape.tuple_count(); ++i) {
      prefix->push_back(i);
      CollectArrayLeaves(shape.tuple_shape(i), prefix, out);
      prefix->pop_back();
    }
  } else if (shape.IsArray()) {
    out->push_back(*prefix);
  }
}

std::vector<ShapeIndex> ArrayLeaves(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  CollectArrayLeaves(shape, &prefix, &out);
  return out;
}

bool HasPrefix(const ShapeIndex& index, const ShapeIndex& prefix) {
  return index.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), index.begin());
}

// Rebuilds `instr` (at output index `index`) with a copy at every index in `copies`.
// Indices in `doubles` get a copy of a copy (the inner one reads the old value into a
// buffer of its own; the outer one writes it to the destination).
Instruction* Rebuild(ComputationEditor& editor, Instruction* instr, ShapeIndex* index,
                     const std::set<ShapeIndex>& copies, const std::set<ShapeIndex>& doubles,
                     absl::flat_hash_map<Instruction*, ShapeIndex>* created) {
  bool any = false;
  for (const ShapeIndex& c : copies) {
    if (HasPrefix(c, *index)) {
      any = true;
      break;
    }
  }
  if (!any) return instr;
  const Shape& shape = instr->shape();
  if (!shape.IsTuple()) {
    Instruction* copy = editor.Add(Opcode::kCopy, shape, {instr});
    if (doubles.count(*index)) copy = editor.Add(Opcode::kCopy, shape, {copy});
    (*created)[copy] = *index;
    return copy;
  }
  std::vector<Instruction*> elements;
  elements.reserve(shape.tuple_count());
  for (int i = 0; i < shape.tuple_count(); ++i) {
    Instruction* element;
    if (instr->opcode() == Opcode::kTuple) {
      element = instr->operand(i);
    } else {
      element = editor.Add(Opcode::kGetTupleElement, shape.tuple_shape(i), {instr});
      element->set_index(i);
    }
    index->push_back(i);
    elements.push_back(Rebuild(editor, element, index, copies, doubles, created));
    index->pop_back();
  }
  return editor.Add(Opcode::kTuple, shape, std::move(elements));
}

// Instructions that read the value at (param, index) (or any value aliasing it through
// get-tuple-element, tuple, bitcast, ...), not counting the instructions that only pass it on.
std::vector<Instruction*> ReadersOf(const ComputationEditor& editor, Instruction* param,
                                    const ShapeIndex& index) {
  std::vector<std::pair<Instruction*, ShapeIndex>> work = {{param, index}};
  std::set<std::pair<Instruction*, ShapeIndex>> seen;
  std::vector<Instruction*> readers;
  while (!work.empty()) {
    auto [instr, idx] = work.back();
    work.pop_back();
    if (!seen.insert({instr, idx}).second) continue;
    for (Instruction* user : editor.users(instr)) {
      switch (user->opcode()) {
        case Opcode::kGetTupleElement:
          if (!idx.empty() && idx[0] == user->tuple_index()) {
            work.push_back({user, ShapeIndex(idx.begin() + 1, idx.end())});
          }
          break;
        case Opcode::kTuple:
          for (int k = 0; k < user->operand_count(); ++k) {
            if (user->operand(k) != instr) continue;
            ShapeIndex next = {k};
            next.insert(next.end(), idx.begin(), idx.end());
            work.push_back({user, std::move(next)});
          }
          break;
        default:
          if (PassesOperandOn(user->opcode()) && user->operand(0) == instr) {
            work.push_back({user, idx});
          } else if (std::find(readers.begin(), readers.end(), user) == readers.end()) {
            readers.push_back(user);
          }
          break;
      }
    }
  }
  return readers;
}

// Every instruction `instr` depends on (operands and control predecessors, transitively).
absl::flat_hash_set<const Instruction*> Ancestors(const Instruction* instr) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> work(instr->operands().begin(), instr->operands().end());
  work.insert(work.end(), instr->control_predecessors().begin(),
              instr->control_predecessors().end());
  while (!work.empty()) {
    const Instruction* i = work.back();
    work.pop_back();
    if (i == nullptr || !seen.insert(i).second) continue;
    work.insert(work.end(), i->operands().begin(), i->operands().end());
    work.insert(work.end(), i->control_predecessors().begin(), i->control_predecessors().end());
  }
  return seen;
}

bool SameSizedElements(const Shape& a, const Shape& b) {
  return a.IsArray() && b.IsArray() && a.SameDimensions(b) &&
         ByteWidth(a.element_type()) == ByteWidth(b.element_type()) &&
         ByteWidth(a.element_type()) > 0;
}

// A loop fusion may overwrite an operand it reads only element by element at the position it
// writes (every use of the fused parameter is an elementwise op of the output's shape), or an
// operand its root dynamic-update-slice updates in place (the parameter is that
// dynamic-update-slice's first operand and is read nowhere else).
bool FusionCanUpdateInPlace(const Instruction& fusion, const Instruction& operand) {
  if (fusion.attrs_or_default().fusion_kind != FusionKind::kLoop ||
      fusion.called_computations().size() != 1 || !fusion.called_computations()[0] ||
      !fusion.shape().IsArray()) {
    return false;
  }
  const Computation* fused = fusion.called_computations()[0];
  int index = -1;
  for (int k = 0; k < fusion.operand_count(); ++k) {
    if (fusion.operand(k) != &operand) continue;
    if (index >= 0) return false;  // read through two parameters
    index = k;
  }
  if (index < 0 || index >= fused->parameter_count() || !fused->parameter(index)) return false;
  const Instruction* param = fused->parameter(index);
  const Instruction* root = fused->root();
  if (root && root->opcode() == Opcode::kDynamicUpdateSlice && root->operand(0) == param) {
    for (const Instruction* i : fused->instructions()) {
      if (i == root) continue;
      for (const Instruction* op : i->operands()) {
        if (op == param) return false;
      }
    }
    for (int k = 1; k < root->operand_count(); ++k) {
      if (root->operand(k) == param) return false;
    }
    return true;
  }
  if (!SameSizedElements(fusion.shape(), param->shape())) return false;
  for (const Instruction* i : fused->instructions()) {
    for (const Instruction* op : i->operands()) {
      if (op != param) continue;
      if ((!IsElementwise(i->opcode()) && i->opcode() != Opcode::kConvert) ||
          !i->shape().SameDimensions(fusion.shape())) {
        return false;
      }
    }
  }
  return param != root;
}

}  // namespace

bool CanUpdateOperandInPlace(const Instruction& user, const Instruction& operand) {
  if (user.opcode() == Opcode::kDynamicUpdateSlice) {
    for (int k = 1; k < user.operand_count(); ++k) {
      if (user.operand(k) == &operand) return false;
    }
    return user.operand_count() > 0 && user.operand(0) == &operand;
  }
  if (user.opcode() == Opcode::kFusion) return FusionCanUpdateInPlace(user, operand);
  if (!IsElementwise(user.opcode()) && user.opcode() != Opcode::kConvert) return false;
  return SameSizedElements(user.shape(), operand.shape());
}

int InPlaceUpdatedOperand(const Instruction& instr) {
  if (instr.opcode() == Opcode::kDynamicUpdateSlice) {
    return instr.operand_count() > 0 && CanUpdateOperandInPlace(instr, *instr.operand(0)) ? 0
                                                                                            : -1;
  }
  if (instr.opcode() != Opcode::kFusion || instr.called_computations().size() != 1 ||
      instr.called_computations()[0] == nullptr) {
    return -1;
  }
  const Instruction* root = instr.called_computations()[0]->root();
  if (root == nullptr || root->opcode() != Opcode::kDynamicUpdateSlice ||
      root->operand_count() < 2 || root->operand(0)->opcode() != Opcode::kParameter) {
    return -1;
  }
  const int64_t k = root->operand(0)->parameter_number();
  if (k < 0 || k >= instr.operand_count()) return -1;
  return FusionCanUpdateInPlace(instr, *instr.operand(static_cast<int>(k))) ? static_cast<int>(k)
                                                                            : -1;
}

namespace {

class Inserter {
 public:
  Inserter(Module* module, PassContext& context, std::string_view pass_name)
      : module_(module), context_(context), pass_name_(pass_name), names_(*module) {}

  absl::StatusOr<bool> Run() {
    absl::flat_hash_map<const Computation*, CallContext> contexts = ComputeCallContexts(*module_);
    callers_ = ComputeCallers(*module_);
    bool changed = false;
    for (const auto& comp : module_->computations()) {
      if (contexts[comp.get()] != CallContext::kSequential) continue;
      ComputationEditor editor(comp.get(), &names_);
      bool comp_changed = false;
      if (!Allowed()) break;
      comp_changed |= WhileInits(editor);
      if (IsWhileBody(comp.get())) comp_changed |= BodyRoot(editor);
      if (IsBranch(comp.get())) comp_changed |= BranchRoot(editor);
      if (comp->is_entry()) comp_changed |= EntryRoot(editor);
      if (comp_changed) {
        editor.Finish(/*remove_dead=*/true);
        changed = true;
      }
    }
    return changed;
  }

 private:
  bool Allowed() const { return !out_of_fuel_; }
  // One unit of fuel per copied element.
  bool TakeFuel() {
    if (out_of_fuel_) return false;
    if (!context_.ConsumeFuel(pass_name_)) out_of_fuel_ = true;
    return !out_of_fuel_;
  }

  bool IsWhileBody(const Computation* comp) const {
    auto it = callers_.find(comp);
    if (it == callers_.end()) return false;
    for (const Instruction* caller : it->second) {
      if (caller->opcode() == Opcode::kWhile && caller->called_computations().size() >= 2 &&
          caller->called_computations()[1] == comp) {
        return true;
      }
    }
    return false;
  }
  bool IsBranch(const Computation* comp) const {
    auto it = callers_.find(comp);
    if (it == callers_.end()) return false;
    for (const Instruction* caller : it->second) {
      if (caller->opcode() == Opcode::kConditional) return true;
    }
    return false;
  }

  // Applies `copies` to `instr`; returns the replacement (or `instr` when nothing changes).
  Instruction* Apply(ComputationEditor& editor, Instruction* instr,
                     const std::set<ShapeIndex>& copies,
                     absl::flat_hash_map<Instruction*, ShapeIndex>* created,
                     const std::set<ShapeIndex>& doubles = {}) {
    ShapeIndex index;
    return Rebuild(editor, instr, &index, copies, doubles, created);
  }

  bool IsAliasedOutput(const ShapeIndex& output, const Source& src) const {
    for (const InputOutputAlias& a : module_->config().input_output_alias) {
      if (a.output_index == output && a.parameter_number == src.instr->parameter_number() &&
          a.parameter_index == src.index) {
        return true;
      }
    }
    return false;
  }

  bool EntryRoot(ComputationEditor& editor) {
    Computation* comp = editor.computation();
    Instruction* root = comp->root();
    if (root == nullptr) return false;
    std::set<ShapeIndex> copies;
    std::set<Source> seen;
    for (const ShapeIndex& leaf : ArrayLeaves(root->shape())) {
      Source src = SourceOf(root, leaf);
      bool needs = false;
      if (src.instr->opcode() == Opcode::kParameter) {
        needs = !IsAliasedOutput(leaf, src);
      } else if (src.instr->opcode() == Opcode::kConstant) {
        needs = true;
      }
      if (!seen.insert(src).second) needs = true;
      if (needs && TakeFuel()) copies.insert(leaf);
    }
    if (copies.empty()) return false;
    absl::flat_hash_map<Instruction*, ShapeIndex> created;
    Instruction* new_root = Apply(editor, root, copies, &created);
    editor.SetRoot(new_root);
    return true;
  }

  // True when nothing but `user` (through tuples and other pass-through instructions) reads
  // the value `instr` defines.
  bool OnlyFeeds(const ComputationEditor& editor, const Instruction* instr,
                 const Instruction* user) const {
    const Instruction* cur = instr;
    for (int guard = 0; guard < 1000; ++guard) {
      if (cur->IsRoot()) return false;
      const std::vector<Instruction*>& users = editor.users(cur);
      if (users.size() != 1) return false;
      const Instruction* next = users[0];
      if (next == user) {
        int uses = 0;
        for (const Instruction* op : next->operands()) uses += op == cur ? 1 : 0;
        return uses == 1;
      }
      if (next->opcode() != Opcode::kTuple && !PassesOperandOn(next->opcode())) return false;
      cur = next;
    }
    return false;
  }

  // True when the body of `loop` returns element `leaf` of its parameter unchanged.
  static bool PassedThrough(const Instruction* loop, const ShapeIndex& leaf) {
    if (loop->called_computations().size() != 2 || !loop->called_computations()[1]) return false;
    const Computation* body = loop->called_computations()[1];
    if (body->parameter_count() != 1 || !body->parameter(0) || !body->root()) return false;
    Source src = SourceOf(body->root(), leaf);
    return src.instr == body->parameter(0) && src.index == leaf;
  }

  // True when nothing after `loop` reads element `leaf` of its result (so a buffer the loop
  // only reads is never handed on to anything that could write it).
  static bool ResultElementUnused(const ComputationEditor& editor, const Instruction* loop,
                                  const ShapeIndex& leaf) {
    if (loop->IsRoot() || leaf.empty()) return false;
    for (const Instruction* u : editor.users(loop)) {
      if (u->opcode() != Opcode::kGetTupleElement) return false;
      if (u->tuple_index() == leaf[0]) return false;
    }
    return true;
  }

  bool WhileInits(ComputationEditor& editor) {
    bool changed = false;
    std::vector<Instruction*> whiles;
    for (Instruction* instr : editor.computation()->instructions()) {
      if (instr->opcode() == Opcode::kWhile && instr->operand_count() == 1) whiles.push_back(instr);
    }
    for (Instruction* w : whiles) {
      Instruction* init = w->operand(0);
      std::set<ShapeIndex> copies;
      std::set<Source> seen;
      for (const ShapeIndex& leaf : ArrayLeaves(init->shape())) {
        Source src = SourceOf(init, leaf);
        // An element the loop only reads (its body passes it through unchanged) may stay in
        // the buffer it came from, whoever else reads that buffer.
        bool needs = !(PassedThrough(w, leaf) && ResultElementUnused(editor, w, leaf)) &&
                     (src.instr->opcode() == Opcode::kParameter ||
                      src.instr->opcode() == Opcode::kConstant ||
                      !OnlyFeeds(editor, src.instr, w));
        if (!seen.insert(src).second) needs = true;
        if (needs && TakeFuel()) copies.insert(leaf);
      }
      if (copies.empty()) continue;
      absl::flat_hash_map<Instruction*, ShapeIndex> created;
      Instruction* new_init = Apply(editor, init, copies, &created);
      editor.ReplaceOperand(w, 0, new_init);
      changed = true;
    }
    return changed;
  }

  bool BranchRoot(ComputationEditor& editor) {
    Instruction* root = editor.computation()->root();
    if (root == nullptr) return false;
    std::set<ShapeIndex> copies;
    std::set<Source> seen;
    for (const ShapeIndex& leaf : ArrayLeaves(root->shape())) {
      Source src = SourceOf(root, leaf);
      bool needs = src.instr->opcode() == Opcode::kParameter ||
                   src.instr->opcode() == Opcode::kConstant;
      if (!seen.insert(src).second) needs = true;
      if (needs && TakeFuel()) copies.insert(leaf);
    }
    if (copies.empty()) return false;
    absl::flat_hash_map<Instruction*, ShapeIndex> created;
    editor.SetRoot(Apply(editor, root, copies, &created));
    return true;
  }

  bool BodyRoot(ComputationEditor& editor) {
    Computation* comp = editor.computation();
    Instruction* root = comp->root();
    if (root == nullptr || comp->parameter_count() != 1 || comp->parameter(0) == nullptr) {
      return false;
    }
    Instruction* param = comp->parameter(0);
    std::vector<ShapeIndex> leaves = ArrayLeaves(root->shape());
    std::vector<Source> sources;
    sources.reserve(leaves.size());
    for (const ShapeIndex& leaf : leaves) sources.push_back(SourceOf(root, leaf));
    // Parameter elements that another index takes over: their copies read them.
    std::set<ShapeIndex> moved_reads;
    for (size_t k = 0; k < leaves.size(); ++k) {
      if (sources[k].instr == param && sources[k].index != leaves[k]) {
        moved_reads.insert(sources[k].index);
      }
    }
    std::set<ShapeIndex> copies;
    std::set<Source> seen;
    for (size_t k = 0; k < leaves.size(); ++k) {
      const ShapeIndex& leaf = leaves[k];
      const Source& src = sources[k];
      bool needs = false;
      if (src.instr == param) {
        needs = src.index != leaf;
      } else if (src.instr->opcode() == Opcode::kParameter ||
                 src.instr->opcode() == Opcode::kConstant) {
        needs = true;
      } else {
        // A value computed in the body goes into the loop buffer of this index; every read
        // of the parameter element of this index must come before it.
        needs = moved_reads.count(leaf) > 0;
        if (!needs) {
          std::vector<Instruction*> readers = ReadersOf(editor, param, leaf);
          absl::flat_hash_set<const Instruction*> ancestors;
          bool have_ancestors = false;
          for (Instruction* r : readers) {
            if (r == src.instr) {
              if (!CanUpdateOperandInPlace(*r, *OperandReading(editor, param, leaf, r))) {
                needs = true;
              }
              continue;
            }
            if (!have_ancestors) {
              ancestors = Ancestors(src.instr);
              have_ancestors = true;
            }
            if (!ancestors.contains(r)) needs = true;
          }
        }
      }
      if (!seen.insert(src).second) needs = true;
      if (needs && TakeFuel()) copies.insert(leaf);
    }
    if (copies.empty()) return false;
    // A moved parameter element whose destination's own element another moved copy reads
    // goes through a buffer of its own first (a swap would otherwise need each copy first).
    std::set<ShapeIndex> doubles;
    for (size_t k = 0; k < leaves.size(); ++k) {
      if (copies.count(leaves[k]) && sources[k].instr == param && sources[k].index != leaves[k] &&
          moved_reads.count(leaves[k])) {
        doubles.insert(leaves[k]);
      }
    }
    absl::flat_hash_map<Instruction*, ShapeIndex> created;
    Instruction* new_root = Apply(editor, root, copies, &created, doubles);
    editor.SetRoot(new_root);
    // Order every copy after the reads of the parameter element it overwrites.
    for (auto& [copy, index] : created) {
      std::vector<Instruction*> readers = ReadersOf(editor, param, index);
      absl::flat_hash_set<const Instruction*> ancestors = Ancestors(copy);
      for (Instruction* r : readers) {
        if (r == copy || ancestors.contains(r)) continue;
        if (r == new_root) continue;
        copy->mutable_control_predecessors()->push_back(r);
      }
    }
    return true;
  }

  // The operand of `reader` through which it reads (param, index): the instruction holding
  // that value. Falls back to the reader's first operand.
  static const Instruction* OperandReading(const ComputationEditor& editor, Instruction* param,
                                           const ShapeIndex& index, const Instruction* reader) {
    for (const Instruction* op : reader->operands()) {
      Source s = SourceOf(op, {});
      if (s.instr == param && s.index == index) return op;
    }
    (void)editor;
    return reader->operand_count() > 0 ? reader->operand(0) : reader;
  }

  Module* module_;
  PassContext& context_;
  std::string_view pass_name_;
  NameUniquer names_;
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers_;
  bool out_of_fuel_ = false;
};

}  // namespace

absl::StatusOr<bool> CopyInsertion::Run(Module* module, PassContext& context) {
  Inserter inserter(module, context, name());
  return inserter.Run();
}

}  // namespace hlowb
