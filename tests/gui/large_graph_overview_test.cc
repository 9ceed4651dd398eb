// Offscreen tests of the overview of large graphs: instructions grouped by their op_name scope
// into boxes (viewer/graph/scope_groups.h) that are collapsed above a node threshold and expand
// in place, parallel edges between boxes bundled into one edge that carries their count, bad
// op_names handled, and, on the corpus' 4,467-node while body, a fitted overview that fills at
// least half of the view in both directions (measured on a screenshot of the view).
#include <QGraphicsView>
#include <QImage>
#include <QSignalSpy>
#include <QtTest>
#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "viewer/graph/graph_scene.h"
#include "viewer/graph/graph_view.h"
#include "viewer/graph/hlo_graph.h"
#include "viewer/graph/layered_layout.h"
#include "viewer/graph/scope_groups.h"

namespace hlowb::viewer {
namespace {

using graph::HloGraph;
using graph::HloGraphOptions;
using graph::LayoutGraph;
using graph::ScopeBox;
using graph::ScopeGrouping;

// One op_name scope of the generated module and how many instructions it holds.
struct Block {
  const char* name;   // instruction name prefix
  const char* scope;  // op_name scope under jit(train)
  int ops;
};

// A training step of `scale` x 420 instructions in seven scopes under jit(train): each scope is a
// chain (every op reads the previous one and the last op of the scope before), the decoder also
// reads the encoder's layer_1 output, the loss also reads parameter p1 (which has no op_name and
// no other user). p0 (no op_name) feeds the first op; the ROOT tuple (no op_name) reads the loss
// and the optimizer.
std::vector<Block> Blocks(double scale) {
  auto n = [scale](int k) { return std::max(3, static_cast<int>(k * scale)); };
  return {{"attn0", "encoder/layer_0/attention", n(60)},
          {"mlp0", "encoder/layer_0/mlp", n(50)},
          {"attn1", "encoder/layer_1/attention", n(60)},
          {"mlp1", "encoder/layer_1/mlp", n(50)},
          {"dec", "decoder", n(100)},
          {"loss", "loss", n(40)},
          {"adam", "optimizer/adam", n(60)}};
}

std::string ScopedModule(double scale) {
  std::string t = "HloModule overview\n\nENTRY main {\n";
  t += "  p0 = f32[4] parameter(0)\n  p1 = f32[4] parameter(1)\n";
  std::string prev = "p0";
  std::string layer1_out;
  for (const Block& b : Blocks(scale)) {
    for (int i = 0; i < b.ops; ++i) {
      const std::string name = std::string(b.name) + "." + std::to_string(i);
      const char* op = i % 2 ? "multiply" : "add";
      std::string second = prev;
      if (std::string(b.name) == "dec" && i % 10 == 5) second = layer1_out;
      if (std::string(b.name) == "loss" && i % 10 == 3) second = "p1";
      t += "  " + name + " = f32[4] " + op + "(" + prev + ", " + second +
           "), metadata={op_name=\"jit(train)/" + b.scope + "/" + op + "\"}\n";
      prev = name;
    }
    if (std::string(b.name) == "mlp1") layer1_out = prev;
  }
  const int loss_ops = Blocks(scale)[5].ops;
  t += "  ROOT out = (f32[4], f32[4]) tuple(" + prev + ", loss." + std::to_string(loss_ops - 1) +
       ")\n}\n";
  return t;
}

std::shared_ptr<const Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  if (!m.ok()) {
    qWarning("parse failed: %s", std::string(m.status().message()).c_str());
    return nullptr;
  }
  return std::shared_ptr<const Module>(std::move(*m));
}

const Instruction* Find(const Module& m, const std::string& name) {
  for (const auto& c : m.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

HloGraph Grouped(const Computation& c, int min_nodes = graph::kDefaultGroupMinNodes) {
  HloGraphOptions o;
  o.group_min_nodes = min_nodes;
  auto g = HloGraph::Build(c, o);
  if (!g.ok()) qFatal("HloGraph::Build failed: %s", std::string(g.status().message()).c_str());
  return *std::move(g);
}

// The top-level box of `grouping` (or -1: loose) that holds node v of the ungrouped level.
int TopBoxOf(const ScopeGrouping& grouping, int v) {
  int b = grouping.box_of(v);
  while (b >= 0 && grouping.boxes()[b].parent >= 0) b = grouping.boxes()[b].parent;
  return b;
}

int BoxByTitle(const ScopeGrouping& grouping, const std::vector<int>& boxes,
               const std::string& title) {
  for (int b : boxes) {
    if (grouping.boxes()[b].title == title) return b;
  }
  return -1;
}

bool WaitLayout(GraphView& view, QSignalSpy& finished, int timeout_ms = 120000) {
  QElapsedTimer t;
  t.start();
  while (view.IsLayoutRunning() || finished.isEmpty()) {
    if (t.elapsed() > timeout_ms) return false;
    QTest::qWait(5);
  }
  return true;
}

const gv::SceneModel& SceneOf(const GraphView& view) {
  return static_cast<const gv::GraphScene*>(view.graphicsView()->scene())->model();
}

// Scene rectangles of the drawn nodes by path.
std::map<std::string, QRectF> RectsByPath(const GraphView& view) {
  std::map<std::string, QRectF> rects;
  for (const gv::NodeSpec& n : SceneOf(view).nodes) rects[n.path.toStdString()] = n.rect;
  return rects;
}

// The part of `image` that is not `background`: the drawn graph's extent in pixels.
QRect InkBounds(const QImage& image, QColor background) {
  int left = image.width(), top = image.height(), right = -1, bottom = -1;
  const QRgb bg = background.rgb();
  for (int y = 0; y < image.height(); ++y) {
    const QRgb* line = reinterpret_cast<const QRgb*>(image.constScanLine(y));
    for (int x = 0; x < image.width(); ++x) {
      const QRgb p = line[x];
      if (std::abs(qRed(p) - qRed(bg)) + std::abs(qGreen(p) - qGreen(bg)) +
              std::abs(qBlue(p) - qBlue(bg)) <=
          24) {
        continue;
      }
      left = std::min(left, x);
      right = std::max(right, x);
      top = std::min(top, y);
      bottom = std::max(bottom, y);
    }
  }
  return right < 0 ? QRect() : QRect(QPoint(left, top), QPoint(right, bottom));
}

}  // namespace

class LargeGraphOverviewTest : public QObject {
  Q_OBJECT

 private:
  std::unique_ptr<GraphView> view_;

  bool Relayout(const std::function<void()>& action) {
    QSignalSpy finished(view_.get(), &GraphView::layoutFinished);
    action();
    return WaitLayout(*view_, finished);
  }

  void Show(std::shared_ptr<const Module> module, int width = 1200, int height = 800) {
    view_ = std::make_unique<GraphView>();
    view_->resize(width, height);
    view_->SetOverviewVisible(false);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
    QVERIFY(Relayout([&] { view_->SetComputation(module, module->entry()); }));
  }

 private slots:
  void cleanup() { view_.reset(); }

  void ParsesOpNamesIntoScopeAndOp() {
    graph::NodeScope s = graph::ParseOpName("jit(train)/encoder/layer_3/attention/dot_general");
    QCOMPARE(s.op, std::string("dot_general"));
    QCOMPARE(s.scope, (std::vector<std::string>{"jit(train)", "encoder", "layer_3", "attention"}));
    s = graph::ParseOpName("XLA_Retvals");
    QVERIFY(s.scope.empty());
    QCOMPARE(s.op, std::string("XLA_Retvals"));
    QVERIFY(graph::ParseOpName("").empty());
    QVERIFY(graph::ParseOpName("/").empty());
    QVERIFY(graph::ParseOpName("///").empty());
    s = graph::ParseOpName("//a//b/");
    QCOMPARE(s.scope, std::vector<std::string>{"a"});
    QCOMPARE(s.op, std::string("b"));
    std::string deep;
    for (int i = 0; i < 500; ++i) deep += "s" + std::to_string(i) + "/";
    deep += "op";
    s = graph::ParseOpName(deep, 32);
    QCOMPARE(static_cast<int>(s.scope.size()), 32);
    QCOMPARE(s.op, std::string("op"));
  }

  // The boxes follow the op_name scopes: the jit(train) prefix every name shares is looked
  // through, the encoder (over half of the graph) is split into its layers, single-child chains
  // are one box (optimizer/adam), and nodes without op_name join the scope of what they feed.
  void GroupingBuildsTheScopeHierarchy() {
    auto module = Parse(ScopedModule(1.0));
    QVERIFY(module != nullptr);
    HloGraph g = Grouped(*module->entry());
    const ScopeGrouping* grouping = g.grouping();
    QVERIFY(grouping != nullptr);
    std::set<std::string> titles;
    for (int b : grouping->top_boxes()) titles.insert(grouping->boxes()[b].title);
    QCOMPARE(titles, (std::set<std::string>{"encoder/layer_0", "encoder/layer_1", "decoder", "loss",
                                            "optimizer/adam"}));
    std::set<std::string> keys;
    for (int b : grouping->top_boxes()) keys.insert(grouping->boxes()[b].key);
    QCOMPARE(keys, (std::set<std::string>{"@encoder|layer_0", "@encoder|layer_1", "@decoder",
                                          "@loss", "@optimizer|adam"}));
    auto size_of = [&](const char* title) {
      const int b = BoxByTitle(*grouping, grouping->top_boxes(), title);
      return b < 0 ? -1 : grouping->boxes()[b].size;
    };
    QCOMPARE(size_of("encoder/layer_0"), 111);  // 60 + 50 + p0
    QCOMPARE(size_of("encoder/layer_1"), 110);
    QCOMPARE(size_of("decoder"), 100);
    QCOMPARE(size_of("loss"), 41);  // 40 + p1
    QCOMPARE(size_of("optimizer/adam"), 60);
    // The ROOT tuple reads two scopes: it stays loose at the top.
    const LayoutGraph& flat = *g.ungrouped();
    QCOMPARE(static_cast<int>(grouping->top_members().size()), 1);
    QCOMPARE(flat.nodes[grouping->top_members()[0]].key, std::string("out"));
    // The top level: five boxes and the ROOT.
    QCOMPARE(g.graph()->node_count(), 6);
    QVERIFY(g.graph()->Validate().ok());
    // Inside the first layer: its attention and mlp, collapsed.
    const int layer0 = BoxByTitle(*grouping, grouping->top_boxes(), "encoder/layer_0");
    std::vector<std::string> inner;
    for (int b : grouping->boxes()[layer0].boxes) inner.push_back(grouping->boxes()[b].title);
    QCOMPARE(inner, (std::vector<std::string>{"attention", "mlp"}));
    // Every node lies in exactly one place.
    int placed = static_cast<int>(grouping->top_members().size());
    for (const ScopeBox& box : grouping->boxes()) placed += static_cast<int>(box.members.size());
    QCOMPARE(placed, flat.node_count());
    // Unscoped parameters sit with their users; paths start with the boxes.
    const int attention0 = grouping->boxes()[layer0].boxes[0];
    std::vector<std::string> members;
    for (int v : grouping->boxes()[attention0].members) members.push_back(flat.nodes[v].key);
    QVERIFY(std::count(members.begin(), members.end(), "p0") == 1);
    QCOMPARE(g.GroupPathOf(Find(*module, "attn0.7")), std::string("@encoder|layer_0/@attention"));
    QCOMPARE(g.GroupPathOf(Find(*module, "p1")), std::string("@loss"));
    QCOMPARE(g.GroupPathOf(Find(*module, "out")), std::string());
    QVERIFY(g.HiddenInGroup(Find(*module, "attn0.7")));
    HloGraph opened = g.WithGroupsOpenedFor(Find(*module, "attn0.7"));
    QVERIFY(!opened.HiddenInGroup(Find(*module, "attn0.7")));
    QVERIFY(opened.IsExpanded("@encoder|layer_0"));
    QVERIFY(opened.IsExpanded("@encoder|layer_0/@attention"));
    QVERIFY(!opened.IsExpanded("@loss"));
  }

  // Parallel edges between two drawn nodes merge into one edge that carries their count; an
  // expanded box passes every edge on through its ports without losing any.
  void BundledEdgesCarryTheRightCounts() {
    auto module = Parse(ScopedModule(1.0));
    QVERIFY(module != nullptr);
    HloGraph g = Grouped(*module->entry());
    const ScopeGrouping& grouping = *g.grouping();
    const LayoutGraph& flat = *g.ungrouped();
    const LayoutGraph& top = *g.graph();
    // The top-level item each node is drawn in: its box's key, or its own.
    auto item_key = [&](int v) {
      const int b = TopBoxOf(grouping, v);
      return b < 0 ? flat.nodes[v].key : grouping.boxes()[b].key;
    };
    std::map<std::pair<std::string, std::string>, int> expected;
    for (const graph::LayoutEdge& e : flat.edges) {
      const std::string a = item_key(e.src), b = item_key(e.dst);
      if (a != b) ++expected[{a, b}];
    }
    std::map<std::pair<std::string, std::string>, int> drawn;
    int bundles = 0;
    for (const graph::LayoutEdge& e : top.edges) {
      drawn[{top.nodes[e.src].key, top.nodes[e.dst].key}] += e.count;
      if (e.count > 1) {
        ++bundles;
        QCOMPARE(e.label, "\xC3\x97" + std::to_string(e.count));
      }
    }
    QCOMPARE(drawn, expected);
    // The decoder's first op reads layer_1's last twice, ten more of its ops read it once: one
    // edge of 12.
    QCOMPARE((drawn[{"@encoder|layer_1", "@decoder"}]), 12);
    QVERIFY(bundles >= 1);
    int between = 0;
    for (const graph::LayoutEdge& e : top.edges) {
      if (top.nodes[e.src].key == "@encoder|layer_1" && top.nodes[e.dst].key == "@decoder") {
        ++between;
      }
    }
    QCOMPARE(between, 1);

    // Expanded: the edges into the decoder end at its entry ports, and inside, the ports pass
    // the same number of edges on to the members.
    auto expanded = g.WithExpanded("@decoder", true);
    QVERIFY(expanded.ok());
    const LayoutGraph& top2 = *expanded->graph();
    QCOMPARE(top2.StructureFingerprint(), top.StructureFingerprint());  // relaid incrementally
    int dec = -1;
    for (int i = 0; i < top2.node_count(); ++i) {
      if (top2.nodes[i].key == "@decoder") dec = i;
    }
    QVERIFY(dec >= 0 && top2.nodes[dec].expanded && top2.nodes[dec].child);
    const LayoutGraph& inside = *top2.nodes[dec].child;
    int entering = 0, passed = 0;
    for (const graph::LayoutEdge& e : top2.edges) {
      if (e.dst == dec) entering += e.count;
    }
    std::set<int> in_ports;
    for (const graph::ClusterPort& p : inside.inputs) in_ports.insert(p.node);
    for (const graph::LayoutEdge& e : inside.edges) {
      if (in_ports.count(e.src)) passed += e.count;
    }
    QCOMPARE(entering, (expected[{"@encoder|layer_1", "@decoder"}]));
    QCOMPARE(passed, entering);
    for (int p : in_ports) QCOMPARE(inside.nodes[p].tag, graph::kPortNodeTag);
    auto r = graph::LayoutOnce(top2);
    QVERIFY(r.ok());
  }

  // Collapsed by default above the threshold, ungrouped below it; the scene draws bundles with
  // their counts.
  void CollapsedByDefaultAboveTheThresholdOnly() {
    auto small = Parse(ScopedModule(0.6));  // 254 instructions
    QVERIFY(small != nullptr);
    QVERIFY(small->entry()->instruction_count() < graph::kDefaultGroupMinNodes);
    QVERIFY(Grouped(*small->entry()).grouping() == nullptr);
    Show(small);
    QVERIFY(!view_->IsGrouped());
    QCOMPARE(view_->NodeCount(), small->entry()->instruction_count());

    auto large = Parse(ScopedModule(1.0));
    QVERIFY(large != nullptr);
    QVERIFY(large->entry()->instruction_count() > graph::kDefaultGroupMinNodes);
    Show(large);
    QVERIFY(view_->IsGrouped());
    QVERIFY(!view_->InNeighborhoodMode());
    QCOMPARE(view_->NodeCount(), 6);  // five boxes and the ROOT
    for (const char* path :
         {"@encoder|layer_0", "@encoder|layer_1", "@decoder", "@loss", "@optimizer|adam"}) {
      QVERIFY2(!view_->IsClusterExpanded(path), path);
    }
    std::set<std::string> names;
    for (const Instruction* i : view_->ShownInstructions()) names.insert(i->name());
    QCOMPARE(names, std::set<std::string>{"out"});
    int bundled = 0;
    for (const gv::EdgeSpec& e : SceneOf(*view_).edges) {
      if (e.count > 1) {
        ++bundled;
        QCOMPARE(e.label, QString("\u00D7%1").arg(e.count));
      }
    }
    QVERIFY(bundled >= 1);

    // Without grouping the same computation is drawn node by node.
    QVERIFY(Relayout([&] { view_->SetGroupByScope(false); }));
    QVERIFY(!view_->IsGrouped());
    QCOMPARE(view_->NodeCount(), large->entry()->instruction_count());
    QVERIFY(Relayout([&] { view_->SetGroupByScope(true); }));
    QCOMPARE(view_->NodeCount(), 6);
  }

  // A heat map (the replay's or the cost overlay's) colours a collapsed box by the hottest
  // instruction inside it, nested boxes included; boxes with nothing hot stay uncoloured, and
  // expanding a box colours its members instead.
  void HeatColoursTheBoxesThatHoldIt() {
    auto module = Parse(ScopedModule(1.0));
    QVERIFY(module != nullptr);
    Show(module);
    QVERIFY(view_->IsGrouped());
    view_->SetHeatMap({{Find(*module, "loss.3"), 0.2},
                       {Find(*module, "loss.7"), 0.9},
                       {Find(*module, "mlp0.4"), 0.5}},
                      QStringLiteral("test"), QStringLiteral("low"), QStringLiteral("high"));
    QCOMPARE(view_->HeatColorOfScope(QStringLiteral("@loss")), GraphView::HeatColor(0.9));
    // mlp0.4 sits two boxes deep: @encoder|layer_0 / @mlp.
    QCOMPARE(view_->HeatColorOfScope(QStringLiteral("@encoder|layer_0")),
             GraphView::HeatColor(0.5));
    QVERIFY(!view_->HeatColorOfScope(QStringLiteral("@decoder")).isValid());
    QCOMPARE(view_->CountHeatNodes(), 2);
    QVERIFY(Relayout([&] { view_->SetClusterExpanded("@loss", true); }));
    QCOMPARE(view_->HeatColorOf(Find(*module, "loss.7")), GraphView::HeatColor(0.9));
    QCOMPARE(view_->HeatColorOf(Find(*module, "loss.3")), GraphView::HeatColor(0.2));
    QCOMPARE(view_->CountHeatNodes(), 3);  // two members and the encoder's box
    view_->ClearHeatMap();
    QCOMPARE(view_->CountHeatNodes(), 0);
    QVERIFY(Relayout([&] { view_->SetClusterExpanded("@loss", false); }));
  }

  // Double-clicking a box expands it in place: its members appear inside its frame, the other
  // boxes keep their order; collapsing it restores the picture. Selecting an instruction inside
  // a collapsed box opens the boxes around it.
  void ExpandingAGroupShowsItsMembersInPlace() {
    auto module = Parse(ScopedModule(1.0));
    QVERIFY(module != nullptr);
    Show(module);
    QVERIFY(view_->IsGrouped());
    view_->FitToView();
    QTest::qWait(20);
    const std::map<std::string, QRectF> before = RectsByPath(*view_);
    QVERIFY(before.count("@loss"));
    QGraphicsView* canvas = view_->graphicsView();
    const QPoint at = canvas->mapFromScene(before.at("@loss").center());
    QVERIFY(canvas->viewport()->rect().contains(at));
    QVERIFY(Relayout([&] { QTest::mouseDClick(canvas->viewport(), Qt::LeftButton, {}, at); }));
    QVERIFY(view_->IsClusterExpanded("@loss"));
    const std::map<std::string, QRectF> after = RectsByPath(*view_);
    // The loss' instructions are drawn, inside its frame.
    const QRectF frame = after.at("@loss");
    for (int i = 0; i < 40; ++i) {
      const Instruction* instr = Find(*module, "loss." + std::to_string(i));
      const QRectF r = view_->NodeSceneRect(instr);
      QVERIFY2(!r.isEmpty(), instr->name().c_str());
      QVERIFY2(frame.contains(r), instr->name().c_str());
    }
    QVERIFY(!view_->NodeSceneRect(Find(*module, "p1")).isEmpty());
    QCOMPARE(view_->NodeCount(), 5 + 41);  // four boxes, the ROOT, the loss' 41 nodes
    // The other top-level items keep their relative order: left-right within a layer and
    // above-below across layers.
    std::vector<std::string> others = {"@encoder|layer_0", "@encoder|layer_1", "@decoder",
                                       "@optimizer|adam", "out"};
    for (const std::string& a : others) {
      for (const std::string& b : others) {
        if (a == b) continue;
        const QRectF& a0 = before.at(a);
        const QRectF& b0 = before.at(b);
        const QRectF& a1 = after.at(a);
        const QRectF& b1 = after.at(b);
        if (std::abs(a0.center().y() - b0.center().y()) < 1) {
          QVERIFY2((a0.center().x() < b0.center().x()) == (a1.center().x() < b1.center().x()),
                   (a + " / " + b).c_str());
        } else {
          QVERIFY2((a0.center().y() < b0.center().y()) == (a1.center().y() < b1.center().y()),
                   (a + " / " + b).c_str());
        }
      }
    }
    // Collapsing it restores the overview as it was.
    QVERIFY(Relayout([&] { view_->SetClusterExpanded("@loss", false); }));
    QCOMPARE(view_->NodeCount(), 6);
    const std::map<std::string, QRectF> again = RectsByPath(*view_);
    for (const auto& [path, rect] : before) {
      QVERIFY2(again.count(path), path.c_str());
      QCOMPARE(again.at(path), rect);
    }
    // Selecting an instruction two boxes deep opens both.
    const Instruction* deep = Find(*module, "mlp0.4");
    QVERIFY(Relayout([&] { view_->SelectInstruction(deep); }));
    QVERIFY(view_->IsClusterExpanded("@encoder|layer_0"));
    QVERIFY(view_->IsClusterExpanded("@encoder|layer_0/@mlp"));
    QVERIFY(!view_->NodeSceneRect(deep).isEmpty());
  }

  // Empty, slash-only, very deep and odd op_names: grouped without failing, laid out, every box
  // expandable.
  void BadOpNamesDoNotBreakGrouping() {
    std::string t = "HloModule bad\n\nENTRY main {\n  p0 = f32[4] parameter(0)\n";
    std::string deep;
    for (int i = 0; i < 300; ++i) deep += "d" + std::to_string(i % 7) + "/";
    const std::vector<std::string> names = {
        "",          "/",          "///",        "a//b//c",
        deep + "op", "a/b/c",      "sp ace/x y", "\xC3\xA9t\xC3\xA9/op",
        "a/b/",      "/leading/op"};
    std::string prev = "p0";
    for (int i = 0; i < 420; ++i) {
      const std::string name = "n." + std::to_string(i);
      t += "  " + name + " = f32[4] negate(" + prev + "), metadata={op_name=\"" +
           names[i % names.size()] + "\"}\n";
      prev = name;
    }
    t += "  ROOT out = f32[4] copy(" + prev + ")\n}\n";
    auto module = Parse(t);
    QVERIFY(module != nullptr);
    HloGraph g = Grouped(*module->entry());
    QVERIFY(g.grouping() != nullptr);
    QVERIFY(g.graph()->Validate().ok());
    for (const ScopeBox& box : g.grouping()->boxes()) {
      QVERIFY(box.key.find('/') == std::string::npos);
      QVERIFY(box.depth <= 33);
    }
    HloGraph all = g;
    for (size_t b = 0; b < g.grouping()->boxes().size(); ++b) {
      auto x = all.WithExpanded(g.grouping()->BoxPath(static_cast<int>(b)), true);
      QVERIFY2(x.ok(), std::string(x.status().message()).c_str());
      all = *std::move(x);
    }
    QVERIFY(all.graph()->Validate().ok());
    QCOMPARE(all.graph()->TotalNodeCount() >= module->entry()->instruction_count(), true);
    QVERIFY(graph::LayoutOnce(*all.graph()).ok());
    QVERIFY(graph::LayoutOnce(*g.graph()).ok());
    // Paths that name no box are refused, not guessed.
    QVERIFY(!g.WithExpanded("@nope", true).ok());
    QVERIFY(!g.WithExpanded("@nope/n.3", true).ok());
    Show(module);
    QVERIFY(view_->IsGrouped());
    QVERIFY(view_->NodeCount() > 0);
  }

  // The corpus' 4,467-node while body: the fitted overview fills at least half of the view's
  // width and half of its height (ink on a screenshot of the view). Drawn ungrouped, the same
  // graph fitted is a thin strip; the figures of both are printed.
  void FittedOverviewOfTheLargeWhileBodyFillsTheView() {
    namespace fs = std::filesystem;
    const fs::path file =
        fs::path(HLOWB_CORPUS_DIR) / "benchmarks" / "xla__service__attention_model.hlo";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) {
      QSKIP(qPrintable(QString("corpus file not found: %1 (needs ../shared/corpus)")
                           .arg(QString::fromStdString(file.string()))));
    }
    auto text = ReadFileToString(file.string());
    QVERIFY(text.ok());
    auto parsed = ParseModule(*text);
    QVERIFY(parsed.ok());
    std::shared_ptr<const Module> module(std::move(*parsed));
    const Computation* body = nullptr;
    for (const auto& c : module->computations()) {
      if (!body || c->instruction_count() > body->instruction_count()) body = c.get();
    }
    QVERIFY(body != nullptr);
    QCOMPARE(HloGraph::Build(*body)->graph()->node_count(), 4467);

    view_ = std::make_unique<GraphView>();
    view_->resize(1200, 800);
    view_->SetOverviewVisible(false);
    view_->show();
    QVERIFY(QTest::qWaitForWindowExposed(view_.get()));
    QSignalSpy painted(view_.get(), &GraphView::firstFramePainted);

    double scale = 0;  // of the fitted view
    // Fits the graph to the view and measures the ink of a screenshot of it.
    auto measure = [&](const char* what) {
      view_->FitToView();
      QTest::qWait(50);
      QGraphicsView* canvas = view_->graphicsView();
      scale = canvas->transform().m11();
      const QImage shot =
          canvas->viewport()->grab().toImage().convertToFormat(QImage::Format_RGB32);
      const QRect ink = InkBounds(shot, canvas->backgroundBrush().color());
      const double w = static_cast<double>(ink.width()) / shot.width();
      const double h = static_cast<double>(ink.height()) / shot.height();
      const QRectF bounds = SceneOf(*view_).bounds;
      qInfo(
          "%s: %d drawn nodes, scene %.0f x %.0f pt, fitted at scale %.3f: ink %d x %d of "
          "%d x %d px (%.0f%% x %.0f%%)",
          what, view_->NodeCount(), bounds.width(), bounds.height(), scale, ink.width(),
          ink.height(), shot.width(), shot.height(), 100 * w, 100 * h);
      if (qEnvironmentVariableIsSet("HLOWB_GRAPH_TEST_SHOTS")) {
        const QDir dir(qEnvironmentVariable("HLOWB_GRAPH_TEST_SHOTS"));
        shot.save(dir.filePath(QString("overview_%1.png").arg(what)));
        if (view_->IsGrouped()) {
          (void)view_->ExportPng(dir.filePath(QString("overview_%1_export.png").arg(what)));
        }
      }
      return std::pair<double, double>(w, h);
    };

    // What opening the body shows, fitted to the window.
    QVERIFY(Relayout([&] { view_->SetComputation(module, body); }));
    const auto [w, h] = measure("opened");
    QVERIFY2(w >= 0.5 && h >= 0.5,
             qPrintable(QString("the fitted overview covers %1% x %2% of the view")
                            .arg(100 * w, 0, 'f', 0)
                            .arg(100 * h, 0, 'f', 0)));
    // And it reads: fitted, the boxes' titles are drawn (the view draws 12 px text from 5.5 px
    // on screen). Ungrouped, the whole graph fitted is drawn at about 1/100 of its size.
    QVERIFY2(scale >= 0.46,
             qPrintable(QString("the fitted overview is drawn at scale %1").arg(scale)));
    QVERIFY(view_->IsGrouped());
    QVERIFY(!view_->InNeighborhoodMode());
    QVERIFY(view_->NodeCount() <= 60);
    if (!painted.isEmpty()) {
      qInfo("first frame of the overview painted %.0f ms after the request",
            painted.first().at(0).toDouble() * 1000);
    }
    // The ungrouped whole graph, for comparison (not asserted: it is what the overview fixes).
    QVERIFY(Relayout([&] { view_->SetGroupByScope(false); }));
    QVERIFY(Relayout([&] { view_->ShowWholeGraph(); }));
    measure("ungrouped");
  }
};

}  // namespace hlowb::viewer

QTEST_MAIN(hlowb::viewer::LargeGraphOverviewTest)
#include "large_graph_overview_test.moc"
