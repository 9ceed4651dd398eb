#include "core/passes/buffer_assignment.h"

#include "core/passes/copy_insertion.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "core/analysis/cost_model.h"
#include "core/passes/copy_insertion.h"
#include "core/passes/hlo_memory_scheduler.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {

bool TakesOverInPlace(const BufferAssignment& ba, const LogicalBuffer& from,
                      const LogicalBuffer& to);

std::string_view AllocationKindName(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kParameter:
      return "parameter";
    case AllocationKind::kConstant:
      return "constant";
    case AllocationKind::kOutput:
      return "output";
    case AllocationKind::kThreadLocal:
      return "thread-local";
    case AllocationKind::kTemp:
      return "temp";
  }
  return "temp";
}

std::string HumanReadableNumBytes(int64_t bytes) {
  if (bytes == std::numeric_limits<int64_t>::min()) return "-8E";
  const char* neg = bytes < 0 ? "-" : "";
  if (bytes < 0) bytes = -bytes;
  char buf[64];
  if (bytes < 1024) {
    std::snprintf(buf, sizeof(buf), "%s%lldB", neg, static_cast<long long>(bytes));
    return buf;
  }
  static const char kUnits[] = "KMGTPE";
  const char* unit = kUnits;
  while (bytes >= 1024LL * 1024LL) {
    bytes /= 1024;
    ++unit;
  }
  std::snprintf(buf, sizeof(buf), "%s%.2f%ciB", neg, static_cast<double>(bytes) / 1024.0, *unit);
  return buf;
}

namespace {

std::string IndexString(const ShapeIndex& index) {
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i) {
    if (i) out += ",";
    StrAppend(&out, index[i]);
  }
  out += "}";
  return out;
}

int64_t NodeCount(const Shape& shape) {
  int64_t n = 1;
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes()) n += NodeCount(s);
  }
  return n;
}

// Pre-order node number of `index` in `shape`, or -1 when the index is not in the shape.
int64_t NodeNumber(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  int64_t n = 0;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_count()) return -1;
    n += 1;
    for (int64_t k = 0; k < i; ++k) n += NodeCount(s->tuple_shape(static_cast<int>(k)));
    s = &s->tuple_shape(static_cast<int>(i));
  }
  return n;
}

template <typename F>
void ForEachNode(const Shape& shape, ShapeIndex* index, const F& f) {
  f(shape, *index);
  if (shape.IsTuple()) {
    for (int i = 0; i < shape.tuple_count(); ++i) {
      index->push_back(i);
      ForEachNode(shape.tuple_shape(i), index, f);
      index->pop_back();
    }
  }
}

