// OpenHloFile over every supported container (HLO text with and without splitting, HloProto with
// its buffer assignment, bare HloModuleProto, text protos, HloSnapshot, gzip), chosen by name
// and by content; OpenLiteralFile; and the `hlowb convert` / `hlowb literal` commands end to end.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "core/proto/hlo.pb.h"
#include "core/proto/open_file.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

constexpr char kModule[] = R"(HloModule open_me, replica_count=2

ENTRY %main (p: f32[2], q: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %q = f32[2]{0} parameter(1)
  ROOT %a = f32[2]{0} add(f32[2]{0} %p, f32[2]{0} %q)
}
)";

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("hlowb_open_" + std::to_string(getpid()) + "_" + std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

std::unique_ptr<Module> Parsed() {
  auto m = ParseModule(kModule);
  EXPECT_TRUE(m.ok()) << m.status();
  return std::move(*m);
}

std::string Write(const TempDir& dir, const std::string& name, HloOutputFormat format,
                  const EncodeOptions& options = {}) {
  auto bytes = EncodeHloFile(*Parsed(), format, options);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  std::string path = dir.File(name);
  EXPECT_TRUE(WriteStringToFile(path, *bytes).ok());
  return path;
}

TEST(ProtoOpenFile, EveryFormatByNameAndByContent) {
  TempDir dir;
  const std::string expected = PrintModule(*Parsed());
  struct Case {
    std::string name;
    HloOutputFormat written;
    bool gzip;
    HloFileFormat detected;
  };
  const std::vector<Case> cases = {
      {"a.hlo", HloOutputFormat::kHloText, false, HloFileFormat::kHloText},
      {"a.hlo.pb", HloOutputFormat::kHloProto, false, HloFileFormat::kHloProto},
      {"a.module.pb", HloOutputFormat::kHloModuleProto, false, HloFileFormat::kHloModuleProto},
      {"a.pbtxt", HloOutputFormat::kHloProtoText, false, HloFileFormat::kHloProtoText},
      {"a.hlo_snapshot.pb", HloOutputFormat::kHloSnapshot, false, HloFileFormat::kHloSnapshot},
      {"a.hlo.pb.gz", HloOutputFormat::kHloProto, true, HloFileFormat::kHloProto},
      {"a.hlo.gz", HloOutputFormat::kHloText, true, HloFileFormat::kHloText},
      // Names that say nothing (or the wrong thing): the content decides.
      {"snapshot_named.hlo.pb", HloOutputFormat::kHloSnapshot, false, HloFileFormat::kHloSnapshot},
      {"module_as.hlo.pb", HloOutputFormat::kHloModuleProto, false, HloFileFormat::kHloModuleProto},
      {"noext", HloOutputFormat::kHloProto, false, HloFileFormat::kHloProto},
      {"noext_text", HloOutputFormat::kHloText, false, HloFileFormat::kHloText},
      {"proto.txt", HloOutputFormat::kHloProtoText, false, HloFileFormat::kHloProtoText},
      {"zipped", HloOutputFormat::kHloModuleProto, true, HloFileFormat::kHloModuleProto},
  };
  for (const Case& c : cases) {
    EncodeOptions options;
    options.gzip = c.gzip;
    std::string path = Write(dir, c.name, c.written, options);
    auto f = OpenHloFile(path);
    ASSERT_TRUE(f.ok()) << c.name << ": " << f.status();
    EXPECT_EQ(f->format, c.detected) << c.name << ": " << HloFileFormatName(f->format);
    EXPECT_EQ(f->gzipped, c.gzip) << c.name;
    ASSERT_EQ(f->modules.size(), 1u);
    EXPECT_EQ(PrintModule(*f->modules[0].module), expected) << c.name;
    EXPECT_EQ(f->modules[0].label, path);
  }
}

TEST(ProtoOpenFile, SplitInputFile) {
  TempDir dir;
  std::string path = dir.File("two.hlo");
  ASSERT_TRUE(WriteStringToFile(path, std::string(kModule) + "// -----\n" + kModule).ok());
  OpenOptions options;
  options.split_input_file = true;
  auto f = OpenHloFile(path, options);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->modules.size(), 2u);
  EXPECT_EQ(f->modules[1].label, path + "#2");
  // Unsplit, the second HloModule line is an error, reported with its line number.
  auto g = OpenHloFile(path);
  ASSERT_FALSE(g.ok());
  EXPECT_NE(std::string(g.status().message()).find("two.hlo:9:"), std::string::npos) << g.status();
}

