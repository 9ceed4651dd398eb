// The cpu platform's dot, convolution and gather library calls (cpu_library_calls.h): each form
// runs through the library (the compile statistics say so) and agrees with the interpreter on
// seeded random data within the cpu tolerance table; forms the calls do not take stay on the
// interpreter and are named in the summary.
#include <memory>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "tests/unit/cpu/agreement.h"

namespace hlowb {
namespace {

using testing::Disagreement;

struct Case {
  const char* name;
  const char* lhs;
  const char* rhs;
  const char* instruction;  // "<shape> dot(l, r), ..." or "<shape> convolution(l, r), ..."
};

// Compiles `c` without the pass pipeline (so the instruction reaches the runtime as written),
// runs it on seeded random data and compares with the interpreter. Returns the executable's
// statistics through `stats`.
void RunCase(const Case& c, int64_t want_library_calls, CpuCompileStats* stats = nullptr) {
  SCOPED_TRACE(c.name);
  const std::string text = std::string("HloModule m\nENTRY e {\n  l = ") + c.lhs +
                           " parameter(0)\n  r = " + c.rhs + " parameter(1)\n  ROOT o = " +
                           c.instruction + "\n}\n";
  auto m = ParseModule(text);
  ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
  FakeDataOptions fo;
  fo.seed = 7;
  auto args = MakeFakeArguments(**m, fo);
  ASSERT_TRUE(args.ok()) << args.status();
  CpuCompileOptions co;
  co.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(**m, co);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().library_calls, want_library_calls) << (*exe)->Summary();
  if (stats != nullptr) *stats = (*exe)->stats();
  auto want = EvaluateModule(**m, *args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = (*exe)->Run(*args, {});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(Disagreement(*want, *got, c.name), "");
  if (want_library_calls == 0) return;
  // The result is not all zeros (a call that wrote nothing would agree with an all-zero answer
  // only by accident, and random data makes that vanishingly unlikely).
  bool nonzero = false;
  for (int64_t i = 0; i < got->element_count() && !nonzero; ++i) {
    nonzero = testing::ElementAsDouble(*got, i) != 0;
  }
  EXPECT_TRUE(nonzero);
}

TEST(CpuLibraryCalls, DotsInEveryOperandOrderAndType) {
  const Case cases[] = {
      {"plain f32", "f32[64,96]", "f32[96,80]",
       "f32[64,80] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"lhs stored transposed", "f32[96,64]", "f32[96,80]",
       "f32[64,80] dot(l, r), lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
      {"rhs stored transposed", "f32[64,96]", "f32[80,96]",
       "f32[64,80] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
      {"batch in the middle", "f32[7,5,9,3]", "f32[9,3,5,4]",
       "f32[5,7,4] dot(l, r), lhs_batch_dims={1}, lhs_contracting_dims={2,3}, "
       "rhs_batch_dims={2}, rhs_contracting_dims={0,1}"},
      {"matrix-vector", "f32[33,65]", "f32[65]",
       "f32[33] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"bf16", "bf16[4,48,32]", "bf16[4,32,40]",
       "bf16[4,48,40] dot(l, r), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
       "rhs_batch_dims={0}, rhs_contracting_dims={1}"},
      {"f16", "f16[20,30]", "f16[30,10]",
       "f16[20,10] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"bf16 into f32", "bf16[16,24]", "bf16[24,8]",
       "f32[16,8] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f32 into bf16", "f32[16,24]", "f32[8,24]",
       "bf16[16,8] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={1}"},
  };
  for (const Case& c : cases) RunCase(c, 1);
}

TEST(CpuLibraryCalls, ConvolutionsOfEveryForm) {
  const Case cases[] = {
      {"3x3 same padding, bf16 (ssd's form)", "bf16[1,9,9,6]", "bf16[3,3,6,10]",
       "bf16[1,9,9,10] convolution(l, r), window={size=3x3 pad=1_1x1_1}, "
       "dim_labels=b01f_01io->b01f"},
      {"3x3 stride 2, asymmetric padding", "f32[2,11,10,5]", "f32[3,3,5,7]",
       "f32[2,5,5,7] convolution(l, r), window={size=3x3 stride=2x2 pad=0_1x0_1}, "
       "dim_labels=b01f_01io->b01f"},
      {"1x1 (the input is the matrix)", "bf16[1,7,6,12]", "bf16[1,1,12,20]",
       "bf16[1,7,6,20] convolution(l, r), window={size=1x1}, dim_labels=b01f_01io->b01f"},
      {"depthwise", "bf16[1,8,8,16]", "bf16[3,3,1,16]",
       "bf16[1,8,8,16] convolution(l, r), window={size=3x3 pad=1_1x1_1}, "
       "dim_labels=b01f_01io->b01f, feature_group_count=16"},
      {"depthwise with multiplier 3, stride 2", "f32[2,9,9,4]", "f32[3,3,1,12]",
       "f32[2,4,4,12] convolution(l, r), window={size=3x3 stride=2x2}, "
       "dim_labels=b01f_01io->b01f, feature_group_count=4"},
      {"grouped, 2 groups of 3", "f32[1,6,6,6]", "f32[2,2,3,8]",
       "f32[1,5,5,8] convolution(l, r), window={size=2x2}, dim_labels=b01f_01io->b01f, "
       "feature_group_count=2"},
      {"NCHW / OIHW", "f32[2,3,10,8]", "f32[4,3,3,3]",
       "f32[2,4,8,6] convolution(l, r), window={size=3x3}, dim_labels=bf01_oi01->bf01"},
      {"output in another order", "f32[2,7,7,3]", "f32[3,3,3,5]",
       "f32[5,2,5,5] convolution(l, r), window={size=3x3}, dim_labels=b01f_01io->fb01"},
      {"dilations and reversal", "f32[1,6,7,2]", "f32[3,2,2,3]",
       "f32[1,11,8,3] convolution(l, r), window={size=3x2 pad=2_2x1_1 lhs_dilate=2x1 "
       "rhs_dilate=2x1 rhs_reversal=1x0 stride=1x1}, dim_labels=b01f_01io->b01f"},
      {"1-D", "f32[3,20,4]", "f32[5,4,6]",
       "f32[3,16,6] convolution(l, r), window={size=5}, dim_labels=b0f_0io->b0f"},
      {"3-D", "f32[1,5,6,7,2]", "f32[2,2,2,2,3]",
       "f32[1,4,5,6,3] convolution(l, r), window={size=2x2x2}, dim_labels=b012f_012io->b012f"},
  };
  for (const Case& c : cases) RunCase(c, 1);
}

TEST(CpuLibraryCalls, GathersAsRowCopies) {
  const Case cases[] = {
      {"embedding lookup", "f32[100,16]", "s32[7]",
       "f32[7,16] gather(l, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,16}"},
      {"bf16, two-element index vectors", "bf16[10,12,8]", "s64[5,2]",
       "bf16[5,8] gather(l, r), offset_dims={1}, collapsed_slice_dims={0,1}, "
       "start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,1,8}"},
      {"windows of several rows", "f32[20,30]", "s32[4,1]",
       "f32[4,3,30] gather(l, r), offset_dims={1,2}, collapsed_slice_dims={}, "
       "start_index_map={0}, index_vector_dim=1, slice_sizes={3,30}"},
      {"batching dimensions", "f32[4,10,6]", "s32[4,3,1]",
       "f32[4,3,6] gather(l, r), offset_dims={2}, collapsed_slice_dims={1}, "
       "operand_batching_dims={0}, start_indices_batching_dims={0}, start_index_map={1}, "
       "index_vector_dim=2, slice_sizes={1,1,6}"},
  };
  for (const Case& c : cases) RunCase(c, 1);
}

// Philox rng-bit-generators run as a library call with the interpreter's generator: bit for
// bit (bits and new state) for every result width, both state forms, counters whose low word
// wraps into the high word, and element counts that end inside a block of four words.
TEST(CpuLibraryCalls, PhiloxBitsAreTheInterpretersBitForBit) {
  struct Rng {
    const char* name;
    const char* state;   // the state constant's shape and value
    const char* result;  // the rng-bit-generator's result shape
  };
  const Rng cases[] = {
      {"u32, u64[2]", "u64[2] constant({42, 7})", "(u64[2], u32[3,1001])"},
      {"u64, u64[3]", "u64[3] constant({5, 18446744073709551614, 3})", "(u64[3], u64[257])"},
      {"u8 and a wrapping counter", "u64[3] constant({9, 18446744073709551615, 0})",
       "(u64[3], u8[70001])"},
      {"s16", "u64[2] constant({1, 2})", "(u64[2], s16[33,3])"},
      {"f32 bits, default algorithm", "u64[2] constant({3, 4})", "(u64[2], f32[4096])"},
  };
  for (const Rng& c : cases) {
    SCOPED_TRACE(c.name);
    const bool default_algorithm = std::string(c.name).find("default") != std::string::npos;
    const std::string text = std::string("HloModule m\nENTRY e {\n  s = ") + c.state +
                             "\n  ROOT r = " + c.result + " rng-bit-generator(s), algorithm=" +
                             (default_algorithm ? "rng_default" : "rng_philox") + "\n}\n";
    auto m = ParseModule(text);
    ASSERT_TRUE(m.ok()) << m.status() << "\n" << text;
    CpuCompileOptions co;  // the cpu pipeline keeps philox for the library call
    auto exe = CpuExecutable::Compile(**m, co);
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_EQ((*exe)->stats().library_calls, 1) << (*exe)->Summary();
    EXPECT_EQ((*exe)->stats().interpreted, 0) << (*exe)->Summary();
    auto want = EvaluateModule(**m, {});
    ASSERT_TRUE(want.ok()) << want.status();
    auto got = (*exe)->Run({}, {});
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_TRUE(*want == *got) << Disagreement(*want, *got, c.name);
  }
}

// Three-fry is not the call's: the cpu pipeline unrolls it into kernels, which agree too.
TEST(CpuLibraryCalls, ThreeFryIsExpandedIntoKernels) {
  auto m = ParseModule(R"(HloModule m
ENTRY e {
  s = u64[2] constant({11, 12})
  ROOT r = (u64[2], u32[64,33]) rng-bit-generator(s), algorithm=rng_three_fry
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  auto exe = CpuExecutable::Compile(**m, CpuCompileOptions{});
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().library_calls, 0) << (*exe)->Summary();
  EXPECT_GT((*exe)->stats().kernels, 0) << (*exe)->Summary();
  auto want = EvaluateModule(**m, {});
  auto got = (*exe)->Run({}, {});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_TRUE(*want == *got) << Disagreement(*want, *got, "three-fry");
}

TEST(CpuLibraryCalls, GatherClampsStartsLikeTheInterpreter) {
  auto m = ParseModule(R"(HloModule g
ENTRY e {
  t = s32[6,5] parameter(0)
  i = s64[4] constant({-5, 2, 1000, 5})
  ROOT g = s32[4,2,5] gather(t, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0}, index_vector_dim=1, slice_sizes={2,5}
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  Literal table = Literal::Uninitialized(Shape::Array(PrimitiveType::kS32, {6, 5}));
  for (int i = 0; i < 30; ++i) table.mutable_data_as<int32_t>()[i] = i;
  std::vector<Literal> args;
  args.push_back(std::move(table));
  CpuCompileOptions co;
  co.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(**m, co);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->stats().library_calls, 1) << (*exe)->Summary();
  auto want = EvaluateModule(**m, args);
  auto got = (*exe)->Run(args, {});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_TRUE(*want == *got);
  // Starts clamp to [0, 6 - 2]: rows 0, 2, 4 and 4.
  const int32_t* g = got->data_as<int32_t>();
  EXPECT_EQ(g[0], 0);
  EXPECT_EQ(g[10], 10);
  EXPECT_EQ(g[20], 20);
  EXPECT_EQ(g[30], 20);
}

TEST(CpuLibraryCalls, FormsTheCallsDoNotTakeStayOnTheInterpreterAndAreNamed) {
  const Case cases[] = {
      {"integer dot", "s32[4,5]", "s32[5,6]",
       "s32[4,6] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"f64 dot", "f64[4,5]", "f64[5,6]",
       "f64[4,6] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"batch groups", "f32[4,5,5,3]", "f32[3,3,3,8]",
       "f32[1,3,3,8] convolution(l, r), window={size=3x3}, dim_labels=b01f_01io->b01f, "
       "batch_group_count=4"},
      {"gather with the offset dimension first", "f32[10,8]", "s32[3,1]",
       "f32[8,3] gather(l, r), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,8}"},
  };
  for (const Case& c : cases) {
    CpuCompileStats stats;
    RunCase(c, 0, &stats);
    EXPECT_EQ(stats.interpreted, 1) << c.name;
  }
}

}  // namespace
}  // namespace hlowb
