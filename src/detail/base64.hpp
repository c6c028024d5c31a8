// Private: standard base64 (RFC 4648 section 4, alphabet A-Z a-z 0-9 + /), one home for every
// module: an ObjectId's 16-character form (12 bytes: four whole groups, never padding) and
// Extended JSON's `$binary` payloads (any length, padded with '=').
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace oid::detail {

inline constexpr char base64_digits[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Value of a base64 character, or -1 (the padding '=' included). Index with an unsigned char.
inline constexpr auto base64_values = [] {
  std::array<std::int8_t, 256> t{};
  t.fill(-1);
  for (int i = 0; i < 64; ++i) {
    t[static_cast<unsigned char>(base64_digits[i])] = static_cast<std::int8_t>(i);
  }
  return t;
}();

inline int base64_value(char c) noexcept { return base64_values[static_cast<unsigned char>(c)]; }

/// The 24 bits of one group of four characters, or a negative value when any of them is not in
/// the alphabet. Branch-free: a caller decoding several groups may OR the results together and
/// test once.
inline std::int32_t decode_base64_group(const char* c) noexcept {
  const int a = base64_value(c[0]), b = base64_value(c[1]);
  const int d = base64_value(c[2]), e = base64_value(c[3]);
  // Unsigned shifts: a -1 here is garbage that the sign of `bad` throws away, never undefined
  // behaviour.
  const auto u = [](int v) { return static_cast<std::uint32_t>(v); };
  const std::uint32_t bits = (u(a) << 18 | u(b) << 12 | u(d) << 6 | u(e)) & 0xFFFFFF;
  const int bad = a | b | d | e;  // negative when any was -1
  return static_cast<std::int32_t>(bits) | (bad & INT32_MIN);
}

/// Writes the four characters of 24 bits.
inline char* encode_base64_group(std::uint32_t bits, char* out) noexcept {
  out[0] = base64_digits[bits >> 18];
  out[1] = base64_digits[(bits >> 12) & 63];
  out[2] = base64_digits[(bits >> 6) & 63];
  out[3] = base64_digits[bits & 63];
  return out + 4;
}

/// The number of characters `encode_base64` writes for n bytes.
constexpr std::size_t base64_size(std::size_t n) noexcept { return (n + 2) / 3 * 4; }

/// Writes n bytes as base64 with padding (`base64_size(n)` characters) and returns the end.
inline char* encode_base64(const std::uint8_t* in, std::size_t n, char* out) noexcept {
  std::size_t i = 0;
  for (; n - i >= 3; i += 3) {
    out = encode_base64_group(
        std::uint32_t{in[i]} << 16 | std::uint32_t{in[i + 1]} << 8 | in[i + 2], out);
  }
  if (n - i == 1) {
    encode_base64_group(std::uint32_t{in[i]} << 16, out);
    out[2] = out[3] = '=';
    out += 4;
  } else if (n - i == 2) {
    encode_base64_group(std::uint32_t{in[i]} << 16 | std::uint32_t{in[i + 1]} << 8, out);
    out[3] = '=';
    out += 4;
  }
  return out;
}

/// Decodes padded base64 (len characters) into at most len / 4 * 3 bytes at `out`, which may be
/// `in` itself (each group is read before its bytes are written). Returns the number of bytes, or
/// -1 on a length that is not a multiple of 4, a character outside the alphabet, or '=' anywhere
/// but the last one or two places. The bits a padded group leaves over are ignored.
inline std::ptrdiff_t decode_base64(const char* in, std::size_t len, std::uint8_t* out) noexcept {
  if (len % 4 != 0) return -1;
  std::size_t pad = 0;
  if (len != 0 && in[len - 1] == '=') pad = in[len - 2] == '=' ? 2 : 1;
  std::size_t o = 0;
  for (std::size_t i = 0; i < len; i += 4) {
    char group[4] = {in[i], in[i + 1], in[i + 2], in[i + 3]};
    const bool last = i + 4 == len;
    if (last && pad >= 1) group[3] = 'A';  // a padding '=' counts as zero bits
    if (last && pad == 2) group[2] = 'A';
    const std::int32_t v = decode_base64_group(group);
    if (v < 0) return -1;
    out[o++] = static_cast<std::uint8_t>(v >> 16);
    if (!(last && pad == 2)) out[o++] = static_cast<std::uint8_t>(v >> 8);
    if (!(last && pad >= 1)) out[o++] = static_cast<std::uint8_t>(v);
  }
  return static_cast<std::ptrdiff_t>(o);
}

}  // namespace oid::detail
