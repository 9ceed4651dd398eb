// Internals shared by the evaluator's translation units: the Evaluator driver class, the
// per-element-type dispatch, index iteration and the op families' entry points. Not a public
// header: only replay/evaluator/*.cc include it.
//
// Element handling: every native type (pred, s8..s64, u8..u64, f32, f64, c64, c128) is
// processed by typed loops over the literal's storage. Sub-byte integers (s1/s2/s4, u1/u2/u4)
// are processed as 8-bit values and then wrapped back to their width (NormalizeSubByte). The
// narrow float types (f16, bf16, every f8/f4) are widened exactly to f64, processed there and
// rounded once back to the narrow type with XLA's rules (core/ir/float_types.h).
#ifndef HLOWB_REPLAY_EVALUATOR_EVAL_INTERNAL_H_
#define HLOWB_REPLAY_EVALUATOR_EVAL_INTERNAL_H_

#include <chrono>
#include <complex>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "core/support/strings.h"
#include "replay/evaluator/evaluator.h"
#include "replay/evaluator/semantics.h"

namespace hlowb {
class InstructionRunner;
}  // namespace hlowb

namespace hlowb::eval {

using c64 = std::complex<float>;
using c128 = std::complex<double>;
using Operands = std::vector<const Literal*>;

template <typename T>
struct Tag {
  using type = T;
};

template <typename T>
inline constexpr bool kIsComplex = std::is_same_v<T, c64> || std::is_same_v<T, c128>;
template <typename T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T>;
template <typename T>
inline constexpr bool kIsInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// True for types stored natively (no widening needed).
bool IsNativeType(PrimitiveType t);
bool IsNarrowFloat(PrimitiveType t);  // f16, bf16, f8*, f4*
bool IsSubByteInt(PrimitiveType t);

// Calls f(Tag<T>{}) with T the storage type of a native element type; Unimplemented otherwise.
template <typename F>
auto DispatchNative(PrimitiveType t, F&& f) -> decltype(f(Tag<float>{})) {
  switch (t) {
    case PrimitiveType::kPred: return f(Tag<bool>{});
    case PrimitiveType::kS1:
    case PrimitiveType::kS2:
    case PrimitiveType::kS4:
    case PrimitiveType::kS8: return f(Tag<int8_t>{});
    case PrimitiveType::kS16: return f(Tag<int16_t>{});
    case PrimitiveType::kS32: return f(Tag<int32_t>{});
    case PrimitiveType::kS64: return f(Tag<int64_t>{});
    case PrimitiveType::kU1:
    case PrimitiveType::kU2:
    case PrimitiveType::kU4:
    case PrimitiveType::kU8: return f(Tag<uint8_t>{});
    case PrimitiveType::kU16: return f(Tag<uint16_t>{});
    case PrimitiveType::kU32: return f(Tag<uint32_t>{});
    case PrimitiveType::kU64: return f(Tag<uint64_t>{});
    case PrimitiveType::kF32: return f(Tag<float>{});
    case PrimitiveType::kF64: return f(Tag<double>{});
    case PrimitiveType::kC64: return f(Tag<c64>{});
    case PrimitiveType::kC128: return f(Tag<c128>{});
    default:
      return absl::UnimplementedError(
          StrCat("element type ", PrimitiveTypeName(t), " is not handled by a typed loop here"));
  }
}

// Exact f64 copy of a narrow-float literal (same dimensions).
Literal WidenToF64(const Literal& narrow);
// Rounds an f64 literal to `type` (a narrow float type) with XLA's conversion rules.
Literal NarrowFromF64(const Literal& wide, PrimitiveType type);
// Exact double → bf16 bits with round-to-nearest-even (fast path of NarrowFromF64).
uint16_t DoubleToBF16Bits(double d);
// Widens if narrow, otherwise returns a shallow pointer (storage in `holder` when widened).
const Literal* WidenIfNarrow(const Literal* l, Literal* holder);
// Rounds a double to a narrow type and back (used for per-step rounding in reductions).
double RoundThrough(PrimitiveType type, double v);
// Re-wraps sub-byte integer storage after 8-bit arithmetic (sign-extend or mask).
void NormalizeSubByte(Literal* l);

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Advances a row-major multi-index; returns false after the last index.
inline bool NextIndex(std::vector<int64_t>& idx, const std::vector<int64_t>& dims) {
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    if (++idx[d] < dims[d]) return true;
    idx[d] = 0;
  }
  return false;
}
inline int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// A literal of `shape` (array or tuple), zero-filled; shape checked for sanity.
absl::StatusOr<Literal> NewLiteral(const Shape& shape);
// Scalar of type t holding element i of `from` (same type).
Literal ScalarFrom(const Literal& from, int64_t i);
Literal ScalarOfType(PrimitiveType t);
// Copies one element between literals of the same type.
inline void CopyElement(const Literal& src, int64_t si, Literal* dst, int64_t di) {
  int eb = src.element_bytes();
  std::memcpy(dst->mutable_data()->data() + di * eb, src.data().data() + si * eb, eb);
}
// Reads an integer index value from any integral scalar/array element.
int64_t IndexValue(const Literal& l, int64_t i);
std::string InstrRef(const Instruction& instr);  // "%name (opcode)"
absl::Status Unimplemented(const Instruction& instr, const std::string& what);
absl::Status Invalid(const Instruction& instr, const std::string& what);

