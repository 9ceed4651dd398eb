// Structural fingerprints of modules and computations: hashes over what the code computes
// (opcodes, shapes, layouts, attributes, constants, the operand graph, called computations),
// blind to names, ids and metadata. Two states of a module with equal fingerprints are the
// same program; the pass timeline uses this to tell which passes changed the module.
#ifndef HLOWB_CORE_ANALYSIS_FINGERPRINT_H_
#define HLOWB_CORE_ANALYSIS_FINGERPRINT_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "core/ir/module.h"

namespace hlowb {

struct ModuleFingerprint {
  uint64_t hash = 0;
  int64_t instruction_count = 0;
  int64_t computation_count = 0;
};

ModuleFingerprint FingerprintModule(const Module& module);

// Per-instruction hashes (Merkle style: an instruction's hash covers its operands' hashes
// and its called computations' hashes). Computations must be in definition order.
absl::flat_hash_map<const Instruction*, uint64_t> InstructionHashes(const Module& module);

uint64_t HashString(std::string_view s);
uint64_t HashCombine(uint64_t seed, uint64_t value);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_FINGERPRINT_H_
