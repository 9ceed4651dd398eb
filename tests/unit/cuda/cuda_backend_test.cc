// The cuda platform: kernels and cuBLAS dots agree with the interpreter, over small modules,
// over every corpus module the interpreter runs, and over XLA's optimized GPU modules with
// cuBLAS custom calls run as they are. On machines without a driver and GPU (CI) they run on
// the host's GPU emulator (the same kernels, with GPU threads, warps, shuffles, barriers and
// shared memory emulated; cuBLAS by a host GEMM); scripts/gpu-check runs them on a GPU. Only
// the device description needs a real GPU.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "core/analysis/verifier.h"
#include "core/support/file_util.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "plugins/api/custom_call_registry.h"
#include "plugins/builtin/builtin_plugins.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cuda/cuda_test_util.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

namespace fs = std::filesystem;
using testing::Disagreement;
using testing::Pattern;

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::vector<Literal> PatternArgs(const Module& m) {
  std::vector<Literal> args;
  for (int i = 0; i < m.entry()->parameter_count(); ++i) {
    args.push_back(Pattern(m.entry()->parameter(i)->shape(), i));
  }
  return args;
}

// Runs `text` on the interpreter and on cuda (with or without the gpu pipeline); returns the
// disagreement ("" when they agree) and the executable's summary through `summary`.
std::string Agreement(const std::string& text, bool passes, std::string* summary = nullptr,
                      CudaRunStats* stats = nullptr) {
  auto m = Parse(text);
  if (m == nullptr) return "parse failed";
  std::vector<Literal> args = PatternArgs(*m);
  auto want = EvaluateModule(*m, args, EvaluatorOptions{});
  if (!want.ok()) return "interpreter: " + std::string(want.status().message());
  CudaCompileOptions o = testing::CudaTestOptions();
  o.run_hlo_passes = passes;
  auto exe = CudaExecutable::Compile(*m, o);
  if (!exe.ok()) return "compile: " + std::string(exe.status().message());
  if (summary != nullptr) *summary = (*exe)->Summary();
  auto got = (*exe)->Run(args, EvaluatorOptions{});
  if (!got.ok()) return "run: " + std::string(got.status().message());
  if (stats != nullptr) *stats = (*exe)->run_stats();
  return Disagreement(*want, *got, "result", testing::CudaElementTolerance);
}

TEST(CudaBackend, DescribesTheDevice) {
  HLOWB_REQUIRE_CUDA();
  const std::string d = CudaDeviceDescription();
  std::cout << "device: " << d << "\n";
  EXPECT_NE(d.find("sm_"), std::string::npos) << d;
}

TEST(CudaBackend, ElementwiseFusionRunsAsOneKernelAndAgrees) {
  std::string summary;
  CudaRunStats stats;
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  a = f32[300,257] parameter(0)
  b = f32[300,257] parameter(1)
  c = f32[300,257] parameter(2)
  m = f32[300,257] multiply(a, b)
  s = f32[300,257] add(m, c)
  t = f32[300,257] tanh(s)
  x = f32[300,257] exponential(t)
  ROOT l = f32[300,257] log(x)
})", true, &summary, &stats), "");
  EXPECT_EQ(stats.kernel_launches, 1) << summary;
  EXPECT_GT(stats.kernel_ms, 0);
}

TEST(CudaBackend, IntegerAndPredicateOpsAreBitExact) {
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  a = s32[1000] parameter(0)
  b = s32[1000] parameter(1)
  d = s32[1000] divide(a, b)
  r = s32[1000] remainder(a, b)
  sh = s32[1000] shift-left(a, b)
  p = pred[1000] compare(a, b), direction=LT
  sel = s32[1000] select(p, d, r)
  u = u8[1000] convert(sel)
  ROOT t = (s32[1000], u8[1000], pred[1000], s32[1000]) tuple(sel, u, p, sh)
})", false), "");
}

