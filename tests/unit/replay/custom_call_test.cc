// The custom-call registry and the built-in handlers. Every handler is checked against the same
// computation written in plain HLO and run by the evaluator; the cuDNN backward kinds also
// against the adjoint identity <conv(x, w), dy> = <x, d_input> = <w, d_filter>.
#include <cmath>
#include <cstring>

#include "gtest/gtest.h"
#include "plugins/api/custom_call_registry.h"
#include "core/support/json_reader.h"
#include "plugins/builtin/builtin_plugins.h"
#include "replay/compare/compare.h"
#include "replay/data/fake_data.h"
#include "replay/evaluator/evaluator.h"
#include "replay_test_util.h"

namespace hlowb {
namespace {

using testing::Lit;
using testing::Parse;

std::shared_ptr<CustomCallDispatcher> Dispatcher(
    CustomCallFallback fallback = CustomCallFallback::kError,
    std::map<std::string, Literal> known = {}) {
  CustomCallDispatchOptions o;
  o.fallback = fallback;
  o.known_outputs = std::move(known);
  return CustomCallDispatcher::Create(BuiltinCustomCallRegistry(), std::move(o));
}

absl::StatusOr<Literal> Eval(const Module& m, const std::vector<Literal>& args,
                             const std::shared_ptr<CustomCallDispatcher>& d = Dispatcher()) {
  EvaluatorOptions eo;
  eo.custom_call = d->AsFunction();
  return EvaluateModule(m, args, eo);
}

// Runs `custom` and `plain` on the same fake arguments (drawn for `plain`) and expects results
// within the bounds.
void ExpectSameAsPlain(const std::string& custom, const std::string& plain, double abs = 1e-5,
                       double rel = 1e-5, uint64_t seed = 3) {
  auto cm = Parse(custom);
  auto pm = Parse(plain);
  ASSERT_TRUE(cm && pm);
  auto args = MakeFakeArguments(*pm, FakeDataOptions{seed, false});
  ASSERT_TRUE(args.ok()) << args.status();
  auto want = Eval(*pm, *args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = Eval(*cm, *args);
  ASSERT_TRUE(got.ok()) << got.status();
  ComparisonReport c = CompareLiterals(*want, *got, ErrorBounds{abs, rel}, 3);
  EXPECT_TRUE(c.ok()) << c.ToString();
  // The comparison must see real values: at least one nonzero element.
  bool nonzero = false;
  std::function<void(const Literal&)> scan = [&](const Literal& l) {
    for (uint8_t b : l.data()) nonzero = nonzero || b != 0;
    for (const Literal& e : l.tuple_elements()) scan(e);
  };
  scan(*want);
  EXPECT_TRUE(nonzero) << "degenerate test: the expected result is all zeros";
}

// --- registry ----------------------------------------------------------------------------------

TEST(CustomCallRegistry, KeysByTargetAndPlatform) {
  CustomCallRegistry r;
  auto h = [](const Instruction&, const std::vector<const Literal*>&) -> absl::StatusOr<Literal> {
    return Literal(Shape::Array(PrimitiveType::kF32, {}));
  };
  ASSERT_TRUE(r.Register({"t", "gpu", "a", "", h, {}}).ok());
  ASSERT_TRUE(r.Register({"t", "cpu", "b", "", h, {}}).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(r.Register({"t", "cuda", "c", "", h, {}})));
  EXPECT_TRUE(absl::IsInvalidArgument(r.Register({"", "gpu", "c", "", h, {}})));
  EXPECT_EQ(r.Find("t", "cuda")->plugin, "a");
  EXPECT_EQ(r.Find("t", "host")->plugin, "b");
  EXPECT_NE(r.Find("t", ""), nullptr);  // platform unknown: any handler of the target
  EXPECT_EQ(r.Find("t", "rocm")->plugin, "a");
  EXPECT_EQ(r.Find("u", "gpu"), nullptr);
  ASSERT_TRUE(r.Register({"any", "", "d", "", h, {}}).ok());
  EXPECT_EQ(r.Find("any", "cpu")->plugin, "d");
}

TEST(CustomCallRegistry, BuiltinsCoverTheDocumentedTargets) {
  CustomCallRegistry r = BuiltinCustomCallRegistry();
  for (const char* t : {"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8",
                        "__cudnn$convForward", "__cudnn$convBiasActivationForward",
                        "__cudnn$convBackwardInput", "__cudnn$convBackwardFilter"}) {
    EXPECT_NE(r.Find(t, "gpu"), nullptr) << t;
    EXPECT_EQ(r.Find(t, "cpu"), nullptr) << t;
  }
  for (const char* t : {"__onednn$matmul", "__onednn$layernorm", "__onednn$softmax"}) {
    EXPECT_NE(r.Find(t, "cpu"), nullptr) << t;
  }
  for (const char* t : {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "TopK"}) {
    EXPECT_NE(r.Find(t, "gpu"), nullptr) << t;
    EXPECT_NE(r.Find(t, "cpu"), nullptr) << t;
  }
}

TEST(JsonReader, ReadsProtoJsonAndSloppyConfigs) {
  auto v = JsonValue::Parse(
      R"({"a":{"dims":["1","0"],"x":-2.5e1,"s":"k\u0041"},"b":true, unquoted: 3})");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v->Find("a")->Find("dims")->AsIntArray(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(*v->Find("a")->Find("x")->AsNumber(), -25);
  EXPECT_EQ(v->Find("a")->Find("s")->string_value(), "kA");
  EXPECT_TRUE(*v->Find("b")->AsBool());
  EXPECT_EQ(*v->Find("unquoted")->AsInt(), 3);
  for (const char* bad : {"{", "{\"a\" 1}", "[1,]", "{\"a\":tru}", "\"open"}) {
    EXPECT_FALSE(JsonValue::Parse(bad).ok()) << bad;
  }
  std::string deep(1000, '[');
  EXPECT_FALSE(JsonValue::Parse(deep).ok());
}

// --- dispatcher: unknown targets and fallbacks ---------------------------------------------------

constexpr char kMystery[] = R"(
HloModule mystery
ENTRY e {
  x = f32[4] parameter(0)
  cc = f32[4] custom-call(x), custom_call_target="my$mystery"
  y = f32[4] add(cc, x)
  ROOT t = (f32[4], f32[4]) tuple(cc, y)
}
)";

TEST(CustomCallDispatcher, UnknownTargetNamesTargetAndInstruction) {
  auto m = Parse(kMystery);
  auto r = Eval(*m, {Lit("f32[4]{0} {1, 2, 3, 4}")});
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("my$mystery"), std::string::npos) << msg;
  EXPECT_NE(msg.find("%cc"), std::string::npos) << msg;
  EXPECT_NE(msg.find("--custom_call_fallback"), std::string::npos) << msg;
}

TEST(CustomCallDispatcher, ZerosFallbackLetsTheRestReplay) {
  auto m = Parse(kMystery);
  auto d = Dispatcher(CustomCallFallback::kZeros);
  auto r = Eval(*m, {Lit("f32[4]{0} {1, 2, 3, 4}")}, d);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_elements()[0], Lit("f32[4]{0} {0, 0, 0, 0}"));
  EXPECT_EQ(r->tuple_elements()[1], Lit("f32[4]{0} {1, 2, 3, 4}"));
  ASSERT_EQ(d->Notes().size(), 1u);
  EXPECT_NE(d->Notes()[0].find("%cc"), std::string::npos);
}

TEST(CustomCallDispatcher, SnapshotFallbackUsesTheRecordedValue) {
  auto m = Parse(kMystery);
  // A recorded result of the whole module reveals the custom call's value (root tuple element).
  Literal recorded(m->entry()->root()->shape(), false);
  std::vector<Literal> elements;
  elements.push_back(Lit("f32[4]{0} {10, 20, 30, 40}"));
  elements.push_back(Lit("f32[4]{0} {0, 0, 0, 0}"));
  *recorded.mutable_tuple_elements() = std::move(elements);
  auto known = CustomCallOutputsFromResult(*m, recorded);
  ASSERT_EQ(known.count("cc"), 1u);
  auto d = Dispatcher(CustomCallFallback::kSnapshot, std::move(known));
  auto r = Eval(*m, {Lit("f32[4]{0} {1, 2, 3, 4}")}, d);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->tuple_elements()[1], Lit("f32[4]{0} {11, 22, 33, 44}"));
  ASSERT_EQ(d->Notes().size(), 1u);
  EXPECT_NE(d->Notes()[0].find("recorded"), std::string::npos);
}

