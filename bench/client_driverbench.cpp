// The single- and multi-document tasks of MongoDB's driver benchmark ("DriverBench") for oid's
// client. bench/libmongoc_driverbench.c, bench/go/ and bench/pymongo_driverbench.py are the same
// program for libmongoc, the Go driver and PyMongo; scripts/bench-client.sh runs all four against
// FerretDB and against bench/canned_server.cpp and prints one table.
//
// Tasks, as the benchmarking specification defines them (source/benchmarking/benchmarking.md in
// mongodb/specifications), with N operations (10,000 in the specification; --count):
//
//   run_command        {hello: true} N times, each reply read
//   find_one           find by _id N times on the tweet document (setup: N tweets, _id 1..N)
//   insert_one_small   insertOne of the small document N times (before each iteration: drop and
//                      create the collection)
//   insert_one_large   insertOne of the large document L times (10; --large-count)
//   find_many          find {} on N tweets and read every document (setup: N tweets inserted)
//   insert_many_small  one ordered insertMany of N small documents (drop and create before each)
//   insert_many_large  one ordered insertMany of L large documents
//
// Setup and the before-task step are outside the timing. Each iteration's wall time (steady
// clock) and the process's CPU time (getrusage, user + system, all threads: the driver's own
// monitor threads included) are measured around the timed part only. The score is the task size
// (the specification's document size times the operations, in MB of 1,000,000 bytes) over the
// median wall time; the CPU time per operation is the median iteration's CPU time over its
// operations, and its system part the share of system time in all the timed iterations' CPU
// time (one iteration's split is a few of the kernel's clock ticks); allocations per operation
// count every operator new of the timed parts (a counting replacement of the global operator new).
// With --server-pid P, the CPU time of process P (the server, all its threads: clock_getcpuclockid,
// nanoseconds) is measured around the same timed part, and its median iteration over the operations
// is reported too: scripts/bench-client.sh passes the canned server's pid, so that the two-thread
// table can say how much of the machine's cores one thread and its server thread already use. An
// operation is one command for the single-document tasks and one document for the multi-document
// ones. The data is left in perftest.corpus at the end (no teardown drop), so that the script can
// count what the last iteration wrote.
//
// With --threads T, T threads share one client and each does the whole task per iteration; the
// score counts the work of all of them (throughput), so T threads against one thread is the
// scaling. Output: one line per task, or one JSON object per line with --json:
//
//   {"client": "oid", "task": ..., "threads": T, "ops": ..., "iterations": ..., "mb": ...,
//    "wall_s": <median>, "mbps": ..., "cpu_us_per_op": ..., "sys_us_per_op": <its system part>,
//    "allocs_per_op": ...,
//    "docs": <documents the last iteration read or the server acknowledged>,
//    "server_cpu_us_per_op": ... (only with --server-pid)}
//
//   client_driverbench --uri URI [--task NAME[,NAME...]|all] [--count N] [--large-count L]
//                      [--iterations K] [--warmup W] [--threads T] [--data DIR] [--json]
//                      [--server-pid P]
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <new>
#include <numeric>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/error.hpp>
#include <oid/mongo/client.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

// Every operator new of the process is counted (the library, the standard library and this
// program alike), so that the timed part's allocations per operation can be reported. Each thread
// counts in a slot of its own, a cache line apart: with one shared counter, two threads that
// allocate (insert_many_small: two allocations a document) would pass its line back and forth
// between the cores, a cost of the benchmark and not of the client.
namespace {
struct alignas(64) allocation_slot {
  std::atomic<std::uint64_t> n{0};
};
constexpr std::size_t allocation_slots = 64;  // slots are shared (atomically) past 64 threads
allocation_slot slots[allocation_slots];
std::atomic<std::size_t> next_slot{0};
constinit thread_local std::size_t this_thread_slot = allocation_slots;  // none yet

// The allocations so far (read after the threads that made them have been joined).
std::uint64_t allocations() {
  std::uint64_t sum = 0;
  for (const auto& s : slots) sum += s.n.load(std::memory_order_relaxed);
  return sum;
}
}  // namespace

