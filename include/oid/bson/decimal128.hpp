// oid/bson/decimal128.hpp: IEEE 754-2008 decimal128 values as BSON stores them (BID encoding).
//
// `decimal128` is the 16 bytes of a BSON 0x13 element: two little-endian 64-bit halves. It is a
// storage type, not an arithmetic one: oid reads and writes its text form exactly, as MongoDB's
// decimal128 specification and the BSON corpus require (exponent range, clamping, NaN, Infinity,
// signed zero, and rejecting any value that would need rounding).
#pragma once

#include <charconv>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <oid/result.hpp>
#include <string>
#include <string_view>

namespace oid::bson {

/// A decimal128 value: `low` holds bits 0-63, `high` bits 64-127 (sign, combination field, the
/// top of the coefficient). Trivially copyable; equality compares bits (so 1.0 != 1.00).
struct decimal128 {
  std::uint64_t low = 0;
  std::uint64_t high = 0;

  /// The longest text `to_chars` and `to_string` produce: a sign, 34 digits, a point and
  /// "E+6144" (42 characters).
  static constexpr std::size_t max_string_length = 42;

  /// Parses the text forms of the decimal128 specification: an optional sign, digits with an
  /// optional point and exponent (`1.23E+3`, `-0.0`, `1E-6176`), `Infinity`/`Inf`, `NaN`
  /// (case-insensitive). Errors: `invalid_decimal128` with the offset of the first character that
  /// does not fit, or offset 0 when the value is out of range or would need rounding (more than 34
  /// significant digits that are not trailing zeros, exponents that cannot be clamped). The result
  /// is always a canonical encoding. Linear in the length of `text`; does not allocate.
  /// Example: `decimal128::from_string("1.5E+3").value().to_string() == "1.5E+3"`.
  static result<decimal128> from_string(std::string_view text) noexcept;

  /// The canonical string of the specification ("1.23E+3", "-0", "NaN", "Infinity", "0E-6176").
  /// NaN loses its sign and payload; non-canonical encodings (a coefficient above 10^34 - 1)
  /// read as zero with their sign and exponent, as the specification says.
  std::string to_string() const;

  /// Writes the same text as `to_string` into [first, last) without allocating. Returns
  /// `{end, std::errc{}}`, or `{last, std::errc::value_too_large}` when the range is shorter than
  /// the text; at least `max_string_length` characters always suffice.
  std::to_chars_result to_chars(char* first, char* last) const noexcept;

  /// True for NaN (quiet or signalling, any sign or payload).
  constexpr bool is_nan() const noexcept { return (high >> 58 & 0x1F) == 0x1F; }
  /// True for +Infinity and -Infinity.
  constexpr bool is_infinity() const noexcept { return (high >> 58 & 0x1F) == 0x1E; }
  /// The sign bit (set for -0 and -Infinity too).
  constexpr bool is_negative() const noexcept { return (high >> 63) != 0; }

  friend constexpr bool operator==(const decimal128&, const decimal128&) = default;
};

}  // namespace oid::bson
