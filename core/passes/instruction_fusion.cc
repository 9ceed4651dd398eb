#include "core/passes/instruction_fusion.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/analysis/cost_model.h"
#include "core/support/strings.h"

namespace hlowb {
namespace fusion {
namespace {

// The piece (index) whose output `value` is, and which output: the piece itself for a
// non-tuple piece, get-tuple-element(piece) for a multi-output one. -1 when none.
std::pair<int, int64_t> ProducingPiece(
    const absl::flat_hash_map<const Instruction*, int>& piece_of, const Instruction* value) {
  auto it = piece_of.find(value);
  if (it != piece_of.end() && !value->shape().IsTuple()) return {it->second, 0};
  if (value->opcode() == Opcode::kGetTupleElement && value->operand_count() == 1) {
    auto it2 = piece_of.find(value->operand(0));
    if (it2 != piece_of.end() && value->operand(0)->shape().IsTuple()) {
      return {it2->second, value->tuple_index()};
    }
  }
  return {-1, 0};
}

// A name no instruction or computation has. The uniquer answers "base.0" when only `base`
// itself is taken; XLA's names continue with "base.1", so ".0" is skipped.
std::string FreshName(NameUniquer* names, std::string_view base) {
  std::string name = names->Unique(base);
  if (name.size() > 2 && name.compare(name.size() - 2, 2, ".0") == 0) name = names->Unique(base);
  return name;
}

int64_t NextComputationId(const Module& module) {
  int64_t id = 0;
  for (const auto& c : module.computations()) id = std::max(id, c->id() + 1);
  return id;
}

}  // namespace

bool IsDead(const ComputationEditor& editor, const Instruction* instr) {
  return editor.user_count(instr) == 0 && instr != editor.computation()->root() &&
         instr->opcode() != Opcode::kParameter && !HasSideEffect(*instr);
}

absl::flat_hash_set<const Instruction*> ControlPredecessorSet(const Computation& comp) {
  absl::flat_hash_set<const Instruction*> out;
  for (const Instruction* i : comp.instructions()) {
    for (const Instruction* p : i->control_predecessors()) out.insert(p);
  }
  return out;
}

std::vector<Instruction*> LiveUsers(const ComputationEditor& editor, const Instruction* instr,
                                    const Removed& removed) {
  std::vector<Instruction*> out;
  for (Instruction* u : editor.users(instr)) {
    if (!removed.contains(u) && !IsDead(editor, u)) out.push_back(u);
  }
  return out;
}

absl::StatusOr<Instruction*> CombineIntoFusion(ComputationEditor& editor,
                                               const std::vector<Piece>& pieces,
                                               FusionKind kind, Removed* removed,
                                               std::string_view computation_base,
                                               bool reuse_first) {
  if (pieces.empty()) return absl::InvalidArgumentError("fusion: nothing to fuse");
  Module* module = editor.module();
  NameUniquer* names = editor.names();
  const int n = static_cast<int>(pieces.size());
  absl::flat_hash_map<const Instruction*, int> piece_of;
  for (int i = 0; i < n; ++i) {
    const Instruction* p = pieces[i].instr;
    if (p->parent() != editor.computation()) {
      return absl::InvalidArgumentError(StrCat("fusion: ", p->name(), " is not in ",
                                               editor.computation()->name()));
    }
    if (!p->control_predecessors().empty()) {
      return absl::InvalidArgumentError(StrCat("fusion: ", p->name(),
                                               " has control dependencies"));
    }
    if (p->opcode() == Opcode::kFusion && p->called_computations().size() != 1) {
      return absl::InvalidArgumentError(StrCat("fusion: ", p->name(),
                                               " has no fused computation"));
    }
    if (!piece_of.emplace(p, i).second) {
      return absl::InvalidArgumentError(StrCat("fusion: ", p->name(), " listed twice"));
    }
  }
  // A piece that dies must be used only by other pieces (directly or through a
  // get-tuple-element only pieces use).
  for (const Piece& p : pieces) {
    if (p.keep_outputs || p.survives) continue;
    if (p.instr == editor.computation()->root()) {
      return absl::InvalidArgumentError(StrCat("fusion: ", p.instr->name(),
                                               " is the root but its value is dropped"));
    }
    for (const Instruction* u : LiveUsers(editor, p.instr, *removed)) {
      if (piece_of.contains(u)) continue;
      bool via_gte = u->opcode() == Opcode::kGetTupleElement;
      for (const Instruction* uu :
           via_gte ? LiveUsers(editor, u, *removed) : std::vector<Instruction*>{}) {
        via_gte &= piece_of.contains(uu);
      }
      if (!via_gte) {
        return absl::InvalidArgumentError(StrCat("fusion: ", p.instr->name(), " is used by ",
                                                 u->name(), " outside the fusion"));
      }
    }
  }

  // Order pieces so that each comes after the pieces it reads.
  std::vector<int> order;
  std::vector<uint8_t> state(n, 0);
  for (int start = 0; start < n; ++start) {
    if (state[start]) continue;
    std::vector<std::pair<int, int>> stack{{start, 0}};
    state[start] = 1;
    while (!stack.empty()) {
      auto& [i, next] = stack.back();
      const Instruction* p = pieces[i].instr;
      if (next < p->operand_count()) {
        int j = ProducingPiece(piece_of, p->operand(next++)).first;
        if (j < 0 || j == i) continue;
        if (state[j] == 1) {
          return absl::InvalidArgumentError(StrCat("fusion: ", p->name(),
                                                   " and its producers form a cycle"));
        }
        if (state[j] == 0) {
          state[j] = 1;
          stack.push_back({j, 0});
        }
        continue;
      }
      state[i] = 2;
      order.push_back(i);
      stack.pop_back();
    }
  }

  // Outer operands of the new fusion: every value a piece reads that no piece produces, in
  // piece order (so the first piece's parameters come first, as they were).
  std::vector<Instruction*> operands;
  std::vector<std::string> param_names;
  absl::flat_hash_map<const Instruction*, int64_t> operand_index;
  for (const Piece& p : pieces) {
    const Instruction* pi = p.instr;
    for (int k = 0; k < pi->operand_count(); ++k) {
      Instruction* o = pi->operand(k);
      if (ProducingPiece(piece_of, o).first >= 0) continue;
      if (piece_of.contains(o)) {
        return absl::InvalidArgumentError(StrCat("fusion: ", pi->name(), " reads the tuple ",
                                                 o->name(), " whole"));
      }
      if (operand_index.contains(o)) continue;
      operand_index[o] = static_cast<int64_t>(operands.size());
      std::string hint;
      if (pi->opcode() == Opcode::kFusion && !p.survives) {
        Computation* fc = pi->called_computations()[0];
        if (k < fc->parameter_count() && fc->parameter(k)) hint = fc->parameter(k)->name();
      }
      operands.push_back(o);
      param_names.push_back(std::move(hint));
    }
  }

  std::vector<Instruction*> body;
  absl::flat_hash_set<std::string> body_names;
  // Names inside the new computation must differ (pieces' bodies may repeat names).
  auto body_name = [&](std::string name) {
    if (!body_names.insert(name).second) {
      name = FreshName(names, name);
      body_names.insert(name);
    }
    return name;
  };
  auto new_instr = [&](const Instruction& proto, std::string name,
                       std::vector<Instruction*> ops) {
    name = body_name(std::move(name));
    Instruction* c = module->NewInstruction(proto.opcode(), std::move(name),
                                            module->InternShape(proto.shape()));
    std::string keep_name = c->name();
    CopyInstructionFields(proto, c);
    c->set_name(std::move(keep_name));
    c->set_shape(module->InternShape(proto.shape()));
    *c->mutable_operands() = std::move(ops);
    body.push_back(c);
    return c;
  };
  std::vector<Instruction*> params;
  for (size_t i = 0; i < operands.size(); ++i) {
    std::string name = body_name(!param_names[i].empty() ? param_names[i]
                                                         : FreshName(names, StrCat("param_", i)));
    Instruction* prm = module->NewInstruction(Opcode::kParameter, std::move(name),
                                              module->InternShape(operands[i]->shape()));
    prm->set_index(static_cast<int64_t>(i));
    body.push_back(prm);
    params.push_back(prm);
  }

  std::vector<std::vector<Instruction*>> outputs(n);
  auto resolve = [&](const Instruction* outer) -> Instruction* {
    auto [j, k] = ProducingPiece(piece_of, outer);
    if (j >= 0) {
      if (k < 0 || k >= static_cast<int64_t>(outputs[j].size())) return nullptr;
      return outputs[j][k];
    }
    auto it = operand_index.find(outer);
    return it == operand_index.end() ? nullptr : params[it->second];
  };
  for (int i : order) {
    const Piece& p = pieces[i];
    const Instruction* pi = p.instr;
    auto name_of = [&](const Instruction& proto) {
      return p.survives ? FreshName(names, proto.name()) : proto.name();
    };
    if (pi->opcode() == Opcode::kFusion) {
      const Computation* fc = pi->called_computations()[0];
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const Instruction* fi : fc->instructions()) {
        if (fi->opcode() == Opcode::kParameter) {
          int64_t k = fi->parameter_number();
          if (k < 0 || k >= pi->operand_count()) {
            return absl::InvalidArgumentError(StrCat("fusion: ", pi->name(),
                                                     " has a parameter without operand"));
          }
          Instruction* v = resolve(pi->operand(static_cast<int>(k)));
          if (!v) return absl::InternalError(StrCat("fusion: cannot resolve ", fi->name()));
          map[fi] = v;
          continue;
        }
        std::vector<Instruction*> ops;
        for (const Instruction* o : fi->operands()) {
          auto it = map.find(o);
          if (it == map.end()) {
            return absl::InvalidArgumentError(StrCat("fusion: ", fi->name(), " in ",
                                                     fc->name(), " uses a later value"));
          }
          ops.push_back(it->second);
        }
        map[fi] = new_instr(*fi, name_of(*fi), std::move(ops));
      }
      const Instruction* root = fc->root();
      if (!root || !map.contains(root)) {
        return absl::InvalidArgumentError(StrCat("fusion: ", fc->name(), " has no root"));
      }
      if (pi->shape().IsTuple() && root->opcode() == Opcode::kTuple) {
        for (const Instruction* o : root->operands()) outputs[i].push_back(map[o]);
      } else if (pi->shape().IsTuple()) {
        return absl::UnimplementedError(StrCat("fusion: ", pi->name(),
                                               " has a tuple result without a tuple root"));
      } else {
        outputs[i].push_back(map[root]);
      }
    } else {
      std::vector<Instruction*> ops;
      for (const Instruction* o : pi->operands()) {
        Instruction* v = resolve(o);
        if (!v) return absl::InternalError(StrCat("fusion: cannot resolve ", o->name()));
        ops.push_back(v);
      }
      Instruction* c = new_instr(*pi, name_of(*pi), std::move(ops));
      if (pi->shape().IsTuple()) {
        return absl::UnimplementedError(StrCat("fusion: ", pi->name(), " has a tuple result"));
      }
      outputs[i].push_back(c);
    }
  }

