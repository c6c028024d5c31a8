// Runs the oid command in-process, as main() does, with string streams for its standard input,
// output and error: what the command tests of several files share.
#pragma once

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

}  // namespace oid::testing
