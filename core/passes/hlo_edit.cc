#include "core/passes/hlo_edit.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/support/strings.h"
#include "core/analysis/shape_inference.h"
#include "core/ir/float_types.h"

namespace hlowb {

bool HasSideEffectNoRecurse(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
      return true;
    case Opcode::kCustomCall:
      return instr.attrs_or_default().custom_call_has_side_effect;
    default:
      return OpcodeCategoryOf(instr.opcode()) == OpcodeCategory::kCollective;
  }
}

namespace {

bool ComputationHasSideEffect(const Computation& comp,
                              absl::flat_hash_map<const Computation*, bool>* memo) {
  auto it = memo->find(&comp);
  if (it != memo->end()) return it->second;
  (*memo)[&comp] = false;  // recursion guard for malformed call graphs
  bool result = false;
  for (const Instruction* i : comp.instructions()) {
    if (HasSideEffectNoRecurse(*i)) {
      result = true;
      break;
    }
    for (const Computation* c : i->called_computations()) {
      if (c && ComputationHasSideEffect(*c, memo)) {
        result = true;
        break;
      }
    }
    if (result) break;
  }
  (*memo)[&comp] = result;
  return result;
}

}  // namespace

namespace {

bool HasSideEffectWithMemo(const Instruction& instr,
                           absl::flat_hash_map<const Computation*, bool>* memo) {
  if (HasSideEffectNoRecurse(instr)) return true;
  for (const Computation* c : instr.called_computations()) {
    if (c && ComputationHasSideEffect(*c, memo)) return true;
  }
  return false;
}

}  // namespace

bool HasSideEffect(const Instruction& instr) {
  absl::flat_hash_map<const Computation*, bool> memo;
  return HasSideEffectWithMemo(instr, &memo);
}

void CopyInstructionFields(const Instruction& src, Instruction* dst) {
  dst->set_opcode(src.opcode());
  dst->set_name(src.name());
  dst->set_shape(&src.shape());
  dst->set_index(src.index());
  *dst->mutable_dimensions() = src.dimensions();
  dst->set_has_dimensions(src.has_dimensions());
  if (src.literal()) dst->set_literal(std::make_unique<Literal>(*src.literal()));
  if (src.metadata()) *dst->mutable_metadata() = *src.metadata();
  if (src.sharding()) dst->set_sharding(std::make_unique<Sharding>(*src.sharding()));
  if (src.frontend_attributes()) {
    *dst->mutable_frontend_attributes() = *src.frontend_attributes();
  }
  dst->set_backend_config(src.backend_config());
  if (src.attrs()) *dst->mutable_attrs() = *src.attrs();
  *dst->mutable_called_computations() = src.called_computations();
  dst->set_async_sugar(src.async_sugar());
}

std::unique_ptr<Module> CloneModule(const Module& module) {
  auto out = std::make_unique<Module>(module.name());
  out->set_id(module.id());
  out->config() = module.config();
  out->stack_frames() = module.stack_frames();
  absl::flat_hash_map<const Computation*, Computation*> comp_map;
  absl::flat_hash_map<const Instruction*, Instruction*> instr_map;
  for (const auto& c : module.computations()) {
    auto copy = std::make_unique<Computation>(c->name());
    copy->set_id(c->id());
    copy->set_execution_thread(c->execution_thread());
    comp_map[c.get()] = out->AddComputation(std::move(copy));
  }
  for (const auto& c : module.computations()) {
    Computation* dst_comp = comp_map[c.get()];
    for (const Instruction* src : c->instructions()) {
      Instruction* dst =
          out->NewInstruction(src->opcode(), src->name(), out->InternShape(src->shape()));
      CopyInstructionFields(*src, dst);
      dst->set_shape(out->InternShape(src->shape()));
      dst->set_id(src->id());
      instr_map[src] = dst;
    }
    for (const Instruction* src : c->instructions()) {
      Instruction* dst = instr_map[src];
      for (Instruction* op : src->operands()) {
        auto it = instr_map.find(op);
        dst->mutable_operands()->push_back(it == instr_map.end() ? op : it->second);
      }
      for (Instruction* p : src->control_predecessors()) {
        auto it = instr_map.find(p);
        if (it != instr_map.end()) dst->mutable_control_predecessors()->push_back(it->second);
      }
      for (Computation*& called : *dst->mutable_called_computations()) {
        auto it = comp_map.find(called);
        if (it != comp_map.end()) called = it->second;
      }
      dst_comp->AddInstruction(dst);
    }
    if (c->root()) dst_comp->set_root(instr_map[c->root()]);
  }
  if (module.entry()) out->set_entry(comp_map[module.entry()]);
  return out;
}

