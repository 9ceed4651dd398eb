// The main window's artifacts: the Artifacts dock, which lists the files XLA wrote beside the
// chosen dump module's states (buffer assignment, memory-usage report, live ranges, thunk
// sequence, LLVM IR, PTX, MLIR, autotune results, debug options, ...; its split partner's too),
// grouped by kind and filterable, and the tabs on the text side of the window: the HLO text
// first (a fixed tab), then one read-only ArtifactView (viewer/text/artifact_view.h) per opened
// artifact. The tab bar shows only while an artifact is open, so the window looks as it did
// without one.
//
// Files load on worker threads (ArtifactView does). Names of the module's instructions and
// computations in an artifact are links: they use the after-optimizations state's module (the
// one XLA wrote the artifacts for) once it is parsed, the shown module until then, and a
// followed link selects the instruction (or shows the computation) in the window, or says in the
// status bar that the shown state has no such name.
//
// The controller keeps to the window's public API: it follows the document through indexLoaded,
// stateShown, statesLoaded and openFailed, lists the module of current_module_index(), and
// selects through SelectInstructionByName and ShowComputationByName. Another document closes
// every artifact tab; another module closes the tabs of files that are not its artifacts.
#ifndef HLOWB_APP_GUI_ARTIFACTS_CONTROLLER_H_
#define HLOWB_APP_GUI_ARTIFACTS_CONTROLLER_H_

#include <QHash>
#include <QObject>
#include <QPointer>
#include <QString>
#include <QStringList>
#include <memory>
#include <vector>

#include "core/dump/dump_index.h"
#include "core/ir/module.h"

class QAbstractItemModel;
class QDockWidget;
class QLabel;
class QLineEdit;
class QModelIndex;
class QSortFilterProxyModel;
class QStandardItemModel;
class QTabWidget;
class QTreeView;
class QWidget;

namespace hlowb::viewer {
class ArtifactView;
}  // namespace hlowb::viewer

namespace hlowb::gui {

class DumpSession;
class MainWindow;

class ArtifactsController : public QObject {
  Q_OBJECT

 public:
  // Makes the tab widget with `hlo_pane` (the window's HLO text pane) as its first tab, which
  // cannot be closed; the window puts tabs() where the pane would go.
  ArtifactsController(MainWindow* window, QWidget* hlo_pane);
  ~ArtifactsController() override;

  // Once the window has its docks and View menu: adds the Artifacts dock (a tab beside
  // Properties; its toggle in the View menu) and starts following the window's document.
  void BuildDock();

  QTabWidget* tabs() const;
  QDockWidget* dock() const;
  QTreeView* list() const { return list_; }
  QLineEdit* filter() const { return filter_; }
  // The list's model as shown: kind groups, each with its artifacts (filtered by filter()).
  QAbstractItemModel* list_model() const;
  // What the dock says above the list: how many artifacts of which module, or why there are
  // none (nothing open, a single file, no module chosen, a module without artifacts).
  QString message() const;
  // The listed artifacts' absolute paths, in list order (the filter aside).
  QStringList ListedPaths() const;

  // Opens the listed artifact at `path` in a tab (loading on a worker thread), or brings its tab
  // to the front when it is open; returns its view. Null when no listed artifact has that path.
  viewer::ArtifactView* OpenArtifact(const QString& path);
  // The open artifact tabs' views, in tab order, and the one in front (null: the HLO tab).
  std::vector<viewer::ArtifactView*> views() const;
  viewer::ArtifactView* current_view() const;
  // The tab of `path`'s view; -1 when it is not open.
  int TabOf(const QString& path) const;
  // Closes tab `index` (the HLO tab stays), or every artifact tab.
  void CloseTab(int index);
  void CloseAllTabs();
  // Whether an open artifact is still loading.
  bool IsLoading() const;

 private:
  struct Tab {
    int file = -1;                        // into the session's files
    std::shared_ptr<const Module> links;  // the module whose names are linked
    QString links_label;                  // the state `links` came from ("" when unknown)
    bool links_after = false;             // `links` is the after-optimizations module
  };
  struct LinkModule {
    std::shared_ptr<const Module> module;
    QString label;       // its state's label in the timeline
    bool after = false;  // the after-optimizations state's (else a stand-in: the shown one)
  };

  bool eventFilter(QObject* watched, QEvent* event) override;
  // Follows the window: relists when the document or the module changed, relinks the views.
  void Refresh();
  void Relist();
  void UpdateMessage();
  void UpdateLinks();
  LinkModule CurrentLinkModule() const;
  void OnActivated(const QModelIndex& proxy_index);
  void OnLinkActivated(viewer::ArtifactView* view, const QString& computation,
                       const QString& instruction);
  QString AbsolutePath(int file) const;

  MainWindow* window_ = nullptr;
  QPointer<QTabWidget> tabs_;
  QPointer<QDockWidget> dock_;
  QPointer<QWidget> panel_;  // the dock's contents
  QLabel* message_ = nullptr;
  QLineEdit* filter_ = nullptr;
  QTreeView* list_ = nullptr;
  QStandardItemModel* model_ = nullptr;
  QSortFilterProxyModel* proxy_ = nullptr;

  // The document and module listed.
  std::shared_ptr<const DumpSession> session_;
  int module_index_ = -1;
  std::vector<int> listed_;  // file indexes, list order
  QHash<viewer::ArtifactView*, Tab> open_;
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_ARTIFACTS_CONTROLLER_H_