TEST(ProtoOpenFile, SnapshotArgumentsResultAndBufferAssignment) {
  TempDir dir;
  SnapshotData data;
  auto a0 = ParseShapedLiteral("f32[2]{0} {1, 2}");
  auto a1 = ParseShapedLiteral("f32[2]{0} {10, nan}");
  auto r = ParseShapedLiteral("f32[2]{0} {11, nan}");
  ASSERT_TRUE(a0.ok() && a1.ok() && r.ok());
  data.arguments.push_back(std::move(*a0));
  data.arguments.push_back(std::move(*a1));
  data.result = std::move(*r);
  data.execution_platform = "CUDA";
  xla::BufferAssignmentProto assignment;
  assignment.add_buffer_allocations()->set_size(8);
  EncodeOptions options;
  options.snapshot = &data;
  options.buffer_assignment = &assignment;
  std::string path = Write(dir, "m.hlo_snapshot.pb", HloOutputFormat::kHloSnapshot, options);
  auto f = OpenHloFile(path);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->is_snapshot);
  ASSERT_EQ(f->arguments.size(), 2u);
  EXPECT_EQ(PrintShapedLiteral(f->arguments[1]), "f32[2]{0} {10, nan}");
  ASSERT_TRUE(f->result.has_value());
  EXPECT_EQ(PrintLiteralData(*f->result), "{11, nan}");
  EXPECT_EQ(f->execution_platform, "CUDA");
  ASSERT_NE(f->buffer_assignment, nullptr);
  EXPECT_EQ(f->buffer_assignment->buffer_allocations(0).size(), 8);

  auto lits = OpenLiteralFile(path);
  ASSERT_TRUE(lits.ok()) << lits.status();
  EXPECT_EQ(lits->description, "HloSnapshot of module 'open_me' run on CUDA");
  ASSERT_EQ(lits->literals.size(), 3u);
  EXPECT_EQ(lits->literals[0].name, "argument 0 (p)");
  EXPECT_EQ(lits->literals[2].name, "result");

  // A snapshot whose argument count does not match the entry is read, with a warning.
  data.arguments.pop_back();
  path = Write(dir, "short.hlo_snapshot.pb", HloOutputFormat::kHloSnapshot, options);
  f = OpenHloFile(path);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_FALSE(f->warnings.empty());
  EXPECT_NE(f->warnings.back().find("has 1 arguments but the entry computation has 2"),
            std::string::npos);
}

TEST(ProtoOpenFile, LiteralFiles) {
  TempDir dir;
  auto lit = ParseShapedLiteral("bf16[2,2] {{1, -inf}, {nan, 0.5}}");
  ASSERT_TRUE(lit.ok());
  xla::LiteralProto proto;
  ASSERT_TRUE(LiteralToProto(*lit, &proto).ok());
  std::string bin = dir.File("x.literal.pb");
  ASSERT_TRUE(WriteStringToFile(bin, proto.SerializeAsString()).ok());
  auto f = OpenLiteralFile(bin);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->description, "LiteralProto (binary)");
  EXPECT_EQ(PrintLiteralData(f->literals[0].literal), "{ { 1, -inf }, { nan, 0.5 } }");

  std::string text = dir.File("x.txt");
  ASSERT_TRUE(WriteStringToFile(text, "s4[3] {-8, 0, 7}").ok());
  f = OpenLiteralFile(text);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->description, "HLO literal text");

  std::string junk = dir.File("junk");
  ASSERT_TRUE(WriteStringToFile(junk, "nothing useful").ok());
  f = OpenLiteralFile(junk);
  ASSERT_FALSE(f.ok());
  std::string e(f.status().message());
  EXPECT_NE(e.find("no literals found; formats tried:"), std::string::npos) << e;
  EXPECT_NE(e.find("LiteralProto (binary):"), std::string::npos) << e;
  EXPECT_NE(e.find("HLO literal text:"), std::string::npos) << e;
}

// --- CLI ---------------------------------------------------------------------------------------

