// GraphView's controller. The pipeline of one request (a generation):
//   UI: Request() -> pool: Prepare (build/expand the HloGraph, pick the shown subgraph)
//   -> UI: OnPrepared -> LayoutJob worker (or Graphviz on the pool) -> UI: OnLayout
//   -> pool: BuildSceneModel (flatten, curves, thumbnail) -> UI: OnModel -> populate a staging
//   scene in time slices -> Swap (the new scene replaces the old, which is deleted in slices).
// Every step drops results of superseded generations; the UI thread only creates items, a
// bounded number per event-loop slice.
#include "viewer/graph/graph_view.h"

#include <thread>

#include <QCoreApplication>

#include <QPointer>
#include <QResizeEvent>

#include <QApplication>
#include <QElapsedTimer>
#include <QEvent>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QMenu>
#include <QMetaObject>
#include <QPainter>
#include <QScrollBar>
#include <QSvgGenerator>
#include <QThread>
#include <QThreadPool>
#include <QTimer>
#include <QLinearGradient>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#ifdef __linux__
#include <ctime>
#endif

#include "core/ir/opcode.h"
#include "core/support/cancel.h"
#include "viewer/graph/graph_canvas.h"
#include "viewer/graph/graph_scene.h"
#include "viewer/graph/graph_subgraph.h"
#include "viewer/graph/graphviz_layout.h"
#include "viewer/graph/hlo_graph.h"
#include "viewer/graph/layout_job.h"
#include "viewer/graph/sharding_info.h"
#include "viewer/widgets/thread_priority.h"

