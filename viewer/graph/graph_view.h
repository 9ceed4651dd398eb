// The graph view: one computation drawn as a laid-out graph in a QGraphicsView. Layout runs
// on a worker thread (LayeredLayout by default, Graphviz on request for small graphs) with a
// generation counter, so a newer request replaces an older one and the UI thread never waits.
// Nodes use XLA's opcode color families; fusions and called computations are collapsed boxes
// that expand in place; a large computation is drawn as an overview grouped by op_name scope
// (scope_groups.h: boxes that expand in place, parallel edges bundled); above a node threshold
// the view opens in neighborhood mode around the selection (or the root). Zoom, pan, fit, overview
// map, hover highlighting, search, all paths between two nodes, and export to SVG, PNG and DOT.
//
// It does not own modules: callers pass a shared_ptr that keeps the module alive while shown.
// It knows nothing of dump directories, diffs or replay.
#ifndef HLOWB_VIEWER_GRAPH_GRAPH_VIEW_H_
#define HLOWB_VIEWER_GRAPH_GRAPH_VIEW_H_

#include <QColor>
#include <QRectF>
#include <QString>
#include <QWidget>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "viewer/graph/sharding_info.h"

class QGraphicsView;

namespace hlowb::viewer {

class GraphView : public QWidget {
  Q_OBJECT

 public:
  explicit GraphView(QWidget* parent = nullptr);
  ~GraphView() override;

  // Shows `computation` (which belongs to `module`). Starts a layout on the worker thread and
  // returns at once; layoutFinished or layoutFailed follows.
  void SetComputation(std::shared_ptr<const Module> module, const Computation* computation);
  void Clear();
  const Computation* computation() const;

  // Selects the node(s) drawing `instruction` and centres on it. An instruction inside a
  // collapsed fusion or called computation of the shown computation expands that cluster.
  // In neighborhood mode, re-centres the neighborhood on it. nullptr clears the selection.
  void SelectInstruction(const Instruction* instruction);
  const Instruction* selected() const;

  // Search by name, opcode, op_name and op_type metadata (case-insensitive substring).
  // Selects the next (or previous) match after the current selection; false when none.
  bool FindNext(const QString& query, bool backwards = false);

  // Expands or collapses the cluster at `path` ("fusion.3", "while.1/fusion.2").
  void SetClusterExpanded(const QString& path, bool expanded);

  // Neighborhood mode: the shown nodes are those within `radius` edges of the selection.
  // Graphs with more nodes than the threshold open in this mode.
  void SetNeighborhoodThreshold(int nodes);
  void SetNeighborhoodRadius(int radius);
  bool InNeighborhoodMode() const;
  // Shows the whole graph regardless of size (explicit request).
  void ShowWholeGraph();
  // Shows only the nodes on paths between the two instructions (in either direction).
  void ShowAllPaths(const Instruction* from, const Instruction* to);

  void ZoomIn();
  void ZoomOut();
  void FitToView();

  bool IsLayoutRunning() const;
  // Node count of the current laid-out scene (0 when empty).
  int NodeCount() const;

  absl::Status ExportSvg(const QString& path);
  absl::Status ExportPng(const QString& path);
  absl::Status ExportDot(const QString& path);
  // Writes the graph shown now as SVG or PNG (by extension) on a worker thread, from the same
  // drawing the export functions above make; exportFinished follows. False when there is no
  // graph or the extension is neither.
  bool ExportInBackground(const QString& path);

  // Diff colouring: instructions of the shown module marked 1 (added) or 2 (changed) get a
  // green or orange band, in this graph and in every later layout until replaced (an empty map
  // clears it). Added and changed are relative to another state the caller compared with.
  void SetDiffMarks(std::unordered_map<const Instruction*, uint8_t> marks);
  // The mark drawn for an instruction's node (0 when none or not drawn), and how many drawn
  // nodes carry `mark` (for tests and the window's summary).
  int DiffMarkOf(const Instruction* instruction) const;
  int CountDiffMarkedNodes(int mark) const;

  // Search matches: their nodes are filled like a text editor's find highlight, in this graph
  // and every later layout, until replaced (an empty set clears them). How many drawn nodes
  // carry one (for tests).
  void SetSearchMatches(std::unordered_set<const Instruction*> matches);
  int CountSearchMatchNodes() const;

  // Heat map: each instruction's value in [0, 1] fills its node on a pale-yellow-to-red scale,
  // in this graph and every later layout, until replaced; a legend under the graph names the
  // metric and what 0 and 1 stand for. A collapsed op_name scope box takes the colour of the
  // hottest instruction inside it. An empty map ends it.
  void SetHeatMap(std::unordered_map<const Instruction*, double> values, const QString& title,
                  const QString& low_label, const QString& high_label);
  void ClearHeatMap() { SetHeatMap({}, QString(), QString(), QString()); }
  // The scale's colour for `value` in [0, 1].
  static QColor HeatColor(double value);
  // The colour drawn for an instruction's node (invalid when none or not drawn), how many
  // drawn nodes carry one, and the legend's text (empty when hidden).
  QColor HeatColorOf(const Instruction* instruction) const;
  // The colour drawn for the collapsed scope box at `path` ("@encoder|layer_0").
  QColor HeatColorOfScope(const QString& path) const;
  int CountHeatNodes() const;
  QString HeatLegendText() const;

