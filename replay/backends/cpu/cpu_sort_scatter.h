// The cpu platform's sort and scatter: the interpreter's algorithms (replay/evaluator/
// sort_topk.cc, gather_scatter.cc) run on raw buffers with the comparator or combiner compiled to
// native code (codegen::CpuJit::CompileScalarFunctions), so results are bit for bit the
// interpreter's.
//
// Sort: every slice along the sort dimension is sorted stably (whatever is_stable says, as the
// interpreter does) with std::stable_sort over positions, the comparator seeing the two elements
// of every operand; all operands are permuted together. Independent slices run in parallel.
//
// Scatter: the (operand element, update element) pairs are listed in row-major order of the
// updates array, skipping every update window that would leave the operand (semantics.h), with
// batching dimensions and any integral index type; the combiner is then applied pair by pair.
// Pairs are grouped by the operand element they write, keeping their order within a group, and
// the groups run in parallel: an element's updates are combined in the interpreter's order.
//
// Declined (std::nullopt, the interpreter computes the instruction): a null function, element
// types the compiled function does not take, comparators or combiners whose parameter or result
// types differ from the operands', operands of different dimensions, elided operands, and
// anything the interpreter reports as malformed (so its error is the one the user sees).
#ifndef HLOWB_REPLAY_BACKENDS_CPU_CPU_SORT_SCATTER_H_
#define HLOWB_REPLAY_BACKENDS_CPU_CPU_SORT_SCATTER_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "replay/backends/cpu/cpu_library_calls.h"
#include "replay/codegen/cpu_jit.h"

namespace hlowb::cpu {

// A compiled scalar computation (see codegen::ScalarFn).
using ScalarFn = codegen::ScalarFn;

// Whether LibrarySort or LibraryScatter computes `instr` (given operands of its operands' shapes
// and a compiled comparator or combiner): its shapes and its computation's signature fit.
bool LibrarySortScatterTakes(const Instruction& instr);

// The sort `instr` of `operands` with the compiled comparator, or std::nullopt.
std::optional<absl::StatusOr<Literal>> LibrarySort(const Instruction& instr,
                                                   const std::vector<const Literal*>& operands,
                                                   ScalarFn comparator,
                                                   const ParallelFor& parallel_for);

// The scatter `instr` of `operands` (N operands, the indices, N updates) with the compiled
// combiner, or std::nullopt.
std::optional<absl::StatusOr<Literal>> LibraryScatter(const Instruction& instr,
                                                      const std::vector<const Literal*>& operands,
                                                      ScalarFn combiner,
                                                      const ParallelFor& parallel_for);

}  // namespace hlowb::cpu

#endif  // HLOWB_REPLAY_BACKENDS_CPU_CPU_SORT_SCATTER_H_
