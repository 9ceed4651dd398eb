// Replay ▸ Reduce…: the dialog that shrinks a failing module with a ReduceRunner
// (reduce_runner.h). It asks which failure to keep (prefilled from the run that failed), a time
// limit and where to write; then shows the reducer's phase, instructions left of the original,
// candidates tried and kept, and its log as they come, with Stop (keep the smallest failing
// module so far) while it runs. When it ends it says how it went and offers the reduced module
// (the window opens it as a new document by itself) and the bug bundle's folder. It never
// blocks: the work runs in child processes.
#ifndef HLOWB_APP_GUI_REDUCE_DIALOG_H_
#define HLOWB_APP_GUI_REDUCE_DIALOG_H_

#include <QDialog>
#include <QString>

#include "app/gui/reduce_runner.h"

class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;

namespace hlowb::gui {

class ReduceDialog : public QDialog {
  Q_OBJECT

 public:
  // `job` prefills the choices (its until, time limit and out_dir); Start() runs it with what
  // the dialog then shows. `description` says what failed ("MISMATCH on interpreter vs cpu").
  ReduceDialog(const ReduceJob& job, const QString& description, QWidget* parent = nullptr);

  // Starts the reduction with the dialog's choices; false when it could not start.
  bool Start();
  // Stop while running; a second Stop kills the reducer.
  void Stop() { runner_->Stop(); }
  ReduceRunner* runner() const { return runner_; }
  const ReduceOutcome& outcome() const { return outcome_; }
  bool finished() const { return finished_; }

  // For tests and the window.
  QComboBox* until_box() const { return until_; }
  QDoubleSpinBox* time_limit_box() const { return time_limit_; }
  QLineEdit* out_dir_edit() const { return out_dir_; }
  QPushButton* start_button() const { return start_; }
  QPushButton* stop_button() const { return stop_; }
  QPushButton* open_button() const { return open_; }
  QPushButton* bundle_button() const { return bundle_; }
  QProgressBar* progress_bar() const { return progress_; }
  QString status_text() const;
  QString log_text() const;

 signals:
  // The reduction ended (successfully or not).
  void reduceFinished(const hlowb::gui::ReduceOutcome& outcome);
  // "Open Reduced Module" (also emitted by itself once when a reduction succeeds).
  void openRequested(const QString& path);

 private:
  void OnProgress(const ReduceProgressLine& line);
  void OnFinished(const ReduceOutcome& outcome);
  void SetRunningUi(bool running);

  ReduceJob job_;
  ReduceRunner* runner_ = nullptr;
  ReduceOutcome outcome_;
  bool finished_ = false;
  QComboBox* until_ = nullptr;
  QDoubleSpinBox* time_limit_ = nullptr;
  QLineEdit* out_dir_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* status_ = nullptr;
  QPlainTextEdit* log_ = nullptr;
  QPushButton* start_ = nullptr;
  QPushButton* stop_ = nullptr;
  QPushButton* open_ = nullptr;
  QPushButton* bundle_ = nullptr;
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_REDUCE_DIALOG_H_
