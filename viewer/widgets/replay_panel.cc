#include "viewer/widgets/replay_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QHeaderView>
#include <QStandardItemModel>
#include <QSpinBox>
#include <QTabWidget>
#include <QSortFilterProxyModel>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "viewer/widgets/tensor_viewer.h"

namespace hlowb::viewer {
namespace {

// "From run 2: …", or what that run did not produce; empty before any run.
QString SourceCaption(const QString& run, bool has_rows, const QString& missing) {
  if (run.isEmpty()) return QString();
  return has_rows ? ReplayPanel::tr("From %1").arg(run)
                  : ReplayPanel::tr("%1: %2").arg(run, missing);
}

QString ErrorText(double v) {
  if (v == 0) return QStringLiteral("0");
  return QString::number(v, 'g', 4);
}

QColor StatusColor(const QString& status) {
  if (status == QLatin1String("MISMATCH") || status == QLatin1String("DIVERGED") ||
      status.endsWith(QLatin1String("ERROR")) || status == QLatin1String("FAILED")) {
    return QColor(0xEF, 0x9A, 0x9A);
  }
  if (status == QLatin1String("MATCHED") || status == QLatin1String("MATCH")) {
    return QColor(0xC8, 0xE6, 0xC9);
  }
  if (status == QLatin1String("SKIPPED")) return QColor(0xFF, 0xE0, 0xB2);
  return QColor();
}

}  // namespace

// A read-only table of result rows, built in one step however many rows there are: text per
// cell, a sort key (numbers sort as numbers), an optional background, and one bold row.
class ResultTableModel : public QAbstractTableModel {
 public:
  struct Cell {
    QString text;
    QVariant key;  // null: sort by the text
    QColor background;
  };
  ResultTableModel(QStringList headers, QObject* parent)
      : QAbstractTableModel(parent), headers_(std::move(headers)) {}

  void SetRows(std::vector<std::vector<Cell>> rows, int bold_row = -1) {
    beginResetModel();
    rows_ = std::move(rows);
    bold_row_ = bold_row;
    endResetModel();
  }

  int rowCount(const QModelIndex& parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
  }
  int columnCount(const QModelIndex& parent = QModelIndex()) const override {
    return parent.isValid() ? 0 : static_cast<int>(headers_.size());
  }
  QVariant data(const QModelIndex& index, int role) const override {
    if (!index.isValid() || index.row() >= rowCount() ||
        index.column() >= static_cast<int>(rows_[index.row()].size())) {
      return {};
    }
    const Cell& c = rows_[index.row()][index.column()];
    switch (role) {
      case Qt::DisplayRole:
      case Qt::ToolTipRole:
        return c.text;
      case Qt::UserRole:
        return c.key.isNull() ? QVariant(c.text) : c.key;
      case Qt::BackgroundRole:
        return c.background.isValid() ? QVariant(c.background) : QVariant();
      case Qt::ForegroundRole:
        return c.background.isValid() ? QVariant(QColor(Qt::black)) : QVariant();
      case Qt::TextAlignmentRole:
        return c.key.isNull() ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
      case Qt::FontRole:
        if (index.row() == bold_row_) {
          QFont bold;
          bold.setBold(true);
          return bold;
        }
        return {};
      default:
        return {};
    }
  }
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole || section >= headers_.size()) {
      return {};
    }
    return headers_[section];
  }

 private:
  QStringList headers_;
  std::vector<std::vector<Cell>> rows_;
  int bold_row_ = -1;
};

namespace {

QTableView* NewResultView(const QString& object_name, ResultTableModel* model, QObject* parent) {
  auto* view = new QTableView;
  view->setObjectName(object_name);
  auto* proxy = new QSortFilterProxyModel(parent);
  proxy->setSourceModel(model);
  proxy->setSortRole(Qt::UserRole);
  view->setModel(proxy);
  view->setSortingEnabled(true);
  view->sortByColumn(-1, Qt::AscendingOrder);  // the model's order until a header is clicked
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->verticalHeader()->setVisible(false);
  view->verticalHeader()->setDefaultSectionSize(20);
  view->horizontalHeader()->setStretchLastSection(true);
  return view;
}

ResultTableModel::Cell Text(const QString& text, QColor background = QColor()) {
  return {text, QVariant(), background};
}
ResultTableModel::Cell Number(double key, const QString& text) { return {text, key, QColor()}; }

}  // namespace

