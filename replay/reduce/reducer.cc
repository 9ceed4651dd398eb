#include "replay/reduce/reducer.h"

#include <algorithm>
#include <chrono>
#include <deque>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "replay/compare/extract.h"
#include "replay/data/fake_data.h"
#include "replay/reduce/capture.h"
#include "replay/reduce/edits.h"

namespace hlowb {
namespace {

using Clock = std::chrono::steady_clock;
using reduce::Candidate;
using reduce::CountInstructions;
using reduce::CountOperations;

// Names in `text` that could be instruction names: runs of [A-Za-z0-9_.-], a leading '%'
// dropped, in order of appearance.
std::vector<std::string> NameLikeTokens(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  auto flush = [&] {
    while (!cur.empty() && (cur.back() == '.' || cur.back() == '-')) cur.pop_back();
    if (!cur.empty()) out.push_back(cur);
    cur.clear();
  };
  for (char ch : text) {
    const bool word = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_' || ch == '.' || ch == '-';
    if (word) {
      cur += ch;
    } else {
      flush();
    }
  }
  flush();
  return out;
}

class Reducer {
 public:
  Reducer(const ReduceOptions& options, const ReduceProgressFn& progress, const CancelToken* cancel)
      : options_(options), progress_(progress), cancel_(cancel), fake_(options.replay.seed + 1) {}

  absl::StatusOr<ReduceResult> Run(const Module& module);

 private:
  double Elapsed() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }
  double Remaining() const { return std::max(0.0, options_.time_limit_seconds - Elapsed()); }
  bool Stop() {
    if (!stopped_.empty()) return true;
    if (cancel_ != nullptr && cancel_->IsCancelled()) {
      stopped_ = "cancelled";
    } else if (Elapsed() >= options_.time_limit_seconds) {
      stopped_ = "time limit";
    }
    return !stopped_.empty();
  }
  double CandidateTimeout() const {
    double t = options_.candidate_timeout_seconds > 0 ? options_.candidate_timeout_seconds
                                                      : 4 * best_seconds_ + 0.5;
    return std::max(0.1, std::min(t, Remaining()));
  }
  void Report(const std::string& phase) {
    phase_ = phase;
    if (!progress_) return;
    ReduceProgress p;
    p.phase = phase;
    p.original_instructions = original_count_;
    p.instructions = best_count_;
    p.candidates = candidates_;
    p.accepted = accepted_;
    p.elapsed_seconds = Elapsed();
    progress_(p);
  }

  // Cleans `c` up, and makes it the best module when it is smaller (or, unless `must_shrink`,
  // no bigger) and fails the same way. `changes_values`: the step changes what the kept
  // instructions compute (captured values of the old best are stale afterwards).
  bool Try(Candidate c, const std::string& phase, bool changes_values, bool must_shrink = true);

  bool CanCapture() const {
    return options_.until != FailureKind::kCrash && !options_.run_in_child && !verifier_failure_ &&
           options_.reference_module == nullptr;
  }
  // Captured values of the best module's entry instructions (`wanted`, or all that fit).
  void EnsureCaptures(const std::unordered_set<std::string>* wanted);
  // The value a parameter standing for entry instruction `name` takes: the reference module's
  // (mismatch against it; nullopt when it has none), else the captured one, else fake data
  // (`*fake` is then set).
  std::optional<Literal> ValueFor(const std::string& name, const Shape& shape, bool* fake);
  // Seeded fake data of `shape`.
  std::optional<Literal> FakeValue(const Shape& shape);
  std::optional<Literal> ExpectedFor(const Module& module) const;
  // Whether rewrites that change what instructions compute keep the failure meaningful
  // (not when the failure is a difference from a reference module's values).
  bool MayChangeValues() const { return options_.reference_module == nullptr; }

  // Phases.
  void Localize(const reduce::Observation& first, const reduce::LiveValueHolder* held);
  bool CutAtNonfinite(const NonfiniteFinding& f, const reduce::LiveValueHolder* held);
  bool CutAtReferenceDifference();
  bool CutAtPlatformDifference();
  bool CutAtNamedInstruction(const std::string& text);
  bool PrefixSearch();
  // Whether `c` (cleaned up) fails the same way; for probes that are not kept.
  bool Fails(Candidate c);
  bool CutAt(const std::string& name, const std::string& phase);
  void ExtractByHeight();
  void Fixpoint();
  bool OutputsPhase();
  bool InlinePhase();
  bool BranchPhase();
  bool UnfusePhase();
  bool TripPhase();
  bool OutlinePhase();
  bool ParameterPhase();
  bool ZeroPhase();
  bool BypassPhase();
  bool ShapePhase();
  void FindLoopRoles();
  bool DrivesALoop(const Instruction& i) const;

  // Applies chunks of `atoms` (large first, halving) through `apply`; an applied chunk that
  // keeps the failure stays applied. `apply` returns false when it changed nothing.
  template <typename Atom>
  bool Ddmin(std::vector<Atom> atoms, const std::string& phase,
             const std::function<bool(Candidate*, const std::vector<Atom>&, bool*)>& apply);

  ReduceResult Finish();

  const ReduceOptions& options_;
  ReduceProgressFn progress_;
  const CancelToken* cancel_;
  Clock::time_point start_;
  std::unique_ptr<reduce::FailureOracle> oracle_;
  bool verifier_failure_ = false;

