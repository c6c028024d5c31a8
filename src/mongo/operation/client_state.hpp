// The state a client, its copies, its collections and its cursors share (the topology with a
// pool per server), and the executor: select a server, borrow a connection from its pool, run a
// command, and report its errors to the topology.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/command_event.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/server_selection.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "mongo/auth/scram.hpp"
#include "mongo/cluster/connection_pool.hpp"
#include "mongo/cluster/topology.hpp"
#include "mongo/operation/session_pool.hpp"
#include "mongo/operation/time_limit.hpp"
#include "mongo/wire/connection.hpp"

namespace oid::mongo {
struct session_state;
}  // namespace oid::mongo

namespace oid::mongo::detail {

struct lease;

// The listeners a client was made with (see `client_options`).
struct listeners {
  std::function<void(const sdam_event&)> on_topology;
  std::function<void(const command_event&)> on_command;
  std::function<void(const pool_event&)> on_pool;
};

}  // namespace oid::mongo::detail

namespace oid::mongo {

// Shared by a client and its copies, collections and cursors; the last one to go closes the
// topology (stopping and joining its monitors). In oid::mongo, not detail: the public headers hold
// it as an opaque pointer (declared there, defined only here).
struct client_state : std::enable_shared_from_this<client_state> {
  // `tls`: the client's one TLS context (null: plain TCP), shared by every connection. `api`:
  // the declared Stable API version, which every command carries (none: not sent). `metadata`:
  // the handshake's client metadata (null: made from the connection string's appName).
  client_state(mongo::uri u, detail::listeners l,
               std::shared_ptr<const detail::tls_context> tls = nullptr,
               std::optional<mongo::server_api> api = std::nullopt,
               std::shared_ptr<detail::client_metadata> metadata = nullptr);

  // A connection to a server suitable for `kind` under `preference`. For reads, the lease's
  // commands carry the `$readPreference` the server selection specification asks for.
  // `limit` (timeoutMS): selection and checkout end by its deadline too, and running out of it
  // is a timeout naming the stage.
  // `pinned`: the server a sharded transaction is pinned to (empty: select by `preference`).
  // `deprioritized`: servers ("host:port") to select only when no other is suitable (those
  // earlier attempts of a retried operation failed on).
  outcome<detail::lease> acquire(const mongo::read_preference& preference, operation_kind kind,
                                 const detail::time_limit* limit = nullptr,
                                 std::string_view pinned = {},
                                 std::span<const std::string> deprioritized = {});
  // A connection to the primary (or mongos, or the one server of a Single topology).
  outcome<detail::lease> acquire();
  // A connection to the server at `address` (where a cursor lives), checked out by `limit`'s
  // deadline or serverSelectionTimeoutMS: connection_failed when the topology no longer knows
  // it as a data-bearing server.
  outcome<detail::lease> acquire_at(std::string_view address, const detail::time_limit* limit);

