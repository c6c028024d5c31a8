#include <time.h>

#include <algorithm>
#include <oid/objectid/id64_generator.hpp>

#include "detail/fork_cookie.hpp"

namespace oid {

std::int64_t system_clock_milliseconds() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return std::int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

id64_generator::id64_generator(const id64_layout& layout, std::uint32_t machine_id)
    : id64_generator(layout, machine_id, {}, {}) {}

id64_generator::id64_generator(const id64_layout& layout, std::uint32_t machine_id,
                               millisecond_clock clock, machine_id_function after_fork)
    : layout_(layout),
      clock_(std::move(clock)),
      after_fork_(std::move(after_fork)),
      machine_bits_(std::uint64_t{machine_id} << layout.machine.shift),
      cookie_(detail::current_fork_cookie()) {  // also sets detail::fork_cookie_page
  layout.check_machine(machine_id).value();
}

std::uint32_t id64_generator::machine_id() const noexcept {
  return static_cast<std::uint32_t>(
      layout_.machine.get(machine_bits_.load(std::memory_order_relaxed)));
}

void id64_generator::renew_after_fork() {
  const std::uint64_t cookie = detail::current_fork_cookie();
  if (cookie_.load(std::memory_order_acquire) == cookie) return;
  std::lock_guard lock(detail::fork_mutex());
  if (cookie_.load(std::memory_order_relaxed) == cookie) return;  // another thread did it
  const std::uint32_t parent = machine_id();
  if (!after_fork_) throw exception(error{errc::forked_machine_id, 0});
  const std::uint32_t child = after_fork_();
  layout_.check_machine(child).value();
  if (child == parent) throw exception(error{errc::forked_machine_id, 0});
  // The position carries on: with another machine id, the child's ids cannot meet the parent's.
  machine_bits_.store(std::uint64_t{child} << layout_.machine.shift, std::memory_order_relaxed);
  cookie_.store(cookie, std::memory_order_release);
}

std::uint64_t id64_generator::reserve(std::uint64_t count) {
  if (cookie_.load(std::memory_order_acquire) !=
      detail::fork_cookie_page->load(std::memory_order_relaxed)) [[unlikely]] {
    renew_after_fork();
  }
  const std::int64_t ms = clock_ ? clock_() : system_clock_milliseconds();
  const std::uint64_t units = layout_.units_at(sys_milliseconds{std::chrono::milliseconds{ms}})
                                  .value();  // throws time_out_of_range
  const std::uint64_t floor = units << layout_.counter.width;
  std::uint64_t next = next_.load(std::memory_order_relaxed);
  std::uint64_t first;
  do {
    first = std::max(next, floor);
  } while (!next_.compare_exchange_weak(next, first + count, std::memory_order_relaxed));
  // Positions stay far below 2^64 (at most 2^(time bits + counter bits) = 2^56), so the sum does
  // not wrap; running past the last unit is an error, not a wrap to the epoch.
  if (((first + count - 1) >> layout_.counter.width) > layout_.time.max()) {
    throw exception(error{errc::time_out_of_range, 0});
  }
  return first;
}

inline id64 id64_generator::at(std::uint64_t position) const noexcept {
  const unsigned width = layout_.counter.width;
  return id64((position >> width) << layout_.time.shift |
              machine_bits_.load(std::memory_order_relaxed) |
              (position & layout_.counter.max()) << layout_.counter.shift);
}

id64 id64_generator::next() { return at(reserve(1)); }

void id64_generator::fill(std::span<id64> out) {
  if (out.empty()) return;
  const std::uint64_t first = reserve(out.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = at(first + i);
}

}  // namespace oid
