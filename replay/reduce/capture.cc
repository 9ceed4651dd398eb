#include "replay/reduce/capture.h"

#include <mutex>

#include "core/support/strings.h"
#include "replay/compare/compare.h"
#include "replay/compare/nonfinite.h"

namespace hlowb::reduce {
namespace {

// The replay options of a capture run: one iteration on the interpreter with the given
// arguments, no comparison.
ReplayOptions CaptureOptions(const ReplayOptions& replay) {
  ReplayOptions ro = replay;
  ro.platform = "interpreter";
  ro.reference_platform.clear();
  ro.iterations = 1;
  ro.force_fake_data = false;
  ro.hlo_argument_mode.clear();
  ro.instruction_statistics = false;
  return ro;
}

ReplayInputs WithArguments(const std::vector<Literal>& arguments) {
  ReplayInputs inputs;
  IterationLiterals it;
  it.arguments = arguments;
  inputs.literal_iterations.push_back(std::move(it));
  return inputs;
}

// Cancels `token` when `outer` has fired.
void Forward(const CancelToken* outer, CancelToken* token) {
  if (outer != nullptr && outer->IsCancelled()) token->Cancel();
}

}  // namespace

uint64_t LiteralBytes(const Literal& literal) {
  uint64_t total = literal.data().size();
  for (const Literal& e : literal.tuple_elements()) total += LiteralBytes(e);
  return total;
}

CapturedValues CaptureEntryValues(const Module& module, const std::vector<Literal>& arguments,
                                  const ReplayOptions& replay,
                                  const std::unordered_set<std::string>* wanted,
                                  uint64_t budget_bytes, const CancelToken* cancel) {
  CapturedValues out;
  const Computation* entry = module.entry();
  if (entry == nullptr) {
    out.run_status = absl::InvalidArgumentError("the module has no entry computation");
    return out;
  }
  size_t missing = wanted != nullptr ? wanted->size() : 0;
  CancelToken stop;
  std::mutex mu;
  ReplayOptions ro = CaptureOptions(replay);
  ro.on_instruction = [&](const InstructionProfile& p) {
    Forward(cancel, &stop);
    const Instruction* instr = p.instruction;
    if (instr == nullptr || instr->parent() != entry || p.value == nullptr) return;
    std::lock_guard<std::mutex> lock(mu);
    if (wanted != nullptr && wanted->count(instr->name()) == 0) return;
    if (out.values.count(instr->name()) > 0) return;
    const uint64_t bytes = LiteralBytes(*p.value);
    if (out.bytes + bytes <= budget_bytes) {
      out.values.emplace(instr->name(), *p.value);
      out.bytes += bytes;
    }
    if (wanted != nullptr && --missing == 0) stop.Cancel();
  };
  if (wanted != nullptr && wanted->empty()) return out;
  absl::StatusOr<ReplayReport> run =
      ReplaySession(module, std::move(ro), WithArguments(arguments)).Run(&stop);
  out.run_status = run.status();
  if (wanted != nullptr && missing == 0) out.run_status = absl::OkStatus();
  return out;
}

absl::StatusOr<std::vector<Literal>> CaptureAtFirstNonfinite(
    const Module& module, const std::vector<Literal>& arguments, const ReplayOptions& replay,
    const std::string& computation, const std::string& instruction, const CancelToken* cancel) {
  const Computation* comp = module.FindComputation(computation);
  if (comp == nullptr) {
    return absl::NotFoundError(StrCat("the module has no computation %", computation));
  }
  std::vector<Literal> latest(comp->parameter_count());
  std::vector<bool> seen(comp->parameter_count(), false);
  bool found = false;
  CancelToken stop;
  std::mutex mu;
  ReplayOptions ro = CaptureOptions(replay);
  ro.on_instruction = [&](const InstructionProfile& p) {
    Forward(cancel, &stop);
    const Instruction* instr = p.instruction;
    if (instr == nullptr || instr->parent() != comp || p.value == nullptr) return;
    std::lock_guard<std::mutex> lock(mu);
    if (found) return;
    if (instr->opcode() == Opcode::kParameter) {
      const int64_t n = instr->parameter_number();
      if (n >= 0 && n < static_cast<int64_t>(latest.size())) {
        latest[n] = *p.value;
        seen[n] = true;
      }
      return;
    }
    if (instr->name() != instruction) return;
    const LiteralStatistics s = ComputeStatistics(*p.value);
    if (s.nan_count > 0 || s.inf_count > 0) {
      found = true;
      stop.Cancel();
    }
  };
  absl::StatusOr<ReplayReport> run =
      ReplaySession(module, std::move(ro), WithArguments(arguments)).Run(&stop);
  if (!found) {
    if (cancel != nullptr && cancel->IsCancelled()) return absl::CancelledError("cancelled");
    if (!run.ok()) return run.status();
    return absl::NotFoundError(StrCat("%", instruction, " in %", computation,
                                      " computed no NaN or Inf on the interpreter"));
  }
  for (size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) {
      return absl::NotFoundError(
          StrCat("parameter ", i, " of %", computation, " was not seen before the NaN or Inf"));
    }
  }
  return latest;
}


