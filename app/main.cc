// hlowb: the HLO Workbench command line. `hlowb SUBCOMMAND ...`; see `hlowb help`.
#include <sys/stat.h>

#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#ifdef HLOWB_HAVE_GUI
#include "app/gui/gui_main.h"
#endif

namespace {

constexpr char kUsage[] =
    "usage: hlowb <command> [options]\n"
    "\n"
    "commands:\n"
    "  info FILE      module name, header attributes, computations, instruction counts,\n"
    "                 parameter and root shapes, layouts/schedule/sharding presence\n"
    "  print FILE     print HLO text [--format=long|short] [-o OUT]\n"
    "  verify FILE    check shapes and attributes of every instruction\n"
    "  index DIR      modules, states, artifacts and unrecognised files of a dump directory\n"
    "                 [--format=text|json]\n"
    "  passes DIR --module=ID|NAME   pass timeline: which passes changed the module\n"
    "                 [--format=text|json]\n"
    "  diff A B       structural diff of two states; A and B are files or DIR:MODULE:STEP\n"
    "                 (STEP = number, before, after) [--format=text|json|unified]\n"
    "  trace DIR --module=M --instruction=NAME [--step=S]   where an instruction came from\n"
    "                 and where it went\n"
    "  memory REF [REF2]   live bytes over the schedule, the peak and the buffers live there,\n"
    "                 totals by allocation kind; REF = XLA's *-buffer-assignment.txt, an HLO\n"
    "                 file (hlowb's own assignment) or DIR:MODULE[:STEP]; two REFs compare\n"
    "                 [--format=text|json] [--top=N] [--pipeline=none|cpu|gpu]\n"
    "  convert IN -o OUT   between HLO text, HloProto, HloModuleProto, text proto and\n"
    "                 HloSnapshot (also .gz) [--format=hlo|hlo-short|pb|module-pb|pbtxt|\n"
    "                 snapshot] (default: from OUT's extension) [--strict-xla]\n"
    "  literal FILE   a snapshot's arguments and result (or a literal file) as HLO literals\n"
    "                 [--summary: min/max/mean/NaN/Inf per tensor]\n"
    "  replay FILE... run modules like XLA's run_hlo_module on the reference evaluator\n"
    "                 [--platform=interpreter] [--reference_platform=P] [--force_fake_data]\n"
    "                 [--iterations=N] [--seed=S] [--abs_error_bound=X] [--rel_error_bound=X]\n"
    "                 [--input_literals_file=F] [--output_literals_file=F] [--print_literals]\n"
    "                 [--find_nonfinite] [--isolate_instructions] [--custom_call_fallback=M]\n"
    "                 [--num_replicas=N] [--num_partitions=N] [--hlo_argument_mode=M]\n"
    "                 [--host_transfers=error|zeros|fake];\n"
    "                 DIR --module=M --bisect_passes: first pass that changes the outputs\n"
    "  extract FILE --instruction=NAME [--height=N]   a module rooted at one instruction\n"
    "  bundle FILE [replay flags] -o DIR   a bug-report folder to rerun elsewhere\n"
    "  reduce FILE --until=mismatch|nonfinite|crash|error [replay flags] -o OUT\n"
    "                 shrink a failing module while it fails the same way [--time_limit=S]\n"
    "  opt FILE       run the embedded compiler's HLO pipeline [--platform=cpu|gpu]\n"
    "                 [--passes=p1,p2,...] [--list-passes] [--stage=hlo|buffer-assignment|\n"
    "                 memory-usage-report] [--pass-stats] [-o OUT] [--xla_dump_to=DIR]\n"
    "                 [--xla_dump_hlo_pass_re=RE] [--xla_disable_hlo_passes=a,b] [--xla_...]\n"
    "  worker         the app's replay worker process (protobuf messages on stdin/stdout)\n"
    "  capture [-o DIR] [--pass-by-pass] [--snapshots] [--module-re=RE] [--no-open] -- COMMAND\n"
    "                 run a JAX/XLA program with XLA's dump flags, index the dump, open it\n"
    "  gui [PATH]     the desktop window on a file or dump directory [--module=M] [--step=S]\n"
    "                 [--select=NAME] [--screenshot=FILE: render, write a PNG and exit]\n"
    "  PATH           with no command: `gui PATH`\n"
    "  help           this text\n"
    "\n"
    "Every command that reads HLO text accepts --split-input-file (parts separated by\n"
    "`// -----` lines). FILE may be - for standard input.\n"
    "Exit codes: 0 success, 1 input error, 2 usage error.\n";

int RunGuiCommand(const char* argv0, const std::vector<std::string>& args) {
#ifdef HLOWB_HAVE_GUI
  return hlowb::gui::RunGui(argv0, args);
#else
  (void)argv0;
  (void)args;
  std::cerr << "hlowb: this build has no desktop window (configure with HLOWB_BUILD_GUI=ON)\n";
  return hlowb::cli::kUsageError;
#endif
}

bool IsExistingPath(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << kUsage;
    return hlowb::cli::kUsageError;
  }
  std::string command = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (command == "help" || command == "--help" || command == "-h") {
    std::cout << kUsage;
    return hlowb::cli::kOk;
  }
  if (command == "--version") {
    std::cout << "hlowb 0.1.0\n";
    return hlowb::cli::kOk;
  }
  if (command == "info") return hlowb::cli::RunInfo(rest);
  if (command == "print") return hlowb::cli::RunPrint(rest);
  if (command == "verify") return hlowb::cli::RunVerify(rest);
  if (command == "index") return hlowb::cli::RunIndex(rest);
  if (command == "passes") return hlowb::cli::RunPasses(rest);
  if (command == "diff") return hlowb::cli::RunDiff(rest);
  if (command == "trace") return hlowb::cli::RunTrace(rest);
  if (command == "memory") return hlowb::cli::RunMemory(rest);
  if (command == "convert") return hlowb::cli::RunConvert(rest);
  if (command == "literal") return hlowb::cli::RunLiteral(rest);
  if (command == "replay") return hlowb::cli::RunReplay(rest);
  if (command == "extract") return hlowb::cli::RunExtract(rest);
  if (command == "bundle") return hlowb::cli::RunBundle(rest);
  if (command == "reduce") return hlowb::cli::RunReduce(rest);
  if (command == "opt") return hlowb::cli::RunOpt(rest);
  if (command == "worker") return hlowb::cli::RunWorker(rest);
  if (command == "capture") return hlowb::cli::RunCapture(rest);
  if (command == "gui") return RunGuiCommand(argv[0], rest);
  // `hlowb PATH [options]`: a path where a command would be opens the window on it.
  if (IsExistingPath(command)) {
    std::vector<std::string> args(argv + 1, argv + argc);
    return RunGuiCommand(argv[0], args);
  }
  std::cerr << "hlowb: unknown command '" << command << "'\n\n" << kUsage;
  return hlowb::cli::kUsageError;
}
