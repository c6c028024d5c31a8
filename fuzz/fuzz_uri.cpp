// The connection string parser (`oid::mongo::uri::parse`, oid/mongo/uri.hpp) over text a person
// or a TXT record wrote. The properties: parsing never crashes or hangs; a refusal is
// errc::invalid_uri or errc::unsupported with a message and an offset within the text; an
// accepted string has at least one host (exactly one, without a port, for mongodb+srv://), and its
// to_string() parses again, in the same mode, to the same settings (its secrets being
// secret::placeholder) and as many warnings; strict mode accepts nothing lenient mode refuses.
// And no password is ever shown: with a canary text put in the password of the user information
// and in a tlsCertificateKeyFilePassword option (and nowhere else), no error message, warning or
// to_string() holds the canary, raw or percent-encoded, whatever surrounds it (but for one case
// no parser can tell, below: then refusals only).
//
// Input: byte 0: bit 0: lenient mode; bit 1: mongodb+srv:// (else mongodb://); bit 2: user
// information with the canary in its password; bit 3: the user and password percent-encoded
// (else written raw, as a person who forgot may write them); bit 4: a tlsCertificateKeyFilePassword
// option with the canary; bit 5: the rest is the whole connection string (no scheme or canary
// added). Then three length bytes: the user name, the password before the canary, the password
// after it; those bytes; and the rest (hosts, database, options) as it is.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <oid/mongo/uri.hpp>
#include <string>
#include <string_view>

namespace {

using oid::mongo::client_settings;
using oid::mongo::uri;
using oid::mongo::uri_mode;

constexpr std::string_view canary = "Qz7canaryXw4";

[[noreturn]] void fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_uri: %s: %s\n", what, detail.c_str());
  std::abort();
}

std::string percent_encode_all(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto b = static_cast<unsigned char>(c);
    out += '%';
    out += hex[b >> 4];
    out += hex[b & 15];
  }
  return out;
}

// Every setting but the two secrets. (A new field of client_settings goes in this list too.)
bool same_settings(const client_settings& a, const client_settings& b) {
#define OID_SAME(f) (a.f == b.f)
  return OID_SAME(hosts) && OID_SAME(srv_name) && OID_SAME(srv_service_name) &&
         OID_SAME(srv_max_hosts) && OID_SAME(database) && OID_SAME(username) &&
         OID_SAME(auth_source) && OID_SAME(auth_mechanism) && OID_SAME(auth_mechanism_properties) &&
         OID_SAME(app_name) && OID_SAME(timeout) && OID_SAME(connect_timeout) &&
         OID_SAME(socket_timeout) && OID_SAME(server_selection_timeout) &&
         OID_SAME(max_pool_size) && OID_SAME(min_pool_size) && OID_SAME(max_connecting) &&
         OID_SAME(max_idle_time) && OID_SAME(wait_queue_timeout) && OID_SAME(w_number) &&
         OID_SAME(w_tag) && OID_SAME(journal) && OID_SAME(w_timeout) &&
         OID_SAME(read_concern_level) && OID_SAME(retry_writes) && OID_SAME(retry_reads) &&
         OID_SAME(direct_connection) && OID_SAME(load_balanced) && OID_SAME(replica_set) &&
         OID_SAME(compressors) && OID_SAME(read_preference_mode) &&
         OID_SAME(read_preference_tags) && OID_SAME(max_staleness) && OID_SAME(local_threshold) &&
         OID_SAME(heartbeat_frequency) && OID_SAME(tls) && OID_SAME(tls_ca_file) &&
         OID_SAME(tls_crl_file) && OID_SAME(tls_certificate_key_file) &&
         OID_SAME(tls_allow_invalid_certificates) && OID_SAME(tls_allow_invalid_hostnames) &&
         OID_SAME(tls_insecure) && OID_SAME(tls_disable_certificate_revocation_check) &&
         OID_SAME(tls_disable_ocsp_endpoint_check) &&
         a.password.has_value() == b.password.has_value() &&
         a.tls_certificate_key_file_password.has_value() ==
             b.tls_certificate_key_file_password.has_value();
#undef OID_SAME
}

