// `hlowb print FILE [--format=auto|long|dump|short|canonical|fingerprint] [-o OUT] [--split-input-file]`
// By default (auto) HLO text comes back in the style it was written in (long or short form,
// with or without operand shapes), so a file XLA wrote re-prints as XLA wrote it; protos print
// in the long form. `dump` is the style of XLA's dumps today (no operand shapes).
#include <iostream>

#include "core/support/strings.h"
#include "app/cli/cli.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb::cli {

int RunPrint(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"split-input-file"}, {"format", "o"}, &args, &error) ||
      args.positional.size() != 1) {
    std::cerr << "hlowb print: " << (error.empty() ? "expected exactly one FILE" : error)
              << "\nusage: hlowb print FILE [--format=auto|long|dump|short|canonical|fingerprint]"
                 " [-o OUT] [--split-input-file]\n";
    return kUsageError;
  }
  const std::string format = args.Get("format", "auto");
  PrintOptions options;
  if (format == "long") {
    options = PrintOptions::Long();
  } else if (format == "short") {
    options = PrintOptions::Short();
  } else if (format == "canonical") {
    options = PrintOptions::CanonicalForm();
  } else if (format == "fingerprint") {
    options = PrintOptions::FingerprintForm();
  } else if (format == "dump") {
    options = PrintOptions::Dump();
  } else if (format != "auto") {
    std::cerr << "hlowb print: --format must be auto, long, dump, short, canonical or "
                 "fingerprint, not '"
              << format << "'\n";
    return kUsageError;
  }
  std::string text;
  std::vector<LoadedModule> modules;
  if (!LoadModules(args.positional[0], args.Has("split-input-file"), &text, &modules)) {
    return kInputError;
  }
  if (format == "auto" &&
      (args.positional[0] == "-" || LooksLikeHloText(args.positional[0], text))) {
    options = DetectPrintOptions(text);
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
