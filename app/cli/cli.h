// Shared pieces of the hlowb command line: argument parsing, loading inputs, exit codes.
// Each subcommand lives in its own file and exposes one Run function.
#ifndef HLOWB_APP_CLI_CLI_H_
#define HLOWB_APP_CLI_CLI_H_

#include <memory>
#include <string>
#include <vector>

#include "core/dump/dump_index.h"
#include "core/dump/state_loader.h"
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

// Opens one module from any file the CLI accepts.
ModuleOpener CliModuleOpener();

// Resolves a module state: a file path, or DIR:MODULE:STEP where STEP is a step number,
// "before" or "after" (the last after_optimizations state). On failure prints why.
struct ResolvedState {
  std::string label;
  std::shared_ptr<const Module> module;
};
bool ResolveState(const std::string& ref, ResolvedState* out);

// The states of MODULE (id or name) in DIR, opened in parallel with progress on stderr.
bool LoadDumpModule(const std::string& dir, const std::string& module, DumpIndex* index,
                    std::vector<DumpState>* states, std::vector<LoadedState>* loaded);

int RunInfo(const std::vector<std::string>& argv);
int RunIndex(const std::vector<std::string>& argv);
int RunPasses(const std::vector<std::string>& argv);
int RunDiff(const std::vector<std::string>& argv);
int RunTrace(const std::vector<std::string>& argv);
int RunMemory(const std::vector<std::string>& argv);
int RunPrint(const std::vector<std::string>& argv);
int RunVerify(const std::vector<std::string>& argv);
int RunConvert(const std::vector<std::string>& argv);
int RunLiteral(const std::vector<std::string>& argv);
int RunReplay(const std::vector<std::string>& argv);
int RunExtract(const std::vector<std::string>& argv);
int RunBundle(const std::vector<std::string>& argv);
int RunReduce(const std::vector<std::string>& argv);
int RunOpt(const std::vector<std::string>& argv);
int RunWorker(const std::vector<std::string>& argv);
int RunCapture(const std::vector<std::string>& argv);

}  // namespace hlowb::cli

#endif  // HLOWB_APP_CLI_CLI_H_
