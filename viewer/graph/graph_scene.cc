#include "viewer/graph/graph_scene.h"

#include <QElapsedTimer>
#include <QFontMetricsF>
#include <QGraphicsSceneHoverEvent>
#include <QGraphicsSceneMouseEvent>
#include <QPainter>
#include <QStyleOptionGraphicsItem>
#include <algorithm>
#include <cmath>
#include <mutex>
#include <thread>
#include <unordered_set>

namespace hlowb::viewer::gv {

using graph::LayoutEdge;
using graph::LayoutGraph;
using graph::LayoutNode;
using graph::LayoutResult;

namespace {

constexpr double kPadX = 8;
constexpr double kPadY = 4;
constexpr double kLabelPixels = 12;
constexpr double kSmallPixels = 10;
constexpr double kArrowLength = 8;
constexpr double kArrowHalfWidth = 3.5;
// Below this level of detail (scene units to pixels) boxes are drawn flat.
constexpr double kFlatLod = 0.12;
// Text smaller than this many pixels is not drawn (unreadable, and the costliest part of a
// paint when thousands of nodes are in view).
constexpr double kMinTextPixels = 5.5;
// Full labels from this text size in pixels; below it, the title line only.
constexpr double kFullLabelPixels = 8;
// Arrowheads and "+" badges from this level of detail.
constexpr double kDetailLod = 0.25;
// Tiles with more curve length than this in device pixels are drawn without antialiasing.
constexpr double kMaxAntialiasedInk = 40000;
// Side of the squares edges are batched in (scene units).
constexpr double kTileSize = 512;

QColor Rgb(uint32_t c) { return QColor::fromRgb(c); }

// Pixels a bundle of width class k (BundleClass) adds to an edge's line.
double BundleWidth(int k) { return k < 0 ? 0.0 : 0.6 + 0.8 * k; }

// Highlights take hues the diff marks do not use (green added, orange changed, red removed),
// so that in compare mode a red, orange or green line always means what the diff says.
const QColor kSelectColor(0x29, 0x62, 0xFF);  // blue
const QColor kHoverColor(0x40, 0xA9, 0xFF);   // light blue: a preview of the selection
const QColor kInColor(0xAA, 0x00, 0xFF);      // violet: operands of the highlighted node
const QColor kOutColor(0x00, 0xB8, 0xD4);     // cyan: its users
// Search matches are filled like a text editor's find highlight, with dark text.
const QColor kSearchFill(0xFF, 0xEE, 0x58);
const QColor kSearchText(0x21, 0x21, 0x21);
const QColor kAddedColor(0x2E, 0xA0, 0x43);
const QColor kChangedColor(0xE3, 0x8B, 0x00);
const QColor kRemovedColor(0xD3, 0x2F, 0x2F);

QString Q(const std::string& s) { return QString::fromUtf8(s.data(), static_cast<int>(s.size())); }

// One curve segment, quantized, to find segments several edges share (bus chains of hubs).
struct SegmentKey {
  int64_t v[8];
  bool operator==(const SegmentKey& o) const { return std::equal(v, v + 8, o.v); }
};
struct SegmentHash {
  size_t operator()(const SegmentKey& k) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t x : k.v) {
      h ^= static_cast<uint64_t>(x);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

struct TileKey {
  int64_t x, y;
  bool operator==(const TileKey& o) const { return x == o.x && y == o.y; }
};
struct TileHash {
  size_t operator()(const TileKey& k) const { return std::hash<int64_t>()(k.x * 1000003 + k.y); }
};

struct Ctx {
  SceneModel* model;
  const graph::HloGraph* hlo;
  const QFontMetricsF* small;
  std::unordered_set<SegmentKey, SegmentHash> segments;
  std::unordered_map<TileKey, int, TileHash> tile_index;

  EdgeTile& TileAt(QPointF p) {
    TileKey key{static_cast<int64_t>(std::floor(p.x() / kTileSize)),
                static_cast<int64_t>(std::floor(p.y() / kTileSize))};
    auto [it, added] = tile_index.emplace(key, static_cast<int>(model->tiles.size()));
    if (added) model->tiles.emplace_back();
    return model->tiles[it->second];
  }
};

// Flattens one level (and its expanded clusters) into the model; returns each node's index.
std::vector<int> FlattenLevel(const LayoutGraph& g, const LayoutResult& r, QPointF off,
                              const QString& prefix, int depth, Ctx* ctx) {
  SceneModel& m = *ctx->model;
  std::vector<int> index(g.nodes.size(), -1);
  std::vector<std::vector<int>> child_index(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size() && i < r.nodes.size(); ++i) {
    const LayoutNode& ln = g.nodes[i];
    const graph::NodeBox& b = r.nodes[i];
    NodeSpec n;
    n.rect = QRectF(off.x() + b.left(), off.y() + b.top(), b.width, b.height);
    const graph::HloNodeInfo* info = ctx->hlo ? ctx->hlo->info(ln.tag) : nullptr;
    if (info) {
      n.instruction = info->instruction;
      n.role = info->role;
      n.path = Q(info->path);
    } else {
      n.path = prefix.isEmpty() ? Q(ln.key) : prefix + "/" + Q(ln.key);
      if (ln.tag == graph::kRemovedNodeTag) n.role = graph::HloNodeRole::kRemoved;
      if (ln.tag == graph::kPortNodeTag) {
        n.role = graph::HloNodeRole::kPort;
        n.port = true;
      }
    }
    n.fill = Rgb(ln.style.fill);
    n.stroke = Rgb(ln.style.stroke);
    n.text = Rgb(ln.style.text);
    n.shape = ln.style.shape;
    n.dashed = ln.style.dashed;
    n.bold_title = ln.style.bold_title;
    n.depth = depth;
    n.tooltip = Q(ln.tooltip);
    const LayoutResult* child =
        i < r.children.size() && r.children[i] ? r.children[i].get() : nullptr;
    n.frame = ln.expanded && ln.child != nullptr;
    n.expandable = ln.expandable && !n.frame;
    if (n.frame) {
      n.frame_title = Q(ln.cluster_title);
      QColor tint = n.fill;
      tint.setAlpha(60);
      n.fill = tint;
    } else {
      n.lines.reserve(ln.label.size());
      for (const std::string& line : ln.label) n.lines.push_back(Q(line));
    }
    int id = static_cast<int>(m.nodes.size());
    index[i] = id;
    if (!n.frame && !n.port) ++m.drawn_nodes;
    if (n.instruction) m.by_instruction[n.instruction].push_back(id);
    if (info) {
      for (const Instruction* inl : info->inlined) m.by_instruction[inl].push_back(id);
    }
    m.by_path.emplace(n.path.toStdString(), id);
    QString path = n.path;
    m.nodes.push_back(std::move(n));
    if (m.nodes.back().frame && child) {
      child_index[i] =
          FlattenLevel(*ln.child, *child, off + QPointF(b.content_origin.x, b.content_origin.y),
                       path, depth + 1, ctx);
    }
  }
  for (size_t e = 0; e < g.edges.size() && e < r.edges.size(); ++e) {
    const LayoutEdge& le = g.edges[e];
    const graph::EdgeRoute& route = r.edges[e];
    const std::vector<graph::Point>& pts = route.bezier.empty() ? route.points : route.bezier;
    if (pts.size() < 2 || le.src < 0 || le.dst < 0) continue;
    EdgeSpec es;
    es.src = index[le.src];
    es.dst = index[le.dst];
    if (!child_index[le.dst].empty()) {
      for (const graph::ClusterPort& p : g.nodes[le.dst].child->inputs) {
        if (p.operand == le.operand) {
          es.dst = child_index[le.dst][p.node];
          break;
        }
      }
    }
    if (!child_index[le.src].empty()) {
      const LayoutGraph& c = *g.nodes[le.src].child;
      const int out = c.OutputNode(le.src_port);
      if (out >= 0 && out < static_cast<int>(child_index[le.src].size())) {
        es.src = child_index[le.src][out];
      }
    }
    es.control = le.kind == graph::EdgeKind::kControl;
    es.count = std::max(1, le.count);
    const int bundle = es.control ? -1 : BundleClass(es.count);
    auto at = [&](size_t k) { return QPointF(pts[k].x + off.x(), pts[k].y + off.y()); };
    es.path.moveTo(at(0));
    auto quant = [](QPointF p) {
      return std::pair<int64_t, int64_t>(std::llround(p.x() * 4), std::llround(p.y() * 4));
    };
    // Whether no earlier edge has this segment (then this edge draws it into its tile).
    auto claim = [&](QPointF a, QPointF b, QPointF c, QPointF d) {
      SegmentKey key;
      auto [a0, a1] = quant(a);
      auto [b0, b1] = quant(b);
      auto [c0, c1] = quant(c);
      auto [d0, d1] = quant(d);
      int64_t v[8] = {a0, a1, b0, b1, c0, c1, d0, d1};
      std::copy(v, v + 8, key.v);
      return ctx->segments.insert(key).second;
    };
    bool bezier = !route.bezier.empty() && (pts.size() - 1) % 3 == 0;
    size_t step = bezier ? 3 : 1;
    for (size_t k = 1; k + step - 1 < pts.size(); k += step) {
      QPointF a = at(k - 1);
      QPointF b = at(k), c = bezier ? at(k + 1) : b, d = bezier ? at(k + 2) : b;
      if (bezier) {
        es.path.cubicTo(b, c, d);
      } else {
        es.path.lineTo(d);
      }
      if (!claim(a, b, c, d)) continue;
      EdgeTile& tile = ctx->TileAt((a + d) / 2);
      tile.ink += std::hypot(d.x() - a.x(), d.y() - a.y());
      QPainterPath& path = es.control    ? tile.control
                           : bundle >= 0 ? tile.bundles[bundle]
                                         : tile.data;
      if (path.elementCount() == 0 || path.currentPosition() != a) path.moveTo(a);
      if (bezier) {
        path.cubicTo(b, c, d);
      } else {
        path.lineTo(d);
      }
    }
    QPointF tip = at(pts.size() - 1);
    QPointF dir(0, 1);
    for (size_t k = pts.size() - 1; k-- > 0;) {
      QPointF d = tip - at(k);
      double len = std::hypot(d.x(), d.y());
      if (len > 0.5) {
        dir = d / len;
        break;
      }
    }
    QPointF perp(-dir.y(), dir.x());
    QPointF base = tip - dir * kArrowLength;
    es.arrow << tip << base + perp * kArrowHalfWidth << base - perp * kArrowHalfWidth;
    {
      EdgeTile& tile = ctx->TileAt(tip);
      QPainterPath& arrows = es.control ? tile.control_arrows : tile.data_arrows;
      arrows.addPolygon(es.arrow);
      arrows.closeSubpath();
    }
    es.bounds = es.path.controlPointRect().united(es.arrow.boundingRect());
    if (!le.label.empty()) {
      es.label = Q(le.label);
      es.label_pos = tip + QPointF(3, -4);
      double w = ctx->small->horizontalAdvance(es.label);
      es.bounds = es.bounds.united(QRectF(es.label_pos.x(), es.label_pos.y() - 10, w + 2, 13));
    }
    es.bounds.adjust(-3, -3, 3, 3);
    m.edges.push_back(std::move(es));
  }
  return index;
}

QImage Thumbnail(const SceneModel& m) {
  const double kMax = 320;
  double w = std::max(1.0, m.bounds.width()), h = std::max(1.0, m.bounds.height());
  double s = std::min(1.0, kMax / std::max(w, h));
  QImage img(std::max(1, static_cast<int>(std::ceil(w * s))),
             std::max(1, static_cast<int>(std::ceil(h * s))), QImage::Format_ARGB32_Premultiplied);
  img.fill(Qt::transparent);
  QPainter p(&img);
  p.scale(s, s);
  p.translate(-m.bounds.topLeft());
  for (const NodeSpec& n : m.nodes) {
    if (n.frame) p.fillRect(n.rect, n.fill);
  }
  QPen pen(QColor(0x90, 0xA4, 0xAE));
  pen.setCosmetic(true);
  pen.setWidth(0);
  p.setPen(pen);
  p.setBrush(Qt::NoBrush);
  for (const EdgeTile& t : m.tiles) {
    p.drawPath(t.data);
    p.drawPath(t.control);
    for (const QPainterPath& bundle : t.bundles) p.drawPath(bundle);
  }
  double min_side = 1.5 / s;
  for (const NodeSpec& n : m.nodes) {
    if (n.frame) continue;
    QRectF r = n.rect;
    if (r.width() < min_side) r.setWidth(min_side);
    if (r.height() < min_side) r.setHeight(min_side);
    QColor fill = n.fill;
    // White boxes disappear on a white overview: show them as their border color.
    if (fill.lightness() > 245) fill = QColor(0x78, 0x90, 0x9C);
    p.fillRect(r, fill);
  }
  return img;
}

// Fills `r` with `colors` as equal vertical stripes, left to right.
void FillStripes(QPainter* p, const QRectF& r, const std::vector<QColor>& colors) {
  const double w = r.width() / static_cast<double>(colors.size());
  for (size_t i = 0; i < colors.size(); ++i) {
    const double left = r.left() + w * static_cast<double>(i);
    // The last stripe ends at the box's edge whatever the rounding.
    const double right = i + 1 == colors.size() ? r.right() : left + w;
    p->fillRect(QRectF(left, r.top(), right - left, r.height()), colors[i]);
  }
}

void DrawFlat(QPainter* p, const SceneModel& m, double s, bool dark, const NodeFills* fills) {
  for (const NodeSpec& n : m.nodes) {
    if (n.frame) p->fillRect(n.rect, n.fill);
  }
  QPen pen(dark ? QColor(0xB0, 0xBE, 0xC5) : QColor(0x54, 0x6E, 0x7A));
  pen.setCosmetic(true);
  pen.setWidth(0);
  p->setPen(pen);
  p->setBrush(Qt::NoBrush);
  for (const EdgeTile& t : m.tiles) {
    p->drawPath(t.data);
    p->drawPath(t.control);
    for (const QPainterPath& bundle : t.bundles) p->drawPath(bundle);
  }
  double min_side = 1.0 / s;
  for (size_t i = 0; i < m.nodes.size(); ++i) {
    const NodeSpec& n = m.nodes[i];
    if (n.frame) continue;
    QRectF r = n.rect;
    if (r.width() < min_side) r.setWidth(min_side);
    if (r.height() < min_side) r.setHeight(min_side);
    if (fills != nullptr && i < fills->size() && !(*fills)[i].empty()) {
      FillStripes(p, r, (*fills)[i]);
      continue;
    }
    QColor fill = n.fill;
    if (fill.lightness() > 245) fill = dark ? QColor(0xCF, 0xD8, 0xDC) : QColor(0xB0, 0xBE, 0xC5);
    p->fillRect(r, fill);
  }
}

// Items -----------------------------------------------------------------------------------------

double Lod(QPainter* p) {
  return QStyleOptionGraphicsItem::levelOfDetailFromTransform(p->worldTransform());
}

class NodeItem final : public QGraphicsItem {
 public:
  enum { Type = UserType + 1 };
  int type() const override { return Type; }
  int index() const { return index_; }

  NodeItem(GraphScene* scene, int index) : scene_(scene), index_(index) {
    const NodeSpec& n = scene->model().nodes[index];
    bounds_ = n.rect.adjusted(-4, -4, 4, 4);
    if (n.frame) {
      setZValue(-10 + n.depth);
      setAcceptHoverEvents(false);
    } else {
      setZValue(10);
      setAcceptHoverEvents(!n.port);
    }
    setAcceptedMouseButtons(n.port ? Qt::NoButton : Qt::LeftButton);
    if (!n.tooltip.isEmpty()) setToolTip(n.tooltip);
  }
  QRectF boundingRect() const override { return bounds_; }
  // Hits only the box itself, not the margin kept for the selection outline.
  QPainterPath shape() const override {
    QPainterPath p;
    p.addRect(scene_->model().nodes[index_].rect);
    return p;
  }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    double lod = Lod(painter);
    uint8_t state = scene_->node_state(index_);
    // The far image has the colour mode's fills too.
    if ((state & ~0x40) == 0 && lod < scene_->far_lod()) return;  // in the far image
    PaintNode(painter, scene_->model().nodes[index_], scene_->fonts(), state, lod, scene_->dark(),
              scene_->text_cache(index_), scene_->heat(index_), scene_->fill(index_));
  }

 protected:
  void hoverEnterEvent(QGraphicsSceneHoverEvent*) override { scene_->SetHoveredNode(index_); }
  void hoverLeaveEvent(QGraphicsSceneHoverEvent*) override {
    if (scene_->hovered_node() == index_) scene_->SetHoveredNode(-1);
  }
  void mousePressEvent(QGraphicsSceneMouseEvent* event) override {
    // A press on a cluster frame pans the view; a press on a node selects it.
    if (scene_->model().nodes[index_].frame) {
      event->ignore();
      return;
    }
    event->accept();
    scene_->NodeClicked(index_);
  }

 private:
  GraphScene* scene_;
  int index_;
  QRectF bounds_;
};

class EdgeItem final : public QGraphicsItem {
 public:
  EdgeItem(GraphScene* scene, int index) : scene_(scene), index_(index) {
    setAcceptedMouseButtons(Qt::NoButton);
    setZValue(5);
  }
  QRectF boundingRect() const override { return scene_->model().edges[index_].bounds; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    double lod = Lod(painter);
    uint8_t state = scene_->edge_state(index_);
    if (state == 0 && lod < scene_->far_lod()) return;  // in the far image
    PaintEdge(painter, scene_->model().edges[index_], scene_->fonts(), state, lod, scene_->dark());
  }