ShapeIndex Prepend(int64_t first, const ShapeIndex& rest) {
  ShapeIndex out;
  out.reserve(rest.size() + 1);
  out.push_back(first);
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

ShapeIndex Tail(const ShapeIndex& index) { return ShapeIndex(index.begin() + 1, index.end()); }

int64_t RoundUp(int64_t x, int64_t a) { return a <= 1 ? x : (x + a - 1) / a * a; }

struct UnionFind {
  std::vector<int64_t> parent;
  std::vector<char> has_param, has_constant;
  int64_t Add(bool param, bool constant) {
    parent.push_back(static_cast<int64_t>(parent.size()));
    has_param.push_back(param);
    has_constant.push_back(constant);
    return parent.back();
  }
  int64_t Find(int64_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  void Union(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return;
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    if (b < a) std::swap(a, b);
    parent[b] = a;
    has_param[a] = has_param[a] || has_param[b];
    has_constant[a] = has_constant[a] || has_constant[b];
  }
};

bool CallsSequentially(Opcode op) {
  return op == Opcode::kWhile || op == Opcode::kConditional || op == Opcode::kCall ||
         op == Opcode::kAsyncStart;
}

}  // namespace

int64_t BufferAssignment::BytesOfKind(AllocationKind kind) const {
  int64_t total = 0;
  for (const BufferAllocation& a : allocations_) {
    if (a.kind == kind) total += a.size;
  }
  return total;
}

int64_t BufferAssignment::total_allocation_bytes() const {
  int64_t total = 0;
  for (const BufferAllocation& a : allocations_) total += a.size;
  return total;
}

int64_t BufferAssignment::ValueAt(const Instruction* instruction, const ShapeIndex& index) const {
  auto it = node_base_.find(instruction);
  if (it == node_base_.end()) return -1;
  int64_t node = NodeNumber(instruction->shape(), index);
  if (node < 0) return -1;
  return pos_value_[it->second + node];
}

std::optional<AllocationSlice> BufferAssignment::GetSlice(const Instruction* instruction,
                                                          const ShapeIndex& index) const {
  int64_t v = ValueAt(instruction, index);
  if (v < 0 || !values_[v].allocatable) return std::nullopt;
  const LogicalBuffer& b = buffers_[values_[v].buffer];
  if (b.allocation < 0) return std::nullopt;
  return AllocationSlice{b.allocation, b.offset, values_[v].size};
}

// ----- assignment -----

absl::StatusOr<BufferAssignment> AssignBuffers(const Module& module,
                                               const BufferAssignmentOptions& options) {
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("buffer assignment: module ", module.name(), " has no entry computation"));
  }
  if (!module.config().is_scheduled) {
    return absl::FailedPreconditionError(
        StrCat("buffer assignment: module ", module.name(),
               " is not scheduled (run hlo-memory-scheduler first, or give the module "
               "is_scheduled=true when its text order is its schedule)"));
  }
  BufferAssignment ba;
  ba.module_ = &module;
  absl::flat_hash_map<const Computation*, CallContext> contexts = ComputeCallContexts(module);
  const Computation* entry = module.entry();
  auto context_of = [&](const Computation* c) {
    auto it = contexts.find(c);
    return it == contexts.end() ? CallContext::kUnreachable : it->second;
  };
  auto allocated = [&](const Computation* c) {
    CallContext ctx = context_of(c);
    return ctx == CallContext::kSequential || ctx == CallContext::kEmbedded;
  };

  // Users within each allocated computation.
  auto& users = ba.users_;
  for (const auto& comp : module.computations()) {
    if (!allocated(comp.get())) continue;
    for (const Instruction* instr : comp->instructions()) {
      for (const Instruction* op : instr->operands()) {
        std::vector<const Instruction*>& u = users[op];
        if (u.empty() || u.back() != instr) {
          if (std::find(u.begin(), u.end(), instr) == u.end()) u.push_back(instr);
        }
      }
    }
  }

  // 1. Values and positions.
  UnionFind uf;
  auto pos = [&](const Instruction* instr, const ShapeIndex& index) -> int64_t {
    if (instr == nullptr) return -1;
    return ba.ValueAt(instr, index);
  };
  auto forwarded = [&](const Instruction* instr, const ShapeIndex& index) -> int64_t {
    auto op0 = [&]() -> const Instruction* {
      return instr->operand_count() > 0 ? instr->operand(0) : nullptr;
    };
    switch (instr->opcode()) {
      case Opcode::kGetTupleElement:
        return pos(op0(), Prepend(instr->tuple_index(), index));
      case Opcode::kTuple:
        if (index.empty() || index[0] >= instr->operand_count()) return -1;
        return pos(instr->operand(static_cast<int>(index[0])), Tail(index));
      case Opcode::kBitcast:
      case Opcode::kAddDependency:
      case Opcode::kDomain:
      case Opcode::kOptimizationBarrier:
        return pos(op0(), index);
      case Opcode::kCopyStart:
        if (!index.empty() && index[0] == 1) return pos(op0(), Tail(index));
        return -1;
      case Opcode::kCopyDone:
        return pos(op0(), Prepend(0, index));
      case Opcode::kAsyncDone:
        return pos(op0(), Prepend(1, index));
      case Opcode::kAsyncUpdate:
        return pos(op0(), index);
      case Opcode::kAsyncStart:
        if (index.size() >= 2 && index[0] == 0 && index[1] < instr->operand_count()) {
          return pos(instr->operand(static_cast<int>(index[1])),
                     ShapeIndex(index.begin() + 2, index.end()));
        }
        return -1;
      case Opcode::kAllReduceDone:
        return pos(op0(), index);
      case Opcode::kAllGatherDone:
      case Opcode::kCollectivePermuteDone:
        if (op0() && op0()->shape().IsTuple()) return pos(op0(), Prepend(1, index));
        return pos(op0(), index);
      case Opcode::kRecvDone:
        if (!index.empty() && index[0] == 0) return pos(op0(), index);
        return -1;
      default:
        return -1;
    }
  };
  int64_t total_nodes = 0;
  for (const auto& comp : module.computations()) {
    if (!allocated(comp.get())) continue;
    for (const Instruction* instr : comp->instructions()) {
      ba.node_base_[instr] = total_nodes;
      total_nodes += NodeCount(instr->shape());
    }
  }
  ba.pos_value_.assign(total_nodes, -1);
  for (const auto& comp : module.computations()) {
    if (!allocated(comp.get())) continue;
    const bool is_entry = comp.get() == entry;
    for (const Instruction* instr : comp->instructions()) {
      const int64_t base = ba.node_base_[instr];
      int64_t node = 0;
      ShapeIndex index;
      ForEachNode(instr->shape(), &index, [&](const Shape& sub, const ShapeIndex& idx) {
        int64_t v = forwarded(instr, idx);
        if (v < 0) {
          LogicalValue value;
          value.id = static_cast<int64_t>(ba.values_.size());
          value.instruction = instr;
          value.index = idx;
          value.shape = &sub;
          if (sub.IsTuple()) {
            value.size = options.pointer_size * sub.tuple_count();
          } else if (sub.IsArray()) {
            value.size = std::max<int64_t>(0, ShapeByteSize(sub));
          } else {
            value.size = 0;
            value.allocatable = false;
          }
          v = value.id;
          uf.Add(is_entry && instr->opcode() == Opcode::kParameter,
                 instr->opcode() == Opcode::kConstant);
          ba.values_.push_back(std::move(value));
        }
        ba.pos_value_[base + node] = v;
        ba.values_[v].positions.push_back({instr, idx});
        ++node;
      });
    }
  }

  // 2. Aliasing.
  auto union_all = [&](const Instruction* a, const ShapeIndex& a_prefix, const Instruction* b,
                       const ShapeIndex& b_prefix, const Shape& shape) {
    if (a == nullptr || b == nullptr) return;
    ShapeIndex index;
    ForEachNode(shape, &index, [&](const Shape&, const ShapeIndex& idx) {
      ShapeIndex ai = a_prefix;
      ai.insert(ai.end(), idx.begin(), idx.end());
      ShapeIndex bi = b_prefix;
      bi.insert(bi.end(), idx.begin(), idx.end());
      uf.Union(pos(a, ai), pos(b, bi));
    });
  };
  auto param_of = [](const Computation* c, int i) -> const Instruction* {
    return c && i < c->parameter_count() ? c->parameter(i) : nullptr;
  };
  for (const auto& comp : module.computations()) {
    if (context_of(comp.get()) != CallContext::kSequential) continue;
    for (const Instruction* instr : comp->instructions()) {
      const auto& called = instr->called_computations();
      switch (instr->opcode()) {
        case Opcode::kWhile:
          if (instr->operand_count() == 1 && called.size() == 2) {
            union_all(instr, {}, instr->operand(0), {}, instr->shape());
            union_all(instr, {}, param_of(called[0], 0), {}, instr->shape());
            union_all(instr, {}, param_of(called[1], 0), {}, instr->shape());
            if (called[1]) union_all(instr, {}, called[1]->root(), {}, instr->shape());
          }
          break;
        case Opcode::kConditional:
          for (size_t k = 0; k < called.size(); ++k) {
            if (called[k] == nullptr) continue;
            union_all(instr, {}, called[k]->root(), {}, instr->shape());
            if (static_cast<int>(k) + 1 < instr->operand_count()) {
              const Instruction* op = instr->operand(static_cast<int>(k) + 1);
              union_all(param_of(called[k], 0), {}, op, {}, op->shape());
            }
          }
          break;
        case Opcode::kCall:
          if (called.size() == 1 && called[0]) {
            union_all(instr, {}, called[0]->root(), {}, instr->shape());
            for (int i = 0; i < instr->operand_count(); ++i) {
              union_all(param_of(called[0], i), {}, instr->operand(i), {},
                        instr->operand(i)->shape());
            }
          }
          break;
        case Opcode::kAsyncStart:
          if (!called.empty() && called[0] &&
              context_of(called[0]) == CallContext::kSequential) {
            for (int i = 0; i < instr->operand_count(); ++i) {
              union_all(param_of(called[0], i), {}, instr->operand(i), {},
                        instr->operand(i)->shape());
            }
            const Shape* out = instr->shape().Subshape({1});
            if (out && called[0]->root()) union_all(instr, {1}, called[0]->root(), {}, *out);
          }
          break;
        default:
          break;
      }
    }
  }
  // Entry input/output aliasing: never joins two parameters or a constant.
  for (const InputOutputAlias& a : module.config().input_output_alias) {
    const Instruction* param = param_of(entry, static_cast<int>(a.parameter_number));
    int64_t pv = pos(param, a.parameter_index);
    int64_t ov = pos(entry->root(), a.output_index);
    if (pv < 0 || ov < 0) {
      return absl::InvalidArgumentError(
          StrCat("buffer assignment: input_output_alias output ", IndexString(a.output_index),
                 " / parameter ", a.parameter_number, " ", IndexString(a.parameter_index),
                 " names no value of module ", module.name()));
    }
    int64_t pr = uf.Find(pv);
    int64_t orr = uf.Find(ov);
    if (pr == orr) continue;
    if (uf.has_param[orr] || uf.has_constant[orr]) {
      if (a.must_alias) {
        return absl::FailedPreconditionError(
            StrCat("buffer assignment: output ", IndexString(a.output_index),
                   " must alias parameter ", a.parameter_number, " but it is another "
                   "parameter's or a constant's buffer (run copy-insertion first)"));
      }
      continue;
    }
    uf.Union(pv, ov);
  }
  // In-place updates whose operand value nothing else reads.
  auto try_in_place = [&](const Instruction* instr, const ShapeIndex& out_index,
                          int operand_number, const ShapeIndex& operand_index) {
    if (operand_number < 0 || operand_number >= instr->operand_count()) return;
    const Instruction* op = instr->operand(operand_number);
    int64_t ov = pos(op, operand_index);
    int64_t rv = pos(instr, out_index);
    if (ov < 0 || rv < 0) return;
    const LogicalValue& value = ba.values_[ov];
    if (value.instruction != op || op->IsRoot() || op->opcode() == Opcode::kParameter ||
        op->opcode() == Opcode::kConstant) {
      return;
    }
    auto uit = users.find(op);
    if (uit == users.end() || uit->second.size() != 1 || uit->second[0] != instr) return;
    int uses = 0;
    for (const Instruction* o : instr->operands()) uses += o == op ? 1 : 0;
    if (uses != 1) return;
    int64_t cls = uf.Find(ov);
    if (uf.has_param[cls] || uf.has_constant[cls]) return;
    if (ba.values_[ov].size != ba.values_[rv].size) return;
    uf.Union(ov, rv);
  };
  for (const auto& comp : module.computations()) {
    if (context_of(comp.get()) != CallContext::kSequential) continue;
    for (const Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kDynamicUpdateSlice) {
        try_in_place(instr, {}, 0, {});
      } else if (instr->attrs() != nullptr &&
                 (instr->opcode() == Opcode::kFusion || instr->opcode() == Opcode::kCustomCall)) {
        for (const OutputOperandAlias& alias : instr->attrs()->output_operand_aliasing) {
          try_in_place(instr, alias.output_index, static_cast<int>(alias.operand),
                       alias.operand_index);
        }
      }
    }
  }

  // 3. Flattened schedule.
  absl::flat_hash_map<const Instruction*, std::pair<int64_t, int64_t>> times;
  absl::flat_hash_map<const Computation*, std::pair<int64_t, int64_t>> spans;
  absl::flat_hash_set<const Computation*> on_stack;
  constexpr int64_t kMaxSequence = 20 * 1000 * 1000;
  absl::Status flatten_status;
  std::function<void(const Computation*)> flatten = [&](const Computation* comp) {
    if (!flatten_status.ok()) return;
    if (!on_stack.insert(comp).second) {
      flatten_status = absl::InvalidArgumentError(
          StrCat("buffer assignment: computation ", comp->name(), " calls itself"));
      return;
    }
    const int64_t start = static_cast<int64_t>(ba.sequence_.size());
    for (const Instruction* instr : comp->instructions()) {
      if (CallsSequentially(instr->opcode())) {
        for (const Computation* callee : instr->called_computations()) {
          if (callee && context_of(callee) == CallContext::kSequential) flatten(callee);
        }
      }
      if (!flatten_status.ok()) return;
      if (static_cast<int64_t>(ba.sequence_.size()) >= kMaxSequence) {
        flatten_status = absl::ResourceExhaustedError(
            StrCat("buffer assignment: the flattened schedule of ", module.name(),
                   " exceeds ", kMaxSequence, " instructions"));
        return;
      }
      const int64_t t = static_cast<int64_t>(ba.sequence_.size());
      ba.sequence_.push_back(instr);
      auto [it, inserted] = times.try_emplace(instr, t, t);
      if (!inserted) {
        it->second.first = std::min(it->second.first, t);
        it->second.second = std::max(it->second.second, t);
      }
    }
    const int64_t end = static_cast<int64_t>(ba.sequence_.size()) - 1;
    auto [sit, sinserted] = spans.try_emplace(comp, start, end);
    if (!sinserted) {
      sit->second.first = std::min(sit->second.first, start);
      sit->second.second = std::max(sit->second.second, end);
    }
    on_stack.erase(comp);
  };
  flatten(entry);
  if (!flatten_status.ok()) return flatten_status;
  const int64_t last_time = static_cast<int64_t>(ba.sequence_.size()) - 1;

  // 4. Live ranges of values.
  for (LogicalValue& value : ba.values_) {
    auto dt = times.find(value.instruction);
    if (dt == times.end()) continue;
    value.has_live_range = true;
    const bool entry_param =
        value.instruction->opcode() == Opcode::kParameter && value.instruction->parent() == entry;
    value.start = entry_param ? 0 : dt->second.first;
    int64_t end = entry_param ? last_time : dt->second.second;
    for (const auto& [instr, idx] : value.positions) {
      auto it = times.find(instr);
      if (it != times.end()) end = std::max(end, it->second.second);
      auto uit = users.find(instr);
      if (uit != users.end()) {
        for (const Instruction* u : uit->second) {
          auto ut = times.find(u);
          if (ut != times.end()) end = std::max(end, ut->second.second);
        }
      }
      if (instr->IsRoot()) {
        if (instr->parent() == entry) {
          end = last_time;
        } else {
          auto sp = spans.find(instr->parent());
          if (sp != spans.end()) end = std::max(end, sp->second.second);
        }
      }
    }
    value.end = end;
  }

  // 5. Buffers.
  absl::flat_hash_map<int64_t, int64_t> class_to_buffer;
  for (LogicalValue& value : ba.values_) {
    int64_t cls = uf.Find(value.id);
    auto [it, inserted] =
        class_to_buffer.try_emplace(cls, static_cast<int64_t>(ba.buffers_.size()));
    if (inserted) {
      LogicalBuffer b;
      b.id = it->second;
      ba.buffers_.push_back(b);
    }
    LogicalBuffer& b = ba.buffers_[it->second];
    value.buffer = b.id;
    b.values.push_back(value.id);
    if (value.allocatable) b.size = std::max(b.size, value.size);
    if (value.has_live_range) {
      if (!b.has_live_range) {
        b.start = value.start;
        b.end = value.end;
        b.has_live_range = true;
      } else {
        b.start = std::min(b.start, value.start);
        b.end = std::max(b.end, value.end);
      }
    }
  }

  // 6. Allocations.
  struct BufferInfo {
    bool allocatable = false;
    bool entry_param = false;
    int64_t param_number = 0;
    ShapeIndex param_index;
    bool constant = false;
    bool embedded = true;
    bool live_out = false;
    bool output_root = false;
  };
  std::vector<BufferInfo> info(ba.buffers_.size());
  const Instruction* entry_root = entry->root();
  for (const LogicalBuffer& b : ba.buffers_) {
    BufferInfo& bi = info[b.id];
    for (int64_t vid : b.values) {
      const LogicalValue& v = ba.values_[vid];
      if (v.allocatable) bi.allocatable = true;
      const Instruction* instr = v.instruction;
      if (instr->opcode() == Opcode::kParameter && instr->parent() == entry) {
        ShapeIndex pi = v.index;
        const int64_t number = instr->parameter_number();
        if (!bi.entry_param || number < bi.param_number ||
            (number == bi.param_number && pi < bi.param_index)) {
          bi.param_number = instr->parameter_number();
          bi.param_index = pi;
        }
        bi.entry_param = true;
      }
      if (instr->opcode() == Opcode::kConstant) bi.constant = true;
      if (context_of(instr->parent()) == CallContext::kSequential) bi.embedded = false;
      for (const auto& [p, idx] : v.positions) {
        if (p == entry_root) {
          bi.live_out = true;
          if (idx.empty()) bi.output_root = true;
        }
      }
    }
  }
  auto new_allocation = [&](AllocationKind kind) -> BufferAllocation& {
    BufferAllocation a;
    a.index = static_cast<int64_t>(ba.allocations_.size());
    a.kind = kind;
    ba.allocations_.push_back(std::move(a));
    return ba.allocations_.back();
  };
  auto assign_whole = [&](LogicalBuffer& b, BufferAllocation& a, int64_t offset) {
    b.allocation = a.index;
    b.offset = offset;
    for (int64_t vid : b.values) {
      const LogicalValue& v = ba.values_[vid];
      if (v.allocatable) a.assigned.push_back({vid, offset, v.size});
    }
  };
  std::vector<int64_t> params, constants, thread_local_buffers, outputs, temps;
  for (const LogicalBuffer& b : ba.buffers_) {
    const BufferInfo& bi = info[b.id];
    if (!bi.allocatable) continue;
    if (bi.entry_param) {
      params.push_back(b.id);
    } else if (bi.constant) {
      constants.push_back(b.id);
    } else if (bi.embedded) {
      thread_local_buffers.push_back(b.id);
    } else if (bi.live_out && bi.output_root) {
      // The entry's result itself (its tuple table, or the array it returns) has its own
      // allocation, as XLA's "output shape is |...|" allocation.
      outputs.push_back(b.id);
    } else {
      // Temporaries and the result's elements share one heap: an output element may reuse the
      // space of a temporary that died before it was defined (XLA's maybe-live-out
      // allocations hold both).
      temps.push_back(b.id);
    }
  }
  std::sort(params.begin(), params.end(), [&](int64_t a, int64_t b) {
    return std::tie(info[a].param_number, info[a].param_index) <
           std::tie(info[b].param_number, info[b].param_index);
  });
  auto finish_single = [&](int64_t buffer, AllocationKind kind) {
    LogicalBuffer& b = ba.buffers_[buffer];
    BufferAllocation& a = new_allocation(kind);
    a.size = b.size;
    if (kind == AllocationKind::kParameter) {
      a.parameter_number = info[buffer].param_number;
      a.parameter_index = info[buffer].param_index;
    }
    a.maybe_live_out = info[buffer].live_out;
    if (info[buffer].output_root) a.output_root = entry_root;
    assign_whole(b, a, 0);
  };
  for (int64_t b : params) finish_single(b, AllocationKind::kParameter);
  for (int64_t b : constants) finish_single(b, AllocationKind::kConstant);
  for (int64_t b : thread_local_buffers) finish_single(b, AllocationKind::kThreadLocal);
  for (int64_t b : outputs) finish_single(b, AllocationKind::kOutput);

  // Temp heap: best fit, largest buffers first.
  if (!temps.empty()) {
    std::sort(temps.begin(), temps.end(), [&](int64_t a, int64_t b) {
      const LogicalBuffer& x = ba.buffers_[a];
      const LogicalBuffer& y = ba.buffers_[b];
      return std::make_tuple(-x.size, x.start, x.id) < std::make_tuple(-y.size, y.start, y.id);
    });
    BufferAllocation& heap = new_allocation(AllocationKind::kTemp);
    const int64_t heap_index = heap.index;
    struct Placed {
      int64_t start, end, offset, size, id;
    };
    std::vector<Placed> placed;
    std::vector<int64_t> handed_over;  // buffers a user took over in place
    placed.reserve(temps.size());
    std::vector<std::pair<int64_t, int64_t>> busy;
    // The smallest gap between the busy ranges that holds `size` bytes, else the end.
    auto best_fit = [&](int64_t size) {
      std::sort(busy.begin(), busy.end());
      int64_t cursor = 0;
      int64_t best = -1;
      int64_t best_gap = std::numeric_limits<int64_t>::max();
      for (const auto& [lo, hi] : busy) {
        if (lo > cursor && lo - cursor >= size && lo - cursor < best_gap) {
          best = cursor;
          best_gap = lo - cursor;
        }
        cursor = std::max(cursor, RoundUp(hi, options.alignment));
      }
      return best >= 0 ? best : cursor;
    };
    int64_t heap_size = 0;
    for (int64_t id : temps) {
      LogicalBuffer& b = ba.buffers_[id];
      const int64_t start = b.has_live_range ? b.start : 0;
      const int64_t end = b.has_live_range && !info[id].live_out ? b.end : last_time;
      int64_t offset = 0;
      if (b.size > 0) {
        busy.clear();
        // An operand this buffer's instruction overwrites in place (XLA shares an operand's
        // buffer with such a user): take its exact place when nothing else is in the way.
        const Placed* host = nullptr;
        for (const Placed& p : placed) {
          if (p.end == start && !info[p.id].live_out &&
              TakesOverInPlace(ba, ba.buffers_[p.id], b)) {
            host = &p;
            break;
          }
        }
        for (const Placed& p : placed) {
          if (&p == host) continue;
          if (p.size > 0 && p.start <= end && start <= p.end) {
            busy.push_back({p.offset, p.offset + p.size});
          }
        }
        offset = best_fit(b.size);
        if (host != nullptr) {
          bool free = true;
          for (const auto& [lo, hi] : busy) free &= hi <= host->offset || lo >= host->offset + b.size;
          if (free) {
            offset = host->offset;
            handed_over.push_back(host->id);
          } else {
            // Not free: place it as any other buffer, the host counted as busy.
            busy.push_back({host->offset, host->offset + host->size});
            offset = best_fit(b.size);
          }
        }
      }
      placed.push_back({start, end, offset, b.size, id});
      heap_size = std::max(heap_size, offset + b.size);
      b.allocation = heap_index;
      b.offset = offset;
    }
    BufferAllocation& h = ba.allocations_[heap_index];
    h.size = heap_size;
    for (int64_t id : temps) h.maybe_live_out |= info[id].live_out;
    for (int64_t id : temps) {
      const LogicalBuffer& b = ba.buffers_[id];
      for (int64_t vid : b.values) {
        const LogicalValue& v = ba.values_[vid];
        if (v.allocatable) h.assigned.push_back({vid, b.offset, v.size});
      }
    }
    // Peak of live temp bytes.
    std::vector<int64_t> delta(ba.sequence_.size() + 2, 0);
    for (int64_t id : temps) {
      const LogicalBuffer& b = ba.buffers_[id];
      if (!b.has_live_range) continue;
      const bool taken_over =
          std::find(handed_over.begin(), handed_over.end(), id) != handed_over.end();
      delta[b.start] += b.size;
      delta[taken_over ? b.end : b.end + 1] -= b.size;
    }
    int64_t live = 0;
    for (int64_t d : delta) {
      live += d;
      ba.peak_temp_bytes_ = std::max(ba.peak_temp_bytes_, live);
    }
  }
  for (BufferAllocation& a : ba.allocations_) {
    std::sort(a.assigned.begin(), a.assigned.end(),
              [](const BufferAllocation::Assigned& x, const BufferAllocation::Assigned& y) {
                return x.value < y.value;
              });
  }
  return ba;
}

