// What a replay brings back into the window: the tensor viewer over outputs and a captured
// instruction, the per-instruction profile and its heat map on the graph, the isolation table
// whose rows select instructions, the pass bisection marked on the timeline, the per-device
// settings, and the bug-report bundle.
#include <QFile>
#include <QFileInfo>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QComboBox>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <limits>
#include <memory>

#include "app/gui/main_window.h"
#include "tests/gui/window_test_util.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "tests/gui/latency_probe.h"
#include "tests/unit/replay/replay_fixtures.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/widgets/properties_panel.h"
#include "viewer/widgets/replay_panel.h"
#include "viewer/widgets/tensor_viewer.h"

using hlowb::Instruction;
using hlowb::Literal;
using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;
using hlowb::viewer::HeatMetric;
using hlowb::viewer::ReplayMode;
using hlowb::viewer::TensorViewer;

namespace {

constexpr int kTimeoutMs = 30000;

bool WaitIdle(MainWindow& w, int timeout_ms = kTimeoutMs) {
  return hlowb::testing::WaitWindowIdle(w, timeout_ms);
}

const Instruction* Find(const std::shared_ptr<const hlowb::Module>& m, const char* name) {
  return m ? hlowb::testing::FindInstruction(*m, name) : nullptr;
}

// Every device's id summed over the replicas.
constexpr char kAllReduce[] = R"(HloModule sum_ids, replica_count=2
add {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT z = s32[] add(x, y)
}
ENTRY e {
  p = s32[3] parameter(0)
  ROOT r = s32[3] all-reduce(p), replica_groups={}, to_apply=add
}
)";

}  // namespace

class ReplayResultsTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    return w;
  }

  QString WriteModule(const QString& name, const char* text) {
    const QString path = scratch_.filePath(name);
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly)) return QString();
    f.write(text);
    return path;
  }

  // Clicks Run and waits for the answer; false when none came.
  bool Run(MainWindow& w) {
    QSignalSpy finished(w.replay_controller(), &hlowb::gui::ReplayController::finished);
    QSignalSpy failed(w.replay_controller(), &hlowb::gui::ReplayController::failed);
    w.replay_panel()->run_button()->click();
    const bool done =
        QTest::qWaitFor([&] { return finished.count() + failed.count() > 0; }, 60000);
    if (!failed.isEmpty()) qWarning("replay failed: %s", qPrintable(failed.first().at(1).toString()));
    return done && finished.count() == 1;
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("replay_results_test"));
    QSettings().clear();
  }

  // The viewer on its own: a 2×3×4 value with NaN and Inf, sliced along chosen axes.
  void TensorViewerSlicesAnyTwoAxesAndCounts() {
    hlowb::Shape shape = hlowb::Shape::Array(hlowb::PrimitiveType::kF32, {2, 3, 4});
    auto literal = std::make_shared<Literal>(shape);
    float* v = literal->mutable_data_as<float>();
    for (int i = 0; i < 24; ++i) v[i] = static_cast<float>(i) - 5.5f;
    v[7] = std::numeric_limits<float>::quiet_NaN();
    v[13] = std::numeric_limits<float>::infinity();
    v[20] = -std::numeric_limits<float>::infinity();
    int64_t nan = 0, inf = 0, finite = 0;
    for (int i = 0; i < 24; ++i) {
      nan += std::isnan(v[i]);
      inf += std::isinf(v[i]);
      finite += std::isfinite(v[i]);
    }
    // A tuple beside it: its leaves are offered one by one.
    hlowb::Shape pair_shape =
        hlowb::Shape::Tuple({hlowb::Shape::Array(hlowb::PrimitiveType::kS32, {2}),
                             hlowb::Shape::Array(hlowb::PrimitiveType::kPred, {})});
    auto pair = std::make_shared<Literal>(pair_shape);
    (*pair->mutable_tuple_elements())[0].mutable_data_as<int32_t>()[1] = -7;

    TensorViewer viewer;
    viewer.SetValues({{QStringLiteral("x"), literal}, {QStringLiteral("pair"), pair}});
    QCOMPARE(viewer.value_count(), 3);
    QCOMPARE(viewer.ValueName(1), QStringLiteral("pair {0}"));
    QCOMPARE(viewer.statistics().nan_count, nan);
    QCOMPARE(viewer.statistics().inf_count, inf);
    int64_t binned = 0;
    for (int64_t b : viewer.statistics().histogram) binned += b;
    QCOMPARE(binned, finite);
    QVERIFY(viewer.StatisticsText().contains(QStringLiteral("NaN: 1")));

    // Default: the last two dimensions, dimension 0 at index 0.
    auto* model = viewer.slice_model();
    QCOMPARE(model->rowCount(), 3);
    QCOMPARE(model->columnCount(), 4);
    QCOMPARE(model->data(model->index(1, 3)).toString(), QStringLiteral("nan"));  // [0,1,3] = 7
    QVERIFY(model->data(model->index(1, 3), Qt::BackgroundRole).isValid());
    // Rows along dimension 0, columns along 2, dimension 1 at 2: element [r, 2, c].
    QVERIFY(viewer.SetAxes(0, 2));
    QVERIFY(viewer.SetSliceIndex(1, 2));
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(model->columnCount(), 4);
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 4; ++c) {
        const int linear = r * 12 + 2 * 4 + c;
        QCOMPARE(model->LinearIndex(r, c), linear);
        const double expected = v[linear];
        const QString text = model->data(model->index(r, c)).toString();
        if (std::isinf(expected)) {
          QCOMPARE(text, expected > 0 ? QStringLiteral("inf") : QStringLiteral("-inf"));
        } else {
          QCOMPARE(text.toDouble(), expected);
        }
      }
    }
    QVERIFY(!viewer.SetAxes(1, 1));        // not distinct
    QVERIFY(!viewer.SetAxes(0, 3));        // no such dimension
    QVERIFY(!viewer.SetSliceIndex(1, 3));  // out of range
    QVERIFY(!viewer.SetSliceIndex(0, 0));  // on an axis

    QVERIFY(viewer.ShowValue(1));
    QCOMPARE(model->rowCount(), 2);
    QCOMPARE(model->columnCount(), 1);
    QCOMPARE(model->data(model->index(1, 0)).toString(), QStringLiteral("-7"));
    QVERIFY(viewer.ShowValue(2));
    QCOMPARE(model->rowCount(), 1);
    QCOMPARE(model->data(model->index(0, 0)).toString(), QStringLiteral("false"));

    // Distance to a copy with two changed elements: NaN on both sides is no distance, NaN on
    // one side is infinitely far.
    Literal other = *literal;
    float* o = other.mutable_data_as<float>();
    o[0] += 0.25f;
    o[1] = std::numeric_limits<float>::quiet_NaN();
    auto diff = hlowb::viewer::AbsoluteDifference(*literal, other);
    QVERIFY(diff);
    QCOMPARE(diff->shape().element_type(), hlowb::PrimitiveType::kF64);
    QCOMPARE(diff->data_as<double>()[0], 0.25);
    QVERIFY(std::isinf(diff->data_as<double>()[1]));
    QCOMPARE(diff->data_as<double>()[7], 0.0);   // NaN and NaN
    QCOMPARE(diff->data_as<double>()[13], 0.0);  // inf and inf
    QVERIFY(!hlowb::viewer::AbsoluteDifference(*literal, *pair));

    // A value of a million elements or more: statistics arrive from a worker thread.
    auto big = std::make_shared<Literal>(hlowb::Shape::Array(hlowb::PrimitiveType::kF32,
                                                             {1024, 1100}));
    float* b = big->mutable_data_as<float>();
    for (int64_t i = 0; i < big->element_count(); ++i) b[i] = static_cast<float>(i % 7);
    b[12345] = std::numeric_limits<float>::quiet_NaN();
    viewer.SetValues({{QStringLiteral("big"), big}});
    // The worker's answer comes through the event loop, which has not run yet.
    QVERIFY(!viewer.statistics_ready());
    QVERIFY(viewer.StatisticsText().contains(QStringLiteral("computing")));
    QTRY_VERIFY(viewer.statistics_ready());
    QCOMPARE(viewer.statistics().nan_count, 1);
    QCOMPARE(viewer.statistics().elements, int64_t{1024} * 1100);
    QVERIFY(viewer.StatisticsText().contains(QStringLiteral("NaN: 1")));
    // Replacing the values while a computation runs drops its result.
    viewer.SetValues({{QStringLiteral("big"), big}});
    viewer.SetValues({{QStringLiteral("x"), literal}});
    QVERIFY(viewer.statistics_ready());
    QCOMPARE(viewer.statistics().nan_count, nan);
    QTest::qWait(300);
    QCOMPARE(viewer.statistics().nan_count, nan);
  }

  // A profiled replay: the outputs and the selected instruction's value in the viewer, one
  // profile row per instruction, and the graph coloured by time and by NaN/Inf.
  void ProfiledReplayShowsValuesAndAHeatMap() {
    auto w = NewWindow();
    w->OpenPath(WriteModule(QStringLiteral("profiled.hlo"), hlowb::testing::kProfiledModule));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->SelectInstructionByName(QStringLiteral("s")));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    hlowb::testing::LatencyProbe probe;
    probe.Start();
    QVERIFY(Run(*w));
    probe.Stop();
    QCOMPARE(panel->Verdict(), QStringLiteral("MATCHED"));
    QVERIFY2(probe.max_cpu_gap() < 100, qPrintable(probe.worst_cpu()));

    // Values: the output, the reference's, their distance, then %s = a + a.
    TensorViewer* viewer = panel->tensor_viewer();
    QTRY_COMPARE(viewer->value_count(), 4);  // decoded off the UI thread
    QCOMPARE(viewer->ValueName(0), QStringLiteral("output"));
    QCOMPARE(viewer->ValueName(1), QStringLiteral("reference output"));
    QVERIFY(viewer->ValueName(2).startsWith(QStringLiteral("|output")));
    QVERIFY(viewer->ShowValue(2));
    // The same interpreter on both sides: no distance anywhere, the NaNs included.
    QCOMPARE(viewer->statistics().zero_count, 4);
    QVERIFY(viewer->ValueName(3).startsWith(QStringLiteral("%s")));
    QVERIFY(viewer->ShowValue(3));
    QCOMPARE(viewer->slice_model()->data(viewer->slice_model()->index(3, 0)).toString(),
             QStringLiteral("-8"));
    // The output is log(8 s) = log({16, 32, 48, -64}): one NaN.
    QVERIFY(viewer->ShowValue(0));
    QCOMPARE(viewer->statistics().nan_count, 1);

    // Profile: the loop body's add ran three times; the log made the NaN.
    const auto& rows = panel->profile_rows();
    const hlowb::viewer::ProfileRowView* twice = nullptr;
    const hlowb::viewer::ProfileRowView* log = nullptr;
    for (const auto& r : rows) {
      if (r.name == QLatin1String("twice")) twice = &r;
      if (r.name == QLatin1String("l")) log = &r;
    }
    QVERIFY(twice && log);
    QCOMPARE(twice->executions, 3);
    QCOMPARE(log->nan_count, 1);
    QCOMPARE(panel->profile_table()->model()->rowCount(), static_cast<int>(rows.size()));

    // Heat map by time: the slowest entry instruction is the top of the scale.
    panel->SetHeatMetric(HeatMetric::kTime);
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::GraphView* graph = w->graph_view();
    QVERIFY(graph->CountHeatNodes() > 0);
    QVERIFY(graph->HeatLegendText().startsWith(QStringLiteral("time")));
    double slowest = 0;
    for (const auto& r : rows) slowest = std::max(slowest, r.seconds);
    const Instruction* l = Find(w->current_module(), "l");
    QVERIFY(l);
    const QColor expected_l = hlowb::viewer::GraphView::HeatColor(log->seconds / slowest);
    QCOMPARE(graph->HeatColorOf(l).name(), expected_l.name());
    // By NaN/Inf share: the log's node is a quarter of the scale, the add's is the bottom.
    panel->SetHeatMetric(HeatMetric::kNonfinite);
    QCOMPARE(graph->HeatColorOf(l).name(), hlowb::viewer::GraphView::HeatColor(0.25).name());
    QCOMPARE(graph->HeatColorOf(Find(w->current_module(), "s")).name(),
             hlowb::viewer::GraphView::HeatColor(0).name());
    // A profile row selects its instruction.
    // (sorted by time, slowest first)
    QAbstractItemModel* profile = panel->profile_table()->model();
    for (int r = 0; r + 1 < profile->rowCount(); ++r) {
      QVERIFY(profile->index(r, 2).data(Qt::UserRole).toDouble() >=
              profile->index(r + 1, 2).data(Qt::UserRole).toDouble());
    }
    for (int r = 0; r < profile->rowCount(); ++r) {
      if (profile->index(r, 0).data().toString() == QLatin1String("l")) {
        emit panel->profile_table()->clicked(profile->index(r, 3));
      }
    }
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->properties_panel()->instruction(), l);
    panel->SetHeatMetric(HeatMetric::kOff);
    QCOMPARE(graph->CountHeatNodes(), 0);
    QVERIFY(graph->HeatLegendText().isEmpty());

    // The bundle of this replay.
    const QString bundle = scratch_.filePath(QStringLiteral("bundle"));
    QSignalSpy exported(w.get(), &MainWindow::bundleExported);
    QVERIFY(panel->bundle_button()->isEnabled());
    QVERIFY(w->ExportReplayBundle(bundle));
    QVERIFY(exported.wait(60000));
    QVERIFY2(exported.at(0).at(0).toBool(), qPrintable(exported.at(0).at(1).toString()));
    for (const char* file : {"module.hlo", "module.hlo.pb", "snapshot.hlo_snapshot.pb",
                             "flags.txt", "report.txt", "README.md"}) {
      QVERIFY2(QFileInfo(bundle + QLatin1Char('/') + QLatin1String(file)).size() > 0, file);
    }
    QFile flags(bundle + QStringLiteral("/flags.txt"));
    QVERIFY(flags.open(QIODevice::ReadOnly));
    QVERIFY(QString::fromUtf8(flags.readAll()).contains(QStringLiteral("--seed=42")));
  }

  // A replay with a 16 MB output, a reference and their distance: the window answers within
  // 100 ms of UI-thread time throughout, from Run until the values and their statistics show.
  void LargeOutputsStayOffTheUiThread() {
    auto w = NewWindow();
    w->OpenPath(WriteModule(QStringLiteral("large.hlo"), R"(HloModule large
ENTRY e {
  p = f32[2048,2048] parameter(0)
  ROOT r = f32[2048,2048] multiply(p, p)
}
)"));
    QVERIFY(WaitIdle(*w));
    hlowb::testing::LatencyProbe probe;
    probe.Start();
    QVERIFY(Run(*w));
    TensorViewer* viewer = w->replay_panel()->tensor_viewer();
    QTRY_COMPARE_WITH_TIMEOUT(viewer->value_count(), 3, 30000);
    QTRY_VERIFY_WITH_TIMEOUT(viewer->statistics_ready(), 30000);
    probe.Stop();
    QCOMPARE(viewer->statistics().elements, int64_t{2048} * 2048);
    QVERIFY(viewer->ShowValue(2));
    QTRY_VERIFY_WITH_TIMEOUT(viewer->statistics_ready(), 30000);
    QCOMPARE(viewer->statistics().zero_count, int64_t{2048} * 2048);  // same interpreter twice
    qInfo("UI thread: max gap %lld ms (%s), max CPU in a gap %.1f ms (%s)",
          static_cast<long long>(probe.max_gap()), qPrintable(probe.worst()), probe.max_cpu_gap(),
          qPrintable(probe.worst_cpu()));
    QVERIFY2(probe.max_cpu_gap() < 100, qPrintable(probe.worst_cpu()));
  }

  // Isolation: a row per entry instruction that computes, each selecting its instruction.
  void IsolationRowsSelectTheirInstructions() {
    auto w = NewWindow();
    w->OpenPath(WriteModule(QStringLiteral("isolated.hlo"), hlowb::testing::kProfiledModule));
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    panel->SetMode(ReplayMode::kIsolate);
    QVERIFY(Run(*w));
    QVERIFY2(panel->Verdict().startsWith(QStringLiteral("ISOLATED")), qPrintable(panel->Verdict()));
    QStringList names;
    for (const auto& r : panel->isolation_rows()) names << r.name;
    names.sort();
    // Parameters, constants, tuples and get-tuple-elements move values and get no row.
    QCOMPARE(names, (QStringList{QStringLiteral("l"), QStringLiteral("loop"), QStringLiteral("s")}));
    QCOMPARE(panel->tabs()->tabText(panel->tabs()->currentIndex()), QStringLiteral("Isolation"));
    QTableView* table = panel->isolation_table();
    for (int r = 0; r < table->model()->rowCount(); ++r) {
      if (table->model()->index(r, 0).data().toString() != QLatin1String("loop")) continue;
      emit table->activated(table->model()->index(r, 1));
    }
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected(), Find(w->current_module(), "loop"));
    panel->SetHeatMetric(HeatMetric::kIsolationError);
    QCOMPARE(w->graph_view()->CountHeatNodes(), 3);
  }

  // Bisecting the passes of a dump directory: the first divergent pass in the Passes tab and
  // red in the timeline's Replay column; clicking its row shows that state.
  void BisectionMarksTheTimeline() {
    const QString dir = scratch_.filePath(QStringLiteral("bisect_dump"));
    QVERIFY(hlowb::testing::WriteBisectDump(dir.toStdString()).ok());
    auto w = NewWindow();
    w->Open(OpenRequest{dir, QStringLiteral("m"), QStringLiteral("before"), {}});
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    panel->SetMode(ReplayMode::kBisectPasses);
    QCOMPARE(panel->mode_box()->currentData().toInt(), static_cast<int>(ReplayMode::kBisectPasses));
    QVERIFY(w->timeline_view()->isColumnHidden(hlowb::viewer::TimelineModel::kReplay));
    QVERIFY(Run(*w));
    QVERIFY2(panel->Verdict().contains(QStringLiteral("bad-math")), qPrintable(panel->Verdict()));
    int divergent = -1;
    for (size_t i = 0; i < panel->bisect_rows().size(); ++i) {
      if (panel->bisect_rows()[i].verdict == QLatin1String("DIVERGED")) {
        divergent = static_cast<int>(i);
        break;
      }
    }
    QVERIFY(divergent >= 0);
    QCOMPARE(panel->bisect_rows()[divergent].pass, QStringLiteral("bad-math"));
    QVERIFY(!w->timeline_view()->isColumnHidden(hlowb::viewer::TimelineModel::kReplay));
    int timeline_row = -1;
    for (size_t r = 0; r < w->states().size(); ++r) {
      if (w->states()[r].pass == "bad-math") timeline_row = static_cast<int>(r);
    }
    QVERIFY(timeline_row >= 0);
    QCOMPARE(w->timeline_model()->ReplayVerdict(timeline_row), QStringLiteral("DIVERGED"));
    QCOMPARE(w->timeline_model()->ReplayVerdict(0), QStringLiteral("baseline"));
    QAbstractItemModel* bisect = panel->bisect_table()->model();
    QCOMPARE(bisect->index(divergent, 2).data().toString(), QStringLiteral("DIVERGED"));
    QVERIFY(bisect->index(divergent, 2).data(Qt::BackgroundRole).isValid());
    emit panel->bisect_table()->clicked(bisect->index(divergent, 1));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), timeline_row);
  }

  // Devices: two replicas with their ids as arguments sum to 1 in every element; the
  // module alone (one device when asked for one replica) gives 0.
  void DeviceSettingsReachTheReplay() {
    auto w = NewWindow();
    w->OpenPath(WriteModule(QStringLiteral("sum_ids.hlo"), kAllReduce));
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    panel->argument_mode_box()->setCurrentIndex(
        panel->argument_mode_box()->findData(QStringLiteral("use_device_id_as_input")));
    panel->replicas_box()->setValue(2);
    QVERIFY(Run(*w));
    QVERIFY2(panel->Verdict() == QStringLiteral("MATCHED"), qPrintable(panel->Details()));
    // Each device's output, its reference and their distance.
    TensorViewer* viewer = panel->tensor_viewer();
    QTRY_COMPARE(viewer->value_count(), 6);
    QCOMPARE(viewer->ValueName(3), QStringLiteral("output, device 1"));
    auto* model = viewer->slice_model();
    QCOMPARE(model->data(model->index(2, 0)).toString(), QStringLiteral("1"));
    QVERIFY(viewer->ShowValue(3));
    QCOMPARE(model->data(model->index(0, 0)).toString(), QStringLiteral("1"));
    QVERIFY(viewer->ShowValue(0));

    panel->replicas_box()->setValue(1);
    QVERIFY(Run(*w));
    QTRY_COMPARE(viewer->value_count(), 3);  // output, reference, distance
    QCOMPARE(viewer->ValueName(0), QStringLiteral("output"));
    QCOMPARE(model->data(model->index(2, 0)).toString(), QStringLiteral("0"));
  }

  void TheCpuBackendRunsFromTheReplayDock() {
    auto w = NewWindow();
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    QVERIFY(WaitIdle(*w));
    auto* platform = w->findChild<QComboBox*>(QStringLiteral("replayPlatform"));
    auto* reference = w->findChild<QComboBox*>(QStringLiteral("replayReference"));
    QVERIFY(platform != nullptr && reference != nullptr);
    const int cpu = platform->findData(QStringLiteral("cpu"));
    QVERIFY(cpu >= 0);
    auto* model = qobject_cast<QStandardItemModel*>(platform->model());
    QVERIFY(model != nullptr && model->item(cpu)->isEnabled());
    QVERIFY(reference->findData(QStringLiteral("cpu")) >= 0);
    platform->setCurrentIndex(cpu);
    reference->setCurrentIndex(reference->findData(QStringLiteral("interpreter")));
    QVERIFY(Run(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    QVERIFY2(panel->Verdict() == QStringLiteral("MATCHED"), qPrintable(panel->Details()));
    QVERIFY2(panel->Details().contains(QStringLiteral("Compiled for cpu:")) &&
                 panel->Details().contains(QStringLiteral("kernel")),
             qPrintable(panel->Details()));
  }

  void CudaIsOfferedOnlyWithAGpu() {
    // The window looks for a GPU off the UI thread; until it knows, cuda is listed disabled.
    auto w = NewWindow();
    auto* platform = w->findChild<QComboBox*>(QStringLiteral("replayPlatform"));
    auto* reference = w->findChild<QComboBox*>(QStringLiteral("replayReference"));
    QVERIFY(platform != nullptr && reference != nullptr);
    const int index = platform->findData(QStringLiteral("cuda"));
    QVERIFY(index >= 0);
    QTRY_VERIFY_WITH_TIMEOUT(
        !platform->itemData(index, Qt::ToolTipRole).toString().startsWith(
            QStringLiteral("Looking for")),
        30000);
    const bool gpu = hlowb::CudaAvailable().ok();
    for (QComboBox* combo : {platform, reference}) {
      const int i = combo->findData(QStringLiteral("cuda"));
      QVERIFY(i >= 0);
      auto* model = qobject_cast<QStandardItemModel*>(combo->model());
      QVERIFY(model != nullptr);
      QCOMPARE(model->item(i)->isEnabled(), gpu);
      const QString tip = combo->itemData(i, Qt::ToolTipRole).toString();
      if (gpu) {
        QVERIFY2(tip.contains(QString::fromStdString(hlowb::CudaDeviceDescription())),
                 qPrintable(tip));
      } else {
        QVERIFY2(tip.contains(QStringLiteral("driver")), qPrintable(tip));
      }
    }
    QVERIFY2(platform->itemText(index).contains(
                 gpu ? QString::fromStdString(hlowb::CudaDeviceDescription())
                     : QStringLiteral("no GPU")),
             qPrintable(platform->itemText(index)));
  }

  void XlaCpuIsOfferedWhenJaxIsFound() {
    // Without jax the entries are there but disabled, and say how to get it.
    qputenv("HLOWB_PYTHON", "/nonexistent/hlowb-test/python");
    {
      auto w = NewWindow();
      auto* platform = w->findChild<QComboBox*>(QStringLiteral("replayPlatform"));
      auto* reference = w->findChild<QComboBox*>(QStringLiteral("replayReference"));
      QVERIFY(platform != nullptr && reference != nullptr);
      for (QComboBox* combo : {platform, reference}) {
        const int index = combo->findData(QStringLiteral("xla-cpu"));
        QVERIFY(index >= 0);
        auto* model = qobject_cast<QStandardItemModel*>(combo->model());
        QVERIFY(model != nullptr && !model->item(index)->isEnabled());
        QVERIFY2(combo->itemData(index, Qt::ToolTipRole).toString().contains(
                     QStringLiteral("HLOWB_PYTHON")),
                 qPrintable(combo->itemData(index, Qt::ToolTipRole).toString()));
      }
    }
    qunsetenv("HLOWB_PYTHON");
    if (!QFileInfo(QStringLiteral(HLOWB_SOURCE_DIR "/.venv/bin/python")).isExecutable()) {
      QSKIP("needs the pinned jax in .venv (scripts/setup creates it)");
    }
    auto w = NewWindow();
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    QVERIFY(WaitIdle(*w));
    auto* platform = w->findChild<QComboBox*>(QStringLiteral("replayPlatform"));
    auto* reference = w->findChild<QComboBox*>(QStringLiteral("replayReference"));
    const int xla = reference->findData(QStringLiteral("xla-cpu"));
    auto* model = qobject_cast<QStandardItemModel*>(reference->model());
    QVERIFY(xla >= 0 && model->item(xla)->isEnabled());
    platform->setCurrentIndex(platform->findData(QStringLiteral("interpreter")));
    reference->setCurrentIndex(xla);
    QVERIFY(Run(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    QVERIFY2(panel->Verdict() == QStringLiteral("MATCHED"), qPrintable(panel->Details()));
  }
};

QTEST_MAIN(ReplayResultsTest)
#include "replay_results_test.moc"
