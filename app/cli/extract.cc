// `hlowb extract FILE --instruction=NAME [--height=N] [-o OUT] [--format=long|short]`: prints a
// new module rooted at one instruction, as XLA's hlo-extractor does: its operands up to N
// levels down are kept, deeper values become parameters (N < 0 or no --height: everything).
// The result is verified; verification errors are printed and make the exit code 1.
#include "replay/compare/extract.h"

#include <iostream>

#include "app/cli/cli.h"
#include "core/analysis/verifier.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/printer.h"

namespace hlowb::cli {

int RunExtract(const std::vector<std::string>& argv) {
  constexpr char kUsage[] =
      "usage: hlowb extract FILE --instruction=NAME [--height=N] [-o OUT] "
      "[--format=long|short]\n";
  Args args;
  std::string error;
  if (!ParseArgs(argv, {}, {"instruction", "height", "o", "format"}, &args, &error) ||
      args.positional.size() != 1 || !args.Has("instruction")) {
    std::cerr << "hlowb extract: " << (error.empty() ? "expected FILE and --instruction" : error)
              << "\n"
              << kUsage;
    return kUsageError;
  }
  int height = -1;
  if (args.Has("height")) {
    try {
      size_t used = 0;
      height = std::stoi(args.Get("height"), &used);
      if (used != args.Get("height").size()) throw 0;
    } catch (...) {
      std::cerr << "hlowb extract: --height must be an integer\n" << kUsage;
      return kUsageError;
    }
  }
  const std::string format = args.Get("format", "long");
  if (format != "long" && format != "short") {
    std::cerr << "hlowb extract: --format must be long or short\n" << kUsage;
    return kUsageError;
  }
  absl::StatusOr<OpenedHloFile> opened = OpenHloFile(args.positional[0]);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().message() << "\n";
    return kInputError;
  }
  if (opened->modules.empty()) {
    std::cerr << "error: " << args.positional[0] << " holds no module\n";
    return kInputError;
  }
  const Module& module = *opened->modules[0].module;
  absl::StatusOr<const Instruction*> root = FindInstructionByName(module, args.Get("instruction"));
  if (!root.ok()) {
    std::cerr << "error: " << root.status().message() << "\n";
    return kInputError;
  }
  absl::StatusOr<ExtractedModule> piece = ExtractModule(module, **root, height);
  if (!piece.ok()) {
    std::cerr << "error: " << piece.status().message() << "\n";
    return kInputError;
  }
  std::string text =
      PrintModule(*piece->module, format == "short" ? PrintOptions::Short() : PrintOptions::Long());
  if (args.Has("o") && args.Get("o") != "-") {
    if (absl::Status st = WriteStringToFile(args.Get("o"), text); !st.ok()) {
      std::cerr << "error: " << st.message() << "\n";
      return kInputError;
    }
  } else {
    std::cout << text;
  }
  std::vector<VerifierDiagnostic> diags = VerifyModule(*piece->module);
  int errors = CountErrors(diags);
  for (const VerifierDiagnostic& d : diags) {
    if (d.severity == VerifierDiagnostic::Severity::kError) {
      std::cerr << "error: extracted module: " << d.ToString() << "\n";
    }
  }
  return errors > 0 ? kInputError : kOk;
}

}  // namespace hlowb::cli