  // Root.
  std::vector<Instruction*> all_outputs;
  bool multi = false;
  for (int i = 0; i < n; ++i) {
    if (!pieces[i].keep_outputs) continue;
    if (pieces[i].instr->shape().IsTuple()) multi = true;
    for (Instruction* o : outputs[i]) all_outputs.push_back(o);
  }
  if (all_outputs.empty()) return absl::InvalidArgumentError("fusion: no outputs kept");
  multi |= all_outputs.size() > 1;
  Instruction* root = all_outputs[0];
  if (multi) {
    std::vector<Shape> shapes;
    for (const Instruction* o : all_outputs) shapes.push_back(o->shape());
    root = module->NewInstruction(Opcode::kTuple, body_name(FreshName(names, "tuple")),
                                  module->InternShape(Shape::Tuple(std::move(shapes))));
    *root->mutable_operands() = all_outputs;
    body.push_back(root);
  }
  // Drop what the root does not need (e.g. a multi-output piece's old tuple root).
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> stack{root};
  live.insert(root);
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    for (const Instruction* o : i->operands()) {
      if (live.insert(o).second) stack.push_back(o);
    }
  }
  std::vector<Instruction*> kept;
  for (Instruction* b : body) {
    if (live.contains(b) || b->opcode() == Opcode::kParameter) kept.push_back(b);
  }

