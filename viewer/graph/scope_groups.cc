#include "viewer/graph/scope_groups.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "core/support/strings.h"
#include "viewer/graph/hlo_graph.h"

namespace hlowb::graph {

namespace {

// Titles longer than this (in bytes) are shortened, so that boxes stay narrow enough for an
// overview of a few dozen of them to be read when fitted to a window.
constexpr size_t kMaxTitle = 24;

// `s` cut to kMaxTitle bytes (at a UTF-8 character boundary) with an ellipsis.
std::string Shorten(std::string s) {
  if (s.size() <= kMaxTitle + 2) return s;
  size_t cut = kMaxTitle - 1;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut;
  s.resize(cut);
  return s + "\xE2\x80\xA6";
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

}  // namespace

NodeScope ParseOpName(std::string_view op_name, int max_depth) {
  NodeScope out;
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= op_name.size()) {
    size_t slash = op_name.find('/', start);
    if (slash == std::string_view::npos) slash = op_name.size();
    if (slash > start) parts.push_back(op_name.substr(start, slash - start));
    start = slash + 1;
  }
  if (parts.empty()) return out;
  out.op = std::string(parts.back());
  parts.pop_back();
  const size_t keep = std::min(parts.size(), static_cast<size_t>(std::max(0, max_depth)));
  out.scope.reserve(keep);
  for (size_t i = 0; i < keep; ++i) out.scope.emplace_back(parts[i]);
  return out;
}

// Builds a ScopeGrouping (see the header): the scope tree, the boxes each level shows, and the
// per-level templates of nodes, ports and merged edges.
class ScopeGroupingBuilder {
 public:
  ScopeGroupingBuilder(const LayoutGraph& level, const std::vector<NodeScope>& scopes,
                       const ScopeGroupingOptions& options, ScopeGrouping* out)
      : level_(level), scopes_(scopes), o_(options), out_(*out) {}

  void Run() {
    const int n = level_.node_count();
    if (static_cast<int>(scopes_.size()) != n || n == 0) return;
    BuildTrie();
    AttachUnscoped();
    Sizes();
    // Look through scopes that hold everything (the jit(...) prefix): the top level shows
    // what lies inside them, titled relative to them.
    int top = 0;
    while (trie_[top].direct.empty() && trie_[top].children.size() == 1) {
      top = trie_[top].children[0];
    }
    Content content = MakeContent(top, {}, true);
    for (int guard = 0; guard < 256; ++guard) {
      if (content.boxes.size() != 1 || !content.loose.empty()) break;
      const Cand& only = content.boxes[0];
      if (only.kind != ScopeBox::Kind::kScope || !only.excluded.empty()) break;
      top = only.trie;
      content = MakeContent(top, {}, true);
    }
    Emit(-1, top, std::move(content));
    if (out_.top_boxes_.size() + out_.top_members_.size() <= 1) {
      out_ = ScopeGrouping();
      return;
    }
    out_.box_of_.assign(n, -1);
    for (size_t b = 0; b < out_.boxes_.size(); ++b) {
      for (int v : out_.boxes_[b].members) out_.box_of_[v] = static_cast<int>(b);
    }
    BuildBoxNodes();
    BuildTemplates();
  }

 private:
  struct TrieNode {
    std::string name;
    int parent = -1;
    int depth = 0;
    std::vector<int> children;
    std::unordered_map<std::string, int> index;
    std::vector<int> direct;
    int size = 0;
    int first = INT_MAX;
  };
  // A box being chosen: a scope (minus the sub-scopes split off it) or a set of loose nodes.
  struct Cand {
    ScopeBox::Kind kind = ScopeBox::Kind::kScope;
    int trie = -1;
    std::vector<int> excluded;
    std::vector<int> nodes;  // kOp, kOther
    std::string op;
    int size = 0;
    int first = INT_MAX;
    bool stuck = false;
  };
  struct Content {
    std::vector<Cand> boxes;
    std::vector<int> loose;
  };

