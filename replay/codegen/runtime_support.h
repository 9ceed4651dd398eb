// The C functions compiled kernels call by name (see runtime_support.cc).
#ifndef HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_
#define HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_

#include <cstdint>

extern "C" {
// `type` is a hlowb::PrimitiveType value; `bits` the element's storage bits.
double hlowb_narrow_to_f64(uint64_t bits, int32_t type);
uint64_t hlowb_f64_to_narrow(double value, int32_t type);
double hlowb_round_through(double value, int32_t type);
// A complex function of (ar, ai) — and of (br, bi) for divide and power — computed as the
// interpreter does; `op` is a hlowb::Opcode value. The result's real and imaginary parts go to
// out[0] and out[1]; nothing else is read or written.
void hlowb_complex64(int32_t op, float ar, float ai, float br, float bi, float* out);
void hlowb_complex128(int32_t op, double ar, double ai, double br, double bi, double* out);
}

#endif  // HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_
