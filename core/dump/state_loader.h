// Opens the states of a dump index on worker threads, in parallel, with progress and cancel,
// and keeps what it opened so a state is parsed once however often it is asked for. How a
// file becomes a module is up to the caller's opener (text only in core; the app adds protos).
#ifndef HLOWB_CORE_DUMP_STATE_LOADER_H_
#define HLOWB_CORE_DUMP_STATE_LOADER_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/timeline.h"
#include "core/dump/dump_index.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb {

using ModuleOpener = std::function<absl::StatusOr<std::unique_ptr<Module>>(const std::string& path)>;

// Opens HLO text files.
ModuleOpener TextModuleOpener();

struct LoadedState {
  absl::Status status;
  std::shared_ptr<const Module> module;  // null when status is not OK
};

class DumpStateLoader {
 public:
  DumpStateLoader(const DumpIndex& index, ModuleOpener opener, int threads = 0);

  // One result per state, in order. Already-opened states come from the cache. Cancelled
  // loads return CancelledError for the states not reached.
  std::vector<LoadedState> Load(const std::vector<DumpState>& states,
                                const CancelToken* cancel = nullptr,
                                const ProgressFn& progress = nullptr);

 private:
  const DumpIndex& index_;
  ModuleOpener opener_;
  int threads_;
  std::mutex mu_;
  std::map<int, LoadedState> cache_;  // by file index
};

// The timeline's view of loaded states (in the same order): labels and passes from `states`,
// modules (or the load error) from `loaded`. The modules stay owned by `loaded`.
std::vector<TimelineInput> TimelineInputs(const std::vector<DumpState>& states,
                                          const std::vector<LoadedState>& loaded);
// The index of the before_optimizations state, -1 when there is none.
int BeforeOptimizationsIndex(const std::vector<DumpState>& states);

}  // namespace hlowb

#endif  // HLOWB_CORE_DUMP_STATE_LOADER_H_
