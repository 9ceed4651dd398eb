// Text -> HloProto (binary and text proto) -> text over the whole shared corpus and the printer's
// golden inputs: the re-read module prints exactly like the original, is structurally equal
// (ModulesEqual), keeps instruction and computation ids, and the writer reports nothing it
// could not represent. Also checks the conversions XLA-written protos need (defaults XLA writes
// but does not print, a while's {body, condition} order) with a hand-built proto.
#include <algorithm>
#include <filesystem>
#include <ostream>
#include <regex>
#include <string>
#include <vector>

#include "core/proto/hlo.pb.h"
#include "core/proto/proto_convert.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

struct Source {
  std::string label;
  std::string path;
};

void PrintTo(const Source& s, std::ostream* os) { *os << s.label; }

std::vector<Source> Sources() {
  std::vector<Source> out;
  std::error_code ec;
  fs::path corpus(HLOWB_CORPUS_DIR);
  if (fs::is_directory(corpus, ec)) {
    for (const auto& e : fs::recursive_directory_iterator(corpus, ec)) {
      std::string ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".hlo" || ext == ".txt")) {
        out.push_back({"corpus/" + fs::relative(e.path(), corpus).string(), e.path().string()});
      }
    }
  }
  fs::path golden = fs::path(HLOWB_SOURCE_DIR) / "tests/golden/print";
  for (const auto& e : fs::directory_iterator(golden, ec)) {
    if (e.path().extension() == ".hlo") {
      out.push_back({"golden/" + e.path().filename().string(), e.path().string()});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Source& a, const Source& b) { return a.label < b.label; });
  return out;
}

// Lost items are reported as "... cannot be represented"; everything else is informational.
std::vector<std::string> Losses(const std::vector<std::string>& warnings) {
  std::vector<std::string> out;
  for (const std::string& w : warnings) {
    if (w.find("cannot be represented") != std::string::npos) out.push_back(w);
  }
  return out;
}

void ExpectSameIds(const Module& a, const Module& b) {
  ASSERT_EQ(a.computations().size(), b.computations().size());
  for (size_t c = 0; c < a.computations().size(); ++c) {
    const Computation& ca = *a.computations()[c];
    const Computation& cb = *b.computations()[c];
    EXPECT_EQ(ca.id(), cb.id()) << ca.name();
    ASSERT_EQ(ca.instruction_count(), cb.instruction_count());
    for (int i = 0; i < ca.instruction_count(); ++i) {
      EXPECT_EQ(ca.instructions()[i]->id(), cb.instructions()[i]->id())
          << ca.name() << "/" << ca.instructions()[i]->name();
    }
  }
}

// Protobuf's text format prints every float NaN as `nan`, so f32/f64/complex NaN signs and
// payloads cannot survive a text proto (16-bit and narrower types are bytes and do).
std::string WithoutNaNPayloads(std::string s) {
  static const std::regex kNaN("-?nan(\\(0x[0-9a-f]+\\))?");
  return std::regex_replace(s, kNaN, "nan");
}

// One module through binary and text proto; returns "" or what went wrong.
std::string RoundTrip(const Module& m) {
  const std::string expected = PrintModule(m);
  std::vector<std::string> warnings;
  xla::HloProto hp;
  absl::Status st = ModuleToProto(m, hp.mutable_hlo_module(), {}, &warnings);
  if (!st.ok()) return "write: " + std::string(st.message());
  std::vector<std::string> losses = Losses(warnings);
  if (!losses.empty()) return "writer lost: " + losses[0];

  std::string bytes;
  if (!hp.SerializeToString(&bytes)) return "serialize failed";
  xla::HloProto binary;
  if (!binary.ParseFromString(bytes)) return "binary re-parse failed";
  std::string text;
  if (!google::protobuf::TextFormat::PrintToString(hp, &text)) return "text print failed";
  xla::HloProto textual;
  if (!google::protobuf::TextFormat::ParseFromString(text, &textual)) return "text re-parse failed";

  const std::vector<std::pair<std::string, const xla::HloProto*>> readings = {{"binary", &binary},
                                                                              {"text", &textual}};
  for (const auto& [kind, proto] : readings) {
    std::vector<std::string> read_warnings;
    absl::StatusOr<std::unique_ptr<Module>> back =
        ModuleFromProto(proto->hlo_module(), {}, &read_warnings);
    if (!back.ok()) return kind + " read: " + std::string(back.status().message());
    if (!read_warnings.empty()) return kind + " read warned: " + read_warnings[0];
    std::string printed = PrintModule(**back);
    const bool lossy_nans = kind == "text" && WithoutNaNPayloads(expected) != expected;
    if (lossy_nans ? WithoutNaNPayloads(printed) != WithoutNaNPayloads(expected)
                   : printed != expected) {
      size_t at = 0;
      while (at < printed.size() && at < expected.size() && printed[at] == expected[at]) ++at;
      size_t from = at > 80 ? at - 80 : 0;
      return kind + ": printed module differs at byte " + std::to_string(at) + ":\n--- expected\n" +
             expected.substr(from, 200) + "\n--- got\n" + printed.substr(from, 200);
    }
    if (!lossy_nans &&
        PrintModule(**back, PrintOptions::Short()) != PrintModule(m, PrintOptions::Short())) {
      return kind + ": short form differs";
    }
    std::string why;
    if (!lossy_nans && !ModulesEqual(m, **back, &why)) return kind + ": modules differ: " + why;
    ExpectSameIds(m, **back);
  }
  return "";
}

