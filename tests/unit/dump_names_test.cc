// File-name classification and indexing of --xla_dump_to directories (hlo-format.md §5).
#include <filesystem>
#include <fstream>

#include "core/dump/dump_index.h"
#include "core/dump/dump_names.h"
#include "core/support/file_util.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

TEST(DumpNames, BeforeAndAfterOptimizations) {
  DumpName n = ParseDumpFileName("module_0042.jit_f.before_optimizations.txt");
  EXPECT_EQ(n.kind, DumpFileKind::kHloText);
  EXPECT_EQ(n.module_id, 42);
  EXPECT_EQ(n.module_id_text, "0042");
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.stage, StageKind::kBeforeOptimizations);

  n = ParseDumpFileName("module_0042.jit_f.after_optimizations.hlo.pb.gz");
  EXPECT_EQ(n.kind, DumpFileKind::kHloProtoGz);
  EXPECT_EQ(n.stage, StageKind::kAfterOptimizations);

  n = ParseDumpFileName("module_0042.jit_f.after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(n.kind, DumpFileKind::kBufferAssignment);
  EXPECT_EQ(n.module_name, "jit_f");

  n = ParseDumpFileName("module_0042.jit_f.after_optimizations-memory-usage-report.pb");
  EXPECT_EQ(n.kind, DumpFileKind::kMemoryUsageReport);
}

TEST(DumpNames, PassSteps) {
  DumpName n = ParseDumpFileName(
      "module_0042.jit_f.0007.simplification.after_algsimp.before_dce.txt");
  EXPECT_EQ(n.kind, DumpFileKind::kHloText);
  EXPECT_EQ(n.stage, StageKind::kPassStep);
  EXPECT_EQ(n.module_name, "jit_f");
  EXPECT_EQ(n.step, 7);
  EXPECT_EQ(n.pipeline, "simplification");
  EXPECT_EQ(n.pass, "algsimp");
  EXPECT_EQ(n.next_pass, "dce");

  n = ParseDumpFileName(
      "module_0000.m.0000.transforms_pipeline.after_pipeline-start.before_dce.txt");
  EXPECT_EQ(n.stage, StageKind::kPassStep);
  EXPECT_EQ(n.module_name, "m");
  EXPECT_EQ(n.pass, "pipeline-start");
}

TEST(DumpNames, NamesWithDotsTimestampsAndWideIds) {
  DumpName n = ParseDumpFileName(
      "1624325116260738.module_0065.pmap__unnamed_wrapped_function_.186875.before_optimizations.txt");
  EXPECT_EQ(n.timestamp_us, 1624325116260738);
  EXPECT_EQ(n.module_id, 65);
  EXPECT_EQ(n.module_name, "pmap__unnamed_wrapped_function_.186875");
  EXPECT_EQ(n.stage, StageKind::kBeforeOptimizations);

  n = ParseDumpFileName("module_123456.a_inference_step_1234__.5678.0012.opt.after_cse.before_dce.txt");
  EXPECT_EQ(n.module_id, 123456);
  EXPECT_EQ(n.module_name, "a_inference_step_1234__.5678");
  EXPECT_EQ(n.step, 12);

  // The 255-character fallback drops the module name.
  n = ParseDumpFileName("module_0042.0003.pipe.after_a.before_b.txt");
  EXPECT_EQ(n.module_id, 42);
  EXPECT_EQ(n.module_name, "");
  EXPECT_EQ(n.stage, StageKind::kPassStep);
  EXPECT_EQ(n.step, 3);
  n = ParseDumpFileName("module_0042.after_optimizations.txt");
  EXPECT_EQ(n.stage, StageKind::kAfterOptimizations);
  EXPECT_EQ(n.module_name, "");
}

TEST(DumpNames, PlatformPrefixedStages) {
  DumpName n = ParseDumpFileName("module_0001.SyncTensorsGraph.68.sm_9.0_gpu_after_optimizations.txt");
  EXPECT_EQ(n.module_name, "SyncTensorsGraph.68");
  EXPECT_EQ(n.platform_prefix, "sm_9.0_gpu_");
  EXPECT_EQ(n.stage, StageKind::kAfterOptimizations);
  n = ParseDumpFileName(
      "module_0001.SyncTensorsGraph.68.sm_9.0_gpu_after_optimizations-buffer-assignment.txt");
  EXPECT_EQ(n.kind, DumpFileKind::kBufferAssignment);
  EXPECT_EQ(n.module_name, "SyncTensorsGraph.68");
  n = ParseDumpFileName("module_0023.jit_train_step.after_optimizations_after_buffer_assignment.txt");
  EXPECT_EQ(n.stage, StageKind::kAfterOptimizationsVariant);
  EXPECT_EQ(n.module_name, "jit_train_step");
}

