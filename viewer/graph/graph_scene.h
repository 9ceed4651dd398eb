// The graph view's drawing: a SceneModel is everything the scene shows (node boxes, cluster
// frames, edge curves, labels, a thumbnail) in absolute scene coordinates, built from a laid-out
// LayoutGraph on a worker thread; a GraphScene turns it into QGraphicsItems on the UI thread a
// slice at a time, so that no event-loop slice waits for thousands of items.
//
// Plain-data model plus thin items: items paint from the model, hold no copies of it, and report
// hover, clicks and double-clicks to the scene's callbacks. Highlighting (selection, hovered
// node's incoming and outgoing edges) is state of the scene, not of the items.
//
// What this does not do: lay anything out, know about modules or computations beyond the
// instruction pointers it carries, or decide what is shown (graph_view.cc does).
#ifndef HLOWB_VIEWER_GRAPH_GRAPH_SCENE_H_
#define HLOWB_VIEWER_GRAPH_GRAPH_SCENE_H_

#include <QColor>
#include <QFont>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QImage>
#include <QPainterPath>
#include <QPolygonF>
#include <QRectF>
#include <QStaticText>
#include <QString>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/ir/instruction.h"
#include "viewer/graph/hlo_graph.h"
#include "viewer/graph/layout_graph.h"

namespace hlowb::viewer::gv {

// Label fonts: regular lines and the bold title. Pixel-sized, so that boxes measured on one
// device fit on every other (screen, SVG, PNG). Each thread builds its own from the description
// (QFont's shared data is not meant to be used from two threads at once).
struct LabelFonts {
  QFont regular;
  QFont bold;
  QFont small;  // edge labels and cluster titles
  static LabelFonts FromDescription(const QString& description);
};

// The label measuring function HloGraph uses, with QFontMetricsF of fonts built on the calling
// thread (so it can run on a worker).
graph::TextMeasureFn MakeMeasureFn(const QString& font_description);

// One drawn box: an instruction, ghost, collapsed cluster, or an expanded cluster's frame.
struct NodeSpec {
  QRectF rect;
  std::vector<QString> lines;
  QString tooltip;
  QColor fill, stroke, text;
  graph::NodeShape shape = graph::NodeShape::kRoundedBox;
  bool dashed = false;
  bool bold_title = true;
  const Instruction* instruction = nullptr;
  graph::HloNodeRole role = graph::HloNodeRole::kInstruction;
  // "while.1/fusion.2": the key path from the top level (a cluster's expand path).
  QString path;
  bool expandable = false;  // a collapsed cluster or group
  bool frame = false;       // an expanded cluster's frame (not counted as a node)
  // Where edges enter or leave an expanded group: a dot, not counted as a node.
  bool port = false;
  QString frame_title;
  int depth = 0;
};

// One drawn edge: its whole curve, arrowhead and operand label. Normally the curve is drawn by
// the EdgeTiles (batched); the edge draws it itself only when highlighted.
struct EdgeSpec {
  QPainterPath path;
  QPolygonF arrow;
  QPointF label_pos;
  QString label;
  bool control = false;
  // Edges of the graph it stands for (a bundle between groups when more than one).
  int count = 1;
  int src = -1;  // NodeSpec indices of the drawn endpoints
  int dst = -1;
  QRectF bounds;
};

// The edges' curves and arrowheads inside one square of the scene, merged into a few paths so
// that a paint strokes them with one call instead of one per edge (per-edge calls are what
// makes big graphs slow to paint). A curve segment several edges share (the bus chain of a hub)
// is in the paths once.
struct EdgeTile {
  QRectF bounds;
  // Total length of the tile's curves (chords), in scene units: antialiasing costs per pixel, so
  // tiles with much ink in view (fans of long edges) are drawn without it.
  double ink = 0;
  QPainterPath data, control;  // curves
  QPainterPath data_arrows, control_arrows;
  // Bundles of parallel edges between groups, drawn thicker by size class (see BundleClass).
  QPainterPath bundles[3];
};

// A bundle's width class: 0 for 2-3 edges, 1 for 4-15, 2 for 16 or more; -1 for a lone edge.
int BundleClass(int count);

// Everything a GraphScene shows; immutable once built.
struct SceneModel {
  std::vector<NodeSpec> nodes;
  std::vector<EdgeSpec> edges;
  std::vector<EdgeTile> tiles;
  std::vector<std::vector<int>> in_edges, out_edges;  // per node
  std::unordered_map<const Instruction*, std::vector<int>> by_instruction;
  std::unordered_map<std::string, int> by_path;
  QRectF bounds;
  int drawn_nodes = 0;  // nodes that are not cluster frames
  // A small picture of the whole graph for the overview map.
  QImage thumbnail;
  bool partial = false;
};

// Builds the model of a laid-out graph (any thread). `hlo` (may be null) gives each node's
// instruction and path; colors come from the nodes' styles.
std::shared_ptr<SceneModel> BuildSceneModel(const graph::LayoutGraph& graph,
                                            const graph::LayoutResult& result,
                                            const graph::HloGraph* hlo,
                                            const QString& font_description);

// The whole graph drawn flat (boxes and curves, no text) for far zoom levels, where painting
// every item would cost more than an event-loop slice. `scale` is image pixels per scene unit.
struct FarImage {
  QImage image;
  double scale = 0;
  // The GraphScene::fills_version() it was drawn with.
  uint64_t fills_version = 0;
};
// A colour mode's fill of each node (e.g. by sharding): empty for none, one colour for the
// whole box, several for equal vertical stripes from left to right (one per tuple element).
using NodeFills = std::vector<std::vector<QColor>>;
// Renders it on any thread; at most `max_side` pixels a side and `max_pixels` in all. `fills`
// (optional, per node) replace the nodes' own colours.
FarImage RenderFarImage(const SceneModel& model, bool dark, int max_side = 4096,
                        double max_pixels = 12e6, const NodeFills* fills = nullptr);

// The QGraphicsScene of one SceneModel. Items are created by PopulateSome() in time slices and
// deleted by DepopulateSome() the same way.
class GraphScene : public QGraphicsScene {
 public:
  struct Callbacks {
    std::function<void(int node)> clicked;
    std::function<void(int node)> double_clicked;
  };

