#include "core/passes/hlo_memory_scheduler.h"

#include <algorithm>
#include <deque>
#include <set>
#include <tuple>
#include <utility>

#include "core/analysis/cost_model.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"

namespace hlowb {

absl::flat_hash_map<const Computation*, CallContext> ComputeCallContexts(const Module& module) {
  absl::flat_hash_map<const Computation*, CallContext> result;
  auto rank = [](CallContext c) {
    switch (c) {
      case CallContext::kSequential:
        return 0;
      case CallContext::kEmbedded:
        return 1;
      case CallContext::kFused:
        return 2;
      case CallContext::kUnreachable:
        return 3;
    }
    return 3;
  };
  std::deque<const Computation*> work;
  auto reach = [&](const Computation* c, CallContext ctx) {
    if (c == nullptr) return;
    auto it = result.find(c);
    if (it != result.end() && rank(it->second) <= rank(ctx)) return;
    result[c] = ctx;
    work.push_back(c);
  };
  reach(module.entry(), CallContext::kSequential);
  while (!work.empty()) {
    const Computation* comp = work.front();
    work.pop_front();
    CallContext ctx = result[comp];
    for (const Instruction* instr : comp->instructions()) {
      for (const Computation* callee : instr->called_computations()) {
        CallContext callee_ctx;
        if (ctx == CallContext::kFused || instr->opcode() == Opcode::kFusion) {
          callee_ctx = CallContext::kFused;
        } else if (ctx == CallContext::kSequential &&
                   (instr->opcode() == Opcode::kWhile || instr->opcode() == Opcode::kConditional ||
                    instr->opcode() == Opcode::kCall || instr->opcode() == Opcode::kAsyncStart)) {
          callee_ctx = CallContext::kSequential;
        } else {
          callee_ctx = CallContext::kEmbedded;
        }
        reach(callee, callee_ctx);
      }
    }
  }
  for (const auto& comp : module.computations()) {
    result.try_emplace(comp.get(), CallContext::kUnreachable);
  }
  return result;
}

namespace {

// True for instructions whose result is (part of) an operand's buffer.
bool AliasesOperand(Opcode op) {
  switch (op) {
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kWhile:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
    case Opcode::kTuple:
      return true;
    default:
      return false;
  }
}

int64_t TupleTableBytes(const Shape& shape) {
  if (!shape.IsTuple()) return 0;
  int64_t total = 8 * static_cast<int64_t>(shape.tuple_count());
  for (const Shape& s : shape.tuple_shapes()) total += TupleTableBytes(s);
  return total;
}

int64_t DefinedBytes(const Instruction& instr) {
  switch (instr.opcode()) {
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kWhile:
    case Opcode::kAddDependency:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
      return 0;
    case Opcode::kTuple:
      return 8 * static_cast<int64_t>(instr.shape().tuple_count());
    default:
      return std::max<int64_t>(0, ShapeByteSize(instr.shape())) + TupleTableBytes(instr.shape());
  }
}

// The dependency graph of one computation, instructions numbered by their current position.
struct DepGraph {
  std::vector<Instruction*> instrs;
  absl::flat_hash_map<const Instruction*, int> index;
  std::vector<std::vector<int>> preds;  // operands, control predecessors, side-effect order
  std::vector<std::vector<int>> succs;
  std::vector<std::vector<int>> operands;  // distinct operands
  std::vector<std::vector<int>> users;     // distinct users
  int root = -1;
};

void AddUnique(std::vector<int>* v, int x) {
  if (std::find(v->begin(), v->end(), x) == v->end()) v->push_back(x);
}

DepGraph BuildGraph(const Computation& comp) {
  DepGraph g;
  g.instrs = comp.instructions();
  const int n = static_cast<int>(g.instrs.size());
  g.index.reserve(n);
  for (int i = 0; i < n; ++i) g.index[g.instrs[i]] = i;
  g.preds.resize(n);
  g.succs.resize(n);
  g.operands.resize(n);
  g.users.resize(n);
  int last_side_effect = -1;
  for (int i = 0; i < n; ++i) {
    const Instruction* instr = g.instrs[i];
    for (const Instruction* op : instr->operands()) {
      auto it = g.index.find(op);
      if (it == g.index.end()) continue;
      AddUnique(&g.operands[i], it->second);
      AddUnique(&g.preds[i], it->second);
    }
    for (const Instruction* cp : instr->control_predecessors()) {
      auto it = g.index.find(cp);
      if (it == g.index.end()) continue;
      AddUnique(&g.preds[i], it->second);
    }
    if (HasSideEffect(*instr)) {
      if (last_side_effect >= 0) AddUnique(&g.preds[i], last_side_effect);
      last_side_effect = i;
    }
  }
  for (int i = 0; i < n; ++i) {
    for (int p : g.preds[i]) g.succs[p].push_back(i);
    for (int o : g.operands[i]) g.users[o].push_back(i);
  }
  auto rit = g.index.find(comp.root());
  if (rit != g.index.end()) g.root = rit->second;
  return g;
}

bool IsValidOrder(const DepGraph& g, const std::vector<int>& order) {
  if (order.size() != g.instrs.size()) return false;
  std::vector<int> pos(g.instrs.size(), -1);
  for (size_t k = 0; k < order.size(); ++k) pos[order[k]] = static_cast<int>(k);
  for (size_t i = 0; i < g.instrs.size(); ++i) {
    if (pos[i] < 0) return false;
    for (int p : g.preds[i]) {
      if (pos[p] > pos[i]) return false;
    }
  }
  return true;
}

int64_t PeakOfOrder(const DepGraph& g, const std::vector<int>& order) {
  const int n = static_cast<int>(order.size());
  if (n == 0) return 0;
  std::vector<int> pos(g.instrs.size(), 0);
  for (int k = 0; k < n; ++k) pos[order[k]] = k;
  // last[i]: the last position at which i's buffer is needed. Users come after their operands,
  // so walking the order backwards sees every user's value first.
  std::vector<int> last(g.instrs.size(), 0);
  for (int k = n - 1; k >= 0; --k) {
    int i = order[k];
    int l = k;
    if (i == g.root) l = n - 1;
    for (int u : g.users[i]) {
      l = std::max(l, pos[u]);
      if (AliasesOperand(g.instrs[u]->opcode())) l = std::max(l, last[u]);
    }
    last[i] = l;
  }
  std::vector<int64_t> delta(n + 1, 0);
  for (int k = 0; k < n; ++k) {
    int i = order[k];
    int64_t bytes = DefinedBytes(*g.instrs[i]);
    if (bytes == 0) continue;
    int start = g.instrs[i]->opcode() == Opcode::kParameter ? 0 : k;
    int end = g.instrs[i]->opcode() == Opcode::kParameter ? n - 1 : last[i];
    delta[start] += bytes;
    delta[end + 1] -= bytes;
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (int k = 0; k < n; ++k) {
    live += delta[k];
    peak = std::max(peak, live);
  }
  return peak;
}

std::vector<int> ListSchedule(const DepGraph& g) {
  const int n = static_cast<int>(g.instrs.size());
  std::vector<int64_t> bytes(n);
  for (int i = 0; i < n; ++i) bytes[i] = DefinedBytes(*g.instrs[i]);
  std::vector<int> remaining_users(n);
  std::vector<int> pending(n);
  std::vector<char> scheduled(n, 0);
  for (int i = 0; i < n; ++i) {
    remaining_users[i] = static_cast<int>(g.users[i].size());
    pending[i] = static_cast<int>(g.preds[i].size());
  }
  auto freeable = [&](int o) {
    return o != g.root && g.instrs[o]->opcode() != Opcode::kParameter;
  };
  auto priority = [&](int i) {
    int64_t freed = 0;
    for (int o : g.operands[i]) {
      if (remaining_users[o] == 1 && freeable(o)) freed += bytes[o];
    }
    return freed - bytes[i];
  };
  // Highest priority first, then the earlier original position.
  using Key = std::pair<int64_t, int>;
  std::set<Key> ready;
  std::vector<int64_t> key_of(n, 0);
  std::vector<char> in_ready(n, 0);
  auto insert = [&](int i) {
    key_of[i] = -priority(i);
    ready.insert({key_of[i], i});
    in_ready[i] = 1;
  };
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) insert(i);
  }
  std::vector<int> order;
  order.reserve(n);
  while (!ready.empty()) {
    int i = ready.begin()->second;
    ready.erase(ready.begin());
    in_ready[i] = 0;
    scheduled[i] = 1;
    order.push_back(i);
    for (int o : g.operands[i]) {
      if (--remaining_users[o] == 1) {
        for (int u : g.users[o]) {
          if (!scheduled[u] && in_ready[u]) {
            ready.erase({key_of[u], u});
            insert(u);
          }
        }
      }
    }
    for (int s : g.succs[i]) {
      if (--pending[s] == 0) insert(s);
    }
  }
  return order;
}

std::vector<int> DfsSchedule(const DepGraph& g) {
  const int n = static_cast<int>(g.instrs.size());
  std::vector<char> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> order;
  order.reserve(n);
  auto visit = [&](int start) {
    if (state[start] != 0) return;
    std::vector<std::pair<int, size_t>> stack;
    stack.push_back({start, 0});
    state[start] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < g.preds[node].size()) {
        int p = g.preds[node][next++];
        if (state[p] == 0) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
        continue;
      }
      state[node] = 2;
      order.push_back(node);
      stack.pop_back();
    }
  };
  for (int i = 0; i < n; ++i) {
    if (g.succs[i].empty() && i != g.root) visit(i);
  }
  if (g.root >= 0) visit(g.root);
  for (int i = 0; i < n; ++i) visit(i);
  return order;
}

}  // namespace

