// How the evaluator holds a while loop's state: a body reads the elements of its state in
// place (no copy per get-tuple-element), a tuple takes over the values it is the last reader
// of, and an element of the state that nothing reads afterwards moves into the next state. The memory budget makes the difference observable: a loop carrying a 16 MiB array runs
// within 40 MiB, which a copy per read and per tuple would exceed.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {
namespace {

constexpr int64_t kElements = int64_t{4} << 20;  // 16 MiB of f32

std::string LoopModule() {
  const std::string n = std::to_string(kElements);
  return "HloModule loop\n"
         "cond {\n  p = (s32[], f32[" + n + "]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  k = s32[] constant(3)\n"
         "  ROOT lt = pred[] compare(i, k), direction=LT\n}\n"
         "body {\n  p = (s32[], f32[" + n + "]) parameter(0)\n"
         "  i = s32[] get-tuple-element(p), index=0\n  one = s32[] constant(1)\n"
         "  j = s32[] add(i, one)\n  x = f32[" + n + "] get-tuple-element(p), index=1\n"
         "  ROOT t = (s32[], f32[" + n + "]) tuple(j, x)\n}\n"
         "ENTRY e {\n  x = f32[" + n + "] parameter(0)\n  zero = s32[] constant(0)\n"
         "  init = (s32[], f32[" + n + "]) tuple(zero, x)\n"
         "  w = (s32[], f32[" + n + "]) while(init), condition=cond, body=body\n"
         "  ROOT r = f32[" + n + "] get-tuple-element(w), index=1\n}\n";
}

TEST(LoopState, ABodyReadsItsStateInPlace) {
  auto m = ParseModule(LoopModule());
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {kElements})));
  float* x = args[0].mutable_data_as<float>();
  for (int64_t i = 0; i < kElements; ++i) x[i] = static_cast<float>(i % 1000);
  EvaluatorOptions options;
  options.memory_budget_bytes = uint64_t{40} << 20;
  absl::StatusOr<Literal> r = EvaluateModule(**m, args, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(*r == args[0]);
}

TEST(LoopState, ATupleMovesTheValuesItReadsLastAndCopiesTheRest) {
  // `a` is read again after the tuple, so the tuple copies it; `b` is read last by the tuple and
  // moves in. Both tuples' elements must hold the right values either way.
  auto m = ParseModule(R"(HloModule t
ENTRY e {
  p = f32[3] parameter(0)
  a = f32[3] negate(p)
  b = f32[3] add(p, p)
  t = (f32[3], f32[3], f32[3]) tuple(a, b, a)
  n = f32[3] negate(a)
  g = f32[3] get-tuple-element(t), index=1
  ROOT r = (f32[3], f32[3], (f32[3], f32[3], f32[3])) tuple(n, g, t)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {3})));
  float* p = args[0].mutable_data_as<float>();
  p[0] = 1;
  p[1] = 2;
  p[2] = 3;
  absl::StatusOr<Literal> r = EvaluateModule(**m, args);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& top = r->tuple_elements();
  ASSERT_EQ(top.size(), 3u);
  const auto& t = top[2].tuple_elements();
  ASSERT_EQ(t.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(top[0].data_as<float>()[i], p[i]);         // negate(negate(p))
    EXPECT_EQ(top[1].data_as<float>()[i], 2 * p[i]);     // b through the tuple
    EXPECT_EQ(t[0].data_as<float>()[i], -p[i]);
    EXPECT_EQ(t[1].data_as<float>()[i], 2 * p[i]);
    EXPECT_EQ(t[2].data_as<float>()[i], -p[i]);
  }
}

TEST(LoopState, AnElementReadTwiceIsNotTakenFromTheState) {
  // The body reads element 1 through two get-tuple-elements and puts it in two places of the
  // next state: it may move out of the state only once nothing else reads it, so both places
  // must hold its values after every iteration. Element 2 (read once) moves.
  auto m = ParseModule(R"(HloModule twice
cond {
  p = (s32[], f32[3], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(3)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[3], f32[3], f32[3]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  a = f32[3] get-tuple-element(p), index=1
  b = f32[3] get-tuple-element(p), index=1
  c = f32[3] get-tuple-element(p), index=2
  s = f32[3] add(c, a)
  ROOT t = (s32[], f32[3], f32[3], f32[3]) tuple(j, a, s, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3], f32[3], f32[3]) tuple(zero, x, x, x)
  ROOT w = (s32[], f32[3], f32[3], f32[3]) while(init), condition=cond, body=body
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {3})));
  float* x = args[0].mutable_data_as<float>();
  x[0] = 1;
  x[1] = -2;
  x[2] = 0.5f;
  absl::StatusOr<Literal> r = EvaluateModule(**m, args);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& e = r->tuple_elements();
  ASSERT_EQ(e.size(), 4u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(e[1].data_as<float>()[i], x[i]);
    EXPECT_EQ(e[2].data_as<float>()[i], 4 * x[i]);  // x + 3 x
    EXPECT_EQ(e[3].data_as<float>()[i], x[i]);
  }
}