class ProtoRoundTripTest : public ::testing::TestWithParam<Source> {};

TEST_P(ProtoRoundTripTest, TextToProtoToTextIsIdentical) {
  auto text = ReadFileToString(GetParam().path);
  ASSERT_TRUE(text.ok()) << text.status();
  std::vector<std::string_view> parts = SplitInputFile(*text);
  for (size_t i = 0; i < parts.size(); ++i) {
    ParseOptions options;
    options.enclosing_text = *text;
    auto m = ParseModule(parts[i], options);
    ASSERT_TRUE(m.ok()) << m.status();
    EXPECT_EQ(RoundTrip(**m), "") << GetParam().label << " part " << i + 1;
  }
}

std::string TestName(const ::testing::TestParamInfo<Source>& info) {
  std::string name = info.param.label;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(ProtoCorpus, ProtoRoundTripTest, ::testing::ValuesIn(Sources()), TestName);

TEST(ProtoRoundTripSummary, WholeCorpusRoundTrips) {
  int files = 0, modules = 0, ok = 0;
  for (const Source& s : Sources()) {
    if (s.label.rfind("corpus/", 0) != 0) continue;
    ++files;
    auto text = ReadFileToString(s.path);
    ASSERT_TRUE(text.ok());
    for (std::string_view part : SplitInputFile(*text)) {
      ++modules;
      ParseOptions options;
      options.enclosing_text = *text;
      auto m = ParseModule(part, options);
      if (m.ok() && RoundTrip(**m).empty()) ++ok;
    }
  }
  if (files == 0) GTEST_SKIP() << "corpus not found at " << HLOWB_CORPUS_DIR;
  std::printf("proto round trip: %d of %d corpus modules (%d files) identical\n", ok, modules,
              files);
  EXPECT_EQ(ok, modules);
  EXPECT_GE(files, 50);
}

// Every feature the text form has and XLA's schema spells differently (or not at all).
constexpr char kKitchenSink[] =
    R"(HloModule sink, is_scheduled=true, input_output_alias={ }, buffer_donor={ (0, {}) }, alias_passthrough_params=true, allow_spmd_sharding_propagation_to_parameters={true,false}, allow_spmd_sharding_propagation_to_output=true, replica_count=4, num_partitions=2, frontend_attributes={a="{quoted dict}", b={x=1}, c="plain"}, origin_recovery_table={x}, future_header=7

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=4 column=5 end_column=6}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

%sum (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %x, f32[] %y)
}

%cond (c: s32[]) -> pred[] {
  %c = s32[] parameter(0)
  %k = s32[] constant(3)
  ROOT %lt = pred[] compare(s32[] %c, s32[] %k), direction=LT, type=SIGNED
}

%body (b: s32[]) -> s32[] {
  %b = s32[] parameter(0)
  ROOT %n = s32[] add(s32[] %b, s32[] %b)
}

%fused (fp: f32[4]) -> f32[4] {
  %fp = f32[4]{0} parameter(0)
  ROOT %neg = f32[4]{0} negate(f32[4]{0} %fp)
}

