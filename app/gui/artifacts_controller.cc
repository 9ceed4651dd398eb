// The main window's Artifacts dock and artifact tabs: see artifacts_controller.h.
#include "app/gui/artifacts_controller.h"

#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QFont>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QSortFilterProxyModel>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTreeView>
#include <QVBoxLayout>
#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "app/gui/loader.h"
#include "app/gui/main_window.h"
#include "viewer/text/artifact_view.h"

namespace hlowb::gui {
namespace {

QString Q(const std::string& s) { return QString::fromStdString(s); }

// Item data of the list: a file's index into the session's files (-1 on a kind's group row),
// and the text the filter matches.
constexpr int kFileRole = Qt::UserRole + 1;
constexpr int kFilterRole = Qt::UserRole + 2;

// "jit_f (module 0004)", or the id alone when the module has no name.
QString ModuleLabel(const DumpModule& m) {
  return m.name.empty() ? QObject::tr("module %1").arg(Q(m.id_text))
                        : QObject::tr("%1 (module %2)").arg(Q(m.name), Q(m.id_text));
}

}  // namespace

ArtifactsController::ArtifactsController(MainWindow* window, QWidget* hlo_pane)
    : QObject(window), window_(window) {
  // The text side of the window: the HLO pane, then the artifacts. Without an artifact open the
  // tab bar is hidden and the pane fills the tab widget as it filled its place before.
  tabs_ = new QTabWidget;
  tabs_->setObjectName(QStringLiteral("centralTabs"));
  tabs_->setDocumentMode(true);
  tabs_->setTabsClosable(true);
  tabs_->setTabBarAutoHide(true);
  tabs_->setElideMode(Qt::ElideMiddle);
  tabs_->setUsesScrollButtons(true);
  tabs_->addTab(hlo_pane, tr("HLO"));
  tabs_->setTabToolTip(0, tr("The HLO text of the shown state"));
  const auto close_side = static_cast<QTabBar::ButtonPosition>(tabs_->style()->styleHint(
      QStyle::SH_TabBar_CloseButtonPosition, nullptr, tabs_->tabBar()));
  tabs_->tabBar()->setTabButton(0, close_side, nullptr);  // the HLO tab stays
  tabs_->tabBar()->installEventFilter(this);
  connect(tabs_, &QTabWidget::tabCloseRequested, this, [this](int index) { CloseTab(index); });

  // The dock's contents: what is listed, a filter, the artifacts grouped by kind.
  panel_ = new QWidget;
  auto* layout = new QVBoxLayout(panel_);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  message_ = new QLabel;
  message_->setObjectName(QStringLiteral("artifactsMessage"));
  message_->setWordWrap(true);
  message_->setContentsMargins(4, 2, 4, 2);
  filter_ = new QLineEdit;
  filter_->setObjectName(QStringLiteral("artifactsFilter"));
  filter_->setPlaceholderText(tr("Filter artifacts"));
  filter_->setClearButtonEnabled(true);
  model_ = new QStandardItemModel(this);
  proxy_ = new QSortFilterProxyModel(this);
  proxy_->setSourceModel(model_);
  proxy_->setFilterRole(kFilterRole);
  proxy_->setFilterKeyColumn(0);
  proxy_->setFilterCaseSensitivity(Qt::CaseInsensitive);
  proxy_->setRecursiveFilteringEnabled(true);  // an artifact that matches keeps its group
  proxy_->setAutoAcceptChildRows(true);        // a group that matches keeps its artifacts
  list_ = new QTreeView;
  list_->setObjectName(QStringLiteral("artifactsList"));
  list_->setModel(proxy_);
  list_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  list_->setSelectionBehavior(QAbstractItemView::SelectRows);
  list_->setUniformRowHeights(true);
  list_->setAllColumnsShowFocus(true);
  list_->header()->setStretchLastSection(false);
  list_->setToolTip(tr("Double-click or Enter opens an artifact in a tab beside the HLO text"));
  layout->addWidget(message_);
  layout->addWidget(filter_);
  layout->addWidget(list_, 1);
  connect(filter_, &QLineEdit::textChanged, this, [this](const QString& text) {
    proxy_->setFilterFixedString(text);
    list_->expandAll();
  });
  connect(list_, &QTreeView::activated, this,
          [this](const QModelIndex& index) { OnActivated(index); });
  Relist();
}

ArtifactsController::~ArtifactsController() {
  if (tabs_) tabs_->tabBar()->removeEventFilter(this);
  if (!dock_ && panel_) delete panel_.data();  // never docked: nothing else owns it
}

void ArtifactsController::BuildDock() {
  dock_ = new QDockWidget(tr("Artifacts"), window_);
  dock_->setObjectName(QStringLiteral("artifactsDock"));
  dock_->setWidget(panel_);
  // A tab beside Properties on the right: the window's layout is as it was without it.
  window_->AddDock(dock_, Qt::RightDockWidgetArea, true);
  connect(window_, &MainWindow::indexLoaded, this, [this] { Refresh(); });
  connect(window_, &MainWindow::stateShown, this, [this] { Refresh(); });
  connect(window_, &MainWindow::openFailed, this, [this] { Refresh(); });
  // The after-optimizations state arrives while another is shown: the links follow.
  connect(window_, &MainWindow::statesLoaded, this, [this] { UpdateLinks(); });
  Refresh();
}

QTabWidget* ArtifactsController::tabs() const { return tabs_; }

QDockWidget* ArtifactsController::dock() const { return dock_; }

QAbstractItemModel* ArtifactsController::list_model() const { return proxy_; }

QString ArtifactsController::message() const { return message_->text(); }

QString ArtifactsController::AbsolutePath(int file) const {
  if (!session_ || file < 0 || file >= static_cast<int>(session_->index().files.size())) {
    return {};
  }
  const DumpIndex& index = session_->index();
  return QDir::cleanPath(QDir(Q(index.root)).filePath(Q(index.files[file].path)));
}

QStringList ArtifactsController::ListedPaths() const {
  QStringList paths;
  for (int file : listed_) paths << AbsolutePath(file);
  return paths;
}

// ---------------------------------------------------------------------------------------------
// Following the window's document

void ArtifactsController::Refresh() {
  std::shared_ptr<const DumpSession> session = window_->dump_session();
  const int module_index = window_->current_module_index();
  if (session != session_ || module_index != module_index_) {
    const bool other_document = session != session_;
    session_ = std::move(session);
    module_index_ = module_index;
    Relist();
    // Tabs name the files of one document; within it, those of the module listed stay.
    for (int i = tabs_->count() - 1; i >= 1; --i) {
      auto* view = qobject_cast<viewer::ArtifactView*>(tabs_->widget(i));
      if (view == nullptr || !open_.contains(view)) continue;
      if (other_document ||
          std::find(listed_.begin(), listed_.end(), open_.value(view).file) == listed_.end()) {
        CloseTab(i);
      }
    }
  }
  UpdateMessage();
  UpdateLinks();
}

void ArtifactsController::Relist() {
  model_->clear();
  model_->setHorizontalHeaderLabels({tr("Artifact"), tr("Size")});
  listed_.clear();
  if (session_ && module_index_ >= 0 &&
      module_index_ < static_cast<int>(session_->index().modules.size())) {
    const DumpIndex& index = session_->index();
    const DumpModule& module = index.modules[module_index_];
    const int split = module.split_partner;
    const DumpModule* partner =
        split >= 0 && split < static_cast<int>(index.modules.size()) ? &index.modules[split]
                                                                      : nullptr;
    struct Entry {
      int file;
      QString title;
    };
    // By kind (in DumpFileKind's order, which keeps the memory reports together), then title.
    std::map<DumpFileKind, std::vector<Entry>> by_kind;
    std::vector<int> seen;
    auto add = [&](const DumpModule& owner, bool own) {
      for (int file : owner.artifacts) {
        if (file < 0 || file >= static_cast<int>(index.files.size())) continue;
        if (std::find(seen.begin(), seen.end(), file) != seen.end()) continue;
        seen.push_back(file);
        const DumpFile& f = index.files[file];
        QString title = viewer::ArtifactTitle(f, &owner);
        // The partner's files say which id they came from, as its states do in the timeline.
        if (!own) title += tr(" (module %1)").arg(Q(owner.id_text));
        by_kind[f.name.kind].push_back({file, title});
      }
    };
    add(module, true);
    if (partner != nullptr) add(*partner, false);
    const QLocale locale;
    for (auto& [kind, entries] : by_kind) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const Entry& a, const Entry& b) { return a.title < b.title; });
      const QString label = viewer::ArtifactKindLabel(kind);
      auto* group = new QStandardItem(QStringLiteral("%1 (%2)").arg(label).arg(entries.size()));
      group->setData(-1, kFileRole);
      group->setData(label, kFilterRole);
      QFont bold = group->font();
      bold.setBold(true);
      group->setFont(bold);
      auto* group_size = new QStandardItem;
      for (const Entry& e : entries) {
        const DumpFile& f = index.files[e.file];
        const QString path = AbsolutePath(e.file);
        auto* item = new QStandardItem(e.title);
        item->setData(e.file, kFileRole);
        item->setData(e.title + QLatin1Char(' ') + QFileInfo(path).fileName(), kFilterRole);
        item->setToolTip(QDir::toNativeSeparators(path));
        auto* size = new QStandardItem(locale.formattedDataSize(static_cast<qint64>(f.size)));
        size->setData(static_cast<int>(Qt::AlignRight | Qt::AlignVCenter), Qt::TextAlignmentRole);
        size->setToolTip(tr("%L1 bytes").arg(static_cast<qulonglong>(f.size)));
        group->appendRow({item, size});
        listed_.push_back(e.file);
      }
      model_->appendRow({group, group_size});
    }
  }
  list_->expandAll();
  // The title takes the room; the size what it needs.
  list_->header()->setSectionResizeMode(0, QHeaderView::Stretch);
  list_->header()->setSectionResizeMode(1, QHeaderView::ResizeToContents);
  UpdateMessage();
}