 private:
  GraphScene* scene_;
  int index_;
};

class TileItem final : public QGraphicsItem {
 public:
  TileItem(GraphScene* scene, int index) : scene_(scene), index_(index) {
    setAcceptedMouseButtons(Qt::NoButton);
    setZValue(4);
  }
  QRectF boundingRect() const override { return scene_->model().tiles[index_].bounds; }
  void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
    double lod = Lod(painter);
    if (lod < scene_->far_lod()) return;  // in the far image
    PaintTile(painter, scene_->model().tiles[index_], lod, scene_->dark());
  }

 private:
  GraphScene* scene_;
  int index_;
};

int BspDepth(size_t items) {
  int d = static_cast<int>(std::ceil(std::log2(std::max<size_t>(items, 2))));
  return std::max(5, d);
}

}  // namespace

// Fonts and measuring ---------------------------------------------------------------------------

LabelFonts LabelFonts::FromDescription(const QString& description) {
  LabelFonts f;
  f.regular.fromString(description);
  f.regular.setPixelSize(static_cast<int>(kLabelPixels));
  f.regular.setStyleStrategy(QFont::PreferAntialias);
  f.bold = f.regular;
  f.bold.setBold(true);
  f.small = f.regular;
  f.small.setPixelSize(static_cast<int>(kSmallPixels));
  return f;
}

