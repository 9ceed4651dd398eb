// Checks a module against XLA's rules: shape inference for every opcode, attribute
// consistency, operand counts, parameter numbering, called-computation signatures. Problems
// come back as diagnostics naming the computation and instruction; nothing aborts.
//
// Errors are violations of XLA's rules (what its HloVerifier rejects, layout-insensitively).
// Warnings are things XLA accepts only under options or that this version cannot judge:
// unknown attributes (kept verbatim by the parser), mixed floating-point precisions, and a dot
// without contracting dimensions. Shapes the rules cannot determine (custom-call, parameter,
// bitcast, scan, ...) are taken as declared.
#ifndef HLOWB_CORE_ANALYSIS_VERIFIER_H_
#define HLOWB_CORE_ANALYSIS_VERIFIER_H_

#include <string>
#include <vector>

#include "core/ir/module.h"

namespace hlowb {

struct VerifierDiagnostic {
  enum class Severity { kError, kWarning };
  Severity severity = Severity::kError;
  std::string computation;
  std::string instruction;  // empty for computation- or module-level problems
  std::string message;
  // "computation/instruction: message" (or with "warning: " prefix).
  std::string ToString() const;
};

std::vector<VerifierDiagnostic> VerifyModule(const Module& module);

// Number of errors (warnings excluded).
int CountErrors(const std::vector<VerifierDiagnostic>& diagnostics);

}  // namespace hlowb

#endif  // HLOWB_CORE_ANALYSIS_VERIFIER_H_