TEST(CustomCallDispatcher, HandlerErrorsNameTheInstruction) {
  auto m = Parse(R"(
HloModule bad
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  ROOT g = f32[2,2] custom-call(a, b), custom_call_target="__cublas$gemm", backend_config={"gemm_backend_config":{"alpha_real":1}}
}
)");
  auto r = Eval(*m, {Literal(Shape::Array(PrimitiveType::kF32, {2, 3})),
                     Literal(Shape::Array(PrimitiveType::kF32, {3, 2}))});
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("%g"), std::string::npos) << msg;
  EXPECT_NE(msg.find("dot_dimension_numbers"), std::string::npos) << msg;
}

// --- cuBLAS ------------------------------------------------------------------------------------

TEST(CublasHandler, GemmAlphaBetaBatchAndTransposedOperand) {
  // lhs contracts its dimension 1 of [batch, k, m] (a transposed operand), beta adds C.
  ExpectSameAsPlain(R"(
HloModule gemm
ENTRY e {
  a = f32[2,5,3] parameter(0)
  b = f32[2,5,4] parameter(1)
  c = f32[2,3,4] parameter(2)
  ROOT g = f32[2,3,4] custom-call(a, b, c), custom_call_target="__cublas$gemm", backend_config={"operation_queue_id":"0","gemm_backend_config":{"alpha_real":2,"alpha_imag":0,"beta":0.5,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["1"],"lhs_batch_dimensions":["0"],"rhs_batch_dimensions":["0"]},"precision_config":{"operand_precision":["DEFAULT","DEFAULT"]},"epilogue":"DEFAULT"}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[2,5,3] parameter(0)
  b = f32[2,5,4] parameter(1)
  c = f32[2,3,4] parameter(2)
  d = f32[2,3,4] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  two = f32[] constant(2)
  half = f32[] constant(0.5)
  btwo = f32[2,3,4] broadcast(two), dimensions={}
  bhalf = f32[2,3,4] broadcast(half), dimensions={}
  ad = f32[2,3,4] multiply(d, btwo)
  bc = f32[2,3,4] multiply(c, bhalf)
  ROOT r = f32[2,3,4] add(ad, bc)
}
)");
}

