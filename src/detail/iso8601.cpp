#include "detail/iso8601.hpp"

#include <chrono>

namespace oid::detail {
namespace {

// A cursor over the text; fail() reports where it stands.
struct reader {
  std::string_view s;
  std::size_t pos = 0;

  bool done() const noexcept { return pos == s.size(); }
  bool peek(char c) const noexcept { return pos < s.size() && s[pos] == c; }
  bool eat(char c) noexcept {
    if (!peek(c)) return false;
    ++pos;
    return true;
  }
  bool digit() const noexcept { return pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; }
  // Exactly n digits into out; false (pos at the offender) otherwise.
  bool digits(int n, int& out) noexcept {
    out = 0;
    for (int i = 0; i < n; ++i) {
      if (!digit()) return false;
      out = out * 10 + (s[pos++] - '0');
    }
    return true;
  }
  // Two digits from `min` to `max`; false with pos at the first digit when out of range.
  bool field(int& out, int min, int max) noexcept {
    const std::size_t at = pos;
    if (!digits(2, out)) return false;
    if (out < min || out > max) {
      pos = at;
      return false;
    }
    return true;
  }
  error fail() const noexcept { return error{errc::invalid_time, pos}; }
};

constexpr std::int64_t ms_per_minute = 60'000;

}  // namespace

result<std::int64_t> parse_iso8601_ms(std::string_view text, iso8601_form form) noexcept {
  const bool lenient = form == iso8601_form::lenient;
  reader r{text};
  int y, mo, d;
  if (!r.digits(4, y) || !r.eat('-') || !r.field(mo, 1, 12) || !r.eat('-') || !r.digits(2, d)) {
    return r.fail();
  }
  const std::chrono::year_month_day ymd{std::chrono::year{y},
                                        std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok()) return error{errc::invalid_time, r.pos - 2};
  std::int64_t ms =
      std::int64_t{std::chrono::sys_days{ymd}.time_since_epoch().count()} * 86'400'000;
  if (lenient && r.done()) return ms;

  if (!r.eat('T') && !r.eat('t') && !(lenient && r.eat(' '))) return r.fail();
  int h, mi, s = 0;
  if (!r.field(h, 0, 23) || !r.eat(':') || !r.field(mi, 0, 59)) return r.fail();
  int frac = 0;  // milliseconds
  if (r.eat(':')) {
    if (!r.field(s, 0, 59)) return r.fail();
    if (r.eat('.') || (lenient && r.eat(','))) {
      if (!r.digit()) return r.fail();
      for (int scale = 100; r.digit(); ++r.pos, scale /= 10) frac += (r.s[r.pos] - '0') * scale;
    }
  } else if (!lenient) {
    return r.fail();
  }
  ms += std::int64_t{h} * 3'600'000 + std::int64_t{mi} * ms_per_minute + std::int64_t{s} * 1000 +
        frac;
  if (r.eat('Z') || r.eat('z') || (lenient && r.done())) {
    if (!r.done()) return r.fail();
    return ms;
  }
  const bool plus = r.peek('+');
  if (!r.eat('+') && !r.eat('-')) return r.fail();
  int oh, om = 0;
  if (!r.field(oh, 0, 23)) return r.fail();
  if (!(lenient && r.done())) {
    r.eat(':');
    if (!r.field(om, 0, 59)) return r.fail();
  }
  if (!r.done()) return r.fail();
  const std::int64_t offset = (std::int64_t{oh} * 60 + om) * ms_per_minute;
  return plus ? ms - offset : ms + offset;  // local time minus its offset from UTC is UTC
}

}  // namespace oid::detail
