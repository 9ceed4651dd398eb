#include "core/analysis/shape_inference.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/attributes.h"
#include "core/ir/computation.h"
#include "core/ir/module.h"
#include "core/text/parser.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

// Shared computations most tests call.
constexpr std::string_view kPrelude = R"(
add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

argmax {
  v0 = f32[] parameter(0)
  i0 = s32[] parameter(1)
  v1 = f32[] parameter(2)
  i1 = s32[] parameter(3)
  gt = pred[] compare(v0, v1), direction=GT
  v = f32[] select(gt, v0, v1)
  i = s32[] select(gt, i0, i1)
  ROOT r = (f32[], s32[]) tuple(v, i)
}

less_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}

ge_f32 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT ge = pred[] compare(a, b), direction=GE
}
)";

// Parses the prelude plus `body`. The parser fills omitted shapes with InferShape, so the
// instructions whose inference must fail ("bad...") declare a placeholder shape.
std::unique_ptr<Module> Parse(std::string_view body, std::string_view header = "HloModule m") {
  std::string text = std::string(header) + "\n" + std::string(kPrelude) + std::string(body);
  absl::StatusOr<std::unique_ptr<Module>> m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status() << "\n" << text;
  if (!m.ok()) return nullptr;
  return std::move(*m);
}

// Looks in the entry computation first: the prelude reuses short names.
Instruction* Find(const Module& m, std::string_view name) {
  if (m.entry() != nullptr) {
    if (Instruction* i = m.entry()->FindInstruction(std::string(name))) return i;
  }
  for (const auto& comp : m.computations()) {
    if (Instruction* i = comp->FindInstruction(std::string(name))) return i;
  }
  ADD_FAILURE() << "no instruction named " << name;
  return nullptr;
}

// The inferred shape of `name` without layout, or "error(<code>): <message>".
std::string Infer(const Module* m, std::string_view name) {
  if (m == nullptr) return "<no module>";
  Instruction* instr = Find(*m, name);
  if (instr == nullptr) return "<no instruction>";
  absl::StatusOr<Shape> s = InferShape(*instr);
  if (!s.ok()) {
    return std::string(s.status().code() == absl::StatusCode::kUnimplemented ? "unimplemented: "
                                                                             : "invalid: ") +
           std::string(s.status().message());
  }
  return PrintShape(*s, /*print_layout=*/false);
}

// Body with one entry computation whose instructions are given.
std::string Entry(std::string_view instructions) {
  return "ENTRY e {\n" + std::string(instructions) + "\n}\n";
}

