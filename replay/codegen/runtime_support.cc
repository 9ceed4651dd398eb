// Functions compiled kernels call: exact conversions between f64 and the narrow float types,
// with the rounding and saturation rules of core/ir/float_types.h (the interpreter's), so a
// kernel computing in f64 and rounding after each instruction agrees with the interpreter bit
// for bit; and the complex functions kernels do not compute inline, with the interpreter's
// formulas on std::complex (replay/evaluator/elementwise.cc), so those agree bit for bit too.
// The JIT binds these names to these addresses (cpu_jit.cc).
#include <complex>
#include <cstdint>
#include <limits>

#include "core/ir/float_types.h"
#include "core/ir/opcode.h"
#include "replay/codegen/runtime_support.h"

namespace {

template <typename T>
std::complex<T> ComplexFunction(hlowb::Opcode op, std::complex<T> a, std::complex<T> b) {
  using C = std::complex<T>;
  using hlowb::Opcode;
  switch (op) {
    case Opcode::kDivide: return a / b;
    case Opcode::kPower: return std::pow(a, b);
    case Opcode::kSign: return a == C(0) ? a : a / std::abs(a);
    case Opcode::kExp: return std::exp(a);
    case Opcode::kExpm1: return std::exp(a) - C(1);
    case Opcode::kLog: return std::log(a);
    case Opcode::kLog1p: return std::log(a + C(1));
    case Opcode::kLogistic: return C(1) / (C(1) + std::exp(-a));
    case Opcode::kSqrt: return std::sqrt(a);
    case Opcode::kRsqrt: return C(1) / std::sqrt(a);
    case Opcode::kSin: return std::sin(a);
    case Opcode::kCos: return std::cos(a);
    case Opcode::kTan: return std::tan(a);
    case Opcode::kTanh: return std::tanh(a);
    case Opcode::kSinh: return std::sinh(a);
    case Opcode::kCosh: return std::cosh(a);
    case Opcode::kAsin: return std::asin(a);
    case Opcode::kAcos: return std::acos(a);
    case Opcode::kAtan: return std::atan(a);
    case Opcode::kAsinh: return std::asinh(a);
    case Opcode::kAcosh: return std::acosh(a);
    case Opcode::kAtanh: return std::atanh(a);
    default: {
      // The emitter only names the opcodes above; anything else is a NaN, never a guess.
      const T nan = std::numeric_limits<T>::quiet_NaN();
      return C(nan, nan);
    }
  }
}

}  // namespace

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

void hlowb_complex64(int32_t op, float ar, float ai, float br, float bi, float* out) {
  const std::complex<float> r = ComplexFunction<float>(
      static_cast<hlowb::Opcode>(op), std::complex<float>(ar, ai), std::complex<float>(br, bi));
  out[0] = r.real();
  out[1] = r.imag();
}

void hlowb_complex128(int32_t op, double ar, double ai, double br, double bi, double* out) {
  const std::complex<double> r = ComplexFunction<double>(
      static_cast<hlowb::Opcode>(op), std::complex<double>(ar, ai), std::complex<double>(br, bi));
  out[0] = r.real();
  out[1] = r.imag();
}

}  // extern "C"
