// A Sugiyama-style layered layout engine for HLO-shaped graphs (large-graph-layout.md section 3).
// Phases, each with a deterministic work cap and a cheap fallback:
//  1. Layering: longest path, then each node moved to the end of its feasible interval its
//     heavier side prefers (the fallback), then network simplex on a kernel of the graph
//     (pendant nodes peeled, in->out pass-through nodes contracted; both keep the optimum),
//     capped in pivots and work. Hub edges (nodes with more than hub_threshold edges) weigh
//     1/10, control edges 1/2.
//  2. Long edges: one dummy per crossed layer, except that all long out-edges of a hub share
//     one dummy chain (a bus), likewise all long in-edges of a fan-in hub (e.g. ROOT tuple).
//  3. Ordering: BFS start (and a second start from the sinks), dot's weighted-median sweeps
//     with alternating tie-breaks and transposition, best order kept, stop after 8 sweeps
//     without a 0.5% gain or on the work budget; connected components stay side by side.
//  4. x: see LayoutOptions::x_placement (Brandes-Koepf and/or packing, L1 straightening).
//  5. Routing: polylines through the dummy slots, operand ports spread over the head's top
//     edge, smooth y-monotone Bezier control points for drawing.
// Expanded clusters are laid out on their own, cached by content, and sit in their parent as a
// rigid block spanning several layers; edges enter at the parameter for their operand and
// leave from ROOT. Laying out a graph whose previous layout differs only in some nodes' size
// or expansion (expand/collapse) keeps every other node's layer (shifted below the change) and
// relative order: old positions are the start, ordering runs only in a window of layers
// around the change and never swaps two unchanged nodes, and x is pulled to the old x.
//
// Deterministic: the same graph and options give the same result from a fresh engine, because
// every limit is a work count, not a clock. The optional wall-clock budget is a safety net;
// when it fires the result says so (stats.deadline_hit). With history (cache, incremental
// relayout) a result also depends on what was laid out before, by design.
//
// Not thread-safe: one LayeredLayout per thread (LayoutJob owns one on its worker). It does not
// measure text, know HLO, or draw; it never touches Qt.
#ifndef HLOWB_VIEWER_GRAPH_LAYERED_LAYOUT_H_
#define HLOWB_VIEWER_GRAPH_LAYERED_LAYOUT_H_

#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "absl/status/statusor.h"
#include "core/support/cancel.h"
#include "viewer/graph/layout_graph.h"

namespace hlowb::graph {

// Start placement for x coordinates; see LayoutOptions::x_placement.
enum class XPlacement : uint8_t { kPacked, kBrandesKoepf, kBest };

// Knobs of the engine. Every limit is deterministic (work counts) except time_budget_ms. Not a
// place for display settings: fonts and colors live with the graph builder and the view.
struct LayoutOptions {
  // Spacing, in points.
  double node_sep = 18;    // horizontal gap between boxes
  double dummy_width = 6;  // width reserved for a long edge passing through a layer
  double rank_sep = 36;    // vertical gap between layers
  double cluster_padding = 10;
  double cluster_title_height = 16;

  // Hubs: long edges of a node with more than this many long out-edges (or in-edges) share
  // one dummy chain (a "bus"). 0 disables sharing.
  int hub_threshold = 16;

  // Layering.
  bool network_simplex = true;
  double ns_pivots_per_node = 2.0;   // pivot cap = this x nodes
  int ns_search_size = 30;           // negative tree edges examined per pivot (dot's default)
  int64_t ns_work_per_node = 3000;   // cap on simplex work units per node (deterministic)
  int64_t ns_max_work = 15'000'000;  // absolute cap (about 1 s at 100k nodes)

  // Ordering (dot's mincross parameters) and its deterministic effort budget.
  int max_sweeps = 24;
  int min_quit = 8;
  double convergence = 0.995;
  bool two_starts = true;
  bool transpose = true;
  // Work units (roughly: proper edges visited) allowed for all ordering sweeps; 0 = auto
  // (scaled so that 10k nodes stay well under a second).
  int64_t ordering_work = 0;
  // Publish a partial result after this many sweeps when on_partial is set and the graph has
  // at least partial_min_nodes nodes.
  int partial_after_sweeps = 2;
  int partial_min_nodes = 2000;

