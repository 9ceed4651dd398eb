// ReduceRunner: `hlowb reduce` and then `hlowb bundle` in child processes (see reduce_runner.h).
#include "app/gui/reduce_runner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <utility>

namespace hlowb::gui {

namespace {

// The flags `hlowb bundle` shares with `hlowb reduce` (it replays once; it has no
// --host_transfers or time limits).
bool BundleTakes(const QString& flag) {
  static const char* const kPrefixes[] = {
      "--platform=",        "--reference_platform=", "--seed=",
      "--abs_error_bound=", "--rel_error_bound=",    "--custom_call_fallback=",
      "--custom_call_library=", "--force_fake_data", "--use_large_float_range"};
  for (const char* p : kPrefixes) {
    if (flag.startsWith(QLatin1String(p))) return true;
  }
  return false;
}

// The value after "  <key>" on one of the reducer's summary lines, or empty.
QString SummaryField(const QString& log, const QString& key) {
  for (const QString& line : log.split(QLatin1Char('\n'))) {
    const QString t = line.trimmed();
    if (t.startsWith(key)) return t.mid(key.size()).trimmed();
  }
  return {};
}

}  // namespace

std::optional<ReduceProgressLine> ParseReduceProgressLine(const QString& line) {
  static const QRegularExpression re(QStringLiteral(
      R"(^reduce:\s+([0-9.]+) s\s+(\S+)\s+(\d+) instructions left \(of (\d+)\), (\d+) candidates, (\d+) kept\s*$)"));
  const QRegularExpressionMatch m = re.match(line);
  if (!m.hasMatch()) return std::nullopt;
  ReduceProgressLine p;
  p.seconds = m.captured(1).toDouble();
  p.phase = m.captured(2);
  p.instructions = m.captured(3).toLongLong();
  p.original_instructions = m.captured(4).toLongLong();
  p.candidates = m.captured(5).toLongLong();
  p.kept = m.captured(6).toLongLong();
  return p;
}

ReduceRunner::ReduceRunner(QObject* parent) : QObject(parent) {}

ReduceRunner::~ReduceRunner() {
  for (QProcess* p : {process_.data(), bundle_process_.data()}) {
    if (p == nullptr) continue;
    p->disconnect(this);
    p->kill();
    p->waitForFinished(5000);
  }
}

bool ReduceRunner::Start(const ReduceJob& job) {
  if (running() || job.program.isEmpty() || job.input.isEmpty() || job.until.isEmpty() ||
      job.out_dir.isEmpty()) {
    return false;
  }
  job_ = job;
  log_.clear();
  pending_.clear();
  stop_requested_ = false;
  outcome_ = ReduceOutcome();
  QDir dir(job.out_dir);
  const QString reduced = dir.filePath(QStringLiteral("reduced.hlo"));
  if (!QDir().mkpath(job.out_dir)) {
    outcome_.message = tr("cannot create %1").arg(job.out_dir);
    // Reported on the next turn of the event loop, like every other outcome.
    QMetaObject::invokeMethod(this, [this] { emit finished(outcome_); }, Qt::QueuedConnection);
    return true;
  }
  QFile::remove(reduced);
  QFile::remove(dir.filePath(QStringLiteral("reduced.literals.pb")));
  QStringList args = {QStringLiteral("reduce"), job.input,
                      QStringLiteral("--until=") + job.until, QStringLiteral("-o"), reduced,
                      QStringLiteral("--time_limit=%1").arg(job.time_limit_seconds, 0, 'g', 10)};
  args << job.replay_flags;
  auto* process = new QProcess(this);
  process_ = process;
  process->setProcessChannelMode(QProcess::MergedChannels);
  connect(process, &QProcess::readyRead, this, [this, process] {
    const QString text = QString::fromUtf8(process->readAll());
    log_ += text;
    emit output(text);
    pending_ += text;
    int nl;
    while ((nl = pending_.indexOf(QLatin1Char('\n'))) >= 0) {
      const QString line = pending_.left(nl);
      pending_.remove(0, nl + 1);
      if (std::optional<ReduceProgressLine> p = ParseReduceProgressLine(line)) emit progress(*p);
    }
  });
  connect(process, &QProcess::finished, this, [this, process](int code, QProcess::ExitStatus st) {
    const QString rest = QString::fromUtf8(process->readAll());
    log_ += rest;
    if (!rest.isEmpty()) emit output(rest);
    process->deleteLater();
    process_ = nullptr;
    OnReduceFinished(code, st != QProcess::NormalExit);
  });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->deleteLater();
    process_ = nullptr;
    outcome_.message = tr("cannot start %1").arg(process->program());
    Finish();
  });
  process->start(job.program, args);
  return true;
}

