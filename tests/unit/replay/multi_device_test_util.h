// Helpers for the multi-device replay tests: per-device argument vectors whose values name
// their device, and a runner over a replicas x partitions grid.
#ifndef HLOWB_TESTS_UNIT_REPLAY_MULTI_DEVICE_TEST_UTIL_H_
#define HLOWB_TESTS_UNIT_REPLAY_MULTI_DEVICE_TEST_UTIL_H_

#include <chrono>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "replay/multi_device/multi_device_runner.h"
#include "replay_test_util.h"

namespace hlowb::testing {

// f32[n] on device d: {100 d, 100 d + 1, ...}: the hundreds name the device, the units the
// element.
inline Literal DeviceVector(int64_t d, int64_t n) {
  Literal l(Shape::Array(PrimitiveType::kF32, {n}));
  for (int64_t i = 0; i < n; ++i) l.mutable_data_as<float>()[i] = static_cast<float>(100 * d + i);
  return l;
}

inline std::vector<float> Floats(const Literal& l) {
  return std::vector<float>(l.data_as<float>(), l.data_as<float>() + l.element_count());
}

struct DevicesRun {
  absl::Status status;
  std::vector<Literal> results;
  double seconds = 0;
};

// Runs `text` on a replicas x partitions grid; device d's single argument is f32[n] from
// DeviceVector (or no argument when n == 0).
inline DevicesRun RunOnDevices(const std::string& text, int64_t replicas, int64_t partitions,
                               int64_t n, MultiDeviceOptions options = {}) {
  DevicesRun run;
  auto m = Parse(text);
  if (m == nullptr) {
    run.status = absl::InvalidArgumentError("parse error");
    return run;
  }
  options.grid = DeviceGrid{replicas, partitions};
  std::vector<std::vector<Literal>> args;
  for (int64_t d = 0; d < replicas * partitions; ++d) {
    args.emplace_back();
    if (n > 0) args.back().push_back(DeviceVector(d, n));
  }
  auto start = std::chrono::steady_clock::now();
  auto r = EvaluateOnDevices(*m, args, options);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.ok()) {
    run.status = r.status();
    return run;
  }
  for (DeviceRunResult& d : *r) run.results.push_back(std::move(d.result));
  return run;
}

}  // namespace hlowb::testing

#endif  // HLOWB_TESTS_UNIT_REPLAY_MULTI_DEVICE_TEST_UTIL_H_