  Candidate best_;
  int64_t best_count_ = 0;
  int64_t best_ops_ = 0;
  double best_seconds_ = 0;
  reduce::FailureSignature signature_;
  std::string failure_;
  std::string phase_;
  int64_t original_count_ = 0;
  int64_t candidates_ = 0;
  int64_t accepted_ = 0;
  std::string stopped_;
  std::vector<ReduceStep> steps_;
  std::vector<std::string> notes_;

  // Values of the best module's entry instructions, valid while nothing has changed what they
  // compute since they were captured (capture_generation_ == generation_).
  std::unordered_map<std::string, Literal> captures_;
  bool captures_complete_ = false;
  int64_t generation_ = 0;
  int64_t capture_generation_ = -1;
  // mismatch against a reference module: its entry values, by name.
  std::unordered_map<std::string, Literal> reference_values_;
  FakeDataEngine fake_;
  // While conditions (0) and bodies (1) of the best module, for DrivesALoop.
  std::unordered_map<const Computation*, int> loop_roles_;
};

bool Reducer::Try(Candidate c, const std::string& phase, bool changes_values, bool must_shrink) {
  if (Stop()) return false;
  reduce::Cleanup(&c, /*keep_side_effects=*/false);
  const int64_t count = CountInstructions(*c.module);
  const int64_t ops = CountOperations(*c.module);
  if (count > best_count_) return false;
  if (must_shrink && count == best_count_ && ops >= best_ops_) return false;
  ++candidates_;
  reduce::Observation o = oracle_->Observe(*c.module, c.arguments, CandidateTimeout(), cancel_);
  if (!o.failed || !reduce::SameFailure(signature_, o.signature)) {
    if (candidates_ % 8 == 0) Report(phase);
    return false;
  }
  best_ = std::move(c);
  best_count_ = count;
  best_ops_ = ops;
  best_seconds_ = o.seconds;
  ++accepted_;
  if (changes_values) ++generation_;
  steps_.push_back({phase, count, Elapsed()});
  Report(phase);
  return true;
}

void Reducer::EnsureCaptures(const std::unordered_set<std::string>* wanted) {
  if (!CanCapture()) return;
  if (capture_generation_ == generation_) {
    if (captures_complete_) return;
    if (wanted != nullptr && std::all_of(wanted->begin(), wanted->end(), [&](const std::string& n) {
          return captures_.count(n) > 0;
        })) {
      return;
    }
  }
  if (Stop()) return;
  reduce::CapturedValues cv =
      reduce::CaptureEntryValues(*best_.module, best_.arguments, options_.replay, wanted,
                                 options_.capture_budget_bytes, cancel_);
  captures_ = std::move(cv.values);
  captures_complete_ = wanted == nullptr;
  capture_generation_ = generation_;
}

std::optional<Literal> Reducer::ValueFor(const std::string& name, const Shape& shape, bool* fake) {
  if (options_.reference_module != nullptr) {
    auto it = reference_values_.find(name);
    if (it == reference_values_.end() || !it->second.shape().Compatible(shape)) {
      return std::nullopt;
    }
    return it->second;
  }
  if (capture_generation_ == generation_) {
    auto it = captures_.find(name);
    if (it != captures_.end() && it->second.shape().Compatible(shape)) {
      return it->second;
    }
  }
  std::optional<Literal> l = FakeValue(shape);
  if (l) *fake = true;
  return l;
}

std::optional<Literal> Reducer::FakeValue(const Shape& shape) {
  absl::StatusOr<Literal> l =
      MakeFakeLiteral(shape, &fake_, FakeValueConstraint{}, options_.replay.use_large_float_range);
  if (!l.ok()) return std::nullopt;
  return std::move(*l);
}

std::optional<Literal> Reducer::ExpectedFor(const Module& module) const {
  const Instruction* root = module.entry() == nullptr ? nullptr : module.entry()->root();
  if (root == nullptr) return std::nullopt;
  auto lookup = [&](const Instruction* i) -> const Literal* {
    auto it = reference_values_.find(i->name());
    if (it == reference_values_.end() || !it->second.shape().Compatible(i->shape())) {
      return nullptr;
    }
    return &it->second;
  };
  if (const Literal* v = lookup(root)) return *v;
  if (root->opcode() != Opcode::kTuple) return std::nullopt;
  std::vector<Shape> shapes;
  std::vector<Literal> elements;
  for (const Instruction* op : root->operands()) {
    const Literal* v = lookup(op);
    if (v == nullptr) return std::nullopt;
    shapes.push_back(v->shape());
    elements.push_back(*v);
  }
  Literal tuple(Shape::Tuple(std::move(shapes)), false);
  *tuple.mutable_tuple_elements() = std::move(elements);
  return tuple;
}

bool Reducer::CutAt(const std::string& name, const std::string& phase) {
  Candidate c = reduce::CopyCandidate(best_);
  if (!reduce::CutAt(&c, name).ok()) return false;
  return Try(std::move(c), phase, false);
}

void Reducer::Localize(const reduce::Observation& first, const reduce::LiveValueHolder* held) {
  bool cut = false;
  Report("cut");
  switch (options_.until) {
    case FailureKind::kNonfinite: {
      std::optional<NonfiniteFinding> f = first.finding;
      // `held` watched the run that located the finding (on a compiled platform, the
      // interpreter's run that follows it).
      const reduce::LiveValueHolder* values = f ? held : nullptr;
      std::unique_ptr<reduce::LiveValueHolder> own;
      if (!f && CanCapture()) {
        // The first run brought no finding in the module's own instructions (it ran in a
        // child, or on a platform that reports none): locate it on the interpreter.
        own =
            std::make_unique<reduce::LiveValueHolder>(*best_.module, options_.capture_budget_bytes);
        values = own.get();
        ReplayOptions ro = options_.replay;
        ro.platform = "interpreter";
        ro.iterations = 1;
        ro.force_fake_data = false;
        ro.on_instruction = own->Hook();
        ReplayInputs in;
        in.literal_iterations.push_back(IterationLiterals{best_.arguments, {}, {}});
        absl::StatusOr<NonfiniteReport> r = FindNonfinite(*best_.module, ro, in, cancel_);
        if (r.ok() && r->found) {
          f = r->finding;
        } else {
          notes_.push_back(
              "the interpreter computes no NaN or Inf on these arguments; the "
              "reduction could not start at the finding");
        }
      }
      if (f && !f->entry_parameter) cut = CutAtNonfinite(*f, values);
      break;
    }
    case FailureKind::kMismatch:
      cut = options_.reference_module != nullptr ? CutAtReferenceDifference()
                                                 : CutAtPlatformDifference();
      break;
    case FailureKind::kError: cut = CutAtNamedInstruction(first.description); break;
    case FailureKind::kCrash: break;
  }
  if (!cut && !Stop()) PrefixSearch();
}

bool Reducer::CutAtNonfinite(const NonfiniteFinding& f, const reduce::LiveValueHolder* held) {
  const Computation* entry = best_.module->entry();
  const bool in_entry = f.computation == entry->name();
  std::optional<std::vector<Literal>> params;
  if (held != nullptr && !in_entry) params = held->Arguments(f.computation);
  if (held != nullptr && (in_entry || params)) {
    // The instruction alone (in its computation, made the entry when it is not), on the values
    // its operands had when it produced the NaN/Inf.
    Candidate c = reduce::CopyCandidate(best_);
    if (in_entry || reduce::Outline(&c, f.computation, *params).ok()) {
      const Instruction* at = c.module->entry()->FindInstruction(f.instruction);
      absl::StatusOr<ExtractedModule> e =
          at == nullptr ? absl::StatusOr<ExtractedModule>(absl::NotFoundError(""))
                        : ExtractModule(*c.module, *at, 0);
      if (e.ok()) {
        Candidate piece;
        bool ok = true;
        for (const Instruction* src : e->parameter_sources) {
          if (src->opcode() == Opcode::kParameter && src->parent() == c.module->entry()) {
            piece.arguments.push_back(c.arguments[src->parameter_number()]);
            continue;
          }
          const Literal* v = held->Value(f.computation, src->name());
          if (v == nullptr) {
            ok = false;
            break;
          }
          piece.arguments.push_back(*v);
        }
        piece.module = std::move(e->module);
        piece.module->set_name(best_.module->name());
        if (ok && Try(std::move(piece), "cut at the NaN/Inf", true)) return true;
      }
    }
  }
  if (!in_entry) {
    if (!params) {
      absl::StatusOr<std::vector<Literal>> captured = reduce::CaptureAtFirstNonfinite(
          *best_.module, best_.arguments, options_.replay, f.computation, f.instruction, cancel_);
      if (captured.ok()) {
        params = std::move(*captured);
      } else {
        notes_.push_back(StrCat("could not capture the arguments of %", f.computation,
                                " at the NaN/Inf: ", captured.status().message()));
      }
    }
    if (params) {
      Candidate c = reduce::CopyCandidate(best_);
      if (reduce::Outline(&c, f.computation, *params).ok()) {
        Candidate whole = reduce::CopyCandidate(c);
        if (reduce::CutAt(&c, f.instruction).ok() && Try(std::move(c), "outline", true)) {
          return true;
        }
        if (Try(std::move(whole), "outline", true)) {
          CutAt(f.instruction, "cut");
          return true;
        }
      }
    }
    // Cut at the entry instruction the call path starts from.
    if (!f.context.empty()) return CutAt(f.context.front().caller, "cut");
    return false;
  }
  return CutAt(f.instruction, "cut");
}

bool Reducer::CutAtReferenceDifference() {
  reduce::CapturedValues mine =
      reduce::CaptureEntryValues(*best_.module, best_.arguments, options_.replay, nullptr,
                                 options_.capture_budget_bytes, cancel_);
  for (const Instruction* i : best_.module->entry()->instructions()) {
    if (i->opcode() == Opcode::kParameter || i->opcode() == Opcode::kConstant) continue;
    auto a = reference_values_.find(i->name());
    auto b = mine.values.find(i->name());
    if (a == reference_values_.end() || b == mine.values.end() ||
        !a->second.shape().Compatible(b->second.shape())) {
      continue;
    }
    if (CompareLiterals(a->second, b->second, options_.replay.bounds, 1).ok()) continue;
    return CutAt(i->name(), "cut");
  }
  return false;
}

bool Reducer::CutAtPlatformDifference() {
  // Every entry value as an output, once on both platforms: the first that differs.
  uint64_t bytes = 0;
  for (const Instruction* i : best_.module->entry()->instructions()) {
    if (i->shape().IsArray()) {
      bytes += static_cast<uint64_t>(std::max<int64_t>(i->shape().ElementCount(), 0)) *
               ByteWidth(i->shape().element_type());
    }
  }
  if (bytes > options_.capture_budget_bytes) return false;
  Candidate probe = reduce::CopyCandidate(best_);
  std::vector<std::string> names;
  if (!reduce::OutputAll(&probe, nullptr, &names).ok()) return false;
  ReplayOptions ro = options_.replay;
  ro.iterations = 1;
  ro.force_fake_data = false;
  ro.hlo_argument_mode.clear();
  ReplayInputs in;
  in.literal_iterations.push_back(IterationLiterals{probe.arguments, {}, {}});
  absl::StatusOr<ReplayReport> r = ReplaySession(*probe.module, ro, std::move(in)).Run(cancel_);
  if (!r.ok() || r->iterations.empty() || !r->iterations[0].comparison) return false;
  size_t first = names.size();
  for (const OutputComparison& o : r->iterations[0].comparison->outputs) {
    if (o.ok() || o.output.empty()) continue;
    first = std::min(first, static_cast<size_t>(o.output[0]));
  }
  if (first >= names.size()) return false;
  return CutAt(names[first], "cut");
}

bool Reducer::CutAtNamedInstruction(const std::string& text) {
  int tried = 0;
  std::unordered_set<std::string> seen;
  for (const std::string& name : NameLikeTokens(text)) {
    if (tried >= 4 || Stop()) break;
    if (!seen.insert(name).second) continue;
    const Computation* entry = best_.module->entry();
    if (entry->FindInstruction(name) != nullptr) {
      ++tried;
      if (CutAt(name, "cut")) return true;
      continue;
    }
    for (const auto& comp : best_.module->computations()) {
      if (comp.get() == entry || comp->FindInstruction(name) == nullptr) continue;
      ++tried;
      // The computation holding it becomes the entry, on fake data.
      std::vector<Literal> args;
      bool ok = true;
      for (const Instruction* p : comp->parameters()) {
        std::optional<Literal> v = p == nullptr ? std::nullopt : FakeValue(p->shape());
        if (!v) {
          ok = false;
          break;
        }
        args.push_back(std::move(*v));
      }
      if (!ok) break;
      Candidate c = reduce::CopyCandidate(best_);
      if (!reduce::Outline(&c, comp->name(), std::move(args)).ok()) break;
      Candidate whole = reduce::CopyCandidate(c);
      if (reduce::CutAt(&c, name).ok() && Try(std::move(c), "outline", true)) return true;
      if (Try(std::move(whole), "outline", true)) return true;
      break;
    }
  }
  return false;
}

bool Reducer::Fails(Candidate c) {
  if (Stop()) return false;
  reduce::Cleanup(&c, /*keep_side_effects=*/false);
  ++candidates_;
  reduce::Observation o = oracle_->Observe(*c.module, c.arguments, CandidateTimeout(), cancel_);
  if (candidates_ % 8 == 0) Report(phase_);
  return o.failed && reduce::SameFailure(signature_, o.signature);
}

bool Reducer::PrefixSearch() {
  Report("prefix search");
  std::function<bool(const Instruction&)> include;
  if (options_.reference_module != nullptr) {
    include = [this](const Instruction& i) { return reference_values_.count(i.name()) > 0; };
  }
  // Positions refer to the module as it is now; probes are not kept, only the verdicts.
  const Candidate base = reduce::CopyCandidate(best_);
  int lo = 0;  // the first `lo` instructions are known not to fail (none: trivially)
  int hi = base.module->entry()->instruction_count();  // the first `hi` do
  if (hi < 3) return false;
  while (hi - lo > 1 && !Stop()) {
    const int mid = lo + (hi - lo) / 2;
    Candidate probe = reduce::CopyCandidate(base);
    if (reduce::CutAtPrefix(&probe, mid, include).ok() && Fails(std::move(probe))) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  if (Stop()) return false;
  // The instruction that made the difference, else the shortest failing prefix.
  const Instruction* culprit = base.module->entry()->instructions()[hi - 1];
  if (culprit->opcode() != Opcode::kParameter && culprit->opcode() != Opcode::kTuple &&
      CutAt(culprit->name(), "cut")) {
    return true;
  }
  Candidate prefix = reduce::CopyCandidate(base);
  return reduce::CutAtPrefix(&prefix, hi, include).ok() &&
         Try(std::move(prefix), "prefix search", false);
}

void Reducer::ExtractByHeight() {
  const Computation* entry = best_.module->entry();
  const Instruction* root = entry->root();
  if (root == nullptr || root->opcode() == Opcode::kParameter) return;
  Report("extract");
  // Operand distance from the root.
  std::unordered_map<const Instruction*, int> depth{{root, 0}};
  std::deque<const Instruction*> queue{root};
  int max_depth = 0;
  while (!queue.empty()) {
    const Instruction* i = queue.front();
    queue.pop_front();
    for (const Instruction* op : i->operands()) {
      if (depth.emplace(op, depth[i] + 1).second) {
        max_depth = std::max(max_depth, depth[i] + 1);
        queue.push_back(op);
      }
    }
  }
  std::vector<int> heights;
  for (int h : {0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32}) {
    if (h < max_depth - 1) heights.push_back(h);
  }
  if (heights.empty()) return;
  std::unordered_set<std::string> wanted;
  for (const auto& [i, d] : depth) {
    if (d <= heights.back() + 1 && i->opcode() != Opcode::kParameter &&
        i->opcode() != Opcode::kConstant) {
      wanted.insert(i->name());
    }
  }
  EnsureCaptures(&wanted);
  for (int h : heights) {
    if (Stop()) return;
    const Instruction* r = best_.module->entry()->root();
    absl::StatusOr<ExtractedModule> e = ExtractModule(*best_.module, *r, h);
    if (!e.ok()) continue;
    Candidate c;
    bool fake = false;
    bool ok = true;
    for (const Instruction* src : e->parameter_sources) {
      if (src->opcode() == Opcode::kParameter && src->parent() == best_.module->entry()) {
        c.arguments.push_back(best_.arguments[src->parameter_number()]);
        continue;
      }
      std::optional<Literal> v = ValueFor(src->name(), src->shape(), &fake);
      if (!v) {
        ok = false;
        break;
      }
      c.arguments.push_back(std::move(*v));
    }
    if (!ok) continue;
    c.module = std::move(e->module);
    // The piece keeps the module's name.
    c.module->set_name(best_.module->name());
    if (Try(std::move(c), "extract", fake)) return;
  }
}

template <typename Atom>
bool Reducer::Ddmin(std::vector<Atom> atoms, const std::string& phase,
                    const std::function<bool(Candidate*, const std::vector<Atom>&, bool*)>& apply) {
  if (atoms.empty()) return false;
  Report(phase);
  bool any = false;
  size_t chunk = atoms.size();
  while (!atoms.empty()) {
    for (size_t start = 0; start < atoms.size();) {
      if (Stop()) return any;
      const size_t end = std::min(atoms.size(), start + chunk);
      std::vector<Atom> part(atoms.begin() + start, atoms.begin() + end);
      Candidate c = reduce::CopyCandidate(best_);
      bool changes_values = false;
      if (apply(&c, part, &changes_values) && Try(std::move(c), phase, changes_values)) {
        atoms.erase(atoms.begin() + start, atoms.begin() + end);
        any = true;
      } else {
        start = end;
      }
    }
    if (chunk <= 1) break;
    chunk = (chunk + 1) / 2;
  }
  return any;
}

bool Reducer::OutputsPhase() {
  const Instruction* root = best_.module->entry()->root();
  if (root == nullptr || root->opcode() != Opcode::kTuple) return false;
  std::vector<std::string> atoms;
  std::unordered_set<std::string> seen;
  for (const Instruction* op : root->operands()) {
    if (seen.insert(op->name()).second) atoms.push_back(op->name());
  }
  return Ddmin<std::string>(atoms, "outputs",
                            [](Candidate* c, const std::vector<std::string>& part, bool*) {
                              return reduce::DropOutputs(c, part);
                            });
}

bool Reducer::InlinePhase() {
  Candidate c = reduce::CopyCandidate(best_);
  if (!reduce::InlineCalls(&c)) return false;
  Report("inline");
  return Try(std::move(c), "inline", false);
}

bool Reducer::BranchPhase() {
  if (!MayChangeValues()) return false;
  std::vector<std::pair<std::string, int>> conditionals;
  for (const auto& comp : best_.module->computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (i->opcode() == Opcode::kConditional) {
        conditionals.emplace_back(i->name(), static_cast<int>(i->called_computations().size()));
      }
    }
  }
  if (conditionals.empty()) return false;
  Report("branch");
  bool any = false;
  for (const auto& [name, branches] : conditionals) {
    for (int k = 0; k < branches; ++k) {
      Candidate c = reduce::CopyCandidate(best_);
      if (reduce::PickBranch(&c, name, k) && Try(std::move(c), "branch", true)) {
        any = true;
        break;
      }
    }
  }
  return any;
}

bool Reducer::UnfusePhase() {
  std::vector<std::string> fusions;
  for (const auto& comp : best_.module->computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (i->opcode() == Opcode::kFusion) fusions.push_back(i->name());
    }
  }
  return Ddmin<std::string>(fusions, "unfuse",
                            [](Candidate* c, const std::vector<std::string>& part, bool*) {
                              bool changed = false;
                              for (const std::string& name : part)
                                changed = reduce::Unfuse(c, name) || changed;
                              return changed;
                            });
}

