#include "core/passes/layout_normalization.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/analysis/shape_inference.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

using Perm = std::vector<int64_t>;

Perm Descending(int rank) {
  Perm m2m;
  for (int i = rank - 1; i >= 0; --i) m2m.push_back(i);
  return m2m;
}

Perm Identity(int rank) {
  Perm p;
  for (int i = 0; i < rank; ++i) p.push_back(i);
  return p;
}

bool IsIdentity(const Perm& p) { return p == Identity(static_cast<int>(p.size())); }

Perm Inverse(const Perm& p) {
  Perm inv(p.size());
  for (size_t i = 0; i < p.size(); ++i) inv[p[i]] = static_cast<int64_t>(i);
  return inv;
}

Perm MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int>(s.layout().minor_to_major.size()) == s.rank()) {
    return s.layout().minor_to_major;
  }
  return Descending(s.rank());
}

// The logical dimensions of an array in memory order, major to minor.
Perm PhysicalOrder(const Shape& s) {
  Perm m2m = MinorToMajor(s);
  std::reverse(m2m.begin(), m2m.end());
  return m2m;
}

// True when every array in `s` is laid out in the default (descending) order.
bool IsDefaultLayout(const Shape& s) {
  if (s.IsArray()) return IsIdentity(PhysicalOrder(s));
  for (const Shape& e : s.tuple_shapes()) {
    if (!IsDefaultLayout(e)) return false;
  }
  return true;
}

// An array with `base`'s element type and layout details, dimension j being base's
// dimension order[j], in the descending layout.
Shape PermutedArray(const Shape& base, const Perm& order) {
  if (base.rank() == 0) return base;
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(base.dimension(static_cast<int>(d)));
  Shape r = Shape::Array(base.element_type(), std::move(dims));
  for (size_t j = 0; j < order.size(); ++j) {
    if (base.is_dynamic_dimension(static_cast<int>(order[j]))) {
      r.set_dynamic_dimension(static_cast<int>(j), true);
    }
  }
  if (base.has_layout()) *r.mutable_layout() = base.layout();
  Layout* l = r.mutable_layout();
  Perm m2m = Descending(r.rank());
  if (l->minor_to_major != m2m) {
    l->minor_to_major = m2m;
    l->tiles.clear();
  }
  return r;
}

// The shape a value has once normalized: arrays in memory order with the default layout.
Shape PhysicalShape(const Shape& s) {
  if (s.IsArray()) return PermutedArray(s, PhysicalOrder(s));
  Shape r = s;
  if (r.IsTuple()) {
    for (Shape& e : *r.mutable_tuple_shapes()) e = PhysicalShape(e);
  }
  return r;
}

// True when reshaping `in` (laid out as its layout says) into `out` leaves every element at
// its place in memory. Dimensions are grouped into the smallest runs whose element counts
// agree; both sides must list the runs in the same memory order, each run row-major.
bool ReshapeIsBitcast(const Shape& in, const Shape& out) {
  if (in.ElementCount() == 0 && out.ElementCount() == 0) return true;
  std::vector<int64_t> a, b;
  for (int i = 0; i < in.rank(); ++i) {
    if (in.dimension(i) != 1) a.push_back(i);
  }
  for (int i = 0; i < out.rank(); ++i) {
    if (out.dimension(i) != 1) b.push_back(i);
  }
  absl::flat_hash_map<int64_t, int> group_of_in, group_of_out;
  std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> groups;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    std::vector<int64_t> gi, go;
    int64_t pa = 1, pb = 1;
    do {
      bool take_in = (pa <= pb && i < a.size()) || j >= b.size();
      if (take_in) {
        if (i >= a.size()) return false;
        pa *= in.dimension(static_cast<int>(a[i]));
        gi.push_back(a[i++]);
      } else {
        pb *= out.dimension(static_cast<int>(b[j]));
        go.push_back(b[j++]);
      }
      if (pa > (int64_t{1} << 62) || pb > (int64_t{1} << 62)) return false;
    } while (pa != pb);
    for (int64_t d : gi) group_of_in[d] = static_cast<int>(groups.size());
    for (int64_t d : go) group_of_out[d] = static_cast<int>(groups.size());
    groups.emplace_back(std::move(gi), std::move(go));
  }
  // The run order a side's memory order implies, or nullopt when a run is split or permuted.
  auto run_order = [&](const Shape& s, const absl::flat_hash_map<int64_t, int>& group_of,
                       bool input) -> std::optional<std::vector<int>> {
    std::vector<int64_t> phys;
    for (int64_t d : PhysicalOrder(s)) {
      if (s.dimension(static_cast<int>(d)) != 1) phys.push_back(d);
    }
    std::vector<int> order;
    size_t pos = 0;
    while (pos < phys.size()) {
      int g = group_of.at(phys[pos]);
      const std::vector<int64_t>& run = input ? groups[g].first : groups[g].second;
      if (pos + run.size() > phys.size()) return std::nullopt;
      for (size_t k = 0; k < run.size(); ++k) {
        if (phys[pos + k] != run[k]) return std::nullopt;
      }
      pos += run.size();
      order.push_back(g);
    }
    return order;
  };
  std::optional<std::vector<int>> in_order = run_order(in, group_of_in, true);
  std::optional<std::vector<int>> out_order = run_order(out, group_of_out, false);
  return in_order && out_order && *in_order == *out_order;
}

