#include "replay/reduce/edits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/shape_inference.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb::reduce {
namespace {

bool HoldsToken(const Shape& shape) {
  if (shape.IsToken()) return true;
  if (!shape.IsTuple()) return false;
  for (const Shape& s : shape.tuple_shapes()) {
    if (HoldsToken(s)) return true;
  }
  return false;
}

// Every operand use (and the root) of `old` in `comp` reads `replacement` instead; control
// edges to `old` are dropped.
void ReplaceUses(Computation* comp, Instruction* old, Instruction* replacement) {
  for (Instruction* i : comp->instructions()) {
    if (i == replacement) continue;
    for (Instruction*& op : *i->mutable_operands()) {
      if (op == old) op = replacement;
    }
    auto& preds = *i->mutable_control_predecessors();
    preds.erase(std::remove(preds.begin(), preds.end(), old), preds.end());
  }
  if (comp->root() == old) comp->set_root(replacement);
}

// The instruction list with `removed` taken out and `front` put first.
void Relist(Computation* comp, const std::unordered_set<const Instruction*>& removed,
            const std::vector<Instruction*>& front) {
  std::vector<Instruction*> list = front;
  for (Instruction* i : comp->instructions()) {
    if (removed.count(i) == 0) list.push_back(i);
  }
  comp->SetInstructions(std::move(list));
}

std::unordered_map<std::string, Instruction*> NameMap(const Computation& comp) {
  std::unordered_map<std::string, Instruction*> map;
  map.reserve(comp.instructions().size());
  for (Instruction* i : comp.instructions()) map.emplace(i->name(), i);
  return map;
}

// Copies the callee of `call` (a call, a fusion or a conditional's branch `branch`) into the
// caller in place of `call`.
void InlineOne(Module* module, NameUniquer* names, Computation* caller, Instruction* call,
               const Computation* callee, const std::vector<Instruction*>& arguments) {
  std::unordered_map<const Instruction*, Instruction*> map;
  std::vector<Instruction*> copies;
  for (Instruction* p : callee->parameters()) {
    if (p == nullptr) continue;
    const int64_t n = p->parameter_number();
    if (n >= 0 && n < static_cast<int64_t>(arguments.size())) map[p] = arguments[n];
  }
  for (const Instruction* src : callee->instructions()) {
    if (src->opcode() == Opcode::kParameter) continue;
    Instruction* copy =
        module->NewInstruction(src->opcode(), names->Unique(src->name()), &src->shape());
    const std::string name = copy->name();
    CopyInstructionFields(*src, copy);
    copy->set_name(name);
    for (const Instruction* op : src->operands()) {
      auto it = map.find(op);
      copy->mutable_operands()->push_back(it == map.end() ? nullptr : it->second);
    }
    for (const Instruction* pred : src->control_predecessors()) {
      auto it = map.find(pred);
      if (it != map.end() && it->second->opcode() == pred->opcode()) {
        copy->mutable_control_predecessors()->push_back(it->second);
      }
    }
    map[src] = copy;
    copies.push_back(copy);
  }
  Instruction* result = map.at(callee->root());
  // Put the copies where the call was (its operands are before it).
  std::vector<Instruction*> list;
  for (Instruction* i : caller->instructions()) {
    if (i == call) {
      list.insert(list.end(), copies.begin(), copies.end());
      continue;
    }
    list.push_back(i);
  }
  caller->SetInstructions(std::move(list));
  for (Instruction* c : copies) c->set_parent(caller);
  ReplaceUses(caller, call, result);
}

// The scalar integer constant `instr` is, looking through conversions and reshapes.
const Instruction* IntegerConstantBehind(const Instruction* instr) {
  for (int depth = 0; instr != nullptr && depth < 4; ++depth) {
    if (instr->opcode() == Opcode::kConstant) {
      const Literal* l = instr->literal();
      if (l == nullptr || l->elided() || !instr->shape().IsScalar()) return nullptr;
      PrimitiveType t = instr->shape().element_type();
      if (!IsIntegral(t)) return nullptr;
      return instr;
    }
    switch (instr->opcode()) {
      case Opcode::kConvert:
      case Opcode::kReshape:
      case Opcode::kCopy:
      case Opcode::kBitcast: instr = instr->operand(0); break;
      default: return nullptr;
    }
  }
  return nullptr;
}

void CollectConditionBounds(const Computation* comp, std::unordered_set<const Computation*>* seen,
                            std::vector<TripBound>* out) {
  if (comp == nullptr || !seen->insert(comp).second) return;
  for (const Instruction* i : comp->instructions()) {
    if (i->opcode() == Opcode::kCall) {
      for (const Computation* c : i->called_computations()) CollectConditionBounds(c, seen, out);
    }
    if (i->opcode() != Opcode::kCompare || i->operand_count() != 2) continue;
    const ComparisonDirection d = i->attrs_or_default().comparison_direction;
    // counter < N, counter <= N, N > counter, N >= counter: a smaller N stops sooner.
    const Instruction* bound = nullptr;
    if (d == ComparisonDirection::kLt || d == ComparisonDirection::kLe) {
      bound = IntegerConstantBehind(i->operand(1));
    } else if (d == ComparisonDirection::kGt || d == ComparisonDirection::kGe) {
      bound = IntegerConstantBehind(i->operand(0));
    }
    if (bound == nullptr) continue;
    const double v = LiteralElementAsDouble(*bound->literal(), 0);
    if (!(v > 1) || v > 9e15) continue;
    TripBound b;
    b.computation = comp->name();
    b.constant = bound->name();
    b.value = static_cast<int64_t>(v);
    if (std::none_of(out->begin(), out->end(), [&](const TripBound& o) {
          return o.computation == b.computation && o.constant == b.constant;
        })) {
      out->push_back(std::move(b));
    }
  }
}

}  // namespace