// Calls f(fn) with fn the typed scalar function of a plain binary reducer opcode (add, multiply,
// subtract, max, min, and, or, xor, divide) on T; Unimplemented when `op` has none for T. pred
// add/or/max are ||, multiply/and/min are &&, as XLA's reducers on pred behave.
template <typename T, typename F>
absl::Status WithBinaryFn(Opcode op, F&& f) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Opcode::kAdd:
      case Opcode::kOr:
      case Opcode::kMaximum: return f([](bool a, bool b) { return a || b; });
      case Opcode::kMultiply:
      case Opcode::kAnd:
      case Opcode::kMinimum: return f([](bool a, bool b) { return a && b; });
      case Opcode::kXor: return f([](bool a, bool b) { return a != b; });
      default: break;
    }
  } else {
    switch (op) {
      case Opcode::kAdd: return f([](T a, T b) { return WrapAdd<T>(a, b); });
      case Opcode::kMultiply: return f([](T a, T b) { return WrapMul<T>(a, b); });
      case Opcode::kSubtract: return f([](T a, T b) { return WrapSub<T>(a, b); });
      default: break;
    }
    if constexpr (!kIsComplex<T>) {
      switch (op) {
        case Opcode::kMaximum: return f([](T a, T b) { return NanPropagatingMax<T>(a, b); });
        case Opcode::kMinimum: return f([](T a, T b) { return NanPropagatingMin<T>(a, b); });
        default: break;
      }
    }
    if constexpr (kIsInt<T>) {
      switch (op) {
        case Opcode::kAnd: return f([](T a, T b) { return T(a & b); });
        case Opcode::kOr: return f([](T a, T b) { return T(a | b); });
        case Opcode::kXor: return f([](T a, T b) { return T(a ^ b); });
        case Opcode::kDivide: return f([](T a, T b) { return IntDivide<T>(a, b); });
        default: break;
      }
    } else if constexpr (!std::is_same_v<T, bool>) {
      if (op == Opcode::kDivide) return f([](T a, T b) { return a / b; });
    }
  }
  return absl::UnimplementedError("no typed reducer");
}

// A computation applied to scalars: either a recognised binary op of its two parameters (fast
// typed path) or the general interpreter.
struct ScalarComputation {
  const Computation* computation = nullptr;
  bool simple_binary = false;  // root = op(param0, param1), all scalars of one type
  Opcode op = Opcode::kAdd;
  static ScalarComputation Analyze(const Computation* c);
};

class Evaluator {
 public:
  explicit Evaluator(const EvaluatorOptions& options) : options_(options) {}

  // `donated`: when set, args[0] is this literal and the run may take its tuple elements over
  // (a while loop hands its state to the body, whose result replaces the state).
  // `given`: when set, given[p] (if not null) is args[p], a value the caller handed over that
  // the run may take (an in-place update writes into it).
  absl::StatusOr<Literal> Run(const Computation& computation, const Operands& args,
                              Literal* donated = nullptr,
                              const std::vector<Literal*>* given = nullptr);
  // Applies a called computation to scalar arguments (general path).
  absl::StatusOr<Literal> CallScalar(const Computation& computation, const Operands& args);