bool Handled(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kTranspose:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kReduce:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kWhile:
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
      return true;
    default:
      return IsElementwise(op);
  }
}

// How a computation is entered: with normalized parameters and a normalized result in the
// layouts of `root_target` (while bodies and conditions), or with its declared signature.
struct Plan {
  bool normalized = false;
  Shape root_target;
};

class Normalizer {
 public:
  Normalizer(Module* module, PassContext& context, std::string_view pass_name)
      : module_(module), context_(context), pass_name_(pass_name), names_(*module) {}

  bool Run();

 private:
  void ProcessComputation(Computation* comp, const Plan& plan);
  // Rewrites `x` on normalized operands; nullptr when this pass leaves `x` alone.
  Instruction* Rewrite(Instruction* x);

  const Shape& Orig(const Instruction* x) const {
    auto it = original_.find(x);
    return it == original_.end() ? x->shape() : it->second;
  }
  Instruction* Add(Opcode op, const Shape& shape, std::vector<Instruction*> operands) {
    return editor_->Add(op, shape, std::move(operands));
  }
  Instruction* Transpose(Instruction* v, const Perm& t);
  Instruction* Element(Instruction* tuple, int i);
  // Normalized value of `x`, in the memory order of Orig(x).
  Instruction* Norm(Instruction* x);
  // `x`'s value with its original shape and layout.
  Instruction* Logical(Instruction* x);
  Instruction* ToPhysical(Instruction* x, const Shape& s);
  Instruction* FromPhysical(Instruction* p, const Shape& s);
  // A normalized value laid out as `from`, moved into the memory order of `to`.
  Instruction* Relayout(Instruction* p, const Shape& from, const Shape& to);
  // Operand `o` (an array) in the physical order `order` of its logical dimensions.
  Instruction* InOrder(Instruction* o, const Perm& order) {
    return Transpose(Norm(o), [&] {
      Perm inv = Inverse(PhysicalOrder(Orig(o)));
      Perm t;
      for (int64_t d : order) t.push_back(inv[d]);
      return t;
    }());
  }

  Module* module_;
  PassContext& context_;
  std::string_view pass_name_;
  NameUniquer names_;
  bool changed_ = false;
  absl::flat_hash_map<const Instruction*, Shape> original_;
  absl::flat_hash_map<const Computation*, Plan> plans_;
  // Per computation.
  ComputationEditor* editor_ = nullptr;
  bool trusted_parameters_ = false;
  absl::flat_hash_map<const Instruction*, Instruction*> norm_;
  absl::flat_hash_map<const Instruction*, Instruction*> logical_;
  absl::flat_hash_set<Instruction*> rebuilt_;
};

Instruction* Normalizer::Transpose(Instruction* v, const Perm& t) {
  if (IsIdentity(t)) return v;
  Instruction* r = Add(Opcode::kTranspose, PermutedArray(v->shape(), t), {v});
  *r->mutable_dimensions() = t;
  r->set_has_dimensions(true);
  return r;
}

