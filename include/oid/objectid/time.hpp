// oid/objectid/time.hpp: reading and writing the times that ObjectIds carry.
//
// Times are `std::chrono::sys_seconds` (UTC, whole seconds). The text forms are ISO-8601 as people
// and MongoDB tools write them, and plain Unix seconds.
#pragma once

#include <chrono>
#include <oid/result.hpp>
#include <string>
#include <string_view>

namespace oid {

/// Parses a time given as
///  * Unix seconds: an optional `-` and digits (`1307761900`);
///  * an ISO-8601 date, midnight UTC (`2010-10-01`);
///  * an ISO-8601 date-time `YYYY-MM-DDTHH:MM[:SS[.fraction]][Z|±HH:MM|±HHMM]` (a space may stand
///    for `T`; no zone means UTC). Fractions are dropped: ids carry whole seconds.
/// Errors: `invalid_time` with the offset of the first character that does not fit, including
/// impossible dates such as 2021-02-30 and out-of-range fields. Any year 0000-9999 parses; whether
/// an id can hold the time is `object_id::min_for_time`'s question. Never throws.
result<std::chrono::sys_seconds> parse_time(std::string_view text) noexcept;

/// Formats as `YYYY-MM-DDTHH:MM:SSZ`, e.g. "2011-06-11T03:11:40Z".
std::string format_time(std::chrono::sys_seconds t);

}  // namespace oid
