// Runs layered layouts on one dedicated worker thread so that the UI thread never waits for
// one. Every request gets a generation number; a newer request supersedes an older one (the
// older is cancelled and its results are dropped), Cancel() stops the current one, and large
// graphs deliver an early picture before the refined one. The worker keeps one LayeredLayout,
// so its cache and incremental relayout (expand/collapse) carry over between requests.
//
// Results arrive through the callback on the worker thread; a Qt view forwards them to the UI
// thread with a queued invocation and ignores any generation older than its latest request.
//
// What this does not do: it does not touch Qt, run several layouts in parallel, or run
// Graphviz (graphviz_layout.h runs that in a child process).
#ifndef HLOWB_VIEWER_GRAPH_LAYOUT_JOB_H_
#define HLOWB_VIEWER_GRAPH_LAYOUT_JOB_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "absl/status/status.h"
#include "core/support/cancel.h"
#include "viewer/graph/layered_layout.h"
#include "viewer/graph/layout_graph.h"

namespace hlowb::graph {

// The worker thread that runs LayeredLayout for a view (see the top of this file). Does not
// touch Qt; results come back through the callback on the worker thread.
class LayoutJob {
 public:
  // One delivery: an early picture (final = false), the final result, or an error.
  struct Update {
    uint64_t generation = 0;
    // Null unless status is OK.
    std::shared_ptr<const LayoutResult> result;
    absl::Status status;
    // False for an early partial picture; the final result (or error) follows.
    bool final = true;
  };
  using Callback = std::function<void(const Update&)>;

  explicit LayoutJob(Callback callback, LayoutOptions options = {});
  // Cancels any running layout and joins the worker.
  ~LayoutJob();
  LayoutJob(const LayoutJob&) = delete;
  LayoutJob& operator=(const LayoutJob&) = delete;

  // Queues a layout of `graph` (kept alive by the job until done) and returns its generation.
  // Anything pending or running is superseded.
  uint64_t Request(std::shared_ptr<const LayoutGraph> graph);
  uint64_t Request(std::shared_ptr<const LayoutGraph> graph, const LayoutOptions& options);

  // Cancels the running and pending requests; the running one reports CancelledError.
  void Cancel();

  // Waits until nothing is running or pending; false on timeout.
  bool WaitIdle(std::chrono::milliseconds timeout);

  // The latest generation handed out.
  uint64_t generation() const;

 private:
  struct Pending {
    bool has = false;
    uint64_t generation = 0;
    std::shared_ptr<const LayoutGraph> graph;
    LayoutOptions options;
  };

  void Run();
  void Deliver(uint64_t generation, Update update);

  Callback callback_;
  LayoutOptions default_options_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::condition_variable idle_;
  Pending pending_;
  uint64_t latest_ = 0;
  bool stop_ = false;
  bool running_ = false;
  std::shared_ptr<CancelToken> current_cancel_;
  // Touched only by the worker thread.
  LayeredLayout engine_;
  std::thread worker_;
};

}  // namespace hlowb::graph

#endif  // HLOWB_VIEWER_GRAPH_LAYOUT_JOB_H_