  const EvaluatorOptions& options() const { return options_; }
  uint64_t NextRandom();  // splitmix64 stream seeded from options.seed
  int64_t loop_iteration() const { return loop_iteration_; }

 private:
  struct Plan {
    std::unordered_map<const Instruction*, int> index;
    // Instruction index of the last user, -1 none. A get-tuple-element reads its element in
    // place, so a tuple's last use also covers the last uses of the get-tuple-elements that
    // read it (and of theirs).
    std::vector<int> last_use;
    // Values that in-place get-tuple-elements point into: never moved into a tuple.
    std::vector<char> pinned;
    // The values to release after each instruction (those whose last use it is).
    std::vector<std::vector<int>> releases;
    // The operand each instruction can update in place (InPlaceUpdatedOperand), or -1.
    std::vector<int> in_place_operand;
  };
  const Plan& GetPlan(const Computation& c);
  // Where operand k of `instr` sits in its computation's plan; -1 when it is not there.
  static int OperandSlot(const Plan& plan, const Instruction& instr, int k);
  // Whether instruction i may take over operand o's value from the donated loop state.
  static bool DonatedElementIsFree(const Plan& plan, const std::vector<Instruction*>& instrs,
                                   const Literal* donated, const Operands& args, int i, int o);
  // Where operand slot o's value lives when instruction i may take it over (its last reader,
  // and nothing else can see it change): owned[o], or an element of the donated loop state;
  // null otherwise.
  Literal* TakeableOperand(const Plan& plan, const std::vector<Instruction*>& instrs,
                           const Operands& args, Literal* donated,
                           const std::vector<Literal*>* given, int i, int o,
                           std::vector<Literal>& owned, const std::vector<const Literal*>& values);
  // Books operand slot o's value as taken over from `source` (no longer live in this run).
  void Taken(int o, const Literal* source, std::vector<Literal>& owned,
             std::vector<const Literal*>& values, std::vector<uint64_t>& bytes);
  // Moves operand slot o's value out of `source` and books it as taken.
  Literal TakeOver(int o, Literal* source, std::vector<Literal>& owned,
                   std::vector<const Literal*>& values, std::vector<uint64_t>& bytes);
  // Computes instruction i in the storage of the operand it updates in place
  // (EvaluatorOptions::compiled_in_place) when that operand's value may be taken over; sets its
  // value. std::nullopt: not in place, nothing changed.
  std::optional<absl::Status> RunInPlace(const Plan& plan, const std::vector<Instruction*>& instrs,
                                         const Operands& args, Literal* donated,
                                         const std::vector<Literal*>* given, int i,
                                         std::vector<Literal>& owned,
                                         std::vector<const Literal*>& values,
                                         std::vector<uint64_t>& bytes, Operands& ops);
  // After instruction i of a run: its on_instruction event, the release of the values it read
  // for the last time, and progress.
  void ReportAndRelease(const Plan& plan, const Instruction& instr, int i, bool is_top, int n,
                        std::chrono::steady_clock::time_point start, std::vector<Literal>& owned,
                        std::vector<const Literal*>& values, std::vector<uint64_t>& bytes);
  absl::StatusOr<Literal> Dispatch(const Instruction& instr, const Operands& ops);
  friend class ::hlowb::InstructionRunner;
  // Runs a while loop from `state`, its initial state (a copy of the operand, or the operand's
  // value itself when nothing reads it afterwards).
  absl::StatusOr<Literal> EvalWhile(const Instruction& instr, Literal state);
  // infeed, outfeed, send, recv and their -done forms, through options_.host_transfer.
  absl::StatusOr<Literal> EvalHostTransfer(const Instruction& instr, const Operands& ops);
  absl::StatusOr<Literal> EvalConditional(const Instruction& instr, const Operands& ops);

  const EvaluatorOptions& options_;
  std::unordered_map<const Computation*, Plan> plans_;
  uint64_t live_bytes_ = 0;
  uint64_t rng_counter_ = 0;
  int64_t loop_iteration_ = -1;
  int depth_ = 0;
};

