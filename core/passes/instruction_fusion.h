// Producer-consumer instruction fusion and the building blocks the other fusion passes share.
//
// InstructionFusion is the first fusion pass of the cpu and gpu pipelines: it folds cheap
// producers (elementwise ops, broadcasts, reshapes, slices, scalar constants, ...) into their
// consumers so that each fusion becomes one kernel. Constructed with a target:
//   "cpu" -> XLA CPU's "fusion" pass: walks consumers from the root up and fuses each fusible
//            operand into it (every fusion is kLoop, except a matrix-vector dot whose only user
//            is an add, which becomes a kOutput fusion rooted at the add). Reductions over any
//            dimensions take their elementwise producers in.
//   "gpu" -> XLA GPU's "priority-fusion" pass: every fusible producer is queued with a priority,
//            the kernel time fusing it into all of its users would save under a roofline model
//            of the device (RooflineModel in core/analysis/cost_model.h: launch overhead,
//            arithmetic, transcendentals and memory traffic, with the producer's work repeated
//            per element a user asks for). The best fusion happens first, the producers around
//            it are re-priced, and fusion stops when the best priority is negative. A producer
//            is fused into all of its users or into none. Fusions rooted at a reduce are
//            kInput; a dot feeding one elementwise user becomes a kOutput fusion.
// Both never duplicate an expensive producer (transcendentals, divides, reductions, dots, ...)
// into several consumers, and never fuse side-effecting ops, parameters, tuples,
// get-tuple-element, control flow, custom calls, collectives, sort, rng, constants larger than
// a scalar, or dots/convolutions other than as the root of an output fusion.
//
// Deliberately not here: XLA's fusion heuristics tied to real hardware (register pressure,
// occupancy, code-size limits of the emitters, coalescing); the cost model used is
// core/analysis/cost_model.h (flops, transcendentals, bytes, and its GPU roofline).
#ifndef HLOWB_CORE_PASSES_INSTRUCTION_FUSION_H_
#define HLOWB_CORE_PASSES_INSTRUCTION_FUSION_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/hlo_pass.h"

namespace hlowb {

class InstructionFusion : public HloPass {
 public:
  // `target` is "cpu" or "gpu" (anything else behaves as "cpu").
  explicit InstructionFusion(std::string target = "cpu") : target_(std::move(target)) {}
  std::string_view name() const override {
    return target_ == "gpu" ? "priority-fusion" : "fusion";
  }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

 private:
  std::string target_;
};

// Kernels a module launches: fusions plus unfused instructions that do work, counted in the
// entry and in the computations control flow calls (while bodies and conditions, conditional
// branches, call and async targets). Parameters, constants, tuples, get-tuple-element, bitcasts
// and the control-flow and ordering instructions themselves (while, conditional, call,
// after-all, add-dependency, opt-barrier, domain) are not kernels.
int64_t CountKernels(const Module& module);

// ----- Shared by the fusion passes -----
namespace fusion {

// One instruction (plain or a fusion) that CombineIntoFusion folds into a new fusion.
struct Piece {
  Instruction* instr = nullptr;
  // Its values stay visible outside: users are rewired to the new fusion (through
  // get-tuple-element when the new fusion has several outputs).
  bool keep_outputs = true;
  // It stays in the computation (a duplicated producer that has other users): its copy inside
  // the fusion gets fresh names.
  bool survives = false;
};

// Instructions a pass has replaced but the editor has not dropped yet.
using Removed = absl::flat_hash_set<const Instruction*>;

// Instructions of `comp` that some instruction lists as a control predecessor (computed once
// per computation: the editor's per-instruction query scans the whole computation).
absl::flat_hash_set<const Instruction*> ControlPredecessorSet(const Computation& comp);

// Users of `instr` that are still part of the computation (not removed, not dead).
std::vector<Instruction*> LiveUsers(const ComputationEditor& editor, const Instruction* instr,
                                    const Removed& removed);

// Replaces `pieces` (all in editor's computation; none with control dependencies: callers
// check successors with ControlPredecessorSet) by one
// fusion of `kind`. Values that flow from one piece to another become internal. The outputs
// are the kept pieces' outputs in piece order (a multi-output piece contributes each of its
// tuple elements); more than one output gives a tuple root. When `reuse_first` and pieces[0]
// is a fusion that does not survive, the result takes over its name and computation;
// otherwise the fusion is named "fusion[.N]" and its computation `computation_base[.N]`,
// placed before the editor's computation. Fused parameters keep their old names where
// possible; new ones are "param_N". Pieces that neither survive nor keep outputs must have
// only other pieces as users. Pieces that do not survive are added to `removed` and stop
// reading their operands (they stay in the instruction list until editor.Finish()). The
// caller runs editor.Finish() (and removes computations that
// became unreachable) when done.
absl::StatusOr<Instruction*> CombineIntoFusion(ComputationEditor& editor,
                                               const std::vector<Piece>& pieces,
                                               FusionKind kind, Removed* removed,
                                               std::string_view computation_base =
                                                   "fused_computation",
                                               bool reuse_first = true);

// Call after each CombineIntoFusion: now and then rebuilds the editor's user lists, which
// otherwise keep naming removed pieces (amortised: a rebuild per computation size / 8 calls).
void NoteRewrite(ComputationEditor& editor, int64_t* rewrites_since_rebuild);

// Computations the fusion passes work on: the entry and what control flow calls from it
// (not fused computations, not reducers and other to_apply computations).
std::vector<Computation*> FusibleComputations(const Module& module);

// True when `instr` transitively reads `target` (through operands).
bool Reaches(const Instruction* instr, const Instruction* target);

// True for instructions that are costly to compute per element and must not be duplicated:
// transcendentals, divide/remainder/power, reductions, dots, convolutions, gathers, sorts, and
// fusions containing any of these.
bool IsExpensive(const Instruction& instr);

// The instruction that decides a fusion's iteration space: a fusion's root (the first output
// of a multi-output root), or the instruction itself when it is not a fusion.
const Instruction* Hero(const Instruction& instr);

// Instructions that belong to a computation's current state while an editor works on it: not
// yet removed by Finish but without users (and not the root, a parameter or a side effect).
bool IsDead(const ComputationEditor& editor, const Instruction* instr);

}  // namespace fusion
}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_INSTRUCTION_FUSION_H_