Instruction* Normalizer::Element(Instruction* tuple, int i) {
  if (tuple->opcode() == Opcode::kTuple && i < tuple->operand_count()) return tuple->operand(i);
  Instruction* e = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shape(i), {tuple});
  e->set_index(i);
  return e;
}

Instruction* Normalizer::ToPhysical(Instruction* x, const Shape& s) {
  if (IsDefaultLayout(s)) return x;
  if (s.IsArray()) {
    // An entry parameter's layout is known to whoever passes it: a bitcast says it all.
    // Elsewhere a transpose into memory order (a bitcast in memory) keeps the meaning
    // independent of how the producer laid the value out.
    if (x->opcode() == Opcode::kParameter && trusted_parameters_) {
      return Add(Opcode::kBitcast, PhysicalShape(s), {x});
    }
    return Transpose(x, PhysicalOrder(s));
  }
  std::vector<Instruction*> elements;
  for (int i = 0; i < s.tuple_count(); ++i) {
    elements.push_back(ToPhysical(Element(x, i), s.tuple_shape(i)));
  }
  return Add(Opcode::kTuple, PhysicalShape(s), std::move(elements));
}

Instruction* Normalizer::FromPhysical(Instruction* p, const Shape& s) {
  if (IsDefaultLayout(s) && p->shape() == s) return p;
  if (s.IsArray()) return Add(Opcode::kBitcast, s, {p});
  if (!s.IsTuple()) return p;
  std::vector<Instruction*> elements;
  for (int i = 0; i < s.tuple_count(); ++i) {
    elements.push_back(FromPhysical(Element(p, i), s.tuple_shape(i)));
  }
  return Add(Opcode::kTuple, s, std::move(elements));
}

// True when every array of `a` is laid out in the same memory order as in `b`.
bool SameOrders(const Shape& a, const Shape& b) {
  if (a.IsArray() && b.IsArray()) return PhysicalOrder(a) == PhysicalOrder(b);
  if (a.IsTuple() != b.IsTuple() || a.tuple_count() != b.tuple_count()) return false;
  for (int i = 0; i < a.tuple_count(); ++i) {
    if (!SameOrders(a.tuple_shape(i), b.tuple_shape(i))) return false;
  }
  return true;
}

Instruction* Normalizer::Relayout(Instruction* p, const Shape& from, const Shape& to) {
  if (SameOrders(from, to)) return p;
  if (from.IsArray() && to.IsArray()) {
    Perm inv = Inverse(PhysicalOrder(from));
    Perm t;
    for (int64_t d : PhysicalOrder(to)) t.push_back(inv[d]);
    return Transpose(p, t);
  }
  if (!from.IsTuple() || !to.IsTuple() || from.tuple_count() != to.tuple_count()) return p;
  std::vector<Instruction*> elements;
  bool same = true;
  for (int i = 0; i < to.tuple_count(); ++i) {
    Instruction* e = Element(p, i);
    Instruction* r = Relayout(e, from.tuple_shape(i), to.tuple_shape(i));
    if (r != e) same = false;
    elements.push_back(r);
  }
  if (same) return p;
  return Add(Opcode::kTuple, PhysicalShape(to), std::move(elements));
}

Instruction* Normalizer::Norm(Instruction* x) {
  if (auto it = norm_.find(x); it != norm_.end()) return it->second;
  Instruction* n = ToPhysical(x, Orig(x));
  norm_[x] = n;
  return n;
}

Instruction* Normalizer::Logical(Instruction* x) {
  if (!rebuilt_.contains(x)) return x;
  if (auto it = logical_.find(x); it != logical_.end()) return it->second;
  Instruction* l = FromPhysical(norm_.at(x), Orig(x));
  logical_[x] = l;
  return l;
}