graph::TextMeasureFn MakeMeasureFn(const QString& font_description) {
  struct State {
    std::mutex mu;
    QString description;
    std::thread::id thread;
    std::unique_ptr<LabelFonts> fonts;
    std::unique_ptr<QFontMetricsF> regular, bold;
    // Widths by text: shapes and opcodes repeat across thousands of nodes.
    std::unordered_map<std::string, double> regular_widths, bold_widths;
  };
  auto st = std::make_shared<State>();
  st->description = font_description;
  return [st](const std::vector<std::string>& lines) -> std::pair<double, double> {
    std::lock_guard<std::mutex> lock(st->mu);
    if (!st->fonts || st->thread != std::this_thread::get_id()) {
      st->regular.reset();
      st->bold.reset();
      st->fonts = std::make_unique<LabelFonts>(LabelFonts::FromDescription(st->description));
      st->regular = std::make_unique<QFontMetricsF>(st->fonts->regular);
      st->bold = std::make_unique<QFontMetricsF>(st->fonts->bold);
      st->thread = std::this_thread::get_id();
      st->regular_widths.clear();
      st->bold_widths.clear();
    }
    double w = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      auto& cache = i == 0 ? st->bold_widths : st->regular_widths;
      auto it = cache.find(lines[i]);
      if (it == cache.end()) {
        const QFontMetricsF& fm = i == 0 ? *st->bold : *st->regular;
        it = cache.emplace(lines[i], fm.horizontalAdvance(Q(lines[i]))).first;
      }
      w = std::max(w, it->second);
    }
    double h = st->regular->lineSpacing() * static_cast<double>(std::max<size_t>(lines.size(), 1));
    return {std::max(40.0, std::ceil(w + 2 * kPadX)), std::ceil(h + 2 * kPadY)};
  };
}

