#include "replay/backends/kernel_io.h"

#include "core/analysis/verifier.h"
#include "core/passes/hlo_edit.h"
#include "core/passes/pipelines.h"
#include "core/support/strings.h"
#include "replay/evaluator/constant_evaluator.h"

namespace hlowb {

absl::StatusOr<std::unique_ptr<Module>> PrepareModuleForKernels(
    const Module& module, const std::string& platform, bool run_hlo_passes,
    const PassOptions& pass_options, const DumpOptions& dump_options, const CancelToken* cancel,
    double* pass_seconds, std::vector<std::string>* dump_files) {
  if (!run_hlo_passes) {  // CompileModule verifies otherwise
    std::vector<VerifierDiagnostic> diags = VerifyModule(module);
    if (int errors = CountErrors(diags); errors > 0) {
      for (const VerifierDiagnostic& d : diags) {
        if (d.severity == VerifierDiagnostic::Severity::kError) {
          return absl::InvalidArgumentError(StrCat("the module does not verify (", errors,
                                                   " error", errors == 1 ? "" : "s",
                                                   "); first: ", d.ToString()));
        }
      }
    }
  }
  std::unique_ptr<Module> copy = CloneModule(module);
  if (run_hlo_passes) {
    CompileOptions co;
    co.platform = platform;
    co.pass_options = pass_options;
    SkipPassesTheRuntimeDoesNotNeed(&co.pass_options);
    co.dump_options = dump_options;
    co.evaluator = InterpreterConstantEvaluator();
    co.cancel = cancel;
    absl::StatusOr<CompileResult> r = CompileModule(copy.get(), co);
    if (!r.ok()) return r.status();
    *pass_seconds += r->pass_seconds;
    dump_files->insert(dump_files->end(), r->dump_files.begin(), r->dump_files.end());
  }
  return copy;
}

void SkipPassesTheRuntimeDoesNotNeed(PassOptions* options) {
  options->disabled_passes.push_back("layout-assignment");
}

std::optional<absl::StatusOr<std::vector<const Literal*>>> KernelConstantLiterals(
    const std::vector<const Instruction*>& constants,
    const std::function<absl::StatusOr<Literal>(const Instruction&)>& elided_constant,
    ConstantCache* cache) {
  using Result = absl::StatusOr<std::vector<const Literal*>>;
  std::vector<const Literal*> out;
  for (const Instruction* c : constants) {
    const Literal* lit = c->literal();
    if (lit == nullptr) return std::nullopt;
    if (lit->elided()) {
      if (!elided_constant) {
        return Result(absl::FailedPreconditionError(StrCat(
            "constant %", c->name(), " was elided ({...}) in the input, so its values are "
            "unknown")));
      }
      absl::StatusOr<const Literal*> v = cache->Get(*c, elided_constant);
      if (!v.ok()) return Result(v.status());
      lit = *v;
    }
    out.push_back(lit);
  }
  return Result(std::move(out));
}

void MakeKernelResult(const Shape& shape, Literal* result, std::vector<Literal*>* outputs) {
  outputs->clear();
  if (shape.IsTuple()) {
    std::vector<Literal> elems;
    for (const Shape& s : shape.tuple_shapes()) elems.push_back(Literal::Uninitialized(s));
    *result = Literal(shape, /*allocate=*/false);
    *result->mutable_tuple_elements() = std::move(elems);
    for (Literal& e : *result->mutable_tuple_elements()) outputs->push_back(&e);
  } else {
    *result = Literal::Uninitialized(shape);
    outputs->push_back(result);
  }
}

}  // namespace hlowb
