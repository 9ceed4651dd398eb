#include "plugins/api/custom_call_registry.h"

#include "core/support/strings.h"
#include "core/text/printer.h"

namespace hlowb {
namespace {

std::string Ref(const Instruction& instr) { return StrCat("%", instr.name()); }

const std::string& TargetOf(const Instruction& instr) {
  return instr.attrs_or_default().custom_call_target;
}

bool IsCustomCall(const Instruction* instr) {
  return instr != nullptr && instr->opcode() == Opcode::kCustomCall;
}

}  // namespace

std::string NormalizeCustomCallPlatform(std::string_view platform) {
  if (platform == "cuda" || platform == "rocm" || platform == "gpu" || platform == "CUDA" ||
      platform == "ROCM") {
    return "gpu";
  }
  if (platform == "cpu" || platform == "host" || platform == "Host" || platform == "CPU") {
    return "cpu";
  }
  return "";
}

absl::Status CustomCallRegistry::Register(CustomCallHandlerInfo info) {
  if (info.target.empty()) {
    return absl::InvalidArgumentError("custom-call handler registered without a target");
  }
  if (!info.handler) {
    return absl::InvalidArgumentError(
        StrCat("custom-call handler for \"", info.target, "\" has no function"));
  }
  info.platform = NormalizeCustomCallPlatform(info.platform);
  auto key = std::make_pair(info.target, info.platform);
  if (handlers_.count(key) > 0) {
    return absl::AlreadyExistsError(
        StrCat("a handler for custom-call target \"", info.target, "\" on platform \"",
               info.platform.empty() ? "any" : info.platform, "\" is already registered (by ",
               handlers_.at(key).plugin, ")"));
  }
  handlers_.emplace(std::move(key), std::move(info));
  return absl::OkStatus();
}

absl::Status CustomCallRegistry::Override(CustomCallHandlerInfo info) {
  for (auto it = handlers_.lower_bound({info.target, ""});
       it != handlers_.end() && it->first.first == info.target;) {
    it = handlers_.erase(it);
  }
  return Register(std::move(info));
}

const CustomCallHandlerInfo* CustomCallRegistry::Find(std::string_view target,
                                                      std::string_view platform) const {
  std::string t(target);
  std::string p = NormalizeCustomCallPlatform(platform);
  if (auto it = handlers_.find({t, p}); it != handlers_.end()) return &it->second;
  if (auto it = handlers_.find({t, ""}); it != handlers_.end()) return &it->second;
  if (p.empty()) {
    // Platform unknown: any handler of the target (the map is sorted, so this is stable).
    auto it = handlers_.lower_bound({t, ""});
    if (it != handlers_.end() && it->first.first == t) return &it->second;
  }
  return nullptr;
}

std::vector<const CustomCallHandlerInfo*> CustomCallRegistry::Handlers() const {
  std::vector<const CustomCallHandlerInfo*> out;
  for (const auto& [key, info] : handlers_) out.push_back(&info);
  return out;
}

absl::StatusOr<CustomCallFallback> ParseCustomCallFallback(std::string_view name) {
  if (name == "error") return CustomCallFallback::kError;
  if (name == "zeros") return CustomCallFallback::kZeros;
  if (name == "snapshot") return CustomCallFallback::kSnapshot;
  return absl::InvalidArgumentError(
      StrCat("unknown custom-call fallback '", name, "' (expected error, zeros or snapshot)"));
}

std::map<std::string, Literal> CustomCallOutputsFromResult(const Module& module,
                                                           const Literal& result) {
  std::map<std::string, Literal> out;
  const Computation* entry = module.entry();
  if (entry == nullptr || entry->root() == nullptr) return out;
  const Instruction* root = entry->root();
  if (IsCustomCall(root)) {
    if (result.shape().Compatible(root->shape())) out.emplace(root->name(), result);
    return out;
  }
  if (root->opcode() != Opcode::kTuple || !result.shape().IsTuple() ||
      result.tuple_elements().size() != static_cast<size_t>(root->operand_count())) {
    return out;
  }
  for (int i = 0; i < root->operand_count(); ++i) {
    const Instruction* op = root->operand(i);
    const Literal& value = result.tuple_elements()[i];
    if (IsCustomCall(op)) {
      if (value.shape().Compatible(op->shape())) out.emplace(op->name(), value);
    }
  }
  return out;
}

std::shared_ptr<CustomCallDispatcher> CustomCallDispatcher::Create(
    CustomCallRegistry registry, CustomCallDispatchOptions options) {
  return std::shared_ptr<CustomCallDispatcher>(
      new CustomCallDispatcher(std::move(registry), std::move(options)));
}

absl::StatusOr<Literal> CustomCallDispatcher::Call(const Instruction& instr,
                                                   const std::vector<const Literal*>& ops,
                                                   DeviceCollectives* device) {
  const std::string& target = TargetOf(instr);
  if (const CustomCallHandlerInfo* h = registry_.Find(target, options_.platform)) {
    absl::StatusOr<Literal> r = device != nullptr && h->device_handler
                                    ? h->device_handler(instr, ops, *device)
                                    : h->handler(instr, ops);
    if (!r.ok()) {
      std::string msg(r.status().message());
      if (msg.find(Ref(instr)) != std::string::npos) return r.status();
      return absl::Status(r.status().code(), StrCat("custom-call ", Ref(instr), " (target \"",
                                                    target, "\", ", h->plugin, " plugin): ", msg));
    }
    if (!r->shape().Compatible(instr.shape())) {
      return absl::InvalidArgumentError(
          StrCat("custom-call ", Ref(instr), " (target \"", target, "\"): the ", h->plugin,
                 " handler computed ", PrintShape(r->shape(), false),
                 " but the instruction declares ", PrintShape(instr.shape(), false)));
    }
    return r;
  }
  switch (options_.fallback) {
    case CustomCallFallback::kError: {
      std::string known;
      std::set<std::string> targets;
      for (const CustomCallHandlerInfo* h : registry_.Handlers()) targets.insert(h->target);
      for (const std::string& t : targets) StrAppend(&known, known.empty() ? "" : ", ", t);
      return absl::UnimplementedError(StrCat(
          "custom-call ", Ref(instr), " has target \"", target, "\", which no handler computes",
          options_.platform.empty() ? "" : StrCat(" on platform ", options_.platform),
          " (handled targets: ", known.empty() ? "none" : known,
          "); rerun with --custom_call_fallback=zeros to feed zeros, or =snapshot to take its "
          "value from the snapshot, so the rest of the module replays"));
    }
    case CustomCallFallback::kSnapshot: {
      auto it = options_.known_outputs.find(instr.name());
      if (it != options_.known_outputs.end() && it->second.shape().Compatible(instr.shape())) {
        std::lock_guard<std::mutex> lock(mu_);
        notes_.insert(StrCat("custom-call ", Ref(instr), " (target \"", target,
                             "\"): no handler; used the value recorded in the snapshot"));
        return it->second;
      }
      std::lock_guard<std::mutex> lock(mu_);
      notes_.insert(StrCat("custom-call ", Ref(instr), " (target \"", target,
                           "\"): no handler and no recorded value; replayed with zeros"));
      return Literal(instr.shape());
    }
    case CustomCallFallback::kZeros: {
      std::lock_guard<std::mutex> lock(mu_);
      notes_.insert(StrCat("custom-call ", Ref(instr), " (target \"", target,
                           "\"): no handler; replayed with zeros"));
      return Literal(instr.shape());
    }
  }
  return absl::InternalError("unreachable custom-call fallback");
}

CustomCallHook CustomCallDispatcher::AsFunction() {
  std::shared_ptr<CustomCallDispatcher> self = shared_from_this();
  return [self](const Instruction& instr, const std::vector<const Literal*>& ops,
                DeviceCollectives* device) { return self->Call(instr, ops, device); };
}

std::vector<std::string> CustomCallDispatcher::Notes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::vector<std::string>(notes_.begin(), notes_.end());
}

}  // namespace hlowb
