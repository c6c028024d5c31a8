// Runs the connection string specification's own tests (connection-string and uri-options of
// scripts/spec-data.sh) against oid::mongo::uri::parse in lenient mode, as the specification
// asks drivers to behave. Every case that uses only options oid supports must pass; a case that
// fails and involves an option oid does not support is listed, not failed. mongodb+srv:// strings
// are parsed without DNS lookups (mongo_srv_spec_test.cpp runs those).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <oid/mongo/uri.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "support/ci.hpp"
#include "support/spec_data.hpp"

namespace {

namespace fs = std::filesystem;
using oid::mongo::host;
using oid::mongo::uri;
using oid::mongo::uri_mode;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// The option names a connection string uses, lower-cased (undecoded names are plain ASCII in
// every spec case).
std::vector<std::string> option_names(std::string_view text) {
  std::vector<std::string> names;
  const auto q = text.find('?');
  if (q == std::string_view::npos) return names;
  std::string_view rest = text.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const auto pair = rest.substr(0, amp);
    names.push_back(lower(pair.substr(0, pair.find('='))));
    if (amp == std::string_view::npos) break;
    rest.remove_prefix(amp + 1);
  }
  return names;
}

std::string host_kind(host::kind k) {
  switch (k) {
  case host::kind::hostname: return "hostname";
  case host::kind::ipv4: return "ipv4";
  case host::kind::ip_literal: return "ip_literal";
  case host::kind::unix_socket: return "unix";
  }
  return "?";
}