bool Reducer::ShapePhase() {
  // Smaller arrays: halve one dimension of the entry parameters at a time (all parameters of
  // that extent along it together, which keeps elementwise operands in step; then each alone),
  // keeping the half whose values still fail, until the failure needs the whole extent.
  // Only once the module is small: every try is a run, a few per dimension.
  constexpr int64_t kMostInstructions = 64;
  if (!MayChangeValues() || best_count_ > kMostInstructions) return false;
  bool any = false;
  bool reported = false;
  for (bool progress = true; progress && !Stop();) {
    progress = false;
    const Computation* entry = best_.module->entry();
    if (entry == nullptr) break;
    // (dimension, extent) -> the array parameters that have it.
    std::map<std::pair<int, int64_t>, std::vector<std::string>> groups;
    for (const Instruction* p : entry->parameters()) {
      if (p == nullptr || !p->shape().IsArray() || p->shape().IsDynamic()) continue;
      for (int d = 0; d < p->shape().rank(); ++d) {
        if (p->shape().dimensions()[d] > 1) {
          groups[{d, p->shape().dimensions()[d]}].push_back(p->name());
        }
      }
    }
    for (const auto& [key, names] : groups) {
      const auto [dim, extent] = key;
      const int64_t half = (extent + 1) / 2;
      std::vector<std::vector<std::string>> sets = {names};
      if (names.size() > 1) {
        for (const std::string& n : names) sets.push_back({n});
      }
      for (const std::vector<std::string>& set : sets) {
        for (const int64_t start : {int64_t{0}, extent - half}) {
          if (Stop()) return any;
          Candidate c = reduce::CopyCandidate(best_);
          if (!reduce::ShrinkParameters(&c, set, dim, start, half)) continue;
          if (!reported) {
            Report("shapes");
            reported = true;
          }
          if (Try(std::move(c), "shapes", true, false)) {
            any = progress = true;
            break;
          }
        }
        if (progress) break;
      }
      // The parameters changed: collect them again.
      if (progress) break;
    }
  }
  return any;
}