Instruction* Normalizer::Rewrite(Instruction* x) {
  const Opcode op = x->opcode();
  const Shape& s = Orig(x);
  const int n = x->operand_count();
  if (s.IsArray()) {
    for (const Instruction* o : x->operands()) {
      if (!Orig(o).IsArray() && op != Opcode::kGetTupleElement) return nullptr;
    }
  }
  const Perm order = s.IsArray() ? PhysicalOrder(s) : Perm{};
  const Perm inv = Inverse(order);
  const Shape phys = PhysicalShape(s);
  auto like = [&](std::vector<Instruction*> operands) {
    return editor_->AddLike(*x, phys, std::move(operands));
  };
  switch (op) {
    case Opcode::kParameter: {
      // Only parameters of normalized computations get here: they change shape in place.
      x->set_shape(module_->InternShape(phys));
      return x;
    }
    case Opcode::kConstant: {
      Shape plain = s;
      *plain.mutable_layout() = PermutedArray(s, Identity(s.rank())).layout();
      return Transpose(editor_->AddLike(*x, plain, {}), order);
    }
    case Opcode::kIota: {
      Instruction* r = like({});
      r->set_index(inv[x->iota_dimension()]);
      return r;
    }
    case Opcode::kTranspose: {
      const Perm& perm = x->dimensions();
      Perm source;
      for (int64_t d : order) source.push_back(perm[d]);
      return InOrder(x->operand(0), source);
    }
    case Opcode::kReshape:
    case Opcode::kBitcast: {
      Instruction* o = x->operand(0);
      const Shape& os = Orig(o);
      if (os.element_type() != s.element_type() || os.ElementCount() != s.ElementCount()) {
        return nullptr;
      }
      if (op == Opcode::kBitcast || ReshapeIsBitcast(os, s)) {
        Instruction* p = Norm(o);
        if (p->shape().dimensions() == phys.dimensions()) return p;
        return Add(Opcode::kBitcast, phys, {p});
      }
      Instruction* logical_in = InOrder(o, Identity(os.rank()));
      Instruction* r = Add(Opcode::kReshape, PermutedArray(s, Identity(s.rank())), {logical_in});
      return Transpose(r, order);
    }
    case Opcode::kBroadcast: {
      Instruction* o = x->operand(0);
      const Perm& map = x->dimensions();
      if (static_cast<int>(map.size()) != Orig(o).rank()) return nullptr;
      Perm operand_order = Identity(static_cast<int>(map.size()));
      std::sort(operand_order.begin(), operand_order.end(),
                [&](int64_t a, int64_t b) { return inv[map[a]] < inv[map[b]]; });
      Perm dims;
      for (int64_t k : operand_order) dims.push_back(inv[map[k]]);
      Instruction* r = like({InOrder(o, operand_order)});
      *r->mutable_dimensions() = dims;
      return r;
    }
    case Opcode::kReduce: {
      if (n != 2 || !s.IsArray()) return nullptr;
      Instruction* in = x->operand(0);
      const Perm in_order = PhysicalOrder(Orig(in));
      const Perm in_inv = Inverse(in_order);
      const Perm& reduced = x->dimensions();
      Perm positions;
      for (int64_t d : reduced) positions.push_back(in_inv[d]);
      std::sort(positions.begin(), positions.end());
      // Kept dimensions in the input's memory order, as result dimensions.
      Perm kept;
      for (int64_t d : in_order) {
        if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
        int64_t below = 0;
        for (int64_t r : reduced) below += r < d ? 1 : 0;
        kept.push_back(d - below);
      }
      if (static_cast<int>(kept.size()) != s.rank()) return nullptr;
      Instruction* r = editor_->AddLike(*x, PermutedArray(s, kept),
                                        {Norm(in), Logical(x->operand(1))});
      *r->mutable_dimensions() = positions;
      Perm kept_inv = Inverse(kept);
      Perm t;
      for (int64_t d : order) t.push_back(kept_inv[d]);
      return Transpose(r, t);
    }
    case Opcode::kGetTupleElement: {
      Instruction* o = x->operand(0);
      const Shape& ts = Orig(o);
      int64_t k = x->tuple_index();
      if (!ts.IsTuple() || k < 0 || k >= ts.tuple_count()) return nullptr;
      const Shape& es = ts.tuple_shape(static_cast<int>(k));
      if (!ShapesCompatible(es, s)) return nullptr;
      Instruction* t = Norm(o);
      Instruction* e = t->opcode() == Opcode::kTuple
                           ? t->operand(static_cast<int>(k))
                           : editor_->AddLike(*x, PhysicalShape(es), {t});
      return Relayout(e, es, s);
    }
    case Opcode::kTuple: {
      if (!s.IsTuple() || s.tuple_count() != n) return nullptr;
      std::vector<Instruction*> elements;
      for (int i = 0; i < n; ++i) {
        Instruction* o = x->operand(i);
        elements.push_back(Relayout(Norm(o), Orig(o), s.tuple_shape(i)));
      }
      return like(std::move(elements));
    }
    case Opcode::kWhile: {
      if (n != 1 || x->called_computations().size() != 2) return nullptr;
      Computation* cond = x->called_computations()[0];
      Computation* body = x->called_computations()[1];
      if (cond == nullptr || body == nullptr || cond->root() == nullptr ||
          body->parameter_count() != 1 || body->parameter(0) == nullptr ||
          cond->parameter_count() != 1 || cond->parameter(0) == nullptr) {
        return nullptr;
      }
      for (const Computation* c : {cond, body}) {
        auto it = plans_.find(c);
        if (it != plans_.end() && !it->second.normalized) return nullptr;
      }
      const Shape carried = Orig(body->parameter(0));
      if (!ShapesCompatible(carried, s) || !ShapesCompatible(Orig(cond->parameter(0)), s)) {
        return nullptr;
      }
      plans_.emplace(body, Plan{true, carried});
      plans_.emplace(cond, Plan{true, Orig(cond->root())});
      Instruction* o = x->operand(0);
      Instruction* w =
          editor_->AddLike(*x, PhysicalShape(carried), {Relayout(Norm(o), Orig(o), carried)});
      return Relayout(w, carried, s);
    }
    case Opcode::kSlice: {
      const auto& slice = x->attrs_or_default().slice;
      if (static_cast<int>(slice.size()) != s.rank()) return nullptr;
      Instruction* r = like({InOrder(x->operand(0), order)});
      std::vector<SliceDimension> permuted;
      for (int64_t d : order) permuted.push_back(slice[d]);
      r->mutable_attrs()->slice = std::move(permuted);
      return r;
    }
    case Opcode::kPad: {
      const auto& padding = x->attrs_or_default().padding;
      if (n != 2 || !padding || static_cast<int>(padding->size()) != s.rank()) return nullptr;
      Instruction* r = like({InOrder(x->operand(0), order), Logical(x->operand(1))});
      PaddingConfig permuted;
      for (int64_t d : order) permuted.push_back((*padding)[d]);
      r->mutable_attrs()->padding = std::move(permuted);
      return r;
    }
    case Opcode::kReverse: {
      Instruction* r = like({InOrder(x->operand(0), order)});
      Perm dims;
      for (int64_t d : x->dimensions()) dims.push_back(inv[d]);
      std::sort(dims.begin(), dims.end());
      *r->mutable_dimensions() = dims;
      return r;
    }
    case Opcode::kConcatenate: {
      if (x->dimensions().size() != 1) return nullptr;
      std::vector<Instruction*> operands;
      for (Instruction* o : x->operands()) {
        if (Orig(o).rank() != s.rank()) return nullptr;
        operands.push_back(InOrder(o, order));
      }
      Instruction* r = like(std::move(operands));
      *r->mutable_dimensions() = {inv[x->dimensions()[0]]};
      return r;
    }
    default:
      break;
  }
  if (!IsElementwise(op) || !s.IsArray()) return nullptr;
  std::vector<Instruction*> operands;
  for (Instruction* o : x->operands()) {
    const Shape& os = Orig(o);
    if (os.rank() == s.rank()) {
      operands.push_back(InOrder(o, order));
    } else if (os.rank() == 0) {
      operands.push_back(Logical(o));
    } else {
      return nullptr;
    }
  }
  // A copy between layouts is the transpose that moved its operand into this order.
  if (op == Opcode::kCopy && operands[0] != Norm(x->operand(0))) return operands[0];
  return like(std::move(operands));
}

