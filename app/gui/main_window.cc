#include "app/gui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QDialog>
#include <QDir>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QKeySequence>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QScrollArea>
#include <QSettings>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStackedWidget>
#include <QThreadPool>
#include <QHBoxLayout>
#include <QFrame>
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QTableWidget>
#include <QTimer>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <cctype>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "app/gui/keyboard_shortcuts.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_diff_view.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/history_panel.h"
#include "viewer/widgets/properties_panel.h"
#include "viewer/widgets/replay_panel.h"
#include "core/text/printer.h"
#include "core/analysis/diff.h"
#include "core/analysis/timeline.h"
#include "core/ir/opcode.h"
#include "core/support/file_util.h"

namespace hlowb::gui {
namespace {

constexpr int kMaxRecent = 10;
constexpr char kRecentKey[] = "recentFiles";

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Sorts by the models' numeric sort key where they give one, else by the display text.
class ModulesProxy : public QSortFilterProxyModel {
 public:
  using QSortFilterProxyModel::QSortFilterProxyModel;

 protected:
  bool lessThan(const QModelIndex& a, const QModelIndex& b) const override {
    QVariant ka = a.data(viewer::kSortRole);
    QVariant kb = b.data(viewer::kSortRole);
    if (ka.isValid() && kb.isValid()) {
      return QVariant::compare(ka, kb) == QPartialOrdering::Less;
    }
    return QSortFilterProxyModel::lessThan(a, b);
  }
};

QTableView* MakeTable(QWidget* parent) {
  auto* view = new QTableView(parent);
  view->setSelectionBehavior(QAbstractItemView::SelectRows);
  view->setSelectionMode(QAbstractItemView::SingleSelection);
  view->setEditTriggers(QAbstractItemView::NoEditTriggers);
  view->setAlternatingRowColors(true);
  view->setWordWrap(false);
  view->verticalHeader()->hide();
  view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 6);
  view->horizontalHeader()->setStretchLastSection(true);
  view->horizontalHeader()->setHighlightSections(false);
  return view;
}

// Whether `target` is `from` or reachable from it through called computations.
bool Reaches(const Computation* from, const Computation* target) {
  if (!from || !target) return false;
  std::set<const Computation*> seen;
  std::vector<const Computation*> work = {from};
  while (!work.empty()) {
    const Computation* c = work.back();
    work.pop_back();
    if (c == target) return true;
    if (!seen.insert(c).second) continue;
    for (const Instruction* i : c->instructions()) {
      for (const Computation* called : i->called_computations()) work.push_back(called);
    }
  }
  return false;
}

QPalette DarkPalette() {
  QPalette p;
  const QColor window(45, 45, 48), base(30, 30, 32), text(220, 220, 220), disabled(127, 127, 127);
  p.setColor(QPalette::Window, window);
  p.setColor(QPalette::WindowText, text);
  p.setColor(QPalette::Base, base);
  p.setColor(QPalette::AlternateBase, QColor(40, 40, 43));
  p.setColor(QPalette::ToolTipBase, QColor(60, 60, 64));
  p.setColor(QPalette::ToolTipText, text);
  p.setColor(QPalette::PlaceholderText, disabled);
  p.setColor(QPalette::Text, text);
  p.setColor(QPalette::Button, QColor(53, 53, 56));
  p.setColor(QPalette::ButtonText, text);
  p.setColor(QPalette::BrightText, QColor(255, 90, 90));
  p.setColor(QPalette::Light, QColor(70, 70, 74));
  p.setColor(QPalette::Midlight, QColor(60, 60, 64));
  p.setColor(QPalette::Mid, QColor(40, 40, 43));
  p.setColor(QPalette::Dark, QColor(25, 25, 27));
  p.setColor(QPalette::Shadow, QColor(10, 10, 10));
  p.setColor(QPalette::Link, QColor(100, 170, 255));
  p.setColor(QPalette::LinkVisited, QColor(170, 130, 255));
  p.setColor(QPalette::Highlight, QColor(42, 110, 190));
  p.setColor(QPalette::HighlightedText, Qt::white);
  for (QPalette::ColorRole role : {QPalette::WindowText, QPalette::Text, QPalette::ButtonText}) {
    p.setColor(QPalette::Disabled, role, disabled);
  }
  return p;
}

}  // namespace

void ApplyPalette(const QString& theme) {
  // A palette with nothing set resolves to the platform's, which tells light from dark.
  QApplication::setPalette(QPalette());
  const QPalette system = QApplication::palette();
  const bool dark = theme == QLatin1String("dark") ||
                    (theme != QLatin1String("light") &&
                     system.color(QPalette::Window).lightness() < 128);
  QApplication::setPalette(dark ? DarkPalette() : QApplication::style()->standardPalette());
}

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("MainWindow"));
  setWindowTitle(tr("HLO Workbench"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);

  loader_ = new Loader(this);
  graph_ = new viewer::GraphView;
  graph_->setObjectName(QStringLiteral("graphView"));
  text_ = new viewer::HloTextView;
  text_->setObjectName(QStringLiteral("textView"));
  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->setObjectName(QStringLiteral("centralSplitter"));
  splitter_->addWidget(graph_);
  // The text pane: the text view, or while comparing side by side the two-sided diff.
  text_stack_ = new QStackedWidget;
  text_stack_->setObjectName(QStringLiteral("textStack"));
  text_stack_->addWidget(text_);
  diff_view_ = new viewer::HloDiffView;
  diff_view_->setObjectName(QStringLiteral("diffView"));
  text_stack_->addWidget(diff_view_);
  splitter_->addWidget(text_stack_);
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setChildrenCollapsible(false);
  // The diff bar: what the shown state was compared with and the counts by kind.
  diff_bar_ = new QFrame;
  diff_bar_->setObjectName(QStringLiteral("diffBar"));
  diff_bar_->setFrameShape(QFrame::StyledPanel);
  auto* diff_layout = new QHBoxLayout(diff_bar_);
  diff_layout->setContentsMargins(6, 2, 6, 2);
  diff_summary_ = new QLabel;
  diff_summary_->setObjectName(QStringLiteral("diffSummary"));
  diff_summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long summary wraps instead of widening the central area (which would squeeze the docks
  // the user sized, or widen the window past the screen).
  diff_summary_->setWordWrap(true);
  diff_summary_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  diff_summary_->setMinimumWidth(120);
  auto* diff_close = new QToolButton;
  diff_close->setText(tr("Clear"));
  diff_close->setToolTip(tr("Stop comparing"));
  connect(diff_close, &QToolButton::clicked, this, [this] { ClearDiff(); });
  diff_layout->addWidget(diff_summary_, 1);
  diff_layout->addWidget(diff_close);
  diff_bar_->hide();
  auto* central = new QWidget;
  auto* central_layout = new QVBoxLayout(central);
  central_layout->setContentsMargins(0, 0, 0, 0);
  central_layout->setSpacing(0);
  central_layout->addWidget(diff_bar_);
  central_layout->addWidget(splitter_, 1);
  setCentralWidget(central);

  BuildDocks();
  BuildActions();
  BuildStatusBar();
  BuildCompareUi();

  connect(loader_, &Loader::progress, this, [this](qint64 done, qint64 total, const QString& what) {
    progress_->setRange(0, total > 0 ? static_cast<int>(total) : 0);
    progress_->setValue(static_cast<int>(std::min<qint64>(done, std::max<qint64>(total, 0))));
    progress_->setToolTip(what);
    progress_->setFormat(total > 0 ? tr("%v/%m states") : QString());
  });
  connect(loader_, &Loader::busyChanged, this, [this](bool busy) {
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    CheckIdle();
  });
  connect(loader_, &Loader::indexReady, this, &MainWindow::OnIndexReady);
  connect(loader_, &Loader::indexFailed, this, &MainWindow::OnIndexFailed);
  connect(loader_, &Loader::fileOpened, this, &MainWindow::OnFileOpened);
  connect(loader_, &Loader::stateLoaded, this, &MainWindow::OnStateLoaded);
  connect(loader_, &Loader::statesFinished, this, [this](bool cancelled) {
    if (cancelled) statusBar()->showMessage(tr("Loading cancelled"), 5000);
    timeline_view_->resizeColumnsToContents();
    emit statesLoaded();
    CheckIdle();
  });

  connect(graph_, &viewer::GraphView::instructionSelected, this, &MainWindow::OnGraphSelected);
  connect(graph_, &viewer::GraphView::layoutFinished, this, [this](int, double) {
    if (pending_graph_select_ && !graph_->IsLayoutRunning() &&
        graph_->computation() == computation_) {
      const Instruction* select = pending_graph_select_;
      pending_graph_select_ = nullptr;
      syncing_ = true;
      graph_->SelectInstruction(select);
      syncing_ = false;
    }
    CheckIdle();
  });
  connect(text_, &viewer::HloTextView::textLoaded, this, [this] { CheckIdle(); });
  connect(graph_, &viewer::GraphView::exportFinished, this,
          [this](const QString& path, const QString& error) {
            if (error.isEmpty()) {
              statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
            } else {
              statusBar()->clearMessage();
              QMessageBox::warning(this, tr("Export failed"), error);
            }
          });
  connect(graph_, &viewer::GraphView::layoutFailed, this, [this](const QString& message) {
    pending_graph_select_ = nullptr;
    statusBar()->showMessage(tr("Layout failed: %1").arg(message), 10000);
    CheckIdle();
  });
  connect(graph_, &viewer::GraphView::statusMessage, this,
          [this](const QString& message) { statusBar()->showMessage(message, 5000); });
  connect(text_, &viewer::HloTextView::instructionActivated, this, &MainWindow::OnTextActivated);
  connect(text_, &viewer::HloTextView::computationActivated, this,
          [this](const hlowb::Computation* computation) {
            if (syncing_ || !computation || !module_) return;
            computation_name_ = Q(computation->name());
            const Instruction* keep = nullptr;
            if (!selected_name_.isEmpty()) {
              keep = computation->FindInstruction(selected_name_.toStdString());
            }
            ShowComputation(computation, keep);
          });
  connect(properties_, &viewer::PropertiesPanel::instructionActivated, this,
          &MainWindow::OnPropertiesActivated);

  RestoreSettings();
  if (qobject_cast<QApplication*>(QCoreApplication::instance())) ApplyPalette(theme_);
  UpdateTitle();
}

MainWindow::~MainWindow() {
  // Stop the workers before the views (and the modules they show) go away.
  delete loader_;
  loader_ = nullptr;
  // Child widgets outlive the members below: their signals must not reach them while torn down.
  for (QObject* o : std::initializer_list<QObject*>{history_dock_, history_, diff_view_,
                                                    side_by_side_button_}) {
    if (o != nullptr) QObject::disconnect(o, nullptr, this, nullptr);
  }
  if (history_latest_) *history_latest_ = ~uint64_t{0};
  if (history_pool_ != nullptr) {
    history_pool_->clear();
    history_pool_->waitForDone();
  }
}

void MainWindow::BuildDocks() {
  // Modules.
  auto* modules_widget = new QWidget;
  auto* modules_layout = new QVBoxLayout(modules_widget);
  modules_layout->setContentsMargins(2, 2, 2, 2);
  modules_layout->setSpacing(2);
  modules_filter_ = new QLineEdit;
  modules_filter_->setObjectName(QStringLiteral("modulesFilter"));
  modules_filter_->setPlaceholderText(tr("Filter modules"));
  modules_filter_->setClearButtonEnabled(true);
  modules_model_ = new viewer::ModulesModel(this);
  modules_proxy_ = new ModulesProxy(this);
  modules_proxy_->setSourceModel(modules_model_);
  modules_proxy_->setFilterKeyColumn(-1);
  modules_proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  modules_proxy_->setSortCaseSensitivity(Qt::CaseInsensitive);
  modules_view_ = MakeTable(modules_widget);
  modules_view_->setObjectName(QStringLiteral("modulesView"));
  modules_view_->setModel(modules_proxy_);
  modules_view_->setSortingEnabled(true);
  modules_view_->sortByColumn(viewer::ModulesModel::kId, Qt::AscendingOrder);
  modules_layout->addWidget(modules_filter_);
  modules_layout->addWidget(modules_view_);
  connect(modules_filter_, &QLineEdit::textChanged, modules_proxy_,
          &QSortFilterProxyModel::setFilterFixedString);
  connect(modules_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { OnModuleActivated(current); });

  // Pass timeline.
  auto* timeline_widget = new QWidget;
  auto* timeline_layout = new QVBoxLayout(timeline_widget);
  timeline_layout->setContentsMargins(2, 2, 2, 2);
  timeline_layout->setSpacing(2);
  hide_unchanged_ = new QCheckBox(tr("Hide unchanged passes"));
  hide_unchanged_->setObjectName(QStringLiteral("hideUnchanged"));
  timeline_model_ = new viewer::TimelineModel(this);
  timeline_filter_ = new viewer::TimelineFilterModel(this);
  timeline_filter_->setSourceModel(timeline_model_);
  timeline_view_ = MakeTable(timeline_widget);
  timeline_view_->setObjectName(QStringLiteral("timelineView"));
  timeline_view_->setModel(timeline_filter_);
  timeline_view_->setToolTip(tr("Up/Down steps through the passes; bold passes changed the "
                                "module, dimmed ones did not"));
  timeline_layout->addWidget(hide_unchanged_);
  timeline_layout->addWidget(timeline_view_);
  connect(hide_unchanged_, &QCheckBox::toggled, this, [this](bool hide) {
    // The shown state stays current: it stays listed even when it is an unchanged pass, and
    // rows leaving the filter must not move the views to a neighbour.
    const int keep = shown_row_ >= 0 ? shown_row_ : wanted_row_;
    const bool was_syncing = syncing_;
    syncing_ = true;
    timeline_filter_->SetKeptRow(keep);
    timeline_filter_->SetHideUnchanged(hide);
    syncing_ = was_syncing;
    QSettings().setValue(QStringLiteral("view/hideUnchanged"), hide);
    if (keep >= 0) SelectTimelineRow(keep);
  });
  connect(timeline_view_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) { OnTimelineCurrentChanged(current); });

  // Computations of the current state.
  computations_model_ = new viewer::ComputationsModel(this);
  computations_view_ = MakeTable(nullptr);
  computations_view_->setObjectName(QStringLiteral("computationsView"));
  computations_view_->setModel(computations_model_);
  connect(computations_view_, &QTableView::activated, this, &MainWindow::OnComputationActivated);
  connect(computations_view_, &QTableView::clicked, this, &MainWindow::OnComputationActivated);

  properties_ = new viewer::PropertiesPanel;
  properties_->setObjectName(QStringLiteral("propertiesPanel"));

  BuildReplay();  // main_window_replay.cc

  auto dock = [this](const QString& title, const QString& name, QWidget* widget,
                     Qt::DockWidgetArea area) {
    auto* d = new QDockWidget(title, this);
    d->setObjectName(name);
    d->setWidget(widget);
    addDockWidget(area, d);
    return d;
  };
  QDockWidget* modules = dock(tr("Modules"), QStringLiteral("modulesDock"), modules_widget,
                              Qt::LeftDockWidgetArea);
  QDockWidget* timeline = dock(tr("Pass Timeline"), QStringLiteral("timelineDock"),
                               timeline_widget, Qt::LeftDockWidgetArea);
  QDockWidget* computations = dock(tr("Computations"), QStringLiteral("computationsDock"),
                                   computations_view_, Qt::RightDockWidgetArea);
  QDockWidget* properties = dock(tr("Properties"), QStringLiteral("propertiesDock"), properties_,
                                 Qt::RightDockWidgetArea);
  // The replay panel is tall (settings above result tabs); it scrolls rather than forcing the
  // window taller than a laptop screen.
  auto* replay_scroll = new QScrollArea;
  replay_scroll->setObjectName(QStringLiteral("replayScroll"));
  replay_scroll->setWidgetResizable(true);
  replay_scroll->setFrameShape(QFrame::NoFrame);
  replay_scroll->setWidget(replay_panel_);
  QDockWidget* replay = dock(tr("Replay"), QStringLiteral("replayDock"), replay_scroll,
                             Qt::RightDockWidgetArea);
  splitDockWidget(modules, timeline, Qt::Vertical);
  splitDockWidget(computations, properties, Qt::Vertical);
  // Tabified after the split: splitting moves Properties out of a tab group it is already in,
  // which would leave Replay stacked below it.
  tabifyDockWidget(properties, replay);
  properties->raise();
  resizeDocks({modules, timeline}, {1, 2}, Qt::Vertical);
  resizeDocks({computations, properties}, {1, 2}, Qt::Vertical);
  resizeDocks({modules, computations}, {330, 330}, Qt::Horizontal);
  view_menu_ = new QMenu(tr("&View"), this);
  for (QDockWidget* d : {modules, timeline, computations, properties, replay}) {
    view_menu_->addAction(d->toggleViewAction());
  }
}

