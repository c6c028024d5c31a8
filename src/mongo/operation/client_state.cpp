#include "mongo/operation/client_state.hpp"

#include <oid/bson/builder.hpp>
#include <optional>
#include <thread>

#include "mongo/operation/command_events.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

// client_state is declared in oid::mongo (the public handles hold it opaquely) and works with the
// cluster's and the executor's types.
using detail::clock;
using detail::lease;
using detail::listeners;
using detail::scram_cache;
using detail::tls_context;

client_state::client_state(mongo::uri u, listeners l, std::shared_ptr<const tls_context> tls)
    : uri(std::move(u)), events(std::move(l)) {
  options.tls = std::move(tls);
  options.connect_timeout = uri.connect_timeout().value_or(options.connect_timeout);
  options.socket_timeout = uri.socket_timeout().value_or(options.socket_timeout);
  options.app_name = uri.app_name().value_or("");
  options.load_balanced = uri.load_balanced().value_or(false);
  selection_timeout = uri.server_selection_timeout().value_or(std::chrono::milliseconds(30'000));
  read_preference = uri.read_preference();
  write_concern.w = uri.w_number();
  write_concern.w_tag = uri.w_tag();
  write_concern.journal = uri.journal();
  write_concern.timeout = uri.w_timeout();
  options.auth = credential::from(uri);
  // One cache per client: its connections after the first skip PBKDF2.
  if (options.auth) options.scram_cache = std::make_shared<scram_cache>();
  topology =
      std::make_unique<mongo::detail::topology>(uri, options, events.on_topology, events.on_pool);
}

outcome<lease> client_state::acquire() {
  return acquire(mongo::read_preference{}, operation_kind::write);
}

outcome<lease> client_state::acquire(const mongo::read_preference& preference,
                                     operation_kind kind) {
  const auto deadline = clock::now() + selection_timeout;
  while (true) {
    auto server = topology->select(preference, kind, deadline);
    if (!server) return std::move(server).error();
    // Without monitors nothing else makes a cleared pool ready again: this operation's
    // connection is the next check.
    if (!topology->monitored()) server->pool->ready();
    check_out_failed_reason why = check_out_failed_reason::connection_error;
    auto c = server->pool->check_out(deadline, &why);
    if (c) {
      // Without monitors, a new connection's handshake has just described the server.
      const server_type type =
          topology->monitored() ? server->type : topology->type_of(server->address);
      lease l(shared_from_this(), std::move(*c), server->address);
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

// `cmd` with `$readPreference` appended.
bson::document with_read_preference(bson::document_view cmd, bson::document_view preference) {
  bson::builder b;
  for (const auto& e : cmd) b.append_element(e);
  b.append_document("$readPreference", preference);
  return std::move(b).extract();
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
  // Optional: a default document allocates, and most commands carry no $readPreference.
  std::optional<bson::document> with_preference;
  if (l.read_preference) {
    with_preference = with_read_preference(cmd, l.read_preference->view());
    cmd = with_preference->view();
  }
  command_monitor events(l.state->events.on_command, *l, l.address, db, cmd, sequences);
  auto reply = l->run_view(db, cmd, sequences);
  if (!reply) {
    auto f = failure(reply.error().code, transport_message(reply.error(), *l));
    application_error e;
    e.kind = reply.error().code == errc::timeout ? error_kind::timeout : error_kind::network;
    e.message = f.message;
    report(l, std::move(e));
    events.failed(f.message);
    return f;
  }
  if (!is_ok(*reply)) {
    const auto first = cmd.begin();
    auto f = failure_of(*reply, first == cmd.end() ? "command" : first->key());
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
  command_monitor events(l.state->events.on_command, *l, l.address, db, cmd, sequences);
  if (auto sent = l->send_unacknowledged(db, cmd, sequences); !sent) {
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
