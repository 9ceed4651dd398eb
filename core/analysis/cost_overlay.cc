#include "core/analysis/cost_overlay.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/analysis/memory_profile.h"
#include "core/ir/opcode.h"

namespace hlowb {
namespace {

bool IsZero(const Cost& cost) {
  return cost.flops == 0 && cost.transcendentals == 0 && cost.bytes_accessed() == 0;
}

// "4.19 G" style: three significant digits and a decimal prefix; small counts exactly.
std::string Magnitude(double value) {
  if (!(value >= 0)) value = 0;
  if (value < 1e4 && value == std::floor(value)) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  if (value < 1e4) return absl::StrFormat("%.3g", value);
  static const char* kPrefix[] = {"K", "M", "G", "T", "P", "E"};
  int i = -1;
  while (value >= 1000 && i < 5) {
    value /= 1000;
    ++i;
  }
  return absl::StrFormat("%.3g %s", value, kPrefix[i]);
}

double MetricValue(CostMetric metric, const Cost& cost, double seconds) {
  switch (metric) {
    case CostMetric::kFlops:
      return static_cast<double>(cost.flops);
    case CostMetric::kTranscendentals:
      return static_cast<double>(cost.transcendentals);
    case CostMetric::kBytesAccessed:
      return static_cast<double>(cost.bytes_accessed());
    case CostMetric::kEstimatedTime:
      return seconds;
    case CostMetric::kOff:
      break;
  }
  return 0;
}

}  // namespace

std::string_view CostMetricName(CostMetric metric) {
  switch (metric) {
    case CostMetric::kOff:
      return "Off";
    case CostMetric::kFlops:
      return "Flops";
    case CostMetric::kTranscendentals:
      return "Transcendentals";
    case CostMetric::kBytesAccessed:
      return "Bytes accessed";
    case CostMetric::kEstimatedTime:
      return "Estimated time";
  }
  return "Off";
}

std::string_view CostMetricKey(CostMetric metric) {
  switch (metric) {
    case CostMetric::kOff:
      return "off";
    case CostMetric::kFlops:
      return "flops";
    case CostMetric::kTranscendentals:
      return "transcendentals";
    case CostMetric::kBytesAccessed:
      return "bytes";
    case CostMetric::kEstimatedTime:
      return "time";
  }
  return "off";
}

std::optional<CostMetric> CostMetricFromKey(std::string_view key) {
  for (CostMetric m : {CostMetric::kOff, CostMetric::kFlops, CostMetric::kTranscendentals,
                       CostMetric::kBytesAccessed, CostMetric::kEstimatedTime}) {
    if (CostMetricKey(m) == key) return m;
  }
  return std::nullopt;
}

std::string_view CostDevice::Name() const {
  return kind == Kind::kGpu ? "GPU (H100-class)" : "CPU (host)";
}

double CostDevice::Seconds(const Cost& cost) const {
  if (IsZero(cost)) return 0;
  return rates.KernelSeconds(cost);
}

std::string FormatEstimatedSeconds(double seconds) {
  if (!(seconds > 0)) return "0 s";
  struct Unit {
    double scale;
    const char* name;
  };
  static const Unit kUnits[] = {{1e-9, "ns"}, {1e-6, "µs"}, {1e-3, "ms"}, {1, "s"}};
  const Unit* unit = &kUnits[0];
  for (const Unit& u : kUnits) {
    if (seconds >= u.scale) unit = &u;
  }
  const double v = seconds / unit->scale;
  return absl::StrFormat(v >= 100 ? "%.0f %s" : v >= 10 ? "%.1f %s" : "%.2f %s", v, unit->name);
}

std::string FormatCostValue(CostMetric metric, double value) {
  switch (metric) {
    case CostMetric::kFlops:
      return absl::StrCat(Magnitude(value), " FLOP");
    case CostMetric::kTranscendentals:
      return absl::StrCat(Magnitude(value), " transc.");
    case CostMetric::kBytesAccessed:
      return FormatMemoryBytes(static_cast<int64_t>(std::llround(std::max(value, 0.0))));
    case CostMetric::kEstimatedTime:
      return FormatEstimatedSeconds(value);
    case CostMetric::kOff:
      break;
  }
  return std::string();
}

absl::StatusOr<CostOverlay> ComputeCostOverlay(std::shared_ptr<const Module> module,
                                               const Computation* computation, CostMetric metric,
                                               const CostDevice& device,
                                               const std::atomic<bool>* cancel) {
  if (module == nullptr) return absl::InvalidArgumentError("cost overlay: no module");
  if (computation == nullptr) return absl::InvalidArgumentError("cost overlay: no computation");
  bool owned = false;
  for (const auto& c : module->computations()) owned = owned || c.get() == computation;
  if (!owned) {
    return absl::InvalidArgumentError(absl::StrCat("cost overlay: computation ",
                                                   computation->name(), " is not in module ",
                                                   module->name()));
  }
  const auto cancelled = [cancel] {
    return cancel != nullptr && cancel->load(std::memory_order_relaxed);
  };

  CostOverlay overlay;
  overlay.module = module;
  overlay.computation = computation;
  overlay.metric = metric;
  overlay.device = device;
  CostModel model;

  // Every computation's totals, the shown one's per-instruction costs on the way.
  overlay.all_totals.reserve(module->computations().size());
  for (const auto& c : module->computations()) {
    if (cancelled()) return absl::CancelledError("cost overlay cancelled");
    const bool shown = c.get() == computation;
    CostTotals totals;
    int polled = 0;
    for (const Instruction* instr : c->instructions()) {
      if (instr == nullptr) continue;
      if (++polled % 1024 == 0 && cancelled()) {
        return absl::CancelledError("cost overlay cancelled");
      }
      const Cost cost = model.InstructionCost(*instr);
      const double seconds = device.Seconds(cost);
      totals.seconds += seconds;
      if (shown) {
        overlay.costs.emplace(instr, cost);
        overlay.seconds.emplace(instr, seconds);
      }
    }
    const Cost sum = model.ComputationCost(*c);
    totals.flops = sum.flops;
    totals.transcendentals = sum.transcendentals;
    totals.bytes_accessed = sum.bytes_accessed();
    if (shown) overlay.totals = totals;
    overlay.all_totals.push_back({c.get(), totals});
  }

  if (metric == CostMetric::kOff) return overlay;

  // Values, then heat on a log scale between the smallest non-zero and the largest value.
  double lo = 0, hi = 0;
  for (const auto& [instr, cost] : overlay.costs) {
    const double v = MetricValue(metric, cost, overlay.seconds[instr]);
    overlay.values.emplace(instr, v);
    if (v > 0 && instr->opcode() != Opcode::kConstant) {
      lo = lo == 0 ? v : std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  overlay.min_nonzero = lo;
  overlay.max_value = hi;
  if (hi > 0) {
    const double log_lo = std::log(lo);
    const double span = std::log(hi) - log_lo;
    for (const auto& [instr, v] : overlay.values) {
      if (!(v > 0) || instr->opcode() == Opcode::kConstant) continue;
      const double h = span > 0 ? (std::log(v) - log_lo) / span : 1.0;
      overlay.heat.emplace(instr, std::clamp(h, 0.0, 1.0));
    }
  }
  overlay.title = std::string(CostMetricName(metric));
  if (metric == CostMetric::kEstimatedTime) {
    absl::StrAppend(&overlay.title, " on ", std::string(device.Name()));
  }
  absl::StrAppend(&overlay.title, " (log scale)");
  overlay.low = FormatCostValue(metric, lo);
  overlay.high = FormatCostValue(metric, hi);
  return overlay;
}

}  // namespace hlowb
