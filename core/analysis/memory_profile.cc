#include "core/analysis/memory_profile.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_format.h"
#include "core/support/json.h"
#include "core/support/strings.h"

namespace hlowb {

namespace {

constexpr MemoryKind kAllKinds[kMemoryKindCount] = {MemoryKind::kParameter, MemoryKind::kOutput,
                                                    MemoryKind::kTemp, MemoryKind::kConstant,
                                                    MemoryKind::kThreadLocal};

// Covered length of a union of byte ranges under insertions and removals: a segment tree over
// the range ends (compressed), each node counting the ranges that cover it whole.
class CoverTree {
 public:
  explicit CoverTree(std::vector<int64_t> coords) : coords_(std::move(coords)) {
    std::sort(coords_.begin(), coords_.end());
    coords_.erase(std::unique(coords_.begin(), coords_.end()), coords_.end());
    const size_t leaves = coords_.size() > 1 ? coords_.size() - 1 : 1;
    count_.assign(4 * leaves, 0);
    length_.assign(4 * leaves, 0);
  }
  void Add(int64_t lo, int64_t hi, int delta) {
    if (lo >= hi || coords_.size() < 2) return;
    const int l = Coord(lo), r = Coord(hi);
    Update(1, 0, static_cast<int>(coords_.size()) - 1, l, r, delta);
  }
  int64_t covered() const { return length_.empty() ? 0 : length_[1]; }

 private:
  int Coord(int64_t x) const {
    return static_cast<int>(std::lower_bound(coords_.begin(), coords_.end(), x) - coords_.begin());
  }
  // Node covers coords_[lo]..coords_[hi]; the update covers coords_[l]..coords_[r].
  void Update(int node, int lo, int hi, int l, int r, int delta) {
    if (r <= lo || hi <= l) return;
    if (l <= lo && hi <= r) {
      count_[node] += delta;
    } else {
      const int mid = (lo + hi) / 2;
      Update(2 * node, lo, mid, l, r, delta);
      Update(2 * node + 1, mid, hi, l, r, delta);
    }
    if (count_[node] > 0) {
      length_[node] = coords_[hi] - coords_[lo];
    } else if (hi - lo == 1) {
      length_[node] = 0;
    } else {
      length_[node] = length_[2 * node] + length_[2 * node + 1];
    }
  }

