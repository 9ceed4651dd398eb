// Fake arguments: XLA's constraint rules (index ranges, init values, sort keys), determinism per
// seed, and every element type.
#include "replay/data/fake_data.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/ir/float_types.h"
#include "replay/evaluator/evaluator.h"
#include "gtest/gtest.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

std::vector<Literal> Fake(const Module& m, uint64_t seed, bool large = false) {
  auto args = MakeFakeArguments(m, FakeDataOptions{seed, large});
  EXPECT_TRUE(args.ok()) << args.status();
  return args.ok() ? std::move(*args) : std::vector<Literal>{};
}

// Min and max of an integer literal's values.
std::pair<int64_t, int64_t> Range(const Literal& l) {
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    lo = std::min(lo, l.GetInt(i));
    hi = std::max(hi, l.GetInt(i));
  }
  return {lo, hi};
}

constexpr char kDynamicSlice[] = R"(
HloModule m
ENTRY e {
  op = f32[10,20] parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT ds = f32[3,5] dynamic-slice(op, i, j), dynamic_slice_sizes={3,5}
}
)";

TEST(FakeData, DynamicSliceIndicesStayInRange) {
  auto m = Parse(kDynamicSlice);
  std::set<int64_t> seen_i, seen_j;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    std::vector<Literal> args = Fake(*m, seed);
    ASSERT_EQ(args.size(), 3u);
    int64_t i = args[1].GetInt(0), j = args[2].GetInt(0);
    ASSERT_GE(i, 0);
    ASSERT_LE(i, 7);  // 10 - 3
    ASSERT_GE(j, 0);
    ASSERT_LE(j, 15);  // 20 - 5
    seen_i.insert(i);
    seen_j.insert(j);
  }
  // The whole range is used, both ends included.
  EXPECT_EQ(seen_i.size(), 8u);
  EXPECT_EQ(seen_j.size(), 16u);
}

TEST(FakeData, SparseDotMetadataHoldsValidPositions) {
  // The metadata reaches the dot through a transpose; 2:4 and 1:2 (16 one-bit positions).
  auto m = Parse(R"(
HloModule m
ENTRY e {
  l = f32[2,32] parameter(0)
  r = f32[64,3] parameter(1)
  mt = u16[4,2] parameter(2)
  meta = u16[2,4] transpose(mt), dimensions={1,0}
  ROOT d = f32[2,3] dot(l, r, meta), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sparsity=L.1@2:4
}
)");
  ASSERT_NE(m, nullptr);
  std::set<uint64_t> words;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<Literal> args = Fake(*m, seed);
    ASSERT_EQ(args.size(), 3u);
    for (int64_t i = 0; i < args[2].element_count(); ++i) {
      const uint64_t w = args[2].GetBits(i);
      words.insert(w);
      for (int g = 0; g < 4; ++g) {  // two 2-bit positions per group, distinct and in order
        const uint64_t a = (w >> (4 * g)) & 3, b = (w >> (4 * g + 2)) & 3;
        ASSERT_LT(a, b) << std::hex << w;
      }
    }
    // So the module replays: the dot decompresses without a collision.
    EXPECT_TRUE(EvaluateModule(*m, args).ok()) << seed;
  }
  EXPECT_GT(words.size(), 20u);  // random, not one fixed pattern
  auto c = FindValueConstraint(*m, *m->entry()->parameter(2), {});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(c->sparsity_metadata.has_value());
  EXPECT_EQ(c->sparsity_metadata->ToString(), "L.1@2:4");
  ASSERT_EQ(c->reasons.size(), 1u);
  EXPECT_EQ(c->reasons[0], "d (sparse dot metadata, operand 2)");
}

TEST(FakeData, DynamicUpdateSliceIndicesStayInRange) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  op = f32[10,20] parameter(0)
  u = f32[4,4] parameter(1)
  i = s64[] parameter(2)
  j = u8[] parameter(3)
  ROOT dus = f32[10,20] dynamic-update-slice(op, u, i, j)
}
)");
  for (uint64_t seed = 0; seed < 200; ++seed) {
    std::vector<Literal> args = Fake(*m, seed);
    ASSERT_EQ(args.size(), 4u);
    EXPECT_GE(args[2].GetInt(0), 0);
    EXPECT_LE(args[2].GetInt(0), 6);
    EXPECT_LE(args[3].GetInt(0), 16);
  }
}

TEST(FakeData, GatherIndicesKeepTheWholeSliceInRange) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  op = f32[8,4] parameter(0)
  idx = s32[1000,1] parameter(1)
  ROOT g = f32[1000,3,4] gather(op, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={3,4}
}
)");
  std::vector<Literal> args = Fake(*m, 1);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(Range(args[1]), std::make_pair(int64_t{0}, int64_t{5}));  // 8 - 3
}