// ----- checking -----

// True when `to`'s defining instruction writes its result in place over `from`, an operand it
// reads for the last time (same size, `from` ends where `to` starts): the two may share bytes.
bool TakesOverInPlace(const BufferAssignment& ba, const LogicalBuffer& from,
                      const LogicalBuffer& to) {
  if (!from.has_live_range || !to.has_live_range || from.end != to.start ||
      from.size != to.size || from.id == to.id) {
    return false;
  }
  for (int64_t tv : to.values) {
    const LogicalValue& def = ba.values()[tv];
    if (!def.has_live_range || def.start != to.start || !def.index.empty()) continue;
    if (!def.instruction->shape().IsArray()) continue;
    for (const Instruction* op : def.instruction->operands()) {
      if (!op->shape().IsArray()) continue;
      const int64_t vid = ba.ValueAt(op, {});
      if (vid < 0 || ba.values()[vid].buffer != from.id) continue;
      if (CanUpdateOperandInPlace(*def.instruction, *op)) return true;
    }
  }
  return false;
}

absl::Status CheckBufferAssignment(const BufferAssignment& assignment,
                                   const BufferAssignmentOptions& options) {
  const auto& values = assignment.values();
  const auto& buffers = assignment.buffers();
  std::vector<int> seen(values.size(), 0);
  for (const BufferAllocation& a : assignment.allocations()) {
    for (const BufferAllocation::Assigned& s : a.assigned) {
      if (s.value < 0 || s.value >= static_cast<int64_t>(values.size())) {
        return absl::InternalError(StrCat("allocation ", a.index, ": unknown value ", s.value));
      }
      const LogicalValue& v = values[s.value];
      const LogicalBuffer& b = buffers[v.buffer];
      if (++seen[s.value] > 1) {
        return absl::InternalError(StrCat("value ", v.instruction->name(), IndexString(v.index),
                                          " is assigned more than once"));
      }
      if (b.allocation != a.index || b.offset != s.offset) {
        return absl::InternalError(StrCat("value ", v.instruction->name(), IndexString(v.index),
                                          " is not at its buffer's place"));
      }
      if (s.offset < 0 || s.offset + s.size > a.size) {
        return absl::InternalError(StrCat("value ", v.instruction->name(), IndexString(v.index),
                                          " lies outside allocation ", a.index));
      }
      if (a.kind == AllocationKind::kTemp && options.alignment > 1 &&
          s.offset % options.alignment != 0) {
        return absl::InternalError(StrCat("value ", v.instruction->name(), IndexString(v.index),
                                          " is not aligned in allocation ", a.index));
      }
    }
    // Pairs that share bytes must share a buffer or never be live together.
    std::vector<BufferAllocation::Assigned> by_offset = a.assigned;
    std::sort(by_offset.begin(), by_offset.end(),
              [](const BufferAllocation::Assigned& x, const BufferAllocation::Assigned& y) {
                return x.offset < y.offset;
              });
    for (size_t i = 0; i < by_offset.size(); ++i) {
      const auto& x = by_offset[i];
      if (x.size == 0) continue;
      for (size_t j = i + 1; j < by_offset.size() && by_offset[j].offset < x.offset + x.size;
           ++j) {
        const auto& y = by_offset[j];
        if (y.size == 0) continue;
        const LogicalBuffer& bx = buffers[values[x.value].buffer];
        const LogicalBuffer& by = buffers[values[y.value].buffer];
        if (bx.id == by.id) continue;
        bool disjoint = bx.has_live_range && by.has_live_range &&
                        (bx.end < by.start || by.end < bx.start);
        // A user that writes its result in place over an operand it reads for the last time
        // takes that operand's bytes over at the instant it runs.
        // A user that writes its result in place over an operand it reads for the last time
        // takes that operand's bytes over at the instant it runs (same place, same size).
        if (!disjoint && x.offset == y.offset && x.size == y.size) {
          disjoint = TakesOverInPlace(assignment, bx, by) || TakesOverInPlace(assignment, by, bx);
        }
        if (!disjoint) {
          const LogicalValue& vx = values[x.value];
          const LogicalValue& vy = values[y.value];
          return absl::InternalError(
              StrCat("allocation ", a.index, ": ", vx.instruction->name(), IndexString(vx.index),
                     " [", x.offset, ",", x.offset + x.size, ") and ", vy.instruction->name(),
                     IndexString(vy.index), " [", y.offset, ",", y.offset + y.size,
                     ") overlap while both are live"));
        }
      }
    }
  }
  for (const LogicalValue& v : values) {
    if (v.allocatable && seen[v.id] == 0 && buffers[v.buffer].allocation >= 0) {
      return absl::InternalError(StrCat("value ", v.instruction->name(), IndexString(v.index),
                                        " has a buffer but no assignment"));
    }
  }
  return absl::OkStatus();
}

