// Rendezvous: where the devices of one multi-device run meet at their collective ops. Each
// device's evaluator runs on its own thread and hands every collective op to its
// DeviceCollectives (device(d)); the rendezvous matches the op with the same execution of the
// same instruction on the other members of the device's group (the k-th time device A runs
// %x meets the k-th time device B runs it), moves the data with the op's semantics, and
// returns each device its own result.
//
// Data is read in place from the other devices' operand literals (no copy on posting); a
// device leaves a collective only after every device that reads its values has finished
// reading them. all-reduce splits the reduction: each member reduces 1/N of the elements
// (in rank order, so all devices get bit-identical sums), then copies the other members'
// slices.
//
// It never hangs: when no device is running and none of the waiting ones can go on (a member
// finished without reaching the op, or waits at a different one), every wait ends with
// FailedPrecondition naming each waiting device, the instruction it waits at and the devices
// it waits for and what they do. A wait longer than the timeout ends the run with
// DeadlineExceeded (a backstop for a member that runs forever). A device failure or Abort()
// ends every wait with that status and cancels abort_token(), which the devices' evaluators
// watch.
//
// Semantics per op (the devices of a group in rank order; see collective_groups.h):
//   all-reduce(-start)   to_apply folded over the members in rank order, per operand.
//   all-gather(-start)   members' operands concatenated along dimensions={d}; the -start form
//                        returns (operands, gathered).
//   reduce-scatter       the all-reduce's rank-th slice along dimensions={d}.
//   all-to-all           with dimensions={d}: each operand cut into N chunks along d; chunk j
//                        goes to rank j, and the received chunks are concatenated along d in
//                        rank order. Without: N operands, operand j goes to rank j; result
//                        element j came from rank j.
//   collective-broadcast the operands of the group's first device; zeros on a device in no
//                        group.
//   collective-permute   the operand of the device whose pair targets this one, zeros when no
//                        pair does; the -start form returns (operand, received, context...).
//   ragged-all-to-all    rows input[input_offsets[j] : +send_sizes[j]] of each member go to
//                        rank j, written at that member's output_offsets[j] in rank j's copy
//                        of its output operand (one offset per member).
//                        Several array operands (the combined form) are permuted alike,
//                        into a tuple of results.
//   send / recv          device to device (is_host_transfer=false), with the pairs of the
//   (and -done)          _xla_send_recv_source_target_pairs frontend attribute (partition ids
//                        with a channel_id, replica ids without). The k-th send a device runs
//                        on a channel is the k-th recv its target runs on that channel, so
//                        several transfers may be in flight (pipelining). send hands over a
//                        copy of its operand; send-done waits until the target has issued the
//                        matching recv; recv-done waits for the source's send and returns its
//                        value, or zeros on a device no pair targets. A partner that never
//                        comes is a deadlock like any other.
//                        _xla_send_recv_validation limits a pair to a range of the
//                        instruction's executions; outside it nothing moves and the recv
//                        gives zeros.
// Not modelled: the four-operand (in-place slice) form of collective-permute and ragged
// offsets with more than one entry per member; they fail with Unimplemented.
#ifndef HLOWB_REPLAY_MULTI_DEVICE_RENDEZVOUS_H_
#define HLOWB_REPLAY_MULTI_DEVICE_RENDEZVOUS_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/ir/instruction.h"
#include "core/support/cancel.h"
#include "replay/evaluator/evaluator.h"
#include "replay/multi_device/collective_groups.h"

namespace hlowb {

struct RendezvousOptions {
  DeviceGrid grid;
  // Longest a device may wait at one collective before the run ends with DeadlineExceeded.
  double timeout_seconds = 600;
};

class Rendezvous {
 public:
  explicit Rendezvous(RendezvousOptions options);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  const DeviceGrid& grid() const { return options_.grid; }
  // Device d's collectives (owned by the rendezvous; one thread per device uses it).
  DeviceCollectives* device(int64_t d);

  // Device d's evaluation ended. A failure aborts the run with "<device>: <status>" unless
  // the run was already aborted (the failure is then a consequence of the abort).
  void Finish(int64_t d, const absl::Status& status);
  // Ends every wait with `status` and cancels abort_token(). The first abort wins.
  void Abort(const absl::Status& status);
  // OK until a device failed, a deadlock or timeout was found, or Abort() was called.
  absl::Status abort_status() const;
  // Cancelled when the run is aborted; pass it to the devices' evaluators.
  const CancelToken* abort_token() const { return &abort_token_; }

