// Tests for viewer/graph: the layered layout engine (layering, ordering, coordinates, routing,
// clusters, incremental expansion, cancel, determinism), the HLO graph builder, the worker
// job and the Graphviz exporter. Small graphs have known answers; larger random graphs check
// invariants (no overlaps, edges point down, layers are rows).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "viewer/graph/graphviz_layout.h"
#include "viewer/graph/hlo_graph.h"
#include "viewer/graph/layered_layout.h"
#include "viewer/graph/layout_graph.h"
#include "viewer/graph/layout_job.h"

namespace hlowb::graph {
namespace {

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

LayoutGraph Chain(int n) {
  LayoutGraph g;
  for (int i = 0; i < n; ++i) g.AddNode("c" + std::to_string(i), 60, 30);
  for (int i = 0; i + 1 < n; ++i) g.AddEdge(i, i + 1, 0);
  return g;
}

// Random HLO-shaped DAG: nodes in input (topological) order, 1-3 operands from recent nodes,
// a few parameters and long edges.
LayoutGraph RandomDag(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  LayoutGraph g;
  for (int i = 0; i < n; ++i) {
    int w = 40 + static_cast<int>(rng() % 100);
    int h = 20 + static_cast<int>(rng() % 3) * 13;
    g.AddNode("v" + std::to_string(i), w, h);
    if (i == 0 || rng() % 100 < 6) continue;
    int k = 1 + static_cast<int>(rng() % 3);
    for (int j = 0; j < k; ++j) {
      int back = rng() % 100 < 5 ? 1 + static_cast<int>(rng() % std::max(1, i))
                                 : 1 + static_cast<int>(rng() % std::min(i, 12));
      g.AddEdge(i - back, i, j);
    }
  }
  return g;
}

std::shared_ptr<const LayoutResult> MustLayout(const LayoutGraph& g, const LayoutOptions& o = {}) {
  auto r = LayoutOnce(g, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : std::make_shared<LayoutResult>();
}

bool BoxesOverlap(const NodeBox& a, const NodeBox& b) {
  double eps = 1e-6;
  return a.left() < b.right() - eps && b.left() < a.right() - eps && a.top() < b.bottom() - eps &&
         b.top() < a.bottom() - eps;
}

// Every pair of boxes of one level is disjoint.
void ExpectNoOverlaps(const LayoutResult& r) {
  std::vector<int> idx(r.nodes.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int>(i);
  std::sort(idx.begin(), idx.end(),
            [&r](int a, int b) { return r.nodes[a].left() < r.nodes[b].left(); });
  // Sweep in x: only boxes whose x ranges intersect need the full test.
  int overlaps = 0;
  for (size_t i = 0; i < idx.size(); ++i) {
    for (size_t j = i + 1; j < idx.size(); ++j) {
      if (r.nodes[idx[j]].left() >= r.nodes[idx[i]].right()) break;
      if (BoxesOverlap(r.nodes[idx[i]], r.nodes[idx[j]])) ++overlaps;
    }
  }
  EXPECT_EQ(overlaps, 0);
}

// Edges of an acyclic graph go to a later layer; routes start at the tail's bottom edge and
// end at the head's top edge and never go up.
void ExpectEdgesPointDown(const LayoutGraph& g, const LayoutResult& r) {
  for (int e = 0; e < g.edge_count(); ++e) {
    const LayoutEdge& le = g.edges[e];
    const NodeBox& s = r.nodes[le.src];
    const NodeBox& t = r.nodes[le.dst];
    ASSERT_LT(s.layer + s.layer_span - 1, t.layer) << "edge " << e;
    const auto& pts = r.edges[e].points;
    ASSERT_GE(pts.size(), 2u);
    if (!g.nodes[le.src].expanded) {
      EXPECT_NEAR(pts.front().y, s.bottom(), 1e-6);
    }
    if (!g.nodes[le.dst].expanded) {
      EXPECT_NEAR(pts.back().y, t.top(), 1e-6);
    }
    for (size_t k = 1; k < pts.size(); ++k) EXPECT_GE(pts[k].y, pts[k - 1].y - 1e-6);
    EXPECT_EQ(r.edges[e].bezier.size(), 3 * (pts.size() - 1) + 1);
  }
}

// Nodes of a layer share a centre y; layers are ordered top to bottom and do not overlap.
void ExpectLayersAreRows(const LayoutResult& r) {
  std::map<int, std::vector<const NodeBox*>> by_layer;
  for (const NodeBox& b : r.nodes) {
    if (b.layer_span == 1) by_layer[b.layer].push_back(&b);
  }
  double prev_bottom = -1e9;
  for (auto& [layer, boxes] : by_layer) {
    double top = 1e18, bottom = -1e18;
    for (const NodeBox* b : boxes) {
      EXPECT_NEAR(b->y, boxes[0]->y, 1e-6) << "layer " << layer;
      top = std::min(top, b->top());
      bottom = std::max(bottom, b->bottom());
    }
    EXPECT_GT(top, prev_bottom) << "layer " << layer;
    prev_bottom = bottom;
    // Order within the layer follows x.
    std::vector<const NodeBox*> sorted = boxes;
    std::sort(sorted.begin(), sorted.end(), [](auto* a, auto* b) { return a->order < b->order; });
    for (size_t i = 1; i < sorted.size(); ++i) EXPECT_LT(sorted[i - 1]->x, sorted[i]->x);
  }
}

int64_t SumSpans(const LayoutGraph& g, const LayoutResult& r) {
  int64_t s = 0;
  for (const LayoutEdge& e : g.edges) s += r.nodes[e.dst].layer - r.nodes[e.src].layer;
  return s;
}

int Find(const LayoutGraph& g, const std::string& key) {
  for (int i = 0; i < g.node_count(); ++i) {
    if (g.nodes[i].key == key) return i;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Layering
// ---------------------------------------------------------------------------------------------

TEST(LayeredLayout, EmptyAndSingleNode) {
  LayoutGraph empty;
  auto r = MustLayout(empty);
  EXPECT_TRUE(r->nodes.empty());
  LayoutGraph one;
  one.AddNode("a", 50, 20);
  r = MustLayout(one);
  ASSERT_EQ(r->nodes.size(), 1u);
  EXPECT_EQ(r->nodes[0].layer, 0);
  EXPECT_DOUBLE_EQ(r->nodes[0].left(), 0);
  EXPECT_DOUBLE_EQ(r->nodes[0].top(), 0);
}

TEST(LayeredLayout, ChainIsOneStraightColumn) {
  LayoutGraph g = Chain(6);
  auto r = MustLayout(g);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(r->nodes[i].layer, i);
    EXPECT_DOUBLE_EQ(r->nodes[i].x, r->nodes[0].x);
  }
  ExpectEdgesPointDown(g, *r);
  // Straight edges: two points, vertical.
  for (const EdgeRoute& e : r->edges) {
    ASSERT_EQ(e.points.size(), 2u);
    EXPECT_DOUBLE_EQ(e.points[0].x, e.points[1].x);
  }
}

TEST(LayeredLayout, ParameterSitsRightAboveItsOnlyUser) {
  // a -> b -> c -> d -> e and a parameter p used only by e: network simplex puts p on the
  // layer above e instead of the top (one short edge instead of a four-layer one).
  LayoutGraph g = Chain(5);
  int p = g.AddNode("p", 60, 30);
  g.AddEdge(p, 4, 1);
  auto r = MustLayout(g);
  EXPECT_EQ(r->nodes[p].layer, r->nodes[4].layer - 1);
  EXPECT_EQ(SumSpans(g, *r), 5);
  EXPECT_TRUE(r->stats.ns_optimal);
}

// Minimum of sum(layer(dst) - layer(src)) over all feasible layerings, by brute force.
int64_t BruteForceMinSpan(const LayoutGraph& g) {
  int n = g.node_count();
  std::vector<int> rank(n, 0);
  int64_t best = std::numeric_limits<int64_t>::max();
  std::function<void(int)> go = [&](int v) {
    if (v == n) {
      int64_t s = 0;
      for (const LayoutEdge& e : g.edges) {
        if (rank[e.dst] - rank[e.src] < 1) return;
        s += rank[e.dst] - rank[e.src];
      }
      best = std::min(best, s);
      return;
    }
    for (int r = 0; r < n; ++r) {
      rank[v] = r;
      go(v + 1);
    }
  };
  go(0);
  return best;
}

TEST(LayeredLayout, NetworkSimplexFindsTheOptimumOnSmallGraphs) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    LayoutGraph g = RandomDag(6, seed);
    if (g.edges.empty()) continue;
    LayoutOptions o;
    o.hub_threshold = 0;  // equal weights, so the objective is the plain span sum
    auto r = MustLayout(g, o);
    EXPECT_EQ(SumSpans(g, *r), BruteForceMinSpan(g)) << "seed " << seed;
    EXPECT_TRUE(r->stats.ns_optimal) << "seed " << seed;
  }
}

TEST(LayeredLayout, LongestPathFallbackIsFeasible) {
  LayoutGraph g = RandomDag(300, 7);
  LayoutOptions o;
  o.network_simplex = false;
  auto r = MustLayout(g, o);
  EXPECT_TRUE(r->stats.layering_fallback);
  ExpectEdgesPointDown(g, *r);
  ExpectNoOverlaps(*r);
  // The network simplex layering is never worse.
  auto best = MustLayout(g);
  EXPECT_LE(SumSpans(g, *best), SumSpans(g, *r));
}

TEST(LayeredLayout, CyclesAreBrokenAndDrawnBackwards) {
  LayoutGraph g = Chain(4);
  g.AddEdge(3, 1, 1);  // back edge
  auto r = MustLayout(g);
  EXPECT_TRUE(r->edges[3].reversed);
  const auto& pts = r->edges[3].points;
  // Drawn from node 3 to node 1: runs upwards.
  EXPECT_GT(pts.front().y, pts.back().y);
}

// ---------------------------------------------------------------------------------------------
// Ordering
// ---------------------------------------------------------------------------------------------

TEST(LayeredLayout, PermutationBetweenTwoLayersIsUntangled) {
  // s_i -> t_pi(i), t declared in an order that crosses everything: optimum 0 crossings.
  LayoutGraph g;
  const int n = 8;
  int perm[n] = {5, 2, 7, 0, 3, 6, 1, 4};
  for (int i = 0; i < n; ++i) g.AddNode("s" + std::to_string(i), 40, 20);
  for (int i = 0; i < n; ++i) g.AddNode("t" + std::to_string(i), 40, 20);
  for (int i = 0; i < n; ++i) g.AddEdge(i, n + perm[i], 0);
  auto r = MustLayout(g);
  EXPECT_EQ(r->stats.crossings, 0);
  EXPECT_EQ(MeasureLayout(Flatten(g, *r)).crossings, 0);
}

TEST(LayeredLayout, ThreeLayerPathsHaveNoCrossings) {
  // Five disjoint 3-node paths whose middle and bottom layers are declared shuffled.
  LayoutGraph g;
  int a[5], b[5], c[5];
  for (int i = 0; i < 5; ++i) a[i] = g.AddNode("a" + std::to_string(i), 40, 20);
  int pb[5] = {3, 0, 4, 1, 2}, pc[5] = {1, 4, 0, 2, 3};
  for (int i = 0; i < 5; ++i) b[pb[i]] = g.AddNode("b" + std::to_string(i), 40, 20);
  for (int i = 0; i < 5; ++i) c[pc[i]] = g.AddNode("c" + std::to_string(i), 40, 20);
  for (int i = 0; i < 5; ++i) {
    g.AddEdge(a[i], b[i], 0);
    g.AddEdge(b[i], c[i], 0);
  }
  // Join them so they form one component: a root above all.
  int root = g.AddNode("root", 40, 20);
  for (int i = 0; i < 5; ++i) g.AddEdge(root, a[i], 0);
  auto r = MustLayout(g);
  EXPECT_EQ(MeasureLayout(Flatten(g, *r)).crossings, 0);
}

TEST(LayeredLayout, CompleteBipartiteHasTheForcedCrossings) {
  // K3,3 between two layers: every order has C(3,2)*C(3,2) = 9 crossings.
  LayoutGraph g;
  for (int i = 0; i < 6; ++i) g.AddNode("k" + std::to_string(i), 40, 20);
  for (int i = 0; i < 3; ++i) {
    for (int j = 3; j < 6; ++j) g.AddEdge(i, j, i);
  }
  auto r = MustLayout(g);
  EXPECT_EQ(r->stats.crossings, 9);
  EXPECT_EQ(MeasureLayout(Flatten(g, *r)).crossings, 9);
}

TEST(LayeredLayout, OneCrossingIsOptimalAndFound) {
  // a->c, a->d, b->c, b->e with d and e forced apart by another edge pair... the classic
  // "X": u1->v2, u2->v1 plus u1->v1 and u2->v2 gives exactly one unavoidable crossing.
  LayoutGraph g;
  int u1 = g.AddNode("u1", 40, 20), u2 = g.AddNode("u2", 40, 20);
  int v1 = g.AddNode("v1", 40, 20), v2 = g.AddNode("v2", 40, 20);
  g.AddEdge(u1, v1, 0);
  g.AddEdge(u1, v2, 0);
  g.AddEdge(u2, v1, 1);
  g.AddEdge(u2, v2, 1);
  auto r = MustLayout(g);
  EXPECT_EQ(r->stats.crossings, 1);
}

TEST(LayeredLayout, TreeHasNoCrossings) {
  LayoutGraph g;
  g.AddNode("r", 40, 20);
  std::mt19937 rng(3);
  for (int i = 1; i < 120; ++i) {
    g.AddNode("t" + std::to_string(i), 40 + rng() % 40, 20);
    g.AddEdge(static_cast<int>(rng() % i), i, 0);
  }
  auto r = MustLayout(g);
  EXPECT_EQ(MeasureLayout(Flatten(g, *r)).crossings, 0);
}

// ---------------------------------------------------------------------------------------------
// Coordinates, routing, invariants
// ---------------------------------------------------------------------------------------------

TEST(LayeredLayout, RandomGraphsHaveNoOverlapsAndDownwardEdges) {
  for (uint32_t seed = 1; seed <= 5; ++seed) {
    LayoutGraph g = RandomDag(250, seed);
    auto r = MustLayout(g);
    ExpectNoOverlaps(*r);
    ExpectEdgesPointDown(g, *r);
    ExpectLayersAreRows(*r);
    // Internal and drawn crossing counts agree (routes follow the dummy slots).
    EXPECT_EQ(r->stats.crossings, MeasureLayout(Flatten(g, *r)).crossings) << "seed " << seed;
  }
}

TEST(LayeredLayout, OperandPortsSpreadAcrossTheTopEdge) {
  LayoutGraph g;
  int a = g.AddNode("a", 60, 20), b = g.AddNode("b", 60, 20), c = g.AddNode("c", 90, 20);
  g.AddEdge(a, c, 0);
  g.AddEdge(b, c, 1);
  auto r = MustLayout(g);
  const NodeBox& cb = r->nodes[c];
  EXPECT_NEAR(r->edges[0].points.back().x, cb.left() + cb.width / 3, 1e-6);
  EXPECT_NEAR(r->edges[1].points.back().x, cb.left() + 2 * cb.width / 3, 1e-6);
  // Operand 0's source is on the left, so the two edges do not cross at the node.
  EXPECT_LT(r->nodes[a].x, r->nodes[b].x);
}

TEST(LayeredLayout, HubEdgesShareOneDummyChain) {
  // One node with 40 users spread over many layers: its long edges share one chain.
  LayoutGraph g = Chain(30);
  int hub = g.AddNode("hub", 60, 20);
  for (int i = 2; i < 30; ++i) g.AddEdge(hub, i, 1);
  for (int i = 0; i < 12; ++i) {
    int extra = g.AddNode("x" + std::to_string(i), 40, 20);
    g.AddEdge(hub, extra, 0);
    g.AddEdge(extra, 29, 2 + i);
  }
  LayoutOptions shared;
  LayoutOptions separate;
  separate.hub_threshold = 0;
  auto a = MustLayout(g, shared);
  auto b = MustLayout(g, separate);
  EXPECT_LT(a->stats.dummies * 3, b->stats.dummies);
  ExpectNoOverlaps(*a);
  ExpectEdgesPointDown(g, *a);
}

TEST(LayeredLayout, DisconnectedComponentsDoNotInterleave) {
  LayoutGraph g;
  for (int c = 0; c < 3; ++c) {
    int base = g.node_count();
    for (int i = 0; i < 5; ++i)
      g.AddNode("c" + std::to_string(c) + "_" + std::to_string(i), 40, 20);
    for (int i = 1; i < 5; ++i) g.AddEdge(base + (i - 1) / 2, base + i, 0);
  }
  auto r = MustLayout(g);
  EXPECT_EQ(r->stats.components, 3);
  // Per layer, the components' x ranges are disjoint.
  for (int c1 = 0; c1 < 3; ++c1) {
    for (int c2 = c1 + 1; c2 < 3; ++c2) {
      for (int i = 0; i < 5; ++i) {
        for (int j = 0; j < 5; ++j) {
          const NodeBox& p = r->nodes[c1 * 5 + i];
          const NodeBox& q = r->nodes[c2 * 5 + j];
          if (p.layer != q.layer) continue;
          EXPECT_FALSE(BoxesOverlap(p, q));
        }
      }
    }
  }
  ExpectNoOverlaps(*r);
}

TEST(LayeredLayout, EveryXPlacementGivesAValidLayout) {
  for (XPlacement xp : {XPlacement::kPacked, XPlacement::kBrandesKoepf, XPlacement::kBest}) {
    LayoutGraph g = RandomDag(200, 11);
    LayoutOptions o;
    o.x_placement = xp;
    auto r = MustLayout(g, o);
    ExpectNoOverlaps(*r);
    ExpectEdgesPointDown(g, *r);
    LayoutGraph chain = Chain(8);
    auto rc = MustLayout(chain, o);
    for (const NodeBox& b : rc->nodes) EXPECT_DOUBLE_EQ(b.x, rc->nodes[0].x);
  }
}

TEST(LayeredLayout, LongEdgesAreVertical) {
  // A chain of 8 with a skip edge from its top to its bottom, and a second chain between the
  // same ends: the skip edge's dummy slots share one x (one vertical run) with either start.
  for (XPlacement xp : {XPlacement::kPacked, XPlacement::kBrandesKoepf}) {
    LayoutGraph g = Chain(8);
    int base = g.node_count();
    for (int i = 0; i < 6; ++i) g.AddNode("d" + std::to_string(i), 60 + 20 * (i % 3), 30);
    g.AddEdge(0, base, 1);
    for (int i = 0; i + 1 < 6; ++i) g.AddEdge(base + i, base + i + 1, 0);
    g.AddEdge(base + 5, 7, 1);
    int skip = g.AddEdge(0, 7, 2);
    LayoutOptions o;
    o.x_placement = xp;
    auto r = MustLayout(g, o);
    const auto& pts = r->edges[skip].points;
    ASSERT_GE(pts.size(), 4u);
    std::set<double> xs;
    for (size_t k = 1; k + 1 < pts.size(); ++k) xs.insert(pts[k].x);
    EXPECT_LE(xs.size(), 2u) << "placement " << static_cast<int>(xp);
  }
}

// ---------------------------------------------------------------------------------------------
// Clusters and incremental expansion
// ---------------------------------------------------------------------------------------------

std::shared_ptr<LayoutGraph> Fusion(int params, int body) {
  auto c = std::make_shared<LayoutGraph>();
  c->name = "fused";
  for (int i = 0; i < params; ++i) {
    int p = c->AddNode("p" + std::to_string(i), 50, 20);
    c->inputs.push_back({i, p});
  }
  int prev = 0;
  for (int i = 0; i < body; ++i) {
    int v = c->AddNode("f" + std::to_string(i), 60, 20);
    c->AddEdge(prev, v, 0);
    if (i == 0 && params > 1) c->AddEdge(1, v, 1);
    prev = v;
  }
  c->outputs.push_back(prev);
  return c;
}

// A graph with one collapsed cluster ("fusion") in the middle of a random DAG.
LayoutGraph WithCluster(int n, uint32_t seed, int* cluster) {
  LayoutGraph g = RandomDag(n, seed);
  int f = g.AddNode("fusion", 80, 30);
  g.nodes[f].expandable = true;
  g.nodes[f].child = Fusion(2, 6);
  g.nodes[f].cluster_title = "fusion: fused";
  g.AddEdge(n / 3, f, 0);
  g.AddEdge(n / 3 + 1, f, 1);
  g.AddEdge(f, n - 1, 3);
  g.AddEdge(f, 2 * n / 3, 3);
  *cluster = f;
  return g;
}

TEST(LayeredLayout, ExpandedClusterIsABoxAroundItsContents) {
  int f;
  LayoutGraph g = WithCluster(60, 5, &f);
  g.nodes[f].expanded = true;
  auto r = MustLayout(g);
  const NodeBox& box = r->nodes[f];
  ASSERT_NE(r->children[f], nullptr);
  EXPECT_GT(box.layer_span, 1);
  ExpectNoOverlaps(*r);
  ExpectEdgesPointDown(g, *r);
  // Contents lie inside the frame.
  FlatLayout flat = Flatten(g, *r);
  int inside = 0;
  for (const FlatNode& n : flat.nodes) {
    if (n.path.rfind("fusion/", 0) != 0) continue;
    ++inside;
    EXPECT_GE(n.x - n.width / 2, box.left() - 1e-6);
    EXPECT_LE(n.x + n.width / 2, box.right() + 1e-6);
    EXPECT_GE(n.y - n.height / 2, box.top() - 1e-6);
    EXPECT_LE(n.y + n.height / 2, box.bottom() + 1e-6);
  }
  EXPECT_EQ(inside, 8);
  // Operand 1 enters at parameter 1: the route ends on p1's top edge.
  for (int e = 0; e < g.edge_count(); ++e) {
    if (g.edges[e].dst != f || g.edges[e].operand != 1) continue;
    const NodeBox& p1 = r->children[f]->nodes[1];
    EXPECT_NEAR(r->edges[e].points.back().x, box.content_origin.x + p1.x, 1e-6);
    EXPECT_NEAR(r->edges[e].points.back().y, box.content_origin.y + p1.top(), 1e-6);
  }
}

TEST(LayeredLayout, ExpandingKeepsOtherNodesLayersAndOrder) {
  int f;
  LayoutGraph g = WithCluster(400, 9, &f);
  LayeredLayout engine;
  auto before = engine.Layout(g);
  ASSERT_TRUE(before.ok());
  LayoutGraph expanded = g;
  expanded.nodes[f].expanded = true;
  auto after = engine.Layout(expanded);
  ASSERT_TRUE(after.ok());
  const LayoutResult& a = **before;
  const LayoutResult& b = **after;
  EXPECT_TRUE(b.stats.incremental);
  int delta = b.nodes[f].layer_span - a.nodes[f].layer_span;
  ASSERT_GT(delta, 0);
  int fl = a.nodes[f].layer;
  int kept = 0, total = 0;
  for (int v = 0; v < g.node_count(); ++v) {
    if (v == f) continue;
    ++total;
    int expected = a.nodes[v].layer + (a.nodes[v].layer > fl ? delta : 0);
    if (b.nodes[v].layer == expected) ++kept;
  }
  EXPECT_GE(kept, total * 95 / 100);
  // Relative order of untouched nodes sharing a layer is unchanged.
  for (int u = 0; u < g.node_count(); ++u) {
    for (int v = u + 1; v < g.node_count(); ++v) {
      if (u == f || v == f) continue;
      if (a.nodes[u].layer != a.nodes[v].layer || b.nodes[u].layer != b.nodes[v].layer) continue;
      EXPECT_EQ(a.nodes[u].order < a.nodes[v].order, b.nodes[u].order < b.nodes[v].order)
          << g.nodes[u].key << " vs " << g.nodes[v].key;
    }
  }
  ExpectNoOverlaps(b);
  ExpectEdgesPointDown(expanded, b);
  // Collapsing again restores the first layout exactly (cached).
  auto again = engine.Layout(g);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), before->get());
}

TEST(LayeredLayout, ResultsAreCachedByContent) {
  LayoutGraph g = RandomDag(100, 2);
  LayeredLayout engine;
  auto a = engine.Layout(g);
  auto b = engine.Layout(g);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());
  LayoutGraph moved = g;
  moved.nodes[5].width += 10;
  auto c = engine.Layout(moved);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->get(), c->get());
}

