// "tuple-simplifier": removes tuple packing that is immediately unpacked, in every
// computation:
//   get-tuple-element(tuple(a0, ..., an), i)              => ai
//   tuple(gte(x, 0), ..., gte(x, n-1)), same x, same shape => x
// Nested tuples collapse in one run because instructions are visited operands first.
//
// Deliberately not done: looking through while loops, calls or conditionals (that needs
// dataflow analysis), rewriting when shapes differ in layout (the result's layout would
// change), and dropping a tuple whose elements are gtes of different tuples.
#ifndef HLOWB_CORE_PASSES_TUPLE_SIMPLIFIER_H_
#define HLOWB_CORE_PASSES_TUPLE_SIMPLIFIER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class TupleSimplifier : public HloPass {
 public:
  std::string_view name() const override { return "tuple-simplifier"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_TUPLE_SIMPLIFIER_H_
