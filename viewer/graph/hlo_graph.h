// Turns an HLO computation into the layout engine's LayoutGraph, the way XLA's graph dumper
// draws it and with the simplifications large graphs need:
//  - node labels: name, opcode (with fusion kind, comparison direction, custom-call target,
//    trivial reducer such as "reduce (add)"), shape; colors by opcode family (XLA's palette);
//  - operand-index edge labels, dotted control edges;
//  - small constants drawn inside their users instead of as nodes;
//  - optional get-tuple-element folding (the edge goes from the tuple to the user, labelled
//    with the element's shape index, e.g. "0 {1}" for operand 0 = element 1);
//  - ghost copies: a parameter or constant with many users is drawn as a small copy beside
//    each user instead of one node with hundreds of long edges (all copies share the
//    instruction, so a view highlights them together);
//  - fusions, while loops, conditionals, calls and other instructions with called computations
//    are clusters: collapsed boxes that can be expanded in place, nested to any depth;
//  - optionally, a large top level grouped by op_name scope (scope_groups.h): boxes named after
//    the scopes, collapsed at first, expanded in place like clusters. Paths then start with the
//    boxes' keys ("@encoder/@layer_3/fusion.2"). Called computations expanded in place are not
//    grouped: shown on their own they are.
//
// HloGraph is an immutable value: expanding or collapsing returns a new HloGraph that shares
// every unchanged level with the old one, so a layout running on a worker thread can keep
// using the old graph. It references the Module, which must outlive it.
//
// What this does not do: lay anything out (LayeredLayout does), measure text with real fonts
// (pass HloGraphOptions::measure), or look at more than one computation's call tree.
#ifndef HLOWB_VIEWER_GRAPH_HLO_GRAPH_H_
#define HLOWB_VIEWER_GRAPH_HLO_GRAPH_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "viewer/graph/layout_graph.h"
#include "viewer/graph/scope_groups.h"

namespace hlowb::graph {

// XLA's node color families (hlo_graph_dumper's schemes).
enum class ColorFamily : uint8_t {
  kWhite,       // elementwise, tuple, get-tuple-element, constant, pad
  kYellow,      // broadcast, dynamic-update-slice
  kGreen,       // data movement: reshape, transpose, concatenate, slice, copy, ...
  kDarkBlue,    // dot, convolution, fft, triangular-solve, cholesky
  kPurple,      // reduce, reduce-window, scatter, gather, select-and-scatter, batch-norm
  kGray,        // fusion, map, domain, get/set-dimension-size
  kBrown,       // collectives, send/recv, infeed/outfeed, replica/partition id
  kDarkGreen,   // call, conditional, custom-call, while
  kOrange,      // small parameters
  kDarkOrange,  // large parameters (>= 4096 elements)
};

ColorFamily OpcodeColorFamily(Opcode op);
NodeStyle StyleForFamily(ColorFamily family);

// Box size (width, height in points) for label lines; the first line is the bold title.
using TextMeasureFn = std::function<std::pair<double, double>(const std::vector<std::string>&)>;
// A monospace estimate for 10 pt text; the Qt view passes QFontMetricsF-based measuring.
std::pair<double, double> EstimateTextSize(const std::vector<std::string>& lines);

// What the builder simplifies and how it measures labels. Layout settings live in
// LayoutOptions.
struct HloGraphOptions {
  bool inline_small_constants = true;
  int64_t max_inlined_elements = 8;
  bool fold_get_tuple_element = false;
  // Parameters, constants and iotas with at least this many users get one ghost per user;
  // 0 disables ghosts.
  int ghost_min_users = 8;
  bool show_control_edges = true;
  bool trivial_reducers_as_label = true;
  int max_shape_chars = 64;
  TextMeasureFn measure;
  // Clusters to expand, as paths of instruction names from the top computation:
  // "fusion.3", "while.1/fusion.2". expand_all expands every cluster up to max_expand_depth.
  std::set<std::string> expanded;
  bool expand_all = false;
  int max_expand_depth = 8;
  // A top level with more nodes than this is grouped by op_name scope into collapsed boxes;
  // 0 = never. Not with expand_all (which asks for everything drawn).
  int group_min_nodes = 0;
  ScopeGroupingOptions grouping;
};

// Views group a computation by op_name scope above this many nodes, and lay a grouped graph out
// at most this many times as wide as it is tall (LayoutOptions::max_aspect).
constexpr int kDefaultGroupMinNodes = 300;
constexpr double kGroupedMaxAspect = 2.0;

// kRemoved: a node a view adds for an instruction that another state had and this one does
// not (a diff's ghost); it stands for no instruction of the computation. kGroup: an op_name
// scope box (no instruction). kPort: where edges enter or leave an expanded group (no
// instruction, no HloNodeInfo; LayoutNode::tag is kPortNodeTag).
enum class HloNodeRole : uint8_t { kInstruction, kGhost, kCluster, kRemoved, kGroup, kPort };

// LayoutNode::tag of kRemoved nodes (they have no HloNodeInfo).
constexpr int64_t kRemovedNodeTag = -2;

// What a LayoutNode stands for; found through LayoutNode::tag.
struct HloNodeInfo {
  const Instruction* instruction = nullptr;
  HloNodeRole role = HloNodeRole::kInstruction;
  ColorFamily family = ColorFamily::kWhite;
  // "while.1/fusion.2": the cluster path of the level plus the node key.
  std::string path;
  // For clusters: the computations shown when expanded.
  std::vector<const Computation*> called;
  // Instructions drawn inside this node's label (inlined constants).
  std::vector<const Instruction*> inlined;
  // kGroup: the box's index in HloGraph::grouping().
  int group = -1;
};

// The LayoutGraph of one computation plus what each node stands for (see the top of this
// file). Immutable; expand/collapse returns a new value that shares unchanged levels.
class HloGraph {
 public:
  static absl::StatusOr<HloGraph> Build(const Computation& computation,
                                        const HloGraphOptions& options = {});