// Model ----------------------------------------------------------------------------------------

std::shared_ptr<SceneModel> BuildSceneModel(const LayoutGraph& graph, const LayoutResult& result,
                                            const graph::HloGraph* hlo,
                                            const QString& font_description) {
  auto model = std::make_shared<SceneModel>();
  model->partial = result.partial;
  // Only the small font is needed here (edge label extents); built on this thread.
  LabelFonts fonts = LabelFonts::FromDescription(font_description);
  QFontMetricsF small(fonts.small);
  Ctx ctx{model.get(), hlo, &small, {}, {}};
  FlattenLevel(graph, result, QPointF(0, 0), QString(), 0, &ctx);
  SceneModel& m = *model;
  m.in_edges.resize(m.nodes.size());
  m.out_edges.resize(m.nodes.size());
  QRectF bounds;
  for (size_t e = 0; e < m.edges.size(); ++e) {
    const EdgeSpec& es = m.edges[e];
    if (es.src >= 0) m.out_edges[es.src].push_back(static_cast<int>(e));
    if (es.dst >= 0) m.in_edges[es.dst].push_back(static_cast<int>(e));
    bounds = bounds.united(es.bounds);
  }
  for (EdgeTile& t : m.tiles) {
    QRectF b = t.data.controlPointRect()
                   .united(t.control.controlPointRect())
                   .united(t.data_arrows.controlPointRect())
                   .united(t.control_arrows.controlPointRect());
    for (const QPainterPath& bundle : t.bundles) {
      if (!bundle.isEmpty()) b = b.united(bundle.controlPointRect());
    }
    t.bounds = b.adjusted(-4, -4, 4, 4);
  }
  for (const NodeSpec& n : m.nodes) bounds = bounds.united(n.rect);
  if (bounds.isEmpty()) bounds = QRectF(0, 0, 1, 1);
  m.bounds = bounds.adjusted(-24, -24, 24, 24);
  m.thumbnail = Thumbnail(m);
  return model;
}