  GraphScene(std::shared_ptr<const SceneModel> model, const QString& font_description,
             QObject* parent = nullptr);
  ~GraphScene() override;

  const SceneModel& model() const { return *model_; }
  const std::shared_ptr<const SceneModel>& model_ptr() const { return model_; }
  const LabelFonts& fonts() const { return fonts_; }
  void set_callbacks(Callbacks callbacks) { callbacks_ = std::move(callbacks); }

  // Creates items for about `budget_ms`; true once every item exists.
  bool PopulateSome(double budget_ms);
  bool populated() const { return populated_; }
  // Deletes items for about `budget_ms`; true once none is left.
  bool DepopulateSome(double budget_ms);

  // Highlight state.
  void SetSelectedNodes(const std::vector<int>& nodes);
  const std::vector<int>& selected_nodes() const { return selected_; }
  void SetHoveredNode(int node);
  // Per node: 0 none, 1 added, 2 changed (a diff against another state); drawn as a band.
  // Nodes of removed instructions (role kRemoved) always draw a red band.
  void SetDiffMarks(const std::vector<uint8_t>& marks);
  int diff_mark(int node) const { return (node_state_[node] >> 2) & 3; }
  // Per node: a heat-map colour that replaces its fill (an invalid colour: none). Such nodes
  // draw themselves at every zoom (the far image does not know the colours).
  void SetHeat(const std::vector<QColor>& colors);
  const QColor* heat(int node) const {
    return (node_state_[node] & 0x10) != 0 ? &heat_[node] : nullptr;
  }
  // Per node: non-zero for a search match, filled like a find highlight (over any heat colour)
  // and drawn by its item at every zoom.
  void SetSearchMatches(const std::vector<uint8_t>& matches);
  bool search_match(int node) const { return (node_state_[node] & 0x20) != 0; }
  // Per node: a colour mode's fill (NodeFills), over any heat colour and under a search match.
  // Unlike heat, the far image is redrawn with them (fills_version() says which fills it must
  // have been drawn with; until one comes, items draw themselves).
  void SetFills(NodeFills fills);
  const std::vector<QColor>* fill(int node) const {
    return (node_state_[node] & 0x40) != 0 ? &fills_[node] : nullptr;
  }
  const NodeFills& fills() const { return fills_; }
  uint64_t fills_version() const { return fills_version_; }
  int hovered_node() const { return hovered_; }
  // The node states that outlast the pointer (diff marks, heat, search matches; not selection or
  // hover), and the heat colours (empty or per node), for drawing the graph into a file.
  std::vector<uint8_t> LastingNodeStates() const;
  const std::vector<QColor>& heat_colors() const { return heat_; }
  // Edge state: 0 normal, 1 into the hovered/selected node, 2 out of it.
  uint8_t edge_state(int edge) const { return edge_state_[edge]; }
  uint8_t node_state(int node) const { return node_state_[node]; }

