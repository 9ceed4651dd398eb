#include "replay/backends/cpu/cpu_arena.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <utility>

#include "core/analysis/cost_model.h"
#include "core/ir/computation.h"
#include "core/ir/literal_storage.h"
#include "core/passes/copy_insertion.h"
#include "core/support/strings.h"
#include "replay/evaluator/instruction_runner.h"

namespace hlowb::cpu {
namespace {

constexpr int64_t kAlign = 64;

int64_t AlignUp(int64_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// One array of a value: where its bytes are.
struct Leaf {
  int64_t alloc = -1;
  int64_t offset = 0;
  int64_t size = 0;
  const Shape* shape = nullptr;
  ShapeIndex index;  // within the instruction whose value it is a leaf of
  bool operator==(const Leaf& o) const { return alloc == o.alloc && offset == o.offset; }
};
using Leaves = std::vector<Leaf>;  // a value's arrays in pre-order; tokens have none

bool Overlap(const Leaf& a, const Leaf& b) {
  return a.alloc == b.alloc && a.size > 0 && b.size > 0 && a.offset < b.offset + b.size &&
         b.offset < a.offset + a.size;
}

std::string IndexText(const ShapeIndex& index) {
  std::string out;
  for (size_t k = 0; k < index.size(); ++k) StrAppend(&out, k == 0 ? "" : ",", index[k]);
  return out;
}

std::string Ref(const Instruction& instr) {
  return StrCat("%", instr.name(), " (", OpcodeName(instr.opcode()), ")");
}

absl::Status At(const absl::Status& st, const Instruction& instr) {
  return absl::Status(st.code(), StrCat("cpu arena: ", Ref(instr), ": ", st.message()));
}

enum class StepKind {
  kAlias,        // its arrays are its operands' (or, for parameters and constants, given)
  kCopyLeaves,   // an alias that buffer assignment placed apart: copies `sources` to `out`
  kCompute,      // a kernel, a library call or the interpreter
  kWhile,
  kConditional,
  kCall,
};

struct Step {
  const Instruction* instr = nullptr;
  StepKind kind = StepKind::kCompute;
  Leaves out;
  std::vector<Leaves> operands;
  Leaves sources;  // kCopyLeaves
  // kCompute: the operand an in-place kernel updates (InPlaceUpdatedOperand) and whether the
  // output sits on it; whether a kernel that is not in place must read that operand from a copy.
  int in_place_operand = -1;
  bool output_on_operand = false;
  std::vector<int> callees;  // plan indices: while {cond, body}; conditional branches; call
};

struct ComputationPlan {
  const Computation* computation = nullptr;
  std::vector<Step> steps;
  std::vector<Leaves> params;
  Leaves root;
};

// Where a run finds allocation `a`.
struct AllocationPlace {
  // kResult: an output allocation that holds exactly one array of the result, which is made
  // first and written in place (the run hands it back without a copy).
  enum Kind { kBlock, kArgument, kConstant, kResult } kind = kBlock;
  int64_t block_offset = 0;            // kBlock (also private copies of the other two)
  bool private_copy = false;           // argument or constant copied into the block first
  int64_t parameter_number = -1;       // kArgument
  const Instruction* constant = nullptr;  // kConstant
  ShapeIndex index;                     // the array inside the argument, constant or result
};

}  // namespace

struct ArenaProgram::Impl {
  const Module* module = nullptr;
  BufferAssignment assignment;
  std::vector<ComputationPlan> plans;  // plans[0] is the entry
  std::vector<AllocationPlace> places;
  int64_t block_bytes = 0;
  int64_t result_bytes = 0;  // kResult allocations, made as the result's own arrays
  ArenaStats stats;
};

namespace {

class Planner {
 public:
  explicit Planner(ArenaProgram::Impl* impl) : impl_(impl) {}

  absl::StatusOr<int> PlanComputation(const Computation* c) {
    auto it = index_.find(c);
    if (it != index_.end()) return it->second;
    const int id = static_cast<int>(impl_->plans.size());
    index_[c] = id;
    impl_->plans.emplace_back();
    ComputationPlan plan;
    plan.computation = c;
    for (int p = 0; p < c->parameter_count(); ++p) {
      const Instruction* param = c->parameter(p);
      if (param == nullptr) return absl::InvalidArgumentError(StrCat("parameter ", p, " missing"));
      absl::StatusOr<Leaves> leaves = LeavesOf(*param);
      if (!leaves.ok()) return leaves.status();
      plan.params.push_back(*std::move(leaves));
    }
    for (const Instruction* h : c->instructions()) {
      absl::StatusOr<Step> step = PlanStep(*h);
      if (!step.ok()) return step.status();
      plan.steps.push_back(*std::move(step));
    }
    if (c->root() == nullptr) return absl::InvalidArgumentError(StrCat(c->name(), " has no root"));
    absl::StatusOr<Leaves> root = LeavesOf(*c->root());
    if (!root.ok()) return root.status();
    plan.root = *std::move(root);
    impl_->plans[id] = std::move(plan);
    return id;
  }

