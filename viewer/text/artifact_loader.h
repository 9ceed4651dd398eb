// Reads a dump artifact into what ArtifactView shows, on a worker thread: the text with an
// index of its lines, the syntax to highlight it with, and a note about what was done to it.
// Gzipped files are decompressed (whatever their name); text beyond a size limit is cut at a
// line end with a note; binary files (object files, binary protos) become a hex dump of their
// beginning; lines longer than kMaxArtifactLineChars are shown in pieces. A file that cannot be
// read gives an error, never an exception or a crash.
#ifndef HLOWB_VIEWER_TEXT_ARTIFACT_LOADER_H_
#define HLOWB_VIEWER_TEXT_ARTIFACT_LOADER_H_

#include <QString>
#include <QtGlobal>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dump/dump_names.h"
#include "viewer/text/artifact_highlighter.h"

namespace hlowb::viewer {

// Lines longer than this are shown as several display lines.
inline constexpr int kMaxArtifactLineChars = 4096;
// How much of a binary file the hex dump shows.
inline constexpr int kArtifactHexDumpBytes = 16 * 1024;

// Immutable text with its display lines. Positions are indexes into `text`; a display line is
// [LineStart(i), LineEnd(i)), without its '\n'.
struct ArtifactText {
  QString text;
  std::vector<int> line_starts{0};  // one per display line, ascending
  // 1-based source line of each display line, 0 for the continuation of a long line; empty
  // when no line was split (display line i is source line i + 1).
  std::vector<int> source_lines;
  int max_columns = 0;  // the widest display line, tabs expanded to kArtifactTabWidth

  int LineCount() const { return static_cast<int>(line_starts.size()); }
  int LineStart(int line) const { return line_starts[line]; }
  int LineEnd(int line) const;
  // The display line holding `position` (clamped to the text).
  int LineOf(int position) const;
  // The source line number shown in the gutter (0: a continuation).
  int SourceLine(int line) const { return source_lines.empty() ? line + 1 : source_lines[line]; }

  // Builds the line index for `text` (which must use '\n' only).
  static std::shared_ptr<ArtifactText> Make(QString text);
};

inline constexpr int kArtifactTabWidth = 4;

struct ArtifactLoadOptions {
  // The most text shown, in bytes of (decompressed) file content.
  qint64 max_text_bytes = qint64{64} << 20;
};

struct ArtifactContent {
  std::shared_ptr<const ArtifactText> text;  // never null
  ArtifactSyntax syntax = ArtifactSyntax::kPlain;
  QString error;  // non-empty: nothing could be shown, and why
  QString note;   // shown above the text: truncation, binary, decompression, empty file
  bool binary = false;
  bool truncated = false;
  bool compressed = false;
  bool split_lines = false;  // some line was longer than kMaxArtifactLineChars
  qint64 file_bytes = 0;     // size on disk
};

// Reads `path` (blocking: call it off the UI thread).
ArtifactContent LoadArtifact(const QString& path, DumpFileKind kind,
                             const ArtifactLoadOptions& options = {});

// "1.5 MiB", "812 bytes".
QString FormatArtifactBytes(qint64 bytes);

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_ARTIFACT_LOADER_H_
