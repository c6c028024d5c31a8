// decimal128 text conversion: the BID encoding of IEEE 754-2008, exactly as MongoDB's decimal128
// specification and the BSON corpus define it (the "to-scientific-string" rules of the General
// Decimal Arithmetic specification for output; exact input only, with clamping but no rounding).
#include <cstring>
#include <oid/bson/decimal128.hpp>

namespace oid::bson {
namespace {

// The coefficient needs 113 bits. GCC and Clang provide unsigned __int128 on every 64-bit target
// oid builds for; it keeps the arithmetic a few plain instructions instead of a two-limb emulation.
// __extension__ keeps -Wpedantic quiet about the non-standard type.
__extension__ using u128 = unsigned __int128;

constexpr int exponent_bias = 6176;
constexpr std::int64_t exponent_min =
    -6176;  // the smallest exponent of the coefficient's last digit
constexpr std::int64_t exponent_max = 6111;  // 6144 (emax) - 34 + 1
constexpr int max_digits = 34;
constexpr u128 max_coefficient = u128{10'000'000'000'000'000'000ULL} * 1'000'000'000'000'000ULL - 1;

constexpr std::uint64_t sign_bit = 1ULL << 63;
constexpr std::uint64_t infinity_high = 0x7800'0000'0000'0000ULL;
constexpr std::uint64_t nan_high = 0x7C00'0000'0000'0000ULL;
constexpr std::uint64_t coefficient_high_mask = (1ULL << 49) - 1;

// Counts (digits after the point, dropped digits, exponent digits) saturate here so that absurd
// inputs ("1E+99999999999999999999") cannot overflow; any magnitude this large is already far
// outside the representable range, so the saturated value gives the same answer.
constexpr std::int64_t saturation = 100'000'000'000'000'000LL;

constexpr bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

// ASCII case-insensitive comparison with a lower-case word: (c | 0x20) maps only 'X' and 'x' to 'x'
// for letters, so no other byte can match.
bool equals_word(std::string_view text, std::string_view lower) noexcept {
  if (text.size() != lower.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) | 0x20) != static_cast<unsigned char>(lower[i])) {
      return false;
    }
  }
  return true;
}

decimal128 encode(bool negative, std::int64_t exponent, u128 coefficient) noexcept {
  // Canonical encodings only: coefficient < 2^113, so the "11" combination form is never needed.
  const auto biased = static_cast<std::uint64_t>(exponent + exponent_bias);
  return decimal128{
      static_cast<std::uint64_t>(coefficient),
      (negative ? sign_bit : 0) | biased << 49 | static_cast<std::uint64_t>(coefficient >> 64)};
}

// Writes the decimal digits of `v` (at most 34) to `out`; returns their count. One 128-bit
// division splits the coefficient into 64-bit halves that std::to_chars handles quickly.
int write_coefficient(u128 v, char* out) noexcept {
  constexpr std::uint64_t ten19 = 10'000'000'000'000'000'000ULL;
  if (v <= ~std::uint64_t{0}) {
    return static_cast<int>(std::to_chars(out, out + 20, static_cast<std::uint64_t>(v)).ptr - out);
  }
  const auto top = static_cast<std::uint64_t>(v / ten19);  // < 10^15 since v < 10^34
  const auto rest = static_cast<std::uint64_t>(v % ten19);
  char* p = std::to_chars(out, out + 20, top).ptr;
  char tail[20];
  const auto n = static_cast<std::size_t>(std::to_chars(tail, tail + 20, rest).ptr - tail);
  std::memset(p, '0', 19 - n);
  std::memcpy(p + 19 - n, tail, n);
  return static_cast<int>(p + 19 - out);
}

}  // namespace