namespace hlowb::viewer {
namespace {

using graph::HloGraph;
using graph::LayoutGraph;
using graph::LayoutResult;

// Time a UI-thread slice may spend creating or deleting items.
constexpr double kSliceMs = 12;
// Scenes with at least this many items get a far-zoom image.
constexpr size_t kFarImageMinItems = 1500;

enum class Mode { kAuto, kWhole, kNeighborhood, kAllPaths };

// HLOWB_GRAPH_TRACE=1 logs the UI-thread time of each pipeline step.
bool Trace() {
  static bool on = qEnvironmentVariableIsSet("HLOWB_GRAPH_TRACE");
  return on;
}
double ThreadCpuMs() {
#ifdef __linux__
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
#else
  return 0;
#endif
}
struct TraceScope {
  const char* what;
  QElapsedTimer t;
  double cpu0 = 0;
  explicit TraceScope(const char* w) : what(w) {
    if (!Trace()) return;
    t.start();
    cpu0 = ThreadCpuMs();
  }
  ~TraceScope() {
    if (Trace()) {
      qInfo("graph_view: %s %.1f ms (cpu %.1f ms)", what, t.nsecsElapsed() / 1e6,
            ThreadCpuMs() - cpu0);
    }
  }
};

QString Q(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Whether HloGraph draws `instr` as a cluster (mirrors its rule: called computations that are not
// all the same trivial reducer).
bool IsCluster(const Instruction& instr) {
  const auto& called = instr.called_computations();
  if (called.empty()) return false;
  std::string reducer;
  for (const Computation* c : called) {
    std::string name = graph::TrivialReducerName(*c);
    if (name.empty() || (!reducer.empty() && name != reducer)) return true;
    reducer = name;
  }
  return false;
}

// The shown computation's call tree: who calls each nested computation, and every instruction in
// search order (an instruction, then the contents of its clusters).
struct CompIndex {
  const Computation* top = nullptr;
  std::unordered_map<const Computation*, const Instruction*> owner;
  std::vector<const Instruction*> order;
  std::vector<std::string> haystack;  // lowercase "name\nopcode\nop_name\nop_type"
  std::unordered_map<const Instruction*, int> position;
};

void IndexComputation(const Computation& comp, int depth, CompIndex* index) {
  for (const Instruction* instr : comp.instructions()) {
    index->position.emplace(instr, static_cast<int>(index->order.size()));
    index->order.push_back(instr);
    std::string hay = instr->name();
    hay += '\n';
    hay += OpcodeName(instr->opcode());
    if (const OpMetadata* md = instr->metadata()) {
      hay += '\n';
      hay += md->op_name;
      hay += '\n';
      hay += md->op_type;
    }
    index->haystack.push_back(Lower(std::move(hay)));
    if (depth < 16 && IsCluster(*instr)) {
      for (const Computation* c : instr->called_computations()) {
        if (c == index->top || index->owner.count(c)) continue;
        index->owner.emplace(c, instr);
        IndexComputation(*c, depth + 1, index);
      }
    }
  }
}

std::shared_ptr<const CompIndex> BuildIndex(const Computation& comp) {
  auto index = std::make_shared<CompIndex>();
  index->top = &comp;
  IndexComputation(comp, 0, index.get());
  return index;
}

// The cluster owners from the top computation down to `instr`'s computation; nullopt when
// `instr` is not in the shown computation's tree.
std::optional<std::vector<const Instruction*>> OwnerChain(const CompIndex& index,
                                                          const Instruction* instr) {
  std::vector<const Instruction*> chain;
  const Computation* c = instr ? instr->parent() : nullptr;
  while (c != nullptr && c != index.top) {
    auto it = index.owner.find(c);
    if (it == index.owner.end()) return std::nullopt;
    chain.insert(chain.begin(), it->second);
    c = it->second->parent();
    if (chain.size() > 64) return std::nullopt;
  }
  if (c == nullptr) return std::nullopt;
  return chain;
}

// ---------------------------------------------------------------------------------------------
// Worker side
// ---------------------------------------------------------------------------------------------

// What a finished Prepare step hands the UI: the full graph (with expansions) and what is shown.
struct Prepared {
  uint64_t gen = 0;
  std::shared_ptr<const Module> module;  // keeps the instructions alive
  std::shared_ptr<const HloGraph> hlo;
  std::shared_ptr<const LayoutGraph> shown;
  bool neighborhood = false;
  bool all_paths = false;
  // The top level is grouped by op_name scope (boxes that expand in place).
  bool grouped = false;
  int full_nodes = 0;
  std::set<std::string> expanded;
  QString note;
};

// What one request asks the worker for (a value snapshot of the view's wishes).
struct ViewRequest {
  uint64_t gen = 0;
  std::shared_ptr<const Module> module;
  const Computation* comp = nullptr;
  std::shared_ptr<const CompIndex> index;
  std::shared_ptr<const Prepared> base;  // reuse its HloGraph when set
  graph::HloGraphOptions options;
  std::set<std::string> expanded;
  const Instruction* reveal = nullptr;
  Mode mode = Mode::kAuto;
  const Instruction* center = nullptr;
  const Instruction* from = nullptr;
  const Instruction* to = nullptr;
  int radius = 3;
  int threshold = 2000;
  std::shared_ptr<const std::vector<GraphView::RemovedGhost>> ghosts;
};

std::string ParentPath(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash);
}

// The expand path of `owner`'s cluster node directly inside the level at `prefix`.
std::string ClusterPath(const HloGraph& hlo, const Instruction* owner, const std::string& prefix) {
  for (int64_t tag : hlo.TagsFor(owner)) {
    const graph::HloNodeInfo* info = hlo.info(tag);
    if (info && info->role == graph::HloNodeRole::kCluster && ParentPath(info->path) == prefix) {
      return info->path;
    }
  }
  return "";
}

// `shown` plus the ghosts of `r.comp` (see GraphView::SetRemovedGhosts), joined to the top-level
// nodes drawing their operands and users. With `subset`, only ghosts joined to a shown node
// (directly or through other ghosts) are added.
std::shared_ptr<const LayoutGraph> WithRemovedGhosts(std::shared_ptr<const LayoutGraph> shown,
                                                     const HloGraph& hlo, const ViewRequest& r,
                                                     bool subset) {
  const std::vector<GraphView::RemovedGhost>& ghosts = *r.ghosts;
  std::vector<int> candidates;
  for (int i = 0; i < static_cast<int>(ghosts.size()); ++i) {
    if (ghosts[i].computation == r.comp) candidates.push_back(i);
  }
  if (candidates.empty()) return shown;
  // The node drawing each instruction at the top level (its own node, not a ghost copy or an
  // expanded cluster's frame, whose edges run to its ports).
  std::unordered_map<const Instruction*, int> node_of;
  for (int n = 0; n < shown->node_count(); ++n) {
    const graph::LayoutNode& ln = shown->nodes[n];
    const graph::HloNodeInfo* info = hlo.info(ln.tag);
    if (!info || !info->instruction || info->role == graph::HloNodeRole::kGhost || ln.expanded) {
      continue;
    }
    node_of.emplace(info->instruction, n);
  }
  // In a grouped graph, instructions inside a group are reached through its top-level box.
  if (const graph::ScopeGrouping* grouping = hlo.grouping(); grouping && !subset) {
    std::unordered_map<std::string, int> top_key;
    for (int n = 0; n < shown->node_count(); ++n) top_key.emplace(shown->nodes[n].key, n);
    const LayoutGraph& flat = *hlo.ungrouped();
    for (int v = 0; v < flat.node_count(); ++v) {
      int b = grouping->box_of(v);
      if (b < 0) continue;
      while (grouping->boxes()[b].parent >= 0) b = grouping->boxes()[b].parent;
      const graph::HloNodeInfo* info = hlo.info(flat.nodes[v].tag);
      auto it = top_key.find(grouping->boxes()[b].key);
      if (!info || !info->instruction || it == top_key.end()) continue;
      node_of.emplace(info->instruction, it->second);
    }
  }
  auto attached = [&](const GraphView::RemovedGhost& g) {
    for (const auto* list : {&g.operands, &g.users}) {
      for (const Instruction* i : *list) {
        if (node_of.count(i)) return true;
      }
    }
    return false;
  };
  std::unordered_map<int, bool> included;  // ghost index -> included
  for (int i : candidates) included[i] = !subset || attached(ghosts[i]);
  if (subset) {
    // Ghosts joined to included ghosts come along (a removed chain hangs off one shown node).
    for (bool grew = true; grew;) {
      grew = false;
      for (int i : candidates) {
        for (int o : ghosts[i].removed_operands) {
          auto it = included.find(o);
          if (it == included.end() || it->second == included[i]) continue;
          it->second = included[i] = true;
          grew = true;
        }
      }
    }
  }
  auto g = std::make_shared<LayoutGraph>(*shown);
  std::unordered_map<int, int> ghost_node;
  for (int i : candidates) {
    if (!included[i]) continue;
    const GraphView::RemovedGhost& ghost = ghosts[i];
    auto [w, h] = r.options.measure ? r.options.measure(ghost.label)
                                    : graph::EstimateTextSize(ghost.label);
    const int n = g->AddNode(ghost.key + "#removed", w, h);
    graph::LayoutNode& ln = g->nodes[n];
    ln.label = ghost.label;
    ln.tooltip = ghost.tooltip;
    ln.tag = graph::kRemovedNodeTag;
    ln.style.fill = 0xECEFF1;
    ln.style.stroke = 0x90A4AE;
    ln.style.text = 0x78909C;
    ln.style.dashed = true;
    ghost_node[i] = n;
  }
  for (const auto& [i, n] : ghost_node) {
    const GraphView::RemovedGhost& ghost = ghosts[i];
    for (const Instruction* o : ghost.operands) {
      if (auto it = node_of.find(o); it != node_of.end()) g->AddEdge(it->second, n);
    }
    for (const Instruction* u : ghost.users) {
      if (auto it = node_of.find(u); it != node_of.end()) g->AddEdge(n, it->second);
    }
    for (int o : ghost.removed_operands) {
      if (auto it = ghost_node.find(o); it != ghost_node.end()) g->AddEdge(it->second, n);
    }
  }
  return g;
}

absl::StatusOr<std::shared_ptr<Prepared>> Prepare(const ViewRequest& r,
                                                  const std::atomic<uint64_t>& latest) {
  auto stale = [&] { return latest.load() != r.gen; };
  std::optional<HloGraph> hlo;
  // The latest graph is reused unless it was built with other grouping (neighborhoods and
  // paths are taken from the ungrouped graph).
  if (r.base && r.base->hlo &&
      r.base->hlo->options().group_min_nodes == r.options.group_min_nodes) {
    hlo.emplace(*r.base->hlo);
  } else {
    auto built = HloGraph::Build(*r.comp, r.options);
    if (!built.ok()) return built.status();
    hlo.emplace(*std::move(built));
  }
  if (stale()) return absl::CancelledError("superseded");

  // Collapse what is no longer wanted (deepest first), then expand (parents first).
  std::set<std::string> current = hlo->options().expanded;
  for (auto it = current.rbegin(); it != current.rend(); ++it) {
    if (r.expanded.count(*it) || !hlo->IsExpanded(*it)) continue;
    auto x = hlo->WithExpanded(*it, false);
    if (x.ok()) hlo = *std::move(x);
  }
  for (const std::string& p : r.expanded) {
    if (hlo->IsExpanded(p)) continue;
    std::string parent = ParentPath(p);
    if (!parent.empty() && !hlo->IsExpanded(parent)) continue;
    auto x = hlo->WithExpanded(p, true);
    if (x.ok()) hlo = *std::move(x);
  }
  // Expand the groups and clusters hiding the instruction to reveal.
  if (r.reveal) {
    if (auto chain = OwnerChain(*r.index, r.reveal)) {
      const Instruction* outermost = chain->empty() ? r.reveal : chain->front();
      if (hlo->grouping() != nullptr) hlo = hlo->WithGroupsOpenedFor(outermost);
      std::string prefix = hlo->GroupPathOf(outermost);
      for (const Instruction* owner : *chain) {
        std::string path = ClusterPath(*hlo, owner, prefix);
        if (path.empty()) break;
        if (!hlo->IsExpanded(path)) {
          auto x = hlo->WithExpanded(path, true);
          if (!x.ok()) break;
          hlo = *std::move(x);
        }
        prefix = path;
      }
    }
  }
  if (stale()) return absl::CancelledError("superseded");

  auto prep = std::make_shared<Prepared>();
  prep->gen = r.gen;
  prep->module = r.module;
  prep->grouped = hlo->grouping() != nullptr;
  const LayoutGraph& full = *hlo->graph();
  prep->full_nodes = full.node_count();

  // Instruction -> top-level nodes (its own node, ghosts, the node it is inlined into).
  std::unordered_map<const Instruction*, std::vector<int>> top;
  for (int i = 0; i < full.node_count(); ++i) {
    const graph::HloNodeInfo* info = hlo->info(full.nodes[i].tag);
    if (!info) continue;
    top[info->instruction].push_back(i);
    for (const Instruction* inl : info->inlined) top[inl].push_back(i);
  }
  auto top_nodes = [&](const Instruction* instr) -> std::vector<int> {
    if (!instr) return {};
    auto chain = OwnerChain(*r.index, instr);
    if (!chain) return {};
    const Instruction* x = chain->empty() ? instr : chain->front();
    // A folded get-tuple-element has no node: use the tuple it reads.
    for (int hops = 0; x && hops < 8; ++hops) {
      auto it = top.find(x);
      if (it != top.end()) return it->second;
      x = x->operand_count() > 0 ? x->operand(0) : nullptr;
    }
    return {};
  };

  std::vector<int> selection;
  bool subset = false;
  if (r.mode == Mode::kAllPaths) {
    std::vector<int> a = top_nodes(r.from), b = top_nodes(r.to);
    selection = AllPathsNodes(full, a, b);
    if (selection.empty()) {
      selection = a;
      selection.insert(selection.end(), b.begin(), b.end());
      prep->note = QObject::tr("No path between %1 and %2")
                       .arg(Q(r.from ? r.from->name() : ""), Q(r.to ? r.to->name() : ""));
    } else {
      prep->note = QObject::tr("All paths between %1 and %2: %3 nodes")
                       .arg(Q(r.from->name()), Q(r.to->name()))
                       .arg(selection.size());
    }
    prep->all_paths = true;
    subset = true;
  } else if (r.mode == Mode::kNeighborhood ||
             (r.mode == Mode::kAuto && full.node_count() > r.threshold)) {
    std::vector<int> centers = top_nodes(r.center);
    if (centers.empty()) centers = top_nodes(r.comp->root());
    if (centers.empty() && full.node_count() > 0) centers.push_back(full.node_count() - 1);
    selection = NeighborhoodNodes(full, centers, r.radius, std::max(1, r.threshold));
    prep->neighborhood = true;
    subset = true;
    prep->note = QObject::tr("Neighborhood: %1 of %2 nodes within %3 edges of %4")
                     .arg(selection.size())
                     .arg(full.node_count())
                     .arg(r.radius)
                     .arg(Q(r.center ? r.center->name() : r.comp->root()->name()));
  }
  prep->shown = subset ? std::shared_ptr<const LayoutGraph>(InducedSubgraph(full, selection, true))
                       : hlo->graph();
  if (r.ghosts && !r.ghosts->empty()) prep->shown = WithRemovedGhosts(prep->shown, *hlo, r, subset);
  prep->expanded = hlo->options().expanded;
  prep->hlo = std::make_shared<const HloGraph>(*std::move(hlo));
  return prep;
}

// Delivers worker results to the UI thread while the view lives.
struct Bridge {
  std::mutex mu;
  QObject* target = nullptr;
  std::atomic<uint64_t> latest{0};
  // The generation whose final layout has been handed to the model builder (an early picture
  // of it is then not worth building).
  std::atomic<uint64_t> final_layout{0};
  template <typename F>
  void Post(F f) {
    std::lock_guard<std::mutex> lock(mu);
    if (target) QMetaObject::invokeMethod(target, std::move(f), Qt::QueuedConnection);
  }
};

// Follows palette changes (light/dark).
// The heat map's legend under the graph: the metric's name and the colour scale from its low
// to its high end.
class HeatLegend : public QWidget {
 public:
  explicit HeatLegend(GraphView* view) : QWidget(view), view_(view) { setFixedHeight(22); }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    const QString text = view_->HeatLegendText();
    const int colon = text.indexOf(QLatin1String(": "));
    const QString title = colon >= 0 ? text.left(colon) : text;
    const QString range = colon >= 0 ? text.mid(colon + 2) : QString();
    const QStringList ends = range.split(QStringLiteral(" … "));
    QFontMetrics fm(font());
    int x = 6;
    p.setPen(palette().color(QPalette::WindowText));
    p.drawText(QRect(x, 0, fm.horizontalAdvance(title) + 4, height()), Qt::AlignVCenter, title);
    x += fm.horizontalAdvance(title) + 12;
    if (ends.size() == 2) {
      p.drawText(QRect(x, 0, fm.horizontalAdvance(ends[0]) + 4, height()), Qt::AlignVCenter,
                 ends[0]);
      x += fm.horizontalAdvance(ends[0]) + 8;
    }
    const int bar = std::max(40, std::min(200, width() / 3));
    QLinearGradient g(x, 0, x + bar, 0);
    for (int i = 0; i <= 10; ++i) g.setColorAt(i / 10.0, GraphView::HeatColor(i / 10.0));
    p.fillRect(QRect(x, 5, bar, height() - 10), g);
    x += bar + 8;
    if (ends.size() == 2) {
      p.drawText(QRect(x, 0, fm.horizontalAdvance(ends[1]) + 4, height()), Qt::AlignVCenter,
                 ends[1]);
    }
  }

 private:
  GraphView* view_;
};

// The sharding colours' legend under the graph: a bold title, then a bordered swatch and the
// meaning of each colour drawn, wrapped into as many rows as the width needs, then a note.
class ShardingLegendBar : public QWidget {
 public:
  explicit ShardingLegendBar(QWidget* parent) : QWidget(parent) {
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
  }
  void SetContent(const QString& title, std::vector<GraphView::LegendEntry> entries,
                  const QString& note) {
    title_ = title;
    entries_ = std::move(entries);
    note_ = note;
    QStringList lines;
    for (const GraphView::LegendEntry& e : entries_) lines << e.text;
    setToolTip(lines.join(QLatin1Char('\n')));
    updateGeometry();
    update();
  }
  // "Sharding: a | b | c — note".
  QString Text() const {
    QStringList items;
    for (const GraphView::LegendEntry& e : entries_) items << e.text;
    QString text = title_ + QStringLiteral(": ") + items.join(QStringLiteral(" | "));
    if (!note_.isEmpty()) text += QStringLiteral(" \u2014 ") + note_;
    return text;
  }
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override { return Layout(width, nullptr); }
  QSize sizeHint() const override {
    const int w = width() > 0 ? width() : 600;
    return QSize(w, heightForWidth(w));
  }
  QSize minimumSizeHint() const override { return QSize(0, heightForWidth(width())); }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    p.fillRect(rect(), palette().color(QPalette::Window));
    Layout(width(), &p);
  }
  void resizeEvent(QResizeEvent* event) override {
    QWidget::resizeEvent(event);
    if (heightForWidth(width()) != height()) updateGeometry();
  }

