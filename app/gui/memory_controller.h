// The Memory dock of the main window: the memory view (viewer/widgets/memory_view.h) of the
// shown state. A dump's after-optimizations state shows XLA's own buffer assignment when the
// dump holds one; every other state, and a single file, shows hlowb's buffer assignment of its
// module (app/gui/memory_source.h). While a comparison is shown, the base state's profile is the
// view's baseline (peak and totals before and after). Clicking a point of the chart or a buffer
// selects its instruction in the graph, the text and the properties.
//
// Profiles are computed on worker threads of the controller's own (at a lower priority than the
// UI thread, once the window has painted what changed), only while the dock is shown (it
// catches up when it is shown again); a newer state or comparison cancels the job on its way
// and a stale result is dropped by generation. The last few profiles of the open document are
// kept, so stepping back and forth does not compute them again.
//
// The controller uses only the window's public API: it is made with the window, adds its dock
// (a tab behind Properties, which computes nothing until brought to the front) and follows the
// window's signals.
#ifndef HLOWB_APP_GUI_MEMORY_CONTROLLER_H_
#define HLOWB_APP_GUI_MEMORY_CONTROLLER_H_

#include <QObject>
#include <QString>
#include <cstdint>
#include <list>
#include <memory>

#include "core/analysis/memory_profile.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

class QDockWidget;
class QLabel;
class QThreadPool;

namespace hlowb::viewer {
class MemoryView;
}  // namespace hlowb::viewer

namespace hlowb::gui {

class MainWindow;

class MemoryController : public QObject {
  Q_OBJECT

 public:
  // Profiles kept per document (least recently shown go first).
  static constexpr int kCachedProfiles = 8;

  // Makes the memory view and the Memory dock (object name "memoryDock", a tab beside
  // Properties on the right, behind it by default; its toggle is in the View menu).
  explicit MemoryController(MainWindow* window);
  // Cancels the profiles on their way and waits for the worker.
  ~MemoryController() override;

  viewer::MemoryView* view() const { return view_; }
  QDockWidget* dock() const { return dock_; }
  // Where the shown profile came from ("XLA's buffer assignment (FILE)" or "hlowb's buffer
  // assignment; schedule: ..."), empty while none is shown. The dock's status line shows it.
  QString origin() const { return origin_; }
  // A profile (of the shown state or of the comparison's base) is due or being computed.
  bool IsBusy() const { return scheduled_ || shown_.running || base_.running; }
  // Profiles computed so far (cache hits not counted).
  int jobs_started() const { return jobs_started_; }

  // Shows the profile of the window's shown state and, while comparing, the base state's as
  // the baseline: from the cache, or computed in the background. Does nothing while the dock
  // is hidden (showing it calls this).
  void Refresh();
  // Refresh() on the next turn of the event loop (once, however often it is asked).
  void Schedule();

  // Whether the dock is on screen (shown and, when it shares a place with other docks, the tab
  // in front): only then does it compute.
  bool IsOnScreen() const { return on_screen_; }

 signals:
  // A profile, or why there is none, was put in the view (the shown state's, not the
  // baseline's).
  void profileShown();
  // The comparison's baseline was put in the view or removed.
  void baselineShown();

 private:
  // What identifies a profile: the document, the dump module, the timeline row (-1: a single
  // file, whose document is its module).
  struct Key {
    uint64_t document = 0;
    int module_index = -1;
    int row = -1;
    bool operator==(const Key& other) const {
      return document == other.document && module_index == other.module_index &&
             row == other.row;
    }
  };
  struct Cached {
    Key key;
    std::shared_ptr<const MemoryProfile> profile;
    QString label;
    QString origin;
  };
  // One of the two profiles the view shows: the shown state's or the comparison base's.
  struct Slot {
    Key key;
    bool has_key = false;     // `key` is what the view shows or is being computed
    bool running = false;     // a job for `key` is on its way
    uint64_t generation = 0;  // of the latest job; older results are dropped
    std::shared_ptr<CancelToken> cancel;
  };
  enum class Which { kShown, kBase };

  // The document the window has open now; a new one empties the cache.
  uint64_t CurrentDocument();
  // What the view calls timeline row `row` ("jit_f: after_optimizations").
  QString LabelOf(const Module* module, int row) const;
  void ShowState();
  void ShowBaseline();
  // Starts computing `key`'s profile of `module` into `which`.
  void Start(Which which, const Key& key, std::shared_ptr<const Module> module, int row,
             const QString& label);
  void Finish(Which which, uint64_t generation, const Key& key, bool ok,
              std::shared_ptr<const MemoryProfile> profile, const QString& label,
              const QString& origin, double seconds, const QString& error, bool cancelled);
  void Stop(Slot& slot);
  const Cached* Find(const Key& key);
  void Remember(const Key& key, std::shared_ptr<const MemoryProfile> profile,
                const QString& label, const QString& origin);
  // The dock's status line: where the shown profile came from, and the baseline's state.
  void UpdateStatus();
  void OnInstructionActivated(const QString& name);

  MainWindow* window_ = nullptr;
  viewer::MemoryView* view_ = nullptr;
  QDockWidget* dock_ = nullptr;
  QLabel* status_ = nullptr;
  QThreadPool* pool_ = nullptr;
  Slot shown_;
  Slot base_;
  QString origin_;
  qint64 origin_ms_ = -1;  // how long the shown profile took; -1: from the cache
  QString shown_status_;   // the status line without a profile ("Computing…")
  QString base_status_;    // the baseline's part of the status line
  QString shown_source_;   // the shown profile's source: "xla" or "hlowb"
  int jobs_started_ = 0;
  bool scheduled_ = false;
  // The open document: the dump session, or a single file's module.
  const void* document_identity_ = nullptr;
  std::weak_ptr<const void> document_alive_;
  uint64_t document_ = 0;
  std::list<Cached> cache_;  // most recently used first
  bool on_screen_ = false;
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_MEMORY_CONTROLLER_H_