TEST(CudaBackend, ReductionsTransposesAndDataMovementAgree) {
  EXPECT_EQ(Agreement(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[33,65,17] parameter(0)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  row = f32[33,65] reduce(x, z), dimensions={2}, to_apply=add
  col = f32[33,17] reduce(x, ninf), dimensions={1}, to_apply=max
  all = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add
  t = f32[17,65,33] transpose(x), dimensions={2,1,0}
  s = f32[10,20,5] slice(x), slice={[3:13], [5:45:2], [0:5]}
  p = f32[40,65,17] pad(x, z), padding=3_4x0_0x0_0
  c = f32[66,65,17] concatenate(x, x), dimensions={0}
  r = f32[33,65,17] reverse(x), dimensions={0,2}
  i = s32[33,65] iota(), iota_dimension=1
  b = f32[33,65,17,2] broadcast(x), dimensions={0,1,2}
  ROOT out = (f32[33,65], f32[33,17], f32[], f32[17,65,33], f32[10,20,5], f32[40,65,17],
              f32[66,65,17], f32[33,65,17], s32[33,65], f32[33,65,17,2])
    tuple(row, col, all, t, s, p, c, r, i, b)
})", true), "");
}

TEST(CudaBackend, NarrowFloatsRoundAsTheInterpreterDoes) {
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  a = bf16[512] parameter(0)
  b = f16[512] parameter(1)
  c = bf16[512] multiply(a, a)
  d = f16[512] add(b, b)
  e = f32[512] convert(c)
  f = f32[512] convert(d)
  ROOT g = f32[512] add(e, f)
})", false), "");
}

TEST(CudaBackend, DotsRunInCublasInEveryOperandOrder) {
  for (const char* dims :
       {"lhs_contracting_dims={1}, rhs_contracting_dims={0}",
        "lhs_contracting_dims={0}, rhs_contracting_dims={0}",
        "lhs_contracting_dims={1}, rhs_contracting_dims={1}",
        "lhs_contracting_dims={0}, rhs_contracting_dims={1}"}) {
    const std::string d(dims);
    const bool lt = d.find("lhs_contracting_dims={0}") != std::string::npos;
    const bool rt = d.find("rhs_contracting_dims={1}") != std::string::npos;
    const std::string lhs = lt ? "f32[96,40]" : "f32[40,96]";
    const std::string rhs = rt ? "f32[72,96]" : "f32[96,72]";
    std::string summary;
    CudaRunStats stats;
    EXPECT_EQ(Agreement("HloModule m\nENTRY e {\n  a = " + lhs + " parameter(0)\n  b = " + rhs +
                            " parameter(1)\n  ROOT d = f32[40,72] dot(a, b), " + d + "\n}",
                        false, &summary, &stats),
              "")
        << dims;
    EXPECT_EQ(stats.gemm_calls, 1) << dims << ": " << summary;
  }
  // Batched, f64.
  CudaRunStats stats;
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  a = f64[3,20,30] parameter(0)
  b = f64[3,30,10] parameter(1)
  ROOT d = f64[3,20,10] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
})", false, nullptr, &stats), "");
  EXPECT_EQ(stats.gemm_calls, 1);
  // 16-bit floats: cuBLAS sums in f32 and rounds once, as the interpreter (in f64) does, within
  // one unit in the last place; batched and transposed.
  for (const char* type : {"f16", "bf16"}) {
    const std::string t(type);
    CudaRunStats narrow;
    std::string summary;
    EXPECT_EQ(Agreement("HloModule m\nENTRY e {\n  a = " + t + "[2,24,30] parameter(0)\n  b = " +
                            t + "[2,16,30] parameter(1)\n  ROOT d = " + t +
                            "[2,24,16] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                            "lhs_contracting_dims={2}, rhs_contracting_dims={2}\n}",
                        false, &summary, &narrow),
              "")
        << type;
    EXPECT_EQ(narrow.gemm_calls, 1) << type << ": " << summary;
  }
}

TEST(CudaBackend, WhatIsNotCompiledRunsOnTheInterpreterAndIsNamed) {
  std::string summary;
  EXPECT_EQ(Agreement(R"(
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  a = f32[100] parameter(0)
  s = f32[100] sort(a), dimensions={0}, to_apply=cmp
  ROOT n = f32[100] negate(s)
})", false, &summary), "");
  EXPECT_NE(summary.find("sort 1"), std::string::npos) << summary;
}

