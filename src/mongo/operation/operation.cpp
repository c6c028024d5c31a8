#include "mongo/operation/operation.hpp"

#include <algorithm>
#include <oid/mongo/server_codes.hpp>
#include <string>
#include <utility>
#include <vector>

#include "mongo/operation/command_events.hpp"
#include "mongo/operation/retry.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo::detail {

namespace {

// endSessions takes at most this many ids per command (driver sessions specification).
constexpr std::size_t end_sessions_batch = 10'000;

// IllegalOperation: a standalone refusing txnNumber says "Transaction numbers are only allowed on
// a replica set member or mongos".

void append_session_id(bson::builder& b, std::string_view key, const server_session& s) {
  b.open_document(key).append_binary("id", bson::binary_subtype::uuid, s.id).close();
}

// The logicalSessionTimeoutMinutes of the server `l` is connected to, if it has sessions.
std::optional<std::int64_t> session_timeout_of(lease& l) {
  return session_timeout_minutes(l->server().hello.view());
}

// True when `l` is connected to a mongos.
bool is_mongos(lease& l) { return string_field(l->server().hello.view(), "msg") == "isdbgrid"; }

// Retryable writes need a session on a replica set member, a mongos or a load balancer, never a
// standalone (wire version 6 and later: every server oid speaks to).
bool supports_retryable_writes(lease& l, const op_session& session) {
  if (!session.active() || l->server().max_wire_version < 6) return false;
  const auto hello = l->server().hello.view();
  return hello.contains("setName") || hello.contains("serviceId") ||
         string_field(hello, "msg") == "isdbgrid";
}

// A connection that could not be checked out for a reason a new selection may not meet again:
// a connection that could not be opened, or a pool cleared after an error.
// So is a handshake the server refused with a retryable code (ShutdownInProgress in
// saslContinue, say), as the retryable reads and writes specifications treat handshake errors.
bool is_retryable_checkout(const failure& f) {
  return f.code == errc::connection_failed || f.code == errc::connection_closed ||
         f.code == errc::pool_cleared || (f.server && is_retryable_code(f.server->code));
}

// The specifications' advice for a server that refuses txnNumber.
void explain_unsupported(failure& f) {
  if (f.server && f.server->code == server_code::illegal_operation &&
      f.server->message.starts_with("Transaction numbers")) {
    f.message =
        "this deployment does not support retryable writes: add retryWrites=false to the "
        "connection string (" +
        f.message + ")";
  }
}

// The advice for a server that cannot run transactions: a standalone MongoDB refuses txnNumber
// (IllegalOperation), FerretDB refuses startTransaction and autocommit as unknown fields
// (FailedToParse) and has no commitTransaction or abortTransaction (CommandNotFound).
void explain_no_transactions(failure& f) {
  if (!f.server) return;
  const auto& m = f.server->message;
  const bool refused =
      (f.server->code == server_code::illegal_operation && m.starts_with("Transaction numbers")) ||
      (f.server->code == server_code::failed_to_parse &&
       (m.find("startTransaction") != std::string::npos ||
        m.find("autocommit") != std::string::npos)) ||
      (f.server->code == server_code::command_not_found &&
       (m.find("commitTransaction") != std::string::npos ||
        m.find("abortTransaction") != std::string::npos));
  if (!refused) return;
  f.message =
      "this deployment cannot run transactions: they need a replica set (MongoDB 4.0 or later) "
      "or a sharded cluster (4.2 or later) that supports them; the server said: " +
      f.message;
}

}  // namespace

op_session::op_session(op_session&& o) noexcept
    : state_(o.state_),
      explicit_(o.explicit_),
      session_(std::move(o.session_)),
      timeout_(o.timeout_) {
  o.session_.reset();
}

op_session& op_session::operator=(op_session&& o) noexcept {
  if (this != &o) {
    release();
    state_ = o.state_;
    explicit_ = o.explicit_;
    session_ = std::move(o.session_);
    timeout_ = o.timeout_;
    o.session_.reset();
  }
  return *this;
}

