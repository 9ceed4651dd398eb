// "rng-expander": rewrites rng (uniform and normal distributions) into random bits plus
// arithmetic. Each rng takes a fresh generator state from rng-get-and-update-state (advanced by
// the number of philox blocks it consumes), draws bits with a philox rng-bit-generator (which
// rng-bit-generator-expander then lowers), and maps them:
//   * float uniform [a, b): the top 24 (f64: 53) bits scaled to [0, 1), then a + (b - a) * u
//     in f32 (f64 for f64), converted to the result type; a value that rounds up to b becomes
//     a, so results stay in [a, b);
//   * float normal (mean a, standard deviation b): Box-Muller on two draws per element,
//     a + b * sqrt(-2 log u1) * cos(2 pi u2) with u1 in (0, 1], u2 in [0, 1);
//   * integer uniform [a, b): bits modulo (b - a), added to a in unsigned arithmetic; a when
//     b <= a.
// The values differ from the reference interpreter's own rng (both are implementation
// defined); only their range and distribution agree.
//
// Deliberately not here: rng on pred, complex or sub-byte types, dynamic or empty shapes, rng
// with control dependencies, and normal distributions on integers (all left unchanged).
#ifndef HLOWB_CORE_PASSES_RNG_EXPANDER_H_
#define HLOWB_CORE_PASSES_RNG_EXPANDER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class RngExpander : public HloPass {
 public:
  std::string_view name() const override { return "rng-expander"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_RNG_EXPANDER_H_
