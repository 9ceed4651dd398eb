// The counter-based generators behind rng-bit-generator, shared by the interpreter and the
// cpu platform's library call so both give the same bits: three-fry 2x32 (20 rounds, two
// 32-bit words per 64-bit counter value) and philox 4x32 (10 rounds, four words per 128-bit
// counter value).
#ifndef HLOWB_REPLAY_EVALUATOR_PRNG_H_
#define HLOWB_REPLAY_EVALUATOR_PRNG_H_

#include <cstdint>

namespace hlowb::eval {

struct Words2 {
  uint32_t a, b;
};

inline uint32_t Rotl(uint32_t v, int r) { return (v << r) | (v >> (32 - r)); }

inline Words2 ThreeFry2x32(uint64_t counter, uint64_t key) {
  static constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const uint32_t k2 = 0x1BD11BDAu ^ k0 ^ k1;
  const uint32_t ks[3] = {k0, k1, k2};
  uint32_t x0 = static_cast<uint32_t>(counter) + k0;
  uint32_t x1 = static_cast<uint32_t>(counter >> 32) + k1;
  for (int group = 0; group < 5; ++group) {
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = Rotl(x1, kRot[(group % 2) * 4 + r]);
      x1 ^= x0;
    }
    // Key injection after every four rounds.
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

struct Words4 {
  uint32_t w[4];
};

inline Words4 Philox4x32(uint64_t low, uint64_t high, uint64_t key) {
  uint32_t x[4] = {static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32),
                   static_cast<uint32_t>(high), static_cast<uint32_t>(high >> 32)};
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{x[0]} * 0xD2511F53u;
    const uint64_t p1 = uint64_t{x[2]} * 0xCD9E8D57u;
    const uint32_t y0 = static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ k0;
    const uint32_t y1 = static_cast<uint32_t>(p1);
    const uint32_t y2 = static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ k1;
    const uint32_t y3 = static_cast<uint32_t>(p0);
    x[0] = y0, x[1] = y1, x[2] = y2, x[3] = y3;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return {{x[0], x[1], x[2], x[3]}};
}

}  // namespace hlowb::eval

#endif  // HLOWB_REPLAY_EVALUATOR_PRNG_H_
