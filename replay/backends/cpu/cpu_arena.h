// The cpu platform's arena runtime: runs a module compiled by the cpu pipeline (copy insertion,
// scheduling) with every value at the place buffer assignment gave it (core/passes/
// buffer_assignment.h). One run allocates its temp allocation as one arena and the output
// allocations beside it; entry parameters are read where the caller's arguments are, constants
// where the module keeps them. Kernels read and write the arena directly. While loops,
// conditionals and calls run their computations over the buffers that buffer assignment made
// them share, so loop state is updated in place and nothing is copied between iterations.
//
// What compiled code does not take (library calls, and whatever the interpreter computes) sees
// its operands as literals over the arena (core/ir/literal_storage.h) and leaves its result in
// the arena too: either directly, when the result's storage was placed there, or copied.
//
// Parameters and constants whose buffers the program would write (an entry parameter aliased
// with an output, a constant that becomes loop state) get a private copy first: nothing the
// caller passed or the module holds is ever modified.
//
// The cuda platform runs its modules in the same runtime (ArenaPlanOptions::inputs_in_block,
// ArenaCode::allocate): there the block is memory both the host and the device reach (CUDA
// managed memory), every argument and constant is copied into it, and kernels launch on
// pointers into it.
//
// Collectives run as the evaluator runs them: through EvaluatorOptions::collectives in a
// multi-device run (one arena per device), and as on one device otherwise. Planning refuses what this runtime does not run (an
// unscheduled module, asynchronous pairs, a value without a slice or whose slice is not the size
// of its row-major array); the driver in replay/evaluator then runs the module instead, and the
// executable's summary says why.
#ifndef HLOWB_REPLAY_BACKENDS_CPU_CPU_ARENA_H_
#define HLOWB_REPLAY_BACKENDS_CPU_CPU_ARENA_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/passes/buffer_assignment.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb::cpu {

// The compiled code an arena run calls.
struct ArenaCode {
  // Runs `instr`'s kernel reading `operands` (one pointer per operand; null for a tuple-shaped
  // one) and writing `outputs` (one per array leaf of the result). std::nullopt: no kernel.
  std::function<std::optional<absl::Status>(const Instruction& instr,
                                            const std::vector<void*>& operands,
                                            const std::vector<void*>& outputs)>
      kernel;
  // Runs `instr`'s in-place kernel: `operands[k]` (k = InPlaceUpdatedOperand) is also the
  // output, and only the update is written. std::nullopt: no in-place kernel.
  std::function<std::optional<absl::Status>(const Instruction& instr,
                                            const std::vector<void*>& operands)>
      in_place_kernel;
  // Where the block (and a kernel's scratch copy of an operand) comes from; default the host's
  // heap. `allocate` returns `bytes` bytes aligned to 256 (null when there is no memory),
  // `release` gives them back. The host reads and writes the block (copies, control flow, the
  // interpreter's views), so it must be host-accessible, and kernels must have finished when
  // they return.
  std::function<void*(size_t bytes)> allocate;
  std::function<void(void* block, size_t bytes)> release;
  // Called once the block holds the run's inputs, before anything runs (a device moves it to
  // its memory here).
  std::function<absl::Status(void* block, size_t bytes)> prepared;
};

struct ArenaPlanOptions {
  // Every argument and constant gets a copy in the block, and the result is copied out of it:
  // nothing outside the block is read or written by kernels (a device's runtime).
  bool inputs_in_block = false;
};

struct ArenaStats {
  int64_t temp_bytes = 0;      // the arena
  int64_t output_bytes = 0;    // output allocations
  int64_t private_bytes = 0;   // private copies of parameters and constants the program writes
  int64_t total_bytes() const { return temp_bytes + output_bytes + private_bytes; }
};

class ArenaProgram {
 public:
  // Plans `module` (scheduled, after copy insertion). The error says why this runtime cannot
  // run it. The module must outlive the program.
  static absl::StatusOr<std::unique_ptr<ArenaProgram>> Plan(const Module& module,
                                                             const ArenaPlanOptions& options = {});
  ~ArenaProgram();

  const ArenaStats& stats() const;

  // Runs the entry computation. `options` as the evaluator's: cancel, progress, on_instruction,
  // the memory budget (the arena and outputs count against it), elided constants, custom calls
  // and host transfers for what the interpreter computes; `options.compiled` is asked for the
  // instructions `code` has no kernel for (library calls) before the interpreter. In a
  // multi-device run (options.collectives set) each device's thread runs its own arena, and
  // collectives meet through options.collectives as on the evaluator's driver.
  absl::StatusOr<Literal> Run(const std::vector<Literal>& arguments,
                              const EvaluatorOptions& options, const ArenaCode& code) const;

  struct Impl;  // the plan (cpu_arena.cc)

 private:
  ArenaProgram();
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::cpu

#endif  // HLOWB_REPLAY_BACKENDS_CPU_CPU_ARENA_H_