void op_session::attach(lease& l) {
  if (explicit_) {
    const auto minutes = session_timeout_of(l);
    explicit_->server(minutes ? std::optional(std::chrono::minutes(*minutes)) : std::nullopt);
    l.session = explicit_;
    return;
  }
  if (session_ || !state_) return;
  const auto minutes = session_timeout_of(l);
  if (!minutes) return;
  timeout_ = std::chrono::minutes(*minutes);
  session_ = state_->sessions.check_out(timeout_);
}

const server_session* op_session::held() const noexcept {
  if (explicit_) return explicit_->server_session ? &*explicit_->server_session : nullptr;
  return session_ ? &*session_ : nullptr;
}

bool op_session::active() const noexcept { return held() != nullptr; }

bool op_session::in_transaction() const noexcept {
  return explicit_ != nullptr && explicit_->in_transaction();
}

void op_session::mark_dirty() noexcept {
  if (explicit_ && explicit_->server_session) explicit_->server_session->dirty = true;
  if (session_) session_->dirty = true;
}

std::int64_t op_session::next_txn_number() {
  if (explicit_) return ++explicit_->server().txn_number;
  return ++session_->txn_number;
}

std::int64_t op_session::txn_number() const noexcept {
  const auto* s = held();
  return s ? s->txn_number : 0;
}

void op_session::append_lsid(bson::builder& b) const {
  if (const auto* s = held()) append_session_id(b, "lsid", *s);
}

void op_session::append_for_cursor(bson::builder& b) const {
  append_lsid(b);
  if (in_transaction()) {
    b.append_int64("txnNumber", txn_number());
    b.append_bool("autocommit", false);
  }
}

void op_session::release() noexcept {
  if (!session_ || !state_) return;
  session_->last_use = server_session::clock::now();
  state_->sessions.check_in(std::move(*session_), timeout_);
  session_.reset();
}

namespace {

// `{level: ..., afterClusterTime: ... | atClusterTime: ...}` for a command of `session` (null:
// an implicit session) at `level`; empty when there is nothing to say.
void append_read_concern(bson::builder& b, const mongo::read_concern& level,
                         const session_state* session) {
  std::optional<bson::timestamp_value> after, at;
  std::string_view chosen = level.level;
  if (session && session->options.snapshot) {
    chosen = "snapshot";
    at = session->snapshot_time;
  } else if (session && session->causal) {
    after = session->operation_time;
  }
  if (chosen.empty() && !after && !at) return;
  b.open_document("readConcern");
  if (!chosen.empty()) b.append_string("level", chosen);
  if (after) b.append_timestamp("afterClusterTime", *after);
  if (at) b.append_timestamp("atClusterTime", *at);
  b.close();
}

// The write commands that carry afterClusterTime in a causally consistent session (the causal
// consistency specification, DRIVERS-3274).
bool is_causal_write(bson::document_view cmd) {
  const auto first = cmd.begin();
  if (first == cmd.end()) return false;
  const auto name = first->key();
  return name == "insert" || name == "update" || name == "delete" || name == "findAndModify" ||
         name == "bulkWrite" || name == "create" || name == "createIndexes" || name == "drop" ||
         name == "dropDatabase" || name == "dropIndexes";
}

}  // namespace

bson::document_view attempt::command(bson::document_view cmd) {
  session_state* ex = session.explicit_session();
  // commitTransaction and abortTransaction carry the transaction's fields too, whatever state
  // the call left it in.
  const bool txn = ex != nullptr && (op.ends_transaction || ex->in_transaction());
  const bool starts = txn && ex->txn == transaction_state::starting && !op.ends_transaction;
  const bool lsid = session.active() && !cmd.contains("lsid");
  // A snapshot session's every command asks for its snapshot (the server refuses those that
  // cannot read one: writes, listDatabases, ...).
  const bool snapshot = !txn && ex && ex->options.snapshot;
  const bool read_concern =
      snapshot || (!txn && op.read_concern != nullptr &&
                   (!op.read_concern->is_default() || (ex && ex->causal && ex->operation_time)));
  // A write of a causally consistent session waits for what the session saw
  // (afterClusterTime alone: writes take no read concern level).
  const bool causal_write =
      !txn && !read_concern && ex && ex->causal && ex->operation_time && is_causal_write(cmd);
  if (!lsid && !txn_number && !txn && !read_concern && !causal_write) return cmd;
  bson::builder b;
  for (const auto& e : cmd) {
    const auto key = e.key();
    // The transaction's concerns are its own: sent with its first command (read) and its
    // commit (write), never by the operations inside.
    if (txn && key == "readConcern") continue;
    if (txn && key == "writeConcern" && !op.ends_transaction) continue;
    if ((read_concern || causal_write) && key == "readConcern") continue;
    b.append_element(e);
  }
  if (lsid) session.append_lsid(b);
  if (txn) {
    b.append_int64("txnNumber", session.txn_number());
    if (starts) {
      b.append_bool("startTransaction", true);
      append_read_concern(b, ex->txn_options.read_concern.value_or(mongo::read_concern{}), ex);
    }
    b.append_bool("autocommit", false);
  } else {
    if (txn_number) b.append_int64("txnNumber", *txn_number);
    if (read_concern) {
      append_read_concern(b, op.read_concern ? *op.read_concern : mongo::read_concern{}, ex);
    }
    if (causal_write) append_read_concern(b, mongo::read_concern{}, ex);
  }
  with_session_.emplace(std::move(b).extract());
  return with_session_->view();
}

