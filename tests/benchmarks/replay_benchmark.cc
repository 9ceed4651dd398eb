// End-to-end replay of the graphsage and ssd_mobilenet corpus modules against a roofline
// estimate measured in the same run:
//   * sgemm speed: cblas_sgemm 1024x1024x1024 (OpenBLAS, its default threads), FLOP/s;
//   * memory speed: memcpy of 256 MiB, counted as read + write traffic (2 x bytes) per second.
// A module's roofline time is flops / sgemm speed + bytes / memory speed, where flops are
// 2*M*N*K of every dot and convolution, and bytes are the operand and result bytes of every
// entry instruction (fusions counted at their boundary; parameters, constants, tuples,
// get-tuple-element and bitcasts move nothing). Each model benchmark reports `roofline_ms` and
// `x_roofline` (measured time / roofline time; 1 would be perfect).
//
// The modules' arguments and elided constants are seeded fake data generated once, outside the
// timed loop, as `hlowb replay` would generate them; the timed part is one run of the module on
// the interpreter (EvaluateModule) or on the cpu platform (CpuExecutable::Run, compiled once
// before the loop). After the cpu runs, the time per opcode of one more run is printed.
//
// The cpu backend's own goals, each against a baseline from the same run:
//   * CpuTriad: the fusion a*b+c over 16M f32 against a STREAM-style triad loop
//     (a[i] = b[i] + s*c[i], the same threads) over the same size; bandwidth ratio, goal >= 0.8;
//   * CpuDot: f32 dot 1024^3 on cpu against cblas_sgemm called directly; goal >= 0.9;
//   * CpuConv: ssd_mobilenet's largest ungrouped convolution, in f32, on cpu against cblas_sgemm
//     on the same GEMM (M = output pixels, N = output features, K = window x input features);
//     goal >= 0.8;
//   * CpuScan: a 300-step scan (vector times matrix, its result stacked into the loop state)
//     against its roofline (the matrix read and the product's flops per step; see BM_CpuScan);
//   * attention_model (fake data, host transfers fake): compile with a cold and a warm kernel
//     cache, and one training step against its roofline, the whole replay extrapolated (printed
//     once, before the timed benchmarks; see AttentionModelReport).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/support/file_util.h"
#include "core/support/strings.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "core/passes/while_loop_simplifier.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/backends/xla/xla_cpu_backend.h"
#include "replay/data/fake_data.h"
#include "replay/data/host_transfers.h"
#include "replay/evaluator/evaluator.h"
#include "replay/session.h"

namespace hlowb {
namespace {

// The cpu compile options of the timed benchmarks: HLOWB_BENCH_CPU_ARENA=0 runs them on the
// evaluator's driver instead of the arena runtime (for the arena's effect, run to run).
CpuCompileOptions BenchCpuOptions() {
  CpuCompileOptions co;
  const char* arena = std::getenv("HLOWB_BENCH_CPU_ARENA");
  co.arena = arena == nullptr || std::string(arena) != "0";
  return co;
}


double g_flops_per_second = 0;
double g_bytes_per_second = 0;

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Best of `reps` timings of `fn`.
template <typename Fn>
double Best(int reps, Fn fn) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, Seconds(t0));
  }
  return best;
}

void MeasureBaselines() {
  constexpr int n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  // One untimed call first: OpenBLAS starts its threads lazily.
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
              0.0f, c.data(), n);
  double sgemm = Best(10, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  });
  g_flops_per_second = 2.0 * n * n * n / sgemm;
  constexpr size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  double copy = Best(10, [&] {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  });
  g_bytes_per_second = 2.0 * bytes / copy;
  std::printf("baselines (same run): cblas_sgemm 1024^3 %.1f GFLOP/s; memcpy 256 MiB %.2f GB/s "
              "(read+write)\n",
              g_flops_per_second / 1e9, g_bytes_per_second / 1e9);
}

int64_t Bytes(const Shape& s) {
  if (s.IsTuple()) {
    int64_t n = 0;
    for (const Shape& e : s.tuple_shapes()) n += Bytes(e);
    return n;
  }
  if (!s.IsArray()) return 0;
  return std::max<int64_t>(s.ElementCount(), 0) * ByteWidth(s.element_type());
}

int64_t Product(const Shape& s, const std::vector<int64_t>& dims) {
  int64_t p = 1;
  for (int64_t d : dims) p *= s.dimension(static_cast<int>(d));
  return p;
}

