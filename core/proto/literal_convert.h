// Conversion of shapes, layouts and literals between the IR and XLA's ShapeProto / LiteralProto
// (hlo-format.md §4.2). Literal data is reordered between the IR's row-major storage and the
// proto's physical (layout) order, and packed the way XLA packs it: one byte per element for
// 8-bit and sub-byte types (value in the low bits), two little-endian bytes for 16-bit types,
// interleaved real/imaginary parts for complex types, NaN payloads and all other bits kept.
//
// Reading validates everything a hostile or corrupted proto could get wrong (element types,
// ranks, negative or overflowing dimensions, data counts that do not match the shape) and
// returns InvalidArgument saying what is wrong; it never allocates more than the proto's own
// data justifies. It does not check HLO semantics; that is the verifier's job.
#ifndef HLOWB_CORE_PROTO_LITERAL_CONVERT_H_
#define HLOWB_CORE_PROTO_LITERAL_CONVERT_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/literal.h"
#include "core/ir/shape.h"

namespace xla {
class LayoutProto;
class LiteralProto;
class ShapeProto;
}  // namespace xla

namespace hlowb {

// Bounds on what a proto may make the reader build. They bound allocation and recursion only;
// data that fits is still checked against its shape.
struct ProtoLimits {
  // Elements of one array shape (bounded dynamic dimensions count at their bound). 2^39 is far
  // beyond any device's memory even before partitioning; raise it for exotic global shapes.
  int64_t max_shape_elements = int64_t{1} << 39;
  int max_rank = 256;
  // Tuple and physical-shape nesting.
  int max_shape_depth = 100;
};

void ShapeToProto(const Shape& shape, xla::ShapeProto* proto);
void LayoutToProto(const Layout& layout, xla::LayoutProto* proto);
absl::StatusOr<Shape> ShapeFromProto(const xla::ShapeProto& proto, const ProtoLimits& limits = {});

// Writes `literal` (which must not be elided). With add_default_layout, array shapes without a
// layout get the default one, which XLA requires of LiteralProto; the data order follows the
// written layout.
absl::Status LiteralToProto(const Literal& literal, xla::LiteralProto* proto,
                            bool add_default_layout = true);
// Reads a literal; a shape without a layout is taken as row-major. Dynamic shapes are refused.
absl::StatusOr<Literal> LiteralFromProto(const xla::LiteralProto& proto,
                                         const ProtoLimits& limits = {});

}  // namespace hlowb

#endif  // HLOWB_CORE_PROTO_LITERAL_CONVERT_H_
