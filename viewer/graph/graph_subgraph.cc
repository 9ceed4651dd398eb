#include "viewer/graph/graph_subgraph.h"

#include <algorithm>
#include <deque>

namespace hlowb::viewer {

using graph::LayoutEdge;
using graph::LayoutGraph;

namespace {

struct Adjacency {
  std::vector<std::vector<int>> out, in;
  explicit Adjacency(const LayoutGraph& g) : out(g.nodes.size()), in(g.nodes.size()) {
    for (const LayoutEdge& e : g.edges) {
      if (e.src < 0 || e.dst < 0 || e.src == e.dst) continue;
      out[e.src].push_back(e.dst);
      in[e.dst].push_back(e.src);
    }
  }
};

std::vector<char> Reach(const std::vector<std::vector<int>>& adj, const std::vector<int>& start) {
  std::vector<char> seen(adj.size(), 0);
  std::vector<int> stack;
  for (int s : start) {
    if (s >= 0 && s < static_cast<int>(adj.size()) && !seen[s]) {
      seen[s] = 1;
      stack.push_back(s);
    }
  }
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    for (int w : adj[v]) {
      if (!seen[w]) {
        seen[w] = 1;
        stack.push_back(w);
      }
    }
  }
  return seen;
}

}  // namespace

std::vector<int> NeighborhoodNodes(const LayoutGraph& g, const std::vector<int>& centers,
                                   int radius, int max_nodes, int hub_users) {
  const int n = g.node_count();
  Adjacency adj(g);
  std::vector<int> dist(n, -1);
  std::vector<char> is_center(n, 0);
  std::vector<int> order;
  std::deque<int> queue;
  for (int c : centers) {
    if (c < 0 || c >= n || dist[c] >= 0) continue;
    dist[c] = 0;
    is_center[c] = 1;
    order.push_back(c);
    queue.push_back(c);
  }
  while (!queue.empty()) {
    int v = queue.front();
    queue.pop_front();
    if (dist[v] >= radius) continue;
    auto visit = [&](int w) {
      if (dist[w] >= 0 || static_cast<int>(order.size()) >= max_nodes) return;
      dist[w] = dist[v] + 1;
      order.push_back(w);
      queue.push_back(w);
    };
    // Operands first: what feeds the node is usually what one wants to see.
    for (int w : adj.in[v]) visit(w);
    bool hub = !is_center[v] && hub_users > 0 && static_cast<int>(adj.out[v].size()) > hub_users;
    if (!hub) {
      for (int w : adj.out[v]) visit(w);
    }
    if (static_cast<int>(order.size()) >= max_nodes) break;
  }
  return order;
}

std::vector<int> AllPathsNodes(const LayoutGraph& g, const std::vector<int>& from,
                               const std::vector<int>& to) {
  Adjacency adj(g);
  std::vector<char> f_down = Reach(adj.out, from), t_up = Reach(adj.in, to);
  std::vector<char> t_down = Reach(adj.out, to), f_up = Reach(adj.in, from);
  std::vector<int> out;
  bool forward = false, backward = false;
  for (int t : to) forward |= t >= 0 && t < g.node_count() && f_down[t];
  for (int f : from) backward |= f >= 0 && f < g.node_count() && t_down[f];
  for (int v = 0; v < g.node_count(); ++v) {
    if ((forward && f_down[v] && t_up[v]) || (backward && t_down[v] && f_up[v])) out.push_back(v);
  }
  return out;
}

std::shared_ptr<LayoutGraph> InducedSubgraph(const LayoutGraph& g, const std::vector<int>& nodes,
                                             bool mark_boundary) {
  std::vector<int> map(g.nodes.size(), -1);
  std::vector<int> kept;
  for (int v : nodes) {
    if (v >= 0 && v < g.node_count() && map[v] == -1) {
      map[v] = 0;
      kept.push_back(v);
    }
  }
  std::sort(kept.begin(), kept.end());
  auto sub = std::make_shared<LayoutGraph>();
  sub->name = g.name;
  sub->nodes.reserve(kept.size());
  for (int v : kept) {
    map[v] = static_cast<int>(sub->nodes.size());
    sub->nodes.push_back(g.nodes[v]);
  }
  for (const LayoutEdge& e : g.edges) {
    if (e.src < 0 || e.dst < 0) continue;
    int s = map[e.src], d = map[e.dst];
    if (s >= 0 && d >= 0) {
      LayoutEdge copy = e;
      copy.src = s;
      copy.dst = d;
      sub->edges.push_back(std::move(copy));
    } else if (mark_boundary) {
      if (s >= 0) sub->nodes[s].style.dashed = true;
      if (d >= 0) sub->nodes[d].style.dashed = true;
    }
  }
  // Ports only matter for cluster contents; keep those whose nodes survived.
  for (const graph::ClusterPort& p : g.inputs) {
    if (p.node >= 0 && map[p.node] >= 0) sub->inputs.push_back({p.operand, map[p.node]});
  }
  for (int o : g.outputs) {
    if (o >= 0 && map[o] >= 0) sub->outputs.push_back(map[o]);
  }
  return sub;
}

}  // namespace hlowb::viewer
