// A small dump directory for pass-bisection tests: module "m" before optimizations and after
// four passes of pipeline "opt", of which algsimp and layout-assignment keep the numbers and
// bad-math changes them (exp(x) becomes exp(1.5 x)); cse changes nothing.
#ifndef HLOWB_TESTS_UNIT_REPLAY_BISECT_DUMP_FIXTURE_H_
#define HLOWB_TESTS_UNIT_REPLAY_BISECT_DUMP_FIXTURE_H_

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/support/file_util.h"

namespace hlowb::testing {

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

#endif  // HLOWB_TESTS_UNIT_REPLAY_BISECT_DUMP_FIXTURE_H_
