#include "viewer/text/artifact_text_area.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QHelpEvent>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QScrollBar>
#include <QTextOption>
#include <QThreadPool>
#include <QToolTip>
#include <algorithm>
#include <cmath>
#include <utility>

namespace hlowb::viewer {
namespace {

constexpr int kTextMargin = 4;            // pixels left of column 0
constexpr size_t kMaxCachedLines = 4000;  // formats kept for lines painted recently
constexpr int kStateLookBack = 2000;      // lines scanned back for a multi-line syntax state
constexpr int kMaxMatchesPerLine = 500;   // match marks drawn on one line

QColor Mix(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

bool IsWordChar(QChar c) { return c.isLetterOrNumber() || c == u'_' || c == u'.' || c == u'-'; }

class Gutter : public QWidget {
 public:
  explicit Gutter(ArtifactTextArea* area) : QWidget(area), area_(area) {
    setObjectName(QStringLiteral("artifactGutter"));
  }

 protected:
  void paintEvent(QPaintEvent* event) override { area_->PaintGutter(event); }

 private:
  ArtifactTextArea* area_;
};

bool IsFindKey(const QKeyEvent* e) {
  return e->matches(QKeySequence::Find) || e->matches(QKeySequence::FindNext) ||
         e->matches(QKeySequence::FindPrevious);
}

}  // namespace

ArtifactTextArea::ArtifactTextArea(QWidget* parent)
    : QAbstractScrollArea(parent), text_(std::make_shared<ArtifactText>()) {
  setObjectName(QStringLiteral("artifactTextArea"));
  highlighter_ = new ArtifactHighlighter(this);
  highlighter_->SetPalette(palette());
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleStrategy(QFont::PreferNoShaping);
  setFont(mono);
  setFocusPolicy(Qt::StrongFocus);
  viewport()->setCursor(Qt::IBeamCursor);
  viewport()->setMouseTracking(true);
  viewport()->setAutoFillBackground(false);
  gutter_ = new Gutter(this);
  UpdateMetrics();
}

ArtifactTextArea::~ArtifactTextArea() = default;

void ArtifactTextArea::SetContent(std::shared_ptr<const ArtifactText> text, ArtifactSyntax syntax) {
  // Freeing tens of megabytes of text is left to a worker thread.
  QThreadPool::globalInstance()->start([old = std::move(text_)]() mutable { old.reset(); });
  text_ = text ? std::move(text) : std::make_shared<ArtifactText>();
  highlighter_->SetSyntax(syntax);
  format_cache_.clear();
  states_.clear();
  if (highlighter_->HasMultiLineState()) {
    states_.assign(static_cast<size_t>(text_->LineCount()), int8_t{-1});
  }
  matches_.reset();
  current_match_ = -1;
  cursor_ = anchor_ = 0;
  preferred_column_ = -1;
  pressed_link_ = -1;
  dragging_ = false;
  UpdateGutterGeometry();
  UpdateScrollBars();
  verticalScrollBar()->setValue(0);
  horizontalScrollBar()->setValue(0);
  viewport()->update();
  gutter_->update();
  emit cursorPositionChanged();
}

void ArtifactTextArea::SetNames(std::shared_ptr<const ArtifactNameIndex> names) {
  highlighter_->SetNames(std::move(names));
  format_cache_.clear();
  viewport()->update();
}

QStringView ArtifactTextArea::LineText(int line) const {
  const int start = text_->LineStart(line);
  return QStringView(text_->text).mid(start, text_->LineEnd(line) - start);
}

int ArtifactTextArea::StateBefore(int line) const {
  if (states_.empty() || line <= 0) return 0;
  int known = line - 1;
  const int lowest = std::max(0, line - kStateLookBack);
  while (known >= lowest && states_[known] < 0) --known;
  int state = known >= lowest ? states_[known] : 0;
  for (int l = std::max(known + 1, lowest); l < line; ++l) {
    highlighter_->HighlightLine(LineText(l), state, &state, nullptr);
    states_[l] = static_cast<int8_t>(state);
  }
  return state;
}

QList<QTextLayout::FormatRange> ArtifactTextArea::LineFormats(int line) const {
  if (line < 0 || line >= text_->LineCount()) return {};
  auto it = format_cache_.find(line);
  if (it != format_cache_.end()) return it->second;
  if (format_cache_.size() >= kMaxCachedLines) format_cache_.clear();
  QList<QTextLayout::FormatRange> formats;
  int state = 0;
  highlighter_->HighlightLine(LineText(line), StateBefore(line), &state, &formats);
  if (!states_.empty()) states_[line] = static_cast<int8_t>(state);
  return format_cache_.emplace(line, std::move(formats)).first->second;
}

std::vector<ArtifactLinkSpan> ArtifactTextArea::LinksInLine(int line) const {
  if (line < 0 || line >= text_->LineCount()) return {};
  return highlighter_->LinksIn(LineText(line));
}

std::optional<ArtifactLinkSpan> ArtifactTextArea::LinkAt(int position) const {
  if (position < 0 || position >= text_->text.size()) return std::nullopt;
  const int line = text_->LineOf(position);
  const int column = position - text_->LineStart(line);
  for (const ArtifactLinkSpan& span : LinksInLine(line)) {
    if (column >= span.start && column < span.start + span.length) {
      ArtifactLinkSpan found = span;
      found.start += text_->LineStart(line);
      return found;
    }
  }
  return std::nullopt;
}

std::unique_ptr<QTextLayout> ArtifactTextArea::LayoutLine(int line, bool with_formats) const {
  auto layout = std::make_unique<QTextLayout>(LineText(line).toString(), font());
  QTextOption option;
  option.setWrapMode(QTextOption::NoWrap);
  option.setTabStopDistance(kArtifactTabWidth * char_width_);
  layout->setTextOption(option);
  layout->setCacheEnabled(true);
  if (with_formats) layout->setFormats(LineFormats(line));
  layout->beginLayout();
  QTextLine text_line = layout->createLine();
  if (text_line.isValid()) text_line.setPosition(QPointF(0, 0));
  layout->endLayout();
  return layout;
}

void ArtifactTextArea::UpdateMetrics() {
  const QFontMetrics fm(font());
  line_height_ = std::max(1, fm.height());
  char_width_ = std::max(1, fm.horizontalAdvance(QLatin1Char('0')));
  UpdateGutterGeometry();
  UpdateScrollBars();
}

int ArtifactTextArea::GutterWidth() const {
  int digits = 1;
  for (int max = std::max(1, text_->LineCount()); max >= 10; max /= 10) ++digits;
  return 12 + char_width_ * std::max(digits, 3);
}

void ArtifactTextArea::UpdateGutterGeometry() {
  if (gutter_ == nullptr) return;
  const int width = GutterWidth();
  setViewportMargins(width, 0, 0, 0);
  const QRect cr = contentsRect();
  gutter_->setGeometry(QRect(cr.left(), cr.top(), width, cr.height()));
}

void ArtifactTextArea::UpdateScrollBars() {
  const int height = viewport()->height();
  const int full_lines = std::max(1, height / line_height_);
  QScrollBar* v = verticalScrollBar();
  v->setRange(0, std::max(0, text_->LineCount() - full_lines));
  v->setPageStep(full_lines);
  v->setSingleStep(1);
  QScrollBar* h = horizontalScrollBar();
  const int content = kTextMargin * 2 + (text_->max_columns + 1) * char_width_;
  h->setRange(0, std::max(0, content - viewport()->width()));
  h->setPageStep(viewport()->width());
  h->setSingleStep(char_width_ * 2);
}

int ArtifactTextArea::TextX() const { return kTextMargin - horizontalScrollBar()->value(); }

int ArtifactTextArea::FirstVisibleLine() const { return verticalScrollBar()->value(); }

int ArtifactTextArea::VisibleLineCount() const {
  return std::max(1, (viewport()->height() + line_height_ - 1) / line_height_);
}

void ArtifactTextArea::resizeEvent(QResizeEvent* event) {
  QAbstractScrollArea::resizeEvent(event);
  UpdateGutterGeometry();
  UpdateScrollBars();
}

void ArtifactTextArea::scrollContentsBy(int, int) {
  viewport()->update();
  gutter_->update();
}

void ArtifactTextArea::paintEvent(QPaintEvent* event) {
  QPainter painter(viewport());
  const QRect rect = event->rect();
  const QPalette& pal = palette();
  painter.fillRect(rect, pal.color(QPalette::Base));
  painter.setPen(pal.color(QPalette::Text));
  const int first = FirstVisibleLine();
  const int count = text_->LineCount();
  const int cursor_line = text_->LineOf(cursor_);
  const int sel_start = std::min(cursor_, anchor_);
  const int sel_end = std::max(cursor_, anchor_);
  QTextCharFormat selection_format;
  selection_format.setBackground(pal.color(QPalette::Highlight));
  selection_format.setForeground(pal.color(QPalette::HighlightedText));
  QTextCharFormat match_format;
  match_format.setBackground(QColor(0xFF, 0xEE, 0x58));
  match_format.setForeground(QColor(0x21, 0x21, 0x21));
  QTextCharFormat current_format;
  current_format.setBackground(QColor(0xFF, 0x96, 0x32));
  current_format.setForeground(QColor(0x10, 0x10, 0x10));
  const QColor current_line = Mix(pal.color(QPalette::Base), pal.color(QPalette::Highlight), 0.10);
  const qreal x = TextX();

  for (int line = first + std::max(0, rect.top()) / line_height_; line < count; ++line) {
    const int y = (line - first) * line_height_;
    if (y > rect.bottom()) break;
    const int start = text_->LineStart(line);
    const int end = text_->LineEnd(line);
    if (line == cursor_line && sel_start == sel_end) {
      painter.fillRect(QRect(0, y, viewport()->width(), line_height_), current_line);
    }
    std::unique_ptr<QTextLayout> layout = LayoutLine(line, true);
    QList<QTextLayout::FormatRange> marks;
    if (matches_ && match_length_ > 0) {
      auto it = std::lower_bound(matches_->begin(), matches_->end(), start - match_length_ + 1);
      for (int drawn = 0;
           it != matches_->end() && *it < std::max(end, start + 1) && drawn < kMaxMatchesPerLine;
           ++it, ++drawn) {
        QTextLayout::FormatRange r;
        r.start = std::max(*it, start) - start;
        r.length = std::min(*it + match_length_, end) - start - r.start;
        const bool current = current_match_ >= 0 &&
                             static_cast<size_t>(current_match_) < matches_->size() &&
                             (*matches_)[current_match_] == *it;
        r.format = current ? current_format : match_format;
        if (r.length > 0) marks << r;
      }
    }
    if (sel_end > sel_start && sel_start <= end && sel_end >= start) {
      QTextLayout::FormatRange r;
      r.start = std::max(sel_start, start) - start;
      r.length = std::min(sel_end, end) - start - r.start;
      r.format = selection_format;
      if (r.length > 0) marks << r;
      if (sel_end > end && line + 1 < count) {
        // The selection goes on past the line end: mark the line break.
        const qreal w = layout->lineAt(0).naturalTextWidth();
        painter.fillRect(QRectF(x + w, y, char_width_, line_height_),
                         selection_format.background());
      }
    }
    layout->draw(&painter, QPointF(x, y), marks);
    if (line == cursor_line && hasFocus()) {
      layout->drawCursor(&painter, QPointF(x, y), cursor_ - start, 1);
    }
  }
}

void ArtifactTextArea::PaintGutter(QPaintEvent* event) {
  QPainter painter(gutter_);
  const QPalette& pal = palette();
  const QColor base = pal.color(QPalette::Base);
  const QColor text = pal.color(QPalette::Text);
  painter.fillRect(event->rect(), Mix(base, text, 0.04));
  painter.setFont(font());
  const int first = FirstVisibleLine();
  const int cursor_line = text_->LineOf(cursor_);
  const int right = gutter_->width() - 6;
  for (int line = first; line < text_->LineCount(); ++line) {
    const int y = (line - first) * line_height_;
    if (y > event->rect().bottom()) break;
    const int number = text_->SourceLine(line);
    painter.setPen(line == cursor_line ? text : Mix(text, base, 0.55));
    painter.drawText(QRect(0, y, right, line_height_), Qt::AlignRight | Qt::AlignVCenter,
                     number > 0 ? QString::number(number) : QStringLiteral("\u21aa"));
  }
}

QPoint ArtifactTextArea::PointForPosition(int position) const {
  position = std::clamp(position, 0, static_cast<int>(text_->text.size()));
  const int line = text_->LineOf(position);
  const int column = position - text_->LineStart(line);
  std::unique_ptr<QTextLayout> layout = LayoutLine(line, false);
  const QTextLine tl = layout->lineAt(0);
  const qreal left = tl.cursorToX(column);
  const qreal right = column < tl.textLength() ? tl.cursorToX(column + 1) : left + char_width_;
  return QPoint(static_cast<int>(TextX() + (left + right) / 2),
                (line - FirstVisibleLine()) * line_height_ + line_height_ / 2);
}

int ArtifactTextArea::PositionAt(const QPoint& point, bool on_character) const {
  const int count = text_->LineCount();
  const int row = static_cast<int>(std::floor(static_cast<double>(point.y()) / line_height_));
  const int line = std::clamp(FirstVisibleLine() + row, 0, count - 1);
  std::unique_ptr<QTextLayout> layout = LayoutLine(line, false);
  const QTextLine tl = layout->lineAt(0);
  const qreal x = point.x() - TextX();
  if (on_character) {
    if (row < 0 || FirstVisibleLine() + row >= count || x < 0 || x >= tl.naturalTextWidth()) {
      return -1;
    }
    return text_->LineStart(line) + tl.xToCursor(x, QTextLine::CursorOnCharacter);
  }
  return text_->LineStart(line) + tl.xToCursor(std::max<qreal>(x, 0));
}

void ArtifactTextArea::EnsureVisible(int position, bool center) {
  position = std::clamp(position, 0, static_cast<int>(text_->text.size()));
  const int line = text_->LineOf(position);
  QScrollBar* v = verticalScrollBar();
  const int full = std::max(1, viewport()->height() / line_height_);
  if (line < v->value() || line >= v->value() + full) {
    v->setValue(center ? line - full / 2 : (line < v->value() ? line : line - full + 1));
  }
  std::unique_ptr<QTextLayout> layout = LayoutLine(line, false);
  const int column = position - text_->LineStart(line);
  const qreal cx = layout->lineAt(0).cursorToX(column) + kTextMargin;
  QScrollBar* h = horizontalScrollBar();
  const int width = viewport()->width();
  if (cx < h->value() + kTextMargin) {
    h->setValue(static_cast<int>(cx) - (center ? width / 4 : kTextMargin * 4));
  } else if (cx > h->value() + width - char_width_ * 2) {
    h->setValue(static_cast<int>(cx) - (center ? width / 4 : width - char_width_ * 4));
  }
}

void ArtifactTextArea::MoveCursorTo(int position, bool keep_anchor, bool scroll) {
  position = std::clamp(position, 0, static_cast<int>(text_->text.size()));
  const int old_line = text_->LineOf(cursor_);
  const bool changed = position != cursor_ || (!keep_anchor && anchor_ != position);
  cursor_ = position;
  if (!keep_anchor) anchor_ = position;
  if (scroll) EnsureVisible(cursor_);
  if (!changed) return;
  viewport()->update();
  if (text_->LineOf(cursor_) != old_line) gutter_->update();
  emit cursorPositionChanged();
}

void ArtifactTextArea::SetCursorPosition(int position, bool keep_anchor) {
  preferred_column_ = -1;
  MoveCursorTo(position, keep_anchor, true);
}

void ArtifactTextArea::SelectRange(int start, int end) {
  preferred_column_ = -1;
  const int size = static_cast<int>(text_->text.size());
  anchor_ = std::clamp(start, 0, size);
  cursor_ = std::clamp(end, 0, size);
  EnsureVisible(cursor_, true);
  EnsureVisible(anchor_, true);
  viewport()->update();
  gutter_->update();
  emit cursorPositionChanged();
}

QString ArtifactTextArea::SelectedText() const {
  const int start = std::min(cursor_, anchor_);
  return text_->text.mid(start, std::abs(cursor_ - anchor_));
}

void ArtifactTextArea::SelectAll() {
  anchor_ = 0;
  cursor_ = static_cast<int>(text_->text.size());
  viewport()->update();
  emit cursorPositionChanged();
}

void ArtifactTextArea::CopySelection() const {
  if (cursor_ == anchor_) return;
  if (QClipboard* clipboard = QGuiApplication::clipboard()) clipboard->setText(SelectedText());
}

void ArtifactTextArea::SetMatches(std::shared_ptr<const std::vector<int>> starts, int length,
                                  int current) {
  matches_ = std::move(starts);
  match_length_ = length;
  current_match_ = current;
  viewport()->update();
}

int ArtifactTextArea::MarkedMatchesInView() const {
  if (!matches_ || matches_->empty() || match_length_ <= 0) return 0;
  const int first = FirstVisibleLine();
  const int last = std::min(text_->LineCount() - 1, first + VisibleLineCount() - 1);
  const int from = text_->LineStart(first);
  const int to = text_->LineEnd(last);
  auto lo = std::lower_bound(matches_->begin(), matches_->end(), from - match_length_ + 1);
  auto hi = std::lower_bound(matches_->begin(), matches_->end(), to);
  return static_cast<int>(hi - lo);
}

void ArtifactTextArea::UpdateHover(const QPoint& point) {
  const int position = PositionAt(point, true);
  const bool link = position >= 0 && LinkAt(position).has_value();
  if (link == hover_link_) return;
  hover_link_ = link;
  viewport()->setCursor(link ? Qt::PointingHandCursor : Qt::IBeamCursor);
}

void ArtifactTextArea::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) {
    QAbstractScrollArea::mousePressEvent(event);
    return;
  }
  const QPoint point = event->position().toPoint();
  const bool extend = (event->modifiers() & Qt::ShiftModifier) != 0;
  pressed_link_ = -1;
  if (!extend) {
    const int on = PositionAt(point, true);
    if (auto link = on >= 0 ? LinkAt(on) : std::nullopt) pressed_link_ = link->start;
  }
  dragging_ = true;
  preferred_column_ = -1;
  MoveCursorTo(PositionAt(point), extend, false);
}

