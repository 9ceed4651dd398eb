// Comparing two states of the main window's module: the diff bar (what the shown state was
// compared with, the counts by kind, the change walk, side by side on or off), the added and
// changed marks and the removed ghosts on the graph, the marks in the text, the side-by-side
// text diff that takes the text view's place while comparing, the timeline's compare marks and
// its context menu, and the diff base. A state that is not loaded yet is requested and the
// comparison made when it arrives; large modules are diffed on a worker thread and stale
// results dropped by generation.
//
// The controller owns the comparison's state and widgets. It reads the document (the states and
// which one is shown) and navigates or selects through the window's Host interface, and it
// never shows a state itself: the window ends the comparison when another module is shown
// (EndComparison) and tells it when states arrive (TryPendingCompare, OnLoadingFinished).
#ifndef HLOWB_APP_GUI_COMPARE_CONTROLLER_H_
#define HLOWB_APP_GUI_COMPARE_CONTROLLER_H_

#include <QObject>
#include <QString>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dump/dump_index.h"
#include "core/ir/module.h"

class QFrame;
class QLabel;
class QMainWindow;
class QMenu;
class QPoint;
class QStackedWidget;
class QTableView;
class QToolButton;
class QWidget;

namespace hlowb {
struct ModuleDiff;
}  // namespace hlowb

namespace hlowb::viewer {
class GraphView;
class HloDiffView;
class HloTextView;
class PropertiesPanel;
class TimelineFilterModel;
class TimelineModel;
}  // namespace hlowb::viewer

namespace hlowb::gui {

class CompareController : public QObject {
  Q_OBJECT

 public:
  // What the controller asks of the window.
  class Host {
   public:
    virtual ~Host() = default;
    // The module the views show (null when none) and its timeline row (-1 for a single file).
    virtual std::shared_ptr<const Module> ShownModule() const = 0;
    virtual int ShownRow() const = 0;
    // The timeline row the user is on (it may still be loading); -1 when none.
    virtual int WantedRow() const = 0;
    // The chosen module's states in timeline order, and each one's parsed module (null while
    // not loaded, or dropped to save memory) and whether it failed to parse.
    virtual const std::vector<DumpState>& TimelineStates() const = 0;
    virtual std::shared_ptr<const Module> StateModule(int row) const = 0;
    virtual bool StateFailed(int row) const = 0;
    // The timeline row of a step number, "before", "after" or a pass name; -1 if none.
    virtual int FindStepRow(const QString& step) const = 0;
    // The selected instruction's name (kept across states); empty when none.
    virtual QString SelectedName() const = 0;
    // Moves the timeline to `row` and shows it (once loaded).
    virtual void SelectTimelineRow(int row) = 0;
    // Asks the loader for timeline row `row` (again, if it was dropped).
    virtual void RequestState(int row) = 0;
    // Selects `instruction` of the shown module in the graph, the text and the properties.
    virtual void SelectInViews(const Instruction* instruction) = 0;
    // While the window is syncing, view changes are its own and must not be acted on; the
    // controller sets it around changes to the timeline's rows.
    virtual bool IsSyncing() const = 0;
    virtual void SetSyncing(bool syncing) = 0;
    // Re-evaluates whether the window is busy (the controller's IsBusy counts).
    virtual void CheckIdle() = 0;
  };

  // The window's views the comparison draws on.
  struct Views {
    viewer::GraphView* graph = nullptr;
    viewer::HloTextView* text = nullptr;
    viewer::PropertiesPanel* properties = nullptr;
  };

  // Builds the diff bar and the text pane (`views.text`, or the side-by-side view while
  // comparing); the window places them with text_pane() and diff_bar().
  CompareController(QMainWindow* window, Host* host, const Views& views);
  ~CompareController() override;

