// The 64-bit id commands in-process: oid new | inspect | range --layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <oid/objectid/id64.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace {

using oid::testing::lines;
using oid::testing::run_cli;

TEST(CliId64Test, NewPrintsDistinctIdsWithTheMachineId) {
  struct test_case {
    std::string_view layout, machine;
    oid::id64_layout want;
  };
  const test_case cases[] = {{"compact64", "255", oid::id64_layout::compact64()},
                             {"snowflake", "1023", oid::id64_layout::snowflake()},
                             {"sonyflake", "65535", oid::id64_layout::sonyflake()}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.layout);
    // 5,000 ids: more than a Snowflake millisecond or a Sonyflake 10 ms unit allows.
    const auto r = run_cli({"new", "--layout", c.layout, "--machine", c.machine, "-n", "5000"});
    ASSERT_EQ(r.status, 0) << r.err;
    auto v = lines(r.out);
    ASSERT_EQ(v.size(), 5000u);
    std::vector<oid::id64> ids;
    for (const auto& l : v) {
      const auto id = oid::id64::from_decimal(l);
      ASSERT_TRUE(id) << l;
      const auto f = c.want.decode(*id);
      ASSERT_TRUE(f) << l;
      ASSERT_EQ(std::to_string(f->machine), c.machine);
      ids.push_back(*id);
    }
    EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
    EXPECT_EQ(std::adjacent_find(ids.begin(), ids.end()), ids.end());
  }
  const auto hex = run_cli({"new", "--layout", "snowflake", "--machine", "1", "--format", "hex"});
  ASSERT_EQ(hex.status, 0) << hex.err;
  ASSERT_EQ(hex.out.size(), 17u);
  EXPECT_TRUE(oid::id64::from_hex(hex.out.substr(0, 16)));
}

TEST(CliId64Test, NewUsageErrors) {
  const oid::testing::failing_run cases[] = {
      {{"new", "--layout", "sonyflake"}, "needs an assigned machine id (0 to 65535)"},
      {{"new", "--layout", "compact64", "--machine", "256"}, "not in 0 to 255"},
      {{"new", "--layout", "snowflake", "--machine", "1024"}, "not in 0 to 1023"},
      {{"new", "--layout", "snowflake", "--machine", "-1"}, "not in 0 to 1023"},
      {{"new", "--layout", "snowflake", "--machine", "x"}, "not in 0 to 1023"},
      {{"new", "--layout", "flake", "--machine", "1"}, "--layout"},
      {{"new", "--machine", "1"}, "--machine requires --layout"},
      {{"new", "--layout", "compact64", "--machine", "1", "--legacy"}, "excludes"},
      {{"new", "--layout", "compact64", "--machine", "1", "--format", "json"}, "decimal"},
      {{"new", "--layout", "compact64", "--machine", "1", "--epoch", "5"}, "no other epoch"},
      {{"new", "--layout", "snowflake", "--machine", "1", "--epoch", "soon"}, "--epoch"},
  };
  oid::testing::expect_failures(cases, 2);
}

TEST(CliId64Test, InspectDecimalAndHex) {
  const std::string want =
      "1541815603606036480\n"
      "  layout    snowflake (epoch 2010-11-04T01:42:54.657Z, 1 ms units)\n"
      "  time      2022-06-28T16:07:40.105Z (unit 367597485448)\n"
      "  machine   378\n"
      "  counter   0\n"
      "  hex       1565a11f6217a000\n";
  auto r = run_cli({"inspect", "--layout", "snowflake", "1541815603606036480", "1565a11f6217a000"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, want + want);
  r = run_cli({"inspect", "--layout", "compact64", "--json", "0x"}, "");
  EXPECT_EQ(r.status, 1);
  r = run_cli({"inspect", "--layout", "compact64", "--json"}, "123456789abcdef0\n");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            R"({"id":"1311768467463790320","hex":"123456789abcdef0","layout":"compact64",)"
            R"("time":"1979-09-05T22:51:36Z","units":305419896,"machine":154,"counter":12377840})"
            "\n");
  r = run_cli(
      {"inspect", "--layout", "snowflake", "--epoch", "1420070400000", "175928847299117063"});
  EXPECT_NE(r.out.find("2016-04-30T11:18:25.796Z"), std::string::npos) << r.out;
  r = run_cli({"inspect", "--layout", "sonyflake", "16777216"});
  EXPECT_NE(r.out.find("2014-09-01T00:00:00.010Z (unit 1)"), std::string::npos) << r.out;
}

TEST(CliId64Test, InspectReportsBadInputAndGoesOn) {
  const auto r = run_cli({"inspect", "--layout", "snowflake"},
                         "0123\n\n99999999999999999999\n12x4\n000000000000000g\n"
                         "9223372036854775808\n1\n");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).size(), 6u);  // the one good id, "1"
  const std::string_view want[] = {
      R"(line 1: "0123": a leading zero)",
      "line 2: empty line",
      R"(line 3: "99999999999999999999": above 18446744073709551615 at column 20)",
      R"(line 4: "12x4": not a decimal digit: "x" at column 3)",
      R"(line 5: "000000000000000g": invalid hex character "g" at column 16)",
      R"(line 6: "9223372036854775808": bit 63 is set: not a snowflake id)",
  };
  for (const auto& w : want) EXPECT_NE(r.err.find(w), std::string::npos) << w << "\n" << r.err;
}

TEST(CliId64Test, RangeGivesBoundsAndSql) {
  auto r = run_cli({"range", "--layout", "snowflake", "2022-06-28", "2022-06-29"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "from    2022-06-28T00:00:00.000Z  1541572081873846272  1564c3a40fc00000\n"
            "to      2022-06-29T00:00:00.000Z  1541934469739446272  15660d3b0fc00000  "
            "(excluded)\n"
            "sql     id >= 1541572081873846272 AND id < 1541934469739446272\n");
  r = run_cli({"range", "--layout", "compact64", "1"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out,
            "from    1970-01-01T00:00:01Z  4294967296  0000000100000000\n"
            "sql     id >= 4294967296\n");
}

TEST(CliId64Test, RangeRejectsTimesOutsideTheLayout) {
  const oid::testing::failing_run cases[] = {
      {{"range", "--layout", "sonyflake", "2014-08-31"},
       "time out of range: sonyflake holds 2014-09-01T00:00:00Z to 2188-11-16T03:28:58Z"},
      {{"range", "--layout", "snowflake", "2010-11-04"}, "snowflake holds 2010-11-04T01:42:54Z"},
      {{"range", "--layout", "snowflake", "2090-01-01"}, "to 2080-07-10T17:30:30Z"},
      {{"range", "--layout", "compact64", "soon"}, "not a date"},
      {{"range", "--layout", "compact64", "2020-01-02", "2020-01-01"}, "must be in a later"},
  };
  oid::testing::expect_failures(cases, 1);
}

}  // namespace