double Flops(const Instruction& instr) {
  const InstructionAttrs& a = instr.attrs_or_default();
  if (instr.opcode() == Opcode::kDot && a.dot_dimension_numbers) {
    return 2.0 * std::max<int64_t>(instr.shape().ElementCount(), 0) *
           Product(instr.operand(0)->shape(), a.dot_dimension_numbers->lhs_contracting_dimensions);
  }
  if (instr.opcode() == Opcode::kConvolution && a.convolution_dimension_numbers) {
    const ConvolutionDimensionNumbers& dn = *a.convolution_dimension_numbers;
    const Shape& kernel = instr.operand(1)->shape();
    return 2.0 * std::max<int64_t>(instr.shape().ElementCount(), 0) *
           Product(kernel, dn.kernel_spatial_dimensions) *
           kernel.dimension(static_cast<int>(dn.kernel_input_feature_dimension));
  }
  double f = 0;
  if (instr.opcode() == Opcode::kFusion || instr.opcode() == Opcode::kCall) {
    for (const Computation* c : instr.called_computations()) {
      for (const Instruction* i : c->instructions()) f += Flops(*i);
    }
  }
  return f;
}

struct Roofline {
  double flops = 0;
  double bytes = 0;
};

// Roofline of one instruction: its flops, and the bytes of its result and operands (nothing for
// instructions that move no data, and a while loop's body is estimated on its own).
Roofline EstimateInstruction(const Instruction& instr) {
  Roofline r;
  r.flops = Flops(instr);
  switch (instr.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
    case Opcode::kWhile:
      return r;
    default:
      break;
  }
  r.bytes += static_cast<double>(Bytes(instr.shape()));
  for (const Instruction* op : instr.operands()) r.bytes += static_cast<double>(Bytes(op->shape()));
  return r;
}

// Roofline of one run of `computation`: the sum over its own instructions.
Roofline EstimateComputation(const Computation& computation) {
  Roofline r;
  for (const Instruction* instr : computation.instructions()) {
    const Roofline i = EstimateInstruction(*instr);
    r.flops += i.flops;
    r.bytes += i.bytes;
  }
  return r;
}

Roofline Estimate(const Module& m) { return EstimateComputation(*m.entry()); }

struct Prepared {
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;
  std::map<const Instruction*, Literal> constants;
  Roofline roofline;
  // Elided constants made once and read in place by every timed run, as a replay does.
  std::unique_ptr<ConstantCache> constant_cache = std::make_unique<ConstantCache>();
};

std::unique_ptr<Prepared> Prepare(const std::string& file, std::string* error) {
  auto text = ReadFileToString(std::string(HLOWB_CORPUS_DIR) + "/benchmarks/" + file);
  if (!text.ok()) {
    *error = std::string(text.status().message());
    return nullptr;
  }
  auto m = ParseModule(*text);
  if (!m.ok()) {
    *error = std::string(m.status().message());
    return nullptr;
  }
  auto p = std::make_unique<Prepared>();
  p->module = std::move(*m);
  FakeDataOptions options;
  auto args = MakeFakeArguments(*p->module, options);
  if (!args.ok()) {
    *error = std::string(args.status().message());
    return nullptr;
  }
  p->arguments = std::move(*args);
  for (const auto& comp : p->module->computations()) {
    for (const Instruction* instr : comp->instructions()) {
      if (instr->opcode() == Opcode::kConstant && instr->literal() && instr->literal()->elided()) {
        auto l = MakeFakeElidedConstant(*p->module, *instr, options);
        if (!l.ok()) {
          *error = std::string(l.status().message());
          return nullptr;
        }
        p->constants.emplace(instr, std::move(*l));
      }
    }
  }
  p->roofline = Estimate(*p->module);
  return p;
}

EvaluatorOptions ModelOptions(const Prepared& p) {
  EvaluatorOptions options;
  // By name: the cpu platform runs its own copy of the module.
  auto by_name = std::make_shared<std::map<std::string, const Literal*>>();
  for (const auto& [instr, literal] : p.constants) (*by_name)[instr->name()] = &literal;
  options.elided_constant = [by_name](const Instruction& i) -> absl::StatusOr<Literal> {
    auto it = by_name->find(i.name());
    if (it == by_name->end()) return absl::NotFoundError(i.name());
    return *it->second;
  };
  options.constant_cache = p.constant_cache.get();
  return options;
}

// Time per opcode (fusions by their fused root's opcode) of one cpu run, the top few.
void PrintCpuBreakdown(const CpuExecutable& exe, const Prepared& p, const char* name) {
  EvaluatorOptions options = ModelOptions(p);
  std::map<std::string, double> by;
  options.on_instruction = [&by](const InstructionEvent& e) {
    if (e.instruction->parent() == nullptr) return;
    std::string key(OpcodeName(e.instruction->opcode()));
    if (e.instruction->opcode() == Opcode::kFusion &&
        !e.instruction->called_computations().empty()) {
      key = StrCat("fusion(", OpcodeName(e.instruction->called_computations()[0]->root()->opcode()), ")");
    }
    by[key] += e.seconds;
  };
  auto r = exe.Run(p.arguments, options);
  if (!r.ok()) return;
  std::vector<std::pair<double, std::string>> sorted;
  for (const auto& [k, v] : by) sorted.emplace_back(-v, k);
  std::sort(sorted.begin(), sorted.end());
  std::string line;
  for (size_t i = 0; i < sorted.size() && i < 8; ++i) {
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%s %.1f ms", i ? ", " : "", sorted[i].second.c_str(),
                  -sorted[i].first * 1e3);
    line += buf;
  }
  std::printf("cpu %s, time by opcode (nested instructions count inside their caller too): %s\n",
              name, line.c_str());
}

