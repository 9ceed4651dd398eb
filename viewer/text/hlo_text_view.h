// The text view: a module printed as syntax-highlighted HLO in a read-only editor, where every
// instruction and computation name is a link to its definition. Computations fold; find works
// with next/previous. A file that failed to parse is shown as its raw text with the error
// highlighted at its line and column.
//
// Links are followed with a plain left click on a name (Ctrl+click works the same; a press
// that becomes a drag selects text instead); F2 or Return follows the name under the text
// cursor, Alt+Left/Alt+Right go back and forth. Ctrl+F opens a find bar (Enter / Shift+Enter,
// F3 / Shift+F3 for next / previous). Computations fold from the gutter or the context menu.
// ShowInstruction, ShowComputation, SetModule, SetErrorText, Clear and SetComputationFolded
// never emit the activation signals, so views that sync each other through them cannot loop;
// Find moves the cursor as the user would and emits for the definition it lands on.
//
// It does not parse files or own modules; callers pass a shared_ptr that keeps the module
// alive while shown.
#ifndef HLOWB_VIEWER_TEXT_HLO_TEXT_VIEW_H_
#define HLOWB_VIEWER_TEXT_HLO_TEXT_VIEW_H_

#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

class QPlainTextEdit;

namespace hlowb::viewer {

class HloTextView : public QWidget {
  Q_OBJECT

 public:
  explicit HloTextView(QWidget* parent = nullptr);
  ~HloTextView() override;

  // Shows `module`. A large module (see SetAsyncThreshold) is printed, indexed and put into a
  // text document on a worker thread, so the UI thread never stalls; until it is in, the view
  // shows a loading line, IsLoading() is true, and ShowInstruction/ShowComputation requests
  // are applied when it arrives (textLoaded() is emitted then).
  void SetModule(std::shared_ptr<const Module> module);
  bool IsLoading() const;
  // Modules with at least this many instructions load on a worker thread (default 2,000;
  // 0 = every module, a huge value = none).
  void SetAsyncThreshold(int64_t instructions);
  // Raw text of a file that failed to parse; line and column are 1-based.
  void SetErrorText(const QString& text, int line, int column, const QString& message);
  void Clear();

  // Scrolls to and highlights the definition line.
  void ShowInstruction(const Instruction* instruction);
  void ShowComputation(const Computation* computation);
  // The instruction whose definition holds the cursor; nullptr if none.
  const Instruction* CurrentInstruction() const;

  bool Find(const QString& query, bool backwards = false);
  void SetComputationFolded(const Computation* computation, bool folded);

  // The plain text shown (for tests).
  QString PlainText() const;

  // Additions beyond the pinned API (for the window and tests):
  // The editor inside (read-only); tests click its viewport.
  QPlainTextEdit* editor() const;
  bool IsComputationFolded(const Computation* computation) const;
  // 1-based line of a definition (a computation's header line); 0 when not shown.
  int LineOf(const Instruction* instruction) const;
  int LineOf(const Computation* computation) const;
  // Whether a 1-based line is shown (false inside a folded computation).
  bool IsLineVisible(int line) const;
  // The 1-based line SetErrorText highlighted; 0 when no error is shown.
  int ErrorLine() const;
  // Opens the find bar (Ctrl+F does the same when the view has focus).
  void ShowFindBar();
  // Diff colouring: the definition lines of instructions marked 1 (added) or 2 (changed) get
  // a green or orange background until replaced (an empty map clears it).
  void SetDiffMarks(std::unordered_map<const Instruction*, uint8_t> marks);
  // How many lines carry a diff background (for tests).
  int DiffMarkedLineCount() const;
  // Highlights every occurrence of `query` (case-insensitive) like a find highlight, in this
  // module and the ones shown after it, until replaced (empty: none). How many are highlighted
  // (at most a few thousand).
  void SetSearchHighlight(const QString& query);
  int SearchHighlightCount() const;

 signals:
  // The user followed a link (clicked a name) or moved the cursor onto a definition.
  void instructionActivated(const hlowb::Instruction* instruction);
  void computationActivated(const hlowb::Computation* computation);
  // A module that loaded on a worker thread is shown.
  void textLoaded();

 protected:
  // Line backgrounds are made from the palette: a theme change remakes them.
  void changeEvent(QEvent* event) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_HLO_TEXT_VIEW_H_