// Compares one expected option with what oid parsed; returns a description of the difference.
std::string compare_option(const uri& u, const std::string& key, simdjson::dom::element want) {
  std::ostringstream why;
  const auto as_ms = [&](const std::optional<std::chrono::milliseconds>& got) {
    int64_t w = 0;
    if (want.get(w) != simdjson::SUCCESS || !got || got->count() != w) {
      why << key << ": want " << simdjson::to_string(want) << ", got "
          << (got ? std::to_string(got->count()) : "nothing");
    }
  };
  const auto as_bool = [&](const std::optional<bool>& got) {
    bool w = false;
    if (want.get(w) != simdjson::SUCCESS || !got || *got != w) {
      why << key << ": want " << simdjson::to_string(want) << ", got "
          << (got ? (*got ? "true" : "false") : "nothing");
    }
  };
  const auto as_string = [&](const std::optional<std::string>& got) {
    std::string_view w;
    if (want.get(w) != simdjson::SUCCESS || !got || *got != w) {
      why << key << ": want " << simdjson::to_string(want) << ", got " << got.value_or("nothing");
    }
  };
  if (key == "appname") {
    as_string(u.app_name());
  } else if (key == "readconcernlevel") {
    as_string(u.read_concern_level());
  } else if (key == "timeoutms") {
    as_ms(u.timeout());
  } else if (key == "connecttimeoutms") {
    as_ms(u.connect_timeout());
  } else if (key == "sockettimeoutms") {
    as_ms(u.socket_timeout());
  } else if (key == "serverselectiontimeoutms") {
    as_ms(u.server_selection_timeout());
  } else if (key == "wtimeoutms") {
    as_ms(u.w_timeout());
  } else if (key == "maxpoolsize" || key == "minpoolsize" || key == "maxconnecting") {
    const auto& got = key == "maxpoolsize"   ? u.max_pool_size()
                      : key == "minpoolsize" ? u.min_pool_size()
                                             : u.max_connecting();
    int64_t w = 0;
    if (want.get(w) != simdjson::SUCCESS || !got || *got != w) {
      why << key << ": want " << simdjson::to_string(want);
    }
  } else if (key == "maxidletimems") {
    as_ms(u.max_idle_time());
  } else if (key == "waitqueuetimeoutms") {
    as_ms(u.wait_queue_timeout());
  } else if (key == "w") {
    int64_t n = 0;
    std::string_view s;
    if (want.get(n) == simdjson::SUCCESS) {
      if (!u.w_number() || *u.w_number() != n) why << "w: want " << n;
    } else if (want.get(s) == simdjson::SUCCESS) {
      if (!u.w_tag() || *u.w_tag() != s) why << "w: want " << s;
    }
  } else if (key == "journal") {
    as_bool(u.journal());
  } else if (key == "authsource") {
    as_string(u.auth_source());
  } else if (key == "authmechanism") {
    as_string(u.auth_mechanism());
  } else if (key == "authmechanismproperties") {
    simdjson::dom::object want_properties;
    const auto& got = u.auth_mechanism_properties();
    if (want.get(want_properties) != simdjson::SUCCESS || !got ||
        got->size() != want_properties.size()) {
      why << key << " differ";
    } else {
      for (auto [k, v] : want_properties) {
        std::string_view value;
        const auto found =
            std::find_if(got->begin(), got->end(), [&](const auto& p) { return p.first == k; });
        if (v.get(value) != simdjson::SUCCESS || found == got->end() || found->second != value) {
          why << key << ": " << k << " differs";
        }
      }
    }
  } else if (key == "tls" || key == "ssl") {
    as_bool(u.tls());
  } else if (key == "tlscafile") {
    as_string(u.tls_ca_file());
  } else if (key == "tlscertificatekeyfile") {
    as_string(u.tls_certificate_key_file());
  } else if (key == "tlscertificatekeyfilepassword") {
    const auto& got = u.tls_certificate_key_file_password();
    as_string(got ? std::optional<std::string>(got->reveal()) : std::nullopt);
  } else if (key == "tlsallowinvalidcertificates") {
    as_bool(u.tls_allow_invalid_certificates());
  } else if (key == "tlsallowinvalidhostnames") {
    as_bool(u.tls_allow_invalid_hostnames());
  } else if (key == "tlsinsecure") {
    as_bool(u.tls_insecure());
  } else if (key == "tlsdisablecertificaterevocationcheck") {
    as_bool(u.tls_disable_certificate_revocation_check());
  } else if (key == "tlsdisableocspendpointcheck") {
    as_bool(u.tls_disable_ocsp_endpoint_check());
  } else if (key == "retrywrites") {
    as_bool(u.retry_writes());
  } else if (key == "retryreads") {
    as_bool(u.retry_reads());
  } else if (key == "directconnection") {
    as_bool(u.direct_connection());
  } else if (key == "srvservicename") {
    as_string(u.srv_service_name());
  } else if (key == "srvmaxhosts") {
    int64_t w = 0;
    if (want.get(w) != simdjson::SUCCESS || !u.srv_max_hosts() || *u.srv_max_hosts() != w) {
      why << key << ": want " << simdjson::to_string(want);
    }
  } else if (key == "compressors") {
    std::vector<std::string> w;
    simdjson::dom::array arr;
    if (want.get(arr) == simdjson::SUCCESS) {
      for (auto item : arr) w.emplace_back(std::string_view(item.get_string().value_unsafe()));
    }
    if (!u.compressors() || *u.compressors() != w) why << "compressors differ";
  } else if (key == "replicaset") {
    as_string(u.replica_set());
  } else if (key == "readpreference") {
    std::string_view w;
    const auto& got = u.read_preference_mode();
    if (want.get(w) != simdjson::SUCCESS || !got || to_string(*got) != w) {
      why << key << ": want " << simdjson::to_string(want);
    }
  } else if (key == "readpreferencetags") {
    std::vector<oid::mongo::tag_set> w;
    simdjson::dom::array arr;
    if (want.get(arr) == simdjson::SUCCESS) {
      for (auto set : arr) {
        oid::mongo::tag_set tags;
        simdjson::dom::object object;
        if (set.get(object) == simdjson::SUCCESS) {
          for (auto [name, value] : object) {
            std::string_view text;
            if (value.get(text) == simdjson::SUCCESS) tags.emplace_back(name, text);
          }
        }
        w.push_back(std::move(tags));
      }
    }
    if (!u.read_preference_tags() || *u.read_preference_tags() != w) why << key << " differ";
  } else if (key == "maxstalenessseconds") {
    int64_t w = 0;
    if (want.get(w) != simdjson::SUCCESS || !u.max_staleness() || u.max_staleness()->count() != w) {
      why << key << ": want " << simdjson::to_string(want);
    }
  } else if (key == "localthresholdms") {
    as_ms(u.local_threshold());
  } else if (key == "heartbeatfrequencyms") {
    as_ms(u.heartbeat_frequency());
  } else if (key == "loadbalanced") {
    as_bool(u.load_balanced());
  } else {
    why << "option " << key << " is not one oid supports";
  }
  return why.str();
}

