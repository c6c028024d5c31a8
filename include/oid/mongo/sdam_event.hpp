// oid/mongo/sdam_event.hpp: the events of server discovery and monitoring, as values.
//
// The SDAM state machine (`oid/mongo/sdam.hpp`) returns the events each change implies, in the
// order the monitoring specification publishes them; the client hands them to the application's
// listeners. Heartbeat events come from the monitors, which the state machine does not see.
#pragma once

#include <oid/mongo/server_description.hpp>
#include <oid/mongo/topology_description.hpp>
#include <string>
#include <variant>

namespace oid::mongo {

/// The topology was created (published first, once).
struct topology_opening_event {};
/// The topology was closed (published last, once).
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

/// One SDAM event.
using sdam_event =
    std::variant<topology_opening_event, topology_closed_event, topology_description_changed_event,
                 server_opening_event, server_closed_event, server_description_changed_event>;

}  // namespace oid::mongo
