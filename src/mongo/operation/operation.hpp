// One operation as the driver sessions, retryable writes and retryable reads specifications run
// it: an implicit server session (`lsid`) from the client's pool, a `txnNumber` for a retryable
// write, and one retry on a newly selected server after a retryable error. Every operation of the
// client goes through `execute` (or `run_command`, its one-command form); the retry loop lives
// nowhere else.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/view.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_concern.hpp>
#include <oid/mongo/read_preference.hpp>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "mongo/operation/client_state.hpp"
#include "mongo/operation/session_pool.hpp"
#include "mongo/operation/session_state.hpp"
#include "mongo/operation/time_limit.hpp"

namespace oid::mongo::detail {

// The session of one operation, or of the cursor it opened: the operation's explicit session
// when it has one, else an implicit one. An implicit session takes a server session from the
// client's pool only once a connection to a server that supports sessions is checked out, and
// gives it back when released or destroyed (until the cursor is exhausted or closed); an explicit
// one takes its server session the first time and keeps it until it ends. Not thread-safe: an
// operation runs on one thread.
class op_session {
 public:
  op_session() noexcept = default;
  explicit op_session(client_state& s, session_state* explicit_session = nullptr) noexcept
      : state_(&s), explicit_(explicit_session) {}
  op_session(op_session&& o) noexcept;
  op_session& operator=(op_session&& o) noexcept;
  op_session(const op_session&) = delete;
  op_session& operator=(const op_session&) = delete;
  ~op_session() { release(); }

  // Takes a server session when none is held and `l`'s server reported
  // logicalSessionTimeoutMinutes in its handshake (an explicit session: always); `l`'s replies
  // then inform the explicit session.
  void attach(lease& l);
  bool active() const noexcept;
  // The explicit session, if the operation has one.
  session_state* explicit_session() const noexcept { return explicit_; }
  // The explicit session's transaction takes this operation's commands.
  bool in_transaction() const noexcept;
  // After a network error: the server may keep state for the session, so the pool drops it.
  void mark_dirty() noexcept;
  // The next transaction number of the held session (the first is 1).
  std::int64_t next_txn_number();
  // The transaction number of the held session's latest transaction or retryable write.
  std::int64_t txn_number() const noexcept;
  // Appends `lsid: {id: <UUID>}` when a session is held.
  void append_lsid(bson::builder& b) const;
  // Appends what a cursor's getMore and killCursors carry: `lsid` and, inside the transaction the
  // cursor was opened in, `txnNumber` and `autocommit: false`.
  void append_for_cursor(bson::builder& b) const;
  // Gives an implicit session back to the pool (last used now). Idempotent.
  void release() noexcept;

 private:
  const server_session* held() const noexcept;
  client_state* state_ = nullptr;
  session_state* explicit_ = nullptr;
  std::optional<server_session> session_;  // an implicit session's
  std::chrono::minutes timeout_{30};
};

// A callable borrowed for the duration of one call: a pointer to it and a function that calls
// it. Unlike std::function it never allocates (std::function does, on every operation, for a
// lambda that captures more than 16 bytes). Must not outlive the callable it was made from.
template <class Signature>
class function_ref;

template <class R, class... Args>
class function_ref<R(Args...)> {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, function_ref> &&
           std::is_invocable_r_v<R, F&, Args...>) function_ref(F&& f)
  noexcept  // NOLINT(google-explicit-constructor): takes lambdas as is
      : callable_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* c, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(c))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(callable_, std::forward<Args>(args)...); }

 private:
  void* callable_;
  R (*call_)(void*, Args...);
};

// What an operation may retry.
enum class retry_kind { none, write, read };

struct operation {
  // Reads: the read preference that selects the server. Null: the primary (writes and commands).
  const mongo::read_preference* read = nullptr;
  retry_kind retry = retry_kind::none;
  // False for unacknowledged (w:0) writes: no session and no retry.
  bool acknowledged = true;
  // For `run_command`: the reply's writeErrors and writeConcernError are failures
  // (`write_failure_of`), seen by the retry rules.
  bool write_reply = false;
  // timeoutMS (time_limit.hpp): selection, checkout and every command of the operation end by its
  // deadline, a retryable error is retried for as long as time is left, and MaxTimeMSExpired
  // (code 50) is a timeout. None: the legacy timeouts.
  std::optional<time_limit> limit{};
  // With `limit`: the commands carry maxTimeMS, the time left minus the server's round trip
  // (false for the commands of a cursor whose timeout applies to each iteration).
  bool max_time = true;
  // The explicit session the operation runs in (null: an implicit one).
  session_state* session = nullptr;
  // Commands that take a read concern (find, aggregate, distinct, count): the level asked for
  // (the operation's, else its handle's), to which the session adds afterClusterTime (causal
  // consistency) or atClusterTime (snapshot). Null: the command takes none.
  const mongo::read_concern* read_concern = nullptr;
  // commitTransaction or abortTransaction: runs in the session's transaction without starting
  // it, keeps its writeConcern, and is retried once after a retryable error whatever
  // retryWrites says.
  bool ends_transaction = false;
  // A command the application composed (run_command): inside a transaction it reads where the
  // transaction reads, so a transaction whose read preference is not the primary refuses it.
  bool any_command = false;
  // The command events' operation id (see `next_operation_id`), for an operation of several
  // `execute`s (a bulk write's batches); 0: a new one.
  std::int64_t operation_id = 0;
};

