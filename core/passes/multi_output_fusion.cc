#include "core/passes/multi_output_fusion.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/instruction_fusion.h"

namespace hlowb {
namespace {

using fusion::Piece;

// Fused computations larger than this are left alone.
constexpr int64_t kMaxFusedInstructions = 200;

int64_t FusedSize(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFusion || instr.called_computations().empty()) return 1;
  return instr.called_computations()[0]->instruction_count();
}

bool IsReduceHero(const Instruction& instr) {
  const Instruction* h = fusion::Hero(instr);
  return h->opcode() == Opcode::kReduce && h->operand_count() == 2 && h->shape().IsArray();
}

// Loop fusions, reduction input fusions and plain single-output reductions.
bool IsMultiOutputCandidate(const Instruction& instr) {
  if (instr.opcode() == Opcode::kFusion) {
    FusionKind k = instr.attrs_or_default().fusion_kind;
    if (k != FusionKind::kLoop && k != FusionKind::kInput) return false;
    const Instruction* h = fusion::Hero(instr);
    return h->shape().IsArray() && (k == FusionKind::kLoop || IsReduceHero(instr));
  }
  return instr.opcode() == Opcode::kReduce && IsReduceHero(instr);
}

// Same iteration space: equal reduction inputs and dimensions, or equal result dimensions.
bool SameIterationSpace(const Instruction& a, const Instruction& b) {
  const Instruction* ha = fusion::Hero(a);
  const Instruction* hb = fusion::Hero(b);
  bool ra = IsReduceHero(a);
  bool rb = IsReduceHero(b);
  if (ra != rb) return false;
  if (ra) {
    return ha->operand(0)->shape().dimensions() == hb->operand(0)->shape().dimensions() &&
           ha->dimensions() == hb->dimensions();
  }
  return ha->shape().dimensions() == hb->shape().dimensions();
}

class Run1 {
 public:
  Run1(PassContext& context, std::string_view name) : context_(context), name_(name) {}

  bool Usable(const ComputationEditor& editor, const Instruction* instr) const {
    return !gone_.contains(instr) && !fusion::IsDead(editor, instr) &&
           instr->control_predecessors().empty() && !control_preds_.contains(instr);
  }

  absl::StatusOr<bool> Siblings(Computation* comp, NameUniquer* names) {
    ComputationEditor editor(comp, names);
    control_preds_ = fusion::ControlPredecessorSet(*comp);
    bool changed = false;
    std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* shared : instrs) {
      if (out_of_fuel_) break;
      if (!shared->shape().IsArray() || shared->shape().ElementCount() <= 1) continue;
      while (!out_of_fuel_) {
        std::vector<Instruction*> cands;
        for (Instruction* u : fusion::LiveUsers(editor, shared, gone_)) {
          if (Usable(editor, u) && IsMultiOutputCandidate(*u)) cands.push_back(u);
        }
        Instruction* a = nullptr;
        Instruction* b = nullptr;
        for (size_t i = 0; i < cands.size() && !a; ++i) {
          for (size_t j = i + 1; j < cands.size() && !a; ++j) {
            if (!SameIterationSpace(*cands[i], *cands[j])) continue;
            if (FusedSize(*cands[i]) + FusedSize(*cands[j]) > kMaxFusedInstructions) continue;
            if (fusion::Reaches(cands[i], cands[j]) || fusion::Reaches(cands[j], cands[i])) {
              continue;
            }
            a = cands[i];
            b = cands[j];
          }
        }
        if (!a) break;
        if (!context_.ConsumeFuel(name_)) {
          out_of_fuel_ = true;
          break;
        }
        FusionKind kind = IsReduceHero(*a) ? FusionKind::kInput : FusionKind::kLoop;
        absl::StatusOr<Instruction*> f =
            fusion::CombineIntoFusion(editor, {Piece{a, true, false}, Piece{b, true, false}}, kind,
                                      &gone_);
        if (!f.ok()) return f.status();
        fusion::NoteRewrite(editor, &rewrites_);
        changed = true;
      }
    }
    editor.Finish();
    return changed;
  }

  absl::StatusOr<bool> ProducerConsumer(Computation* comp, NameUniquer* names) {
    ComputationEditor editor(comp, names);
    control_preds_ = fusion::ControlPredecessorSet(*comp);
    bool changed = false;
    std::vector<Instruction*> instrs = comp->instructions();
    for (Instruction* producer : instrs) {
      if (out_of_fuel_) break;
      if (!Usable(editor, producer) || !producer->shape().IsArray()) continue;
      bool loop_fusion = producer->opcode() == Opcode::kFusion &&
                         producer->attrs_or_default().fusion_kind == FusionKind::kLoop;
      bool elementwise = IsElementwise(producer->opcode()) && !HasSideEffect(*producer) &&
                         producer->opcode() != Opcode::kStochasticConvert;
      if (!loop_fusion && !elementwise) continue;
      const std::vector<Instruction*> users = fusion::LiveUsers(editor, producer, gone_);
      if (users.size() < 2) continue;
      Instruction* consumer = nullptr;
      for (Instruction* c : users) {
        if (!Usable(editor, c) || c->opcode() != Opcode::kFusion ||
            !IsMultiOutputCandidate(*c)) {
          continue;
        }
        if (FusedSize(*c) + FusedSize(*producer) > kMaxFusedInstructions) continue;
        // The consumer's iteration space must be the producer's.
        const Instruction* h = fusion::Hero(*c);
        const Shape& space = IsReduceHero(*c) ? h->operand(0)->shape() : h->shape();
        if (space.dimensions() != producer->shape().dimensions()) continue;
        bool cycle = false;
        for (const Instruction* o : c->operands()) {
          if (o != producer && fusion::Reaches(o, producer)) cycle = true;
        }
        if (cycle) continue;
        consumer = c;
        break;
      }
      if (!consumer) continue;
      if (!context_.ConsumeFuel(name_)) {
        out_of_fuel_ = true;
        break;
      }
      absl::StatusOr<Instruction*> f = fusion::CombineIntoFusion(
          editor, {Piece{consumer, true, false}, Piece{producer, true, false}},
          consumer->attrs_or_default().fusion_kind, &gone_);
      if (!f.ok()) return f.status();
      fusion::NoteRewrite(editor, &rewrites_);
      changed = true;
    }
    editor.Finish();
    return changed;
  }

 private:
  PassContext& context_;
  std::string_view name_;
  fusion::Removed gone_;
  absl::flat_hash_set<const Instruction*> control_preds_;
  int64_t rewrites_ = 0;
  bool out_of_fuel_ = false;
};

}  // namespace

absl::StatusOr<bool> MultiOutputFusion::Run(Module* module, PassContext& context) {
  NameUniquer names(*module);
  Run1 run(context, name());
  bool changed = false;
  for (Computation* comp : fusion::FusibleComputations(*module)) {
    if (context.cancelled()) break;
    absl::StatusOr<bool> s = run.Siblings(comp, &names);
    if (!s.ok()) return s.status();
    absl::StatusOr<bool> p = run.ProducerConsumer(comp, &names);
    if (!p.ok()) return p.status();
    changed |= *s || *p;
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

}  // namespace hlowb
