// The cpu platform's fft library call: FFT, IFFT, RFFT and IRFFT over the innermost 1 to 3
// dimensions, with the interpreter's semantics (replay/evaluator/fft.cc): IFFT and IRFFT divide
// by the length after each dimension's transform, RFFT keeps the n/2+1 non-negative frequencies
// of the last dimension, IRFFT reads n/2+1 entries of the last dimension as one half of a
// conjugate-symmetric spectrum (the imaginary parts of the zero-frequency bin and, for even n,
// of the n/2 bin do not reach the real output) and writes n reals. Dimensions in front of the
// transformed ones are batch dimensions.
//
// The 1-D transforms are Eigen's FFT module (kissfft: mixed radix 2, 3, 4, 5 and a generic
// radix for other prime factors). Lengths whose largest prime factor would make kissfft's
// generic radix quadratic (97, 4099, 2 x 1009, ...) go through Bluestein's chirp-z transform,
// a convolution done with power-of-two FFTs, so every length costs O(n log n). The 1-D
// transforms of one dimension are independent and are split across the caller's threads.
//
// Every transform is computed in double, c64 included, and rounded once to the result type,
// as the interpreter does. kissfft in float is not accurate enough for the cpu platform's f32
// tolerance (1e-5 relative plus 1e-5 absolute per component, cpu_backend.h): on uniform
// [-1, 1) data its error against the double transform was 2.2 times the tolerance at length
// 16384 and 6.2 times at 65536, and with values of magnitude 1000 already 7 times at 1024 and
// 1900 times at the prime 4099. In double kissfft costs about as much as in float (it is scalar
// code), and the results stay within one f32 rounding of the interpreter's.
//
// Declined (std::nullopt, the interpreter computes the instruction): element types other than
// c64/f32 and c128/f64 with their matching result type, elided operands, fft_length naming
// fewer than 1 or more than 3 dimensions or more than the operand has, shapes that do not
// follow from fft_length (as shape inference requires), and transform lengths above 2^29.
#ifndef HLOWB_REPLAY_BACKENDS_CPU_CPU_FFT_H_
#define HLOWB_REPLAY_BACKENDS_CPU_CPU_FFT_H_

#include <optional>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "replay/backends/cpu/cpu_library_calls.h"

namespace hlowb::cpu {

// Whether LibraryFft computes `instr` (given an operand of its operand's shape).
bool LibraryFftTakes(const Instruction& instr);

// The fft `instr` of `operand`, or std::nullopt when this path does not take it.
std::optional<absl::StatusOr<Literal>> LibraryFft(const Instruction& instr, const Literal& operand,
                                                  const ParallelFor& parallel_for);

}  // namespace hlowb::cpu

#endif  // HLOWB_REPLAY_BACKENDS_CPU_CPU_FFT_H_