 private:
  // Places the items in rows `width` wide; paints them when `p` is set. Returns the height.
  int Layout(int width, QPainter* p) const {
    const QFontMetrics fm(font());
    QFont bold = font();
    bold.setBold(true);
    const QFontMetrics bfm(bold);
    const int row = std::max(fm.height(), 14) + 4;
    const int swatch = fm.height() - 4;
    int x = 6, y = 2;
    auto place = [&](int w) {
      if (x > 6 && x + w > width - 6) {
        x = 6;
        y += row;
      }
      const QPoint at(x, y);
      x += w;
      return at;
    };
    const QPoint title_at = place(bfm.horizontalAdvance(title_) + 12);
    if (p != nullptr) {
      p->setFont(bold);
      p->setPen(palette().color(QPalette::WindowText));
      p->drawText(QRect(title_at, QSize(bfm.horizontalAdvance(title_) + 4, row)),
                  Qt::AlignVCenter, title_);
      p->setFont(font());
    }
    for (const GraphView::LegendEntry& e : entries_) {
      const int text_w = fm.horizontalAdvance(e.text);
      const QPoint at = place(swatch + 6 + text_w + 14);
      if (p == nullptr) continue;
      const QRect box(at.x(), at.y() + (row - swatch) / 2, swatch, swatch);
      p->fillRect(box, e.color);
      p->setPen(palette().color(QPalette::Mid));
      p->drawRect(box.adjusted(0, 0, -1, -1));
      p->setPen(palette().color(QPalette::WindowText));
      p->drawText(QRect(at.x() + swatch + 6, at.y(), text_w + 4, row), Qt::AlignVCenter, e.text);
    }
    if (!note_.isEmpty()) {
      const QPoint at = place(fm.horizontalAdvance(note_) + 8);
      if (p != nullptr) {
        p->setPen(palette().color(QPalette::WindowText));
        p->drawText(QRect(at, QSize(fm.horizontalAdvance(note_) + 4, row)), Qt::AlignVCenter,
                    note_);
      }
    }
    return y + row + 2;
  }

  QString title_;
  std::vector<GraphView::LegendEntry> entries_;
  QString note_;
};

class PaletteWatcher : public QObject {
 public:
  PaletteWatcher(QObject* parent, std::function<void()> changed)
      : QObject(parent), changed_(std::move(changed)) {}
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() == QEvent::PaletteChange || event->type() == QEvent::ApplicationPaletteChange)
      changed_();
    return QObject::eventFilter(watched, event);
  }

 private:
  std::function<void()> changed_;
};

// What an export draws: the scene's model with the marks the view shows on it (diff bands, heat,
// search matches; not the pointer's selection and hover), on the view's background, in the
// view's palette. A value, so that a worker thread can draw it while the view moves on.
struct ExportPicture {
  std::shared_ptr<const gv::SceneModel> model;
  std::vector<uint8_t> states;
  std::vector<QColor> heat;
  gv::NodeFills fills;
  bool dark = false;
  QColor background;
  QString font;
  QString title;
};

ExportPicture MakeExportPicture(const gv::GraphScene& scene, const QColor& background,
                                const QString& font, const QString& title) {
  ExportPicture p;
  p.model = scene.model_ptr();
  p.states = scene.LastingNodeStates();
  p.heat = scene.heat_colors();
  p.fills = scene.fills();
  p.dark = scene.dark();
  p.background = background;
  p.font = font;
  p.title = title;
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Impl
// ---------------------------------------------------------------------------------------------

class GraphView::Impl {
 public:
  explicit Impl(GraphView* view);
  ~Impl();

  void Request();
  void OnPrepared(uint64_t gen, const absl::StatusOr<std::shared_ptr<Prepared>>& prepared);
  void OnLayout(const graph::LayoutJob::Update& update);
  void OnGraphviz(uint64_t gen, std::shared_ptr<const Prepared> prep,
                  const absl::StatusOr<std::shared_ptr<const LayoutResult>>& result);
  void StartLayered(const std::shared_ptr<const Prepared>& prep);
  void BuildModel(std::shared_ptr<const Prepared> prep, std::shared_ptr<const LayoutResult> r);
  void OnModel(uint64_t gen, std::shared_ptr<const Prepared> prep,
               std::shared_ptr<const gv::SceneModel> model);
  // Marks the nodes of diff_marks' instructions in `s` (null: nothing).
  void ApplyDiffMarks(gv::GraphScene* s);
  std::unordered_map<const Instruction*, uint8_t> diff_marks;
  void ApplyHeat(gv::GraphScene* s, const Prepared* prep);
  std::unordered_map<const Instruction*, double> heat;
  void ApplySearchMatches(gv::GraphScene* s);
  std::unordered_set<const Instruction*> search_matches;
  QWidget* heat_legend = nullptr;
  QString heat_title, heat_low, heat_high;
  // Colour by sharding: the colouring of `sharding_for` (computed on the pool), drawn as node
  // fills with a legend under the graph.
  void StartShardingColoring();
  void OnShardingColoring(uint64_t g, std::shared_ptr<const Module> m,
                          std::shared_ptr<const graph::ShardingColoring> coloring);
  bool ShardingReady() const {
    return sharding != nullptr && module != nullptr && sharding_for.lock() == module;
  }
  // Fills the nodes of `s` (laid out from `prep`) by sharding; an op_name scope box shows the
  // shardings inside it. Remembers the legend entries drawn.
  void ApplySharding(gv::GraphScene* s, const Prepared* prep);
  // Legend entries drawn in `scene` and in `staging` (non-zero: drawn).
  std::vector<char> sharding_used, staging_sharding_used;
  void UpdateShardingLegend();
  bool color_sharding = false;
  std::shared_ptr<const graph::ShardingColoring> sharding;
  std::weak_ptr<const Module> sharding_for;
  uint64_t sharding_gen = 0;
  ShardingLegendBar* sharding_legend = nullptr;
  // Renders the far-zoom picture of `s` (with its fills) on the pool, for large scenes.
  void RequestFarImage(gv::GraphScene* s);
  std::shared_ptr<const std::vector<GraphView::RemovedGhost>> ghosts;
  void OnFarImage(uint64_t gen, std::shared_ptr<const gv::SceneModel> model,
                  std::shared_ptr<gv::FarImage> far);
  void PopulateTick(gv::GraphScene* s);
  void Swap();
  void Fail(const QString& message);
  void DropStaging();
  void Retire(gv::GraphScene* s);
  void RetireTick();
  void ResetPipeline();

  bool EffectiveNeighborhood() const;
  const Prepared* Latest() const { return pending ? pending.get() : shown.get(); }
  // Node of the shown scene drawing `instr` (prefers its own node over a user it is inlined
  // into); -1 when none.
  int NodeFor(const Instruction* instr) const;
  void Highlight();
  void CenterOnSelection();
  void PositionView();
  void InitialView();
  // Remembers where the node at `path` (else drawing `instr`) is on screen, so that the next
  // picture puts it at the same place.
  void CaptureAnchor(const QString& path, const Instruction* instr, bool only_if_visible = false);
  // Anchors the selection if on screen, else the node nearest the centre of the view.
  void CaptureViewAnchor();
  void UpdatePalette();
  bool Dark() const;
  // The shown graph as an export draws it.
  ExportPicture Picture() const {
    return MakeExportPicture(*scene, q->palette().color(QPalette::Base), font_description,
                             comp ? Q(comp->name()) : QStringLiteral("graph"));
  }

  void NodeClicked(int node);
  void NodeDoubleClicked(int node);
  void ContextMenu(QPoint global_pos, QPointF scene_pos);

  GraphView* q;
  std::shared_ptr<Bridge> bridge = std::make_shared<Bridge>();
  QThreadPool pool;
  std::unique_ptr<graph::LayoutJob> job;
  gv::Canvas* canvas = nullptr;
  QString font_description;

  // The computation.
  std::shared_ptr<const Module> module;
  const Computation* comp = nullptr;
  std::shared_ptr<const CompIndex> index;

  // Settings.
  int threshold = 2000;
  int radius = 3;
  bool use_graphviz = false;
  int graphviz_max_nodes = 1500;
  double graphviz_timeout = 20;
  bool fold_gte = false;
  bool overview_enabled = true;
  bool group_scopes = true;
  int group_min_nodes = graph::kDefaultGroupMinNodes;
  // Layout settings: every graph, and grouped overviews (kept from being a thin strip).
  graph::LayoutOptions layout_options;
  graph::LayoutOptions grouped_options;

  // What the view wants to show.
  Mode mode = Mode::kAuto;
  std::set<std::string> expanded;
  const Instruction* center = nullptr;
  const Instruction* from = nullptr;
  const Instruction* to = nullptr;
  const Instruction* reveal = nullptr;
  const Instruction* selected = nullptr;
  std::shared_ptr<const Prepared> base;  // the latest prepared graph, reused by requests
  QString last_query;

  // The pipeline of the latest generation.
  uint64_t gen = 0;
  bool running = false;
  QElapsedTimer timer;
  std::shared_ptr<const Prepared> pending;
  uint64_t layout_gen = 0;
  std::shared_ptr<CancelToken> gv_cancel;
  gv::GraphScene* staging = nullptr;
  std::shared_ptr<const Prepared> staging_prep;
  bool partial_requested = false;
  uint64_t partial_gen = 0;      // the generation whose early picture is shown
  uint64_t first_frame_gen = 0;  // the generation whose first frame was reported
  std::deque<gv::GraphScene*> retiring;
  bool retire_scheduled = false;

  // What is shown.
  gv::GraphScene* scene = nullptr;
  std::shared_ptr<const Prepared> shown;
  bool reset_view = true;
  bool center_on_selection = false;
  bool await_first_paint = false;
  struct Anchor {
    bool valid = false;
    QString path;
    const Instruction* instr = nullptr;
    QPointF viewport_pos;
  } anchor;
};

GraphView::Impl::Impl(GraphView* view) : q(view) {
  bridge->target = view;
  pool.setMaxThreadCount(1);
  pool.setExpiryTimeout(-1);
  QFont font = view->font();
  font.setPixelSize(12);
  font_description = font.toString();

  graph::LayoutOptions options;
  options.time_budget_ms = 60'000;  // a safety net; the engine's work caps come first
  layout_options = options;
  grouped_options = options;
  grouped_options.max_aspect = graph::kGroupedMaxAspect;
  std::shared_ptr<Bridge> b = bridge;
  Impl* self = this;
  job = std::make_unique<graph::LayoutJob>(
      [b, self](const graph::LayoutJob::Update& update) {
        LowerThisThreadPriority();
        b->Post([self, update] { self->OnLayout(update); });
      },
      options);
  // An empty first request, so that the callback lowers the layout thread's priority before
  // any real layout runs there (its update is ignored: no generation is expected yet).
  job->Request(std::make_shared<const LayoutGraph>());

  auto* layout = new QVBoxLayout(view);
  layout->setContentsMargins(0, 0, 0, 0);
  canvas = new gv::Canvas(view);
  layout->addWidget(canvas);
  heat_legend = new HeatLegend(q);
  heat_legend->setObjectName(QStringLiteral("heatLegend"));
  heat_legend->setVisible(false);
  layout->addWidget(heat_legend);
  sharding_legend = new ShardingLegendBar(q);
  sharding_legend->setObjectName(QStringLiteral("shardingLegend"));
  sharding_legend->setVisible(false);
  layout->addWidget(sharding_legend);
  canvas->on_painted = [this] {
    if (await_first_paint && scene && canvas->scene() == scene) {
      await_first_paint = false;
      first_frame_gen = gen;
      emit q->firstFramePainted(timer.elapsed() / 1000.0);
    }
  };
  canvas->on_fit = [this] { q->FitToView(); };
  canvas->on_context_menu = [this](QPoint global, QPointF pos) { ContextMenu(global, pos); };
  canvas->on_find_again = [this](bool backwards) {
    if (!last_query.isEmpty()) q->FindNext(last_query, backwards);
  };
  view->installEventFilter(new PaletteWatcher(view, [this] { UpdatePalette(); }));
  UpdatePalette();
}

GraphView::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> lock(bridge->mu);
    bridge->target = nullptr;
    bridge->latest = ~uint64_t{0};
  }
  if (gv_cancel) gv_cancel->Cancel();
  job.reset();  // cancels and joins the layout worker
  pool.clear();
  pool.waitForDone();
  canvas->setScene(nullptr);
  canvas->overview()->setScene(nullptr);
  delete scene;
  delete staging;
  for (gv::GraphScene* s : retiring) delete s;
}

