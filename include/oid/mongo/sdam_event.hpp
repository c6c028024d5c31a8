// oid/mongo/sdam_event.hpp: the events of server discovery and monitoring, as values.
//
// The client's SDAM state machine returns the events each change implies, in the
// order the monitoring specification publishes them; the client hands them to the application's
// listeners. Heartbeat events come from the monitors, which the state machine does not see.
#pragma once

#include <chrono>
#include <oid/bson/document.hpp>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/topology_description.hpp>
#include <string>
#include <variant>

namespace oid::mongo {

/// The topology was created (published first, once).
struct topology_opening_event {};
/// The topology was closed (published last, once: after each server's closing and the topology's
/// change to an Unknown description without servers).
struct topology_closed_event {};
/// The topology description changed.
struct topology_description_changed_event {
  topology_description previous, current;
};
/// A server was added to the topology.
struct server_opening_event {
  std::string address;
};
/// A server was removed from the topology.
struct server_closed_event {
  std::string address;
};
/// A server's description changed (by `server_description` equality).
struct server_description_changed_event {
  std::string address;
  server_description previous, current;
};

/// A monitor is about to check a server (send `hello`, opening a connection first if needed).
struct server_heartbeat_started_event {
  std::string address;
};
/// A monitor's check succeeded.
struct server_heartbeat_succeeded_event {
  std::string address;
  std::chrono::microseconds duration{0};
  bson::document reply;  ///< the `hello` reply
};
/// A monitor's check failed.
struct server_heartbeat_failed_event {
  std::string address;
  std::chrono::microseconds duration{0};
  std::string failure;  ///< what went wrong, naming the server
};

/// One SDAM event. The state machine returns the first six; monitors publish the heartbeats.
using sdam_event =
    std::variant<topology_opening_event, topology_closed_event, topology_description_changed_event,
                 server_opening_event, server_closed_event, server_description_changed_event,
                 server_heartbeat_started_event, server_heartbeat_succeeded_event,
                 server_heartbeat_failed_event>;

}  // namespace oid::mongo