  // ---- Scope tree -----------------------------------------------------------------------------

  int Child(int t, const std::string& name) {
    auto it = trie_[t].index.find(name);
    if (it != trie_[t].index.end()) return it->second;
    TrieNode c;
    c.name = name;
    c.parent = t;
    c.depth = trie_[t].depth + 1;
    const int id = static_cast<int>(trie_.size());
    trie_.push_back(std::move(c));
    trie_[t].children.push_back(id);
    trie_[t].index.emplace(name, id);
    return id;
  }

  void BuildTrie() {
    const int n = level_.node_count();
    trie_.emplace_back();
    node_trie_.assign(n, -1);
    for (int v = 0; v < n; ++v) {
      const NodeScope& s = scopes_[v];
      if (s.empty()) continue;
      int t = 0;
      const int depth = std::min(static_cast<int>(s.scope.size()), std::max(0, o_.max_depth));
      for (int i = 0; i < depth; ++i) {
        if (!s.scope[i].empty()) t = Child(t, s.scope[i]);
      }
      node_trie_[v] = t;
    }
  }

  int Lca(int a, int b) const {
    while (trie_[a].depth > trie_[b].depth) a = trie_[a].parent;
    while (trie_[b].depth > trie_[a].depth) b = trie_[b].parent;
    while (a != b) {
      a = trie_[a].parent;
      b = trie_[b].parent;
    }
    return a;
  }

  // Nodes without op_name join the deepest scope holding all their users, else all their
  // operands (users first: a get-tuple-element belongs with what reads it).
  void AttachUnscoped() {
    const int n = level_.node_count();
    std::vector<std::vector<int>> succ(n), pred(n);
    for (const LayoutEdge& e : level_.edges) {
      if (e.src < 0 || e.dst < 0 || e.src >= n || e.dst >= n || e.src == e.dst) continue;
      succ[e.src].push_back(e.dst);
      pred[e.dst].push_back(e.src);
    }
    auto common = [&](const std::vector<int>& around) {
      int t = -1;
      for (int u : around) {
        if (node_trie_[u] < 0) continue;
        t = t < 0 ? node_trie_[u] : Lca(t, node_trie_[u]);
        if (t == 0) break;
      }
      return t;
    };
    // Users first, repeated while that places more nodes (a parameter's ghost copy reads into
    // a get-tuple-element that itself has no op_name), then operands.
    for (int pass = 0; pass < 8; ++pass) {
      bool placed = false;
      for (int v = n - 1; v >= 0; --v) {
        if (node_trie_[v] >= 0) continue;
        const int t = common(succ[v]);
        if (t > 0) {
          node_trie_[v] = t;
          placed = true;
        }
      }
      if (!placed) break;
    }
    std::vector<int> unscoped;
    for (int v = 0; v < n; ++v) {
      if (node_trie_[v] < 0) unscoped.push_back(v);
    }
    for (int v : unscoped) {
      const int t = common(pred[v]);
      node_trie_[v] = t > 0 ? t : -2;  // -2: decided, stays at the top
    }
    for (int v = 0; v < n; ++v) {
      if (node_trie_[v] < 0) node_trie_[v] = 0;
    }
  }

  void Sizes() {
    for (int v = 0; v < level_.node_count(); ++v) trie_[node_trie_[v]].direct.push_back(v);
    for (int t = static_cast<int>(trie_.size()) - 1; t >= 0; --t) {
      TrieNode& tn = trie_[t];
      tn.size += static_cast<int>(tn.direct.size());
      if (!tn.direct.empty()) tn.first = std::min(tn.first, tn.direct.front());
      if (tn.parent >= 0) {
        trie_[tn.parent].size += tn.size;
        trie_[tn.parent].first = std::min(trie_[tn.parent].first, tn.first);
      }
    }
  }

  void Collect(int t, std::vector<int>* nodes) const {
    nodes->insert(nodes->end(), trie_[t].direct.begin(), trie_[t].direct.end());
    for (int c : trie_[t].children) Collect(c, nodes);
  }

