// The replay panel: what to run (a comparison, the NaN/Inf locator, per-instruction isolation
// or a bisection of the compiler passes) against what (reference platform, data, seed,
// tolerances, devices and their argument mode), a Run / Cancel pair with progress, and the
// outcome in tabs:
//   Report        the verdict (MATCHED, MISMATCH, RAN, ...) and the report text, or the error
//                 with the last instruction the run reached, a way to save a reproducer, and
//                 after a failed run, Reduce… (shrink the module while it fails that way);
//   Values        the tensor viewer over the outputs and a captured instruction's value;
//   Instructions  per-instruction time, executions and NaN/Inf counts of a profiled run;
//   Isolation     run_hlo_module's isolation table, a row per instruction;
//   Passes        the pass bisection, a row per state with its verdict.
// Rows name instructions or states; activating one asks the window to show it. A heat-map
// choice asks the window to colour the graph by time, NaN/Inf or isolation error. It only shows
// and asks: the window's replay controller runs the work in the worker process and feeds the
// results back as plain values.
#ifndef HLOWB_VIEWER_WIDGETS_REPLAY_PANEL_H_
#define HLOWB_VIEWER_WIDGETS_REPLAY_PANEL_H_

#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/ir/literal.h"

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QLabel;
class QPlainTextEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;

namespace hlowb::viewer {

class TensorViewer;
class ResultTableModel;

enum class ReplayMode { kCompare, kFindNonfinite, kIsolate, kBisectPasses };

// What the heat map colours the graph by.
enum class HeatMetric { kOff, kTime, kNonfinite, kIsolationError };

struct ReplaySettings {
  ReplayMode mode = ReplayMode::kCompare;
  QString platform = QStringLiteral("interpreter");  // the backend under test
  QString reference_platform;  // empty: no reference run
  bool force_fake_data = false;
  uint64_t seed = 42;
  double abs_error = 0;  // 0: the comparison's default
  double rel_error = 0;
  QString host_transfers = QStringLiteral("error");
  bool profile = true;          // per-instruction time and statistics (the heat map's data)
  bool capture_selected = true;  // keep the selected instruction's value for the viewer
  int64_t num_replicas = 0;      // 0: the module's
  int64_t num_partitions = 0;
  QString argument_mode;         // --hlo_argument_mode; empty: the usual choice
};

struct ProfileRowView {
  QString name, computation;
  double seconds = 0;
  int64_t executions = 0;
  int64_t nan_count = 0, inf_count = 0, elements = 0;
  double min = 0, max = 0;
};

struct IsolationRowView {
  QString name, opcode, reference_status, test_status, detail;
  int64_t mismatches = 0;
  double max_abs_error = 0, max_rel_error = 0;
};

struct BisectRowView {
  QString label, pass, verdict, detail;
  double max_abs_error = 0, max_rel_error = 0;
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
  // Whether the Passes mode can run (the open document is a dump directory).
  void SetBisectAvailable(bool available);
  // Real XLA's CPU backend ("xla-cpu", a helper process running the installed jax) as backend
  // and reference: offered when found; otherwise listed disabled, its tooltip saying why.
  void SetXlaCpuAvailable(bool available, const QString& detail);
  // The cuda platform (an NVIDIA GPU through its driver) as backend and reference: offered when
  // a GPU was found, `detail` then naming the device ("NVIDIA H200 (sm_90, ...)"); otherwise
  // listed disabled ("cuda (no GPU)"), its tooltip (`detail`) saying what is missing. Starts
  // disabled until the window has looked.
  void SetCudaAvailable(bool available, const QString& detail);
  void SetMode(ReplayMode mode);
  // Offers Reduce… for the run just shown: `until` is the failure a reduction keeps ("mismatch",
  // "nonfinite", "crash" or "error"); empty withdraws it. Running and Clear() withdraw it too.
  void SetReducible(const QString& until);
  QString reducible() const { return reduce_until_; }

