// mongodb+srv://: SRV and TXT lookups through glibc's libresolv, the specification's checks on
// their answers, and the uri they make.
#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <resolv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <oid/mongo/server_description.hpp>
#include <oid/mongo/srv.hpp>
#include <random>
#include <string>
#include <utility>

#include "detail/ascii.hpp"
#include "mongo/config/srv_records.hpp"

namespace oid::mongo {
namespace {

constexpr std::string_view dns_server_variable = "OID_DNS_SERVER";
constexpr std::chrono::seconds min_rescan_interval{60};

// One SRV record: where a host listens.
struct srv_record {
  std::string target;
  std::uint16_t port = 0;
  std::uint32_t ttl = 0;
};

// glibc's resolver state, pointed at OID_DNS_SERVER when it is set.
class resolver {
 public:
  resolver() = default;
  resolver(const resolver&) = delete;
  resolver& operator=(const resolver&) = delete;
  ~resolver() {
    if (open_) res_nclose(&state_);
  }

  // Reads /etc/resolv.conf, then OID_DNS_SERVER; a failure says which.
  std::optional<failure> open() {
    if (res_ninit(&state_) != 0) {
      return failure(errc::connection_failed,
                     "DNS: the resolver could not be set up from /etc/resolv.conf");
    }
    open_ = true;
    server_ = "the name servers of /etc/resolv.conf";
    const char* env = std::getenv(dns_server_variable.data());
    if (env == nullptr || *env == '\0') return std::nullopt;
    const std::string_view text(env);
    const std::size_t colon = text.rfind(':');
    const std::string address(text.substr(0, colon));
    unsigned port = 53;
    in_addr ip{};
    bool ok = ::inet_pton(AF_INET, address.c_str(), &ip) == 1;
    if (ok && colon != std::string_view::npos) {
      const std::string_view digits = text.substr(colon + 1);
      const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
      ok = ec == std::errc{} && ptr == digits.data() + digits.size() && port >= 1 && port <= 65535;
    }
    if (!ok) {
      return failure(errc::connection_failed, std::string(dns_server_variable) + "='" +
                                                  std::string(text) +
                                                  "' is not an IPv4 address with an optional "
                                                  ":port (127.0.0.1:5353)");
    }
    // One IPv4 server: glibc prefers an IPv6 address of /etc/resolv.conf (held in _u._ext) over
    // nsaddr_list, so those are dropped.
    for (auto& v6 : state_._u._ext.nsaddrs) {
      std::free(v6);
      v6 = nullptr;
    }
    state_.nscount = 1;
    state_.nsaddr_list[0] = sockaddr_in{};
    state_.nsaddr_list[0].sin_family = AF_INET;
    state_.nsaddr_list[0].sin_port = htons(static_cast<std::uint16_t>(port));
    state_.nsaddr_list[0].sin_addr = ip;
    server_ = "DNS server " + std::string(text) + " (" + std::string(dns_server_variable) + ")";
    return std::nullopt;
  }

  // The answer to a query for `name`'s records of `type`; on failure, whether the name or the
  // type has no records (`absent`) or the lookup itself failed, and why.
  struct answer {
    std::vector<unsigned char> bytes;
    ns_msg message{};
  };
  std::optional<answer> query(const std::string& name, ns_type type, std::string_view type_name,
                              failure& why, bool& absent) {
    answer a;
    a.bytes.resize(65535);
    const int n = res_nquery(&state_, name.c_str(), ns_c_in, type, a.bytes.data(),
                             static_cast<int>(a.bytes.size()));
    absent = false;
    if (n < 0) {
      std::string reason;
      switch (state_.res_h_errno) {
      case HOST_NOT_FOUND:
        reason = "no such name (NXDOMAIN)";
        absent = true;
        break;
      case NO_DATA:
        reason = "the name has no " + std::string(type_name) + " record";
        absent = true;
        break;
      case TRY_AGAIN: reason = "no answer (the server timed out or failed)"; break;
      default: reason = "the server refused the query or could not answer it";
      }
      why =
          failure(errc::connection_failed, "DNS " + std::string(type_name) + " lookup of " + name +
                                               " failed: " + reason + "; asked " + server_);
      return std::nullopt;
    }
    a.bytes.resize(static_cast<std::size_t>(n));
    if (ns_initparse(a.bytes.data(), n, &a.message) != 0) {
      why = failure(errc::connection_failed, "DNS " + std::string(type_name) + " lookup of " +
                                                 name + ": malformed answer from " + server_);
      return std::nullopt;
    }
    return a;
  }

