// Literal element storage: zero-filled by default at every size (including the huge-page path
// for buffers of 4 MiB and more, even when freed memory is reused), left unset only by
// Literal::Uninitialized, and copied and compared like any value; freed large buffers are kept
// for reuse and can be released.
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/ir/literal.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

bool AllZero(const Literal& l) {
  for (uint8_t b : l.data()) {
    if (b != 0) return false;
  }
  return true;
}

TEST(LiteralStorage, ZeroFilledAtEverySizeEvenOnReusedMemory) {
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{1} << 20, int64_t{3} << 20}) {
    const Shape shape = Shape::Array(PrimitiveType::kF32, {n});
    {
      Literal dirty(shape);
      std::memset(dirty.mutable_data()->data(), 0xab, dirty.data().size());
    }  // freed: the next literal of the same size may get the same memory back
    Literal fresh(shape);
    ASSERT_EQ(fresh.data().size(), static_cast<size_t>(n) * 4);
    EXPECT_TRUE(AllZero(fresh)) << n << " elements";
  }
}

TEST(LiteralStorage, UninitializedHasTheSizeAndCopiesCompare) {
  const int64_t n = int64_t{5} << 20;  // 20 MiB: the huge-page path
  Literal a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {n}));
  ASSERT_EQ(a.element_count(), n);
  ASSERT_EQ(a.data().size(), static_cast<size_t>(n) * 4);
  float* p = a.mutable_data_as<float>();
  for (int64_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 977);
  Literal b = a;
  EXPECT_TRUE(a == b);
  b.mutable_data_as<float>()[n - 1] = -1.0f;
  EXPECT_FALSE(a == b);
  EXPECT_EQ(a.data_as<float>()[n - 1], static_cast<float>((n - 1) % 977));
  // Complex elements: both components counted.
  Literal c = Literal::Uninitialized(Shape::Array(PrimitiveType::kC64, {3}));
  EXPECT_EQ(c.data().size(), 3u * 8u);
}

TEST(LiteralStorage, FreedLargeBuffersAreReusedAndCanBeReleased) {
  ReleaseCachedLiteralStorage();
  ASSERT_EQ(CachedLiteralStorageBytes(), 0u);
  const Shape shape = Shape::Array(PrimitiveType::kF32, {int64_t{6} << 20});  // 24 MiB
  const void* first = nullptr;
  {
    Literal a = Literal::Uninitialized(shape);
    first = a.data().data();
  }
  EXPECT_EQ(CachedLiteralStorageBytes(), size_t{24} << 20);
  {
    Literal b = Literal::Uninitialized(shape);
    EXPECT_EQ(static_cast<const void*>(b.data().data()), first);  // the kept buffer, again
    EXPECT_EQ(CachedLiteralStorageBytes(), 0u);
    // A different size does not take a kept buffer of another size.
    Literal c = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {int64_t{8} << 20}));
    EXPECT_NE(static_cast<const void*>(c.data().data()), first);
  }
  EXPECT_EQ(CachedLiteralStorageBytes(), (size_t{24} << 20) + (size_t{32} << 20));
  ReleaseCachedLiteralStorage();
  EXPECT_EQ(CachedLiteralStorageBytes(), 0u);
  // Small buffers are never kept.
  { Literal small(Shape::Array(PrimitiveType::kF32, {1000})); }
  EXPECT_EQ(CachedLiteralStorageBytes(), 0u);
}

}  // namespace
}  // namespace hlowb
