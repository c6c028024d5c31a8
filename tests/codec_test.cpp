// The vector hex codec (src/detail/hex.hpp) against the portable one it replaces on x86-64:
// both must agree on every input the public API can give them, including every bad character.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <memory>
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

}  // namespace
