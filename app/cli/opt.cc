// `hlowb opt FILE [--platform=cpu|gpu] [--passes=p1,p2,...] [--list-passes] [--list-stages]
//  [--stage=hlo|buffer-assignment|memory-usage-report|llvm|llvm-no-opt|ptx] [--cuda_arch=sm_NN]
//  [--format=long|short] [-o OUT]
//  [--split-input-file] [--pass-stats] [--xla_* flags]`
// Runs the embedded compiler's HLO pipeline (or a list of passes) on a module, with hlo-opt's
// flag names where they overlap. XLA_FLAGS is read first; --xla_* flags on the command line
// override it (so --xla_dump_to, --xla_dump_hlo_pass_re, --xla_disable_hlo_passes, ... work).
#include <cstdlib>
#include <iostream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "app/cli/cli.h"
#include "core/passes/pipelines.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/printer.h"
#include "app/cli/replay_tools.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/kernel_io.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/evaluator/constant_evaluator.h"

namespace hlowb::cli {

namespace {

constexpr char kUsage[] =
    "usage: hlowb opt FILE [--platform=cpu|gpu] [--passes=p1,p2,...] [--list-passes]\n"
    "                 [--list-stages] [--stage=hlo|buffer-assignment|memory-usage-report|\n"
    "                 llvm|llvm-no-opt|ptx] [--cuda_arch=sm_NN]\n"
    "                 [--format=long|short] [-o OUT] [--split-input-file] [--pass-stats]\n"
    "                 [--xla_dump_to=DIR] [--xla_dump_hlo_pass_re=RE] [--xla_... flags]\n"
    "--stage=llvm and llvm-no-opt (with --platform=cpu) print the cpu platform's kernels as LLVM\n"
    "IR; --stage=ptx (with --platform=gpu) prints the cuda platform's kernels as PTX for\n"
    "--cuda_arch (default sm_80; no GPU needed).\n";

void PrintPassStats(const std::string& label, const CompileResult& result) {
  std::cerr << label << ": " << result.records.size() << " pass runs, "
            << absl::StrFormat("%.1f", result.pass_seconds * 1000) << " ms in passes, "
            << absl::StrFormat("%.1f", result.total_seconds * 1000) << " ms in all\n";
  for (const PassRecord& r : result.records) {
    std::cerr << absl::StrFormat("  %-40s %-36s %-8s %8.2f ms %8d instructions\n",
                                 r.pipeline, r.pass, r.changed ? "changed" : "-",
                                 r.seconds * 1000, r.instructions_after);
  }
}

}  // namespace

int RunOpt(const std::vector<std::string>& argv) {
  // --xla_* flags are not known to ParseArgs: take them out first.
  std::vector<std::string> rest;
  std::vector<std::string> xla_flags;
  for (const std::string& a : argv) {
    if (a.rfind("--xla_", 0) == 0) {
      xla_flags.push_back(a);
    } else {
      rest.push_back(a);
    }
  }
  Args args;
  std::string error;
  if (!ParseArgs(rest, {"list-passes", "list-stages", "split-input-file", "pass-stats"},
                 {"platform", "passes", "stage", "format", "o", "cuda_arch"}, &args, &error)) {
    std::cerr << "hlowb opt: " << error << "\n" << kUsage;
    return kUsageError;
  }
  const std::string platform = args.Get("platform", "cpu");
  if (platform != "cpu" && platform != "gpu") {
    std::cerr << "hlowb opt: --platform must be cpu or gpu, not '" << platform << "'\n";
    return kUsageError;
  }
  if (args.Has("list-passes")) {
    for (const std::string& n : RegisteredPassNames()) std::cout << n << "\n";
    return kOk;
  }
  if (args.Has("list-stages")) {
    std::cout << "hlo\nbuffer-assignment\nmemory-usage-report\nllvm\nllvm-no-opt\nptx\n";
    return kOk;
  }
  if (args.positional.size() != 1) {
    std::cerr << "hlowb opt: expected exactly one FILE\n" << kUsage;
    return kUsageError;
  }
  const std::string stage = args.Get("stage", "hlo");
  const bool llvm_stage = stage == "llvm" || stage == "llvm-no-opt";
  const bool ptx_stage = stage == "ptx";
  if (stage != "hlo" && stage != "buffer-assignment" && stage != "memory-usage-report" &&
      !llvm_stage && !ptx_stage) {
    std::cerr << "hlowb opt: --stage must be hlo, buffer-assignment, memory-usage-report, llvm, "
                 "llvm-no-opt or ptx, not '"
              << stage << "'\n";
    return kUsageError;
  }
  if (llvm_stage && platform != "cpu") {
    std::cerr << "hlowb opt: --stage=" << stage << " needs --platform=cpu\n";
    return kUsageError;
  }
  if (ptx_stage && platform != "gpu") {
    std::cerr << "hlowb opt: --stage=ptx needs --platform=gpu\n";
    return kUsageError;
  }
  if (args.Has("cuda_arch") && !ptx_stage) {
    std::cerr << "hlowb opt: --cuda_arch goes with --stage=ptx\n";
    return kUsageError;
  }
  const std::string cuda_arch = args.Get("cuda_arch", "sm_80");
  if (absl::Status st = CheckCudaArch(cuda_arch); !st.ok()) {
    std::cerr << "hlowb opt: " << st.message() << "\n";
    return kUsageError;
  }
  const std::string format = args.Get("format", "long");
  if (format != "long" && format != "short") {
    std::cerr << "hlowb opt: --format must be long or short, not '" << format << "'\n";
    return kUsageError;
  }

  CompileOptions options;
  options.platform = platform;
  options.evaluator = InterpreterConstantEvaluator();
  // The llvm and ptx stages show the kernels the cpu and cuda platforms run, so the module is
  // compiled as that platform compiles it.
  if (llvm_stage || ptx_stage) SkipPassesTheRuntimeDoesNotNeed(&options.pass_options);
  if (const char* env = std::getenv("XLA_FLAGS")) {
    std::vector<std::string> unknown;
    absl::Status st =
        ApplyXlaFlags(env, &options.dump_options, &options.pass_options, &unknown);
    if (!st.ok()) {
      std::cerr << "hlowb opt: XLA_FLAGS: " << st.message() << "\n";
      return kUsageError;
    }
    for (const std::string& u : unknown) {
      std::cerr << "warning: XLA_FLAGS: " << u << " is not used by hlowb opt\n";
    }
  }
  for (const std::string& f : xla_flags) {
    bool known = false;
    absl::Status st = ApplyXlaFlag(f, &options.dump_options, &options.pass_options, &known);
    if (!st.ok()) {
      std::cerr << "hlowb opt: " << st.message() << "\n";
      return kUsageError;
    }
    if (!known) std::cerr << "warning: " << f << " is not used by hlowb opt\n";
  }
  if (args.Has("passes")) {
    for (absl::string_view p : absl::StrSplit(args.Get("passes"), ',', absl::SkipEmpty())) {
      options.passes.push_back(std::string(p));
    }
    for (const std::string& p : options.passes) {
      if (!MakePassByName(p, platform).ok()) {
        std::cerr << "hlowb opt: unknown pass '" << p
                  << "' (hlowb opt --list-passes lists them)\n";
        return kUsageError;
      }
    }
    options.assign_buffers = stage != "hlo";
  }

  std::string text;
  std::vector<LoadedModule> modules;
  if (!LoadModules(args.positional[0], args.Has("split-input-file"), &text, &modules)) {
    return kInputError;
  }
  PrintOptions print = format == "short" ? PrintOptions::Short() : PrintOptions::Long();
  std::string out;
  bool ok = true;
  for (size_t i = 0; i < modules.size(); ++i) {
    LoadedModule& m = modules[i];
    absl::StatusOr<CompileResult> result = CompileModule(m.module.get(), options);
    if (!result.ok()) {
      std::cerr << m.label << ": error: " << result.status().message() << "\n";
      ok = false;
      continue;
    }
    if (args.Has("pass-stats")) PrintPassStats(m.label, *result);
    if (i) out += "// -----\n\n";
    if (llvm_stage) {
      absl::StatusOr<std::string> ir = CpuKernelIr(*m.module, stage == "llvm");
      if (!ir.ok()) {
        std::cerr << m.label << ": error: " << ir.status().message() << "\n";
        ok = false;
        continue;
      }
      out += *ir;
    } else if (ptx_stage) {
      absl::StatusOr<std::string> ptx = CudaKernelPtx(*m.module, cuda_arch);
      if (!ptx.ok()) {
        std::cerr << m.label << ": error: " << ptx.status().message() << "\n";
        ok = false;
        continue;
      }
      out += *ptx;
    } else if (stage == "hlo") {
      AppendModule(*m.module, print, &out);
    } else if (stage == "buffer-assignment") {
      out += result->buffer_assignment_text;
    } else {
      out += result->memory_usage_report;
    }
  }
  if (!out.empty()) {
    absl::Status st = WriteStringToFile(args.Get("o", "-"), out);
    if (!st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return kInputError;
    }
  }
  return ok ? kOk : kInputError;
}

}  // namespace hlowb::cli
