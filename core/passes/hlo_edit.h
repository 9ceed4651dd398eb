// The toolkit passes rewrite modules with: a per-computation editor that knows every
// instruction's users, creates instructions with unique XLA-style names, replaces uses, and on
// Finish drops what became dead and restores a defs-before-uses order; deep copies of
// instructions and modules; side-effect queries; constant helpers.
//
// Deliberately not here: any rewrite policy (that is the passes' business) and verification
// (core/analysis/verifier.h, run by the pipeline).
#ifndef HLOWB_CORE_PASSES_HLO_EDIT_H_
#define HLOWB_CORE_PASSES_HLO_EDIT_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlowb {

// True when removing or duplicating `instr` could change what the program does even if its
// result is unused: send/recv, infeed/outfeed, rng, collectives, side-effecting custom calls,
// async and control-flow instructions whose called computations contain such instructions.
bool HasSideEffect(const Instruction& instr);
// Only the instruction itself, not what it calls.
bool HasSideEffectNoRecurse(const Instruction& instr);

// Copies every field of `src` that describes what it computes (opcode, name, shape, index,
// dimensions, literal, attributes, metadata, sharding, frontend attributes, backend config,
// called computations, async sugar) into `dst`. Operands, control predecessors, parent and id
// are left alone.
void CopyInstructionFields(const Instruction& src, Instruction* dst);

// Deep copy: same names, ids, computations (in the same order) and config. The copy owns its
// own instructions and shapes.
std::unique_ptr<Module> CloneModule(const Module& module);

// Hands out names that no instruction or computation of the module has, the way XLA does:
// "add" becomes "add.17" (a trailing ".N" of the base is replaced).
// The module's names are read on first use, so passes that end up renaming nothing pay nothing
// (the module must not be destroyed before then).
class NameUniquer {
 public:
  explicit NameUniquer(const Module& module) : pending_(&module) {}
  NameUniquer() = default;
  std::string Unique(std::string_view base);
  void Register(std::string_view name);

 private:
  void Load();
  void Add(std::string_view name);

  const Module* pending_ = nullptr;
  absl::flat_hash_set<std::string> used_;
  absl::flat_hash_map<std::string, int64_t> next_;
};

// Edits one computation. Keeps a user list for every instruction up to date through its own
// methods (edits made behind its back, e.g. by writing mutable_operands() directly, must be
// followed by RebuildUsers()). New instructions are appended; Finish() puts every instruction
// after its operands, keeping the existing order where possible.
class ComputationEditor {
 public:
  ComputationEditor(Computation* computation, NameUniquer* names);

  Computation* computation() const { return computation_; }
  Module* module() const { return computation_->parent(); }
  NameUniquer* names() const { return names_; }

  // Distinct users (operand uses only), in instruction order of first use.
  const std::vector<Instruction*>& users(const Instruction* instr) const;
  int64_t user_count(const Instruction* instr) const { return users(instr).size(); }
  // Users that list `instr` as a control predecessor.
  std::vector<Instruction*> control_successors(const Instruction* instr) const;

  // New instruction in this computation. `name_base` defaults to the opcode's name.
  Instruction* Add(Opcode opcode, const Shape& shape, std::vector<Instruction*> operands,
                   std::string_view name_base = {});
  // New instruction computing what `prototype` computes (all its fields, its name as the base)
  // on other operands and with another shape.
  Instruction* AddLike(const Instruction& prototype, const Shape& shape,
                       std::vector<Instruction*> operands);
  Instruction* AddConstant(Literal literal, std::string_view name_base = "constant");
  // New instruction whose shape is inferred from its operands and attributes (set by
  // `set_attrs` before inference). The layout follows the operands' where inference gives none.
  absl::StatusOr<Instruction*> AddInferred(Opcode opcode, std::vector<Instruction*> operands,
                                           const std::function<void(Instruction*)>& set_attrs = {},
                                           std::string_view name_base = {});
  // Adds an instruction created elsewhere (e.g. by Module::NewInstruction).
  void Insert(Instruction* instr);

  void ReplaceOperand(Instruction* user, int operand_index, Instruction* new_operand);
  // Every operand use of `old` (and the root, if it is the root) becomes `replacement`.
  // Returns the number of uses changed.
  int64_t ReplaceAllUsesWith(Instruction* old, Instruction* replacement);
  // Like ReplaceAllUsesWith, but leaves the uses in `except` alone.
  int64_t ReplaceUsesExcept(Instruction* old, Instruction* replacement,
                            const Instruction* except);
  void SetRoot(Instruction* root);
  // Forgets the user lists; they are rebuilt from the instructions on the next query (passes
  // that never ask for users pay nothing).
  void RebuildUsers();

  // Drops instructions nothing reaches (when remove_dead), keeping parameters and side effects,
  // re-links control dependencies around removed instructions, and orders the rest
  // defs-before-uses. True when the instruction list changed.
  bool Finish(bool remove_dead = true);

 private:
  void AddUse(Instruction* operand, Instruction* user);
  void RemoveUse(Instruction* operand, Instruction* user);
  void BuildUsers() const;

  Computation* computation_;
  NameUniquer* names_;
  std::vector<Instruction*> added_;
  mutable absl::flat_hash_map<const Instruction*, std::vector<Instruction*>> users_;
  mutable bool users_stale_ = true;
};

// Removes computations that neither the entry nor anything it calls (transitively) reaches,
// and orders the rest callees-before-callers. True when something was removed or reordered.
bool RemoveUnreachableComputations(Module* module);
// The computations fusion instructions call (passes that leave fused code alone skip them).
absl::flat_hash_set<const Computation*> FusedComputations(const Module& module);
// Computations that `module`'s instructions call, for each computation: callers of it.
absl::flat_hash_map<const Computation*, std::vector<Instruction*>> ComputeCallers(
    const Module& module);

// Literal helpers.
// A scalar literal of `type` holding `value` (rounded as the type rounds; complex gets a zero
// imaginary part; pred is value != 0).
Literal ScalarLiteral(PrimitiveType type, double value);
// Array literal of `shape` with every element `value`.
Literal FilledLiteral(const Shape& shape, double value);
// Element `i` of an array literal as a double (the real part for complex).
double LiteralElementAsDouble(const Literal& literal, int64_t i);
// When `instr` is a constant (or a broadcast of a scalar constant, looked through) all of
// whose elements equal one value: that value (real part; NaN if mixed NaN). nullopt otherwise.
std::optional<double> UniformConstantValue(const Instruction& instr);
// True when `instr` is a constant / broadcast-of-constant whose every element is `value`.
bool IsUniformConstant(const Instruction& instr, double value);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_HLO_EDIT_H_
