#include "replay/data/fake_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "core/ir/float_types.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {

int64_t FakeDataEngine::UniformInt(int64_t lo, int64_t hi) {
  uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  uint64_t r = Next();
  if (span == std::numeric_limits<uint64_t>::max()) return static_cast<int64_t>(r);
  // Multiply-shift mapping of 64 random bits onto [0, span]; the bias is below 2^-40 for the
  // spans used here and the result is the same on every platform.
  unsigned __int128 m = static_cast<unsigned __int128>(r) * (span + 1);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + static_cast<uint64_t>(m >> 64));
}

double FakeDataEngine::UniformReal() {
  return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0);
}

namespace {

// ---------------------------------------------------------------------------------------------
// Use analysis.

struct Use {
  const Instruction* user;
  int operand;
};

class UseGraph {
 public:
  explicit UseGraph(const Module& module) {
    for (const auto& comp : module.computations()) {
      for (const Instruction* instr : comp->instructions()) {
        for (int k = 0; k < instr->operand_count(); ++k) {
          users_[instr->operand(k)].push_back({instr, k});
        }
        for (const Computation* callee : instr->called_computations()) {
          callers_[callee].push_back(instr);
        }
      }
    }
  }
  const std::vector<Use>& Users(const Instruction* i) const {
    auto it = users_.find(i);
    return it == users_.end() ? empty_ : it->second;
  }
  const std::vector<const Instruction*>& Callers(const Computation* c) const {
    auto it = callers_.find(c);
    return it == callers_.end() ? empty_callers_ : it->second;
  }

 private:
  std::unordered_map<const Instruction*, std::vector<Use>> users_;
  std::unordered_map<const Computation*, std::vector<const Instruction*>> callers_;
  std::vector<Use> empty_;
  std::vector<const Instruction*> empty_callers_;
};

// XLA's GetInitValue: a reducer `p0 op p1` with op add gives 0, multiply 1.
FakeValueConstraint::Constant InitValueFor(const Computation* reducer) {
  if (reducer == nullptr) return FakeValueConstraint::Constant::kRandom;
  const Instruction* root = reducer->root();
  if (reducer->parameter_count() != 2 || root == nullptr || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return FakeValueConstraint::Constant::kRandom;
  }
  if (root->opcode() == Opcode::kAdd) return FakeValueConstraint::Constant::kZero;
  if (root->opcode() == Opcode::kMultiply) return FakeValueConstraint::Constant::kOne;
  return FakeValueConstraint::Constant::kRandom;
}

bool IsDataFormatting(Opcode op) {
  return op == Opcode::kReshape || op == Opcode::kTranspose || op == Opcode::kCopy ||
         op == Opcode::kSlice || op == Opcode::kBitcast;
}

struct ConstraintBuilder {
  int64_t index_bound = std::numeric_limits<int64_t>::max();
  bool needs_constant = false;
  FakeValueConstraint::Constant constant = FakeValueConstraint::Constant::kRandom;
  bool no_duplicates = false;
  bool sorted = false;
  std::optional<DotSparsity> sparsity_metadata;
  std::vector<std::string> reasons;

