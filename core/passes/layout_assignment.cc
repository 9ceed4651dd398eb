#include "core/passes/layout_assignment.h"

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

std::vector<int64_t> Descending(int rank) {
  std::vector<int64_t> m2m;
  for (int i = rank - 1; i >= 0; --i) m2m.push_back(i);
  return m2m;
}

// The array's minor_to_major order; descending when it has none (or a malformed one).
std::vector<int64_t> MinorToMajor(const Shape& s) {
  if (s.has_layout() && static_cast<int>(s.layout().minor_to_major.size()) == s.rank()) {
    return s.layout().minor_to_major;
  }
  return Descending(s.rank());
}

// Major-to-minor order <-> minor_to_major list.
std::vector<int64_t> Reversed(std::vector<int64_t> v) {
  std::reverse(v.begin(), v.end());
  return v;
}

// `s` (an array) with the given minor_to_major order. Other layout fields (element size,
// memory space) are kept; tiles describe the old order and are dropped when it changes.
Shape WithMinorToMajor(const Shape& s, const std::vector<int64_t>& m2m) {
  Shape r = s;
  if (!r.IsArray() || (r.rank() == 0 && !r.has_layout())) return r;
  Layout* l = r.mutable_layout();
  if (l->minor_to_major != m2m) {
    l->minor_to_major = m2m;
    l->tiles.clear();
  }
  return r;
}

// Every array leaf of `s` in the descending layout.
Shape DefaultLayouts(const Shape& s) {
  if (s.IsArray()) return WithMinorToMajor(s, Descending(s.rank()));
  Shape r = s;
  if (r.IsTuple()) {
    for (Shape& e : *r.mutable_tuple_shapes()) e = DefaultLayouts(e);
  }
  return r;
}

// `s` with a descending layout on every array leaf that has none.
Shape FillMissingLayouts(const Shape& s) {
  if (s.IsArray()) return WithMinorToMajor(s, MinorToMajor(s));
  Shape r = s;
  if (r.IsTuple()) {
    for (Shape& e : *r.mutable_tuple_shapes()) e = FillMissingLayouts(e);
  }
  return r;
}

bool IsPermutation(const std::vector<int64_t>& p, size_t n) {
  if (p.size() != n) return false;
  std::vector<bool> seen(n, false);
  for (int64_t d : p) {
    if (d < 0 || d >= static_cast<int64_t>(n) || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// A minor_to_major order for the result of reshaping an array of `in_dims` laid out as
// `in_m2m` into `out_dims` such that the reshape is a bitcast (the physical element order is
// unchanged); nullopt when there is none. Dimensions are grouped into the smallest runs whose
// element counts agree; each input run must be physically contiguous and row-major, and the
// output runs then follow the input runs' physical order.
std::optional<std::vector<int64_t>> BitcastReshapeLayout(const std::vector<int64_t>& in_dims,
                                                         const std::vector<int64_t>& in_m2m,
                                                         const std::vector<int64_t>& out_dims) {
  const int out_rank = static_cast<int>(out_dims.size());
  for (int64_t d : in_dims) {
    if (d == 0) return Descending(out_rank);
  }
  for (int64_t d : out_dims) {
    if (d == 0) return Descending(out_rank);
  }
  std::vector<int64_t> a, b;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    if (in_dims[i] != 1) a.push_back(static_cast<int64_t>(i));
  }
  for (size_t i = 0; i < out_dims.size(); ++i) {
    if (out_dims[i] != 1) b.push_back(static_cast<int64_t>(i));
  }
  struct Group {
    std::vector<int64_t> in, out;
  };
  std::vector<Group> groups;
  absl::flat_hash_map<int64_t, int> group_of_in;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    Group g;
    int64_t pa = 1, pb = 1;
    do {
      bool take_in = (pa <= pb && i < a.size()) || j >= b.size();
      if (take_in) {
        if (i >= a.size()) return std::nullopt;
        pa *= in_dims[a[i]];
        g.in.push_back(a[i++]);
      } else {
        pb *= out_dims[b[j]];
        g.out.push_back(b[j++]);
      }
      if (pa > (int64_t{1} << 62) || pb > (int64_t{1} << 62)) return std::nullopt;
    } while (pa != pb);
    for (int64_t d : g.in) group_of_in[d] = static_cast<int>(groups.size());
    groups.push_back(std::move(g));
  }
  // Input physical order (major to minor) without the size-1 dimensions.
  std::vector<int64_t> phys;
  for (int64_t d : Reversed(in_m2m)) {
    if (in_dims[d] != 1) phys.push_back(d);
  }
  std::vector<int64_t> out_phys;
  size_t pos = 0;
  while (pos < phys.size()) {
    const Group& g = groups[group_of_in.at(phys[pos])];
    if (pos + g.in.size() > phys.size()) return std::nullopt;
    for (size_t k = 0; k < g.in.size(); ++k) {
      if (phys[pos + k] != g.in[k]) return std::nullopt;
    }
    pos += g.in.size();
    out_phys.insert(out_phys.end(), g.out.begin(), g.out.end());
  }
  // Size-1 output dimensions go just before the next larger logical dimension.
  for (int d = 0; d < out_rank; ++d) {
    if (out_dims[d] != 1) continue;
    int64_t next = -1;  // the smallest logical dimension after `d` placed so far
    for (int64_t e : out_phys) {
      if (e > d && (next < 0 || e < next)) next = e;
    }
    auto at = next < 0 ? out_phys.end() : std::find(out_phys.begin(), out_phys.end(), next);
    out_phys.insert(at, d);
  }
  if (static_cast<int>(out_phys.size()) != out_rank) return std::nullopt;
  return Reversed(out_phys);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Major-to-minor order: `first` dims, then `second`, then `third`, each in the order given.
std::vector<int64_t> Concat3(const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                             const std::vector<int64_t>& third) {
  std::vector<int64_t> r = first;
  r.insert(r.end(), second.begin(), second.end());
  r.insert(r.end(), third.begin(), third.end());
  return r;
}

// Dimensions of a rank-`rank` operand that are neither batch nor contracting, ascending.
std::vector<int64_t> FreeDims(int rank, const std::vector<int64_t>& batch,
                              const std::vector<int64_t>& contracting) {
  std::vector<int64_t> r;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) r.push_back(d);
  }
  return r;
}

