#include "replay/multi_device/multi_device_replay.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "core/support/strings.h"
#include "replay/data/fake_data.h"
#include "replay/data/host_transfers.h"
#include "replay/multi_device/device_arguments.h"
#include "replay/multi_device/multi_device_runner.h"

namespace hlowb {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

absl::StatusOr<DeviceGrid> ReplayDeviceGrid(const Module& module, const ReplayOptions& options) {
  if (options.num_replicas < 0 || options.num_partitions < 0) {
    return absl::InvalidArgumentError("--num_replicas and --num_partitions must be positive");
  }
  DeviceGrid grid;
  grid.num_replicas =
      options.num_replicas > 0 ? options.num_replicas : module.config().replica_count;
  grid.num_partitions =
      options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  if (absl::Status st = CheckDeviceGrid(grid); !st.ok()) return st;
  return grid;
}

absl::Status RunMultiDeviceIterations(const Module& module, const ReplayOptions& options,
                                      const ReplayInputs& inputs, const DeviceGrid& grid,
                                      const CancelToken* cancel, const ProgressFn& progress,
                                      ReplayReport* report, const CompiledRun& test,
                                      const CompiledRun& reference_run) {
  report->num_replicas = grid.num_replicas;
  report->num_partitions = grid.num_partitions;
  std::optional<ArgumentMode> mode;
  if (!options.hlo_argument_mode.empty()) {
    auto m = ParseArgumentMode(options.hlo_argument_mode);
    if (!m.ok()) return m.status();
    mode = *m;
  }
  const bool use_literals = !mode && !options.force_fake_data && !inputs.literal_iterations.empty();
  const bool use_snapshot =
      !mode && !options.force_fake_data && !use_literals && inputs.snapshot_arguments.has_value();
  if (use_literals && static_cast<int>(inputs.literal_iterations.size()) < options.iterations) {
    return absl::InvalidArgumentError(
        StrCat("the literals file has ", inputs.literal_iterations.size(),
               " iteration(s); --iterations=", options.iterations, " asks for more"));
  }
  auto cancelled = [&] { return cancel != nullptr && cancel->IsCancelled(); };

  // Elided constants: the same seeded fake value on every device, made once.
  const FakeDataOptions fake_options{options.seed, options.use_large_float_range};
  auto elided_cache = std::make_shared<std::map<const Instruction*, Literal>>();
  auto elided_mutex = std::make_shared<std::mutex>();
  // Elided constants made once for every device and iteration, read in place.
  auto constant_cache = std::make_shared<ConstantCache>();

  const int runs_per_iteration = options.reference_platform.empty() ? 1 : 2;
  const int64_t total_runs = int64_t{options.iterations} * runs_per_iteration;
  FakeDataEngine engine(options.seed);
  // Host transfers: each device feeds its own, from its own seeded stream.
  HostTransferFeeder host_feeder(options.host_transfers == HostTransferMode::kFake, options.seed,
                                 options.use_large_float_range);

  auto evaluate = [&](const std::vector<std::vector<Literal>>& lists, int iteration,
                      bool reference, int64_t run_number,
                      double* seconds) -> absl::StatusOr<std::vector<DeviceRunResult>> {
    MultiDeviceOptions mo;
    mo.grid = grid;
    mo.collective_timeout_seconds = options.collective_timeout_seconds;
    mo.evaluator.memory_budget_bytes = options.memory_budget_bytes;
    mo.evaluator.cancel = cancel;
    mo.evaluator.seed = options.seed;
    mo.evaluator.custom_call = options.custom_call;  // shared by the device threads
    if (options.host_transfers != HostTransferMode::kError) {
      mo.host_transfer = [&host_feeder](int64_t d) { return host_feeder.ForDevice(d); };
    }
    if (progress) {
      std::string what = StrCat(reference ? "reference " : "", "iteration ", iteration + 1,
                                ", device 0");
      mo.evaluator.progress = [&progress, run_number, total_runs, what](
                                  int64_t done, int64_t total, const std::string& name) {
        const int64_t per_run = 1000;
        int64_t d = run_number * per_run + (total > 0 ? done * per_run / total : per_run);
        progress(d, total_runs * per_run, StrCat(what, ": ", name));
      };
    }
    if (options.on_instruction) {
      mo.on_instruction = [&options, iteration, reference](int64_t device,
                                                           const InstructionEvent& e) {
        InstructionProfile p;
        p.instruction = e.instruction;
        p.seconds = e.seconds;
        p.loop_iteration = e.loop_iteration;
        p.iteration = iteration;
        p.reference = reference;
        p.device = device;
        if (e.result != nullptr && options.instruction_statistics) {
          p.statistics = ComputeStatistics(*e.result);
        }
        p.value = e.result;
        options.on_instruction(p);
      };
    }
    if (options.fake_elided_constants) {
      const Module* m = &module;
      mo.evaluator.elided_constant = [m, fake_options, elided_cache, elided_mutex](
                                         const Instruction& instr) -> absl::StatusOr<Literal> {
        std::lock_guard<std::mutex> lock(*elided_mutex);
        auto it = elided_cache->find(&instr);
        if (it != elided_cache->end()) return Literal(it->second);
        auto l = MakeFakeElidedConstant(*m, instr, fake_options);
        if (!l.ok()) return l.status();
        return Literal(elided_cache->emplace(&instr, std::move(*l)).first->second);
      };
    }
    const CompiledRun& compiled = reference ? reference_run : test;
    if (compiled.external) {
      auto results = compiled.external(lists, iteration, seconds);
      if (!results.ok()) return results.status();
      std::vector<DeviceRunResult> out;
      for (Literal& r : *results) out.push_back(DeviceRunResult{std::move(r), *seconds});
      return out;
    }
    if (mo.evaluator.elided_constant) mo.evaluator.constant_cache = constant_cache.get();
    mo.run_module = compiled.run;
    if (compiled.make_hook && !compiled.run) {
      mo.evaluator.compiled =
          compiled.make_hook(mo.evaluator.elided_constant, mo.evaluator.constant_cache);
    }
    auto start = std::chrono::steady_clock::now();
    auto results =
        EvaluateOnDevices(compiled.module != nullptr ? *compiled.module : module, lists, mo);
    *seconds = Since(start);
    if (!results.ok() && cancelled()) return absl::CancelledError("replay cancelled");
    return results;
  };

  int64_t run_number = 0;
  for (int i = 0; i < options.iterations; ++i) {
    if (cancelled()) return absl::CancelledError("replay cancelled");
    ReplayIteration it;
    std::vector<std::vector<Literal>> lists;
    std::optional<Literal> expected;
    std::string expected_name;
    if (mode) {
      auto made = MakeDeviceArguments(module, *mode, grid, &engine, options.use_large_float_range);
      if (!made.ok()) return made.status();
      lists = std::move(*made);
      it.argument_source = StrCat("--hlo_argument_mode=", ArgumentModeName(*mode));
      if (*mode == ArgumentMode::kUninitialized) {
        it.argument_source += " (zeros, so the replay is reproducible)";
      }
    } else if (use_literals) {
      const IterationLiterals& lit = inputs.literal_iterations[i];
      lists.push_back(lit.arguments);
      it.argument_source = StrCat("literals file iteration ", i + 1, " (every device)");
      if (lit.result) {
        expected = *lit.result;
        expected_name = StrCat("literals file result (iteration ", i + 1, ")");
      }
    } else if (use_snapshot) {
      lists.push_back(*inputs.snapshot_arguments);
      it.argument_source = "snapshot (every device)";
      if (inputs.snapshot_result) {
        expected = *inputs.snapshot_result;
        expected_name = "snapshot result";
      }
    } else {
      auto made = MakeDeviceArguments(module, ArgumentMode::kUseRandomInputs, grid, &engine,
                                      options.use_large_float_range);
      if (!made.ok()) return made.status();
      lists = std::move(*made);
      it.argument_source = StrCat("fake data per device (seed ", options.seed,
                                  options.use_large_float_range ? ", large float range" : "", ")");
    }
    for (size_t l = 0; l < lists.size(); ++l) {
      std::string label = lists.size() == 1 ? it.argument_source
                                            : StrCat(it.argument_source, ", ",
                                                     grid.Describe(static_cast<int64_t>(l)));
      if (absl::Status st = CheckArguments(module, lists[l], label); !st.ok()) return st;
    }
    auto results = evaluate(lists, i, false, run_number++, &it.run_seconds);
    if (!results.ok()) return results.status();
    std::optional<std::vector<DeviceRunResult>> reference;
    if (!options.reference_platform.empty()) {
      auto ref = evaluate(lists, i, true, run_number++, &it.reference_seconds);
      if (!ref.ok()) {
        return absl::Status(ref.status().code(),
                            StrCat("reference platform: ", ref.status().message()));
      }
      reference = std::move(*ref);
    }
    const int64_t n = grid.size();
    for (int64_t d = 0; d < n; ++d) {
      DeviceReplay dr;
      dr.replica = grid.Replica(d);
      dr.partition = grid.Partition(d);
      dr.run_seconds = (*results)[d].seconds;
      dr.result = std::move((*results)[d].result);
      if (reference) {
        dr.reference_result = std::move((*reference)[d].result);
        dr.comparison = CompareLiterals(*dr.reference_result, dr.result, options.bounds,
                                        options.max_reported_elements);
      } else if (expected && d == 0) {
        dr.comparison =
            CompareLiterals(*expected, dr.result, options.bounds, options.max_reported_elements);
      }
      if (lists.size() > 1) dr.arguments = std::move(lists[d]);
      it.devices.push_back(std::move(dr));
    }
    it.arguments = lists.size() > 1 ? it.devices[0].arguments : std::move(lists[0]);
    it.result = it.devices[0].result;
    it.reference_result = it.devices[0].reference_result;
    it.comparison = it.devices[0].comparison;
    if (reference) {
      it.compared_against = StrCat("reference platform ", options.reference_platform);
    } else if (expected) {
      it.compared_against = StrCat(expected_name, " (device 0)");
    }
    report->iterations.push_back(std::move(it));
  }
  for (std::string& w : host_feeder.Warnings([&grid](int64_t d) { return grid.Describe(d); })) {
    report->warnings.push_back(std::move(w));
  }
  return absl::OkStatus();
}

}  // namespace hlowb
