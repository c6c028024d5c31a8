// Binary vectors (oid/bson/vector.hpp and builder::append_vector): every header, padding and
// length the specification refuses, with the offset; the specification's worked examples; the
// writer's checks; the array conversions; Extended JSON of subtype 9. The specification's own
// JSON tests run in bson_vector_spec_test.cpp.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/bson/validate.hpp>
#include <oid/bson/vector.hpp>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/bson_bytes.hpp"
#include "support/hex.hpp"
#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::float32_view;
using oid::bson::packed_bits_view;
using oid::bson::vector_dtype;
using oid::bson::vector_view;
using oid::testing::bytes_of;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using oid::testing::hex_bytes;
using oid::testing::to_hex;

static_assert(std::ranges::random_access_range<float32_view>);
static_assert(std::is_trivially_copyable_v<vector_view>);

// The binary value's bytes (header and elements) of the one element of a document.
std::vector<std::uint8_t> binary_bytes(oid::bson::document_view doc) {
  const auto b = doc.begin()->get_binary();
  EXPECT_TRUE(b.has_value());
  if (!b) return {};
  EXPECT_EQ(b->subtype, oid::bson::binary_subtype::vector);
  return {b->bytes.begin(), b->bytes.end()};
}

TEST(BsonVectorTest, RefusesEveryMalformedHeaderAndLengthWithItsOffset) {
  struct test_case {
    std::string_view name, hex;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"no bytes", "", 0},
      {"one byte", "03", 1},
      {"unknown dtype", "04 00", 0},
      {"reserved size code of int8's type code", "02 00 01 02", 0},
      {"int8 with padding", "03 03 7F 07", 1},
      {"int8 with padding and no data", "03 01", 1},
      {"float32 with padding", "27 03 00 00 FE 42 00 00 E0 40", 1},
      {"float32 of 3 bytes", "27 00 2A 2A 2A", 2},
      {"float32 of 5 bytes", "27 00 2A 2A 2A 2A 2A", 6},
      {"float32 of 1 byte", "27 00 00", 2},
      {"packed bits padding 8", "10 08 01", 1},
      {"packed bits padding 255", "10 FF 00", 1},
      {"packed bits padding with no data", "10 01", 1},
      {"packed bits padding 7 with no data", "10 07", 1},
      {"packed bits unused bits set (prose test: [255], padding 7)", "10 07 FF", 2},
      {"packed bits lowest unused bit set", "10 03 7F 09", 3},
      {"packed bits highest unused bit set", "10 03 7F 04", 3},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto bytes = hex_bytes(c.hex);
    EXPECT_THAT(vector_view::from_bytes(bytes), HasErrorAt(errc::invalid_binary, c.offset));
  }
}

TEST(BsonVectorTest, AcceptsEveryDtypeByteOnlyForTheThreeTypes) {
  for (int d = 0; d < 256; ++d) {
    SCOPED_TRACE(d);
    const std::uint8_t bytes[] = {static_cast<std::uint8_t>(d), 0};
    const bool known = d == 0x03 || d == 0x27 || d == 0x10;
    const auto v = vector_view::from_bytes(bytes);
    EXPECT_EQ(v.has_value(), known);
    if (v) {
      EXPECT_EQ(static_cast<int>(v->dtype()), d);
    } else {
      EXPECT_THAT(v, HasErrorAt(errc::invalid_binary, 0));
    }
  }
}

// Every padding byte against every last byte: packed bits are valid exactly when the padding is 0
// to 7 and the padding's low bits of the last byte are zero.
TEST(BsonVectorTest, PackedBitsPaddingAndUnusedBitsSweep) {
  for (int p = 0; p < 256; ++p) {
    for (int last = 0; last < 256; ++last) {
      const std::uint8_t bytes[] = {0x10, static_cast<std::uint8_t>(p), 0xA5,
                                    static_cast<std::uint8_t>(last)};
      const bool want = p <= 7 && (last & ((1 << p) - 1)) == 0;
      const auto v = vector_view::from_bytes(bytes);
      ASSERT_EQ(v.has_value(), want) << "padding " << p << " last byte " << last;
      if (v) {
        EXPECT_EQ(v->size(), 16u - static_cast<unsigned>(p));
      } else {
        EXPECT_THAT(v, HasErrorAt(errc::invalid_binary, p > 7 ? 1u : 3u));
      }
    }
  }
}

