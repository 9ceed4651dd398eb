// The cost overlay's numbers (core/analysis/cost_overlay.h): metric names and keys, the host CPU
// roofline, the device choice, unit formatting, log-scaled heat values (zero-cost instructions
// and constants uncoloured, equal values all hottest), totals equal to CostModel's for every
// computation, cancellation and bad input; and every corpus module's entry computation.
#include "core/analysis/cost_overlay.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/analysis/cost_model.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/ir/opcode.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"

namespace hlowb {
namespace {

std::shared_ptr<const Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::shared_ptr<const Module>(std::move(*m)) : nullptr;
}

// A fused multiply of 4096 elements, an add and a reduce of 4, constants and data movement.
constexpr std::string_view kModule = R"(
HloModule overlay

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

fused {
  fp = f32[64,64] parameter(0)
  ROOT fm = f32[64,64] multiply(fp, fp)
}

ENTRY main {
  p = f32[64,64] parameter(0)
  q = f32[4] parameter(1)
  c = f32[4] constant({1, 2, 3, 4})
  mul = f32[64,64] fusion(p), kind=kLoop, calls=fused
  sum = f32[4] add(q, c)
  zero = f32[] constant(0)
  red = f32[] reduce(sum, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[64,64], f32[]) tuple(mul, red)
}
)";

TEST(CostOverlayTest, MetricKeysRoundTrip) {
  for (CostMetric m : {CostMetric::kOff, CostMetric::kFlops, CostMetric::kTranscendentals,
                       CostMetric::kBytesAccessed, CostMetric::kEstimatedTime}) {
    EXPECT_EQ(CostMetricFromKey(CostMetricKey(m)), m);
    EXPECT_FALSE(CostMetricName(m).empty());
  }
  EXPECT_EQ(CostMetricFromKey("nonsense"), std::nullopt);
  EXPECT_EQ(CostMetricName(CostMetric::kBytesAccessed), "Bytes accessed");
}

TEST(CostOverlayTest, DevicesAreRooflines) {
  const RooflineModel cpu = RooflineModel::CpuHost();
  // Memory-bound, compute-bound and transcendental-bound costs pick their own term.
  EXPECT_DOUBLE_EQ(cpu.KernelSeconds(10, 0, 4e6),
                   cpu.launch_seconds + 4e6 / cpu.bytes_per_second);
  EXPECT_DOUBLE_EQ(cpu.KernelSeconds(1e9, 0, 8),
                   cpu.launch_seconds + 1e9 / cpu.flops_per_second);
  EXPECT_DOUBLE_EQ(cpu.KernelSeconds(0, 1e8, 8),
                   cpu.launch_seconds + 1e8 / cpu.transcendentals_per_second);

  Cost cost;
  cost.flops = 1 << 20;
  cost.operand_bytes = 1 << 22;
  cost.result_bytes = 1 << 20;
  EXPECT_DOUBLE_EQ(CostDevice::Cpu().Seconds(cost), cpu.KernelSeconds(cost));
  EXPECT_DOUBLE_EQ(CostDevice::Gpu().Seconds(cost), RooflineModel().KernelSeconds(cost));
  EXPECT_GT(CostDevice::Cpu().Seconds(cost), CostDevice::Gpu().Seconds(cost));
  // No work: no kernel, no overhead.
  EXPECT_EQ(CostDevice::Cpu().Seconds(Cost()), 0);
  EXPECT_EQ(CostDevice::Gpu().Seconds(Cost()), 0);
  EXPECT_EQ(CostDevice::Cpu().Name(), "CPU (host)");
  EXPECT_EQ(CostDevice::Gpu().Name(), "GPU (H100-class)");
}

