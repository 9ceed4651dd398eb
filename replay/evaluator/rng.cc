// rng (uniform/normal, implementation-defined in XLA: here a seeded splitmix64 stream) and
// rng-bit-generator.
#include <cmath>
#include <numbers>

#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/prng.h"

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

namespace {

// rng-bit-generator, bit for bit as XLA expands it (the state's element 0 is the key; the
// counter follows):
//
//   algorithm   state     counter                         output state
//   three-fry   u64[2]    state[1]                        [key, state[1] + blocks]
//   philox      u64[3]    u128 (low state[1], high [2])   [key, counter + blocks]
//   philox      u64[2]    u128 (low state[1], high key)   [key, low word of counter + blocks]
//   default     = philox (the CPU and GPU compilers' choice).
//
// Three-fry (2x32, 20 rounds) produces two 32-bit words per 64-bit counter value; philox
// (4x32, 10 rounds) four words per 128-bit counter value. 32-bit outputs: three-fry splits the
// shape in halves along its first even dimension (else its largest) and interleaves the two
// words along it; philox interleaves its four words in row-major order. 64-bit outputs join
// word pairs (low word first). Narrower outputs keep the low bits of a 32-bit draw.

// Three-fry 32-bit draws for `dims` in row-major order; returns the number of counter values
// used.
int64_t ThreeFry32(uint64_t key, uint64_t counter, const std::vector<int64_t>& dims,
                   std::vector<uint32_t>* out) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  out->assign(static_cast<size_t>(n), 0);
  if (dims.empty()) {
    (*out)[0] = ThreeFry2x32(counter, key).a;
    return 1;
  }
  int split = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] % 2 == 0) {
      split = static_cast<int>(i);
      break;
    }
  }
  if (split < 0) {
    for (size_t i = 0; i < dims.size(); ++i) {
      if (split < 0 || dims[i] > dims[split]) split = static_cast<int>(i);
    }
  }
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < split; ++i) outer *= dims[i];
  for (size_t i = split + 1; i < dims.size(); ++i) inner *= dims[i];
  const int64_t d = dims[split], half = (d + 1) / 2;
  // Half-shape element (o, j, i) draws counter + its row-major index; word a goes to split
  // position 2j, word b to 2j+1 (dropped past the end when d is odd).
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < half; ++j) {
      for (int64_t i = 0; i < inner; ++i) {
        const uint64_t index = static_cast<uint64_t>((o * half + j) * inner + i);
        Words2 w = ThreeFry2x32(counter + index, key);
        (*out)[static_cast<size_t>((o * d + 2 * j) * inner + i)] = w.a;
        if (2 * j + 1 < d) (*out)[static_cast<size_t>((o * d + 2 * j + 1) * inner + i)] = w.b;
      }
    }
  }
  return outer * half * inner;
}

}  // namespace

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& instr, const Literal& state) {
  const Shape& rs = instr.shape();
  if (!rs.IsTuple() || rs.tuple_count() != 2 || !rs.tuple_shape(1).IsArray()) {
    return Invalid(instr, "rng-bit-generator must return (state, bits)");
  }
  const Shape& ss = state.shape();
  if (!ss.IsArray() || ss.element_type() != PrimitiveType::kU64 || ss.rank() != 1 ||
      ss.dimensions()[0] < 2) {
    return Invalid(instr, "rng-bit-generator state must be u64[2] or u64[3]");
  }
  const Shape& bits_shape = rs.tuple_shape(1);
  const PrimitiveType t = bits_shape.element_type();
  const int width = BitWidth(t);
  if (IsComplex(t) || t == PrimitiveType::kPred || width > 64 || width <= 0) {
    return Unimplemented(instr, StrCat("rng-bit-generator producing ",
                                       PrimitiveTypeName(t)));
  }
  RandomAlgorithm algorithm = instr.attrs_or_default().rng_algorithm;
  if (algorithm == RandomAlgorithm::kDefault) algorithm = RandomAlgorithm::kPhilox;
  const int64_t state_size = ss.dimensions()[0];
  if (algorithm == RandomAlgorithm::kThreeFry && state_size != 2) {
    return Invalid(instr, "three-fry rng-bit-generator state must be u64[2]");
  }
  if (algorithm == RandomAlgorithm::kPhilox && state_size > 3) {
    return Invalid(instr, "philox rng-bit-generator state must be u64[2] or u64[3]");
  }
  const uint64_t* st = state.data_as<uint64_t>();
  const uint64_t key = st[0];
  const std::vector<int64_t>& dims = bits_shape.dimensions();
  int64_t n = 1;
  for (int64_t d : dims) n *= d;

  Literal out(rs);
  Literal& new_state = (*out.mutable_tuple_elements())[0];
  Literal& bits = (*out.mutable_tuple_elements())[1];
  uint64_t* ns = new_state.mutable_data_as<uint64_t>();
  for (int64_t i = 0; i < state_size; ++i) ns[i] = st[i];

  if (algorithm == RandomAlgorithm::kThreeFry) {
    const uint64_t counter = st[1];
    if (width <= 32) {
      std::vector<uint32_t> draws;
      int64_t used = ThreeFry32(key, counter, dims, &draws);
      for (int64_t i = 0; i < n; ++i) bits.SetBits(i, draws[static_cast<size_t>(i)]);
      ns[1] = counter + static_cast<uint64_t>(used);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        Words2 w = ThreeFry2x32(counter + static_cast<uint64_t>(i), key);
        bits.SetBits(i, uint64_t{w.a} | (uint64_t{w.b} << 32));
      }
      ns[1] = counter + static_cast<uint64_t>(n);
    }
  } else {
    const uint64_t low = st[1];
    const uint64_t high = state_size >= 3 ? st[2] : key;
    // 32-bit words needed, in blocks of four per counter value.
    const int64_t words = width <= 32 ? n : 2 * n;
    const int64_t blocks = (words + 3) / 4;
    for (int64_t b = 0; b < blocks; ++b) {
      uint64_t lo = low + static_cast<uint64_t>(b);
      uint64_t hi = high + (lo < low ? 1 : 0);
      Words4 w = Philox4x32(lo, hi, key);
      if (width <= 32) {
        for (int k = 0; k < 4 && b * 4 + k < n; ++k) bits.SetBits(b * 4 + k, w.w[k]);
      } else {
        for (int k = 0; k < 2 && b * 2 + k < n; ++k) {
          bits.SetBits(b * 2 + k, uint64_t{w.w[2 * k]} | (uint64_t{w.w[2 * k + 1]} << 32));
        }
      }
    }
    const uint64_t new_low = low + static_cast<uint64_t>(blocks);
    ns[1] = new_low;
    if (state_size >= 3) ns[2] = high + (new_low < low ? 1 : 0);
  }
  return out;
}

}  // namespace hlowb::eval