  // The computation: pieces[0]'s when it is a fusion that goes away, otherwise a new one.
  const Instruction* first = pieces[0].instr;
  const bool reuse = reuse_first && first->opcode() == Opcode::kFusion && !pieces[0].survives;
  Computation* comp = nullptr;
  if (reuse) {
    comp = first->called_computations()[0];
  } else {
    auto owned = std::make_unique<Computation>(FreshName(names, computation_base));
    owned->set_id(NextComputationId(*module));
    comp = module->AddComputation(std::move(owned));
    auto& comps = *module->mutable_computations();
    auto at = std::find_if(comps.begin(), comps.end(), [&](const auto& c) {
      return c.get() == editor.computation();
    });
    if (at != comps.end()) std::rotate(at, comps.end() - 1, comps.end());
  }
  comp->SetInstructions(std::move(kept));
  comp->set_root(root);

  Instruction* fusion = module->NewInstruction(
      Opcode::kFusion,
      reuse ? first->name() : FreshName(names, "fusion"),
      module->InternShape(root->shape()));
  *fusion->mutable_operands() = operands;
  fusion->mutable_attrs()->fusion_kind = kind;
  fusion->mutable_called_computations()->push_back(comp);
  if (first->metadata()) *fusion->mutable_metadata() = *first->metadata();
  editor.Insert(fusion);

  // Rewire the kept pieces' users.
  int64_t offset = 0;
  auto output = [&](int64_t index, const Shape& shape) -> Instruction* {
    if (!multi) return fusion;
    Instruction* gte = module->NewInstruction(Opcode::kGetTupleElement,
                                              FreshName(names, "get-tuple-element"),
                                              module->InternShape(shape));
    gte->mutable_operands()->push_back(fusion);
    gte->set_index(index);
    editor.Insert(gte);
    return gte;
  };
  for (const Piece& p : pieces) {
    if (!p.keep_outputs) continue;
    if (!p.instr->shape().IsTuple()) {
      editor.ReplaceAllUsesWith(p.instr, output(offset, p.instr->shape()));
      offset += 1;
      continue;
    }
    std::vector<Instruction*> users = editor.users(p.instr);
    for (Instruction* u : users) {
      if (u->opcode() != Opcode::kGetTupleElement) continue;
      editor.ReplaceAllUsesWith(u, output(offset + u->tuple_index(), u->shape()));
    }
    if (editor.user_count(p.instr) > 0 || p.instr == editor.computation()->root()) {
      // Used whole (by a tuple, the root, ...): rebuild the tuple from the new outputs.
      std::vector<Instruction*> elems;
      for (int k = 0; k < p.instr->shape().tuple_count(); ++k) {
        elems.push_back(output(offset + k, p.instr->shape().tuple_shape(k)));
      }
      Instruction* t = module->NewInstruction(Opcode::kTuple, FreshName(names, "tuple"),
                                              module->InternShape(p.instr->shape()));
      *t->mutable_operands() = elems;
      editor.Insert(t);
      editor.ReplaceAllUsesWith(p.instr, t);
    }
    offset += p.instr->shape().tuple_count();
  }
  // Removed pieces stop reading their operands so that user lists do not keep growing; the
  // editor's lists still name them until the next RebuildUsers (see NoteRewrite).
  for (const Piece& p : pieces) {
    if (p.survives) continue;
    removed->insert(p.instr);
    p.instr->mutable_operands()->clear();
  }
  return fusion;
}