  static bool Has(const std::vector<int>& v, int x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  }

  Cand ScopeCand(int t, std::vector<int> excluded) const {
    Cand c;
    c.trie = t;
    c.size = trie_[t].size;
    c.first = trie_[t].direct.empty() ? INT_MAX : trie_[t].direct.front();
    for (int ch : trie_[t].children) {
      if (Has(excluded, ch)) {
        c.size -= trie_[ch].size;
      } else {
        c.first = std::min(c.first, trie_[ch].first);
      }
    }
    c.excluded = std::move(excluded);
    return c;
  }

  // A scope with no nodes of its own and one sub-scope is shown as that sub-scope.
  Cand Compress(Cand c) const {
    for (int guard = 0; guard < 1024; ++guard) {
      if (!trie_[c.trie].direct.empty()) break;
      int only = -1, count = 0;
      for (int ch : trie_[c.trie].children) {
        if (Has(c.excluded, ch)) continue;
        only = ch;
        ++count;
      }
      if (count != 1) break;
      c = ScopeCand(only, {});
    }
    return c;
  }

  // How many items `loose` nodes make once a crowded level boxes them (see MakeContent).
  int LooseItems(const std::vector<int>& loose, int max_loose) const {
    if (static_cast<int>(loose.size()) <= max_loose) return static_cast<int>(loose.size());
    std::unordered_map<std::string_view, int> by_op;
    for (int v : loose) {
      if (!scopes_[v].op.empty()) ++by_op[scopes_[v].op];
    }
    int boxes = 0, single = 0;
    for (int v : loose) {
      auto it = scopes_[v].op.empty() ? by_op.end() : by_op.find(scopes_[v].op);
      if (it == by_op.end() || it->second < 2) ++single;
    }
    for (const auto& [op, k] : by_op) boxes += k >= 2 ? 1 : 0;
    return boxes + (single > max_loose ? 1 : single);
  }

