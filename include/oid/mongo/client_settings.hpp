// oid/mongo/client_settings.hpp: what configures a client, as plain fields.
//
// A connection string parses into a `client_settings` (`uri::parse`, then `uri::settings()`), and
// a program can fill one itself (or change a parsed one) and give it to `client::create` inside a
// `client_options` (oid/mongo/client.hpp), as mongocxx's `options::client` and the Go driver's
// `ClientOptions` allow. Both ways are checked by the same rules (`uri::from` for settings made in
// code): a contradiction or an impossible value is `errc::invalid_uri` naming the option.
//
// Every field but `hosts` is optional: unset means the driver's default, given beside each. The
// names are the connection string options' (connectTimeoutMS is `connect_timeout`).
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/secret.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oid::mongo {

/// One host of a deployment.
struct host {
  /// How the host was written.
  enum class kind {
    hostname,    ///< a DNS name (or anything that is not an IPv4 address)
    ipv4,        ///< a dotted-quad IPv4 address
    ip_literal,  ///< a bracketed IP literal such as `[::1]` (stored without the brackets)
    unix_socket  ///< a Unix domain socket path (stored decoded, e.g. `/tmp/mongodb-27017.sock`)
  };
  kind type = kind::hostname;
  /// The host name, address or socket path, percent-decoded.
  std::string name;
  /// The port when one was written; none for Unix sockets.
  std::optional<std::uint16_t> port;

  /// The port to connect to: the written one, or MongoDB's default 27017.
  std::uint16_t port_or_default() const noexcept { return port.value_or(27017); }
  friend bool operator==(const host&, const host&) = default;
};

/// A client's settings. See oid/mongo/uri.hpp for each option's meaning and default.
struct client_settings {
  // Where.
  /// The seed list: at least one host, or none with `srv_name`.
  std::vector<host> hosts;
  /// `mongodb+srv://NAME`: NAME, whose SRV records give the hosts and whose TXT record may give
  /// authSource, replicaSet and loadBalanced. Turns TLS on unless `tls` is false.
  std::optional<std::string> srv_name;
  std::optional<std::string> srv_service_name;  ///< srvServiceName (default "mongodb")
  std::optional<std::uint32_t> srv_max_hosts;   ///< srvMaxHosts (0: all)
  /// The database after the hosts (the default database and auth database).
  std::optional<std::string> database;

  // Who.
  std::optional<std::string> username;
  std::optional<secret> password;
  std::optional<std::string> auth_source;
  /// SCRAM-SHA-1, SCRAM-SHA-256, PLAIN or MONGODB-X509; none: negotiated SCRAM.
  std::optional<std::string> auth_mechanism;
  std::optional<std::vector<std::pair<std::string, std::string>>> auth_mechanism_properties;
  std::optional<std::string> app_name;  ///< appName (at most 128 bytes)

  // Timeouts.
  /// timeoutMS: the time one operation may take from start to finish, server selection, connection
  /// checkout and opening, every read and write and the retries included (0: no limit, but
  /// serverSelectionTimeoutMS and connectTimeoutMS still bound selection and opening). Unset: the
  /// legacy timeouts below apply; set, socketTimeoutMS, waitQueueTimeoutMS and wTimeoutMS are
  /// ignored and a timeout is always `errc::timeout`. Databases, collections and each operation
  /// may set their own.
  std::optional<std::chrono::milliseconds> timeout;
  std::optional<std::chrono::milliseconds> connect_timeout;           ///< default 10 s
  std::optional<std::chrono::milliseconds> socket_timeout;            ///< default 2 min
  std::optional<std::chrono::milliseconds> server_selection_timeout;  ///< default 30 s

  // Connection pools.
  std::optional<std::uint32_t> max_pool_size;                   ///< default 100 (0: no limit)
  std::optional<std::uint32_t> min_pool_size;                   ///< default 0
  std::optional<std::uint32_t> max_connecting;                  ///< default 2 (at least 1)
  std::optional<std::chrono::milliseconds> max_idle_time;       ///< default 0 (never)
  std::optional<std::chrono::milliseconds> wait_queue_timeout;  ///< default 0

  // Write concern.
  std::optional<std::int32_t> w_number;  ///< w as a number (0: unacknowledged)
  std::optional<std::string> w_tag;      ///< w as a name ("majority", a tag set)
  std::optional<bool> journal;
  std::optional<std::chrono::milliseconds> w_timeout;

  /// readConcernLevel: the read concern of the client's reads ("local", "majority", ...; see
  /// oid/mongo/read_concern.hpp). Unset: the server's default.
  std::optional<std::string> read_concern_level;

  // Behaviour.
  std::optional<bool> retry_writes;       ///< default true
  std::optional<bool> retry_reads;        ///< default true
  std::optional<bool> direct_connection;  ///< talk to the one host given, discover none
  std::optional<bool> load_balanced;      ///< the one host is a load balancer
  std::optional<std::string> replica_set;
  std::optional<std::vector<std::string>> compressors;  ///< parsed; oid sends none

  // Read preference.
  std::optional<read_mode> read_preference_mode;  ///< default primary
  std::optional<std::vector<tag_set>> read_preference_tags;
  std::optional<std::chrono::seconds> max_staleness;             ///< -1 or unset: no limit
  std::optional<std::chrono::milliseconds> local_threshold;      ///< default 15 ms
  std::optional<std::chrono::milliseconds> heartbeat_frequency;  ///< default 10 s, >= 500 ms

  // TLS.
  /// tls (or ssl). Any other TLS field asks for TLS too, unless this is false.
  std::optional<bool> tls;
  std::optional<std::string> tls_ca_file;               ///< none: the system's trust store
  std::optional<std::string> tls_crl_file;              ///< libmongoc's tlsCRLFile
  std::optional<std::string> tls_certificate_key_file;  ///< client certificate and key (PEM)
  std::optional<secret> tls_certificate_key_file_password;
  std::optional<bool> tls_allow_invalid_certificates;
  std::optional<bool> tls_allow_invalid_hostnames;
  std::optional<bool> tls_insecure;  ///< both of the above
  std::optional<bool> tls_disable_certificate_revocation_check;
  std::optional<bool> tls_disable_ocsp_endpoint_check;

  /// Sets every field that `over` sets (and `hosts` when `over` has any): settings from code over
  /// settings from a connection string. False when `over` sets nothing. (A new field goes into
  /// its list in settings.cpp too.)
  bool merge(const client_settings& over);
};

}  // namespace oid::mongo
