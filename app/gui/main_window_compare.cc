// The main window's side of comparing states and of the History dock: the comparison and
// history calls of the window's API, which the controllers (compare_controller.h,
// history_controller.h) carry out, and what those controllers ask of the window (its Host
// interfaces: the document's states, navigation and selection).
#include <QDockWidget>

#include "app/gui/main_window.h"

namespace hlowb::gui {

void MainWindow::BuildCompareUi() {
  // A comparison waits for its states to be shown; History follows the shown state.
  connect(this, &MainWindow::stateShown, this, [this] {
    compare_->TryPendingCompare();
    ScheduleHistory();
  });
  compare_->BuildControls(timeline_model_, timeline_filter_, timeline_view_, view_menu_);
  // History: the selected instruction through every state of the timeline.
  history_ = new HistoryController(
      this, this, findChild<QDockWidget*>(QStringLiteral("propertiesDock")), view_menu_);
}

// ---------------------------------------------------------------------------------------------
// Comparing

bool MainWindow::CompareWithPreviousStep() { return compare_->CompareWithPreviousStep(); }

bool MainWindow::CompareWithBeforeOptimizations() {
  return compare_->CompareWithBeforeOptimizations();
}

const Instruction* MainWindow::SelectNextChange(bool backwards) {
  return compare_->SelectNextChange(backwards);
}

void MainWindow::ClearDiff() { compare_->Clear(); }

std::shared_ptr<const Module> MainWindow::compared_base_module() const {
  return compare_->compared_base_module();
}

QString MainWindow::diff_summary() const { return compare_->diff_summary(); }

bool MainWindow::CompareRows(int base_row, int row) { return compare_->CompareRows(base_row, row); }

bool MainWindow::CompareSelectedStates() { return compare_->CompareSelectedStates(); }

void MainWindow::SetDiffBase(int row) { compare_->SetDiffBase(row); }

bool MainWindow::CompareWithDiffBase() { return compare_->CompareWithDiffBase(); }

void MainWindow::SetSideBySide(bool on) { compare_->SetSideBySide(on); }

int MainWindow::StepChange(bool backwards, bool top_level_only) {
  return compare_->StepChange(backwards, top_level_only);
}

// ---------------------------------------------------------------------------------------------
// History

void MainWindow::UpdateHistory() { history_->Update(); }

void MainWindow::ScheduleHistory() {
  if (history_ != nullptr) history_->Schedule();  // none yet while the window is being built
}

// ---------------------------------------------------------------------------------------------
// What the controllers ask of the window

std::shared_ptr<const Module> MainWindow::StateModule(int row) const {
  return row >= 0 && row < static_cast<int>(rows_.size()) ? rows_[row].module : nullptr;
}

bool MainWindow::StateFailed(int row) const {
  return row >= 0 && row < static_cast<int>(rows_.size()) && rows_[row].failed;
}

void MainWindow::RequestState(int row) { loader_->RequestState(row); }

void MainWindow::SelectInViews(const Instruction* instruction) { SelectInstruction(instruction); }

void MainWindow::ShowStateSelecting(int row, const QString& name) {
  if (!name.isEmpty()) selected_name_ = name;
  if (row == shown_row_) {
    if (!name.isEmpty()) SelectInstructionByName(name);
    return;
  }
  SelectTimelineRow(row);
}

}  // namespace hlowb::gui