  // The boxes and loose nodes of the level showing scope `t` without the sub-scopes `excluded`.
  Content MakeContent(int t, const std::vector<int>& excluded, bool top) const {
    const int max_loose = top ? o_.max_loose : o_.max_loose_inside;
    Content out;
    for (int c : trie_[t].children) {
      if (Has(excluded, c)) continue;
      if (trie_[c].size < o_.min_box_nodes) {
        Collect(c, &out.loose);
      } else {
        out.boxes.push_back(Compress(ScopeCand(c, {})));
      }
    }
    out.loose.insert(out.loose.end(), trie_[t].direct.begin(), trie_[t].direct.end());
    int level_size = static_cast<int>(out.loose.size());
    for (const Cand& b : out.boxes) level_size += b.size;
    const double threshold =
        std::max(static_cast<double>(o_.split_min_nodes), o_.split_share * level_size);
    // Split the biggest boxes into their big sub-scopes while the level stays readable.
    for (int guard = 0; guard < 4096; ++guard) {
      int best = -1;
      for (size_t i = 0; i < out.boxes.size(); ++i) {
        const Cand& b = out.boxes[i];
        if (b.kind != ScopeBox::Kind::kScope || b.stuck || b.size <= threshold) continue;
        if (best < 0 || b.size > out.boxes[best].size) best = static_cast<int>(i);
      }
      if (best < 0) break;
      const Cand b = out.boxes[best];
      const int promote_min =
          std::max(o_.min_box_nodes, static_cast<int>(std::ceil(o_.promote_share * b.size)));
      std::vector<int> promoted;
      int promoted_size = 0;
      for (int c : trie_[b.trie].children) {
        if (Has(b.excluded, c) || trie_[c].size < promote_min) continue;
        promoted.push_back(c);
        promoted_size += trie_[c].size;
      }
      const int rest = b.size - promoted_size;
      std::vector<int> excl = b.excluded;
      excl.insert(excl.end(), promoted.begin(), promoted.end());
      // What is left of the box stays a box, or its few nodes become loose.
      std::vector<int> loose = out.loose;
      if (rest > 0 && rest < o_.min_box_nodes) {
        loose.insert(loose.end(), trie_[b.trie].direct.begin(), trie_[b.trie].direct.end());
        for (int c : trie_[b.trie].children) {
          if (!Has(excl, c)) Collect(c, &loose);
        }
      }
      const int boxes_after =
          static_cast<int>(out.boxes.size() + promoted.size()) - (rest >= o_.min_box_nodes ? 0 : 1);
      const int count_after = boxes_after + LooseItems(loose, max_loose);
      if (promoted.empty() || count_after > o_.max_items) {
        out.boxes[best].stuck = true;
        continue;
      }
      if (rest >= o_.min_box_nodes) {
        out.boxes[best] = Compress(ScopeCand(b.trie, excl));
      } else {
        out.boxes.erase(out.boxes.begin() + best);
      }
      out.loose = std::move(loose);
      for (int c : promoted) out.boxes.push_back(Compress(ScopeCand(c, {})));
    }
    // A crowded level: loose nodes sharing an op_name are boxed together, the rest together.
    if (static_cast<int>(out.loose.size()) > max_loose) {
      std::sort(out.loose.begin(), out.loose.end());
      std::vector<std::string> order;
      std::unordered_map<std::string, std::vector<int>> by_op;
      for (int v : out.loose) {
        const std::string& op = scopes_[v].op;
        if (op.empty()) continue;
        auto [it, added] = by_op.try_emplace(op);
        if (added) order.push_back(op);
        it->second.push_back(v);
      }
      std::unordered_set<int> boxed;
      for (const std::string& op : order) {
        std::vector<int>& nodes = by_op[op];
        if (static_cast<int>(nodes.size()) < 2) continue;
        Cand c;
        c.kind = ScopeBox::Kind::kOp;
        c.op = op;
        c.size = static_cast<int>(nodes.size());
        c.first = nodes.front();
        for (int v : nodes) boxed.insert(v);
        c.nodes = std::move(nodes);
        out.boxes.push_back(std::move(c));
      }
      std::erase_if(out.loose, [&](int v) { return boxed.count(v) > 0; });
      if (static_cast<int>(out.loose.size()) > max_loose) {
        Cand c;
        c.kind = ScopeBox::Kind::kOther;
        c.size = static_cast<int>(out.loose.size());
        c.first = out.loose.front();
        c.nodes = std::move(out.loose);
        out.loose.clear();
        out.boxes.push_back(std::move(c));
      }
    }
    std::sort(out.loose.begin(), out.loose.end());
    std::stable_sort(out.boxes.begin(), out.boxes.end(),
                     [](const Cand& a, const Cand& b) { return a.first < b.first; });
    return out;
  }

  std::string ScopePath(int t) const {
    std::vector<const std::string*> parts;
    for (int x = t; x > 0; x = trie_[x].parent) parts.push_back(&trie_[x].name);
    std::string s;
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
      if (!s.empty()) s += '/';
      s += **it;
    }
    return s;
  }

  // Components from below `from` down to `t`.
  std::vector<std::string> Relative(int from, int t) const {
    std::vector<std::string> parts;
    for (int x = t; x > 0 && x != from; x = trie_[x].parent) parts.push_back(trie_[x].name);
    std::reverse(parts.begin(), parts.end());
    return parts;
  }

  // A scope path short enough for a box: its first component and as many of its last ones as
  // fit ("LAMB/…/attention/self").
  static std::string Title(const std::vector<std::string>& parts) {
    std::string all = Join(parts, "/");
    if (all.size() <= kMaxTitle || parts.size() <= 1) return Shorten(all);
    std::string tail = parts.back();
    for (size_t i = parts.size() - 1; i-- > 1;) {
      if (parts.front().size() + parts[i].size() + tail.size() + 5 > kMaxTitle) break;
      tail = StrCat(parts[i], "/", tail);
    }
    return Shorten(StrCat(parts.front(), "/\xE2\x80\xA6/", tail));
  }

