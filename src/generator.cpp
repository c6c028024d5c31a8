#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include <cerrno>
#include <ctime>
#include <new>
#include <oid/generator.hpp>
#include <string>

#include "detail/md5.hpp"

namespace oid {
namespace {

// ---- Fork detection ------------------------------------------------------------------------
//
// A "fork cookie" names the process a generator was seeded in. It lives in its own page marked
// MADV_WIPEONFORK, so a child (even one made by a raw clone()) reads 0 there; a pthread_atfork
// child handler stores 0 too, for kernels without that madvise. Reading the cookie is one load.

std::mutex& reseed_mutex() {
  static std::mutex m;
  return m;
}

std::uint64_t last_cookie = 0;  // not wiped: each new process takes the next value; under the mutex

std::atomic<std::uint64_t>* cookie_slot();

void before_fork() { reseed_mutex().lock(); }
void after_fork_parent() { reseed_mutex().unlock(); }
void after_fork_child() {
  cookie_slot()->store(0, std::memory_order_relaxed);
  reseed_mutex().unlock();
}

std::atomic<std::uint64_t>* make_cookie_slot() {
  static_assert(std::atomic<std::uint64_t>::is_always_lock_free);
  const long page = sysconf(_SC_PAGESIZE);
  const std::size_t len = page > 0 ? static_cast<std::size_t>(page) : 4096;
  void* p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    static std::atomic<std::uint64_t> fallback{0};  // the atfork handler alone then
    p = &fallback;
  } else {
#ifdef MADV_WIPEONFORK
    (void)madvise(p, len, MADV_WIPEONFORK);  // failure leaves the atfork handler in charge
#endif
  }
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  return new (p) std::atomic<std::uint64_t>(0);
}

std::atomic<std::uint64_t>* cookie_slot() {
  static std::atomic<std::uint64_t>* const slot = make_cookie_slot();
  return slot;
}

std::uint64_t renew_cookie() {
  std::lock_guard lock(reseed_mutex());
  auto* slot = cookie_slot();
  std::uint64_t c = slot->load(std::memory_order_relaxed);
  if (c == 0) {
    c = ++last_cookie;
    slot->store(c, std::memory_order_relaxed);
  }
  return c;
}

/// The current process's cookie: never 0.
inline std::uint64_t current_cookie() {
  const std::uint64_t c = cookie_slot()->load(std::memory_order_relaxed);
  return c != 0 ? c : renew_cookie();
}

// ---- Layout --------------------------------------------------------------------------------

constexpr std::uint64_t mask40 = (std::uint64_t{1} << 40) - 1;
// Odd, so k -> R0 + k * stride (mod 2^40) visits all 2^40 values before repeating; taken from the
// golden ratio so that consecutive random values differ in many bits.
constexpr std::uint64_t random_stride = 0x9E3779B97Full;
static_assert(random_stride % 2 == 1 && random_stride <= mask40);

inline void store_time(std::uint8_t* b, std::uint32_t t) noexcept {
  b[0] = static_cast<std::uint8_t>(t >> 24);
  b[1] = static_cast<std::uint8_t>(t >> 16);
  b[2] = static_cast<std::uint8_t>(t >> 8);
  b[3] = static_cast<std::uint8_t>(t);
}

inline void store_counter(std::uint8_t* b, std::uint32_t c) noexcept {
  b[9] = static_cast<std::uint8_t>(c >> 16);
  b[10] = static_cast<std::uint8_t>(c >> 8);
  b[11] = static_cast<std::uint8_t>(c);
}

}  // namespace

// ---- Sources -------------------------------------------------------------------------------

std::uint32_t system_clock_seconds() noexcept {
  return static_cast<std::uint32_t>(::time(nullptr));
}

