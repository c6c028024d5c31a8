// The connection pool of one server, as MongoDB's Connection Monitoring and Pooling (CMAP)
// specification describes: check-out and check-in, a FIFO wait queue bounded by
// waitQueueTimeoutMS and the operation's deadline, maxPoolSize and maxConnecting, a background
// thread that keeps minPoolSize connections open and closes idle and stale ones, generations that
// a clear increments (the pool then pauses until `ready`), and the specification's events.
//
// Thread-safe: one mutex guards the state; connections are opened and closed outside it, so one
// slow handshake does not hold up check-ins or the other threads. Events are queued in the order
// the state changes and delivered outside the mutex, one at a time, so a listener may call the
// pool (a listener that blocks holds up the callers whose events wait behind it, not the lock).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <string>

#include "mongo/sdam/address.hpp"
#include "mongo/wire/connection.hpp"

namespace oid::mongo::detail {

using pool_clock = std::chrono::steady_clock;

/// Opens a connection to `h` and performs its handshake (and authentication), giving up at
/// `deadline` (time_point::max(): only the factory's own limits apply).
using connection_factory =
    std::function<outcome<connection>(const mongo::host& h, pool_clock::time_point deadline)>;
/// Receives the pool's events.
using pool_listener = std::function<void(const pool_event&)>;
/// Told when the background thread fails to open a connection for minPoolSize, with the failure:
/// SDAM's handling of an error before the handshake completes (mark the server Unknown and clear
/// the pool). Called on the background thread, without the pool's lock.
using pool_error_handler = std::function<void(const failure&)>;

/// The production factory: `connection::open(h, options)`, its connect_timeout shortened to what
/// is left before the deadline.
connection_factory open_with(connection_options options);

struct pool_state;

/// A connection checked out of a pool: checked back in when destroyed (or by
/// `connection_pool::check_in`). A connection whose use failed is `broken()` and is then closed at
/// check-in rather than lent again.
class pooled_connection {
 public:
  pooled_connection(pooled_connection&&) noexcept;
  pooled_connection& operator=(pooled_connection&&) = delete;
  pooled_connection(const pooled_connection&) = delete;
  pooled_connection& operator=(const pooled_connection&) = delete;
  ~pooled_connection();

  connection& operator*() noexcept { return *conn_; }
  connection* operator->() noexcept { return &*conn_; }
  /// The connection's id in its pool (1, 2, ... in order of creation).
  std::uint64_t id() const noexcept { return id_; }
  /// The pool's generation when the connection was created: SDAM ignores an error from a
  /// connection older than the pool's last clear.
  std::uint64_t generation() const noexcept { return generation_; }

 private:
  friend struct pool_state;
  friend class connection_pool;
  pooled_connection(std::shared_ptr<pool_state> pool, connection&& c, std::uint64_t id,
                    std::uint64_t generation);

  std::shared_ptr<pool_state> pool_;
  std::optional<connection> conn_;
  std::uint64_t id_ = 0;
  std::uint64_t generation_ = 0;
};

/// The pool of one server. Created paused: `ready()` (SDAM calls it after a successful check)
/// lets it lend connections. Not copyable or movable; destroying it closes it and waits for its
/// background thread (at most one connection attempt; when destroyed on that thread itself, the
/// thread ends on its own). Connections still checked out stay valid and are closed when checked
/// in.
class connection_pool {
 public:
  /// A pool of connections to `h` opened by `factory`. Emits pool_created_event. `on_error` is
  /// told of the background thread's failures to open a connection (see pool_error_handler).
  connection_pool(mongo::host h, pool_options options, connection_factory factory,
                  pool_listener listener = {}, pool_error_handler on_error = {});
  ~connection_pool();
  connection_pool(const connection_pool&) = delete;
  connection_pool& operator=(const connection_pool&) = delete;

  /// A connection: an idle one that has not perished (closing those that have), or a new one
  /// when maxPoolSize and maxConnecting allow, else one waited for, in the order the requests
  /// came. Waits at most `deadline` and waitQueueTimeoutMS, whichever comes first; opening a new
  /// connection is bounded by `deadline` and the factory's own limits. Errors: pool_closed (the
  /// pool is closed), pool_cleared (the pool is paused: it was cleared, while this request waited
  /// or before, and not made ready since; retryable, and not an error that changes the topology),
  /// timeout (the wait), and the factory's failures (opening the connection failed). On
  /// failure, `reason` (when given) receives the reason the check_out_failed event names.
  /// `wait_queue_timeout` false: the deadline alone bounds the wait (an operation under timeoutMS,
  /// which the deprecated waitQueueTimeoutMS does not shorten).
  outcome<pooled_connection> check_out(pool_clock::time_point deadline,
                                       check_out_failed_reason* reason = nullptr,
                                       bool wait_queue_timeout = true);

  /// Gives `c` back now (as its destruction would). The connection is closed instead of kept
  /// when it is broken, stale (older than the last clear) or the pool is closed. Errors:
  /// unsupported when `c` belongs to another pool (it is then left untouched); `c` is empty
  /// afterwards otherwise.
  outcome<done> check_in(pooled_connection&& c);

  /// Marks every connection stale (generation + 1), fails the requests waiting in the queue with
  /// pool_cleared, pauses the pool and wakes the background thread, which closes the idle stale
  /// connections (the others are closed when checked in). Emits pool_cleared_event unless the
  /// pool was already paused. No effect on a closed pool.
  void clear();
  /// Lets a paused pool lend connections and open min_pool_size in the background; emits
  /// pool_ready_event. No effect on a ready or closed pool.
  void ready();
  /// Closes the idle connections and the pool: check-outs fail with pool_closed, connections
  /// checked in are closed. Emits pool_closed_event once.
  void close();

  /// How many times the pool has been cleared.
  std::uint64_t generation() const;
  /// The server's address as the events name it.
  const std::string& address() const noexcept;

  /// Connections by state, for tests and diagnostics.
  struct counts {
    std::size_t total = 0;      ///< pending + available + in use
    std::size_t available = 0;  ///< idle in the pool
    std::size_t pending = 0;    ///< being opened
  };
  counts count() const;

 private:
  std::shared_ptr<pool_state> state_;
};

}  // namespace oid::mongo::detail