  // Creates the boxes of `content` inside `container` (-1 = top), whose scope is trie node
  // `scope`, then their contents.
  void Emit(int container, int scope, Content content) {
    (container < 0 ? out_.top_members_ : out_.boxes_[container].members) = content.loose;
    std::unordered_set<std::string> keys;
    for (int v : content.loose) keys.insert(level_.nodes[v].key);
    const int depth = container < 0 ? 0 : out_.boxes_[container].depth + 1;
    // Scope components every scope box of the level shares are left out of their titles
    // ("while/bert", "while/cls" read "bert", "cls"); a box of that very scope keeps its name.
    std::vector<std::string> shared;
    int scope_boxes = 0;
    for (const Cand& c : content.boxes) {
      if (c.kind != ScopeBox::Kind::kScope) continue;
      std::vector<std::string> rel = Relative(scope, c.trie);
      if (scope_boxes++ == 0) {
        shared = std::move(rel);
        continue;
      }
      size_t k = 0;
      while (k < shared.size() && k < rel.size() && shared[k] == rel[k]) ++k;
      shared.resize(k);
    }
    if (scope_boxes < 2) shared.clear();
    std::vector<std::pair<int, Cand>> made;
    for (Cand& c : content.boxes) {
      ScopeBox box;
      box.kind = c.kind;
      box.parent = container;
      box.depth = depth;
      box.size = c.size;
      std::string key;
      switch (c.kind) {
        case ScopeBox::Kind::kScope: {
          std::vector<std::string> rel = Relative(scope, c.trie);
          box.scope = ScopePath(c.trie);
          key = StrCat("@", Join(rel, "|"));
          std::vector<std::string> shown(rel.begin() + std::min(shared.size(), rel.size()),
                                         rel.end());
          if (shown.empty() && !rel.empty()) shown.push_back(rel.back());
          box.title = Title(shown);
          box.split_off = static_cast<int>(c.excluded.size());
          break;
        }
        case ScopeBox::Kind::kOp: {
          const std::string base = ScopePath(scope);
          box.scope = base.empty() ? c.op : StrCat(base, "/", c.op);
          box.title = Shorten(c.op);
          key = StrCat("=", c.op);
          break;
        }
        case ScopeBox::Kind::kOther:
          box.scope = ScopePath(scope);
          box.title = "other ops";
          key = "~other";
          break;
      }
      while (!keys.insert(key).second) key += "'";
      box.key = std::move(key);
      const int id = static_cast<int>(out_.boxes_.size());
      out_.boxes_.push_back(std::move(box));
      box_first_.push_back(c.first);
      box_trie_.push_back(c.trie);
      // Indexed again each time: boxes_ may just have moved.
      (container < 0 ? out_.top_boxes_ : out_.boxes_[container].boxes).push_back(id);
      made.emplace_back(id, std::move(c));
    }
    // Shortened titles that came out alike show their last two components instead
    // ("LAMB/…/output" twice: "…/attention/output", "…/layer_common/output").
    std::unordered_map<std::string, int> seen;
    for (const auto& [id, c] : made) ++seen[out_.boxes_[id].title];
    for (const auto& [id, c] : made) {
      ScopeBox& box = out_.boxes_[id];
      if (c.kind != ScopeBox::Kind::kScope || seen[box.title] < 2) continue;
      const std::vector<std::string> rel = Relative(scope, c.trie);
      if (rel.size() < 3) continue;
      box.title = Shorten(StrCat("\xE2\x80\xA6/", rel[rel.size() - 2], "/", rel.back()));
    }
    for (auto& [id, c] : made) {
      if (c.kind == ScopeBox::Kind::kScope) {
        Emit(id, c.trie, MakeContent(c.trie, c.excluded, false));
      } else {
        std::sort(c.nodes.begin(), c.nodes.end());
        out_.boxes_[id].members = std::move(c.nodes);
      }
    }
  }

