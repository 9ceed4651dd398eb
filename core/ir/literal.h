// Constant values: a shape plus element storage. Arrays keep one element per ByteWidth() bytes
// in row-major order (dimension 0 outermost), whatever the shape's layout says; sub-byte types
// take a byte each (signed ones sign-extended), complex values store real then imaginary.
// A literal can be "elided" (`{...}` in text): its shape is known but its data is not.
// This class stores and compares values; text conversion lives in core/text.
#ifndef HLOWB_CORE_IR_LITERAL_H_
#define HLOWB_CORE_IR_LITERAL_H_

#include <cstdint>
#include <cstddef>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "core/ir/shape.h"

namespace hlowb {

// Storage for literal elements. Buffers of 4 MiB and more are aligned to 2 MiB and offered to
// the kernel as transparent huge pages (a 64 MiB result then takes 32 page faults, not 16,384),
// and when freed they are kept (up to a quarter of the machine's memory, 1 to 16 GiB) for the
// next allocation of the same rounded size, so repeated runs and loop iterations reuse memory
// that is already mapped.
// Elements are default-initialised, so resize() leaves new bytes unset: Literal zero-fills
// explicitly, and Literal::Uninitialized skips that for results that are written in full.
void* AllocateLiteralStorage(std::size_t bytes);
void FreeLiteralStorage(void* p, std::size_t bytes) noexcept;
// Bytes of freed large buffers kept for reuse, and giving them back to the system.
std::size_t CachedLiteralStorageBytes();
void ReleaseCachedLiteralStorage() noexcept;

template <typename T>
class LiteralAllocator {
 public:
  using value_type = T;
  LiteralAllocator() noexcept = default;
  template <typename U>
  LiteralAllocator(const LiteralAllocator<U>&) noexcept {}  // NOLINT: rebinding

  T* allocate(std::size_t n) {
    return static_cast<T*>(AllocateLiteralStorage(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { FreeLiteralStorage(p, n * sizeof(T)); }
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <typename U>
  bool operator==(const LiteralAllocator<U>&) const noexcept {
    return true;
  }
};

using LiteralBytes = std::vector<uint8_t, LiteralAllocator<uint8_t>>;

class Literal {
 public:
  Literal() = default;
  // Zero-filled literal of `shape` (tuple elements are created recursively). The caller must
  // have checked that the element count is reasonable. With allocate=false no element storage
  // is created (for elided literals, whose data is unknown).
  explicit Literal(Shape shape, bool allocate = true);
  // A literal of array `shape` whose element bytes are left unset: for results the caller
  // writes completely (elementwise ops), saving a pass over the memory.
  static Literal Uninitialized(Shape shape);

  const Shape& shape() const { return shape_; }
  bool elided() const { return elided_; }
  void set_elided(bool elided) { elided_ = elided; }

  int64_t element_count() const { return element_count_; }
  // Number of scalar components: element_count, doubled for complex types.
  int64_t component_count() const;
  int component_bytes() const { return component_bytes_; }

  // Raw bits of component `i` (zero-extended from its storage width).
  uint64_t GetBits(int64_t i) const;
  void SetBits(int64_t i, uint64_t bits);
  // Integer element value with sign extension for signed types.
  int64_t GetInt(int64_t i) const;

  const LiteralBytes& data() const { return data_; }
  // Element storage viewed as T (the caller picks T matching ByteWidth of the element type:
  // int8_t for s4, uint16_t bits for f16/bf16, std::complex<float> for c64, ...).
  template <typename T>
  const T* data_as() const { return reinterpret_cast<const T*>(data_.data()); }
  template <typename T>
  T* mutable_data_as() { return reinterpret_cast<T*>(data_.data()); }
  // Bytes per element (both components for complex types).
  int element_bytes() const {
    return IsComplex(shape_.element_type()) ? 2 * component_bytes_ : component_bytes_;
  }
  LiteralBytes* mutable_data() { return &data_; }

  const std::vector<Literal>& tuple_elements() const { return tuple_; }
  std::vector<Literal>* mutable_tuple_elements() { return &tuple_; }

  // Equality of shape (ignoring layout), elision and bits. NaNs compare by bits.
  bool operator==(const Literal& other) const;

 private:
  Shape shape_;
  bool elided_ = false;
  int64_t element_count_ = 0;
  int component_bytes_ = 0;
  LiteralBytes data_;
  std::vector<Literal> tuple_;
};

}  // namespace hlowb

#endif  // HLOWB_CORE_IR_LITERAL_H_
