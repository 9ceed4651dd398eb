// `hlowb bundle FILE [replay flags] -o DIR`: replays FILE once with the given flags and writes a
// bug-report folder someone else can rerun without this machine:
//
//   module.hlo               the module as HLO text
//   module.hlo.pb            the module as an HloProto
//   snapshot.hlo_snapshot.pb HloSnapshot: module, the arguments used, the result
//   arguments.literals.pb    run_hlo_module's --input_literals_file with the same arguments
//   flags.txt                the replay flags, one per line
//   platform.txt             hlowb version, OS, CPU, and the replay platforms
//   report.txt               the comparison (mismatches) and the NaN/Inf report
//   README.md                what is where, and ready-to-run hlowb and run_hlo_module commands
//
// A replay that fails still makes a bundle: report.txt holds the failure, and the snapshot and
// literals file are written when the input brought arguments. Everything but platform.txt is
// deterministic for a given input and flags. Exit code 0 when the bundle was written (whatever
// the replay found), 1 when it could not be, 2 for usage.
#include <sys/utsname.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/replay_tools.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "replay/compare/nonfinite.h"
#include "replay/data/literals_file.h"
#include "replay/session.h"

#ifndef HLOWB_VERSION
#define HLOWB_VERSION "0.1.0"
#endif

namespace hlowb::cli {
namespace {

constexpr char kUsage[] =
    "usage: hlowb bundle FILE -o DIR [--platform=interpreter] [--reference_platform=P]\n"
    "         [--force_fake_data] [--seed=S] [--abs_error_bound=X] [--rel_error_bound=X]\n"
    "         [--input_literals_file=F] [--use_large_float_range]\n"
    "         [--custom_call_fallback=error|zeros|snapshot] [--custom_call_library=LIB.so,...]\n"
    "Replays FILE once and writes a bug-report folder: the module (text and proto), a snapshot\n"
    "with the arguments used, the flags, the platform, the mismatch and NaN/Inf report, and a\n"
    "README with commands for hlowb and for XLA's run_hlo_module.\n";

std::string CpuModel() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        size_t start = line.find_first_not_of(' ', colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
      }
    }
  }
  return "unknown";
}

std::string OsDescription() {
  struct utsname u;
  if (uname(&u) != 0) return "unknown";
  return StrCat(u.sysname, " ", u.release, " ", u.machine);
}

// run_hlo_module's platform names.
std::string XlaPlatform(const std::string& p) {
  if (p == "interpreter" || p == "reference") return "Interpreter";
  if (p == "cpu" || p == "host") return "CPU";
  if (p == "cuda" || p == "gpu") return "CUDA";
  if (p == "rocm") return "ROCM";
  return p;
}