// ----- NameUniquer -----

namespace {

// "add.17" -> "add"; "add" -> "add"; "add.x" -> "add.x".
std::string_view StripNumericSuffix(std::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == std::string_view::npos || dot + 1 == name.size() || dot == 0) return name;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, dot);
}

}  // namespace

void NameUniquer::Load() {
  const Module* module = pending_;
  pending_ = nullptr;
  if (module == nullptr) return;
  for (const auto& c : module->computations()) {
    Add(c->name());
    for (const Instruction* i : c->instructions()) Add(i->name());
  }
}

void NameUniquer::Register(std::string_view name) {
  Load();
  Add(name);
}

void NameUniquer::Add(std::string_view name) {
  used_.insert(std::string(name));
  std::string_view base = StripNumericSuffix(name);
  if (base.size() != name.size()) {
    int64_t n = 0;
    if (absl::SimpleAtoi(AsAbsl(name.substr(base.size() + 1)), &n)) {
      int64_t& next = next_[std::string(base)];
      next = std::max(next, n + 1);
    }
  }
}

std::string NameUniquer::Unique(std::string_view base_in) {
  Load();
  std::string base(StripNumericSuffix(base_in));
  if (base.empty()) base = "instruction";
  int64_t& next = next_[base];
  std::string candidate;
  if (next == 0) {
    next = 1;
    if (!used_.contains(base)) {
      used_.insert(base);
      return base;
    }
  }
  while (true) {
    candidate = StrCat(base, ".", next);
    ++next;
    if (!used_.contains(candidate)) break;
  }
  used_.insert(candidate);
  return candidate;
}

// ----- ComputationEditor -----

namespace {
const std::vector<Instruction*>& EmptyUsers() {
  static const std::vector<Instruction*>* empty = new std::vector<Instruction*>();
  return *empty;
}
}  // namespace

ComputationEditor::ComputationEditor(Computation* computation, NameUniquer* names)
    : computation_(computation), names_(names) {
  RebuildUsers();
}

void ComputationEditor::RebuildUsers() {
  users_.clear();
  users_stale_ = true;
}

void ComputationEditor::BuildUsers() const {
  users_.clear();
  users_.reserve(computation_->instructions().size() + added_.size());
  // Each user's operands are visited together, so a user already listed for an operand is
  // that list's last entry: no search through operands with thousands of users.
  auto add = [this](Instruction* user) {
    for (Instruction* op : user->operands()) {
      std::vector<Instruction*>& u = users_[op];
      if (u.empty() || u.back() != user) u.push_back(user);
    }
  };
  for (Instruction* i : computation_->instructions()) add(i);
  for (Instruction* i : added_) add(i);
  users_stale_ = false;
}

void ComputationEditor::AddUse(Instruction* operand, Instruction* user) {
  if (users_stale_) return;  // the next query rebuilds from the operands
  std::vector<Instruction*>& u = users_[operand];
  if (std::find(u.begin(), u.end(), user) == u.end()) u.push_back(user);
}

void ComputationEditor::RemoveUse(Instruction* operand, Instruction* user) {
  if (users_stale_) return;
  auto it = users_.find(operand);
  if (it == users_.end()) return;
  // Only drop the user when it no longer refers to operand at all.
  for (Instruction* op : user->operands()) {
    if (op == operand) return;
  }
  auto& u = it->second;
  u.erase(std::remove(u.begin(), u.end(), user), u.end());
}

const std::vector<Instruction*>& ComputationEditor::users(const Instruction* instr) const {
  if (users_stale_) BuildUsers();
  auto it = users_.find(instr);
  return it == users_.end() ? EmptyUsers() : it->second;
}

std::vector<Instruction*> ComputationEditor::control_successors(const Instruction* instr) const {
  std::vector<Instruction*> out;
  auto scan = [&](const std::vector<Instruction*>& list) {
    for (Instruction* i : list) {
      for (Instruction* p : i->control_predecessors()) {
        if (p == instr) {
          out.push_back(i);
          break;
        }
      }
    }
  };
  scan(computation_->instructions());
  scan(added_);
  return out;
}

void ComputationEditor::Insert(Instruction* instr) {
  instr->set_parent(computation_);
  added_.push_back(instr);
  for (Instruction* op : instr->operands()) AddUse(op, instr);
}

Instruction* ComputationEditor::Add(Opcode opcode, const Shape& shape,
                                    std::vector<Instruction*> operands,
                                    std::string_view name_base) {
  Module* m = module();
  std::string name = names_->Unique(name_base.empty() ? OpcodeName(opcode) : name_base);
  Instruction* instr = m->NewInstruction(opcode, std::move(name), m->InternShape(shape));
  *instr->mutable_operands() = std::move(operands);
  Insert(instr);
  return instr;
}

