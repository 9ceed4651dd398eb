// Literal element storage: zero-filled by default at every size (including the huge-page path
// for buffers of 4 MiB and more, even when freed memory is reused), left unset only by
// Literal::Uninitialized, and copied and compared like any value; freed large buffers are kept
// for reuse and can be released.
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "core/ir/literal.h"
#include "core/ir/literal_storage.h"
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

// Literals over memory their creator owns (core/ir/literal_storage.h): a view reads and
// writes the given bytes and frees nothing, a copy of it owns new storage, and placements are
// taken by allocations of exactly their size, once each, on the thread that offered them.
TEST(LiteralExternalStorage, AViewReadsAndWritesTheGivenBytesAndFreesNothing) {
  std::vector<float> memory(64, 0.0f);
  for (int i = 0; i < 64; ++i) memory[i] = static_cast<float>(i);
  {
    ScopedExternalStorage registered(memory.data(), memory.size() * sizeof(float));
    EXPECT_TRUE(IsExternalLiteralStorage(memory.data() + 10));
    Literal copy;
    {
      Literal view = LiteralOver(Shape::Array(PrimitiveType::kF32, {8, 4}), memory.data() + 16);
      EXPECT_EQ(view.data().data(), reinterpret_cast<uint8_t*>(memory.data() + 16));
      EXPECT_EQ(view.data_as<float>()[3], 19.0f);
      view.mutable_data_as<float>()[0] = -1.0f;
      copy = view;
      Literal moved = std::move(view);
      EXPECT_EQ(moved.data_as<float>()[1], 17.0f);
    }  // the view and the literal it moved to go: nothing is freed
    EXPECT_EQ(memory[16], -1.0f);
    EXPECT_NE(copy.data().data(), reinterpret_cast<uint8_t*>(memory.data() + 16));
    EXPECT_FALSE(IsExternalLiteralStorage(copy.data().data()));
    EXPECT_EQ(copy.data_as<float>()[31], 47.0f);
  }
  EXPECT_FALSE(IsExternalLiteralStorage(memory.data() + 10));
}

TEST(LiteralExternalStorage, PlacementsAreTakenByExactSizeOnceOnTheirThread) {
  std::vector<uint8_t> memory(1024);
  ScopedExternalStorage registered(memory.data(), memory.size());
  Literal a, b, c, other_thread;
  {
    ScopedStoragePlacement placement({{memory.data(), 400}, {memory.data() + 512, 64}});
    a = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {16}));   // 64 bytes
    b = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {16}));   // 64: already taken
    c = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {100}));  // 400 bytes
    std::thread t([&] {
      other_thread = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {100}));
    });
    t.join();
  }
  EXPECT_EQ(a.data().data(), memory.data() + 512);
  EXPECT_NE(b.data().data(), memory.data() + 512);
  EXPECT_EQ(c.data().data(), memory.data());
  EXPECT_NE(other_thread.data().data(), memory.data());
  Literal after = Literal::Uninitialized(Shape::Array(PrimitiveType::kF32, {16}));
  EXPECT_FALSE(IsExternalLiteralStorage(after.data().data()));
}

}  // namespace
}  // namespace hlowb