void MainWindow::BuildActions() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open_file = file->addAction(tr("&Open File…"), this, [this] {
    QSettings settings;
    QString dir = settings.value(QStringLiteral("lastOpenDir")).toString();
    QString path = QFileDialog::getOpenFileName(
        this, tr("Open HLO File"), dir,
        tr("HLO files (*.txt *.hlo *.pb *.pbtxt *.textproto *.gz);;All files (*)"));
    if (path.isEmpty()) return;
    settings.setValue(QStringLiteral("lastOpenDir"), QFileInfo(path).absolutePath());
    OpenPath(path);
  });
  open_file->setShortcut(QKeySequence::Open);
  open_file->setIcon(style()->standardIcon(QStyle::SP_DialogOpenButton));
  QAction* open_dir = file->addAction(tr("Open &Dump Directory…"), this, [this] {
    QSettings settings;
    QString dir = QFileDialog::getExistingDirectory(
        this, tr("Open Dump Directory"), settings.value(QStringLiteral("lastOpenDir")).toString());
    if (dir.isEmpty()) return;
    settings.setValue(QStringLiteral("lastOpenDir"), dir);
    OpenPath(dir);
  });
  open_dir->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_O));
  open_dir->setIcon(style()->standardIcon(QStyle::SP_DirOpenIcon));
  recent_menu_ = file->addMenu(tr("Open &Recent"));
  RebuildRecentMenu();
  BuildCaptureMenu(file);  // main_window_capture.cc
  file->addSeparator();
  file->addAction(tr("Export View as &SVG…"), this,
                  [this] { ExportWithDialog(QStringLiteral("svg"), tr("SVG (*.svg)")); });
  file->addAction(tr("Export View as &PNG…"), this,
                  [this] { ExportWithDialog(QStringLiteral("png"), tr("PNG (*.png)")); });
  file->addAction(tr("Export View as &DOT…"), this,
                  [this] { ExportWithDialog(QStringLiteral("dot"), tr("Graphviz (*.dot)")); });
  file->addSeparator();
  QAction* cancel = file->addAction(tr("&Cancel Loading"), this, [this] { CancelLoading(); });
  cancel->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_Period));
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  quit->setMenuRole(QAction::QuitRole);

  // View: docks, timeline filter, graph controls, theme.
  menuBar()->addMenu(view_menu_);
  QAction* compare = view_menu_->addAction(tr("&Compare with Previous Step"), this,
                                           [this] { CompareWithPreviousStep(); });
  compare->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D));
  compare->setShortcutContext(Qt::WindowShortcut);
  view_menu_->addAction(tr("Compare with &before_optimizations"), this,
                        [this] { CompareWithBeforeOptimizations(); });
  QAction* next_change =
      view_menu_->addAction(tr("Ne&xt Change"), this, [this] { StepChange(false); });
  next_change->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketRight));
  QAction* previous_change =
      view_menu_->addAction(tr("Pre&vious Change"), this, [this] { StepChange(true); });
  previous_change->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_BracketLeft));
  // A fusion pass adds hundreds of lines inside fused computations: these walks skip them.
  QAction* next_top = view_menu_->addAction(tr("Next Changed &Top-Level Instruction"), this,
                                            [this] { StepChange(false, true); });
  next_top->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_BracketRight));
  QAction* previous_top = view_menu_->addAction(tr("Previous Changed Top-Level Instruction"), this,
                                                [this] { StepChange(true, true); });
  previous_top->setShortcut(QKeySequence(Qt::CTRL | Qt::ALT | Qt::Key_BracketLeft));
  view_menu_->addSeparator();
  QAction* hide = view_menu_->addAction(tr("&Hide Unchanged Passes"));
  hide->setCheckable(true);
  connect(hide, &QAction::toggled, hide_unchanged_, &QCheckBox::setChecked);
  connect(hide_unchanged_, &QCheckBox::toggled, hide, &QAction::setChecked);
  view_menu_->addSeparator();
  QAction* zoom_in = view_menu_->addAction(tr("Zoom &In"), this, [this] { graph_->ZoomIn(); });
  zoom_in->setShortcut(QKeySequence::ZoomIn);
  QAction* zoom_out = view_menu_->addAction(tr("Zoom &Out"), this, [this] { graph_->ZoomOut(); });
  zoom_out->setShortcut(QKeySequence::ZoomOut);
  QAction* fit = view_menu_->addAction(tr("&Fit to Window"), this, [this] { graph_->FitToView(); });
  fit->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_0));
  QAction* whole = view_menu_->addAction(tr("Show &Whole Graph"), this,
                                         [this] { graph_->ShowWholeGraph(); });
  // Large computations as an overview of op_name scope boxes that expand in place.
  QAction* group_scopes = view_menu_->addAction(tr("&Group by op_name Scope"));
  group_scopes->setObjectName(QStringLiteral("groupByScope"));
  group_scopes->setCheckable(true);
  group_scopes->setChecked(graph_->group_by_scope());
  group_scopes->setToolTip(
      tr("Draw computations of more than %1 nodes as boxes of their op_name scopes")
          .arg(graph_->group_min_nodes()));
  connect(group_scopes, &QAction::toggled, this, [this](bool on) { graph_->SetGroupByScope(on); });
  // Nodes filled by their sharding= (replicated, maximal, each tile grid, manual, ...), with a
  // legend under the graph.
  QAction* by_sharding = view_menu_->addAction(tr("Colour by &Sharding"));
  by_sharding->setObjectName(QStringLiteral("colorBySharding"));
  by_sharding->setCheckable(true);
  by_sharding->setChecked(graph_->color_by_sharding());
  by_sharding->setToolTip(tr("Fill each node by its sharding; a legend under the graph says "
                             "what each colour means"));
  connect(by_sharding, &QAction::toggled, this,
          [this](bool on) { graph_->SetColorBySharding(on); });
  view_menu_->addSeparator();
  QMenu* theme = view_menu_->addMenu(tr("&Theme"));
  auto* themes = new QActionGroup(this);
  const char* names[3] = {"system", "light", "dark"};
  const QString labels[3] = {tr("Follow &System"), tr("&Light"), tr("&Dark")};
  for (int i = 0; i < 3; ++i) {
    QAction* a = theme->addAction(labels[i]);
    a->setCheckable(true);
    a->setData(QString::fromLatin1(names[i]));
    themes->addAction(a);
    theme_actions_[i] = a;
    connect(a, &QAction::triggered, this, [this, a] {
      theme_ = a->data().toString();
      QSettings().setValue(QStringLiteral("view/theme"), theme_);
      ApplyTheme();
    });
  }

  // Navigate: search and passes.
  QMenu* nav = menuBar()->addMenu(tr("&Navigate"));
  QAction* find = nav->addAction(tr("&Find…"), this, [this] { ShowSearchBar(); });
  find->setShortcut(QKeySequence::Find);
  QAction* next = nav->addAction(tr("Find &Next"), this,
                                 [this] { Find(search_edit_->text(), false); });
  next->setShortcut(QKeySequence::FindNext);
  QAction* previous = nav->addAction(tr("Find &Previous"), this,
                                     [this] { Find(search_edit_->text(), true); });
  previous->setShortcut(QKeySequence::FindPrevious);
  nav->addSeparator();
  auto step = [this](int delta) {
    QModelIndex current = timeline_view_->currentIndex();
    int row = current.isValid() ? current.row() + delta : 0;
    if (row < 0 || row >= timeline_filter_->rowCount()) return;
    timeline_view_->setCurrentIndex(timeline_filter_->index(row, 0));
  };
  QAction* prev_pass = nav->addAction(tr("P&revious Pass"), this, [step] { step(-1); });
  prev_pass->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Up));
  QAction* next_pass = nav->addAction(tr("N&ext Pass"), this, [step] { step(1); });
  next_pass->setShortcut(QKeySequence(Qt::ALT | Qt::Key_Down));

  BuildCompileMenu();  // main_window_compile.cc
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  QAction* keys = help->addAction(tr("&Keyboard Shortcuts"), this,
                                  [this] { ShowKeyboardShortcuts(); });
  keys->setShortcut(QKeySequence::HelpContents);
  keys->setObjectName(QStringLiteral("keyboardShortcutsAction"));
  help->addAction(tr("&About HLO Workbench"), this, [this] {
    QMessageBox::about(this, tr("About HLO Workbench"),
                       tr("<b>HLO Workbench</b> %1<br>Browse XLA HLO modules, dump directories "
                          "and compiler passes as graphs and text.")
                           .arg(QCoreApplication::applicationVersion()));
  });

  // Toolbar: open, graph controls, neighborhood radius.
  QToolBar* tools = addToolBar(tr("Main"));
  tools->setObjectName(QStringLiteral("mainToolbar"));
  tools->addAction(open_file);
  tools->addAction(open_dir);
  tools->addSeparator();
  tools->addAction(zoom_in);
  tools->addAction(zoom_out);
  tools->addAction(fit);
  tools->addAction(whole);
  tools->addSeparator();
  tools->addWidget(new QLabel(tr(" Neighborhood radius ")));
  radius_ = new QSpinBox;
  radius_->setObjectName(QStringLiteral("neighborhoodRadius"));
  radius_->setRange(1, 50);
  radius_->setValue(3);
  radius_->setToolTip(tr("Large graphs show the nodes within this many edges of the selection"));
  tools->addWidget(radius_);
  connect(radius_, qOverload<int>(&QSpinBox::valueChanged), this, [this](int radius) {
    graph_->SetNeighborhoodRadius(radius);
    QSettings().setValue(QStringLiteral("view/neighborhoodRadius"), radius);
  });

  // Search bar (Ctrl+F shows it; Enter and F3 go to the next match, Shift+F3 the previous).
  search_bar_ = new QToolBar(tr("Find"));
  search_bar_->setObjectName(QStringLiteral("findToolbar"));
  addToolBar(Qt::BottomToolBarArea, search_bar_);
  search_edit_ = new QLineEdit;
  search_edit_->setObjectName(QStringLiteral("searchEdit"));
  search_edit_->setPlaceholderText(tr("Find by name, opcode, op_name or op_type"));
  search_edit_->setClearButtonEnabled(true);
  search_edit_->setMaximumWidth(420);
  search_bar_->addWidget(new QLabel(tr(" Find: ")));
  search_bar_->addWidget(search_edit_);
  search_count_ = new QLabel;
  search_count_->setObjectName(QStringLiteral("searchCount"));
  search_count_->setContentsMargins(6, 0, 6, 0);
  search_bar_->addWidget(search_count_);
  search_bar_->addAction(style()->standardIcon(QStyle::SP_ArrowUp), tr("Previous"), this,
                         [this] { Find(search_edit_->text(), true); });
  search_bar_->addAction(style()->standardIcon(QStyle::SP_ArrowDown), tr("Next"), this,
                         [this] { Find(search_edit_->text(), false); });
  QAction* close_find = search_bar_->addAction(style()->standardIcon(QStyle::SP_DialogCloseButton),
                                               tr("Close"), search_bar_, &QWidget::hide);
  close_find->setShortcut(QKeySequence(Qt::Key_Escape));
  close_find->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(search_edit_, &QLineEdit::returnPressed, this, [this] {
    Find(search_edit_->text(), QApplication::keyboardModifiers() & Qt::ShiftModifier);
  });
  // A changed query or a closed bar leaves no stale count or highlights behind.
  connect(search_edit_, &QLineEdit::textEdited, this, [this] {
    search_count_->clear();
    HighlightSearch(QString());
  });
  connect(search_bar_, &QToolBar::visibilityChanged, this, [this](bool visible) {
    if (visible) return;
    search_count_->clear();
    HighlightSearch(QString());
  });
  search_bar_->hide();
}

