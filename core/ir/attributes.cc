#include "core/ir/attributes.h"

#include <cstdint>
#include <vector>

namespace hlowb {

namespace {
// Device lists larger than this are not expanded (a hostile `<=[...]` would otherwise ask for
// an impossible allocation); callers see an empty list.
constexpr int64_t kMaxExpandedDevices = int64_t{1} << 24;

bool Product(const std::vector<int64_t>& dims, int64_t* out) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && p > kMaxExpandedDevices / d)) return false;
    p *= d;
  }
  *out = p;
  return true;
}
}  // namespace

std::vector<int64_t> IotaDeviceList::Expand() const {
  const std::vector<int64_t>& rdims = reshape_dims.empty() ? dims : reshape_dims;
  int64_t total = 0, total_dims = 0;
  if (!Product(rdims, &total) || !Product(dims, &total_dims) || total != total_dims) return {};
  const size_t rank = rdims.size();
  std::vector<int64_t> perm = transpose_perm;
  if (perm.empty()) {
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(i));
  }
  if (perm.size() != rank) return {};
  std::vector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || static_cast<size_t>(p) >= rank || seen[p]) return {};
    seen[p] = true;
  }
  // Strides of the iota array (row-major over rdims), visited in the transposed order.
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * rdims[i];
  std::vector<int64_t> tdims(rank), tstride(rank);
  for (size_t i = 0; i < rank; ++i) {
    tdims[i] = rdims[perm[i]];
    tstride[i] = stride[perm[i]];
  }
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(total));
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < total; ++n) {
    int64_t value = 0;
    for (size_t i = 0; i < rank; ++i) value += index[i] * tstride[i];
    out.push_back(value);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < tdims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expanded() const {
  if (!iota) return groups;
  std::vector<int64_t> flat = iota->Expand();
  if (flat.empty()) return {};
  const int64_t size = iota->dims.size() >= 2 ? iota->dims.back() : static_cast<int64_t>(flat.size());
  std::vector<std::vector<int64_t>> out;
  if (size <= 0) return out;
  for (size_t i = 0; i < flat.size(); i += static_cast<size_t>(size)) {
    out.emplace_back(flat.begin() + static_cast<std::ptrdiff_t>(i),
                     flat.begin() + static_cast<std::ptrdiff_t>(i + static_cast<size_t>(size)));
  }
  return out;
}

}  // namespace hlowb