outcome<lease> acquire_for_write(client_state& s, bool retries, const time_limit* limit,
                                 std::string_view pinned) {
  auto l = s.acquire(mongo::read_preference{}, operation_kind::write, limit, pinned);
  if (l || !retries || !is_retryable_checkout(l.error())) return l;
  failure first = std::move(l).error();
  first.labels.emplace_back(retryable_write_label);
  auto again = s.acquire(mongo::read_preference{}, operation_kind::write, limit, pinned);
  if (!again) return first;  // as `execute`: the original error
  return again;
}

const mongo::write_concern& write_concern_of(const mongo::write_concern& asked,
                                             const handle_context& ctx) noexcept {
  static const mongo::write_concern none{};
  if (ctx.session != nullptr && ctx.session->in_transaction()) return none;
  return asked.is_default() ? ctx.write_concern : asked;
}

outcome<done> execute(client_state& s, op_session& session, std::optional<lease>& conn,
                      const operation& op, function_ref<outcome<done>(attempt&)> run) {
  session_state* ex = session.explicit_session();
  if (ex) {
    if (auto refused = ex->unusable_by(s)) return std::move(*refused);
    if (!op.acknowledged) {
      return failure(errc::invalid_argument,
                     "an unacknowledged (w: 0) write cannot run in an explicit session");
    }
    // The first operation after a commit or an abort leaves the transaction behind.
    if (!op.ends_transaction &&
        (ex->txn == transaction_state::committed || ex->txn == transaction_state::aborted)) {
      ex->txn = transaction_state::none;
    }
  }
  // Inside a transaction nothing is retried but its commit and abort (once, whatever
  // retryWrites says), and reads go where the transaction reads: the primary.
  const bool txn = ex != nullptr && ex->in_transaction() && !op.ends_transaction;
  const mongo::read_preference* read = op.read;
  if (txn && (read != nullptr || op.any_command)) {
    read = &*ex->txn_options.read_preference;
    if (read->mode != read_mode::primary) {
      return failure(errc::invalid_argument, "read preference in a transaction must be primary");
    }
  }
  const bool write = op.retry == retry_kind::write;
  const bool retries =
      op.ends_transaction ||
      (!txn && op.acknowledged &&
       (write ? s.uri.retry_writes().value_or(true)
              : op.retry == retry_kind::read && s.uri.retry_reads().value_or(true)));
  // An error in a transaction that a new attempt of the whole transaction may not meet: the
  // specification's TransientTransactionError (network errors and server selection failures).
  const auto transient = [&](failure f) -> failure {
    if (txn && !f.has_label(transient_transaction_label)) {
      f.labels.emplace_back(transient_transaction_label);
    }
    if (txn) ex->pinned.clear();  // the transaction may start again, on any mongos
    return f;
  };
  // An operation outside a transaction leaves the last transaction's mongos.
  if (ex != nullptr && !txn && !op.ends_transaction) ex->pinned.clear();
  // Inside with_transaction under timeoutMS, an operation has what is left of the call's limit
  // (one deadline for the callback, the commit and the retries).
  if (ex != nullptr && ex->txn_limit && !op.ends_transaction && op.limit &&
      op.limit->timeout != ex->txn_limit->timeout) {
    return failure(errc::invalid_argument,
                   "timeoutMS cannot be changed for an operation inside with_transaction: the "
                   "call's one deadline covers the callback, the commit and the retries");
  }
  const std::optional<time_limit>& limit_held =
      ex != nullptr && ex->txn_limit && !op.ends_transaction ? ex->txn_limit : op.limit;
  const time_limit* limit = limit_held ? &*limit_held : nullptr;
  // Without timeoutMS one retry; with it, as many as time allows.
  const auto out_of_retries = [&](const std::optional<failure>& first) {
    return first.has_value() && limit == nullptr;
  };
  // Once timeoutMS has run out: a timeout that says what failed last.
  const auto timed_out = [&](const failure& last) -> failure {
    if (last.code == errc::timeout) return last;
    failure t = limit->expired_in("a retry", last.message);
    t.server = last.server;
    t.labels = last.labels;
    return t;
  };
  // The error to report when the retries end: the first attempt's; under timeoutMS, which retries
  // more than once, the latest that said something about the write.
  std::optional<failure> first;
  std::optional<std::int64_t> txn_number;
  // One id for the command events of every attempt (and, through the lease, of a cursor's
  // getMores and killCursors).
  const std::int64_t operation_id = op.operation_id != 0 ? op.operation_id : next_operation_id();
  // The servers earlier attempts failed on, which the retries avoid when they can.
  std::vector<std::string> deprioritized;
  while (true) {
    if (limit && first && limit->expired()) return timed_out(*first);
    if (!conn) {
      // A sharded cluster's transaction goes to the mongos its first command went to.
      const std::string_view pinned =
          ex != nullptr && (txn || op.ends_transaction) ? std::string_view(ex->pinned) : "";
      auto l = read ? s.acquire(*read, operation_kind::read, limit, pinned, deprioritized)
                    : s.acquire(mongo::read_preference{}, operation_kind::write, limit, pinned,
                                deprioritized);
      if (!l) {
        failure f = std::move(l).error();
        if (txn) return transient(std::move(f));
        if (limit && f.code == errc::timeout) return f;
        if (out_of_retries(first)) return std::move(*first);  // no server for the retry
        if (first && limit) {
          if (!is_retryable_checkout(f)) return std::move(*first);
          continue;  // the first error stands; try again while time is left
        }
        if (!retries || !is_retryable_checkout(f)) return f;
        if (write) f.labels.emplace_back(retryable_write_label);
        first = std::move(f);
        continue;
      }
      conn.emplace(std::move(*l));
    }
    lease& l = *conn;
    l.operation_id = operation_id;
    l.limit = limit_held;
    l.max_time = op.max_time;
    if (op.acknowledged) session.attach(l);
    if (txn && ex->txn == transaction_state::starting && is_mongos(l)) ex->pinned = l.address;
    const bool supported = !write || supports_retryable_writes(l, session);
    if (first && !supported) return std::move(*first);
    if (retries && write && supported && !txn_number && !op.ends_transaction) {
      txn_number = session.next_txn_number();
    }
    attempt a(l, session, op, retries && write ? txn_number : std::nullopt);
    auto r = run(a);
    if (txn && ex->txn == transaction_state::starting) {
      ex->txn = transaction_state::in_progress;
      ex->txn_sent = true;
    }
    if (r) return done{};
    failure f = std::move(r).error();
    if (txn || op.ends_transaction) explain_no_transactions(f);
    if (txn) {
      if (is_network_failure(f)) {
        session.mark_dirty();
        return transient(std::move(f));
      }
      if (f.has_label(transient_transaction_label)) ex->pinned.clear();
      return f;
    }
    if (limit && f.code != errc::timeout && is_max_time_expired(f)) {
      // The server ran out of the time the operation gave it: a timeout, and not retried.
      f.code = errc::timeout;
      return f;
    }
    if (is_network_failure(f)) session.mark_dirty();
    if (write) explain_unsupported(f);
    if (!retries || !supported) return f;
    if (write) add_retryable_write_label(f, l->server().max_wire_version);
    if (first) {
      // A retry failed too: its error, unless it says nothing about the write.
      const bool no_writes = write && f.has_label("NoWritesPerformed");
      if (out_of_retries(first)) return no_writes ? std::move(*first) : f;
      if (!no_writes) first = f;
    }
    if (!(write ? is_retryable_write_failure(f) : is_retryable_read_failure(f))) {
      return first && write && f.has_label("NoWritesPerformed") ? std::move(*first) : f;
    }
    if (limit && limit->expired()) return timed_out(f);
    // The retry prefers another server than this one (the retryable reads and writes
    // specifications' deprioritized servers): on a sharded cluster always, elsewhere after an
    // overload error only (a replica set's reads would otherwise leave their preferred member).
    if (is_mongos(l) || f.has_label("SystemOverloadedError")) deprioritized.push_back(l.address);
    if (!first) first = std::move(f);
    conn.reset();                                 // the retry selects a server again
    if (op.ends_transaction) ex->pinned.clear();  // a commit or abort retried: any mongos
  }
}