TEST(CublasHandler, OlderTopLevelConfigAndQuotedString) {
  ExpectSameAsPlain(R"(
HloModule gemm
ENTRY e {
  a = f32[5,5] parameter(0)
  ROOT g = f32[5,5] custom-call(a, a), custom_call_target="__cublas$gemm", backend_config="{\"alpha_real\":1,\"beta\":0,\"dot_dimension_numbers\":{\"lhs_contracting_dimensions\":[\"1\"],\"rhs_contracting_dimensions\":[\"0\"],\"lhs_batch_dimensions\":[],\"rhs_batch_dimensions\":[]},\"alpha_imag\":0,\"epilogue\":\"DEFAULT\"}"
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[5,5] parameter(0)
  ROOT d = f32[5,5] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
}

TEST(CublasHandler, LtMatmulBiasReluEpilogue) {
  ExpectSameAsPlain(R"(
HloModule lt
ENTRY e {
  a = f32[6,8] parameter(0)
  b = f32[8,5] parameter(1)
  bias = f32[5] parameter(2)
  ROOT g = f32[6,5] custom-call(a, b, bias), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"BIAS_RELU"}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[6,8] parameter(0)
  b = f32[8,5] parameter(1)
  bias = f32[5] parameter(2)
  d = f32[6,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[6,5] broadcast(bias), dimensions={1}
  s = f32[6,5] add(d, bb)
  zero = f32[] constant(0)
  bz = f32[6,5] broadcast(zero), dimensions={}
  ROOT r = f32[6,5] maximum(s, bz)
}
)");
}

TEST(CublasHandler, LtMatmulGeluAuxWithWorkspace) {
  ExpectSameAsPlain(R"(
HloModule lt
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  ROOT g = (f32[4,3], f32[4,3], s8[64]) custom-call(a, b), custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":{"alpha_real":3,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"GELU_AUX"}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[4,8] parameter(0)
  b = f32[8,3] parameter(1)
  d0 = f32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  three = f32[] constant(3)
  b3 = f32[4,3] broadcast(three), dimensions={}
  x = f32[4,3] multiply(d0, b3)
  xx = f32[4,3] multiply(x, x)
  x3 = f32[4,3] multiply(x, xx)
  k1 = f32[] constant(0.044715)
  bk1 = f32[4,3] broadcast(k1), dimensions={}
  x3k = f32[4,3] multiply(x3, bk1)
  inner = f32[4,3] add(x, x3k)
  k2 = f32[] constant(0.7978845608028654)
  bk2 = f32[4,3] broadcast(k2), dimensions={}
  ik = f32[4,3] multiply(inner, bk2)
  t = f32[4,3] tanh(ik)
  one = f32[] constant(1)
  bone = f32[4,3] broadcast(one), dimensions={}
  g1 = f32[4,3] add(t, bone)
  xg = f32[4,3] multiply(x, g1)
  half = f32[] constant(0.5)
  bhalf = f32[4,3] broadcast(half), dimensions={}
  gelu = f32[4,3] multiply(xg, bhalf)
  z8 = s8[] constant(0)
  ws = s8[64] broadcast(z8), dimensions={}
  ROOT r = (f32[4,3], f32[4,3], s8[64]) tuple(gelu, x, ws)
}
)");
}

TEST(CublasHandler, F8MatmulScalesSaturationAndDamax) {
  // D = clamp(d_scale * a_scale * b_scale * dot(A, B)) as f8e4m3fn, damax = max|pre-scale D|.
  // Values of 1..4 times scales reach past f8e4m3fn's 448 so the saturation is exercised.
  auto custom = Parse(R"(
HloModule f8
ENTRY e {
  a = f8e4m3fn[2,4] parameter(0)
  b = f8e4m3fn[4,3] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  sc = f32[] parameter(4)
  sd = f32[] parameter(5)
  ROOT g = (f8e4m3fn[2,3], f32[]) custom-call(a, b, sa, sb, sc, sd), custom_call_target="__cublas$lt$matmul$f8", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT","damax_output":true}}
}
)");
  auto plain = Parse(R"(
HloModule plain
mx {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT m = f32[] maximum(p, q)
}
ENTRY e {
  a = f8e4m3fn[2,4] parameter(0)
  b = f8e4m3fn[4,3] parameter(1)
  sa = f32[] parameter(2)
  sb = f32[] parameter(3)
  sc = f32[] parameter(4)
  sd = f32[] parameter(5)
  ca = f32[2,4] convert(a)
  cb = f32[4,3] convert(b)
  d = f32[2,3] dot(ca, cb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[] multiply(sa, sb)
  bs = f32[2,3] broadcast(s), dimensions={}
  x = f32[2,3] multiply(d, bs)
  bsd = f32[2,3] broadcast(sd), dimensions={}
  y = f32[2,3] multiply(x, bsd)
  lo = f32[] constant(-448)
  hi = f32[] constant(448)
  blo = f32[2,3] broadcast(lo), dimensions={}
  bhi = f32[2,3] broadcast(hi), dimensions={}
  c = f32[2,3] clamp(blo, y, bhi)
  ax = f32[2,3] abs(x)
  ninf = f32[] constant(-inf)
  amax = f32[] reduce(ax, ninf), dimensions={0,1}, to_apply=mx
  cv = f8e4m3fn[2,3] convert(c)
  ROOT r = (f8e4m3fn[2,3], f32[]) tuple(cv, amax)
}
)");
  ASSERT_TRUE(custom && plain);
  std::vector<Literal> args;
  args.push_back(Lit("f8e4m3fn[2,4]{1,0} {{1, 2, 3, 4}, {-1, 0.5, 2, -3}}"));
  args.push_back(Lit("f8e4m3fn[4,3]{1,0} {{1, 2, 4}, {2, 1, 0.5}, {3, 3, 3}, {4, -2, 1}}"));
  args.push_back(Lit("f32[] 2"));
  args.push_back(Lit("f32[] 1.5"));
  args.push_back(Lit("f32[] 1"));
  args.push_back(Lit("f32[] 4"));
  auto want = Eval(*plain, args);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = Eval(*custom, args);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, *want);
  // damax is the largest |value| before d_scale: dot 30 * a_scale 2 * b_scale 1.5 = 90.
  ASSERT_TRUE(got->shape().IsTuple());
  EXPECT_EQ(got->tuple_elements()[1], Lit("f32[] 90"));
}

TEST(CublasHandler, F8OutputSaturatesAtTheLargestFinite) {
  auto custom = Parse(R"(
HloModule f8
ENTRY e {
  a = f8e4m3fn[1,2] parameter(0)
  b = f8e4m3fn[2,1] parameter(1)
  one = f32[] constant(1)
  big = f32[] constant(100)
  ROOT g = f8e4m3fn[1,1] custom-call(a, b, one, one, one, big), custom_call_target="__cublas$lt$matmul$f8", backend_config={"gemm_backend_config":{"alpha_real":1,"beta":0,"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],"rhs_batch_dimensions":[]},"epilogue":"DEFAULT"}}
}
)");
  auto r =
      Eval(*custom, {Lit("f8e4m3fn[1,2]{1,0} {{4, 4}}"), Lit("f8e4m3fn[2,1]{1,0} {{4}, {4}}")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, Lit("f8e4m3fn[1,1]{1,0} {{448}}"));  // 32 * 100 = 3200, saturated
}

// --- cuDNN -------------------------------------------------------------------------------------

TEST(CudnnHandler, ForwardWithResultScale) {
  ExpectSameAsPlain(R"(
HloModule conv
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT c = (f32[2,5,5,4], u8[0]) custom-call(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":0.5,"activation_mode":"kNone","side_input_scale":0,"leakyrelu_alpha":0}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  c = f32[2,5,5,4] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  half = f32[] constant(0.5)
  bh = f32[2,5,5,4] broadcast(half), dimensions={}
  s = f32[2,5,5,4] multiply(c, bh)
  ws = u8[0] constant({})
  ROOT r = (f32[2,5,5,4], u8[0]) tuple(s, ws)
}
)");
}

TEST(CudnnHandler, BiasActivationForwardWithSideInputAndRelu) {
  ExpectSameAsPlain(R"(
HloModule conv
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[4,3,3,3] parameter(1)
  bias = f32[4] parameter(2)
  side = f32[2,3,3,4] parameter(3)
  ROOT c = (f32[2,3,3,4], u8[16]) custom-call(x, w, bias, side), window={size=3x3 stride=2x2 pad=1_0x1_0}, dim_labels=b01f_o01i->b01f, custom_call_target="__cudnn$convBiasActivationForward", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":1.5,"activation_mode":"kRelu","side_input_scale":0.25,"leakyrelu_alpha":0}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[2,6,6,3] parameter(0)
  w = f32[4,3,3,3] parameter(1)
  bias = f32[4] parameter(2)
  side = f32[2,3,3,4] parameter(3)
  c = f32[2,3,3,4] convolution(x, w), window={size=3x3 stride=2x2 pad=1_0x1_0}, dim_labels=b01f_o01i->b01f
  k = f32[] constant(1.5)
  bk = f32[2,3,3,4] broadcast(k), dimensions={}
  s = f32[2,3,3,4] multiply(c, bk)
  q = f32[] constant(0.25)
  bq = f32[2,3,3,4] broadcast(q), dimensions={}
  sq = f32[2,3,3,4] multiply(side, bq)
  t = f32[2,3,3,4] add(s, sq)
  bb = f32[2,3,3,4] broadcast(bias), dimensions={3}
  u = f32[2,3,3,4] add(t, bb)
  zero = f32[] constant(0)
  bz = f32[2,3,3,4] broadcast(zero), dimensions={}
  relu = f32[2,3,3,4] maximum(u, bz)
  z8 = u8[] constant(0)
  ws = u8[16] broadcast(z8), dimensions={}
  ROOT r = (f32[2,3,3,4], u8[16]) tuple(relu, ws)
}
)");
}

TEST(CudnnHandler, BackwardInputMatchesXlasCanonicalForm) {
  // Forward: 5x5 input, 3x3 window, stride 2, pad 1 -> 3x3 output. d_input in plain HLO is the
  // convolution of d_output (lhs-dilated by the stride) with the reversed kernel, its i/o swapped.
  ExpectSameAsPlain(R"(
HloModule bwd
ENTRY e {
  dy = f32[2,3,3,4] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  ROOT c = (f32[2,5,5,3], u8[0]) custom-call(dy, w), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardInput", backend_config={"cudnn_conv_backend_config":{"conv_result_scale":1,"activation_mode":"kNone","side_input_scale":0}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  dy = f32[2,3,3,4] parameter(0)
  w = f32[3,3,3,4] parameter(1)
  rw = f32[3,3,3,4] reverse(w), dimensions={0,1}
  dx = f32[2,5,5,3] convolution(dy, rw), window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2}, dim_labels=b01f_01oi->b01f
  ws = u8[0] constant({})
  ROOT r = (f32[2,5,5,3], u8[0]) tuple(dx, ws)
}
)");
}

TEST(CudnnHandler, BackwardFilterMatchesXlasCanonicalForm) {
  ExpectSameAsPlain(R"(
HloModule bwd
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  dy = f32[2,5,5,4] parameter(1)
  ROOT c = (f32[3,3,3,4], u8[0]) custom-call(x, dy), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convBackwardFilter", backend_config={"conv_result_scale":1,"activation_mode":"0","side_input_scale":0}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[2,5,5,3] parameter(0)
  dy = f32[2,5,5,4] parameter(1)
  dw = f32[3,3,3,4] convolution(x, dy), window={size=5x5 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf
  ws = u8[0] constant({})
  ROOT r = (f32[3,3,3,4], u8[0]) tuple(dw, ws)
}
)");
}

double Dot(const Literal& a, const Literal& b) {
  double s = 0;
  for (int64_t i = 0; i < a.element_count(); ++i) {
    s += a.data_as<double>()[i] * b.data_as<double>()[i];
  }
  return s;
}

TEST(CudnnHandler, BackwardKindsAreAdjointsOfTheForwardConvolution) {
  // Strided, dilated, grouped (2 feature groups), asymmetric padding, NCHW-style labels: the
  // adjoint identity pins both backward kinds without restating their formulas.
  const std::string window = "window={size=3x2 stride=2x1 pad=1_2x0_1 rhs_dilate=1x2}";
  const std::string labels = "dim_labels=bf01_oi01->bf01";
  auto fwd = Parse(R"(
HloModule f
ENTRY e {
  x = f64[2,4,7,6] parameter(0)
  w = f64[6,2,3,2] parameter(1)
  ROOT y = f64[2,6,4,5] convolution(x, w), )" +
                   window + ", " + labels +
                   R"(, feature_group_count=2
}
)");
  auto bin = Parse(R"(
HloModule bi
ENTRY e {
  dy = f64[2,6,4,5] parameter(0)
  w = f64[6,2,3,2] parameter(1)
  ROOT dx = (f64[2,4,7,6], u8[0]) custom-call(dy, w), )" +
                   window + ", " + labels +
                   R"(, feature_group_count=2, custom_call_target="__cudnn$convBackwardInput"
}
)");
  auto bfl = Parse(R"(
HloModule bf
ENTRY e {
  x = f64[2,4,7,6] parameter(0)
  dy = f64[2,6,4,5] parameter(1)
  ROOT dw = (f64[6,2,3,2], u8[0]) custom-call(x, dy), )" +
                   window + ", " + labels +
                   R"(, feature_group_count=2, custom_call_target="__cudnn$convBackwardFilter"
}
)");
  ASSERT_TRUE(fwd && bin && bfl);
  FakeDataEngine engine(11);
  auto x = MakeFakeLiteral(Shape::Array(PrimitiveType::kF64, {2, 4, 7, 6}), &engine, {}, false);
  auto w = MakeFakeLiteral(Shape::Array(PrimitiveType::kF64, {6, 2, 3, 2}), &engine, {}, false);
  auto dy = MakeFakeLiteral(Shape::Array(PrimitiveType::kF64, {2, 6, 4, 5}), &engine, {}, false);
  ASSERT_TRUE(x.ok() && w.ok() && dy.ok());
  std::vector<Literal> fa{*x, *w};
  auto y = Eval(*fwd, fa);
  ASSERT_TRUE(y.ok()) << y.status();
  std::vector<Literal> ba{*dy, *w};
  auto dx = Eval(*bin, ba);
  ASSERT_TRUE(dx.ok()) << dx.status();
  std::vector<Literal> fb{*x, *dy};
  auto dw = Eval(*bfl, fb);
  ASSERT_TRUE(dw.ok()) << dw.status();
  const double lhs = Dot(*y, *dy);
  ASSERT_GT(std::fabs(lhs), 1e-6);
  EXPECT_NEAR(Dot(*x, dx->tuple_elements()[0]), lhs, 1e-12 * (1 + std::fabs(lhs)));
  EXPECT_NEAR(Dot(*w, dw->tuple_elements()[0]), lhs, 1e-12 * (1 + std::fabs(lhs)));
}

