// The GPU emulator's execution model (shuffles, barriers, shared memory, and the misuses it
// reports), checked with hand-written kernels; and the cuda platform's cooperative reductions
// (a warp or a block per output element), checked against the interpreter on the GPU where
// there is one and on the emulator otherwise.
#include <cstdint>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cuda/cuda_backend.h"
#include "replay/codegen/gpu_emulator.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cuda/cuda_test_util.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

using codegen::EmulatedLaunch;
using codegen::EmulateLaunch;

int32_t Global(int32_t t) { return hlowb_emu_ctaid_x() * hlowb_emu_ntid_x() + t; }

void ShuffleKernel(void* table, int64_t) {
  auto* out = static_cast<int32_t*>(table);
  const int32_t t = hlowb_emu_tid_x();
  out[Global(t)] = hlowb_emu_shfl_down_i32(-1, 10 * t + 1000 * hlowb_emu_ctaid_x(), 3, 0x1f);
}

TEST(GpuEmulator, ShuffleDownTakesTheValueDeltaLanesAwayWithinTheWarp) {
  std::vector<int32_t> out(2 * 64, -1);
  EmulatedLaunch l;
  l.fn = ShuffleKernel;
  l.table = out.data();
  l.grid = 2;
  l.block = 64;
  l.collectives = true;
  ASSERT_TRUE(EmulateLaunch(l).ok());
  for (int b = 0; b < 2; ++b) {
    for (int t = 0; t < 64; ++t) {
      const int lane = t % 32;
      const int from = lane + 3 <= 31 ? t + 3 : t;  // past the warp: the lane's own value
      EXPECT_EQ(out[b * 64 + t], 10 * from + 1000 * b) << "block " << b << " thread " << t;
    }
  }
}

void BarrierKernel(void* table, int64_t) {
  auto* out = static_cast<int32_t*>(table);
  auto* shared = static_cast<int32_t*>(hlowb_emu_shared_memory());
  const int32_t t = hlowb_emu_tid_x(), n = hlowb_emu_ntid_x();
  shared[t] = t + 100 * hlowb_emu_ctaid_x();
  hlowb_emu_barrier();
  out[Global(t)] = shared[(t + 1) % n];  // written by the next thread, before the barrier
  hlowb_emu_barrier();
}

TEST(GpuEmulator, ABarrierMakesEveryThreadsSharedWritesVisible) {
  std::vector<int32_t> out(3 * 96, -1);
  EmulatedLaunch l;
  l.fn = BarrierKernel;
  l.table = out.data();
  l.grid = 3;
  l.block = 96;
  l.collectives = true;
  ASSERT_TRUE(EmulateLaunch(l).ok());
  for (int b = 0; b < 3; ++b) {
    for (int t = 0; t < 96; ++t) EXPECT_EQ(out[b * 96 + t], (t + 1) % 96 + 100 * b) << t;
  }
}

void EarlyExitBeforeShuffle(void*, int64_t) {
  const int32_t t = hlowb_emu_tid_x();
  if (t == 5) return;
  hlowb_emu_shfl_down_i32(-1, t, 1, 0x1f);
}

void EarlyExitBeforeBarrier(void*, int64_t) {
  if (hlowb_emu_tid_x() == 7) return;
  hlowb_emu_barrier();
}

void MixedCollectives(void*, int64_t) {
  const int32_t t = hlowb_emu_tid_x();
  if (t % 2 == 0) {
    hlowb_emu_barrier();
  } else {
    hlowb_emu_shfl_down_i32(-1, t, 1, 0x1f);
  }
}

void BarrierWithoutCollectives(void*, int64_t) { hlowb_emu_barrier(); }

std::string LaunchError(void (*fn)(void*, int64_t), bool collectives, int block = 64) {
  EmulatedLaunch l;
  l.fn = fn;
  l.block = block;
  l.collectives = collectives;
  absl::Status st = EmulateLaunch(l);
  return st.ok() ? "" : std::string(st.message());
}