TEST(DumpNames, Artifacts) {
  struct Case {
    const char* name;
    DumpFileKind kind;
    const char* module;
  } cases[] = {
      {"module_0042.jit_f.ir-no-opt.ll", DumpFileKind::kLlvmIr, "jit_f"},
      {"module_0042.jit_f.ir-with-opt.ll", DumpFileKind::kLlvmIr, "jit_f"},
      {"module_0042.jit_f.ptx", DumpFileKind::kPtx, "jit_f"},
      {"module_0042.jit_f.thunk_sequence.txt", DumpFileKind::kThunkSequence, "jit_f"},
      {"module_0042.jit_f.config.pbtxt", DumpFileKind::kConfig, "jit_f"},
      {"module_0042.metadata.textproto", DumpFileKind::kModuleMetadata, ""},
      {"module_0042.jit_f.before_optimizations.dot", DumpFileKind::kDot, "jit_f"},
      {"module_0042.jit_f.after_optimizations.html", DumpFileKind::kHtml, "jit_f"},
      {"module_0042.jit_f.after_optimizations.top_level.html", DumpFileKind::kHtml, "jit_f"},
      {"module_0001.SyncTensorsGraph.68.autotune_results.pbtxt", DumpFileKind::kAutotuneResults,
       "SyncTensorsGraph.68"},
      {"module_0001.SyncTensorsGraph.68.gpu_target_config.pbtxt", DumpFileKind::kConfig,
       "SyncTensorsGraph.68"},
      {"module_0021.jit_train_step.execution_options.txt", DumpFileKind::kConfig, "jit_train_step"},
      {"module_0021.jit_train_step.flagfile", DumpFileKind::kDebugOptions, "jit_train_step"},
      {"module_0021.jit_train_step.tpu_comp_env.txt", DumpFileKind::kConfig, "jit_train_step"},
      {"module_0042.jit_f.debug_options", DumpFileKind::kDebugOptions, "jit_f"},
  };
  for (const Case& c : cases) {
    DumpName n = ParseDumpFileName(c.name);
    EXPECT_EQ(n.kind, c.kind) << c.name << " -> " << DumpFileKindName(n.kind);
    EXPECT_EQ(n.module_name, c.module) << c.name;
    EXPECT_EQ(n.module_id.has_value(), true) << c.name;
  }
}

TEST(DumpNames, SnapshotsAndFusionVisualization) {
  DumpName n = ParseDumpFileName("1700000000123456.module_0042.jit_f.execution_0000.hlo_snapshot.pb");
  EXPECT_EQ(n.kind, DumpFileKind::kSnapshot);
  EXPECT_EQ(n.execution, 0);
  EXPECT_EQ(n.module_name, "jit_f");
  n = ParseDumpFileName("module_0042.jit_f.execution_0003.hlo_unoptimized_snapshot.pb");
  EXPECT_EQ(n.kind, DumpFileKind::kUnoptimizedSnapshot);
  EXPECT_EQ(n.execution, 3);
  n = ParseDumpFileName("module_jit_g.execution_0001.hlo_snapshot.pb");
  EXPECT_EQ(n.kind, DumpFileKind::kSnapshot);
  EXPECT_FALSE(n.module_id.has_value());
  EXPECT_EQ(n.module_name, "jit_g");
  n = ParseDumpFileName("fused_computation.module_0042.jit_f._fusion.html");
  EXPECT_EQ(n.kind, DumpFileKind::kFusionVisualization);
  EXPECT_EQ(n.computation, "fused_computation");
  EXPECT_EQ(n.module_id, 42);
}

TEST(DumpNames, Unrecognized) {
  for (const char* name : {"README", "notes.txt", "modulex_0001.txt",
                           "1767031281408100021-0000-mosaic-dump-splash_mha_fwd-post-deserialization.txt"}) {
    EXPECT_EQ(ParseDumpFileName(name).kind, DumpFileKind::kUnrecognized) << name;
  }
}

