// Hostile and broken inputs for the proto readers: inconsistent modules (dangling ids, missing
// computations, cycles, duplicates, invalid enums), absurd shapes (2^40 elements, negative
// dimensions, huge ranks), truncated/corrupted/wrong-message/oversized protobuf data and bad
// gzip. Each must give an error that says what and where, quickly, without crashing.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "core/proto/hlo.pb.h"
#include "core/proto/open_file.h"
#include "core/proto/proto_convert.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

constexpr char kModule[] = R"(HloModule bad, is_scheduled=true

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[4], q: f32[4]) -> f32[] {
  %p = f32[4]{0} parameter(0)
  %q = f32[4]{0} parameter(1)
  %m = f32[4]{0} multiply(f32[4]{0} %p, f32[4]{0} %q)
  %z = f32[] constant(0)
  ROOT %r = f32[] reduce(f32[4]{0} %m, f32[] %z), dimensions={0}, to_apply=%add
}
)";

xla::HloModuleProto GoodProto() {
  auto m = ParseModule(kModule);
  EXPECT_TRUE(m.ok()) << m.status();
  xla::HloModuleProto p;
  EXPECT_TRUE(ModuleToProto(**m, &p).ok());
  return p;
}

// Index 1 is the entry; its instructions are p, q, m, z, r.
xla::HloInstructionProto* Instr(xla::HloModuleProto* p, const std::string& name) {
  for (auto& c : *p->mutable_computations()) {
    for (auto& i : *c.mutable_instructions()) {
      if (i.name() == name) return &i;
    }
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

std::string ReadError(const xla::HloModuleProto& p) {
  auto t0 = std::chrono::steady_clock::now();
  auto m = ModuleFromProto(p);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  return m.ok() ? "" : std::string(m.status().message());
}

#define EXPECT_ERROR(proto, ...)                                                      \
  do {                                                                                \
    std::string error_ = ReadError(proto);                                            \
    EXPECT_FALSE(error_.empty()) << "no error";                                       \
    for (const char* part_ : {__VA_ARGS__}) {                                         \
      EXPECT_NE(error_.find(part_), std::string::npos) << part_ << " in: " << error_; \
    }                                                                                 \
  } while (0)

TEST(ProtoBadInput, GoodProtoReads) { EXPECT_EQ(ReadError(GoodProto()), ""); }

TEST(ProtoBadInput, DanglingReferences) {
  xla::HloModuleProto p = GoodProto();
  Instr(&p, "m")->set_operand_ids(1, 999999);
  EXPECT_ERROR(p, "computation 'main'", "instruction 'm'", "operand 1 refers to id 999999",
               "not an instruction of this computation");

  p = GoodProto();
  Instr(&p, "r")->add_control_predecessor_ids(424242);
  EXPECT_ERROR(p, "instruction 'r'", "control predecessor 0 refers to id 424242");

  p = GoodProto();
  Instr(&p, "r")->set_called_computation_ids(0, 77);
  EXPECT_ERROR(p, "instruction 'r'", "called computation 0 has id 77", "not in the module");

  p = GoodProto();
  p.set_entry_computation_name("nowhere");
  EXPECT_ERROR(p, "entry computation 'nowhere' is not in the module");

  p = GoodProto();
  p.clear_entry_computation_name();
  p.set_entry_computation_id(12345);
  EXPECT_ERROR(p, "entry computation id 12345 is not in the module");

  p = GoodProto();
  p.mutable_computations(1)->set_root_id(31337);
  EXPECT_ERROR(p, "computation 'main'", "root id 31337");

  // An operand from another computation is dangling too.
  p = GoodProto();
  Instr(&p, "m")->set_operand_ids(0, Instr(&p, "a")->id());
  EXPECT_ERROR(p, "instruction 'm'", "operand 0 refers to id");
}

TEST(ProtoBadInput, DuplicatesAndCycles) {
  xla::HloModuleProto p = GoodProto();
  Instr(&p, "q")->set_id(Instr(&p, "p")->id());
  EXPECT_ERROR(p, "instructions 'p' and 'q' have the same id");

  p = GoodProto();
  p.mutable_computations(1)->set_id(p.computations(0).id());
  EXPECT_ERROR(p, "computations 'add' and 'main' have the same id");

  p = GoodProto();
  Instr(&p, "q")->set_name("p");
  EXPECT_ERROR(p, "two instructions are named 'p'");

  p = GoodProto();
  p.mutable_computations(0)->set_name("main");
  EXPECT_ERROR(p, "two computations are named 'main'");

  p = GoodProto();
  Instr(&p, "p")->set_parameter_number(1);
  EXPECT_ERROR(p, "parameters 'p' and 'q' have the same number 1");

  p = GoodProto();
  Instr(&p, "p")->set_parameter_number(-1);
  EXPECT_ERROR(p, "negative parameter number -1");

  p = GoodProto();
  Instr(&p, "p")->set_parameter_number(int64_t{1} << 40);
  EXPECT_ERROR(p, "parameter 'p' has number 1099511627776");

  // m = multiply(p, q) becomes multiply(p, r) while r depends on m.
  p = GoodProto();
  Instr(&p, "m")->set_operand_ids(1, Instr(&p, "r")->id());
  EXPECT_ERROR(p, "computation 'main'", "cycle", "m -> r -> m");

  // Control edges count too.
  p = GoodProto();
  Instr(&p, "p")->add_control_predecessor_ids(Instr(&p, "r")->id());
  EXPECT_ERROR(p, "cycle");

  // The reducer calls itself.
  p = GoodProto();
  xla::HloInstructionProto* s = Instr(&p, "s");
  s->set_opcode("call");
  s->add_called_computation_ids(p.computations(0).id());
  EXPECT_ERROR(p, "computations call each other in a cycle: add -> add");
}

TEST(ProtoBadInput, InvalidValues) {
  xla::HloModuleProto p = GoodProto();
  Instr(&p, "m")->set_opcode("multiply-accumulate");
  EXPECT_ERROR(p, "instruction 'm'", "unknown opcode 'multiply-accumulate'");

  p = GoodProto();
  Instr(&p, "m")->mutable_shape()->set_element_type(static_cast<xla::PrimitiveType>(99));
  EXPECT_ERROR(p, "instruction 'm'", "invalid element type number 99");

  p = GoodProto();
  Instr(&p, "m")->mutable_shape()->set_dimensions(0, -4);
  EXPECT_ERROR(p, "instruction 'm'", "dimension 0 has negative size -4");

  p = GoodProto();
  Instr(&p, "m")->clear_shape();
  EXPECT_ERROR(p, "instruction 'm'", "has no shape");

  p = GoodProto();
  Instr(&p, "m")->set_fft_type(static_cast<xla::FftType>(9));
  EXPECT_ERROR(p, "instruction 'm'", "invalid fft_type value 9");

  p = GoodProto();
  Instr(&p, "m")->set_comparison_direction("XX");
  EXPECT_ERROR(p, "unknown comparison direction 'XX'");

  p = GoodProto();
  Instr(&p, "m")->set_fusion_kind("kWeird");
  EXPECT_ERROR(p, "unknown fusion kind 'kWeird'");

  p = GoodProto();
  auto* sharding = Instr(&p, "m")->mutable_sharding();
  sharding->set_type(xla::OpSharding::OTHER);
  sharding->add_tile_assignment_dimensions(2);
  EXPECT_ERROR(p, "tiled sharding has neither tile_assignment_devices nor iota dimensions");

  // Iota device lists: consistent counts, at most 2^32 devices, a real permutation.
  p = GoodProto();
  sharding = Instr(&p, "m")->mutable_sharding();
  sharding->set_type(xla::OpSharding::OTHER);
  sharding->add_tile_assignment_dimensions(4);
  sharding->add_iota_reshape_dims(3);
  EXPECT_ERROR(p, "iota tile assignment: 4 devices in the tile/group dimensions but 3");
  sharding->set_iota_reshape_dims(0, 4);
  sharding->add_iota_transpose_perm(1);
  EXPECT_ERROR(p, "the transpose is not a permutation of the 1 reshape dimensions");
  p = GoodProto();
  auto* iota = Instr(&p, "r")->mutable_iota_collective_device_list();
  iota->set_num_replica_groups(int64_t{1} << 20);
  iota->set_num_devices_per_group(int64_t{1} << 20);
  iota->add_iota_reshape_dims(int64_t{1} << 40);
  EXPECT_ERROR(p, "iota replica groups: negative sizes or more than 4294967296 devices");

  p = GoodProto();
  Instr(&p, "z")->mutable_literal()->mutable_shape()->add_dimensions(2);
  Instr(&p, "z")->mutable_literal()->add_f32s(1);
  EXPECT_ERROR(p, "instruction 'z'", "constant");

  // The schedule must be a permutation of each computation's instructions.
  p = GoodProto();
  auto& seq = (*p.mutable_schedule()->mutable_sequences())[p.computations(1).id()];
  seq.set_instruction_ids(0, seq.instruction_ids(1));
  EXPECT_ERROR(p, "computation 'main': the schedule lists instruction id", "twice");
  p = GoodProto();
  (*p.mutable_schedule()->mutable_sequences())[p.computations(1).id()].add_instruction_ids(5);
  EXPECT_ERROR(p, "the schedule lists 6 instructions but the computation has 5");
  p = GoodProto();
  (*p.mutable_schedule()->mutable_sequences())[555].add_instruction_ids(5);
  EXPECT_ERROR(p, "sequence for computation id 555, which is not in the module");
}

TEST(ProtoBadInput, AbsurdShapes) {
  xla::HloModuleProto p = GoodProto();
  auto* shape = Instr(&p, "m")->mutable_shape();
  shape->set_dimensions(0, int64_t{1} << 20);
  shape->add_dimensions(int64_t{1} << 20);
  shape->mutable_layout()->add_minor_to_major(1);
  EXPECT_ERROR(p, "instruction 'm'", "f32[1048576,1048576] has more than 549755813888 elements");

  // 2^40 elements overflowing through many dimensions also stops.
  p = GoodProto();
  shape = Instr(&p, "m")->mutable_shape();
  shape->clear_layout();
  shape->clear_dimensions();
  for (int i = 0; i < 64; ++i) shape->add_dimensions(1 << 20);
  EXPECT_ERROR(p, "has more than");

  p = GoodProto();
  shape = Instr(&p, "m")->mutable_shape();
  shape->clear_layout();
  shape->clear_dimensions();
  for (int i = 0; i < 100000; ++i) shape->add_dimensions(1);
  EXPECT_ERROR(p, "rank 100000, above the limit of 256");

  // A limit can be raised for exotic global shapes.
  p = GoodProto();
  shape = Instr(&p, "m")->mutable_shape();
  shape->set_dimensions(0, int64_t{1} << 20);
  shape->add_dimensions(int64_t{1} << 20);
  shape->mutable_layout()->add_minor_to_major(1);
  ProtoReadOptions lenient;
  lenient.limits.max_shape_elements = int64_t{1} << 41;
  EXPECT_TRUE(ModuleFromProto(p, lenient).ok());
}

std::string OpenError(std::string_view bytes, std::string_view name,
                      const OpenOptions& options = {}) {
  auto t0 = std::chrono::steady_clock::now();
  auto f = OpenHloBytes(bytes, name, options);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  return f.ok() ? "" : std::string(f.status().message());
}

std::string GoodBytes() {
  xla::HloProto hp;
  *hp.mutable_hlo_module() = GoodProto();
  return hp.SerializeAsString();
}

TEST(ProtoBadInput, TruncatedAndCorruptedFiles) {
  std::string good = GoodBytes();
  ASSERT_EQ(OpenError(good, "x.hlo.pb"), "");

  std::string e = OpenError(good.substr(0, good.size() / 2), "x.hlo.pb");
  EXPECT_NE(e.find("x.hlo.pb: not a readable HLO file; formats tried:"), std::string::npos) << e;
  EXPECT_NE(e.find("HloProto (binary): not a valid xla.HloProto encoding: field 1 "
                   "(xla.HloProto.hlo_module) at byte 0: length"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("runs past the end of the data"), std::string::npos) << e;

  std::string corrupt = good;
  corrupt[1] = static_cast<char>(0xff);  // the module's length varint no longer ends
  corrupt[2] = static_cast<char>(0xff);
  corrupt[3] = static_cast<char>(0xff);
  e = OpenError(corrupt, "x.hlo.pb");
  EXPECT_NE(e.find("HloProto (binary): not a valid xla.HloProto encoding"), std::string::npos) << e;

  corrupt = good;
  corrupt[0] = 0x0f;  // wire type 7 does not exist
  e = OpenError(corrupt, "x.hlo.pb");
  EXPECT_NE(e.find("invalid wire type 7"), std::string::npos) << e;

  e = OpenError("", "empty.hlo.pb");
  EXPECT_NE(e.find("the data is empty"), std::string::npos) << e;
}

TEST(ProtoBadInput, WrongMessage) {
  // A LiteralProto where an HloProto belongs: every format is tried and each says why not.
  xla::LiteralProto lit;
  lit.mutable_shape()->set_element_type(xla::F32);
  lit.add_f32s(1.5f);
  std::string e = OpenError(lit.SerializeAsString(), "lit.hlo.pb");
  for (const char* format :
       {"HloProto (binary)", "HloModuleProto (binary)", "HloSnapshot (binary)", "HLO text",
        "HloProto (text proto)", "HloModuleProto (text proto)", "HloSnapshot (text proto)"}) {
    EXPECT_NE(e.find(std::string("\n  ") + format + ": "), std::string::npos) << format << "\n"
                                                                              << e;
  }
  EXPECT_NE(e.find("skipped, binary data (NUL byte at offset"), std::string::npos) << e;
}

TEST(ProtoBadInput, HugeRepeatedCountsAndDeepNesting) {
  // A packed operand_ids field claiming a billion varints (8 GB) in a 20-byte message.
  std::string field = std::string("\xa2\x02", 2);  // tag: field 36, wire type 2
  uint64_t len = 8000000000ull;
  while (len >= 0x80) {
    field.push_back(static_cast<char>((len & 0x7f) | 0x80));
    len >>= 7;
  }
  field.push_back(static_cast<char>(len));
  field += "\x01\x02\x03";
  std::string e = OpenError(field, "huge.pb");
  EXPECT_NE(e.find("not a readable HLO file"), std::string::npos) << e;

  // Shapes nested 200 deep: protobuf's recursion limit, reported with a position.
  std::string shape = std::string("\x10\x0b", 2);  // element_type F32
  for (int i = 0; i < 200; ++i) {
    std::string wrapped = std::string("\x10\x0d", 2);  // TUPLE
    wrapped.push_back('\x22');                         // tuple_shapes (4), wire type 2
    uint64_t n = shape.size();
    while (n >= 0x80) {
      wrapped.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    wrapped.push_back(static_cast<char>(n));
    shape = wrapped + shape;
  }
  xla::ShapeProto parsed;
  EXPECT_FALSE(parsed.ParseFromString(shape));
  auto wrap = [](int field_number, const std::string& payload) {
    std::string s(1, static_cast<char>((field_number << 3) | 2));
    uint64_t n = payload.size();
    while (n >= 0x80) {
      s.push_back(static_cast<char>((n & 0x7f) | 0x80));
      n >>= 7;
    }
    s.push_back(static_cast<char>(n));
    return s + payload;
  };
  std::string hp = wrap(1, wrap(3, wrap(2, wrap(3, shape))));
  e = OpenError(hp, "deep.hlo.pb");
  EXPECT_NE(e.find("nested deeper than 100 levels"), std::string::npos) << e;
}

TEST(ProtoBadInput, GzipProblems) {
  // Named .gz but not compressed, and not anything else either.
  std::string e = OpenError("this is not compressed", "x.pb.gz");
  EXPECT_NE(e.find("gzip: not gzip data (it starts with bytes 74 68, not 1f 8b)"),
            std::string::npos)
      << e;

  // Named .gz, not compressed, but a valid HloProto: read with a warning.
  auto f = OpenHloBytes(GoodBytes(), "x.hlo.pb.gz");
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_FALSE(f->warnings.empty());
  EXPECT_NE(f->warnings[0].find("named .gz but not gzip data"), std::string::npos);

  auto gz = Gzip(GoodBytes());
  ASSERT_TRUE(gz.ok());
  f = OpenHloBytes(*gz, "x.hlo.pb.gz");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_TRUE(f->gzipped);

  e = OpenError(gz->substr(0, gz->size() - 12), "x.hlo.pb.gz");
  EXPECT_NE(e.find("gzip data: the compressed data is truncated"), std::string::npos) << e;

  std::string bad = *gz;
  for (size_t i = 12; i < bad.size() - 8; i += 7) bad[i] = static_cast<char>(bad[i] ^ 0x5a);
  e = OpenError(bad, "x.hlo.pb.gz");
  EXPECT_NE(e.find("gzip data:"), std::string::npos) << e;

  // Inflating beyond the limit stops at the limit.
  auto bomb = Gzip(std::string(8 << 20, '\0'));
  ASSERT_TRUE(bomb.ok());
  OpenOptions small;
  small.max_decompressed_bytes = 1 << 20;
  e = OpenError(*bomb, "bomb.pb.gz", small);
  EXPECT_NE(e.find("inflates to more than 1048576 bytes"), std::string::npos) << e;
}

TEST(ProtoBadInput, GarbageListsEveryFormatTried) {
  std::string garbage;
  for (int i = 0; i < 256; ++i) garbage.push_back(static_cast<char>((i * 73 + 11) & 0xff));
  std::string e = OpenError(garbage, "mystery.bin");
  EXPECT_EQ(e.rfind("mystery.bin: not a readable HLO file; formats tried:", 0), 0u) << e;
  for (const char* format :
       {"HloProto (binary): ", "HloModuleProto (binary): ", "HloSnapshot (binary): ",
        "HLO text: skipped, binary data", "HloProto (text proto): skipped",
        "HloModuleProto (text proto): skipped", "HloSnapshot (text proto): skipped"}) {
    EXPECT_NE(e.find(format), std::string::npos) << format << "\n" << e;
  }
  // Text that is neither HLO nor a text proto: both parsers' reasons appear.
  e = OpenError("hello world, this is not HLO", "notes.txt");
  EXPECT_NE(e.find("HLO text: notes.txt:1:7"), std::string::npos) << e;
  EXPECT_NE(e.find("HloProto (text proto): not a xla.HloProto text proto: line 1:"),
            std::string::npos)
      << e;
}

// A deterministic miniature of tests/fuzz/proto_fuzzer.cc: mutated encodings of a
// feature-rich module either fail cleanly or read into a module that survives a round trip.
TEST(ProtoBadInput, MutatedFilesNeverCrash) {
  std::vector<std::pair<std::string, std::string>> seeds;
  for (const char* file : {"attributes", "collectives_and_control", "layouts_and_shapes",
                           "literals", "ops", "stack_frames"}) {
    auto text =
        ReadFileToString(std::string(HLOWB_SOURCE_DIR) + "/tests/golden/print/" + file + ".hlo");
    ASSERT_TRUE(text.ok()) << text.status();
    auto m = ParseModule(*text);
    ASSERT_TRUE(m.ok()) << m.status();
    for (auto [format, name] : {std::pair{HloOutputFormat::kHloProto, "m.hlo.pb"},
                                std::pair{HloOutputFormat::kHloProtoText, "m.pbtxt"},
                                std::pair{HloOutputFormat::kHloSnapshot, "m.hlo_snapshot.pb"},
                                std::pair{HloOutputFormat::kHloModuleProto, "m.pb"}}) {
      auto bytes = EncodeHloFile(**m, format);
      ASSERT_TRUE(bytes.ok()) << bytes.status();
      seeds.emplace_back(*bytes, name);
    }
  }
  // HLOWB_MUTATIONS=N[,SEED] runs a longer campaign locally.
  int iterations = 2400;
  uint64_t state = 12345;
  if (const char* env = std::getenv("HLOWB_MUTATIONS")) {
    iterations = std::atoi(env);
    if (const char* comma = std::strchr(env, ',')) state = std::strtoull(comma + 1, nullptr, 10);
  }
  auto next = [&state](uint64_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (state >> 33) % n;
  };
  int read = 0, refused = 0;
  for (int iter = 0; iter < iterations; ++iter) {
    const auto& [seed, name] = seeds[iter % seeds.size()];
    std::string bytes = seed;
    int edits = 1 + static_cast<int>(next(4));
    for (int e = 0; e < edits; ++e) {
      size_t at = next(bytes.size());
      switch (next(4)) {
        case 0:
          bytes[at] = static_cast<char>(next(256));
          break;
        case 1:
          bytes[at] = static_cast<char>(bytes[at] ^ (1 << next(8)));
          break;
        case 2:
          bytes.erase(at, 1 + next(8));
          break;
        default:
          bytes.insert(at, 1, static_cast<char>(next(256)));
          break;
      }
      if (bytes.empty()) bytes = "x";
    }
    auto f = OpenHloBytes(bytes, name);
    if (!f.ok()) {
      ++refused;
      EXPECT_FALSE(f.status().message().empty());
      continue;
    }
    ++read;
    for (const auto& om : f->modules) {
      xla::HloModuleProto proto;
      if (!ModuleToProto(*om.module, &proto).ok()) continue;
      auto again = ModuleFromProto(proto);
      ASSERT_TRUE(again.ok()) << "iteration " << iter << ": " << again.status();
      EXPECT_EQ(PrintModule(**again), PrintModule(*om.module)) << "iteration " << iter;
    }
  }
  std::printf("mutated files: %d read, %d refused\n", read, refused);
  EXPECT_GT(read, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace hlowb
