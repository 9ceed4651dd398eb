#include "viewer/text/hlo_highlighter.h"

#include <QColor>
#include <QFont>
#include <QSet>
#include <QTextBlock>
#include <QTextDocument>
#include <string>

#include "core/ir/opcode.h"
#include "core/ir/primitive_type.h"
#include "viewer/text/hlo_text_index.h"

namespace hlowb::viewer {
namespace {

bool IsIdentStart(QChar c) {
  const char16_t u = c.unicode();
  return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_';
}

bool IsDigit(QChar c) { return c.unicode() >= '0' && c.unicode() <= '9'; }

bool IsKeyword(QStringView w) {
  return w == u"ROOT" || w == u"ENTRY" || w == u"HloModule" || w == u"FileNames" ||
         w == u"FunctionNames" || w == u"FileLocations" || w == u"StackFrames";
}

bool IsOpcodeName(QStringView w) {
  // Opcode names are short ASCII words; avoid allocating for anything longer.
  if (w.size() > 40) return false;
  return ParseOpcode(w.toString().toStdString()).has_value();
}

bool IsTypeName(QStringView w) {
  if (w.size() > 16) return false;
  return ParsePrimitiveType(w.toString().toStdString()).has_value();
}

// From `i` at an opening bracket, the index just past its matching close (or the end).
int SkipBalanced(const QString& s, int i, QChar open, QChar close) {
  int depth = 0;
  const int n = static_cast<int>(s.size());
  for (; i < n; ++i) {
    if (s[i] == open) {
      ++depth;
    } else if (s[i] == close) {
      if (--depth == 0) return i + 1;
    }
  }
  return n;
}

}  // namespace

HloHighlighter::HloHighlighter(QTextDocument* document) : QSyntaxHighlighter(document) {
  SetPalette(QPalette());
}

void HloHighlighter::Reset(int block_count) {
  highlighted_.assign(static_cast<size_t>(std::max(block_count, 0)), false);
}

bool HloHighlighter::IsHighlighted(int block_number) const {
  return block_number >= 0 && block_number < static_cast<int>(highlighted_.size()) &&
         highlighted_[block_number];
}

void HloHighlighter::EnsureHighlighted(const QTextBlock& first, const QTextBlock& last) {
  if (!first.isValid()) return;
  const int last_number = last.isValid() ? last.blockNumber() : first.blockNumber();
  for (QTextBlock b = first; b.isValid() && b.blockNumber() <= last_number; b = b.next()) {
    const int n = b.blockNumber();
    if (n >= static_cast<int>(highlighted_.size())) highlighted_.resize(n + 1, false);
    if (highlighted_[n] || !b.isVisible()) continue;
    highlighted_[n] = true;
    rehighlightBlock(b);
  }
}

void HloHighlighter::SetPalette(const QPalette& palette) {
  const bool dark = palette.color(QPalette::Base).lightness() < 128;
  auto color = [&](const char* light, const char* dark_color) {
    return QColor(dark ? dark_color : light);
  };
  auto set = [&](Token t, const QColor& c, bool bold = false, bool italic = false) {
    QTextCharFormat f;
    f.setForeground(c);
    if (bold) f.setFontWeight(QFont::Bold);
    if (italic) f.setFontItalic(true);
    formats_[static_cast<int>(t)] = f;
  };
  set(Token::kKeyword, color("#8250df", "#d2a8ff"), true);
  set(Token::kOpcode, color("#0550ae", "#79c0ff"), true);
  set(Token::kShape, color("#116329", "#7ee787"));
  set(Token::kName, color("#953800", "#ffa657"));
  set(Token::kAttribute, color("#6e4c9e", "#c5a5f5"));
  set(Token::kString, color("#a31515", "#e8a08a"));
  set(Token::kNumber, color("#0b6e73", "#56d4dd"));
  set(Token::kComment, color("#6e7781", "#8b949e"), false, true);
  // Formatted blocks get the new colors when they are next painted.
  std::fill(highlighted_.begin(), highlighted_.end(), false);
}

const QTextCharFormat& HloHighlighter::FormatFor(Token token) const {
  return formats_[static_cast<int>(token)];
}

void HloHighlighter::Apply(Token token, int start, int length) {
  if (length > 0) setFormat(start, length, formats_[static_cast<int>(token)]);
}

void HloHighlighter::highlightBlock(const QString& s) {
  const int number = currentBlock().blockNumber();
  if (number < 0 || number >= static_cast<int>(highlighted_.size()) || !highlighted_[number]) {
    return;  // not requested yet: leave unformatted (and the state untouched)
  }
  const int n = static_cast<int>(s.size());
  // Tokens are colored up to this column: past it lines are shown plain, which keeps laying
  // out the longest lines (tuple shapes, entry layouts of thousands of characters) cheap.
  const int limit = std::min(n, kMaxHighlightedColumn);
  int i = 0;
  bool in_comment = previousBlockState() == 1;
  if (in_comment) {
    const int end = static_cast<int>(s.indexOf(QLatin1String("*/")));
    if (end < 0) {
      Apply(Token::kComment, 0, n);
      setCurrentBlockState(1);
      return;
    }
    Apply(Token::kComment, 0, end + 2);
    i = end + 2;
    in_comment = false;
  }
  while (i < limit) {
    const QChar c = s[i];
    if (c == u'/' && i + 1 < n && s[i + 1] == u'/') {
      Apply(Token::kComment, i, n - i);
      break;
    }
    if (c == u'/' && i + 1 < n && s[i + 1] == u'*') {
      const int end = static_cast<int>(s.indexOf(QLatin1String("*/"), i + 2));
      if (end < 0) {
        Apply(Token::kComment, i, n - i);
        in_comment = true;
        break;
      }
      Apply(Token::kComment, i, end + 2 - i);
      i = end + 2;
      continue;
    }
    if (c == u'"') {
      int j = i + 1;
      while (j < n && s[j] != u'"') j += (s[j] == u'\\') ? 2 : 1;
      j = std::min(j + 1, n);
      Apply(Token::kString, i, j - i);
      i = j;
      continue;
    }
    if (c == u'%') {
      int j = i + 1;
      while (j < n && IsHloNameChar(s[j].unicode())) ++j;
      Apply(Token::kName, i, j - i);
      i = j;
      continue;
    }
    if (IsIdentStart(c)) {
      int j = i + 1;
      while (j < n && IsHloNameChar(s[j].unicode())) ++j;
      const QStringView word = QStringView(s).mid(i, j - i);
      const QChar next = j < n ? s[j] : QChar();
      if (IsKeyword(word)) {
        Apply(Token::kKeyword, i, j - i);
      } else if (next == u'[' && IsTypeName(word)) {
        // element type, dimensions and an optional layout: f32[8,16]{1,0}
        int k = SkipBalanced(s, j, u'[', u']');
        if (k < n && s[k] == u'{') k = SkipBalanced(s, k, u'{', u'}');
        Apply(Token::kShape, i, k - i);
        j = k;
      } else if (next == u'(' && IsOpcodeName(word)) {
        Apply(Token::kOpcode, i, j - i);
      } else if (next == u'=') {
        Apply(Token::kAttribute, i, j - i);
      } else if (word == u"true" || word == u"false" || word == u"inf" || word == u"nan") {
        Apply(Token::kNumber, i, j - i);
      } else if (next == u':' && j + 1 < n && s[j + 1] == u' ') {
        // a parameter name in a computation signature: "p0: f32[2]"
        Apply(Token::kName, i, j - i);
      } else if ((word == u"token" || word == u"opaque") && i + 5 <= n) {
        Apply(Token::kShape, i, j - i);
      }
      i = j;
      continue;
    }
    if (IsDigit(c) || ((c == u'-' || c == u'+') && i + 1 < n && IsDigit(s[i + 1]))) {
      int j = i + 1;
      while (j < n && (IsDigit(s[j]) || s[j] == u'.' || s[j] == u'e' || s[j] == u'E' ||
                       s[j] == u'x' ||
                       ((s[j] == u'-' || s[j] == u'+') && (s[j - 1] == u'e' || s[j - 1] == u'E')))) {
        ++j;
      }
      Apply(Token::kNumber, i, j - i);
      i = j;
      continue;
    }
    ++i;
  }
  setCurrentBlockState(in_comment ? 1 : 0);
}

}  // namespace hlowb::viewer
