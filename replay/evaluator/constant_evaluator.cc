#include "replay/evaluator/constant_evaluator.h"

#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

ConstantEvaluator InterpreterConstantEvaluator() {
  return [](const Instruction& instr,
            const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
    // A one-instruction module over parameters; called computations are shared, not copied
    // (the evaluator only reads them).
    Module scratch("constant_folding");
    Computation* c = scratch.AddComputation(std::make_unique<Computation>("fold"));
    std::vector<Instruction*> params;
    for (size_t i = 0; i < operands.size(); ++i) {
      Instruction* p = scratch.NewInstruction(Opcode::kParameter, StrCat("p", i),
                                              scratch.InternShape(operands[i]->shape()));
      p->set_index(static_cast<int64_t>(i));
      c->AddInstruction(p);
      params.push_back(p);
    }
    Instruction* copy = scratch.NewInstruction(instr.opcode(), instr.name(),
                                               scratch.InternShape(instr.shape()));
    CopyInstructionFields(instr, copy);
    copy->set_shape(scratch.InternShape(instr.shape()));
    *copy->mutable_operands() = params;
    c->AddInstruction(copy);
    c->set_root(copy);
    scratch.set_entry(c);
    std::vector<Literal> args;
    args.reserve(operands.size());
    for (const Literal* l : operands) args.push_back(*l);
    return EvaluateModule(scratch, args);
  };
}

}  // namespace hlowb