void MainWindow::BuildStatusBar() {
  state_label_ = new QLabel;
  state_label_->setObjectName(QStringLiteral("stateLabel"));
  statusBar()->addPermanentWidget(state_label_);
  progress_ = new QProgressBar;
  progress_->setObjectName(QStringLiteral("loadProgress"));
  progress_->setMaximumWidth(220);
  progress_->setTextVisible(true);
  progress_->hide();
  statusBar()->addPermanentWidget(progress_);
  cancel_ = new QToolButton;
  cancel_->setObjectName(QStringLiteral("cancelLoading"));
  cancel_->setText(tr("Cancel"));
  cancel_->setToolTip(tr("Stop loading (what is loaded stays browsable)"));
  cancel_->setAutoRaise(true);
  cancel_->hide();
  connect(cancel_, &QToolButton::clicked, this, [this] { CancelLoading(); });
  statusBar()->addPermanentWidget(cancel_);
}

void MainWindow::RestoreSettings() {
  QSettings settings;
  if (!restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray())) {
    resize(1440, 900);
  }
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  splitter_->restoreState(settings.value(QStringLiteral("window/splitter")).toByteArray());
  if (splitter_->sizes().value(0) == 0 || splitter_->sizes().value(1) == 0) {
    splitter_->setSizes({600, 400});
  }
  hide_unchanged_->setChecked(settings.value(QStringLiteral("view/hideUnchanged"), false).toBool());
  timeline_filter_->SetHideUnchanged(hide_unchanged_->isChecked());
  radius_->setValue(settings.value(QStringLiteral("view/neighborhoodRadius"), 3).toInt());
  graph_->SetNeighborhoodRadius(radius_->value());
  if (auto* group = findChild<QAction*>(QStringLiteral("groupByScope"))) {
    group->setChecked(settings.value(QStringLiteral("view/groupByScope"), true).toBool());
  }
  theme_ = settings.value(QStringLiteral("view/theme"), QStringLiteral("system")).toString();
  for (QAction* a : theme_actions_) a->setChecked(a->data().toString() == theme_);
  search_bar_->hide();
}

void MainWindow::SaveSettings() {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  settings.setValue(QStringLiteral("window/splitter"), splitter_->saveState());
  settings.setValue(QStringLiteral("view/hideUnchanged"), hide_unchanged_->isChecked());
  settings.setValue(QStringLiteral("view/neighborhoodRadius"), radius_->value());
  settings.setValue(QStringLiteral("view/groupByScope"), graph_->group_by_scope());
  settings.setValue(QStringLiteral("view/theme"), theme_);
}

void MainWindow::ApplyTheme() {
  for (QAction* a : theme_actions_) a->setChecked(a->data().toString() == theme_);
  ApplyPalette(theme_);
}

QStringList MainWindow::recent_files() const {
  return QSettings().value(QLatin1String(kRecentKey)).toStringList();
}

void MainWindow::AddRecent(const QString& path) {
  QStringList recent = recent_files();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > kMaxRecent) recent.removeLast();
  QSettings().setValue(QLatin1String(kRecentKey), recent);
  RebuildRecentMenu();
}

QDialog* MainWindow::ShowKeyboardShortcuts() {
  if (shortcuts_dialog_ == nullptr) shortcuts_dialog_ = MakeKeyboardShortcutsDialog(this);
  shortcuts_dialog_->show();
  shortcuts_dialog_->raise();
  shortcuts_dialog_->activateWindow();
  return shortcuts_dialog_;
}

void MainWindow::RebuildRecentMenu() {
  recent_menu_->clear();
  const QStringList recent = recent_files();
  for (int i = 0; i < recent.size(); ++i) {
    const QString path = recent[i];
    // The full path: dumps are folders of one name ("xla_dump") in many places. An ampersand in
    // it is doubled so that it is shown rather than taken for a mnemonic.
    QString shown = QDir::toNativeSeparators(path);
    shown.replace(QLatin1Char('&'), QLatin1String("&&"));
    QString label = QStringLiteral("&%1 %2").arg(i + 1).arg(shown);
    QAction* a = recent_menu_->addAction(label, this, [this, path] { OpenPath(path); });
    a->setToolTip(path);
    a->setStatusTip(path);
  }
  if (!recent.isEmpty()) {
    recent_menu_->addSeparator();
    recent_menu_->addAction(tr("Clear List"), this, [this] {
      QSettings().remove(QLatin1String(kRecentKey));
      RebuildRecentMenu();
    });
  }
  recent_menu_->setEnabled(!recent.isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* event) {
  SaveSettings();
  loader_->Cancel();
  QMainWindow::closeEvent(event);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  const QMimeData* mime = event->mimeData();
  if (mime->hasUrls() && !mime->urls().isEmpty() && mime->urls().first().isLocalFile()) {
    event->acceptProposedAction();
  }
}

void MainWindow::dropEvent(QDropEvent* event) {
  const QList<QUrl> urls = event->mimeData()->urls();
  if (urls.isEmpty() || !urls.first().isLocalFile()) return;
  event->acceptProposedAction();
  OpenPath(urls.first().toLocalFile());
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::ThemeChange && theme_ == QLatin1String("system")) {
    ApplyPalette(theme_);
  }
  QMainWindow::changeEvent(event);
}

