#include <fmt/format.h>
#include <gtest/gtest.h>

#include <oid/objectid/fmt.hpp>
#include <oid/objectid/object_id.hpp>
#include <sstream>
#include <type_traits>
#include <unordered_set>

#include "support/matchers.hpp"

namespace {

using oid::object_id;
using oid::testing::HasErrorAt;
using oid::testing::HasValue;
using std::chrono::seconds;
using std::chrono::sys_seconds;

static_assert(std::is_trivially_copyable_v<object_id>);
static_assert(sizeof(object_id) == 12);
static_assert(std::is_nothrow_default_constructible_v<object_id>);

TEST(ObjectIdTest, HexRoundTripsAndWritesLowercase) {
  const auto id = object_id::from_hex("4DF2DCEC2CDCD20936A8B817");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->to_hex(), "4df2dcec2cdcd20936a8b817");
  const object_id::bytes_type want = {0x4d, 0xf2, 0xdc, 0xec, 0x2c, 0xdc,
                                      0xd2, 0x09, 0x36, 0xa8, 0xb8, 0x17};
  EXPECT_EQ(id->bytes(), want);
}

TEST(ObjectIdTest, Base64OfTheIssueExample) {
  const object_id id("4df2dcec2cdcd20936a8b817");
  EXPECT_EQ(id.to_base64(), "TfLc7Czc0gk2qLgX");
  EXPECT_THAT(object_id::from_base64("TfLc7Czc0gk2qLgX"), HasValue(id));
  EXPECT_THAT(object_id::parse("TfLc7Czc0gk2qLgX"), HasValue(id));
  EXPECT_THAT(object_id::parse("4df2dcec2cdcd20936a8b817"), HasValue(id));
}

TEST(ObjectIdTest, FromHexReportsCodeAndOffset) {
  struct test_case {
    std::string_view name, input;
    oid::errc want;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"empty", "", oid::errc::invalid_length, 0},
      {"23 chars", "00000000000000000000000", oid::errc::invalid_length, 0},
      {"25 chars", "0000000000000000000000000", oid::errc::invalid_length, 0},
      {"non-hex at 5", "00000g000000000000000000", oid::errc::invalid_hex, 5},
      {"non-hex at 0", "z00000000000000000000000", oid::errc::invalid_hex, 0},
      {"non-hex last", "00000000000000000000000x", oid::errc::invalid_hex, 23},
      {"space", "4df2dcec2cdcd20936a8b81 ", oid::errc::invalid_hex, 23},
      {"signed char",
       "\xc8"
       "0000000000000000000000b",
       oid::errc::invalid_hex, 0},
      // "\0" then the digits as a separate literal: "\000..." would be one octal escape, leaving
      // a 21-character literal behind a 24-character view.
      {"NUL inside",
       std::string_view("0000\0"
                        "0000000000000000000",
                        24),
       oid::errc::invalid_hex, 4},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(object_id::from_hex(c.input), HasErrorAt(c.want, c.offset));
  }
}

TEST(ObjectIdTest, FromBase64ReportsCodeAndOffset) {
  struct test_case {
    std::string_view name, input;
    oid::errc want;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"15 chars", "TfLc7Czc0gk2qLg", oid::errc::invalid_length, 0},
      {"padding", "TfLc7Czc0gk2qL==", oid::errc::invalid_base64, 14},
      {"url-safe alphabet", "TfLc7Czc0gk2qL-_", oid::errc::invalid_base64, 14},
      {"space", " fLc7Czc0gk2qLgX", oid::errc::invalid_base64, 0},
      {"high byte",
       "TfLc7Czc\xff"
       "gk2qLgX",
       oid::errc::invalid_base64, 8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(object_id::from_base64(c.input), HasErrorAt(c.want, c.offset));
  }
}

// Every byte value in every position: exactly the 22 hex digits parse, to the right nibble.
TEST(ObjectIdTest, EveryByteValueInEveryHexPosition) {
  for (std::size_t pos = 0; pos < 24; ++pos) {
    for (int v = 0; v < 256; ++v) {
      std::string s(24, '0');
      s[pos] = static_cast<char>(v);
      const auto r = object_id::from_hex(s);
      const bool is_hex =
          (v >= '0' && v <= '9') || (v >= 'a' && v <= 'f') || (v >= 'A' && v <= 'F');
      ASSERT_EQ(r.has_value(), is_hex) << "pos " << pos << " byte " << v;
      if (is_hex) {
        const int nibble = v <= '9' ? v - '0' : (v | 0x20) - 'a' + 10;
        const int byte = r->bytes()[pos / 2];
        ASSERT_EQ(pos % 2 == 0 ? byte >> 4 : byte & 15, nibble);
      } else {
        ASSERT_EQ(r.error().code, oid::errc::invalid_hex);
        ASSERT_EQ(r.error().offset, pos);
      }
    }
  }
}

TEST(ObjectIdTest, EveryByteValueInEveryBase64Position) {
  const std::string_view alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t pos = 0; pos < 16; ++pos) {
    for (int v = 0; v < 256; ++v) {
      std::string s(16, 'A');
      s[pos] = static_cast<char>(v);
      const auto r = object_id::from_base64(s);
      const auto digit = alphabet.find(static_cast<char>(v));
      ASSERT_EQ(r.has_value(), digit != std::string_view::npos) << "pos " << pos << " byte " << v;
      if (r) {
        ASSERT_EQ(r->to_base64(), s);
      } else {
        ASSERT_EQ(r.error().offset, pos);
      }
    }
  }
}

