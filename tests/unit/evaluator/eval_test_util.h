// Test helpers: HLO text in, literal text out. Run() parses a module, parses each argument
// ("f32[2] {1, 2}"), evaluates and prints the result with PrintShapedLiteral, or returns
// "error: <message>".
//
// Built with HLOWB_EVAL_TESTS_ON_CPU (the hlowb_evaluator_tests_cpu binary), Run() compiles the
// module for the cpu platform instead, as given (no passes), so the same expectations check the
// compiled kernels: every test of the interpreter's semantics is also a test of the cpu backend.
// Modules the verifier rejects (a few tests give the interpreter inconsistent shapes on
// purpose) are refused by the compiler, so those still run on the interpreter there.
//
// Built with HLOWB_EVAL_TESTS_ON_CUDA (hlowb_cuda_tests), Run() compiles the module for the cuda
// platform the same way, on the GPU when a driver and GPU are present (CudaAvailable()) and on
// the host's GPU emulator otherwise (CI), so every semantics test checks the GPU kernels too.
#ifndef HLOWB_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_

#include <string>
#include <vector>

#include "core/text/parser.h"
#include "core/text/printer.h"
#include "replay/evaluator/evaluator.h"
#ifdef HLOWB_EVAL_TESTS_ON_CPU
#include "core/analysis/verifier.h"
#include "replay/backends/cpu/cpu_backend.h"
#elif defined(HLOWB_EVAL_TESTS_ON_CUDA)
#include "core/analysis/verifier.h"
#include "replay/backends/cuda/cuda_backend.h"
#endif

namespace hlowb::testing {

// "f32[2] {1, 2}" -> "f32[2]{0} {1, 2}": the literal parser reads a brace right after the
// shape as a layout, so tests write literals without one and get the default layout here.
inline std::string WithDefaultLayout(const std::string& text) {
  size_t open = text.find('[');
  size_t close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || text[0] == '(') return text;
  if (close + 1 < text.size() && text[close + 1] == '{') return text;
  std::string inside = text.substr(open + 1, close - open - 1);
  int rank = inside.empty() ? 0 : 1;
  for (char c : inside) rank += c == ',';
  std::string layout = "{";
  for (int i = rank - 1; i >= 0; --i) layout += std::to_string(i) + (i ? "," : "");
  layout += "}";
  return text.substr(0, close + 1) + layout + text.substr(close + 1);
}

#ifdef HLOWB_EVAL_TESTS_ON_CUDA
// A NaN that GPU arithmetic makes (sqrt(-1), log(-1), 0/0) is the canonical 0x7fffffff, where
// x86 makes the default NaN 0xffc00000 that the expectations print as "-nan"; XLA specifies
// neither. Those two encodings are mapped to the host's here; every other NaN (one propagated
// from an input) keeps its bits, so NaN propagation is still checked.
inline void CanonicalNanToHostNan(Literal* l) {
  if (l->shape().IsTuple()) {
    for (Literal& e : *l->mutable_tuple_elements()) CanonicalNanToHostNan(&e);
    return;
  }
  if (!l->shape().IsArray()) return;
  const PrimitiveType t = l->shape().element_type();
  for (int64_t i = 0; t == PrimitiveType::kF32 && i < l->element_count(); ++i) {
    if (l->GetBits(i) == 0x7fffffffu) l->SetBits(i, 0xffc00000u);
  }
  for (int64_t i = 0; t == PrimitiveType::kF64 && i < l->element_count(); ++i) {
    if (l->GetBits(i) == 0x7fffffffffffffffull) l->SetBits(i, 0xfff8000000000000ull);
  }
}
#endif

inline std::string Run(const std::string& hlo, const std::vector<std::string>& args = {},
                       const EvaluatorOptions& options = {}) {
  auto module = ParseModule(hlo);
  if (!module.ok()) return "parse error: " + std::string(module.status().message());
  std::vector<Literal> literals;
  for (const std::string& a : args) {
    auto l = ParseShapedLiteral(WithDefaultLayout(a));
    if (!l.ok()) return "argument parse error: " + std::string(l.status().message());
    literals.push_back(std::move(*l));
  }
#ifdef HLOWB_EVAL_TESTS_ON_CPU
  if (CountErrors(VerifyModule(**module)) > 0) {
    auto r = EvaluateModule(**module, literals, options);
    if (!r.ok()) return "error: " + std::string(r.status().message());
    return PrintShapedLiteral(*r);
  }
  CpuCompileOptions cpu;
  cpu.run_hlo_passes = false;
  cpu.opt_level = 1;
  auto exe = CpuExecutable::Compile(**module, cpu);
  if (!exe.ok()) return "error: " + std::string(exe.status().message());
  auto r = (*exe)->Run(literals, options);
#elif defined(HLOWB_EVAL_TESTS_ON_CUDA)
  if (CountErrors(VerifyModule(**module)) > 0) {
    auto r = EvaluateModule(**module, literals, options);
    if (!r.ok()) return "error: " + std::string(r.status().message());
    return PrintShapedLiteral(*r);
  }
  CudaCompileOptions cuda;
  cuda.run_hlo_passes = false;
  cuda.opt_level = 1;
  cuda.emulate = !CudaAvailable().ok();
  auto exe = CudaExecutable::Compile(**module, cuda);
  if (!exe.ok()) return "error: " + std::string(exe.status().message());
  auto r = (*exe)->Run(literals, options);
  if (r.ok()) CanonicalNanToHostNan(&*r);
#else
  auto r = EvaluateModule(**module, literals, options);
#endif
  if (!r.ok()) return "error: " + std::string(r.status().message());
  return PrintShapedLiteral(*r);
}

// A one-instruction module: `body` is the ROOT instruction's right-hand side, params are the
// parameter shapes. E.g. Op("f32[2] add(p0, p1)", {"f32[2]", "f32[2]"}).
inline std::string Op(const std::string& root, const std::vector<std::string>& param_shapes,
                      const std::vector<std::string>& args, const std::string& extra = "") {
  std::string text = "HloModule m\n" + extra + "\nENTRY e {\n";
  for (size_t i = 0; i < param_shapes.size(); ++i) {
    text += "  p" + std::to_string(i) + " = " + param_shapes[i] + " parameter(" +
            std::to_string(i) + ")\n";
  }
  text += "  ROOT r = " + root + "\n}\n";
  return Run(text, args);
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_
