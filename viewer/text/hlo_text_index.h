// Where everything is in a module printed in long form: the line (and column) of every
// instruction and computation definition, the computation each line belongs to, and name
// lookup for links. Built in one linear pass over the text printed once by core/text/printer.h
// (no per-line searching, no Qt text cursors), so it is cheap for the largest modules.
//
// Lines are 0-based and correspond one to one with QTextDocument blocks of the text (the text
// is sanitized so that only '\n' separates lines). Columns are UTF-16 offsets within a line.
#ifndef HLOWB_VIEWER_TEXT_HLO_TEXT_INDEX_H_
#define HLOWB_VIEWER_TEXT_HLO_TEXT_INDEX_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

namespace hlowb::viewer {

struct HloTextIndex {
  struct InstructionPos {
    const Instruction* instruction = nullptr;
    int computation = -1;  // index into computations
    int line = -1;         // the line the definition starts on
    int end_line = -1;     // the last line (a verbatim multi-line backend_config spans several)
    int name_column = -1;  // column of the name (after the '%')
  };
  struct ComputationPos {
    const Computation* computation = nullptr;
    int header_line = -1;  // "[ENTRY] %name (...) -> ... {"
    int close_line = -1;   // "}"
    int name_column = -1;
    int first_instruction = 0;  // index into instructions
    int instruction_count = 0;
  };

  std::string text;  // UTF-8, '\n'-separated
  int line_count = 0;
  // Per line: index into `instructions` of the instruction defined there (-1: none), and
  // index into `computations` of the computation whose text holds the line (-1: module header).
  std::vector<int32_t> line_instruction;
  std::vector<int32_t> line_computation;
  std::vector<InstructionPos> instructions;
  std::vector<ComputationPos> computations;
  // False when the printed text did not have the expected structure (then links and folding
  // are unavailable, the text is still shown).
  bool structured = false;

  // Lookups (nullptr / -1 when absent).
  int InstructionIndex(const Instruction* instruction) const;
  int ComputationIndex(const Computation* computation) const;
  // An instruction by name, preferring one in `computation` (names are module-unique in XLA,
  // but a hand-written file may reuse one in different computations).
  const Instruction* FindInstruction(std::string_view name,
                                     const Computation* computation = nullptr) const;
  const Computation* FindComputation(std::string_view name) const;

  // Builds the index for `module` (printed in long form with metadata and backend configs).
  static HloTextIndex Build(const Module& module);

 private:
  std::unordered_map<const Instruction*, int> instruction_index_;
  std::unordered_map<const Computation*, int> computation_index_;
  std::unordered_multimap<std::string_view, int> instruction_names_;  // views into the IR
  std::unordered_map<std::string_view, int> computation_names_;
};

// True for characters that may appear in an HLO name ([A-Za-z0-9_.-]).
inline bool IsHloNameChar(char16_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '.' || c == '-';
}

// Attribute names whose values are computations (`calls=%f`, `to_apply=%add`, ...).
bool IsComputationAttribute(std::string_view attribute);

}  // namespace hlowb::viewer

#endif  // HLOWB_VIEWER_TEXT_HLO_TEXT_INDEX_H_
