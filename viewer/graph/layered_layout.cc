#include "viewer/graph/layered_layout.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "core/support/strings.h"

namespace hlowb::graph {
namespace {

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

uint64_t Mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  h *= 0xff51afd7ed558ccdULL;
  return h ^ (h >> 33);
}

uint64_t Quant(double v) { return static_cast<uint64_t>(std::llround(v * 64.0)); }

// =============================================================================================
// Network simplex layering (Gansner, Koutsofios, North, Vo 1993).
//
// The feasible tree is built by merging tight subtrees, smallest first, so each node is moved
// O(log V) times. Cut values are initialized from low/lim postorder numbers once; after that
// the tree keeps parent edges and subtree sizes only, which a pivot updates along the cycle it
// closes. A pivot prefers, among the first `search_size` negative tree edges, the one whose
// smaller side is smallest; it walks that side (stamped, so membership tests are O(1)) to find
// the entering edge and moves it when reranking. Every step keeps the ranks feasible, so the
// simplex can stop at any pivot on its work cap and leave a valid (less compact) layering.
// =============================================================================================

class NetworkSimplex {
 public:
  struct Edge {
    int tail;
    int head;
    int minlen;
    int64_t weight;
  };
  struct Limits {
    int64_t max_pivots = 0;
    int64_t max_work = 0;
    std::function<bool()> stop;  // polled every few pivots; true = stop now
  };
  struct Outcome {
    int64_t pivots = 0;
    bool optimal = false;
    bool stopped = false;
  };

  NetworkSimplex(int n, std::vector<Edge> edges) : n_(n), edges_(std::move(edges)) {
    int m = static_cast<int>(edges_.size());
    out_off_.assign(n_ + 1, 0);
    in_off_.assign(n_ + 1, 0);
    for (const Edge& e : edges_) {
      ++out_off_[e.tail + 1];
      ++in_off_[e.head + 1];
    }
    for (int i = 0; i < n_; ++i) {
      out_off_[i + 1] += out_off_[i];
      in_off_[i + 1] += in_off_[i];
    }
    out_.resize(m);
    in_.resize(m);
    std::vector<int> oc(out_off_.begin(), out_off_.end() - 1);
    std::vector<int> ic(in_off_.begin(), in_off_.end() - 1);
    for (int i = 0; i < m; ++i) {
      out_[oc[edges_[i].tail]++] = i;
      in_[ic[edges_[i].head]++] = i;
    }
  }

  // `rank` must be feasible on entry; it stays feasible whatever happens.
  Outcome Run(std::vector<int>* rank, const Limits& limits) {
    rank_ = rank;
    Outcome out;
    int m = static_cast<int>(edges_.size());
    if (n_ == 0) {
      out.optimal = true;
      return out;
    }
    in_tree_.assign(m, 0);
    tree_adj_.assign(n_, {});
    FeasibleTree();
    InitCutValues();
    mark_.assign(n_, 0);
    mark2_.assign(n_, 0);
    mark3_.assign(n_, 0);
    int64_t search = std::max(1, search_size_);
    while (true) {
      int e = LeaveEdge(search);
      if (e < 0) {
        out.optimal = true;
        break;
      }
      if (out.pivots >= limits.max_pivots || work_ >= limits.max_work) {
        out.stopped = true;
        break;
      }
      if ((out.pivots & 15) == 0 && limits.stop && limits.stop()) {
        out.stopped = true;
        break;
      }
      int f = EnterEdge(e);
      if (f < 0) {  // cannot happen for a connected tree; bail out safely
        out.stopped = true;
        break;
      }
      Update(e, f);
      ++out.pivots;
    }
    return out;
  }

  void set_search_size(int s) { search_size_ = s; }
  int64_t work() const { return work_; }

 private:
  int Slack(int e) const {
    const Edge& d = edges_[e];
    return (*rank_)[d.head] - (*rank_)[d.tail] - d.minlen;
  }
  int Other(int e, int v) const { return edges_[e].tail == v ? edges_[e].head : edges_[e].tail; }

  void AddTreeEdge(int e) {
    in_tree_[e] = 1;
    tree_adj_[edges_[e].tail].push_back(e);
    tree_adj_[edges_[e].head].push_back(e);
  }
  void RemoveFromAdj(int v, int e) {
    auto& a = tree_adj_[v];
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] == e) {
        a[i] = a.back();
        a.pop_back();
        return;
      }
    }
  }

  void FeasibleTree() {
    std::vector<int>& rank = *rank_;
    std::vector<int> sub(n_, -1);
    std::vector<std::vector<int>> members;
    std::vector<int> stack;
    // Tight subtrees by DFS over tight edges.
    for (int s = 0; s < n_; ++s) {
      if (sub[s] >= 0) continue;
      int id = static_cast<int>(members.size());
      members.emplace_back();
      sub[s] = id;
      stack.push_back(s);
      while (!stack.empty()) {
        int v = stack.back();
        stack.pop_back();
        members[id].push_back(v);
        for (int k = out_off_[v]; k < out_off_[v + 1]; ++k) {
          int e = out_[k];
          int w = edges_[e].head;
          if (sub[w] < 0 && Slack(e) == 0) {
            sub[w] = id;
            AddTreeEdge(e);
            stack.push_back(w);
          }
        }
        for (int k = in_off_[v]; k < in_off_[v + 1]; ++k) {
          int e = in_[k];
          int w = edges_[e].tail;
          if (sub[w] < 0 && Slack(e) == 0) {
            sub[w] = id;
            AddTreeEdge(e);
            stack.push_back(w);
          }
        }
      }
    }
    int count = static_cast<int>(members.size());
    std::vector<int> uf(count);
    std::iota(uf.begin(), uf.end(), 0);
    auto find = [&](int x) {
      while (uf[x] != x) {
        uf[x] = uf[uf[x]];
        x = uf[x];
      }
      return x;
    };
    std::vector<char> done(count, 0);
    using Entry = std::pair<size_t, int>;  // (size, id), smallest first
    std::vector<Entry> heap;
    for (int i = 0; i < count; ++i) heap.push_back({members[i].size(), i});
    auto cmp = [](const Entry& a, const Entry& b) {
      return a.first != b.first ? a.first > b.first : a.second > b.second;
    };
    std::make_heap(heap.begin(), heap.end(), cmp);
    while (!heap.empty()) {
      std::pop_heap(heap.begin(), heap.end(), cmp);
      Entry top = heap.back();
      heap.pop_back();
      int s = top.second;
      if (find(s) != s || members[s].size() != top.first || done[s]) continue;
      int best = -1;
      int best_slack = std::numeric_limits<int>::max();
      bool best_out = false;
      for (int v : members[s]) {
        for (int k = out_off_[v]; k < out_off_[v + 1] && best_slack > 0; ++k) {
          int e = out_[k];
          if (find(sub[edges_[e].head]) == s) continue;
          int sl = Slack(e);
          if (sl < best_slack) {
            best_slack = sl;
            best = e;
            best_out = true;
          }
        }
        for (int k = in_off_[v]; k < in_off_[v + 1] && best_slack > 0; ++k) {
          int e = in_[k];
          if (find(sub[edges_[e].tail]) == s) continue;
          int sl = Slack(e);
          if (sl < best_slack) {
            best_slack = sl;
            best = e;
            best_out = false;
          }
        }
        work_ += out_off_[v + 1] - out_off_[v] + in_off_[v + 1] - in_off_[v];
        if (best_slack == 0) break;
      }
      if (best < 0) {
        done[s] = 1;  // spans its whole component
        continue;
      }
      // Moving the subtree by the minimal slack keeps every incident edge feasible.
      int delta = best_out ? best_slack : -best_slack;
      if (delta != 0) {
        for (int v : members[s]) rank[v] += delta;
      }
      AddTreeEdge(best);
      int other = find(sub[best_out ? edges_[best].head : edges_[best].tail]);
      uf[s] = other;
      auto& dst = members[other];
      dst.insert(dst.end(), members[s].begin(), members[s].end());
      std::vector<int>().swap(members[s]);
      heap.push_back({dst.size(), other});
      std::push_heap(heap.begin(), heap.end(), cmp);
    }
  }

  // low/lim/par by iterative postorder from every tree root; records the postorder.
  void InitCutValues() {
    par_.assign(n_, -1);
    low_.assign(n_, 0);
    lim_.assign(n_, 0);
    comp_root_.assign(n_, -1);
    cut_.assign(edges_.size(), 0);
    tree_list_.clear();
    tree_pos_.assign(edges_.size(), -1);
    std::vector<int> postorder;
    postorder.reserve(n_);
    std::vector<std::pair<int, int>> stack;
    int counter = 1;
    for (int r = 0; r < n_; ++r) {
      if (comp_root_[r] >= 0) continue;
      comp_root_[r] = r;
      par_[r] = -1;
      low_[r] = counter;
      stack.push_back({r, 0});
      while (!stack.empty()) {
        auto& [v, i] = stack.back();
        if (i < static_cast<int>(tree_adj_[v].size())) {
          int e = tree_adj_[v][i++];
          if (e == par_[v]) continue;
          int w = Other(e, v);
          comp_root_[w] = r;
          par_[w] = e;
          low_[w] = counter;
          stack.push_back({w, 0});
        } else {
          lim_[v] = counter++;
          postorder.push_back(v);
          stack.pop_back();
        }
      }
    }
    size_.assign(n_, 1);
    for (int v = 0; v < n_; ++v) size_[v] = lim_[v] - low_[v] + 1;
    for (int v : postorder) {
      if (par_[v] >= 0) {
        XCutval(par_[v]);
        tree_pos_[par_[v]] = static_cast<int>(tree_list_.size());
        tree_list_.push_back(par_[v]);
      }
    }
  }

  // Cut value of tree edge f from those of the child endpoint's subtree (dot's x_cutval).
  void XCutval(int f) {
    int v, dir;
    if (par_[edges_[f].tail] == f) {
      v = edges_[f].tail;
      dir = 1;
    } else {
      v = edges_[f].head;
      dir = -1;
    }
    int64_t sum = 0;
    for (int k = out_off_[v]; k < out_off_[v + 1]; ++k) sum += XVal(out_[k], v, dir);
    for (int k = in_off_[v]; k < in_off_[v + 1]; ++k) sum += XVal(in_[k], v, dir);
    cut_[f] = sum;
  }

  int64_t XVal(int e, int v, int dir) const {
    int other = Other(e, v);
    int64_t rv;
    bool f;
    if (!(low_[v] <= lim_[other] && lim_[other] <= lim_[v])) {
      f = true;
      rv = edges_[e].weight;
    } else {
      f = false;
      rv = in_tree_[e] ? cut_[e] : 0;
      rv -= edges_[e].weight;
    }
    int d;
    if (dir > 0) {
      d = edges_[e].head == v ? 1 : -1;
    } else {
      d = edges_[e].tail == v ? 1 : -1;
    }
    if (f) d = -d;
    if (d < 0) rv = -rv;
    return rv;
  }

  // Side size of the cut made by tree edge f (the work a pivot on f costs).
  int SideCost(int f) const {
    int child = ChildOf(f);
    int sub = size_[child];
    return std::min(sub, size_[comp_root_[child]] - sub);
  }

  // dot's leave_edge (cyclic scan, first `search` negative cut values), except that among the
  // candidates it takes the one whose smaller side is smallest, breaking ties by cut value:
  // every negative edge improves the objective, and small sides make cheap pivots.
  int LeaveEdge(int64_t search) {
    int rv = -1;
    int rv_cost = 0;
    int64_t cnt = 0;
    int size = static_cast<int>(tree_list_.size());
    int j = s_i_;
    auto consider = [&](int f) {
      int cost = SideCost(f);
      if (rv < 0 || cost < rv_cost || (cost == rv_cost && cut_[f] < cut_[rv])) {
        rv = f;
        rv_cost = cost;
      }
    };
    while (s_i_ < size) {
      int f = tree_list_[s_i_];
      if (cut_[f] < 0) {
        consider(f);
        if (++cnt >= search) return rv;
      }
      ++s_i_;
    }
    work_ += size - j;
    if (j > 0) {
      s_i_ = 0;
      while (s_i_ < j) {
        int f = tree_list_[s_i_];
        if (cut_[f] < 0) {
          consider(f);
          if (++cnt >= search) return rv;
        }
        ++s_i_;
      }
      work_ += j;
    }
    return rv;
  }

  // Child end of tree edge e (the endpoint whose parent edge is e).
  int ChildOf(int e) const { return par_[edges_[e].tail] == e ? edges_[e].tail : edges_[e].head; }

  // Collects one side of the cut made by removing tree edge e into side_ and stamps it: the
  // subtree of its child end (`sub` = true) or the rest of the component.
  void CollectSide(int e, bool sub) {
    int child = ChildOf(e);
    int start = sub ? child : comp_root_[child];
    ++stamp_;
    side_.clear();
    visit_stack_.clear();
    visit_stack_.push_back(start);
    while (!visit_stack_.empty()) {
      int v = visit_stack_.back();
      visit_stack_.pop_back();
      side_.push_back(v);
      mark_[v] = stamp_;
      for (int t : tree_adj_[v]) {
        if (t == e || t == par_[v]) continue;
        visit_stack_.push_back(Other(t, v));
      }
    }
    work_ += static_cast<int64_t>(side_.size());
  }

  // Smaller side of e's cut; true = the child's subtree.
  bool SubIsSmaller(int e) const {
    int child = ChildOf(e);
    return size_[child] * 2 <= size_[comp_root_[child]];
  }

  // Finds the entering edge for leaving edge e; leaves the searched side collected.
  int EnterEdge(int e) {
    int child = ChildOf(e);
    bool child_is_tail = child == edges_[e].tail;
    side_sub_ = SubIsSmaller(e);
    // The entering edge runs from the head side to the tail side of e.
    side_is_tail_ = side_sub_ ? child_is_tail : !child_is_tail;
    CollectSide(e, side_sub_);
    int best = -1;
    int best_slack = std::numeric_limits<int>::max();
    for (int v : side_) {
      if (side_is_tail_) {
        for (int k = in_off_[v]; k < in_off_[v + 1]; ++k) {
          int f = in_[k];
          if (in_tree_[f] || mark_[edges_[f].tail] == stamp_) continue;
          int sl = Slack(f);
          if (sl < best_slack) {
            best_slack = sl;
            best = f;
          }
        }
        work_ += in_off_[v + 1] - in_off_[v];
      } else {
        for (int k = out_off_[v]; k < out_off_[v + 1]; ++k) {
          int f = out_[k];
          if (in_tree_[f] || mark_[edges_[f].head] == stamp_) continue;
          int sl = Slack(f);
          if (sl < best_slack) {
            best_slack = sl;
            best = f;
          }
        }
        work_ += out_off_[v + 1] - out_off_[v];
      }
      if (best_slack == 0) break;
    }
    return best;
  }

  int Parent(int v) const { return par_[v] < 0 ? -1 : Other(par_[v], v); }

  // Lowest common ancestor by walking up from both ends in turn; costs the path length.
  int Lca(int a, int b) {
    ++stamp2_;
    if (a == b) return a;
    mark2_[a] = stamp2_;
    mark3_[b] = stamp2_;
    while (true) {
      if (a >= 0) {
        int pa = Parent(a);
        if (pa >= 0) {
          if (mark3_[pa] == stamp2_) return pa;
          mark2_[pa] = stamp2_;
        }
        a = pa;
        ++work_;
      }
      if (b >= 0) {
        int pb = Parent(b);
        if (pb >= 0) {
          if (mark2_[pb] == stamp2_) return pb;
          mark3_[pb] = stamp2_;
        }
        b = pb;
        ++work_;
      }
      if (a < 0 && b < 0) return -1;
    }
  }

  // dot's treeupdate: adjusts cut values on the path from v up to the LCA.
  void TreeUpdate(int v, int lca, int64_t cutvalue, bool dir) {
    while (v != lca) {
      int e = par_[v];
      bool d = v == edges_[e].tail ? dir : !dir;
      if (d) {
        cut_[e] += cutvalue;
      } else {
        cut_[e] -= cutvalue;
      }
      v = Other(e, v);
      ++work_;
    }
  }

  void Update(int e, int f) {
    int delta = Slack(f);
    int c = ChildOf(e);
    // side_ (from EnterEdge) is the smaller side; membership of S (= c's subtree) follows.
    auto in_s = [&](int v) { return (mark_[v] == stamp_) == side_sub_; };
    if (delta > 0) {
      // Tail side moves up (or head side down) by delta, which makes f tight.
      int d = side_is_tail_ ? -delta : delta;
      std::vector<int>& rank = *rank_;
      for (int v : side_) rank[v] += d;
    }
    int s_end = in_s(edges_[f].tail) ? edges_[f].tail : edges_[f].head;
    int r_end = Other(f, s_end);
    int q = Other(e, c);
    int lca = Lca(edges_[f].tail, edges_[f].head);
    int64_t cutvalue = cut_[e];
    TreeUpdate(edges_[f].tail, lca, cutvalue, true);
    TreeUpdate(edges_[f].head, lca, cutvalue, false);
    cut_[f] = -cutvalue;
    cut_[e] = 0;
    // Subtree sizes: S moves from under q to under r_end.
    int s_size = size_[c];
    for (int u = q; u != lca; u = Parent(u)) size_[u] -= s_size;
    for (int u = r_end; u != lca; u = Parent(u)) size_[u] += s_size;
    // Re-root S at s_end: reverse parent edges on the path s_end .. c.
    path_.clear();
    for (int u = s_end;; u = Parent(u)) {
      path_.push_back(u);
      if (u == c) break;
    }
    old_par_.resize(path_.size());
    old_size_.resize(path_.size());
    std::vector<int>& old_par = old_par_;
    std::vector<int>& old_size = old_size_;
    for (size_t i = 0; i < path_.size(); ++i) {
      old_par[i] = par_[path_[i]];
      old_size[i] = size_[path_[i]];
    }
    par_[path_[0]] = f;
    size_[path_[0]] = s_size;
    for (size_t i = 0; i + 1 < path_.size(); ++i) {
      par_[path_[i + 1]] = old_par[i];
      size_[path_[i + 1]] = s_size - old_size[i];
    }
    work_ += static_cast<int64_t>(path_.size());
    // Exchange e and f in the tree.
    in_tree_[e] = 0;
    RemoveFromAdj(edges_[e].tail, e);
    RemoveFromAdj(edges_[e].head, e);
    AddTreeEdge(f);
    int slot = tree_pos_[e];
    tree_list_[slot] = f;
    tree_pos_[f] = slot;
    tree_pos_[e] = -1;
  }

  int n_;
  std::vector<Edge> edges_;
  std::vector<int> out_off_, out_, in_off_, in_;
  std::vector<int>* rank_ = nullptr;
  std::vector<char> in_tree_;
  std::vector<std::vector<int>> tree_adj_;
  std::vector<int> par_, low_, lim_, comp_root_;
  std::vector<int64_t> cut_;
  std::vector<int> tree_list_, tree_pos_;
  std::vector<int> size_;
  std::vector<int> mark_, mark2_, mark3_;
  int stamp_ = 0, stamp2_ = 0;
  std::vector<int> side_, path_, old_par_, old_size_;
  bool side_sub_ = false, side_is_tail_ = false;
  std::vector<int> visit_stack_;
  int s_i_ = 0;
  int search_size_ = 30;

  int64_t work_ = 0;
};

