#include "app/gui/loader.h"

#include <QMetaObject>
#include <QRegularExpression>
#include <QThread>
#include <algorithm>
#include <atomic>
#include <chrono>

#include "core/proto/open_file.h"
#include "core/support/file_util.h"

namespace hlowb::gui {

DumpSession::DumpSession(DumpIndex index)
    : index_(std::move(index)), opener_(AnyFormatModuleOpener()) {}

std::string DumpSession::PathOf(const DumpState& state) const {
  const int file = state.file();
  if (file < 0 || file >= static_cast<int>(index_.files.size())) return std::string();
  return index_.root + "/" + index_.files[file].path;
}

absl::StatusOr<std::unique_ptr<Module>> DumpSession::Open(const DumpState& state) const {
  const std::string path = PathOf(state);
  if (path.empty()) return absl::NotFoundError("state " + state.label + " has no file");
  return opener_(path);
}

ErrorLocation ParseErrorLocation(const QString& diagnostic) {
  ErrorLocation loc;
  loc.message = diagnostic.section('\n', 0, 0);
  // "path:LINE:COL: message", either the first line or, when the file could be several
  // formats, the HLO text entry of the "formats tried" list. The path may hold colons, so the
  // last ":LINE:COL: " on the line counts.
  static const QRegularExpression re(
      QStringLiteral("^\\s*(?:HLO text: )?(.+):(\\d+):(\\d+): (.*)$"));
  for (const QString& line : diagnostic.split('\n')) {
    QRegularExpressionMatch m = re.match(line);
    if (!m.hasMatch()) continue;
    loc.line = std::max(1, m.captured(2).toInt());
    loc.column = std::max(1, m.captured(3).toInt());
    loc.message = m.captured(4);
    break;
  }
  return loc;
}

namespace {

// The text of a file that failed to parse, for the error view; empty unless it is text.
QString ReadRawText(const std::string& path) {
  absl::StatusOr<std::string> bytes = ReadFileToString(path);
  if (!bytes.ok() || bytes->size() > (size_t{64} << 20) ||
      !LooksLikeHloText(path, std::string_view(*bytes).substr(0, 4096))) {
    return QString();
  }
  return QString::fromUtf8(bytes->data(), static_cast<qsizetype>(bytes->size()));
}

}  // namespace

struct Loader::StateJob {
  uint64_t gen = 0;
  std::shared_ptr<DumpSession> session;
  std::vector<DumpState> states;
  CancelToken cancel;
  std::mutex mu;
  std::deque<int> pending;  // rows not yet taken by a worker
  std::set<int> taken;
  int workers = 0;  // running workers, under mu
  std::atomic<int64_t> done{0};
  int64_t total = 0;
};

Loader::Loader(QObject* parent) : QObject(parent) {
  pool_.setMaxThreadCount(std::max(2, QThread::idealThreadCount()));
}

Loader::~Loader() {
  if (open_cancel_) open_cancel_->Cancel();
  if (state_job_) state_job_->cancel.Cancel();
  pool_.waitForDone();
}

void Loader::Spawn(std::function<void()> work) {
  if (running_++ == 0) emit busyChanged(true);
  pool_.start([this, work = std::move(work)] {
    work();
    QMetaObject::invokeMethod(this, [this] { TaskDone(); }, Qt::QueuedConnection);
  });
}

void Loader::TaskDone() {
  if (--running_ == 0) emit busyChanged(false);
}

void Loader::Post(uint64_t, std::function<void()> fn) {
  QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection);
}

ProgressFn Loader::ThrottledProgress(uint64_t gen) {
  auto last = std::make_shared<std::atomic<int64_t>>(0);
  return [this, gen, last](int64_t done, int64_t total, const std::string& what) {
    using namespace std::chrono;
    int64_t now = duration_cast<milliseconds>(steady_clock::now().time_since_epoch()).count();
    int64_t prev = last->load();
    if (now - prev < 50 && done != total) return;
    if (!last->compare_exchange_strong(prev, now)) return;
    QString text = QString::fromStdString(what);
    Post(gen, [this, gen, done, total, text] {
      if (gen == open_generation_) emit progress(done, total, text);
    });
  };
}

void Loader::ForgetStates() {
  if (state_job_) state_job_->cancel.Cancel();
  state_job_.reset();
  ++state_generation_;  // drops results still on their way
  session_.reset();
  states_.clear();
  delivered_.clear();
}

void Loader::IndexDirectory(const QString& dir) {
  Cancel();
  ForgetStates();
  const uint64_t gen = ++open_generation_;
  auto cancel = std::make_shared<CancelToken>();
  open_cancel_ = cancel;
  ProgressFn report = ThrottledProgress(gen);
  emit progress(0, 0, tr("Indexing %1").arg(dir));
  Spawn([this, gen, cancel, report, dir] {
    IndexOptions options;
    options.cancel = cancel.get();
    options.progress = report;
    absl::StatusOr<DumpIndex> index = IndexDumpDirectory(dir.toStdString(), options);
    if (index.ok() && cancel->IsCancelled()) index = absl::CancelledError("indexing was cancelled");
    std::shared_ptr<DumpSession> session;
    QString error;
    if (index.ok()) {
      session = std::make_shared<DumpSession>(std::move(*index));
    } else {
      error = QString::fromStdString(std::string(index.status().message()));
    }
    Post(gen, [this, gen, session, error, dir] {
      if (gen != open_generation_) return;
      if (session) {
        emit indexReady(session);
      } else {
        emit indexFailed(dir, error);
      }
    });
  });
}

