#include "viewer/graph/hlo_graph.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "absl/status/status.h"
#include "core/analysis/cost_model.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb::graph {
namespace {

constexpr int64_t kLargeParameterElements = 4096;

std::string_view FusionKindName(FusionKind k) {
  switch (k) {
    case FusionKind::kLoop:
      return "loop";
    case FusionKind::kInput:
      return "input";
    case FusionKind::kOutput:
      return "output";
    case FusionKind::kCustom:
      return "custom";
  }
  return "";
}

std::string_view DirectionName(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "EQ";
    case ComparisonDirection::kNe:
      return "NE";
    case ComparisonDirection::kGe:
      return "GE";
    case ComparisonDirection::kGt:
      return "GT";
    case ComparisonDirection::kLe:
      return "LE";
    case ComparisonDirection::kLt:
      return "LT";
  }
  return "";
}

std::string Truncate(std::string s, size_t max) {
  if (max > 3 && s.size() > max) {
    s.resize(max - 3);
    s += "...";
  }
  return s;
}

std::string ShapeText(const Shape& shape, int max_chars) {
  bool layout = shape.IsArray() && shape.rank() > 1;
  return Truncate(PrintShape(shape, layout), static_cast<size_t>(max_chars));
}

std::string ByteText(int64_t n) {
  if (n < 1024) return StrCat(n, " B");
  static const char* kSuffix[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int i = -1;
  while (v >= 1024 && i < 5) {
    v /= 1024;
    ++i;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g %s", v, kSuffix[i]);
  return buffer;
}

// What hovering a node tells: the full shape (the label truncates it), where the op came from
// (op_name, op_type, source line) and the static cost estimate.
std::string NodeTooltip(const Instruction& instr, CostModel& costs) {
  std::string t = StrCat(instr.name(), " = ", OpcodeName(instr.opcode()));
  StrAppend(&t, "\nshape: ", Truncate(PrintShape(instr.shape(), true), 400));
  if (const OpMetadata* md = instr.metadata()) {
    if (!md->op_name.empty()) StrAppend(&t, "\nop_name: ", md->op_name);
    if (!md->op_type.empty()) StrAppend(&t, "\nop_type: ", md->op_type);
    if (!md->source_file.empty()) {
      StrAppend(&t, "\nsource: ", md->source_file);
      if (md->source_line > 0) StrAppend(&t, ":", md->source_line);
    }
  }
  if (const Sharding* sharding = instr.sharding()) {
    // Without its metadata, which repeats the instruction's; a maximal one names its device.
    Sharding bare = *sharding;
    bare.metadata.clear();
    for (Sharding& e : bare.tuple_elements) e.metadata.clear();
    StrAppend(&t, "\nsharding: ", Truncate(PrintSharding(bare), 200));
  }
  const Cost cost = costs.InstructionCost(instr);
  StrAppend(&t, "\ncost: ", CountMagnitude(cost.flops), " flops");
  if (cost.transcendentals > 0) {
    StrAppend(&t, ", ", CountMagnitude(cost.transcendentals), " transcendentals");
  }
  StrAppend(&t, ", ", ByteText(cost.bytes_accessed()), " accessed (", ByteText(cost.operand_bytes),
            " read, ", ByteText(cost.result_bytes), " written)");
  return t;
}

bool IsSmallConstant(const Instruction& instr, int64_t max_elements) {
  if (instr.opcode() != Opcode::kConstant) return false;
  const Shape& s = instr.shape();
  if (!s.IsArray()) return false;
  int64_t n = s.ElementCount();
  return n >= 0 && n <= max_elements;
}

std::string ConstantText(const Instruction& instr) {
  if (instr.literal() == nullptr) return "constant";
  return Truncate(StrCat("constant ", PrintLiteralData(*instr.literal())), 48);
}

// The called computations in drawing order (a while loop shows its body first).
std::vector<const Computation*> DrawnComputations(const Instruction& instr) {
  std::vector<const Computation*> out(instr.called_computations().begin(),
                                      instr.called_computations().end());
  if (instr.opcode() == Opcode::kWhile && out.size() == 2) std::swap(out[0], out[1]);
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Colors and sizes
// ---------------------------------------------------------------------------------------------

ColorFamily OpcodeColorFamily(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kDynamicUpdateSlice:
      return ColorFamily::kYellow;
    case Opcode::kBitcast:
    case Opcode::kConcatenate:
    case Opcode::kCopy:
    case Opcode::kCopyStart:
    case Opcode::kCopyDone:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicReshape:
    case Opcode::kReshape:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kTranspose:
    case Opcode::kShuffle:
      return ColorFamily::kGreen;
    case Opcode::kDot:
    case Opcode::kRaggedDot:
    case Opcode::kScaledDot:
    case Opcode::kConvolution:
    case Opcode::kFft:
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
      return ColorFamily::kDarkBlue;
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kGather:
    case Opcode::kSelectAndScatter:
    case Opcode::kBatchNormGrad:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormTraining:
    case Opcode::kSort:
    case Opcode::kTopK:
    case Opcode::kScan:
      return ColorFamily::kPurple;
    case Opcode::kFusion:
    case Opcode::kMap:
    case Opcode::kDomain:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return ColorFamily::kGray;
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      return ColorFamily::kBrown;
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kWhile:
      return ColorFamily::kDarkGreen;
    case Opcode::kParameter:
      return ColorFamily::kOrange;
    default:
      break;
  }
  OpcodeCategory cat = OpcodeCategoryOf(op);
  if (cat == OpcodeCategory::kCollective) return ColorFamily::kBrown;
  if (cat == OpcodeCategory::kAsync) return ColorFamily::kBrown;
  return ColorFamily::kWhite;
}

NodeStyle StyleForFamily(ColorFamily family) {
  // Material palette fill / stroke / text, as XLA's graph dumper uses.
  NodeStyle s;
  switch (family) {
    case ColorFamily::kWhite:
      s.fill = 0xFFFFFF, s.stroke = 0x000000, s.text = 0x000000;
      break;
    case ColorFamily::kYellow:
      s.fill = 0xFFF9C4, s.stroke = 0xCBC693, s.text = 0x000000;
      break;
    case ColorFamily::kGreen:
      s.fill = 0xC8E6C9, s.stroke = 0x97B498, s.text = 0x000000;
      break;
    case ColorFamily::kDarkBlue:
      s.fill = 0x1565C0, s.stroke = 0x003C8F, s.text = 0xFFFFFF;
      break;
    case ColorFamily::kPurple:
      s.fill = 0xE1BEE7, s.stroke = 0xAF8EB5, s.text = 0x000000;
      break;
    case ColorFamily::kGray:
      s.fill = 0xCFD8DC, s.stroke = 0x9EA7AA, s.text = 0x000000;
      break;
    case ColorFamily::kBrown:
      s.fill = 0xBCAAA4, s.stroke = 0x8C7B75, s.text = 0x000000;
      break;
    case ColorFamily::kDarkGreen:
      s.fill = 0x2E7D32, s.stroke = 0x005005, s.text = 0xFFFFFF;
      break;
    case ColorFamily::kOrange:
      s.fill = 0xFFE0B2, s.stroke = 0xCBAE82, s.text = 0x000000;
      break;
    case ColorFamily::kDarkOrange:
      s.fill = 0xFFB74D, s.stroke = 0xC88719, s.text = 0x000000;
      break;
  }
  return s;
}

std::pair<double, double> EstimateTextSize(const std::vector<std::string>& lines) {
  double w = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    double cw = i == 0 ? 6.6 : 6.0;  // the title is bold
    w = std::max(w, cw * static_cast<double>(lines[i].size()));
  }
  return {std::max(40.0, w + 16), 13.0 * static_cast<double>(lines.size()) + 10};
}

std::string TrivialReducerName(const Computation& comp) {
  if (comp.parameter_count() != 2 || comp.instruction_count() != 3 || comp.root() == nullptr) {
    return "";
  }
  const Instruction* root = comp.root();
  switch (root->opcode()) {
    case Opcode::kAdd:
    case Opcode::kMultiply:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      break;
    default:
      return "";
  }
  if (root->operand_count() != 2) return "";
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) return "";
  if (!root->shape().IsScalar()) return "";
  return std::string(OpcodeName(root->opcode()));
}