// The connection string specification's credential disclosure tests: cases of a URI only (no
// `valid`), each holding the password "SENTINELpassword1234" somewhere parsing may echo it.
constexpr std::string_view kCredentialDisclosure = "credential-disclosure.json";

// Checks one case; returns "" when it passes, else what differed.
std::string check_case(simdjson::dom::element t) {
  const std::string_view text = t["uri"].get_string().value_unsafe();
  const bool want_valid = t["valid"].get_bool().value_unsafe();
  const bool want_warning = t["warning"].get_bool().value_unsafe();
  const auto parsed = uri::parse(text, uri_mode::lenient);
  if (!want_valid) {
    return parsed.has_value() ? "parsed, but the case is invalid" : "";
  }
  if (!parsed.has_value()) return "rejected: " + parsed.error().message;
  const uri& u = *parsed;
  if (want_warning != !u.warnings().empty()) {
    return want_warning ? "no warning, one expected" : "unexpected warning: " + u.warnings()[0];
  }
  simdjson::dom::array hosts;
  if (t["hosts"].get(hosts) == simdjson::SUCCESS) {
    if (hosts.size() != u.hosts().size()) return "host count differs";
    std::size_t i = 0;
    for (auto h : hosts) {
      const host& got = u.hosts()[i++];
      if (got.name != h["host"].get_string().value_unsafe()) return "host " + got.name + " differs";
      std::string_view type;
      if (h["type"].get(type) == simdjson::SUCCESS && type != host_kind(got.type)) {
        return "host " + got.name + " has type " + host_kind(got.type);
      }
      int64_t port = 0;
      if (h["port"].get(port) == simdjson::SUCCESS) {
        if (!got.port || *got.port != port) return "port of " + got.name + " differs";
      } else if (got.port) {
        return "port of " + got.name + " given but none expected";
      }
    }
  }
  simdjson::dom::object auth;
  if (t["auth"].get(auth) == simdjson::SUCCESS) {
    const auto check = [&](const char* field, std::optional<std::string_view> got) -> std::string {
      std::string_view want;
      if (auth[field].get(want) == simdjson::SUCCESS) {
        if (!got || *got != want) return std::string(field) + " differs";
      } else if (auth[field].is_null() && got) {
        return std::string(field) + " given but none expected";
      }
      return "";
    };
    const auto password = u.password() ? std::optional(u.password()->reveal()) : std::nullopt;
    for (auto r : {check("username", u.username()), check("password", password),
                   check("db", u.database())}) {
      if (!r.empty()) return r;
    }
  }
  simdjson::dom::object options;
  if (t["options"].get(options) == simdjson::SUCCESS) {
    for (auto [key, value] : options) {
      auto r = compare_option(u, lower(key), value);
      if (!r.empty()) return r;
    }
  }
  return "";
}

// Why a case is outside what oid supports, or "" when it uses only supported parts.
std::string unsupported_reason(std::string_view text) {
  const auto& supported = uri::supported_options();
  std::set<std::string> unknown;
  for (const auto& name : option_names(text)) {
    if (std::find(supported.begin(), supported.end(), name) == supported.end()) {
      unknown.insert(name);
    }
  }
  std::string out;
  for (const auto& name : unknown) out += (out.empty() ? "option " : ", ") + name;
  // Mechanisms oid does not implement are refused (oid::mongo::errc::unsupported) however valid the
  // case.
  const std::string lowered = lower(text);
  for (const char* m : {"gssapi", "mongodb-aws", "mongodb-oidc"}) {
    if (lowered.find(std::string("authmechanism=") + m) != std::string::npos) {
      out += (out.empty() ? "" : ", ") + std::string("authMechanism ") + m + " (not implemented)";
    }
  }
  return out;
}