  void BuildBoxNodes() {
    out_.box_nodes.resize(out_.boxes_.size());
    for (size_t b = 0; b < out_.boxes_.size(); ++b) {
      const ScopeBox& box = out_.boxes_[b];
      LayoutNode& n = out_.box_nodes[b];
      n.key = box.key;
      n.label = {box.title, StrCat(box.size, box.size == 1 ? " node" : " nodes")};
      auto [w, h] = EstimateTextSize(n.label);
      n.width = w;
      n.height = h;
      n.expandable = true;
      n.cluster_title = StrCat(box.kind == ScopeBox::Kind::kOther ? "other ops in " : "",
                               box.scope.empty() ? box.title : box.scope, " (", box.size,
                               box.size == 1 ? " node)" : " nodes)");
    }
  }

  // ---- Templates ------------------------------------------------------------------------------

  struct EdgeKey {
    int src, dst, src_port, operand, kind;
    bool operator==(const EdgeKey& o) const {
      return src == o.src && dst == o.dst && src_port == o.src_port && operand == o.operand &&
             kind == o.kind;
    }
  };
  struct EdgeKeyHash {
    size_t operator()(const EdgeKey& k) const {
      uint64_t h = 1469598103934665603ull;
      for (int x : {k.src, k.dst, k.src_port, k.operand, k.kind}) {
        h ^= static_cast<uint64_t>(static_cast<uint32_t>(x));
        h *= 1099511628211ull;
      }
      return static_cast<size_t>(h);
    }
  };

  int Depth(int box) const { return box < 0 ? -1 : out_.boxes_[box].depth; }
  int Parent(int box) const { return box < 0 ? -1 : out_.boxes_[box].parent; }

  // The box directly inside `container` (-1 = top) that holds node v; -1 when v is a member.
  int Below(int container, int v) const {
    int b = out_.box_of_[v];
    if (b == container) return -1;
    while (b >= 0 && Parent(b) != container) b = Parent(b);
    return b;
  }

  void AddEdge(int level, int src, int src_port, int dst, int operand, EdgeKind kind,
               int flat_edge) {
    EdgeKey key{src, dst, src_port, operand, static_cast<int>(kind)};
    auto [it, added] =
        edge_index_[level].try_emplace(key, static_cast<int>(out_.levels_[level].edges.size()));
    if (added) {
      ScopeGrouping::Edge e;
      e.src = src;
      e.dst = dst;
      e.src_port = src_port;
      e.operand = operand;
      e.kind = kind;
      e.flat_edge = flat_edge;
      out_.levels_[level].edges.push_back(e);
    }
    ++out_.levels_[level].edges[it->second].count;
  }

  // The input of box B for source item `s` of B's parent level, and the edge inside B on to
  // node v; returns the input's operand number.
  int Enter(int box, int v, int s, const LayoutEdge& e, int flat_edge) {
    const int level = box + 1;
    ScopeGrouping::Template& t = out_.levels_[level];
    auto [it, added] = in_port_[box].try_emplace(s, static_cast<int>(t.inputs.size()));
    const int k = it->second;
    if (added) {
      const int item = static_cast<int>(t.items.size());
      t.items.push_back({ScopeGrouping::Item::kIn, k});
      t.inputs.push_back({k, item});
    }
    const int port = out_.levels_[level].inputs[k].node;
    const int c = Below(box, v);
    const int dst = c < 0 ? pos_of_node_[v] : pos_of_box_[c];
    const int operand = c < 0 ? e.operand : Enter(c, v, port, e, flat_edge);
    AddEdge(level, port, -1, dst, operand, e.kind, flat_edge);
    return k;
  }

