// oid/bson/decimal128.hpp: IEEE 754-2008 decimal128 values as BSON stores them (BID encoding).
//
// `decimal128` is the 16 bytes of a BSON 0x13 element: two little-endian 64-bit halves. It is a
// storage type, not an arithmetic one: oid reads and writes its text form exactly, as MongoDB's
// decimal128 specification and the BSON corpus require (exponent range, clamping, NaN, Infinity,
// signed zero, and rejecting any value that would need rounding).
#pragma once

#include <compare>
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

  /// Parses the text forms of the decimal128 specification: an optional sign, digits with an
  /// optional point and exponent (`1.23E+3`, `-0.0`, `1E-6176`), `Infinity`/`Inf`, `NaN`
  /// (case-insensitive). Errors: `invalid_decimal128` with the offset of the first character that
  /// does not fit, or offset 0 when the value is out of range or would need rounding (more than 34
  /// significant digits that are not trailing zeros, exponents that cannot be clamped).
  static result<decimal128> from_string(std::string_view text) noexcept;

  /// The canonical string of the specification ("1.23E+3", "-0", "NaN", "Infinity", "0E-6176").
  std::string to_string() const;

  friend constexpr bool operator==(const decimal128&, const decimal128&) = default;
};

}  // namespace oid::bson
