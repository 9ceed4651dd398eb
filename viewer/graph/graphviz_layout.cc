#include "viewer/graph/graphviz_layout.h"

#include <fcntl.h>
#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sstream>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/support/strings.h"

namespace hlowb::graph {
namespace {

// ---------------------------------------------------------------------------------------------
// Levels of a nested graph, numbered depth-first (top = 0).
// ---------------------------------------------------------------------------------------------

struct Level {
  const LayoutGraph* graph = nullptr;
  int parent = -1;               // parent level
  int parent_node = -1;          // node of the parent level this level expands
  std::vector<int> child_level;  // per node: level id of its expanded contents, or -1
};

bool IsExpanded(const LayoutNode& n) {
  return n.expanded && n.child != nullptr && !n.child->nodes.empty();
}

void CollectLevels(const LayoutGraph& g, int parent, int parent_node, std::vector<Level>* out) {
  int id = static_cast<int>(out->size());
  out->push_back({&g, parent, parent_node, std::vector<int>(g.nodes.size(), -1)});
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (!IsExpanded(g.nodes[i])) continue;
    int child_id = static_cast<int>(out->size());
    (*out)[id].child_level[i] = child_id;
    CollectLevels(*g.nodes[i].child, id, static_cast<int>(i), out);
  }
}

std::string NodeId(int level, int index) { return StrCat("n", level, "_", index); }
std::string EdgeId(int level, int index) { return StrCat("e", level, "_", index); }
std::string ClusterId(int level, int index) { return StrCat("cluster_", level, "_", index); }

std::string Quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

std::string Color(uint32_t rgb) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "\"#%06x\"", rgb & 0xFFFFFF);
  return buf;
}

std::string Inches(double points) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4f", points / 72.0);
  return buf;
}

// The DOT node an edge into node v (operand) of level l really ends at; sets *cluster when it
// is clipped at an expanded cluster's frame (no port).
std::string ResolveIn(const std::vector<Level>& levels, int l, int v, int operand,
                      std::string* cluster) {
  int cl = levels[l].child_level[v];
  if (cl < 0) return NodeId(l, v);
  const LayoutGraph& c = *levels[cl].graph;
  for (const ClusterPort& p : c.inputs) {
    if (p.operand == operand) return ResolveIn(levels, cl, p.node, -1, cluster);
  }
  if (cluster->empty()) *cluster = ClusterId(l, v);
  return ResolveIn(levels, cl, 0, -1, cluster);
}

// `src_port` selects which of the cluster's outputs (LayoutEdge::src_port).
std::string ResolveOut(const std::vector<Level>& levels, int l, int v, int src_port,
                       std::string* cluster) {
  int cl = levels[l].child_level[v];
  if (cl < 0) return NodeId(l, v);
  const LayoutGraph& c = *levels[cl].graph;
  if (!c.outputs.empty()) return ResolveOut(levels, cl, c.OutputNode(src_port), -1, cluster);
  if (cluster->empty()) *cluster = ClusterId(l, v);
  return ResolveOut(levels, cl, c.node_count() - 1, -1, cluster);
}

void WriteNodes(const std::vector<Level>& levels, int l, const DotOptions& o, std::string* out,
                int indent) {
  const LayoutGraph& g = *levels[l].graph;
  std::string pad(indent, ' ');
  for (int i = 0; i < g.node_count(); ++i) {
    const LayoutNode& n = g.nodes[i];
    int cl = levels[l].child_level[i];
    if (cl >= 0) {
      StrAppend(out, pad, "subgraph ", ClusterId(l, i), " {\n", pad,
                "  label=", Quote(n.cluster_title.empty() ? n.key : n.cluster_title),
                "; style=\"rounded\"; color=", Color(n.style.stroke), ";\n");
      WriteNodes(levels, cl, o, out, indent + 2);
      StrAppend(out, pad, "}\n");
      continue;
    }
    std::string label;
    if (o.labels) {
      for (size_t k = 0; k < n.label.size(); ++k) {
        if (k) label += '\n';
        label += n.label[k];
      }
    }
    std::string style = "filled";
    const char* shape = "box";
    if (n.style.shape == NodeShape::kRoundedBox) style += ",rounded";
    if (n.style.shape == NodeShape::kEllipse) shape = "ellipse";
    if (n.style.dashed) style += ",dashed";
    StrAppend(out, pad, NodeId(l, i), " [label=", Quote(label), ", shape=", shape, ", style=\"",
              style, "\", fillcolor=", Color(n.style.fill), ", color=", Color(n.style.stroke),
              ", fontcolor=", Color(n.style.text));
    if (o.fixed_size) {
      StrAppend(out, ", fixedsize=true, width=", Inches(n.width), ", height=", Inches(n.height));
    }
    if (!n.tooltip.empty()) StrAppend(out, ", tooltip=", Quote(n.tooltip));
    StrAppend(out, "];\n");
  }
}

