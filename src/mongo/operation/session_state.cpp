#include "mongo/operation/session_state.hpp"

#include <oid/mongo/server_codes.hpp>
#include <string>
#include <utility>

#include "mongo/operation/operation.hpp"
#include "mongo/operation/retry.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo::detail {

std::optional<bson::timestamp_value> cluster_timestamp(bson::document_view cluster_time) noexcept {
  const auto e = cluster_time.find("clusterTime");
  if (!e) return std::nullopt;
  auto t = e->get_timestamp();
  if (!t) return std::nullopt;
  return *t;
}

bool cluster_time_less(bson::document_view a, bson::document_view b) noexcept {
  const auto ta = cluster_timestamp(a);
  const auto tb = cluster_timestamp(b);
  if (!tb) return false;
  return !ta || timestamp_less(*ta, *tb);
}

}  // namespace oid::mongo::detail

namespace oid::mongo {

std::optional<failure> session_state::unusable_by(const client_state& s) const {
  if (ended) return failure(errc::session_misuse, "the session was ended: start a new one");
  if (client.get() != &s) {
    return failure(errc::session_misuse,
                   "the session belongs to another client: a session works only with the "
                   "client that started it");
  }
  return std::nullopt;
}

detail::server_session& session_state::server(std::optional<std::chrono::minutes> timeout) {
  if (timeout) server_timeout = *timeout;
  if (!server_session) server_session = client->sessions.check_out(server_timeout);
  return *server_session;
}

void session_state::advance_cluster_time(bson::document_view t) {
  if (!cluster_time || detail::cluster_time_less(cluster_time->view(), t)) cluster_time.emplace(t);
}

void session_state::advance_operation_time(bson::timestamp_value t) {
  if (!operation_time || detail::timestamp_less(*operation_time, t)) operation_time = t;
}

void session_state::observe(bson::document_view reply) {
  if (const auto t = reply.find("$clusterTime")) {
    if (const auto d = t->get_document(); d && detail::cluster_timestamp(*d)) {
      advance_cluster_time(*d);
    }
  }
  if (const auto t = reply.find("operationTime")) {
    if (const auto ts = t->get_timestamp()) advance_operation_time(*ts);
  }
  if (txn != transaction_state::none) {
    if (const auto t = reply.find("recoveryToken")) {
      if (const auto d = t->get_document()) recovery_token.emplace(*d);
    }
  }
  if (options.snapshot && !snapshot_time) {
    // The first read of a snapshot session fixes its snapshot: the cursor's atClusterTime
    // (find, aggregate) or the reply's (distinct).
    std::optional<bson::element> at;
    if (const auto c = reply.find("cursor")) {
      if (const auto d = c->get_document()) {
        if (const auto e = d->find("atClusterTime")) at = *e;
      }
    }
    if (!at) {
      if (const auto e = reply.find("atClusterTime")) at = *e;
    }
    if (at) {
      if (const auto ts = at->get_timestamp()) snapshot_time = *ts;
    }
  }
}

void session_state::end() noexcept {
  if (ended) return;
  if (in_transaction()) (void)detail::abort_transaction(*this);
  ended = true;
  if (server_session) {
    server_session->last_use = detail::server_session::clock::now();
    client->sessions.check_in(std::move(*server_session), server_timeout);
    server_session.reset();
  }
}

}  // namespace oid::mongo

