// "layout-assignment": chooses the physical layout (minor_to_major order) of every array value
// in the module's non-fused computations, and inserts a `copy` wherever a value is wanted in a
// layout other than the one it is produced in.
//
// Layouts are chosen in one forward walk over each computation, callers before callees:
//   * the entry's parameters and root follow the module's entry_computation_layout; a module
//     without one keeps the layouts its entry parameters and root were written with (what the
//     text format derives the entry layout from), descending where none is given, and the
//     chosen signature is recorded in the config;
//   * elementwise ops (and slices, pads, concatenates, sorts, ...) take their operands'
//     layout; transposes take the permuted operand layout and reshapes a layout that makes
//     them bitcasts where one exists; reduces keep the kept dimensions' relative order;
//   * dot and convolution operands get the layouts the target's library wants (row-major
//     GEMM operands, batch dimensions most major; NHWC/HWIO convolutions on the CPU, NCHW/OIHW
//     on the GPU except for 16-bit types) and produce descending (row-major) results;
//   * while bodies and conditions carry the layout of the loop's operand, called computations
//     and conditional branches take their callers' operand layouts and return descending ones;
//   * constants, iotas and broadcasts are recreated in the layout their user wants instead of
//     being copied.
//
// Deliberately not done: layout changes inside fused computations or around ops whose layout
// is part of their meaning (bitcast, fusion, custom-call, collectives, send/recv, infeed, async
// wrappers): their operands are given back the layouts they had and their results keep theirs.
// No cost model chooses between competing layouts, tiled layouts are not invented, and a
// reshape that cannot be a bitcast gets a descending layout (it stays a real reshape). The
// walk is one atomic decision for the whole module: it uses a single unit of fuel.
#ifndef HLOWB_CORE_PASSES_LAYOUT_ASSIGNMENT_H_
#define HLOWB_CORE_PASSES_LAYOUT_ASSIGNMENT_H_

#include <string>

#include "core/passes/hlo_pass.h"

namespace hlowb {

class LayoutAssignment : public HloPass {
 public:
  // `target` is "cpu" or "gpu"; anything else is rejected by Run.
  explicit LayoutAssignment(std::string target = "cpu") : target_(std::move(target)) {}

  std::string_view name() const override { return "layout-assignment"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;

 private:
  std::string target_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_LAYOUT_ASSIGNMENT_H_
