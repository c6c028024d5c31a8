// The `oid` command: arguments in, exit status out. Everything else is in run().
#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
  std::ios::sync_with_stdio(false);  // stdout is written in large blocks; no C stdio mixed in
  std::vector<std::string_view> args(argv + 1, argv + argc);
  const int status = oid::cli::run(args, std::cin, std::cout, std::cerr);
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "oid: cannot write to standard output\n";
    return status == 0 ? 1 : status;
  }
  return status;
}