// Shrinks a layering problem without changing its optimum before network simplex runs:
// pendant nodes (one incident edge) are peeled, they are tight in some optimum; a node with
// exactly one in-edge and one out-edge is contracted into a single edge (minlen m1+m2, weight
// min(w1, w2)), since its best rank sits at the heavier side's end. HLO graphs are mostly
// chains and fans, so the kernel is a fraction of the graph. Expand() puts the removed nodes
// back, in reverse order, at their optimal ranks.
class LayeringKernel {
 public:
  using Edge = NetworkSimplex::Edge;

  LayeringKernel(int n, const std::vector<Edge>& edges) : n_(n), edges_(edges) {
    alive_.assign(edges_.size(), 1);
    inc_.assign(n_, {});
    for (int i = 0; i < static_cast<int>(edges_.size()); ++i) {
      inc_[edges_[i].tail].push_back(i);
      inc_[edges_[i].head].push_back(i);
    }
    removed_.assign(n_, 0);
    std::vector<int> queue(n_);
    std::iota(queue.begin(), queue.end(), 0);
    std::vector<char> queued(n_, 1);
    std::vector<int> live;
    for (size_t h = 0; h < queue.size(); ++h) {
      int v = queue[h];
      queued[v] = 0;
      if (removed_[v]) continue;
      Compact(v, &live);
      auto push = [&](int u) {
        if (!queued[u] && !removed_[u]) {
          queued[u] = 1;
          queue.push_back(u);
        }
      };
      if (live.size() == 1) {
        int e = live[0];
        int other = edges_[e].tail == v ? edges_[e].head : edges_[e].tail;
        steps_.push_back({v, other, -1, edges_[e].tail == v ? -edges_[e].minlen : edges_[e].minlen,
                          0, 0, 0, true});
        alive_[e] = 0;
        removed_[v] = 1;
        push(other);
      } else if (live.size() == 2) {
        int a = live[0], b = live[1];
        if (edges_[a].head != v) std::swap(a, b);
        if (edges_[a].head != v || edges_[b].tail != v) continue;
        int t = edges_[a].tail, h = edges_[b].head;
        if (t == h) continue;
        int m1 = edges_[a].minlen, m2 = edges_[b].minlen;
        int64_t w1 = edges_[a].weight, w2 = edges_[b].weight;
        steps_.push_back({v, t, h, m1, m2, w1, w2, false});
        alive_[a] = alive_[b] = 0;
        removed_[v] = 1;
        int existing = -1;
        for (int e : inc_[t]) {
          if (alive_[e] && edges_[e].tail == t && edges_[e].head == h) {
            existing = e;
            break;
          }
        }
        if (existing >= 0) {
          edges_[existing].minlen = std::max(edges_[existing].minlen, m1 + m2);
          edges_[existing].weight += std::min(w1, w2);
        } else {
          edges_.push_back({t, h, m1 + m2, std::min(w1, w2)});
          alive_.push_back(1);
          inc_[t].push_back(static_cast<int>(edges_.size()) - 1);
          inc_[h].push_back(static_cast<int>(edges_.size()) - 1);
        }
        push(t);
        push(h);
      }
    }
    index_.assign(n_, -1);
    for (int v = 0; v < n_; ++v) {
      if (!removed_[v]) {
        index_[v] = static_cast<int>(nodes_.size());
        nodes_.push_back(v);
      }
    }
    for (size_t i = 0; i < edges_.size(); ++i) {
      if (!alive_[i]) continue;
      kernel_edges_.push_back(
          {index_[edges_[i].tail], index_[edges_[i].head], edges_[i].minlen, edges_[i].weight});
    }
  }

  int kernel_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::vector<Edge>& kernel_edges() const { return kernel_edges_; }
  // Kernel ranks from/to full ranks.
  std::vector<int> Restrict(const std::vector<int>& rank) const {
    std::vector<int> r(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) r[i] = rank[nodes_[i]];
    return r;
  }
  void Expand(const std::vector<int>& kernel_rank, std::vector<int>* rank) const {
    for (size_t i = 0; i < nodes_.size(); ++i) (*rank)[nodes_[i]] = kernel_rank[i];
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      if (it->pendant) {
        (*rank)[it->v] = (*rank)[it->t] + it->m1;
      } else if (it->w2 > it->w1) {
        (*rank)[it->v] = (*rank)[it->h] - it->m2;
      } else {
        (*rank)[it->v] = (*rank)[it->t] + it->m1;
      }
    }
  }

 private:
  struct Step {
    int v, t, h;  // pendant: t = the neighbour, m1 = signed offset from it
    int m1, m2;
    int64_t w1, w2;
    bool pendant;
  };
  void Compact(int v, std::vector<int>* live) {
    live->clear();
    auto& l = inc_[v];
    size_t k = 0;
    for (int e : l) {
      if (alive_[e]) l[k++] = e;
    }
    l.resize(k);
    if (l.size() <= 2)
      live->assign(l.begin(), l.end());
    else
      live->resize(3);
  }

  int n_;
  std::vector<Edge> edges_;
  std::vector<char> alive_;
  std::vector<std::vector<int>> inc_;
  std::vector<char> removed_;
  std::vector<Step> steps_;
  std::vector<int> index_, nodes_;
  std::vector<Edge> kernel_edges_;
};

// =============================================================================================
// Per-level working data
// =============================================================================================

enum ItemKind : uint8_t { kReal = 0, kDummy = 1, kChain = 2 };

struct DagEdge {
  int tail;
  int head;
  int orig;  // index in LayoutGraph::edges
  bool reversed;
};

// Sizes and ports of the level's nodes (expanded clusters take their child's size).
struct LevelNodes {
  std::vector<double> w, h;
  std::vector<int> span;
  std::vector<char> cluster;   // expanded
  std::vector<Point> content;  // offset of child origin from box top-left
  // Expanded clusters: operand -> (x offset from box left, inner y offset from top or -1).
  std::vector<std::vector<std::pair<int, std::pair<double, double>>>> in_ports;
  // Expanded clusters: per output port, (x offset from box left, y offset from box top).
  std::vector<std::vector<std::pair<double, double>>> out_ports;
  std::vector<int> ports;            // number of operand ports on ordinary nodes (0 = centre)
};

// The proper layered graph: every edge spans one layer.
struct Proper {
  std::vector<int> item_node;
  std::vector<int> item_layer;
  std::vector<double> item_width;
  std::vector<uint8_t> item_kind;
  std::vector<int> item_comp;
  std::vector<int> top_item, bottom_item;  // per level node
  std::vector<int> up_off, up, down_off, down;
  std::vector<int> route_off, route;  // per dag edge: items tail-bottom .. head-top
  int layer_count = 0;
  int64_t dummies = 0;

  int items() const { return static_cast<int>(item_node.size()); }
  bool Virtual(int i) const { return item_kind[i] != kReal; }
};

int AddItem(Proper* p, int node, int layer, double width, uint8_t kind, int comp) {
  p->item_node.push_back(node);
  p->item_layer.push_back(layer);
  p->item_width.push_back(width);
  p->item_kind.push_back(kind);
  p->item_comp.push_back(comp);
  return p->items() - 1;
}

