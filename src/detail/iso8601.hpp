// Private: the one ISO-8601 date-time parser, for `oid::parse_time` (times people type) and
// Extended JSON's relaxed `$date` (RFC 3339, as MongoDB's tools write it). Compiled into
// oid_objectid, the lowest module that uses it.
#pragma once

#include <cstdint>
#include <oid/result.hpp>
#include <string_view>

namespace oid::detail {

/// Which texts `parse_iso8601_ms` accepts.
enum class iso8601_form {
  /// RFC 3339: `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|+HHMM)`, `t` and `z` too.
  rfc3339,
  /// RFC 3339 and also: a date alone (midnight UTC), a space for `T`, no seconds, `,` before the
  /// fraction, no zone (UTC), an offset of whole hours (`+HH`).
  lenient,
};

/// Milliseconds since the Unix epoch (UTC) of a date-time in `form`: years 0000-9999, impossible
/// dates (2021-02-30) and out-of-range fields rejected, fraction digits past milliseconds dropped.
/// Errors: `invalid_time` with the offset of the first character that does not fit (of a field's
/// first digit when its value is out of range). Never throws.
result<std::int64_t> parse_iso8601_ms(std::string_view text, iso8601_form form) noexcept;

}  // namespace oid::detail