  // The top level; shared and immutable.
  const std::shared_ptr<const LayoutGraph>& graph() const { return graph_; }
  const Computation* computation() const { return computation_; }
  const HloGraphOptions& options() const { return options_; }

  // nullptr for an unknown tag.
  const HloNodeInfo* info(int64_t tag) const;
  const HloNodeInfo* info(const LayoutNode& node) const { return info(node.tag); }

  // A copy with the cluster at `path` expanded or collapsed (levels off the path are shared).
  absl::StatusOr<HloGraph> WithExpanded(const std::string& path, bool expanded) const;
  // Whether `path` names an expanded cluster.
  bool IsExpanded(const std::string& path) const;

  // Nodes (tags) showing `instruction` in any level, e.g. all ghost copies.
  std::vector<int64_t> TagsFor(const Instruction* instruction) const;

  // The op_name scope grouping of the top level; null when it is not grouped.
  const ScopeGrouping* grouping() const { return grouping_.get(); }
  // The top level without the grouping (the same as graph() when not grouped).
  const std::shared_ptr<const LayoutGraph>& ungrouped() const { return flat_; }
  // Key path of the box holding the top-level node that draws `instruction` (its own node,
  // else a ghost copy, else the node it is drawn inside): "@while/@LAMB". Empty when that node
  // is loose at the top, there is none, or the graph is not grouped.
  std::string GroupPathOf(const Instruction* instruction) const;
  // Whether that box or one around it is collapsed.
  bool HiddenInGroup(const Instruction* instruction) const;
  // A copy with every box around `instruction`'s node expanded.
  HloGraph WithGroupsOpenedFor(const Instruction* instruction) const;

 private:
  struct InfoTable {
    std::mutex mu;
    std::deque<HloNodeInfo> infos;
    int64_t Add(HloNodeInfo info);
  };

  HloGraph() = default;
  std::shared_ptr<const LayoutGraph> BuildLevel(const Instruction* owner,
                                                const std::vector<const Computation*>& comps,
                                                const std::string& path, int depth,
                                                bool expand_clusters = true) const;
  // Groups the top level (flat_) by op_name scope when that shows something.
  void Group();
  // The top-level node of flat_ drawing `instruction`; -1 when none.
  int TopNodeOf(const Instruction* instruction) const;
  absl::StatusOr<std::shared_ptr<const LayoutGraph>> Rewrite(
      const LayoutGraph& level, const std::string& prefix, const std::vector<std::string>& segments,
      size_t index, bool expanded, int depth) const;

  const Computation* computation_ = nullptr;
  HloGraphOptions options_;
  std::shared_ptr<InfoTable> table_;
  // What is shown: flat_ itself, or flat_ grouped with the boxes of box_expanded_ expanded.
  std::shared_ptr<const LayoutGraph> graph_;
  std::shared_ptr<const LayoutGraph> flat_;
  std::shared_ptr<const ScopeGrouping> grouping_;
  std::vector<char> box_expanded_;
};

// "add" when `comp` is a two-parameter scalar computation whose root combines the two
// parameters with one elementwise binary op (add, multiply, maximum, minimum, and, or, xor);
// empty otherwise.
std::string TrivialReducerName(const Computation& comp);

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_HLO_GRAPH_H_
