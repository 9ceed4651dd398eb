#include "core/ir/attributes.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

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

std::string MeshReplicaGroups::Validate() const {
  using absl::StrCat;
  if (axis_names.empty()) return "the mesh needs at least one axis";
  if (axis_names.size() != axis_sizes.size()) return "mesh axis names and sizes differ in number";
  int64_t total = 0;
  for (int64_t s : axis_sizes) {
    if (s <= 0) return StrCat("mesh axis sizes must be positive, not ", s);
  }
  if (!Product(axis_sizes, &total)) return "the mesh has too many devices";
  for (size_t i = 0; i < axis_names.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (axis_names[i] == axis_names[j]) return StrCat("mesh axis '", axis_names[i], "' is repeated");
    }
  }
  if (device_iota) {
    if (device_iota->dims != axis_sizes || device_iota->Expand().empty()) {
      return "the mesh's iota device list does not match the mesh axis sizes";
    }
  } else if (!device_ids.empty()) {
    if (static_cast<int64_t>(device_ids.size()) != total) {
      return StrCat("the mesh lists ", device_ids.size(), " devices but its axes hold ", total);
    }
    std::vector<int64_t> sorted = device_ids;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < total; ++i) {
      if (sorted[static_cast<size_t>(i)] != i) {
        return StrCat("the mesh's device ids must be a permutation of 0..", total - 1);
      }
    }
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    const MeshAxisRef& r = axes[i];
    if (r.axis < 0 || r.axis >= static_cast<int64_t>(axis_sizes.size())) {
      return StrCat("axis index ", r.axis, " is out of range for a mesh of ", axis_sizes.size(),
                    " axes");
    }
    const int64_t full = axis_sizes[static_cast<size_t>(r.axis)];
    const std::string& name = axis_names[static_cast<size_t>(r.axis)];
    if (r.has_sub()) {
      if (r.size <= 1) return StrCat("sub-axis of '", name, "' must have a size above 1");
      if (r.pre_size > full || r.size > full || full % r.pre_size != 0 ||
          (full / r.pre_size) % r.size != 0) {
        return StrCat("sub-axis ", name, ":(", r.pre_size, ")", r.size,
                      " does not divide the axis size ", full);
      }
      if (r.size >= full) {
        return StrCat("sub-axis ", name, ":(", r.pre_size, ")", r.size,
                      " must be smaller than the axis size ", full);
      }
    }
    for (size_t j = 0; j < i; ++j) {
      const MeshAxisRef& o = axes[j];
      if (o.axis != r.axis) continue;
      if (!r.has_sub() || !o.has_sub()) return StrCat("mesh axis '", name, "' is used twice");
      const int64_t r_next = r.pre_size * r.size, o_next = o.pre_size * o.size;
      if (r_next > o.pre_size && o_next > r.pre_size) {
        return StrCat("sub-axes of '", name, "' overlap");
      }
      if (std::max(r.pre_size, o.pre_size) % std::min(r_next, o_next) != 0) {
        return StrCat("sub-axes of '", name, "' cannot coexist");
      }
    }
    if (i > 0 && axes[i - 1].axis == r.axis && r.has_sub() && axes[i - 1].has_sub() &&
        axes[i - 1].pre_size * axes[i - 1].size == r.pre_size) {
      return StrCat("adjacent sub-axes of '", name, "' should be written merged");
    }
  }
  return "";
}

std::vector<int64_t> MeshReplicaGroups::Devices() const {
  int64_t total = 0;
  if (!Product(axis_sizes, &total)) return {};
  if (device_iota) return device_iota->Expand();
  if (!device_ids.empty()) return device_ids;
  std::vector<int64_t> out(static_cast<size_t>(total));
  std::iota(out.begin(), out.end(), int64_t{0});
  return out;
}

std::vector<std::vector<int64_t>> MeshReplicaGroups::Expanded() const {
  if (!Validate().empty()) return {};
  std::vector<int64_t> devices = Devices();
  if (devices.empty()) return {};
  // Split every mesh axis into the pieces its axis refs name (plus the pieces between and
  // around them), remembering which split dimension each ref became.
  std::vector<int64_t> dims;
  std::vector<int64_t> ref_dim(axes.size(), -1);
  int64_t group_size = 1;
  for (size_t m = 0; m < axis_sizes.size(); ++m) {
    const int64_t full = axis_sizes[m];
    std::vector<size_t> refs;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (axes[i].axis == static_cast<int64_t>(m)) refs.push_back(i);
    }
    if (refs.empty()) {
      dims.push_back(full);
      continue;
    }
    if (refs.size() == 1 && !axes[refs[0]].has_sub()) {
      ref_dim[refs[0]] = static_cast<int64_t>(dims.size());
      dims.push_back(full);
      group_size *= full;
      continue;
    }
    std::sort(refs.begin(), refs.end(),
              [&](size_t a, size_t b) { return axes[a].pre_size < axes[b].pre_size; });
    int64_t covered = 1;
    for (size_t i : refs) {
      if (axes[i].pre_size != covered) {
        dims.push_back(axes[i].pre_size / covered);
        covered = axes[i].pre_size;
      }
      ref_dim[i] = static_cast<int64_t>(dims.size());
      dims.push_back(axes[i].size);
      covered *= axes[i].size;
      group_size *= axes[i].size;
    }
    if (covered != full) dims.push_back(full / covered);
  }
  // Ungrouped dimensions first, in order, then the grouped ones in the order the refs are
  // written; the transposed array read in row-major order is the groups one after another.
  std::vector<int64_t> perm;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (std::find(ref_dim.begin(), ref_dim.end(), static_cast<int64_t>(d)) == ref_dim.end()) {
      perm.push_back(static_cast<int64_t>(d));
    }
  }
  for (int64_t d : ref_dim) perm.push_back(d);
  const size_t rank = dims.size();
  std::vector<int64_t> stride(rank, 1);
  for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * dims[i];
  std::vector<int64_t> index(rank, 0);
  std::vector<int64_t> order;
  order.reserve(devices.size());
  for (size_t n = 0; n < devices.size(); ++n) {
    int64_t offset = 0;
    for (size_t i = 0; i < rank; ++i) offset += index[i] * stride[static_cast<size_t>(perm[i])];
    order.push_back(devices[static_cast<size_t>(offset)]);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < dims[static_cast<size_t>(perm[i])]) break;
      index[i] = 0;
    }
  }
  std::vector<std::vector<int64_t>> out;
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(group_size)) {
    out.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                     order.begin() + static_cast<std::ptrdiff_t>(i + static_cast<size_t>(group_size)));
  }
  return out;
}

std::vector<std::vector<int64_t>> ReplicaGroups::Expanded() const {
  if (mesh) return mesh->Expanded();
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