 private:
  absl::Status AddLeaves(const Instruction& instr, const Shape& shape, ShapeIndex* index,
                         Leaves* out) {
    if (shape.IsTuple()) {
      for (int k = 0; k < shape.tuple_count(); ++k) {
        index->push_back(k);
        absl::Status st = AddLeaves(instr, shape.tuple_shape(k), index, out);
        index->pop_back();
        if (!st.ok()) return st;
      }
      return absl::OkStatus();
    }
    if (!shape.IsArray()) return absl::OkStatus();  // tokens and the like hold no bytes
    std::optional<AllocationSlice> slice = impl_->assignment.GetSlice(&instr, *index);
    if (!slice.has_value()) {
      return absl::FailedPreconditionError(
          StrCat(Ref(instr), " {", IndexText(*index), "} has no buffer"));
    }
    if (slice->size != ShapeByteSize(shape)) {
      return absl::FailedPreconditionError(
          StrCat(Ref(instr), " {", IndexText(*index), "}: its buffer holds ", slice->size,
                 " bytes, the runtime's array ", ShapeByteSize(shape)));
    }
    out->push_back({slice->allocation, slice->offset, slice->size, &shape, *index});
    return absl::OkStatus();
  }

  absl::StatusOr<Leaves> LeavesOf(const Instruction& instr, ShapeIndex index = {}) {
    const Shape* shape = &instr.shape();
    for (int64_t k : index) {
      if (!shape->IsTuple() || k < 0 || k >= shape->tuple_count()) {
        return absl::InvalidArgumentError(StrCat(Ref(instr), ": no element {",
                                                 IndexText(index), "}"));
      }
      shape = &shape->tuple_shape(static_cast<int>(k));
    }
    Leaves out;
    absl::Status st = AddLeaves(instr, *shape, &index, &out);
    if (!st.ok()) return st;
    return out;
  }

  absl::StatusOr<Step> PlanStep(const Instruction& h) {
    Step step;
    step.instr = &h;
    absl::StatusOr<Leaves> out = LeavesOf(h);
    if (!out.ok()) return out.status();
    step.out = *std::move(out);
    for (const Instruction* op : h.operands()) {
      absl::StatusOr<Leaves> l = LeavesOf(*op);
      if (!l.ok()) return l.status();
      step.operands.push_back(*std::move(l));
    }
    const Opcode opc = h.opcode();
    // Collectives run as the evaluator runs them; asynchronous pairs, whose halves share
    // buffers, are left to the driver.
    if (OpcodeCategoryOf(opc) == OpcodeCategory::kAsync || IsAsyncCollectiveStart(opc) ||
        IsAsyncCollectiveDone(opc)) {
      return absl::UnimplementedError(
          StrCat(Ref(h), ": asynchronous pairs run on the driver"));
    }
    auto alias_of = [&](Leaves sources) -> Step {
      if (sources.size() != step.out.size()) {
        step.kind = StepKind::kCompute;  // cannot happen for well-formed modules
        return step;
      }
      bool same = true;
      for (size_t k = 0; k < sources.size(); ++k) same &= sources[k] == step.out[k];
      step.kind = same ? StepKind::kAlias : StepKind::kCopyLeaves;
      if (!same) step.sources = std::move(sources);
      return step;
    };
    switch (opc) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kAfterAll:
        step.kind = StepKind::kAlias;
        return step;
      case Opcode::kTuple: {
        Leaves all;
        for (const Leaves& l : step.operands) all.insert(all.end(), l.begin(), l.end());
        return alias_of(std::move(all));
      }
      case Opcode::kGetTupleElement: {
        absl::StatusOr<Leaves> l = LeavesOf(*h.operand(0), {h.tuple_index()});
        if (!l.ok()) return l.status();
        return alias_of(*std::move(l));
      }
      case Opcode::kBitcast:
      case Opcode::kAddDependency:
      case Opcode::kOptimizationBarrier:
      case Opcode::kDomain:
        if (h.operand_count() < 1) return absl::InvalidArgumentError(StrCat(Ref(h), ": no operand"));
        return alias_of(step.operands[0]);
      case Opcode::kWhile: {
        if (h.called_computations().size() != 2 || h.operand_count() != 1) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": not a while loop"));
        }
        step.kind = StepKind::kWhile;
        // condition, body
        const Computation* cond = h.called_computations()[0];
        const Computation* body = h.called_computations()[1];
        if (cond->root() != nullptr && !cond->root()->shape().IsArray()) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": condition is not a pred"));
        }
        for (const Computation* c : {cond, body}) {
          absl::StatusOr<int> id = PlanComputation(c);
          if (!id.ok()) return id.status();
          step.callees.push_back(*id);
        }
        return step;
      }
      case Opcode::kConditional:
      case Opcode::kCall: {
        step.kind = opc == Opcode::kCall ? StepKind::kCall : StepKind::kConditional;
        for (const Computation* c : h.called_computations()) {
          absl::StatusOr<int> id = PlanComputation(c);
          if (!id.ok()) return id.status();
          step.callees.push_back(*id);
        }
        if (step.callees.empty()) return absl::InvalidArgumentError(StrCat(Ref(h), ": no callee"));
        return step;
      }
      default: break;
    }
    step.kind = StepKind::kCompute;
    step.in_place_operand = InPlaceUpdatedOperand(h);
    const int k = step.in_place_operand;
    if (k >= 0 && k < static_cast<int>(step.operands.size()) && step.out.size() == 1 &&
        step.operands[k].size() == 1) {
      step.output_on_operand = Overlap(step.out[0], step.operands[k][0]);
    }
    return step;
  }

  ArenaProgram::Impl* impl_;
  std::map<const Computation*, int> index_;
};

