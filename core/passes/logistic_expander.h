// "logistic-expander": rewrites logistic(x) into 1 / (1 + exp(-x)), the form XLA's CPU and GPU
// compilers lower it to, for backends without a logistic kernel.
//
// Deliberately not here: the tanh-based form (0.5 + 0.5 * tanh(x / 2)) and any choice between
// forms; logistic inside fusion computations is expanded like any other.
#ifndef HLOWB_CORE_PASSES_LOGISTIC_EXPANDER_H_
#define HLOWB_CORE_PASSES_LOGISTIC_EXPANDER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class LogisticExpander : public HloPass {
 public:
  std::string_view name() const override { return "logistic-expander"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_LOGISTIC_EXPANDER_H_