ReplayPanel::ReplayPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* form = new QFormLayout;
  mode_ = new QComboBox;
  mode_->setObjectName(QStringLiteral("replayMode"));
  mode_->addItem(tr("Compare outputs"), static_cast<int>(ReplayMode::kCompare));
  mode_->addItem(tr("Find the first NaN/Inf"), static_cast<int>(ReplayMode::kFindNonfinite));
  mode_->addItem(tr("Isolate each instruction"), static_cast<int>(ReplayMode::kIsolate));
  mode_->addItem(tr("Bisect the passes (dump directory)"),
                 static_cast<int>(ReplayMode::kBisectPasses));
  form->addRow(tr("Run"), mode_);
  platform_ = new QComboBox;
  platform_->setObjectName(QStringLiteral("replayPlatform"));
  platform_->addItem(QStringLiteral("interpreter"), QStringLiteral("interpreter"));
  platform_->addItem(tr("cpu (compiled with LLVM)"), QStringLiteral("cpu"));
  platform_->setItemData(1,
                         tr("The module compiled for this CPU: the cpu pass pipeline, LLVM kernels, "
                            "OpenBLAS for dots and convolutions"),
                         Qt::ToolTipRole);
  platform_->addItem(QStringLiteral("cuda"), QStringLiteral("cuda"));
  platform_->addItem(tr("xla-cpu (real XLA, helper process)"), QStringLiteral("xla-cpu"));
  form->addRow(tr("Backend"), platform_);
  reference_ = new QComboBox;
  reference_->setObjectName(QStringLiteral("replayReference"));
  reference_->addItem(tr("none"), QString());
  reference_->addItem(QStringLiteral("interpreter"), QStringLiteral("interpreter"));
  reference_->addItem(QStringLiteral("cpu"), QStringLiteral("cpu"));
  reference_->addItem(QStringLiteral("cuda"), QStringLiteral("cuda"));
  reference_->addItem(QStringLiteral("xla-cpu"), QStringLiteral("xla-cpu"));
  reference_->setCurrentIndex(1);
  SetXlaCpuAvailable(false, tr("Real XLA needs jax: run scripts/setup (it makes .venv) or set "
                               "HLOWB_PYTHON to a Python with jax"));
  SetCudaAvailable(false, tr("Looking for an NVIDIA GPU and its driver…"));
  form->addRow(tr("Compare with"), reference_);
  data_ = new QComboBox;
  data_->setObjectName(QStringLiteral("replayData"));
  data_->addItem(tr("snapshot arguments when present"), false);
  data_->setItemData(0,
                     tr("A snapshot file's own arguments; for a dump state, those of a snapshot "
                        "in the dump whose module matches it (same fingerprint, else the same "
                        "parameter shapes); else generated data"),
                     Qt::ToolTipRole);
  data_->addItem(tr("fake data"), true);
  form->addRow(tr("Data"), data_);
  seed_ = new QSpinBox;
  seed_->setRange(0, 1 << 30);
  seed_->setValue(42);
  form->addRow(tr("Seed"), seed_);
  abs_ = new QDoubleSpinBox;
  abs_->setDecimals(8);
  abs_->setRange(0, 1e9);
  abs_->setSpecialValueText(tr("default"));
  form->addRow(tr("Absolute error bound"), abs_);
  rel_ = new QDoubleSpinBox;
  rel_->setDecimals(8);
  rel_->setRange(0, 1e9);
  rel_->setSpecialValueText(tr("default"));
  form->addRow(tr("Relative error bound"), rel_);
  host_ = new QComboBox;
  host_->addItem(tr("stop"), QStringLiteral("error"));
  host_->addItem(tr("zeros"), QStringLiteral("zeros"));
  host_->addItem(tr("fake data"), QStringLiteral("fake"));
  form->addRow(tr("Infeed / host recv"), host_);
  auto* devices = new QHBoxLayout;
  replicas_ = new QSpinBox;
  replicas_->setRange(0, 4096);
  replicas_->setSpecialValueText(tr("module's"));
  partitions_ = new QSpinBox;
  partitions_->setRange(0, 4096);
  partitions_->setSpecialValueText(tr("module's"));
  devices->addWidget(new QLabel(tr("replicas")));
  devices->addWidget(replicas_);
  devices->addWidget(new QLabel(tr("partitions")));
  devices->addWidget(partitions_);
  devices->addStretch();
  form->addRow(tr("Devices"), devices);
  argument_mode_ = new QComboBox;
  argument_mode_->addItem(tr("as Data says"), QString());
  for (const char* mode : {"use_random_inputs", "use_shared_random_inputs", "use_zeros_as_input",
                           "use_device_id_as_input", "uninitialized"}) {
    argument_mode_->addItem(QString::fromLatin1(mode), QString::fromLatin1(mode));
  }
  form->addRow(tr("Per-device arguments"), argument_mode_);
  profile_ = new QCheckBox(tr("Profile every instruction (heat map)"));
  profile_->setChecked(true);
  form->addRow(QString(), profile_);
  capture_ = new QCheckBox(tr("Keep the selected instruction's value"));
  capture_->setChecked(true);
  form->addRow(QString(), capture_);
  layout->addLayout(form);

  auto* buttons = new QHBoxLayout;
  run_ = new QPushButton(tr("Run"));
  run_->setObjectName(QStringLiteral("replayRun"));
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setObjectName(QStringLiteral("replayCancel"));
  cancel_->setEnabled(false);
  save_ = new QPushButton(tr("Save Reproducer…"));
  save_->setObjectName(QStringLiteral("replaySaveReproducer"));
  save_->setEnabled(false);
  buttons->addWidget(run_);
  buttons->addWidget(cancel_);
  buttons->addStretch();
  buttons->addWidget(save_);
  bundle_ = new QPushButton(tr("Export Bundle…"));
  bundle_->setObjectName(QStringLiteral("replayExportBundle"));
  bundle_->setToolTip(tr("Write a bug-report folder: module, snapshot with the arguments, "
                         "flags, platform, report and ready-to-run commands"));
  bundle_->setEnabled(false);
  buttons->addWidget(bundle_);
  reduce_ = new QPushButton(tr("Reduce…"));
  reduce_->setObjectName(QStringLiteral("replayReduce"));
  SetReducible(QString());
  buttons->addWidget(reduce_);
  layout->addLayout(buttons);
  progress_ = new QProgressBar;
  progress_->setTextVisible(true);
  progress_->setVisible(false);
  layout->addWidget(progress_);
  verdict_ = new QLabel;
  verdict_->setObjectName(QStringLiteral("replayVerdict"));
  verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  verdict_->setWordWrap(true);
  layout->addWidget(verdict_);
  details_ = new QPlainTextEdit;
  details_->setReadOnly(true);
  details_->setLineWrapMode(QPlainTextEdit::NoWrap);
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("replayTabs"));
  tabs_->addTab(details_, tr("Report"));
  tensors_ = new TensorViewer;
  tabs_->addTab(tensors_, tr("Values"));
  auto* profile_page = new QWidget;
  auto* profile_layout = new QVBoxLayout(profile_page);
  profile_layout->setContentsMargins(0, 0, 0, 0);
  auto* heat_row = new QHBoxLayout;
  heat_ = new QComboBox;
  heat_->setObjectName(QStringLiteral("replayHeatMap"));
  heat_->addItem(tr("off"), static_cast<int>(HeatMetric::kOff));
  heat_->addItem(tr("time"), static_cast<int>(HeatMetric::kTime));
  heat_->addItem(tr("NaN/Inf"), static_cast<int>(HeatMetric::kNonfinite));
  heat_->addItem(tr("isolation error"), static_cast<int>(HeatMetric::kIsolationError));
  heat_row->addWidget(new QLabel(tr("Heat map on the graph")));
  heat_row->addWidget(heat_);
  heat_row->addStretch();
  profile_layout->addLayout(heat_row);
  // Above each table: the run its rows came from.
  auto source_label = [](const QString& name) {
    auto* label = new QLabel;
    label->setObjectName(name);
    label->setContentsMargins(4, 2, 4, 2);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    return label;
  };
  profile_source_ = source_label(QStringLiteral("replayProfileSource"));
  profile_layout->addWidget(profile_source_);
  profile_model_ = new ResultTableModel({tr("instruction"), tr("computation"), tr("time (ms)"),
                                        tr("runs"), tr("NaN"), tr("Inf"), tr("min"), tr("max")},
                                       this);
  profile_table_ = NewResultView(QStringLiteral("replayProfile"), profile_model_, this);
  profile_layout->addWidget(profile_table_, 1);
  tabs_->addTab(profile_page, tr("Instructions"));
  auto* isolation_page = new QWidget;
  auto* isolation_layout = new QVBoxLayout(isolation_page);
  isolation_layout->setContentsMargins(0, 0, 0, 0);
  isolation_model_ = new ResultTableModel(
      {tr("instruction"), tr("opcode"), tr("reference"), tr("test"), tr("mismatches"),
       tr("max abs error"), tr("max rel error"), tr("status")},
      this);
  isolation_table_ = NewResultView(QStringLiteral("replayIsolation"), isolation_model_, this);
  isolation_source_ = source_label(QStringLiteral("replayIsolationSource"));
  isolation_layout->addWidget(isolation_source_);
  isolation_layout->addWidget(isolation_table_, 1);
  isolation_text_ = new QPlainTextEdit;
  isolation_text_->setReadOnly(true);
  isolation_text_->setLineWrapMode(QPlainTextEdit::NoWrap);
  isolation_text_->setMaximumHeight(90);
  isolation_layout->addWidget(isolation_text_);
  tabs_->addTab(isolation_page, tr("Isolation"));
  bisect_model_ = new ResultTableModel({tr("state"), tr("pass"), tr("verdict"),
                                        tr("max abs error"), tr("max rel error"), tr("detail")},
                                       this);
  bisect_table_ = NewResultView(QStringLiteral("replayBisect"), bisect_model_, this);
  auto* bisect_page = new QWidget;
  auto* bisect_layout = new QVBoxLayout(bisect_page);
  bisect_layout->setContentsMargins(0, 0, 0, 0);
  bisect_source_ = source_label(QStringLiteral("replayBisectSource"));
  bisect_layout->addWidget(bisect_source_);
  bisect_layout->addWidget(bisect_table_, 1);
  tabs_->addTab(bisect_page, tr("Passes"));
  layout->addWidget(tabs_, 1);
  SetBisectAvailable(false);

  connect(heat_, &QComboBox::currentIndexChanged, this, [this] {
    emit heatMetricChanged(heat_metric());
  });
  // Only the user's own choice counts (activated is not emitted for SetHeatMetric).
  connect(heat_, &QComboBox::activated, this, [this] {
    heat_turned_off_ = heat_metric() == HeatMetric::kOff;
    emit heatMetricChosen(heat_metric());
  });
  // A row's first column names what to show.
  auto first_column = [](const QModelIndex& index) {
    return index.sibling(index.row(), 0).data().toString();
  };
  for (QTableView* view : {profile_table_, isolation_table_}) {
    connect(view, &QTableView::activated, this, [this, first_column](const QModelIndex& i) {
      emit instructionActivated(first_column(i));
    });
    connect(view, &QTableView::clicked, this, [this, first_column](const QModelIndex& i) {
      emit instructionActivated(first_column(i));
    });
  }
  connect(bisect_table_, &QTableView::activated, this,
          [this, first_column](const QModelIndex& i) { emit stateActivated(first_column(i)); });
  connect(bisect_table_, &QTableView::clicked, this,
          [this, first_column](const QModelIndex& i) { emit stateActivated(first_column(i)); });
  connect(bundle_, &QPushButton::clicked, this, [this] { emit exportBundleRequested(); });
  connect(reduce_, &QPushButton::clicked, this, [this] {
    if (!reduce_until_.isEmpty()) emit reduceRequested(reduce_until_);
  });

  connect(run_, &QPushButton::clicked, this, [this] { emit runRequested(Settings()); });
  connect(cancel_, &QPushButton::clicked, this, [this] { emit cancelRequested(); });
  connect(save_, &QPushButton::clicked, this, [this] { emit saveReproducerRequested(); });
}