void ArtifactTextArea::mouseMoveEvent(QMouseEvent* event) {
  const QPoint point = event->position().toPoint();
  if (dragging_ && (event->buttons() & Qt::LeftButton)) {
    // Dragging past the top or bottom scrolls.
    if (point.y() < 0) {
      verticalScrollBar()->setValue(verticalScrollBar()->value() - 1);
    } else if (point.y() > viewport()->height()) {
      verticalScrollBar()->setValue(verticalScrollBar()->value() + 1);
    }
    MoveCursorTo(PositionAt(point), true, false);
    return;
  }
  if (event->buttons() == Qt::NoButton) UpdateHover(point);
}

void ArtifactTextArea::mouseReleaseEvent(QMouseEvent* event) {
  dragging_ = false;
  const int pressed = std::exchange(pressed_link_, -1);
  if (event->button() != Qt::LeftButton || pressed < 0 || cursor_ != anchor_) return;
  const int on = PositionAt(event->position().toPoint(), true);
  const std::optional<ArtifactLinkSpan> link = on >= 0 ? LinkAt(on) : std::nullopt;
  if (link && link->start == pressed) emit linkActivated(on);
}

void ArtifactTextArea::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  SelectWordAt(PositionAt(event->position().toPoint(), true));
}

void ArtifactTextArea::SelectWordAt(int position) {
  if (position < 0 || position >= text_->text.size()) return;
  const QString& t = text_->text;
  const int line = text_->LineOf(position);
  const int line_start = text_->LineStart(line);
  const int line_end = text_->LineEnd(line);
  if (!IsWordChar(t[position])) return;
  int start = position;
  while (start > line_start && IsWordChar(t[start - 1])) --start;
  int end = position;
  while (end < line_end && IsWordChar(t[end])) ++end;
  anchor_ = start;
  cursor_ = end;
  viewport()->update();
  emit cursorPositionChanged();
}

