#include "core/passes/dot_decomposer.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

bool IsIota(const std::vector<int64_t>& v) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

bool ValidDims(const std::vector<int64_t>& dims, int rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return false;
  }
  return true;
}

// A dense two-operand dot with static array shapes and in-range dimension numbers.
bool Supported(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) return false;
  if (!dot.attrs_or_default().sparsity.empty()) return false;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (!lhs.IsArray() || !rhs.IsArray() || !dot.shape().IsArray()) return false;
  if (lhs.IsDynamic() || rhs.IsDynamic() || dot.shape().IsDynamic()) return false;
  const auto& dn = dot.attrs_or_default().dot_dimension_numbers;
  if (!dn.has_value()) return true;
  if (dn->lhs_batch_dimensions.size() != dn->rhs_batch_dimensions.size() ||
      dn->lhs_contracting_dimensions.size() != dn->rhs_contracting_dimensions.size()) {
    return false;
  }
  return ValidDims(dn->lhs_batch_dimensions, lhs.rank()) &&
         ValidDims(dn->rhs_batch_dimensions, rhs.rank()) &&
         ValidDims(dn->lhs_contracting_dimensions, lhs.rank()) &&
         ValidDims(dn->rhs_contracting_dimensions, rhs.rank()) &&
         dn->lhs_ragged_dimensions.empty() && dn->rhs_group_dimensions.empty();
}

bool IsCanonical(const Instruction& dot) {
  static const DotDimensionNumbers kNone;
  const auto& opt = dot.attrs_or_default().dot_dimension_numbers;
  const DotDimensionNumbers& dn = opt.has_value() ? *opt : kNone;
  if (dn.lhs_contracting_dimensions.size() != 1) return false;
  const size_t batch = dn.lhs_batch_dimensions.size();
  if (batch + 2 < static_cast<size_t>(dot.operand(0)->shape().rank()) ||
      batch + 2 < static_cast<size_t>(dot.operand(1)->shape().rank())) {
    return false;
  }
  return IsIota(dn.lhs_batch_dimensions) && IsIota(dn.rhs_batch_dimensions);
}

std::vector<int64_t> Remaining(int rank, const std::vector<int64_t>& a,
                               const std::vector<int64_t>& b) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::find(a.begin(), a.end(), d) == a.end() &&
        std::find(b.begin(), b.end(), d) == b.end()) {
      out.push_back(d);
    }
  }
  return out;
}

Shape DefaultArray(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s = Shape::Array(type, std::move(dims));
  s.SetDefaultLayout();
  return s;
}

// `operand` transposed by `perm` (left out when `perm` is the identity) and reshaped to
// `dims` (left out when the dimensions already match).
Instruction* TransposeAndReshape(ComputationEditor& editor, Instruction* operand,
                                 const std::vector<int64_t>& perm,
                                 const std::vector<int64_t>& dims) {
  Instruction* value = operand;
  const Shape& shape = operand->shape();
  if (!IsIota(perm)) {
    std::vector<int64_t> permuted;
    for (int64_t d : perm) permuted.push_back(shape.dimension(static_cast<int>(d)));
    value = editor.Add(Opcode::kTranspose, DefaultArray(shape.element_type(), permuted),
                       {value});
    *value->mutable_dimensions() = perm;
    value->set_has_dimensions(true);
  }
  if (value->shape().dimensions() != dims) {
    value = editor.Add(Opcode::kReshape, DefaultArray(shape.element_type(), dims), {value});
  }
  return value;
}

int64_t Product(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= shape.dimension(static_cast<int>(d));
  return p;
}

void Canonicalize(Instruction* dot, ComputationEditor& editor) {
  static const DotDimensionNumbers kNone;
  const auto& opt = dot->attrs_or_default().dot_dimension_numbers;
  const DotDimensionNumbers dn = opt.has_value() ? *opt : kNone;
  Instruction* lhs = dot->operand(0);
  Instruction* rhs = dot->operand(1);
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  const std::vector<int64_t> lhs_nc =
      Remaining(ls.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  const std::vector<int64_t> rhs_nc =
      Remaining(rs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);

  std::vector<int64_t> lhs_perm = dn.lhs_batch_dimensions;
  lhs_perm.insert(lhs_perm.end(), lhs_nc.begin(), lhs_nc.end());
  lhs_perm.insert(lhs_perm.end(), dn.lhs_contracting_dimensions.begin(),
                  dn.lhs_contracting_dimensions.end());
  std::vector<int64_t> rhs_perm = dn.rhs_batch_dimensions;
  rhs_perm.insert(rhs_perm.end(), dn.rhs_contracting_dimensions.begin(),
                  dn.rhs_contracting_dimensions.end());
  rhs_perm.insert(rhs_perm.end(), rhs_nc.begin(), rhs_nc.end());

  std::vector<int64_t> batch;
  for (int64_t d : dn.lhs_batch_dimensions) batch.push_back(ls.dimension(static_cast<int>(d)));
  const int64_t m = Product(ls, lhs_nc);
  const int64_t k = Product(ls, dn.lhs_contracting_dimensions);
  const int64_t n = Product(rs, rhs_nc);
  std::vector<int64_t> lhs_dims = batch;
  lhs_dims.insert(lhs_dims.end(), {m, k});
  std::vector<int64_t> rhs_dims = batch;
  rhs_dims.insert(rhs_dims.end(), {k, n});
  std::vector<int64_t> out_dims = batch;
  out_dims.insert(out_dims.end(), {m, n});

  Instruction* new_lhs = TransposeAndReshape(editor, lhs, lhs_perm, lhs_dims);
  Instruction* new_rhs = TransposeAndReshape(editor, rhs, rhs_perm, rhs_dims);
  const Shape out_shape = DefaultArray(dot->shape().element_type(), out_dims);
  Instruction* new_dot = editor.AddLike(*dot, out_shape, {new_lhs, new_rhs});
  DotDimensionNumbers canonical;
  const int64_t b = static_cast<int64_t>(batch.size());
  for (int64_t i = 0; i < b; ++i) {
    canonical.lhs_batch_dimensions.push_back(i);
    canonical.rhs_batch_dimensions.push_back(i);
  }
  canonical.lhs_contracting_dimensions = {b + 1};
  canonical.rhs_contracting_dimensions = {b};
  new_dot->mutable_attrs()->dot_dimension_numbers = canonical;
  Instruction* result = new_dot;
  if (!(new_dot->shape() == dot->shape())) {
    result = editor.Add(Opcode::kReshape, dot->shape(), {new_dot});
  }
  editor.ReplaceAllUsesWith(dot, result);
}

}  // namespace

absl::StatusOr<bool> DotDecomposer::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  const absl::flat_hash_set<const Computation*> fusion = FusedComputations(*module);
  for (const auto& comp : module->computations()) {
    if (fusion.contains(comp.get())) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      if (!Supported(*instr) || IsCanonical(*instr)) continue;
      if (!context.ConsumeFuel(name())) continue;
      Canonicalize(instr, editor);
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
