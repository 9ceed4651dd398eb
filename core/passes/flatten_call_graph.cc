#include "core/passes/flatten_call_graph.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {
namespace {

enum class Context { kSequential, kEmbedded, kAsync };

Context ContextOf(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kCall:
    case Opcode::kWhile:
    case Opcode::kConditional:
      return Context::kSequential;
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return Context::kAsync;
    default:
      return Context::kEmbedded;
  }
}

class Flattener {
 public:
  Flattener(Module* module, PassContext& context, std::string_view pass_name)
      : module_(module), context_(context), pass_name_(pass_name), names_(*module) {}

  bool Run() {
    Computation* entry = module_->entry();
    if (entry == nullptr) return false;
    CollectEmbedded(entry);
    visited_.clear();
    claimed_.insert(entry);
    Visit(entry);
    return changed_;
  }

 private:
  // Computations used in an embedded context anywhere the entry reaches.
  void CollectEmbedded(Computation* comp) {
    if (!visited_.insert(comp).second) return;
    for (const Instruction* instr : comp->instructions()) {
      for (Computation* c : instr->called_computations()) {
        if (c == nullptr) continue;
        if (ContextOf(*instr) == Context::kEmbedded) embedded_.insert(c);
        CollectEmbedded(c);
      }
    }
  }

  void Visit(Computation* comp) {
    if (!visited_.insert(comp).second) return;
    const std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* instr : instrs) {
      auto& called = *instr->mutable_called_computations();
      for (size_t k = 0; k < called.size(); ++k) {
        Computation* callee = called[k];
        if (callee == nullptr) continue;
        if (ContextOf(*instr) == Context::kSequential) {
          const bool shared = claimed_.contains(callee) || embedded_.contains(callee);
          if (shared && context_.ConsumeFuel(pass_name_)) {
            callee = Clone(callee);
            called[k] = callee;
            changed_ = true;
          }
          claimed_.insert(callee);
        }
        Visit(callee);
      }
    }
  }

  Computation* Clone(Computation* original) {
    auto copy = std::make_unique<Computation>(names_.Unique(StrCat(original->name(), ".clone")));
    copy->set_execution_thread(original->execution_thread());
    int64_t max_id = -1;
    for (const auto& c : module_->computations()) max_id = std::max(max_id, c->id());
    copy->set_id(max_id + 1);
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    std::vector<Instruction*> cloned;
    for (const Instruction* src : original->instructions()) {
      Instruction* dst = module_->NewInstruction(src->opcode(), "", &src->shape());
      CopyInstructionFields(*src, dst);
      dst->set_name(names_.Unique(StrCat(src->name(), ".clone")));
      map[src] = dst;
      cloned.push_back(dst);
    }
    for (const Instruction* src : original->instructions()) {
      Instruction* dst = map[src];
      for (Instruction* op : src->operands()) {
        auto it = map.find(op);
        dst->mutable_operands()->push_back(it == map.end() ? op : it->second);
      }
      for (Instruction* p : src->control_predecessors()) {
        auto it = map.find(p);
        if (it != map.end()) dst->mutable_control_predecessors()->push_back(it->second);
      }
    }
    for (Instruction* dst : cloned) copy->AddInstruction(dst);
    auto root = map.find(original->root());
    if (root != map.end()) copy->set_root(root->second);
    // Right after the original and its earlier clones: its callees are already before it,
    // its callers after.
    auto& comps = *module_->mutable_computations();
    auto last = last_clone_.find(original);
    const Computation* anchor = last == last_clone_.end() ? original : last->second;
    size_t pos = 0;
    while (pos < comps.size() && comps[pos].get() != anchor) ++pos;
    copy->set_parent(module_);
    Computation* result = copy.get();
    last_clone_[original] = result;
    comps.insert(comps.begin() + static_cast<std::ptrdiff_t>(std::min(pos + 1, comps.size())),
                 std::move(copy));
    return result;
  }

  Module* module_;
  PassContext& context_;
  std::string_view pass_name_;
  NameUniquer names_;
  absl::flat_hash_set<const Computation*> embedded_;
  absl::flat_hash_set<const Computation*> claimed_;
  absl::flat_hash_set<const Computation*> visited_;
  absl::flat_hash_map<const Computation*, const Computation*> last_clone_;
  bool changed_ = false;
};

}  // namespace

absl::StatusOr<bool> FlattenCallGraph::Run(Module* module, PassContext& context) {
  Flattener flattener(module, context, name());
  return flattener.Run();
}

}  // namespace hlowb
