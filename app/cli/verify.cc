// `hlowb verify FILE [--split-input-file]`: runs the verifier and lists every diagnostic.
#include <iostream>

#include "core/support/strings.h"
#include "app/cli/cli.h"
#include "core/analysis/verifier.h"

namespace hlowb::cli {

int RunVerify(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"split-input-file"}, {}, &args, &error) || args.positional.size() != 1) {
    std::cerr << "hlowb verify: " << (error.empty() ? "expected exactly one FILE" : error)
              << "\nusage: hlowb verify FILE [--split-input-file]\n";
    return kUsageError;
  }
  std::string text;
  std::vector<LoadedModule> modules;
  bool ok = LoadModules(args.positional[0], args.Has("split-input-file"), &text, &modules);
  for (const LoadedModule& m : modules) {
    std::vector<VerifierDiagnostic> diags = VerifyModule(*m.module);
    int errors = CountErrors(diags);
    for (const VerifierDiagnostic& d : diags) {
      std::cerr << m.label << ": " << (d.severity == VerifierDiagnostic::Severity::kError ? "error: " : "")
                << d.ToString() << "\n";
    }
    if (errors > 0) ok = false;
    std::cout << m.label << ": " << (errors ? "FAILED" : "OK") << " (" << errors << " error"
              << (errors == 1 ? "" : "s") << ", " << diags.size() - errors << " warning"
              << (diags.size() - errors == 1 ? "" : "s") << ")\n";
  }
  return ok ? kOk : kInputError;
}

}  // namespace hlowb::cli
