// The "TopK" custom call XLA emits for lax.top_k (before or instead of the topk opcode): operand
// [batch..., n], result (values [batch..., k], indices [batch..., k]), k taken from the result
// shape. The order is the one the attached comparator (to_apply) defines, as a stable sort by it
// along the last dimension followed by keeping the first k: ties keep the lower index first.
// The comparator is run as written, whatever it computes: XLA's own comparator takes four
// parameters (value_lhs, value_rhs, index_lhs, index_rhs: the sort of values with an iota it
// came from) and orders floats by their total order through bitcasts; a two-parameter
// comparator takes the two values. A plain compare(p0, p1) of two values (GT/GE largest first,
// LT/LE smallest first) and a missing comparator (largest first) go to the evaluator's topk op
// instead of calling a computation per comparison.
#ifndef HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_
#define HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterTopKPlugin(CustomCallRegistry* registry);

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_TOPK_TOPK_PLUGIN_H_
