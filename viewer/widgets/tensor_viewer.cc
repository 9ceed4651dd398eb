#include "viewer/widgets/tensor_viewer.h"

#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPainter>
#include <QPalette>
#include <QSpinBox>
#include <QTableView>
#include <QFutureWatcher>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/ir/float_types.h"
#include "core/ir/primitive_type.h"
#include "core/text/printer.h"

namespace hlowb::viewer {
namespace {

PrimitiveType ComponentType(PrimitiveType t) {
  if (t == PrimitiveType::kC64) return PrimitiveType::kF32;
  if (t == PrimitiveType::kC128) return PrimitiveType::kF64;
  return t;
}

QString FloatText(double v) {
  if (std::isnan(v)) return QStringLiteral("nan");
  if (std::isinf(v)) return v > 0 ? QStringLiteral("inf") : QStringLiteral("-inf");
  return QString::number(v, 'g', 9);
}

// Leaves of a (possibly tuple) literal, named "name {i,j}".
void Flatten(const QString& name, const std::shared_ptr<const Literal>& root, const Literal& lit,
             const QString& path,
             std::vector<std::pair<QString, std::shared_ptr<const Literal>>>* out) {
  if (!lit.shape().IsTuple()) {
    if (&lit == root.get()) {
      out->emplace_back(name, root);
    } else {
      // An aliasing pointer: the leaf lives as long as the root.
      out->emplace_back(QStringLiteral("%1 {%2}").arg(name, path),
                        std::shared_ptr<const Literal>(root, &lit));
    }
    return;
  }
  const auto& elements = lit.tuple_elements();
  for (size_t i = 0; i < elements.size(); ++i) {
    Flatten(name, root, elements[i], path.isEmpty() ? QString::number(i)
                                                    : path + QLatin1Char(',') + QString::number(i),
            out);
  }
}

}  // namespace

double LiteralElementAsDouble(const Literal& literal, int64_t i) {
  const PrimitiveType t = literal.shape().element_type();
  if (i < 0 || i >= literal.element_count() || literal.elided() || literal.data().empty()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (t == PrimitiveType::kPred) return literal.GetBits(i) != 0 ? 1 : 0;
  if (IsComplex(t)) return FloatBitsToDouble(ComponentType(t), literal.GetBits(2 * i));
  if (IsFloatingPoint(t)) return FloatBitsToDouble(t, literal.GetBits(i));
  if (IsSignedIntegral(t)) return static_cast<double>(literal.GetInt(i));
  if (IsUnsignedIntegral(t)) return static_cast<double>(literal.GetBits(i));
  return std::numeric_limits<double>::quiet_NaN();
}

QString LiteralElementText(const Literal& literal, int64_t i) {
  const PrimitiveType t = literal.shape().element_type();
  if (i < 0 || i >= literal.element_count()) return QString();
  if (literal.elided() || literal.data().empty()) return QStringLiteral("…");
  if (t == PrimitiveType::kPred) {
    return literal.GetBits(i) != 0 ? QStringLiteral("true") : QStringLiteral("false");
  }
  if (IsComplex(t)) {
    const PrimitiveType c = ComponentType(t);
    return QStringLiteral("(%1, %2)")
        .arg(FloatText(FloatBitsToDouble(c, literal.GetBits(2 * i))),
             FloatText(FloatBitsToDouble(c, literal.GetBits(2 * i + 1))));
  }
  if (IsFloatingPoint(t)) return FloatText(FloatBitsToDouble(t, literal.GetBits(i)));
  if (IsSignedIntegral(t)) return QString::number(static_cast<qlonglong>(literal.GetInt(i)));
  if (IsUnsignedIntegral(t)) return QString::number(static_cast<qulonglong>(literal.GetBits(i)));
  return QStringLiteral("?");
}

namespace {

bool Difference(const Literal& a, const Literal& b, Literal* out) {
  if (a.shape().IsTuple() != b.shape().IsTuple()) return false;
  if (a.shape().IsTuple()) {
    if (a.tuple_elements().size() != b.tuple_elements().size()) return false;
    std::vector<Shape> shapes;
    std::vector<Literal> leaves;
    for (size_t i = 0; i < a.tuple_elements().size(); ++i) {
      Literal leaf;
      if (!Difference(a.tuple_elements()[i], b.tuple_elements()[i], &leaf)) return false;
      shapes.push_back(leaf.shape());
      leaves.push_back(std::move(leaf));
    }
    *out = Literal(Shape::Tuple(std::move(shapes)));
    *out->mutable_tuple_elements() = std::move(leaves);
    return true;
  }
  if (a.shape().dimensions() != b.shape().dimensions() || a.elided() || b.elided()) return false;
  *out = Literal(Shape::Array(PrimitiveType::kF64, a.shape().dimensions()));
  double* d = out->mutable_data_as<double>();
  for (int64_t i = 0; i < a.element_count(); ++i) {
    const double x = LiteralElementAsDouble(a, i), y = LiteralElementAsDouble(b, i);
    if ((std::isnan(x) && std::isnan(y)) || x == y) {
      d[i] = 0;
    } else if (!std::isfinite(x) || !std::isfinite(y)) {
      d[i] = std::numeric_limits<double>::infinity();
    } else {
      d[i] = std::fabs(x - y);
    }
  }
  return true;
}

}  // namespace

std::shared_ptr<const Literal> AbsoluteDifference(const Literal& a, const Literal& b) {
  auto out = std::make_shared<Literal>();
  if (!Difference(a, b, out.get())) return nullptr;
  return out;
}

TensorStatistics ComputeTensorStatistics(const Literal& literal, int bins) {
  TensorStatistics s;
  if (literal.shape().IsTuple() || literal.elided() || literal.data().empty()) return s;
  s.elements = literal.element_count();
  double sum = 0;
  bool first = true;
  for (int64_t i = 0; i < s.elements; ++i) {
    const double v = LiteralElementAsDouble(literal, i);
    if (std::isnan(v)) {
      ++s.nan_count;
    } else if (std::isinf(v)) {
      ++s.inf_count;
    } else {
      if (v == 0) ++s.zero_count;
      ++s.finite_count;
      sum += v;
      s.min = first ? v : std::min(s.min, v);
      s.max = first ? v : std::max(s.max, v);
      first = false;
    }
  }
  if (s.finite_count > 0) s.mean = sum / static_cast<double>(s.finite_count);
  if (bins <= 0 || s.finite_count == 0) return s;
  s.histogram.assign(bins, 0);
  const double width = s.max - s.min;
  for (int64_t i = 0; i < s.elements; ++i) {
    const double v = LiteralElementAsDouble(literal, i);
    if (!std::isfinite(v)) continue;
    int b = width > 0 ? static_cast<int>((v - s.min) / width * bins) : 0;
    ++s.histogram[std::clamp(b, 0, bins - 1)];
  }
  return s;
}

// TensorSliceModel ---------------------------------------------------------------------------

TensorSliceModel::TensorSliceModel(QObject* parent) : QAbstractTableModel(parent) {}

void TensorSliceModel::SetSlice(std::shared_ptr<const Literal> literal, int row_axis,
                                int column_axis, std::vector<int64_t> fixed) {
  beginResetModel();
  literal_ = std::move(literal);
  row_axis_ = row_axis;
  column_axis_ = column_axis;
  fixed_ = std::move(fixed);
  strides_.clear();
  if (literal_ && !literal_->shape().IsTuple()) {
    const auto& dims = literal_->shape().dimensions();
    strides_.assign(dims.size(), 1);
    for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d) {
      strides_[d] = strides_[d + 1] * dims[d + 1];
    }
    fixed_.resize(dims.size(), 0);
  }
  endResetModel();
}

int64_t TensorSliceModel::LinearIndex(int row, int column) const {
  if (!literal_) return -1;
  int64_t linear = 0;
  for (size_t d = 0; d < strides_.size(); ++d) {
    int64_t index = fixed_[d];
    if (static_cast<int>(d) == row_axis_) index = row;
    if (static_cast<int>(d) == column_axis_) index = column;
    linear += index * strides_[d];
  }
  return linear;
}

int TensorSliceModel::rowCount(const QModelIndex& parent) const {
  if (parent.isValid() || !literal_ || literal_->shape().IsTuple()) return 0;
  if (row_axis_ < 0) return 1;
  return static_cast<int>(std::min<int64_t>(literal_->shape().dimensions()[row_axis_],
                                            std::numeric_limits<int>::max()));
}

int TensorSliceModel::columnCount(const QModelIndex& parent) const {
  if (parent.isValid() || !literal_ || literal_->shape().IsTuple()) return 0;
  if (column_axis_ < 0) return 1;
  return static_cast<int>(std::min<int64_t>(literal_->shape().dimensions()[column_axis_],
                                            std::numeric_limits<int>::max()));
}

QVariant TensorSliceModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || !literal_) return {};
  const int64_t i = LinearIndex(index.row(), index.column());
  if (role == Qt::DisplayRole || role == Qt::ToolTipRole) return LiteralElementText(*literal_, i);
  if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
  if (role == Qt::BackgroundRole) {
    const double v = LiteralElementAsDouble(*literal_, i);
    if (std::isnan(v)) return QColor(0xEF, 0x9A, 0x9A);
    if (std::isinf(v)) return QColor(0xFF, 0xCC, 0x80);
  }
  if (role == Qt::ForegroundRole) {
    const double v = LiteralElementAsDouble(*literal_, i);
    if (!std::isfinite(v)) return QColor(Qt::black);
  }
  return {};
}

