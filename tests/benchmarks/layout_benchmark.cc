// Layout benchmark: the layered engine (viewer/graph/layered_layout.h) against Graphviz dot in
// the same run, on the largest computations of the attention-model corpus file and on
// synthetic HLO-shaped DAGs of 500, 2,000, 10,000 and 100,000 nodes (generator of
// large-graph-layout.md section 2.1, family "g", fixed seed). Dot runs in a child process
// (libgvc, default options, same box sizes and separations) with a timeout; when it times out
// the table says so. Quality metrics (section 3.3) are computed by the same code for both
// layouts from the drawn geometry: crossings, total edge length, bends, area, rank span.
// Also measured: expanding a fusion inside a 10,000-node graph (time, nodes keeping layer and
// order, displacement), the latency of cancelling a 100,000-node layout, and the op_name scope
// overview of the corpus file's largest computation (a 4,467-node while body): its first
// readable frame and final layout against the whole ungrouped layout in the same run.
//
// Not a Google Benchmark binary: dot takes seconds to minutes, so each graph runs a fixed
// number of times and one table with ratios from this run is printed.
//   hlowb_layout_benchmark [--quick] [--dot_timeout=SECONDS] [--runs=N] [--filter=SUBSTRING]
//                          [--benchmark_filter=REGEX]
// --benchmark_filter (scripts/bench passes it to every benchmark) selects cases by regex; other
// --benchmark_* flags are ignored. The expand, cancel and overview measurements are the cases
// named "expand", "cancel" and "overview".
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "viewer/graph/graphviz_layout.h"
#include "viewer/graph/hlo_graph.h"
#include "viewer/graph/layered_layout.h"
#include "viewer/graph/layout_graph.h"
#include "viewer/graph/layout_job.h"