outcome<bson::document> run_command(client_state& s, std::string_view db, bson::document_view cmd,
                                    const operation& op) {
  op_session session(s, op.session);
  std::optional<lease> conn;
  std::optional<bson::document> out;  // optional: a default document allocates
  auto ran = execute(s, session, conn, op, [&](attempt& a) -> outcome<done> {
    if (!op.acknowledged) {  // w: 0: sent with moreToCome, nothing comes back
      out.emplace();
      return send_unacknowledged(a.conn, db, a.command(cmd));
    }
    auto reply = command(a.conn, db, a.command(cmd));
    if (!reply) return std::move(reply).error();
    if (op.write_reply) {
      if (auto f = write_failure_of(reply->view())) return std::move(*f);
    }
    out.emplace(std::move(*reply));
    return done{};
  });
  if (!ran) return std::move(ran).error();
  return std::move(*out);
}

std::optional<failure> write_failure_of(bson::document_view r) {
  failure f{};
  if (const auto we = r.find("writeErrors")) {
    if (auto arr = we->get_array()) {
      for (const auto& e : *arr) {
        if (auto d = e.get_document()) f.write_errors.push_back(server_error_of(*d));
      }
    }
  }
  if (!f.write_errors.empty()) {
    f.code = f.write_errors.front().code == server_code::duplicate_key ? errc::duplicate_key
                                                                       : errc::server_error;
    f.message = f.write_errors.front().message;
    f.server = f.write_errors.front();
  } else if (const auto wce = r.find("writeConcernError")) {
    auto d = wce->get_document();
    if (!d) return std::nullopt;
    f.write_concern_error = server_error_of(*d);
    f.code = errc::write_concern_failed;
    f.message = "write concern failed: " + f.write_concern_error->message;
  } else {
    return std::nullopt;
  }
  f.written = int64_field(r, "n", 0);
  f.labels = error_labels_of(r);
  return f;
}