QVariant TensorSliceModel::headerData(int section, Qt::Orientation, int role) const {
  if (role != Qt::DisplayRole) return {};
  return QString::number(section);
}

// HistogramWidget ------------------------------------------------------------------------------

HistogramWidget::HistogramWidget(QWidget* parent) : QWidget(parent) {
  setMinimumHeight(60);
}

void HistogramWidget::SetStatistics(const TensorStatistics& statistics) {
  stats_ = statistics;
  update();
}

void HistogramWidget::paintEvent(QPaintEvent*) {
  QPainter p(this);
  const QRectF area = QRectF(rect()).adjusted(2, 2, -2, -16);
  p.fillRect(rect(), palette().color(QPalette::Base));
  p.setPen(palette().color(QPalette::Text));
  if (stats_.histogram.empty()) {
    p.drawText(rect(), Qt::AlignCenter, tr("no finite values"));
    return;
  }
  const int64_t peak = *std::max_element(stats_.histogram.begin(), stats_.histogram.end());
  const double bar = area.width() / static_cast<double>(stats_.histogram.size());
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0x42, 0x85, 0xF4));
  for (size_t b = 0; b < stats_.histogram.size(); ++b) {
    if (stats_.histogram[b] == 0 || peak == 0) continue;
    // Square-root scale, so small bins stay visible beside a dominant one.
    const double h = area.height() * std::sqrt(static_cast<double>(stats_.histogram[b]) /
                                               static_cast<double>(peak));
    p.drawRect(QRectF(area.left() + b * bar, area.bottom() - h, std::max(1.0, bar - 1), h));
  }
  p.setPen(palette().color(QPalette::Text));
  const QRectF labels(area.left(), area.bottom() + 1, area.width(), 14);
  p.drawText(labels, Qt::AlignLeft | Qt::AlignVCenter, FloatText(stats_.min));
  p.drawText(labels, Qt::AlignRight | Qt::AlignVCenter, FloatText(stats_.max));
}

