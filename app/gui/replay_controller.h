// The UI side of replay: owns a `hlowb worker` child process and talks to it in the worker
// protocol (replay/worker/worker.proto), so that a crash, hang or out-of-memory in a replay
// never takes the window with it.
//
// Requests carry ids. At most one request runs and one waits: a newer Submit replaces the
// waiting one (which finishes as "replaced"). Answers to requests the controller no longer
// waits for are dropped. When the worker dies or misses the deadline, the running request
// fails with what happened and the last instruction its progress named; the next Submit
// starts a fresh worker. Nothing here blocks the UI thread.
#ifndef HLOWB_APP_GUI_REPLAY_CONTROLLER_H_
#define HLOWB_APP_GUI_REPLAY_CONTROLLER_H_

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTimer>
#include <cstdint>
#include <memory>
#include <optional>

#include "replay/worker/worker.pb.h"

namespace hlowb::gui {

class ReplayController : public QObject {
  Q_OBJECT

 public:
  explicit ReplayController(QObject* parent = nullptr);
  ~ReplayController() override;

  // The worker executable and its arguments (default: this program, "worker").
  void SetWorkerCommand(const QString& program, const QStringList& arguments);
  // The program the worker runs (the hlowb executable, which also writes bundles).
  QString program() const { return program_; }
  QStringList worker_arguments() const { return arguments_; }
  // A request with no answer for this long fails and the worker is killed (default 10 min).
  void SetDeadlineMs(int ms) { deadline_ms_ = ms; }

  // Queues `request` (its id is assigned here) and returns the id.
  uint64_t Submit(const hlowb::worker::ReplayRequest& request);
  // Stops a running or waiting request; it then fails with "cancelled".
  void Cancel(uint64_t id);
  bool IsBusy() const { return running_id_ != 0 || pending_.has_value(); }
  bool WorkerRunning() const { return process_ != nullptr; }
  // Ends the worker process now (a running request fails with "stopped"); the next Submit
  // starts a new one with the current command.
  void StopWorker();

 signals:
  void progress(quint64 id, qint64 done, qint64 total, const QString& what);
  // The result shares the parsed answer (its values can be large); it stays valid as long as
  // the pointer is held.
  void finished(quint64 id, std::shared_ptr<const hlowb::worker::ReplayResult> result);
  // `message` says what happened; `last_instruction` is the last progress text (may be empty).
  void failed(quint64 id, const QString& message, const QString& last_instruction);

 private:
  void EnsureWorker();
  void SendNext();
  void Send(const hlowb::worker::Request& request);
  void OnReadyRead();
  void ProcessFrames();
  void Handle(std::shared_ptr<hlowb::worker::Response> response);
  // Answers this large are parsed on a worker thread.
  static constexpr uint32_t kAsyncParseBytes = 1u << 20;
  bool parsing_ = false;
  void OnWorkerGone(const QString& what);
  void Fail(uint64_t id, const QString& message);

  QString program_;
  QStringList arguments_;
  int deadline_ms_ = 10 * 60 * 1000;
  QProcess* process_ = nullptr;
  QByteArray buffer_;
  QTimer deadline_;
  uint64_t next_id_ = 1;
  uint64_t running_id_ = 0;
  QString last_what_;
  std::optional<hlowb::worker::Request> pending_;
};

}  // namespace hlowb::gui

#endif  // HLOWB_APP_GUI_REPLAY_CONTROLLER_H_