ENTRY %main (p: f32[4], q: f32[4,8], i: s32[]) -> f32[4] {
  %i = s32[] parameter(2)
  %p = f32[4]{0} parameter(0), sharding={devices=[2,2]<=[4]T(0) last_tile_dim_replicate metadata={op_name="m"}}, metadata={op_name="p" stack_frame_id=1 preserve_layout=true}
  %q = f32[4,8]{0,1} parameter(1), sharding={devices=[1,2,2]<=[2,2]T(1,0) last_tile_dims={manual} shard_as 3}
  %w = s32[] while(s32[] %i), condition=%cond, body=%body
  %f = f32[4]{0} fusion(f32[4]{0} %p), kind=kLoop, calls=%fused
  %ar = f32[4]{0} all-reduce(f32[4]{0} %f), channel_id=0, replica_groups=[1,4]<=[4], use_global_device_ids=false, constrain_layout=true, to_apply=%sum, mode=whatever
  %ar2 = f32[4]{0} all-reduce(f32[4]{0} %ar), to_apply=%sum
  %cmp = pred[4]{0} compare(f32[4]{0} %ar, f32[4]{0} %ar2), direction=GT, type=FLOAT
  %cmp2 = pred[4]{0} compare(f32[4]{0} %ar, f32[4]{0} %ar2), direction=EQ
  %d = f32[4]{0} dot(f32[4,8]{0,1} %q, f32[8]{0} %v), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={default,default}, algorithm=dot_bf16_bf16_f32_x3
  %v = f32[8]{0} broadcast(f32[] %z), dimensions={}
  %z = f32[] constant(0)
  %cc = f32[4]{0} custom-call(f32[4]{0} %d), custom_call_target="t", to_apply=%sum, operand_layout_constraints={f32[4]{0}}, literal=s32[] 7, sharding={{maximal device=1}}
  %cc2 = f32[4]{0} custom-call(f32[4]{0} %d), custom_call_target="t2", called_computations={%sum}, frontend_attributes={k="{}"}
  %tk = (f32[4]{0}, s32[4]{0}) topk(f32[4]{0} %cc), k=2, largest=false
  %r = f32[2,2]{1,0} reshape(f32[4]{0} %cc2), inferred_dimension=1
  %io = s32[4]{0} iota(), iota_dimension=0
  %tr = f32[2,2]{0,1} transpose(f32[2,2]{1,0} %r), dimensions={1,0}, unknown_thing={1,2}, origin={{"tr"}}
  %cp = f32[4]{0} collective-permute(f32[4]{0} %cc2), channel_id=5, source_target_pairs={{0,1},{1,0}}
  %dom = f32[4]{0} domain(f32[4]{0} %cp), domain={kind="sharding", entry={maximal device=0}, exit={replicated}}
  %ex = f32[4]{0} exponential(f32[4]{0} %dom), result_accuracy={mode=default}
  %ex2 = f32[4]{0} exponential(f32[4]{0} %ex), result_accuracy={tolerance={atol=0.5,rtol=0.25,ulps=2}}
  ROOT %out = f32[4]{0} add(f32[4]{0} %ex2, f32[4]{0} %ex), control-predecessors={%w}, backend_config={"k":1}
}
)";

TEST(ProtoRoundTrip, KitchenSinkSurvives) {
  auto m = ParseModule(kKitchenSink);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(RoundTrip(**m), "");
}

// Text accepts iota device lists XLA's reader refuses; they travel in the extras, with a warning.
TEST(ProtoRoundTrip, InconsistentIotaListsSurviveInExtras) {
  auto m = ParseModule(R"(HloModule iota
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %e (p: f32[4]) -> f32[4] {
  %p = f32[4]{0} parameter(0), sharding={devices=[2,2]<=[3]}
  ROOT %r = f32[4]{0} all-reduce(f32[4]{0} %p), replica_groups=[2,2]<=[5], to_apply=%add
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(RoundTrip(**m), "");
  xla::HloModuleProto p;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ModuleToProto(**m, &p, {}, &warnings).ok());
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("cannot be written to XLA's OpSharding"), std::string::npos);
  EXPECT_NE(warnings[1].find("inconsistent iota replica groups"), std::string::npos);
}

