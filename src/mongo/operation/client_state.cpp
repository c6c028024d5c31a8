#include "mongo/operation/client_state.hpp"

#include <algorithm>
#include <oid/bson/builder.hpp>
#include <optional>
#include <thread>

#include "mongo/operation/command_events.hpp"
#include "mongo/operation/session_state.hpp"
#include "mongo/wire/client_metadata.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

// client_state is declared in oid::mongo (the public handles hold it opaquely) and works with the
// cluster's and the executor's types.
using detail::clock;
using detail::lease;
using detail::listeners;
using detail::scram_cache;
using detail::tls_context;

client_state::client_state(mongo::uri u, listeners l, std::shared_ptr<const tls_context> tls,
                           std::optional<mongo::server_api> api,
                           std::shared_ptr<detail::client_metadata> metadata)
    : uri(std::move(u)), events(std::move(l)) {
  options.tls = std::move(tls);
  options.api = api;
  options.connect_timeout = uri.connect_timeout().value_or(options.connect_timeout);
  options.socket_timeout = uri.socket_timeout().value_or(options.socket_timeout);
  options.app_name = uri.app_name().value_or("");
  options.metadata = metadata ? std::move(metadata)
                              : std::make_shared<detail::client_metadata>(
                                    options.app_name, detail::current_platform());
  options.load_balanced = uri.load_balanced().value_or(false);
  selection_timeout = uri.server_selection_timeout().value_or(std::chrono::milliseconds(30'000));
  timeout = uri.timeout();
  read_preference = uri.read_preference();
  write_concern.w = uri.w_number();
  write_concern.w_tag = uri.w_tag();
  write_concern.journal = uri.journal();
  write_concern.timeout = uri.w_timeout();
  read_concern.level = uri.read_concern_level().value_or("");
  options.auth = credential::from(uri);
  // One cache per client: its connections after the first skip PBKDF2.
  if (options.auth) options.scram_cache = std::make_shared<scram_cache>();
  topology =
      std::make_unique<mongo::detail::topology>(uri, options, events.on_topology, events.on_pool);
}

detail::receive_buffer client_state::take_spare_buffer() {
  const std::lock_guard lock(spare_mutex_);
  return std::move(spare_);
}

void client_state::keep_spare_buffer(detail::receive_buffer&& b) {
  detail::receive_buffer dropped;  // freed after the lock
  const std::lock_guard lock(spare_mutex_);
  if (b.capacity() > spare_.capacity()) {
    dropped = std::move(spare_);
    spare_ = std::move(b);
  }
}

void client_state::advance_cluster_time(bson::document_view t) {
  std::lock_guard lock(cluster_time_mutex_);
  if (cluster_time_ && !detail::cluster_time_less(cluster_time_->view(), t)) return;
  cluster_time_.emplace(t);
  has_cluster_time_.store(true, std::memory_order_release);
}

std::optional<bson::document> client_state::highest_cluster_time() const {
  std::lock_guard lock(cluster_time_mutex_);
  return cluster_time_;
}

outcome<lease> client_state::acquire() {
  return acquire(mongo::read_preference{}, operation_kind::write);
}

outcome<lease> client_state::acquire_at(std::string_view address, const detail::time_limit* limit) {
  const auto selection_deadline = clock::now() + selection_timeout;
  const auto deadline = limit ? limit->cap(selection_deadline) : selection_deadline;
  auto server = topology->select_address(address, false);
  if (!server) return std::move(server).error();
  auto c = server->pool->check_out(deadline, nullptr, limit == nullptr);
  if (!c) return std::move(c).error();
  lease l(shared_from_this(), std::move(*c), server->address);
  l.min_rtt = server->min_rtt;
  return l;
}

outcome<lease> client_state::acquire(const mongo::read_preference& preference, operation_kind kind,
                                     const detail::time_limit* limit, std::string_view pinned,
                                     std::span<const std::string> deprioritized) {
  // timeoutMS: min(serverSelectionTimeoutMS, the time left) for selection and checkout.
  const auto selection_deadline = clock::now() + selection_timeout;
  const auto deadline = limit ? limit->cap(selection_deadline) : selection_deadline;
  // The operation's own deadline came first: a timeout saying where, with what happened.
  const auto ran_out = [&](std::string_view stage, failure f) -> failure {
    if (!limit || limit->deadline > selection_deadline || !limit->expired()) return f;
    return limit->expired_in(stage, f.message);
  };
  while (true) {
    auto server = pinned.empty() ? topology->select(preference, kind, deadline, deprioritized)
                                 : topology->select_address(pinned);
    if (!server) return ran_out("server selection", std::move(server).error());
    // Without monitors nothing else makes a cleared pool ready again: this operation's
    // connection is the next check.
    if (!topology->monitored()) server->pool->ready();
    check_out_failed_reason why = check_out_failed_reason::connection_error;
    // Under timeoutMS the deprecated waitQueueTimeoutMS is ignored, as the specification says.
    auto c = server->pool->check_out(deadline, &why, limit == nullptr);
    if (!c && limit && limit->expired()) {
      return ran_out("connection checkout", std::move(c).error());
    }
    if (c) {
      // Without monitors, a new connection's handshake has just described the server.
      const server_type type =
          topology->monitored() ? server->type : topology->type_of(server->address);
      lease l(shared_from_this(), std::move(*c), server->address);
      l.min_rtt = server->min_rtt;
      if (kind == operation_kind::read) {
        l.read_preference = preference.to_command_field(server->topology, type);
      }
      return l;
    }
    // The pool's failures to open a connection have gone to SDAM already (topology::factory_for).
    const std::error_code code = c.error().code;
    if (code == errc::pool_cleared || code == errc::pool_closed) {
      // Cleared (the server was marked Unknown) or removed since it was selected: select again.
      if (clock::now() >= deadline) return std::move(c).error();
      continue;
    }
    // No connection came free within waitQueueTimeoutMS or the time left: nothing to retry.
    if (why == check_out_failed_reason::timeout) return std::move(c).error();
    // An old server, one that refused the credential, or a certificate that failed its checks
    // will not change its mind; with monitors, the operation fails as drivers' do when a
    // connection cannot be checked out.
    if (code == errc::unsupported || code == errc::authentication_failed ||
        code == errc::tls_failed || topology->monitored() || clock::now() >= deadline) {
      return std::move(c).error();
    }
    // Single topology: keep trying until serverSelectionTimeoutMS, at a pace that does not
    // hammer a server that is starting up.
    if (clock::now() + std::chrono::milliseconds(250) >= deadline) {
      // The operation's timeoutMS ends before the next try would: its timeout, not
      // serverSelectionTimeoutMS's (which it cut short).
      if (limit && limit->deadline <= selection_deadline) {
        return limit->expired_in("server selection", c.error().message);
      }
      return failure(code == errc::timeout ? errc::timeout : errc::connection_failed,
                     "no server answered within serverSelectionTimeoutMS (" +
                         std::to_string(selection_timeout.count()) +
                         " ms); last: " + c.error().message);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace oid::mongo

namespace oid::mongo::detail {

std::string transport_message(const oid::error& e, const connection& c) {
  const auto& h = c.host();
  return e.message() + " (" +
         (h.type == host::kind::unix_socket ? h.name
                                            : h.name + ":" + std::to_string(h.port_or_default())) +
         ")";
}

namespace {

// `cmd` with `$readPreference` (when `preference` is not empty), maxTimeMS (when given; one
// the command had is replaced), `$clusterTime` (when given) and the client's Stable API options
// (when it declares a version) appended.
bson::document with_fields(bson::document_view cmd, bson::document_view preference,
                           std::optional<std::chrono::milliseconds> max_time, bool drop_wtimeout,
                           const std::optional<bson::document>& cluster_time,
                           const std::optional<server_api>& api) {
  bson::builder b;
  for (const auto& e : cmd) {
    if (max_time && e.key() == "maxTimeMS") continue;
    if (drop_wtimeout && e.key() == "writeConcern" && e.get_document()) {
      const bson::document_view concern =
          *e.get_document();  // named: a range-for would dangle on the temporary result
      // A concern that held wtimeout alone goes entirely: {} would say nothing but noise.
      const bool only_wtimeout = std::all_of(concern.begin(), concern.end(),
                                             [](const auto& w) { return w.key() == "wtimeout"; });
      if (only_wtimeout) continue;
      b.open_document("writeConcern");
      for (const auto& w : concern) {
        if (w.key() != "wtimeout") b.append_element(w);
      }
      b.close();
      continue;
    }
    b.append_element(e);
  }
  if (!preference.empty()) b.append_document("$readPreference", preference);
  if (max_time) b.append_int64("maxTimeMS", max_time->count());
  if (cluster_time) b.append_document("$clusterTime", cluster_time->view());
  append_server_api(b, api);
  return std::move(b).extract();
}

// The cluster time a command of `l` carries: the higher of the client's and its session's, none
// before any reply carried one.
std::optional<bson::document> cluster_time_for(const lease& l) {
  std::optional<bson::document> t;
  if (l.state->has_cluster_time()) t = l.state->highest_cluster_time();
  if (l.session && l.session->cluster_time &&
      (!t || detail::cluster_time_less(t->view(), l.session->cluster_time->view()))) {
    t = l.session->cluster_time;
  }
  return t;
}

// What a reply (ok or not) tells the client and the session: `$clusterTime` and the session's
// `operationTime`.
void observe(lease& l, bson::document_view reply) {
  if (const auto t = reply.find("$clusterTime")) {
    if (const auto d = t->get_document(); d && cluster_timestamp(*d)) {
      l.state->advance_cluster_time(*d);
    }
  }
  if (l.session) l.session->observe(reply);
}

// True when `cmd`'s writeConcern has a wtimeout: under timeoutMS it goes (the deprecated
// wTimeoutMS is ignored, as the client-side operations timeout specification says).
bool has_wtimeout(bson::document_view cmd) {
  const auto wc = cmd.find("writeConcern");
  return wc && wc->get_document() && wc->get_document()->contains("wtimeout");
}

// The name of `cmd` (its first key), for messages.
std::string_view command_name(bson::document_view cmd) {
  const auto first = cmd.begin();
  return first == cmd.end() ? "command" : first->key();
}

// The stage a command of `l` ran out of timeoutMS in before it was sent.
std::string sending(const lease& l, bson::document_view cmd) {
  return "sending " + std::string(command_name(cmd)) + " to " + l.address;
}

// Under timeoutMS: the maxTimeMS a command of `l` carries (the time left minus the server's
// shortest round trip, at least 1), none when the lease sends none, or the timeout to return
// instead of sending when the time left does not cover the round trip.
outcome<std::optional<std::chrono::milliseconds>> max_time_for(const lease& l,
                                                               bson::document_view cmd) {
  if (!l.limit) return std::optional<std::chrono::milliseconds>{};
  const auto& limit = *l.limit;
  if (limit.expired()) return limit.expired_in(sending(l, cmd));
  if (!l.max_time || limit.unlimited()) return std::optional<std::chrono::milliseconds>{};
  const auto left =
      std::chrono::duration_cast<std::chrono::microseconds>(limit.deadline - clock::now()) -
      l.min_rtt;
  if (left <= std::chrono::microseconds(0)) {
    return limit.expired_in(sending(l, cmd),
                            "less time left than the server's shortest round trip (" +
                                std::to_string(l.min_rtt.count()) + " us)");
  }
  return std::optional<std::chrono::milliseconds>{std::max(
      std::chrono::milliseconds(1), std::chrono::duration_cast<std::chrono::milliseconds>(left))};
}

// Reports an error that concerns the topology (SDAM's "error handling").
void report(lease& l, application_error e) {
  e.address = l.address;
  e.generation = l.generation;
  e.max_wire_version = l->server().max_wire_version;
  l.state->topology->on_application_error(e);
}

// True when `reply` (ok: 1) has a writeConcernError whose code is "not writable primary" or
// "node is recovering".
bool has_state_change_write_concern_error(bson::document_view reply) {
  const auto wce = reply.find("writeConcernError");
  if (!wce) return false;
  const auto d = wce->get_document();
  if (!d) return false;
  const auto code = static_cast<std::int32_t>(int64_field(*d, "code", 0));
  return is_not_writable_primary_code(code) || is_node_recovering_code(code);
}

}  // namespace

outcome<bson::document_view> command_view(lease& l, std::string_view db, bson::document_view cmd,
                                          std::span<const document_sequence> sequences) {
  auto max_time = max_time_for(l, cmd);
  if (!max_time) return std::move(max_time).error();
  // Optional: a default document allocates, and most commands carry no $readPreference.
  std::optional<bson::document> with_more;
  const bool drop_wtimeout = l.limit && has_wtimeout(cmd);
  auto cluster_time = cluster_time_for(l);
  if (cluster_time && cmd.contains("$clusterTime")) cluster_time.reset();  // the caller's own
  // The Stable API version goes on every command, getMore and a transaction's included (the
  // specification since 2021); run_command's own command is not looked into.
  const auto& api = l.state->options.api;
  if (l.read_preference || *max_time || drop_wtimeout || cluster_time || api) {
    with_more =
        with_fields(cmd, l.read_preference ? l.read_preference->view() : bson::document_view{},
                    *max_time, drop_wtimeout, cluster_time, api);
    cmd = with_more->view();
  }
  command_monitor events(l.state->events.on_command, *l, l.address, db, cmd, sequences, l.conn.id(),
                         l.operation_id);
  auto reply =
      l->run_view(db, cmd, sequences, l.limit ? std::optional(l.limit->deadline) : std::nullopt);
  if (!reply) {
    auto f = failure(reply.error().code, transport_message(reply.error(), *l));
    if (l.limit && f.code == errc::timeout) {
      // Under timeoutMS: say which stage ran out, and how long the operation had.
      f = l.limit->expired_in("the round trip of " + std::string(command_name(cmd)), f.message);
    }
    application_error e;
    e.kind = reply.error().code == errc::timeout ? error_kind::timeout : error_kind::network;
    e.message = f.message;
    report(l, std::move(e));
    events.failed(f.message);
    return f;
  }
  observe(l, *reply);
  if (!is_ok(*reply)) {
    auto f = failure_of(*reply, command_name(cmd));
    const auto code = static_cast<std::int32_t>(int64_field(*reply, "code", 0));
    if (is_not_writable_primary_code(code) || is_node_recovering_code(code) || code == 0) {
      application_error e;
      e.kind = error_kind::command;
      e.reply = *reply;
      e.message = f.message;
      report(l, std::move(e));
    }
    events.failed(f.message);
    return f;
  }
  if (has_state_change_write_concern_error(*reply)) {
    // The write was applied, but the server says it is no longer primary (or is recovering):
    // SDAM handles it as it would the same command error.
    application_error e;
    e.kind = error_kind::command;
    e.reply = *reply;
    report(l, std::move(e));
  }
  events.succeeded(*reply);
  return *reply;
}

outcome<bson::document> command(lease& l, std::string_view db, bson::document_view cmd,
                                std::span<const document_sequence> sequences) {
  auto reply = command_view(l, db, cmd, sequences);
  if (!reply) return std::move(reply).error();
  return bson::document(*reply);
}

outcome<done> send_unacknowledged(lease& l, std::string_view db, bson::document_view cmd,
                                  std::span<const document_sequence> sequences) {
  if (l.limit && l.limit->expired()) {
    return l.limit->expired_in(sending(l, cmd));
  }
  std::optional<bson::document> with_api;
  if (l.state->options.api) {
    with_api = with_fields(cmd, {}, std::nullopt, false, std::nullopt, l.state->options.api);
    cmd = with_api->view();
  }
  command_monitor events(l.state->events.on_command, *l, l.address, db, cmd, sequences, l.conn.id(),
                         l.operation_id);
  if (auto sent = l->send_unacknowledged(db, cmd, sequences,
                                         l.limit ? std::optional(l.limit->deadline) : std::nullopt);
      !sent) {
    auto f = failure(sent.error().code, transport_message(sent.error(), *l));
    events.failed(f.message);
    return f;
  }
  // Nothing comes back: the command monitoring specification has the event say {ok: 1}.
  static const bson::document ok = [] {
    bson::builder b;
    b.append_int32("ok", 1);
    return std::move(b).extract();
  }();
  events.succeeded(ok.view());
  return done{};
}

}  // namespace oid::mongo::detail
