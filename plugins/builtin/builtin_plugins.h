// The custom-call handlers that ship with the workbench, registered in one explicit call:
// cublas (GEMM targets), cudnn (convolution targets), spmd (Sharding and the shard-shape
// markers), topk (the TopK custom call) and onednn (CPU matmul, layer norm, softmax). Triton
// GEMM fusions need no handler: they are fusions (kind=kCustom), and the evaluator runs their
// fused computation like any other fusion.
//
// Callers that want a different set register the plugins they want one by one; nothing here
// registers itself.
#ifndef HLOWB_PLUGINS_BUILTIN_BUILTIN_PLUGINS_H_
#define HLOWB_PLUGINS_BUILTIN_BUILTIN_PLUGINS_H_

#include "absl/status/status.h"
#include "plugins/api/custom_call_registry.h"

namespace hlowb {

absl::Status RegisterBuiltinPlugins(CustomCallRegistry* registry);
// A registry holding every built-in handler (registration of the built-ins cannot clash).
CustomCallRegistry BuiltinCustomCallRegistry();

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_BUILTIN_BUILTIN_PLUGINS_H_
