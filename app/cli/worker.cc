// `hlowb worker`: the replay worker process the app's replay controller starts. It speaks
// length-delimited protobuf messages (replay/worker/worker.proto) on standard input and output
// and is not meant to be run by hand. --test_abort_after_instructions=N makes it abort mid-run
// (for tests of the controller's crash handling).
#include <unistd.h>

#include <iostream>

#include "app/cli/cli.h"
#include "plugins/api/custom_call_registry.h"
#include "plugins/builtin/builtin_plugins.h"
#include "replay/worker/worker.h"

namespace hlowb::cli {

int RunWorker(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"test_abort_after_instructions", "max_value_bytes"}, &args, &error) ||
      !args.positional.empty()) {
    std::cerr << "usage: hlowb worker [--max_value_bytes=N] [--test_abort_after_instructions=N]"
                 "  (speaks the worker protocol on stdin/stdout)\n";
    return kUsageError;
  }
  worker::WorkerOptions options;
  if (args.Has("max_value_bytes")) {
    try {
      options.max_value_bytes = std::stoull(args.Get("max_value_bytes"));
    } catch (...) {
      std::cerr << "hlowb worker: --max_value_bytes must be a number\n";
      return kUsageError;
    }
  }
  if (args.Has("test_abort_after_instructions")) {
    try {
      options.abort_after_instructions = std::stoll(args.Get("test_abort_after_instructions"));
    } catch (...) {
      std::cerr << "hlowb worker: --test_abort_after_instructions must be a number\n";
      return kUsageError;
    }
  }
  CustomCallRegistry registry;
  if (absl::Status st = RegisterBuiltinPlugins(&registry); !st.ok()) {
    std::cerr << "hlowb worker: " << st.message() << "\n";
    return kInputError;
  }
  options.custom_call = CustomCallDispatcher::Create(std::move(registry), {})->AsFunction();
  return worker::RunWorker(STDIN_FILENO, STDOUT_FILENO, options);
}

}  // namespace hlowb::cli
