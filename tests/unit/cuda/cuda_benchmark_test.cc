// The cuda platform's benchmark, every ratio against a baseline measured in the same run on the
// same GPU. Runs only with HLOWB_CUDA_BENCH=1 on a machine with a GPU (scripts/gpu-check sets
// it); prints one "BENCH name value unit (ratio ...)" line per figure.
//  - elementwise: a*b+c over 16M f32 elements, one fused kernel, against cuMemcpyDtoD bandwidth
//    (bytes read plus written) — goal >= 0.8;
//  - row reduction: sums of the 4096-element rows of a 16384 x 4096 f32 array (a block per row),
//    and a transpose of an 8192 x 8192 f32 array (32x32 shared-memory tiles), each against
//    cuMemcpyDtoD bandwidth (bytes read plus written) — no goal set, reported;
//  - GEMM: a 4096^3 f32 dot through the platform against the same cuBLAS GEMM called directly —
//    goal >= 0.95;
//  - end to end: an MLP module (four dot + bias + relu layers and a softmax) replayed through the
//    gpu pipeline; device time against its roofline (flops at this run's GEMM rate plus bytes at
//    this run's copy bandwidth) — goal <= 2.0. The wall time with host copies is printed too.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "core/analysis/cost_model.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/backends/cuda/cuda_driver.h"
#include "tests/unit/cuda/cuda_test_util.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

bool BenchRequested() {
  const char* v = std::getenv("HLOWB_CUDA_BENCH");
  return v != nullptr && std::string(v) == "1";
}

void Bench(const std::string& name, double value, const std::string& unit,
           const std::string& ratio) {
  char line[400];
  std::snprintf(line, sizeof line, "BENCH %s %.4g %s%s%s", name.c_str(), value, unit.c_str(),
                ratio.empty() ? "" : " ", ratio.c_str());
  std::cout << line << std::endl;
}

std::string Ratio(double r, const char* goal) {
  char s[160];
  std::snprintf(s, sizeof s, "(ratio %.3f, goal %s)", r, goal);
  return s;
}

std::vector<Literal> Args(const Module& m) {
  std::vector<Literal> args;
  for (int i = 0; i < m.entry()->parameter_count(); ++i) {
    args.push_back(testing::Pattern(m.entry()->parameter(i)->shape(), i));
  }
  return args;
}

std::string MlpModuleText() {
  std::string text = "HloModule mlp\n\nmax {\n  a = f32[] parameter(0)\n  b = f32[] "
                     "parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n\nadd {\n  a = f32[] "
                     "parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\n"
                     "ENTRY e {\n  x0 = f32[2048,4096] parameter(0)\n  zero = f32[] constant(0)\n"
                     "  zeros = f32[2048,4096] broadcast(zero), dimensions={}\n";
  for (int l = 0; l < 4; ++l) {
    const std::string i = std::to_string(l), n = std::to_string(l + 1);
    text += "  w" + i + " = f32[4096,4096] parameter(" + std::to_string(2 * l + 1) + ")\n";
    text += "  b" + i + " = f32[4096] parameter(" + std::to_string(2 * l + 2) + ")\n";
    text += "  d" + i + " = f32[2048,4096] dot(x" + i + ", w" + i +
            "), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
    text += "  bb" + i + " = f32[2048,4096] broadcast(b" + i + "), dimensions={1}\n";
    text += "  sum" + i + " = f32[2048,4096] add(d" + i + ", bb" + i + ")\n";
    text += "  x" + n + " = f32[2048,4096] maximum(sum" + i + ", zeros)\n";
  }
  text += "  ninf = f32[] constant(-inf)\n"
          "  mx = f32[2048] reduce(x4, ninf), dimensions={1}, to_apply=max\n"
          "  mxb = f32[2048,4096] broadcast(mx), dimensions={0}\n"
          "  sh = f32[2048,4096] subtract(x4, mxb)\n"
          "  ex = f32[2048,4096] exponential(sh)\n"
          "  sm = f32[2048] reduce(ex, zero), dimensions={1}, to_apply=add\n"
          "  smb = f32[2048,4096] broadcast(sm), dimensions={0}\n"
          "  ROOT out = f32[2048,4096] divide(ex, smb)\n}\n";
  return text;
}

