#include "replay/compare/extract.h"

#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "core/support/strings.h"

namespace hlowb {
namespace {

using InstrMap = std::unordered_map<const Instruction*, Instruction*>;
using CompMap = std::unordered_map<const Computation*, Computation*>;

// Copies everything but operands, called computations and control predecessors.
Instruction* CopyShell(const Instruction& src, Module* dst) {
  Instruction* out = dst->NewInstruction(src.opcode(), src.name(), dst->InternShape(src.shape()));
  out->set_index(src.index());
  *out->mutable_dimensions() = src.dimensions();
  out->set_has_dimensions(src.has_dimensions());
  if (src.literal() != nullptr) out->set_literal(std::make_unique<Literal>(*src.literal()));
  if (src.metadata() != nullptr) *out->mutable_metadata() = *src.metadata();
  if (src.sharding() != nullptr) out->set_sharding(std::make_unique<Sharding>(*src.sharding()));
  if (src.frontend_attributes() != nullptr) {
    *out->mutable_frontend_attributes() = *src.frontend_attributes();
  }
  out->set_backend_config(src.backend_config());
  if (src.attrs() != nullptr) *out->mutable_attrs() = *src.attrs();
  out->set_async_sugar(src.async_sugar());
  return out;
}

void Link(const Instruction& src, Instruction* out, const InstrMap& imap, const CompMap& cmap) {
  for (const Instruction* op : src.operands()) out->mutable_operands()->push_back(imap.at(op));
  for (const Computation* c : src.called_computations()) {
    auto it = cmap.find(c);
    out->mutable_called_computations()->push_back(it == cmap.end() ? nullptr : it->second);
  }
  for (const Instruction* p : src.control_predecessors()) {
    auto it = imap.find(p);
    // A predecessor that became a parameter orders nothing any more.
    if (it != imap.end() && it->second->opcode() == p->opcode()) {
      out->mutable_control_predecessors()->push_back(it->second);
    }
  }
}

void CollectCalled(const Computation* c, std::set<const Computation*>* out) {
  if (c == nullptr || !out->insert(c).second) return;
  for (const Instruction* i : c->instructions()) {
    for (const Computation* callee : i->called_computations()) CollectCalled(callee, out);
  }
}

}  // namespace

absl::StatusOr<ExtractedModule> ExtractModule(const Module& module, const Instruction& root,
                                              int height) {
  const Computation* comp = root.parent();
  bool owned = false;
  for (const auto& c : module.computations()) owned = owned || c.get() == comp;
  if (comp == nullptr || !owned) {
    return absl::InvalidArgumentError(
        StrCat("instruction %", root.name(), " does not belong to module ", module.name()));
  }
  // Shortest operand distance from the root.
  std::unordered_map<const Instruction*, int> depth;
  std::deque<const Instruction*> queue{&root};
  depth[&root] = 0;
  while (!queue.empty()) {
    const Instruction* i = queue.front();
    queue.pop_front();
    for (const Instruction* op : i->operands()) {
      if (depth.count(op) == 0) {
        depth[op] = depth[i] + 1;
        queue.push_back(op);
      }
    }
  }
  // Within the height, plus the constants those instructions read directly.
  std::set<const Instruction*> keep;
  for (const auto& [i, d] : depth) {
    if (height < 0 || d <= height) keep.insert(i);
  }
  for (const Instruction* i : std::vector<const Instruction*>(keep.begin(), keep.end())) {
    if (i->opcode() == Opcode::kParameter) continue;
    for (const Instruction* op : i->operands()) {
      if (op->opcode() == Opcode::kConstant) keep.insert(op);
    }
  }
  auto kept = [&](const Instruction* i) { return keep.count(i) > 0; };
  // Values the kept instructions read but the piece does not compute become parameters.
  std::set<const Instruction*> boundary;
  for (const Instruction* i : comp->instructions()) {
    if (!kept(i) || i->opcode() == Opcode::kParameter) continue;
    for (const Instruction* op : i->operands()) {
      if (!kept(op)) boundary.insert(op);
    }
  }

  ExtractedModule out;
  out.module = std::make_unique<Module>(StrCat(module.name(), ".", root.name()));
  Module* dst = out.module.get();
  dst->config().replica_count = module.config().replica_count;
  dst->config().num_partitions = module.config().num_partitions;
  dst->config().frontend_attributes = module.config().frontend_attributes;

  // Called computations, whole, in the source's definition order (callees first).
  std::set<const Computation*> called;
  for (const Instruction* i : comp->instructions()) {
    if (!kept(i) || i->opcode() == Opcode::kParameter) continue;
    for (const Computation* c : i->called_computations()) CollectCalled(c, &called);
  }
  CompMap cmap;
  for (const auto& c : module.computations()) {
    if (called.count(c.get()) == 0) continue;
    auto copy = std::make_unique<Computation>(c->name());
    copy->set_execution_thread(c->execution_thread());
    cmap[c.get()] = copy.get();
    dst->AddComputation(std::move(copy));
  }
  for (const auto& c : module.computations()) {
    auto it = cmap.find(c.get());
    if (it == cmap.end()) continue;
    InstrMap imap;
    for (const Instruction* i : c->instructions()) imap[i] = CopyShell(*i, dst);
    for (const Instruction* i : c->instructions()) {
      Link(*i, imap[i], imap, cmap);
      it->second->AddInstruction(imap[i]);
    }
    if (c->root() != nullptr) it->second->set_root(imap.at(c->root()));
  }

  auto entry = std::make_unique<Computation>(comp->name());
  entry->set_execution_thread(comp->execution_thread());
  InstrMap imap;
  int64_t next_parameter = 0;
  std::vector<std::pair<const Instruction*, Instruction*>> to_link;
  for (const Instruction* i : comp->instructions()) {
    const bool as_parameter =
        boundary.count(i) > 0 || (kept(i) && i->opcode() == Opcode::kParameter);
    if (as_parameter) {
      Instruction* p =
          dst->NewInstruction(Opcode::kParameter, i->name(), dst->InternShape(i->shape()));
      p->set_index(next_parameter++);
      if (i->opcode() == Opcode::kParameter && i->metadata() != nullptr) {
        *p->mutable_metadata() = *i->metadata();
      }
      imap[i] = p;
      entry->AddInstruction(p);
      out.parameter_sources.push_back(i);
    } else if (kept(i)) {
      Instruction* copy = CopyShell(*i, dst);
      imap[i] = copy;
      to_link.emplace_back(i, copy);
      entry->AddInstruction(copy);
    }
  }
  for (auto& [src, copy] : to_link) Link(*src, copy, imap, cmap);
  entry->set_root(imap.at(&root));
  Computation* e = dst->AddComputation(std::move(entry));
  dst->set_entry(e);
  return out;
}

absl::StatusOr<const Instruction*> FindInstructionByName(const Module& module,
                                                         const std::string& name_in) {
  std::string name = !name_in.empty() && name_in[0] == '%' ? name_in.substr(1) : name_in;
  if (module.entry() != nullptr) {
    if (const Instruction* i = module.entry()->FindInstruction(name)) return i;
  }
  for (const auto& c : module.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  std::vector<std::string> similar;
  for (const auto& c : module.computations()) {
    for (const Instruction* i : c->instructions()) {
      if (similar.size() < 5 && !name.empty() && i->name().find(name) != std::string::npos) {
        similar.push_back(i->name());
      }
    }
  }
  std::string hint;
  for (const std::string& s : similar) StrAppend(&hint, hint.empty() ? "; similar: " : ", ", s);
  return absl::NotFoundError(
      StrCat("module ", module.name(), " has no instruction named '", name, "'", hint));
}

}  // namespace hlowb
