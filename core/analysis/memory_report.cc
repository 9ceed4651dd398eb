#include "core/analysis/memory_report.h"

#include <algorithm>
#include <filesystem>
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/analysis/cost_model.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"

namespace hlowb {

namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Reads a non-negative decimal at the front of *s and consumes it.
bool ConsumeInt(std::string_view* s, int64_t* out) {
  if (s->empty() || (*s)[0] < '0' || (*s)[0] > '9') return false;
  auto [ptr, ec] = std::from_chars(s->data(), s->data() + s->size(), *out);
  if (ec != std::errc()) return false;
  s->remove_prefix(static_cast<size_t>(ptr - s->data()));
  return true;
}

bool Consume(std::string_view* s, std::string_view prefix) {
  if (!StartsWith(*s, prefix)) return false;
  s->remove_prefix(prefix.size());
  return true;
}

// A decimal that may group its digits in threes with a separator (XLA's stack-trace breakdown
// writes "17 032"): a space, comma, apostrophe, underscore, or a UTF-8 (narrow) no-break or
// thin space.
bool ConsumeGroupedInt(std::string_view* s, int64_t* out) {
  std::string digits;
  size_t i = 0;
  auto digit_run = [&](size_t at, size_t n) {
    if (at + n > s->size()) return false;
    for (size_t k = 0; k < n; ++k) {
      if ((*s)[at + k] < '0' || (*s)[at + k] > '9') return false;
    }
    return at + n == s->size() || (*s)[at + n] < '0' || (*s)[at + n] > '9';
  };
  while (i < s->size() && (*s)[i] >= '0' && (*s)[i] <= '9') digits.push_back((*s)[i++]);
  if (digits.empty()) return false;
  for (;;) {
    size_t sep = 0;
    for (std::string_view candidate :
         {" ", ",", "'", "_", "\xC2\xA0", "\xE2\x80\xAF", "\xE2\x80\x89"}) {
      if (s->substr(i, candidate.size()) == candidate) {
        sep = candidate.size();
        break;
      }
    }
    if (sep == 0 || !digit_run(i + sep, 3)) break;
    digits.append(s->substr(i + sep, 3));
    i += sep + 3;
  }
  std::string_view d = digits;
  if (!ConsumeInt(&d, out)) return false;
  s->remove_prefix(i);
  return true;
}

// A whole decimal.
bool ParseInt(std::string_view s, int64_t* out) { return ConsumeInt(&s, out) && s.empty(); }

// "name{index}" or "name": the instruction and the index ("{}" when absent).
bool SplitValueKey(std::string_view key, std::string* name, std::string* index) {
  const size_t brace = key.find('{');
  if (brace == std::string_view::npos) {
    if (key.empty()) return false;
    *name = std::string(key);
    *index = "{}";
    return true;
  }
  if (brace == 0 || key.back() != '}') return false;
  *name = std::string(key.substr(0, brace));
  *index = std::string(key.substr(brace));
  return true;
}

// The shape that follows "name = " in an instruction's text: a balanced "(...)" for tuples,
// else up to the next space.
std::string_view ShapeAfterEquals(std::string_view instr) {
  const size_t eq = instr.find(" = ");
  if (eq == std::string_view::npos) return {};
  std::string_view rest = instr.substr(eq + 3);
  if (rest.empty()) return {};
  if (rest[0] != '(') return rest.substr(0, rest.find(' '));
  int depth = 0;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == '(') ++depth;
    if (rest[i] == ')' && --depth == 0) return rest.substr(0, i + 1);
  }
  return {};
}

enum class TextKind { kBufferAssignment, kValues, kLiveRange, kReport, kUnknown };

TextKind KindOf(std::string_view text) {
  auto has_line = [&](std::string_view heading) {
    for (size_t at = text.find(heading); at != std::string_view::npos;
         at = text.find(heading, at + 1)) {
      if (at == 0 || text[at - 1] == '\n') return true;
    }
    return false;
  };
  if (LooksLikeBufferAssignment(text)) return TextKind::kBufferAssignment;
  if (has_line("Used values:")) return TextKind::kValues;
  if (has_line("HloLiveRange (max ")) return TextKind::kLiveRange;
  if (has_line("Allocations sorted by size") || has_line("Memory Space:") ||
      has_line("Total bytes used:")) {
    return TextKind::kReport;
  }
  return TextKind::kUnknown;
}

class Reader {
 public:
  explicit Reader(MemoryProfile* p) : p_(p) {}

