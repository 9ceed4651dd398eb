// The cpu platform's arena runtime (replay/backends/cpu/cpu_arena.h): modules run with every
// value where buffer assignment placed it, loops update their state in place, conditionals and
// calls run over shared buffers, what the kernels do not take (library calls, the interpreter,
// custom calls) reads and writes the arena, and nothing the caller passed is modified. Each run
// is compared with the same executable on the evaluator's driver and with the interpreter.
#include <cstring>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/ir/literal_storage.h"
#include "core/support/cancel.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/backends/cpu/cpu_backend.h"
#include "replay/evaluator/evaluator.h"
#include "replay/multi_device/multi_device_runner.h"
#include "tests/unit/cpu/agreement.h"
#include "tests/unit/evaluator/corpus_inputs.h"

namespace hlowb {
namespace {

using testing::Disagreement;
using testing::Pattern;

std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

std::unique_ptr<CpuExecutable> Compile(const Module& module, bool arena) {
  CpuCompileOptions o;
  o.arena = arena;
  auto exe = CpuExecutable::Compile(module, o);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? std::move(*exe) : nullptr;
}

std::vector<Literal> Arguments(const Module& module) {
  std::vector<Literal> args;
  for (int i = 0; i < module.entry()->parameter_count(); ++i) {
    args.push_back(Pattern(module.entry()->parameter(i)->shape(), i + 3));
  }
  return args;
}

// Runs `module` in the arena, on the driver and on the interpreter: the arena run must equal
// the driver's bit for bit (same kernels) and the interpreter's within tolerance, and leave the
// arguments as they were.
void ExpectArenaAgrees(const Module& module, const std::vector<Literal>& args,
                       const EvaluatorOptions& options = {}) {
  auto arena = Compile(module, true);
  auto driver = Compile(module, false);
  ASSERT_TRUE(arena && driver);
  ASSERT_TRUE(arena->RunsInArena()) << arena->stats().arena_refused;
  EXPECT_FALSE(driver->RunsInArena());
  EXPECT_NE(arena->Summary().find("arena"), std::string::npos) << arena->Summary();
  const std::vector<Literal> before = args;
  auto got = arena->Run(args, options);
  ASSERT_TRUE(got.ok()) << got.status();
  for (size_t k = 0; k < args.size(); ++k) {
    EXPECT_TRUE(args[k] == before[k]) << "argument " << k << " was modified";
  }
  auto on_driver = driver->Run(args, options);
  ASSERT_TRUE(on_driver.ok()) << on_driver.status();
  EXPECT_TRUE(*got == *on_driver) << "arena and driver differ";
  auto want = EvaluateModule(module, args, options);
  ASSERT_TRUE(want.ok()) << want.status();
  std::string d = Disagreement(*want, *got, "result");
  EXPECT_TRUE(d.empty()) << d;
}

constexpr char kScan[] = R"(HloModule scan
body {
  p = (s32[], f32[8,16], f32[16,16], f32[1,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[8,16] get-tuple-element(p), index=1
  w = f32[16,16] get-tuple-element(p), index=2
  x = f32[1,16] get-tuple-element(p), index=3
  y = f32[1,16] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[1,16] tanh(y)
  z = s32[] constant(0)
  acc2 = f32[8,16] dynamic-update-slice(acc, t, i, z)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[8,16], f32[16,16], f32[1,16]) tuple(i2, acc2, w, t)
}
cond {
  p = (s32[], f32[8,16], f32[16,16], f32[1,16]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(8)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  w = f32[16,16] parameter(0)
  x = f32[1,16] parameter(1)
  z = s32[] constant(0)
  zero = f32[] constant(0)
  acc = f32[8,16] broadcast(zero), dimensions={}
  init = (s32[], f32[8,16], f32[16,16], f32[1,16]) tuple(z, acc, w, x)
  loop = (s32[], f32[8,16], f32[16,16], f32[1,16]) while(init), condition=cond, body=body
  ROOT out = f32[8,16] get-tuple-element(loop), index=1
}
)";

TEST(CpuArena, ALoopFillsItsStateInPlaceInTheArena) {
  auto module = Parse(kScan);
  ASSERT_TRUE(module);
  ExpectArenaAgrees(*module, Arguments(*module));

  // Every iteration's update lands in the same arena bytes: the loop state is never copied.
  auto exe = Compile(*module, true);
  ASSERT_TRUE(exe);
  std::set<const void*> places;
  int updates = 0;
  EvaluatorOptions o;
  o.on_instruction = [&](const InstructionEvent& e) {
    if (e.instruction->opcode() == Opcode::kDynamicUpdateSlice ||
        (e.instruction->opcode() == Opcode::kFusion && e.loop_iteration >= 0 &&
         e.result->shape().IsArray() && e.result->shape().dimensions() ==
                                            std::vector<int64_t>{8, 16})) {
      ++updates;
      places.insert(e.result->data().data());
      EXPECT_TRUE(IsExternalLiteralStorage(e.result->data().data()));
    }
  };
  auto got = exe->Run(Arguments(*module), o);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(updates, 8);
  EXPECT_EQ(places.size(), 1u);
}

constexpr char kSwap[] = R"(HloModule swap
body {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[64] get-tuple-element(p), index=1
  b = f32[64] get-tuple-element(p), index=2
  s = f32[64] add(a, b)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT r = (s32[], f32[64], f32[64]) tuple(i2, b, s)
}
cond {
  p = (s32[], f32[64], f32[64]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(7)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  a = f32[64] parameter(0)
  b = f32[64] parameter(1)
  z = s32[] constant(0)
  init = (s32[], f32[64], f32[64]) tuple(z, a, b)
  loop = (s32[], f32[64], f32[64]) while(init), condition=cond, body=body
  x = f32[64] get-tuple-element(loop), index=1
  y = f32[64] get-tuple-element(loop), index=2
  ROOT t = (f32[64], f32[64], f32[64]) tuple(x, y, a)
}
)";

TEST(CpuArena, LoopStateThatMovesBetweenElementsKeepsItsValues) {
  auto module = Parse(kSwap);
  ASSERT_TRUE(module);
  ExpectArenaAgrees(*module, Arguments(*module));
}

constexpr char kBranches[] = R"(HloModule branches
b0 {
  p = f32[256] parameter(0)
  ROOT n = f32[256] negate(p)
}
b1 {
  p = f32[256] parameter(0)
  ROOT e = f32[256] exponential(p)
}
b2 {
  p = f32[256] parameter(0)
  ROOT m = f32[256] multiply(p, p)
}
bt {
  p = f32[256] parameter(0)
  ROOT s = f32[256] sine(p)
}
bf {
  p = f32[256] parameter(0)
  ROOT c = f32[256] cosine(p)
}
sq {
  p = f32[256] parameter(0)
  q = f32[256] parameter(1)
  m = f32[256] multiply(p, q)
  ROOT t = (f32[256], f32[256]) tuple(m, p)
}
ENTRY e {
  k = s32[] parameter(0)
  x = f32[256] parameter(1)
  flag = pred[] parameter(2)
  c = f32[256] conditional(k, x, x, x), branch_computations={b0, b1, b2}
  d = f32[256] conditional(flag, x, c), true_computation=bt, false_computation=bf
  cl = (f32[256], f32[256]) call(c, d), to_apply=sq
  g = f32[256] get-tuple-element(cl), index=0
  ROOT t = (f32[256], f32[256], f32[256]) tuple(c, d, g)
}
)";

TEST(CpuArena, ConditionalsAndCallsRunTheirComputationsOverSharedBuffers) {
  auto module = Parse(kBranches);
  ASSERT_TRUE(module);
  for (int32_t k : {0, 1, 2, 7, -1}) {
    for (bool flag : {true, false}) {
      std::vector<Literal> args = Arguments(*module);
      args[0].mutable_data_as<int32_t>()[0] = k;
      args[2].mutable_data_as<bool>()[0] = flag;
      SCOPED_TRACE(::testing::Message() << "branch index " << k << ", flag " << flag);
      ExpectArenaAgrees(*module, args);
    }
  }
}

TEST(CpuArena, TupleParametersAndTupleConstantsAreReadWhereTheyAre) {
  auto module = Parse(R"(HloModule tuples
body {
  p = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = f32[32] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  d = f32[32] multiply(v, v)
  ROOT r = (s32[], f32[32]) tuple(i2, d)
}
cond {
  p = (s32[], f32[32]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
ENTRY e {
  p = (s32[], f32[32]) parameter(0)
  k = (f32[], s32[]) constant((1.5, 2))
  loop = (s32[], f32[32]) while(p), condition=cond, body=body
  scale = f32[] get-tuple-element(k), index=0
  b = f32[32] broadcast(scale), dimensions={}
  v = f32[32] get-tuple-element(loop), index=1
  m = f32[32] multiply(v, b)
  ROOT t = ((s32[], f32[32]), f32[32], (f32[], s32[])) tuple(loop, m, k)
}
)");
  ASSERT_TRUE(module);
  std::vector<Literal> args = Arguments(*module);
  // Values near 1 so that three squarings stay finite.
  Literal& v = (*args[0].mutable_tuple_elements())[1];
  for (int k = 0; k < 32; ++k) v.mutable_data_as<float>()[k] = 1.0f + 0.01f * static_cast<float>(k);
  (*args[0].mutable_tuple_elements())[0].mutable_data_as<int32_t>()[0] = 0;
  ExpectArenaAgrees(*module, args);
}

TEST(CpuArena, AnOutputThatAliasesAParameterLeavesTheArgumentAlone) {
  auto module = Parse(R"(HloModule alias, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p0 = f32[4096] parameter(0)
  p1 = f32[4096] parameter(1)
  ROOT s = f32[4096] add(p0, p1)
}
)");
  ASSERT_TRUE(module);
  ExpectArenaAgrees(*module, Arguments(*module));
}

TEST(CpuArena, LibraryCallsTheInterpreterAndCustomCallsReadAndWriteTheArena) {
  auto module = Parse(R"(HloModule mixed
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  a = f32[32,48] parameter(0)
  b = f32[48,40] parameter(1)
  i = s32[6,1] parameter(2)
  d = f32[32,40] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  g = f32[32,6] gather(d, i), offset_dims={0}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=1, slice_sizes={32,1}
  s = f32[32,6] sort(g), dimensions={1}, to_apply=lt
  spd = f32[32,32] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  eye = f32[32,32] iota(), iota_dimension=0
  t = f32[32,32] add(spd, eye)
  ch = f32[32,32] cholesky(t), lower=true
  cc = (f32[32,6], f32[6]) custom-call(s), custom_call_target="twice_and_sum"
  ROOT out = (f32[32,6], f32[32,32], (f32[32,6], f32[6])) tuple(s, ch, cc)
}
)");
  ASSERT_TRUE(module);
  std::vector<Literal> args = Arguments(*module);
  for (int k = 0; k < 6; ++k) args[2].mutable_data_as<int32_t>()[k] = (k * 7) % 40;
  int calls = 0;
  EvaluatorOptions o;
  o.custom_call = [&calls](const Instruction& instr, const std::vector<const Literal*>& ops,
                           DeviceCollectives*) -> absl::StatusOr<Literal> {
    ++calls;
    if (instr.attrs_or_default().custom_call_target != "twice_and_sum") {
      return absl::UnimplementedError("unknown target");
    }
    const Literal& x = *ops[0];
    Literal twice = Literal::Uninitialized(instr.shape().tuple_shape(0));
    Literal sums(instr.shape().tuple_shape(1));
    for (int64_t r = 0; r < 32; ++r) {
      for (int64_t c = 0; c < 6; ++c) {
        const float v = x.data_as<float>()[r * 6 + c];
        twice.mutable_data_as<float>()[r * 6 + c] = 2 * v;
        sums.mutable_data_as<float>()[c] += v;
      }
    }
    Literal out(instr.shape(), /*allocate=*/false);
    (*out.mutable_tuple_elements())[0] = std::move(twice);
    (*out.mutable_tuple_elements())[1] = std::move(sums);
    return out;
  };
  ExpectArenaAgrees(*module, args, o);
  EXPECT_EQ(calls, 3);  // arena, driver, interpreter
}

TEST(CpuArena, EachDeviceOfAMultiDeviceRunHasItsOwnArenaAndTheyMeetAtCollectives) {
  auto module = Parse(R"(HloModule ar, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[1024] parameter(0)
  r = u32[] replica-id()
  c = f32[] convert(r)
  b = f32[1024] broadcast(c), dimensions={}
  x = f32[1024] add(p, b)
  s = f32[1024] all-reduce(x), replica_groups={{0,1}}, to_apply=add
  ROOT m = f32[1024] multiply(s, x)
}
)");
  ASSERT_TRUE(module);
  auto exe = Compile(*module, true);
  ASSERT_TRUE(exe && exe->RunsInArena()) << (exe ? exe->stats().arena_refused : "");
  std::vector<std::vector<Literal>> args{Arguments(*module)};
  MultiDeviceOptions on_interpreter;
  on_interpreter.grid.num_replicas = 2;
  MultiDeviceOptions in_arenas = on_interpreter;
  std::set<const void*> arenas;
  std::mutex mu;
  in_arenas.run_module = [&](const std::vector<Literal>& a, const EvaluatorOptions& eo) {
    EXPECT_NE(eo.collectives, nullptr);
    EvaluatorOptions with_events = eo;
    with_events.on_instruction = [&](const InstructionEvent& e) {
      if (e.instruction->opcode() != Opcode::kAllReduce) return;
      EXPECT_TRUE(IsExternalLiteralStorage(e.result->data().data()));
      std::lock_guard<std::mutex> lock(mu);
      arenas.insert(e.result->data().data());
    };
    return exe->Run(a, with_events);
  };
  auto want = EvaluateOnDevices(*module, args, on_interpreter);
  ASSERT_TRUE(want.ok()) << want.status();
  auto got = EvaluateOnDevices(exe->module(), args, in_arenas);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 2u);
  for (int d = 0; d < 2; ++d) {
    std::string diff = Disagreement((*want)[d].result, (*got)[d].result, "device");
    EXPECT_TRUE(diff.empty()) << "device " << d << ": " << diff;
  }
  EXPECT_FALSE((*got)[0].result == (*got)[1].result);  // replica ids differ
  EXPECT_EQ(arenas.size(), 2u);                      // one arena per device
}

