// Shared pieces of the hlowb command line: argument parsing, loading inputs, exit codes.
// Each subcommand lives in its own file and exposes one Run function.
#ifndef HLOWB_APP_CLI_CLI_H_
#define HLOWB_APP_CLI_CLI_H_

#include <memory>
#include <string>
#include <vector>

#include "core/ir/module.h"

namespace hlowb::cli {

enum ExitCode { kOk = 0, kInputError = 1, kUsageError = 2 };

// Parsed `--name=value`, `--flag`, `-o VALUE` options and positional arguments.
struct Args {
  std::vector<std::string> positional;
  std::vector<std::pair<std::string, std::string>> options;  // name without dashes
  bool Has(const std::string& name) const;
  std::string Get(const std::string& name, const std::string& fallback = "") const;
};

// Parses argv after the subcommand. `value_options` take a value in the next argument when not
// written as --name=value. Unknown options are reported as usage errors.
bool ParseArgs(const std::vector<std::string>& argv, const std::vector<std::string>& known_flags,
               const std::vector<std::string>& value_options, Args* args, std::string* error);

struct LoadedModule {
  std::string label;  // file name, plus "#N" for split parts
  std::unique_ptr<Module> module;
};

// Reads FILE ("-" = stdin) and parses it (every `// -----` part when split is true). On error
// prints the diagnostic to stderr and returns false.
bool LoadModules(const std::string& path, bool split, std::string* text,
                 std::vector<LoadedModule>* modules);

int RunInfo(const std::vector<std::string>& argv);
int RunPrint(const std::vector<std::string>& argv);
int RunVerify(const std::vector<std::string>& argv);

}  // namespace hlowb::cli

#endif  // HLOWB_APP_CLI_CLI_H_