Candidate CopyCandidate(const Candidate& c) {
  Candidate out;
  out.module = CloneModule(*c.module);
  out.arguments = c.arguments;
  return out;
}

int64_t CountInstructions(const Module& module) {
  int64_t n = 0;
  for (const auto& comp : module.computations()) n += comp->instruction_count();
  return n;
}

bool IsValueOnly(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement: return true;
    default: return false;
  }
}

int64_t CountOperations(const Module& module) {
  int64_t n = 0;
  for (const auto& comp : module.computations()) {
    for (const Instruction* i : comp->instructions()) n += IsValueOnly(*i) ? 0 : 1;
  }
  return n;
}

bool Cleanup(Candidate* c, bool keep_side_effects) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  bool changed = false;
  for (const auto& comp : module->computations()) {
    if (comp->root() == nullptr) continue;
    std::unordered_set<const Instruction*> live;
    std::vector<const Instruction*> stack{comp->root()};
    const bool is_entry = comp.get() == entry;
    for (const Instruction* i : comp->instructions()) {
      if ((!is_entry && i->opcode() == Opcode::kParameter) ||
          (keep_side_effects && HasSideEffect(*i))) {
        stack.push_back(i);
      }
    }
    while (!stack.empty()) {
      const Instruction* i = stack.back();
      stack.pop_back();
      if (i == nullptr || !live.insert(i).second) continue;
      for (const Instruction* op : i->operands()) stack.push_back(op);
    }
    std::vector<Instruction*> kept;
    for (Instruction* i : comp->instructions()) {
      if (live.count(i) > 0 || (is_entry && i->opcode() == Opcode::kParameter)) {
        kept.push_back(i);
      }
    }
    for (Instruction* i : kept) {
      auto& preds = *i->mutable_control_predecessors();
      preds.erase(std::remove_if(preds.begin(), preds.end(),
                                 [&](const Instruction* p) { return live.count(p) == 0; }),
                  preds.end());
    }
    if (kept.size() != comp->instructions().size()) {
      comp->SetInstructions(std::move(kept));
      changed = true;
    }
  }

  // Entry parameters nothing reads go, with their arguments; the rest are renumbered in order.
  if (entry != nullptr) {
    std::unordered_set<const Instruction*> used;
    for (const Instruction* i : entry->instructions()) {
      for (const Instruction* op : i->operands()) used.insert(op);
    }
    used.insert(entry->root());
    std::vector<Instruction*> params;
    for (Instruction* p : entry->parameters()) {
      if (p != nullptr) params.push_back(p);
    }
    std::sort(params.begin(), params.end(), [](const Instruction* a, const Instruction* b) {
      return a->parameter_number() < b->parameter_number();
    });
    bool drop = false;
    for (const Instruction* p : params) drop = drop || used.count(p) == 0;
    if (drop) {
      std::vector<Literal> args;
      std::unordered_set<const Instruction*> removed;
      int64_t next = 0;
      for (Instruction* p : params) {
        const int64_t n = p->parameter_number();
        if (used.count(p) == 0) {
          removed.insert(p);
          continue;
        }
        if (n >= 0 && n < static_cast<int64_t>(c->arguments.size())) {
          args.push_back(std::move(c->arguments[n]));
        }
        p->set_index(next++);
      }
      c->arguments = std::move(args);
      Relist(entry, removed, {});
      changed = true;
    }
  }
  changed |= RemoveUnreachableComputations(module);

  if (entry != nullptr && module->config().entry_computation_layout.has_value()) {
    ProgramShape ps;
    for (const Instruction* p : entry->parameters()) {
      if (p != nullptr) ps.parameters.push_back(p->shape());
    }
    if (entry->root() != nullptr) ps.result = entry->root()->shape();
    module->config().entry_computation_layout = std::move(ps);
  }
  return changed;
}

