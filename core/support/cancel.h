// Cancellation and progress reporting for long work (loading, layout, replay). Work checks
// the token at convenient points and stops early; progress goes to a callback that may be
// called from worker threads.
#ifndef HLOWB_CORE_SUPPORT_CANCEL_H_
#define HLOWB_CORE_SUPPORT_CANCEL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

namespace hlowb {

class CancelToken {
 public:
  void Cancel() { cancelled_.store(true, std::memory_order_relaxed); }
  bool IsCancelled() const { return cancelled_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> cancelled_{false};
};

// done/total units and a short description of the current item. Must be thread-safe.
using ProgressFn = std::function<void(int64_t done, int64_t total, const std::string& what)>;

}  // namespace hlowb

#endif  // HLOWB_CORE_SUPPORT_CANCEL_H_