TEST(GpuEmulator, MisusedCollectivesAreReportedWithTheThreads) {
  std::string e = LaunchError(EarlyExitBeforeShuffle, true);
  EXPECT_NE(e.find("lane 5 ended"), std::string::npos) << e;
  EXPECT_NE(e.find("wait at a shuffle"), std::string::npos) << e;
  e = LaunchError(EarlyExitBeforeBarrier, true);
  EXPECT_NE(e.find("wait at a barrier while threads 7 ended"), std::string::npos) << e;
  e = LaunchError(MixedCollectives, true);
  EXPECT_NE(e.find("at a barrier"), std::string::npos) << e;
  EXPECT_NE(e.find("wait at a shuffle"), std::string::npos) << e;
  e = LaunchError(BarrierWithoutCollectives, false);
  EXPECT_NE(e.find("without collectives"), std::string::npos) << e;
  e = LaunchError(BarrierWithoutCollectives, true, 0);
  EXPECT_NE(e.find("block of 0 threads"), std::string::npos) << e;
  e = LaunchError(BarrierWithoutCollectives, true, 4096);
  EXPECT_NE(e.find("block of 4096 threads"), std::string::npos) << e;
  // Outside a launch the emulator's functions are harmless.
  EXPECT_EQ(hlowb_emu_shfl_down_i32(-1, 42, 1, 0x1f), 42);
  EXPECT_EQ(hlowb_emu_shared_memory(), nullptr);
}

std::vector<Literal> PatternArgs(const Module& m) {
  std::vector<Literal> args;
  for (int i = 0; i < m.entry()->parameter_count(); ++i) {
    args.push_back(testing::Pattern(m.entry()->parameter(i)->shape(), i));
  }
  return args;
}

// Runs `text` as given on the interpreter and on cuda; returns the disagreement ("" when they
// agree) and the compile statistics.
std::string Agreement(const std::string& text, CudaCompileStats* stats,
                      std::string* summary = nullptr) {
  auto m = ParseModule(text);
  if (!m.ok()) return "parse: " + std::string(m.status().message());
  std::vector<Literal> args = PatternArgs(**m);
  auto want = EvaluateModule(**m, args, EvaluatorOptions{});
  if (!want.ok()) return "interpreter: " + std::string(want.status().message());
  CudaCompileOptions o = testing::CudaTestOptions();
  o.run_hlo_passes = false;
  auto exe = CudaExecutable::Compile(**m, o);
  if (!exe.ok()) return "compile: " + std::string(exe.status().message());
  *stats = (*exe)->stats();
  if (summary != nullptr) *summary = (*exe)->Summary();
  auto got = (*exe)->Run(args, EvaluatorOptions{});
  if (!got.ok()) return "run: " + std::string(got.status().message());
  return testing::Disagreement(*want, *got, "result", testing::CudaElementTolerance);
}

constexpr char kReducers[] = R"(
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
)";