TEST(ShapeInferenceTest, ElementwiseUnaryBinaryAndCompare) {
  auto m = Parse(Entry(R"(
  a = f32[4,3] parameter(0)
  b = f32[4,3] parameter(1)
  c = c64[4,3] parameter(2)
  i = s32[4,3] parameter(3)
  add = add(a, b)
  cmp = compare(a, b), direction=LT
  abs = abs(c)
  real = real(c)
  fin = is-finite(a)
  pop = popcnt(i)
  clz = count-leading-zeros(i)
  cplx = complex(a, b)
  ROOT neg = negate(a)
)"));
  EXPECT_EQ(Infer(m.get(), "add"), "f32[4,3]");
  EXPECT_EQ(Infer(m.get(), "cmp"), "pred[4,3]");
  EXPECT_EQ(Infer(m.get(), "abs"), "f32[4,3]");
  EXPECT_EQ(Infer(m.get(), "real"), "f32[4,3]");
  EXPECT_EQ(Infer(m.get(), "fin"), "pred[4,3]");
  EXPECT_EQ(Infer(m.get(), "pop"), "s32[4,3]");
  EXPECT_EQ(Infer(m.get(), "clz"), "s32[4,3]");
  EXPECT_EQ(Infer(m.get(), "cplx"), "c64[4,3]");
  EXPECT_EQ(Infer(m.get(), "neg"), "f32[4,3]");
}

TEST(ShapeInferenceTest, BinaryShapeMismatchNamesBothShapes) {
  auto m = Parse(Entry(R"(
  a = f32[4] parameter(0)
  b = f32[3] parameter(1)
  i = s32[4] parameter(2)
  bad = f32[4] add(a, b)
  bad_type = f32[4] multiply(a, i)
  ROOT bad_not = f32[4] not(a)
)"));
  EXPECT_EQ(Infer(m.get(), "bad"),
            "invalid: operand 1 of add has shape f32[3] but operand 0 has f32[4]");
  EXPECT_EQ(Infer(m.get(), "bad_type"),
            "invalid: operand 1 of multiply has shape s32[4] but operand 0 has f32[4]");
  EXPECT_NE(Infer(m.get(), "bad_not").find("invalid: not needs a pred or integral operand"),
            std::string::npos);
}

TEST(ShapeInferenceTest, SelectAndClampAcceptScalarPredicatesAndBounds) {
  auto m = Parse(Entry(R"(
  p = pred[] parameter(0)
  pa = pred[2,3] parameter(1)
  a = f32[2,3] parameter(2)
  b = f32[2,3] parameter(3)
  lo = f32[] parameter(4)
  hi = f32[] parameter(5)
  pw = pred[3,2] parameter(6)
  sel1 = select(p, a, b)
  sel2 = select(pa, a, b)
  c = clamp(lo, a, hi)
  bad = f32[1] select(pw, a, b)
  ROOT bad_clamp = f32[1] clamp(a, lo, hi)
)"));
  EXPECT_EQ(Infer(m.get(), "sel1"), "f32[2,3]");
  EXPECT_EQ(Infer(m.get(), "sel2"), "f32[2,3]");
  EXPECT_EQ(Infer(m.get(), "c"), "f32[2,3]");
  EXPECT_NE(Infer(m.get(), "bad").find("invalid: operand 0 of select has shape pred[3,2]"),
            std::string::npos);
  EXPECT_NE(Infer(m.get(), "bad_clamp").find("invalid: operand 0 of clamp"), std::string::npos);
}

TEST(ShapeInferenceTest, ConvertAndBitcastConvertWidthChanges) {
  auto m = Parse(Entry(R"(
  a = f32[4] parameter(0)
  b = s8[3,4] parameter(1)
  conv = s32[4] convert(a)
  split = u8[4,4] bitcast-convert(a)
  halves = s16[4,2] bitcast-convert(a)
  merge = s32[3] bitcast-convert(b)
  bad_merge = s16[3] bitcast-convert(b)
  ROOT same = s32[4] bitcast-convert(a)
)"));
  EXPECT_EQ(Infer(m.get(), "conv"), "s32[4]");
  EXPECT_EQ(Infer(m.get(), "split"), "u8[4,4]");
  EXPECT_EQ(Infer(m.get(), "halves"), "s16[4,2]");
  EXPECT_EQ(Infer(m.get(), "merge"), "s32[3]");
  EXPECT_NE(Infer(m.get(), "bad_merge").find("needs a minor dimension of size 2"),
            std::string::npos);
  EXPECT_EQ(Infer(m.get(), "same"), "s32[4]");
}

TEST(ShapeInferenceTest, BroadcastTransposeReshapeReverse) {
  auto m = Parse(Entry(R"(
  a = f32[3] parameter(0)
  t = f32[2,3,4] parameter(1)
  s = f32[] parameter(2)
  bc = f32[2,3,4] broadcast(a), dimensions={1}
  bc_scalar = broadcast(s), dimensions={}
  bad_bc = f32[2,4,3] broadcast(a), dimensions={1}
  tr = transpose(t), dimensions={2,0,1}
  bad_tr = f32[1] transpose(t), dimensions={0,5,1}
  rs = f32[6,4] reshape(t)
  bad_rs = f32[5,5] reshape(t)
  ROOT rev = reverse(t), dimensions={0,2}
)"));
  EXPECT_EQ(Infer(m.get(), "bc"), "f32[2,3,4]");
  EXPECT_EQ(Infer(m.get(), "bc_scalar"), "f32[]");
  EXPECT_NE(Infer(m.get(), "bad_bc").find("invalid: broadcast maps operand dimension 0 (size 3)"),
            std::string::npos);
  EXPECT_EQ(Infer(m.get(), "tr"), "f32[4,2,3]");
  EXPECT_NE(Infer(m.get(), "bad_tr").find("out of range"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "rs"), "f32[6,4]");
  EXPECT_NE(Infer(m.get(), "bad_rs").find("changes the element count"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "rev"), "f32[2,3,4]");
}

TEST(ShapeInferenceTest, SlicesWithStridesAndDynamicSlices) {
  auto m = Parse(Entry(R"(
  a = f32[10,7] parameter(0)
  i = s32[] parameter(1)
  u = f32[2,7] parameter(2)
  sl = f32[3,4] slice(a), slice={[1:10:3], [0:7:2]}
  bad_sl = f32[3,4] slice(a), slice={[1:11:3], [0:7:2]}
  ds = f32[2,5] dynamic-slice(a, i, i), dynamic_slice_sizes={2,5}
  bad_ds = f32[2,5] dynamic-slice(a, i), dynamic_slice_sizes={2,5}
  ROOT dus = f32[10,7] dynamic-update-slice(a, u, i, i)
)"));
  EXPECT_EQ(Infer(m.get(), "sl"), "f32[3,4]");
  EXPECT_NE(Infer(m.get(), "bad_sl").find("exceeds the size 10"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "ds"), "f32[2,5]");
  EXPECT_NE(Infer(m.get(), "bad_ds").find("needs 2 start indices but has 1"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "dus"), "f32[10,7]");
}

TEST(ShapeInferenceTest, ConcatenateAndPadWithInteriorAndNegativePadding) {
  auto m = Parse(Entry(R"(
  a = f32[2,3] parameter(0)
  b = f32[5,3] parameter(1)
  z = f32[] parameter(2)
  p = f32[3,4] parameter(3)
  cat = concatenate(a, b), dimensions={0}
  bad_cat = f32[1] concatenate(a, b), dimensions={1}
  pad = pad(p, z), padding=1_2_1x0_0_2
  neg = pad(p, z), padding=-1_0x0_-2
  ROOT too_neg = f32[1] pad(p, z), padding=-5_0x0_0
)"));
  EXPECT_EQ(Infer(m.get(), "cat"), "f32[7,3]");
  EXPECT_NE(Infer(m.get(), "bad_cat").find("may differ only in dimension 1"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "pad"), "f32[8,10]");
  EXPECT_EQ(Infer(m.get(), "neg"), "f32[2,2]");
  EXPECT_NE(Infer(m.get(), "too_neg").find("negative"), std::string::npos);
}

TEST(ShapeInferenceTest, DotWithBatchAndContractingDimensions) {
  auto m = Parse(Entry(R"(
  a = f32[8,16,32] parameter(0)
  b = f32[8,32,64] parameter(1)
  h = bf16[8,16,32] parameter(2)
  g = bf16[8,32,64] parameter(3)
  d = dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  outer = dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
  pref = f32[8,16,64] dot(h, g), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  bad = f32[1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT bad_dim = f32[1] dot(a, b), lhs_contracting_dims={3}, rhs_contracting_dims={1}
)"));
  EXPECT_EQ(Infer(m.get(), "d"), "f32[8,16,64]");
  EXPECT_EQ(Infer(m.get(), "outer"), "f32[8,16,32,8,32,64]");
  // The declared element type is XLA's "preferred element type".
  EXPECT_EQ(Infer(m.get(), "pref"), "f32[8,16,64]");
  EXPECT_NE(Infer(m.get(), "bad")
                .find("contracts lhs dimension 1 (size 16) with rhs dimension 1 (size 32)"),
            std::string::npos);
  EXPECT_NE(Infer(m.get(), "bad_dim").find("lhs_contracting_dims of dot {3} contains 3"),
            std::string::npos);
}

TEST(ShapeInferenceTest, RaggedDotModes) {
  auto m = Parse(Entry(R"(
  l = f32[11,5] parameter(0)
  r = f32[3,5,7] parameter(1)
  g = s64[3] parameter(2)
  lc = f32[11,19,5] parameter(3)
  rc = f32[19,5,7] parameter(4)
  nc = ragged-dot(l, r, g), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
  ROOT c = ragged-dot(lc, rc, g), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}, lhs_ragged_dims={2}
)"));
  EXPECT_EQ(Infer(m.get(), "nc"), "f32[11,7]");
  EXPECT_EQ(Infer(m.get(), "c"), "f32[3,11,7]");
}

TEST(ShapeInferenceTest, ConvolutionStridesPaddingDilationAndGroups) {
  auto m = Parse(Entry(R"(
  in = f32[1,8,8,3] parameter(0)
  k = f32[3,3,3,16] parameter(1)
  dw_in = f32[1,8,8,6] parameter(2)
  dw_k = f32[3,3,1,6] parameter(3)
  bg_in = f32[4,5,5,2] parameter(4)
  bg_k = f32[3,3,2,8] parameter(5)
  strided = convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  lhs_dil = convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  rhs_dil = convolution(in, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=2x2}, dim_labels=b01f_01io->b01f
  nchw = convolution(in, k), window={size=3x3}, dim_labels=b01f_01io->bf01
  depthwise = convolution(dw_in, dw_k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=6
  batch_group = convolution(bg_in, bg_k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
  bad_features = f32[1] convolution(dw_in, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT bad_window = f32[1] convolution(in, k), window={size=2x3}, dim_labels=b01f_01io->b01f
)"));
  EXPECT_EQ(Infer(m.get(), "strided"), "f32[1,4,4,16]");
  EXPECT_EQ(Infer(m.get(), "lhs_dil"), "f32[1,8,8,16]");
  EXPECT_EQ(Infer(m.get(), "rhs_dil"), "f32[1,3,3,16]");
  EXPECT_EQ(Infer(m.get(), "nchw"), "f32[1,16,6,6]");
  EXPECT_EQ(Infer(m.get(), "depthwise"), "f32[1,6,6,6]");
  EXPECT_EQ(Infer(m.get(), "batch_group"), "f32[2,3,3,8]");
  EXPECT_NE(Infer(m.get(), "bad_features").find("must equal the kernel input features"),
            std::string::npos);
  EXPECT_NE(Infer(m.get(), "bad_window").find("does not match the kernel"), std::string::npos);
}

TEST(ShapeInferenceTest, GatherWithAndWithoutBatchingDims) {
  auto m = Parse(Entry(R"(
  op = f32[3,3] parameter(0)
  idx = s32[2] parameter(1)
  bop = f32[5,3,4] parameter(2)
  bidx = s32[5,2,1] parameter(3)
  g = gather(op, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  bg = gather(bop, bidx), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
  ROOT bad = f32[1] gather(op, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,3}
)"));
  EXPECT_EQ(Infer(m.get(), "g"), "f32[2,3]");
  EXPECT_EQ(Infer(m.get(), "bg"), "f32[5,2,4]");
  EXPECT_NE(Infer(m.get(), "bad").find("collapsed slice sizes must be 0 or 1"), std::string::npos);
}

TEST(ShapeInferenceTest, ScatterSingleAndVariadic) {
  auto m = Parse(R"(
add_pair {
  a0 = f32[] parameter(0)
  b0 = s32[] parameter(1)
  a1 = f32[] parameter(2)
  b1 = s32[] parameter(3)
  sa = f32[] add(a0, a1)
  sb = s32[] add(b0, b1)
  ROOT t = (f32[], s32[]) tuple(sa, sb)
}
)" + Entry(R"(
  op = f32[3,3] parameter(0)
  ops = s32[3,3] parameter(1)
  idx = s32[2] parameter(2)
  upd = f32[2,3] parameter(3)
  upds = s32[2,3] parameter(4)
  bad_upd = f32[2,4] parameter(5)
  s = scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  v = scatter(op, ops, idx, upd, upds), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_pair
  bad = f32[1] scatter(op, idx, bad_upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  ROOT bad_fn = f32[1] scatter(op, idx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_pair
)"));
  EXPECT_EQ(Infer(m.get(), "s"), "f32[3,3]");
  EXPECT_EQ(Infer(m.get(), "v"), "(f32[3,3], s32[3,3])");
  EXPECT_NE(Infer(m.get(), "bad").find("exceeds the operand bound 3"), std::string::npos);
  EXPECT_NE(
      Infer(m.get(), "bad_fn")
          .find("to_apply computation add_pair of scatter must take 2 parameters but takes 4"),
      std::string::npos);
}

TEST(ShapeInferenceTest, ReduceSingleVariadicAndBadReducer) {
  auto m = Parse(Entry(R"(
  a = f32[4,8] parameter(0)
  i = s32[4,8] parameter(1)
  z = f32[] parameter(2)
  zi = s32[] parameter(3)
  r = reduce(a, z), dimensions={1}, to_apply=add_f32
  all = reduce(a, z), dimensions={0,1}, to_apply=add_f32
  v = reduce(a, i, z, zi), dimensions={1}, to_apply=argmax
  bad_dim = f32[1] reduce(a, z), dimensions={2}, to_apply=add_f32
  bad_init = f32[1] reduce(a, zi), dimensions={1}, to_apply=add_f32
  ROOT bad_fn = f32[1] reduce(a, z), dimensions={1}, to_apply=argmax
)"));
  EXPECT_EQ(Infer(m.get(), "r"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "all"), "f32[]");
  EXPECT_EQ(Infer(m.get(), "v"), "(f32[4], s32[4])");
  EXPECT_NE(Infer(m.get(), "bad_dim")
                .find("dimensions of reduce {2} contains 2, which is out of range [0, 2)"),
            std::string::npos);
  EXPECT_NE(Infer(m.get(), "bad_init").find("init value 0 of reduce has shape s32[]"),
            std::string::npos);
  EXPECT_NE(Infer(m.get(), "bad_fn").find("must take 2 parameters but takes 4"), std::string::npos);
}

TEST(ShapeInferenceTest, ReduceWindowAndSelectAndScatter) {
  auto m = Parse(Entry(R"(
  a = f32[4,6] parameter(0)
  z = f32[] parameter(1)
  src = f32[2,2] parameter(2)
  rw = reduce-window(a, z), window={size=2x3 stride=2x3}, to_apply=add_f32
  rw_pad = reduce-window(a, z), window={size=3x3 pad=1_1x1_1}, to_apply=add_f32
  rw_dil = reduce-window(a, z), window={size=2x2 lhs_dilate=2x1 rhs_dilate=1x2}, to_apply=add_f32
  ss = select-and-scatter(a, src, z), window={size=2x3 stride=2x3}, select=ge_f32, scatter=add_f32
  ROOT bad_ss = f32[1] select-and-scatter(a, src, z), window={size=2x2 stride=2x2}, select=ge_f32, scatter=add_f32
)"));
  EXPECT_EQ(Infer(m.get(), "rw"), "f32[2,2]");
  EXPECT_EQ(Infer(m.get(), "rw_pad"), "f32[4,6]");
  // Base dilation 2 turns 4 rows into 7; window dilation 2 makes 2 columns span 3.
  EXPECT_EQ(Infer(m.get(), "rw_dil"), "f32[6,4]");
  EXPECT_EQ(Infer(m.get(), "ss"), "f32[4,6]");
  EXPECT_NE(Infer(m.get(), "bad_ss").find("the window over operand 0 produces f32[2,3]"),
            std::string::npos);
}

TEST(ShapeInferenceTest, SortTopKTupleAndGetTupleElement) {
  auto m = Parse(Entry(R"(
  k = f32[4,8] parameter(0)
  v = s32[4,8] parameter(1)
  s = sort(k, v), dimensions={1}, to_apply=less_f32
  top = topk(k), k=2, largest=true
  t = tuple(k, v)
  gte = get-tuple-element(t), index=1
  ROOT bad_gte = f32[1] get-tuple-element(t), index=2
)"));
  EXPECT_EQ(Infer(m.get(), "s"), "(f32[4,8], s32[4,8])");
  EXPECT_EQ(Infer(m.get(), "top"), "(f32[4,2], s32[4,2])");
  EXPECT_EQ(Infer(m.get(), "t"), "(f32[4,8], s32[4,8])");
  EXPECT_EQ(Infer(m.get(), "gte"), "s32[4,8]");
  EXPECT_NE(Infer(m.get(), "bad_gte").find("index=2 is out of range"), std::string::npos);
}

TEST(ShapeInferenceTest, ControlFlowCallsMapAndFusion) {
  auto m = Parse(R"(
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  ROOT same = (s32[], f32[4]) copy(p)
}

branch_a {
  x = f32[4] parameter(0)
  ROOT r = f32[2] slice(x), slice={[0:2]}
}

branch_b {
  y = f32[3] parameter(0)
  ROOT r = f32[2] slice(y), slice={[1:3]}
}

add_f32_vec {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT s = f32[4] add(x, y)
}

fused {
  f0 = f32[4] parameter(0)
  f1 = f32[4] parameter(1)
  ROOT m = f32[4] multiply(f0, f1)
}
)" + Entry(R"(
  init = (s32[], f32[4]) parameter(0)
  a = f32[4] parameter(1)
  b = f32[3] parameter(2)
  pr = pred[] parameter(3)
  idx = s32[] parameter(4)
  w = while(init), condition=cond, body=body
  c = conditional(pr, a, b), true_computation=branch_a, false_computation=branch_b
  ci = conditional(idx, a, b), branch_computations={branch_a, branch_b}
  call = call(a, a), to_apply=add_f32_vec
  map = map(a, a), dimensions={0}, to_apply=add_f32
  fu = f32[4] fusion(a, a), kind=kLoop, calls=fused
  ROOT bad_c = f32[1] conditional(pr, b, a), true_computation=branch_a, false_computation=branch_b
)"));
  EXPECT_EQ(Infer(m.get(), "w"), "(s32[], f32[4])");
  EXPECT_EQ(Infer(m.get(), "c"), "f32[2]");
  EXPECT_EQ(Infer(m.get(), "ci"), "f32[2]");
  EXPECT_EQ(Infer(m.get(), "call"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "map"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "fu"), "f32[4]");
  EXPECT_NE(Infer(m.get(), "bad_c")
                .find("branch computation branch_a takes f32[4] but operand 1 of conditional has "
                      "shape f32[3]"),
            std::string::npos);
}

TEST(ShapeInferenceTest, CollectivesWithReplicaGroups) {
  auto m = Parse(Entry(R"(
  a = f32[4,8] parameter(0)
  v = f32[16] parameter(1)
  ag = f32[4,8] all-gather(a), replica_groups={{0,1,2,3}}, dimensions={1}
  ag_iota = f32[4,8] all-gather(a), replica_groups=[2,4]<=[8], dimensions={0}
  ag_decl = f32[12,8] all-gather(a), replica_groups={}, dimensions={0}
  ags = (f32[4,8], f32[8,8]) all-gather-start(a), replica_groups={{0,1}}, dimensions={0}
  agd = f32[8,8] all-gather-done(ags)
  ar = (f32[4,8], f32[16]) all-reduce(a, v), replica_groups={{0,1}}, to_apply=add_f32
  rs = f32[16] reduce-scatter(v), replica_groups={{0,1},{2,3}}, dimensions={0}, to_apply=add_f32
  bad_rs = f32[5] reduce-scatter(v), replica_groups={{0,1,2}}, dimensions={0}, to_apply=add_f32
  a2a = f32[4,8] all-to-all(a), replica_groups={{0,1}}, dimensions={0}
  cp = f32[4,8] collective-permute(a), source_target_pairs={{0,1},{1,0}}
  cps = (f32[4,8], f32[4,8], u32[], u32[]) collective-permute-start(a), source_target_pairs={{0,1},{1,0}}
  cpd = f32[4,8] collective-permute-done(cps)
  pid = partition-id()
  ROOT rid = replica-id()
)"),
                 "HloModule m");
  EXPECT_EQ(Infer(m.get(), "ag"), "f32[4,32]");
  EXPECT_EQ(Infer(m.get(), "ag_iota"), "f32[16,8]");
  // Without groups or module counts, the shard count comes from the declared shape.
  EXPECT_EQ(Infer(m.get(), "ag_decl"), "f32[12,8]");
  EXPECT_EQ(Infer(m.get(), "ags"), "(f32[4,8], f32[8,8])");
  EXPECT_EQ(Infer(m.get(), "agd"), "f32[8,8]");
  EXPECT_EQ(Infer(m.get(), "ar"), "(f32[4,8], f32[16])");
  EXPECT_EQ(Infer(m.get(), "rs"), "f32[8]");
  EXPECT_NE(Infer(m.get(), "bad_rs").find("cannot split dimension 0"), std::string::npos);
  EXPECT_EQ(Infer(m.get(), "a2a"), "f32[4,8]");
  EXPECT_EQ(Infer(m.get(), "cp"), "f32[4,8]");
  EXPECT_EQ(Infer(m.get(), "cps"), "(f32[4,8], f32[4,8], u32[], u32[])");
  EXPECT_EQ(Infer(m.get(), "cpd"), "f32[4,8]");
  EXPECT_EQ(Infer(m.get(), "pid"), "u32[]");
  EXPECT_EQ(Infer(m.get(), "rid"), "u32[]");
}

TEST(ShapeInferenceTest, AllGatherUsesModuleReplicaCountWithoutGroups) {
  auto m = Parse(Entry(R"(
  a = f32[4,8] parameter(0)
  ROOT ag = f32[4,16] all-gather(a), dimensions={1}
)"),
                 "HloModule m, replica_count=3");
  // The module's replica count decides, not the (wrong) declaration.
  EXPECT_EQ(Infer(m.get(), "ag"), "f32[4,24]");
}

TEST(ShapeInferenceTest, ChannelIdGroupModesFollowTheOpcode) {
  auto m = Parse(Entry(R"(
  a = f32[4,8] parameter(0)
  ag_all = f32[16,8] all-gather(a), channel_id=1, replica_groups={}, dimensions={0}
  ag_groups = f32[16,8] all-gather(a), channel_id=2, replica_groups={{0,1}}, dimensions={0}
  ag_flat = f32[8,8] all-gather(a), channel_id=3, replica_groups={{0,3}}, use_global_device_ids=true, dimensions={0}
  ROOT ag_replica = f32[8,8] all-gather(a), replica_groups={}, dimensions={0}
)"),
                 "HloModule m, replica_count=2, num_partitions=2");
  // A channel id alone on all-gather is cross-replica-and-partition: 2 replicas x 2 partitions.
  EXPECT_EQ(Infer(m.get(), "ag_all"), "f32[16,8]");
  // Listed replica ids span every partition in that mode.
  EXPECT_EQ(Infer(m.get(), "ag_groups"), "f32[16,8]");
  EXPECT_EQ(Infer(m.get(), "ag_flat"), "f32[8,8]");
  EXPECT_EQ(Infer(m.get(), "ag_replica"), "f32[8,8]");
}

TEST(ShapeInferenceTest, TokensChannelsAndMemoryOps) {
  auto m = Parse(Entry(R"(
  a = f32[4] parameter(0)
  tok = after-all()
  dep = add-dependency(a, tok)
  inf = (f32[2,3], token[]) infeed(tok)
  outf = token[] outfeed(a, tok), outfeed_shape=f32[4]
  snd = (f32[4], u32[], token[]) send(a, tok), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  rcv = (f32[7], u32[], token[]) recv(tok), channel_id=2
  rd = (f32[7], token[]) recv-done(rcv), channel_id=2
  cs = (f32[4], f32[4], u32[]) copy-start(a)
  cd = f32[4] copy-done(cs)
  ob = opt-barrier(a)
  gds = get-dimension-size(a), dimensions={0}
  ROOT bad_dep = f32[1] add-dependency(a, a)
)"));
  EXPECT_EQ(Infer(m.get(), "tok"), "token[]");
  EXPECT_EQ(Infer(m.get(), "dep"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "inf"), "(f32[2,3], token[])");
  EXPECT_EQ(Infer(m.get(), "outf"), "token[]");
  EXPECT_EQ(Infer(m.get(), "snd"), "(f32[4], u32[], token[])");
  EXPECT_EQ(Infer(m.get(), "sd"), "token[]");
  EXPECT_EQ(Infer(m.get(), "rcv"), "(f32[7], u32[], token[])");
  EXPECT_EQ(Infer(m.get(), "rd"), "(f32[7], token[])");
  EXPECT_EQ(Infer(m.get(), "cs"), "(f32[4], f32[4], u32[])");
  EXPECT_EQ(Infer(m.get(), "cd"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "ob"), "f32[4]");
  EXPECT_EQ(Infer(m.get(), "gds"), "s32[]");
  EXPECT_NE(Infer(m.get(), "bad_dep").find("operand 1 of add-dependency must be a token"),
            std::string::npos);
}

TEST(ShapeInferenceTest, AsyncStartUpdateDone) {
  auto m = Parse(R"(
wrapped {
  x = f32[4] parameter(0)
  ROOT y = f32[2] slice(x), slice={[0:2]}
}
)" + Entry(R"(
  a = f32[4] parameter(0)
  s = ((f32[4]), f32[2], s32[]) async-start(a), calls=wrapped
  u = ((f32[4]), f32[2], s32[]) async-update(s)
  ROOT d = f32[2] async-done(u)
)"));
  EXPECT_EQ(Infer(m.get(), "s"), "((f32[4]), f32[2], s32[])");
  EXPECT_EQ(Infer(m.get(), "u"), "((f32[4]), f32[2], s32[])");
  EXPECT_EQ(Infer(m.get(), "d"), "f32[2]");
}

TEST(ShapeInferenceTest, NumericsAndRandomOps) {
  auto m = Parse(Entry(R"(
  r = f32[4,16] parameter(0)
  c = c64[4,9] parameter(1)
  sq = f32[3,5,5] parameter(2)
  b = f32[3,5,2] parameter(3)
  x = f32[2,3,4] parameter(4)
  f = f32[3] parameter(5)
  lo = f32[] parameter(6)
  st = u64[2] parameter(7)
  rfft = fft(r), fft_type=RFFT, fft_length={16}
  irfft = fft(c), fft_type=IRFFT, fft_length={16}
  chol = cholesky(sq), lower=true
  ts = triangular-solve(sq, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
  bnt = batch-norm-training(x, f, f), epsilon=0.001, feature_index=1
  bni = batch-norm-inference(x, f, f, f, f), epsilon=0.001, feature_index=1
  bng = batch-norm-grad(x, f, f, f, x), epsilon=0.001, feature_index=1
  rng = f32[5,6] rng(lo, lo), distribution=rng_uniform
  rbg = (u64[2], u32[8]) rng-bit-generator(st), algorithm=rng_default
  state = u64[2] rng-get-and-update-state(), delta=1
  rp = f32[4,16] reduce-precision(r), exponent_bits=5, mantissa_bits=10
  ROOT iota = s32[4,5] iota(), iota_dimension=1
)"));
  EXPECT_EQ(Infer(m.get(), "rfft"), "c64[4,9]");
  EXPECT_EQ(Infer(m.get(), "irfft"), "f32[4,16]");
  EXPECT_EQ(Infer(m.get(), "chol"), "f32[3,5,5]");
  EXPECT_EQ(Infer(m.get(), "ts"), "f32[3,5,2]");
  EXPECT_EQ(Infer(m.get(), "bnt"), "(f32[2,3,4], f32[3], f32[3])");
  EXPECT_EQ(Infer(m.get(), "bni"), "f32[2,3,4]");
  EXPECT_EQ(Infer(m.get(), "bng"), "(f32[2,3,4], f32[3], f32[3])");
  EXPECT_EQ(Infer(m.get(), "rng"), "f32[5,6]");
  EXPECT_EQ(Infer(m.get(), "rbg"), "(u64[2], u32[8])");
  EXPECT_EQ(Infer(m.get(), "state"), "u64[2]");
  EXPECT_EQ(Infer(m.get(), "rp"), "f32[4,16]");
  EXPECT_EQ(Infer(m.get(), "iota"), "s32[4,5]");
}

TEST(ShapeInferenceTest, CannotInferIsUnimplementedNotInvalid) {
  auto m = Parse(Entry(R"(
  a = f32[4] parameter(0)
  cc = f32[4] custom-call(a), custom_call_target="foo"
  bc = f32[2,2] bitcast(a)
  ROOT iota_bad = s32[4,5] iota(), iota_dimension=2
)"));
  EXPECT_EQ(Infer(m.get(), "cc").rfind("unimplemented:", 0), 0u) << Infer(m.get(), "cc");
  EXPECT_EQ(Infer(m.get(), "bc").rfind("unimplemented:", 0), 0u);
  EXPECT_EQ(Infer(m.get(), "a").rfind("unimplemented:", 0), 0u);
  EXPECT_NE(Infer(m.get(), "iota_bad").find("invalid: iota_dimension=2 is out of range"),
            std::string::npos);

  // Convert without a declared shape has no target type.
  Instruction* a = Find(*m, "a");
  Instruction convert(Opcode::kConvert, "conv", m->InternShape(Shape()));
  convert.mutable_operands()->push_back(a);
  absl::StatusOr<Shape> s = InferShape(convert);
  EXPECT_EQ(s.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(ShapeInferenceTest, HostileInputsGiveErrorsNotCrashes) {
  auto m = Parse(Entry(R"(
  a = f32[4] parameter(0)
  big = f32[9223372036854775807] parameter(1)
  z = f32[] parameter(2)
  b = f32[4] add(a, a)
  cat = f32[1] concatenate(big, big), dimensions={0}
  pad = f32[1] pad(big, z), padding=9223372036854775807_1
  win = f32[1] reduce-window(a, z), window={size=0}, to_apply=add_f32
  ag = f32[1] all-gather(big), replica_groups={{0,1}}, dimensions={0}
  ROOT s = f32[1] slice(a), slice={[-1:2]}
)"));
  EXPECT_NE(Infer(m.get(), "cat").find("overflows"), std::string::npos);
  EXPECT_NE(Infer(m.get(), "pad").find("overflows"), std::string::npos);
  EXPECT_NE(Infer(m.get(), "win").find("must be positive"), std::string::npos);
  EXPECT_NE(Infer(m.get(), "ag").find("overflows"), std::string::npos);
  EXPECT_NE(Infer(m.get(), "s").find("starts below 0"), std::string::npos);

  Instruction* b = Find(*m, "b");
  ASSERT_NE(b, nullptr);
  ASSERT_EQ(b->operand_count(), 2);
  b->mutable_operands()->push_back(nullptr);
  EXPECT_EQ(Infer(m.get(), "b"), "invalid: operand 2 of add is missing");
  b->mutable_operands()->pop_back();
  b->mutable_operands()->pop_back();
  EXPECT_EQ(Infer(m.get(), "b"), "invalid: add takes 2 operands but has 1");

  // A reduce whose to_apply computation is missing.
  auto r = Parse(Entry(R"(
  a = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT r = f32[] reduce(a, z), dimensions={0}, to_apply=add_f32
)"));
  Instruction* reduce = Find(*r, "r");
  ASSERT_NE(reduce, nullptr);
  ASSERT_EQ(reduce->called_computations().size(), 1u);
  (*reduce->mutable_called_computations())[0] = nullptr;
  EXPECT_EQ(Infer(r.get(), "r"), "invalid: reduce needs a to_apply= computation");
  reduce->mutable_called_computations()->clear();
  EXPECT_EQ(Infer(r.get(), "r"), "invalid: reduce needs a to_apply= computation");
}

// Every opcode, with several operand lists, must give a shape or an error and never crash.
TEST(ShapeInferenceTest, EveryOpcodeSurvivesArbitraryOperands) {
  auto m = Parse(Entry(R"(
  s = f32[] parameter(0)
  v = f32[3] parameter(1)
  mtx = s32[2,2] parameter(2)
  tok = token[] parameter(3)
  tup = (f32[3], s32[]) parameter(4)
  ROOT r = f32[3] add(v, v)
)"));
  ASSERT_NE(m, nullptr);
  std::vector<Instruction*> pool = {Find(*m, "s"), Find(*m, "v"), Find(*m, "mtx"), Find(*m, "tok"),
                                    Find(*m, "tup")};
  std::vector<std::vector<Instruction*>> operand_lists = {
      {},
      {pool[0]},
      {pool[1]},
      {pool[4]},
      {pool[1], pool[3]},
      {pool[2], pool[0], pool[0]},
      {pool[1], pool[1], pool[1], pool[1]},
      {pool[3], pool[4], pool[2], pool[0], pool[1], pool[1]},
  };
  Computation* entry = m->entry();
  const Shape* declared[] = {
      m->InternShape(Shape()), m->InternShape(Shape::Array(PrimitiveType::kF32, {3})),
      m->InternShape(Shape::Tuple({Shape::Array(PrimitiveType::kF32, {3}), Shape::Token()}))};
  Instruction probe(Opcode::kAdd, "probe", declared[0]);
  probe.set_parent(entry);
  probe.mutable_called_computations()->push_back(m->FindComputation("add_f32"));
  for (int op = 0; op < kOpcodeCount; ++op) {
    probe.set_opcode(static_cast<Opcode>(op));
    for (const auto& operands : operand_lists) {
      for (const Shape* d : declared) {
        probe.set_shape(d);
        *probe.mutable_operands() = operands;
        probe.set_has_dimensions(true);
        *probe.mutable_dimensions() = {0};
        absl::StatusOr<Shape> s = InferShape(probe);
        if (!s.ok()) {
          EXPECT_TRUE(s.status().code() == absl::StatusCode::kInvalidArgument ||
                      s.status().code() == absl::StatusCode::kUnimplemented)
              << OpcodeName(probe.opcode()) << ": " << s.status();
          EXPECT_FALSE(s.status().message().empty()) << OpcodeName(probe.opcode());
        }
        *probe.mutable_dimensions() = {-1, 99};
        (void)InferShape(probe);
      }
    }
  }
}

TEST(ShapeInferenceTest, ValidateShapeAndCompatibility) {
  Shape ok = Shape::Array(PrimitiveType::kF32, {2, 3});
  ok.SetDefaultLayout();
  EXPECT_TRUE(ValidateShape(ok).ok());
  Shape bad_layout = ok;
  bad_layout.mutable_layout()->minor_to_major = {0, 0};
  EXPECT_FALSE(ValidateShape(bad_layout).ok());
  Shape negative = Shape::Array(PrimitiveType::kF32, {2, -3});
  EXPECT_FALSE(ValidateShape(negative).ok());
  EXPECT_FALSE(ValidateShape(Shape()).ok());

  Shape dynamic = Shape::Array(PrimitiveType::kF32, {2, 3});
  dynamic.set_dynamic_dimension(1, true);
  EXPECT_TRUE(ShapesCompatible(ok, dynamic));  // layouts and dynamism are ignored
  EXPECT_FALSE(ShapesCompatible(ok, Shape::Array(PrimitiveType::kBF16, {2, 3})));
  EXPECT_TRUE(ShapesCompatibleIgnoringFpPrecision(ok, Shape::Array(PrimitiveType::kBF16, {2, 3})));
  EXPECT_FALSE(ShapesCompatible(Shape::Tuple({ok}), Shape::Tuple({ok, ok})));
}

}  // namespace
}  // namespace hlowb

namespace hlowb {
namespace {

TEST(IotaDeviceListTest, ExpandsReshapeAndTranspose) {
  IotaDeviceList plain{{2, 4}, {8}, {}};
  EXPECT_EQ(plain.Expand(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  // [2,4]<=[4,2]T(1,0): iota(8) as 4x2, transposed to 2x4.
  IotaDeviceList transposed{{2, 4}, {4, 2}, {1, 0}};
  EXPECT_EQ(transposed.Expand(), (std::vector<int64_t>{0, 2, 4, 6, 1, 3, 5, 7}));
  ReplicaGroups groups;
  groups.iota = transposed;
  EXPECT_EQ(groups.Expanded(),
            (std::vector<std::vector<int64_t>>{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  // Inconsistent or hostile lists expand to nothing instead of allocating.
  EXPECT_TRUE((IotaDeviceList{{2, 4}, {3}, {}}).Expand().empty());
  EXPECT_TRUE((IotaDeviceList{{1 << 30, 1 << 30}, {}, {}}).Expand().empty());
  EXPECT_TRUE((IotaDeviceList{{2, 4}, {4, 2}, {0, 0}}).Expand().empty());
}

}  // namespace
}  // namespace hlowb
