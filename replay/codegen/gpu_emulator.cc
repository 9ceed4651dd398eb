// Fibers are ucontext contexts: each thread of a block gets a stack slice, the scheduler loop
// switches into every ready thread in turn, and a thread switches back when it reaches a
// collective or returns (its context's uc_link). Collectives are resolved by the scheduler
// between passes, so no two threads ever touch the exchange at once.
#include "replay/codegen/gpu_emulator.h"

#include <ucontext.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/support/strings.h"

namespace hlowb::codegen {
namespace {

constexpr size_t kStackBytes = 128 * 1024;

enum class State { kReady, kAtShuffle, kAtBarrier, kDone };

struct Fiber {
  ucontext_t context;
  State state = State::kReady;
  int32_t value = 0, delta = 0, clamp = 0, result = 0;
  uint32_t mask = 0;
};

struct Runner {
  EmulatedLaunch launch;
  int32_t block_index = 0;
  int32_t current = 0;  // thread index within the block
  bool direct = false;  // threads run one by one without fibers
  std::string misuse;   // a collective called where none may be
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  std::unique_ptr<char[]> stacks;
  size_t stack_threads = 0;
  alignas(64) unsigned char shared[kEmulatedSharedBytes];
};

thread_local Runner* tl_runner = nullptr;

void Trampoline() {
  Runner* r = tl_runner;
  r->launch.fn(r->launch.table, r->launch.count);
  r->fibers[r->current].state = State::kDone;
  // Returning resumes uc_link, the scheduler.
}

void SwitchToScheduler() {
  Runner* r = tl_runner;
  swapcontext(&r->fibers[r->current].context, &r->scheduler);
}

std::string LaneList(const std::vector<int>& lanes) {
  std::string out;
  for (size_t i = 0; i < lanes.size() && i < 8; ++i) StrAppend(&out, i ? ", " : "", lanes[i]);
  if (lanes.size() > 8) StrAppend(&out, ", ... (", lanes.size(), " in all)");
  return out;
}

const char* StateName(State s) {
  switch (s) {
    case State::kReady: return "running";
    case State::kAtShuffle: return "at a shuffle";
    case State::kAtBarrier: return "at a barrier";
    case State::kDone: return "ended";
  }
  return "?";
}

// Completes the shuffles and the barrier that every participant has reached. Sets *progress
// when something was released; returns an error for a misused collective.
absl::Status Resolve(Runner& r, bool* progress) {
  const int block = r.launch.block;
  for (int warp_start = 0; warp_start < block; warp_start += 32) {
    const int width = std::min(32, block - warp_start);
    Fiber* lanes = &r.fibers[warp_start];
    uint32_t mask = 0;
    bool any = false, ready = false;
    for (int l = 0; l < width; ++l) {
      if (lanes[l].state == State::kReady) ready = true;
      if (lanes[l].state != State::kAtShuffle) continue;
      if (any && lanes[l].mask != mask) {
        return absl::InternalError(StrCat(
            "GPU emulator: block ", r.block_index, ", warp ", warp_start / 32,
            ": lanes shuffle with different masks (", absl::Hex(mask), " and ",
            absl::Hex(lanes[l].mask), ")"));
      }
      mask = lanes[l].mask;
      any = true;
    }
    if (!any || ready) continue;
    std::vector<int> waiting, missing;
    for (int l = 0; l < 32; ++l) {
      if ((mask >> l & 1) == 0) continue;
      if (l >= width || lanes[l].state != State::kAtShuffle) {
        missing.push_back(l);
      } else {
        waiting.push_back(l);
      }
    }
    if (!missing.empty()) {
      const State s = missing[0] < width ? lanes[missing[0]].state : State::kDone;
      return absl::InternalError(StrCat(
          "GPU emulator: block ", r.block_index, ", warp ", warp_start / 32, ": lanes ",
          LaneList(waiting), " wait at a shuffle (mask ", absl::Hex(mask), ") while lane",
          missing.size() > 1 ? "s " : " ", LaneList(missing), " ",
          missing[0] < width ? StateName(s) : "do not exist",
          " (undefined on a GPU: every lane of the mask must reach the same shuffle)"));
    }
    for (int l : waiting) {
      Fiber& f = lanes[l];
      const int seg = (f.clamp >> 8) & 0x1f;
      const int min_lane = l & seg;
      const int max_lane = min_lane | ((f.clamp & 0x1f) & ~seg);
      const int src = l + f.delta;
      f.result = src <= max_lane && src < width && (mask >> src & 1) ? lanes[src].value : f.value;
    }
    for (int l : waiting) lanes[l].state = State::kReady;
    *progress = true;
  }
  int at_barrier = 0, done = 0;
  for (const Fiber& f : r.fibers) {
    if (f.state == State::kAtBarrier) ++at_barrier;
    if (f.state == State::kDone) ++done;
  }
  if (at_barrier > 0 && at_barrier + done == block) {
    if (done > 0) {
      std::vector<int> ended;
      for (int t = 0; t < block; ++t) {
        if (r.fibers[t].state == State::kDone) ended.push_back(t);
      }
      return absl::InternalError(StrCat(
          "GPU emulator: block ", r.block_index, ": ", at_barrier,
          " threads wait at a barrier while threads ", LaneList(ended),
          " ended (every thread of the block must reach the barrier)"));
    }
    for (Fiber& f : r.fibers) f.state = State::kReady;
    *progress = true;
  }
  return absl::OkStatus();
}

std::string Deadlock(const Runner& r) {
  std::string out = StrCat("GPU emulator: block ", r.block_index,
                           " cannot go on (threads wait at different collectives):");
  int shown = 0;
  for (int t = 0; t < r.launch.block && shown < 6; ++t) {
    const State s = r.fibers[t].state;
    if (s == State::kAtShuffle || s == State::kAtBarrier) {
      StrAppend(&out, " thread ", t, " ", StateName(s), ";");
      ++shown;
    }
  }
  return out;
}

absl::Status RunBlockWithFibers(Runner& r) {
  const int block = r.launch.block;
  for (int t = 0; t < block; ++t) {
    Fiber& f = r.fibers[t];
    f.state = State::kReady;
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = r.stacks.get() + static_cast<size_t>(t) * kStackBytes;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &r.scheduler;
    makecontext(&f.context, Trampoline, 0);
  }
  for (;;) {
    bool progress = false;
    int done = 0;
    for (int t = 0; t < block; ++t) {
      if (r.fibers[t].state != State::kReady) continue;
      r.current = t;
      swapcontext(&r.scheduler, &r.fibers[t].context);
      progress = true;
    }
    for (const Fiber& f : r.fibers) done += f.state == State::kDone;
    if (done == block) return absl::OkStatus();
    if (absl::Status st = Resolve(r, &progress); !st.ok()) return st;
    if (!progress) return absl::InternalError(Deadlock(r));
  }
}

}  // namespace

absl::Status EmulateLaunch(const EmulatedLaunch& launch, const CancelToken* cancel) {
  if (launch.fn == nullptr) return absl::InvalidArgumentError("GPU emulator: no kernel");
  if (launch.block < 1 || launch.block > kEmulatedMaxBlock) {
    return absl::InvalidArgumentError(
        StrCat("GPU emulator: block of ", launch.block, " threads (1 to ", kEmulatedMaxBlock, ")"));
  }
  if (launch.grid < 1 || launch.grid > (int64_t{1} << 31) - 1) {
    return absl::InvalidArgumentError(StrCat("GPU emulator: grid of ", launch.grid, " blocks"));
  }
  if (tl_runner != nullptr) {
    return absl::FailedPreconditionError("GPU emulator: a kernel launched another");
  }
  auto runner = std::make_unique<Runner>();
  Runner& r = *runner;
  r.launch = launch;
  r.direct = !launch.collectives;
  if (!r.direct) {
    r.fibers.resize(launch.block);
    r.stacks.reset(new char[static_cast<size_t>(launch.block) * kStackBytes]);
  }
  tl_runner = &r;
  absl::Status st = absl::OkStatus();
  for (int64_t b = 0; b < launch.grid && st.ok(); ++b) {
    if (cancel != nullptr && cancel->IsCancelled()) {
      st = absl::CancelledError("cancelled");
      break;
    }
    r.block_index = static_cast<int32_t>(b);
    if (r.direct) {
      for (int t = 0; t < launch.block; ++t) {
        r.current = t;
        launch.fn(launch.table, launch.count);
      }
      if (!r.misuse.empty()) st = absl::InternalError(r.misuse);
    } else {
      st = RunBlockWithFibers(r);
    }
  }
  tl_runner = nullptr;
  return st;
}

}  // namespace hlowb::codegen

