// Reads meaning out of the file names XLA writes into --xla_dump_to directories
// (hlo-format.md §5): timestamp prefix, module id and name, the stage (before/after
// optimizations, per-pass step, execution number) and the kind of artifact. Works on names
// alone, never opens files; a name it cannot place is classified as unrecognised, not dropped.
#ifndef HLOWB_CORE_DUMP_DUMP_NAMES_H_
#define HLOWB_CORE_DUMP_DUMP_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace hlowb {

enum class DumpFileKind : uint8_t {
  kUnrecognized,       // not a module dump name we understand
  kHloText,            // <stage>.txt holding HLO text
  kHloProto,           // <stage>.hlo.pb (HloProto)
  kHloProtoGz,         // <stage>.hlo.pb.gz
  kSnapshot,           // execution_NNNN.hlo_snapshot.pb, or snapshot.N.pb (jax CPU client)
  kUnoptimizedSnapshot,
  kBufferAssignment,   // -buffer-assignment.txt
  kBufferAssignmentValues,  // -buffer-assignment-values.txt (the values, the CPU compiler)
  kLiveRange,          // -live-range.txt (the HloLiveRange of the schedule)
  kMemoryUsageReport,  // -memory-usage-report.txt / .pb / .pb.gz
  kDot,
  kHtml,
  kUrl,
  kLlvmIr,             // .ll
  kPtx,
  kMlir,
  kObjectFile,         // .o
  kThunkSequence,
  kDebugOptions,       // non-default debug options, flagfile
  kConfig,             // config.pbtxt, hlo_module_config.txt, execution_options.txt, ...
  kModuleMetadata,     // module_NNNN.metadata.textproto
  kAutotuneResults,
  kFusionVisualization,
  kCompileOptions,     // <module folder>/compile_options.{textproto,pb} (PjRt compile options)
  kTopology,           // <module folder>/topology.{textproto,pb} (the device topology)
  kOtherModuleFile,    // module-prefixed, but an artifact this version does not know
};

std::string_view DumpFileKindName(DumpFileKind kind);
// True for kinds that hold a module state (text or proto).
bool IsModuleStateKind(DumpFileKind kind);

enum class StageKind : uint8_t {
  kNone,                 // an artifact, not a module state
  kBeforeOptimizations,
  kPassStep,             // NNNN.<pipeline>.after_<pass>.before_<next>
  kDuringPass,           // NNNN.<pass>.<step name>
  kAfterOptimizations,
  kAfterOptimizationsVariant,  // after_optimizations_{before,after}_buffer_assignment
};

struct DumpName {
  DumpFileKind kind = DumpFileKind::kUnrecognized;
  std::optional<int64_t> timestamp_us;
  std::optional<int64_t> module_id;
  std::string module_id_text;  // as written ("0042")
  std::string module_name;     // may contain dots; empty when the name omits it
  StageKind stage = StageKind::kNone;
  std::string stage_text;      // the stage part as written ("0007.simplification.after_algsimp...")
  std::string platform_prefix; // e.g. "sm_9.0_gpu_" before after_optimizations
  int64_t step = -1;           // per-pass step number
  std::string pipeline;
  std::string pass;            // after_<pass>
  std::string next_pass;       // before_<next>
  int64_t execution = -1;      // execution_NNNN, or N of a "snapshot.N.pb" snapshot (a run
                               // id, which may be negative)
  std::string computation;     // fusion visualization: the computation; object files: the kernel
  std::string suffix;          // the recognised file suffix (".txt", ".hlo.pb.gz", ...)
};

// Classifies a file name (no directory part).
DumpName ParseDumpFileName(std::string_view file_name);

// Classifies a file by its '/'-separated path relative to the dump root: by its own name when
// that is a module file name, else as an artifact of the innermost enclosing per-module folder
// ("module_0000.jit_f/module.mlir", "module_0000.jit_f/compile_options.pb"), whose id and name
// it takes. Unrecognised when neither applies.
DumpName ParseDumpFilePath(std::string_view relative_path);

}  // namespace hlowb

#endif  // HLOWB_CORE_DUMP_DUMP_NAMES_H_
