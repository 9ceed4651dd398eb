// What a new user hit in the window, each driven offscreen the way the user did it: modules of
// one name shown as separate timelines (five compilations of one function; a pass-by-pass module
// next to another compilation of its name), replay results that must go with their document,
// the modules filter after File ▸ Open, "Hide unchanged passes" keeping the current state,
// Ctrl+Shift+H bringing History to the front with room for its rows, and the window at
// 1280×720.
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QGraphicsView>
#include <QGuiApplication>
#include <QHeaderView>
#include <QImage>
#include <QLineEdit>
#include <QMap>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QTextEdit>
#include <QToolBar>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>

#include "app/gui/main_window.h"
#include "core/analysis/diff.h"
#include "core/ir/module.h"
#include "tests/gui/window_test_util.h"
#include "tests/unit/fusion_states.h"
#include "tests/unit/replay/replay_fixtures.h"
#include "viewer/graph/graph_scene.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_diff_view.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/history_panel.h"
#include "viewer/widgets/properties_panel.h"
#include "viewer/widgets/replay_panel.h"
#include "viewer/widgets/tensor_viewer.h"

using hlowb::testing::kAfterFusion;
using hlowb::testing::kBeforeFusion;

using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;

namespace {

constexpr int kTimeoutMs = 30000;
const QString kSampleDump = QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/dump");

bool WaitIdle(MainWindow& w, int timeout_ms = kTimeoutMs) {
  return hlowb::testing::WaitWindowIdle(w, timeout_ms);
}

bool Has(const MainWindow& w, const char* name) {
  return w.current_module() && hlowb::testing::FindInstruction(*w.current_module(), name);
}

// A module whose entry negates its parameter `negates` times, the instructions named tag.1, ...
QByteArray ChainModule(const QString& name, const QString& tag, int negates) {
  QString text =
      QStringLiteral("HloModule %1\n\nENTRY main {\n  p = f32[4] parameter(0)\n").arg(name);
  QString last = QStringLiteral("p");
  for (int i = 1; i <= negates; ++i) {
    const QString n = QStringLiteral("%1.%2").arg(tag).arg(i);
    text += QStringLiteral("  %1%2 = f32[4] negate(%3)\n")
                .arg(i == negates ? QStringLiteral("ROOT ") : QString(), n, last);
    last = n;
  }
  return (text + QStringLiteral("}\n")).toUtf8();
}

QString Id(int id) { return QStringLiteral("%1").arg(id, 4, 10, QLatin1Char('0')); }

bool Write(const QString& path, const QByteArray& text) {
  QFile f(path);
  return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
}

// Pixels of `image` within a few steps of `color` on every channel.
int CountNear(const QImage& image, const QColor& color) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      n += std::abs(c.red() - color.red()) < 24 && std::abs(c.green() - color.green()) < 24 &&
           std::abs(c.blue() - color.blue()) < 24;
    }
  }
  return n;
}

// `area` of the scene drawn at twice its size on white.
QImage Render(QGraphicsScene* scene, const QRectF& area) {
  QImage image((area.size() * 2).toSize().expandedTo(QSize(1, 1)), QImage::Format_ARGB32);
  image.fill(Qt::white);
  QPainter p(&image);
  scene->render(&p, QRectF(QPointF(0, 0), image.size()), area);
  return image;
}

// Degrees between two colours' hues on the colour wheel.
int HueDistance(const QColor& a, const QColor& b) {
  const int d = std::abs(a.hsvHue() - b.hsvHue()) % 360;
  return std::min(d, 360 - d);
}

// WCAG contrast ratio of two colours (1 to 21).
double Contrast(const QColor& a, const QColor& b) {
  auto luminance = [](const QColor& c) {
    auto channel = [](double v) {
      return v <= 0.03928 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF());
  };
  const double la = luminance(a), lb = luminance(b);
  return (std::max(la, lb) + 0.05) / (std::min(la, lb) + 0.05);
}

}  // namespace

class NewUserTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;
  QString five_dir_;   // five compilations of jit__psum
  QString steps_dir_;  // pass-by-pass jit_step under ids 90 and 96
  QString fuse_dir_;   // a fusion pass: add.2 into a fusion that grows, add.3 into a new one

  std::unique_ptr<MainWindow> NewWindow() {
    QSettings().clear();
    auto w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    return w;
  }

  void WriteDumps() {
    QDir root(scratch_.path());
    QVERIFY(root.mkpath(QStringLiteral("five")));
    QVERIFY(root.mkpath(QStringLiteral("steps")));
    five_dir_ = root.filePath(QStringLiteral("five"));
    steps_dir_ = root.filePath(QStringLiteral("steps"));
    for (int id : {1, 11, 27, 31, 41}) {
      const QString prefix = five_dir_ + QStringLiteral("/module_%1.jit__psum.").arg(Id(id));
      const QString tag = QStringLiteral("m%1").arg(id);
      QVERIFY(Write(prefix + QStringLiteral("before_optimizations.txt"),
                    ChainModule(QStringLiteral("jit__psum"), tag, 1 + id % 7)));
      for (const char* stage :
           {"after_optimizations", "after_optimizations_before_buffer_assignment",
            "after_optimizations_after_buffer_assignment"}) {
        QVERIFY(Write(prefix + QLatin1String(stage) + QStringLiteral(".txt"),
                      ChainModule(QStringLiteral("jit__psum"), tag, 1)));
      }
    }
    // Module 96: step k has k+1 negates (every pass changes it). Module 90: every state the
    // same (every pass after the first unchanged).
    for (int id : {90, 96}) {
      const QString prefix = steps_dir_ + QStringLiteral("/module_%1.jit_step.").arg(Id(id));
      auto text = [&](int negates) {
        return id == 96 ? ChainModule(QStringLiteral("jit_step"), QStringLiteral("neg96"), negates)
                        : ChainModule(QStringLiteral("jit_step"), QStringLiteral("other"), 1);
      };
      QVERIFY(Write(prefix + QStringLiteral("before_optimizations.txt"), text(1)));
      for (int step = 0; step < 16; ++step) {
        QVERIFY(Write(prefix + QStringLiteral("%1.pipe.after_p%2.before_p%3.txt")
                                   .arg(Id(step))
                                   .arg(step)
                                   .arg(step + 1),
                      text(step + 1)));
      }
      QVERIFY(Write(prefix + QStringLiteral("after_optimizations.txt"), text(16)));
    }
    QVERIFY(root.mkpath(QStringLiteral("fuse")));
    fuse_dir_ = root.filePath(QStringLiteral("fuse"));
    const QString fuse = fuse_dir_ + QStringLiteral("/module_0005.jit_fuse.");
    QVERIFY(Write(fuse + QStringLiteral("0000.fusion.after_pipeline-start.before_fusion.txt"),
                  kBeforeFusion));
    QVERIFY(Write(fuse + QStringLiteral("0001.fusion.after_fusion.before_dce.txt"), kAfterFusion));
    QVERIFY(Write(fuse + QStringLiteral("0002.fusion.after_dce.before_pipeline-end.txt"),
                  kAfterFusion));
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("new_user_test"));
    WriteDumps();
  }

  // Item 1: every module id is its own timeline in the window.
  void SameNameModulesAreSeparateTimelines() {
    auto w = NewWindow();
    w->Open(OpenRequest{five_dir_, QStringLiteral("11"), {}, {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->modules_model()->rowCount(), 5);
    QCOMPARE(w->timeline_model()->rowCount(), 4);
    for (const hlowb::DumpState& s : w->states()) QCOMPARE(s.module_id, int64_t{11});
    QVERIFY(Has(*w, "m11.5"));  // 11's before_optimizations: 1 + 11 % 7 negates
    QVERIFY(w->SelectModule(QStringLiteral("41")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->timeline_model()->rowCount(), 4);
    QVERIFY(Has(*w, "m41.7"));

    // `--module=96 --step=5` opens module 96's file, and its timeline has each step once.
    w->Open(OpenRequest{steps_dir_, QStringLiteral("96"), QStringLiteral("5"), {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->timeline_model()->rowCount(), 18);
    QVERIFY(Has(*w, "neg96.6"));
    QVERIFY(!Has(*w, "other.1"));
    QCOMPARE(QString::fromStdString(w->states()[w->current_state_row()].label),
             QStringLiteral("0005 pipe: p5"));

    // History follows the instruction through module 96's 18 states only.
    QVERIFY(w->SelectInstructionByName(QStringLiteral("neg96.6")));
    w->history_dock()->show();
    w->history_dock()->raise();
    QVERIFY(QTest::qWaitFor([&] { return w->history_panel()->rows().size() > 0; }, kTimeoutMs));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(static_cast<int>(w->history_panel()->rows().size()), 18);
  }

  // Item 2: after opening another file, the replay tabs hold nothing of the previous module.
  void ReplayResultsGoWithTheirDocument() {
    auto w = NewWindow();
    const QString first = scratch_.filePath(QStringLiteral("first.hlo"));
    const QString second = scratch_.filePath(QStringLiteral("second.hlo"));
    QVERIFY(Write(first, ChainModule(QStringLiteral("first"), QStringLiteral("a"), 3)));
    QVERIFY(Write(second, ChainModule(QStringLiteral("second"), QStringLiteral("a"), 2)));
    w->OpenPath(first);
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();

    // An isolation run on the first file: its rows name a.1 .. a.3.
    panel->SetMode(hlowb::viewer::ReplayMode::kIsolate);
    QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    panel->run_button()->click();
    QVERIFY(QTest::qWaitFor([&] { return finished.count() > 0; }, 60000));
    QVERIFY(QTest::qWaitFor([&] { return !panel->running(); }, kTimeoutMs));
    QVERIFY(!panel->isolation_rows().empty());
    QVERIFY(panel->isolation_table()->model()->rowCount() > 0);
    QVERIFY(!panel->Verdict().isEmpty());

    w->OpenPath(second);
    QVERIFY(WaitIdle(*w));
    QVERIFY(panel->isolation_rows().empty());
    QCOMPARE(panel->isolation_table()->model()->rowCount(), 0);
    QCOMPARE(panel->profile_table()->model()->rowCount(), 0);
    QVERIFY(panel->Verdict().isEmpty());
    QVERIFY(panel->Details().isEmpty());
    QVERIFY(!panel->save_button()->isEnabled());

    // A run still going when another file opens brings nothing back into the new document.
    panel->SetMode(hlowb::viewer::ReplayMode::kCompare);
    QSignalSpy answered(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    QSignalSpy failed(w->replay_controller(), &hlowb::gui::ReplayController::failed);
    panel->run_button()->click();
    QVERIFY(panel->running());
    w->OpenPath(first);
    QVERIFY(WaitIdle(*w));
    QVERIFY(QTest::qWaitFor([&] { return !w->replay_controller()->IsBusy(); }, 60000));
    QTest::qWait(50);  // an answer that was on its way arrives
    QVERIFY(!panel->running());
    QVERIFY(panel->Verdict().isEmpty());
    QCOMPARE(panel->profile_table()->model()->rowCount(), 0);
  }

  // Item 4: File ▸ Open of another path clears the modules filter.
  void ModuleFilterIsClearedOnOpeningAnotherPath() {
    auto w = NewWindow();
    w->OpenPath(five_dir_);
    QVERIFY(WaitIdle(*w));
    w->modules_filter()->setText(QStringLiteral("psum"));
    QCOMPARE(w->modules_proxy()->rowCount(), 5);
    w->modules_filter()->setText(QStringLiteral("no such module"));
    QCOMPARE(w->modules_proxy()->rowCount(), 0);
    w->OpenPath(steps_dir_);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->modules_filter()->text().isEmpty());
    QCOMPARE(w->modules_proxy()->rowCount(), 2);
  }

  // Item 5: toggling "Hide unchanged passes" leaves the shown state shown and current, also
  // when it is one of the unchanged passes being hidden.
  void HideUnchangedKeepsTheCurrentState() {
    auto w = NewWindow();
    w->Open(OpenRequest{steps_dir_, QStringLiteral("90"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    const int row = w->current_state_row();
    QCOMPARE(QString::fromStdString(w->states()[row].label), QStringLiteral("0007 pipe: p7"));
    QCOMPARE(w->timeline_model()->EntryAt(row)->changed, std::optional<bool>(false));
    auto current_row = [&] {
      const QModelIndex current = w->timeline_view()->currentIndex();
      return current.isValid() ? w->timeline_filter()->mapToSource(current).row() : -1;
    };
    for (bool hide : {true, false, true}) {
      w->hide_unchanged_box()->setChecked(hide);
      QVERIFY(WaitIdle(*w));
      QCOMPARE(w->current_state_row(), row);
      QCOMPARE(current_row(), row);
    }
    // Hidden rows are gone but the shown one stays listed; stepping on leaves it behind.
    QVERIFY(w->timeline_filter()->rowCount() < w->timeline_model()->rowCount());
    QTest::keyClick(w->timeline_view(), Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_state_row() > row);
    QCOMPARE(current_row(), w->current_state_row());
    w->hide_unchanged_box()->setChecked(false);
  }

  // Item 7: Ctrl+Shift+H brings History to the front when it is a tab behind Properties (and
  // closes it only when it is in front); docked, it shows at least ten rows.
  void HistoryShortcutShowsAndRaisesIt() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), {}, {}});
    QVERIFY(WaitIdle(*w));
    QDockWidget* history = w->history_dock();
    // A tab behind Properties: not closed, but nothing of it on screen.
    QVERIFY(!history->isHidden());
    QVERIFY(w->tabifiedDockWidgets(history).contains(
        w->findChild<QDockWidget*>(QStringLiteral("propertiesDock"))));
    QVERIFY(history->visibleRegion().isEmpty());
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QTest::keyClick(w.get(), Qt::Key_H, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(QTest::qWaitFor([&] { return !history->visibleRegion().isEmpty(); }, 2000));
    QVERIFY(!history->isHidden());
    QVERIFY(WaitIdle(*w));

    QTableWidget* table = w->history_panel()->table();
    const int row_height = table->verticalHeader()->defaultSectionSize();
    QVERIFY2(table->viewport()->height() >= 10 * row_height,
             qPrintable(QStringLiteral("%1 px for rows of %2 px")
                            .arg(table->viewport()->height())
                            .arg(row_height)));

    QTest::keyClick(w.get(), Qt::Key_H, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(QTest::qWaitFor([&] { return history->isHidden(); }, 2000));
    QTest::keyClick(w.get(), Qt::Key_H, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(QTest::qWaitFor([&] { return !history->visibleRegion().isEmpty(); }, 2000));
  }

  // Item 8: an instruction fused away says which fusion took it (in the change walk and the
  // side-by-side note), and History follows it into the fused computation and back out.
  void FusedInstructionSaysWhereItWent() {
    auto w = NewWindow();
    w->Open(OpenRequest{fuse_dir_, {}, QStringLiteral("0"), {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 0);
    QVERIFY(w->SelectInstructionByName(QStringLiteral("add.2")));
    w->history_dock()->show();
    w->history_dock()->raise();
    hlowb::viewer::HistoryPanel* history = w->history_panel();
    auto history_of = [&](const QString& name) {
      return QTest::qWaitFor(
                 [&] {
                   return history->rows().size() == 3 && history->subject().contains(name) &&
                          !history->busy();
                 },
                 kTimeoutMs) &&
             WaitIdle(*w);
    };
    QVERIFY(history_of(QStringLiteral("add.2")));
    QCOMPARE(history->rows()[0].name, QStringLiteral("add.2"));
    QCOMPARE(history->rows()[1].event, QStringLiteral("fused into fusion"));
    QCOMPARE(history->rows()[1].name, QStringLiteral("add.5"));
    QCOMPARE(history->rows()[2].name, QStringLiteral("add.5"));
    QCOMPARE(history->rows()[2].event, QStringLiteral("present"));

    // A click on the last row shows that state with the fused copy selected; its History goes
    // back out of the fusion to add.2.
    QTableWidget* table = history->table();
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualItemRect(table->item(2, 0)).center());
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 2);
    QVERIFY(w->properties_panel()->instruction() != nullptr);
    QCOMPARE(QString::fromStdString(w->properties_panel()->instruction()->name()),
             QStringLiteral("add.5"));
    QCOMPARE(history->rows()[2].name, QStringLiteral("add.5"));  // the same history, kept
    // Traced afresh from the fused copy.
    QVERIFY(w->SelectInstructionByName(QStringLiteral("p1")));
    QVERIFY(history_of(QStringLiteral("p1")));
    QVERIFY(w->SelectInstructionByName(QStringLiteral("add.5")));
    QVERIFY(history_of(QStringLiteral("add.5")));
    QCOMPARE(history->rows()[0].name, QStringLiteral("add.2"));
    QCOMPARE(history->rows()[1].event, QStringLiteral("fused into fusion"));

    // Comparing the fusion pass with the state before it: walking to each removed line says
    // which fusion took the instruction.
    QVERIFY(w->CompareRows(0, 1));
    QVERIFY(WaitIdle(*w));
    QMap<QString, QString> said;  // removed instruction -> status bar, note
    for (int k = 0; k < w->diff_view()->ChangeCount(); ++k) {
      const hlowb::SideBySideLine* at = w->diff_view()->LineAt(w->StepChange());
      QVERIFY(at != nullptr);
      if (at->b == nullptr && at->a != nullptr) {
        said[QString::fromStdString(at->a->name())] = w->statusBar()->currentMessage() +
                                                      QStringLiteral(" | ") +
                                                      w->diff_view()->CurrentNote();
      }
    }
    QCOMPARE(said.value(QStringLiteral("add.2")),
             QStringLiteral("add.2: removed (fused into fusion) | removed (fused into fusion)"));
    QCOMPARE(
        said.value(QStringLiteral("add.3")),
        QStringLiteral("add.3: removed (fused into fusion.1) | removed (fused into fusion.1)"));
  }

  // Item 10: in compare mode, the selection's border and the edges of its operands and users
  // are drawn in colours no diff mark uses (red removed, orange changed, green added).
  void HighlightColoursAreNotDiffColours() {
    using hlowb::viewer::gv::DiffMarkColor;
    using hlowb::viewer::gv::Highlight;
    using hlowb::viewer::gv::HighlightColor;
    for (Highlight h : {Highlight::kSelected, Highlight::kHovered, Highlight::kOperandEdge,
                        Highlight::kUserEdge}) {
      for (int mark : {1, 2, 3}) {
        QVERIFY2(HueDistance(HighlightColor(h), DiffMarkColor(mark)) >= 40,
                 qPrintable(QStringLiteral("highlight %1 and diff mark %2")
                                .arg(static_cast<int>(h))
                                .arg(mark)));
      }
    }

    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->CompareWithPreviousStep());
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->SelectInstructionByName(QStringLiteral("dot.17")));
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::GraphView* graph = w->graph_view();
    QVERIFY(graph->RemovedGhostCount() > 0);  // compare mode, with red ghosts drawn
    auto* scene = static_cast<hlowb::viewer::gv::GraphScene*>(graph->graphicsView()->scene());
    QVERIFY(scene != nullptr);
    int operand_edges = 0, user_edges = 0;
    const auto& edges = scene->model().edges;
    for (int e = 0; e < static_cast<int>(edges.size()); ++e) {
      const uint8_t state = scene->edge_state(e);
      if (state == 0) continue;
      const QColor want =
          HighlightColor(state == 1 ? Highlight::kOperandEdge : Highlight::kUserEdge);
      const QImage image = Render(scene, edges[e].bounds.adjusted(-2, -2, 2, 2));
      QVERIFY2(CountNear(image, want) > 0, qPrintable(QStringLiteral("edge %1").arg(e)));
      (state == 1 ? operand_edges : user_edges) += 1;
    }
    QVERIFY(operand_edges >= 2);
    QVERIFY(user_edges >= 1);
    const hlowb::Instruction* dot = w->current_module()->entry()->FindInstruction("dot.17");
    QVERIFY(dot != nullptr);
    const QImage node = Render(scene, graph->NodeSceneRect(dot).adjusted(-3, -3, 3, 3));
    QVERIFY(CountNear(node, HighlightColor(Highlight::kSelected)) > 20);
    QCOMPARE(CountNear(node, DiffMarkColor(3)), 0);
  }

  // Item 11: Find says which of how many matches is selected ("1 of 2"), finds an instruction
  // by the name of the reducer it calls, highlights every match in the graph and the text, and
  // a match found in the text only does not scroll the names out of view.
  void SearchCountsAndHighlightsEveryMatch() {
    auto w = NewWindow();
    w->Open(
        OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("before"), {}});
    QVERIFY(WaitIdle(*w));
    auto selected = [&] {
      const hlowb::Instruction* i = w->properties_panel()->instruction();
      return i != nullptr ? QString::fromStdString(i->name()) : QString();
    };
    // reduce.27 calls the reducer region_0.23: the one instruction that matches.
    QVERIFY(w->Find(QStringLiteral("region_0")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->search_status(), QStringLiteral("1 of 1"));
    QCOMPARE(selected(), QStringLiteral("reduce.27"));
    QVERIFY(!w->statusBar()->currentMessage().contains(QStringLiteral("No instruction")));
    QCOMPARE(w->graph_view()->CountSearchMatchNodes(), 1);
    QVERIFY(w->text_view()->SearchHighlightCount() >= 2);  // its header and to_apply=

    // Two instructions say reduce_max (op_type): the reducer's maximum.26, then reduce.27.
    QVERIFY(w->Find(QStringLiteral("reduce_max")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->search_status(), QStringLiteral("1 of 2"));
    QCOMPARE(selected(), QStringLiteral("maximum.26"));
    QCOMPARE(w->graph_view()->CountSearchMatchNodes(), 1);
    QVERIFY(w->Find(QStringLiteral("reduce_max")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->search_status(), QStringLiteral("2 of 2"));
    QCOMPARE(selected(), QStringLiteral("reduce.27"));
    QVERIFY(w->Find(QStringLiteral("reduce_max"), /*backwards=*/true));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->search_status(), QStringLiteral("1 of 2"));
    QVERIFY(w->text_view()->SearchHighlightCount() >= 4);  // op_type and op_name of each

    // Only the text says it, far to the right of the names: they stay in view.
    QPlainTextEdit* editor = w->text_view()->editor();
    QVERIFY(w->Find(QStringLiteral("source_line=33")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->search_status(), QStringLiteral("in the text only"));
    QVERIFY(editor->horizontalScrollBar()->maximum() > 0);
    QCOMPARE(editor->horizontalScrollBar()->value(), 0);
    QCOMPARE(w->graph_view()->CountSearchMatchNodes(), 0);
    QVERIFY(w->text_view()->SearchHighlightCount() > 0);

    // Closing the bar takes the highlights away.
    w->findChild<QToolBar*>(QStringLiteral("findToolbar"))->hide();
    QCOMPARE(w->text_view()->SearchHighlightCount(), 0);
    QVERIFY(w->Find(QStringLiteral("reduce_max")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->graph_view()->CountSearchMatchNodes() > 0);
    w->findChild<QToolBar*>(QStringLiteral("findToolbar"))->hide();
    QCOMPARE(w->graph_view()->CountSearchMatchNodes(), 0);
  }

  // Item 12: a profiled run colours the graph by time without a measure being picked; the
  // Instructions table says which run its rows came from, and after a NaN/Inf run (which
  // profiles nothing) it holds none of the earlier run's numbers; a heat map the user turned
  // off stays off.
  void HeatMapFollowsTheLastRun() {
    using hlowb::viewer::HeatMetric;
    using hlowb::viewer::ReplayMode;
    auto w = NewWindow();
    const QString path = scratch_.filePath(QStringLiteral("profiled.hlo"));
    QVERIFY(Write(path, hlowb::testing::kProfiledModule));
    w->OpenPath(path);
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    hlowb::viewer::GraphView* graph = w->graph_view();
    QCOMPARE(panel->heat_metric(), HeatMetric::kOff);
    auto run = [&](ReplayMode mode) {
      panel->SetMode(mode);
      QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
      panel->run_button()->click();
      return QTest::qWaitFor([&] { return finished.count() > 0; }, 60000) &&
             QTest::qWaitFor([&] { return !panel->running(); }, kTimeoutMs) && WaitIdle(*w);
    };
    QVERIFY(run(ReplayMode::kCompare));
    QVERIFY(!panel->profile_rows().empty());
    QCOMPARE(panel->heat_metric(), HeatMetric::kTime);
    QVERIFY(graph->CountHeatNodes() > 0);
    QVERIFY(graph->HeatLegendText().startsWith(QStringLiteral("time")));
    QVERIFY2(panel->profile_source().startsWith(QStringLiteral("From run 1: comparison")),
             qPrintable(panel->profile_source()));

    QVERIFY(run(ReplayMode::kFindNonfinite));
    QVERIFY(!panel->Verdict().isEmpty());
    QCOMPARE(panel->profile_table()->model()->rowCount(), 0);
    QVERIFY(panel->profile_rows().empty());
    QVERIFY2(panel->profile_source().startsWith(QStringLiteral("run 2: NaN/Inf locator")),
             qPrintable(panel->profile_source()));
    QCOMPARE(graph->CountHeatNodes(), 0);  // nothing of run 1 painted under run 2's verdict

    QVERIFY(run(ReplayMode::kCompare));
    QCOMPARE(panel->heat_metric(), HeatMetric::kTime);
    QVERIFY(graph->CountHeatNodes() > 0);
    // The user turns it off: the next run leaves it off.
    auto* heat = panel->findChild<QComboBox*>(QStringLiteral("replayHeatMap"));
    QVERIFY(heat != nullptr);
    heat->setCurrentIndex(heat->findData(static_cast<int>(HeatMetric::kOff)));
    emit heat->activated(heat->currentIndex());
    QCOMPARE(graph->CountHeatNodes(), 0);
    QVERIFY(run(ReplayMode::kCompare));
    QCOMPARE(panel->heat_metric(), HeatMetric::kOff);
    QCOMPARE(graph->CountHeatNodes(), 0);
    QVERIFY2(panel->profile_source().startsWith(QStringLiteral("From run 4")),
             qPrintable(panel->profile_source()));
  }

  // Item 6: the Modules and Pass Timeline docks open wide enough for the module names and the
  // Pass column; a dock the user widened keeps its width when comparing starts and while
  // walking the changes, and the window does not widen itself.
  void DocksKeepSensibleWidths() {
    QSettings().clear();
    MainWindow w;
    w.resize(1440, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(w));
    auto* modules = w.findChild<QDockWidget*>(QStringLiteral("modulesDock"));
    auto* timeline = w.findChild<QDockWidget*>(QStringLiteral("timelineDock"));
    QVERIFY(modules && timeline);
    QVERIFY2(modules->width() >= 300, qPrintable(QString::number(modules->width())));
    QVERIFY2(timeline->width() >= 300, qPrintable(QString::number(timeline->width())));
    QTableView* view = w.timeline_view();
    const int pass = hlowb::viewer::TimelineModel::kPass;
    QVERIFY(view->columnViewportPosition(pass) + view->columnWidth(pass) <=
            view->viewport()->width());
    QVERIFY(view->columnWidth(pass) >=
            static_cast<const QAbstractItemView*>(view)->sizeHintForColumn(pass));

    // The user widens the left docks; comparing and walking the changes leave them so.
    w.resizeDocks({modules}, {460}, Qt::Horizontal);
    QCoreApplication::processEvents();
    const int left = modules->width();
    QVERIFY2(left >= 440, qPrintable(QString::number(left)));
    QVERIFY(w.CompareWithPreviousStep());
    QVERIFY(WaitIdle(w));
    QVERIFY(w.IsComparing());
    for (int k = 0; k < 5; ++k) {
      w.StepChange();
      QVERIFY(WaitIdle(w));
    }
    QCoreApplication::processEvents();
    QCOMPARE(modules->width(), left);
    QCOMPARE(w.width(), 1440);
    w.ClearDiff();
    QVERIFY(WaitIdle(w));
    QCOMPARE(modules->width(), left);
    QCOMPARE(w.width(), 1440);
  }

  // Item 9: walking the changes of a fusion pass can skip the hundreds of lines inside fused
  // computations (Ctrl+Alt+]), and on a removed line Properties shows the removed instruction
  // and says so, instead of staying on the last selection.
  void ChangeWalkSkipsFusedLinesAndShowsRemovedOnes() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->CompareWithPreviousStep());
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::HloDiffView* view = w->diff_view();
    const int top = view->TopLevelChangeCount();
    QVERIFY(top > 0);
    QVERIFY2(top < view->ChangeCount(),
             qPrintable(QStringLiteral("%1 of %2").arg(top).arg(view->ChangeCount())));
    std::set<const hlowb::Computation*> fused;
    for (const auto& c : w->current_module()->computations()) {
      for (const hlowb::Instruction* i : c->instructions()) {
        if (i->opcode() != hlowb::Opcode::kFusion) continue;
        for (const hlowb::Computation* called : i->called_computations()) fused.insert(called);
      }
    }
    QVERIFY(!fused.empty());
    std::set<int> seen;
    for (int k = 0; k < top; ++k) {
      const int line = w->StepChange(false, /*top_level_only=*/true);
      QVERIFY(WaitIdle(*w));
      const hlowb::SideBySideLine* at = view->LineAt(line);
      QVERIFY(at != nullptr);
      const hlowb::Instruction* i = at->b != nullptr ? at->b : at->a;
      QVERIFY2(!fused.count(i->parent()), qPrintable(QString::fromStdString(i->name())));
      seen.insert(line);
    }
    QCOMPARE(static_cast<int>(seen.size()), top);

    // A removed line: Properties shows what was removed, and where it went.
    hlowb::viewer::PropertiesPanel* properties = w->properties_panel();
    bool removed = false;
    for (int k = 0; k < view->ChangeCount() && !removed; ++k) {
      const hlowb::SideBySideLine* at = view->LineAt(w->StepChange());
      QVERIFY(WaitIdle(*w));
      QVERIFY(at != nullptr);
      if (at->b != nullptr) {
        QCOMPARE(properties->instruction(), at->b);
        QVERIFY(properties->ghost_status().isEmpty());
        continue;
      }
      removed = true;
      QCOMPARE(properties->instruction(), at->a);
      QCOMPARE(properties->ghost_status(), QString::fromStdString(at->note));
      QVERIFY(properties->ghost_status().startsWith(QStringLiteral("removed (fused into ")));
      QVERIFY(properties->PlainText().contains(QStringLiteral("status: removed")));
    }
    QVERIFY(removed);

    // From the keyboard.
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    const int before = view->CurrentLine();
    QTest::keyClick(w.get(), Qt::Key_BracketRight, Qt::ControlModifier | Qt::AltModifier);
    QVERIFY(WaitIdle(*w));
    QVERIFY(view->CurrentLine() != before);
    QVERIFY(seen.count(view->CurrentLine()));
  }

  // Item 14: after switching to the dark theme with a module open, the text's current line is
  // a dark band the text stays readable on, the side-by-side colours are the dark ones, and
  // dimmed (unchanged) timeline rows keep a readable contrast in both palettes.
  void DarkThemeKeepsEveryViewReadable() {
    hlowb::gui::ApplyPalette(QStringLiteral("light"));
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->SelectInstructionByName(QStringLiteral("dot.17")));
    QVERIFY(WaitIdle(*w));
    QPlainTextEdit* editor = w->text_view()->editor();
    auto current_line = [&] {
      QColor color;
      for (const QTextEdit::ExtraSelection& s : editor->extraSelections()) {
        if (s.format.property(QTextFormat::FullWidthSelection).toBool() &&
            s.cursor.blockNumber() == editor->textCursor().blockNumber()) {
          color = s.format.background().color();
        }
      }
      return color;
    };
    QVERIFY(current_line().isValid());
    QVERIFY(current_line().lightness() > 180);

    hlowb::gui::ApplyPalette(QStringLiteral("dark"));
    QTest::qWait(50);
    const QColor band = current_line();
    QVERIFY2(band.lightness() < 90, qPrintable(band.name()));
    QVERIFY(Contrast(editor->palette().color(QPalette::Text), band) >= 4.5);

    // Dimmed rows: an unchanged pass of the timeline, in both palettes.
    int unchanged = -1;
    for (int r = 0; r < w->timeline_model()->rowCount() && unchanged < 0; ++r) {
      const hlowb::viewer::TimelineEntry* e = w->timeline_model()->EntryAt(r);
      if (e != nullptr && e->changed == std::optional<bool>(false) &&
          w->states()[r].stage == hlowb::StageKind::kPassStep) {
        unchanged = r;
      }
    }
    QVERIFY(unchanged >= 0);
    for (const char* theme : {"dark", "light"}) {
      hlowb::gui::ApplyPalette(QLatin1String(theme));
      QTest::qWait(20);
      const QColor dimmed = w->timeline_model()
                                ->index(unchanged, hlowb::viewer::TimelineModel::kPass)
                                .data(Qt::ForegroundRole)
                                .value<QBrush>()
                                .color();
      const QColor base = QGuiApplication::palette().color(QPalette::Base);
      QVERIFY2(Contrast(dimmed, base) >= 4.5,
               qPrintable(QStringLiteral("%1: %2 on %3")
                              .arg(QLatin1String(theme), dimmed.name(), base.name())));
    }

    // The side-by-side view made in the light theme takes the dark colours.
    QVERIFY(w->CompareWithPreviousStep());
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::HloDiffView* view = w->diff_view();
    int removed = -1;
    for (int l = 0; l < view->LineCount() && removed < 0; ++l) {
      if (view->LineAt(l)->kind == hlowb::DiffKind::kRemoved &&
          view->LineAt(l)->type == hlowb::SideBySideLine::Type::kInstruction) {
        removed = l;
      }
    }
    QVERIFY(removed >= 0);
    QCOMPARE(view->LeftBackground(removed),
             hlowb::viewer::HloDiffView::KindColor(hlowb::DiffKind::kRemoved, false));
    hlowb::gui::ApplyPalette(QStringLiteral("dark"));
    QVERIFY(QTest::qWaitFor(
        [&] {
          return view->LeftBackground(removed) ==
                 hlowb::viewer::HloDiffView::KindColor(hlowb::DiffKind::kRemoved, true);
        },
        5000));
    hlowb::gui::ApplyPalette(QStringLiteral("system"));
  }

  // Item 3: the window opens and stays 1280×720 with every dock shown: no dock's minimum
  // height forces it taller, and the replay panel's Run button can still be reached.
  void WindowFitsA1280By720Screen() {
    QSettings().clear();
    MainWindow w;
    w.resize(1280, 720);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), {}, {}});
    QVERIFY(WaitIdle(w));
    for (QDockWidget* d : w.findChildren<QDockWidget*>()) {
      QVERIFY2(!d->isHidden(), qPrintable(d->objectName()));
    }
    w.findChild<QDockWidget*>(QStringLiteral("replayDock"))->raise();
    QCoreApplication::processEvents();
    QVERIFY2(w.minimumSizeHint().height() <= 720,
             qPrintable(QStringLiteral("minimum height %1").arg(w.minimumSizeHint().height())));
    QCOMPARE(w.size(), QSize(1280, 720));
    QVERIFY(w.replay_panel()->run_button()->isEnabled());
    QVERIFY(w.replay_panel()->height() > 0);
    QVERIFY(w.graph_view()->height() >= 200);
  }
};

QTEST_MAIN(NewUserTest)
#include "new_user_test.moc"