  // How many kinds of constraint were imposed (more than one cannot be met together).
  int Kinds() const {
    return (no_duplicates ? 1 : 0) +
           (index_bound != std::numeric_limits<int64_t>::max() ? 1 : 0) +
           (needs_constant ? 1 : 0) + (sparsity_metadata ? 1 : 0);
  }
  void Bound(int64_t b) { index_bound = std::min(index_bound, std::max<int64_t>(b, 0)); }
};

int64_t Dim(const Shape& s, int64_t d) {
  return d >= 0 && d < s.rank() ? s.dimension(static_cast<int>(d)) : 0;
}

// Records the constraint `use` imposes, if any. Returns true when the use was an index/init/
// sort-key use (so it is not followed further).
bool ApplyUse(const Use& use, bool formatting_only, ConstraintBuilder* b) {
  const Instruction& u = *use.user;
  const int k = use.operand;
  const int n = u.operand_count();
  auto reason = [&](const char* what) {
    b->reasons.push_back(StrCat(u.name(), " (", what, ", operand ", k, ")"));
  };
  switch (u.opcode()) {
    case Opcode::kGather: {
      if (k != 1) return false;
      const InstructionAttrs& a = u.attrs_or_default();
      const Shape& operand = u.operand(0)->shape();
      if (a.gather_dimension_numbers) {
        for (int64_t d : a.gather_dimension_numbers->start_index_map) {
          int64_t size = d < static_cast<int64_t>(a.slice_sizes.size()) ? a.slice_sizes[d] : 1;
          b->Bound(Dim(operand, d) - size);
        }
      }
      b->sorted |= a.indices_are_sorted;
      reason("gather indices");
      return true;
    }
    case Opcode::kScatter: {
      const int inputs = (n - 1) / 2;
      if (k != inputs) return false;
      const InstructionAttrs& a = u.attrs_or_default();
      const Shape& operand = u.operand(0)->shape();
      const Shape& updates = u.operand(inputs + 1)->shape();
      if (a.scatter_dimension_numbers) {
        const ScatterDimensionNumbers& dn = *a.scatter_dimension_numbers;
        // Window extent of every operand dimension: inserted and batching dimensions are 1,
        // the others take the update window dimensions in order.
        std::vector<int64_t> extent(operand.rank(), 1);
        size_t w = 0;
        for (int d = 0; d < operand.rank(); ++d) {
          bool inserted = std::count(dn.inserted_window_dims.begin(), dn.inserted_window_dims.end(), d) ||
                          std::count(dn.input_batching_dims.begin(), dn.input_batching_dims.end(), d);
          if (!inserted && w < dn.update_window_dims.size()) {
            extent[d] = Dim(updates, dn.update_window_dims[w++]);
          }
        }
        for (int64_t d : dn.scatter_dims_to_operand_dims) {
          b->Bound(Dim(operand, d) - (d >= 0 && d < operand.rank() ? extent[d] : 1));
        }
      }
      b->sorted |= u.attrs_or_default().indices_are_sorted;
      reason("scatter indices");
      return true;
    }
    case Opcode::kDot: {
      // Metadata of a sparse dot: its words must hold valid positions. Reshapes and
      // transposes move whole words, so the constraint holds through them too.
      const std::string& text = u.attrs_or_default().sparsity;
      if (k < 2 || text.empty()) return false;
      auto descriptors = ParseDotSparsity(text);
      if (!descriptors.ok() || k - 2 >= static_cast<int>(descriptors->size())) return false;
      b->sparsity_metadata = (*descriptors)[k - 2];
      reason("sparse dot metadata");
      return true;
    }
    default:
      break;
  }
  if (formatting_only) return false;
  switch (u.opcode()) {
    case Opcode::kDynamicSlice: {
      if (k < 1) return false;
      const Shape& operand = u.operand(0)->shape();
      if (n == 2 && u.operand(1)->shape().rank() == 1) {  // old form: one index vector
        for (int d = 0; d < operand.rank(); ++d) b->Bound(operand.dimension(d) - Dim(u.shape(), d));
      } else {
        b->Bound(Dim(operand, k - 1) - Dim(u.shape(), k - 1));
      }
      reason("dynamic-slice start index");
      return true;
    }
    case Opcode::kDynamicUpdateSlice: {
      if (k < 2) return false;
      const Shape& operand = u.operand(0)->shape();
      const Shape& update = u.operand(1)->shape();
      if (n == 3 && u.operand(2)->shape().rank() == 1) {
        for (int d = 0; d < operand.rank(); ++d) b->Bound(operand.dimension(d) - Dim(update, d));
      } else {
        b->Bound(Dim(operand, k - 2) - Dim(update, k - 2));
      }
      reason("dynamic-update-slice start index");
      return true;
    }
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (k < n / 2) return false;
      b->needs_constant = true;
      b->constant = InitValueFor(u.called_computations().empty() ? nullptr
                                                                 : u.called_computations()[0]);
      reason("init value");
      return true;
    case Opcode::kSelectAndScatter:
      if (k != 2) return false;
      b->needs_constant = true;
      b->constant = InitValueFor(u.called_computations().size() > 1 ? u.called_computations()[1]
                                                                    : nullptr);
      reason("init value");
      return true;
    case Opcode::kSort:
      if (k != 0 || (n < 2 && !u.attrs_or_default().is_stable)) return false;
      if (IsIntegral(u.operand(0)->shape().element_type())) b->no_duplicates = true;
      reason("sort keys");
      return true;
    default:
      return false;
  }
}

struct Tracked {
  const Instruction* instr;
  ShapeIndex index;
  bool formatting_only;
  bool operator<(const Tracked& o) const {
    return std::tie(instr, index, formatting_only) < std::tie(o.instr, o.index, o.formatting_only);
  }
};

void Collect(const UseGraph& graph, const Instruction* def, const ShapeIndex& start,
             ConstraintBuilder* b) {
  std::set<Tracked> seen;
  std::vector<Tracked> work{{def, start, false}};
  auto push = [&](const Instruction* i, ShapeIndex idx, bool f) {
    Tracked t{i, std::move(idx), f};
    if (seen.insert(t).second) work.push_back(t);
  };
  auto param_of = [](const Computation* c, int i) -> const Instruction* {
    return c != nullptr && i >= 0 && i < c->parameter_count() ? c->parameter(i) : nullptr;
  };
  while (!work.empty()) {
    Tracked t = work.back();
    work.pop_back();
    for (const Use& use : graph.Users(t.instr)) {
      const Instruction& u = *use.user;
      const auto& called = u.called_computations();
      // Values passed into called computations (any part of a tuple).
      auto into = [&](const Computation* c, int param) {
        if (const Instruction* p = param_of(c, param)) push(p, t.index, t.formatting_only);
      };
      switch (u.opcode()) {
        case Opcode::kFusion:
        case Opcode::kCall:
        case Opcode::kAsyncStart:
          if (!called.empty()) into(called[0], use.operand);
          continue;
        case Opcode::kWhile:
          for (const Computation* c : called) into(c, 0);
          push(&u, t.index, t.formatting_only);
          continue;
        case Opcode::kConditional:
          if (use.operand >= 1 && use.operand - 1 < static_cast<int>(called.size())) {
            into(called[use.operand - 1], 0);
          }
          continue;
        case Opcode::kTuple: {
          ShapeIndex idx{use.operand};
          idx.insert(idx.end(), t.index.begin(), t.index.end());
          push(&u, idx, t.formatting_only);
          continue;
        }
        case Opcode::kGetTupleElement:
          if (!t.index.empty() && t.index[0] == u.tuple_index()) {
            push(&u, ShapeIndex(t.index.begin() + 1, t.index.end()), t.formatting_only);
          }
          continue;
        case Opcode::kOptimizationBarrier:
        case Opcode::kDomain:
        case Opcode::kAddDependency:
          if (use.operand == 0) push(&u, t.index, t.formatting_only);
          continue;
        default:
          break;
      }
      if (!t.index.empty()) continue;  // a tuple part used whole by something else
      if (ApplyUse(use, t.formatting_only, b)) continue;
      if (!t.formatting_only &&
          (u.opcode() == Opcode::kConvert || u.opcode() == Opcode::kReducePrecision)) {
        push(&u, {}, false);
      } else if (IsDataFormatting(u.opcode())) {
        push(&u, {}, true);
      }
    }
    // A value reaching a called computation's root flows out of its callers.
    const Computation* comp = t.instr->parent();
    if (comp != nullptr && comp->root() == t.instr) {
      for (const Instruction* caller : graph.Callers(comp)) {
        switch (caller->opcode()) {
          case Opcode::kFusion:
          case Opcode::kCall:
          case Opcode::kConditional:
            push(caller, t.index, t.formatting_only);
            break;
          case Opcode::kWhile:
            if (caller->called_computations().size() > 1 &&
                caller->called_computations()[1] == comp) {
              push(caller, t.index, t.formatting_only);
              for (const Computation* c : caller->called_computations()) {
                if (const Instruction* p = param_of(c, 0)) push(p, t.index, t.formatting_only);
              }
            }
            break;
          default:
            break;
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Value generation.

void SetDouble(Literal* l, int64_t component, PrimitiveType type, double v) {
  if (type == PrimitiveType::kF32) {
    l->mutable_data_as<float>()[component] = static_cast<float>(v);
  } else if (type == PrimitiveType::kF64) {
    l->mutable_data_as<double>()[component] = v;
  } else {
    l->SetBits(component, DoubleToFloatBits(type, v));
  }
}

double RandomFloat(FakeDataEngine* e, PrimitiveType type, bool large) {
  if (!large) {
    double v = -0.1 + 0.3 * e->UniformReal();
    return type == PrimitiveType::kF8E8M0FNU ? std::fabs(v) : v;
  }
  static constexpr double kSpecial[] = {0.0, -0.0, 1.0, -1.0,
                                        std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity()};
  if (e->UniformReal() < 1e-6) {
    double v = kSpecial[e->UniformInt(0, 5)];
    if (std::isinf(v) && !FloatTypeHasInfinity(type)) v = std::copysign(FloatTypeMaxFinite(type), v);
    return v;
  }
  // Log-uniform magnitude between the smallest normal and the largest finite value.
  double max_exp = std::log2(FloatTypeMaxFinite(type));
  double min_exp;
  switch (type) {
    case PrimitiveType::kF64: min_exp = -1022; break;
    case PrimitiveType::kF32: min_exp = -126; break;
    case PrimitiveType::kBF16: min_exp = -126; break;
    case PrimitiveType::kF16: min_exp = -14; break;
    case PrimitiveType::kF8E8M0FNU: min_exp = -127; break;
    default: min_exp = -max_exp / 2 - 1; break;  // narrow f8/f4 formats: roughly symmetric
  }
  double exp = min_exp + (max_exp - min_exp) * e->UniformReal();
  double v = std::exp2(exp);
  v = std::min(v, FloatTypeMaxFinite(type));
  bool negative = type != PrimitiveType::kF8E8M0FNU && (e->Next() & 1);
  return negative ? -v : v;
}

void FillArray(Literal* l, FakeDataEngine* e, const FakeValueConstraint& c, bool large) {
  const PrimitiveType type = l->shape().element_type();
  const int64_t n = l->element_count();
  if (c.constant == FakeValueConstraint::Constant::kZero ||
      c.constant == FakeValueConstraint::Constant::kOne) {
    bool one = c.constant == FakeValueConstraint::Constant::kOne;
    for (int64_t i = 0; i < n; ++i) {
      if (type == PrimitiveType::kPred || IsIntegral(type)) {
        l->SetBits(i, one ? 1 : 0);
      } else if (IsComplex(type)) {
        PrimitiveType ct = ComplexComponentType(type);
        SetDouble(l, 2 * i, ct, one ? 1.0 : 0.0);
        SetDouble(l, 2 * i + 1, ct, 0.0);
      } else {
        // f8e8m0fnu has no zero; its smallest value stands in.
        SetDouble(l, i, type, one ? 1.0 : (type == PrimitiveType::kF8E8M0FNU ? 0x1p-127 : 0.0));
      }
    }
    return;
  }
  if (c.sparsity_metadata && type == PrimitiveType::kU16) {
    // Each group: N distinct positions of M, in order.
    const DotSparsity& sp = *c.sparsity_metadata;
    const int64_t bits = sp.BitsPerIndex();
    std::vector<int64_t> positions(static_cast<size_t>(sp.m));
    for (int64_t i = 0; i < n; ++i) {
      uint64_t word = 0;
      for (int64_t g = 0; g < sp.GroupsPerWord(); ++g) {
        for (int64_t p = 0; p < sp.m; ++p) positions[p] = p;
        for (int64_t p = sp.m - 1; p > 0; --p) {
          std::swap(positions[p], positions[e->UniformInt(0, p)]);
        }
        std::sort(positions.begin(), positions.begin() + sp.n);
        for (int64_t t = 0; t < sp.n; ++t) {
          word |= static_cast<uint64_t>(positions[t]) << ((g * sp.n + t) * bits);
        }
      }
      l->SetBits(i, word);
    }
    return;
  }
  if (type == PrimitiveType::kPred) {
    for (int64_t i = 0; i < n; ++i) l->SetBits(i, e->Next() >> 63);
    return;
  }
  if (IsIntegral(type)) {
    const int bits = BitWidth(type);
    int64_t lo, hi;
    if (IsSignedIntegral(type)) {
      lo = bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
      hi = bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
    } else {
      lo = 0;
      hi = bits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << bits) - 1;
    }
    const bool full_u64 = type == PrimitiveType::kU64 && !c.limit;
    if (c.limit) {
      lo = std::max(lo, c.limit->first);
      hi = std::min(hi, c.limit->second);
      if (hi < lo) hi = lo;
    }
    if (c.no_duplicates && n < hi) {
      std::vector<int64_t> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = i;
      for (int64_t i = n - 1; i > 0; --i) std::swap(v[i], v[e->UniformInt(0, i)]);  // Fisher-Yates
      for (int64_t i = 0; i < n; ++i) l->SetBits(i, static_cast<uint64_t>(v[i]));
    } else if (full_u64) {
      for (int64_t i = 0; i < n; ++i) l->SetBits(i, e->Next());
    } else {
      for (int64_t i = 0; i < n; ++i) l->SetBits(i, static_cast<uint64_t>(e->UniformInt(lo, hi)));
    }
    if (c.sorted) {
      std::vector<int64_t> v(n);
      for (int64_t i = 0; i < n; ++i) v[i] = l->GetInt(i);
      if (IsUnsignedIntegral(type)) {
        std::sort(v.begin(), v.end(),
                  [](int64_t a, int64_t b) { return static_cast<uint64_t>(a) < static_cast<uint64_t>(b); });
      } else {
        std::sort(v.begin(), v.end());
      }
      for (int64_t i = 0; i < n; ++i) l->SetBits(i, static_cast<uint64_t>(v[i]));
    }
    return;
  }
  if (IsComplex(type)) {
    PrimitiveType ct = ComplexComponentType(type);
    for (int64_t i = 0; i < 2 * n; ++i) SetDouble(l, i, ct, RandomFloat(e, ct, large));
    return;
  }
  if (c.limit) {  // float indices (rare): integral values in range
    for (int64_t i = 0; i < n; ++i) {
      SetDouble(l, i, type, static_cast<double>(e->UniformInt(c.limit->first, c.limit->second)));
    }
  } else if (type == PrimitiveType::kF32 && !large) {  // the common case, typed
    float* f = l->mutable_data_as<float>();
    for (int64_t i = 0; i < n; ++i) f[i] = static_cast<float>(-0.1 + 0.3 * e->UniformReal());
  } else {
    for (int64_t i = 0; i < n; ++i) SetDouble(l, i, type, RandomFloat(e, type, large));
  }
  if (c.sorted) {
    std::vector<double> v(n);
    for (int64_t i = 0; i < n; ++i) v[i] = FloatBitsToDouble(type, l->GetBits(i));
    std::sort(v.begin(), v.end());
    for (int64_t i = 0; i < n; ++i) SetDouble(l, i, type, v[i]);
  }
}

absl::StatusOr<Literal> MakeConstrained(const Module& module, const UseGraph& graph,
                                        const Instruction& def, const Shape& shape,
                                        ShapeIndex index, FakeDataEngine* engine, bool large) {
  if (shape.IsTuple()) {
    Literal t(shape, false);
    t.mutable_tuple_elements()->clear();
    for (int i = 0; i < shape.tuple_count(); ++i) {
      ShapeIndex sub = index;
      sub.push_back(i);
      auto element = MakeConstrained(module, graph, def, shape.tuple_shape(i), sub, engine, large);
      if (!element.ok()) return element.status();
      t.mutable_tuple_elements()->push_back(std::move(*element));
    }
    return t;
  }
  ConstraintBuilder b;
  Collect(graph, &def, index, &b);
  FakeValueConstraint c;
  int count = b.Kinds();
  if (count > 1) {
    std::string uses;
    for (const std::string& r : b.reasons) StrAppend(&uses, uses.empty() ? "" : ", ", r);
    return absl::UnimplementedError(StrCat("conflicting fake-data constraints on ", def.name(),
                                           ": it is used as ", uses));
  }
  if (b.index_bound != std::numeric_limits<int64_t>::max()) c.limit = {{0, b.index_bound}};
  c.sorted = b.sorted;
  c.no_duplicates = b.no_duplicates;
  if (b.needs_constant) c.constant = b.constant;
  c.sparsity_metadata = b.sparsity_metadata;
  c.reasons = std::move(b.reasons);
  return MakeFakeLiteral(shape, engine, c, large);
}

uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

absl::StatusOr<FakeValueConstraint> FindValueConstraint(const Module& module,
                                                        const Instruction& def,
                                                        const ShapeIndex& index) {
  UseGraph graph(module);
  ConstraintBuilder b;
  Collect(graph, &def, index, &b);
  int count = b.Kinds();
  if (count > 1) {
    return absl::UnimplementedError(StrCat("conflicting fake-data constraints on ", def.name()));
  }
  FakeValueConstraint c;
  if (b.index_bound != std::numeric_limits<int64_t>::max()) c.limit = {{0, b.index_bound}};
  c.sorted = b.sorted;
  c.no_duplicates = b.no_duplicates;
  if (b.needs_constant) c.constant = b.constant;
  c.sparsity_metadata = b.sparsity_metadata;
  c.reasons = std::move(b.reasons);
  return c;
}

absl::StatusOr<Literal> MakeFakeLiteral(const Shape& shape, FakeDataEngine* engine,
                                        const FakeValueConstraint& constraint,
                                        bool use_large_float_range) {
  if (shape.IsTuple()) {
    Literal t(shape, false);
    t.mutable_tuple_elements()->clear();
    for (const Shape& s : shape.tuple_shapes()) {
      auto element = MakeFakeLiteral(s, engine, constraint, use_large_float_range);
      if (!element.ok()) return element.status();
      t.mutable_tuple_elements()->push_back(std::move(*element));
    }
    return t;
  }
  if (shape.IsToken() || shape.IsOpaque()) return Literal(shape);
  if (!shape.IsArray()) {
    return absl::UnimplementedError(
        StrCat("fake data for shape ", PrintShape(shape), " is not supported"));
  }
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape.is_unbounded_dimension(d)) {
      return absl::UnimplementedError(StrCat("fake data for the unbounded dynamic shape ",
                                             PrintShape(shape), " (no size to generate)"));
    }
  }
  if (shape.ElementCount() < 0) {
    return absl::InvalidArgumentError(StrCat("shape ", PrintShape(shape), " is too large"));
  }
  Literal l(shape);
  FillArray(&l, engine, constraint, use_large_float_range);
  return l;
}

absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const Module& module,
                                                       FakeDataEngine* engine,
                                                       bool use_large_float_range) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  UseGraph graph(module);
  std::vector<Literal> args;
  for (int i = 0; i < entry->parameter_count(); ++i) {
    const Instruction* p = entry->parameter(i);
    if (p == nullptr) return absl::InvalidArgumentError(StrCat("entry parameter ", i, " is missing"));
    auto l = MakeConstrained(module, graph, *p, p->shape(), {}, engine, use_large_float_range);
    if (!l.ok()) return l.status();
    args.push_back(std::move(*l));
  }
  return args;
}

absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const Module& module,
                                                       const FakeDataOptions& options) {
  FakeDataEngine engine(options.seed);
  return MakeFakeArguments(module, &engine, options.use_large_float_range);
}

