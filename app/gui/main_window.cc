// The main window's frame: construction, the menus and toolbars, the docks, the status bar,
// settings, theme, recent files, drag and drop, and the window's busy/idle state. What the
// views show, and what opening, comparing and replaying do, live in the other main_window_*.cc
// files and the controllers (see main_window.h).
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
#include <QFrame>
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
#include <QStatusBar>
#include <QStyle>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>

#include "app/gui/artifacts_controller.h"
#include "app/gui/keyboard_shortcuts.h"
#include "app/gui/memory_controller.h"
#include "viewer/graph/graph_view.h"
#include "viewer/models/models.h"
#include "viewer/text/hlo_text_view.h"
#include "viewer/widgets/properties_panel.h"
#include "viewer/widgets/replay_panel.h"

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
  properties_ = new viewer::PropertiesPanel;
  properties_->setObjectName(QStringLiteral("propertiesPanel"));
  // Comparing: the diff bar, and the text pane (the text view, or while comparing side by side
  // the two-sided diff).
  compare_ = new CompareController(this, this, {graph_, text_, properties_});
  connect(compare_, &CompareController::comparisonChanged, this, &MainWindow::comparisonChanged);
  splitter_ = new QSplitter(Qt::Horizontal);
  splitter_->setObjectName(QStringLiteral("centralSplitter"));
  splitter_->addWidget(graph_);
  // The text side: the HLO text pane, and the dump's artifacts in tabs after it.
  artifacts_ = new ArtifactsController(this, compare_->text_pane());
  splitter_->addWidget(artifacts_->tabs());
  splitter_->setStretchFactor(0, 3);
  splitter_->setStretchFactor(1, 2);
  splitter_->setChildrenCollapsible(false);
  auto* central = new QWidget;
  auto* central_layout = new QVBoxLayout(central);
  central_layout->setContentsMargins(0, 0, 0, 0);
  central_layout->setSpacing(0);
  central_layout->addWidget(compare_->diff_bar());
  central_layout->addWidget(splitter_, 1);
  setCentralWidget(central);

  BuildDocks();
  BuildActions();
  BuildStatusBar();
  BuildCompareUi();  // main_window_compare.cc
  artifacts_->BuildDock();  // the Artifacts dock (artifacts_controller.h)
  memory_ = new MemoryController(this);  // the Memory dock (memory_controller.h)

  ConnectLoader();  // main_window_documents.cc

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
  // The controllers go before the child widgets they drive (which outlive this body): those
  // widgets' signals must not reach them while torn down. History stops its trace here.
  delete history_;
  history_ = nullptr;
  delete compare_;
  compare_ = nullptr;
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

void MainWindow::AddDock(QDockWidget* dock, Qt::DockWidgetArea area, bool visible) {
  if (dock == nullptr) return;
  // Where the saved layout had it (restoreState keeps a place for a dock not made yet), shown
  // or hidden as it was; else beside the window's own docks.
  if (!restoreDockWidget(dock)) {
    addDockWidget(area, dock);
    auto* properties = findChild<QDockWidget*>(QStringLiteral("propertiesDock"));
    if (area == Qt::RightDockWidgetArea && properties != nullptr &&
        dockWidgetArea(properties) == Qt::RightDockWidgetArea && !properties->isFloating()) {
      tabifyDockWidget(properties, dock);
      properties->raise();
    }
    if (!visible) dock->hide();
  }
  // The View menu lists the docks' toggles first: the new one goes after the last of them.
  const QList<QDockWidget*> docks = findChildren<QDockWidget*>();
  QAction* before = nullptr;
  for (QAction* a : view_menu_->actions()) {
    const bool toggle = std::any_of(docks.begin(), docks.end(), [a](const QDockWidget* d) {
      return d->toggleViewAction() == a;
    });
    if (!toggle) {
      before = a;
      break;
    }
  }
  view_menu_->insertAction(before, dock->toggleViewAction());
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
  BuildCostOverlay(view_menu_);  // main_window_cost.cc
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
// Busy and idle, the title and the status bar's state label

bool MainWindow::IsBusy() const {
  return loader_->busy() || waiting_for_state_ || graph_->IsLayoutRunning() ||
         pending_graph_select_ != nullptr || pending_text_show_ != nullptr ||
         text_->IsLoading() || compare_->IsBusy() || history_->IsBusy();
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

}  // namespace hlowb::gui