std::string ShellQuote(const std::string& s) {
  if (s.find_first_of(" '\"$\\`*?;&|<>()") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool Write(const std::filesystem::path& path, const std::string& contents) {
  absl::Status st = WriteStringToFile(path.string(), contents);
  if (!st.ok()) std::cerr << "error: " << st.message() << "\n";
  return st.ok();
}

bool ParseNumber(const Args& args, const char* name, double* out) {
  if (!args.Has(name)) return true;
  try {
    size_t used = 0;
    *out = std::stod(args.Get(name), &used);
    return used == args.Get(name).size() && *out >= 0;
  } catch (...) {
    return false;
  }
}

}  // namespace

int RunBundle(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"force_fake_data", "use_large_float_range"},
                 {"o", "platform", "reference_platform", "seed", "abs_error_bound",
                  "rel_error_bound", "input_literals_file", "custom_call_fallback",
                  "custom_call_library"},
                 &args, &error) ||
      args.positional.size() != 1 || !args.Has("o")) {
    std::cerr << "hlowb bundle: " << (error.empty() ? "expected FILE and -o DIR" : error) << "\n"
              << kUsage;
    return kUsageError;
  }
  // The replay flags as given, for flags.txt and the commands.
  std::vector<std::string> replay_flags;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (a == args.positional[0]) continue;
    if (a == "-o" || a == "--o") {
      ++i;
      continue;
    }
    if (a.rfind("-o=", 0) == 0 || a.rfind("--o=", 0) == 0) continue;
    replay_flags.push_back(a);
  }

  ReplayOptions options;
  options.platform = args.Get("platform", "interpreter");
  options.reference_platform = args.Get("reference_platform", "");
  for (const std::string* p : {&options.platform, &options.reference_platform}) {
    if (p->empty()) continue;
    if (absl::Status st = CheckPlatform(*p); !st.ok()) {
      std::cerr << "hlowb bundle: " << st.message() << "\n";
      return absl::IsInvalidArgument(st) ? kUsageError : kInputError;
    }
  }
  if (args.Has("seed")) {
    try {
      size_t used = 0;
      options.seed = std::stoull(args.Get("seed"), &used);
      if (used != args.Get("seed").size()) throw 0;
    } catch (...) {
      std::cerr << "hlowb bundle: --seed must be a non-negative integer\n";
      return kUsageError;
    }
  }
  if (!ParseNumber(args, "abs_error_bound", &options.bounds.abs) ||
      !ParseNumber(args, "rel_error_bound", &options.bounds.rel)) {
    std::cerr << "hlowb bundle: error bounds must be non-negative numbers\n";
    return kUsageError;
  }
  options.force_fake_data = args.Has("force_fake_data");
  options.use_large_float_range = args.Has("use_large_float_range");

  absl::StatusOr<OpenedHloFile> opened = OpenHloFile(args.positional[0]);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().message() << "\n";
    return kInputError;
  }
  if (opened->modules.empty()) {
    std::cerr << "error: " << args.positional[0] << " holds no module\n";
    return kInputError;
  }
  if (opened->modules.size() > 1) {
    std::cerr << "warning: " << args.positional[0] << " holds " << opened->modules.size()
              << " modules; bundling the first\n";
  }
  const Module& module = *opened->modules[0].module;
  ReplayInputs inputs;
  if (opened->is_snapshot) {
    inputs.snapshot_arguments = opened->arguments;
    inputs.snapshot_result = opened->result;
  }
  if (args.Has("input_literals_file")) {
    absl::StatusOr<std::vector<IterationLiterals>> lits =
        ReadRunHloModuleLiterals(args.Get("input_literals_file"));
    if (!lits.ok()) {
      std::cerr << "error: " << lits.status().message() << "\n";
      return kInputError;
    }
    inputs.literal_iterations = std::move(*lits);
  }
  absl::StatusOr<std::shared_ptr<CustomCallDispatcher>> dispatcher =
      MakeCustomCallDispatcher(args, opened->execution_platform, module, inputs);
  if (!dispatcher.ok()) {
    std::cerr << "hlowb bundle: " << dispatcher.status().message() << "\n";
    return kUsageError;
  }
  options.custom_call = (*dispatcher)->AsFunction();

  // The replay. A failed replay still makes a bundle (the failure is what to report), with
  // the arguments the input brought, if any.
  absl::StatusOr<ReplayReport> run = ReplaySession(module, options, inputs).Run();
  const ReplayIteration* it = run.ok() ? &run->iterations[0] : nullptr;
  std::optional<std::vector<Literal>> arguments;
  std::string argument_source;
  if (it != nullptr) {
    arguments = it->arguments;
    argument_source = it->argument_source;
  } else if (!options.force_fake_data && !inputs.literal_iterations.empty()) {
    arguments = inputs.literal_iterations[0].arguments;
    argument_source = "literals file iteration 1";
  } else if (!options.force_fake_data && inputs.snapshot_arguments) {
    arguments = *inputs.snapshot_arguments;
    argument_source = "snapshot";
  }
  std::optional<absl::StatusOr<NonfiniteReport>> nonfinite;
  if (it != nullptr) nonfinite = FindNonfinite(module, options, inputs);

  std::filesystem::path dir(args.Get("o"));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::cerr << "error: cannot create " << dir.string() << ": " << ec.message() << "\n";
    return kInputError;
  }

  // The module, as text and as a proto; the arguments as a snapshot and a literals file.
  std::vector<std::string> warnings;
  absl::StatusOr<std::string> proto =
      EncodeHloFile(module, HloOutputFormat::kHloProto, {}, &warnings);
  if (!proto.ok()) {
    std::cerr << "error: " << proto.status().message() << "\n";
    return kInputError;
  }
  if (!Write(dir / "module.hlo", PrintModule(module)) || !Write(dir / "module.hlo.pb", *proto)) {
    return kInputError;
  }
  std::vector<std::string> files = {"module.hlo", "module.hlo.pb"};
  if (arguments) {
    SnapshotData snapshot_data;
    snapshot_data.arguments = *arguments;
    if (it != nullptr) snapshot_data.result = it->result;
    snapshot_data.execution_platform = opened->execution_platform.empty()
                                           ? StrCat("hlowb-", options.platform)
                                           : opened->execution_platform;
    EncodeOptions snapshot_options;
    snapshot_options.snapshot = &snapshot_data;
    absl::StatusOr<std::string> snapshot =
        EncodeHloFile(module, HloOutputFormat::kHloSnapshot, snapshot_options);
    IterationLiterals lit;
    lit.arguments = *arguments;
    if (it != nullptr) {
      lit.result = it->result;
      lit.reference_result = it->reference_result;
    }
    absl::StatusOr<std::string> literals = EncodeRunHloModuleLiterals({lit}, /*text=*/false);
    for (const absl::Status& st : {snapshot.status(), literals.status()}) {
      if (!st.ok()) {
        std::cerr << "error: " << st.message() << "\n";
        return kInputError;
      }
    }
    if (!Write(dir / "snapshot.hlo_snapshot.pb", *snapshot) ||
        !Write(dir / "arguments.literals.pb", *literals)) {
      return kInputError;
    }
    files.push_back("snapshot.hlo_snapshot.pb");
    files.push_back("arguments.literals.pb");
  }

  std::string flags;
  for (const std::string& f : replay_flags) StrAppend(&flags, f, "\n");
  if (!Write(dir / "flags.txt", flags)) return kInputError;

  std::ostringstream platform;
  platform << "hlowb " << HLOWB_VERSION << "\n"
           << "os: " << OsDescription() << "\n"
           << "cpu: " << CpuModel() << " (" << std::thread::hardware_concurrency()
           << " logical cores)\n"
           << "replay platform: " << options.platform << "\n"
           << "reference platform: "
           << (options.reference_platform.empty() ? "none" : options.reference_platform) << "\n"
           << "module compiled for: "
           << (opened->execution_platform.empty() ? "unknown" : opened->execution_platform) << "\n";
  if (!Write(dir / "platform.txt", platform.str())) return kInputError;
  files.insert(files.end(), {"flags.txt", "platform.txt", "report.txt", "README.md"});

  std::ostringstream report;
  report << "module " << module.name() << " from "
         << std::filesystem::path(args.positional[0]).filename().string() << "\n"
         << "arguments from "
         << (argument_source.empty() ? "nowhere (the replay failed before "
                                       "making them)"
                                     : argument_source)
         << "\n";
  if (run.ok()) {
    for (const std::string& w : run->warnings) report << "warning: " << w << "\n";
  }
  for (const std::string& w : warnings) report << "proto: " << w << "\n";
  if (!run.ok()) {
    report << "\n## replay\nFAILED: " << run.status().message() << "\n";
  } else if (it->comparison) {
    report << "\n## comparison with " << it->compared_against << "\n" << it->comparison->ToString();
  } else {
    report << "\n## comparison\nnone (no reference platform, and the input carries no result)\n";
  }
  if (nonfinite) {
    report << "\n## NaN/Inf\n";
    if (nonfinite->ok()) {
      report << (*nonfinite)->ToString();
    } else {
      report << "the search failed: " << nonfinite->status().message() << "\n";
    }
  }
  std::vector<std::string> notes = (*dispatcher)->Notes();
  if (!notes.empty()) {
    report << "\n## custom calls\n";
    for (const std::string& n : notes) report << n << "\n";
  }
  if (!Write(dir / "report.txt", report.str())) return kInputError;

  std::string flag_args;
  for (const std::string& f : replay_flags) {
    if (f.rfind("--input_literals_file", 0) == 0 || f == "--force_fake_data") continue;
    StrAppend(&flag_args, " ", ShellQuote(f));
  }
  const std::string test_platform = XlaPlatform(
      opened->execution_platform.empty() ? options.platform : opened->execution_platform);
  const std::string optimized = module.config().is_scheduled ? " --run_test_hlo_passes=false" : "";
  const std::string bounds =
      StrCat(" --abs_error_bound=", options.bounds.abs, " --rel_error_bound=", options.bounds.rel);
  std::ostringstream readme;
  readme << "# Bug report: module " << module.name() << "\n\n"
         << "Made by `hlowb bundle` (hlowb " << HLOWB_VERSION << ").\n\n"
         << "| file | what |\n|---|---|\n"
         << "| module.hlo | the module as HLO text |\n"
         << "| module.hlo.pb | the module as an HloProto |\n";
  if (arguments) {
    readme << "| snapshot.hlo_snapshot.pb | HloSnapshot: module, the arguments used"
           << (it != nullptr ? ", the result" : "") << " |\n"
           << "| arguments.literals.pb | the same arguments as a run_hlo_module literals file |\n";
  }
  readme << "| flags.txt | the replay flags |\n"
         << "| platform.txt | hlowb version, OS, CPU, platforms |\n"
         << "| report.txt | " << (run.ok() ? "comparison and NaN/Inf report" : "the failure")
         << " |\n\n";
  if (arguments) {
    readme << "Arguments came from " << argument_source << ".\n\n"
           << "## Rerun with hlowb\n\n```sh\n"
           << "hlowb replay snapshot.hlo_snapshot.pb" << flag_args << "\n"
           << "hlowb replay snapshot.hlo_snapshot.pb --find_nonfinite\n"
           << "hlowb replay snapshot.hlo_snapshot.pb --isolate_instructions"
           << (options.reference_platform.empty()
                   ? ""
                   : StrCat(" --reference_platform=", options.reference_platform))
           << "\n"
           << "hlowb replay module.hlo --input_literals_file=arguments.literals.pb" << flag_args
           << "\n```\n\n"
           << "## Rerun with XLA's run_hlo_module\n\n```sh\n"
           << "run_hlo_module --platform=" << test_platform << " --reference_platform=Interpreter"
           << optimized << " --input_format=hlo --input_literals_file=arguments.literals.pb"
           << bounds << " module.hlo\n"
           << "run_hlo_module --platform=" << test_platform << optimized
           << " --input_format=pb snapshot.hlo_snapshot.pb\n```\n";
  } else {
    readme << "The replay failed before it made arguments; rerun with fake data.\n\n"
           << "## Rerun with hlowb\n\n```sh\n"
           << "hlowb replay module.hlo" << flag_args << "\n```\n\n"
           << "## Rerun with XLA's run_hlo_module\n\n```sh\n"
           << "run_hlo_module --platform=" << test_platform << " --reference_platform=Interpreter"
           << optimized << " --input_format=hlo" << bounds << " module.hlo\n```\n";
  }
  if (!Write(dir / "README.md", readme.str())) return kInputError;

  std::cout << "bundle written to " << dir.string() << ":";
  for (const std::string& f : files) std::cout << " " << f;
  std::cout << "\n";
  if (!run.ok()) {
    std::cout << "the replay failed: " << run.status().message() << "\n";
  } else if (it->comparison) {
    std::cout << "comparison with " << it->compared_against << ": " << it->comparison->ToString();
  }
  if (nonfinite && nonfinite->ok() && (*nonfinite)->found) std::cout << (*nonfinite)->ToString();
  return kOk;
}

}  // namespace hlowb::cli
