// The cpu platform's sort and scatter (cpu_sort_scatter.h) with compiled comparators and
// combiners: results are bit for bit the interpreter's (multi-key comparators over NaNs and
// signed zeros, variadic sorts, middle sort dimensions, narrow and integer keys; scatters with
// non-trivial combiners, duplicate and out-of-bounds indices, windows, batching dimensions and
// variadic operands); the compile stats count them as library calls, and the run-time hook
// answers for them. The last tests print the time against the interpreter's.
#include "replay/backends/cpu/cpu_sort_scatter.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/ir/computation.h"
#include "core/ir/float_types.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb {
namespace {

double Seconds(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Seeded values of `type`: floats from a small set with duplicates, NaNs, infinities and both
// zeros (`special`), integers in [lo, hi].
Literal Values(PrimitiveType type, const std::vector<int64_t>& dims, uint64_t seed,
               int64_t lo = -20, int64_t hi = 20, bool special = true) {
  Literal l(Shape::Array(type, dims));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> ints(lo, hi);
  const double specials[] = {std::numeric_limits<double>::quiet_NaN(), -0.0, 0.0,
                             std::numeric_limits<double>::infinity(),
                             -std::numeric_limits<double>::infinity()};
  for (int64_t i = 0; i < l.element_count(); ++i) {
    if (IsFloatingPoint(type)) {
      double v = static_cast<double>(ints(rng)) * 0.25;
      if (special && rng() % 8 == 0) v = specials[rng() % 5];
      if (special && rng() % 64 == 0) v = -std::numeric_limits<double>::quiet_NaN();
      if (type == PrimitiveType::kF32) {
        l.mutable_data_as<float>()[i] = static_cast<float>(v);
      } else if (type == PrimitiveType::kF64) {
        l.mutable_data_as<double>()[i] = v;
      } else {
        l.SetBits(i, DoubleToFloatBits(type, v));
      }
    } else if (type == PrimitiveType::kPred) {
      l.SetBits(i, rng() & 1);
    } else {
      l.SetBits(i, static_cast<uint64_t>(ints(rng)));
    }
  }
  return l;
}

Literal Iota(PrimitiveType type, const std::vector<int64_t>& dims) {
  Literal l(Shape::Array(type, dims));
  for (int64_t i = 0; i < l.element_count(); ++i) l.SetBits(i, static_cast<uint64_t>(i));
  return l;
}

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  return m.ok() ? std::move(*m) : nullptr;
}

// Compiles `text` as given (no passes, so the entry's sorts and scatters are the ones written),
// checks that every sort and scatter is a library call, runs it on the cpu platform and with the
// interpreter, and expects the same bits.
void ExpectSameAsInterpreter(const std::string& text, const std::vector<Literal>& args,
                             int64_t sorts_and_scatters) {
  std::unique_ptr<Module> m = Parse(text);
  ASSERT_NE(m, nullptr);
  CpuCompileOptions options;
  options.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const CpuCompileStats& stats = (*exe)->stats();
  EXPECT_EQ(stats.library_calls, sorts_and_scatters) << (*exe)->Summary();
  EXPECT_EQ(stats.interpreted_by_opcode.count("sort"), 0u) << (*exe)->Summary();
  EXPECT_EQ(stats.interpreted_by_opcode.count("scatter"), 0u) << (*exe)->Summary();
  for (const auto& [name, reason] : (*exe)->not_compiled()) {
    ADD_FAILURE() << "not compiled: " << name << ": " << reason;
  }
  // The hook answers for the root (the sort or scatter) itself.
  const Instruction* root = (*exe)->module().entry()->root();
  std::vector<const Literal*> ops;
  for (const Literal& a : args) ops.push_back(&a);
  auto hook = (*exe)->Hook(nullptr);
  std::optional<absl::StatusOr<Literal>> direct = hook(*root, ops);
  ASSERT_TRUE(direct.has_value()) << "the cpu platform left %" << root->name()
                                  << " to the interpreter";
  ASSERT_TRUE(direct->ok()) << direct->status();
  auto want = EvaluateModule(*m, args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = (*exe)->Run(args, EvaluatorOptions());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*want == *got) << testing::Disagreement(*want, *got, "result");
  EXPECT_TRUE(*want == **direct) << testing::Disagreement(*want, **direct, "hook");
}

// Descending by key in total order (NaNs above +inf, -NaN below -inf, -0 below +0), then
// ascending by index.
constexpr char kTwoKeyComparator[] = R"(
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT, type=TOTALORDER
  eq = pred[] compare(a, b), direction=EQ, type=TOTALORDER
  lt = pred[] compare(i, j), direction=LT
  tie = pred[] and(eq, lt)
  ROOT r = pred[] or(gt, tie)
}
)";

