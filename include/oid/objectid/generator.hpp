// oid/objectid/generator.hpp: making ObjectIds.
//
// `oid::generate()` returns a new id from the process-wide generator; `object_id_generator` is the
// same machine as an object, with an injectable clock and random source for exact tests.
//
// The layout follows MongoDB's ObjectId specification: 4 bytes of Unix seconds, a 5-byte random
// value drawn from the OS once per process (getrandom), a 3-byte counter that starts at a random
// value, adds 1 per id and wraps from 0xFFFFFF to 0.
//
// What oid guarantees beyond the specification, and how:
//
// * **No duplicate within a process, at any rate, whatever the clock does.** Every id has its own
//   sequence number n, drawn from one 64-bit atomic counter of the generator. Its counter bytes
//   are (c0 + n) mod 2^24 and its random bytes are R(k) = R0 + k * S mod 2^40 with k = n / 2^24
//   and S an odd constant. Within one run of 2^24 sequence numbers the counter bytes are all
//   distinct; across runs the random bytes are distinct, because k -> R0 + k*S is a bijection on
//   2^40 values. So two ids from one generator differ in their random or counter bytes, whatever
//   their timestamps: a clock that stands still or steps back cannot produce a duplicate, and
//   neither can more than 16,777,216 ids in one second (where the specification accepts
//   duplicates). The random value moves on each time the counter comes back to where it started.
//
// * **Threads without contention.** `next()` reserves sequence numbers for the calling thread in
//   blocks of 1,024 (one fetch_add per block, no lock) and hands them out from thread-local
//   storage, so an id costs no atomic operation and threads do not share a written cache line.
//   Blocks are disjoint, so the argument above holds unchanged. A thread's consecutive ids have
//   consecutive counters (except where a new block starts); ids of different threads interleave
//   by blocks, so across threads the counter follows the order of reservation, not of creation.
//   Numbers left in a block when its thread exits are never used. `fill()` reserves exactly what
//   it writes with one fetch_add: the ids of one call have consecutive counters.
//
// * **Time.** Every id reads the clock (`time()`: a vDSO call on Linux, no system call), so an id
//   carries the second in which it was made; `fill()` reads it once per call.
//
// * **fork() safety without a system call per id.** A child process must not reuse its parent's
//   random value, nor continue a block its parent reserved. The generator and each thread's block
//   remember a "fork cookie" of the process they belong to and compare it, with one plain memory
//   load, to the current one. The cookie lives in a page marked MADV_WIPEONFORK (the kernel gives
//   a child a zeroed copy, even for a raw clone()), and a pthread_atfork child handler zeroes it
//   as well where that madvise is unavailable. A changed cookie sends the next id down the slow
//   path, which draws a new random value and counter start from getrandom and reserves a new
//   block. (libbson's default calls getpid() for every id instead.) Reseeding takes a mutex that
//   is held across fork() so a child never inherits it locked.
//
// * **Several generators.** Each generator has a serial number that is never reused, and a
//   thread's block belongs to one generator: using another generator (or a new one at a dead
//   one's address) reserves a fresh block from that generator.
//
// Across processes and machines uniqueness is probabilistic, as for every ObjectId: see
// docs/uniqueness.md. `legacy_object_id_generator` makes the pre-3.4 layout (machine hash and pid)
// for systems that still expect it; it has none of the guarantees above.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <oid/objectid/object_id.hpp>
#include <span>

