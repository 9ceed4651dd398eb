// What a new user missed in the window (issue item 16), each checked offscreen: tooltips on graph
// nodes, Help ▸ Keyboard Shortcuts, Open Recent with full paths, an overview map of the graph's
// aspect that keeps out of the nodes' way, exports that draw the diff's bands in the view's
// palette, and `hlowb gui --screenshot` in the chosen theme.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QGraphicsItem>
#include <QGraphicsView>
#include <QImage>
#include <QKeySequence>
#include <QLineEdit>
#include <QMenu>
#include <QPalette>
#include <QProcess>
#include <QPushButton>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <memory>
#include <set>
#include <string>

#include "app/gui/keyboard_shortcuts.h"
#include "app/gui/main_window.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "tests/gui/window_test_util.h"
#include "viewer/graph/graph_scene.h"
#include "viewer/graph/graph_view.h"
#include "viewer/widgets/replay_panel.h"

using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;
using hlowb::viewer::GraphView;

namespace {

constexpr int kTimeoutMs = 30000;
const QString kSampleDump = QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/dump");

constexpr char kModule[] = R"(HloModule tooltips

ENTRY main {
  p0 = f32[8,16] parameter(0)
  p1 = f32[16,4] parameter(1)
  dot.1 = f32[8,4] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(step)/dense/dot_general" op_type="DotGeneral" source_file="model.py" source_line=42}
  neg.1 = f32[8,4] negate(dot.1)
  ROOT t = (f32[8,4], f32[8,4]) tuple(dot.1, neg.1)
}
)";

// `n` parameters side by side, all read by one tuple: a graph much wider than tall.
std::string WideModule(int n) {
  std::string text = "HloModule wide\n\nENTRY main {\n";
  std::string operands;
  for (int i = 0; i < n; ++i) {
    text += "  p" + std::to_string(i) + " = f32[4] parameter(" + std::to_string(i) + ")\n";
    operands += (i ? ", p" : "p") + std::to_string(i);
  }
  std::string shape = "(";
  for (int i = 0; i < n; ++i) shape += i ? ", f32[4]" : "f32[4]";
  return text + "  ROOT t = " + shape + ") tuple(" + operands + ")\n}\n";
}

// `n` chains of negates, chain i (left to right) i + 1 long, joined by a tuple: a triangle whose
// bottom-left is empty.
std::string StairsModule(int n) {
  std::string text = "HloModule stairs\n\nENTRY main {\n";
  std::string ends;
  for (int i = 0; i < n; ++i) {
    const std::string c = "c" + std::to_string(i) + "_";
    text += "  " + c + "0 = f32[4] parameter(" + std::to_string(i) + ")\n";
    for (int k = 1; k <= i + 1; ++k) {
      text +=
          "  " + c + std::to_string(k) + " = f32[4] negate(" + c + std::to_string(k - 1) + ")\n";
    }
    ends += (i ? ", " : "") + c + std::to_string(i + 1);
  }
  std::string shape = "(";
  for (int i = 0; i < n; ++i) shape += i ? ", f32[4]" : "f32[4]";
  return text + "  ROOT t = " + shape + ") tuple(" + ends + ")\n}\n";
}

// A chain of `n` negates: a graph much taller than wide.
std::string TallModule(int n) {
  std::string text = "HloModule tall\n\nENTRY main {\n  n0 = f32[4] parameter(0)\n";
  for (int i = 1; i <= n; ++i) {
    text += std::string(i == n ? "  ROOT n" : "  n") + std::to_string(i) + " = f32[4] negate(n" +
            std::to_string(i - 1) + ")\n";
  }
  return text + "}\n";
}

std::shared_ptr<const hlowb::Module> Parse(const std::string& text) {
  auto m = hlowb::ParseModule(text);
  if (!m.ok()) return nullptr;
  return std::shared_ptr<const hlowb::Module>(std::move(*m));
}

bool WaitLayout(GraphView& view, QSignalSpy& finished) {
  return QTest::qWaitFor([&] { return !view.IsLayoutRunning() && !finished.isEmpty(); },
                         kTimeoutMs);
}