void* operator new(std::size_t n) {
  if (this_thread_slot == allocation_slots) {
    this_thread_slot = next_slot.fetch_add(1, std::memory_order_relaxed) % allocation_slots;
  }
  slots[this_thread_slot].n.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// Not inlined: inlined into a container's destructor, GCC 12 pairs this free with the operator
// new it sees allocating and warns (-Wmismatched-new-delete), though both are the ones above.
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace ob = oid::bson;
namespace om = oid::mongo;

// The specification's sizes, in bytes, of one operation's document.
constexpr double hello_bytes = 13;
constexpr double tweet_bytes = 1622;
constexpr double small_bytes = 275;
constexpr double large_bytes = 2'731'089;

constexpr std::string_view db_name = "perftest";
constexpr std::string_view coll_name = "corpus";

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "client_driverbench: " << what << '\n';
  std::exit(1);
}

// The text of an operation's error: an oid::error (code and offset) or a failure with its message.
template <class E>
std::string describe(const E& e) {
  if constexpr (requires { e.message; }) {
    return e.message;
  } else {
    return e.code.message() + " at offset " + std::to_string(e.offset);
  }
}

// The value of an outcome, or the end of the program with its error.
template <class R>
auto must(R&& r, std::string_view what) {
  if (!r.has_value()) fail(std::string(what) + ": " + describe(r.error()));
  return std::move(*r);
}

ob::document read_json_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot read " + path);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  auto doc = ob::from_json(text);
  if (!doc) fail(path + ": " + describe(doc.error()));
  return std::move(*doc);
}

ob::document one_field(std::string_view key, auto value) {
  ob::builder b;
  b.append(key, value);
  return std::move(b).extract();
}

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The CPU time (user + system, all threads) of another process, from its CPU-time clock.
double cpu_seconds(clockid_t clock) {
  timespec t{};
  if (::clock_gettime(clock, &t) != 0) fail("cannot read the server's CPU clock");
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
}

// The system part of cpu_seconds(): the kernel's work for the process (send, receive, waking up).
double sys_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_stime.tv_sec) + static_cast<double>(u.ru_stime.tv_usec) / 1e6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct options {
  std::string uri;
  std::string task = "all";
  std::string data = OID_SPEC_DATA_DIR "/driverbench/single_and_multi_document";
  int count = 10'000;
  int large_count = 10;
  int iterations = 10;
  int warmup = 1;
  int threads = 1;
  int server_pid = 0;  // 0: the server's CPU time is not measured
  bool json = false;
};

// One task: what to do once, before each iteration, and the timed part (which returns the
// documents it read or the server acknowledged, for the check).
struct task {
  std::string name;
  double op_bytes;
  int ops;
  std::function<void()> setup;
  std::function<void()> before;
  std::function<std::int64_t()> run;
};

class bench {
 public:
  bench(om::client c, const options& o)
      : client_(std::move(c)), coll_(client_.collection(db_name, coll_name)), o_(o) {
    if (o.server_pid != 0 && ::clock_getcpuclockid(o.server_pid, &server_clock_) != 0) {
      fail("--server-pid " + std::to_string(o.server_pid) + ": no CPU clock for that process");
    }
    tweet_ = read_json_file(o.data + "/tweet.json");
    small_ = read_json_file(o.data + "/small_doc.json");
    large_ = read_json_file(o.data + "/large_doc.json");
    hello_ = one_field("hello", true);
  }

  std::vector<task> tasks() {
    const int n = o_.count, l = o_.large_count;
    return {
        {"run_command", hello_bytes, n, [] {}, [] {}, [this, n] { return run_command(n); }},
        {"find_one", tweet_bytes, n, [this, n] { load_tweets(n, true); }, [] {},
         [this, n] { return find_one(n); }},
        {"insert_one_small", small_bytes, n, [this] { drop_database(); }, [this] { recreate(); },
         [this, n] { return insert_one(small_.view(), n); }},
        {"insert_one_large", large_bytes, l, [this] { drop_database(); }, [this] { recreate(); },
         [this, l] { return insert_one(large_.view(), l); }},
        {"find_many", tweet_bytes, n, [this, n] { load_tweets(n, false); }, [] {},
         [this] { return find_many(); }},
        {"insert_many_small", small_bytes, n, [this] { drop_database(); }, [this] { recreate(); },
         [this, n] { return insert_many(small_.view(), n); }},
        {"insert_many_large", large_bytes, l, [this] { drop_database(); }, [this] { recreate(); },
         [this, l] { return insert_many(large_.view(), l); }},
    };
  }

