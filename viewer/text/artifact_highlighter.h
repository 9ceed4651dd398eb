// Syntax highlighting for the artifacts of an XLA dump, one scanner per kind of text: LLVM IR,
// PTX, MLIR, the buffer-assignment family (buffer assignment, values, live ranges, memory-usage
// report), thunk sequences, text protos (autotune results, debug options, configs, metadata),
// JSON, DOT, HTML, hex dumps and plain text. Hand-written scanners (no regular expressions)
// keep long lines cheap; columns past kMaxArtifactHighlightColumn stay plain.
//
// On top of the syntax, names of the module's instructions and computations (see
// ArtifactNameIndex) are formatted as links. Which tokens may be names depends on the syntax:
// '@'/'%' names in LLVM IR, identifiers outside opcode position in PTX, '@' symbols in MLIR,
// and words elsewhere.
//
// The class is a QSyntaxHighlighter, so it can format a QTextDocument; ArtifactTextArea calls
// HighlightLine directly for the lines it paints.
#ifndef HLOWB_VIEWER_TEXT_ARTIFACT_HIGHLIGHTER_H_
#define HLOWB_VIEWER_TEXT_ARTIFACT_HIGHLIGHTER_H_

#include <QList>
#include <QPalette>
#include <QString>
#include <QStringView>
#include <QSyntaxHighlighter>
#include <QTextCharFormat>
#include <QTextLayout>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dump/dump_names.h"
#include "viewer/text/artifact_names.h"

namespace hlowb::viewer {

// Columns past this one are neither colored nor scanned for links.
inline constexpr int kMaxArtifactHighlightColumn = 2000;

enum class ArtifactSyntax : uint8_t {
  kPlain,
  kLlvmIr,
  kPtx,
  kMlir,
  kBufferReport,  // buffer assignment, its values, live ranges, memory-usage report, HLO text
  kThunkSequence,
  kTextProto,  // also flag files ("--xla_flag=value")
  kJson,
  kDot,
  kMarkup,   // HTML
  kHexDump,  // what a binary file is shown as
};

// A short name for the syntax ("LLVM IR", "PTX", ...).
QString ArtifactSyntaxName(ArtifactSyntax syntax);
// The syntax of a dump file: by its kind, then by its extension (a trailing ".gz" ignored),
// then by its first characters (`head`, a JSON text protos' kind holds JSON).
ArtifactSyntax ArtifactSyntaxFor(DumpFileKind kind, QStringView file_name, QStringView head);

class ArtifactHighlighter : public QSyntaxHighlighter {
  Q_OBJECT

 public:
  enum class Token : uint8_t {
    kKeyword,      // language keywords, HTML/DOT tags, thunk kinds, enum values
    kInstruction,  // LLVM/PTX opcodes, MLIR operations
    kType,         // types and HLO shapes
    kLocal,        // %values, PTX registers
    kGlobal,       // @globals and symbols
    kLabel,        // basic-block and branch labels, hex-dump offsets
    kDirective,    // PTX directives (.reg, .entry)
    kAttribute,    // attribute groups (#0), key= names, predicates (@%p1)
    kMetadata,     // LLVM metadata (!0, !"text")
    kField,        // text-proto and JSON field names, report labels ("value:")
    kHeader,       // report section headers ("allocation 3", "BufferAssignment")
    kString,
    kNumber,
    kComment,
    kLink,  // a name of the module's instructions or computations (drawn on top)
  };
  static constexpr int kTokenCount = static_cast<int>(Token::kLink) + 1;

  // Not attached to a document: for HighlightLine callers.
  explicit ArtifactHighlighter(QObject* parent = nullptr);
  // Formats `document` as a QSyntaxHighlighter.
  explicit ArtifactHighlighter(QTextDocument* document);

  void SetSyntax(ArtifactSyntax syntax);
  ArtifactSyntax syntax() const { return syntax_; }
  // The names to link (nullptr or empty: no links).
  void SetNames(std::shared_ptr<const ArtifactNameIndex> names);
  const ArtifactNameIndex* names() const { return names_.get(); }
  // Colors for a light or dark palette.
  void SetPalette(const QPalette& palette);
  const QTextCharFormat& FormatFor(Token token) const { return formats_[static_cast<int>(token)]; }

  // Formats one line: `state_in` is the state the previous line ended in (0 at the top; block
  // comments, HTML tags), `*state_out` the state this one ends in. Appends syntax ranges, then
  // link ranges (drawn over them).
  void HighlightLine(QStringView line, int state_in, int* state_out,
                     QList<QTextLayout::FormatRange>* formats) const;
  // The links in one line, left to right.
  std::vector<ArtifactLinkSpan> LinksIn(QStringView line) const;
  // Whether a line's highlighting can depend on the lines before it.
  bool HasMultiLineState() const;

 protected:
  void highlightBlock(const QString& text) override;

 private:
  ArtifactSyntax syntax_ = ArtifactSyntax::kPlain;
  std::shared_ptr<const ArtifactNameIndex> names_;
  QTextCharFormat formats_[kTokenCount];
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_ARTIFACT_HIGHLIGHTER_H_
