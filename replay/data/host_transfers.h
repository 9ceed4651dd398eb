// Feeds the host side of a replay's host transfers (infeed, outfeed, host send/recv) under
// --host_transfers=zeros|fake, and remembers which instructions were fed or had their value
// dropped so the report can say so. One feeder serves one ReplaySession run; each evaluation
// asks it for a callback per device. It does not decide whether host transfers are fed at
// all (HostTransferMode::kError means no callback) and it keeps no values the device sends.
#ifndef HLOWB_REPLAY_DATA_HOST_TRANSFERS_H_
#define HLOWB_REPLAY_DATA_HOST_TRANSFERS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"

namespace hlowb {

class HostTransferFeeder {
 public:
  using Callback = std::function<absl::StatusOr<Literal>(const Instruction&, const Literal*)>;

  // `fake`: seeded fake data; otherwise zeros.
  HostTransferFeeder(bool fake, uint64_t seed, bool use_large_float_range);

  // The EvaluatorOptions::host_transfer callback for `device` in one evaluation. Every call
  // starts a fresh data stream seeded from the seed and the device, so every run (test and
  // reference, every iteration) sees the same host data and devices see different data.
  // Device 0's stream is the one a single-device run uses. A callback is used by one thread.
  Callback ForDevice(int64_t device);

  // The report's warnings: which instructions were fed and which sent values were dropped.
  // `describe` names a device ("device 1 (replica 0, partition 1)"); when null (one device)
  // the instructions are listed without devices.
  std::vector<std::string> Warnings(const std::function<std::string(int64_t)>& describe) const;

 private:
  struct Seen {
    std::map<int64_t, std::set<std::string>> fed, dropped;  // device -> instruction names
  };
  bool fake_;
  uint64_t seed_;
  bool large_range_;
  std::shared_ptr<std::mutex> mu_ = std::make_shared<std::mutex>();
  std::shared_ptr<Seen> seen_ = std::make_shared<Seen>();
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_DATA_HOST_TRANSFERS_H_
