// LayoutMemoryOffsets and RelayoutBytes: row-major elements placed in a layout's memory order
// and gathered back, with bad layouts refused by name.
#include "core/ir/layout_offsets.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/text/parser.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

Shape ShapeOf(const std::string& text) {
  auto shape = ParseShape(text);
  EXPECT_TRUE(shape.ok()) << text << ": " << shape.status();
  return shape.ok() ? *shape : Shape();
}

TEST(LayoutOffsets, RowMajorColumnMajorAndPermutedLayouts) {
  // f32[2,3]{1,0} is row-major: offsets are the identity.
  auto row = LayoutMemoryOffsets(ShapeOf("f32[2,3]{1,0}"));
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(*row, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // No layout means row-major too.
  auto none = LayoutMemoryOffsets(ShapeOf("f32[2,3]"));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, *row);
  // {0,1}: dimension 0 is minor, so element (i,j) sits at i + 2*j.
  auto col = LayoutMemoryOffsets(ShapeOf("f32[2,3]{0,1}"));
  ASSERT_TRUE(col.ok()) << col.status();
  EXPECT_EQ(*col, (std::vector<int64_t>{0, 2, 4, 1, 3, 5}));
  // Rank 3, {1,2,0}: strides d1=1, d2=2 (size of d1), d0=2*2.
  auto three = LayoutMemoryOffsets(ShapeOf("s8[2,2,2]{1,2,0}"));
  ASSERT_TRUE(three.ok()) << three.status();
  EXPECT_EQ(*three, (std::vector<int64_t>{0, 2, 1, 3, 4, 6, 5, 7}));
  // Scalars have one element at offset 0.
  auto scalar = LayoutMemoryOffsets(ShapeOf("f32[]"));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(*scalar, (std::vector<int64_t>{0}));
}

TEST(LayoutOffsets, RelayoutRoundTripsAndMatchesTheOffsets) {
  const Shape shape = ShapeOf("s16[3,4]{0,1}");
  std::vector<int16_t> logical(12);
  for (int i = 0; i < 12; ++i) logical[i] = static_cast<int16_t>(100 + i);
  auto memory = RelayoutBytes(reinterpret_cast<const uint8_t*>(logical.data()), shape, 2, true);
  ASSERT_TRUE(memory.ok()) << memory.status();
  auto offsets = LayoutMemoryOffsets(shape);
  ASSERT_TRUE(offsets.ok());
  const int16_t* m = reinterpret_cast<const int16_t*>(memory->data());
  for (int i = 0; i < 12; ++i) EXPECT_EQ(m[(*offsets)[i]], logical[i]) << i;
  EXPECT_NE(m[1], logical[1]);  // column-major really moved something
  auto back = RelayoutBytes(memory->data(), shape, 2, false);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(std::vector<uint8_t>(back->begin(), back->end()),
            std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(logical.data()),
                                 reinterpret_cast<const uint8_t*>(logical.data()) + 24));
}

TEST(LayoutOffsets, BadLayoutsAreRefusedWithTheShape) {
  Shape repeated = ShapeOf("f32[2,3]{1,0}");
  repeated.mutable_layout()->minor_to_major = {1, 1};
  auto r = LayoutMemoryOffsets(repeated);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(std::string(r.status().message()).find("f32[2,3]{1,1} is not a permutation"),
            std::string::npos)
      << r.status();
  Shape short_layout = ShapeOf("f32[2,3]{1,0}");
  short_layout.mutable_layout()->minor_to_major = {0};
  EXPECT_FALSE(LayoutMemoryOffsets(short_layout).ok());
  Shape out_of_range = ShapeOf("f32[2,3]{1,0}");
  out_of_range.mutable_layout()->minor_to_major = {5, 0};
  EXPECT_FALSE(LayoutMemoryOffsets(out_of_range).ok());
  auto tiled = LayoutMemoryOffsets(ShapeOf("f32[8,128]{1,0:T(8,128)}"));
  ASSERT_FALSE(tiled.ok());
  EXPECT_NE(std::string(tiled.status().message()).find("tiled"), std::string::npos);
}

}  // namespace
}  // namespace hlowb
