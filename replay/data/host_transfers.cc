#include "replay/data/host_transfers.h"

#include "absl/strings/str_join.h"
#include "core/support/strings.h"
#include "replay/data/fake_data.h"

namespace hlowb {

HostTransferFeeder::HostTransferFeeder(bool fake, uint64_t seed, bool use_large_float_range)
    : fake_(fake), seed_(seed), large_range_(use_large_float_range) {}

HostTransferFeeder::Callback HostTransferFeeder::ForDevice(int64_t device) {
  // Device 0 keeps the single-device seed; other devices mix their index in.
  const uint64_t seed =
      seed_ ^ 0x486f7374u ^ (static_cast<uint64_t>(device) * 0x9E3779B97F4A7C15ull);
  auto engine = std::make_shared<FakeDataEngine>(seed);
  return [this, device, engine, mu = mu_, seen = seen_](
             const Instruction& instr, const Literal* sent) -> absl::StatusOr<Literal> {
    if (sent != nullptr) {
      std::lock_guard<std::mutex> lock(*mu);
      seen->dropped[device].insert(instr.name());
      return Literal();
    }
    {
      std::lock_guard<std::mutex> lock(*mu);
      seen->fed[device].insert(instr.name());
    }
    const Shape& s = instr.shape();
    if (!s.IsTuple() || s.tuple_count() < 1) {
      return absl::InvalidArgumentError(
          StrCat("%", instr.name(), " must return a tuple with its data first"));
    }
    const Shape& data = s.tuple_shape(0);
    if (!fake_) return Literal(data);
    return MakeFakeLiteral(data, engine.get(), FakeValueConstraint{}, large_range_);
  };
}

std::vector<std::string> HostTransferFeeder::Warnings(
    const std::function<std::string(int64_t)>& describe) const {
  std::lock_guard<std::mutex> lock(*mu_);
  auto list = [&](const std::map<int64_t, std::set<std::string>>& by_device) {
    std::vector<std::string> parts;
    for (const auto& [device, names] : by_device) {
      std::string joined = absl::StrJoin(names, ", ");
      parts.push_back(describe ? StrCat(describe(device), ": ", joined) : joined);
    }
    return absl::StrJoin(parts, "; ");
  };
  std::vector<std::string> out;
  if (!seen_->fed.empty()) {
    out.push_back(StrCat("host transfers fed with ", fake_ ? "fake" : "zeros", ": ",
                         list(seen_->fed)));
  }
  if (!seen_->dropped.empty()) {
    out.push_back(StrCat("values sent to the host were dropped: ", list(seen_->dropped)));
  }
  return out;
}

}  // namespace hlowb
