// The evaluator's driver: walks a computation in order, keeps each value until its last user
// (so live memory stays bounded and is checked against the budget before every allocation),
// dispatches each opcode to its family, and runs control flow (while, conditional, call,
// fusion, async wrappers). Opcodes without a runtime meaning on one device (tokens,
// single-device collectives) are handled here too; with EvaluatorOptions::collectives set,
// replica-id, partition-id and the collective ops go to the device's DeviceCollectives
// instead (the -done ops stay here: they only unpack their -start value).
#include <chrono>

#include "core/passes/copy_insertion.h"
#include "core/text/printer.h"
#include "replay/evaluator/eval_internal.h"
#include "replay/evaluator/instruction_runner.h"

namespace hlowb {
namespace eval {
namespace {

constexpr int kMaxCallDepth = 256;

uint64_t ShapeBytes(const Shape& s) {
  if (s.IsTuple()) {
    uint64_t total = 0;
    for (const Shape& e : s.tuple_shapes()) {
      uint64_t b = ShapeBytes(e);
      if (b == UINT64_MAX || total + b < total) return UINT64_MAX;
      total += b;
    }
    return total;
  }
  if (!s.IsArray()) return 0;
  for (int i = 0; i < s.rank(); ++i) {
    if (s.dimension(i) < 0) return UINT64_MAX;
  }
  int64_t n = s.ElementCount();
  if (n < 0) return UINT64_MAX;
  uint64_t eb = ByteWidth(s.element_type());
  if (n != 0 && eb > UINT64_MAX / static_cast<uint64_t>(n)) return UINT64_MAX;
  return eb * static_cast<uint64_t>(n);
}

uint64_t LiteralBytes(const Literal& l) {
  uint64_t total = l.data().size();
  for (const Literal& e : l.tuple_elements()) total += LiteralBytes(e);
  return total;
}

Literal MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal t(Shape::Tuple(shapes), /*allocate=*/false);
  *t.mutable_tuple_elements() = std::move(elements);
  return t;
}

// A zero literal of `shape`, or of its tuple elements; used for async contexts and tokens.
Literal Zeros(const Shape& shape) { return Literal(shape); }

// Names the instruction in an error that does not already.
absl::Status Annotate(absl::Status st, const Instruction& instr) {
  std::string msg(st.message());
  if (msg.find("%" + instr.name()) != std::string::npos) return st;
  return absl::Status(st.code(), StrCat(msg, ", in ", InstrRef(instr)));
}

}  // namespace

uint64_t Evaluator::NextRandom() {
  uint64_t z = (options_.seed + 0x9E3779B97F4A7C15ull * ++rng_counter_);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

const Evaluator::Plan& Evaluator::GetPlan(const Computation& c) {
  auto it = plans_.find(&c);
  if (it != plans_.end()) return it->second;
  Plan plan;
  const auto& instrs = c.instructions();
  for (size_t i = 0; i < instrs.size(); ++i) plan.index[instrs[i]] = static_cast<int>(i);
  const int n = static_cast<int>(instrs.size());
  plan.last_use.assign(n, -1);
  plan.pinned.assign(n, 0);
  plan.releases.assign(n, {});
  plan.in_place_operand.assign(n, -1);
  for (int i = 0; i < n; ++i) plan.in_place_operand[i] = InPlaceUpdatedOperand(*instrs[i]);
  for (int i = 0; i < n; ++i) {
    for (const Instruction* op : instrs[i]->operands()) {
      auto f = plan.index.find(op);
      if (f != plan.index.end()) plan.last_use[f->second] = i;
    }
  }
  // Get-tuple-elements read in place (Run): the tuple stays until their readers are done.
  // Users come after their operands, so one pass from the end carries chains along.
  for (int i = n - 1; i >= 0; --i) {
    const Instruction* h = instrs[i];
    if (h->opcode() != Opcode::kGetTupleElement || h->operand_count() != 1) continue;
    auto f = plan.index.find(h->operand(0));
    if (f == plan.index.end()) continue;
    plan.pinned[f->second] = 1;
    // The root is read after the last instruction (index n: never released).
    const int until = h == c.root() ? n : plan.last_use[i];
    plan.last_use[f->second] = std::max(plan.last_use[f->second], until);
  }
  for (int j = 0; j < n; ++j) {
    if (plan.last_use[j] >= 0 && plan.last_use[j] < n && instrs[j] != c.root()) {
      plan.releases[plan.last_use[j]].push_back(j);
    }
  }
  return plans_.emplace(&c, std::move(plan)).first->second;
}

absl::StatusOr<Literal> Evaluator::CallScalar(const Computation& computation,
                                              const Operands& args) {
  return Run(computation, args);
}

bool Evaluator::DonatedElementIsFree(const Plan& plan, const std::vector<Instruction*>& instrs,
                                     const Literal* donated, const Operands& args, int i, int o) {
  // Operand o of instruction i is a get-tuple-element of the donated parameter whose last
  // reader is i, every other get-tuple-element of that element in this computation has had its
  // last reader before i, and nothing else reads the parameter whole: nothing reads the element
  // after it moves.
  if (donated == nullptr || args.empty() || args[0] != donated || !donated->shape().IsTuple()) {
    return false;
  }
  const Instruction* gte = instrs[o];
  if (gte->opcode() != Opcode::kGetTupleElement || gte->operand_count() != 1 ||
      gte->operand(0)->opcode() != Opcode::kParameter || gte->operand(0)->parameter_number() != 0 ||
      gte == gte->parent()->root()) {
    return false;
  }
  const int64_t k = gte->tuple_index();
  if (k < 0 || k >= static_cast<int64_t>(donated->tuple_elements().size())) return false;
  if (plan.last_use[o] != i) return false;
  for (size_t m = 0; m < instrs.size(); ++m) {
    const Instruction* other = instrs[m];
    // Another read of the same element must be over before i (one that i itself reads would
    // see the element after it moved).
    if (static_cast<int>(m) != o && other->opcode() == Opcode::kGetTupleElement &&
        other->operand_count() == 1 && other->operand(0) == gte->operand(0) &&
        other->tuple_index() == k && plan.last_use[m] >= i) {
      return false;
    }
    // Any reader of the whole parameter (a call, a tuple, a copy; i included) reads the
    // element too.
    if (other->opcode() != Opcode::kGetTupleElement) {
      for (const Instruction* op : other->operands()) {
        if (op == gte->operand(0)) return false;
      }
    }
  }
  return true;
}

int Evaluator::OperandSlot(const Plan& plan, const Instruction& instr, int k) {
  auto f = plan.index.find(instr.operand(k));
  return f == plan.index.end() ? -1 : f->second;
}

absl::StatusOr<Literal> Evaluator::Run(const Computation& computation, const Operands& args,
                                       Literal* donated, const std::vector<Literal*>* given) {
  if (depth_ >= kMaxCallDepth) {
    return absl::ResourceExhaustedError(
        StrCat("evaluator: call depth exceeds ", kMaxCallDepth, " at computation ",
               computation.name(), " (recursive or very deeply nested calls)"));
  }
  struct DepthGuard {
    int& d;
    explicit DepthGuard(int& x) : d(x) { ++d; }
    ~DepthGuard() { --d; }
  } guard(depth_);
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(StrCat("computation ", computation.name(), " has no root"));
  }
  if (static_cast<int>(args.size()) != computation.parameter_count()) {
    return absl::InvalidArgumentError(
        StrCat("computation ", computation.name(), " takes ", computation.parameter_count(),
               " arguments but got ", args.size()));
  }
  const Plan& plan = GetPlan(computation);
  const auto& instrs = computation.instructions();
  const int n = static_cast<int>(instrs.size());
  std::vector<Literal> owned(n);
  std::vector<const Literal*> values(n, nullptr);
  std::vector<uint64_t> bytes(n, 0);
  const bool is_top = depth_ == 1;
  const Instruction* root = computation.root();
  uint64_t live_at_entry = live_bytes_;
  struct LiveGuard {
    uint64_t& live;
    uint64_t entry;
    ~LiveGuard() { live = entry; }
  } live_guard{live_bytes_, live_at_entry};

  Operands ops;
  for (int i = 0; i < n; ++i) {
    const Instruction& instr = *instrs[i];
    if (options_.cancel != nullptr && options_.cancel->IsCancelled()) {
      return absl::CancelledError(StrCat("evaluation cancelled at ", InstrRef(instr)));
    }
    auto start = std::chrono::steady_clock::now();
    if (instr.opcode() == Opcode::kParameter) {
      int64_t p = instr.parameter_number();
      if (p < 0 || p >= static_cast<int64_t>(args.size()) || args[p] == nullptr) {
        return Invalid(instr, "parameter number out of range");
      }
      values[i] = args[p];
    } else if (const Literal* lit = instr.opcode() == Opcode::kConstant ? instr.literal() : nullptr;
               lit != nullptr && (!lit->elided() || (options_.constant_cache != nullptr &&
                                                     options_.elided_constant))) {
      // Constants are read in place: the module's own literal, or the shared elided value.
      if (!lit->elided()) {
        values[i] = lit;
      } else {
        absl::StatusOr<const Literal*> v =
            options_.constant_cache->Get(instr, options_.elided_constant);
        if (!v.ok()) return Annotate(v.status(), instr);
        values[i] = *v;
      }
    } else if (const int j = instr.opcode() == Opcode::kGetTupleElement &&
                             instr.operand_count() == 1
                             ? OperandSlot(plan, instr, 0)
                             : -1;
               j >= 0 && values[j] != nullptr && values[j]->shape().IsTuple() &&
               instr.tuple_index() >= 0 &&
               instr.tuple_index() < static_cast<int64_t>(values[j]->tuple_elements().size())) {
      // Elements are read in place, not copied: an element of a value this frame does not own
      // (an argument, a constant, or an element of one; a while body's reads of its loop
      // state) outlives the frame, and a tuple this frame computed stays until the readers of
      // its elements are done (the plan's last uses).
      values[i] = &values[j]->tuple_elements()[instr.tuple_index()];
    } else if (instr.opcode() == Opcode::kTuple) {
      // A tuple takes over the values whose last reader it is instead of copying them.
      std::vector<Literal> elements;
      elements.reserve(instr.operand_count());
      for (int k = 0; k < instr.operand_count(); ++k) {
        const int o = OperandSlot(plan, instr, k);
        if (o < 0 || values[o] == nullptr) {
          return Invalid(instr, "operand is not computed before its use");
        }
        bool used_again = false;
        for (int m = k + 1; m < instr.operand_count(); ++m) {
          used_again |= instr.operand(m) == instr.operand(k);
        }
        if (!used_again && plan.last_use[o] == i && !plan.pinned[o] && instrs[o] != root &&
            values[o] == &owned[o]) {
          elements.push_back(std::move(owned[o]));
          owned[o] = Literal();
          values[o] = nullptr;
          live_bytes_ -= bytes[o];
          bytes[o] = 0;
        } else if (!used_again && DonatedElementIsFree(plan, instrs, donated, args, i, o) &&
                   values[o] == &donated->tuple_elements()[instrs[o]->tuple_index()]) {
          // A loop state element read for the last time: it moves into the next state.
          Literal* element = &donated->mutable_tuple_elements()->at(instrs[o]->tuple_index());
          elements.push_back(std::move(*element));
          values[o] = nullptr;
        } else {
          elements.push_back(*values[o]);
        }
      }
      owned[i] = MakeTuple(std::move(elements));
      values[i] = &owned[i];
      bytes[i] = LiteralBytes(owned[i]);
      live_bytes_ += bytes[i];
    } else {
      ops.clear();
      for (const Instruction* o : instr.operands()) {
        auto f = plan.index.find(o);
        if (f == plan.index.end() || values[f->second] == nullptr) {
          return Invalid(instr, "operand is not computed before its use");
        }
        ops.push_back(values[f->second]);
      }
      // In place: a dynamic-update-slice (or a fusion whose root is one) whose updated operand
      // is read for the last time takes that operand's storage over and writes only the
      // updated elements (a loop that stacks one row per iteration then costs the row, not
      // the whole array, each time).
      if (std::optional<absl::Status> st = RunInPlace(plan, instrs, args, donated, given, i,
                                                      owned, values, bytes, ops);
          st.has_value()) {
        if (!st->ok()) return Annotate(*st, instr);
        ReportAndRelease(plan, instr, i, is_top, n, start, owned, values, bytes);
        continue;
      }
      uint64_t need = ShapeBytes(instr.shape());
      if (need == UINT64_MAX || live_bytes_ + need > options_.memory_budget_bytes ||
          live_bytes_ + need < live_bytes_) {
        return absl::ResourceExhaustedError(StrCat(
            "evaluator: ", InstrRef(instr), " needs ",
            need == UINT64_MAX ? std::string("more than 2^64") : StrCat(need), " bytes for ",
            "its result while ", live_bytes_, " bytes are live; the memory budget is ",
            options_.memory_budget_bytes, " bytes (EvaluatorOptions::memory_budget_bytes)"));
      }
      absl::StatusOr<Literal> result = absl::UnknownError("");
      std::optional<absl::StatusOr<Literal>> compiled;
      if (options_.compiled) compiled = options_.compiled(instr, ops);
      bool done = compiled.has_value();
      if (done) result = std::move(*compiled);
      // A while loop takes its initial state over when nothing reads it afterwards.
      if (!done && instr.opcode() == Opcode::kWhile && ops.size() == 1) {
        const int o = OperandSlot(plan, instr, 0);
        if (Literal* state = o < 0 ? nullptr
                                   : TakeableOperand(plan, instrs, args, donated, given, i, o,
                                                     owned, values)) {
          result = EvalWhile(instr, TakeOver(o, state, owned, values, bytes));
          done = true;
        }
      }
      // A called computation (or a fusion's, on the interpreter) gets the array operands read
      // here for the last time as its own, so that it can update them in place. They stay in
      // the memory budget until it returns.
      if (!done && (instr.opcode() == Opcode::kCall || instr.opcode() == Opcode::kFusion) &&
          instr.called_computations().size() == 1 && instr.called_computations()[0] != nullptr) {
        std::vector<Literal> handed(ops.size());
        std::vector<Literal*> handed_over(ops.size(), nullptr);
        const uint64_t live_before = live_bytes_;
        for (int k = 0; k < static_cast<int>(ops.size()); ++k) {
          bool repeated = false;
          for (int m = 0; m < static_cast<int>(ops.size()); ++m) {
            repeated |= m != k && instr.operand(m) == instr.operand(k);
          }
          const int o = repeated ? -1 : OperandSlot(plan, instr, k);
          Literal* from = o < 0 ? nullptr
                                : TakeableOperand(plan, instrs, args, donated, given, i, o,
                                                  owned, values);
          if (from == nullptr || !from->shape().IsArray()) continue;
          handed[k] = TakeOver(o, from, owned, values, bytes);
          ops[k] = &handed[k];
          handed_over[k] = &handed[k];
          done = true;
        }
        if (done) {
          const uint64_t handed_bytes = live_before - live_bytes_;
          live_bytes_ = live_before;
          result = Run(*instr.called_computations()[0], ops, nullptr, &handed_over);
          live_bytes_ -= handed_bytes;
        }
      }
      if (!done) result = Dispatch(instr, ops);
      if (!result.ok()) return Annotate(result.status(), instr);
      owned[i] = std::move(*result);
      values[i] = &owned[i];
      bytes[i] = LiteralBytes(owned[i]);
      live_bytes_ += bytes[i];
    }
    ReportAndRelease(plan, instr, i, is_top, n, start, owned, values, bytes);
  }
  int r = plan.index.at(root);
  if (values[r] == &owned[r]) return std::move(owned[r]);
  return *values[r];
}

void Evaluator::ReportAndRelease(const Plan& plan, const Instruction& instr, int i, bool is_top,
                                 int n, std::chrono::steady_clock::time_point start,
                                 std::vector<Literal>& owned, std::vector<const Literal*>& values,
                                 std::vector<uint64_t>& bytes) {
  if (options_.on_instruction) {
    InstructionEvent ev;
    ev.instruction = &instr;
    ev.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ev.result = values[i];
    ev.loop_iteration = loop_iteration_;
    options_.on_instruction(ev);
  }
  // Release the values whose last user this was (never the root).
  for (int j : plan.releases[i]) {
    if (values[j] == &owned[j]) {
      owned[j] = Literal();
      values[j] = nullptr;
      live_bytes_ -= bytes[j];
    }
  }
  if (is_top && options_.progress) options_.progress(i + 1, n, instr.name());
}

Literal* Evaluator::TakeableOperand(const Plan& plan, const std::vector<Instruction*>& instrs,
                                    const Operands& args, Literal* donated,
                                    const std::vector<Literal*>* given, int i, int o,
                                    std::vector<Literal>& owned,
                                    const std::vector<const Literal*>& values) {
  // A value this run computed and owns (not the root, not a tuple elements point into), or an
  // element of the loop state handed to a while body.
  if (values[o] == &owned[o] && plan.last_use[o] == i && !plan.pinned[o] &&
      instrs[o] != instrs[i]->parent()->root()) {
    return &owned[o];
  }
  if (DonatedElementIsFree(plan, instrs, donated, args, i, o) &&
      values[o] == &donated->tuple_elements()[instrs[o]->tuple_index()]) {
    return &donated->mutable_tuple_elements()->at(instrs[o]->tuple_index());
  }
  // A parameter whose value the caller handed over, read here for the last time.
  if (given != nullptr && instrs[o]->opcode() == Opcode::kParameter && plan.last_use[o] == i &&
      !plan.pinned[o]) {
    const int64_t p = instrs[o]->parameter_number();
    if (p >= 0 && p < static_cast<int64_t>(given->size()) && (*given)[p] != nullptr &&
        values[o] == (*given)[p]) {
      return (*given)[p];
    }
  }
  return nullptr;
}

void Evaluator::Taken(int o, const Literal* source, std::vector<Literal>& owned,
                      std::vector<const Literal*>& values, std::vector<uint64_t>& bytes) {
  if (source == &owned[o]) {
    live_bytes_ -= bytes[o];
    bytes[o] = 0;
  }
  values[o] = nullptr;
}

Literal Evaluator::TakeOver(int o, Literal* source, std::vector<Literal>& owned,
                            std::vector<const Literal*>& values, std::vector<uint64_t>& bytes) {
  Literal value = std::move(*source);
  *source = Literal();
  Taken(o, source, owned, values, bytes);
  return value;
}

std::optional<absl::Status> Evaluator::RunInPlace(const Plan& plan,
                                                  const std::vector<Instruction*>& instrs,
                                                  const Operands& args, Literal* donated,
                                                  const std::vector<Literal*>* given, int i,
                                                  std::vector<Literal>& owned,
                                                  std::vector<const Literal*>& values,
                                                  std::vector<uint64_t>& bytes, Operands& ops) {
  const Instruction& instr = *instrs[i];
  const int k = plan.in_place_operand[i];
  if (k < 0 || k >= static_cast<int>(ops.size())) return std::nullopt;
  // Compiled code without an in-place hook (cuda) computes the instruction its own way.
  if (!options_.compiled_in_place &&
      (options_.compiled || instr.opcode() != Opcode::kDynamicUpdateSlice)) {
    return std::nullopt;
  }
  const int o = OperandSlot(plan, instr, k);
  if (o < 0) return std::nullopt;
  Literal* source = TakeableOperand(plan, instrs, args, donated, given, i, o, owned, values);
  if (source == nullptr || !source->shape().IsArray() || source->elided() ||
      !source->shape().SameDimensions(instr.shape()) ||
      source->shape().element_type() != instr.shape().element_type()) {
    return std::nullopt;
  }
  Literal value = std::move(*source);
  *source = Literal();
  ops[k] = &value;
  std::optional<absl::Status> st;
  if (options_.compiled_in_place) st = options_.compiled_in_place(instr, ops, &value);
  if (!st.has_value() && instr.opcode() == Opcode::kDynamicUpdateSlice) {
    st = EvalDynamicUpdateSliceInPlace(instr, ops, &value);
  }
  if (!st.has_value()) {  // nothing was written: the operand goes back
    *source = std::move(value);
    ops[k] = source;
    return std::nullopt;
  }
  Taken(o, source, owned, values, bytes);
  if (!st->ok()) return st;
  owned[i] = std::move(value);
  values[i] = &owned[i];
  bytes[i] = LiteralBytes(owned[i]);
  live_bytes_ += bytes[i];
  return absl::OkStatus();
}

absl::StatusOr<Literal> Evaluator::EvalHostTransfer(const Instruction& instr,
                                                     const Operands& ops) {
  const Opcode op = instr.opcode();
  const bool host = op == Opcode::kInfeed || op == Opcode::kOutfeed ||
                    instr.attrs_or_default().is_host_transfer;
  if (!host) {
    if (options_.collectives != nullptr) return options_.collectives->RunSendRecv(instr, ops);
    return Unimplemented(instr, StrCat(OpcodeName(op), " between devices needs a multi-device "
                                       "run (set --num_partitions or --num_replicas)"));
  }
  if (op == Opcode::kSendDone) return Literal(Shape::Token());
  if (op == Opcode::kRecvDone) {
    // (data, token) from recv's (data, context, token).
    if (ops.empty() || !ops[0]->shape().IsTuple() || ops[0]->tuple_elements().empty()) {
      return Invalid(instr, "recv-done needs the value of a recv");
    }
    return MakeTuple({ops[0]->tuple_elements()[0], Literal(Shape::Token())});
  }
  if (!options_.host_transfer) {
    return Unimplemented(instr, StrCat(OpcodeName(op), " (a host transfer): choose what the host "
                                       "sends with --host_transfers=zeros or fake"));
  }
  const Shape& s = instr.shape();
  if (op == Opcode::kOutfeed || op == Opcode::kSend) {
    if (ops.empty()) return Invalid(instr, "nothing to send");
    auto r = options_.host_transfer(instr, ops[0]);
    if (!r.ok()) return r.status();
    if (op == Opcode::kOutfeed) return Literal(Shape::Token());
    if (!s.IsTuple() || s.tuple_count() < 3) {
      return Invalid(instr, "send must return (data, context, token)");
    }
    return MakeTuple({*ops[0], Zeros(s.tuple_shape(1)), Literal(Shape::Token())});
  }
  // infeed: (data, token); recv: (data, context, token).
  if (!s.IsTuple() || s.tuple_count() < 2) {
    return Invalid(instr, StrCat(OpcodeName(op), " must return a tuple with its data first"));
  }
  auto data = options_.host_transfer(instr, nullptr);
  if (!data.ok()) return data.status();
  if (!data->shape().Compatible(s.tuple_shape(0))) {
    return Invalid(instr, StrCat("the host gave ", PrintShape(data->shape(), false), " for ",
                                 PrintShape(s.tuple_shape(0), false)));
  }
  if (op == Opcode::kInfeed) return MakeTuple({std::move(*data), Literal(Shape::Token())});
  return MakeTuple({std::move(*data), Zeros(s.tuple_shape(1)), Literal(Shape::Token())});
}

absl::StatusOr<Literal> Evaluator::EvalWhile(const Instruction& instr, Literal state) {
  if (instr.called_computations().size() != 2) return Invalid(instr, "while needs condition and body");
  // Parser order: condition=, body=.
  const Computation* cond = instr.called_computations()[0];
  const Computation* body = instr.called_computations()[1];
  int64_t saved = loop_iteration_;
  for (int64_t iter = 0;; ++iter) {
    if (options_.cancel != nullptr && options_.cancel->IsCancelled()) {
      return absl::CancelledError(StrCat("evaluation cancelled in ", InstrRef(instr)));
    }
    loop_iteration_ = iter;
    auto c = Run(*cond, {&state});
    if (!c.ok()) {
      loop_iteration_ = saved;
      return c.status();
    }
    if (!c->shape().IsScalar() || c->shape().element_type() != PrimitiveType::kPred) {
      loop_iteration_ = saved;
      return Invalid(instr, "while condition must return pred[]");
    }
    if (!c->data_as<bool>()[0]) break;
    auto next = Run(*body, {&state}, &state);
    if (!next.ok()) {
      loop_iteration_ = saved;
      return next.status();
    }
    state = std::move(*next);
  }
  loop_iteration_ = saved;
  return state;
}

absl::StatusOr<Literal> Evaluator::EvalConditional(const Instruction& instr, const Operands& ops) {
  const auto& branches = instr.called_computations();
  if (branches.empty() || ops.size() != branches.size() + 1) {
    return Invalid(instr, "conditional needs one operand per branch");
  }
  const Literal& sel = *ops[0];
  int64_t k;
  if (sel.shape().element_type() == PrimitiveType::kPred) {
    k = sel.data_as<bool>()[0] ? 0 : 1;  // true_computation, false_computation
    if (branches.size() != 2) return Invalid(instr, "pred conditional needs two branches");
  } else {
    k = sel.GetInt(0);
    // XLA: an out-of-range branch index runs the last branch.
    if (k < 0 || k >= static_cast<int64_t>(branches.size())) k = branches.size() - 1;
  }
  return Run(*branches[k], {ops[k + 1]});
}

absl::StatusOr<Literal> Evaluator::Dispatch(const Instruction& instr, const Operands& ops) {
  const Opcode op = instr.opcode();
  switch (OpcodeCategoryOf(op)) {
    case OpcodeCategory::kUnary:
    case OpcodeCategory::kUnaryAccuracy:
      if (op == Opcode::kCopy && !ops[0]->shape().IsArray()) return *ops[0];
      return EvalUnary(instr, *ops[0]);
    case OpcodeCategory::kBinary: return EvalBinary(instr, *ops[0], *ops[1]);
    default: break;
  }
  switch (op) {
    case Opcode::kConstant: {
      const Literal* lit = instr.literal();
      if (lit == nullptr) return Invalid(instr, "constant without a literal");
      if (lit->elided()) {
        if (options_.elided_constant) return options_.elided_constant(instr);
        return absl::FailedPreconditionError(StrCat(
            "evaluator: constant ", InstrRef(instr), " was elided ({...}) in the input, so its "
            "values are unknown; give the module with full constants or set "
            "EvaluatorOptions::elided_constant"));
      }
      return *lit;
    }
    case Opcode::kCompare: return EvalCompare(instr, *ops[0], *ops[1]);
    case Opcode::kSelect: return EvalSelect(instr, ops);
    case Opcode::kClamp: return EvalClamp(instr, ops);
    case Opcode::kConvert: return EvalConvert(*ops[0], instr.shape().element_type());
    case Opcode::kBitcastConvert: return EvalBitcastConvert(instr, *ops[0]);
    case Opcode::kReducePrecision: return EvalReducePrecision(instr, *ops[0]);
    case Opcode::kStochasticConvert: return EvalStochasticConvert(instr, ops);
    case Opcode::kIota: return EvalIota(instr);
    case Opcode::kTuple: {
      std::vector<Literal> elems;
      for (const Literal* o : ops) elems.push_back(*o);
      return MakeTuple(std::move(elems));
    }
    case Opcode::kGetTupleElement: {
      int64_t k = instr.tuple_index();
      if (!ops[0]->shape().IsTuple() || k < 0 ||
          k >= static_cast<int64_t>(ops[0]->tuple_elements().size())) {
        return Invalid(instr, "tuple index out of range");
      }
      return ops[0]->tuple_elements()[k];
    }
    case Opcode::kBroadcast: return EvalBroadcast(instr, *ops[0]);
    case Opcode::kReshape: return EvalReshape(instr, *ops[0]);
    case Opcode::kBitcast:
      if (!ops[0]->shape().IsArray()) return *ops[0];
      return Relabel(instr, *ops[0]);
    case Opcode::kTranspose: return EvalTranspose(instr, *ops[0]);
    case Opcode::kSlice: return EvalSlice(instr, *ops[0]);
    case Opcode::kConcatenate: return EvalConcatenate(instr, ops);
    case Opcode::kPad: return EvalPad(instr, *ops[0], *ops[1]);
    case Opcode::kReverse: return EvalReverse(instr, *ops[0]);
    case Opcode::kDynamicSlice: return EvalDynamicSlice(instr, ops);
    case Opcode::kDynamicUpdateSlice: return EvalDynamicUpdateSlice(instr, ops);
    case Opcode::kDynamicReshape: return EvalDynamicReshape(instr, ops);
    case Opcode::kReduce: return EvalReduce(*this, instr, ops);
    case Opcode::kReduceWindow: return EvalReduceWindow(*this, instr, ops);
    case Opcode::kSelectAndScatter: return EvalSelectAndScatter(*this, instr, ops);
    case Opcode::kDot:
      if (!instr.attrs_or_default().sparsity.empty()) return EvalSparseDot(instr, ops);
      if (ops.size() != 2) return Invalid(instr, "dot takes lhs and rhs (metadata operands only "
                                                 "come with sparsity=)");
      return EvalDot(instr, *ops[0], *ops[1]);
    case Opcode::kRaggedDot:
      if (ops.size() != 3) return Invalid(instr, "ragged-dot takes lhs, rhs and group sizes");
      return EvalRaggedDot(instr, *ops[0], *ops[1], *ops[2]);
    case Opcode::kScaledDot:
      if (ops.size() != 4) return Invalid(instr, "scaled-dot takes lhs, lhs_scale, rhs, rhs_scale");
      return EvalScaledDot(instr, *ops[0], *ops[1], *ops[2], *ops[3]);
    case Opcode::kConvolution: return EvalConvolution(instr, *ops[0], *ops[1]);
    case Opcode::kGather: return EvalGather(instr, *ops[0], *ops[1]);
    case Opcode::kScatter: return EvalScatter(*this, instr, ops);
    case Opcode::kSort: return EvalSort(*this, instr, ops);
    case Opcode::kTopK: return EvalTopK(instr, *ops[0]);
    case Opcode::kFft: return EvalFft(instr, *ops[0]);
    case Opcode::kCholesky: return EvalCholesky(instr, *ops[0]);
    case Opcode::kTriangularSolve: return EvalTriangularSolve(instr, *ops[0], *ops[1]);
    case Opcode::kRng: return EvalRng(*this, instr, ops);
    case Opcode::kRngBitGenerator: return EvalRngBitGenerator(instr, *ops[0]);
    case Opcode::kRngGetAndUpdateState: {
      Literal out(instr.shape());
      for (int64_t i = 0; i < out.component_count(); ++i) out.SetBits(i, NextRandom());
      return out;
    }
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad: return EvalBatchNorm(instr, ops);
    case Opcode::kMap: return EvalMap(*this, instr, ops);
    case Opcode::kWhile:
      if (ops.size() != 1) return Invalid(instr, "while takes one operand");
      return EvalWhile(instr, *ops[0]);
    case Opcode::kConditional: return EvalConditional(instr, ops);
    case Opcode::kCall:
    case Opcode::kFusion:
      if (instr.called_computations().empty()) return Invalid(instr, "no called computation");
      return Run(*instr.called_computations()[0], ops);
    case Opcode::kCustomCall:
      if (options_.custom_call) return options_.custom_call(instr, ops, options_.collectives);
      return Unimplemented(instr, StrCat("custom-call target \"",
                                         instr.attrs_or_default().custom_call_target,
                                         "\" (no custom-call handler)"));
    case Opcode::kAsyncStart: {
      if (instr.called_computations().empty()) return Invalid(instr, "async-start without calls=");
      auto r = Run(*instr.called_computations()[0], ops);
      if (!r.ok()) return r.status();
      std::vector<Literal> operands;
      for (const Literal* o : ops) operands.push_back(*o);
      std::vector<Literal> elems;
      elems.push_back(MakeTuple(std::move(operands)));
      elems.push_back(std::move(*r));
      const Shape& s = instr.shape();
      for (int k = 2; s.IsTuple() && k < s.tuple_count(); ++k) elems.push_back(Zeros(s.tuple_shape(k)));
      return MakeTuple(std::move(elems));
    }
    case Opcode::kAsyncUpdate: return *ops[0];
    case Opcode::kAsyncDone:
      if (!ops[0]->shape().IsTuple() || ops[0]->tuple_elements().size() < 2) {
        return Invalid(instr, "async-done operand is not an async-start value");
      }
      return ops[0]->tuple_elements()[1];
    case Opcode::kCopyStart: {
      std::vector<Literal> elems{*ops[0], *ops[0]};
      const Shape& s = instr.shape();
      for (int k = 2; s.IsTuple() && k < s.tuple_count(); ++k) elems.push_back(Zeros(s.tuple_shape(k)));
      return MakeTuple(std::move(elems));
    }
    case Opcode::kCopyDone:
      if (!ops[0]->shape().IsTuple() || ops[0]->tuple_elements().empty()) {
        return Invalid(instr, "copy-done operand is not a copy-start value");
      }
      return ops[0]->tuple_elements()[0];
    case Opcode::kOptimizationBarrier:
    case Opcode::kAddDependency:
    case Opcode::kDomain: return *ops[0];
    case Opcode::kAfterAll: return Literal(Shape::Token());
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kSend:
    case Opcode::kRecv:
    case Opcode::kSendDone:
    case Opcode::kRecvDone: return EvalHostTransfer(instr, ops);
    case Opcode::kGetDimensionSize: {
      Literal out(Shape::Array(PrimitiveType::kS32, {}));
      if (instr.dimensions().empty() || instr.dimensions()[0] < 0 ||
          instr.dimensions()[0] >= ops[0]->shape().rank()) {
        return Invalid(instr, "dimension out of range");
      }
      out.mutable_data_as<int32_t>()[0] =
          static_cast<int32_t>(ops[0]->shape().dimension(instr.dimensions()[0]));
      return out;
    }
    case Opcode::kSetDimensionSize: {
      // Static bounds keep all the data; the runtime size only marks the padding.
      Literal out(Shape::Array(ops[0]->shape().element_type(), ops[0]->shape().dimensions()));
      *out.mutable_data() = ops[0]->data();
      return out;
    }
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      Literal id(Shape::Array(PrimitiveType::kU32, {}));
      if (options_.collectives != nullptr) {
        id.mutable_data_as<uint32_t>()[0] = static_cast<uint32_t>(
            op == Opcode::kReplicaId ? options_.collectives->replica_id()
                                     : options_.collectives->partition_id());
      }
      return id;
    }
    default: break;
  }
  if (options_.collectives != nullptr) {
    switch (op) {
      case Opcode::kAllReduce:
      case Opcode::kAllReduceStart:
      case Opcode::kAllGather:
      case Opcode::kAllGatherStart:
      case Opcode::kAllToAll:
      case Opcode::kRaggedAllToAll:
      case Opcode::kReduceScatter:
      case Opcode::kCollectiveBroadcast:
      case Opcode::kCollectivePermute:
      case Opcode::kCollectivePermuteStart:
        return options_.collectives->RunCollective(
            instr, ops, [this](const Computation& c, const Operands& args) {
              return Run(c, args);
            });
      default: break;
    }
  }
  switch (op) {
    // Collectives on a single device: every group holds only this device.
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllToAll:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveBroadcast: {
      if (ops.size() == 1) {
        if (ops[0]->shape().IsArray() && instr.shape().IsArray() &&
            ops[0]->element_count() != Shape::Array(PrimitiveType::kF32,
                                                    instr.shape().dimensions()).ElementCount()) {
          return Unimplemented(instr, "collective over more than one device");
        }
        return *ops[0];
      }
      std::vector<Literal> elems;
      for (const Literal* o : ops) elems.push_back(*o);
      return MakeTuple(std::move(elems));
    }
    case Opcode::kAllReduceDone:
      // all-reduce-start returns the reduced value itself (an array, or a tuple per operand).
      if (ops[0]->shape().IsTuple() && instr.shape().IsArray() &&
          ops[0]->tuple_elements().size() >= 2) {
        return ops[0]->tuple_elements()[1];
      }
      return *ops[0];
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      // The -start value is (operands, result, context...): the result, even when it is a
      // tuple (several operands).
      if (ops[0]->shape().IsTuple() && ops[0]->tuple_elements().size() >= 2) {
        return ops[0]->tuple_elements()[1];
      }
      return *ops[0];
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermute: {
      if (op != Opcode::kAllGatherStart && ops.size() > 1) {
        if (ops.size() == 4 && ops[2]->shape().IsTuple()) {
          return Unimplemented(instr, "the four-operand (in-place slice) form of collective-permute");
        }
        // The combined form: every operand is permuted alike into a tuple of results.
        bool self = false;
        for (const auto& p : instr.attrs_or_default().source_target_pairs) {
          if (p.first == 0 && p.second == 0) self = true;
        }
        std::vector<Literal> inputs, received;
        for (const Literal* o : ops) {
          inputs.push_back(*o);
          received.push_back(self ? *o : Literal(o->shape()));
        }
        Literal result = MakeTuple(std::move(received));
        if (op == Opcode::kCollectivePermute) return result;
        std::vector<Literal> elems;
        elems.push_back(MakeTuple(std::move(inputs)));
        elems.push_back(std::move(result));
        for (int k = 2; instr.shape().IsTuple() && k < instr.shape().tuple_count(); ++k) {
          elems.push_back(Zeros(instr.shape().tuple_shape(k)));
        }
        return MakeTuple(std::move(elems));
      }
      Literal data = *ops[0];
      if (op != Opcode::kAllGatherStart) {
        bool self = false;
        for (const auto& p : instr.attrs_or_default().source_target_pairs) {
          if (p.first == 0 && p.second == 0) self = true;
        }
        // No pair sends to device 0 from device 0: XLA's result is zeros.
        if (!self) data = Literal(ops[0]->shape());
      }
      if (!instr.shape().IsTuple()) return data;
      std::vector<Literal> elems{*ops[0], std::move(data)};
      for (int k = 2; k < instr.shape().tuple_count(); ++k) elems.push_back(Zeros(instr.shape().tuple_shape(k)));
      return MakeTuple(std::move(elems));
    }
    case Opcode::kParameter: return Invalid(instr, "parameter dispatched");
    default: break;
  }
  return Unimplemented(instr, StrCat("opcode ", OpcodeName(op)));
}

}  // namespace eval

