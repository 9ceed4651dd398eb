#include "viewer/graph/layout_job.h"

#include <utility>

namespace hlowb::graph {

LayoutJob::LayoutJob(Callback callback, LayoutOptions options)
    : callback_(std::move(callback)), default_options_(options), engine_(options) {
  worker_ = std::thread([this] { Run(); });
}

LayoutJob::~LayoutJob() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    pending_ = Pending();
    if (current_cancel_) current_cancel_->Cancel();
  }
  wake_.notify_all();
  worker_.join();
}

uint64_t LayoutJob::Request(std::shared_ptr<const LayoutGraph> graph) {
  return Request(std::move(graph), default_options_);
}

uint64_t LayoutJob::Request(std::shared_ptr<const LayoutGraph> graph,
                            const LayoutOptions& options) {
  uint64_t gen;
  {
    std::lock_guard<std::mutex> lock(mu_);
    gen = ++latest_;
    pending_.has = true;
    pending_.generation = gen;
    pending_.graph = std::move(graph);
    pending_.options = options;
    if (current_cancel_) current_cancel_->Cancel();
  }
  wake_.notify_all();
  return gen;
}

void LayoutJob::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  pending_ = Pending();
  if (current_cancel_) current_cancel_->Cancel();
  if (!running_) idle_.notify_all();
}

bool LayoutJob::WaitIdle(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, timeout, [this] { return !running_ && !pending_.has; });
}

uint64_t LayoutJob::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return latest_;
}

void LayoutJob::Deliver(uint64_t generation, Update update) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    // Superseded: a newer request exists, so nobody wants this any more.
    if (generation != latest_ || stop_) return;
  }
  update.generation = generation;
  if (callback_) callback_(update);
}

void LayoutJob::Run() {
  while (true) {
    Pending job;
    std::shared_ptr<CancelToken> cancel;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [this] { return stop_ || pending_.has; });
      if (stop_) return;
      job = std::move(pending_);
      pending_ = Pending();
      cancel = std::make_shared<CancelToken>();
      current_cancel_ = cancel;
      running_ = true;
    }
    engine_.set_options(job.options);
    LayoutRequest request;
    request.cancel = cancel.get();
    uint64_t gen = job.generation;
    request.on_partial = [this, gen](std::shared_ptr<const LayoutResult> partial) {
      Update u;
      u.result = std::move(partial);
      u.final = false;
      Deliver(gen, std::move(u));
    };
    absl::StatusOr<std::shared_ptr<const LayoutResult>> r = engine_.Layout(*job.graph, request);
    Update u;
    if (r.ok()) {
      u.result = *std::move(r);
    } else {
      u.status = r.status();
    }
    Deliver(gen, std::move(u));
    {
      std::lock_guard<std::mutex> lock(mu_);
      running_ = false;
      current_cancel_.reset();
      if (!pending_.has) idle_.notify_all();
    }
  }
}

}  // namespace hlowb::graph