  std::vector<int64_t> coords_;
  std::vector<int> count_;
  std::vector<int64_t> length_;
};

// Bytes of each value's defining instruction's whole shape, as XLA's peak rule sizes values:
// the size of the instruction's "{}" value when one is allocated, else what the reader found
// in the instruction's text, else the value's own size.
std::vector<int64_t> InstructionShapeSizes(const MemoryProfile& p) {
  absl::flat_hash_map<std::string, int64_t> whole;
  for (const auto& [name, bytes] : p.instruction_shape_bytes) whole.try_emplace(name, bytes);
  for (const MemoryValue& v : p.values) {
    if (v.index == "{}" && v.allocation >= 0) whole.insert_or_assign(v.instruction, v.size);
  }
  std::vector<int64_t> out(p.values.size());
  for (size_t i = 0; i < p.values.size(); ++i) {
    auto it = whole.find(p.values[i].instruction);
    out[i] = it != whole.end() ? it->second : p.values[i].size;
  }
  return out;
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole == 0) return part == 0 ? "0%" : "n/a";
  return absl::StrFormat("%+.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string OptionalJson(const std::optional<int64_t>& v) {
  return v ? StrCat(*v) : std::string("null");
}

std::string PointLabel(const MemoryProfile& p, int64_t point) {
  if (point < 0) return "-";
  std::string_view name = p.PointName(point);
  return name.empty() ? StrCat(point, " (end of program)") : StrCat(point, " (", name, ")");
}

std::string SourceText(const MemoryProfile& p) {
  if (p.source == "xla") return "XLA's buffer assignment";
  if (p.source == "hlowb") return "hlowb's buffer assignment";
  return p.source;
}

std::string TotalsJson(const MemoryProfile& p) {
  std::string out = StrCat("{\"bytes\": ", p.total_bytes,
                           ", \"allocations\": ", p.allocations.size(), ", \"by_kind\": {");
  for (int k = 0; k < kMemoryKindCount; ++k) {
    StrAppend(&out, k ? ", " : "", JsonQuote(MemoryKindName(kAllKinds[k])),
              ": {\"bytes\": ", p.kind_bytes[k], ", \"allocations\": ", p.kind_count[k], "}");
  }
  out += "}}";
  return out;
}

std::string PeakJson(const MemoryProfile& p, bool with_buffers) {
  std::string out = StrCat("{\"point\": ", p.peak.point,
                           ", \"instruction\": ", JsonQuote(p.PointName(p.peak.point)),
                           ", \"bytes\": ", p.peak.bytes);
  if (with_buffers) {
    out += ", \"buffers\": [";
    for (size_t i = 0; i < p.live_at_peak.size(); ++i) {
      StrAppend(&out, i ? ", " : "", p.live_at_peak[i]);
    }
    out += "]";
  }
  out += "}";
  return out;
}

std::string XlaPeakJson(const MemoryProfile& p) {
  return StrCat("{\"point\": ", p.xla_peak.point,
                ", \"instruction\": ", JsonQuote(p.PointName(p.xla_peak.point)),
                ", \"value_bytes\": ", p.xla_peak.value_bytes,
                ", \"instruction_shape_bytes\": ", p.xla_peak.instruction_shape_bytes, "}");
}

std::string_view MeasureName(StatedMemory::PeakMeasure m) {
  return m == StatedMemory::PeakMeasure::kValueBytes ? "value-bytes" : "instruction-shape-bytes";
}

}  // namespace

std::string_view MemoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kParameter:
      return "parameter";
    case MemoryKind::kOutput:
      return "output";
    case MemoryKind::kTemp:
      return "temp";
    case MemoryKind::kConstant:
      return "constant";
    case MemoryKind::kThreadLocal:
      return "thread-local";
  }
  return "?";
}

bool MemoryBuffer::LiveAt(int64_t point) const {
  auto it = std::upper_bound(
      live.begin(), live.end(), point,
      [](int64_t p, const std::pair<int64_t, int64_t>& iv) { return p < iv.first; });
  if (it == live.begin()) return false;
  --it;
  return point <= it->second;
}

std::string_view MemoryProfile::PointName(int64_t point) const {
  if (point < 0 || point >= static_cast<int64_t>(points.size())) return "";
  return points[point];
}

