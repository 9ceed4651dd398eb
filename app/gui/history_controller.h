// The History dock of the main window: the selected instruction followed through every state of
// the pass timeline (created, changed, renamed, fused, removed, and by which pass). The trace
// needs every state parsed: the controller asks for the missing ones, holds them while it
// traces (the window may drop states it does not show to save memory), and runs the trace on a
// worker thread of its own; a newer selection or state supersedes a trace on its way, and its
// results are dropped by generation.
//
// The controller owns the panel, its dock and the trace's state. It reads the document and
// navigates through the window's Host interface; the window tells it when the selection or the
// shown state changes (Schedule) and when states arrive (OnStateLoaded, OnLoadingFinished).
#ifndef HLOWB_APP_GUI_HISTORY_CONTROLLER_H_
#define HLOWB_APP_GUI_HISTORY_CONTROLLER_H_

#include <QObject>
#include <QString>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/analysis/timeline.h"
#include "core/dump/dump_index.h"
#include "core/ir/module.h"

class QDockWidget;
class QMainWindow;
class QMenu;
class QThreadPool;

namespace hlowb::viewer {
class HistoryPanel;
}  // namespace hlowb::viewer

namespace hlowb::gui {

class HistoryController : public QObject {
  Q_OBJECT

 public:
  // What the controller asks of the window.
  class Host {
   public:
    virtual ~Host() = default;
    // The module the views show (null when none) and its timeline row (-1 for a single file).
    virtual std::shared_ptr<const Module> ShownModule() const = 0;
    virtual int ShownRow() const = 0;
    // Whether a dump directory is open (history needs its timeline).
    virtual bool HasDumpSession() const = 0;
    // The chosen module's states in timeline order, and each one's parsed module (null while
    // not loaded, or dropped to save memory) and whether it failed to parse.
    virtual const std::vector<DumpState>& TimelineStates() const = 0;
    virtual std::shared_ptr<const Module> StateModule(int row) const = 0;
    virtual bool StateFailed(int row) const = 0;
    // The selected instruction's name (kept across states); empty when none.
    virtual QString SelectedName() const = 0;
    // Asks the loader for timeline row `row` (again, if it was dropped).
    virtual void RequestState(int row) = 0;
    // Shows timeline row `row` with the instruction `name` selected there (empty: the
    // selection's name stays).
    virtual void ShowStateSelecting(int row, const QString& name) = 0;
    // Re-evaluates whether the window is busy (the controller's IsBusy counts).
    virtual void CheckIdle() = 0;
  };

  // Makes the History dock, a tab behind Properties on the right (`properties_dock`, which
  // stays in front), and adds its toggle and Show History (Ctrl+Shift+H) to `view_menu`.
  HistoryController(QMainWindow* window, Host* host, QDockWidget* properties_dock,
                    QMenu* view_menu);
  // Stops a trace on its way and waits for its thread.
  ~HistoryController() override;

  viewer::HistoryPanel* panel() const { return panel_; }
  QDockWidget* dock() const { return dock_; }

  // Recomputes the panel for the selected instruction in the shown state, when the dock is
  // shown: asks for the states not loaded, then traces.
  void Update();
  // Update() on the next turn of the event loop (once, however often it is asked).
  void Schedule();
  // Timeline row `row` arrived (or failed): held for the trace; the trace starts when it was
  // the last one missing.
  void OnStateLoaded(int row);
  // Loading stopped: a trace waiting for states starts with what there is.
  void OnLoadingFinished();
  // Another module was chosen: the states held for the trace go.
  void ForgetKeptStates();
  // Scheduled, waiting for states or tracing.
  bool IsBusy() const;

 private:
  void StartTrace();
  void FinishTrace(uint64_t generation, const std::vector<ProvenanceStep>& steps,
                   const std::string& error);

  QMainWindow* window_ = nullptr;
  Host* host_ = nullptr;
  viewer::HistoryPanel* panel_ = nullptr;
  QDockWidget* dock_ = nullptr;
  QThreadPool* pool_ = nullptr;
  std::shared_ptr<std::atomic<uint64_t>> latest_;  // the generation a trace may still report
  uint64_t generation_ = 0;
  bool scheduled_ = false;
  bool tracing_ = false;
  bool waiting_ = false;  // for states to load
  QString key_;           // "row/name" the panel shows or computes
  std::vector<std::shared_ptr<const Module>> keep_;  // states loaded for the trace
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_HISTORY_CONTROLLER_H_
