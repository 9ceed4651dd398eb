// ReduceDialog (see reduce_dialog.h).
#include "app/gui/reduce_dialog.h"

#include <QComboBox>
#include <QDesktopServices>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

namespace hlowb::gui {

ReduceDialog::ReduceDialog(const ReduceJob& job, const QString& description, QWidget* parent)
    : QDialog(parent), job_(job), runner_(new ReduceRunner(this)) {
  setWindowTitle(tr("Reduce the failing module"));
  setObjectName(QStringLiteral("reduceDialog"));
  auto* layout = new QVBoxLayout(this);
  auto* what = new QLabel(description.isEmpty() ? job.input : description);
  what->setWordWrap(true);
  layout->addWidget(what);

  auto* form = new QFormLayout();
  until_ = new QComboBox();
  until_->setObjectName(QStringLiteral("reduceUntil"));
  until_->addItem(tr("the same mismatch"), QStringLiteral("mismatch"));
  until_->addItem(tr("the same first NaN/Inf"), QStringLiteral("nonfinite"));
  until_->addItem(tr("the same crash"), QStringLiteral("crash"));
  until_->addItem(tr("the same error"), QStringLiteral("error"));
  if (const int i = until_->findData(job.until); i >= 0) until_->setCurrentIndex(i);
  form->addRow(tr("Keep failing with:"), until_);
  time_limit_ = new QDoubleSpinBox();
  time_limit_->setObjectName(QStringLiteral("reduceTimeLimit"));
  time_limit_->setRange(1, 24 * 3600);
  time_limit_->setDecimals(0);
  time_limit_->setSuffix(tr(" s"));
  time_limit_->setValue(job.time_limit_seconds);
  form->addRow(tr("Time limit:"), time_limit_);
  out_dir_ = new QLineEdit(job.out_dir);
  out_dir_->setObjectName(QStringLiteral("reduceOutDir"));
  form->addRow(tr("Write to:"), out_dir_);
  layout->addLayout(form);

  progress_ = new QProgressBar();
  progress_->setObjectName(QStringLiteral("reduceProgress"));
  progress_->setRange(0, 0);
  progress_->setVisible(false);
  layout->addWidget(progress_);
  status_ = new QLabel(tr("Not started"));
  status_->setObjectName(QStringLiteral("reduceStatus"));
  status_->setWordWrap(true);
  status_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(status_);
  log_ = new QPlainTextEdit();
  log_->setObjectName(QStringLiteral("reduceLog"));
  log_->setReadOnly(true);
  log_->setMaximumBlockCount(5000);
  log_->setLineWrapMode(QPlainTextEdit::NoWrap);
  layout->addWidget(log_, 1);

  auto* buttons = new QHBoxLayout();
  start_ = new QPushButton(tr("Start"));
  stop_ = new QPushButton(tr("Stop"));
  stop_->setToolTip(tr("Stop and keep the smallest failing module found so far (press again to "
                       "abandon it)"));
  open_ = new QPushButton(tr("Open Reduced Module"));
  bundle_ = new QPushButton(tr("Show Bug Bundle"));
  auto* close = new QPushButton(tr("Close"));
  for (QPushButton* b : {start_, stop_, open_, bundle_}) buttons->addWidget(b);
  buttons->addStretch(1);
  buttons->addWidget(close);
  layout->addLayout(buttons);
  stop_->setEnabled(false);
  open_->setEnabled(false);
  bundle_->setEnabled(false);
  resize(720, 480);

  connect(start_, &QPushButton::clicked, this, [this] { Start(); });
  connect(stop_, &QPushButton::clicked, this, [this] { Stop(); });
  connect(close, &QPushButton::clicked, this, &QDialog::close);
  connect(open_, &QPushButton::clicked, this,
          [this] { emit openRequested(outcome_.reduced_path); });
  connect(bundle_, &QPushButton::clicked, this, [this] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(outcome_.bundle_dir));
  });
  connect(runner_, &ReduceRunner::progress, this, &ReduceDialog::OnProgress);
  connect(runner_, &ReduceRunner::output, this, [this](const QString& text) {
    log_->moveCursor(QTextCursor::End);
    log_->insertPlainText(text);
  });
  connect(runner_, &ReduceRunner::finished, this, &ReduceDialog::OnFinished);
}

bool ReduceDialog::Start() {
  if (runner_->running()) return false;
  ReduceJob job = job_;
  job.until = until_->currentData().toString();
  job.time_limit_seconds = time_limit_->value();
  job.out_dir = out_dir_->text().trimmed();
  if (job.out_dir.isEmpty()) {
    status_->setText(tr("Choose a folder to write to"));
    return false;
  }
  finished_ = false;
  outcome_ = ReduceOutcome();
  log_->clear();
  if (!runner_->Start(job)) {
    status_->setText(tr("Could not start the reduction"));
    return false;
  }
  status_->setText(tr("Running the original module…"));
  SetRunningUi(true);
  return true;
}

void ReduceDialog::SetRunningUi(bool running) {
  start_->setEnabled(!running);
  stop_->setEnabled(running);
  until_->setEnabled(!running);
  time_limit_->setEnabled(!running);
  out_dir_->setEnabled(!running);
  progress_->setVisible(running);
  if (running) {
    progress_->setRange(0, 0);  // busy until the first count arrives
    open_->setEnabled(false);
    bundle_->setEnabled(false);
  }
}

void ReduceDialog::OnProgress(const ReduceProgressLine& line) {
  if (line.original_instructions > 0) {
    // The bar fills as instructions go: removed of the original (less the one that must stay).
    const int total = static_cast<int>(std::min<qint64>(line.original_instructions, 1 << 30));
    progress_->setRange(0, total);
    progress_->setValue(static_cast<int>(
        std::clamp<qint64>(line.original_instructions - line.instructions, 0, total)));
  }
  status_->setText(tr("%1 · %2 of %3 instructions left · %4 candidates, %5 kept · %6 s")
                       .arg(line.phase)
                       .arg(line.instructions)
                       .arg(line.original_instructions)
                       .arg(line.candidates)
                       .arg(line.kept)
                       .arg(line.seconds, 0, 'f', 1));
}

void ReduceDialog::OnFinished(const ReduceOutcome& outcome) {
  outcome_ = outcome;
  finished_ = true;
  SetRunningUi(false);
  QString text = outcome.ok ? tr("Reduced: %1").arg(outcome.message)
                            : tr("Failed: %1").arg(outcome.message);
  if (outcome.stopped) text += tr(" (stopped early)");
  if (!outcome.reproduce.isEmpty()) text += tr("\nReproduce: %1").arg(outcome.reproduce);
  if (!outcome.bundle_dir.isEmpty()) text += tr("\nBug bundle: %1").arg(outcome.bundle_dir);
  if (!outcome.bundle_error.isEmpty()) {
    text += tr("\nThe bug bundle could not be written: %1").arg(outcome.bundle_error);
  }
  status_->setText(text);
  open_->setEnabled(!outcome.reduced_path.isEmpty());
  bundle_->setEnabled(!outcome.bundle_dir.isEmpty());
  emit reduceFinished(outcome);
  if (outcome.ok) emit openRequested(outcome.reduced_path);
}

QString ReduceDialog::status_text() const { return status_->text(); }

QString ReduceDialog::log_text() const { return log_->toPlainText(); }

}  // namespace hlowb::gui
