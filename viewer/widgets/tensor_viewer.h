// The tensor viewer: looks inside replay values (a run's outputs, an instruction's captured
// result). One value at a time is shown as
//   - a 2-D slice in a table: any dimension on the rows, any other on the columns, and an index
//     for each remaining dimension; NaN and Inf cells are coloured;
//   - its statistics: element count, NaN, Inf and zero counts, min, max and mean of the finite
//     values;
//   - a histogram of the finite values (the NaN/Inf counts beside it).
// Tuple values are offered leaf by leaf ("result {1}"). The table reads elements lazily, so a
// large value costs nothing until it is scrolled; the statistics and histogram take one pass,
// on a worker thread for values of a million elements or more (the view says "computing…"
// meanwhile and fills in when they arrive).
#ifndef HLOWB_VIEWER_WIDGETS_TENSOR_VIEWER_H_
#define HLOWB_VIEWER_WIDGETS_TENSOR_VIEWER_H_

#include <QAbstractTableModel>
#include <QString>
#include <QWidget>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/ir/literal.h"

class QComboBox;
class QLabel;
class QSpinBox;
class QTableView;
class QHBoxLayout;

namespace hlowb::viewer {

// One element of an array literal: its value as a double (the real part for complex types;
// 0/1 for pred) and as display text.
double LiteralElementAsDouble(const Literal& literal, int64_t linear_index);
QString LiteralElementText(const Literal& literal, int64_t linear_index);

// |a − b| elementwise as f64 (tuples leaf by leaf), for showing how a result differs from its
// reference; null when the shapes' dimensions differ. Equal values, including equal infinities
// and two NaNs, give 0; a NaN or infinity on one side only gives +inf.
std::shared_ptr<const Literal> AbsoluteDifference(const Literal& a, const Literal& b);

struct TensorStatistics {
  int64_t elements = 0;
  int64_t nan_count = 0;
  int64_t inf_count = 0;
  int64_t zero_count = 0;
  int64_t finite_count = 0;
  double min = 0, max = 0, mean = 0;  // over finite values
  std::vector<int64_t> histogram;     // finite values in equal bins from min to max
};
TensorStatistics ComputeTensorStatistics(const Literal& literal, int bins = 32);

// The rows × columns slice of an array literal.
class TensorSliceModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  explicit TensorSliceModel(QObject* parent = nullptr);
  // `row_axis` / `column_axis`: dimensions (column_axis -1 for a single column); `fixed`: an
  // index for every dimension (those of the two axes are ignored).
  void SetSlice(std::shared_ptr<const Literal> literal, int row_axis, int column_axis,
                std::vector<int64_t> fixed);
  // The linear element index of a cell.
  int64_t LinearIndex(int row, int column) const;

  int rowCount(const QModelIndex& parent = QModelIndex()) const override;
  int columnCount(const QModelIndex& parent = QModelIndex()) const override;
  QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
  QVariant headerData(int section, Qt::Orientation orientation,
                      int role = Qt::DisplayRole) const override;

 private:
  std::shared_ptr<const Literal> literal_;
  int row_axis_ = -1, column_axis_ = -1;
  std::vector<int64_t> fixed_;
  std::vector<int64_t> strides_;
};

// Draws a histogram's bars.
class HistogramWidget : public QWidget {
  Q_OBJECT

 public:
  explicit HistogramWidget(QWidget* parent = nullptr);
  void SetStatistics(const TensorStatistics& statistics);
  QSize sizeHint() const override { return QSize(240, 90); }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  TensorStatistics stats_;
};

class TensorViewer : public QWidget {
  Q_OBJECT

 public:
  explicit TensorViewer(QWidget* parent = nullptr);

  // Replaces the values offered; tuples are split into their array leaves. Shows the first.
  void SetValues(const std::vector<std::pair<QString, std::shared_ptr<const Literal>>>& values);
  void Clear();
  int value_count() const { return static_cast<int>(leaves_.size()); }
  QString ValueName(int index) const;
  bool ShowValue(int index);
  int current_value() const { return current_; }
  // Puts dimension `row_axis` on the rows and `column_axis` (-1: none) on the columns; false
  // when they are not distinct dimensions of the shown value.
  bool SetAxes(int row_axis, int column_axis);
  // The index of a dimension that is on neither axis; false when out of range.
  bool SetSliceIndex(int dimension, int64_t index);

  // The shown value's statistics; empty until statistics_ready() for large values.
  const TensorStatistics& statistics() const { return stats_; }
  bool statistics_ready() const { return stats_ready_; }
  QString StatisticsText() const;
  TensorSliceModel* slice_model() const { return model_; }
  QTableView* table() const { return table_; }

 private:
  void Rebuild();
  void RebuildSliceControls();
  void ApplySlice();
  void ShowStatistics();

  static constexpr int64_t kAsyncStatistics = int64_t{1} << 20;

  std::vector<std::pair<QString, std::shared_ptr<const Literal>>> leaves_;
  int current_ = -1;
  int row_axis_ = 0, column_axis_ = 1;
  std::vector<int64_t> fixed_;
  TensorStatistics stats_;
  bool stats_ready_ = false;
  // Per leaf: statistics once known; a leaf computed in the background is marked pending.
  std::vector<std::optional<TensorStatistics>> stats_cache_;
  std::vector<bool> stats_pending_;
  uint64_t values_generation_ = 0;

  QComboBox* value_ = nullptr;
  QLabel* shape_ = nullptr;
  QComboBox* rows_ = nullptr;
  QComboBox* columns_ = nullptr;
  QHBoxLayout* slice_layout_ = nullptr;
  std::vector<QSpinBox*> slice_spins_;
  QLabel* stats_label_ = nullptr;
  HistogramWidget* histogram_ = nullptr;
  QTableView* table_ = nullptr;
  TensorSliceModel* model_ = nullptr;
  bool updating_ = false;
};

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_WIDGETS_TENSOR_VIEWER_H_