// Builds the proper graph. Long edges of hubs share one dummy chain per hub.
Proper BuildProper(int n, const std::vector<DagEdge>& dag, const std::vector<int>& rank,
                   const LevelNodes& ln, const std::vector<int>& comp, int hub_threshold,
                   double dummy_width) {
  Proper p;
  p.top_item.assign(n, -1);
  p.bottom_item.assign(n, -1);
  int layers = 0;
  for (int v = 0; v < n; ++v) {
    int k = ln.span[v];
    for (int j = 0; j < k; ++j) {
      int it = AddItem(&p, v, rank[v] + j, ln.w[v], k > 1 ? kChain : kReal, comp[v]);
      if (j == 0) p.top_item[v] = it;
      p.bottom_item[v] = it;
    }
    layers = std::max(layers, rank[v] + k);
  }
  p.layer_count = layers;
  std::vector<std::pair<int, int>> pe;  // proper edges
  pe.reserve(dag.size() * 2);
  for (int v = 0; v < n; ++v) {
    for (int j = p.top_item[v]; j < p.bottom_item[v]; ++j) pe.push_back({j, j + 1});
  }
  // Hub detection on long edges.
  std::vector<int> long_out(n, 0), long_in(n, 0);
  for (const DagEdge& e : dag) {
    int lt = rank[e.tail] + ln.span[e.tail] - 1;
    if (rank[e.head] - lt > 1) {
      ++long_out[e.tail];
      ++long_in[e.head];
    }
  }
  bool share = hub_threshold > 0;
  // Shared chains: per hub, dummy item per layer (index = layer - first layer).
  std::vector<int> out_first(n, -1), in_first(n, -1);
  std::vector<std::vector<int>> out_chain(n), in_chain(n);
  if (share) {
    std::vector<int> out_last(n, -1), in_low(n, std::numeric_limits<int>::max());
    for (const DagEdge& e : dag) {
      int lt = rank[e.tail] + ln.span[e.tail] - 1;
      int lh = rank[e.head];
      if (lh - lt <= 1) continue;
      if (long_out[e.tail] > hub_threshold) {
        out_last[e.tail] = std::max(out_last[e.tail], lh - 1);
      } else if (long_in[e.head] > hub_threshold) {
        in_low[e.head] = std::min(in_low[e.head], lt + 1);
      }
    }
    for (int v = 0; v < n; ++v) {
      if (out_last[v] >= 0) {
        int first = rank[v] + ln.span[v];
        out_first[v] = first;
        int prev = p.bottom_item[v];
        for (int l = first; l <= out_last[v]; ++l) {
          int d = AddItem(&p, -1, l, dummy_width, kDummy, comp[v]);
          out_chain[v].push_back(d);
          pe.push_back({prev, d});
          prev = d;
        }
      }
      if (in_low[v] != std::numeric_limits<int>::max()) {
        in_first[v] = in_low[v];
        for (int l = in_low[v]; l < rank[v]; ++l) {
          in_chain[v].push_back(AddItem(&p, -1, l, dummy_width, kDummy, comp[v]));
        }
        for (size_t j = 0; j + 1 < in_chain[v].size(); ++j) {
          pe.push_back({in_chain[v][j], in_chain[v][j + 1]});
        }
        pe.push_back({in_chain[v].back(), p.top_item[v]});
      }
    }
  }
  p.route_off.assign(dag.size() + 1, 0);
  p.route.reserve(dag.size() * 3);
  for (size_t ei = 0; ei < dag.size(); ++ei) {
    const DagEdge& e = dag[ei];
    int lt = rank[e.tail] + ln.span[e.tail] - 1;
    int lh = rank[e.head];
    int a = p.bottom_item[e.tail];
    int b = p.top_item[e.head];
    p.route.push_back(a);
    if (lh - lt == 1) {
      pe.push_back({a, b});
    } else if (share && out_first[e.tail] >= 0) {
      const auto& ch = out_chain[e.tail];
      for (int l = lt + 1; l <= lh - 1; ++l) p.route.push_back(ch[l - out_first[e.tail]]);
      pe.push_back({ch[lh - 1 - out_first[e.tail]], b});
    } else if (share && in_first[e.head] >= 0) {
      const auto& ch = in_chain[e.head];
      for (int l = lt + 1; l <= lh - 1; ++l) p.route.push_back(ch[l - in_first[e.head]]);
      pe.push_back({a, ch[lt + 1 - in_first[e.head]]});
    } else {
      int prev = a;
      for (int l = lt + 1; l <= lh - 1; ++l) {
        int d = AddItem(&p, -1, l, dummy_width, kDummy, comp[e.tail]);
        p.route.push_back(d);
        pe.push_back({prev, d});
        prev = d;
      }
      pe.push_back({prev, b});
    }
    p.route.push_back(b);
    p.route_off[ei + 1] = static_cast<int>(p.route.size());
  }
  p.dummies = p.items() -
              std::count_if(p.item_node.begin(), p.item_node.end(), [](int v) { return v >= 0; });
  std::sort(pe.begin(), pe.end());
  pe.erase(std::unique(pe.begin(), pe.end()), pe.end());
  int ni = p.items();
  p.up_off.assign(ni + 1, 0);
  p.down_off.assign(ni + 1, 0);
  for (auto [a, b] : pe) {
    ++p.down_off[a + 1];
    ++p.up_off[b + 1];
  }
  for (int i = 0; i < ni; ++i) {
    p.down_off[i + 1] += p.down_off[i];
    p.up_off[i + 1] += p.up_off[i];
  }
  p.down.resize(pe.size());
  p.up.resize(pe.size());
  std::vector<int> dc(p.down_off.begin(), p.down_off.end() - 1);
  std::vector<int> uc(p.up_off.begin(), p.up_off.end() - 1);
  for (auto [a, b] : pe) {
    p.down[dc[a]++] = b;
    p.up[uc[b]++] = a;
  }
  return p;
}

// =============================================================================================
// Ordering
// =============================================================================================

class Ordering {
 public:
  Ordering(const Proper& p, int64_t work_limit) : p_(p), work_limit_(work_limit) {
    layers_.assign(p.layer_count, {});
    pos_.assign(p.items(), 0);
  }

  std::vector<std::vector<int>>& layers() { return layers_; }
  const std::vector<std::vector<int>>& layers() const { return layers_; }
  std::vector<int>& pos() { return pos_; }
  const std::vector<int>& pos() const { return pos_; }
  int64_t work() const { return work_; }
  bool out_of_work() const { return work_ >= work_limit_; }

  // BFS from sources (or sinks) in node order over the undirected proper graph.
  void InitBfs(bool from_sinks, int n_nodes) {
    for (auto& l : layers_) l.clear();
    std::vector<char> seen(p_.items(), 0);
    std::vector<int> queue;
    queue.reserve(p_.items());
    auto visit_from = [&](int seed) {
      if (seen[seed]) return;
      seen[seed] = 1;
      size_t head = queue.size();
      queue.push_back(seed);
      while (head < queue.size()) {
        int u = queue[head++];
        layers_[p_.item_layer[u]].push_back(u);
        auto push_range = [&](const std::vector<int>& adj, int b, int e) {
          for (int k = b; k < e; ++k) {
            int w = adj[k];
            if (!seen[w]) {
              seen[w] = 1;
              queue.push_back(w);
            }
          }
        };
        if (from_sinks) {
          push_range(p_.up, p_.up_off[u], p_.up_off[u + 1]);
          push_range(p_.down, p_.down_off[u], p_.down_off[u + 1]);
        } else {
          push_range(p_.down, p_.down_off[u], p_.down_off[u + 1]);
          push_range(p_.up, p_.up_off[u], p_.up_off[u + 1]);
        }
      }
    };
    for (int v = 0; v < n_nodes; ++v) {
      int it = from_sinks ? p_.bottom_item[v] : p_.top_item[v];
      bool seed =
          from_sinks ? p_.down_off[it + 1] == p_.down_off[it] : p_.up_off[it + 1] == p_.up_off[it];
      if (seed) visit_from(it);
    }
    for (int i = 0; i < p_.items(); ++i) visit_from(i);
    Renumber();
  }

  void Renumber() {
    for (auto& l : layers_) {
      for (int i = 0; i < static_cast<int>(l.size()); ++i) pos_[l[i]] = i;
    }
  }

  // dot's weighted median of the neighbours' positions; -1 when there are none.
  double Median(int item, bool use_up) {
    const std::vector<int>& adj = use_up ? p_.up : p_.down;
    const std::vector<int>& off = use_up ? p_.up_off : p_.down_off;
    int b = off[item], e = off[item + 1];
    int d = e - b;
    work_ += d + 1;
    if (d == 0) return -1;
    if (d == 1) return pos_[adj[b]];
    tmp_.clear();
    for (int k = b; k < e; ++k) tmp_.push_back(pos_[adj[k]]);
    std::sort(tmp_.begin(), tmp_.end());
    if (d == 2) return (tmp_[0] + tmp_[1]) / 2.0;
    int m = d / 2;
    if (d % 2) return tmp_[m];
    double left = tmp_[m - 1] - tmp_[0];
    double right = tmp_[d - 1] - tmp_[m];
    if (left + right == 0) return (tmp_[m - 1] + tmp_[m]) / 2.0;
    return (tmp_[m - 1] * right + tmp_[m] * left) / (left + right);
  }

  void Reorder(int l, bool use_up, bool reverse) {
    std::vector<int>& layer = layers_[l];
    int n = static_cast<int>(layer.size());
    if (n < 2) return;
    keys_.clear();
    fixed_.assign(n, 0);
    for (int i = 0; i < n; ++i) {
      double m = Median(layer[i], use_up);
      if (m < 0) {
        fixed_[i] = 1;
      } else {
        keys_.push_back({p_.item_comp[layer[i]], m, i, layer[i]});
      }
    }
    std::sort(keys_.begin(), keys_.end(), [reverse](const SortKey& a, const SortKey& b) {
      if (a.comp != b.comp) return a.comp < b.comp;
      if (a.m != b.m) return a.m < b.m;
      return reverse ? a.idx > b.idx : a.idx < b.idx;
    });
    size_t k = 0;
    for (int i = 0; i < n; ++i) {
      if (!fixed_[i]) layer[i] = keys_[k++].item;
      pos_[layer[i]] = i;
    }
  }

  // Crossings between layer l and l+1 (Barth-Juenger-Mutzel with a Fenwick tree).
  int64_t CountPair(int l) {
    const std::vector<int>& top = layers_[l];
    int nb = static_cast<int>(layers_[l + 1].size());
    fenwick_.assign(nb + 1, 0);
    int64_t crossings = 0;
    int64_t inserted = 0;
    for (int u : top) {
      int b = p_.down_off[u], e = p_.down_off[u + 1];
      tmp_.clear();
      for (int k = b; k < e; ++k) tmp_.push_back(pos_[p_.down[k]]);
      if (tmp_.size() > 1) std::sort(tmp_.begin(), tmp_.end());
      for (int x : tmp_) {
        int64_t le = 0;
        for (int q = x + 1; q > 0; q -= q & -q) le += fenwick_[q];
        crossings += inserted - le;
      }
      for (int x : tmp_) {
        for (int q = x + 1; q <= nb; q += q & -q) ++fenwick_[q];
        ++inserted;
      }
      work_ += e - b + 1;
    }
    return crossings;
  }

  // Total crossings; 0 when cancelled midway (callers check the token afterwards).
  int64_t Count() {
    int64_t c = 0;
    for (int l = 0; l + 1 < static_cast<int>(layers_.size()); ++l) {
      if ((l & 63) == 63 && Cancelled()) return 0;
      c += CountPair(l);
    }
    return c;
  }

  // Polled inside long loops so a cancel is noticed within a few milliseconds.
  void set_cancelled(std::function<bool()> f) { cancelled_ = std::move(f); }
  bool Cancelled() const { return cancelled_ && cancelled_(); }

  // Crossings among the edges of v and w on one side: (v left of w, w left of v).
  std::pair<int64_t, int64_t> PairCross(int v, int w, bool up) {
    const std::vector<int>& adj = up ? p_.up : p_.down;
    const std::vector<int>& off = up ? p_.up_off : p_.down_off;
    int vb = off[v], ve = off[v + 1], wb = off[w], we = off[w + 1];
    if (vb == ve || wb == we) return {0, 0};
    work_ += (ve - vb) + (we - wb);
    a_.clear();
    b_.clear();
    for (int k = vb; k < ve; ++k) a_.push_back(pos_[adj[k]]);
    for (int k = wb; k < we; ++k) b_.push_back(pos_[adj[k]]);
    if (a_.size() > 1) std::sort(a_.begin(), a_.end());
    if (b_.size() > 1) std::sort(b_.begin(), b_.end());
    // c0: pairs with a > b; c1: pairs with a < b.
    int64_t c0 = 0, c1 = 0;
    // For each b, count a's greater than b and a's less than b.
    size_t lt = 0, le = 0;
    for (size_t j = 0; j < b_.size(); ++j) {
      while (lt < a_.size() && a_[lt] < b_[j]) ++lt;
      while (le < a_.size() && a_[le] <= b_[j]) ++le;
      c1 += static_cast<int64_t>(lt);
      c0 += static_cast<int64_t>(a_.size() - le);
    }
    return {c0, c1};
  }

