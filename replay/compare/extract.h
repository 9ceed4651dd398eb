// Cuts a piece out of a module, as XLA's hlo-extractor does: a new module whose entry is rooted
// at one instruction, holding the operands up to `height` levels below it; values from deeper
// down, and the original computation's parameters, become parameters of the new entry.
// Computations the kept instructions call (fusions, reducers, loop bodies) are copied whole.
// A constant a kept instruction reads stays a constant even below the height (it costs nothing
// and keeps the piece faithful). Used by `hlowb extract` and by per-instruction isolation
// (height 0).
//
// Not here: reducing a module while preserving a failure (that is bisection), nor rewriting
// what the kept instructions compute.
#ifndef HLOWB_REPLAY_COMPARE_EXTRACT_H_
#define HLOWB_REPLAY_COMPARE_EXTRACT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlowb {

struct ExtractedModule {
  std::unique_ptr<Module> module;
  // For each entry parameter of the new module, in parameter order: the original instruction
  // whose value it stands for.
  std::vector<const Instruction*> parameter_sources;
};

// `height` < 0 keeps every transitive operand (parameters of the computation stay parameters).
// InvalidArgument when `root` has no parent computation in `module`.
absl::StatusOr<ExtractedModule> ExtractModule(const Module& module, const Instruction& root,
                                              int height);

// The instruction called `name` (with or without a leading '%'): the entry computation first,
// then the others in definition order. NotFound lists a few similar names.
absl::StatusOr<const Instruction*> FindInstructionByName(const Module& module,
                                                         const std::string& name);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_COMPARE_EXTRACT_H_
