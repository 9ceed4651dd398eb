// Compile ▸ Compile… on the offscreen platform: the shown module goes through the embedded
// compiler in a child process and the pass-by-pass dump it writes opens in the timeline, with
// the original as before_optimizations, the passes that changed it, and passes the user left
// out absent; a compile that fails reports and leaves the window as it was.
#include <QCoreApplication>
#include <QDir>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "app/gui/main_window.h"
#include "app/gui/replay_controller.h"
#include "tests/gui/window_test_util.h"

using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;

class CompileTest : public QObject {
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
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("compile_test"));
    QSettings().clear();
  }

  void CompiledDumpOpensInTheTimeline() {
    auto w = NewWindow();
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QVERIFY(w->current_module());
    const int original = static_cast<int>(w->current_module()->entry()->instruction_count());

    QSignalSpy done(w.get(), &MainWindow::compileFinished);
    const QString dir = scratch_.filePath(QStringLiteral("cpu"));
    QVERIFY(w->CompileShownModule(QStringLiteral("cpu"), {QStringLiteral("reshape-mover")}, dir));
    QVERIFY(w->IsCompiling());
    QVERIFY(!w->CompileShownModule(QStringLiteral("cpu"), {}));  // one at a time
    QVERIFY(done.wait(120000));
    QVERIFY2(done.at(0).at(0).toBool(), qPrintable(done.at(0).at(1).toString()));
    QVERIFY(!w->IsCompiling());
    QTRY_COMPARE_WITH_TIMEOUT(w->current_path(), dir + QStringLiteral("/dump"), 30000);
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 60000));

    // The timeline: the original first, then pass steps, the optimized module last.
    const auto& states = w->states();
    QVERIFY2(states.size() > 5, qPrintable(QString::number(states.size())));
    QCOMPARE(QString::fromStdString(states.front().label),
             QStringLiteral("before_optimizations"));
    bool saw_fusion = false;
    for (const auto& s : states) {
      QVERIFY2(s.pass != "reshape-mover", "a pass left out must not run");
      saw_fusion |= s.pass == "fusion";
    }
    QVERIFY(saw_fusion);
    QVERIFY(w->SelectStep(QStringLiteral("before")));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QCOMPARE(static_cast<int>(w->current_module()->entry()->instruction_count()), original);
    QVERIFY(w->SelectStep(QStringLiteral("after")));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QVERIFY(w->current_module()->config().is_scheduled);
    QVERIFY(w->CompareWithBeforeOptimizations());
  }

  void FailingCompileReportsAndKeepsTheDocument() {
    auto w = NewWindow();
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    const QString before = w->current_path();
    w->replay_controller()->SetWorkerCommand(QStringLiteral("/nonexistent/hlowb"), {});
    QSignalSpy done(w.get(), &MainWindow::compileFinished);
    QVERIFY(w->CompileShownModule(QStringLiteral("gpu"), {}));
    QTRY_VERIFY_WITH_TIMEOUT(done.count() == 1, 30000);
    QVERIFY(!done.at(0).at(0).toBool());
    QCOMPARE(w->current_path(), before);
    QVERIFY(!w->IsCompiling());
  }
};

QTEST_MAIN(CompileTest)
#include "compile_test.moc"