absl::Status CutAt(Candidate* c, const std::string& name) {
  Computation* entry = c->module->entry();
  Instruction* instr = entry == nullptr ? nullptr : entry->FindInstruction(name);
  if (instr == nullptr) {
    return absl::NotFoundError(StrCat("the entry computation has no instruction %", name));
  }
  entry->set_root(instr);
  return absl::OkStatus();
}

absl::Status CutAtPrefix(Candidate* c, int count,
                         const std::function<bool(const Instruction&)>& include) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  const std::vector<Instruction*>& all = entry->instructions();
  count = std::clamp(count, 1, static_cast<int>(all.size()));
  std::unordered_map<const Instruction*, int> position;
  for (int k = 0; k < static_cast<int>(all.size()); ++k) position[all[k]] = k;
  std::vector<bool> read_later(count, false);
  for (int k = count; k < static_cast<int>(all.size()); ++k) {
    for (const Instruction* op : all[k]->operands()) {
      auto it = position.find(op);
      if (it != position.end() && it->second < count) read_later[it->second] = true;
    }
  }
  if (auto it = position.find(entry->root()); it != position.end() && it->second < count) {
    read_later[it->second] = true;
  }
  read_later[count - 1] = true;
  std::vector<Instruction*> outputs;
  for (int k = 0; k < count; ++k) {
    const Instruction* i = all[k];
    if (!read_later[k] || i->opcode() == Opcode::kParameter || i->opcode() == Opcode::kConstant ||
        HoldsToken(i->shape()) || (include && !include(*i))) {
      continue;
    }
    outputs.push_back(all[k]);
  }
  if (outputs.empty()) {
    return absl::FailedPreconditionError("the prefix computes nothing to output");
  }
  std::vector<Instruction*> kept(all.begin(), all.begin() + count);
  Instruction* root = outputs[0];
  if (outputs.size() > 1) {
    std::vector<Shape> shapes;
    for (const Instruction* o : outputs) shapes.push_back(o->shape());
    NameUniquer names(*module);
    root = module->NewInstruction(Opcode::kTuple, names.Unique("reduce_outputs"),
                                  module->InternShape(Shape::Tuple(std::move(shapes))));
    *root->mutable_operands() = outputs;
    kept.push_back(root);
  }
  entry->SetInstructions(std::move(kept));
  entry->set_root(root);
  return absl::OkStatus();
}

absl::Status OutputAll(Candidate* c, const std::function<bool(const Instruction&)>& include,
                       std::vector<std::string>* names) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  std::vector<Instruction*> outputs;
  for (Instruction* i : entry->instructions()) {
    if (i->opcode() == Opcode::kParameter || i->opcode() == Opcode::kConstant ||
        HoldsToken(i->shape()) || (include && !include(*i))) {
      continue;
    }
    outputs.push_back(i);
    names->push_back(i->name());
  }
  if (outputs.empty()) return absl::FailedPreconditionError("no value to output");
  std::vector<Shape> shapes;
  for (const Instruction* o : outputs) shapes.push_back(o->shape());
  NameUniquer uniquer(*module);
  Instruction* root = module->NewInstruction(Opcode::kTuple, uniquer.Unique("reduce_outputs"),
                                             module->InternShape(Shape::Tuple(std::move(shapes))));
  *root->mutable_operands() = std::move(outputs);
  std::vector<Instruction*> list = entry->instructions();
  list.push_back(root);
  entry->SetInstructions(std::move(list));
  entry->set_root(root);
  return absl::OkStatus();
}

