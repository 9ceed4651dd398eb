// The custom-call registry: which handler computes a custom-call target on the host, keyed by
// (target, platform), and the dispatcher the replay installs as EvaluatorOptions::custom_call
// (or ReplayOptions::custom_call). Handlers are plain functions from the instruction and its
// operand values to the result; plugins add them through an explicit Register...(registry)
// call (see plugins/builtin/builtin_plugins.h), never through static initialisers, so what a
// binary can replay is visible at the call site.
//
// Platforms are the platform a module was compiled for, normalised to "gpu" (cuda, rocm, gpu)
// or "cpu" (cpu, host); "" registers a handler for every platform. A lookup tries the exact
// platform, then "", then — when the caller does not know the platform — any handler of the
// target.
//
// The dispatcher turns a missing handler into a clear error naming the target and the
// instruction, or, on request, into zeros or the value a snapshot recorded for that
// instruction, so the rest of a module still replays; it notes every such substitution.
//
// Not here: the handlers themselves (plugins/<name>/), compiled backends, and any attempt to
// run the vendor libraries (cuBLAS, cuDNN, oneDNN) — handlers compute the documented math.
#ifndef HLOWB_PLUGINS_API_CUSTOM_CALL_REGISTRY_H_
#define HLOWB_PLUGINS_API_CUSTOM_CALL_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/module.h"
#include "replay/evaluator/evaluator.h"

namespace hlowb {

// Computes one custom-call instruction from its operand values.
using CustomCallFn =
    std::function<absl::StatusOr<Literal>(const Instruction&, const std::vector<const Literal*>&)>;

// Computes one custom-call instruction on one device of a multi-device run, for targets whose
// value depends on the device or on the other devices' values.
using DeviceCustomCallFn = std::function<absl::StatusOr<Literal>(
    const Instruction&, const std::vector<const Literal*>&, DeviceCollectives&)>;

struct CustomCallHandlerInfo {
  std::string target;    // custom_call_target, e.g. "__cublas$gemm"
  std::string platform;  // "gpu", "cpu", or "" for every platform
  std::string plugin;    // the plugin that registered it, e.g. "cublas"
  std::string summary;   // one line on what it computes
  CustomCallFn handler;  // on one device, and on every device when device_handler is unset
  DeviceCustomCallFn device_handler;  // optional: used instead on a multi-device run
};

// "cuda"/"rocm"/"gpu" -> "gpu", "cpu"/"host" -> "cpu"; "interpreter", "reference" and "" -> "".
std::string NormalizeCustomCallPlatform(std::string_view platform);

class CustomCallRegistry {
 public:
  // InvalidArgument for an empty target or a missing handler; AlreadyExists when the
  // (target, platform) pair is taken.
  absl::Status Register(CustomCallHandlerInfo info);
  // Registers `info` in place of every handler of its target (on any platform): a user's own
  // handler library wins over the built-in plugins. Same argument checks as Register.
  absl::Status Override(CustomCallHandlerInfo info);
  // The handler for `target` on `platform` (any spelling NormalizeCustomCallPlatform takes).
  const CustomCallHandlerInfo* Find(std::string_view target, std::string_view platform) const;
  // Every handler, sorted by target then platform.
  std::vector<const CustomCallHandlerInfo*> Handlers() const;
  bool empty() const { return handlers_.empty(); }

 private:
  std::map<std::pair<std::string, std::string>, CustomCallHandlerInfo> handlers_;
};

// What to do with a custom call that has no handler.
enum class CustomCallFallback {
  kError,     // stop with an error naming the target and the instruction
  kZeros,     // zeros of the result shape
  kSnapshot,  // the recorded value when there is one, zeros otherwise
};
// "error", "zeros", "snapshot".
absl::StatusOr<CustomCallFallback> ParseCustomCallFallback(std::string_view name);

struct CustomCallDispatchOptions {
  std::string platform;  // the module's compile platform; "" = unknown
  CustomCallFallback fallback = CustomCallFallback::kError;
  // Recorded values by instruction name, for kSnapshot.
  std::map<std::string, Literal> known_outputs;
};

// The custom-call values a recorded module result reveals: the entry root when it is a custom
// call, and the elements of a root tuple that are custom calls.
std::map<std::string, Literal> CustomCallOutputsFromResult(const Module& module,
                                                           const Literal& result);

// Thread-safe; shared by the hook it hands out, so it can outlive the caller's scope.
class CustomCallDispatcher : public std::enable_shared_from_this<CustomCallDispatcher> {
 public:
  static std::shared_ptr<CustomCallDispatcher> Create(CustomCallRegistry registry,
                                                      CustomCallDispatchOptions options);

  // `device`: this device's view of a multi-device run, null on one device.
  absl::StatusOr<Literal> Call(const Instruction& instr, const std::vector<const Literal*>& ops,
                               DeviceCollectives* device = nullptr);
  // A function for EvaluatorOptions::custom_call that keeps this dispatcher alive.
  CustomCallHook AsFunction();
  // One line per instruction that took a fallback, sorted; stable across runs.
  std::vector<std::string> Notes() const;

 private:
  CustomCallDispatcher(CustomCallRegistry registry, CustomCallDispatchOptions options)
      : registry_(std::move(registry)), options_(std::move(options)) {}

  CustomCallRegistry registry_;
  CustomCallDispatchOptions options_;
  mutable std::mutex mu_;
  std::set<std::string> notes_;
};

}  // namespace hlowb

#endif  // HLOWB_PLUGINS_API_CUSTOM_CALL_REGISTRY_H_
