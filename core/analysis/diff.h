// Structural diff of two module states. Computations and instructions are matched across
// renames — by name, then by structure (same signature and matched operands), then by
// similarity (opcode, shape, operands, name stem) — and every instruction is reported as
// unchanged, changed (saying what changed), added or removed. Also renders the result as a
// unified text diff aligned by that matching. It compares; it does not explain passes
// (provenance.h does).
#ifndef HLOWB_CORE_ANALYSIS_DIFF_H_
#define HLOWB_CORE_ANALYSIS_DIFF_H_

#include <string>
#include <vector>

#include "core/ir/module.h"

namespace hlowb {

enum class DiffKind : uint8_t { kUnchanged, kChanged, kAdded, kRemoved };
std::string_view DiffKindName(DiffKind kind);

enum class MatchReason : uint8_t { kNone, kName, kStructure, kSimilarity };
std::string_view MatchReasonName(MatchReason reason);

struct InstructionDiff {
  DiffKind kind = DiffKind::kUnchanged;
  const Instruction* a = nullptr;  // null when added
  const Instruction* b = nullptr;  // null when removed
  MatchReason reason = MatchReason::kNone;
  // For kChanged: any of "opcode", "shape", "layout", "attributes", "operands", "name",
  // "called computations".
  std::vector<std::string> changes;
  // For kRemoved: the fusion (in B) that swallowed this instruction, if one did — a new fusion
  // or one that grew — and the instruction of its fused computation it became (a History
  // follows it there).
  const Instruction* fused_into = nullptr;
  const Instruction* fused_as = nullptr;
};

struct ComputationDiff {
  const Computation* a = nullptr;  // null when the computation was added
  const Computation* b = nullptr;  // null when removed
  // In B's order, with removed instructions placed after their nearest matched predecessor.
  std::vector<InstructionDiff> rows;
};

struct DiffCounts {
  int unchanged = 0;
  int changed = 0;
  int added = 0;
  int removed = 0;
  int renamed = 0;  // matched pairs whose names differ
};

struct ModuleDiff {
  std::vector<ComputationDiff> computations;
  DiffCounts counts;
  // The B instruction matched to an A instruction (and back); null if none.
  const Instruction* MatchOfA(const Instruction* a) const;
  const Instruction* MatchOfB(const Instruction* b) const;
};

ModuleDiff DiffModules(const Module& a, const Module& b);

// "N unchanged, N changed, N added, N removed (N renamed)" plus one line per non-unchanged row.
std::string FormatDiffText(const ModuleDiff& diff, bool include_unchanged = false);
std::string FormatDiffJson(const ModuleDiff& diff);
// Unified diff of the two modules' short-form text, lines aligned by the structural match.
std::string FormatUnifiedDiff(const ModuleDiff& diff, const std::string& label_a,
                              const std::string& label_b);

// One line of a side-by-side rendering: A's text on the left, B's on the right, a matched pair
// on the same line, and an empty (filler) side opposite an added or removed instruction, so
// that both sides have the same number of lines.
struct SideBySideLine {
  enum class Type : uint8_t { kHeader, kInstruction, kClose, kSpacer };
  Type type = Type::kSpacer;
  // For instructions: the row's kind. For headers and closing lines: kAdded or kRemoved when
  // the computation exists on one side only, else kUnchanged.
  DiffKind kind = DiffKind::kUnchanged;
  const Instruction* a = nullptr;
  const Instruction* b = nullptr;
  std::string left;   // empty when the line is a filler on that side
  std::string right;
  // For instructions that are not unchanged, or renamed: what happened, e.g. "changed: shape,
  // operands", "renamed from add.3 (matched by structure)", "removed (fused into fusion.2)".
  std::string note;
};

// Every computation of the diff (in its order), each as a header line, its instructions (short
// form, no metadata, indented) and a closing brace, with a blank line between computations.
std::vector<SideBySideLine> BuildSideBySide(const ModuleDiff& diff);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_DIFF_H_