void FinishMemoryProfile(MemoryProfile* p) {
  // Totals.
  p->total_bytes = 0;
  std::fill(std::begin(p->kind_bytes), std::end(p->kind_bytes), 0);
  std::fill(std::begin(p->kind_count), std::end(p->kind_count), 0);
  for (const MemoryAllocation& a : p->allocations) {
    p->total_bytes += a.size;
    p->kind_bytes[static_cast<int>(a.kind)] += a.size;
    p->kind_count[static_cast<int>(a.kind)] += 1;
  }

  // Points.
  int64_t last_end = -1;
  p->values_without_live_range = 0;
  for (const MemoryValue& v : p->values) {
    if (v.has_live_range()) {
      last_end = std::max(last_end, v.end);
    } else {
      ++p->values_without_live_range;
    }
  }
  if (last_end + 1 > static_cast<int64_t>(p->points.size())) p->points.resize(last_end + 1);
  const int64_t n = static_cast<int64_t>(p->points.size());

  // Buffers: values of one allocation at the same bytes.
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<int64_t>> slices;
  for (size_t i = 0; i < p->values.size(); ++i) {
    MemoryValue& v = p->values[i];
    v.buffer = -1;
    if (v.allocation < 0) continue;
    slices[{v.allocation, v.offset, v.size}].push_back(static_cast<int64_t>(i));
  }
  p->buffers.clear();
  p->buffers.reserve(slices.size());
  for (auto& [key, members] : slices) {
    MemoryBuffer b;
    std::tie(b.allocation, b.offset, b.size) = key;
    std::sort(members.begin(), members.end(), [&](int64_t x, int64_t y) {
      const MemoryValue& a = p->values[x];
      const MemoryValue& c = p->values[y];
      const int64_t sa = a.has_live_range() ? a.start : INT64_MAX;
      const int64_t sc = c.has_live_range() ? c.start : INT64_MAX;
      return std::tie(sa, a.id) < std::tie(sc, c.id);
    });
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (int64_t vi : members) {
      p->values[vi].buffer = static_cast<int64_t>(p->buffers.size());
      const MemoryValue& v = p->values[vi];
      if (v.has_live_range()) ranges.push_back({v.start, v.end});
    }
    std::sort(ranges.begin(), ranges.end());
    for (const auto& r : ranges) {
      if (!b.live.empty() && r.first <= b.live.back().second + 1) {
        b.live.back().second = std::max(b.live.back().second, r.second);
      } else {
        b.live.push_back(r);
      }
    }
    b.values = std::move(members);
    p->buffers.push_back(std::move(b));
  }

  // value_bytes: every live value on its own.
  std::vector<int64_t> delta(n + 1, 0);
  for (const MemoryValue& v : p->values) {
    if (!v.has_live_range()) continue;
    delta[v.start] += v.size;
    delta[v.end + 1] -= v.size;
  }
  p->value_bytes.assign(n, 0);
  for (int64_t t = 0, run = 0; t < n; ++t) {
    run += delta[t];
    p->value_bytes[t] = run;
  }

  // live_bytes and per-allocation steps: the union of live buffers' bytes in each allocation.
  std::fill(delta.begin(), delta.end(), 0);
  p->allocation_steps.assign(p->allocations.size(), {});
  std::vector<std::vector<int64_t>> by_allocation(p->allocations.size());
  for (size_t bi = 0; bi < p->buffers.size(); ++bi) {
    const MemoryBuffer& b = p->buffers[bi];
    if (b.live.empty() || b.size <= 0) continue;
    if (b.allocation >= static_cast<int64_t>(by_allocation.size())) continue;
    by_allocation[b.allocation].push_back(static_cast<int64_t>(bi));
  }
  for (size_t a = 0; a < by_allocation.size(); ++a) {
    if (by_allocation[a].empty()) continue;
    std::vector<int64_t> coords;
    struct Event {
      int64_t point;
      int delta;
      int64_t lo, hi;
    };
    std::vector<Event> events;
    for (int64_t bi : by_allocation[a]) {
      const MemoryBuffer& b = p->buffers[bi];
      coords.push_back(b.offset);
      coords.push_back(b.offset + b.size);
      for (const auto& [s, e] : b.live) {
        events.push_back({s, +1, b.offset, b.offset + b.size});
        events.push_back({e + 1, -1, b.offset, b.offset + b.size});
      }
    }
    std::sort(events.begin(), events.end(),
              [](const Event& x, const Event& y) { return x.point < y.point; });
    CoverTree tree(std::move(coords));
    int64_t held = 0;
    std::vector<MemoryStep>& steps = p->allocation_steps[a];
    for (size_t i = 0; i < events.size();) {
      const int64_t point = events[i].point;
      for (; i < events.size() && events[i].point == point; ++i) {
        tree.Add(events[i].lo, events[i].hi, events[i].delta);
      }
      const int64_t now = tree.covered();
      if (now == held) continue;
      delta[std::min(point, n)] += now - held;
      if (point < n) steps.push_back({point, now});
      held = now;
    }
  }
  p->live_bytes.assign(n, 0);
  for (int64_t t = 0, run = 0; t < n; ++t) {
    run += delta[t];
    p->live_bytes[t] = run;
  }

  // The peak and what is live there.
  const bool any_range = last_end >= 0;
  p->peak = MemoryPeak{};
  p->live_at_peak.clear();
  if (any_range) {
    p->peak.point = 0;
    p->peak.bytes = p->live_bytes.empty() ? 0 : p->live_bytes[0];
    for (int64_t t = 1; t < n; ++t) {
      if (p->live_bytes[t] > p->peak.bytes) {
        p->peak = MemoryPeak{t, p->live_bytes[t]};
      }
    }
    for (size_t bi = 0; bi < p->buffers.size(); ++bi) {
      if (p->buffers[bi].LiveAt(p->peak.point)) p->live_at_peak.push_back(static_cast<int64_t>(bi));
    }
    std::sort(p->live_at_peak.begin(), p->live_at_peak.end(), [&](int64_t x, int64_t y) {
      const MemoryBuffer& a = p->buffers[x];
      const MemoryBuffer& b = p->buffers[y];
      return std::make_tuple(-a.size, a.allocation, a.offset) <
             std::make_tuple(-b.size, b.allocation, b.offset);
    });
  }

  // XLA's rule for the peak point.
  p->xla_peak = XlaPeak{};
  if (any_range) {
    const std::vector<int64_t> isize = InstructionShapeSizes(*p);
    struct Event {
      int64_t point;
      bool exit;
      int64_t bytes;
    };
    std::vector<Event> events;
    for (size_t i = 0; i < p->values.size(); ++i) {
      const MemoryValue& v = p->values[i];
      if (!v.has_live_range()) continue;
      events.push_back({v.start, false, isize[i]});
      events.push_back({v.end + 1, true, isize[i]});
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
      return std::tie(x.point, x.exit) < std::tie(y.point, y.exit);
    });
    int64_t usage = 0, best = 0, point = 0;
    for (const Event& e : events) {
      usage += e.exit ? -e.bytes : e.bytes;
      if (best < usage) {
        best = usage;
        point = e.point;
      }
    }
    p->xla_peak.point = point;
    if (point < n) p->xla_peak.value_bytes = p->value_bytes[point];
    for (size_t i = 0; i < p->values.size(); ++i) {
      const MemoryValue& v = p->values[i];
      if (v.has_live_range() && v.start <= point && point <= v.end) {
        p->xla_peak.instruction_shape_bytes += isize[i];
      }
    }
  }
}

