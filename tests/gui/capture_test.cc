// File ▸ Capture from Program… on the offscreen platform, with shell scripts standing in for a JAX
// program (so it runs without jax): the program's output arrives while it still runs, the finished
// signal names the dump, and the dump opens in the window; Cancel of a long-running program ends it
// promptly and leaves the window as it was.
#include <signal.h>

#include <QCoreApplication>
#include <QDialog>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/replay_controller.h"
#include "tests/gui/window_test_util.h"

using hlowb::gui::MainWindow;

namespace {

// Writes an executable shell script.
bool WriteScript(const QString& path, const QByteArray& body) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly)) return false;
  f.write("#!/bin/sh\n" + body);
  f.close();
  return f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
}

// True once process `pid` is gone (or only a zombie nobody has reaped yet).
bool ProcessEnded(qint64 pid) {
  QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
  if (!stat.open(QIODevice::ReadOnly)) return true;
  const QByteArray text = stat.readAll();
  const int paren = text.lastIndexOf(')');
  return paren < 0 || text.mid(paren + 2, 1) == "Z";
}

}  // namespace

class CaptureTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1280, 720);
    w->show();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    return w;
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("capture_test"));
    QSettings().clear();
  }

  void MenuEntryOpensTheDialog() {
    auto w = NewWindow();
    QAction* entry = nullptr;
    for (QAction* menu : w->menuBar()->actions()) {
      if (!menu->menu()) continue;
      for (QAction* a : menu->menu()->actions()) {
        if (a->text().remove(QLatin1Char('&')).startsWith(QStringLiteral("Capture from Program"))) {
          entry = a;
        }
      }
    }
    QVERIFY2(entry, "File ▸ Capture from Program…");
    entry->trigger();
    auto* dialog = w->findChild<QDialog*>();
    QVERIFY(dialog);
    QTRY_VERIFY(dialog->isVisible());
    auto* output = dialog->findChild<QPlainTextEdit*>(QStringLiteral("captureOutput"));
    QVERIFY(output);
    // Run from the dialog: a program that does not exist fails, and the dialog stays with the
    // capture's output and the reason.
    auto* command = dialog->findChild<QLineEdit*>(QStringLiteral("captureCommand"));
    auto* dump = dialog->findChild<QLineEdit*>(QStringLiteral("captureDumpDir"));
    QVERIFY(command && dump);
    command->setText(QStringLiteral("/nonexistent/program --flag 'two words'"));
    dump->setText(scratch_.filePath(QStringLiteral("from_dialog")));
    QPushButton* start = nullptr;
    for (auto* b : dialog->findChildren<QPushButton*>()) {
      if (b->text() == QStringLiteral("Capture")) start = b;
    }
    QVERIFY(start);
    QSignalSpy done(w.get(), &MainWindow::captureFinished);
    start->click();
    QVERIFY(w->IsCapturing());
    QVERIFY(!start->isEnabled());
    QVERIFY(done.wait(30000));
    QVERIFY(!done.at(0).at(0).toBool());
    QVERIFY2(output->toPlainText().contains(QStringLiteral("cannot run '/nonexistent/program'")),
             qPrintable(output->toPlainText()));
    auto* status = dialog->findChild<QLabel*>(QStringLiteral("captureStatus"));
    QVERIFY(status && status->text().contains(QStringLiteral("cannot run")));
    QVERIFY(start->isEnabled());
    QVERIFY(dialog->isVisible());
    dialog->reject();
  }

  void CapturedDumpOpensWithLiveOutput() {
    auto w = NewWindow();
    // The program prints, then waits for the test's go-ahead: output seen before it ends is live
    // output.
    const QString go = scratch_.filePath(QStringLiteral("go"));
    const QString script = scratch_.filePath(QStringLiteral("fake_jax.sh"));
    QVERIFY(WriteScript(script,
                        "for f in $XLA_FLAGS; do case $f in --xla_dump_to=*) "
                        "d=${f#--xla_dump_to=};; esac; done\n"
                        "echo \"compiling with $XLA_FLAGS\"\n"
                        "while [ ! -e '" +
                            go.toUtf8() +
                            "' ]; do sleep 0.02; done\n"
                            "printf 'HloModule jit_fake\\n\\nENTRY e {\\n  p = f32[4] "
                            "parameter(0)\\n"
                            "  ROOT n = f32[4] negate(p)\\n}\\n' > "
                            "\"$d/module_0000.jit_fake.before_optimizations.txt\"\n"
                            "echo done\n"));
    QSignalSpy output(w.get(), &MainWindow::captureOutput);
    QSignalSpy done(w.get(), &MainWindow::captureFinished);
    const QString dir = scratch_.filePath(QStringLiteral("dump"));
    QVERIFY(w->StartCapture({script}, /*pass_by_pass=*/true,
                            /*snapshots=*/false, dir));
    QVERIFY(w->IsCapturing());
    QVERIFY(!w->StartCapture({script}, false, false));  // one at a time
    QTRY_VERIFY_WITH_TIMEOUT(w->capture_output().contains(QStringLiteral("compiling with")), 30000);
    QVERIFY(w->IsCapturing());
    QCOMPARE(done.count(), 0);
    QVERIFY(output.count() >= 1);
    QVERIFY2(w->capture_output().contains(QStringLiteral("--xla_dump_hlo_pass_re=.*")),
             qPrintable(w->capture_output()));
    QVERIFY(QFile(go).open(QIODevice::WriteOnly));

    QVERIFY(done.wait(30000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QCOMPARE(done.at(0).at(1).toString(), dir);
    QVERIFY(!w->IsCapturing());
    QVERIFY2(w->capture_output().contains(QStringLiteral("captured ") + dir),
             qPrintable(w->capture_output()));
    QTRY_COMPARE_WITH_TIMEOUT(w->current_path(), dir, 30000);
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QCOMPARE(static_cast<int>(w->states().size()), 1);
    QCOMPARE(QString::fromStdString(w->states().front().label),
             QStringLiteral("before_optimizations"));
    QVERIFY(w->current_module());
    QCOMPARE(QString::fromStdString(w->current_module()->name()), QStringLiteral("jit_fake"));
  }

  void CancelEndsTheProgramAndKeepsTheWindow() {
    auto w = NewWindow();
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    const QString before = w->current_path();
    const auto module = w->current_module();
    QVERIFY(module);

    const QString pid_file = scratch_.filePath(QStringLiteral("sleeper.pid"));
    const QString script = scratch_.filePath(QStringLiteral("sleeper.sh"));
    QVERIFY(WriteScript(script,
                        "echo $$ > '" + pid_file.toUtf8() + "'\necho sleeping\nexec sleep 30\n"));
    QSignalSpy done(w.get(), &MainWindow::captureFinished);
    const QString dir = scratch_.filePath(QStringLiteral("cancelled"));
    QVERIFY(w->StartCapture({script}, false, false, dir));
    QTRY_VERIFY_WITH_TIMEOUT(w->capture_output().contains(QStringLiteral("sleeping")), 30000);
    QFile f(pid_file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const qint64 pid = f.readAll().trimmed().toLongLong();
    QVERIFY(pid > 0);
    QVERIFY(!ProcessEnded(pid));

    QElapsedTimer timer;
    timer.start();
    w->CancelCapture();
    QVERIFY(done.wait(10000));
    QVERIFY(timer.elapsed() < 5000);
    QVERIFY(!done.at(0).at(0).toBool());
    QCOMPARE(done.at(0).at(1).toString(), QStringLiteral("cancelled"));
    QVERIFY(!w->IsCapturing());
    QTRY_VERIFY_WITH_TIMEOUT(ProcessEnded(pid), 5000);
    if (!ProcessEnded(pid)) ::kill(static_cast<pid_t>(pid), SIGKILL);  // never leave it behind

    // The window is as it was.
    QCOMPARE(w->current_path(), before);
    QCOMPARE(w->current_module(), module);
    QVERIFY(!w->IsBusy());
  }

  void MissingProgramReports() {
    auto w = NewWindow();
    QSignalSpy done(w.get(), &MainWindow::captureFinished);
    QVERIFY(w->StartCapture({QStringLiteral("/nonexistent/program")}, false, false,
                            scratch_.filePath(QStringLiteral("missing"))));
    QVERIFY(done.wait(30000));
    QVERIFY(!done.at(0).at(0).toBool());
    QVERIFY2(done.at(0).at(1).toString().contains(QStringLiteral("cannot run")),
             qPrintable(done.at(0).at(1).toString()));
    QVERIFY(w->current_path().isEmpty());
  }
};

QTEST_MAIN(CaptureTest)
#include "capture_test.moc"
