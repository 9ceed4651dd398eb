// Comparing states in the main window on the offscreen platform: any two timeline states
// (Ctrl+click and Compare Selected States, a diff base, states not loaded yet), the side-by-side
// view (alignment and colours checked against an independent DiffModules of the dump's files,
// synchronized scrolling, next/previous change on both sides, clicks selecting), removed
// instructions as ghost nodes on the graph, the History dock, and a large module compared
// without stalling the UI thread.
#include <QDir>
#include <QDockWidget>
#include <QFile>
#include <QImage>
#include <QItemSelectionModel>
#include <QPainter>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QSettings>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBlock>
#include <QGraphicsView>
#include <QGraphicsScene>
#include <memory>

#include "app/gui/main_window.h"
#include "tests/gui/window_test_util.h"
#include "core/analysis/diff.h"
#include "core/analysis/timeline.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "tests/gui/latency_probe.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_diff_view.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/history_panel.h"
#include "viewer/widgets/properties_panel.h"

using hlowb::DiffKind;
using hlowb::Instruction;
using hlowb::SideBySideLine;
using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;
using hlowb::viewer::HloDiffView;

namespace {

const QString kSourceDir = QStringLiteral(HLOWB_SOURCE_DIR);
const QString kSampleDump = kSourceDir + QStringLiteral("/resources/samples/dump");
const QString kPrefix = QStringLiteral("module_0001.jit_train_step.");
constexpr int kTimeoutMs = 60000;

bool WaitIdle(MainWindow& w, int timeout_ms = kTimeoutMs) {
  return hlowb::testing::WaitWindowIdle(w, timeout_ms);
}

std::unique_ptr<hlowb::Module> Read(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return nullptr;
  auto m = hlowb::ParseModule(f.readAll().toStdString());
  if (!m.ok()) qWarning("%s: %s", qPrintable(path), std::string(m.status().message()).c_str());
  return m.ok() ? std::move(*m) : nullptr;
}

// The sample's file of a pass step ("0007") or "before_optimizations".
std::unique_ptr<hlowb::Module> ReadState(const QString& step) {
  const QString pattern = step.startsWith(QLatin1Char('0')) ? QStringLiteral(".*.txt")
                                                            : QStringLiteral(".txt");
  const QStringList files =
      QDir(kSampleDump).entryList({kPrefix + step + pattern}, QDir::Files);
  if (files.size() != 1) return nullptr;
  return Read(kSampleDump + QLatin1Char('/') + files.front());
}

// The timeline row of a pass step number, or of before_optimizations for -1.
int RowOfStep(const MainWindow& w, int step) {
  for (int r = 0; r < static_cast<int>(w.states().size()); ++r) {
    const hlowb::DumpState& s = w.states()[r];
    if (step < 0 && s.stage == hlowb::StageKind::kBeforeOptimizations) return r;
    if (step >= 0 && s.stage == hlowb::StageKind::kPassStep && s.step == step) return r;
  }
  return -1;
}

QString Counts(const hlowb::ModuleDiff& d) {
  return QStringLiteral("%1 changed, %2 added, %3 removed, %4 unchanged")
      .arg(d.counts.changed)
      .arg(d.counts.added)
      .arg(d.counts.removed)
      .arg(d.counts.unchanged);
}


bool Dark(const QWidget* w) { return w->palette().color(QPalette::Base).lightness() < 128; }

// Pixels of `image` close to `color`.
int CountNear(const QImage& image, QColor color) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      if (std::abs(c.red() - color.red()) < 24 && std::abs(c.green() - color.green()) < 24 &&
          std::abs(c.blue() - color.blue()) < 24) {
        ++n;
      }
    }
  }
  return n;
}

}  // namespace

class DiffUiTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1600, 1000);
    w->show();
    return w;
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("diff_ui_test"));
    QSettings().clear();
  }

  void init() { QSettings().clear(); }

  // Ctrl+click a second timeline row and Compare Selected States: the later state is shown and
  // compared with the earlier, with the counts of an independent diff of the two files.
  void ComparesTwoStatesSelectedInTheTimeline() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("3"), {}});
    QVERIFY(WaitIdle(*w));
    const int row3 = RowOfStep(*w, 3);
    const int row8 = RowOfStep(*w, 8);
    QVERIFY(row3 >= 0 && row8 > row3);
    QTableView* timeline = w->timeline_view();
    const QModelIndex at8 =
        w->timeline_filter()->mapFromSource(w->timeline_model()->index(row8, 0));
    QVERIFY(at8.isValid());
    timeline->scrollTo(at8);
    QTest::mouseClick(timeline->viewport(), Qt::LeftButton, Qt::ControlModifier,
                      timeline->visualRect(at8).center());
    QCOMPARE(timeline->selectionModel()->selectedRows().size(), 2);
    QVERIFY(WaitIdle(*w));

    QVERIFY(w->CompareSelectedStates());
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), row8);
    QCOMPARE(w->compared_base_row(), row3);
    auto a = ReadState(QStringLiteral("0003"));
    auto b = ReadState(QStringLiteral("0008"));
    QVERIFY(a && b);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*a, *b);
    QVERIFY(expected.counts.added + expected.counts.removed + expected.counts.changed > 0);
    QVERIFY2(w->diff_summary().contains(Counts(expected)), qPrintable(w->diff_summary()));
    QVERIFY(w->diff_summary().contains(QString::fromStdString(w->states()[row3].label)));
    // The timeline tints the two rows.
    auto mark = [&](int row) {
      return w->timeline_model()->data(w->timeline_model()->index(row, 0),
                                       hlowb::viewer::kCompareRole).toInt();
    };
    using Mark = hlowb::viewer::TimelineEntry::CompareMark;
    QCOMPARE(mark(row3), static_cast<int>(Mark::kComparedBase));
    QCOMPARE(mark(row8), static_cast<int>(Mark::kCompared));
    QVERIFY(w->timeline_model()->data(w->timeline_model()->index(row3, 0), Qt::BackgroundRole).isValid());
    QCOMPARE(mark(row3 + 1), static_cast<int>(Mark::kNone));
    QVERIFY(!w->timeline_model()->data(w->timeline_model()->index(row3 + 1, 0), Qt::BackgroundRole).isValid());
    w->ClearDiff();
    QCOMPARE(mark(row3), static_cast<int>(Mark::kNone));
    QCOMPARE(mark(row8), static_cast<int>(Mark::kNone));

    // A single selected row is not enough.
    w->timeline_view()->selectionModel()->clearSelection();
    QVERIFY(!w->CompareSelectedStates());
  }

  // "Set as Diff Base" on one state, then compare whatever state is shown with it; a base that
  // is not loaded (the memory budget dropped it) is requested and compared when it arrives.
  void ComparesWithADiffBaseLoadedOnRequest() {
    auto w = NewWindow();
    w->SetStateMemoryBudget(0);  // only the shown state and its neighbours stay parsed
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("10"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(QTest::qWaitFor([&] { return !w->IsBusy() && w->KeptStateCount() <= 5; }, 10000));
    const int before = RowOfStep(*w, -1);
    const int row10 = RowOfStep(*w, 10);
    QVERIFY(before >= 0 && row10 >= 0);
    QVERIFY(!w->CompareWithDiffBase());  // no base yet
    w->SetDiffBase(before);
    QCOMPARE(w->diff_base_row(), before);
    QCOMPARE(w->timeline_model()->data(w->timeline_model()->index(before, 0),
                                       hlowb::viewer::kCompareRole).toInt(),
             static_cast<int>(hlowb::viewer::TimelineEntry::CompareMark::kDiffBase));
    // The base was dropped from memory: the comparison waits for it.
    QVERIFY(!w->CompareWithDiffBase());
    QVERIFY(w->IsBusy());
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->IsComparing());
    QCOMPARE(w->compared_base_row(), before);
    QCOMPARE(w->current_state_row(), row10);
    auto a = ReadState(QStringLiteral("before_optimizations"));
    auto b = ReadState(QStringLiteral("0010"));
    QVERIFY(a && b);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*a, *b);
    QVERIFY2(w->diff_summary().contains(Counts(expected)), qPrintable(w->diff_summary()));

    // CompareRows to a state not shown moves the timeline there and compares on arrival.
    const int row5 = RowOfStep(*w, 5);
    const int row2 = RowOfStep(*w, 2);
    w->CompareRows(row2, row5);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), row5);
    QCOMPARE(w->compared_base_row(), row2);
    auto a2 = ReadState(QStringLiteral("0002"));
    auto b5 = ReadState(QStringLiteral("0005"));
    QVERIFY(a2 && b5);
    QVERIFY2(w->diff_summary().contains(Counts(hlowb::DiffModules(*a2, *b5))),
             qPrintable(w->diff_summary()));
    // Moving on ends it.
    QVERIFY(w->SelectStep(QStringLiteral("6")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(!w->IsComparing());
    QVERIFY(w->diff_summary().isEmpty());
  }

  // The side-by-side view: line for line what BuildSideBySide makes of an independent diff of
  // the two files, matched instructions on one line, coloured by kind, fillers opposite added
  // and removed ones; both sides scroll together; next/previous change moves both; a click on
  // a line selects its instruction everywhere.
  void SideBySideAlignsAndColoursBothStates() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->CompareWithPreviousStep());
    QVERIFY(WaitIdle(*w));
    HloDiffView* view = w->diff_view();
    QVERIFY(view->isVisible());
    QVERIFY(!w->text_view()->isVisible());

    auto a = ReadState(QStringLiteral("0006"));
    auto b = ReadState(QStringLiteral("0007"));
    QVERIFY(a && b);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*a, *b);
    const std::vector<SideBySideLine> lines = hlowb::BuildSideBySide(expected);
    QCOMPARE(view->LineCount(), static_cast<int>(lines.size()));
    QCOMPARE(view->left()->document()->blockCount(), view->LineCount());
    QCOMPARE(view->right()->document()->blockCount(), view->LineCount());
    const bool dark = Dark(view);
    int changes = 0, removed = 0, added = 0, renamed_pairs = 0;
    for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
      const SideBySideLine& l = lines[i];
      QCOMPARE(view->LeftText(i), QString::fromStdString(l.left));
      QCOMPARE(view->RightText(i), QString::fromStdString(l.right));
      if (l.type != SideBySideLine::Type::kInstruction) continue;
      switch (l.kind) {
        case DiffKind::kUnchanged:
          QVERIFY(!view->LeftBackground(i).isValid());
          QVERIFY(!view->RightBackground(i).isValid());
          if (l.a->name() != l.b->name()) ++renamed_pairs;
          break;
        case DiffKind::kChanged:
          QCOMPARE(view->LeftBackground(i), HloDiffView::KindColor(DiffKind::kChanged, dark));
          QCOMPARE(view->RightBackground(i), HloDiffView::KindColor(DiffKind::kChanged, dark));
          ++changes;
          break;
        case DiffKind::kAdded:
          QVERIFY(view->LeftText(i).isEmpty());
          QCOMPARE(view->LeftBackground(i), HloDiffView::FillerColor(dark));
          QCOMPARE(view->RightBackground(i), HloDiffView::KindColor(DiffKind::kAdded, dark));
          ++added;
          ++changes;
          break;
        case DiffKind::kRemoved:
          QVERIFY(view->RightText(i).isEmpty());
          QCOMPARE(view->LeftBackground(i), HloDiffView::KindColor(DiffKind::kRemoved, dark));
          QCOMPARE(view->RightBackground(i), HloDiffView::FillerColor(dark));
          ++removed;
          ++changes;
          break;
      }
      // The window's instructions sit on the line of their independently parsed twins.
      if (l.b != nullptr) {
        const Instruction* mine = hlowb::testing::FindInstruction(*w->current_module(), l.b->name());
        QVERIFY(mine != nullptr);
        QCOMPARE(view->LineOf(mine), i);
      }
    }
    QCOMPARE(added, expected.counts.added);
    QCOMPARE(removed, expected.counts.removed);
    QVERIFY(removed > 0 && added > 0);
    QCOMPARE(view->ChangeCount(), changes);

    // Synchronized scrolling, both ways.
    QScrollBar* left_bar = view->left()->verticalScrollBar();
    QScrollBar* right_bar = view->right()->verticalScrollBar();
    QVERIFY(right_bar->maximum() > 0);
    right_bar->setValue(right_bar->maximum() / 2);
    QCOMPARE(left_bar->value(), right_bar->value());
    left_bar->setValue(3);
    QCOMPARE(right_bar->value(), 3);

    // Next change walks every changed line in order on both sides, then wraps. (A click on the
    // first line, a computation header, starts the walk at the top.)
    view->left()->setTextCursor(QTextCursor(view->left()->document()->lastBlock()));
    view->left()->setTextCursor(QTextCursor(view->left()->document()->firstBlock()));
    QCOMPARE(view->CurrentLine(), 0);
    std::vector<int> visited;
    for (int k = 0; k < changes; ++k) {
      const int line = w->StepChange();
      QVERIFY(line >= 0);
      visited.push_back(line);
      QCOMPARE(view->CurrentLine(), line);
      QCOMPARE(view->left()->textCursor().blockNumber(), line);
      QCOMPARE(view->right()->textCursor().blockNumber(), line);
      QVERIFY(lines[line].kind != DiffKind::kUnchanged);
      QCOMPARE(view->CurrentNote(), QString::fromStdString(lines[line].note));
      QVERIFY(!view->CurrentNote().isEmpty());
      if (lines[line].kind == DiffKind::kRemoved) {
        QVERIFY(view->CurrentNote().startsWith(QStringLiteral("removed")));
      }
      QCOMPARE(left_bar->value(), right_bar->value());
      // The line is in view on both sides.
      const QRectF r = view->right()->cursorRect();
      QVERIFY(view->right()->viewport()->rect().intersects(r.toRect()));
      if (lines[line].b != nullptr) {
        QVERIFY(WaitIdle(*w));
        QVERIFY(w->properties_panel()->instruction() != nullptr);
        QCOMPARE(QString::fromStdString(w->properties_panel()->instruction()->name()),
                 QString::fromStdString(lines[line].b->name()));
      }
    }
    QVERIFY(std::is_sorted(visited.begin(), visited.end()));
    QCOMPARE(w->StepChange(), visited.front());      // wraps
    QCOMPARE(w->StepChange(true), visited.back());   // and back
    QCOMPARE(w->StepChange(true), visited[visited.size() - 2]);

    // A click on an unchanged line of the left side selects the shown state's instruction.
    int unchanged = -1;
    for (int i = 0; i < static_cast<int>(lines.size()); ++i) {
      if (lines[i].type == SideBySideLine::Type::kInstruction &&
          lines[i].kind == DiffKind::kUnchanged && lines[i].b->opcode() != hlowb::Opcode::kParameter) {
        unchanged = i;
        break;
      }
    }
    QVERIFY(unchanged >= 0);
    QTextCursor c(view->left()->document()->findBlockByNumber(unchanged));
    view->left()->setTextCursor(c);  // what a click on the line does
    QVERIFY(WaitIdle(*w));
    QCOMPARE(view->right()->textCursor().blockNumber(), unchanged);
    QVERIFY(w->properties_panel()->instruction() != nullptr);
    QCOMPARE(QString::fromStdString(w->properties_panel()->instruction()->name()),
             QString::fromStdString(lines[unchanged].b->name()));
    // A selection elsewhere moves the view to its line.
    const Instruction* target = hlowb::testing::FindInstruction(*w->current_module(), lines[visited.front()].b
                                                                ? lines[visited.front()].b->name()
                                                                : lines[unchanged].b->name());
    QVERIFY(target);
    w->SelectInstruction(target);
    QVERIFY(WaitIdle(*w));
    QCOMPARE(view->CurrentLine(), view->LineOf(target));

    // Side by side off: the text view is back, with its marks.
    w->SetSideBySide(false);
    QVERIFY(w->text_view()->isVisible());
    QVERIFY(!view->isVisible());
    QCOMPARE(w->text_view()->DiffMarkedLineCount(),
             expected.counts.added + expected.counts.changed);
    w->SetSideBySide(true);
    QVERIFY(view->isVisible());
    w->ClearDiff();
    QVERIFY(w->text_view()->isVisible());
    QCOMPARE(view->LineCount(), 0);
  }

  // Removed instructions are ghosts on the shown state's graph: as many as the diff removed
  // from the shown computation, drawn with the red band, and not selectable.
  void RemovedInstructionsAreGhostsOnTheGraph() {
    auto w = NewWindow();
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("7"), {}});
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->RemovedGhostCount(), 0);
    QVERIFY(w->CompareWithPreviousStep());
    QVERIFY(WaitIdle(*w));
    hlowb::viewer::GraphView* graph = w->graph_view();
    QVERIFY(!graph->InNeighborhoodMode());

    auto a = ReadState(QStringLiteral("0006"));
    auto b = ReadState(QStringLiteral("0007"));
    QVERIFY(a && b);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*a, *b);
    const std::string shown = graph->computation()->name();
    int removed_here = 0;
    for (const hlowb::ComputationDiff& c : expected.computations) {
      if (c.a == nullptr || c.b == nullptr || c.b->name() != shown) continue;
      for (const hlowb::InstructionDiff& r : c.rows) removed_here += r.kind == DiffKind::kRemoved;
    }
    QVERIFY(removed_here > 0);
    QCOMPARE(graph->RemovedGhostCount(), removed_here);
    // Ghosts are no instructions of the shown module.
    for (const Instruction* i : graph->ShownInstructions()) {
      QCOMPARE(static_cast<const hlowb::Module*>(i->parent()->parent()), w->current_module().get());
    }

    // Drawn with the red band.
    const std::vector<QRectF> ghosts = graph->RemovedGhostRects();
    QVERIFY(!ghosts.empty());
    QGraphicsScene* scene = graph->graphicsView()->scene();
    QVERIFY(scene != nullptr);
    const QRectF around = ghosts.front().adjusted(-8, -8, 8, 8);
    QImage image(around.size().toSize() * 2, QImage::Format_ARGB32);
    image.fill(Qt::white);
    {
      QPainter p(&image);
      scene->render(&p, QRectF(QPointF(0, 0), image.size()), around);
    }
    QVERIFY2(CountNear(image, QColor(0xD3, 0x2F, 0x2F)) > 20, "no red band around the ghost");

    // A click on a ghost selects nothing.
    const Instruction* before_click = graph->selected();
    QGraphicsView* canvas = graph->graphicsView();
    canvas->centerOn(ghosts.front().center());
    QTest::qWait(20);
    QTest::mouseClick(canvas->viewport(), Qt::LeftButton, {},
                      canvas->mapFromScene(ghosts.front().center()));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(graph->selected(), before_click);

    // Stepping on ends the comparison and the ghosts go.
    QVERIFY(w->SelectStep(QStringLiteral("8")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(graph->RemovedGhostCount(), 0);
  }

  // The History dock follows the selected instruction through every state: the pass that
  // fused it away and the one that created the fusion, with the names at each step; states
  // dropped from memory are loaded for it; a click on a row shows that state with the
  // instruction selected.
  void HistoryNamesThePassesThatChangedAnInstruction() {
    auto w = NewWindow();
    w->SetStateMemoryBudget(0);
    w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), QStringLiteral("6"), {}});
    QVERIFY(WaitIdle(*w));
    w->history_dock()->show();
    w->history_dock()->raise();
    QVERIFY(WaitIdle(*w));

    // An instruction of step 6 that priority-fusion (step 7) fuses away.
    auto a = ReadState(QStringLiteral("0006"));
    auto b = ReadState(QStringLiteral("0007"));
    QVERIFY(a && b);
    const hlowb::ModuleDiff d67 = hlowb::DiffModules(*a, *b);
    std::string fused, fusion, fused_copy;
    for (const hlowb::ComputationDiff& c : d67.computations) {
      for (const hlowb::InstructionDiff& r : c.rows) {
        if (fused.empty() && r.kind == DiffKind::kRemoved && r.fused_into != nullptr) {
          fused = r.a->name();
          fusion = r.fused_into->name();
          fused_copy = r.fused_as->name();
        }
      }
    }
    QVERIFY(!fused.empty());
    QVERIFY(w->SelectInstructionByName(QString::fromStdString(fused)));
    QVERIFY(WaitIdle(*w));

    hlowb::viewer::HistoryPanel* panel = w->history_panel();
    const int row6 = RowOfStep(*w, 6), row7 = RowOfStep(*w, 7);
    QCOMPARE(static_cast<int>(panel->rows().size()), static_cast<int>(w->states().size()));
    QVERIFY(panel->subject().contains(QString::fromStdString(fused)));
    for (const auto& r : panel->rows()) QVERIFY2(r.event != QLatin1String("not loaded"), qPrintable(r.label));
    QCOMPARE(panel->rows()[row6].name, QString::fromStdString(fused));
    QCOMPARE(panel->rows()[row7].event, QStringLiteral("fused into %1").arg(QString::fromStdString(fusion)));
    QCOMPARE(panel->rows()[row7].pass, QString::fromStdString(w->states()[row7].pass));
    QCOMPARE(panel->rows()[row7].pass, QStringLiteral("priority-fusion"));
    // Followed on inside the fusion's computation.
    QCOMPARE(panel->rows()[row7].name, QString::fromStdString(fused_copy));
    QCOMPARE(panel->table()->rowCount(), static_cast<int>(panel->rows().size()));
    QVERIFY(panel->table()->item(row7, 3)->text().contains(QStringLiteral("fused into")));
    // Earlier states: present under some name, or created at some step.
    int created = 0;
    for (int r = 0; r <= row6; ++r) created += panel->rows()[r].event.startsWith(QStringLiteral("created"));
    QVERIFY(created <= 1);

    // The fusion itself: created by priority-fusion.
    QVERIFY(w->SelectStep(QStringLiteral("7")));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->SelectInstructionByName(QString::fromStdString(fusion)));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(static_cast<int>(panel->rows().size()), static_cast<int>(w->states().size()));
    QVERIFY2(panel->rows()[row7].event.startsWith(QStringLiteral("created")),
             qPrintable(panel->rows()[row7].event));
    QCOMPARE(panel->rows()[row7].pass, QStringLiteral("priority-fusion"));
    QVERIFY(panel->rows()[row6].name.isEmpty());

    // A click on a later row shows that state with the instruction (under its name there).
    int later = -1;
    for (int r = row7 + 1; r < static_cast<int>(panel->rows().size()); ++r) {
      if (!panel->rows()[r].name.isEmpty()) later = r;
    }
    QVERIFY(later > row7);
    const QString name_there = panel->rows()[later].name;
    QTableWidget* table = panel->table();
    table->scrollToItem(table->item(later, 0));
    QTest::mouseClick(table->viewport(), Qt::LeftButton, {},
                      table->visualItemRect(table->item(later, 0)).center());
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_state_row(), later);
    QVERIFY(w->properties_panel()->instruction() != nullptr);
    QCOMPARE(QString::fromStdString(w->properties_panel()->instruction()->name()), name_there);
    // Moving along the history keeps it.
    QVERIFY(panel->rows()[row7].event.startsWith(QStringLiteral("created")));
  }

  // A module of thousands of instructions: the diff and the side-by-side text are built off the
  // UI thread, which never blocks for 100 ms, and the result is the full aligned diff.
  void LargeModuleComparesWithoutStallingTheUi() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto write = [&](const QString& name, bool after) {
      QString text = QStringLiteral("HloModule big\n\nENTRY %main (p0: f32[64]) -> f32[64] {\n"
                                    "  %p0 = f32[64]{0} parameter(0)\n");
      QString last = QStringLiteral("p0");
      constexpr int kCount = 4000;
      for (int i = 0; i < kCount; ++i) {
        if (after && i % 97 == 5) continue;  // removed
        const bool changed = after && i % 89 == 3;
        const QString name = QStringLiteral("v%1").arg(i);
        text += QStringLiteral("  %%1 = f32[64]{0} %2(f32[64]{0} %%3, f32[64]{0} %p0)\n")
                    .arg(name, changed ? QStringLiteral("multiply") : QStringLiteral("add"), last);
        last = name;
        if (after && i % 101 == 7) {
          const QString extra = QStringLiteral("x%1").arg(i);
          text += QStringLiteral("  %%1 = f32[64]{0} negate(f32[64]{0} %%2)\n").arg(extra, last);
          last = extra;
        }
      }
      text += QStringLiteral("  ROOT %out = f32[64]{0} abs(f32[64]{0} %%1)\n}\n").arg(last);
      QFile f(dir.filePath(name));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(text.toUtf8());
    };
    write(QStringLiteral("module_0001.big.before_optimizations.txt"), false);
    write(QStringLiteral("module_0001.big.after_optimizations.txt"), true);
    auto a = Read(dir.filePath(QStringLiteral("module_0001.big.before_optimizations.txt")));
    auto b = Read(dir.filePath(QStringLiteral("module_0001.big.after_optimizations.txt")));
    QVERIFY(a && b);
    QVERIFY(a->instruction_count() >= 4000);
    const hlowb::ModuleDiff expected = hlowb::DiffModules(*a, *b);
    QVERIFY(expected.counts.removed > 0 && expected.counts.added > 0);

    auto w = NewWindow();
    w->Open(OpenRequest{dir.path(), {}, QStringLiteral("after"), {}});
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module());

    hlowb::testing::LatencyProbe probe;
    probe.SetPhase(QStringLiteral("compare"));
    probe.Start();
    QVERIFY(w->CompareWithBeforeOptimizations());
    probe.SetPhase(QStringLiteral("wait"));
    QVERIFY(WaitIdle(*w));
    probe.SetPhase(QStringLiteral("next change"));
    QVERIFY(w->StepChange() >= 0);
    QVERIFY(WaitIdle(*w));
    probe.Stop();
    qInfo("longest UI-thread gap %lld ms (%s), cpu %.1f ms (%s)", probe.max_gap(),
          qPrintable(probe.worst()), probe.max_cpu_gap(), qPrintable(probe.worst_cpu()));
    QVERIFY2(probe.max_cpu_gap() < 100, qPrintable(probe.worst_cpu()));
    if (!hlowb::testing::LatencyProbe::MachineOverloaded()) {
      QVERIFY2(probe.max_gap() < 250, qPrintable(probe.worst()));
    }

    QVERIFY2(w->diff_summary().contains(Counts(expected)), qPrintable(w->diff_summary()));
    const std::vector<SideBySideLine> lines = hlowb::BuildSideBySide(expected);
    HloDiffView* view = w->diff_view();
    QCOMPARE(view->LineCount(), static_cast<int>(lines.size()));
    for (int i : {0, 1, static_cast<int>(lines.size()) / 2, static_cast<int>(lines.size()) - 2}) {
      QCOMPARE(view->LeftText(i), QString::fromStdString(lines[i].left));
      QCOMPARE(view->RightText(i), QString::fromStdString(lines[i].right));
    }
    QCOMPARE(view->ChangeCount(),
             expected.counts.added + expected.counts.removed + expected.counts.changed);
  }
};

QTEST_MAIN(DiffUiTest)
#include "diff_ui_test.moc"
