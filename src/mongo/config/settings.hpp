// Private: the rules a client's settings obey, whichever way they were made: parsed from a
// connection string (uri.cpp's parser, which points its failures at the text) or filled in code
// (`uri::from`). One place, so the two ways cannot drift apart.
#pragma once

#include <oid/mongo/client_settings.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace oid::mongo::settings {

/// What is wrong, said with the connection string's option names.
struct problem {
  std::string message;
  bool about_password = false;  ///< the parser points at the password rather than the options
  errc code = errc::invalid_uri;
};

/// The read preference that the settings make (mode, tag sets, max staleness).
read_preference read_preference_of(const client_settings& s);

/// Whether oid authenticates with mechanism `m`: unsupported for a mechanism MongoDB defines and
/// oid does not implement (GSSAPI, MONGODB-AWS, MONGODB-OIDC), invalid_uri with what is expected
/// (no option name) for any other unknown name.
std::optional<problem> check_mechanism(std::string_view m);

/// RFC 6335's service names, as srvServiceName takes them: letters, digits and inner single
/// hyphens, at least one letter, at most 62 characters (so that `_name` is one DNS label).
bool is_service_name(std::string_view name);

/// What a positive srvMaxHosts contradicts ("replicaSet", "loadBalanced=true"), or nullptr.
const char* srv_max_hosts_conflict(const client_settings& s);

/// The rules of mongodb+srv:// on the options: without `srv_name`, no srvServiceName or
/// srvMaxHosts; with it, no directConnection=true and no srvMaxHosts beside replicaSet or
/// loadBalanced=true. On success with `srv_name`: the name lower-cased, and TLS on unless `tls`
/// is false. (The connection string's own form, one host without a port, the parser checks.)
std::optional<problem> check_srv(client_settings& s);

/// The options that contradict each other, the hosts or the credential; on success the TLS
/// options are normalized (tlsInsecure sets both allowances, any TLS option asks for TLS unless
/// `tls` is false). `mode` strict also refuses a read preference that cannot be met.
std::optional<problem> check_combinations(client_settings& s, uri_mode mode);

/// The deployment options against each other and the hosts (loadBalanced, the read preference).
std::optional<problem> check_deployment(const client_settings& s, uri_mode mode);

/// What a connection string's syntax guarantees and code may get wrong: the hosts (at least one,
/// or `srv_name` alone; names a host can have; no port 0), and each value in its range
/// (timeouts from 0 to 2^31-1 ms, heartbeatFrequencyMS from 500, maxConnecting from 1, appName
/// at most 128 bytes, w from 0 and not both a number and a name, a known mechanism, ...). On
/// success, `srv_name` is lower-cased and turns TLS on unless `tls` is false, as
/// mongodb+srv:// does.
std::optional<problem> check_values(client_settings& s);

}  // namespace oid::mongo::settings