TEST(FakeData, GatherIndicesThroughReshapeConvertAndFusion) {
  auto m = Parse(R"(
HloModule m
fused {
  fp0 = f32[16,4] parameter(0)
  fp1 = s32[200] parameter(1)
  r = s32[200,1] reshape(fp1)
  ROOT g = f32[200,4] gather(fp0, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
ENTRY e {
  op = f32[16,4] parameter(0)
  idx = s64[200] parameter(1)
  c = s32[200] convert(idx)
  ROOT f = f32[200,4] fusion(op, c), kind=kLoop, calls=fused
}
)");
  std::vector<Literal> args = Fake(*m, 3);
  ASSERT_EQ(args.size(), 2u);
  EXPECT_EQ(Range(args[1]), std::make_pair(int64_t{0}, int64_t{15}));
}

TEST(FakeData, ScatterIndicesInRangeAndSortedWhenMarked) {
  auto m = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  op = f32[10,4] parameter(0)
  idx = s32[50,1] parameter(1)
  upd = f32[50,2,4] parameter(2)
  ROOT s = f32[10,4] scatter(op, idx, upd), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, indices_are_sorted=true, to_apply=add
}
)");
  std::vector<Literal> args = Fake(*m, 5);
  ASSERT_EQ(args.size(), 3u);
  auto [lo, hi] = Range(args[1]);
  EXPECT_GE(lo, 0);
  EXPECT_LE(hi, 8);  // 10 - 2
  for (int64_t i = 1; i < args[1].element_count(); ++i) {
    EXPECT_LE(args[1].GetInt(i - 1), args[1].GetInt(i)) << "indices_are_sorted needs sorted indices";
  }
}

TEST(FakeData, IndicesThroughWhileLoopTupleAndTupleParameter) {
  auto m = Parse(R"(
HloModule m
body {
  t = (s32[], f32[10]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  a = f32[10] get-tuple-element(t), index=1
  ds = f32[2] dynamic-slice(a, i), dynamic_slice_sizes={2}
  ROOT r = (s32[], f32[10]) tuple(i, a)
}
cond {
  t = (s32[], f32[10]) parameter(0)
  ROOT c = pred[] constant(false)
}
ENTRY e {
  i = s32[] parameter(0)
  a = f32[10] parameter(1)
  tp = (s32[], f32[4]) parameter(2)
  k = s32[] get-tuple-element(tp), index=0
  ds2 = f32[3] dynamic-slice(a, k), dynamic_slice_sizes={3}
  t = (s32[], f32[10]) tuple(i, a)
  ROOT w = (s32[], f32[10]) while(t), condition=cond, body=body
}
)");
  for (uint64_t seed = 0; seed < 100; ++seed) {
    std::vector<Literal> args = Fake(*m, seed);
    ASSERT_EQ(args.size(), 3u);
    EXPECT_GE(args[0].GetInt(0), 0);
    EXPECT_LE(args[0].GetInt(0), 8);
    const Literal& k = args[2].tuple_elements()[0];
    EXPECT_GE(k.GetInt(0), 0);
    EXPECT_LE(k.GetInt(0), 7);
  }
}

TEST(FakeData, ReduceInitValuesAreTheReducersIdentity) {
  auto m = Parse(R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] multiply(a, b)
}
ENTRY e {
  x = f32[16] parameter(0)
  z = f32[] parameter(1)
  y = s32[16] parameter(2)
  o = s32[] parameter(3)
  r1 = f32[] reduce(x, z), dimensions={0}, to_apply=add
  r2 = s32[] reduce(y, o), dimensions={0}, to_apply=mul
  ROOT t = (f32[], s32[]) tuple(r1, r2)
}
)");
  for (uint64_t seed = 0; seed < 5; ++seed) {
    std::vector<Literal> args = Fake(*m, seed);
    ASSERT_EQ(args.size(), 4u);
    EXPECT_EQ(args[1].data_as<float>()[0], 0.0f);
    EXPECT_EQ(args[3].GetInt(0), 1);
  }
}

TEST(FakeData, IntegerSortKeysHaveNoDuplicates) {
  auto m = Parse(R"(
HloModule m
lt {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[50] parameter(0)
  v = f32[50] parameter(1)
  ROOT s = (s32[50], f32[50]) sort(k, v), dimensions={0}, to_apply=lt
}
)");
  std::vector<Literal> args = Fake(*m, 9);
  std::vector<int64_t> keys;
  for (int64_t i = 0; i < 50; ++i) keys.push_back(args[0].GetInt(i));
  std::sort(keys.begin(), keys.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(keys[i], i);  // a shuffled iota
}

TEST(FakeData, ConflictingConstraintsAreUnimplemented) {
  auto m = Parse(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  op = f32[10] parameter(0)
  i = s32[] parameter(1)
  v = s32[4] parameter(2)
  ds = f32[2] dynamic-slice(op, i), dynamic_slice_sizes={2}
  r = s32[] reduce(v, i), dimensions={0}, to_apply=add
  ROOT t = (f32[2], s32[]) tuple(ds, r)
}
)");
  auto args = MakeFakeArguments(*m, FakeDataOptions{});
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(std::string(args.status().message()).find("conflicting"), std::string::npos);
}

