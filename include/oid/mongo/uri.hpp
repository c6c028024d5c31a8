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
#include <oid/mongo/client_settings.hpp>
#include <oid/mongo/outcome.hpp>
#include <oid/mongo/read_preference.hpp>
#include <oid/mongo/secret.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace oid::mongo {

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

  /// A uri for settings made in code, checked by the rules `parse` applies to a connection
  /// string's options (strict mode), and normalized as it does (`tls_insecure` sets both
  /// allowances; any TLS file or allowance turns `tls` on unless it is false; `srv_name` turns it
  /// on unless it is false). Failures (`errc::invalid_uri`, naming the field by its connection
  /// string option's name; offset 0): no host and no `srv_name`, or both; a host with an empty
  /// name, port 0, or characters a host name cannot hold; an `app_name` over 128 bytes; a
  /// `heartbeat_frequency` under 500 ms; `max_connecting` 0; and what `parse` refuses in a
  /// connection string's options. `to_string()` is a connection string made from the hosts, the
  /// user (its password shown as `secret::placeholder`) and the database, without the options.
  static outcome<uri> from(client_settings settings);

  /// Every setting, as parsed (or as given to `from`).
  const client_settings& settings() const noexcept { return s_; }

  /// The hosts in the order written (at least one).
  const std::vector<host>& hosts() const noexcept { return s_.hosts; }
  /// The user name, decoded, when user information was given.
  const std::optional<std::string>& username() const noexcept { return s_.username; }
  /// The password, decoded, when one was given (possibly empty: `user:@host`).
  const std::optional<secret>& password() const noexcept { return s_.password; }
  /// Sets the password (read from a terminal, say, when the connection string has none).
  void set_password(secret password) { s_.password = std::move(password); }
  /// The database after the hosts, decoded (the default database and auth database).
  const std::optional<std::string>& database() const noexcept { return s_.database; }
  /// One line per ignored option: unknown, repeated, empty or (lenient mode) invalid.
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }

  // Options. Names follow the specification; values are as written.
  /// `appName`: sent to the server in the handshake (at most 128 bytes).
  const std::optional<std::string>& app_name() const noexcept { return s_.app_name; }
  /// `timeoutMS`: time allowed for a whole operation (0 = no limit); unset: the legacy timeouts.
  /// See `client_settings::timeout`.
  const std::optional<std::chrono::milliseconds>& timeout() const noexcept { return s_.timeout; }
  /// `connectTimeoutMS`: time allowed to open a connection (0 = no limit). Default 10 s.
  const std::optional<std::chrono::milliseconds>& connect_timeout() const noexcept {
    return s_.connect_timeout;
  }
  /// `socketTimeoutMS`: time allowed for a read or write on a connection (0 = no limit).
  const std::optional<std::chrono::milliseconds>& socket_timeout() const noexcept {
    return s_.socket_timeout;
  }
  /// `serverSelectionTimeoutMS`: time allowed to find a server that answers. Default 30 s.
  const std::optional<std::chrono::milliseconds>& server_selection_timeout() const noexcept {
    return s_.server_selection_timeout;
  }
  /// `maxPoolSize`: most connections open at once to each server, lent out, idle or being
  /// opened (0 = no limit). Default 100.
  const std::optional<std::uint32_t>& max_pool_size() const noexcept { return s_.max_pool_size; }
  /// `minPoolSize`: connections each server's pool opens in the background and keeps open.
  /// Default 0; more than a nonzero maxPoolSize is refused.
  const std::optional<std::uint32_t>& min_pool_size() const noexcept { return s_.min_pool_size; }
  /// `maxConnecting`: most connections being opened at once to each server (at least 1).
  /// Default 2.
  const std::optional<std::uint32_t>& max_connecting() const noexcept { return s_.max_connecting; }
  /// `maxIdleTimeMS`: an idle pooled connection older than this is closed (0 = never). Default 0.
  const std::optional<std::chrono::milliseconds>& max_idle_time() const noexcept {
    return s_.max_idle_time;
  }
  /// `waitQueueTimeoutMS`: longest wait for a connection when a pool is at maxPoolSize (0 = only
  /// the operation's own limit, serverSelectionTimeoutMS). Default 0.
  const std::optional<std::chrono::milliseconds>& wait_queue_timeout() const noexcept {
    return s_.wait_queue_timeout;
  }
  /// `w` as written when it is a number (`w=0`, `w=1`, ...).
  const std::optional<std::int32_t>& w_number() const noexcept { return s_.w_number; }
  /// `w` as written when it is not a number (`w=majority`, a tag set name).
  const std::optional<std::string>& w_tag() const noexcept { return s_.w_tag; }
  /// `journal`: ask for acknowledgement after the journal is written.
  const std::optional<bool>& journal() const noexcept { return s_.journal; }
  /// `wTimeoutMS`: how long the server may wait for the write concern.
  const std::optional<std::chrono::milliseconds>& w_timeout() const noexcept {
    return s_.w_timeout;
  }
  /// `authSource`: the database that holds the user's credentials.
  const std::optional<std::string>& auth_source() const noexcept { return s_.auth_source; }
  /// `authMechanism`, as written: SCRAM-SHA-1, SCRAM-SHA-256, PLAIN or MONGODB-X509.
  const std::optional<std::string>& auth_mechanism() const noexcept { return s_.auth_mechanism; }
  /// `authMechanismProperties` (`KEY:value,KEY:value`), in the order written, values decoded.
  /// Parsed for completeness: none of oid's mechanisms uses one.
  const std::optional<std::vector<std::pair<std::string, std::string>>>& auth_mechanism_properties()
      const noexcept {
    return s_.auth_mechanism_properties;
  }
  /// True when the connection string asks for authentication: a user name, or MONGODB-X509.
  bool has_credential() const noexcept {
    return s_.username.has_value() || s_.auth_mechanism == "MONGODB-X509";
  }
  /// The database that holds the user's credentials: `authSource` when given; `$external` for
  /// MONGODB-X509; otherwise the connection string's database, else `admin` (`$external` for
  /// PLAIN), as the authentication specification says.
  std::string auth_database() const;
  /// `tls` (or its older name `ssl`; the two must agree when both are given). When neither is
  /// written but another `tls*` option is, this is true: asking for a CA file or a client
  /// certificate asks for TLS. `tls=false` with other `tls*` options keeps TLS off.
  const std::optional<bool>& tls() const noexcept { return s_.tls; }
  /// `retryWrites`.
  const std::optional<bool>& retry_writes() const noexcept { return s_.retry_writes; }
  /// `retryReads`.
  const std::optional<bool>& retry_reads() const noexcept { return s_.retry_reads; }
  /// `directConnection`: talk to the one host given, without discovering others.
  const std::optional<bool>& direct_connection() const noexcept { return s_.direct_connection; }
  /// `compressors`: the compressors asked for, in order of preference (oid sends none itself).
  const std::optional<std::vector<std::string>>& compressors() const noexcept {
    return s_.compressors;
  }

  // TLS options (MongoDB's URI options specification). `tlsInsecure` may not be combined with
  // `tlsAllowInvalidCertificates` or `tlsAllowInvalidHostnames`, nor any of those three with the
  // revocation options: `parse` refuses such a string.
  /// `tlsCAFile`: the CA certificates (PEM) to trust; none: the system's trust store.
  const std::optional<std::string>& tls_ca_file() const noexcept { return s_.tls_ca_file; }
  /// `tlsCRLFile` (libmongoc's option): CRLs (PEM) that the server's certificate is checked
  /// against; then a CRL from the certificate's issuer must be there. Refused with
  /// `tlsInsecure=true`, `tlsAllowInvalidCertificates=true` or
  /// `tlsDisableCertificateRevocationCheck=true`.
  const std::optional<std::string>& tls_crl_file() const noexcept { return s_.tls_crl_file; }
  /// `tlsCertificateKeyFile`: the client certificate and its private key in one PEM file.
  const std::optional<std::string>& tls_certificate_key_file() const noexcept {
    return s_.tls_certificate_key_file;
  }
  /// `tlsCertificateKeyFilePassword`: decrypts the private key. Never in `to_string()`.
  const std::optional<secret>& tls_certificate_key_file_password() const noexcept {
    return s_.tls_certificate_key_file_password;
  }
  /// `tlsAllowInvalidCertificates`: accept any server certificate (also implies no host check).
  /// `tlsInsecure=true` sets it too.
  const std::optional<bool>& tls_allow_invalid_certificates() const noexcept {
    return s_.tls_allow_invalid_certificates;
  }
  /// `tlsAllowInvalidHostnames`: accept a certificate that does not name the host.
  /// `tlsInsecure=true` sets it too.
  const std::optional<bool>& tls_allow_invalid_hostnames() const noexcept {
    return s_.tls_allow_invalid_hostnames;
  }
  /// `tlsInsecure`, as written.
  const std::optional<bool>& tls_insecure() const noexcept { return s_.tls_insecure; }
  /// `tlsDisableCertificateRevocationCheck`, as written: true turns off every revocation check
  /// (stapled OCSP, the OCSP cache, the responder query; tlsCRLFile may not be given with it).
  /// `tlsDisableOCSPEndpointCheck`, as written: true turns off only the query to the OCSP
  /// responder the certificate names (a stapled response and the cache are still used).
  const std::optional<bool>& tls_disable_certificate_revocation_check() const noexcept {
    return s_.tls_disable_certificate_revocation_check;
  }
  const std::optional<bool>& tls_disable_ocsp_endpoint_check() const noexcept {
    return s_.tls_disable_ocsp_endpoint_check;
  }

  // mongodb+srv:// (MongoDB's initial DNS seedlist discovery; oid/mongo/srv.hpp resolves it).
  /// For `mongodb+srv://NAME`: NAME, whose SRV and TXT records give the hosts and default options
  /// (none for `mongodb://`). Before `resolve_srv`, `hosts()` is NAME alone, without a port.
  const std::optional<std::string>& srv_name() const noexcept { return s_.srv_name; }
  /// True once `resolve_srv` has replaced NAME by the hosts its SRV records list.
  bool srv_resolved() const noexcept { return srv_resolved_; }
  /// `srvServiceName`: the service looked up, `_{srvServiceName}._tcp.NAME`. Default "mongodb".
  const std::optional<std::string>& srv_service_name() const noexcept {
    return s_.srv_service_name;
  }
  /// `srvMaxHosts`: use at most this many of the SRV records' hosts, chosen at random (0: all).
  const std::optional<std::uint32_t>& srv_max_hosts() const noexcept { return s_.srv_max_hosts; }

  // Deployment options (replica sets, read preferences, monitoring), as the server discovery and
  // monitoring, server selection and max staleness specifications define them.
  /// `replicaSet`: the name of the replica set to discover (the deployment is then a replica set).
  const std::optional<std::string>& replica_set() const noexcept { return s_.replica_set; }
  /// `readConcernLevel`: the read concern of the client's reads (unset: the server's default).
  const std::optional<std::string>& read_concern_level() const noexcept {
    return s_.read_concern_level;
  }
  /// `readPreference`: the mode reads use (any case). Default primary.
  const std::optional<read_mode>& read_preference_mode() const noexcept {
    return s_.read_preference_mode;
  }
  /// `readPreferenceTags`, one tag set per occurrence in the order written (`dc:ny,rack:1`; an
  /// empty value is the empty tag set, which matches any member).
  const std::optional<std::vector<tag_set>>& read_preference_tags() const noexcept {
    return s_.read_preference_tags;
  }
  /// `maxStalenessSeconds`: unset, or -1 as written, means no limit.
  const std::optional<std::chrono::seconds>& max_staleness() const noexcept {
    return s_.max_staleness;
  }
  /// `localThresholdMS`: the latency window's width. Default 15 ms.
  const std::optional<std::chrono::milliseconds>& local_threshold() const noexcept {
    return s_.local_threshold;
  }
  /// `heartbeatFrequencyMS`: how often each server is checked (at least 500). Default 10 s.
  const std::optional<std::chrono::milliseconds>& heartbeat_frequency() const noexcept {
    return s_.heartbeat_frequency;
  }
  /// `loadBalanced`: the one host is a load balancer in front of mongos routers.
  const std::optional<bool>& load_balanced() const noexcept { return s_.load_balanced; }
  /// The read preference the options make (mode, tag sets, max staleness); primary by default.
  mongo::read_preference read_preference() const;

  /// The connection string as given, with the password and `tlsCertificateKeyFilePassword`
  /// (when there are) replaced by `secret::placeholder`: safe to print or log.
  const std::string& to_string() const noexcept { return redacted_; }

  /// The option names (lower case) that `parse` understands; any other draws a warning.
  static const std::vector<std::string_view>& supported_options() noexcept;

 private:
  uri() = default;  // only parse() and from() make one, so there is always a host

  client_settings s_;
  std::string redacted_;
  std::vector<std::string> warnings_;
  // mongodb+srv://: whether the SRV records replaced the name, and the parse mode that the TXT
  // record's options are read in.
  bool srv_resolved_ = false;
  uri_mode srv_mode_ = uri_mode::strict;

  friend class uri_parser;
};

}  // namespace oid::mongo