  // dot's transpose with candidate flags; only within a component; `movable` (if non-null)
  // forbids swapping two items that are both fixed; `window` restricts layers.
  void Transpose(bool reverse, const std::vector<char>* fixed_items, int lo, int hi,
                 int max_rounds) {
    int nl = static_cast<int>(layers_.size());
    lo = std::max(lo, 0);
    hi = std::min(hi, nl - 1);
    std::vector<char> cand(nl, 0);
    for (int l = lo; l <= hi; ++l) cand[l] = 1;
    int64_t delta;
    int rounds = 0;
    do {
      delta = 0;
      for (int l = lo; l <= hi; ++l) {
        if (!cand[l]) continue;
        cand[l] = 0;
        std::vector<int>& layer = layers_[l];
        for (int i = 0; i + 1 < static_cast<int>(layer.size()); ++i) {
          int v = layer[i], w = layer[i + 1];
          if (p_.item_comp[v] != p_.item_comp[w]) continue;
          if (fixed_items && (*fixed_items)[v] && (*fixed_items)[w]) continue;
          int64_t c0 = 0, c1 = 0;
          if (l > 0) {
            auto [a, b] = PairCross(v, w, true);
            c0 += a;
            c1 += b;
          }
          if (l + 1 < nl) {
            auto [a, b] = PairCross(v, w, false);
            c0 += a;
            c1 += b;
          }
          if (c1 < c0 || (c0 > 0 && reverse && c1 == c0)) {
            std::swap(layer[i], layer[i + 1]);
            pos_[layer[i]] = i;
            pos_[layer[i + 1]] = i + 1;
            delta += c0 - c1;
            cand[l] = 1;
            if (l > lo) cand[l - 1] = 1;
            if (l < hi) cand[l + 1] = 1;
          }
        }
        if (out_of_work() || ((l & 15) == 15 && Cancelled())) return;
      }
    } while (delta >= 1 && ++rounds < max_rounds);
  }

  const Proper& proper() const { return p_; }
  void add_work(int64_t w) { work_ += w; }

 private:
  struct SortKey {
    int comp;
    double m;
    int idx;
    int item;
  };

  const Proper& p_;
  int64_t work_limit_;
  int64_t work_ = 0;
  std::vector<std::vector<int>> layers_;
  std::vector<int> pos_;
  std::vector<int> tmp_, a_, b_;
  std::vector<int64_t> fenwick_;
  std::vector<char> fixed_;
  std::vector<SortKey> keys_;
  std::function<bool()> cancelled_;
};

// =============================================================================================
// Coordinates
// =============================================================================================

struct Spacing {
  double node_sep;
  double Sep(const Proper& p, int a, int b) const {
    bool da = p.item_kind[a] == kDummy, db = p.item_kind[b] == kDummy;
    double gap = (!da && !db) ? node_sep : (da && db) ? node_sep / 3 : node_sep / 2;
    return (p.item_width[a] + p.item_width[b]) / 2 + gap;
  }
};

// Sorts every item's neighbour lists by position (Brandes-Koepf and straightening need it).
void SortAdjacency(Proper* p, const std::vector<int>& pos) {
  auto by_pos = [&pos](int a, int b) { return pos[a] < pos[b]; };
  for (int i = 0; i < p->items(); ++i) {
    std::sort(p->up.begin() + p->up_off[i], p->up.begin() + p->up_off[i + 1], by_pos);
    std::sort(p->down.begin() + p->down_off[i], p->down.begin() + p->down_off[i + 1], by_pos);
  }
}

// Left-to-right packing of each layer; the fallback when an alignment is inconsistent.
std::vector<double> PackLayers(const Proper& p, const std::vector<std::vector<int>>& layers,
                               const Spacing& sp) {
  std::vector<double> x(p.items(), 0);
  for (const auto& layer : layers) {
    for (size_t i = 1; i < layer.size(); ++i) {
      x[layer[i]] = x[layer[i - 1]] + sp.Sep(p, layer[i - 1], layer[i]);
    }
  }
  return x;
}

// Brandes-Koepf: four vertical alignments (type-1 conflicts resolved in favour of inner
// segments), each compacted by longest path on the block graph then pulled right where there
// is slack (the compaction dagre uses, which sidesteps the published flaws of the original
// class-shift step), aligned to the narrowest and balanced by the average of the two medians.
std::vector<double> BrandesKoepf(const Proper& p, const std::vector<std::vector<int>>& layers,
                                 const std::vector<int>& pos, const Spacing& sp) {
  int ni = p.items();
  int nl = static_cast<int>(layers.size());
  absl::flat_hash_set<uint64_t> conflicts;
  auto ckey = [](int a, int b) {
    if (a > b) std::swap(a, b);
    return (static_cast<uint64_t>(a) << 32) | static_cast<uint32_t>(b);
  };
  for (int l = 1; l < nl; ++l) {
    const auto& layer = layers[l];
    if (layer.empty()) continue;
    int prev_len = static_cast<int>(layers[l - 1].size());
    int k0 = 0, scan = 0;
    int last = layer.back();
    for (int i = 0; i < static_cast<int>(layer.size()); ++i) {
      int v = layer[i];
      int w = -1;
      if (p.Virtual(v)) {
        for (int k = p.up_off[v]; k < p.up_off[v + 1]; ++k) {
          if (p.Virtual(p.up[k])) {
            w = p.up[k];
            break;
          }
        }
      }
      if (w >= 0 || v == last) {
        int k1 = w >= 0 ? pos[w] : prev_len;
        for (int j = scan; j <= i; ++j) {
          int u = layer[j];
          for (int k = p.up_off[u]; k < p.up_off[u + 1]; ++k) {
            int xq = p.up[k];
            int px = pos[xq];
            if ((px < k0 || k1 < px) && !(p.Virtual(xq) && p.Virtual(u))) {
              conflicts.insert(ckey(xq, u));
            }
          }
        }
        scan = i + 1;
        k0 = k1;
      }
    }
  }

  std::vector<double> xs[4];
  std::vector<int> root(ni), align(ni), posd(ni);
  std::vector<std::pair<int, std::pair<int, double>>> bedges;
  std::vector<int> boff, bdeg, order;
  std::vector<std::pair<int, double>> badj;
  for (int dir = 0; dir < 4; ++dir) {
    bool top_down = dir < 2;
    bool right = dir % 2 == 1;
    for (const auto& layer : layers) {
      int n = static_cast<int>(layer.size());
      for (int i = 0; i < n; ++i) posd[layer[i]] = right ? n - 1 - i : i;
    }
    std::iota(root.begin(), root.end(), 0);
    std::iota(align.begin(), align.end(), 0);
    const std::vector<int>& adj = top_down ? p.up : p.down;
    const std::vector<int>& off = top_down ? p.up_off : p.down_off;
    for (int li = 0; li < nl; ++li) {
      const auto& layer = layers[top_down ? li : nl - 1 - li];
      int n = static_cast<int>(layer.size());
      int prev_idx = -1;
      for (int ii = 0; ii < n; ++ii) {
        int v = layer[right ? n - 1 - ii : ii];
        int b = off[v], e = off[v + 1], d = e - b;
        if (d == 0) continue;
        for (int m = (d - 1) / 2; m <= d / 2; ++m) {
          int w = right ? adj[e - 1 - m] : adj[b + m];
          if (align[v] == v && prev_idx < posd[w] && !conflicts.contains(ckey(v, w))) {
            align[w] = v;
            root[v] = root[w];
            align[v] = root[v];
            prev_idx = posd[w];
          }
        }
      }
    }
    // Block graph: left neighbour's block -> right neighbour's block.
    bedges.clear();
    for (const auto& layer : layers) {
      int n = static_cast<int>(layer.size());
      for (int ii = 1; ii < n; ++ii) {
        int u = layer[right ? n - ii : ii - 1];
        int v = layer[right ? n - 1 - ii : ii];
        bedges.push_back({root[u], {root[v], sp.Sep(p, u, v)}});
      }
    }
    boff.assign(ni + 1, 0);
    bdeg.assign(ni, 0);
    for (const auto& be : bedges) {
      ++boff[be.first + 1];
      ++bdeg[be.second.first];
    }
    for (int i = 0; i < ni; ++i) boff[i + 1] += boff[i];
    badj.assign(bedges.size(), {0, 0.0});
    {
      std::vector<int> cur(boff.begin(), boff.end() - 1);
      for (const auto& be : bedges) badj[cur[be.first]++] = be.second;
    }
    order.clear();
    int roots = 0;
    for (int i = 0; i < ni; ++i) {
      if (root[i] == i) {
        ++roots;
        if (bdeg[i] == 0) order.push_back(i);
      }
    }
    std::vector<double>& bx = xs[dir];
    bx.assign(ni, 0);
    for (size_t h = 0; h < order.size(); ++h) {
      int a = order[h];
      for (int k = boff[a]; k < boff[a + 1]; ++k) {
        auto [c, w] = badj[k];
        bx[c] = std::max(bx[c], bx[a] + w);
        if (--bdeg[c] == 0) order.push_back(c);
      }
    }
    if (static_cast<int>(order.size()) != roots) {
      bx = PackLayers(p, layers, sp);
      if (right) {
        for (double& v : bx) v = -v;
      }
      continue;
    }
    for (int h = static_cast<int>(order.size()) - 1; h >= 0; --h) {
      int a = order[h];
      if (boff[a] == boff[a + 1]) continue;
      double m = std::numeric_limits<double>::infinity();
      for (int k = boff[a]; k < boff[a + 1]; ++k)
        m = std::min(m, bx[badj[k].first] - badj[k].second);
      bx[a] = std::max(bx[a], m);
    }
    std::vector<double> out(ni);
    for (int i = 0; i < ni; ++i) out[i] = right ? -bx[root[i]] : bx[root[i]];
    bx.swap(out);
  }
  // Align to the narrowest layout and balance.
  int best = 0;
  double best_w = std::numeric_limits<double>::infinity();
  double mins[4], maxs[4];
  for (int d = 0; d < 4; ++d) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    double wl = lo, wh = -lo;
    for (int i = 0; i < ni; ++i) {
      lo = std::min(lo, xs[d][i]);
      hi = std::max(hi, xs[d][i]);
      wl = std::min(wl, xs[d][i] - p.item_width[i] / 2);
      wh = std::max(wh, xs[d][i] + p.item_width[i] / 2);
    }
    mins[d] = lo;
    maxs[d] = hi;
    if (wh - wl < best_w) {
      best_w = wh - wl;
      best = d;
    }
  }
  for (int d = 0; d < 4; ++d) {
    if (d == best) continue;
    double delta = (d % 2 == 0) ? mins[best] - mins[d] : maxs[best] - maxs[d];
    for (double& v : xs[d]) v += delta;
  }
  std::vector<double> x(ni);
  for (int i = 0; i < ni; ++i) {
    double v[4] = {xs[0][i], xs[1][i], xs[2][i], xs[3][i]};
    std::sort(v, v + 4);
    x[i] = (v[1] + v[2]) / 2;
  }
  return x;
}

struct Breakpoint {
  double v;
  double w;
  bool operator<(const Breakpoint& o) const { return v < o.v; }
};

// Minimizer of sum w|y - v| over sorted breakpoints [b, e); inside a flat optimum, the point
// closest to the weighted mean, which straightens chains that L1 alone would leave bent.
double WeightedMedian(const Breakpoint* b, const Breakpoint* e) {
  double total = 0, sum = 0;
  for (const Breakpoint* p = b; p != e; ++p) {
    total += p->w;
    sum += p->w * p->v;
  }
  double mean = total > 0 ? sum / total : 0;
  double half = total / 2;
  double cum = 0;
  for (const Breakpoint* p = b; p != e; ++p) {
    cum += p->w;
    if (cum >= half - 1e-12 * total) {
      double lo = p->v;
      double hi = lo;
      if (std::abs(cum - half) <= 1e-12 * total && p + 1 != e) hi = (p + 1)->v;
      return std::clamp(mean, lo, hi);
    }
  }
  return mean;
}

double EdgeWeight(const Proper& p, int a, int b) {
  bool da = p.item_kind[a] == kDummy, db = p.item_kind[b] == kDummy;
  return (da && db) ? 8.0 : (da || db) ? 2.0 : 1.0;
}

