// SDAM's error handling: what an application operation's error does to the topology.
#include <oid/mongo/server_codes.hpp>

#include "mongo/sdam/sdam.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

namespace {

// The parts of a command error SDAM reads: the code (when there is one), the message and the
// topologyVersion, from the reply itself or from its writeConcernError.
struct command_error {
  std::optional<std::int32_t> code;
  std::string message;
  std::optional<topology_version> version;
};

std::optional<command_error> command_error_of(bson::document_view reply) {
  bson::document_view source = reply;
  if (detail::is_ok(reply)) {
    const auto wce = reply.find("writeConcernError");
    if (!wce) return std::nullopt;
    const auto d = wce->get_document();
    if (!d) return std::nullopt;
    source = *d;
  }
  command_error e;
  if (const auto c = source.find("code")) {
    if (auto n = detail::as_integer(*c)) e.code = static_cast<std::int32_t>(*n);
  }
  e.message = detail::string_field(source, "errmsg");
  // The reply's topologyVersion, which a writeConcernError carries at the top level too.
  for (const auto doc : {source, reply}) {
    const auto tv = doc.find("topologyVersion");
    if (!tv) continue;
    const auto d = tv->get_document();
    if (!d) continue;
    const auto pid = d->find("processId");
    const auto counter = d->find("counter");
    if (!pid || !counter) continue;
    const auto id = pid->get_object_id();
    const auto n = detail::as_integer(*counter);
    if (id && n) {
      e.version = topology_version{*id, *n};
      break;
    }
  }
  return e;
}

// "Not writable primary" or "node is recovering": by code when there is one, else by message
// (servers before 4.2 did not always send a code).
bool is_state_change(const command_error& e) {
  if (e.code) return is_not_writable_primary_code(*e.code) || is_node_recovering_code(*e.code);
  return e.message.find("node is recovering") != std::string::npos ||
         e.message.find("not master or secondary") != std::string::npos ||
         e.message.find("not master") != std::string::npos;
}

topology_update unchanged(const topology_description& current) { return {current, {}, {}, {}}; }

topology_update mark_unknown(const topology_description& current, const std::string& address,
                             std::string why, std::optional<topology_version> version,
                             bool clear_pool) {
  auto d = server_description::unknown(address, std::move(why));
  d.topology_version = version;
  topology_update u = apply_server_description(current, std::move(d));
  if (clear_pool) {
    if (auto it = u.description.pool_generations.find(address);
        it != u.description.pool_generations.end()) {
      ++it->second;
      u.cleared_pools.push_back(address);
    }
  }
  return u;
}

}  // namespace

bool is_not_writable_primary_code(std::int32_t code) noexcept {
  using namespace server_code;
  return code == not_writable_primary || code == not_primary_no_secondary_ok ||
         code == legacy_not_primary;
}

bool is_node_recovering_code(std::int32_t code) noexcept {
  using namespace server_code;
  return code == interrupted_at_shutdown || code == interrupted_due_to_repl_state_change ||
         code == not_primary_or_secondary || code == primary_stepped_down ||
         code == shutdown_in_progress;
}

bool is_shutdown_code(std::int32_t code) noexcept {
  return code == server_code::interrupted_at_shutdown || code == server_code::shutdown_in_progress;
}

topology_update apply_application_error(const topology_description& current,
                                        const application_error& error) {
  const std::string address = normalize_address(error.address);
  const auto* server = current.find(address);
  if (server == nullptr) return unchanged(current);
  // An error on a connection the pool has already discarded says nothing new.
  if (error.generation.value_or(current.pool_generation(address)) <
      current.pool_generation(address)) {
    return unchanged(current);
  }
  switch (error.kind) {
  case error_kind::timeout:
    // A timeout may only mean a slow operation: the server keeps its description.
    return unchanged(current);
  case error_kind::network:
    return mark_unknown(current, address, error.message.empty() ? "network error" : error.message,
                        std::nullopt, true);
  case error_kind::command: break;
  }
  const auto e = command_error_of(error.reply);
  if (!e) return unchanged(current);
  if (!is_state_change(*e)) {
    // Any other error while setting up a connection (authentication, say) makes the server
    // unusable until it is checked again.
    if (error.phase == error_phase::before_handshake) {
      return mark_unknown(current, address, e->message, std::nullopt, true);
    }
    return unchanged(current);
  }
  // A state change the server had already reported (its topologyVersion is not newer than the
  // one the client has) is old news.
  if (e->version && server->topology_version &&
      e->version->process_id == server->topology_version->process_id &&
      e->version->counter <= server->topology_version->counter) {
    return unchanged(current);
  }
  const bool shutting_down = e->code && is_shutdown_code(*e->code);
  topology_update u = mark_unknown(current, address, e->message, e->version,
                                   shutting_down || error.max_wire_version <= 7);
  u.check_now.push_back(address);
  return u;
}

}  // namespace oid::mongo
