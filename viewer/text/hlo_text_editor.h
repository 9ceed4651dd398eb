// The read-only editor inside HloTextView: a QPlainTextEdit with a gutter (line numbers and
// fold markers), lazy syntax highlighting of the blocks about to be painted, a "… N
// instructions" marker after folded computations, and mouse handling for links. What a link
// is and what following one does is the client's business (HloTextView's implementation).
#ifndef HLOWB_VIEWER_TEXT_HLO_TEXT_EDITOR_H_
#define HLOWB_VIEWER_TEXT_HLO_TEXT_EDITOR_H_

#include <QElapsedTimer>
#include <QPlainTextEdit>
#include <QString>

class QMenu;

namespace hlowb::viewer {

class HloHighlighter;

class HloTextEditorClient {
 public:
  enum class Fold { kNone, kExpanded, kFolded };

  virtual ~HloTextEditorClient() = default;
  // The document range of the link at `position`; false when there is none.
  virtual bool LinkAt(int position, int* start, int* length) const = 0;
  // Follows the link at `position` (if any); returns whether there was one.
  virtual bool FollowLink(int position) = 0;
  // The cursor came to rest after a mouse press whose cursor change was held back.
  virtual void CursorSettled() = 0;
  // The link under the mouse (length 0: none), for underlining.
  virtual void SetHoverLink(int start, int length) = 0;
  virtual Fold FoldAt(int block_number) const = 0;
  virtual void ToggleFold(int block_number) = 0;
  // Text painted after the line (the closing line of a folded computation); empty: none.
  virtual QString MarkerAt(int block_number) const = 0;
  virtual void AddContextActions(QMenu* menu, int position) = 0;
  virtual void NavigateBack() = 0;
  virtual void NavigateForward() = 0;
  // Ctrl+F (open the find bar), F3 and Shift+F3 pressed in the editor. The editor takes these
  // keys before window-wide shortcuts with the same keys (the text view's find is local).
  enum class FindKey { kOpen, kNext, kPrevious };
  virtual void FindKeyPressed(FindKey key) = 0;
};

class HloTextEditor : public QPlainTextEdit {
  Q_OBJECT

 public:
  explicit HloTextEditor(QWidget* parent = nullptr);
  ~HloTextEditor() override;

  void SetClient(HloTextEditorClient* client) { client_ = client; }
  HloHighlighter* highlighter() const { return highlighter_; }
  // Shows `document`, built elsewhere (on a worker thread, then moved to this one) with a
  // QPlainTextDocumentLayout and `highlighter` attached; takes ownership of both and drops the
  // current document and highlighter.
  void AdoptDocument(QTextDocument* document, HloHighlighter* highlighter);
  // True while a mouse press on a link is being handled (its cursor move is not an activation).
  bool holding_activation() const { return holding_activation_; }

  // A block's rectangle in viewport coordinates.
  QRectF BlockRect(const QTextBlock& block) const {
    return blockBoundingGeometry(block).translated(contentOffset());
  }

  int GutterWidth() const;
  void PaintGutter(QPaintEvent* event);
  void GutterPressed(QMouseEvent* event);
  // Re-lays out the gutter and repaints everything (after folding or a new text).
  void RefreshDecorations();

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void contextMenuEvent(QContextMenuEvent* event) override;
  void changeEvent(QEvent* event) override;
  bool event(QEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  void UpdateGutterGeometry();
  void UpdateHover(const QPoint& pos);
  // The last block whose top is inside the viewport (for lazy highlighting).
  QTextBlock LastVisibleBlock(int bottom) const;

  HloTextEditorClient* client_ = nullptr;
  HloHighlighter* highlighter_ = nullptr;
  QWidget* gutter_ = nullptr;
  int pressed_link_start_ = -1;
  bool holding_activation_ = false;
  QElapsedTimer since_follow_;
  int hover_start_ = -1;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_HLO_TEXT_EDITOR_H_
