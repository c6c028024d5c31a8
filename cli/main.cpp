// The `oid` command: arguments in, exit status out. Everything else is in run().
#include <malloc.h>

#include <iostream>
#include <string_view>
#include <vector>

#include "cli.hpp"

int main(int argc, char** argv) {
  // Keep freed memory for the next allocation instead of handing it back to the kernel: the
  // transfers (GridFS put and get, restore, import) build and free a 16 MB batch and a 16 MB
  // message per round, and with glibc's defaults each round got fresh pages from the kernel,
  // which faulted in and zeroed twice the data's size (66,000 faults for a 128 MiB upload). The
  // peak memory is the same; it is kept until exit. A tuning, so its failure (0) changes nothing.
  (void)mallopt(M_MMAP_THRESHOLD, 64 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 128 << 20);
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