// A get-tuple-element of a tuple the computation made itself (a while loop's result, a
// generator's (state, bits)) reads the element in place: it shares the tuple's storage, the
// tuple stays until the readers of its elements are done (a get-tuple-element of a
// get-tuple-element, the root among them), and a tuple that an element is read from is copied,
// not taken apart, when another tuple reads it whole.
TEST(LoopState, ElementsOfAComputedTupleAreReadInPlace) {
  auto m = ParseModule(R"(HloModule gte
ENTRY e {
  x = f32[1000] parameter(0)
  y = f32[1000] negate(x)
  inner = (f32[1000], f32[1000]) tuple(x, y)
  outer = ((f32[1000], f32[1000]), f32[1000]) tuple(inner, x)
  a = (f32[1000], f32[1000]) get-tuple-element(outer), index=0
  whole = (((f32[1000], f32[1000]), f32[1000])) tuple(outer)
  b = f32[1000] get-tuple-element(a), index=1
  c = f32[1000] add(b, x)
  d = f32[1000] get-tuple-element(a), index=0
  ROOT r = (f32[1000], f32[1000], f32[1000], (((f32[1000], f32[1000]), f32[1000]))) tuple(c, d, b, whole)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {1000})));
  for (int i = 0; i < 1000; ++i) args[0].mutable_data_as<float>()[i] = 0.5f * static_cast<float>(i);
  const uint8_t* outer_y = nullptr;
  const uint8_t* b_data = nullptr;
  EvaluatorOptions o;
  o.on_instruction = [&](const InstructionEvent& ev) {
    if (ev.instruction->name() == "outer") {
      outer_y = ev.result->tuple_elements()[0].tuple_elements()[1].data().data();
    }
    if (ev.instruction->name() == "b") b_data = ev.result->data().data();
  };
  absl::StatusOr<Literal> r = EvaluateModule(**m, args, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_NE(outer_y, nullptr);
  EXPECT_EQ(b_data, outer_y) << "b copied its element instead of reading it in place";
  const auto& e = r->tuple_elements();
  ASSERT_EQ(e.size(), 4u);
  const auto& w = e[3].tuple_elements()[0];
  for (int i = 0; i < 1000; ++i) {
    const float x = 0.5f * static_cast<float>(i);
    EXPECT_EQ(e[0].data_as<float>()[i], 0.0f);  // -x + x
    EXPECT_EQ(e[1].data_as<float>()[i], x);
    EXPECT_EQ(e[2].data_as<float>()[i], -x);
    EXPECT_EQ(w.tuple_elements()[0].tuple_elements()[0].data_as<float>()[i], x);
    EXPECT_EQ(w.tuple_elements()[0].tuple_elements()[1].data_as<float>()[i], -x);
    EXPECT_EQ(w.tuple_elements()[1].data_as<float>()[i], x);
  }
  // The root itself an element of a computed tuple.
  auto root_gte = ParseModule(R"(HloModule root
ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] negate(x)
  p = (f32[8], f32[8]) tuple(y, x)
  t = (f32[8], (f32[8], f32[8])) tuple(x, p)
  u = (f32[8], f32[8]) get-tuple-element(t), index=1
  ROOT v = f32[8] get-tuple-element(u), index=0
}
)");
  ASSERT_TRUE(root_gte.ok()) << root_gte.status();
  std::vector<Literal> a8;
  a8.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {8})));
  for (int i = 0; i < 8; ++i) a8[0].mutable_data_as<float>()[i] = static_cast<float>(i + 1);
  absl::StatusOr<Literal> v = EvaluateModule(**root_gte, a8);
  ASSERT_TRUE(v.ok()) << v.status();
  ASSERT_EQ(v->shape().dimensions(), std::vector<int64_t>{8});
  for (int i = 0; i < 8; ++i) EXPECT_EQ(v->data_as<float>()[i], -static_cast<float>(i + 1));
}

