// A module's memory over its schedule, as the memory view and `hlowb memory` show it: the
// allocations of a buffer assignment with the values each holds, every value's live range over
// the program points of the flattened schedule, the live bytes at every point (overall and per
// allocation), the peak with the buffers live there, and totals by allocation kind. It is a
// plain value: readers fill allocations, values and points (core/analysis/memory_report.h reads
// XLA's text forms; core/passes/memory_profile_builder.h converts our own buffer assignment),
// then FinishMemoryProfile derives the rest, so a view can draw it off the UI thread and keep
// it as a snapshot.
//
// Two measures of "live bytes" at a point, on purpose:
//   - live_bytes: the bytes of allocations occupied by live values, each byte counted once.
//     Values that share bytes (a while loop's init, body parameter and result; an output
//     written over a dying operand) count once. This is what the chart draws, stacked by
//     allocation or by buffer, and what `peak` is the maximum of; it never exceeds the sum of
//     the allocations' sizes.
//   - value_bytes: the sum of the sizes of the live values, each value counted on its own.
//     This is the measure of XLA's HloLiveRange ("Live ranges at T (peak)" lists the values live
//     at T with their sizes; their sum is the peak XLA states). XLA picks T by its own rule
//     (see xla_peak), which is not the maximum of either measure, so the stated peak is checked
//     against value_bytes at XLA's point, not against `peak`.
//
// Program points: point t is the t-th instruction of the flattened schedule (callees before
// their call sites, as XLA's HloLiveRange flattens them). XLA's live ranges may end at one past
// the last instruction (the end of the program, where outputs and parameters are still live);
// that point has an empty instruction name.
//
// Deliberately not here: reading files (memory_report.h), scheduling or assigning buffers
// (core/passes), drawing.
#ifndef HLOWB_CORE_ANALYSIS_MEMORY_PROFILE_H_
#define HLOWB_CORE_ANALYSIS_MEMORY_PROFILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hlowb {

enum class MemoryKind : uint8_t { kParameter, kOutput, kTemp, kConstant, kThreadLocal };
inline constexpr int kMemoryKindCount = 5;
// "parameter", "output", "temp", "constant", "thread-local".
std::string_view MemoryKindName(MemoryKind kind);

struct MemoryAllocation {
  int64_t index = 0;
  int64_t size = 0;
  MemoryKind kind = MemoryKind::kTemp;
  int64_t parameter_number = -1;  // entry parameter allocations
  std::string parameter_shape;    // as written between |...|
  std::string parameter_index;    // "{}", "{1}"
  std::string output_shape;       // "output shape is |...|"
  bool maybe_live_out = false;
  int64_t color = 0;  // memory space
  // Attributes of the header this version of the format has and we do not interpret.
  std::vector<std::string> other_attributes;
};

// One value: what an instruction defines at one shape index, where it lives and when.
struct MemoryValue {
  int64_t id = 0;            // the buffer assignment's value id
  std::string instruction;   // defining instruction
  std::string index = "{}";  // shape index, "{}" for the whole result
  bool phi = false;
  std::string shape;        // as written; may be empty
  int64_t allocation = -1;  // index into MemoryProfile::allocations; -1: not allocated
  int64_t offset = 0;
  int64_t size = 0;
  int64_t start = -1;  // live range over program points, inclusive; -1: none
  int64_t end = -1;
  int64_t buffer = -1;  // index into MemoryProfile::buffers
  bool has_live_range() const { return start >= 0 && end >= start; }
  std::string Name() const { return instruction + index; }
};

// Bytes [offset, offset + size) of one allocation and the values that hold them, with the
// union of their live ranges (merged; ranges that touch are joined).
struct MemoryBuffer {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  std::vector<int64_t> values;  // indexes into MemoryProfile::values, by start then id
  std::vector<std::pair<int64_t, int64_t>> live;  // inclusive [start, end] intervals
  bool LiveAt(int64_t point) const;
};

