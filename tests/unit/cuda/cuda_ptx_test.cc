// PTX without a GPU: the code generator's output for the cuda platform is checked by the
// toolkit's ptxas for sm_80 and sm_90 (the CUDA toolkit is on every build machine; the tests
// skip, saying so, where ptxas is absent), over small modules and over every corpus module
// through the embedded gpu pipeline.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/codegen/gpu_codegen.h"
#include "tests/unit/cuda/cuda_test_util.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;

// Runs ptxas on `ptx` for `arch`; "" when it accepts it, else its output.
std::string Ptxas(const std::string& ptxas, const std::string& ptx, const std::string& arch,
                  const std::string& label) {
  static std::atomic<int> counter{0};
  const fs::path dir = fs::temp_directory_path() / ("hlowb_ptxas_" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string base = (dir / ("k" + std::to_string(counter++))).string();
  {
    std::ofstream out(base + ".ptx");
    out << ptx;
  }
  const std::string cmd = ptxas + " --gpu-name " + arch + " -o " + base + ".cubin " + base +
                          ".ptx > " + base + ".log 2>&1";
  const int rc = std::system(cmd.c_str());
  std::string log;
  if (rc != 0) {
    std::ifstream in(base + ".log");
    std::stringstream ss;
    ss << in.rdbuf();
    log = label + " (" + arch + "): ptxas exit " + std::to_string(rc) + ": " + ss.str().substr(0, 2000);
  }
  std::error_code ec;
  fs::remove(base + ".ptx", ec);
  fs::remove(base + ".cubin", ec);
  fs::remove(base + ".log", ec);
  return log;
}

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

constexpr char kFusionModule[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[64,128] parameter(0)
  y = f32[64,128] parameter(1)
  m = f32[64,128] multiply(x, y)
  t = f32[64,128] tanh(m)
  ex = f32[64,128] exponential(t)
  l = f32[64,128] log-plus-one(ex)
  z = f32[] constant(0)
  r = f32[64] reduce(l, z), dimensions={1}, to_apply=add
  c = f32[128] reduce(l, z), dimensions={0}, to_apply=add
  h = f16[64,128] convert(l)
  i = s32[64,128] convert(x)
  ROOT out = (f32[64], f32[128], f16[64,128], s32[64,128]) tuple(r, c, h, i)
}
)";

TEST(CudaPtx, FusedKernelsAssembleForSm80AndSm90) {
  const std::string ptxas = testing::FindPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas (CUDA toolkit) on this machine";
  auto m = Parse(kFusionModule);
  ASSERT_NE(m, nullptr);
  for (const char* arch : {"sm_80", "sm_90"}) {
    CudaCompileOptions o;
    o.compile_only = true;
    o.gpu_arch = arch;
    auto exe = CudaExecutable::Compile(*m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    ASSERT_EQ((*exe)->ptx_programs().size(), 1u);
    const std::string& ptx = (*exe)->ptx_programs()[0];
    EXPECT_NE(ptx.find(std::string(".target ") + arch), std::string::npos);
    EXPECT_NE(ptx.find(".entry"), std::string::npos);
    // Every math call was bound to libdevice and linked in: nothing is left external.
    EXPECT_EQ(ptx.find(".extern .func"), std::string::npos) << ptx.substr(0, 3000);
    EXPECT_GT((*exe)->stats().kernels, 0);
    EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
    EXPECT_EQ(Ptxas(ptxas, ptx, arch, "fusion module"), "");
  }
}

// Rows of 1000 reduce by blocks (shuffles, then shared memory between barriers), rows of 100 by
// warps (shuffles only), and a transpose goes through shared-memory tiles; all assemble.
TEST(CudaPtx, CooperativeReductionsAndTiledTransposesUseShuffleAndSharedMemory) {
  auto m = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[37,1000] parameter(0)
  y = f64[50,100] parameter(1)
  z = f32[] constant(0)
  r = f32[37] reduce(x, z), dimensions={1}, to_apply=add
  c = f32[50,100] convert(y)
  q = f32[50] reduce(c, z), dimensions={1}, to_apply=add
  tr = f32[1000,37] transpose(x), dimensions={1,0}
  ROOT t = (f32[37], f32[50], f32[1000,37]) tuple(r, q, tr)
})");
  ASSERT_NE(m, nullptr);
  const std::string ptxas = testing::FindPtxas();
  for (const char* arch : {"sm_80", "sm_90"}) {
    CudaCompileOptions o;
    o.compile_only = true;
    o.run_hlo_passes = false;
    o.gpu_arch = arch;
    auto exe = CudaExecutable::Compile(*m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().cooperative_kernels, 2) << (*exe)->Summary();
    EXPECT_EQ((*exe)->stats().tiled_transposes, 1) << (*exe)->Summary();
    ASSERT_EQ((*exe)->ptx_programs().size(), 1u);
    const std::string& ptx = (*exe)->ptx_programs()[0];
    for (const char* what : {"shfl.sync.down.b32", "bar.sync", ".shared"}) {
      EXPECT_NE(ptx.find(what), std::string::npos) << what;
    }
    if (!ptxas.empty()) {
      EXPECT_EQ(Ptxas(ptxas, ptx, arch, "cooperative reductions"), "");
    }
  }
}