std::vector<std::string> CheckStatedMemory(const MemoryProfile& p) {
  std::vector<std::string> out;
  const StatedMemory& s = p.stated;
  if (s.total_bytes_used && *s.total_bytes_used != p.total_bytes) {
    out.push_back(StrCat("the buffer assignment states ", *s.total_bytes_used,
                         " bytes used; its allocations add up to ", p.total_bytes));
  }
  if (s.report_total_bytes && *s.report_total_bytes != p.total_bytes) {
    out.push_back(StrCat("the memory-usage report states ", *s.report_total_bytes,
                         " bytes; the allocations add up to ", p.total_bytes));
  }
  if (s.peak_point && s.peak_bytes) {
    const int64_t t = *s.peak_point;
    if (t < 0 || t >= static_cast<int64_t>(p.points.size())) {
      out.push_back(StrCat("the stated peak point ", t, " is outside the schedule (0..",
                           static_cast<int64_t>(p.points.size()) - 1, ")"));
    } else {
      // The stated list against the values we have live at t.
      const std::vector<int64_t> isize = InstructionShapeSizes(p);
      int64_t ours = 0, live = 0;
      absl::flat_hash_map<std::string, int64_t> live_sizes;
      for (size_t i = 0; i < p.values.size(); ++i) {
        const MemoryValue& v = p.values[i];
        if (!v.has_live_range() || v.start > t || t > v.end) continue;
        ++live;
        ours += s.peak_measure == StatedMemory::PeakMeasure::kValueBytes ? v.size : isize[i];
        live_sizes[v.Name()] = v.size;
      }
      if (ours != *s.peak_bytes) {
        out.push_back(StrCat("the file states ", *s.peak_bytes, " bytes live at point ", t, " (",
                             MeasureName(s.peak_measure), "); its live ranges give ", ours));
      }
      if (static_cast<int64_t>(s.peak_entries.size()) != live) {
        out.push_back(StrCat("the file lists ", s.peak_entries.size(), " values live at point ", t,
                             "; its live ranges give ", live));
      } else if (s.peak_measure == StatedMemory::PeakMeasure::kValueBytes) {
        for (const auto& [name, bytes] : s.peak_entries) {
          auto it = live_sizes.find(name);
          if (it == live_sizes.end() || it->second != bytes) {
            out.push_back(StrCat("the file lists ", name, " (", bytes, " bytes) live at point ", t,
                                 "; its live ranges ",
                                 it == live_sizes.end() ? std::string("do not")
                                                        : StrCat("give ", it->second, " bytes")));
            break;
          }
        }
      }
      // XLA names the point its rule picks; hlowb's own writer names the first maximum of
      // value_bytes. Either is the file's own choice, anything else is a misreading.
      const int64_t first_max = static_cast<int64_t>(
          std::max_element(p.value_bytes.begin(), p.value_bytes.end()) - p.value_bytes.begin());
      if (t != p.xla_peak.point && t != first_max) {
        out.push_back(StrCat("the file states the peak at point ", t, "; XLA's rule picks point ",
                             p.xla_peak.point));
      }
    }
  }
  if (s.breakdown_peak_bytes && s.peak_bytes && *s.breakdown_peak_bytes != *s.peak_bytes) {
    out.push_back(StrCat("the stack trace breakdown states ", *s.breakdown_peak_bytes,
                         " bytes at the peak; the list of live values adds up to ", *s.peak_bytes));
  }
  return out;
}