// Op families. Each returns the result literal or a clear error naming the instruction.
absl::StatusOr<Literal> EvalUnary(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalBinary(const Instruction& instr, const Literal& a, const Literal& b);
absl::StatusOr<Literal> EvalCompare(const Instruction& instr, const Literal& a, const Literal& b);
absl::StatusOr<Literal> EvalSelect(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalClamp(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalConvert(const Literal& x, PrimitiveType to);
absl::StatusOr<Literal> EvalBitcastConvert(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalReducePrecision(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalStochasticConvert(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalIota(const Instruction& instr);
// A dynamic-update-slice written into `*operand` (the value of its first operand, taken over
// because nothing reads it afterwards), which becomes the result.
absl::Status EvalDynamicUpdateSliceInPlace(const Instruction& instr, const Operands& ops,
                                           Literal* operand);
absl::StatusOr<Literal> EvalMap(Evaluator& ev, const Instruction& instr, const Operands& ops);
// Applies a binary opcode elementwise to two same-typed literals (used by fast reducers too).
absl::StatusOr<Literal> ApplyBinaryOp(Opcode op, const Literal& a, const Literal& b,
                                      const Instruction* instr);

absl::StatusOr<Literal> EvalBroadcast(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalReshape(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalTranspose(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalSlice(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalConcatenate(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalPad(const Instruction& instr, const Literal& x, const Literal& pad);
absl::StatusOr<Literal> EvalReverse(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalDynamicSlice(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalDynamicUpdateSlice(const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalDynamicReshape(const Instruction& instr, const Operands& ops);
// Row-major reinterpretation into the instruction's shape (bitcast, reshape).
absl::StatusOr<Literal> Relabel(const Instruction& instr, const Literal& x);
// Generic transpose: result dim i = operand dim perm[i].
Literal TransposeLiteral(const Literal& x, const std::vector<int64_t>& perm);

absl::StatusOr<Literal> EvalReduce(Evaluator& ev, const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalReduceWindow(Evaluator& ev, const Instruction& instr,
                                         const Operands& ops);
absl::StatusOr<Literal> EvalSelectAndScatter(Evaluator& ev, const Instruction& instr,
                                             const Operands& ops);

absl::StatusOr<Literal> EvalDot(const Instruction& instr, const Literal& lhs, const Literal& rhs);
// dot with older XLA's structured N:M sparsity (`sparsity=`, metadata operands after lhs and
// rhs): each sparse operand is decompressed into its dense form (zeros where nothing is kept),
// then the plain dot. See core/ir/dot_sparsity.h for the storage.
absl::StatusOr<Literal> EvalSparseDot(const Instruction& instr, const Operands& ops);
// ragged-dot: groups of lhs's ragged dimension (sizes from `group_sizes`, rank 1) multiply
// rhs's group (ragged non-contracting dimension), contract separately (ragged contracting
// dimension: one result per group, stacked in front), or batch as usual.
absl::StatusOr<Literal> EvalRaggedDot(const Instruction& instr, const Literal& lhs,
                                      const Literal& rhs, const Literal& group_sizes);
// scaled-dot: each operand multiplied by its block scale (f32), then the dot.
absl::StatusOr<Literal> EvalScaledDot(const Instruction& instr, const Literal& lhs,
                                      const Literal& lhs_scale, const Literal& rhs,
                                      const Literal& rhs_scale);
absl::StatusOr<Literal> EvalConvolution(const Instruction& instr, const Literal& lhs,
                                        const Literal& rhs);
absl::StatusOr<Literal> EvalGather(const Instruction& instr, const Literal& operand,
                                   const Literal& indices);
absl::StatusOr<Literal> EvalScatter(Evaluator& ev, const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalSort(Evaluator& ev, const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalTopK(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalFft(const Instruction& instr, const Literal& x);
absl::StatusOr<Literal> EvalCholesky(const Instruction& instr, const Literal& a);
absl::StatusOr<Literal> EvalTriangularSolve(const Instruction& instr, const Literal& a,
                                            const Literal& b);
absl::StatusOr<Literal> EvalRng(Evaluator& ev, const Instruction& instr, const Operands& ops);
absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& instr, const Literal& state);
absl::StatusOr<Literal> EvalBatchNorm(const Instruction& instr, const Operands& ops);

}  // namespace hlowb::eval

#endif  // HLOWB_REPLAY_EVALUATOR_EVAL_INTERNAL_H_