void BM_ReplayModel(benchmark::State& state, const char* file, bool cpu) {
  std::string error;
  std::unique_ptr<Prepared> p = Prepare(file, &error);
  if (p == nullptr) {
    state.SkipWithError(("cannot prepare " + std::string(file) + ": " + error).c_str());
    return;
  }
  EvaluatorOptions options = ModelOptions(*p);
  std::unique_ptr<CpuExecutable> exe;
  if (cpu) {
    CpuCompileOptions co = BenchCpuOptions();
    auto compiled = CpuExecutable::Compile(*p->module, co);
    if (!compiled.ok()) {
      state.SkipWithError(std::string(compiled.status().message()).c_str());
      return;
    }
    exe = std::move(*compiled);
    state.SetLabel(exe->Summary());
  }
  double total = 0;
  int64_t n = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = cpu ? exe->Run(p->arguments, options) : EvaluateModule(*p->module, p->arguments, options);
    total += Seconds(t0);
    ++n;
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r);
  }
  double roofline = p->roofline.flops / g_flops_per_second + p->roofline.bytes / g_bytes_per_second;
  state.counters["gflop"] = p->roofline.flops / 1e9;
  state.counters["mbytes"] = p->roofline.bytes / 1e6;
  state.counters["roofline_ms"] = roofline * 1e3;
  state.counters["x_roofline"] = n > 0 ? (total / n) / roofline : 0;
  if (cpu) PrintCpuBreakdown(*exe, *p, file);
}

std::unique_ptr<Module> MustParse(const std::string& text) {
  auto m = ParseModule(text);
  if (!m.ok()) {
    std::fprintf(stderr, "benchmark module does not parse: %s\n",
                 std::string(m.status().message()).c_str());
    std::abort();
  }
  return std::move(*m);
}

std::unique_ptr<CpuExecutable> MustCompile(const Module& m) {
  CpuCompileOptions co = BenchCpuOptions();
  auto exe = CpuExecutable::Compile(m, co);
  if (!exe.ok()) {
    std::fprintf(stderr, "cpu compile failed: %s\n", std::string(exe.status().message()).c_str());
    std::abort();
  }
  return std::move(*exe);
}

// The timed loop of the cpu kernel benchmarks: mean seconds of one run.
double MeanRunSeconds(benchmark::State& state, const CpuExecutable& exe,
                      const std::vector<Literal>& args) {
  EvaluatorOptions options;
  double total = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    auto t0 = std::chrono::steady_clock::now();
    auto r = exe.Run(args, options);
    total += Seconds(t0);
    ++runs;
    benchmark::DoNotOptimize(r);
  }
  return runs > 0 ? total / runs : 0;
}

Literal Filled(const Shape& shape, float v) {  // f32 shapes only
  if (shape.element_type() != PrimitiveType::kF32) std::abort();
  Literal l = Literal::Uninitialized(shape);
  float* d = l.mutable_data_as<float>();
  std::fill(d, d + l.element_count(), v);
  return l;
}

// STREAM triad on `threads` threads: a[i] = b[i] + s * c[i].
void Triad(float* a, const float* b, const float* c, int64_t n, int threads) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([=] {
      int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
      for (int64_t i = lo; i < hi; ++i) a[i] = b[i] + 3.0f * c[i];
    });
  }
  for (std::thread& t : pool) t.join();
}

void BM_CpuTriad(benchmark::State& state) {
  constexpr int64_t n = int64_t{16} << 20;
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  std::vector<float> a(n, 0.f), b(n, 1.f), c(n, 2.f);
  Triad(a.data(), b.data(), c.data(), n, threads);
  double stream = Best(5, [&] { Triad(a.data(), b.data(), c.data(), n, threads); });
  const double stream_bw = 3.0 * n * 4 / stream;  // STREAM counts 2 reads + 1 write
  auto m = MustParse(StrCat("HloModule triad\nENTRY e {\n  a = f32[", n, "] parameter(0)\n"
                            "  b = f32[", n, "] parameter(1)\n  c = f32[", n, "] parameter(2)\n"
                            "  m = f32[", n, "] multiply(a, b)\n"
                            "  ROOT s = f32[", n, "] add(m, c)\n}\n"));
  auto exe = MustCompile(*m);
  std::vector<Literal> args;
  for (int i = 0; i < 3; ++i) args.push_back(Filled(Shape::Array(PrimitiveType::kF32, {n}), 1.0f + i));
  const double mean = MeanRunSeconds(state, *exe, args);
  const double ours_bw = 4.0 * n * 4 / mean;  // 3 reads + 1 write
  state.counters["GB/s"] = ours_bw / 1e9;
  state.counters["stream_GB/s"] = stream_bw / 1e9;
  state.counters["x_stream"] = ours_bw / stream_bw;
  state.SetLabel(exe->Summary());
}