TEST(CudaPtx, KernelsAreGridStrideLoopsOverTheirElements) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[1000] parameter(0)
  b = f32[1000] parameter(1)
  ROOT c = f32[1000] add(a, b)
})");
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> instrs{m->entry()->root()};
  codegen::PtxOptions o;
  auto p = codegen::CompileToPtx(instrs, o);
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->kernels.size(), 1u);
  EXPECT_EQ(p->kernels[0].iteration_count, 1000);
  EXPECT_EQ(p->kernels[0].num_outputs, 1);
  const std::string& ptx = p->ptx;
  EXPECT_NE(ptx.find(".visible .entry " + p->kernels[0].kernel_name), std::string::npos) << ptx;
  for (const char* reg : {"%tid.x", "%ctaid.x", "%ntid.x", "%nctaid.x", "add.rn.f32"}) {
    EXPECT_NE(ptx.find(reg), std::string::npos) << reg << "\n" << ptx;
  }
}

TEST(CudaPtx, NarrowFloatsWithoutAGpuConverterAreRefusedWithTheReason) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  ROOT c = f8e4m3fn[16] convert(a)
})");
  ASSERT_NE(m, nullptr);
  std::vector<const Instruction*> instrs{m->entry()->root()};
  auto p = codegen::CompileToPtx(instrs, codegen::PtxOptions{});
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_TRUE(p->kernels.empty());
  ASSERT_EQ(p->refused.size(), 1u);
  EXPECT_NE(p->refused[0].reason.find("no GPU version"), std::string::npos) << p->refused[0].reason;
  EXPECT_NE(p->refused[0].reason.find("%c"), std::string::npos) << p->refused[0].reason;
}

// A reduce whose output's minor dimension has two elements: index arithmetic on one-bit values
// that LLVM's NVPTX backend once narrowed to an i1 multiply it cannot select (a fatal error).
TEST(CudaPtx, ReductionsOverOneBitIndicesCompile) {
  auto m = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[100,256,2] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[100,2] reduce(p, z), dimensions={1}, to_apply=add
})");
  ASSERT_NE(m, nullptr);
  CudaCompileOptions o;
  o.compile_only = true;
  if (const char* d = std::getenv("HLOWB_TEST_DUMP")) o.dump_options.dump_to = d;
  auto exe = CudaExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().kernels, 1);
}