  // An instruction another state had and the shown one does not, drawn as a ghost node (dashed,
  // greyed, with a red band) joined to the shown instructions it read and that read it. The
  // caller matches it to the shown module; the view only draws it. A ghost is no instruction of
  // the shown module: clicking it selects nothing.
  struct RemovedGhost {
    std::string key;                 // unique among the ghosts (the instruction's name)
    std::vector<std::string> label;  // title line first
    std::string tooltip;
    const Computation* computation = nullptr;  // of the shown module: where it is drawn
    std::vector<const Instruction*> operands;  // shown instructions it read
    std::vector<const Instruction*> users;     // shown instructions that read it
    std::vector<int> removed_operands;         // other ghosts (indices) it read
  };
  // Draws `ghosts` whose computation is the shown one, in this graph and every later layout
  // until replaced (an empty list clears them). Laid out with the graph; in neighborhood and
  // all-paths mode only those joined to a shown node (directly or through other ghosts).
  void SetRemovedGhosts(std::vector<RemovedGhost> ghosts);
  // Ghost nodes in the current scene, and their scene rectangles.
  int RemovedGhostCount() const;
  std::vector<QRectF> RemovedGhostRects() const;

  // --- Options and queries added after the first version (all additive). ---

  // Lay out with Graphviz dot instead of the layered engine, for graphs of at most
  // GraphvizNodeLimit() nodes, in a child process with a timeout; larger graphs and failures
  // fall back to the layered engine (with a statusMessage).
  void SetGraphvizLayout(bool enabled);
  bool graphviz_layout() const;
  void SetGraphvizLimits(int max_nodes, double timeout_seconds);
  int GraphvizNodeLimit() const;
  // Get-tuple-element folding: the edge runs from the tuple to the user, labelled with the
  // element index. Rebuilds the graph.
  void SetFoldGetTupleElement(bool fold);
  bool fold_get_tuple_element() const;
  // Grouping by op_name scope: computations of more than group_min_nodes() nodes are shown
  // whole as collapsed scope boxes (double-click expands one in place, on its frame collapses
  // it), parallel edges between boxes drawn as one thicker edge with a count. On by default;
  // neighborhood and all-paths modes show ungrouped nodes. Rebuilds the graph.
  void SetGroupByScope(bool group);
  bool group_by_scope() const;
  void SetGroupMinNodes(int nodes);
  int group_min_nodes() const;
  // Whether the graph shown now is grouped.
  bool IsGrouped() const;
  int neighborhood_threshold() const;
  int neighborhood_radius() const;
  bool InAllPathsMode() const;
  // Whether the cluster at `path` is expanded in the latest graph.
  bool IsClusterExpanded(const QString& path) const;
  // The instructions drawn as nodes (ghost copies once; not cluster frames), in drawing order.
  std::vector<const Instruction*> ShownInstructions() const;
  // Scene rectangle of (the first node drawing) `instruction`; empty when it is not drawn.
  QRectF NodeSceneRect(const Instruction* instruction) const;
  // The canvas (for tests, screenshots and the window's context menus).
  QGraphicsView* graphicsView() const;
  void SetOverviewVisible(bool visible);

  // Colour by sharding (graph/sharding_info.h): every drawn instruction is filled by what its
  // sharding= says — replicated, maximal (one hue; the tooltip names the device), each distinct
  // tiled or partially replicated grid and device order its own hue, manual, unknown, invalid,
  // none — a tuple sharding as one stripe per element; a legend under the graph lists the
  // colours of the drawn nodes. The colouring is computed for the whole module on a worker
  // thread, again when another module is shown; it lasts until turned off.
  void SetColorBySharding(bool on);
  bool color_by_sharding() const;
  // On, and the shown module's colouring is drawn (false while it is computed).
  bool ShardingColoringReady() const;
  // The colours drawn for an instruction's node: one, or one per stripe; empty when none.
  std::vector<QColor> ShardingColorsOf(const Instruction* instruction) const;
  struct LegendEntry {
    QColor color;
    QString text;
  };
  std::vector<LegendEntry> ShardingLegend() const;
  // The legend as shown ("Sharding: a | b — note"); empty when hidden.
  QString ShardingLegendText() const;
  static QColor ShardingColor(graph::ShardingKind kind, int slot);

 signals:
  // The first frame painted after a layout was applied; `seconds` since the request.
  void firstFramePainted(double seconds);
  // The user clicked a node (or SelectInstruction was called).
  void instructionSelected(const hlowb::Instruction* instruction);
  void layoutStarted();
  void layoutFinished(int nodes, double seconds);
  void layoutFailed(const QString& message);
  void statusMessage(const QString& message);
  // An ExportInBackground finished; `error` is empty on success.
  void exportFinished(const QString& path, const QString& error);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_GRAPH_GRAPH_VIEW_H_