Instruction* ComputationEditor::AddLike(const Instruction& prototype, const Shape& shape,
                                        std::vector<Instruction*> operands) {
  Module* m = module();
  Instruction* instr = m->NewInstruction(prototype.opcode(), "", m->InternShape(shape));
  CopyInstructionFields(prototype, instr);
  instr->set_shape(m->InternShape(shape));
  instr->set_name(names_->Unique(prototype.name()));
  *instr->mutable_operands() = std::move(operands);
  Insert(instr);
  return instr;
}

Instruction* ComputationEditor::AddConstant(Literal literal, std::string_view name_base) {
  // Arrays get the default layout; scalars none, as the parser reads `f32[]`.
  Shape shape = literal.shape();
  if (shape.IsArray() && shape.rank() > 0 && !shape.has_layout()) shape.SetDefaultLayout();
  Instruction* c = Add(Opcode::kConstant, shape, {}, name_base);
  c->set_literal(std::make_unique<Literal>(std::move(literal)));
  return c;
}

absl::StatusOr<Instruction*> ComputationEditor::AddInferred(
    Opcode opcode, std::vector<Instruction*> operands,
    const std::function<void(Instruction*)>& set_attrs, std::string_view name_base) {
  Module* m = module();
  Shape placeholder;
  Instruction* instr = m->NewInstruction(opcode, "", m->InternShape(placeholder));
  *instr->mutable_operands() = operands;
  if (set_attrs) set_attrs(instr);
  absl::StatusOr<Shape> shape = InferShape(*instr);
  if (!shape.ok()) return shape.status();
  Shape s = *std::move(shape);
  // Modules with layouts get one on new arrays too; layout-free test modules stay layout-free.
  bool operands_have_layouts = operands.empty();
  for (const Instruction* op : operands) {
    if (op->shape().IsArray() && op->shape().has_layout()) operands_have_layouts = true;
  }
  if (s.IsArray() && s.rank() > 0 && !s.has_layout() && operands_have_layouts) {
    s.SetDefaultLayout();
  }
  instr->set_shape(m->InternShape(s));
  instr->set_name(names_->Unique(name_base.empty() ? OpcodeName(opcode) : name_base));
  Insert(instr);
  return instr;
}

void ComputationEditor::ReplaceOperand(Instruction* user, int operand_index,
                                       Instruction* new_operand) {
  Instruction* old = user->operand(operand_index);
  if (old == new_operand) return;
  (*user->mutable_operands())[operand_index] = new_operand;
  RemoveUse(old, user);
  AddUse(new_operand, user);
}

int64_t ComputationEditor::ReplaceUsesExcept(Instruction* old, Instruction* replacement,
                                             const Instruction* except) {
  if (old == replacement) return 0;
  int64_t changed = 0;
  std::vector<Instruction*> users_copy = users(old);
  for (Instruction* u : users_copy) {
    if (u == except || u == replacement) continue;
    auto& ops = *u->mutable_operands();
    for (auto& op : ops) {
      if (op == old) {
        op = replacement;
        ++changed;
      }
    }
    RemoveUse(old, u);
    AddUse(replacement, u);
  }
  if (computation_->root() == old) {
    computation_->set_root(replacement);
    ++changed;
  }
  return changed;
}

int64_t ComputationEditor::ReplaceAllUsesWith(Instruction* old, Instruction* replacement) {
  return ReplaceUsesExcept(old, replacement, nullptr);
}

void ComputationEditor::SetRoot(Instruction* root) { computation_->set_root(root); }

