#include <fcntl.h>
#include <sys/random.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <oid/detail/endian.hpp>
#include <oid/objectid/generator.hpp>
#include <string>
#include <type_traits>

#include "detail/fork_cookie.hpp"
#include "detail/md5.hpp"

namespace oid {
namespace {

// Fork detection (the cookie, its page and the mutex held across fork()) is shared with the 64-bit
// generator: src/detail/fork_cookie.hpp.
using detail::current_fork_cookie;
using detail::fork_cookie_page;
using detail::fork_mutex;

// ---- Layout --------------------------------------------------------------------------------

constexpr std::uint64_t mask40 = (std::uint64_t{1} << 40) - 1;
// Odd, so k -> R0 + k * stride (mod 2^40) visits all 2^40 values before repeating; taken from the
// golden ratio so that consecutive random values differ in many bits.
constexpr std::uint64_t random_stride = 0x9E3779B97Full;
static_assert(random_stride % 2 == 1 && random_stride <= mask40);

inline void store_counter(std::uint8_t* b, std::uint32_t c) noexcept {
  b[9] = static_cast<std::uint8_t>(c >> 16);
  b[10] = static_cast<std::uint8_t>(c >> 8);
  b[11] = static_cast<std::uint8_t>(c);
}

constexpr std::uint64_t mask24 = 0xFFFFFF;
constexpr std::uint64_t run_length = std::uint64_t{1} << 24;  // sequence numbers per random value

/// R(n / 2^24): the random value for sequence number n, already shifted into place (bits 24-63).
inline std::uint64_t shifted_random(std::uint64_t random0, std::uint64_t n) noexcept {
  return ((random0 + (n >> 24) * random_stride) & mask40) << 24;
}

// ---- Per-thread blocks ---------------------------------------------------------------------
//
// A thread reserves sequence numbers in blocks (one fetch_add of block_size) and hands them out
// with plain increments of its own thread_local state: no shared cache line is written per id,
// so threads scale. A block never crosses a multiple of 2^24, so all its ids share one random
// value, kept here pre-shifted; the counter is kept as the next counter value itself.
//
// The block is valid only for the generator that reserved it (serial: generators are numbered
// from a process-wide counter and numbers are never reused, so a new generator at a dead one's
// address does not inherit its blocks) and in the process that reserved it (cookie: a forked
// child inherits this thread_local but reads a different cookie, so it reseeds instead of
// continuing its parent's block with its parent's random value).

constexpr std::uint32_t block_size = 1024;

struct thread_block {
  std::uint64_t serial = 0;   // generator the block belongs to; 0: none
  std::uint64_t cookie = 0;   // fork cookie of the process that reserved it
  std::uint64_t random = 0;   // shifted_random() of the block
  std::uint32_t counter = 0;  // counter bytes of the next id
  std::uint32_t left = 0;     // ids left in the block
};
// Trivial, so the access is a plain TLS offset with no initialisation guard.
static_assert(std::is_trivially_destructible_v<thread_block>);
constinit thread_local thread_block this_thread_block;

std::atomic<std::uint64_t> last_serial{0};

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

object_id_generator::object_id_generator()
    : serial_(last_serial.fetch_add(1, std::memory_order_relaxed) + 1) {}

object_id_generator::object_id_generator(clock_function clock, random_function random)
    : clock_(std::move(clock)),
      random_(std::move(random)),
      serial_(last_serial.fetch_add(1, std::memory_order_relaxed) + 1) {}

object_id_generator::~object_id_generator() = default;

// Read for every id: `time()` is a vDSO call on Linux (a few ns, no system call) and is called
// directly rather than through system_clock_seconds(), which costs one more call.
inline std::uint32_t object_id_generator::now() const {
  return clock_ ? clock_() : static_cast<std::uint32_t>(::time(nullptr));
}

void object_id_generator::reseed(std::uint64_t cookie) {
  std::lock_guard lock(fork_mutex());
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

namespace {
/// The id with this time and bytes 4-11 (`tail`, big-endian). An object_id is returned in two
/// registers (bytes 0-7 and 8-11); building those two words directly, rather than storing bytes
/// and reading them back as words, avoids a store-to-load forwarding stall on the hot path.
inline object_id make_id(std::uint32_t time, std::uint64_t tail) noexcept {
  std::uint64_t head;  // bytes 0-7 as the machine reads them
  std::uint32_t last;  // bytes 8-11
  if constexpr (std::endian::native == std::endian::little) {
    const std::uint64_t tail_le = __builtin_bswap64(tail);  // byte 4 of the id is now lowest
    head = std::uint64_t{__builtin_bswap32(time)} | tail_le << 32;
    last = static_cast<std::uint32_t>(tail_le >> 32);
  } else {
    head = std::uint64_t{time} << 32 | tail >> 32;
    last = static_cast<std::uint32_t>(tail);
  }
  object_id::bytes_type b;
  std::memcpy(b.data(), &head, 8);
  std::memcpy(b.data() + 8, &last, 4);
  return object_id(b);
}

/// Takes the next counter value of the calling thread's block, which the caller has checked is
/// valid, and returns bytes 4-11 of the id. Done before the clock is read, so that the block's
/// bookkeeping does not wait for the clock call.
inline std::uint64_t take_tail(thread_block& b) noexcept {
  --b.left;
  const std::uint32_t c = b.counter;
  b.counter = (c + 1) & mask24;
  return b.random | c;
}
}  // namespace

// The hot path, written once and inlined into both next() and generate(): a call less per id.
[[gnu::always_inline]] inline object_id object_id_generator::next_inline() {
  thread_block& b = this_thread_block;
  // The cookie is read last: only a thread that holds a block of this generator gets there, and
  // such a thread has been through current_fork_cookie(), which set fork_cookie_page.
  if (b.serial == serial_ && b.left != 0 &&
      b.cookie == fork_cookie_page->load(std::memory_order_relaxed)) [[likely]] {
    const std::uint64_t tail = take_tail(b);
    return make_id(now(), tail);
  }
  return next_slow();
}

object_id object_id_generator::next() { return next_inline(); }

object_id object_id_generator::next_slow() {
  const std::uint64_t cookie = current_fork_cookie();
  if (seeded_cookie_.load(std::memory_order_acquire) != cookie) reseed(cookie);
  const std::uint64_t n = next_.fetch_add(block_size, std::memory_order_relaxed);
  // Numbers past the next multiple of 2^24 are dropped from this block (and never used), so that
  // one random value serves the whole block.
  const std::uint64_t count = std::min<std::uint64_t>(block_size, run_length - (n & mask24));
  thread_block& b = this_thread_block;
  b.serial = serial_;
  b.cookie = cookie;
  b.random = shifted_random(seed_.random0, n);
  b.counter = static_cast<std::uint32_t>((seed_.counter0 + n) & mask24);
  b.left = static_cast<std::uint32_t>(count);
  const std::uint64_t tail = take_tail(b);
  return make_id(now(), tail);
}

void object_id_generator::fill(std::span<object_id> out) {
  if (out.empty()) return;
  const std::uint64_t cookie = current_fork_cookie();
  if (seeded_cookie_.load(std::memory_order_acquire) != cookie) reseed(cookie);
  std::uint64_t n = next_.fetch_add(out.size(), std::memory_order_relaxed);
  const std::uint32_t time = now();
  std::size_t i = 0;
  while (i < out.size()) {
    // One run: ids up to the next multiple of 2^24, which share a random value.
    const std::size_t run = static_cast<std::size_t>(
        std::min<std::uint64_t>(out.size() - i, run_length - (n & mask24)));
    const std::uint64_t random = shifted_random(seed_.random0, n);
    std::uint32_t c = static_cast<std::uint32_t>((seed_.counter0 + n) & mask24);
    for (const std::size_t end = i + run; i < end; ++i) {
      out[i] = make_id(time, random | c);
      c = (c + 1) & mask24;
    }
    n += run;
  }
}

namespace {
object_id_generator& process_generator() {
  // Never destroyed: threads may still make ids while the process exits.
  static object_id_generator* const g = new object_id_generator();
  return *g;
}
}  // namespace

object_id generate() { return process_generator().next_inline(); }
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
  const std::uint64_t cookie = current_fork_cookie();
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
  detail::store_be_u32(b.data(), t);
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
