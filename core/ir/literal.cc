#include "core/ir/literal.h"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace hlowb {

namespace {
constexpr std::size_t kHugeThreshold = std::size_t{4} << 20;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
}  // namespace

void* AllocateLiteralStorage(std::size_t bytes) {
  if (bytes < kHugeThreshold) return ::operator new(bytes);
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, rounded);
  if (p == nullptr) throw std::bad_alloc();
  (void)madvise(p, rounded, MADV_HUGEPAGE);  // advice only: failure leaves normal pages
  return p;
}

void FreeLiteralStorage(void* p, std::size_t bytes) noexcept {
  if (bytes < kHugeThreshold) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

Literal Literal::Uninitialized(Shape shape) {
  Literal out(std::move(shape), /*allocate=*/false);
  if (out.shape_.IsArray()) {
    out.data_.resize(static_cast<size_t>(out.component_count()) * out.component_bytes_);
  }
  return out;
}

Literal::Literal(Shape shape, bool allocate) : shape_(std::move(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& s : shape_.tuple_shapes()) tuple_.emplace_back(s, allocate);
    return;
  }
  if (!shape_.IsArray()) return;
  element_count_ = shape_.ElementCount();
  if (element_count_ < 0) element_count_ = 0;
  PrimitiveType t = shape_.element_type();
  component_bytes_ = ByteWidth(ComplexComponentType(t));
  if (allocate) data_.assign(static_cast<size_t>(component_count()) * component_bytes_, 0);
}

int64_t Literal::component_count() const {
  return IsComplex(shape_.element_type()) ? element_count_ * 2 : element_count_;
}

uint64_t Literal::GetBits(int64_t i) const {
  uint64_t v = 0;
  std::memcpy(&v, data_.data() + i * component_bytes_, component_bytes_);
  if (shape_.element_type() != PrimitiveType::kPred && BitWidth(shape_.element_type()) < 8) {
    v &= (uint64_t{1} << BitWidth(shape_.element_type())) - 1;
  }
  return v;
}

void Literal::SetBits(int64_t i, uint64_t bits) {
  PrimitiveType t = shape_.element_type();
  int width = BitWidth(t);
  if (t != PrimitiveType::kPred && width < 8) {
    bits &= (uint64_t{1} << width) - 1;
    if (IsSignedIntegral(t) && (bits >> (width - 1)) & 1) bits |= ~uint64_t{0} << width;
  }
  std::memcpy(data_.data() + i * component_bytes_, &bits, component_bytes_);
}

int64_t Literal::GetInt(int64_t i) const {
  uint64_t bits = 0;
  std::memcpy(&bits, data_.data() + i * component_bytes_, component_bytes_);
  PrimitiveType t = shape_.element_type();
  int width = component_bytes_ * 8;
  if (IsSignedIntegral(t) && width < 64 && ((bits >> (width - 1)) & 1)) {
    bits |= ~uint64_t{0} << width;
  }
  return static_cast<int64_t>(bits);
}

bool Literal::operator==(const Literal& o) const {
  return shape_.Compatible(o.shape_) && elided_ == o.elided_ && data_ == o.data_ &&
         tuple_ == o.tuple_;
}

}  // namespace hlowb
