#include "core/analysis/verifier.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/analysis/shape_inference.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

using PT = PrimitiveType;

std::string Str(const Shape& s) { return PrintShape(s, /*print_layout=*/false); }

std::string Plural(int64_t n, std::string_view word) {
  return StrCat(n, " ", word, n == 1 ? "" : "s");
}

// XLA's default verifier rejects mixed floating-point precisions except in these opcodes,
// which pass data through or group it rather than compute with it.
bool AllowsMixedPrecision(Opcode op) {
  switch (op) {
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kConvolution:
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAsyncDone:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncStart:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kDomain:
    case Opcode::kFusion:
    case Opcode::kGetTupleElement:
    case Opcode::kOptimizationBarrier:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kReducePrecision:
    case Opcode::kReduceWindow:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kSort:
    case Opcode::kTuple:
    case Opcode::kWhile:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kStochasticConvert:
    case Opcode::kBitcast:
      return true;
    default:
      return false;
  }
}

void CollectFloatTypes(const Shape& s, std::vector<PT>* out) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) CollectFloatTypes(e, out);
    return;
  }
  if (IsFloatingPoint(s.element_type()) &&
      std::find(out->begin(), out->end(), s.element_type()) == out->end()) {
    out->push_back(s.element_type());
  }
}

// Bytes of a dense static array (sub-byte elements packed); nullopt when unknown or huge.
std::optional<int64_t> ByteSize(const Shape& s) {
  const int64_t count = s.ElementCount();
  const int64_t bits = BitWidth(s.element_type());
  int64_t total = 0;
  if (count < 0 || bits <= 0 || __builtin_mul_overflow(count, bits, &total)) return std::nullopt;
  return total / 8 + (total % 8 != 0 ? 1 : 0);
}

// XLA's Comparison::DefaultComparisonType.
ComparisonType DefaultComparisonType(PT t) {
  if (IsFloatingPoint(t) || IsComplex(t)) return ComparisonType::kFloat;
  if (IsSignedIntegral(t)) return ComparisonType::kSigned;
  return ComparisonType::kUnsigned;
}

std::string_view ComparisonTypeName(ComparisonType t) {
  switch (t) {
    case ComparisonType::kDefault:
      return "default";
    case ComparisonType::kFloat:
      return "FLOAT";
    case ComparisonType::kTotalOrder:
      return "TOTALORDER";
    case ComparisonType::kSigned:
      return "SIGNED";
    case ComparisonType::kUnsigned:
      return "UNSIGNED";
  }
  return "?";
}

class ModuleVerifier {
 public:
  explicit ModuleVerifier(const Module& module) : module_(module) {}

  std::vector<VerifierDiagnostic> Run();

 private:
  void Report(VerifierDiagnostic::Severity severity, const Computation* comp,
              const Instruction* instr, std::string message) {
    VerifierDiagnostic d;
    d.severity = severity;
    d.computation = comp ? comp->name() : std::string("<module>");
    if (instr) d.instruction = instr->name();
    d.message = std::move(message);
    out_.push_back(std::move(d));
  }
  void Error(const Computation* comp, const Instruction* instr, std::string message) {
    Report(VerifierDiagnostic::Severity::kError, comp, instr, std::move(message));
  }
  void Warning(const Computation* comp, const Instruction* instr, std::string message) {
    Report(VerifierDiagnostic::Severity::kWarning, comp, instr, std::move(message));
  }

  void VerifyEntry();
  void VerifyCallGraph();
  void VerifyComputation(const Computation& comp);
  void VerifyParameters(const Computation& comp);
  void VerifyAcyclic(const Computation& comp,
                     const absl::flat_hash_set<const Instruction*>& members);
  void VerifyInstruction(const Computation& comp, const Instruction& instr,
                         const absl::flat_hash_set<const Instruction*>& members);
  bool CheckOperandCount(const Computation& comp, const Instruction& instr);
  bool CheckCalledComputations(const Computation& comp, const Instruction& instr);
  bool CheckRequiredAttributes(const Computation& comp, const Instruction& instr);
  void CheckInferredShape(const Computation& comp, const Instruction& instr);
  void CheckOperandOpcodes(const Computation& comp, const Instruction& instr);
  void CheckCompareType(const Computation& comp, const Instruction& instr);
  void CheckCollective(const Computation& comp, const Instruction& instr);
  void CheckAliasing(const Computation& comp, const Instruction& instr);
  void CheckCustomCall(const Computation& comp, const Instruction& instr);
  void CheckScan(const Computation& comp, const Instruction& instr);
  void CheckMixedPrecision(const Computation& comp, const Instruction& instr);

  const Module& module_;
  std::vector<VerifierDiagnostic> out_;
};

