// Syntax highlighting for HLO text: keywords (ROOT, ENTRY, HloModule, the stack-frame table
// headers), opcodes, shapes and element types, %names, attribute names, strings, numbers and
// comments. A hand-written scanner (no regular expressions) keeps long lines cheap.
//
// Highlighting is lazy: a block is formatted only once it has been requested (the editor asks
// for the blocks it is about to paint), so opening a multi-megabyte module costs nothing per
// line up front. Colors follow the palette (light or dark).
#ifndef HLOWB_VIEWER_TEXT_HLO_HIGHLIGHTER_H_
#define HLOWB_VIEWER_TEXT_HLO_HIGHLIGHTER_H_

#include <QPalette>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <vector>

namespace hlowb::viewer {

// Columns past this one are not colored (see highlightBlock).
inline constexpr int kMaxHighlightedColumn = 1000;

class HloHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  enum class Token { kKeyword, kOpcode, kShape, kName, kAttribute, kString, kNumber, kComment };

  explicit HloHighlighter(QTextDocument* document);

  // Forgets which blocks were formatted (call after replacing the document's text).
  void Reset(int block_count);
  // Formats the blocks [first, last] (block numbers) that are not formatted yet.
  void EnsureHighlighted(const QTextBlock& first, const QTextBlock& last);
  bool IsHighlighted(int block_number) const;
  // Switches colors for a light or dark palette and reformats what was formatted.
  void SetPalette(const QPalette& palette);

  const QTextCharFormat& FormatFor(Token token) const;

 protected:
  void highlightBlock(const QString& text) override;

 private:
  void Apply(Token token, int start, int length);

  std::vector<bool> highlighted_;
  bool enabled_ = false;  // true only while EnsureHighlighted formats a block
  QTextCharFormat formats_[8];
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_HLO_HIGHLIGHTER_H_