std::string FormatMemoryBytes(int64_t bytes) {
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
  const int64_t mag = bytes < 0 ? -bytes : bytes;
  if (mag < 1024) return StrCat(bytes, " B");
  double v = static_cast<double>(bytes) / 1024.0;
  int u = 0;
  while ((v >= 1024.0 || v <= -1024.0) && u < 4) {
    v /= 1024.0;
    ++u;
  }
  const double av = v < 0 ? -v : v;
  return absl::StrFormat(av >= 100 ? "%.0f %s" : av >= 10 ? "%.1f %s" : "%.2f %s", v, units[u]);
}

std::string MemorySparkline(const std::vector<int64_t>& series, int width) {
  static constexpr char kLevels[] = " .:-=+*#%@";
  constexpr int kTop = sizeof(kLevels) - 2;
  if (series.empty() || width <= 0) return "";
  const int64_t n = static_cast<int64_t>(series.size());
  const int64_t cols = std::min<int64_t>(n, width);
  const int64_t peak = *std::max_element(series.begin(), series.end());
  std::string out;
  for (int64_t c = 0; c < cols; ++c) {
    const int64_t lo = c * n / cols, hi = std::max(lo + 1, (c + 1) * n / cols);
    int64_t m = 0;
    for (int64_t i = lo; i < hi; ++i) m = std::max(m, series[i]);
    int level = 0;
    if (peak > 0 && m > 0) {
      level = static_cast<int>((m * kTop + peak - 1) / peak);  // any bytes show as a mark
      level = std::clamp(level, 1, kTop);
    }
    out.push_back(kLevels[level]);
  }
  return out;
}