TEST(CudaCooperativeReduction, LongRowsReduceByBlocksAndWarpsShortOnesByThreads) {
  CudaCompileStats stats;
  std::string summary;
  EXPECT_EQ(Agreement(std::string(kReducers) + R"(
ENTRY e {
  x = f32[37,1000] parameter(0)
  y = f32[50,100] parameter(1)
  z = f32[64,20] parameter(2)
  w = f32[5000,3] parameter(3)
  init = f32[] constant(0)
  ninf = f32[] constant(-inf)
  by_block = f32[37] reduce(x, init), dimensions={1}, to_apply=add
  by_warp = f32[50] reduce(y, ninf), dimensions={1}, to_apply=max
  by_thread = f32[64] reduce(z, init), dimensions={1}, to_apply=add
  few_columns = f32[3] reduce(w, init), dimensions={0}, to_apply=add
  everything = f32[] reduce(x, init), dimensions={0,1}, to_apply=add
  ROOT t = (f32[37], f32[50], f32[64], f32[3], f32[]) tuple(by_block, by_warp, by_thread,
                                                           few_columns, everything)
})", &stats, &summary), "");
  EXPECT_EQ(stats.kernels, 5) << summary;
  EXPECT_EQ(stats.cooperative_kernels, 4) << summary;
  EXPECT_NE(summary.find("4 reducing by warps or blocks"), std::string::npos) << summary;
}

// Integer, 64-bit, one-bit and byte accumulators cross the shuffles and shared memory intact,
// and the init value is taken exactly once (7 here is not the identity of add).
TEST(CudaCooperativeReduction, EveryAccumulatorWidthIsExactAndTheInitCountsOnce) {
  CudaCompileStats stats;
  EXPECT_EQ(Agreement(R"(
HloModule m
add32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
max64 {
  a = s64[] parameter(0)
  b = s64[] parameter(1)
  ROOT s = s64[] maximum(a, b)
}
and1 {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] and(a, b)
}
or1 {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  ROOT s = pred[] or(a, b)
}
maxu8 {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT s = u8[] maximum(a, b)
}
addf64 {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}
ENTRY e {
  a = s32[9,777] parameter(0)
  b = s64[6,300] parameter(1)
  c = pred[12,400] parameter(2)
  d = u8[10,64] parameter(3)
  f = f64[4,5000] parameter(4)
  seven = s32[] constant(7)
  low = s64[] constant(-9223372036854775807)
  yes = pred[] constant(true)
  no = pred[] constant(false)
  zero8 = u8[] constant(0)
  zero = f64[] constant(0)
  sa = s32[9] reduce(a, seven), dimensions={1}, to_apply=add32
  sb = s64[6] reduce(b, low), dimensions={1}, to_apply=max64
  ca = pred[12] reduce(c, yes), dimensions={1}, to_apply=and1
  co = pred[12] reduce(c, no), dimensions={1}, to_apply=or1
  sd = u8[10] reduce(d, zero8), dimensions={1}, to_apply=maxu8
  sf = f64[4] reduce(f, zero), dimensions={1}, to_apply=addf64
  ROOT t = (s32[9], s64[6], pred[12], pred[12], u8[10], f64[4]) tuple(sa, sb, ca, co, sd, sf)
})", &stats), "");
  EXPECT_EQ(stats.cooperative_kernels, 6);
}

// A variadic reduce (the maximum and its index, ties to the lower index) keeps its pairs
// together across lanes: the index is exact.
TEST(CudaCooperativeReduction, VariadicArgmaxIsExact) {
  CudaCompileStats stats;
  EXPECT_EQ(Agreement(R"(
HloModule m
argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  eq = pred[] compare(v0, v1), direction=EQ
  lt = pred[] compare(i0, i1), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, v0, v1)
  i = s32[] select(pick, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[20,600] parameter(0)
  idx = s32[20,600] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[20], s32[20]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
})", &stats), "");
  EXPECT_EQ(stats.cooperative_kernels, 1);
}

// Reduction fusions: elementwise work before and after the reduce, two reduces side by side
// (each cooperative), and a reduce inside another's operand (softmax's max inside its sum),
// which stays one thread per element.
TEST(CudaCooperativeReduction, FusionsReduceTogetherUnlessOneReduceFeedsAnother) {
  CudaCompileStats stats;
  std::string summary;
  EXPECT_EQ(Agreement(std::string(kReducers) + R"(
exp_sum_twice {
  p = f32[40,300] parameter(0)
  e = f32[40,300] exponential(p)
  z = f32[] constant(0)
  s = f32[40] reduce(e, z), dimensions={1}, to_apply=add
  two = f32[] constant(2)
  b = f32[40] broadcast(two), dimensions={}
  ROOT m = f32[40] multiply(s, b)
}
sum_and_max {
  p = f32[40,300] parameter(0)
  z = f32[] constant(0)
  ninf = f32[] constant(-inf)
  s = f32[40] reduce(p, z), dimensions={1}, to_apply=add
  m = f32[40] reduce(p, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[40], f32[40]) tuple(s, m)
}
softmax_denominator {
  p = f32[40,300] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[40] reduce(p, ninf), dimensions={1}, to_apply=max
  mb = f32[40,300] broadcast(m), dimensions={0}
  d = f32[40,300] subtract(p, mb)
  e = f32[40,300] exponential(d)
  z = f32[] constant(0)
  ROOT s = f32[40] reduce(e, z), dimensions={1}, to_apply=add
}
ENTRY e {
  x = f32[40,300] parameter(0)
  f1 = f32[40] fusion(x), kind=kInput, calls=exp_sum_twice
  f2 = (f32[40], f32[40]) fusion(x), kind=kInput, calls=sum_and_max
  f3 = f32[40] fusion(x), kind=kInput, calls=softmax_denominator
  g0 = f32[40] get-tuple-element(f2), index=0
  g1 = f32[40] get-tuple-element(f2), index=1
  ROOT t = (f32[40], f32[40], f32[40], f32[40]) tuple(f1, g0, g1, f3)
})", &stats, &summary), "");
  EXPECT_EQ(stats.kernels, 3) << summary;
  EXPECT_EQ(stats.cooperative_kernels, 2) << summary;
}

// Transposes that move the innermost dimension go through 32x32 shared-memory tiles (partial
// tiles at the edges, dimensions besides the two tiled ones, every element width, a fusion
// computing its elements on the way in); one that keeps the innermost dimension does not.
TEST(CudaTiledTranspose, TransposesThatMoveTheInnermostDimensionGoThroughTiles) {
  CudaCompileStats stats;
  std::string summary;
  EXPECT_EQ(Agreement(R"(
HloModule m
exp_transposed {
  p = f32[96,40] parameter(0)
  e = f32[96,40] exponential(p)
  ROOT t = f32[40,96] transpose(e), dimensions={1,0}
}
ENTRY e {
  a = f32[100,70] parameter(0)
  b = s8[3,64,40] parameter(1)
  c = f64[33,2,65] parameter(2)
  d = bf16[64,64] parameter(3)
  f = pred[48,36] parameter(4)
  g = f32[40,50,60] parameter(5)
  h = f32[96,40] parameter(6)
  ta = f32[70,100] transpose(a), dimensions={1,0}
  tb = s8[3,40,64] transpose(b), dimensions={0,2,1}
  tc = f64[65,2,33] transpose(c), dimensions={2,1,0}
  td = bf16[64,64] transpose(d), dimensions={1,0}
  tf = pred[36,48] transpose(f), dimensions={1,0}
  tg = f32[50,40,60] transpose(g), dimensions={1,0,2}
  th = f32[40,96] fusion(h), kind=kLoop, calls=exp_transposed
  ROOT t = (f32[70,100], s8[3,40,64], f64[65,2,33], bf16[64,64], pred[36,48], f32[50,40,60],
            f32[40,96]) tuple(ta, tb, tc, td, tf, tg, th)
})", &stats, &summary), "");
  EXPECT_EQ(stats.kernels, 7) << summary;
  EXPECT_EQ(stats.tiled_transposes, 6) << summary;
  EXPECT_NE(summary.find("6 tiled transposes"), std::string::npos) << summary;
}

// Convolutions are kernels: one thread per output element summing over the window and its
// group's input features, with strides, padding, both dilations, reversal, feature and batch
// groups, and integer (exact) and bf16 (summed in f64, rounded once) element types.
TEST(CudaConvolution, EveryWindowAndGroupingRunsAsAKernel) {
  CudaCompileStats stats;
  std::string summary;
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  a = f32[2,9,7,3] parameter(0)
  ka = f32[3,3,3,5] parameter(1)
  b = f32[2,10,10,4] parameter(2)
  kb = f32[3,3,2,6] parameter(3)
  c = f32[4,8,8,3] parameter(4)
  kc = f32[3,3,3,4] parameter(5)
  d = s32[1,12,5] parameter(6)
  kd = s32[4,5,7] parameter(7)
  f = bf16[1,16,16,8] parameter(8)
  kf = bf16[3,3,8,8] parameter(9)
  ca = f32[2,9,7,5] convolution(a, ka), window={size=3x3 stride=2x1 pad=1_2x2_2 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=0x1}, dim_labels=b01f_01io->b01f
  cb = f32[2,8,8,6] convolution(b, kb), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2
  cc = f32[2,6,6,4] convolution(c, kc), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
  cd = s32[1,9,7] convolution(d, kd), window={size=4}, dim_labels=b0f_0io->b0f
  cf = bf16[1,16,16,8] convolution(f, kf), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  ROOT t = (f32[2,9,7,5], f32[2,8,8,6], f32[2,6,6,4], s32[1,9,7], bf16[1,16,16,8])
      tuple(ca, cb, cc, cd, cf)
})", &stats, &summary), "");
  EXPECT_EQ(stats.kernels, 5) << summary;
  EXPECT_EQ(stats.interpreted, 0) << summary;
}

// Gathers are kernels: embedding lookups, starts clamped so the slice fits (negative and past
// the end), index vectors along any dimension or implicit, unsigned indices, and batching
// dimensions.
TEST(CudaGather, GathersRunAsKernelsAndClampTheirStarts) {
  CudaCompileStats stats;
  std::string summary;
  EXPECT_EQ(Agreement(R"(
HloModule m
ENTRY e {
  table = f32[40,16] parameter(0)
  ids = s32[7] parameter(1)
  big = s32[] constant(1000)
  bigs = s32[7] broadcast(big), dimensions={}
  ids_far = s32[7] subtract(bigs, ids)
  neg = s32[7] negate(ids)
  x = f32[5,6,7] parameter(2)
  starts = s32[4,2] parameter(3)
  u = u8[3] parameter(4)
  bx = f32[3,10,4] parameter(5)
  bi = s32[3,5,1] parameter(6)
  lookup = f32[7,16] gather(table, ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  far = f32[7,16] gather(table, ids_far), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  below = f32[7,16] gather(table, neg), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  four = s32[] constant(4)
  fours = s32[4,2] broadcast(four), dimensions={}
  starts_far = s32[4,2] add(starts, fours)
  window = f32[4,2,3,7] gather(x, starts_far), offset_dims={1,2,3}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,3,7}
  unsigned = f32[3,16] gather(table, u), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,16}
  batched = f32[3,5,4] gather(bx, bi), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
  ROOT t = (f32[7,16], f32[7,16], f32[7,16], f32[4,2,3,7], f32[3,16], f32[3,5,4])
      tuple(lookup, far, below, window, unsigned, batched)
})", &stats, &summary), "");
  EXPECT_EQ(stats.interpreted, 0) << summary;
}

}  // namespace
}  // namespace hlowb