bool Reducer::TripPhase() {
  if (!MayChangeValues()) return false;
  bool any = false;
  std::vector<reduce::TripBound> bounds = reduce::FindTripBounds(*best_.module);
  if (bounds.empty()) return false;
  Report("trip count");
  for (const reduce::TripBound& b : bounds) {
    // A single iteration first; else a binary search between what did not keep the failure
    // (lo) and what did (hi).
    int64_t lo = 1;
    int64_t hi = b.value;
    Candidate once = reduce::CopyCandidate(best_);
    if (reduce::SetTripBound(&once, b, 1) && Try(std::move(once), "trip count", true, false)) {
      any = true;
      continue;
    }
    while (hi - lo > 1 && !Stop()) {
      const int64_t mid = lo + (hi - lo) / 2;
      Candidate c = reduce::CopyCandidate(best_);
      if (reduce::SetTripBound(&c, b, mid) && Try(std::move(c), "trip count", true, false)) {
        hi = mid;
        any = true;
      } else {
        lo = mid;
      }
    }
  }
  return any;
}

bool Reducer::OutlinePhase() {
  // An entry instruction that calls a computation: the callee alone, on the values the call
  // passes it (for a loop, the body on the initial state).
  struct Site {
    std::string computation;
    std::vector<std::string> operands;
  };
  if (!MayChangeValues()) return false;
  std::vector<Site> sites;
  const Computation* entry = best_.module->entry();
  const auto& instrs = entry->instructions();
  for (auto it = instrs.rbegin(); it != instrs.rend(); ++it) {
    const Instruction* i = *it;
    const auto& called = i->called_computations();
    std::vector<std::pair<const Computation*, std::vector<const Instruction*>>> callees;
    if ((i->opcode() == Opcode::kCall || i->opcode() == Opcode::kFusion) && called.size() == 1) {
      callees.push_back({called[0], {i->operands().begin(), i->operands().end()}});
    } else if (i->opcode() == Opcode::kWhile && called.size() == 2) {
      callees.push_back({called[1], {i->operand(0)}});
    } else if (i->opcode() == Opcode::kConditional) {
      for (size_t k = 0; k < called.size() && k + 1 < i->operands().size(); ++k) {
        callees.push_back({called[k], {i->operand(static_cast<int>(k) + 1)}});
      }
    }
    for (const auto& [callee, ops] : callees) {
      if (callee == nullptr) continue;
      Site s;
      s.computation = callee->name();
      for (const Instruction* op : ops) s.operands.push_back(op->name());
      sites.push_back(std::move(s));
    }
  }
  if (sites.empty()) return false;
  Report("outline");
  EnsureCaptures(nullptr);
  for (const Site& s : sites) {
    if (Stop()) return false;
    const Computation* e = best_.module->entry();
    std::vector<Literal> args;
    bool fake = false;
    bool ok = true;
    for (const std::string& name : s.operands) {
      const Instruction* op = e->FindInstruction(name);
      if (op == nullptr) {
        ok = false;
        break;
      }
      if (op->opcode() == Opcode::kParameter) {
        args.push_back(best_.arguments[op->parameter_number()]);
        continue;
      }
      std::optional<Literal> v = ValueFor(name, op->shape(), &fake);
      if (!v) {
        ok = false;
        break;
      }
      args.push_back(std::move(*v));
    }
    if (!ok) continue;
    Candidate c = reduce::CopyCandidate(best_);
    if (reduce::Outline(&c, s.computation, std::move(args)).ok() &&
        Try(std::move(c), "outline", true)) {
      return true;
    }
  }
  return false;
}