std::string FormatMemoryProfileText(const MemoryProfile& p, const std::string& label, int top) {
  std::string out = StrCat("memory of ", label, "\n");
  StrAppend(&out, "source: ", SourceText(p));
  if (!p.files.empty()) {
    out += " (";
    for (size_t i = 0; i < p.files.size(); ++i) StrAppend(&out, i ? ", " : "", p.files[i]);
    out += ")";
  }
  out += "\n";
  if (!p.schedule.empty()) StrAppend(&out, "schedule: ", p.schedule, "\n");
  StrAppend(&out, "allocations: ", p.allocations.size(), ", ", p.total_bytes, " bytes (",
            FormatMemoryBytes(p.total_bytes), ")\n");
  for (int k = 0; k < kMemoryKindCount; ++k) {
    StrAppend(&out, absl::StrFormat("  %-13s %5d %12d bytes  %s\n",
                                    std::string(MemoryKindName(kAllKinds[k])), p.kind_count[k],
                                    p.kind_bytes[k], FormatMemoryBytes(p.kind_bytes[k])));
  }
  const int64_t with_range = static_cast<int64_t>(p.values.size()) - p.values_without_live_range;
  StrAppend(&out, "program points: ", p.points.size(), "; values: ", p.values.size(), " (",
            with_range, " with a live range)\n");
  if (p.peak.point < 0) {
    out += "peak: no live ranges (the buffer assignment has no HloLiveRange section)\n";
  } else {
    StrAppend(&out, "peak: ", p.peak.bytes, " bytes (", FormatMemoryBytes(p.peak.bytes),
              ") at point ", PointLabel(p, p.peak.point),
              ": allocation bytes held by live values\n");
    StrAppend(&out, "XLA's peak (HloLiveRange, each live value counted): ", p.xla_peak.value_bytes,
              " bytes at point ", PointLabel(p, p.xla_peak.point), "\n");
  }
  const StatedMemory& s = p.stated;
  std::vector<std::string> stated;
  if (s.peak_point && s.peak_bytes) {
    stated.push_back(StrCat("peak ", *s.peak_bytes, " bytes at point ", *s.peak_point,
                            s.peak_measure == StatedMemory::PeakMeasure::kInstructionShapeBytes
                                ? " (sized by defining instruction)"
                                : ""));
  }
  if (s.total_bytes_used) stated.push_back(StrCat("total ", *s.total_bytes_used, " bytes"));
  if (s.report_total_bytes) {
    stated.push_back(StrCat("memory-usage report total ", *s.report_total_bytes, " bytes"));
  }
  if (!stated.empty()) {
    out += "the files state: ";
    for (size_t i = 0; i < stated.size(); ++i) StrAppend(&out, i ? ", " : "", stated[i]);
    const std::vector<std::string> checks = CheckStatedMemory(p);
    if (checks.empty()) {
      out += "; all agree\n";
    } else {
      out += "\n";
      for (const std::string& c : checks) StrAppend(&out, "  disagreement: ", c, "\n");
    }
  }
  if (p.skipped_lines > 0) {
    StrAppend(&out, "note: ", p.skipped_lines, " unrecognised lines were skipped\n");
  }
  if (p.peak.point < 0) return out;
  StrAppend(&out, "live bytes over program order (", p.points.size(), " points, peak ",
            FormatMemoryBytes(p.peak.bytes), "):\n  |", MemorySparkline(p.live_bytes, 64), "|\n");
  const int64_t shown = std::min<int64_t>(top, static_cast<int64_t>(p.live_at_peak.size()));
  StrAppend(&out, "largest buffers live at the peak (", shown, " of ", p.live_at_peak.size(),
            "):\n");
  out += absl::StrFormat("  %12s  %-18s %10s  %s\n", "bytes", "allocation", "offset",
                         "values live there (defining instruction{index})");
  for (int64_t i = 0; i < shown; ++i) {
    const MemoryBuffer& b = p.buffers[p.live_at_peak[i]];
    std::string names;
    for (int64_t vi : b.values) {
      const MemoryValue& v = p.values[vi];
      if (!v.has_live_range() || v.start > p.peak.point || p.peak.point > v.end) continue;
      StrAppend(&names, names.empty() ? "" : ", ", v.Name(), v.phi ? " (phi)" : "");
    }
    const std::string alloc = StrCat(b.allocation, " ",
                                     b.allocation < static_cast<int64_t>(p.allocations.size())
                                         ? MemoryKindName(p.allocations[b.allocation].kind)
                                         : std::string_view("?"));
    out += absl::StrFormat("  %12d  %-18s %10d  %s\n", b.size, alloc, b.offset, names);
  }
  return out;
}

