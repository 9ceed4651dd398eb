// "constant_folding": an instruction all of whose operands are constants is evaluated with
// the pipeline's constant evaluator (PassContext::evaluator()) and replaced by a constant
// holding the result. Chains fold in one run (instructions are visited operands first).
// Without an evaluator the pass does nothing. Fusion computations are left alone.
//
// Deliberately not folded: broadcasts and iotas (a small instruction would become a large
// constant), instructions with side effects (rng, collectives, ...), control flow (while,
// conditional, call: evaluation could be long or not terminate), custom calls, fft,
// rng-bit-generator, tuples, after-all, add-dependency, results that are not arrays or have
// dynamic dimensions, operands that are elided constants, and anything whose result or
// operands exceed PassOptions::constant_folding_max_elements elements. Evaluation errors
// (an opcode the evaluator cannot run) leave the instruction as it is.
#ifndef HLOWB_CORE_PASSES_HLO_CONSTANT_FOLDING_H_
#define HLOWB_CORE_PASSES_HLO_CONSTANT_FOLDING_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class HloConstantFolding : public HloPass {
 public:
  std::string_view name() const override { return "constant_folding"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_CONSTANT_FOLDING_H_
