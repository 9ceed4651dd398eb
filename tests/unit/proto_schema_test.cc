// Proves the schema: (1) a `.hlo.pb` written by the workbench decodes with
// `protoc --decode=xla.HloProto` against the project's own .proto files and shows the expected
// fields; (2) message and field numbers match XLA's as listed in hlo-format.md §4 (a wrong
// number would still round-trip through our own reader, so it is checked separately); (3) raw
// bytes hand-encoded with XLA's numbers decode to the right values.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "core/proto/hlo.pb.h"
#include "core/proto/open_file.h"
#include "core/proto/proto_convert.h"
#include "core/proto/xla_data.pb.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

constexpr char kModule[] =
    R"(HloModule schema_test, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p: f32[2,3]) -> f32[3] {
  %p = f32[2,3]{1,0} parameter(0), sharding={devices=[2,1]<=[2]}, metadata={op_name="x" source_line=7}
  %z = f32[] constant(0.5)
  ROOT %r = f32[3]{0} reduce(f32[2,3]{1,0} %p, f32[] %z), dimensions={0}, to_apply=%add
}
)";

std::string RunCommand(const std::string& cmd, int* status) {
  std::string out;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  *status = pclose(pipe);
  return out;
}

TEST(ProtoSchema, ProtocDecodesWrittenHloPb) {
  auto m = ParseModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status();
  auto bytes = EncodeHloFile(**m, HloOutputFormat::kHloProto);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  fs::path file =
      fs::temp_directory_path() / ("hlowb_schema_test_" + std::to_string(getpid()) + ".hlo.pb");
  ASSERT_TRUE(WriteStringToFile(file.string(), *bytes).ok());
  std::string cmd = std::string("'") + HLOWB_PROTOC + "' --proto_path='" + HLOWB_PROTO_DIR +
                    "' --proto_path='" + HLOWB_PROTOBUF_INCLUDE_DIR +
                    "' --decode=xla.HloProto hlo.proto < '" + file.string() + "' 2>&1";
  int status = -1;
  std::string out = RunCommand(cmd, &status);
  fs::remove(file);
  ASSERT_EQ(status, 0) << cmd << "\n" << out;
  for (const char* expected : {
           "hlo_module {",
           "name: \"schema_test\"",
           "entry_computation_name: \"main\"",
           "computations {",
           "opcode: \"reduce\"",
           "opcode: \"parameter\"",
           "element_type: F32",
           "minor_to_major: 1",
           "dimensions: 3",
           "operand_ids:",
           "called_computation_ids:",
           "root_id:",
           "host_program_shape {",
           "type: OTHER",
           "tile_assignment_dimensions: 2",
           "iota_reshape_dims: 2",
           "op_name: \"x\"",
           "source_line: 7",
           "f32s: 0.5",
       }) {
    EXPECT_NE(out.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << out;
  }
  // Nothing the decoder did not know: every field has a name in the schema.
  EXPECT_EQ(out.find("\n  1: "), std::string::npos) << out;
}

TEST(ProtoSchema, ProtocDecodesWrittenSnapshot) {
  auto m = ParseModule(kModule);
  ASSERT_TRUE(m.ok()) << m.status();
  auto arg = ParseShapedLiteral("f32[2,3] {{1, 2, 3}, {4, 5, 6}}");
  ASSERT_TRUE(arg.ok()) << arg.status();
  SnapshotData data;
  data.arguments.push_back(std::move(*arg));
  data.execution_platform = "Host";
  EncodeOptions options;
  options.snapshot = &data;
  auto bytes = EncodeHloFile(**m, HloOutputFormat::kHloSnapshot, options);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  fs::path file =
      fs::temp_directory_path() / ("hlowb_schema_snap_" + std::to_string(getpid()) + ".pb");
  ASSERT_TRUE(WriteStringToFile(file.string(), *bytes).ok());
  std::string cmd = std::string("'") + HLOWB_PROTOC + "' --proto_path='" + HLOWB_PROTO_DIR +
                    "' --proto_path='" + HLOWB_PROTOBUF_INCLUDE_DIR +
                    "' --decode=xla.HloSnapshot hlo.proto < '" + file.string() + "' 2>&1";
  int status = -1;
  std::string out = RunCommand(cmd, &status);
  fs::remove(file);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(out.find("arguments {"), std::string::npos) << out;
  EXPECT_NE(out.find("f32s: 6"), std::string::npos) << out;
  EXPECT_NE(out.find("execution_platform: \"Host\""), std::string::npos) << out;
  EXPECT_NE(out.find("hlo {\n  hlo_module {"), std::string::npos) << out;
}

// (message, field, number) from hlo-format.md §4.
TEST(ProtoSchema, FieldNumbersMatchXla) {
  const std::vector<std::tuple<std::string, std::string, int>> kTable = {
      {"xla.HloProto", "hlo_module", 1},
      {"xla.HloProto", "buffer_assignment", 3},
      {"xla.HloSnapshot", "hlo", 1},
      {"xla.HloSnapshot", "arguments", 2},
      {"xla.HloSnapshot", "result", 3},
      {"xla.HloSnapshot", "execution_platform", 4},
      {"xla.HloModuleProto", "name", 1},
      {"xla.HloModuleProto", "entry_computation_name", 2},
      {"xla.HloModuleProto", "computations", 3},
      {"xla.HloModuleProto", "host_program_shape", 4},
      {"xla.HloModuleProto", "id", 5},
      {"xla.HloModuleProto", "entry_computation_id", 6},
      {"xla.HloModuleProto", "schedule", 7},
      {"xla.HloModuleProto", "input_output_alias", 8},
      {"xla.HloModuleProto", "cross_program_prefetches", 10},
      {"xla.HloModuleProto", "spmd_output_sharding", 12},
      {"xla.HloModuleProto", "stack_frame_index", 17},
      {"xla.HloModuleProto", "buffer_donor", 18},
      {"xla.HloModuleProto", "frontend_attributes", 19},
      {"xla.HloComputationProto", "instructions", 2},
      {"xla.HloComputationProto", "program_shape", 4},
      {"xla.HloComputationProto", "id", 5},
      {"xla.HloComputationProto", "root_id", 6},
      {"xla.HloComputationProto", "execution_thread", 8},
      {"xla.HloInstructionProto", "name", 1},
      {"xla.HloInstructionProto", "opcode", 2},
      {"xla.HloInstructionProto", "shape", 3},
      {"xla.HloInstructionProto", "metadata", 7},
      {"xla.HloInstructionProto", "literal", 8},
      {"xla.HloInstructionProto", "parameter_number", 9},
      {"xla.HloInstructionProto", "fusion_kind", 11},
      {"xla.HloInstructionProto", "tuple_index", 13},
      {"xla.HloInstructionProto", "dimensions", 14},
      {"xla.HloInstructionProto", "window", 15},
      {"xla.HloInstructionProto", "convolution_dimension_numbers", 16},
      {"xla.HloInstructionProto", "slice_dimensions", 17},
      {"xla.HloInstructionProto", "dynamic_slice_sizes", 20},
      {"xla.HloInstructionProto", "channel_id", 26},
      {"xla.HloInstructionProto", "custom_call_target", 28},
      {"xla.HloInstructionProto", "dot_dimension_numbers", 30},
      {"xla.HloInstructionProto", "gather_slice_sizes", 34},
      {"xla.HloInstructionProto", "id", 35},
      {"xla.HloInstructionProto", "operand_ids", 36},
      {"xla.HloInstructionProto", "control_predecessor_ids", 37},
      {"xla.HloInstructionProto", "called_computation_ids", 38},
      {"xla.HloInstructionProto", "sharding", 40},
      {"xla.HloInstructionProto", "backend_config", 43},
      {"xla.HloInstructionProto", "replica_groups", 49},
      {"xla.HloInstructionProto", "feature_group_count", 50},
      {"xla.HloInstructionProto", "precision_config", 51},
      {"xla.HloInstructionProto", "source_target_pairs", 52},
      {"xla.HloInstructionProto", "comparison_direction", 63},
      {"xla.HloInstructionProto", "frontend_attributes", 68},
      {"xla.HloInstructionProto", "comparison_type", 72},
      {"xla.HloInstructionProto", "output_operand_aliasing", 74},
      {"xla.HloInstructionProto", "custom_call_api_version", 77},
      {"xla.HloInstructionProto", "async_execution_thread", 79},
      {"xla.HloInstructionProto", "cross_program_prefetch_index", 80},
      {"xla.HloInstructionProto", "statistics_viz", 82},
      {"xla.HloInstructionProto", "collective_device_list", 87},
      {"xla.HloInstructionProto", "original_value", 88},
      {"xla.HloInstructionProto", "ragged_dot_dimension_numbers", 90},
      {"xla.HloInstructionProto", "result_accuracy", 91},
      {"xla.HloInstructionProto", "iota_collective_device_list", 92},
      {"xla.HloInstructionProto", "conv_kind", 97},
      {"xla.ShapeProto", "element_type", 2},
      {"xla.ShapeProto", "dimensions", 3},
      {"xla.ShapeProto", "tuple_shapes", 4},
      {"xla.ShapeProto", "layout", 5},
      {"xla.ShapeProto", "is_dynamic_dimension", 6},
      {"xla.LayoutProto", "minor_to_major", 1},
      {"xla.LayoutProto", "tiles", 6},
      {"xla.LayoutProto", "element_size_in_bits", 7},
      {"xla.LayoutProto", "memory_space", 8},
      {"xla.LayoutProto", "tail_padding_alignment_in_elements", 16},
      {"xla.LayoutProto", "split_configs", 17},
      {"xla.OpMetadata", "op_type", 1},
      {"xla.OpMetadata", "op_name", 2},
      {"xla.OpMetadata", "source_line", 4},
      {"xla.OpMetadata", "deduplicated_name", 12},
      {"xla.OpMetadata", "stack_frame_id", 15},
      {"xla.OpMetadata", "scheduling_name", 16},
      {"xla.OpMetadata", "source_end_column", 19},
      {"xla.OpSharding", "type", 1},
      {"xla.OpSharding", "tile_assignment_dimensions", 3},
      {"xla.OpSharding", "tile_assignment_devices", 4},
      {"xla.OpSharding", "tuple_shardings", 5},
      {"xla.OpSharding", "replicate_on_last_tile_dim", 6},
      {"xla.OpSharding", "last_tile_dims", 8},
      {"xla.OpSharding", "iota_reshape_dims", 9},
      {"xla.OpSharding", "iota_transpose_perm", 10},
      {"xla.OpSharding", "shard_group_type", 13},
      {"xla.LiteralProto", "shape", 1},
      {"xla.LiteralProto", "preds", 2},
      {"xla.LiteralProto", "u8s", 3},
      {"xla.LiteralProto", "s32s", 4},
      {"xla.LiteralProto", "f32s", 8},
      {"xla.LiteralProto", "tuple_literals", 10},
      {"xla.LiteralProto", "f16s", 11},
      {"xla.LiteralProto", "c64s", 12},
      {"xla.LiteralProto", "bf16s", 13},
      {"xla.LiteralProto", "s8s", 15},
      {"xla.LiteralProto", "c128s", 18},
      {"xla.LiteralProto", "f8e5m2s", 19},
      {"xla.LiteralProto", "f8e4m3fns", 20},
      {"xla.LiteralProto", "s4s", 21},
      {"xla.LiteralProto", "u4s", 22},
      {"xla.LiteralProto", "f8e4m3b11fnuzs", 23},
      {"xla.LiteralProto", "f8e5m2fnuzs", 24},
      {"xla.LiteralProto", "f8e4m3fnuzs", 25},
      {"xla.LiteralProto", "s2s", 26},
      {"xla.LiteralProto", "u2s", 27},
      {"xla.LiteralProto", "f8e4m3s", 28},
      {"xla.LiteralProto", "f8e3m4s", 29},
      {"xla.LiteralProto", "s1s", 30},
      {"xla.LiteralProto", "u1s", 31},
      {"xla.LiteralProto", "f4e2m1fns", 32},
      {"xla.LiteralProto", "f8e8m0fnus", 33},
      {"xla.WindowDimension", "window_dilation", 5},
      {"xla.WindowDimension", "base_dilation", 6},
      {"xla.WindowDimension", "window_reversal", 7},
      {"xla.ConvolutionDimensionNumbers", "input_batch_dimension", 7},
      {"xla.ConvolutionDimensionNumbers", "kernel_input_feature_dimension", 3},
      {"xla.ConvolutionDimensionNumbers", "output_spatial_dimensions", 12},
      {"xla.HloScheduleProto", "sequences", 1},
      {"xla.StackFrameIndexProto", "stack_frames", 4},
      {"xla.BufferAllocationProto", "assigned", 9},
      {"xla.IotaReplicaGroupListProto", "iota_transpose_perm", 4},
  };
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const auto& [message, field, number] : kTable) {
    const auto* d = pool->FindMessageTypeByName(message);
    ASSERT_NE(d, nullptr) << message;
    const auto* f = d->FindFieldByName(field);
    ASSERT_NE(f, nullptr) << message << "." << field;
    EXPECT_EQ(f->number(), number) << message << "." << field;
  }
  // Enum numbers: PrimitiveType is shared with the IR.
  const auto* pt = xla::PrimitiveType_descriptor();
  int count = 0;
  const PrimitiveType* all = AllPrimitiveTypes(&count);
  for (int i = 0; i < count; ++i) {
    const auto* v = pt->FindValueByNumber(static_cast<int>(all[i]));
    ASSERT_NE(v, nullptr) << static_cast<int>(all[i]);
  }
  EXPECT_EQ(pt->FindValueByName("F8E4M3FN")->number(), 20);
  EXPECT_EQ(pt->FindValueByName("S4")->number(), 21);
  EXPECT_EQ(pt->FindValueByName("BUFFER")->number(), 34);
}