TEST(CostOverlayTest, FormatsWithUnits) {
  EXPECT_EQ(FormatEstimatedSeconds(0), "0 s");
  EXPECT_EQ(FormatEstimatedSeconds(850e-9), "850 ns");
  EXPECT_EQ(FormatEstimatedSeconds(2.5e-6), "2.50 µs");
  EXPECT_EQ(FormatEstimatedSeconds(1.234e-3), "1.23 ms");
  EXPECT_EQ(FormatEstimatedSeconds(42.0), "42.0 s");
  EXPECT_EQ(FormatCostValue(CostMetric::kFlops, 4096), "4096 FLOP");
  EXPECT_EQ(FormatCostValue(CostMetric::kFlops, 4194304), "4.19 M FLOP");
  EXPECT_EQ(FormatCostValue(CostMetric::kTranscendentals, 2e9), "2 G transc.");
  EXPECT_EQ(FormatCostValue(CostMetric::kBytesAccessed, 12 << 20), "12.0 MiB");
  EXPECT_EQ(FormatCostValue(CostMetric::kBytesAccessed, 512), "512 B");
  EXPECT_EQ(FormatCostValue(CostMetric::kEstimatedTime, 3e-3), "3.00 ms");
}

TEST(CostOverlayTest, HeatIsLogScaledAndSkipsFreeInstructionsAndConstants) {
  auto module = Parse(kModule);
  ASSERT_NE(module, nullptr);
  const Computation* main = module->entry();
  auto r = ComputeCostOverlay(module, main, CostMetric::kFlops, CostDevice::Cpu());
  ASSERT_TRUE(r.ok()) << r.status();
  const Instruction* mul = main->FindInstruction("mul");
  const Instruction* sum = main->FindInstruction("sum");
  const Instruction* red = main->FindInstruction("red");
  // The fusion's multiply: 4096 flops; the add 4; the reduce one per input element (4).
  EXPECT_EQ(r->values.at(mul), 4096);
  EXPECT_EQ(r->values.at(sum), 4);
  EXPECT_EQ(r->values.at(red), 4);
  EXPECT_EQ(r->heat.size(), 3u);
  EXPECT_DOUBLE_EQ(r->heat.at(mul), 1.0);
  EXPECT_DOUBLE_EQ(r->heat.at(sum), 0.0);
  EXPECT_EQ(r->min_nonzero, 4);
  EXPECT_EQ(r->max_value, 4096);
  EXPECT_EQ(r->title, "Flops (log scale)");
  EXPECT_EQ(r->low, "4 FLOP");
  EXPECT_EQ(r->high, "4096 FLOP");

  // Bytes: the constants move bytes by the counting rules, yet are not coloured.
  r = ComputeCostOverlay(module, main, CostMetric::kBytesAccessed, CostDevice::Cpu());
  ASSERT_TRUE(r.ok());
  const Instruction* c = main->FindInstruction("c");
  EXPECT_EQ(r->values.at(c), 4 * 4);
  EXPECT_FALSE(r->heat.count(c));
  EXPECT_FALSE(r->heat.count(main->FindInstruction("zero")));
  EXPECT_FALSE(r->heat.count(main->FindInstruction("p")));
  EXPECT_FALSE(r->heat.count(main->FindInstruction("t")));
  // mul reads and writes 16 KiB each, the most; the log scale puts each at log(x/lo)/log(hi/lo).
  const double lo = r->min_nonzero, hi = r->max_value;
  EXPECT_EQ(hi, 2 * 64 * 64 * 4);
  for (const auto& [instr, h] : r->heat) {
    EXPECT_NEAR(h, std::log(r->values.at(instr) / lo) / std::log(hi / lo), 1e-12)
        << instr->name();
  }

  // Only the reducer's add costs anything in `add`: one value, the top of the scale.
  r = ComputeCostOverlay(module, module->FindComputation("add"), CostMetric::kFlops,
                         CostDevice::Cpu());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->heat.size(), 1u);
  EXPECT_DOUBLE_EQ(r->heat.begin()->second, 1.0);
}

