// Reading a hello reply into a server_description, and the equality the events rely on.
#include <oid/mongo/server_description.hpp>

#include "detail/ascii.hpp"
#include "mongo/wire/reply.hpp"

namespace oid::mongo {

namespace {

std::optional<std::string> optional_string(bson::document_view doc, std::string_view key) {
  const auto e = doc.find(key);
  if (!e) return std::nullopt;
  if (auto s = e->get_string()) return std::string(*s);
  return std::nullopt;
}

std::optional<std::int64_t> optional_integer(bson::document_view doc, std::string_view key) {
  const auto e = doc.find(key);
  if (!e) return std::nullopt;
  return detail::as_integer(*e);
}

// The first max_servers addresses of the array `key`; those past them are counted in `dropped`.
// A hello of 48 MB can list two million hosts, and every description is copied into events.
std::vector<std::string> address_list(bson::document_view doc, std::string_view key,
                                      std::size_t& dropped) {
  std::vector<std::string> out;
  const auto e = doc.find(key);
  if (!e) return out;
  const auto a = e->get_array();
  if (!a) return out;
  for (const auto& item : *a) {
    if (auto s = item.get_string()) {
      if (out.size() < max_servers) {
        out.push_back(normalize_address(*s));
      } else {
        ++dropped;
      }
    }
  }
  return out;
}

std::optional<topology_version> topology_version_of(bson::document_view doc) {
  const auto e = doc.find("topologyVersion");
  if (!e) return std::nullopt;
  const auto d = e->get_document();
  if (!d) return std::nullopt;
  const auto pid = d->find("processId");
  const auto counter = d->find("counter");
  if (!pid || !counter) return std::nullopt;
  const auto id = pid->get_object_id();
  const auto n = detail::as_integer(*counter);
  if (!id || !n) return std::nullopt;
  return topology_version{*id, *n};
}

server_type type_of(bson::document_view reply, bool has_set_name) {
  if (!detail::is_ok(reply)) return server_type::unknown;
  if (detail::bool_field(reply, "isreplicaset", false)) return server_type::rs_ghost;
  if (detail::string_field(reply, "msg") == "isdbgrid") return server_type::mongos;
  if (!has_set_name) return server_type::standalone;
  if (detail::bool_field(reply, "hidden", false)) return server_type::rs_other;
  if (detail::bool_field(reply, "isWritablePrimary", false) ||
      detail::bool_field(reply, "ismaster", false)) {
    return server_type::rs_primary;
  }
  if (detail::bool_field(reply, "secondary", false)) return server_type::rs_secondary;
  if (detail::bool_field(reply, "arbiterOnly", false)) return server_type::rs_arbiter;
  return server_type::rs_other;
}

}  // namespace

std::string_view to_string(server_type t) noexcept {
  switch (t) {
  case server_type::unknown: return "Unknown";
  case server_type::standalone: return "Standalone";
  case server_type::mongos: return "Mongos";
  case server_type::possible_primary: return "PossiblePrimary";
  case server_type::rs_primary: return "RSPrimary";
  case server_type::rs_secondary: return "RSSecondary";
  case server_type::rs_arbiter: return "RSArbiter";
  case server_type::rs_other: return "RSOther";
  case server_type::rs_ghost: return "RSGhost";
  case server_type::load_balancer: return "LoadBalancer";
  }
  return "Unknown";
}

bool is_older(const std::optional<topology_version>& a,
              const std::optional<topology_version>& b) noexcept {
  if (!a || !b || a->process_id != b->process_id) return false;
  return a->counter < b->counter;
}

server_description server_description::unknown(std::string address,
                                               std::optional<std::string> error) {
  server_description d;
  d.address = std::move(address);
  d.error = std::move(error);
  return d;
}

server_description server_description::from_hello(std::string_view address,
                                                  bson::document_view reply, double rtt_ms,
                                                  std::int64_t now_ms) {
  server_description d;
  d.address = normalize_address(address);
  d.last_update_time_ms = now_ms;
  d.set_name = optional_string(reply, "setName");
  d.type = type_of(reply, d.set_name.has_value());
  if (d.type == server_type::unknown) {
    // A reply without ok: 1 says nothing about the server but that the check failed.
    const std::string why = detail::string_field(reply, "errmsg");
    return unknown(d.address, why.empty() ? "hello failed" : "hello failed: " + why);
  }
  d.round_trip_time_ms = rtt_ms;
  d.min_wire_version = detail::int_field(reply, "minWireVersion", 0);
  d.max_wire_version = detail::int_field(reply, "maxWireVersion", 0);
  if (auto me = optional_string(reply, "me")) d.me = normalize_address(*me);
  d.hosts = address_list(reply, "hosts", d.dropped_members);
  d.passives = address_list(reply, "passives", d.dropped_members);
  d.arbiters = address_list(reply, "arbiters", d.dropped_members);
  if (const auto t = reply.find("tags")) {
    if (auto doc = t->get_document()) {
      for (const auto& tag : *doc) {
        if (auto s = tag.get_string()) d.tags.emplace(std::string(tag.key()), std::string(*s));
      }
    }
  }
  d.set_version = optional_integer(reply, "setVersion");
  if (const auto e = reply.find("electionId")) {
    if (auto id = e->get_object_id()) d.election_id = *id;
  }
  if (auto p = optional_string(reply, "primary")) d.primary = normalize_address(*p);
  d.logical_session_timeout_minutes = detail::session_timeout_minutes(reply);
  d.topology_version = topology_version_of(reply);
  if (const auto w = reply.find("lastWrite")) {
    if (auto doc = w->get_document()) {
      if (const auto date = doc->find("lastWriteDate")) {
        if (auto ms = date->get_date_time()) {
          d.last_write_date = *ms;
        } else {
          d.last_write_date = detail::as_integer(*date);
        }
      }
    }
  }
  return d;
}

bool server_description::is_data_bearing() const noexcept {
  switch (type) {
  case server_type::standalone:
  case server_type::mongos:
  case server_type::rs_primary:
  case server_type::rs_secondary:
  case server_type::load_balancer: return true;
  default: return false;
  }
}

bool operator==(const server_description& a, const server_description& b) noexcept {
  return a.address == b.address && a.type == b.type && a.error == b.error &&
         a.min_wire_version == b.min_wire_version && a.max_wire_version == b.max_wire_version &&
         a.me == b.me && a.hosts == b.hosts && a.passives == b.passives &&
         a.arbiters == b.arbiters && a.dropped_members == b.dropped_members && a.tags == b.tags &&
         a.set_name == b.set_name && a.set_version == b.set_version &&
         a.election_id == b.election_id && a.primary == b.primary &&
         a.logical_session_timeout_minutes == b.logical_session_timeout_minutes &&
         a.topology_version == b.topology_version;
}

double average_rtt(std::optional<double> average_ms, double sample_ms) noexcept {
  if (!average_ms) return sample_ms;
  return 0.2 * sample_ms + 0.8 * *average_ms;
}

}  // namespace oid::mongo