  void measure(const task& t) {
    t.setup();
    std::vector<double> walls, cpus, syss, server_cpus;
    std::uint64_t allocs = 0;
    std::int64_t docs = 0;
    for (int i = 0; i < o_.warmup + o_.iterations; ++i) {
      t.before();
      const std::uint64_t allocs0 = allocations();
      const double server0 = o_.server_pid != 0 ? cpu_seconds(server_clock_) : 0;
      const double cpu0 = cpu_seconds(), sys0 = sys_seconds();
      const auto t0 = std::chrono::steady_clock::now();
      docs = run_threads(t);
      const auto t1 = std::chrono::steady_clock::now();
      const double cpu1 = cpu_seconds(), sys1 = sys_seconds();
      const double server1 = o_.server_pid != 0 ? cpu_seconds(server_clock_) : 0;
      if (i < o_.warmup) continue;
      server_cpus.push_back(server1 - server0);
      allocs += allocations() - allocs0;
      walls.push_back(std::chrono::duration<double>(t1 - t0).count());
      cpus.push_back(cpu1 - cpu0);
      syss.push_back(sys1 - sys0);
    }
    const double wall = median(walls);
    const double total_ops = static_cast<double>(t.ops) * o_.threads;
    const double mb = t.op_bytes * total_ops / 1e6;
    const double cpu_us = median(cpus) / total_ops * 1e6;
    // The median iteration's CPU time, split as all the timed iterations' time splits: the kernel
    // counts user and system time by its clock's ticks (4 ms at 250 Hz), a few in one iteration
    // of find many, so one iteration's split moves by a tick; the sum over them all does not.
    const double cpu_sum = std::accumulate(cpus.begin(), cpus.end(), 0.0);
    const double sys_share =
        cpu_sum > 0 ? std::accumulate(syss.begin(), syss.end(), 0.0) / cpu_sum : 0.0;
    const double sys_us = cpu_us * sys_share;
    const double allocs_per_op = static_cast<double>(allocs) / (total_ops * o_.iterations);
    const double server_us = median(server_cpus) / total_ops * 1e6;
    char server[64] = "";
    char line[640];
    if (o_.json) {
      if (o_.server_pid != 0) {
        std::snprintf(server, sizeof server, R"(, "server_cpu_us_per_op": %.3f)", server_us);
      }
      std::snprintf(line, sizeof line,
                    R"({"client": "oid", "task": "%s", "threads": %d, "ops": %d, )"
                    R"("iterations": %d, "mb": %.6f, "wall_s": %.6f, "mbps": %.3f, )"
                    R"("cpu_us_per_op": %.3f, "sys_us_per_op": %.3f, "allocs_per_op": %.2f, )"
                    R"("docs": %lld%s})",
                    t.name.c_str(), o_.threads, t.ops, o_.iterations, mb, wall, mb / wall, cpu_us,
                    sys_us, allocs_per_op, static_cast<long long>(docs), server);
    } else {
      if (o_.server_pid != 0) {
        std::snprintf(server, sizeof server, "  server cpu %9.2f us/op", server_us);
      }
      std::snprintf(
          line, sizeof line,
          "%-18s %8.2f MB/s  wall %9.4f s  cpu %9.2f us/op  %7.2f allocs/op  (%d ops x %d "
          "threads, median of %d, %lld docs)%s",
          t.name.c_str(), mb / wall, wall, cpu_us, allocs_per_op, t.ops, o_.threads, o_.iterations,
          static_cast<long long>(docs), server);
    }
    std::cout << line << std::endl;
  }

 private:
  // The timed part on o_.threads threads sharing the client; the documents of all of them.
  std::int64_t run_threads(const task& t) {
    if (o_.threads == 1) return t.run();
    std::vector<std::int64_t> docs(static_cast<std::size_t>(o_.threads));
    std::vector<std::thread> pool;
    for (std::size_t i = 0; i < docs.size(); ++i) pool.emplace_back([&, i] { docs[i] = t.run(); });
    for (auto& th : pool) th.join();
    std::int64_t sum = 0;
    for (auto d : docs) sum += d;
    return sum;
  }

  std::int64_t run_command(int n) {
    for (int i = 0; i < n; ++i) {
      auto reply = must(client_.run_command("admin", hello_.view()), "hello");
      if (reply.view().empty()) fail("hello: empty reply");
    }
    return n;
  }

  std::int64_t find_one(int n) {
    std::int64_t found = 0;
    om::find_options first;
    first.limit = 1;
    for (int i = 1; i <= n; ++i) {
      const ob::document filter = one_field("_id", std::int32_t{i});
      auto cur = must(coll_.find(filter.view(), first), "find one");
      while (must(cur.next(), "find one: next")) ++found;
    }
    return found;
  }