namespace oid::mongo::detail {

namespace {

// The write concern a retried commit sends: w: "majority", with the first's journal and a
// wtimeout of 10 s unless it had one (the transactions specification).
write_concern majority_of(write_concern w) {
  w.w.reset();
  w.w_tag = "majority";
  if (!w.timeout) w.timeout = std::chrono::milliseconds(10'000);
  return w;
}

// A commit whose outcome the client cannot know: the server may have committed.
bool is_unknown_commit_result(const failure& f) {
  if (f.code == errc::timeout || is_network_failure(f) || f.code == errc::connection_failed ||
      f.code == errc::pool_cleared || f.has_label(retryable_write_label)) {
    return true;
  }
  const auto code =
      f.write_concern_error ? f.write_concern_error->code : (f.server ? f.server->code : 0);
  if (code == server_code::max_time_ms_expired) return true;
  // A write concern error other than "cannot be satisfied" or "unknown tag": the commit was
  // applied on the primary, but not acknowledged as asked.
  return f.write_concern_error.has_value() && code != server_code::unsatisfiable_write_concern &&
         code != server_code::unknown_repl_write_concern;
}

// Runs commitTransaction or abortTransaction in the session's transaction on admin, retried once
// after a retryable error; the retry's write concern is `retry_concern` (when given).
outcome<done> end_command(session_state& s, std::string_view name, const write_concern& concern,
                          const std::optional<write_concern>& retry_concern,
                          std::optional<std::chrono::milliseconds> timeout) {
  op_session session(*s.client, &s);
  std::optional<lease> conn;
  operation op{.retry = retry_kind::write,
               .write_reply = true,
               .limit = timeout       ? time_limit::from(timeout)
                        : s.txn_limit ? s.txn_limit
                                      : time_limit::from(s.default_timeout()),
               .session = &s,
               .ends_transaction = true};
  int attempts = 0;
  return execute(*s.client, session, conn, op, [&](attempt& a) -> outcome<done> {
    bson::builder cmd;
    cmd.append_int32(name, 1);
    const write_concern& w = attempts++ > 0 && retry_concern ? *retry_concern : concern;
    w.append_to(cmd);
    if (s.recovery_token) cmd.append_document("recoveryToken", s.recovery_token->view());
    if (name == "commitTransaction" && s.txn_options.max_commit_time && !op.limit) {
      cmd.append_int64("maxTimeMS", s.txn_options.max_commit_time->count());
    }
    const auto built = std::move(cmd).extract();
    auto reply = command(a.conn, "admin", a.command(built.view()));
    if (!reply) return std::move(reply).error();
    if (auto f = write_failure_of(reply->view())) return std::move(*f);
    return done{};
  });
}

}  // namespace

outcome<done> commit_transaction(session_state& s,
                                 std::optional<std::chrono::milliseconds> timeout) {
  switch (s.txn) {
  case transaction_state::none:
    return failure(errc::session_misuse,
                   "No transaction started: commitTransaction needs startTransaction first");
  case transaction_state::aborted:
    return failure(errc::session_misuse,
                   "Cannot call commitTransaction after calling abortTransaction");
  default: break;
  }
  const bool again = s.txn == transaction_state::committed;
  s.txn = transaction_state::committed;
  if (!s.txn_sent) return done{};  // nothing was sent: nothing to commit
  const write_concern concern = s.txn_options.write_concern.value_or(write_concern{});
  // A commit called again is a retry of the first: "majority" as well.
  auto ran = end_command(s, "commitTransaction", again ? majority_of(concern) : concern,
                         majority_of(concern), timeout);
  if (ran) return ran;
  failure f = std::move(ran).error();
  s.pinned.clear();  // a commit that failed may be run again anywhere
  if (is_unknown_commit_result(f) && !f.has_label(unknown_commit_label)) {
    // The TransientTransactionError of a failure on the way is the transaction's, not the
    // commit's: an unknown outcome must not look like one to retry from the start.
    std::erase(f.labels, std::string(transient_transaction_label));
    f.labels.emplace_back(unknown_commit_label);
  }
  return f;
}

outcome<done> abort_transaction(session_state& s,
                                std::optional<std::chrono::milliseconds> timeout) {
  switch (s.txn) {
  case transaction_state::none:
    return failure(errc::session_misuse,
                   "No transaction started: abortTransaction needs startTransaction first");
  case transaction_state::committed:
    return failure(errc::session_misuse,
                   "Cannot call abortTransaction after calling commitTransaction");
  case transaction_state::aborted:
    return failure(errc::session_misuse, "Cannot call abortTransaction twice");
  default: break;
  }
  s.txn = transaction_state::aborted;
  if (!s.txn_sent) return done{};
  // The server aborts a transaction it hears no more of: an abort that fails is not the
  // application's problem (the specification ignores its errors).
  const write_concern concern = s.txn_options.write_concern.value_or(write_concern{});
  (void)end_command(s, "abortTransaction", concern, std::nullopt, timeout);
  s.pinned.clear();
  return done{};
}

}  // namespace oid::mongo::detail