std::vector<VerifierDiagnostic> ModuleVerifier::Run() {
  for (const auto& [name, value] : module_.config().unknown) {
    Warning(nullptr, nullptr, StrCat("unknown module attribute '", name, "' is kept verbatim"));
  }
  VerifyEntry();
  VerifyCallGraph();
  for (const auto& comp : module_.computations()) {
    if (comp == nullptr) {
      Error(nullptr, nullptr, "the module holds a null computation");
      continue;
    }
    VerifyComputation(*comp);
  }
  return std::move(out_);
}

void ModuleVerifier::VerifyEntry() {
  const Computation* entry = module_.entry();
  if (entry == nullptr) {
    Error(nullptr, nullptr, "the module has no entry computation");
    return;
  }
  bool owned = false;
  for (const auto& comp : module_.computations()) owned = owned || comp.get() == entry;
  if (!owned) {
    Error(entry, nullptr, "the entry computation is not one of the module's computations");
    return;
  }
  const ModuleConfig& config = module_.config();
  if (config.entry_computation_layout) {
    const ProgramShape& layout = *config.entry_computation_layout;
    for (size_t i = 0; i <= layout.parameters.size(); ++i) {
      const Shape& s = i < layout.parameters.size() ? layout.parameters[i] : layout.result;
      absl::Status valid = ValidateShape(s);
      if (!valid.ok()) {
        Error(entry, nullptr,
              StrCat("entry_computation_layout has an invalid ",
                     i < layout.parameters.size() ? StrCat("parameter ", i) : "result",
                     " shape: ", valid.message()));
      }
    }
    if (static_cast<int>(layout.parameters.size()) != entry->parameter_count()) {
      Error(entry, nullptr,
            StrCat("entry_computation_layout lists ", Plural(layout.parameters.size(), "parameter"),
                   " but the entry computation has ", entry->parameter_count()));
    } else {
      for (int i = 0; i < entry->parameter_count(); ++i) {
        const Instruction* p = entry->parameter(i);
        if (p == nullptr || !HasDeclaredShape(*p)) continue;  // reported with the parameters
        if (!ShapesCompatible(p->shape(), layout.parameters[i])) {
          Error(
              entry, p,
              StrCat("entry_computation_layout gives parameter ", i, " the shape ",
                     Str(layout.parameters[i]), " but the parameter has shape ", Str(p->shape())));
        }
      }
    }
    const Instruction* root = entry->root();
    if (root != nullptr && HasDeclaredShape(*root) &&
        !ShapesCompatible(root->shape(), layout.result)) {
      Error(entry, root,
            StrCat("entry_computation_layout gives the result shape ", Str(layout.result),
                   " but the entry root has shape ", Str(root->shape())));
    }
  }
  const Instruction* root = entry->root();
  for (const InputOutputAlias& alias : config.input_output_alias) {
    const Instruction* p =
        alias.parameter_number >= 0 && alias.parameter_number < entry->parameter_count()
            ? entry->parameter(static_cast<int>(alias.parameter_number))
            : nullptr;
    if (p == nullptr) {
      Error(entry, nullptr,
            StrCat("input_output_alias names parameter ", alias.parameter_number,
                   ", which the entry computation does not have"));
      continue;
    }
    const Shape* param_sub = p->shape().Subshape(alias.parameter_index);
    const Shape* out_sub = root ? root->shape().Subshape(alias.output_index) : nullptr;
    if (param_sub == nullptr) {
      Error(entry, p, "input_output_alias names a parameter shape index that does not exist");
    } else if (out_sub == nullptr) {
      Error(entry, root, "input_output_alias names an output shape index that does not exist");
    } else if (!param_sub->IsArray() || !out_sub->IsArray()) {
      Error(
          entry, p,
          StrCat("input_output_alias pairs output ", Str(*out_sub), " with parameter ",
                 alias.parameter_number, " element ", Str(*param_sub), "; only arrays can alias"));
    } else {
      // XLA (HloInputOutputAliasConfig::Verify) only needs the buffers to be equally large:
      // an output may be a bitcast of the parameter it reuses.
      const std::optional<int64_t> in_bytes = ByteSize(*param_sub);
      const std::optional<int64_t> out_bytes = ByteSize(*out_sub);
      if (in_bytes && out_bytes && *in_bytes != *out_bytes) {
        Error(
            entry, p,
            StrCat("input_output_alias pairs output ", Str(*out_sub), " (", *out_bytes,
                   " bytes) with parameter ", alias.parameter_number, " element ", Str(*param_sub),
                   " (", *in_bytes, " bytes); aliased buffers must have the same size"));
      }
    }
  }
}