bool ComputationEditor::Finish(bool remove_dead) {
  std::vector<Instruction*> all = computation_->instructions();
  const size_t original_count = all.size();
  all.insert(all.end(), added_.begin(), added_.end());
  added_.clear();

  absl::flat_hash_set<const Instruction*> live;
  if (remove_dead) {
    std::vector<Instruction*> stack;
    auto mark = [&](Instruction* i) {
      if (i && live.insert(i).second) stack.push_back(i);
    };
    mark(computation_->root());
    // One memo for the whole computation: fused and called computations are walked once.
    absl::flat_hash_map<const Computation*, bool> side_effects;
    for (Instruction* i : all) {
      if (i->opcode() == Opcode::kParameter || HasSideEffectWithMemo(*i, &side_effects)) mark(i);
    }
    while (!stack.empty()) {
      Instruction* i = stack.back();
      stack.pop_back();
      for (Instruction* op : i->operands()) mark(op);
      for (Instruction* p : i->control_predecessors()) mark(p);
    }
    // Re-link control edges around removed instructions.
    for (Instruction* i : all) {
      if (!live.contains(i)) continue;
      auto& preds = *i->mutable_control_predecessors();
      if (preds.empty()) continue;
      std::vector<Instruction*> kept;
      std::vector<Instruction*> work(preds.begin(), preds.end());
      absl::flat_hash_set<Instruction*> seen;
      while (!work.empty()) {
        Instruction* p = work.back();
        work.pop_back();
        if (!seen.insert(p).second) continue;
        if (live.contains(p)) {
          kept.push_back(p);
        } else {
          for (Instruction* pp : p->control_predecessors()) work.push_back(pp);
        }
      }
      std::sort(kept.begin(), kept.end(),
                [](const Instruction* a, const Instruction* b) { return a->id() < b->id(); });
      preds = kept;
    }
  }

  // Stable topological order: visit in the current order, emitting operands first.
  std::vector<Instruction*> order;
  order.reserve(all.size());
  absl::flat_hash_map<const Instruction*, uint8_t> state;  // 1 = visiting, 2 = done
  state.reserve(all.size());
  absl::flat_hash_set<const Instruction*> in_comp(all.begin(), all.end());
  struct Frame {
    Instruction* instr;
    size_t next;
  };
  std::vector<Frame> stack;
  for (Instruction* root : all) {
    if (remove_dead && !live.contains(root)) continue;
    if (state[root] == 2) continue;
    stack.push_back({root, 0});
    state[root] = 1;
    while (!stack.empty()) {
      Frame& f = stack.back();
      Instruction* i = f.instr;
      const size_t n_ops = i->operands().size();
      const size_t n_total = n_ops + i->control_predecessors().size();
      if (f.next < n_total) {
        Instruction* dep = f.next < n_ops ? i->operand(static_cast<int>(f.next))
                                          : i->control_predecessors()[f.next - n_ops];
        ++f.next;
        if (!dep || !in_comp.contains(dep)) continue;
        uint8_t& s = state[dep];
        if (s == 0) {
          s = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[i] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }
  bool changed = order.size() != original_count;
  if (!changed) {
    const auto& cur = computation_->instructions();
    for (size_t k = 0; k < order.size(); ++k) {
      if (cur[k] != order[k]) {
        changed = true;
        break;
      }
    }
  }
  if (changed) {
    computation_->SetInstructions(std::move(order));
    RebuildUsers();
  }
  return changed;
}

// ----- module-level helpers -----

absl::flat_hash_set<const Computation*> FusedComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> out;
  for (const auto& c : module.computations()) {
    for (const Instruction* instr : c->instructions()) {
      if (instr->opcode() != Opcode::kFusion) continue;
      for (const Computation* called : instr->called_computations()) out.insert(called);
    }
  }
  return out;
}

absl::flat_hash_map<const Computation*, std::vector<Instruction*>> ComputeCallers(
    const Module& module) {
  absl::flat_hash_map<const Computation*, std::vector<Instruction*>> callers;
  for (const auto& c : module.computations()) {
    for (Instruction* i : c->instructions()) {
      for (const Computation* called : i->called_computations()) {
        if (called) callers[called].push_back(i);
      }
    }
  }
  return callers;
}

bool RemoveUnreachableComputations(Module* module) {
  if (!module->entry()) return false;
  // Post order from the entry: callees first.
  std::vector<Computation*> post;
  absl::flat_hash_map<const Computation*, uint8_t> state;
  struct Frame {
    Computation* comp;
    size_t instr;
    size_t called;
  };
  std::vector<Frame> stack{{module->entry(), 0, 0}};
  state[module->entry()] = 1;
  while (!stack.empty()) {
    Frame& f = stack.back();
    const auto& instrs = f.comp->instructions();
    Computation* next = nullptr;
    while (f.instr < instrs.size() && !next) {
      const auto& called = instrs[f.instr]->called_computations();
      if (f.called < called.size()) {
        Computation* c = called[f.called++];
        if (c && state[c] == 0) next = c;
      } else {
        ++f.instr;
        f.called = 0;
      }
    }
    if (next) {
      state[next] = 1;
      stack.push_back({next, 0, 0});
      continue;
    }
    state[f.comp] = 2;
    post.push_back(f.comp);
    stack.pop_back();
  }
  auto& comps = *module->mutable_computations();
  // Keep the existing relative order where it is already valid; otherwise use post order.
  absl::flat_hash_map<const Computation*, size_t> pos;
  for (size_t i = 0; i < post.size(); ++i) pos[post[i]] = i;
  std::vector<std::unique_ptr<Computation>> kept;
  bool changed = false;
  for (auto& c : comps) {
    if (pos.contains(c.get())) {
      kept.push_back(std::move(c));
    } else {
      changed = true;
    }
  }
  // Check callees-before-callers in the kept order.
  absl::flat_hash_map<const Computation*, size_t> kept_pos;
  for (size_t i = 0; i < kept.size(); ++i) kept_pos[kept[i].get()] = i;
  bool valid = true;
  for (size_t i = 0; i < kept.size() && valid; ++i) {
    for (const Instruction* instr : kept[i]->instructions()) {
      for (const Computation* called : instr->called_computations()) {
        auto it = kept_pos.find(called);
        if (it != kept_pos.end() && it->second > i) valid = false;
      }
    }
  }
  if (!valid) {
    std::stable_sort(kept.begin(), kept.end(),
                     [&](const std::unique_ptr<Computation>& a,
                         const std::unique_ptr<Computation>& b) {
                       return pos[a.get()] < pos[b.get()];
                     });
    changed = true;
  }
  comps = std::move(kept);
  return changed;
}

// ----- literal helpers -----

namespace {

void SetElementFromDouble(Literal* lit, int64_t i, double value) {
  PrimitiveType t = lit->shape().element_type();
  if (t == PrimitiveType::kPred) {
    lit->SetBits(i, value != 0 ? 1 : 0);
  } else if (IsComplex(t)) {
    PrimitiveType ct = ComplexComponentType(t);
    lit->SetBits(2 * i, DoubleToFloatBits(ct, value));
    lit->SetBits(2 * i + 1, DoubleToFloatBits(ct, 0.0));
  } else if (IsFloatingPoint(t)) {
    lit->SetBits(i, DoubleToFloatBits(t, value));
  } else if (IsSignedIntegral(t)) {
    lit->SetBits(i, static_cast<uint64_t>(static_cast<int64_t>(value)));
  } else {
    lit->SetBits(i, static_cast<uint64_t>(value < 0 ? 0 : value));
  }
}

}  // namespace

Literal ScalarLiteral(PrimitiveType type, double value) {
  Literal lit(Shape::Array(type, {}));
  SetElementFromDouble(&lit, 0, value);
  return lit;
}

Literal FilledLiteral(const Shape& shape, double value) {
  Shape s = shape;
  if (!s.has_layout() && s.rank() > 0) s.SetDefaultLayout();
  Literal lit(s);
  for (int64_t i = 0; i < lit.element_count(); ++i) SetElementFromDouble(&lit, i, value);
  return lit;
}

double LiteralElementAsDouble(const Literal& literal, int64_t i) {
  PrimitiveType t = literal.shape().element_type();
  if (t == PrimitiveType::kPred) return literal.GetBits(i) ? 1.0 : 0.0;
  if (IsComplex(t)) return FloatBitsToDouble(ComplexComponentType(t), literal.GetBits(2 * i));
  if (IsFloatingPoint(t)) return FloatBitsToDouble(t, literal.GetBits(i));
  if (IsSignedIntegral(t)) return static_cast<double>(literal.GetInt(i));
  return static_cast<double>(literal.GetBits(i));
}

std::optional<double> UniformConstantValue(const Instruction& instr) {
  const Instruction* c = &instr;
  while (c->opcode() == Opcode::kBroadcast && c->operand_count() == 1) c = c->operand(0);
  if (c->opcode() != Opcode::kConstant || !c->literal()) return std::nullopt;
  const Literal& lit = *c->literal();
  if (lit.elided() || !lit.shape().IsArray() || lit.element_count() == 0) return std::nullopt;
  PrimitiveType t = lit.shape().element_type();
  if (IsComplex(t)) {
    for (int64_t i = 0; i < lit.element_count(); ++i) {
      if (FloatBitsToDouble(ComplexComponentType(t), lit.GetBits(2 * i + 1)) != 0) {
        return std::nullopt;
      }
    }
  }
  double first = LiteralElementAsDouble(lit, 0);
  const uint64_t first_bits = lit.GetBits(0);  // the real part's bits for complex
  for (int64_t i = 1; i < lit.element_count(); ++i) {
    if (IsComplex(t)) {
      if (lit.GetBits(2 * i) != first_bits) return std::nullopt;
    } else if (lit.GetBits(i) != first_bits) {
      return std::nullopt;
    }
  }
  return first;
}

bool IsUniformConstant(const Instruction& instr, double value) {
  std::optional<double> v = UniformConstantValue(instr);
  return v.has_value() && *v == value && !(value == 0 && std::signbit(*v));
}

}  // namespace hlowb
