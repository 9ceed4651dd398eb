#include "replay/multi_device/multi_device_runner.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>

#include "core/support/strings.h"
#include "replay/multi_device/rendezvous.h"

namespace hlowb {

absl::Status CheckDeviceGrid(const DeviceGrid& grid) {
  if (grid.num_replicas < 1 || grid.num_partitions < 1) {
    return absl::InvalidArgumentError(
        StrCat("a run needs at least one replica and one partition (got ", grid.num_replicas,
               " replica(s) x ", grid.num_partitions, " partition(s))"));
  }
  if (grid.num_replicas > kMaxDevices || grid.num_partitions > kMaxDevices ||
      grid.size() > kMaxDevices) {
    return absl::InvalidArgumentError(
        StrCat(grid.num_replicas, " replica(s) x ", grid.num_partitions, " partition(s) is more "
               "than the ", kMaxDevices, " devices multi-device replay runs (one thread each)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<DeviceRunResult>> EvaluateOnDevices(
    const Module& module, const std::vector<std::vector<Literal>>& arguments,
    const MultiDeviceOptions& options) {
  if (absl::Status st = CheckDeviceGrid(options.grid); !st.ok()) return st;
  const int64_t n = options.grid.size();
  if (arguments.size() != 1 && static_cast<int64_t>(arguments.size()) != n) {
    return absl::InvalidArgumentError(
        StrCat("multi-device run of ", n, " devices got ", arguments.size(),
               " argument lists (give one per device, or one for all)"));
  }
  Rendezvous rendezvous(RendezvousOptions{options.grid, options.collective_timeout_seconds});
  std::mutex event_mu;
  std::mutex done_mu;
  std::condition_variable done_cv;
  int64_t running = n;
  std::vector<std::optional<absl::StatusOr<Literal>>> results(static_cast<size_t>(n));
  std::vector<double> seconds(static_cast<size_t>(n), 0);

  auto run_device = [&](int64_t d) {
    EvaluatorOptions eo = options.evaluator;
    eo.memory_budget_bytes = options.evaluator.memory_budget_bytes / static_cast<uint64_t>(n);
    eo.cancel = rendezvous.abort_token();
    eo.collectives = rendezvous.device(d);
    if (d != 0) eo.progress = nullptr;
    if (options.host_transfer) eo.host_transfer = options.host_transfer(d);
    eo.on_instruction = nullptr;
    if (options.on_instruction) {
      eo.on_instruction = [&, d](const InstructionEvent& e) {
        std::lock_guard<std::mutex> lock(event_mu);
        options.on_instruction(d, e);
      };
    }
    const std::vector<Literal>& args = arguments.size() == 1 ? arguments[0] : arguments[d];
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> r = absl::InternalError("not run");
    try {
      r = options.run_module ? options.run_module(args, eo) : EvaluateModule(module, args, eo);
    } catch (const std::bad_alloc&) {
      // A device thread must end through Finish() whatever happens, or the others would wait.
      r = absl::ResourceExhaustedError("out of memory while evaluating");
    } catch (const std::exception& e) {
      r = absl::InternalError(StrCat("evaluation failed: ", e.what()));
    }
    seconds[d] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rendezvous.Finish(d, r.ok() ? absl::OkStatus() : r.status());
    std::lock_guard<std::mutex> lock(done_mu);
    results[d] = std::move(r);
    --running;
    done_cv.notify_all();
  };

  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n));
  for (int64_t d = 0; d < n; ++d) {
    try {
      threads.emplace_back(run_device, d);
    } catch (const std::system_error& e) {
      // Out of threads: the devices already started are released and joined.
      rendezvous.Abort(absl::ResourceExhaustedError(
          StrCat("could not start a thread for ", options.grid.Describe(d), ": ", e.what())));
      std::lock_guard<std::mutex> lock(done_mu);
      running -= n - d;
      break;
    }
  }
  {
    // Watch the caller's cancel token while the devices run.
    std::unique_lock<std::mutex> lock(done_mu);
    while (running > 0) {
      done_cv.wait_for(lock, std::chrono::milliseconds(20));
      if (options.evaluator.cancel != nullptr && options.evaluator.cancel->IsCancelled()) {
        rendezvous.Abort(absl::CancelledError("multi-device replay cancelled"));
      }
    }
  }
  for (std::thread& t : threads) t.join();

  if (absl::Status st = rendezvous.abort_status(); !st.ok()) return st;
  std::vector<DeviceRunResult> out;
  for (int64_t d = 0; d < n; ++d) {
    if (!results[d].has_value()) return absl::InternalError("a device did not run");
    if (!results[d]->ok()) {
      // Not reachable in practice: every failure aborts the rendezvous first.
      return absl::Status(results[d]->status().code(),
                          StrCat(options.grid.Describe(d), ": ", results[d]->status().message()));
    }
    out.push_back(DeviceRunResult{std::move(**results[d]), seconds[d]});
  }
  return out;
}

}  // namespace hlowb
