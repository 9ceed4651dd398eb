// Reads XLA's text forms of a buffer assignment into a MemoryProfile (memory_profile.h):
//   - `-buffer-assignment.txt`: "BufferAssignment:", then per allocation
//     "allocation N: size S[, parameter P, shape |..| at ShapeIndex {..}][, output shape is |..|]
//     [, constant][, thread-local][, maybe-live-out][, preallocated-temp]:" and its values
//     " value: <ID name{index} (phi) @color> (size=S,offset=O): shape"; then
//     "Total bytes used: N", "Used values:" with each value's positions, uses and defining
//     instruction; then the HloLiveRange section. Every jaxlib from 0.4.x to 0.6.x writes all
//     of it into this one file.
//   - newer XLA splits it: the allocations stay in `-buffer-assignment.txt`, "Total bytes used"
//     and the used values move to `-buffer-assignment-values.txt`, and the HloLiveRange section
//     to `-live-range.txt` (which adds each value's index and a cumulative sum to the peak list,
//     and a stack-trace breakdown of the peak).
//   - `-memory-usage-report.txt`: only its total is read ("Total bytes used: N" in older
//     versions; one "Memory Space: ... / Total bytes: N" block per memory space in newer ones).
// The HloLiveRange section: "HloLiveRange (max N):", "InstructionSequence:" with "i:name" per
// program point, "BufferLiveRange:" with "name{index}:start-end" per value, and
// "Live ranges at T (peak):" listing the values live at T with their sizes (0.4.x: the name
// alone, sized by the defining instruction's whole shape; later: name{index}, sized by the
// value).
//
// Sections are recognised by their headings, so the texts may come in any order and any
// split. Lines nobody recognises are skipped and counted (MemoryProfile::skipped_lines); a line
// that starts like a known line but does not parse, or a text that ends inside a section that
// must be followed by another, is an error naming the text and line ("NAME:LINE: ...").
//
// Deliberately not read: the memory-usage report's per-allocation tables (they repeat the
// buffer assignment), the values' uses, the stack-trace tree, the .pb forms.
#ifndef HLOWB_CORE_ANALYSIS_MEMORY_REPORT_H_
#define HLOWB_CORE_ANALYSIS_MEMORY_REPORT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/memory_profile.h"

namespace hlowb {

struct MemoryText {
  std::string name;  // for messages and MemoryProfile::files
  std::string text;
};

// One buffer assignment from any of its texts (at least one holding the allocations). The
// result is finished (FinishMemoryProfile) and has source "xla".
absl::StatusOr<MemoryProfile> ReadXlaMemoryProfile(const std::vector<MemoryText>& texts);

// One buffer assignment from a file: `path` and, when its name ends in one of
// MemoryFileSuffixes, every text of the same assignment beside it (newer XLA splits one
// assignment over several files). Errors name the file that could not be read.
absl::StatusOr<MemoryProfile> ReadXlaMemoryProfileFiles(const std::string& path);

// True when the text starts (after blank lines) with "BufferAssignment:".
bool LooksLikeBufferAssignment(std::string_view text);

// The file suffixes of one buffer assignment's texts, in reading order:
// "-buffer-assignment.txt", "-buffer-assignment-values.txt", "-live-range.txt",
// "-memory-usage-report.txt".
const std::vector<std::string>& MemoryFileSuffixes();
// The part of `path` before one of MemoryFileSuffixes ("" when it ends in none).
std::string MemoryFileBase(std::string_view path);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_MEMORY_REPORT_H_