// Per-layer L1 isotonic regression (pool adjacent violators) towards the neighbours'
// positions, weights 1/2/8 as dot uses them. It moves a node only when that shortens its
// edges, so straight runs stay straight. `anchor` pulls items towards a previous position
// (incremental relayout); pinned items do not move. Breakpoints live in one array in layer
// order, so pooling two adjacent blocks merges two adjacent sorted ranges in place.
void Straighten(const Proper& p, const std::vector<std::vector<int>>& layers,
                std::vector<double>* xp, int sweeps, const std::vector<char>& pinned,
                const std::vector<double>* anchor, const std::vector<double>* anchor_w,
                bool use_neighbors, const Spacing& sp, const std::function<bool()>& stop,
                const std::vector<char>* only_layers = nullptr) {
  std::vector<double>& x = *xp;
  int nl = static_cast<int>(layers.size());
  struct Block {
    int start;  // first item (index in layer)
    int count;
    size_t bp_lo;  // breakpoint range
    size_t bp_hi;
    double value;
  };
  std::vector<Block> stack;
  std::vector<double> off;
  std::vector<Breakpoint> bps, scratch;
  for (int s = 0; s < sweeps; ++s) {
    if (stop && stop()) return;
    for (int li = 0; li < nl; ++li) {
      if ((li & 63) == 63 && stop && stop()) return;
      int l = s % 2 == 0 ? li : nl - 1 - li;
      if (only_layers && !(*only_layers)[l]) continue;
      const auto& layer = layers[l];
      int n = static_cast<int>(layer.size());
      if (n == 0) continue;
      off.assign(n, 0);
      for (int i = 1; i < n; ++i) off[i] = off[i - 1] + sp.Sep(p, layer[i - 1], layer[i]);
      stack.clear();
      bps.clear();
      for (int i = 0; i < n; ++i) {
        int it = layer[i];
        size_t lo = bps.size();
        double cur = x[it] - off[i];
        if (pinned[it]) {
          bps.push_back({cur, 1e9});
        } else {
          if (use_neighbors) {
            for (int k = p.up_off[it]; k < p.up_off[it + 1]; ++k) {
              bps.push_back({x[p.up[k]] - off[i], EdgeWeight(p, it, p.up[k])});
            }
            for (int k = p.down_off[it]; k < p.down_off[it + 1]; ++k) {
              bps.push_back({x[p.down[k]] - off[i], EdgeWeight(p, it, p.down[k])});
            }
          }
          if (anchor && (*anchor_w)[it] > 0) {
            bps.push_back({(*anchor)[it] - off[i], (*anchor_w)[it]});
          }
          if (bps.size() == lo) bps.push_back({cur, 1e-3});
          std::sort(bps.begin() + lo, bps.end());
        }
        Block b{i, 1, lo, bps.size(), 0};
        b.value = WeightedMedian(bps.data() + b.bp_lo, bps.data() + b.bp_hi);
        while (!stack.empty() && stack.back().value > b.value) {
          Block& t = stack.back();
          scratch.resize(b.bp_hi - t.bp_lo);
          std::merge(bps.begin() + t.bp_lo, bps.begin() + t.bp_hi, bps.begin() + b.bp_lo,
                     bps.begin() + b.bp_hi, scratch.begin());
          std::copy(scratch.begin(), scratch.end(), bps.begin() + t.bp_lo);
          b.start = t.start;
          b.count += t.count;
          b.bp_lo = t.bp_lo;
          b.value = WeightedMedian(bps.data() + b.bp_lo, bps.data() + b.bp_hi);
          stack.pop_back();
        }
        stack.push_back(b);
      }
      for (const Block& b : stack) {
        for (int i = b.start; i < b.start + b.count; ++i) x[layer[i]] = b.value + off[i];
      }
    }
  }
}

// Moves each multi-layer cluster (a pinned chain of items) as one rigid box towards the
// weighted median of its neighbours, as far as the room in every layer it spans allows.
void MoveClusters(const Proper& p, const std::vector<std::vector<int>>& layers,
                  const std::vector<int>& pos, std::vector<double>* xp, const Spacing& sp) {
  std::vector<double>& x = *xp;
  std::vector<Breakpoint> bps;
  int n = static_cast<int>(p.top_item.size());
  for (int v = 0; v < n; ++v) {
    int top = p.top_item[v], bottom = p.bottom_item[v];
    if (top == bottom) continue;
    bps.clear();
    for (int k = p.up_off[top]; k < p.up_off[top + 1]; ++k) bps.push_back({x[p.up[k]], 1});
    for (int k = p.down_off[bottom]; k < p.down_off[bottom + 1]; ++k) {
      bps.push_back({x[p.down[k]], 1});
    }
    if (bps.empty()) continue;
    std::sort(bps.begin(), bps.end());
    double want = WeightedMedian(bps.data(), bps.data() + bps.size());
    double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
    for (int it = top; it <= bottom; ++it) {
      const auto& layer = layers[p.item_layer[it]];
      int i = pos[it];
      if (i > 0) lo = std::max(lo, x[layer[i - 1]] + sp.Sep(p, layer[i - 1], it));
      if (i + 1 < static_cast<int>(layer.size())) {
        hi = std::min(hi, x[layer[i + 1]] - sp.Sep(p, it, layer[i + 1]));
      }
    }
    if (lo > hi) continue;
    double cx = std::clamp(want, lo, hi);
    for (int it = top; it <= bottom; ++it) x[it] = cx;
  }
}

// Makes long edges vertical where there is room: every dummy slot of a route moves to one x
// (the median of their positions, else the x of either end) when that keeps the separation
// from both neighbours in every layer it crosses. Longest routes first.
void StraightenLongEdges(const Proper& p, const std::vector<std::vector<int>>& layers,
                         const std::vector<int>& pos, std::vector<double>* xp, const Spacing& sp) {
  std::vector<double>& x = *xp;
  int routes = static_cast<int>(p.route_off.size()) - 1;
  std::vector<int> order;
  for (int r = 0; r < routes; ++r) {
    if (p.route_off[r + 1] - p.route_off[r] > 3) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(), [&p](int a, int b) {
    return p.route_off[a + 1] - p.route_off[a] > p.route_off[b + 1] - p.route_off[b];
  });
  std::vector<double> xs;
  auto fits = [&](int r, double cx) {
    for (int k = p.route_off[r] + 1; k < p.route_off[r + 1] - 1; ++k) {
      int d = p.route[k];
      const auto& layer = layers[p.item_layer[d]];
      int i = pos[d];
      if (i > 0 && cx < x[layer[i - 1]] + sp.Sep(p, layer[i - 1], d) - 1e-6) return false;
      if (i + 1 < static_cast<int>(layer.size()) &&
          cx > x[layer[i + 1]] - sp.Sep(p, d, layer[i + 1]) + 1e-6) {
        return false;
      }
    }
    return true;
  };
  for (int r : order) {
    int b = p.route_off[r] + 1, e = p.route_off[r + 1] - 1;
    xs.clear();
    for (int k = b; k < e; ++k) xs.push_back(x[p.route[k]]);
    double first = xs.front(), last = xs.back();
    std::nth_element(xs.begin(), xs.begin() + xs.size() / 2, xs.end());
    double med = xs[xs.size() / 2];
    for (double cx : {med, first, last}) {
      if (fits(r, cx)) {
        for (int k = b; k < e; ++k) x[p.route[k]] = cx;
        break;
      }
    }
  }
}

// =============================================================================================
// Level pipeline
// =============================================================================================

struct RunState {
  const LayoutRequest* request = nullptr;
  Clock::time_point start;
  double budget_ms = 0;
  bool deadline_hit = false;

  bool Cancelled() const { return request->cancel && request->cancel->IsCancelled(); }
  // True once `fraction` of the wall-clock budget is used (never without a budget).
  bool Past(double fraction) {
    if (budget_ms <= 0) return false;
    if (MsSince(start) > budget_ms * fraction) {
      deadline_hit = true;
      return true;
    }
    return false;
  }
};

absl::Status Cancelled() { return absl::CancelledError("layout cancelled"); }

LevelNodes ComputeLevelNodes(const LayoutGraph& g,
                             const std::vector<std::shared_ptr<const LayoutResult>>& children,
                             const LayoutOptions& o) {
  int n = g.node_count();
  LevelNodes ln;
  ln.w.resize(n);
  ln.h.resize(n);
  ln.span.assign(n, 1);
  ln.cluster.assign(n, 0);
  ln.content.assign(n, {});
  ln.in_ports.assign(n, {});
  ln.out_ports.assign(n, {});
  ln.ports.assign(n, 0);
  std::vector<double> heights;
  for (int v = 0; v < n; ++v) {
    ln.w[v] = std::max(1.0, g.nodes[v].width);
    ln.h[v] = std::max(1.0, g.nodes[v].height);
    if (!children[v]) heights.push_back(ln.h[v]);
  }
  double nominal = 30;
  if (!heights.empty()) {
    std::nth_element(heights.begin(), heights.begin() + heights.size() / 2, heights.end());
    nominal = heights[heights.size() / 2];
  }
  double pitch = nominal + o.rank_sep;
  for (int v = 0; v < n; ++v) {
    const LayoutResult* c = children[v].get();
    if (!c) continue;
    const LayoutGraph& cg = *g.nodes[v].child;
    double pad = o.cluster_padding;
    double title = o.cluster_title_height;
    ln.cluster[v] = 1;
    ln.w[v] = std::max(ln.w[v], c->width + 2 * pad);
    ln.h[v] = std::max(ln.h[v], c->height + 2 * pad + title);
    double cx = (ln.w[v] - c->width) / 2;
    ln.content[v] = {cx, pad + title};
    if (ln.h[v] > nominal) {
      ln.span[v] = std::max(1, static_cast<int>(std::ceil((ln.h[v] - nominal) / pitch - 1e-9)) + 1);
    }
    for (const ClusterPort& port : cg.inputs) {
      if (port.node < 0 || port.node >= static_cast<int>(c->nodes.size())) continue;
      const NodeBox& b = c->nodes[port.node];
      double inner = b.layer == 0 ? pad + title + b.top() : -1;
      ln.in_ports[v].push_back({port.operand, {cx + b.x, inner}});
    }
    for (int out : cg.outputs) {
      if (out < 0 || out >= static_cast<int>(c->nodes.size())) {
        ln.out_ports[v].push_back({-1, -1});
        continue;
      }
      const NodeBox& b = c->nodes[out];
      ln.out_ports[v].push_back({cx + b.x, pad + title + b.bottom()});
    }
  }
  for (const LayoutEdge& e : g.edges) {
    if (e.kind == EdgeKind::kData && e.operand >= 0) {
      ln.ports[e.dst] = std::max(ln.ports[e.dst], e.operand + 1);
    }
  }
  for (int v = 0; v < n; ++v) {
    if (ln.ports[v] < 2 || ln.ports[v] > o.max_port_operands || ln.cluster[v]) ln.ports[v] = 0;
  }
  return ln;
}

// DFS from the sources in node order; back edges are reversed. Self-loops are dropped.
std::vector<DagEdge> BreakCycles(const LayoutGraph& g) {
  int n = g.node_count();
  std::vector<int> off(n + 1, 0), adj;
  for (const LayoutEdge& e : g.edges) {
    if (e.src != e.dst) ++off[e.src + 1];
  }
  for (int i = 0; i < n; ++i) off[i + 1] += off[i];
  adj.resize(off[n]);
  {
    std::vector<int> cur(off.begin(), off.end() - 1);
    for (int i = 0; i < g.edge_count(); ++i) {
      if (g.edges[i].src != g.edges[i].dst) adj[cur[g.edges[i].src]++] = i;
    }
  }
  std::vector<char> state(n, 0);  // 0 new, 1 on stack, 2 done
  std::vector<char> reversed(g.edges.size(), 0);
  std::vector<std::pair<int, int>> stack;
  std::vector<int> indeg(n, 0);
  for (const LayoutEdge& e : g.edges) {
    if (e.src != e.dst) ++indeg[e.dst];
  }
  auto dfs = [&](int s) {
    if (state[s]) return;
    state[s] = 1;
    stack.push_back({s, off[s]});
    while (!stack.empty()) {
      auto& [v, k] = stack.back();
      if (k < off[v + 1]) {
        int ei = adj[k++];
        int w = g.edges[ei].dst;
        if (state[w] == 1) {
          reversed[ei] = 1;
        } else if (state[w] == 0) {
          state[w] = 1;
          stack.push_back({w, off[w]});
        }
      } else {
        state[v] = 2;
        stack.pop_back();
      }
    }
  };
  for (int v = 0; v < n; ++v) {
    if (indeg[v] == 0) dfs(v);
  }
  for (int v = 0; v < n; ++v) dfs(v);
  std::vector<DagEdge> dag;
  dag.reserve(g.edges.size());
  for (int i = 0; i < g.edge_count(); ++i) {
    const LayoutEdge& e = g.edges[i];
    if (e.src == e.dst) continue;
    if (reversed[i]) {
      dag.push_back({e.dst, e.src, i, true});
    } else {
      dag.push_back({e.src, e.dst, i, false});
    }
  }
  return dag;
}

int Components(int n, const std::vector<DagEdge>& dag, std::vector<int>* comp) {
  std::vector<int> uf(n);
  std::iota(uf.begin(), uf.end(), 0);
  auto find = [&](int x) {
    while (uf[x] != x) {
      uf[x] = uf[uf[x]];
      x = uf[x];
    }
    return x;
  };
  for (const DagEdge& e : dag) {
    int a = find(e.tail), b = find(e.head);
    if (a != b) uf[std::max(a, b)] = std::min(a, b);
  }
  comp->assign(n, -1);
  std::vector<int> id(n, -1);
  int count = 0;
  for (int v = 0; v < n; ++v) {
    int r = find(v);
    if (id[r] < 0) id[r] = count++;
    (*comp)[v] = id[r];
  }
  return count;
}

std::vector<int> TopoOrder(int n, const std::vector<DagEdge>& dag) {
  std::vector<int> off(n + 1, 0), adj(dag.size()), indeg(n, 0);
  for (const DagEdge& e : dag) {
    ++off[e.tail + 1];
    ++indeg[e.head];
  }
  for (int i = 0; i < n; ++i) off[i + 1] += off[i];
  {
    std::vector<int> cur(off.begin(), off.end() - 1);
    for (size_t i = 0; i < dag.size(); ++i) adj[cur[dag[i].tail]++] = dag[i].head;
  }
  std::vector<int> order;
  order.reserve(n);
  for (int v = 0; v < n; ++v) {
    if (indeg[v] == 0) order.push_back(v);
  }
  for (size_t h = 0; h < order.size(); ++h) {
    int v = order[h];
    for (int k = off[v]; k < off[v + 1]; ++k) {
      if (--indeg[adj[k]] == 0) order.push_back(adj[k]);
    }
  }
  return order;
}

