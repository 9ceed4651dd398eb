// The layout engine's plain-data input and output, with no Qt and no HLO types.
//
// Input: a LayoutGraph is one level of a nested graph (one computation). Its nodes carry a box
// size (measured from their label by whoever builds the graph), display attributes that the
// engine ignores but exporters and views use, and optionally a cluster: a called computation
// that is drawn collapsed (an ordinary box) or expanded (its own LayoutGraph, laid out on its
// own and placed inside the node's box). Edges carry the operand index they feed (the port on
// the destination's top edge) and a kind (data or control). A level names which of its nodes
// are the entry ports (operand i enters at parameter i) and exit ports (ROOT) so that edges of
// the parent can end on the right node when the cluster is expanded.
//
// Output: a LayoutResult per level: a box per node (centre, size, layer, order), a polyline
// and smooth Bezier control points per edge, and for expanded clusters the child level's result
// in its own coordinates plus the offset that places it inside the box. Flatten() turns the
// nested result into absolute coordinates; MeasureLayout() computes the quality metrics of
// ../shared/docs/large-graph-layout.md section 3.3 on any flat layout (ours or Graphviz's).
//
// Coordinates are points (1/72 inch), x to the right, y downwards, origin at the top left.
//
// What this file does not do: it does not lay anything out (layered_layout.h does), know about
// HLO (hlo_graph.h builds LayoutGraphs from computations) or measure text.
#ifndef HLOWB_VIEWER_GRAPH_LAYOUT_GRAPH_H_
#define HLOWB_VIEWER_GRAPH_LAYOUT_GRAPH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace hlowb::graph {