// One attempt of an operation: its connection, its session and, for a retryable write, the
// transaction number (the same in the retry).
class attempt {
 public:
  attempt(lease& l, op_session& s, const operation& o, std::optional<std::int64_t> txn) noexcept
      : conn(l), session(s), op(o), txn_number(txn) {}
  // `cmd` with what the session adds: `lsid`, `txnNumber` (a retryable write's or the
  // transaction's); in a transaction `autocommit: false`, and `startTransaction: true` with the
  // transaction's read concern on its first command, while the command's own readConcern and
  // writeConcern are left out; outside one, the read concern of `op` with the session's
  // afterClusterTime or atClusterTime. `cmd` itself when there is nothing to add. Valid while
  // the attempt lives.
  bson::document_view command(bson::document_view cmd);

  lease& conn;
  op_session& session;
  const operation& op;
  const std::optional<std::int64_t> txn_number;

 private:
  // Optional: a default document allocates, and an attempt without a session needs none.
  std::optional<bson::document> with_session_;
};

// A connection for a write that must learn the server's limits before its first attempt (a bulk
// write): when checking one out fails as `execute` would retry (a network error or a retryable
// server code in the connection's handshake, a cleared pool) and `retries` (retryWrites, an
// acknowledged write), it is checked out once more, as the retryable writes specification
// retries handshake errors; the first failure is returned when the second fails too.
// `limit`: the operation's timeoutMS, if any.
// `pinned`: the mongos the operation's transaction is pinned to (see `pinned_of`).
outcome<lease> acquire_for_write(client_state& s, bool retries, const time_limit* limit = nullptr,
                                 std::string_view pinned = {});

// The mongos an operation of `session` must go to: its transaction's, when it is in one and
// pinned; empty otherwise.
inline std::string_view pinned_of(const session_state* session) noexcept {
  return session != nullptr && session->in_transaction() ? std::string_view(session->pinned)
                                                         : std::string_view();
}

// Runs an operation: selects a server by `op` (unless `conn` already holds a connection), takes
// the session, and calls `run`. After a retryable error (network errors, the specifications'
// codes, the RetryableWriteError label, a connection that could not be checked out), when the URI
// allows it (retryWrites, retryReads: default true) and the server supports it (writes: a
// session on a replica set member or mongos), selects a server again and calls `run` once more
// with the same transaction number. When the retry cannot select a server, reaches one that does
// not support retries, or fails with NoWritesPerformed, the first error is returned; otherwise
// the retry's. With `op.limit` (timeoutMS), retries go on for as long as time is left, and once
// it has run out the error is a timeout naming the last one. `conn` holds the last connection
// used afterwards (so that the batches of a bulk
// write, or a cursor, keep it).
outcome<done> execute(client_state& s, op_session& session, std::optional<lease>& conn,
                      const operation& op, function_ref<outcome<done>(attempt&)> run);

// One command by `execute` in its own implicit session; the reply copied out. Unacknowledged
// (`op.acknowledged` false, a w: 0 write): sent with moreToCome, and an empty document returned.
outcome<bson::document> run_command(client_state& s, std::string_view db, bson::document_view cmd,
                                    const operation& op);

// The write concern a write of a handle (`ctx`) sends, as the read and write concern
// specification inherits it: none inside a transaction (its commit carries the transaction's;
// the operations send none); else `asked`, the operation's, when it sets any field; else the
// handle's (the collection's, the database's or the client's). Valid while both live.
const mongo::write_concern& write_concern_of(const mongo::write_concern& asked,
                                             const handle_context& ctx) noexcept;

// A read command (count, distinct, counts' aggregate) run once and retried once (retryable
// reads): where the operation's `options.read_preference` says, else the handle's (`ctx`); with
// its timeout and read concern, else the handle's.
template <typename Options>
outcome<bson::document> retryable_read(client_state& s, std::string_view db,
                                       bson::document_view cmd, const Options& options,
                                       const handle_context& ctx) {
  return run_command(
      s, db, cmd,
      {.read = options.read_preference ? &*options.read_preference : &ctx.read_preference,
       .retry = retry_kind::read,
       .limit = limit_of(options.timeout, ctx.timeout),
       .session = ctx.session.get(),
       .read_concern = options.read_concern ? &*options.read_concern : &ctx.read_concern});
}

// The failure an ok: 1 write reply reports, if any: its writeErrors (duplicate_key when the
// first is 11000, else server_error) or else its writeConcernError (write_concern_failed), with
// `n` as `written` and the reply's errorLabels.
std::optional<failure> write_failure_of(bson::document_view reply);

// Sends endSessions (in batches of 10,000) for the pooled sessions of `s`, when a server is known
// to answer; every error is ignored (servers without sessions refuse the command).
void end_sessions(client_state& s) noexcept;

}  // namespace oid::mongo::detail