bool IsSixteenBit(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16;
}

// A computation's layouts as its callers see them.
struct Signature {
  std::vector<Shape> params;
  Shape root;
};

class Assigner {
 public:
  Assigner(Module* module, bool gpu) : module_(module), gpu_(gpu), names_(*module) {}

  absl::StatusOr<bool> Run();

 private:
  absl::Status ProcessComputation(Computation* comp, const Signature& sig);
  absl::Status Decide(ComputationEditor& editor, Instruction* instr, const Signature& sig);
  // `value` in the layout `want` (same dimensions): itself, a recreated constant/iota/
  // broadcast, a copy, or (for tuples) a tuple of such.
  Instruction* Ensure(ComputationEditor& editor, Instruction* value, const Shape& want);
  Signature DeclaredSignature(const Computation& comp) const;
  const Shape& Original(const Instruction* instr) const {
    auto it = original_.find(instr);
    return it == original_.end() ? instr->shape() : it->second;
  }
  void SetShape(Instruction* instr, const Shape& shape) {
    if (instr->shape() == shape) return;
    instr->set_shape(module_->InternShape(shape));
    changed_ = true;
  }
  void DotLayouts(const Instruction& dot, std::vector<std::optional<Shape>>* want) const;
  void ConvolutionLayouts(const Instruction& conv, std::vector<std::optional<Shape>>* want,
                          Shape* out) const;

  Module* module_;
  bool gpu_;
  NameUniquer names_;
  bool changed_ = false;
  absl::flat_hash_map<const Instruction*, Shape> original_;
  absl::flat_hash_map<const Computation*, Signature> signatures_;
  absl::flat_hash_map<std::pair<const Instruction*, const Shape*>, Instruction*> memo_;
  // Constants/iotas/broadcasts recreated in another layout; dropped when nothing uses them.
  absl::flat_hash_set<Instruction*> recreated_;
};

Signature Assigner::DeclaredSignature(const Computation& comp) const {
  Signature sig;
  for (const Instruction* p : comp.parameters()) {
    sig.params.push_back(p ? FillMissingLayouts(Original(p)) : Shape());
  }
  if (comp.root()) sig.root = FillMissingLayouts(Original(comp.root()));
  return sig;
}