FarImage RenderFarImage(const SceneModel& m, bool dark, int max_side, double max_pixels,
                        const NodeFills* fills) {
  FarImage far;
  double w = std::max(1.0, m.bounds.width()), h = std::max(1.0, m.bounds.height());
  double s = std::min({kFlatLod, max_side / w, max_side / h, std::sqrt(max_pixels / (w * h))});
  QImage img(std::max(1, static_cast<int>(std::ceil(w * s))),
             std::max(1, static_cast<int>(std::ceil(h * s))), QImage::Format_ARGB32_Premultiplied);
  if (img.isNull()) return far;
  img.fill(Qt::transparent);
  {
    QPainter p(&img);
    p.setRenderHint(QPainter::Antialiasing, true);
    p.scale(s, s);
    p.translate(-m.bounds.topLeft());
    DrawFlat(&p, m, s, dark, fills);
  }
  far.image = std::move(img);
  far.scale = s;
  return far;
}

// Painting -------------------------------------------------------------------------------------

int BundleClass(int count) { return count <= 1 ? -1 : count < 4 ? 0 : count < 16 ? 1 : 2; }

void PaintNode(QPainter* p, const NodeSpec& n, const LabelFonts& f, uint8_t state, double lod,
               bool dark, std::vector<QStaticText>* cache, const QColor* heat,
               const std::vector<QColor>* stripes) {
  const QRectF& r = n.rect;
  bool selected = state & 1;
  bool hovered = state & 2;
  const bool found = state & 0x20;
  if (stripes != nullptr && stripes->empty()) stripes = nullptr;
  if (found) {
    heat = &kSearchFill;
    stripes = nullptr;
  }
  if (stripes != nullptr && stripes->size() == 1) {
    heat = &stripes->front();
    stripes = nullptr;
  }
  if (n.frame) {
    p->setRenderHint(QPainter::Antialiasing, lod > 0.3);
    QPen pen(selected ? kSelectColor : n.stroke);
    pen.setCosmetic(true);
    pen.setWidthF(selected ? 3 : 1);
    pen.setStyle(Qt::DashLine);
    p->setPen(pen);
    p->setBrush(n.fill);
    p->drawRoundedRect(r, 8, 8);
    if (lod * kSmallPixels >= kMinTextPixels) {
      p->setFont(f.small);
      p->setPen(dark ? QColor(0xEC, 0xEF, 0xF1) : QColor(0x37, 0x47, 0x4F));
      QString title = QFontMetricsF(f.small).elidedText(n.frame_title, Qt::ElideRight,
                                                        std::max(0.0, r.width() - 16));
      p->drawText(QPointF(r.left() + 8, r.top() + 12), title);
    }
    return;
  }
  // A diff mark (bits 2-3 of the state: 1 added, 2 changed): a coloured band around the box;
  // the ghost of a removed instruction always has a red one.
  const int mark = n.role == graph::HloNodeRole::kRemoved ? 3 : (state >> 2) & 3;
  if (mark != 0) {
    const QColor band = DiffMarkColor(mark);
    const double grow = 4 / std::max(lod, 0.05);
    p->setRenderHint(QPainter::Antialiasing, lod >= kFlatLod);
    p->setPen(Qt::NoPen);
    p->setBrush(band);
    p->drawRoundedRect(r.adjusted(-grow, -grow, grow, grow), 7, 7);
  }
  if (lod < kFlatLod) {
    p->setRenderHint(QPainter::Antialiasing, false);
    if (selected || hovered) {
      double grow = 3 / std::max(lod, 0.01);
      p->fillRect(r.adjusted(-grow, -grow, grow, grow), selected ? kSelectColor : kHoverColor);
    }
    if (stripes != nullptr) {
      FillStripes(p, r, *stripes);
      return;
    }
    QColor fill = heat != nullptr ? *heat : n.fill;
    if (fill.lightness() > 245) fill = dark ? QColor(0xCF, 0xD8, 0xDC) : QColor(0xB0, 0xBE, 0xC5);
    p->fillRect(r, fill);
    return;
  }
  p->setRenderHint(QPainter::Antialiasing, true);
  QPen pen(selected ? kSelectColor : hovered ? kHoverColor : n.stroke);
  double width = selected ? 3 : hovered ? 2 : 1;
  pen.setCosmetic(true);
  pen.setWidthF(width * std::clamp(lod, 1.0, 2.0));
  if (n.dashed) pen.setStyle(Qt::DashLine);
  p->setPen(pen);
  if (stripes != nullptr) {
    // One stripe per tuple element, inside the box's outline (drawn over them).
    QPainterPath outline;
    if (n.shape == graph::NodeShape::kEllipse) {
      outline.addEllipse(r);
    } else if (n.shape == graph::NodeShape::kBox) {
      outline.addRect(r);
    } else {
      outline.addRoundedRect(r, 5, 5);
    }
    p->save();
    p->setClipPath(outline, Qt::IntersectClip);
    FillStripes(p, r, *stripes);
    p->restore();
    p->setBrush(Qt::NoBrush);
  } else {
    p->setBrush(heat != nullptr ? *heat : n.fill);
  }
  switch (n.shape) {
    case graph::NodeShape::kEllipse:
      p->drawEllipse(r);
      break;
    case graph::NodeShape::kBox:
      p->drawRect(r);
      break;
    case graph::NodeShape::kRoundedBox:
      p->drawRoundedRect(r, 5, 5);
      break;
  }
  if (n.expandable && lod >= kDetailLod) {
    // A "+" badge: double-click expands the cluster in place.
    QRectF badge(r.right() - 13, r.top() + 3, 10, 10);
    QPen bp(n.text);
    bp.setWidthF(1.2);
    p->setPen(bp);
    p->setBrush(Qt::NoBrush);
    p->drawRect(badge);
    p->drawLine(QPointF(badge.left() + 2, badge.center().y()),
                QPointF(badge.right() - 2, badge.center().y()));
    p->drawLine(QPointF(badge.center().x(), badge.top() + 2),
                QPointF(badge.center().x(), badge.bottom() - 2));
  }
  if (lod * kLabelPixels < kMinTextPixels || n.lines.empty()) return;
  // Colour-mode fills are pale: dark text reads on all of them.
  const bool mode_fill = (state & 0x40) != 0;
  p->setPen(found || mode_fill ? kSearchText : n.text);
  double line = (r.height() - 2 * kPadY) / static_cast<double>(n.lines.size());
  // Small text: the title alone (the other lines cannot be read yet and cost the most).
  size_t shown = lod * kLabelPixels < kFullLabelPixels ? 1 : n.lines.size();
  if (shown == 1 && n.lines.size() > 1) {
    p->setFont(n.bold_title ? f.bold : f.regular);
    p->drawText(QRectF(r.left() + 2, r.top(), r.width() - 4, r.height()),
                Qt::AlignCenter | Qt::TextSingleLine, n.lines[0]);
    return;
  }
  if (cache && cache->size() != n.lines.size()) {
    cache->clear();
    for (const QString& text : n.lines) {
      QStaticText st(text);
      st.setTextFormat(Qt::PlainText);
      cache->push_back(std::move(st));
    }
  }
  for (size_t i = 0; i < shown; ++i) {
    const QFont& font = i == 0 && n.bold_title ? f.bold : f.regular;
    p->setFont(font);
    double top = r.top() + kPadY + line * static_cast<double>(i);
    if (cache) {
      QStaticText& st = (*cache)[i];
      if (st.size().isEmpty()) st.prepare(QTransform(), font);
      QSizeF size = st.size();
      p->drawStaticText(
          QPointF(r.left() + (r.width() - size.width()) / 2, top + (line - size.height()) / 2), st);
    } else {
      QRectF lr(r.left() + 2, top, r.width() - 4, line);
      p->drawText(lr, Qt::AlignHCenter | Qt::AlignVCenter | Qt::TextSingleLine, n.lines[i]);
    }
  }
}

