// oid/mongo/uri.hpp: MongoDB connection strings.
//
// `uri::parse` reads
// `mongodb://[user[:password]@]host[:port][,host[:port]...][/[database]][?options]` as MongoDB's
// connection string specification says: several hosts, IP literals in brackets, Unix domain socket
// paths (percent-encoded, ending in ".sock"), percent-decoding of every part, and case-insensitive
// option names. It keeps the options oid uses as typed values; an option oid does not know is
// ignored with a warning that `uri::warnings()` collects. `mongodb+srv://NAME/...` is parsed and
// checked here (one host name, no port, TLS on unless `tls=false`); `resolve_srv`
// (oid/mongo/srv.hpp) then looks up NAME's SRV and TXT records, and `client::create` does that
// itself.
//
// Credentials follow MongoDB's authentication specification: the password is held in a `secret`
// (never in `to_string()` or any message), `auth_database()` is where the user is defined, and
// only the mechanisms oid implements (SCRAM-SHA-1, SCRAM-SHA-256, PLAIN, MONGODB-X509) are
// accepted: GSSAPI, MONGODB-AWS and MONGODB-OIDC are `errc::unsupported`.
//
// TLS options follow MongoDB's URI options specification: `tls` (or `ssl`), `tlsCAFile`,
// `tlsCertificateKeyFile`, `tlsCertificateKeyFilePassword` (a `secret`, like the password),
// `tlsAllowInvalidCertificates`, `tlsAllowInvalidHostnames`, `tlsInsecure`, and the two revocation
// options, with the combinations it forbids refused; and libmongoc's `tlsCRLFile`.
#pragma once

#include <chrono>
#include <cstdint>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/secret.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo {

/// One host of a connection string.
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

/// What to do with a known option whose value is invalid (e.g. `connectTimeoutMS=-2`).
enum class uri_mode {
  /// Reject the connection string (`errc::invalid_uri`), naming the option: a typo in a timeout
  /// should not silently fall back to the default. oid's default.
  strict,
  /// Ignore the option with a warning, as the connection string specification says drivers must.
  /// The specification's own tests run in this mode.
  lenient,
};

/// A parsed connection string. Unset optional fields mean "the driver's default".
class uri {
 public:
  /// Parses `text`. Failures (all `errc::invalid_uri` with the offset of the offending character):
  /// a scheme other than `mongodb://` or `mongodb+srv://`; no host; an empty host; a port that is
  /// not 1-65535; a host with an unescaped
  /// `/` or an unbracketed `:` too many; a socket path not ending in ".sock"; user information with
  /// `@`, a second `:` or a bad `%` escape; a database name with `/ \ space " $`; an option without
  /// `=`; contradictory options (`tls` and `ssl` disagreeing, `directConnection=true` with several
  /// hosts, `loadBalanced=true` with several hosts, `directConnection=true` or `replicaSet`, and
  /// in strict mode `readPreference=primary` with tags or maxStalenessSeconds); credentials the
  /// authentication specification refuses (an empty `authSource`, SCRAM or PLAIN without a user
  /// name, MONGODB-X509 with a password or an `authSource` other than
  /// `$external`, a malformed `authMechanismProperties`); and, in `uri_mode::strict`, a known
  /// option with an invalid value. An `authMechanism` oid does not implement (GSSAPI, MONGODB-AWS,
  /// MONGODB-OIDC) is `errc::unsupported`, in either mode. The failure's
  /// `message` says what is wrong, naming the option where there is one, and its `offset` where.
  /// `mongodb+srv://` (no DNS lookup here: see oid/mongo/srv.hpp) also fails with more than one
  /// host, a port, an IP literal or socket path, `directConnection=true`, or a positive
  /// `srvMaxHosts` with `replicaSet` or `loadBalanced=true`; `srvServiceName` and `srvMaxHosts`
  /// are refused in a `mongodb://` string.
  ///
  ///   auto u = oid::mongo::uri::parse("mongodb://127.0.0.1:27017/app?appName=demo");
  ///   if (!u) std::cerr << u.error().message << " at " << u.error().offset << '\n';
  static outcome<uri> parse(std::string_view text, uri_mode mode = uri_mode::strict);

