// The data movement and arithmetic of collective ops, on host literals: combining the same
// element of several devices' values with a reducer (all-reduce, reduce-scatter), and copying
// blocks along one dimension (all-gather, all-to-all, reduce-scatter shards). The multi-device
// rendezvous (replay/multi_device) decides who contributes what; these functions only move and
// combine bytes, so they know nothing of devices, groups or threads.
#ifndef HLOWB_REPLAY_EVALUATOR_COLLECTIVE_KERNELS_H_
#define HLOWB_REPLAY_EVALUATOR_COLLECTIVE_KERNELS_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

// Folds the same element of several arrays with an all-reduce's to_apply computation, in the
// order the arrays are given (the devices' rank order), so every device computes bit-identical
// sums: out[i] = f(...f(f(in[0][i], in[1][i]), in[2][i])..., in[n-1][i]).
//
// A to_apply that is a plain binary op of its parameters (add, multiply, maximum, minimum,
// and, or, xor) runs as a typed loop; f16, bf16 and the f8/f4 types are folded in f64 and
// rounded to the type once, at the end, as XLA's CPU backend (which promotes 16-bit
// all-reduces to f32) and TPUs do: for add, the correctly rounded sum in any order. Any other
// to_apply runs through the interpreter one element at a time (correct, slow).
class ElementwiseReducer {
 public:
  // `instr` names the collective in errors; `reducer` is its to_apply.
  static absl::StatusOr<ElementwiseReducer> Create(const Instruction& instr,
                                                   const Computation* reducer,
                                                   PrimitiveType type);

  // Writes out[begin, end) (linear element indices) from inputs[*][begin, end). Every input
  // and `out` must be arrays of the reducer's type with the same element count. `call` runs the
  // reducer on the calling device when it has no typed loop.
  absl::Status Reduce(const std::vector<const Literal*>& inputs, Literal* out, int64_t begin,
                      int64_t end, const ComputationCaller& call) const;

  bool typed() const { return typed_; }

 private:
  const Instruction* instr_ = nullptr;
  const Computation* reducer_ = nullptr;
  PrimitiveType type_ = PrimitiveType::kF32;
  Opcode op_ = Opcode::kAdd;
  bool typed_ = false;
};

// A copy of x[..., start:start+size, ...] along dimension `dim` (row-major data).
absl::StatusOr<Literal> SliceAlongDimension(const Literal& x, int64_t dim, int64_t start,
                                            int64_t size);

// Writes the concatenation of `parts` along `dim` into `out`, whose dimensions must be the
// parts' with `dim` summed (every part: same element type and rank, other dimensions equal).
absl::Status ConcatenateAlongDimension(const std::vector<const Literal*>& parts, int64_t dim,
                                       Literal* out);

// Copies elements [begin, end) of `src` into the same positions of `dst` (same element type
// and element count).
void CopyElementRange(const Literal& src, Literal* dst, int64_t begin, int64_t end);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_EVALUATOR_COLLECTIVE_KERNELS_H_