// A literal that views `leaves` (consumed from *next in pre-order) with `shape`: arrays over their
// bytes, tuples of such views, tokens as tokens.
Literal View(const Shape& shape, const Leaves& leaves, size_t* next,
             const std::vector<uint8_t*>& bases) {
  if (shape.IsTuple()) {
    Literal out(shape, /*allocate=*/false);
    std::vector<Literal>& elems = *out.mutable_tuple_elements();
    for (int k = 0; k < shape.tuple_count(); ++k) {
      elems[k] = View(shape.tuple_shape(k), leaves, next, bases);
    }
    return out;
  }
  if (!shape.IsArray()) return Literal(shape);
  const Leaf& l = leaves[(*next)++];
  return LiteralOver(shape, bases[l.alloc] + l.offset);
}

// The arrays of `lit` in pre-order.
void ArraysOf(Literal* lit, std::vector<Literal*>* out) {
  if (lit->shape().IsTuple()) {
    for (Literal& e : *lit->mutable_tuple_elements()) ArraysOf(&e, out);
  } else if (lit->shape().IsArray()) {
    out->push_back(lit);
  }
}

// One run's state.
class ArenaRun {
 public:
  ArenaRun(const ArenaProgram::Impl& impl, const EvaluatorOptions& options,
           const ArenaCode& code)
      : impl_(impl), options_(options), code_(code), runner_(options) {}

  ~ArenaRun() {
    registrations_.clear();  // before the block goes back: freeing it must not be a no-op
    if (block_ != nullptr) {
      if (code_.release) {
        code_.release(block_, static_cast<size_t>(impl_.block_bytes));
      } else {
        FreeLiteralStorage(block_, static_cast<size_t>(impl_.block_bytes));
      }
    }
  }