bool GraphView::Impl::Dark() const { return q->palette().color(QPalette::Base).lightness() < 128; }

void GraphView::Impl::UpdatePalette() {
  canvas->setBackgroundBrush(q->palette().brush(QPalette::Base));
  if (scene) scene->SetDark(Dark());
  if (staging) staging->SetDark(Dark());
}

void GraphView::Impl::ResetPipeline() {
  ++gen;
  bridge->latest = gen;
  job->Cancel();
  if (gv_cancel) gv_cancel->Cancel();
  gv_cancel.reset();
  pending.reset();
  layout_gen = 0;
  partial_requested = false;
  DropStaging();
}

void GraphView::Impl::Request() {
  if (!comp || !module) return;
  ResetPipeline();
  running = true;
  timer.start();
  emit q->layoutStarted();

  ViewRequest r;
  r.gen = gen;
  r.module = module;
  r.comp = comp;
  r.index = index;
  r.base = base;
  r.options.fold_get_tuple_element = fold_gte;
  r.options.measure = gv::MakeMeasureFn(font_description);
  // The whole graph is shown grouped by op_name scope when large; a neighborhood or the paths
  // between two nodes are cut from the ungrouped graph.
  r.options.group_min_nodes =
      group_scopes && (mode == Mode::kAuto || mode == Mode::kWhole) ? group_min_nodes : 0;
  r.expanded = expanded;
  r.reveal = reveal;
  r.mode = mode;
  r.center = center;
  r.from = from;
  r.to = to;
  r.radius = radius;
  r.threshold = threshold;
  r.ghosts = ghosts;
  std::shared_ptr<Bridge> b = bridge;
  Impl* self = this;
  pool.start([r, b, self] {
    LowerThisThreadPriority();
    if (b->latest.load() != r.gen) return;
    TraceScope trace("worker: prepare");
    absl::StatusOr<std::shared_ptr<Prepared>> p = Prepare(r, b->latest);
    uint64_t g = r.gen;
    b->Post([self, g, p] { self->OnPrepared(g, p); });
  });
}

void GraphView::Impl::OnPrepared(uint64_t g, const absl::StatusOr<std::shared_ptr<Prepared>>& p) {
  if (g != gen) return;
  if (Trace()) qInfo("graph_view: prepared at %lld ms", timer.elapsed());
  if (!p.ok()) {
    if (absl::IsCancelled(p.status())) return;
    Fail(Q(std::string(p.status().message())));
    return;
  }
  std::shared_ptr<const Prepared> prep = *p;
  base = prep;
  expanded = prep->expanded;
  reveal = nullptr;
  pending = prep;
  if (!prep->note.isEmpty()) emit q->statusMessage(prep->note);
  if (use_graphviz) {
    int64_t total = prep->shown->TotalNodeCount();
    if (total <= graphviz_max_nodes) {
      auto cancel = std::make_shared<CancelToken>();
      gv_cancel = cancel;
      std::shared_ptr<Bridge> b = bridge;
      Impl* self = this;
      double timeout = graphviz_timeout;
      int max_nodes = graphviz_max_nodes;
      pool.start([b, self, g, prep, cancel, timeout, max_nodes] {
        LowerThisThreadPriority();
        if (b->latest.load() != g) return;
        graph::GraphvizOptions o;
        o.timeout_seconds = timeout;
        o.max_nodes = max_nodes;
        o.cancel = cancel.get();
        absl::StatusOr<std::shared_ptr<const LayoutResult>> r =
            graph::GraphvizLayout(*prep->shown, o);
        b->Post([self, g, prep, r] { self->OnGraphviz(g, prep, r); });
      });
      return;
    }
    emit q->statusMessage(
        GraphView::tr("The graph has %1 nodes, more than Graphviz is used for (%2): using the "
                      "layered layout")
            .arg(total)
            .arg(graphviz_max_nodes));
  }
  StartLayered(prep);
}

void GraphView::Impl::StartLayered(const std::shared_ptr<const Prepared>& prep) {
  partial_requested = false;
  layout_gen = job->Request(prep->shown, prep->grouped ? grouped_options : layout_options);
}

void GraphView::Impl::OnGraphviz(uint64_t g, std::shared_ptr<const Prepared> prep,
                                 const absl::StatusOr<std::shared_ptr<const LayoutResult>>& r) {
  if (g != gen || prep != pending) return;
  gv_cancel.reset();
  if (r.ok()) {
    BuildModel(prep, *r);
    return;
  }
  if (absl::IsCancelled(r.status())) return;
  emit q->statusMessage(GraphView::tr("Graphviz layout failed (%1); using the layered layout")
                            .arg(Q(std::string(r.status().message()))));
  StartLayered(prep);
}

void GraphView::Impl::OnLayout(const graph::LayoutJob::Update& u) {
  if (Trace()) {
    qInfo("graph_view: layout done at %lld ms (%s, %.0f ms in the engine)", timer.elapsed(),
          u.final ? "final" : "partial", u.result ? u.result->stats.ms_total : -1.0);
  }
  if (!pending || layout_gen == 0 || u.generation != layout_gen) return;
  if (!u.status.ok()) {
    if (absl::IsCancelled(u.status)) return;
    Fail(Q(std::string(u.status.message())));
    return;
  }
  // An early picture (large graphs) is shown while the engine refines it; the refined one then
  // replaces it with the view kept on the same node.
  if (!u.final) {
    if (!partial_requested && u.result) {
      partial_requested = true;
      BuildModel(pending, u.result);
    }
    return;
  }
  bridge->final_layout = gen;
  BuildModel(pending, u.result);
}

void GraphView::Impl::BuildModel(std::shared_ptr<const Prepared> prep,
                                 std::shared_ptr<const LayoutResult> result) {
  uint64_t g = gen;
  std::shared_ptr<Bridge> b = bridge;
  Impl* self = this;
  QString font = font_description;
  pool.start([b, self, g, prep, result, font] {
    LowerThisThreadPriority();
    if (b->latest.load() != g) return;
    if (result->partial && b->final_layout.load() == g) return;  // the final one is queued
    TraceScope trace("worker: scene model");
    std::shared_ptr<const gv::SceneModel> model =
        gv::BuildSceneModel(*prep->shown, *result, prep->hlo.get(), font);
    b->Post([self, g, prep, model] { self->OnModel(g, prep, model); });
  });
}

void GraphView::Impl::OnModel(uint64_t g, std::shared_ptr<const Prepared> prep,
                              std::shared_ptr<const gv::SceneModel> model) {
  if (g != gen) return;
  if (Trace()) qInfo("graph_view: model at %lld ms", timer.elapsed());
  DropStaging();
  staging = new gv::GraphScene(std::move(model), font_description);
  staging->SetDark(Dark());
  ApplyDiffMarks(staging);
  ApplyHeat(staging, prep.get());
  ApplySearchMatches(staging);
  ApplySharding(staging, prep.get());
  staging_prep = std::move(prep);
  gv::GraphScene* s = staging;
  QTimer::singleShot(0, q, [this, s] { PopulateTick(s); });
  RequestFarImage(s);
}

void GraphView::Impl::RequestFarImage(gv::GraphScene* s) {
  // The far-zoom picture, for graphs whose every-item paint would be slow (not for an early
  // picture: the refined one follows soon).
  if (s == nullptr || s->model().partial ||
      s->model().nodes.size() + s->model().edges.size() < kFarImageMinItems) {
    return;
  }
  const uint64_t g = gen;
  std::shared_ptr<const gv::SceneModel> m = s->model_ptr();
  std::shared_ptr<Bridge> b = bridge;
  Impl* self = this;
  bool dark = Dark();
  auto fills = std::make_shared<const gv::NodeFills>(s->fills());
  const uint64_t version = s->fills_version();
  pool.start([b, self, g, m, dark, fills, version] {
    LowerThisThreadPriority();
    if (b->latest.load() != g) return;
    TraceScope trace("worker: far image");
    auto far = std::make_shared<gv::FarImage>(
        gv::RenderFarImage(*m, dark, 4096, 12e6, fills->empty() ? nullptr : fills.get()));
    far->fills_version = version;
    b->Post([self, g, m, far] { self->OnFarImage(g, m, far); });
  });
}

void GraphView::Impl::ApplyDiffMarks(gv::GraphScene* s) {
  if (s == nullptr) return;
  std::vector<uint8_t> marks(s->model().nodes.size(), 0);
  for (const auto& [instruction, mark] : diff_marks) {
    auto it = s->model().by_instruction.find(instruction);
    if (it == s->model().by_instruction.end()) continue;
    for (int n : it->second) {
      if (!s->model().nodes[n].frame) marks[n] = mark;
    }
  }
  s->SetDiffMarks(marks);
}

void GraphView::Impl::ApplySearchMatches(gv::GraphScene* s) {
  if (s == nullptr) return;
  std::vector<uint8_t> on(s->model().nodes.size(), 0);
  for (const Instruction* instruction : search_matches) {
    auto it = s->model().by_instruction.find(instruction);
    if (it == s->model().by_instruction.end()) continue;
    for (int n : it->second) {
      if (!s->model().nodes[n].frame) on[n] = 1;
    }
  }
  s->SetSearchMatches(on);
}

// Calls `f` with every instruction inside scope box `box` of `hlo`'s grouping, nested boxes
// included.
template <typename F>
void ForEachBoxInstruction(const graph::HloGraph& hlo, int box, F f) {
  const graph::ScopeGrouping* grouping = hlo.grouping();
  const LayoutGraph* flat = hlo.ungrouped().get();
  if (grouping == nullptr || flat == nullptr) return;
  std::vector<int> stack = {box};
  while (!stack.empty()) {
    const graph::ScopeBox& b = grouping->boxes()[stack.back()];
    stack.pop_back();
    for (int v : b.members) {
      if (v < 0 || v >= static_cast<int>(flat->nodes.size())) continue;
      const graph::HloNodeInfo* info = hlo.info(flat->nodes[v].tag);
      if (info != nullptr && info->instruction != nullptr) f(info->instruction);
    }
    stack.insert(stack.end(), b.boxes.begin(), b.boxes.end());
  }
}