// Removes layers no node occupies (ranks stay feasible: an empty layer only shortens edges
// that cross it).
void CompactLayers(int n, const LevelNodes& ln, std::vector<int>* rank) {
  int maxl = 0;
  for (int v = 0; v < n; ++v) maxl = std::max(maxl, (*rank)[v] + ln.span[v]);
  std::vector<int> used(maxl + 1, 0);
  for (int v = 0; v < n; ++v) {
    for (int j = 0; j < ln.span[v]; ++j) used[(*rank)[v] + j] = 1;
  }
  std::vector<int> newi(maxl + 1, 0);
  int c = 0;
  for (int l = 0; l <= maxl; ++l) {
    newi[l] = c;
    if (used[l]) ++c;
  }
  for (int v = 0; v < n; ++v) (*rank)[v] = newi[(*rank)[v]];
}

// Layering: longest path, local sinking/raising towards the heavier side, then network simplex
// within its caps. Returns ranks normalized per component.
std::vector<int> AssignLayers(const LayoutGraph& g, const std::vector<DagEdge>& dag,
                              const LevelNodes& ln, const std::vector<int>& comp, int comps,
                              const LayoutOptions& o, RunState* run, LayoutStats* stats) {
  int n = g.node_count();
  std::vector<int> topo = TopoOrder(n, dag);
  std::vector<int> out_deg(n, 0), in_deg(n, 0);
  for (const DagEdge& e : dag) {
    ++out_deg[e.tail];
    ++in_deg[e.head];
  }
  // Merge parallel edges; hub and control edges weigh less.
  std::vector<NetworkSimplex::Edge> ns;
  ns.reserve(dag.size());
  for (const DagEdge& e : dag) {
    int64_t w = 10;
    if (o.hub_threshold > 0 &&
        (out_deg[e.tail] > o.hub_threshold || in_deg[e.head] > o.hub_threshold)) {
      w = 1;
    } else if (g.edges[e.orig].kind == EdgeKind::kControl) {
      w = 5;
    }
    ns.push_back({e.tail, e.head, ln.span[e.tail], w});
  }
  std::sort(ns.begin(), ns.end(), [](const auto& a, const auto& b) {
    return a.tail != b.tail ? a.tail < b.tail : a.head < b.head;
  });
  {
    size_t k = 0;
    for (size_t i = 0; i < ns.size(); ++i) {
      if (k > 0 && ns[k - 1].tail == ns[i].tail && ns[k - 1].head == ns[i].head) {
        ns[k - 1].weight += ns[i].weight;
      } else {
        ns[k++] = ns[i];
      }
    }
    ns.resize(k);
  }
  std::vector<int> off_out(n + 1, 0), off_in(n + 1, 0), eo(ns.size()), ei(ns.size());
  for (const auto& e : ns) {
    ++off_out[e.tail + 1];
    ++off_in[e.head + 1];
  }
  for (int i = 0; i < n; ++i) {
    off_out[i + 1] += off_out[i];
    off_in[i + 1] += off_in[i];
  }
  {
    std::vector<int> co(off_out.begin(), off_out.end() - 1), ci(off_in.begin(), off_in.end() - 1);
    for (size_t i = 0; i < ns.size(); ++i) {
      eo[co[ns[i].tail]++] = static_cast<int>(i);
      ei[ci[ns[i].head]++] = static_cast<int>(i);
    }
  }
  std::vector<int> rank(n, 0);
  for (int v : topo) {
    for (int k = off_out[v]; k < off_out[v + 1]; ++k) {
      const auto& e = ns[eo[k]];
      rank[e.head] = std::max(rank[e.head], rank[v] + e.minlen);
    }
  }
  // Move each node to the end of its feasible interval that its heavier side prefers.
  for (int round = 0; round < 2; ++round) {
    for (int i = n - 1; i >= 0; --i) {
      int v = topo[i];
      int64_t win = 0, wout = 0;
      int hi = std::numeric_limits<int>::max();
      for (int k = off_in[v]; k < off_in[v + 1]; ++k) win += ns[ei[k]].weight;
      for (int k = off_out[v]; k < off_out[v + 1]; ++k) {
        const auto& e = ns[eo[k]];
        wout += e.weight;
        hi = std::min(hi, rank[e.head] - e.minlen);
      }
      if (wout > win && off_out[v] < off_out[v + 1]) rank[v] = hi;
    }
    for (int v : topo) {
      int64_t win = 0, wout = 0;
      int lo = std::numeric_limits<int>::min();
      for (int k = off_out[v]; k < off_out[v + 1]; ++k) wout += ns[eo[k]].weight;
      for (int k = off_in[v]; k < off_in[v + 1]; ++k) {
        const auto& e = ns[ei[k]];
        win += e.weight;
        lo = std::max(lo, rank[e.tail] + e.minlen);
      }
      if (win > wout && off_in[v] < off_in[v + 1]) rank[v] = lo;
    }
  }
  stats->layering_fallback = true;
  if (o.network_simplex && n > 1 && !ns.empty() && !run->Cancelled()) {
    LayeringKernel kernel(n, ns);
    std::vector<int> krank = kernel.Restrict(rank);
    NetworkSimplex simplex(kernel.kernel_nodes(), kernel.kernel_edges());
    simplex.set_search_size(o.ns_search_size);
    NetworkSimplex::Limits lim;
    lim.max_pivots = static_cast<int64_t>(o.ns_pivots_per_node * n) + 10;
    lim.max_work = std::min(o.ns_work_per_node * static_cast<int64_t>(n), o.ns_max_work) + 100000;
    lim.stop = [run]() { return run->Cancelled() || run->Past(0.15); };
    NetworkSimplex::Outcome r = simplex.Run(&krank, lim);
    kernel.Expand(krank, &rank);
    stats->ns_pivots = r.pivots;
    stats->ns_optimal = r.optimal;
    stats->layering_fallback = false;
  }
  // Normalize per component.
  std::vector<int> cmin(comps, std::numeric_limits<int>::max());
  for (int v = 0; v < n; ++v) cmin[comp[v]] = std::min(cmin[comp[v]], rank[v]);
  for (int v = 0; v < n; ++v) rank[v] -= cmin[comp[v]];
  // Cluster contents: parameters (entry ports) on the top layer.
  std::vector<int> indeg(n, 0);
  for (const DagEdge& e : dag) ++indeg[e.head];
  for (const ClusterPort& p : g.inputs) {
    if (p.node >= 0 && p.node < n && indeg[p.node] == 0) rank[p.node] = 0;
  }
  // Exit ports without users inside (ROOT, a group's exits) on the bottom layer, so that edges
  // leaving the cluster do not cross its contents.
  if (!g.outputs.empty()) {
    std::vector<int> outdeg(n, 0);
    for (const DagEdge& e : dag) ++outdeg[e.tail];
    int bottom = 0;
    for (int v = 0; v < n; ++v) bottom = std::max(bottom, rank[v] + ln.span[v] - 1);
    for (int v : g.outputs) {
      if (v >= 0 && v < n && outdeg[v] == 0 && ln.span[v] == 1) rank[v] = bottom;
    }
  }
  CompactLayers(n, ln, &rank);
  return rank;
}

// Vertical placement: layer bands (tallest ordinary node), clusters spanning several layers
// push the following layers down when they are taller than the bands they cover.
struct Bands {
  std::vector<double> top, height;
};

Bands LayerBands(const Proper& p, const LevelNodes& ln, const std::vector<int>& rank,
                 const LayoutOptions& o) {
  int nl = p.layer_count;
  Bands b;
  b.top.assign(nl, 0);
  b.height.assign(nl, 0);
  int n = static_cast<int>(rank.size());
  std::vector<std::vector<int>> ending(nl);
  for (int v = 0; v < n; ++v) {
    if (ln.span[v] == 1) {
      b.height[rank[v]] = std::max(b.height[rank[v]], ln.h[v]);
    } else {
      ending[rank[v] + ln.span[v] - 1].push_back(v);
    }
  }
  double y = 0;
  for (int l = 0; l < nl; ++l) {
    b.top[l] = y;
    // A cluster taller than the bands it spans spreads the difference over its gaps, so the
    // nodes beside it stay level with its contents.
    for (int v : ending[l]) {
      int a = rank[v], k = ln.span[v];
      double deficit = b.top[a] + ln.h[v] - (b.top[l] + b.height[l]);
      if (deficit <= 0) continue;
      for (int j = 1; j < k; ++j) b.top[a + j] += deficit * j / (k - 1);
    }
    y = b.top[l] + b.height[l] + o.rank_sep;
  }
  return b;
}

// Drops repeated points and middle points of straight runs, in place.
void SimplifyPolyline(std::vector<Point>* pts) {
  std::vector<Point>& p = *pts;
  size_t k = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const Point q = p[i];
    if (k > 0 && std::abs(p[k - 1].x - q.x) < 1e-6 && std::abs(p[k - 1].y - q.y) < 1e-6) continue;
    if (k >= 2) {
      const Point& a = p[k - 2];
      const Point& b = p[k - 1];
      double cross = (b.x - a.x) * (q.y - a.y) - (b.y - a.y) * (q.x - a.x);
      if (std::abs(cross) < 1e-6) {
        p[k - 1] = q;
        continue;
      }
    }
    p[k++] = q;
  }
  p.resize(k);
}

// Positions, routes and the result for one level.
std::shared_ptr<LayoutResult> Assemble(
    const LayoutGraph& g, const LevelNodes& ln, const std::vector<DagEdge>& dag, const Proper& p,
    const std::vector<int>& rank, const std::vector<int>& pos, const std::vector<double>& x,
    const std::vector<std::shared_ptr<const LayoutResult>>& children, const LayoutOptions& o,
    std::vector<std::vector<double>>* edge_x, const std::function<bool()>& cancelled = {}) {
  int n = g.node_count();
  auto r = std::make_shared<LayoutResult>();
  Bands bands = LayerBands(p, ln, rank, o);
  // Shift x so the leftmost box starts at 0.
  double minx = 0;
  bool any = false;
  for (int i = 0; i < p.items(); ++i) {
    double l = x[i] - p.item_width[i] / 2;
    if (!any || l < minx) minx = l;
    any = true;
  }
  auto X = [&](int item) { return x[item] - minx; };
  if (o.max_aspect > 0 && p.layer_count > 1) {
    // Too wide for its height: spread the layers apart (see LayoutOptions::max_aspect).
    double width = 0, height = 0;
    for (int i = 0; i < p.items(); ++i) width = std::max(width, X(i) + p.item_width[i] / 2);
    for (int v = 0; v < n; ++v) height = std::max(height, bands.top[rank[v]] + ln.h[v]);
    if (height > 0 && width > o.max_aspect * height) {
      LayoutOptions spread = o;
      spread.rank_sep = std::min(
          std::max(o.rank_sep, o.max_rank_sep),
          o.rank_sep + (width / o.max_aspect - height) / static_cast<double>(p.layer_count - 1));
      bands = LayerBands(p, ln, rank, spread);
    }
  }
  r->nodes.resize(n);
  r->children = children;
  double maxx = 0, maxy = 0;
  for (int v = 0; v < n; ++v) {
    NodeBox& b = r->nodes[v];
    int top = p.top_item[v];
    b.x = X(top);
    b.width = ln.w[v];
    b.height = ln.h[v];
    b.layer = rank[v];
    b.layer_span = ln.span[v];
    b.order = pos[top];
    if (ln.span[v] == 1) {
      b.y = bands.top[rank[v]] + bands.height[rank[v]] / 2;
    } else {
      b.y = bands.top[rank[v]] + ln.h[v] / 2;
    }
    if (ln.cluster[v]) {
      b.content_origin = {b.left() + ln.content[v].x, b.top() + ln.content[v].y};
    }
    maxx = std::max(maxx, b.right());
    maxy = std::max(maxy, b.bottom());
  }
  r->edges.resize(g.edges.size());
  if (edge_x) edge_x->assign(g.edges.size(), {});
  for (size_t di = 0; di < dag.size(); ++di) {
    if ((di & 4095) == 4095 && cancelled && cancelled()) return nullptr;
    const DagEdge& e = dag[di];
    const LayoutEdge& le = g.edges[e.orig];
    const NodeBox& tb = r->nodes[e.tail];
    const NodeBox& hb = r->nodes[e.head];
    EdgeRoute& route = r->edges[e.orig];
    std::vector<Point>& pts = route.points;
    pts.reserve(4 + 2 * (p.route_off[di + 1] - p.route_off[di]));
    // Tail side (in layered direction).
    int lt = rank[e.tail] + ln.span[e.tail] - 1;
    double tx = tb.x;
    if (!e.reversed && ln.cluster[e.tail] && !ln.out_ports[e.tail].empty()) {
      const auto& ports = ln.out_ports[e.tail];
      int port = le.src_port >= 0 && le.src_port < static_cast<int>(ports.size()) ? le.src_port : 0;
      if (ports[port].first >= 0) {
        tx = tb.left() + ports[port].first;
        pts.push_back({tx, tb.top() + ports[port].second});
      }
    }
    pts.push_back({tx, tb.bottom()});
    double band_bottom = bands.top[lt] + bands.height[lt];
    if (band_bottom > tb.bottom() + 0.5) pts.push_back({tx, band_bottom});
    for (int k = p.route_off[di] + 1; k < p.route_off[di + 1] - 1; ++k) {
      int d = p.route[k];
      int l = p.item_layer[d];
      if (edge_x) (*edge_x)[e.orig].push_back(X(d));
      pts.push_back({X(d), bands.top[l]});
      if (bands.height[l] > 0) pts.push_back({X(d), bands.top[l] + bands.height[l]});
    }
    // Head side: port on the top edge.
    double hx = hb.x;
    double inner = -1;
    if (!e.reversed) {
      if (ln.cluster[e.head]) {
        for (const auto& [operand, off] : ln.in_ports[e.head]) {
          if (operand == le.operand) {
            hx = hb.left() + off.first;
            if (off.second >= 0) inner = hb.top() + off.second;
            break;
          }
        }
      } else if (le.kind == EdgeKind::kData && ln.ports[e.head] > 0 && le.operand >= 0) {
        hx = hb.left() + hb.width * (le.operand + 1) / (ln.ports[e.head] + 1);
      }
    }
    int lh = rank[e.head];
    if (hb.top() > bands.top[lh] + 0.5) pts.push_back({hx, bands.top[lh]});
    pts.push_back({hx, hb.top()});
    if (inner >= 0) pts.push_back({hx, inner});
    SimplifyPolyline(&pts);
    if (e.reversed) {
      std::reverse(route.points.begin(), route.points.end());
      route.reversed = true;
    }
    route.bezier = SmoothPolyline(route.points);
  }
  r->width = maxx;
  r->height = maxy;
  r->layer_count = p.layer_count;
  return r;
}