  // The output of box B towards item `d` of B's parent level, and the edge inside B from node
  // v to it; returns the output's number.
  int Exit(int box, int v, int d, const LayoutEdge& e, int flat_edge) {
    const int level = box + 1;
    ScopeGrouping::Template& t = out_.levels_[level];
    auto [it, added] = out_port_[box].try_emplace(d, static_cast<int>(t.outputs.size()));
    const int j = it->second;
    if (added) {
      const int item = static_cast<int>(t.items.size());
      t.items.push_back({ScopeGrouping::Item::kOut, j});
      t.outputs.push_back(item);
    }
    const int port = out_.levels_[level].outputs[j];
    const int c = Below(box, v);
    const int src = c < 0 ? pos_of_node_[v] : pos_of_box_[c];
    const int src_port = c < 0 ? -1 : Exit(c, v, port, e, flat_edge);
    AddEdge(level, src, src_port, port, -1, e.kind, flat_edge);
    return j;
  }

  void BuildTemplates() {
    const int n = level_.node_count();
    const int nb = static_cast<int>(out_.boxes_.size());
    out_.levels_.assign(nb + 1, {});
    edge_index_.assign(nb + 1, {});
    in_port_.assign(nb, {});
    out_port_.assign(nb, {});
    pos_of_node_.assign(n, -1);
    pos_of_box_.assign(nb, -1);
    for (int level = 0; level <= nb; ++level) {
      const std::vector<int>& members =
          level == 0 ? out_.top_members_ : out_.boxes_[level - 1].members;
      const std::vector<int>& boxes = level == 0 ? out_.top_boxes_ : out_.boxes_[level - 1].boxes;
      // Members and boxes interleaved by their first node, so the level keeps program order.
      std::vector<std::pair<int, ScopeGrouping::Item>> items;
      for (int v : members) items.push_back({v, {ScopeGrouping::Item::kNode, v}});
      for (int b : boxes) items.push_back({box_first_[b], {ScopeGrouping::Item::kBox, b}});
      std::stable_sort(items.begin(), items.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      ScopeGrouping::Template& t = out_.levels_[level];
      for (const auto& [first, item] : items) {
        const int pos = static_cast<int>(t.items.size());
        if (item.kind == ScopeGrouping::Item::kNode) {
          pos_of_node_[item.index] = pos;
        } else {
          pos_of_box_[item.index] = pos;
        }
        t.items.push_back(item);
      }
    }
    for (int i = 0; i < level_.edge_count(); ++i) {
      const LayoutEdge& e = level_.edges[i];
      if (e.src < 0 || e.dst < 0 || e.src >= n || e.dst >= n) continue;
      const int a = e.src, b = e.dst;
      if (a == b) continue;
      // The innermost level holding both ends.
      int x = out_.box_of_[a], y = out_.box_of_[b];
      while (Depth(x) > Depth(y)) x = Parent(x);
      while (Depth(y) > Depth(x)) y = Parent(y);
      while (x != y) {
        x = Parent(x);
        y = Parent(y);
      }
      const int lca = x;
      const int ra = Below(lca, a), rb = Below(lca, b);
      const int src = ra < 0 ? pos_of_node_[a] : pos_of_box_[ra];
      const int dst = rb < 0 ? pos_of_node_[b] : pos_of_box_[rb];
      const int src_port = ra < 0 ? -1 : Exit(ra, a, dst, e, i);
      const int operand = rb < 0 ? e.operand : Enter(rb, b, src, e, i);
      AddEdge(lca + 1, src, src_port, dst, operand, e.kind, i);
    }
  }

  const LayoutGraph& level_;
  const std::vector<NodeScope>& scopes_;
  const ScopeGroupingOptions& o_;
  ScopeGrouping& out_;
  std::vector<TrieNode> trie_;
  std::vector<int> node_trie_;
  std::vector<int> box_first_;
  std::vector<int> box_trie_;
  std::vector<int> pos_of_node_, pos_of_box_;
  std::vector<std::unordered_map<EdgeKey, int, EdgeKeyHash>> edge_index_;
  std::vector<std::unordered_map<int, int>> in_port_, out_port_;
};

ScopeGrouping ScopeGrouping::Build(const LayoutGraph& level, const std::vector<NodeScope>& scopes,
                                   const ScopeGroupingOptions& options) {
  ScopeGrouping out;
  ScopeGroupingBuilder(level, scopes, options, &out).Run();
  return out;
}

std::string ScopeGrouping::BoxPath(int box) const {
  std::vector<const std::string*> keys;
  for (int b = box; b >= 0 && b < static_cast<int>(boxes_.size()); b = boxes_[b].parent) {
    keys.push_back(&boxes_[b].key);
  }
  std::string path;
  for (auto it = keys.rbegin(); it != keys.rend(); ++it) {
    if (!path.empty()) path += '/';
    path += **it;
  }
  return path;
}

int ScopeGrouping::FindBox(const std::string& path) const {
  const std::vector<int>* level = &top_boxes_;
  int found = -1;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    const std::string_view key(path.data() + start, slash - start);
    found = -1;
    for (int b : *level) {
      if (boxes_[b].key == key) {
        found = b;
        break;
      }
    }
    if (found < 0) return -1;
    level = &boxes_[found].boxes;
    start = slash + 1;
  }
  return found;
}

