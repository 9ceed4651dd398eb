// The replay controller against a real `hlowb worker` child: a replay completes and matches
// while the UI thread stays responsive; a newer request replaces a waiting one and cancel
// stops a running one; a worker that crashes mid-run (test-only flag) or never answers is
// reported with the last instruction reached, and the next request gets a fresh worker.
#include <QCoreApplication>
#include <QSignalSpy>
#include <QTest>
#include <string>

#include "app/gui/replay_controller.h"
#include "latency_probe.h"

using hlowb::gui::ReplayController;
using hlowb::worker::ReplayRequest;
using hlowb::worker::ReplayResult;

Q_DECLARE_METATYPE(std::shared_ptr<const hlowb::worker::ReplayResult>)

namespace {

// A while loop of `n` iterations over a 64k vector.
std::string Loop(int n) {
  return "HloModule loop\n"
         "cond {\n  p = (s32[], f32[65536]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
         "  n = s32[] constant(" + std::to_string(n) + ")\n"
         "  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
         "body {\n  p = (s32[], f32[65536]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
         "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
         "  v = f32[65536] get-tuple-element(p), index=1\n  w = f32[65536] sine(v)\n"
         "  ROOT t = (s32[], f32[65536]) tuple(j, w)\n}\n"
         "ENTRY e {\n  x = f32[65536] parameter(0)\n  zero = s32[] constant(0)\n"
         "  init = (s32[], f32[65536]) tuple(zero, x)\n"
         "  loop = (s32[], f32[65536]) while(init), condition=cond, body=body\n"
         "  ROOT r = f32[65536] get-tuple-element(loop), index=1\n}\n";
}

ReplayRequest Request(const std::string& text, bool reference = true) {
  ReplayRequest r;
  r.set_module_text(text);
  if (reference) r.set_reference_platform("interpreter");
  return r;
}

const QString kBinary = QStringLiteral(HLOWB_BINARY);

}  // namespace

class ReplayControllerTest : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { qRegisterMetaType<std::shared_ptr<const hlowb::worker::ReplayResult>>(); }

  void ReplayCompletesAndTheUiStaysResponsive() {
    ReplayController c;
    c.SetWorkerCommand(kBinary, {QStringLiteral("worker")});
    QSignalSpy finished(&c, &ReplayController::finished);
    QSignalSpy failed(&c, &ReplayController::failed);
    QSignalSpy progress(&c, &ReplayController::progress);
    hlowb::testing::LatencyProbe probe;
    probe.SetPhase("replay");
    probe.Start();
    const quint64 id = c.Submit(Request(Loop(200)));
    QVERIFY(c.IsBusy());
    QVERIFY(finished.wait(60000));
    probe.Stop();
    QCOMPARE(failed.count(), 0);
    QCOMPARE(finished.first().at(0).value<quint64>(), id);
    const ReplayResult result =
        *finished.first().at(1).value<std::shared_ptr<const ReplayResult>>();
    QVERIFY(result.all_match());
    QCOMPARE(result.iterations_size(), 1);
    QVERIFY(result.iterations(0).matched());
    QVERIFY(progress.count() >= 1);
    QVERIFY(!c.IsBusy());
    qInfo("replay with %lld progress messages; max event-loop gap %lld ms, UI-thread CPU in a "
          "gap at most %.0f ms", static_cast<long long>(progress.count()),
          static_cast<long long>(probe.max_gap()), probe.max_cpu_gap());
    QVERIFY2(probe.max_cpu_gap() < 100, qPrintable(QString::number(probe.max_cpu_gap())));
    if (!hlowb::testing::LatencyProbe::MachineOverloaded()) QVERIFY(probe.max_gap() < 100);
  }

  void TheCpuPlatformReplaysAndAgreesWithTheInterpreter() {
    ReplayController c;
    c.SetWorkerCommand(kBinary, {QStringLiteral("worker")});
    QSignalSpy finished(&c, &ReplayController::finished);
    QSignalSpy failed(&c, &ReplayController::failed);
    ReplayRequest r = Request(Loop(20));
    r.set_platform("cpu");
    c.Submit(r);
    QVERIFY(finished.wait(120000));
    QCOMPARE(failed.count(), 0);
    const ReplayResult result =
        *finished.first().at(1).value<std::shared_ptr<const ReplayResult>>();
    QVERIFY(result.all_match());
    QVERIFY(result.iterations(0).matched());
    // The compiled platform says what it compiled: the loop body's sine became a kernel.
    QVERIFY2(result.compile_summary().find("kernel") != std::string::npos,
             result.compile_summary().c_str());
  }

  void NewerRequestsReplaceWaitingOnesAndCancelStopsTheRunning() {
    ReplayController c;
    c.SetWorkerCommand(kBinary, {QStringLiteral("worker")});
    QSignalSpy finished(&c, &ReplayController::finished);
    QSignalSpy failed(&c, &ReplayController::failed);
    QSignalSpy progress(&c, &ReplayController::progress);
    const quint64 a = c.Submit(Request(Loop(1000000), false));  // runs for a long time
    const quint64 b = c.Submit(Request(Loop(3)));
    const quint64 d = c.Submit(Request(Loop(4)));  // replaces b
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.first().at(0).value<quint64>(), b);
    QVERIFY(failed.first().at(1).toString().contains(QStringLiteral("replaced")));
    QVERIFY(progress.wait(30000));
    c.Cancel(a);
    QTRY_COMPARE_WITH_TIMEOUT(failed.count(), 2, 30000);
    QCOMPARE(failed.at(1).at(0).value<quint64>(), a);
    QVERIFY(failed.at(1).at(1).toString().contains(QStringLiteral("cancel")));
    QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
    QCOMPARE(finished.first().at(0).value<quint64>(), d);
    QVERIFY(c.WorkerRunning());  // the same worker served all three
  }

  void ACrashOrAHangIsReportedAndTheNextRequestGetsAFreshWorker() {
    ReplayController c;
    c.SetWorkerCommand(kBinary, {QStringLiteral("worker"),
                                 QStringLiteral("--test_abort_after_instructions=5")});
    QSignalSpy finished(&c, &ReplayController::finished);
    QSignalSpy failed(&c, &ReplayController::failed);
    const quint64 crashed = c.Submit(Request(Loop(50)));
    QVERIFY(failed.wait(30000));
    QCOMPARE(failed.first().at(0).value<quint64>(), crashed);
    QVERIFY2(failed.first().at(1).toString().contains(QStringLiteral("crashed")),
             qPrintable(failed.first().at(1).toString()));
    QVERIFY(!failed.first().at(2).toString().isEmpty());  // the last instruction reached
    QVERIFY(!c.WorkerRunning());

    c.SetWorkerCommand(kBinary, {QStringLiteral("worker")});
    const quint64 next = c.Submit(Request(Loop(2)));
    QVERIFY(finished.wait(30000));
    QCOMPARE(finished.first().at(0).value<quint64>(), next);

    // A worker that never answers: the deadline ends the request.
    ReplayController hung;
    hung.SetWorkerCommand(QStringLiteral("/bin/sleep"), {QStringLiteral("30")});
    hung.SetDeadlineMs(300);
    QSignalSpy hung_failed(&hung, &ReplayController::failed);
    hung.Submit(Request(Loop(2)));
    QVERIFY(hung_failed.wait(10000));
    QVERIFY(hung_failed.first().at(1).toString().contains(QStringLiteral("did not answer")));
  }
};

QTEST_MAIN(ReplayControllerTest)
#include "replay_controller_test.moc"