void BM_CpuDot(benchmark::State& state) {
  constexpr int n = 1024;
  auto m = MustParse("HloModule dot\nENTRY e {\n  a = f32[1024,1024] parameter(0)\n"
                     "  b = f32[1024,1024] parameter(1)\n"
                     "  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={1}, "
                     "rhs_contracting_dims={0}\n}\n");
  auto exe = MustCompile(*m);
  std::vector<Literal> args;
  args.push_back(Filled(Shape::Array(PrimitiveType::kF32, {n, n}), 0.5f));
  args.push_back(Filled(Shape::Array(PrimitiveType::kF32, {n, n}), 0.25f));
  const double mean = MeanRunSeconds(state, *exe, args);
  const double ours = 2.0 * n * n * n / mean;
  state.counters["GFLOP/s"] = ours / 1e9;
  state.counters["x_sgemm"] = ours / g_flops_per_second;
}

// A scan as JAX writes it (lax.scan of c = tanh(c . w) over 300 steps, stacking every c): a
// while loop whose body multiplies a [1, 4096] vector by a [4096, 4096] matrix (64 MB, more
// than the caches hold) and writes the result into row i of the stacked f32[300, 1, 4096]
// state. Its roofline per step is the matrix read at the memcpy rate plus the product's flops
// at the sgemm rate (the row written is noise): the stacked array is updated in place, where a
// copy per step would add 10 MB of traffic to the matrix's 64 MB.
constexpr int64_t kScanSteps = 300, kScanWidth = 4096;

std::string ScanModuleText() {
  constexpr int64_t steps = kScanSteps, n = kScanWidth;
  const std::string v = StrCat("f32[1,", n, "]"), w = StrCat("f32[", n, ",", n, "]"),
                    st = StrCat("f32[", steps, ",1,", n, "]");
  const std::string tuple = StrCat("(s32[], ", v, ", ", st, ", ", w, ")");
  return StrCat(
      "HloModule scan\n",
      "cond {\n  p = ", tuple, " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n",
      "  k = s32[] constant(", steps, ")\n  ROOT lt = pred[] compare(i, k), direction=LT\n}\n",
      "body {\n  p = ", tuple, " parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n",
      "  c = ", v, " get-tuple-element(p), index=1\n  s = ", st, " get-tuple-element(p), index=2\n",
      "  w = ", w, " get-tuple-element(p), index=3\n",
      "  d = ", v, " dot(c, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n",
      "  t = ", v, " tanh(d)\n  r = f32[1,1,", n, "] reshape(t)\n  z = s32[] constant(0)\n",
      "  u = ", st, " dynamic-update-slice(s, r, i, z, z)\n  one = s32[] constant(1)\n",
      "  j = s32[] add(i, one)\n  ROOT next = ", tuple, " tuple(j, t, u, w)\n}\n",
      "ENTRY e {\n  c = ", v, " parameter(0)\n  w = ", w, " parameter(1)\n",
      "  zero = f32[] constant(0)\n  s = ", st, " broadcast(zero), dimensions={}\n",
      "  i = s32[] constant(0)\n  init = ", tuple, " tuple(i, c, s, w)\n",
      "  loop = ", tuple, " while(init), condition=cond, body=body\n",
      "  ROOT out = ", st, " get-tuple-element(loop), index=2\n}\n");
}

std::vector<Literal> ScanArguments() {
  std::vector<Literal> args;
  args.push_back(Filled(Shape::Array(PrimitiveType::kF32, {1, kScanWidth}), 0.5f));
  args.push_back(Filled(Shape::Array(PrimitiveType::kF32, {kScanWidth, kScanWidth}), 1e-4f));
  return args;
}

void BM_CpuScan(benchmark::State& state) {
  constexpr int64_t steps = kScanSteps, n = kScanWidth;
  auto m = MustParse(ScanModuleText());
  auto exe = MustCompile(*m);
  const std::vector<Literal> args = ScanArguments();
  const double mean = MeanRunSeconds(state, *exe, args);
  const double roofline =
      steps * (2.0 * n * n / g_flops_per_second + 4.0 * n * n / g_bytes_per_second);
  state.counters["ms_per_step"] = mean / steps * 1e3;
  state.counters["roofline_ms_per_step"] = roofline / steps * 1e3;
  state.counters["x_roofline"] = mean / roofline;
  state.SetLabel(exe->Summary());
}