TEST(CpuSortScatter, SortMultiKeyTotalOrder) {
  const std::string text = std::string("HloModule m\n") + kTwoKeyComparator + R"(
ENTRY e {
  k = f32[8,300] parameter(0)
  i = s32[8,300] parameter(1)
  ROOT s = (f32[8,300], s32[8,300]) sort(k, i), dimensions={1}, to_apply=cmp
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {8, 300}, 1));
  // Indices in reverse so the tie-break reorders equal keys.
  Literal idx(Shape::Array(PrimitiveType::kS32, {8, 300}));
  for (int64_t i = 0; i < idx.element_count(); ++i) idx.SetBits(i, 3000 - i % 300);
  args.push_back(std::move(idx));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, SortVariadicThreeOperandsMiddleDimension) {
  // By the s8 key ascending, then the u64 key descending; the f32 operand rides along and its
  // -0/+0 and NaN payloads must travel unchanged.
  const std::string text = R"(HloModule m
cmp {
  f0 = f32[] parameter(0)
  f1 = f32[] parameter(1)
  a = s8[] parameter(2)
  b = s8[] parameter(3)
  u = u64[] parameter(4)
  v = u64[] parameter(5)
  lt = pred[] compare(a, b), direction=LT
  eq = pred[] compare(a, b), direction=EQ
  gt = pred[] compare(u, v), direction=GT
  tie = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, tie)
}
ENTRY e {
  x = f32[4,50,3] parameter(0)
  k = s8[4,50,3] parameter(1)
  w = u64[4,50,3] parameter(2)
  ROOT s = (f32[4,50,3], s8[4,50,3], u64[4,50,3]) sort(x, k, w), dimensions={1}, to_apply=cmp
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {4, 50, 3}, 2));
  args.push_back(Values(PrimitiveType::kS8, {4, 50, 3}, 3, -4, 4));
  args.push_back(Values(PrimitiveType::kU64, {4, 50, 3}, 4, 0, 6));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, SortBf16KeysByMagnitude) {
  const std::string text = R"(HloModule m
cmp {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  aa = bf16[] abs(a)
  ab = bf16[] abs(b)
  ROOT r = pred[] compare(aa, ab), direction=LT
}
ENTRY e {
  k = bf16[6,7,40] parameter(0)
  ROOT s = bf16[6,7,40] sort(k), dimensions={2}, to_apply=cmp, is_stable=false
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kBF16, {6, 7, 40}, 5));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, SortU64KeysOuterDimension) {
  // Ascending by the key's remainder modulo 7, then descending by the key.
  const std::string text = R"(HloModule m
cmp {
  a = u64[] parameter(0)
  b = u64[] parameter(1)
  seven = u64[] constant(7)
  ra = u64[] remainder(a, seven)
  rb = u64[] remainder(b, seven)
  lt = pred[] compare(ra, rb), direction=LT
  eq = pred[] compare(ra, rb), direction=EQ
  gt = pred[] compare(a, b), direction=GT
  tie = pred[] and(eq, gt)
  ROOT r = pred[] or(lt, tie)
}
ENTRY e {
  k = u64[90,5] parameter(0)
  ROOT s = u64[90,5] sort(k), dimensions={0}, to_apply=cmp
}
)";
  std::vector<Literal> args;
  Literal k = Values(PrimitiveType::kU64, {90, 5}, 6, 0, 1000);
  k.SetBits(3, ~uint64_t{0});
  k.SetBits(8, uint64_t{1} << 63);
  args.push_back(std::move(k));
  ExpectSameAsInterpreter(text, args, 1);
}

