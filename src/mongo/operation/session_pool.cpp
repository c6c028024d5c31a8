#include "mongo/operation/session_pool.hpp"

#include <openssl/rand.h>

#include <algorithm>
#include <oid/error.hpp>
#include <utility>

namespace oid::mongo::detail {

server_session server_session::make(clock::time_point now) {
  server_session s;
  // OpenSSL's generator (already linked for SCRAM's nonces) rather than std::random_device:
  // session ids must not repeat across the processes of a fleet.
  if (RAND_bytes(s.id.data(), static_cast<int>(s.id.size())) != 1) {
    throw oid::exception(oid::error{oid::errc::entropy_unavailable, 0});
  }
  s.id[6] = static_cast<std::uint8_t>((s.id[6] & 0x0F) | 0x40);  // version 4
  s.id[8] = static_cast<std::uint8_t>((s.id[8] & 0x3F) | 0x80);  // RFC 4122 variant
  s.last_use = now;
  return s;
}

bool server_session::about_to_expire(std::chrono::minutes timeout,
                                     clock::time_point now) const noexcept {
  // The timeout is the server's logicalSessionTimeoutMinutes, any int64: below a minute nothing
  // is left, and a count of minutes past what the clock's nanoseconds hold (about 290 years)
  // never runs out; in between, the subtraction and the comparison cannot overflow.
  using std::chrono::minutes;
  constexpr auto longest = std::chrono::duration_cast<minutes>(clock::duration::max());
  if (timeout < minutes(1)) return true;
  if (timeout - minutes(1) > longest) return false;
  return now - last_use > timeout - minutes(1);
}

void session_pool::drop_expired_oldest(std::chrono::minutes timeout, clock::time_point now) {
  // The pool is ordered by last use, the oldest first: the expired ones are a prefix.
  const auto live = std::find_if(sessions_.begin(), sessions_.end(), [&](const server_session& s) {
    return !s.about_to_expire(timeout, now);
  });
  sessions_.erase(sessions_.begin(), live);
}

server_session session_pool::check_out(std::chrono::minutes timeout, clock::time_point now) {
  {
    std::lock_guard lock(mutex_);
    drop_expired_oldest(timeout, now);
    while (!sessions_.empty()) {
      server_session s = std::move(sessions_.back());
      sessions_.pop_back();
      if (!s.about_to_expire(timeout, now)) return s;
    }
  }
  return server_session::make(now);
}

void session_pool::check_in(server_session s, std::chrono::minutes timeout, clock::time_point now) {
  std::lock_guard lock(mutex_);
  drop_expired_oldest(timeout, now);
  if (s.dirty || s.about_to_expire(timeout, now)) return;
  sessions_.push_back(std::move(s));
}

std::vector<server_session> session_pool::drain() {
  std::lock_guard lock(mutex_);
  // The most recently used first.
  std::vector<server_session> out(std::make_move_iterator(sessions_.rbegin()),
                                  std::make_move_iterator(sessions_.rend()));
  sessions_.clear();
  return out;
}

std::size_t session_pool::size() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace oid::mongo::detail
