// oid/mongo/pool_event.hpp: the connection pool's options and events, as values.
//
// The client keeps one pool of connections per server, as MongoDB's Connection Monitoring and
// Pooling (CMAP) specification describes: at most `max_pool_size` connections, at least
// `min_pool_size` kept open in the background, at most `max_connecting` being opened at once,
// idle ones closed after `max_idle_time`, and threads that wait for a connection served in the
// order they came, for at most `wait_queue_timeout`. Each step of a pool's life and of each
// connection's is an event; a listener the application sets receives them one at a time, in the
// order they happened, before the call that caused them returns, on the thread of one of the
// pool's callers or on its background thread. A listener may call the pool; a slow one slows the
// operations that wait for its delivery, and an exception it throws is dropped.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace oid::mongo {

/// A pool's settings (connection string options maxPoolSize, minPoolSize, maxConnecting,
/// maxIdleTimeMS, waitQueueTimeoutMS).
struct pool_options {
  /// Most connections open at once, lent out or idle; 0: no limit.
  std::size_t max_pool_size = 100;
  /// Connections the pool opens in the background and keeps open while it is ready.
  std::size_t min_pool_size = 0;
  /// Most connections being opened (connect, handshake, authentication) at once; at least 1.
  std::size_t max_connecting = 2;
  /// An idle connection older than this is closed rather than lent; 0: no limit.
  std::chrono::milliseconds max_idle_time{0};
  /// Longest wait in the queue for a connection (the operation's own deadline also applies,
  /// whichever comes first); 0: no limit but the operation's.
  std::chrono::milliseconds wait_queue_timeout{0};
  /// Time between two runs of the pool's background thread, which opens connections up to
  /// `min_pool_size` and closes idle and stale ones (a clear, a check-in and `ready()` also wake
  /// it). 0 or less: no background thread, so no `min_pool_size` (the specification's tests use
  /// it; not a connection string option).
  std::chrono::milliseconds maintenance_interval{1000};

  friend bool operator==(const pool_options&, const pool_options&) = default;
};

/// Why a pool closed a connection.
enum class connection_closed_reason {
  stale,        ///< the pool was cleared after the connection was opened
  idle,         ///< it was idle longer than max_idle_time
  error,        ///< it failed (a network error, a timeout, or its opening failed)
  pool_closed,  ///< the pool was closed
};

/// Why a check-out failed.
enum class check_out_failed_reason {
  pool_closed,       ///< the pool is closed
  timeout,           ///< no connection within wait_queue_timeout or the operation's deadline
  connection_error,  ///< opening a connection failed, or the pool was cleared (paused)
};

/// The specification's name of `r`: "stale", "idle", "error" or "poolClosed".
constexpr std::string_view to_string(connection_closed_reason r) noexcept {
  switch (r) {
  case connection_closed_reason::stale: return "stale";
  case connection_closed_reason::idle: return "idle";
  case connection_closed_reason::error: return "error";
  case connection_closed_reason::pool_closed: return "poolClosed";
  }
  return "";
}

/// The specification's name of `r`: "poolClosed", "timeout" or "connectionError".
constexpr std::string_view to_string(check_out_failed_reason r) noexcept {
  switch (r) {
  case check_out_failed_reason::pool_closed: return "poolClosed";
  case check_out_failed_reason::timeout: return "timeout";
  case check_out_failed_reason::connection_error: return "connectionError";
  }
  return "";
}

// Every event names its pool by the server's address, "host:port" (a Unix socket's path).

/// A pool was created (paused: it lends nothing until `ready`).
struct pool_created_event {
  std::string address;
  pool_options options;
};
/// A pool became ready: it lends connections and keeps min_pool_size open.
struct pool_ready_event {
  std::string address;
};
/// A pool was cleared: every connection opened before is stale, waiting check-outs fail, and the
/// pool is paused until `ready`.
struct pool_cleared_event {
  std::string address;
};
/// A pool was closed.
struct pool_closed_event {
  std::string address;
};
/// A pool began opening a connection (ids count from 1 in each pool).
struct connection_created_event {
  std::string address;
  std::uint64_t connection_id = 0;
};
/// A connection finished its handshake (and authentication) and can be used.
struct connection_ready_event {
  std::string address;
  std::uint64_t connection_id = 0;
  std::chrono::nanoseconds duration{0};  ///< since its connection_created_event
};
/// A pool closed a connection.
struct connection_closed_event {
  std::string address;
  std::uint64_t connection_id = 0;
  connection_closed_reason reason = connection_closed_reason::error;
};
/// An operation asked for a connection.
struct connection_check_out_started_event {
  std::string address;
};
/// An operation's request for a connection failed.
struct connection_check_out_failed_event {
  std::string address;
  check_out_failed_reason reason = check_out_failed_reason::connection_error;
  std::chrono::nanoseconds duration{0};  ///< since its connection_check_out_started_event
};
/// An operation got a connection.
struct connection_checked_out_event {
  std::string address;
  std::uint64_t connection_id = 0;
  std::chrono::nanoseconds duration{0};  ///< since its connection_check_out_started_event
};
/// An operation gave a connection back.
struct connection_checked_in_event {
  std::string address;
  std::uint64_t connection_id = 0;
};

/// One connection pool event.
using pool_event =
    std::variant<pool_created_event, pool_ready_event, pool_cleared_event, pool_closed_event,
                 connection_created_event, connection_ready_event, connection_closed_event,
                 connection_check_out_started_event, connection_check_out_failed_event,
                 connection_checked_out_event, connection_checked_in_event>;

}  // namespace oid::mongo