// From `point` on (until the next step) an allocation holds `bytes` of live values.
struct MemoryStep {
  int64_t point = 0;
  int64_t bytes = 0;
};

struct MemoryPeak {
  int64_t point = -1;  // -1: no live ranges
  int64_t bytes = 0;
};

// What the files state, kept as written to check our reading against.
struct StatedMemory {
  enum class PeakMeasure : uint8_t {
    // "name{index}: N bytes [(cumulative: M bytes)]": each value's own size (XLA since 2024).
    kValueBytes,
    // "name: N bytes" (jaxlib 0.4.x): the size of the defining instruction's whole shape, so a
    // tuple element counts as the tuple's index table, whatever the element's size.
    kInstructionShapeBytes,
  };
  std::optional<int64_t> total_bytes_used;      // the buffer assignment's "Total bytes used"
  std::optional<int64_t> report_total_bytes;    // the memory-usage report's total
  std::optional<int64_t> schedule_max;          // "HloLiveRange (max N)"
  std::optional<int64_t> peak_point;            // "Live ranges at T (peak)"
  std::optional<int64_t> peak_bytes;            // the sum of that list's sizes
  std::optional<int64_t> breakdown_peak_bytes;  // "Stack trace breakdown for peak usage: N"
  PeakMeasure peak_measure = PeakMeasure::kValueBytes;
  std::vector<std::pair<std::string, int64_t>> peak_entries;  // as listed
};

// XLA's choice of the peak point (HloLiveRange::ComputePeakMemoryMoment): values enter at
// their start and leave one point after their end, sized by their defining instruction's whole
// shape; at equal points entries are counted before exits, and the first point where the
// running sum reaches a new maximum wins.
struct XlaPeak {
  int64_t point = -1;
  int64_t value_bytes = 0;              // value_bytes at `point`
  int64_t instruction_shape_bytes = 0;  // the same values sized as XLA's 0.4.x list sizes them
};

struct MemoryProfile {
  std::string source;               // "xla" (read from XLA's files) or "hlowb" (our assignment)
  std::vector<std::string> files;   // what it was read from (labels as given)
  std::string schedule;             // for "hlowb": how the schedule was obtained
  std::vector<std::string> points;  // instruction name per program point ("" = end of program)
  std::vector<MemoryAllocation> allocations;  // by index
  std::vector<MemoryValue> values;            // by allocation, then as listed
  // Defining-instruction shape sizes for XLA's peak rule where the values do not give them
  // (instruction name -> bytes of its whole shape, tuples as their index table).
  std::vector<std::pair<std::string, int64_t>> instruction_shape_bytes;
  StatedMemory stated;
  int64_t skipped_lines = 0;            // lines the reader did not recognise (skipped)
  int64_t unallocated_live_ranges = 0;  // live ranges of values no allocation holds

  // Derived by FinishMemoryProfile.
  std::vector<MemoryBuffer> buffers;                      // by allocation, offset, size
  std::vector<int64_t> live_bytes;                        // per point
  std::vector<int64_t> value_bytes;                       // per point
  std::vector<std::vector<MemoryStep>> allocation_steps;  // per allocation; empty: never live
  MemoryPeak peak;                                        // first maximum of live_bytes
  std::vector<int64_t> live_at_peak;  // buffers live at peak.point, largest first
  XlaPeak xla_peak;
  int64_t total_bytes = 0;  // sum of allocation sizes
  int64_t kind_bytes[kMemoryKindCount] = {};
  int64_t kind_count[kMemoryKindCount] = {};
  int64_t values_without_live_range = 0;

  int64_t BytesOfKind(MemoryKind kind) const { return kind_bytes[static_cast<int>(kind)]; }
  // The instruction at a point ("" for the end of the program or out of range).
  std::string_view PointName(int64_t point) const;
};

// Derives buffers, the timelines, the peaks and the totals from allocations, values and points.
// Extends `points` (with unnamed points) to cover every live range.
void FinishMemoryProfile(MemoryProfile* profile);

