// Graphviz as an exporter and as a reference engine: DOT text for any LayoutGraph (expanded
// clusters become `subgraph cluster_*`), and a "Graphviz layout" / SVG rendering produced by
// libgvc's dot engine in a forked child process with a deadline.
//
// Why a child process: gvLayout cannot be interrupted and takes minutes on large HLO graphs
// (large-graph-layout.md section 2), libgvc is not thread-safe, and a crash inside it must not
// take the caller down. The parent writes nothing to Graphviz; the child builds the graph from
// DOT text, lays it out, and streams positions (or SVG bytes) back through a pipe. On timeout
// or cancel the child is killed. Calls are serialized process-wide.
//
// What this does not do: it is not the interactive engine (layered_layout.h is), it does not
// draw, and it does not fall back to the `dot` binary.
#ifndef HLOWB_VIEWER_GRAPH_GRAPHVIZ_LAYOUT_H_
#define HLOWB_VIEWER_GRAPH_GRAPHVIZ_LAYOUT_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/support/cancel.h"
#include "viewer/graph/layout_graph.h"

namespace hlowb::graph {

// How a LayoutGraph is written as DOT (spacing, sizes, splines, extra attributes).
struct DotOptions {
  // Separations in points (converted to inches for Graphviz).
  double node_sep = 18;
  double rank_sep = 36;
  // Use the LayoutGraph's box sizes (fixedsize) so both engines place the same boxes.
  bool fixed_size = true;
  bool labels = true;
  // "spline", "polyline", "line", "ortho".
  std::string splines = "spline";
  // Extra graph attributes, e.g. "nslimit=1; mclimit=0.1;".
  std::string extra_graph_attributes;
  std::string font_name = "Helvetica";
  double font_size = 10;
};

// DOT text for `graph` and its expanded clusters (collapsed clusters are ordinary nodes).
// Node ids are "n<level>_<index>", edge ids "e<level>_<index>"; levels are numbered in
// depth-first order with the top level 0.
std::string ExportDot(const LayoutGraph& graph, const DotOptions& options = {});

// Limits for running Graphviz in a child process: timeout, size cap, cancel.
struct GraphvizOptions {
  DotOptions dot;
  double timeout_seconds = 30;
  // Refuse graphs above this many nodes (counting expanded contents); 0 = no limit.
  int64_t max_nodes = 5000;
  const CancelToken* cancel = nullptr;
};

// Lays `graph` out with Graphviz dot in a child process. The result has the same shape as the
// layered engine's (nested for expanded clusters; layer/order are -1). DeadlineExceeded on
// timeout, Cancelled on cancel, ResourceExhausted above max_nodes.
absl::StatusOr<std::shared_ptr<const LayoutResult>> GraphvizLayout(
    const LayoutGraph& graph, const GraphvizOptions& options = {});

// SVG of `graph` as Graphviz dot draws it, rendered in a child process with the same limits.
absl::StatusOr<std::string> RenderSvg(const LayoutGraph& graph,
                                      const GraphvizOptions& options = {});

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_GRAPHVIZ_LAYOUT_H_