std::string FormatMemoryProfileJson(const MemoryProfile& p, const std::string& label) {
  std::string out = StrCat("{\n  \"schema\": \"hlowb.memory/1\",\n  \"label\": ", JsonQuote(label),
                           ",\n  \"source\": ", JsonQuote(p.source), ",\n  \"files\": [");
  for (size_t i = 0; i < p.files.size(); ++i) StrAppend(&out, i ? ", " : "", JsonQuote(p.files[i]));
  StrAppend(&out, "],\n  \"schedule\": ", JsonQuote(p.schedule), ",\n  \"totals\": ", TotalsJson(p),
            ",\n  \"points\": [");
  for (size_t i = 0; i < p.points.size(); ++i) {
    StrAppend(&out, i ? ", " : "", JsonQuote(p.points[i]));
  }
  out += "],\n  \"live_bytes\": [";
  for (size_t i = 0; i < p.live_bytes.size(); ++i) StrAppend(&out, i ? ", " : "", p.live_bytes[i]);
  out += "],\n  \"value_bytes\": [";
  for (size_t i = 0; i < p.value_bytes.size(); ++i) {
    StrAppend(&out, i ? ", " : "", p.value_bytes[i]);
  }
  StrAppend(&out, "],\n  \"peak\": ", PeakJson(p, true), ",\n  \"xla_peak\": ", XlaPeakJson(p));
  const StatedMemory& s = p.stated;
  StrAppend(&out, ",\n  \"stated\": {\"total_bytes_used\": ", OptionalJson(s.total_bytes_used),
            ", \"report_total_bytes\": ", OptionalJson(s.report_total_bytes),
            ", \"peak_point\": ", OptionalJson(s.peak_point),
            ", \"peak_bytes\": ", OptionalJson(s.peak_bytes),
            ", \"peak_measure\": ", JsonQuote(MeasureName(s.peak_measure)), "},\n  \"checks\": [");
  const std::vector<std::string> checks = CheckStatedMemory(p);
  for (size_t i = 0; i < checks.size(); ++i) StrAppend(&out, i ? ", " : "", JsonQuote(checks[i]));
  out += "],\n  \"allocations\": [";
  for (size_t i = 0; i < p.allocations.size(); ++i) {
    const MemoryAllocation& a = p.allocations[i];
    StrAppend(&out, i ? ",\n    " : "\n    ", "{\"index\": ", a.index, ", \"size\": ", a.size,
              ", \"kind\": ", JsonQuote(MemoryKindName(a.kind)),
              ", \"parameter\": ", a.parameter_number,
              ", \"maybe_live_out\": ", a.maybe_live_out ? "true" : "false",
              ", \"color\": ", a.color, ", \"steps\": [");
    if (i < p.allocation_steps.size()) {
      const std::vector<MemoryStep>& steps = p.allocation_steps[i];
      for (size_t k = 0; k < steps.size(); ++k) {
        StrAppend(&out, k ? ", " : "", "[", steps[k].point, ", ", steps[k].bytes, "]");
      }
    }
    out += "]}";
  }
  out += p.allocations.empty() ? "],\n  \"values\": [" : "\n  ],\n  \"values\": [";
  for (size_t i = 0; i < p.values.size(); ++i) {
    const MemoryValue& v = p.values[i];
    StrAppend(&out, i ? ",\n    " : "\n    ", "{\"id\": ", v.id,
              ", \"instruction\": ", JsonQuote(v.instruction), ", \"index\": ", JsonQuote(v.index),
              ", \"phi\": ", v.phi ? "true" : "false", ", \"shape\": ", JsonQuote(v.shape),
              ", \"allocation\": ", v.allocation, ", \"offset\": ", v.offset,
              ", \"size\": ", v.size, ", \"start\": ", v.has_live_range() ? v.start : -1,
              ", \"end\": ", v.has_live_range() ? v.end : -1, ", \"buffer\": ", v.buffer, "}");
  }
  out += p.values.empty() ? "],\n  \"buffers\": [" : "\n  ],\n  \"buffers\": [";
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const MemoryBuffer& b = p.buffers[i];
    StrAppend(&out, i ? ",\n    " : "\n    ", "{\"allocation\": ", b.allocation,
              ", \"offset\": ", b.offset, ", \"size\": ", b.size, ", \"values\": [");
    for (size_t k = 0; k < b.values.size(); ++k) StrAppend(&out, k ? ", " : "", b.values[k]);
    out += "], \"live\": [";
    for (size_t k = 0; k < b.live.size(); ++k) {
      StrAppend(&out, k ? ", " : "", "[", b.live[k].first, ", ", b.live[k].second, "]");
    }
    out += "]}";
  }
  StrAppend(&out, p.buffers.empty() ? "]" : "\n  ]", ",\n  \"skipped_lines\": ", p.skipped_lines,
            "\n}\n");
  return out;
}