  absl::Status Prepare(const std::vector<Literal>& arguments) {
    const Computation* entry = impl_.module->entry();
    if (static_cast<int>(arguments.size()) != entry->parameter_count()) {
      return absl::InvalidArgumentError(
          StrCat("entry computation ", entry->name(), " takes ", entry->parameter_count(),
                 " arguments but ", arguments.size(), " were given"));
    }
    for (int i = 0; i < entry->parameter_count(); ++i) {
      const Shape& want = entry->parameter(i)->shape();
      const Literal& a = arguments[i];
      if (!a.shape().Compatible(want) &&
          !(a.shape().element_type() == want.element_type() &&
            a.shape().dimensions() == want.dimensions())) {
        return absl::InvalidArgumentError(StrCat("argument ", i, " does not match the shape of ",
                                                 "entry parameter %",
                                                 entry->parameter(i)->name()));
      }
      if (a.elided()) return absl::InvalidArgumentError(StrCat("argument ", i, " has no data (elided)"));
    }
    const uint64_t need = static_cast<uint64_t>(impl_.block_bytes + impl_.result_bytes);
    if (need > options_.memory_budget_bytes) {
      return absl::ResourceExhaustedError(StrCat(
          "cpu arena: the run needs ", need, " bytes (buffer assignment's temp and output "
          "allocations and private copies); the memory budget is ", options_.memory_budget_bytes,
          " bytes (EvaluatorOptions::memory_budget_bytes)"));
    }
    if (impl_.block_bytes > 0) {
      if (code_.allocate) {
        block_ = static_cast<uint8_t*>(code_.allocate(static_cast<size_t>(impl_.block_bytes)));
        if (block_ == nullptr) {
          return absl::ResourceExhaustedError(
              StrCat("arena: no memory for the run's block of ", impl_.block_bytes, " bytes"));
        }
      } else {
        try {
          block_ = static_cast<uint8_t*>(
              AllocateLiteralStorage(static_cast<size_t>(impl_.block_bytes)));
        } catch (const std::bad_alloc&) {
          return absl::ResourceExhaustedError(
              StrCat("cpu arena: out of memory for the run's ", need, " bytes"));
        }
      }
      Register(block_, impl_.block_bytes);
    }
    const std::vector<BufferAllocation>& allocs = impl_.assignment.allocations();
    bases_.assign(allocs.size(), nullptr);
    // The result's arrays, uninitialised; those in kResult allocations are written in place.
    MakeResult(impl_.module->entry()->root()->shape(), &result_);
    for (size_t a = 0; a < allocs.size(); ++a) {
      const AllocationPlace& place = impl_.places[a];
      const uint8_t* source = nullptr;
      size_t source_bytes = 0;
      if (place.kind == AllocationPlace::kArgument) {
        absl::StatusOr<const Literal*> lit =
            Element(arguments[place.parameter_number], place.index,
                    StrCat("argument ", place.parameter_number));
        if (!lit.ok()) return lit.status();
        source = (*lit)->data().data();
        source_bytes = (*lit)->data().size();
      } else if (place.kind == AllocationPlace::kConstant) {
        absl::StatusOr<const Literal*> value = ConstantValue(*place.constant);
        if (!value.ok()) return value.status();
        absl::StatusOr<const Literal*> lit =
            Element(**value, place.index, StrCat("constant ", Ref(*place.constant)));
        if (!lit.ok()) return lit.status();
        source = (*lit)->data().data();
        source_bytes = (*lit)->data().size();
      }
      if (place.kind == AllocationPlace::kResult) {
        absl::StatusOr<const Literal*> lit = Element(result_, place.index, "the result");
        if (!lit.ok()) return lit.status();
        if (static_cast<int64_t>((*lit)->data().size()) != allocs[a].size) {
          return absl::InternalError(StrCat("cpu arena: output allocation ", a, " holds ",
                                            allocs[a].size, " bytes, its result array ",
                                            (*lit)->data().size()));
        }
        bases_[a] = const_cast<uint8_t*>((*lit)->data().data());
        Register(bases_[a], allocs[a].size);
        continue;
      }
      if (place.kind != AllocationPlace::kBlock &&
          static_cast<int64_t>(source_bytes) != allocs[a].size) {
        return absl::InvalidArgumentError(StrCat(
            "cpu arena: allocation ", a, " holds ", allocs[a].size, " bytes but its ",
            place.kind == AllocationPlace::kArgument ? "argument" : "constant", " has ",
            source_bytes));
      }
      if (place.kind == AllocationPlace::kBlock || place.private_copy) {
        bases_[a] = block_ + place.block_offset;
        if (place.private_copy && source_bytes > 0) std::memcpy(bases_[a], source, source_bytes);
      } else {
        bases_[a] = const_cast<uint8_t*>(source);
        Register(bases_[a], static_cast<int64_t>(source_bytes));
      }
    }
    if (code_.prepared && block_ != nullptr) {
      return code_.prepared(block_, static_cast<size_t>(impl_.block_bytes));
    }
    return absl::OkStatus();
  }

  absl::Status RunComputation(int id, bool top) {
    const ComputationPlan& plan = impl_.plans[id];
    const int n = static_cast<int>(plan.steps.size());
    for (int i = 0; i < n; ++i) {
      const Step& step = plan.steps[i];
      if (options_.cancel != nullptr && options_.cancel->IsCancelled()) {
        return absl::CancelledError(StrCat("evaluation cancelled at ", Ref(*step.instr)));
      }
      const auto start = std::chrono::steady_clock::now();
      absl::Status st = RunStep(step);
      if (!st.ok()) return st;
      if (options_.on_instruction) {
        size_t next = 0;
        Literal value = View(step.instr->shape(), step.out, &next, bases_);
        InstructionEvent ev;
        ev.instruction = step.instr;
        ev.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        ev.result = &value;
        ev.loop_iteration = loop_iteration_;
        options_.on_instruction(ev);
      }
      if (top && options_.progress) options_.progress(i + 1, n, step.instr->name());
    }
    return absl::OkStatus();
  }