// A computation that (transitively) calls itself would make every recursive walk diverge;
// XLA forbids it.
void ModuleVerifier::VerifyCallGraph() {
  absl::flat_hash_map<const Computation*, int> state;  // 1 = on stack, 2 = done
  for (const auto& start : module_.computations()) {
    if (start == nullptr || state[start.get()] != 0) continue;
    struct Frame {
      const Computation* comp;
      std::vector<const Computation*> callees;
      size_t next = 0;
    };
    auto callees_of = [](const Computation* c) {
      std::vector<const Computation*> v;
      for (const Instruction* i : c->instructions()) {
        if (i == nullptr) continue;
        for (const Computation* callee : i->called_computations()) {
          if (callee != nullptr) v.push_back(callee);
        }
      }
      return v;
    };
    std::vector<Frame> stack;
    stack.push_back({start.get(), callees_of(start.get())});
    state[start.get()] = 1;
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.callees.size()) {
        state[top.comp] = 2;
        stack.pop_back();
        continue;
      }
      const Computation* callee = top.callees[top.next++];
      int& s = state[callee];
      if (s == 1) {
        std::string path;
        bool on_cycle = false;
        for (const Frame& f : stack) {
          on_cycle = on_cycle || f.comp == callee;
          if (on_cycle) StrAppend(&path, f.comp->name(), " -> ");
        }
        StrAppend(&path, callee->name());
        Error(callee, nullptr, StrCat("computations call each other recursively: ", path));
      } else if (s == 0) {
        s = 1;
        if (callee->parent() != &module_) {
          Error(callee, nullptr, "a called computation does not belong to this module");
        }
        stack.push_back({callee, callees_of(callee)});
      }
    }
  }
}

void ModuleVerifier::VerifyComputation(const Computation& comp) {
  if (comp.instructions().empty()) {
    Error(&comp, nullptr, "the computation has no instructions");
    return;
  }
  absl::flat_hash_set<const Instruction*> members;
  absl::flat_hash_map<std::string_view, const Instruction*> names;
  for (const Instruction* instr : comp.instructions()) {
    if (instr == nullptr) {
      Error(&comp, nullptr, "the computation holds a null instruction");
      continue;
    }
    members.insert(instr);
    auto [it, inserted] = names.emplace(instr->name(), instr);
    if (!inserted) Error(&comp, instr, "another instruction in this computation has the same name");
  }
  if (comp.root() == nullptr) {
    Error(&comp, nullptr, "the computation has no root instruction");
  } else if (!members.contains(comp.root())) {
    Error(&comp, nullptr,
          StrCat("the root instruction ", comp.root()->name(), " is not in the computation"));
  }
  VerifyParameters(comp);
  for (const Instruction* instr : comp.instructions()) {
    if (instr != nullptr) VerifyInstruction(comp, *instr, members);
  }
  VerifyAcyclic(comp, members);
}

void ModuleVerifier::VerifyParameters(const Computation& comp) {
  std::vector<std::pair<int64_t, const Instruction*>> params;
  for (const Instruction* instr : comp.instructions()) {
    if (instr != nullptr && instr->opcode() == Opcode::kParameter) {
      params.emplace_back(instr->parameter_number(), instr);
    }
  }
  std::sort(params.begin(), params.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < params.size(); ++i) {
    const auto& [number, instr] = params[i];
    if (number < 0) {
      Error(&comp, instr, StrCat("parameter number ", number, " is negative"));
    } else if (i > 0 && params[i - 1].first == number) {
      Error(&comp, instr,
            StrCat("parameter number ", number, " is also used by ", params[i - 1].second->name()));
    }
  }
  // Numbers must be exactly 0..N-1: after sorting, the k-th distinct number must be k.
  int64_t expected = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    const int64_t number = params[i].first;
    if (number < 0 || (i > 0 && params[i - 1].first == number)) continue;
    if (number != expected) {
      Error(&comp, params[i].second,
            StrCat("parameter numbers must be 0..N-1 without gaps, but parameter(", expected,
                   ") is missing before parameter(", number, ")"));
      break;
    }
    ++expected;
  }
  if (expected == static_cast<int64_t>(params.size()) &&
      comp.parameter_count() != static_cast<int>(params.size())) {
    Error(&comp, nullptr,
          StrCat("the computation's parameter table has ", comp.parameter_count(),
                 " entries but it has ", Plural(params.size(), "parameter instruction")));
  }
}

