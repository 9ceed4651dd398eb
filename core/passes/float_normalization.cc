#include "core/passes/float_normalization.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

constexpr PrimitiveType kLow = PrimitiveType::kBF16;
constexpr PrimitiveType kHigh = PrimitiveType::kF32;

// `shape` with every bf16 array (recursively through tuples) made f32.
Shape Widen(const Shape& shape) {
  Shape s = shape;
  if (s.IsTuple()) {
    for (Shape& e : *s.mutable_tuple_shapes()) e = Widen(e);
  } else if (s.element_type() == kLow) {
    s.set_element_type(kHigh);
  }
  return s;
}

bool IsLowArray(const Shape& s) { return s.IsArray() && s.element_type() == kLow; }

// Elementwise operations the target cannot compute in bf16.
bool IsArithmetic(Opcode op) {
  switch (op) {
    case Opcode::kCopy:
    case Opcode::kSelect:
    case Opcode::kComplex:
    case Opcode::kReal:
    case Opcode::kImag:
      return false;
    case Opcode::kCompare:
    case Opcode::kClamp:
      return true;
    default: {
      const OpcodeCategory c = OpcodeCategoryOf(op);
      return c == OpcodeCategory::kUnary || c == OpcodeCategory::kUnaryAccuracy ||
             c == OpcodeCategory::kBinary;
    }
  }
}

// Computations applied to scalars by their callers; they are rewritten along with the caller.
absl::flat_hash_set<const Computation*> AppliedComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> applied;
  for (const auto& comp : module.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      switch (instr->opcode()) {
        case Opcode::kReduce:
        case Opcode::kReduceWindow:
        case Opcode::kSelectAndScatter:
        case Opcode::kScatter:
        case Opcode::kSort:
        case Opcode::kMap:
        case Opcode::kAllReduce:
        case Opcode::kAllReduceStart:
        case Opcode::kReduceScatter:
          for (const Computation* c : instr->called_computations()) applied.insert(c);
          break;
        default:
          break;
      }
    }
  }
  return applied;
}

// Makes f32 copies of bf16 scalar reducers, placed before their first caller.
class ReducerWidener {
 public:
  ReducerWidener(Module* module, NameUniquer* names) : module_(module), names_(names) {}

  // nullptr when `reducer` holds something other than scalar elementwise arithmetic.
  Computation* Get(Computation* reducer, const Computation* caller) {
    auto it = cache_.find(reducer);
    if (it != cache_.end()) return it->second;
    Computation* widened = Build(reducer, caller);
    cache_[reducer] = widened;
    return widened;
  }

 private:
  Computation* Build(Computation* reducer, const Computation* caller) {
    for (const Instruction* instr : reducer->instructions()) {
      const Opcode op = instr->opcode();
      const bool ok = op == Opcode::kParameter || op == Opcode::kConstant ||
                      op == Opcode::kSelect || op == Opcode::kCompare || IsArithmetic(op);
      if (!ok || !instr->shape().IsScalar() || !instr->called_computations().empty()) {
        return nullptr;
      }
      if (op == Opcode::kConstant && (!instr->literal() || instr->literal()->elided())) {
        return nullptr;
      }
    }
    if (!reducer->root()) return nullptr;
    auto comp = std::make_unique<Computation>(names_->Unique(StrCat(reducer->name(), "_f32")));
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    for (const Instruction* instr : reducer->instructions()) {
      Shape shape = Widen(instr->shape());
      Instruction* copy = module_->NewInstruction(instr->opcode(), "", module_->InternShape(shape));
      CopyInstructionFields(*instr, copy);
      copy->set_shape(module_->InternShape(shape));
      copy->set_name(names_->Unique(instr->name()));
      if (instr->opcode() == Opcode::kConstant &&
          instr->literal()->shape().element_type() == kLow) {
        copy->set_literal(std::make_unique<Literal>(
            ScalarLiteral(kHigh, LiteralElementAsDouble(*instr->literal(), 0))));
      }
      for (Instruction* op : instr->operands()) {
        auto found = map.find(op);
        if (found == map.end()) return nullptr;
        copy->mutable_operands()->push_back(found->second);
      }
      copy->mutable_control_predecessors()->clear();
      comp->AddInstruction(copy);
      map[instr] = copy;
    }
    comp->set_root(map[reducer->root()]);
    comp->set_execution_thread(reducer->execution_thread());
    Computation* added = module_->AddComputation(std::move(comp));
    auto& comps = *module_->mutable_computations();
    auto pos = std::find_if(comps.begin(), comps.end(),
                            [&](const auto& c) { return c.get() == caller; });
    if (pos != comps.end()) std::rotate(pos, comps.end() - 1, comps.end());
    return added;
  }

  Module* module_;
  NameUniquer* names_;
  absl::flat_hash_map<const Computation*, Computation*> cache_;
};

bool UsesLow(const Instruction& instr) {
  if (IsLowArray(instr.shape())) return true;
  for (const Instruction* op : instr.operands()) {
    if (IsLowArray(op->shape())) return true;
  }
  return false;
}

bool Candidate(const Instruction& instr) {
  if (!instr.shape().IsArray() || !UsesLow(instr)) return false;
  for (const Instruction* op : instr.operands()) {
    if (!op->shape().IsArray()) return false;
  }
  if (IsArithmetic(instr.opcode())) return true;
  return (instr.opcode() == Opcode::kReduce || instr.opcode() == Opcode::kReduceWindow) &&
         instr.operand_count() == 2 && instr.called_computations().size() == 1;
}

}  // namespace

absl::StatusOr<bool> FloatNormalization::Run(Module* module, PassContext& context) {
  bool changed = false;
  NameUniquer names(*module);
  ReducerWidener reducers(module, &names);
  const absl::flat_hash_set<const Computation*> applied = AppliedComputations(*module);
  std::vector<Computation*> comps;
  for (const auto& c : module->computations()) {
    if (!applied.contains(c.get())) comps.push_back(c.get());
  }
  for (Computation* comp : comps) {
    std::vector<Instruction*> targets;
    for (Instruction* instr : comp->instructions()) {
      if (Candidate(*instr)) targets.push_back(instr);
    }
    if (targets.empty()) continue;
    ComputationEditor editor(comp, &names);
    bool comp_changed = false;
    // One f32 copy per bf16 value, shared by all its rewritten users.
    absl::flat_hash_map<Instruction*, Instruction*> widened;
    for (Instruction* instr : targets) {
      Computation* reducer = nullptr;
      if (!instr->called_computations().empty()) {
        reducer = reducers.Get(instr->called_computations()[0], comp);
        if (!reducer) continue;
      }
      if (!context.ConsumeFuel(name())) break;
      std::vector<Instruction*> operands;
      for (Instruction* op : instr->operands()) {
        if (IsLowArray(op->shape())) {
          Instruction*& wide = widened[op];
          if (!wide) wide = editor.Add(Opcode::kConvert, Widen(op->shape()), {op});
          op = wide;
        }
        operands.push_back(op);
      }
      Instruction* computed = editor.AddLike(*instr, Widen(instr->shape()), operands);
      if (reducer) *computed->mutable_called_computations() = {reducer};
      Instruction* result = computed;
      if (IsLowArray(instr->shape())) {
        result = editor.Add(Opcode::kConvert, instr->shape(), {computed});
      }
      editor.ReplaceAllUsesWith(instr, result);
      comp_changed = true;
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
