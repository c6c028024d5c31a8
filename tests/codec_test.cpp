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

#include "detail/hex.hpp"

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

}  // namespace