// ----- text -----

std::string BufferAssignment::ValueShortString(const LogicalValue& value) const {
  return StrCat("<", value.id, " ", value.instruction->name(),
                value.instruction->shape().IsTuple() ? IndexString(value.index) : "", " @0>");
}

std::string BufferAssignment::AllocationHeader(const BufferAllocation& alloc,
                                               bool human_size) const {
  std::string out = StrCat("allocation ", alloc.index, ": size ",
                           human_size ? HumanReadableNumBytes(alloc.size)
                                      : StrCat(alloc.size));
  if (alloc.kind == AllocationKind::kParameter) {
    const Computation* entry = module_->entry();
    const Instruction* param =
        alloc.parameter_number < entry->parameter_count()
            ? entry->parameter(static_cast<int>(alloc.parameter_number))
            : nullptr;
    StrAppend(&out, ", parameter ", alloc.parameter_number, ", shape |",
              param ? PrintShape(param->shape(), false) : std::string("<unknown shape>"),
              "| at ShapeIndex ", IndexString(alloc.parameter_index));
  }
  if (alloc.output_root != nullptr) {
    StrAppend(&out, ", output shape is |", PrintShape(alloc.output_root->shape(), false), "|");
  }
  if (alloc.kind == AllocationKind::kConstant) out += ", constant";
  if (alloc.kind == AllocationKind::kThreadLocal) out += ", thread-local";
  if (alloc.maybe_live_out) out += ", maybe-live-out";
  if (alloc.kind == AllocationKind::kTemp) out += ", preallocated-temp";
  out += ":\n";
  return out;
}

