// The reference evaluator: runs a verified module on the CPU with XLA's semantics, one
// instruction at a time, on host literals. It is the ground truth the compiled backends are
// compared against, so it favours exactness and clear errors over speed, while keeping typed
// loops (no per-element virtual calls) and BLAS for float dot/convolution so real models
// finish. Multi-device runs and custom-call targets belong to other layers: without
// EvaluatorOptions::collectives the module runs as a single device (replica-id and
// partition-id are 0, every collective group holds only this device); with it, each device's
// evaluator forwards its collective ops to the shared rendezvous (replay/multi_device). Custom
// calls go to an optional handler.
#ifndef HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_
#define HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/cancel.h"

namespace hlowb {

struct InstructionEvent {
  const Instruction* instruction = nullptr;
  double seconds = 0;            // wall time spent on this instruction
  const Literal* result = nullptr;  // valid only during the callback
  int64_t loop_iteration = -1;   // inside a while body: the iteration number
};

// Runs a computation (a reducer, say) on the calling device's evaluator.
using ComputationCaller = std::function<absl::StatusOr<Literal>(
    const Computation&, const std::vector<const Literal*>&)>;

// One device's view of a multi-device run: its replica and partition ids, and the place its
// collective ops go. Implemented by replay/multi_device; the evaluator only forwards to it and
// knows nothing of groups, threads or rendezvous.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  virtual int64_t replica_id() const = 0;
  virtual int64_t partition_id() const = 0;
  // Runs `instr` (all-reduce, all-gather, reduce-scatter, all-to-all, collective-broadcast,
  // collective-permute, ragged-all-to-all, or the -start form of all-reduce, all-gather and
  // collective-permute) with this device's operand values and returns this device's result.
  virtual absl::StatusOr<Literal> RunCollective(const Instruction& instr,
                                                const std::vector<const Literal*>& operands,
                                                const ComputationCaller& call) = 0;
  // Device-to-device send, recv, send-done and recv-done (is_host_transfer=false) with this
  // device's operand values; returns this device's result. send hands its operand to its
  // target, recv-done returns the value its source sent (zeros when no pair targets this
  // device); see replay/multi_device/rendezvous.h.
  virtual absl::StatusOr<Literal> RunSendRecv(const Instruction& instr,
                                              const std::vector<const Literal*>& operands) = 0;
  // The devices of this device's replica, indexed by partition id (this device among them).
  virtual std::vector<int64_t> ReplicaDevices() const = 0;
  // This device's index in the run, as ReplicaDevices() and ExchangeValues() name devices.
  virtual int64_t device_index() const = 0;
  // A plain exchange for custom calls whose meaning spans devices (the SPMD shard-to-full
  // conversion): gives `value` to the other devices in `devices` (which must include this one)
  // and returns every listed device's value for this execution of `instr`, in that order.
  // Deadlocks and aborts end it as they end any collective.
  virtual absl::StatusOr<std::vector<Literal>> ExchangeValues(const Instruction& instr,
                                                              const std::vector<int64_t>& devices,
                                                              const Literal& value) = 0;
};

// Computes a custom-call instruction from its operand values. `device` is this device's view
// of a multi-device run, null when the module runs as one device.
using CustomCallHook = std::function<absl::StatusOr<Literal>(
    const Instruction&, const std::vector<const Literal*>&, DeviceCollectives* device)>;

// Values of elided constants kept for a series of evaluations (the iterations of a replay, the
// devices of a multi-device run): each is made once through EvaluatorOptions::elided_constant
// and then read in place, not copied, by every evaluation that shares the cache. Thread-safe.
// Entries are never removed, so the pointers it returns stay valid while it lives; it must
// outlive the evaluations, and serve one module (instructions are the keys).
class ConstantCache {
 public:
  absl::StatusOr<const Literal*> Get(
      const Instruction& instr,
      const std::function<absl::StatusOr<Literal>(const Instruction&)>& make);

 private:
  std::mutex mu_;
  std::unordered_map<const Instruction*, std::unique_ptr<Literal>> values_;
};

struct EvaluatorOptions {
  // Stop with ResourceExhausted before allocating when live buffers would exceed this.
  uint64_t memory_budget_bytes = uint64_t{8} << 30;
  const CancelToken* cancel = nullptr;
  ProgressFn progress;  // done/total instructions of the entry computation
  // Called after every instruction (including inside called computations) when set.
  std::function<void(const InstructionEvent&)> on_instruction;
  // Seed for rng ops that XLA leaves implementation-defined (rng, rng-get-and-update-state).
  uint64_t seed = 42;
  // custom-call handler: return the result literal, or UnimplementedError naming the target.
  CustomCallHook custom_call;
  // Values for constants whose data was elided (`{...}`) in the input. Unset: such a constant
  // stops evaluation with FailedPrecondition naming it.
  std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant;
  // When set, elided constants are made once through `elided_constant` and shared from here
  // across evaluations instead of being made (copied) on every evaluation.
  ConstantCache* constant_cache = nullptr;
  // Host transfers: infeed and recv with is_host_transfer=true ask it for their data (`sent`
  // is null; return a literal of the data shape); outfeed and host sends hand it their value
  // (`sent` is set; the returned literal is ignored). Unset: these ops stop with Unimplemented
  // naming the instruction. Device-to-device send/recv (is_host_transfer=false) goes to
  // `collectives` instead; without it, it stops with Unimplemented.
  std::function<absl::StatusOr<Literal>(const Instruction&, const Literal* sent)> host_transfer;
  // Multi-device runs: this device's ids and collectives. Null: a single device.
  DeviceCollectives* collectives = nullptr;
  // Compiled code for some instructions (the cpu backend, replay/backends/cpu): asked first for
  // every instruction the evaluator computes, with the operand values; std::nullopt means it
  // has no code for that instruction and the evaluator computes it as usual. Control flow,
  // collectives, host transfers and custom calls stay with the evaluator either way.
  std::function<std::optional<absl::StatusOr<Literal>>(const Instruction&,
                                                       const std::vector<const Literal*>&)>
      compiled;
  // Compiled code that computes an instruction in the storage of one of its operands: a
  // dynamic-update-slice, or a fusion whose root is one, writing only the updated elements
  // (InPlaceUpdatedOperand in core/passes/copy_insertion.h names the operand). When this
  // evaluation holds that operand's value and nothing reads it afterwards (a value it computed,
  // or a while loop's state element read for the last time), it moves the value into `*value`,
  // puts `*value` in the operands in its place, and asks this first: OK means `*value` is now
  // the result; an error stops the run; std::nullopt means nothing was written, and the
  // evaluator updates a dynamic-update-slice in place itself or computes the instruction as
  // usual. Without it, the evaluator updates dynamic-update-slices in place itself unless
  // `compiled` is set.
  std::function<std::optional<absl::Status>(const Instruction&, const std::vector<const Literal*>&,
                                            Literal* value)>
      compiled_in_place;
};

// Runs the entry computation on `arguments` (one literal per entry parameter, shapes must be
// compatible) and returns the root's value.
absl::StatusOr<Literal> EvaluateModule(const Module& module, const std::vector<Literal>& arguments,
                                       const EvaluatorOptions& options = {});

// Runs one computation (e.g. a fused computation or a reducer) on the given arguments.
absl::StatusOr<Literal> EvaluateComputation(const Computation& computation,
                                            const std::vector<const Literal*>& arguments,
                                            const EvaluatorOptions& options = {});

}  // namespace hlowb

#endif  // HLOWB_REPLAY_EVALUATOR_EVALUATOR_H_