struct BandwidthModule {
  const char* name;
  const char* text;
  double bytes;  // read plus written
};
const BandwidthModule kBandwidthModules[] = {
    {"row_reduction_16384x4096", R"(
HloModule rows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[16384,4096] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[16384] reduce(x, z), dimensions={1}, to_apply=add
})", 4.0 * 16384 * 4096 + 4.0 * 16384},
    {"transpose_8192x8192", R"(
HloModule transpose
ENTRY e {
  x = f32[8192,8192] parameter(0)
  ROOT t = f32[8192,8192] transpose(x), dimensions={1,0}
})", 2.0 * 4 * 8192 * 8192},
};

// The benchmark's modules parse, verify and compile to PTX here, without a GPU, so a GPU run is
// never spent on a typo.
TEST(CudaBenchmarkModules, CompileWithoutAGpu) {
  auto m = ParseModule(MlpModuleText());
  ASSERT_TRUE(m.ok()) << m.status();
  CudaCompileOptions o;
  o.compile_only = true;
  auto exe = CudaExecutable::Compile(**m, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().library_calls, 4) << (*exe)->Summary();
  EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
  // The buffers are global memory: the kernels use ld.global, not generic loads.
  EXPECT_NE((*exe)->ptx_programs().at(0).find("ld.global"), std::string::npos);
  for (const BandwidthModule& bm : kBandwidthModules) {
    auto bmod = ParseModule(bm.text);
    ASSERT_TRUE(bmod.ok()) << bm.name << ": " << bmod.status();
    CudaCompileOptions bo;
    bo.compile_only = true;
    bo.run_hlo_passes = false;
    auto bexe = CudaExecutable::Compile(**bmod, bo);
    ASSERT_TRUE(bexe.ok()) << bm.name << ": " << bexe.status();
    EXPECT_EQ((*bexe)->stats().cooperative_kernels + (*bexe)->stats().tiled_transposes, 1)
        << bm.name << ": " << (*bexe)->Summary();
  }
}

class CudaBenchmark : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BenchRequested()) GTEST_SKIP() << "set HLOWB_CUDA_BENCH=1 to run the cuda benchmark";
    HLOWB_REQUIRE_CUDA();
    auto ctx = cuda::Context::Create(0);
    ASSERT_TRUE(ctx.ok()) << ctx.status();
    ctx_ = std::move(*ctx);
  }

  // Device-to-device copy bandwidth for `bytes`, bytes read plus written per second (best of 10).
  double CopyBandwidth(size_t bytes) {
    auto a = cuda::DeviceBuffer::Make(ctx_.get(), bytes);
    auto b = cuda::DeviceBuffer::Make(ctx_.get(), bytes);
    EXPECT_TRUE(a.ok() && b.ok());
    EXPECT_TRUE(ctx_->Memset(a->ptr(), 1, bytes).ok());
    float best = 1e30f;
    for (int i = 0; i < 10; ++i) {
      auto ms = ctx_->TimeMs([&] { return ctx_->CopyDeviceToDevice(b->ptr(), a->ptr(), bytes); });
      EXPECT_TRUE(ms.ok()) << ms.status();
      if (ms.ok()) best = std::min(best, *ms);
    }
    return 2.0 * static_cast<double>(bytes) / (best * 1e-3);
  }

  // cuBLAS sgemm rate for n^3, flops per second (best of 5).
  double GemmRate(int64_t n, float* best_ms) {
    const size_t bytes = static_cast<size_t>(n * n) * 4;
    auto a = cuda::DeviceBuffer::Make(ctx_.get(), bytes);
    auto b = cuda::DeviceBuffer::Make(ctx_.get(), bytes);
    auto c = cuda::DeviceBuffer::Make(ctx_.get(), bytes);
    EXPECT_TRUE(a.ok() && b.ok() && c.ok());
    EXPECT_TRUE(ctx_->Memset(a->ptr(), 0x3c, bytes).ok());
    EXPECT_TRUE(ctx_->Memset(b->ptr(), 0x3c, bytes).ok());
    auto blas = cuda::Blas::Create(ctx_.get());
    EXPECT_TRUE(blas.ok()) << blas.status();
    if (!blas.ok()) return 0;
    float best = 1e30f;
    for (int i = 0; i < 6; ++i) {
      auto ms = ctx_->TimeMs([&] {
        return (*blas)->Gemm(cuda::Blas::Type::kF32, false, false, n, n, n, 1.0, a->ptr(), n,
                             0, b->ptr(), n, 0, 0.0, c->ptr(), n, 0, 1);
      });
      EXPECT_TRUE(ms.ok()) << ms.status();
      if (ms.ok() && i > 0) best = std::min(best, *ms);
    }
    *best_ms = best;
    return 2.0 * static_cast<double>(n) * n * n / (best * 1e-3);
  }

  std::unique_ptr<cuda::Context> ctx_;
};