// ---------------------------------------------------------------------------------------------
// Opening

void MainWindow::Open(const OpenRequest& request) {
  QFileInfo info(request.path);
  if (request.path.isEmpty() || !info.exists()) {
    const QString message = tr("%1: no such file or directory").arg(request.path);
    statusBar()->showMessage(message, 10000);
    emit openFailed(message);
    return;
  }
  loader_->Cancel();
  // A filter typed for the previous dump would make the next one's module list look empty.
  if (info.absoluteFilePath() != current_path_) modules_filter_->clear();
  // Replay results name the previous document's instructions: they go with it.
  ForgetReplayResults();
  // Forget what was shown; views first, while the modules they show are still alive.
  pending_graph_select_ = nullptr;
  properties_->Clear();
  graph_->Clear();
  text_->Clear();
  computations_model_->SetModule(nullptr);
  timeline_filter_->SetKeptRow(-1);
  timeline_model_->SetEntries({});
  modules_model_->SetIndex(nullptr);
  session_.reset();
  module_index_ = -1;
  states_.clear();
  rows_.clear();
  wanted_row_ = shown_row_ = -1;
  waiting_for_state_ = false;
  module_.reset();
  computation_ = nullptr;
  computation_name_.clear();
  selected_name_.clear();

  current_path_ = info.absoluteFilePath();
  pending_request_ = request;
  pending_request_.path = current_path_;
  was_busy_ = true;
  if (info.isDir()) {
    loader_->IndexDirectory(current_path_);
  } else {
    loader_->OpenFile(current_path_);
  }
  AddRecent(current_path_);
  UpdateTitle();
  UpdateStateLabel();
  statusBar()->showMessage(tr("Opening %1…").arg(current_path_));
}

void MainWindow::CancelLoading() {
  const bool had_index = session_ != nullptr;
  loader_->Cancel();
  waiting_for_state_ = false;
  if (!had_index && !module_) statusBar()->showMessage(tr("Opening cancelled"), 5000);
  // The loader's workers finish their current file and stop; busyChanged follows.
  CheckIdle();
}

void MainWindow::OnIndexReady(std::shared_ptr<DumpSession> session) {
  session_ = std::move(session);
  const DumpIndex& index = session_->index();
  modules_model_->SetIndex(std::shared_ptr<const DumpIndex>(session_, &index));
  modules_view_->resizeColumnsToContents();
  statusBar()->showMessage(tr("%1: %n module(s), %2 files", "", static_cast<int>(index.modules.size()))
                               .arg(current_path_)
                               .arg(index.files.size()),
                           5000);
  emit indexLoaded(true);
  if (index.modules.empty()) {
    statusBar()->showMessage(tr("%1 holds no HLO module dumps").arg(current_path_), 10000);
    CheckIdle();
    return;
  }
  int chosen = 0;
  if (!pending_request_.module.isEmpty()) {
    const DumpModule* m = index.FindModule(pending_request_.module.toStdString());
    if (m) {
      chosen = static_cast<int>(m - index.modules.data());
    } else {
      statusBar()->showMessage(tr("No module '%1'; showing the first").arg(pending_request_.module),
                               10000);
    }
  }
  pending_request_.module.clear();
  ChooseModule(chosen);
}

void MainWindow::OnIndexFailed(const QString& dir, const QString& message) {
  const QString text = tr("Cannot index %1: %2").arg(dir, message);
  statusBar()->showMessage(text, 10000);
  text_->SetErrorText(text, 1, 1, message);
  emit indexLoaded(false);
  emit openFailed(text);
  CheckIdle();
}

void MainWindow::OnFileOpened(const FileResult& result) {
  if (result.status.ok()) {
    if (!pending_request_.select.isEmpty()) selected_name_ = pending_request_.select;
    pending_request_.select.clear();
    ShowModule(result.module, -1);
    QString message = tr("Opened %1 (%2)").arg(QFileInfo(result.path).fileName(), result.format);
    if (!result.warnings.isEmpty()) message += QStringLiteral(" — ") + result.warnings.join("; ");
    statusBar()->showMessage(message, 10000);
  } else {
    const QString diagnostic = Q(std::string(result.status.message()));
    ShowError(result.path, result.raw_text, diagnostic);
    emit stateShown(-1);
    emit openFailed(diagnostic);
  }
  CheckIdle();
}

bool MainWindow::SelectModule(const QString& id_or_name) {
  if (!session_) return false;
  const DumpIndex& index = session_->index();
  const DumpModule* m = index.FindModule(id_or_name.toStdString());
  if (!m) return false;
  ChooseModule(static_cast<int>(m - index.modules.data()));
  return true;
}

void MainWindow::OnModuleActivated(const QModelIndex& proxy_index) {
  if (syncing_ || !session_ || !proxy_index.isValid()) return;
  const DumpModule* m = modules_model_->ModuleAt(modules_proxy_->mapToSource(proxy_index).row());
  if (!m) return;
  int i = static_cast<int>(m - session_->index().modules.data());
  if (i != module_index_) ChooseModule(i);
}

void MainWindow::ChooseModule(int module_index) {
  const DumpIndex& index = session_->index();
  if (module_index < 0 || module_index >= static_cast<int>(index.modules.size())) return;
  const DumpModule& m = index.modules[module_index];
  module_index_ = module_index;

  // Reflect the choice in the modules view.
  syncing_ = true;
  for (int r = 0; r < modules_model_->rowCount(); ++r) {
    if (modules_model_->ModuleAt(r) == &m) {
      QModelIndex p = modules_proxy_->mapFromSource(
          static_cast<QAbstractItemModel*>(modules_model_)->index(r, 0));
      if (p.isValid()) {
        modules_view_->setCurrentIndex(p);
        modules_view_->scrollTo(p);
      }
      break;
    }
  }
  syncing_ = false;

  pending_graph_select_ = nullptr;
  if (replay_dump_module_ != module_index) ForgetReplayResults();  // another module's results
  ClearDiff();
  diff_base_row_ = -1;
  history_keep_.clear();
  properties_->Clear();
  graph_->Clear();
  text_->Clear();
  computations_model_->SetModule(nullptr);
  module_.reset();
  computation_ = nullptr;
  computation_name_.clear();
  selected_name_.clear();
  shown_row_ = -1;

  states_ = index.Timeline(m);
  rows_.assign(states_.size(), RowState{});
  std::vector<viewer::TimelineEntry> entries;
  entries.reserve(states_.size());
  for (const DumpState& s : states_) {
    viewer::TimelineEntry e;
    e.state = s;
    entries.push_back(std::move(e));
  }
  syncing_ = true;
  timeline_filter_->SetKeptRow(-1);
  timeline_model_->SetEntries(std::move(entries));
  timeline_view_->resizeColumnsToContents();
  syncing_ = false;

  int row = 0;
  if (!pending_request_.step.isEmpty()) {
    const int found = FindStepRow(pending_request_.step);
    if (found < 0) {
      statusBar()->showMessage(tr("No state '%1'; showing the first").arg(pending_request_.step),
                               10000);
    } else {
      row = found;
    }
    pending_request_.step.clear();
  }
  if (!pending_request_.select.isEmpty()) {
    selected_name_ = pending_request_.select;
    pending_request_.select.clear();
  }
  std::vector<int> order = {row};
  for (int r = 0; r < static_cast<int>(states_.size()); ++r) {
    if (r != row) order.push_back(r);
  }
  wanted_row_ = row;
  waiting_for_state_ = true;
  loader_->LoadStates(session_, states_, order);
  SelectTimelineRow(row);
  UpdateTitle();
}

int MainWindow::FindStepRow(const QString& step) const {
  int found = -1;
  bool numeric = false;
  const qlonglong number = step.toLongLong(&numeric);
  for (int r = 0; r < static_cast<int>(states_.size()); ++r) {
    const DumpState& s = states_[r];
    if ((numeric && s.stage == StageKind::kPassStep && s.step == number) ||
        (step == QLatin1String("before") && s.stage == StageKind::kBeforeOptimizations) ||
        (step == QLatin1String("after") && s.stage == StageKind::kAfterOptimizations) ||
        (!numeric && Q(s.pass) == step) || Q(s.label) == step) {
      found = r;
      if (step != QLatin1String("after")) break;  // "after": the last after_optimizations
    }
  }
  return found;
}

bool MainWindow::SelectStep(const QString& step) {
  if (!session_ || module_index_ < 0) return false;
  const int row = FindStepRow(step);
  if (row < 0) return false;
  SelectTimelineRow(row);
  return true;
}

void MainWindow::SelectTimelineRow(int row) {
  QModelIndex proxy = timeline_filter_->mapFromSource(timeline_model_->index(row, 0));
  if (proxy.isValid()) {
    syncing_ = true;
    timeline_view_->setCurrentIndex(proxy);
    timeline_view_->scrollTo(proxy);
    syncing_ = false;
  }
  ShowState(row);
}

void MainWindow::OnTimelineCurrentChanged(const QModelIndex& current) {
  if (syncing_ || !current.isValid()) return;
  ShowState(timeline_filter_->mapToSource(current).row());
}

void MainWindow::ShowState(int row) {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return;
  wanted_row_ = row;
  const RowState& rs = rows_[row];
  if (waiting_for_state_ && (rs.module || rs.failed)) statusBar()->clearMessage();  // "Loading…"
  if (rs.module) {
    waiting_for_state_ = false;
    if (row != shown_row_ || rs.module != module_) ShowModule(rs.module, row);
  } else if (rs.failed) {
    waiting_for_state_ = false;
    const DumpIndex& index = session_->index();
    const int file = states_[row].file();
    QString path = file >= 0 ? Q(index.root + "/" + index.files[file].path) : QString();
    shown_row_ = row;
    ShowError(path, rs.raw_text, rs.error);
    emit stateShown(row);
  } else {
    waiting_for_state_ = true;
    statusBar()->showMessage(tr("Loading %1…").arg(Q(states_[row].label)));
    loader_->RequestState(row);
  }
  UpdateTitle();
  UpdateStateLabel();
  CheckIdle();
}

void MainWindow::OnStateLoaded(const StateResult& result) {
  if (result.row < 0 || result.row >= static_cast<int>(rows_.size())) return;
  if (absl::IsCancelled(result.status)) return;  // not loaded; asked for again when needed
  RowState& rs = rows_[result.row];
  if (result.status.ok()) {
    rs.module = result.module;
    rs.fingerprint = result.fingerprint;
    rs.failed = false;
  } else {
    rs.failed = true;
    rs.error = Q(std::string(result.status.message()));
    rs.raw_text = result.raw_text;
  }
  RecomputeTimeline();
  if (result.row == wanted_row_ && (waiting_for_state_ || shown_row_ != wanted_row_)) {
    ShowState(result.row);
  }
  OnHistoryStateLoaded(result.row);
  TryPendingCompare();
  TrimStates();
  CheckIdle();
}

int MainWindow::KeptStateCount() const {
  int n = 0;
  for (const RowState& rs : rows_) n += rs.module != nullptr;
  return n;
}