// What incremental relayout needs from a level's previous layout.
struct LevelMemo {
  uint64_t structure = 0;
  std::vector<uint64_t> node_sig;
  std::vector<int> layer, span;
  std::vector<double> x;
  std::vector<std::vector<double>> edge_x;  // per edge: x of its dummy slots, layered direction
  std::shared_ptr<const LayoutResult> result;
};

std::vector<uint64_t> NodeSignatures(const LayoutGraph& g) {
  std::vector<uint64_t> sig(g.nodes.size());
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const LayoutNode& n = g.nodes[v];
    uint64_t h = Mix(Quant(n.width), Quant(n.height));
    bool expanded = n.expanded && n.child;
    h = Mix(h, expanded ? 1 : 0);
    if (expanded) h = Mix(h, n.child->Fingerprint());
    sig[v] = h;
  }
  return sig;
}

void FillMemo(const LayoutGraph& g, const std::vector<int>& rank, const LevelNodes& ln,
              std::shared_ptr<const LayoutResult> result, std::vector<std::vector<double>> edge_x,
              LevelMemo* memo) {
  memo->structure = g.StructureFingerprint();
  memo->node_sig = NodeSignatures(g);
  memo->layer = rank;
  memo->span = ln.span;
  memo->x.resize(g.nodes.size());
  for (size_t v = 0; v < g.nodes.size(); ++v) memo->x[v] = result->nodes[v].x;
  memo->edge_x = std::move(edge_x);
  memo->result = std::move(result);
}

int64_t OrderingBudget(const LayoutOptions& o, const Proper& p) {
  if (o.ordering_work > 0) return o.ordering_work;
  int64_t pe = static_cast<int64_t>(p.up.size()) + p.items();
  return std::clamp<int64_t>(pe * 60, 4'000'000, 40'000'000);
}

// dot's mincross driver: alternating median sweeps with transposition, best order kept (<=),
// stop after min_quit sweeps without a 0.5% gain, on the work budget, or on the clock.
absl::Status OrderFull(Ordering* ord, int n, const LayoutOptions& o, RunState* run, LayoutStats* st,
                       const std::function<void()>& partial) {
  int nl = static_cast<int>(ord->layers().size());
  bool published = false;
  auto run_start = [&](bool from_sinks, int64_t* best_out,
                       std::vector<std::vector<int>>* best_layers) -> absl::Status {
    ord->InitBfs(from_sinks, n);
    int64_t best = ord->Count();
    if (run->Cancelled()) return Cancelled();
    *best_layers = ord->layers();
    int trying = 0;
    for (int iter = 0; iter < o.max_sweeps; ++iter) {
      if (trying++ >= o.min_quit || best == 0) break;
      if (run->Cancelled()) return Cancelled();
      if (ord->out_of_work() || run->Past(0.6)) {
        st->ordering_limited = true;
        break;
      }
      bool down = iter % 2 == 0;
      bool reverse = iter % 4 < 2;
      if (down) {
        for (int l = 1; l < nl; ++l) {
          ord->Reorder(l, true, reverse);
          if ((l & 63) == 0 && run->Cancelled()) return Cancelled();
        }
      } else {
        for (int l = nl - 2; l >= 0; --l) {
          ord->Reorder(l, false, reverse);
          if ((l & 63) == 0 && run->Cancelled()) return Cancelled();
        }
      }
      if (o.transpose) ord->Transpose(!reverse, nullptr, 0, nl - 1, 12);
      int64_t cur = ord->Count();
      if (run->Cancelled()) return Cancelled();
      ++st->sweeps;
      if (cur <= best) {
        if (cur < o.convergence * best) trying = 0;
        best = cur;
        *best_layers = ord->layers();
      }
      if (!published && partial && st->sweeps == o.partial_after_sweeps) {
        published = true;
        std::vector<std::vector<int>> keep = ord->layers();
        ord->layers() = *best_layers;
        ord->Renumber();
        partial();
        ord->layers() = keep;
        ord->Renumber();
      }
    }
    *best_out = best;
    return absl::OkStatus();
  };
  int64_t best_a = 0;
  std::vector<std::vector<int>> layers_a;
  absl::Status s = run_start(false, &best_a, &layers_a);
  if (!s.ok()) return s;
  if (o.two_starts && best_a > 0 && !st->ordering_limited && !ord->out_of_work()) {
    int64_t best_b = 0;
    std::vector<std::vector<int>> layers_b;
    s = run_start(true, &best_b, &layers_b);
    if (!s.ok()) return s;
    if (best_b < best_a) {
      layers_a.swap(layers_b);
      best_a = best_b;
    }
  }
  ord->layers() = std::move(layers_a);
  ord->Renumber();
  st->crossings = best_a;
  return absl::OkStatus();
}

// dot's x objective: sum over proper edges of weight * |dx| (weights 1/2/8).
double XObjective(const Proper& p, const std::vector<double>& x) {
  double o = 0;
  for (int i = 0; i < p.items(); ++i) {
    for (int k = p.down_off[i]; k < p.down_off[i + 1]; ++k) {
      o += EdgeWeight(p, i, p.down[k]) * std::abs(x[i] - x[p.down[k]]);
    }
  }
  return o;
}

// Refines a start placement: overlap repair, L1 sweeps with clusters moved as rigid boxes in
// between, then long edges made vertical where they fit.
void Refine(const Proper& p, const Ordering& ord, int sweeps, const Spacing& sp,
            const std::function<bool()>& stop, std::vector<double>* x) {
  const auto& layers = ord.layers();
  std::vector<char> pinned(p.items(), 0);
  for (int i = 0; i < p.items(); ++i) {
    if (p.item_kind[i] == kChain) pinned[i] = 1;
  }
  // Clusters spanning several layers are rigid boxes: one x for the whole chain.
  int n = static_cast<int>(p.top_item.size());
  for (int v = 0; v < n; ++v) {
    for (int it = p.top_item[v] + 1; it <= p.bottom_item[v]; ++it) (*x)[it] = (*x)[p.top_item[v]];
  }
  Straighten(p, layers, x, 1, pinned, nullptr, nullptr, false, sp, stop);
  for (int done = 0; done < sweeps; done += 2) {
    MoveClusters(p, layers, ord.pos(), x, sp);
    Straighten(p, layers, x, std::min(2, sweeps - done), pinned, nullptr, nullptr, true, sp, stop);
  }
  StraightenLongEdges(p, layers, ord.pos(), x, sp);
}

std::vector<double> PlaceX(Proper* proper, const Ordering& ord, const LayoutOptions& o,
                           RunState* run, int sweeps, bool allow_candidates) {
  SortAdjacency(proper, ord.pos());
  Spacing sp{o.node_sep};
  const auto& layers = ord.layers();
  auto stop = [run]() { return run->Cancelled() || run->Past(0.85); };
  bool packed = o.x_placement != XPlacement::kBrandesKoepf;
  bool bk = o.x_placement == XPlacement::kBrandesKoepf ||
            (o.x_placement == XPlacement::kBest && allow_candidates &&
             proper->items() <= o.best_of_max_items);
  std::vector<double> xp, xb;
  if (packed) {
    xp = PackLayers(*proper, layers, sp);
    Refine(*proper, ord, sweeps, sp, stop, &xp);
  }
  if (bk && !(run->Cancelled() || run->Past(0.7))) {
    xb = BrandesKoepf(*proper, layers, ord.pos(), sp);
    Refine(*proper, ord, sweeps, sp, stop, &xb);
  }
  if (xb.empty()) return xp;
  if (xp.empty()) return xb;
  // Brandes-Koepf wins when it is better by dot's objective and not much wider: its aligned
  // blocks can drift diagonally across a chain-like graph with side branches, which the
  // objective alone does not see.
  auto width = [proper](const std::vector<double>& x) {
    double lo = std::numeric_limits<double>::infinity(), hi = -lo;
    for (int i = 0; i < proper->items(); ++i) {
      lo = std::min(lo, x[i] - proper->item_width[i] / 2);
      hi = std::max(hi, x[i] + proper->item_width[i] / 2);
    }
    return hi - lo;
  };
  bool take_bk = XObjective(*proper, xb) < XObjective(*proper, xp) && width(xb) <= 1.25 * width(xp);
  return take_bk ? xb : xp;
}

absl::StatusOr<std::shared_ptr<LayoutResult>> FullLayout(
    const LayoutGraph& g, const std::vector<std::shared_ptr<const LayoutResult>>& children,
    const LayoutOptions& o, RunState* run, LayoutStats* st,
    const std::function<void(std::shared_ptr<LayoutResult>)>& publish, LevelMemo* memo) {
  int n = g.node_count();
  LevelNodes ln = ComputeLevelNodes(g, children, o);
  auto t0 = Clock::now();
  std::vector<DagEdge> dag = BreakCycles(g);
  std::vector<int> comp;
  int comps = Components(n, dag, &comp);
  st->components = comps;
  std::vector<int> rank = AssignLayers(g, dag, ln, comp, comps, o, run, st);
  st->ms_layering = MsSince(t0);
  if (run->Cancelled()) return Cancelled();

  t0 = Clock::now();
  Proper proper = BuildProper(n, dag, rank, ln, comp, o.hub_threshold, o.dummy_width);
  if (run->Cancelled()) return Cancelled();
  Ordering ord(proper, OrderingBudget(o, proper));
  ord.set_cancelled([run]() { return run->Cancelled(); });
  std::function<void()> partial;
  if (publish) {
    partial = [&]() {
      Proper copy = proper;
      Ordering snapshot(copy, 0);
      snapshot.layers() = ord.layers();
      snapshot.Renumber();
      LayoutOptions quick = o;
      std::vector<double> x = PlaceX(&copy, snapshot, quick, run, 0, false);
      auto r = Assemble(g, ln, dag, copy, rank, snapshot.pos(), x, children, o, nullptr,
                        [run]() { return run->Cancelled(); });
      if (r == nullptr || run->Cancelled()) return;
      r->partial = true;
      r->stats = *st;
      publish(std::move(r));
    };
  }
  absl::Status s = OrderFull(&ord, n, o, run, st, partial);
  if (!s.ok()) return s;
  st->ms_ordering = MsSince(t0);

  t0 = Clock::now();
  std::vector<double> x = PlaceX(&proper, ord, o, run, o.straighten_sweeps, true);
  if (run->Cancelled()) return Cancelled();
  st->ms_coordinates = MsSince(t0);

  t0 = Clock::now();
  std::vector<std::vector<double>> edge_x;
  auto r = Assemble(g, ln, dag, proper, rank, ord.pos(), x, children, o, &edge_x,
                    [run]() { return run->Cancelled(); });
  if (r == nullptr) return Cancelled();
  st->ms_routing = MsSince(t0);
  st->layers = proper.layer_count;
  st->dummies = proper.dummies;
  st->proper_edges = static_cast<int64_t>(proper.up.size());
  FillMemo(g, rank, ln, r, std::move(edge_x), memo);
  return r;
}

