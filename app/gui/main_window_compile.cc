// MainWindow: the embedded compiler. Compile ▸ Compile… runs `hlowb opt` on the shown module in
// a child process (so a compiler bug cannot take the window down) with per-pass dumps, and opens
// the dump it writes, so that the timeline, diff and history work on our own compiles as on
// XLA's.
#include <QAtomicInt>
#include <QComboBox>
#include <QCoreApplication>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QProcess>
#include <QPushButton>
#include <QStatusBar>
#include <QVBoxLayout>
#include <memory>

#include "app/gui/main_window.h"
#include "app/gui/replay_controller.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb::gui {

namespace {

// A folder name no other compile of this process has used.
QString FreshCompileDir() {
  static QAtomicInt counter;
  return QDir(QDir::tempPath())
      .filePath(QStringLiteral("hlowb-compile-%1-%2")
                    .arg(QCoreApplication::applicationPid())
                    .arg(counter.fetchAndAddRelaxed(1)));
}

}  // namespace

void MainWindow::BuildCompileMenu() {
  QMenu* compile = menuBar()->addMenu(tr("&Compile"));
  QAction* action = compile->addAction(tr("&Compile…"), this, [this] { ShowCompileDialog(); });
  action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_B));
  action->setStatusTip(
      tr("Run the embedded compiler's cpu or gpu pipeline on the shown module and open the "
         "pass-by-pass dump it writes"));
  connect(this, &MainWindow::compileFinished, this, [this](bool ok, const QString& message) {
    statusBar()->showMessage(ok ? tr("Compiled; opening %1").arg(message)
                                : tr("Compile failed: %1").arg(message),
                             ok ? 5000 : 15000);
  });
}

void MainWindow::ShowCompileDialog() {
  if (!module_) {
    statusBar()->showMessage(tr("Open a module to compile first"), 5000);
    return;
  }
  QDialog dialog(this);
  dialog.setWindowTitle(tr("Compile with the embedded compiler"));
  auto* layout = new QVBoxLayout(&dialog);
  auto* form = new QFormLayout();
  auto* platform = new QComboBox();
  platform->setObjectName(QStringLiteral("compilePlatform"));
  platform->addItems({QStringLiteral("cpu"), QStringLiteral("gpu")});
  form->addRow(tr("Pipeline:"), platform);
  layout->addLayout(form);
  layout->addWidget(new QLabel(tr("Passes (uncheck to leave one out):")));
  auto* passes = new QListWidget();
  passes->setObjectName(QStringLiteral("compilePasses"));
  auto fill = [passes](const QString& target) {
    passes->clear();
    absl::StatusOr<std::unique_ptr<PassPipeline>> p =
        BuildTargetPipeline(target.toStdString());
    if (!p.ok()) return;
    for (const std::string& name : ListPassNames(**p)) {
      auto* item = new QListWidgetItem(QString::fromStdString(name), passes);
      item->setFlags(item->flags() | Qt::ItemIsUserCheckable);
      item->setCheckState(Qt::Checked);
    }
  };
  fill(platform->currentText());
  connect(platform, &QComboBox::currentTextChanged, &dialog, fill);
  layout->addWidget(passes);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Compile"));
  connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  layout->addWidget(buttons);
  if (dialog.exec() != QDialog::Accepted) return;
  QStringList disabled;
  for (int i = 0; i < passes->count(); ++i) {
    if (passes->item(i)->checkState() != Qt::Checked) disabled << passes->item(i)->text();
  }
  if (!CompileShownModule(platform->currentText(), disabled)) {
    statusBar()->showMessage(tr("A compile is already running"), 5000);
  }
}

bool MainWindow::CompileShownModule(const QString& platform, const QStringList& disabled_passes,
                                    const QString& dump_dir) {
  if (!module_ || compile_process_) return false;
  const QString dir = dump_dir.isEmpty() ? FreshCompileDir() : dump_dir;
  if (!QDir().mkpath(dir)) {
    emit compileFinished(false, tr("cannot create %1").arg(dir));
    return true;
  }
  // The shown state as text: it may come from a proto, a snapshot or one state of a dump.
  const QString input = QDir(dir).filePath(QStringLiteral("input.hlo"));
  if (!WriteStringToFile(input.toStdString(), PrintModule(*module_)).ok()) {
    emit compileFinished(false, tr("cannot write %1").arg(input));
    return true;
  }
  const QString dump = QDir(dir).filePath(QStringLiteral("dump"));
  QStringList args = {QStringLiteral("opt"),
                      input,
                      QStringLiteral("--platform=") + platform,
                      QStringLiteral("--xla_dump_to=") + dump,
                      QStringLiteral("--xla_dump_hlo_pass_re=.*"),
                      QStringLiteral("-o"),
                      QDir(dir).filePath(QStringLiteral("optimized.hlo"))};
  if (!disabled_passes.isEmpty()) {
    args << QStringLiteral("--xla_disable_hlo_passes=") + disabled_passes.join(QLatin1Char(','));
  }
  auto* process = new QProcess(this);
  compile_process_ = process;
  process->setProcessChannelMode(QProcess::MergedChannels);
  connect(process, &QProcess::finished, this,
          [this, process, dump](int code, QProcess::ExitStatus status) {
            const QString output = QString::fromUtf8(process->readAll()).trimmed();
            process->deleteLater();
            compile_process_ = nullptr;
            const bool ok = status == QProcess::NormalExit && code == 0;
            emit compileFinished(ok, ok ? dump
                                        : (output.isEmpty() ? tr("exit code %1").arg(code)
                                                            : output));
            if (ok) OpenPath(dump);
          });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->deleteLater();
    compile_process_ = nullptr;
    emit compileFinished(false, tr("cannot start %1").arg(process->program()));
  });
  process->start(replay_->program(), args);
  statusBar()->showMessage(tr("Compiling with the %1 pipeline…").arg(platform));
  return true;
}

}  // namespace hlowb::gui
