// Server sessions (`lsid`) as the driver sessions specification pools them. Every operation of a
// deployment that supports sessions runs in one: implicitly, the client checks a session out for
// the operation and back in when it is done. The pool keeps the most recently used sessions at
// the front, so few distinct sessions stay alive on the server, and never hands out one that
// would expire within a minute: the server forgets a session logicalSessionTimeoutMinutes after
// its last use.
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace oid::mongo::detail {

/// One server session: its id (a random UUID, sent as `lsid: {id: <binary subtype 4>}`), when
/// it was last used, and the transaction number of retryable writes.
struct server_session {
  using clock = std::chrono::steady_clock;

  std::array<std::uint8_t, 16> id{};
  clock::time_point last_use{};
  /// The `txnNumber` of the session's last retryable write (0: none yet).
  std::int64_t txn_number = 0;
  /// Set after a network error in the session: the server may hold state for it that the client
  /// cannot know, so it goes back to no pool.
  bool dirty = false;

  /// A new session with a random version-4 UUID, last used `now`. Throws oid::exception
  /// (entropy_unavailable) when the OS has no random bytes.
  static server_session make(clock::time_point now);
  /// True when the session has less than a minute left before a server with `timeout` forgets it.
  bool about_to_expire(std::chrono::minutes timeout, clock::time_point now) const noexcept;
};

/// The pool of server sessions of one client. Thread-safe.
class session_pool {
 public:
  using clock = server_session::clock;

  /// A session for one operation: the most recently used one that has more than a minute left
  /// (dropping those at the back that have less), or a new one. `timeout` is the deployment's
  /// logicalSessionTimeoutMinutes.
  server_session check_out(std::chrono::minutes timeout, clock::time_point now = clock::now());
  /// Gives a session back after an operation used it (set its `last_use` first). Dirty and
  /// nearly expired sessions are dropped, and so are expired ones at the back of the pool.
  void check_in(server_session s, std::chrono::minutes timeout,
                clock::time_point now = clock::now());
  /// Takes every pooled session out, for `endSessions` when the client closes.
  std::vector<server_session> drain();
  /// The number of pooled sessions.
  std::size_t size() const;

 private:
  void drop_expired_oldest(std::chrono::minutes timeout, clock::time_point now);
  mutable std::mutex mutex_;
  // Back: the most recently used. A vector, not a deque: checking one session out and back in
  // then allocates nothing (a deque frees and allocates a block when it empties and refills).
  std::vector<server_session> sessions_;
};

}  // namespace oid::mongo::detail
