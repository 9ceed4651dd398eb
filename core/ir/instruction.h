// One HLO instruction. The common parts (opcode, name, shape, operands, called computations,
// metadata, sharding, backend_config) are direct members; opcode-specific attributes live in
// an InstructionAttrs block allocated only for instructions that have any, which keeps the
// thousands of plain elementwise instructions in a real module small. Instructions are
// created and owned by their Module (see Module::NewInstruction); this class does no
// validation, which is the verifier's job.
#ifndef HLOWB_CORE_IR_INSTRUCTION_H_
#define HLOWB_CORE_IR_INSTRUCTION_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/ir/attributes.h"
#include "core/ir/literal.h"
#include "core/ir/opcode.h"
#include "core/ir/shape.h"

namespace hlowb {

class Computation;

// Attributes only some opcodes carry. Field defaults equal XLA's defaults, so "unset" and
// "default" print the same way.
struct InstructionAttrs {
  std::optional<Window> window;
  std::optional<ConvolutionDimensionNumbers> convolution_dimension_numbers;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  ConvolutionKind conv_kind = ConvolutionKind::kUnset;
  std::optional<DotDimensionNumbers> dot_dimension_numbers;
  PrecisionConfig precision_config;
  std::string sparsity;  // legacy sparse dot descriptor, verbatim
  std::optional<GatherDimensionNumbers> gather_dimension_numbers;
  std::optional<ScatterDimensionNumbers> scatter_dimension_numbers;
  // gather slice_sizes, dynamic-slice dynamic_slice_sizes.
  std::vector<int64_t> slice_sizes;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  std::vector<SliceDimension> slice;
  std::optional<PaddingConfig> padding;
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kDefault;
  int32_t exponent_bits = 0;
  int32_t mantissa_bits = 0;
  // Collectives.
  std::optional<int64_t> channel_id;
  std::optional<ReplicaGroups> replica_groups;
  bool constrain_layout = false;
  std::optional<bool> use_global_device_ids;
  std::vector<std::pair<int64_t, int64_t>> source_target_pairs;
  std::vector<std::vector<int64_t>> permute_slice_sizes;
  std::string legacy_mode;  // ignored all-reduce `mode=`
  // Custom calls.
  std::string custom_call_target;
  CustomCallApiVersion api_version = CustomCallApiVersion::kOriginal;
  CustomCallSchedule schedule = CustomCallSchedule::kNone;
  bool custom_call_has_side_effect = false;
  std::optional<std::vector<Shape>> operand_layout_constraints;
  std::optional<Literal> custom_call_literal;
  PaddingType padding_type = PaddingType::kInvalid;
  bool called_computations_as_list = false;  // `called_computations={..}` vs `to_apply=`
  std::vector<OutputOperandAlias> output_operand_aliasing;
  // Other opcodes.
  FusionKind fusion_kind = FusionKind::kLoop;
  FftType fft_type = FftType::kFft;
  std::vector<int64_t> fft_length;
  bool left_side = false;
  bool lower = false;
  bool unit_diagonal = false;
  TriangularTranspose transpose_a = TriangularTranspose::kInvalid;
  float epsilon = 0;
  int64_t feature_index = 0;
  RandomDistribution distribution = RandomDistribution::kInvalid;
  RandomAlgorithm rng_algorithm = RandomAlgorithm::kDefault;
  int64_t delta = 0;
  std::string infeed_config;
  std::string outfeed_config;
  std::optional<Shape> outfeed_shape;
  bool is_host_transfer = false;
  std::optional<int32_t> cross_program_prefetch_index;
  int64_t k = 0;
  bool largest = true;
  int64_t num_carries = 0;
  bool is_reverse = false;
  TriState is_associative = TriState::kUnspecified;
  bool is_stable = false;
  bool is_composite = false;
  std::string async_execution_thread;  // empty = main
  std::string domain_kind;
  std::optional<Sharding> domain_entry_sharding;
  std::optional<Sharding> domain_exit_sharding;
  std::vector<bool> parameter_replication;
  std::optional<StatisticsViz> statistics;
  std::optional<ResultAccuracy> result_accuracy;
  std::string origin;         // original-value tree, verbatim
  int64_t inferred_dimension = -1;
  // Attributes this version does not model, in input order, with their raw value text.
  std::vector<std::pair<std::string, std::string>> unknown;