  std::optional<failure> srv(const std::string& name, std::vector<srv_record>& out) {
    failure why;
    bool absent = false;
    auto a = query(name, ns_t_srv, "SRV", why, absent);
    if (!a) return why;
    const auto malformed = [&] {
      return failure(errc::connection_failed,
                     "DNS SRV lookup of " + name + ": malformed SRV record from " + server_);
    };
    for (int i = 0, count = ns_msg_count(a->message, ns_s_an); i < count; ++i) {
      ns_rr rr{};
      if (ns_parserr(&a->message, ns_s_an, i, &rr) != 0) return malformed();
      if (ns_rr_type(rr) != ns_t_srv) continue;
      // Priority, weight (both ignored, as the specification says), port, target.
      if (ns_rr_rdlen(rr) < 7) return malformed();
      const unsigned char* rdata = ns_rr_rdata(rr);
      std::array<char, NS_MAXDNAME> target{};
      if (ns_name_uncompress(ns_msg_base(a->message), ns_msg_end(a->message), rdata + 6,
                             target.data(), target.size()) < 0) {
        return malformed();
      }
      out.push_back({target.data(), static_cast<std::uint16_t>(ns_get16(rdata + 4)),
                     static_cast<std::uint32_t>(ns_rr_ttl(rr))});
    }
    if (out.empty()) {
      return failure(errc::connection_failed, "DNS SRV lookup of " + name +
                                                  " failed: the answer holds no SRV record; "
                                                  "asked " +
                                                  server_);
    }
    return std::nullopt;
  }

  // Each TXT record's character-strings joined (the specification reads them as one string).
  std::optional<failure> txt(const std::string& name, std::vector<std::string>& out) {
    failure why;
    bool absent = false;
    auto a = query(name, ns_t_txt, "TXT", why, absent);
    if (!a) return absent ? std::nullopt : std::optional<failure>(why);
    for (int i = 0, count = ns_msg_count(a->message, ns_s_an); i < count; ++i) {
      ns_rr rr{};
      if (ns_parserr(&a->message, ns_s_an, i, &rr) != 0 || ns_rr_type(rr) != ns_t_txt) continue;
      const unsigned char* p = ns_rr_rdata(rr);
      const unsigned char* end = p + ns_rr_rdlen(rr);
      std::string joined;
      while (p < end) {
        const std::size_t length = *p++;
        if (length > static_cast<std::size_t>(end - p)) {
          return failure(errc::connection_failed,
                         "DNS TXT lookup of " + name + ": malformed TXT record from " + server_);
        }
        joined.append(reinterpret_cast<const char*>(p), length);
        p += length;
      }
      out.push_back(std::move(joined));
    }
    return std::nullopt;
  }

 private:
  struct __res_state state_ {};
  bool open_ = false;
  std::string server_;
};

// The specification's rule: a target lies in the SRV name's domain, which is the name without
// its first label when it has three labels or more, else the name itself (so the target has
// at least one label more). Only letters, digits, '-', '_' and '.' are accepted, so that the
// target can stand in a connection string as it is.
std::optional<failure> check_target(const std::string& srv_name, const std::string& target) {
  const bool plain = !target.empty() && std::all_of(target.begin(), target.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  });
  if (!plain) {
    return failure(errc::invalid_uri, "the SRV record of " + srv_name + " names '" + target +
                                          "', which is not a host name");
  }
  const std::string name = oid::detail::lower_ascii(srv_name);
  const std::size_t labels =
      static_cast<std::size_t>(std::count(name.begin(), name.end(), '.')) + 1;
  const std::string domain = labels >= 3 ? name.substr(name.find('.') + 1) : name;
  const std::string host = oid::detail::lower_ascii(target);
  if (host.size() <= domain.size() + 1 || !host.ends_with("." + domain)) {
    return failure(errc::invalid_uri, "the SRV record of " + srv_name + " names host " + target +
                                          ", which is not in the domain " + domain +
                                          " (mongodb+srv:// accepts only hosts under it)");
  }
  return std::nullopt;
}

// A record's port as a connection string's must be: 1-65535 (port 0 names no server, and
// connecting to it reaches nothing, or whatever the system makes of it).
std::optional<failure> check_port(const std::string& srv_name, const srv_record& r) {
  if (r.port != 0) return std::nullopt;
  return failure(errc::invalid_uri, "the SRV record of " + srv_name + " names port 0 for host " +
                                        r.target + " (a port is 1-65535)");
}

std::string service_record(const uri& u) {
  return "_" + u.srv_service_name().value_or("mongodb") + "._tcp." + *u.srv_name();
}

// The TXT record's options: none, or one record (uri.cpp's parser checks what it sets).
outcome<std::string> txt_options(const std::string& name, const std::vector<std::string>& records) {
  if (records.empty()) return std::string();
  if (records.size() > 1) {
    return failure(errc::invalid_uri, name + " has " + std::to_string(records.size()) +
                                          " TXT records; mongodb+srv:// allows at most one");
  }
  return records.front();
}

host host_of(srv_record r) {
  host h;
  h.type = oid::detail::is_ipv4(r.target) ? host::kind::ipv4 : host::kind::hostname;
  h.name = std::move(r.target);
  h.port = r.port;
  return h;
}

// The most hosts taken from SRV records: srvMaxHosts (0: no limit of its own), and never more
// than a topology's max_servers (100), so that a DNS answer cannot make the client monitor
// thousands of hosts (a 64 KiB answer holds about 3,000 records).
std::size_t host_limit(std::uint32_t max_hosts) {
  return max_hosts > 0 ? std::min<std::size_t>(max_hosts, max_servers) : max_servers;
}

// The hosts of `records`, `keep` of them at random when it is lower than their number.
std::vector<srv_record> choose(std::vector<srv_record> records, std::size_t keep) {
  if (keep < records.size()) {
    std::random_device seed;
    std::mt19937_64 random(seed());
    std::shuffle(records.begin(), records.end(), random);  // Fisher-Yates
    records.resize(keep);
  }
  return records;
}

}  // namespace