bool DropOutputs(Candidate* c, const std::vector<std::string>& names) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  Instruction* root = entry->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple) return false;
  std::unordered_set<std::string> drop(names.begin(), names.end());
  std::vector<Instruction*> kept;
  for (Instruction* op : root->operands()) {
    if (drop.count(op->name()) == 0) kept.push_back(op);
  }
  if (kept.empty() || kept.size() == root->operands().size()) return false;
  if (kept.size() == 1) {
    entry->set_root(kept[0]);
    return true;
  }
  std::vector<Shape> shapes;
  for (const Instruction* k : kept) shapes.push_back(k->shape());
  NameUniquer uniquer(*module);
  Instruction* tuple = module->NewInstruction(Opcode::kTuple, uniquer.Unique(root->name()),
                                              module->InternShape(Shape::Tuple(std::move(shapes))));
  *tuple->mutable_operands() = std::move(kept);
  std::vector<Instruction*> list;
  for (Instruction* i : entry->instructions()) {
    if (i != root) list.push_back(i);
  }
  list.push_back(tuple);
  entry->SetInstructions(std::move(list));
  entry->set_root(tuple);
  return true;
}

int ReplaceWithParameters(Candidate* c, std::vector<std::pair<std::string, Literal>> values) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  auto names = NameMap(*entry);
  int64_t next = 0;
  for (const Instruction* p : entry->parameters()) {
    if (p != nullptr) next = std::max(next, p->parameter_number() + 1);
  }
  std::unordered_set<const Instruction*> removed;
  std::vector<Instruction*> front;
  int replaced = 0;
  for (auto& [name, value] : values) {
    auto it = names.find(name);
    if (it == names.end() || removed.count(it->second) > 0) continue;
    Instruction* old = it->second;
    if (old->opcode() == Opcode::kParameter || old->shape().IsToken()) continue;
    Instruction* p = module->NewInstruction(Opcode::kParameter, old->name(), &old->shape());
    p->set_index(next++);
    if (old->metadata() != nullptr) *p->mutable_metadata() = *old->metadata();
    p->set_parent(entry);
    ReplaceUses(entry, old, p);
    removed.insert(old);
    front.push_back(p);
    c->arguments.push_back(std::move(value));
    ++replaced;
  }
  if (replaced > 0) Relist(entry, removed, front);
  return replaced;
}

int ReplaceWithZeros(Candidate* c,
                     const std::vector<std::pair<std::string, std::string>>& computation_and_name) {
  Module* module = c->module.get();
  NameUniquer uniquer(*module);
  std::unordered_map<Computation*,
                     std::pair<std::unordered_set<const Instruction*>, std::vector<Instruction*>>>
      edits;
  int replaced = 0;
  for (const auto& [comp_name, name] : computation_and_name) {
    Computation* comp = module->FindComputation(comp_name);
    if (comp == nullptr) continue;
    Instruction* old = comp->FindInstruction(name);
    auto& [removed, front] = edits[comp];
    if (old == nullptr || removed.count(old) > 0 || old->opcode() == Opcode::kParameter ||
        old->shape().IsTuple()) {
      continue;
    }
    const Shape& shape = old->shape();
    Instruction* zero = nullptr;
    if (shape.IsToken()) {
      if (old->opcode() == Opcode::kAfterAll && old->operand_count() == 0) continue;
      zero = module->NewInstruction(Opcode::kAfterAll, old->name(), &shape);
      front.push_back(zero);
    } else if (shape.IsArray()) {
      if (old->opcode() == Opcode::kConstant) continue;
      const Shape scalar = Shape::Array(shape.element_type(), {});
      if (shape.rank() == 0) {
        zero = module->NewInstruction(Opcode::kConstant, old->name(), &shape);
        zero->set_literal(std::make_unique<Literal>(ZerosLike(scalar)));
        front.push_back(zero);
      } else {
        if (old->opcode() == Opcode::kBroadcast && old->operand(0)->opcode() == Opcode::kConstant &&
            IsUniformConstant(*old, 0)) {
          continue;
        }
        Instruction* k =
            module->NewInstruction(Opcode::kConstant, uniquer.Unique(StrCat(old->name(), ".zero")),
                                   module->InternShape(scalar));
        k->set_literal(std::make_unique<Literal>(ZerosLike(scalar)));
        zero = module->NewInstruction(Opcode::kBroadcast, old->name(), &shape);
        zero->mutable_operands()->push_back(k);
        zero->set_has_dimensions(true);
        front.push_back(k);
        front.push_back(zero);
      }
    } else {
      continue;
    }
    for (Instruction* f : front) f->set_parent(comp);
    ReplaceUses(comp, old, zero);
    removed.insert(old);
    ++replaced;
  }
  for (auto& [comp, edit] : edits) {
    if (!edit.first.empty()) Relist(comp, edit.first, edit.second);
  }
  return replaced;
}