  // Colors that follow the palette (light or dark).
  void SetDark(bool dark);
  bool dark() const { return dark_; }

  // Far zoom: below far_lod() items leave their drawing to the far image (unless highlighted)
  // and the canvas draws DrawFar() as background. An image drawn with other fills is ignored.
  void SetFarImage(FarImage far);
  double far_lod() const { return exporting_ ? 0 : far_lod_; }
  // While exporting (render() into a file) every item draws itself at any scale.
  void SetExporting(bool exporting) { exporting_ = exporting; }
  void DrawFar(QPainter* painter, const QRectF& exposed) const;

  // The node (not frame) at `scene_pos`, else the innermost cluster frame there; -1 if none.
  int NodeAt(QPointF scene_pos) const;

  // Laid-out label lines of a node, filled on its first paint with text.
  std::vector<QStaticText>* text_cache(int node) { return &text_cache_[node]; }

  // Items' event hooks.
  void NodeClicked(int node);
  void NodeDoubleClicked(int node);

 protected:
  // Window (de)activation is not forwarded to every item: QGraphicsScene would sort and visit
  // all of them (tens of ms on big graphs) for items that ignore it.
  bool event(QEvent* event) override;

 private:
  // Repaints the items of `nodes` (indexes whose look changed), or the whole scene when there
  // are many of them.
  void UpdateNodes(const std::vector<int>& nodes);
  void RecomputeEdgeStates();

  std::shared_ptr<const SceneModel> model_;
  LabelFonts fonts_;
  Callbacks callbacks_;
  std::vector<QGraphicsItem*> items_;
  size_t next_node_ = 0;
  size_t next_edge_ = 0;
  size_t next_tile_ = 0;
  bool populated_ = false;
  std::vector<std::vector<QStaticText>> text_cache_;
  // bit 0 selected, bit 1 hovered, bits 2-3 diff mark, bit 4 heat colour, bit 5 search match,
  // bit 6 a colour mode's fill
  std::vector<uint8_t> node_state_;
  std::vector<QColor> heat_;
  NodeFills fills_;
  uint64_t fills_version_ = 0;
  std::vector<uint8_t> edge_state_;
  std::vector<int> selected_;
  int hovered_ = -1;
  bool dark_ = false;
  FarImage far_;
  double far_lod_ = 0;
  bool exporting_ = false;
};

// The highlight colours: the selected and the hovered node's border, and the edges into and
// out of the highlighted node. None shares a hue with a diff mark (DiffMarkColor), so that
// highlighting in compare mode reads as nothing but highlighting.
enum class Highlight : uint8_t { kSelected, kHovered, kOperandEdge, kUserEdge };
QColor HighlightColor(Highlight highlight);
// The band of a diff mark: 1 added (green), 2 changed (orange), 3 removed (red).
QColor DiffMarkColor(int mark);

// How items draw themselves at level of detail `lod` (scene units to pixels). `text_cache`
// (optional) keeps the node's laid-out label lines between paints; `heat` (optional) replaces
// the node's fill, and `fill` (optional: one colour, or stripes) replaces both.
void PaintNode(QPainter* painter, const NodeSpec& node, const LabelFonts& fonts, uint8_t state,
               double lod, bool dark, std::vector<QStaticText>* text_cache = nullptr,
               const QColor* heat = nullptr, const std::vector<QColor>* fill = nullptr);
// The edge's label, and when highlighted (state != 0) its whole curve and arrowhead.
void PaintEdge(QPainter* painter, const EdgeSpec& edge, const LabelFonts& fonts, uint8_t state,
               double lod, bool dark);
void PaintTile(QPainter* painter, const EdgeTile& tile, double lod, bool dark);
// The whole model as the scene's items draw it when exporting (cluster frames, edges, edge
// labels, nodes; every label at full detail), in scene coordinates, with each node's state
// (GraphScene::node_state bits; null: none), heat colour (null or invalid: none) and colour
// mode fill (null or empty: none). Any thread: it reads only what it is given and `fonts`,
// which must have been made on the calling thread.
void PaintSceneModel(QPainter* painter, const SceneModel& model, const LabelFonts& fonts,
                     bool dark, double lod, const std::vector<uint8_t>* node_states = nullptr,
                     const std::vector<QColor>* heat = nullptr,
                     const NodeFills* fills = nullptr);

}  // namespace hlowb::viewer::gv

#endif  // HLOWB_VIEWER_GRAPH_GRAPH_SCENE_H_
