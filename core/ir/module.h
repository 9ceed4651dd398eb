// An HLO module: computations in definition order (callees before callers), the entry, the
// header attributes XLA prints after `HloModule name`, and the stack-frame tables. The module
// owns all instructions (in an arena: fixed-size blocks, never moved) and interns shapes so
// equal shapes are stored once.
#ifndef HLOWB_CORE_IR_MODULE_H_
#define HLOWB_CORE_IR_MODULE_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/support/arena.h"

namespace hlowb {

struct InputOutputAlias {
  ShapeIndex output_index;
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool must_alias = false;
  bool operator==(const InputOutputAlias&) const = default;
};

struct BufferDonor {
  int64_t parameter_number = 0;
  ShapeIndex parameter_index;
  bool operator==(const BufferDonor&) const = default;
};

struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
  bool operator==(const ProgramShape&) const = default;
};

struct FileLocation {
  int32_t file_name_id = 0;
  int32_t function_name_id = 0;
  int32_t line = 0;
  int32_t end_line = 0;
  int32_t column = 0;
  int32_t end_column = 0;
  bool operator==(const FileLocation&) const = default;
};

struct StackFrame {
  int32_t file_location_id = 0;
  int32_t parent_frame_id = 0;  // proto value (text shows this + 1)
  bool operator==(const StackFrame&) const = default;
};

struct StackFrameIndex {
  std::vector<std::string> file_names;
  std::vector<std::string> function_names;
  std::vector<FileLocation> file_locations;
  std::vector<StackFrame> stack_frames;
  bool operator==(const StackFrameIndex&) const = default;
  bool empty() const { return file_names.empty() && function_names.empty() &&
                              file_locations.empty() && stack_frames.empty(); }
};

// Header attributes of `HloModule name, ...`.
struct ModuleConfig {
  bool is_scheduled = false;
  int64_t replica_count = 1;
  int64_t num_partitions = 1;
  std::vector<InputOutputAlias> input_output_alias;
  bool has_input_output_alias = false;
  std::vector<BufferDonor> buffer_donors;
  bool has_buffer_donor = false;
  bool alias_passthrough_params = false;
  std::optional<ProgramShape> entry_computation_layout;
  FrontendAttributes frontend_attributes;
  std::vector<bool> allow_spmd_sharding_propagation_to_parameters = {false};
  std::vector<bool> allow_spmd_sharding_propagation_to_output = {false};
  std::string origin_recovery_table;  // verbatim
  std::vector<std::pair<std::string, std::string>> unknown;  // verbatim, input order
  bool operator==(const ModuleConfig&) const = default;
};

class Module {
 public:
  explicit Module(std::string name);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }

  ModuleConfig& config() { return config_; }
  const ModuleConfig& config() const { return config_; }
  StackFrameIndex& stack_frames() { return stack_frames_; }
  const StackFrameIndex& stack_frames() const { return stack_frames_; }

  // Computations in definition order (every callee before its callers).
  const std::vector<std::unique_ptr<Computation>>& computations() const { return computations_; }
  Computation* AddComputation(std::unique_ptr<Computation> c);
  // For passes: reorder or drop computations. The caller keeps callees before callers and
  // never drops the entry or a computation something still calls.
  std::vector<std::unique_ptr<Computation>>* mutable_computations() { return &computations_; }
  Computation* FindComputation(const std::string& name) const;
  Computation* entry() const { return entry_; }
  void set_entry(Computation* c) { entry_ = c; }

  // Creates an instruction owned by this module (not yet in any computation).
  Instruction* NewInstruction(Opcode opcode, std::string name, const Shape* shape);
  const Shape* InternShape(const Shape& shape);
  int64_t instruction_count() const { return static_cast<int64_t>(instruction_pool_.size()); }

 private:
  struct ShapeHash {
    size_t operator()(const Shape* s) const { return s->Hash(); }
  };
  struct ShapeEq {
    bool operator()(const Shape* a, const Shape* b) const { return *a == *b; }
  };

  std::string name_;
  int64_t id_ = 0;
  ModuleConfig config_;
  StackFrameIndex stack_frames_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  // Instructions live in an arena: stable addresses, block allocation, no per-object malloc.
  ObjectArena<Instruction> instruction_pool_;
  std::deque<Shape> shape_pool_;
  std::unordered_set<const Shape*, ShapeHash, ShapeEq> shape_set_;
};

// Structural equality of two modules: same computations (by position), instructions (by
// position), opcodes, names, shapes, operands (by position in their computation), attributes,
// metadata, config and stack frames. On mismatch `why` (if given) says where.
bool ModulesEqual(const Module& a, const Module& b, std::string* why = nullptr);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_MODULE_H_