outcome<uri> resolve_srv(const uri& u) {
  if (!u.srv_name() || u.srv_resolved()) return u;
  resolver dns;
  if (auto why = dns.open()) return std::move(*why);
  const std::string& name = *u.srv_name();
  std::vector<srv_record> records;
  if (auto why = dns.srv(service_record(u), records)) return std::move(*why);
  for (const srv_record& r : records) {
    if (auto why = check_target(name, r.target)) return std::move(*why);
    if (auto why = check_port(name, r)) return std::move(*why);
  }
  std::vector<std::string> txt;
  if (auto why = dns.txt(name, txt)) return std::move(*why);
  auto from_txt = txt_options(name, txt);
  if (!from_txt) return std::move(from_txt).error();
  std::vector<host> hosts;
  for (srv_record& r : choose(std::move(records), host_limit(u.srv_max_hosts().value_or(0)))) {
    hosts.push_back(host_of(std::move(r)));
  }
  return detail::with_srv_records(u, *from_txt, std::move(hosts));
}

outcome<srv_rescan> rescan_srv(const uri& u, const std::vector<host>& current) {
  if (!u.srv_name()) {
    return failure(errc::invalid_uri, "SRV polling needs a mongodb+srv:// connection string");
  }
  resolver dns;
  if (auto why = dns.open()) return std::move(*why);
  std::vector<srv_record> records;
  const std::string record = service_record(u);
  if (auto why = dns.srv(record, records)) return std::move(*why);
  std::erase_if(records, [&](const srv_record& r) {
    return check_target(*u.srv_name(), r.target).has_value() ||
           check_port(*u.srv_name(), r).has_value();
  });
  if (records.empty()) {
    return failure(errc::connection_failed, "DNS SRV lookup of " + record +
                                                ": no record names a host in the domain at a "
                                                "port other than 0");
  }
  srv_rescan out;
  std::uint32_t ttl = records.front().ttl;
  for (const srv_record& r : records) ttl = std::min(ttl, r.ttl);
  out.ttl = std::chrono::seconds(ttl);
  out.rescan_after = std::max(out.ttl, min_rescan_interval);

  const auto same = [](const host& h, const srv_record& r) {
    return oid::detail::lower_ascii(h.name) == oid::detail::lower_ascii(r.target) &&
           h.port_or_default() == r.port;
  };
  std::vector<srv_record> fresh;
  for (const host& h : current) {
    if (std::any_of(records.begin(), records.end(), [&](const auto& r) { return same(h, r); })) {
      out.hosts.push_back(h);
    }
  }
  for (const srv_record& r : records) {
    if (std::none_of(out.hosts.begin(), out.hosts.end(),
                     [&](const host& h) { return same(h, r); })) {
      fresh.push_back(r);
    }
  }
  const std::size_t limit = host_limit(u.srv_max_hosts().value_or(0));
  const std::size_t room = limit > out.hosts.size() ? limit - out.hosts.size() : 0;
  fresh = choose(std::move(fresh), room);
  for (srv_record& r : fresh) out.hosts.push_back(host_of(std::move(r)));
  return out;
}

}  // namespace oid::mongo