// ---------------------------------------------------------------------------------------------
// Determinism and cancel
// ---------------------------------------------------------------------------------------------

void ExpectSameLayout(const LayoutResult& a, const LayoutResult& b) {
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    EXPECT_EQ(a.nodes[i].x, b.nodes[i].x);
    EXPECT_EQ(a.nodes[i].y, b.nodes[i].y);
    EXPECT_EQ(a.nodes[i].layer, b.nodes[i].layer);
    EXPECT_EQ(a.nodes[i].order, b.nodes[i].order);
  }
  ASSERT_EQ(a.edges.size(), b.edges.size());
  for (size_t i = 0; i < a.edges.size(); ++i) EXPECT_EQ(a.edges[i].points, b.edges[i].points);
}

TEST(LayeredLayout, SameInputGivesIdenticalOutput) {
  // Large enough that the ordering stops on its work budget, not on convergence.
  LayoutGraph g = RandomDag(4000, 21);
  LayoutOptions o;
  o.ordering_work = 2'000'000;
  auto a = MustLayout(g, o);
  auto b = MustLayout(g, o);
  EXPECT_TRUE(a->stats.ordering_limited);
  ExpectSameLayout(*a, *b);
}

TEST(LayeredLayout, CancelledTokenStopsTheLayout) {
  LayoutGraph g = RandomDag(3000, 4);
  CancelToken cancel;
  cancel.Cancel();
  LayeredLayout engine;
  LayoutRequest req;
  req.cancel = &cancel;
  auto r = engine.Layout(g, req);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kCancelled);
}

