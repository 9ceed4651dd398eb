// Automatic reduction from the window: runs `hlowb reduce` (replay/reduce/reducer.h) on a
// failing module in a child process — a crash reduction or a reducer bug cannot take the window
// down, and the window's own replay worker stays free — reports its progress as it prints it,
// stops it on request (SIGTERM: the reducer keeps the smallest failing module found so far,
// checks it and writes it), and then packs the reduced module into a bug bundle with
// `hlowb bundle`. Everything lands in one folder:
//   reduced.hlo            the smallest module that still fails the same way
//   reduced.literals.pb    its arguments (when hlowb replay would not make them by itself)
//   reduce.log             everything `hlowb reduce` printed
//   bundle/                the bug bundle of the reduced module (see app/cli/bundle.cc)
#ifndef HLOWB_APP_GUI_REDUCE_RUNNER_H_
#define HLOWB_APP_GUI_REDUCE_RUNNER_H_

#include <QMetaType>
#include <QObject>
#include <QPointer>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <optional>



namespace hlowb::gui {

// What to reduce and how.
struct ReduceJob {
  QString program;     // the hlowb executable
  QString input;       // the module: HLO text, a proto or a snapshot (which brings arguments)
  QString until;       // "mismatch", "nonfinite", "crash" or "error"
  // Replay flags, passed on as they are to `hlowb reduce` and, for the bundle, to
  // `hlowb bundle` (--platform=, --reference_platform=, --seed=, --force_fake_data,
  // --abs_error_bound=, --rel_error_bound=, --host_transfers=, --input_literals_file=).
  QStringList replay_flags;
  double time_limit_seconds = 300;
  QString out_dir;     // created when missing
  bool bundle = true;  // also write bundle/
};

// One progress line of `hlowb reduce` ("reduce:   12.3 s  extract   41 instructions left (of
// 2301), 57 candidates, 9 kept").
struct ReduceProgressLine {
  double seconds = 0;
  QString phase;
  qint64 instructions = 0;
  qint64 original_instructions = 0;
  qint64 candidates = 0;
  qint64 kept = 0;
};
std::optional<ReduceProgressLine> ParseReduceProgressLine(const QString& line);

// How a reduction ended.
struct ReduceOutcome {
  bool ok = false;        // the reduced module was written and fails the same way
  bool stopped = false;   // Stop() was asked for (the smallest module so far was kept)
  QString message;        // what went wrong, or the reducer's summary
  QString reduced_path;   // reduced.hlo when written
  QString literals_path;  // reduced.literals.pb when written
  QString reproduce;      // the command that shows the reduced module failing
  QString failure;        // how the original fails
  qint64 original_instructions = 0;
  qint64 reduced_instructions = 0;
  QString bundle_dir;     // when the bundle was written
  QString bundle_error;   // when it could not be
  QString log;            // everything the reducer printed
};

class ReduceRunner : public QObject {
  Q_OBJECT

 public:
  explicit ReduceRunner(QObject* parent = nullptr);
  ~ReduceRunner() override;

  // Starts `job`; false (and nothing started) when one is running or the job is incomplete.
  bool Start(const ReduceJob& job);
  // Asks the reducer to stop (SIGTERM): it checks and writes the smallest failing module found
  // so far, and finished() reports it with `stopped` set. A second call kills the reducer.
  void Stop();
  bool running() const { return process_ != nullptr || bundle_process_ != nullptr; }
  // Everything the reducer printed so far.
  QString log() const { return log_; }
  const ReduceJob& job() const { return job_; }

 signals:
  void progress(const hlowb::gui::ReduceProgressLine& line);
  void output(const QString& text);
  // The reduction and (when asked for) the bundle are done.
  void finished(const hlowb::gui::ReduceOutcome& outcome);

 private:
  void OnReduceFinished(int code, bool crashed);
  void StartBundle();
  void Finish();

  ReduceJob job_;
  QPointer<QProcess> process_;
  QPointer<QProcess> bundle_process_;
  QString log_;
  QString pending_;  // an unfinished line of output
  bool stop_requested_ = false;
  ReduceOutcome outcome_;
};

}  // namespace hlowb::gui

Q_DECLARE_METATYPE(hlowb::gui::ReduceProgressLine)
Q_DECLARE_METATYPE(hlowb::gui::ReduceOutcome)

#endif  // HLOWB_APP_GUI_REDUCE_RUNNER_H_
