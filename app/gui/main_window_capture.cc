// MainWindow: File ▸ Capture from Program…. Runs a user's JAX (or any XLA) program under `hlowb
// capture --no-open` in a child process, shows its output live, and opens the dump it writes. The
// capture runs in a process group of its own so that Cancel (or closing the window) ends the
// program it started too, not only `hlowb capture`.
#include <signal.h>
#include <unistd.h>

#include <QAtomicInt>
#include <QCheckBox>
#include <QCoreApplication>
#include <QDateTime>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QStatusBar>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>
#include <initializer_list>

#include "app/gui/main_window.h"
#include "app/gui/replay_controller.h"

namespace hlowb::gui {

namespace {

// A folder name no other capture of this process has used.
QString FreshCaptureDir() {
  static QAtomicInt counter;
  return QDir(QDir::tempPath())
      .filePath(QStringLiteral("hlowb-capture-%1-%2-%3")
                    .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")))
                    .arg(QCoreApplication::applicationPid())
                    .arg(counter.fetchAndAddRelaxed(1)));
}

// The `hlowb capture` child: leads a process group of its own (the program it runs joins it), and
// ends the whole group when it goes, so no program outlives its capture.
class CaptureProcess : public QProcess {
 public:
  explicit CaptureProcess(QObject* parent) : QProcess(parent) {
    setChildProcessModifier([] { ::setpgid(0, 0); });
  }
  ~CaptureProcess() override {
    KillGroup();
    waitForFinished(2000);
  }
  void KillGroup() {
    const qint64 pid = processId();
    if (pid > 0 && state() != QProcess::NotRunning) ::kill(-static_cast<pid_t>(pid), SIGKILL);
  }
};

// What went wrong, from the capture's own messages: its last "hlowb capture: " line.
QString CaptureError(const QString& output, int code) {
  const QStringList lines = output.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  const QString prefix = QStringLiteral("hlowb capture: ");
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (it->startsWith(prefix) && !it->startsWith(prefix + QStringLiteral("note:")) &&
        !it->startsWith(prefix + QStringLiteral("XLA_FLAGS=")) &&
        !it->startsWith(prefix + QStringLiteral("dumping into"))) {
      return it->mid(prefix.size()).trimmed();
    }
  }
  return QCoreApplication::translate("MainWindow", "capture failed with exit code %1").arg(code);
}

}  // namespace

void MainWindow::BuildCaptureMenu(QMenu* file) {
  QAction* action =
      file->addAction(tr("&Capture from Program…"), this, [this] { ShowCaptureDialog(); });
  action->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R));
  action->setStatusTip(
      tr("Run a JAX/XLA program with XLA's dump flags and "
         "open the dump it writes"));
  connect(this, &MainWindow::captureFinished, this, [this](bool ok, const QString& message) {
    statusBar()->showMessage(
        ok ? tr("Captured; opening %1").arg(message) : tr("Capture failed: %1").arg(message),
        ok ? 5000 : 15000);
  });
}

bool MainWindow::StartCapture(const QStringList& command, bool pass_by_pass, bool snapshots,
                              const QString& dump_dir, const QString& working_dir) {
  if (capture_process_ || command.isEmpty() || command.front().isEmpty()) return false;
  const bool fresh = dump_dir.isEmpty();
  const QString dir = fresh ? FreshCaptureDir() : QDir(dump_dir).absolutePath();
  QStringList args = {QStringLiteral("capture"), QStringLiteral("--no-open"), QStringLiteral("-o"),
                      dir};
  if (pass_by_pass) args << QStringLiteral("--pass-by-pass");
  if (snapshots) args << QStringLiteral("--snapshots");
  args << QStringLiteral("--") << command;

  auto* process = new CaptureProcess(this);
  capture_process_ = process;
  capture_output_.clear();
  capture_cancelled_ = false;
  process->setProcessChannelMode(QProcess::MergedChannels);
  if (!working_dir.isEmpty()) process->setWorkingDirectory(working_dir);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("PYTHONUNBUFFERED"),
             QStringLiteral("1"));  // live output
  process->setProcessEnvironment(env);
  connect(process, &QProcess::readyRead, this, [this, process] {
    const QString text = QString::fromUtf8(process->readAll());
    if (text.isEmpty()) return;
    capture_output_ += text;
    emit captureOutput(text);
  });
  connect(process, &QProcess::finished, this,
          [this, process, dir, fresh](int code, QProcess::ExitStatus status) {
            const QString rest = QString::fromUtf8(process->readAll());
            if (!rest.isEmpty()) {
              capture_output_ += rest;
              emit captureOutput(rest);
            }
            process->deleteLater();
            capture_process_ = nullptr;
            if (capture_cancelled_) {
              // A folder made for this capture holds at most a partial dump nobody asked for.
              if (fresh) QDir(dir).removeRecursively();
              emit captureFinished(false, tr("cancelled"));
              return;
            }
            const bool ok = status == QProcess::NormalExit && code == 0;
            if (!ok) {
              emit captureFinished(false, status == QProcess::NormalExit
                                              ? CaptureError(capture_output_, code)
                                              : tr("hlowb capture crashed"));
              return;
            }
            emit captureFinished(true, dir);
            OpenPath(dir);
          });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->deleteLater();
    capture_process_ = nullptr;
    emit captureFinished(false, tr("cannot start %1").arg(process->program()));
  });
  process->start(replay_->program(), args);
  statusBar()->showMessage(tr("Capturing %1…").arg(command.join(QLatin1Char(' '))));
  return true;
}

void MainWindow::CancelCapture() {
  auto* process = static_cast<CaptureProcess*>(capture_process_.data());
  if (!process) return;
  capture_cancelled_ = true;
  process->KillGroup();
}