// Complex and sub-byte integer kernels: what the emitter computes inline assembles; what
// needs the host's std::complex helpers (divide, power, sign, transcendental functions) is
// refused for the GPU, saying why.
TEST(CudaPtx, ComplexAndSubByteKernelsAssembleOrAreRefusedWithTheReason) {
  const std::string ptxas = testing::FindPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas (CUDA toolkit) on this machine";
  auto m = Parse(R"(
HloModule m
add {
  a = c64[] parameter(0)
  b = c64[] parameter(1)
  ROOT s = c64[] add(a, b)
}
fused {
  re = f32[64,32] parameter(0)
  im = f32[64,32] parameter(1)
  z = c64[64,32] complex(re, im)
  sq = c64[64,32] multiply(z, z)
  k = c64[] constant((0.5, -1))
  kk = c64[64,32] broadcast(k), dimensions={}
  s = c64[64,32] subtract(sq, kk)
  n = c64[64,32] negate(s)
  w = c128[64,32] convert(n)
  mag = f64[64,32] abs(w)
  i = f64[64,32] imag(w)
  ROOT out = f64[64,32] add(mag, i)
}
ENTRY e {
  re = f32[64,32] parameter(0)
  im = f32[64,32] parameter(1)
  a = s4[64,32] parameter(2)
  b = u2[64,32] parameter(3)
  c = s1[64,32] parameter(4)
  f = f64[64,32] fusion(re, im), kind=kLoop, calls=fused
  z = c64[64,32] complex(re, im)
  zero = c64[] constant((0, 0))
  r = c64[64] reduce(z, zero), dimensions={1}, to_apply=add
  col = c64[32] reduce(z, zero), dimensions={0}, to_apply=add
  eq = pred[64,32] compare(z, z), direction=NE
  sel = c64[64,32] select(eq, z, z)
  t = c64[32,64] transpose(sel), dimensions={1,0}
  div = c64[64,32] divide(z, z)
  ex = c64[64,32] exponential(z)
  sum = s4[64,32] add(a, a)
  sh = s4[64,32] shift-right-logical(sum, a)
  q = s4[64,32] divide(sh, a)
  cv = s4[64,32] convert(re)
  pc = u2[64,32] popcnt(b)
  lz = u2[64,32] count-leading-zeros(b)
  m1 = s1[64,32] multiply(c, c)
  d1 = s1[64,32] divide(c, c)
  w = s32[64,32] convert(d1)
  ROOT out = (f64[64,32], c64[64], c64[32], c64[32,64], c64[64,32], c64[64,32], s4[64,32],
              s4[64,32], u2[64,32], u2[64,32], s1[64,32], s32[64,32])
      tuple(f, r, col, t, div, ex, q, cv, pc, lz, m1, w)
})");
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(CountErrors(VerifyModule(*m)), 0);
  std::vector<const Instruction*> instrs;
  for (const Instruction* h : m->entry()->instructions()) {
    const Opcode op = h->opcode();
    if (op != Opcode::kParameter && op != Opcode::kConstant && op != Opcode::kTuple) {
      instrs.push_back(h);
    }
  }
  for (const char* arch : {"sm_80", "sm_90"}) {
    codegen::PtxOptions o;
    o.gpu_arch = arch;
    auto p = codegen::CompileToPtx(instrs, o);
    ASSERT_TRUE(p.ok()) << p.status();
    std::vector<std::string> refused;
    for (const auto& r : p->refused) {
      refused.push_back(r.instruction->name());
      EXPECT_NE(r.reason.find("complex function helper"), std::string::npos) << r.reason;
      EXPECT_NE(r.reason.find("no GPU version"), std::string::npos) << r.reason;
    }
    EXPECT_EQ(refused, (std::vector<std::string>{"div", "ex"}));
    EXPECT_EQ(p->kernels.size(), instrs.size() - 2);
    EXPECT_EQ(Ptxas(ptxas, p->ptx, arch, "complex and sub-byte kernels"), "");
  }
}

TEST(CudaPtx, TargetsPastSm90AreClampedAndBadOnesRefused) {
  EXPECT_EQ(*codegen::ClampGpuArch("sm_100"), "sm_90");
  EXPECT_EQ(*codegen::ClampGpuArch("sm_90a"), "sm_90");
  EXPECT_EQ(*codegen::ClampGpuArch("sm_75"), "sm_75");
  EXPECT_FALSE(codegen::ClampGpuArch("compute_80").ok());
  EXPECT_FALSE(codegen::ClampGpuArch("sm_").ok());
  EXPECT_FALSE(codegen::ClampGpuArch("sm_8x").ok());
}

TEST(CudaPtx, DumpsUseXlaNames) {
  auto m = Parse(R"(
HloModule dumped
ENTRY e {
  a = f32[8] parameter(0)
  ROOT c = f32[8] sine(a)
})");
  ASSERT_NE(m, nullptr);
  const fs::path dir = fs::temp_directory_path() / ("hlowb_ptx_dump_" + std::to_string(getpid()));
  fs::remove_all(dir);
  CudaCompileOptions o;
  o.compile_only = true;
  o.dump_options.dump_to = dir.string();
  auto exe = CudaExecutable::Compile(*m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  int ptx = 0, no_opt = 0, with_opt = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.find("dumped") == std::string::npos) continue;
    ptx += name.size() > 4 && name.substr(name.size() - 4) == ".ptx";
    no_opt += name.find(".ir-no-opt.ll") != std::string::npos;
    with_opt += name.find(".ir-with-opt.ll") != std::string::npos;
  }
  EXPECT_EQ(ptx, 1);
  EXPECT_EQ(no_opt, 1);
  EXPECT_EQ(with_opt, 1);
  fs::remove_all(dir);
}

TEST(CudaPtx, WithoutADriverTheBackendSaysWhatIsMissing) {
  absl::Status st = CudaAvailable();
  if (st.ok()) GTEST_SKIP() << "a GPU is present: " << CudaDeviceDescription();
  EXPECT_FALSE(st.message().empty());
  // Compiling for a device fails with the same reason rather than crashing.
  auto m = Parse("HloModule m\nENTRY e { ROOT a = f32[2] parameter(0) }");
  ASSERT_NE(m, nullptr);
  auto exe = CudaExecutable::Compile(*m, CudaCompileOptions{});
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().message(), st.message());
}