ReplaySettings ReplayPanel::Settings() const {
  ReplaySettings s;
  s.platform = platform_->currentData().toString();
  s.reference_platform = reference_->currentData().toString();
  s.force_fake_data = data_->currentData().toBool();
  s.seed = static_cast<uint64_t>(seed_->value());
  s.abs_error = abs_->value();
  s.rel_error = rel_->value();
  s.host_transfers = host_->currentData().toString();
  s.mode = static_cast<ReplayMode>(mode_->currentData().toInt());
  s.profile = profile_->isChecked();
  s.capture_selected = capture_->isChecked();
  s.num_replicas = replicas_->value();
  s.num_partitions = partitions_->value();
  s.argument_mode = argument_mode_->currentData().toString();
  return s;
}

void ReplayPanel::SetRunning(bool running) {
  running_ = running;
  run_->setEnabled(!running);
  cancel_->setEnabled(running);
  progress_->setVisible(running);
  if (running) {
    progress_->setRange(0, 0);
    progress_->setFormat(tr("starting…"));
    verdict_->setText(tr("Running…"));
    details_->clear();
    save_->setEnabled(false);
    bundle_->setEnabled(false);
    SetReducible(QString());
  }
}

void ReplayPanel::SetReducible(const QString& until) {
  reduce_until_ = until;
  reduce_->setEnabled(!until.isEmpty());
  reduce_->setToolTip(until.isEmpty()
                          ? tr("Available after a run that failed (a mismatch, a NaN or Inf, an "
                               "error or a crash)")
                          : tr("Shrink the module while it keeps failing this way (--until=%1), "
                               "open the result and pack it into a bug bundle")
                                .arg(until));
}

