// The replay panel: what to run against what (reference platform, data, seed, tolerances), a
// Run / Cancel pair with progress, and the outcome — a verdict (MATCHED, MISMATCH, RAN) with
// the comparison report, or the error with the last instruction the run reached and a way to
// save a reproducer. It only shows and asks: the window's replay controller runs the replay
// in the worker process and feeds the results back as plain values.
#ifndef HLOWB_VIEWER_WIDGETS_REPLAY_PANEL_H_
#define HLOWB_VIEWER_WIDGETS_REPLAY_PANEL_H_

#include <QString>
#include <QWidget>
#include <cstdint>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;

namespace hlowb::viewer {

struct ReplaySettings {
  QString reference_platform;  // empty: no reference run
  bool force_fake_data = false;
  uint64_t seed = 42;
  double abs_error = 0;  // 0: the comparison's default
  double rel_error = 0;
  QString host_transfers = QStringLiteral("error");
  bool find_nonfinite = false;  // locate the first NaN/Inf instead of comparing
};

class ReplayPanel : public QWidget {
  Q_OBJECT

 public:
  explicit ReplayPanel(QWidget* parent = nullptr);

  ReplaySettings Settings() const;
  void SetRunning(bool running);
  void SetProgress(qint64 done, qint64 total, const QString& what);
  // `verdict`: "MATCHED", "MISMATCH" or "RAN"; `details`: the comparison report and warnings.
  void ShowResult(const QString& verdict, const QString& details);
  void ShowError(const QString& message, const QString& last_instruction);
  void Clear();

  // For tests and the window.
  QString Verdict() const;
  QString Details() const;
  QPushButton* run_button() const { return run_; }
  QPushButton* cancel_button() const { return cancel_; }
  QPushButton* save_button() const { return save_; }
  QCheckBox* find_nonfinite_box() const { return nonfinite_; }
  bool running() const { return running_; }

 signals:
  void runRequested(const hlowb::viewer::ReplaySettings& settings);
  void cancelRequested();
  void saveReproducerRequested();

 private:
  QComboBox* reference_ = nullptr;
  QComboBox* data_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QDoubleSpinBox* abs_ = nullptr;
  QDoubleSpinBox* rel_ = nullptr;
  QComboBox* host_ = nullptr;
  QCheckBox* nonfinite_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QPushButton* save_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QLabel* verdict_ = nullptr;
  QPlainTextEdit* details_ = nullptr;
  bool running_ = false;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_REPLAY_PANEL_H_
