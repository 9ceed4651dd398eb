// The graph view's two QGraphicsViews: the Canvas (zoom with Ctrl+wheel, pan by dragging,
// keyboard zoom) and the OverviewMap, a small view of the same scene in the canvas's corner that
// shows where the canvas looks (a rectangle) and moves it on click or drag.
//
// The overview paints the scene from the model's thumbnail (built on the worker) instead of
// painting every item again at each scroll, so it costs nothing on graphs of any size.
#ifndef HLOWB_VIEWER_GRAPH_GRAPH_CANVAS_H_
#define HLOWB_VIEWER_GRAPH_GRAPH_CANVAS_H_

#include <QGraphicsView>
#include <QImage>
#include <functional>
#include <memory>

#include "viewer/graph/graph_scene.h"

namespace hlowb::viewer::gv {

class OverviewMap;

// The main view: zoom (Ctrl+wheel, Ctrl+plus/minus, Ctrl+0 fits), pan (drag the background),
// and hooks for the controller (painted, view moved).
class Canvas : public QGraphicsView {
 public:
  explicit Canvas(QWidget* parent = nullptr);
  ~Canvas() override;

  // Multiplies the scale by `factor` (clamped), keeping the scene point under `anchor` (viewport
  // coordinates) in place; anchor (-1,-1) means the centre.
  void ZoomBy(double factor, QPoint anchor = QPoint(-1, -1));
  double current_scale() const { return transform().m11(); }
  void SetScale(double scale);
  // The visible part of the scene.
  QRectF VisibleSceneRect() const;

  OverviewMap* overview() const { return overview_; }
  // Sizes the overview map to the canvas and the graph, and puts it in a corner where it hides
  // no node when one does (see PlaceOverview). Called when the view scrolls, zooms or resizes.
  void ViewChanged();

  std::function<void()> on_painted;
  std::function<void()> on_fit;
  std::function<void(bool backwards)> on_find_again;
  std::function<void(QPoint global_pos, QPointF scene_pos)> on_context_menu;

  static constexpr double kMinScale = 0.002;
  static constexpr double kMaxScale = 8.0;

 protected:
  void wheelEvent(QWheelEvent* event) override;
  void paintEvent(QPaintEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;
  void resizeEvent(QResizeEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void drawBackground(QPainter* painter, const QRectF& rect) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  // Double-clicks are resolved here, not by the items: a cluster frame lets presses through (to
  // pan), and QGraphicsScene would then turn the double-click into a plain press.
  void mouseDoubleClickEvent(QMouseEvent* event) override;

 private:
  // The overview's rectangle in corner 0 bottom right, 1 top right, 2 bottom left, 3 top left.
  QRect OverviewRectAt(int corner) const;
  void PlaceOverview();
  OverviewMap* overview_;
  int overview_corner_ = 0;
};

// The overview map (see the top of this file): the graph's aspect, sized to the canvas, in the
// corner where it hides fewest nodes.
class OverviewMap : public QGraphicsView {
 public:
  explicit OverviewMap(Canvas* canvas);
  void SetModel(std::shared_ptr<const SceneModel> model);
  // Called when the canvas scrolls or zooms.
  void ViewChanged();
  // Takes the graph's aspect, at most kOverviewMax pixels and a share of `canvas` a side.
  void FitTo(QSize canvas);
  // Shown only when enabled and the canvas does not show the whole scene.
  void SetEnabled(bool enabled);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;

 private:
  QRectF ImageRect() const;
  QPointF ToScene(QPointF widget_pos) const;
  void CenterCanvasAt(QPointF widget_pos);

  Canvas* canvas_;
  std::shared_ptr<const SceneModel> model_;
  bool enabled_ = true;
  bool dragging_ = false;
};

}  // namespace hlowb::viewer::gv

#endif  // HLOWB_VIEWER_GRAPH_GRAPH_CANVAS_H_
