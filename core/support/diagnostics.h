// Diagnostics that point into a text: "file:line:col: error: message", the offending line and a
// caret under the column. Used by the HLO parser and the verifier, and by the CLI to report.
#ifndef HLOWB_CORE_SUPPORT_DIAGNOSTICS_H_
#define HLOWB_CORE_SUPPORT_DIAGNOSTICS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hlowb {

struct SourceLocation {
  int line = 0;    // 1-based; 0 = unknown
  int column = 0;  // 1-based, in bytes
};

// Maps byte offsets of a text to line/column. Built once per text; lookups are O(log lines).
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  SourceLocation Locate(size_t offset) const;
  std::string_view LineText(int line) const;  // without the newline

 private:
  std::string_view text_;
  std::vector<size_t> line_starts_;
};

// "file:line:col: message" followed by the source line and a caret (line/col omitted when 0).
// Long lines are clipped around the column so the caret stays visible.
std::string FormatDiagnostic(std::string_view file, std::string_view text, SourceLocation loc,
                             std::string_view message);

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_DIAGNOSTICS_H_