// A position in points, y down.
struct Point {
  double x = 0;
  double y = 0;
  bool operator==(const Point&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Input
// ---------------------------------------------------------------------------------------------

enum class NodeShape : uint8_t { kBox, kRoundedBox, kEllipse };

// How a node is drawn. Colors are 0xRRGGBB. The engine ignores all of this; exporters and
// views use it.
struct NodeStyle {
  uint32_t fill = 0xFFFFFF;
  uint32_t stroke = 0x000000;
  uint32_t text = 0x000000;
  NodeShape shape = NodeShape::kRoundedBox;
  bool dashed = false;
  bool bold_title = true;
};

class LayoutGraph;

// One box of a level: size, display text and style, and optionally a called computation
// (cluster). Carries no position.
struct LayoutNode {
  // Unique within its level and stable across rebuilds of the same graph (an instruction name,
  // "name#ghost3", ...). Incremental relayout matches nodes by key.
  std::string key;
  // Box size when drawn as an ordinary node (for clusters: when collapsed).
  double width = 0;
  double height = 0;
  // Display text, first line is the title. Ignored by the engine.
  std::vector<std::string> label;
  std::string tooltip;
  NodeStyle style;
  // Caller's handle (hlo_graph uses it to find the instruction); -1 = none.
  int64_t tag = -1;
  // Cluster: the node stands for a called computation and can be expanded.
  bool expandable = false;
  bool expanded = false;
  // Contents of an expanded cluster (required when `expanded`). Shared and immutable, so one
  // computation's graph can be used by several call sites and by a worker thread at once.
  std::shared_ptr<const LayoutGraph> child;
  // Title shown on the expanded cluster's frame.
  std::string cluster_title;
};

enum class EdgeKind : uint8_t { kData, kControl };

// A directed edge between two nodes of the same level (an operand or a control dependency).
// Edges never cross levels: a cluster's contents are reached through its ports.
struct LayoutEdge {
  int src = -1;
  int dst = -1;
  // Operand index at the destination (selects the port on its top edge); -1 = centre.
  int operand = -1;
  EdgeKind kind = EdgeKind::kData;
  // Drawn near the head (XLA shows the operand index there). Ignored by the engine.
  std::string label;
  // When the source is an expanded cluster: which of its contents' `outputs` the edge leaves
  // from; -1 = the first (a called computation's ROOT).
  int src_port = -1;
  // How many edges of the underlying graph this one stands for (a bundle of parallel edges
  // between two collapsed groups); views draw bundles thicker. Ignored by the engine.
  int count = 1;
};

// Where operand `operand` of an expanded cluster enters its contents (the parameter node).
struct ClusterPort {
  int operand = 0;
  int node = -1;
};

// Tag of the small port nodes inside an expanded group's contents where edges from outside
// enter or leave (see scope_groups.h); they stand for no instruction.
constexpr int64_t kPortNodeTag = -3;

// One level of a nested graph. A plain value: build it, then hand a shared_ptr<const> to the
// engine. It holds no positions and no layout state.
class LayoutGraph {
 public:
  std::string name;
  std::vector<LayoutNode> nodes;
  std::vector<LayoutEdge> edges;
  // For a graph used as cluster contents: entry and exit ports (may be empty). An edge of the
  // parent into the cluster enters at the input whose operand is the edge's operand; an edge
  // out of it leaves from outputs[src_port] (outputs[0] by default). Outputs without users
  // inside are drawn on the bottom layer.
  std::vector<ClusterPort> inputs;
  std::vector<int> outputs;

  // The node of these contents an edge with `src_port` leaves from; -1 when there is none.
  int OutputNode(int src_port) const;

  int AddNode(std::string key, double width, double height);
  int AddEdge(int src, int dst, int operand = -1, EdgeKind kind = EdgeKind::kData);

  int node_count() const { return static_cast<int>(nodes.size()); }
  int edge_count() const { return static_cast<int>(edges.size()); }
  // Total nodes including expanded children, recursively.
  int64_t TotalNodeCount() const;

  // Checks indices, sizes, unique keys and that every expanded node has a child.
  absl::Status Validate() const;

  // Hash of everything the layout depends on: keys, sizes, edges, ports, expansion state and
  // expanded children (recursively). Labels and styles are not included.
  uint64_t Fingerprint() const;
  // Hash of keys and edges only (what stays equal when a cluster is expanded or collapsed).
  uint64_t StructureFingerprint() const;
};

// ---------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------

// Where a node ended up: its box, layer and order. Output only.
struct NodeBox {
  // Centre and size of the box. For an expanded cluster this is the cluster frame.
  double x = 0;
  double y = 0;
  double width = 0;
  double height = 0;
  // First layer and number of layers the node occupies (expanded clusters span several).
  int layer = -1;
  int layer_span = 1;
  // Position within its layer (0 = leftmost), counting dummy slots.
  int order = -1;
  // Expanded clusters: where the child result's origin lies in this level's coordinates.
  Point content_origin;

  double left() const { return x - width / 2; }
  double right() const { return x + width / 2; }
  double top() const { return y - height / 2; }
  double bottom() const { return y + height / 2; }
};

// How an edge is drawn: a polyline and the same path as Bezier control points. Output only.
struct EdgeRoute {
  // Polyline from the tail's port to the head's port through the dummy slots.
  std::vector<Point> points;
  // The same path as a smooth curve: cubic Bezier control points, 3k+1 of them, y monotone.
  std::vector<Point> bezier;
  // The edge was reversed to break a cycle; points still run tail -> head.
  bool reversed = false;
};

// Diagnostics of one level's layout (sizes, phase times, whether a cap was hit). Not used by
// the engine itself and not part of any cache key.
struct LayoutStats {
  int nodes = 0;
  int edges = 0;
  int layers = 0;
  int64_t dummies = 0;
  int64_t proper_edges = 0;
  int64_t crossings = 0;  // on the proper graph (shared dummy segments once)
  int64_t ns_pivots = 0;
  bool ns_optimal = false;
  bool layering_fallback = false;  // network simplex skipped or cut before its tree was built
  int sweeps = 0;
  bool ordering_limited = false;  // stopped by the work or time limit, not convergence
  bool deadline_hit = false;      // a wall-clock cap fired (result may differ run to run)
  bool incremental = false;
  bool cache_hit = false;
  int components = 0;
  double ms_layering = 0;
  double ms_ordering = 0;
  double ms_coordinates = 0;
  double ms_routing = 0;
  double ms_total = 0;
};

// Layout of one level; children hold the layouts of expanded clusters, indexed by node.
struct LayoutResult {
  std::vector<NodeBox> nodes;
  std::vector<EdgeRoute> edges;
  std::vector<std::shared_ptr<const LayoutResult>> children;
  double width = 0;
  double height = 0;
  int layer_count = 0;
  // An early picture published while the engine is still refining.
  bool partial = false;
  LayoutStats stats;
};

// ---------------------------------------------------------------------------------------------
// Flat view and metrics
// ---------------------------------------------------------------------------------------------

// A node of a flattened nested layout, in absolute coordinates (for metrics and exporters).
struct FlatNode {
  std::string path;  // keys from the top level joined by '/'
  double x = 0, y = 0, width = 0, height = 0;
  bool cluster_frame = false;  // an expanded cluster's frame, not a drawn node
  int depth = 0;
};

// An edge of a flattened nested layout with its drawn curve in absolute coordinates.
struct FlatEdge {
  int src = -1;  // indices into FlatLayout::nodes (the drawn endpoints)
  int dst = -1;
  // The drawn curve: Bezier control points when `is_bezier`, else a polyline.
  std::vector<Point> curve;
  bool is_bezier = false;
};

// A whole nested layout in absolute coordinates; built by Flatten(), read by MeasureLayout().
struct FlatLayout {
  std::vector<FlatNode> nodes;
  std::vector<FlatEdge> edges;
  double width = 0;
  double height = 0;
};

// Absolute coordinates for every node and edge of a nested layout. Edges into or out of an
// expanded cluster are attributed to the cluster frame.
FlatLayout Flatten(const LayoutGraph& graph, const LayoutResult& result);

// Quality metrics per large-graph-layout.md section 3.3, computed from drawn geometry so that
// layouts from different engines compare: ranks are the distinct node-centre y values; every
// edge is cut at each rank level it spans; crossings are order inversions of segments between
// consecutive ranks (shared endpoints excluded, identical segments counted once).
struct LayoutMetrics {
  int64_t crossings = 0;
  double edge_length = 0;  // sum of rank-to-rank segment lengths, shared segments once
  int64_t bends = 0;       // slope changes at intermediate rank levels
  int64_t rank_span = 0;   // sum over edges of rank(head) - rank(tail)
  int ranks = 0;
  double width = 0;
  double height = 0;
  double area() const { return width * height; }
};
LayoutMetrics MeasureLayout(const FlatLayout& layout);

// Points along a curve (Bezier control points or polyline), flattened to a polyline.
std::vector<Point> FlattenCurve(const std::vector<Point>& curve, bool is_bezier,
                                int steps_per_segment = 8);

// Smooth monotone-in-y cubic Bezier through a polyline (vertical tangents at the vertices).
std::vector<Point> SmoothPolyline(const std::vector<Point>& points);

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_LAYOUT_GRAPH_H_
