// The built `oid` binary, run as a user runs it: arguments, stdin, stdout, stderr, exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <oid/objectid/object_id.hpp>
#include <sstream>
#include <string>

#include "support/run_shell.hpp"

namespace {

/// Runs `oid ARGS` through the shell with `input` on stdin; `pipe_to` takes its stdout when given.
oid::testing::cli_outcome oid_binary(const std::string& args, const std::string& input = "",
                                     const std::string& pipe_to = "") {
  const std::string in = oid::testing::scratch_path("in");
  std::ofstream(in, std::ios::binary) << input;
  return oid::testing::run_shell(std::string("'") + OID_BINARY + "' " + args + " <" + in +
                                 (pipe_to.empty() ? "" : " | " + pipe_to));
}

TEST(CliBinaryTest, MakesAnIdAndInspectsIt) {
  const auto made = oid_binary("");
  ASSERT_EQ(made.status, 0);
  ASSERT_EQ(made.out.size(), 25u);
  const auto seen = oid_binary("inspect " + made.out.substr(0, 24));
  EXPECT_EQ(seen.status, 0);
  EXPECT_NE(seen.out.find(made.out.substr(0, 24)), std::string::npos);
}

TEST(CliBinaryTest, AMillionIdsAreAllDistinct) {
  const auto r = oid_binary("new -n 1000000", "", "sort -u | wc -l");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out, "1000000\n");
}

TEST(CliBinaryTest, ExitStatusesAndStderr) {
  EXPECT_EQ(oid_binary("inspect 4df2dcec2cdcd20936a8b817").status, 0);
  const auto bad = oid_binary("inspect", "4df2dcec2cdcd20936a8b817\nxyz\n");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("2011-06-11T03:11:40Z"), std::string::npos);
  EXPECT_NE(bad.err.find("line 2"), std::string::npos);
  EXPECT_EQ(oid_binary("no-such-command").status, 2);
  EXPECT_EQ(oid_binary("range 2010-10-01 2010-11-01").status, 0);
}

TEST(CliBinaryTest, BinaryGarbageOnStdin) {
  std::string garbage;
  for (int i = 0; i < 1 << 20; ++i) garbage += static_cast<char>((i * 7919) & 0xFF);
  const auto r = oid_binary("convert --to base64", garbage);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("line 1"), std::string::npos);
}

TEST(CliBinaryTest, ClosedStdoutStopsQuietly) {
  const auto r = oid_binary("new -n 100000000", "", "head -n 1");
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(r.out.size(), 25u);
}

}  // namespace
