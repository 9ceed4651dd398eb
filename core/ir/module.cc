#include "core/ir/module.h"

#include "absl/container/flat_hash_map.h"
#include "core/support/strings.h"

namespace hlowb {

bool InstructionAttrs::operator==(const InstructionAttrs& o) const {
  return window == o.window &&
         convolution_dimension_numbers == o.convolution_dimension_numbers &&
         feature_group_count == o.feature_group_count &&
         batch_group_count == o.batch_group_count && conv_kind == o.conv_kind &&
         dot_dimension_numbers == o.dot_dimension_numbers &&
         precision_config == o.precision_config && sparsity == o.sparsity &&
         gather_dimension_numbers == o.gather_dimension_numbers &&
         scatter_dimension_numbers == o.scatter_dimension_numbers &&
         slice_sizes == o.slice_sizes && indices_are_sorted == o.indices_are_sorted &&
         unique_indices == o.unique_indices && slice == o.slice && padding == o.padding &&
         comparison_direction == o.comparison_direction &&
         comparison_type == o.comparison_type && exponent_bits == o.exponent_bits &&
         mantissa_bits == o.mantissa_bits && channel_id == o.channel_id &&
         replica_groups == o.replica_groups && constrain_layout == o.constrain_layout &&
         use_global_device_ids == o.use_global_device_ids &&
         source_target_pairs == o.source_target_pairs &&
         permute_slice_sizes == o.permute_slice_sizes && legacy_mode == o.legacy_mode &&
         custom_call_target == o.custom_call_target && api_version == o.api_version &&
         schedule == o.schedule &&
         custom_call_has_side_effect == o.custom_call_has_side_effect &&
         operand_layout_constraints == o.operand_layout_constraints &&
         custom_call_literal == o.custom_call_literal && padding_type == o.padding_type &&
         called_computations_as_list == o.called_computations_as_list &&
         output_operand_aliasing == o.output_operand_aliasing &&
         fusion_kind == o.fusion_kind && fft_type == o.fft_type &&
         fft_length == o.fft_length && left_side == o.left_side && lower == o.lower &&
         unit_diagonal == o.unit_diagonal && transpose_a == o.transpose_a &&
         epsilon == o.epsilon && feature_index == o.feature_index &&
         distribution == o.distribution && rng_algorithm == o.rng_algorithm &&
         delta == o.delta && infeed_config == o.infeed_config &&
         outfeed_config == o.outfeed_config && outfeed_shape == o.outfeed_shape &&
         is_host_transfer == o.is_host_transfer &&
         cross_program_prefetch_index == o.cross_program_prefetch_index && k == o.k &&
         largest == o.largest && num_carries == o.num_carries && is_reverse == o.is_reverse &&
         is_associative == o.is_associative && is_stable == o.is_stable &&
         is_composite == o.is_composite &&
         async_execution_thread == o.async_execution_thread &&
         domain_kind == o.domain_kind && domain_entry_sharding == o.domain_entry_sharding &&
         domain_exit_sharding == o.domain_exit_sharding &&
         parameter_replication == o.parameter_replication && statistics == o.statistics &&
         result_accuracy == o.result_accuracy && origin == o.origin &&
         inferred_dimension == o.inferred_dimension && unknown == o.unknown;
}

OpMetadata* Instruction::mutable_metadata() {
  if (!metadata_) metadata_ = std::make_unique<OpMetadata>();
  return metadata_.get();
}

FrontendAttributes* Instruction::mutable_frontend_attributes() {
  if (!frontend_attributes_) frontend_attributes_ = std::make_unique<FrontendAttributes>();
  return frontend_attributes_.get();
}

InstructionAttrs* Instruction::mutable_attrs() {
  if (!attrs_) attrs_ = std::make_unique<InstructionAttrs>();
  return attrs_.get();
}

const InstructionAttrs& Instruction::attrs_or_default() const {
  static const InstructionAttrs* defaults = new InstructionAttrs();
  return attrs_ ? *attrs_ : *defaults;
}

bool Instruction::IsRoot() const { return parent_ && parent_->root() == this; }

void Computation::AddInstruction(Instruction* instr) {
  instr->set_parent(this);
  instructions_.push_back(instr);
  if (instr->opcode() == Opcode::kParameter) {
    int64_t n = instr->parameter_number();
    if (n >= 0 && n < (int64_t{1} << 20)) {
      if (static_cast<int64_t>(parameters_.size()) <= n) parameters_.resize(n + 1, nullptr);
      if (!parameters_[n]) parameters_[n] = instr;
    }
  }
}

void Computation::SetInstructions(std::vector<Instruction*> instrs) {
  instructions_.clear();
  parameters_.clear();
  instructions_.reserve(instrs.size());
  for (Instruction* i : instrs) AddInstruction(i);
}

bool Computation::is_entry() const { return parent_ && parent_->entry() == this; }

Instruction* Computation::FindInstruction(const std::string& name) const {
  for (Instruction* i : instructions_) {
    if (i->name() == name) return i;
  }
  return nullptr;
}

Module::Module(std::string name) : name_(std::move(name)) {}
Module::~Module() = default;

Computation* Module::AddComputation(std::unique_ptr<Computation> c) {
  c->set_parent(this);
  if (c->id() < 0) c->set_id(static_cast<int64_t>(computations_.size()));
  computations_.push_back(std::move(c));
  return computations_.back().get();
}

Computation* Module::FindComputation(const std::string& name) const {
  for (const auto& c : computations_) {
    if (c->name() == name) return c.get();
  }
  return nullptr;
}

Instruction* Module::NewInstruction(Opcode opcode, std::string name, const Shape* shape) {
  Instruction* instr = instruction_pool_.Create(opcode, std::move(name), shape);
  instr->set_id(static_cast<int64_t>(instruction_pool_.size()) - 1);
  return instr;
}

const Shape* Module::InternShape(const Shape& shape) {
  auto it = shape_set_.find(&shape);
  if (it != shape_set_.end()) return *it;
  shape_pool_.push_back(shape);
  const Shape* s = &shape_pool_.back();
  shape_set_.insert(s);
  return s;
}

namespace {

bool Fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}

bool OptionalPtrEq(const auto* a, const auto* b) {
  if (!a || !b) return a == b;
  return *a == *b;
}

}  // namespace

