#include "fork_cookie.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <new>

namespace oid::detail {

std::atomic<std::uint64_t>* fork_cookie_page = nullptr;

namespace {

std::uint64_t last_cookie = 0;  // not wiped: each new process takes the next value; under the mutex

std::atomic<std::uint64_t>* cookie_slot();

void before_fork() { fork_mutex().lock(); }
void after_fork_parent() { fork_mutex().unlock(); }
void after_fork_child() {
  cookie_slot()->store(0, std::memory_order_relaxed);
  fork_mutex().unlock();
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
  fork_cookie_page = new (p) std::atomic<std::uint64_t>(0);
  return fork_cookie_page;
}

std::atomic<std::uint64_t>* cookie_slot() {
  static std::atomic<std::uint64_t>* const slot = make_cookie_slot();
  return slot;
}

std::uint64_t renew_cookie() {
  std::lock_guard lock(fork_mutex());
  auto* slot = cookie_slot();
  std::uint64_t c = slot->load(std::memory_order_relaxed);
  if (c == 0) {
    c = ++last_cookie;
    slot->store(c, std::memory_order_relaxed);
  }
  return c;
}

}  // namespace

std::mutex& fork_mutex() {
  static std::mutex m;
  return m;
}

std::uint64_t current_fork_cookie() {
  const std::uint64_t c = cookie_slot()->load(std::memory_order_relaxed);
  return c != 0 ? c : renew_cookie();
}

}  // namespace oid::detail