bool Bypass(Candidate* c, const std::string& computation, const std::string& name, int operand) {
  Computation* comp = c->module->FindComputation(computation);
  Instruction* instr = comp == nullptr ? nullptr : comp->FindInstruction(name);
  if (instr == nullptr || operand < 0 || operand >= instr->operand_count() ||
      instr->opcode() == Opcode::kParameter) {
    return false;
  }
  Instruction* op = instr->operand(operand);
  if (!op->shape().Compatible(instr->shape())) return false;
  ReplaceUses(comp, instr, op);
  Relist(comp, {instr}, {});
  return true;
}

absl::Status Outline(Candidate* c, const std::string& computation, std::vector<Literal> arguments) {
  Module* module = c->module.get();
  Computation* comp = module->FindComputation(computation);
  if (comp == nullptr) {
    return absl::NotFoundError(StrCat("the module has no computation %", computation));
  }
  if (static_cast<int>(arguments.size()) != comp->parameter_count()) {
    return absl::InvalidArgumentError(StrCat("computation %", computation, " takes ",
                                             comp->parameter_count(), " parameters, not ",
                                             arguments.size()));
  }
  module->set_entry(comp);
  c->arguments = std::move(arguments);
  RemoveUnreachableComputations(module);
  return absl::OkStatus();
}

bool InlineCalls(Candidate* c) {
  Module* module = c->module.get();
  NameUniquer names(*module);
  bool changed = false;
  // Callers before callees would inline a call's callee with calls still inside it, which is
  // fine: those are reached on the next pass of the loop.
  for (int round = 0; round < 8; ++round) {
    bool any = false;
    std::vector<Computation*> comps;
    for (const auto& comp : module->computations()) comps.push_back(comp.get());
    for (Computation* comp : comps) {
      std::vector<Instruction*> calls;
      for (Instruction* i : comp->instructions()) {
        if (i->opcode() == Opcode::kCall && i->called_computations().size() == 1 &&
            i->called_computations()[0] != nullptr && i->called_computations()[0] != comp) {
          calls.push_back(i);
        }
      }
      for (Instruction* call : calls) {
        InlineOne(module, &names, comp, call, call->called_computations()[0], call->operands());
        any = true;
      }
    }
    if (!any) break;
    changed = true;
  }
  return changed;
}

bool Unfuse(Candidate* c, const std::string& name) {
  Module* module = c->module.get();
  for (const auto& comp : module->computations()) {
    Instruction* f = comp->FindInstruction(name);
    if (f == nullptr || f->opcode() != Opcode::kFusion || f->called_computations().size() != 1 ||
        f->called_computations()[0] == nullptr) {
      continue;
    }
    NameUniquer names(*module);
    InlineOne(module, &names, comp.get(), f, f->called_computations()[0], f->operands());
    return true;
  }
  return false;
}

bool PickBranch(Candidate* c, const std::string& name, int branch) {
  Module* module = c->module.get();
  for (const auto& comp : module->computations()) {
    Instruction* cond = comp->FindInstruction(name);
    if (cond == nullptr || cond->opcode() != Opcode::kConditional) continue;
    const auto& branches = cond->called_computations();
    if (branch < 0 || branch >= static_cast<int>(branches.size()) || branches[branch] == nullptr ||
        branch + 1 >= cond->operand_count()) {
      return false;
    }
    NameUniquer names(*module);
    InlineOne(module, &names, comp.get(), cond, branches[branch], {cond->operand(branch + 1)});
    return true;
  }
  return false;
}