TEST(LayeredLayout, PartialResultComesFirstForLargeGraphs) {
  LayoutGraph g = RandomDag(3000, 8);
  LayoutOptions o;
  o.partial_min_nodes = 1000;
  LayeredLayout engine(o);
  int partials = 0;
  LayoutRequest req;
  req.on_partial = [&](std::shared_ptr<const LayoutResult> r) {
    ++partials;
    EXPECT_TRUE(r->partial);
    EXPECT_EQ(r->nodes.size(), g.nodes.size());
  };
  auto r = engine.Layout(g, req);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(partials, 1);
  EXPECT_FALSE((*r)->partial);
}

TEST(LayoutJob, NewerRequestsSupersedeOlderOnes) {
  std::mutex mu;
  std::vector<LayoutJob::Update> finals;
  LayoutJob job([&](const LayoutJob::Update& u) {
    std::lock_guard<std::mutex> lock(mu);
    if (u.final) finals.push_back(u);
  });
  auto big = std::make_shared<LayoutGraph>(RandomDag(20000, 1));
  auto small = std::make_shared<LayoutGraph>(Chain(5));
  uint64_t g1 = job.Request(big);
  uint64_t g2 = job.Request(small);
  EXPECT_LT(g1, g2);
  ASSERT_TRUE(job.WaitIdle(std::chrono::seconds(60)));
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(finals.size(), 1u);
  EXPECT_EQ(finals[0].generation, g2);
  ASSERT_TRUE(finals[0].status.ok());
  EXPECT_EQ(finals[0].result->nodes.size(), 5u);
}

