// The side-by-side diff view: two states of a module as text, the base state on the left and
// the other on the right, lines aligned by the structural match of core/analysis/diff.h (which
// follows instructions across renames): a matched pair shares a line, and a blank filler line
// stands opposite an added or removed instruction. Removed lines are red, added green and
// changed orange (on both sides). The two sides scroll together, horizontally and vertically;
// next/previous change moves both. The documents of large modules are built on a worker thread
// (see SetAsyncThreshold), so showing a diff never stalls the UI thread.
//
// It does not choose what to compare or compute the diff (callers pass a ModuleDiff and the
// modules it points into, which it keeps alive), and it does not own the window's selection:
// it reports the instruction of the shown (right) state on a line the user clicks.
#ifndef HLOWB_VIEWER_TEXT_HLO_DIFF_VIEW_H_
#define HLOWB_VIEWER_TEXT_HLO_DIFF_VIEW_H_

#include <QColor>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>

#include "core/analysis/diff.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

class QLabel;
class QPlainTextEdit;

namespace hlowb::viewer {

class HloDiffView : public QWidget {
  Q_OBJECT

 public:
  explicit HloDiffView(QWidget* parent = nullptr);
  ~HloDiffView() override;

  // Shows `diff` of `a` (left) against `b` (right). Modules with at least the async threshold
  // of instructions (the larger of the two) get their text built on a worker thread; until it
  // is in, IsLoading() is true and diffLoaded() follows.
  void SetDiff(std::shared_ptr<const Module> a, std::shared_ptr<const Module> b,
               std::shared_ptr<const ModuleDiff> diff, const QString& label_a,
               const QString& label_b);
  void Clear();
  bool IsLoading() const;
  // Default 2,000 instructions; 0 = always on a worker thread.
  void SetAsyncThreshold(int64_t instructions);

  // Moves both sides to the next (or previous) line that is not unchanged, after the current
  // line, wrapping around; with `top_level_only`, skipping the lines of fused computations.
  // Returns that line (0-based), -1 when there is no change.
  int GoToChange(bool backwards = false, bool top_level_only = false);
  // Moves both sides to the line of `instruction` (of either module); false if it has none.
  bool ShowInstruction(const Instruction* instruction);

  // Queries (for the window and tests). Lines are 0-based.
  int LineCount() const;
  int ChangeCount() const;  // lines whose instruction was added, removed or changed
  int TopLevelChangeCount() const;  // those outside fused computations
  int CurrentLine() const;
  int LineOf(const Instruction* instruction) const;
  QString LeftText(int line) const;
  QString RightText(int line) const;
  // The line's background on each side (invalid when it has none).
  QColor LeftBackground(int line) const;
  QColor RightBackground(int line) const;
  const SideBySideLine* LineAt(int line) const;
  // Below the sides: what happened to the current line's instruction (SideBySideLine::note).
  QString CurrentNote() const;
  QPlainTextEdit* left() const;
  QPlainTextEdit* right() const;

  // Background colours: removed (red), added (green), changed (orange), filler (grey).
  static QColor KindColor(DiffKind kind, bool dark);
  static QColor FillerColor(bool dark);

 signals:
  // The user clicked a line of either side that has an instruction in the right (shown) state.
  void instructionActivated(const hlowb::Instruction* instruction);
  // A diff built on a worker thread is shown.
  void diffLoaded();

 protected:
  // The line colours are in the documents: a theme change rebuilds them.
  void changeEvent(QEvent* event) override;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_HLO_DIFF_VIEW_H_
