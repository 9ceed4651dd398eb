// The rewrites the reducer (reducer.h) tries on a failing module. Each works on a Candidate — a
// module together with the arguments its entry parameters take — and keeps instructions in a
// defs-before-uses order; Cleanup() then removes what the rewrite left dead (instructions,
// unused entry parameters with their arguments, computations nothing calls) and keeps the
// module's entry_computation_layout in step with the entry.
//
// Instructions are named, not pointed to, so a rewrite chosen on one candidate can be applied
// to a copy of it. A value that is replaced keeps its name (a parameter standing for
// %multiply.5 is called multiply.5), which keeps later rewrites and captured values lined up
// and tells the reader of the reduced module where each parameter came from.
//
// Deliberately not here: deciding whether a rewrite is worth keeping (that needs a run, see
// failure.h) or in which order to try them (reducer.cc).
#ifndef HLOWB_REPLAY_REDUCE_EDITS_H_
#define HLOWB_REPLAY_REDUCE_EDITS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"

namespace hlowb::reduce {

struct Candidate {
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;  // one per entry parameter, in parameter order
};

// A deep copy (module and arguments).
Candidate CopyCandidate(const Candidate& c);

// Instructions in every computation of the module (what the reducer minimises).
int64_t CountInstructions(const Module& module);
// Instructions that compute something: everything but parameters, constants, tuples and
// get-tuple-elements (the reducer's tie-break between candidates of equal size).
int64_t CountOperations(const Module& module);

// Whether the instruction only names or forwards values: a parameter, a constant, a tuple or a
// get-tuple-element.
bool IsValueOnly(const Instruction& instr);

// Removes what no longer matters: in every computation, instructions nothing reaches from the
// root (side-effecting ones stay when `keep_side_effects`), entry parameters nothing uses (with
// their arguments), computations nothing calls; then refreshes the entry layout. Returns
// whether anything changed.
bool Cleanup(Candidate* c, bool keep_side_effects);

// The entry's root becomes the entry instruction `name`. NotFound when there is none.
absl::Status CutAt(Candidate* c, const std::string& name);

// The entry keeps its first `count` instructions (in their order); the root becomes the
// values among them that later instructions or the old root read (and the last kept one),
// as a tuple when there are several. `include` filters which values may be outputs
// (parameters and constants never are). FailedPrecondition when nothing is left to output.
absl::Status CutAtPrefix(Candidate* c, int count,
                         const std::function<bool(const Instruction&)>& include = nullptr);

// The entry's root becomes a tuple of every entry instruction `include` accepts (parameters,
// constants and values holding tokens never), whose names go to `names` in tuple order.
// FailedPrecondition when there is none.
absl::Status OutputAll(Candidate* c, const std::function<bool(const Instruction&)>& include,
                       std::vector<std::string>* names);

// The entry's root, a tuple, loses the operands named in `names` (down to one operand, the
// root is that operand). False when nothing would change or nothing would be left.
bool DropOutputs(Candidate* c, const std::vector<std::string>& names);

// Each named entry instruction becomes a parameter (of its own name) taking the given value.
// Names that are missing or already parameters are skipped. Returns how many were replaced.
int ReplaceWithParameters(Candidate* c, std::vector<std::pair<std::string, Literal>> values);

// Each named instruction of the named computation becomes zeros of its shape (a constant, or a
// broadcast constant; after-all for tokens). Tuples and parameters are skipped. Returns how
// many were replaced.
int ReplaceWithZeros(Candidate* c,
                     const std::vector<std::pair<std::string, std::string>>& computation_and_name);

// Uses of instruction `name` in `computation` read its operand `operand` instead (which must
// have the same shape). False when that does not apply.
bool Bypass(Candidate* c, const std::string& computation, const std::string& name, int operand);

// The computation `name` becomes the entry, its parameters taking `arguments`; everything the
// old entry alone used goes.
absl::Status Outline(Candidate* c, const std::string& computation, std::vector<Literal> arguments);

// Inlines every `call` (the call-inliner pass). False when there were none.
bool InlineCalls(Candidate* c);
// The fusion `name` (in any computation) becomes the instructions of its fused computation.
bool Unfuse(Candidate* c, const std::string& name);
// The conditional `name` becomes its branch `branch`, run unconditionally.
bool PickBranch(Candidate* c, const std::string& name, int branch);

// A loop bound the reducer can lower: a scalar integer constant that a while condition
// compares its counter against, so that a smaller constant runs fewer iterations.
struct TripBound {
  std::string computation;  // the condition
  std::string constant;     // the constant's name
  int64_t value = 0;
};
std::vector<TripBound> FindTripBounds(const Module& module);
// Sets the bound (the constant gets a copy of its own when something else reads it too).
bool SetTripBound(Candidate* c, const TripBound& bound, int64_t value);

// Entry parameters `names` keep `size` elements of dimension `dim` from `start` on (their
// arguments sliced the same way), and every entry instruction whose shape follows from its
// operands takes its new shape, inferred as the verifier would. False (the candidate then
// unusable) when that does not apply: a name that is not an array parameter of the entry, a
// dimension or window out of range, or an instruction whose shape cannot follow its operands
// (a shape fixed by an attribute such as a broadcast's or reshape's, a called computation's
// signature).
bool ShrinkParameters(Candidate* c, const std::vector<std::string>& names, int dim, int64_t start,
                      int64_t size);

// A literal of `shape` filled with zeros (tuples recursively).
Literal ZerosLike(const Shape& shape);

}  // namespace hlowb::reduce

#endif  // HLOWB_REPLAY_REDUCE_EDITS_H_