// ssd_mobilenet's convolution with the most flops, run alone on cpu, against cblas_sgemm on
// the GEMM it amounts to.
void BM_CpuConv(benchmark::State& state) {
  std::string error;
  std::unique_ptr<Prepared> p =
      Prepare("xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo", &error);
  if (p == nullptr) {
    state.SkipWithError(error.c_str());
    return;
  }
  const Instruction* best = nullptr;
  for (const auto& c : p->module->computations()) {
    for (const Instruction* i : c->instructions()) {
      if (i->opcode() == Opcode::kConvolution && i->attrs_or_default().feature_group_count == 1 &&
          i->attrs_or_default().batch_group_count == 1 &&
          (best == nullptr || Flops(*i) > Flops(*best))) {
        best = i;
      }
    }
  }
  if (best == nullptr || !best->attrs_or_default().convolution_dimension_numbers) {
    state.SkipWithError("no convolution");
    return;
  }
  const ConvolutionDimensionNumbers& dn = *best->attrs_or_default().convolution_dimension_numbers;
  // The same shapes in f32 (ssd's convolutions are bf16; the baseline is sgemm).
  const Shape lhs = Shape::Array(PrimitiveType::kF32, best->operand(0)->shape().dimensions());
  const Shape rhs = Shape::Array(PrimitiveType::kF32, best->operand(1)->shape().dimensions());
  // The convolution alone: its printed form with the operands renamed to the new parameters and
  // its result type made f32.
  std::string body = PrintInstruction(*best);
  body = body.substr(body.find('=') + 2);
  body = StrCat("f32", body.substr(body.find('[')));
  for (auto [from, to] : {std::pair<std::string, std::string>{"%" + best->operand(0)->name(), "%l"},
                          {"%" + best->operand(1)->name(), "%r"}}) {
    for (const char* end_char : {",", ")"}) {
      size_t at = body.find(from + end_char);
      if (at != std::string::npos) body.replace(at, from.size(), to);
    }
  }
  auto m = ParseModule(StrCat("HloModule conv\nENTRY e {\n  l = ", PrintShape(lhs, true),
                              " parameter(0)\n  r = ", PrintShape(rhs, true),
                              " parameter(1)\n  ROOT c = ", body, "\n}\n"));
  if (!m.ok()) {
    state.SkipWithError(std::string(m.status().message()).c_str());
    return;
  }
  auto exe = MustCompile(**m);
  std::vector<Literal> args;
  args.push_back(Filled(lhs, 0.5f));
  args.push_back(Filled(rhs, 0.25f));
  const int64_t out_features = rhs.dimension(static_cast<int>(dn.kernel_output_feature_dimension));
  const int64_t gm = std::max<int64_t>(best->shape().ElementCount(), 0) / out_features;
  const int64_t gk = static_cast<int64_t>(Flops(*best) / 2.0 / std::max<int64_t>(best->shape().ElementCount(), 1));
  std::vector<float> a(gm * gk, 0.5f), b(gk * out_features, 0.25f), c(gm * out_features);
  auto gemm = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(gm),
                static_cast<int>(out_features), static_cast<int>(gk), 1.0f, a.data(),
                static_cast<int>(gk), b.data(), static_cast<int>(out_features), 0.0f, c.data(),
                static_cast<int>(out_features));
  };
  gemm();
  double library = Best(10, gemm);
  const double mean = MeanRunSeconds(state, *exe, args);
  state.counters["ms_library"] = library * 1e3;
  state.counters["x_library"] = library / mean;
  state.SetLabel(StrCat(PrintShape(lhs, false), " * ", PrintShape(rhs, false), " (GEMM ", gm, "x",
                        out_features, "x", gk, ")"));
}