void Loader::OpenFile(const QString& path) {
  Cancel();
  ForgetStates();
  const uint64_t gen = ++open_generation_;
  auto cancel = std::make_shared<CancelToken>();
  open_cancel_ = cancel;
  emit progress(0, 0, tr("Opening %1").arg(path));
  Spawn([this, gen, cancel, path] {
    FileResult result;
    result.path = path;
    const std::string p = path.toStdString();
    absl::StatusOr<OpenedHloFile> opened = OpenHloFile(p);
    if (opened.ok() && opened->modules.empty()) {
      opened = absl::InvalidArgumentError(p + ": the file holds no module");
    }
    if (opened.ok()) {
      result.format = QString::fromUtf8(HloFileFormatName(opened->format).data(),
                                         static_cast<int>(HloFileFormatName(opened->format).size()));
      if (opened->gzipped) result.format += QStringLiteral(", gzip");
      for (const std::string& w : opened->warnings) result.warnings << QString::fromStdString(w);
      result.module = std::shared_ptr<const Module>(std::move(opened->modules.front().module));
    } else {
      result.status = opened.status();
      // Show the raw text when the file is text (a parse error points into it).
      result.raw_text = ReadRawText(p);
    }
    if (cancel->IsCancelled()) return;
    Post(gen, [this, gen, result] {
      if (gen == open_generation_) emit fileOpened(result);
    });
  });
}

void Loader::LoadStates(std::shared_ptr<DumpSession> session, std::vector<DumpState> states,
                        std::vector<int> order) {
  if (state_job_) state_job_->cancel.Cancel();
  state_job_.reset();
  session_ = std::move(session);
  states_ = std::move(states);
  delivered_.clear();
  auto job = std::make_shared<StateJob>();
  job->gen = ++state_generation_;
  job->session = session_;
  job->states = states_;
  for (int row : order) {
    if (row >= 0 && row < static_cast<int>(states_.size())) job->pending.push_back(row);
  }
  job->total = static_cast<int64_t>(job->pending.size());
  state_job_ = job;
  StartStateWorkers(job);
}

void Loader::StartStateWorkers(const std::shared_ptr<StateJob>& job) {
  int n = 0;
  {
    std::lock_guard<std::mutex> lock(job->mu);
    n = std::min<int>(pool_.maxThreadCount(), static_cast<int>(job->pending.size()));
    job->workers += n;
  }
  if (n == 0) {
    emit statesFinished(false);
    return;
  }
  emit progress(0, job->total, tr("Loading states"));
  for (int w = 0; w < n; ++w) {
    Spawn([this, job] {
      for (;;) {
        int row = -1;
        {
          std::lock_guard<std::mutex> lock(job->mu);
          if (job->cancel.IsCancelled() || job->pending.empty()) {
            bool last = --job->workers == 0;
            if (last) {
              bool cancelled = job->cancel.IsCancelled();
              Post(job->gen, [this, job, cancelled] {
                if (job->gen == state_generation_) emit statesFinished(cancelled);
              });
            }
            return;
          }
          row = job->pending.front();
          job->pending.pop_front();
          job->taken.insert(row);
        }
        QElapsedTimer timer;
        timer.start();
        const DumpState& state = job->states[row];
        absl::StatusOr<std::unique_ptr<Module>> opened = job->session->Open(state);
        StateResult result;
        result.row = row;
        if (opened.ok()) {
          result.module = std::shared_ptr<const Module>(std::move(*opened));
          result.fingerprint = FingerprintModule(*result.module);
        } else {
          result.status = opened.status();
          const std::string path = job->session->PathOf(state);
          if (!path.empty()) result.raw_text = ReadRawText(path);
        }
        result.seconds = timer.nsecsElapsed() / 1e9;
        int64_t done = ++job->done;
        QString label = QString::fromStdString(job->states[row].label);
        Post(job->gen, [this, job, result, done, label] {
          if (job->gen != state_generation_) return;
          if (!absl::IsCancelled(result.status)) delivered_.insert(result.row);
          emit progress(done, job->total, label);
          emit stateLoaded(result);
        });
      }
    });
  }
}

void Loader::RequestState(int row) {
  if (!session_ || row < 0 || row >= static_cast<int>(states_.size())) return;
  std::shared_ptr<StateJob> job = state_job_;
  if (job && !job->cancel.IsCancelled()) {
    std::lock_guard<std::mutex> lock(job->mu);
    // Being opened right now (and not yet delivered): it will arrive.
    if (job->taken.count(row) && !delivered_.count(row)) return;
    job->taken.erase(row);
    auto it = std::find(job->pending.begin(), job->pending.end(), row);
    if (it != job->pending.end()) {
      job->pending.erase(it);
    } else {
      ++job->total;  // a reload
    }
    job->pending.push_front(row);
    delivered_.erase(row);
    if (job->workers > 0) return;
  }
  // No live job will reach the row: start a new one with every row not yet delivered.
  std::vector<int> order = {row};
  for (int r = 0; r < static_cast<int>(states_.size()); ++r) {
    if (r != row && !delivered_.count(r)) order.push_back(r);
  }
  std::set<int> delivered = delivered_;
  LoadStates(session_, states_, order);
  delivered_ = std::move(delivered);
  delivered_.erase(row);
}

void Loader::Cancel() {
  if (open_cancel_) open_cancel_->Cancel();
  open_cancel_.reset();
  ++open_generation_;
  if (state_job_) state_job_->cancel.Cancel();
}

}  // namespace hlowb::gui