void GraphView::Impl::ApplyHeat(gv::GraphScene* s, const Prepared* prep) {
  if (s == nullptr) return;
  const gv::SceneModel& model = s->model();
  std::vector<QColor> colors(model.nodes.size());
  for (const auto& [instruction, value] : heat) {
    auto it = model.by_instruction.find(instruction);
    if (it == model.by_instruction.end()) continue;
    for (int n : it->second) {
      if (!model.nodes[n].frame) colors[n] = GraphView::HeatColor(value);
    }
  }
  // A collapsed op_name scope box takes the hottest value inside it (nested boxes too), so the
  // overview of a large computation shows where the heat is.
  const graph::HloGraph* hlo = prep != nullptr ? prep->hlo.get() : nullptr;
  const graph::ScopeGrouping* grouping = hlo != nullptr ? hlo->grouping() : nullptr;
  if (!heat.empty() && grouping != nullptr && hlo->ungrouped() != nullptr) {
    for (size_t n = 0; n < model.nodes.size(); ++n) {
      const gv::NodeSpec& node = model.nodes[n];
      if (node.frame || node.role != graph::HloNodeRole::kGroup) continue;
      const int box = grouping->FindBox(node.path.toStdString());
      if (box < 0) continue;
      double hottest = -1;
      ForEachBoxInstruction(*hlo, box, [&](const Instruction* instruction) {
        auto h = heat.find(instruction);
        if (h != heat.end()) hottest = std::max(hottest, h->second);
      });
      if (hottest >= 0) colors[n] = GraphView::HeatColor(hottest);
    }
  }
  s->SetHeat(colors);
}

QColor GraphView::ShardingColor(graph::ShardingKind kind, int slot) {
  // Tiled shardings: distinct hues, pale enough for dark text, none shared with the fixed kinds.
  static const QRgb kTiled[] = {0x64B5F6, 0xFFB74D, 0x4DD0E1, 0xF06292, 0xDCE775, 0x7986CB,
                                0xFF8A65, 0x4DB6AC, 0xF8BBD0, 0xC5E1A5, 0xFFD54F, 0x9FA8DA};
  switch (kind) {
    case graph::ShardingKind::kNone: return QColor(0xEC, 0xEF, 0xF1);
    case graph::ShardingKind::kReplicated: return QColor(0x81, 0xC7, 0x84);
    case graph::ShardingKind::kMaximal: return QColor(0xBA, 0x68, 0xC8);
    case graph::ShardingKind::kManual: return QColor(0xA1, 0x88, 0x7F);
    case graph::ShardingKind::kUnknown: return QColor(0x90, 0xA4, 0xAE);
    case graph::ShardingKind::kUnreduced: return QColor(0xFF, 0xF5, 0x9D);
    case graph::ShardingKind::kUndecoded: return QColor(0xBD, 0xBD, 0xBD);
    case graph::ShardingKind::kInvalid: return QColor(0xE5, 0x73, 0x73);
    case graph::ShardingKind::kTuple: return QColor(0xEC, 0xEF, 0xF1);
    case graph::ShardingKind::kTiled:
    case graph::ShardingKind::kPartiallyReplicated: {
      constexpr int n = static_cast<int>(sizeof(kTiled) / sizeof(kTiled[0]));
      const QColor base = QColor::fromRgb(kTiled[std::max(slot, 0) % n]);
      // Past the palette, the colours come round again a little darker.
      return std::max(slot, 0) >= n ? base.darker(100 + 15 * (slot / n)) : base;
    }
  }
  return QColor(0xEC, 0xEF, 0xF1);
}

void GraphView::Impl::StartShardingColoring() {
  const uint64_t g = ++sharding_gen;
  if (!color_sharding || !module) {
    const uint64_t version = scene != nullptr ? scene->fills_version() : 0;
    ApplySharding(scene, shown.get());
    ApplySharding(staging, staging_prep.get());
    UpdateShardingLegend();
    // The far image had the fills just removed.
    if (scene != nullptr && scene->fills_version() != version) RequestFarImage(scene);
    return;
  }
  if (ShardingReady()) {
    OnShardingColoring(g, module, sharding);
    return;
  }
  UpdateShardingLegend();
  std::shared_ptr<const Module> m = module;
  std::shared_ptr<Bridge> b = bridge;
  Impl* self = this;
  pool.start([b, self, g, m] {
    LowerThisThreadPriority();
    TraceScope trace("worker: sharding colours");
    auto coloring = std::make_shared<const graph::ShardingColoring>(graph::ColorBySharding(*m));
    b->Post([self, g, m, coloring] { self->OnShardingColoring(g, m, coloring); });
  });
}

void GraphView::Impl::OnShardingColoring(uint64_t g, std::shared_ptr<const Module> m,
                                         std::shared_ptr<const graph::ShardingColoring> coloring) {
  if (g != sharding_gen || m != module) return;
  TraceScope trace("apply sharding colours");
  sharding = std::move(coloring);
  sharding_for = m;
  ApplySharding(scene, shown.get());
  ApplySharding(staging, staging_prep.get());
  UpdateShardingLegend();
  RequestFarImage(scene);
}

void GraphView::Impl::ApplySharding(gv::GraphScene* s, const Prepared* prep) {
  if (s == nullptr) return;
  std::vector<char>& used = s == scene ? sharding_used : staging_sharding_used;
  used.clear();
  gv::NodeFills fills;
  if (color_sharding && ShardingReady()) {
    const gv::SceneModel& model = s->model();
    fills.resize(model.nodes.size());
    used.assign(sharding->entries.size(), 0);
    const std::vector<int> none = {0};
    auto entries_of = [&](const Instruction* instruction) -> const std::vector<int>& {
      auto it = sharding->of.find(instruction);
      return it != sharding->of.end() ? it->second : none;
    };
    const graph::HloGraph* hlo = prep != nullptr ? prep->hlo.get() : nullptr;
    const graph::ScopeGrouping* grouping = hlo != nullptr ? hlo->grouping() : nullptr;
    // The distinct shardings inside a scope box (nested boxes too), in legend order; "no
    // sharding" only when nothing inside has one.
    auto box_entries = [&](int box) {
      std::vector<char> seen(sharding->entries.size(), 0);
      ForEachBoxInstruction(*hlo, box, [&](const Instruction* instruction) {
        for (int e : entries_of(instruction)) seen[e] = 1;
      });
      std::vector<int> out;
      for (size_t e = 1; e < seen.size(); ++e) {
        if (seen[e]) out.push_back(static_cast<int>(e));
      }
      if (out.empty()) out.push_back(0);
      return out;
    };
    for (size_t n = 0; n < model.nodes.size(); ++n) {
      const gv::NodeSpec& node = model.nodes[n];
      if (node.frame || node.port || node.role == graph::HloNodeRole::kRemoved) continue;
      std::vector<int> entries;
      if (node.role == graph::HloNodeRole::kGroup) {
        const int box = grouping != nullptr ? grouping->FindBox(node.path.toStdString()) : -1;
        if (box < 0) continue;
        entries = box_entries(box);
      } else if (node.instruction != nullptr) {
        entries = entries_of(node.instruction);
      } else {
        continue;
      }
      std::vector<QColor>& colors = fills[n];
      int last = -1;
      for (int e : entries) {
        if (e == last) continue;  // equal neighbours make one wider stripe
        last = e;
        used[e] = 1;
        const graph::ShardingLegendEntry& entry = sharding->entries[e];
        colors.push_back(GraphView::ShardingColor(entry.kind, entry.slot));
        if (colors.size() == 12) break;  // thinner stripes could not be told apart
      }
    }
  }
  s->SetFills(std::move(fills));
}

void GraphView::Impl::UpdateShardingLegend() {
  TraceScope trace("sharding legend");
  if (!color_sharding) {
    sharding_legend->setVisible(false);
    return;
  }
  sharding_legend->setVisible(true);
  if (!ShardingReady()) {
    sharding_legend->SetContent(GraphView::tr("Sharding"), {}, GraphView::tr("computing…"));
    return;
  }
  QString note;
  if (sharding->partitioning.per_partition_program) {
    note = GraphView::tr("per-partition program (%1 partitions): each shape is one partition's")
               .arg(sharding->partitioning.num_partitions);
  }
  sharding_legend->SetContent(GraphView::tr("Sharding"), q->ShardingLegend(), note);
}

void GraphView::Impl::OnFarImage(uint64_t g, std::shared_ptr<const gv::SceneModel> model,
                                 std::shared_ptr<gv::FarImage> far) {
  if (g != gen) return;
  for (gv::GraphScene* s : {scene, staging}) {
    if (s && s->model_ptr() == model && s->dark() == Dark()) s->SetFarImage(std::move(*far));
  }
}

void GraphView::Impl::PopulateTick(gv::GraphScene* s) {
  if (s != staging) return;
  TraceScope trace("populate");
  if (s->PopulateSome(kSliceMs)) {
    // Swapping (and the first paint it causes) gets an event-loop slice of its own.
    QTimer::singleShot(0, q, [this, s] {
      if (s == staging) Swap();
    });
    return;
  }
  QTimer::singleShot(0, q, [this, s] { PopulateTick(s); });
}

void GraphView::Impl::Swap() {
  TraceScope trace("swap");
  if (Trace()) qInfo("graph_view: swap at %lld ms", timer.elapsed());
  gv::GraphScene* old = scene;
  bool partial = staging->model().partial;
  // Replacing an early picture of the same request: keep the view on the same node.
  if (old && partial_gen == gen && !anchor.valid) CaptureViewAnchor();
  scene = staging;
  staging = nullptr;
  shown = std::move(staging_prep);
  sharding_used = std::move(staging_sharding_used);
  staging_sharding_used.clear();
  partial_gen = partial ? gen : 0;
  if (!partial) {
    pending.reset();
    layout_gen = 0;
  }
  scene->set_callbacks(
      {[this](int n) { NodeClicked(n); }, [this](int n) { NodeDoubleClicked(n); }});
  canvas->setScene(scene);
  canvas->overview()->setScene(scene);
  canvas->overview()->SetModel(scene->model_ptr());
  if (color_sharding) UpdateShardingLegend();
  Highlight();
  PositionView();
  if (first_frame_gen != gen) await_first_paint = true;
  canvas->viewport()->update();
  Retire(old);
  if (partial) {
    emit q->statusMessage(GraphView::tr("Showing an early layout of %1 nodes; refining")
                              .arg(scene->model().drawn_nodes));
    return;
  }
  running = false;
  emit q->layoutFinished(scene->model().drawn_nodes, timer.elapsed() / 1000.0);
}

void GraphView::Impl::CaptureViewAnchor() {
  if (!scene) return;
  const gv::SceneModel& m = scene->model();
  QRectF visible = canvas->VisibleSceneRect();
  int n = NodeFor(selected);
  if (n < 0 || !visible.intersects(m.nodes[n].rect)) {
    n = -1;
    double best = 0;
    QPointF c = visible.center();
    for (size_t i = 0; i < m.nodes.size(); ++i) {
      if (m.nodes[i].frame) continue;
      QPointF d = m.nodes[i].rect.center() - c;
      double dist = d.x() * d.x() + d.y() * d.y();
      if (n < 0 || dist < best) {
        n = static_cast<int>(i);
        best = dist;
      }
    }
  }
  if (n >= 0) CaptureAnchor(m.nodes[n].path, m.nodes[n].instruction);
}