void ArtifactTextArea::FollowLinkAtCursor() {
  for (int position : {cursor_, cursor_ - 1}) {
    if (LinkAt(position)) {
      emit linkActivated(position);
      return;
    }
  }
}

bool ArtifactTextArea::event(QEvent* event) {
  // The view's own find and copy keys win over window shortcuts while the text has focus.
  if (event->type() == QEvent::ShortcutOverride) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (IsFindKey(key) || key->matches(QKeySequence::Copy) ||
        key->matches(QKeySequence::SelectAll) || (key->key() == Qt::Key_F2 && !key->modifiers())) {
      event->accept();
      return true;
    }
  }
  return QAbstractScrollArea::event(event);
}

void ArtifactTextArea::keyPressEvent(QKeyEvent* event) {
  if (IsFindKey(event)) {
    emit findKeyPressed(event->matches(QKeySequence::Find)       ? FindKey::kOpen
                        : event->matches(QKeySequence::FindNext) ? FindKey::kNext
                                                                 : FindKey::kPrevious);
    return;
  }
  if (event->matches(QKeySequence::Copy)) {
    CopySelection();
    return;
  }
  if (event->matches(QKeySequence::SelectAll)) {
    SelectAll();
    return;
  }
  const bool extend = (event->modifiers() & Qt::ShiftModifier) != 0;
  const bool control = (event->modifiers() & Qt::ControlModifier) != 0;
  const int line = text_->LineOf(cursor_);
  const int column = cursor_ - text_->LineStart(line);
  auto vertical = [&](int lines) {
    if (preferred_column_ < 0) preferred_column_ = column;
    const int target = std::clamp(line + lines, 0, text_->LineCount() - 1);
    const int start = text_->LineStart(target);
    const int keep = preferred_column_;
    MoveCursorTo(std::min(start + keep, text_->LineEnd(target)), extend, true);
    preferred_column_ = keep;
  };
  switch (event->key()) {
    case Qt::Key_Left:
      SetCursorPosition(cursor_ - 1, extend);
      return;
    case Qt::Key_Right:
      SetCursorPosition(cursor_ + 1, extend);
      return;
    case Qt::Key_Up:
      vertical(-1);
      return;
    case Qt::Key_Down:
      vertical(1);
      return;
    case Qt::Key_PageUp:
      verticalScrollBar()->setValue(verticalScrollBar()->value() - verticalScrollBar()->pageStep());
      vertical(-verticalScrollBar()->pageStep());
      return;
    case Qt::Key_PageDown:
      verticalScrollBar()->setValue(verticalScrollBar()->value() + verticalScrollBar()->pageStep());
      vertical(verticalScrollBar()->pageStep());
      return;
    case Qt::Key_Home:
      SetCursorPosition(control ? 0 : text_->LineStart(line), extend);
      return;
    case Qt::Key_End:
      SetCursorPosition(control ? static_cast<int>(text_->text.size()) : text_->LineEnd(line),
                        extend);
      return;
    case Qt::Key_Return:
    case Qt::Key_Enter:
    case Qt::Key_F2:
      if (!(event->modifiers() & ~Qt::KeypadModifier)) {
        FollowLinkAtCursor();
        return;
      }
      break;
    default:
      break;
  }
  QAbstractScrollArea::keyPressEvent(event);
}