result<decimal128> decimal128::from_string(std::string_view text) noexcept {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin;
  const auto fail = [begin](const char* at) {
    return oid::error{errc::invalid_decimal128, static_cast<std::size_t>(at - begin)};
  };

  bool negative = false;
  if (p != end && (*p == '+' || *p == '-')) negative = *p++ == '-';

  if (p != end && *p != '.' && !is_digit(*p)) {
    const std::string_view word(p, static_cast<std::size_t>(end - p));
    if (equals_word(word, "infinity") || equals_word(word, "inf")) {
      return decimal128{0, infinity_high | (negative ? sign_bit : 0)};
    }
    // The specification has one NaN: "-NaN" is accepted and loses its sign, like libbson does.
    if (equals_word(word, "nan")) return decimal128{0, nan_high};
    return fail(p);
  }

  u128 coefficient = 0;
  int kept = 0;               // significant digits held in `coefficient`
  std::int64_t dropped = 0;   // digits after the first 34 significant ones
  std::int64_t fraction = 0;  // digits after the point
  bool inexact = false;       // a dropped digit was not zero: the value would need rounding
  bool any_digit = false;
  bool point = false;
  for (; p != end; ++p) {
    const char c = *p;
    if (is_digit(c)) {
      any_digit = true;
      if (point && fraction < saturation) ++fraction;
      if (kept < max_digits) {
        if (kept == 0 && c == '0') continue;  // leading zeros carry no precision
        coefficient = coefficient * 10 + static_cast<unsigned>(c - '0');
        ++kept;
      } else {
        inexact |= c != '0';
        if (dropped < saturation) ++dropped;
      }
    } else if (c == '.' && !point) {
      point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return fail(p);

  std::int64_t written_exponent = 0;
  if (p != end && (*p == 'e' || *p == 'E')) {
    ++p;
    bool exponent_negative = false;
    if (p != end && (*p == '+' || *p == '-')) exponent_negative = *p++ == '-';
    if (p == end || !is_digit(*p)) return fail(p);
    for (; p != end && is_digit(*p); ++p) {
      if (written_exponent < saturation) written_exponent = written_exponent * 10 + (*p - '0');
    }
    if (exponent_negative) written_exponent = -written_exponent;
  }
  if (p != end) return fail(p);

  std::int64_t exponent = written_exponent - fraction + dropped;
  if (coefficient == 0) {
    // Zero has every exponent: clamping it into range never changes the value.
    if (exponent > exponent_max) exponent = exponent_max;
    if (exponent < exponent_min) exponent = exponent_min;
    return encode(negative, exponent, 0);
  }
  if (inexact) return fail(begin);
  // Clamping: a large exponent moves into the coefficient as trailing zeros while they fit.
  while (exponent > exponent_max && kept < max_digits) {
    coefficient *= 10;
    ++kept;
    --exponent;
  }
  if (exponent > exponent_max) return fail(begin);  // overflow
  // A small exponent can only grow by dropping trailing zeros; anything else would round.
  while (exponent < exponent_min && coefficient % 10 == 0) {
    coefficient /= 10;
    ++exponent;
  }
  if (exponent < exponent_min) return fail(begin);  // underflow
  return encode(negative, exponent, coefficient);
}

std::to_chars_result decimal128::to_chars(char* first, char* last) const noexcept {
  char buf[max_string_length];
  char* out = buf;
  const bool negative = is_negative();
  const unsigned combination = high >> 58 & 0x1F;

  std::int64_t biased = 0;
  u128 coefficient = 0;
  if (combination == 0x1F) {
    std::memcpy(out, "NaN", 3);
    out += 3;
  } else if (combination == 0x1E) {
    if (negative) *out++ = '-';
    std::memcpy(out, "Infinity", 8);
    out += 8;
  } else {
    if ((combination >> 3) == 3) {
      // The "11" form implies a coefficient of at least 2^113 > 10^34 - 1: not canonical, so the
      // specification reads it as zero (keeping the sign and the exponent).
      biased = static_cast<std::int64_t>(high >> 47 & 0x3FFF);
    } else {
      biased = static_cast<std::int64_t>(high >> 49 & 0x3FFF);
      coefficient = u128{high & coefficient_high_mask} << 64 | low;
      if (coefficient > max_coefficient) coefficient = 0;
    }
    if (negative) *out++ = '-';
    char digits[max_digits];
    const int n = write_coefficient(coefficient, digits);
    const std::int64_t exponent = biased - exponent_bias;
    const std::int64_t adjusted = exponent + n - 1;
    if (exponent <= 0 && adjusted >= -6) {
      // Plain notation.
      const std::int64_t before_point = n + exponent;  // digits left of the point (may be <= 0)
      if (exponent == 0) {
        std::memcpy(out, digits, static_cast<std::size_t>(n));
        out += n;
      } else if (before_point > 0) {
        const auto whole = static_cast<std::size_t>(before_point);
        std::memcpy(out, digits, whole);
        out += whole;
        *out++ = '.';
        std::memcpy(out, digits + whole, static_cast<std::size_t>(n) - whole);
        out += static_cast<std::size_t>(n) - whole;
      } else {
        *out++ = '0';
        *out++ = '.';
        const auto zeros = static_cast<std::size_t>(-before_point);  // at most 5
        std::memset(out, '0', zeros);
        out += zeros;
        std::memcpy(out, digits, static_cast<std::size_t>(n));
        out += n;
      }
    } else {
      // Scientific notation: one digit before the point and the adjusted exponent.
      *out++ = digits[0];
      if (n > 1) {
        *out++ = '.';
        std::memcpy(out, digits + 1, static_cast<std::size_t>(n - 1));
        out += n - 1;
      }
      *out++ = 'E';
      *out++ = adjusted < 0 ? '-' : '+';
      out = std::to_chars(out, buf + max_string_length, adjusted < 0 ? -adjusted : adjusted).ptr;
    }
  }

  const auto size = static_cast<std::size_t>(out - buf);
  if (static_cast<std::size_t>(last - first) < size) return {last, std::errc::value_too_large};
  std::memcpy(first, buf, size);
  return {first + size, std::errc{}};
}

std::string decimal128::to_string() const {
  char buf[max_string_length];
  const auto r = to_chars(buf, buf + max_string_length);
  return std::string(buf, r.ptr);
}

}  // namespace oid::bson