// Bytes built by hand from XLA's field numbers (not through our generated code).
TEST(ProtoSchema, HandEncodedXlaBytesDecode) {
  auto varint = [](uint64_t v) {
    std::string s;
    while (v >= 0x80) {
      s.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    s.push_back(static_cast<char>(v));
    return s;
  };
  auto tag = [&](int field, int wire) {
    return varint((static_cast<uint64_t>(field) << 3) | wire);
  };
  auto bytes_field = [&](int field, const std::string& payload) {
    return tag(field, 2) + varint(payload.size()) + payload;
  };
  auto int_field = [&](int field, uint64_t v) { return tag(field, 0) + varint(v); };
  // ShapeProto{element_type(2)=F32(11)}
  const std::string f32_scalar = int_field(2, 11);
  // Instruction: name(1), opcode(2), shape(3), id(35), parameter_number(9).
  std::string param = bytes_field(1, "x") + bytes_field(2, "parameter") +
                      bytes_field(3, f32_scalar) + int_field(35, 7);
  std::string neg = bytes_field(1, "n") + bytes_field(2, "negate") + bytes_field(3, f32_scalar) +
                    int_field(35, 8) + bytes_field(36, varint(7));  // packed operand_ids
  // Computation: name(1), instructions(2), id(5), root_id(6).
  std::string comp = bytes_field(1, "e") + bytes_field(2, param) + bytes_field(2, neg) +
                     int_field(5, 3) + int_field(6, 8);
  // Module: name(1), entry_computation_name(2), computations(3), entry_computation_id(6).
  std::string module =
      bytes_field(1, "hand") + bytes_field(2, "e") + bytes_field(3, comp) + int_field(6, 3);
  std::string hlo_proto = bytes_field(1, module);
  auto opened = OpenHloBytes(hlo_proto, "hand.hlo.pb");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->format, HloFileFormat::kHloProto);
  EXPECT_EQ(PrintModule(*opened->modules[0].module),
            "HloModule hand\n\nENTRY %e (x: f32[]) -> f32[] {\n  %x = f32[] parameter(0)\n"
            "  ROOT %n = f32[] negate(f32[] %x)\n}\n\n");
}

}  // namespace
}  // namespace hlowb
