// `hlowb worker`: reads Request messages (worker.proto, length-delimited) from `in_fd` and
// answers on `out_fd`. Replays run one at a time on a thread of their own, so a CancelRequest
// read meanwhile stops the running one (its answer is then an Error with code CANCELLED).
// Progress messages are sent at most every 50 ms. The loop ends at end of input, after the
// running replay finished or was cancelled.
//
// A request the worker cannot read (a garbled frame) ends it with exit status 3: the
// controller restarts it. Writes are serialised; every message is flushed whole.
#ifndef HLOWB_REPLAY_WORKER_WORKER_H_
#define HLOWB_REPLAY_WORKER_WORKER_H_

#include <cstdint>
#include <functional>
#include <string>

#include "replay/session.h"

namespace hlowb::worker {

struct WorkerOptions {
  // Test hook: abort() (as a crash would) when a replay reaches its N-th instruction; 0 = never.
  int64_t abort_after_instructions = 0;
  // The most bytes an answer with values may take (protobuf messages must stay under 2 GiB);
  // beyond it the values are left out with a warning and the verdicts still go.
  uint64_t max_value_bytes = uint64_t{512} << 20;
  // Computes custom calls (the CLI passes the built-in plugins' dispatcher).
  CustomCallHook custom_call;
};

// Returns the process exit status: 0 at end of input, 3 for an unreadable request.
int RunWorker(int in_fd, int out_fd, const WorkerOptions& options);

}  // namespace hlowb::worker

#endif  // HLOWB_REPLAY_WORKER_WORKER_H_