// Shows `module`'s entry in a new view of `size` and waits for the layout.
std::unique_ptr<GraphView> Show(const std::shared_ptr<const hlowb::Module>& module, QSize size) {
  auto view = std::make_unique<GraphView>();
  view->resize(size);
  view->show();
  if (!QTest::qWaitForWindowExposed(view.get())) return nullptr;
  QSignalSpy finished(view.get(), &GraphView::layoutFinished);
  view->SetComputation(module, module->entry());
  if (!WaitLayout(*view, finished)) return nullptr;
  return view;
}

// Pixels of `image` within a few steps of `color` on every channel.
int CountNear(const QImage& image, const QColor& color, int tolerance = 12) {
  int n = 0;
  for (int y = 0; y < image.height(); ++y) {
    for (int x = 0; x < image.width(); ++x) {
      const QColor c = image.pixelColor(x, y);
      n += std::abs(c.red() - color.red()) < tolerance &&
           std::abs(c.green() - color.green()) < tolerance &&
           std::abs(c.blue() - color.blue()) < tolerance;
    }
  }
  return n;
}

QGraphicsView* OverviewOf(GraphView& view) {
  return view.graphicsView()->findChild<QGraphicsView*>(QStringLiteral("overviewMap"));
}

QPalette DarkTestPalette() {
  QPalette p;
  p.setColor(QPalette::Window, QColor(45, 45, 48));
  p.setColor(QPalette::Base, QColor(30, 30, 32));
  p.setColor(QPalette::Text, QColor(220, 220, 220));
  p.setColor(QPalette::WindowText, QColor(220, 220, 220));
  return p;
}

}  // namespace

class NewUserPolishTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir scratch_;

  std::unique_ptr<MainWindow> NewWindow() {
    QSettings().clear();
    auto w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    return w;
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(scratch_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("new_user_polish_test"));
  }

  void cleanup() { QApplication::setPalette(QApplication::style()->standardPalette()); }

  // A node's tooltip says its full shape, op_name, op_type, source line and cost estimate.
  void NodeTooltipsSayShapeMetadataAndCost() {
    auto module = Parse(kModule);
    QVERIFY(module != nullptr);
    auto view = Show(module, QSize(900, 700));
    QVERIFY(view != nullptr);
    const hlowb::Instruction* dot = module->entry()->FindInstruction("dot.1");
    const QRectF rect = view->NodeSceneRect(dot);
    QVERIFY(!rect.isEmpty());
    QString tip;
    for (QGraphicsItem* item : view->graphicsView()->scene()->items(rect.center())) {
      if (!item->toolTip().isEmpty()) tip = item->toolTip();
    }
    QVERIFY2(tip.contains(QLatin1String("dot.1")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("shape: f32[8,4]")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("op_name: jit(step)/dense/dot_general")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("op_type: DotGeneral")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("source: model.py:42")), qPrintable(tip));
    // 2 · M · N · K = 2 · 8 · 4 · 16 flops; (8·16 + 16·4) · 4 bytes read, 8·4·4 written.
    QVERIFY2(tip.contains(QLatin1String("1024 flops")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("768 B read")), qPrintable(tip));
    QVERIFY2(tip.contains(QLatin1String("128 B written")), qPrintable(tip));

    // An instruction without metadata still gets its shape and cost.
    const QRectF neg = view->NodeSceneRect(module->entry()->FindInstruction("neg.1"));
    QString neg_tip;
    for (QGraphicsItem* item : view->graphicsView()->scene()->items(neg.center())) {
      if (!item->toolTip().isEmpty()) neg_tip = item->toolTip();
    }
    QVERIFY2(neg_tip.contains(QLatin1String("shape: f32[8,4]")), qPrintable(neg_tip));
    QVERIFY2(neg_tip.contains(QLatin1String("32 flops")), qPrintable(neg_tip));
    QVERIFY(!neg_tip.contains(QLatin1String("op_name")));
  }

  // Help ▸ Keyboard Shortcuts lists every shortcut of the window's actions, and the keys the
  // views handle themselves.
  void KeyboardShortcutsListEveryShortcut() {
    auto w = NewWindow();
    QAction* help_action = w->findChild<QAction*>(QStringLiteral("keyboardShortcutsAction"));
    QVERIFY(help_action != nullptr);
    QCOMPARE(help_action->shortcut(), QKeySequence(QKeySequence::HelpContents));
    help_action->trigger();
    auto* dialog = w->findChild<QDialog*>(QStringLiteral("keyboardShortcuts"));
    QVERIFY(dialog != nullptr);
    QVERIFY(dialog->isVisible());
    auto* table = dialog->findChild<QTableWidget*>(QStringLiteral("shortcutsTable"));
    QVERIFY(table != nullptr);
    std::set<QString> listed;
    for (int r = 0; r < table->rowCount(); ++r) {
      for (const QString& k : table->item(r, 0)->text().split(QStringLiteral(", "))) {
        listed.insert(k);
      }
    }
    int with_shortcut = 0;
    for (const QAction* a : w->findChildren<QAction*>()) {
      for (const QKeySequence& k : a->shortcuts()) {
        if (k.isEmpty()) continue;
        ++with_shortcut;
        QVERIFY2(listed.count(k.toString(QKeySequence::NativeText)) > 0,
                 qPrintable(a->text() + QStringLiteral(": ") + k.toString()));
      }
    }
    QVERIFY(with_shortcut >= 20);
    for (const QKeySequence& k : {QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H),
                                  QKeySequence(Qt::CTRL | Qt::Key_BracketRight),
                                  QKeySequence(Qt::ALT | Qt::Key_Down), QKeySequence(Qt::Key_F2),
                                  QKeySequence(Qt::ALT | Qt::Key_Left), QKeySequence(Qt::Key_F3)}) {
      QVERIFY2(listed.count(k.toString(QKeySequence::NativeText)) > 0, qPrintable(k.toString()));
    }
    // Each row says what the key does and where.
    bool history = false;
    for (const hlowb::gui::ShortcutRow& row : hlowb::gui::KeyboardShortcuts(*w)) {
      QVERIFY(!row.command.isEmpty() && !row.where.isEmpty());
      history =
          history ||
          (row.keys ==
               QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H).toString(QKeySequence::NativeText) &&
           row.command.contains(QLatin1String("History")));
    }
    QVERIFY(history);
    // The filter narrows the table.
    auto* filter = dialog->findChild<QLineEdit*>(QStringLiteral("shortcutsFilter"));
    QVERIFY(filter != nullptr);
    filter->setText(QStringLiteral("History"));
    int shown = 0;
    for (int r = 0; r < table->rowCount(); ++r) shown += table->isRowHidden(r) ? 0 : 1;
    QVERIFY(shown >= 1 && shown < table->rowCount());
    dialog->close();
  }

  // Open Recent names each entry by its full path: two dumps of one folder name are told apart.
  void OpenRecentShowsFullPaths() {
    auto w = NewWindow();
    QDir root(scratch_.path());
    QVERIFY(root.mkpath(QStringLiteral("run_a/xla_dump")));
    QVERIFY(root.mkpath(QStringLiteral("run_b&c/xla_dump")));
    const QString a = root.filePath(QStringLiteral("run_a/xla_dump"));
    const QString b = root.filePath(QStringLiteral("run_b&c/xla_dump"));
    for (const QString& dir : {a, b}) {
      QFile f(dir + QStringLiteral("/module_0001.jit_f.before_optimizations.txt"));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("HloModule jit_f\n\nENTRY main {\n  ROOT p = f32[4] parameter(0)\n}\n");
      f.close();
      w->OpenPath(dir);
      QVERIFY(hlowb::testing::WaitWindowIdle(*w, kTimeoutMs));
    }
    QStringList labels;
    for (QAction* action : w->recent_menu()->actions()) {
      if (action->isSeparator() || action->text().startsWith(QLatin1String("Clear"))) continue;
      // What the menu shows: mnemonics are single ampersands, a shown one is doubled.
      QString shown = action->text();
      shown.replace(QLatin1String("&&"), QStringLiteral("\x01"));
      shown.remove(QLatin1Char('&'));
      shown.replace(QLatin1Char('\x01'), QLatin1Char('&'));
      labels << shown;
    }
    QCOMPARE(labels.size(), 2);
    QVERIFY2(labels[0].endsWith(QDir::toNativeSeparators(b)), qPrintable(labels[0]));
    QVERIFY2(labels[1].endsWith(QDir::toNativeSeparators(a)), qPrintable(labels[1]));
  }

  // The overview map has the graph's aspect and takes at most a third of a small view.
  void OverviewMapHasTheGraphsAspect() {
    for (const auto& [text, expect_wide] :
         {std::pair{WideModule(24), true}, std::pair{TallModule(24), false}}) {
      auto module = Parse(text);
      QVERIFY(module != nullptr);
      auto view = Show(module, QSize(560, 420));
      QVERIFY(view != nullptr);
      auto* canvas = view->graphicsView();
      canvas->resetTransform();
      canvas->scale(1.0, 1.0);
      canvas->centerOn(view->NodeSceneRect(module->entry()->root()).center());
      QCoreApplication::processEvents();
      QGraphicsView* overview = OverviewOf(*view);
      QVERIFY(overview != nullptr);
      QVERIFY(overview->isVisible());
      const QRectF bounds = canvas->scene()->sceneRect();
      const double graph_aspect = bounds.width() / bounds.height();
      const double map_aspect =
          static_cast<double>(overview->viewport()->width()) / overview->viewport()->height();
      QVERIFY2(expect_wide ? graph_aspect > 2 : graph_aspect < 0.5,
               qPrintable(QString::number(graph_aspect)));
      // Within a fifth of the graph's aspect, up to the letterbox limit of 28 pixels a side.
      const double limited = std::clamp(graph_aspect, 28.0 / overview->viewport()->height(),
                                        overview->viewport()->width() / 28.0);
      QVERIFY2(std::abs(std::log(map_aspect / limited)) < std::log(1.2),
               qPrintable(QStringLiteral("map %1 graph %2").arg(map_aspect).arg(graph_aspect)));
      const QSize vp = canvas->viewport()->size();
      QVERIFY2(
          overview->width() <= vp.width() * 0.3 + 4 && overview->height() <= vp.height() * 0.3 + 4,
          qPrintable(QStringLiteral("%1x%2 in %3x%4")
                         .arg(overview->width())
                         .arg(overview->height())
                         .arg(vp.width())
                         .arg(vp.height())));
    }
  }

  // The overview map moves to a corner where it hides no node: with a wide row of parameters
  // along the bottom of the view, to a top corner.
  void OverviewMapKeepsOutOfTheNodesWay() {
    auto module = Parse(StairsModule(7));
    QVERIFY(module != nullptr);
    auto view = Show(module, QSize(640, 480));
    QVERIFY(view != nullptr);
    auto* canvas = view->graphicsView();
    canvas->resetTransform();
    canvas->scale(1.2, 1.2);
    // The top-left of the triangle: nodes under the bottom right, none under the top left.
    canvas->horizontalScrollBar()->setValue(canvas->horizontalScrollBar()->minimum());
    canvas->verticalScrollBar()->setValue(canvas->verticalScrollBar()->minimum());
    QCoreApplication::processEvents();
    QGraphicsView* overview = OverviewOf(*view);
    QVERIFY(overview->isVisible());
    const QRect map = overview->geometry().translated(-canvas->viewport()->geometry().topLeft());
    const QRect bottom_right(canvas->viewport()->width() - map.width() - 8,
                             canvas->viewport()->height() - map.height() - 8, map.width(),
                             map.height());
    int in_view = 0, under_bottom_right = 0;
    for (const hlowb::Instruction* n : module->entry()->instructions()) {
      const QRect node = canvas->mapFromScene(view->NodeSceneRect(n)).boundingRect();
      if (!canvas->viewport()->rect().intersects(node)) continue;
      ++in_view;
      under_bottom_right += node.intersects(bottom_right);
      QVERIFY2(!node.intersects(map),
               qPrintable(
                   QStringLiteral("%1 under the overview").arg(QString::fromStdString(n->name()))));
    }
    QVERIFY(in_view >= 8);
    QVERIFY(under_bottom_right >= 1);  // the default corner would hide some
  }

  // An export draws the diff's bands (green added, orange changed) and, in the dark theme, the
  // view's background and the dark theme's edge colours.
  void ExportDrawsDiffBandsInTheViewsPalette() {
    QApplication::setPalette(DarkTestPalette());
    auto module = Parse(kModule);
    auto view = Show(module, QSize(900, 700));
    QVERIFY(view != nullptr);
    view->SetDiffMarks({{module->entry()->FindInstruction("neg.1"), 2},
                        {module->entry()->FindInstruction("dot.1"), 1}});
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("graph.png"));
    QVERIFY(view->ExportPng(png).ok());
    QImage image(png);
    QVERIFY(!image.isNull());
    using hlowb::viewer::gv::DiffMarkColor;
    QVERIFY2(CountNear(image, DiffMarkColor(2)) > 200, "no orange band");
    QVERIFY2(CountNear(image, DiffMarkColor(1)) > 200, "no green band");
    QCOMPARE(image.pixelColor(2, 2), QColor(30, 30, 32));
    QVERIFY(CountNear(image, QColor(0xB0, 0xBE, 0xC5), 6) > 50);  // dark theme's edges
    QCOMPARE(CountNear(image, QColor(0x54, 0x6E, 0x7A), 6), 0);   // light theme's edges

    // The background export says the same, and the SVG carries the orange.
    QSignalSpy done(view.get(), &GraphView::exportFinished);
    const QString svg = dir.filePath(QStringLiteral("graph.svg"));
    QVERIFY(view->ExportInBackground(svg));
    QVERIFY(done.wait(kTimeoutMs));
    QCOMPARE(done.last().at(1).toString(), QString());
    QFile f(svg);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QByteArray text = f.readAll();
    QVERIFY(text.contains(DiffMarkColor(2).name().toLatin1()));
    QVERIFY(text.contains(DiffMarkColor(1).name().toLatin1()));
    QVERIFY(text.contains("#1e1e20"));

    // Without marks, no bands.
    view->SetDiffMarks({});
    QVERIFY(view->ExportPng(png).ok());
    QCOMPARE(CountNear(QImage(png), DiffMarkColor(2)), 0);
  }

  // `hlowb gui --screenshot` draws the window in the theme given with --theme, else in the one
  // chosen in View ▸ Theme, and leaves that choice alone.
  void ScreenshotUsesTheChosenTheme() {
    QTemporaryDir config;
    QVERIFY(config.isValid());
    auto shoot = [&](const QStringList& extra, const QString& name) {
      QProcess p;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
      env.insert(QStringLiteral("XDG_CONFIG_HOME"), config.path());
      p.setProcessEnvironment(env);
      const QString file = scratch_.filePath(name);
      p.start(QStringLiteral(HLOWB_BINARY),
              QStringList{QStringLiteral("gui"), QStringLiteral("--screenshot=") + file,
                          QStringLiteral("--size=900x600")} +
                  extra);
      if (!p.waitForFinished(120000) || p.exitCode() != 0) {
        qWarning("hlowb gui failed: %s", p.readAllStandardError().constData());
        return QImage();
      }
      return QImage(file);
    };
    // Mean lightness of the window.
    auto lightness = [](const QImage& image) {
      double sum = 0;
      int n = 0;
      for (int y = 0; y < image.height(); y += 4) {
        for (int x = 0; x < image.width(); x += 4) {
          sum += image.pixelColor(x, y).lightness();
          ++n;
        }
      }
      return n ? sum / n : -1.0;
    };
    const QImage dark = shoot({QStringLiteral("--theme=dark"), kSampleDump}, "dark.png");
    QVERIFY(!dark.isNull());
    QVERIFY2(lightness(dark) < 90, qPrintable(QString::number(lightness(dark))));
    const QImage light = shoot({QStringLiteral("--theme=light")}, "light.png");
    QVERIFY(!light.isNull());
    QVERIFY2(lightness(light) > 150, qPrintable(QString::number(lightness(light))));

    // No --theme: the user's choice from the settings.
    QVERIFY(QDir(config.path()).mkpath(QStringLiteral("HLO Workbench")));
    const QString conf = config.filePath(QStringLiteral("HLO Workbench/hlowb.conf"));
    QFile f(conf);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("[view]\ntheme=dark\n");
    f.close();
    const QImage chosen = shoot({}, "chosen.png");
    QVERIFY(!chosen.isNull());
    QVERIFY2(lightness(chosen) < 90, qPrintable(QString::number(lightness(chosen))));
    QFile again(conf);
    QVERIFY(again.open(QIODevice::ReadOnly));
    QCOMPARE(again.readAll(), QByteArray("[view]\ntheme=dark\n"));
  }

  // Item 13: "snapshot arguments when present" replays a dump state on the arguments of the
  // dump's snapshot when its module matches, by parameter shapes (before_optimizations, the
  // snapshot being of the optimized module) or by fingerprint (after_optimizations, whose
  // recorded result is then compared), and the report says which data ran.
  void DumpStatesReplayOnTheDumpsSnapshot() {
    auto w = NewWindow();
    w->replay_controller()->SetWorkerCommand(QStringLiteral(HLOWB_BINARY),
                                             {QStringLiteral("worker")});
    hlowb::viewer::ReplayPanel* panel = w->replay_panel();
    auto replay = [&](const QString& step) -> QString {
      w->Open(OpenRequest{kSampleDump, QStringLiteral("jit_train_step"), step, {}});
      if (!hlowb::testing::WaitWindowIdle(*w, kTimeoutMs)) return QStringLiteral("not idle");
      QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
      panel->run_button()->click();
      if (!QTest::qWaitFor([&] { return finished.count() > 0; }, 120000) ||
          !QTest::qWaitFor([&] { return !panel->running(); }, kTimeoutMs)) {
        return QStringLiteral("no result");
      }
      return panel->Details();
    };
    const QString snapshot = QStringLiteral(
        "1718112000123456.module_0001.jit_train_step.execution_0000.hlo_snapshot.pb");
    QCOMPARE(panel->Settings().force_fake_data, false);

    const QString before = replay(QStringLiteral("before"));
    QVERIFY2(
        before.contains(
            QStringLiteral("Iteration 1 (snapshot %1, matched by parameter shapes)").arg(snapshot)),
        qPrintable(before));
    QVERIFY2(!before.contains(QLatin1String("fake data")), qPrintable(before));

    const QString after = replay(QStringLiteral("after"));
    QVERIFY2(after.contains(
                 QStringLiteral("Iteration 1 (snapshot %1, matched by fingerprint)").arg(snapshot)),
             qPrintable(after));

    // Fake data asked for: fake data ran, and the report says so.
    auto* data = panel->findChild<QComboBox*>(QStringLiteral("replayData"));
    QVERIFY(data != nullptr);
    data->setCurrentIndex(data->findData(true));
    QCOMPARE(panel->Settings().force_fake_data, true);
    const QString fake = replay(QStringLiteral("before"));
    QVERIFY2(fake.contains(QLatin1String("Iteration 1 (fake data (seed")), qPrintable(fake));
    data->setCurrentIndex(data->findData(false));

    // A module the snapshot does not fit runs on generated data, with a note saying why.
    QTemporaryDir dump;
    QVERIFY(QFile::copy(kSampleDump + QLatin1Char('/') + snapshot, dump.filePath(snapshot)));
    QFile text(dump.filePath(QStringLiteral("module_0005.jit_other.before_optimizations.txt")));
    QVERIFY(text.open(QIODevice::WriteOnly));
    text.write(
        "HloModule jit_other\n\nENTRY main {\n  p = f32[3] parameter(0)\n"
        "  ROOT n = f32[3] negate(p)\n}\n");
    text.close();
    w->Open(OpenRequest{dump.path(), QStringLiteral("jit_other"), {}, {}});
    QVERIFY(hlowb::testing::WaitWindowIdle(*w, kTimeoutMs));
    QSignalSpy finished(w->replay_controller(), &hlowb::gui::ReplayController::finished);
    panel->run_button()->click();
    QVERIFY(QTest::qWaitFor([&] { return finished.count() > 0; }, 120000));
    QVERIFY(QTest::qWaitFor([&] { return !panel->running(); }, kTimeoutMs));
    const QString other = panel->Details();
    QVERIFY2(other.contains(QLatin1String("Iteration 1 (fake data (seed")), qPrintable(other));
    QVERIFY2(other.contains(QLatin1String("none of the 1 snapshot(s) offered matches")),
             qPrintable(other));
  }
};

QTEST_MAIN(NewUserPolishTest)
#include "new_user_polish_test.moc"