// Every corpus module the interpreter runs (quickly) agrees on cuda.
TEST(CudaBackend, EveryCorpusModuleTheInterpreterRunsAgrees) {
  std::vector<std::string> files = testing::CorpusFiles(testing::CudaCorpusDir());
  if (files.empty()) GTEST_SKIP() << "corpus folder " << testing::CudaCorpusDir() << " is absent";
  EvaluatorOptions options;
  options.memory_budget_bytes = uint64_t{8} << 30;
  options.elided_constant = [](const Instruction& instr) -> absl::StatusOr<Literal> {
    return Pattern(instr.shape(), 1);
  };
  int agreed = 0, total = 0, slow = 0;
  int64_t kernels = 0, cooperative = 0, tiled = 0, gemms = 0, interpreted = 0, in_arena = 0;
  double kernel_ms = 0;
  std::map<std::string, int64_t> interpreted_by_opcode;
  testing::ForEachVerifiedModule(files, [&](const std::string& label, const Module& module) {
    std::vector<Literal> args = PatternArgs(module);
    auto t0 = std::chrono::steady_clock::now();
    auto want = EvaluateModule(module, args, options);
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!want.ok()) return;
    if (secs > 5.0) {
      ++slow;
      return;
    }
    ++total;
    auto exe = CudaExecutable::Compile(module, testing::CudaTestOptions());
    ASSERT_TRUE(exe.ok()) << label << ": " << exe.status();
    auto got = (*exe)->Run(args, options);
    ASSERT_TRUE(got.ok()) << label << ": " << got.status();
    const std::string d = Disagreement(*want, *got, "result", testing::CudaElementTolerance);
    EXPECT_TRUE(d.empty()) << label << ": " << d << "\n  " << (*exe)->Summary();
    if (d.empty()) ++agreed;
    kernels += (*exe)->stats().kernels;
    in_arena += (*exe)->RunsInArena() ? 1 : 0;
    cooperative += (*exe)->stats().cooperative_kernels;
    tiled += (*exe)->stats().tiled_transposes;
    gemms += (*exe)->stats().library_calls;
    interpreted += (*exe)->stats().interpreted;
    for (const auto& [op, n] : (*exe)->stats().interpreted_by_opcode) interpreted_by_opcode[op] += n;
    kernel_ms += (*exe)->run_stats().kernel_ms;
  });
  std::cout << "cuda corpus: " << agreed << " of " << total << " modules agree with the "
            << "interpreter" << (testing::CudaOnEmulator() ? " on the GPU emulator" : "") << "; "
            << kernels << " kernels (" << cooperative << " reducing by warps or blocks, " << tiled
            << " tiled transposes), " << gemms << " cuBLAS dots, " << in_arena
            << " modules in the arena, "
            << interpreted << " instructions on the interpreter (";
  for (const auto& [op, n] : interpreted_by_opcode) std::cout << op << " " << n << ", ";
  std::cout << "); kernels ran " << kernel_ms
            << " ms; " << slow << " modules over 5 s on the interpreter left out\n";
  EXPECT_GT(total, 50);
  EXPECT_GT(in_arena * 4, total * 3) << "fewer than three quarters of the modules ran in the arena";
}

