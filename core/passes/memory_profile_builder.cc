#include "core/passes/memory_profile_builder.h"

#include <utility>

#include "core/analysis/verifier.h"
#include "core/passes/copy_insertion.h"
#include "core/passes/hlo_memory_scheduler.h"
#include "core/passes/hlo_pass.h"
#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {

namespace {

std::string IndexText(const ShapeIndex& index) {
  std::string out = "{";
  for (size_t i = 0; i < index.size(); ++i) StrAppend(&out, i ? "," : "", index[i]);
  out += "}";
  return out;
}

MemoryKind KindOf(AllocationKind kind) {
  switch (kind) {
    case AllocationKind::kParameter:
      return MemoryKind::kParameter;
    case AllocationKind::kConstant:
      return MemoryKind::kConstant;
    case AllocationKind::kOutput:
      return MemoryKind::kOutput;
    case AllocationKind::kThreadLocal:
      return MemoryKind::kThreadLocal;
    case AllocationKind::kTemp:
      return MemoryKind::kTemp;
  }
  return MemoryKind::kTemp;
}

}  // namespace

MemoryProfile MemoryProfileFromAssignment(const BufferAssignment& ba) {
  MemoryProfile p;
  p.source = "hlowb";
  for (const Instruction* instr : ba.flattened_sequence()) {
    p.points.push_back(std::string(instr->name()));
  }
  const Computation* entry = ba.module().entry();
  for (const BufferAllocation& a : ba.allocations()) {
    MemoryAllocation m;
    m.index = a.index;
    m.size = a.size;
    m.kind = KindOf(a.kind);
    m.maybe_live_out = a.maybe_live_out;
    if (a.kind == AllocationKind::kParameter) {
      m.parameter_number = a.parameter_number;
      m.parameter_index = IndexText(a.parameter_index);
      if (entry != nullptr && a.parameter_number >= 0 &&
          a.parameter_number < entry->parameter_count()) {
        m.parameter_shape =
            PrintShape(entry->parameter(static_cast<int>(a.parameter_number))->shape(), false);
      }
    }
    if (a.output_root != nullptr) m.output_shape = PrintShape(a.output_root->shape(), false);
    const int64_t position = static_cast<int64_t>(p.allocations.size());
    for (const BufferAllocation::Assigned& s : a.assigned) {
      const LogicalValue& lv = ba.values()[s.value];
      MemoryValue v;
      v.id = lv.id;
      v.instruction = std::string(lv.instruction->name());
      v.index = IndexText(lv.index);
      if (lv.shape != nullptr) v.shape = PrintShape(*lv.shape, true);
      v.allocation = position;
      v.offset = s.offset;
      v.size = s.size;
      if (lv.has_live_range && lv.end >= lv.start) {
        v.start = lv.start;
        v.end = lv.end;
      }
      p.values.push_back(std::move(v));
    }
    p.allocations.push_back(std::move(m));
  }
  FinishMemoryProfile(&p);
  return p;
}

absl::StatusOr<MemoryProfileResult> ComputeMemoryProfile(Module* module,
                                                         const CancelToken* cancel) {
  std::vector<VerifierDiagnostic> diags = VerifyModule(*module);
  if (CountErrors(diags) > 0) {
    std::string msg =
        StrCat("module '", module->name(), "' does not verify, so its buffers cannot be assigned:");
    for (const VerifierDiagnostic& d : diags) {
      if (d.severity == VerifierDiagnostic::Severity::kError) StrAppend(&msg, "\n  ", d.ToString());
    }
    return absl::InvalidArgumentError(msg);
  }
  MemoryProfileResult result;
  if (module->config().is_scheduled) {
    result.schedule = "the module's own schedule (is_scheduled=true)";
  } else {
    PassContext context;
    context.set_cancel(cancel);
    CopyInsertion copies;
    if (absl::StatusOr<bool> ran = copies.Run(module, context); !ran.ok()) {
      return absl::Status(ran.status().code(), StrCat("copy insertion: ", ran.status().message()));
    }
    HloMemoryScheduler scheduler;
    if (absl::StatusOr<bool> ran = scheduler.Run(module, context); !ran.ok()) {
      return absl::Status(ran.status().code(), StrCat("scheduling: ", ran.status().message()));
    }
    result.schedule = "copy insertion and hlowb's memory scheduler (the module was not scheduled)";
  }
  if (cancel != nullptr && cancel->IsCancelled()) return absl::CancelledError("cancelled");
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(*module);
  if (!ba.ok()) {
    return absl::Status(ba.status().code(), StrCat("buffer assignment: ", ba.status().message()));
  }
  result.profile = MemoryProfileFromAssignment(*ba);
  result.profile.schedule = result.schedule;
  return result;
}

}  // namespace hlowb
