// oid/mongo/session.hpp: explicit sessions, causal consistency and transactions.
//
// Every operation runs in a session. Without one of its own it gets an implicit one, borrowed
// from the client's pool for the operation (and its cursor). An explicit session, made by
// `client::start_session`, spans operations: they share one `lsid`; with causal consistency (the
// default) each read sees the session's earlier writes and reads, even on a secondary
// (`afterClusterTime`); and a transaction makes several writes, across collections, all or
// nothing. Operations join a session through a handle bound to it:
//
//     auto s = client.start_session();                       // outcome<session>
//     auto orders = client.collection("shop", "orders").with_session(*s);
//     auto stock = client.collection("shop", "stock").with_session(*s);
//     auto r = s->with_transaction([&](oid::mongo::session&) ->
//     oid::mongo::outcome<oid::mongo::done> {
//       if (auto a = orders.insert_one(order); !a) return a.error();
//       if (auto b = stock.update_one(item, take_one); !b) return b.error();
//       return oid::mongo::done{};
//     });
//
// Transactions need a replica set or a sharded cluster that runs them (MongoDB 4.0 and 4.2); a
// server that cannot refuses the first command, and commit says so.
//
// A session is used by one thread at a time (as the specification says); handles bound to it
// may be copied, but their operations must not run concurrently. A session ends when
// `end_session` is called or the last copy of it goes; its operations fail afterwards.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/write_concern.hpp>
#include <optional>
#include <string>

namespace oid::mongo {

struct session_state;  // opaque: what a session and the handles bound to it share

namespace detail {
/// What a handle (client, database, collection) gives the operations it runs and the handles it
/// opens: timeoutMS, the explicit session it is bound to, the read concern and read preference of
/// its reads and the write concern of its writes (an operation's own options win over these).
struct handle_context {
  std::optional<std::chrono::milliseconds> timeout;
  std::shared_ptr<session_state> session;  ///< null: implicit sessions
  mongo::read_concern read_concern;
  mongo::write_concern write_concern;
  mongo::read_preference read_preference;
};
}  // namespace detail

/// The options of a transaction; unset fields take the session's defaults, then the client's.
struct transaction_options {
  /// The read concern of the transaction's reads (sent with its first command only).
  std::optional<mongo::read_concern> read_concern{};
  /// The write concern of the commit and abort (the operations inside send none).
  std::optional<mongo::write_concern> write_concern{};
  /// Where the transaction reads: it must be the primary for any read (the server refuses
  /// otherwise; oid refuses first).
  std::optional<mongo::read_preference> read_preference{};
  /// How long commitTransaction may run on the server (`maxTimeMS` of the commit).
  std::optional<std::chrono::milliseconds> max_commit_time{};
};

/// Options of `client::start_session`.
struct session_options {
  /// Reads see the session's earlier operations (`afterClusterTime`). Default: true, unless
  /// `snapshot`.
  std::optional<bool> causal_consistency{};
  /// Every read sees one snapshot, taken at the first read (readConcern "snapshot" with
  /// `atClusterTime`; MongoDB 5.0+). No writes, no transactions; refused with
  /// `causal_consistency`.
  bool snapshot = false;
  /// The options of the session's transactions, unless `start_transaction` sets its own.
  transaction_options default_transaction_options{};
  /// timeoutMS of the session's operations, and of `with_transaction` as a whole (unset: the
  /// client's).
  std::optional<std::chrono::milliseconds> default_timeout{};
};

/// Where a session's transaction stands (the transactions specification's states).
enum class transaction_state {
  none,         ///< no transaction has been started
  starting,     ///< started; its first command has not been sent yet
  in_progress,  ///< its first command was sent
  committed,    ///< committed (or the commit was attempted: a commit may be retried)
  aborted,      ///< aborted
};

class session;

/// The body of a transaction for `session::with_transaction`: runs the transaction's operations
/// (through handles bound to the session) and returns their first failure, if any.
using transaction_callback = std::function<outcome<done>(session&)>;

/// An explicit session. Movable, not copyable; ended on destruction.
class session {
 public:
  session(session&&) noexcept;
  session& operator=(session&&) noexcept;
  session(const session&) = delete;
  session& operator=(const session&) = delete;
  /// Ends the session (see `end_session`).
  ~session();

  /// The session's id, `{id: <UUID>}`, as the server sees it (`lsid`). The server session is
  /// taken from the client's pool the first time an operation (or this call) needs it.
  /// Failures: session_misuse after `end_session`.
  outcome<bson::document> id() const;
  /// The options the session was started with.
  const session_options& options() const noexcept;

