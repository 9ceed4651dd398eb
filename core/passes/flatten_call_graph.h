// "flatten-call-graph": gives every computation at most one caller in a sequential context
// (call, while condition/body, conditional branch). A computation that a second sequential
// site calls, or that is also used in an embedded context (reduce/map/sort/scatter/fusion
// computations), is cloned for that site, recursively, so the call graph becomes a tree.
// Clones are named "<name>.clone" (made unique) and placed right after their original.
//
// Deliberately not done: cloning computations that are only used in embedded contexts
// (several reduces may share one `to_apply`, several fusions one fused computation), and
// touching async wrapped computations, which the start/update/done ops share by design.
// Unreachable computations are left alone.
#ifndef HLOWB_CORE_PASSES_FLATTEN_CALL_GRAPH_H_
#define HLOWB_CORE_PASSES_FLATTEN_CALL_GRAPH_H_

#include "core/passes/hlo_pass.h"

namespace hlowb {

class FlattenCallGraph : public HloPass {
 public:
  std::string_view name() const override { return "flatten-call-graph"; }
  absl::StatusOr<bool> Run(Module* module, PassContext& context) override;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_FLATTEN_CALL_GRAPH_H_