void NoteRewrite(ComputationEditor& editor, int64_t* rewrites_since_rebuild) {
  if (++*rewrites_since_rebuild * 8 < editor.computation()->instruction_count() + 64) return;
  editor.RebuildUsers();
  *rewrites_since_rebuild = 0;
}

std::vector<Computation*> FusibleComputations(const Module& module) {
  std::vector<Computation*> out;
  if (!module.entry()) return out;
  absl::flat_hash_set<const Computation*> seen{module.entry()};
  std::vector<Computation*> work{module.entry()};
  while (!work.empty()) {
    Computation* c = work.back();
    work.pop_back();
    out.push_back(c);
    for (const Instruction* i : c->instructions()) {
      switch (i->opcode()) {
        case Opcode::kWhile:
        case Opcode::kConditional:
        case Opcode::kCall:
        case Opcode::kAsyncStart:
          for (Computation* callee : i->called_computations()) {
            if (callee && seen.insert(callee).second) work.push_back(callee);
          }
          break;
        default:
          break;
      }
    }
  }
  // Definition order, so results do not depend on the walk.
  std::vector<Computation*> ordered;
  absl::flat_hash_set<const Computation*> wanted(out.begin(), out.end());
  for (const auto& c : module.computations()) {
    if (wanted.contains(c.get())) ordered.push_back(c.get());
  }
  return ordered;
}

bool Reaches(const Instruction* instr, const Instruction* target) {
  absl::flat_hash_set<const Instruction*> seen;
  std::vector<const Instruction*> stack{instr};
  while (!stack.empty()) {
    const Instruction* i = stack.back();
    stack.pop_back();
    if (i == target) return true;
    for (const Instruction* o : i->operands()) {
      if (seen.insert(o).second) stack.push_back(o);
    }
  }
  return false;
}

bool IsExpensive(const Instruction& instr) {
  if (IsTranscendental(instr.opcode())) return true;
  switch (instr.opcode()) {
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
    case Opcode::kAtan2:
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kSort:
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kFft:
    case Opcode::kCholesky:
    case Opcode::kTriangularSolve:
    case Opcode::kCustomCall:
    case Opcode::kRng:
      return true;
    case Opcode::kFusion:
      for (const Computation* c : instr.called_computations()) {
        for (const Instruction* i : c->instructions()) {
          if (IsExpensive(*i)) return true;
        }
      }
      return false;
    default:
      return false;
  }
}

const Instruction* Hero(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFusion || instr.called_computations().empty()) return &instr;
  const Instruction* root = instr.called_computations()[0]->root();
  if (!root) return &instr;
  if (root->opcode() == Opcode::kTuple && root->operand_count() > 0) return root->operand(0);
  return root;
}

}  // namespace fusion

namespace {

using fusion::IsDead;
using fusion::IsExpensive;
using fusion::Piece;

bool IsArrayValue(const Instruction& instr) { return instr.shape().IsArray(); }

// Minor-most dimension of `shape` (its layout's, else the last).
// Opcodes a loop fusion can contain (besides elementwise ops and scalar constants).
bool IsLoopFusibleShapeOp(Opcode op) {
  switch (op) {
    case Opcode::kBitcast:
    case Opcode::kBroadcast:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kGather:
    case Opcode::kIota:
    case Opcode::kPad:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
      return true;
    default:
      return false;
  }
}

bool IsFusibleElementwise(const Instruction& instr) {
  return IsElementwise(instr.opcode()) && instr.opcode() != Opcode::kStochasticConvert &&
         !HasSideEffect(instr);
}

bool IsScalarConstant(const Instruction& instr) {
  return instr.opcode() == Opcode::kConstant && instr.shape().IsScalar();
}

// The consumer reads each element of operand `index` several times (directly, or through
// instructions whose results a later instruction reads several times), so fusing an expensive
// producer there recomputes it per read.
bool ReusesOperandElements(const Instruction& consumer, int index) {
  auto reuses = [](const Instruction& user, const Instruction& operand) {
    switch (user.opcode()) {
      case Opcode::kBroadcast:
        return user.shape().ElementCount() > operand.shape().ElementCount();
      case Opcode::kReduceWindow:
      case Opcode::kDot:
      case Opcode::kConvolution:
      case Opcode::kGather:
      case Opcode::kPad:
        return true;
      default:
        return false;
    }
  };
  if (consumer.opcode() != Opcode::kFusion) {
    return reuses(consumer, *consumer.operand(index));
  }
  const Computation* fc = consumer.called_computations()[0];
  if (index >= fc->parameter_count() || !fc->parameter(index)) return false;
  // Follow the parameter's values through the fused computation (instructions are in
  // def-before-use order): a reusing instruction anywhere downstream rereads them, through
  // everything in between. A reduction followed by a broadcast of its result recomputes the
  // reduction for every broadcast element.
  absl::flat_hash_set<const Instruction*> reached{fc->parameter(index)};
  for (const Instruction* i : fc->instructions()) {
    for (const Instruction* o : i->operands()) {
      if (reached.count(o) == 0) continue;
      if (reuses(*i, *o)) return true;
      reached.insert(i);
      break;
    }
  }
  return false;
}

bool IsMatrixVectorDot(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) return false;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  if (lhs.rank() > 2 || rhs.rank() > 2 || lhs.rank() == 0 || rhs.rank() == 0) return false;
  const InstructionAttrs& a = dot.attrs_or_default();
  if (a.dot_dimension_numbers && !a.dot_dimension_numbers->lhs_batch_dimensions.empty()) {
    return false;
  }
  const Shape& out = dot.shape();
  if (out.rank() <= 1) return true;
  return std::find(out.dimensions().begin(), out.dimensions().end(), 1) !=
         out.dimensions().end();
}

