// Makes ids and nothing else, for tests/syscall_test.sh to count the system calls it makes.
//
//     syscall_probe MODE COUNT
//
// MODE: `one` (oid::generate() per id), `batch` (oid::generate(span), 1,024 at a time), `threads`
// (two threads calling oid::generate() per id, COUNT in all), `fork` (a child process makes
// COUNT ids per id after fork(), the parent waits), `control` (one getpid() system call per id as
// well, which the test must see: it proves the counting works).
// Prints a checksum of the ids so that the compiler cannot drop the work.
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <oid/objectid/generator.hpp>
#include <string_view>
#include <thread>
#include <vector>

namespace {

std::uint64_t mix(std::uint64_t sum, const oid::object_id& id) {
  std::uint64_t w;
  std::memcpy(&w, id.bytes().data() + 4, 8);
  return sum * 31 + w;
}

std::uint64_t make_one_by_one(std::uint64_t n) {
  std::uint64_t sum = 0;
  for (std::uint64_t i = 0; i < n; ++i) sum = mix(sum, oid::generate());
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: syscall_probe one|batch|threads|fork|control COUNT\n");
    return 2;
  }
  const std::string_view mode = argv[1];
  const std::string_view count_text = argv[2];
  std::uint64_t n = 0;
  const auto [end, ec] =
      std::from_chars(count_text.data(), count_text.data() + count_text.size(), n);
  if (ec != std::errc() || end != count_text.data() + count_text.size()) {
    std::fprintf(stderr, "syscall_probe: bad COUNT\n");
    return 2;
  }

  std::uint64_t sum = 0;
  if (mode == "one") {
    sum = make_one_by_one(n);
  } else if (mode == "batch") {
    std::vector<oid::object_id> ids(1024);
    for (std::uint64_t done = 0; done < n;) {
      const std::size_t k = static_cast<std::size_t>(std::min<std::uint64_t>(n - done, ids.size()));
      oid::generate(std::span(ids.data(), k));
      for (std::size_t i = 0; i < k; ++i) sum = mix(sum, ids[i]);
      done += k;
    }
  } else if (mode == "threads") {
    std::uint64_t sums[2] = {};
    std::thread a([&] { sums[0] = make_one_by_one(n / 2); });
    std::thread b([&] { sums[1] = make_one_by_one(n - n / 2); });
    a.join();
    b.join();
    sum = sums[0] ^ sums[1];
  } else if (mode == "fork") {
    sum = mix(0, oid::generate());  // seeded in the parent: the child must notice the fork
    const pid_t pid = fork();
    if (pid < 0) return 1;
    if (pid == 0) _exit(make_one_by_one(n) == 42 ? 3 : 0);
    int status = 0;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  } else if (mode == "control") {
    for (std::uint64_t i = 0; i < n; ++i) {
      sum = mix(sum, oid::generate()) + static_cast<std::uint64_t>(getpid());
    }
  } else {
    std::fprintf(stderr, "syscall_probe: unknown mode\n");
    return 2;
  }
  std::printf("%llu\n", static_cast<unsigned long long>(sum));
  return 0;
}
