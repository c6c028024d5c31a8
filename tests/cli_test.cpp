// The command in-process: run_cli() with string streams. cli_binary_test.cpp runs the built binary.
#include <gtest/gtest.h>

#include <oid/objectid/object_id.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/run_cli.hpp"

namespace {

using oid::testing::lines;
using oid::testing::run_cli;

TEST(CliTest, NoArgumentsPrintsOneNewId) {
  const auto r = run_cli({});
  EXPECT_EQ(r.status, 0);
  ASSERT_EQ(r.out.size(), 25u);
  EXPECT_TRUE(oid::object_id::from_hex(r.out.substr(0, 24)));
  EXPECT_EQ(r.err, "");
}

TEST(CliTest, NewPrintsNDistinctIdsInEachFormat) {
  auto r = run_cli({"new", "-n", "1000"});
  ASSERT_EQ(r.status, 0);
  auto v = lines(r.out);
  ASSERT_EQ(v.size(), 1000u);
  for (const auto& l : v) ASSERT_TRUE(oid::object_id::from_hex(l)) << l;
  std::sort(v.begin(), v.end());
  EXPECT_EQ(std::unique(v.begin(), v.end()), v.end());

  r = run_cli({"new", "-n", "3", "--format", "base64"});
  for (const auto& l : lines(r.out)) EXPECT_TRUE(oid::object_id::from_base64(l)) << l;
  r = run_cli({"new", "--format", "json"});
  EXPECT_EQ(r.out.substr(0, 9), R"({"$oid":")");
  EXPECT_EQ(r.out.substr(33), "\"}\n");
  r = run_cli({"new", "-n", "0"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
}

TEST(CliTest, NewLegacyUsesHostAndPid) {
  const auto r = run_cli({"new", "--legacy", "-n", "2"});
  ASSERT_EQ(r.status, 0);
  const auto v = lines(r.out);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].substr(8, 10), v[1].substr(8, 10));  // machine and pid bytes agree
}

TEST(CliTest, InspectTheIssueExample) {
  const auto r = run_cli({"inspect", "4df2dcec2cdcd20936a8b817"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("2011-06-11T03:11:40Z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("1307761900"), std::string::npos);
  EXPECT_NE(r.out.find("counter   11057175"), std::string::npos);
  EXPECT_NE(r.out.find("machine 2cdcd2"), std::string::npos);
  EXPECT_NE(r.out.find("pid 2358"), std::string::npos);
  EXPECT_NE(r.out.find("random    2cdcd20936"), std::string::npos);

  const auto j = run_cli({"inspect", "--json", "4c41e78f238d3b9090000001"});
  EXPECT_NE(j.out.find(R"("time":"2010-07-17T17:25:35Z")"), std::string::npos) << j.out;
}

TEST(CliTest, InspectReadsStdinAndReportsBadLinesByNumber) {
  const auto r =
      run_cli({"inspect", "--json"},
              "4df2dcec2cdcd20936a8b817\nnope\n\nTfLc7Czc0gk2qLgX\r\n4df2dcec2cdcd20936a8b81g");
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).size(), 2u);
  const auto e = lines(r.err);
  ASSERT_EQ(e.size(), 3u) << r.err;
  EXPECT_NE(e[0].find("line 2"), std::string::npos) << e[0];
  EXPECT_NE(e[0].find("invalid length"), std::string::npos) << e[0];
  EXPECT_NE(e[1].find("line 3: empty line"), std::string::npos) << e[1];
  EXPECT_NE(e[2].find("line 5"), std::string::npos) << e[2];
  EXPECT_NE(e[2].find("column 24"), std::string::npos) << e[2];
}

TEST(CliTest, InspectSurvivesAHugeLineAndBinaryGarbage) {
  std::string input(10 << 20, 'a');
  input += "\n4df2dcec2cdcd20936a8b817\n";
  input += std::string("\x00\xff\xfe\x80garbage\x01", 12);
  input += "\n";
  const auto r = run_cli({"inspect", "--json"}, input);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(lines(r.out).size(), 1u);
  const auto e = lines(r.err);
  ASSERT_EQ(e.size(), 2u) << r.err;
  EXPECT_NE(e[0].find("line 1: line too long"), std::string::npos);
  EXPECT_NE(e[1].find("line 3"), std::string::npos);
  EXPECT_NE(e[1].find("\\x00\\xff"), std::string::npos) << e[1];  // shown escaped
}

TEST(CliTest, ConvertBothWays) {
  auto r = run_cli({"convert", "--to", "base64", "4df2dcec2cdcd20936a8b817"});
  EXPECT_EQ(r.out, "TfLc7Czc0gk2qLgX\n");
  r = run_cli({"convert", "TfLc7Czc0gk2qLgX"});
  EXPECT_EQ(r.out, "4df2dcec2cdcd20936a8b817\n");
  r = run_cli({"convert", "--to", "hex"}, "TfLc7Czc0gk2qLgX\n4DF2DCEC2CDCD20936A8B817\n");
  EXPECT_EQ(r.out, "4df2dcec2cdcd20936a8b817\n4df2dcec2cdcd20936a8b817\n");
  r = run_cli({"convert", "TfLc7Czc0gk2qL==", "4df2dcec2cdcd20936a8b817"});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "4df2dcec2cdcd20936a8b817\n");  // the good one is still converted
  EXPECT_NE(r.err.find("invalid base64 character \"=\" at column 15"), std::string::npos) << r.err;
}

TEST(CliTest, RangeOfTheIssueExample) {
  const auto r = run_cli({"range", "2010-10-01", "2010-11-01"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("4ca524800000000000000000"), std::string::npos);
  EXPECT_NE(r.out.find("4cce03000000000000000000"), std::string::npos);
  EXPECT_NE(r.out.find(R"({"_id": {"$gte": {"$oid": "4ca524800000000000000000"}, )"
                       R"("$lt": {"$oid": "4cce03000000000000000000"}}})"),
            std::string::npos)
      << r.out;
}

TEST(CliTest, RangeAcceptsUnixSecondsOffsetsAndOpenEnd) {
  auto r = run_cli({"range", "1285891200"});
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find(R"({"_id": {"$gte": {"$oid": "4ca524800000000000000000"}}})"),
            std::string::npos)
      << r.out;
  r = run_cli({"range", "2010-10-01T02:00:00+02:00", "2010-11-01"});
  EXPECT_NE(r.out.find("4ca524800000000000000000"), std::string::npos) << r.out;
}

TEST(CliTest, RangeRejectsBadTimes) {
  const oid::testing::failing_run cases[] = {
      {{"range", "1969-12-31"}, "time out of range"},
      {{"range", "2106-02-07T06:28:16Z"}, "time out of range"},
      {{"range", "2021-02-30"}, "column 9"},
      {{"range", "soon"}, "not a date"},
      {{"range", "2010-11-01", "2010-10-01"}, "must be after"},
  };
  oid::testing::expect_failures(cases, 1);
}

TEST(CliTest, UsageErrorsExitTwo) {
  for (const auto& args : std::vector<std::vector<std::string_view>>{{"frobnicate"},
                                                                     {"new", "-n", "many"},
                                                                     {"new", "--format", "xml"},
                                                                     {"range"},
                                                                     {"new", "--bogus"},
                                                                     {"new", "-n", "-1"},
                                                                     {"help", "nothing"}}) {
    SCOPED_TRACE(args.back());
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 2);
    EXPECT_FALSE(r.err.empty());
  }
}