Instruction* Assigner::Ensure(ComputationEditor& editor, Instruction* value, const Shape& want) {
  if (value->shape() == want || !ShapesCompatible(value->shape(), want)) return value;
  const Shape* key_shape = module_->InternShape(want);
  auto key = std::make_pair(static_cast<const Instruction*>(value), key_shape);
  if (auto it = memo_.find(key); it != memo_.end()) return it->second;
  Instruction* result = nullptr;
  if (want.IsTuple()) {
    std::vector<Instruction*> elements;
    for (int i = 0; i < want.tuple_count(); ++i) {
      Instruction* e;
      if (value->opcode() == Opcode::kTuple && i < value->operand_count()) {
        e = value->operand(i);
      } else {
        e = editor.Add(Opcode::kGetTupleElement, value->shape().tuple_shape(i), {value},
                       "get-tuple-element");
        e->set_index(i);
      }
      elements.push_back(Ensure(editor, e, want.tuple_shape(i)));
    }
    result = editor.Add(Opcode::kTuple, want, std::move(elements), "tuple");
  } else if (value->opcode() == Opcode::kConstant || value->opcode() == Opcode::kIota ||
             value->opcode() == Opcode::kBroadcast) {
    result = editor.AddLike(*value, want, value->operands());
    recreated_.insert(value);
  } else {
    result = editor.Add(Opcode::kCopy, want, {value}, "copy");
  }
  changed_ = true;
  memo_[key] = result;
  return result;
}

void Assigner::DotLayouts(const Instruction& dot, std::vector<std::optional<Shape>>* want) const {
  const InstructionAttrs& a = dot.attrs_or_default();
  if (!a.dot_dimension_numbers || dot.operand_count() < 2) return;
  const DotDimensionNumbers& dn = *a.dot_dimension_numbers;
  for (int side = 0; side < 2; ++side) {
    const Shape& s = dot.operand(side)->shape();
    if (!s.IsArray()) continue;
    const std::vector<int64_t>& batch = side == 0 ? dn.lhs_batch_dimensions
                                                  : dn.rhs_batch_dimensions;
    const std::vector<int64_t>& contracting = side == 0 ? dn.lhs_contracting_dimensions
                                                        : dn.rhs_contracting_dimensions;
    std::vector<int64_t> free = FreeDims(s.rank(), batch, contracting);
    // Row-major GEMM operands: lhs [batch, m, k], rhs [batch, k, n].
    std::vector<int64_t> row_major = side == 0 ? Concat3(batch, free, contracting)
                                               : Concat3(batch, contracting, free);
    if (!IsPermutation(row_major, s.rank())) continue;
    std::vector<int64_t> chosen = Reversed(row_major);
    {
      // GEMM libraries (cuBLAS; Eigen and OpenBLAS on the CPU, as XLA's CPU dot emitter uses
      // them) take either operand transposed: keep a layout with the batch dimensions most
      // major and the other two groups in either order.
      std::vector<int64_t> transposed = side == 0 ? Concat3(batch, contracting, free)
                                                  : Concat3(batch, free, contracting);
      if (MinorToMajor(s) == Reversed(transposed)) chosen = Reversed(transposed);
    }
    (*want)[side] = WithMinorToMajor(s, chosen);
  }
}

void Assigner::ConvolutionLayouts(const Instruction& conv,
                                  std::vector<std::optional<Shape>>* want, Shape* out) const {
  const InstructionAttrs& a = conv.attrs_or_default();
  if (!a.convolution_dimension_numbers || conv.operand_count() < 2 || !out->IsArray()) return;
  const ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
  const Shape& input = conv.operand(0)->shape();
  const Shape& kernel = conv.operand(1)->shape();
  if (!input.IsArray() || !kernel.IsArray()) return;
  // NHWC / HWIO / NHWC (the CPU's Eigen convolutions, the GPU's 16-bit ones), otherwise
  // NCHW / OIHW / NCHW (cuDNN).
  const bool channels_last = !gpu_ || IsSixteenBit(input.element_type());
  std::vector<int64_t> in_order, kernel_order, out_order;
  if (channels_last) {
    in_order = Concat3({dn.input_batch_dimension}, dn.input_spatial_dimensions,
                       {dn.input_feature_dimension});
    kernel_order = Concat3(dn.kernel_spatial_dimensions, {dn.kernel_input_feature_dimension},
                           {dn.kernel_output_feature_dimension});
    out_order = Concat3({dn.output_batch_dimension}, dn.output_spatial_dimensions,
                        {dn.output_feature_dimension});
  } else {
    in_order = Concat3({dn.input_batch_dimension}, {dn.input_feature_dimension},
                       dn.input_spatial_dimensions);
    kernel_order = Concat3({dn.kernel_output_feature_dimension},
                           {dn.kernel_input_feature_dimension}, dn.kernel_spatial_dimensions);
    out_order = Concat3({dn.output_batch_dimension}, {dn.output_feature_dimension},
                        dn.output_spatial_dimensions);
  }
  if (!IsPermutation(in_order, input.rank()) || !IsPermutation(kernel_order, kernel.rank()) ||
      !IsPermutation(out_order, out->rank())) {
    return;
  }
  (*want)[0] = WithMinorToMajor(input, Reversed(in_order));
  (*want)[1] = WithMinorToMajor(kernel, Reversed(kernel_order));
  *out = WithMinorToMajor(*out, Reversed(out_order));
}

