#include <gtest/gtest.h>

#include <oid/objectid/inspect.hpp>

namespace {

TEST(InspectTest, ReadsEveryFieldOfTheIssueExample) {
  const auto d = oid::inspect(oid::object_id("4df2dcec2cdcd20936a8b817"));
  EXPECT_EQ(d.timestamp, 1307761900u);
  EXPECT_EQ(d.time.time_since_epoch().count(), 1307761900);
  EXPECT_EQ(d.counter, 11057175u);
  EXPECT_EQ(d.random, (std::array<std::uint8_t, 5>{0x2c, 0xdc, 0xd2, 0x09, 0x36}));
  EXPECT_EQ(d.legacy_machine, (std::array<std::uint8_t, 3>{0x2c, 0xdc, 0xd2}));
  EXPECT_EQ(d.legacy_pid, 2358);
}

TEST(InspectTest, Json) {
  EXPECT_EQ(oid::to_json(oid::inspect(oid::object_id("4df2dcec2cdcd20936a8b817"))),
            R"({"id":"4df2dcec2cdcd20936a8b817","time":"2011-06-11T03:11:40Z",)"
            R"("timestamp":1307761900,"counter":11057175,"random":"2cdcd20936",)"
            R"("legacy":{"machine":"2cdcd2","pid":2358}})");
}

TEST(InspectTest, ExtremeValues) {
  const auto d = oid::inspect(oid::object_id("ffffffffffffffffffffffff"));
  EXPECT_EQ(d.timestamp, 0xFFFFFFFFu);
  EXPECT_EQ(d.counter, 0xFFFFFFu);
  EXPECT_EQ(d.legacy_pid, 0xFFFF);
}

}  // namespace
