// Server discovery and monitoring as pure functions (private: the live topology in cluster/ and
// the SDAM specification tests use it).
//
// Each function takes the current `topology_description` and one thing that happened (a check's
// `hello` reply, a failed check, an operation's error) and returns the next description with the
// events the change implies and what the caller must do about pools and monitors. No I/O, no
// clock, no randomness: the specification's test suites run against these functions directly.
// The rules are those of the Server Discovery and Monitoring specification ("Updating the
// TopologyDescription", "Error handling").
//
//     auto t = oid::mongo::open_topology({.seeds = {"a:27017", "b:27017"}, .replica_set = "rs"});
//     t = oid::mongo::apply_hello(t.description, "a:27017", reply, 1.5);
//     // t.description.type == topology_type::replica_set_with_primary, t.events says what changed
#pragma once

#include <cstdint>
#include <oid/bson/view.hpp>
#include <oid/mongo/sdam_event.hpp>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/topology_description.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace oid::mongo {

/// The next description and what the change means for the caller.
struct topology_update {
  topology_description description;
  /// The events to publish, in order.
  std::vector<sdam_event> events;
  /// Servers whose connection pools must be cleared (their generation was incremented).
  std::vector<std::string> cleared_pools;
  /// Servers whose monitors should check now rather than at the next heartbeat.
  std::vector<std::string> check_now;
};

/// The first description of a deployment: Single with `direct_connection`, LoadBalanced with
/// `load_balanced` (its one server is a LoadBalancer from the start), ReplicaSetNoPrimary with a
/// `replica_set` name, else Unknown; every seed an Unknown server with pool generation 0. The
/// events are the topology's opening, its first description and each server's opening.
topology_update open_topology(const topology_settings& settings);

/// Why the known server `server` (at `address`) cannot be used: its minWireVersion is above its
/// maxWireVersion, above `max_supported_wire_version`, or its maxWireVersion below
/// `min_supported_wire_version`; nothing when its range overlaps oid's. What makes a topology
/// incompatible, and what an unmonitored (direct or load-balanced) connection's hello is checked
/// with.
std::optional<std::string> wire_version_problem(std::string_view address,
                                                const server_description& server);

/// Applies a successful check of `address`: `reply` is its `hello` reply, `rtt_ms` the check's
/// round trip time (averaged with the server's previous average), `now_ms` the caller's clock.
/// A reply from a server no longer in the topology, or with an older topologyVersion than the
/// server's current one, changes nothing.
topology_update apply_hello(const topology_description& current, std::string_view address,
                            bson::document_view reply, double rtt_ms, std::int64_t now_ms = 0);

/// Applies a failed check of `address` (a network error or timeout, described by `error`): the
/// server becomes Unknown and its pool is cleared.
topology_update apply_check_failure(const topology_description& current, std::string_view address,
                                    std::string_view error);

/// Applies a rescan of a mongodb+srv:// name's SRV records (SRV polling): `addresses` are the
/// hosts DNS lists now, as chosen under srvMaxHosts. Only a Sharded or Unknown topology changes:
/// servers no longer listed are removed, new ones added as Unknown (pool generation 0), and the
/// others keep their description. An empty list changes nothing (a rescan that found no valid
/// record keeps the hosts it has). The events are the servers' opening and closing, then the
/// topology's change.
topology_update apply_srv_hosts(const topology_description& current,
                                const std::vector<std::string>& addresses);

/// Applies a new description of one of the servers (what `apply_hello` and `apply_check_failure`
/// build), following the specification's table for the topology's type and the server's type.
topology_update apply_server_description(const topology_description& current,
                                         server_description description);

/// When an application operation's error happened.
enum class error_phase {
  before_handshake,  ///< while a new connection was being set up (handshake, authentication)
  after_handshake,   ///< on an established connection
};

/// What kind of error an application operation met.
enum class error_kind {
  network,  ///< a network error other than a timeout
  timeout,  ///< a network timeout
  command,  ///< the server answered with an error (`reply`)
};

/// An error an application operation met on a connection to `address`.
struct application_error {
  std::string address;
  /// The pool generation of the connection; unset means the pool's current generation.
  std::optional<std::uint64_t> generation;
  /// The connection's `maxWireVersion` (below 8, a "not writable primary" error clears the pool).
  std::int32_t max_wire_version = 0;
  error_phase phase = error_phase::after_handshake;
  error_kind kind = error_kind::network;
  /// For `error_kind::command`: the reply (top-level `code`/`errmsg`/`topologyVersion`, or a
  /// `writeConcernError`; `writeErrors` do not concern SDAM).
  bson::document_view reply;
  /// A description of the error for the server's description (no secrets).
  std::string message;
};

/// True for the server error codes that mean "not writable primary": 10107, 13435, 10058.
bool is_not_writable_primary_code(std::int32_t code) noexcept;
/// True for the server error codes that mean "node is recovering": 11600, 11602, 13436, 189, 91.
bool is_node_recovering_code(std::int32_t code) noexcept;
/// True for the codes that mean the server is shutting down: 11600, 91.
bool is_shutdown_code(std::int32_t code) noexcept;

/// Applies an application error, as the specification's error handling says: an error from a
/// connection of an older pool generation changes nothing; a network error (or a timeout before
/// the handshake completed) marks the server Unknown and clears its pool; a state change error
/// ("not writable primary", "node is recovering", by code, or by message when there is no code)
/// that is not older than the server's topologyVersion marks it Unknown, asks for a check, and
/// clears the pool when the server is shutting down or older than 4.2; other errors change
/// nothing (a handshake's other errors, such as authentication, mark it Unknown and clear the
/// pool).
topology_update apply_application_error(const topology_description& current,
                                        const application_error& error);

}  // namespace oid::mongo