void end_sessions(client_state& s) noexcept {
  try {
    auto sessions = s.sessions.drain();
    if (sessions.empty()) return;
    // Only a server known to answer: a client closing after its deployment went away must not
    // wait serverSelectionTimeoutMS for it.
    const auto t = s.topology->description();
    const bool reachable = std::any_of(t.servers.begin(), t.servers.end(), [](const auto& e) {
      const auto type = e.second.type;
      return type == server_type::standalone || type == server_type::rs_primary ||
             type == server_type::rs_secondary || type == server_type::mongos ||
             type == server_type::load_balancer;
    });
    if (!reachable) return;
    mongo::read_preference preference;
    preference.mode = read_mode::primary_preferred;
    auto l = s.acquire(preference, operation_kind::read);
    if (!l) return;
    for (std::size_t start = 0; start < sessions.size(); start += end_sessions_batch) {
      const std::size_t end = std::min(sessions.size(), start + end_sessions_batch);
      bson::builder cmd;
      cmd.open_array("endSessions");
      for (std::size_t i = start; i < end; ++i) {
        append_session_id(cmd, std::to_string(i - start), sessions[i]);
      }
      cmd.close();
      // Servers without sessions (FerretDB) answer CommandNotFound: nothing to do about it.
      if (!command_view(*l, "admin", cmd.view())) return;
    }
  } catch (...) {
    // Closing a client never fails.
  }
}

}  // namespace oid::mongo::detail
