// Buffer assignment of a scheduled module: which bytes of which allocation hold every value
// the program computes, in the form XLA writes as `<module>-buffer-assignment.txt` and
// `<module>-memory-usage-report.txt`.
//
// Steps (see AssignBuffers):
//   - values: one per array leaf and per tuple index table (pointer_size bytes per element)
//     that an instruction of a sequential or embedded computation defines; get-tuple-element,
//     tuple elements, bitcast, add-dependency, domain, opt-barrier and the -done halves of
//     asynchronous pairs define nothing (they pass an operand's value on);
//   - aliasing: the values that must share one buffer are merged: a while loop's init, result,
//     condition and body parameters and body root; a conditional's result and branch roots,
//     branch parameters and the operands; call and async-start parameters, operands and
//     roots; the module's input_output_alias pairs; and an in-place dynamic-update-slice (or
//     a fusion / custom call's output_to_operand_aliasing) when the operand's value is read by
//     nothing else, so that the update cannot be observed;
//   - live ranges over the schedule flattened across computations (a callee's instructions
//     are placed before the instruction that calls it, once per call site; a buffer's range is
//     the hull of its values' ranges; entry parameters live from the start and outputs to the
//     end);
//   - allocations: each entry parameter buffer its own ("parameter"), each constant its own
//     ("constant"), each buffer of an embedded computation its own ("thread-local"), each
//     buffer the entry's root returns its own ("output", marked maybe-live-out; a parameter
//     buffer aliased with the output stays a parameter allocation), and every other buffer
//     packed into one "temp" allocation by a best-fit heap (buffers by decreasing size, each
//     at the smallest free gap among the buffers live at the same time, offsets aligned).
// Fusion internals are not allocated.
//
// Deliberately not done: memory spaces / colours, multiple heaps, allocation reuse between
// output buffers, dynamic-shape metadata bytes, and the copy insertion that makes aliasing
// safe (copy_insertion.h does that; run it before scheduling).
#ifndef HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_H_
#define HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"

namespace hlowb {

struct BufferAssignmentOptions {
  // Offsets inside the temp allocation are multiples of this.
  int64_t alignment = 64;
  // Bytes per element of a tuple's index table.
  int64_t pointer_size = 8;
};

enum class AllocationKind { kParameter, kConstant, kOutput, kThreadLocal, kTemp };
std::string_view AllocationKindName(AllocationKind kind);

// A value: what one instruction defines at one shape index.
struct LogicalValue {
  int64_t id = 0;
  const Instruction* instruction = nullptr;
  ShapeIndex index;
  const Shape* shape = nullptr;
  int64_t size = 0;
  // Tokens and opaque values take no memory and get no allocation.
  bool allocatable = true;
  // Every (instruction, index) where the value appears; the defining position first.
  std::vector<std::pair<const Instruction*, ShapeIndex>> positions;
  // The buffer (set of values sharing memory) it belongs to.
  int64_t buffer = -1;
  // Live range in the flattened schedule (inclusive); absent for embedded computations.
  bool has_live_range = false;
  int64_t start = 0;
  int64_t end = -1;
};

// Values that share memory, with the hull of their live ranges.
struct LogicalBuffer {
  int64_t id = 0;
  std::vector<int64_t> values;
  int64_t size = 0;
  bool has_live_range = false;
  int64_t start = 0;
  int64_t end = -1;
  int64_t allocation = -1;
  int64_t offset = 0;
};

struct AllocationSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const AllocationSlice&) const = default;
};

struct BufferAllocation {
  struct Assigned {
    int64_t value = 0;
    int64_t offset = 0;
    int64_t size = 0;
  };
  int64_t index = 0;
  int64_t size = 0;
  AllocationKind kind = AllocationKind::kTemp;
  int64_t parameter_number = -1;  // parameter allocations
  ShapeIndex parameter_index;
  bool maybe_live_out = false;
  // Holds the entry root's top-level value (printed "output shape is |...|").
  const Instruction* output_root = nullptr;
  std::vector<Assigned> assigned;  // by value id
};

