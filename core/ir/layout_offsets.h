// Where each element of an array lives in memory under its shape's layout: the bridge between
// the row-major storage of our literals and code that reads or writes memory in a layout's
// physical order (XLA FFI handlers, LAPACK calls, device buffers).
#ifndef HLOWB_CORE_IR_LAYOUT_OFFSETS_H_
#define HLOWB_CORE_IR_LAYOUT_OFFSETS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/shape.h"

namespace hlowb {

// For every element of an array of `shape`, in row-major (logical) order, its element offset in
// memory under the shape's minor_to_major layout; the default (row-major) layout when the shape
// has none or an empty one. InvalidArgument, naming the shape, for a layout that is not a
// permutation of the dimensions, and for tiled layouts (which these offsets cannot express).
absl::StatusOr<std::vector<int64_t>> LayoutMemoryOffsets(const Shape& shape);

// Reorders `element_bytes`-wide elements between row-major order and `shape`'s memory order:
// to_memory copies logical element i to memory offset LayoutMemoryOffsets(shape)[i], and the
// reverse gathers them back. `src` holds the shape's element count of elements.
absl::StatusOr<std::vector<uint8_t>> RelayoutBytes(const uint8_t* src, const Shape& shape,
                                                   int element_bytes, bool to_memory);

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_LAYOUT_OFFSETS_H_
