// Automatic reduction from the app, offscreen: the ReduceRunner drives `hlowb reduce` and
// `hlowb bundle` in child processes (progress as the reducer prints it, Stop ends it, errors
// say what went wrong), the Reduce dialog shows it and offers the
// result, and the Replay dock's Reduce… button appears after a failed run and opens the reduced
// module as a new document.
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <memory>
#include <string>

#include "app/gui/main_window.h"
#include "app/gui/reduce_dialog.h"
#include "app/gui/reduce_runner.h"
#include "app/gui/replay_controller.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "tests/gui/window_test_util.h"
#include "viewer/widgets/replay_panel.h"

using hlowb::gui::ReduceDialog;
using hlowb::gui::ReduceJob;
using hlowb::gui::ReduceOutcome;
using hlowb::gui::ReduceProgressLine;
using hlowb::gui::ReduceRunner;

namespace {

// A chain of `length` elementwise steps over f32[`n`,`n`] (or dots when `dots`), in which step
// `nan_at` takes the log of a negative value, so that every element turns NaN there.
std::string NaNChain(int length, int nan_at, int n, bool dots) {
  const std::string shape = "f32[" + std::to_string(n) + "," + std::to_string(n) + "]";
  std::string s = "HloModule nan_chain\n\nENTRY main {\n  p0 = " + shape + " parameter(0)\n";
  s += "  p1 = " + shape + " parameter(1)\n";
  std::string prev = "p0";
  for (int k = 0; k < length; ++k) {
    const std::string v = "v" + std::to_string(k);
    if (k == nan_at) {
      s += "  e" + std::to_string(k) + " = " + shape + " exponential(" + prev + ")\n";
      s += "  n" + std::to_string(k) + " = " + shape + " negate(e" + std::to_string(k) + ")\n";
      s += "  " + v + " = " + shape + " log(n" + std::to_string(k) + ")\n";
    } else if (dots && k % 2 == 0) {
      s += "  d" + std::to_string(k) + " = " + shape + " dot(" + prev +
           ", p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
      s += "  " + v + " = " + shape + " tanh(d" + std::to_string(k) + ")\n";
    } else {
      s += "  " + v + " = " + shape + (k % 3 == 0 ? " add(" : " multiply(") + prev + ", p1)\n";
    }
    prev = v;
  }
  s += "  ROOT out = " + shape + " tanh(" + prev + ")\n}\n";
  return s;
}

int64_t CountInstructions(const std::string& text) {
  absl::StatusOr<std::unique_ptr<hlowb::Module>> m = hlowb::ParseModule(text);
  if (!m.ok()) return -1;
  int64_t n = 0;
  for (const auto& c : (*m)->computations()) n += static_cast<int64_t>(c->instruction_count());
  return n;
}

}  // namespace

class ReduceDialogTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;

  QString Write(const QString& name, const std::string& text) {
    const QString path = scratch_.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return {};
    f.write(text.data(), static_cast<qint64>(text.size()));
    return path;
  }

  ReduceJob Job(const QString& input, const QString& until, const QString& out) {
    ReduceJob job;
    job.program = QStringLiteral(HLOWB_BINARY);
    job.input = input;
    job.until = until;
    job.out_dir = scratch_.filePath(out);
    job.time_limit_seconds = 120;
    return job;
  }

 private slots:
  void initTestCase() {
    qRegisterMetaType<ReduceProgressLine>();
    qRegisterMetaType<ReduceOutcome>();
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("reduce_dialog_test"));
    QSettings().clear();
  }

  void ProgressLinesParse() {
    std::optional<ReduceProgressLine> p = hlowb::gui::ParseReduceProgressLine(
        QStringLiteral("reduce:    12.5 s  extract              41 instructions left (of 2301), "
                       "57 candidates, 9 kept"));
    QVERIFY(p.has_value());
    QCOMPARE(p->phase, QStringLiteral("extract"));
    QCOMPARE(p->instructions, 41);
    QCOMPARE(p->original_instructions, 2301);
    QCOMPARE(p->candidates, 57);
    QCOMPARE(p->kept, 9);
    QCOMPARE(p->seconds, 12.5);
    QVERIFY(!hlowb::gui::ParseReduceProgressLine(QStringLiteral("hlowb reduce: x.hlo")));
    QVERIFY(!hlowb::gui::ParseReduceProgressLine(QStringLiteral("reduce: 1 s cut")));
  }

  // A NaN deep in a chain: the runner reports the reducer's progress (its counts match the
  // module's own), writes a much smaller module that still makes the same NaN, and packs the
  // bundle; the dialog shows it and offers the module.
  void NaNReducesAndBundles() {
    const std::string text = NaNChain(200, 150, 16, false);
    const int64_t original = CountInstructions(text);
    QVERIFY(original > 200);
    const QString input = Write(QStringLiteral("nan_chain.hlo"), text);
    ReduceDialog dialog(Job(input, QStringLiteral("nonfinite"), QStringLiteral("nan_out")),
                        QStringLiteral("NaN on interpreter"));
    QCOMPARE(dialog.until_box()->currentData().toString(), QStringLiteral("nonfinite"));
    QCOMPARE(dialog.time_limit_box()->value(), 120.0);
    QSignalSpy progress(dialog.runner(), &ReduceRunner::progress);
    QSignalSpy done(&dialog, &ReduceDialog::reduceFinished);
    QSignalSpy open(&dialog, &ReduceDialog::openRequested);
    QVERIFY(dialog.Start());
    QVERIFY(dialog.stop_button()->isEnabled());
    QVERIFY(!dialog.start_button()->isEnabled());
    QVERIFY(!dialog.Start());  // one at a time
    QVERIFY(done.wait(180000));
    const ReduceOutcome& o = dialog.outcome();
    QVERIFY2(o.ok, qPrintable(o.message + QStringLiteral("\n") + o.log));
    QVERIFY(!o.stopped);
    QVERIFY(progress.count() > 0);
    const auto last = progress.last().at(0).value<ReduceProgressLine>();
    QCOMPARE(last.original_instructions, original);
    QCOMPARE(o.original_instructions, original);
    QVERIFY2(o.reduced_instructions * 10 <= original,
             qPrintable(QString::number(o.reduced_instructions)));
    // The written module is the reduced one and still has the seeded log.
    QFile reduced(o.reduced_path);
    QVERIFY(reduced.open(QIODevice::ReadOnly));
    const std::string reduced_text = reduced.readAll().toStdString();
    QCOMPARE(CountInstructions(reduced_text), o.reduced_instructions);
    QVERIFY(reduced_text.find("v150 = ") != std::string::npos);
    QVERIFY(o.failure.contains(QStringLiteral("v150")));
    QVERIFY(o.reproduce.startsWith(QStringLiteral("hlowb replay ")));
    QVERIFY(QFileInfo::exists(QDir(o.bundle_dir).filePath(QStringLiteral("README.md"))));
    QVERIFY(QFileInfo::exists(QDir(o.bundle_dir).filePath(QStringLiteral("module.hlo"))));
    QVERIFY2(o.bundle_error.isEmpty(), qPrintable(o.bundle_error));
    QVERIFY(QFileInfo::exists(QDir(dialog.out_dir_edit()->text()).filePath(
        QStringLiteral("reduce.log"))));
    // The dialog: result, buttons, and the module offered once by itself.
    QVERIFY(dialog.status_text().startsWith(QStringLiteral("Reduced:")));
    QVERIFY(dialog.open_button()->isEnabled());
    QVERIFY(dialog.bundle_button()->isEnabled());
    QVERIFY(!dialog.stop_button()->isEnabled());
    QCOMPARE(open.count(), 1);
    QCOMPARE(open.at(0).at(0).toString(), o.reduced_path);
    QVERIFY(dialog.log_text().contains(QStringLiteral("instructions left")));
  }

  // Stop while the reducer runs the original (a while loop of 600 192x192 dots, about 3 s on
  // the interpreter): the reducer ends at once and says it was cancelled, and nothing is
  // written. (Once the original has failed, a stop keeps the smallest module so far: the same
  // cancel token, see ReduceTest.CancelAndTimeLimitReturnTheSmallestSoFar.)
  void StopEndsTheReduction() {
    const std::string shape = "f32[192,192]";
    const std::string text =
        "HloModule loop_nan\n\nbody {\n  t = (s32[], " + shape + ", " + shape +
        ") parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n  x = " + shape +
        " get-tuple-element(t), index=1\n  w = " + shape +
        " get-tuple-element(t), index=2\n  d = " + shape +
        " dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n  y = " + shape +
        " tanh(d)\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  ROOT r = (s32[], " +
        shape + ", " + shape + ") tuple(j, y, w)\n}\n\ncond {\n  t = (s32[], " + shape + ", " +
        shape +
        ") parameter(0)\n  i = s32[] get-tuple-element(t), index=0\n  lim = s32[] "
        "constant(600)\n  ROOT c = pred[] compare(i, lim), direction=LT\n}\n\nENTRY main {\n"
        "  p0 = " + shape + " parameter(0)\n  p1 = " + shape +
        " parameter(1)\n  zero = s32[] constant(0)\n  init = (s32[], " + shape + ", " + shape +
        ") tuple(zero, p0, p1)\n  w = (s32[], " + shape + ", " + shape +
        ") while(init), condition=cond, body=body\n  g = " + shape +
        " get-tuple-element(w), index=1\n  e = " + shape + " exponential(g)\n  n = " + shape +
        " negate(e)\n  bad = " + shape + " log(n)\n  ROOT out = " + shape + " add(bad, p1)\n}\n";
    QVERIFY(CountInstructions(text) > 0);
    const QString input = Write(QStringLiteral("slow_loop.hlo"), text);
    ReduceRunner runner;
    QSignalSpy progress(&runner, &ReduceRunner::progress);
    QSignalSpy done(&runner, &ReduceRunner::finished);
    ReduceJob job = Job(input, QStringLiteral("nonfinite"), QStringLiteral("stop_out"));
    QVERIFY(runner.Start(job));
    QVERIFY(progress.wait(60000));  // "original": the original run has started
    QCOMPARE(progress.first().at(0).value<ReduceProgressLine>().phase, QStringLiteral("original"));
    QVERIFY(done.isEmpty());
    runner.Stop();
    QVERIFY(done.wait(30000));
    const auto o = done.at(0).at(0).value<ReduceOutcome>();
    QVERIFY(o.stopped);
    QVERIFY(!o.ok);
    QVERIFY2(o.message.contains(QStringLiteral("reduction cancelled")), qPrintable(o.message));
    QVERIFY(o.reduced_path.isEmpty());
    QVERIFY(o.bundle_dir.isEmpty());
    QVERIFY(!runner.running());
  }

  // Errors say what went wrong: a file that is not there, and a module that does not fail.
  void ErrorsAreReported() {
    ReduceRunner runner;
    QSignalSpy done(&runner, &ReduceRunner::finished);
    QVERIFY(runner.Start(Job(scratch_.filePath(QStringLiteral("missing.hlo")),
                             QStringLiteral("nonfinite"), QStringLiteral("missing_out"))));
    QVERIFY(done.wait(60000));
    auto o = done.at(0).at(0).value<ReduceOutcome>();
    QVERIFY(!o.ok);
    QVERIFY2(o.message.contains(QStringLiteral("missing.hlo")), qPrintable(o.message));
    QVERIFY(o.reduced_path.isEmpty());

    const QString clean = Write(QStringLiteral("clean.hlo"),
                                "HloModule clean\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
                                "  ROOT t = f32[4] tanh(p)\n}\n");
    done.clear();
    QVERIFY(runner.Start(Job(clean, QStringLiteral("nonfinite"), QStringLiteral("clean_out"))));
    QVERIFY(done.wait(60000));
    o = done.at(0).at(0).value<ReduceOutcome>();
    QVERIFY(!o.ok);
    QVERIFY2(o.message.contains(QStringLiteral("does not reproduce")), qPrintable(o.message));

    ReduceJob incomplete;
    QVERIFY(!runner.Start(incomplete));
  }

  // From the window: a NaN run offers Reduce… with "nonfinite" (a clean run withdraws it), the
  // dialog reduces the replayed module, and the reduced module opens as a new document.
  void ReplayDockReducesAFailedRun() {
    const std::string text = NaNChain(120, 90, 8, false);
    const QString input = Write(QStringLiteral("window_nan.hlo"), text);
    auto w = std::make_unique<hlowb::gui::MainWindow>();
    w->resize(1280, 720);
    w->show();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    w->OpenPath(input);
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    QVERIFY(!panel->reduce_button()->isEnabled());
    QVERIFY(!w->ShowReduceDialog(QStringLiteral("nonfinite")));  // nothing replayed yet

    auto run = [&] {
      QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
      panel->run_button()->click();
      return finished.wait(60000);
    };
    panel->SetMode(hlowb::viewer::ReplayMode::kFindNonfinite);
    QVERIFY(run());
    QVERIFY2(panel->Verdict().contains(QStringLiteral("v90")), qPrintable(panel->Verdict()));
    QCOMPARE(panel->reducible(), QStringLiteral("nonfinite"));
    QVERIFY(panel->reduce_button()->isEnabled());

    QSignalSpy requested(panel, &hlowb::viewer::ReplayPanel::reduceRequested);
    panel->reduce_button()->click();
    QCOMPARE(requested.count(), 1);
    QPointer<ReduceDialog> dialog = w->reduce_dialog();
    QVERIFY(dialog);
    QVERIFY(dialog->isVisible());
    QCOMPARE(dialog->until_box()->currentData().toString(), QStringLiteral("nonfinite"));
    // The window's replay ran the file itself: the reduction reduces that file.
    QCOMPARE(dialog->runner()->job().input, QString());  // not started yet
    QSignalSpy done(dialog.data(), &ReduceDialog::reduceFinished);
    QVERIFY(dialog->Start());
    QCOMPARE(dialog->runner()->job().input, input);
    QVERIFY(dialog->runner()->job().replay_flags.contains(QStringLiteral("--seed=42")));
    QVERIFY(done.wait(180000));
    const ReduceOutcome o = dialog->outcome();
    QVERIFY2(o.ok, qPrintable(o.message + QStringLiteral("\n") + o.log));
    QVERIFY(!o.bundle_dir.isEmpty());

    // The reduced module opened in a window of its own; the original window still shows the
    // original.
    hlowb::gui::MainWindow* reduced = nullptr;
    QVERIFY(QTest::qWaitFor(
        [&] {
          for (QWidget* top : QApplication::topLevelWidgets()) {
            auto* mw = qobject_cast<hlowb::gui::MainWindow*>(top);
            if (mw != nullptr && mw != w.get() && mw->current_path() == o.reduced_path) {
              reduced = mw;
              return true;
            }
          }
          return false;
        },
        30000));
    QVERIFY(hlowb::testing::WaitWindowIdle(*reduced, 30000));
    QVERIFY(reduced->current_module());
    int64_t shown = 0;
    for (const auto& c : reduced->current_module()->computations()) {
      shown += static_cast<int64_t>(c->instruction_count());
    }
    QCOMPARE(shown, o.reduced_instructions);
    QCOMPARE(w->current_path(), input);
    reduced->close();

    // A clean run withdraws the offer.
    panel->SetMode(hlowb::viewer::ReplayMode::kCompare);
    QVERIFY(run());
    QVERIFY(panel->reducible().isEmpty());
    QVERIFY(!panel->reduce_button()->isEnabled());
  }
};

QTEST_MAIN(ReduceDialogTest)
#include "reduce_dialog_test.moc"
