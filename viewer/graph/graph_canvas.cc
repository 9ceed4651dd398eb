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
  QRect vp = viewport()->geometry();
  if (overview_) {
    QSize size = overview_->size();
    overview_->move(vp.right() - size.width() - kOverviewMargin,
                    vp.bottom() - size.height() - kOverviewMargin);
    overview_->ViewChanged();
  }
}

// OverviewMap ----------------------------------------------------------------------------------

OverviewMap::OverviewMap(Canvas* canvas) : QGraphicsView(canvas), canvas_(canvas) {
  setInteractive(false);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setFrameShape(QFrame::Box);
  setCursor(Qt::PointingHandCursor);
  setToolTip(QObject::tr("Overview: click or drag to move the view"));
  resize(kOverviewMax, kOverviewMax * 3 / 4);
  hide();
}

void OverviewMap::SetModel(std::shared_ptr<const SceneModel> model) {
  model_ = std::move(model);
  if (model_ && !model_->thumbnail.isNull()) {
    QSize img = model_->thumbnail.size();
    double s = std::min(static_cast<double>(kOverviewMax) / img.width(),
                        static_cast<double>(kOverviewMax) / img.height());
    resize(std::max(48, static_cast<int>(img.width() * s) + 2 * frameWidth()),
           std::max(36, static_cast<int>(img.height() * s) + 2 * frameWidth()));
  }
  ViewChanged();
}

void OverviewMap::SetEnabled(bool enabled) {
  enabled_ = enabled;
  ViewChanged();
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
