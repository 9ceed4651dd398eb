// Writes a compile's dumps the way XLA does, from the same flags (`--xla_dump_to`,
// `--xla_dump_hlo_pass_re`, `--xla_dump_hlo_module_re`, `--xla_dump_hlo_pipeline_re`,
// `--xla_dump_hlo_as_text`, `--xla_dump_hlo_as_proto`, `--xla_dump_include_timestamp`, ...),
// read from a command line or from XLA_FLAGS. File names follow hlo-format.md §5:
// `module_NNNN.<name>.before_optimizations.txt`,
// `module_NNNN.<name>.NNNN.<pipeline>.after_<pass>.before_<next>.txt`,
// `module_NNNN.<name>.<target>_after_optimizations.txt`, `-buffer-assignment.txt`,
// `-memory-usage-report.txt`, `.hlo.pb`, so that the dump index reads our compiles like XLA's.
#ifndef HLOWB_CORE_PASSES_MODULE_DUMPER_H_
#define HLOWB_CORE_PASSES_MODULE_DUMPER_H_

#include <cstdint>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "core/ir/module.h"
#include "core/passes/hlo_pass.h"

namespace xla {
class BufferAssignmentProto;
}  // namespace xla

namespace hlowb {

struct SnapshotData;

struct DumpOptions {
  std::string dump_to;          // directory; empty: no dumps
  std::string pass_re;          // per-pass dumps for passes matching (empty: none)
  std::string pipeline_re;      // per-pass dumps only in matching pipelines (empty: all)
  std::string module_re;        // only modules whose name matches (empty: all)
  bool as_text = false;
  bool as_proto = false;
  // --xla_dump_hlo_snapshots: every execution of a replay writes
  // `<prefix>.snapshot.<N>.pb` (an HloSnapshot of the module that ran, its arguments and
  // result), as XLA's CPU client does.
  bool snapshots = false;
  bool include_timestamp = false;
  bool long_text = true;
  bool disable_metadata = false;
  bool large_constants = true;
  // True when the caller gave a format flag explicitly (else text is the default format).
  bool any_format_given() const { return as_text || as_proto; }
};

// Applies one `--xla_...` flag (with or without leading dashes, `name=value` or a bare boolean
// name) to the dump and pass options. Unknown xla flags are returned as false in *known so the
// caller can warn; malformed values are errors.
absl::Status ApplyXlaFlag(std::string_view flag, DumpOptions* dump, PassOptions* passes,
                          bool* known);
// Applies every flag of an XLA_FLAGS-style string (space separated). Unknown flags go to
// `unknown` when given.
absl::Status ApplyXlaFlags(std::string_view flags, DumpOptions* dump, PassOptions* passes,
                           std::vector<std::string>* unknown = nullptr);

class ModuleDumper {
 public:
  // `module` gives the id and name used in every file name.
  ModuleDumper(DumpOptions options, const Module& module);

  // False when dumps are off or the module's name does not match --xla_dump_hlo_module_re.
  bool enabled() const { return enabled_; }
  const DumpOptions& options() const { return options_; }
  // "module_0042.jit_f" (with the timestamp prefix when asked).
  const std::string& file_prefix() const { return prefix_; }

  // `<prefix>.<stage>.txt` / `.hlo.pb` in the formats asked for ("before_optimizations",
  // "cpu_after_optimizations", ...). The `.hlo.pb` is an HloProto that carries
  // `buffer_assignment` when one is given, as XLA's after-optimizations dumps do.
  absl::Status DumpModule(const Module& module, std::string_view stage,
                          const xla::BufferAssignmentProto* buffer_assignment = nullptr);
  // Whether a per-pass dump is wanted for this pipeline and pass pair.
  bool WantsPassDump(std::string_view pipeline, std::string_view after_pass,
                     std::string_view before_pass, bool changed) const;
  // `<prefix>.NNNN.<pipeline>.after_<a>.before_<b>.txt`; the step counter advances per dump.
  absl::Status DumpPassStep(const Module& module, std::string_view pipeline,
                            std::string_view after_pass, std::string_view before_pass);
  // `<prefix>.snapshot.<execution>.pb`: an HloSnapshot of `module` (the module that ran) with
  // the execution's arguments and result. Written whenever dumps are enabled; callers ask
  // options().snapshots first.
  absl::Status DumpSnapshot(const Module& module, const SnapshotData& data, int64_t execution);
  // `<prefix>.<suffix>` holding `contents` (e.g. ".cpu_after_optimizations-buffer-assignment.txt").
  absl::Status DumpFile(std::string_view suffix, std::string_view contents);

  // Files written so far (full paths), in order.
  const std::vector<std::string>& written() const { return written_; }

 private:
  absl::Status Write(const std::string& file_name, std::string_view contents);

  DumpOptions options_;
  bool enabled_ = false;
  std::string prefix_;
  int64_t step_ = 0;
  std::optional<std::regex> pass_re_;
  std::optional<std::regex> pipeline_re_;
  bool pass_re_is_all_ = false;
  std::vector<std::string> written_;
};

// XLA's file-name sanitation: '/', '\\', '[', ']' and ' ' become '_'.
std::string SanitizeDumpFileName(std::string_view name);

}  // namespace hlowb

#endif  // HLOWB_CORE_PASSES_MODULE_DUMPER_H_
