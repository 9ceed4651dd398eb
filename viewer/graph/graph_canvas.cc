#include "viewer/graph/graph_canvas.h"

#include <QContextMenuEvent>
#include <QElapsedTimer>
#include <QKeyEvent>
#include <QPainter>
#include <QScrollBar>
#include <QStyleOptionGraphicsItem>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>

namespace hlowb::viewer::gv {

namespace {
constexpr int kOverviewMax = 200;
constexpr int kOverviewMargin = 8;
// The overview takes at most this share of the canvas in each direction, so that on a small
// canvas (a laptop screen with docks) it leaves room for the graph.
constexpr double kOverviewShare = 0.3;
// Its short side never gets thinner than this; a graph of a more extreme aspect is letterboxed.
constexpr int kOverviewMinSide = 28;
}  // namespace

// Canvas ---------------------------------------------------------------------------------------

Canvas::Canvas(QWidget* parent) : QGraphicsView(parent) {
  setRenderHints(QPainter::Antialiasing | QPainter::TextAntialiasing);
  setDragMode(QGraphicsView::ScrollHandDrag);
  setTransformationAnchor(QGraphicsView::AnchorUnderMouse);
  setResizeAnchor(QGraphicsView::AnchorViewCenter);
  setViewportUpdateMode(QGraphicsView::SmartViewportUpdate);
  setOptimizationFlags(QGraphicsView::DontSavePainterState |
                       QGraphicsView::DontAdjustForAntialiasing);
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  overview_ = new OverviewMap(this);
}

Canvas::~Canvas() = default;

void Canvas::SetScale(double s) {
  s = std::clamp(s, kMinScale, kMaxScale);
  QTransform t;
  t.scale(s, s);
  setTransform(t);
  ViewChanged();
}

void Canvas::ZoomBy(double factor, QPoint anchor) {
  double target = std::clamp(current_scale() * factor, kMinScale, kMaxScale);
  factor = target / current_scale();
  if (std::abs(factor - 1) < 1e-9) return;
  QPoint vp = anchor.x() < 0 ? viewport()->rect().center() : anchor;
  QPointF scene_pt = mapToScene(vp);
  ViewportAnchor old = transformationAnchor();
  setTransformationAnchor(QGraphicsView::NoAnchor);
  scale(factor, factor);
  // Put the anchor's scene point back under the anchor.
  QPointF moved = mapFromScene(scene_pt);
  QPointF delta = moved - QPointF(vp);
  horizontalScrollBar()->setValue(horizontalScrollBar()->value() + qRound(delta.x()));
  verticalScrollBar()->setValue(verticalScrollBar()->value() + qRound(delta.y()));
  setTransformationAnchor(old);
  ViewChanged();
}

QRectF Canvas::VisibleSceneRect() const { return mapToScene(viewport()->rect()).boundingRect(); }

void Canvas::wheelEvent(QWheelEvent* event) {
  if (event->modifiers() & Qt::ControlModifier) {
    double steps = event->angleDelta().y() / 120.0;
    if (steps != 0) ZoomBy(std::pow(1.2, steps), event->position().toPoint());
    event->accept();
    return;
  }
  QGraphicsView::wheelEvent(event);
}

void Canvas::paintEvent(QPaintEvent* event) {
  static const bool trace = qEnvironmentVariableIsSet("HLOWB_GRAPH_TRACE");
  QElapsedTimer t;
  if (trace) t.start();
  QGraphicsView::paintEvent(event);
  if (trace)
    qInfo("graph_view: canvas paint %.1f ms at scale %.3f", t.nsecsElapsed() / 1e6,
          current_scale());
  if (on_painted) on_painted();
}

void Canvas::drawBackground(QPainter* painter, const QRectF& rect) {
  QGraphicsView::drawBackground(painter, rect);
  if (auto* s = dynamic_cast<GraphScene*>(scene())) {
    double lod = QStyleOptionGraphicsItem::levelOfDetailFromTransform(painter->worldTransform());
    if (lod < s->far_lod()) s->DrawFar(painter, rect);
  }
}

void Canvas::mouseDoubleClickEvent(QMouseEvent* event) {
  auto* s = dynamic_cast<GraphScene*>(scene());
  if (s && event->button() == Qt::LeftButton) {
    int node = s->NodeAt(mapToScene(event->position().toPoint()));
    if (node >= 0) {
      s->NodeDoubleClicked(node);
      event->accept();
      return;
    }
  }
  QGraphicsView::mouseDoubleClickEvent(event);
}

void Canvas::contextMenuEvent(QContextMenuEvent* event) {
  if (!on_context_menu) {
    QGraphicsView::contextMenuEvent(event);
    return;
  }
  on_context_menu(event->globalPos(), mapToScene(event->pos()));
  event->accept();
}

void Canvas::scrollContentsBy(int dx, int dy) {
  QGraphicsView::scrollContentsBy(dx, dy);
  ViewChanged();
}

void Canvas::resizeEvent(QResizeEvent* event) {
  QGraphicsView::resizeEvent(event);
  ViewChanged();
}

void Canvas::keyPressEvent(QKeyEvent* event) {
  bool ctrl = event->modifiers() & Qt::ControlModifier;
  if (ctrl && (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Equal)) {
    ZoomBy(1.25);
  } else if (ctrl && event->key() == Qt::Key_Minus) {
    ZoomBy(0.8);
  } else if (ctrl && event->key() == Qt::Key_0) {
    if (on_fit) on_fit();
  } else if (event->key() == Qt::Key_F3) {
    if (on_find_again) on_find_again(event->modifiers() & Qt::ShiftModifier);
  } else {
    QGraphicsView::keyPressEvent(event);
    return;
  }
  event->accept();
}

void Canvas::ViewChanged() {
  if (!overview_) return;
  overview_->FitTo(viewport()->size());
  overview_->ViewChanged();
  if (overview_->isVisible()) PlaceOverview();
}

QRect Canvas::OverviewRectAt(int corner) const {
  const QRect vp = viewport()->geometry();
  const QSize size = overview_->size();
  const bool right = corner == 0 || corner == 1;
  const bool bottom = corner == 0 || corner == 2;
  return QRect(
      right ? vp.right() - size.width() - kOverviewMargin + 1 : vp.left() + kOverviewMargin,
      bottom ? vp.bottom() - size.height() - kOverviewMargin + 1 : vp.top() + kOverviewMargin,
      size.width(), size.height());
}

void Canvas::PlaceOverview() {
  // The corner whose nodes the overview would hide least: it stays where it is while that hides
  // nothing (no jumping about while the user scrolls), else it moves to the corner covering
  // the least node area (bottom right, top right, bottom left, top left on a tie).
  auto* s = dynamic_cast<GraphScene*>(scene());
  auto covered = [&](int corner) {
    if (s == nullptr) return 0.0;
    const QRect r = OverviewRectAt(corner).translated(-viewport()->geometry().topLeft());
    const QRectF area = mapToScene(r).boundingRect();
    double sum = 0;
    for (const NodeSpec& n : s->model().nodes) {
      if (n.frame || !n.rect.intersects(area)) continue;
      const QRectF overlap = n.rect.intersected(area);
      sum += overlap.width() * overlap.height();
    }
    return sum;
  };
  if (covered(overview_corner_) > 0) {
    double best = -1;
    int best_corner = overview_corner_;
    for (int corner = 0; corner < 4; ++corner) {
      const double c = covered(corner);
      if (best < 0 || c < best) {
        best = c;
        best_corner = corner;
      }
    }
    overview_corner_ = best_corner;
  }
  overview_->move(OverviewRectAt(overview_corner_).topLeft());
}

// OverviewMap ----------------------------------------------------------------------------------

OverviewMap::OverviewMap(Canvas* canvas) : QGraphicsView(canvas), canvas_(canvas) {
  setInteractive(false);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFrameShape(QFrame::Box);
  setCursor(Qt::PointingHandCursor);
  setToolTip(QObject::tr("Overview: click or drag to move the view"));
  setObjectName(QStringLiteral("overviewMap"));
  resize(kOverviewMax, kOverviewMax * 3 / 4);
  hide();
}

void OverviewMap::SetModel(std::shared_ptr<const SceneModel> model) {
  model_ = std::move(model);
  canvas_->ViewChanged();
}

void OverviewMap::FitTo(QSize canvas) {
  if (!model_ || model_->bounds.isEmpty()) return;
  // The graph's aspect, within kOverviewMax and a share of the canvas.
  const double max_w = std::max<double>(
      kOverviewMinSide * 2, std::min<double>(kOverviewMax, canvas.width() * kOverviewShare));
  const double max_h = std::max<double>(
      kOverviewMinSide * 2, std::min<double>(kOverviewMax, canvas.height() * kOverviewShare));
  const double aspect = model_->bounds.width() / model_->bounds.height();
  double w = max_w, h = max_w / aspect;
  if (h > max_h) {
    h = max_h;
    w = max_h * aspect;
  }
  const int frame = 2 * frameWidth();
  const QSize size(std::max(kOverviewMinSide, static_cast<int>(std::lround(w))) + frame,
                   std::max(kOverviewMinSide, static_cast<int>(std::lround(h))) + frame);
  if (size != this->size()) resize(size);
}

void OverviewMap::SetEnabled(bool enabled) {
  enabled_ = enabled;
  canvas_->ViewChanged();
}

void OverviewMap::ViewChanged() {
  bool show = enabled_ && model_ && !model_->thumbnail.isNull() &&
              !canvas_->VisibleSceneRect().contains(model_->bounds.adjusted(20, 20, -20, -20));
  if (show != isVisible()) setVisible(show);
  if (show) viewport()->update();
}

QRectF OverviewMap::ImageRect() const {
  QRectF area = viewport()->rect();
  if (!model_ || model_->thumbnail.isNull()) return area;
  QSizeF img = model_->thumbnail.size();
  QSizeF fitted = img.scaled(area.size(), Qt::KeepAspectRatio);
  return QRectF(area.center() - QPointF(fitted.width() / 2, fitted.height() / 2), fitted);
}

QPointF OverviewMap::ToScene(QPointF p) const {
  QRectF ir = ImageRect();
  const QRectF& b = model_->bounds;
  return QPointF(b.left() + (p.x() - ir.left()) / ir.width() * b.width(),
                 b.top() + (p.y() - ir.top()) / ir.height() * b.height());
}

void OverviewMap::paintEvent(QPaintEvent*) {
  QPainter p(viewport());
  p.fillRect(viewport()->rect(), palette().base());
  if (!model_ || model_->thumbnail.isNull()) return;
  QRectF ir = ImageRect();
  p.setRenderHint(QPainter::SmoothPixmapTransform, true);
  p.drawImage(ir, model_->thumbnail);
  // The canvas's visible rectangle in thumbnail coordinates.
  const QRectF& b = model_->bounds;
  QRectF v = canvas_->VisibleSceneRect().intersected(b);
  QRectF r(ir.left() + (v.left() - b.left()) / b.width() * ir.width(),
           ir.top() + (v.top() - b.top()) / b.height() * ir.height(),
           v.width() / b.width() * ir.width(), v.height() / b.height() * ir.height());
  // The selection's colour: red would read as "removed" next to a compared graph.
  const QColor frame = HighlightColor(Highlight::kSelected);
  QPen pen(frame);
  pen.setWidth(2);
  p.setPen(pen);
  QColor fill = frame;
  fill.setAlpha(40);
  p.setBrush(fill);
  if (r.width() < 3) r.adjust(-1.5, 0, 1.5, 0);
  if (r.height() < 3) r.adjust(0, -1.5, 0, 1.5);
  p.drawRect(r);
}

void OverviewMap::CenterCanvasAt(QPointF pos) {
  if (!model_) return;
  canvas_->centerOn(ToScene(pos));
}

void OverviewMap::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  dragging_ = true;
  CenterCanvasAt(event->position());
  event->accept();
}

void OverviewMap::mouseMoveEvent(QMouseEvent* event) {
  if (dragging_) CenterCanvasAt(event->position());
  event->accept();
}

void OverviewMap::mouseReleaseEvent(QMouseEvent* event) {
  dragging_ = false;
  event->accept();
}

void OverviewMap::wheelEvent(QWheelEvent* event) { event->accept(); }

}  // namespace hlowb::viewer::gv