void ArtifactsController::UpdateMessage() {
  QString text;
  const QString path = window_->current_path();
  if (!session_) {
    if (path.isEmpty()) {
      text = tr("Nothing is open. A dump directory (--xla_dump_to) lists the files XLA wrote "
                "for each module here.");
    } else if (QFileInfo(path).isDir()) {
      text = tr("No artifacts: %1 is not indexed.").arg(QFileInfo(path).fileName());
    } else {
      text = tr("No artifacts: %1 is a single file. Buffer assignments, LLVM IR, PTX and the "
                "other artifacts come with dump directories (--xla_dump_to).")
                 .arg(QFileInfo(path).fileName());
    }
  } else if (session_->index().modules.empty()) {
    text = tr("No artifacts: the dump holds no modules.");
  } else if (module_index_ < 0 ||
             module_index_ >= static_cast<int>(session_->index().modules.size())) {
    text = tr("Choose a module to list its artifacts.");
  } else {
    const DumpModule& m = session_->index().modules[module_index_];
    text = listed_.empty()
               ? tr("%1 has no artifacts.").arg(ModuleLabel(m))
               : tr("%n artifact(s) of %1", "", static_cast<int>(listed_.size()))
                     .arg(ModuleLabel(m));
  }
  message_->setText(text);
}

