#include "core/ir/layout_offsets.h"

#include <cstring>

#include "core/support/strings.h"
#include "absl/strings/str_join.h"

namespace hlowb {
namespace {

// "f32[2,3]{0,1}": the element type, dimensions and minor_to_major, for error messages.
std::string Describe(const Shape& shape) {
  std::string s = StrCat(PrimitiveTypeName(shape.element_type()), "[",
                               absl::StrJoin(shape.dimensions(), ","), "]");
  if (shape.has_layout()) {
    StrAppend(&s, "{", absl::StrJoin(shape.layout().minor_to_major, ","),
                    shape.layout().tiles.empty() ? "" : ":T(...)", "}");
  }
  return s;
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> LayoutMemoryOffsets(const Shape& shape) {
  const int rank = shape.rank();
  std::vector<int64_t> minor_to_major;
  if (shape.has_layout() && !shape.layout().minor_to_major.empty()) {
    if (!shape.layout().tiles.empty()) {
      return absl::InvalidArgumentError(
          StrCat("the tiled layout of ", Describe(shape), " is not supported"));
    }
    minor_to_major = shape.layout().minor_to_major;
  } else {
    for (int d = rank - 1; d >= 0; --d) minor_to_major.push_back(d);
  }
  std::vector<int64_t> stride(rank, 0);
  std::vector<bool> seen(rank, false);
  bool permutation = static_cast<int>(minor_to_major.size()) == rank;
  int64_t step = 1;
  for (size_t k = 0; permutation && k < minor_to_major.size(); ++k) {
    const int64_t d = minor_to_major[k];
    permutation = d >= 0 && d < rank && !seen[d];
    if (!permutation) break;
    seen[d] = true;
    stride[d] = step;
    step *= shape.dimension(static_cast<int>(d));
  }
  if (!permutation) {
    return absl::InvalidArgumentError(StrCat(
        "the layout of ", Describe(shape), " is not a permutation of its dimensions"));
  }
  int64_t count = 1;
  for (int d = 0; d < rank; ++d) count *= shape.dimension(d);
  std::vector<int64_t> offsets(static_cast<size_t>(count));
  std::vector<int64_t> index(rank, 0);
  for (int64_t& offset : offsets) {
    offset = 0;
    for (int d = 0; d < rank; ++d) offset += index[d] * stride[d];
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < shape.dimension(d)) break;
      index[d] = 0;
    }
  }
  return offsets;
}

absl::StatusOr<std::vector<uint8_t>> RelayoutBytes(const uint8_t* src, const Shape& shape,
                                                   int element_bytes, bool to_memory) {
  absl::StatusOr<std::vector<int64_t>> offsets = LayoutMemoryOffsets(shape);
  if (!offsets.ok()) return offsets.status();
  const size_t width = static_cast<size_t>(element_bytes);
  std::vector<uint8_t> out(offsets->size() * width);
  for (size_t i = 0; i < offsets->size(); ++i) {
    const size_t memory = static_cast<size_t>((*offsets)[i]);
    const size_t from = to_memory ? i : memory;
    const size_t to = to_memory ? memory : i;
    std::memcpy(&out[to * width], src + from * width, width);
  }
  return out;
}

}  // namespace hlowb
