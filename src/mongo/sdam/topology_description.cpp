// The topology description's names, lookups and the equality the events rely on.
#include <oid/mongo/topology_description.hpp>

namespace oid::mongo {

std::string_view to_string(topology_type t) noexcept {
  switch (t) {
  case topology_type::unknown: return "Unknown";
  case topology_type::single: return "Single";
  case topology_type::replica_set_no_primary: return "ReplicaSetNoPrimary";
  case topology_type::replica_set_with_primary: return "ReplicaSetWithPrimary";
  case topology_type::sharded: return "Sharded";
  case topology_type::load_balanced: return "LoadBalanced";
  }
  return "Unknown";
}

const server_description* topology_description::find(std::string_view address) const {
  const auto it = servers.find(normalize_address(address));
  return it == servers.end() ? nullptr : &it->second;
}

std::uint64_t topology_description::pool_generation(std::string_view address) const {
  const auto it = pool_generations.find(normalize_address(address));
  return it == pool_generations.end() ? 0 : it->second;
}

bool topology_description::has_primary() const noexcept {
  for (const auto& [address, server] : servers) {
    if (server.type == server_type::rs_primary) return true;
  }
  return false;
}

bool operator==(const topology_description& a, const topology_description& b) noexcept {
  return a.type == b.type && a.set_name == b.set_name && a.max_set_version == b.max_set_version &&
         a.max_election_id == b.max_election_id && a.servers == b.servers &&
         a.compatible == b.compatible && a.compatibility_error == b.compatibility_error &&
         a.logical_session_timeout_minutes == b.logical_session_timeout_minutes &&
         a.ignored_hosts == b.ignored_hosts;
}

}  // namespace oid::mongo