absl::StatusOr<Literal> MakeFakeElidedConstant(const Module& module, const Instruction& constant,
                                               const FakeDataOptions& options) {
  std::string key = StrCat(constant.parent() ? constant.parent()->name() : "", "/", constant.name());
  FakeDataEngine engine(options.seed ^ Fnv1a(key));
  UseGraph graph(module);
  return MakeConstrained(module, graph, constant, constant.shape(), {}, &engine,
                         options.use_large_float_range);
}

absl::Status CheckArguments(const Module& module, const std::vector<Literal>& arguments,
                            const std::string& source) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (static_cast<int>(arguments.size()) != entry->parameter_count()) {
    return absl::InvalidArgumentError(StrCat(source, " has ", arguments.size(),
                                             " arguments; the entry computation takes ",
                                             entry->parameter_count()));
  }
  for (int i = 0; i < entry->parameter_count(); ++i) {
    const Shape& want = entry->parameter(i)->shape();
    const Shape& got = arguments[i].shape();
    if (!want.Compatible(got)) {
      return absl::InvalidArgumentError(
          StrCat(source, " argument ", i, " has shape ", PrintShape(got, false), "; parameter ",
                 entry->parameter(i)->name(), " expects ", PrintShape(want, false)));
    }
    if (arguments[i].elided()) {
      return absl::InvalidArgumentError(StrCat(source, " argument ", i, " has no data (elided)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace hlowb
