// `hlowb passes DIR --module=ID|NAME [--format=text|json]`: the pass timeline.
#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/timeline.h"

namespace hlowb::cli {

int RunPasses(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"module", "format"}, &args, &error) || args.positional.size() != 1 ||
      !args.Has("module")) {
    std::cerr << "hlowb passes: " << (error.empty() ? "expected DIR and --module" : error)
              << "\nusage: hlowb passes DIR --module=ID|NAME [--format=text|json]\n";
    return kUsageError;
  }
  std::string format = args.Get("format", "text");
  if (format != "text" && format != "json") {
    std::cerr << "hlowb passes: --format must be text or json\n";
    return kUsageError;
  }
  DumpIndex index;
  std::vector<DumpState> states;
  std::vector<LoadedState> loaded;
  if (!LoadDumpModule(args.positional[0], args.Get("module"), &index, &states, &loaded)) {
    return kInputError;
  }
  Timeline timeline = BuildTimeline(TimelineInputs(states, loaded));
  std::cout << (format == "json" ? FormatTimelineJson(timeline) : FormatTimelineText(timeline));
  return kOk;
}

}  // namespace hlowb::cli
