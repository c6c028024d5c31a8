#include <cstdio>
#include <limits>
#include <oid/time.hpp>

namespace oid {
namespace {

using std::chrono::days;
using std::chrono::sys_seconds;

// A cursor over the text that reports the offset of the first character that does not fit.
struct reader {
  std::string_view s;
  std::size_t pos = 0;

  bool done() const { return pos == s.size(); }
  bool peek(char c) const { return pos < s.size() && s[pos] == c; }
  bool eat(char c) {
    if (!peek(c)) return false;
    ++pos;
    return true;
  }
  bool digit() const { return pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; }
  // Exactly n digits into out; false (pos at the offender) otherwise.
  bool digits(int n, int& out) {
    out = 0;
    for (int i = 0; i < n; ++i) {
      if (!digit()) return false;
      out = out * 10 + (s[pos++] - '0');
    }
    return true;
  }
  error fail() const { return error{errc::invalid_time, pos}; }
};

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

  reader r{text};
  int y, mo, d;
  if (!r.digits(4, y) || !r.eat('-') || !r.digits(2, mo)) return r.fail();
  if (mo < 1 || mo > 12) return error{errc::invalid_time, r.pos - 2};
  if (!r.eat('-') || !r.digits(2, d)) return r.fail();
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{unsigned(mo)},
                                        std::chrono::day{unsigned(d)}};
  if (!ymd.ok()) return error{errc::invalid_time, r.pos - 2};
  sys_seconds t{std::chrono::sys_days{ymd}};
  if (r.done()) return t;

  if (!r.eat('T') && !r.eat('t') && !r.eat(' ')) return r.fail();
  int h, mi, s = 0;
  if (!r.digits(2, h)) return r.fail();
  if (h > 23) return error{errc::invalid_time, r.pos - 2};
  if (!r.eat(':') || !r.digits(2, mi)) return r.fail();
  if (mi > 59) return error{errc::invalid_time, r.pos - 2};
  if (r.eat(':')) {
    if (!r.digits(2, s)) return r.fail();
    if (s > 59) return error{errc::invalid_time, r.pos - 2};
    if (r.eat('.') || r.eat(',')) {
      if (!r.digit()) return r.fail();
      while (r.digit()) ++r.pos;  // ids carry whole seconds
    }
  }
  t += std::chrono::hours{h} + std::chrono::minutes{mi} + std::chrono::seconds{s};
  if (r.done() || r.eat('Z') || r.eat('z')) {
    if (!r.done()) return r.fail();
    return t;
  }
  const bool plus = r.peek('+');
  if (!r.eat('+') && !r.eat('-')) return r.fail();
  int oh, om = 0;
  if (!r.digits(2, oh)) return r.fail();
  if (oh > 23) return error{errc::invalid_time, r.pos - 2};
  if (!r.done()) {
    r.eat(':');
    if (!r.digits(2, om)) return r.fail();
    if (om > 59) return error{errc::invalid_time, r.pos - 2};
  }
  if (!r.done()) return r.fail();
  const auto offset = std::chrono::hours{oh} + std::chrono::minutes{om};
  return plus ? t - offset : t + offset;  // local time minus its offset from UTC is UTC
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