// Every name in the corpus's list of real dump file names gets a classification with the
// expected module id (or is knowingly unrecognised).
TEST(DumpNames, RealNamesFromCorpus) {
  auto tsv = ReadFileToString(std::string(HLOWB_CORPUS_DIR) + "/dump-names.tsv");
  if (!tsv.ok()) GTEST_SKIP() << "no dump-names.tsv in " << HLOWB_CORPUS_DIR;
  std::istringstream in(*tsv);
  std::string line;
  std::getline(in, line);  // header
  int checked = 0;
  while (std::getline(in, line)) {
    std::string name = line.substr(0, line.find('\t'));
    DumpName n = ParseDumpFileName(name);
    if (name.rfind("module_", 0) == 0) {
      EXPECT_NE(n.kind, DumpFileKind::kUnrecognized) << name;
      EXPECT_TRUE(n.module_id.has_value()) << name;
      EXPECT_FALSE(n.module_name.empty()) << name;
      EXPECT_NE(n.kind, DumpFileKind::kOtherModuleFile) << name;
    } else {
      EXPECT_EQ(n.kind, DumpFileKind::kUnrecognized) << name;
    }
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

DumpFile File(std::string path) {
  DumpFile f;
  f.path = std::move(path);
  return f;
}

TEST(DumpIndex, GroupsStatesInCompilerOrder) {
  DumpIndex index = BuildDumpIndex(
      "/d", {File("module_0042.jit_f.after_optimizations.txt"),
             File("module_0042.jit_f.0010.opt.after_dce.before_pipeline-end.txt"),
             File("module_0042.jit_f.0002.opt.after_algsimp.before_dce.txt"),
             File("module_0042.jit_f.before_optimizations.txt"),
             File("module_0042.jit_f.before_optimizations.hlo.pb"),
             File("module_0042.jit_f.ptx"), File("README.md"),
             File("module_0043.jit_g.before_optimizations.txt"),
             File("module_0044.jit_f.after_optimizations.txt"),
             File("jit_h/host_1234/module_0007.jit_h.before_optimizations.txt")});
  ASSERT_EQ(index.modules.size(), 4u);
  const DumpModule* f = index.FindModule("42");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->name, "jit_f");
  ASSERT_EQ(f->states.size(), 4u);
  EXPECT_EQ(f->states[0].stage, StageKind::kBeforeOptimizations);
  EXPECT_GE(f->states[0].text_file, 0);
  EXPECT_GE(f->states[0].proto_file, 0);
  EXPECT_EQ(f->states[1].step, 2);
  EXPECT_EQ(f->states[2].step, 10);
  EXPECT_EQ(f->states[3].stage, StageKind::kAfterOptimizations);
  EXPECT_EQ(f->artifacts.size(), 1u);
  ASSERT_EQ(index.unrecognized.size(), 1u);
  EXPECT_EQ(index.files[index.unrecognized[0]].path, "README.md");
  EXPECT_EQ(index.FindModule("0007")->name, "jit_h");  // subfolder layout
  // jit_f has two ids; grouped by name with both.
  auto g = std::find_if(index.groups.begin(), index.groups.end(),
                        [](const DumpModuleGroup& g) { return g.name == "jit_f"; });
  ASSERT_NE(g, index.groups.end());
  EXPECT_EQ(g->modules.size(), 2u);
  std::vector<DumpState> all = index.StatesForName("jit_f");
  ASSERT_EQ(all.size(), 5u);
  EXPECT_EQ(all.back().module_id, 44);
}

TEST(DumpIndex, ScansDirectoriesAndPicksUpNewFiles) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("hlowb_dump_index_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "module_0001.a.before_optimizations.txt") << "x";
  std::ofstream(dir / "sub" / "module_0002.b.after_optimizations.txt") << "yy";
  auto index = IndexDumpDirectory(dir.string());
  ASSERT_TRUE(index.ok()) << index.status();
  EXPECT_EQ(index->modules.size(), 2u);
  EXPECT_EQ(index->files[0].size + index->files[1].size, 3u);
  std::ofstream(dir / "module_0001.a.0001.p.after_x.before_y.txt") << "z";
  auto added = RescanDumpIndex(&*index);
  ASSERT_TRUE(added.ok());
  ASSERT_EQ(added->size(), 1u);
  EXPECT_EQ(index->FindModule("1")->states.size(), 2u);
  EXPECT_FALSE(IndexDumpDirectory((dir / "missing").string()).ok());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hlowb