void ReduceRunner::Stop() {
  if (process_ == nullptr) return;
  if (stop_requested_) {
    process_->kill();
    return;
  }
  stop_requested_ = true;
  process_->terminate();  // SIGTERM
}

void ReduceRunner::OnReduceFinished(int code, bool crashed) {
  const QDir dir(job_.out_dir);
  outcome_.stopped = stop_requested_;
  outcome_.log = log_;
  QFile logfile(dir.filePath(QStringLiteral("reduce.log")));
  if (logfile.open(QIODevice::WriteOnly | QIODevice::Truncate)) logfile.write(log_.toUtf8());
  const QString reduced = dir.filePath(QStringLiteral("reduced.hlo"));
  const QString literals = dir.filePath(QStringLiteral("reduced.literals.pb"));
  if (QFileInfo::exists(reduced)) outcome_.reduced_path = reduced;
  if (QFileInfo::exists(literals)) outcome_.literals_path = literals;
  outcome_.failure = SummaryField(log_, QStringLiteral("failure (--until=") + job_.until +
                                            QStringLiteral("):"));
  outcome_.reproduce = SummaryField(log_, QStringLiteral("reproduce:"));
  static const QRegularExpression counts(QStringLiteral(R"(instructions: (\d+) -> (\d+))"));
  if (const QRegularExpressionMatch m = counts.match(log_); m.hasMatch()) {
    outcome_.original_instructions = m.captured(1).toLongLong();
    outcome_.reduced_instructions = m.captured(2).toLongLong();
  }
  outcome_.ok = !crashed && code == 0 && !outcome_.reduced_path.isEmpty();
  if (outcome_.ok) {
    outcome_.message = tr("%1 → %2 instructions; %3")
                           .arg(outcome_.original_instructions)
                           .arg(outcome_.reduced_instructions)
                           .arg(SummaryField(log_, QStringLiteral("reduced module:")));
  } else if (crashed) {
    outcome_.message = stop_requested_ ? tr("stopped before a reduced module was written")
                                       : tr("hlowb reduce crashed");
  } else {
    // The reducer's own error line says what went wrong.
    QString error;
    for (const QString& line : log_.split(QLatin1Char('\n'))) {
      if (line.startsWith(QLatin1String("error: ")) || line.startsWith(QLatin1String("hlowb reduce: ")) ||
          line.contains(QLatin1String("CHECK FAILED"))) {
        error = line.trimmed();
      }
    }
    outcome_.message = error.isEmpty() ? tr("hlowb reduce exited with code %1").arg(code) : error;
  }
  if (outcome_.ok && job_.bundle) {
    StartBundle();
  } else {
    Finish();
  }
}

void ReduceRunner::StartBundle() {
  const QString bundle = QDir(job_.out_dir).filePath(QStringLiteral("bundle"));
  QStringList args = {QStringLiteral("bundle"), outcome_.reduced_path, QStringLiteral("-o"),
                      bundle};
  for (const QString& flag : job_.replay_flags) {
    if (BundleTakes(flag)) args << flag;
  }
  if (!outcome_.literals_path.isEmpty()) {
    args << QStringLiteral("--input_literals_file=") + outcome_.literals_path;
  }
  auto* process = new QProcess(this);
  bundle_process_ = process;
  process->setProcessChannelMode(QProcess::MergedChannels);
  connect(process, &QProcess::finished, this,
          [this, process, bundle](int code, QProcess::ExitStatus st) {
            const QString text = QString::fromUtf8(process->readAll()).trimmed();
            process->deleteLater();
            bundle_process_ = nullptr;
            if (st == QProcess::NormalExit && code == 0) {
              outcome_.bundle_dir = bundle;
            } else {
              outcome_.bundle_error = text.isEmpty() ? tr("exit code %1").arg(code) : text;
            }
            Finish();
          });
  connect(process, &QProcess::errorOccurred, this, [this, process](QProcess::ProcessError e) {
    if (e != QProcess::FailedToStart) return;
    process->deleteLater();
    bundle_process_ = nullptr;
    outcome_.bundle_error = tr("cannot start %1").arg(process->program());
    Finish();
  });
  process->start(job_.program, args);
}

void ReduceRunner::Finish() {
  outcome_.log = log_;
  emit finished(outcome_);
}

}  // namespace hlowb::gui