// TensorViewer ---------------------------------------------------------------------------------

TensorViewer::TensorViewer(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  auto* top = new QFormLayout;
  value_ = new QComboBox;
  value_->setObjectName(QStringLiteral("tensorValue"));
  top->addRow(tr("Value"), value_);
  shape_ = new QLabel;
  shape_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  top->addRow(tr("Shape"), shape_);
  auto* axes = new QHBoxLayout;
  rows_ = new QComboBox;
  columns_ = new QComboBox;
  axes->addWidget(new QLabel(tr("rows")));
  axes->addWidget(rows_);
  axes->addWidget(new QLabel(tr("columns")));
  axes->addWidget(columns_);
  axes->addStretch();
  top->addRow(tr("Axes"), axes);
  slice_layout_ = new QHBoxLayout;
  top->addRow(tr("Slice"), slice_layout_);
  layout->addLayout(top);
  auto* middle = new QHBoxLayout;
  stats_label_ = new QLabel;
  stats_label_->setObjectName(QStringLiteral("tensorStatistics"));
  stats_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  stats_label_->setWordWrap(true);
  histogram_ = new HistogramWidget;
  middle->addWidget(stats_label_, 1);
  middle->addWidget(histogram_, 1);
  layout->addLayout(middle);
  table_ = new QTableView;
  table_->setObjectName(QStringLiteral("tensorTable"));
  model_ = new TensorSliceModel(this);
  table_->setModel(model_);
  table_->horizontalHeader()->setDefaultSectionSize(90);
  table_->verticalHeader()->setDefaultSectionSize(20);
  layout->addWidget(table_, 1);

  connect(value_, &QComboBox::currentIndexChanged, this, [this](int i) {
    if (!updating_) ShowValue(i);
  });
  auto axes_changed = [this] {
    if (updating_) return;
    if (!SetAxes(rows_->currentData().toInt(), columns_->currentData().toInt())) {
      // Not distinct: put back what is shown.
      updating_ = true;
      rows_->setCurrentIndex(rows_->findData(row_axis_));
      columns_->setCurrentIndex(columns_->findData(column_axis_));
      updating_ = false;
    }
  };
  connect(rows_, &QComboBox::currentIndexChanged, this, axes_changed);
  connect(columns_, &QComboBox::currentIndexChanged, this, axes_changed);
}

