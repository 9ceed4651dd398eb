// `hlowb diff A B [--format=text|json|unified]`: structural diff of two module states.
#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/diff.h"

namespace hlowb::cli {

int RunDiff(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"all"}, {"format"}, &args, &error) || args.positional.size() != 2) {
    std::cerr << "hlowb diff: " << (error.empty() ? "expected A and B" : error)
              << "\nusage: hlowb diff A B [--format=text|json|unified] [--all]\n"
                 "  A, B: HLO files or DIR:MODULE:STEP (STEP = number, before, after)\n";
    return kUsageError;
  }
  std::string format = args.Get("format", "text");
  if (format != "text" && format != "json" && format != "unified") {
    std::cerr << "hlowb diff: --format must be text, json or unified\n";
    return kUsageError;
  }
  ResolvedState a, b;
  if (!ResolveState(args.positional[0], &a) || !ResolveState(args.positional[1], &b)) {
    return kInputError;
  }
  ModuleDiff diff = DiffModules(*a.module, *b.module);
  if (format == "json") {
    std::cout << FormatDiffJson(diff);
  } else if (format == "unified") {
    std::cout << FormatUnifiedDiff(diff, a.label, b.label);
  } else {
    std::cout << FormatDiffText(diff, args.Has("all"));
  }
  return kOk;
}

}  // namespace hlowb::cli
