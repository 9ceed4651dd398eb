// Functions compiled kernels call: exact conversions between f64 and the narrow float types,
// with the rounding and saturation rules of core/ir/float_types.h (the interpreter's), so a
// kernel computing in f64 and rounding after each instruction agrees with the interpreter bit
// for bit. The JIT binds these names to these addresses (cpu_jit.cc).
#include <cstdint>

#include "core/ir/float_types.h"
#include "replay/codegen/runtime_support.h"

extern "C" {

double hlowb_narrow_to_f64(uint64_t bits, int32_t type) {
  return hlowb::FloatBitsToDouble(static_cast<hlowb::PrimitiveType>(type), bits);
}

uint64_t hlowb_f64_to_narrow(double value, int32_t type) {
  return hlowb::DoubleToFloatBits(static_cast<hlowb::PrimitiveType>(type), value);
}

double hlowb_round_through(double value, int32_t type) {
  const auto t = static_cast<hlowb::PrimitiveType>(type);
  return hlowb::FloatBitsToDouble(t, hlowb::DoubleToFloatBits(t, value));
}

}  // extern "C"
