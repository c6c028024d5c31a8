// A server's address in its one form. SDAM keys its servers by `name`; descriptions, events and
// messages say `name`; the pool and the monitor connect to `host`. A connection string's or an
// SRV record's host becomes one with `of`; a name a server sent (hello's hosts, passives,
// arbiters, me, primary) with `parse`, which reads the same forms a connection string's host may
// take, so that no name is turned back into a host by any other way.
#pragma once

#include <oid/mongo/uri.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace oid::mongo::detail {

struct server_address {
  mongo::host host;  ///< where to connect (a seed's host as written)
  std::string name;  ///< "host:port" in lower case, "[::1]:27017", or the socket path

  /// The address of `h`: its name in lower case with its port (27017 when none is written), an
  /// IP literal in brackets, a Unix socket path as it is.
  static server_address of(const mongo::host& h);
  /// The address a server named: "host", "host:port", "[ip6]", "[ip6]:port" or a path ending in
  /// ".sock". Nothing for a name none of these forms reads (an empty host, a port that is not a
  /// number from 1 to 65535, a second ':' outside brackets).
  static std::optional<server_address> parse(std::string_view text);
};

}  // namespace oid::mongo::detail
