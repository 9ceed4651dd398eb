// The main window on the offscreen platform: opening the bundled sample dump the way the
// command line does, choosing modules, stepping through passes with the keyboard, selection
// following between graph, text and properties, search, fusion expansion, export, files that
// fail to parse, persistence, and the `hlowb gui --screenshot` command. Every item model the
// window uses runs under QAbstractItemModelTester while it is driven.
#include <QAbstractItemModelTester>
#include <QCheckBox>
#include <QDir>
#include <QDropEvent>
#include <QFile>
#include <QFileInfo>
#include <QFont>
#include <QImage>
#include <QLineEdit>
#include <QMimeData>
#include <QProcess>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>
#include <memory>

#include "app/gui/main_window.h"
#include "tests/gui/window_test_util.h"
#include "core/analysis/diff.h"
#include "core/text/parser.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/properties_panel.h"
#include "viewer/widgets/replay_panel.h"
#include <QPushButton>

using hlowb::Computation;
using hlowb::Instruction;
using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;

namespace {

const QString kSourceDir = QStringLiteral(HLOWB_SOURCE_DIR);
const QString kSampleDump = kSourceDir + QStringLiteral("/resources/samples/dump");
constexpr int kTimeoutMs = 30000;

bool WaitIdle(MainWindow& w, int timeout_ms = kTimeoutMs) {
  return hlowb::testing::WaitWindowIdle(w, timeout_ms);
}

const Instruction* Find(const std::shared_ptr<const hlowb::Module>& m, const char* name) {
  return m ? hlowb::testing::FindInstruction(*m, name) : nullptr;
}

bool Bold(const QAbstractItemModel* model, int row) {
  return model->data(model->index(row, hlowb::viewer::TimelineModel::kPass), Qt::FontRole)
      .value<QFont>()
      .bold();
}

struct Testers {
  explicit Testers(MainWindow& w) {
    using Mode = QAbstractItemModelTester::FailureReportingMode;
    for (QAbstractItemModel* m :
         {static_cast<QAbstractItemModel*>(w.modules_model()),
          static_cast<QAbstractItemModel*>(w.modules_proxy()),
          static_cast<QAbstractItemModel*>(w.timeline_model()),
          static_cast<QAbstractItemModel*>(w.timeline_filter()),
          static_cast<QAbstractItemModel*>(w.computations_model())}) {
      testers.push_back(std::make_unique<QAbstractItemModelTester>(m, Mode::QtTest));
    }
  }
  std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
};

}  // namespace

class MainWindowTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    return w;
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("main_window_test"));
    QSettings().clear();
    QVERIFY2(QFileInfo(kSampleDump).isDir(), qPrintable(kSampleDump));
  }

  // The command-line path (`hlowb gui --module=M PATH`), the modules dock, the timeline with
  // changed passes in bold, and Up/Down stepping with every view following.
  void OpensSampleDumpAndStepsThroughPasses() {
    auto w = NewWindow();
    Testers testers(*w);
    QSignalSpy indexed(w.get(), &MainWindow::indexLoaded);
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), {}, {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(indexed.count(), 1);
    QCOMPARE(indexed.first().first().toBool(), true);
    QCOMPARE(w->modules_model()->rowCount(), 2);
    QCOMPARE(w->timeline_model()->rowCount(), 13);
    QCOMPARE(w->current_state_row(), 0);
    QVERIFY(w->current_module());
    QCOMPARE(QString::fromStdString(w->current_module()->name()), QStringLiteral("jit_train_step"));
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("reshape.9")));
    QCOMPARE(w->graph_view()->computation(), w->current_module()->entry());

    // All states loaded and fingerprinted: passes that changed the module are bold.
    const QAbstractItemModel* timeline = w->timeline_model();
    for (int row = 0; row < 13; ++row) {
      QVERIFY2(w->timeline_model()->EntryAt(row)->instruction_count.has_value(),
               qPrintable(QString::number(row)));
    }
    QVERIFY(Bold(timeline, 2));   // 0001 algsimp
    QVERIFY(Bold(timeline, 3));   // 0002 cse
    QVERIFY(!Bold(timeline, 1));  // 0000 pipeline-start
    QVERIFY(!Bold(timeline, 4));  // 0003 dce
    QCOMPARE(w->timeline_model()->EntryAt(2)->changed, std::optional<bool>(true));
    QCOMPARE(w->timeline_model()->EntryAt(2)->delta, std::optional<int64_t>(-10));

    // Keep a selection while stepping: dot.8 exists in every state.
    QVERIFY(w->SelectInstructionByName(QStringLiteral("dot.8")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->graph_view()->selected());
    QCOMPARE(QString::fromStdString(w->graph_view()->selected()->name()), QStringLiteral("dot.8"));

    QTableView* view = w->timeline_view();
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 1);
    QTest::keyClick(view, Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 2);
    // The text shows the algsimp state: the reshape chain is gone, the multiply is new.
    const QString text = w->text_view()->PlainText();
    QVERIFY(!text.contains(QStringLiteral("reshape.9")));
    QVERIFY(text.contains(QStringLiteral("multiply.106")));
    // The graph shows the same computation in the new state, with dot.8 still selected.
    std::shared_ptr<const hlowb::Module> m = w->current_module();
    QCOMPARE(w->graph_view()->computation(), m->entry());
    const Instruction* dot = Find(m, "dot.8");
    QVERIFY(dot);
    QCOMPARE(w->graph_view()->selected(), dot);
    QCOMPARE(w->properties_panel()->instruction(), dot);

    // Hiding unchanged passes leaves before, the five changed passes and after; Down skips
    // the hidden ones.
    w->hide_unchanged_box()->setChecked(true);
    QCOMPARE(w->timeline_filter()->rowCount(), 7);
    QCOMPARE(w->current_state_row(), 2);
    view->setFocus();
    QTest::keyClick(view, Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 3);  // cse
    QTest::keyClick(view, Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 6);  // layout-assignment
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("copy.109")));
    QTest::keyClick(view, Qt::Key_Up);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 3);
    w->hide_unchanged_box()->setChecked(false);
    QCOMPARE(w->timeline_filter()->rowCount(), 13);

    // Another module from the modules dock.
    QSortFilterProxyModel* proxy = w->modules_proxy();
    int accuracy_row = -1;
    for (int r = 0; r < proxy->rowCount(); ++r) {
      if (proxy->index(r, hlowb::viewer::ModulesModel::kName).data().toString() ==
          QLatin1String("jit_accuracy")) {
        accuracy_row = r;
      }
    }
    QVERIFY(accuracy_row >= 0);
    w->modules_view()->setCurrentIndex(proxy->index(accuracy_row, 0));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->timeline_model()->rowCount(), 2);
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("jit_accuracy")));
    // The filter narrows the modules list.
    w->modules_filter()->setText(QStringLiteral("train"));
    QCOMPARE(proxy->rowCount(), 1);
    w->modules_filter()->clear();
    QCOMPARE(proxy->rowCount(), 2);
    w->modules_view()->sortByColumn(hlowb::viewer::ModulesModel::kName, Qt::AscendingOrder);
    QCOMPARE(proxy->index(0, hlowb::viewer::ModulesModel::kName).data().toString(),
             QStringLiteral("jit_accuracy"));
  }

  // Graph click → text and properties; text link → graph and properties; properties operand
  // click → graph and text. Instructions inside fusions expand them.
  void SelectionFollowsAcrossViews() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("1"), QStringLiteral("after"), {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 12);
    std::shared_ptr<const hlowb::Module> m = w->current_module();
    QVERIFY(m);

    const Instruction* dot = Find(m, "dot.17");
    QVERIFY(dot);
    w->graph_view()->SelectInstruction(dot);  // what a click on the node does
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->properties_panel()->instruction(), dot);
    QVERIFY(w->properties_panel()->PlainText().contains(QStringLiteral("dot.17")));
    QCOMPARE(w->text_view()->CurrentInstruction(), dot);

    const Instruction* fusion = Find(m, "loop_add_fusion");
    QVERIFY(fusion);
    emit w->text_view()->instructionActivated(fusion);  // a followed link in the text
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected(), fusion);
    QCOMPARE(w->properties_panel()->instruction(), fusion);

    const Instruction* operand = fusion->operand(0);
    emit w->properties_panel()->instructionActivated(operand);  // an operand link
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected(), operand);
    QCOMPARE(w->text_view()->CurrentInstruction(), operand);
    QCOMPARE(w->properties_panel()->instruction(), operand);

    // An instruction inside a fusion: the graph expands the fusion to show it.
    const Instruction* inner = Find(m, "maximum.118");
    QVERIFY(inner);
    w->SelectInstruction(inner);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected(), inner);
    QCOMPARE(w->properties_panel()->instruction(), inner);
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("maximum.118")));
  }

  void SearchWithCtrlFAndF3() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, {}, QStringLiteral("after"), {}});
    QVERIFY(WaitIdle(*w));
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));

    QTest::keyClick(w.get(), Qt::Key_F, Qt::ControlModifier);
    QVERIFY(w->search_edit()->isVisible());
    QTest::keyClicks(w->search_edit(), QStringLiteral("loop_subtract"));
    QTest::keyClick(w->search_edit(), Qt::Key_Return);
    QVERIFY(WaitIdle(*w));
    const Instruction* first = w->graph_view()->selected();
    QVERIFY(first);
    QVERIFY(QString::fromStdString(first->name()).startsWith(QStringLiteral("loop_subtract")));
    QCOMPARE(w->properties_panel()->instruction(), first);

    QTest::keyClick(w.get(), Qt::Key_F3);
    QVERIFY(WaitIdle(*w));
    const Instruction* second = w->graph_view()->selected();
    QVERIFY(second && second != first);
    QVERIFY(QString::fromStdString(second->name()).startsWith(QStringLiteral("loop_subtract")));
    QTest::keyClick(w.get(), Qt::Key_F3, Qt::ShiftModifier);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected(), first);

    // By op_type metadata and by opcode.
    QVERIFY(w->Find(QStringLiteral("dot_general")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->graph_view()->selected());
    QVERIFY(!w->Find(QStringLiteral("no_such_instruction_anywhere")));
  }

  void ExpandFusionAndExport() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, {}, QStringLiteral("after"), {}});
    QVERIFY(WaitIdle(*w));
    const int collapsed = w->graph_view()->NodeCount();
    QVERIFY(collapsed > 0);
    w->graph_view()->SetClusterExpanded(QStringLiteral("loop_add_fusion"), true);
    QVERIFY(WaitIdle(*w));
    QVERIFY2(w->graph_view()->NodeCount() > collapsed,
             qPrintable(QStringLiteral("%1 nodes collapsed, %2 expanded")
                            .arg(collapsed)
                            .arg(w->graph_view()->NodeCount())));

    const QString svg = scratch_.filePath(QStringLiteral("view.svg"));
    absl::Status status = w->ExportView(svg);
    QVERIFY2(status.ok(), status.ToString().c_str());
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QByteArray bytes = file.readAll();
    QVERIFY(bytes.contains("<svg"));
    QVERIFY(bytes.contains("dot.17"));

    const QString dot = scratch_.filePath(QStringLiteral("view.dot"));
    status = w->ExportView(dot);
    QVERIFY2(status.ok(), status.ToString().c_str());
    QFile dot_file(dot);
    QVERIFY(dot_file.open(QIODevice::ReadOnly));
    QVERIFY(dot_file.readAll().contains("dot.17"));

    const QString png = scratch_.filePath(QStringLiteral("view.png"));
    status = w->ExportView(png);
    QVERIFY2(status.ok(), status.ToString().c_str());
    QVERIFY(!QImage(png).isNull());

    QVERIFY(!w->ExportView(scratch_.filePath(QStringLiteral("view.bmp"))).ok());
  }

  // A file that fails to parse opens in the text view at its error; the window stays usable.
  void BadFileShowsErrorInTextView() {
    auto w = NewWindow();
    const QString bad = scratch_.filePath(QStringLiteral("bad.hlo"));
    {
      QFile f(bad);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("HloModule bad\n\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p, q)\n}\n");
    }
    QSignalSpy failed(w.get(), &MainWindow::openFailed);
    w->OpenPath(bad);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(failed.count(), 1);
    QVERIFY2(failed.first().first().toString().contains(QStringLiteral(":5:")),
             qPrintable(failed.first().first().toString()));
    QVERIFY(!w->current_module());
    QVERIFY(!w->graph_view()->computation());
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("add(p, q)")));

    // Still usable: open something good.
    w->OpenPath(kSourceDir + QStringLiteral("/resources/samples/sample.hlo"));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
    QVERIFY(w->graph_view()->computation());
    QCOMPARE(w->current_state_row(), -1);

    // A snapshot opens like any module file.
    const QString snapshot =
        kSampleDump +
        QStringLiteral("/1718112000123456.module_0001.jit_train_step.execution_0000.hlo_snapshot.pb");
    w->OpenPath(snapshot);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
    QCOMPARE(QString::fromStdString(w->current_module()->name()), QStringLiteral("jit_train_step"));
  }

  // Where the text view marks a parse error: the first "path:LINE:COL: message" line, also
  // inside the "formats tried" list of a file that could be several formats.
  void ErrorLocations() {
    hlowb::gui::ErrorLocation direct = hlowb::gui::ParseErrorLocation(
        QStringLiteral("/a:b/x.hlo:5:26: instruction 'q' is not defined\n    ROOT a = ...\n   ^"));
    QCOMPARE(direct.line, 5);
    QCOMPARE(direct.column, 26);
    QCOMPARE(direct.message, QStringLiteral("instruction 'q' is not defined"));
    hlowb::gui::ErrorLocation nested = hlowb::gui::ParseErrorLocation(QStringLiteral(
        "x.txt: not a readable HLO file; formats tried:\n"
        "  HLO text: x.txt:2:1: expected 'name:'\n"
        "  HloProto (text proto): not a xla.HloProto text proto: line 1:8: no field"));
    QCOMPARE(nested.line, 2);
    QCOMPARE(nested.column, 1);
    QCOMPARE(nested.message, QStringLiteral("expected 'name:'"));
    hlowb::gui::ErrorLocation none = hlowb::gui::ParseErrorLocation(QStringLiteral("bad magic"));
    QCOMPARE(none.line, 1);
    QCOMPARE(none.message, QStringLiteral("bad magic"));
  }

  // One broken state in a dump: shown as an error, marked failed, the others browsable.
  void BrokenStateLeavesDumpBrowsable() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const QString& name : QDir(kSampleDump).entryList(QDir::Files)) {
      QVERIFY(QFile::copy(kSampleDump + QLatin1Char('/') + name, dir.filePath(name)));
    }
    const QString broken = dir.filePath(QStringLiteral(
        "module_0001.jit_train_step.0005.layout-assignment.after_layout-assignment."
        "before_pipeline-end.txt"));
    {
      QFile f(broken);
      QVERIFY(f.open(QIODevice::ReadOnly));
      QByteArray text = f.readAll();
      f.close();
      text.replace("copy(f32[8,16]{1,0} %Arg_4.5)", "copy(f32[8,16]{1,0} %Arg_4.99)");
      QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
      f.write(text);
    }
    auto w = NewWindow();
    Testers testers(*w);
    w->Open(OpenRequest{dir.path(), {}, QStringLiteral("5"), {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 6);
    QVERIFY(w->timeline_model()->EntryAt(6)->failed);
    QVERIFY(!w->current_module());
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("Arg_4.99")));
    // Neighbours loaded and compared across the gap.
    QVERIFY(w->timeline_model()->EntryAt(7)->instruction_count.has_value());

    w->timeline_view()->setFocus();
    QTest::keyClick(w->timeline_view(), Qt::Key_Down);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 7);
    QVERIFY(w->current_module());
    QVERIFY(w->graph_view()->computation());
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("copy.109")));
  }

  // With no memory budget only the shown state and its neighbours stay parsed; a dropped
  // state is parsed again when shown, and stepping still keeps the selection.
  void DroppedStatesAreReloaded() {
    auto w = NewWindow();
    w->SetStateMemoryBudget(0);
    w->Open(OpenRequest{kSampleDump, {}, QStringLiteral("after"), QStringLiteral("dot.8")});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 12);
    QVERIFY2(w->KeptStateCount() <= 5, qPrintable(QString::number(w->KeptStateCount())));
    QVERIFY(w->SelectStep(QStringLiteral("before")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), 0);
    QVERIFY(w->current_module());
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("reshape.9")));
    QVERIFY(w->graph_view()->selected());
    QCOMPARE(QString::fromStdString(w->graph_view()->selected()->name()), QStringLiteral("dot.8"));
    QVERIFY(w->KeptStateCount() <= 5);
    // Every row still knows whether its pass changed the module.
    QCOMPARE(w->timeline_model()->EntryAt(2)->changed, std::optional<bool>(true));
    QCOMPARE(w->timeline_model()->EntryAt(4)->changed, std::optional<bool>(false));
  }

  void SettingsRecentFilesAndDrop() {
    {
      auto w = NewWindow();
      w->hide_unchanged_box()->setChecked(true);
      w->OpenPath(kSampleDump);
      QVERIFY(WaitIdle(*w));
      QCOMPARE(w->recent_files().value(0), QFileInfo(kSampleDump).absoluteFilePath());
      w->close();  // saves the layout
    }
    auto w = NewWindow();
    QVERIFY(w->hide_unchanged_box()->isChecked());
    QCOMPARE(w->recent_files().value(0), QFileInfo(kSampleDump).absoluteFilePath());
    w->hide_unchanged_box()->setChecked(false);

    // Drag and drop a file onto the window.
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(kSourceDir + QStringLiteral("/resources/samples/sample.hlo"))});
    QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton,
                          Qt::NoModifier);
    QApplication::sendEvent(w.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w.get(), &drop);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
    QVERIFY(w->recent_files().value(0).endsWith(QStringLiteral("sample.hlo")));
  }

  void CancelKeepsWindowUsable() {
    {
      // Closing while workers still parse waits for them and frees everything.
      auto early = NewWindow();
      early->OpenPath(kSampleDump);
      QTest::qWait(5);
    }
    auto w = NewWindow();
    w->OpenPath(kSampleDump);
    w->CancelLoading();
    QVERIFY(WaitIdle(*w));
    w->OpenPath(kSampleDump);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
  }

  // `hlowb gui --screenshot=FILE` and `hlowb PATH --screenshot=FILE` write a PNG and exit 0.
  // Compare with the previous step: the summary bar has the counts of the structural diff and
  // the graph colours what the pass added (green) and changed (orange); moving on clears it.
  void CompareWithPreviousStepColoursTheGraph() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
    // The expected diff, from the two files of those steps.
    auto read = [](const QString& name) -> std::unique_ptr<hlowb::Module> {
      QFile f(kSampleDump + QLatin1Char('/') + name);
      if (!f.open(QIODevice::ReadOnly)) return nullptr;
      auto m = hlowb::ParseModule(f.readAll().toStdString());
      return m.ok() ? std::move(*m) : nullptr;
    };
    auto before = read(QStringLiteral(
        "module_0001.jit_train_step.0006.fusion.after_pipeline-start.before_priority-fusion.txt"));
    QVERIFY(before);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*before, *w->current_module());
    QVERIFY(expected.counts.added > 0);

    QVERIFY(w->diff_summary().isEmpty());
    QVERIFY(w->CompareWithPreviousStep());
    const QString summary = w->diff_summary();
    QVERIFY2(summary.contains(QStringLiteral("%1 changed, %2 added, %3 removed, %4 unchanged")
                                  .arg(expected.counts.changed)
                                  .arg(expected.counts.added)
                                  .arg(expected.counts.removed)
                                  .arg(expected.counts.unchanged)),
             qPrintable(summary));
    // Added instructions of the entry computation are drawn green.
    int checked = 0;
    for (const hlowb::ComputationDiff& c : expected.computations) {
      if (c.b != w->current_module()->entry()) continue;
      for (const hlowb::InstructionDiff& row : c.rows) {
        if (row.kind != hlowb::DiffKind::kAdded || row.b == nullptr) continue;
        if (w->graph_view()->DiffMarkOf(row.b) == 0) continue;  // folded into another node
        QCOMPARE(w->graph_view()->DiffMarkOf(row.b), 1);
        ++checked;
      }
    }
    QVERIFY(checked > 0);
    QVERIFY(w->graph_view()->CountDiffMarkedNodes(1) >= checked);
    // The text colours the definition lines of every added and changed instruction.
    QCOMPARE(w->text_view()->DiffMarkedLineCount(),
             expected.counts.added + expected.counts.changed);

    // Next / previous change walk the added and changed instructions and wrap around.
    const Instruction* first = w->SelectNextChange();
    QVERIFY(first != nullptr);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->properties_panel()->instruction(), first);
    const Instruction* second = w->SelectNextChange();
    QVERIFY(second != nullptr && second != first);
    QCOMPARE(w->SelectNextChange(true), first);
    QVERIFY(WaitIdle(*w));
    // Against before_optimizations: more has changed than in one step.
    QVERIFY(w->CompareWithBeforeOptimizations());
    QVERIFY(w->diff_summary().contains(QStringLiteral("before_optimizations")));

    // The next step: the marks belonged to this state, so they go.
    QVERIFY(w->SelectStep(QStringLiteral("8")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->diff_summary().isEmpty());
    QCOMPARE(w->text_view()->DiffMarkedLineCount(), 0);
    QCOMPARE(w->graph_view()->CountDiffMarkedNodes(1), 0);
    QCOMPARE(w->graph_view()->CountDiffMarkedNodes(2), 0);
  }

  // Replay from the window: the sample's optimized state replays in the worker process and
  // matches the reference; a worker that aborts mid-run leaves the window responsive with the
  // error shown and the same document open, and a reproducer can be saved.
  void ReplayPanelRunsInTheWorkerAndSurvivesACrash() {
    auto w = NewWindow();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    w->Open(OpenRequest{kSampleDump, QStringLiteral("1"), QStringLiteral("after"), {}});
    QVERIFY(WaitIdle(*w));
    std::shared_ptr<const hlowb::Module> m = w->current_module();
    QVERIFY(m);
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    QSignalSpy failed(w->replay_controller(), &hlowb::gui::ReplayController::failed);
    panel->run_button()->click();
    QVERIFY(panel->running());
    QVERIFY(finished.wait(60000));
    QCOMPARE(panel->Verdict(), QStringLiteral("MATCHED"));
    QVERIFY(panel->Details().contains(QStringLiteral("reference platform interpreter")));
    QVERIFY(!panel->running());

    // Cancel a run in progress.
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    panel->run_button()->click();
    panel->cancel_button()->click();
    QTRY_VERIFY_WITH_TIMEOUT(!panel->running(), 30000);
    QVERIFY2(panel->Verdict().contains(QStringLiteral("ancel")) ||
                 panel->Verdict() == QStringLiteral("MATCHED"),  // finished before the cancel
             qPrintable(panel->Verdict()));

    // A crash mid-run: a fresh worker with the test-only abort flag.
    w->replay_controller()->SetWorkerCommand(
        QStringLiteral(HLOWB_BINARY),
        {QStringLiteral("worker"), QStringLiteral("--test_abort_after_instructions=4")});
    w->replay_controller()->StopWorker();
    const int failures = failed.count();
    panel->run_button()->click();
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() > failures, 30000);
    QVERIFY2(panel->Verdict().contains(QStringLiteral("crashed")), qPrintable(panel->Verdict()));
    QVERIFY(panel->save_button()->isEnabled());
    QCOMPARE(w->current_module(), m);  // the same document stays open
    QVERIFY(w->text_view()->PlainText().contains(QStringLiteral("ENTRY")));
    QTest::qWait(50);  // and the event loop runs

    QVERIFY(w->SaveReplayReproducer(scratch_.filePath(QStringLiteral("repro"))).ok());
    QVERIFY(QFileInfo(scratch_.filePath(QStringLiteral("repro/module.hlo"))).size() > 0);
    QFile readme(scratch_.filePath(QStringLiteral("repro/README.txt")));
    QVERIFY(readme.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(readme.readAll());
    QVERIFY(text.contains(QStringLiteral("hlowb replay module.hlo --reference_platform=interpreter")));
    QVERIFY(text.contains(QStringLiteral("crashed")));
  }

  // The NaN/Inf locator from the replay dock: the instruction where a NaN first appears is
  // named in the verdict and selected in the graph, the text and the properties.
  void ReplayPanelFindsTheFirstNaN() {
    const QString path = scratch_.filePath(QStringLiteral("nan.hlo"));
    {
      QFile f(path);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("HloModule nan_here\n"
              "ENTRY e {\n"
              "  p = f32[4] parameter(0)\n"
              "  c = f32[4] constant({-1, -2, -3, -4})\n"
              "  a = f32[4] add(p, p)\n"
              "  bad = f32[4] log(c)\n"
              "  ROOT r = f32[4] add(a, bad)\n"
              "}\n");
    }
    auto w = NewWindow();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    w->OpenPath(path);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    panel->SetMode(hlowb::viewer::ReplayMode::kFindNonfinite);
    QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    panel->run_button()->click();
    QVERIFY(finished.wait(60000));
    QVERIFY2(panel->Verdict().contains(QStringLiteral("%bad")), qPrintable(panel->Verdict()));
    QVERIFY(WaitIdle(*w));
    const Instruction* bad = Find(w->current_module(), "bad");
    QVERIFY(bad);
    QCOMPARE(w->graph_view()->selected(), bad);
    QCOMPARE(w->properties_panel()->instruction(), bad);
    QCOMPARE(w->text_view()->CurrentInstruction(), bad);
  }

  void ScreenshotCommandWritesPng() {
    const QString binary = QStringLiteral(HLOWB_BINARY);
    QVERIFY2(QFileInfo(binary).isExecutable(), qPrintable(binary));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), settings_dir_.path());
    auto run = [&](const QStringList& args, int* exit_code, QString* output) {
      QProcess p;
      p.setProcessEnvironment(env);
      p.setProcessChannelMode(QProcess::MergedChannels);
      p.start(binary, args);
      if (!p.waitForFinished(45000)) {
        p.kill();
        p.waitForFinished();
        return false;
      }
      *exit_code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
      *output = QString::fromUtf8(p.readAll());
      return true;
    };
    const QString shot = scratch_.filePath(QStringLiteral("shot.png"));
    int code = -1;
    QString output;
    QVERIFY(run({QStringLiteral("gui"), QStringLiteral("--screenshot=") + shot,
                 QStringLiteral("--select=dot.17"), QStringLiteral("--step=after"), kSampleDump},
                &code, &output));
    QVERIFY2(code == 0, qPrintable(output));
    QImage image(shot);
    QVERIFY2(!image.isNull(), qPrintable(output));
    QVERIFY(image.width() >= 800 && image.height() >= 600);

    const QString shot2 = scratch_.filePath(QStringLiteral("shot2.png"));
    QVERIFY(run({kSampleDump, QStringLiteral("--screenshot=") + shot2}, &code, &output));
    QVERIFY2(code == 0, qPrintable(output));
    QVERIFY(!QImage(shot2).isNull());

    QVERIFY(run({QStringLiteral("gui"), QStringLiteral("--screenshot=") + shot2,
                 scratch_.filePath(QStringLiteral("does-not-exist"))},
                &code, &output));
    QVERIFY(code != 0);
    QVERIFY(output.contains(QStringLiteral("does-not-exist")));

    // The CLI still works beside the window.
    QVERIFY(run({QStringLiteral("index"), kSampleDump}, &code, &output));
    QCOMPARE(code, 0);
    QVERIFY(output.contains(QStringLiteral("jit_train_step")));
  }
};

QTEST_MAIN(MainWindowTest)
#include "main_window_test.moc"
