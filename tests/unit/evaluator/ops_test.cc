// Semantics of the structural opcodes: shape ops, reductions, dot, convolution, gather,
// scatter, sort, top-k, fft, linear algebra, rng, tuples and control flow. Expected literals are
// worked out by hand from XLA's operation semantics.
#include "core/analysis/verifier.h"
#include "gtest/gtest.h"
#include "tests/unit/evaluator/eval_test_util.h"

namespace hlowb::testing {
namespace {

const char kAdd[] = "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n";
const char kAddS[] = "adds { a = s32[] parameter(0)  b = s32[] parameter(1)  ROOT s = s32[] add(a, b) }\n";

TEST(EvalShapeOps, ConstantParameterTupleGte) {
  EXPECT_EQ(Op("f32[2] constant({1.5, 2})", {}, {}), "f32[2] {1.5, 2}");
  EXPECT_EQ(hlowb::testing::Run("HloModule m\nENTRY e {\n p = s32[2] parameter(0)\n c = f32[] constant(3)\n"
                " t = (s32[2], f32[]) tuple(p, c)\n ROOT g = f32[] get-tuple-element(t), index=1\n}\n",
                {"s32[2] {1, 2}"}),
            "f32[] 3");
  EXPECT_EQ(Op("(s32[2], pred[]) tuple(p0, p1)", {"s32[2]", "pred[]"}, {"s32[2] {1, 2}", "pred[] 1"}),
            "(s32[2]{0}, pred[]) ( {1, 2}, true )");
}

TEST(EvalShapeOps, BroadcastReshapeTranspose) {
  EXPECT_EQ(Op("s32[2,3] broadcast(p0), dimensions={1}", {"s32[3]"}, {"s32[3] {1, 2, 3}"}),
            "s32[2,3] { { 1, 2, 3 }, { 1, 2, 3 } }");
  EXPECT_EQ(Op("s32[2,2] broadcast(p0), dimensions={}", {"s32[]"}, {"s32[] 7"}),
            "s32[2,2] { { 7, 7 }, { 7, 7 } }");
  EXPECT_EQ(Op("s32[3,2] reshape(p0)", {"s32[2,3]"}, {"s32[2,3] {{1, 2, 3}, {4, 5, 6}}"}),
            "s32[3,2] { { 1, 2 }, { 3, 4 }, { 5, 6 } }");
  EXPECT_EQ(Op("s32[3,2] transpose(p0), dimensions={1,0}", {"s32[2,3]"},
               {"s32[2,3] {{1, 2, 3}, {4, 5, 6}}"}),
            "s32[3,2] { { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  // A bitcast that swaps the layout is a transpose of the logical shape.
  EXPECT_EQ(Op("s32[3,2]{0,1} bitcast(p0)", {"s32[2,3]{1,0}"}, {"s32[2,3] {{1, 2, 3}, {4, 5, 6}}"}),
            "s32[3,2] { { 1, 4 }, { 2, 5 }, { 3, 6 } }");
}

// After layout assignment XLA writes a bitcast-convert between types of one width as a bitcast
// (jax's float sort comparator: `s32[] bitcast(f32[] x)`); the bytes are reinterpreted through
// both layouts' physical orders.
TEST(EvalShapeOps, BitcastRetypesWholeByteBuffers) {
  EXPECT_EQ(Op("s32[] bitcast(p0)", {"f32[]"}, {"f32[] -2"}), "s32[] -1073741824");
  EXPECT_EQ(Op("u32[2] bitcast(p0)", {"f32[2]"}, {"f32[2] {1, -0}"}),
            "u32[2] {1065353216, 2147483648}");
  EXPECT_EQ(Op("f32[3,2]{0,1} bitcast(p0)", {"s32[2,3]{1,0}"},
               {"s32[2,3] {{1065353216, 1073741824, 1077936128}, {1082130432, 1084227584, "
                "1086324736}}"}),
            "f32[3,2] { { 1, 4 }, { 2, 5 }, { 3, 6 } }");
  // Same bytes, different element width.
  EXPECT_EQ(Op("u16[2] bitcast(p0)", {"f32[1]"}, {"f32[1] {1}"}), "u16[2] {0, 16256}");
  // Sub-byte types are unpacked here, so their bits cannot be retyped through bytes; and a
  // reshape never retypes.
  EXPECT_NE(Op("s4[2] bitcast(p0)", {"u4[2]"}, {"u4[2] {1, 2}"}).find("error"),
            std::string::npos);
  EXPECT_NE(Op("s32[2] reshape(p0)", {"f32[2]"}, {"f32[2] {1, 2}"}).find("error"),
            std::string::npos);
}

TEST(EvalShapeOps, SliceConcatPadReverseIota) {
  EXPECT_EQ(Op("s32[2] slice(p0), slice={[1:5:2]}", {"s32[5]"}, {"s32[5] {0, 1, 2, 3, 4}"}),
            "s32[2] {1, 3}");
  EXPECT_EQ(Op("s32[5] concatenate(p0, p1), dimensions={0}", {"s32[2]", "s32[3]"},
               {"s32[2] {1, 2}", "s32[3] {3, 4, 5}"}),
            "s32[5] {1, 2, 3, 4, 5}");
  EXPECT_EQ(Op("s32[2,3] concatenate(p0, p1), dimensions={1}", {"s32[2,1]", "s32[2,2]"},
               {"s32[2,1] {{1}, {4}}", "s32[2,2] {{2, 3}, {5, 6}}"}),
            "s32[2,3] { { 1, 2, 3 }, { 4, 5, 6 } }");
  EXPECT_EQ(Op("s32[6] pad(p0, p1), padding=1_0_2", {"s32[2]", "s32[]"}, {"s32[2] {1, 2}", "s32[] 9"}),
            "s32[6] {9, 1, 9, 9, 2, 9}");
  EXPECT_EQ(Op("s32[2] pad(p0, p1), padding=-1_-1", {"s32[4]", "s32[]"}, {"s32[4] {1, 2, 3, 4}", "s32[] 0"}),
            "s32[2] {2, 3}");
  EXPECT_EQ(Op("s32[3] reverse(p0), dimensions={0}", {"s32[3]"}, {"s32[3] {1, 2, 3}"}), "s32[3] {3, 2, 1}");
  EXPECT_EQ(Op("f32[2,3] iota(), iota_dimension=1", {}, {}),
            "f32[2,3] { { 0, 1, 2 }, { 0, 1, 2 } }");
  EXPECT_EQ(Op("bf16[3] iota(), iota_dimension=0", {}, {}), "bf16[3] {0, 1, 2}");
}

TEST(EvalShapeOps, DynamicSliceAndUpdateClamp) {
  EXPECT_EQ(Op("s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}", {"s32[5]", "s32[]"},
               {"s32[5] {0, 1, 2, 3, 4}", "s32[] 1"}),
            "s32[2] {1, 2}");
  EXPECT_EQ(Op("s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}", {"s32[5]", "s32[]"},
               {"s32[5] {0, 1, 2, 3, 4}", "s32[] 9"}),
            "s32[2] {3, 4}");
  EXPECT_EQ(Op("s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}", {"s32[5]", "s32[]"},
               {"s32[5] {0, 1, 2, 3, 4}", "s32[] -3"}),
            "s32[2] {0, 1}");
  EXPECT_EQ(Op("s32[4] dynamic-update-slice(p0, p1, p2)", {"s32[4]", "s32[2]", "u32[]"},
               {"s32[4] {0, 0, 0, 0}", "s32[2] {7, 8}", "u32[] 3"}),
            "s32[4] {0, 0, 7, 8}");
}

TEST(EvalReduce, SumRowsColumnsAndVariadicArgmax) {
  EXPECT_EQ(Op("f32[2] reduce(p0, p1), dimensions={1}, to_apply=add", {"f32[2,3]", "f32[]"},
               {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[] 10"}, kAdd),
            "f32[2] {16, 25}");
  EXPECT_EQ(Op("f32[3] reduce(p0, p1), dimensions={0}, to_apply=add", {"f32[2,3]", "f32[]"},
               {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[] 0"}, kAdd),
            "f32[3] {5, 7, 9}");
  EXPECT_EQ(Op("f32[] reduce(p0, p1), dimensions={0,1}, to_apply=add", {"f32[2,3]", "f32[]"},
               {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[] 0"}, kAdd),
            "f32[] 21");
  // bf16 accumulates with rounding after every step: 256 + 1 + 1 stays 256.
  EXPECT_EQ(Op("bf16[] reduce(p0, p1), dimensions={0}, to_apply=addb", {"bf16[3]", "bf16[]"},
               {"bf16[3] {256, 1, 1}", "bf16[] 0"},
               "addb { a = bf16[] parameter(0)  b = bf16[] parameter(1)  ROOT s = bf16[] add(a, b) }"),
            "bf16[] 256");
  std::string argmax = R"(
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GE
  v = f32[] select(gt, av, bv)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
})";
  EXPECT_EQ(hlowb::testing::Run("HloModule m\n" + argmax + R"(
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = s32[4] iota(), iota_dimension=0
  c0 = f32[] constant(-inf)
  c1 = s32[] constant(-1)
  ROOT r = (f32[], s32[]) reduce(p0, p1, c0, c1), dimensions={0}, to_apply=argmax
})", {"f32[4] {3, 9, 1, 9}"}),
            "(f32[], s32[]) ( 9, 1 )");
}

TEST(EvalReduce, ReduceWindowAndSelectAndScatter) {
  EXPECT_EQ(Op("f32[2] reduce-window(p0, p1), window={size=2 stride=2}, to_apply=add",
               {"f32[4]", "f32[]"}, {"f32[4] {1, 2, 3, 4}", "f32[] 0"}, kAdd),
            "f32[2] {3, 7}");
  EXPECT_EQ(Op("f32[4] reduce-window(p0, p1), window={size=3 pad=1_1}, to_apply=add",
               {"f32[4]", "f32[]"}, {"f32[4] {1, 2, 3, 4}", "f32[] 0"}, kAdd),
            "f32[4] {3, 6, 9, 7}");
  // Base dilation 2: {1, _, 2, _, 3}; windows of 2 see one real element each.
  EXPECT_EQ(Op("f32[4] reduce-window(p0, p1), window={size=2 lhs_dilate=2}, to_apply=add",
               {"f32[3]", "f32[]"}, {"f32[3] {1, 2, 3}", "f32[] 0"}, kAdd),
            "f32[4] {1, 2, 2, 3}");
  EXPECT_EQ(hlowb::testing::Run(std::string("HloModule m\n") + kAdd + R"(
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=GE }
ENTRY e {
  p0 = f32[4] parameter(0)
  p1 = f32[2] parameter(1)
  c = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(p0, p1, c), window={size=2 stride=2}, select=ge, scatter=add
})", {"f32[4] {1, 5, 7, 2}", "f32[2] {10, 20}"}),
            "f32[4] {0, 10, 20, 0}");
}

TEST(EvalDot, MatmulBatchIntegerAndOperandOrder) {
  EXPECT_EQ(Op("f32[2,2] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
               {"f32[2,3]", "f32[3,2]"},
               {"f32[2,3] {{1, 2, 3}, {4, 5, 6}}", "f32[3,2] {{1, 0}, {0, 1}, {1, 1}}"}),
            "f32[2,2] { { 4, 5 }, { 10, 11 } }");
  // Contracting dim first on lhs: lhs^T * rhs.
  EXPECT_EQ(Op("s32[2,2] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
               {"s32[2,2]", "s32[2,2]"}, {"s32[2,2] {{1, 2}, {3, 4}}", "s32[2,2] {{1, 0}, {0, 1}}"}),
            "s32[2,2] { { 1, 3 }, { 2, 4 } }");
  EXPECT_EQ(Op("f64[2,1,1] dot(p0, p1), lhs_batch_dims={0}, rhs_batch_dims={0}, "
               "lhs_contracting_dims={2}, rhs_contracting_dims={1}",
               {"f64[2,1,2]", "f64[2,2,1]"},
               {"f64[2,1,2] {{{1, 2}}, {{3, 4}}}", "f64[2,2,1] {{{1}, {1}}, {{2}, {0.5}}}"}),
            "f64[2,1,1] { { {3} }, { {8} } }");
  EXPECT_EQ(Op("s32[] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
               {"s8[2]", "s8[2]"}, {"s8[2] {100, 100}", "s8[2] {100, 100}"}),
            "s32[] 20000");
  EXPECT_EQ(Op("bf16[] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
               {"bf16[3]", "bf16[3]"}, {"bf16[3] {256, 1, 1}", "bf16[3] {1, 1, 1}"}),
            "bf16[] 258");
  EXPECT_EQ(Op("c64[] dot(p0, p1), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
               {"c64[1]", "c64[1]"}, {"c64[1] {(0, 1)}", "c64[1] {(0, 1)}"}),
            "c64[] (-1, 0)");
}

TEST(EvalRaggedDot, NonContractingContractingAndBatchGroups) {
  // Ragged rows: rows 0-1 use rhs group 0 (identity), row 2 uses group 1 (doubling), row 3
  // is in no group (zeros).
  EXPECT_EQ(Op("f32[4,2] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
               {"f32[4,2]", "f32[2,2,2]", "s32[2]"},
               {"f32[4,2] {{1, 2}, {3, 4}, {5, 6}, {7, 8}}",
                "f32[2,2,2] {{{1, 0}, {0, 1}}, {{2, 0}, {0, 2}}}", "s32[2] {2, 1}"}),
            "f32[4,2] { { 1, 2 }, { 3, 4 }, { 10, 12 }, { 0, 0 } }");
  // An excluded row's zeros hold even when the rhs holds inf (no 0 * inf).
  EXPECT_EQ(Op("f32[2,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}",
               {"f32[2,1]", "f32[1,1,1]", "s32[1]"},
               {"f32[2,1] {{2}, {3}}", "f32[1,1,1] {{{inf}}}", "s32[1] {1}"}),
            "f32[2,1] { {inf}, {0} }");
  // Ragged contracting dimension: result g contracts only group g's columns.
  EXPECT_EQ(Op("s32[2,1,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={0}, lhs_ragged_dims={1}",
               {"s32[1,3]", "s32[3,1]", "s32[2]"},
               {"s32[1,3] {{1, 2, 3}}", "s32[3,1] {{10}, {100}, {1000}}", "s32[2] {1, 2}"}),
            "s32[2,1,1] { { {10} }, { {3200} } }");
  // Ragged batch dimension: an ordinary batched dot.
  EXPECT_EQ(Op("f32[2,1,1] ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={0}, "
               "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}",
               {"f32[2,1,2]", "f32[2,2,1]", "s32[1]"},
               {"f32[2,1,2] {{{1, 2}}, {{3, 4}}}", "f32[2,2,1] {{{1}, {1}}, {{2}, {0.5}}}",
                "s32[1] {2}"}),
            "f32[2,1,1] { { {3} }, { {8} } }");
}

TEST(EvalRaggedDot, GroupSizesPerRow) {
  // group_sizes [2,2]: one partition of the ragged rows per index of lhs dimension 0 (a free
  // dimension before the ragged one). Row 0: {1, 2} -> rows 0 | 1, 2; row 1: {2, 0} -> rows
  // 0, 1 | none. Group 1 of the rhs is inf, which only the rows it covers may see.
  EXPECT_EQ(Op("f32[2,3,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={2}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}",
               {"f32[2,3,1]", "f32[2,1,1]", "s32[2,2]"},
               {"f32[2,3,1] {{{1}, {2}, {3}}, {{4}, {5}, {6}}}", "f32[2,1,1] {{{10}}, {{inf}}}",
                "s32[2,2] {{1, 2}, {2, 0}}"}),
            "f32[2,3,1] { { {10}, {inf}, {inf} }, { {40}, {50}, {0} } }");
  // A ragged contracting dimension with group sizes per batch element. Batch 0: {1, 3}, so
  // group 0 contracts column 0 only and never meets the inf in column 3; batch 1: {4, 0}.
  EXPECT_EQ(Op("f32[2,2,1,1] ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={0}, "
               "lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={2}",
               {"f32[2,1,4]", "f32[2,4,1]", "s32[2,2]"},
               {"f32[2,1,4] {{{1, 2, 3, 4}}, {{1, 1, 1, 1}}}",
                "f32[2,4,1] {{{1}, {10}, {100}, {inf}}, {{1}, {2}, {3}, {4}}}",
                "s32[2,2] {{1, 3}, {4, 0}}"}),
            "f32[2,2,1,1] { { /*i0=0*/ { /*i1=0*/ {1} }, { /*i1=1*/ {10} } }, "
            "{ /*i0=1*/ { /*i1=0*/ {inf} }, { /*i1=1*/ {0} } } }");
  // XLA's shapes verify: group_sizes [19,3] for lhs [19,11,5] ragged along 11, and for lhs
  // [11,19,5] ragged along its second contracting dimension.
  for (const char* text : {R"(HloModule m
ENTRY e {
  a = f32[19,11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  g = s64[19,3] parameter(2)
  ROOT r = f32[19,11,7] ragged-dot(a, b, g), lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}
})",
                           R"(HloModule m
ENTRY e {
  a = f32[11,19,5] parameter(0)
  b = f32[19,5,7] parameter(1)
  g = s64[19,3] parameter(2)
  ROOT r = f32[3,11,7] ragged-dot(a, b, g), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, lhs_ragged_dims={2}
})"}) {
    auto module = ParseModule(text);
    ASSERT_TRUE(module.ok()) << module.status();
    EXPECT_TRUE(VerifyModule(**module).empty()) << text;
  }
  // A prefix that does not match is an error saying what it must be.
  EXPECT_NE(Op("f32[2,3,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={2}, "
               "rhs_contracting_dims={1}, lhs_ragged_dims={1}, rhs_group_dims={0}",
               {"f32[2,3,1]", "f32[2,1,1]", "s32[3,2]"},
               {"f32[2,3,1] {{{1}, {2}, {3}}, {{4}, {5}, {6}}}", "f32[2,1,1] {{{10}}, {{1}}}",
                "s32[3,2] {{1, 2}, {2, 0}, {0, 0}}"})
                .find("must be [2,groups]"),
            std::string::npos);
}

TEST(EvalScaledDot, BlockScalesMultiplyBeforeTheDot) {
  // lhs [1,4] with one scale per block of 2 columns; rhs [4,1] with one scale for all.
  EXPECT_EQ(Op("f32[1,1] scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={0}",
               {"f32[1,4]", "f32[1,2]", "f32[4,1]", "f32[1,1]"},
               {"f32[1,4] {{1, 1, 1, 1}}", "f32[1,2] {{2, 10}}", "f32[4,1] {{1}, {2}, {3}, {4}}",
                "f32[1,1] {{0.5}}"}),
            // (2*1 + 2*2 + 10*3 + 10*4) * 0.5
            "f32[1,1] { {38} }");
  EXPECT_NE(Op("f32[1,1] scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, "
               "rhs_contracting_dims={0}",
               {"f32[1,4]", "f32[1,3]", "f32[4,1]", "f32[1,1]"},
               {"f32[1,4] {{1, 1, 1, 1}}", "f32[1,3] {{1, 1, 1}}", "f32[4,1] {{1}, {2}, {3}, {4}}",
                "f32[1,1] {{1}}"})
                .find("must divide"),
            std::string::npos);
}

TEST(EvalConvolution, StridesPaddingDilationGroups) {
  // 1-D: input [1,1,4] (b f 0), kernel [1,1,2] (o i 0).
  EXPECT_EQ(Op("f32[1,1,3] convolution(p0, p1), window={size=2}, dim_labels=bf0_oi0->bf0",
               {"f32[1,1,4]", "f32[1,1,2]"}, {"f32[1,1,4] {{{1, 2, 3, 4}}}", "f32[1,1,2] {{{1, 10}}}"}),
            "f32[1,1,3] { { { 21, 32, 43 } } }");
  EXPECT_EQ(Op("f32[1,1,3] convolution(p0, p1), window={size=2 stride=2 pad=1_1}, dim_labels=bf0_oi0->bf0",
               {"f32[1,1,4]", "f32[1,1,2]"}, {"f32[1,1,4] {{{1, 2, 3, 4}}}", "f32[1,1,2] {{{1, 10}}}"}),
            "f32[1,1,3] { { { 10, 32, 4 } } }");
  EXPECT_EQ(Op("s32[1,1,2] convolution(p0, p1), window={size=2 rhs_dilate=2}, dim_labels=bf0_oi0->bf0",
               {"s32[1,1,4]", "s32[1,1,2]"}, {"s32[1,1,4] {{{1, 2, 3, 4}}}", "s32[1,1,2] {{{1, 10}}}"}),
            "s32[1,1,2] { { { 31, 42 } } }");
  // lhs_dilate 2: {1, 0, 2}; kernel {1, 10} -> {1, 20}.
  EXPECT_EQ(Op("f32[1,1,2] convolution(p0, p1), window={size=2 lhs_dilate=2}, dim_labels=bf0_oi0->bf0",
               {"f32[1,1,2]", "f32[1,1,2]"}, {"f32[1,1,2] {{{1, 2}}}", "f32[1,1,2] {{{1, 10}}}"}),
            "f32[1,1,2] { { { 1, 20 } } }");
  // Depthwise (feature_group_count=2), NWC layout: each channel with its own kernel.
  EXPECT_EQ(Op("f32[1,1,2] convolution(p0, p1), window={size=2}, dim_labels=b0f_0io->b0f, feature_group_count=2",
               {"f32[1,2,2]", "f32[2,1,2]"},
               {"f32[1,2,2] {{{1, 2}, {3, 4}}}", "f32[2,1,2] {{{1, 10}}, {{100, 1000}}}"}),
            "f32[1,1,2] { { { 301, 4020 } } }");
  // batch_group_count=2: output feature k uses input batch k.
  EXPECT_EQ(Op("f32[1,2,1] convolution(p0, p1), window={size=1}, dim_labels=bf0_oi0->bf0, batch_group_count=2",
               {"f32[2,1,1]", "f32[2,1,1]"},
               {"f32[2,1,1] {{{3}}, {{5}}}", "f32[2,1,1] {{{2}}, {{10}}}"}),
            "f32[1,2,1] { { {6}, {50} } }");
  // Window reversal flips the kernel.
  EXPECT_EQ(Op("f32[1,1,1] convolution(p0, p1), window={size=2 rhs_reversal=1}, dim_labels=bf0_oi0->bf0",
               {"f32[1,1,2]", "f32[1,1,2]"}, {"f32[1,1,2] {{{1, 2}}}", "f32[1,1,2] {{{1, 10}}}"}),
            "f32[1,1,1] { { {12} } }");
}

TEST(EvalGatherScatter, GatherClampsAndScatterCombines) {
  // Rows 1 and 5 (clamped to 2) of a 3x2 matrix.
  EXPECT_EQ(Op("s32[2,2] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
               "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}",
               {"s32[3,2]", "s32[2,1]"}, {"s32[3,2] {{1, 2}, {3, 4}, {5, 6}}", "s32[2,1] {{1}, {5}}"}),
            "s32[2,2] { { 3, 4 }, { 5, 6 } }");
  // Batching dims: batch b picks element idx[b] of row b.
  EXPECT_EQ(Op("s32[2] gather(p0, p1), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, "
               "operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}",
               {"s32[2,3]", "s32[2,1]"}, {"s32[2,3] {{1, 2, 3}, {4, 5, 6}}", "s32[2,1] {{2}, {0}}"}),
            "s32[2] {3, 4}");
  // Duplicate indices accumulate; an out-of-range index is skipped.
  EXPECT_EQ(Op("s32[3] scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=adds",
               {"s32[3]", "s32[3,1]", "s32[3]"},
               {"s32[3] {0, 0, 0}", "s32[3,1] {{1}, {1}, {7}}", "s32[3] {10, 20, 30}"}, kAddS),
            "s32[3] {0, 30, 0}");
  // Overwrite combiner: the last duplicate wins.
  EXPECT_EQ(Op("f32[2] scatter(p0, p1, p2), update_window_dims={}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign",
               {"f32[2]", "s32[2,1]", "f32[2]"},
               {"f32[2] {0, 0}", "s32[2,1] {{0}, {0}}", "f32[2]{0} {1, 2}"},
               "assign { a = f32[] parameter(0)  ROOT b = f32[] parameter(1) }"),
            "f32[2] {2, 0}");
  // Window update [1,2] at row 1.
  EXPECT_EQ(Op("s32[2,2] scatter(p0, p1, p2), update_window_dims={1}, inserted_window_dims={0}, "
               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=adds",
               {"s32[2,2]", "s32[1,1]", "s32[1,2]"},
               {"s32[2,2] {{1, 1}, {1, 1}}", "s32[1,1] {{1}}", "s32[1,2] {{5, 6}}"}, kAddS),
            "s32[2,2] { { 1, 1 }, { 6, 7 } }");
}

TEST(EvalSort, KeysValuesStableAndCustomComparator) {
  EXPECT_EQ(Op("f32[4] sort(p0), dimensions={0}, to_apply=lt", {"f32[4]"}, {"f32[4] {3, 1, 2, -1}"},
               "lt { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT c = pred[] compare(a, b), direction=LT }"),
            "f32[4] {-1, 1, 2, 3}");
  EXPECT_EQ(Op("(s32[4], s32[4]) sort(p0, p1), dimensions={0}, is_stable=true, to_apply=gt",
               {"s32[4]", "s32[4]"}, {"s32[4] {1, 2, 1, 2}", "s32[4] {0, 1, 2, 3}"},
               "gt { a = s32[] parameter(0)  b = s32[] parameter(1)  c = s32[] parameter(2)  "
               "d = s32[] parameter(3)  ROOT r = pred[] compare(a, b), direction=GT }"),
            "(s32[4], s32[4]) ( {2, 2, 1, 1}, {1, 3, 0, 2} )");
  // Comparator on absolute values goes through the interpreter.
  EXPECT_EQ(Op("s32[2,3] sort(p0), dimensions={1}, to_apply=abslt", {"s32[2,3]"},
               {"s32[2,3] {{-3, 1, 2}, {5, -4, 0}}"},
               "abslt { a = s32[] parameter(0)  b = s32[] parameter(1)  x = s32[] abs(a)  y = s32[] abs(b)  "
               "ROOT c = pred[] compare(x, y), direction=LT }"),
            "s32[2,3] { { 1, 2, -3 }, { 0, -4, 5 } }");
  EXPECT_EQ(Op("(f32[2], s32[2]) topk(p0), k=2, largest=true", {"f32[4]"}, {"f32[4] {1, 5, 3, 5}"}),
            "(f32[2], s32[2]) ( {5, 5}, {1, 3} )");
}

TEST(EvalControlFlow, WhileConditionalCallFusionAsync) {
  EXPECT_EQ(hlowb::testing::Run(R"(
HloModule m
cond { p = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(p), index=0  n = s32[] constant(5)
       ROOT c = pred[] compare(i, n), direction=LT }
body { p = (s32[], s32[]) parameter(0)  i = s32[] get-tuple-element(p), index=0
       s = s32[] get-tuple-element(p), index=1  one = s32[] constant(1)  i2 = s32[] add(i, one)
       acc = s32[] add(s, i)  ROOT t = (s32[], s32[]) tuple(i2, acc) }
ENTRY e { z = s32[] constant(0)  t = (s32[], s32[]) tuple(z, z)
          w = (s32[], s32[]) while(t), condition=cond, body=body
          ROOT r = s32[] get-tuple-element(w), index=1 })"),
            "s32[] 10");
  std::string branches = R"(
HloModule m
b0 { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
b1 { p = f32[] parameter(0)  ROOT e = f32[] exponential(p) }
b2 { p = f32[] parameter(0)  ROOT c = f32[] constant(7) }
ENTRY e { i = s32[] parameter(0)  x = f32[] parameter(1)
          ROOT r = f32[] conditional(i, x, x, x), branch_computations={b0, b1, b2} })";
  EXPECT_EQ(hlowb::testing::Run(branches, {"s32[] 0", "f32[] 2"}), "f32[] -2");
  EXPECT_EQ(hlowb::testing::Run(branches, {"s32[] 1", "f32[] 0"}), "f32[] 1");
  EXPECT_EQ(hlowb::testing::Run(branches, {"s32[] 9", "f32[] 0"}), "f32[] 7");  // out of range: last
  EXPECT_EQ(hlowb::testing::Run(R"(
HloModule m
t { p = f32[] parameter(0)  ROOT n = f32[] negate(p) }
f { p = f32[] parameter(0)  ROOT c = f32[] copy(p) }
ENTRY e { b = pred[] parameter(0)  x = f32[] parameter(1)
          ROOT r = f32[] conditional(b, x, x), true_computation=t, false_computation=f })",
                                {"pred[] 1", "f32[] 3"}),
            "f32[] -3");
  EXPECT_EQ(hlowb::testing::Run(R"(
HloModule m
sq { p = f32[2] parameter(0)  ROOT m = f32[2] multiply(p, p) }
ENTRY e { x = f32[2] parameter(0)
  c = f32[2] call(x), to_apply=sq
  f = f32[2] fusion(c), kind=kLoop, calls=sq
  s = ((f32[2]), f32[2], s32[]) async-start(f), calls=sq
  u = ((f32[2]), f32[2], s32[]) async-update(s)
  d = f32[2] async-done(u)
  o = f32[2] opt-barrier(d)
  cs = (f32[2], f32[2], u32[]) copy-start(o)
  cd = f32[2] copy-done(cs)
  tok = token[] after-all()
  ROOT a = f32[2] add-dependency(cd, tok) })",
                                {"f32[2] {2, -1}"}),
            "f32[2] {256, 1}");
}

TEST(EvalNumerics, FftCholeskyTriangularSolve) {
  EXPECT_EQ(Op("c64[4] fft(p0), fft_type=FFT, fft_length={4}", {"c64[4]"},
               {"c64[4] {(1, 0), (0, 0), (0, 0), (0, 0)}"}),
            "c64[4] {(1, 0), (1, 0), (1, 0), (1, 0)}");
  EXPECT_EQ(Op("c64[4] fft(p0), fft_type=IFFT, fft_length={4}", {"c64[4]"},
               {"c64[4] {(4, 0), (0, 0), (0, 0), (0, 0)}"}),
            "c64[4] {(1, 0), (1, 0), (1, 0), (1, 0)}");
  EXPECT_EQ(Op("c64[3] fft(p0), fft_type=RFFT, fft_length={4}", {"f32[4]"}, {"f32[4] {1, 2, 3, 4}"}),
            "c64[3] {(10, 0), (-2, 2), (-2, 0)}");
  EXPECT_EQ(Op("f32[4] fft(p0), fft_type=IRFFT, fft_length={4}", {"c64[3]"},
               {"c64[3] {(10, 0), (-2, 2), (-2, 0)}"}),
            "f32[4] {1, 2, 3, 4}");
  EXPECT_EQ(Op("f64[2,2] cholesky(p0), lower=true", {"f64[2,2]"}, {"f64[2,2] {{4, 2}, {2, 5}}"}),
            "f64[2,2] { { 2, 0 }, { 1, 2 } }");
  // Lower-triangular a = {{2,0},{1,4}}: a x = b with b = {{2},{9}} gives x = {{1},{2}}.
  EXPECT_EQ(Op("f32[2,1] triangular-solve(p0, p1), left_side=true, lower=true, transpose_a=NO_TRANSPOSE",
               {"f32[2,2]", "f32[2,1]"}, {"f32[2,2] {{2, 99}, {1, 4}}", "f32[2,1] {{2}, {9}}"}),
            "f32[2,1] { {1}, {2} }");
  // x a = b with the same a: x = {{1, 2}} -> b = {{4, 8}}.
  EXPECT_EQ(Op("f32[1,2] triangular-solve(p0, p1), left_side=false, lower=true, transpose_a=NO_TRANSPOSE",
               {"f32[2,2]", "f32[1,2]"}, {"f32[2,2] {{2, 0}, {1, 4}}", "f32[1,2] {{4, 8}}"}),
            "f32[1,2] { { 1, 2 } }");
}

TEST(EvalMisc, RngDeterministicAndInRange) {
  std::string text = "HloModule m\nENTRY e { a = f32[] constant(2)  b = f32[] constant(3)\n"
                     "  ROOT r = f32[4] rng(a, b), distribution=rng_uniform }\n";
  std::string first = hlowb::testing::Run(text);
  EXPECT_EQ(first, hlowb::testing::Run(text));
  EXPECT_EQ(first.substr(0, 6), "f32[4]");
  EXPECT_EQ(Op("s32[] get-dimension-size(p0), dimensions={1}", {"f32[2,7]"},
               {"f32[2,7] {{0,0,0,0,0,0,0},{0,0,0,0,0,0,0}}"}),
            "s32[] 7");
  EXPECT_EQ(Op("u32[] replica-id()", {}, {}), "u32[] 0");
  EXPECT_EQ(Op("f32[2] all-reduce(p0), replica_groups={}, to_apply=add", {"f32[2]"}, {"f32[2] {1, 2}"}, kAdd),
            "f32[2]{0} {1, 2}");
}

TEST(EvalErrors, UnsupportedAndHostileInputsGiveClearErrors) {
  EXPECT_EQ(Op("f32[2] custom-call(p0), custom_call_target=\"foo\"", {"f32[2]"}, {"f32[2] {1, 2}"}),
            "error: evaluator: custom-call target \"foo\" (no custom-call handler) is not "
            "supported, in %r (custom-call)");
  std::string huge = Op("f32[100000,100000,100000] broadcast(p0), dimensions={}", {"f32[]"}, {"f32[] 1"});
  EXPECT_NE(huge.find("memory budget"), std::string::npos) << huge;
  EvaluatorOptions small;
  small.memory_budget_bytes = 16;
  EXPECT_NE(hlowb::testing::Run("HloModule m\nENTRY e { ROOT r = f32[8] iota(), iota_dimension=0 }\n", {}, small)
                .find("needs 32 bytes"),
            std::string::npos);
  EXPECT_NE(hlowb::testing::Run("HloModule m\nENTRY e { ROOT c = f32[2] constant({...}) }\n").find("elided"),
            std::string::npos);
  EXPECT_EQ(hlowb::testing::Run("HloModule m\nENTRY e { p = f32[2] parameter(0) ROOT r = f32[2] negate(p) }\n", {}),
            "error: entry computation e takes 1 arguments but 0 were given");
}

}  // namespace
}  // namespace hlowb::testing