// Operand and control edges must form a DAG (Kahn's algorithm; leftovers lie on or behind a
// cycle, and walking leftover predecessors finds one).
void ModuleVerifier::VerifyAcyclic(const Computation& comp,
                                   const absl::flat_hash_set<const Instruction*>& members) {
  auto preds_of = [&](const Instruction* instr) {
    std::vector<const Instruction*> preds;
    for (const Instruction* o : instr->operands()) {
      if (o != nullptr && members.contains(o)) preds.push_back(o);
    }
    for (const Instruction* o : instr->control_predecessors()) {
      if (o != nullptr && members.contains(o)) preds.push_back(o);
    }
    return preds;
  };
  absl::flat_hash_map<const Instruction*, int64_t> pending;
  absl::flat_hash_map<const Instruction*, std::vector<const Instruction*>> users;
  for (const Instruction* instr : members) {
    std::vector<const Instruction*> preds = preds_of(instr);
    pending[instr] = static_cast<int64_t>(preds.size());
    for (const Instruction* p : preds) users[p].push_back(instr);
  }
  std::vector<const Instruction*> ready;
  for (const auto& [instr, n] : pending) {
    if (n == 0) ready.push_back(instr);
  }
  size_t done = 0;
  while (!ready.empty()) {
    const Instruction* instr = ready.back();
    ready.pop_back();
    ++done;
    auto it = users.find(instr);
    if (it == users.end()) continue;
    for (const Instruction* u : it->second) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (done == members.size()) return;
  // Start from a leftover in textual order so the report is deterministic.
  const Instruction* start = nullptr;
  for (const Instruction* instr : comp.instructions()) {
    if (instr != nullptr && pending[instr] > 0) {
      start = instr;
      break;
    }
  }
  if (start == nullptr) return;
  std::vector<const Instruction*> path;
  absl::flat_hash_map<const Instruction*, size_t> position;
  const Instruction* cur = start;
  while (cur != nullptr && !position.contains(cur)) {
    position[cur] = path.size();
    path.push_back(cur);
    const Instruction* next = nullptr;
    for (const Instruction* p : preds_of(cur)) {
      if (pending[p] > 0) {
        next = p;
        break;
      }
    }
    cur = next;
  }
  if (cur == nullptr) return;
  // path[position[cur]..] is a cycle walked backwards (user -> operand); print it forwards.
  std::vector<const Instruction*> cycle(path.begin() + static_cast<int64_t>(position[cur]),
                                        path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string text;
  for (const Instruction* i : cycle) StrAppend(&text, i->name(), " -> ");
  StrAppend(&text, cycle.front()->name());
  Error(&comp, cycle.front(),
        StrCat("instructions form a cycle through operands and control predecessors: ", text));
}

bool ModuleVerifier::CheckOperandCount(const Computation& comp, const Instruction& instr) {
  const int n = instr.operand_count();
  const std::string_view name = OpcodeName(instr.opcode());
  std::optional<std::string> problem;
  auto exactly = [&](int k) {
    if (n != k) problem = StrCat(name, " takes ", Plural(k, "operand"), " but has ", n);
  };
  auto at_least = [&](int k) {
    if (n < k) problem = StrCat(name, " takes at least ", Plural(k, "operand"), " but has ", n);
  };
  switch (instr.opcode()) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      if (n < 2 || n % 2 != 0) {
        problem = StrCat(name, " takes N inputs and N init values (an even count >= 2) but has ",
                         Plural(n, "operand"));
      }
      break;
    case Opcode::kScatter:
      if (n < 3 || n % 2 != 1) {
        problem = StrCat(
            name, " takes N operands, the indices and N updates (an odd count >= 3) but has ",
            Plural(n, "operand"));
      }
      break;
    case Opcode::kSort:
    case Opcode::kConcatenate:
    case Opcode::kMap:
    case Opcode::kDynamicReshape:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveReduce:
      at_least(1);
      break;
    case Opcode::kConditional:
    case Opcode::kDynamicSlice:
      at_least(2);
      break;
    case Opcode::kDynamicUpdateSlice:
      at_least(3);
      break;
    case Opcode::kDot:
      if (instr.attrs_or_default().sparsity.empty()) {
        exactly(2);
      } else if (n < 2 || n > 4) {
        problem = StrCat("sparse dot takes 2 to 4 operands but has ", n);
      }
      break;
    case Opcode::kConvolution:
    case Opcode::kRng:
      exactly(2);
      break;
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      exactly(1);
      break;
    default:
      if (OpcodeArity(instr.opcode()) >= 0) exactly(OpcodeArity(instr.opcode()));
      break;
  }
  if (problem) Error(&comp, &instr, *problem);
  return !problem;
}

bool ModuleVerifier::CheckCalledComputations(const Computation& comp, const Instruction& instr) {
  const auto& called = instr.called_computations();
  bool ok = true;
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) {
      Error(&comp, &instr, StrCat("called computation ", i, " is missing"));
      ok = false;
    }
  }
  const std::string_view name = OpcodeName(instr.opcode());
  const size_t n = called.size();
  auto want = [&](size_t k, std::string_view what) {
    if (n != k) {
      Error(&comp, &instr, StrCat(name, " needs ", what, " but names ", Plural(n, "computation")));
      ok = false;
    }
  };
  switch (instr.opcode()) {
    case Opcode::kCall:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kSort:
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kScan:
      want(1, "one to_apply= computation");
      break;
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
      want(1, "one calls= computation");
      break;
    case Opcode::kWhile:
      want(2, "condition= and body=");
      break;
    case Opcode::kSelectAndScatter:
      want(2, "select= and scatter=");
      break;
    case Opcode::kConditional:
      if (n == 0) {
        Error(&comp, &instr, "conditional needs branch computations");
        ok = false;
      }
      break;
    case Opcode::kCustomCall:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kCollectiveReduce:
      break;
    default:
      if (n != 0) {
        Error(&comp, &instr,
              StrCat(name, " does not call computations but names ", Plural(n, "computation")));
        ok = false;
      }
      break;
  }
  return ok;
}