void TensorViewer::SetValues(
    const std::vector<std::pair<QString, std::shared_ptr<const Literal>>>& values) {
  leaves_.clear();
  for (const auto& [name, literal] : values) {
    if (literal) Flatten(name, literal, *literal, QString(), &leaves_);
  }
  ++values_generation_;
  stats_cache_.assign(leaves_.size(), std::nullopt);
  stats_pending_.assign(leaves_.size(), false);
  updating_ = true;
  value_->clear();
  for (const auto& [name, literal] : leaves_) {
    value_->addItem(QStringLiteral("%1  %2").arg(name, QString::fromStdString(
                                                           PrintShape(literal->shape(), false))));
  }
  updating_ = false;
  current_ = -1;
  if (!leaves_.empty()) {
    ShowValue(0);
  } else {
    Clear();
  }
}

void TensorViewer::Clear() {
  leaves_.clear();
  ++values_generation_;
  stats_cache_.clear();
  stats_pending_.clear();
  current_ = -1;
  updating_ = true;
  value_->clear();
  rows_->clear();
  columns_->clear();
  updating_ = false;
  stats_ = TensorStatistics();
  stats_ready_ = false;
  shape_->clear();
  stats_label_->clear();
  histogram_->SetStatistics(stats_);
  model_->SetSlice(nullptr, -1, -1, {});
  RebuildSliceControls();
}

QString TensorViewer::ValueName(int index) const {
  if (index < 0 || index >= value_count()) return QString();
  return leaves_[index].first;
}

bool TensorViewer::ShowValue(int index) {
  if (index < 0 || index >= value_count()) return false;
  current_ = index;
  const Literal& lit = *leaves_[index].second;
  const int rank = lit.shape().rank();
  row_axis_ = rank >= 1 ? (rank >= 2 ? rank - 2 : 0) : -1;
  column_axis_ = rank >= 2 ? rank - 1 : -1;
  fixed_.assign(rank, 0);
  if (!stats_cache_[index] && !stats_pending_[index]) {
    if (lit.element_count() < kAsyncStatistics) {
      stats_cache_[index] = ComputeTensorStatistics(lit);
    } else {
      // One pass over a large value: off the UI thread. The watcher dies with the viewer; a
      // result for replaced values is dropped.
      stats_pending_[index] = true;
      std::shared_ptr<const Literal> value = leaves_[index].second;
      auto* watcher = new QFutureWatcher<TensorStatistics>(this);
      const uint64_t generation = values_generation_;
      connect(watcher, &QFutureWatcher<TensorStatistics>::finished, this,
              [this, watcher, index, generation] {
                watcher->deleteLater();
                if (generation != values_generation_) return;
                stats_cache_[index] = watcher->result();
                stats_pending_[index] = false;
                if (current_ == index) ShowStatistics();
              });
      watcher->setFuture(QtConcurrent::run([value] { return ComputeTensorStatistics(*value); }));
    }
  }
  Rebuild();
  return true;
}

bool TensorViewer::SetAxes(int row_axis, int column_axis) {
  if (current_ < 0) return false;
  const int rank = leaves_[current_].second->shape().rank();
  if (row_axis < 0 || row_axis >= rank || column_axis >= rank || column_axis == row_axis ||
      (column_axis < 0 && rank >= 2)) {
    return false;
  }
  row_axis_ = row_axis;
  column_axis_ = column_axis;
  Rebuild();
  return true;
}

