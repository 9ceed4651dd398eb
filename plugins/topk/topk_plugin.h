// The "TopK" custom call XLA emits for lax.top_k (before or instead of the topk opcode): operand
// [batch..., n], result (values [batch..., k], indices s32[batch..., k]), k taken from the
// result shape. The order comes from the attached comparator (to_apply): a root
// compare(p0, p1) with direction GT or GE keeps the largest values, LT or LE the smallest; no
// comparator means largest. Ties keep the lower index first, as XLA's sort-based expansion
// does. Computed by the evaluator's topk. Not here: comparators other than one compare of the
// two parameters.
#ifndef HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_
#define HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterTopKPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_