// Only the padding byte 0 is accepted for int8 and float32, and any data length for int8.
TEST(BsonVectorTest, Int8AndFloat32PaddingSweep) {
  for (int p = 1; p < 256; ++p) {
    for (const std::uint8_t d : {std::uint8_t{0x03}, std::uint8_t{0x27}}) {
      const std::uint8_t bytes[] = {d, static_cast<std::uint8_t>(p), 1, 2, 3, 4};
      EXPECT_THAT(vector_view::from_bytes(bytes), HasErrorAt(errc::invalid_binary, 1));
    }
  }
  for (std::size_t n = 0; n < 20; ++n) {
    std::vector<std::uint8_t> bytes(2 + n, 0x80);
    bytes[0] = 0x03;
    bytes[1] = 0;
    const auto v = vector_view::from_bytes(bytes);
    ASSERT_TRUE(v.has_value()) << n;
    EXPECT_EQ(v->size(), n);
    bytes[0] = 0x27;
    const auto f = vector_view::from_bytes(bytes);
    EXPECT_EQ(f.has_value(), n % 4 == 0) << n;
    if (!f) {
      EXPECT_THAT(f, HasErrorAt(errc::invalid_binary, 2 + n / 4 * 4));
    }
  }
}

// The worked examples of the specification's "Examples" section.
TEST(BsonVectorTest, ReadsTheSpecificationExamples) {
  {
    const auto bytes = hex_bytes("10 04 EE E0");
    const auto v = vector_view::from_bytes(bytes);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->dtype(), vector_dtype::packed_bit);
    EXPECT_EQ(v->padding(), 4);
    EXPECT_EQ(v->size(), 12u);
    const auto bits = v->as_packed_bits();
    ASSERT_TRUE(bits.has_value());
    std::vector<int> got;
    for (std::size_t i = 0; i < bits->size(); ++i) got.push_back((*bits)[i] ? 1 : 0);
    EXPECT_EQ(got, (std::vector<int>{1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1, 0}));
    EXPECT_EQ(to_hex(bits->bytes), "EEE0");
    EXPECT_EQ(bits->padding, 4);
  }
  {
    const auto bytes = hex_bytes("10 07 80");
    const auto bits = vector_view::from_bytes(bytes)->as_packed_bits();
    ASSERT_TRUE(bits.has_value());
    ASSERT_EQ(bits->size(), 1u);
    EXPECT_TRUE((*bits)[0]);
  }
  {
    const auto bytes = hex_bytes("10 00 F0 42");
    const auto bits = vector_view::from_bytes(bytes)->as_packed_bits();
    ASSERT_TRUE(bits.has_value());
    std::vector<int> got;
    for (std::size_t i = 0; i < bits->size(); ++i) got.push_back((*bits)[i] ? 1 : 0);
    EXPECT_EQ(got, (std::vector<int>{1, 1, 1, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}));
  }
  {
    const auto bytes = hex_bytes("03 00 FF 00 01");
    const auto v = vector_view::from_bytes(bytes);
    ASSERT_TRUE(v.has_value());
    const auto i8 = v->as_int8();
    ASSERT_TRUE(i8.has_value());
    EXPECT_EQ(std::vector<std::int8_t>(i8->begin(), i8->end()),
              (std::vector<std::int8_t>{-1, 0, 1}));
    EXPECT_EQ(i8->data(), reinterpret_cast<const std::int8_t*>(bytes.data() + 2));  // in place
  }
  {
    const auto bytes = hex_bytes("27 00 00 00 80 3F 34 12 80 7F");
    const auto v = vector_view::from_bytes(bytes);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->size(), 2u);
    const auto f = v->as_float32();
    ASSERT_TRUE(f.has_value());
    ASSERT_EQ(f->size(), 2u);
    EXPECT_EQ((*f)[0], 1.0f);
    // NaN(0x001234), a signaling NaN: kept bit for bit by every way of reading.
    EXPECT_EQ(std::bit_cast<std::uint32_t>((*f)[1]), 0x7F801234u);
    const auto copied = f->to_vector();
    ASSERT_EQ(copied.size(), 2u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(copied[0]), 0x3F800000u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(copied[1]), 0x7F801234u);
    EXPECT_EQ(std::bit_cast<std::uint32_t>(f->begin()[1]), 0x7F801234u);
  }
}

