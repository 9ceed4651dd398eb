#include "viewer/text/hlo_text_editor.h"

#include <QAbstractTextDocumentLayout>
#include <QApplication>
#include <QContextMenuEvent>
#include <QFontDatabase>
#include <QPointer>
#include <QTextDocument>
#include <QKeyEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QScrollBar>
#include <QStyleHints>
#include <QTextBlock>

#include "viewer/text/hlo_highlighter.h"

namespace hlowb::viewer {
namespace {

class Gutter : public QWidget {
 public:
  explicit Gutter(HloTextEditor* editor) : QWidget(editor), editor_(editor) {
    setObjectName(QStringLiteral("hloTextGutter"));
    setCursor(Qt::ArrowCursor);
  }
  QSize sizeHint() const override { return QSize(editor_->GutterWidth(), 0); }

 protected:
  void paintEvent(QPaintEvent* event) override { editor_->PaintGutter(event); }
  void mousePressEvent(QMouseEvent* event) override { editor_->GutterPressed(event); }

 private:
  HloTextEditor* editor_;
};

QColor Blend(const QColor& a, const QColor& b, double t) {
  return QColor::fromRgbF(static_cast<float>(a.redF() * (1 - t) + b.redF() * t),
                          static_cast<float>(a.greenF() * (1 - t) + b.greenF() * t),
                          static_cast<float>(a.blueF() * (1 - t) + b.blueF() * t));
}

}  // namespace

HloTextEditor::HloTextEditor(QWidget* parent) : QPlainTextEdit(parent) {
  setReadOnly(true);
  setUndoRedoEnabled(false);
  setLineWrapMode(QPlainTextEdit::NoWrap);
  setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
  // HLO text is ASCII: skipping complex shaping makes laying out long lines cheaper (module
  // headers and tuple-typed instructions run to thousands of characters).
  QFont mono = QFontDatabase::systemFont(QFontDatabase::FixedFont);
  mono.setStyleStrategy(QFont::PreferNoShaping);
  setFont(mono);
  document()->setDefaultFont(mono);
  document()->setUndoRedoEnabled(false);
  highlighter_ = new HloHighlighter(document());
  highlighter_->setParent(this);  // outlives a replaced document
  highlighter_->SetPalette(palette());
  viewport()->setMouseTracking(true);
  gutter_ = new Gutter(this);
  connect(this, &QPlainTextEdit::blockCountChanged, this, [this] { UpdateGutterGeometry(); });
  connect(this, &QPlainTextEdit::updateRequest, this, [this](const QRect& rect, int dy) {
    if (dy != 0) {
      gutter_->scroll(0, dy);
    } else {
      gutter_->update(0, rect.y(), gutter_->width(), rect.height());
    }
  });
  UpdateGutterGeometry();
  since_follow_.invalidate();
}

HloTextEditor::~HloTextEditor() = default;

int HloTextEditor::GutterWidth() const {
  int digits = 1;
  for (int max = std::max(1, blockCount()); max >= 10; max /= 10) ++digits;
  const QFontMetrics fm(font());
  return 6 + fm.horizontalAdvance(QLatin1Char('9')) * std::max(digits, 3) + fm.height();
}

void HloTextEditor::UpdateGutterGeometry() {
  if (gutter_ == nullptr) return;  // during construction
  setViewportMargins(GutterWidth(), 0, 0, 0);
  const QRect cr = contentsRect();
  gutter_->setGeometry(QRect(cr.left(), cr.top(), GutterWidth(), cr.height()));
}

void HloTextEditor::RefreshDecorations() {
  UpdateGutterGeometry();
  if (gutter_ == nullptr) return;
  gutter_->update();
  viewport()->update();
}

void HloTextEditor::resizeEvent(QResizeEvent* event) {
  QPlainTextEdit::resizeEvent(event);
  UpdateGutterGeometry();
}

QTextBlock HloTextEditor::LastVisibleBlock(int bottom) const {
  QTextBlock block = firstVisibleBlock();
  QTextBlock last = block;
  const QPointF offset = contentOffset();
  while (block.isValid()) {
    if (block.isVisible()) {
      const QRectF r = blockBoundingGeometry(block).translated(offset);
      if (r.top() > bottom) break;
      last = block;
    }
    block = block.next();
  }
  return last;
}

void HloTextEditor::AdoptDocument(QTextDocument* document, HloHighlighter* highlighter) {
  QPointer<QTextDocument> old_document = this->document();
  HloHighlighter* old_highlighter = highlighter_;
  highlighter_ = highlighter;
  highlighter_->setParent(this);
  document->setParent(this);
  document->setUndoRedoEnabled(false);
  setDocument(document);
  old_highlighter->setDocument(nullptr);
  delete old_highlighter;
  if (old_document && old_document != document && old_document->parent() == this) {
    delete old_document.data();
  }
  UpdateGutterGeometry();
}

void HloTextEditor::paintEvent(QPaintEvent* event) {
  // Format exactly what is about to be painted (and nothing else).
  const QTextBlock first = firstVisibleBlock();
  if (first.isValid()) {
    highlighter_->EnsureHighlighted(first, LastVisibleBlock(viewport()->height()));
  }
  QPlainTextEdit::paintEvent(event);
  if (client_ == nullptr || !first.isValid()) return;

  // Fold markers after the closing line of folded computations.
  QPainter painter(viewport());
  const QPointF offset = contentOffset();
  const QFontMetrics fm(font());
  const QColor text = palette().color(QPalette::Text);
  const QColor base = palette().color(QPalette::Base);
  for (QTextBlock block = first; block.isValid(); block = block.next()) {
    if (!block.isVisible()) continue;
    const QRectF r = blockBoundingGeometry(block).translated(offset);
    if (r.top() > event->rect().bottom()) break;
    const QString marker = client_->MarkerAt(block.blockNumber());
    if (marker.isEmpty()) continue;
    const qreal x = r.left() + document()->documentMargin() +
                    fm.horizontalAdvance(block.text()) + fm.horizontalAdvance(QLatin1Char(' ')) * 2;
    const QRectF box(x, r.top() + 1, fm.horizontalAdvance(marker) + 12, fm.height());
    painter.setPen(Blend(text, base, 0.6));
    painter.setBrush(Blend(base, text, 0.08));
    painter.drawRoundedRect(box, 4, 4);
    painter.setPen(Blend(text, base, 0.35));
    painter.drawText(box, Qt::AlignCenter, marker);
  }
}

void HloTextEditor::PaintGutter(QPaintEvent* event) {
  QPainter painter(gutter_);
  const QColor base = palette().color(QPalette::Base);
  const QColor text = palette().color(QPalette::Text);
  painter.fillRect(event->rect(), Blend(base, text, 0.04));
  const QFontMetrics fm(font());
  painter.setFont(font());
  const int fold_width = fm.height();
  const int number_right = gutter_->width() - fold_width - 2;
  const int current = textCursor().blockNumber();
  QTextBlock block = firstVisibleBlock();
  const QPointF offset = contentOffset();
  for (; block.isValid(); block = block.next()) {
    if (!block.isVisible()) continue;
    const QRectF r = blockBoundingGeometry(block).translated(offset);
    if (r.top() > event->rect().bottom()) break;
    if (r.bottom() < event->rect().top()) continue;
    const int n = block.blockNumber();
    painter.setPen(n == current ? text : Blend(text, base, 0.55));
    painter.drawText(QRectF(0, r.top(), number_right, fm.height()), Qt::AlignRight,
                     QString::number(n + 1));
    if (client_ == nullptr) continue;
    const HloTextEditorClient::Fold fold = client_->FoldAt(n);
    if (fold == HloTextEditorClient::Fold::kNone) continue;
    // A small triangle: pointing down when expanded, right when folded.
    const qreal cx = number_right + 2 + fold_width / 2.0;
    const qreal cy = r.top() + fm.height() / 2.0;
    const qreal s = fold_width / 4.5;
    QPainterPath path;
    if (fold == HloTextEditorClient::Fold::kExpanded) {
      path.moveTo(cx - s, cy - s / 2);
      path.lineTo(cx + s, cy - s / 2);
      path.lineTo(cx, cy + s);
    } else {
      path.moveTo(cx - s / 2, cy - s);
      path.lineTo(cx + s, cy);
      path.lineTo(cx - s / 2, cy + s);
    }
    path.closeSubpath();
    painter.setPen(Qt::NoPen);
    painter.setBrush(Blend(text, base, 0.4));
    painter.drawPath(path);
  }
}

void HloTextEditor::GutterPressed(QMouseEvent* event) {
  if (client_ == nullptr || event->button() != Qt::LeftButton) return;
  const QPointF offset = contentOffset();
  const int y = static_cast<int>(event->position().y());
  for (QTextBlock block = firstVisibleBlock(); block.isValid(); block = block.next()) {
    if (!block.isVisible()) continue;
    const QRectF r = blockBoundingGeometry(block).translated(offset);
    if (r.top() > y) break;
    if (y < r.bottom()) {
      if (client_->FoldAt(block.blockNumber()) != HloTextEditorClient::Fold::kNone) {
        client_->ToggleFold(block.blockNumber());
      }
      return;
    }
  }
}

void HloTextEditor::mousePressEvent(QMouseEvent* event) {
  pressed_link_start_ = -1;
  if (client_ != nullptr && event->button() == Qt::BackButton) {
    client_->NavigateBack();
    event->accept();
    return;
  }
  if (client_ != nullptr && event->button() == Qt::ForwardButton) {
    client_->NavigateForward();
    event->accept();
    return;
  }
  int start = 0;
  int length = 0;
  if (client_ != nullptr && event->button() == Qt::LeftButton &&
      !(event->modifiers() & Qt::ShiftModifier)) {
    const int pos = cursorForPosition(event->position().toPoint()).position();
    if (client_->LinkAt(pos, &start, &length)) pressed_link_start_ = start;
  }
  holding_activation_ = pressed_link_start_ >= 0;
  QPlainTextEdit::mousePressEvent(event);
  holding_activation_ = false;
}

void HloTextEditor::mouseReleaseEvent(QMouseEvent* event) {
  QPlainTextEdit::mouseReleaseEvent(event);
  if (client_ == nullptr || pressed_link_start_ < 0) return;
  const int pressed = pressed_link_start_;
  pressed_link_start_ = -1;
  const int pos = cursorForPosition(event->position().toPoint()).position();
  int start = 0;
  int length = 0;
  if (event->button() == Qt::LeftButton && !textCursor().hasSelection() &&
      client_->LinkAt(pos, &start, &length) && start == pressed) {
    if (client_->FollowLink(pos)) {
      since_follow_.start();
      return;
    }
  }
  client_->CursorSettled();  // a drag that started on a link: an ordinary cursor move
}

void HloTextEditor::mouseDoubleClickEvent(QMouseEvent* event) {
  // The first click of a double click followed a link and moved the view; selecting a word
  // under the (now different) text would be surprising.
  if (since_follow_.isValid() &&
      since_follow_.elapsed() < QGuiApplication::styleHints()->mouseDoubleClickInterval()) {
    event->accept();
    return;
  }
  QPlainTextEdit::mouseDoubleClickEvent(event);
}

void HloTextEditor::mouseMoveEvent(QMouseEvent* event) {
  QPlainTextEdit::mouseMoveEvent(event);
  if (event->buttons() == Qt::NoButton) UpdateHover(event->position().toPoint());
}

void HloTextEditor::leaveEvent(QEvent* event) {
  QPlainTextEdit::leaveEvent(event);
  if (hover_start_ >= 0 && client_ != nullptr) client_->SetHoverLink(-1, 0);
  hover_start_ = -1;
  viewport()->setCursor(Qt::IBeamCursor);
}

void HloTextEditor::UpdateHover(const QPoint& pos) {
  if (client_ == nullptr) return;
  int start = -1;
  int length = 0;
  const QTextCursor c = cursorForPosition(pos);
  // Only over actual text: cursorForPosition snaps to the line end far right of it.
  const QRect rect = cursorRect(c);
  const bool near = std::abs(rect.center().x() - pos.x()) <= fontMetrics().averageCharWidth() * 2;
  if (!near || !client_->LinkAt(c.position(), &start, &length)) start = -1;
  if (start == hover_start_) return;
  hover_start_ = start;
  viewport()->setCursor(start >= 0 ? Qt::PointingHandCursor : Qt::IBeamCursor);
  client_->SetHoverLink(start, start >= 0 ? length : 0);
}

namespace {

bool IsFindKey(const QKeyEvent* event) {
  return event->matches(QKeySequence::Find) || event->matches(QKeySequence::FindNext) ||
         event->matches(QKeySequence::FindPrevious);
}

// Keys that navigate the text (follow a link, back, forward).
bool IsNavigationKey(const QKeyEvent* event) {
  const Qt::KeyboardModifiers mods = event->modifiers() & ~Qt::KeypadModifier;
  return (event->key() == Qt::Key_F2 && mods == Qt::NoModifier) ||
         ((event->key() == Qt::Key_Left || event->key() == Qt::Key_Right) &&
          mods == Qt::AltModifier);
}

}  // namespace

bool HloTextEditor::event(QEvent* event) {
  // Keep Ctrl+F / F3 / Shift+F3 (the view's own find bar), F2 and Alt+Left/Right while the
  // editor has focus, even when the window binds the same keys.
  if (event->type() == QEvent::ShortcutOverride && client_ != nullptr) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (IsFindKey(key) || IsNavigationKey(key)) {
      event->accept();
      return true;
    }
  }
  return QPlainTextEdit::event(event);
}

