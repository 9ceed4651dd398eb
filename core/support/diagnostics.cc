#include "core/support/diagnostics.h"

#include <algorithm>

#include "core/support/strings.h"

namespace hlowb {

LineIndex::LineIndex(std::string_view text) : text_(text) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

SourceLocation LineIndex::Locate(size_t offset) const {
  offset = std::min(offset, text_.size());
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  int line = static_cast<int>(it - line_starts_.begin());
  return {line, static_cast<int>(offset - line_starts_[line - 1]) + 1};
}

std::string_view LineIndex::LineText(int line) const {
  if (line < 1 || line > static_cast<int>(line_starts_.size())) return {};
  size_t start = line_starts_[line - 1];
  size_t end = line < static_cast<int>(line_starts_.size()) ? line_starts_[line] - 1
                                                             : text_.size();
  std::string_view s = text_.substr(start, end - start);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

std::string FormatDiagnostic(std::string_view file, std::string_view text, SourceLocation loc,
                             std::string_view message) {
  std::string out(file.empty() ? "<input>" : file);
  if (loc.line > 0) StrAppend(&out, ":", loc.line, ":", loc.column);
  StrAppend(&out, ": ", std::string(message));
  if (loc.line <= 0) return out;
  LineIndex index(text);
  std::string_view line = index.LineText(loc.line);
  constexpr size_t kWidth = 120;
  size_t col = loc.column > 0 ? static_cast<size_t>(loc.column - 1) : 0;
  size_t start = 0;
  if (line.size() > kWidth && col > kWidth / 2) start = col - kWidth / 2;
  std::string_view shown = line.substr(std::min(start, line.size()), kWidth);
  std::string printable;
  for (char c : shown) {
    unsigned char u = static_cast<unsigned char>(c);
    printable.push_back((u < 0x20 && c != '\t') || u == 0x7f ? '?' : c);
  }
  std::string prefix = start > 0 ? "..." : "";
  StrAppend(&out, "\n  ", prefix, printable, "\n  ",
                  std::string(prefix.size() + (col >= start ? col - start : 0), ' '), "^");
  return out;
}

}  // namespace hlowb