  mongo::uri uri;
  connection_options options;
  std::chrono::milliseconds selection_timeout{30'000};
  // timeoutMS of the connection string or the client's options: what databases and collections
  // inherit (unset: the legacy timeouts).
  std::optional<std::chrono::milliseconds> timeout;
  // The connection string's read preference: what databases and collections inherit.
  mongo::read_preference read_preference;
  // The connection string's write concern (w, journal, wTimeoutMS): what databases and
  // collections inherit (see `write_concern_of` in operation.hpp).
  mongo::write_concern write_concern;
  detail::listeners events;
  std::unique_ptr<mongo::detail::topology> topology;
  // The server sessions of implicit sessions (see operation.hpp).
  detail::session_pool sessions;
  // The read concern level of the connection string (readConcernLevel): what databases and
  // collections inherit.
  mongo::read_concern read_concern;

  // $clusterTime gossip (driver sessions specification): the highest cluster time any reply
  // carried, sent with every later command.
  void advance_cluster_time(bson::document_view cluster_time);
  // The highest cluster time seen (none before a reply carried one).
  std::optional<bson::document> highest_cluster_time() const;
  // True once a reply carried a cluster time: a command checks this before taking the lock.
  bool has_cluster_time() const noexcept {
    return has_cluster_time_.load(std::memory_order_acquire);
  }

  // The receive buffer of the last cursor that ended, for the next cursor to start with. A
  // cursor's first command gives its connection the cursor's buffer in exchange for the reply's
  // (connection::take_reply): a new cursor's empty one made the connection grow a buffer again
  // for every cursor, copying what had arrived at each doubling up to 16 MB and faulting in fresh
  // pages (find many of 100,000 tweets: 3.6% of the client's CPU in that copy alone). One buffer
  // is kept, the larger one: the pool's idle connections each keep one of their largest reply's
  // size already.
  detail::receive_buffer take_spare_buffer();
  void keep_spare_buffer(detail::receive_buffer&& b);

 private:
  std::mutex spare_mutex_;
  detail::receive_buffer spare_;
  mutable std::mutex cluster_time_mutex_;
  std::optional<bson::document> cluster_time_;
  std::atomic<bool> has_cluster_time_{false};
};

}  // namespace oid::mongo

namespace oid::mongo::detail {

using mongo::client_state;

// A connection checked out of a server's pool; checked in on destruction (and then closed
// when it is broken, or older than the pool's last clear).
struct lease {
  lease(std::shared_ptr<client_state> s, pooled_connection&& c, std::string a)
      : state(std::move(s)),
        conn(std::move(c)),
        generation(conn.generation()),
        address(std::move(a)) {}
  lease(lease&&) noexcept = default;
  lease& operator=(lease&&) = delete;
  lease(const lease&) = delete;
  connection& operator*() { return *conn; }
  connection* operator->() { return conn.operator->(); }

  std::shared_ptr<client_state> state;  // declared first: outlives `conn`'s check-in
  pooled_connection conn;
  std::uint64_t generation = 0;  // the pool's, when the connection was opened
  std::string address;           // as the topology names the server
  // The `$readPreference` this lease's next commands carry, if any.
  std::optional<bson::document> read_preference;
  // The server's shortest recent round trip, as the selection saw it (maxTimeMS leaves it out).
  std::chrono::microseconds min_rtt{0};
  // timeoutMS of the operation using the lease: its commands' reads and writes end by the
  // deadline instead of socketTimeoutMS, and with `max_time` they carry maxTimeMS (the time left
  // minus min_rtt), or are not sent at all when that leaves nothing.
  std::optional<time_limit> limit;
  bool max_time = false;
  // The explicit session of the operation using the lease, if any: its commands carry the
  // session's cluster time when higher than the client's, and their replies advance it.
  session_state* session = nullptr;
  // The command events' operation id of the operation using the lease (0: none given).
  std::int64_t operation_id = 0;
};

// The transport error `e` of connection `c` as a sentence naming the host.
std::string transport_message(const oid::error& e, const connection& c);

// Runs a command on a borrowed connection: transport errors and ok: 0 become failures; errors
// that concern the topology (network errors, "not writable primary", "node is recovering") are
// reported to it; command events are published. The reply is a view into the connection's
// receive buffer, valid until the connection reads again (or `take_reply` keeps it).
outcome<bson::document_view> command_view(lease& l, std::string_view db, bson::document_view cmd,
                                          std::span<const document_sequence> sequences = {});
// The same, with the reply copied out.
outcome<bson::document> command(lease& l, std::string_view db, bson::document_view cmd,
                                std::span<const document_sequence> sequences = {});
// Sends `cmd` with moreToCome (w: 0): nothing is read back. Publishes its command events (the
// succeeded event with {ok: 1}, as the command monitoring specification says).
outcome<done> send_unacknowledged(lease& l, std::string_view db, bson::document_view cmd,
                                  std::span<const document_sequence> sequences = {});

}  // namespace oid::mongo::detail