  absl::Status Read(const MemoryText& t) {
    name_ = t.name;
    const TextKind kind = KindOf(t.text);
    if (kind == TextKind::kUnknown) {
      return absl::InvalidArgumentError(
          StrCat(t.name,
                 ": not one of XLA's buffer-assignment texts (no 'BufferAssignment:', "
                 "'Used values:', 'HloLiveRange' or memory-usage report heading)"));
    }
    if (kind == TextKind::kValues) saw_values_text_ = true;
    if (kind == TextKind::kReport) return ReadReport(t.text);
    return ReadAssignment(t.text);
  }

  absl::Status Finish() {
    if (!saw_allocations_) {
      return absl::InvalidArgumentError(
          "no buffer assignment: none of the texts starts with 'BufferAssignment:'");
    }
    if (!p_->stated.total_bytes_used && !saw_values_text_) {
      return Error(
          ba_name_, ba_last_line_,
          StrCat("the buffer assignment ends after allocation ",
                 p_->allocations.empty() ? -1 : p_->allocations.back().index,
                 " without its 'Total bytes used' line: the file looks truncated (newer "
                 "XLA writes that line into the -buffer-assignment-values.txt beside it)"));
    }
    // Live ranges onto values. XLA's names are unique in a module; where a hand-written module
    // repeats one across computations, the range goes to a value without one yet, preferring
    // those outside thread-local allocations (embedded computations have no live ranges).
    for (const Range& r : ranges_) {
      auto it = value_by_key_.find(r.key);
      size_t chosen = SIZE_MAX;
      if (it != value_by_key_.end()) {
        for (int pass = 0; pass < 2 && chosen == SIZE_MAX; ++pass) {
          for (size_t vi : it->second) {
            const MemoryValue& v = p_->values[vi];
            const bool thread_local_value =
                v.allocation >= 0 && p_->allocations[v.allocation].kind == MemoryKind::kThreadLocal;
            if (v.start < 0 && (pass == 1 || !thread_local_value)) {
              chosen = vi;
              break;
            }
          }
        }
      }
      if (it == value_by_key_.end()) {
        // A value no allocation holds (a token, say): live, but no bytes.
        MemoryValue v;
        v.id = -1;
        SplitValueKey(r.key, &v.instruction, &v.index);
        v.start = r.start;
        v.end = r.end;
        value_by_key_[r.key].push_back(p_->values.size());
        p_->values.push_back(std::move(v));
        ++p_->unallocated_live_ranges;
        continue;
      }
      if (chosen == SIZE_MAX) {
        return Error(r.text, r.line, StrCat("a second live range for ", r.key));
      }
      MemoryValue& v = p_->values[chosen];
      v.start = r.start;
      v.end = r.end;
    }
    // Whole-shape sizes of instructions whose own value is not allocated.
    for (const auto& [instr, shape_text] : sub_value_shapes_) {
      auto it = value_by_key_.find(instr + "{}");
      if (it != value_by_key_.end() &&
          std::any_of(it->second.begin(), it->second.end(),
                      [&](size_t vi) { return p_->values[vi].allocation >= 0; })) {
        continue;
      }
      absl::StatusOr<Shape> shape = ParseShape(shape_text);
      if (!shape.ok()) continue;
      const int64_t bytes = shape->IsTuple() ? 8 * shape->tuple_count() : ShapeByteSize(*shape);
      p_->instruction_shape_bytes.push_back({instr, bytes});
    }
    if (report_total_) p_->stated.report_total_bytes = report_total_;
    return absl::OkStatus();
  }

 private:
  enum class Section {
    kNone,
    kAllocations,
    kUsedValues,
    kLiveRangeHead,
    kSequence,
    kRanges,
    kPeak,
    kBreakdown
  };
  struct Range {
    std::string key;
    int64_t start = 0, end = 0;
    std::string text;
    int64_t line = 0;
  };

  static absl::Status Error(const std::string& name, int64_t line, const std::string& message) {
    return absl::InvalidArgumentError(StrCat(name, ":", line, ": ", message));
  }
  absl::Status Error(int64_t line, const std::string& message) const {
    return Error(name_, line, message);
  }

