// Private: lookup tables for hex and base64, shared by every text form oid reads or writes.
#pragma once

#include <array>
#include <cstdint>

namespace oid::detail {

inline constexpr char hex_digits[] = "0123456789abcdef";

/// Two lowercase hex characters per byte value: one table lookup and one 2-byte copy per byte.
inline constexpr auto hex_pairs = [] {
  std::array<char, 512> t{};
  for (int i = 0; i < 256; ++i) {
    t[2 * i] = hex_digits[i >> 4];
    t[2 * i + 1] = hex_digits[i & 15];
  }
  return t;
}();

/// Value of a hex digit, or -1. Index with an unsigned char, never a plain char.
inline constexpr auto hex_values = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 10; ++i) t['0' + i] = static_cast<std::int8_t>(i);
  for (int i = 0; i < 6; ++i) {
    t['a' + i] = static_cast<std::int8_t>(10 + i);
    t['A' + i] = static_cast<std::int8_t>(10 + i);
  }
  return t;
}();

inline constexpr char base64_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Value of a standard base64 character, or -1 (padding `=` included).
inline constexpr auto base64_values = [] {
  std::array<std::int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i)
    t[static_cast<unsigned char>(base64_digits[i])] = static_cast<std::int8_t>(i);
  return t;
}();

inline int hex_value(char c) noexcept { return hex_values[static_cast<unsigned char>(c)]; }
inline int base64_value(char c) noexcept { return base64_values[static_cast<unsigned char>(c)]; }

}  // namespace oid::detail
