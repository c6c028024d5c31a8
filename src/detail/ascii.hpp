// ASCII text helpers: case folding, percent escapes and dotted-quad addresses, for the names and
// connection strings that are ASCII by their specifications. Written here rather than with
// <cctype>: std::tolower follows the C locale, which a program may change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "detail/hex.hpp"

namespace oid::detail {

/// `c` with A-Z in lower case; any other byte as it is.
constexpr char lower_ascii(char c) noexcept {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

/// `s` with A-Z in lower case.
inline std::string lower_ascii(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = lower_ascii(c);
  return out;
}

/// Whether `a` and `b` are equal once A-Z are folded to lower case.
constexpr bool equal_ignoring_ascii_case(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (lower_ascii(a[i]) != lower_ascii(b[i])) return false;
  }
  return true;
}

/// The byte that the percent escape `%XY` at `s[i]` stands for, or -1 when `s[i]` does not start
/// one ('%' followed by two hex digits within `s`).
inline int percent_escape(std::string_view s, std::size_t i) noexcept {
  if (s[i] != '%' || i + 2 >= s.size()) return -1;
  const int hi = hex_value(s[i + 1]);
  const int lo = hi >= 0 ? hex_value(s[i + 2]) : -1;
  return lo < 0 ? -1 : hi << 4 | lo;
}

/// `s` with each byte of `reserved`, each control byte, space and each non-ASCII byte written as
/// a percent escape (`%2F`): the inverse of decoding with percent_escape.
inline std::string percent_encode(std::string_view s, std::string_view reserved) {
  constexpr char upper_hex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    if (b <= 0x20 || b >= 0x7f || reserved.find(c) != std::string_view::npos) {
      out += '%';
      out += upper_hex[b >> 4];
      out += upper_hex[b & 15];
    } else {
      out += c;
    }
  }
  return out;
}

/// `s` as a TCP port: 1 to 65535, decimal digits only (no sign, no space); none otherwise.
constexpr std::optional<std::uint16_t> port_number(std::string_view s) noexcept {
  if (s.empty() || s.size() > 5) return std::nullopt;
  unsigned value = 0;
  for (const char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(c - '0');
  }
  if (value == 0 || value > 65535) return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

/// Whether `s` is a dotted-quad IPv4 address (four numbers of 1 to 3 digits, each at most 255):
/// a host to connect to as it is, not a name to look up.
constexpr bool is_ipv4(std::string_view s) noexcept {
  int parts = 0;
  while (true) {
    const std::size_t dot = s.find('.');
    const std::string_view part = s.substr(0, dot);
    if (part.empty() || part.size() > 3) return false;
    int value = 0;
    for (const char c : part) {
      if (c < '0' || c > '9') return false;
      value = value * 10 + (c - '0');
    }
    if (value > 255) return false;
    ++parts;
    if (dot == std::string_view::npos) return parts == 4;
    s.remove_prefix(dot + 1);
  }
}

}  // namespace oid::detail