void GraphView::Impl::Fail(const QString& message) {
  running = false;
  pending.reset();
  layout_gen = 0;
  emit q->layoutFailed(message);
}

void GraphView::Impl::DropStaging() {
  if (staging) Retire(staging);
  staging = nullptr;
  staging_prep.reset();
}

void GraphView::Impl::Retire(gv::GraphScene* s) {
  if (!s) return;
  s->set_callbacks({});
  retiring.push_back(s);
  if (!retire_scheduled) {
    retire_scheduled = true;
    QTimer::singleShot(0, q, [this] { RetireTick(); });
  }
}

void GraphView::Impl::RetireTick() {
  TraceScope trace("retire");
  retire_scheduled = false;
  if (retiring.empty()) return;
  gv::GraphScene* s = retiring.front();
  if (s->DepopulateSome(kSliceMs)) {
    retiring.pop_front();
    delete s;
  }
  if (!retiring.empty()) {
    retire_scheduled = true;
    QTimer::singleShot(0, q, [this] { RetireTick(); });
  }
}

bool GraphView::Impl::EffectiveNeighborhood() const {
  if (mode == Mode::kNeighborhood) return true;
  if (mode != Mode::kAuto || !comp) return false;
  if (const Prepared* p = Latest(); p && !(running && !pending)) return p->neighborhood;
  if (base) return base->full_nodes > threshold;
  return comp->instruction_count() > threshold;
}

int GraphView::Impl::NodeFor(const Instruction* instr) const {
  if (!scene || !instr) return -1;
  const gv::SceneModel& m = scene->model();
  auto it = m.by_instruction.find(instr);
  if (it == m.by_instruction.end()) return -1;
  for (int n : it->second) {
    if (m.nodes[n].instruction == instr) return n;
  }
  return it->second.front();
}

void GraphView::Impl::Highlight() {
  if (!scene) return;
  std::vector<int> nodes;
  if (selected) {
    auto it = scene->model().by_instruction.find(selected);
    if (it != scene->model().by_instruction.end()) nodes = it->second;
  }
  scene->SetSelectedNodes(nodes);
}

void GraphView::Impl::CenterOnSelection() {
  int n = NodeFor(selected);
  if (n < 0) return;
  QRectF r = scene->model().nodes[n].rect;
  if (canvas->current_scale() < 0.3) canvas->SetScale(0.8);
  canvas->centerOn(r.center());
}

void GraphView::Impl::InitialView() {
  const gv::SceneModel& m = scene->model();
  QRectF b = m.bounds;
  QSize vs = canvas->viewport()->size();
  double fit =
      std::min(vs.width() / std::max(1.0, b.width()), vs.height() / std::max(1.0, b.height()));
  // A grouped overview is there to be seen whole: fitted unless that makes its boxes dots.
  const bool overview = shown && shown->grouped && fit >= 0.2;
  if (fit >= 0.45 || overview) {
    canvas->SetScale(std::min(fit, 1.0));
    canvas->centerOn(b.center());
    return;
  }
  // Too large to read when fitted: a readable scale around the selection or the root; the
  // overview map shows the whole.
  canvas->SetScale(0.8);
  int n = NodeFor(selected);
  if (n < 0 && comp) n = NodeFor(comp->root());
  if (n >= 0) {
    canvas->centerOn(m.nodes[n].rect.center());
  } else {
    canvas->centerOn(QPointF(b.center().x(), b.top() + vs.height() / 1.6));
  }
}

void GraphView::Impl::PositionView() {
  const gv::SceneModel& m = scene->model();
  if (anchor.valid) {
    anchor.valid = false;
    int n = -1;
    auto it = m.by_path.find(anchor.path.toStdString());
    if (it != m.by_path.end()) n = it->second;
    if (n < 0) n = NodeFor(anchor.instr);
    if (n >= 0) {
      QPointF c = m.nodes[n].rect.center();
      QPointF vc = QRectF(canvas->viewport()->rect()).center();
      // Keep the anchor node where it was on screen (top-left for frames, which grow).
      if (m.nodes[n].frame) {
        c = m.nodes[n].rect.topLeft() + QPointF(40, 20);
      }
      canvas->centerOn(c + (vc - anchor.viewport_pos) / canvas->current_scale());
      center_on_selection = false;
      reset_view = false;
      return;
    }
  }
  if (reset_view) {
    reset_view = false;
    center_on_selection = false;
    InitialView();
    return;
  }
  if (center_on_selection) {
    center_on_selection = false;
    CenterOnSelection();
  }
}

void GraphView::Impl::CaptureAnchor(const QString& path, const Instruction* instr,
                                    bool only_if_visible) {
  anchor = Anchor();
  if (!scene) return;
  const gv::SceneModel& m = scene->model();
  int n = -1;
  auto it = m.by_path.find(path.toStdString());
  if (it != m.by_path.end()) n = it->second;
  if (n < 0) n = NodeFor(instr);
  if (n < 0) return;
  if (only_if_visible && !canvas->VisibleSceneRect().intersects(m.nodes[n].rect)) return;
  QPointF p =
      m.nodes[n].frame ? m.nodes[n].rect.topLeft() + QPointF(40, 20) : m.nodes[n].rect.center();
  anchor.valid = true;
  anchor.path = m.nodes[n].path;
  anchor.instr = instr ? instr : m.nodes[n].instruction;
  anchor.viewport_pos = canvas->mapFromScene(p);
}

void GraphView::Impl::NodeClicked(int node) {
  const gv::NodeSpec& n = scene->model().nodes[node];
  if (!n.instruction) return;
  selected = n.instruction;
  Highlight();
  emit q->instructionSelected(selected);
}

void GraphView::Impl::NodeDoubleClicked(int node) {
  const gv::NodeSpec& n = scene->model().nodes[node];
  if (n.expandable) {
    q->SetClusterExpanded(n.path, true);
  } else if (n.frame) {
    q->SetClusterExpanded(n.path, false);
  } else if (n.instruction && EffectiveNeighborhood()) {
    // Re-centre the neighborhood on the double-clicked node.
    CaptureAnchor(n.path, n.instruction);
    mode = Mode::kNeighborhood;
    center = n.instruction;
    Request();
  }
}

void GraphView::Impl::ContextMenu(QPoint global_pos, QPointF scene_pos) {
  QMenu menu(q);
  // No node actions on the picture of a computation being replaced.
  bool current = scene && shown && shown->hlo && shown->hlo->computation() == comp;
  int node = current ? scene->NodeAt(scene_pos) : -1;
  const gv::NodeSpec* n = node >= 0 ? &scene->model().nodes[node] : nullptr;
  auto name = [](const Instruction* i) { return i ? Q(i->name()) : QString(); };
  // What a node is called in the menu: its instruction, else (a group) its title.
  auto title = [&name](const gv::NodeSpec& node) {
    if (node.instruction) return name(node.instruction);
    if (node.frame) return node.frame_title;
    return node.lines.empty() ? node.path.section('/', -1) : node.lines.front();
  };
  if (n) {
    QString path = n->path;
    if (n->expandable) {
      menu.addAction(GraphView::tr("Expand %1").arg(title(*n)),
                     [this, path] { q->SetClusterExpanded(path, true); });
    }
    if (n->frame) {
      menu.addAction(GraphView::tr("Collapse %1").arg(title(*n)),
                     [this, path] { q->SetClusterExpanded(path, false); });
    } else if (int slash = path.lastIndexOf('/'); slash > 0) {
      QString parent = path.left(slash);
      auto frame = scene->model().by_path.find(parent.toStdString());
      QString what = frame != scene->model().by_path.end()
                         ? title(scene->model().nodes[frame->second])
                         : parent.section('/', -1);
      menu.addAction(GraphView::tr("Collapse %1").arg(what),
                     [this, parent] { q->SetClusterExpanded(parent, false); });
    }
    if (const Instruction* instr = n->instruction; instr && !n->frame) {
      menu.addAction(GraphView::tr("Neighborhood of %1").arg(name(instr)), [this, instr, path] {
        CaptureAnchor(path, instr);
        mode = Mode::kNeighborhood;
        center = instr;
        Request();
      });
      if (selected && selected != instr) {
        const Instruction* from = selected;
        menu.addAction(GraphView::tr("All paths between %1 and %2").arg(name(from), name(instr)),
                       [this, from, instr] { q->ShowAllPaths(from, instr); });
      }
    }
    menu.addSeparator();
  }
  if (comp) {
    if (EffectiveNeighborhood() || mode == Mode::kAllPaths) {
      menu.addAction(GraphView::tr("Show the whole graph"), [this] { q->ShowWholeGraph(); });
      if (EffectiveNeighborhood()) {
        menu.addAction(GraphView::tr("Larger neighborhood (radius %1)").arg(radius + 1),
                       [this] { q->SetNeighborhoodRadius(radius + 1); });
        if (radius > 1) {
          menu.addAction(GraphView::tr("Smaller neighborhood (radius %1)").arg(radius - 1),
                         [this] { q->SetNeighborhoodRadius(radius - 1); });
        }
      }
    }
    menu.addAction(GraphView::tr("Fit to view"), [this] { q->FitToView(); });
    menu.addSeparator();
    QAction* fold = menu.addAction(GraphView::tr("Fold get-tuple-element"),
                                   [this](bool on) { q->SetFoldGetTupleElement(on); });
    fold->setCheckable(true);
    fold->setChecked(fold_gte);
    QAction* group = menu.addAction(GraphView::tr("Group by op_name scope (large graphs)"),
                                    [this](bool on) { q->SetGroupByScope(on); });
    group->setCheckable(true);
    group->setChecked(group_scopes);
    QAction* gviz = menu.addAction(GraphView::tr("Graphviz layout (small graphs)"),
                                   [this](bool on) { q->SetGraphvizLayout(on); });
    gviz->setCheckable(true);
    gviz->setChecked(use_graphviz);
  }
  QAction* map =
      menu.addAction(GraphView::tr("Overview map"), [this](bool on) { q->SetOverviewVisible(on); });
  map->setCheckable(true);
  map->setChecked(overview_enabled);
  menu.exec(global_pos);
}

// ---------------------------------------------------------------------------------------------
// GraphView
// ---------------------------------------------------------------------------------------------

GraphView::GraphView(QWidget* parent) : QWidget(parent), impl_(std::make_unique<Impl>(this)) {}

GraphView::~GraphView() = default;