// The arena: a loop whose state stays in managed memory, a cuBLAS dot, fusions, a sort on the
// interpreter and an output aliased with a parameter, run over one block; the same numbers as
// the driver's run (bit for bit) and the interpreter's, and the arguments untouched.
TEST(CudaBackend, TheArenaRunsLoopsKernelsLibraryCallsAndTheInterpreterOverOneBlock) {
  auto m = Parse(R"(
HloModule m, input_output_alias={ {1}: (1, {}, may-alias) }
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=LT
}
cond {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[64,64]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[64,64] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[64,64] broadcast(half), dimensions={}
  small = f32[] constant(0.02)
  smalls = f32[64,64] broadcast(small), dimensions={}
  tx = f32[64,64] tanh(x)
  a = f32[64,64] multiply(tx, smalls)
  xh = f32[64,64] multiply(x, halves)
  b = f32[64,64] tanh(xh)
  d = f32[64,64] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (s32[], f32[64,64]) tuple(j, d)
}
ENTRY e {
  x = f32[64,64] parameter(0)
  y = f32[300] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[64,64]) tuple(zero, x)
  w = (s32[], f32[64,64]) while(init), condition=cond, body=body
  out = f32[64,64] get-tuple-element(w), index=1
  th = f32[64,64] tanh(out)
  z = f32[] constant(0)
  rows = f32[64] reduce(th, z), dimensions={1}, to_apply=add
  sorted = f32[300] sort(y), dimensions={0}, to_apply=cmp
  neg = f32[300] negate(sorted)
  ROOT t = (f32[64], f32[300]) tuple(rows, neg)
})");
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = PatternArgs(*m);
  std::vector<Literal> before;
  for (const Literal& a : args) before.push_back(a);
  auto want = EvaluateModule(*m, args, EvaluatorOptions{});
  ASSERT_TRUE(want.ok()) << want.status();
  CudaCompileOptions o = testing::CudaTestOptions();
  auto arena = CudaExecutable::Compile(*m, o);
  ASSERT_TRUE(arena.ok()) << arena.status();
  EXPECT_TRUE((*arena)->RunsInArena()) << (*arena)->Summary();
  EXPECT_NE((*arena)->Summary().find("arena of managed memory"), std::string::npos)
      << (*arena)->Summary();
  o.arena = false;
  auto driver = CudaExecutable::Compile(*m, o);
  ASSERT_TRUE(driver.ok()) << driver.status();
  EXPECT_FALSE((*driver)->RunsInArena());
  EXPECT_NE((*driver)->Summary().find("runs on the driver (switched off)"), std::string::npos)
      << (*driver)->Summary();
  auto a = (*arena)->Run(args, EvaluatorOptions{});
  ASSERT_TRUE(a.ok()) << a.status();
  auto d = (*driver)->Run(args, EvaluatorOptions{});
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(Disagreement(*want, *a, "arena", testing::CudaElementTolerance), "");
  EXPECT_EQ(Disagreement(*d, *a, "arena against driver",
                         [](PrimitiveType) { return CpuTolerance{0, 0}; }),
            "");
  EXPECT_GT((*arena)->run_stats().gemm_calls, 0) << (*arena)->Summary();
  EXPECT_GT((*arena)->run_stats().kernel_launches, 0);
  for (size_t i = 0; i < args.size(); ++i) {
    EXPECT_EQ(Disagreement(before[i], args[i], "argument " + std::to_string(i),
                           [](PrimitiveType) { return CpuTolerance{0, 0}; }),
              "");
  }
  // XLA's optimized modules (compiled as given) run on the driver, which says why.
  o.arena = true;
  o.run_hlo_passes = false;
  auto given = CudaExecutable::Compile(*m, o);
  ASSERT_TRUE(given.ok()) << given.status();
  EXPECT_FALSE((*given)->RunsInArena());
  EXPECT_NE((*given)->Summary().find("runs on the driver (the module was not compiled"),
            std::string::npos)
      << (*given)->Summary();
}

