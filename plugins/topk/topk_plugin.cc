#include "plugins/topk/topk_plugin.h"

#include <vector>

#include "core/ir/computation.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "plugins/api/handler_util.h"

namespace hlowb {
namespace {

using Operands = std::vector<const Literal*>;

absl::StatusOr<bool> KeepsLargest(const Instruction& instr) {
  if (instr.called_computations().empty()) return true;
  const Computation* cmp = instr.called_computations()[0];
  const Instruction* root = cmp == nullptr ? nullptr : cmp->root();
  if (root == nullptr || root->opcode() != Opcode::kCompare || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter) {
    return absl::UnimplementedError(
        "TopK comparator is not a single compare of its two parameters");
  }
  bool swapped = root->operand(0)->parameter_number() == 1;
  switch (root->attrs_or_default().comparison_direction) {
    case ComparisonDirection::kGt:
    case ComparisonDirection::kGe: return !swapped;
    case ComparisonDirection::kLt:
    case ComparisonDirection::kLe: return swapped;
    default: return absl::UnimplementedError("TopK comparator direction is not GT, GE, LT or LE");
  }
}

absl::StatusOr<Literal> EvalTopKCall(const Instruction& instr, const Operands& ops) {
  if (ops.size() != 1) return absl::InvalidArgumentError("TopK takes one operand");
  const Shape& out = instr.shape();
  const Shape& in = ops[0]->shape();
  if (!out.IsTuple() || out.tuple_count() != 2 || !out.tuple_shape(0).IsArray() || !in.IsArray() ||
      in.rank() < 1 || out.tuple_shape(0).rank() != in.rank()) {
    return absl::InvalidArgumentError(
        StrCat("TopK expects an array operand and a (values, indices) result; got ",
               PrintShape(in, false), " -> ", PrintShape(out, false)));
  }
  absl::StatusOr<bool> largest = KeepsLargest(instr);
  if (!largest.ok()) return largest.status();
  const int64_t k = out.tuple_shape(0).dimensions().back();
  std::vector<int64_t> dims = in.dimensions();
  dims.back() = k;
  ScratchComputation s;
  Instruction* p = s.Parameter(in);
  Instruction* topk = s.Add(Opcode::kTopK,
                            Shape::Tuple({Shape::Array(in.element_type(), dims),
                                          Shape::Array(PrimitiveType::kS32, dims)}),
                            {p});
  topk->mutable_attrs()->k = k;
  topk->mutable_attrs()->largest = *largest;
  absl::StatusOr<Literal> r = s.Run(topk, {ops[0]});
  if (!r.ok()) return r.status();
  std::vector<Literal> elements = std::move(*r->mutable_tuple_elements());
  PrimitiveType index_type = out.tuple_shape(1).element_type();
  if (index_type != PrimitiveType::kS32) {
    absl::StatusOr<Literal> idx = ConvertLiteral(elements[1], index_type);
    if (!idx.ok()) return idx.status();
    elements[1] = std::move(*idx);
  }
  Literal result(out, /*allocate=*/false);
  *result.mutable_tuple_elements() = std::move(elements);
  return result;
}

}  // namespace

absl::Status RegisterTopKPlugin(CustomCallRegistry* registry) {
  return registry->Register(
      {"TopK", "", "topk", "top-k values and indices along the last dimension", EvalTopKCall, {}});
}

}  // namespace hlowb