  /// The hosts in the order written (at least one).
  const std::vector<host>& hosts() const noexcept { return hosts_; }
  /// The user name, decoded, when user information was given.
  const std::optional<std::string>& username() const noexcept { return username_; }
  /// The password, decoded, when one was given (possibly empty: `user:@host`).
  const std::optional<secret>& password() const noexcept { return password_; }
  /// Sets the password (read from a terminal, say, when the connection string has none).
  void set_password(secret password) { password_ = std::move(password); }
  /// The database after the hosts, decoded (the default database and auth database).
  const std::optional<std::string>& database() const noexcept { return database_; }
  /// One line per ignored option: unknown, repeated, empty or (lenient mode) invalid.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

  // Options. Names follow the specification; values are as written.
  /// `appName`: sent to the server in the handshake (at most 128 bytes).
  const std::optional<std::string>& app_name() const noexcept { return app_name_; }
  /// `connectTimeoutMS`: time allowed to open a connection (0 = no limit). Default 10 s.
  const std::optional<std::chrono::milliseconds>& connect_timeout() const noexcept {
    return connect_timeout_;
  }
  /// `socketTimeoutMS`: time allowed for a read or write on a connection (0 = no limit).
  const std::optional<std::chrono::milliseconds>& socket_timeout() const noexcept {
    return socket_timeout_;
  }
  /// `serverSelectionTimeoutMS`: time allowed to find a server that answers. Default 30 s.
  const std::optional<std::chrono::milliseconds>& server_selection_timeout() const noexcept {
    return server_selection_timeout_;
  }
  /// `maxPoolSize`: most connections open at once to each server, lent out, idle or being
  /// opened (0 = no limit). Default 100.
  const std::optional<std::uint32_t>& max_pool_size() const noexcept { return max_pool_size_; }
  /// `minPoolSize`: connections each server's pool opens in the background and keeps open.
  /// Default 0; more than a nonzero maxPoolSize is refused.
  const std::optional<std::uint32_t>& min_pool_size() const noexcept { return min_pool_size_; }
  /// `maxConnecting`: most connections being opened at once to each server (at least 1).
  /// Default 2.
  const std::optional<std::uint32_t>& max_connecting() const noexcept { return max_connecting_; }
  /// `maxIdleTimeMS`: an idle pooled connection older than this is closed (0 = never). Default 0.
  const std::optional<std::chrono::milliseconds>& max_idle_time() const noexcept {
    return max_idle_time_;
  }
  /// `waitQueueTimeoutMS`: longest wait for a connection when a pool is at maxPoolSize (0 = only
  /// the operation's own limit, serverSelectionTimeoutMS). Default 0.
  const std::optional<std::chrono::milliseconds>& wait_queue_timeout() const noexcept {
    return wait_queue_timeout_;
  }
  /// `w` as written when it is a number (`w=0`, `w=1`, ...).
  const std::optional<std::int32_t>& w_number() const noexcept { return w_number_; }
  /// `w` as written when it is not a number (`w=majority`, a tag set name).
  const std::optional<std::string>& w_tag() const noexcept { return w_tag_; }
  /// `journal`: ask for acknowledgement after the journal is written.
  const std::optional<bool>& journal() const noexcept { return journal_; }
  /// `wTimeoutMS`: how long the server may wait for the write concern.
  const std::optional<std::chrono::milliseconds>& w_timeout() const noexcept { return w_timeout_; }
  /// `authSource`: the database that holds the user's credentials.
  const std::optional<std::string>& auth_source() const noexcept { return auth_source_; }
  /// `authMechanism`, as written: SCRAM-SHA-1, SCRAM-SHA-256, PLAIN or MONGODB-X509.
  const std::optional<std::string>& auth_mechanism() const noexcept { return auth_mechanism_; }
  /// `authMechanismProperties` (`KEY:value,KEY:value`), in the order written, values decoded.
  /// Parsed for completeness: none of oid's mechanisms uses one.
  const std::optional<std::vector<std::pair<std::string, std::string>>>& auth_mechanism_properties()
      const noexcept {
    return auth_mechanism_properties_;
  }
  /// True when the connection string asks for authentication: a user name, or MONGODB-X509.
  bool has_credential() const noexcept {
    return username_.has_value() || auth_mechanism_ == "MONGODB-X509";
  }
  /// The database that holds the user's credentials: `authSource` when given; `$external` for
  /// MONGODB-X509; otherwise the connection string's database, else `admin` (`$external` for
  /// PLAIN), as the authentication specification says.
  std::string auth_database() const;
  /// `tls` (or its older name `ssl`; the two must agree when both are given). When neither is
  /// written but another `tls*` option is, this is true: asking for a CA file or a client
  /// certificate asks for TLS. `tls=false` with other `tls*` options keeps TLS off.
  const std::optional<bool>& tls() const noexcept { return tls_; }
  /// `retryWrites`.
  const std::optional<bool>& retry_writes() const noexcept { return retry_writes_; }
  /// `retryReads`.
  const std::optional<bool>& retry_reads() const noexcept { return retry_reads_; }
  /// `directConnection`: talk to the one host given, without discovering others.
  const std::optional<bool>& direct_connection() const noexcept { return direct_connection_; }
  /// `compressors`: the compressors asked for, in order of preference (oid sends none itself).
  const std::optional<std::vector<std::string>>& compressors() const noexcept {
    return compressors_;
  }

