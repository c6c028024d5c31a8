#include <oid/mongo/client.hpp>
#include <oid/mongo/collection.hpp>
#include <oid/mongo/database.hpp>
#include <oid/mongo/session.hpp>
#include <string>
#include <utility>

#include "mongo/operation/retry.hpp"
#include "mongo/operation/session_state.hpp"

namespace oid::mongo {

namespace {

// The convenient transactions API's limit on retrying a transaction (its default timeout).
constexpr auto with_transaction_limit = std::chrono::seconds(120);

using detail::is_max_time_expired;  // a commit out of time on the server: not retried
using detail::transient_transaction_label;
using detail::unknown_commit_label;

}  // namespace

outcome<session> client::start_session(const session_options& options) const {
  if (options.snapshot && options.causal_consistency.value_or(false)) {
    return failure(errc::invalid_argument,
                   "a session cannot be both snapshot and causally consistent");
  }
  return session(std::make_shared<session_state>(state_, options));
}

session::session(std::shared_ptr<session_state> state) noexcept : state_(std::move(state)) {}
session::session(session&&) noexcept = default;
session& session::operator=(session&& o) noexcept {
  if (this != &o) {
    end_session();
    state_ = std::move(o.state_);
  }
  return *this;
}
session::~session() { end_session(); }

outcome<bson::document> session::id() const {
  if (!state_ || state_->ended) {
    return failure(errc::session_misuse, "the session was ended: start a new one");
  }
  const auto& s = state_->server();
  bson::builder b;
  b.append_binary("id", bson::binary_subtype::uuid, s.id);
  return std::move(b).extract();
}

const session_options& session::options() const noexcept { return state_->options; }

std::optional<bson::document> session::cluster_time() const {
  return state_ ? state_->cluster_time : std::nullopt;
}

std::optional<bson::timestamp_value> session::operation_time() const {
  return state_ ? state_->operation_time : std::nullopt;
}

outcome<done> session::advance_cluster_time(bson::document_view cluster_time) {
  if (!detail::cluster_timestamp(cluster_time)) {
    return failure(errc::invalid_argument,
                   "advance_cluster_time: the document has no timestamp clusterTime");
  }
  if (state_) state_->advance_cluster_time(cluster_time);
  return done{};
}

void session::advance_operation_time(bson::timestamp_value t) {
  if (state_) state_->advance_operation_time(t);
}

outcome<done> session::start_transaction(const transaction_options& options) {
  if (!state_ || state_->ended) {
    return failure(errc::session_misuse, "the session was ended: start a new one");
  }
  auto& s = *state_;
  if (s.options.snapshot) {
    return failure(errc::session_misuse, "transactions are not supported in snapshot sessions");
  }
  if (s.in_transaction()) {
    return failure(errc::session_misuse, "startTransaction: transaction already in progress");
  }
  // What the transaction uses: its own options, else the session's defaults, else the client's.
  const auto& defaults = s.options.default_transaction_options;
  transaction_options chosen;
  chosen.read_concern = options.read_concern    ? options.read_concern
                        : defaults.read_concern ? defaults.read_concern
                                                : std::optional(s.client->read_concern);
  chosen.write_concern = options.write_concern    ? options.write_concern
                         : defaults.write_concern ? defaults.write_concern
                                                  : std::optional(s.client->write_concern);
  chosen.read_preference = options.read_preference    ? options.read_preference
                           : defaults.read_preference ? defaults.read_preference
                                                      : std::optional(s.client->read_preference);
  chosen.max_commit_time =
      options.max_commit_time ? options.max_commit_time : defaults.max_commit_time;
  if (!chosen.write_concern->is_acknowledged()) {
    return failure(errc::invalid_argument,
                   "transactions do not support unacknowledged write concern (w: 0)");
  }
  ++s.server().txn_number;
  s.txn_options = std::move(chosen);
  s.txn = transaction_state::starting;
  s.txn_sent = false;
  s.recovery_token.reset();
  s.pinned.clear();
  return done{};
}

outcome<done> session::commit_transaction(std::optional<std::chrono::milliseconds> timeout) {
  if (!state_ || state_->ended) {
    return failure(errc::session_misuse, "the session was ended: start a new one");
  }
  return detail::commit_transaction(*state_, timeout);
}

outcome<done> session::abort_transaction(std::optional<std::chrono::milliseconds> timeout) {
  if (!state_ || state_->ended) {
    return failure(errc::session_misuse, "the session was ended: start a new one");
  }
  return detail::abort_transaction(*state_, timeout);
}

outcome<done> session::with_transaction(const transaction_callback& callback,
                                        const transaction_options& options,
                                        std::optional<std::chrono::milliseconds> timeout) {
  using clock = std::chrono::steady_clock;
  if (!state_ || state_->ended) {
    return failure(errc::session_misuse, "the session was ended: start a new one");
  }
  auto& s = *state_;
  const auto start = clock::now();
  // With timeoutMS, the whole call (callback, commit and retries) has that long; else the
  // specification's 120 seconds bound the retries.
  const auto limit = detail::time_limit::from(timeout ? timeout : s.default_timeout());
  struct clear_limit {
    session_state& s;
    ~clear_limit() { s.txn_limit.reset(); }
  } clear{s};
  const auto within_limit = [&] {
    if (limit) return !limit->expired();
    return clock::now() - start < with_transaction_limit;
  };
  // Out of time: under timeoutMS a timeout naming the last error, else that error.
  const auto out_of_time = [&](failure last) -> failure {
    if (!limit || last.code == errc::timeout) return last;
    failure t = limit->expired_in("withTransaction", last.message);
    t.server = last.server;
    t.labels = last.labels;
    return t;
  };
  // An abort after the time ran out gets a timeoutMS of its own (the specification: the
  // transaction must not stay open on the server for want of time to abort it).
  const auto abort = [&] {
    s.txn_limit.reset();
    (void)detail::abort_transaction(s, limit ? std::optional(limit->timeout) : std::nullopt);
    s.txn_limit = limit;
  };
  while (true) {
    s.txn_limit = limit;
    if (auto started = start_transaction(options); !started) return started;
    auto ran = callback(*this);
    if (!ran) {
      failure f = std::move(ran).error();
      if (s.in_transaction()) abort();
      if (f.has_label(transient_transaction_label)) {
        if (within_limit()) continue;
        return out_of_time(std::move(f));
      }
      return f;
    }
    // The callback committed or aborted by itself: its choice stands.
    if (!s.in_transaction()) return done{};
    while (true) {
      auto committed = detail::commit_transaction(s);
      if (committed) return done{};
      failure f = std::move(committed).error();
      const bool unknown = f.has_label(unknown_commit_label) && !is_max_time_expired(f);
      if ((unknown || f.has_label(transient_transaction_label)) && !within_limit()) {
        return out_of_time(std::move(f));
      }
      if (unknown) continue;                                // the commit again (with w: "majority")
      if (f.has_label(transient_transaction_label)) break;  // the whole transaction again
      return f;
    }
  }
}

bool session::in_transaction() const noexcept { return state_ && state_->in_transaction(); }

transaction_state session::transaction_state() const noexcept {
  return state_ ? state_->txn : mongo::transaction_state::none;
}

void session::end_session() noexcept {
  if (state_) state_->end();
}

bool session::ended() const noexcept { return !state_ || state_->ended; }

std::string session::pinned_server() const { return state_ ? state_->pinned : std::string(); }

bool session::dirty() const noexcept {
  return state_ && state_->server_session && state_->server_session->dirty;
}

}  // namespace oid::mongo

namespace oid::mongo {

namespace {

// `ctx` bound to `s`: its operations run in the session, with the session's default timeoutMS
// when it has one.
detail::handle_context bound(detail::handle_context ctx,
                             const std::shared_ptr<session_state>& state) {
  ctx.session = state;
  if (state && state->options.default_timeout) ctx.timeout = state->options.default_timeout;
  return ctx;
}

}  // namespace

client client::with_session(const mongo::session& s) const {
  auto copy = *this;
  copy.ctx_ = bound(ctx_, s.state_);
  return copy;
}

database database::with_session(const mongo::session& s) const {
  auto copy = *this;
  copy.ctx_ = bound(ctx_, s.state_);
  return copy;
}

collection collection::with_session(const mongo::session& s) const {
  auto copy = *this;
  copy.ctx_ = bound(ctx_, s.state_);
  return copy;
}

}  // namespace oid::mongo
