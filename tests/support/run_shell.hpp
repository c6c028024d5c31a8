// Runs a shell command line, as a user would run the built `oid` binary (its path is OID_BINARY
// in the command tests), and gives back its exit status and what it wrote.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "support/run_cli.hpp"
#include "support/scratch.hpp"

namespace oid::testing {

/// What the file at `path` holds ("" when it cannot be read).
inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

/// Runs `command` with /bin/sh; its standard output and error (of every command of a pipeline)
/// go to scratch files, read back into the result.
inline cli_outcome run_shell(const std::string& command) {
  const std::string out = scratch_path("out"), err = scratch_path("err");
  const int raw = std::system(("{ " + command + "\n} >" + out + " 2>" + err).c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, read_file(out), read_file(err)};
}

}  // namespace oid::testing
