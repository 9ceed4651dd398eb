#include "replay/worker/worker.h"

#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "core/proto/literal_convert.h"
#include "core/proto/open_file.h"
#include "core/support/cancel.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "replay/compare/nonfinite.h"
#include "replay/worker/worker.pb.h"

namespace hlowb::worker {
namespace {

using google::protobuf::util::ParseDelimitedFromZeroCopyStream;
using google::protobuf::util::SerializeDelimitedToZeroCopyStream;

class Channel {
 public:
  explicit Channel(int fd) : out_(fd) {}
  // False once the controller is gone (a broken pipe).
  bool Send(const Response& response) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_) return false;
    broken_ = !SerializeDelimitedToZeroCopyStream(response, &out_) || !out_.Flush();
    return !broken_;
  }

 private:
  std::mutex mu_;
  google::protobuf::io::FileOutputStream out_;
  bool broken_ = false;
};

Response ErrorResponse(uint64_t id, const absl::Status& status) {
  Response r;
  r.set_id(id);
  r.mutable_error()->set_code(static_cast<int32_t>(status.code()));
  r.mutable_error()->set_message(std::string(status.message()));
  return r;
}

absl::StatusOr<ReplayResult> Replay(const ReplayRequest& request, const WorkerOptions& options,
                                    const CancelToken* cancel, const ProgressFn& progress) {
  std::unique_ptr<Module> module;
  ReplayInputs inputs;
  if (!request.module_path().empty()) {
    auto opened = OpenHloFile(request.module_path());
    if (!opened.ok()) return opened.status();
    if (opened->modules.empty()) {
      return absl::InvalidArgumentError(StrCat(request.module_path(), " holds no module"));
    }
    module = std::move(opened->modules.front().module);
    if (opened->is_snapshot) {
      inputs.snapshot_arguments = std::move(opened->arguments);
      inputs.snapshot_result = std::move(opened->result);
    }
  } else {
    auto parsed = ParseModule(request.module_text());
    if (!parsed.ok()) return parsed.status();
    module = std::move(*parsed);
  }
  ReplayOptions o;
  if (!request.platform().empty()) o.platform = request.platform();
  o.reference_platform = request.reference_platform();
  o.seed = request.seed();
  o.iterations = request.iterations() > 0 ? request.iterations() : 1;
  o.bounds.abs = request.abs_error_bound();
  o.bounds.rel = request.rel_error_bound();
  o.force_fake_data = request.force_fake_data();
  if (!request.host_transfers().empty()) {
    auto mode = ParseHostTransferMode(request.host_transfers());
    if (!mode.ok()) return mode.status();
    o.host_transfers = *mode;
  }
  o.num_replicas = request.num_replicas();
  o.num_partitions = request.num_partitions();
  o.custom_call = options.custom_call;
  if (options.abort_after_instructions > 0) {
    auto seen = std::make_shared<std::atomic<int64_t>>(0);
    const int64_t limit = options.abort_after_instructions;
    o.on_instruction = [seen, limit](const InstructionProfile&) {
      if (++*seen >= limit) std::abort();
    };
  }
  if (request.find_nonfinite()) {
    auto found = FindNonfinite(*module, std::move(o), std::move(inputs), cancel);
    if (!found.ok()) return found.status();
    ReplayResult result;
    result.set_module_name(found->module_name);
    for (const std::string& w : found->warnings) result.add_warnings(w);
    NonfiniteResult* n = result.mutable_nonfinite();
    n->set_found(found->found);
    n->set_instruction(found->finding.instruction);
    n->set_computation(found->finding.computation);
    n->set_report(found->ToString());
    return result;
  }
  ReplaySession session(*module, std::move(o), std::move(inputs));
  auto report = session.Run(cancel, progress);
  if (!report.ok()) return report.status();
  ReplayResult result;
  result.set_module_name(report->module_name);
  result.set_compile_seconds(report->compile_seconds);
  result.set_all_match(report->all_match());
  for (const std::string& w : report->warnings) result.add_warnings(w);
  for (const ReplayIteration& it : report->iterations) {
    IterationResult* r = result.add_iterations();
    r->set_argument_source(it.argument_source);
    r->set_compared_against(it.compared_against);
    r->set_run_seconds(it.run_seconds);
    if (it.comparison) {
      r->set_matched(it.comparison->ok());
      r->set_mismatches(it.comparison->total_mismatches());
      r->set_comparison(it.comparison->ToString());
    }
    if (request.return_result_literals()) {
      if (absl::Status st = LiteralToProto(it.result, r->mutable_result()); !st.ok()) return st;
    }
  }
  return result;
}

}  // namespace

int RunWorker(int in_fd, int out_fd, const WorkerOptions& options) {
  Channel channel(out_fd);
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Request> queue;
  bool input_done = false;
  uint64_t running_id = 0;
  std::shared_ptr<CancelToken> running_cancel;

  std::thread runner([&] {
    for (;;) {
      Request request;
      std::shared_ptr<CancelToken> cancel = std::make_shared<CancelToken>();
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !queue.empty() || input_done; });
        if (queue.empty()) return;
        request = std::move(queue.front());
        queue.pop_front();
        running_id = request.id();
        running_cancel = cancel;
      }
      const uint64_t id = request.id();
      auto last = std::chrono::steady_clock::now() - std::chrono::seconds(1);
      ProgressFn progress = [&](int64_t done, int64_t total, const std::string& what) {
        auto now = std::chrono::steady_clock::now();
        if (done < total && now - last < std::chrono::milliseconds(50)) return;
        last = now;
        Response r;
        r.set_id(id);
        r.mutable_progress()->set_done(done);
        r.mutable_progress()->set_total(total);
        r.mutable_progress()->set_what(what);
        channel.Send(r);
      };
      auto result = Replay(request.replay(), options, cancel.get(), progress);
      Response response;
      if (result.ok()) {
        response.set_id(id);
        *response.mutable_result() = std::move(*result);
      } else {
        response = ErrorResponse(id, result.status());
      }
      {
        std::lock_guard<std::mutex> lock(mu);
        running_id = 0;
        running_cancel.reset();
      }
      channel.Send(response);
    }
  });

  google::protobuf::io::FileInputStream in(in_fd);
  int status = 0;
  for (;;) {
    Request request;
    bool clean_eof = false;
    if (!ParseDelimitedFromZeroCopyStream(&request, &in, &clean_eof)) {
      if (!clean_eof) status = 3;
      break;
    }
    if (request.has_cancel()) {
      const uint64_t target = request.cancel().id();
      std::lock_guard<std::mutex> lock(mu);
      if (running_id == target && running_cancel) running_cancel->Cancel();
      for (auto it = queue.begin(); it != queue.end(); ++it) {
        if (it->id() == target) {
          queue.erase(it);
          channel.Send(ErrorResponse(target, absl::CancelledError("cancelled before it ran")));
          break;
        }
      }
      continue;
    }
    if (!request.has_replay()) {
      channel.Send(ErrorResponse(request.id(), absl::InvalidArgumentError("unknown request")));
      continue;
    }
    std::lock_guard<std::mutex> lock(mu);
    queue.push_back(std::move(request));
    cv.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    input_done = true;
    if (status != 0) {
      queue.clear();
      if (running_cancel) running_cancel->Cancel();
    }
  }
  cv.notify_all();
  runner.join();
  return status;
}

}  // namespace hlowb::worker