bool ModuleVerifier::CheckRequiredAttributes(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  const std::string_view name = OpcodeName(instr.opcode());
  std::vector<std::string> missing;
  auto rank0 = [&]() -> int {
    const Instruction* o = instr.operand_count() > 0 ? instr.operand(0) : nullptr;
    return o != nullptr && o->shape().IsArray() ? o->shape().rank() : -1;
  };
  switch (instr.opcode()) {
    case Opcode::kCompare:
      if (a == nullptr) missing.push_back("direction=");
      break;
    case Opcode::kBroadcast:
      if (!instr.has_dimensions() && rank0() != 0) missing.push_back("dimensions=");
      break;
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kReduce:
    case Opcode::kConcatenate:
    case Opcode::kSort:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kScan:
      if (!instr.has_dimensions()) missing.push_back("dimensions=");
      break;
    case Opcode::kSlice:
      if ((a == nullptr || a->slice.empty()) && rank0() > 0) missing.push_back("slice=");
      break;
    case Opcode::kDynamicSlice:
      if ((a == nullptr || a->slice_sizes.empty()) && rank0() > 0) {
        missing.push_back("dynamic_slice_sizes=");
      }
      break;
    case Opcode::kPad:
      if (a == nullptr || !a->padding) missing.push_back("padding=");
      break;
    case Opcode::kGather:
      if (a == nullptr || !a->gather_dimension_numbers) {
        missing.push_back(
            "offset_dims=, collapsed_slice_dims=, start_index_map=, index_vector_dim=");
      }
      if ((a == nullptr || a->slice_sizes.empty()) && rank0() > 0) {
        missing.push_back("slice_sizes=");
      }
      break;
    case Opcode::kScatter:
      if (a == nullptr || !a->scatter_dimension_numbers) {
        missing.push_back(
            "update_window_dims=, inserted_window_dims=, scatter_dims_to_operand_dims=, "
            "index_vector_dim=");
      }
      break;
    case Opcode::kConvolution:
      if (a == nullptr || !a->convolution_dimension_numbers) missing.push_back("dim_labels=");
      break;
    case Opcode::kFusion:
      if (a == nullptr) missing.push_back("kind=");
      break;
    case Opcode::kCustomCall:
      if (a == nullptr || a->custom_call_target.empty()) {
        missing.push_back("custom_call_target=");
      }
      break;
    case Opcode::kFft:
      if (a == nullptr || a->fft_length.empty()) missing.push_back("fft_type= and fft_length=");
      break;
    case Opcode::kReducePrecision:
      if (a == nullptr) missing.push_back("exponent_bits= and mantissa_bits=");
      break;
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      if (a == nullptr) missing.push_back("epsilon= and feature_index=");
      break;
    case Opcode::kRng:
      if (a == nullptr || a->distribution == RandomDistribution::kInvalid) {
        missing.push_back("distribution=");
      }
      break;
    case Opcode::kRngGetAndUpdateState:
      if (a == nullptr) missing.push_back("delta=");
      break;
    case Opcode::kTopK:
      if (a == nullptr) missing.push_back("k=");
      break;
    case Opcode::kOutfeed:
      if (a != nullptr && a->outfeed_shape) {
        absl::Status valid = ValidateShape(*a->outfeed_shape);
        if (!valid.ok()) {
          missing.push_back(StrCat("a valid outfeed_shape= (", valid.message(), ")"));
        }
      }
      break;
    case Opcode::kDomain:
      if (a == nullptr || a->domain_kind.empty()) missing.push_back("domain={kind=...}");
      break;
    case Opcode::kDot:
      // XLA's parser accepts a dot without dimension numbers (an outer product), but its
      // printer always writes the contracting dimensions, so their absence is suspicious.
      if (a == nullptr || !a->dot_dimension_numbers) {
        Warning(&comp, &instr,
                "dot has no lhs_contracting_dims=/rhs_contracting_dims=; it is read as an outer "
                "product");
      }
      break;
    default:
      break;
  }
  for (const std::string& m : missing) Error(&comp, &instr, StrCat(name, " needs ", m));
  return missing.empty();
}