  // TLS options (MongoDB's URI options specification). `tlsInsecure` may not be combined with
  // `tlsAllowInvalidCertificates` or `tlsAllowInvalidHostnames`, nor any of those three with the
  // revocation options: `parse` refuses such a string.
  /// `tlsCAFile`: the CA certificates (PEM) to trust; none: the system's trust store.
  const std::optional<std::string>& tls_ca_file() const noexcept { return tls_ca_file_; }
  /// `tlsCRLFile` (libmongoc's option): CRLs (PEM) that the server's certificate is checked
  /// against; then a CRL from the certificate's issuer must be there. Refused with
  /// `tlsInsecure=true`, `tlsAllowInvalidCertificates=true` or
  /// `tlsDisableCertificateRevocationCheck=true`.
  const std::optional<std::string>& tls_crl_file() const noexcept { return tls_crl_file_; }
  /// `tlsCertificateKeyFile`: the client certificate and its private key in one PEM file.
  const std::optional<std::string>& tls_certificate_key_file() const noexcept {
    return tls_certificate_key_file_;
  }
  /// `tlsCertificateKeyFilePassword`: decrypts the private key. Never in `to_string()`.
  const std::optional<secret>& tls_certificate_key_file_password() const noexcept {
    return tls_certificate_key_file_password_;
  }
  /// `tlsAllowInvalidCertificates`: accept any server certificate (also implies no host check).
  /// `tlsInsecure=true` sets it too.
  const std::optional<bool>& tls_allow_invalid_certificates() const noexcept {
    return tls_allow_invalid_certificates_;
  }
  /// `tlsAllowInvalidHostnames`: accept a certificate that does not name the host.
  /// `tlsInsecure=true` sets it too.
  const std::optional<bool>& tls_allow_invalid_hostnames() const noexcept {
    return tls_allow_invalid_hostnames_;
  }
  /// `tlsInsecure`, as written.
  const std::optional<bool>& tls_insecure() const noexcept { return tls_insecure_; }
  /// `tlsDisableCertificateRevocationCheck`, as written: true turns off every revocation check
  /// (stapled OCSP, the OCSP cache, the responder query; tlsCRLFile may not be given with it).
  /// `tlsDisableOCSPEndpointCheck`, as written: true turns off only the query to the OCSP
  /// responder the certificate names (a stapled response and the cache are still used).
  const std::optional<bool>& tls_disable_certificate_revocation_check() const noexcept {
    return tls_disable_certificate_revocation_check_;
  }
  const std::optional<bool>& tls_disable_ocsp_endpoint_check() const noexcept {
    return tls_disable_ocsp_endpoint_check_;
  }

  // mongodb+srv:// (MongoDB's initial DNS seedlist discovery; oid/mongo/srv.hpp resolves it).
  /// For `mongodb+srv://NAME`: NAME, whose SRV and TXT records give the hosts and default options
  /// (none for `mongodb://`). Before `resolve_srv`, `hosts()` is NAME alone, without a port.
  const std::optional<std::string>& srv_name() const noexcept { return srv_name_; }
  /// True once `resolve_srv` has replaced NAME by the hosts its SRV records list.
  bool srv_resolved() const noexcept { return srv_resolved_; }
  /// `srvServiceName`: the service looked up, `_{srvServiceName}._tcp.NAME`. Default "mongodb".
  const std::optional<std::string>& srv_service_name() const noexcept { return srv_service_name_; }
  /// `srvMaxHosts`: use at most this many of the SRV records' hosts, chosen at random (0: all).
  const std::optional<std::uint32_t>& srv_max_hosts() const noexcept { return srv_max_hosts_; }