std::string BufferAssignment::ToString() const {
  std::string out = "BufferAssignment:\n";
  std::vector<int64_t> used;
  int64_t total = 0;
  for (const BufferAllocation& a : allocations_) {
    total += a.size;
    out += AllocationHeader(a, false);
    for (const BufferAllocation::Assigned& s : a.assigned) {
      const LogicalValue& v = values_[s.value];
      StrAppend(&out, " value: ", ValueShortString(v), " (size=", s.size, ",offset=", s.offset,
                "): ", PrintShape(*v.shape, true), "\n");
      used.push_back(s.value);
    }
  }
  StrAppend(&out, "\nTotal bytes used: ", total, " (", HumanReadableNumBytes(total), ")\n");
  out += "\nUsed values:\n";
  std::sort(used.begin(), used.end());
  for (int64_t id : used) {
    const LogicalValue& v = values_[id];
    StrAppend(&out, ValueShortString(v), "\n positions:\n");
    absl::flat_hash_set<const Instruction*> root_positions;
    for (const auto& [instr, idx] : v.positions) {
      StrAppend(&out, "  ", instr->name(), instr->shape().IsTuple() ? " " : "",
                instr->shape().IsTuple() ? IndexString(idx) : "", "\n");
      if (instr->IsRoot()) root_positions.insert(instr);
    }
    out += " uses:\n";
    for (const auto& [instr, idx] : v.positions) {
      auto uit = users_.find(instr);
      if (uit == users_.end()) continue;
      for (const Instruction* user : uit->second) {
        bool may_use = true;
        if (user->opcode() == Opcode::kGetTupleElement || user->opcode() == Opcode::kCopy) {
          may_use = idx.empty();
        } else if (user->opcode() == Opcode::kTuple || user->opcode() == Opcode::kDomain) {
          may_use = false;
        }
        if (!may_use && !(user->IsRoot() && root_positions.contains(user))) continue;
        for (int k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != instr) continue;
          StrAppend(&out, "  ", user->name(), ", operand ", k,
                    instr->shape().IsTuple() ? " " : "",
                    instr->shape().IsTuple() ? IndexString(idx) : "", "\n");
        }
      }
    }
    StrAppend(&out, " from instruction: ", PrintInstruction(*v.instruction), "\n");
  }
  out += "\n";
  out += LiveRangeString();
  return out;
}