using hlowb::codegen::State;
using hlowb::codegen::tl_runner;

extern "C" {

int32_t hlowb_emu_tid_x() { return tl_runner == nullptr ? 0 : tl_runner->current; }
int32_t hlowb_emu_ntid_x() { return tl_runner == nullptr ? 0 : tl_runner->launch.block; }
int32_t hlowb_emu_ctaid_x() { return tl_runner == nullptr ? 0 : tl_runner->block_index; }
int32_t hlowb_emu_nctaid_x() {
  return tl_runner == nullptr ? 0 : static_cast<int32_t>(tl_runner->launch.grid);
}

int32_t hlowb_emu_shfl_down_i32(int32_t mask, int32_t value, int32_t delta, int32_t c) {
  hlowb::codegen::Runner* r = tl_runner;
  if (r == nullptr) return value;
  if (r->direct) {
    if (r->misuse.empty()) {
      r->misuse = "GPU emulator: a kernel launched without collectives shuffled";
    }
    return value;
  }
  hlowb::codegen::Fiber& f = r->fibers[r->current];
  f.state = State::kAtShuffle;
  f.mask = static_cast<uint32_t>(mask);
  f.value = value;
  f.delta = delta;
  f.clamp = c;
  hlowb::codegen::SwitchToScheduler();
  return f.result;
}

void hlowb_emu_barrier() {
  hlowb::codegen::Runner* r = tl_runner;
  if (r == nullptr) return;
  if (r->direct) {
    if (r->misuse.empty()) {
      r->misuse = "GPU emulator: a kernel launched without collectives waited at a barrier";
    }
    return;
  }
  r->fibers[r->current].state = State::kAtBarrier;
  hlowb::codegen::SwitchToScheduler();
}

void* hlowb_emu_shared_memory() { return tl_runner == nullptr ? nullptr : tl_runner->shared; }

}  // extern "C"