void MainWindow::TrimStates() {
  if (!session_) return;
  const DumpIndex& index = session_->index();
  auto bytes = [&](int r) -> uint64_t {
    const int f = states_[r].file();
    return f >= 0 && f < static_cast<int>(index.files.size()) ? index.files[f].size : 0;
  };
  // The shown and wanted states and their neighbours always stay (stepping stays instant).
  std::vector<bool> pinned(rows_.size(), false);
  for (int center : {shown_row_, wanted_row_}) {
    for (int r = center - 2; r <= center + 2; ++r) {
      if (center >= 0 && r >= 0 && r < static_cast<int>(rows_.size())) pinned[r] = true;
    }
  }
  std::vector<int> others;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    if (rows_[r].module && !pinned[r]) others.push_back(r);
  }
  std::sort(others.begin(), others.end(),
            [&](int a, int b) { return rows_[a].last_used > rows_[b].last_used; });
  uint64_t kept = 0;
  for (int r : others) {
    if (kept + bytes(r) <= state_budget_) {
      kept += bytes(r);
    } else {
      rows_[r].module.reset();  // the fingerprint stays; parsed again when shown
    }
  }
}

void MainWindow::RecomputeTimeline() {
  // Rows may disappear from the filter as they turn out unchanged; that must not move the
  // views to another state, so the view's current row is restored afterwards.
  const bool was_syncing = syncing_;
  syncing_ = true;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    const viewer::TimelineEntry* old = timeline_model_->EntryAt(r);
    if (!old) continue;
    viewer::TimelineEntry e = *old;
    const RowState& rs = rows_[r];
    e.failed = rs.failed;
    e.changed.reset();
    e.delta.reset();
    e.instruction_count.reset();
    if (rs.fingerprint) {
      e.instruction_count = rs.fingerprint->instruction_count;
      // Compare with the nearest earlier state that parsed (failed ones are skipped).
      int p = r - 1;
      while (p >= 0 && rows_[p].failed) --p;
      if (p >= 0 && rows_[p].fingerprint) {
        e.changed = rs.fingerprint->hash != rows_[p].fingerprint->hash;
        e.delta = rs.fingerprint->instruction_count - rows_[p].fingerprint->instruction_count;
      }
    }
    if (e.failed != old->failed || e.changed != old->changed || e.delta != old->delta ||
        e.instruction_count != old->instruction_count) {
      timeline_model_->UpdateEntry(r, e);
    }
  }
  const int row = wanted_row_ >= 0 ? wanted_row_ : shown_row_;
  if (row >= 0) {
    QModelIndex proxy = timeline_filter_->mapFromSource(timeline_model_->index(row, 0));
    if (proxy.isValid() && timeline_view_->currentIndex().row() != proxy.row()) {
      timeline_view_->setCurrentIndex(proxy);
    }
  }
  syncing_ = was_syncing;
}

void MainWindow::ShowModule(std::shared_ptr<const Module> module, int row) {
  if (!module) return;
  if (module != module_) EndComparison();  // marks name the shown module's instructions
  syncing_ = true;
  pending_graph_select_ = nullptr;
  properties_->Clear();
  module_ = std::move(module);
  shown_row_ = row;
  wanted_row_ = row;
  timeline_filter_->SetKeptRow(row);
  waiting_for_state_ = false;
  if (row >= 0 && row < static_cast<int>(rows_.size())) rows_[row].last_used = ++use_clock_;
  computations_model_->SetModule(module_);
  text_->SetModule(module_);
  // Search highlights name this module's instructions (the old ones' pointers go).
  HighlightSearch(search_query_);

  const Computation* computation = nullptr;
  if (!computation_name_.isEmpty()) {
    computation = module_->FindComputation(computation_name_.toStdString());
  }
  if (!computation) computation = module_->entry();
  if (!computation && !module_->computations().empty()) {
    computation = module_->computations().back().get();
  }
  const Instruction* select = nullptr;
  if (!selected_name_.isEmpty()) {
    const std::string name = selected_name_.toStdString();
    if (computation) select = computation->FindInstruction(name);
    for (const auto& c : module_->computations()) {
      if (select) break;
      select = c->FindInstruction(name);
    }
  }
  if (select && !Reaches(computation, select->parent())) computation = select->parent();
  ShowComputation(computation, select);
  syncing_ = false;
  TrimStates();
  UpdateTitle();
  UpdateStateLabel();
  OnReplayModuleShown();
  emit stateShown(row);
  CheckIdle();
}

void MainWindow::ShowComputation(const Computation* computation, const Instruction* select) {
  const bool was_syncing = syncing_;
  syncing_ = true;
  computation_ = computation;
  pending_graph_select_ = select;
  if (computation) {
    graph_->SetComputation(module_, computation);
  } else {
    pending_graph_select_ = nullptr;
    graph_->Clear();
  }
  int r = computation ? computations_model_->RowOf(computation) : -1;
  if (r >= 0) {
    computations_view_->selectRow(r);
    computations_view_->scrollTo(computations_model_->index(r, 0));
  } else {
    computations_view_->clearSelection();
  }
  if (select) {
    text_->ShowInstruction(select);
    properties_->SetInstruction(module_, select);
  } else {
    if (computation) text_->ShowComputation(computation);
    properties_->Clear();
  }
  syncing_ = was_syncing;
  UpdateStateLabel();
}

void MainWindow::ShowError(const QString& path, const QString& raw_text,
                           const QString& diagnostic) {
  pending_graph_select_ = nullptr;
  properties_->Clear();
  graph_->Clear();
  computations_model_->SetModule(nullptr);
  module_.reset();
  computation_ = nullptr;
  const ErrorLocation loc = ParseErrorLocation(diagnostic);
  if (raw_text.isEmpty()) {
    text_->SetErrorText(diagnostic, 1, 1, loc.message);
  } else {
    text_->SetErrorText(raw_text, loc.line, loc.column, loc.message);
  }
  const bool located = loc.message != diagnostic.section('\n', 0, 0);
  statusBar()->showMessage(
      located ? tr("%1 did not parse: line %2, column %3: %4")
                    .arg(QFileInfo(path).fileName())
                    .arg(loc.line)
                    .arg(loc.column)
                    .arg(loc.message)
              : tr("%1 did not parse: %2").arg(QFileInfo(path).fileName(), loc.message),
      15000);
  UpdateTitle();
  UpdateStateLabel();
}

void MainWindow::OnComputationActivated(const QModelIndex& index) {
  if (syncing_ || !module_ || !index.isValid()) return;
  const Computation* computation = computations_model_->ComputationAt(index.row());
  if (!computation || computation == computation_) return;
  computation_name_ = Q(computation->name());
  const Instruction* keep = nullptr;
  if (!selected_name_.isEmpty()) keep = computation->FindInstruction(selected_name_.toStdString());
  ShowComputation(computation, keep);
}

// ---------------------------------------------------------------------------------------------
// Selection, search, export

void MainWindow::OnGraphSelected(const hlowb::Instruction* instruction) {
  if (syncing_) return;
  SyncSelection(instruction, false, true, true);
}

void MainWindow::OnTextActivated(const hlowb::Instruction* instruction) {
  if (syncing_ || !instruction) return;
  SyncSelection(instruction, true, false, true);
}

void MainWindow::OnPropertiesActivated(const hlowb::Instruction* instruction) {
  if (syncing_ || !instruction) return;
  // A removed instruction's ghost links into the compared base state, not the shown one.
  if (instruction->parent() == nullptr || instruction->parent()->parent() != module_.get()) return;
  SyncSelection(instruction, true, true, true);
}

void MainWindow::SelectInstruction(const hlowb::Instruction* instruction) {
  SyncSelection(instruction, true, true, true);
}

bool MainWindow::SelectInstructionByName(const QString& name) {
  if (!module_) return false;
  const std::string n = name.toStdString();
  const Instruction* found = computation_ ? computation_->FindInstruction(n) : nullptr;
  for (const auto& c : module_->computations()) {
    if (found) break;
    found = c->FindInstruction(n);
  }
  if (!found) return false;
  SelectInstruction(found);
  return true;
}

void MainWindow::SyncSelection(const Instruction* instruction, bool graph, bool text,
                               bool properties) {
  if (!module_) return;
  syncing_ = true;
  selected_name_ = instruction ? Q(instruction->name()) : QString();
  if (graph) {
    if (instruction && !Reaches(computation_, instruction->parent())) {
      // Not drawn in (or inside) the shown computation: show its own computation.
      ShowComputation(instruction->parent(), instruction);
    } else if (graph_->IsLayoutRunning()) {
      pending_graph_select_ = instruction;
    } else {
      graph_->SelectInstruction(instruction);
    }
  }
  if (text && instruction) {
    if (graph) {
      // The graph repaints first; the text view scrolls (and lays out the lines it then
      // shows) in a later slice of UI-thread work, so neither waits for the other's painting.
      pending_text_show_ = instruction;
      pending_text_module_ = module_;
      QTimer::singleShot(0, this, [this] {
        const Instruction* show = std::exchange(pending_text_show_, nullptr);
        std::shared_ptr<const Module> owner = std::move(pending_text_module_);
        pending_text_module_.reset();
        if (show != nullptr && owner == module_) text_->ShowInstruction(show);
        CheckIdle();
      });
    } else {
      text_->ShowInstruction(instruction);
    }
  }
  if (properties) {
    if (instruction) {
      properties_->SetInstruction(module_, instruction);
    } else {
      properties_->Clear();
    }
  }
  // The side-by-side view follows (unless the click came from it), and so does the history.
  if (instruction && IsComparing() && !from_diff_view_) diff_view_->ShowInstruction(instruction);
  ScheduleHistory();
  syncing_ = false;
  CheckIdle();
}

void MainWindow::ShowSearchBar() {
  search_bar_->show();
  search_edit_->setFocus(Qt::ShortcutFocusReason);
  search_edit_->selectAll();
}

namespace {

std::string LowerAscii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool Contains(const std::string& haystack, const std::string& lower_needle) {
  return LowerAscii(haystack).find(lower_needle) != std::string::npos;
}

}  // namespace

std::vector<const Instruction*> MainWindow::SearchMatches(const QString& query) const {
  std::vector<const Instruction*> matches;
  const std::string needle = LowerAscii(query.trimmed().toStdString());
  if (!module_ || needle.empty()) return matches;
  for (const auto& c : module_->computations()) {
    for (const Instruction* i : c->instructions()) {
      bool hit =
          Contains(i->name(), needle) || Contains(std::string(OpcodeName(i->opcode())), needle);
      if (const OpMetadata* md = i->metadata(); !hit && md != nullptr) {
        hit = Contains(md->op_name, needle) || Contains(md->op_type, needle);
      }
      // A reducer, fused computation or loop body named like the query: its caller matches.
      for (const Computation* called : i->called_computations()) {
        if (!hit && called != nullptr) hit = Contains(called->name(), needle);
      }
      if (hit) matches.push_back(i);
    }
  }
  return matches;
}

std::vector<const Instruction*> MainWindow::HighlightSearch(const QString& query) {
  search_query_ = query;
  std::vector<const Instruction*> matches = SearchMatches(query);
  graph_->SetSearchMatches(std::unordered_set<const Instruction*>(matches.begin(), matches.end()));
  text_->SetSearchHighlight(query.trimmed());
  return matches;
}

QString MainWindow::search_status() const { return search_count_->text(); }