void WriteEdges(const std::vector<Level>& levels, int l, std::string* out) {
  const LayoutGraph& g = *levels[l].graph;
  for (int i = 0; i < g.edge_count(); ++i) {
    const LayoutEdge& e = g.edges[i];
    std::string ltail, lhead;
    std::string a = ResolveOut(levels, l, e.src, e.src_port, &ltail);
    std::string b = ResolveIn(levels, l, e.dst, e.operand, &lhead);
    StrAppend(out, "  ", a, " -> ", b, " [id=", EdgeId(l, i));
    if (!e.label.empty()) StrAppend(out, ", headlabel=", Quote(e.label));
    if (e.kind == EdgeKind::kControl) StrAppend(out, ", style=dotted, color=\"#888888\"");
    if (!ltail.empty()) StrAppend(out, ", ltail=", ltail);
    if (!lhead.empty()) StrAppend(out, ", lhead=", lhead);
    StrAppend(out, "];\n");
  }
  for (int i = 0; i < g.node_count(); ++i) {
    if (levels[l].child_level[i] >= 0) WriteEdges(levels, levels[l].child_level[i], out);
  }
}

// ---------------------------------------------------------------------------------------------
// Child process
// ---------------------------------------------------------------------------------------------

std::mutex& GraphvizMutex() {
  static std::mutex* m = new std::mutex;
  return *m;
}

bool WriteAll(int fd, const char* data, size_t len) {
  while (len > 0) {
    ssize_t w = write(fd, data, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += w;
    len -= static_cast<size_t>(w);
  }
  return true;
}

void AppendNum(std::string* out, double v) {
  char buf[32];
  int n = std::snprintf(buf, sizeof(buf), " %.3f", v);
  out->append(buf, n);
}

void DumpClusters(Agraph_t* g, std::string* out) {
  for (int i = 1; i <= GD_n_cluster(g); ++i) {
    Agraph_t* c = GD_clust(g)[i];
    boxf bb = GD_bb(c);
    StrAppend(out, "C ", agnameof(c));
    AppendNum(out, bb.LL.x);
    AppendNum(out, bb.LL.y);
    AppendNum(out, bb.UR.x);
    AppendNum(out, bb.UR.y);
    out->push_back('\n');
    DumpClusters(c, out);
  }
}

// Runs in the forked child: never returns.
[[noreturn]] void ChildMain(int fd, const std::string& dot, bool svg) {
  Agraph_t* g = agmemread(dot.c_str());
  if (g == nullptr) _exit(2);
  GVC_t* gvc = gvContext();
  if (gvLayout(gvc, g, "dot") != 0) _exit(3);
  if (svg) {
    char* data = nullptr;
    unsigned int len = 0;
    char fmt[] = "svg";
    if (gvRenderData(gvc, g, fmt, &data, &len) != 0) _exit(4);
    bool ok = WriteAll(fd, data, len);
    _exit(ok ? 0 : 5);
  }
  std::string out;
  out.reserve(1 << 20);
  boxf bb = GD_bb(g);
  out += "B";
  AppendNum(&out, bb.LL.x);
  AppendNum(&out, bb.LL.y);
  AppendNum(&out, bb.UR.x);
  AppendNum(&out, bb.UR.y);
  out.push_back('\n');
  char id_attr[] = "id";
  for (Agnode_t* n = agfstnode(g); n; n = agnxtnode(g, n)) {
    StrAppend(&out, "N ", agnameof(n));
    AppendNum(&out, ND_coord(n).x);
    AppendNum(&out, ND_coord(n).y);
    AppendNum(&out, ND_width(n) * 72.0);
    AppendNum(&out, ND_height(n) * 72.0);
    out.push_back('\n');
    for (Agedge_t* e = agfstout(g, n); e; e = agnxtout(g, e)) {
      char* id = agget(e, id_attr);
      const splines* spl = ED_spl(e);
      if (id == nullptr || spl == nullptr) continue;
      size_t count = 0;
      for (int b = 0; b < spl->size; ++b) count += spl->list[b].size;
      StrAppend(&out, "E ", id, " ", count);
      for (int b = 0; b < spl->size; ++b) {
        const bezier& bz = spl->list[b];
        for (int k = 0; k < bz.size; ++k) {
          AppendNum(&out, bz.list[k].x);
          AppendNum(&out, bz.list[k].y);
        }
      }
      out.push_back('\n');
    }
  }
  DumpClusters(g, &out);
  bool ok = WriteAll(fd, out.data(), out.size());
  _exit(ok ? 0 : 5);
}

absl::StatusOr<std::string> RunChild(const std::string& dot, bool svg, const GraphvizOptions& o) {
  std::lock_guard<std::mutex> lock(GraphvizMutex());
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError("pipe() failed");
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError("fork() failed");
  }
  if (pid == 0) {
    close(fds[0]);
    ChildMain(fds[1], dot, svg);
  }
  close(fds[1]);
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(o.timeout_seconds * 1000));
  std::string data;
  char buf[1 << 16];
  absl::Status failure;
  while (true) {
    if (o.cancel && o.cancel->IsCancelled()) {
      failure = absl::CancelledError("Graphviz layout cancelled");
      break;
    }
    auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      failure = absl::DeadlineExceededError(
          StrCat("Graphviz dot did not finish within ", o.timeout_seconds, " s"));
      break;
    }
    int wait_ms = static_cast<int>(std::min<int64_t>(
        50, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1));
    pollfd p{fds[0], POLLIN, 0};
    int r = poll(&p, 1, wait_ms);
    if (r < 0) {
      if (errno == EINTR) continue;
      failure = absl::InternalError("poll() failed");
      break;
    }
    if (r == 0) continue;
    ssize_t n = read(fds[0], buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      failure = absl::InternalError("read() from the Graphviz child failed");
      break;
    }
    if (n == 0) break;  // EOF
    data.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  if (!failure.ok()) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return failure;
  }
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    const char* what = code == 2   ? "could not parse the generated DOT"
                       : code == 3 ? "gvLayout failed"
                       : code == 4 ? "SVG rendering failed"
                                   : "the Graphviz child process died";
    return absl::InternalError(StrCat("Graphviz: ", what, " (exit ", code, ")"));
  }
  return data;
}

