// Private: noticing fork() without a system call, shared by the id generators.
//
// A "fork cookie" names the process a generator was seeded in (never 0). It lives in its own page
// marked MADV_WIPEONFORK, so a child (even one made by a raw clone()) reads 0 there; a
// pthread_atfork child handler stores 0 too, for kernels without that madvise. A generator keeps
// the cookie it was seeded under and compares it with the current one: one plain load per id.
// `fork_mutex()` is held across fork() (atfork prepare/parent/child handlers), so a generator that
// reseeds under it never leaves a child with the mutex locked.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

namespace oid::detail {

/// The mutex held across fork(): take it to reseed or to renew the cookie.
std::mutex& fork_mutex();

/// The current process's cookie: never 0. Sets up the page, the atfork handlers and
/// `fork_cookie_page` on the first call in a process.
std::uint64_t current_fork_cookie();

/// The cookie page, for hot paths: non-null once `current_fork_cookie()` has been called (every
/// generator calls it before handing out its first id), and then read with one relaxed load.
/// Its value is 0 in a child that has not called `current_fork_cookie()` since the fork.
[[gnu::visibility("hidden")]] extern std::atomic<std::uint64_t>* fork_cookie_page;

}  // namespace oid::detail