TEST(LayoutJob, CancelStopsARunningLayoutQuickly) {
  std::atomic<int> cancelled{0};
  LayoutJob job([&](const LayoutJob::Update& u) {
    if (u.final && u.status.code() == absl::StatusCode::kCancelled) ++cancelled;
  });
  auto big = std::make_shared<LayoutGraph>(RandomDag(40000, 2));
  job.Request(big);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  auto t0 = std::chrono::steady_clock::now();
  job.Cancel();
  ASSERT_TRUE(job.WaitIdle(std::chrono::seconds(30)));
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(cancelled.load(), 1);
  EXPECT_LT(ms, 1000) << "cancel took " << ms << " ms";
}

// ---------------------------------------------------------------------------------------------
// HLO graphs
// ---------------------------------------------------------------------------------------------

constexpr char kModule[] = R"(
HloModule test

add_f32 {
  lhs = f32[] parameter(0)
  rhs = f32[] parameter(1)
  ROOT sum = f32[] add(lhs, rhs)
}

fused_mul {
  fp0 = f32[8] parameter(0)
  fp1 = f32[8] parameter(1)
  fm = f32[8] multiply(fp0, fp1)
  ROOT fe = f32[8] exponential(fm)
}

loop_cond {
  ct = (s32[], f32[8]) parameter(0)
  ci = s32[] get-tuple-element(ct), index=0
  cn = s32[] constant(10)
  ROOT clt = pred[] compare(ci, cn), direction=LT
}