// attention_model (8,170 instructions): a training loop. Its loops are counted (the outer one
// runs 21 times, the training step inside it 57 times per outer iteration), so one replay runs
// the step 1,197 times; a whole replay is hours on a 2-core machine at any speed near the
// roofline. The report therefore gives: compile time with a cold and a warm kernel cache; the
// measured time of one training step (the loop body with the most flops), from a replay with
// fake data and fake host transfers stopped after a few steps; that step's roofline and ratio;
// and the whole replay extrapolated from the step time beside the whole module's roofline.
void AttentionModelReport() {
  std::string error;
  std::unique_ptr<Prepared> p = Prepare("xla__service__attention_model.hlo", &error);
  if (p == nullptr) {
    std::printf("attention_model: %s\n", error.c_str());
    return;
  }
  std::error_code ec;
  const std::string cache = (std::filesystem::temp_directory_path() / "hlowb-bench-kernel-cache").string();
  std::filesystem::remove_all(cache, ec);
  std::unique_ptr<CpuExecutable> exe;
  for (const char* which : {"cold", "warm"}) {
    CpuCompileOptions co;
    co.cache_dir = cache;
    auto t0 = std::chrono::steady_clock::now();
    auto compiled = CpuExecutable::Compile(*p->module, co);
    if (!compiled.ok()) {
      std::printf("attention_model on cpu: %s\n", std::string(compiled.status().message()).c_str());
      return;
    }
    std::printf("attention_model on cpu: compile with a %s kernel cache %.2f s (goal %s)\n",
                which, Seconds(t0),
                which[0] == 'c' ? "<= 10 s" : "a whole replay with a warm cache <= 5 s");
    exe = std::move(*compiled);
  }
  std::printf("attention_model on cpu: %s\n", exe->Summary().c_str());
  std::filesystem::remove_all(cache, ec);
  // How often each computation runs in one replay: the product of the trip counts of the loops
  // around it (0 when a count is not known).
  const Module& m = exe->module();
  std::map<const Computation*, double> runs{{m.entry(), 1}};
  std::vector<const Computation*> order{m.entry()};
  for (size_t k = 0; k < order.size(); ++k) {
    const Computation* c = order[k];
    for (const Instruction* h : c->instructions()) {
      if (h->opcode() != Opcode::kWhile) continue;
      std::optional<int64_t> trips = KnownTripCount(*h, int64_t{1} << 20);
      const Computation* body = h->called_computations()[1];
      if (runs.count(body)) continue;
      runs[body] = trips ? runs[c] * static_cast<double>(*trips) : 0;
      std::printf("attention_model: %s runs %s %s times per %s\n", h->name().c_str(),
                  body->name().c_str(), trips ? std::to_string(*trips).c_str() : "an unknown number of",
                  c == m.entry() ? "replay" : ("iteration of " + c->name()).c_str());
      order.push_back(body);
    }
  }
  const Computation* step = nullptr;
  Roofline whole;
  for (const auto& [c, n] : runs) {
    Roofline r = EstimateComputation(*c);
    whole.flops += r.flops * n;
    whole.bytes += r.bytes * n;
    if (c != m.entry() && (step == nullptr || r.flops > EstimateComputation(*step).flops)) step = c;
  }
  if (step == nullptr) {
    std::printf("attention_model: no loop body found\n");
    return;
  }
  const Roofline step_roof = EstimateComputation(*step);
  const double step_roofline =
      step_roof.flops / g_flops_per_second + step_roof.bytes / g_bytes_per_second;
  const double whole_roofline = whole.flops / g_flops_per_second + whole.bytes / g_bytes_per_second;
  // A replay stopped after kSteps steps (or 300 s).
  constexpr int kSteps = 4;
  CancelToken cancel;
  HostTransferFeeder feeder(/*fake=*/true, /*seed=*/42, /*use_large_float_range=*/false);
  EvaluatorOptions options = ModelOptions(*p);
  options.cancel = &cancel;
  options.host_transfer = feeder.ForDevice(0);
  // When each step starts: the first event of the step's instructions with a new iteration.
  std::vector<double> ends;
  int64_t iteration = -1;
  // Time per instruction and per opcode while the step runs (after its first iteration), to say
  // where a step spends its time. Loops and calls are left out: their time is their bodies'.
  std::map<const Instruction*, double> step_time;
  auto t0 = std::chrono::steady_clock::now();
  options.on_instruction = [&](const InstructionEvent& e) {
    if (ends.size() >= 2 && e.instruction->opcode() != Opcode::kWhile &&
        e.instruction->opcode() != Opcode::kCall && e.instruction->opcode() != Opcode::kConditional) {
      step_time[e.instruction] += e.seconds;
    }
    // Instructions slower than a second are named as they finish (what a step spends its time on).
    if (e.seconds > 1.0 && e.instruction->opcode() != Opcode::kWhile &&
        e.instruction->opcode() != Opcode::kCall) {
      std::printf("attention_model on cpu: %s (%s, %s) took %.1f s\n",
                  e.instruction->name().c_str(), std::string(OpcodeName(e.instruction->opcode())).c_str(),
                  e.instruction->shape().IsTuple()
                      ? StrCat(e.instruction->shape().tuple_count(), "-element tuple").c_str()
                      : PrintShape(e.instruction->shape(), false).c_str(),
                  e.seconds);
      std::fflush(stdout);
    }
    if (e.instruction->parent() != step || e.loop_iteration == iteration) return;
    iteration = e.loop_iteration;
    ends.push_back(Seconds(t0));
    if (static_cast<int>(ends.size()) > kSteps || Seconds(t0) > 300) cancel.Cancel();
  };
  auto r = exe->Run(p->arguments, options);
  if (r.ok() || ends.size() < 2) {
    std::printf("attention_model on cpu: the replay %s after %zu steps in %.1f s\n",
                r.ok() ? "finished" : std::string(r.status().message()).c_str(), ends.size(),
                Seconds(t0));
    if (ends.size() < 2) return;
  }
  const double per_step = (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1);
  std::printf("attention_model on cpu: one training step (%s, %.1f GFLOP) %.2f s; its roofline "
              "%.2f s: %.2fx roofline (goal <= 2x); first step started after %.2f s\n",
              step->name().c_str(), step_roof.flops / 1e9, per_step, step_roofline,
              per_step / step_roofline, ends.front());
  // The breakdown covers steps 2..N (the events between the second and the last step start).
  {
    double total = 0;
    std::map<std::string, double> by_kind;
    std::vector<std::pair<double, const Instruction*>> slowest;
    for (const auto& [h, secs] : step_time) {
      total += secs;
      std::string kind(OpcodeName(h->opcode()));
      if (h->opcode() == Opcode::kFusion) {
        kind = exe->IsCompiled(*h) ? "fusion (kernel)" : "fusion (interpreted)";
      } else if (h->opcode() == Opcode::kDot || h->opcode() == Opcode::kConvolution ||
                 h->opcode() == Opcode::kGather) {
        kind += " (library)";
      } else if (exe->IsCompiled(*h)) {
        kind += " (kernel)";
      }
      by_kind[kind] += secs;
      slowest.emplace_back(secs, h);
    }
    const double steps = static_cast<double>(ends.size() - 2 > 0 ? ends.size() - 2 : 1);
    std::vector<std::pair<double, std::string>> kinds;
    for (const auto& [k, secs] : by_kind) kinds.emplace_back(secs, k);
    std::sort(kinds.rbegin(), kinds.rend());
    std::printf("attention_model on cpu: where a step's %.2f s of instruction time goes (per step):",
                total / steps);
    for (size_t i = 0; i < kinds.size() && i < 12; ++i) {
      std::printf("%s %s %.3f s", i == 0 ? "" : ",", kinds[i].second.c_str(), kinds[i].first / steps);
    }
    std::printf("\n");
    std::sort(slowest.rbegin(), slowest.rend());
    for (size_t i = 0; i < slowest.size() && i < 12; ++i) {
      const Instruction* h = slowest[i].second;
      const Roofline r = EstimateInstruction(*h);
      std::printf("attention_model on cpu:   %s (%s, %s) %.3f s per step; roofline %.3f s\n",
                  h->name().c_str(), std::string(OpcodeName(h->opcode())).c_str(),
                  h->shape().IsTuple() ? StrCat(h->shape().tuple_count(), "-element tuple").c_str()
                                       : PrintShape(h->shape(), false).c_str(),
                  slowest[i].first / steps,
                  r.flops / g_flops_per_second + r.bytes / g_bytes_per_second);
    }
  }
  // The same steps on the evaluator's driver (a literal per value), for the arena's effect in
  // the same run.
  {
    CpuCompileOptions co;
    co.arena = false;
    auto driver = CpuExecutable::Compile(*p->module, co);
    if (driver.ok()) {
      CancelToken stop;
      HostTransferFeeder feed(/*fake=*/true, /*seed=*/42, /*use_large_float_range=*/false);
      EvaluatorOptions o = ModelOptions(*p);
      o.cancel = &stop;
      o.host_transfer = feed.ForDevice(0);
      std::vector<double> starts;
      int64_t it = -1;
      const Computation* driver_step = nullptr;
      for (const auto& c : (*driver)->module().computations()) {
        if (c->name() == step->name()) driver_step = c.get();
      }
      auto d0 = std::chrono::steady_clock::now();
      o.on_instruction = [&](const InstructionEvent& e) {
        if (e.instruction->parent() != driver_step || e.loop_iteration == it) return;
        it = e.loop_iteration;
        starts.push_back(Seconds(d0));
        if (static_cast<int>(starts.size()) > kSteps || Seconds(d0) > 300) stop.Cancel();
      };
      (void)(*driver)->Run(p->arguments, o);
      if (starts.size() >= 2) {
        const double driver_step_seconds =
            (starts.back() - starts.front()) / static_cast<double>(starts.size() - 1);
        std::printf("attention_model on cpu: the same step on the driver (--cpu_arena=false) "
                    "%.2f s: the arena takes %.2fx the driver's time\n",
                    driver_step_seconds, per_step / driver_step_seconds);
      }
    }
  }
  std::printf("attention_model: one whole replay runs that step %.0f times: %.1f TFLOP, roofline "
              "%.0f s at this run's sgemm and memcpy rates; extrapolated on cpu %.0f s. The issue's "
              "20 s goal for a whole replay is %.0fx below the roofline on this machine.\n",
              runs[step], whole.flops / 1e12, whole_roofline, per_step * runs[step],
              whole_roofline / 20.0);
}