absl::Status Assigner::Decide(ComputationEditor& editor, Instruction* instr,
                              const Signature& sig) {
  const Opcode op = instr->opcode();
  const int n = instr->operand_count();
  std::vector<std::optional<Shape>> want(n);
  Shape out = instr->shape();
  auto follow = [&](const std::vector<int64_t>& m2m, int rank) {
    for (int i = 0; i < n; ++i) {
      const Shape& s = instr->operand(i)->shape();
      if (s.IsArray() && s.rank() == rank && rank > 0) want[i] = WithMinorToMajor(s, m2m);
    }
    auto relayout = [&](const Shape& s) {
      return s.IsArray() && s.rank() == rank ? WithMinorToMajor(s, m2m) : DefaultLayouts(s);
    };
    if (out.IsTuple()) {
      for (Shape& e : *out.mutable_tuple_shapes()) e = relayout(e);
    } else {
      out = relayout(out);
    }
  };
  auto pin = [&]() {
    for (int i = 0; i < n; ++i) want[i] = Original(instr->operand(i));
    out = Original(instr);
  };
  for (int i = 0; i < n; ++i) {
    if (instr->operand(i) == nullptr) {
      return absl::InvalidArgumentError(
          StrCat("layout-assignment: ", instr->name(), " has a missing operand"));
    }
  }
  const bool first_array = n > 0 && instr->operand(0)->shape().IsArray();

  switch (op) {
    case Opcode::kParameter: {
      int64_t k = instr->parameter_number();
      if (k >= 0 && k < static_cast<int64_t>(sig.params.size()) &&
          ShapesCompatible(sig.params[k], instr->shape())) {
        out = sig.params[k];
      } else {
        out = FillMissingLayouts(instr->shape());
      }
      break;
    }
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kBroadcast:
    case Opcode::kRng:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      out = DefaultLayouts(out);
      break;
    case Opcode::kTranspose: {
      if (!first_array || !out.IsArray()) break;
      const Shape& in = instr->operand(0)->shape();
      const std::vector<int64_t>& perm = instr->dimensions();
      if (!IsPermutation(perm, in.rank()) || out.rank() != in.rank()) break;
      std::vector<int64_t> inverse(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) inverse[perm[k]] = static_cast<int64_t>(k);
      std::vector<int64_t> m2m;
      for (int64_t d : MinorToMajor(in)) m2m.push_back(inverse[d]);
      out = WithMinorToMajor(out, m2m);
      break;
    }
    case Opcode::kReshape: {
      if (!first_array || !out.IsArray()) break;
      const Shape& in = instr->operand(0)->shape();
      std::optional<std::vector<int64_t>> m2m =
          BitcastReshapeLayout(in.dimensions(), MinorToMajor(in), out.dimensions());
      out = WithMinorToMajor(out, m2m ? *m2m : Descending(out.rank()));
      break;
    }
    case Opcode::kDot:
      DotLayouts(*instr, &want);
      out = DefaultLayouts(out);
      break;
    case Opcode::kConvolution:
      out = DefaultLayouts(out);
      ConvolutionLayouts(*instr, &want, &out);
      break;
    case Opcode::kReduce: {
      if (!first_array) break;
      const int inputs = n / 2;
      const Shape& in = instr->operand(0)->shape();
      std::vector<int64_t> in_m2m = MinorToMajor(in);
      std::vector<int64_t> out_m2m;
      for (int64_t d : in_m2m) {
        if (Contains(instr->dimensions(), d)) continue;
        int64_t below = 0;
        for (int64_t r : instr->dimensions()) below += r < d ? 1 : 0;
        out_m2m.push_back(d - below);
      }
      for (int i = 1; i < inputs; ++i) {
        const Shape& s = instr->operand(i)->shape();
        if (s.IsArray() && s.rank() == in.rank()) want[i] = WithMinorToMajor(s, in_m2m);
      }
      auto relayout = [&](const Shape& s) {
        return s.IsArray() && s.rank() == static_cast<int>(out_m2m.size())
                   ? WithMinorToMajor(s, out_m2m)
                   : DefaultLayouts(s);
      };
      if (out.IsTuple()) {
        for (Shape& e : *out.mutable_tuple_shapes()) e = relayout(e);
      } else {
        out = relayout(out);
      }
      break;
    }
    case Opcode::kGetTupleElement: {
      const Shape& t = instr->operand(0)->shape();
      int64_t k = instr->tuple_index();
      if (t.IsTuple() && k >= 0 && k < t.tuple_count()) out = t.tuple_shape(static_cast<int>(k));
      break;
    }
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* o : instr->operands()) elements.push_back(o->shape());
      out = Shape::Tuple(std::move(elements));
      break;
    }
    case Opcode::kWhile: {
      if (n != 1 || instr->called_computations().size() != 2) {
        pin();
        break;
      }
      Computation* cond = instr->called_computations()[0];
      Computation* body = instr->called_computations()[1];
      Shape carried = FillMissingLayouts(instr->operand(0)->shape());
      if (auto it = signatures_.find(body); it != signatures_.end()) {
        if (!it->second.params.empty()) carried = it->second.params[0];
      } else {
        signatures_[body] = Signature{{carried}, carried};
      }
      if (!signatures_.contains(cond) && cond && cond->root()) {
        signatures_[cond] = Signature{{carried}, DefaultLayouts(Original(cond->root()))};
      }
      want[0] = carried;
      out = carried;
      break;
    }
    case Opcode::kCall:
    case Opcode::kConditional: {
      const bool call = op == Opcode::kCall;
      const auto& called = instr->called_computations();
      out = DefaultLayouts(out);
      bool first = true;
      for (size_t b = 0; b < called.size(); ++b) {
        Computation* c = called[b];
        if (c == nullptr) continue;
        // call: every operand is a parameter; conditional: operand b+1 is branch b's only one.
        std::vector<int> operand_of;
        if (call) {
          for (int i = 0; i < n; ++i) operand_of.push_back(i);
        } else if (static_cast<int>(b) + 1 < n) {
          operand_of.push_back(static_cast<int>(b) + 1);
        }
        auto it = signatures_.find(c);
        if (it == signatures_.end()) {
          Signature s;
          for (int i : operand_of) {
            s.params.push_back(FillMissingLayouts(instr->operand(i)->shape()));
          }
          s.root = out;
          it = signatures_.emplace(c, std::move(s)).first;
        }
        for (size_t k = 0; k < operand_of.size() && k < it->second.params.size(); ++k) {
          want[operand_of[k]] = it->second.params[k];
        }
        if (first) out = it->second.root;
        first = false;
      }
      break;
    }
    case Opcode::kGather:
    case Opcode::kScatter:
      out = DefaultLayouts(out);
      break;
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kSort:
    case Opcode::kMap:
    case Opcode::kReduceWindow:
    case Opcode::kSelectAndScatter:
      if (!first_array) {
        pin();
        break;
      }
      follow(MinorToMajor(instr->operand(0)->shape()), instr->operand(0)->shape().rank());
      break;
    default: {
      if (IsElementwise(op) && out.IsArray() && n > 0) {
        // The layout of the first operand computed by something other than a constant,
        // iota or broadcast (those are recreated in whatever layout is wanted).
        const Instruction* source = nullptr;
        for (const Instruction* o : instr->operands()) {
          if (!o->shape().IsArray() || o->shape().rank() != out.rank()) continue;
          if (source == nullptr) source = o;
          Opcode oo = o->opcode();
          if (oo != Opcode::kConstant && oo != Opcode::kIota && oo != Opcode::kBroadcast) {
            source = o;
            break;
          }
        }
        if (source == nullptr) {
          out = DefaultLayouts(out);
        } else {
          follow(MinorToMajor(source->shape()), out.rank());
        }
        break;
      }
      // Ops whose layouts are part of their meaning, or that this pass does not model:
      // their operands get back the layouts they had and their results keep theirs.
      pin();
      const InstructionAttrs* a = instr->attrs();
      if (op == Opcode::kCustomCall && a != nullptr && a->operand_layout_constraints &&
          static_cast<int>(a->operand_layout_constraints->size()) == n) {
        for (int i = 0; i < n; ++i) {
          const Shape& c = (*a->operand_layout_constraints)[i];
          if (ShapesCompatible(c, instr->operand(i)->shape())) want[i] = FillMissingLayouts(c);
        }
      }
      break;
    }
  }

  for (int i = 0; i < n; ++i) {
    if (!want[i]) continue;
    Instruction* o = instr->operand(i);
    Instruction* replacement = Ensure(editor, o, *want[i]);
    if (replacement != o) editor.ReplaceOperand(instr, i, replacement);
  }
  if (ShapesCompatible(out, instr->shape())) SetShape(instr, out);
  return absl::OkStatus();
}

