// `hlowb replay FILE... [--platform=interpreter] [--reference_platform=P] ...`: runs modules
// the way XLA's run_hlo_module does, with its flag names and meanings (see kUsage), on the
// reference evaluator. Prints, per file, where the arguments came from, compile and run wall
// time, and the comparison verdict (against the reference platform, or against the result a
// snapshot or literals file carries). Exit code 0 when everything ran and matched, 1 when a
// module failed to load or run or a comparison failed, 2 for usage errors.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/replay_tools.h"
#include "core/passes/module_dumper.h"
#include "core/proto/open_file.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "replay/codegen/cpu_jit.h"
#include "replay/data/literals_file.h"
#include "replay/multi_device/device_arguments.h"
#include "replay/session.h"

namespace hlowb::cli {
namespace {

constexpr char kUsage[] =
    "usage: hlowb replay FILE... [--platform=interpreter] [--reference_platform=P]\n"
    "         [--input_format=hlo|pb|pbtxt|snapshot] [--force_fake_data] [--print_literals]\n"
    "         [--literal_format=xla|compact]\n"
    "         [--iterations=N] [--seed=S] [--abs_error_bound=X] [--rel_error_bound=X]\n"
    "         [--input_literals_file=F] [--output_literals_file=F]\n"
    "         [--run_test_hlo_passes=true|false] [--run_reference_hlo_passes=true|false]\n"
    "         [--use_large_float_range]\n"
    "         [--num_replicas=N] [--num_partitions=M] [--hlo_argument_mode=MODE]\n"
    "         [--xla_dump_to=DIR] [--xla_cpu_enable_kernel_cache=true|false]\n"
    "         [--xla_cpu_kernel_cache_dir=DIR] [--cpu_arena=true|false] [--profile=N]\n"
    "         [--xla_dump_hlo_snapshots]\n"
    "         [--xla_cpu_helper_timeout=SECONDS] [--cuda_arch=sm_NN] [--cuda_allow_tf32]\n"
    "         [--cuda_emulate] [--cuda_arena=true|false] [--xla_... dump and pass flags, also read from XLA_FLAGS]\n"
    "Flags mean what they mean to XLA's run_hlo_module. Platforms: interpreter (the reference\n"
    "evaluator; also 'reference'), cpu (compiled for this machine: the cpu pass pipeline, then\n"
    "LLVM kernels, with the interpreter computing what the kernels do not cover; also 'host'),\n"
    "xla-cpu (real XLA's CPU backend in a helper process, through the jax in the project's\n"
    ".venv or $HLOWB_PYTHON; several devices run as XLA host devices; it rounds 16-bit floats\n"
    "where the module says, --xla_allow_excess_precision=false unless XLA_FLAGS sets it; a\n"
    "helper still running after --xla_cpu_helper_timeout seconds, default 600, is killed);\n"
    "cuda (also 'gpu': an NVIDIA GPU through its driver, loaded at run time: the gpu pass\n"
    "pipeline, then PTX kernels and cuBLAS GEMMs, the interpreter computing the rest; with\n"
    "--run_test_hlo_passes=false XLA's optimized GPU HLO runs as given, one kernel per fusion;\n"
    "--cuda_arch=sm_NN sets the PTX target, default the device's; --cuda_allow_tf32 lets f32\n"
    "GEMMs use TF32, off by default; --cuda_emulate runs the same kernels on the host's GPU\n"
    "emulator, which needs no GPU, with GPU threads, warps and shared memory emulated, to check\n"
    "what the cuda platform computes; it is slow; cuda modules run in an arena of managed\n"
    "memory placed by buffer assignment, --cuda_arena=false copies each kernel's operands\n"
    "to the device and back instead). Without a reference\n"
    "platform the result is compared with the one a snapshot or literals file carries, if any.\n"
    "cpu compiles are cached on disk (default ~/.cache/hlowb/cpu-kernels); --xla_dump_to writes\n"
    "the pipeline's dumps and the kernels' .ir-no-opt.ll, .ir-with-opt.ll and .s (cuda: .ptx);\n"
    "with --xla_dump_hlo_snapshots each iteration also writes\n"
    "module_NNNN.<name>.snapshot.<N>.pb, an HloSnapshot of the module that ran with its\n"
    "arguments and result (replay it with hlowb replay FILE to check the result again).\n"
    "--profile=N prints the N instructions that took longest on the test platform (cpu, cuda:\n"
    "the module after its passes).\n"
    "Error bounds default to 1e-3; an element mismatches when both bounds are exceeded.\n"
    "Devices: the module's replica_count x num_partitions unless --num_replicas /\n"
    "--num_partitions say otherwise; several devices run as threads with real collectives\n"
    "and print per device. --hlo_argument_mode as in XLA's multihost runner:\n"
    "use_random_inputs, use_shared_random_inputs, use_zeros_as_input, use_device_id_as_input,\n"
    "uninitialized (zeros here).\n"
    "Finding the problem:\n"
    "  --find_nonfinite  the first instruction (inside fusions, loops with the iteration,\n"
    "      called computations) whose result holds a NaN or Inf its operands did not\n"
    "  --isolate_instructions  every entry instruction alone, on inputs captured from the\n"
    "      full reference run; run_hlo_module's status table\n"
    "  DIR --module=M --bisect_passes  replay each pass state of a dump that changed the\n"
    "      program with before_optimizations' arguments; the first pass that diverges\n"
    "  --custom_call_fallback=error|zeros|snapshot  custom calls without a handler\n"
    "  --custom_call_library=LIB.so[,target=symbol,...]  run the typed-FFI custom calls with\n"
    "      the XLA FFI handlers in LIB (built against jax.ffi.include_dir()'s headers); a\n"
    "      target's handler is the symbol of its own name unless mapped; repeatable\n"
    "  --host_transfers=error|zeros|fake  what the host sends to infeed and host recvs\n"
    "      (outfeed and host sends are dropped; the report names the instructions, per\n"
    "      device on several; fake data is seeded per device)\n";

std::string Ms(double seconds) {
  char buf[32];
  if (seconds < 1) {
    std::snprintf(buf, sizeof(buf), "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(buf, sizeof(buf), "%.3f s", seconds);
  }
  return buf;
}

bool ParseBool(const std::string& v, bool* out) {
  if (v == "true" || v == "1") {
    *out = true;
  } else if (v == "false" || v == "0") {
    *out = false;
  } else {
    return false;
  }
  return true;
}

// Multi-device iterations: one block per device (its arguments and result with
// --print_literals, its run time and its comparison).
// --literal_format: XLA's Literal::ToString (default) or the one-line compact form.
std::string LiteralText(const Literal& literal, bool compact) {
  return compact ? PrintShapedLiteral(literal) : PrintLiteralAsXla(literal);
}

bool PrintDevices(const ReplayIteration& it, const Computation& entry, bool print_literals,
                  bool compact) {
  bool ok = true;
  auto indent = [](const std::string& text) {
    std::string out;
    for (size_t i = 0; i < text.size(); ++i) {
      out += text[i];
      if (text[i] == '\n' && i + 1 < text.size()) out += "    ";
    }
    return out;
  };
  for (size_t d = 0; d < it.devices.size(); ++d) {
    const DeviceReplay& dev = it.devices[d];
    std::cout << "    device " << d << " (replica " << dev.replica << ", partition "
              << dev.partition << "): run " << Ms(dev.run_seconds) << "\n";
    if (print_literals) {
      const std::vector<Literal>& args = dev.arguments.empty() ? it.arguments : dev.arguments;
      for (size_t a = 0; a < args.size(); ++a) {
        std::cout << "      argument " << a << " (" << entry.parameter(a)->name()
                  << "): " << LiteralText(args[a], compact) << "\n";
      }
      std::cout << "      result: " << LiteralText(dev.result, compact) << "\n";
      if (dev.reference_result) {
        std::cout << "      reference result: " << LiteralText(*dev.reference_result, compact)
                  << "\n";
      }
    }
    if (dev.comparison) {
      std::cout << "      comparison with " << it.compared_against << ": "
                << indent(dev.comparison->ToString());
      if (!dev.comparison->ok()) ok = false;
    }
  }
  if (!it.comparison && !it.devices.empty() && !it.devices[0].comparison) {
    std::cout << "    comparison: none (no reference platform, and the input carries no "
                 "result)\n";
  }
  return ok;
}

bool FormatMatches(const std::string& want, HloFileFormat got) {
  switch (got) {
    case HloFileFormat::kHloText: return want == "hlo";
    case HloFileFormat::kHloProto:
    case HloFileFormat::kHloModuleProto: return want == "pb";
    case HloFileFormat::kHloProtoText:
    case HloFileFormat::kHloModuleProtoText: return want == "pbtxt";
    case HloFileFormat::kHloSnapshot:
    case HloFileFormat::kHloSnapshotText: return want == "snapshot" || want == "unoptimized_snapshot";
  }
  return false;
}

}  // namespace

int RunReplay(const std::vector<std::string>& argv_in) {
  // Bare boolean flags that default to true are written --name or --name=false. XLA's dump and
  // pass flags (--xla_dump_hlo_snapshots, --xla_dump_hlo_as_proto, --xla_disable_hlo_passes,
  // ...) are taken out here and applied after XLA_FLAGS; the cpu kernel-cache flags and
  // --xla_dump_to stay with the other flags.
  std::vector<std::string> argv;
  std::vector<std::string> xla_flags;
  for (const std::string& a : argv_in) {
    if (a.rfind("--xla_", 0) == 0 && a.rfind("--xla_cpu_", 0) != 0 &&
        a.rfind("--xla_dump_to", 0) != 0) {
      xla_flags.push_back(a);
      continue;
    }
    if (a == "--run_test_hlo_passes" || a == "--run_reference_hlo_passes") {
      argv.push_back(a + "=true");
    } else {
      argv.push_back(a);
    }
  }
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"force_fake_data", "print_literals", "use_large_float_range",
                        "find_nonfinite", "isolate_instructions", "bisect_passes",
                        "cuda_allow_tf32", "cuda_emulate"},
                 {"platform", "reference_platform", "input_format", "iterations", "seed",
                  "abs_error_bound", "rel_error_bound", "input_literals_file",
                  "output_literals_file", "run_test_hlo_passes", "run_reference_hlo_passes",
                  "num_replicas", "num_partitions", "hlo_argument_mode",
                  "custom_call_fallback", "custom_call_library", "host_transfers", "module",
                  "xla_dump_to", "cuda_arena",
                  "xla_cpu_enable_kernel_cache", "xla_cpu_kernel_cache_dir", "cpu_arena",
                  "profile",
                  "literal_format", "xla_cpu_helper_timeout", "cuda_arch"},
                 &args, &error) ||
      args.positional.empty()) {
    std::cerr << "hlowb replay: " << (error.empty() ? "expected at least one FILE" : error)
              << "\n" << kUsage;
    return kUsageError;
  }
  auto usage_error = [](const std::string& message) {
    std::cerr << "hlowb replay: " << message << "\n" << kUsage;
    return kUsageError;
  };

  ReplayOptions options;
  if (absl::Status st = ParseSharedReplayFlags(args, &options); !st.ok()) {
    if (absl::IsInvalidArgument(st)) return usage_error(std::string(st.message()));
    std::cerr << "error: " << st.message() << "\n";
    return kInputError;
  }
  if (const char* env = std::getenv("XLA_FLAGS")) {
    std::vector<std::string> unknown;
    absl::Status st = ApplyXlaFlags(env, &options.cpu.dump_options, &options.cpu.pass_options,
                                    &unknown);
    if (!st.ok()) return usage_error(StrCat("XLA_FLAGS: ", st.message()));
  }
  for (const std::string& f : xla_flags) {
    bool known = false;
    absl::Status st =
        ApplyXlaFlag(f, &options.cpu.dump_options, &options.cpu.pass_options, &known);
    if (!st.ok()) return usage_error(std::string(st.message()));
    if (!known) std::cerr << "warning: " << f << " is not used by hlowb replay\n";
  }
  if (args.Has("xla_dump_to")) options.cpu.dump_options.dump_to = args.Get("xla_dump_to");
  // The cuda platform dumps and runs its passes under the same flags.
  options.cuda.dump_options = options.cpu.dump_options;
  options.cuda.pass_options = options.cpu.pass_options;
  if (options.cpu.dump_options.snapshots && options.cpu.dump_options.dump_to.empty()) {
    std::cerr << "warning: --xla_dump_hlo_snapshots writes nothing without --xla_dump_to=DIR\n";
  }
  if (args.Has("xla_cpu_helper_timeout")) {
    try {
      size_t used = 0;
      const std::string v = args.Get("xla_cpu_helper_timeout");
      options.xla_cpu_timeout_seconds = std::stod(v, &used);
      if (used != v.size() || !(options.xla_cpu_timeout_seconds > 0)) throw 0;
    } catch (...) {
      return usage_error("--xla_cpu_helper_timeout must be a positive number of seconds");
    }
  }
  int profile_rows = 0;
  if (args.Has("profile")) {
    try {
      size_t used = 0;
      profile_rows = std::stoi(args.Get("profile"), &used);
      if (used != args.Get("profile").size() || profile_rows < 1) throw 0;
    } catch (...) {
      return usage_error("--profile must be a positive number of rows");
    }
  }
  try {
    if (args.Has("iterations")) {
      size_t used = 0;
      options.iterations = std::stoi(args.Get("iterations"), &used);
      if (used != args.Get("iterations").size() || options.iterations < 1) throw 0;
    }
  } catch (...) {
    return usage_error("--iterations must be a positive integer");
  }
  for (auto [name, target] :
       {std::pair<const char*, bool*>{"run_test_hlo_passes", &options.run_test_hlo_passes},
        {"run_reference_hlo_passes", &options.run_reference_hlo_passes}}) {
    if (args.Has(name) && !ParseBool(args.Get(name), target)) {
      return usage_error(StrCat("--", name, " takes true or false"));
    }
  }
  for (auto [name, target] :
       {std::pair<const char*, int64_t*>{"num_replicas", &options.num_replicas},
        {"num_partitions", &options.num_partitions}}) {
    if (!args.Has(name)) continue;
    try {
      size_t used = 0;
      *target = std::stoll(args.Get(name), &used);
      if (used != args.Get(name).size() || *target < 1) throw 0;
    } catch (...) {
      return usage_error(StrCat("--", name, " must be a positive integer"));
    }
  }
  if (auto mode = ParseHostTransferMode(args.Get("host_transfers", "error")); mode.ok()) {
    options.host_transfers = *mode;
  } else {
    return usage_error(std::string(mode.status().message()));
  }
  options.hlo_argument_mode = args.Get("hlo_argument_mode", "");
  if (!options.hlo_argument_mode.empty()) {
    if (absl::Status st = ParseArgumentMode(options.hlo_argument_mode).status(); !st.ok()) {
      return usage_error(std::string(st.message()));
    }
  }
  options.force_fake_data = args.Has("force_fake_data");
  options.use_large_float_range = args.Has("use_large_float_range");
  const bool print_literals = args.Has("print_literals");
  const std::string literal_format = args.Get("literal_format", "xla");
  if (literal_format != "xla" && literal_format != "compact") {
    return usage_error("--literal_format must be xla or compact");
  }
  const bool compact_literals = literal_format == "compact";
  const std::string input_format = args.Get("input_format", "");
  if (!input_format.empty() && input_format != "hlo" && input_format != "pb" &&
      input_format != "pbtxt" && input_format != "snapshot" &&
      input_format != "unoptimized_snapshot") {
    return usage_error(StrCat("unknown --input_format '", input_format, "'"));
  }
  const std::string output_literals = args.Get("output_literals_file", "");
  if (!output_literals.empty() && args.positional.size() != 1) {
    return usage_error("--output_literals_file takes one FILE");
  }

  std::vector<IterationLiterals> input_literals;
  if (args.Has("input_literals_file")) {
    auto read = ReadRunHloModuleLiterals(args.Get("input_literals_file"));
    if (!read.ok()) {
      std::cerr << "error: " << read.status().message() << "\n";
      return kInputError;
    }
    input_literals = std::move(*read);
  }
  if (args.Has("bisect_passes")) return RunBisectPasses(args, options, input_literals);

  int exit_code = kOk;
  for (const std::string& path : args.positional) {
    absl::StatusOr<OpenedHloFile> opened = OpenHloFile(path);
    if (!opened.ok()) {
      std::cerr << "error: " << opened.status().message() << "\n";
      exit_code = kInputError;
      continue;
    }
    if (!input_format.empty() && !FormatMatches(input_format, opened->format)) {
      std::cerr << "error: " << path << " is " << HloFileFormatName(opened->format)
                << ", not --input_format=" << input_format << "\n";
      exit_code = kInputError;
      continue;
    }
    for (const std::string& w : opened->warnings) std::cerr << "warning: " << w << "\n";
    for (OpenedModule& om : opened->modules) {
      ReplayInputs inputs;
      if (opened->is_snapshot) {
        inputs.snapshot_arguments = opened->arguments;
        inputs.snapshot_result = opened->result;
      }
      inputs.literal_iterations = input_literals;
      // Custom calls, --find_nonfinite, --isolate_instructions: replay_tools.h.
      ReplayToolOutcome tools = RunReplayTools(args, om.label, *om.module,
                                               opened->execution_platform, inputs, &options);
      if (tools.handled) {
        exit_code = std::max(exit_code, tools.exit_code);
        continue;
      }
      // --profile=N: wall time per instruction of the test platform's runs (nested
      // instructions are counted on their own and inside their caller).
      struct ProfileRow {
        double seconds = 0;
        int64_t count = 0;
        bool entry = false;
        std::string what;
      };
      std::map<const Instruction*, ProfileRow> profile;
      std::mutex profile_mu;
      ReplayOptions run_options = options;
      if (profile_rows > 0) {
        run_options.instruction_statistics = false;
        run_options.on_instruction = [&profile, &profile_mu](const InstructionProfile& p) {
          if (p.reference || p.instruction == nullptr) return;
          std::lock_guard<std::mutex> lock(profile_mu);
          ProfileRow& row = profile[p.instruction];
          row.seconds += p.seconds;
          if (row.count++ == 0) {  // the instruction may not outlive the run (cpu's module)
            const Instruction* instr = p.instruction;
            std::string what(OpcodeName(instr->opcode()));
            if (instr->opcode() == Opcode::kFusion && !instr->called_computations().empty() &&
                instr->called_computations()[0]->root() != nullptr) {
              what = StrCat("fusion, root ",
                            OpcodeName(instr->called_computations()[0]->root()->opcode()));
            }
            const bool entry = instr->parent() != nullptr && instr->parent()->is_entry();
            row.entry = entry;
            row.what = StrCat("%", instr->name(), " (", what, ", ",
                              PrintShape(instr->shape(), false), ") in ",
                              instr->parent() != nullptr ? instr->parent()->name() : "?");
          }
        };
      }
      ReplaySession session(*om.module, run_options, std::move(inputs));
      std::cout << om.label << ": module " << om.module->name() << "\n";
      std::cout << "  platform: " << options.platform << ", reference platform: "
                << (options.reference_platform.empty() ? "none" : options.reference_platform)
                << "\n";
      for (const std::string* p : {&options.platform, &options.reference_platform}) {
        if (*p == kCudaPlatform || *p == "gpu") {
          std::cout << "  cuda device: "
                    << (options.cuda.emulate ? std::string("the host's GPU emulator (--cuda_emulate)")
                                             : CudaDeviceDescription())
                    << "\n";
          break;
        }
      }
      absl::StatusOr<ReplayReport> report = session.Run();
      if (!report.ok()) {
        std::cout << "  FAILED: " << report.status().message() << "\n";
        std::cerr << "error: " << om.label << ": " << report.status().message() << "\n";
        exit_code = kInputError;
        continue;
      }
      for (const std::string& w : report->warnings) std::cout << "  warning: " << w << "\n";
      for (const std::string& f : report->dump_files) {
        if (f.find(".snapshot.") != std::string::npos) std::cout << "  snapshot: " << f << "\n";
      }
      PrintCustomCallNotes(tools);
      const std::string xla_compile =
          StrCat(" (XLA CPU in the helper process, jaxlib ", report->xla_jaxlib_version, ")\n");
      std::cout << "  compile: " << Ms(report->compile_seconds)
                << (options.platform == "xla-cpu" ? xla_compile
                    : !report->compile_summary.empty()
                        ? StrCat(" (", report->compile_summary, ")\n")
                        : std::string(" (verification; the interpreter runs the module as given)\n"));
      if (!report->reference_compile_summary.empty()) {
        std::cout << "  reference compile: " << Ms(report->reference_compile_seconds) << " ("
                  << report->reference_compile_summary << ")\n";
      }
      if (options.reference_platform == "xla-cpu") {
        std::cout << "  reference compile: " << Ms(report->reference_compile_seconds)
                  << xla_compile;
      }
      if (report->num_replicas * report->num_partitions > 1) {
        std::cout << "  devices: " << report->num_replicas * report->num_partitions << " ("
                  << report->num_replicas << " replica" << (report->num_replicas == 1 ? "" : "s")
                  << " x " << report->num_partitions << " partition"
                  << (report->num_partitions == 1 ? "" : "s") << "), one thread each\n";
      }
      if (profile_rows > 0) {
        std::vector<std::pair<double, const ProfileRow*>> rows;
        double total = 0;
        for (const auto& [instr, row] : profile) {
          rows.emplace_back(-row.seconds, &row);
          if (row.entry) total += row.seconds;
        }
        std::sort(rows.begin(), rows.end());
        std::cout << "  profile (" << options.platform << ", all iterations; entry total "
                  << Ms(total) << "):\n";
        for (size_t k = 0; k < rows.size() && static_cast<int>(k) < profile_rows; ++k) {
          const ProfileRow& row = *rows[k].second;
          std::cout << "    " << Ms(-rows[k].first) << "  " << row.what
                    << (row.count > 1 ? StrCat(" x", row.count) : std::string()) << "\n";
        }
      }
      for (size_t i = 0; i < report->iterations.size(); ++i) {
        const ReplayIteration& it = report->iterations[i];
        std::cout << "  iteration " << i + 1 << ": arguments from " << it.argument_source
                  << "; run " << Ms(it.run_seconds);
        if (it.reference_result) std::cout << ", reference run " << Ms(it.reference_seconds);
        std::cout << "\n";
        if (!it.devices.empty()) {
          if (!PrintDevices(it, *om.module->entry(), print_literals, compact_literals)) {
            exit_code = kInputError;
          }
          continue;
        }
        if (print_literals) {
          const Computation* entry = om.module->entry();
          for (size_t a = 0; a < it.arguments.size(); ++a) {
            std::cout << "  argument " << a << " (" << entry->parameter(a)->name()
                      << "): " << LiteralText(it.arguments[a], compact_literals) << "\n";
          }
          std::cout << "  result: " << LiteralText(it.result, compact_literals) << "\n";
          if (it.reference_result) {
            std::cout << "  reference result: "
                      << LiteralText(*it.reference_result, compact_literals) << "\n";
          }
        }
        if (it.comparison) {
          std::cout << "  comparison with " << it.compared_against << ": "
                    << it.comparison->ToString();
          if (!it.comparison->ok()) exit_code = kInputError;
        } else {
          std::cout << "  comparison: none (no reference platform, and the input carries no "
                       "result)\n";
        }
      }
      if (!output_literals.empty()) {
        absl::Status st = WriteRunHloModuleLiterals(output_literals, report->ToIterationLiterals());
        if (!st.ok()) {
          std::cerr << "error: " << st.message() << "\n";
          exit_code = kInputError;
        } else {
          std::cout << "  literals written to " << output_literals << "\n";
        }
      }
    }
  }
  return exit_code;
}

}  // namespace hlowb::cli