 private:
  friend class DeviceEndpoint;

  struct SlotKey {
    const Instruction* instr = nullptr;
    int64_t occurrence = 0;
    int64_t device = 0;
    auto operator<=>(const SlotKey&) const = default;
  };
  // One device's contribution to one execution of a collective.
  struct Slot {
    const std::vector<const Literal*>* operands = nullptr;
    const std::vector<Literal>* partial = nullptr;  // all-reduce: the reduced slices
    std::vector<int64_t> readers;                   // devices that will read this slot
    std::set<int64_t> done_readers;
    int64_t active_readers = 0;
  };
  enum class State : uint8_t { kRunning, kWaiting, kFinished, kFailed };
  struct DeviceInfo {
    State state = State::kRunning;
    // While waiting:
    const Instruction* instr = nullptr;
    int64_t occurrence = 0;
    std::string what;                               // "for the operands of", ...
    std::function<bool()> ready;                    // evaluated under the lock
    std::function<std::vector<int64_t>()> blockers;  // devices it waits for
    std::chrono::steady_clock::time_point since;
  };

  // The calls a device makes around one collective execution; all take the lock.
  void Post(const SlotKey& key, const std::vector<const Literal*>* operands,
            std::vector<int64_t> readers);
  // Waits until every device in `from` posted for (instr, occurrence); marks `key.device` as
  // reading their slots. The abort status when aborted (then nothing is marked).
  absl::Status Collect(const SlotKey& key, const std::vector<int64_t>& from,
                       std::vector<const std::vector<const Literal*>*>* operands);
  void PublishPartial(const SlotKey& key, const std::vector<Literal>* partial);
  absl::Status CollectPartials(const SlotKey& key, const std::vector<int64_t>& from,
                               std::vector<const std::vector<Literal>*>* partials);
  // Ends reading `from`'s slots (after a successful Collect, on every path).
  void Release(const SlotKey& key, const std::vector<int64_t>& from);
  // Waits until every reader of key's slot is done (after an abort: until none is mid-read)
  // and removes the slot.
  void Withdraw(const SlotKey& key);

  // Device-to-device send/recv: a value `sender` sent on `channel` as its `sequence`-th send
  // there, and the count of recvs each device has issued per channel.
  struct MessageKey {
    int64_t channel = 0;
    int64_t sender = 0;
    int64_t sequence = 0;
    auto operator<=>(const MessageKey&) const = default;
  };
  void PostMessage(const MessageKey& key, Literal value);
  void PostRecv(int64_t channel, int64_t receiver);
  // `waiter` (a send-done) waits until `receiver` has issued more than `sequence` recvs on
  // `channel`. The abort status when aborted.
  absl::Status AwaitRecv(const SlotKey& waiter, int64_t channel, int64_t receiver,
                         int64_t sequence);
  // `waiter` (a recv-done) waits for the message and takes it.
  absl::StatusOr<Literal> TakeMessage(const SlotKey& waiter, const MessageKey& key);

  // Blocks device key.device until ready() holds, with deadlock and timeout checks.
  void Wait(std::unique_lock<std::mutex>& lock, const SlotKey& key, std::string what,
            std::function<bool()> ready, std::function<std::vector<int64_t>()> blockers);
  void AbortLocked(const absl::Status& status);
  void CheckDeadlockLocked();
  std::string DescribeWaitLocked(int64_t d) const;
  std::string DescribeDeviceLocked(int64_t d) const;

  RendezvousOptions options_;
  std::vector<std::unique_ptr<DeviceCollectives>> endpoints_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<SlotKey, Slot> slots_;
  std::map<MessageKey, Literal> messages_;
  std::map<std::pair<int64_t, int64_t>, int64_t> recvs_issued_;  // (channel, device) -> count
  std::vector<DeviceInfo> devices_;
  absl::Status abort_;
  CancelToken abort_token_;
};

}  // namespace hlowb

#endif  // HLOWB_REPLAY_MULTI_DEVICE_RENDEZVOUS_H_
