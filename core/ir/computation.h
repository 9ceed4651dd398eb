// A computation: an ordered list of instructions with one root. The order is the textual
// order as read (for scheduled modules it is the schedule). Parameters are indexed by number.
// Instructions are owned by the module's arena, not by the computation.
#ifndef HLOWB_CORE_IR_COMPUTATION_H_
#define HLOWB_CORE_IR_COMPUTATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/instruction.h"

namespace hlowb {

class Module;

class Computation {
 public:
  explicit Computation(std::string name) : name_(std::move(name)) {}
  Computation(const Computation&) = delete;
  Computation& operator=(const Computation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  Module* parent() const { return parent_; }
  void set_parent(Module* m) { parent_ = m; }

  const std::vector<Instruction*>& instructions() const { return instructions_; }
  int instruction_count() const { return static_cast<int>(instructions_.size()); }
  void AddInstruction(Instruction* instr);
  // Replaces the instruction list (passes: after rewriting, in a valid def-before-use order).
  // Parameters are re-indexed from the new list; the root is left as it is.
  void SetInstructions(std::vector<Instruction*> instrs);

  Instruction* root() const { return root_; }
  void set_root(Instruction* r) { root_ = r; }

  // Parameters ordered by parameter number; entries may be null if numbers have gaps
  // (the verifier reports that).
  const std::vector<Instruction*>& parameters() const { return parameters_; }
  int parameter_count() const { return static_cast<int>(parameters_.size()); }
  Instruction* parameter(int i) const { return parameters_[i]; }

  // "" means the main thread.
  const std::string& execution_thread() const { return execution_thread_; }
  void set_execution_thread(std::string t) { execution_thread_ = std::move(t); }

  bool is_entry() const;
  // Linear lookup by name; for tools and tests, not hot paths.
  Instruction* FindInstruction(const std::string& name) const;

 private:
  std::string name_;
  int64_t id_ = -1;
  Module* parent_ = nullptr;
  std::vector<Instruction*> instructions_;
  std::vector<Instruction*> parameters_;
  Instruction* root_ = nullptr;
  std::string execution_thread_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_COMPUTATION_H_
