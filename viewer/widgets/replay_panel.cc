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
#include <QSpinBox>
#include <QVBoxLayout>

namespace hlowb::viewer {

ReplayPanel::ReplayPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);
  auto* form = new QFormLayout;
  reference_ = new QComboBox;
  reference_->addItem(tr("none"), QString());
  reference_->addItem(QStringLiteral("interpreter"), QStringLiteral("interpreter"));
  reference_->setCurrentIndex(1);
  form->addRow(tr("Compare with"), reference_);
  data_ = new QComboBox;
  data_->addItem(tr("snapshot arguments when present"), false);
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
  nonfinite_ = new QCheckBox(tr("Find the first NaN/Inf instead of comparing"));
  nonfinite_->setObjectName(QStringLiteral("replayFindNonfinite"));
  form->addRow(QString(), nonfinite_);
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
  layout->addWidget(details_, 1);

  connect(run_, &QPushButton::clicked, this, [this] { emit runRequested(Settings()); });
  connect(cancel_, &QPushButton::clicked, this, [this] { emit cancelRequested(); });
  connect(save_, &QPushButton::clicked, this, [this] { emit saveReproducerRequested(); });
}

ReplaySettings ReplayPanel::Settings() const {
  ReplaySettings s;
  s.reference_platform = reference_->currentData().toString();
  s.force_fake_data = data_->currentData().toBool();
  s.seed = static_cast<uint64_t>(seed_->value());
  s.abs_error = abs_->value();
  s.rel_error = rel_->value();
  s.host_transfers = host_->currentData().toString();
  s.find_nonfinite = nonfinite_->isChecked();
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
  }
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
}

void ReplayPanel::ShowError(const QString& message, const QString& last_instruction) {
  SetRunning(false);
  verdict_->setText(last_instruction.isEmpty()
                        ? tr("Failed: %1").arg(message)
                        : tr("Failed: %1 (last reached: %2)").arg(message, last_instruction));
  details_->setPlainText(message);
  save_->setEnabled(true);
}

void ReplayPanel::Clear() {
  SetRunning(false);
  verdict_->clear();
  details_->clear();
  save_->setEnabled(false);
}

QString ReplayPanel::Verdict() const { return verdict_->text(); }
QString ReplayPanel::Details() const { return details_->toPlainText(); }

}  // namespace hlowb::viewer
