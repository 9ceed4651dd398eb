// hlowb: the HLO Workbench command line. `hlowb SUBCOMMAND ...`; see `hlowb help`.
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "app/cli/cli.h"

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
    "  convert IN -o OUT   between HLO text, HloProto, HloModuleProto, text proto and\n"
    "                 HloSnapshot (also .gz) [--format=hlo|hlo-short|pb|module-pb|pbtxt|\n"
    "                 snapshot] (default: from OUT's extension) [--strict-xla]\n"
    "  literal FILE   a snapshot's arguments and result (or a literal file) as HLO literals\n"
    "                 [--summary: min/max/mean/NaN/Inf per tensor]\n"
    "  replay FILE... run modules like XLA's run_hlo_module on the reference evaluator\n"
    "                 [--platform=interpreter] [--reference_platform=P] [--force_fake_data]\n"
    "                 [--iterations=N] [--seed=S] [--abs_error_bound=X] [--rel_error_bound=X]\n"
    "                 [--input_literals_file=F] [--output_literals_file=F] [--print_literals]\n"
    "  help           this text\n"
    "\n"
    "Every command that reads HLO text accepts --split-input-file (parts separated by\n"
    "`// -----` lines). FILE may be - for standard input.\n"
    "Exit codes: 0 success, 1 input error, 2 usage error.\n";

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
  if (command == "convert") return hlowb::cli::RunConvert(rest);
  if (command == "literal") return hlowb::cli::RunLiteral(rest);
  if (command == "replay") return hlowb::cli::RunReplay(rest);
  std::cerr << "hlowb: unknown command '" << command << "'\n\n" << kUsage;
  return hlowb::cli::kUsageError;
}