// (a + b) * 0.5: not one binary op, and not commutative in rounding order, so the order in which
// duplicates combine shows in the bits.
constexpr char kAverageCombiner[] = R"(
comb {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  s = f32[] add(a, b)
  h = f32[] constant(0.5)
  ROOT r = f32[] multiply(s, h)
}
)";

TEST(CpuSortScatter, ScatterDuplicatesAndOutOfBoundsRows) {
  const std::string text = std::string("HloModule m\n") + kAverageCombiner + R"(
ENTRY e {
  o = f32[100,8] parameter(0)
  i = s32[500,1] parameter(1)
  u = f32[500,8] parameter(2)
  ROOT s = f32[100,8] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {100, 8}, 7, -20, 20, false));
  Literal idx = Values(PrimitiveType::kS32, {500, 1}, 8, -5, 104);  // some out of bounds
  args.push_back(std::move(idx));
  args.push_back(Values(PrimitiveType::kF32, {500, 8}, 9, -40, 40, false));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, ScatterWindowsWithMaxOfSquare) {
  // 3x5 windows at 2-D starts; a start past 50-3 or 16-5 skips its whole window.
  const std::string text = R"(HloModule m
comb {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  bb = f32[] multiply(b, b)
  ROOT r = f32[] maximum(a, bb)
}
ENTRY e {
  o = f32[50,16] parameter(0)
  i = s32[300,2] parameter(1)
  u = f32[300,3,5] parameter(2)
  ROOT s = f32[50,16] scatter(o, i, u), update_window_dims={1,2}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=comb
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {50, 16}, 10));
  args.push_back(Values(PrimitiveType::kS32, {300, 2}, 11, -2, 50));
  args.push_back(Values(PrimitiveType::kF32, {300, 3, 5}, 12));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, ScatterVariadicArgmax) {
  // Keeps the larger value, and on a tie the smaller index.
  const std::string text = R"(HloModule m
comb {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(b, a), direction=GT
  eq = pred[] compare(b, a), direction=EQ
  lt = pred[] compare(bi, ai), direction=LT
  tie = pred[] and(eq, lt)
  take = pred[] or(gt, tie)
  v = f32[] select(take, b, a)
  vi = s32[] select(take, bi, ai)
  ROOT r = (f32[], s32[]) tuple(v, vi)
}
ENTRY e {
  o = f32[64] parameter(0)
  oi = s32[64] parameter(1)
  i = s32[2000] parameter(2)
  u = f32[2000] parameter(3)
  ui = s32[2000] parameter(4)
  ROOT s = (f32[64], s32[64]) scatter(o, oi, i, u, ui), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1,
      to_apply=comb
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {64}, 13, -20, 20, false));
  args.push_back(Iota(PrimitiveType::kS32, {64}));
  args.push_back(Values(PrimitiveType::kS32, {2000}, 14, -3, 66));
  args.push_back(Values(PrimitiveType::kF32, {2000}, 15, -20, 20, false));
  args.push_back(Values(PrimitiveType::kS32, {2000}, 16, 0, 100));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, ScatterBatchingDimsS64Indices) {
  const std::string text = std::string("HloModule m\n") + kAverageCombiner + R"(
ENTRY e {
  o = f32[4,30,6] parameter(0)
  i = s64[4,20,1] parameter(1)
  u = f32[4,20,6] parameter(2)
  ROOT s = f32[4,30,6] scatter(o, i, u), update_window_dims={2}, inserted_window_dims={1},
      input_batching_dims={0}, scatter_indices_batching_dims={0},
      scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=comb
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {4, 30, 6}, 17, -20, 20, false));
  Literal idx = Values(PrimitiveType::kS64, {4, 20, 1}, 18, -1, 31);
  idx.SetBits(5, uint64_t{1} << 40);  // far out of bounds
  args.push_back(std::move(idx));
  args.push_back(Values(PrimitiveType::kF32, {4, 20, 6}, 19, -20, 20, false));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, ScatterManyDuplicatesRunsInParallelInOrder) {
  // 200,000 updates into 1,000 elements: the grouped parallel path, whose per-element order must
  // still be the updates' row-major order.
  const std::string text = std::string("HloModule m\n") + kAverageCombiner + R"(
ENTRY e {
  o = f32[1000] parameter(0)
  i = u32[200000,1] parameter(1)
  u = f32[200000] parameter(2)
  ROOT s = f32[1000] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}
)";
  std::vector<Literal> args;
  args.push_back(Values(PrimitiveType::kF32, {1000}, 20, -20, 20, false));
  args.push_back(Values(PrimitiveType::kU32, {200000, 1}, 21, 0, 1003));
  args.push_back(Values(PrimitiveType::kF32, {200000}, 22, -400, 400, false));
  ExpectSameAsInterpreter(text, args, 1);
}

