#include <gtest/gtest.h>

#include <oid/objectid/time.hpp>

#include "support/matchers.hpp"

namespace {

using oid::testing::HasErrorAt;
using oid::testing::HasValue;
using std::chrono::seconds;
using std::chrono::sys_seconds;

sys_seconds at(std::int64_t s) { return sys_seconds{seconds{s}}; }

TEST(TimeTest, ParsesTheAcceptedForms) {
  struct test_case {
    std::string_view input;
    std::int64_t want;
  };
  constexpr test_case cases[] = {
      {"0", 0},
      {"1307761900", 1307761900},
      {"-1", -1},
      {"2010-10-01", 1285891200},
      {"2010-11-01", 1288569600},
      {"2011-06-11T03:11:40Z", 1307761900},
      {"2011-06-11t03:11:40z", 1307761900},
      {"2011-06-11 03:11:40", 1307761900},
      {"2011-06-11T03:11", 1307761860},
      {"2011-06-11T03:11:40.999Z", 1307761900},
      {"2011-06-11T05:11:40+02:00", 1307761900},
      {"2011-06-11T05:11:40+0200", 1307761900},
      {"2011-06-11T05:11:40+02", 1307761900},
      {"2011-06-10T22:41:40-04:30", 1307761900},
      {"1970-01-01T00:00:00Z", 0},
      {"2038-01-19T03:14:07Z", 0x7FFFFFFF},
      {"2038-01-19T03:14:08Z", 0x80000000ll},
      {"2106-02-07T06:28:15Z", 0xFFFFFFFFll},
      {"2000-02-29", 951782400},
      {"1969-12-31T23:59:59Z", -1},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_THAT(oid::parse_time(c.input), HasValue(at(c.want)));
  }
}

TEST(TimeTest, RejectsWithOffset) {
  struct test_case {
    std::string_view input;
    oid::errc want;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"", oid::errc::invalid_time, 0},
      {"-", oid::errc::invalid_time, 0},
      {"yesterday", oid::errc::invalid_time, 0},
      {"2010-13-01", oid::errc::invalid_time, 5},
      {"2010-00-01", oid::errc::invalid_time, 5},
      {"2021-02-29", oid::errc::invalid_time, 8},
      {"2021-02-30", oid::errc::invalid_time, 8},
      {"2010-1-01", oid::errc::invalid_time, 6},
      {"2010-10-01X", oid::errc::invalid_time, 10},
      {"2010-10-01T24:00:00Z", oid::errc::invalid_time, 11},
      {"2010-10-01T12:60:00Z", oid::errc::invalid_time, 14},
      {"2010-10-01T12:00:60Z", oid::errc::invalid_time, 17},
      {"2010-10-01T12:00:00.Z", oid::errc::invalid_time, 20},
      {"2010-10-01T12:00:00ZZ", oid::errc::invalid_time, 20},
      {"2010-10-01T12:00:00+2", oid::errc::invalid_time, 21},
      {"2010-10-01T12:00:00+25:00", oid::errc::invalid_time, 20},
      {"2010-10-01T12:00:00+02:61", oid::errc::invalid_time, 23},
      {"12a4", oid::errc::invalid_time, 2},
      {"99999999999999999999999", oid::errc::time_out_of_range, 0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_THAT(oid::parse_time(c.input), HasErrorAt(c.want, c.offset));
  }
}

TEST(TimeTest, Formats) {
  EXPECT_EQ(oid::format_time(at(0)), "1970-01-01T00:00:00Z");
  EXPECT_EQ(oid::format_time(at(1307761900)), "2011-06-11T03:11:40Z");
  EXPECT_EQ(oid::format_time(at(0xFFFFFFFFll)), "2106-02-07T06:28:15Z");
  EXPECT_EQ(oid::format_time(at(-1)), "1969-12-31T23:59:59Z");
}

TEST(TimeTest, FormatThenParseRoundTripsAcrossTheIdRange) {
  for (std::int64_t s = 0; s <= 0xFFFFFFFFll; s += 86399 * 37) {
    ASSERT_THAT(oid::parse_time(oid::format_time(at(s))), HasValue(at(s)));
  }
}

}  // namespace