// The same modules on real XLA's CPU backend (through the pinned jax), when it can run them.
void XlaComparison() {
  if (!FindXlaPython().ok()) {
    std::printf("xla-cpu comparison: no Python with jax (scripts/setup makes .venv); skipped\n");
    return;
  }
  for (const char* file : {"xla__backends__cpu__benchmarks__hlo__graphsage_tf.hlo",
                           "xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo"}) {
    std::string error;
    std::unique_ptr<Prepared> p = Prepare(file, &error);
    if (p == nullptr) continue;
    EvaluatorOptions options = ModelOptions(*p);
    CpuCompileOptions co;
    auto exe = CpuExecutable::Compile(*p->module, co);
    if (!exe.ok()) continue;
    (void)(*exe)->Run(p->arguments, options);
    double ours = Best(3, [&] { (void)(*exe)->Run(p->arguments, options); });
    XlaCpuOptions xo;
    xo.elided_constant = options.elided_constant;
    double xla = 1e30;
    std::string why;
    for (int i = 0; i < 3; ++i) {
      auto r = RunOnXlaCpu(*p->module, p->arguments, xo);
      if (!r.ok()) {
        why = std::string(r.status().message());
        break;
      }
      xla = std::min(xla, r->run_seconds);
    }
    if (!why.empty()) {
      std::printf("xla-cpu %s: XLA cannot run it here (%s)\n", file, why.substr(0, 200).c_str());
      continue;
    }
    std::printf("xla-cpu %s: ours %.2f ms, XLA %.2f ms, ours/XLA %.2fx (goal <= 1.0x)\n", file,
                ours * 1e3, xla * 1e3, ours / xla);
  }
  // The scan of BM_CpuScan.
  auto scan = MustParse(ScanModuleText());
  auto exe = CpuExecutable::Compile(*scan, BenchCpuOptions());
  if (!exe.ok()) return;
  const std::vector<Literal> args = ScanArguments();
  (void)(*exe)->Run(args, {});
  const double ours = Best(2, [&] { (void)(*exe)->Run(args, {}); });
  double xla = 1e30;
  for (int i = 0; i < 2; ++i) {
    auto r = RunOnXlaCpu(*scan, args, XlaCpuOptions());
    if (!r.ok()) {
      std::printf("xla-cpu scan: XLA cannot run it here (%s)\n",
                  std::string(r.status().message()).substr(0, 200).c_str());
      return;
    }
    xla = std::min(xla, r->run_seconds);
  }
  std::printf("xla-cpu scan (%lld steps of [1,%lld] x [%lld,%lld], stacked): ours %.2f ms, XLA "
              "%.2f ms, ours/XLA %.2fx (goal <= 1.0x)\n",
              static_cast<long long>(kScanSteps), static_cast<long long>(kScanWidth),
              static_cast<long long>(kScanWidth), static_cast<long long>(kScanWidth), ours * 1e3,
              xla * 1e3, ours / xla);
}