// A dynamic-update-slice that reads its operand for the last time writes the update into the
// operand's storage, which becomes the result: a loop that fills one row of its state per
// iteration keeps one array for the whole loop (the one its initial state was built in)
// instead of a copy per iteration.
TEST(InPlaceUpdates, ALoopFillsTheRowsOfItsStateInOneArray) {
  auto m = ParseModule(R"(HloModule rows
cond {
  p = (s32[], f32[5,300]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[5,300]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[5,300] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  f = f32[] convert(i)
  row = f32[1,300] broadcast(f), dimensions={}
  zero = s32[] constant(0)
  u = f32[5,300] dynamic-update-slice(acc, row, i, zero)
  ROOT t = (s32[], f32[5,300]) tuple(j, u)
}
ENTRY e {
  x = f32[5,300] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[5,300]) tuple(zero, x)
  w = (s32[], f32[5,300]) while(init), condition=cond, body=body
  ROOT r = f32[5,300] get-tuple-element(w), index=1
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {5, 300})));
  for (int i = 0; i < 1500; ++i) args[0].mutable_data_as<float>()[i] = -1.0f;
  std::vector<const uint8_t*> storage;
  const uint8_t* initial = nullptr;
  EvaluatorOptions o;
  o.on_instruction = [&](const InstructionEvent& ev) {
    if (ev.instruction->name() == "u") storage.push_back(ev.result->data().data());
    if (ev.instruction->name() == "init") initial = ev.result->tuple_elements()[1].data().data();
  };
  absl::StatusOr<Literal> r = EvaluateModule(**m, args, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(storage.size(), 5u);
  // The loop takes its initial state over (nothing reads it afterwards) instead of copying it.
  EXPECT_EQ(storage[0], initial) << "the loop copied its initial state";
  for (size_t k = 1; k < storage.size(); ++k) {
    EXPECT_EQ(storage[k], storage[0]) << "iteration " << k << " copied the array";
  }
  for (int i = 0; i < 1500; ++i) ASSERT_EQ(r->data_as<float>()[i], static_cast<float>(i / 300));
}

// Operands read after the update are not written over: a value read again later, and a loop
// state element that the next state keeps too. The updates still agree with a fresh copy's.
TEST(InPlaceUpdates, AnOperandReadAfterTheUpdateKeepsItsValue) {
  auto m = ParseModule(R"(HloModule later
ENTRY e {
  x = f32[4,3] parameter(0)
  a = f32[4,3] negate(x)
  r = f32[1,3] constant({{7,8,9}})
  i = s32[] constant(2)
  z = s32[] constant(0)
  u = f32[4,3] dynamic-update-slice(a, r, i, z)
  s = f32[4,3] add(a, u)
  big = s32[] constant(10)
  v = f32[4,3] dynamic-update-slice(s, r, big, z)
  ROOT t = (f32[4,3], f32[4,3], f32[4,3]) tuple(a, u, v)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {4, 3})));
  for (int i = 0; i < 12; ++i) args[0].mutable_data_as<float>()[i] = static_cast<float>(i + 1);
  absl::StatusOr<Literal> r = EvaluateModule(**m, args);
  ASSERT_TRUE(r.ok()) << r.status();
  const auto& e = r->tuple_elements();
  for (int i = 0; i < 12; ++i) {
    const float a = -static_cast<float>(i + 1);
    const float u = i / 3 == 2 ? static_cast<float>(7 + i % 3) : a;
    EXPECT_EQ(e[0].data_as<float>()[i], a) << i;
    EXPECT_EQ(e[1].data_as<float>()[i], u) << i;
    // The start 10 is clamped to the last row.
    EXPECT_EQ(e[2].data_as<float>()[i], i / 3 == 3 ? static_cast<float>(7 + i % 3) : a + u) << i;
  }

  auto loop = ParseModule(R"(HloModule kept
cond {
  p = (s32[], f32[5,2], f32[5,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(5)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[5,2], f32[5,2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[5,2] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  row = f32[1,2] constant({{1,1}})
  zero = s32[] constant(0)
  u = f32[5,2] dynamic-update-slice(acc, row, i, zero)
  ROOT t = (s32[], f32[5,2], f32[5,2]) tuple(j, u, acc)
}
ENTRY e {
  x = f32[5,2] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[5,2], f32[5,2]) tuple(zero, x, x)
  ROOT w = (s32[], f32[5,2], f32[5,2]) while(init), condition=cond, body=body
}
)");
  ASSERT_TRUE(loop.ok()) << loop.status();
  std::vector<Literal> zeros;
  zeros.push_back(Literal(Shape::Array(PrimitiveType::kF32, {5, 2})));
  absl::StatusOr<Literal> w = EvaluateModule(**loop, zeros);
  ASSERT_TRUE(w.ok()) << w.status();
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(w->tuple_elements()[1].data_as<float>()[i], 1.0f) << i;
    // The state before the last update: every row but the last.
    EXPECT_EQ(w->tuple_elements()[2].data_as<float>()[i], i < 8 ? 1.0f : 0.0f) << i;
  }
}

