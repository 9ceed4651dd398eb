// The cpu platform's compiler and runtime around the kernels: what it compiles and what it
// leaves to the interpreter (and says so), the on-disk kernel cache (hits, corrupt entries
// rebuilt), the XLA-named LLVM dumps, ranges split across threads, and `hlowb opt
// --stage=llvm`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::Pattern;

constexpr char kModule[] = R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[64,300] parameter(0)
  b = f32[64,300] parameter(1)
  i = s32[5,1] parameter(2)
  m = f32[64,300] multiply(a, b)
  e = f32[64,300] add(m, a)
  z = f32[] constant(0)
  r = f32[300] reduce(e, z), dimensions={0}, to_apply=add
  g = f32[64,5] gather(e, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={64,1}
  ROOT t = (f32[300], f32[64,5]) tuple(r, g)
}
)";

struct Fixture {
  std::unique_ptr<Module> module;
  std::vector<Literal> args;
};

Fixture Make() {
  Fixture f;
  auto m = ParseModule(kModule);
  EXPECT_TRUE(m.ok()) << m.status();
  f.module = std::move(*m);
  for (int i = 0; i < f.module->entry()->parameter_count(); ++i) {
    f.args.push_back(Pattern(f.module->entry()->parameter(i)->shape(), i));
  }
  return f;
}

fs::path TempDir(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("hlowb_cpu_test_" + name + "_" + std::to_string(::getpid()));
  std::error_code ec;
  fs::remove_all(p, ec);
  fs::create_directories(p);
  return p;
}

TEST(CpuBackend, CompilesWhatItCanAndNamesWhatRunsOnTheInterpreter) {
  Fixture f = Make();
  CpuCompileOptions o;
  auto exe = CpuExecutable::Compile(*f.module, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const CpuCompileStats& s = (*exe)->stats();
  EXPECT_GE(s.kernels, 2);  // the fusion of multiply/add, and the reduce
  EXPECT_EQ(s.interpreted_by_opcode.count("gather"), 1u) << (*exe)->Summary();
  EXPECT_NE((*exe)->Summary().find("gather 1"), std::string::npos) << (*exe)->Summary();
  bool gather_named = false;
  for (const auto& [name, reason] : (*exe)->not_compiled()) gather_named |= name == "g";
  EXPECT_TRUE(gather_named);
  auto want = EvaluateModule(*f.module, f.args);
  auto got = (*exe)->Run(f.args, {});
  ASSERT_TRUE(want.ok() && got.ok());
  // A column reduction accumulates in the interpreter's order: bit for bit here.
  EXPECT_TRUE(*want == *got);
}

TEST(CpuBackend, KernelCacheHitsAndRebuildsCorruptEntries) {
  Fixture f = Make();
  fs::path cache = TempDir("cache");
  CpuCompileOptions o;
  o.cache_dir = cache.string();
  auto first = CpuExecutable::Compile(*f.module, o);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ((*first)->stats().cache_hits, 0);
  EXPECT_GT((*first)->stats().cache_misses, 0);
  auto second = CpuExecutable::Compile(*f.module, o);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)->stats().cache_misses, 0);
  EXPECT_EQ((*second)->stats().cache_hits, (*first)->stats().cache_misses);
  // Corrupt every entry: each is noticed, rebuilt, and the results stay right.
  int corrupted = 0;
  for (const auto& e : fs::directory_iterator(cache)) {
    std::fstream file(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(40);
    file.write("garbage!", 8);
    ++corrupted;
  }
  ASSERT_GT(corrupted, 0);
  auto third = CpuExecutable::Compile(*f.module, o);
  ASSERT_TRUE(third.ok()) << third.status();
  EXPECT_EQ((*third)->stats().corrupt_cache_entries, corrupted);
  EXPECT_EQ((*third)->stats().cache_hits, 0);
  auto want = EvaluateModule(*f.module, f.args);
  auto got = (*third)->Run(f.args, {});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_TRUE(*want == *got);
  std::error_code ec;
  fs::remove_all(cache, ec);
}

TEST(CpuBackend, DumpsLlvmIrAndAssemblyUnderXlaNames) {
  Fixture f = Make();
  fs::path dump = TempDir("dump");
  CpuCompileOptions o;
  o.dump_options.dump_to = dump.string();
  auto exe = CpuExecutable::Compile(*f.module, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  int found = 0;
  for (const char* ext : {".ir-no-opt.ll", ".ir-with-opt.ll", ".s"}) {
    for (const std::string& file : (*exe)->stats().dump_files) {
      if (file.size() < std::string(ext).size() ||
          file.compare(file.size() - std::string(ext).size(), std::string::npos, ext) != 0) {
        continue;
      }
      ++found;
      EXPECT_NE(file.find("module_"), std::string::npos) << file;
      auto text = ReadFileToString(file);
      ASSERT_TRUE(text.ok()) << file;
      EXPECT_NE(text->find(std::string(ext) == ".s" ? "hlowb_k" : "define void @hlowb_k"),
                std::string::npos)
          << file;
    }
  }
  EXPECT_EQ(found, 3);
  std::error_code ec;
  fs::remove_all(dump, ec);
}

TEST(CpuBackend, LargeKernelsSplitAcrossThreadsGiveTheSameBits) {
  auto m = ParseModule(R"(HloModule big
ENTRY e {
  a = s32[300,1001] parameter(0)
  b = s32[300,1001] parameter(1)
  m = s32[300,1001] multiply(a, b)
  t = s32[1001,300] transpose(m), dimensions={1,0}
  ROOT s = s32[1001,300] shift-left(t, t)
}
)");
  ASSERT_TRUE(m.ok());
  std::vector<Literal> args;
  for (int i = 0; i < 2; ++i) args.push_back(Pattern((*m)->entry()->parameter(i)->shape(), 7 * i));
  auto want = EvaluateModule(**m, args);
  ASSERT_TRUE(want.ok());
  for (int threads : {1, 4}) {
    CpuCompileOptions o;
    o.threads = threads;
    auto exe = CpuExecutable::Compile(**m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    auto got = (*exe)->Run(args, {});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(*want == *got) << threads << " threads";
  }
}

TEST(CpuBackend, OptPrintsTheKernelsLlvmIr) {
  fs::path dir = TempDir("opt");
  fs::path in = dir / "m.hlo";
  { std::ofstream(in) << kModule; }
  for (const char* stage : {"llvm", "llvm-no-opt"}) {
    std::string cmd = std::string(HLOWB_BINARY) + " opt " + in.string() + " --stage=" + stage +
                      " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    EXPECT_NE(out.find("define void @hlowb_k"), std::string::npos) << out.substr(0, 500);
    EXPECT_NE(out.find("not compiled: %g (gather)"), std::string::npos) << out.substr(0, 500);
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
}

}  // namespace
}  // namespace hlowb
