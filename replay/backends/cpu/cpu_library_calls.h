// The cpu platform's library calls: dot and convolution on f32, bf16 and f16 computed with
// OpenBLAS's sgemm in f32, straight from the operands' row-major buffers. A dot becomes one GEMM
// per batch element with the operands passed transposed where their layout allows it; a
// convolution is brought to batch-spatial-feature order, unrolled into a matrix of windows
// (im2col) and multiplied with the kernel as one GEMM per feature group, except depthwise
// convolutions (one input feature per group), which are a direct loop vectorised along the
// features.
//
// Narrow floats are widened exactly to f32, and the f32 result is rounded once to the result
// type (round to nearest even). The interpreter accumulates narrow types in f64, so the two agree
// within the cpu platform's per-type tolerance (cpu_backend.h), not bit for bit.
//
// What these calls do not take (integer and complex types, f64, mixed operand types other than a
// narrow float widened to an f32 result, sparse, ragged or scaled dots, batch-grouped
// convolutions, empty shapes) they decline with std::nullopt, and the interpreter computes the
// instruction.
#ifndef HLOWB_REPLAY_BACKENDS_CPU_CPU_LIBRARY_CALLS_H_
#define HLOWB_REPLAY_BACKENDS_CPU_CPU_LIBRARY_CALLS_H_

#include <cstdint>
#include <functional>
#include <optional>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"

namespace hlowb::cpu {

// Runs body(begin, end) over disjoint parts of [0, n) that cover it, possibly in parallel; parts
// are at least `grain` long where n allows.
using ParallelFor =
    std::function<void(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>&)>;

// Whether LibraryDot, LibraryConvolution, LibraryGather, LibraryRngBitGenerator or LibraryFft
// (cpu_fft.h) computes
// `instr` (given operands of its operands' shapes).
bool LibraryTakes(const Instruction& instr);

// The dot `instr` of `lhs` and `rhs`, or std::nullopt when this path does not take it.
std::optional<absl::StatusOr<Literal>> LibraryDot(const Instruction& instr, const Literal& lhs,
                                                  const Literal& rhs,
                                                  const ParallelFor& parallel_for);

// The convolution `instr` of `lhs` (input) and `rhs` (kernel), or std::nullopt.
std::optional<absl::StatusOr<Literal>> LibraryConvolution(const Instruction& instr,
                                                          const Literal& lhs, const Literal& rhs,
                                                          const ParallelFor& parallel_for);

// The gather `instr` of `operand` at `indices`, as row copies, when the output's last dimension
// is an offset dimension over the operand's last dimension (embedding lookups and most other
// gathers); std::nullopt otherwise. Any element type.
std::optional<absl::StatusOr<Literal>> LibraryGather(const Instruction& instr,
                                                     const Literal& operand, const Literal& indices,
                                                     const ParallelFor& parallel_for);

// A philox (or default-algorithm) rng-bit-generator with 8- to 64-bit results: the
// interpreter's counter-based philox 4x32 (replay/evaluator/prng.h), bit for bit, with the
// counter blocks split across the pool; std::nullopt for three-fry and other result types.
std::optional<absl::StatusOr<Literal>> LibraryRngBitGenerator(const Instruction& instr,
                                                              const Literal& state,
                                                              const ParallelFor& parallel_for);

}  // namespace hlowb::cpu

#endif  // HLOWB_REPLAY_BACKENDS_CPU_CPU_LIBRARY_CALLS_H_