void ModuleVerifier::CheckInferredShape(const Computation& comp, const Instruction& instr) {
  absl::StatusOr<Shape> inferred = InferShape(instr);
  if (!inferred.ok()) {
    // Unimplemented means "cannot infer", not "wrong": the declared shape stands.
    if (inferred.status().code() != absl::StatusCode::kUnimplemented) {
      Error(&comp, &instr, std::string(inferred.status().message()));
    }
    return;
  }
  if (!HasDeclaredShape(instr)) return;
  if (!ShapesCompatible(instr.shape(), *inferred)) {
    Error(&comp, &instr,
          StrCat("declared shape ", Str(instr.shape()), " does not match the shape ",
                 Str(*inferred), " inferred for ", OpcodeName(instr.opcode())));
  }
}

// The -done/-update halves of asynchronous pairs must consume their -start half.
void ModuleVerifier::CheckOperandOpcodes(const Computation& comp, const Instruction& instr) {
  if (instr.operand_count() != 1 || instr.operand(0) == nullptr) return;
  const Opcode got = instr.operand(0)->opcode();
  std::vector<Opcode> allowed;
  switch (instr.opcode()) {
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      allowed = {Opcode::kAsyncStart, Opcode::kAsyncUpdate};
      break;
    case Opcode::kAllReduceDone:
      allowed = {Opcode::kAllReduceStart};
      break;
    case Opcode::kAllGatherDone:
      allowed = {Opcode::kAllGatherStart};
      break;
    case Opcode::kCollectivePermuteDone:
      allowed = {Opcode::kCollectivePermuteStart};
      break;
    case Opcode::kCopyDone:
      allowed = {Opcode::kCopyStart};
      break;
    case Opcode::kSendDone:
      allowed = {Opcode::kSend, Opcode::kGetTupleElement};
      break;
    case Opcode::kRecvDone:
      allowed = {Opcode::kRecv, Opcode::kGetTupleElement};
      break;
    default:
      return;
  }
  if (std::find(allowed.begin(), allowed.end(), got) != allowed.end()) return;
  std::string names;
  for (Opcode op : allowed) StrAppend(&names, names.empty() ? "" : " or ", OpcodeName(op));
  Error(&comp, &instr,
        StrCat("the operand of ", OpcodeName(instr.opcode()), " must be ", names, " but ",
               instr.operand(0)->name(), " is ", OpcodeName(got)));
}

void ModuleVerifier::CheckCompareType(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  if (a == nullptr || a->comparison_type == ComparisonType::kDefault) return;
  if (instr.operand_count() < 1 || instr.operand(0) == nullptr) return;
  const PT t = instr.operand(0)->shape().element_type();
  if (!IsArrayType(t)) return;
  const ComparisonType want = DefaultComparisonType(t);
  const bool ok = IsFloatingPoint(t) ? (a->comparison_type == ComparisonType::kFloat ||
                                        a->comparison_type == ComparisonType::kTotalOrder)
                                     : a->comparison_type == want;
  if (!ok) {
    Error(&comp, &instr,
          StrCat("compare type=", ComparisonTypeName(a->comparison_type), " does not suit ",
                 PrimitiveTypeName(t), " operands (expected ", ComparisonTypeName(want),
                 IsFloatingPoint(t) ? " or TOTALORDER" : "", ")"));
  }
}