  // Coordinates: a start placement refined by `straighten_sweeps` sweeps of per-layer L1
  // isotonic regression towards the neighbours (dot's weights 1/2/8), clusters moved as rigid
  // boxes, and long edges made vertical where they fit. Starts: kPacked = each layer packed
  // left to right; kBrandesKoepf = Brandes-Koepf (straight long edges, but its aligned blocks
  // staircase into drawings several times wider on hub-heavy graphs and drift diagonally on
  // chains with side branches); kBest = both, keeping Brandes-Koepf only when its dot
  // objective (sum of weighted |dx|) is lower and it is at most 1.25x as wide, when the proper
  // graph has at most best_of_max_items items (else kPacked).
  XPlacement x_placement = XPlacement::kBest;
  int64_t best_of_max_items = 80'000;
  int straighten_sweeps = 8;

  // Routing: nodes with 2..max_port_operands operands get one port per operand.
  int max_port_operands = 3;

  // Aspect: the top level's drawing is kept from being more than max_aspect times as wide as it
  // is tall by spreading its layers apart (rank separation up to max_rank_sep); 0 = off. For
  // overviews of a few dozen boxes, which would otherwise be one wide band that a window fits
  // to a thin strip. Only y changes: layers, order and x stay what they would be.
  double max_aspect = 0;
  double max_rank_sep = 480;

  // Incremental relayout on expand/collapse, and the per-level cache (entries).
  bool incremental = true;
  int cache_entries = 256;
  // Fraction of nodes that may change for an incremental relayout to be attempted.
  double incremental_max_changed = 0.1;

  // Wall-clock safety net for one Layout() call, in ms; 0 = none. Phases that hit it stop
  // early with a valid (less refined) layout and set stats.deadline_hit.
  double time_budget_ms = 0;

  uint64_t Hash() const;
};

// Per-call inputs that are not part of the result's identity: cancellation and the partial
// result callback. Not cached, not hashed.
struct LayoutRequest {
  const CancelToken* cancel = nullptr;
  // Called (on the calling thread) with an early, usable picture of the top level while the
  // engine refines it. Only for large graphs; see LayoutOptions::partial_min_nodes.
  std::function<void(std::shared_ptr<const LayoutResult>)> on_partial;
};

// The engine (see the top of this file): lays out nested LayoutGraphs, caches levels by content
// and relays expand/collapse incrementally. Does not own a thread; LayoutJob runs it on one.
class LayeredLayout {
 public:
  explicit LayeredLayout(LayoutOptions options = {});
  ~LayeredLayout();
  LayeredLayout(const LayeredLayout&) = delete;
  LayeredLayout& operator=(const LayeredLayout&) = delete;

  const LayoutOptions& options() const { return options_; }
  void set_options(const LayoutOptions& options);

  // Lays out `graph` and its expanded clusters. Returns CancelledError when request.cancel
  // fires. Results of levels are cached by content; a level whose structure matches the
  // previous layout of the same level (same keys and edges) but whose nodes changed size or
  // expansion is relaid incrementally.
  absl::StatusOr<std::shared_ptr<const LayoutResult>> Layout(const LayoutGraph& graph,
                                                             const LayoutRequest& request = {});

  void ClearCache();

 private:
  struct Memo;
  struct Run;
  friend struct Run;

  absl::StatusOr<std::shared_ptr<const LayoutResult>> LayoutLevel(const LayoutGraph& graph,
                                                                  const std::string& path,
                                                                  Run* run);

  LayoutOptions options_;
  uint64_t options_hash_ = 0;
  // Fingerprint -> result (inside its memo), most recently used last.
  std::list<std::pair<uint64_t, std::shared_ptr<const Memo>>> lru_;
  std::unordered_map<uint64_t, decltype(lru_)::iterator> cache_;
  // Level path -> what incremental relayout needs from the previous layout of that level.
  std::unordered_map<std::string, std::shared_ptr<const Memo>> memos_;
};

// One-shot convenience: a fresh engine, no cache.
absl::StatusOr<std::shared_ptr<const LayoutResult>> LayoutOnce(const LayoutGraph& graph,
                                                               const LayoutOptions& options = {});

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_LAYERED_LAYOUT_H_