// "n<level>_<index>" and friends.
bool ParseId(const std::string& s, const char* prefix, int* level, int* index) {
  size_t pl = std::strlen(prefix);
  if (s.compare(0, pl, prefix) != 0) return false;
  return std::sscanf(s.c_str() + pl, "%d_%d", level, index) == 2;
}

}  // namespace

std::string ExportDot(const LayoutGraph& graph, const DotOptions& o) {
  std::vector<Level> levels;
  CollectLevels(graph, -1, -1, &levels);
  std::string out;
  StrAppend(&out, "digraph ", Quote(graph.name.empty() ? "G" : graph.name), " {\n");
  StrAppend(&out, "  graph [rankdir=TB, compound=true, nodesep=", Inches(o.node_sep),
            ", ranksep=", Inches(o.rank_sep), ", splines=", o.splines,
            ", fontname=", Quote(o.font_name), "];\n");
  if (!o.extra_graph_attributes.empty()) StrAppend(&out, "  ", o.extra_graph_attributes, "\n");
  StrAppend(&out, "  node [fontname=", Quote(o.font_name), ", fontsize=", o.font_size,
            ", margin=\"0.06,0.03\"];\n");
  StrAppend(&out, "  edge [fontname=", Quote(o.font_name), ", fontsize=", o.font_size - 2,
            ", arrowsize=0.6];\n");
  WriteNodes(levels, 0, o, &out, 2);
  WriteEdges(levels, 0, &out);
  out += "}\n";
  return out;
}

