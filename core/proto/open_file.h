// One entry point that opens any HLO file a user brings: HLO text (optionally split at
// `// -----` lines), HloProto (`*.hlo.pb`, as `--xla_dump_hlo_as_proto` writes it, with its
// buffer assignment), a bare HloModuleProto, HloSnapshot (`*.hlo_snapshot.pb`: module,
// arguments, result, platform), the text-proto forms of those three (`.pbtxt`, `.textproto`),
// and any of them gzip/zlib-compressed (`.gz`). The format is chosen from the file name and
// the content; when nothing fits, the error lists every format tried and why each failed.
// Also the writers for the same formats, and a reader for literal files.
//
// This layer only decodes containers; structural validation of modules and literals is in
// proto_convert.h / literal_convert.h, and HLO semantics are the verifier's business.
#ifndef HLOWB_CORE_PROTO_OPEN_FILE_H_
#define HLOWB_CORE_PROTO_OPEN_FILE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "core/proto/proto_convert.h"

namespace xla {
class BufferAssignmentProto;
}  // namespace xla

namespace hlowb {

// The container formats OpenHloFile recognizes (compression is reported separately).
enum class HloFileFormat {
  kHloText,
  kHloProto,
  kHloModuleProto,
  kHloSnapshot,
  kHloProtoText,
  kHloModuleProtoText,
  kHloSnapshotText,
};
// "HLO text", "HloProto (binary)", ...
std::string_view HloFileFormatName(HloFileFormat format);

// How OpenHloFile reads: text splitting, proto limits, file and inflation size limits. It does
// not choose the format; detection is always by name and content.
struct OpenOptions {
  // HLO text: parse every `// -----` part as its own module.
  bool split_input_file = false;
  ProtoReadOptions proto;
  uint64_t max_file_bytes = uint64_t{8} << 30;
  // Protobuf cannot parse messages of 2 GiB or more, so larger inflated data is refused.
  uint64_t max_decompressed_bytes = (uint64_t{2} << 30) - 1;
};

// One module read from a file, with the label messages should use for it.
struct OpenedModule {
  std::string label;  // file name, plus "#N" for split parts
  std::unique_ptr<Module> module;
};

// Everything a file held: its modules and, for snapshots, the execution data. Formats without
// a field leave it empty. Modules are structurally valid (proto_convert.h); semantics unchecked.
struct OpenedHloFile {
  HloFileFormat format = HloFileFormat::kHloText;
  bool gzipped = false;
  std::vector<OpenedModule> modules;
  // Snapshot formats only.
  bool is_snapshot = false;
  std::vector<Literal> arguments;
  std::optional<Literal> result;
  std::string execution_platform;
  // HloProto formats, when the file carries one.
  std::shared_ptr<const xla::BufferAssignmentProto> buffer_assignment;
  std::vector<std::string> warnings;
};

absl::StatusOr<OpenedHloFile> OpenHloFile(const std::string& path, const OpenOptions& options = {});
// The same for bytes in memory; `name` gives the format hint and labels messages.
absl::StatusOr<OpenedHloFile> OpenHloBytes(std::string_view data, std::string_view name,
                                           const OpenOptions& options = {});

// A dump-state opener (core/dump/state_loader.h) that reads every format OpenHloFile does:
// the first module of the file.
std::function<absl::StatusOr<std::unique_ptr<Module>>(const std::string&)> AnyFormatModuleOpener(
    const OpenOptions& options = {});

// Whether a file is best read as HLO text: its name says so, or nothing says otherwise and its
// first bytes are printable text that does not look like a text proto.
bool LooksLikeHloText(std::string_view name, std::string_view head);

// The formats EncodeHloFile writes (the --format names of `hlowb convert`).
enum class HloOutputFormat {
  kHloText,         // "hlo"
  kHloTextShort,    // "hlo-short"
  kHloProto,        // "pb"
  kHloModuleProto,  // "module-pb"
  kHloProtoText,    // "pbtxt"
  kHloSnapshot,     // "snapshot"
};
std::optional<HloOutputFormat> ParseHloOutputFormat(std::string_view name);
// From a file name: .hlo/.txt, .hlo_snapshot.pb, .pb, .pbtxt/.textproto (a trailing .gz is
// ignored here; see OutputIsGzipped).
std::optional<HloOutputFormat> OutputFormatFromPath(std::string_view path);
bool OutputIsGzipped(std::string_view path);

// The execution data of an HloSnapshot; a module alone makes a snapshot without arguments.
struct SnapshotData {
  std::vector<Literal> arguments;
  std::optional<Literal> result;
  std::string execution_platform;
};

// What EncodeHloFile adds beyond the module: compression, buffer assignment, snapshot data.
struct EncodeOptions {
  ProtoWriteOptions proto;
  bool gzip = false;
  // Written into HloProto outputs (and snapshots) when given.
  const xla::BufferAssignmentProto* buffer_assignment = nullptr;
  // Snapshot contents; a snapshot without it has no arguments.
  const SnapshotData* snapshot = nullptr;
};

// Encodes `module` in `format`. `warnings` receives what XLA's schema cannot carry.
absl::StatusOr<std::string> EncodeHloFile(const Module& module, HloOutputFormat format,
                                          const EncodeOptions& options = {},
                                          std::vector<std::string>* warnings = nullptr);

// A literal with a name for display; carries no shape beyond the literal's own.
struct NamedLiteral {
  std::string name;  // "argument 0 (p0)", "result", or the file name
  Literal literal;
};

// The literals a file held, and what kind of file it was.
struct LiteralFile {
  std::string description;  // what the file turned out to be
  std::vector<NamedLiteral> literals;
  std::vector<std::string> warnings;
};

// A snapshot's arguments and result, or one literal: binary or text LiteralProto, or HLO
// literal text ("f32[2] {1, 2}").
absl::StatusOr<LiteralFile> OpenLiteralFile(const std::string& path,
                                            const OpenOptions& options = {});

// zlib/gzip helpers (exposed for tests and tools).
absl::StatusOr<std::string> Gunzip(std::string_view data, uint64_t max_bytes);
absl::StatusOr<std::string> Gzip(std::string_view data);

}  // namespace hlowb

#endif  // HLOWB_CORE_PROTO_OPEN_FILE_H_