void MainWindow::ShowCaptureDialog() {
  if (capture_dialog_) {
    capture_dialog_->raise();
    capture_dialog_->activateWindow();
    return;
  }
  auto* dialog = new QDialog(this);
  capture_dialog_ = dialog;
  dialog->setAttribute(Qt::WA_DeleteOnClose);
  dialog->setWindowTitle(tr("Capture from Program"));
  dialog->resize(760, 520);
  QSettings settings;
  auto* layout = new QVBoxLayout(dialog);
  auto* intro =
      new QLabel(tr("Runs the program with XLA's dump flags "
                    "(XLA_FLAGS, JAX's compilation cache off) and "
                    "opens the dump it writes."));
  intro->setWordWrap(true);
  layout->addWidget(intro);
  auto* form = new QFormLayout();
  auto* command = new QLineEdit(settings.value(QStringLiteral("capture/command")).toString());
  command->setObjectName(QStringLiteral("captureCommand"));
  command->setPlaceholderText(QStringLiteral("python train.py --steps=2"));
  form->addRow(tr("Command:"), command);
  auto* working = new QLineEdit(
      settings.value(QStringLiteral("capture/workingDir"), QDir::currentPath()).toString());
  working->setObjectName(QStringLiteral("captureWorkingDir"));
  auto* browse = new QToolButton();
  browse->setText(QStringLiteral("…"));
  connect(browse, &QToolButton::clicked, dialog, [dialog, working] {
    QString d = QFileDialog::getExistingDirectory(dialog, tr("Run in"), working->text());
    if (!d.isEmpty()) working->setText(d);
  });
  auto* working_row = new QHBoxLayout();
  working_row->addWidget(working);
  working_row->addWidget(browse);
  form->addRow(tr("Run in:"), working_row);
  auto* dump = new QLineEdit();
  dump->setObjectName(QStringLiteral("captureDumpDir"));
  dump->setPlaceholderText(tr("a new folder under %1").arg(QDir::tempPath()));
  form->addRow(tr("Dump into:"), dump);
  auto* pass_by_pass = new QCheckBox(tr("Dump after every compiler &pass"));
  pass_by_pass->setObjectName(QStringLiteral("capturePassByPass"));
  pass_by_pass->setChecked(settings.value(QStringLiteral("capture/passByPass"), true).toBool());
  form->addRow(QString(), pass_by_pass);
  auto* snapshots = new QCheckBox(tr("Dump &snapshots (arguments and results of each run)"));
  snapshots->setObjectName(QStringLiteral("captureSnapshots"));
  snapshots->setChecked(settings.value(QStringLiteral("capture/snapshots"), false).toBool());
  form->addRow(QString(), snapshots);
  layout->addLayout(form);
  auto* output = new QPlainTextEdit();
  output->setObjectName(QStringLiteral("captureOutput"));
  output->setReadOnly(true);
  output->setLineWrapMode(QPlainTextEdit::NoWrap);
  output->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  output->setPlaceholderText(tr("The program's output appears here."));
  layout->addWidget(output, 1);
  auto* status = new QLabel();
  status->setObjectName(QStringLiteral("captureStatus"));
  status->setWordWrap(true);
  layout->addWidget(status);
  auto* buttons = new QDialogButtonBox();
  QPushButton* start = buttons->addButton(tr("Capture"), QDialogButtonBox::AcceptRole);
  QPushButton* cancel = buttons->addButton(QDialogButtonBox::Cancel);
  layout->addWidget(buttons);

  auto set_running = [=](bool running) {
    for (QWidget* w : std::initializer_list<QWidget*>{command, working, browse, dump, pass_by_pass,
                                                      snapshots, start}) {
      w->setEnabled(!running);
    }
    cancel->setText(running ? tr("Cancel") : tr("Close"));
  };
  set_running(IsCapturing());
  connect(this, &MainWindow::captureOutput, output, [output](const QString& text) {
    output->moveCursor(QTextCursor::End);
    output->insertPlainText(text);
    output->verticalScrollBar()->setValue(output->verticalScrollBar()->maximum());
  });
  connect(this, &MainWindow::captureFinished, dialog,
          [dialog, status, set_running](bool ok, const QString& message) {
            set_running(false);
            if (ok) {
              dialog->accept();  // the dump opens in the window
            } else {
              status->setText(tr("Capture failed: %1").arg(message));
            }
          });
  connect(start, &QPushButton::clicked, dialog, [=, this] {
    const QStringList args = QProcess::splitCommand(command->text());
    if (args.isEmpty()) {
      status->setText(tr("Enter the command to run, e.g. python train.py"));
      return;
    }
    QSettings s;
    s.setValue(QStringLiteral("capture/command"), command->text());
    s.setValue(QStringLiteral("capture/workingDir"), working->text());
    s.setValue(QStringLiteral("capture/passByPass"), pass_by_pass->isChecked());
    s.setValue(QStringLiteral("capture/snapshots"), snapshots->isChecked());
    output->clear();
    status->setText(tr("Running…"));
    if (!StartCapture(args, pass_by_pass->isChecked(), snapshots->isChecked(),
                      dump->text().trimmed(), working->text().trimmed())) {
      status->setText(tr("A capture is already running"));
      return;
    }
    set_running(true);
  });
  connect(cancel, &QPushButton::clicked, dialog, [this, dialog] {
    if (IsCapturing()) {
      CancelCapture();
    } else {
      dialog->reject();
    }
  });
  // Closing the dialog while the capture runs cancels it too.
  connect(dialog, &QDialog::rejected, this, [this] { CancelCapture(); });
  dialog->open();
}

}  // namespace hlowb::gui