void GraphView::SetComputation(std::shared_ptr<const Module> module,
                               const Computation* computation) {
  TraceScope trace("SetComputation");
  Impl& d = *impl_;
  if (!module || !computation) {
    Clear();
    return;
  }
  bool same = module == d.module && computation == d.comp;
  // A selection in another module is dropped unseen: that module may already be gone.
  if (module != d.module) d.selected = nullptr;
  // The old picture stays until the new one is drawn, but inert: its instructions belong to
  // what is being replaced.
  if (!same && d.scene) d.scene->set_callbacks({});
  const bool new_module = module != d.module;
  d.module = std::move(module);
  d.comp = computation;
  if (new_module && d.color_sharding) d.StartShardingColoring();
  if (!same) {
    d.index = BuildIndex(*computation);
    d.base.reset();
    d.expanded.clear();
  }
  d.mode = Mode::kAuto;
  d.from = d.to = d.reveal = nullptr;
  d.center = nullptr;
  if (d.selected && OwnerChain(*d.index, d.selected)) {
    d.center = d.selected;
    d.reveal = d.selected;
    d.center_on_selection = true;
  } else {
    d.selected = nullptr;
  }
  d.anchor = Impl::Anchor();
  d.reset_view = true;
  d.Request();
}

void GraphView::Clear() {
  Impl& d = *impl_;
  d.ResetPipeline();
  d.running = false;
  d.canvas->setScene(nullptr);
  d.canvas->overview()->setScene(nullptr);
  d.canvas->overview()->SetModel(nullptr);
  d.Retire(d.scene);
  d.scene = nullptr;
  d.shown.reset();
  d.base.reset();
  d.index.reset();
  d.module.reset();
  d.comp = nullptr;
  ++d.sharding_gen;
  d.sharding.reset();
  d.sharding_for.reset();
  d.UpdateShardingLegend();
  d.selected = d.center = d.from = d.to = d.reveal = nullptr;
  d.expanded.clear();
  d.mode = Mode::kAuto;
}

const Computation* GraphView::computation() const { return impl_->comp; }

void GraphView::SelectInstruction(const Instruction* instruction) {
  Impl& d = *impl_;
  bool changed = instruction != d.selected;
  bool drawn = false;
  if (instruction && d.scene && !d.running) {
    int n = d.NodeFor(instruction);
    drawn = n >= 0 && d.scene->model().nodes[n].instruction == instruction;
  }
  // Already selected and on screen: nothing moves (another view echoing a click back must not
  // re-centre or scroll under the mouse).
  if (!changed && drawn) return;
  d.selected = instruction;
  if (instruction && d.comp && d.index) {
    if (auto chain = OwnerChain(*d.index, instruction)) {
      bool request = false;
      const Instruction* top = chain->empty() ? instruction : chain->front();
      if (d.mode != Mode::kAllPaths && d.EffectiveNeighborhood() && d.center != top) {
        // Re-centre: anchor on the node if it is already on screen.
        d.CaptureAnchor(QString(), instruction, /*only_if_visible=*/true);
        d.mode = Mode::kNeighborhood;
        d.center = top;
        request = true;
      }
      // Inside a collapsed fusion or call, or a collapsed op_name group: expand them.
      const bool hidden = !drawn && d.base && d.base->hlo && d.base->hlo->HiddenInGroup(top);
      if ((!chain->empty() && !drawn) || hidden) {
        d.reveal = instruction;
        request = true;
      }
      if (request) {
        d.center_on_selection = !d.anchor.valid;
        d.Request();
      } else {
        d.Highlight();
        d.CenterOnSelection();
      }
    }
  } else {
    d.Highlight();
  }
  if (changed) emit instructionSelected(instruction);
}

const Instruction* GraphView::selected() const { return impl_->selected; }

bool GraphView::FindNext(const QString& query, bool backwards) {
  Impl& d = *impl_;
  d.last_query = query;
  std::string needle = Lower(query.trimmed().toStdString());
  if (!d.index || needle.empty()) return false;
  const CompIndex& index = *d.index;
  const int n = static_cast<int>(index.order.size());
  int start = -1;
  if (d.selected) {
    auto it = index.position.find(d.selected);
    if (it != index.position.end()) start = it->second;
  }
  for (int k = 1; k <= n; ++k) {
    int i;
    if (backwards) {
      i = ((start < 0 ? n : start) - k % n + n) % n;
    } else {
      i = (start + k + n) % n;
    }
    if (index.haystack[i].find(needle) != std::string::npos) {
      SelectInstruction(index.order[i]);
      emit statusMessage(tr("Found %1").arg(Q(index.order[i]->name())));
      return true;
    }
  }
  emit statusMessage(tr("No instruction matches \"%1\"").arg(query));
  return false;
}

void GraphView::SetClusterExpanded(const QString& path, bool expanded) {
  Impl& d = *impl_;
  if (!d.comp) return;
  std::string p = path.toStdString();
  if (p.empty()) return;
  bool now = d.base && d.base->hlo && d.base->hlo->IsExpanded(p);
  bool wanted = d.expanded.count(p) > 0;
  if (now == expanded && wanted == expanded) return;
  if (expanded) {
    d.expanded.insert(p);
  } else {
    d.expanded.erase(p);
  }
  d.CaptureAnchor(path, nullptr);
  d.Request();
}

void GraphView::SetNeighborhoodThreshold(int nodes) {
  Impl& d = *impl_;
  nodes = std::max(1, nodes);
  if (nodes == d.threshold) return;
  d.threshold = nodes;
  if (d.comp && d.mode == Mode::kAuto) {
    d.reset_view = true;
    d.Request();
  }
}

void GraphView::SetNeighborhoodRadius(int radius) {
  Impl& d = *impl_;
  radius = std::max(0, radius);
  if (radius == d.radius) return;
  d.radius = radius;
  if (d.comp && d.mode != Mode::kAllPaths && d.EffectiveNeighborhood()) {
    d.mode = Mode::kNeighborhood;
    d.CaptureAnchor(QString(), d.center ? d.center : d.comp->root());
    d.Request();
  }
}

bool GraphView::InNeighborhoodMode() const { return impl_->EffectiveNeighborhood(); }

void GraphView::ShowWholeGraph() {
  Impl& d = *impl_;
  if (!d.comp) return;
  d.mode = Mode::kWhole;
  d.reset_view = true;
  d.anchor = Impl::Anchor();
  d.Request();
}

void GraphView::ShowAllPaths(const Instruction* from, const Instruction* to) {
  Impl& d = *impl_;
  if (!d.comp || !from || !to) return;
  d.mode = Mode::kAllPaths;
  d.from = from;
  d.to = to;
  d.reset_view = true;
  d.anchor = Impl::Anchor();
  d.Request();
}

void GraphView::ZoomIn() { impl_->canvas->ZoomBy(1.25); }

void GraphView::ZoomOut() { impl_->canvas->ZoomBy(0.8); }

void GraphView::FitToView() {
  Impl& d = *impl_;
  if (!d.scene) return;
  QRectF b = d.scene->sceneRect();
  QSize vs = d.canvas->viewport()->size();
  double fit =
      std::min(vs.width() / std::max(1.0, b.width()), vs.height() / std::max(1.0, b.height()));
  d.canvas->SetScale(std::min(fit, 1.5));
  d.canvas->centerOn(b.center());
}

bool GraphView::IsLayoutRunning() const { return impl_->running; }

int GraphView::NodeCount() const { return impl_->scene ? impl_->scene->model().drawn_nodes : 0; }

namespace {

// Writes the picture as an SVG or PNG file; any thread (fonts are made here from `font`).
absl::Status WriteGraphImage(const ExportPicture& picture, const QString& path, bool svg) {
  const gv::SceneModel& model = *picture.model;
  const gv::LabelFonts fonts = gv::LabelFonts::FromDescription(picture.font);
  const QRectF src = model.bounds;
  const QColor& background = picture.background;
  const bool dark = picture.dark;
  const QString& title = picture.title;
  if (svg) {
    QSvgGenerator gen;
    gen.setFileName(path);
    gen.setSize(src.size().toSize());
    gen.setViewBox(QRectF(QPointF(0, 0), src.size()));
    gen.setTitle(title);
    gen.setDescription(QStringLiteral("HLO Workbench graph view"));
    QPainter painter;
    if (!painter.begin(&gen)) {
      return absl::PermissionDeniedError("cannot write the SVG file '" + path.toStdString() +
                                         "': check that its folder exists and is writable");
    }
    painter.fillRect(QRectF(QPointF(0, 0), src.size()), background);
    painter.translate(-src.topLeft());
    gv::PaintSceneModel(&painter, model, fonts, dark, 1.0, &picture.states, &picture.heat,
                        &picture.fills);
    painter.end();
    if (QFileInfo(path).size() <= 0) {
      return absl::InternalError("the SVG file '" + path.toStdString() + "' was not written");
    }
    return absl::OkStatus();
  }
  // Up to 2 pixels per point, capped at 16k pixels a side and 32M pixels in all (128 MB).
  double s = 2.0;
  s = std::min(s, 16000.0 / std::max(1.0, src.width()));
  s = std::min(s, 16000.0 / std::max(1.0, src.height()));
  s = std::min(s, std::sqrt(32e6 / std::max(1.0, src.width() * src.height())));
  QSize size(std::max(1, static_cast<int>(src.width() * s)),
             std::max(1, static_cast<int>(src.height() * s)));
  QImage image(size, QImage::Format_ARGB32_Premultiplied);
  if (image.isNull()) return absl::ResourceExhaustedError("not enough memory for the PNG image");
  image.fill(background);
  {
    QPainter painter(&image);
    painter.setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
    painter.scale(s, s);
    painter.translate(-src.topLeft());
    gv::PaintSceneModel(&painter, model, fonts, dark, s, &picture.states, &picture.heat,
                        &picture.fills);
  }
  if (!image.save(path, "PNG")) {
    return absl::PermissionDeniedError("cannot write the PNG file '" + path.toStdString() +
                                       "': check that its folder exists and is writable");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status GraphView::ExportSvg(const QString& path) {
  Impl& d = *impl_;
  if (!d.scene) return absl::FailedPreconditionError("no graph is shown; nothing to export");
  return WriteGraphImage(d.Picture(), path, true);
}

absl::Status GraphView::ExportPng(const QString& path) {
  Impl& d = *impl_;
  if (!d.scene) return absl::FailedPreconditionError("no graph is shown; nothing to export");
  return WriteGraphImage(d.Picture(), path, false);
}

void GraphView::SetDiffMarks(std::unordered_map<const Instruction*, uint8_t> marks) {
  Impl& d = *impl_;
  d.diff_marks = std::move(marks);
  d.ApplyDiffMarks(d.scene);
  d.ApplyDiffMarks(d.staging);
}

QColor GraphView::HeatColor(double value) {
  // Pale yellow, orange, red: readable dark text on every step.
  static const QColor stops[] = {QColor(0xFF, 0xF7, 0xBC), QColor(0xFE, 0xC4, 0x4F),
                                 QColor(0xF2, 0x6B, 0x3A), QColor(0xE0, 0x3A, 0x3A)};
  if (!(value >= 0)) value = 0;  // NaN too
  value = std::min(value, 1.0) * 3;
  const int i = std::min(2, static_cast<int>(value));
  const double t = value - i;
  const QColor& a = stops[i];
  const QColor& b = stops[i + 1];
  return QColor::fromRgbF(a.redF() + (b.redF() - a.redF()) * t,
                          a.greenF() + (b.greenF() - a.greenF()) * t,
                          a.blueF() + (b.blueF() - a.blueF()) * t);
}

void GraphView::SetHeatMap(std::unordered_map<const Instruction*, double> values,
                           const QString& title, const QString& low_label,
                           const QString& high_label) {
  Impl& d = *impl_;
  d.heat = std::move(values);
  d.heat_title = d.heat.empty() ? QString() : title;
  d.heat_low = low_label;
  d.heat_high = high_label;
  d.ApplyHeat(d.scene, d.shown.get());
  d.ApplyHeat(d.staging, d.staging_prep.get());
  d.heat_legend->setVisible(!d.heat.empty());
  d.heat_legend->update();
}

QColor GraphView::HeatColorOf(const Instruction* instruction) const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return QColor();
  auto it = d.scene->model().by_instruction.find(instruction);
  if (it == d.scene->model().by_instruction.end()) return QColor();
  for (int n : it->second) {
    if (const QColor* c = d.scene->heat(n)) return *c;
  }
  return QColor();
}

QColor GraphView::HeatColorOfScope(const QString& path) const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return QColor();
  const auto& nodes = d.scene->model().nodes;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].frame || nodes[n].role != graph::HloNodeRole::kGroup || nodes[n].path != path) {
      continue;
    }
    if (const QColor* c = d.scene->heat(static_cast<int>(n))) return *c;
  }
  return QColor();
}