loop_body {
  bt = (s32[], f32[8]) parameter(0)
  bi = s32[] get-tuple-element(bt), index=0
  bx = f32[8] get-tuple-element(bt), index=1
  bone = s32[] constant(1)
  bi2 = s32[] add(bi, bone)
  bx2 = f32[8] add(bx, bx)
  ROOT br = (s32[], f32[8]) tuple(bi2, bx2)
}

ENTRY main {
  p = f32[8] parameter(0)
  w = f32[8] parameter(1)
  two = f32[] constant(2)
  cb = f32[8] broadcast(two), dimensions={}
  f = f32[8] fusion(p, w), kind=kLoop, calls=fused_mul
  a1 = f32[8] add(f, cb)
  m1 = f32[8] multiply(a1, w)
  m2 = f32[8] multiply(m1, w)
  m3 = f32[8] multiply(m2, w)
  m4 = f32[8] multiply(m3, w)
  m5 = f32[8] multiply(m4, w)
  m6 = f32[8] multiply(m5, w)
  m7 = f32[8] multiply(m6, w), control-predecessors={cb}
  zero = s32[] constant(0)
  init = (s32[], f32[8]) tuple(zero, m7)
  wl = (s32[], f32[8]) while(init), condition=loop_cond, body=loop_body
  res = f32[8] get-tuple-element(wl), index=1
  z = f32[] constant(0)
  red = f32[] reduce(res, z), dimensions={0}, to_apply=add_f32
  ROOT out = (f32[], f32[8]) tuple(red, res)
}
)";

