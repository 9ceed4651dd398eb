#include "core/dump/state_loader.h"

#include <atomic>
#include <thread>

#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"

namespace hlowb {

ModuleOpener TextModuleOpener() {
  return [](const std::string& path) -> absl::StatusOr<std::unique_ptr<Module>> {
    auto text = ReadFileToString(path);
    if (!text.ok()) return text.status();
    ParseOptions options;
    options.file_name = path;
    return ParseModule(*text, options);
  };
}

DumpStateLoader::DumpStateLoader(const DumpIndex& index, ModuleOpener opener, int threads)
    : index_(index), opener_(std::move(opener)) {
  threads_ = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::vector<LoadedState> DumpStateLoader::Load(const std::vector<DumpState>& states,
                                               const CancelToken* cancel,
                                               const ProgressFn& progress) {
  const int n = static_cast<int>(states.size());
  std::vector<LoadedState> results(n);
  std::atomic<int> next{0};
  std::atomic<int> done{0};
  auto work = [&] {
    for (int i = next++; i < n; i = next++) {
      int file = states[i].file();
      if (file < 0 || file >= static_cast<int>(index_.files.size())) {
        results[i].status = absl::NotFoundError(StrCat("state ", states[i].label, " has no file"));
        continue;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto it = cache_.find(file);
        if (it != cache_.end()) {
          results[i] = it->second;
          ++done;
          continue;
        }
      }
      if (cancel && cancel->IsCancelled()) {
        results[i].status = absl::CancelledError("loading was cancelled");
        continue;
      }
      std::string path = index_.root + "/" + index_.files[file].path;
      auto module = opener_(path);
      LoadedState loaded;
      if (module.ok()) {
        loaded.module = std::shared_ptr<const Module>(std::move(*module));
      } else {
        loaded.status = module.status();
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        cache_[file] = loaded;
      }
      results[i] = std::move(loaded);
      int d = ++done;
      if (progress) progress(d, n, states[i].label);
    }
  };
  int threads = std::min(threads_, std::max(1, n));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return results;
}

std::vector<TimelineInput> TimelineInputs(const std::vector<DumpState>& states,
                                          const std::vector<LoadedState>& loaded) {
  std::vector<TimelineInput> inputs;
  for (size_t i = 0; i < states.size(); ++i) {
    TimelineInput in;
    in.label = states[i].label;
    in.step = states[i].step;
    in.pipeline = states[i].pipeline;
    in.pass = states[i].pass;
    in.is_pass = states[i].stage == StageKind::kPassStep;
    in.module = loaded[i].module.get();
    if (!loaded[i].status.ok()) in.error = std::string(loaded[i].status.message());
    inputs.push_back(std::move(in));
  }
  return inputs;
}

int BeforeOptimizationsIndex(const std::vector<DumpState>& states) {
  for (size_t i = 0; i < states.size(); ++i) {
    if (states[i].stage == StageKind::kBeforeOptimizations) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace hlowb
