// oid/objectid/id64_generator.hpp: making 64-bit ids (compact64, Snowflake, Sonyflake) without
// duplicates.
//
// `id64_generator` makes ids in one `id64_layout` for one machine id, which the caller must
// assign: with 8 or 10 machine bits, machine ids drawn at random collide between 2 of 20
// processes (compact64) or 2 of 38 (Snowflake) with probability 1/2 or more; docs/uniqueness.md
// has the arithmetic. Give each process its own id (a deployment index, a lease from a
// coordinator, a database sequence).
//
// What it guarantees, and how:
//
// * **No duplicate from one generator, at any rate, whatever the clock does.** Let a position be
//   `units * ids_per_unit + counter`: with the machine id fixed, positions and ids correspond one
//   to one. The generator keeps the next free position in one 64-bit atomic and hands out each
//   position once, taking `max(next free, start of the clock's current unit)`. So:
//   - when a time unit's counter runs out (more than `ids_per_unit()` ids in one unit, e.g. 4,097
//     Snowflake ids in one millisecond), the next id takes counter 0 of the *next* unit: the id's
//     time runs ahead of the clock until the clock catches up. The counter never wraps into the
//     machine bits, and the generator never sleeps.
//   - when the clock steps back (NTP, a VM restored), ids continue from the last position used,
//     never below the last time unit used, until the clock passes it again.
//   The id's time field is therefore the clock's unit or later, never earlier; it is later only
//   when ids are made faster than the layout allows or after the clock stepped back.
//
// * **Threads.** `next()` and `fill()` reserve positions with one compare-and-swap on the shared
//   atomic; no lock. Ids of one thread increase; across threads they follow reservation order.
//
// * **fork() safety without a system call per id.** A forked child shares its parent's machine id
//   and position, so it would repeat its parent's ids. Each id compares, with one plain load, the
//   generator's fork cookie with the process's (the same mechanism as the ObjectId generator: a
//   page marked MADV_WIPEONFORK plus a pthread_atfork handler). In a child, the first id asks the
//   `after_fork` function given at construction for the child's machine id (it must differ from
//   the parent's and every other process's); without one, or if it returns the parent's, the child
//   gets `errc::forked_machine_id` instead of a duplicate.
//
// * **Time.** Every id reads the clock (`clock_gettime(CLOCK_REALTIME)`, a vDSO call on Linux);
//   `fill()` reads it once per call. Outside the layout's range (before its epoch, after its last
//   unit) the generator throws `errc::time_out_of_range` rather than making an id that would wrap.
//
// Across processes, uniqueness is exactly as good as the machine id assignment.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <oid/objectid/id64.hpp>
#include <span>

namespace oid {

/// Returns the current Unix time in milliseconds.
using millisecond_clock = std::function<std::int64_t()>;
/// Returns a forked child's machine id; called in the child before its first id.
using machine_id_function = std::function<std::uint32_t()>;

/// Unix milliseconds now, from the system clock (`clock_gettime(CLOCK_REALTIME)`).
std::int64_t system_clock_milliseconds() noexcept;

/// Makes 64-bit ids in one layout for one assigned machine id, with the guarantees described at
/// the top of this header. Thread-safe; not copyable or movable.
///
///     oid::id64_generator gen(oid::id64_layout::snowflake(), 17);  // worker 17
///     oid::id64 id = gen.next();
///     std::cout << id.to_decimal() << '\n';
class id64_generator {
 public:
  /// Uses the system clock; a forked child cannot make ids. Throws `oid::exception` with
  /// `machine_id_out_of_range` when `machine_id > layout.max_machine()`.
  id64_generator(const id64_layout& layout, std::uint32_t machine_id);
  /// Uses `clock` (empty: the system clock) and, in a forked child, `after_fork` for the child's
  /// machine id (empty: the child gets `forked_machine_id`). Throws as above.
  id64_generator(const id64_layout& layout, std::uint32_t machine_id, millisecond_clock clock,
                 machine_id_function after_fork = {});
  id64_generator(const id64_generator&) = delete;
  id64_generator& operator=(const id64_generator&) = delete;

  /// A new id. Throws `oid::exception`: `time_out_of_range` when the clock (or the position,
  /// after running ahead) is outside the layout's range; `forked_machine_id` or
  /// `machine_id_out_of_range` in a forked child without a valid machine id of its own.
  id64 next();
  /// Fills `out` with new ids, reading the clock once: the ids of one call are consecutive
  /// positions (consecutive counters, carrying into the next time unit). Throws as `next()`.
  void fill(std::span<id64> out);

  /// The layout.
  const id64_layout& layout() const noexcept { return layout_; }
  /// The machine id in use (a forked child's own after its first id).
  std::uint32_t machine_id() const noexcept;

 private:
  std::uint64_t reserve(std::uint64_t count);  // first of `count` positions
  void renew_after_fork();
  id64 at(std::uint64_t position) const noexcept;

  const id64_layout layout_;
  const millisecond_clock clock_;
  const machine_id_function after_fork_;
  std::atomic<std::uint64_t> machine_bits_;  // the machine id in place
  std::atomic<std::uint64_t> cookie_;        // fork cookie of the process the machine id is for
  alignas(64) std::atomic<std::uint64_t> next_{0};  // next free position
};

}  // namespace oid
