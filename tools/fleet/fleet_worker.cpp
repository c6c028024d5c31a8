// oid_fleet_worker: one simulated container of the fleet test (scripts/fleet.sh).
//
// Runs as the container's first process (pid 1 inside `unshare --pid`), forks so that the
// container has P processes, and runs T threads in each; at the start time every thread makes N
// ids as fast as it can and the ids land as raw 12-byte records in one output file, the ids of
// process p, thread t at record (p * T + t) * N. The first id of process 0 is made before the
// fork, so that every child starts from a generator its parent has already seeded (the fork
// case the generator must get right).
//
// Layouts: the default is oid::generate() (the process-wide generator, as an application uses
// it); --legacy uses legacy_object_id_generator (host name and pid); --random-bits B (test only)
// uses an object_id_generator whose random source keeps only the low B bits of the 5-byte random
// value (the counter start stays fully random), and --time S freezes its clock, so that the
// formula of docs/uniqueness.md can be checked against a simulation with many collisions.
//
// 64-bit ids: --id64 compact64|snowflake|sonyflake uses an id64_generator per process, with
// machine ids --machines assigned (process p gets --machine-base + p: the parent's generator is
// made before the fork and each child takes its own id through the generator's after_fork
// function) or --machines random (each process draws one from getrandom, as the sample code the
// issue warns about does). Each process prints "machine M" on stderr. The 64-bit id is written
// big-endian into bytes 4-11 of a 12-byte record (bytes 0-3 zero), so that the same
// `oid check-unique --binary` counts its duplicates.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/id64_generator.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

struct options {
  std::string out;
  unsigned processes = 2;
  unsigned threads = 2;
  std::uint64_t ids = 1000000;  // per thread
  bool legacy = false;
  int random_bits = -1;  // -1: OS entropy untouched
  std::optional<std::uint32_t> time;
  std::int64_t start_at_ns = 0;  // CLOCK_REALTIME; 0: start at once
  std::size_t batch = 1;         // 1: next() per id; more: fill() per batch
  unsigned concurrency = 0;      // processes alive at once; 0: all
  std::string id64;              // empty: ObjectIds; else a 64-bit layout
  std::string machines = "assigned";
  std::uint32_t machine_base = 0;
};

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "oid_fleet_worker: %s\n", what.c_str());
  std::exit(1);
}

/// The ids of one process come from here.
class source {
 public:
  explicit source(const options& o) : o_(o) {
    if (o.legacy) {
      legacy_ = std::make_unique<oid::legacy_object_id_generator>();
    } else if (o.random_bits >= 0 || o.time) {
      oid::clock_function clock;
      if (o.time) clock = [t = *o.time] { return t; };
      oid::random_function random;
      if (o.random_bits >= 0) {
        random = [bits = o.random_bits](std::span<std::uint8_t> r) {
          oid::os_random(r);
          // Bytes 0-4 become the 40-bit random value (big-endian), 5-7 the counter start.
          std::uint64_t v = 0;
          for (int i = 0; i < 5; ++i) v = v << 8 | r[static_cast<std::size_t>(i)];
          if (bits < 40) v &= (std::uint64_t{1} << bits) - 1;
          for (int i = 4; i >= 0; --i, v >>= 8) r[static_cast<std::size_t>(i)] = v & 0xFF;
        };
      }
      injected_ = std::make_unique<oid::object_id_generator>(std::move(clock), std::move(random));
    }
  }
  /// Called first thing in process p (0: the first process, before any fork).
  void enter_process(unsigned p) {
    if (o_.id64.empty()) return;
    const auto layout = oid::id64_layout::from_name(o_.id64).value();
    if (o_.machines == "random") {
      std::array<std::uint8_t, 4> r{};
      oid::os_random(r);
      const std::uint32_t v =
          std::uint32_t{r[0]} << 24 | std::uint32_t{r[1]} << 16 | std::uint32_t{r[2]} << 8 | r[3];
      machine_ = v & layout.max_machine();
      id64_.reset();  // a fresh generator: a random draw may repeat the parent's id
    } else {
      machine_ = o_.machine_base + p;
      if (machine_ > layout.max_machine()) die("--machine-base + processes exceeds the layout");
    }
    if (!id64_) {
      id64_ = std::make_unique<oid::id64_generator>(layout, machine_, oid::millisecond_clock{},
                                                    [this] { return machine_; });
    }
    std::fprintf(stderr, "oid_fleet_worker: machine %u\n", static_cast<unsigned>(machine_));
  }

  void fill(std::span<oid::object_id> out) {
    if (id64_) {
      fill_id64(out);
    } else if (legacy_) {
      legacy_->fill(out);
    } else if (injected_) {
      if (o_.batch == 1) {
        for (auto& id : out) id = injected_->next();
      } else {
        injected_->fill(out);
      }
    } else if (o_.batch == 1) {
      for (auto& id : out) id = oid::generate();
    } else {
      oid::generate(out);
    }
  }

 private:
  // Called by every thread of the process at once: the buffer is the thread's own.
  void fill_id64(std::span<oid::object_id> out) {
    thread_local std::vector<oid::id64> ids;
    ids.resize(out.size());
    if (o_.batch == 1) {
      for (auto& id : ids) id = id64_->next();
    } else {
      id64_->fill(ids);
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      oid::object_id::bytes_type b{};
      for (int k = 0; k < 8; ++k) {
        b[static_cast<std::size_t>(4 + k)] =
            static_cast<std::uint8_t>(ids[i].value() >> (56 - 8 * k));
      }
      out[i] = oid::object_id(b);
    }
  }

  const options& o_;
  std::unique_ptr<oid::id64_generator> id64_;
  std::uint32_t machine_ = 0;
  std::unique_ptr<oid::legacy_object_id_generator> legacy_;
  std::unique_ptr<oid::object_id_generator> injected_;
};

