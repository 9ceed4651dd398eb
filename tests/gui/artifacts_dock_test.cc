// The main window's Artifacts dock and artifact tabs on the offscreen platform, with a dump the
// pinned jax writes: the dock lists every artifact of the chosen module (checked against the
// dump directory's files and the index), grouped by kind and filterable; an artifact opens in a
// tab after the HLO tab (whose bar shows only then) with its kind's highlighting; links select
// the instruction, or show the computation, in the window, or say that the shown state lacks
// it; an open artifact is focused rather than opened twice; Ctrl+F searches the artifact;
// closing, another module, another document and a single file. And a dump made of the largest
// corpus module with 20 MB of LLVM IR naming its instructions: opening, linking, searching,
// scrolling, switching tabs, following links and closing never block the UI thread for 100 ms.
#include <QApplication>
#include <QDir>
#include <QDirIterator>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QLineEdit>
#include <QMenu>
#include <QPlainTextEdit>
#include <QProcess>
#include <QProcessEnvironment>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeView>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "app/gui/artifacts_controller.h"
#include "app/gui/main_window.h"
#include "core/dump/dump_index.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"
#include "core/ir/opcode.h"
#include "core/text/parser.h"
#include "latency_probe.h"
#include "tests/gui/corpus_util.h"
#include "tests/gui/window_test_util.h"
#include "viewer/graph/graph_view.h"
#include "viewer/text/artifact_text_area.h"
#include "viewer/text/artifact_view.h"
#include "viewer/text/hlo_text_view.h"

using hlowb::DumpFileKind;
using hlowb::Instruction;
using hlowb::Module;
using hlowb::gui::ArtifactsController;
using hlowb::gui::MainWindow;
using hlowb::gui::OpenRequest;
using hlowb::viewer::ArtifactView;

namespace {

constexpr int kTimeoutMs = 60000;

bool WaitIdle(MainWindow& w, int timeout_ms = kTimeoutMs) {
  return hlowb::testing::WaitWindowIdle(w, timeout_ms);
}

QByteArray ReadBytes(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  return f.readAll();
}

bool WriteBytes(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate)) return false;
  return f.write(bytes) == bytes.size();
}

std::shared_ptr<const Module> ParseFile(const QString& path) {
  auto m = hlowb::ParseModule(ReadBytes(path).toStdString());
  if (!m.ok()) return nullptr;
  return std::shared_ptr<const Module>(std::move(*m));
}

bool WaitLoaded(ArtifactView* view) {
  return view != nullptr && QTest::qWaitFor([&] { return !view->IsLoading(); }, kTimeoutMs);
}

// The files of dump module `prefix` ("module_0004.jit_f") found by walking the directory: every
// file named after it, or in its folder, except its HLO text states (before / after
// optimizations). Absolute, sorted.
QStringList ModuleFilesOnDisk(const QString& dump, const QString& prefix) {
  QStringList out;
  QDirIterator it(dump, QDir::Files, QDirIterator::Subdirectories);
  while (it.hasNext()) {
    const QString path = it.next();
    const QString rel = QDir(dump).relativeFilePath(path);
    if (!rel.startsWith(prefix + QLatin1Char('.')) && !rel.startsWith(prefix + QLatin1Char('/'))) {
      continue;
    }
    const QString name = QFileInfo(rel).fileName();
    if (name.endsWith(QLatin1String("before_optimizations.txt")) ||
        name.endsWith(QLatin1String("after_optimizations.txt"))) {
      continue;
    }
    out << QDir::cleanPath(path);
  }
  out.sort();
  return out;
}

QStringList Sorted(QStringList list) {
  list.sort();
  return list;
}

// The proxy index of the listed artifact at `path` (its tooltip is the path).
QModelIndex ListIndexOf(const QAbstractItemModel* model, const QString& path) {
  for (int g = 0; g < model->rowCount(); ++g) {
    const QModelIndex group = model->index(g, 0);
    for (int r = 0; r < model->rowCount(group); ++r) {
      const QModelIndex item = model->index(r, 0, group);
      if (QDir::fromNativeSeparators(item.data(Qt::ToolTipRole).toString()) == path) return item;
    }
  }
  return {};
}

int LeafCount(const QAbstractItemModel* model) {
  int n = 0;
  for (int g = 0; g < model->rowCount(); ++g) n += model->rowCount(model->index(g, 0));
  return n;
}

QTabBar::ButtonPosition CloseSide(const QTabBar* bar) {
  return static_cast<QTabBar::ButtonPosition>(
      bar->style()->styleHint(QStyle::SH_TabBar_CloseButtonPosition, nullptr, bar));
}

