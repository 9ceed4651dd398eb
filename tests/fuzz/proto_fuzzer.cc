// libFuzzer target for the proto readers (OpenHloBytes: binary and text HloProto,
// HloModuleProto, HloSnapshot, gzip; LiteralProto). Any input must either be refused with an
// error or, if it was a proto, give modules that print, write back to HloModuleProto and re-read
// to a module that prints identically; literals must survive LiteralProto -> Literal ->
// LiteralProto. Run with `scripts/fuzz SECONDS proto`, which also has the target write its
// seeds: with HLOWB_SEED_LIST (a file naming .hlo files) and HLOWB_SEED_DIR set, each module is
// written there as .hlo.pb, .pbtxt, .hlo_snapshot.pb and .hlo.pb.gz before fuzzing starts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/proto/hlo.pb.h"
#include "core/proto/literal_convert.h"
#include "core/proto/open_file.h"
#include "core/proto/proto_convert.h"
#include "core/proto/xla_data.pb.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace {

void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "%s\n%s\n", what, detail.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* list = std::getenv("HLOWB_SEED_LIST");
  const char* dir = std::getenv("HLOWB_SEED_DIR");
  if (!list || !dir) return 0;
  auto paths = hlowb::ReadFileToString(list);
  if (!paths.ok()) return 0;
  size_t start = 0;
  int written = 0;
  while (start < paths->size()) {
    size_t end = paths->find('\n', start);
    if (end == std::string::npos) end = paths->size();
    std::string path = paths->substr(start, end - start);
    start = end + 1;
    auto text = hlowb::ReadFileToString(path);
    if (path.empty() || !text.ok()) continue;
    auto module = hlowb::ParseModule(*text);
    if (!module.ok()) continue;
    std::string base = std::string(dir) + "/" + path.substr(path.find_last_of('/') + 1);
    const std::pair<hlowb::HloOutputFormat, const char*> kFormats[] = {
        {hlowb::HloOutputFormat::kHloProto, ".pb"},
        {hlowb::HloOutputFormat::kHloProtoText, ".pbtxt"},
        {hlowb::HloOutputFormat::kHloSnapshot, "_snapshot.pb"},
        {hlowb::HloOutputFormat::kHloModuleProto, ".module.pb"}};
    for (const auto& [format, suffix] : kFormats) {
      for (bool gzip : {false, true}) {
        hlowb::EncodeOptions options;
        options.gzip = gzip;
        auto bytes = hlowb::EncodeHloFile(**module, format, options);
        if (!bytes.ok()) continue;
        if (hlowb::WriteStringToFile(base + suffix + (gzip ? ".gz" : ""), *bytes).ok()) ++written;
      }
    }
  }
  std::fprintf(stderr, "proto fuzzer: wrote %d seed files to %s\n", written, dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  // The last byte picks the file name, so name-based format hints are exercised too.
  static const char* const kNames[] = {"f.hlo.pb", "f.pb",  "f.pbtxt", "f.hlo_snapshot.pb",
                                       "f.pb.gz",  "f.hlo", "f"};
  const char* name = kNames[size ? data[size - 1] % 7 : 0];
  hlowb::OpenOptions options;
  options.max_decompressed_bytes = 16 << 20;
  options.proto.limits.max_shape_elements = int64_t{1} << 24;
  auto opened = hlowb::OpenHloBytes(bytes, name, options);
  // HLO text accepts modules the proto reader refuses by design (a parameter numbered beyond
  // the instruction count, shapes above the limits); the parser fuzzer covers text.
  if (opened.ok() && opened->format != hlowb::HloFileFormat::kHloText) {
    for (const auto& m : opened->modules) {
      std::string printed = hlowb::PrintModule(*m.module);
      xla::HloModuleProto proto;
      absl::Status st = hlowb::ModuleToProto(*m.module, &proto);
      if (!st.ok()) continue;  // e.g. a literal too large to encode
      auto again = hlowb::ModuleFromProto(proto, options.proto);
      if (!again.ok())
        Fail("written module does not re-read:", std::string(again.status().message()));
      if (hlowb::PrintModule(**again) != printed)
        Fail("re-read module prints differently:", printed);
    }
  }
  xla::LiteralProto lp;
  if (lp.ParseFromArray(data, static_cast<int>(size))) {
    auto lit = hlowb::LiteralFromProto(lp, options.proto.limits);
    if (lit.ok()) {
      xla::LiteralProto out;
      if (hlowb::LiteralToProto(*lit, &out, /*add_default_layout=*/false).ok()) {
        auto back = hlowb::LiteralFromProto(out, options.proto.limits);
        if (!back.ok() || !(*back == *lit)) Fail("literal does not round-trip", lp.DebugString());
      }
    }
  }
  return 0;
}
