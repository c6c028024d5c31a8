// Hex text to bytes and back, for tests that write BSON as hex and for the BSON corpus, which
// gives its documents as hex.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace oid::testing {

/// The value of hex digit `c` (either case), or -1 when it is not one.
constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/// The bytes that `hex` spells, two digits a byte, in either case; spaces between the digits are
/// ignored (tests group bytes with them). A digit that is not hex, or an odd number of digits,
/// throws std::invalid_argument: a typo in a test's data fails the test instead of testing
/// other bytes.
inline std::vector<std::uint8_t> hex_bytes(std::string_view hex) {
  std::vector<std::uint8_t> out;
  out.reserve(hex.size() / 2);
  int high = -1;
  for (const char c : hex) {
    if (c == ' ') continue;
    const int v = hex_digit(c);
    if (v < 0) {
      throw std::invalid_argument("hex_bytes: \"" + std::string(hex) + "\": not a hex digit: '" +
                                  std::string(1, c) + "'");
    }
    if (high < 0) {
      high = v;
    } else {
      out.push_back(static_cast<std::uint8_t>(high << 4 | v));
      high = -1;
    }
  }
  if (high >= 0) {
    throw std::invalid_argument("hex_bytes: \"" + std::string(hex) + "\": odd number of digits");
  }
  return out;
}

/// `bytes` as upper-case hex, as the BSON corpus writes them.
inline std::string to_hex(std::span<const std::uint8_t> bytes) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(2 * bytes.size());
  for (const std::uint8_t b : bytes) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

}  // namespace oid::testing
