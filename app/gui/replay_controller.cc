#include "app/gui/replay_controller.h"

#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>

#include <google/protobuf/io/coded_stream.h>

#include <QCoreApplication>
#include <string>

namespace hlowb::gui {

using hlowb::worker::Request;
using hlowb::worker::ReplayResult;
using hlowb::worker::Response;

ReplayController::ReplayController(QObject* parent)
    : QObject(parent),
      program_(QCoreApplication::applicationFilePath()),
      arguments_({QStringLiteral("worker")}) {
  deadline_.setSingleShot(true);
  connect(&deadline_, &QTimer::timeout, this, [this] {
    OnWorkerGone(tr("the worker did not answer within %1 s").arg(deadline_ms_ / 1000.0));
  });
}

ReplayController::~ReplayController() {
  if (process_ != nullptr) {
    process_->disconnect(this);
    process_->kill();
    process_->waitForFinished(1000);
    delete process_;
  }
}

void ReplayController::SetWorkerCommand(const QString& program, const QStringList& arguments) {
  program_ = program;
  arguments_ = arguments;
}

uint64_t ReplayController::Submit(const hlowb::worker::ReplayRequest& replay) {
  Request request;
  request.set_id(next_id_++);
  *request.mutable_replay() = replay;
  if (pending_) Fail(pending_->id(), tr("replaced by a newer request"));
  pending_ = std::move(request);
  const uint64_t id = pending_->id();
  SendNext();
  return id;
}

void ReplayController::Cancel(uint64_t id) {
  if (pending_ && pending_->id() == id) {
    pending_.reset();
    Fail(id, tr("cancelled"));
    return;
  }
  if (id != 0 && id == running_id_ && process_ != nullptr) {
    Request cancel;
    cancel.set_id(next_id_++);
    cancel.mutable_cancel()->set_id(id);
    Send(cancel);
  }
}

void ReplayController::StopWorker() {
  if (process_ != nullptr || running_id_ != 0) OnWorkerGone(tr("stopped"));
}

void ReplayController::EnsureWorker() {
  if (process_ != nullptr) return;
  process_ = new QProcess(this);
  process_->setProgram(program_);
  process_->setArguments(arguments_);
  process_->setProcessChannelMode(QProcess::SeparateChannels);
  process_->setReadChannel(QProcess::StandardOutput);
  connect(process_, &QProcess::readyReadStandardOutput, this, &ReplayController::OnReadyRead);
  connect(process_, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    OnWorkerGone(status == QProcess::CrashExit
                     ? tr("the worker crashed")
                     : tr("the worker exited with status %1").arg(code));
  });
  connect(process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError error) {
    if (error == QProcess::FailedToStart) {
      OnWorkerGone(tr("the worker could not be started (%1)").arg(program_));
    }
  });
  buffer_.clear();
  process_->start();
}

void ReplayController::SendNext() {
  if (running_id_ != 0 || !pending_) return;
  EnsureWorker();
  Request request = std::move(*pending_);
  pending_.reset();
  running_id_ = request.id();
  last_what_.clear();
  Send(request);
  deadline_.start(deadline_ms_);
}

void ReplayController::Send(const Request& request) {
  if (process_ == nullptr) return;
  std::string frame;
  {
    google::protobuf::io::StringOutputStream out(&frame);
    google::protobuf::io::CodedOutputStream coded(&out);
    coded.WriteVarint32(static_cast<uint32_t>(request.ByteSizeLong()));
    request.SerializeToCodedStream(&coded);
  }
  process_->write(frame.data(), static_cast<qint64>(frame.size()));
}

void ReplayController::OnReadyRead() {
  if (process_ == nullptr) return;
  buffer_.append(process_->readAllStandardOutput());
  ProcessFrames();
}

void ReplayController::ProcessFrames() {
  while (!parsing_) {
    google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(buffer_.data()),
                                              static_cast<int>(buffer_.size()));
    uint32_t size = 0;
    if (!in.ReadVarint32(&size)) return;  // the length is not all here yet
    const int header = in.CurrentPosition();
    if (buffer_.size() < header + static_cast<qsizetype>(size)) return;
    if (size >= kAsyncParseBytes) {
      // A large answer (result values): parsed on a worker thread, later frames wait for it so
      // that answers keep their order.
      QByteArray frame = buffer_.mid(header, static_cast<qsizetype>(size));
      buffer_.remove(0, header + static_cast<qsizetype>(size));
      parsing_ = true;
      auto* watcher = new QFutureWatcher<std::shared_ptr<Response>>(this);
      connect(watcher, &QFutureWatcher<std::shared_ptr<Response>>::finished, this,
              [this, watcher] {
                watcher->deleteLater();
                parsing_ = false;
                std::shared_ptr<Response> response = watcher->result();
                if (!response) {
                  OnWorkerGone(tr("the worker sent an unreadable message"));
                  return;
                }
                Handle(std::move(response));
                ProcessFrames();
              });
      watcher->setFuture(QtConcurrent::run([frame = std::move(frame)] {
        auto response = std::make_shared<Response>();
        if (!response->ParseFromArray(frame.constData(), static_cast<int>(frame.size()))) {
          response.reset();
        }
        return response;
      }));
      return;
    }
    auto response = std::make_shared<Response>();
    const bool ok = response->ParseFromArray(buffer_.constData() + header, static_cast<int>(size));
    buffer_.remove(0, header + static_cast<qsizetype>(size));
    if (!ok) {
      OnWorkerGone(tr("the worker sent an unreadable message"));
      return;
    }
    Handle(std::move(response));
  }
}

void ReplayController::Handle(std::shared_ptr<Response> response) {
  const uint64_t id = response->id();
  if (id != running_id_) return;  // an answer nobody waits for any more
  if (response->has_progress()) {
    last_what_ = QString::fromStdString(response->progress().what());
    deadline_.start(deadline_ms_);
    emit progress(id, response->progress().done(), response->progress().total(), last_what_);
    return;
  }
  deadline_.stop();
  running_id_ = 0;
  if (response->has_result()) {
    // Shares the parsed message: the result's values are not copied.
    std::shared_ptr<const ReplayResult> result(response, &response->result());
    emit finished(id, result);
  } else {
    emit failed(id, QString::fromStdString(response->error().message()), last_what_);
  }
  SendNext();
}

void ReplayController::OnWorkerGone(const QString& what) {
  deadline_.stop();
  if (process_ != nullptr) {
    QProcess* p = process_;
    process_ = nullptr;
    p->disconnect(this);
    p->kill();
    p->waitForFinished(1000);
    p->deleteLater();
  }
  buffer_.clear();
  const uint64_t id = running_id_;
  running_id_ = 0;
  if (id != 0) emit failed(id, what, last_what_);
  // The waiting request (if any) goes to a fresh worker.
  SendNext();
}

void ReplayController::Fail(uint64_t id, const QString& message) {
  emit failed(id, message, QString());
}

}  // namespace hlowb::gui