TEST(FakeData, SameSeedSameValuesDifferentSeedDifferentValues) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  a = f32[64] parameter(0)
  b = s8[32] parameter(1)
  c = bf16[16] parameter(2)
  d = c64[8] parameter(3)
  e = pred[40] parameter(4)
  ROOT t = (f32[64], s8[32], bf16[16], c64[8], pred[40]) tuple(a, b, c, d, e)
}
)");
  std::vector<Literal> a = Fake(*m, 123), b = Fake(*m, 123), c = Fake(*m, 124);
  ASSERT_EQ(a.size(), 5u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(a[i] == b[i]) << "argument " << i;
  EXPECT_FALSE(a[0] == c[0]);
  // Fixed values for a fixed seed: the generator does not depend on the standard library.
  FakeDataEngine e(1);
  EXPECT_EQ(e.Next(), 2469588189546311528ull);  // std::mt19937_64 with seed 1, first output
}

TEST(FakeData, EveryElementTypeSmallAndLargeRange) {
  int count = 0;
  const PrimitiveType* types = AllPrimitiveTypes(&count);
  int generated = 0;
  for (int k = 0; k < count; ++k) {
    PrimitiveType t = types[k];
    if (!IsArrayType(t)) continue;
    for (bool large : {false, true}) {
      FakeDataEngine engine(7);
      auto l = MakeFakeLiteral(Shape::Array(t, {257}), &engine, {}, large);
      ASSERT_TRUE(l.ok()) << PrimitiveTypeName(t) << ": " << l.status();
      ASSERT_EQ(l->element_count(), 257);
      ++generated;
      PrimitiveType ct = ComplexComponentType(t);
      if (IsFloatingPoint(ct)) {
        double max_abs = 0;
        for (int64_t i = 0; i < l->component_count(); ++i) {
          double v = FloatBitsToDouble(ct, l->GetBits(i));
          ASSERT_FALSE(std::isnan(v)) << PrimitiveTypeName(t) << " large=" << large;
          if (!large) {
            // Uniform in [-0.1, 0.2], after rounding to the type.
            EXPECT_LE(std::fabs(v), 0.25) << PrimitiveTypeName(t);
          }
          if (std::isfinite(v)) max_abs = std::max(max_abs, std::fabs(v));
        }
        if (large && (ct == PrimitiveType::kF32 || ct == PrimitiveType::kF64 ||
                      ct == PrimitiveType::kBF16 || ct == PrimitiveType::kF16)) {
          EXPECT_GT(max_abs, 100.0) << PrimitiveTypeName(t) << ": the large range is wide";
        }
      } else if (t == PrimitiveType::kPred) {
        std::set<uint64_t> values;
        for (int64_t i = 0; i < l->element_count(); ++i) values.insert(l->GetBits(i));
        EXPECT_EQ(values, (std::set<uint64_t>{0, 1}));
      } else {
        // Integers: the type's full range, as XLA; every value fits the type.
        const int bits = BitWidth(t);
        std::set<int64_t> distinct;
        for (int64_t i = 0; i < l->element_count(); ++i) {
          int64_t v = l->GetInt(i);
          distinct.insert(v);
          if (bits < 64) {
            if (IsSignedIntegral(t)) {
              EXPECT_GE(v, -(int64_t{1} << (bits - 1)));
              EXPECT_LT(v, int64_t{1} << (bits - 1));
            } else {
              EXPECT_GE(v, 0);
              EXPECT_LT(v, int64_t{1} << bits);
            }
          }
        }
        if (bits <= 4) {
          EXPECT_EQ(distinct.size(), size_t{1} << bits)
              << PrimitiveTypeName(t) << ": narrow types cover all their values";
        } else if (bits >= 16) {
          EXPECT_GT(distinct.size(), 200u) << PrimitiveTypeName(t) << ": full range";
        }
      }
    }
  }
  EXPECT_GE(generated, 2 * 28);
}

TEST(FakeData, ElidedConstantUsedAsIndexIsInRangeAndStable) {
  auto m = Parse(R"(
HloModule m
ENTRY e {
  op = f32[6,4] parameter(0)
  c = s32[300,1] constant({...})
  ROOT g = f32[300,4] gather(op, c), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}
)");
  const Instruction* c = m->entry()->FindInstruction("c");
  ASSERT_NE(c, nullptr);
  auto a = MakeFakeElidedConstant(*m, *c, FakeDataOptions{11, false});
  auto b = MakeFakeElidedConstant(*m, *c, FakeDataOptions{11, false});
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(*a == *b);
  EXPECT_EQ(Range(*a), std::make_pair(int64_t{0}, int64_t{5}));
}

TEST(FakeData, CheckArgumentsNamesTheMismatch) {
  auto m = Parse(kDynamicSlice);
  std::vector<Literal> args = Fake(*m, 1);
  EXPECT_TRUE(CheckArguments(*m, args, "snapshot").ok());
  args.pop_back();
  absl::Status st = CheckArguments(*m, args, "snapshot");
  EXPECT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(st.message()).find("has 2 arguments"), std::string::npos) << st;
  args.push_back(Lit("s32[2]{0} {1, 2}"));
  st = CheckArguments(*m, args, "snapshot");
  EXPECT_NE(std::string(st.message()).find("argument 2 has shape s32[2]"), std::string::npos) << st;
}

}  // namespace
}  // namespace hlowb