// --- SPMD markers ------------------------------------------------------------------------------

TEST(SpmdHandler, ShardingIsIdentity) {
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[8,6] parameter(0)
  ROOT s = f32[8,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[8,6] parameter(0)
  ROOT c = f32[8,6] copy(x)
}
)");
}

TEST(SpmdHandler, FullToShardSlicesDeviceZerosTile) {
  // Device 0 owns tile 0 with devices=[2,1]0,1 ...
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[8,6] parameter(0)
  s = f32[8,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]0,1}
  ROOT m = f32[4,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[8,6] parameter(0)
  ROOT sl = f32[4,6] slice(x), slice={[0:4], [0:6]}
}
)");
  // ... and tile 1 with devices=[2,1]1,0.
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[8,6] parameter(0)
  s = f32[8,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]1,0}
  ROOT m = f32[4,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[8,6] parameter(0)
  ROOT sl = f32[4,6] slice(x), slice={[4:8], [0:6]}
}
)");
}

TEST(SpmdHandler, FullToShardPadsAnUnevenLastShard) {
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[7,6] parameter(0)
  s = f32[7,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]<=[2]T(0)}
  ROOT m = f32[4,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[7,6] parameter(0)
  ROOT sl = f32[4,6] slice(x), slice={[0:4], [0:6]}
}
)");
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[7,6] parameter(0)
  s = f32[7,6] custom-call(x), custom_call_target="Sharding", sharding={devices=[2,1]1,0}
  ROOT m = f32[4,6] custom-call(s), custom_call_target="SPMDFullToShardShape", sharding={manual}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[7,6] parameter(0)
  sl = f32[3,6] slice(x), slice={[4:7], [0:6]}
  z = f32[] constant(0)
  ROOT p = f32[4,6] pad(sl, z), padding=0_1x0_0
}
)");
}