TEST(CostOverlayTest, TotalsEqualTheCostModelForEveryComputation) {
  auto module = Parse(kModule);
  ASSERT_NE(module, nullptr);
  auto r = ComputeCostOverlay(module, module->entry(), CostMetric::kEstimatedTime,
                              CostDevice::Gpu());
  ASSERT_TRUE(r.ok());
  CostModel model;
  ASSERT_EQ(r->all_totals.size(), module->computations().size());
  for (size_t i = 0; i < r->all_totals.size(); ++i) {
    const Computation* c = module->computations()[i].get();
    EXPECT_EQ(r->all_totals[i].computation, c);
    const Cost cost = model.ComputationCost(*c);
    EXPECT_EQ(r->all_totals[i].totals.flops, cost.flops) << c->name();
    EXPECT_EQ(r->all_totals[i].totals.transcendentals, cost.transcendentals);
    EXPECT_EQ(r->all_totals[i].totals.bytes_accessed, cost.bytes_accessed());
    double seconds = 0;
    for (const Instruction* instr : c->instructions()) {
      seconds += CostDevice::Gpu().Seconds(model.InstructionCost(*instr));
    }
    EXPECT_DOUBLE_EQ(r->all_totals[i].totals.seconds, seconds);
  }
  EXPECT_EQ(r->totals.flops, model.ComputationCost(*module->entry()).flops);
  EXPECT_NE(r->title.find("GPU (H100-class)"), std::string::npos);

  // Off: the totals still, no values or legend.
  r = ComputeCostOverlay(module, module->entry(), CostMetric::kOff, CostDevice::Cpu());
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->values.empty());
  EXPECT_TRUE(r->heat.empty());
  EXPECT_TRUE(r->title.empty());
  EXPECT_EQ(r->totals.flops, model.ComputationCost(*module->entry()).flops);
}

TEST(CostOverlayTest, CancelAndBadInput) {
  auto module = Parse(kModule);
  auto other = Parse(kModule);
  ASSERT_TRUE(module && other);
  std::atomic<bool> cancel{true};
  EXPECT_EQ(ComputeCostOverlay(module, module->entry(), CostMetric::kFlops, CostDevice::Cpu(),
                               &cancel)
                .status()
                .code(),
            absl::StatusCode::kCancelled);
  EXPECT_EQ(ComputeCostOverlay(module, other->entry(), CostMetric::kFlops, CostDevice::Cpu())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ComputeCostOverlay(nullptr, module->entry(), CostMetric::kFlops, CostDevice::Cpu())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      ComputeCostOverlay(module, nullptr, CostMetric::kFlops, CostDevice::Cpu()).status().code(),
      absl::StatusCode::kInvalidArgument);
}

// Every corpus module that parses: the entry's overlay in every metric has heat in [0, 1] for
// exactly the non-constant instructions with a non-zero value, and the entry's total is
// CostModel's module cost.
TEST(CostOverlayTest, CorpusEntries) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path corpus(HLOWB_CORPUS_DIR);
  if (!fs::is_directory(corpus, ec)) GTEST_SKIP() << "corpus not found at " << HLOWB_CORPUS_DIR;
  int modules = 0;
  for (auto it = fs::recursive_directory_iterator(corpus, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) break;
    if (!it->is_regular_file() || it->path().extension() != ".hlo") continue;
    auto text = ReadFileToString(it->path().string());
    if (!text.ok()) continue;
    auto parsed = ParseModule(*text);
    if (!parsed.ok() || (*parsed)->entry() == nullptr) continue;
    std::shared_ptr<const Module> module(std::move(*parsed));
    ++modules;
    CostModel model;
    const Cost expected = model.ModuleCost(*module);
    for (CostMetric m : {CostMetric::kFlops, CostMetric::kTranscendentals,
                         CostMetric::kBytesAccessed, CostMetric::kEstimatedTime}) {
      auto r = ComputeCostOverlay(module, module->entry(), m, CostDevice::Cpu());
      ASSERT_TRUE(r.ok()) << it->path() << ": " << r.status();
      EXPECT_EQ(r->totals.flops, expected.flops) << it->path();
      EXPECT_EQ(r->totals.bytes_accessed, expected.bytes_accessed()) << it->path();
      for (const auto& [instr, v] : r->values) {
        const bool coloured = v > 0 && instr->opcode() != Opcode::kConstant;
        ASSERT_EQ(r->heat.count(instr) == 1, coloured) << it->path() << " " << instr->name();
        if (coloured) {
          EXPECT_GE(r->heat.at(instr), 0.0);
          EXPECT_LE(r->heat.at(instr), 1.0);
        }
      }
    }
  }
  EXPECT_GT(modules, 0);
}

}  // namespace
}  // namespace hlowb
