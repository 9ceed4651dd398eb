// The C functions compiled kernels call by name (see runtime_support.cc).
#ifndef HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_
#define HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_

#include <cstdint>

extern "C" {
// `type` is a hlowb::PrimitiveType value; `bits` the element's storage bits.
double hlowb_narrow_to_f64(uint64_t bits, int32_t type);
uint64_t hlowb_f64_to_narrow(double value, int32_t type);
double hlowb_round_through(double value, int32_t type);
}

#endif  // HLOWB_REPLAY_CODEGEN_RUNTIME_SUPPORT_H_