void ReplayPanel::SetProgress(qint64 done, qint64 total, const QString& what) {
  if (total > 0) {
    progress_->setRange(0, 1000);
    progress_->setValue(static_cast<int>(std::min<qint64>(done, total) * 1000 / total));
  }
  progress_->setFormat(what);
}

void ReplayPanel::ShowResult(const QString& verdict, const QString& details) {
  SetRunning(false);
  verdict_->setText(verdict);
  details_->setPlainText(details);
  save_->setEnabled(verdict != QStringLiteral("MATCHED"));
  bundle_->setEnabled(true);
}

void ReplayPanel::ShowError(const QString& message, const QString& last_instruction) {
  SetRunning(false);
  verdict_->setText(last_instruction.isEmpty()
                        ? tr("Failed: %1").arg(message)
                        : tr("Failed: %1 (last reached: %2)").arg(message, last_instruction));
  details_->setPlainText(message);
  save_->setEnabled(true);
  bundle_->setEnabled(true);
  tabs_->setCurrentIndex(0);
}

void ReplayPanel::Clear() {
  results_source_.clear();
  SetRunning(false);
  verdict_->clear();
  details_->clear();
  save_->setEnabled(false);
  bundle_->setEnabled(false);
  SetReducible(QString());
  ShowValues({});
  ShowProfile({});
  ShowIsolation({}, QString());
  ShowBisect({}, -1);
}