  // Result tabs. Each replaces what the tab showed; an empty list empties it.
  void ShowValues(const std::vector<std::pair<QString, std::shared_ptr<const Literal>>>& values);
  void ShowProfile(std::vector<ProfileRowView> rows);
  void ShowIsolation(std::vector<IsolationRowView> rows, const QString& table_text);
  void ShowBisect(std::vector<BisectRowView> rows, int first_divergent);
  // The run the following Show* calls' results come from ("run 2: NaN/Inf locator on
  // interpreter, 0007 fusion: priority-fusion"): each result table says it above its rows, so
  // no table passes off an earlier run's numbers as the latest (Clear() forgets it).
  void SetResultsSource(const QString& run);
  QString profile_source() const;
  QString isolation_source() const;
  QString bisect_source() const;
  void SetHeatMetric(HeatMetric metric);
  HeatMetric heat_metric() const;
  // Whether the user chose "off" in the heat-map box (and has not chosen a measure since): the
  // window then leaves the heat map off instead of following each run's measure.
  bool heat_map_turned_off() const { return heat_turned_off_; }
  const std::vector<ProfileRowView>& profile_rows() const { return profile_rows_; }
  const std::vector<IsolationRowView>& isolation_rows() const { return isolation_rows_; }
  const std::vector<BisectRowView>& bisect_rows() const { return bisect_rows_; }

  // For tests and the window.
  QString Verdict() const;
  QString Details() const;
  TensorViewer* tensor_viewer() const { return tensors_; }
  QTabWidget* tabs() const { return tabs_; }
  // The result tables (sortable; a row's first column names its instruction or state).
  QTableView* profile_table() const { return profile_table_; }
  QTableView* isolation_table() const { return isolation_table_; }
  QTableView* bisect_table() const { return bisect_table_; }
  QComboBox* mode_box() const { return mode_; }
  QSpinBox* replicas_box() const { return replicas_; }
  QSpinBox* partitions_box() const { return partitions_; }
  QComboBox* argument_mode_box() const { return argument_mode_; }
  QPushButton* bundle_button() const { return bundle_; }
  QPushButton* reduce_button() const { return reduce_; }
  QPushButton* run_button() const { return run_; }
  QPushButton* cancel_button() const { return cancel_; }
  QPushButton* save_button() const { return save_; }
  bool running() const { return running_; }

 signals:
  void runRequested(const hlowb::viewer::ReplaySettings& settings);
  void cancelRequested();
  void saveReproducerRequested();
  void exportBundleRequested();
  // Reduce… was pressed: shrink the module while it keeps failing with `until`.
  void reduceRequested(const QString& until);
  // A row naming an instruction (by name) or a timeline state (by label) was activated.
  void instructionActivated(const QString& name);
  void stateActivated(const QString& label);
  void heatMetricChanged(hlowb::viewer::HeatMetric metric);
  // The user chose `metric` in the heat-map box (heatMetricChanged has been emitted before).
  void heatMetricChosen(hlowb::viewer::HeatMetric metric);

 private:
  QComboBox* platform_ = nullptr;
  QComboBox* reference_ = nullptr;
  QComboBox* data_ = nullptr;
  QSpinBox* seed_ = nullptr;
  QDoubleSpinBox* abs_ = nullptr;
  QDoubleSpinBox* rel_ = nullptr;
  QComboBox* host_ = nullptr;
  QComboBox* mode_ = nullptr;
  QCheckBox* profile_ = nullptr;
  QCheckBox* capture_ = nullptr;
  QSpinBox* replicas_ = nullptr;
  QSpinBox* partitions_ = nullptr;
  QComboBox* argument_mode_ = nullptr;
  QComboBox* heat_ = nullptr;
  bool heat_turned_off_ = false;
  QString results_source_;
  QLabel* profile_source_ = nullptr;
  QLabel* isolation_source_ = nullptr;
  QLabel* bisect_source_ = nullptr;
  QPushButton* bundle_ = nullptr;
  QPushButton* reduce_ = nullptr;
  QString reduce_until_;
  QTabWidget* tabs_ = nullptr;
  TensorViewer* tensors_ = nullptr;
  QTableView* profile_table_ = nullptr;
  QTableView* isolation_table_ = nullptr;
  QTableView* bisect_table_ = nullptr;
  ResultTableModel* profile_model_ = nullptr;
  ResultTableModel* isolation_model_ = nullptr;
  ResultTableModel* bisect_model_ = nullptr;
  QPlainTextEdit* isolation_text_ = nullptr;
  std::vector<ProfileRowView> profile_rows_;
  std::vector<IsolationRowView> isolation_rows_;
  std::vector<BisectRowView> bisect_rows_;
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
