// `hlowb print FILE [--format=long|short] [-o OUT] [--split-input-file]`
#include <iostream>

#include "core/support/strings.h"
#include "app/cli/cli.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb::cli {

int RunPrint(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"split-input-file"}, {"format", "o"}, &args, &error) ||
      args.positional.size() != 1) {
    std::cerr << "hlowb print: " << (error.empty() ? "expected exactly one FILE" : error)
              << "\nusage: hlowb print FILE [--format=long|short] [-o OUT] [--split-input-file]\n";
    return kUsageError;
  }
  std::string format = args.Get("format", "long");
  PrintOptions options;
  if (format == "long") {
    options = PrintOptions::Long();
  } else if (format == "short") {
    options = PrintOptions::Short();
  } else {
    std::cerr << "hlowb print: --format must be long or short, not '" << format << "'\n";
    return kUsageError;
  }
  std::string text;
  std::vector<LoadedModule> modules;
  if (!LoadModules(args.positional[0], args.Has("split-input-file"), &text, &modules)) {
    return kInputError;
  }
  std::string out;
  for (size_t i = 0; i < modules.size(); ++i) {
    if (i) out += "// -----\n\n";
    AppendModule(*modules[i].module, options, &out);
  }
  absl::Status st = WriteStringToFile(args.Get("o", "-"), out);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return kInputError;
  }
  return kOk;
}

}  // namespace hlowb::cli