bool MainWindow::Find(const QString& query, bool backwards) {
  if (query.isEmpty()) {
    ShowSearchBar();
    return false;
  }
  // The bar shows the query and the count, also for F3 pressed with the bar closed.
  if (search_edit_->text() != query) search_edit_->setText(query);
  search_bar_->show();
  const std::vector<const Instruction*> matches = HighlightSearch(query);
  if (matches.empty()) {
    // No instruction says it; the text may (an attribute, a computation's header).
    if (text_->Find(query.trimmed(), backwards)) {
      search_count_->setText(tr("in the text only"));
      statusBar()->showMessage(tr("No instruction matches '%1'; found in the text").arg(query),
                               5000);
      return true;
    }
    search_count_->setText(tr("no match"));
    statusBar()->showMessage(tr("No match for '%1'").arg(query), 5000);
    return false;
  }
  // From the selected instruction, in the text's order: the matches before it count.
  const int n = static_cast<int>(matches.size());
  const std::string selected = selected_name_.toStdString();
  int at = -1;     // the selection's index among the matches
  int before = 0;  // matches before the selection
  if (!selected.empty() && module_) {
    std::unordered_map<const Instruction*, int> index;
    for (int k = 0; k < n; ++k) index.emplace(matches[k], k);
    bool found = false;
    for (const auto& c : module_->computations()) {
      for (const Instruction* i : c->instructions()) {
        if (i->name() == selected) {
          found = true;
          if (auto it = index.find(i); it != index.end()) at = it->second;
          break;
        }
        before += index.count(i) != 0;
      }
      if (found) break;
    }
    if (!found) before = 0;
  }
  int next;
  if (at >= 0) {
    next = (at + (backwards ? n - 1 : 1)) % n;
  } else {
    next = backwards ? (before + n - 1) % n : before % n;
  }
  const Instruction* target = matches[next];
  SelectInstruction(target);
  search_count_->setText(tr("%1 of %2").arg(next + 1).arg(n));
  statusBar()->showMessage(
      tr("Match %1 of %2 for '%3': %4").arg(next + 1).arg(n).arg(query, Q(target->name())), 5000);
  return true;
}

absl::Status MainWindow::ExportView(const QString& path) {
  if (!graph_->computation()) return absl::FailedPreconditionError("no graph is shown");
  const QString ext = QFileInfo(path).suffix().toLower();
  if (ext == QLatin1String("svg")) return graph_->ExportSvg(path);
  if (ext == QLatin1String("png")) return graph_->ExportPng(path);
  if (ext == QLatin1String("dot") || ext == QLatin1String("gv")) return graph_->ExportDot(path);
  return absl::InvalidArgumentError("export as .svg, .png or .dot (not '." + ext.toStdString() +
                                    "')");
}

void MainWindow::ExportWithDialog(const QString& extension, const QString& filter) {
  if (!graph_->computation()) {
    statusBar()->showMessage(tr("Nothing to export: no graph is shown"), 5000);
    return;
  }
  QSettings settings;
  QString dir = settings.value(QStringLiteral("lastExportDir")).toString();
  QString base = computation_ ? Q(computation_->name()) : QStringLiteral("graph");
  QString suggested = (dir.isEmpty() ? QString() : dir + QLatin1Char('/')) + base +
                      QLatin1Char('.') + extension;
  QString path = QFileDialog::getSaveFileName(this, tr("Export View"), suggested, filter);
  if (path.isEmpty()) return;
  if (QFileInfo(path).suffix().isEmpty()) path += QLatin1Char('.') + extension;
  settings.setValue(QStringLiteral("lastExportDir"), QFileInfo(path).absolutePath());
  // Pictures of big graphs take a while to draw: they are written on a worker thread.
  if (graph_->ExportInBackground(path)) {
    statusBar()->showMessage(tr("Exporting %1…").arg(path));
    return;
  }
  absl::Status status = ExportView(path);
  if (status.ok()) {
    statusBar()->showMessage(tr("Exported %1").arg(path), 5000);
  } else {
    QMessageBox::warning(this, tr("Export failed"), Q(std::string(status.message())));
  }
}

// ---------------------------------------------------------------------------------------------
// State

bool MainWindow::IsBusy() const {
  return loader_->busy() || waiting_for_state_ || graph_->IsLayoutRunning() ||
         pending_graph_select_ != nullptr || pending_text_show_ != nullptr ||
         text_->IsLoading() || diff_computing_ || diff_view_->IsLoading() || pending_base_ >= 0 ||
         history_scheduled_ || history_tracing_ || history_waiting_;
}

void MainWindow::CheckIdle() {
  const bool busy = IsBusy();
  if (was_busy_ && !busy) {
    was_busy_ = false;
    emit idle();
  } else if (busy) {
    was_busy_ = true;
  }
}

void MainWindow::UpdateTitle() {
  QString title = tr("HLO Workbench");
  if (!current_path_.isEmpty()) {
    title = QFileInfo(current_path_).fileName() + QStringLiteral(" — ") + title;
  }
  if (session_ && module_index_ >= 0) {
    const DumpModule& m = session_->index().modules[module_index_];
    QString state = shown_row_ >= 0 && shown_row_ < static_cast<int>(states_.size())
                        ? Q(states_[shown_row_].label)
                        : QString();
    title = Q(m.name.empty() ? m.id_text : m.name) +
            (state.isEmpty() ? QString() : QStringLiteral(" · ") + state) + QStringLiteral(" — ") +
            title;
  }
  setWindowTitle(title);
}

void MainWindow::UpdateStateLabel() {
  QStringList parts;
  if (module_) parts << Q(module_->name());
  if (shown_row_ >= 0 && shown_row_ < static_cast<int>(states_.size())) {
    parts << Q(states_[shown_row_].label);
  }
  if (computation_) parts << Q(computation_->name());
  if (module_) parts << tr("%n instruction(s)", "", static_cast<int>(module_->instruction_count()));
  state_label_->setText(parts.join(QStringLiteral("  ·  ")));
}

bool MainWindow::CompareWithPreviousStep() {
  if (!module_ || shown_row_ <= 0 || shown_row_ >= static_cast<int>(rows_.size())) {
    statusBar()->showMessage(tr("No previous step to compare with"), 5000);
    return false;
  }
  return CompareWithRow(shown_row_ - 1);
}

bool MainWindow::CompareWithBeforeOptimizations() {
  const int row = FindStepRow(QStringLiteral("before"));
  if (!module_ || row < 0 || row == shown_row_) {
    statusBar()->showMessage(tr("No before_optimizations state to compare with"), 5000);
    return false;
  }
  return CompareWithRow(row);
}

bool MainWindow::CompareWithRow(int previous) {
  if (!module_ || previous < 0 || previous >= static_cast<int>(rows_.size())) return false;
  return CompareRows(previous, shown_row_);
}

const Instruction* MainWindow::SelectNextChange(bool backwards) {
  if (diff_order_.empty()) return nullptr;
  const int n = static_cast<int>(diff_order_.size());
  diff_position_ = diff_position_ < 0 ? (backwards ? n - 1 : 0)
                                      : (diff_position_ + (backwards ? n - 1 : 1)) % n;
  const Instruction* target = diff_order_[diff_position_];
  SelectInstruction(target);
  statusBar()->showMessage(tr("Change %1 of %2: %3").arg(diff_position_ + 1).arg(n).arg(
                               Q(target->name())),
                           5000);
  return target;
}

void MainWindow::ClearDiff() {
  pending_base_ = pending_row_ = -1;
  EndComparison();
  CheckIdle();
}

QString MainWindow::diff_summary() const {
  return diff_bar_->isVisible() ? diff_summary_->text() : QString();
}

}  // namespace hlowb::gui

// ---------------------------------------------------------------------------------------------
// Comparing any two states: marks and removed ghosts on the graph, the side-by-side view

namespace hlowb::gui {
namespace {

// Modules at least this large are diffed on a worker thread.
constexpr int64_t kAsyncDiffInstructions = 2000;

std::string Clip(std::string s, size_t max) {
  if (s.size() > max) s = s.substr(0, max - 1) + "…";
  return s;
}

}  // namespace

void MainWindow::BuildCompareUi() {
  // The diff bar: side by side on or off, and the change walk of the side-by-side view.
  auto* bar = static_cast<QHBoxLayout*>(diff_bar_->layout());
  auto* previous = new QToolButton;
  previous->setObjectName(QStringLiteral("diffPrevious"));
  previous->setArrowType(Qt::UpArrow);
  previous->setToolTip(tr("Previous change (Ctrl+[)"));
  connect(previous, &QToolButton::clicked, this, [this] { StepChange(true); });
  auto* next = new QToolButton;
  next->setObjectName(QStringLiteral("diffNext"));
  next->setArrowType(Qt::DownArrow);
  next->setToolTip(tr("Next change (Ctrl+])"));
  connect(next, &QToolButton::clicked, this, [this] { StepChange(false); });
  side_by_side_ = QSettings().value(QStringLiteral("view/sideBySide"), true).toBool();
  side_by_side_button_ = new QToolButton;
  side_by_side_button_->setObjectName(QStringLiteral("sideBySide"));
  side_by_side_button_->setText(tr("Side by Side"));
  side_by_side_button_->setToolTip(
      tr("Show the two states' text side by side, aligned by the structural match"));
  side_by_side_button_->setCheckable(true);
  side_by_side_button_->setChecked(side_by_side_);
  connect(side_by_side_button_, &QToolButton::toggled, this, [this](bool on) { SetSideBySide(on); });
  bar->insertWidget(1, previous);
  bar->insertWidget(2, next);
  bar->insertWidget(3, side_by_side_button_);

  connect(diff_view_, &viewer::HloDiffView::instructionActivated, this,
          [this](const hlowb::Instruction* instruction) {
            if (syncing_ || !instruction) return;
            from_diff_view_ = true;
            SyncSelection(instruction, true, true, true);
            from_diff_view_ = false;
          });
  connect(diff_view_, &viewer::HloDiffView::diffLoaded, this, [this] { CheckIdle(); });
  connect(this, &MainWindow::stateShown, this, [this] {
    TryPendingCompare();
    ScheduleHistory();
  });
  connect(loader_, &Loader::statesFinished, this, [this] { OnLoadingFinished(); });
  connect(loader_, &Loader::busyChanged, this, [this](bool busy) {
    if (!busy) OnLoadingFinished();
  });

  // The timeline: Ctrl+click a second state and compare the two; a context menu for the rest.
  timeline_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  timeline_view_->setContextMenuPolicy(Qt::CustomContextMenu);
  connect(timeline_view_, &QWidget::customContextMenuRequested, this,
          &MainWindow::ShowTimelineMenu);
  timeline_view_->setToolTip(timeline_view_->toolTip() +
                             tr("; Ctrl+click a second state, then Compare Selected States "
                                "(context menu) to diff any two"));

  view_menu_->addSeparator();
  QAction* compare_selected = view_menu_->addAction(tr("Compare &Selected States"), this,
                                                    [this] { CompareSelectedStates(); });
  compare_selected->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
  view_menu_->addAction(tr("Set Shown State as Diff &Base"), this,
                        [this] { SetDiffBase(shown_row_); });
  view_menu_->addAction(tr("Compare with Diff B&ase"), this, [this] { CompareWithDiffBase(); });
  QAction* sbs = view_menu_->addAction(tr("Side-by-Side &Diff"));
  sbs->setCheckable(true);
  sbs->setChecked(side_by_side_);
  connect(sbs, &QAction::toggled, side_by_side_button_, &QToolButton::setChecked);
  connect(side_by_side_button_, &QToolButton::toggled, sbs, &QAction::setChecked);

  // History: the selected instruction through every state of the timeline.
  history_ = new viewer::HistoryPanel;
  history_->setObjectName(QStringLiteral("historyPanel"));
  history_pool_ = new QThreadPool(this);
  history_pool_->setMaxThreadCount(1);
  history_latest_ = std::make_shared<std::atomic<uint64_t>>(0);
  history_dock_ = new QDockWidget(tr("History"), this);
  history_dock_->setObjectName(QStringLiteral("historyDock"));
  history_dock_->setWidget(history_);
  addDockWidget(Qt::RightDockWidgetArea, history_dock_);
  if (auto* properties = findChild<QDockWidget*>(QStringLiteral("propertiesDock"))) {
    tabifyDockWidget(properties, history_dock_);
    properties->raise();
  }
  connect(history_dock_, &QDockWidget::visibilityChanged, this, [this](bool visible) {
    if (visible) {
      ScheduleHistory();
    } else {
      history_keep_.clear();  // the states loaded for it may go
    }
  });
  connect(history_, &viewer::HistoryPanel::stateActivated, this,
          [this](int state, const QString& name) {
            if (state < 0 || state >= static_cast<int>(rows_.size())) return;
            if (!name.isEmpty()) selected_name_ = name;
            if (state == shown_row_) {
              if (!name.isEmpty()) SelectInstructionByName(name);
              return;
            }
            SelectTimelineRow(state);
          });
  view_menu_->addAction(history_dock_->toggleViewAction());
  // The dock's own toggle closes History when it is a tab behind Properties (it counts as
  // shown there); the shortcut brings it to the front instead, and closes it only when it is
  // already in front.
  QAction* show_history = view_menu_->addAction(tr("Show &History"), this, [this] {
    if (history_dock_->isVisible() && !history_dock_->visibleRegion().isEmpty()) {
      history_dock_->close();
      return;
    }
    history_dock_->show();
    history_dock_->raise();
  });
  show_history->setObjectName(QStringLiteral("showHistory"));
  show_history->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_H));
  show_history->setShortcutContext(Qt::WindowShortcut);
}