TEST(SpmdHandler, ShardToFullPlacesTheShardAtItsOffset) {
  ExpectSameAsPlain(R"(
HloModule s
ENTRY e {
  x = f32[4,6] parameter(0)
  m = f32[4,6] custom-call(x), custom_call_target="Sharding", sharding={manual}
  ROOT f = f32[7,6] custom-call(m), custom_call_target="SPMDShardToFullShape", sharding={devices=[2,1]1,0}
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[4,6] parameter(0)
  sl = f32[3,6] slice(x), slice={[0:3], [0:6]}
  z = f32[] constant(0)
  ROOT p = f32[7,6] pad(sl, z), padding=4_0x0_0
}
)");
}

// --- TopK --------------------------------------------------------------------------------------

TEST(TopKHandler, ComparatorChoosesLargestOrSmallest) {
  ExpectSameAsPlain(R"(
HloModule t
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[3,10] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK", to_apply=gt
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[3,10] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) topk(x), k=4, largest=true
}
)",
                    0, 0);
  ExpectSameAsPlain(R"(
HloModule t
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = f32[3,10] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) custom-call(x), custom_call_target="TopK", to_apply=lt
}
)",
                    R"(
HloModule plain
ENTRY e {
  x = f32[3,10] parameter(0)
  ROOT t = (f32[3,4], s32[3,4]) topk(x), k=4, largest=false
}
)",
                    0, 0);
}