  // The result: arrays outside kResult allocations are copied into it.
  Literal Result() {
    const ComputationPlan& entry = impl_.plans[0];
    std::vector<Literal*> arrays;
    ArraysOf(&result_, &arrays);
    for (size_t k = 0; k < arrays.size() && k < entry.root.size(); ++k) {
      uint8_t* to = arrays[k]->mutable_data()->data();
      const uint8_t* from = Ptr(entry.root[k]);
      if (to != from && !arrays[k]->data().empty()) {
        std::memcpy(to, from, arrays[k]->data().size());
      }
    }
    registrations_.clear();  // the result's storage is its own again
    return std::move(result_);
  }

 private:
  void Register(void* p, int64_t bytes) {
    if (p == nullptr || bytes <= 0) return;
    registrations_.push_back(std::make_unique<ScopedExternalStorage>(p, static_cast<size_t>(bytes)));
  }

  // The array of `lit` at `index`.
  static absl::StatusOr<const Literal*> Element(const Literal& lit, const ShapeIndex& index,
                                                const std::string& what) {
    const Literal* at = &lit;
    for (int64_t k : index) {
      if (!at->shape().IsTuple() || k < 0 ||
          k >= static_cast<int64_t>(at->tuple_elements().size())) {
        return absl::InvalidArgumentError(StrCat(what, " has no element {", IndexText(index), "}"));
      }
      at = &at->tuple_elements()[k];
    }
    if (!at->shape().IsArray()) {
      return absl::InvalidArgumentError(StrCat(what, " {", IndexText(index), "} is not an array"));
    }
    return at;
  }

  absl::StatusOr<const Literal*> ConstantValue(const Instruction& c) {
    const Literal* lit = c.literal();
    if (lit == nullptr) return absl::InvalidArgumentError(StrCat(Ref(c), ": no literal"));
    if (!lit->elided()) return lit;
    if (!options_.elided_constant) {
      return absl::FailedPreconditionError(StrCat(
          "evaluator: constant ", Ref(c), " was elided ({...}) in the input, so its values are "
          "unknown; give the module with full constants or set EvaluatorOptions::elided_constant"));
    }
    if (options_.constant_cache != nullptr) {
      return options_.constant_cache->Get(c, options_.elided_constant);
    }
    absl::StatusOr<Literal> made = options_.elided_constant(c);
    if (!made.ok()) return made.status();
    owned_constants_.push_back(std::make_unique<Literal>(*std::move(made)));
    return owned_constants_.back().get();
  }

  uint8_t* Ptr(const Leaf& l) const { return bases_[l.alloc] + l.offset; }

  static void MakeResult(const Shape& shape, Literal* out) {
    if (shape.IsTuple()) {
      *out = Literal(shape, /*allocate=*/false);
      std::vector<Literal>& elems = *out->mutable_tuple_elements();
      for (int k = 0; k < shape.tuple_count(); ++k) MakeResult(shape.tuple_shape(k), &elems[k]);
    } else if (shape.IsArray()) {
      *out = Literal::Uninitialized(shape);
    } else {
      *out = Literal(shape);
    }
  }

  // Copies the arrays at `from` to `to` (same count and sizes), through a staging copy when a
  // source overlaps another destination.
  absl::Status CopyLeaves(const Leaves& from, const Leaves& to, const Instruction& instr) {
    if (from.size() != to.size()) {
      return absl::InternalError(StrCat("cpu arena: ", Ref(instr), ": ", from.size(),
                                        " arrays meet ", to.size()));
    }
    std::vector<size_t> moved;
    bool overlaps = false;
    for (size_t k = 0; k < from.size(); ++k) {
      if (from[k] == to[k]) continue;
      if (from[k].size != to[k].size) {
        return absl::InternalError(StrCat("cpu arena: ", Ref(instr), ": array ", k, " has ",
                                          from[k].size, " bytes, its place ", to[k].size));
      }
      moved.push_back(k);
    }
    if (moved.empty()) return absl::OkStatus();
    for (size_t a : moved) {
      for (size_t b : moved) overlaps |= a != b && Overlap(from[a], to[b]);
    }
    if (!overlaps) {
      for (size_t k : moved) std::memmove(Ptr(to[k]), Ptr(from[k]), static_cast<size_t>(to[k].size));
      return absl::OkStatus();
    }
    std::vector<std::vector<uint8_t>> staged;
    for (size_t k : moved) staged.emplace_back(Ptr(from[k]), Ptr(from[k]) + from[k].size);
    for (size_t j = 0; j < moved.size(); ++j) {
      if (!staged[j].empty()) std::memcpy(Ptr(to[moved[j]]), staged[j].data(), staged[j].size());
    }
    return absl::OkStatus();
  }

