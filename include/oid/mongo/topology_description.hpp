// oid/mongo/topology_description.hpp: what the client knows about a whole deployment.
//
// A `topology_description` is a value: the deployment's type (a standalone server, a replica set
// with or without a primary, a sharded cluster, a load balancer), the servers in it, the replica
// set's name and newest election, whether oid can talk to every server, and the pool generation
// of each server (the count of times its connections were discarded). The client's SDAM state
// machine makes the next one from this one and an event (a check's reply or an error).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <oid/mongo/server_description.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo {

/// The kind of deployment (SDAM's TopologyType).
enum class topology_type {
  unknown,                   ///< not known yet: servers are being discovered
  single,                    ///< one server, used directly (`directConnection=true`)
  replica_set_no_primary,    ///< a replica set whose primary is not known
  replica_set_with_primary,  ///< a replica set with a known primary
  sharded,                   ///< mongos routers
  load_balanced,             ///< a load balancer (`loadBalanced=true`)
};

/// The specification's name of `t`: "Unknown", "Single", "ReplicaSetNoPrimary",
/// "ReplicaSetWithPrimary", "Sharded", "LoadBalanced".
std::string_view to_string(topology_type t) noexcept;

/// The wire versions oid speaks: a server whose range does not overlap is incompatible.
inline constexpr std::int32_t min_supported_wire_version = 6;   // MongoDB 3.6 (OP_MSG)
inline constexpr std::int32_t max_supported_wire_version = 27;  // MongoDB 8.2

/// What the connection string says about the deployment (seeds and the SDAM options).
struct topology_settings {
  std::vector<std::string> seeds;          ///< "host:port" as written (normalized on use)
  std::optional<std::string> replica_set;  ///< `replicaSet`
  std::optional<bool> direct_connection;   ///< `directConnection`; unset means false
  bool load_balanced = false;              ///< `loadBalanced`
};

/// A deployment as the client last saw it.
struct topology_description {
  topology_type type = topology_type::unknown;
  std::optional<std::string> set_name;
  std::optional<std::int64_t> max_set_version;
  std::optional<object_id> max_election_id;
  /// The servers by address ("host:port", lower case).
  std::map<std::string, server_description, std::less<>> servers;
  /// Each server's pool generation; a server's entry exists exactly when the server does.
  std::map<std::string, std::uint64_t, std::less<>> pool_generations;
  /// False when some server's wire versions do not overlap oid's; `compatibility_error` says which.
  bool compatible = true;
  std::optional<std::string> compatibility_error;
  /// The smallest `logicalSessionTimeoutMinutes` of the data-bearing servers; unset when there is
  /// none or one of them does not support sessions.
  std::optional<std::int64_t> logical_session_timeout_minutes;
  /// Why hosts that were listed are not in `servers`: set when the last list of hosts taken in
  /// (the seeds, a member's hello, a rescan of the SRV records) named more than `max_servers`
  /// servers; says how many were ignored and who listed them. Cleared by the next list that fits.
  std::optional<std::string> ignored_hosts;
  /// The settings it was made with (the number of seeds decides what a standalone reply means).
  topology_settings settings;

  /// The server at `address` (normalized), or null.
  const server_description* find(std::string_view address) const;
  /// The pool generation of the server at `address` (normalized), 0 when it is not in the topology.
  std::uint64_t pool_generation(std::string_view address) const;
  /// True when some server is an RSPrimary.
  bool has_primary() const noexcept;

  /// Same type, set name, election, servers (by `server_description` equality), compatibility,
  /// session timeout and ignored hosts: what decides whether a change is published. Pool
  /// generations and settings are not compared.
  friend bool operator==(const topology_description& a, const topology_description& b) noexcept;
};

}  // namespace oid::mongo