std::string BufferAssignment::LiveRangeString() const {
  std::string out = StrCat("HloLiveRange (max ", static_cast<int64_t>(sequence_.size()) - 1,
                           "):\n  InstructionSequence:\n");
  for (size_t i = 0; i < sequence_.size(); ++i) {
    StrAppend(&out, "    ", i, ":", sequence_[i]->name(), "\n");
  }
  out += "  BufferLiveRange:\n";
  std::vector<int64_t> delta(sequence_.size() + 2, 0);
  for (const LogicalValue& v : values_) {
    if (!v.has_live_range || !v.allocatable) continue;
    StrAppend(&out, "    ", v.instruction->name(), IndexString(v.index), ":", v.start, "-",
              v.end, "\n");
    delta[v.start] += v.size;
    delta[v.end + 1] -= v.size;
  }
  int64_t live = 0;
  int64_t peak = -1;
  int64_t peak_time = 0;
  for (size_t t = 0; t < sequence_.size(); ++t) {
    live += delta[t];
    if (live > peak) {
      peak = live;
      peak_time = static_cast<int64_t>(t);
    }
  }
  StrAppend(&out, "  Live ranges at ", peak_time, " (peak):\n");
  for (const LogicalValue& v : values_) {
    if (!v.has_live_range || !v.allocatable) continue;
    if (v.start <= peak_time && peak_time <= v.end) {
      StrAppend(&out, "    ", v.instruction->name(), IndexString(v.index), ": ", v.size,
                " bytes\n");
    }
  }
  return out;
}