bool MainWindow::CompareRows(int base_row, int row) {
  const int n = static_cast<int>(rows_.size());
  if (base_row < 0 || row < 0 || base_row >= n || row >= n || base_row == row) {
    statusBar()->showMessage(tr("Choose two different states to compare"), 5000);
    return false;
  }
  pending_base_ = base_row;
  pending_row_ = row;
  pending_requested_ = false;
  if (wanted_row_ != row || shown_row_ != row) SelectTimelineRow(row);
  TryPendingCompare();
  return pending_base_ < 0 && (diff_computing_ || compared_base_row_ == base_row);
}

bool MainWindow::CompareSelectedStates() {
  std::vector<int> rows;
  for (const QModelIndex& index : timeline_view_->selectionModel()->selectedRows()) {
    rows.push_back(timeline_filter_->mapToSource(index).row());
  }
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  if (rows.size() != 2) {
    statusBar()->showMessage(
        tr("Select two states in the timeline (Ctrl+click the second) to compare them"), 8000);
    return false;
  }
  return CompareRows(rows[0], rows[1]);
}

void MainWindow::SetDiffBase(int row) {
  if (row < 0 || row >= static_cast<int>(states_.size())) return;
  diff_base_row_ = row;
  UpdateTimelineMarks();
  statusBar()->showMessage(
      tr("Diff base: %1. Show another state and choose Compare with Diff Base.")
          .arg(Q(states_[row].label)),
      8000);
}

bool MainWindow::CompareWithDiffBase() {
  if (diff_base_row_ < 0) {
    statusBar()->showMessage(tr("No diff base: choose Set as Diff Base on a timeline state"),
                             5000);
    return false;
  }
  return CompareRows(diff_base_row_, wanted_row_ >= 0 ? wanted_row_ : shown_row_);
}

void MainWindow::TryPendingCompare() {
  if (pending_base_ < 0) return;
  const int base = pending_base_;
  const int row = pending_row_;
  auto drop = [this](const QString& why) {
    pending_base_ = pending_row_ = -1;
    if (!why.isEmpty()) statusBar()->showMessage(why, 8000);
    CheckIdle();
  };
  if (base >= static_cast<int>(rows_.size()) || row >= static_cast<int>(rows_.size()) ||
      wanted_row_ != row) {
    drop(QString());  // the user moved on
    return;
  }
  for (int r : {base, row}) {
    if (rows_[r].failed) {
      drop(tr("%1 did not load; nothing to compare").arg(Q(states_[r].label)));
      return;
    }
  }
  if (shown_row_ != row || !module_ || module_ != rows_[row].module) return;  // on its way
  std::shared_ptr<const Module> before = rows_[base].module;
  if (!before) {
    if (!pending_requested_) {
      pending_requested_ = true;
      statusBar()->showMessage(tr("Loading %1 to compare with…").arg(Q(states_[base].label)));
      loader_->RequestState(base);
    }
    return;
  }
  pending_base_ = pending_row_ = -1;
  const uint64_t generation = ++diff_generation_;
  std::shared_ptr<const Module> shown = module_;
  if (std::max(before->instruction_count(), shown->instruction_count()) <
      kAsyncDiffInstructions) {
    ApplyDiff(generation, base, before, shown,
              std::make_shared<const ModuleDiff>(DiffModules(*before, *shown)));
    return;
  }
  diff_computing_ = true;
  statusBar()->showMessage(tr("Comparing with %1…").arg(Q(states_[base].label)));
  QPointer<MainWindow> self(this);
  std::thread([self, generation, base, before, shown] {
    auto diff = std::make_shared<const ModuleDiff>(DiffModules(*before, *shown));
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, generation, base, before, shown, diff] {
          if (self) self->ApplyDiff(generation, base, before, shown, diff);
        },
        Qt::QueuedConnection);
  }).detach();
}

void MainWindow::ApplyDiff(uint64_t generation, int base_row, std::shared_ptr<const Module> base,
                           std::shared_ptr<const Module> shown,
                           std::shared_ptr<const ModuleDiff> diff) {
  if (generation != diff_generation_) return;
  diff_computing_ = false;
  if (shown != module_ || !diff) {
    CheckIdle();
    return;
  }
  if (!diff_bar_->isVisible()) statusBar()->clearMessage();  // "Comparing with…"
  const ModuleDiff& d = *diff;
  std::unordered_map<const Instruction*, uint8_t> marks;
  std::unordered_map<const Instruction*, const Instruction*> match;  // base -> shown
  diff_order_.clear();
  for (const ComputationDiff& c : d.computations) {
    for (const InstructionDiff& row : c.rows) {
      if (row.a != nullptr && row.b != nullptr) match.emplace(row.a, row.b);
      if (row.b == nullptr) continue;
      if (row.kind == DiffKind::kAdded) marks[row.b] = 1;
      if (row.kind == DiffKind::kChanged) marks[row.b] = 2;
      if (row.kind == DiffKind::kAdded || row.kind == DiffKind::kChanged) {
        diff_order_.push_back(row.b);
      }
    }
  }
  diff_position_ = -1;
  text_->SetDiffMarks(marks);
  graph_->SetDiffMarks(std::move(marks));

  // Removed instructions as ghosts, in the matched computation of the shown state, joined to
  // the matched operands and users they had.
  std::vector<viewer::GraphView::RemovedGhost> ghosts;
  std::unordered_map<const Instruction*, int> ghost_of;
  const QString base_label = Q(states_[base_row].label);
  for (const ComputationDiff& c : d.computations) {
    if (c.a == nullptr || c.b == nullptr) continue;  // nowhere to draw a whole computation
    for (const InstructionDiff& row : c.rows) {
      if (row.kind != DiffKind::kRemoved || row.a == nullptr) continue;
      const Instruction& a = *row.a;
      viewer::GraphView::RemovedGhost g;
      g.key = a.name();
      g.label = {a.name(), std::string(OpcodeName(a.opcode())),
                 Clip(PrintShape(a.shape(), false), 64)};
      PrintOptions short_form = PrintOptions::Short();
      short_form.print_metadata = false;
      g.tooltip = tr("Removed (present in %1):\n%2")
                      .arg(base_label, Q(Clip(PrintInstruction(a, short_form), 400)))
                      .toStdString();
      if (row.fused_into != nullptr) {
        g.tooltip += tr("\nFused into %1").arg(Q(row.fused_into->name())).toStdString();
      }
      g.computation = c.b;
      ghost_of.emplace(row.a, static_cast<int>(ghosts.size()));
      ghosts.push_back(std::move(g));
    }
  }
  for (const ComputationDiff& c : d.computations) {
    if (c.a == nullptr) continue;
    for (const Instruction* user : c.a->instructions()) {
      auto user_ghost = ghost_of.find(user);
      auto user_match = match.find(user);
      for (const Instruction* operand : user->operands()) {
        auto it = ghost_of.find(operand);
        if (user_ghost != ghost_of.end()) {
          viewer::GraphView::RemovedGhost& g = ghosts[user_ghost->second];
          if (it != ghost_of.end()) {
            g.removed_operands.push_back(it->second);
          } else if (auto m = match.find(operand); m != match.end()) {
            g.operands.push_back(m->second);
          }
        } else if (it != ghost_of.end() && user_match != match.end()) {
          ghosts[it->second].users.push_back(user_match->second);
        }
      }
    }
  }
  graph_->SetRemovedGhosts(std::move(ghosts));

  compared_base_row_ = base_row;
  diff_base_module_ = base;
  diff_ = diff;
  const DiffCounts& n = d.counts;
  diff_summary_->setText(
      tr("Compared with %1: %2 changed, %3 added, %4 removed, %5 unchanged (%6 renamed). "
         "Green: added; orange: changed; red: removed (dashed ghosts on the graph).")
          .arg(base_label)
          .arg(n.changed)
          .arg(n.added)
          .arg(n.removed)
          .arg(n.unchanged)
          .arg(n.renamed));
  diff_bar_->show();
  const QString shown_label =
      shown_row_ >= 0 && shown_row_ < static_cast<int>(states_.size()) ? Q(states_[shown_row_].label)
                                                                       : QString();
  diff_view_->SetDiff(base, shown, diff, base_label, shown_label);
  UpdateComparePane();
  if (!selected_name_.isEmpty()) {
    const std::string name = selected_name_.toStdString();
    for (const auto& c : module_->computations()) {
      if (const Instruction* i = c->FindInstruction(name)) {
        diff_view_->ShowInstruction(i);
        break;
      }
    }
  }
  CheckIdle();
}

void MainWindow::EndComparison() {
  ++diff_generation_;
  diff_computing_ = false;
  diff_order_.clear();
  diff_position_ = -1;
  compared_base_row_ = -1;
  diff_.reset();
  diff_base_module_.reset();
  graph_->SetRemovedGhosts({});
  diff_view_->Clear();
  UpdateComparePane();
  if (!diff_bar_->isVisible() && diff_summary_->text().isEmpty()) return;
  graph_->SetDiffMarks({});
  text_->SetDiffMarks({});
  diff_summary_->clear();
  diff_bar_->hide();
}