TEST(ObjectIdTest, FromBytesChecksLength) {
  const std::uint8_t bytes[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
  EXPECT_THAT(object_id::from_bytes(std::span(bytes, 12)),
              HasValue(object_id::from_hex("0102030405060708090a0b0c").value()));
  EXPECT_THAT(object_id::from_bytes(std::span(bytes, 13)),
              HasErrorAt(oid::errc::invalid_length, 0));
  EXPECT_THAT(object_id::from_bytes({}), HasErrorAt(oid::errc::invalid_length, 0));
}

TEST(ObjectIdTest, ThrowingConstructor) {
  EXPECT_THROW(object_id("xyz"), oid::exception);
  try {
    object_id("00000g000000000000000000");
  } catch (const oid::exception& e) {
    EXPECT_EQ(e.code(), oid::errc::invalid_hex);
    EXPECT_EQ(e.offset(), 5u);
  }
}

// The specification's timestamp test plan: read as unsigned, big-endian.
TEST(ObjectIdTest, TimestampsAreUnsigned) {
  struct test_case {
    std::string_view hex;
    std::uint32_t raw;
    std::int64_t unix;
  };
  constexpr test_case cases[] = {
      {"000000000000000000000000", 0x00000000u, 0},           // 1970-01-01T00:00:00Z
      {"7fffffff0000000000000000", 0x7FFFFFFFu, 2147483647},  // 2038-01-19T03:14:07Z
      {"800000000000000000000000", 0x80000000u, 2147483648},  // 2038-01-19T03:14:08Z
      {"ffffffff0000000000000000", 0xFFFFFFFFu, 4294967295},  // 2106-02-07T06:28:15Z
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.hex);
    const object_id id(c.hex);
    EXPECT_EQ(id.timestamp(), c.raw);
    EXPECT_EQ(id.time(), sys_seconds{seconds{c.unix}});
  }
}

TEST(ObjectIdTest, IssueExampleTimes) {
  EXPECT_EQ(object_id("4df2dcec2cdcd20936a8b817").timestamp(), 1307761900u);
  EXPECT_EQ(object_id("4c41e78f238d3b9090000001").time(),
            sys_seconds{seconds{1279387535}});  // 2010-07-17T17:25:35Z
}

TEST(ObjectIdTest, OrderIsByteOrderSoTimeOrder) {
  const object_id a("000000010000000000000000"), b("00000001000000000000ffff"),
      c("000000020000000000000000"), d("800000000000000000000000");
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_LT(c, d);  // unsigned: 2038 sorts after 1970
  EXPECT_EQ(a, object_id("000000010000000000000000"));
  EXPECT_EQ(object_id{}, object_id("000000000000000000000000"));
}

TEST(ObjectIdTest, TimeBounds) {
  const auto t = sys_seconds{seconds{1285891200}};  // 2010-10-01T00:00:00Z
  EXPECT_THAT(object_id::min_for_time(t), HasValue(object_id("4ca524800000000000000000")));
  EXPECT_THAT(object_id::max_for_time(t), HasValue(object_id("4ca52480ffffffffffffffff")));
  EXPECT_THAT(object_id::min_for_time(sys_seconds{seconds{-1}}),
              HasErrorAt(oid::errc::time_out_of_range, 0));
  EXPECT_THAT(object_id::max_for_time(sys_seconds{seconds{4294967296}}),
              HasErrorAt(oid::errc::time_out_of_range, 0));
  EXPECT_THAT(object_id::min_for_time(sys_seconds{seconds{4294967295}}),
              HasValue(object_id("ffffffff0000000000000000")));
  EXPECT_THAT(object_id::min_for_time(sys_seconds{}), HasValue(object_id{}));
  // Every id of a second lies between its bounds; ids of the next second do not.
  const object_id inside("4ca524801234567890abcdef");
  EXPECT_LE(*object_id::min_for_time(t), inside);
  EXPECT_GE(*object_id::max_for_time(t), inside);
  EXPECT_GT(*object_id::min_for_time(t + seconds{1}), inside);
}

TEST(ObjectIdTest, HashAndStreamAndFmt) {
  std::unordered_set<object_id> set;
  set.insert(object_id("4df2dcec2cdcd20936a8b817"));
  set.insert(object_id("4df2dcec2cdcd20936a8b817"));
  set.insert(object_id("4df2dcec2cdcd20936a8b818"));
  EXPECT_EQ(set.size(), 2u);
  EXPECT_NE(std::hash<object_id>{}(object_id("4df2dcec2cdcd20936a8b817")),
            std::hash<object_id>{}(object_id("4df2dcec2cdcd20936a8b818")));
  std::ostringstream os;
  os << object_id("4df2dcec2cdcd20936a8b817");
  EXPECT_EQ(os.str(), "4df2dcec2cdcd20936a8b817");
  const object_id id("4df2dcec2cdcd20936a8b817");
  EXPECT_EQ(fmt::format("{} {:b}", id, id), "4df2dcec2cdcd20936a8b817 TfLc7Czc0gk2qLgX");
}

TEST(ObjectIdTest, ConstexprBounds) {
  constexpr object_id lo = object_id::min_for_timestamp(0x01020304);
  static_assert(lo.timestamp() == 0x01020304);
  static_assert(object_id::max_for_timestamp(7).bytes()[11] == 0xFF);
}

}  // namespace