void wait_until(std::int64_t ns) {
  if (ns <= 0) return;
  timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

/// Runs one process's threads; ids go to `slots` (T * N records), skipping `skip` already made.
void run_process(const options& o, source& src, oid::object_id* slots, std::uint64_t skip) {
  auto work = [&](unsigned t) {
    wait_until(o.start_at_ns);
    oid::object_id* out = slots + std::uint64_t{t} * o.ids;
    std::uint64_t done = t == 0 ? skip : 0;
    std::vector<oid::object_id> batch(
        std::min<std::uint64_t>(o.batch == 1 ? 4096 : o.batch, o.ids));
    while (done < o.ids) {
      const std::size_t n =
          static_cast<std::size_t>(std::min<std::uint64_t>(batch.size(), o.ids - done));
      src.fill(std::span(batch.data(), n));
      std::memcpy(static_cast<void*>(out + done), batch.data(), n * sizeof(oid::object_id));
      done += n;
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < o.threads; ++t) threads.emplace_back(work, t);
  work(0);
  for (auto& th : threads) th.join();
}

}  // namespace

int main(int argc, char** argv) {
  options o;
  CLI::App app{"One simulated container of oid's fleet test: P processes x T threads x N ids"};
  app.add_option("--out", o.out, "Output file of raw 12-byte records")->required();
  app.add_option("--processes,-p", o.processes, "Processes, the first one this one")
      ->check(CLI::Range(1u, 100000u));
  app.add_option("--threads,-t", o.threads, "Threads per process")->check(CLI::Range(1u, 1024u));
  app.add_option("--ids,-n", o.ids, "Ids per thread")
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 36));
  app.add_flag("--legacy", o.legacy, "Legacy layout: MD5 of the host name and the pid");
  app.add_option("--random-bits", o.random_bits, "Test only: keep B bits of the random value")
      ->check(CLI::Range(0, 40));
  app.add_option("--time", o.time, "Test only: a frozen clock (Unix seconds)");
  app.add_option("--start-at", o.start_at_ns, "Start making ids at this CLOCK_REALTIME (ns)");
  app.add_option("--batch", o.batch, "Ids per call: 1 calls next() per id (default), more fill()")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 26));
  app.add_option("--concurrency", o.concurrency, "At most this many processes at once (0: all)");
  app.add_option("--id64", o.id64, "64-bit ids in this layout instead of ObjectIds")
      ->check(CLI::IsMember({"compact64", "snowflake", "sonyflake"}));
  app.add_option("--machines", o.machines, "With --id64: assigned (default) or random machine ids")
      ->check(CLI::IsMember({"assigned", "random"}));
  app.add_option("--machine-base", o.machine_base, "With --id64: process p gets this + p");
  CLI11_PARSE(app, argc, argv);
  if (!o.id64.empty() && (o.legacy || o.random_bits >= 0 || o.time)) {
    die("--id64 takes no --legacy, --random-bits or --time");
  }
  if (o.legacy && (o.random_bits >= 0 || o.time)) die("--legacy takes no --random-bits or --time");

  const std::uint64_t per_process = std::uint64_t{o.threads} * o.ids;
  const std::uint64_t bytes = o.processes * per_process * sizeof(oid::object_id);
  const int fd = ::open(o.out.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) die("cannot open " + o.out + ": " + std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0)
    die(std::string("ftruncate: ") + std::strerror(errno));
  void* map = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) die(std::string("mmap: ") + std::strerror(errno));
  auto* records = static_cast<oid::object_id*>(map);

  source src(o);
  src.enter_process(0);
  // Seed the generator in this process before forking: each child must notice the fork.
  oid::object_id first;
  src.fill(std::span(&first, 1));
  std::memcpy(static_cast<void*>(records), &first, sizeof first);

  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const std::int64_t started =
      std::max<std::int64_t>(o.start_at_ns, std::int64_t{now.tv_sec} * 1000000000 + now.tv_nsec);
  if (o.start_at_ns != 0 && started > o.start_at_ns) {
    std::fprintf(stderr, "oid_fleet_worker: pid %d: started %.0f ms late\n",
                 static_cast<int>(::getpid()), static_cast<double>(started - o.start_at_ns) / 1e6);
  }
  const unsigned limit = o.concurrency == 0 ? o.processes : o.concurrency;
  const bool parent_first = limit < o.processes;  // waves: the parent's own share goes first
  if (parent_first) run_process(o, src, records, 1);
  unsigned alive = 0;
  bool failed = false;
  auto reap = [&] {
    int status = 0;
    if (::wait(&status) > 0) {
      --alive;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = true;
    }
  };
  for (unsigned p = 1; p < o.processes; ++p) {
    while (alive >= limit) reap();
    const pid_t pid = ::fork();
    if (pid < 0) die(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
      src.enter_process(p);
      run_process(o, src, records + p * per_process, 0);
      ::_exit(0);
    }
    ++alive;
  }
  if (!parent_first) run_process(o, src, records, 1);
  while (alive > 0) reap();
  ::clock_gettime(CLOCK_REALTIME, &now);
  const double seconds =
      static_cast<double>(std::int64_t{now.tv_sec} * 1000000000 + now.tv_nsec - started) / 1e9;
  if (::munmap(map, bytes) != 0 || ::close(fd) != 0) die("cannot finish " + o.out);
  if (failed) die("a child process failed");
  std::fprintf(stderr, "oid_fleet_worker: pid %d: %u processes x %u threads x %llu ids in %.2f s\n",
               static_cast<int>(::getpid()), o.processes, o.threads,
               static_cast<unsigned long long>(o.ids), seconds);
  return 0;
}
