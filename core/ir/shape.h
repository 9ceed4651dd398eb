// Shapes and layouts of HLO values: arrays (with static, bounded-dynamic `<=N` and unbounded
// `?` dimensions), tuples, tokens, opaque values and buffers, plus every layout suffix XLA
// prints. Shapes are plain values; modules intern them (see ShapeTable) so that thousands of
// instructions with the same shape share one object. Printing and parsing live in core/text.
#ifndef HLOWB_CORE_IR_SHAPE_H_
#define HLOWB_CORE_IR_SHAPE_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/primitive_type.h"

namespace hlowb {

class Shape;

// A tile in a tiled layout. kCombineDimension marks a `*` entry.
struct Tile {
  static constexpr int64_t kCombineDimension = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> dimensions;
  bool operator==(const Tile&) const = default;
};

enum class DimLevelType : uint8_t { kDense, kCompressed, kSingleton, kLooseCompressed };

struct DimLevel {
  DimLevelType type = DimLevelType::kDense;
  bool unique = true;   // printed `+` when false
  bool ordered = true;  // printed `~` when false
  bool operator==(const DimLevel&) const = default;
};

struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig&) const = default;
};

struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<DimLevel> dim_levels;
  std::vector<Tile> tiles;
  int64_t tail_padding_alignment_in_elements = 1;
  PrimitiveType index_primitive_type = PrimitiveType::kInvalid;
  PrimitiveType pointer_primitive_type = PrimitiveType::kInvalid;
  int64_t element_size_in_bits = 0;
  int64_t memory_space = 0;
  std::vector<SplitConfig> split_configs;
  std::shared_ptr<const Shape> physical_shape;  // sparse arrays only
  int64_t dynamic_shape_metadata_prefix_bytes = 0;

  bool operator==(const Layout& other) const;
  // True when nothing but minor_to_major is set.
  bool HasOnlyMinorToMajor() const;
};

class Shape {
 public:
  // Dimension size used for an unbounded dynamic dimension (`?`).
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  Shape() = default;
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token() { return Shape(PrimitiveType::kToken); }
  static Shape Opaque() { return Shape(PrimitiveType::kOpaque); }
  static Shape Buffer(Shape array);

  PrimitiveType element_type() const { return element_type_; }
  void set_element_type(PrimitiveType t) { element_type_ = t; }

  bool IsArray() const { return IsArrayType(element_type_); }
  bool IsTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type_ == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type_ == PrimitiveType::kOpaque; }
  bool IsBuffer() const { return element_type_ == PrimitiveType::kBuffer; }

  int rank() const { return static_cast<int>(dims_.size()); }
  const std::vector<int64_t>& dimensions() const { return dims_; }
  int64_t dimension(int i) const { return dims_[i]; }
  std::vector<int64_t>* mutable_dimensions() { return &dims_; }
  void add_dimension(int64_t size, bool dynamic = false);
  // Bounded (`<=N`) and unbounded (`?`) dimensions are dynamic.
  bool is_dynamic_dimension(int i) const { return i < static_cast<int>(dynamic_.size()) && dynamic_[i]; }
  void set_dynamic_dimension(int i, bool dynamic);
  bool is_unbounded_dimension(int i) const { return dims_[i] == kUnboundedSize; }
  bool IsDynamic() const;  // any dynamic dimension, recursively for tuples
  bool IsScalar() const { return IsArray() && dims_.empty(); }

  // Elements in a static array shape; -1 if dynamic-unbounded or it would overflow int64.
  int64_t ElementCount() const;

  const std::vector<Shape>& tuple_shapes() const { return tuple_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_; }
  const Shape& tuple_shape(int i) const { return tuple_[i]; }
  int tuple_count() const { return static_cast<int>(tuple_.size()); }
  // Leaf arrays/tokens of a (nested) tuple, or 1 for a non-tuple.
  int64_t LeafCount() const;

  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout* mutable_layout();
  void clear_layout() { layout_.reset(); }
  // Sets the default (descending) layout on this array and, recursively, on tuple elements.
  void SetDefaultLayout();
  // True if this shape or any element in a tuple has a layout.
  bool AnyLayout() const;

  // Exact equality (element type, dimensions, dynamic flags, layout, tuple elements).
  bool operator==(const Shape& other) const;
  // Equality ignoring layouts.
  bool Compatible(const Shape& other) const;
  bool SameDimensions(const Shape& other) const;

  // Element at `index` (a shape index into nested tuples); nullptr when out of range.
  const Shape* Subshape(const std::vector<int64_t>& index) const;

  size_t Hash() const;

 private:
  explicit Shape(PrimitiveType t) : element_type_(t) {}

  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_;
};

using ShapeIndex = std::vector<int64_t>;

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_SHAPE_H_