void ArtifactTextArea::contextMenuEvent(QContextMenuEvent* event) {
  QMenu menu(this);
  QAction* copy = menu.addAction(tr("Copy"));
  copy->setShortcut(QKeySequence::Copy);
  copy->setEnabled(cursor_ != anchor_);
  connect(copy, &QAction::triggered, this, [this] { CopySelection(); });
  QAction* all = menu.addAction(tr("Select All"));
  all->setShortcut(QKeySequence::SelectAll);
  connect(all, &QAction::triggered, this, [this] { SelectAll(); });
  const int on = PositionAt(viewport()->mapFrom(this, event->pos()), true);
  if (const std::optional<ArtifactLinkSpan> link = on >= 0 ? LinkAt(on) : std::nullopt) {
    menu.addSeparator();
    const QString name = text_->text.mid(link->start, link->length);
    QAction* select = menu.addAction(tr("Select %1 in the module").arg(name));
    connect(select, &QAction::triggered, this, [this, on] { emit linkActivated(on); });
  }
  menu.addSeparator();
  QAction* find = menu.addAction(tr("Find\u2026"));
  find->setShortcut(QKeySequence::Find);
  connect(find, &QAction::triggered, this, [this] { emit findKeyPressed(FindKey::kOpen); });
  menu.exec(event->globalPos());
}

