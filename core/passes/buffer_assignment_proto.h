// Our buffer assignment as XLA's BufferAssignmentProto (the `buffer_assignment` field of the
// HloProto in `*_after_optimizations.hlo.pb` dumps), so that tools reading XLA's protos read
// ours: one LogicalBufferProto per allocatable value (its defining instruction and shape index),
// one BufferAlias per further position of a value, the allocations with their assigned values,
// and one heap-simulator trace per temp allocation (ALLOC, SHARE_WITH and FREE events in
// schedule order).
#ifndef HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_PROTO_H_
#define HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_PROTO_H_

#include "core/passes/buffer_assignment.h"
#include "core/proto/hlo.pb.h"

namespace hlowb {

xla::BufferAssignmentProto BufferAssignmentToProto(const BufferAssignment& assignment);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_BUFFER_ASSIGNMENT_PROTO_H_
