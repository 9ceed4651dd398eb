// Where a scatter's updates go, shared by the interpreter and the cpu platform's scatter so
// that both apply the same updates in the same order.
#ifndef HLOWB_REPLAY_EVALUATOR_SCATTER_PAIRS_H_
#define HLOWB_REPLAY_EVALUATOR_SCATTER_PAIRS_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"

namespace hlowb::eval {

// The (operand element, update element) pairs of scatter `instr` with an operand of shape
// `operand`, start `indices` and updates of shape `updates`, as row-major linear offsets, in
// the order the updates are applied: row-major order of the updates array. Update windows that
// would leave the operand are skipped (semantics.h); batching dimensions are honoured.
// InvalidArgument, naming the instruction, for malformed dimension numbers.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ScatterPairs(const Instruction& instr,
                                                                      const Shape& operand,
                                                                      const Literal& indices,
                                                                      const Shape& updates);

}  // namespace hlowb::eval

#endif  // HLOWB_REPLAY_EVALUATOR_SCATTER_PAIRS_H_
