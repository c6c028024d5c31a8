// Runs the oid command in-process, as main() does, with string streams for its standard input,
// output and error: what the command tests of several files share.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

namespace oid::testing {

/// What one run of the command gave: its exit status and what it wrote.
struct cli_outcome {
  int status;
  std::string out, err;
};

/// Runs `oid ARGS...` with `input` as its standard input.
inline cli_outcome run_cli(std::vector<std::string_view> args, const std::string& input = "") {
  std::istringstream in(input);
  std::ostringstream out, err;
  const int status = oid::cli::run(args, in, out, err);
  return {status, out.str(), err.str()};
}

/// A run that must fail: the arguments and a piece of what it must say on stderr.
struct failing_run {
  std::vector<std::string_view> args;
  std::string_view want;
};

/// Runs each case; each must exit with `status`, print nothing on stdout and say `want` on stderr.
inline void expect_failures(std::span<const failing_run> cases, int status) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    const auto r = run_cli(c.args);
    EXPECT_EQ(r.status, status);
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
  }
}

/// The lines of `s`, without their newlines.
inline std::vector<std::string> lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

}  // namespace oid::testing