// Fused computations stop growing at this many instructions. Without a bound, cheap producers
// duplicated into every user of a wide DAG make fusions (and the work of rebuilding them)
// grow quadratically; a kernel this large gains nothing from more fusion.
constexpr int64_t kMaxFusedInstructions = 192;

int64_t FusedSize(const Instruction& instr) {
  if (instr.opcode() == Opcode::kFusion && instr.called_computations().size() == 1 &&
      instr.called_computations()[0]) {
    return instr.called_computations()[0]->instruction_count();
  }
  return 1;
}

// Whether reduce `r` folds its first operand's minor-most dimension (the last one when the
// operand has no layout).
bool ReducesMinorMostDimension(const Instruction& r) {
  const Shape& in = r.operand(0)->shape();
  if (!in.IsArray() || in.rank() == 0) return true;
  int64_t minor = in.rank() - 1;
  if (in.has_layout() && !in.layout().minor_to_major.empty()) minor = in.layout().minor_to_major[0];
  const std::vector<int64_t>& dims = r.dimensions();
  return std::find(dims.begin(), dims.end(), minor) != dims.end();
}

// Whether the cpu fusion pass ever takes `instr` into a loop fusion as a producer. Values it
// never takes in (dots, convolutions, custom calls, control flow, existing fusions, ...) end a
// producer's cone: a fused computation reads them as parameters.
bool OpaqueToCpuFusion(const Instruction& instr) {
  if (instr.opcode() == Opcode::kFusion) return true;
  if (!IsArrayValue(instr)) return true;
  if (IsFusibleElementwise(instr) || IsLoopFusibleShapeOp(instr.opcode())) return false;
  if (instr.opcode() == Opcode::kReduce || IsScalarConstant(instr)) return false;
  return true;
}

// Whether a producer with other users may be copied into a consumer: only when it is cheap and
// its own inputs are leaves (parameters, constants, scalar broadcasts, tuple elements; for the
// cpu pass also values it never fuses, such as a dot's result). Copying anything deeper copies
// its whole cone of producers into every user, which on wide graphs multiplies the module's
// size instead of saving memory traffic.
bool CheapToDuplicate(const Instruction& producer, bool cpu) {
  switch (producer.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kConstant:
      return true;
    default:
      break;
  }
  if (IsExpensive(producer) || producer.operand_count() > 3) return false;
  for (const Instruction* op : producer.operands()) {
    switch (op->opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kGetTupleElement:
      case Opcode::kIota:
        break;
      case Opcode::kBroadcast:
        if (!op->operand(0)->shape().IsScalar()) return false;
        break;
      default:
        if (!cpu || !OpaqueToCpuFusion(*op)) return false;
        break;
    }
  }
  return true;
}

class FusionRun {
 public:
  FusionRun(bool gpu, std::string_view pass_name, PassContext& context)
      : gpu_(gpu), pass_name_(pass_name), context_(context) {}

  absl::StatusOr<bool> RunOnComputation(Computation* comp, NameUniquer* names) {
    ComputationEditor editor(comp, names);
    editor_ = &editor;
    control_preds_ = fusion::ControlPredecessorSet(*comp);
    bool changed = false;
    absl::Status status = gpu_ ? RunGpu(comp, &changed) : RunCpu(comp, &changed);
    editor.Finish();
    editor_ = nullptr;
    if (!status.ok()) return status;
    return changed;
  }

  bool out_of_fuel() const { return out_of_fuel_; }

 private:
  bool Usable(const Instruction* instr) const {
    return !gone_.contains(instr) && !IsDead(*editor_, instr) &&
           instr->control_predecessors().empty() && !control_preds_.contains(instr);
  }

  // ----- CPU ("fusion") -----