int GraphView::CountHeatNodes() const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return 0;
  int count = 0;
  for (int n = 0; n < static_cast<int>(d.scene->model().nodes.size()); ++n) {
    if (d.scene->heat(n) != nullptr) ++count;
  }
  return count;
}

QString GraphView::HeatLegendText() const {
  const Impl& d = *impl_;
  if (d.heat.empty()) return QString();
  return QStringLiteral("%1: %2 … %3").arg(d.heat_title, d.heat_low, d.heat_high);
}

int GraphView::DiffMarkOf(const Instruction* instruction) const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return 0;
  auto it = d.scene->model().by_instruction.find(instruction);
  if (it == d.scene->model().by_instruction.end()) return 0;
  for (int n : it->second) {
    if (!d.scene->model().nodes[n].frame) return d.scene->diff_mark(n);
  }
  return 0;
}

void GraphView::SetSearchMatches(std::unordered_set<const Instruction*> matches) {
  Impl& d = *impl_;
  d.search_matches = std::move(matches);
  d.ApplySearchMatches(d.scene);
  d.ApplySearchMatches(d.staging);
}

int GraphView::CountSearchMatchNodes() const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return 0;
  int count = 0;
  for (int n = 0; n < static_cast<int>(d.scene->model().nodes.size()); ++n) {
    count += d.scene->search_match(n);
  }
  return count;
}

int GraphView::CountDiffMarkedNodes(int mark) const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return 0;
  int count = 0;
  for (int n = 0; n < static_cast<int>(d.scene->model().nodes.size()); ++n) {
    if (d.scene->diff_mark(n) == mark) ++count;
  }
  return count;
}

void GraphView::SetRemovedGhosts(std::vector<RemovedGhost> ghosts) {
  Impl& d = *impl_;
  if (ghosts.empty() && (!d.ghosts || d.ghosts->empty())) return;
  d.ghosts = ghosts.empty() ? nullptr
                            : std::make_shared<const std::vector<RemovedGhost>>(std::move(ghosts));
  if (d.comp) {
    d.CaptureViewAnchor();
    d.Request();
  }
}

int GraphView::RemovedGhostCount() const {
  return static_cast<int>(RemovedGhostRects().size());
}

std::vector<QRectF> GraphView::RemovedGhostRects() const {
  const Impl& d = *impl_;
  std::vector<QRectF> rects;
  if (d.scene == nullptr) return rects;
  for (const gv::NodeSpec& n : d.scene->model().nodes) {
    if (n.role == graph::HloNodeRole::kRemoved) rects.push_back(n.rect);
  }
  return rects;
}

bool GraphView::ExportInBackground(const QString& path) {
  Impl& d = *impl_;
  const QString ext = QFileInfo(path).suffix().toLower();
  if (!d.scene || (ext != QLatin1String("svg") && ext != QLatin1String("png"))) return false;
  QPointer<GraphView> view(this);
  std::thread([picture = d.Picture(), path, view, svg = ext == QLatin1String("svg")] {
    absl::Status st = WriteGraphImage(picture, path, svg);
    const QString error = st.ok() ? QString() : QString::fromStdString(std::string(st.message()));
    QMetaObject::invokeMethod(
        view.data() != nullptr ? static_cast<QObject*>(view.data()) : QCoreApplication::instance(),
        [view, path, error] {
          if (view) emit view->exportFinished(path, error);
        },
        Qt::QueuedConnection);
  }).detach();
  return true;
}

absl::Status GraphView::ExportDot(const QString& path) {
  Impl& d = *impl_;
  if (!d.shown || !d.shown->shown) {
    return absl::FailedPreconditionError("no graph is shown; nothing to export");
  }
  std::string dot = graph::ExportDot(*d.shown->shown);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate)) {
    return absl::PermissionDeniedError("cannot write the DOT file '" + path.toStdString() +
                                       "': " + file.errorString().toStdString());
  }
  if (file.write(dot.data(), static_cast<qint64>(dot.size())) != static_cast<qint64>(dot.size())) {
    return absl::InternalError("writing the DOT file '" + path.toStdString() +
                               "' failed: " + file.errorString().toStdString());
  }
  return absl::OkStatus();
}

void GraphView::SetGraphvizLayout(bool enabled) {
  Impl& d = *impl_;
  if (enabled == d.use_graphviz) return;
  d.use_graphviz = enabled;
  if (d.comp) {
    d.anchor = Impl::Anchor();
    d.reset_view = true;
    d.Request();
  }
}

bool GraphView::graphviz_layout() const { return impl_->use_graphviz; }

void GraphView::SetGraphvizLimits(int max_nodes, double timeout_seconds) {
  impl_->graphviz_max_nodes = std::max(1, max_nodes);
  impl_->graphviz_timeout = std::max(0.1, timeout_seconds);
}

int GraphView::GraphvizNodeLimit() const { return impl_->graphviz_max_nodes; }

void GraphView::SetFoldGetTupleElement(bool fold) {
  Impl& d = *impl_;
  if (fold == d.fold_gte) return;
  d.fold_gte = fold;
  d.base.reset();  // the graph is rebuilt with the new option
  if (d.comp) {
    d.CaptureAnchor(QString(), d.selected);
    d.Request();
  }
}

bool GraphView::fold_get_tuple_element() const { return impl_->fold_gte; }

void GraphView::SetGroupByScope(bool group) {
  Impl& d = *impl_;
  if (group == d.group_scopes) return;
  d.group_scopes = group;
  d.base.reset();
  if (d.comp) {
    d.anchor = Impl::Anchor();
    d.reset_view = true;
    d.Request();
  }
}

bool GraphView::group_by_scope() const { return impl_->group_scopes; }

void GraphView::SetGroupMinNodes(int nodes) {
  Impl& d = *impl_;
  nodes = std::max(1, nodes);
  if (nodes == d.group_min_nodes) return;
  d.group_min_nodes = nodes;
  d.base.reset();
  if (d.comp && d.group_scopes) {
    d.anchor = Impl::Anchor();
    d.reset_view = true;
    d.Request();
  }
}

int GraphView::group_min_nodes() const { return impl_->group_min_nodes; }

bool GraphView::IsGrouped() const {
  const Impl& d = *impl_;
  return d.shown && d.shown->grouped;
}

int GraphView::neighborhood_threshold() const { return impl_->threshold; }

int GraphView::neighborhood_radius() const { return impl_->radius; }

bool GraphView::InAllPathsMode() const { return impl_->mode == Mode::kAllPaths; }

bool GraphView::IsClusterExpanded(const QString& path) const {
  const Impl& d = *impl_;
  const Prepared* p = d.shown ? d.shown.get() : nullptr;
  return p && p->hlo && p->hlo->IsExpanded(path.toStdString());
}

std::vector<const Instruction*> GraphView::ShownInstructions() const {
  std::vector<const Instruction*> out;
  if (!impl_->scene) return out;
  std::unordered_map<const Instruction*, bool> seen;
  for (const gv::NodeSpec& n : impl_->scene->model().nodes) {
    if (n.frame || !n.instruction) continue;
    if (seen.emplace(n.instruction, true).second) out.push_back(n.instruction);
  }
  return out;
}

QRectF GraphView::NodeSceneRect(const Instruction* instruction) const {
  int n = impl_->NodeFor(instruction);
  return n < 0 ? QRectF() : impl_->scene->model().nodes[n].rect;
}

QGraphicsView* GraphView::graphicsView() const { return impl_->canvas; }

void GraphView::SetColorBySharding(bool on) {
  TraceScope trace("SetColorBySharding");
  Impl& d = *impl_;
  if (on == d.color_sharding) return;
  d.color_sharding = on;
  d.StartShardingColoring();
}

bool GraphView::color_by_sharding() const { return impl_->color_sharding; }

bool GraphView::ShardingColoringReady() const {
  const Impl& d = *impl_;
  return d.color_sharding && d.ShardingReady();
}

std::vector<QColor> GraphView::ShardingColorsOf(const Instruction* instruction) const {
  const Impl& d = *impl_;
  if (d.scene == nullptr) return {};
  auto it = d.scene->model().by_instruction.find(instruction);
  if (it == d.scene->model().by_instruction.end()) return {};
  for (int n : it->second) {
    if (const std::vector<QColor>* f = d.scene->fill(n)) return *f;
  }
  return {};
}

std::vector<GraphView::LegendEntry> GraphView::ShardingLegend() const {
  const Impl& d = *impl_;
  std::vector<LegendEntry> out;
  if (!d.color_sharding || !d.ShardingReady() || d.scene == nullptr) return out;
  // The entries of the drawn nodes, in the colouring's order.
  for (size_t e = 0; e < d.sharding_used.size() && e < d.sharding->entries.size(); ++e) {
    if (!d.sharding_used[e]) continue;
    const graph::ShardingLegendEntry& entry = d.sharding->entries[e];
    out.push_back({ShardingColor(entry.kind, entry.slot), QString::fromStdString(entry.label)});
  }
  return out;
}

QString GraphView::ShardingLegendText() const {
  const Impl& d = *impl_;
  return d.sharding_legend->isHidden() ? QString() : d.sharding_legend->Text();
}

void GraphView::SetOverviewVisible(bool visible) {
  impl_->overview_enabled = visible;
  impl_->canvas->overview()->SetEnabled(visible);
}

}  // namespace hlowb::viewer
