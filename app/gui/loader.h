// Background loading for the main window: indexing a dump directory, opening a single file,
// and parsing a module's states in parallel (with fingerprints for the pass timeline). Work
// runs on the loader's own thread pool; results come back to the UI thread as signals carrying
// shared_ptr<const Module> snapshots. Every job can be cancelled, and results of superseded or
// cancelled jobs are dropped, so the UI never sees a stale answer.
#ifndef HLOWB_APP_GUI_LOADER_H_
#define HLOWB_APP_GUI_LOADER_H_

#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <QThreadPool>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/analysis/fingerprint.h"
#include "core/dump/dump_index.h"
#include "core/dump/state_loader.h"  // ModuleOpener
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb::gui {

// An open dump directory: its index and how its state files are opened. Shared by the UI and
// the workers; the index never changes once built.
//
// States are opened one by one with AnyFormatModuleOpener() rather than through
// DumpStateLoader, whose cache keeps every parsed state for its lifetime: a dump with hundreds
// of large states would not fit in memory. The window keeps a bounded set of parsed states
// (MainWindow::TrimStates) and asks for a dropped one again when it is shown.
class DumpSession {
 public:
  explicit DumpSession(DumpIndex index);
  const DumpIndex& index() const { return index_; }
  // Opens the file of `state` (thread-safe).
  absl::StatusOr<std::unique_ptr<Module>> Open(const DumpState& state) const;
  std::string PathOf(const DumpState& state) const;

 private:
  const DumpIndex index_;
  const ModuleOpener opener_;
};

// One parsed (or failed) state of the module being browsed.
struct StateResult {
  int row = -1;  // index into the states passed to LoadStates
  absl::Status status;
  std::shared_ptr<const Module> module;
  ModuleFingerprint fingerprint;
  double seconds = 0;
  QString raw_text;  // on a parse failure: the file's text, when it is text
};

// A single file opened on its own.
struct FileResult {
  QString path;
  absl::Status status;
  std::shared_ptr<const Module> module;
  QString format;       // "HLO text", "HloSnapshot (binary)", ...
  QString raw_text;     // on failure: the file's text when it is text (for the error view)
  QStringList warnings;
};

// Where a parse error points: "path:LINE:COL: message" (first line of a diagnostic).
struct ErrorLocation {
  int line = 1;
  int column = 1;
  QString message;
};
ErrorLocation ParseErrorLocation(const QString& diagnostic);

class Loader : public QObject {
  Q_OBJECT

 public:
  explicit Loader(QObject* parent = nullptr);
  // Cancels all work and waits for the workers.
  ~Loader() override;

  // Each of these supersedes (cancels) whatever was being opened before.
  void IndexDirectory(const QString& dir);
  void OpenFile(const QString& path);

  // Starts parsing `states` (all of one module) of `session`, in the order given by `order`
  // (rows into `states`), replacing any previous module's load.
  void LoadStates(std::shared_ptr<DumpSession> session, std::vector<DumpState> states,
                  std::vector<int> order);
  // Makes `row` of the current states the next to load (again, if it was delivered before and
  // the window has since dropped its module); restarts loading when a cancelled or finished
  // job did not get to it.
  void RequestState(int row);

  // Cancels everything in flight (the UI keeps what it already has).
  void Cancel();
  bool busy() const { return running_ > 0; }

 signals:
  void progress(qint64 done, qint64 total, const QString& what);
  void busyChanged(bool busy);
  void indexReady(std::shared_ptr<hlowb::gui::DumpSession> session);
  void indexFailed(const QString& dir, const QString& message);
  void fileOpened(const hlowb::gui::FileResult& result);
  void stateLoaded(const hlowb::gui::StateResult& result);
  // A state job ended: all its rows were delivered, or it was cancelled.
  void statesFinished(bool cancelled);

 private:
  struct StateJob;

  // Runs `work` on the pool; `busy` accounting happens on the UI thread.
  void Spawn(std::function<void()> work);
  void TaskDone();
  // Posts `fn` to the UI thread, dropped if generation `gen` has been superseded.
  void Post(uint64_t gen, std::function<void()> fn);
  ProgressFn ThrottledProgress(uint64_t gen);
  void StartStateWorkers(const std::shared_ptr<StateJob>& job);
  // Cancels the state job and drops everything known about the current module's states.
  void ForgetStates();

  QThreadPool pool_;
  int running_ = 0;  // UI thread only
  uint64_t open_generation_ = 0;   // index/file opens
  uint64_t state_generation_ = 0;  // state jobs
  std::shared_ptr<CancelToken> open_cancel_;
  std::shared_ptr<StateJob> state_job_;
  // What the current state job set was built from, to restart it for RequestState.
  std::shared_ptr<DumpSession> session_;
  std::vector<DumpState> states_;
  std::set<int> delivered_;  // rows with a non-cancelled result (UI thread)
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_LOADER_H_
