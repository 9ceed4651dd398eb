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
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>
#include <memory>

#include "app/gui/main_window.h"
#include "core/ir/module.h"
#include "tests/gui/window_test_util.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/widgets/history_panel.h"
#include "viewer/widgets/replay_panel.h"
#include "viewer/widgets/tensor_viewer.h"

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

}  // namespace

class NewUserTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;
  QString five_dir_;   // five compilations of jit__psum
  QString steps_dir_;  // pass-by-pass jit_step under ids 90 and 96

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
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    QStandardPaths::setTestModeEnabled(true);
    QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, settings_dir_.path());
    QSettings::setPath(QSettings::IniFormat, QSettings::UserScope, settings_dir_.path());
    QCoreApplication::setOrganizationName(QStringLiteral("HLO Workbench Tests"));
    QCoreApplication::setApplicationName(QStringLiteral("new_user_test"));
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