QColor HighlightColor(Highlight highlight) {
  switch (highlight) {
    case Highlight::kSelected: return kSelectColor;
    case Highlight::kHovered: return kHoverColor;
    case Highlight::kOperandEdge: return kInColor;
    case Highlight::kUserEdge: return kOutColor;
  }
  return kSelectColor;
}

QColor DiffMarkColor(int mark) {
  return mark == 1 ? kAddedColor : mark == 2 ? kChangedColor : kRemovedColor;
}

QColor EdgeColor(uint8_t state, bool control, bool dark) {
  return state == 1   ? kInColor
         : state == 2 ? kOutColor
         : control    ? QColor(0x9E, 0x9E, 0x9E)
         : dark       ? QColor(0xB0, 0xBE, 0xC5)
                      : QColor(0x54, 0x6E, 0x7A);
}

void PaintEdge(QPainter* p, const EdgeSpec& e, const LabelFonts& f, uint8_t state, double lod,
               bool dark) {
  QColor color = EdgeColor(state, e.control, dark);
  if (state != 0) {
    p->setRenderHint(QPainter::Antialiasing, lod >= kFlatLod);
    QPen pen(color);
    pen.setCosmetic(true);
    pen.setWidthF(std::clamp(2 * lod, 2.0, 4.0) + BundleWidth(BundleClass(e.count)));
    if (e.control) pen.setStyle(Qt::DotLine);
    p->setPen(pen);
    p->setBrush(Qt::NoBrush);
    p->drawPath(e.path);
    if (lod >= kDetailLod) {
      p->setPen(Qt::NoPen);
      p->setBrush(color);
      p->drawPolygon(e.arrow);
    }
  }
  if (!e.label.isEmpty() && lod * kSmallPixels >= kMinTextPixels) {
    p->setFont(f.small);
    p->setPen(state ? color : dark ? QColor(0xCF, 0xD8, 0xDC) : QColor(0x37, 0x47, 0x4F));
    p->drawText(e.label_pos, e.label);
  }
}

void PaintTile(QPainter* p, const EdgeTile& t, double lod, bool dark) {
  p->setRenderHint(QPainter::Antialiasing, lod >= kFlatLod && t.ink * lod < kMaxAntialiasedInk);
  QPen pen(EdgeColor(0, false, dark));
  pen.setCosmetic(true);
  pen.setWidthF(std::clamp(lod, 1.0, 2.0));
  p->setBrush(Qt::NoBrush);
  if (!t.data.isEmpty()) {
    p->setPen(pen);
    p->drawPath(t.data);
  }
  for (int k = 0; k < 3; ++k) {
    if (t.bundles[k].isEmpty()) continue;
    QPen thick = pen;
    thick.setWidthF(pen.widthF() + BundleWidth(k));
    p->setPen(thick);
    p->drawPath(t.bundles[k]);
  }
  if (!t.control.isEmpty()) {
    pen.setColor(EdgeColor(0, true, dark));
    pen.setStyle(Qt::DotLine);
    p->setPen(pen);
    p->drawPath(t.control);
  }
  if (lod < kDetailLod) return;
  p->setPen(Qt::NoPen);
  if (!t.data_arrows.isEmpty()) {
    p->setBrush(EdgeColor(0, false, dark));
    p->drawPath(t.data_arrows);
  }
  if (!t.control_arrows.isEmpty()) {
    p->setBrush(EdgeColor(0, true, dark));
    p->drawPath(t.control_arrows);
  }
}

// Scene ----------------------------------------------------------------------------------------