absl::StatusOr<std::shared_ptr<const LayoutResult>> GraphvizLayout(const LayoutGraph& graph,
                                                                   const GraphvizOptions& o) {
  absl::Status valid = graph.Validate();
  if (!valid.ok()) return valid;
  int64_t total = graph.TotalNodeCount();
  if (o.max_nodes > 0 && total > o.max_nodes) {
    return absl::ResourceExhaustedError(StrCat("the graph has ", total,
                                               " nodes; the Graphviz layout is limited to ",
                                               o.max_nodes, " (use the layered layout)"));
  }
  std::vector<Level> levels;
  CollectLevels(graph, -1, -1, &levels);
  std::string dot = ExportDot(graph, o.dot);
  absl::StatusOr<std::string> text = RunChild(dot, /*svg=*/false, o);
  if (!text.ok()) return text.status();

  // Absolute coordinates first (y flipped to point down), then per-level offsets.
  std::vector<std::shared_ptr<LayoutResult>> results(levels.size());
  for (size_t l = 0; l < levels.size(); ++l) {
    results[l] = std::make_shared<LayoutResult>();
    results[l]->nodes.resize(levels[l].graph->nodes.size());
    results[l]->edges.resize(levels[l].graph->edges.size());
    results[l]->children.resize(levels[l].graph->nodes.size());
  }
  double top = 0, width = 0, height = 0, left = 0;
  std::istringstream in(*text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream ls(line.substr(2));
    char kind = line[0];
    if (kind == 'B') {
      double x0, y0, x1, y1;
      ls >> x0 >> y0 >> x1 >> y1;
      left = x0;
      top = y1;
      width = x1 - x0;
      height = y1 - y0;
    } else if (kind == 'N') {
      std::string name;
      double x, y, w, h;
      ls >> name >> x >> y >> w >> h;
      int l, i;
      if (!ParseId(name, "n", &l, &i) || l < 0 || l >= static_cast<int>(levels.size()) || i < 0 ||
          i >= static_cast<int>(results[l]->nodes.size())) {
        continue;
      }
      NodeBox& b = results[l]->nodes[i];
      b.x = x - left;
      b.y = top - y;
      b.width = w;
      b.height = h;
    } else if (kind == 'E') {
      std::string name;
      size_t count = 0;
      ls >> name >> count;
      int l, i;
      if (!ParseId(name, "e", &l, &i) || l < 0 || l >= static_cast<int>(levels.size()) || i < 0 ||
          i >= static_cast<int>(results[l]->edges.size())) {
        continue;
      }
      EdgeRoute& r = results[l]->edges[i];
      for (size_t k = 0; k < count; ++k) {
        double x, y;
        ls >> x >> y;
        r.bezier.push_back({x - left, top - y});
      }
      if (r.bezier.size() % 3 != 1) {
        r.points = r.bezier;
        r.bezier.clear();
      } else {
        r.points = FlattenCurve(r.bezier, true);
      }
    } else if (kind == 'C') {
      std::string name;
      double x0, y0, x1, y1;
      ls >> name >> x0 >> y0 >> x1 >> y1;
      int l, i;
      if (!ParseId(name, "cluster_", &l, &i) || l < 0 || l >= static_cast<int>(levels.size()) ||
          i < 0 || i >= static_cast<int>(results[l]->nodes.size())) {
        continue;
      }
      NodeBox& b = results[l]->nodes[i];
      b.x = (x0 + x1) / 2 - left;
      b.y = top - (y0 + y1) / 2;
      b.width = x1 - x0;
      b.height = y1 - y0;
      b.content_origin = {b.left(), b.top()};
    }
  }
  // Children: make coordinates relative to their cluster frame, deepest levels first.
  std::vector<Point> origin(levels.size());
  for (size_t l = 1; l < levels.size(); ++l) {
    const NodeBox& frame = results[levels[l].parent]->nodes[levels[l].parent_node];
    origin[l] = {frame.left(), frame.top()};
  }
  for (size_t l = 0; l < levels.size(); ++l) {
    LayoutResult& r = *results[l];
    for (NodeBox& b : r.nodes) {
      b.x -= origin[l].x;
      b.y -= origin[l].y;
      if (b.width > 0) b.content_origin = {b.left(), b.top()};
    }
    for (EdgeRoute& e : r.edges) {
      for (Point& p : e.points) {
        p.x -= origin[l].x;
        p.y -= origin[l].y;
      }
      for (Point& p : e.bezier) {
        p.x -= origin[l].x;
        p.y -= origin[l].y;
      }
    }
    r.stats.nodes = levels[l].graph->node_count();
    r.stats.edges = levels[l].graph->edge_count();
  }
  for (size_t l = levels.size(); l-- > 1;) {
    const NodeBox& frame = results[levels[l].parent]->nodes[levels[l].parent_node];
    results[l]->width = frame.width;
    results[l]->height = frame.height;
    results[levels[l].parent]->children[levels[l].parent_node] = results[l];
  }
  results[0]->width = width;
  results[0]->height = height;
  return std::shared_ptr<const LayoutResult>(results[0]);
}

absl::StatusOr<std::string> RenderSvg(const LayoutGraph& graph, const GraphvizOptions& o) {
  absl::Status valid = graph.Validate();
  if (!valid.ok()) return valid;
  int64_t total = graph.TotalNodeCount();
  if (o.max_nodes > 0 && total > o.max_nodes) {
    return absl::ResourceExhaustedError(
        StrCat("the graph has ", total, " nodes; Graphviz export is limited to ", o.max_nodes));
  }
  return RunChild(ExportDot(graph, o.dot), /*svg=*/true, o);
}

}  // namespace hlowb::graph