  bool CanBeLoopFusedCpu(const Instruction& instr) const {
    if (!IsArrayValue(instr)) return false;
    if (IsFusibleElementwise(instr) || IsLoopFusibleShapeOp(instr.opcode())) return true;
    // Reductions over any dimensions take their elementwise producers in, as XLA's CPU
    // compiler does today with its reduction fusions (older releases fused only reductions
    // over the minor-most dimension).
    return instr.opcode() == Opcode::kReduce && instr.operand_count() == 2;
  }

  bool CanBeOutputFused(const Instruction& producer, const Instruction& consumer) const {
    return consumer.opcode() == Opcode::kAdd && IsMatrixVectorDot(producer) &&
           fusion::LiveUsers(*editor_, &producer, gone_).size() == 1;
  }

  bool CanBeOutputFusedIntoSomeOperand(const Instruction& instr) const {
    if (instr.opcode() != Opcode::kAdd) return false;
    for (const Instruction* o : instr.operands()) {
      if (CanBeOutputFused(*o, instr)) return true;
    }
    return false;
  }

  bool ShouldFuseCpu(const Instruction& producer, const Instruction& consumer, int index) const {
    if (!Usable(&producer) || !IsArrayValue(producer)) return false;
    if (producer.opcode() != Opcode::kFusion && IsExpensive(producer) &&
        ReusesOperandElements(consumer, index)) {
      return false;
    }
    if (consumer.opcode() != Opcode::kFusion && CanBeOutputFused(producer, consumer)) {
      return true;
    }
    // An add that will become an output fusion's root takes in nothing else first.
    if (consumer.opcode() != Opcode::kFusion && CanBeOutputFusedIntoSomeOperand(consumer)) {
      return false;
    }
    if (CanBeOutputFusedIntoSomeOperand(producer)) return false;
    if (producer.opcode() == Opcode::kFusion) return false;
    if (IsScalarConstant(producer)) {
      if (consumer.opcode() != Opcode::kFusion) return false;
    } else if (!CanBeLoopFusedCpu(producer)) {
      return false;
    }
    // A reduction that keeps its operand's minor-most dimension (a column reduction) stays the
    // root of its own fusion, where its kernel walks the operand in memory order and
    // accumulates whole rows. Inside a consumer it would be computed one output element at a
    // time, each a strided walk through the operand.
    if (producer.opcode() == Opcode::kReduce && !ReducesMinorMostDimension(producer)) return false;
    if (consumer.opcode() == Opcode::kFusion) {
      return consumer.attrs_or_default().fusion_kind == FusionKind::kLoop &&
             IsArrayValue(consumer);
    }
    return CanBeLoopFusedCpu(consumer);
  }

  absl::Status RunCpu(Computation* comp, bool* changed) {
    std::vector<Instruction*> instrs = comp->instructions();
    for (auto it = instrs.rbegin(); it != instrs.rend() && !out_of_fuel_; ++it) {
      Instruction* consumer = *it;
      if (!Usable(consumer)) continue;
      bool progress = true;
      while (progress && !out_of_fuel_) {
        progress = false;
        for (int k = 0; k < consumer->operand_count(); ++k) {
          Instruction* producer = consumer->operand(k);
          if (!ShouldFuseCpu(*producer, *consumer, k)) continue;
          if (FusedSize(*consumer) + FusedSize(*producer) > kMaxFusedInstructions) continue;
          std::vector<Instruction*> users = fusion::LiveUsers(*editor_, producer, gone_);
          bool others = producer == comp->root();
          for (const Instruction* u : users) others |= u != consumer;
          if (others) {
            if (IsExpensive(*producer) || producer == comp->root() ||
                !CheapToDuplicate(*producer, /*cpu=*/true)) {
              continue;
            }
            // Duplicate only what every user can take in. A scalar constant is copied into
            // every fusion that reads it whatever its other users are: a fusion that reads it
            // as a parameter cannot fold it (a power's constant exponent, say).
            bool all = true;
            if (IsScalarConstant(*producer)) users.clear();
            for (const Instruction* u : users) {
              if (u == consumer) continue;
              int idx = 0;
              while (u->operand(idx) != producer) ++idx;
              all &= Usable(u) && ShouldFuseCpu(*producer, *u, idx);
            }
            if (!all) continue;
          }
          if (!context_.ConsumeFuel(pass_name_)) {
            out_of_fuel_ = true;
            break;
          }
          FusionKind kind = consumer->opcode() == Opcode::kFusion
                                ? consumer->attrs_or_default().fusion_kind
                                : (CanBeOutputFused(*producer, *consumer) ? FusionKind::kOutput
                                                                          : FusionKind::kLoop);
          absl::StatusOr<Instruction*> f = fusion::CombineIntoFusion(
              *editor_, {Piece{consumer, true, false}, Piece{producer, false, others}}, kind,
              &gone_);
          if (!f.ok()) return f.status();
          fusion::NoteRewrite(*editor_, &rewrites_);
          consumer = *f;
          *changed = true;
          progress = true;
          break;
        }
      }
    }
    return absl::OkStatus();
  }

  // ----- GPU ("priority-fusion") -----