bool Reducer::ParameterPhase() {
  const Computation* entry = best_.module->entry();
  std::vector<std::string> atoms;
  const auto& instrs = entry->instructions();
  for (auto it = instrs.rbegin(); it != instrs.rend(); ++it) {
    const Instruction* i = *it;
    if (i == entry->root() || i->opcode() == Opcode::kParameter ||
        i->opcode() == Opcode::kConstant || i->shape().IsToken()) {
      continue;
    }
    atoms.push_back(i->name());
  }
  if (atoms.empty()) return false;
  EnsureCaptures(nullptr);
  return Ddmin<std::string>(
      atoms, "parameters",
      [this](Candidate* c, const std::vector<std::string>& part, bool* changes_values) {
        std::vector<std::pair<std::string, Literal>> values;
        const Computation* e = c->module->entry();
        for (const std::string& name : part) {
          const Instruction* i = e->FindInstruction(name);
          if (i == nullptr || i->opcode() == Opcode::kParameter) continue;
          std::optional<Literal> v = ValueFor(name, i->shape(), changes_values);
          if (v) values.emplace_back(name, std::move(*v));
        }
        return !values.empty() && reduce::ReplaceWithParameters(c, std::move(values)) > 0;
      });
}

// Whether rewriting `i` by value (zeros, an operand) risks a loop that never ends: anything in
// a while condition, and integer scalars (counters) in a while body. Trip counts are lowered
// through their bounds instead (TripPhase).
bool Reducer::DrivesALoop(const Instruction& i) const {
  auto it = loop_roles_.find(i.parent());
  if (it == loop_roles_.end()) return false;
  if (it->second == 0) return true;
  return i.shape().IsScalar() && IsIntegral(i.shape().element_type());
}