struct Parsed {
  std::unique_ptr<Module> module;
  const Computation* entry = nullptr;
};

Parsed ParseTestModule() {
  auto m = ParseModule(kModule);
  EXPECT_TRUE(m.ok()) << m.status();
  Parsed p;
  if (!m.ok()) return p;
  p.module = std::move(*m);
  p.entry = p.module->entry();
  return p;
}

TEST(HloGraph, LabelsInliningGhostsAndEdges) {
  Parsed p = ParseTestModule();
  auto hg = HloGraph::Build(*p.entry);
  ASSERT_TRUE(hg.ok()) << hg.status();
  const LayoutGraph& g = *hg->graph();
  // Small constants are not nodes; they appear in their users' labels.
  EXPECT_EQ(Find(g, "two"), -1);
  EXPECT_EQ(Find(g, "zero"), -1);
  int cb = Find(g, "cb");
  ASSERT_GE(cb, 0);
  EXPECT_EQ(g.nodes[cb].label[1], "broadcast");
  EXPECT_EQ(g.nodes[cb].label.back(), "operand 0 = constant 2");
  // The reduce shows its trivial reducer and is not a cluster.
  int red = Find(g, "red");
  ASSERT_GE(red, 0);
  EXPECT_EQ(g.nodes[red].label[1], "reduce (add)");
  EXPECT_FALSE(g.nodes[red].expandable);
  // Fusion and while are collapsed clusters.
  int f = Find(g, "f");
  int wl = Find(g, "wl");
  EXPECT_TRUE(g.nodes[f].expandable);
  EXPECT_FALSE(g.nodes[f].expanded);
  EXPECT_EQ(g.nodes[f].label[1], "fusion (loop)");
  EXPECT_TRUE(g.nodes[wl].expandable);
  // w has 8 users: no node of its own, one dashed ghost beside each user.
  EXPECT_EQ(Find(g, "w"), -1);
  int ghosts = 0;
  for (const LayoutNode& n : g.nodes) {
    if (n.key.rfind("w#", 0) == 0) {
      ++ghosts;
      EXPECT_TRUE(n.style.dashed);
      EXPECT_EQ(hg->info(n)->role, HloNodeRole::kGhost);
      EXPECT_EQ(hg->info(n)->instruction->name(), "w");
    }
  }
  EXPECT_EQ(ghosts, 8);
  EXPECT_EQ(hg->TagsFor(p.entry->FindInstruction("w")).size(), 8u);
  // Operand index labels and the dotted control edge.
  int u7 = Find(g, "m7");
  int control = 0, labelled = 0;
  for (const LayoutEdge& e : g.edges) {
    if (e.dst == u7 && e.kind == EdgeKind::kControl) {
      ++control;
      EXPECT_EQ(e.src, cb);
    }
    if (e.dst == u7 && e.kind == EdgeKind::kData && e.label == "1") ++labelled;
  }
  EXPECT_EQ(control, 1);
  EXPECT_EQ(labelled, 1);
  // Colors: parameters orange, fusion gray, while dark green.
  EXPECT_EQ(g.nodes[Find(g, "p")].style.fill, StyleForFamily(ColorFamily::kOrange).fill);
  EXPECT_EQ(g.nodes[f].style.fill, StyleForFamily(ColorFamily::kGray).fill);
  EXPECT_EQ(g.nodes[wl].style.fill, StyleForFamily(ColorFamily::kDarkGreen).fill);
  EXPECT_EQ(OpcodeColorFamily(Opcode::kDot), ColorFamily::kDarkBlue);

  auto r = MustLayout(g);
  ExpectNoOverlaps(*r);
  ExpectEdgesPointDown(g, *r);
  // Each ghost sits on the layer right above its user.
  for (const LayoutEdge& e : g.edges) {
    if (g.nodes[e.src].key.rfind("w#", 0) == 0) {
      EXPECT_EQ(r->nodes[e.src].layer + 1, r->nodes[e.dst].layer);
    }
  }
}

