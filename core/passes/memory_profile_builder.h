// hlowb's own buffer assignment (buffer_assignment.h) as a MemoryProfile
// (core/analysis/memory_profile.h), so that the memory view shows any module, not only those
// XLA dumped a buffer assignment for, with the same program points, kinds and peaks.
//
// Which schedule is measured: a module that is already scheduled (is_scheduled=true, as every
// after-optimizations state XLA writes and every module our pipelines finished) keeps its
// schedule, so the profile is of exactly the order in the file. An unscheduled module gets the
// two passes buffer assignment needs and nothing else: copy insertion (so that in-place while
// loops, conditionals and outputs do not share buffers that must stay apart) and the memory
// scheduler. The instructions measured are then the module's own plus those copies; running
// the optimizing pipeline first is the caller's choice (`hlowb memory --pipeline=cpu`).
//
// Deliberately not done: anything XLA's heap simulator does that buffer_assignment.h does not
// (memory spaces, multiple heaps, rematerialisation).
#ifndef HLOWB_CORE_PASSES_MEMORY_PROFILE_BUILDER_H_
#define HLOWB_CORE_PASSES_MEMORY_PROFILE_BUILDER_H_

#include <string>

#include "absl/status/statusor.h"
#include "core/analysis/memory_profile.h"
#include "core/ir/module.h"
#include "core/passes/buffer_assignment.h"
#include "core/support/cancel.h"

namespace hlowb {

// The assignment's allocations, values and live ranges over its flattened schedule; finished
// (FinishMemoryProfile), with source "hlowb" and nothing stated.
MemoryProfile MemoryProfileFromAssignment(const BufferAssignment& assignment);

struct MemoryProfileResult {
  MemoryProfile profile;
  // How the schedule was obtained: "the module's own schedule (is_scheduled=true)" or
  // "copy insertion and hlowb's memory scheduler (the module was not scheduled)".
  std::string schedule;
};

// Schedules `module` when it is not scheduled (see above; the module is changed then), assigns
// buffers and returns the profile. Refuses a module that does not verify, naming its errors.
absl::StatusOr<MemoryProfileResult> ComputeMemoryProfile(Module* module,
                                                         const CancelToken* cancel = nullptr);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_MEMORY_PROFILE_BUILDER_H_