void BM_SgemmBaseline(benchmark::State& state) {
  constexpr int n = 1024;
  std::vector<float> a(n * n, 0.5f), b(n * n, 0.25f), c(n * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n,
                0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * n * n * n / 1e9 * state.iterations(),
                                                 benchmark::Counter::kIsRate);
}

void BM_MemcpyBaseline(benchmark::State& state) {
  constexpr size_t bytes = size_t{256} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 0);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes * 2));
}

// Wall time throughout: OpenBLAS (and BLAS inside the evaluator) runs on several threads.
BENCHMARK(BM_SgemmBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_MemcpyBaseline)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, graphsage, "xla__backends__cpu__benchmarks__hlo__graphsage_tf.hlo", false)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, ssd_mobilenet,
                  "xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo", false)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, graphsage_cpu, "xla__backends__cpu__benchmarks__hlo__graphsage_tf.hlo", true)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_ReplayModel, ssd_mobilenet_cpu,
                  "xla__backends__cpu__benchmarks__hlo__ssd_mobilenet_tf.hlo", true)
    ->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CpuTriad)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CpuDot)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CpuConv)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CpuScan)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace hlowb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  // Line by line: the reports before the timed benchmarks take minutes.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  hlowb::MeasureBaselines();
  // HLOWB_BENCH_QUICK=1 skips the minutes-long attention_model and XLA runs.
  if (std::getenv("HLOWB_BENCH_QUICK") == nullptr) {
    hlowb::AttentionModelReport();
    hlowb::XlaComparison();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