// XLA's cuBLASLt calls with epilogues: the GEMM in cuBLAS, then one kernel adding the bias along
// the trailing dimensions and applying ReLU or GELU (writing the value before the activation
// as AUX), against the interpreter's cuBLAS semantics; on the driver (as given) and in the
// arena (through the gpu pipeline), with the epilogue by name and by number, and with C.
TEST(CudaBackend, CublasEpiloguesRunAsAGemmAndOneKernel) {
  EvaluatorOptions eo;
  eo.custom_call = CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), {})->AsFunction();
  const std::string dims =
      R"(\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],)"
      R"(\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],)"
      R"(\"rhs_batch_dimensions\":[]})";
  struct Case {
    std::string epilogue;  // the JSON value
    bool bias, aux, c;
  };
  for (const Case& k : {Case{R"(\"BIAS\")", true, false, false},
                        Case{R"(\"RELU\")", false, false, false},
                        Case{R"(\"BIAS_RELU\")", true, false, true},
                        Case{R"(\"GELU\")", false, false, false},
                        Case{"6", true, false, false},  // BIAS_GELU by number
                        Case{R"(\"BIAS_GELU_AUX\")", true, true, false}}) {
    std::string operands = "a, b";
    std::string params = "  a = f32[64,40] parameter(0)\n  b = f32[40,48] parameter(1)\n";
    if (k.c) {
      operands += ", c";
      params += "  c = f32[64,48] parameter(2)\n";
    }
    if (k.bias) {
      operands += ", bias";
      params += "  bias = f32[48] parameter(" + std::to_string(k.c ? 3 : 2) + ")\n";
    }
    const std::string result = k.aux ? "(f32[64,48], f32[64,48], s8[256])" : "(f32[64,48], s8[256])";
    const std::string text =
        "HloModule m\nENTRY e {\n" + params + "  cc = " + result + " custom-call(" + operands +
        R"(), custom_call_target="__cublas$lt$matmul", backend_config="{\"gemm_backend_config\":{\"alpha_real\":0.5,\"beta\":)" +
        (k.c ? "2" : "0") + "," + dims + R"(,\"epilogue\":)" + k.epilogue +
        "}}\"\n  g0 = f32[64,48] get-tuple-element(cc), index=0\n" +
        (k.aux ? "  g1 = f32[64,48] get-tuple-element(cc), index=1\n"
                 "  ROOT t = (f32[64,48], f32[64,48]) tuple(g0, g1)\n"
               : "  ROOT t = (f32[64,48]) tuple(g0)\n") +
        "}\n";
    auto m = Parse(text);
    ASSERT_NE(m, nullptr) << text;
    std::vector<Literal> args = PatternArgs(*m);
    auto want = EvaluateModule(*m, args, eo);
    ASSERT_TRUE(want.ok()) << k.epilogue << ": " << want.status();
    for (bool passes : {false, true}) {
      CudaCompileOptions o = testing::CudaTestOptions();
      o.run_hlo_passes = passes;
      auto exe = CudaExecutable::Compile(*m, o);
      ASSERT_TRUE(exe.ok()) << exe.status();
      EXPECT_EQ((*exe)->stats().library_calls, 1) << k.epilogue << ": " << (*exe)->Summary();
      EXPECT_EQ((*exe)->stats().interpreted, 0) << k.epilogue << ": " << (*exe)->Summary();
      EXPECT_EQ((*exe)->RunsInArena(), passes) << (*exe)->Summary();
      auto got = (*exe)->Run(args, eo);
      ASSERT_TRUE(got.ok()) << k.epilogue << ": " << got.status();
      EXPECT_EQ(Disagreement(*want, *got, "result", testing::CudaElementTolerance), "")
          << k.epilogue << (passes ? " (arena)" : " (driver)");
      EXPECT_EQ((*exe)->run_stats().gemm_calls, 1) << k.epilogue;
      EXPECT_GE((*exe)->run_stats().kernel_launches, 1) << k.epilogue;
    }
  }
}

