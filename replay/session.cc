#include "replay/session.h"

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <type_traits>

#include "absl/strings/str_join.h"
#include "core/analysis/verifier.h"
#include "core/passes/module_dumper.h"
#include "core/proto/open_file.h"
#include "core/support/strings.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "replay/data/fake_data.h"
#include "replay/data/host_transfers.h"
#include "replay/evaluator/evaluator.h"
#include "replay/multi_device/device_arguments.h"
#include "replay/multi_device/multi_device_replay.h"

namespace hlowb {
namespace {

double Since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

bool IsInterpreter(const std::string& p) { return p == "interpreter" || p == "reference"; }
bool IsXlaCpu(const std::string& p) { return p == kXlaCpuPlatform; }
bool IsCpu(const std::string& p) { return p == kCpuPlatform || p == "host"; }
bool IsCuda(const std::string& p) { return p == kCudaPlatform || p == "gpu"; }

Literal Clone(const Literal& l) { return l; }

// The platform name XLA records in a snapshot's execution_platform.
std::string PlatformNameForSnapshot(const std::string& p) {
  if (IsCpu(p) || IsXlaCpu(p)) return "Host";
  if (IsCuda(p)) return "CUDA";
  if (IsInterpreter(p)) return "Interpreter";
  return p;
}

// A platform compiled once per session (cpu or cuda): the one executable that is set.
struct CompiledExecutable {
  std::unique_ptr<CpuExecutable> cpu;
  std::unique_ptr<CudaExecutable> cuda;
  bool compiled() const { return cpu != nullptr || cuda != nullptr; }
  // f(exe) on the executable that is set; compiled() must hold.
  template <typename F>
  decltype(auto) Visit(F&& f) const {
    return cpu != nullptr ? f(*cpu) : f(*cuda);
  }
  // The module that runs (after the platform's passes).
  const Module& module() const {
    return Visit([](const auto& e) -> const Module& { return e.module(); });
  }
};

}  // namespace

bool CompilesModule(const std::string& platform) { return IsCpu(platform) || IsCuda(platform); }

std::string_view HostTransferModeName(HostTransferMode mode) {
  switch (mode) {
    case HostTransferMode::kError: return "error";
    case HostTransferMode::kZeros: return "zeros";
    case HostTransferMode::kFake: return "fake";
  }
  return "error";
}

absl::StatusOr<HostTransferMode> ParseHostTransferMode(std::string_view text) {
  for (HostTransferMode m :
       {HostTransferMode::kError, HostTransferMode::kZeros, HostTransferMode::kFake}) {
    if (text == HostTransferModeName(m)) return m;
  }
  return absl::InvalidArgumentError(
      StrCat("--host_transfers must be error, zeros or fake, not '", text, "'"));
}

absl::Status CheckPlatform(const std::string& platform, bool cuda_emulated) {
  if (IsInterpreter(platform)) return absl::OkStatus();
  if (IsXlaCpu(platform)) return FindXlaPython().status();
  if (IsCpu(platform)) return absl::OkStatus();
  if (IsCuda(platform) && cuda_emulated) return absl::OkStatus();
  if (IsCuda(platform)) {
    absl::Status st = CudaAvailable();
    if (st.ok()) return st;
    return absl::FailedPreconditionError(
        StrCat("platform '", platform, "' cannot run here: ", st.message(),
               " (the cuda platform needs an NVIDIA GPU and its driver); use --platform=cpu or "
               "--platform=interpreter, or --cuda_emulate to run its kernels on the host's GPU "
               "emulator"));
  }
  if (platform == "rocm") {
    return absl::FailedPreconditionError(
        StrCat("platform '", platform, "' is not built yet in this hlowb; use --platform=cuda, "
               "--platform=cpu or --platform=interpreter"));
  }
  return absl::InvalidArgumentError(
      StrCat("unknown platform '", platform,
             "' (known: interpreter, cpu, cuda, xla-cpu; not built yet: rocm)"));
}

bool ReplayReport::compared() const {
  for (const ReplayIteration& it : iterations) {
    if (it.comparison) return true;
    for (const DeviceReplay& d : it.devices) {
      if (d.comparison) return true;
    }
  }
  return false;
}

bool ReplayReport::all_match() const {
  for (const ReplayIteration& it : iterations) {
    if (it.comparison && !it.comparison->ok()) return false;
    for (const DeviceReplay& d : it.devices) {
      if (d.comparison && !d.comparison->ok()) return false;
    }
  }
  return true;
}

std::vector<IterationLiterals> ReplayReport::ToIterationLiterals() const {
  std::vector<IterationLiterals> out;
  for (const ReplayIteration& it : iterations) {
    IterationLiterals l;
    l.arguments = it.arguments;
    l.result = it.result;
    l.reference_result = it.reference_result;
    out.push_back(std::move(l));
  }
  return out;
}

ReplaySession::ReplaySession(const Module& module, ReplayOptions options, ReplayInputs inputs)
    : module_(module), options_(std::move(options)), inputs_(std::move(inputs)) {}

absl::StatusOr<ReplayReport> ReplaySession::Run(const CancelToken* cancel,
                                                const ProgressFn& progress) {
  // Freed large buffers are kept for reuse while the replay runs (its iterations and loop bodies
  // allocate the same sizes again); they go back to the system when it ends.
  struct ReleaseKeptBuffersAtEnd {
    ~ReleaseKeptBuffersAtEnd() { ReleaseCachedLiteralStorage(); }
  } release_kept_buffers_at_end;
  ReplayReport report;
  report.module_name = module_.name();
  report.platform = options_.platform;
  report.reference_platform = options_.reference_platform;
  if (absl::Status st = CheckPlatform(options_.platform, options_.cuda.emulate); !st.ok()) {
    return st;
  }
  if (!options_.reference_platform.empty()) {
    if (absl::Status st = CheckPlatform(options_.reference_platform, options_.cuda.emulate);
        !st.ok()) {
      return st;
    }
  }
  if (options_.iterations < 1) return absl::InvalidArgumentError("iterations must be at least 1");
  if (module_.entry() == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  auto cancelled = [&] { return cancel != nullptr && cancel->IsCancelled(); };

  // "Compile": verification, as the interpreter backend does before running.
  auto t0 = std::chrono::steady_clock::now();
  std::vector<VerifierDiagnostic> diags = VerifyModule(module_);
  if (int errors = CountErrors(diags); errors > 0) {
    std::string first;
    for (const VerifierDiagnostic& d : diags) {
      if (d.severity == VerifierDiagnostic::Severity::kError) {
        first = d.ToString();
        break;
      }
    }
    return absl::InvalidArgumentError(
        StrCat("the module does not verify (", errors, " error", errors == 1 ? "" : "s",
               "); first: ", first));
  }
  report.compile_seconds = Since(t0);
  report.reference_compile_seconds = options_.reference_platform.empty() ? 0 : report.compile_seconds;
  // run_test_hlo_passes / run_reference_hlo_passes: nothing to switch off, the interpreter
  // runs the module as given either way.

  // cpu and cuda: compile once for the session (test and reference separately when both are
  // compiled, since their pass settings may differ).
  CompiledExecutable compiled[2];
  auto compile = [&](int r, const char* name, auto co, auto* out) -> absl::Status {
    using Exe = typename std::remove_reference_t<decltype(*out)>::element_type;
    if (progress) progress(0, 1, StrCat("compiling for ", name, r == 1 ? " (reference)" : ""));
    co.run_hlo_passes = r == 0 ? options_.run_test_hlo_passes : options_.run_reference_hlo_passes;
    co.cancel = cancel;
    auto exe = Exe::Compile(module_, co);
    if (!exe.ok()) {
      if (cancelled()) return absl::CancelledError("replay cancelled");
      return absl::Status(exe.status().code(),
                          StrCat(r == 1 ? "reference platform: " : "", name, " compilation: ",
                                 exe.status().message()));
    }
    (r == 0 ? report.compile_seconds : report.reference_compile_seconds) =
        (*exe)->stats().total_seconds;
    (r == 0 ? report.compile_summary : report.reference_compile_summary) = (*exe)->Summary();
    if (r == 0) report.dump_files = (*exe)->stats().dump_files;
    *out = std::move(*exe);
    return absl::OkStatus();
  };
  for (int r = 0; r < 2; ++r) {
    const std::string& p = r == 0 ? options_.platform : options_.reference_platform;
    absl::Status st;
    if (IsCpu(p)) {
      st = compile(r, "cpu", options_.cpu, &compiled[r].cpu);
    } else if (IsCuda(p)) {
      st = compile(r, "cuda", options_.cuda, &compiled[r].cuda);
    }
    if (!st.ok()) return st;
  }
  auto compiled_run = [&](int r) {
    CompiledRun run;
    if (!compiled[r].compiled()) return run;
    const CompiledExecutable* exe = &compiled[r];
    run.module = &exe->module();
    run.make_hook = [exe](std::function<absl::StatusOr<Literal>(const Instruction&)> elided,
                          ConstantCache* cache) {
      return exe->Visit([&](const auto& e) { return e.Hook(std::move(elided), cache); });
    };
    // Each device runs through its platform's runtime (its own arena on cpu and cuda; on cuda
    // every device's block on the one GPU), collectives meeting in the rendezvous as on the
    // driver.
    run.run = [exe](const std::vector<Literal>& args, const EvaluatorOptions& eo) {
      return exe->Visit([&](const auto& e) { return e.Run(args, eo); });
    };
    return run;
  };

  // Devices: more than one takes the multi-device path (replay/multi_device) below.
  absl::StatusOr<DeviceGrid> grid = ReplayDeviceGrid(module_, options_);
  if (!grid.ok()) return grid.status();
  std::optional<ArgumentMode> argument_mode;
  if (!options_.hlo_argument_mode.empty()) {
    absl::StatusOr<ArgumentMode> m = ParseArgumentMode(options_.hlo_argument_mode);
    if (!m.ok()) return m.status();
    argument_mode = *m;
  }
  const bool use_literals = !options_.force_fake_data && !argument_mode &&
                            !inputs_.literal_iterations.empty();
  const bool use_snapshot = !options_.force_fake_data && !argument_mode && !use_literals &&
                            inputs_.snapshot_arguments.has_value();
  if (use_literals &&
      static_cast<int>(inputs_.literal_iterations.size()) < options_.iterations) {
    return absl::InvalidArgumentError(
        StrCat("the literals file has ", inputs_.literal_iterations.size(),
               " iteration(s); --iterations=", options_.iterations, " asks for more"));
  }

  // Elided constants: seeded fake data, cached per instruction (loops ask repeatedly).
  FakeDataOptions fake_options{options_.seed, options_.use_large_float_range};
  auto elided_cache = std::make_shared<std::map<const Instruction*, Literal>>();
  auto elided_mutex = std::make_shared<std::mutex>();
  int elided_count = 0;
  for (const auto& comp : module_.computations()) {
    for (const Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kConstant && instr->literal() && instr->literal()->elided()) {
        ++elided_count;
      }
    }
  }
  if (elided_count > 0 && options_.fake_elided_constants) {
    report.warnings.push_back(StrCat(elided_count, " constant", elided_count == 1 ? "" : "s",
                                     " had elided data ({...}); replayed with seeded fake data"));
  }

  if (grid->size() > 1) {
    // xla-cpu: every device in one helper run, XLA's host devices standing in for ours.
    bool xla_compiled_md[2] = {false, false};
    auto xla_run = [&](int r) {
      CompiledRun run = compiled_run(r);
      if (!IsXlaCpu(r == 0 ? options_.platform : options_.reference_platform)) return run;
      run.external = [&, r](const std::vector<std::vector<Literal>>& lists, int iteration,
                            double* seconds) -> absl::StatusOr<std::vector<Literal>> {
        (void)iteration;
        XlaCpuOptions xo;
        xo.timeout_seconds = options_.xla_cpu_timeout_seconds;
        xo.ffi_handlers = options_.xla_cpu_ffi_handlers;
        xo.cancel = cancel;
        if (options_.fake_elided_constants) {
          const Module* module = &module_;
          xo.elided_constant = [module, fake_options](const Instruction& instr) {
            return MakeFakeElidedConstant(*module, instr, fake_options);
          };
        }
        auto ran = RunOnXlaCpuDevices(module_, lists, grid->num_replicas, grid->num_partitions,
                                      xo);
        if (!ran.ok()) return ran.status();
        *seconds = ran->run_seconds;
        if (!xla_compiled_md[r]) {
          xla_compiled_md[r] = true;
          (r == 1 ? report.reference_compile_seconds : report.compile_seconds) =
              ran->compile_seconds;
          if (report.xla_optimized_module.empty()) {
            report.xla_optimized_module = std::move(ran->optimized_module);
            report.xla_jaxlib_version = ran->jaxlib_version;
          }
        }
        return std::move(ran->results);
      };
      return run;
    };
    absl::Status st =
        RunMultiDeviceIterations(module_, options_, inputs_, *grid, cancel, progress, &report,
                                 xla_run(0), xla_run(1));
    if (!st.ok()) return st;
    return report;
  }

  const int runs_per_iteration = options_.reference_platform.empty() ? 1 : 2;
  const int64_t total_runs = int64_t{options_.iterations} * runs_per_iteration;
  FakeDataEngine engine(options_.seed);
  HostTransferFeeder host_feeder(options_.host_transfers == HostTransferMode::kFake,
                                 options_.seed, options_.use_large_float_range);

  std::function<absl::StatusOr<Literal>(const Instruction&)> elided_constant;
  // Elided constants made once for every iteration and read in place.
  ConstantCache constant_cache;
  if (options_.fake_elided_constants) {
    const Module* module = &module_;
    elided_constant = [module, fake_options, elided_cache,
                       elided_mutex](const Instruction& instr) -> absl::StatusOr<Literal> {
      {
        std::lock_guard<std::mutex> lock(*elided_mutex);
        auto it = elided_cache->find(&instr);
        if (it != elided_cache->end()) return Clone(it->second);
      }
      auto l = MakeFakeElidedConstant(*module, instr, fake_options);
      if (!l.ok()) return l.status();
      std::lock_guard<std::mutex> lock(*elided_mutex);
      return Clone(elided_cache->emplace(&instr, std::move(*l)).first->second);
    };
  }

  // xla-cpu runs: one helper process each (compile + run); the first run's compile time and
  // optimized module go to the report.
  bool xla_compiled[2] = {false, false};
  auto run_xla_cpu = [&](const std::vector<Literal>& args, int iteration, bool reference,
                         int64_t run_number, double* seconds) -> absl::StatusOr<Literal> {
    std::string what = StrCat(reference ? "reference " : "", "iteration ", iteration + 1);
    if (progress) {
      progress(run_number * 1000, total_runs * 1000, StrCat(what, ": XLA CPU (helper process)"));
    }
    XlaCpuOptions xo;
    xo.timeout_seconds = options_.xla_cpu_timeout_seconds;
    xo.ffi_handlers = options_.xla_cpu_ffi_handlers;
    xo.cancel = cancel;
    xo.elided_constant = elided_constant;
    auto run = RunOnXlaCpu(module_, args, xo);
    if (!run.ok()) return run.status();
    *seconds = run->run_seconds;
    if (!xla_compiled[reference ? 1 : 0]) {
      xla_compiled[reference ? 1 : 0] = true;
      (reference ? report.reference_compile_seconds : report.compile_seconds) =
          run->compile_seconds;
      if (report.xla_optimized_module.empty()) {
        report.xla_optimized_module = std::move(run->optimized_module);
        report.xla_jaxlib_version = run->jaxlib_version;
      }
    }
    if (progress) progress((run_number + 1) * 1000, total_runs * 1000, what);
    return std::move(run->result);
  };

  auto evaluate = [&](const std::vector<Literal>& args, int iteration, bool reference,
                      int64_t run_number, double* seconds) -> absl::StatusOr<Literal> {
    if (IsXlaCpu(reference ? options_.reference_platform : options_.platform)) {
      return run_xla_cpu(args, iteration, reference, run_number, seconds);
    }
    EvaluatorOptions eo;
    eo.memory_budget_bytes = options_.memory_budget_bytes;
    eo.cancel = cancel;
    eo.seed = options_.seed;
    eo.custom_call = options_.custom_call;
    if (options_.host_transfers != HostTransferMode::kError) {
      // Every run draws the same host data: a fresh stream per run, seeded alike.
      eo.host_transfer = host_feeder.ForDevice(0);
    }
    if (progress) {
      std::string what = StrCat(reference ? "reference " : "", "iteration ", iteration + 1);
      eo.progress = [&progress, run_number, total_runs, what](int64_t done, int64_t total,
                                                               const std::string& name) {
        // Scale to per-mille of the whole session so the total is known up front.
        int64_t per_run = 1000;
        int64_t d = run_number * per_run + (total > 0 ? done * per_run / total : per_run);
        progress(d, total_runs * per_run, StrCat(what, ": ", name));
      };
    }
    if (options_.on_instruction) {
      eo.on_instruction = [this, iteration, reference](const InstructionEvent& e) {
        InstructionProfile p;
        p.instruction = e.instruction;
        p.seconds = e.seconds;
        p.loop_iteration = e.loop_iteration;
        p.iteration = iteration;
        p.reference = reference;
        if (e.result != nullptr && options_.instruction_statistics) {
          p.statistics = ComputeStatistics(*e.result);
        }
        p.value = e.result;
        options_.on_instruction(p);
      };
    }
    if (elided_constant) {
      eo.elided_constant = elided_constant;
      eo.constant_cache = &constant_cache;
    }
    const CompiledExecutable& exe = compiled[reference ? 1 : 0];
    auto start = std::chrono::steady_clock::now();
    auto result = exe.compiled() ? exe.Visit([&](const auto& e) { return e.Run(args, eo); })
                                 : EvaluateModule(module_, args, eo);
    *seconds = Since(start);
    if (!result.ok() && cancelled()) return absl::CancelledError("replay cancelled");
    return result;
  };

  // --xla_dump_hlo_snapshots: each execution of the test platform leaves an HloSnapshot of
  // the module that ran (the cpu or cuda platform's optimised module, else the module as
  // given), under the test platform's dump options (cuda's for cuda, else cpu's).
  std::optional<ModuleDumper> snapshot_dumper;
  const Module& ran_module = compiled[0].compiled() ? compiled[0].module() : module_;
  const DumpOptions& dump_options =
      IsCuda(options_.platform) ? options_.cuda.dump_options : options_.cpu.dump_options;
  if (dump_options.snapshots && !dump_options.dump_to.empty()) {
    snapshot_dumper.emplace(dump_options, ran_module);
    if (!snapshot_dumper->enabled()) snapshot_dumper.reset();
  }

  int64_t run_number = 0;
  for (int i = 0; i < options_.iterations; ++i) {
    if (cancelled()) return absl::CancelledError("replay cancelled");
    ReplayIteration it;
    std::optional<Literal> expected;
    std::string expected_name;
    if (use_literals) {
      const IterationLiterals& lit = inputs_.literal_iterations[i];
      it.arguments = lit.arguments;
      it.argument_source = StrCat("literals file iteration ", i + 1);
      if (lit.result) {
        expected = *lit.result;
        expected_name = StrCat("literals file result (iteration ", i + 1, ")");
      }
    } else if (use_snapshot) {
      it.arguments = *inputs_.snapshot_arguments;
      it.argument_source = "snapshot";
      if (inputs_.snapshot_result) {
        expected = *inputs_.snapshot_result;
        expected_name = "snapshot result";
      }
    } else if (argument_mode) {
      auto lists = MakeDeviceArguments(module_, *argument_mode, *grid, &engine,
                                       options_.use_large_float_range);
      if (!lists.ok()) return lists.status();
      it.arguments = std::move((*lists)[0]);
      it.argument_source = StrCat("--hlo_argument_mode=", ArgumentModeName(*argument_mode));
    } else {
      auto args = MakeFakeArguments(module_, &engine, options_.use_large_float_range);
      if (!args.ok()) return args.status();
      it.arguments = std::move(*args);
      it.argument_source = StrCat("fake data (seed ", options_.seed,
                                  options_.use_large_float_range ? ", large float range" : "", ")");
    }
    if (absl::Status st = CheckArguments(module_, it.arguments, it.argument_source); !st.ok()) {
      return st;
    }
    auto result = evaluate(it.arguments, i, false, run_number++, &it.run_seconds);
    if (!result.ok()) return result.status();
    it.result = std::move(*result);
    if (snapshot_dumper) {
      SnapshotData data;
      data.arguments = it.arguments;
      data.result = it.result;
      data.execution_platform = PlatformNameForSnapshot(options_.platform);
      const size_t before = snapshot_dumper->written().size();
      if (absl::Status st = snapshot_dumper->DumpSnapshot(ran_module, data, i); !st.ok()) {
        return absl::Status(st.code(), StrCat("--xla_dump_hlo_snapshots: ", st.message()));
      }
      report.dump_files.insert(report.dump_files.end(),
                               snapshot_dumper->written().begin() + before,
                               snapshot_dumper->written().end());
    }
    if (!options_.reference_platform.empty()) {
      auto ref = evaluate(it.arguments, i, true, run_number++, &it.reference_seconds);
      if (!ref.ok()) {
        return absl::Status(ref.status().code(),
                            StrCat("reference platform: ", std::string(ref.status().message())));
      }
      it.reference_result = std::move(*ref);
      it.comparison = CompareLiterals(*it.reference_result, it.result, options_.bounds,
                                      options_.max_reported_elements);
      it.compared_against = StrCat("reference platform ", options_.reference_platform);
    } else if (expected) {
      it.comparison = CompareLiterals(*expected, it.result, options_.bounds,
                                      options_.max_reported_elements);
      it.compared_against = expected_name;
    }
    report.iterations.push_back(std::move(it));
  }
  for (std::string& w : host_feeder.Warnings(nullptr)) report.warnings.push_back(std::move(w));
  return report;
}

}  // namespace hlowb