TEST(ProtoRoundTrip, WorkbenchExtrasAreNeededAndReported) {
  auto m = ParseModule(kKitchenSink);
  ASSERT_TRUE(m.ok()) << m.status();
  xla::HloModuleProto strict;
  std::vector<std::string> warnings;
  ProtoWriteOptions options;
  options.workbench_extensions = false;
  ASSERT_TRUE(ModuleToProto(**m, &strict, options, &warnings).ok());
  std::string all;
  for (const std::string& w : warnings) all += w + "\n";
  EXPECT_NE(all.find("replica_count=4 is kept by XLA in HloModuleConfig"), std::string::npos)
      << all;
  EXPECT_NE(all.find("attribute 'unknown_thing' is not modeled"), std::string::npos) << all;
  EXPECT_NE(all.find("dropped (not in XLA's schema)"), std::string::npos) << all;
  EXPECT_FALSE(strict.has_hlowb_extras());
  for (const auto& c : strict.computations()) {
    for (const auto& i : c.instructions()) EXPECT_FALSE(i.has_hlowb_extras()) << i.name();
  }
  auto back = ModuleFromProto(strict);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ((*back)->config().replica_count, 1);  // XLA's schema has no place for it

  options.fail_on_loss = true;
  absl::Status st = ModuleToProto(**m, &strict, options);
  EXPECT_EQ(st.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(std::string(st.message()).find("replica_count"), std::string::npos) << st;
}

// A module as XLA writes it: comparison types, default precisions and empty replica groups are
// spelled out, a while lists {body, condition}, and instruction ids are (computation << 32) | n.
TEST(ProtoRoundTrip, ReadsXlaStyleProtoLikeXlaPrintsIt) {
  constexpr char kProto[] = R"pb(
    name: "xla_style"
    entry_computation_name: "main"
    entry_computation_id: 3
    id: 42
    host_program_shape {
      parameters {
        element_type: F32
        dimensions: 4
        layout { minor_to_major: 0 }
      }
      result {
        element_type: F32
        dimensions: 4
        layout { minor_to_major: 0 }
      }
      parameter_names: "p"
    }
    input_output_alias {}
    buffer_donor {}
    computations {
      name: "add"
      id: 1
      root_id: 4294967298
      instructions {
        name: "x"
        opcode: "parameter"
        shape { element_type: F32 }
        id: 4294967296
      }
      instructions {
        name: "y"
        opcode: "parameter"
        shape { element_type: F32 }
        id: 4294967297
        parameter_number: 1
      }
      instructions {
        name: "s"
        opcode: "add"
        shape { element_type: F32 }
        id: 4294967298
        operand_ids: 4294967296
        operand_ids: 4294967297
      }
    }
    computations {
      name: "cond"
      id: 2
      root_id: 8589934593
      instructions {
        name: "c"
        opcode: "parameter"
        shape {
          element_type: F32
          dimensions: 4
          layout { minor_to_major: 0 }
        }
        id: 8589934592
      }
      instructions {
        name: "b"
        opcode: "constant"
        shape { element_type: PRED }
        id: 8589934593
        literal {
          shape {
            element_type: PRED
            layout {}
          }
          preds: true
        }
      }
    }
    computations {
      name: "body"
      id: 4
      root_id: 17179869184
      instructions {
        name: "bp"
        opcode: "parameter"
        id: 17179869184
        shape {
          element_type: F32
          dimensions: 4
          layout { minor_to_major: 0 }
        }
      }
    }
    computations {
      name: "main"
      id: 3
      root_id: 12884901892
      instructions {
        name: "p"
        opcode: "parameter"
        id: 12884901888
        shape {
          element_type: F32
          dimensions: 4
          layout { minor_to_major: 0 }
        }
      }
      instructions {
        name: "cmp"
        opcode: "compare"
        id: 12884901889
        shape {
          element_type: PRED
          dimensions: 4
          layout { minor_to_major: 0 }
        }
        operand_ids: 12884901888
        operand_ids: 12884901888
        comparison_direction: "LT"
        comparison_type: "FLOAT"
      }
      instructions {
        name: "ar"
        opcode: "all-reduce"
        id: 12884901890
        shape {
          element_type: F32
          dimensions: 4
          layout { minor_to_major: 0 }
        }
        operand_ids: 12884901888
        called_computation_ids: 1
      }
      instructions {
        name: "d"
        opcode: "dot"
        id: 12884901891
        shape { element_type: F32 }
        operand_ids: 12884901890
        operand_ids: 12884901890
        dot_dimension_numbers { lhs_contracting_dimensions: 0 rhs_contracting_dimensions: 0 }
        precision_config { operand_precision: DEFAULT operand_precision: DEFAULT }
      }
      instructions {
        name: "w"
        opcode: "while"
        id: 12884901892
        shape {
          element_type: F32
          dimensions: 4
          layout { minor_to_major: 0 }
        }
        operand_ids: 12884901890
        called_computation_ids: 4
        called_computation_ids: 2
      }
    }
  )pb";
  xla::HloModuleProto proto;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kProto, &proto));
  std::vector<std::string> warnings;
  auto m = ModuleFromProto(proto, {}, &warnings);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_TRUE(warnings.empty()) << warnings[0];
  std::string text = PrintModule(**m);
  // XLA prints these without the defaults it stores.
  EXPECT_NE(text.find("compare(f32[4]{0} %p, f32[4]{0} %p), direction=LT\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("all-reduce(f32[4]{0} %p), replica_groups={}, to_apply=%add"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("condition=%cond, body=%body"), std::string::npos) << text;
  EXPECT_NE(text.find("entry_computation_layout={(f32[4]{0})->f32[4]{0}}"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("input_output_alias"), std::string::npos) << text;
  const Computation* main = (*m)->entry();
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->name(), "main");
  EXPECT_EQ(main->instructions()[0]->id(), int64_t{12884901888});
  EXPECT_EQ((*m)->id(), 42);
  // And it survives our own round trip unchanged.
  EXPECT_EQ(RoundTrip(**m), "");
}

}  // namespace
}  // namespace hlowb