std::string FormatMemoryComparisonText(const MemoryProfile& a, const std::string& label_a,
                                       const MemoryProfile& b, const std::string& label_b) {
  std::string out =
      StrCat("A: ", label_a, " (", SourceText(a), ")\nB: ", label_b, " (", SourceText(b), ")\n");
  out += absl::StrFormat("%-22s %14s %14s %14s %9s\n", "", "A", "B", "B - A", "change");
  auto row = [&](const std::string& name, int64_t x, int64_t y) {
    out += absl::StrFormat("%-22s %14d %14d %+14d %9s\n", name, x, y, y - x, Percent(y - x, x));
  };
  row("peak bytes", a.peak.bytes, b.peak.bytes);
  row("XLA's peak bytes", a.xla_peak.value_bytes, b.xla_peak.value_bytes);
  row("total bytes", a.total_bytes, b.total_bytes);
  for (int k = 0; k < kMemoryKindCount; ++k) {
    row(StrCat("  ", MemoryKindName(kAllKinds[k])), a.kind_bytes[k], b.kind_bytes[k]);
  }
  row("allocations", static_cast<int64_t>(a.allocations.size()),
      static_cast<int64_t>(b.allocations.size()));
  row("program points", static_cast<int64_t>(a.points.size()),
      static_cast<int64_t>(b.points.size()));
  StrAppend(&out, "peak point: A ", PointLabel(a, a.peak.point), ", B ",
            PointLabel(b, b.peak.point), "\n");
  return out;
}

std::string FormatMemoryComparisonJson(const MemoryProfile& a, const std::string& label_a,
                                       const MemoryProfile& b, const std::string& label_b) {
  auto summary = [](const MemoryProfile& p, const std::string& label) {
    return StrCat("{\"label\": ", JsonQuote(label), ", \"source\": ", JsonQuote(p.source),
                  ", \"peak\": ", PeakJson(p, false), ", \"xla_peak\": ", XlaPeakJson(p),
                  ", \"totals\": ", TotalsJson(p), "}");
  };
  std::string out =
      StrCat("{\n  \"schema\": \"hlowb.memory-compare/1\",\n  \"a\": ", summary(a, label_a),
             ",\n  \"b\": ", summary(b, label_b),
             ",\n  \"delta\": {\"peak_bytes\": ", b.peak.bytes - a.peak.bytes,
             ", \"total_bytes\": ", b.total_bytes - a.total_bytes, ", \"by_kind\": {");
  for (int k = 0; k < kMemoryKindCount; ++k) {
    StrAppend(&out, k ? ", " : "", JsonQuote(MemoryKindName(kAllKinds[k])), ": ",
              b.kind_bytes[k] - a.kind_bytes[k]);
  }
  out += "}}\n}\n";
  return out;
}

}  // namespace hlowb
