// oid/mongo/srv.hpp: `mongodb+srv://` connection strings, by MongoDB's initial DNS seedlist
// discovery specification, and the rescan of its SRV polling specification.
//
// `uri::parse("mongodb+srv://NAME/...")` checks the string; `resolve_srv` then asks DNS for the
// SRV records `_{srvServiceName}._tcp.NAME` (the hosts and ports) and the TXT record of NAME
// (default options), and returns the uri the client uses as if it had been written
// `mongodb://HOST:PORT,.../...?OPTIONS&tls=true`. `client::create` calls it for a mongodb+srv://
// uri that has not been resolved yet.
//
// The lookups go through glibc's stub resolver (libresolv, res_nquery), which asks the name
// servers of /etc/resolv.conf. The environment variable OID_DNS_SERVER=IPV4[:PORT] (port 53 by
// default) makes it ask that one server instead; the tests point it at their own DNS server on
// loopback (scripts/dns-server.sh).
#pragma once

#include <chrono>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/uri.hpp>
#include <vector>

namespace oid::mongo {

/// Resolves a `mongodb+srv://` uri: its hosts become the SRV records' targets and ports (all of
/// them, or `srvMaxHosts` chosen at random; never more than `max_servers`, 100, chosen at random
/// as if srvMaxHosts were 100), the TXT record's options apply unless the connection
/// string gives the same option, and TLS is on unless the string says `tls=false`. The password,
/// `to_string()` and the srv accessors carry over; `srv_resolved()` is then true. A uri that is
/// not mongodb+srv://, or is already resolved, is returned as it is.
///
/// Failures: `errc::connection_failed` when a lookup fails (no such name, no SRV record, no
/// answer, a malformed answer, a bad OID_DNS_SERVER), naming the record and the server asked;
/// `errc::invalid_uri` when the records break the specification's rules: a target outside NAME's
/// domain (for a NAME of three or more labels, NAME without its first label; for one or two
/// labels, NAME itself, under which the target must lie) or not a plain host name, more than one
/// TXT record, a TXT option without '=' or other than authSource, replicaSet and loadBalanced,
/// a TXT option value the parser refuses, srvMaxHosts > 0 with replicaSet or loadBalanced=true
/// from the TXT record, and loadBalanced=true with more than one host or with replicaSet.
outcome<uri> resolve_srv(const uri& u);

/// What one rescan of the SRV records gives (SRV polling, for a sharded cluster reached through
/// mongodb+srv://).
struct srv_rescan {
  /// The hosts to monitor from now on: those of `current` that DNS still lists, then, up to
  /// `srvMaxHosts` (all when 0) and never past `max_servers` (100), new ones in random order.
  std::vector<host> hosts;
  /// The lowest TTL of the SRV records.
  std::chrono::seconds ttl{0};
  /// When to rescan: the TTL, but not sooner than 60 seconds.
  std::chrono::seconds rescan_after{0};
};

/// Looks up the SRV records of a mongodb+srv:// uri again (resolved or not) and merges them with
/// the hosts monitored now. Records whose target is outside the name's domain are dropped, as
/// the polling specification says. Failures (`errc::connection_failed`: the lookup failed or
/// left no valid record; `errc::invalid_uri`: `u` is not mongodb+srv://) mean "keep the current
/// hosts and try again after heartbeatFrequencyMS".
outcome<srv_rescan> rescan_srv(const uri& u, const std::vector<host>& current);

}  // namespace oid::mongo
