// Agreement of a cpu platform result with the interpreter's: integers and pred bit for bit,
// floats within CpuToleranceFor(type) (the table in cpu_backend.h), complex values part by part
// within their component type's tolerance.
#ifndef HLOWB_TESTS_UNIT_CPU_AGREEMENT_H_
#define HLOWB_TESTS_UNIT_CPU_AGREEMENT_H_

#include <cmath>
#include <functional>
#include <string>

#include "core/ir/float_types.h"
#include "core/ir/literal.h"
#include "replay/backends/cpu/cpu_backend.h"

namespace hlowb::testing {

// Component `i` (an element, or for complex types a real or imaginary part) as a double.
inline double ElementAsDouble(const Literal& l, int64_t i) {
  PrimitiveType t = ComplexComponentType(l.shape().element_type());
  if (t == PrimitiveType::kF32) return l.data_as<float>()[i];
  if (t == PrimitiveType::kF64) return l.data_as<double>()[i];
  return FloatBitsToDouble(t, l.GetBits(i));
}

// Tolerance by element type (CpuToleranceFor's shape); other backends pass their own table.
using ToleranceFn = std::function<CpuTolerance(PrimitiveType)>;

// Empty when `got` agrees with `want`; else the first disagreement.
inline std::string Disagreement(const Literal& want, const Literal& got, const std::string& where,
                                const ToleranceFn& tolerance = CpuToleranceFor) {
  if (want.shape().IsTuple()) {
    if (!got.shape().IsTuple() || got.tuple_elements().size() != want.tuple_elements().size()) {
      return where + ": tuple arity differs";
    }
    for (size_t k = 0; k < want.tuple_elements().size(); ++k) {
      std::string d = Disagreement(want.tuple_elements()[k], got.tuple_elements()[k],
                                   where + "{" + std::to_string(k) + "}", tolerance);
      if (!d.empty()) return d;
    }
    return "";
  }
  if (!want.shape().IsArray()) return "";
  if (want.shape().element_type() != got.shape().element_type() ||
      want.element_count() != got.element_count()) {
    return where + ": shape differs";
  }
  const PrimitiveType t = want.shape().element_type();
  if (!IsFloatingPoint(t) && !IsComplex(t)) {
    if (want.data() != got.data()) {
      for (int64_t i = 0; i < want.component_count(); ++i) {
        if (want.GetBits(i) != got.GetBits(i)) {
          return where + ": element " + std::to_string(i) + " differs (" +
                 std::to_string(want.GetBits(i)) + " vs " + std::to_string(got.GetBits(i)) + ")";
        }
      }
      return where + ": bytes differ";
    }
    return "";
  }
  const CpuTolerance tol = tolerance(ComplexComponentType(t));
  for (int64_t i = 0; i < want.component_count(); ++i) {
    double a = ElementAsDouble(want, i), b = ElementAsDouble(got, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    if (a == b) continue;
    if (std::isfinite(a) && std::isfinite(b) &&
        std::fabs(a - b) <= tol.absolute + tol.relative * std::fabs(a)) {
      continue;
    }
    return where + (IsComplex(t) ? ": part " : ": element ") + std::to_string(i) + " is " +
           std::to_string(b) + ", the interpreter says " + std::to_string(a);
  }
  return "";
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_CPU_AGREEMENT_H_
