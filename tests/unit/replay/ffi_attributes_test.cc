// The typed-FFI attribute dictionary reader (plugins/ffi/ffi_attributes.h): what JAX writes into
// backend_config, every value form, sorting, and bad input.
#include "plugins/ffi/ffi_attributes.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

namespace hlowb {
namespace {

const FfiAttribute& Get(const FfiAttributeMap& map, const std::string& name) {
  for (const auto& [n, value] : map) {
    if (n == name) return value;
  }
  static const FfiAttribute kMissing;
  ADD_FAILURE() << "no attribute " << name;
  return kMissing;
}

template <typename T>
T Element(const FfiAttribute& attr, int64_t i) {
  T value{};
  EXPECT_LE(static_cast<size_t>((i + 1) * sizeof(T)), attr.bytes.size());
  if (static_cast<size_t>((i + 1) * sizeof(T)) <= attr.bytes.size()) {
    std::memcpy(&value, &attr.bytes[i * sizeof(T)], sizeof(T));
  }
  return value;
}

TEST(FfiAttributes, ReadsWhatJaxWrites) {
  auto map = ParseFfiAttributes(
      "{mode = \"double\", negate = true, offset = 3 : i64, weights = dense<[1, -2, 5]> : "
      "tensor<3xi64>, eps = 9.99999974E-6 : f32}");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->size(), 5u);
  // Sorted by name, as the call frame needs.
  EXPECT_EQ((*map)[0].first, "eps");
  EXPECT_EQ((*map)[1].first, "mode");
  EXPECT_EQ((*map)[4].first, "weights");

  const FfiAttribute& eps = Get(*map, "eps");
  EXPECT_EQ(eps.kind, FfiAttribute::Kind::kScalar);
  EXPECT_EQ(eps.type, PrimitiveType::kF32);
  EXPECT_EQ(Element<float>(eps, 0), 9.99999974E-6f);

  EXPECT_EQ(Get(*map, "mode").kind, FfiAttribute::Kind::kString);
  EXPECT_EQ(Get(*map, "mode").text, "double");

  const FfiAttribute& negate = Get(*map, "negate");
  EXPECT_EQ(negate.type, PrimitiveType::kPred);
  ASSERT_EQ(negate.bytes.size(), 1u);
  EXPECT_EQ(negate.bytes[0], 1);

  const FfiAttribute& offset = Get(*map, "offset");
  EXPECT_EQ(offset.type, PrimitiveType::kS64);
  EXPECT_EQ(Element<int64_t>(offset, 0), 3);