bool TensorViewer::SetSliceIndex(int dimension, int64_t index) {
  if (current_ < 0) return false;
  const auto& dims = leaves_[current_].second->shape().dimensions();
  if (dimension < 0 || dimension >= static_cast<int>(dims.size()) || dimension == row_axis_ ||
      dimension == column_axis_ || index < 0 || index >= dims[dimension]) {
    return false;
  }
  fixed_[dimension] = index;
  for (QSpinBox* spin : slice_spins_) {
    if (spin->property("dimension").toInt() == dimension) {
      updating_ = true;
      spin->setValue(static_cast<int>(index));
      updating_ = false;
    }
  }
  ApplySlice();
  return true;
}

QString TensorViewer::StatisticsText() const { return stats_label_->text(); }

void TensorViewer::Rebuild() {
  const Literal& lit = *leaves_[current_].second;
  const int rank = lit.shape().rank();
  updating_ = true;
  value_->setCurrentIndex(current_);
  rows_->clear();
  columns_->clear();
  for (int d = 0; d < rank; ++d) {
    const QString label =
        tr("dim %1 (%2)").arg(d).arg(static_cast<qlonglong>(lit.shape().dimensions()[d]));
    rows_->addItem(label, d);
    columns_->addItem(label, d);
  }
  if (rank < 2) columns_->addItem(tr("none"), -1);
  rows_->setCurrentIndex(rows_->findData(row_axis_));
  columns_->setCurrentIndex(columns_->findData(column_axis_));
  rows_->setEnabled(rank >= 2);
  columns_->setEnabled(rank >= 2);
  updating_ = false;
  shape_->setText(QString::fromStdString(PrintShape(lit.shape(), true)) +
                  (lit.elided() ? tr("  (data not recorded)") : QString()));
  ShowStatistics();
  RebuildSliceControls();
  ApplySlice();
}

void TensorViewer::ShowStatistics() {
  stats_ready_ = current_ >= 0 && stats_cache_[current_].has_value();
  stats_ = stats_ready_ ? *stats_cache_[current_] : TensorStatistics();
  if (!stats_ready_) {
    stats_label_->setText(tr("%1 elements\ncomputing statistics…")
                              .arg(static_cast<qlonglong>(
                                  current_ >= 0 ? leaves_[current_].second->element_count() : 0)));
    histogram_->SetStatistics(stats_);
    return;
  }
  QString text = tr("%1 elements").arg(static_cast<qlonglong>(stats_.elements));
  text += tr("\nNaN: %1   Inf: %2   zeros: %3")
              .arg(static_cast<qlonglong>(stats_.nan_count))
              .arg(static_cast<qlonglong>(stats_.inf_count))
              .arg(static_cast<qlonglong>(stats_.zero_count));
  if (stats_.finite_count > 0) {
    text += tr("\nmin %1   max %2   mean %3")
                .arg(FloatText(stats_.min), FloatText(stats_.max), FloatText(stats_.mean));
  }
  stats_label_->setText(text);
  histogram_->SetStatistics(stats_);
}

void TensorViewer::RebuildSliceControls() {
  slice_spins_.clear();  // the loop below deletes them with the labels
  while (QLayoutItem* item = slice_layout_->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  if (current_ < 0) return;
  const auto& dims = leaves_[current_].second->shape().dimensions();
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (d == row_axis_ || d == column_axis_) continue;
    slice_layout_->addWidget(new QLabel(tr("dim %1").arg(d)));
    auto* spin = new QSpinBox;
    spin->setRange(0, static_cast<int>(std::min<int64_t>(dims[d] - 1, 1 << 30)));
    spin->setValue(static_cast<int>(fixed_[d]));
    spin->setProperty("dimension", d);
    connect(spin, &QSpinBox::valueChanged, this, [this, d](int v) {
      if (!updating_) SetSliceIndex(d, v);
    });
    slice_layout_->addWidget(spin);
    slice_spins_.push_back(spin);
  }
  slice_layout_->addStretch();
}

void TensorViewer::ApplySlice() {
  if (current_ < 0) return;
  model_->SetSlice(leaves_[current_].second, row_axis_, column_axis_, fixed_);
}

}  // namespace hlowb::viewer