absl::StatusOr<const Literal*> ConstantCache::Get(
    const Instruction& instr,
    const std::function<absl::StatusOr<Literal>(const Instruction&)>& make) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = values_.find(&instr);
  if (it != values_.end()) return it->second.get();
  absl::StatusOr<Literal> v = make(instr);
  if (!v.ok()) return v.status();
  return values_.emplace(&instr, std::make_unique<Literal>(*std::move(v))).first->second.get();
}

absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<const Literal*>& arguments,
                                            const EvaluatorOptions& options) {
  eval::Evaluator ev(options);
  return ev.Run(computation, arguments);
}

absl::StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<Literal>& arguments,
                                       const EvaluatorOptions& options) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("module has no entry computation");
  if (static_cast<int>(arguments.size()) != entry->parameter_count()) {
    return absl::InvalidArgumentError(
        StrCat("entry computation ", entry->name(), " takes ", entry->parameter_count(),
               " arguments but ", arguments.size(), " were given"));
  }
  std::vector<const Literal*> ptrs;
  for (int i = 0; i < entry->parameter_count(); ++i) {
    const Instruction* p = entry->parameter(i);
    if (p == nullptr) return absl::InvalidArgumentError(StrCat("entry parameter ", i, " missing"));
    if (!arguments[i].shape().Compatible(p->shape()) &&
        !(arguments[i].shape().element_type() == p->shape().element_type() &&
          arguments[i].shape().dimensions() == p->shape().dimensions())) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " does not match the shape of ",
                                               "entry parameter %", p->name()));
    }
    if (arguments[i].elided()) {
      return absl::InvalidArgumentError(StrCat("argument ", i, " has no data (elided)"));
    }
    ptrs.push_back(&arguments[i]);
  }
  return EvaluateComputation(*entry, ptrs, options);
}

InstructionRunner::InstructionRunner(const EvaluatorOptions& options)
    : evaluator_(std::make_unique<eval::Evaluator>(options)) {}
InstructionRunner::~InstructionRunner() = default;

absl::StatusOr<Literal> InstructionRunner::Compute(const Instruction& instr,
                                                   const std::vector<const Literal*>& operands) {
  if (instr.opcode() == Opcode::kWhile || instr.opcode() == Opcode::kConditional) {
    return eval::Invalid(instr, "control flow is run by the caller, not computed as one instruction");
  }
  if (static_cast<int>(operands.size()) != instr.operand_count()) {
    return eval::Invalid(instr, StrCat("given ", operands.size(), " operand values for ",
                                 instr.operand_count(), " operands"));
  }
  absl::StatusOr<Literal> result = evaluator_->Dispatch(instr, operands);
  if (!result.ok()) return eval::Annotate(result.status(), instr);
  return result;
}

}  // namespace hlowb