void ModuleVerifier::CheckCollective(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  if (a == nullptr) return;
  const Opcode op = instr.opcode();
  const std::string_view name = OpcodeName(op);
  if (a->channel_id && *a->channel_id <= 0) {
    Error(&comp, &instr, StrCat(name, " channel_id=", *a->channel_id, " must be positive"));
  }
  if (a->replica_groups) {
    const ReplicaGroups& g = *a->replica_groups;
    if (g.mesh) {
      std::string problem = g.mesh->Validate();
      if (!problem.empty()) {
        Error(&comp, &instr, StrCat(name, " has malformed mesh-axes replica_groups: ", problem));
      }
    } else if (g.iota) {
      const IotaDeviceList& iota = *g.iota;
      int64_t devices = 1;
      int64_t reshaped = 1;
      bool ok = iota.dims.size() == 2;
      for (int64_t d : iota.dims) {
        ok = ok && d > 0 && !__builtin_mul_overflow(devices, d, &devices);
      }
      for (int64_t d : iota.reshape_dims) {
        ok = ok && d > 0 && !__builtin_mul_overflow(reshaped, d, &reshaped);
      }
      ok = ok && devices == reshaped;
      if (ok && !iota.transpose_perm.empty()) {
        std::vector<bool> seen(iota.reshape_dims.size(), false);
        ok = iota.transpose_perm.size() == iota.reshape_dims.size();
        for (int64_t p : iota.transpose_perm) {
          ok = ok && p >= 0 && p < static_cast<int64_t>(seen.size()) && !seen[p];
          if (ok) seen[p] = true;
        }
      }
      if (!ok) {
        Error(
            &comp, &instr,
            StrCat(
                name,
                " has malformed iota replica_groups: [groups,size] must be positive, their product "
                "must equal the product of the reshape dimensions and T(...) must permute them"));
      }
    } else if (!g.groups.empty()) {
      absl::flat_hash_set<int64_t> seen;
      bool reported = false;
      for (const auto& group : g.groups) {
        if (group.empty() && !reported) {
          Error(&comp, &instr, StrCat(name, " has an empty replica group"));
          reported = true;
        }
        for (int64_t id : group) {
          if ((id < 0 || !seen.insert(id).second) && !reported) {
            Error(&comp, &instr,
                  StrCat(name, " replica_groups name device ", id,
                         id < 0 ? ", which is negative" : " more than once"));
            reported = true;
          }
        }
      }
      if (!reported) {
        for (int64_t i = 0; i < static_cast<int64_t>(seen.size()); ++i) {
          if (!seen.contains(i)) {
            Error(&comp, &instr,
                  StrCat(name, " replica_groups skip device ", i, "; groups must cover 0..",
                         seen.size() - 1));
            reported = true;
            break;
          }
        }
      }
      // Only all-reduce may use groups of different sizes.
      const bool uniform = op != Opcode::kAllReduce && op != Opcode::kAllReduceStart;
      if (!reported && uniform) {
        for (const auto& group : g.groups) {
          if (group.size() != g.groups[0].size()) {
            Error(&comp, &instr, StrCat(name, " replica groups must all have the same size"));
            break;
          }
        }
      }
    }
  }
  const bool flattened = a->channel_id && a->use_global_device_ids && *a->use_global_device_ids;
  const bool no_groups =
      !a->replica_groups || (!a->replica_groups->iota && !a->replica_groups->mesh &&
                              a->replica_groups->groups.empty());
  if (flattened && no_groups) {
    Error(&comp, &instr,
          StrCat(name, " with use_global_device_ids=true needs explicit replica_groups="));
  }
  if ((op == Opcode::kCollectivePermute || op == Opcode::kCollectivePermuteStart) &&
      instr.operand_count() != 4) {
    absl::flat_hash_set<int64_t> sources;
    absl::flat_hash_set<int64_t> targets;
    for (const auto& [source, target] : a->source_target_pairs) {
      if (source < 0 || target < 0) {
        Error(&comp, &instr, StrCat(name, " source_target_pairs contain a negative device"));
        break;
      }
      if (!sources.insert(source).second) {
        Error(&comp, &instr, StrCat(name, " sends from device ", source, " more than once"));
        break;
      }
      if (!targets.insert(target).second) {
        Error(&comp, &instr, StrCat(name, " sends to device ", target, " more than once"));
        break;
      }
    }
  }
}

void ModuleVerifier::CheckAliasing(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  if (a == nullptr || !HasDeclaredShape(instr)) return;
  for (const OutputOperandAlias& alias : a->output_operand_aliasing) {
    if (alias.operand < 0 || alias.operand >= instr.operand_count() ||
        instr.operand(static_cast<int>(alias.operand)) == nullptr) {
      Error(&comp, &instr,
            StrCat("output_to_operand_aliasing names operand ", alias.operand,
                   ", which does not exist"));
      continue;
    }
    const Shape* out = instr.shape().Subshape(alias.output_index);
    const Shape* in =
        instr.operand(static_cast<int>(alias.operand))->shape().Subshape(alias.operand_index);
    if (out == nullptr || in == nullptr) {
      Error(&comp, &instr,
            StrCat("output_to_operand_aliasing for operand ", alias.operand,
                   " names a shape index that does not exist"));
    } else if (!ShapesCompatible(*out, *in)) {
      Error(&comp, &instr,
            StrCat("output_to_operand_aliasing pairs output ", Str(*out), " with operand ",
                   alias.operand, " element ", Str(*in),
                   "; aliased buffers must have the same shape"));
    }
  }
}

void ModuleVerifier::CheckCustomCall(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs* a = instr.attrs();
  if (a == nullptr || !a->operand_layout_constraints) return;
  const std::vector<Shape>& constraints = *a->operand_layout_constraints;
  if (static_cast<int>(constraints.size()) != instr.operand_count()) {
    Error(&comp, &instr,
          StrCat("operand_layout_constraints has ", Plural(constraints.size(), "shape"),
                 " but custom-call has ", Plural(instr.operand_count(), "operand")));
    return;
  }
  for (int i = 0; i < instr.operand_count(); ++i) {
    const Instruction* o = instr.operand(i);
    if (o != nullptr && !ShapesCompatible(o->shape(), constraints[i])) {
      Error(&comp, &instr,
            StrCat("operand_layout_constraints gives operand ", i, " the shape ",
                   Str(constraints[i]), " but the operand has shape ", Str(o->shape())));
    }
  }
}