// ---------------------------------------------------------------------------------------------
// Tabs

void ArtifactsController::OnActivated(const QModelIndex& proxy_index) {
  const QModelIndex index = proxy_->mapToSource(proxy_index.siblingAtColumn(0));
  const int file = index.data(kFileRole).isValid() ? index.data(kFileRole).toInt() : -1;
  if (file < 0) return;  // a kind's group row
  OpenArtifact(AbsolutePath(file));
}

int ArtifactsController::TabOf(const QString& path) const {
  const QString clean = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
  for (int i = 1; i < tabs_->count(); ++i) {
    auto* view = qobject_cast<viewer::ArtifactView*>(tabs_->widget(i));
    if (view != nullptr && view->path() == clean) return i;
  }
  return -1;
}

viewer::ArtifactView* ArtifactsController::OpenArtifact(const QString& path) {
  if (path.isEmpty()) return nullptr;
  const QString clean = QDir::cleanPath(QFileInfo(path).absoluteFilePath());
  if (const int open = TabOf(clean); open >= 0) {
    auto* view = static_cast<viewer::ArtifactView*>(tabs_->widget(open));
    tabs_->setCurrentIndex(open);
    view->setFocus(Qt::OtherFocusReason);
    return view;
  }
  int file = -1;
  for (int f : listed_) {
    if (AbsolutePath(f) == clean) file = f;
  }
  if (file < 0) return nullptr;
  const DumpFile& f = session_->index().files[file];

  // The list's title ("LLVM IR: add_fusion_kernel_module.ir-with-opt").
  QString title;
  const QModelIndexList found =
      model_->match(model_->index(0, 0), kFileRole, file, 1, Qt::MatchExactly | Qt::MatchRecursive);
  title = found.isEmpty() ? viewer::ArtifactTitle(f) : found.first().data().toString();

  auto* view = new viewer::ArtifactView;
  view->setObjectName(QStringLiteral("artifactView"));
  const int at = tabs_->addTab(view, title);
  tabs_->setTabToolTip(at, QDir::toNativeSeparators(clean));
  Tab tab;
  tab.file = file;
  const LinkModule links = CurrentLinkModule();
  tab.links = links.module;
  tab.links_label = links.label;
  tab.links_after = links.after;
  open_.insert(view, tab);
  connect(view, &viewer::ArtifactView::instructionActivated, this,
          [this, view](const QString& computation, const QString& instruction) {
            OnLinkActivated(view, computation, instruction);
          });
  connect(view, &viewer::ArtifactView::loaded, this, [this, view](bool ok) {
    if (!ok) {
      window_->statusBar()->showMessage(
          tr("Cannot show %1: %2").arg(QFileInfo(view->path()).fileName(), view->Note()), 10000);
    }
  });
  view->SetModule(links.module);
  view->OpenFile(clean, f.name.kind);
  tabs_->setCurrentIndex(at);
  view->setFocus(Qt::OtherFocusReason);
  return view;
}

