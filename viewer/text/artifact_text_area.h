// The read-only text pane of ArtifactView: a scroll area that lays out and highlights only the
// lines it paints, so a text of tens of megabytes (LLVM IR of a large model) costs nothing on
// the UI thread until it is scrolled to, and taking a new text or dropping the old one is O(1).
// A gutter shows line numbers. The cursor and selection work with mouse and keyboard (arrows,
// Page Up/Down, Home/End, Shift to extend, double-click selects a word, Ctrl+A, Ctrl+C).
//
// Links (names of the module's instructions and computations, see ArtifactHighlighter) are
// underlined; the mouse pointer becomes a hand over them, a tooltip shows what they name, and a
// plain left click on one (a press that turns into a drag selects text instead), Return or F2
// on one, or "Select in module" in the context menu emits linkActivated.
#ifndef HLOWB_VIEWER_TEXT_ARTIFACT_TEXT_AREA_H_
#define HLOWB_VIEWER_TEXT_ARTIFACT_TEXT_AREA_H_

#include <QAbstractScrollArea>
#include <QList>
#include <QString>
#include <QTextLayout>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "viewer/text/artifact_highlighter.h"
#include "viewer/text/artifact_loader.h"
#include "viewer/text/artifact_names.h"

namespace hlowb::viewer {

class ArtifactTextArea : public QAbstractScrollArea {
  Q_OBJECT

 public:
  enum class FindKey { kOpen, kNext, kPrevious };

  explicit ArtifactTextArea(QWidget* parent = nullptr);
  ~ArtifactTextArea() override;

  // Shows `text` (never null) highlighted as `syntax`, from the top, with no selection.
  void SetContent(std::shared_ptr<const ArtifactText> text, ArtifactSyntax syntax);
  const ArtifactText& content() const { return *text_; }
  ArtifactHighlighter* highlighter() const { return highlighter_; }
  // The names to link; the lines shown are formatted again.
  void SetNames(std::shared_ptr<const ArtifactNameIndex> names);

  // The cursor and selection, as positions in the text.
  int CursorPosition() const { return cursor_; }
  int AnchorPosition() const { return anchor_; }
  // Moves the cursor (keeping the anchor: extends the selection) and scrolls to it.
  void SetCursorPosition(int position, bool keep_anchor = false);
  // Selects [start, end) with the cursor at `end` and scrolls to it (centered when off screen).
  void SelectRange(int start, int end);
  QString SelectedText() const;
  void SelectAll();
  void CopySelection() const;

  // Scrolls so that `position` is shown; `center` puts its line in the middle when it was off
  // screen.
  void EnsureVisible(int position, bool center = false);
  int FirstVisibleLine() const;
  // Lines that fit in the viewport (the last may be partly visible).
  int VisibleLineCount() const;

  // The middle of the character at `position` in viewport coordinates (scroll there first).
  QPoint PointForPosition(int position) const;
  // The position nearest to a viewport point (between characters), or with `on_character` the
  // character under it (-1 when the point is past the end of its line).
  int PositionAt(const QPoint& point, bool on_character = false) const;

  // Search matches to mark: ascending start positions, each `length` long; `current` is the
  // index of the one marked as current (-1: none). Null clears them.
  void SetMatches(std::shared_ptr<const std::vector<int>> starts, int length, int current);
  // How many matches are marked on the lines in view.
  int MarkedMatchesInView() const;

  // The link covering `position` (its start and length as text positions), if any.
  std::optional<ArtifactLinkSpan> LinkAt(int position) const;
  // The links and formats of a display line (columns relative to the line's start).
  std::vector<ArtifactLinkSpan> LinksInLine(int line) const;
  QList<QTextLayout::FormatRange> LineFormats(int line) const;

  // Paints the gutter (called by the gutter widget).
  void PaintGutter(QPaintEvent* event);

 signals:
  // A link was followed; `position` is inside it.
  void linkActivated(int position);
  // Ctrl+F, F3 or Shift+F3 was pressed in the text.
  void findKeyPressed(hlowb::viewer::ArtifactTextArea::FindKey key);
  void cursorPositionChanged();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void scrollContentsBy(int dx, int dy) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void focusInEvent(QFocusEvent* event) override;
  void focusOutEvent(QFocusEvent* event) override;
  void changeEvent(QEvent* event) override;
  bool event(QEvent* event) override;
  bool viewportEvent(QEvent* event) override;

 private:
  QStringView LineText(int line) const;
  std::unique_ptr<QTextLayout> LayoutLine(int line, bool with_formats) const;
  int StateBefore(int line) const;
  void UpdateMetrics();
  void UpdateScrollBars();
  void UpdateGutterGeometry();
  int GutterWidth() const;
  int TextX() const;  // viewport x of column 0
  void UpdateHover(const QPoint& point);
  void MoveCursorTo(int position, bool keep_anchor, bool scroll);
  void SelectWordAt(int position);
  void FollowLinkAtCursor();

  std::shared_ptr<const ArtifactText> text_;
  ArtifactHighlighter* highlighter_ = nullptr;
  QWidget* gutter_ = nullptr;
  int cursor_ = 0;
  int anchor_ = 0;
  int preferred_column_ = -1;  // kept while moving up and down
  int line_height_ = 1;
  int char_width_ = 1;
  // Per-line formats of the lines painted, and line-end states of multi-line syntaxes (-1:
  // not known yet).
  mutable std::unordered_map<int, QList<QTextLayout::FormatRange>> format_cache_;
  mutable std::vector<int8_t> states_;
  std::shared_ptr<const std::vector<int>> matches_;
  int match_length_ = 0;
  int current_match_ = -1;
  int pressed_link_ = -1;  // text position of the link a press started on
  bool dragging_ = false;
  bool hover_link_ = false;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_ARTIFACT_TEXT_AREA_H_
