// "rng-bit-generator-expander": rewrites rng-bit-generator (three-fry or philox; the default
// algorithm means philox, the CPU and GPU compilers' choice) into integer arithmetic HLO:
// iota counters added to the state's counter, the generator's rounds unrolled on u32 words,
// the words laid out in the result's shape and the state's counter advanced. The bits and the
// new state are exactly those of the reference interpreter's rng-bit-generator:
//
//   algorithm   state     counter                       new state
//   three-fry   u64[2]    state[1]                      [key, state[1] + counters used]
//   philox      u64[3]    u128 (low state[1], high [2]) [key, counter + blocks used]
//   philox      u64[2]    u128 (low state[1], high key) [key, low word + blocks used]
//
// Three-fry gives two 32-bit words per counter value; for 32-bit and narrower results the
// shape is split in halves along its first even dimension (else its largest) and the two
// words interleave along it. Philox gives four words per counter value in row-major order.
// 64-bit results join word pairs, low word first; narrower results keep a word's low bits.
//
// Deliberately not here: pred, complex and sub-byte results, dynamic shapes and empty results
// (left unchanged); the expansion is emitted inline, not as a called computation.
#ifndef HLOWB_CORE_PASSES_RNG_BIT_GENERATOR_EXPANDER_H_
#define HLOWB_CORE_PASSES_RNG_BIT_GENERATOR_EXPANDER_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class RngBitGeneratorExpander : public HloPass {
 public:
  // keep_philox: leave philox (and default-algorithm) generators alone, for a platform that
  // computes them with a library call (the cpu platform: the counter blocks in parallel,
  // instead of the rounds unrolled into integer HLO and recomputed for each word).
  explicit RngBitGeneratorExpander(bool keep_philox = false) : keep_philox_(keep_philox) {}
  std::string_view name() const override { return "rng-bit-generator-expander"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

 private:
  bool keep_philox_ = false;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_RNG_BIT_GENERATOR_EXPANDER_H_