// The elements of a float32 vector sit at any address: read from every alignment, they are the
// same, and copy_to stops at the shorter of the two.
TEST(BsonVectorTest, Float32ReadsAtAnyAlignment) {
  const std::string le = "0000803F 000000C0 0000C07F 0000807F 000080FF";  // 1, -2, NaN, +-inf
  const auto payload = hex_bytes(le);
  for (std::size_t shift = 0; shift < 8; ++shift) {
    SCOPED_TRACE(shift);
    std::vector<std::uint8_t> buf(shift, 0xAA);
    buf.push_back(0x27);
    buf.push_back(0x00);
    buf.insert(buf.end(), payload.begin(), payload.end());
    const auto v = vector_view::from_bytes(std::span(buf).subspan(shift));
    ASSERT_TRUE(v.has_value());
    const auto f = *v->as_float32();
    std::vector<std::uint32_t> bits;
    for (const float x : f) bits.push_back(std::bit_cast<std::uint32_t>(x));
    EXPECT_EQ(bits, (std::vector<std::uint32_t>{0x3F800000, 0xC0000000, 0x7FC00000, 0x7F800000,
                                                0xFF800000}));
    float out[3] = {};
    EXPECT_EQ(f.copy_to(out), 3u);
    EXPECT_EQ(out[1], -2.0f);
    EXPECT_EQ(f.end() - f.begin(), 5);
    EXPECT_EQ(f.copy_to(std::span<float>()), 0u);
  }
}