void Reducer::FindLoopRoles() {
  loop_roles_.clear();
  for (const auto& comp : best_.module->computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (i->opcode() != Opcode::kWhile || i->called_computations().size() != 2) continue;
      loop_roles_[i->called_computations()[0]] = 0;
      loop_roles_.emplace(i->called_computations()[1], 1);
    }
  }
}

bool Reducer::ZeroPhase() {
  if (!MayChangeValues()) return false;
  FindLoopRoles();
  std::vector<std::pair<std::string, std::string>> atoms;
  for (const auto& comp : best_.module->computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (i == comp->root() || i->opcode() == Opcode::kParameter || DrivesALoop(*i) ||
          i->opcode() == Opcode::kConstant || i->shape().IsTuple() ||
          (i->opcode() == Opcode::kBroadcast && IsUniformConstant(*i, 0))) {
        continue;
      }
      atoms.emplace_back(comp->name(), i->name());
    }
  }
  return Ddmin<std::pair<std::string, std::string>>(
      atoms, "zeros",
      [](Candidate* c, const std::vector<std::pair<std::string, std::string>>& part,
         bool* changes_values) {
        *changes_values = true;
        return reduce::ReplaceWithZeros(c, part) > 0;
      });
}

bool Reducer::BypassPhase() {
  if (!MayChangeValues()) return false;
  struct Atom {
    std::string computation;
    std::string name;
    int operand;
  };
  std::vector<Atom> atoms;
  FindLoopRoles();
  for (const auto& comp : best_.module->computations()) {
    for (const Instruction* i : comp->instructions()) {
      if (reduce::IsValueOnly(*i) || DrivesALoop(*i)) continue;
      for (int k = 0; k < i->operand_count(); ++k) {
        if (i->operand(k)->shape().Compatible(i->shape())) {
          atoms.push_back({comp->name(), i->name(), k});
          break;
        }
      }
    }
  }
  return Ddmin<Atom>(atoms, "bypass",
                     [](Candidate* c, const std::vector<Atom>& part, bool* changes_values) {
                       *changes_values = true;
                       bool changed = false;
                       for (const Atom& a : part) {
                         changed = reduce::Bypass(c, a.computation, a.name, a.operand) || changed;
                       }
                       return changed;
                     });
}