  // Deployment options (replica sets, read preferences, monitoring), as the server discovery and
  // monitoring, server selection and max staleness specifications define them.
  /// `replicaSet`: the name of the replica set to discover (the deployment is then a replica set).
  const std::optional<std::string>& replica_set() const noexcept { return replica_set_; }
  /// `readPreference`: the mode reads use (any case). Default primary.
  const std::optional<read_mode>& read_preference_mode() const noexcept { return read_mode_; }
  /// `readPreferenceTags`, one tag set per occurrence in the order written (`dc:ny,rack:1`; an
  /// empty value is the empty tag set, which matches any member).
  const std::optional<std::vector<tag_set>>& read_preference_tags() const noexcept {
    return read_preference_tags_;
  }
  /// `maxStalenessSeconds`: unset, or -1 as written, means no limit.
  const std::optional<std::chrono::seconds>& max_staleness() const noexcept {
    return max_staleness_;
  }
  /// `localThresholdMS`: the latency window's width. Default 15 ms.
  const std::optional<std::chrono::milliseconds>& local_threshold() const noexcept {
    return local_threshold_;
  }
  /// `heartbeatFrequencyMS`: how often each server is checked (at least 500). Default 10 s.
  const std::optional<std::chrono::milliseconds>& heartbeat_frequency() const noexcept {
    return heartbeat_frequency_;
  }
  /// `loadBalanced`: the one host is a load balancer in front of mongos routers.
  const std::optional<bool>& load_balanced() const noexcept { return load_balanced_; }
  /// The read preference the options make (mode, tag sets, max staleness); primary by default.
  mongo::read_preference read_preference() const;

  /// The connection string as given, with the password and `tlsCertificateKeyFilePassword`
  /// (when there are) replaced by `secret::placeholder`: safe to print or log.
  const std::string& to_string() const noexcept { return redacted_; }

  /// The option names (lower case) that `parse` understands; any other draws a warning.
  static const std::vector<std::string_view>& supported_options() noexcept;

 private:
  uri() = default;  // only parse() makes one, so there is always a host

  std::vector<host> hosts_;
  std::optional<std::string> username_, database_;
  std::optional<secret> password_;
  std::string redacted_;
  std::vector<std::string> warnings_;
  std::optional<std::string> app_name_;
  std::optional<std::chrono::milliseconds> connect_timeout_, socket_timeout_,
      server_selection_timeout_, w_timeout_;
  std::optional<std::uint32_t> max_pool_size_, min_pool_size_, max_connecting_;
  std::optional<std::chrono::milliseconds> max_idle_time_, wait_queue_timeout_;
  std::optional<std::int32_t> w_number_;
  std::optional<std::string> w_tag_;
  std::optional<bool> journal_;
  std::optional<std::string> auth_source_, auth_mechanism_;
  std::optional<std::vector<std::pair<std::string, std::string>>> auth_mechanism_properties_;
  std::optional<bool> tls_, retry_writes_, retry_reads_, direct_connection_;
  std::optional<std::vector<std::string>> compressors_;
  // TLS options.
  std::optional<std::string> tls_ca_file_, tls_crl_file_, tls_certificate_key_file_;
  std::optional<secret> tls_certificate_key_file_password_;
  std::optional<bool> tls_allow_invalid_certificates_, tls_allow_invalid_hostnames_, tls_insecure_,
      tls_disable_certificate_revocation_check_, tls_disable_ocsp_endpoint_check_;
  // mongodb+srv://: the name, its options, and the parse mode that the TXT record's options are
  // read in.
  std::optional<std::string> srv_name_, srv_service_name_;
  std::optional<std::uint32_t> srv_max_hosts_;
  bool srv_resolved_ = false;
  uri_mode srv_mode_ = uri_mode::strict;
  std::optional<std::string> replica_set_;
  std::optional<read_mode> read_mode_;
  std::optional<std::vector<tag_set>> read_preference_tags_;
  std::optional<std::chrono::seconds> max_staleness_;
  std::optional<std::chrono::milliseconds> local_threshold_, heartbeat_frequency_;
  std::optional<bool> load_balanced_;

  friend class uri_parser;
};

}  // namespace oid::mongo
