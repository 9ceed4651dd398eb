#include "core/ir/shape.h"

#include <functional>

namespace hlowb {

bool Layout::operator==(const Layout& o) const {
  if (!(minor_to_major == o.minor_to_major && dim_levels == o.dim_levels && tiles == o.tiles &&
        tail_padding_alignment_in_elements == o.tail_padding_alignment_in_elements &&
        index_primitive_type == o.index_primitive_type &&
        pointer_primitive_type == o.pointer_primitive_type &&
        element_size_in_bits == o.element_size_in_bits && memory_space == o.memory_space &&
        split_configs == o.split_configs &&
        dynamic_shape_metadata_prefix_bytes == o.dynamic_shape_metadata_prefix_bytes)) {
    return false;
  }
  if (static_cast<bool>(physical_shape) != static_cast<bool>(o.physical_shape)) return false;
  return !physical_shape || *physical_shape == *o.physical_shape;
}

bool Layout::HasOnlyMinorToMajor() const {
  return dim_levels.empty() && tiles.empty() && tail_padding_alignment_in_elements == 1 &&
         index_primitive_type == PrimitiveType::kInvalid &&
         pointer_primitive_type == PrimitiveType::kInvalid && element_size_in_bits == 0 &&
         memory_space == 0 && split_configs.empty() && !physical_shape &&
         dynamic_shape_metadata_prefix_bytes == 0;
}

Shape Shape::Array(PrimitiveType type, std::vector<int64_t> dims) {
  Shape s(type);
  s.dims_ = std::move(dims);
  return s;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s(PrimitiveType::kTuple);
  s.tuple_ = std::move(elements);
  return s;
}

Shape Shape::Buffer(Shape array) {
  Shape s(PrimitiveType::kBuffer);
  s.tuple_.push_back(std::move(array));
  return s;
}

void Shape::add_dimension(int64_t size, bool dynamic) {
  dims_.push_back(size);
  if (dynamic || !dynamic_.empty()) {
    dynamic_.resize(dims_.size(), false);
    dynamic_.back() = dynamic;
  }
}

void Shape::set_dynamic_dimension(int i, bool dynamic) {
  if (static_cast<int>(dynamic_.size()) <= i) {
    if (!dynamic) return;
    dynamic_.resize(dims_.size(), false);
  }
  dynamic_[i] = dynamic;
}

bool Shape::IsDynamic() const {
  for (bool d : dynamic_) {
    if (d) return true;
  }
  for (const Shape& t : tuple_) {
    if (t.IsDynamic()) return true;
  }
  return false;
}

int64_t Shape::ElementCount() const {
  if (!IsArray()) return 0;
  int64_t n = 1;
  for (int64_t d : dims_) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

int64_t Shape::LeafCount() const {
  if (!IsTuple()) return 1;
  int64_t n = 0;
  for (const Shape& t : tuple_) n += t.LeafCount();
  return n;
}

Layout* Shape::mutable_layout() {
  if (!layout_) layout_.emplace();
  return &*layout_;
}

void Shape::SetDefaultLayout() {
  if (IsArray()) {
    Layout* l = mutable_layout();
    l->minor_to_major.clear();
    for (int i = rank() - 1; i >= 0; --i) l->minor_to_major.push_back(i);
  }
  for (Shape& t : tuple_) t.SetDefaultLayout();
}

bool Shape::AnyLayout() const {
  if (layout_) return true;
  for (const Shape& t : tuple_) {
    if (t.AnyLayout()) return true;
  }
  return false;
}

bool Shape::SameDimensions(const Shape& o) const {
  if (dims_ != o.dims_) return false;
  for (int i = 0; i < rank(); ++i) {
    if (is_dynamic_dimension(i) != o.is_dynamic_dimension(i)) return false;
  }
  return true;
}

bool Shape::operator==(const Shape& o) const {
  return element_type_ == o.element_type_ && SameDimensions(o) && layout_ == o.layout_ &&
         tuple_ == o.tuple_;
}

bool Shape::Compatible(const Shape& o) const {
  if (element_type_ != o.element_type_ || !SameDimensions(o)) return false;
  if (tuple_.size() != o.tuple_.size()) return false;
  for (size_t i = 0; i < tuple_.size(); ++i) {
    if (!tuple_[i].Compatible(o.tuple_[i])) return false;
  }
  return true;
}

const Shape* Shape::Subshape(const std::vector<int64_t>& index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_count()) return nullptr;
    s = &s->tuple_[i];
  }
  return s;
}

size_t Shape::Hash() const {
  size_t h = std::hash<int>()(static_cast<int>(element_type_));
  auto mix = [&h](size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  for (int64_t d : dims_) mix(std::hash<int64_t>()(d));
  for (bool d : dynamic_) mix(d);
  if (layout_) {
    mix(0x51);
    for (int64_t d : layout_->minor_to_major) mix(std::hash<int64_t>()(d));
    mix(layout_->tiles.size());
    mix(static_cast<size_t>(layout_->memory_space));
    mix(static_cast<size_t>(layout_->element_size_in_bits));
  }
  for (const Shape& t : tuple_) mix(t.Hash());
  return h;
}

}  // namespace hlowb