// The result of AssignBuffers. Refers to the module's instructions: the module must outlive
// it and stay unchanged.
class BufferAssignment {
 public:
  const Module& module() const { return *module_; }
  const std::vector<LogicalValue>& values() const { return values_; }
  const std::vector<LogicalBuffer>& buffers() const { return buffers_; }
  const std::vector<BufferAllocation>& allocations() const { return allocations_; }
  // The flattened schedule the live ranges index.
  const std::vector<const Instruction*>& flattened_sequence() const { return sequence_; }

  // Bytes of the allocations of one kind, and of all of them.
  int64_t BytesOfKind(AllocationKind kind) const;
  int64_t parameter_bytes() const { return BytesOfKind(AllocationKind::kParameter); }
  int64_t output_bytes() const { return BytesOfKind(AllocationKind::kOutput); }
  int64_t temp_bytes() const { return BytesOfKind(AllocationKind::kTemp); }
  int64_t constant_bytes() const { return BytesOfKind(AllocationKind::kConstant); }
  int64_t thread_local_bytes() const { return BytesOfKind(AllocationKind::kThreadLocal); }
  int64_t total_allocation_bytes() const;
  // The largest sum of sizes of temp buffers live at one point of the schedule (the temp
  // allocation is at least this large; the difference is fragmentation).
  int64_t peak_temp_bytes() const { return peak_temp_bytes_; }

  // Where (instruction, index) lives; nullopt for fused instructions, tokens and unknown
  // positions.
  std::optional<AllocationSlice> GetSlice(const Instruction* instruction,
                                          const ShapeIndex& index = {}) const;
  // The value at a position, or -1.
  int64_t ValueAt(const Instruction* instruction, const ShapeIndex& index = {}) const;

  // XLA's -buffer-assignment.txt: allocations with their values, total bytes, used values,
  // then a blank line and the live-range section.
  std::string ToString() const;
  // The "HloLiveRange (max N):" section alone.
  std::string LiveRangeString() const;
  // XLA's -memory-usage-report.txt (allocations by size, with their values grouped by
  // offset), followed by totals per kind.
  std::string MemoryUsageReport(double percentile = 0.05, int64_t more_than_k = 50) const;

 private:
  friend absl::StatusOr<BufferAssignment> AssignBuffers(const Module&,
                                                        const BufferAssignmentOptions&);
  std::string AllocationHeader(const BufferAllocation& alloc, bool human_size) const;
  std::string ValueShortString(const LogicalValue& value) const;

  const Module* module_ = nullptr;
  std::vector<LogicalValue> values_;
  std::vector<LogicalBuffer> buffers_;
  std::vector<BufferAllocation> allocations_;
  std::vector<const Instruction*> sequence_;
  // Positions: per instruction the first node's slot in pos_value_ (nodes in pre-order).
  absl::flat_hash_map<const Instruction*, int64_t> node_base_;
  std::vector<int64_t> pos_value_;
  absl::flat_hash_map<const Instruction*, std::vector<const Instruction*>> users_;
  int64_t peak_temp_bytes_ = 0;
};

// Assigns buffers of a scheduled module (refuses an unscheduled one).
absl::StatusOr<BufferAssignment> AssignBuffers(const Module& module,
                                               const BufferAssignmentOptions& options = {});

// Checks an assignment: every allocatable value assigned once, inside its allocation, at its
// buffer's offset; temp offsets aligned; and no two values of different buffers whose live
// ranges overlap share bytes of one allocation. OK or the first violation.
absl::Status CheckBufferAssignment(const BufferAssignment& assignment,
                                   const BufferAssignmentOptions& options = {});

// tsl's HumanReadableNumBytes: "512B", "11.86KiB", "1.50MiB".
std::string HumanReadableNumBytes(int64_t bytes);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_H_