// Scan's shape rules are not modelled, but its calling convention is: the body takes one
// parameter per operand (inputs, then carries).
void ModuleVerifier::CheckScan(const Computation& comp, const Instruction& instr) {
  const InstructionAttrs& a = instr.attrs_or_default();
  if (a.num_carries < 0 || a.num_carries > instr.operand_count()) {
    Error(&comp, &instr,
          StrCat("scan num_carries=", a.num_carries, " is out of range for ",
                 Plural(instr.operand_count(), "operand")));
  }
  const Computation* body = instr.called_computations()[0];
  if (body->parameter_count() != instr.operand_count()) {
    Error(&comp, &instr,
          StrCat("computation ", body->name(), " applied by scan takes ",
                 Plural(body->parameter_count(), "parameter"), " but scan has ",
                 Plural(instr.operand_count(), "operand")));
  }
}

void ModuleVerifier::CheckMixedPrecision(const Computation& comp, const Instruction& instr) {
  if (AllowsMixedPrecision(instr.opcode())) return;
  std::vector<PT> types;
  for (const Instruction* o : instr.operands()) {
    if (o != nullptr) CollectFloatTypes(o->shape(), &types);
  }
  if (types.size() > 1) {
    Warning(&comp, &instr,
            StrCat(OpcodeName(instr.opcode()), " mixes floating-point precisions (",
                   PrimitiveTypeName(types[0]), " and ", PrimitiveTypeName(types[1]),
                   "); XLA accepts that only when mixed precision is allowed"));
  }
}

void ModuleVerifier::VerifyInstruction(const Computation& comp, const Instruction& instr,
                                       const absl::flat_hash_set<const Instruction*>& members) {
  bool ok = true;
  if (instr.parent() != &comp) {
    Error(&comp, &instr, "the instruction's parent is not this computation");
  }
  for (int i = 0; i < instr.operand_count(); ++i) {
    const Instruction* o = instr.operand(i);
    if (o == nullptr) {
      Error(&comp, &instr, StrCat("operand ", i, " is missing"));
      ok = false;
    } else if (!members.contains(o)) {
      Error(&comp, &instr,
            StrCat("operand ", i, " (", o->name(), ") is not in computation ", comp.name()));
      ok = false;
    }
  }
  for (const Instruction* p : instr.control_predecessors()) {
    if (p == nullptr) {
      Error(&comp, &instr, "a control predecessor is missing");
    } else if (!members.contains(p)) {
      Error(&comp, &instr,
            StrCat("control predecessor ", p->name(), " is not in computation ", comp.name()));
    }
  }
  ok = CheckOperandCount(comp, instr) && ok;
  ok = CheckCalledComputations(comp, instr) && ok;
  ok = CheckRequiredAttributes(comp, instr) && ok;
  if (!HasDeclaredShape(instr)) {
    // Text may omit shapes XLA can infer; only an uninferable omission is an error.
    if (ok) {
      absl::StatusOr<Shape> inferred = InferShape(instr);
      if (inferred.status().code() == absl::StatusCode::kUnimplemented) {
        Error(&comp, &instr,
              StrCat("the instruction has no result shape and none can be inferred: ",
                     inferred.status().message()));
      }
    }
  } else {
    absl::Status s = ValidateShape(instr.shape());
    if (!s.ok()) {
      Error(&comp, &instr, StrCat("the result shape is invalid: ", s.message()));
      ok = false;
    }
  }
  if (const InstructionAttrs* a = instr.attrs()) {
    for (const auto& [name, value] : a->unknown) {
      Warning(&comp, &instr, StrCat("unknown attribute '", name, "' is kept verbatim"));
    }
  }
  if (instr.opcode() == Opcode::kConstant && instr.literal() == nullptr) {
    Error(&comp, &instr, "constant has no literal");
  }
  if (ok) CheckInferredShape(comp, instr);
  if (ok && instr.opcode() == Opcode::kScan) CheckScan(comp, instr);
  CheckOperandOpcodes(comp, instr);
  if (instr.opcode() == Opcode::kCompare) CheckCompareType(comp, instr);
  if (OpcodeCategoryOf(instr.opcode()) == OpcodeCategory::kCollective) {
    CheckCollective(comp, instr);
  }
  if (instr.opcode() == Opcode::kCustomCall) CheckCustomCall(comp, instr);
  CheckAliasing(comp, instr);
  if (ok) CheckMixedPrecision(comp, instr);
}

}  // namespace

std::string VerifierDiagnostic::ToString() const {
  std::string where = computation;
  if (!instruction.empty()) StrAppend(&where, "/", instruction);
  return StrCat(severity == Severity::kWarning ? "warning: " : "", where, ": ", message);
}

int CountErrors(const std::vector<VerifierDiagnostic>& diagnostics) {
  int n = 0;
  for (const auto& d : diagnostics) n += d.severity == VerifierDiagnostic::Severity::kError;
  return n;
}

std::vector<VerifierDiagnostic> VerifyModule(const Module& module) {
  return ModuleVerifier(module).Run();
}

}  // namespace hlowb