int64_t SchedulePeakBytes(const Computation& computation,
                          const std::vector<Instruction*>& order) {
  DepGraph g = BuildGraph(computation);
  std::vector<int> idx;
  idx.reserve(order.size());
  for (Instruction* instr : order) {
    auto it = g.index.find(instr);
    if (it != g.index.end()) idx.push_back(it->second);
  }
  return PeakOfOrder(g, idx);
}

int64_t ComputationPeakBytes(const Computation& computation) {
  return SchedulePeakBytes(computation, computation.instructions());
}

absl::StatusOr<bool> HloMemoryScheduler::Run(Module* module, PassContext& context) {
  bool changed = false;
  absl::flat_hash_map<const Computation*, CallContext> contexts = ComputeCallContexts(*module);
  for (const auto& comp : module->computations()) {
    if (contexts[comp.get()] == CallContext::kFused) continue;
    if (comp->instruction_count() < 2) continue;
    DepGraph g = BuildGraph(*comp);
    const int n = static_cast<int>(g.instrs.size());
    std::vector<int> original(n);
    for (int i = 0; i < n; ++i) original[i] = i;
    std::vector<std::vector<int>> candidates;
    if (IsValidOrder(g, original)) candidates.push_back(original);
    for (std::vector<int> order : {ListSchedule(g), DfsSchedule(g)}) {
      if (IsValidOrder(g, order)) candidates.push_back(std::move(order));
    }
    if (candidates.empty()) {
      return absl::InvalidArgumentError(StrCat("hlo-memory-scheduler: computation ",
                                               comp->name(),
                                               " has a dependency cycle (operands or control "
                                               "predecessors); it cannot be scheduled"));
    }
    size_t best = 0;
    int64_t best_peak = PeakOfOrder(g, candidates[0]);
    for (size_t c = 1; c < candidates.size(); ++c) {
      int64_t peak = PeakOfOrder(g, candidates[c]);
      if (peak < best_peak) {
        best = c;
        best_peak = peak;
      }
    }
    if (candidates[best] == original) continue;
    if (!context.ConsumeFuel(name())) continue;
    std::vector<Instruction*> instrs;
    instrs.reserve(n);
    for (int i : candidates[best]) instrs.push_back(g.instrs[i]);
    comp->SetInstructions(std::move(instrs));
    changed = true;
  }
  if (!module->config().is_scheduled && context.ConsumeFuel(name())) {
    module->config().is_scheduled = true;
    changed = true;
  }
  return changed;
}

}  // namespace hlowb
