// What the compiled platforms (cpu, cuda) share: preparing the module they compile (the
// platform's pass pipeline, or a check that the module as given verifies), and, when they run one
// instruction as a kernel, the literals of the array constants a fused computation reads from
// buffers and an uninitialised result literal with one output array per leaf to fill.
#ifndef HLOWB_REPLAY_BACKENDS_KERNEL_IO_H_
#define HLOWB_REPLAY_BACKENDS_KERNEL_IO_H_

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/instruction.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/passes/hlo_pass.h"
#include "core/passes/module_dumper.h"
#include "core/support/cancel.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

// The pass options the cpu and gpu pipelines compile kernels with: layout assignment off (both
// runtimes keep row-major arrays). Copy insertion stays: both run in the arena, placing values
// by buffer assignment, whose sharing the copies make safe.
void SkipPassesTheRuntimeDoesNotNeed(PassOptions* options);

// A copy of `module` ready for kernels: with `run_hlo_passes`, after `platform`'s pipeline ("cpu"
// or "gpu"; layout assignment left out, since the runtimes keep row-major arrays, and copy
// insertion too for "gpu", whose runtime does not run on buffer assignment), with its time and dump files added to `*pass_seconds` and
// `*dump_files`; without, as given, once it verifies (the error names the first problem).
absl::StatusOr<std::unique_ptr<Module>> PrepareModuleForKernels(
    const Module& module, const std::string& platform, bool run_hlo_passes,
    const PassOptions& pass_options, const DumpOptions& dump_options, const CancelToken* cancel,
    double* pass_seconds, std::vector<std::string>* dump_files);

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