// `text` with every %XX decoded (and a '%' without two hex digits kept).
std::string percent_decode(std::string_view text) {
  const auto hex = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) >= 0 && hex(text[i + 2]) >= 0) {
      out += static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

// True when `text` holds the canary, raw or percent-encoded in any way.
bool shows(std::string_view text, bool check) {
  if (!check) return false;
  return text.find(canary) != std::string_view::npos ||
         percent_decode(text).find(canary) != std::string::npos;
}

// Parses `text` and checks what holds whatever the text; `check_canary` when the canary is in
// the secrets only.
oid::mongo::outcome<uri> parse_checked(std::string_view text, uri_mode mode, bool check_canary,
                                       bool only_refusals = false) {
  auto u = uri::parse(text, mode);
  if (!u) {
    const auto& e = u.error();
    if (e.code != oid::mongo::errc::invalid_uri && e.code != oid::mongo::errc::unsupported) {
      fail("a refusal with another code", e.code.message() + ": " + e.message);
    }
    if (e.message.empty()) fail("a refusal without a message", std::string(text));
    if (e.offset > text.size()) fail("an offset past the text", e.message);
    if (shows(e.message, check_canary)) fail("an error shows a password", e.message);
    return u;
  }
  const auto& s = u->settings();
  if (s.hosts.empty()) fail("no host", std::string(text));
  if (s.srv_name && (s.hosts.size() != 1 || s.hosts[0].port)) {
    fail("mongodb+srv:// with hosts or a port", std::string(text));
  }
  if (only_refusals) check_canary = false;
  if (shows(u->to_string(), check_canary)) fail("to_string() shows a password", u->to_string());
  for (const auto& w : u->warnings()) {
    if (shows(w, check_canary)) fail("a warning shows a password", w);
  }
  return u;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const std::uint8_t flags = data[0];
  const uri_mode mode = flags & 1 ? uri_mode::lenient : uri_mode::strict;
  std::string_view in(reinterpret_cast<const char*>(data + 4), size - 4);
  const auto take = [&in](std::size_t n) {
    const auto part = in.substr(0, n);
    in.remove_prefix(part.size());
    return std::string(part);
  };
  std::string text;
  bool check_canary = false, only_refusals = false;
  std::string user, password;
  if (flags & 0x20) {
    text = std::string(in);
  } else {
    user = take(data[1]);
    password = take(data[2]) + std::string(canary);
    password += take(data[3]);
    text = flags & 2 ? "mongodb+srv://" : "mongodb://";
    if (flags & 4) {
      text += flags & 8 ? percent_encode_all(user) + ":" + percent_encode_all(password)
                        : user + ":" + password;
      text += '@';
    }
    text += in;
    if (flags & 0x10) {
      text += in.find('?') == std::string_view::npos ? "/?" : "&";
      text += "tlsCertificateKeyFilePassword=";
      text += canary;
    }
    // The canary must be in the secrets only: not in the user name or the rest, in either form.
    check_canary = (flags & 0x14) != 0 && !shows(user, true) && !shows(in, true);
    // User information written raw with a '/' or '?' in it can make a valid connection string
    // of another shape ("mongodb://u:1/?a=b" + CANARY + "@h": host u:1, option a), in which no
    // parser can know the canary for a password: then only refusals are checked for it.
    only_refusals =
        (flags & 0x0C) == 0x04 && (user + password).find_first_of("/?") != std::string::npos;
  }

  auto u = parse_checked(text, mode, check_canary, only_refusals);
  if (mode == uri_mode::strict && u && !uri::parse(text, uri_mode::lenient)) {
    fail("strict mode accepts what lenient mode refuses", text);
  }
  if (!u) return 0;
  // Fully encoded user information, accepted, is the user and password written.
  if ((flags & 0x2C) == 0x0C) {
    if (u->username() != user || !u->password() || u->password()->reveal() != password) {
      fail("the user information is not what was written", u->to_string());
    }
  }
  // to_string() is a connection string that means the same (but for its secrets).
  auto again = parse_checked(u->to_string(), mode, false);
  if (!again) fail("to_string() is refused", u->to_string() + ": " + again.error().message);
  if (!same_settings(u->settings(), again->settings())) {
    fail("to_string() means something else", u->to_string());
  }
  if (again->warnings().size() != u->warnings().size()) {
    fail("to_string() draws other warnings", u->to_string());
  }
  if (again->to_string() != u->to_string()) fail("to_string() is not stable", u->to_string());
  return 0;
}