// Disagreements between what the files state and what we compute from the allocations and live
// ranges they hold: the total of the allocations, the report's total, and the stated peak
// (its bytes against value_bytes at the stated point in the stated measure, and its point
// against XLA's rule). Empty when everything agrees or nothing is stated.
std::vector<std::string> CheckStatedMemory(const MemoryProfile& profile);

// "212 B", "11.9 KiB", "1.50 MiB".
std::string FormatMemoryBytes(int64_t bytes);

// The report of `hlowb memory`: totals by kind, the peak (bytes, point, instruction), the
// `top` largest buffers live at the peak, XLA's stated figures beside ours, and a sparkline of
// live bytes over program order. `label` names the input.
std::string FormatMemoryProfileText(const MemoryProfile& profile, const std::string& label,
                                    int top);
// A line of at most `width` ASCII characters, one per bucket of program points, drawing each
// bucket's largest live_bytes against the peak with " .:-=+*#%@".
std::string MemorySparkline(const std::vector<int64_t>& series, int width);

// The JSON form (schema "hlowb.memory/1"):
// {
//   "schema": "hlowb.memory/1", "label": STR, "source": "xla"|"hlowb", "files": [STR...],
//   "schedule": STR,                          how the schedule was obtained ("" for "xla")
//   "totals": {"bytes": N, "allocations": N,
//              "by_kind": {"parameter": {"bytes": N, "allocations": N}, "output": ...,
//                          "temp": ..., "constant": ..., "thread-local": ...}},
//   "points": [STR...],                       instruction per program point ("" = end)
//   "live_bytes": [N...], "value_bytes": [N...],   per point (see the header comment)
//   "peak": {"point": N (-1: no live ranges), "instruction": STR, "bytes": N,
//            "buffers": [N...]},
//                                             buffers live at the peak, largest first
//   "xla_peak": {"point": N, "instruction": STR, "value_bytes": N,
//                "instruction_shape_bytes": N},
//   "stated": {"total_bytes_used": N|null, "report_total_bytes": N|null,
//              "peak_point": N|null, "peak_bytes": N|null,
//              "peak_measure": "value-bytes"|"instruction-shape-bytes"},
//   "checks": [STR...],                       CheckStatedMemory
//   "allocations": [{"index": N, "size": N, "kind": STR, "parameter": N (-1: none),
//                    "maybe_live_out": BOOL, "color": N,
//                    "steps": [[point, bytes]...]}...],
//   "values": [{"id": N, "instruction": STR, "index": STR, "phi": BOOL, "shape": STR,
//               "allocation": N, "offset": N, "size": N, "start": N, "end": N,
//               "buffer": N}...],            start/end -1: no live range; allocation: a
//                                             position in "allocations" (-1: none); buffer:
//                                             a position in "buffers"
//   "buffers": [{"allocation": N, "offset": N, "size": N, "values": [N...],
//                "live": [[start, end]...]}...],   values: positions in "values"
//   "skipped_lines": N
// }
// Keys appear in this order; arrays are in the profile's order.
std::string FormatMemoryProfileJson(const MemoryProfile& profile, const std::string& label);

// Two states side by side (peak, XLA's peak, totals by kind) with the change, for
// `hlowb memory A B`.
std::string FormatMemoryComparisonText(const MemoryProfile& a, const std::string& label_a,
                                       const MemoryProfile& b, const std::string& label_b);
// {"schema": "hlowb.memory-compare/1", "a": SUMMARY, "b": SUMMARY,
//  "delta": {"peak_bytes": N, "total_bytes": N, "by_kind": {"parameter": N, ...}}}
// SUMMARY = {"label": STR, "source": STR, "peak": {...}, "xla_peak": {...}, "totals": {...}}
// with the fields of FormatMemoryProfileJson.
std::string FormatMemoryComparisonJson(const MemoryProfile& a, const std::string& label_a,
                                       const MemoryProfile& b, const std::string& label_b);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_MEMORY_PROFILE_H_