// Sketch-preserving relayout after some nodes changed size or expansion: old layers mapped
// through the inserted/removed layers, old order as the start, ordering only in a window of
// layers around the changed nodes (never swapping two unchanged nodes), x pulled towards the
// old positions.
absl::StatusOr<std::shared_ptr<LayoutResult>> IncrementalLayout(
    const LayoutGraph& g, const std::vector<std::shared_ptr<const LayoutResult>>& children,
    const LayoutOptions& o, RunState* run, LayoutStats* st, const LevelMemo& prev,
    const std::vector<char>& changed, LevelMemo* memo) {
  int n = g.node_count();
  LevelNodes ln = ComputeLevelNodes(g, children, o);
  auto t0 = Clock::now();
  std::vector<DagEdge> dag = BreakCycles(g);
  std::vector<int> comp;
  st->components = Components(n, dag, &comp);

  // Layers: shift everything below a changed node by its change in span.
  int maxl = 0;
  for (int v = 0; v < n; ++v) maxl = std::max(maxl, prev.layer[v] + prev.span[v]);
  std::vector<int> shift(maxl + 2, 0);
  std::vector<int> shrinking;
  for (int v = 0; v < n; ++v) {
    if (!changed[v]) continue;
    int d = ln.span[v] - prev.span[v];
    if (d != 0) shift[prev.layer[v] + prev.span[v]] += d;
    if (d < 0) shrinking.push_back(v);
  }
  for (int l = 1; l < static_cast<int>(shift.size()); ++l) shift[l] += shift[l - 1];
  std::vector<int> rank(n);
  for (int v = 0; v < n; ++v) {
    int l = prev.layer[v];
    rank[v] = l + shift[l];
    for (int c : shrinking) {
      int t = prev.layer[c];
      if (v != c && l > t && l < t + prev.span[c]) {
        rank[v] = t + shift[t] + ((l - t) * ln.span[c]) / prev.span[c];
        break;
      }
    }
    rank[v] = std::max(rank[v], 0);
  }
  {
    std::vector<int> topo = TopoOrder(n, dag);
    std::vector<int> off(n + 1, 0), adj(dag.size());
    for (const DagEdge& e : dag) ++off[e.tail + 1];
    for (int i = 0; i < n; ++i) off[i + 1] += off[i];
    std::vector<int> cur(off.begin(), off.end() - 1);
    for (const DagEdge& e : dag) adj[cur[e.tail]++] = e.head;
    for (int v : topo) {
      for (int k = off[v]; k < off[v + 1]; ++k) {
        rank[adj[k]] = std::max(rank[adj[k]], rank[v] + ln.span[v]);
      }
    }
  }
  CompactLayers(n, ln, &rank);
  st->ms_layering = MsSince(t0);
  if (run->Cancelled()) return Cancelled();

  t0 = Clock::now();
  Proper proper = BuildProper(n, dag, rank, ln, comp, o.hub_threshold, o.dummy_width);
  int ni = proper.items();
  // x estimates: old node centres; a dummy slot takes the old x of its edge on the old layer
  // its new layer came from (layers inserted by an expansion continue the layer above).
  std::vector<double> key(ni, std::numeric_limits<double>::quiet_NaN());
  for (int v = 0; v < n; ++v) {
    for (int it = proper.top_item[v]; it <= proper.bottom_item[v]; ++it) key[it] = prev.x[v];
  }
  int nl_new = proper.layer_count;
  std::vector<int> old_of_new(nl_new, -1);
  for (int v = 0; v < n; ++v) {
    if (!changed[v]) old_of_new[rank[v]] = std::max(old_of_new[rank[v]], prev.layer[v]);
  }
  for (int l = 0; l < nl_new; ++l) {
    if (old_of_new[l] < 0) old_of_new[l] = l > 0 ? old_of_new[l - 1] : 0;
  }
  for (size_t di = 0; di < dag.size(); ++di) {
    const DagEdge& e = dag[di];
    int b = proper.route_off[di], en = proper.route_off[di + 1];
    if (en - b <= 2) continue;
    int old_lt = prev.layer[e.tail] + prev.span[e.tail] - 1, old_lh = prev.layer[e.head];
    const std::vector<double>& ex = prev.edge_x[e.orig];
    for (int k = b + 1; k < en - 1; ++k) {
      int d = proper.route[k];
      if (!std::isnan(key[d])) continue;
      int ol = old_of_new[proper.item_layer[d]];
      int idx = ol - old_lt - 1;
      if (ol <= old_lt) {
        key[d] = prev.x[e.tail];
      } else if (ol >= old_lh) {
        key[d] = prev.x[e.head];
      } else if (idx < static_cast<int>(ex.size())) {
        key[d] = ex[idx];
      } else {
        key[d] = prev.x[e.tail];
      }
    }
  }
  for (double& k : key) {
    if (std::isnan(k)) k = 0;
  }
  std::vector<char> fixed(ni, 0);
  for (int i = 0; i < ni; ++i) {
    int v = proper.item_node[i];
    fixed[i] = proper.item_kind[i] == kReal && v >= 0 && !changed[v];
  }
  Ordering ord(proper, std::numeric_limits<int64_t>::max());
  for (int i = 0; i < ni; ++i) ord.layers()[proper.item_layer[i]].push_back(i);
  auto by_key = [&key](int a, int b) { return key[a] != key[b] ? key[a] < key[b] : a < b; };
  for (auto& layer : ord.layers()) std::sort(layer.begin(), layer.end(), by_key);
  ord.Renumber();
  int nl = proper.layer_count;
  std::vector<char> window(nl, 0);
  for (int v = 0; v < n; ++v) {
    if (!changed[v]) continue;
    for (int l = std::max(0, rank[v] - 2); l <= std::min(nl - 1, rank[v] + ln.span[v] + 1); ++l) {
      window[l] = 1;
    }
  }
  std::vector<double> tmp;
  for (int sweep = 0; sweep < 4; ++sweep) {
    bool use_up = sweep % 2 == 0;
    for (int li = 0; li < nl; ++li) {
      int l = use_up ? li : nl - 1 - li;
      if (!window[l]) continue;
      auto& layer = ord.layers()[l];
      for (int it : layer) {
        if (fixed[it]) continue;
        const std::vector<int>& adj = use_up ? proper.up : proper.down;
        const std::vector<int>& off = use_up ? proper.up_off : proper.down_off;
        tmp.clear();
        for (int k = off[it]; k < off[it + 1]; ++k) tmp.push_back(key[adj[k]]);
        if (tmp.empty() || proper.item_kind[it] == kChain) continue;
        std::sort(tmp.begin(), tmp.end());
        size_t m = tmp.size() / 2;
        key[it] = tmp.size() % 2 ? tmp[m] : (tmp[m - 1] + tmp[m]) / 2;
      }
      std::stable_sort(layer.begin(), layer.end(),
                       [&key](int a, int b) { return key[a] < key[b]; });
    }
    ord.Renumber();
  }
  if (o.transpose) {
    int l = 0;
    while (l < nl) {
      if (!window[l]) {
        ++l;
        continue;
      }
      int h = l;
      while (h + 1 < nl && window[h + 1]) ++h;
      ord.Transpose(false, &fixed, l, h, 4);
      l = h + 1;
    }
  }
  st->crossings = ord.Count();
  st->ms_ordering = MsSince(t0);

  t0 = Clock::now();
  SortAdjacency(&proper, ord.pos());
  Spacing sp{o.node_sep};
  std::vector<double> x = key;
  std::vector<char> pinned(ni, 0);
  std::vector<double> anchor_w(ni, 0);
  for (int i = 0; i < ni; ++i) {
    if (proper.item_kind[i] == kChain) pinned[i] = 1;
    anchor_w[i] = fixed[i] ? 4.0 : proper.item_kind[i] == kDummy ? 1.0 : 2.0;
  }
  auto stop = [run]() { return run->Cancelled() || run->Past(0.85); };
  // Outside the window (plus a margin) items keep their old order and x, so only the window
  // needs placing.
  std::vector<char> place(nl, 0);
  for (int l = 0; l < nl; ++l) {
    if (!window[l]) continue;
    for (int m = std::max(0, l - 3); m <= std::min(nl - 1, l + 3); ++m) place[m] = 1;
  }
  // Layers that nodes were pushed into (or out of) may have lost their separation.
  for (int l = 0; l < nl; ++l) {
    const auto& layer = ord.layers()[l];
    for (size_t i = 1; i < layer.size() && !place[l]; ++i) {
      if (x[layer[i]] - x[layer[i - 1]] < sp.Sep(proper, layer[i - 1], layer[i]) - 1e-6) {
        place[l] = 1;
      }
    }
  }
  Straighten(proper, ord.layers(), &x, 1, pinned, &key, &anchor_w, false, sp, stop, &place);
  Straighten(proper, ord.layers(), &x, std::min(3, o.straighten_sweeps), pinned, &key, &anchor_w,
             true, sp, stop, &place);
  if (run->Cancelled()) return Cancelled();
  st->ms_coordinates = MsSince(t0);

  t0 = Clock::now();
  std::vector<std::vector<double>> edge_x;
  auto r = Assemble(g, ln, dag, proper, rank, ord.pos(), x, children, o, &edge_x,
                    [run]() { return run->Cancelled(); });
  if (r == nullptr) return Cancelled();
  st->ms_routing = MsSince(t0);
  st->layers = proper.layer_count;
  st->dummies = proper.dummies;
  st->proper_edges = static_cast<int64_t>(proper.up.size());
  st->incremental = true;
  FillMemo(g, rank, ln, r, std::move(edge_x), memo);
  return r;
}

}  // namespace

// =============================================================================================
// LayeredLayout
// =============================================================================================

struct LayeredLayout::Memo : LevelMemo {};
struct LayeredLayout::Run : RunState {};

uint64_t LayoutOptions::Hash() const {
  uint64_t h = 0x1234;
  for (double d :
       {node_sep, dummy_width, rank_sep, cluster_padding, cluster_title_height, ns_pivots_per_node,
        convergence, incremental_max_changed, max_aspect, max_rank_sep}) {
    h = Mix(h, Quant(d));
  }
  for (int64_t i :
       {int64_t{hub_threshold}, int64_t{network_simplex}, int64_t{ns_search_size}, ns_work_per_node,
        ns_max_work, int64_t{max_sweeps}, int64_t{min_quit}, int64_t{two_starts},
        int64_t{transpose}, ordering_work, static_cast<int64_t>(x_placement), best_of_max_items,
        int64_t{straighten_sweeps}, int64_t{max_port_operands}}) {
    h = Mix(h, static_cast<uint64_t>(i));
  }
  return h;
}

LayeredLayout::LayeredLayout(LayoutOptions options) { set_options(options); }
LayeredLayout::~LayeredLayout() = default;

void LayeredLayout::set_options(const LayoutOptions& options) {
  options_ = options;
  uint64_t h = options_.Hash();
  if (h != options_hash_) {
    options_hash_ = h;
    memos_.clear();
  }
}

void LayeredLayout::ClearCache() {
  lru_.clear();
  cache_.clear();
  memos_.clear();
}

absl::StatusOr<std::shared_ptr<const LayoutResult>> LayeredLayout::Layout(
    const LayoutGraph& graph, const LayoutRequest& request) {
  absl::Status valid = graph.Validate();
  if (!valid.ok()) return valid;
  Run run;
  run.request = &request;
  run.start = Clock::now();
  run.budget_ms = options_.time_budget_ms;
  return LayoutLevel(graph, "", &run);
}

absl::StatusOr<std::shared_ptr<const LayoutResult>> LayeredLayout::LayoutLevel(
    const LayoutGraph& g, const std::string& path, Run* run) {
  if (run->Cancelled()) return Cancelled();
  auto t0 = Clock::now();
  int n = g.node_count();
  std::vector<std::shared_ptr<const LayoutResult>> children(n);
  for (int v = 0; v < n; ++v) {
    const LayoutNode& node = g.nodes[v];
    if (!node.expanded || !node.child) continue;
    auto c = LayoutLevel(*node.child, path + "/" + node.key, run);
    if (!c.ok()) return c.status();
    children[v] = *std::move(c);
  }
  uint64_t key = Mix(g.Fingerprint(), options_hash_);
  if (auto it = cache_.find(key); it != cache_.end()) {
    lru_.splice(lru_.end(), lru_, it->second);
    memos_[path] = it->second->second;
    return it->second->second->result;
  }

  LayoutStats st;
  st.nodes = n;
  st.edges = g.edge_count();
  auto memo = std::make_shared<Memo>();
  // The aspect limit is for the whole drawing, not for the contents of its clusters.
  LayoutOptions level_options = options_;
  if (!path.empty()) level_options.max_aspect = 0;
  absl::StatusOr<std::shared_ptr<LayoutResult>> r;
  bool done = false;
  if (options_.incremental) {
    auto pit = memos_.find(path);
    if (pit != memos_.end()) {
      const Memo& prev = *pit->second;
      if (prev.structure == g.StructureFingerprint() &&
          static_cast<int>(prev.node_sig.size()) == n) {
        std::vector<uint64_t> sig = NodeSignatures(g);
        std::vector<char> changed(n, 0);
        int count = 0;
        for (int v = 0; v < n; ++v) {
          changed[v] = sig[v] != prev.node_sig[v];
          count += changed[v];
        }
        int limit = std::max(1, static_cast<int>(options_.incremental_max_changed * n));
        if (count > 0 && count <= limit) {
          r = IncrementalLayout(g, children, level_options, run, &st, prev, changed, memo.get());
          done = true;
        }
      }
    }
  }
  if (!done) {
    std::function<void(std::shared_ptr<LayoutResult>)> publish;
    if (path.empty() && run->request->on_partial && n >= options_.partial_min_nodes) {
      publish = [run](std::shared_ptr<LayoutResult> partial) {
        run->request->on_partial(std::move(partial));
      };
    }
    r = FullLayout(g, children, level_options, run, &st, publish, memo.get());
  }
  if (!r.ok()) return r.status();
  std::shared_ptr<LayoutResult> result = *std::move(r);
  st.deadline_hit = run->deadline_hit;
  st.ms_total = MsSince(t0);
  result->stats = st;
  memo->result = result;
  std::shared_ptr<const Memo> cmemo = memo;
  memos_[path] = cmemo;
  if (options_.cache_entries > 0 && !run->deadline_hit) {
    lru_.push_back({key, cmemo});
    cache_[key] = std::prev(lru_.end());
    while (static_cast<int>(lru_.size()) > options_.cache_entries) {
      cache_.erase(lru_.front().first);
      lru_.pop_front();
    }
  }
  return std::shared_ptr<const LayoutResult>(result);
}

absl::StatusOr<std::shared_ptr<const LayoutResult>> LayoutOnce(const LayoutGraph& graph,
                                                               const LayoutOptions& options) {
  LayoutOptions o = options;
  o.cache_entries = 0;
  LayeredLayout engine(o);
  return engine.Layout(graph);
}

}  // namespace hlowb::graph