TEST_F(CudaBenchmark, Report) {
  std::cout << "device: " << CudaDeviceDescription() << "\n";
  const double copy_bw = CopyBandwidth(size_t{1} << 30);
  Bench("memcpy_dtod_bandwidth", copy_bw / 1e9, "GB/s", "(1 GiB copied)");
  // The same traffic as the elementwise fusion below (256 MiB read plus written).
  const double copy_bw_same = CopyBandwidth(size_t{128} << 20);
  Bench("memcpy_dtod_bandwidth_128MiB", copy_bw_same / 1e9, "GB/s", "(128 MiB copied)");
  float direct_ms = 0;
  const double gemm_rate = GemmRate(4096, &direct_ms);
  Bench("cublas_sgemm_4096", gemm_rate / 1e12, "TFLOP/s", "");

  // Elementwise fusion.
  {
    auto m = ParseModule(R"(
HloModule triad
ENTRY e {
  a = f32[16777216] parameter(0)
  b = f32[16777216] parameter(1)
  c = f32[16777216] parameter(2)
  m = f32[16777216] multiply(a, b)
  ROOT s = f32[16777216] add(m, c)
})");
    ASSERT_TRUE(m.ok()) << m.status();
    auto exe = CudaExecutable::Compile(**m, CudaCompileOptions{});
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<Literal> args = Args(**m);
    double best = 1e30;
    for (int i = 0; i < 6; ++i) {
      const double before = (*exe)->run_stats().kernel_ms;
      auto r = (*exe)->Run(args, EvaluatorOptions{});
      ASSERT_TRUE(r.ok()) << r.status();
      if (i > 0) best = std::min(best, (*exe)->run_stats().kernel_ms - before);
    }
    ASSERT_EQ((*exe)->stats().kernels, 1) << (*exe)->Summary();
    const double bytes = 4.0 * 16777216 * 4;
    const double bw = bytes / (best * 1e-3);
    Bench("elementwise_fusion_triad", bw / 1e9, "GB/s", Ratio(bw / copy_bw, ">= 0.80"));
    Bench("elementwise_fusion_triad_vs_equal_traffic_copy", bw / copy_bw_same, "ratio",
          "(against the 128 MiB copy)");
  }

  // Bandwidth-bound kernels: a row reduction (a block per row) and a tiled transpose.
  for (const BandwidthModule& bm : kBandwidthModules) {
    const char* name = bm.name;
    const double bytes = bm.bytes;
    auto m = ParseModule(bm.text);
    ASSERT_TRUE(m.ok()) << m.status();
    CudaCompileOptions o;
    o.run_hlo_passes = false;
    auto exe = CudaExecutable::Compile(**m, o);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().cooperative_kernels + (*exe)->stats().tiled_transposes, 1)
        << (*exe)->Summary();
    std::vector<Literal> args = Args(**m);
    double best = 1e30;
    for (int i = 0; i < 5; ++i) {
      const double before = (*exe)->run_stats().kernel_ms;
      auto r = (*exe)->Run(args, EvaluatorOptions{});
      ASSERT_TRUE(r.ok()) << r.status();
      if (i > 0) best = std::min(best, (*exe)->run_stats().kernel_ms - before);
    }
    const double bw = bytes / (best * 1e-3);
    char ratio[120];
    std::snprintf(ratio, sizeof ratio, "(ratio %.3f of the 1 GiB copy's bandwidth; no goal)",
                  bw / copy_bw);
    Bench(name, bw / 1e9, "GB/s", ratio);
  }

  // A GEMM through the platform.
  {
    auto m = ParseModule(R"(
HloModule gemm
ENTRY e {
  a = f32[4096,4096] parameter(0)
  b = f32[4096,4096] parameter(1)
  ROOT d = f32[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
    ASSERT_TRUE(m.ok()) << m.status();
    auto exe = CudaExecutable::Compile(**m, CudaCompileOptions{});
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<Literal> args = Args(**m);
    double best = 1e30;
    for (int i = 0; i < 4; ++i) {
      const double before = (*exe)->run_stats().gemm_ms;
      auto r = (*exe)->Run(args, EvaluatorOptions{});
      ASSERT_TRUE(r.ok()) << r.status();
      if (i > 0) best = std::min(best, (*exe)->run_stats().gemm_ms - before);
    }
    ASSERT_EQ((*exe)->stats().library_calls, 1) << (*exe)->Summary();
    Bench("dot_4096_through_platform", 2.0 * 4096.0 * 4096 * 4096 / (best * 1e-3) / 1e12,
          "TFLOP/s", Ratio(direct_ms / best, ">= 0.95"));
  }

  // End to end: an MLP.
  {
    const std::string text = MlpModuleText();
    auto m = ParseModule(text);
    ASSERT_TRUE(m.ok()) << m.status();
    auto exe = CudaExecutable::Compile(**m, CudaCompileOptions{});
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::cout << "mlp: " << (*exe)->Summary() << "\n";
    std::vector<Literal> args = Args(**m);
    double best_device = 1e30, best_wall = 1e30;
    for (int i = 0; i < 3; ++i) {
      const CudaRunStats before = (*exe)->run_stats();
      auto t0 = std::chrono::steady_clock::now();
      auto r = (*exe)->Run(args, EvaluatorOptions{});
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_TRUE(r.ok()) << r.status();
      const CudaRunStats after = (*exe)->run_stats();
      const double device_ms = after.kernel_ms + after.gemm_ms - before.kernel_ms - before.gemm_ms;
      if (i > 0) {
        best_device = std::min(best_device, device_ms);
        best_wall = std::min(best_wall, wall);
      }
    }
    CostModel cm;
    const Cost cost = cm.ModuleCost((*exe)->module());
    const double roofline_ms = (static_cast<double>(cost.flops) / gemm_rate +
                                static_cast<double>(cost.bytes_accessed()) / copy_bw) * 1e3;
    Bench("mlp_device_time", best_device, "ms",
          Ratio(best_device / roofline_ms, "<= 2.0 x roofline"));
    char extra[200];
    std::snprintf(extra, sizeof extra, "(roofline %.3f ms: %.3g flops, %.3g bytes)", roofline_ms,
                  static_cast<double>(cost.flops), static_cast<double>(cost.bytes_accessed()));
    Bench("mlp_roofline", roofline_ms, "ms", extra);
    Bench("mlp_wall_time_with_host_copies", best_wall * 1e3, "ms", "");
  }
}

}  // namespace
}  // namespace hlowb