  const FfiAttribute& weights = Get(*map, "weights");
  EXPECT_EQ(weights.kind, FfiAttribute::Kind::kArray);
  EXPECT_EQ(weights.type, PrimitiveType::kS64);
  ASSERT_EQ(weights.count, 3);
  EXPECT_EQ(Element<int64_t>(weights, 0), 1);
  EXPECT_EQ(Element<int64_t>(weights, 1), -2);
  EXPECT_EQ(Element<int64_t>(weights, 2), 5);
}

TEST(FfiAttributes, DenseSplatsNestedListsAndHex) {
  auto map = ParseFfiAttributes(
      "{one = dense<4> : tensor<1xi64>, splat = dense<2.5> : tensor<3xf32>, "
      "grid = dense<[[1, 2], [3, 4]]> : tensor<2x2xi32>, "
      "hex = dense<\"0x0100000002000000\"> : tensor<2xi32>, "
      "hexsplat = dense<\"0x07000000\"> : tensor<3xi32>, scalar = dense<9> : tensor<i16>}");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(Get(*map, "one").count, 1);
  EXPECT_EQ(Element<int64_t>(Get(*map, "one"), 0), 4);
  const FfiAttribute& splat = Get(*map, "splat");
  ASSERT_EQ(splat.count, 3);
  EXPECT_EQ(Element<float>(splat, 2), 2.5f);
  const FfiAttribute& grid = Get(*map, "grid");
  ASSERT_EQ(grid.count, 4);
  EXPECT_EQ(Element<int32_t>(grid, 3), 4);
  const FfiAttribute& hex = Get(*map, "hex");
  ASSERT_EQ(hex.count, 2);
  EXPECT_EQ(Element<int32_t>(hex, 0), 1);
  EXPECT_EQ(Element<int32_t>(hex, 1), 2);
  EXPECT_EQ(Get(*map, "hexsplat").count, 3);
  EXPECT_EQ(Element<int32_t>(Get(*map, "hexsplat"), 2), 7);
  EXPECT_EQ(Get(*map, "scalar").count, 1);
  EXPECT_EQ(Element<int16_t>(Get(*map, "scalar"), 0), 9);
}

TEST(FfiAttributes, DenseArraysTypesAndDefaults) {
  auto map = ParseFfiAttributes(
      "{a = array<i64: 1, -2>, e = array<i32>, b = array<i1: true, false>, "
      "f = array<f64: 0.5, -1.0e3>, n = 5, x = 2.0, u = 255 : ui8, h = 1.5 : bf16, "
      "nan = 0x7FC00000 : f32, idx = 7 : index, s = -128 : si8}");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(Get(*map, "a").count, 2);
  EXPECT_EQ(Element<int64_t>(Get(*map, "a"), 1), -2);
  EXPECT_EQ(Get(*map, "e").count, 0);
  EXPECT_EQ(Get(*map, "e").type, PrimitiveType::kS32);
  EXPECT_EQ(Get(*map, "b").type, PrimitiveType::kPred);
  EXPECT_EQ(Get(*map, "b").bytes, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(Element<double>(Get(*map, "f"), 1), -1000.0);
  EXPECT_EQ(Get(*map, "n").type, PrimitiveType::kS64);  // MLIR's default integer type
  EXPECT_EQ(Get(*map, "x").type, PrimitiveType::kF64);  // and float type
  EXPECT_EQ(Get(*map, "u").type, PrimitiveType::kU8);
  EXPECT_EQ(Get(*map, "u").bytes, (std::vector<uint8_t>{255}));
  EXPECT_EQ(Element<uint16_t>(Get(*map, "h"), 0), 0x3FC0);
  EXPECT_TRUE(std::isnan(Element<float>(Get(*map, "nan"), 0)));
  EXPECT_EQ(Get(*map, "idx").type, PrimitiveType::kS64);
  EXPECT_EQ(Element<int8_t>(Get(*map, "s"), 0), -128);
}

TEST(FfiAttributes, NestedDictionariesAndStrings) {
  auto map = ParseFfiAttributes(
      "{z = 1 : i32, a = {y = \"q\\\"uote\\\\ \\0A end\", b = 2.0 : f64, \"odd name\" = {}}}");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->size(), 2u);
  EXPECT_EQ((*map)[0].first, "a");
  const FfiAttribute& a = (*map)[0].second;
  ASSERT_EQ(a.kind, FfiAttribute::Kind::kDictionary);
  ASSERT_EQ(a.entries.size(), 3u);
  EXPECT_EQ(a.entries[0].first, "b");
  EXPECT_EQ(a.entries[1].first, "odd name");
  EXPECT_EQ(a.entries[1].second.kind, FfiAttribute::Kind::kDictionary);
  EXPECT_EQ(a.entries[2].second.text, "q\"uote\\ \n end");
  EXPECT_EQ(FfiAttributesToString(*map),
            "{a = {b = 2 : f64, odd name = {}, y = \"q\\\"uote\\\\ \n end\"}, z = 1 : s32}");
}

TEST(FfiAttributes, EmptyConfigHasNoAttributes) {
  for (const char* config : {"", "{}", "  { }  "}) {
    auto map = ParseFfiAttributes(config);
    ASSERT_TRUE(map.ok()) << config << ": " << map.status();
    EXPECT_TRUE(map->empty());
  }
}

TEST(FfiAttributes, BadInputIsRefusedWithItsOffset) {
  const char* bad[] = {
      "{a = \"unterminated}",
      "{a 1}",
      "{a = 1, a = 2}",
      "{a = [1, 2]}",
      "{a = unit}",
      "{a = 256 : ui8}",
      "{a = -129 : i8}",
      "{a = -1 : ui32}",
      "{a = 1.5 : i32}",
      "{a = true : f32}",
      "{a = 1 : f128}",
      "{a = dense<[1, 2, 3]> : tensor<2xi32>}",
      "{a = dense<\"0x0102\"> : tensor<2xi32>}",
      "{a = dense<1>}",
      "{a = array<i64: 1, x>}",
      "{a = 0x1}",
      "{a = 1} trailing",
      "{a = 1",
      "{a = 99999999999999999999}",
      "{a = dense<1> : tensor<100000x100000x100000xi8>}",
  };
  for (const char* config : bad) {
    auto map = ParseFfiAttributes(config);
    ASSERT_FALSE(map.ok()) << config;
    EXPECT_NE(map.status().message().find("offset"), std::string::npos)
        << config << ": " << map.status();
  }
}

TEST(FfiAttributes, DeepNestingIsRefusedNotACrash) {
  std::string deep;
  for (int i = 0; i < 10000; ++i) deep += "{a = ";
  auto map = ParseFfiAttributes(deep);
  ASSERT_FALSE(map.ok());
  EXPECT_NE(map.status().message().find("nested too deeply"), std::string::npos) << map.status();
}

}  // namespace
}  // namespace hlowb
