// What the compiled platforms (cpu, cuda) share when they run one instruction as a kernel: the
// literals of the array constants a fused computation reads from buffers, and an uninitialised
// result literal with one output array per leaf for the kernel to fill.
#ifndef HLOWB_REPLAY_BACKENDS_KERNEL_IO_H_
#define HLOWB_REPLAY_BACKENDS_KERNEL_IO_H_

#include <functional>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

// The values of `constants` in order; constants elided in the input ({...}) come from
// `elided_constant` through `cache` (an error naming the constant when there is no source).
// std::nullopt when a constant has no literal at all: the instruction is then left to the
// interpreter.
std::optional<absl::StatusOr<std::vector<const Literal*>>> KernelConstantLiterals(
    const std::vector<const Instruction*>& constants,
    const std::function<absl::StatusOr<Literal>(const Instruction&)>& elided_constant,
    ConstantCache* cache);

// `*result` becomes an uninitialised literal of `shape`, and `*outputs` its arrays in order (the
// literal itself, or each element of a tuple).
void MakeKernelResult(const Shape& shape, Literal* result, std::vector<Literal*>* outputs);

}  // namespace hlowb

#endif  // HLOWB_REPLAY_BACKENDS_KERNEL_IO_H_