void Normalizer::ProcessComputation(Computation* comp, const Plan& plan) {
  ComputationEditor editor(comp, &names_);
  editor_ = &editor;
  norm_.clear();
  logical_.clear();
  rebuilt_.clear();
  trusted_parameters_ = comp == module_->entry();
  const std::vector<Instruction*> instrs = comp->instructions();
  for (Instruction* x : instrs) {
    bool operands_rebuilt = false;
    for (const Instruction* o : x->operands()) {
      if (rebuilt_.contains(o)) operands_rebuilt = true;
    }
    const bool is_parameter = x->opcode() == Opcode::kParameter;
    if (is_parameter && !plan.normalized) continue;
    if (IsDefaultLayout(Orig(x)) && !operands_rebuilt) continue;
    Instruction* r = nullptr;
    if (is_parameter) {
      // Part of the while loop's rewrite, which took the fuel: the loop passes physical shapes.
      r = Rewrite(x);
    } else if (Handled(x->opcode()) && !HasSideEffect(*x) &&
               context_.ConsumeFuel(pass_name_)) {
      r = Rewrite(x);
    }
    if (r != nullptr) {
      norm_[x] = r;
      rebuilt_.insert(x);
      changed_ = true;
      continue;
    }
    // Left alone: its operands come back in the layouts it had them in.
    for (int i = 0; i < x->operand_count(); ++i) {
      Instruction* o = x->operand(i);
      if (!rebuilt_.contains(o)) continue;
      editor.ReplaceOperand(x, i, Logical(o));
      changed_ = true;
    }
  }
  Instruction* root = comp->root();
  if (root != nullptr) {
    Instruction* new_root = root;
    if (plan.normalized && ShapesCompatible(plan.root_target, Orig(root))) {
      new_root = Relayout(Norm(root), Orig(root), plan.root_target);
    } else {
      new_root = Logical(root);
    }
    if (new_root != root) {
      editor.SetRoot(new_root);
      changed_ = true;
    }
  }
  editor.Finish(/*remove_dead=*/false);
  // Drop the rewritten originals nothing uses any more.
  std::vector<Instruction*> all = comp->instructions();
  absl::flat_hash_set<const Instruction*> removed;
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    Instruction* x = *it;
    if (!rebuilt_.contains(x) || x == comp->root() || norm_.at(x) == x || HasSideEffect(*x) ||
        !editor.control_successors(x).empty()) {
      continue;
    }
    bool used = false;
    for (const Instruction* u : editor.users(x)) {
      if (!removed.contains(u)) used = true;
    }
    if (!used) removed.insert(x);
  }
  if (!removed.empty()) {
    std::vector<Instruction*> kept;
    for (Instruction* x : all) {
      if (!removed.contains(x)) kept.push_back(x);
    }
    comp->SetInstructions(std::move(kept));
  }
  editor_ = nullptr;
}