  absl::Status RunStep(const Step& step) {
    const Instruction& h = *step.instr;
    switch (step.kind) {
      case StepKind::kAlias: return absl::OkStatus();
      case StepKind::kCopyLeaves: return CopyLeaves(step.sources, step.out, h);
      case StepKind::kCompute: return Compute(step);
      case StepKind::kWhile: {
        const ComputationPlan& cond = impl_.plans[step.callees[0]];
        const ComputationPlan& body = impl_.plans[step.callees[1]];
        if (body.params.size() != 1 || cond.params.size() != 1 || cond.root.size() != 1) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": malformed loop computations"));
        }
        const Leaves& state = body.params[0];
        absl::Status st = CopyLeaves(step.operands[0], state, h);
        const int64_t outer = loop_iteration_;
        for (int64_t it = 0; st.ok(); ++it) {
          if (options_.cancel != nullptr && options_.cancel->IsCancelled()) {
            return absl::CancelledError(StrCat("evaluation cancelled in ", Ref(h)));
          }
          st = CopyLeaves(state, cond.params[0], h);
          if (st.ok()) st = RunComputation(step.callees[0], false);
          if (!st.ok()) break;
          if (*Ptr(cond.root[0]) == 0) break;
          loop_iteration_ = it;
          st = RunComputation(step.callees[1], false);
          loop_iteration_ = outer;
          if (st.ok()) st = CopyLeaves(body.root, state, h);
        }
        if (!st.ok()) return st;
        return CopyLeaves(state, step.out, h);
      }
      case StepKind::kConditional: {
        const size_t branches = step.callees.size();
        if (step.operands.size() != branches + 1 || step.operands[0].size() != 1) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": needs one operand per branch"));
        }
        const Leaf& sel = step.operands[0][0];
        int64_t k;
        if (sel.shape->element_type() == PrimitiveType::kPred) {
          if (branches != 2) return absl::InvalidArgumentError(StrCat(Ref(h), ": pred needs two branches"));
          k = *Ptr(sel) != 0 ? 0 : 1;
        } else {
          int32_t v = 0;
          std::memcpy(&v, Ptr(sel), sizeof v);
          k = v;
          if (k < 0 || k >= static_cast<int64_t>(branches)) k = static_cast<int64_t>(branches) - 1;
        }
        const ComputationPlan& branch = impl_.plans[step.callees[k]];
        if (branch.params.size() != 1) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": a branch takes one parameter"));
        }
        absl::Status st = CopyLeaves(step.operands[k + 1], branch.params[0], h);
        if (st.ok()) st = RunComputation(step.callees[k], false);
        if (st.ok()) st = CopyLeaves(branch.root, step.out, h);
        return st;
      }
      case StepKind::kCall: {
        const ComputationPlan& callee = impl_.plans[step.callees[0]];
        if (callee.params.size() != step.operands.size()) {
          return absl::InvalidArgumentError(StrCat(Ref(h), ": operand count is not the callee's"));
        }
        for (size_t p = 0; p < callee.params.size(); ++p) {
          absl::Status st = CopyLeaves(step.operands[p], callee.params[p], h);
          if (!st.ok()) return st;
        }
        absl::Status st = RunComputation(step.callees[0], false);
        if (st.ok()) st = CopyLeaves(callee.root, step.out, h);
        return st;
      }
    }
    return absl::InternalError("cpu arena: unknown step");
  }

  absl::Status Compute(const Step& step) {
    const Instruction& h = *step.instr;
    std::vector<void*> ops(step.operands.size(), nullptr);
    for (size_t k = 0; k < ops.size(); ++k) {
      if (h.operand(static_cast<int>(k))->shape().IsArray() && step.operands[k].size() == 1) {
        ops[k] = Ptr(step.operands[k][0]);
      }
    }
    std::vector<void*> outs;
    for (const Leaf& l : step.out) outs.push_back(Ptr(l));
    if (step.output_on_operand && code_.in_place_kernel && Ptr(step.out[0]) == ops[step.in_place_operand]) {
      if (std::optional<absl::Status> r = code_.in_place_kernel(h, ops); r.has_value()) {
        return r->ok() ? absl::OkStatus() : At(*r, h);
      }
    }
    if (code_.kernel) {
      std::vector<uint8_t> scratch;
      std::unique_ptr<void, std::function<void(void*)>> device_scratch;
      std::vector<void*> kernel_ops = ops;
      if (step.output_on_operand && ops[step.in_place_operand] != nullptr) {
        // A kernel that is not in place reads the whole operand its output overwrites.
        const Leaf& l = step.operands[step.in_place_operand][0];
        if (code_.allocate) {
          const size_t bytes = static_cast<size_t>(l.size);
          device_scratch = std::unique_ptr<void, std::function<void(void*)>>(
              code_.allocate(bytes), [this, bytes](void* p) { code_.release(p, bytes); });
          if (device_scratch == nullptr) {
            return absl::ResourceExhaustedError(StrCat(Ref(h), ": no memory for a copy of ",
                                                       bytes, " bytes"));
          }
          std::memcpy(device_scratch.get(), Ptr(l), bytes);
          kernel_ops[step.in_place_operand] = device_scratch.get();
        } else {
          scratch.assign(Ptr(l), Ptr(l) + l.size);
          kernel_ops[step.in_place_operand] = scratch.data();
        }
      }
      if (std::optional<absl::Status> r = code_.kernel(h, kernel_ops, outs); r.has_value()) {
        return r->ok() ? absl::OkStatus() : At(*r, h);
      }
    }
    // Library calls and the interpreter: operands as literals over the arena, the result placed
    // in its arrays where they overlap no operand.
    std::vector<Literal> views;
    views.reserve(step.operands.size());
    std::vector<const Literal*> op_ptrs;
    for (size_t k = 0; k < step.operands.size(); ++k) {
      size_t next = 0;
      views.push_back(View(h.operand(static_cast<int>(k))->shape(), step.operands[k], &next, bases_));
    }
    for (const Literal& v : views) op_ptrs.push_back(&v);
    std::vector<ScopedStoragePlacement::Slice> slices;
    for (const Leaf& l : step.out) {
      bool clear = true;
      for (const Leaves& o : step.operands) {
        for (const Leaf& ol : o) clear &= !Overlap(l, ol);
      }
      if (clear) slices.push_back({Ptr(l), static_cast<size_t>(l.size)});
    }
    absl::StatusOr<Literal> result = absl::UnknownError("");
    {
      ScopedStoragePlacement placement(std::move(slices));
      std::optional<absl::StatusOr<Literal>> library;
      if (options_.compiled) library = options_.compiled(h, op_ptrs);
      result = library.has_value() ? std::move(*library) : runner_.Compute(h, op_ptrs);
    }
    if (!result.ok()) return result.status();
    std::vector<Literal*> arrays;
    ArraysOf(&*result, &arrays);
    if (arrays.size() != step.out.size()) {
      return absl::InternalError(StrCat("cpu arena: ", Ref(h), " gave ", arrays.size(),
                                        " arrays for ", step.out.size(), " places"));
    }
    for (size_t k = 0; k < arrays.size(); ++k) {
      const LiteralBytes& bytes = arrays[k]->data();
      if (static_cast<int64_t>(bytes.size()) != step.out[k].size) {
        return absl::InternalError(StrCat("cpu arena: ", Ref(h), " gave ", bytes.size(),
                                          " bytes for a place of ", step.out[k].size));
      }
      if (bytes.data() != Ptr(step.out[k]) && !bytes.empty()) {
        std::memmove(Ptr(step.out[k]), bytes.data(), bytes.size());
      }
    }
    return absl::OkStatus();
  }

  const ArenaProgram::Impl& impl_;
  const EvaluatorOptions& options_;
  const ArenaCode& code_;
  InstructionRunner runner_;
  uint8_t* block_ = nullptr;
  std::vector<uint8_t*> bases_;
  std::vector<std::unique_ptr<ScopedExternalStorage>> registrations_;
  std::vector<std::unique_ptr<Literal>> owned_constants_;
  Literal result_;
  int64_t loop_iteration_ = -1;
};

}  // namespace