bool ModulesEqual(const Module& a, const Module& b, std::string* why) {
  if (a.name() != b.name()) return Fail(why, "module names differ");
  if (!(a.config() == b.config())) return Fail(why, "module header attributes differ");
  if (!(a.stack_frames() == b.stack_frames())) return Fail(why, "stack frame tables differ");
  if (a.computations().size() != b.computations().size()) {
    return Fail(why, "number of computations differs");
  }
  absl::flat_hash_map<const Computation*, int> comp_index_a, comp_index_b;
  for (size_t i = 0; i < a.computations().size(); ++i) {
    comp_index_a[a.computations()[i].get()] = static_cast<int>(i);
    comp_index_b[b.computations()[i].get()] = static_cast<int>(i);
  }
  if ((a.entry() ? comp_index_a[a.entry()] : -1) != (b.entry() ? comp_index_b[b.entry()] : -1)) {
    return Fail(why, "entry computations differ");
  }
  for (size_t ci = 0; ci < a.computations().size(); ++ci) {
    const Computation& ca = *a.computations()[ci];
    const Computation& cb = *b.computations()[ci];
    std::string where = StrCat("computation ", ca.name());
    if (ca.name() != cb.name()) return Fail(why, where + ": names differ (" + cb.name() + ")");
    if (ca.execution_thread() != cb.execution_thread()) {
      return Fail(why, where + ": execution threads differ");
    }
    if (ca.instruction_count() != cb.instruction_count()) {
      return Fail(why, where + ": instruction counts differ");
    }
    absl::flat_hash_map<const Instruction*, int> pos_a, pos_b;
    for (int i = 0; i < ca.instruction_count(); ++i) {
      pos_a[ca.instructions()[i]] = i;
      pos_b[cb.instructions()[i]] = i;
    }
    auto same_instr_list = [&](const std::vector<Instruction*>& x,
                               const std::vector<Instruction*>& y) {
      if (x.size() != y.size()) return false;
      for (size_t k = 0; k < x.size(); ++k) {
        auto ia = pos_a.find(x[k]);
        auto ib = pos_b.find(y[k]);
        if (ia == pos_a.end() || ib == pos_b.end() || ia->second != ib->second) return false;
      }
      return true;
    };
    if ((ca.root() ? pos_a[ca.root()] : -1) != (cb.root() ? pos_b[cb.root()] : -1)) {
      return Fail(why, where + ": roots differ");
    }
    for (int i = 0; i < ca.instruction_count(); ++i) {
      const Instruction& x = *ca.instructions()[i];
      const Instruction& y = *cb.instructions()[i];
      std::string iw = StrCat(where, ", instruction ", x.name(), ": ");
      if (x.name() != y.name()) return Fail(why, iw + "names differ (" + y.name() + ")");
      if (x.opcode() != y.opcode()) return Fail(why, iw + "opcodes differ");
      if (!(x.shape() == y.shape())) return Fail(why, iw + "shapes differ");
      if (!same_instr_list(x.operands(), y.operands())) return Fail(why, iw + "operands differ");
      if (!same_instr_list(x.control_predecessors(), y.control_predecessors())) {
        return Fail(why, iw + "control predecessors differ");
      }
      if (x.called_computations().size() != y.called_computations().size()) {
        return Fail(why, iw + "called computations differ");
      }
      for (size_t k = 0; k < x.called_computations().size(); ++k) {
        if (comp_index_a[x.called_computations()[k]] !=
            comp_index_b[y.called_computations()[k]]) {
          return Fail(why, iw + "called computations differ");
        }
      }
      if (x.index() != y.index()) return Fail(why, iw + "index/parameter number differs");
      if (x.dimensions() != y.dimensions()) return Fail(why, iw + "dimensions differ");
      if (!OptionalPtrEq(x.literal(), y.literal())) return Fail(why, iw + "literals differ");
      const OpMetadata* ma = x.metadata();
      const OpMetadata* mb = y.metadata();
      bool ma_empty = !ma || ma->empty();
      bool mb_empty = !mb || mb->empty();
      if (ma_empty != mb_empty || (!ma_empty && !(*ma == *mb))) {
        return Fail(why, iw + "metadata differs");
      }
      if (!OptionalPtrEq(x.sharding(), y.sharding())) return Fail(why, iw + "shardings differ");
      const FrontendAttributes* fa = x.frontend_attributes();
      const FrontendAttributes* fb = y.frontend_attributes();
      bool fa_empty = !fa || fa->entries.empty();
      bool fb_empty = !fb || fb->entries.empty();
      if (fa_empty != fb_empty || (!fa_empty && !(*fa == *fb))) {
        return Fail(why, iw + "frontend attributes differ");
      }
      if (x.backend_config() != y.backend_config()) {
        return Fail(why, iw + "backend configs differ");
      }
      if (!(x.attrs_or_default() == y.attrs_or_default())) {
        return Fail(why, iw + "opcode-specific attributes differ");
      }
    }
  }
  return true;
}

}  // namespace hlowb
