// Helpers shared by the replay tests.
#ifndef HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_

#include <memory>
#include <string>

#include "core/ir/module.h"
#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlowb::testing {

inline std::unique_ptr<Module> Parse(const std::string& text) {
  auto m = ParseModule(text);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? std::move(*m) : nullptr;
}

inline Literal Lit(const std::string& text) {
  auto l = ParseShapedLiteral(text);
  EXPECT_TRUE(l.ok()) << text << ": " << l.status();
  return l.ok() ? std::move(*l) : Literal();
}

// sqrt(2.5 + x - i) inside a fusion inside a while loop that runs i = 0..5 and sums the
// results: with x = 0 the first NaN comes from %s (sqrt) in iteration 3, whose operand %d
// then holds -0.5 everywhere. Used by the NaN/Inf locator's library and command-line tests.
inline constexpr char kLoopNaNModule[] = R"(
HloModule loop_nan
fused_sqrt {
  p0 = f32[4] parameter(0)
  p1 = f32[] parameter(1)
  b = f32[4] broadcast(p1), dimensions={}
  d = f32[4] subtract(p0, b)
  ROOT s = f32[4] sqrt(d)
}
cond {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(6)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  t = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  base = f32[4] get-tuple-element(t), index=1
  acc = f32[4] get-tuple-element(t), index=2
  fi = f32[] convert(i)
  f = f32[4] fusion(base, fi), kind=kLoop, calls=fused_sqrt
  acc2 = f32[4] add(acc, f)
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  ROOT out = (s32[], f32[4], f32[4]) tuple(i2, base, acc2)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  zf = f32[] constant(0)
  acc = f32[4] broadcast(zf), dimensions={}
  c = f32[] constant(2.5)
  bc = f32[4] broadcast(c), dimensions={}
  base = f32[4] add(bc, x)
  init = (s32[], f32[4], f32[4]) tuple(z, base, acc)
  w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=2
}
)";

// infeed and a host recv take host data; outfeed and a host send give it away.
inline constexpr char kHostTransferModule[] = R"(HloModule host
ENTRY e {
  p = f32[3] parameter(0)
  t = token[] after-all()
  in = (f32[3], token[]) infeed(t)
  x = f32[3] get-tuple-element(in), index=0
  r = (f32[3], u32[], token[]) recv(t), channel_id=1, is_host_transfer=true
  rd = (f32[3], token[]) recv-done(r), channel_id=1, is_host_transfer=true
  y = f32[3] get-tuple-element(rd), index=0
  s = (f32[3], u32[], token[]) send(p, t), channel_id=2, is_host_transfer=true
  sd = token[] send-done(s), channel_id=2, is_host_transfer=true
  o = token[] outfeed(p, t), outfeed_shape=f32[3]
  xy = f32[3] add(x, y)
  ROOT sum = f32[3] add(xy, p)
}
)";

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_REPLAY_REPLAY_TEST_UTIL_H_