  std::int64_t insert_one(ob::document_view doc, int n) {
    std::int64_t acked = 0;
    for (int i = 0; i < n; ++i) acked += must(coll_.insert_one(doc), "insert one").inserted;
    return acked;
  }

  std::int64_t insert_many(ob::document_view doc, int n) {
    const std::vector<ob::document_view> docs(static_cast<std::size_t>(n), doc);
    return must(coll_.insert_many(docs), "insert many").inserted;
  }

  std::int64_t find_many() {
    auto cur = must(coll_.find(), "find many");
    std::int64_t read = 0;
    while (must(cur.next(), "find many: next")) ++read;
    return read;
  }

  void drop_database() {
    const ob::document command = one_field("dropDatabase", 1);
    (void)must(client_.run_command(db_name, command.view()), "dropDatabase");
  }

  void recreate() {
    (void)must(coll_.drop(), "drop");
    const ob::document command = one_field("create", coll_name);
    (void)must(client_.run_command(db_name, command.view()), "create");
  }

  // N tweets in a fresh collection: with _id 1..N, or with ids the client makes.
  void load_tweets(int n, bool numbered_ids) {
    drop_database();
    std::vector<ob::document> docs;
    docs.reserve(static_cast<std::size_t>(n));
    for (int i = 1; i <= n; ++i) {
      if (!numbered_ids) {
        docs.push_back(tweet_);
        continue;
      }
      ob::builder b;
      b.append_int32("_id", i);
      for (const ob::element& e : tweet_.view()) {
        if (e.key() != "_id") b.append_element(e);
      }
      docs.push_back(std::move(b).extract());
    }
    std::vector<ob::document_view> views;
    for (const auto& d : docs) views.push_back(d.view());
    const auto done = must(coll_.insert_many(views), "setup: insert tweets");
    if (done.inserted != n) fail("setup: inserted " + std::to_string(done.inserted) + " tweets");
  }

  om::client client_;
  om::collection coll_;
  const options& o_;
  clockid_t server_clock_{};
  ob::document tweet_, small_, large_, hello_;
};

int to_int(const char* flag, const char* text, int min) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > 100'000'000) {
    std::cerr << "client_driverbench: " << flag << " wants a number >= " << min << ", not \""
              << text << "\"\n";
    std::exit(2);
  }
  return static_cast<int>(v);
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::cerr << "client_driverbench: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--uri")
      o.uri = next();
    else if (a == "--task")
      o.task = next();
    else if (a == "--data")
      o.data = next();
    else if (a == "--count")
      o.count = to_int("--count", next(), 1);
    else if (a == "--large-count")
      o.large_count = to_int("--large-count", next(), 1);
    else if (a == "--iterations")
      o.iterations = to_int("--iterations", next(), 1);
    else if (a == "--warmup")
      o.warmup = to_int("--warmup", next(), 0);
    else if (a == "--threads")
      o.threads = to_int("--threads", next(), 1);
    else if (a == "--server-pid")
      o.server_pid = to_int("--server-pid", next(), 1);
    else if (a == "--json")
      o.json = true;
    else {
      std::cerr << "client_driverbench: unknown argument " << a << " (see the file's comment)\n";
      std::exit(2);
    }
  }
  if (o.uri.empty()) {
    if (const char* env = std::getenv("MONGODB_URI")) o.uri = env;
  }
  if (o.uri.empty()) {
    std::cerr << "client_driverbench: --uri (or MONGODB_URI) is needed\n";
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const options o = parse(argc, argv);
  auto made = om::client::create(o.uri);
  if (!made) fail("bad URI: " + describe(made.error()));
  bench b(std::move(*made), o);
  std::vector<task> chosen;
  for (task& t : b.tasks()) {
    if (o.task == "all" || ("," + o.task + ",").find("," + t.name + ",") != std::string::npos) {
      chosen.push_back(std::move(t));
    }
  }
  const std::size_t named =
      o.task == "all" ? chosen.size()
                      : static_cast<std::size_t>(std::count(o.task.begin(), o.task.end(), ',')) + 1;
  if (chosen.empty() || chosen.size() != named) {
    std::cerr << "client_driverbench: unknown task in \"" << o.task << "\"\n";
    return 2;
  }
  for (const task& t : chosen) b.measure(t);
  return 0;
}