  // Once the window has its docks and menus: adds the change walk and the side-by-side switch to
  // the diff bar, hooks up the timeline (extended selection, context menu, compare marks) and
  // adds the comparing section to the end of `view_menu`.
  void BuildControls(viewer::TimelineModel* model, viewer::TimelineFilterModel* filter,
                     QTableView* view, QMenu* view_menu);

  QWidget* text_pane() const;
  QFrame* diff_bar() const { return diff_bar_; }
  viewer::HloDiffView* diff_view() const { return diff_view_; }

  // The comparisons (see MainWindow for each one's contract).
  bool CompareWithPreviousStep();
  bool CompareWithBeforeOptimizations();
  bool CompareRows(int base_row, int row);
  bool CompareSelectedStates();
  void SetDiffBase(int row);
  bool CompareWithDiffBase();
  const Instruction* SelectNextChange(bool backwards);
  int StepChange(bool backwards, bool top_level_only);
  void SetSideBySide(bool on);
  // Drops a comparison waiting for states and ends the one shown.
  void Clear();

  int diff_base_row() const { return diff_base_row_; }
  int compared_base_row() const { return compared_base_row_; }
  // The base state's module of the comparison shown; null when none.
  std::shared_ptr<const Module> compared_base_module() const { return diff_base_module_; }
  bool IsComparing() const { return compared_base_row_ >= 0; }
  bool side_by_side() const { return side_by_side_; }
  // The diff bar's text; empty when not comparing.
  QString diff_summary() const;
  // A diff being computed, laid out or waiting for a state.
  bool IsBusy() const;

  // --- What the window tells the controller. ---
  // Ends the comparison shown (the marks name instructions of the module shown).
  void EndComparison();
  // Another module was chosen: no comparison and no diff base carry over.
  void ForgetModule();
  // Makes the comparison waiting for states when both are in; call when a state arrives or is
  // shown.
  void TryPendingCompare();
  // Loading stopped: a waiting comparison whose base did not come is dropped.
  void OnLoadingFinished();
  // The window's selection changed: the side-by-side view follows it (unless it came from
  // there).
  void FollowSelection(const Instruction* instruction);

 signals:
  // A comparison is now shown against timeline row `base_row`, or ended (-1).
  void comparisonChanged(int base_row);

 private:
  bool CompareWithRow(int row);
  void ApplyDiff(uint64_t generation, int base_row, std::shared_ptr<const Module> base,
                 std::shared_ptr<const Module> shown, std::shared_ptr<const ModuleDiff> diff);
  void ShowTimelineMenu(const QPoint& pos);
  void UpdateComparePane();
  void UpdateTimelineMarks();
  void ShowStatus(const QString& message, int timeout_ms = 0);

  QMainWindow* window_ = nullptr;
  Host* host_ = nullptr;
  Views views_;
  viewer::TimelineModel* timeline_model_ = nullptr;
  viewer::TimelineFilterModel* timeline_filter_ = nullptr;
  QTableView* timeline_view_ = nullptr;

  // Widgets.
  QStackedWidget* text_stack_ = nullptr;  // the text view, or the side-by-side view
  viewer::HloDiffView* diff_view_ = nullptr;
  QFrame* diff_bar_ = nullptr;
  QLabel* diff_summary_ = nullptr;
  QToolButton* side_by_side_button_ = nullptr;

  // The comparison.
  std::vector<const Instruction*> diff_order_;  // added and changed, in the shown module's order
  int diff_position_ = -1;
  bool side_by_side_ = true;
  int diff_base_row_ = -1;      // chosen with "Set as Diff Base"
  int compared_base_row_ = -1;  // of the comparison shown
  int pending_base_ = -1;       // a comparison waiting for states: base and shown rows
  int pending_row_ = -1;
  bool pending_requested_ = false;
  uint64_t diff_generation_ = 0;
  bool diff_computing_ = false;
  bool from_diff_view_ = false;  // a selection made in the side-by-side view
  std::shared_ptr<const Module> diff_base_module_;
  std::shared_ptr<const ModuleDiff> diff_;
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_COMPARE_CONTROLLER_H_