void ArtifactTextArea::focusInEvent(QFocusEvent* event) {
  QAbstractScrollArea::focusInEvent(event);
  viewport()->update();
}

void ArtifactTextArea::focusOutEvent(QFocusEvent* event) {
  QAbstractScrollArea::focusOutEvent(event);
  viewport()->update();
}

void ArtifactTextArea::changeEvent(QEvent* event) {
  QAbstractScrollArea::changeEvent(event);
  if (event->type() == QEvent::PaletteChange) {
    highlighter_->SetPalette(palette());
    format_cache_.clear();
    viewport()->update();
    gutter_->update();
  } else if (event->type() == QEvent::FontChange) {
    UpdateMetrics();
    viewport()->update();
  }
}

bool ArtifactTextArea::viewportEvent(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    const auto* help = static_cast<QHelpEvent*>(event);
    const int on = PositionAt(help->pos(), true);
    const std::optional<ArtifactLinkSpan> link = on >= 0 ? LinkAt(on) : std::nullopt;
    if (link) {
      QToolTip::showText(help->globalPos(), ArtifactLinkToolTip(link->target), viewport());
    } else {
      QToolTip::hideText();
      event->ignore();
    }
    return true;
  }
  if (event->type() == QEvent::Leave && hover_link_) {
    hover_link_ = false;
    viewport()->setCursor(Qt::IBeamCursor);
  }
  return QAbstractScrollArea::viewportEvent(event);
}

}  // namespace hlowb::viewer
