#include "viewer/graph/layout_graph.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/support/strings.h"

namespace hlowb::graph {
namespace {

// 64-bit hashing with a fixed algorithm so fingerprints are the same in every run.
class Hasher {
 public:
  void Add(uint64_t v) {
    h_ ^= v + 0x9e3779b97f4a7c15ULL + (h_ << 6) + (h_ >> 2);
    h_ *= 0xff51afd7ed558ccdULL;
    h_ ^= h_ >> 33;
  }
  void Add(const std::string& s) {
    uint64_t f = 1469598103934665603ULL;
    for (unsigned char c : s) {
      f ^= c;
      f *= 1099511628211ULL;
    }
    Add(f);
    Add(s.size());
  }
  // Sizes are quantized to 1/64 pt so that harmless float noise does not change the hash.
  void AddSize(double v) { Add(static_cast<uint64_t>(std::llround(v * 64.0))); }
  uint64_t value() const { return h_; }

 private:
  uint64_t h_ = 0x6a09e667f3bcc908ULL;
};

void AddStructure(const LayoutGraph& g, Hasher* h) {
  h->Add(g.nodes.size());
  for (const LayoutNode& n : g.nodes) h->Add(n.key);
  h->Add(g.edges.size());
  for (const LayoutEdge& e : g.edges) {
    h->Add(static_cast<uint64_t>(e.src));
    h->Add(static_cast<uint64_t>(e.dst));
    h->Add(static_cast<uint64_t>(e.operand + 1));
    h->Add(static_cast<uint64_t>(e.kind));
    h->Add(static_cast<uint64_t>(e.src_port + 1));
  }
  h->Add(g.inputs.size());
  for (const ClusterPort& p : g.inputs) {
    h->Add(static_cast<uint64_t>(p.operand));
    h->Add(static_cast<uint64_t>(p.node));
  }
  h->Add(g.outputs.size());
  for (int o : g.outputs) h->Add(static_cast<uint64_t>(o));
}

uint64_t FingerprintImpl(const LayoutGraph& g,
                         std::unordered_map<const LayoutGraph*, uint64_t>* memo) {
  auto it = memo->find(&g);
  if (it != memo->end()) return it->second;
  Hasher h;
  AddStructure(g, &h);
  for (const LayoutNode& n : g.nodes) {
    h.AddSize(n.width);
    h.AddSize(n.height);
    bool expanded = n.expanded && n.child != nullptr;
    h.Add(expanded ? 1 : 0);
    if (expanded) h.Add(FingerprintImpl(*n.child, memo));
  }
  uint64_t v = h.value();
  memo->emplace(&g, v);
  return v;
}

absl::Status ValidateImpl(const LayoutGraph& g, int depth) {
  if (depth > 64) return absl::InvalidArgumentError("clusters nested more than 64 levels deep");
  std::unordered_set<std::string> keys;
  keys.reserve(g.nodes.size());
  for (int i = 0; i < g.node_count(); ++i) {
    const LayoutNode& n = g.nodes[i];
    if (!(n.width >= 0) || !(n.height >= 0) || !std::isfinite(n.width) ||
        !std::isfinite(n.height)) {
      return absl::InvalidArgumentError(
          StrCat("graph '", g.name, "': node ", i, " ('", n.key, "') has an invalid size"));
    }
    if (!keys.insert(n.key).second) {
      return absl::InvalidArgumentError(
          StrCat("graph '", g.name, "': duplicate node key '", n.key, "'"));
    }
    if (n.expanded) {
      if (n.child == nullptr) {
        return absl::InvalidArgumentError(
            StrCat("graph '", g.name, "': node '", n.key, "' is expanded but has no contents"));
      }
      absl::Status s = ValidateImpl(*n.child, depth + 1);
      if (!s.ok()) return s;
    }
  }
  for (int i = 0; i < g.edge_count(); ++i) {
    const LayoutEdge& e = g.edges[i];
    if (e.src < 0 || e.src >= g.node_count() || e.dst < 0 || e.dst >= g.node_count()) {
      return absl::InvalidArgumentError(
          StrCat("graph '", g.name, "': edge ", i, " refers to a missing node"));
    }
  }
  for (const ClusterPort& p : g.inputs) {
    if (p.node < 0 || p.node >= g.node_count()) {
      return absl::InvalidArgumentError(StrCat("graph '", g.name, "': bad input port node"));
    }
  }
  for (int o : g.outputs) {
    if (o < 0 || o >= g.node_count()) {
      return absl::InvalidArgumentError(StrCat("graph '", g.name, "': bad output port node"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int LayoutGraph::AddNode(std::string key, double width, double height) {
  LayoutNode n;
  n.key = std::move(key);
  n.width = width;
  n.height = height;
  nodes.push_back(std::move(n));
  return node_count() - 1;
}

int LayoutGraph::AddEdge(int src, int dst, int operand, EdgeKind kind) {
  LayoutEdge e;
  e.src = src;
  e.dst = dst;
  e.operand = operand;
  e.kind = kind;
  edges.push_back(std::move(e));
  return edge_count() - 1;
}

int LayoutGraph::OutputNode(int src_port) const {
  if (outputs.empty()) return -1;
  if (src_port >= 0 && src_port < static_cast<int>(outputs.size())) return outputs[src_port];
  return outputs[0];
}

int64_t LayoutGraph::TotalNodeCount() const {
  int64_t n = node_count();
  for (const LayoutNode& node : nodes) {
    if (node.expanded && node.child) n += node.child->TotalNodeCount();
  }
  return n;
}

absl::Status LayoutGraph::Validate() const { return ValidateImpl(*this, 0); }

uint64_t LayoutGraph::Fingerprint() const {
  std::unordered_map<const LayoutGraph*, uint64_t> memo;
  return FingerprintImpl(*this, &memo);
}

uint64_t LayoutGraph::StructureFingerprint() const {
  Hasher h;
  AddStructure(*this, &h);
  return h.value();
}

// ---------------------------------------------------------------------------------------------
// Curves
// ---------------------------------------------------------------------------------------------

std::vector<Point> SmoothPolyline(const std::vector<Point>& points) {
  std::vector<Point> out;
  if (points.empty()) return out;
  out.reserve(points.size() * 3);
  out.push_back(points[0]);
  for (size_t i = 0; i + 1 < points.size(); ++i) {
    const Point& a = points[i];
    const Point& b = points[i + 1];
    double dy = (b.y - a.y) / 2;
    out.push_back({a.x, a.y + dy});
    out.push_back({b.x, b.y - dy});
    out.push_back(b);
  }
  return out;
}

std::vector<Point> FlattenCurve(const std::vector<Point>& curve, bool is_bezier,
                                int steps_per_segment) {
  if (!is_bezier || curve.size() < 4) return curve;
  std::vector<Point> out;
  out.reserve((curve.size() / 3) * steps_per_segment + 1);
  out.push_back(curve[0]);
  for (size_t i = 0; i + 3 < curve.size(); i += 3) {
    const Point& p0 = curve[i];
    const Point& p1 = curve[i + 1];
    const Point& p2 = curve[i + 2];
    const Point& p3 = curve[i + 3];
    bool straight = p0.x == p1.x && p1.x == p2.x && p2.x == p3.x;
    int steps = straight ? 1 : steps_per_segment;
    for (int k = 1; k <= steps; ++k) {
      double t = static_cast<double>(k) / steps;
      double u = 1 - t;
      double b0 = u * u * u, b1 = 3 * u * u * t, b2 = 3 * u * t * t, b3 = t * t * t;
      out.push_back({b0 * p0.x + b1 * p1.x + b2 * p2.x + b3 * p3.x,
                     b0 * p0.y + b1 * p1.y + b2 * p2.y + b3 * p3.y});
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Flatten
// ---------------------------------------------------------------------------------------------

namespace {

struct FlattenCtx {
  FlatLayout* out;
};

// Returns the flat index of each node of this level.
std::vector<int> FlattenLevel(const LayoutGraph& g, const LayoutResult& r, double ox, double oy,
                              const std::string& prefix, int depth, FlattenCtx* ctx) {
  std::vector<int> index(g.nodes.size(), -1);
  std::vector<std::vector<int>> child_index(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size() && i < r.nodes.size(); ++i) {
    const NodeBox& b = r.nodes[i];
    FlatNode fn;
    fn.path = prefix.empty() ? g.nodes[i].key : prefix + "/" + g.nodes[i].key;
    fn.x = b.x + ox;
    fn.y = b.y + oy;
    fn.width = b.width;
    fn.height = b.height;
    fn.depth = depth;
    const LayoutResult* child =
        i < r.children.size() && r.children[i] ? r.children[i].get() : nullptr;
    fn.cluster_frame = child != nullptr && g.nodes[i].expanded && g.nodes[i].child;
    index[i] = static_cast<int>(ctx->out->nodes.size());
    ctx->out->nodes.push_back(fn);
    if (fn.cluster_frame) {
      child_index[i] = FlattenLevel(*g.nodes[i].child, *child, ox + b.content_origin.x,
                                    oy + b.content_origin.y, fn.path, depth + 1, ctx);
    }
  }
  for (size_t e = 0; e < g.edges.size() && e < r.edges.size(); ++e) {
    const LayoutEdge& le = g.edges[e];
    FlatEdge fe;
    fe.src = index[le.src];
    fe.dst = index[le.dst];
    // Attribute the endpoint to the port node inside an expanded cluster when there is one.
    if (!child_index[le.dst].empty()) {
      const LayoutGraph& c = *g.nodes[le.dst].child;
      for (const ClusterPort& p : c.inputs) {
        if (p.operand == le.operand) {
          fe.dst = child_index[le.dst][p.node];
          break;
        }
      }
    }
    if (!child_index[le.src].empty()) {
      const LayoutGraph& c = *g.nodes[le.src].child;
      const int out = c.OutputNode(le.src_port);
      if (out >= 0 && out < static_cast<int>(child_index[le.src].size())) {
        fe.src = child_index[le.src][out];
      }
    }
    const EdgeRoute& route = r.edges[e];
    fe.is_bezier = !route.bezier.empty();
    fe.curve = fe.is_bezier ? route.bezier : route.points;
    for (Point& p : fe.curve) {
      p.x += ox;
      p.y += oy;
    }
    ctx->out->edges.push_back(std::move(fe));
  }
  return index;
}

}  // namespace

FlatLayout Flatten(const LayoutGraph& graph, const LayoutResult& result) {
  FlatLayout out;
  FlattenCtx ctx{&out};
  FlattenLevel(graph, result, 0, 0, "", 0, &ctx);
  out.width = result.width;
  out.height = result.height;
  return out;
}

// ---------------------------------------------------------------------------------------------
// Metrics
// ---------------------------------------------------------------------------------------------

namespace {

// x of a y-monotone polyline at height y (first crossing at or after *hint, which advances so
// that increasing y values cost one walk); nearest end when out of range.
double XAtY(const std::vector<Point>& pts, double y, size_t* hint) {
  for (size_t i = *hint; i + 1 < pts.size(); ++i) {
    double y0 = pts[i].y, y1 = pts[i + 1].y;
    if ((y0 <= y && y <= y1) || (y1 <= y && y <= y0)) {
      *hint = i;
      if (y1 == y0) return pts[i].x;
      double t = (y - y0) / (y1 - y0);
      return pts[i].x + t * (pts[i + 1].x - pts[i].x);
    }
  }
  for (size_t i = 0; i + 1 < pts.size() && i < *hint; ++i) {
    double y0 = pts[i].y, y1 = pts[i + 1].y;
    if ((y0 <= y && y <= y1) || (y1 <= y && y <= y0)) {
      if (y1 == y0) return pts[i].x;
      double t = (y - y0) / (y1 - y0);
      return pts[i].x + t * (pts[i + 1].x - pts[i].x);
    }
  }
  if (pts.empty()) return 0;
  return std::abs(pts.front().y - y) < std::abs(pts.back().y - y) ? pts.front().x : pts.back().x;
}

int64_t Quantize(double v) { return std::llround(v * 100.0); }

struct Segment {
  int rank;
  int64_t x1;
  int64_t x2;
  bool operator<(const Segment& o) const {
    if (rank != o.rank) return rank < o.rank;
    if (x1 != o.x1) return x1 < o.x1;
    return x2 < o.x2;
  }
  bool operator==(const Segment& o) const { return rank == o.rank && x1 == o.x1 && x2 == o.x2; }
};

}  // namespace

LayoutMetrics MeasureLayout(const FlatLayout& layout) {
  LayoutMetrics m;
  // Rank levels: distinct node-centre y values (within half a point).
  std::vector<double> ys;
  double min_x = 1e300, max_x = -1e300, min_y = 1e300, max_y = -1e300;
  for (const FlatNode& n : layout.nodes) {
    min_x = std::min(min_x, n.x - n.width / 2);
    max_x = std::max(max_x, n.x + n.width / 2);
    min_y = std::min(min_y, n.y - n.height / 2);
    max_y = std::max(max_y, n.y + n.height / 2);
    if (!n.cluster_frame) ys.push_back(n.y);
  }
  if (!layout.nodes.empty()) {
    m.width = max_x - min_x;
    m.height = max_y - min_y;
  }
  std::sort(ys.begin(), ys.end());
  std::vector<double> levels;
  for (double y : ys) {
    if (levels.empty() || y - levels.back() > 0.5) levels.push_back(y);
  }
  m.ranks = static_cast<int>(levels.size());
  if (levels.size() < 2) return m;
  auto rank_of = [&](double y) {
    auto it = std::lower_bound(levels.begin(), levels.end(), y);
    if (it == levels.end()) return static_cast<int>(levels.size()) - 1;
    int i = static_cast<int>(it - levels.begin());
    if (i > 0 && y - levels[i - 1] < *it - y) --i;
    return i;
  };

  std::vector<Segment> segs;
  std::vector<double> xs;
  for (const FlatEdge& e : layout.edges) {
    if (e.src < 0 || e.dst < 0 || e.curve.empty()) continue;
    std::vector<Point> pts = FlattenCurve(e.curve, e.is_bezier);
    const FlatNode& s = layout.nodes[e.src];
    const FlatNode& t = layout.nodes[e.dst];
    Point sp = s.cluster_frame ? pts.front() : Point{s.x, s.y};
    Point tp = t.cluster_frame ? pts.back() : Point{t.x, t.y};
    int rs = rank_of(sp.y), rt = rank_of(tp.y);
    if (rs == rt) continue;
    if (rs > rt) {
      std::swap(rs, rt);
      std::swap(sp, tp);
      std::reverse(pts.begin(), pts.end());
    }
    m.rank_span += rt - rs;
    xs.assign(rt - rs + 1, 0);
    xs[0] = sp.x;
    xs[rt - rs] = tp.x;
    size_t hint = 0;
    for (int r = rs + 1; r < rt; ++r) xs[r - rs] = XAtY(pts, levels[r], &hint);
    for (int r = rs; r < rt; ++r) {
      segs.push_back({r, Quantize(xs[r - rs]), Quantize(xs[r - rs + 1])});
    }
    for (int r = rs + 1; r < rt; ++r) {
      double before = (xs[r - rs] - xs[r - rs - 1]) / (levels[r] - levels[r - 1]);
      double after = (xs[r - rs + 1] - xs[r - rs]) / (levels[r + 1] - levels[r]);
      if (std::abs(before - after) > 0.02) ++m.bends;
    }
  }
  std::sort(segs.begin(), segs.end());
  segs.erase(std::unique(segs.begin(), segs.end()), segs.end());
  for (const Segment& s : segs) {
    double dx = (s.x2 - s.x1) / 100.0;
    double dy = levels[s.rank + 1] - levels[s.rank];
    m.edge_length += std::sqrt(dx * dx + dy * dy);
  }
  // Crossings per rank gap: pairs with x1 strictly smaller and x2 strictly larger.
  std::vector<int64_t> keys;
  std::vector<int64_t> fenwick;
  size_t i = 0;
  while (i < segs.size()) {
    size_t j = i;
    while (j < segs.size() && segs[j].rank == segs[i].rank) ++j;
    keys.clear();
    for (size_t k = i; k < j; ++k) keys.push_back(segs[k].x2);
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    fenwick.assign(keys.size() + 1, 0);
    int64_t inserted = 0;
    size_t g = i;
    while (g < j) {
      size_t h = g;
      while (h < j && segs[h].x1 == segs[g].x1) ++h;
      for (size_t k = g; k < h; ++k) {
        // count inserted with x2 > segs[k].x2 = inserted - count(x2 <= segs[k].x2)
        size_t idx = std::upper_bound(keys.begin(), keys.end(), segs[k].x2) - keys.begin();
        int64_t le = 0;
        for (size_t q = idx; q > 0; q -= q & (~q + 1)) le += fenwick[q];
        m.crossings += inserted - le;
      }
      for (size_t k = g; k < h; ++k) {
        size_t idx = std::lower_bound(keys.begin(), keys.end(), segs[k].x2) - keys.begin() + 1;
        for (size_t q = idx; q < fenwick.size(); q += q & (~q + 1)) fenwick[q] += 1;
        ++inserted;
      }
      g = h;
    }
    i = j;
  }
  return m;
}

}  // namespace hlowb::graph
