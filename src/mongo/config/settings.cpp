#include "mongo/config/settings.hpp"

#include <algorithm>
#include <climits>
#include <utility>

#include "detail/ascii.hpp"

namespace oid::mongo::settings {
namespace {

// The mechanisms oid implements, and those MongoDB's authentication specification defines that
// oid does not (refused as unsupported); any other name is an invalid value.
constexpr std::string_view mechanisms[] = {"SCRAM-SHA-1", "SCRAM-SHA-256", "PLAIN", "MONGODB-X509"};
constexpr std::string_view unsupported_mechanisms[] = {"GSSAPI", "MONGODB-AWS", "MONGODB-OIDC"};

problem invalid(std::string_view option, std::string_view expected) {
  return {"invalid value for option " + std::string(option) + ": " + std::string(expected)};
}

// The URI options specification's forbidden pairs of TLS options (each pair, whatever the
// values), then what tlsInsecure and the other options imply.
std::optional<problem> check_tls(client_settings& s) {
  struct named {
    std::string_view name;
    const std::optional<bool>& value;
  };
  const named insecure{"tlsInsecure", s.tls_insecure},
      certificates{"tlsAllowInvalidCertificates", s.tls_allow_invalid_certificates},
      hostnames{"tlsAllowInvalidHostnames", s.tls_allow_invalid_hostnames},
      revocation{"tlsDisableCertificateRevocationCheck",
                 s.tls_disable_certificate_revocation_check},
      ocsp{"tlsDisableOCSPEndpointCheck", s.tls_disable_ocsp_endpoint_check};
  const std::pair<const named*, const named*> forbidden[] = {
      {&insecure, &certificates}, {&insecure, &hostnames},      {&insecure, &revocation},
      {&insecure, &ocsp},         {&certificates, &revocation}, {&certificates, &ocsp},
      {&revocation, &ocsp},
  };
  for (const auto& [a, b] : forbidden) {
    if (a->value && b->value) {
      return problem{"options " + std::string(a->name) + " and " + std::string(b->name) +
                     " may not be given together"};
    }
  }
  // A CRL is a revocation check: asking for one and, with a value that turns it off, for no
  // certificate check or no revocation check contradicts itself (libmongoc's tlsCRLFile; the
  // OCSP specification refuses the same options beside one that enables revocation checks).
  if (s.tls_crl_file) {
    for (const named* off : {&insecure, &certificates, &revocation}) {
      if (off->value.value_or(false)) {
        return problem{"options tlsCRLFile and " + std::string(off->name) +
                       "=true may not be given together"};
      }
    }
  }
  if (s.tls_insecure.value_or(false)) {
    s.tls_allow_invalid_certificates = true;
    s.tls_allow_invalid_hostnames = true;
  }
  // Asking for a CA file, a client certificate or a relaxed check asks for TLS (libmongoc
  // does the same); an explicit tls=false still wins.
  const bool any_tls_option = s.tls_ca_file || s.tls_crl_file || s.tls_certificate_key_file ||
                              s.tls_certificate_key_file_password || s.tls_insecure ||
                              s.tls_allow_invalid_certificates || s.tls_allow_invalid_hostnames ||
                              s.tls_disable_certificate_revocation_check ||
                              s.tls_disable_ocsp_endpoint_check;
  if (!s.tls && any_tls_option) s.tls = true;
  return std::nullopt;
}

// The authentication specification's rules for each mechanism.
std::optional<problem> check_credential(const client_settings& s) {
  if (!s.auth_mechanism) return std::nullopt;
  const std::string& m = *s.auth_mechanism;
  if (m == "MONGODB-X509") {
    if (s.password) {
      return problem{
          "authMechanism=MONGODB-X509 takes no password: the client certificate is the identity",
          true};
    }
    if (s.auth_source && *s.auth_source != "$external") {
      return problem{"authMechanism=MONGODB-X509 needs authSource=$external (or none)"};
    }
    return std::nullopt;
  }
  if (!s.username) {
    return problem{"authMechanism=" + m + " needs a user name (mongodb://user:password@host)"};
  }
  // PLAIN sends authzid NUL user NUL password (RFC 4616): a NUL inside either would shift the
  // fields the server reads.
  if (m == "PLAIN") {
    if (s.username->find('\0') != std::string::npos) {
      return problem{"authMechanism=PLAIN: the user name contains a NUL character (%00)"};
    }
    if (s.password && s.password->reveal().find('\0') != std::string_view::npos) {
      return problem{"authMechanism=PLAIN: the password contains a NUL character (%00)", true};
    }
  }
  return std::nullopt;
}

// A host as code may give it: what the parser's syntax guarantees for a written one.
std::optional<problem> check_host(const host& h) {
  const auto bad = [&](std::string_view why) {
    return problem{"host '" + h.name + "': " + std::string(why)};
  };
  if (h.name.empty()) return problem{"a host has an empty name"};
  if (h.port && *h.port == 0) return bad("port 0 (a port is 1-65535)");
  const bool control = std::any_of(h.name.begin(), h.name.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  if (control) return bad("a control character in the name");
  switch (h.type) {
  case host::kind::unix_socket:
    if (!h.name.ends_with(".sock")) return bad("a socket path ends in .sock");
    if (h.port) return bad("a Unix domain socket has no port");
    break;
  case host::kind::ipv4:
    if (!oid::detail::is_ipv4(h.name)) return bad("not a dotted-quad IPv4 address");
    break;
  case host::kind::ip_literal:
    if (h.name.find(':') == std::string::npos ||
        h.name.find_first_of("[]/?#@, ") != std::string::npos) {
      return bad("not an IPv6 address (give it without brackets)");
    }
    break;
  case host::kind::hostname:
    if (h.name.find_first_of("[]/?#@,: \\") != std::string::npos) {
      return bad("a host name cannot hold / ? # @ , : [ ] \\ or a space");
    }
    break;
  }
  return std::nullopt;
}

std::optional<problem> check_ms(const std::optional<std::chrono::milliseconds>& v,
                                std::string_view option, long long min = 0) {
  if (v && (v->count() < min || v->count() > INT_MAX)) {
    return invalid(option, "expected milliseconds from " + std::to_string(min) + " to 2147483647");
  }
  return std::nullopt;
}

std::optional<problem> check_count(const std::optional<std::uint32_t>& v, std::string_view option,
                                   std::uint32_t min = 0) {
  if (v && (*v < min || *v > std::uint32_t{INT_MAX})) {
    return invalid(option, "expected a whole number from " + std::to_string(min));
  }
  return std::nullopt;
}

}  // namespace

read_preference read_preference_of(const client_settings& s) {
  read_preference rp;
  rp.mode = s.read_preference_mode.value_or(read_mode::primary);
  if (s.read_preference_tags) rp.tag_sets = *s.read_preference_tags;
  rp.max_staleness = s.max_staleness;
  return rp;
}

std::optional<problem> check_mechanism(std::string_view m) {
  if (std::find(std::begin(unsupported_mechanisms), std::end(unsupported_mechanisms), m) !=
      std::end(unsupported_mechanisms)) {
    return problem{"authMechanism=" + std::string(m) +
                       " is not supported by oid; it authenticates with SCRAM-SHA-256, "
                       "SCRAM-SHA-1, PLAIN or MONGODB-X509",
                   false, errc::unsupported};
  }
  if (std::find(std::begin(mechanisms), std::end(mechanisms), m) == std::end(mechanisms)) {
    return problem{"expected SCRAM-SHA-256, SCRAM-SHA-1, PLAIN or MONGODB-X509"};
  }
  return std::nullopt;
}

bool is_service_name(std::string_view value) {
  const bool letter = std::any_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  const bool chars = std::all_of(value.begin(), value.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
  });
  return letter && chars && value.size() <= 62 && value.front() != '-' && value.back() != '-' &&
         value.find("--") == std::string_view::npos;
}

const char* srv_max_hosts_conflict(const client_settings& s) {
  if (s.srv_max_hosts.value_or(0) == 0) return nullptr;
  if (s.replica_set) return "replicaSet";
  if (s.load_balanced.value_or(false)) return "loadBalanced=true";
  return nullptr;
}

std::optional<problem> check_srv(client_settings& s) {
  if (!s.srv_name) {
    if (s.srv_service_name || s.srv_max_hosts) {
      return problem{"options srvServiceName and srvMaxHosts need mongodb+srv://"};
    }
    return std::nullopt;
  }
  if (s.direct_connection.value_or(false)) {
    return problem{"option directConnection=true cannot be used with mongodb+srv://"};
  }
  if (const char* conflict = srv_max_hosts_conflict(s)) {
    return problem{"option srvMaxHosts=" + std::to_string(*s.srv_max_hosts) +
                   " cannot be used with " + conflict};
  }
  s.srv_name = oid::detail::lower_ascii(*s.srv_name);
  if (!s.tls) s.tls = true;  // TLS is on for mongodb+srv:// unless tls=false is given
  return std::nullopt;
}

std::optional<problem> check_deployment(const client_settings& s, uri_mode mode) {
  if (s.load_balanced.value_or(false)) {
    const char* why = s.hosts.size() > 1                    ? "several hosts"
                      : s.direct_connection.value_or(false) ? "directConnection=true"
                      : s.replica_set                       ? "replicaSet"
                                                            : nullptr;
    if (why) return problem{std::string("option loadBalanced=true cannot go with ") + why};
  }
  const auto rp = read_preference_of(s);
  if (mode == uri_mode::strict &&
      !rp.validate(s.heartbeat_frequency.value_or(std::chrono::milliseconds(10'000)))) {
    return problem{rp.mode == read_mode::primary
                       ? "readPreference=primary (the default) takes no readPreferenceTags and "
                         "no maxStalenessSeconds"
                       : "maxStalenessSeconds must be at least 90 and at least "
                         "heartbeatFrequencyMS + 10 s"};
  }
  return std::nullopt;
}

std::optional<problem> check_combinations(client_settings& s, uri_mode mode) {
  if (auto p = check_tls(s)) return p;
  if (s.direct_connection.value_or(false) && s.hosts.size() > 1) {
    return problem{"option directConnection=true needs exactly one host"};
  }
  if (auto p = check_deployment(s, mode)) return p;
  if (s.w_number == 0 && s.journal.value_or(false)) {
    // The read and write concern specification: a write that waits for nothing cannot wait for
    // the journal.
    return problem{
        "options w=0 and journal=true contradict each other: an unacknowledged write "
        "cannot wait for the journal"};
  }
  const std::uint32_t max_pool = s.max_pool_size.value_or(100);
  if (s.min_pool_size && max_pool != 0 && *s.min_pool_size > max_pool) {
    return problem{"option minPoolSize=" + std::to_string(*s.min_pool_size) +
                   " is more than maxPoolSize=" + std::to_string(max_pool) +
                   (s.max_pool_size ? "" : " (the default)") +
                   ": a pool cannot keep open more connections than it may have"};
  }
  return check_credential(s);
}

std::optional<problem> check_values(client_settings& s) {
  // Where.
  const bool srv_seed = s.srv_name && s.hosts.size() == 1 && !s.hosts.front().port &&
                        oid::detail::equal_ignoring_ascii_case(s.hosts.front().name, *s.srv_name);
  if (s.srv_name && !s.hosts.empty() && !srv_seed) {
    return problem{"give either hosts or srv_name (mongodb+srv://), not both"};
  }
  if (!s.srv_name && s.hosts.empty()) return problem{"no host: give at least one, or srv_name"};
  if (s.srv_name) {
    const host seed{host::kind::hostname, *s.srv_name, std::nullopt};
    if (auto p = check_host(seed)) return p;
    if (oid::detail::is_ipv4(*s.srv_name)) return problem{"mongodb+srv:// needs a host name"};
  }
  if (auto p = check_srv(s)) return p;
  for (const host& h : s.hosts) {
    if (auto p = check_host(h)) return p;
  }
  if (s.srv_service_name && !is_service_name(*s.srv_service_name)) {
    return invalid("srvServiceName",
                   "expected a service name: letters, digits and inner hyphens, at most 62 "
                   "characters");
  }
  if (auto p = check_count(s.srv_max_hosts, "srvMaxHosts")) return p;
  // Who.
  if (s.app_name && s.app_name->size() > 128) return invalid("appName", "at most 128 bytes");
  if (s.auth_mechanism) {
    if (auto p = check_mechanism(*s.auth_mechanism)) {
      if (p->code == errc::invalid_uri) return invalid("authMechanism", p->message);
      return p;
    }
  }
  if (s.auth_source && s.auth_source->empty()) return invalid("authSource", "an empty name");
  // Timeouts, pools, write concern, read preference.
  for (const auto& [v, name] :
       {std::pair{&s.timeout, "timeoutMS"}, std::pair{&s.connect_timeout, "connectTimeoutMS"},
        std::pair{&s.socket_timeout, "socketTimeoutMS"},
        std::pair{&s.server_selection_timeout, "serverSelectionTimeoutMS"},
        std::pair{&s.max_idle_time, "maxIdleTimeMS"},
        std::pair{&s.wait_queue_timeout, "waitQueueTimeoutMS"},
        std::pair{&s.w_timeout, "wTimeoutMS"}, std::pair{&s.local_threshold, "localThresholdMS"}}) {
    if (auto p = check_ms(*v, name)) return p;
  }
  if (auto p = check_ms(s.heartbeat_frequency, "heartbeatFrequencyMS", 500)) return p;
  if (auto p = check_count(s.max_pool_size, "maxPoolSize")) return p;
  if (auto p = check_count(s.min_pool_size, "minPoolSize")) return p;
  if (auto p = check_count(s.max_connecting, "maxConnecting", 1)) return p;
  if (s.w_number && *s.w_number < 0) return invalid("w", "w must be >= 0");
  if (s.w_number && s.w_tag) return invalid("w", "a number or a name, not both");
  if (s.w_tag && s.w_tag->empty()) return invalid("w", "an empty name");
  if (s.max_staleness && s.max_staleness->count() <= 0) {
    return invalid("maxStalenessSeconds", "expected a positive number of seconds (unset: none)");
  }
  return std::nullopt;
}

}  // namespace oid::mongo::settings

namespace oid::mongo {

bool client_settings::merge(const client_settings& over) {
  bool changed = false;
  if (!over.hosts.empty()) {
    hosts = over.hosts;
    changed = true;
  }
  // Every optional member, once: what `over` sets wins.
  const auto take = [&changed](auto& mine, const auto& theirs) {
    if (!theirs) return;
    mine = theirs;
    changed = true;
  };
  take(srv_name, over.srv_name);
  take(srv_service_name, over.srv_service_name);
  take(srv_max_hosts, over.srv_max_hosts);
  take(database, over.database);
  take(username, over.username);
  take(password, over.password);
  take(auth_source, over.auth_source);
  take(auth_mechanism, over.auth_mechanism);
  take(auth_mechanism_properties, over.auth_mechanism_properties);
  take(app_name, over.app_name);
  take(timeout, over.timeout);
  take(connect_timeout, over.connect_timeout);
  take(socket_timeout, over.socket_timeout);
  take(server_selection_timeout, over.server_selection_timeout);
  take(max_pool_size, over.max_pool_size);
  take(min_pool_size, over.min_pool_size);
  take(max_connecting, over.max_connecting);
  take(max_idle_time, over.max_idle_time);
  take(wait_queue_timeout, over.wait_queue_timeout);
  if (over.w_number || over.w_tag) {  // one w: a number or a name
    w_number = over.w_number;
    w_tag = over.w_tag;
    changed = true;
  }
  take(journal, over.journal);
  take(w_timeout, over.w_timeout);
  take(retry_writes, over.retry_writes);
  take(retry_reads, over.retry_reads);
  take(direct_connection, over.direct_connection);
  take(load_balanced, over.load_balanced);
  take(replica_set, over.replica_set);
  take(read_concern_level, over.read_concern_level);
  take(compressors, over.compressors);
  take(read_preference_mode, over.read_preference_mode);
  take(read_preference_tags, over.read_preference_tags);
  take(max_staleness, over.max_staleness);
  take(local_threshold, over.local_threshold);
  take(heartbeat_frequency, over.heartbeat_frequency);
  take(tls, over.tls);
  take(tls_ca_file, over.tls_ca_file);
  take(tls_crl_file, over.tls_crl_file);
  take(tls_certificate_key_file, over.tls_certificate_key_file);
  take(tls_certificate_key_file_password, over.tls_certificate_key_file_password);
  take(tls_allow_invalid_certificates, over.tls_allow_invalid_certificates);
  take(tls_allow_invalid_hostnames, over.tls_allow_invalid_hostnames);
  take(tls_insecure, over.tls_insecure);
  take(tls_disable_certificate_revocation_check, over.tls_disable_certificate_revocation_check);
  take(tls_disable_ocsp_endpoint_check, over.tls_disable_ocsp_endpoint_check);
  return changed;
}

}  // namespace oid::mongo
