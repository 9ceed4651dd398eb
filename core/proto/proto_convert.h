// Conversion between the IR (Module) and XLA's HloModuleProto, in both directions, keeping
// everything HLO text can say: ids, names, every opcode-specific attribute, metadata,
// shardings (including iota tile assignments), frontend attributes, backend configs, the
// schedule, input/output aliasing, buffer donors, stack frames, the entry computation layout,
// called computations and control predecessors. Converting text -> proto -> text prints the
// same module.
//
// XLA's schema cannot state a few things HLO text can: header attributes XLA keeps in its
// HloModuleConfig (replica_count, num_partitions, alias_passthrough_params, the
// allow_spmd_sharding_propagation_* lists), attributes this version does not model
// (InstructionAttrs::unknown, ModuleConfig::unknown), the verbatim `origin=` and
// `origin_recovery_table=` trees, the ignored all-reduce `mode=`, mesh-based shardings, and
// spelling choices such as writing a default value explicitly. By default they travel in the
// `hlowb_extras` fields (number 1000, see hlo.proto), which XLA skips; warnings name every
// semantic item XLA will not see. With ProtoWriteOptions::workbench_extensions = false they are
// dropped (and reported), or refused with fail_on_loss.
//
// Reading validates the proto completely (dangling operand/computation/root ids, duplicate
// ids and names, cycles through operands, control edges or calls, invalid enums and element
// types, absurd shapes, schedules that are not permutations) and returns InvalidArgument
// naming the computation and instruction. It never crashes and never allocates beyond what
// the input's size justifies. It does not check HLO semantics (shapes of operands, arity):
// that is core/analysis/verifier.h's job. HloModuleProto fields the IR has no place for
// (cross_program_prefetches, spmd shardings, profile_info, device_assignment, original
// values) are dropped with a warning.
#ifndef HLOWB_CORE_PROTO_PROTO_CONVERT_H_
#define HLOWB_CORE_PROTO_PROTO_CONVERT_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/module.h"
#include "core/proto/literal_convert.h"

namespace xla {
class HloModuleProto;
}  // namespace xla

namespace hlowb {

// How ModuleToProto treats what XLA's schema cannot state. Not a place for output formats;
// those are open_file.h's EncodeOptions.
struct ProtoWriteOptions {
  // Carry what XLA's schema cannot state in the hlowb_extras fields (XLA ignores them).
  bool workbench_extensions = true;
  // Fail with FailedPrecondition instead of dropping something XLA's schema cannot state
  // (only meaningful without workbench_extensions).
  bool fail_on_loss = false;
};

// Limits and switches for ModuleFromProto. It cannot relax validation of references or enums,
// only the size limits.
struct ProtoReadOptions {
  ProtoLimits limits;
  // Honor hlowb_extras fields written by this tool.
  bool apply_workbench_extensions = true;
};

// Writes `module`. `warnings` (optional) receives one line per item XLA will not see or that
// was dropped. Fails only on data that cannot be encoded at all (e.g. a literal too large for
// a LiteralProto) or, with fail_on_loss, on a loss.
absl::Status ModuleToProto(const Module& module, xla::HloModuleProto* proto,
                           const ProtoWriteOptions& options = {},
                           std::vector<std::string>* warnings = nullptr);

// Reads a module. `warnings` (optional) receives one line per field that was not converted.
absl::StatusOr<std::unique_ptr<Module>> ModuleFromProto(
    const xla::HloModuleProto& proto, const ProtoReadOptions& options = {},
    std::vector<std::string>* warnings = nullptr);

}  // namespace hlowb

#endif  // HLOWB_CORE_PROTO_PROTO_CONVERT_H_
