// Private: hex, one home for every module (ids, BSON, Extended JSON, the command).
//
// The 12-byte codec every text form of an id goes through has a portable version (tables, one byte
// at a time) and, where SSE2 is available (every x86-64 CPU), a vector version that does all 24
// characters at once; tests check that the two agree on every byte value in every position. Other
// lengths (binary subtypes, UUIDs, `\u` escapes, the command's output) use `encode_hex` and
// `decode_hex`, a byte at a time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#  include <emmintrin.h>
#  define OID_HEX_SSE2 1
#else
#  define OID_HEX_SSE2 0
#endif

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

inline int hex_value(char c) noexcept { return hex_values[static_cast<unsigned char>(c)]; }

/// Writes the 2n lowercase hex characters of n bytes at `out` and returns the end.
inline char* encode_hex(const std::uint8_t* in, std::size_t n, char* out) noexcept {
  for (std::size_t i = 0; i < n; ++i, out += 2) {
    std::memcpy(out, &hex_pairs[2 * std::size_t{in[i]}], 2);
  }
  return out;
}

/// The lowercase hex text of `bytes`.
inline std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string s(2 * bytes.size(), '\0');
  encode_hex(bytes.data(), bytes.size(), s.data());
  return s;
}

/// Decodes 2n hex characters (either case) into n bytes. Returns the index of the first character
/// that is not a hex digit, or -1 when all are; `out` may be written either way, and may be `in`
/// itself (each byte is written after the two characters it comes from were read).
inline std::ptrdiff_t decode_hex(const char* in, std::size_t n, std::uint8_t* out) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const int hi = hex_value(in[2 * i]);
    const int lo = hex_value(in[2 * i + 1]);
    if ((hi | lo) < 0) return static_cast<std::ptrdiff_t>(2 * i + (hi < 0 ? 0 : 1));
    out[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  return -1;
}

/// The value of 1 to 8 hex digits (either case); false when `s` is empty, longer, or holds
/// anything else.
inline bool parse_hex_u32(std::string_view s, std::uint32_t& v) noexcept {
  if (s.empty() || s.size() > 8) return false;
  std::uint32_t r = 0;
  for (const char c : s) {
    const int h = hex_value(c);
    if (h < 0) return false;
    r = r << 4 | static_cast<std::uint32_t>(h);
  }
  v = r;
  return true;
}

/// Writes the 24 lowercase hex characters of 12 bytes: the portable version.
inline void encode_hex12_scalar(const std::uint8_t* in, char* out) noexcept {
  for (std::size_t i = 0; i < 12; ++i) {
    std::memcpy(out + 2 * i, &hex_pairs[2 * std::size_t{in[i]}], 2);
  }
}

/// Decodes 24 hex characters (either case) into 12 bytes: the portable version. Returns the index
/// of the first character that is not a hex digit, or -1 when all are (then `out` is written).
inline int decode_hex12_scalar(const char* in, std::uint8_t* out) noexcept {
  std::uint8_t b[12];
  int bad = 0;  // OR of all values: negative when any character was not a digit
  for (std::size_t i = 0; i < 12; ++i) {
    const int hi = hex_value(in[2 * i]);
    const int lo = hex_value(in[2 * i + 1]);
    bad |= hi | lo;
    b[i] = static_cast<std::uint8_t>(hi << 4 | lo);
  }
  if (bad < 0) {  // rare: find where, for the error report
    for (int i = 0; i < 24; ++i) {
      if (hex_value(in[i]) < 0) return i;
    }
  }
  std::memcpy(out, b, 12);
  return -1;
}

#if OID_HEX_SSE2
/// Nibbles (0-15, one per byte) to their lowercase hex digits: '0' + x, plus 39 more for 10-15
/// so that 10 lands on 'a'.
inline __m128i nibbles_to_hex(__m128i x) noexcept {
  const __m128i letter = _mm_cmpgt_epi8(x, _mm_set1_epi8(9));
  const __m128i offset = _mm_add_epi8(_mm_set1_epi8('0'), _mm_and_si128(letter, _mm_set1_epi8(39)));
  return _mm_add_epi8(x, offset);
}

