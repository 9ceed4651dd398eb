// `hlowb convert IN -o OUT [--format=hlo|hlo-short|pb|module-pb|pbtxt|snapshot]
//  [--split-input-file] [--strict-xla]`: converts between every HLO file format the workbench
// reads. The output format comes from OUT's extension unless --format is given; a trailing .gz
// compresses. Snapshot inputs keep their arguments and result when written as a snapshot, and
// HloProto inputs keep their buffer assignment when written as HloProto. --strict-xla writes
// XLA's schema only (what it cannot carry is dropped and reported).
#include <iostream>

#include "app/cli/cli.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"

namespace hlowb::cli {
namespace {

constexpr char kUsage[] =
    "usage: hlowb convert IN -o OUT [--format=hlo|hlo-short|pb|module-pb|pbtxt|snapshot]\n"
    "                     [--split-input-file] [--strict-xla]\n";

}  // namespace

int RunConvert(const std::vector<std::string>& argv) {
  Args args;
  std::string error;
  if (!ParseArgs(argv, {"split-input-file", "strict-xla"}, {"format", "o"}, &args, &error) ||
      args.positional.size() != 1 || !args.Has("o")) {
    std::cerr << "hlowb convert: "
              << (!error.empty()                ? error
                  : args.positional.size() != 1 ? "expected exactly one input file"
                                                : "missing -o OUT")
              << "\n"
              << kUsage;
    return kUsageError;
  }
  const std::string in = args.positional[0];
  const std::string out = args.Get("o");
  std::optional<HloOutputFormat> format;
  if (args.Has("format")) {
    format = ParseHloOutputFormat(args.Get("format"));
    if (!format) {
      std::cerr << "hlowb convert: unknown --format '" << args.Get("format") << "'\n" << kUsage;
      return kUsageError;
    }
  } else {
    format = OutputFormatFromPath(out);
    if (!format) {
      std::cerr << "hlowb convert: cannot tell the output format from '" << out
                << "'; give --format\n"
                << kUsage;
      return kUsageError;
    }
  }

  OpenOptions open_options;
  open_options.split_input_file = args.Has("split-input-file");
  absl::StatusOr<OpenedHloFile> opened = OpenHloFile(in, open_options);
  if (!opened.ok()) {
    std::cerr << "error: " << opened.status().message() << "\n";
    return kInputError;
  }
  for (const std::string& w : opened->warnings) std::cerr << "warning: " << w << "\n";
  const bool text_output =
      *format == HloOutputFormat::kHloText || *format == HloOutputFormat::kHloTextShort;
  if (opened->modules.size() != 1 && !text_output) {
    std::cerr << "error: " << in << " holds " << opened->modules.size()
              << " modules; protobuf formats hold one (write HLO text, or split the file)\n";
    return kInputError;
  }

  EncodeOptions encode;
  encode.gzip = OutputIsGzipped(out);
  encode.proto.workbench_extensions = !args.Has("strict-xla");
  if (opened->buffer_assignment) encode.buffer_assignment = opened->buffer_assignment.get();
  SnapshotData snapshot;
  if (*format == HloOutputFormat::kHloSnapshot) {
    if (opened->is_snapshot) {
      snapshot.arguments = std::move(opened->arguments);
      snapshot.result = std::move(opened->result);
      snapshot.execution_platform = opened->execution_platform;
    } else {
      std::cerr << "warning: " << in << " has no arguments or result; the snapshot holds only "
                << "the module\n";
    }
    encode.snapshot = &snapshot;
  }
  std::string bytes;
  std::vector<std::string> warnings;
  for (size_t i = 0; i < opened->modules.size(); ++i) {
    absl::StatusOr<std::string> encoded =
        EncodeHloFile(*opened->modules[i].module, *format, encode, &warnings);
    if (!encoded.ok()) {
      std::cerr << "error: " << opened->modules[i].label << ": " << encoded.status().message()
                << "\n";
      return kInputError;
    }
    if (i) bytes += "// -----\n\n";
    bytes += *encoded;
  }
  for (const std::string& w : warnings) std::cerr << "warning: " << w << "\n";
  absl::Status st = WriteStringToFile(out, bytes);
  if (!st.ok()) {
    std::cerr << "error: " << st.message() << "\n";
    return kInputError;
  }
  return kOk;
}

}  // namespace hlowb::cli