  template <typename Fn>
  static absl::Status ForEachLine(std::string_view text, Fn fn) {
    int64_t line = 0;
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string_view::npos) nl = text.size();
      ++line;
      if (absl::Status st = fn(line, text.substr(pos, nl - pos)); !st.ok()) return st;
      pos = nl + 1;
    }
    return absl::OkStatus();
  }

  absl::Status ReadReport(std::string_view text) {
    std::optional<int64_t> used, spaces;
    absl::Status st = ForEachLine(text, [&](int64_t line, std::string_view raw) -> absl::Status {
      std::string_view s = Trim(raw);
      int64_t n = 0;
      if (Consume(&s, "Total bytes used: ") || Consume(&s, "Total bytes: ")) {
        if (!ConsumeInt(&s, &n)) return Error(line, "expected a byte count after 'Total bytes'");
        if (StartsWith(Trim(raw), "Total bytes used: ")) {
          used = n;
        } else {
          spaces = spaces.value_or(0) + n;
        }
      }
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
    if (!used && !spaces) {
      return absl::InvalidArgumentError(
          StrCat(name_,
                 ": the memory-usage report states no total ('Total bytes used:' or "
                 "'Total bytes:'); the file looks truncated"));
    }
    report_total_ = used ? used : spaces;
    return absl::OkStatus();
  }

  absl::Status ReadAssignment(std::string_view text) {
    Section section = Section::kNone;
    int64_t last_line = 0;
    std::string pending_entry;  // a used value still waiting for its "from instruction" line
    int64_t pending_line = 0;
    int64_t peak_sum = 0;
    absl::Status st = ForEachLine(text, [&](int64_t line, std::string_view raw) -> absl::Status {
      last_line = line;
      std::string_view s = Trim(raw);
      if (s.empty()) return absl::OkStatus();
      // Headings, in any section.
      if (s == "BufferAssignment:") {
        section = Section::kAllocations;
        saw_allocations_ = true;
        ba_name_ = name_;
        return absl::OkStatus();
      }
      if (StartsWith(s, "Total bytes used:")) {
        std::string_view rest = Trim(s.substr(17));
        int64_t n = 0;
        if (!ConsumeInt(&rest, &n))
          return Error(line, "expected a byte count after 'Total bytes used:'");
        p_->stated.total_bytes_used = n;
        section = Section::kNone;
        return absl::OkStatus();
      }
      if (s == "Used values:") {
        section = Section::kUsedValues;
        return absl::OkStatus();
      }
      if (StartsWith(s, "HloLiveRange (max ")) {
        std::string_view rest = s.substr(18);
        int64_t n = 0;
        if (!ConsumeInt(&rest, &n) || rest != "):") {
          return Error(line, "expected 'HloLiveRange (max N):'");
        }
        p_->stated.schedule_max = n;
        section = Section::kLiveRangeHead;
        return absl::OkStatus();
      }
      if (s == "InstructionSequence:") {
        if (!p_->points.empty()) return Error(line, "a second InstructionSequence");
        section = Section::kSequence;
        return absl::OkStatus();
      }
      if (s == "BufferLiveRange:") {
        section = Section::kRanges;
        return absl::OkStatus();
      }
      if (StartsWith(s, "Live ranges at ")) {
        std::string_view rest = s.substr(15);
        int64_t t = 0;
        if (!ConsumeInt(&rest, &t) || rest != " (peak):") {
          return Error(line, "expected 'Live ranges at T (peak):'");
        }
        p_->stated.peak_point = t;
        p_->stated.peak_bytes = 0;
        peak_sum = 0;
        section = Section::kPeak;
        return absl::OkStatus();
      }
      if (StartsWith(s, "Stack trace breakdown for peak usage:")) {
        std::string_view rest = Trim(s.substr(37));
        int64_t n = 0;
        if (!ConsumeGroupedInt(&rest, &n) || !Consume(&rest, " bytes")) {
          return Error(line, "expected the peak's byte count ('N bytes')");
        }
        p_->stated.breakdown_peak_bytes = n;
        section = Section::kBreakdown;
        return absl::OkStatus();
      }

      switch (section) {
        case Section::kAllocations:
          ba_last_line_ = line;
          if (StartsWith(s, "allocation ")) return ReadAllocation(line, s);
          if (StartsWith(s, "value:")) return ReadAllocatedValue(line, s);
          ++p_->skipped_lines;
          return absl::OkStatus();
        case Section::kUsedValues:
          if (s[0] == '<') {
            if (!pending_entry.empty()) {
              return Error(pending_line, StrCat("the used value ", pending_entry,
                                                " has no 'from instruction' line"));
            }
            pending_entry = std::string(s);
            pending_line = line;
            return absl::OkStatus();
          }
          if (StartsWith(s, "from instruction:")) {
            ReadDefiningInstruction(pending_entry, Trim(s.substr(17)));
            pending_entry.clear();
            return absl::OkStatus();
          }
          // Positions, uses and their headings.
          return absl::OkStatus();
        case Section::kLiveRangeHead:
          ++p_->skipped_lines;
          return absl::OkStatus();
        case Section::kSequence: {
          const size_t colon = s.find(':');
          int64_t i = 0;
          if (colon == std::string_view::npos || !ParseInt(s.substr(0, colon), &i)) {
            return Error(line, "expected 'N:instruction' in the InstructionSequence");
          }
          if (i != static_cast<int64_t>(p_->points.size())) {
            return Error(
                line, StrCat("program point ", i, " where ", p_->points.size(), " was expected"));
          }
          p_->points.push_back(std::string(s.substr(colon + 1)));
          return absl::OkStatus();
        }
        case Section::kRanges: {
          const size_t colon = s.rfind(':');
          const size_t dash = colon == std::string_view::npos ? colon : s.find('-', colon);
          Range r;
          std::string name, index;
          if (colon == std::string_view::npos || dash == std::string_view::npos ||
              !ParseInt(s.substr(colon + 1, dash - colon - 1), &r.start) ||
              !ParseInt(s.substr(dash + 1), &r.end) ||
              !SplitValueKey(s.substr(0, colon), &name, &index)) {
            return Error(line, "expected 'name{index}:start-end' in the BufferLiveRange");
          }
          if (r.end < r.start) {
            return Error(line, StrCat("the live range of ", s.substr(0, colon), " ends (", r.end,
                                      ") before it starts (", r.start, ")"));
          }
          r.key = name + index;
          r.text = name_;
          r.line = line;
          ranges_.push_back(std::move(r));
          return absl::OkStatus();
        }
        case Section::kPeak: {
          // "name{index}: N bytes (cumulative: M bytes)" or "name: N bytes".
          const size_t colon = s.find(": ");
          std::string_view rest = colon == std::string_view::npos ? s : s.substr(colon + 2);
          int64_t bytes = 0;
          if (colon == std::string_view::npos || !ConsumeGroupedInt(&rest, &bytes) ||
              !Consume(&rest, " bytes")) {
            return Error(line, "expected 'name: N bytes' in the live ranges at the peak");
          }
          peak_sum += bytes;
          if (Consume(&rest, " (cumulative: ")) {
            int64_t cumulative = 0;
            if (!ConsumeGroupedInt(&rest, &cumulative) || rest != " bytes)") {
              return Error(line, "expected '(cumulative: N bytes)'");
            }
            if (cumulative != peak_sum) {
              return Error(line,
                           StrCat("cumulative ", cumulative,
                                  " bytes does not follow from the sizes above (", peak_sum, ")"));
            }
          } else if (!rest.empty()) {
            return Error(line, "unexpected text after the byte count");
          }
          const std::string_view key = s.substr(0, colon);
          p_->stated.peak_entries.push_back({std::string(key), bytes});
          p_->stated.peak_bytes = peak_sum;
          p_->stated.peak_measure = key.find('{') != std::string_view::npos
                                        ? StatedMemory::PeakMeasure::kValueBytes
                                        : StatedMemory::PeakMeasure::kInstructionShapeBytes;
          return absl::OkStatus();
        }
        case Section::kBreakdown:
          return absl::OkStatus();
        case Section::kNone:
          ++p_->skipped_lines;
          return absl::OkStatus();
      }
      return absl::OkStatus();
    });
    if (!st.ok()) return st;
    if (!pending_entry.empty()) {
      return Error(pending_line, StrCat("the text ends inside the used value ", pending_entry,
                                        " (no 'from instruction' line): it looks truncated"));
    }
    if (section == Section::kLiveRangeHead || section == Section::kSequence) {
      return Error(last_line,
                   "the text ends inside the HloLiveRange's InstructionSequence (no "
                   "BufferLiveRange follows): it looks truncated");
    }
    if (section == Section::kRanges) {
      return Error(last_line,
                   "the text ends inside the BufferLiveRange section (no 'Live ranges "
                   "at T (peak)' follows): it looks truncated");
    }
    if (p_->stated.schedule_max &&
        static_cast<int64_t>(p_->points.size()) < *p_->stated.schedule_max) {
      return Error(last_line, StrCat("HloLiveRange (max ", *p_->stated.schedule_max,
                                     ") lists only ", p_->points.size(), " instructions"));
    }
    return absl::OkStatus();
  }

  // "allocation N: size S, attr, attr:".
  absl::Status ReadAllocation(int64_t line, std::string_view s) {
    std::string_view rest = s.substr(11);
    MemoryAllocation a;
    if (!ConsumeInt(&rest, &a.index) || !Consume(&rest, ": size ") || !ConsumeInt(&rest, &a.size)) {
      return Error(line, "expected 'allocation N: size S...'");
    }
    if (rest.empty() || rest.back() != ':') {
      return Error(line, "the allocation heading does not end with ':' (truncated?)");
    }
    rest.remove_suffix(1);
    // Attributes separated by ", ", with shapes between |...| kept whole.
    std::vector<std::string_view> attrs;
    bool in_shape = false;
    size_t start = 0;
    for (size_t i = 0; i < rest.size(); ++i) {
      if (rest[i] == '|') in_shape = !in_shape;
      if (!in_shape && rest.compare(i, 2, ", ") == 0) {
        if (i > start) attrs.push_back(rest.substr(start, i - start));
        start = i + 2;
        ++i;
      }
    }
    if (in_shape) return Error(line, "an unterminated |shape| in the allocation heading");
    if (start < rest.size()) attrs.push_back(rest.substr(start));
    bool is_constant = false, is_thread_local = false, is_temp = false, is_output = false;
    for (std::string_view attr : attrs) {
      std::string_view v = attr;
      if (Consume(&v, "parameter ")) {
        if (!ParseInt(v, &a.parameter_number)) return Error(line, "expected 'parameter N'");
      } else if (Consume(&v, "shape |")) {
        const size_t bar = v.find('|');
        a.parameter_shape = std::string(v.substr(0, bar));
        std::string_view after = v.substr(bar + 1);
        if (Consume(&after, " at ShapeIndex ")) a.parameter_index = std::string(after);
      } else if (Consume(&v, "output shape is |")) {
        a.output_shape = std::string(v.substr(0, v.find('|')));
        is_output = true;
      } else if (Consume(&v, "color ")) {
        if (!ParseInt(v, &a.color)) return Error(line, "expected 'color N'");
      } else if (attr == "constant") {
        is_constant = true;
      } else if (attr == "thread-local") {
        is_thread_local = true;
      } else if (attr == "maybe-live-out") {
        a.maybe_live_out = true;
      } else if (attr == "preallocated-temp") {
        is_temp = true;
      } else {
        a.other_attributes.push_back(std::string(attr));
      }
    }
    a.kind = is_thread_local                 ? MemoryKind::kThreadLocal
             : is_constant                   ? MemoryKind::kConstant
             : a.parameter_number >= 0       ? MemoryKind::kParameter
             : is_temp                       ? MemoryKind::kTemp
             : is_output || a.maybe_live_out ? MemoryKind::kOutput
                                             : MemoryKind::kTemp;
    for (const MemoryAllocation& other : p_->allocations) {
      if (other.index == a.index) return Error(line, StrCat("allocation ", a.index, " again"));
    }
    p_->allocations.push_back(std::move(a));
    return absl::OkStatus();
  }

  // "value: <ID name{index} (phi) @color> (size=S,offset=O): shape".
  absl::Status ReadAllocatedValue(int64_t line, std::string_view s) {
    if (p_->allocations.empty()) return Error(line, "a value before any allocation");
    std::string_view rest = Trim(s.substr(6));
    if (!Consume(&rest, "<") || rest.find('>') == std::string_view::npos) {
      return Error(line, "expected 'value: <ID name> (size=S,offset=O): shape'");
    }
    const size_t close = rest.find('>');
    std::string_view ref = rest.substr(0, close);
    rest = rest.substr(close);
    MemoryValue v;
    if (!ConsumeInt(&ref, &v.id) || !Consume(&ref, " ")) {
      return Error(line, "expected the value's id after '<'");
    }
    // The name runs to the index, a space or the end.
    size_t name_end = 0;
    while (name_end < ref.size() && ref[name_end] != '{' && ref[name_end] != ' ') ++name_end;
    v.instruction = std::string(ref.substr(0, name_end));
    ref.remove_prefix(name_end);
    if (!ref.empty() && ref[0] == '{') {
      const size_t brace = ref.find('}');
      if (brace == std::string_view::npos) return Error(line, "an unterminated shape index");
      v.index = std::string(ref.substr(0, brace + 1));
      ref.remove_prefix(brace + 1);
    }
    while (!ref.empty()) {
      if (Consume(&ref, " (phi)")) {
        v.phi = true;
      } else if (Consume(&ref, " @")) {
        int64_t color = 0;
        if (!ConsumeInt(&ref, &color)) return Error(line, "expected a colour after '@'");
      } else {
        return Error(line, StrCat("unexpected '", ref, "' in the value"));
      }
    }
    if (v.instruction.empty()) return Error(line, "a value without an instruction name");
    if (!Consume(&rest, "> (size=") || !ConsumeInt(&rest, &v.size) || !Consume(&rest, ",offset=") ||
        !ConsumeInt(&rest, &v.offset) || !Consume(&rest, ")")) {
      return Error(line, "expected '(size=S,offset=O)' after the value");
    }
    if (Consume(&rest, ": ")) v.shape = std::string(rest);
    const MemoryAllocation& a = p_->allocations.back();
    if (v.offset + v.size > a.size) {
      return Error(line, StrCat("the value ", v.Name(), " (offset ", v.offset, ", size ", v.size,
                                ") lies outside allocation ", a.index, " (size ", a.size, ")"));
    }
    v.allocation = static_cast<int64_t>(p_->allocations.size()) - 1;
    value_by_key_[v.Name()].push_back(p_->values.size());
    p_->values.push_back(std::move(v));
    return absl::OkStatus();
  }

  // Keeps the defining instruction's shape of a tuple element, which XLA's peak rule sizes by
  // its instruction's whole shape.
  void ReadDefiningInstruction(std::string_view entry, std::string_view instr) {
    // entry: "<ID name{index} (phi) @0>"
    const size_t space = entry.find(' ');
    if (space == std::string_view::npos) return;
    std::string_view ref = entry.substr(space + 1);
    const size_t brace = ref.find('{');
    const size_t end = ref.find_first_of(" >");
    if (brace == std::string_view::npos || brace > end) return;
    if (ref.substr(brace, 2) == "{}") return;
    const std::string name(ref.substr(0, brace));
    if (sub_value_shapes_.contains(name)) return;
    std::string_view shape = ShapeAfterEquals(instr);
    if (!shape.empty()) sub_value_shapes_[name] = std::string(shape);
  }

  MemoryProfile* p_;
  std::string name_;
  std::string ba_name_;
  int64_t ba_last_line_ = 0;
  bool saw_allocations_ = false;
  bool saw_values_text_ = false;
  std::optional<int64_t> report_total_;
  absl::flat_hash_map<std::string, std::vector<size_t>> value_by_key_;
  std::vector<Range> ranges_;
  absl::flat_hash_map<std::string, std::string> sub_value_shapes_;
};

}  // namespace

