// Building blocks shared by custom-call handlers: a scratch computation that runs plain HLO
// operations (dot, convolution, convert, topk, ...) through the reference evaluator, so a
// handler reuses the evaluator's exact semantics instead of re-implementing them; conversion of
// array literals to and from doubles with XLA's rounding rules; and backend_config access.
//
// Handlers compute in double precision and round once to the result type. That matches what a
// vendor library computes up to its accumulation order, which is all a replay can promise.
// Nothing here is specific to one vendor library.
#ifndef HLOWB_PLUGINS_API_HANDLER_UTIL_H_
#define HLOWB_PLUGINS_API_HANDLER_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/support/json_reader.h"

namespace hlowb {

// A one-computation module built op by op and evaluated once per Run. Not a builder for real
// modules: no verification, no names worth reading, parameters numbered in creation order.
class ScratchComputation {
 public:
  ScratchComputation();
  ScratchComputation(const ScratchComputation&) = delete;
  ScratchComputation& operator=(const ScratchComputation&) = delete;

  Instruction* Parameter(const Shape& shape);
  // Adds an instruction; set opcode-specific attributes through mutable_attrs() afterwards.
  Instruction* Add(Opcode opcode, const Shape& shape, const std::vector<Instruction*>& operands);
  // Evaluates the computation with `root` as its root; `args` in parameter order.
  absl::StatusOr<Literal> Run(Instruction* root, const std::vector<const Literal*>& args);

 private:
  std::unique_ptr<Module> module_;
  Computation* computation_ = nullptr;
  int parameters_ = 0;
};

// The element values of a real-typed array literal (any float, integer or pred type) as
// doubles, row-major. InvalidArgument for complex, tuple and non-array literals.
absl::StatusOr<std::vector<double>> ToDoubles(const Literal& literal);
// An array literal of `type` and `dims` from doubles, rounded with XLA's conversion rules.
absl::StatusOr<Literal> FromDoubles(PrimitiveType type, const std::vector<int64_t>& dims,
                                    const std::vector<double>& values);
// The literal converted to `type` (same dimensions), with XLA's conversion rules.
absl::StatusOr<Literal> ConvertLiteral(const Literal& literal, PrimitiveType type);

// dot(lhs, rhs) as the evaluator computes it (operands converted to `result_type` first), with
// result dimensions batch..., lhs free..., rhs free... . InvalidArgument for dimension numbers
// that do not fit the operands.
absl::StatusOr<Literal> EvaluateDot(const Literal& lhs, const Literal& rhs,
                                    const DotDimensionNumbers& dnums, PrimitiveType result_type);

// The instruction's backend_config as JSON; an empty config reads as an empty object.
absl::StatusOr<JsonValue> ParseBackendConfig(const Instruction& instr);
// root[key] when present (configs wrapped in GpuBackendConfig / BackendConfig), else root
// itself (older XLA wrote the inner message at top level).
const JsonValue& ConfigSection(const JsonValue& root, std::string_view key);

// Element-wise activations the vendor epilogues and post-ops apply.
enum class Activation {
  kNone,
  kRelu,
  kRelu6,
  kGeluTanh,  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kGeluErf,   // 0.5 x (1 + erf(x / sqrt(2)))
  kSilu,      // x * sigmoid(x)
  kSigmoid,
  kTanh,
  kElu,        // x > 0 ? x : alpha (exp(x) - 1)
  kLeakyRelu,  // x > 0 ? x : alpha x
};
double Activate(Activation activation, double x, double alpha = 1.0);
// True for every f8 element type.
bool IsF8Type(PrimitiveType type);

// "%name" for messages.
std::string InstructionRef(const Instruction& instr);
// The array result of an instruction whose shape may be a tuple (result, workspace, ...):
// element 0 of a tuple, else the shape itself.
const Shape& PrimaryResultShape(const Instruction& instr);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_API_HANDLER_UTIL_H_