TEST(CpuSortScatter, TimingAgainstInterpreter) {
  struct Case {
    const char* what;
    std::string text;
    std::vector<Literal> args;
  };
  std::vector<Case> cases;
  {
    Case c{"sort f32[16,4096] + s32 index, two-key comparator", std::string("HloModule m\n") +
               kTwoKeyComparator + R"(
ENTRY e {
  k = f32[16,4096] parameter(0)
  i = s32[16,4096] parameter(1)
  ROOT s = (f32[16,4096], s32[16,4096]) sort(k, i), dimensions={1}, to_apply=cmp
}
)", {}};
    c.args.push_back(Values(PrimitiveType::kF32, {16, 4096}, 30, -100000, 100000));
    c.args.push_back(Iota(PrimitiveType::kS32, {16, 4096}));
    cases.push_back(std::move(c));
  }
  {
    Case c{"scatter of 256K updates into f32[65536], (a + b) * 0.5 combiner",
           std::string("HloModule m\n") + kAverageCombiner + R"(
ENTRY e {
  o = f32[65536] parameter(0)
  i = s32[262144,1] parameter(1)
  u = f32[262144] parameter(2)
  ROOT s = f32[65536] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}
)", {}};
    c.args.push_back(Values(PrimitiveType::kF32, {65536}, 31, -20, 20, false));
    c.args.push_back(Values(PrimitiveType::kS32, {262144, 1}, 32, 0, 65535));
    c.args.push_back(Values(PrimitiveType::kF32, {262144}, 33, -400, 400, false));
    cases.push_back(std::move(c));
  }
  for (Case& c : cases) {
    std::unique_ptr<Module> m = Parse(c.text);
    ASSERT_NE(m, nullptr);
    CpuCompileOptions options;
    options.run_hlo_passes = false;
    auto exe = CpuExecutable::Compile(*m, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().library_calls, 1) << (*exe)->Summary();
    auto t0 = std::chrono::steady_clock::now();
    auto got = (*exe)->Run(c.args, EvaluatorOptions());
    const double library = Seconds(t0);
    ASSERT_TRUE(got.ok()) << got.status();
    t0 = std::chrono::steady_clock::now();
    auto want = EvaluateModule(*m, c.args);
    const double interpreter = Seconds(t0);
    ASSERT_TRUE(want.ok()) << want.status();
    EXPECT_TRUE(*want == *got) << testing::Disagreement(*want, *got, c.what);
    std::printf("%s: library %.3f s, interpreter %.3f s (%.1fx)\n", c.what, library, interpreter,
                interpreter / std::max(library, 1e-9));
  }
}

}  // namespace
}  // namespace hlowb
