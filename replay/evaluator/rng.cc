// rng (uniform/normal, implementation-defined in XLA: here a seeded splitmix64 stream) and
// rng-bit-generator.
#include <cmath>
#include <numbers>

#include "replay/evaluator/eval_internal.h"

namespace hlowb::eval {

absl::StatusOr<Literal> EvalRng(Evaluator& ev, const Instruction& instr, const Operands& ops) {
  if (ops.size() != 2) return Invalid(instr, "rng takes two operands");
  const Shape& rs = instr.shape();
  PrimitiveType t = rs.element_type();
  auto a = EvalConvert(*ops[0], PrimitiveType::kF64);
  auto b = EvalConvert(*ops[1], PrimitiveType::kF64);
  if (!a.ok()) return a.status();
  if (!b.ok()) return b.status();
  double lo = a->data_as<double>()[0], hi = b->data_as<double>()[0];
  RandomDistribution dist = instr.attrs_or_default().distribution;
  Literal wide(Shape::Array(PrimitiveType::kF64, rs.dimensions()));
  double* o = wide.mutable_data_as<double>();
  for (int64_t i = 0; i < wide.element_count(); ++i) {
    double u = static_cast<double>(ev.NextRandom() >> 11) * 0x1.0p-53;  // [0, 1)
    if (dist == RandomDistribution::kNormal) {
      double u2 = (static_cast<double>(ev.NextRandom() >> 11) + 1) * 0x1.0p-53;
      o[i] = lo + hi * std::sqrt(-2 * std::log(u2)) * std::cos(2 * std::numbers::pi * u);
    } else if (IsIntegral(t)) {
      double span = std::floor(hi) - std::floor(lo);
      o[i] = span <= 0 ? lo : lo + std::floor(u * span);
    } else {
      o[i] = lo + u * (hi - lo);
      if (o[i] >= hi && hi > lo) o[i] = std::nextafter(hi, lo);
    }
  }
  if (dist == RandomDistribution::kInvalid) return Invalid(instr, "rng without distribution");
  return EvalConvert(wide, t);
}

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& instr, const Literal& state) {
  (void)state;
  return Unimplemented(instr, "rng-bit-generator");
}

}  // namespace hlowb::eval