// ---------------------------------------------------------------------------------------------
// HloGraph
// ---------------------------------------------------------------------------------------------

int64_t HloGraph::InfoTable::Add(HloNodeInfo info) {
  std::lock_guard<std::mutex> lock(mu);
  infos.push_back(std::move(info));
  return static_cast<int64_t>(infos.size()) - 1;
}

const HloNodeInfo* HloGraph::info(int64_t tag) const {
  if (!table_ || tag < 0) return nullptr;
  std::lock_guard<std::mutex> lock(table_->mu);
  if (tag >= static_cast<int64_t>(table_->infos.size())) return nullptr;
  return &table_->infos[tag];  // deque: stable addresses
}

std::vector<int64_t> HloGraph::TagsFor(const Instruction* instruction) const {
  std::vector<int64_t> out;
  if (!table_) return out;
  std::lock_guard<std::mutex> lock(table_->mu);
  for (size_t i = 0; i < table_->infos.size(); ++i) {
    if (table_->infos[i].instruction == instruction) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

absl::StatusOr<HloGraph> HloGraph::Build(const Computation& computation,
                                         const HloGraphOptions& options) {
  if (computation.root() == nullptr) {
    return absl::InvalidArgumentError(
        StrCat("computation '", computation.name(), "' has no root instruction"));
  }
  HloGraph g;
  g.computation_ = &computation;
  g.options_ = options;
  g.table_ = std::make_shared<InfoTable>();
  const bool group = options.group_min_nodes > 0 && !options.expand_all;
  // When grouping, clusters are expanded once the boxes are known (their paths start there).
  g.graph_ = g.BuildLevel(nullptr, {&computation}, "", 0, /*expand_clusters=*/!group);
  g.flat_ = g.graph_;
  if (group) {
    if (g.flat_->node_count() > options.group_min_nodes) g.Group();
    const std::set<std::string> wanted = std::move(g.options_.expanded);
    g.options_.expanded.clear();
    for (const std::string& path : wanted) {  // parents sort before their children
      auto x = g.WithExpanded(path, true);
      if (x.ok()) g = *std::move(x);
    }
  }
  return g;
}

void HloGraph::Group() {
  const LayoutGraph& flat = *flat_;
  const int n = flat.node_count();
  std::vector<NodeScope> scopes(n);
  for (int v = 0; v < n; ++v) {
    const HloNodeInfo* inf = info(flat.nodes[v].tag);
    // Ghost copies have no scope of their own: they sit with the user they are drawn for.
    if (inf == nullptr || inf->instruction == nullptr || inf->role == HloNodeRole::kGhost) continue;
    const OpMetadata* md = inf->instruction->metadata();
    if (md == nullptr || md->op_name.empty()) continue;
    scopes[v] = ParseOpName(md->op_name, options_.grouping.max_depth);
  }
  ScopeGrouping grouping = ScopeGrouping::Build(flat, scopes, options_.grouping);
  if (grouping.empty()) return;
  // What each box mostly holds, for its tooltip: the three commonest opcodes inside.
  const size_t nb = grouping.boxes().size();
  std::vector<std::unordered_map<int, int>> opcodes(nb);
  for (int v = 0; v < n; ++v) {
    const HloNodeInfo* inf = info(flat.nodes[v].tag);
    if (inf == nullptr || inf->instruction == nullptr) continue;
    const int op = static_cast<int>(inf->instruction->opcode());
    for (int b = grouping.box_of(v); b >= 0; b = grouping.boxes()[b].parent) ++opcodes[b][op];
  }
  TextMeasureFn measure = options_.measure ? options_.measure : TextMeasureFn(EstimateTextSize);
  for (size_t b = 0; b < nb; ++b) {
    const ScopeBox& box = grouping.boxes()[b];
    LayoutNode& node = grouping.box_nodes[b];
    std::vector<std::pair<int, int>> common(opcodes[b].begin(), opcodes[b].end());
    std::sort(common.begin(), common.end(), [](const auto& x, const auto& y) {
      return x.second != y.second ? x.second > y.second : x.first < y.first;
    });
    std::string summary;
    for (size_t i = 0; i < common.size() && i < 3; ++i) {
      StrAppend(&summary, i ? " \xC2\xB7 " : "", OpcodeName(static_cast<Opcode>(common[i].first)),
                " ", common[i].second);
    }

    // Wider and taller than an instruction's box: the overview's landmarks.
    auto [w, h] = measure(node.label);
    node.width = std::max(w + 28, 120.0);
    node.height = h + 12;
    node.style.shape = NodeShape::kRoundedBox;
    if (box.kind == ScopeBox::Kind::kScope) {
      node.style.fill = 0xE8EAF6;
      node.style.stroke = 0x3949AB;
      node.style.text = 0x1A237E;
    } else {
      node.style.fill = 0xF5F5F5;
      node.style.stroke = 0x757575;
      node.style.text = 0x212121;
    }
    switch (box.kind) {
      case ScopeBox::Kind::kScope:
        node.tooltip = StrCat("op_name scope ", box.scope, "/\n", box.size, " nodes");
        if (box.split_off > 0) {
          StrAppend(&node.tooltip, " (", box.split_off, " of its sub-scopes are drawn beside it)");
        }
        break;
      case ScopeBox::Kind::kOp:
        node.tooltip = StrCat("op_name ", box.scope, "\n", box.size, " nodes");
        break;
      case ScopeBox::Kind::kOther:
        node.tooltip = StrCat("nodes in no box of their own", box.scope.empty() ? "" : " in ",
                              box.scope, "\n", box.size, " nodes");
        break;
    }
    if (!summary.empty()) StrAppend(&node.tooltip, "\nmostly ", summary);
    StrAppend(&node.tooltip, "\ndouble-click to expand in place");
    HloNodeInfo info;
    info.role = HloNodeRole::kGroup;
    info.group = static_cast<int>(b);
    info.path = grouping.BoxPath(static_cast<int>(b));
    node.tag = table_->Add(std::move(info));
  }
  // Paths of the top level's nodes now start with their boxes.
  {
    std::lock_guard<std::mutex> lock(table_->mu);
    for (int v = 0; v < n; ++v) {
      const int b = grouping.box_of(v);
      const int64_t tag = flat.nodes[v].tag;
      if (b < 0 || tag < 0 || tag >= static_cast<int64_t>(table_->infos.size())) continue;
      table_->infos[tag].path = StrCat(grouping.BoxPath(b), "/", flat.nodes[v].key);
    }
  }
  grouping_ = std::make_shared<const ScopeGrouping>(std::move(grouping));
  box_expanded_.assign(grouping_->boxes().size(), 0);
  graph_ = grouping_->Apply(*flat_, box_expanded_);
}

int HloGraph::TopNodeOf(const Instruction* instruction) const {
  if (instruction == nullptr || !flat_) return -1;
  int ghost = -1, inside = -1;
  for (int v = 0; v < flat_->node_count(); ++v) {
    const HloNodeInfo* inf = info(flat_->nodes[v].tag);
    if (inf == nullptr) continue;
    if (inf->instruction == instruction) {
      if (inf->role != HloNodeRole::kGhost) return v;
      if (ghost < 0) ghost = v;
    } else if (inside < 0 && std::find(inf->inlined.begin(), inf->inlined.end(), instruction) !=
                                 inf->inlined.end()) {
      inside = v;
    }
  }
  return ghost >= 0 ? ghost : inside;
}

std::string HloGraph::GroupPathOf(const Instruction* instruction) const {
  if (!grouping_) return "";
  const int b = grouping_->box_of(TopNodeOf(instruction));
  return b < 0 ? "" : grouping_->BoxPath(b);
}

bool HloGraph::HiddenInGroup(const Instruction* instruction) const {
  if (!grouping_) return false;
  for (int b = grouping_->box_of(TopNodeOf(instruction)); b >= 0;
       b = grouping_->boxes()[b].parent) {
    if (!box_expanded_[b]) return true;
  }
  return false;
}

HloGraph HloGraph::WithGroupsOpenedFor(const Instruction* instruction) const {
  if (!HiddenInGroup(instruction)) return *this;
  HloGraph out = *this;
  for (int b = grouping_->box_of(TopNodeOf(instruction)); b >= 0;
       b = grouping_->boxes()[b].parent) {
    out.box_expanded_[b] = 1;
    out.options_.expanded.insert(grouping_->BoxPath(b));
  }
  out.graph_ = grouping_->Apply(*out.flat_, out.box_expanded_);
  return out;
}

std::shared_ptr<const LayoutGraph> HloGraph::BuildLevel(
    const Instruction* owner, const std::vector<const Computation*>& comps, const std::string& path,
    int depth, bool expand_clusters) const {
  const HloGraphOptions& o = options_;
  TextMeasureFn measure = o.measure ? o.measure : TextMeasureFn(EstimateTextSize);
  auto g = std::make_shared<LayoutGraph>();
  if (comps.size() == 1) {
    g->name = comps[0]->name();
  } else {
    for (size_t i = 0; i < comps.size(); ++i) {
      g->name += (i ? " + " : "") + comps[i]->name();
    }
  }
  std::unordered_set<std::string> keys;
  auto unique_key = [&keys](std::string key, const Computation& c) {
    if (keys.count(key)) key = StrCat(key, "@", c.name());
    while (keys.count(key)) key += "'";
    keys.insert(key);
    return key;
  };
  auto node_path = [&path](const std::string& key) {
    return path.empty() ? key : StrCat(path, "/", key);
  };

  std::vector<std::vector<int>> param_nodes(comps.size());
  std::vector<int> root_nodes(comps.size(), -1);
  CostModel costs;  // caches the called computations' totals for the tooltips

  for (size_t ci = 0; ci < comps.size(); ++ci) {
    const Computation& comp = *comps[ci];
    // Users within the computation (user, operand index), in instruction order.
    std::unordered_map<const Instruction*, std::vector<std::pair<const Instruction*, int>>> users;
    for (const Instruction* instr : comp.instructions()) {
      for (int i = 0; i < instr->operand_count(); ++i)
        users[instr->operand(i)].push_back({instr, i});
    }
    auto distinct_users = [&users](const Instruction* x) {
      auto it = users.find(x);
      if (it == users.end()) return 0;
      std::unordered_set<const Instruction*> s;
      for (auto& u : it->second) s.insert(u.first);
      return static_cast<int>(s.size());
    };
    enum Kind : uint8_t { kNode, kInlined, kFolded, kGhosted };
    std::unordered_map<const Instruction*, Kind> kind;
    for (const Instruction* instr : comp.instructions()) {
      Kind k = kNode;
      bool root = instr == comp.root();
      int nusers = distinct_users(instr);
      if (!root && nusers > 0 && o.inline_small_constants &&
          IsSmallConstant(*instr, o.max_inlined_elements)) {
        k = kInlined;
      } else if (!root && nusers > 0 && o.fold_get_tuple_element &&
                 instr->opcode() == Opcode::kGetTupleElement && instr->operand_count() == 1) {
        k = kFolded;
      } else if (!root && o.ghost_min_users > 0 && nusers >= o.ghost_min_users &&
                 (instr->opcode() == Opcode::kParameter || instr->opcode() == Opcode::kConstant ||
                  instr->opcode() == Opcode::kIota)) {
        k = kGhosted;
      }
      kind[instr] = k;
    }

    std::unordered_map<const Instruction*, int> node_of;
    auto family_of = [](const Instruction& instr) {
      if (instr.opcode() == Opcode::kParameter) {
        int64_t n = instr.shape().IsArray() ? instr.shape().ElementCount() : 0;
        return n >= kLargeParameterElements ? ColorFamily::kDarkOrange : ColorFamily::kOrange;
      }
      if (instr.opcode() == Opcode::kAsyncStart || instr.opcode() == Opcode::kAsyncUpdate ||
          instr.opcode() == Opcode::kAsyncDone) {
        // Async wrappers take the wrapped op's color.
        const Computation* c =
            instr.called_computations().empty() ? nullptr : instr.called_computations()[0];
        if (c && c->root()) return OpcodeColorFamily(c->root()->opcode());
      }
      return OpcodeColorFamily(instr.opcode());
    };

    for (const Instruction* instr : comp.instructions()) {
      if (kind[instr] != kNode) continue;
      // Trivial reducers become part of the label; other called computations make a cluster.
      std::vector<const Computation*> called = DrawnComputations(*instr);
      std::string reducer;
      if (o.trivial_reducers_as_label && !called.empty()) {
        bool all_trivial = true;
        for (const Computation* c : called) {
          std::string name = TrivialReducerName(*c);
          if (name.empty() || (!reducer.empty() && name != reducer)) {
            all_trivial = false;
            break;
          }
          reducer = name;
        }
        if (all_trivial) {
          called.clear();
        } else {
          reducer.clear();
        }
      }
      std::string op_line(OpcodeName(instr->opcode()));
      const InstructionAttrs& attrs = instr->attrs_or_default();
      switch (instr->opcode()) {
        case Opcode::kFusion:
          op_line = StrCat("fusion (", FusionKindName(attrs.fusion_kind), ")");
          break;
        case Opcode::kCompare:
          op_line = StrCat("compare ", DirectionName(attrs.comparison_direction));
          break;
        case Opcode::kCustomCall:
          op_line = Truncate(StrCat("custom-call \"", attrs.custom_call_target, "\""), 64);
          break;
        case Opcode::kParameter:
          op_line = StrCat("parameter ", instr->parameter_number());
          break;
        case Opcode::kGetTupleElement:
          op_line = StrCat("get-tuple-element ", instr->tuple_index());
          break;
        case Opcode::kConstant:
          op_line = ConstantText(*instr);
          break;
        default:
          break;
      }
      if (!reducer.empty()) StrAppend(&op_line, " (", reducer, ")");
      std::vector<std::string> label = {instr->name(), op_line,
                                        ShapeText(instr->shape(), o.max_shape_chars)};
      HloNodeInfo info;
      info.instruction = instr;
      info.family = family_of(*instr);
      int shown_inlined = 0;
      for (int i = 0; i < instr->operand_count(); ++i) {
        const Instruction* op = instr->operand(i);
        if (kind[op] != kInlined) continue;
        info.inlined.push_back(op);
        if (++shown_inlined <= 4) {
          label.push_back(Truncate(StrCat("operand ", i, " = ", ConstantText(*op)), 56));
        } else if (shown_inlined == 5) {
          label.push_back("...");
        }
      }
      std::string key = unique_key(instr->name(), comp);
      auto [w, h] = measure(label);
      int v = g->AddNode(key, w, h);
      LayoutNode& node = g->nodes[v];
      node.label = std::move(label);
      node.style = StyleForFamily(info.family);
      if (instr == comp.root()) node.style.stroke = 0x000000;
      node.tooltip = NodeTooltip(*instr, costs);
      info.path = node_path(key);
      if (!called.empty()) {
        info.role = HloNodeRole::kCluster;
        info.called = called;
        node.expandable = true;
        std::string title = StrCat(instr->name(), ": ");
        for (size_t k = 0; k < called.size(); ++k) {
          StrAppend(&title, k ? ", " : "", called[k]->name());
        }
        node.cluster_title = title;
        bool expand = expand_clusters && (o.expanded.count(info.path) > 0 ||
                                          (o.expand_all && depth < o.max_expand_depth));
        if (expand) {
          node.expanded = true;
          node.child = BuildLevel(instr, called, info.path, depth + 1);
        }
      }
      node.tag = table_->Add(std::move(info));
      node_of[instr] = v;
      if (instr->opcode() == Opcode::kParameter) {
        int pn = static_cast<int>(instr->parameter_number());
        if (pn >= 0) {
          if (static_cast<int>(param_nodes[ci].size()) <= pn) param_nodes[ci].resize(pn + 1, -1);
          param_nodes[ci][pn] = v;
        }
      }
      if (instr == comp.root()) root_nodes[ci] = v;
    }

    // Ghost copies, created on demand per (instruction, user).
    std::unordered_map<const Instruction*, std::unordered_map<const Instruction*, int>> ghosts;
    auto ghost_for = [&](const Instruction* x, const Instruction* user) {
      auto& m = ghosts[x];
      auto it = m.find(user);
      if (it != m.end()) return it->second;
      std::vector<std::string> label = {x->name()};
      if (x->opcode() == Opcode::kParameter) {
        label.push_back(StrCat("parameter ", x->parameter_number()));
      } else if (x->opcode() == Opcode::kConstant) {
        label.push_back(ConstantText(*x));
      } else {
        label.push_back(std::string(OpcodeName(x->opcode())));
      }
      std::string key = unique_key(StrCat(x->name(), "#", user->name()), comp);
      auto [w, h] = measure(label);
      int v = g->AddNode(key, w, h);
      LayoutNode& node = g->nodes[v];
      node.label = std::move(label);
      HloNodeInfo info;
      info.instruction = x;
      info.role = HloNodeRole::kGhost;
      info.family = family_of(*x);
      info.path = node_path(key);
      node.style = StyleForFamily(info.family);
      node.style.dashed = true;
      node.tooltip = NodeTooltip(*x, costs);
      node.tag = table_->Add(std::move(info));
      m[user] = v;
      return v;
    };
    // The node an operand edge starts from, and the label suffix for folded tuple elements.
    std::function<int(const Instruction*, const Instruction*, std::string*)> source =
        [&](const Instruction* x, const Instruction* user, std::string* suffix) -> int {
      switch (kind[x]) {
        case kNode: {
          auto it = node_of.find(x);
          return it == node_of.end() ? -1 : it->second;
        }
        case kInlined:
          return -1;
        case kGhosted:
          return ghost_for(x, user);
        case kFolded:
          // Shape index of the element, outermost tuple first: "{1,0}".
          *suffix =
              suffix->empty() ? StrCat(x->tuple_index()) : StrCat(x->tuple_index(), ",", *suffix);
          return source(x->operand(0), user, suffix);
      }
      return -1;
    };
    for (const Instruction* instr : comp.instructions()) {
      if (kind[instr] != kNode) continue;
      int dst = node_of[instr];
      for (int i = 0; i < instr->operand_count(); ++i) {
        std::string suffix;
        int src = source(instr->operand(i), instr, &suffix);
        if (src < 0) continue;
        int e = g->AddEdge(src, dst, i, EdgeKind::kData);
        std::string label = instr->operand_count() > 1 ? std::to_string(i) : "";
        if (!suffix.empty()) StrAppend(&label, label.empty() ? "" : " ", "{", suffix, "}");
        g->edges[e].label = std::move(label);
      }
      if (o.show_control_edges) {
        for (const Instruction* p : instr->control_predecessors()) {
          std::string suffix;
          int src = source(p, instr, &suffix);
          if (src >= 0 && src != dst) g->AddEdge(src, dst, -1, EdgeKind::kControl);
        }
      }
    }
  }

  // Ports: how the owner's operands enter and its result leaves.
  if (owner != nullptr) {
    auto param = [&](size_t ci, int p) {
      return ci < param_nodes.size() && p < static_cast<int>(param_nodes[ci].size())
                 ? param_nodes[ci][p]
                 : -1;
    };
    switch (owner->opcode()) {
      case Opcode::kWhile:
        for (size_t ci = 0; ci < comps.size(); ++ci) {
          if (param(ci, 0) >= 0) g->inputs.push_back({0, param(ci, 0)});
        }
        break;
      case Opcode::kConditional:
        for (size_t ci = 0; ci < comps.size(); ++ci) {
          if (param(ci, 0) >= 0) g->inputs.push_back({static_cast<int>(ci) + 1, param(ci, 0)});
        }
        break;
      case Opcode::kFusion:
      case Opcode::kCall:
      case Opcode::kAsyncStart:
      case Opcode::kCustomCall:
        if (!comps.empty()) {
          for (int i = 0; i < owner->operand_count(); ++i) {
            if (param(0, i) >= 0) g->inputs.push_back({i, param(0, i)});
          }
        }
        break;
      default:
        break;
    }
    if (!root_nodes.empty() && root_nodes[0] >= 0) g->outputs.push_back(root_nodes[0]);
  }
  return g;
}

absl::StatusOr<std::shared_ptr<const LayoutGraph>> HloGraph::Rewrite(
    const LayoutGraph& level, const std::string& prefix, const std::vector<std::string>& segments,
    size_t index, bool expanded, int depth) const {
  const std::string& key = segments[index];
  int found = -1;
  for (int i = 0; i < level.node_count(); ++i) {
    if (level.nodes[i].key == key) {
      found = i;
      break;
    }
  }
  std::string path = prefix.empty() ? key : StrCat(prefix, "/", key);
  if (found < 0) return absl::NotFoundError(StrCat("no node '", path, "' in the graph"));
  auto copy = std::make_shared<LayoutGraph>(level);
  LayoutNode& node = copy->nodes[found];
  if (index + 1 == segments.size()) {
    if (!node.expandable) {
      return absl::InvalidArgumentError(StrCat("'", path, "' is not a cluster"));
    }
    if (expanded && node.child == nullptr) {
      const HloNodeInfo* inf = info(node.tag);
      if (inf == nullptr || inf->instruction == nullptr) {
        return absl::InternalError(StrCat("no instruction recorded for '", path, "'"));
      }
      node.child = BuildLevel(inf->instruction, inf->called, path, depth + 1);
    }
    node.expanded = expanded;
    return std::shared_ptr<const LayoutGraph>(copy);
  }
  if (!node.expanded || node.child == nullptr) {
    return absl::FailedPreconditionError(StrCat("'", path, "' is not expanded"));
  }
  auto child = Rewrite(*node.child, path, segments, index + 1, expanded, depth + 1);
  if (!child.ok()) return child.status();
  node.child = *std::move(child);
  return std::shared_ptr<const LayoutGraph>(copy);
}

absl::StatusOr<HloGraph> HloGraph::WithExpanded(const std::string& path, bool expanded) const {
  std::vector<std::string> segments;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    segments.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  if (path.empty() || std::any_of(segments.begin(), segments.end(),
                                  [](const std::string& s) { return s.empty(); })) {
    return absl::InvalidArgumentError(StrCat("bad cluster path '", path, "'"));
  }
  HloGraph out = *this;
  if (grouping_) {
    // Leading segments naming boxes; the rest (if any) a cluster inside the last of them.
    const LayoutGraph* level = graph_.get();
    size_t i = 0;
    int box = -1;
    std::string prefix;
    while (i < segments.size()) {
      const LayoutNode* node = nullptr;
      for (const LayoutNode& n : level->nodes) {
        if (n.key == segments[i]) {
          node = &n;
          break;
        }
      }
      const std::string here = prefix.empty() ? segments[i] : StrCat(prefix, "/", segments[i]);
      if (node == nullptr) return absl::NotFoundError(StrCat("no node '", here, "' in the graph"));
      const HloNodeInfo* inf = info(node->tag);
      if (inf == nullptr || inf->role != HloNodeRole::kGroup) break;
      box = inf->group;
      ++i;
      if (i < segments.size() && (!node->expanded || node->child == nullptr)) {
        return absl::FailedPreconditionError(StrCat("'", here, "' is not expanded"));
      }
      prefix = here;
      if (i < segments.size()) level = node->child.get();
    }
    if (i == segments.size()) {
      out.box_expanded_[box] = expanded ? 1 : 0;
    } else {
      int v = -1;
      for (int k = 0; k < flat_->node_count(); ++k) {
        if (flat_->nodes[k].key == segments[i]) {
          v = k;
          break;
        }
      }
      if (v < 0 || grouping_->box_of(v) != box) {
        return absl::NotFoundError(StrCat("no node '", path, "' in the graph"));
      }
      auto top = Rewrite(*flat_, prefix, segments, i, expanded, 0);
      if (!top.ok()) return top.status();
      out.flat_ = *std::move(top);
    }
    out.graph_ = grouping_->Apply(*out.flat_, out.box_expanded_);
  } else {
    auto top = Rewrite(*graph_, "", segments, 0, expanded, 0);
    if (!top.ok()) return top.status();
    out.graph_ = *std::move(top);
    out.flat_ = out.graph_;
  }
  if (expanded) {
    out.options_.expanded.insert(path);
  } else {
    out.options_.expanded.erase(path);
  }
  return out;
}

bool HloGraph::IsExpanded(const std::string& path) const {
  const LayoutGraph* level = graph_.get();
  size_t start = 0;
  while (level != nullptr) {
    size_t slash = path.find('/', start);
    std::string key =
        path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    const LayoutNode* node = nullptr;
    for (const LayoutNode& n : level->nodes) {
      if (n.key == key) {
        node = &n;
        break;
      }
    }
    if (node == nullptr || !node->expanded || node->child == nullptr) return false;
    if (slash == std::string::npos) return true;
    level = node->child.get();
    start = slash + 1;
  }
  return false;
}

}  // namespace hlowb::graph