absl::Status Assigner::ProcessComputation(Computation* comp, const Signature& sig) {
  ComputationEditor editor(comp, &names_);
  memo_.clear();
  recreated_.clear();
  const std::vector<Instruction*> instrs = comp->instructions();
  for (Instruction* instr : instrs) {
    absl::Status s = Decide(editor, instr, sig);
    if (!s.ok()) return s;
  }
  if (comp->root() != nullptr && ShapesCompatible(comp->root()->shape(), sig.root)) {
    Instruction* root = Ensure(editor, comp->root(), sig.root);
    if (root != comp->root()) editor.SetRoot(root);
  }
  editor.Finish(/*remove_dead=*/false);
  // Drop the originals of constants/iotas/broadcasts that were recreated and are now unused.
  if (!recreated_.empty()) {
    std::vector<Instruction*> kept;
    for (Instruction* i : comp->instructions()) {
      if (recreated_.contains(i) && editor.user_count(i) == 0 && i != comp->root() &&
          editor.control_successors(i).empty() && i->control_predecessors().empty()) {
        continue;
      }
      kept.push_back(i);
    }
    comp->SetInstructions(std::move(kept));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> Assigner::Run() {
  Computation* entry = module_->entry();
  if (entry == nullptr) return absl::InvalidArgumentError("layout-assignment: no entry");
  for (const auto& comp : module_->computations()) {
    for (const Instruction* i : comp->instructions()) original_.emplace(i, i->shape());
  }
  // The entry signature.
  Signature entry_sig = DeclaredSignature(*entry);
  const std::optional<ProgramShape>& ecl = module_->config().entry_computation_layout;
  if (ecl) {
    for (size_t k = 0; k < ecl->parameters.size() && k < entry_sig.params.size(); ++k) {
      if (ShapesCompatible(ecl->parameters[k], entry_sig.params[k])) {
        entry_sig.params[k] = FillMissingLayouts(ecl->parameters[k]);
      }
    }
    if (ShapesCompatible(ecl->result, entry_sig.root)) {
      entry_sig.root = FillMissingLayouts(ecl->result);
    }
  } else {
    module_->config().entry_computation_layout = ProgramShape{entry_sig.params, entry_sig.root};
    changed_ = true;
  }
  signatures_[entry] = entry_sig;

  // Computations inside fusions (and whatever only they call) are left alone.
  auto callers = ComputeCallers(*module_);
  absl::flat_hash_set<const Computation*> skipped;
  const auto& comps = module_->computations();
  for (auto it = comps.rbegin(); it != comps.rend(); ++it) {
    Computation* comp = it->get();
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
  // Callers before callees, so that a caller fixes its callees' signatures.
  std::vector<Computation*> order;
  for (auto it = comps.rbegin(); it != comps.rend(); ++it) order.push_back(it->get());
  for (Computation* comp : order) {
    if (skipped.contains(comp)) continue;
    auto it = signatures_.find(comp);
    Signature sig = it != signatures_.end() ? it->second : DeclaredSignature(*comp);
    absl::Status s = ProcessComputation(comp, sig);
    if (!s.ok()) return s;
  }
  return changed_;
}

}  // namespace

absl::StatusOr<bool> LayoutAssignment::Run(Module* module, PassContext& context) {
  if (target_ != "cpu" && target_ != "gpu") {
    return absl::InvalidArgumentError(
        StrCat("layout-assignment: unknown target \"", target_, "\" (want cpu or gpu)"));
  }
  const bool gpu = target_ == "gpu";
  // The assignment is one decision for the whole module (callers and callees must agree), so
  // it is tried on a copy first and costs one unit of fuel only when it changes something.
  std::unique_ptr<Module> trial = CloneModule(*module);
  absl::StatusOr<bool> trial_changed = Assigner(trial.get(), gpu).Run();
  if (!trial_changed.ok()) return trial_changed.status();
  if (!*trial_changed) return false;
  if (!context.ConsumeFuel(name())) return false;
  return Assigner(module, gpu).Run();
}

}  // namespace hlowb