void Reducer::Fixpoint() {
  while (!Stop()) {
    const int64_t before = accepted_;
    OutputsPhase();
    InlinePhase();
    BranchPhase();
    UnfusePhase();
    TripPhase();
    if (OutlinePhase() && !Stop()) {
      // A new entry: find the failure in it again.
      if (options_.until != FailureKind::kError || !CutAtNamedInstruction(failure_)) {
        PrefixSearch();
      }
      ExtractByHeight();
    }
    ParameterPhase();
    ZeroPhase();
    BypassPhase();
    ShapePhase();
    if (accepted_ == before) break;
  }
}

ReduceResult Reducer::Finish() {
  ReduceResult r;
  r.signature = signature_;
  r.failure = failure_;
  r.original_instructions = original_count_;
  r.reduced_instructions = best_count_;
  r.candidates = candidates_;
  r.accepted = accepted_;
  r.stopped = stopped_.empty() ? "fixpoint" : stopped_;
  r.steps = steps_;
  r.notes = notes_;
  r.expected_result =
      options_.reference_module != nullptr ? ExpectedFor(*best_.module) : std::nullopt;
  // What `hlowb replay` reads back: the printed module, parsed. (Nothing kept: the original,
  // whose failure was just seen.)
  if (accepted_ == 0) {
    r.verified = true;
    r.reduced_failure = failure_;
  } else {
    absl::StatusOr<std::unique_ptr<Module>> parsed = ParseModule(PrintModule(*best_.module));
    if (!parsed.ok()) {
      r.reduced_failure = StrCat("the printed module does not parse: ", parsed.status().message());
    } else {
      reduce::Observation o = oracle_->Observe(**parsed, best_.arguments,
                                               std::max(10.0, 5 * best_seconds_ + 5), nullptr);
      r.verified = o.failed && reduce::SameFailure(signature_, o.signature);
      r.reduced_failure = o.description;
    }
  }
  if (options_.reference_module == nullptr) {
    absl::StatusOr<std::vector<Literal>> fake = MakeFakeArguments(
        *best_.module,
        FakeDataOptions{options_.replay.seed, options_.replay.use_large_float_range});
    r.arguments_are_fake_data = fake.ok() && *fake == best_.arguments;
  }
  r.module = std::move(best_.module);
  r.arguments = std::move(best_.arguments);
  r.seconds = Elapsed();
  return r;
}