ArenaProgram::ArenaProgram() : impl_(std::make_unique<Impl>()) {}
ArenaProgram::~ArenaProgram() = default;
const ArenaStats& ArenaProgram::stats() const { return impl_->stats; }

absl::StatusOr<std::unique_ptr<ArenaProgram>> ArenaProgram::Plan(const Module& module,
                                                                 const ArenaPlanOptions& options) {
  if (module.entry() == nullptr) return absl::InvalidArgumentError("the module has no entry");
  if (!module.config().is_scheduled) {
    return absl::FailedPreconditionError("the module is not scheduled");
  }
  std::unique_ptr<ArenaProgram> program(new ArenaProgram());
  Impl& impl = *program->impl_;
  impl.module = &module;
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(module);
  if (!ba.ok()) return ba.status();
  impl.assignment = *std::move(ba);
  Planner planner(&impl);
  absl::StatusOr<int> entry = planner.PlanComputation(module.entry());
  if (!entry.ok()) return entry.status();

  // Where each allocation lives in a run. Parameters and constants are read where they are,
  // unless a value other than their own shares the allocation (the program would write it).
  const std::vector<BufferAllocation>& allocs = impl.assignment.allocations();
  const std::vector<LogicalValue>& values = impl.assignment.values();
  impl.places.resize(allocs.size());
  // Output allocations that hold exactly one array of the result, once.
  std::map<int64_t, int> uses;
  for (const Leaf& l : impl.plans[0].root) ++uses[l.alloc];
  for (const Leaf& l : impl.plans[0].root) {
    if (options.inputs_in_block) break;  // the result is copied out of the block
    const BufferAllocation& alloc = allocs[l.alloc];
    if (alloc.kind == AllocationKind::kOutput && l.offset == 0 && alloc.size == l.size &&
        uses[l.alloc] == 1) {
      impl.places[l.alloc].kind = AllocationPlace::kResult;
      impl.places[l.alloc].index = l.index;
    }
  }
  int64_t offset = 0;
  for (size_t a = 0; a < allocs.size(); ++a) {
    const BufferAllocation& alloc = allocs[a];
    AllocationPlace& place = impl.places[a];
    if (alloc.kind == AllocationKind::kParameter || alloc.kind == AllocationKind::kConstant) {
      const LogicalValue* owner_value = nullptr;
      bool shared = false;
      for (const BufferAllocation::Assigned& s : alloc.assigned) {
        const LogicalValue& v = values[s.value];
        const Instruction* def = v.instruction;
        const bool own = alloc.kind == AllocationKind::kParameter
                             ? def->opcode() == Opcode::kParameter && def->parent() == module.entry()
                             : def->opcode() == Opcode::kConstant;
        if (!own) {
          shared = true;
        } else if (owner_value == nullptr) {
          owner_value = &v;
        } else {
          shared = true;
        }
      }
      const Instruction* owner = owner_value != nullptr ? owner_value->instruction : nullptr;
      if (owner_value != nullptr && (owner_value->shape == nullptr || !owner_value->shape->IsArray())) {
        // A tuple's index table: nothing here reads it; it only takes room in the block.
        impl.stats.temp_bytes += alloc.size;
        place.block_offset = offset;
        offset += AlignUp(alloc.size);
        continue;
      }
      if (owner_value != nullptr) place.index = owner_value->index;
      if (alloc.kind == AllocationKind::kConstant) {
        if (owner == nullptr) {
          return absl::FailedPreconditionError(StrCat("constant allocation ", a, " has no constant"));
        }
        place.kind = AllocationPlace::kConstant;
        place.constant = owner;
      } else {
        place.kind = AllocationPlace::kArgument;
        place.parameter_number = alloc.parameter_number;
        if (owner_value == nullptr) {
          return absl::FailedPreconditionError(
              StrCat("parameter allocation ", a, " has no parameter value"));
        }
        if (alloc.parameter_number < 0 ||
            alloc.parameter_number >= module.entry()->parameter_count()) {
          return absl::FailedPreconditionError(
              StrCat("parameter allocation ", a, " names no entry parameter"));
        }
      }
      place.private_copy = shared || options.inputs_in_block;
      if (!place.private_copy) continue;
      impl.stats.private_bytes += alloc.size;
    } else if (alloc.kind == AllocationKind::kOutput) {
      impl.stats.output_bytes += alloc.size;
      if (place.kind == AllocationPlace::kResult) {  // the result's own storage
        impl.result_bytes += alloc.size;
        continue;
      }
    } else {
      impl.stats.temp_bytes += alloc.size;
    }
    place.block_offset = offset;
    offset += AlignUp(alloc.size);
  }
  impl.block_bytes = offset;
  return program;
}

absl::StatusOr<Literal> ArenaProgram::Run(const std::vector<Literal>& arguments,
                                          const EvaluatorOptions& options,
                                          const ArenaCode& code) const {
  ArenaRun run(*impl_, options, code);
  absl::Status st = run.Prepare(arguments);
  if (st.ok()) st = run.RunComputation(0, /*top=*/true);
  if (!st.ok()) return st;
  return run.Result();
}

}  // namespace hlowb::cpu