TEST(HloGraph, FoldingGetTupleElement) {
  Parsed p = ParseTestModule();
  HloGraphOptions o;
  o.fold_get_tuple_element = true;
  auto hg = HloGraph::Build(*p.entry, o);
  ASSERT_TRUE(hg.ok());
  const LayoutGraph& g = *hg->graph();
  EXPECT_EQ(Find(g, "res"), -1);
  int wl = Find(g, "wl"), red = Find(g, "red");
  bool found = false;
  for (const LayoutEdge& e : g.edges) {
    if (e.src == wl && e.dst == red) {
      found = true;
      EXPECT_EQ(e.label, "0 {1}");
    }
  }
  EXPECT_TRUE(found);
}

TEST(HloGraph, ExpandingFusionAndWhileBuildsNestedClusters) {
  Parsed p = ParseTestModule();
  auto hg = HloGraph::Build(*p.entry);
  ASSERT_TRUE(hg.ok());
  auto ex = hg->WithExpanded("f", true);
  ASSERT_TRUE(ex.ok()) << ex.status();
  EXPECT_TRUE(ex->IsExpanded("f"));
  EXPECT_FALSE(hg->IsExpanded("f"));  // the original is unchanged
  const LayoutGraph& g = *ex->graph();
  int f = Find(g, "f");
  ASSERT_TRUE(g.nodes[f].expanded);
  const LayoutGraph& fused = *g.nodes[f].child;
  EXPECT_EQ(fused.node_count(), 4);
  ASSERT_EQ(fused.inputs.size(), 2u);
  EXPECT_EQ(fused.nodes[fused.inputs[1].node].key, "fp1");
  ASSERT_EQ(fused.outputs.size(), 1u);
  EXPECT_EQ(fused.nodes[fused.outputs[0]].key, "fe");
  // Levels off the path are shared, not copied.
  auto both = ex->WithExpanded("wl", true);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(both->graph()->nodes[f].child.get(), g.nodes[f].child.get());
  const LayoutGraph& loop = *both->graph()->nodes[Find(*both->graph(), "wl")].child;
  // Body and condition side by side; operand 0 enters both parameters.
  EXPECT_NE(Find(loop, "bx2"), -1);
  EXPECT_NE(Find(loop, "clt"), -1);
  EXPECT_EQ(loop.inputs.size(), 2u);
  EXPECT_FALSE(ex->WithExpanded("red", true).ok());
  EXPECT_FALSE(ex->WithExpanded("nope", true).ok());

  LayeredLayout engine;
  auto r = engine.Layout(*both->graph());
  ASSERT_TRUE(r.ok()) << r.status();
  ExpectNoOverlaps(**r);
  ExpectEdgesPointDown(*both->graph(), **r);
  ExpectNoOverlaps(*(*r)->children[f]);
  // Collapse again: same picture as before the while was expanded, from the cache.
  auto only_f = engine.Layout(*ex->graph());
  auto collapsed = both->WithExpanded("wl", false);
  ASSERT_TRUE(collapsed.ok());
  auto again = engine.Layout(*collapsed->graph());
  ASSERT_TRUE(only_f.ok() && again.ok());
  EXPECT_EQ(only_f->get(), again->get());
}

