// Modules and files shared by the replay tests of the library, the worker and the window
// (no test framework here, so QtTest and gtest files can both include it).
#ifndef HLOWB_TESTS_UNIT_REPLAY_REPLAY_FIXTURES_H_
#define HLOWB_TESTS_UNIT_REPLAY_REPLAY_FIXTURES_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/support/file_util.h"

namespace hlowb::testing {

// A while loop whose body runs three times, an add of a known constant (%s = {2, 4, 6, -8}) and
// a log whose result holds one NaN: for profiles (runs per instruction, NaN counts) and for
// capturing a value.
inline constexpr char kProfiledModule[] = R"(HloModule profiled
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  twice = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(j, twice)
}
ENTRY e {
  a = f32[4] constant({1, 2, 3, -4})
  s = f32[4] add(a, a)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, s)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(loop), index=1
  ROOT l = f32[4] log(r)
}
)";

// A small dump directory for pass bisection: module "m" before optimizations and after four
// passes of pipeline "opt", of which algsimp and layout-assignment keep the numbers and
// bad-math changes them (exp(x) becomes exp(1.5 x)); cse changes nothing.
inline constexpr char kBefore[] = R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  one = f32[] constant(1)
  b1 = f32[8] broadcast(one), dimensions={}
  y = f32[8] multiply(x, b1)
  ROOT r = f32[8] exponential(y)
}
)";
// algsimp: x * 1 -> x. Same numbers.
inline constexpr char kAlgsimp[] = R"(
HloModule m
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = f32[8] exponential(x)
}
)";
// layout assignment: layouts only. Same numbers.
inline constexpr char kLayout[] = R"(
HloModule m
ENTRY e {
  x = f32[8]{0} parameter(0)
  ROOT r = f32[8]{0} exponential(x)
}
)";
// bad-math: exp(x) -> exp(1.5 x). Different numbers.
inline constexpr char kBad[] = R"(
HloModule m
ENTRY e {
  x = f32[8]{0} parameter(0)
  k = f32[] constant(1.5)
  bk = f32[8]{0} broadcast(k), dimensions={}
  y = f32[8]{0} multiply(x, bk)
  ROOT r = f32[8]{0} exponential(y)
}
)";

// Writes the dump into `dir` (created when missing).
inline absl::Status WriteBisectDump(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::vector<std::pair<std::string, const char*>> files = {
      {"module_0001.m.before_optimizations.txt", kBefore},
      {"module_0001.m.0000.opt.after_pipeline-start.before_algsimp.txt", kBefore},
      {"module_0001.m.0001.opt.after_algsimp.before_cse.txt", kAlgsimp},
      {"module_0001.m.0002.opt.after_cse.before_layout-assignment.txt", kAlgsimp},
      {"module_0001.m.0003.opt.after_layout-assignment.before_bad-math.txt", kLayout},
      {"module_0001.m.0004.opt.after_bad-math.before_pipeline-end.txt", kBad},
      {"module_0001.m.after_optimizations.txt", kBad},
  };
  for (const auto& [name, text] : files) {
    if (absl::Status st = WriteStringToFile((fs::path(dir) / name).string(), text); !st.ok()) {
      return st;
    }
  }
  return absl::OkStatus();
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_REPLAY_REPLAY_FIXTURES_H_
