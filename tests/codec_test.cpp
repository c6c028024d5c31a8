// The codecs every module shares, each in one place: the byte-order loads and stores
// (oid/detail/endian.hpp), hex (src/detail/hex.hpp; its vector codec against the portable one it
// replaces on x86-64: both must agree on every input the public API can give them, including
// every bad character), base64 (src/detail/base64.hpp) and ISO-8601 times (src/detail/iso8601.hpp).
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
#include <oid/detail/endian.hpp>
#include <random>
#include <string>
#include <vector>

#include "detail/ascii.hpp"
#include "detail/base64.hpp"
#include "detail/hex.hpp"
#include "detail/iso8601.hpp"

namespace {

using oid::detail::decode_hex12;
using oid::detail::decode_hex12_scalar;
using oid::detail::encode_hex12;
using oid::detail::encode_hex12_scalar;

std::array<std::uint8_t, 12> random_bytes(std::mt19937& rng) {
  std::array<std::uint8_t, 12> b{};
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

TEST(HexCodecTest, EncodeAgreesForEveryByteValueInEveryPosition) {
  std::mt19937 rng(1);
  for (std::size_t pos = 0; pos < 12; ++pos) {
    for (int v = 0; v < 256; ++v) {
      auto b = random_bytes(rng);
      b[pos] = static_cast<std::uint8_t>(v);
      char fast[24], slow[24];
      encode_hex12(b.data(), fast);
      encode_hex12_scalar(b.data(), slow);
      ASSERT_EQ(std::string(fast, 24), std::string(slow, 24)) << "byte " << pos << " = " << v;
    }
  }
}

TEST(HexCodecTest, EncodeWritesLowercaseDigits) {
  const std::array<std::uint8_t, 12> b{0x01, 0x23, 0x45, 0x67, 0x89, 0xAB,
                                       0xCD, 0xEF, 0x00, 0xFF, 0x9A, 0xF0};
  char out[25] = {};
  encode_hex12(b.data(), out);
  EXPECT_STREQ(out, "0123456789abcdef00ff9af0");
}

// Every character value (0-255) in every position, inside otherwise valid text in both cases:
// the two decoders must give the same verdict, the same offset and the same bytes.
TEST(HexCodecTest, DecodeAgreesForEveryCharacterInEveryPosition) {
  std::mt19937 rng(2);
  for (std::size_t pos = 0; pos < 24; ++pos) {
    for (int c = 0; c < 256; ++c) {
      const auto b = random_bytes(rng);
      char text[24];
      encode_hex12_scalar(b.data(), text);
      if (c % 2 == 1) {  // mix upper-case digits into half the inputs
        for (auto& ch : text) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      }
      text[pos] = static_cast<char>(c);
      std::array<std::uint8_t, 12> fast{}, slow{};
      const int fast_bad = decode_hex12(text, fast.data());
      const int slow_bad = decode_hex12_scalar(text, slow.data());
      ASSERT_EQ(fast_bad, slow_bad) << "position " << pos << " character " << c;
      const bool is_digit = std::isxdigit(c) != 0;
      ASSERT_EQ(fast_bad, is_digit ? -1 : static_cast<int>(pos));
      if (is_digit) {
        ASSERT_EQ(fast, slow);
      }
    }
  }
}

TEST(HexCodecTest, DecodeReportsTheFirstOfSeveralBadCharacters) {
  std::string text = "00112233445566778899aabb";
  text[20] = 'x';
  text[7] = '\xc8';
  text[3] = 'g';
  std::array<std::uint8_t, 12> out{};
  EXPECT_EQ(decode_hex12(text.data(), out.data()), 3);
  EXPECT_EQ(decode_hex12_scalar(text.data(), out.data()), 3);
}

TEST(HexCodecTest, DecodeReadsOnlyTwentyFourCharacters) {
  // The text sits at the very end of an exact-size heap block, so AddressSanitizer reports any
  // read past the 24th character.
  const auto text = std::make_unique<char[]>(24);
  std::memcpy(text.get(), "4df2dcec2cdcd20936a8b817", 24);
  std::array<std::uint8_t, 12> out{};
  ASSERT_EQ(decode_hex12(text.get(), out.data()), -1);
  EXPECT_EQ(out[0], 0x4d);
  EXPECT_EQ(out[11], 0x17);
  auto enc = std::make_unique<char[]>(24);
  encode_hex12(out.data(), enc.get());
  EXPECT_EQ(std::string(enc.get(), 24), "4df2dcec2cdcd20936a8b817");
}

// ---- oid/detail/endian.hpp ------------------------------------------------------------------

namespace endian_test {

using oid::detail::load_be_u32;
using oid::detail::load_be_u64;
using oid::detail::load_le_i32;
using oid::detail::load_le_u32;
using oid::detail::load_le_u64;
using oid::detail::store_be_u32;
using oid::detail::store_be_u64;
using oid::detail::store_le_u32;
using oid::detail::store_le_u64;

TEST(EndianTest, LoadsReadTheBytesInTheirOrderAtAnyAlignment) {
  std::array<std::uint8_t, 16> buf{};
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<std::uint8_t>(0x10 + i);
  for (std::size_t at = 0; at <= 8; ++at) {  // every offset, so unaligned loads are covered
    SCOPED_TRACE(at);
    const std::uint8_t* p = buf.data() + at;
    std::uint64_t le = 0, be = 0;
    for (int i = 7; i >= 0; --i) le = le << 8 | p[i];
    for (int i = 0; i < 8; ++i) be = be << 8 | p[i];
    EXPECT_EQ(load_le_u64(p), le);
    EXPECT_EQ(load_be_u64(p), be);
    EXPECT_EQ(load_le_u32(p), static_cast<std::uint32_t>(le));
    EXPECT_EQ(load_be_u32(p), static_cast<std::uint32_t>(be >> 32));
  }
}

TEST(EndianTest, KnownValues) {
  const std::uint8_t minus_two[4] = {0xFE, 0xFF, 0xFF, 0xFF};
  EXPECT_EQ(load_le_i32(minus_two), -2);
  EXPECT_EQ(load_le_u32(minus_two), 0xFFFFFFFEu);
  const std::uint8_t doc_size[4] = {0x0C, 0x00, 0x00, 0x00};  // a BSON length prefix: 12
  EXPECT_EQ(load_le_i32(doc_size), 12);
  EXPECT_EQ(load_be_u32(doc_size), 0x0C000000u);
}

TEST(EndianTest, StoresWriteExactlyTheirBytesAndLoadsReadThemBack) {
  std::array<std::uint8_t, 12> buf{};
  buf.fill(0xAA);
  store_le_u32(buf.data() + 1, 0x01020304u);
  EXPECT_EQ(buf, (std::array<std::uint8_t, 12>{0xAA, 0x04, 0x03, 0x02, 0x01, 0xAA, 0xAA, 0xAA, 0xAA,
                                               0xAA, 0xAA, 0xAA}));
  buf.fill(0xAA);
  store_be_u32(buf.data() + 1, 0x01020304u);
  EXPECT_EQ(buf, (std::array<std::uint8_t, 12>{0xAA, 0x01, 0x02, 0x03, 0x04, 0xAA, 0xAA, 0xAA, 0xAA,
                                               0xAA, 0xAA, 0xAA}));
  buf.fill(0xAA);
  store_le_u64(buf.data() + 3, 0x0102030405060708ull);
  EXPECT_EQ(buf, (std::array<std::uint8_t, 12>{0xAA, 0xAA, 0xAA, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03,
                                               0x02, 0x01, 0xAA}));
  EXPECT_EQ(load_le_u64(buf.data() + 3), 0x0102030405060708ull);
  buf.fill(0xAA);
  store_be_u64(buf.data() + 3, 0x0102030405060708ull);
  EXPECT_EQ(buf, (std::array<std::uint8_t, 12>{0xAA, 0xAA, 0xAA, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                               0x07, 0x08, 0xAA}));
  EXPECT_EQ(load_be_u64(buf.data() + 3), 0x0102030405060708ull);
}

}  // namespace endian_test

// ---- src/detail/hex.hpp: any length -----------------------------------------------------------

TEST(HexCodecTest, AnyLengthRoundTripsAndReportsTheFirstBadCharacter) {
  const std::uint8_t bytes[] = {0x00, 0x7F, 0x80, 0xFF, 0x0A};
  EXPECT_EQ(oid::detail::to_hex(bytes), "007f80ff0a");
  std::uint8_t back[5] = {};
  EXPECT_EQ(oid::detail::decode_hex("007F80fF0a", 5, back), -1);
  EXPECT_EQ(std::memcmp(back, bytes, 5), 0);
  EXPECT_EQ(oid::detail::decode_hex("00g0", 2, back), 2);
  EXPECT_EQ(oid::detail::decode_hex("000g", 2, back), 3);
  std::uint32_t v = 0;
  EXPECT_TRUE(oid::detail::parse_hex_u32("0080", v));
  EXPECT_EQ(v, 0x80u);
  EXPECT_TRUE(oid::detail::parse_hex_u32("ffffffff", v));
  EXPECT_EQ(v, 0xFFFFFFFFu);
  EXPECT_FALSE(oid::detail::parse_hex_u32("", v));
  EXPECT_FALSE(oid::detail::parse_hex_u32("123456789", v));
  EXPECT_FALSE(oid::detail::parse_hex_u32("-1", v));
}

// ---- src/detail/base64.hpp ----------------------------------------------------------------------

TEST(Base64CodecTest, RoundTripsEveryLengthUpToFortyEight) {
  std::mt19937 rng(3);
  for (std::size_t n = 0; n <= 48; ++n) {
    SCOPED_TRACE(n);
    std::vector<std::uint8_t> in(n);
    for (auto& b : in) b = static_cast<std::uint8_t>(rng());
    std::string text(oid::detail::base64_size(n), '?');
    ASSERT_EQ(oid::detail::encode_base64(in.data(), n, text.data()), text.data() + text.size());
    EXPECT_EQ(text.size() % 4, 0u);
    std::vector<std::uint8_t> out(text.size());
    EXPECT_EQ(oid::detail::decode_base64(text.data(), text.size(), out.data()),
              static_cast<std::ptrdiff_t>(n));
    out.resize(n);
    EXPECT_EQ(out, in);
  }
}

TEST(Base64CodecTest, KnownTextsAndRejects) {
  const std::uint8_t foob[] = {'f', 'o', 'o', 'b'};
  char text[8];
  oid::detail::encode_base64(foob, 4, text);
  EXPECT_EQ(std::string(text, 8), "Zm9vYg==");  // RFC 4648 section 10
  std::uint8_t out[8];
  for (const char* bad : {"Zm9vYg=", "Zm9v=g==", "Zm9vY===", "Zm9v Yg=", "====", "Zm9vYg=A"}) {
    SCOPED_TRACE(bad);
    EXPECT_EQ(oid::detail::decode_base64(bad, std::strlen(bad), out), -1);
  }
  // In place, as the Extended JSON reader decodes.
  char buf[] = "Zm9vYmFy";
  EXPECT_EQ(oid::detail::decode_base64(buf, 8, reinterpret_cast<std::uint8_t*>(buf)), 6);
  EXPECT_EQ(std::string(buf, 6), "foobar");
  EXPECT_LT(oid::detail::decode_base64_group("AA-A"), 0);
  EXPECT_EQ(oid::detail::decode_base64_group("////"), 0xFFFFFF);
}

// ---- src/detail/iso8601.hpp -------------------------------------------------------------------

TEST(Iso8601Test, BothFormsAgreeOnRfc3339Texts) {
  using oid::detail::iso8601_form;
  using oid::detail::parse_iso8601_ms;
  struct row {
    const char* text;
    std::int64_t ms;
  };
  for (const row c :
       {row{"1970-01-01T00:00:00Z", 0}, row{"1970-01-01T00:00:00.5z", 500},
        row{"1969-12-31t23:59:59.9999Z", -1}, row{"2000-02-29T12:00:00+01:30", 951820200000},
        row{"2000-02-29T12:00:00-0130", 951831000000}}) {
    SCOPED_TRACE(c.text);
    for (const auto form : {iso8601_form::rfc3339, iso8601_form::lenient}) {
      const auto got = parse_iso8601_ms(c.text, form);
      ASSERT_TRUE(got.has_value());
      EXPECT_EQ(*got, c.ms);
    }
  }
}

TEST(Iso8601Test, OnlyLenientAcceptsTheShortForms) {
  using oid::detail::iso8601_form;
  using oid::detail::parse_iso8601_ms;
  struct row {
    const char* text;
    std::int64_t ms;
    std::size_t rfc3339_offset;  // where the strict form stops
  };
  for (const row c :
       {row{"1970-01-02", 86400000, 10}, row{"1970-01-01 00:00:01Z", 1000, 10},
        row{"1970-01-01T00:01", 60000, 16}, row{"1970-01-01T00:00:01", 1000, 19},
        row{"1970-01-01T00:00:01,5Z", 1000 + 500, 19}, row{"1970-01-01T01:00:00+01", 0, 22}}) {
    SCOPED_TRACE(c.text);
    const auto lenient = parse_iso8601_ms(c.text, iso8601_form::lenient);
    ASSERT_TRUE(lenient.has_value());
    EXPECT_EQ(*lenient, c.ms);
    const auto strict = parse_iso8601_ms(c.text, iso8601_form::rfc3339);
    ASSERT_FALSE(strict.has_value());
    EXPECT_EQ(strict.error().code, oid::errc::invalid_time);
    EXPECT_EQ(strict.error().offset, c.rfc3339_offset);
  }
}

TEST(Iso8601Test, ErrorsPointAtTheField) {
  using oid::detail::iso8601_form;
  using oid::detail::parse_iso8601_ms;
  struct row {
    const char* text;
    std::size_t offset;
  };
  for (const row c : {row{"2021-13-01T00:00:00Z", 5}, row{"2021-02-30T00:00:00Z", 8},
                      row{"2021-02-01T24:00:00Z", 11}, row{"2021-02-01T00:60:00Z", 14},
                      row{"2021-02-01T00:00:60Z", 17}, row{"2021-02-01T00:00:00+24:00", 20},
                      row{"2021-02-01T00:00:00Zx", 20}, row{"202-02-01T00:00:00Z", 3}}) {
    SCOPED_TRACE(c.text);
    const auto got = parse_iso8601_ms(c.text, iso8601_form::rfc3339);
    ASSERT_FALSE(got.has_value());
    EXPECT_EQ(got.error().code, oid::errc::invalid_time);
    EXPECT_EQ(got.error().offset, c.offset);
  }
}

}  // namespace

TEST(AsciiTest, DottedQuadsAreFourNumbersUpTo255) {
  for (const char* yes : {"0.0.0.0", "127.0.0.1", "255.255.255.255", "10.0.0.001"}) {
    EXPECT_TRUE(oid::detail::is_ipv4(yes)) << yes;
  }
  for (const char* no : {"", "1.2.3", "1.2.3.4.5", "256.0.0.1", "1.2.3.", ".1.2.3", "1..2.3",
                         "1.2.3.4a", "1234.0.0.1", "db.example.com", "::1", "1.2.3.-4"}) {
    EXPECT_FALSE(oid::detail::is_ipv4(no)) << no;
  }
}

TEST(AsciiTest, PortsAreDigitsFrom1To65535) {
  EXPECT_EQ(oid::detail::port_number("1"), 1);
  EXPECT_EQ(oid::detail::port_number("27017"), 27017);
  EXPECT_EQ(oid::detail::port_number("65535"), 65535);
  EXPECT_EQ(oid::detail::port_number("00080"), 80);
  for (const char* no :
       {"", "0", "65536", "99999", "100000", "+1", "-1", " 1", "1 ", "1a", "0x1F"}) {
    EXPECT_FALSE(oid::detail::port_number(no).has_value()) << no;
  }
}

TEST(AsciiTest, PercentEncodingEscapesWhatItMustAndDecodesBack) {
  const std::string text = "a b/c:%\x01\xC3\xA9z";
  const std::string encoded = oid::detail::percent_encode(text, "/:%");
  EXPECT_EQ(encoded, "a%20b%2Fc%3A%25%01%C3%A9z");
  std::string decoded;
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    const int b = oid::detail::percent_escape(encoded, i);
    if (b < 0) {
      decoded += encoded[i];
    } else {
      decoded += static_cast<char>(b);
      i += 2;
    }
  }
  EXPECT_EQ(decoded, text);
}