// --- oneDNN ------------------------------------------------------------------------------------

TEST(OneDnnHandler, MatmulTransposedBiasGeluTanh) {
  ExpectSameAsPlain(R"(
HloModule m
ENTRY e {
  a = f32[2,4,8] parameter(0)
  b = f32[6,8] parameter(1)
  bias = f32[6] parameter(2)
  ROOT mm = f32[2,4,6] custom-call(a, b, bias), custom_call_target="__onednn$matmul", backend_config={"outer_dimension_partitions":[],"onednn_matmul_config":{"transpose_a":false,"transpose_b":true,"fused_ops":["BIAS","GELU_TANH"],"bias_broadcast":true}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[2,4,8] parameter(0)
  b = f32[6,8] parameter(1)
  bias = f32[6] parameter(2)
  d = f32[2,4,6] dot(a, b), lhs_contracting_dims={2}, rhs_contracting_dims={1}
  bb = f32[2,4,6] broadcast(bias), dimensions={2}
  x = f32[2,4,6] add(d, bb)
  xx = f32[2,4,6] multiply(x, x)
  x3 = f32[2,4,6] multiply(x, xx)
  k1 = f32[] constant(0.044715)
  bk1 = f32[2,4,6] broadcast(k1), dimensions={}
  x3k = f32[2,4,6] multiply(x3, bk1)
  inner = f32[2,4,6] add(x, x3k)
  k2 = f32[] constant(0.7978845608028654)
  bk2 = f32[2,4,6] broadcast(k2), dimensions={}
  ik = f32[2,4,6] multiply(inner, bk2)
  t = f32[2,4,6] tanh(ik)
  one = f32[] constant(1)
  bone = f32[2,4,6] broadcast(one), dimensions={}
  g1 = f32[2,4,6] add(t, bone)
  xg = f32[2,4,6] multiply(x, g1)
  half = f32[] constant(0.5)
  bhalf = f32[2,4,6] broadcast(half), dimensions={}
  ROOT gelu = f32[2,4,6] multiply(xg, bhalf)
}
)");
}

TEST(OneDnnHandler, MatmulBinaryAddAndLinearFusionsList) {
  // Newer configs: "fusions":{"ops":[...],"alpha_typecast":bits of 2.5f}.
  int32_t bits;
  float alpha = 2.5f;
  std::memcpy(&bits, &alpha, 4);
  ExpectSameAsPlain(R"(
HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  addend = f32[3,4] parameter(2)
  ROOT mm = f32[3,4] custom-call(a, b, addend), custom_call_target="__onednn$matmul", backend_config={"onednn_matmul_config":{"fusions":{"ops":["BINARY_ADD","LINEAR"],"alpha_typecast":)" +
                        std::to_string(bits) + R"(}}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  addend = f32[3,4] parameter(2)
  d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  s = f32[3,4] add(d, addend)
  k = f32[] constant(2.5)
  bk = f32[3,4] broadcast(k), dimensions={}
  ROOT r = f32[3,4] multiply(s, bk)
}
)");
}

TEST(OneDnnHandler, LayerNormOverTheLastDimension) {
  int32_t bits;
  float eps = 1e-5f;
  std::memcpy(&bits, &eps, 4);
  ExpectSameAsPlain(R"(
HloModule ln
ENTRY e {
  x = f32[3,8] parameter(0)
  scale = f32[8] parameter(1)
  shift = f32[8] parameter(2)
  ROOT y = f32[3,8] custom-call(x, scale, shift), custom_call_target="__onednn$layernorm", backend_config={"onednn_layer_norm_config":{"fused_ops":"SCALE_AND_SHIFT","epsilon_typecast":)" +
                        std::to_string(bits) + R"(}}
}
)",
                    R"(
HloModule plain
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
ENTRY e {
  x = f32[3,8] parameter(0)
  scale = f32[8] parameter(1)
  shift = f32[8] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(8)
  bn = f32[3] broadcast(n), dimensions={}
  sum = f32[3] reduce(x, zero), dimensions={1}, to_apply=add
  mean = f32[3] divide(sum, bn)
  bmean = f32[3,8] broadcast(mean), dimensions={0}
  c = f32[3,8] subtract(x, bmean)
  cc = f32[3,8] multiply(c, c)
  sq = f32[3] reduce(cc, zero), dimensions={1}, to_apply=add
  var = f32[3] divide(sq, bn)
  eps = f32[] constant(1e-05)
  beps = f32[3] broadcast(eps), dimensions={}
  ve = f32[3] add(var, beps)
  inv = f32[3] rsqrt(ve)
  binv = f32[3,8] broadcast(inv), dimensions={0}
  norm = f32[3,8] multiply(c, binv)
  bscale = f32[3,8] broadcast(scale), dimensions={1}
  scaled = f32[3,8] multiply(norm, bscale)
  bshift = f32[3,8] broadcast(shift), dimensions={1}
  ROOT y = f32[3,8] add(scaled, bshift)
}
)",
                    1e-4, 1e-4);
}

TEST(OneDnnHandler, SoftmaxAlongTheConfiguredAxis) {
  ExpectSameAsPlain(R"(
HloModule sm
ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT y = f32[4,6] custom-call(x), custom_call_target="__onednn$softmax", backend_config={"onednn_softmax_config":{"softmax_axis":0}}
}
)",
                    R"(
HloModule plain
mx {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] maximum(p, q)
}
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT r = f32[] add(p, q)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[6] reduce(x, ninf), dimensions={0}, to_apply=mx
  bm = f32[4,6] broadcast(m), dimensions={1}
  xm = f32[4,6] subtract(x, bm)
  ex = f32[4,6] exponential(xm)
  s = f32[6] reduce(ex, zero), dimensions={0}, to_apply=add
  bs = f32[4,6] broadcast(s), dimensions={1}
  ROOT y = f32[4,6] divide(ex, bs)
}
)",
                    1e-6, 1e-5);
}

// --- Triton GEMM fusions -----------------------------------------------------------------------

TEST(TritonGemmFusion, RunsThroughItsFusedComputation) {
  ExpectSameAsPlain(R"(
HloModule triton
triton_gemm_dot {
  p0 = f32[16,32] parameter(0)
  p1 = f32[32,8] parameter(1)
  c0 = f32[16,32] convert(p0)
  ROOT d = f32[16,8] dot(c0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[32,8] parameter(1)
  ROOT f = f32[16,8] fusion(a, b), kind=kCustom, calls=triton_gemm_dot, backend_config={"fusion_backend_config":{"kind":"__triton_gemm","triton_gemm_config":{"block_m":"32","block_n":"32","block_k":"32","split_k":"1","num_stages":"1","num_warps":"4","num_ctas":"1"}}}
}
)",
                    R"(
HloModule plain
ENTRY e {
  a = f32[16,32] parameter(0)
  b = f32[32,8] parameter(1)
  ROOT d = f32[16,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)",
                    1e-6, 1e-6);
}

}  // namespace
}  // namespace hlowb