// XLA's optimized GPU HLO as it is: fusions become kernels with XLA's boundaries, and the plain
// f32 `__cublas$gemm` calls (kernel_reuse's three) are planned as cuBLAS GEMMs, not host calls.
TEST(CudaPtx, XlaCublasCallsArePlannedAsCublasGemms) {
  const std::string path =
      testing::CudaCorpusDir() + "/xla-tests/xla__service__gpu__tests__kernel_reuse.hlo";
  auto text = ReadFileToString(path);
  if (!text.ok()) GTEST_SKIP() << path << " is absent";
  int checked = 0;
  for (std::string_view part : SplitInputFile(*text)) {
    if (part.find("__cublas$gemm") == std::string_view::npos) continue;
    auto module = ParseModule(part);
    ASSERT_TRUE(module.ok()) << module.status();
    int calls = 0, fusions = 0;
    for (const Instruction* h : (*module)->entry()->instructions()) {
      calls += h->opcode() == Opcode::kCustomCall;
      fusions += h->opcode() == Opcode::kFusion;
    }
    CudaCompileOptions o;
    o.compile_only = true;
    o.run_hlo_passes = false;
    auto exe = CudaExecutable::Compile(**module, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().library_calls, calls) << (*exe)->Summary();
    EXPECT_EQ((*exe)->stats().kernels, fusions) << (*exe)->Summary();
    EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

// The PTX of every kernel of every corpus module, through the gpu pipeline, generated for sm_80
// and for sm_90, assembles for its target.
TEST(CudaPtx, EveryCorpusModuleAssemblesForSm80AndSm90) {
  const std::string ptxas = testing::FindPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas (CUDA toolkit) on this machine";
  std::vector<std::string> files = testing::CorpusFiles(testing::CudaCorpusDir());
  if (files.empty()) GTEST_SKIP() << "corpus folder " << testing::CudaCorpusDir() << " is absent";
  int modules = 0;
  int64_t kernels = 0, refused = 0;
  double llvm_seconds = 0, ptxas_seconds = 0;
  testing::ForEachVerifiedModule(files, [&](const std::string& label, const Module& module) {
    auto compile = [&module](const char* arch) {
      CudaCompileOptions o;
      o.compile_only = true;
      o.gpu_arch = arch;
      return CudaExecutable::Compile(module, o);
    };
    // The two targets compile, and then assemble, side by side.
    std::future<absl::StatusOr<std::unique_ptr<CudaExecutable>>> for_sm90 =
        std::async(std::launch::async, compile, "sm_90");
    auto exe = compile("sm_80");
    auto exe90 = for_sm90.get();
    ASSERT_TRUE(exe.ok()) << label << ": " << exe.status();
    ASSERT_TRUE(exe90.ok()) << label << " (sm_90): " << exe90.status();
    ++modules;
    kernels += (*exe)->stats().kernels;
    refused += (*exe)->stats().interpreted;
    llvm_seconds += (*exe)->stats().codegen_seconds + (*exe90)->stats().codegen_seconds;
    EXPECT_EQ((*exe90)->stats().kernels, (*exe)->stats().kernels) << label;
    if ((*exe)->stats().kernels == 0) return;
    const std::vector<std::string>& ptx80 = (*exe)->ptx_programs();
    const std::vector<std::string>& ptx90 = (*exe90)->ptx_programs();
    ASSERT_EQ(ptx80.size(), ptx90.size()) << label;
    auto t0 = std::chrono::steady_clock::now();
    for (size_t k = 0; k < ptx80.size(); ++k) {
      EXPECT_NE(ptx90[k].find(".target sm_90"), std::string::npos) << label;
      std::future<std::string> sm90 = std::async(
          std::launch::async, [&] { return Ptxas(ptxas, ptx90[k], "sm_90", label); });
      EXPECT_EQ(Ptxas(ptxas, ptx80[k], "sm_80", label), "");
      EXPECT_EQ(sm90.get(), "");
    }
    ptxas_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  std::cout << "cuda ptx corpus: " << modules << " modules, " << kernels << " kernels ("
            << refused << " instructions left to the interpreter); LLVM " << llvm_seconds
            << " s, ptxas " << ptxas_seconds << " s\n";
  EXPECT_GT(modules, 50);
  EXPECT_GT(kernels, 200);
}

}  // namespace
}  // namespace hlowb