  bool IsProducerFusibleGpu(const Instruction& instr) const {
    if (!IsArrayValue(instr)) return false;
    if (instr.opcode() == Opcode::kFusion) {
      return instr.attrs_or_default().fusion_kind == FusionKind::kLoop;
    }
    return IsFusibleElementwise(instr) || IsLoopFusibleShapeOp(instr.opcode()) ||
           IsScalarConstant(instr);
  }

  // The kind the fusion of `producer` into `consumer` gets; nullopt when it may not happen.
  std::optional<FusionKind> GpuFusionKind(const Instruction& producer,
                                          const Instruction& consumer) const {
    if (!Usable(&consumer) || !IsArrayValue(consumer)) return std::nullopt;
    if (producer.opcode() == Opcode::kDot) {
      if (consumer.opcode() != Opcode::kFusion && IsFusibleElementwise(consumer) &&
          fusion::LiveUsers(*editor_, &producer, gone_).size() == 1) {
        return FusionKind::kOutput;
      }
      return std::nullopt;
    }
    if (!IsProducerFusibleGpu(producer)) return std::nullopt;
    if (consumer.opcode() == Opcode::kFusion) {
      FusionKind k = consumer.attrs_or_default().fusion_kind;
      if (k == FusionKind::kLoop || k == FusionKind::kInput) return k;
      return std::nullopt;
    }
    if (IsScalarConstant(producer)) return std::nullopt;
    if (consumer.opcode() == Opcode::kReduce) return FusionKind::kInput;
    if (IsFusibleElementwise(consumer) || IsLoopFusibleShapeOp(consumer.opcode())) {
      return FusionKind::kLoop;
    }
    return std::nullopt;
  }

  // The users `producer` would be fused into and the kind of each fusion, when fusing it into
  // every one of them is allowed (XLA's priority fusion fuses a producer into all of its users
  // or into none).
  bool GpuFusionPlan(Instruction* producer, const Computation* comp,
                     std::vector<Instruction*>* users, std::vector<FusionKind>* kinds) const {
    if (!Usable(producer) || producer == comp->root()) return false;
    *users = fusion::LiveUsers(*editor_, producer, gone_);
    if (users->empty()) return false;
    if (users->size() > 1 && (IsExpensive(*producer) || !CheapToDuplicate(*producer, /*cpu=*/false))) {
      return false;
    }
    kinds->clear();
    for (const Instruction* u : *users) {
      std::optional<FusionKind> k = GpuFusionKind(*producer, *u);
      if (!k || FusedSize(*u) + FusedSize(*producer) > kMaxFusedInstructions) return false;
      kinds->push_back(*k);
    }
    return true;
  }

  // Elements of a value (the largest array of a tuple), at least 1.
  static double Elements(const Shape& shape) {
    if (shape.IsArray()) return std::max<double>(1, static_cast<double>(shape.ElementCount()));
    double most = 1;
    for (const Shape& e : shape.tuple_shapes()) most = std::max(most, Elements(e));
    return most;
  }

  // Whether `instr` runs as a kernel of its own when left unfused.
  static bool LaunchesKernel(const Instruction& instr) {
    switch (instr.opcode()) {
      case Opcode::kConstant:
      case Opcode::kParameter:
      case Opcode::kBitcast:
      case Opcode::kGetTupleElement:
      case Opcode::kTuple:
        return false;
      default:
        return true;
    }
  }

  // The priority of fusing `producer` into all of `users`: the kernel time saved, from the
  // device model: the producer's kernel and the users' kernels as they are, against the users'
  // kernels with the producer computed inside them. Inside a user the producer's inputs are
  // read instead of its result, and its arithmetic is repeated once per element the user asks
  // for (a broadcast or a gather asks for elements more than once; a reduction or a slice
  // fewer times). Negative when fusing would cost time (expensive work recomputed per element).
  double GpuPriority(const Instruction& producer, const std::vector<Instruction*>& users) const {
    const Cost pc = EstimateInstructionCost(producer);
    const double p_bytes = static_cast<double>(ShapeByteSize(producer.shape()));
    const double p_elements = Elements(producer.shape());
    double unfused = LaunchesKernel(producer) ? device_.KernelSeconds(pc) : 0;
    double fused = 0;
    for (const Instruction* u : users) {
      const Cost uc = EstimateInstructionCost(*u);
      unfused += device_.KernelSeconds(uc);
      int reads = 0;
      for (const Instruction* o : u->operands()) reads += o == &producer;
      const bool reduces = u->opcode() == Opcode::kReduce ||
                           (u->opcode() == Opcode::kFusion &&
                            u->attrs_or_default().fusion_kind == FusionKind::kInput);
      const double asked = reads * (reduces ? p_elements : Elements(u->shape()));
      const double repeat = asked / p_elements;
      const double read_bytes =
          std::min(static_cast<double>(uc.operand_bytes), reads * p_bytes);
      const double flops = static_cast<double>(uc.flops) + static_cast<double>(pc.flops) * repeat;
      const double transcendentals = static_cast<double>(uc.transcendentals) +
                                     static_cast<double>(pc.transcendentals) * repeat;
      const double bytes = static_cast<double>(uc.bytes_accessed()) - read_bytes +
                           static_cast<double>(pc.operand_bytes) * std::min(1.0, repeat);
      fused += device_.KernelSeconds(flops, transcendentals, std::max(0.0, bytes));
    }
    return unfused - fused;
  }