absl::StatusOr<ReduceResult> Reducer::Run(const Module& module) {
  start_ = Clock::now();
  const FailureKind kind = options_.until;
  if (module.entry() == nullptr) {
    return absl::InvalidArgumentError("the module has no entry computation");
  }
  if (kind == FailureKind::kMismatch) {
    const bool platform = !options_.replay.reference_platform.empty();
    const bool reference = options_.reference_module != nullptr;
    if (platform && reference) {
      return absl::InvalidArgumentError(
          "--until=mismatch compares with a reference platform or a reference module, not both");
    }
    if (!platform && !reference) {
      return absl::InvalidArgumentError(
          "--until=mismatch needs something to compare with: --reference_platform=P or "
          "--reference_module=FILE");
    }
  } else if (options_.reference_module != nullptr) {
    return absl::InvalidArgumentError("a reference module is only used with --until=mismatch");
  }
  if (!options_.replay.hlo_argument_mode.empty()) {
    return absl::InvalidArgumentError(
        "reduce takes its arguments from a literals file, a snapshot or fake data, not "
        "--hlo_argument_mode");
  }
  for (const std::string* p : {&options_.replay.platform, &options_.replay.reference_platform}) {
    if (p->empty()) continue;
    if (absl::Status st = CheckPlatform(*p); !st.ok()) return st;
  }

  // The original's arguments, as a replay would pick them.
  std::vector<Literal> arguments;
  std::string source;
  const ReplayInputs& in = options_.inputs;
  if (!options_.replay.force_fake_data && !in.literal_iterations.empty()) {
    arguments = in.literal_iterations[0].arguments;
    source = "the literals file";
  } else if (!options_.replay.force_fake_data && in.snapshot_arguments) {
    arguments = *in.snapshot_arguments;
    source = "the snapshot";
  } else {
    absl::StatusOr<std::vector<Literal>> fake = MakeFakeArguments(
        module, FakeDataOptions{options_.replay.seed, options_.replay.use_large_float_range});
    if (!fake.ok()) return fake.status();
    arguments = std::move(*fake);
    source = "fake data";
  }
  if (absl::Status st = CheckArguments(module, arguments, source); !st.ok()) return st;

  const int verifier_errors = CountErrors(VerifyModule(module));
  if (verifier_errors > 0) {
    if (kind != FailureKind::kError) {
      return absl::FailedPreconditionError(
          StrCat("the module does not verify (", verifier_errors,
                 " error(s); see hlowb verify); reduce that failure with --until=error"));
    }
    verifier_failure_ = true;
  }

  if (options_.reference_module != nullptr) {
    const Module& ref = *options_.reference_module;
    if (ref.entry() == nullptr) {
      return absl::InvalidArgumentError("the reference module has no entry computation");
    }
    if (absl::Status st = CheckArguments(ref, arguments, "the module's arguments"); !st.ok()) {
      return absl::InvalidArgumentError(
          StrCat("the reference module does not take the module's arguments: ", st.message()));
    }
    if (CountErrors(VerifyModule(ref)) > 0) {
      return absl::InvalidArgumentError("the reference module does not verify");
    }
    reduce::CapturedValues cv = reduce::CaptureEntryValues(ref, arguments, options_.replay, nullptr,
                                                           options_.capture_budget_bytes, cancel_);
    if (!cv.run_status.ok()) {
      if (cancel_ != nullptr && cancel_->IsCancelled()) {
        return absl::CancelledError("reduction cancelled");
      }
      return absl::FailedPreconditionError(
          StrCat("the reference module does not run: ", cv.run_status.message()));
    }
    reference_values_ = std::move(cv.values);
  }

  best_.module = CloneModule(module);
  best_.arguments = std::move(arguments);
  // Aliasing and donation say nothing about what the module computes, and stop being true as
  // soon as the entry changes.
  ModuleConfig& config = best_.module->config();
  config.input_output_alias.clear();
  config.has_input_output_alias = false;
  config.buffer_donors.clear();
  config.has_buffer_donor = false;
  original_count_ = best_count_ = CountInstructions(*best_.module);
  best_ops_ = CountOperations(*best_.module);

  reduce::OracleOptions oo;
  oo.kind = kind;
  oo.replay = options_.replay;
  oo.run_in_child = options_.run_in_child;
  oo.verifier_failure = verifier_failure_;
  if (options_.reference_module != nullptr) {
    oo.expected = [this](const Module& m) { return ExpectedFor(m); };
  }
  oracle_ = std::make_unique<reduce::FailureOracle>(std::move(oo));

  Report("original");
  // The NaN/Inf search holds the values around the finding as it goes (those of the
  // interpreter's run: on a compiled platform, the run that locates the finding in the
  // module's own instructions).
  std::unique_ptr<reduce::LiveValueHolder> held;
  std::function<void(const InstructionProfile&)> watch;
  if (kind == FailureKind::kNonfinite && CanCapture()) {
    held = std::make_unique<reduce::LiveValueHolder>(*best_.module, options_.capture_budget_bytes);
    watch = held->Hook();
  }
  // The original runs as long as it takes (only `cancel` stops it): without its failure there
  // is nothing to keep.
  reduce::Observation first = oracle_->Observe(*best_.module, best_.arguments, 0, cancel_, watch);
  if (cancel_ != nullptr && cancel_->IsCancelled()) {
    return absl::CancelledError("reduction cancelled");
  }
  if (!first.failed) {
    return absl::FailedPreconditionError(StrCat(
        "the failure does not reproduce on the original module (--until=", FailureKindName(kind),
        "): ", first.description));
  }
  signature_ = first.signature;
  failure_ = first.description;
  best_seconds_ = first.seconds;

  Localize(first, held.get());
  held.reset();
  if (!Stop()) ExtractByHeight();
  if (!Stop()) Fixpoint();
  return Finish();
}

}  // namespace

absl::StatusOr<ReduceResult> ReduceModule(const Module& module, const ReduceOptions& options,
                                          const ReduceProgressFn& progress,
                                          const CancelToken* cancel) {
  Reducer reducer(options, progress, cancel);
  return reducer.Run(module);
}

}  // namespace hlowb