std::string RunHlowb(const std::string& args, int* code) {
  std::string cmd = std::string(HLOWB_BINARY) + " " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int status = pclose(pipe);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(ProtoCli, ConvertBetweenFormats) {
  TempDir dir;
  std::string src = dir.File("in.hlo");
  ASSERT_TRUE(WriteStringToFile(src, kModule).ok());
  int code = -1;
  std::string out = RunHlowb("convert " + src + " -o " + dir.File("out.hlo.pb"), &code);
  EXPECT_EQ(code, 0) << out;
  // replica_count lives in HloModuleConfig in XLA; the user is told.
  EXPECT_NE(out.find("warning: module 'open_me': replica_count=2 is kept by XLA in "
                     "HloModuleConfig"),
            std::string::npos)
      << out;
  out = RunHlowb("convert " + dir.File("out.hlo.pb") + " -o " + dir.File("out.pbtxt.gz"), &code);
  EXPECT_EQ(code, 0) << out;
  out = RunHlowb("convert " + dir.File("out.pbtxt.gz") + " -o " + dir.File("back.hlo"), &code);
  EXPECT_EQ(code, 0) << out;
  auto back = ReadFileToString(dir.File("back.hlo"));
  ASSERT_TRUE(back.ok());
  // Text comes out in XLA's dump style (operands without their shapes).
  EXPECT_EQ(*back, PrintModule(*Parsed(), PrintOptions::Dump()));
  EXPECT_NE(back->find("add(%p, %q)"), std::string::npos) << *back;

  out = RunHlowb("convert " + src + " -o " + dir.File("m.bin") + " --format=module-pb", &code);
  EXPECT_EQ(code, 0) << out;
  auto f = OpenHloFile(dir.File("m.bin"));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->format, HloFileFormat::kHloModuleProto);

  out = RunHlowb("convert " + src + " -o " + dir.File("short.hlo") + " --format=hlo-short", &code);
  EXPECT_EQ(code, 0) << out;
  auto s = ReadFileToString(dir.File("short.hlo"));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, PrintModule(*Parsed(), PrintOptions::Short()));

  // --strict-xla drops what XLA's schema cannot carry, and says so.
  out = RunHlowb("convert " + src + " -o " + dir.File("strict.hlo.pb") + " --strict-xla", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("dropped (not in XLA's schema): replica_count"), std::string::npos) << out;
}

TEST(ProtoCli, ConvertErrors) {
  TempDir dir;
  int code = -1;
  std::string out = RunHlowb("convert", &code);
  EXPECT_EQ(code, 2) << out;
  out = RunHlowb("convert a.hlo", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("missing -o OUT"), std::string::npos) << out;
  out = RunHlowb("convert a.hlo -o b.weird", &code);
  EXPECT_EQ(code, 2) << out;
  EXPECT_NE(out.find("cannot tell the output format"), std::string::npos) << out;
  out = RunHlowb("convert a.hlo -o b.pb --format=xml", &code);
  EXPECT_EQ(code, 2) << out;
  std::string junk = dir.File("junk.hlo.pb");
  ASSERT_TRUE(WriteStringToFile(junk, std::string("\x0a\xff\xff", 3)).ok());
  out = RunHlowb("convert " + junk + " -o " + dir.File("x.hlo"), &code);
  EXPECT_EQ(code, 1) << out;
  EXPECT_NE(out.find("formats tried:"), std::string::npos) << out;
}

TEST(ProtoCli, LiteralCommand) {
  TempDir dir;
  SnapshotData data;
  auto a0 = ParseShapedLiteral("f32[4]{0} {1, -2, inf, nan}");
  auto a1 = ParseShapedLiteral("f32[2]{0} {0.5, 0.25}");
  ASSERT_TRUE(a0.ok() && a1.ok());
  data.arguments.push_back(std::move(*a0));
  data.arguments.push_back(std::move(*a1));
  EncodeOptions options;
  options.snapshot = &data;
  std::string path = Write(dir, "s.hlo_snapshot.pb", HloOutputFormat::kHloSnapshot, options);
  int code = -1;
  std::string out = RunHlowb("literal " + path, &code);
  EXPECT_EQ(code, 0) << out;
  // XLA's Literal::ToString form by default (no layout), the one-line form on request.
  EXPECT_NE(out.find("argument 0 (p): f32[4] {1, -2, inf, nan}\n"), std::string::npos) << out;
  EXPECT_NE(out.find("argument 1 (q): f32[2] {0.5, 0.25}\n"), std::string::npos) << out;
  out = RunHlowb("literal " + path + " --literal_format=compact", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("argument 0 (p): f32[4]{0} {1, -2, inf, nan}\n"), std::string::npos) << out;
  out = RunHlowb("literal " + path + " --literal_format=fancy", &code);
  EXPECT_EQ(code, 2) << out;
  out = RunHlowb("literal " + path + " --summary", &code);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("argument 0 (p): f32[4]{0} elements=4 min=-2 max=1 mean=-0.5 nan=1 inf=1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("argument 1 (q): f32[2]{0} elements=2 min=0.25 max=0.5 mean=0.375 nan=0 "
                     "inf=0\n"),
            std::string::npos)
      << out;
  out = RunHlowb("literal", &code);
  EXPECT_EQ(code, 2) << out;
  out = RunHlowb("literal " + dir.File("missing.pb"), &code);
  EXPECT_EQ(code, 1) << out;
}

}  // namespace
}  // namespace hlowb
