#include "core/passes/hlo_constant_folding.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"

namespace hlowb {
namespace {

bool OpcodeFoldable(Opcode op) {
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kWhile:
    case Opcode::kConditional:
    case Opcode::kCall:
    case Opcode::kCustomCall:
    case Opcode::kFft:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
    case Opcode::kFusion:
    // Which device runs the program: not known at compile time.
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return false;
    default:
      break;
  }
  // Collectives combine the values of every device in a group; one device's view is not theirs.
  const OpcodeCategory category = OpcodeCategoryOf(op);
  return category != OpcodeCategory::kCollective && category != OpcodeCategory::kAsync;
}

int64_t ArrayElements(const Shape& shape) {
  return shape.IsArray() ? std::max<int64_t>(shape.ElementCount(), 0) : 0;
}

// True when `instr` may be folded: a foldable opcode, an array result, constant operands,
// within the size limit.
bool Foldable(const Instruction& instr, int64_t max_elements) {
  if (!OpcodeFoldable(instr.opcode())) return false;
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || shape.IsDynamic() || shape.ElementCount() < 0) return false;
  int64_t operand_elements = 0;
  for (const Instruction* op : instr.operands()) {
    if (op == nullptr || op->opcode() != Opcode::kConstant || op->literal() == nullptr) {
      return false;
    }
    if (op->literal()->elided() || op->shape().IsDynamic()) return false;
    operand_elements += ArrayElements(op->shape());
  }
  if (std::max(shape.ElementCount(), operand_elements) > max_elements) return false;
  return !HasSideEffect(instr);
}

// `result` re-shaped to `shape` (the instruction's own layout), or nullopt when the evaluator
// produced something else.
std::optional<Literal> WithShape(const Literal& result, const Shape& shape) {
  const Shape& rs = result.shape();
  if (!rs.IsArray() || rs.element_type() != shape.element_type() ||
      rs.dimensions() != shape.dimensions() || result.elided()) {
    return std::nullopt;
  }
  Literal out(shape);
  if (out.data().size() != result.data().size()) return std::nullopt;
  *out.mutable_data() = result.data();
  return out;
}

}  // namespace

absl::StatusOr<bool> HloConstantFolding::Run(Module* module, PassContext& context) {
  if (!context.evaluator()) return false;
  const int64_t max_elements = context.options().constant_folding_max_elements;
  bool changed = false;
  NameUniquer names(*module);
  const absl::flat_hash_set<const Computation*> fusion = FusedComputations(*module);
  for (const auto& comp : module->computations()) {
    if (fusion.contains(comp.get())) continue;
    ComputationEditor editor(comp.get(), &names);
    bool comp_changed = false;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      if (context.cancelled()) break;
      if (!Foldable(*instr, max_elements)) continue;
      if (editor.user_count(instr) == 0 && !instr->IsRoot()) continue;
      std::vector<const Literal*> operands;
      for (const Instruction* op : instr->operands()) operands.push_back(op->literal());
      absl::StatusOr<Literal> result = context.evaluator()(*instr, operands);
      if (!result.ok()) continue;
      std::optional<Literal> folded = WithShape(*result, instr->shape());
      if (!folded.has_value()) continue;
      if (!context.ConsumeFuel(name())) continue;
      Instruction* constant = editor.AddConstant(*std::move(folded));
      editor.ReplaceAllUsesWith(instr, constant);
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
