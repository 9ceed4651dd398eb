// View ▸ Colour by Cost in the main window, offscreen: choosing a measure colours the shown
// computation (the dot, the most expensive in flops, hottest) and adds the totals to the
// computations list; the overlay follows the shown computation; the choice is remembered by the
// next window; the replay's heat map and the overlay take turns (choosing a replay measure
// turns the overlay off and draws the replay's; turning the overlay off brings the replay's
// back); Off clears what the overlay drew.
#include <QAction>
#include <QComboBox>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "app/gui/main_window.h"
#include "app/gui/replay_controller.h"
#include "core/analysis/cost_model.h"
#include "core/analysis/cost_overlay.h"
#include "tests/gui/window_test_util.h"
#include "viewer/graph/graph_cost_overlay.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/widgets/replay_panel.h"

using hlowb::CostMetric;
using hlowb::gui::MainWindow;

class CostWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1280, 720);
    w->show();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    w->OpenPath(QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/sample.hlo"));
    return w;
  }

  static bool WaitOverlay(MainWindow& w) {
    return QTest::qWaitFor([&] { return !w.cost_overlay()->IsComputing(); }, 30000) &&
           hlowb::testing::WaitWindowIdle(w, 30000);
  }

  static QAction* Action(MainWindow& w, const char* name) {
    return w.findChild<QAction*>(QString::fromLatin1(name));
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("cost_window_test"));
    QSettings().clear();
  }

  void MenuColoursTheGraphAndFillsTheTotals() {
    auto w = NewWindow();
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QCOMPARE(w->cost_metric(), CostMetric::kOff);
    QVERIFY(Action(*w, "costOff")->isChecked());
    QCOMPARE(w->graph_view()->CountHeatNodes(), 0);
    QCOMPARE(w->computations_model()->columnCount(), 3);

    Action(*w, "costFlops")->trigger();
    QCOMPARE(w->cost_metric(), CostMetric::kFlops);
    QVERIFY(WaitOverlay(*w));
    const hlowb::Module& m = *w->current_module();
    const hlowb::Computation* entry = m.entry();
    QCOMPARE(w->current_computation(), entry);
    QVERIFY2(w->graph_view()->HeatLegendText().contains(QStringLiteral("Flops")),
             qPrintable(w->graph_view()->HeatLegendText()));
    // Hotter in flops: dot.1 (2·8·16·32) over dot.2 (2·8·32·4); parameters are not coloured.
    const hlowb::Instruction* dot1 = entry->FindInstruction("dot.1");
    const hlowb::Instruction* dot2 = entry->FindInstruction("dot.2");
    QVERIFY(dot1 && dot2);
    hlowb::CostModel model;
    QVERIFY(model.InstructionCost(*dot1).flops > model.InstructionCost(*dot2).flops);
    const QColor hot = w->graph_view()->HeatColorOf(dot1);
    const QColor warm = w->graph_view()->HeatColorOf(dot2);
    QVERIFY(hot.isValid() && warm.isValid());
    QVERIFY(hot != warm);
    QVERIFY(!w->graph_view()->HeatColorOf(entry->FindInstruction("x")).isValid());
    // The computations list: entry's flops equal the cost model's total.
    hlowb::viewer::ComputationsModel* cm = w->computations_model();
    QCOMPARE(cm->columnCount(), static_cast<int>(hlowb::viewer::ComputationsModel::kColumnCount));
    const int row = cm->RowOf(entry);
    QVERIFY(row >= 0);
    const auto totals = cm->CostTotalsAt(row);
    QVERIFY(totals.has_value());
    QCOMPARE(totals->flops, model.ComputationCost(*entry).flops);

    // Another computation: the overlay follows it.
    const hlowb::Computation* fused = m.FindComputation("fused_relu");
    QVERIFY(fused);
    w->computations_view()->selectRow(cm->RowOf(fused));
    emit w->computations_view()->activated(cm->index(cm->RowOf(fused), 0));
    QVERIFY(WaitOverlay(*w));
    QCOMPARE(w->current_computation(), fused);
    QCOMPARE(w->cost_overlay()->computation(), fused);
    QVERIFY(w->graph_view()->HeatColorOf(fused->FindInstruction("add.1")).isValid());

    // Off: nothing left coloured, and the list loses its cost columns.
    Action(*w, "costOff")->trigger();
    QCOMPARE(w->cost_metric(), CostMetric::kOff);
    QCOMPARE(w->graph_view()->CountHeatNodes(), 0);
    QCOMPARE(cm->columnCount(), 3);
  }

  void ChoiceIsRemembered() {
    {
      auto w = NewWindow();
      QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
      Action(*w, "costDeviceGpu")->trigger();
      Action(*w, "costTime")->trigger();
      QVERIFY(WaitOverlay(*w));
      QVERIFY2(w->graph_view()->HeatLegendText().contains(QStringLiteral("GPU")),
               qPrintable(w->graph_view()->HeatLegendText()));
    }
    auto w = NewWindow();
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    QCOMPARE(w->cost_metric(), CostMetric::kEstimatedTime);
    QVERIFY(Action(*w, "costTime")->isChecked());
    QVERIFY(Action(*w, "costDeviceGpu")->isChecked());
    QVERIFY(WaitOverlay(*w));
    QVERIFY(w->graph_view()->CountHeatNodes() > 0);
    w->SetCostMetric(CostMetric::kOff);
  }

  // The replay's heat map and the overlay share the graph's one heat map.
  void ReplayHeatMapAndOverlayTakeTurns() {
    auto w = NewWindow();
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    panel->run_button()->click();  // a profiled run: the heat map shows time
    QVERIFY(finished.wait(60000));
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, 30000));
    const QString replay_legend = w->graph_view()->HeatLegendText();
    QVERIFY(!replay_legend.isEmpty());
    QCOMPARE(panel->heat_metric(), hlowb::viewer::HeatMetric::kTime);

    // The overlay takes over ...
    w->SetCostMetric(CostMetric::kBytesAccessed);
    QVERIFY(WaitOverlay(*w));
    QVERIFY2(w->graph_view()->HeatLegendText().contains(QStringLiteral("Bytes")),
             qPrintable(w->graph_view()->HeatLegendText()));
    QVERIFY(w->cost_overlay()->OwnsHeatMap());
    // ... and turning it off gives the replay's map back.
    w->SetCostMetric(CostMetric::kOff);
    QCOMPARE(w->graph_view()->HeatLegendText(), replay_legend);

    // Choosing a replay measure in the panel turns the overlay off.
    w->SetCostMetric(CostMetric::kFlops);
    QVERIFY(WaitOverlay(*w));
    QVERIFY(w->cost_overlay()->OwnsHeatMap());
    auto* box = panel->findChild<QComboBox*>(QStringLiteral("replayHeatMap"));
    QVERIFY(box);
    const int time_index = box->findData(static_cast<int>(hlowb::viewer::HeatMetric::kTime));
    QVERIFY(time_index >= 0);
    box->setCurrentIndex(time_index);
    emit box->activated(time_index);
    QCOMPARE(w->cost_metric(), CostMetric::kOff);
    QVERIFY(Action(*w, "costOff")->isChecked());
    QCOMPARE(w->graph_view()->HeatLegendText(), replay_legend);
  }
};

QTEST_MAIN(CostWindowTest)
#include "cost_window_test.moc"