bool LooksLikeBufferAssignment(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == '\n' || text[i] == '\r' || text[i] == ' ')) ++i;
  return StartsWith(text.substr(i), "BufferAssignment:");
}

const std::vector<std::string>& MemoryFileSuffixes() {
  static const std::vector<std::string> kSuffixes = {"-buffer-assignment.txt",
                                                     "-buffer-assignment-values.txt",
                                                     "-live-range.txt", "-memory-usage-report.txt"};
  return kSuffixes;
}

std::string MemoryFileBase(std::string_view path) {
  for (const std::string& suffix : MemoryFileSuffixes()) {
    if (EndsWith(path, suffix)) return std::string(path.substr(0, path.size() - suffix.size()));
  }
  return "";
}

absl::StatusOr<MemoryProfile> ReadXlaMemoryProfile(const std::vector<MemoryText>& texts) {
  MemoryProfile profile;
  profile.source = "xla";
  Reader reader(&profile);
  for (const MemoryText& t : texts) {
    if (absl::Status st = reader.Read(t); !st.ok()) return st;
    profile.files.push_back(t.name);
  }
  if (absl::Status st = reader.Finish(); !st.ok()) return st;
  FinishMemoryProfile(&profile);
  return profile;
}

absl::StatusOr<MemoryProfile> ReadXlaMemoryProfileFiles(const std::string& path) {
  std::vector<std::string> paths;
  const std::string base = MemoryFileBase(path);
  if (base.empty()) {
    paths.push_back(path);
  } else {
    for (const std::string& suffix : MemoryFileSuffixes()) {
      std::error_code ec;
      if (std::filesystem::is_regular_file(base + suffix, ec)) paths.push_back(base + suffix);
    }
  }
  std::vector<MemoryText> texts;
  for (const std::string& p : paths) {
    absl::StatusOr<std::string> text = ReadFileToString(p);
    if (!text.ok()) return text.status();
    texts.push_back({p, *std::move(text)});
  }
  return ReadXlaMemoryProfile(texts);
}

}  // namespace hlowb
