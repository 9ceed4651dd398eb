#include "replay/backends/kernel_io.h"

#include "core/support/strings.h"

namespace hlowb {

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