void ReplayPanel::SetBisectAvailable(bool available) {
  const int index = mode_->findData(static_cast<int>(ReplayMode::kBisectPasses));
  if (auto* model = qobject_cast<QStandardItemModel*>(mode_->model())) {
    if (QStandardItem* item = model->item(index)) item->setEnabled(available);
  }
  if (!available && mode_->currentIndex() == index) mode_->setCurrentIndex(0);
}

void ReplayPanel::SetXlaCpuAvailable(bool available, const QString& detail) {
  for (QComboBox* combo : {platform_, reference_}) {
    const int index = combo->findData(QStringLiteral("xla-cpu"));
    if (index < 0) continue;
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model())) {
      if (QStandardItem* item = model->item(index)) item->setEnabled(available);
    }
    combo->setItemData(index, detail, Qt::ToolTipRole);
    if (!available && combo->currentIndex() == index) combo->setCurrentIndex(combo == platform_ ? 0 : 1);
  }
}

void ReplayPanel::SetCudaAvailable(bool available, const QString& detail) {
  for (QComboBox* combo : {platform_, reference_}) {
    const int index = combo->findData(QStringLiteral("cuda"));
    if (index < 0) continue;
    if (auto* model = qobject_cast<QStandardItemModel*>(combo->model())) {
      if (QStandardItem* item = model->item(index)) item->setEnabled(available);
    }
    // The backend list names the device; the reference list stays short.
    if (combo == platform_) {
      combo->setItemText(index, available ? tr("cuda: %1").arg(detail) : tr("cuda (no GPU)"));
    }
    combo->setItemData(index,
                       available ? tr("The module compiled for %1: the gpu pass pipeline, PTX "
                                      "kernels, cuBLAS for dots")
                                       .arg(detail)
                                 : detail,
                       Qt::ToolTipRole);
    if (!available && combo->currentIndex() == index) {
      combo->setCurrentIndex(combo == platform_ ? 0 : 1);
    }
  }
}

