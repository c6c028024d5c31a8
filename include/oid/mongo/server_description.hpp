// oid/mongo/server_description.hpp: what the client knows about one server of a deployment.
//
// A `server_description` is a value made from one `hello` reply (`from_hello`) or from a failed
// check (`unknown`), as the Server Discovery and Monitoring specification defines it: the server's
// type, its replica set membership, the members it reports, its wire versions and the times the
// staleness rules need. Addresses are "host:port", lower case (`normalize_address`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <oid/bson/view.hpp>
#include <oid/objectid/object_id.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo {

/// What a server is, as its `hello` reply says (SDAM's ServerType).
enum class server_type {
  unknown,           ///< not checked yet, or the last check failed
  standalone,        ///< a mongod that is not a replica set member
  mongos,            ///< a router of a sharded cluster (`msg: "isdbgrid"`)
  possible_primary,  ///< not checked yet, but a member named it the primary
  rs_primary,        ///< the writable member of a replica set
  rs_secondary,      ///< a readable member of a replica set
  rs_arbiter,        ///< a voting member with no data
  rs_other,          ///< a member that is neither (hidden, starting up, recovering, ...)
  rs_ghost,          ///< a replica set member without a configuration yet (`isreplicaset: true`)
  load_balancer,     ///< a load balancer in front of mongos servers (`loadBalanced=true`)
};

/// The specification's name of `t`: "Unknown", "Standalone", "Mongos", "PossiblePrimary",
/// "RSPrimary", "RSSecondary", "RSArbiter", "RSOther", "RSGhost", "LoadBalancer".
std::string_view to_string(server_type t) noexcept;

/// A server's `topologyVersion`: its process and a counter that grows with each state change.
struct topology_version {
  object_id process_id;
  std::int64_t counter = 0;
  friend bool operator==(const topology_version&, const topology_version&) = default;
};

/// True when `a` is older than `b`: same process and a smaller counter. A missing version, or
/// another process, is never older (the server restarted, so its news is new).
bool is_older(const std::optional<topology_version>& a,
              const std::optional<topology_version>& b) noexcept;

/// "host:port" in lower case, with the default port 27017 added when `address` has none
/// ("A" -> "a:27017", "[::1]" -> "[::1]:27017").
std::string normalize_address(std::string_view address);

/// The most servers a topology holds, and so the most monitor threads (and pools, each with its
/// maintenance thread) a client runs. A replica set has at most 50 members, and srvMaxHosts
/// exists for the clusters with more mongos than a client should watch. Hosts listed past it (in
/// the connection string, a hello's member lists or the SRV records) are ignored, and
/// `topology_description::ignored_hosts` says so; a hello's member lists keep this many each.
inline constexpr std::size_t max_servers = 100;

/// One server as the client last saw it.
struct server_description {
  std::string address;  ///< "host:port", lower case
  server_type type = server_type::unknown;
  std::optional<std::string> error;  ///< why the last check or operation failed, if it did

  std::optional<double> round_trip_time_ms;     ///< the average round trip time of the checks
  std::int64_t last_update_time_ms = 0;         ///< when the check ended, on the caller's clock
  std::optional<std::int64_t> last_write_date;  ///< `lastWrite.lastWriteDate`, ms since the epoch

  std::int32_t min_wire_version = 0;
  std::int32_t max_wire_version = 0;
  std::optional<std::string> me;  ///< the address the server calls itself, lower case
  std::vector<std::string> hosts, passives, arbiters;  ///< the members it reports, lower case
  /// Members the reply listed past the first `max_servers` of a list, not kept.
  std::size_t dropped_members = 0;
  std::map<std::string, std::string> tags;
  std::optional<std::string> set_name;
  std::optional<std::int64_t> set_version;
  std::optional<object_id> election_id;
  std::optional<std::string> primary;  ///< the member it believes is primary, lower case
  std::optional<std::int64_t> logical_session_timeout_minutes;
  std::optional<mongo::topology_version> topology_version;

  /// The description of a server that was not checked yet, or whose check failed with `error`.
  static server_description unknown(std::string address,
                                    std::optional<std::string> error = std::nullopt);

  /// The description a `hello` (or legacy `isMaster`) reply gives, taken `rtt_ms` after the
  /// check began and ending at `now_ms` on the caller's clock. A reply without `ok: 1` gives an
  /// Unknown server whose error is the reply's `errmsg`. Fields of the wrong type are ignored, as
  /// if absent. `round_trip_time_ms` is `rtt_ms` as given: averaging is `average_rtt`'s job.
  static server_description from_hello(std::string_view address, bson::document_view reply,
                                       double rtt_ms, std::int64_t now_ms = 0);

  /// True for the types that hold data: Standalone, Mongos, RSPrimary, RSSecondary, LoadBalancer.
  bool is_data_bearing() const noexcept;
  /// True for any type but Unknown and PossiblePrimary (the server answered a check).
  bool is_known() const noexcept {
    return type != server_type::unknown && type != server_type::possible_primary;
  }

  /// The specification's "server description equality": every field but the round trip time and
  /// the times of the last check and last write. Used to publish only real changes.
  friend bool operator==(const server_description& a, const server_description& b) noexcept;
};

/// The average round trip time after a new sample: the sample itself when there is no average
/// yet, else 0.2 * sample + 0.8 * average (an exponentially weighted moving average).
double average_rtt(std::optional<double> average_ms, double sample_ms) noexcept;

}  // namespace oid::mongo