TEST(MongoUriSpecTest, ConnectionStringAndUriOptionsSuites) {
  const fs::path dirs[] = {oid::testing::spec_data_dir("connection-string"),
                           oid::testing::spec_data_dir("uri-options")};
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) {
      OID_SKIP_OR_FAIL_IN_CI("the specification tests are not here: "
                             << dir << " (scripts/spec-data.sh fetches them)");
    }
  }
  int ran = 0, passed = 0;
  std::vector<std::string> not_applicable;
  simdjson::dom::parser parser;
  for (const auto& dir : dirs) {
    for (const auto& file : oid::testing::json_files(dir)) {
      if (file.filename() == kCredentialDisclosure) continue;  // its own test below
      simdjson::dom::element doc;
      ASSERT_EQ(parser.load(file.string()).get(doc), simdjson::SUCCESS) << file;
      simdjson::dom::array tests;
      ASSERT_EQ(doc["tests"].get(tests), simdjson::SUCCESS) << file;
      for (auto t : tests) {
        const std::string_view description = t["description"].get_string().value_unsafe();
        const std::string_view text = t["uri"].get_string().value_unsafe();
        ++ran;
        const std::string failure = check_case(t);
        if (failure.empty()) {
          ++passed;
          continue;
        }
        const std::string reason = unsupported_reason(text);
        const std::string where = file.filename().string() + ": " + std::string(description);
        if (!reason.empty()) {
          not_applicable.push_back(where + " [" + reason + "]");
          continue;
        }
        ADD_FAILURE() << where << "\n  uri: " << text << "\n  " << failure;
      }
    }
  }
  std::cout << "connection string spec: " << ran << " cases, " << passed << " passed, "
            << not_applicable.size() << " not applicable (unsupported options):\n";
  for (const auto& n : not_applicable) std::cout << "  " << n << '\n';
  EXPECT_GT(ran, 0);
}

// Credential disclosure: whatever a URI of the file gets (an error, warnings), no message may
// hold the sentinel password, as it is or percent-encoded, in any case of letters (option names
// are lower-cased, and an undecoded echo still discloses it). Both parsing modes.
TEST(MongoUriSpecTest, CredentialDisclosureSuite) {
  const fs::path file = oid::testing::spec_data_dir("connection-string") / kCredentialDisclosure;
  if (!fs::exists(file)) {
    OID_SKIP_OR_FAIL_IN_CI(
        "the specification tests are not here: " << file << " (scripts/spec-data.sh fetches them)");
  }
  const std::string forms[] = {"sentinelpassword1234",
                               "%53%45%4e%54%49%4e%45%4c%70%61%73%73%77%6f%72%64%31%32%33%34"};
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(file.string()).get(doc), simdjson::SUCCESS) << file;
  simdjson::dom::array tests;
  ASSERT_EQ(doc["tests"].get(tests), simdjson::SUCCESS) << file;
  int ran = 0, messages = 0;
  for (auto t : tests) {
    std::string_view description, text;
    ASSERT_EQ(t["description"].get(description), simdjson::SUCCESS);
    ASSERT_EQ(t["uri"].get(text), simdjson::SUCCESS);
    ++ran;
    for (const auto mode : {uri_mode::strict, uri_mode::lenient}) {
      const auto parsed = uri::parse(text, mode);
      std::vector<std::string> said;
      if (!parsed.has_value()) said.push_back(parsed.error().message);
      if (parsed.has_value()) said = parsed->warnings();
      for (const auto& message : said) {
        ++messages;
        for (const auto& form : forms) {
          if (lower(message).find(form) == std::string::npos) continue;
          ADD_FAILURE() << description << " (" << (mode == uri_mode::strict ? "strict" : "lenient")
                        << "): a message discloses the password: " << message;
        }
      }
    }
  }
  std::cout << "credential disclosure spec: " << ran << " cases, " << messages
            << " messages read\n";
  EXPECT_GT(ran, 0);
}

}  // namespace