TEST(BsonVectorTest, TypedAccessToAnotherDtypeIsATypeMismatch) {
  const auto i8 = hex_bytes("03 00 01"), f32 = hex_bytes("27 00"), bits = hex_bytes("10 00 01");
  const auto a = *vector_view::from_bytes(i8), b = *vector_view::from_bytes(f32),
             c = *vector_view::from_bytes(bits);
  EXPECT_THAT(a.as_float32(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(a.as_packed_bits(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(b.as_int8(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(b.as_packed_bits(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(c.as_int8(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(c.as_float32(), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_TRUE(b.empty());
  EXPECT_TRUE(b.as_float32()->empty());
}

TEST(BsonVectorTest, FromElementNeedsABinaryOfSubtypeNine) {
  builder b;
  b.append_int32("n", 1)
      .append_binary("generic", 0, hex_bytes("03 00 01"))
      .append_binary("bad", 9, hex_bytes("03 05 01"))
      .append_binary("good", 9, hex_bytes("03 00 01"));
  const auto doc = b.view();
  EXPECT_THAT(vector_view::from_element(*doc.find("n")), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(vector_view::from_element(*doc.find("generic")), HasErrorAt(errc::type_mismatch, 0));
  EXPECT_THAT(vector_view::from_element(*doc.find("bad")), HasErrorAt(errc::invalid_binary, 1));
  const auto v = vector_view::from_element(*doc.find("good"));
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->to_binary().subtype, 9);
  EXPECT_EQ(to_hex(v->bytes()), "030001");
  EXPECT_EQ(to_hex(v->data()), "01");
  EXPECT_THAT(vector_view::from_binary({0x80, v->bytes()}), HasErrorAt(errc::type_mismatch, 0));
  // bson::validate checks the binary's length, not a vector's header: a document with a broken
  // vector is valid BSON, and from_element is where the vector is refused.
  EXPECT_TRUE(oid::bson::validate(doc.bytes()).has_value());
}

TEST(BsonVectorTest, DefaultIsTheEmptyInt8Vector) {
  const vector_view v;
  EXPECT_EQ(v.dtype(), vector_dtype::int8);
  EXPECT_EQ(v.size(), 0u);
  EXPECT_EQ(to_hex(v.bytes()), "0300");
}

TEST(BsonVectorTest, EqualityIsByteEquality) {
  // The prose test "comparison": one bit set, padding 7, against [255] (which is refused) and
  // against the same bits with another padding.
  const auto a1 = hex_bytes("10 07 80"), a2 = hex_bytes("10 07 80"), b = hex_bytes("10 06 80"),
             c = hex_bytes("03 00 80");
  EXPECT_EQ(*vector_view::from_bytes(a1), *vector_view::from_bytes(a2));
  EXPECT_NE(*vector_view::from_bytes(a1), *vector_view::from_bytes(b));
  EXPECT_NE(*vector_view::from_bytes(a1), *vector_view::from_bytes(c));
}

TEST(BsonVectorTest, DtypeNames) {
  EXPECT_EQ(to_string(vector_dtype::int8), "int8");
  EXPECT_EQ(to_string(vector_dtype::float32), "float32");
  EXPECT_EQ(to_string(vector_dtype::packed_bit), "packed_bit");
  EXPECT_EQ(to_string(static_cast<vector_dtype>(0x42)), "unknown");
}

// ---- Writing ---------------------------------------------------------------------------------

TEST(BsonVectorTest, WritesTheSpecifiedBytes) {
  const std::int8_t i8[] = {127, 7, -128, -1};
  const float f32[] = {127.0f, 7.0f, -0.0f, std::numeric_limits<float>::infinity()};
  const std::uint8_t bits[] = {0x7F, 0x08};
  builder b;
  b.append_vector("i", std::span<const std::int8_t>(i8));
  b.append_vector("f", std::span<const float>(f32));
  b.append_vector("p", packed_bits_view{bits, 3});
  b.append_vector("e", std::span<const float>());
  // The float32 bytes are little-endian whatever the host: 127.0f is 0x42FE0000.
  EXPECT_EQ(to_hex(bytes_of(b.view())),
            "43000000"
            "056900"
            "06000000"
            "09"
            "0300"
            "7F0780FF"
            "056600"
            "12000000"
            "09"
            "2700"
            "0000FE42"
            "0000E040"
            "00000080"
            "0000807F"
            "057000"
            "04000000"
            "09"
            "1003"
            "7F08"
            "056500"
            "02000000"
            "09"
            "2700"
            "00");
  EXPECT_TRUE(oid::bson::validate(b.view().bytes()).has_value());
}

TEST(BsonVectorTest, Float32IsWrittenBitForBit) {
  const float nan = std::bit_cast<float>(0x7F801234u);   // signaling, with a payload
  const float tiny = std::bit_cast<float>(0x00000001u);  // the smallest subnormal
  const float values[] = {nan, tiny, -tiny};
  builder b;
  b.append_vector("v", std::span<const float>(values));
  EXPECT_EQ(to_hex(binary_bytes(b.view())),
            "2700"
            "3412807F"
            "01000000"
            "01000080");
}

TEST(BsonVectorTest, RefusesPackedBitsTheSpecificationForbids) {
  struct test_case {
    std::string_view name, bytes;
    std::uint8_t padding;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"padding 8", "01", 8, 0},
      {"padding 255", "00", 255, 0},
      {"padding with no bytes", "", 1, 0},
      {"prose test: [255] with padding 7", "FF", 7, 0},
      {"unused bit set in the last of three bytes", "00 00 01", 1, 2},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    builder b;
    b.append_int32("before", 1);
    const auto before = bytes_of(b.view());
    const auto bytes = hex_bytes(c.bytes);
    EXPECT_THAT(b.try_append_vector("v", packed_bits_view{bytes, c.padding}),
                HasErrorAt(errc::invalid_binary, c.offset));
    EXPECT_EQ(bytes_of(b.view()), before);  // nothing written
    EXPECT_THROW(b.append_vector("v", packed_bits_view{bytes, c.padding}), oid::exception);
  }
}

TEST(BsonVectorTest, RefusesAKeyWithNul) {
  const std::int8_t v[] = {1};
  builder b;
  EXPECT_THAT(b.try_append_vector(std::string_view("a\0b", 3), std::span<const std::int8_t>(v)),
              HasErrorAt(errc::invalid_key, 1));
  EXPECT_EQ(b.view().size(), 5u);
}

TEST(BsonVectorTest, AppendsVectorsReadFromItsOwnDocument) {
  builder b(16);  // small, so that every append below moves the storage
  b.append_binary("p", 9, hex_bytes("10 01 FE"));
  b.append_binary("i", 9, hex_bytes("03 00 01 02 03 04 05 06 07 08 09 0A"));
  for (int round = 0; round < 3; ++round) {
    const auto p = *vector_view::from_element(*b.view().find("p"));
    b.append_vector("p2", *p.as_packed_bits());
    const auto i = *vector_view::from_element(*b.view().find("i"));
    b.append_vector("i2", *i.as_int8());
    const auto i_again = *vector_view::from_element(*b.view().find("i"));
    b.append_vector("i3", i_again);
    const auto i_last = *vector_view::from_element(*b.view().find("i"));
    b.append_vector_as_array("a", i_last);
  }
  const auto doc = *oid::bson::validate(b.view().bytes());
  int seen = 0;
  for (const auto& e : doc) {
    if (e.key() == "p2") {
      EXPECT_EQ(to_hex(vector_view::from_element(e)->bytes()), "1001FE");
    } else if (e.key() == "i2" || e.key() == "i3") {
      EXPECT_EQ(to_hex(vector_view::from_element(e)->bytes()), "03000102030405060708090A");
    } else if (e.key() == "a") {
      EXPECT_EQ(oid::bson::to_json(oid::bson::document_view(*e.get_array())),
                R"({"0":1,"1":2,"2":3,"3":4,"4":5,"5":6,"6":7,"7":8,"8":9,"9":10})");
    } else {
      continue;
    }
    ++seen;
  }
  EXPECT_EQ(seen, 12);
}

// ---- Arrays ----------------------------------------------------------------------------------

// The array of the document {"a": [...]} that `json` spells.
struct json_array {
  explicit json_array(std::string_view json) : doc(oid::bson::from_json(json).value()) {}
  oid::bson::document_view view() const { return *doc.view().find("a")->get_array(); }
  oid::bson::document doc;
};

TEST(BsonVectorTest, ConvertsArraysOfNumbers) {
  struct test_case {
    std::string_view name;
    vector_dtype dtype;
    std::string_view json;
    std::uint8_t padding;
    std::string_view want;  // the binary's bytes
  };
  const test_case cases[] = {
      {"int8 limits", vector_dtype::int8, R"({"a": [-128, 127, 0]})", 0, "0300807F00"},
      {"int8 from int64", vector_dtype::int8, R"({"a": [{"$numberLong": "-5"}]})", 0, "0300FB"},
      {"int8 empty", vector_dtype::int8, R"({"a": []})", 0, "0300"},
      {"packed bits", vector_dtype::packed_bit, R"({"a": [127, 8]})", 3, "10037F08"},
      {"packed bits 0 and 255", vector_dtype::packed_bit, R"({"a": [0, 255]})", 0, "100000FF"},
      {"float32 rounds to nearest", vector_dtype::float32, R"({"a": [0.1, -7.7]})", 0,
       "2700CDCCCC3D6666F6C0"},
      {"float32 infinities", vector_dtype::float32,
       R"({"a": [{"$numberDouble": "-Infinity"}, {"$numberDouble": "Infinity"}]})", 0,
       "27000000 80FF 0000 807F"},
      {"float32 NaN", vector_dtype::float32, R"({"a": [{"$numberDouble": "NaN"}]})", 0,
       "27000000C07F"},
      // Beyond the largest float: up to half an ulp (2^103) above it rounds down to it, from
      // there on to infinity, as IEEE 754 does.
      {"float32 just above the largest float", vector_dtype::float32,
       R"({"a": [3.4028235170913126e38, -3.4028235677973245e38]})", 0, "2700FFFF7F7FFFFF7FFF"},
      {"float32 halfway above the largest float and beyond", vector_dtype::float32,
       R"({"a": [3.4028235677973366e38, 1e300, -1e300]})", 0, "27000000807F0000807F000080FF"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const json_array a(c.json);
    builder b;
    ASSERT_TRUE(b.try_append_vector("v", c.dtype, a.view(), c.padding).has_value());
    EXPECT_EQ(to_hex(binary_bytes(b.view())), to_hex(hex_bytes(c.want)));
  }
}

TEST(BsonVectorTest, RefusesArraysTheSpecificationCannotConvert) {
  struct test_case {
    std::string_view name;
    vector_dtype dtype;
    std::string_view json;
    std::uint8_t padding;
    errc code;
    std::size_t offset;  // in the array document: 4, then 7 per int32 element (type, "0", NUL, 4)
  };
  const test_case cases[] = {
      {"int8 overflow", vector_dtype::int8, R"({"a": [1, 128]})", 0, errc::invalid_value, 11},
      {"int8 underflow", vector_dtype::int8, R"({"a": [-129]})", 0, errc::invalid_value, 4},
      {"int8 from a double", vector_dtype::int8, R"({"a": [127.77]})", 0, errc::type_mismatch, 4},
      {"int8 from an integral double", vector_dtype::int8, R"({"a": [1.0]})", 0,
       errc::type_mismatch, 4},
      {"int8 from a string", vector_dtype::int8, R"({"a": ["1"]})", 0, errc::type_mismatch, 4},
      {"int8 with padding", vector_dtype::int8, R"({"a": [1]})", 3, errc::invalid_binary, 0},
      {"float32 with padding", vector_dtype::float32, R"({"a": [1.5]})", 1, errc::invalid_binary,
       0},
      {"float32 from an int32", vector_dtype::float32, R"({"a": [1]})", 0, errc::type_mismatch, 4},
      {"float32 from an int64", vector_dtype::float32, R"({"a": [{"$numberLong": "1"}]})", 0,
       errc::type_mismatch, 4},
      {"packed bits overflow", vector_dtype::packed_bit, R"({"a": [256]})", 0, errc::invalid_value,
       4},
      {"packed bits underflow", vector_dtype::packed_bit, R"({"a": [-1]})", 0, errc::invalid_value,
       4},
      {"packed bits from a double", vector_dtype::packed_bit, R"({"a": [127.5]})", 0,
       errc::type_mismatch, 4},
      {"packed bits padding 8", vector_dtype::packed_bit, R"({"a": [1]})", 8, errc::invalid_binary,
       0},
      {"packed bits padding with no data", vector_dtype::packed_bit, R"({"a": []})", 1,
       errc::invalid_binary, 0},
      {"packed bits unused bits set", vector_dtype::packed_bit, R"({"a": [0, 255]})", 7,
       errc::invalid_binary, 11},
      {"unknown dtype", static_cast<vector_dtype>(0x42), R"({"a": []})", 0, errc::invalid_binary,
       0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const json_array a(c.json);
    builder b;
    EXPECT_THAT(b.try_append_vector("v", c.dtype, a.view(), c.padding),
                HasErrorAt(c.code, c.offset));
    EXPECT_EQ(b.view().size(), 5u);  // nothing written
  }
}

TEST(BsonVectorTest, WritesVectorsAsArrays) {
  builder b;
  b.append_binary("i", 9, hex_bytes("03 00 80 FF 7F"));
  b.append_binary("f", 9, hex_bytes("27 00 0000C03F 000080FF"));
  b.append_binary("p", 9, hex_bytes("10 03 7F 08"));
  b.append_binary("e", 9, hex_bytes("27 00"));
  builder out;
  for (const auto& e : b.view()) out.append_vector_as_array(e.key(), *vector_view::from_element(e));
  EXPECT_EQ(oid::bson::to_json(out.view()),
            R"({"i":[-128,-1,127],"f":[1.5,{"$numberDouble":"-Infinity"}],"p":[127,8],"e":[]})");
  // And back: each array converts to the same vector.
  const vector_dtype dtypes[] = {vector_dtype::int8, vector_dtype::float32,
                                 vector_dtype::packed_bit, vector_dtype::float32};
  const std::uint8_t paddings[] = {0, 0, 3, 0};
  std::size_t k = 0;
  builder again;
  for (const auto& e : out.view()) {
    again.append_vector(e.key(), dtypes[k], *e.get_array(), paddings[k]);
    ++k;
  }
  EXPECT_EQ(again.view(), b.view());
}

TEST(BsonVectorTest, AppendDispatchesVectorViews) {
  const std::uint8_t bits[] = {0x80};
  const auto stored = hex_bytes("03 00 05");
  builder b;
  b.append("p", packed_bits_view{bits, 7}).append("i", *vector_view::from_bytes(stored));
  EXPECT_EQ(to_hex(bytes_of(b.view())),
            "1B000000"
            "057000"
            "03000000"
            "09"
            "100780"
            "056900"
            "03000000"
            "09"
            "030005"
            "00");
}

// ---- Extended JSON ---------------------------------------------------------------------------

// Subtype 9 is an ordinary $binary in Extended JSON, canonical and relaxed alike: "09".
TEST(BsonVectorTest, ExtendedJsonIsAnOrdinaryBinaryWithSubtype09) {
  const float f[] = {127.0f, 7.0f};
  builder b;
  b.append_vector("vector", std::span<const float>(f));
  const std::string want = R"({"vector":{"$binary":{"base64":"JwAAAP5CAADgQA==","subType":"09"}}})";
  EXPECT_EQ(oid::bson::to_json(b.view(), oid::bson::json_mode::canonical), want);
  EXPECT_EQ(oid::bson::to_json(b.view(), oid::bson::json_mode::relaxed), want);
  for (const std::string_view text :
       {std::string_view(want),
        std::string_view(
            R"({"vector": {"$binary": {"subType": "9", "base64": "JwAAAP5CAADgQA=="}}})")}) {
    SCOPED_TRACE(text);
    const auto doc = oid::bson::from_json(text);
    ASSERT_TRUE(doc.has_value());
    EXPECT_EQ(doc->view(), b.view());
    const auto v = vector_view::from_element(*doc->view().find("vector"));
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->as_float32()->to_vector(), (std::vector<float>{127.0f, 7.0f}));
  }
  // The legacy form, when asked for.
  const auto legacy = oid::bson::from_json(
      R"({"vector": {"$binary": "JwAAAP5CAADgQA==", "$type": "09"}})", {.legacy = true});
  ASSERT_TRUE(legacy.has_value());
  EXPECT_EQ(legacy->view(), b.view());
  // A malformed vector is still a valid binary value in Extended JSON: the reader keeps it, and
  // the vector reader refuses it.
  const auto broken =
      oid::bson::from_json(R"({"v": {"$binary": {"base64": "JwMAAA==", "subType": "09"}}})");
  ASSERT_TRUE(broken.has_value());
  EXPECT_THAT(vector_view::from_element(*broken->view().find("v")),
              HasErrorAt(errc::invalid_binary, 1));
  EXPECT_EQ(oid::bson::to_json(broken->view()),
            R"({"v":{"$binary":{"base64":"JwMAAA==","subType":"09"}}})");
}

}  // namespace