TEST(HloGraph, ExpandAllNestsEveryCluster) {
  Parsed p = ParseTestModule();
  HloGraphOptions o;
  o.expand_all = true;
  auto hg = HloGraph::Build(*p.entry, o);
  ASSERT_TRUE(hg.ok());
  EXPECT_TRUE(hg->IsExpanded("f"));
  EXPECT_TRUE(hg->IsExpanded("wl"));
  EXPECT_GT(hg->graph()->TotalNodeCount(), hg->graph()->node_count() + 8);
  auto r = MustLayout(*hg->graph());
  FlatLayout flat = Flatten(*hg->graph(), *r);
  EXPECT_EQ(static_cast<int64_t>(flat.nodes.size()), hg->graph()->TotalNodeCount());
}

TEST(HloGraph, TrivialReducerNames) {
  Parsed p = ParseTestModule();
  EXPECT_EQ(TrivialReducerName(*p.module->FindComputation("add_f32")), "add");
  EXPECT_EQ(TrivialReducerName(*p.module->FindComputation("fused_mul")), "");
}

TEST(HloGraph, LargestCorpusComputationLaysOutCleanly) {
  namespace fs = std::filesystem;
  fs::path file = fs::path(HLOWB_CORPUS_DIR) / "benchmarks" / "xla__service__attention_model.hlo";
  if (!fs::exists(file)) GTEST_SKIP() << "corpus not found: " << file;
  auto text = ReadFileToString(file.string());
  ASSERT_TRUE(text.ok());
  auto m = ParseModule(*text);
  ASSERT_TRUE(m.ok()) << m.status();
  const Computation* largest = nullptr;
  for (const auto& c : (*m)->computations()) {
    if (!largest || c->instruction_count() > largest->instruction_count()) largest = c.get();
  }
  auto hg = HloGraph::Build(*largest);
  ASSERT_TRUE(hg.ok());
  auto t0 = std::chrono::steady_clock::now();
  auto r = MustLayout(*hg->graph());
  double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ExpectNoOverlaps(*r);
  ExpectEdgesPointDown(*hg->graph(), *r);
  EXPECT_LT(ms, 5000) << largest->instruction_count() << " instructions";
}

// ---------------------------------------------------------------------------------------------
// Graphviz
// ---------------------------------------------------------------------------------------------

TEST(Graphviz, DotExportNamesNodesEdgesAndClusters) {
  int f;
  LayoutGraph g = WithCluster(10, 1, &f);
  g.nodes[f].expanded = true;
  g.edges[0].label = "0";
  std::string dot = ExportDot(g);
  EXPECT_NE(dot.find("digraph"), std::string::npos);
  EXPECT_NE(dot.find("subgraph cluster_0_" + std::to_string(f)), std::string::npos);
  EXPECT_NE(dot.find("n1_0 ["), std::string::npos);  // the fusion's first parameter
  EXPECT_NE(dot.find("[id=e0_0"), std::string::npos);
  EXPECT_NE(dot.find("headlabel=\"0\""), std::string::npos);
}

TEST(Graphviz, LayoutAndSvgInAChildProcess) {
  int f;
  LayoutGraph g = WithCluster(30, 3, &f);
  g.nodes[f].expanded = true;
  auto r = GraphvizLayout(g);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ((*r)->nodes.size(), g.nodes.size());
  for (const NodeBox& b : (*r)->nodes) EXPECT_GT(b.width, 0);
  ASSERT_NE((*r)->children[f], nullptr);
  EXPECT_EQ((*r)->children[f]->nodes.size(), g.nodes[f].child->nodes.size());
  for (const EdgeRoute& e : (*r)->edges) EXPECT_FALSE(e.points.empty());
  LayoutMetrics m = MeasureLayout(Flatten(g, **r));
  EXPECT_GT(m.ranks, 3);
  auto svg = RenderSvg(g);
  ASSERT_TRUE(svg.ok()) << svg.status();
  EXPECT_NE(svg->find("<svg"), std::string::npos);
}

TEST(Graphviz, TimeoutKillsTheChild) {
  LayoutGraph g = RandomDag(3000, 5);
  GraphvizOptions o;
  o.timeout_seconds = 0.2;
  o.max_nodes = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto r = GraphvizLayout(g, o);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(s, 2.0);
  GraphvizOptions limited;
  limited.max_nodes = 100;
  EXPECT_EQ(GraphvizLayout(g, limited).status().code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace hlowb::graph