void HloTextEditor::keyPressEvent(QKeyEvent* event) {
  if (client_ != nullptr && IsFindKey(event)) {
    client_->FindKeyPressed(event->matches(QKeySequence::Find) ? HloTextEditorClient::FindKey::kOpen
                            : event->matches(QKeySequence::FindNext)
                                ? HloTextEditorClient::FindKey::kNext
                                : HloTextEditorClient::FindKey::kPrevious);
    event->accept();
    return;
  }
  if (client_ != nullptr) {
    const bool alt = event->modifiers() == Qt::AltModifier;
    if ((event->key() == Qt::Key_F2 || event->key() == Qt::Key_Return ||
         event->key() == Qt::Key_Enter) &&
        !(event->modifiers() & ~Qt::KeypadModifier)) {
      client_->FollowLink(textCursor().position());
      event->accept();
      return;
    }
    if (alt && event->key() == Qt::Key_Left) {
      client_->NavigateBack();
      event->accept();
      return;
    }
    if (alt && event->key() == Qt::Key_Right) {
      client_->NavigateForward();
      event->accept();
      return;
    }
  }
  QPlainTextEdit::keyPressEvent(event);
}

void HloTextEditor::contextMenuEvent(QContextMenuEvent* event) {
  QMenu* menu = createStandardContextMenu(event->pos());
  if (client_ != nullptr) {
    menu->addSeparator();
    client_->AddContextActions(menu, cursorForPosition(event->pos()).position());
  }
  menu->exec(event->globalPos());
  delete menu;
}

void HloTextEditor::changeEvent(QEvent* event) {
  QPlainTextEdit::changeEvent(event);
  if (gutter_ == nullptr) return;  // during construction
  if (event->type() == QEvent::PaletteChange) {
    highlighter_->SetPalette(palette());
    viewport()->update();
    gutter_->update();
  } else if (event->type() == QEvent::FontChange) {
    UpdateGutterGeometry();
  }
}

}  // namespace hlowb::viewer
