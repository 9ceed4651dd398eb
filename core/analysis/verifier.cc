#include "core/analysis/verifier.h"

#include "core/support/strings.h"

namespace hlowb {

std::string VerifierDiagnostic::ToString() const {
  std::string where = computation;
  if (!instruction.empty()) StrAppend(&where, "/", instruction);
  return StrCat(severity == Severity::kWarning ? "warning: " : "", where, ": ", message);
}

int CountErrors(const std::vector<VerifierDiagnostic>& diagnostics) {
  int n = 0;
  for (const auto& d : diagnostics) n += d.severity == VerifierDiagnostic::Severity::kError;
  return n;
}

std::vector<VerifierDiagnostic> VerifyModule(const Module& module) {
  std::vector<VerifierDiagnostic> out;
  (void)module;
  return out;
}

}  // namespace hlowb