/// Hex characters (one per byte) to their values, and a mask of the bytes that were hex digits.
/// Unsigned "x <= k" is "min(x, k) == x", as SSE2 has no unsigned byte comparison.
inline __m128i hex_to_nibbles(__m128i c, __m128i& valid) noexcept {
  const __m128i digit = _mm_sub_epi8(c, _mm_set1_epi8('0'));  // 0-9 for '0'-'9'
  const __m128i is_digit = _mm_cmpeq_epi8(_mm_min_epu8(digit, _mm_set1_epi8(9)), digit);
  // Setting bit 5 folds 'A'-'F' onto 'a'-'f' (and moves no non-letter into that range).
  const __m128i letter = _mm_sub_epi8(_mm_or_si128(c, _mm_set1_epi8(0x20)), _mm_set1_epi8('a'));
  const __m128i is_letter = _mm_cmpeq_epi8(_mm_min_epu8(letter, _mm_set1_epi8(5)), letter);
  valid = _mm_or_si128(is_digit, is_letter);
  return _mm_or_si128(_mm_and_si128(is_digit, digit),
                      _mm_and_si128(is_letter, _mm_add_epi8(letter, _mm_set1_epi8(10))));
}

/// Pairs of nibbles (high first) in 16-bit lanes to one byte per lane.
inline __m128i join_nibbles(__m128i v) noexcept {
  // Little-endian lanes: the first character of a pair is the lane's low byte.
  const __m128i high = _mm_and_si128(_mm_slli_epi16(v, 4), _mm_set1_epi16(0x00F0));
  return _mm_or_si128(high, _mm_srli_epi16(v, 8));
}
#endif

/// Writes the 24 lowercase hex characters of 12 bytes.
inline void encode_hex12(const std::uint8_t* in, char* out) noexcept {
#if OID_HEX_SSE2
  // Exactly 12 bytes are read and 24 written: an 8-byte and a 4-byte load, a 16-byte and an
  // 8-byte store.
  std::uint64_t first;
  std::uint32_t last;
  std::memcpy(&first, in, 8);
  std::memcpy(&last, in + 8, 4);
  const __m128i bytes = _mm_set_epi64x(last, static_cast<long long>(first));
  const __m128i low = _mm_and_si128(bytes, _mm_set1_epi8(0x0F));
  const __m128i high = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0F));
  // Interleaving high and low nibbles puts each byte's two digits side by side, high first.
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), nibbles_to_hex(_mm_unpacklo_epi8(high, low)));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out + 16),
                   nibbles_to_hex(_mm_unpackhi_epi8(high, low)));
#else
  encode_hex12_scalar(in, out);
#endif
}

/// Decodes 24 hex characters (either case) into 12 bytes. Returns the index of the first
/// character that is not a hex digit, or -1 when all are (only then is `out` written).
inline int decode_hex12(const char* in, std::uint8_t* out) noexcept {
#if OID_HEX_SSE2
  // Exactly 24 bytes are read: a 16-byte and an 8-byte load (the upper half of `b` is zero).
  const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in));
  const __m128i b = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in + 16));
  __m128i valid_a, valid_b;
  const __m128i va = hex_to_nibbles(a, valid_a);
  const __m128i vb = hex_to_nibbles(b, valid_b);
  const unsigned valid = static_cast<unsigned>(_mm_movemask_epi8(valid_a)) |
                         (static_cast<unsigned>(_mm_movemask_epi8(valid_b)) & 0xFFu) << 16;
  if (valid != 0xFFFFFFu) return __builtin_ctz(~valid);  // the lowest invalid character
  const __m128i packed = _mm_packus_epi16(join_nibbles(va), join_nibbles(vb));
  _mm_storel_epi64(reinterpret_cast<__m128i*>(out), packed);
  const std::uint32_t last =
      static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_srli_si128(packed, 8)));
  std::memcpy(out + 8, &last, 4);
  return -1;
#else
  return decode_hex12_scalar(in, out);
#endif
}

}  // namespace oid::detail