namespace hlowb::graph {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// ---------------------------------------------------------------------------------------------
// Synthetic HLO-shaped DAGs (large-graph-layout.md 2.1): layers of random width 1..2w-1 with
// w = 1.5 N^(1/3); each non-source node takes 1-3 operands (45/40/15 %) from the previous 1-4
// layers, 80 % of them from a nearby lane, 3 % skip edges 5-30 layers back; 4 % of nodes are
// extra parameters/constants; max(2, N/1500) hubs with 100-400 users in the following layers;
// dead ends get a user 1-3 layers down, remaining sinks feed a ROOT tuple; labels of 1-3 lines.
// ---------------------------------------------------------------------------------------------

// `global_hubs` gives family "h": hubs are sources on the first layer used all over the graph.
LayoutGraph Synthetic(int n, uint32_t seed, bool global_hubs = false) {
  std::mt19937_64 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto prob = [&]() { return std::uniform_real_distribution<double>(0, 1)(rng); };
  LayoutGraph g;
  g.name = (global_hubs ? "h" : "g") + std::to_string(n);
  int w = std::max(1, static_cast<int>(std::lround(1.5 * std::cbrt(static_cast<double>(n)))));
  std::vector<std::vector<int>> layers;
  std::vector<int> layer_of;
  static const char* kOps[] = {"add",       "multiply",  "fusion",  "dot",    "reshape",
                               "broadcast", "transpose", "convert", "select", "reduce"};
  auto add = [&](int layer) {
    int id = g.node_count();
    std::vector<std::string> label = {std::string(kOps[uni(0, 9)]) + "." + std::to_string(id)};
    int lines = uni(1, 3);
    if (lines >= 2)
      label.push_back("f32[" + std::to_string(uni(1, 4096)) + "," + std::to_string(uni(1, 1024)) +
                      "]{1,0}");
    if (lines >= 3) label.push_back("dimensions={" + std::to_string(uni(0, 3)) + "}");
    auto [bw, bh] = EstimateTextSize(label);
    g.AddNode("n" + std::to_string(id), bw, bh);
    g.nodes[id].label = std::move(label);
    layer_of.push_back(layer);
    layers[layer].push_back(id);
    return id;
  };
  int target = n - 1;
  while (g.node_count() < target) {
    int width = uni(1, 2 * w - 1);
    layers.emplace_back();
    int l = static_cast<int>(layers.size()) - 1;
    for (int i = 0; i < width && g.node_count() < target; ++i) {
      int v = add(l);
      if (l == 0 || prob() < 0.04) continue;
      double k_roll = prob();
      int k = k_roll < 0.45 ? 1 : k_roll < 0.85 ? 2 : 3;
      for (int j = 0; j < k; ++j) {
        int src;
        if (prob() < 0.03 && l > 5) {
          auto& pl = layers[l - uni(5, std::min(30, l))];
          if (pl.empty()) continue;
          src = pl[uni(0, static_cast<int>(pl.size()) - 1)];
        } else {
          auto& pl = layers[l - uni(1, std::min(4, l))];
          if (pl.empty()) continue;
          if (prob() < 0.8) {
            double frac = static_cast<double>(i) / std::max(1, width - 1);
            int c = static_cast<int>(std::lround(frac * (pl.size() - 1))) + uni(-1, 1);
            src = pl[std::clamp(c, 0, static_cast<int>(pl.size()) - 1)];
          } else {
            src = pl[uni(0, static_cast<int>(pl.size()) - 1)];
          }
        }
        g.AddEdge(src, v, j);
      }
    }
  }
  int nl = static_cast<int>(layers.size());
  int hubs = std::max(2, n / 1500);
  for (int h = 0; h < hubs; ++h) {
    int hl = global_hubs ? 0 : uni(0, std::max(0, nl / 2));
    if (layers[hl].empty()) continue;
    int hub = layers[hl][uni(0, static_cast<int>(layers[hl].size()) - 1)];
    int users = uni(100, 400);
    for (int u = 0; u < users; ++u) {
      int ul = global_hubs ? uni(1, nl - 1) : std::min(nl - 1, hl + uni(1, 6));
      if (ul <= layer_of[hub] || layers[ul].empty()) continue;
      g.AddEdge(hub, layers[ul][uni(0, static_cast<int>(layers[ul].size()) - 1)], 3);
    }
  }
  std::vector<int> outdeg(g.node_count(), 0);
  for (const LayoutEdge& e : g.edges) ++outdeg[e.src];
  int n0 = g.node_count();
  for (int v = 0; v < n0; ++v) {
    if (outdeg[v]) continue;
    int ul = layer_of[v] + uni(1, 3);
    if (ul < nl && !layers[ul].empty() && prob() < 0.7) {
      g.AddEdge(v, layers[ul][uni(0, static_cast<int>(layers[ul].size()) - 1)], 0);
      ++outdeg[v];
    }
  }
  int root = g.AddNode("ROOT", 120, 36);
  g.nodes[root].label = {"ROOT tuple"};
  int op = 0;
  for (int v = 0; v < n0; ++v) {
    if (!outdeg[v]) g.AddEdge(v, root, op++);
  }
  return g;
}

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

struct Args {
  bool quick = false;
  double dot_timeout = 120;  // dot needs 30-70 s on the 2,000-node graph here
  int runs = 5;
  std::string filter;
  std::string regex;
};

struct Case {
  std::string name;
  std::string source;  // "corpus" or "synthetic"
  std::shared_ptr<LayoutGraph> graph;
  int instructions = 0;
};

struct EngineRun {
  bool ok = false;
  double median_ms = 0;
  double first_picture_ms = -1;
  LayoutStats stats;
  LayoutMetrics metrics;
};

struct DotRun {
  std::string status;  // "ok", "timed out", error text
  double ms = 0;
  LayoutMetrics metrics;
};

EngineRun RunEngine(const LayoutGraph& g, int runs) {
  EngineRun out;
  std::vector<double> times;
  std::shared_ptr<const LayoutResult> last;
  for (int i = 0; i < runs; ++i) {
    LayoutOptions o;
    o.cache_entries = 0;
    LayeredLayout engine(o);
    LayoutRequest req;
    double first = -1;
    auto t0 = Clock::now();
    req.on_partial = [&](std::shared_ptr<const LayoutResult>) {
      if (first < 0) first = Ms(t0);
    };
    auto r = engine.Layout(g, req);
    double ms = Ms(t0);
    if (!r.ok()) {
      std::fprintf(stderr, "layout failed: %s\n", std::string(r.status().message()).c_str());
      return out;
    }
    times.push_back(ms);
    if (first >= 0) out.first_picture_ms = first;
    last = *r;
  }
  std::sort(times.begin(), times.end());
  out.ok = true;
  out.median_ms = times[times.size() / 2];
  out.stats = last->stats;
  out.metrics = MeasureLayout(Flatten(g, *last));
  return out;
}

DotRun RunDot(const LayoutGraph& g, double timeout, const std::string& extra) {
  DotRun out;
  GraphvizOptions o;
  o.timeout_seconds = timeout;
  o.max_nodes = 0;
  o.dot.extra_graph_attributes = extra;
  if (!extra.empty()) o.dot.splines = "polyline";
  auto t0 = Clock::now();
  auto r = GraphvizLayout(g, o);
  out.ms = Ms(t0);
  if (r.ok()) {
    out.status = "ok";
    out.metrics = MeasureLayout(Flatten(g, **r));
  } else if (r.status().code() == absl::StatusCode::kDeadlineExceeded) {
    out.status = "timed out";
  } else {
    out.status = std::string(r.status().message());
  }
  return out;
}

std::string Fmt(double v, const char* f = "%.0f") {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string Ratio(double a, double b) {
  if (b <= 0) return a <= 0 ? "1.00" : "-";
  return Fmt(a / b, "%.2f");
}

// Expanding a fusion of `fusion_nodes` nodes inside a synthetic graph: time of the incremental
// relayout, share of other nodes keeping their layer (shifted below the cluster) and relative
// order, and their mean horizontal displacement in node widths.
void ExpandCase(int n, int fusion_nodes) {
  LayoutGraph g = Synthetic(n, 1);
  auto child = std::make_shared<LayoutGraph>(Synthetic(fusion_nodes, 7));
  child->name = "fused";
  for (int i = 0; i < child->node_count(); ++i) child->nodes[i].key = "f" + std::to_string(i);
  child->inputs.push_back({0, 0});
  child->outputs.push_back(child->node_count() - 1);
  int f = g.AddNode("fusion", 110, 36);
  g.nodes[f].expandable = true;
  g.nodes[f].child = child;
  g.AddEdge(n / 2, f, 0);
  g.AddEdge(f, n / 2 + 40, 2);
  LayeredLayout engine;
  auto t0 = Clock::now();
  auto before = engine.Layout(g);
  double full_ms = Ms(t0);
  if (!before.ok()) return;
  LayoutGraph expanded = g;
  expanded.nodes[f].expanded = true;
  t0 = Clock::now();
  auto after = engine.Layout(expanded);
  double expand_ms = Ms(t0);
  if (!after.ok()) return;
  t0 = Clock::now();
  auto collapsed = engine.Layout(g);
  double collapse_ms = Ms(t0);
  const LayoutResult& a = **before;
  const LayoutResult& b = **after;
  int delta = b.nodes[f].layer_span - a.nodes[f].layer_span;
  int fl = a.nodes[f].layer;
  int kept_layer = 0, kept_order = 0, total = 0;
  double disp = 0, width = 0;
  // Relative order: each node's nearest untouched neighbours in its layer stay the same.
  std::vector<std::vector<int>> la(a.layer_count), lb(b.layer_count);
  for (int v = 0; v < g.node_count(); ++v) {
    if (v == f) continue;
    la[a.nodes[v].layer].push_back(v);
    lb[b.nodes[v].layer].push_back(v);
  }
  auto by_order = [](const LayoutResult& r) {
    return [&r](int x, int y) { return r.nodes[x].order < r.nodes[y].order; };
  };
  for (auto& l : la) std::sort(l.begin(), l.end(), by_order(a));
  for (auto& l : lb) std::sort(l.begin(), l.end(), by_order(b));
  std::vector<int> left_a(g.node_count(), -1), left_b(g.node_count(), -1);
  for (auto& l : la) {
    for (size_t i = 1; i < l.size(); ++i) left_a[l[i]] = l[i - 1];
  }
  for (auto& l : lb) {
    for (size_t i = 1; i < l.size(); ++i) left_b[l[i]] = l[i - 1];
  }
  for (int v = 0; v < g.node_count(); ++v) {
    if (v == f) continue;
    ++total;
    int expected = a.nodes[v].layer + (a.nodes[v].layer > fl ? delta : 0);
    if (b.nodes[v].layer == expected) ++kept_layer;
    if (left_a[v] == left_b[v]) ++kept_order;
    disp += std::abs(b.nodes[v].x - a.nodes[v].x);
    width += a.nodes[v].width;
  }
  std::printf(
      "\nExpand a %d-node fusion inside a %d-node graph: full layout %.0f ms; expand %.1f ms "
      "(incremental: %s); collapse %.1f ms (%s); nodes keeping layer %.1f%%, keeping their left "
      "neighbour %.1f%%; mean x displacement %.2f node widths (cluster is %.0f pt wide).\n"
      "Expand phases: cluster contents + parent: layering %.1f ms, ordering %.1f ms, "
      "coordinates %.1f ms, routing %.1f ms.\n",
      fusion_nodes, n, full_ms, expand_ms, b.stats.incremental ? "yes" : "no", collapse_ms,
      collapsed.ok() && collapsed->get() == before->get() ? "restored from cache" : "relaid",
      100.0 * kept_layer / total, 100.0 * kept_order / total, disp / width, b.nodes[f].width,
      b.stats.ms_layering, b.stats.ms_ordering, b.stats.ms_coordinates, b.stats.ms_routing);
}

bool Selected(const Args& args, const std::string& name) {
  if (!args.filter.empty() && name.find(args.filter) == std::string::npos) return false;
  if (!args.regex.empty()) {
    try {
      return std::regex_search(name, std::regex(args.regex));
    } catch (const std::regex_error&) {
      return false;
    }
  }
  return true;
}

void AddCorpusFile(const std::string& file_name, size_t max_computations, int min_instructions,
                   std::vector<Case>* cases) {
  fs::path file = fs::path(HLOWB_CORPUS_DIR) / "benchmarks" / file_name;
  static std::vector<std::unique_ptr<Module>> modules;  // graphs point into them
  auto text = ReadFileToString(file.string());
  if (!text.ok()) {
    std::fprintf(stderr, "corpus file not found: %s (its rows are skipped)\n", file.c_str());
    return;
  }
  auto m = ParseModule(*text);
  if (!m.ok()) {
    std::fprintf(stderr, "cannot parse %s: %s\n", file.c_str(),
                 std::string(m.status().message()).c_str());
    return;
  }
  modules.push_back(std::move(*m));
  std::vector<const Computation*> comps;
  for (const auto& c : modules.back()->computations()) {
    if (c->instruction_count() >= min_instructions) comps.push_back(c.get());
  }
  std::stable_sort(comps.begin(), comps.end(), [](auto* a, auto* b) {
    return a->instruction_count() > b->instruction_count();
  });
  std::string short_name = file_name.substr(file_name.rfind("__") + 2);
  short_name = short_name.substr(0, short_name.find('.'));
  for (size_t i = 0; i < comps.size() && i < max_computations; ++i) {
    auto hg = HloGraph::Build(*comps[i]);
    if (!hg.ok()) continue;
    Case c;
    c.name = short_name + ":" + comps[i]->name();
    if (c.name.size() > 40) c.name = c.name.substr(0, 37) + "...";
    c.source = "corpus";
    c.graph = std::make_shared<LayoutGraph>(*hg->graph());
    c.instructions = comps[i]->instruction_count();
    cases->push_back(std::move(c));
  }
}

// The op_name scope overview of the largest computation of `file_name` (the 4,467-node while
// body of the attention model): today's whole ungrouped layout, then the grouped overview the
// graph view opens with. First readable frame = building the grouped graph (HloGraph with
// grouping) + laying out the collapsed overview; final layout = when the engine delivers its
// final result for it (the same moment: the overview is small enough to need no early picture).
// Also: expanding the largest box in place (incremental relayout: other nodes keeping their left
// neighbour) and the layout with every box expanded, and the drawing's aspect ratio.
void OverviewCase(const std::string& file_name, int runs) {
  fs::path file = fs::path(HLOWB_CORPUS_DIR) / "benchmarks" / file_name;
  auto text = ReadFileToString(file.string());
  if (!text.ok()) {
    std::fprintf(stderr, "corpus file not found: %s (the overview row is skipped)\n", file.c_str());
    return;
  }
  auto module = ParseModule(*text);
  if (!module.ok()) return;
  const Computation* comp = nullptr;
  for (const auto& c : (*module)->computations()) {
    if (!comp || c->instruction_count() > comp->instruction_count()) comp = c.get();
  }
  if (!comp) return;
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  auto aspect = [](const LayoutResult& r) { return r.width / std::max(1.0, r.height); };
  // Today: the whole graph, ungrouped (what "Show whole graph" laid out).
  std::vector<double> flat_ms, flat_first;
  int flat_nodes = 0;
  double flat_aspect = 0;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto hg = HloGraph::Build(*comp);
    if (!hg.ok()) return;
    LayoutOptions o;
    o.cache_entries = 0;
    LayeredLayout engine(o);
    LayoutRequest req;
    double first = -1;
    req.on_partial = [&](std::shared_ptr<const LayoutResult>) {
      if (first < 0) first = Ms(t0);
    };
    auto r = engine.Layout(*hg->graph(), req);
    if (!r.ok()) return;
    double ms = Ms(t0);
    flat_ms.push_back(ms);
    flat_first.push_back(first >= 0 ? first : ms);
    flat_nodes = hg->graph()->node_count();
    flat_aspect = aspect(**r);
  }
  // The grouped overview, collapsed.
  HloGraphOptions grouped;
  grouped.group_min_nodes = kDefaultGroupMinNodes;
  std::vector<double> build_ms, first_ms, final_ms;
  std::shared_ptr<const HloGraph> overview;
  std::shared_ptr<const LayoutResult> overview_result;
  for (int i = 0; i < runs; ++i) {
    auto t0 = Clock::now();
    auto hg = HloGraph::Build(*comp, grouped);
    if (!hg.ok()) return;
    double built = Ms(t0);
    LayoutOptions o;
    o.cache_entries = 0;
    o.max_aspect = kGroupedMaxAspect;  // as the graph view lays grouped graphs out
    LayeredLayout engine(o);
    LayoutRequest req;
    double first = -1;
    req.on_partial = [&](std::shared_ptr<const LayoutResult>) {
      if (first < 0) first = Ms(t0);
    };
    auto r = engine.Layout(*hg->graph(), req);
    if (!r.ok()) return;
    double ms = Ms(t0);
    build_ms.push_back(built);
    first_ms.push_back(first >= 0 ? first : ms);
    final_ms.push_back(ms);
    overview = std::make_shared<const HloGraph>(*std::move(hg));
    overview_result = *r;
  }
  const ScopeGrouping* grouping = overview->grouping();
  if (grouping == nullptr) {
    std::printf("\nOverview of %s: not grouped (no op_name scopes)\n", comp->name().c_str());
    return;
  }
  const LayoutGraph& top = *overview->graph();
  // Expanding the largest top-level box in place, on an engine that laid out the overview.
  int largest = -1;
  for (int b : grouping->top_boxes()) {
    if (largest < 0 || grouping->boxes()[b].size > grouping->boxes()[largest].size) largest = b;
  }
  LayoutOptions view_options;
  view_options.max_aspect = kGroupedMaxAspect;
  LayeredLayout engine(view_options);
  auto before = engine.Layout(top);
  auto expanded = overview->WithExpanded(grouping->BoxPath(largest), true);
  double expand_ms = -1, kept = -1;
  bool incremental = false;
  int inside = 0;  // items drawn inside the expanded box
  if (expanded.ok()) {
    for (const LayoutNode& node : expanded->graph()->nodes) {
      if (node.expanded && node.child) inside = node.child->node_count();
    }
  }
  if (before.ok() && expanded.ok()) {
    auto t0 = Clock::now();
    auto after = engine.Layout(*expanded->graph());
    expand_ms = Ms(t0);
    if (after.ok()) {
      incremental = (*after)->stats.incremental;
      // Other nodes keeping their left neighbour in their layer.
      const LayoutResult& a = **before;
      const LayoutResult& b = **after;
      const int n = top.node_count();
      auto left_of = [n](const LayoutResult& r, int v) {
        int best = -1;
        for (int u = 0; u < n; ++u) {
          if (r.nodes[u].layer != r.nodes[v].layer || r.nodes[u].order >= r.nodes[v].order)
            continue;
          if (best < 0 || r.nodes[u].order > r.nodes[best].order) best = u;
        }
        return best;
      };
      int same = 0, total = 0;
      for (int v = 0; v < n; ++v) {
        if (top.nodes[v].key == grouping->boxes()[largest].key) continue;
        ++total;
        same += left_of(a, v) == left_of(b, v);
      }
      kept = total ? 100.0 * same / total : 100.0;
    }
  }
  // Every box expanded.
  HloGraph all = *overview;
  for (size_t b = 0; b < grouping->boxes().size(); ++b) {
    auto x = all.WithExpanded(grouping->BoxPath(static_cast<int>(b)), true);
    if (x.ok()) all = *std::move(x);
  }
  auto t0 = Clock::now();
  auto all_r = LayoutOnce(*all.graph(), view_options);
  double all_ms = Ms(t0);
  std::printf(
      "\n## op_name scope overview (first readable frame <= 1 s, final layout <= 2 s)\n\n"
      "| graph | nodes | today: whole graph ms | today: first picture ms | today: aspect w/h | "
      "overview items (boxes) | build + group ms | first readable frame ms | final layout ms "
      "| overview aspect w/h | expand largest box ms | others keeping left neighbour | all boxes "
      "expanded ms |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n"
      "| overview %s (%d instr.) | %d | %.1f | %.1f | %.1f | %d (%zu) | %.1f | %.1f | %.1f | %.2f "
      "| %.1f (%s, %d items inside) | %.1f%% | %.1f |\n",
      comp->name().c_str(), comp->instruction_count(), flat_nodes, median(flat_ms),
      median(flat_first), flat_aspect, top.node_count(), grouping->top_boxes().size(),
      median(build_ms), median(first_ms), median(final_ms), aspect(*overview_result), expand_ms,
      incremental ? "incremental" : "full", inside, kept, all_r.ok() ? all_ms : -1.0);
  std::printf("\nTop-level boxes:");
  for (int b : grouping->top_boxes()) {
    const ScopeBox& box = grouping->boxes()[b];
    std::printf(" %s (%d);", box.title.c_str(), box.size);
  }
  std::printf(" and %zu loose nodes.\n", grouping->top_members().size());
  std::printf(
      "First readable frame vs today's whole layout: %.2fx the time; goals met: first frame %s, "
      "final %s.\n",
      median(first_ms) / median(flat_ms), median(first_ms) <= 1000 ? "yes" : "no",
      median(final_ms) <= 2000 ? "yes" : "no");
}

// Cancel latency: a 100,000-node layout on a LayoutJob is cancelled at several points (during
// layering, ordering, coordinates, routing); the time until the worker is idle is reported.
void CancelCase() {
  auto g = std::make_shared<LayoutGraph>(Synthetic(100000, 1));
  std::string line;
  double worst = 0;
  for (int delay_ms : {100, 700, 1500, 2500, 3500}) {
    LayoutJob job([](const LayoutJob::Update&) {});
    job.Request(g);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    auto t0 = Clock::now();
    job.Cancel();
    job.WaitIdle(std::chrono::seconds(60));
    double ms = Ms(t0);
    worst = std::max(worst, ms);
    line +=
        (line.empty() ? "" : ", ") + Fmt(ms, "%.1f") + " ms at " + std::to_string(delay_ms) + " ms";
  }
  std::printf(
      "\nCancel latency on a 100000-node layout (request to worker idle): %s; worst %.1f ms.\n",
      line.c_str(), worst);
}

std::vector<Case> Cases(const Args& args) {
  std::vector<Case> cases;
  // Corpus: the largest computations of the attention-model file, and the SSD-MobileNet entry
  // (a chain-like CNN, where edge length is the hard part).
  AddCorpusFile("xla__service__attention_model.hlo", args.quick ? 1 : 4, 500, &cases);
  if (!args.quick)
    AddCorpusFile("xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo", 1, 500, &cases);
  struct Synth {
    int n;
    uint32_t seed;
    bool h;
  };
  std::vector<Synth> synth = {{500, 1, false},   {500, 2, false},  {500, 3, false},
                              {500, 1, true},    {2000, 1, false}, {10000, 1, false},
                              {100000, 1, false}};
  if (args.quick) synth = {{500, 1, false}, {2000, 1, false}, {10000, 1, false}};
  for (const Synth& sy : synth) {
    Case c;
    c.name = std::string("synthetic ") + (sy.h ? "h" : "g") + std::to_string(sy.n) +
             (sy.seed != 1 ? " seed " + std::to_string(sy.seed) : "");
    c.source = "synthetic";
    c.graph = std::make_shared<LayoutGraph>(Synthetic(sy.n, sy.seed, sy.h));
    cases.push_back(std::move(c));
  }
  std::erase_if(cases, [&](const Case& c) { return !Selected(args, c.name); });
  return cases;
}

int Main(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--quick") {
      args.quick = true;
    } else if (a.rfind("--dot_timeout=", 0) == 0) {
      args.dot_timeout = std::atof(a.c_str() + 14);
    } else if (a.rfind("--runs=", 0) == 0) {
      args.runs = std::max(1, std::atoi(a.c_str() + 7));
    } else if (a.rfind("--filter=", 0) == 0) {
      args.filter = a.substr(9);
    } else if (a.rfind("--benchmark_filter=", 0) == 0) {
      args.regex = a.substr(19);
    }
  }
  std::printf("# Layered layout vs Graphviz dot %s (same run, dot timeout %.0f s)\n\n", "2.43",
              args.dot_timeout);
  std::printf(
      "| graph | nodes | edges | ours ms | first picture ms | dot ms | dot/ours | crossings "
      "ours / dot | ratio | length ratio | bends ours / dot | area ratio | rank span ratio |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> log_ratios, separate_ratios;
  double worst = 0;
  std::vector<std::string> notes;
  for (const Case& c : Cases(args)) {
    const LayoutGraph& g = *c.graph;
    int runs = g.node_count() >= 50000 ? std::min(args.runs, 3) : args.runs;
    EngineRun ours = RunEngine(g, runs);
    DotRun dot = RunDot(g, args.dot_timeout, "");
    std::string label = c.name;
    if (c.instructions) label += " (" + std::to_string(c.instructions) + " instr.)";
    std::string row = "| " + label + " | " + std::to_string(g.node_count()) + " | " +
                      std::to_string(g.edge_count()) + " | " + Fmt(ours.median_ms, "%.1f") + " | " +
                      (ours.first_picture_ms >= 0 ? Fmt(ours.first_picture_ms) : "-") + " | ";
    const LayoutMetrics& m = ours.metrics;
    if (dot.status == "ok") {
      const LayoutMetrics& d = dot.metrics;
      double cr = d.crossings > 0 ? static_cast<double>(m.crossings) / d.crossings
                                  : (m.crossings == 0 ? 1.0 : 0.0);
      if (g.node_count() <= 2500 && d.crossings > 0) {
        log_ratios.push_back(std::log(std::max(cr, 1e-3)));
        worst = std::max(worst, cr);
      }
      row += Fmt(dot.ms) + " | " + Fmt(dot.ms / ours.median_ms, "%.0fx") + " | " +
             std::to_string(m.crossings) + " / " + std::to_string(d.crossings) + " | " +
             Ratio(static_cast<double>(m.crossings), static_cast<double>(d.crossings)) + " | " +
             Ratio(m.edge_length, d.edge_length) + " | " + std::to_string(m.bends) + " / " +
             std::to_string(d.bends) + " | " + Ratio(m.area(), d.area()) + " | " +
             Ratio(static_cast<double>(m.rank_span), static_cast<double>(d.rank_span)) + " |";
    } else {
      row += dot.status + " (" + Fmt(dot.ms / 1000, "%.0f s") + ") | - | " +
             std::to_string(m.crossings) + " / - | - | - | " + std::to_string(m.bends) +
             " / - | - | - |";
    }
    std::printf("%s\n", row.c_str());
    std::fflush(stdout);
    if (dot.status == "ok") {
      // The same comparison with every edge drawn on its own (no shared hub dummies), and with
      // each x-placement start alone (the default keeps the better of the two per graph).
      const LayoutMetrics& d = dot.metrics;
      auto variant = [&](const char* what, LayoutOptions o) {
        auto r = LayoutOnce(g, o);
        if (!r.ok()) return;
        LayoutMetrics mv = MeasureLayout(Flatten(g, **r));
        if (o.hub_threshold == 0 && d.crossings > 0) {
          separate_ratios.push_back(std::log(std::max(
              1e-3, static_cast<double>(mv.crossings) / static_cast<double>(d.crossings))));
        }
        notes.push_back(c.name + ": " + what + ": crossings ratio " +
                        Ratio(static_cast<double>(mv.crossings), static_cast<double>(d.crossings)) +
                        ", length ratio " + Ratio(mv.edge_length, d.edge_length) + ", area ratio " +
                        Ratio(mv.area(), d.area()) + ", bends " + std::to_string(mv.bends));
      };
      LayoutOptions separate;
      separate.hub_threshold = 0;
      variant("without shared hub dummies", separate);
      LayoutOptions packed;
      packed.x_placement = XPlacement::kPacked;
      variant("x from packing only", packed);
      LayoutOptions bk;
      bk.x_placement = XPlacement::kBrandesKoepf;
      variant("x from Brandes-Koepf only", bk);
    }
    const LayoutStats& s = ours.stats;
    notes.push_back(
        c.name + ": layering " + Fmt(s.ms_layering, "%.1f") + " ms (" +
        std::to_string(s.ns_pivots) + " pivots, " + (s.ns_optimal ? "optimal" : "capped") +
        "), ordering " + Fmt(s.ms_ordering, "%.1f") + " ms (" + std::to_string(s.sweeps) +
        " sweeps" + (s.ordering_limited ? ", budget-limited" : "") + "), coordinates " +
        Fmt(s.ms_coordinates, "%.1f") + " ms, routing " + Fmt(s.ms_routing, "%.1f") + " ms; " +
        std::to_string(s.layers) + " layers, " + std::to_string(s.dummies) + " dummies");
    // Where default dot timed out, the fast settings of large-graph-layout.md give a reference.
    if (dot.status == "timed out" && g.node_count() <= 10000) {
      DotRun fast = RunDot(g, args.dot_timeout, "graph [nslimit=1, nslimit1=1, mclimit=0.1];");
      if (fast.status == "ok") {
        notes.push_back(
            c.name + ": dot fast (nslimit=1 nslimit1=1 mclimit=0.1 polyline) " + Fmt(fast.ms) +
            " ms, crossings " + std::to_string(fast.metrics.crossings) + " (ours/dot fast " +
            Ratio(static_cast<double>(m.crossings), static_cast<double>(fast.metrics.crossings)) +
            "), length ratio " + Ratio(m.edge_length, fast.metrics.edge_length) + ", area ratio " +
            Ratio(m.area(), fast.metrics.area()));
      } else {
        notes.push_back(c.name + ": dot fast settings: " + fast.status + " (" +
                        Fmt(fast.ms / 1000, "%.0f s") + ")");
      }
    }
  }
  std::printf("\n");
  for (const std::string& n : notes) std::printf("- %s\n", n.c_str());
  if (!log_ratios.empty()) {
    double s = 0;
    for (double v : log_ratios) s += v;
    std::printf(
        "\nCrossings ours/dot on graphs up to 2,500 nodes where dot finished: geometric mean "
        "%.2f, worst %.2f (goals: <= 1.2 and <= 1.5).\n",
        std::exp(s / log_ratios.size()), worst);
    double t = 0;
    for (double v : separate_ratios) t += v;
    if (!separate_ratios.empty()) {
      std::printf(
          "Without shared hub dummies (every edge drawn on its own): geometric mean %.2f.\n",
          std::exp(t / separate_ratios.size()));
    }
  }
  if (Selected(args, "expand")) ExpandCase(10000, 150);
  if (Selected(args, "overview")) {
    OverviewCase("xla__service__attention_model.hlo", args.quick ? 1 : args.runs);
  }
  if (Selected(args, "cancel") && !args.quick) CancelCase();
  return 0;
}

}  // namespace
}  // namespace hlowb::graph

int main(int argc, char** argv) { return hlowb::graph::Main(argc, argv); }
