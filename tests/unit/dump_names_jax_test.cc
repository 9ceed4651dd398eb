// The files real jax 0.10 dumps write besides the module states: the CPU compiler's buffer values
// and live ranges, object files per kernel, "snapshot.N.pb" snapshots, during-pass protos, and the
// per-module folders with the compile options, topology and MLIR.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/dump/dump_index.h"
#include "core/dump/dump_names.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

TEST(DumpNamesJax, CpuCompilerArtifacts) {
  struct Case {
    const char* name;
    DumpFileKind kind;
    const char* module;
  } cases[] = {
      {"module_0016.jit_step.cpu_after_optimizations-buffer-assignment-values."
       "txt",
       DumpFileKind::kBufferAssignmentValues, "jit_step"},
      {"module_0016.jit_step.cpu_after_optimizations-live-range.txt", DumpFileKind::kLiveRange,
       "jit_step"},
      {"module_0016.jit_step.cpu_after_optimizations-buffer-assignment.txt",
       DumpFileKind::kBufferAssignment, "jit_step"},
      {"module_0016.jit_step.cpu_after_optimizations-memory-usage-report.pb",
       DumpFileKind::kMemoryUsageReport, "jit_step"},
      {"module_0016.jit_step.debug_options", DumpFileKind::kDebugOptions, "jit_step"},
      {"module_0004.jit__normal.obj-file.broadcast_add_fusion.1_kernel_module."
       "o",
       DumpFileKind::kObjectFile, "jit__normal"},
      {"module_0004.jit__normal.obj-file.__compute_module_wrapped_add.o", DumpFileKind::kObjectFile,
       "jit__normal"},
      {"module_0000.jit_train_step.snapshot.1972025845.pb", DumpFileKind::kSnapshot,
       "jit_train_step"},
  };
  for (const Case& c : cases) {
    DumpName n = ParseDumpFileName(c.name);
    EXPECT_EQ(n.kind, c.kind) << c.name << " -> " << DumpFileKindName(n.kind);
    EXPECT_EQ(n.module_name, c.module) << c.name;
    EXPECT_TRUE(n.module_id.has_value()) << c.name;
    EXPECT_FALSE(IsModuleStateKind(n.kind)) << c.name;
  }
  DumpName obj = ParseDumpFileName(
      "module_0004.jit__normal.obj-file.broadcast_"
      "add_fusion.1_kernel_module.o");
  EXPECT_EQ(obj.computation, "broadcast_add_fusion.1_kernel_module");
  DumpName snap = ParseDumpFileName("module_0000.jit_train_step.snapshot.1972025846.pb");
  EXPECT_EQ(snap.execution, 1972025846);
  // The number is the run id, a signed 32-bit value: about half of all runs write a negative one.
  DumpName negative = ParseDumpFileName("module_0000.jit_conf_mlp_train.snapshot.-1438371118.pb");
  EXPECT_EQ(negative.kind, DumpFileKind::kSnapshot);
  EXPECT_EQ(negative.module_name, "jit_conf_mlp_train");
  EXPECT_EQ(negative.execution, -1438371118);
  EXPECT_EQ(negative.stage_text, "snapshot.-1438371118");
  for (const char* not_a_snapshot : {"module_0000.jit_f.snapshot.-.pb",
                                     "module_0000.jit_f.snapshot.--5.pb",
                                     "module_0000.jit_f.snapshot.-5x.pb"}) {
    EXPECT_NE(ParseDumpFileName(not_a_snapshot).kind, DumpFileKind::kSnapshot) << not_a_snapshot;
  }
  EXPECT_EQ(DumpFileKindName(DumpFileKind::kLiveRange), "live-range");
  EXPECT_EQ(DumpFileKindName(DumpFileKind::kBufferAssignmentValues), "buffer-assignment-values");
  EXPECT_EQ(DumpFileKindName(DumpFileKind::kCompileOptions), "compile-options");
  EXPECT_EQ(DumpFileKindName(DumpFileKind::kTopology), "topology");
  // The per-kernel LLVM IR keeps its old classification.
  EXPECT_EQ(
      ParseDumpFileName("module_0016.jit_step.add_tanh_fusion_kernel_module.ir-no-opt.ll").kind,
      DumpFileKind::kLlvmIr);
}

TEST(DumpNamesJax, DuringPassProtosAreStates) {
  DumpName n = ParseDumpFileName(
      "module_0000.jit_train_step.0022.copy-insertion.after_"
      "adding_copies_to_resolve_interference"
      ".hlo.pb");
  EXPECT_EQ(n.kind, DumpFileKind::kHloProto);
  EXPECT_EQ(n.stage, StageKind::kDuringPass);
  EXPECT_EQ(n.step, 22);
  EXPECT_EQ(n.pass, "copy-insertion");
  EXPECT_EQ(n.module_name, "jit_train_step");
}

