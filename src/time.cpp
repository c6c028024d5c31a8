#include <cstdio>
#include <limits>
#include <oid/objectid/time.hpp>

#include "detail/iso8601.hpp"

namespace oid {
namespace {

using std::chrono::days;
using std::chrono::sys_seconds;

result<sys_seconds> parse_unix_seconds(std::string_view text) {
  std::size_t i = 0;
  const bool negative = !text.empty() && text[0] == '-';
  if (negative) ++i;
  if (i == text.size()) return error{errc::invalid_time, i};
  std::int64_t v = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return error{errc::invalid_time, i};
    if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10) {
      return error{errc::time_out_of_range, 0};
    }
    v = v * 10 + (c - '0');
  }
  return sys_seconds{std::chrono::seconds{negative ? -v : v}};
}

}  // namespace

result<sys_seconds> parse_time(std::string_view text) noexcept {
  if (text.empty()) return error{errc::invalid_time, 0};
  // Unix seconds: all digits (with an optional sign). A date has a '-' after four digits.
  if (text.find_first_not_of("0123456789") == std::string_view::npos ||
      (text[0] == '-' && text.size() > 1 &&
       text.find_first_not_of("0123456789", 1) == std::string_view::npos)) {
    return parse_unix_seconds(text);
  }

  const auto ms = detail::parse_iso8601_ms(text, detail::iso8601_form::lenient);
  if (!ms) return ms.error();
  // Ids carry whole seconds: the fraction is dropped (floor, so also before 1970).
  return std::chrono::floor<std::chrono::seconds>(
      std::chrono::sys_time<std::chrono::milliseconds>{std::chrono::milliseconds{*ms}});
}

std::string format_time(sys_seconds t) {
  const auto day = std::chrono::floor<days>(t);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{t - day};
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%04d-%02u-%02uT%02d:%02d:%02dZ", int(ymd.year()),
                              unsigned(ymd.month()), unsigned(ymd.day()), int(hms.hours().count()),
                              int(hms.minutes().count()), int(hms.seconds().count()));
  return std::string(buf, static_cast<std::size_t>(n));
}

}  // namespace oid