  bool operator==(const InstructionAttrs& other) const;
};

class Instruction {
 public:
  Instruction(Opcode opcode, std::string name, const Shape* shape)
      : opcode_(opcode), name_(std::move(name)), shape_(shape) {}
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  void set_opcode(Opcode op) { opcode_ = op; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  int64_t id() const { return id_; }
  void set_id(int64_t id) { id_ = id; }
  // Shapes are interned by the owning module; see Module::InternShape.
  const Shape& shape() const { return *shape_; }
  void set_shape(const Shape* shape) { shape_ = shape; }

  Computation* parent() const { return parent_; }
  void set_parent(Computation* c) { parent_ = c; }

  const std::vector<Instruction*>& operands() const { return operands_; }
  std::vector<Instruction*>* mutable_operands() { return &operands_; }
  Instruction* operand(int i) const { return operands_[i]; }
  int operand_count() const { return static_cast<int>(operands_.size()); }

  const std::vector<Computation*>& called_computations() const { return called_; }
  std::vector<Computation*>* mutable_called_computations() { return &called_; }

  const std::vector<Instruction*>& control_predecessors() const { return control_preds_; }
  std::vector<Instruction*>* mutable_control_predecessors() { return &control_preds_; }

  // parameter(N): N. get-tuple-element: index. iota: iota_dimension. Unused otherwise.
  int64_t parameter_number() const { return index_; }
  int64_t tuple_index() const { return index_; }
  int64_t iota_dimension() const { return index_; }
  void set_index(int64_t v) { index_ = v; }
  int64_t index() const { return index_; }

  // dimensions={...} of broadcast, transpose, reduce, reverse, concatenate, sort, map, ...
  const std::vector<int64_t>& dimensions() const { return dimensions_; }
  std::vector<int64_t>* mutable_dimensions() { return &dimensions_; }
  bool has_dimensions() const { return has_dimensions_; }
  void set_has_dimensions(bool v) { has_dimensions_ = v; }

  const Literal* literal() const { return literal_.get(); }
  void set_literal(std::unique_ptr<Literal> l) { literal_ = std::move(l); }

  const OpMetadata* metadata() const { return metadata_.get(); }
  OpMetadata* mutable_metadata();
  void clear_metadata() { metadata_.reset(); }

  const Sharding* sharding() const { return sharding_.get(); }
  void set_sharding(std::unique_ptr<Sharding> s) { sharding_ = std::move(s); }

  const FrontendAttributes* frontend_attributes() const { return frontend_attributes_.get(); }
  FrontendAttributes* mutable_frontend_attributes();

  const std::string& backend_config() const { return backend_config_; }
  void set_backend_config(std::string s) { backend_config_ = std::move(s); }

  const InstructionAttrs* attrs() const { return attrs_.get(); }
  // Allocates the block on first use.
  InstructionAttrs* mutable_attrs();
  // The block, or a shared all-defaults block when the instruction has none.
  const InstructionAttrs& attrs_or_default() const;

  // Printed with `-start/-update/-done` syntax sugar (async wrappers only).
  bool async_sugar() const { return async_sugar_; }
  void set_async_sugar(bool v) { async_sugar_ = v; }

  bool IsRoot() const;

 private:
  Opcode opcode_;
  bool has_dimensions_ = false;
  bool async_sugar_ = false;
  std::string name_;
  const Shape* shape_;
  Computation* parent_ = nullptr;
  int64_t id_ = -1;
  int64_t index_ = 0;
  std::vector<Instruction*> operands_;
  std::vector<Computation*> called_;
  std::vector<Instruction*> control_preds_;
  std::vector<int64_t> dimensions_;
  std::unique_ptr<Literal> literal_;
  std::unique_ptr<OpMetadata> metadata_;
  std::unique_ptr<Sharding> sharding_;
  std::unique_ptr<FrontendAttributes> frontend_attributes_;
  std::string backend_config_;
  std::unique_ptr<InstructionAttrs> attrs_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_INSTRUCTION_H_