std::string BufferAssignment::MemoryUsageReport(double percentile, int64_t more_than_k) const {
  std::string out;
  const int64_t total = total_allocation_bytes();
  StrAppend(&out, "Total bytes used: ", total, " (", HumanReadableNumBytes(total), ")\n");
  out += "\nAllocations sorted by size:\n\n";
  std::vector<const BufferAllocation*> sorted;
  for (const BufferAllocation& a : allocations_) sorted.push_back(&a);
  std::sort(sorted.begin(), sorted.end(), [](const BufferAllocation* a, const BufferAllocation* b) {
    if (a->size != b->size) return a->size > b->size;
    return a->index < b->index;
  });
  out += "cumulative_size; total_size - cumulative_size; allocation\n";
  out += std::string(78, '-') + "\n";
  char buf[256];
  int64_t cumulative = 0;
  int64_t shown = 0;
  for (const BufferAllocation* a : sorted) {
    cumulative += a->size;
    double pct = total > 0 ? 100.0 * static_cast<double>(cumulative) / static_cast<double>(total)
                           : 0.0;
    std::snprintf(buf, sizeof(buf), "%10s(%3.0f%%); %10s; ",
                  HumanReadableNumBytes(cumulative).c_str(), pct,
                  HumanReadableNumBytes(total - cumulative).c_str());
    out += buf;
    out += AllocationHeader(*a, true);
    ++shown;
    if (shown > more_than_k &&
        static_cast<double>(total - cumulative) < static_cast<double>(total) * percentile) {
      std::snprintf(buf, sizeof(buf),
                    "The rest %lld allocations are less than %d%% of the total size and not "
                    "shown.\n",
                    static_cast<long long>(sorted.size()) - static_cast<long long>(shown),
                    static_cast<int>(percentile * 100));
      out += buf;
      break;
    }
  }
  out += "\n\nAllocations sorted by size with their values:\n";
  for (const BufferAllocation* a : sorted) {
    if (a->assigned.size() == 1) {
      out += AllocationHeader(*a, true);
      continue;
    }
    out += AllocationHeader(*a, true);
    out += "\n";
    // Values grouped by offset, largest group first.
    struct Group {
      int64_t offset = 0;
      int64_t size = 0;
      std::vector<int64_t> values;
    };
    std::vector<Group> groups;
    absl::flat_hash_map<int64_t, size_t> by_offset;
    for (const BufferAllocation::Assigned& s : a->assigned) {
      auto [it, inserted] = by_offset.try_emplace(s.offset, groups.size());
      if (inserted) groups.push_back(Group{s.offset, 0, {}});
      Group& g = groups[it->second];
      g.size = std::max(g.size, s.size);
      g.values.push_back(s.value);
    }
    int64_t group_total = 0;
    for (const Group& g : groups) group_total += g.size;
    std::stable_sort(groups.begin(), groups.end(), [](const Group& x, const Group& y) {
      if (x.size != y.size) return x.size > y.size;
      return x.offset < y.offset;
    });
    out += "\tcumulative_size;       size;       offset; used_by_n_values; shapes_list\n";
    out += "\t" + std::string(60, '-') + "\n";
    int64_t cum = 0;
    int64_t index = 0;
    for (const Group& g : groups) {
      cum += g.size;
      double pct = group_total > 0
                       ? 100.0 * static_cast<double>(cum) / static_cast<double>(group_total)
                       : 0.0;
      std::snprintf(buf, sizeof(buf), "\t%9s(%3.0f%%); %10s; %12lld; %16lld; ",
                    HumanReadableNumBytes(cum).c_str(), pct,
                    HumanReadableNumBytes(g.size).c_str(), static_cast<long long>(g.offset),
                    static_cast<long long>(g.values.size()));
      out += buf;
      std::vector<std::pair<std::string, int64_t>> shapes;
      for (int64_t vid : g.values) {
        std::string s = PrintShape(*values_[vid].shape, false);
        auto it = std::find_if(shapes.begin(), shapes.end(),
                               [&](const auto& p) { return p.first == s; });
        if (it == shapes.end()) {
          shapes.push_back({s, 1});
        } else {
          ++it->second;
        }
      }
      for (size_t k = 0; k < shapes.size(); ++k) {
        if (k) out += ", ";
        if (shapes[k].second == 1) {
          out += shapes[k].first;
        } else {
          StrAppend(&out, shapes[k].second, "\xC3\x97", shapes[k].first);
        }
      }
      out += "\n";
      if (++index > more_than_k && static_cast<double>(group_total - cum) <
                                       static_cast<double>(group_total) * percentile) {
        std::snprintf(buf, sizeof(buf),
                      "\tThe rest %lld values are less than %d%% of the total size and not "
                      "shown.\n",
                      static_cast<long long>(groups.size()) - static_cast<long long>(index),
                      static_cast<int>(percentile * 100));
        out += buf;
        break;
      }
    }
    out += "\n";
  }
  // Totals per kind.
  auto line = [&](const char* label, int64_t bytes) {
    std::snprintf(buf, sizeof(buf), "%33s: %10s\n", label, HumanReadableNumBytes(bytes).c_str());
    out += buf;
  };
  int64_t live_out = 0;
  for (const BufferAllocation& a : allocations_) {
    if (a.maybe_live_out) live_out += a.size;
  }
  out += "\nBufferAssignment stats:\n";
  line("parameter allocation", parameter_bytes());
  line("constant allocation", constant_bytes());
  line("maybe_live_out allocation", live_out);
  line("output allocation", output_bytes());
  line("thread-local allocation", thread_local_bytes());
  line("preallocated temp allocation", temp_bytes());
  line("peak live temp buffers", peak_temp_bytes_);
  line("total allocation", total_allocation_bytes());
  return out;
}

}  // namespace hlowb
