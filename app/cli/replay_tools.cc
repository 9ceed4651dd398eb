#include "app/cli/replay_tools.h"

#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "core/analysis/timeline.h"
#include "core/support/strings.h"
#include "plugins/builtin/builtin_plugins.h"
#include "plugins/ffi/ffi_host.h"
#include "replay/bisect/pass_bisect.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/compare/isolation.h"
#include "replay/compare/nonfinite.h"

namespace hlowb::cli {

absl::Status CheckCudaArch(const std::string& arch) {
  bool ok = arch.size() >= 5 && arch.size() <= 6 && arch.rfind("sm_", 0) == 0;
  for (size_t i = 3; ok && i < arch.size(); ++i) ok = arch[i] >= '0' && arch[i] <= '9';
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      StrCat("--cuda_arch must be sm_NN (sm_80, sm_90, ...), not '", arch, "'"));
}

absl::Status ParseSharedReplayFlags(const Args& args, ReplayOptions* options) {
  options->platform = args.Get("platform", "interpreter");
  options->reference_platform = args.Get("reference_platform", "");
  options->cpu.cache_dir =
      args.Get("xla_cpu_kernel_cache_dir", codegen::DefaultKernelCacheDir());
  if (args.Has("xla_cpu_enable_kernel_cache")) {
    const std::string v = args.Get("xla_cpu_enable_kernel_cache");
    if (v == "false" || v == "0") {
      options->cpu.cache_dir.clear();
    } else if (v != "true" && v != "1") {
      return absl::InvalidArgumentError("--xla_cpu_enable_kernel_cache must be true or false");
    }
  }
  // --cpu_arena=false runs cpu modules value by value on the evaluator's driver instead of in
  // buffer assignment's arena (to tell a runtime problem from a kernel's).
  if (args.Has("cpu_arena")) {
    const std::string v = args.Get("cpu_arena");
    if (v == "false" || v == "0") {
      options->cpu.arena = false;
    } else if (v != "true" && v != "1") {
      return absl::InvalidArgumentError("--cpu_arena must be true or false");
    }
  }
  // The cuda platform: --cuda_allow_tf32 (XLA's --xla_gpu_enable_tf32) and --cuda_arch=sm_NN.
  options->cuda.allow_tf32 = args.Has("cuda_allow_tf32");
  // --cuda_emulate: the cuda platform on the host's GPU emulator (no GPU needed; slow).
  options->cuda.emulate = args.Has("cuda_emulate");
  // --cuda_arena=false runs cuda modules on the driver, copying each kernel's operands to the
  // device and back, instead of in an arena of managed memory.
  if (args.Has("cuda_arena")) {
    const std::string v = args.Get("cuda_arena");
    if (v == "false" || v == "0") {
      options->cuda.arena = false;
    } else if (v != "true" && v != "1") {
      return absl::InvalidArgumentError("--cuda_arena must be true or false");
    }
  }
  if (args.Has("cuda_arch")) {
    absl::Status st = CheckCudaArch(args.Get("cuda_arch"));
    if (!st.ok()) return st;
    options->cuda.gpu_arch = args.Get("cuda_arch");
  }
  if (args.Has("seed")) {
    const std::string v = args.Get("seed");
    size_t used = 0;
    bool ok = !v.empty() && v[0] != '-';
    try {
      if (ok) options->seed = std::stoull(v, &used);
    } catch (...) {
      ok = false;
    }
    if (!ok || used != v.size()) {
      return absl::InvalidArgumentError("--seed must be a non-negative integer");
    }
  }
  for (auto [name, target] :
       {std::pair<const char*, double*>{"abs_error_bound", &options->bounds.abs},
        {"rel_error_bound", &options->bounds.rel}}) {
    if (!args.Has(name)) continue;
    const std::string v = args.Get(name);
    size_t used = 0;
    bool ok = true;
    try {
      *target = std::stod(v, &used);
    } catch (...) {
      ok = false;
    }
    if (!ok || used != v.size() || !(*target >= 0)) {
      return absl::InvalidArgumentError(StrCat("--", name, " must be a non-negative number"));
    }
  }
  // Last, so a malformed flag is a usage error even where the platform cannot run.
  for (const std::string* p : {&options->platform, &options->reference_platform}) {
    if (p->empty()) continue;
    absl::Status st = CheckPlatform(*p, options->cuda.emulate);
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> MakeCustomCallDispatcher(
    const Args& args, const std::string& platform, const Module& module,
    const ReplayInputs& inputs, std::vector<XlaFfiHandler>* ffi_handlers) {
  CustomCallDispatchOptions options;
  options.platform = platform;
  absl::StatusOr<CustomCallFallback> fallback =
      ParseCustomCallFallback(args.Get("custom_call_fallback", "error"));
  if (!fallback.ok()) return fallback.status();
  options.fallback = *fallback;
  if (options.fallback == CustomCallFallback::kSnapshot) {
    if (inputs.snapshot_result) {
      options.known_outputs = CustomCallOutputsFromResult(module, *inputs.snapshot_result);
    } else if (!inputs.literal_iterations.empty() && inputs.literal_iterations[0].result) {
      options.known_outputs =
          CustomCallOutputsFromResult(module, *inputs.literal_iterations[0].result);
    }
  }
  CustomCallRegistry registry = BuiltinCustomCallRegistry();
  // --custom_call_library=LIB.so[,target=symbol,...], repeatable: the user's XLA FFI handlers,
  // in place of any built-in handler of the same target.
  for (const auto& [name, value] : args.options) {
    if (name != "custom_call_library") continue;
    absl::StatusOr<FfiLibrarySpec> spec = ParseFfiLibrarySpec(value);
    if (!spec.ok()) return spec.status();
    absl::StatusOr<std::vector<FfiRegistration>> registered =
        RegisterFfiLibrary(*spec, module, &registry);
    if (!registered.ok()) return registered.status();
    for (const FfiRegistration& r : *registered) {
      std::cerr << "hlowb: custom call \"" << r.target << "\" runs " << r.symbol << " from "
                << spec->path << " (XLA FFI " << r.handler_version << ")\n";
      if (ffi_handlers) ffi_handlers->push_back({spec->path, r.target, r.symbol});
    }
  }
  return CustomCallDispatcher::Create(std::move(registry), std::move(options));
}

void PrintCustomCallNotes(const ReplayToolOutcome& outcome) {
  if (!outcome.dispatcher) return;
  for (const std::string& note : outcome.dispatcher->Notes()) {
    std::cout << "  note: " << note << "\n";
  }
}

ReplayToolOutcome RunReplayTools(const Args& args, const std::string& label, const Module& module,
                                 const std::string& compile_platform, const ReplayInputs& inputs,
                                 ReplayOptions* options) {
  ReplayToolOutcome outcome;
  absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> dispatcher =
      MakeCustomCallDispatcher(args, compile_platform, module, inputs,
                               &options->xla_cpu_ffi_handlers);
  if (!dispatcher.ok()) {
    std::cerr << "hlowb replay: " << dispatcher.status().message() << "\n";
    outcome.handled = true;
    outcome.exit_code = kUsageError;
    return outcome;
  }
  outcome.dispatcher = *dispatcher;
  options->custom_call = outcome.dispatcher->AsFunction();

  if (args.Has("find_nonfinite")) {
    outcome.handled = true;
    std::cout << label << ": module " << module.name() << "\n";
    absl::StatusOr<NonfiniteReport> report = FindNonfinite(module, *options, inputs);
    if (!report.ok()) {
      std::cout << "  FAILED: " << report.status().message() << "\n";
      std::cerr << "error: " << label << ": " << report.status().message() << "\n";
      outcome.exit_code = kInputError;
      return outcome;
    }
    for (const std::string& w : report->warnings) std::cout << "  warning: " << w << "\n";
    std::cout << report->ToString();
    PrintCustomCallNotes(outcome);
    // A finding is what the user asked for, not a failure of the command; but scripts want to
    // know, so a found NaN/Inf exits 1 like a failed comparison.
    outcome.exit_code = report->found ? kInputError : kOk;
    return outcome;
  }

  if (args.Has("isolate_instructions")) {
    outcome.handled = true;
    std::cout << label << ": module " << module.name() << "\n";
    // The arguments: one plain replay of the test platform, as the full run would use them.
    ReplayOptions first = *options;
    first.iterations = 1;
    first.reference_platform.clear();
    absl::StatusOr<ReplayReport> run = ReplaySession(module, first, inputs).Run();
    if (!run.ok()) {
      std::cout << "  FAILED: " << run.status().message() << "\n";
      std::cerr << "error: " << label << ": " << run.status().message() << "\n";
      outcome.exit_code = kInputError;
      return outcome;
    }
    IsolationOptions iso;
    iso.platform = options->platform;
    iso.reference_platform =
        options->reference_platform.empty() ? options->platform : options->reference_platform;
    iso.bounds = options->bounds;
    iso.seed = options->seed;
    iso.use_large_float_range = options->use_large_float_range;
    iso.fake_elided_constants = options->fake_elided_constants;
    iso.memory_budget_bytes = options->memory_budget_bytes;
    iso.custom_call = options->custom_call;
    iso.cpu = options->cpu;
    iso.cuda = options->cuda;
    std::cout << "  arguments from " << run->iterations[0].argument_source
              << "; inputs of each instruction captured from a full interpreter run\n";
    absl::StatusOr<IsolationReport> report =
        IsolateInstructions(module, run->iterations[0].arguments, iso);
    if (!report.ok()) {
      std::cout << "  FAILED: " << report.status().message() << "\n";
      std::cerr << "error: " << label << ": " << report.status().message() << "\n";
      outcome.exit_code = kInputError;
      return outcome;
    }
    std::cout << report->ToTable();
    PrintCustomCallNotes(outcome);
    outcome.exit_code = report->ok() ? kOk : kInputError;
    return outcome;
  }
  return outcome;
}

int RunBisectPasses(const Args& args, const ReplayOptions& options,
                    const std::vector<IterationLiterals>& input_literals) {
  if (args.positional.size() != 1 || !args.Has("module")) {
    std::cerr << "hlowb replay: --bisect_passes takes one dump DIR and --module=ID|NAME\n";
    return kUsageError;
  }
  DumpIndex index;
  std::vector<DumpState> states;
  std::vector<LoadedState> loaded;
  if (!LoadDumpModule(args.positional[0], args.Get("module"), &index, &states, &loaded)) {
    return kInputError;
  }
  std::vector<TimelineInput> inputs = TimelineInputs(states, loaded);
  const int baseline = BeforeOptimizationsIndex(states);
  if (baseline < 0) {
    std::cerr << "error: " << args.positional[0] << ": module " << args.Get("module")
              << " has no before_optimizations state to compare the passes with\n";
    return kInputError;
  }
  PassBisectOptions bisect;
  bisect.replay = options;
  bisect.inputs.literal_iterations = input_literals;
  absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> dispatcher =
      MakeCustomCallDispatcher(args, "", *inputs[baseline].module, bisect.inputs);
  if (!dispatcher.ok()) {
    std::cerr << "hlowb replay: " << dispatcher.status().message() << "\n";
    return kUsageError;
  }
  bisect.replay.custom_call = (*dispatcher)->AsFunction();
  const bool tty = isatty(2);
  absl::StatusOr<PassBisectReport> report = BisectPasses(
      inputs, baseline, bisect, nullptr, [tty](int64_t done, int64_t total, const std::string&) {
        if (tty) {
          std::fprintf(stderr, "\rreplaying state %lld/%lld", static_cast<long long>(done),
                       static_cast<long long>(total));
        }
      });
  if (tty) std::fprintf(stderr, "\r\033[K");
  if (!report.ok()) {
    std::cerr << "error: " << report.status().message() << "\n";
    return kInputError;
  }
  std::cout << report->ToString();
  ReplayToolOutcome notes;
  notes.dispatcher = *dispatcher;
  PrintCustomCallNotes(notes);
  return report->first_divergent >= 0 ? kInputError : kOk;
}

}  // namespace hlowb::cli