TEST(AsciiTest, FoldsOnlyAToZ) {
  EXPECT_EQ(oid::detail::lower_ascii(std::string_view("AbZ@[`{09\xC3\x80")), "abz@[`{09\xC3\x80");
  EXPECT_TRUE(oid::detail::equal_ignoring_ascii_case("SecondaryPreferred", "secondarypreferred"));
  EXPECT_FALSE(oid::detail::equal_ignoring_ascii_case("a@", "A`"));
  EXPECT_FALSE(oid::detail::equal_ignoring_ascii_case("ab", "abc"));
}

TEST(AsciiTest, PercentEscapeNeedsTwoHexDigitsInside) {
  EXPECT_EQ(oid::detail::percent_escape("%40", 0), 0x40);
  EXPECT_EQ(oid::detail::percent_escape("a%fF", 1), 0xff);
  EXPECT_EQ(oid::detail::percent_escape("%4", 0), -1);
  EXPECT_EQ(oid::detail::percent_escape("%4g", 0), -1);
  EXPECT_EQ(oid::detail::percent_escape("%g4", 0), -1);
  EXPECT_EQ(oid::detail::percent_escape("x40", 0), -1);
  EXPECT_EQ(oid::detail::percent_escape(std::string_view("%40", 2), 0), -1);
}