std::vector<viewer::ArtifactView*> ArtifactsController::views() const {
  std::vector<viewer::ArtifactView*> out;
  for (int i = 1; i < tabs_->count(); ++i) {
    if (auto* view = qobject_cast<viewer::ArtifactView*>(tabs_->widget(i))) out.push_back(view);
  }
  return out;
}

viewer::ArtifactView* ArtifactsController::current_view() const {
  return tabs_->currentIndex() > 0 ? qobject_cast<viewer::ArtifactView*>(tabs_->currentWidget())
                                   : nullptr;
}

void ArtifactsController::CloseTab(int index) {
  if (index <= 0 || index >= tabs_->count()) return;  // the HLO tab stays
  auto* view = qobject_cast<viewer::ArtifactView*>(tabs_->widget(index));
  tabs_->removeTab(index);
  if (view != nullptr) {
    open_.remove(view);
    QObject::disconnect(view, nullptr, this, nullptr);
    view->deleteLater();  // its load, if any, is dropped
  }
}

void ArtifactsController::CloseAllTabs() {
  for (int i = tabs_->count() - 1; i >= 1; --i) CloseTab(i);
}

bool ArtifactsController::IsLoading() const {
  for (viewer::ArtifactView* view : views()) {
    if (view->IsLoading()) return true;
  }
  return false;
}

bool ArtifactsController::eventFilter(QObject* watched, QEvent* event) {
  // Ctrl+F on the tab bar with an artifact in front searches that artifact (in the artifact's
  // own text the view handles it).
  if (tabs_ && watched == tabs_->tabBar() &&
      (event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress) &&
      static_cast<QKeyEvent*>(event)->matches(QKeySequence::Find)) {
    if (viewer::ArtifactView* view = current_view()) {
      event->accept();
      if (event->type() == QEvent::KeyPress) view->FocusSearch();
      return true;
    }
  }
  return QObject::eventFilter(watched, event);
}

// ---------------------------------------------------------------------------------------------
// Links

ArtifactsController::LinkModule ArtifactsController::CurrentLinkModule() const {
  // XLA writes the artifacts for the module after optimizations (the last such state).
  const std::vector<DumpState>& states = window_->states();
  int after = -1;
  for (int r = 0; r < static_cast<int>(states.size()); ++r) {
    if (states[r].stage == StageKind::kAfterOptimizations) after = r;
  }
  for (int r = 0; after < 0 && r < static_cast<int>(states.size()); ++r) {
    if (states[r].stage == StageKind::kAfterOptimizationsVariant) after = r;
  }
  if (after >= 0) {
    if (std::shared_ptr<const Module> m = window_->state_module(after)) {
      return {std::move(m), Q(states[after].label), true};
    }
  }
  // Not parsed yet: the module shown, until it is.
  const int row = window_->current_state_row();
  return {window_->current_module(),
          row >= 0 && row < static_cast<int>(states.size()) ? Q(states[row].label) : QString(),
          false};
}

void ArtifactsController::UpdateLinks() {
  if (open_.isEmpty()) return;
  const LinkModule links = CurrentLinkModule();
  if (!links.module) return;
  for (auto it = open_.begin(); it != open_.end(); ++it) {
    // The after-optimizations module replaces anything else; a stand-in stays until it comes.
    const bool better = it->links == nullptr || (links.after && it->links != links.module);
    if (!better) continue;
    it->links = links.module;
    it->links_label = links.label;
    it->links_after = links.after;
    it.key()->SetModule(links.module);
  }
}

void ArtifactsController::OnLinkActivated(viewer::ArtifactView* view, const QString& computation,
                                          const QString& instruction) {
  QStatusBar* status = window_->statusBar();
  QString what;
  if (instruction.isEmpty()) {
    if (window_->ShowComputationByName(computation)) {
      status->showMessage(tr("Showing %1").arg(computation), 5000);
      return;
    }
    what = tr("Computation %1").arg(computation);
  } else {
    if (window_->SelectInstructionByName(instruction)) {
      status->showMessage(tr("Selected %1").arg(instruction), 5000);
      return;
    }
    what = instruction;
  }
  if (!window_->current_module()) {
    status->showMessage(tr("%1: no state is shown").arg(what), 10000);
    return;
  }
  const std::vector<DumpState>& states = window_->states();
  const int row = window_->current_state_row();
  const QString shown =
      row >= 0 && row < static_cast<int>(states.size()) ? Q(states[row].label) : QString();
  const QString from = open_.value(view).links_label;
  status->showMessage(from.isEmpty() || from == shown
                          ? tr("%1 is not in the shown state").arg(what)
                          : tr("%1 is not in the shown state; it is in %2").arg(what, from),
                      10000);
}

}  // namespace hlowb::gui
