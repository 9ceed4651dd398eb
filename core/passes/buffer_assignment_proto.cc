#include "core/passes/buffer_assignment_proto.h"

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

namespace hlowb {
namespace {

// The name as well as the id: instruction ids are unique per computation in text modules, not
// always per module, and readers match the name. The schema marks the name field deprecated.
void SetLocation(const Instruction* instr, const ShapeIndex& index,
                 xla::LogicalBufferProto::Location* loc) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  loc->set_instruction_name(instr->name());
#pragma GCC diagnostic pop
  loc->set_instruction_id(instr->id());
  for (int64_t i : index) loc->add_shape_index(i);
}

std::string ComputationName(const Instruction* instr) {
  return instr->parent() != nullptr ? instr->parent()->name() : std::string();
}

}  // namespace

xla::BufferAssignmentProto BufferAssignmentToProto(const BufferAssignment& assignment) {
  xla::BufferAssignmentProto proto;
  const std::vector<LogicalValue>& values = assignment.values();

  for (const LogicalValue& v : values) {
    if (!v.allocatable || v.instruction == nullptr) continue;
    xla::LogicalBufferProto* lb = proto.add_logical_buffers();
    lb->set_id(v.id);
    lb->set_size(v.size);
    lb->set_color(0);
    SetLocation(v.instruction, v.index, lb->mutable_defined_at());
    for (size_t p = 1; p < v.positions.size(); ++p) {
      xla::BufferAssignmentProto::BufferAlias* alias = proto.add_buffer_aliases();
      alias->set_source_buffer_id(v.id);
      SetLocation(v.positions[p].first, v.positions[p].second, alias->mutable_location());
    }
  }

  for (const BufferAllocation& a : assignment.allocations()) {
    xla::BufferAllocationProto* ap = proto.add_buffer_allocations();
    ap->set_index(a.index);
    ap->set_size(a.size);
    ap->set_is_thread_local(a.kind == AllocationKind::kThreadLocal);
    ap->set_is_constant(a.kind == AllocationKind::kConstant);
    ap->set_is_entry_computation_parameter(a.kind == AllocationKind::kParameter);
    if (a.kind == AllocationKind::kParameter) {
      ap->set_parameter_number(a.parameter_number);
      for (int64_t i : a.parameter_index) ap->add_parameter_shape_index(i);
    }
    ap->set_maybe_live_out(a.maybe_live_out);
    ap->set_color(0);
    bool is_tuple = false;
    for (const BufferAllocation::Assigned& as : a.assigned) {
      xla::BufferAllocationProto::Assigned* out = ap->add_assigned();
      out->set_logical_buffer_id(as.value);
      out->set_offset(as.offset);
      out->set_size(as.size);
      if (as.value >= 0 && as.value < static_cast<int64_t>(values.size()) &&
          values[as.value].shape != nullptr) {
        const Shape& s = *values[as.value].shape;
        if (s.IsTuple()) {
          is_tuple = true;
          out->set_element_type(xla::TUPLE);
        } else if (s.IsArray()) {
          out->set_element_type(static_cast<xla::PrimitiveType>(s.element_type()));
        }
      }
    }
    ap->set_is_tuple(is_tuple);
  }

  // One heap-simulator trace per temp allocation: the buffers it holds, allocated where their
  // live range starts and freed after it ends; the other values of a buffer share with the
  // first one (its canonical value).
  for (const BufferAllocation& a : assignment.allocations()) {
    if (a.kind != AllocationKind::kTemp) continue;
    xla::HeapSimulatorTrace* trace = proto.add_heap_simulator_traces();
    trace->set_whole_module_simulation(true);
    trace->set_buffer_allocation_index(a.index);
    struct Event {
      int64_t time;
      int order;  // allocations (0) and shares (1) before frees (2) at one step
      int64_t buffer;
    };
    std::vector<Event> events;
    std::vector<char> seen(assignment.buffers().size(), 0);
    for (const BufferAllocation::Assigned& as : a.assigned) {
      if (as.value < 0 || as.value >= static_cast<int64_t>(values.size())) continue;
      const int64_t b = values[as.value].buffer;
      if (b < 0 || b >= static_cast<int64_t>(seen.size()) || seen[b]) continue;
      seen[b] = 1;
      const LogicalBuffer& buf = assignment.buffers()[b];
      if (!buf.has_live_range || buf.values.empty()) continue;
      events.push_back({buf.start, 0, b});
      events.push_back({buf.end, 2, b});
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& x, const Event& y) {
      return std::tie(x.time, x.order, x.buffer) < std::tie(y.time, y.order, y.buffer);
    });
    for (const Event& e : events) {
      const LogicalBuffer& buf = assignment.buffers()[e.buffer];
      const LogicalValue& canonical = values[buf.values.front()];
      auto add = [&](xla::HeapSimulatorTrace::Event::Kind kind, const LogicalValue& v) {
        xla::HeapSimulatorTrace::Event* ev = trace->add_events();
        ev->set_kind(kind);
        ev->set_buffer_id(v.id);
        if (v.instruction != nullptr) {
          ev->set_computation_name(ComputationName(v.instruction));
          ev->set_instruction_name(v.instruction->name());
        }
        if (kind == xla::HeapSimulatorTrace::Event::SHARE_WITH) {
          ev->set_share_with_canonical_id(canonical.id);
        }
      };
      if (e.order == 0) {
        add(xla::HeapSimulatorTrace::Event::ALLOC, canonical);
        for (size_t k = 1; k < buf.values.size(); ++k) {
          const LogicalValue& v = values[buf.values[k]];
          if (v.allocatable) add(xla::HeapSimulatorTrace::Event::SHARE_WITH, v);
        }
      } else {
        add(xla::HeapSimulatorTrace::Event::FREE, canonical);
      }
    }
  }
  return proto;
}

}  // namespace hlowb
