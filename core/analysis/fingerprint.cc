#include "core/analysis/fingerprint.h"

#include <algorithm>
#include <vector>

#include "absl/hash/hash.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {

uint64_t HashString(std::string_view s) { return absl::Hash<absl::string_view>()(AsAbsl(s)); }

uint64_t HashCombine(uint64_t seed, uint64_t value) {
  // 64-bit mix (from splitmix64) applied to the combination; order-sensitive.
  uint64_t z = seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

namespace {

struct Hasher {
  absl::flat_hash_map<const Instruction*, uint64_t> instr;
  absl::flat_hash_map<const Computation*, uint64_t> comp;

  uint64_t OfComputation(const hlowb::Computation& c) {
    if (auto it = comp.find(&c); it != comp.end()) return it->second;
    comp[&c] = 0x5eed;  // guards against recursion in malformed modules
    std::vector<uint64_t> all;
    all.reserve(c.instructions().size());
    for (const hlowb::Instruction* i : c.instructions()) all.push_back(OfInstruction(*i));
    std::sort(all.begin(), all.end());
    uint64_t h = c.root() ? OfInstruction(*c.root()) : 0;
    for (uint64_t x : all) h = HashCombine(h, x);
    comp[&c] = h;
    return h;
  }

  uint64_t OfInstruction(const hlowb::Instruction& i) {
    if (auto it = instr.find(&i); it != instr.end()) return it->second;
    instr[&i] = 0xc1c1e;  // cycles (invalid input) terminate
    uint64_t h = HashString(InstructionSignature(i));
    for (const hlowb::Instruction* op : i.operands()) h = HashCombine(h, op ? OfInstruction(*op) : 1);
    for (const hlowb::Computation* c : i.called_computations()) {
      h = HashCombine(h, c ? OfComputation(*c) : 2);
    }
    instr[&i] = h;
    return h;
  }
};

}  // namespace

ModuleFingerprint FingerprintModule(const Module& module) {
  Hasher hasher;
  ModuleFingerprint fp;
  std::vector<uint64_t> comps;
  for (const auto& c : module.computations()) {
    comps.push_back(hasher.OfComputation(*c));
    fp.instruction_count += c->instruction_count();
  }
  fp.computation_count = static_cast<int64_t>(module.computations().size());
  std::sort(comps.begin(), comps.end());
  uint64_t h = module.entry() ? hasher.OfComputation(*module.entry()) : 0;
  for (uint64_t c : comps) h = HashCombine(h, c);
  fp.hash = h;
  return fp;
}

absl::flat_hash_map<const Instruction*, uint64_t> InstructionHashes(const Module& module) {
  Hasher hasher;
  for (const auto& c : module.computations()) hasher.OfComputation(*c);
  return std::move(hasher.instr);
}

}  // namespace hlowb