std::vector<TripBound> FindTripBounds(const Module& module) {
  std::vector<TripBound> out;
  for (const auto& comp : module.computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (i->opcode() != Opcode::kWhile || i->called_computations().empty()) continue;
      std::unordered_set<const Computation*> seen;
      CollectConditionBounds(i->called_computations()[0], &seen, &out);
    }
  }
  return out;
}

bool SetTripBound(Candidate* c, const TripBound& bound, int64_t value) {
  Computation* comp = c->module->FindComputation(bound.computation);
  Instruction* k = comp == nullptr ? nullptr : comp->FindInstruction(bound.constant);
  if (k == nullptr || k->opcode() != Opcode::kConstant || !k->shape().IsScalar()) return false;
  k->set_literal(std::make_unique<Literal>(
      ScalarLiteral(k->shape().element_type(), static_cast<double>(value))));
  return true;
}

namespace {

// `in` (row-major, see literal.h) restricted to [start, start + size) along `dim`.
Literal SliceAlong(const Literal& in, const Shape& shape, int dim, int64_t start, int64_t size) {
  Literal out(shape);
  const std::vector<int64_t>& dims = in.shape().dimensions();
  int64_t outer = 1;
  for (int d = 0; d < dim; ++d) outer *= dims[d];
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < dims.size(); ++d) inner *= dims[d];
  const size_t row = static_cast<size_t>(inner) * static_cast<size_t>(in.element_bytes());
  const uint8_t* src = reinterpret_cast<const uint8_t*>(in.data().data());
  uint8_t* dst = reinterpret_cast<uint8_t*>(out.mutable_data()->data());
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(dst + static_cast<size_t>(o * size) * row,
                src + static_cast<size_t>(o * dims[dim] + start) * row,
                static_cast<size_t>(size) * row);
  }
  return out;
}

}  // namespace

bool ShrinkParameters(Candidate* c, const std::vector<std::string>& names, int dim, int64_t start,
                      int64_t size) {
  Module* module = c->module.get();
  Computation* entry = module->entry();
  if (entry == nullptr || names.empty() || dim < 0 || size < 1 || start < 0) return false;
  std::unordered_set<const Instruction*> changed;
  for (const std::string& name : names) {
    Instruction* p = entry->FindInstruction(name);
    if (p == nullptr || p->opcode() != Opcode::kParameter || !p->shape().IsArray() ||
        p->shape().IsDynamic() || dim >= p->shape().rank()) {
      return false;
    }
    const int64_t n = p->shape().dimensions()[dim];
    const int64_t index = p->parameter_number();
    if (start + size > n || size >= n || index < 0 ||
        index >= static_cast<int64_t>(c->arguments.size())) {
      return false;
    }
    Literal& argument = c->arguments[index];
    if (argument.elided() || !argument.shape().IsArray() ||
        argument.shape().dimensions() != p->shape().dimensions()) {
      return false;
    }
    Shape shape = p->shape();
    (*shape.mutable_dimensions())[dim] = size;
    argument = SliceAlong(argument, shape, dim, start, size);
    p->set_shape(module->InternShape(shape));
    changed.insert(p);
  }
  // Defs before uses: each instruction that reads a changed value takes the shape its operands
  // now give it, keeping the layout it had.
  for (Instruction* instr : entry->instructions()) {
    bool reads_changed = false;
    for (const Instruction* operand : instr->operands()) {
      reads_changed = reads_changed || changed.count(operand) > 0;
    }
    if (!reads_changed) continue;
    absl::StatusOr<Shape> inferred = InferShape(*instr);
    if (!inferred.ok()) return false;
    Shape shape = *std::move(inferred);
    const Shape& old = instr->shape();
    if (shape.IsArray() && old.IsArray() && old.has_layout() && shape.rank() == old.rank()) {
      *shape.mutable_layout() = old.layout();
    } else if (!shape.AnyLayout() && old.AnyLayout()) {
      shape.SetDefaultLayout();
    }
    if (!shape.Compatible(old)) {
      instr->set_shape(module->InternShape(shape));
      changed.insert(instr);
    }
  }
  return true;
}

Literal ZerosLike(const Shape& shape) { return Literal(shape); }

}  // namespace hlowb::reduce
