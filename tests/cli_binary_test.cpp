// The built `oid` binary, run as a user runs it: arguments, stdin, stdout, stderr, exit status.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <oid/object_id.hpp>
#include <sstream>
#include <string>

namespace {

struct outcome {
  int status;
  std::string out, err;
};

/// Runs `oid ARGS` through the shell with `input` on stdin; `pipe_to` takes its stdout when given.
outcome oid_binary(const std::string& args, const std::string& input = "",
                   const std::string& pipe_to = "") {
  // ctest runs tests in parallel: each call gets its own files.
  static int calls = 0;
  const std::string dir = ::testing::TempDir() + "oid_" + std::to_string(getpid()) + "_" +
                          std::to_string(calls++) + "_";
  const std::string in = dir + "oid_in", out = dir + "oid_out", err = dir + "oid_err";
  std::ofstream(in, std::ios::binary) << input;
  const std::string cmd = std::string("'") + OID_BINARY + "' " + args + " <" + in + " 2>" + err +
                          (pipe_to.empty() ? "" : " | " + pipe_to) + " >" + out;
  const int raw = std::system(cmd.c_str());
  auto slurp = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
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
