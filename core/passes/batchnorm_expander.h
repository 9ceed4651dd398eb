// "batchnorm_expander": rewrites batch-norm-training, batch-norm-inference and
// batch-norm-grad into reduce / broadcast / elementwise HLO, as backends without batch-norm
// kernels (the CPU) need. Per-feature statistics are add-reductions over every dimension but
// feature_index, divided by the number of elements per feature; the variance is
// E[x^2] - E[x]^2. Every instruction computes in the operand's element type.
//
// Deliberately not here: dynamic (bounded or unbounded) shapes, whose element count per
// feature is not a constant (left unchanged), and any fusion of the expanded ops.
#ifndef HLOWB_CORE_PASSES_BATCHNORM_EXPANDER_H_
#define HLOWB_CORE_PASSES_BATCHNORM_EXPANDER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

struct BatchNormExpanderOptions {
  bool rewrite_training_op = true;
  bool rewrite_inference_op = true;
  bool rewrite_grad_op = true;
};

class BatchNormExpander : public HloPass {
 public:
  BatchNormExpander() = default;
  explicit BatchNormExpander(BatchNormExpanderOptions options) : options_(options) {}
  std::string_view name() const override { return "batchnorm_expander"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

 private:
  BatchNormExpanderOptions options_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_BATCHNORM_EXPANDER_H_
