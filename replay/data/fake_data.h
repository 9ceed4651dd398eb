// Fake arguments for replaying a module without real data, following the rules of XLA's
// MakeFakeArguments (xla/tests/test_utils.cc) so that a module behaves here as it does under
// run_hlo_module:
//
//  * Values that feed an index operand (dynamic-slice / dynamic-update-slice start indices,
//    gather / scatter indices) are drawn from [0, bound], bound being the largest start that
//    keeps the slice inside the operand, over every such use. Uses are found by following the
//    value through tuples, get-tuple-element, fusion / call / while / conditional / async
//    parameters and results, convert and reduce-precision, and, for gather/scatter only, the
//    data-formatting ops reshape, transpose, copy, slice and bitcast. Gather/scatter indices
//    marked indices_are_sorted come out sorted. (XLA's bound for gather/scatter is
//    operand_dim - 1, relying on clamping; here it is operand_dim - slice_size, so indices are
//    always in range.)
//  * Init values of reduce, reduce-window and select-and-scatter are the reducer's identity
//    when the reducer is a plain add (0) or multiply (1), random otherwise.
//  * Integer keys of a key/value or stable sort get no duplicates (a shuffled iota).
//  * Two different constraints on one value are an Unimplemented error, as in XLA.
//  * Everything else is random: floats uniform in [-0.1, 0.2] (XLA's small range; f8e8m0fnu,
//    which has no negative values, takes the magnitude), or with use_large_float_range a
//    log-uniform magnitude over the type's whole exponent range with a random sign and, with
//    probability 1e-6, one of ±0, ±1, ±inf. Complex values draw both parts that way. Integers
//    (every width, including 1-, 2- and 4-bit) take their type's full range, as in XLA; pred
//    is 0 or 1.
//
// The generator is std::mt19937_64 with our own integer/real mappings, so a seed gives the same
// values with every compiler and standard library. One engine is used for all arguments of all
// iterations in order, like run_hlo_module's engine; elided constants get their own engine
// seeded from the seed and the instruction's name, so they do not depend on evaluation order.
#ifndef HLOWB_REPLAY_DATA_FAKE_DATA_H_
#define HLOWB_REPLAY_DATA_FAKE_DATA_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/dot_sparsity.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"

namespace hlowb {

class FakeDataEngine {
 public:
  explicit FakeDataEngine(uint64_t seed) : engine_(seed) {}
  uint64_t Next() { return engine_(); }
  // Uniform in [lo, hi] (inclusive); lo <= hi.
  int64_t UniformInt(int64_t lo, int64_t hi);
  // Uniform in [0, 1).
  double UniformReal();

 private:
  std::mt19937_64 engine_;
};

// What a value's uses require of it.
struct FakeValueConstraint {
  std::optional<std::pair<int64_t, int64_t>> limit;  // inclusive index range
  bool sorted = false;
  bool no_duplicates = false;
  enum class Constant { kNone, kZero, kOne, kRandom } constant = Constant::kNone;
  // Sparsity metadata of a sparse dot (u16): every word holds valid in-group positions (N
  // distinct ones per group of M), so the dot can decompress its operand.
  std::optional<DotSparsity> sparsity_metadata;
  // The uses that imposed the constraints, "gather.3 (operand 1)", for messages and tests.
  std::vector<std::string> reasons;
};

struct FakeDataOptions {
  uint64_t seed = 42;
  bool use_large_float_range = false;
};

// The constraints on the value `index` (a tuple path; empty for arrays) defined by `def`
// (an entry parameter, or a constant). Unimplemented on conflicting constraints.
absl::StatusOr<FakeValueConstraint> FindValueConstraint(const Module& module,
                                                        const Instruction& def,
                                                        const ShapeIndex& index);

// A literal of `shape` (tuples recursively) under `constraint`.
absl::StatusOr<Literal> MakeFakeLiteral(const Shape& shape, FakeDataEngine* engine,
                                        const FakeValueConstraint& constraint,
                                        bool use_large_float_range);

// Fake values for every entry parameter, in parameter order, drawn from `engine`.
absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const Module& module,
                                                       FakeDataEngine* engine,
                                                       bool use_large_float_range);
// The same with a fresh engine seeded from options.seed.
absl::StatusOr<std::vector<Literal>> MakeFakeArguments(const Module& module,
                                                       const FakeDataOptions& options);

// A value for a constant whose data was elided (`{...}`): fake data with the constant's
// constraints, from an engine seeded by `seed` and the instruction's computation and name.
absl::StatusOr<Literal> MakeFakeElidedConstant(const Module& module, const Instruction& constant,
                                               const FakeDataOptions& options);

// Checks that `arguments` fit the entry computation's parameters (count, shapes ignoring
// layout); InvalidArgument naming the first that does not. `source` labels the message
// ("snapshot", "literals file iteration 2").
absl::Status CheckArguments(const Module& module, const std::vector<Literal>& arguments,
                            const std::string& source);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_DATA_FAKE_DATA_H_