TEST(CpuArena, ProgressEventsCancelAndTheMemoryBudget) {
  auto module = Parse(kScan);
  ASSERT_TRUE(module);
  auto exe = Compile(*module, true);
  ASSERT_TRUE(exe && exe->RunsInArena());
  std::vector<Literal> args = Arguments(*module);

  int64_t last_done = -1, last_total = -1;
  int events = 0;
  EvaluatorOptions o;
  o.progress = [&](int64_t done, int64_t total, const std::string&) {
    EXPECT_GT(done, last_done);
    last_done = done;
    last_total = total;
  };
  o.on_instruction = [&](const InstructionEvent&) { ++events; };
  ASSERT_TRUE(exe->Run(args, o).ok());
  EXPECT_EQ(last_done, last_total);
  EXPECT_EQ(last_total, static_cast<int64_t>(exe->module().entry()->instructions().size()));
  EXPECT_GT(events, 8 * 5);  // the body's instructions, every iteration

  CancelToken cancel;
  cancel.Cancel();
  EvaluatorOptions c;
  c.cancel = &cancel;
  auto cancelled = exe->Run(args, c);
  EXPECT_TRUE(absl::IsCancelled(cancelled.status())) << cancelled.status();

  EvaluatorOptions small;
  small.memory_budget_bytes = static_cast<uint64_t>(exe->stats().arena_bytes) - 1;
  auto refused = exe->Run(args, small);
  EXPECT_TRUE(absl::IsResourceExhausted(refused.status())) << refused.status();
  EXPECT_NE(refused.status().message().find("arena"), std::string::npos) << refused.status();

  std::vector<Literal> wrong;
  wrong.push_back(Pattern(Shape::Array(PrimitiveType::kF32, {3}), 0));
  wrong.push_back(Pattern(Shape::Array(PrimitiveType::kF32, {1, 16}), 0));
  auto bad = exe->Run(wrong, {});
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status())) << bad.status();
}

TEST(CpuArena, AModuleAsGivenRunsOnTheDriverAndSaysWhy) {
  auto module = Parse(kScan);
  ASSERT_TRUE(module);
  CpuCompileOptions o;
  o.run_hlo_passes = false;
  auto exe = CpuExecutable::Compile(*module, o);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_FALSE((*exe)->RunsInArena());
  EXPECT_NE((*exe)->Summary().find("runs on the driver"), std::string::npos) << (*exe)->Summary();
  auto got = (*exe)->Run(Arguments(*module), {});
  ASSERT_TRUE(got.ok()) << got.status();
}

}  // namespace
}  // namespace hlowb
