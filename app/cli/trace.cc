// `hlowb trace DIR --module=M --instruction=NAME [--step=S]`: provenance of one instruction.
#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/timeline.h"

namespace hlowb::cli {

int RunTrace(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"module", "instruction", "step"}, &args, &error) ||
      args.positional.size() != 1 || !args.Has("module") || !args.Has("instruction")) {
    std::cerr << "hlowb trace: " << (error.empty() ? "expected DIR, --module and --instruction" : error)
              << "\nusage: hlowb trace DIR --module=M --instruction=NAME [--step=S]\n"
                 "  S: step number, before (default) or after\n";
    return kUsageError;
  }
  DumpIndex index;
  std::vector<DumpState> states;
  std::vector<LoadedState> loaded;
  if (!LoadDumpModule(args.positional[0], args.Get("module"), &index, &states, &loaded)) {
    return kInputError;
  }
  std::string step = args.Get("step", "before");
  int start = -1;
  for (size_t i = 0; i < states.size(); ++i) {
    const DumpState& s = states[i];
    if ((step == "before" && s.stage == StageKind::kBeforeOptimizations) ||
        (step == "after" && s.stage == StageKind::kAfterOptimizations) ||
        (s.stage == StageKind::kPassStep && std::to_string(s.step) == step) ||
        (s.stage == StageKind::kPassStep && s.label.substr(0, 4) == step)) {
      start = static_cast<int>(i);
      if (step != "after") break;
    }
  }
  if (start < 0) {
    std::cerr << "error: no state '" << step << "' for module " << args.Get("module") << "\n";
    return kInputError;
  }
  std::vector<ProvenanceStep> steps =
      TraceInstruction(TimelineInputs(states, loaded), start, args.Get("instruction"), &error);
  if (!error.empty()) {
    std::cerr << "error: " << error << "\n";
    return kInputError;
  }
  std::cout << FormatProvenanceText(steps);
  return kOk;
}

}  // namespace hlowb::cli