// A bad count names what is wrong with it, and none of them starts an endless run (CLI11 alone
// reads "-1" and numbers above 2^64 as 2^64 - 1).
TEST(CliTest, BadCountsSayWhatIsWrong) {
  const struct {
    std::string_view count, want;
  } cases[] = {
      {"-1", "a count cannot be negative: '-1'"},
      {"99999999999999999999999", "count too large (at most 2^64 - 1): '99999999999999999999999'"},
      {"18446744073709551616", "count too large"},
      {"1x", "not a count (a whole number of ids): '1x'"},
      {"", "not a count (a whole number of ids): ''"},
      {"+3", "not a count"},
      {" 3", "not a count"},
      {"3.5", "not a count"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.count);
    const auto r = run_cli({"new", "-n", c.count});
    EXPECT_EQ(r.status, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  }
  const auto r = run_cli({"new", "-n", "0"});
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "");
}

// --help on every command and subcommand, and `oid help COMMAND...`: status 0 and the usage of
// the whole command.
TEST(CliTest, HelpOnEveryCommand) {
  const std::vector<std::vector<std::string_view>> commands = {{"new"},
                                                               {"inspect"},
                                                               {"convert"},
                                                               {"range"},
                                                               {"check-unique"},
                                                               {"bson"},
                                                               {"bson", "dump"},
                                                               {"bson", "from-json"},
                                                               {"bson", "validate"},
                                                               {"mongo"},
                                                               {"mongo", "ping"},
                                                               {"mongo", "insert"},
                                                               {"mongo", "find"},
                                                               {"help"}};
  for (const auto& command : commands) {
    std::string name = "oid";
    for (auto word : command) name += " " + std::string(word);
    SCOPED_TRACE(name);
    auto args = command;
    args.push_back("--help");
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 0);
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("Usage: " + name + " "), std::string::npos) << r.out;
    args = command;
    args.insert(args.begin(), "help");
    EXPECT_EQ(run_cli(args).out, r.out);
  }
}

TEST(CliTest, HelpAndVersion) {
  for (const auto& args : std::vector<std::vector<std::string_view>>{{"--help"},
                                                                     {"help"},
                                                                     {"help", "range"},
                                                                     {"new", "--help"},
                                                                     {"inspect", "--help"},
                                                                     {"convert", "--help"},
                                                                     {"range", "--help"}}) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("Usage"), std::string::npos) << r.out;
  }
  // `oid help` and `oid --help` list every command, not the help of `help`.
  for (const auto& args : std::vector<std::vector<std::string_view>>{{"help"}, {"--help"}}) {
    const auto r = run_cli(args);
    EXPECT_NE(r.out.find("Usage: oid [OPTIONS]"), std::string::npos) << r.out;
    for (const char* command :
         {"new", "inspect", "convert", "range", "check-unique", "bson", "mongo"}) {
      EXPECT_NE(r.out.find(std::string("\n  ") + command + " "), std::string::npos)
          << command << " missing from\n"
          << r.out;
    }
  }
  EXPECT_NE(run_cli({"range", "--help"}).out.find("FROM"), std::string::npos);
  const auto v = run_cli({"--version"});
  EXPECT_EQ(v.status, 0);
  EXPECT_EQ(v.out.rfind("oid ", 0), 0u);
}

}  // namespace