// XLA's cuDNN forward convolutions run as one kernel each: the convolution with the call's
// window and dim_labels, the result scale, the side input, the bias along the output features and
// the activation, against the interpreter's cuDNN semantics; f32 and f16; on the driver and in
// the arena. Backward convolutions stay on the host and say so.
TEST(CudaBackend, CudnnForwardConvolutionsRunAsKernels) {
  EvaluatorOptions eo;
  eo.custom_call = CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), {})->AsFunction();
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[2,9,9,4] parameter(0)
  w = f32[3,3,4,6] parameter(1)
  bias = f32[6] parameter(2)
  side = f32[2,9,9,6] parameter(3)
  h = f16[1,8,8,4] parameter(4)
  hw = f16[3,3,2,4] parameter(5)
  c1 = (f32[2,5,5,6], u8[0]) custom-call(x, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", backend_config="{\"cudnn_conv_backend_config\":{\"conv_result_scale\":0.5,\"activation_mode\":\"kNone\"}}"
  c2 = (f32[2,9,9,6], u8[16]) custom-call(x, w, bias, side), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config="{\"cudnn_conv_backend_config\":{\"conv_result_scale\":1,\"side_input_scale\":0.25,\"activation_mode\":\"kRelu\"}}"
  c3 = (f32[2,9,9,6], u8[0]) custom-call(x, w, bias), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config="{\"cudnn_conv_backend_config\":{\"conv_result_scale\":2,\"activation_mode\":8,\"leakyrelu_alpha\":0.1}}"
  c4 = (f16[1,8,8,4], u8[0]) custom-call(h, hw), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2, custom_call_target="__cudnn$convForward", backend_config="{\"cudnn_conv_backend_config\":{\"conv_result_scale\":1,\"activation_mode\":\"kTanh\"}}"
  g1 = f32[2,5,5,6] get-tuple-element(c1), index=0
  g2 = f32[2,9,9,6] get-tuple-element(c2), index=0
  g3 = f32[2,9,9,6] get-tuple-element(c3), index=0
  g4 = f16[1,8,8,4] get-tuple-element(c4), index=0
  ROOT t = (f32[2,5,5,6], f32[2,9,9,6], f32[2,9,9,6], f16[1,8,8,4]) tuple(g1, g2, g3, g4)
})";
  auto m = Parse(text);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = PatternArgs(*m);
  auto want = EvaluateModule(*m, args, eo);
  ASSERT_TRUE(want.ok()) << want.status();
  for (bool passes : {false, true}) {
    CudaCompileOptions o = testing::CudaTestOptions();
    o.run_hlo_passes = passes;
    auto exe = CudaExecutable::Compile(*m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
    EXPECT_EQ((*exe)->RunsInArena(), passes) << (*exe)->Summary();
    auto got = (*exe)->Run(args, eo);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(Disagreement(*want, *got, "result", testing::CudaElementTolerance), "")
        << (passes ? "arena" : "driver");
    EXPECT_GE((*exe)->run_stats().kernel_launches, 4);
  }
  // A backward convolution stays on the host.
  auto back = Parse(R"(
HloModule m
ENTRY e {
  dy = f32[1,8,8,6] parameter(0)
  w = f32[3,3,4,6] parameter(1)
  c = (f32[1,8,8,4], u8[0]) custom-call(dy, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardInput", backend_config="{}"
  ROOT g = f32[1,8,8,4] get-tuple-element(c), index=0
})");
  ASSERT_NE(back, nullptr);
  auto exe = CudaExecutable::Compile(*back, testing::CudaTestOptions());
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_NE((*exe)->Summary().find("custom-call 1"), std::string::npos) << (*exe)->Summary();
  bool named = false;
  for (const auto& [name, why] : (*exe)->not_compiled()) {
    named |= why.find("backward convolutions run on the host") != std::string::npos;
  }
  EXPECT_TRUE(named);
}

// XLA's optimized GPU modules as they are (is_scheduled, fusions with XLA's boundaries, cuBLAS
// custom calls): corpus files from XLA's GPU tests that hold `__cublas$gemm`.
TEST(CudaBackend, XlaOptimizedGpuModulesWithCublasCallsReplayAsTheyAre) {
  std::vector<std::string> files = testing::CorpusFiles(testing::CudaCorpusDir());
  if (files.empty()) GTEST_SKIP() << "corpus folder " << testing::CudaCorpusDir() << " is absent";
  EvaluatorOptions eo;
  eo.custom_call = CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), {})->AsFunction();
  int ran = 0;
  for (const std::string& path : files) {
    auto text = ReadFileToString(path);
    ASSERT_TRUE(text.ok());
    if (text->find("__cublas$gemm") == std::string::npos) continue;
    for (std::string_view part : SplitInputFile(*text)) {
      if (part.find("__cublas$gemm") == std::string_view::npos) continue;
      auto module = ParseModule(part);
      if (!module.ok() || CountErrors(VerifyModule(**module)) > 0) continue;
      std::vector<Literal> args = PatternArgs(**module);
      auto want = EvaluateModule(**module, args, eo);
      if (!want.ok()) continue;
      CudaCompileOptions o = testing::CudaTestOptions();
      o.run_hlo_passes = false;
      auto exe = CudaExecutable::Compile(**module, o);
      ASSERT_TRUE(exe.ok()) << path << ": " << exe.status();
      auto got = (*exe)->Run(args, eo);
      ASSERT_TRUE(got.ok()) << path << ": " << got.status();
      EXPECT_EQ(Disagreement(*want, *got, "result", testing::CudaElementTolerance), "")
          << path << "\n  " << (*exe)->Summary();
      std::cout << fs::path(path).filename().string() << ": " << (*exe)->Summary() << "\n";
      ++ran;
    }
  }
  EXPECT_GT(ran, 0) << "no corpus module with a cuBLAS custom call ran";
}

}  // namespace
}  // namespace hlowb