// Clicks the text of `view` at `position` (scrolled into view first); returns what the view
// emitted as instructionActivated (computation, instruction), empty when nothing.
QStringList ClickAt(ArtifactView* view, int position) {
  QSignalSpy spy(view, &ArtifactView::instructionActivated);
  view->ShowPosition(position);
  QTest::mouseClick(view->textArea()->viewport(), Qt::LeftButton, Qt::NoModifier,
                    view->textArea()->PointForPosition(position + 1));
  if (spy.count() != 1) return {};
  return {spy.at(0).at(0).toString(), spy.at(0).at(1).toString()};
}

// The largest .hlo file of the corpus; empty when the corpus is absent.
QString LargestCorpusFile() {
  return QString::fromStdString(hlowb::testing::LargestCorpusFile());
}

// A little function with a fusion and a reduction, compiled by the pinned jax with its dump on.
const char kJaxScript[] = R"(import jax, jax.numpy as jnp

@jax.jit
def f(x, y):
  return jnp.sum(jnp.sin(x) * 2 + y, axis=1)

print(f(jnp.ones((8, 16)), jnp.ones((8, 16))))
)";

}  // namespace

class ArtifactsDockTest : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir settings_dir_;
  QTemporaryDir dir_;
  QString dump_;  // the jax dump, empty when it could not be made
  QString skip_reason_;
  // jit_f in the dump: its id ("0004"), its artifacts as the index lists them, its states.
  QString module_id_;
  QStringList indexed_;
  std::shared_ptr<const Module> before_;
  std::shared_ptr<const Module> after_;
  QString after_label_;

  std::unique_ptr<MainWindow> NewWindow() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1400, 900);
    w->show();
    if (!QTest::qWaitForWindowExposed(w.get())) qFatal("window not exposed");
    return w;
  }

  // A window with jit_f of the jax dump open, every state loaded.
  std::unique_ptr<MainWindow> OpenJitF() {
    auto w = NewWindow();
    QSignalSpy loaded(w.get(), &MainWindow::statesLoaded);
    w->Open(OpenRequest{dump_, QStringLiteral("jit_f"), {}, {}});
    if (!WaitIdle(*w)) qFatal("the dump did not open");
    if (loaded.isEmpty() && !loaded.wait(kTimeoutMs)) qFatal("the states did not load");
    if (!WaitIdle(*w)) qFatal("the window did not settle");
    return w;
  }

  QString ListedPathEndingWith(const ArtifactsController* c, const QString& suffix) const {
    for (const QString& p : c->ListedPaths()) {
      if (p.endsWith(suffix)) return p;
    }
    return {};
  }

  void MakeJaxDump() {
    const QString python = QStringLiteral(HLOWB_SOURCE_DIR "/.venv/bin/python");
    if (!QFileInfo(python).isExecutable()) {
      skip_reason_ =
          QStringLiteral("no %1: run scripts/setup to install the pinned jax").arg(python);
      return;
    }
    QProcess probe;
    probe.start(python, {QStringLiteral("-c"), QStringLiteral("import jax")});
    if (!probe.waitForFinished(120000) || probe.exitCode() != 0) {
      skip_reason_ = QStringLiteral("%1 has no jax: the dump cannot be made").arg(python);
      return;
    }
    const QString script = dir_.filePath(QStringLiteral("f.py"));
    if (!WriteBytes(script, kJaxScript)) qFatal("cannot write %s", qPrintable(script));
    const QString dump = dir_.filePath(QStringLiteral("dump"));
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("XLA_FLAGS"),
               QStringLiteral("--xla_dump_to=%1 --xla_dump_hlo_as_text --xla_dump_hlo_as_dot")
                   .arg(dump));
    env.insert(QStringLiteral("JAX_PLATFORMS"), QStringLiteral("cpu"));
    QProcess jax;
    jax.setProcessEnvironment(env);
    jax.setProcessChannelMode(QProcess::MergedChannels);
    jax.start(python, {script});
    if (!jax.waitForFinished(300000) || jax.exitCode() != 0) {
      qFatal("jax failed: %s", jax.readAll().constData());
    }
    dump_ = QDir::cleanPath(dump);
  }

 private slots:
  void initTestCase() {
    QVERIFY(settings_dir_.isValid());
    QVERIFY(dir_.isValid());
    hlowb::testing::UseTestSettings(settings_dir_.path(), QStringLiteral("artifacts_dock_test"));
    QSettings().clear();
    MakeJaxDump();
    if (dump_.isEmpty()) return;
    // The index's own view of jit_f, and its two HLO states parsed here.
    auto index = hlowb::IndexDumpDirectory(dump_.toStdString());
    QVERIFY2(index.ok(), std::string(index.status().message()).c_str());
    const hlowb::DumpModule* module = nullptr;
    for (const hlowb::DumpModule& m : index->modules) {
      if (m.name == "jit_f") module = &m;
    }
    QVERIFY2(module != nullptr, "the dump has no module jit_f");
    module_id_ = QString::fromStdString(module->id_text);
    std::vector<int> files = module->artifacts;
    if (module->split_partner >= 0) {
      const auto& other = index->modules[module->split_partner].artifacts;
      files.insert(files.end(), other.begin(), other.end());
    }
    for (int f : files) {
      indexed_ << QDir::cleanPath(
          QDir(dump_).filePath(QString::fromStdString(index->files[f].path)));
    }
    indexed_.sort();
    for (const hlowb::DumpState& s : index->Timeline(*module)) {
      if (s.text_file < 0) continue;
      const QString path =
          QDir(dump_).filePath(QString::fromStdString(index->files[s.text_file].path));
      if (s.stage == hlowb::StageKind::kBeforeOptimizations) before_ = ParseFile(path);
      if (s.stage == hlowb::StageKind::kAfterOptimizations) {
        after_ = ParseFile(path);
        after_label_ = QString::fromStdString(s.label);
      }
    }
    QVERIFY(before_ != nullptr);
    QVERIFY(after_ != nullptr);
  }

  // The dock is a tab behind Properties and the tabs take the text pane's place: a window of
  // 1280×720 with every dock shown keeps its size, and Properties stays in front.
  void keepsTheWindowLayout() {
    auto w = std::make_unique<MainWindow>();
    w->resize(1280, 720);
    w->show();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    w->Open(OpenRequest{QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/dump"),
                        QStringLiteral("jit_train_step"), {}, {}});
    QVERIFY(WaitIdle(*w));
    ArtifactsController* c = w->artifacts_controller();
    QDockWidget* properties = w->findChild<QDockWidget*>(QStringLiteral("propertiesDock"));
    QVERIFY(properties != nullptr);
    QVERIFY(!c->dock()->isHidden());
    QVERIFY(w->tabifiedDockWidgets(properties).contains(c->dock()));
    QVERIFY(!properties->visibleRegion().isEmpty());
    QVERIFY(c->dock()->visibleRegion().isEmpty());
    auto* splitter = w->findChild<QSplitter*>(QStringLiteral("centralSplitter"));
    QVERIFY(splitter != nullptr);
    QCOMPARE(splitter->widget(1), c->tabs());
    QVERIFY(!c->ListedPaths().isEmpty());  // the sample's buffer assignment, at least
    c->dock()->raise();
    QCoreApplication::processEvents();
    QVERIFY2(w->minimumSizeHint().height() <= 720,
             qPrintable(QStringLiteral("minimum height %1").arg(w->minimumSizeHint().height())));
    QVERIFY(WaitLoaded(c->OpenArtifact(c->ListedPaths().value(0))));
    QCoreApplication::processEvents();
    QCOMPARE(w->size(), QSize(1280, 720));
    QVERIFY(w->graph_view()->height() >= 200);
  }

  // The dock lists every artifact of the module, the same ones the directory holds and the
  // index lists, grouped by kind, and the filter narrows the list.
  void listsEveryArtifactOfTheModule() {
    if (dump_.isEmpty()) QSKIP(qPrintable(skip_reason_));
    auto w = OpenJitF();
    ArtifactsController* c = w->artifacts_controller();
    QVERIFY(c != nullptr);
    QDockWidget* dock = w->findChild<QDockWidget*>(QStringLiteral("artifactsDock"));
    QVERIFY(dock != nullptr);
    QCOMPARE(dock, c->dock());
    QVERIFY(w->view_menu()->actions().contains(dock->toggleViewAction()));
    QCOMPARE(w->dockWidgetArea(dock), Qt::RightDockWidgetArea);

    const QStringList on_disk =
        ModuleFilesOnDisk(dump_, QStringLiteral("module_%1.jit_f").arg(module_id_));
    QVERIFY2(on_disk.size() >= 8, qPrintable(on_disk.join(QLatin1Char('\n'))));
    QCOMPARE(indexed_, on_disk);
    QCOMPARE(Sorted(c->ListedPaths()), on_disk);

    // Every file under the group of its kind, titled as the kind says.
    const QAbstractItemModel* model = c->list_model();
    QCOMPARE(LeafCount(model), static_cast<int>(on_disk.size()));
    auto index = hlowb::IndexDumpDirectory(dump_.toStdString());
    QVERIFY(index.ok());
    for (const hlowb::DumpFile& f : index->files) {
      const QString path = QDir::cleanPath(QDir(dump_).filePath(QString::fromStdString(f.path)));
      if (!on_disk.contains(path)) continue;
      const QModelIndex item = ListIndexOf(model, path);
      QVERIFY2(item.isValid(), qPrintable(path));
      const QString label = hlowb::viewer::ArtifactKindLabel(f.name.kind);
      QVERIFY2(item.parent().data().toString().startsWith(label + QStringLiteral(" (")),
               qPrintable(item.parent().data().toString()));
      QVERIFY2(item.data().toString().startsWith(label), qPrintable(item.data().toString()));
    }
    for (int g = 0; g < model->rowCount(); ++g) {
      const QModelIndex group = model->index(g, 0);
      QVERIFY(group.data().toString().endsWith(
          QStringLiteral("(%1)").arg(model->rowCount(group))));
      QVERIFY(c->list()->isExpanded(group));
    }
    QVERIFY2(c->message().contains(QStringLiteral("jit_f")) &&
                 c->message().contains(QString::number(on_disk.size())),
             qPrintable(c->message()));

    // The filter: by file name; a kind's name keeps its whole group.
    QTest::keyClicks(c->filter(), QStringLiteral("IR-WITH-OPT"));
    int with_opt = 0;
    for (const QString& p : on_disk) with_opt += p.contains(QStringLiteral("ir-with-opt"));
    QVERIFY(with_opt >= 1);
    QCOMPARE(LeafCount(model), with_opt);
    c->filter()->clear();
    QCOMPARE(LeafCount(model), static_cast<int>(on_disk.size()));
    QTest::keyClicks(c->filter(), QStringLiteral("memory usage"));
    QCOMPARE(model->rowCount(), 1);
    QVERIFY(model->rowCount(model->index(0, 0)) >= 1);
    c->filter()->clear();
  }

  // Opening from the list, the tab bar, highlighting, links into the window, focusing an open
  // artifact, Ctrl+F, closing.
  void opensArtifactTabsAndFollowsLinks() {
    if (dump_.isEmpty()) QSKIP(qPrintable(skip_reason_));
    auto w = OpenJitF();
    ArtifactsController* c = w->artifacts_controller();
    QTabWidget* tabs = c->tabs();
    QTabBar* bar = tabs->tabBar();

    // Only the HLO tab: no tab bar, the HLO pane fills the text side as before.
    QCOMPARE(tabs->count(), 1);
    QCOMPARE(tabs->tabText(0), QStringLiteral("HLO"));
    QVERIFY(!bar->isVisible());
    QVERIFY(tabs->widget(0)->isAncestorOf(w->text_view()));
    QCOMPARE(tabs->widget(0)->size(), tabs->size());
    QCOMPARE(bar->tabButton(0, CloseSide(bar)), nullptr);  // the HLO tab cannot be closed

    QVERIFY(w->SelectStep(QStringLiteral("after")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_module()->name(), after_->name());

    // Enter on the LLVM IR row of the list opens it.
    const QString ll = ListedPathEndingWith(c, QStringLiteral(".ir-with-opt.ll"));
    QVERIFY(!ll.isEmpty());
    const QModelIndex row = ListIndexOf(c->list_model(), ll);
    QVERIFY(row.isValid());
    c->list()->setCurrentIndex(row);
    QTest::keyClick(c->list(), Qt::Key_Return);
    QCOMPARE(tabs->count(), 2);
    ArtifactView* ir = c->current_view();
    QVERIFY(ir != nullptr);
    QCOMPARE(ir->path(), ll);
    QVERIFY(WaitLoaded(ir));
    QVERIFY2(!ir->HasError(), qPrintable(ir->Note()));
    QCOMPARE(ir->text(), QString::fromUtf8(ReadBytes(ll)));
    QCOMPARE(ir->syntax(), hlowb::viewer::ArtifactSyntax::kLlvmIr);
    QVERIFY(bar->isVisible());
    QCOMPARE(tabs->tabText(1), row.data().toString());
    QCOMPARE(tabs->tabToolTip(1), QDir::toNativeSeparators(ll));
    QVERIFY(bar->tabButton(1, CloseSide(bar)) != nullptr);

    // The fusion of the optimized module, as the IR names its function: a click selects it.
    const Instruction* fusion = nullptr;
    for (const Instruction* i : after_->entry()->instructions()) {
      if (i->opcode() == hlowb::Opcode::kFusion) fusion = i;
    }
    QVERIFY(fusion != nullptr);
    const QString fusion_name = QString::fromStdString(fusion->name());
    const int at = static_cast<int>(ir->text().indexOf(QLatin1Char('@') + fusion_name)) + 1;
    QVERIFY2(at > 0, qPrintable(fusion_name));
    QVERIFY(w->graph_view()->selected() == nullptr ||
            w->graph_view()->selected()->name() != fusion->name());
    QCOMPARE(ClickAt(ir, at), (QStringList{QString::fromStdString(after_->entry()->name()),
                                           fusion_name}));
    QVERIFY(QTest::qWaitFor(
        [&] {
          const Instruction* s = w->graph_view()->selected();
          return s != nullptr && s->name() == fusion->name();
        },
        kTimeoutMs));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->graph_view()->selected()->parent()->parent(), w->current_module().get());
    QCOMPARE(c->current_view(), ir);  // the artifact stays in front

    // A state without the fusion: the status bar says where it is, and nothing is selected.
    QVERIFY2(hlowb::testing::FindInstruction(*before_, fusion->name()) == nullptr,
             "the fusion is in the unoptimized module too");
    QVERIFY(w->SelectStep(QStringLiteral("before")));
    QVERIFY(WaitIdle(*w));
    QCOMPARE(ClickAt(ir, at).value(1), fusion_name);
    QVERIFY(w->graph_view()->selected() == nullptr ||
            w->graph_view()->selected()->name() != fusion->name());
    const QString message = w->statusBar()->currentMessage();
    QVERIFY2(message.contains(fusion_name) && message.contains(after_label_) &&
                 message.contains(QStringLiteral("not in the shown state")),
             qPrintable(message));

    // Opened while the unoptimized state is shown, an artifact still links the optimized
    // module's names (XLA wrote it for that one).
    const QString buffers = ListedPathEndingWith(c, QStringLiteral("-buffer-assignment.txt"));
    QVERIFY(!buffers.isEmpty());
    ArtifactView* ba = c->OpenArtifact(buffers);
    QVERIFY(WaitLoaded(ba));
    QCOMPARE(tabs->count(), 3);
    QCOMPARE(ba->syntax(), hlowb::viewer::ArtifactSyntax::kBufferReport);
    const int in_buffers = static_cast<int>(ba->text().indexOf(fusion_name));
    QVERIFY2(in_buffers >= 0, qPrintable(buffers));
    ba->ShowPosition(in_buffers);
    const std::vector<QString> linked = ba->LinkedNamesInView();
    QVERIFY(std::find(linked.begin(), linked.end(), fusion_name) != linked.end());

    // A computation's name links to the computation: find one (other than the entry) that an
    // artifact names, and follow it with the entry shown.
    QVERIFY(w->SelectStep(QStringLiteral("after")));
    QVERIFY(WaitIdle(*w));
    QString computation;
    ArtifactView* with_computation = nullptr;
    int computation_at = -1;
    for (const QString& path : c->ListedPaths()) {
      if (!computation.isEmpty()) break;
      if (path.endsWith(QStringLiteral(".o"))) continue;  // object code: a hex dump
      ArtifactView* view = c->OpenArtifact(path);
      QVERIFY(WaitLoaded(view));
      for (const auto& comp : after_->computations()) {
        if (comp.get() == after_->entry() || !computation.isEmpty()) continue;
        const QString name = QString::fromStdString(comp->name());
        for (qsizetype k = view->text().indexOf(name); k >= 0 && computation.isEmpty();
             k = view->text().indexOf(name, k + 1)) {
          const QStringList got = ClickAt(view, static_cast<int>(k));
          if (got.size() == 2 && got[0] == name && got[1].isEmpty()) {
            computation = name;
            with_computation = view;
            computation_at = static_cast<int>(k);
          }
        }
      }
    }
    QVERIFY2(!computation.isEmpty(), "no artifact links a computation other than the entry");
    QVERIFY(w->SelectInstructionByName(fusion_name));  // back to the entry computation
    QVERIFY(WaitIdle(*w));
    QCOMPARE(w->current_computation(), w->current_module()->entry());
    QCOMPARE(c->OpenArtifact(with_computation->path()), with_computation);
    QCOMPARE(ClickAt(with_computation, computation_at), (QStringList{computation, QString()}));
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_computation() != nullptr);
    QCOMPARE(QString::fromStdString(w->current_computation()->name()), computation);
    QCOMPARE(w->graph_view()->computation(), w->current_computation());
    QVERIFY(!w->ShowComputationByName(QStringLiteral("no_such_computation")));

    // Opening an open artifact brings its tab to the front, from the list too.
    const int count = tabs->count();
    tabs->setCurrentIndex(0);
    QCOMPARE(c->OpenArtifact(ll), ir);
    QCOMPARE(tabs->count(), count);
    QCOMPARE(tabs->currentWidget(), ir);
    tabs->setCurrentIndex(0);
    c->list()->setCurrentIndex(ListIndexOf(c->list_model(), ll));
    QTest::keyClick(c->list(), Qt::Key_Return);
    QCOMPARE(tabs->count(), count);
    QCOMPARE(c->current_view(), ir);
    QCOMPARE(c->OpenArtifact(dump_ + QStringLiteral("/not_listed.txt")), nullptr);

    // Ctrl+F searches the artifact in front, from its text and from the tab bar; the window's
    // HLO find bar stays closed.
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    ir->textArea()->setFocus();
    QVERIFY(ir->textArea()->hasFocus());
    QTest::keyClick(ir->textArea(), Qt::Key_F, Qt::ControlModifier);
    QVERIFY(ir->searchField()->hasFocus());
    QVERIFY(!w->search_edit()->isVisible());
    QTest::keyClicks(ir->searchField(), fusion_name);
    QVERIFY(QTest::qWaitFor([&] { return !ir->IsSearching(); }, kTimeoutMs));
    QCOMPARE(ir->MatchCount(),
             static_cast<int>(ReadBytes(ll).toLower().count(fusion_name.toLower().toUtf8())));
    ir->textArea()->setFocus();
    bar->setFocus();
    QTest::keyClick(bar, Qt::Key_F, Qt::ControlModifier);
    QVERIFY(ir->searchField()->hasFocus());
    QVERIFY(!w->search_edit()->isVisible());

    // Closing every artifact tab with its close button hides the bar again.
    while (tabs->count() > 1) {
      QWidget* close = bar->tabButton(tabs->count() - 1, CloseSide(bar));
      QVERIFY(close != nullptr);
      QTest::mouseClick(close, Qt::LeftButton);
    }
    QVERIFY(c->views().empty());
    QCOMPARE(tabs->currentIndex(), 0);
    QVERIFY(!bar->isVisible());
    c->CloseTab(0);  // the HLO tab stays
    QCOMPARE(tabs->count(), 1);
    QCOMPARE(tabs->widget(0)->size(), tabs->size());
  }

  // Another module lists its artifacts and closes the tabs of the old one's; another document
  // closes every tab; a single file lists nothing and says why.
  void followsModulesAndDocuments() {
    if (dump_.isEmpty()) QSKIP(qPrintable(skip_reason_));
    auto w = OpenJitF();
    ArtifactsController* c = w->artifacts_controller();
    const QString debug = ListedPathEndingWith(c, QStringLiteral(".debug_options"));
    QVERIFY(!debug.isEmpty());
    QVERIFY(WaitLoaded(c->OpenArtifact(debug)));
    QCOMPARE(c->views().size(), size_t{1});

    // Another module of the dump: one whose files are on disk (its own prefix).
    auto index = hlowb::IndexDumpDirectory(dump_.toStdString());
    QVERIFY(index.ok());
    const hlowb::DumpModule* other = nullptr;
    for (const hlowb::DumpModule& m : index->modules) {
      if (m.name != "jit_f" && !m.artifacts.empty()) other = &m;
    }
    QVERIFY(other != nullptr);
    const QString other_name = QString::fromStdString(other->name);
    QSignalSpy shown(w.get(), &MainWindow::stateShown);
    QVERIFY(w->SelectModule(QString::fromStdString(other->id_text)));
    QVERIFY(shown.count() >= 1 || shown.wait(kTimeoutMs));
    QVERIFY(WaitIdle(*w));
    const QString other_prefix =
        QStringLiteral("module_%1.%2").arg(QString::fromStdString(other->id_text), other_name);
    QCOMPARE(Sorted(c->ListedPaths()), ModuleFilesOnDisk(dump_, other_prefix));
    QVERIFY(!c->ListedPaths().contains(debug));
    QVERIFY(c->views().empty());  // jit_f's artifact went with it
    QVERIFY(!c->tabs()->tabBar()->isVisible());
    QVERIFY2(c->message().contains(other_name), qPrintable(c->message()));

    // A tab of this module, then another document: every tab goes.
    QVERIFY(WaitLoaded(c->OpenArtifact(c->ListedPaths().value(0))));
    QCOMPARE(c->views().size(), size_t{1});
    const QString sample = QStringLiteral(HLOWB_SOURCE_DIR "/resources/samples/dump");
    w->OpenPath(sample);
    QVERIFY(WaitIdle(*w));
    QVERIFY(c->views().empty());
    for (const QString& p : c->ListedPaths()) {
      QVERIFY2(p.startsWith(QDir::cleanPath(sample) + QLatin1Char('/')), qPrintable(p));
    }

    // A single HLO file: nothing listed, and the dock says why.
    QVERIFY(WaitLoaded(c->OpenArtifact(c->ListedPaths().value(0))) || c->ListedPaths().empty());
    const QString single = QDir(dump_).filePath(
        QStringLiteral("module_%1.jit_f.cpu_after_optimizations.txt").arg(module_id_));
    QVERIFY(QFileInfo::exists(single));
    w->OpenPath(single);
    QVERIFY(WaitIdle(*w));
    QVERIFY(w->current_module() != nullptr);
    QVERIFY(c->ListedPaths().isEmpty());
    QCOMPARE(c->list_model()->rowCount(), 0);
    QVERIFY(c->views().empty());
    QVERIFY2(c->message().contains(QStringLiteral("single file")), qPrintable(c->message()));
    QVERIFY(!c->tabs()->tabBar()->isVisible());
  }

  // The largest corpus module as a dump with 20 MB of LLVM IR and a buffer assignment naming
  // its instructions: opening both, their links, searching, scrolling, switching between them,
  // following a link and closing one never block the UI thread for 100 ms.
  void largestModuleStaysResponsive() {
    const QString largest = LargestCorpusFile();
    if (largest.isEmpty()) QSKIP("corpus not found at " HLOWB_CORPUS_DIR);
    std::shared_ptr<const Module> module = ParseFile(largest);
    QVERIFY2(module != nullptr, qPrintable(largest));
    const QString dump = dir_.filePath(QStringLiteral("large"));
    QVERIFY(QDir().mkpath(dump));
    const QString prefix = dump + QStringLiteral("/module_0000.large.");
    QVERIFY(QFile::copy(largest, prefix + QStringLiteral("after_optimizations.txt")));
    std::vector<std::string> names;
    for (const auto& comp : module->computations()) {
      for (const Instruction* i : comp->instructions()) names.push_back(i->name());
    }
    QVERIFY(names.size() > 1000);
    QByteArray ir;
    ir.reserve(21 << 20);
    qint64 functions = 0;
    for (size_t k = 0; ir.size() < (20 << 20); ++k) {
      QByteArray name = QByteArray::fromStdString(names[k % names.size()]);
      for (char& ch : name) {
        if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
      }
      ir += "define void @" + name + "(ptr noalias %0) #0 {\n";
      for (int v = 0; v < 8; ++v) {
        ir += "  %v" + QByteArray::number(v + 1) + " = fadd float %v" + QByteArray::number(v) +
              ", 1.000000e+00\n";
      }
      ir += "  ret void\n}\n\n";
      ++functions;
    }
    const QString ll = prefix + QStringLiteral("large_kernel_module.ir-with-opt.ll");
    QVERIFY(WriteBytes(ll, ir));
    QByteArray buffers;
    for (size_t k = 0; k < names.size(); ++k) {
      buffers += "allocation " + QByteArray::number(static_cast<qulonglong>(k)) +
                 ": size 4, output shape is |f32[]|, maybe-live-out:\n value: <" +
                 QByteArray::number(static_cast<qulonglong>(k)) + " " +
                 QByteArray::fromStdString(names[k]) + " @0> (size=4,offset=0): f32[]\n";
    }
    const QString ba = prefix + QStringLiteral("after_optimizations-buffer-assignment.txt");
    QVERIFY(WriteBytes(ba, buffers));

    auto w = NewWindow();
    w->OpenPath(dump);
    QVERIFY(WaitIdle(*w, 300000));
    QVERIFY(w->current_module() != nullptr);
    ArtifactsController* c = w->artifacts_controller();
    QCOMPARE(Sorted(c->ListedPaths()), Sorted({QDir::cleanPath(ba), QDir::cleanPath(ll)}));

    hlowb::testing::LatencyProbe latency;
    latency.SetPhase("open the LLVM IR");
    latency.Start();
    QElapsedTimer timer;
    timer.start();
    ArtifactView* view = c->OpenArtifact(ll);
    QVERIFY(WaitLoaded(view));
    const qint64 load_ms = timer.elapsed();
    QVERIFY2(!view->HasError(), qPrintable(view->Note()));
    latency.SetPhase("links of the LLVM IR");
    QVERIFY(QTest::qWaitFor([&] { return !view->LinkedNamesInView().empty(); }, kTimeoutMs));
    latency.SetPhase("scroll the LLVM IR");
    QScrollBar* v = view->textArea()->verticalScrollBar();
    for (int i = 0; i <= 10; ++i) {
      v->setValue(v->maximum() / 10 * i);
      QTest::qWait(20);
    }
    latency.SetPhase("search the LLVM IR");
    view->searchField()->setFocus();
    QTest::keyClicks(view->searchField(), QStringLiteral("DEFINE VOID"));
    QVERIFY(QTest::qWaitFor([&] { return !view->IsSearching(); }, kTimeoutMs));
    QCOMPARE(view->MatchCount(), static_cast<int>(functions));
    latency.SetPhase("open the buffer assignment");
    ArtifactView* buffer_view = c->OpenArtifact(ba);
    QVERIFY(WaitLoaded(buffer_view));
    QVERIFY(QTest::qWaitFor([&] { return !buffer_view->LinkedNamesInView().empty(); },
                            kTimeoutMs));
    latency.SetPhase("switch artifact tabs");
    for (int i = 0; i < 6; ++i) {
      c->tabs()->setCurrentIndex(1 + i % 2);
      QTest::qWait(20);
    }
    latency.SetPhase("follow a link");
    const std::string target = names[names.size() / 2];
    const int at = static_cast<int>(
        buffer_view->text().indexOf(QStringLiteral(" %1 @0>").arg(QString::fromStdString(target))));
    QVERIFY(at > 0);
    c->tabs()->setCurrentWidget(buffer_view);
    QTest::qWait(20);
    QCOMPARE(ClickAt(buffer_view, at + 1).value(1), QString::fromStdString(target));
    QVERIFY(WaitIdle(*w, kTimeoutMs));
    QVERIFY(w->graph_view()->selected() != nullptr);
    QCOMPARE(w->graph_view()->selected()->name(), target);
    latency.SetPhase("close an artifact tab");
    c->CloseTab(c->tabs()->indexOf(buffer_view));
    QTest::qWait(50);
    latency.Stop();
    // Back to the HLO tab (measured apart: what it costs is a paint of the HLO text view).
    hlowb::testing::LatencyProbe hlo_tab;
    hlo_tab.SetPhase("show the HLO tab");
    hlo_tab.Start();
    for (int i = 0; i < 4; ++i) {
      c->tabs()->setCurrentIndex(i % 2);
      QTest::qWait(50);
    }
    hlo_tab.SetPhase("close the last artifact tab");
    c->CloseAllTabs();
    QTest::qWait(50);
    hlo_tab.Stop();
    QVERIFY(!c->tabs()->tabBar()->isVisible());

    qInfo("%s as a dump: %lld instructions, %lld MB of LLVM IR loaded in %lld ms; max event-loop "
          "gap %lld ms (%s), UI-thread CPU in a gap at most %.0f ms (%s); showing the HLO tab: "
          "%lld ms (%s), CPU %.0f ms; load %.1f",
          qPrintable(largest), static_cast<long long>(module->instruction_count()),
          static_cast<long long>(ir.size() >> 20), static_cast<long long>(load_ms),
          static_cast<long long>(latency.max_gap()), qPrintable(latency.worst()),
          latency.max_cpu_gap(), qPrintable(latency.worst_cpu()),
          static_cast<long long>(hlo_tab.max_gap()), qPrintable(hlo_tab.worst()),
          hlo_tab.max_cpu_gap(), hlowb::testing::SystemLoad());
    for (const hlowb::testing::LatencyProbe* probe : {&latency, &hlo_tab}) {
      QVERIFY2(probe->max_cpu_gap() < 100,
               qPrintable(QStringLiteral("the UI thread worked %1 ms without returning to the "
                                         "event loop during %2")
                              .arg(probe->max_cpu_gap())
                              .arg(probe->worst_cpu())));
      if (probe->max_gap() >= 100 && hlowb::testing::LatencyProbe::MachineOverloaded()) {
        qWarning("event-loop gap of %lld ms on an overloaded machine: wall-clock check skipped",
                 static_cast<long long>(probe->max_gap()));
      } else {
        QVERIFY2(probe->max_gap() < 100,
                 qPrintable(QStringLiteral("UI thread blocked for %1 ms during %2")
                                .arg(probe->max_gap())
                                .arg(probe->worst())));
      }
    }
  }
};

QTEST_MAIN(ArtifactsDockTest)
#include "artifacts_dock_test.moc"