bool Normalizer::Run() {
  Computation* entry = module_->entry();
  if (entry == nullptr) return false;
  for (const auto& comp : module_->computations()) {
    for (const Instruction* i : comp->instructions()) original_.emplace(i, i->shape());
  }
  auto callers = ComputeCallers(*module_);
  absl::flat_hash_set<const Computation*> skipped;
  const auto& comps = module_->computations();
  std::vector<Computation*> order;
  for (auto it = comps.rbegin(); it != comps.rend(); ++it) order.push_back(it->get());
  for (Computation* comp : order) {
    if (comp == entry) continue;
    auto c = callers.find(comp);
    if (c == callers.end() || c->second.empty()) continue;
    bool fused = false, all_skipped = true;
    for (const Instruction* caller : c->second) {
      if (caller->opcode() == Opcode::kFusion) fused = true;
      if (!skipped.contains(caller->parent())) all_skipped = false;
    }
    if (fused || all_skipped) skipped.insert(comp);
  }
  // Callers first: a while loop decides whether its body and condition are normalized.
  for (Computation* comp : order) {
    if (skipped.contains(comp)) continue;
    auto it = plans_.find(comp);
    Plan plan = it != plans_.end() ? it->second : Plan{};
    ProcessComputation(comp, plan);
  }
  return changed_;
}

}  // namespace

absl::StatusOr<bool> LayoutNormalization::Run(Module* module, PassContext& context) {
  if (module->entry() == nullptr) {
    return absl::InvalidArgumentError("layout_normalization: the module has no entry");
  }
  return Normalizer(module, context, name()).Run();
}

}  // namespace hlowb
