// Groups the nodes of one graph level by the scope of their op_name metadata, the way Model
// Explorer shows a model's layers: "jit(train)/encoder/layer_3/attention/dot_general" lies in
// scope jit(train) > encoder > layer_3 > attention. A group is a collapsible box (a cluster node
// of the LayoutGraph) labelled with its scope and node count; expanding it shows its contents in
// place, nested groups collapsed again.
//
// Which boxes a level shows is chosen for reading, not copied from the scope tree:
//  - a scope holding everything (the jit(...) prefix every name shares) is looked through;
//  - a box holding a large share of its level is split into its big sub-scopes, which become
//    boxes of the level beside what is left of it, while the level stays within max_items;
//  - scopes too small for a box of their own leave their nodes loose in the level;
//  - too many loose nodes: those sharing an op_name are boxed together, the rest go into one
//    "other ops" box.
// Nodes without op_name (empty scope and op) join the deepest scope that holds all their users,
// else all their operands; failing both they stay loose at the top. Bad names do not fail:
// empty components ("a//b", "/") are skipped and scopes deeper than max_depth are cut.
//
// Edges between members of different boxes attach to the outermost boxes that separate them;
// parallel edges between the same two drawn nodes merge into one that carries their count (a
// bundle). An expanded box has small port nodes on its top and bottom where edges from outside
// enter (one per outside source) and leave (one per outside destination), so every edge can be
// followed to the member it reaches. The edges of a level do not depend on which boxes are
// expanded, so the layout engine relays an expand or collapse incrementally.
//
// A ScopeGrouping is immutable once built and shared between threads; Apply() makes the nested
// LayoutGraph for a set of expanded boxes. It knows no HLO (the caller passes each node's op_name
// parts) and lays nothing out.
#ifndef HLOWB_VIEWER_GRAPH_SCOPE_GROUPS_H_
#define HLOWB_VIEWER_GRAPH_SCOPE_GROUPS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "viewer/graph/layout_graph.h"

namespace hlowb::graph {

struct ScopeGroupingOptions {
  // Boxes and loose nodes a level aims to show at most (splitting stops before exceeding it).
  int max_items = 40;
  // A box is split into its sub-scopes when it holds more than this share of its level's nodes
  // and more than split_min_nodes nodes.
  double split_share = 0.15;
  int split_min_nodes = 120;
  // Sub-scopes of a split box with fewer nodes than this share of it stay inside what is left.
  double promote_share = 0.02;
  // Scopes with fewer nodes than this get no box of their own at a level.
  int min_box_nodes = 3;
  // More loose nodes than this at the top (inside an expanded box: max_loose_inside) are boxed
  // by op_name, then into "other ops".
  int max_loose = 24;
  int max_loose_inside = 80;
  // Scope components beyond this depth are ignored.
  int max_depth = 32;
};

// Where an op_name puts a node: its scope components (outermost first) and the op's own name.
struct NodeScope {
  std::vector<std::string> scope;
  std::string op;
  bool empty() const { return scope.empty() && op.empty(); }
};

// "jit(f)/enc/layer_3/dot_general" -> scope {jit(f), enc, layer_3}, op "dot_general". Empty
// components are skipped; components beyond `max_depth` are dropped.
NodeScope ParseOpName(std::string_view op_name, int max_depth = 32);

// One box of the grouping.
struct ScopeBox {
  enum class Kind : uint8_t {
    kScope,  // an op_name scope (what is left of it when its big sub-scopes sit beside it)
    kOp,     // loose nodes of one level sharing an op_name
    kOther,  // the remaining loose nodes of a crowded level
  };
  Kind kind = Kind::kScope;
  // Unique among the items of its level; never contains '/'.
  std::string key;
  // kScope: the full scope path ("while/LAMB"); kOp: the op_name; kOther: the level's scope.
  std::string scope;
  // What the box is called in its level: the scope relative to the level's ("LAMB/update"),
  // the op name, or "other ops".
  std::string title;
  // kScope: sub-scopes drawn beside this box instead of inside it (split off).
  int split_off = 0;
  int parent = -1;           // the box containing it; -1 = the top level
  int depth = 0;             // 0 = in the top level
  int size = 0;              // nodes inside, at any depth
  std::vector<int> boxes;    // boxes directly inside, in drawing order
  std::vector<int> members;  // nodes directly inside, in node order
};

class ScopeGrouping {
 public:
  // `scopes` has one entry per node of `level`. The result has no boxes when grouping would
  // show nothing new (no scope, or a single box holding everything that cannot be split).
  static ScopeGrouping Build(const LayoutGraph& level, const std::vector<NodeScope>& scopes,
                             const ScopeGroupingOptions& options = {});

  bool empty() const { return boxes_.empty(); }
  const std::vector<ScopeBox>& boxes() const { return boxes_; }
  // Boxes and loose nodes of the top level, in drawing order.
  const std::vector<int>& top_boxes() const { return top_boxes_; }
  const std::vector<int>& top_members() const { return top_members_; }
  // The box directly holding node `node` of the level; -1 = loose at the top.
  int box_of(int node) const {
    return node >= 0 && node < static_cast<int>(box_of_.size()) ? box_of_[node] : -1;
  }
  // Key path of a box from the top ("@while/@LAMB"), and back (-1 when none).
  std::string BoxPath(int box) const;
  int FindBox(const std::string& path) const;

  // The node each box is drawn as when collapsed (key, label, a size estimate, expandable,
  // cluster_title). The builder of the grouping may restyle and re-measure them before sharing
  // the grouping; Apply() copies them.
  std::vector<LayoutNode> box_nodes;

  // The nested graph of `level` (the same level the grouping was built from, or one differing
  // only in its nodes' contents, e.g. an expanded fusion) with box b expanded where
  // expanded[b] is non-zero (missing entries: collapsed).
  std::shared_ptr<const LayoutGraph> Apply(const LayoutGraph& level,
                                           const std::vector<char>& expanded) const;

 private:
  struct Item {
    enum Kind : uint8_t { kNode, kBox, kIn, kOut };
    Kind kind = kNode;
    int index = 0;  // node, box, or port number
  };
  struct Edge {
    int src = -1;
    int dst = -1;
    int src_port = -1;
    int operand = -1;
    EdgeKind kind = EdgeKind::kData;
    int count = 0;
    int flat_edge = -1;  // the first edge of the level it stands for
  };
  // One level's contents whatever is expanded: level 0 is the top, level b + 1 is box b.
  struct Template {
    std::vector<Item> items;
    std::vector<Edge> edges;
    std::vector<ClusterPort> inputs;
    std::vector<int> outputs;
  };
  friend class ScopeGroupingBuilder;

  std::shared_ptr<LayoutGraph> Instantiate(int level, const LayoutGraph& flat,
                                           const std::vector<char>& expanded) const;

  std::vector<ScopeBox> boxes_;
  std::vector<int> top_boxes_;
  std::vector<int> top_members_;
  std::vector<int> box_of_;
  std::vector<Template> levels_;
};

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_SCOPE_GROUPS_H_