namespace oid {

/// Returns the current time as unsigned Unix seconds (what goes into bytes 0-3).
using clock_function = std::function<std::uint32_t()>;
/// Fills the span with random bytes. Throws to report failure.
using random_function = std::function<void(std::span<std::uint8_t>)>;

/// Unsigned Unix seconds now, from the system clock (`time()`, a vDSO call on Linux).
std::uint32_t system_clock_seconds() noexcept;
/// Fills `out` from the OS entropy source (getrandom, falling back to /dev/urandom). Throws
/// `oid::exception` with `errc::entropy_unavailable` when neither answers.
void os_random(std::span<std::uint8_t> out);

/// Makes ObjectIds in the modern layout with the guarantees described at the top of this header.
/// Thread-safe; not copyable or movable (threads may hold references to it).
///
///     oid::object_id_generator gen;
///     oid::object_id a = gen.next();
///     std::vector<oid::object_id> many(1000);
///     gen.fill(many);
class object_id_generator {
 public:
  /// Uses the system clock and OS entropy.
  object_id_generator();
  /// Uses the given clock and random source (tests, simulations). Either may be empty for the
  /// default. The random source is asked for 8 bytes at each seeding: 5 for the random value and 3
  /// for the counter start.
  object_id_generator(clock_function clock, random_function random);
  ~object_id_generator();
  object_id_generator(const object_id_generator&) = delete;
  object_id_generator& operator=(const object_id_generator&) = delete;

  /// A new id. Throws `oid::exception` (entropy_unavailable) only if seeding cannot get entropy.
  object_id next();
  /// Fills `out` with new ids, reading the clock once: the batch form of `next()`, with the same
  /// guarantees. The ids of one call have consecutive counters (modulo 2^24).
  void fill(std::span<object_id> out);

 private:
  struct seed {
    std::uint64_t random0 = 0;   // R0, 40 bits
    std::uint32_t counter0 = 0;  // c0, 24 bits
  };
  void reseed(std::uint64_t cookie);
  friend object_id generate();  // inlines next_inline()
  object_id next_inline();      // defined and used in generator.cpp only
  object_id next_slow();
  std::uint32_t now() const;

  clock_function clock_;
  random_function random_;
  std::uint64_t serial_;  // names this generator in the threads' blocks; never reused
  std::atomic<std::uint64_t> seeded_cookie_{0};     // fork cookie the seed belongs to; 0: unseeded
  seed seed_;                                       // written only under the reseed mutex
  alignas(64) std::atomic<std::uint64_t> next_{0};  // sequence number n of the next id
};

/// A new id from the process-wide generator (system clock, OS entropy). Thread- and fork-safe.
object_id generate();
/// Fills `out` with new ids from the process-wide generator.
void generate(std::span<object_id> out);

/// Makes ObjectIds in the legacy layout of MongoDB 3.2 and older drivers: bytes 4-6 the first three
/// bytes of the MD5 of the host name, bytes 7-8 the process id (big-endian, low 16 bits), bytes
/// 9-11 a counter from a random start. In containers every process may be pid 1 on a host called
/// "localhost", so ids from different machines collide: use it only to talk to systems that expect
/// this layout. Thread-safe; after fork() the child takes its own pid. Unlike the modern generator
/// it repeats an id when more than 2^24 are made in one second or the clock steps back.
class legacy_object_id_generator {
 public:
  /// Uses the host name, the process id, the system clock and OS entropy for the counter start.
  legacy_object_id_generator();
  /// Uses the given machine bytes and pid, and the given clock (empty: system clock). The counter
  /// starts at `counter_start`.
  legacy_object_id_generator(std::array<std::uint8_t, 3> machine, std::uint16_t pid,
                             clock_function clock, std::uint32_t counter_start);
  legacy_object_id_generator(const legacy_object_id_generator&) = delete;
  legacy_object_id_generator& operator=(const legacy_object_id_generator&) = delete;

  /// A new id.
  object_id next();
  /// Fills `out` with new ids.
  void fill(std::span<object_id> out);

  /// The first three bytes of MD5(host name), as the legacy drivers computed the machine id.
  static std::array<std::uint8_t, 3> machine_id_of(std::string_view host_name) noexcept;

 private:
  std::uint16_t pid();
  clock_function clock_;
  std::array<std::uint8_t, 3> machine_;
  bool own_pid_;  // true: read the process id (again after fork); false: fixed
  std::atomic<std::uint64_t> pid_cookie_{0};
  std::atomic<std::uint16_t> pid_{0};
  std::atomic<std::uint32_t> counter_;
};

}  // namespace oid