  // XLA GPU's priority fusion: every fusible producer is queued with its priority; the most
  // valuable fusion happens first, and each fusion re-prices the producers around it (the new
  // fusion itself and its operands, whose users changed). Fusion stops when the best remaining
  // priority is negative. Equal priorities go to the producer nearest the root.
  absl::Status RunGpu(Computation* comp, bool* changed) {
    std::vector<Instruction*> instrs = comp->instructions();
    absl::flat_hash_map<const Instruction*, int64_t> position;
    for (size_t i = 0; i < instrs.size(); ++i) position[instrs[i]] = static_cast<int64_t>(i);
    using Key = std::pair<double, int64_t>;
    std::set<std::pair<Key, Instruction*>> queue;
    absl::flat_hash_map<const Instruction*, Key> queued;
    std::vector<Instruction*> users;
    std::vector<FusionKind> kinds;
    auto reprice = [&](Instruction* producer) {
      if (auto it = queued.find(producer); it != queued.end()) {
        queue.erase({it->second, producer});
        queued.erase(it);
      }
      auto pos = position.find(producer);
      if (pos == position.end() || !GpuFusionPlan(producer, comp, &users, &kinds)) return;
      Key key{GpuPriority(*producer, users), pos->second};
      queue.insert({key, producer});
      queued[producer] = key;
    };
    for (Instruction* i : instrs) reprice(i);

    while (!queue.empty() && !out_of_fuel_) {
      auto top = std::prev(queue.end());
      const Key key = top->first;
      Instruction* producer = top->second;
      queue.erase(top);
      queued.erase(producer);
      if (key.first < 0) break;
      if (!GpuFusionPlan(producer, comp, &users, &kinds)) continue;
      std::vector<Instruction*> made;
      for (size_t i = 0; i < users.size(); ++i) {
        if (!context_.ConsumeFuel(pass_name_)) {
          out_of_fuel_ = true;
          break;
        }
        bool last = i + 1 == users.size();
        const int64_t user_position = position[users[i]];
        absl::StatusOr<Instruction*> f = fusion::CombineIntoFusion(
            *editor_, {Piece{users[i], true, false}, Piece{producer, false, !last}}, kinds[i],
            &gone_);
        if (!f.ok()) return f.status();
        fusion::NoteRewrite(*editor_, &rewrites_);
        position[*f] = user_position;
        made.push_back(*f);
        *changed = true;
      }
      // Re-price what the fusions changed: each new fusion as a producer, and its operands.
      absl::flat_hash_set<Instruction*> affected;
      for (Instruction* f : made) {
        affected.insert(f);
        for (Instruction* o : f->operands()) affected.insert(o);
      }
      std::vector<Instruction*> order(affected.begin(), affected.end());
      std::sort(order.begin(), order.end(), [&](const Instruction* a, const Instruction* b) {
        auto pa = position.find(a), pb = position.find(b);
        const int64_t x = pa == position.end() ? -1 : pa->second;
        const int64_t y = pb == position.end() ? -1 : pb->second;
        return x != y ? x < y : a->name() < b->name();
      });
      for (Instruction* i : order) reprice(i);
    }
    return absl::OkStatus();
  }

  bool gpu_;
  RooflineModel device_;
  std::string_view pass_name_;
  PassContext& context_;
  ComputationEditor* editor_ = nullptr;
  fusion::Removed gone_;
  absl::flat_hash_set<const Instruction*> control_preds_;
  int64_t rewrites_ = 0;
  bool out_of_fuel_ = false;
};

}  // namespace

absl::StatusOr<bool> InstructionFusion::Run(Module* module, PassContext& context) {
  NameUniquer names(*module);
  FusionRun run(target_ == "gpu", name(), context);
  bool changed = false;
  for (Computation* comp : fusion::FusibleComputations(*module)) {
    if (context.cancelled() || run.out_of_fuel()) break;
    absl::StatusOr<bool> r = run.RunOnComputation(comp, &names);
    if (!r.ok()) return r.status();
    changed |= *r;
  }
  if (changed) RemoveUnreachableComputations(module);
  return changed;
}

int64_t CountKernels(const Module& module) {
  int64_t kernels = 0;
  for (const Computation* comp : fusion::FusibleComputations(module)) {
    for (const Instruction* i : comp->instructions()) {
      switch (i->opcode()) {
        case Opcode::kParameter:
        case Opcode::kConstant:
        case Opcode::kTuple:
        case Opcode::kGetTupleElement:
        case Opcode::kBitcast:
        case Opcode::kWhile:
        case Opcode::kConditional:
        case Opcode::kCall:
        case Opcode::kAfterAll:
        case Opcode::kAddDependency:
        case Opcode::kOptimizationBarrier:
        case Opcode::kDomain:
          break;
        default:
          ++kernels;
      }
    }
  }
  return kernels;
}

}  // namespace hlowb