TEST(DumpNamesJax, ModuleFolderFilesBelongToTheFolderModule) {
  struct Case {
    const char* path;
    DumpFileKind kind;
  } cases[] = {
      {"module_0000.jit_stage/compile_options.textproto", DumpFileKind::kCompileOptions},
      {"module_0000.jit_stage/compile_options.pb", DumpFileKind::kCompileOptions},
      {"module_0000.jit_stage/topology.textproto", DumpFileKind::kTopology},
      {"module_0000.jit_stage/topology.pb", DumpFileKind::kTopology},
      {"module_0000.jit_stage/module.mlir", DumpFileKind::kMlir},
      {"run1/module_0000.jit_stage/something_new.bin", DumpFileKind::kOtherModuleFile},
      {"module_0000.jit_stage/sub/kernel.ll", DumpFileKind::kLlvmIr},
  };
  for (const Case& c : cases) {
    DumpName n = ParseDumpFilePath(c.path);
    EXPECT_EQ(n.kind, c.kind) << c.path << " -> " << DumpFileKindName(n.kind);
    EXPECT_EQ(n.module_id, 0) << c.path;
    EXPECT_EQ(n.module_name, "jit_stage") << c.path;
    EXPECT_EQ(n.stage, StageKind::kNone) << c.path;
  }
  // HLO text without a stage in its name, inside a module folder, is a file, not a state.
  EXPECT_EQ(ParseDumpFilePath("module_0003.jit_f/notes.txt").kind, DumpFileKind::kOtherModuleFile);
  // A file with a module name of its own keeps it, wherever it is.
  DumpName own = ParseDumpFilePath("module_0003.jit_f/module_0007.jit_h.before_optimizations.txt");
  EXPECT_EQ(own.module_id, 7);
  EXPECT_EQ(own.stage, StageKind::kBeforeOptimizations);
  DumpName stamped = ParseDumpFilePath("1700000000123456.module_0042.jit_f/module.mlir");
  EXPECT_EQ(stamped.module_id, 42);
  EXPECT_EQ(stamped.timestamp_us, 1700000000123456);
  // Folders not named like a module do not claim files.
  for (const char* path : {"notes/README", "module_x/compile_options.pb", "modulex_0001/a.mlir",
                           "module_0001x/a.mlir", "README"}) {
    EXPECT_EQ(ParseDumpFilePath(path).kind, DumpFileKind::kUnrecognized) << path;
  }
}

DumpFile File(std::string path) {
  DumpFile f;
  f.path = std::move(path);
  return f;
}

// A jax 0.10 dump as the CPU client writes it (--xla_dump_hlo_as_text --xla_dump_hlo_as_proto
// --xla_dump_hlo_pass_re=.* --xla_dump_hlo_snapshots): every file is placed in its module.
TEST(DumpNamesJax, IndexOfAJaxDumpHasNoUnrecognisedFiles) {
  std::vector<DumpFile> files;
  const std::string m = "module_0000.jit_train_step";
  for (const char* name : {".before_optimizations.txt",
                           ".before_optimizations.hlo.pb",
                           ".0000.async-collective.after_pipeline-start.before_async-collective-"
                           "replacer.txt",
                           ".0000.async-collective.after_pipeline-start.before_async-collective-"
                           "replacer.hlo.pb",
                           ".0022.copy-insertion.after_adding_copies_to_resolve_interference.txt",
                           ".0022.copy-insertion.after_adding_copies_to_resolve_interference.hlo."
                           "pb",
                           ".cpu_after_optimizations.txt",
                           ".cpu_after_optimizations.hlo.pb",
                           ".cpu_after_optimizations-buffer-assignment.txt",
                           ".cpu_after_optimizations-buffer-assignment-values.txt",
                           ".cpu_after_optimizations-live-range.txt",
                           ".cpu_after_optimizations-memory-usage-report.txt",
                           ".cpu_after_optimizations-memory-usage-report.pb",
                           ".debug_options",
                           ".add_tanh_fusion_kernel_module.ir-no-opt.ll",
                           ".add_tanh_fusion_kernel_module.ir-with-opt.ll",
                           ".obj-file.add_tanh_fusion_kernel_module.o",
                           ".snapshot.1972025845.pb",
                           ".snapshot.1972025846.pb",
                           ".snapshot.-1438371118.pb",
                           "/compile_options.pb",
                           "/topology.pb",
                           "/module.mlir"}) {
    files.push_back(File(m + name));
  }
  DumpIndex index = BuildDumpIndex("/d", files);
  EXPECT_TRUE(index.unrecognized.empty());
  ASSERT_EQ(index.modules.size(), 1u);
  const DumpModule& module = index.modules[0];
  EXPECT_EQ(module.name, "jit_train_step");
  ASSERT_EQ(module.states.size(), 4u);
  for (const DumpState& s : module.states) {
    EXPECT_GE(s.text_file, 0) << s.label;
    EXPECT_GE(s.proto_file, 0) << s.label << ": the proto belongs to the same state";
  }
  EXPECT_EQ(module.states[2].stage, StageKind::kDuringPass);
  EXPECT_EQ(module.artifacts.size(), files.size() - 8);
  int snapshots = 0, other = 0;
  for (int a : module.artifacts) {
    snapshots += index.files[a].name.kind == DumpFileKind::kSnapshot;
    other += index.files[a].name.kind == DumpFileKind::kOtherModuleFile;
  }
  EXPECT_EQ(snapshots, 3);
  EXPECT_EQ(other, 0);
}

// A folder of its own with no other file of that module still makes a module.
TEST(DumpNamesJax, ScannedModuleFolder) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hlowb_dump_jax_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "module_0005.jit_g");
  std::ofstream(dir / "module_0005.jit_g" / "module.mlir") << "module {}";
  std::ofstream(dir / "module_0005.jit_g" / "compile_options.textproto") << "x: 1";
  auto index = IndexDumpDirectory(dir.string());
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_TRUE(index->unrecognized.empty());
  const DumpModule* g = index->FindModule("5");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "jit_g");
  EXPECT_EQ(g->artifacts.size(), 2u);
  EXPECT_TRUE(g->states.empty());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