void os_random(std::span<std::uint8_t> out) {
  std::size_t done = 0;
  while (done < out.size()) {
    const ssize_t n = ::getrandom(out.data() + done, out.size() - done, 0);
    if (n > 0) {
      done += static_cast<std::size_t>(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  if (done == out.size()) return;
  // getrandom is missing (kernel < 3.17) or refused: fall back to the device.
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    while (done < out.size()) {
      const ssize_t n = ::read(fd, out.data() + done, out.size() - done);
      if (n > 0) {
        done += static_cast<std::size_t>(n);
      } else if (!(n < 0 && errno == EINTR)) {
        break;
      }
    }
    ::close(fd);
  }
  if (done != out.size()) throw exception(error{errc::entropy_unavailable, 0});
}

// ---- Modern generator ----------------------------------------------------------------------

object_id_generator::object_id_generator() = default;

object_id_generator::object_id_generator(clock_function clock, random_function random)
    : clock_(std::move(clock)), random_(std::move(random)) {}

object_id_generator::~object_id_generator() = default;

void object_id_generator::reseed(std::uint64_t cookie) {
  std::lock_guard lock(reseed_mutex());
  if (seeded_cookie_.load(std::memory_order_relaxed) == cookie) return;  // another thread did it
  std::array<std::uint8_t, 8> r{};
  if (random_) {
    random_(r);
  } else {
    os_random(r);
  }
  seed_.random0 = (std::uint64_t{r[0]} << 32 | std::uint64_t{r[1]} << 24 |
                   std::uint64_t{r[2]} << 16 | std::uint64_t{r[3]} << 8 | r[4]);
  seed_.counter0 = std::uint32_t{r[5]} << 16 | std::uint32_t{r[6]} << 8 | r[7];
  // The sequence number is not reset: with a new R0 the old and new numbers cannot meet.
  seeded_cookie_.store(cookie, std::memory_order_release);
}

object_id object_id_generator::compose(std::uint32_t time, const seed& s,
                                       std::uint64_t n) noexcept {
  object_id::bytes_type b;
  store_time(b.data(), time);
  const std::uint64_t r = (s.random0 + (n >> 24) * random_stride) & mask40;
  b[4] = static_cast<std::uint8_t>(r >> 32);
  b[5] = static_cast<std::uint8_t>(r >> 24);
  b[6] = static_cast<std::uint8_t>(r >> 16);
  b[7] = static_cast<std::uint8_t>(r >> 8);
  b[8] = static_cast<std::uint8_t>(r);
  store_counter(b.data(), (s.counter0 + static_cast<std::uint32_t>(n)) & 0xFFFFFF);
  return object_id(b);
}

object_id object_id_generator::next() {
  const std::uint64_t cookie = current_cookie();
  if (seeded_cookie_.load(std::memory_order_acquire) != cookie) reseed(cookie);
  const std::uint64_t n = next_.fetch_add(1, std::memory_order_relaxed);
  return compose(now(), seed_, n);
}

void object_id_generator::fill(std::span<object_id> out) {
  if (out.empty()) return;
  const std::uint64_t cookie = current_cookie();
  if (seeded_cookie_.load(std::memory_order_acquire) != cookie) reseed(cookie);
  const std::uint64_t n = next_.fetch_add(out.size(), std::memory_order_relaxed);
  const std::uint32_t t = now();
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = compose(t, seed_, n + i);
}

namespace {
object_id_generator& process_generator() {
  // Never destroyed: threads may still make ids while the process exits.
  static object_id_generator* const g = new object_id_generator();
  return *g;
}
}  // namespace

object_id generate() { return process_generator().next(); }
void generate(std::span<object_id> out) { process_generator().fill(out); }

// ---- Legacy generator ----------------------------------------------------------------------

std::array<std::uint8_t, 3> legacy_object_id_generator::machine_id_of(
    std::string_view host_name) noexcept {
  const auto d = detail::md5(host_name);
  return {d[0], d[1], d[2]};
}

namespace {
std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::uint32_t random_counter_start() {
  std::array<std::uint8_t, 3> r{};
  os_random(r);
  return std::uint32_t{r[0]} << 16 | std::uint32_t{r[1]} << 8 | r[2];
}
}  // namespace

legacy_object_id_generator::legacy_object_id_generator()
    : machine_(machine_id_of(host_name())), own_pid_(true), counter_(random_counter_start()) {}

legacy_object_id_generator::legacy_object_id_generator(std::array<std::uint8_t, 3> machine,
                                                       std::uint16_t pid, clock_function clock,
                                                       std::uint32_t counter_start)
    : clock_(std::move(clock)),
      machine_(machine),
      own_pid_(false),
      pid_(pid),
      counter_(counter_start & 0xFFFFFF) {}

std::uint16_t legacy_object_id_generator::pid() {
  if (!own_pid_) return pid_.load(std::memory_order_relaxed);
  const std::uint64_t cookie = current_cookie();
  if (pid_cookie_.load(std::memory_order_acquire) != cookie) {
    pid_.store(static_cast<std::uint16_t>(::getpid()), std::memory_order_relaxed);
    pid_cookie_.store(cookie, std::memory_order_release);
  }
  return pid_.load(std::memory_order_relaxed);
}

object_id legacy_object_id_generator::next() {
  object_id out;
  fill(std::span(&out, 1));
  return out;
}

void legacy_object_id_generator::fill(std::span<object_id> out) {
  if (out.empty()) return;
  const std::uint16_t p = pid();
  const std::uint32_t t = clock_ ? clock_() : system_clock_seconds();
  const std::uint32_t c0 =
      counter_.fetch_add(static_cast<std::uint32_t>(out.size()), std::memory_order_relaxed);
  object_id::bytes_type b;
  store_time(b.data(), t);
  b[4] = machine_[0];
  b[5] = machine_[1];
  b[6] = machine_[2];
  b[7] = static_cast<std::uint8_t>(p >> 8);
  b[8] = static_cast<std::uint8_t>(p);
  for (std::size_t i = 0; i < out.size(); ++i) {
    store_counter(b.data(), (c0 + static_cast<std::uint32_t>(i)) & 0xFFFFFF);
    out[i] = object_id(b);
  }
}

}  // namespace oid