// A called computation gets the operands its caller reads for the last time as its own: a
// scan as JAX writes it, with the update inside a call, still updates one array in place, while
// an operand read again after the call, or inside it after the update, keeps its value.
TEST(InPlaceUpdates, ACalledComputationUpdatesWhatItsCallerHandsOver) {
  auto m = ParseModule(R"(HloModule called
update {
  a = f32[4,256] parameter(0)
  v = f32[1,256] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  ROOT u = f32[4,256] dynamic-update-slice(a, v, i, z)
}
update_then_add {
  a = f32[4,256] parameter(0)
  v = f32[1,256] parameter(1)
  i = s32[] parameter(2)
  z = s32[] constant(0)
  u = f32[4,256] dynamic-update-slice(a, v, i, z)
  ROOT s = f32[4,256] add(a, u)
}
cond {
  p = (s32[], f32[4,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(4)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], f32[4,256]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[4,256] get-tuple-element(p), index=1
  f = f32[] convert(i)
  row = f32[1,256] broadcast(f), dimensions={}
  c = f32[4,256] call(acc, row, i), to_apply=update
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT t = (s32[], f32[4,256]) tuple(j, c)
}
ENTRY e {
  x = f32[4,256] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4,256]) tuple(zero, x)
  w = (s32[], f32[4,256]) while(init), condition=cond, body=body
  filled = f32[4,256] get-tuple-element(w), index=1
  y = f32[4,256] negate(x)
  ones = f32[1,256] broadcast(f32[] constant(1)), dimensions={}
  two = s32[] constant(2)
  once = f32[4,256] call(y, ones, two), to_apply=update
  kept = f32[4,256] add(y, once)
  y2 = f32[4,256] negate(x)
  twice = f32[4,256] call(y2, ones, two), to_apply=update_then_add
  ROOT r = (f32[4,256], f32[4,256], f32[4,256], f32[4,256]) tuple(filled, once, kept, twice)
}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  std::vector<Literal> args;
  args.push_back(Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {4, 256})));
  for (int i = 0; i < 1024; ++i) args[0].mutable_data_as<float>()[i] = 10.0f + i;
  std::vector<const uint8_t*> storage;
  EvaluatorOptions o;
  o.on_instruction = [&](const InstructionEvent& ev) {
    if (ev.instruction->name() == "u" && ev.loop_iteration >= 0) {
      storage.push_back(ev.result->data().data());
    }
  };
  absl::StatusOr<Literal> r = EvaluateModule(**m, args, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(storage.size(), 4u);
  for (size_t k = 1; k < storage.size(); ++k) {
    EXPECT_EQ(storage[k], storage[0]) << "iteration " << k << " copied the array";
  }
  const auto& e = r->tuple_elements();
  for (int i = 0; i < 1024; ++i) {
    const float y = -(10.0f + i);
    const float once = i / 256 == 2 ? 1.0f : y;
    ASSERT_EQ(e[0].data_as<float>()[i], static_cast<float>(i / 256)) << i;
    ASSERT_EQ(e[1].data_as<float>()[i], once) << i;
    ASSERT_EQ(e[2].data_as<float>()[i], y + once) << i;
    // Handed over, but read again inside the callee after its update.
    ASSERT_EQ(e[3].data_as<float>()[i], y + once) << i;
  }
}

}  // namespace
}  // namespace hlowb
