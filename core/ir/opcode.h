// The HLO opcode set: one row per opcode with its text name, operand count and category.
// The table is the single place that knows opcode spellings; the parser, printer and
// verifier all consult it. Semantics (shape rules) live in core/analysis.
#ifndef HLOWB_CORE_IR_OPCODE_H_
#define HLOWB_CORE_IR_OPCODE_H_

#include <cstdint>
#include <optional>
#include <string_view>

namespace hlowb {

// X(enum, "text", arity, category). arity -1 = variadic.
#define HLOWB_OPCODE_LIST(X)                                              \
  X(kAbs, "abs", 1, kUnaryAccuracy)                                       \
  X(kAcos, "acos", 1, kUnaryAccuracy)                                     \
  X(kAcosh, "acosh", 1, kUnaryAccuracy)                                   \
  X(kAdd, "add", 2, kBinary)                                              \
  X(kAddDependency, "add-dependency", 2, kOther)                          \
  X(kAfterAll, "after-all", -1, kOther)                                   \
  X(kAllGather, "all-gather", -1, kCollective)                            \
  X(kAllGatherDone, "all-gather-done", 1, kCollective)                    \
  X(kAllGatherStart, "all-gather-start", -1, kCollective)                 \
  X(kAllReduce, "all-reduce", -1, kCollective)                            \
  X(kAllReduceDone, "all-reduce-done", 1, kCollective)                    \
  X(kAllReduceStart, "all-reduce-start", -1, kCollective)                 \
  X(kAllToAll, "all-to-all", -1, kCollective)                             \
  X(kAnd, "and", 2, kBinary)                                              \
  X(kAsin, "asin", 1, kUnaryAccuracy)                                     \
  X(kAsinh, "asinh", 1, kUnaryAccuracy)                                   \
  X(kAsyncDone, "async-done", 1, kAsync)                                  \
  X(kAsyncStart, "async-start", -1, kAsync)                               \
  X(kAsyncUpdate, "async-update", -1, kAsync)                             \
  X(kAtan, "atan", 1, kUnaryAccuracy)                                     \
  X(kAtan2, "atan2", 2, kBinary)                                          \
  X(kAtanh, "atanh", 1, kUnaryAccuracy)                                   \
  X(kBatchNormGrad, "batch-norm-grad", 5, kOther)                         \
  X(kBatchNormInference, "batch-norm-inference", 5, kOther)               \
  X(kBatchNormTraining, "batch-norm-training", 3, kOther)                 \
  X(kBitcast, "bitcast", 1, kOther)                                       \
  X(kBitcastConvert, "bitcast-convert", 1, kOther)                        \
  X(kBroadcast, "broadcast", 1, kOther)                                   \
  X(kCall, "call", -1, kOther)                                            \
  X(kCbrt, "cbrt", 1, kUnaryAccuracy)                                     \
  X(kCeil, "ceil", 1, kUnary)                                             \
  X(kCholesky, "cholesky", 1, kOther)                                     \
  X(kClamp, "clamp", 3, kTernary)                                         \
  X(kClz, "count-leading-zeros", 1, kUnary)                               \
  X(kCollectiveBroadcast, "collective-broadcast", -1, kCollective)        \
  X(kCollectivePermute, "collective-permute", -1, kCollective)            \
  X(kCollectivePermuteDone, "collective-permute-done", 1, kCollective)    \
  X(kCollectivePermuteStart, "collective-permute-start", -1, kCollective) \
  X(kCollectiveReduce, "collective-reduce", -1, kCollective)              \
  X(kCompare, "compare", 2, kOther)                                       \
  X(kComplex, "complex", 2, kBinary)                                      \
  X(kConcatenate, "concatenate", -1, kOther)                              \
  X(kConditional, "conditional", -1, kOther)                              \
  X(kConstant, "constant", 0, kOther)                                     \
  X(kConvert, "convert", 1, kOther)                                       \
  X(kConvolution, "convolution", -1, kOther)                              \
  X(kCopy, "copy", 1, kUnary)                                             \
  X(kCopyDone, "copy-done", 1, kOther)                                    \
  X(kCopyStart, "copy-start", 1, kOther)                                  \
  X(kCos, "cosine", 1, kUnaryAccuracy)                                    \
  X(kCosh, "cosh", 1, kUnaryAccuracy)                                     \
  X(kCustomCall, "custom-call", -1, kOther)                               \
  X(kDivide, "divide", 2, kBinary)                                        \
  X(kDomain, "domain", 1, kOther)                                         \
  X(kDot, "dot", -1, kOther)                                              \
  X(kDynamicReshape, "dynamic-reshape", -1, kOther)                       \
  X(kDynamicSlice, "dynamic-slice", -1, kOther)                           \
  X(kDynamicUpdateSlice, "dynamic-update-slice", -1, kOther)              \
  X(kErf, "erf", 1, kUnaryAccuracy)                                       \
  X(kExp, "exponential", 1, kUnaryAccuracy)                               \
  X(kExpm1, "exponential-minus-one", 1, kUnaryAccuracy)                   \
  X(kFft, "fft", 1, kOther)                                               \
  X(kFloor, "floor", 1, kUnary)                                           \
  X(kFusion, "fusion", -1, kOther)                                        \
  X(kGather, "gather", 2, kOther)                                         \
  X(kGetDimensionSize, "get-dimension-size", 1, kOther)                   \
  X(kGetTupleElement, "get-tuple-element", 1, kOther)                     \
  X(kImag, "imag", 1, kUnary)                                             \
  X(kInfeed, "infeed", 1, kOther)                                         \
  X(kIota, "iota", 0, kOther)                                             \
  X(kIsFinite, "is-finite", 1, kUnary)                                    \
  X(kLog, "log", 1, kUnaryAccuracy)                                       \
  X(kLog1p, "log-plus-one", 1, kUnaryAccuracy)                            \
  X(kLogistic, "logistic", 1, kUnaryAccuracy)                             \
  X(kMap, "map", -1, kOther)                                              \
  X(kMaximum, "maximum", 2, kBinary)                                      \
  X(kMinimum, "minimum", 2, kBinary)                                      \
  X(kMulhi, "mulhi", 2, kBinary)                                          \
  X(kMultiply, "multiply", 2, kBinary)                                    \
  X(kNegate, "negate", 1, kUnary)                                         \
  X(kNot, "not", 1, kUnary)                                               \
  X(kOptimizationBarrier, "opt-barrier", 1, kOther)                       \
  X(kOr, "or", 2, kBinary)                                                \
  X(kOutfeed, "outfeed", 2, kOther)                                       \
  X(kPad, "pad", 2, kOther)                                               \
  X(kParameter, "parameter", 0, kOther)                                   \
  X(kPartitionId, "partition-id", 0, kOther)                              \
  X(kPopulationCount, "popcnt", 1, kUnary)                                \
  X(kPower, "power", 2, kBinary)                                          \
  X(kRaggedAllToAll, "ragged-all-to-all", 6, kCollective)                 \
  X(kRaggedDot, "ragged-dot", 3, kOther)                                  \
  X(kReal, "real", 1, kUnary)                                             \
  X(kRecv, "recv", 1, kOther)                                             \
  X(kRecvDone, "recv-done", 1, kOther)                                    \
  X(kReduce, "reduce", -1, kOther)                                        \
  X(kReducePrecision, "reduce-precision", 1, kOther)                      \
  X(kReduceScatter, "reduce-scatter", -1, kCollective)                    \
  X(kReduceWindow, "reduce-window", -1, kOther)                           \
  X(kRemainder, "remainder", 2, kBinary)                                  \
  X(kReplicaId, "replica-id", 0, kOther)                                  \
  X(kReshape, "reshape", 1, kOther)                                       \
  X(kReverse, "reverse", 1, kOther)                                       \
  X(kRng, "rng", -1, kOther)                                              \
  X(kRngBitGenerator, "rng-bit-generator", 1, kOther)                     \
  X(kRngGetAndUpdateState, "rng-get-and-update-state", 0, kOther)         \
  X(kRoundNearestAfz, "round-nearest-afz", 1, kUnary)                     \
  X(kRoundNearestEven, "round-nearest-even", 1, kUnary)                   \
  X(kRsqrt, "rsqrt", 1, kUnaryAccuracy)                                   \
  X(kScaledDot, "scaled-dot", 4, kOther)                                  \
  X(kScan, "scan", -1, kOther)                                            \
  X(kScatter, "scatter", -1, kOther)                                      \
  X(kSelect, "select", 3, kTernary)                                       \
  X(kSelectAndScatter, "select-and-scatter", 3, kOther)                   \
  X(kSend, "send", 2, kOther)                                             \
  X(kSendDone, "send-done", 1, kOther)                                    \
  X(kSetDimensionSize, "set-dimension-size", 2, kOther)                   \
  X(kShiftLeft, "shift-left", 2, kBinary)                                 \
  X(kShiftRightArithmetic, "shift-right-arithmetic", 2, kBinary)          \
  X(kShiftRightLogical, "shift-right-logical", 2, kBinary)                \
  X(kShuffle, "shuffle", 1, kOther)                                       \
  X(kSign, "sign", 1, kUnary)                                             \
  X(kSin, "sine", 1, kUnaryAccuracy)                                      \
  X(kSinh, "sinh", 1, kUnaryAccuracy)                                     \
  X(kSlice, "slice", 1, kOther)                                           \
  X(kSort, "sort", -1, kOther)                                            \
  X(kSqrt, "sqrt", 1, kUnaryAccuracy)                                     \
  X(kStochasticConvert, "stochastic-convert", 2, kOther)                  \
  X(kSubtract, "subtract", 2, kBinary)                                    \
  X(kTan, "tan", 1, kUnaryAccuracy)                                       \
  X(kTanh, "tanh", 1, kUnaryAccuracy)                                     \
  X(kTopK, "topk", 1, kOther)                                             \
  X(kTranspose, "transpose", 1, kOther)                                   \
  X(kTriangularSolve, "triangular-solve", 2, kOther)                      \
  X(kTuple, "tuple", -1, kOther)                                          \
  X(kWhile, "while", 1, kOther)                                           \
  X(kXor, "xor", 2, kBinary)

enum class Opcode : uint16_t {
#define HLOWB_OPCODE_ENUM(e, name, arity, cat) e,
  HLOWB_OPCODE_LIST(HLOWB_OPCODE_ENUM)
#undef HLOWB_OPCODE_ENUM
};

enum class OpcodeCategory : uint8_t {
  kUnary,          // elementwise, one operand
  kUnaryAccuracy,  // elementwise transcendental, accepts result_accuracy=
  kBinary,         // elementwise, two operands
  kTernary,        // select, clamp
  kCollective,
  kAsync,
  kOther,
};

constexpr int kOpcodeCount = 0
#define HLOWB_OPCODE_COUNT(e, name, arity, cat) +1
    HLOWB_OPCODE_LIST(HLOWB_OPCODE_COUNT)
#undef HLOWB_OPCODE_COUNT
    ;

std::string_view OpcodeName(Opcode op);
std::optional<Opcode> ParseOpcode(std::string_view name);
// Operand count, or -1 when variadic.
int OpcodeArity(Opcode op);
OpcodeCategory OpcodeCategoryOf(Opcode op);
bool IsElementwise(Opcode op);
// Opcodes whose result shape may be omitted in text (XLA infers it).
bool OpcodeShapeIsInferable(Opcode op);
// The -start/-done pair opcodes native to XLA (all-reduce-start, copy-start, ...).
bool IsAsyncCollectiveStart(Opcode op);
bool IsAsyncCollectiveDone(Opcode op);
// Whether `<op>-start` / `-update` / `-done` text is asynchronous syntax sugar for `op`: no
// opcode of those names exists, and `op` is not a parameter, a constant or an async opcode.
bool CanBeAsyncSugar(Opcode op);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_OPCODE_H_
