// "hlo-memory-scheduler": orders the instructions of every computation so that few bytes are
// live at once. A module's instruction order is its schedule; after this pass the module is
// marked scheduled (`is_scheduled=true`) and buffer assignment (buffer_assignment.h) may run.
//
// For each computation three orders are compared by their peak of live bytes (see
// ScheduleMemoryModel below) and the lowest kept, the original order winning ties:
//   - the original order;
//   - a list schedule: repeatedly the ready instruction with the largest
//     (bytes its scheduling frees) - (bytes it defines);
//   - a depth-first post-order from the root (operands before users).
// Every order honours operands, control predecessors, and the original relative order of
// instructions with side effects (so rng, infeed, outfeed and collectives keep their order).
//
// Deliberately not done: latency hiding, async overlap, cross-computation (whole-module) heap
// simulation, or rematerialisation. Fused computations are left alone (they are not
// scheduled by XLA either).
#ifndef HLOWB_CORE_PASSES_HLO_MEMORY_SCHEDULER_H_
#define HLOWB_CORE_PASSES_HLO_MEMORY_SCHEDULER_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/passes/hlo_pass.h"

namespace hlowb {

// How a computation is called, which decides whether it is scheduled and allocated.
enum class CallContext {
  kSequential,   // the entry, while condition/body, conditional branches, call, async bodies
  kEmbedded,     // applied per element (reduce, map, sort, scatter, all-reduce, ...)
  kFused,        // inside a fusion: neither scheduled nor allocated
  kUnreachable,  // nothing reachable from the entry calls it
};

// The context of every computation of `module` (the entry is sequential). A computation
// reached in several contexts takes the first of sequential, embedded, fused.
absl::flat_hash_map<const Computation*, CallContext> ComputeCallContexts(const Module& module);

// The memory model the scheduler minimises. Each instruction defines the bytes of its result
// (tuples: 8 bytes per element for the index table, plus the leaves it creates itself);
// get-tuple-element, bitcast, while, add-dependency, domain and opt-barrier define nothing
// (they alias their operand). A result is live from its instruction until the last user of it
// (or of anything aliasing it) has run; parameters are live from the start and the root to
// the end. The peak is the largest sum of live bytes at any point of `order`.
int64_t SchedulePeakBytes(const Computation& computation,
                          const std::vector<Instruction*>& order);
// The peak of the computation's current order.
int64_t ComputationPeakBytes(const Computation& computation);

class HloMemoryScheduler : public HloPass {
 public:
  std::string_view name() const override { return "hlo-memory-scheduler"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_MEMORY_SCHEDULER_H_
