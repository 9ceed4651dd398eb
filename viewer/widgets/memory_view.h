// The memory view (a dock): a module's memory over its schedule from a finished MemoryProfile
// (core/analysis/memory_profile.h). A chart of live bytes per program point, stacked by
// allocation or by buffer (the largest few, the rest summed as "other", so huge modules stay
// drawable), with the peak marked and XLA's peak point marked where it differs; the buffers live
// at the peak, largest first; totals by allocation kind; and a summary of the peak, XLA's
// measure and the files' stated figures, with their disagreements as a warning. Given a
// baseline (the same module before a pass, or any other state), the peak and the totals show
// before, after and the change.
//
// Clicking the chart asks to select the instruction at that program point; clicking a buffer
// asks to select its defining instruction (instructionActivated). The chart and the summary are
// prepared off the UI thread (the chart as an image per size and mode; results of a replaced
// profile, mode or size are dropped), so the UI thread only copies finished pictures.
//
// Deliberately not here: reading XLA's files or computing a buffer assignment (the window does
// that off the UI thread, app/gui/memory_source.h), and finding the instruction in a module.
#ifndef HLOWB_VIEWER_WIDGETS_MEMORY_VIEW_H_
#define HLOWB_VIEWER_WIDGETS_MEMORY_VIEW_H_

#include <QPoint>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <cstdint>
#include <memory>

#include "core/analysis/memory_profile.h"

class QComboBox;
class QLabel;
class QModelIndex;
class QProgressBar;
class QTableView;
class QTableWidget;

namespace hlowb::viewer {

class MemoryView : public QWidget {
  Q_OBJECT

 public:
  enum class StackBy { kAllocation, kBuffer };
  // Series stacked at most; the rest of the live bytes is one "other" series.
  static constexpr int kMaxSeries = 12;

  explicit MemoryView(QWidget* parent = nullptr);
  ~MemoryView() override;

  // Shows `profile` (finished; null: Clear); `label` names the state, e.g.
  // "jit_f: after_optimizations".
  void SetProfile(std::shared_ptr<const MemoryProfile> profile, const QString& label);
  // The state to compare with (before a pass, say): the peak and the totals by kind then show
  // before, after and the change, and the chart marks the baseline's peak. Null: no comparison.
  void SetBaseline(std::shared_ptr<const MemoryProfile> base, const QString& base_label);
  // While a profile is being computed: the message and a busy bar instead of a profile.
  void SetBusy(const QString& message);
  // A profile could not be made: why, instead of a profile.
  void SetError(const QString& message);
  // Nothing shown, baseline dropped.
  void Clear();
  void SetStackBy(StackBy by);
  StackBy stack_by() const { return stack_by_; }

  std::shared_ptr<const MemoryProfile> profile() const { return profile_; }
  std::shared_ptr<const MemoryProfile> baseline() const { return baseline_; }
  QString label() const { return label_; }
  // True while the chart or the summary is being prepared (or a re-render is due).
  bool IsRendering() const;
  bool busy() const { return state_ == State::kBusy; }
  bool HasError() const { return state_ == State::kError; }
  // The busy or error message (empty while a profile is shown).
  QString MessageText() const;
  // The summary as plain text (one line per figure) and the warnings (disagreements between
  // the files' stated figures and what their allocations and live ranges give; notes).
  QString SummaryText() const;
  QString WarningText() const;
  // The stacked series of the chart shown, bottom first ("other" last when drawn).
  QStringList SeriesNames() const;
  // Where the peak marker is drawn, in this widget's coordinates; (-1, -1) without a chart.
  QPoint PeakPosition() const;
  // Where XLA's peak point is marked (only when it differs from the peak); (-1, -1) if not.
  QPoint XlaPeakPosition() const;
  // The program point the chart shows at `pos` (this widget's coordinates); -1 off the chart.
  int64_t PointAt(const QPoint& pos) const;
  // The hover text at `pos` (this widget's coordinates): point, instruction, live bytes.
  QString ToolTipAt(const QPoint& pos) const;
  // The chart's x position of program point `point` (this widget's coordinates), halfway up the
  // plot; (-1, -1) when not shown.
  QPoint PointPosition(int64_t point) const;
  // Marks the program point of instruction `name` on the chart (the window's selection), as a
  // line across the plot; an empty name, or one that no point has, marks nothing. Kept across
  // profiles: each new one is searched for the same name.
  void SetMarkedInstruction(const QString& name);
  // The marked program point; -1 when none.
  int64_t marked_point() const { return marked_point_; }

  QTableView* buffer_table() const { return buffer_table_; }
  QTableWidget* totals_table() const { return totals_table_; }
  QComboBox* stack_by_box() const { return stack_by_box_; }
  QWidget* chart() const;

 signals:
  // Select `name` in the graph and the text: the instruction at a clicked program point, or a
  // clicked buffer's defining instruction. Never emitted with an empty name (the end of the
  // program has no instruction).
  void instructionActivated(const QString& name);
  // A chart image for the current profile, mode and size is shown.
  void chartRendered();

 protected:
  // Clicks sent to the view itself over the chart act as clicks on the chart.
  void mousePressEvent(QMouseEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  enum class State { kEmpty, kBusy, kError, kProfile };
  class Chart;
  class BufferModel;
  struct Summary;

  void ShowState(State state, const QString& message);
  void Rebuild();  // after the profile, baseline or mode changed
  void FillTotals();
  void StartSummary();
  void ApplySummary(uint64_t generation, const std::shared_ptr<const Summary>& summary);
  static std::shared_ptr<const Summary> BuildSummary(std::shared_ptr<const MemoryProfile> profile,
                                                     std::shared_ptr<const MemoryProfile> base,
                                                     const QString& base_label);
  void OnChartRendered();  // updates the legend
  void OnBufferClicked(const QModelIndex& index);
  // This widget's coordinates <-> the chart's.
  QPoint ToChart(const QPoint& pos) const;
  QPoint FromChart(const QPoint& pos) const;

  State state_ = State::kEmpty;
  StackBy stack_by_ = StackBy::kAllocation;
  std::shared_ptr<const MemoryProfile> profile_;
  std::shared_ptr<const MemoryProfile> baseline_;
  QString marked_name_;
  int64_t marked_point_ = -1;
  void ResolveMarkedPoint();
  QString label_;
  QString base_label_;
  uint64_t summary_generation_ = 0;
  bool summary_pending_ = false;

  QLabel* title_ = nullptr;
  QLabel* message_ = nullptr;
  QProgressBar* busy_bar_ = nullptr;
  QWidget* content_ = nullptr;
  QLabel* summary_ = nullptr;
  QLabel* warnings_ = nullptr;
  QLabel* legend_ = nullptr;
  QComboBox* stack_by_box_ = nullptr;
  Chart* chart_ = nullptr;
  BufferModel* buffer_model_ = nullptr;
  QTableView* buffer_table_ = nullptr;
  QLabel* buffer_caption_ = nullptr;
  QTableWidget* totals_table_ = nullptr;
  QString summary_text_;
  QString warning_text_;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_MEMORY_VIEW_H_