LiveValueHolder::LiveValueHolder(const Module& module, uint64_t budget_bytes)
    : module_(module), budget_bytes_(budget_bytes) {
  std::unordered_set<const Computation*> scalar;
  // Callees come before callers: walking callers first settles chains of scalar callees.
  for (auto it = module.computations().rbegin(); it != module.computations().rend(); ++it) {
    const Computation* comp = it->get();
    const bool in_scalar = scalar.count(comp) > 0;
    for (const Instruction* i : comp->instructions()) {
      if (in_scalar || AppliesScalarComputation(i->opcode())) {
        for (const Computation* c : i->called_computations()) scalar.insert(c);
      }
    }
  }
  for (const auto& comp : module.computations()) {
    if (scalar.count(comp.get()) > 0) continue;
    auto& uses = uses_[comp.get()];
    for (const Instruction* i : comp->instructions()) {
      for (const Instruction* op : i->operands()) ++uses[op];
    }
    if (comp->root() != nullptr) ++uses[comp->root()];
  }
}

std::function<void(const InstructionProfile&)> LiveValueHolder::Hook() {
  return [this](const InstructionProfile& p) { OnEvent(p); };
}

void LiveValueHolder::Drop(Frame* f, const Instruction* instr) {
  auto it = f->values.find(instr);
  if (it == f->values.end()) return;
  bytes_ -= LiteralBytes(it->second);
  f->values.erase(it);
}

void LiveValueHolder::OnEvent(const InstructionProfile& p) {
  const Instruction* instr = p.instruction;
  if (instr == nullptr || p.value == nullptr || p.reference) return;
  const Computation* comp = instr->parent();
  auto uses = uses_.find(comp);
  if (uses == uses_.end()) return;
  std::lock_guard<std::mutex> lock(mu_);
  Frame& f = frames_[comp];
  for (const Instruction* r : f.release) Drop(&f, r);
  f.release.clear();
  if (!f.seen.insert(instr).second) {
    // The instruction ran again: a new execution of the computation.
    for (auto& [i, v] : f.values) bytes_ -= LiteralBytes(v);
    f.values.clear();
    f.remaining.clear();
    f.seen.clear();
    f.seen.insert(instr);
  }
  const uint64_t bytes = LiteralBytes(*p.value);
  if (bytes_ + bytes <= budget_bytes_) {
    f.values.insert_or_assign(instr, *p.value);
    bytes_ += bytes;
    auto n = uses->second.find(instr);
    f.remaining[instr] = n == uses->second.end() ? 0 : n->second;
  }
  const bool nonfinite = p.statistics.nan_count > 0 || p.statistics.inf_count > 0;
  for (const Instruction* op : instr->operands()) {
    if (op->opcode() == Opcode::kParameter) continue;
    auto r = f.remaining.find(op);
    if (r == f.remaining.end()) continue;
    if (--r->second <= 0 && !nonfinite) f.release.push_back(op);
  }
}

const Literal* LiveValueHolder::Value(const std::string& computation,
                                      const std::string& instruction) const {
  const Computation* comp = module_.FindComputation(computation);
  if (comp == nullptr) return nullptr;
  auto f = frames_.find(comp);
  if (f == frames_.end()) return nullptr;
  const Instruction* instr = comp->FindInstruction(instruction);
  auto v = f->second.values.find(instr);
  return v == f->second.values.end() ? nullptr : &v->second;
}

std::optional<std::vector<Literal>> LiveValueHolder::Arguments(
    const std::string& computation) const {
  const Computation* comp = module_.FindComputation(computation);
  if (comp == nullptr) return std::nullopt;
  std::vector<Literal> out;
  for (const Instruction* p : comp->parameters()) {
    if (p == nullptr) return std::nullopt;
    const Literal* v = Value(computation, p->name());
    if (v == nullptr) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

}  // namespace hlowb::reduce
