// "layout_normalization": rewrites the module so that every array value computed inside it
// has the default (descending) layout. A value laid out as L is computed instead in its
// physical shape (its dimensions listed major to minor, descending layout), and the ops on it
// are rewritten to work on that shape: a copy that changes the layout becomes a transpose, a
// transpose or reshape that only relabels memory becomes a bitcast (or disappears), an
// elementwise op, broadcast, reduce, slice, pad, reverse or concatenate works on permuted
// dimensions, and a while loop carries physical shapes. Values enter and leave this world
// through bitcasts: entry parameters keep their layouts (the entry signature never changes)
// and are bitcast to their physical shapes, and the entry root is bitcast back to the layout
// the caller expects.
//
// Deliberately not done: ops whose layouts this pass does not model (dot, convolution,
// gather, scatter, sort, dynamic slices, calls, conditionals, fusions, custom calls,
// collectives, ...) keep their shapes; their operands are bitcast back to the layouts they
// had and their results are moved into physical shapes with a transpose that is a bitcast in
// memory (a transpose rather than a bitcast, because only the transpose says what the value
// is without knowing the producer's layout). Fused computations are left alone, and so is
// everything outside the minor_to_major order (tiles, memory spaces). Each rewritten
// instruction costs one unit of fuel; without fuel an instruction keeps its shape and only
// gets its operands back in the layouts it expects.
#ifndef HLOWB_CORE_PASSES_LAYOUT_NORMALIZATION_H_
#define HLOWB_CORE_PASSES_LAYOUT_NORMALIZATION_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class LayoutNormalization : public HloPass {
 public:
  std::string_view name() const override { return "layout_normalization"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_LAYOUT_NORMALIZATION_H_
