#include "viewer/text/hlo_text_index.h"

#include <algorithm>
#include <cstring>

#include "core/text/printer.h"

namespace hlowb::viewer {
namespace {

// Counts lines while walking forward through the text; every query must be at or after the
// previous one, which keeps the whole index build linear.
class LineCounter {
 public:
  explicit LineCounter(const std::string& text) : text_(text) {}
  int LineOf(size_t pos) {
    pos = std::min(pos, text_.size());
    if (pos < pos_) return line_;  // not expected; stay monotonic
    const char* p = text_.data() + pos_;
    const char* end = text_.data() + pos;
    while (p < end) {
      const void* nl = std::memchr(p, '\n', static_cast<size_t>(end - p));
      if (nl == nullptr) break;
      ++line_;
      p = static_cast<const char*>(nl) + 1;
    }
    pos_ = pos;
    return line_;
  }

 private:
  const std::string& text_;
  size_t pos_ = 0;
  int line_ = 0;
};

bool At(const std::string& text, size_t pos, std::string_view what) {
  return pos <= text.size() && text.compare(pos, what.size(), what) == 0;
}

std::string ComputationPrefix(const Computation& c) {
  std::string s = c.is_entry() ? "ENTRY %" : "%";
  s += c.name();
  s += " (";
  return s;
}

std::string InstructionPrefix(const Instruction& instr) {
  std::string s = instr.IsRoot() ? "  ROOT %" : "  %";
  s += instr.name();
  s += " = ";
  return s;
}

// True when the line starting at `pos` closes a computation: "}" then the end of the text, a
// blank line, or the execution thread suffix (a verbatim JSON "}" line is followed by more).
bool IsClosingLine(const std::string& text, size_t pos) {
  if (pos >= text.size() || text[pos] != '}') return false;
  // The printer ends every computation with a blank line.
  return pos + 1 == text.size() || At(text, pos + 1, "\n\n") ||
         At(text, pos + 1, ", execution_thread=");
}

}  // namespace

bool IsComputationAttribute(std::string_view a) {
  return a == "calls" || a == "to_apply" || a == "body" || a == "condition" ||
         a == "true_computation" || a == "false_computation" || a == "branch_computations" ||
         a == "called_computations" || a == "select" || a == "scatter" || a == "comparator" ||
         a == "async_wrapped_computation";
}

int HloTextIndex::InstructionIndex(const Instruction* instruction) const {
  auto it = instruction_index_.find(instruction);
  return it == instruction_index_.end() ? -1 : it->second;
}

int HloTextIndex::ComputationIndex(const Computation* computation) const {
  auto it = computation_index_.find(computation);
  return it == computation_index_.end() ? -1 : it->second;
}

const Instruction* HloTextIndex::FindInstruction(std::string_view name,
                                                 const Computation* computation) const {
  auto [begin, end] = instruction_names_.equal_range(name);
  const Instruction* first = nullptr;
  for (auto it = begin; it != end; ++it) {
    const Instruction* instr = instructions[it->second].instruction;
    if (computation == nullptr || instr->parent() == computation) return instr;
    if (first == nullptr || InstructionIndex(instr) < InstructionIndex(first)) first = instr;
  }
  return first;
}

const Computation* HloTextIndex::FindComputation(std::string_view name) const {
  auto it = computation_names_.find(name);
  return it == computation_names_.end() ? nullptr : computations[it->second].computation;
}

HloTextIndex HloTextIndex::Build(const Module& module) {
  HloTextIndex index;
  std::string& text = index.text;
  text = PrintModule(module, PrintOptions::Long());

  // Lookup tables come from the IR alone, so links work even if the text is unstructured.
  for (const auto& c : module.computations()) {
    const int ci = static_cast<int>(index.computations.size());
    ComputationPos cp;
    cp.computation = c.get();
    cp.first_instruction = static_cast<int>(index.instructions.size());
    cp.instruction_count = c->instruction_count();
    index.computations.push_back(cp);
    index.computation_index_.emplace(c.get(), ci);
    index.computation_names_.emplace(std::string_view(c->name()), ci);
    for (const Instruction* instr : c->instructions()) {
      const int ii = static_cast<int>(index.instructions.size());
      InstructionPos ip;
      ip.instruction = instr;
      ip.computation = ci;
      index.instructions.push_back(ip);
      index.instruction_index_.emplace(instr, ii);
      index.instruction_names_.emplace(std::string_view(instr->name()), ii);
    }
  }

  index.line_count =
      1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  index.line_instruction.assign(index.line_count, -1);
  index.line_computation.assign(index.line_count, -1);

  // Walk the text in print order. The printer's layout is: the module header, a blank line,
  // then per computation its header line, one "  [ROOT ]%name = ..." line per instruction
  // (several when a verbatim backend_config holds newlines) and a closing "}".
  LineCounter lines(text);
  bool ok = true;
  size_t pos = std::string::npos;
  if (!index.computations.empty()) {
    const std::string first = "\n\n" + ComputationPrefix(*index.computations[0].computation);
    pos = text.find(first);
    ok = pos != std::string::npos;
    if (ok) pos += 2;
  }
  for (size_t ci = 0; ok && ci < index.computations.size(); ++ci) {
    ComputationPos& cp = index.computations[ci];
    const Computation& comp = *cp.computation;
    const std::string prefix = ComputationPrefix(comp);
    if (!At(text, pos, prefix)) {
      ok = false;
      break;
    }
    cp.header_line = lines.LineOf(pos);
    cp.name_column = comp.is_entry() ? 7 : 1;
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos) {
      ok = false;
      break;
    }
    size_t cur = eol + 1;
    const int n = cp.instruction_count;
    std::string next_prefix =
        n > 0 ? InstructionPrefix(*index.instructions[cp.first_instruction].instruction) : "";
    for (int k = 0; k < n; ++k) {
      InstructionPos& ip = index.instructions[cp.first_instruction + k];
      const std::string this_prefix = std::move(next_prefix);
      if (!At(text, cur, this_prefix)) {
        ok = false;
        break;
      }
      ip.line = lines.LineOf(cur);
      ip.name_column = ip.instruction->IsRoot() ? 8 : 3;
      next_prefix = k + 1 < n
                        ? InstructionPrefix(*index.instructions[cp.first_instruction + k + 1]
                                                 .instruction)
                        : "";
      // The definition ends at the newline followed by the next definition (or the closing
      // brace); newlines before that belong to verbatim attribute text.
      size_t e = text.find('\n', cur);
      while (e != std::string::npos) {
        const size_t rest = e + 1;
        if (k + 1 < n ? At(text, rest, next_prefix) : IsClosingLine(text, rest)) break;
        e = text.find('\n', rest);
      }
      if (e == std::string::npos) {
        ok = false;
        break;
      }
      ip.end_line = lines.LineOf(e);
      cur = e + 1;
    }
    if (!ok) break;
    if (!IsClosingLine(text, cur)) {
      ok = false;
      break;
    }
    cp.close_line = lines.LineOf(cur);
    for (int l = cp.header_line; l <= cp.close_line && l < index.line_count; ++l) {
      index.line_computation[l] = static_cast<int32_t>(ci);
    }
    for (int k = 0; k < n; ++k) {
      const InstructionPos& ip = index.instructions[cp.first_instruction + k];
      for (int l = ip.line; l <= ip.end_line && l < index.line_count; ++l) {
        index.line_instruction[l] = cp.first_instruction + k;
      }
    }
    if (ci + 1 < index.computations.size()) {
      pos = text.find("\n\n", cur);
      if (pos == std::string::npos) {
        ok = false;
        break;
      }
      pos += 2;
    }
  }
  index.structured = ok;
  if (!ok) {
    // Never point at wrong lines: forget every position.
    std::fill(index.line_instruction.begin(), index.line_instruction.end(), -1);
    std::fill(index.line_computation.begin(), index.line_computation.end(), -1);
    for (InstructionPos& ip : index.instructions) ip.line = ip.end_line = ip.name_column = -1;
    for (ComputationPos& cp : index.computations) {
      cp.header_line = cp.close_line = cp.name_column = -1;
    }
  }
  return index;
}

}  // namespace hlowb::viewer