namespace hlowb {
namespace {

// batch-norm-training and -grad give exactly three elements, each with its values (the
// normalised output or gradient, then the per-feature statistics).
TEST(EvalBatchNorm, TrainingAndGradGiveThreeFilledElements) {
  EXPECT_EQ(testing::Op("(f32[2,2], f32[2], f32[2]) batch-norm-training(p0, p1, p2), "
                        "epsilon=0, feature_index=1",
                        {"f32[2,2]", "f32[2]", "f32[2]"},
                        {"f32[2,2] {{1, 10}, {3, 30}}", "f32[2] {1, 1}", "f32[2] {0, 0}"}),
            "(f32[2,2], f32[2], f32[2]) ( { { -1, -1 }, { 1, 1 } }, {2, 20}, {1, 100} )");
  std::string grad = testing::Op(
      "(f32[2,2], f32[2], f32[2]) batch-norm-grad(p0, p1, p2, p3, p4), epsilon=0, feature_index=1",
      {"f32[2,2]", "f32[2]", "f32[2]", "f32[2]", "f32[2,2]"},
      {"f32[2,2] {{1, 10}, {3, 30}}", "f32[2] {1, 1}", "f32[2] {2, 20}", "f32[2] {1, 100}",
       "f32[2,2] {{1, 1}, {1, 1}}"});
  EXPECT_NE(grad.find("{2, 2}"), std::string::npos) << grad;  // grad scale = 0, grad offset = 2
  EXPECT_EQ(grad.find("error"), std::string::npos) << grad;
}

}  // namespace
}  // namespace hlowb