void MainWindow::SetSideBySide(bool on) {
  if (side_by_side_button_->isChecked() != on) {
    side_by_side_button_->setChecked(on);  // comes back here through toggled
    return;
  }
  side_by_side_ = on;
  QSettings().setValue(QStringLiteral("view/sideBySide"), on);
  UpdateComparePane();
}

void MainWindow::UpdateComparePane() {
  text_stack_->setCurrentWidget(IsComparing() && side_by_side_
                                    ? static_cast<QWidget*>(diff_view_)
                                    : static_cast<QWidget*>(text_));
  UpdateTimelineMarks();
}

void MainWindow::UpdateTimelineMarks() {
  using Mark = viewer::TimelineEntry::CompareMark;
  const bool was_syncing = syncing_;
  syncing_ = true;  // rows changing must not move the views
  for (int r = 0; r < timeline_model_->rowCount(); ++r) {
    const viewer::TimelineEntry* old = timeline_model_->EntryAt(r);
    if (old == nullptr) continue;
    Mark mark = Mark::kNone;
    if (r == diff_base_row_) mark = Mark::kDiffBase;
    if (IsComparing() && r == compared_base_row_) mark = Mark::kComparedBase;
    if (IsComparing() && r == shown_row_) mark = Mark::kCompared;
    if (old->compare == mark) continue;
    viewer::TimelineEntry e = *old;
    e.compare = mark;
    timeline_model_->UpdateEntry(r, e);
  }
  syncing_ = was_syncing;
}

int MainWindow::StepChange(bool backwards, bool top_level_only) {
  if (!IsComparing() || !side_by_side_ || diff_view_->LineCount() == 0) {
    SelectNextChange(backwards);
    return -1;
  }
  const int line = diff_view_->GoToChange(backwards, top_level_only);
  const SideBySideLine* at = diff_view_->LineAt(line);
  if (at == nullptr) return -1;
  if (at->b != nullptr) {
    from_diff_view_ = true;
    SelectInstruction(at->b);
    from_diff_view_ = false;
  } else if (at->a != nullptr && diff_base_module_) {
    // Removed: Properties shows what it was (in the base state), not the last selection.
    properties_->SetGhost(diff_base_module_, at->a, at->note.empty() ? tr("removed") : Q(at->note));
  }
  // A removed line says where the instruction went ("removed (fused into fusion.2)").
  statusBar()->showMessage(
      at->b != nullptr ? tr("%1: %2").arg(Q(std::string(DiffKindName(at->kind))), Q(at->b->name()))
                       : tr("%1: %2").arg(at->a != nullptr ? Q(at->a->name()) : QString(),
                                          at->note.empty() ? tr("removed") : Q(at->note)),
      5000);
  return line;
}

void MainWindow::ShowTimelineMenu(const QPoint& pos) {
  const QModelIndex at = timeline_view_->indexAt(pos);
  const int row = at.isValid() ? timeline_filter_->mapToSource(at).row() : -1;
  QMenu menu(this);
  const int selected = static_cast<int>(timeline_view_->selectionModel()->selectedRows().size());
  QAction* compare_selected =
      menu.addAction(tr("Compare Selected States"), this, [this] { CompareSelectedStates(); });
  compare_selected->setEnabled(selected == 2);
  if (row >= 0 && row < static_cast<int>(states_.size())) {
    const QString label = Q(states_[row].label);
    if (row != shown_row_ && shown_row_ >= 0) {
      menu.addAction(tr("Compare Shown State with \"%1\"").arg(label), this,
                     [this, row] { CompareRows(row, shown_row_); });
    }
    menu.addAction(tr("Set \"%1\" as Diff Base").arg(label), this,
                   [this, row] { SetDiffBase(row); });
  }
  if (diff_base_row_ >= 0 && diff_base_row_ < static_cast<int>(states_.size())) {
    QAction* a = menu.addAction(
        tr("Compare with Diff Base (%1)").arg(Q(states_[diff_base_row_].label)), this,
        [this] { CompareWithDiffBase(); });
    a->setEnabled(diff_base_row_ != shown_row_);
  }
  menu.addSeparator();
  menu.addAction(tr("Compare with Previous Step"), this, [this] { CompareWithPreviousStep(); });
  menu.addAction(tr("Compare with before_optimizations"), this,
                 [this] { CompareWithBeforeOptimizations(); });
  if (IsComparing()) menu.addAction(tr("Stop Comparing"), this, [this] { ClearDiff(); });
  menu.exec(timeline_view_->viewport()->mapToGlobal(pos));
}

void MainWindow::OnLoadingFinished() {
  if (loader_->busy()) return;
  // Whatever was requested and did not come will not come now.
  if (history_waiting_) {
    history_waiting_ = false;
    StartHistoryTrace();
  }
  if (pending_base_ >= 0 && pending_requested_ && pending_base_ < static_cast<int>(rows_.size()) &&
      !rows_[pending_base_].module) {
    pending_base_ = pending_row_ = -1;
    statusBar()->showMessage(tr("The state to compare with did not load"), 8000);
  }
  CheckIdle();
}

// ---------------------------------------------------------------------------------------------
// History: the selected instruction's provenance across the timeline

void MainWindow::ScheduleHistory() {
  if (history_scheduled_ || history_dock_ == nullptr) return;
  history_scheduled_ = true;
  QTimer::singleShot(0, this, [this] {
    history_scheduled_ = false;
    UpdateHistory();
    CheckIdle();
  });
}

void MainWindow::UpdateHistory() {
  if (!history_dock_->isVisible()) return;
  const bool have = module_ && session_ && shown_row_ >= 0 &&
                    shown_row_ < static_cast<int>(rows_.size()) && !selected_name_.isEmpty();
  if (!have) {
    history_key_.clear();
    *history_latest_ = ++history_generation_;
    history_tracing_ = history_waiting_ = false;
    history_->Clear();
    history_->SetMessage(module_ && shown_row_ < 0
                             ? tr("History follows an instruction through the passes of a dump "
                                  "directory; open one to see it")
                             : tr("Select an instruction to see its history across the passes"));
    return;
  }
  const QString key = QString::number(shown_row_) + QLatin1Char('/') + selected_name_;
  if (key == history_key_) return;  // shown, or on its way
  history_key_ = key;
  // Moving along the history shown (clicking one of its rows) keeps it.
  if (!history_tracing_ && !history_waiting_) {
    for (const viewer::HistoryPanel::Row& r : history_->rows()) {
      if (r.state == shown_row_ && r.name == selected_name_) return;
    }
  }
  *history_latest_ = ++history_generation_;
  history_tracing_ = false;
  history_->SetSubject(
      tr("%1 in %2").arg(selected_name_, Q(states_[shown_row_].label)));
  history_keep_.resize(rows_.size());
  int missing = 0;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    if (rows_[r].module) {
      history_keep_[r] = rows_[r].module;  // held for the trace even when trimmed
    } else if (!rows_[r].failed && !history_keep_[r]) {
      ++missing;
      loader_->RequestState(r);
    }
  }
  if (missing > 0) {
    history_waiting_ = true;
    history_->SetProgress(tr("Loading states"), static_cast<int>(rows_.size()) - missing,
                          static_cast<int>(rows_.size()));
    return;
  }
  history_waiting_ = false;
  StartHistoryTrace();
}

void MainWindow::OnHistoryStateLoaded(int row) {
  if (row < 0 || row >= static_cast<int>(rows_.size())) return;
  if (history_dock_ != nullptr && history_dock_->isVisible() && rows_[row].module &&
      row < static_cast<int>(history_keep_.size())) {
    history_keep_[row] = rows_[row].module;
  }
  if (!history_waiting_) return;
  int missing = 0;
  for (int r = 0; r < static_cast<int>(rows_.size()); ++r) {
    if (!rows_[r].failed && !history_keep_[r]) ++missing;
  }
  const int total = static_cast<int>(rows_.size());
  history_->SetProgress(tr("Loading states"), total - missing, total);
  if (missing > 0) return;
  history_waiting_ = false;
  StartHistoryTrace();
}

void MainWindow::StartHistoryTrace() {
  if (shown_row_ < 0 || shown_row_ >= static_cast<int>(rows_.size()) || selected_name_.isEmpty()) {
    return;
  }
  const int n = static_cast<int>(rows_.size());
  history_keep_.resize(n);
  auto modules = std::make_shared<std::vector<std::shared_ptr<const Module>>>(n);
  std::vector<TimelineInput> inputs(n);
  for (int r = 0; r < n; ++r) {
    const DumpState& s = states_[r];
    TimelineInput& in = inputs[r];
    in.label = s.label;
    in.step = s.step;
    in.pipeline = s.pipeline;
    in.pass = s.pass;
    in.is_pass = s.stage == StageKind::kPassStep;
    (*modules)[r] = rows_[r].module ? rows_[r].module : history_keep_[r];
    in.module = (*modules)[r].get();
  }
  const uint64_t generation = history_generation_;
  const int start = shown_row_;
  const std::string name = selected_name_.toStdString();
  history_tracing_ = true;
  history_->SetProgress(tr("Tracing"), 0, std::max(1, n - 1));
  std::shared_ptr<std::atomic<uint64_t>> latest = history_latest_;
  QPointer<MainWindow> self(this);
  history_pool_->clear();
  history_pool_->start([self, latest, generation, modules, inputs, start, name] {
    if (latest->load() != generation) return;
    std::string error;
    std::vector<ProvenanceStep> steps =
        TraceInstruction(inputs, start, name, &error, [&](int done, int total) {
          if (latest->load() != generation) return false;
          QMetaObject::invokeMethod(
              QCoreApplication::instance(),
              [self, generation, done, total] {
                if (self && self->history_generation_ == generation && self->history_tracing_) {
                  self->history_->SetProgress(MainWindow::tr("Tracing"), done, total);
                }
              },
              Qt::QueuedConnection);
          return true;
        });
    if (latest->load() != generation) return;
    QMetaObject::invokeMethod(
        QCoreApplication::instance(),
        [self, generation, steps, error] {
          if (self) self->FinishHistory(generation, steps, error);
        },
        Qt::QueuedConnection);
  });
}

void MainWindow::FinishHistory(uint64_t generation, const std::vector<ProvenanceStep>& steps,
                               const std::string& error) {
  if (generation != history_generation_) return;
  history_tracing_ = false;
  if (steps.empty()) {
    history_->SetMessage(error.empty() ? tr("No history") : Q(error));
    CheckIdle();
    return;
  }
  std::vector<viewer::HistoryPanel::Row> rows;
  for (int r = 0; r < static_cast<int>(steps.size()) && r < static_cast<int>(states_.size()); ++r) {
    const ProvenanceStep& s = steps[r];
    viewer::HistoryPanel::Row row;
    row.state = r;
    row.label = Q(s.label);
    row.pass = Q(states_[r].pass);
    row.name = Q(s.name);
    row.event = Q(s.event);
    row.eventful = s.event != "present" && s.event != "absent" && s.event != "not loaded";
    rows.push_back(std::move(row));
  }
  history_->SetRows(std::move(rows));
  // Keep the shown state's row in view.
  if (shown_row_ >= 0 && shown_row_ < history_->table()->rowCount()) {
    history_->table()->selectRow(shown_row_);
    history_->table()->scrollToItem(history_->table()->item(shown_row_, 0));
  }
  CheckIdle();
}

}  // namespace hlowb::gui
