// The artifact viewer: one file of an XLA dump (buffer assignment, memory-usage report, live
// ranges, thunk sequence, LLVM IR, PTX, MLIR, autotune results, debug options, configs, DOT,
// HTML, ...) in a read-only, syntax-highlighted pane with a search bar above it.
//
// Files are read, decompressed and indexed on a worker thread (see artifact_loader.h) and the
// pane lays out only what it paints, so a file of tens of megabytes never stalls the UI; a
// newer OpenFile or Clear drops the result of an older one. Binary files show a hex dump of
// their beginning, oversized ones their first ArtifactLoadOptions::max_text_bytes, and a file
// that cannot be read an error, each with a note above the text.
//
// Search is case-insensitive and marks every match; Enter / F3 go to the next match,
// Shift+Enter / Shift+F3 to the previous one (wrapping), and the bar counts them ("3 of 12").
// Ctrl+F in the text focuses the search field; Escape there returns to the text.
//
// With SetModule, names of the module's instructions and computations in the text (plain, or
// in the identifier form LLVM IR and PTX use) become links: a plain left click on one (or
// Return / F2 with the cursor on it) emits instructionActivated, and hovering shows the
// instruction's HLO text.
#ifndef HLOWB_VIEWER_TEXT_ARTIFACT_VIEW_H_
#define HLOWB_VIEWER_TEXT_ARTIFACT_VIEW_H_

#include <QString>
#include <QWidget>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dump/dump_index.h"
#include "core/dump/dump_names.h"
#include "core/ir/module.h"
#include "viewer/text/artifact_highlighter.h"
#include "viewer/text/artifact_loader.h"

class QLabel;
class QLineEdit;

namespace hlowb::viewer {

class ArtifactTextArea;

// A short label for an artifact kind, for tab titles and lists: "LLVM IR", "PTX",
// "Buffer assignment", ...
QString ArtifactKindLabel(DumpFileKind kind);
// A tab title for a dump file of `module` (nullptr: taken from the file name): its kind's
// label and what tells it apart from the module's other files of that kind
// ("LLVM IR: add_fusion_kernel_module.ir-with-opt", "Buffer assignment: cpu_after_optimizations").
QString ArtifactTitle(const DumpFile& file, const DumpModule* module = nullptr);

class ArtifactView : public QWidget {
  Q_OBJECT

 public:
  explicit ArtifactView(QWidget* parent = nullptr);
  ~ArtifactView() override;

  // Shows the file at `path` of `kind`. Loading happens on a worker thread: IsLoading() is true
  // until loaded() is emitted.
  void OpenFile(const QString& path, DumpFileKind kind);
  void Clear();
  // The module the artifact belongs to (its names become links); nullptr: no links. A module
  // of many instructions is indexed on a worker thread (linksReady() says when).
  void SetModule(std::shared_ptr<const Module> module);
  // The most (decompressed) text shown; larger files show their beginning with a note.
  void SetMaxTextBytes(qint64 bytes);

  bool IsLoading() const { return loading_; }
  QString path() const { return path_; }
  DumpFileKind kind() const { return kind_; }
  ArtifactSyntax syntax() const;
  // The text shown (a hex dump for a binary file; empty while loading or after an error).
  const QString& text() const;
  // The note or error shown above the text; empty when none.
  QString Note() const;
  bool HasError() const { return !error_.isEmpty(); }
  bool IsBinary() const { return binary_; }
  bool IsTruncated() const { return truncated_; }

  // Search (what typing in the search field does). Matches in big texts are counted on a
  // worker thread: IsSearching() is true until searchFinished() is emitted.
  void SetSearchText(const QString& query);
  QString SearchText() const;
  bool FindNext();
  bool FindPrevious();
  bool IsSearching() const { return searching_; }
  int MatchCount() const;
  // 1-based index of the current match; 0 when none.
  int CurrentMatch() const { return current_match_ + 1; }
  // "3 of 12", "No matches", "Searching…", or empty without a query.
  QString SearchStatus() const;
  // Focuses the search field with its text selected (Ctrl+F in the text does the same).
  void FocusSearch();

  // Links: the names linked on the lines in view, as written in the text (each once).
  std::vector<QString> LinkedNamesInView() const;
  // Follows the link at a text position as a click would; false when there is none.
  bool ActivateLinkAt(int position);
  // The tooltip shown over a text position; empty when it is not on a link.
  QString ToolTipAt(int position) const;
  // Scrolls so that a text position is in view (centered) and puts the cursor there.
  void ShowPosition(int position);

  // The parts, for the window and tests.
  ArtifactTextArea* textArea() const { return area_; }
  QLineEdit* searchField() const { return search_; }

 signals:
  // The file is shown (ok) or could not be read (!ok; Note() says why).
  void loaded(bool ok);
  // A link was followed: the instruction's computation and name, or a computation's name
  // with an empty instruction.
  void instructionActivated(const QString& computation, const QString& instruction);
  // The matches of the current query are known.
  void searchFinished(int matches);
  // The names of the module set with SetModule are linked.
  void linksReady();

 private:
  struct Loaded;
  void FinishLoad(std::uint64_t generation, const std::shared_ptr<Loaded>& result);
  void StartSearch(bool select_first);
  void FinishSearch(std::uint64_t generation, std::shared_ptr<const std::vector<int>> matches,
                    bool capped, bool select_first);
  void SelectMatch(int index);
  void UpdateSearchStatus();
  void UpdateBanner();
  void OnLinkActivated(int position);

  ArtifactTextArea* area_ = nullptr;
  QLineEdit* search_ = nullptr;
  QLabel* search_status_ = nullptr;
  QLabel* banner_ = nullptr;

  QString path_;
  DumpFileKind kind_ = DumpFileKind::kUnrecognized;
  qint64 max_text_bytes_ = qint64{64} << 20;
  std::uint64_t generation_ = 0;  // bumped by OpenFile and Clear
  // generation_ for the workers: a load older than it is skipped or dropped.
  std::shared_ptr<std::atomic<std::uint64_t>> load_latest_;
  std::uint64_t names_generation_ = 0;  // bumped by SetModule
  bool loading_ = false;
  QString note_;
  QString error_;
  bool binary_ = false;
  bool truncated_ = false;
  std::shared_ptr<const ArtifactText> content_;
  std::shared_ptr<const Module> module_;

  std::uint64_t search_generation_ = 0;
  // The newest search's generation, read by running searches: an older one stops early.
  std::shared_ptr<std::atomic<std::uint64_t>> search_latest_;
  bool searching_ = false;
  bool pending_select_ = false;  // select a match once the running search is done
  int pending_step_ = 0;         // +1 / -1: FindNext / FindPrevious pressed while searching
  std::shared_ptr<const std::vector<int>> matches_;
  bool matches_capped_ = false;
  int current_match_ = -1;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_ARTIFACT_VIEW_H_