GraphScene::GraphScene(std::shared_ptr<const SceneModel> model, const QString& font_description,
                       QObject* parent)
    : QGraphicsScene(parent),
      model_(std::move(model)),
      fonts_(LabelFonts::FromDescription(font_description)) {
  size_t total = model_->nodes.size() + model_->edges.size() + model_->tiles.size();
  setItemIndexMethod(QGraphicsScene::BspTreeIndex);
  setBspTreeDepth(BspDepth(total));
  setSceneRect(model_->bounds);
  items_.assign(total, nullptr);
  node_state_.assign(model_->nodes.size(), 0);
  text_cache_.resize(model_->nodes.size());
  edge_state_.assign(model_->edges.size(), 0);
  populated_ = total == 0;
}

GraphScene::~GraphScene() = default;

bool GraphScene::PopulateSome(double budget_ms) {
  if (populated_) return true;
  QElapsedTimer timer;
  timer.start();
  const size_t nodes = model_->nodes.size();
  const size_t edges = model_->edges.size();
  const size_t tiles = model_->tiles.size();
  int count = 0;
  while (next_node_ < nodes || next_tile_ < tiles || next_edge_ < edges) {
    QGraphicsItem* item;
    size_t slot;
    if (next_node_ < nodes) {
      slot = next_node_;
      item = new NodeItem(this, static_cast<int>(next_node_++));
    } else if (next_tile_ < tiles) {
      slot = nodes + edges + next_tile_;
      item = new TileItem(this, static_cast<int>(next_tile_++));
    } else {
      slot = nodes + next_edge_;
      item = new EdgeItem(this, static_cast<int>(next_edge_++));
    }
    addItem(item);
    items_[slot] = item;
    if ((++count & 31) == 0 && timer.nsecsElapsed() > budget_ms * 0.6e6) break;
  }
  // Index the new items now (a lookup does), a slice at a time, instead of all at once in the
  // first paint.
  items(QRectF(model_->bounds.topLeft(), QSizeF(1, 1)));
  populated_ = next_node_ >= nodes && next_tile_ >= tiles && next_edge_ >= edges;
  return populated_;
}

bool GraphScene::DepopulateSome(double budget_ms) {
  if (itemIndexMethod() != QGraphicsScene::NoIndex) setItemIndexMethod(QGraphicsScene::NoIndex);
  QElapsedTimer timer;
  timer.start();
  int count = 0;
  while (!items_.empty()) {
    QGraphicsItem* item = items_.back();
    items_.pop_back();
    delete item;  // may be null: never created
    if ((++count & 31) == 0 && timer.nsecsElapsed() > budget_ms * 1e6) break;
  }
  return items_.empty();
}

void GraphScene::SetSelectedNodes(const std::vector<int>& nodes) {
  for (int n : selected_) {
    node_state_[n] &= ~1;
    if (static_cast<size_t>(n) < items_.size() && items_[n]) items_[n]->update();
  }
  selected_.clear();
  for (int n : nodes) {
    if (n < 0 || static_cast<size_t>(n) >= model_->nodes.size()) continue;
    selected_.push_back(n);
    node_state_[n] |= 1;
    if (items_[n]) items_[n]->update();
  }
  RecomputeEdgeStates();
}

void GraphScene::UpdateNodes(const std::vector<int>& nodes) {
  // Each item update adds a rectangle to the views' next paint region, and painting a large
  // graph clipped to a region of a hundred rectangles takes several times as long as painting
  // all of it (about 300 ms against 30 for 3,500 recoloured nodes of a 4,500-node graph): past a
  // few dozen nodes, one update of the whole scene.
  constexpr size_t kWholeSceneAbove = 64;
  if (nodes.size() > kWholeSceneAbove) {
    update();
    return;
  }
  for (int n : nodes) {
    if (static_cast<size_t>(n) < items_.size() && items_[n]) items_[n]->update();
  }
}

void GraphScene::SetDiffMarks(const std::vector<uint8_t>& marks) {
  std::vector<int> changed;
  for (size_t n = 0; n < node_state_.size(); ++n) {
    const uint8_t mark = n < marks.size() ? static_cast<uint8_t>(marks[n] & 3) : 0;
    const uint8_t state = static_cast<uint8_t>((node_state_[n] & ~0x0C) | (mark << 2));
    if (state == node_state_[n]) continue;
    node_state_[n] = state;
    changed.push_back(static_cast<int>(n));
  }
  UpdateNodes(changed);
}

void GraphScene::SetSearchMatches(const std::vector<uint8_t>& matches) {
  std::vector<int> changed;
  for (size_t n = 0; n < node_state_.size(); ++n) {
    const bool on = n < matches.size() && matches[n] != 0;
    const uint8_t state = static_cast<uint8_t>((node_state_[n] & ~0x20) | (on ? 0x20 : 0));
    if (state == node_state_[n]) continue;
    node_state_[n] = state;
    changed.push_back(static_cast<int>(n));
  }
  UpdateNodes(changed);
}

void GraphScene::SetHeat(const std::vector<QColor>& colors) {
  std::vector<int> changed;
  heat_.assign(node_state_.size(), QColor());
  for (size_t n = 0; n < node_state_.size(); ++n) {
    const bool has = n < colors.size() && colors[n].isValid();
    if (has) heat_[n] = colors[n];
    const uint8_t state = static_cast<uint8_t>((node_state_[n] & ~0x10) | (has ? 0x10 : 0));
    if (state == node_state_[n] && !has) continue;
    node_state_[n] = state;
    changed.push_back(static_cast<int>(n));
  }
  UpdateNodes(changed);
}

void GraphScene::SetFills(NodeFills fills) {
  fills.resize(node_state_.size());
  bool any_before = false, any_now = false;
  for (const auto& f : fills_) any_before = any_before || !f.empty();
  for (const auto& f : fills) any_now = any_now || !f.empty();
  if (!any_before && !any_now) return;
  fills_ = std::move(fills);
  ++fills_version_;
  for (size_t n = 0; n < node_state_.size(); ++n) {
    const bool has = !fills_[n].empty();
    node_state_[n] = static_cast<uint8_t>((node_state_[n] & ~0x40) | (has ? 0x40 : 0));
  }
  // The far image has the old fills: items draw themselves until one with these comes.
  far_ = FarImage();
  far_lod_ = 0;
  update();
}

