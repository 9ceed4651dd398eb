// `hlowb passes DIR --module=ID|NAME [--format=text|json]`: the pass timeline.
#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/timeline.h"

namespace hlowb::cli {

std::vector<TimelineInput> TimelineInputs(const std::vector<DumpState>& states,
                                          const std::vector<LoadedState>& loaded) {
  std::vector<TimelineInput> inputs;
  for (size_t i = 0; i < states.size(); ++i) {
    TimelineInput in;
    in.label = states[i].label;
    in.step = states[i].step;
    in.pipeline = states[i].pipeline;
    in.pass = states[i].pass;
    in.is_pass = states[i].stage == StageKind::kPassStep;
    in.module = loaded[i].module.get();
    if (!loaded[i].status.ok()) in.error = std::string(loaded[i].status.message());
    inputs.push_back(std::move(in));
  }
  return inputs;
}

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
