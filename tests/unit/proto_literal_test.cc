// LiteralProto <-> Literal for every element type: bit-exact round trips (NaN payloads, infinities,
// every sub-byte value), XLA's packing rules checked byte by byte (16-bit little-endian, one byte
// per sub-byte element, interleaved complex, physical layout order), and malformed literals
// refused with a message instead of a crash or a huge allocation.
#include <bit>
#include <chrono>
#include <string>
#include <vector>

#include "core/ir/float_types.h"
#include "core/proto/literal_convert.h"
#include "core/proto/xla_data.pb.h"
#include "core/text/parser.h"
#include "core/text/printer.h"
#include "gtest/gtest.h"

namespace hlowb {
namespace {

Literal RoundTripThroughBytes(const Literal& lit) {
  xla::LiteralProto proto;
  absl::Status st = LiteralToProto(lit, &proto);
  EXPECT_TRUE(st.ok()) << st;
  std::string bytes;
  EXPECT_TRUE(proto.SerializeToString(&bytes));
  xla::LiteralProto parsed;
  EXPECT_TRUE(parsed.ParseFromString(bytes));
  absl::StatusOr<Literal> back = LiteralFromProto(parsed);
  EXPECT_TRUE(back.ok()) << back.status();
  return back.ok() ? std::move(*back) : Literal();
}

xla::LiteralProto ToProto(const Literal& lit) {
  xla::LiteralProto proto;
  absl::Status st = LiteralToProto(lit, &proto);
  EXPECT_TRUE(st.ok()) << st;
  return proto;
}

Literal Parse(std::string_view text) {
  absl::StatusOr<Literal> lit = ParseShapedLiteral(text);
  EXPECT_TRUE(lit.ok()) << text << ": " << lit.status();
  return lit.ok() ? std::move(*lit) : Literal();
}

// Every array type, shape [2,3] with a non-default layout, every component a different bit
// pattern (which for float types includes NaNs with payloads and infinities).
TEST(ProtoLiteral, EveryElementTypeRoundTripsBitExactly) {
  int count = 0;
  const PrimitiveType* all = AllPrimitiveTypes(&count);
  int tested = 0;
  for (int k = 0; k < count; ++k) {
    const PrimitiveType t = all[k];
    if (!IsArrayType(t)) continue;
    for (bool transposed : {false, true}) {
      Shape shape = Shape::Array(t, {2, 3});
      shape.mutable_layout()->minor_to_major =
          transposed ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{1, 0};
      Literal lit(shape);
      const int width = BitWidth(ComplexComponentType(t));
      uint64_t state = 0x9E3779B97F4A7C15ull * (k + 1);
      for (int64_t i = 0; i < lit.component_count(); ++i) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t bits = state >> 7;
        if (t == PrimitiveType::kPred) bits &= 1;
        if (width < 64 && t != PrimitiveType::kPred) bits &= (uint64_t{1} << width) - 1;
        if (i == 0 && IsFloatingPoint(ComplexComponentType(t))) {
          // A NaN with a payload where the type has one; otherwise its NaN or largest value.
          PrimitiveType c = ComplexComponentType(t);
          absl::StatusOr<uint64_t> nan = NaNBits(
              c, true, FloatTypeNaNPayloadBits(c) > 1 ? std::optional<uint64_t>(1) : std::nullopt);
          bits = nan.ok() ? *nan : FloatTypeMaxFiniteBits(c);
        }
        lit.SetBits(i, bits);
      }
      Literal back = RoundTripThroughBytes(lit);
      EXPECT_EQ(back.shape(), lit.shape()) << PrimitiveTypeName(t);
      EXPECT_EQ(back.data(), lit.data()) << PrimitiveTypeName(t) << (transposed ? " {0,1}" : "");
      EXPECT_EQ(PrintShapedLiteral(back), PrintShapedLiteral(lit)) << PrimitiveTypeName(t);
      ++tested;
    }
  }
  EXPECT_EQ(tested, 2 * 30);  // 30 array element types
}

TEST(ProtoLiteral, TextLiteralsRoundTrip) {
  for (const char* text : {
           "pred[3]{0} {1, 0, 1}",
           "s4[4]{0} {-8, -1, 0, 7}",
           "u4[3]{0} {0, 9, 15}",
           "s2[4]{0} {-2, -1, 0, 1}",
           "u2[2]{0} {0, 3}",
           "s1[2]{0} {-1, 0}",
           "u1[2]{0} {0, 1}",
           "s8[2]{0} {-128, 127}",
           "u8[2]{0} {0, 255}",
           "s16[2]{0} {-32768, 32767}",
           "u16[2]{0} {0, 65535}",
           "s32[2]{0} {-2147483648, 2147483647}",
           "u32[1]{0} {4294967295}",
           "s64[2]{0} {-9223372036854775808, 9223372036854775807}",
           "u64[1]{0} {18446744073709551615}",
           "f16[4]{0} {1, -inf, nan, 65504}",
           "bf16[4]{0} {0.1001, -inf, -nan, nan(0x3)}",
           "f32[5]{0} {inf, -inf, nan, -nan, nan(0x1234)}",
           "f64[3]{0} {1e-300, -nan(0x7f), 2.2250738585072014e-308}",
           "f8e5m2[3]{0} {-inf, nan, 57344}",
           "f8e4m3[3]{0} {inf, nan, 240}",
           "f8e4m3fn[3]{0} {448, nan, -nan}",
           "f8e4m3b11fnuz[2]{0} {30, -nan}",
           "f8e3m4[2]{0} {15.5, inf}",
           "f8e5m2fnuz[2]{0} {57344, -nan}",
           "f8e4m3fnuz[2]{0} {240, -nan}",
           "f4e2m1fn[4]{0} {6, -6, 0.5, -0}",
           "f8e8m0fnu[3]{0} {1, 2, nan}",
           "c64[2]{0} {(1, 2), (nan, -inf)}",
           "c128[1]{0} {(1e+300, -0)}",
           "f32[2,3]{0,1} {{1, 2, 3}, {4, 5, 6}}",
           "f32[] 3.5",
           "(f32[2], s4[], (pred[])) ({1, 2}, -3, (true))",
           "token[] {}",
           "f32[0,3] {}",
       }) {
    Literal lit = Parse(text);
    Literal back = RoundTripThroughBytes(lit);
    // Shapes without a layout come back with XLA's default one; data and dimensions are exact.
    EXPECT_EQ(PrintLiteralData(back), PrintLiteralData(lit)) << text;
    EXPECT_TRUE(back.shape().Compatible(lit.shape())) << text;
    if (lit.shape().IsArray() && lit.shape().has_layout()) {
      EXPECT_EQ(back.shape(), lit.shape()) << text;
    }
    EXPECT_TRUE(back == lit) << text;
  }
}

TEST(ProtoLiteral, PackingFollowsXla) {
  // Physical order of a {0,1} layout.
  xla::LiteralProto p = ToProto(Parse("f32[2,3]{0,1} {{0, 1, 2}, {3, 4, 5}}"));
  ASSERT_EQ(p.f32s_size(), 6);
  std::vector<float> got(p.f32s().begin(), p.f32s().end());
  EXPECT_EQ(got, (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(p.shape().layout().minor_to_major_size(), 2);
  // A layout-less shape gets XLA's default (required by XLA's reader).
  p = ToProto(Parse("s32[2,1] {{7}, {-7}}"));
  EXPECT_EQ(p.shape().layout().minor_to_major(0), 1);
  EXPECT_EQ(p.s32s(1), -7);
  // 16-bit types: two bytes, little-endian.
  EXPECT_EQ(ToProto(Parse("f16[1]{0} {1}")).f16s(), std::string("\x00\x3c", 2));
  EXPECT_EQ(ToProto(Parse("bf16[1]{0} {-inf}")).bf16s(), std::string("\x80\xff", 2));
  EXPECT_EQ(ToProto(Parse("u16[1]{0} {258}")).u16s(), std::string("\x02\x01", 2));
  EXPECT_EQ(ToProto(Parse("s16[1]{0} {-2}")).s16s(), std::string("\xfe\xff", 2));
  // Sub-byte types: one byte per element, the value in the low bits.
  EXPECT_EQ(ToProto(Parse("s4[4]{0} {-8, -1, 0, 7}")).s4s(), std::string("\x08\x0f\x00\x07", 4));
  EXPECT_EQ(ToProto(Parse("u4[2]{0} {1, 15}")).u4s(), std::string("\x01\x0f", 2));
  EXPECT_EQ(ToProto(Parse("u2[2]{0} {1, 3}")).u2s(), std::string("\x01\x03", 2));
  EXPECT_EQ(ToProto(Parse("f4e2m1fn[2]{0} {6, -0.5}")).f4e2m1fns(), std::string("\x07\x09", 2));
  // 8-bit floats: raw bits.
  EXPECT_EQ(ToProto(Parse("f8e4m3fn[2]{0} {448, nan}")).f8e4m3fns(), std::string("\x7e\x7f", 2));
  EXPECT_EQ(ToProto(Parse("f8e5m2fnuz[1]{0} {-nan}")).f8e5m2fnuzs(), std::string("\x80", 1));
  // Complex: interleaved real, imaginary.
  p = ToProto(Parse("c64[2]{0} {(1, 2), (3, 4)}"));
  EXPECT_EQ(std::vector<float>(p.c64s().begin(), p.c64s().end()), (std::vector<float>{1, 2, 3, 4}));
  p = ToProto(Parse("pred[3]{0} {1, 0, 1}"));
  EXPECT_EQ(std::vector<bool>(p.preds().begin(), p.preds().end()), (std::vector<bool>{1, 0, 1}));
  p = ToProto(Parse("u64[1]{0} {18446744073709551615}"));
  EXPECT_EQ(p.u64s(0), ~uint64_t{0});
  // NaN payloads stay in the bits.
  p = ToProto(Parse("f32[2]{0} {nan(0x1234), -nan}"));
  EXPECT_EQ(std::bit_cast<uint32_t>(p.f32s(0)), 0x7f801234u);
  EXPECT_EQ(std::bit_cast<uint32_t>(p.f32s(1)), 0xffc00000u);
  // Tuples nest.
  p = ToProto(Parse("(f32[], s8[]) (1, -1)"));
  ASSERT_EQ(p.tuple_literals_size(), 2);
  EXPECT_EQ(p.tuple_literals(1).s8s(), std::string("\xff", 1));
}

TEST(ProtoLiteral, ReadsSignExtendedSubByteValues) {
  xla::LiteralProto p;
  p.mutable_shape()->set_element_type(xla::S4);
  p.mutable_shape()->add_dimensions(3);
  p.set_s4s(std::string("\xf8\xff\x07", 3));  // how older writers stored -8, -1, 7
  absl::StatusOr<Literal> lit = LiteralFromProto(p);
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_EQ(PrintLiteralData(*lit), "{-8, -1, 7}");
  p.set_s4s(std::string("\x08\x0f\x07", 3));  // and the masked form
  lit = LiteralFromProto(p);
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_EQ(PrintLiteralData(*lit), "{-8, -1, 7}");
}

std::string Error(const xla::LiteralProto& p) {
  absl::StatusOr<Literal> lit = LiteralFromProto(p);
  return lit.ok() ? "" : std::string(lit.status().message());
}

TEST(ProtoLiteral, MalformedLiteralsAreRefused) {
  xla::LiteralProto p;
  EXPECT_NE(Error(p).find("has no shape"), std::string::npos) << Error(p);

  p.mutable_shape()->set_element_type(xla::F32);
  p.mutable_shape()->add_dimensions(3);
  p.add_f32s(1);
  EXPECT_NE(Error(p).find("needs 3 values in 'f32s' but has 1"), std::string::npos) << Error(p);

  p.clear_f32s();
  for (int i = 0; i < 3; ++i) p.add_s32s(i);
  EXPECT_NE(Error(p).find("carries data in field 's32s'"), std::string::npos) << Error(p);

  p.clear_s32s();
  for (int i = 0; i < 3; ++i) p.add_f32s(i);
  p.mutable_shape()->mutable_layout()->add_minor_to_major(4);
  EXPECT_NE(Error(p).find("not a permutation"), std::string::npos) << Error(p);

  p.mutable_shape()->clear_layout();
  p.mutable_shape()->set_dimensions(0, -3);
  EXPECT_NE(Error(p).find("negative size -3"), std::string::npos) << Error(p);

  p.mutable_shape()->set_dimensions(0, 3);
  p.mutable_shape()->add_is_dynamic_dimension(true);
  EXPECT_NE(Error(p).find("dynamic"), std::string::npos) << Error(p);

  // 2^40 elements with three values: refused at once, nothing allocated.
  xla::LiteralProto huge;
  huge.mutable_shape()->set_element_type(xla::F32);
  huge.mutable_shape()->add_dimensions(int64_t{1} << 20);
  huge.mutable_shape()->add_dimensions(int64_t{1} << 20);
  for (int i = 0; i < 3; ++i) huge.add_f32s(i);
  auto t0 = std::chrono::steady_clock::now();
  std::string e = Error(huge);
  EXPECT_NE(e.find("more than 549755813888 elements"), std::string::npos) << e;
  // Under the limit but with a billion elements and three values: a count mismatch.
  huge.mutable_shape()->set_dimensions(0, 1000);
  huge.mutable_shape()->set_dimensions(1, 1000000);
  e = Error(huge);
  EXPECT_NE(e.find("needs 1000000000 values in 'f32s' but has 3"), std::string::npos) << e;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));

  // Tuple literal with the wrong number of elements.
  xla::LiteralProto tuple;
  tuple.mutable_shape()->set_element_type(xla::TUPLE);
  tuple.mutable_shape()->add_tuple_shapes()->set_element_type(xla::F32);
  EXPECT_NE(Error(tuple).find("has 0 element literals but its shape has 1"), std::string::npos)
      << Error(tuple);

  // Writing an elided literal is refused.
  Literal elided(Shape::Array(PrimitiveType::kF32, {2}), /*allocate=*/false);
  elided.set_elided(true);
  xla::LiteralProto out;
  EXPECT_FALSE(LiteralToProto(elided, &out).ok());
}

}  // namespace
}  // namespace hlowb
