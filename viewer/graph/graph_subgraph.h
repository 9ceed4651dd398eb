// Views of part of a graph level for the graph view: the neighborhood of some nodes (BFS over
// edges in both directions, like XLA's interactive_graphviz and XProf) and the nodes on all
// paths between two node sets, plus the induced sub-LayoutGraph the layout engine then lays out.
//
// Plain functions over one LayoutGraph level (no Qt, no HLO): the caller maps instructions to
// node indices and back through the node keys and tags, which the subgraph keeps. Expanded
// clusters stay expanded (their children are shared, not copied).
#ifndef HLOWB_VIEWER_GRAPH_GRAPH_SUBGRAPH_H_
#define HLOWB_VIEWER_GRAPH_GRAPH_SUBGRAPH_H_

#include <memory>
#include <vector>

#include "viewer/graph/layout_graph.h"

namespace hlowb::viewer {

// Nodes within `radius` edges (either direction) of `centers`, in BFS order, at most
// `max_nodes` of them (the centers always). A node other than a center with more than
// `hub_users` out-edges does not lead on to its users (XLA omits the users of such nodes), so
// a shared parameter does not pull half of the graph in.
std::vector<int> NeighborhoodNodes(const graph::LayoutGraph& g, const std::vector<int>& centers,
                                   int radius, int max_nodes, int hub_users = 16);

// Nodes lying on a directed path from a node of `from` to a node of `to`, or from `to` to
// `from`, sorted. Empty when there is no path either way.
std::vector<int> AllPathsNodes(const graph::LayoutGraph& g, const std::vector<int>& from,
                               const std::vector<int>& to);

// The level restricted to `nodes` (any order, duplicates ignored; kept in level order) with the
// edges between them. When `mark_boundary`, nodes that lost an edge get a dashed border (XLA's
// "some operands or users omitted").
std::shared_ptr<graph::LayoutGraph> InducedSubgraph(const graph::LayoutGraph& g,
                                                    const std::vector<int>& nodes,
                                                    bool mark_boundary);

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_GRAPH_GRAPH_SUBGRAPH_H_