void ReplayPanel::SetMode(ReplayMode mode) {
  mode_->setCurrentIndex(mode_->findData(static_cast<int>(mode)));
}

void ReplayPanel::ShowValues(
    const std::vector<std::pair<QString, std::shared_ptr<const Literal>>>& values) {
  tensors_->SetValues(values);
}

void ReplayPanel::ShowProfile(std::vector<ProfileRowView> rows) {
  profile_rows_ = std::move(rows);
  std::vector<std::vector<ResultTableModel::Cell>> cells;
  cells.reserve(profile_rows_.size());
  const QColor bad(0xEF, 0x9A, 0x9A);
  for (const ProfileRowView& p : profile_rows_) {
    const bool nonfinite = p.nan_count > 0 || p.inf_count > 0;
    cells.push_back({Text(p.name, nonfinite ? bad : QColor()), Text(p.computation),
                     Number(p.seconds * 1e3, QString::number(p.seconds * 1e3, 'f', 3)),
                     Number(p.executions, QString::number(p.executions)),
                     Number(p.nan_count, QString::number(p.nan_count)),
                     Number(p.inf_count, QString::number(p.inf_count)),
                     Number(p.min, QString::number(p.min, 'g', 6)),
                     Number(p.max, QString::number(p.max, 'g', 6))});
  }
  profile_model_->SetRows(std::move(cells));
  profile_table_->sortByColumn(2, Qt::DescendingOrder);  // the slowest first
  profile_source_->setText(
      SourceCaption(results_source_, !profile_rows_.empty(), tr("no per-instruction profile")));
}

void ReplayPanel::ShowIsolation(std::vector<IsolationRowView> rows, const QString& table_text) {
  isolation_rows_ = std::move(rows);
  std::vector<std::vector<ResultTableModel::Cell>> cells;
  cells.reserve(isolation_rows_.size());
  for (const IsolationRowView& i : isolation_rows_) {
    cells.push_back({Text(i.name), Text(i.opcode), Text(i.reference_status),
                     Text(i.test_status, StatusColor(i.test_status)),
                     Number(i.mismatches, QString::number(i.mismatches)),
                     Number(i.max_abs_error, ErrorText(i.max_abs_error)),
                     Number(i.max_rel_error, ErrorText(i.max_rel_error)), Text(i.detail)});
  }
  isolation_model_->SetRows(std::move(cells));
  isolation_text_->setPlainText(table_text);
  isolation_source_->setText(
      SourceCaption(results_source_, !isolation_rows_.empty(), tr("no isolation")));
}

void ReplayPanel::ShowBisect(std::vector<BisectRowView> rows, int first_divergent) {
  bisect_rows_ = std::move(rows);
  std::vector<std::vector<ResultTableModel::Cell>> cells;
  cells.reserve(bisect_rows_.size());
  for (const BisectRowView& b : bisect_rows_) {
    cells.push_back({Text(b.label), Text(b.pass), Text(b.verdict, StatusColor(b.verdict)),
                     Number(b.max_abs_error, ErrorText(b.max_abs_error)),
                     Number(b.max_rel_error, ErrorText(b.max_rel_error)), Text(b.detail)});
  }
  bisect_model_->SetRows(std::move(cells), first_divergent);
  bisect_source_->setText(
      SourceCaption(results_source_, !bisect_rows_.empty(), tr("no pass bisection")));
  bisect_table_->sortByColumn(-1, Qt::AscendingOrder);
  if (first_divergent >= 0 && first_divergent < bisect_model_->rowCount()) {
    bisect_table_->selectRow(first_divergent);
  }
}

void ReplayPanel::SetResultsSource(const QString& run) { results_source_ = run; }

QString ReplayPanel::profile_source() const { return profile_source_->text(); }
QString ReplayPanel::isolation_source() const { return isolation_source_->text(); }
QString ReplayPanel::bisect_source() const { return bisect_source_->text(); }

void ReplayPanel::SetHeatMetric(HeatMetric metric) {
  heat_->setCurrentIndex(heat_->findData(static_cast<int>(metric)));
}

HeatMetric ReplayPanel::heat_metric() const {
  return static_cast<HeatMetric>(heat_->currentData().toInt());
}

QString ReplayPanel::Verdict() const { return verdict_->text(); }
QString ReplayPanel::Details() const { return details_->toPlainText(); }

}  // namespace hlowb::viewer