  /// The highest `$clusterTime` this session has seen or been given (none before its first
  /// reply from a server that sends one).
  std::optional<bson::document> cluster_time() const;
  /// The `operationTime` of the session's last operation, or one given by
  /// `advance_operation_time`.
  std::optional<bson::timestamp_value> operation_time() const;
  /// Raises the session's cluster time to `cluster_time` (`{clusterTime: <timestamp>,
  /// signature: ...}`) when it is higher; to carry causality over from another session.
  /// Failures: invalid_argument for a document without a timestamp `clusterTime`.
  outcome<done> advance_cluster_time(bson::document_view cluster_time);
  /// Raises the session's operation time to `t` when it is higher: the session's next causally
  /// consistent read sees at least what was done by then.
  void advance_operation_time(bson::timestamp_value t);

  /// Starts a transaction: the session's next operations run in it until `commit_transaction`
  /// or `abort_transaction`. Nothing is sent until the first operation. Failures
  /// (session_misuse): a transaction already in progress, a snapshot session, an ended
  /// session; invalid_argument for an unacknowledged write concern.
  outcome<done> start_transaction(const transaction_options& options = {});
  /// Commits the transaction (commitTransaction). A commit that failed for a network error,
  /// a retryable error or a timeout is retried once, with w: "majority"; its failure then
  /// carries the label "UnknownTransactionCommitResult" when the outcome is unknown. Calling it
  /// again after a commit runs the commit again (idempotent on the server). A transaction
  /// without operations commits without a command. `timeout`: timeoutMS of this call (default:
  /// the session's default_timeout, else the client's); under it maxCommitTimeMS and wTimeoutMS
  /// are not sent. Failures: session_misuse without a transaction, or after
  /// `abort_transaction`.
  outcome<done> commit_transaction(std::optional<std::chrono::milliseconds> timeout = {});
  /// Aborts the transaction (abortTransaction, retried once after a retryable error); errors of
  /// the server are ignored, as the specification says: the server aborts an abandoned
  /// transaction by itself. Failures: session_misuse without a transaction, after a commit, or
  /// after an abort. `timeout`: as for `commit_transaction`.
  outcome<done> abort_transaction(std::optional<std::chrono::milliseconds> timeout = {});
  /// Runs `callback` in a transaction and commits it, retrying as the convenient transactions
  /// API specifies: the whole transaction again when the callback or the commit fails with
  /// "TransientTransactionError", the commit alone when it fails with
  /// "UnknownTransactionCommitResult", for at most 120 seconds (or the session's timeoutMS). A
  /// callback failure without those labels aborts the transaction and is returned; so is a
  /// callback that commits or aborts by itself (then nothing more is done). Under timeoutMS (the
  /// session's default_timeout, else the client's) one deadline covers the whole call: every
  /// operation of the callback, the commit and the retries; running out of it is a timeout that
  /// names the last error, and an abort after it gets a timeoutMS of its own.
  /// `timeout`: timeoutMS of this call (default: the session's default_timeout, else the
  /// client's).
  outcome<done> with_transaction(const transaction_callback& callback,
                                 const transaction_options& options = {},
                                 std::optional<std::chrono::milliseconds> timeout = {});
  /// True between `start_transaction` and the commit or abort.
  bool in_transaction() const noexcept;
  /// Where the transaction stands.
  mongo::transaction_state transaction_state() const noexcept;

  /// Ends the session: aborts a transaction in progress and gives the server session back to
  /// the client's pool (which ends it on the server when the client closes). Idempotent.
  void end_session() noexcept;
  /// True once `end_session` ran.
  bool ended() const noexcept;
  /// The mongos ("host:port") the session's transaction is pinned to on a sharded cluster: its
  /// first command's, where its later commands, commit and abort go. Empty when not pinned (no
  /// transaction, not a sharded cluster, or unpinned by an error labelled
  /// TransientTransactionError or UnknownTransactionCommitResult).
  std::string pinned_server() const;
  /// True when a network error met the session: the server may hold state for it, so the pool
  /// drops it when the session ends.
  bool dirty() const noexcept;

 private:
  friend class client;
  friend class database;
  friend class collection;
  explicit session(std::shared_ptr<session_state> state) noexcept;
  std::shared_ptr<session_state> state_;
};

}  // namespace oid::mongo