std::shared_ptr<LayoutGraph> ScopeGrouping::Instantiate(int level, const LayoutGraph& flat,
                                                        const std::vector<char>& expanded) const {
  auto g = std::make_shared<LayoutGraph>();
  const Template& t = levels_[level];
  g->name = level == 0 ? flat.name : boxes_[level - 1].scope;
  g->nodes.reserve(t.items.size());
  for (const Item& item : t.items) {
    switch (item.kind) {
      case Item::kNode:
        g->nodes.push_back(flat.nodes[item.index]);
        break;
      case Item::kBox: {
        LayoutNode node = box_nodes[item.index];
        node.expandable = true;
        const bool open =
            item.index < static_cast<int>(expanded.size()) && expanded[item.index] != 0;
        node.expanded = open;
        node.child = open ? Instantiate(item.index + 1, flat, expanded) : nullptr;
        g->nodes.push_back(std::move(node));
        break;
      }
      case Item::kIn:
      case Item::kOut: {
        LayoutNode port;
        port.key = StrCat(item.kind == Item::kIn ? "#in" : "#out", item.index);
        port.width = 8;
        port.height = 8;
        port.tag = kPortNodeTag;
        port.style.shape = NodeShape::kEllipse;
        port.style.fill = 0x78909C;
        port.style.stroke = 0x78909C;
        port.style.bold_title = false;
        port.tooltip = item.kind == Item::kIn ? "edges from outside the group enter here"
                                              : "edges to outside the group leave here";
        g->nodes.push_back(std::move(port));
        break;
      }
    }
  }
  g->edges.reserve(t.edges.size());
  for (const Edge& e : t.edges) {
    LayoutEdge le;
    le.src = e.src;
    le.dst = e.dst;
    le.src_port = e.src_port;
    le.operand = e.operand;
    le.kind = e.kind;
    le.count = e.count;
    if (e.count > 1) {
      le.label = StrCat("\xC3\x97", e.count);  // "×N"
    } else if (t.items[e.dst].kind == Item::kNode && e.flat_edge >= 0 &&
               e.flat_edge < flat.edge_count()) {
      le.label = flat.edges[e.flat_edge].label;
    }
    g->edges.push_back(std::move(le));
  }
  g->inputs = t.inputs;
  g->outputs = t.outputs;
  return g;
}

std::shared_ptr<const LayoutGraph> ScopeGrouping::Apply(const LayoutGraph& level,
                                                        const std::vector<char>& expanded) const {
  if (empty() || level.node_count() != static_cast<int>(box_of_.size())) {
    return std::make_shared<const LayoutGraph>(level);
  }
  return Instantiate(0, level, expanded);
}

}  // namespace hlowb::graph
