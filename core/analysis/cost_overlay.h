// The cost overlay's numbers: for one computation of a module, each instruction's static cost
// (cost_model.h) in the metric the user picked — flops, transcendentals, bytes accessed, or an
// estimated time on a device — turned into heat values for the graph, a legend with units, and
// the totals of every computation of the module for the computations list.
//
// Estimated time is a roofline per instruction: the device's per-instruction overhead plus the
// longest of the instruction's arithmetic, transcendental functions and memory traffic at the
// device's peak rates. A fusion is one kernel (its fused flops, its own operands and result); a
// while loop, call or conditional is what cost_model.h counts for it (the body once, the most
// expensive branch) as if it were one kernel. An instruction that costs nothing (a parameter,
// tuple, get-tuple-element, bitcast, ...) launches nothing and takes no time.
//
// Heat values are log-scaled between the smallest non-zero value and the largest of the
// computation, since costs span many orders of magnitude: the smallest non-zero value is 0, the
// largest 1 (all 1 when they are equal). Instructions whose value is zero get no heat value (no
// colour), and neither do constants: they are data built into the program, not work, and small
// ones are drawn inside their users' nodes. Only the computation's own instructions get heat
// values; what fusions, loops and calls run inside is in their own value.
//
// Qt-free and pure: the viewer runs it on a worker thread (one CostModel per run).
#ifndef HLOWB_CORE_ANALYSIS_COST_OVERLAY_H_
#define HLOWB_CORE_ANALYSIS_COST_OVERLAY_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/analysis/cost_model.h"
#include "core/ir/computation.h"
#include "core/ir/instruction.h"
#include "core/ir/module.h"

namespace hlowb {

enum class CostMetric { kOff, kFlops, kTranscendentals, kBytesAccessed, kEstimatedTime };

// "Off", "Flops", "Transcendentals", "Bytes accessed", "Estimated time" (menu texts).
std::string_view CostMetricName(CostMetric metric);
// Stable keys for settings: "off", "flops", "transcendentals", "bytes", "time".
std::string_view CostMetricKey(CostMetric metric);
std::optional<CostMetric> CostMetricFromKey(std::string_view key);

// The device the estimated time is for: the host CPU (RooflineModel::CpuHost) or an H100-class
// GPU (RooflineModel's defaults).
struct CostDevice {
  enum class Kind { kCpuHost, kGpu };
  Kind kind = Kind::kCpuHost;
  RooflineModel rates = RooflineModel::CpuHost();

  static CostDevice Cpu() { return CostDevice{}; }
  static CostDevice Gpu() { return CostDevice{Kind::kGpu, RooflineModel()}; }
  // "CPU (host)" or "GPU (H100-class)".
  std::string_view Name() const;
  // The roofline estimate of running something of cost `cost` as one kernel (see above); 0 for a
  // cost that is all zero.
  double Seconds(const Cost& cost) const;
};

// What a computation adds up to: its instructions' costs (CostModel::ComputationCost) and the
// sum of their estimated times.
struct CostTotals {
  int64_t flops = 0;
  int64_t transcendentals = 0;
  int64_t bytes_accessed = 0;
  double seconds = 0;
};

struct ComputationTotals {
  const Computation* computation = nullptr;
  CostTotals totals;
};

struct CostOverlay {
  std::shared_ptr<const Module> module;  // keeps the pointers below valid
  const Computation* computation = nullptr;
  CostMetric metric = CostMetric::kOff;
  CostDevice device;

  // Every instruction of `computation`: its cost and estimated seconds.
  std::unordered_map<const Instruction*, Cost> costs;
  std::unordered_map<const Instruction*, double> seconds;
  // Its value in the metric's unit (FLOP, transcendental functions, bytes, seconds); empty when
  // the metric is kOff.
  std::unordered_map<const Instruction*, double> values;
  // Heat values in [0, 1] for the instructions to colour (see the rules above).
  std::unordered_map<const Instruction*, double> heat;
  double min_nonzero = 0;  // the smallest and largest coloured value (0 when none)
  double max_value = 0;

  // The legend: "Flops (log scale)", "12 FLOP", "4.19 G FLOP". Empty when the metric is kOff.
  std::string title;
  std::string low;
  std::string high;

  CostTotals totals;                        // of `computation`
  std::vector<ComputationTotals> all_totals;  // every computation of the module, module order
};

// A value of `metric` with its unit: "4.19 G FLOP", "512 transcendentals", "1.50 MiB", "2.5 µs".
std::string FormatCostValue(CostMetric metric, double value);
// Seconds in the unit that reads best: "850 ns", "2.50 µs", "1.23 ms", "4.20 s".
std::string FormatEstimatedSeconds(double seconds);

// Computes the overlay of `computation` (which must belong to `module`) in `metric` on `device`.
// `cancel`, when given, is polled between computations: a set flag ends the run with
// CancelledError. Bad input (no module, a computation of another module) is InvalidArgument.
absl::StatusOr<CostOverlay> ComputeCostOverlay(std::shared_ptr<const Module> module,
                                               const Computation* computation, CostMetric metric,
                                               const CostDevice& device,
                                               const std::atomic<bool>* cancel = nullptr);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_COST_OVERLAY_H_