std::vector<uint8_t> GraphScene::LastingNodeStates() const {
  std::vector<uint8_t> states(node_state_.size());
  for (size_t n = 0; n < states.size(); ++n) states[n] = node_state_[n] & ~0x03;
  return states;
}

void GraphScene::SetHoveredNode(int node) {
  if (node == hovered_) return;
  if (hovered_ >= 0) {
    node_state_[hovered_] &= ~2;
    if (items_[hovered_]) items_[hovered_]->update();
  }
  hovered_ = node;
  if (hovered_ >= 0) {
    node_state_[hovered_] |= 2;
    if (items_[hovered_]) items_[hovered_]->update();
  }
  RecomputeEdgeStates();
}

void GraphScene::RecomputeEdgeStates() {
  const size_t nodes = model_->nodes.size();
  std::vector<uint8_t> next(edge_state_.size(), 0);
  // The hovered node's edges, else the selection's.
  std::vector<int> focus;
  if (hovered_ >= 0) {
    focus.push_back(hovered_);
  } else {
    focus = selected_;
  }
  for (int n : focus) {
    for (int e : model_->in_edges[n]) next[e] = 1;
    for (int e : model_->out_edges[n]) next[e] = 2;
  }
  for (size_t e = 0; e < next.size(); ++e) {
    if (next[e] == edge_state_[e]) continue;
    edge_state_[e] = next[e];
    QGraphicsItem* item = nodes + e < items_.size() ? items_[nodes + e] : nullptr;
    if (item) {
      item->setZValue(next[e] ? 6 : 5);
      item->update();
    }
  }
}

void GraphScene::SetDark(bool dark) {
  if (dark == dark_) return;
  dark_ = dark;
  // The far image has the other palette's colors: items draw themselves until a new one comes.
  far_ = FarImage();
  far_lod_ = 0;
  update();
}

void GraphScene::SetFarImage(FarImage far) {
  if (far.fills_version != fills_version_) return;
  far_ = std::move(far);
  // Use it while it is no sharper than the view (below its own scale, and never above the level
  // where items start drawing text).
  far_lod_ = far_.image.isNull() ? 0 : std::min(far_.scale, kFlatLod);
  update();
}

void GraphScene::DrawFar(QPainter* p, const QRectF& exposed) const {
  if (far_.image.isNull()) return;
  const QRectF& b = model_->bounds;
  double s = far_.scale;
  QRectF src((exposed.left() - b.left()) * s, (exposed.top() - b.top()) * s, exposed.width() * s,
             exposed.height() * s);
  src = src.intersected(QRectF(QPointF(0, 0), QSizeF(far_.image.size())));
  if (src.isEmpty()) return;
  QRectF target(b.left() + src.left() / s, b.top() + src.top() / s, src.width() / s,
                src.height() / s);
  p->save();
  p->setRenderHint(QPainter::SmoothPixmapTransform, true);
  p->drawImage(target, far_.image, src);
  p->restore();
}

int GraphScene::NodeAt(QPointF scene_pos) const {
  int frame = -1;
  for (QGraphicsItem* item : items(scene_pos)) {  // topmost first
    if (item->type() != NodeItem::Type) continue;
    int n = static_cast<NodeItem*>(item)->index();
    if (!model_->nodes[n].frame) return n;
    if (frame < 0 || model_->nodes[n].depth > model_->nodes[frame].depth) frame = n;
  }
  return frame;
}

bool GraphScene::event(QEvent* event) {
  if (event->type() == QEvent::WindowActivate || event->type() == QEvent::WindowDeactivate) {
    return true;
  }
  return QGraphicsScene::event(event);
}

void GraphScene::NodeClicked(int node) {
  if (callbacks_.clicked) callbacks_.clicked(node);
}

void GraphScene::NodeDoubleClicked(int node) {
  if (callbacks_.double_clicked) callbacks_.double_clicked(node);
}

void PaintSceneModel(QPainter* painter, const SceneModel& model, const LabelFonts& fonts,
                     bool dark, double lod, const std::vector<uint8_t>* node_states,
                     const std::vector<QColor>* heat, const NodeFills* fills) {
  auto state_of = [&](size_t n) -> uint8_t {
    return node_states != nullptr && n < node_states->size() ? (*node_states)[n] : 0;
  };
  auto heat_of = [&](size_t n) -> const QColor* {
    return heat != nullptr && n < heat->size() && (*heat)[n].isValid() ? &(*heat)[n] : nullptr;
  };
  // The scene's z order: frames by depth, then edge tiles, edges, nodes.
  std::vector<int> frames;
  for (int i = 0; i < static_cast<int>(model.nodes.size()); ++i) {
    if (model.nodes[i].frame) frames.push_back(i);
  }
  std::stable_sort(frames.begin(), frames.end(),
                   [&](int a, int b) { return model.nodes[a].depth < model.nodes[b].depth; });
  for (int i : frames) PaintNode(painter, model.nodes[i], fonts, state_of(i), lod, dark);
  for (const EdgeTile& t : model.tiles) PaintTile(painter, t, lod, dark);
  for (const EdgeSpec& e : model.edges) PaintEdge(painter, e, fonts, 0, lod, dark);
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    const NodeSpec& n = model.nodes[i];
    if (n.frame) continue;
    const std::vector<QColor>* fill =
        fills != nullptr && i < fills->size() && !(*fills)[i].empty() ? &(*fills)[i] : nullptr;
    PaintNode(painter, n, fonts, state_of(i), lod, dark, nullptr, heat_of(i), fill);
  }
}

}  // namespace hlowb::viewer::gv
