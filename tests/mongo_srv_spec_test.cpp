// Runs MongoDB's initial DNS seedlist discovery tests (dns-seedlist/{replica-set,sharded,
// load-balanced} of scripts/spec-data.sh) against uri::parse and resolve_srv, with the records of
// tests/data/dns-seedlist.zone served by a real DNS server on loopback: scripts/test.sh
// starts NSD (scripts/dns-server.sh) and exports its address as OID_DNS_SERVER. Without it the
// test skips, except in CI.
//
// What each case checks: the error, or the seeds (the hosts the SRV records give, after
// srvMaxHosts), numSeeds, the options (TXT record merged with the connection string) and the
// parsed options (user, password, database). Not checked: `hosts`, `numHosts` and `ping`, which
// are what a client finds after connecting to the deployment the specification's README asks for
// (a TLS replica set repl0 on localhost:27017-27019, mongoses on 27017/27018, a load balancer on
// 8000, all resolving localhost.test.build.10gen.cc); this machine runs none of them. Those
// parts are counted and printed, not silently dropped. mongo_srv_test.cpp connects for real,
// through a record set of its own that points at FerretDB.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <oid/mongo/srv.hpp>
#include <oid/mongo/uri.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "detail/ascii.hpp"
#include "support/ci.hpp"
#include "support/spec_data.hpp"

namespace {

namespace fs = std::filesystem;
using oid::mongo::uri;
using oid::mongo::uri_mode;

struct tally {
  int cases = 0;
  int parts_checked = 0;
  int parts_unchecked = 0;  // hosts, numHosts, ping
  std::vector<std::string> failures;
  std::vector<std::string> not_applicable;  // cases not run, with the reason
};

// The options of `text` that oid does not implement, or "" when it implements them all. A case
// that sets one is listed, not run: today srvAllowedHostsSuffix (the 11 srvAllowedHostsSuffix-*
// files), which relaxes the rule that every SRV target lies under the SRV name's parent domain
// and must refuse a public suffix (COM, .cc), so it needs the public suffix list; oid keeps the
// strict rule and ignores the option with a warning, as for any unknown option.
std::string unsupported_options(std::string_view text) {
  const auto q = text.find('?');
  if (q == std::string_view::npos) return "";
  const auto& supported = uri::supported_options();
  std::string out;
  std::string_view options = text.substr(q + 1);
  while (!options.empty()) {
    const std::string_view pair = options.substr(0, options.find('&'));
    options.remove_prefix(std::min(options.size(), pair.size() + 1));
    const std::string key = oid::detail::lower_ascii(pair.substr(0, pair.find('=')));
    if (std::find(supported.begin(), supported.end(), key) == supported.end()) {
      out += (out.empty() ? "" : ", ") + key;
    }
  }
  return out;
}

std::string json(simdjson::dom::element e) { return simdjson::to_string(e); }

// Compares one expected option; "" when it matches.
std::string compare_option(const uri& u, const std::string& key, simdjson::dom::element want) {
  const auto differs = [&](const std::string& got) {
    return key + ": want " + json(want) + ", got " + got;
  };
  const auto as_bool = [&](const std::optional<bool>& got) -> std::string {
    bool w = false;
    if (want.get(w) != simdjson::SUCCESS || got != w) {
      return differs(got ? (*got ? "true" : "false") : "nothing");
    }
    return "";
  };
  const auto as_string = [&](const std::optional<std::string>& got) -> std::string {
    std::string_view w;
    if (want.get(w) != simdjson::SUCCESS || got != w) return differs(got.value_or("nothing"));
    return "";
  };
  if (key == "ssl" || key == "tls") return as_bool(u.tls());
  if (key == "authsource") return as_string(u.auth_source());
  if (key == "directconnection") return as_bool(u.direct_connection());
  if (key == "srvservicename") return as_string(u.srv_service_name());
  if (key == "replicaset") return as_string(u.replica_set());
  if (key == "loadbalanced") return as_bool(u.load_balanced());
  if (key == "srvmaxhosts") {
    int64_t w = 0;
    const auto& got = u.srv_max_hosts();
    if (want.get(w) != simdjson::SUCCESS || !got || *got != w) {
      return differs(got ? std::to_string(*got) : "nothing");
    }
    return "";
  }
  return "option " + key + " is not checked by this runner";
}

std::string compare_parsed(const uri& u, const std::string& key, simdjson::dom::element want) {
  std::string_view w;
  if (want.get(w) != simdjson::SUCCESS) return key + ": not a string";
  std::optional<std::string> got;
  if (key == "user") got = u.username();
  if (key == "password" && u.password()) got = std::string(u.password()->reveal());
  if (key == "db" || key == "defaultDatabase") got = u.database();
  if (key == "auth_database") got = u.auth_database();
  if (got != w) return key + ": want " + std::string(w) + ", got " + got.value_or("nothing");
  return "";
}

// Checks one case; appends what differs to `t.failures`.
void check_case(const fs::path& file, simdjson::dom::element c, tally& t) {
  ++t.cases;
  const std::string where = file.parent_path().filename().string() + "/" + file.filename().string();
  const std::string_view text = c["uri"].get_string().value_unsafe();
  if (const auto unknown = unsupported_options(text); !unknown.empty()) {
    t.not_applicable.push_back(where + " [option " + unknown + " is not implemented]");
    return;
  }
  const auto fail = [&](const std::string& what) {
    t.failures.push_back(where + "\n  uri: " + std::string(text) + "\n  " + what);
  };
  for (const char* part : {"hosts", "numHosts", "ping"}) {
    if (c[part].error() == simdjson::SUCCESS) ++t.parts_unchecked;
  }
  bool want_error = false;
  if (c["error"].get(want_error) != simdjson::SUCCESS) want_error = false;
  auto parsed = uri::parse(text, uri_mode::lenient);
  auto resolved = parsed ? oid::mongo::resolve_srv(*parsed) : parsed;
  ++t.parts_checked;  // the error, or its absence
  if (want_error) {
    if (resolved) fail("resolved, but the case expects an error");
    return;
  }
  if (!resolved) return fail("failed: " + resolved.error().message);
  const uri& u = *resolved;

  std::multiset<std::string> got;
  for (const auto& h : u.hosts()) got.insert(h.name + ":" + std::to_string(h.port_or_default()));
  simdjson::dom::array seeds;
  if (c["seeds"].get(seeds) == simdjson::SUCCESS && seeds.size() > 0) {
    ++t.parts_checked;
    std::multiset<std::string> want;
    for (auto s : seeds) want.insert(std::string(s.get_string().value_unsafe()));
    int64_t num_seeds = 0;
    const bool subset = c["numSeeds"].get(num_seeds) == simdjson::SUCCESS;
    // With numSeeds, seeds lists every record and the client picks numSeeds of them.
    const bool ok =
        subset ? std::includes(want.begin(), want.end(), got.begin(), got.end()) : want == got;
    if (!ok) {
      std::string list;
      for (const auto& g : got) list += g + " ";
      fail("seeds differ: got " + list);
    }
  }
  int64_t num_seeds = 0;
  if (c["numSeeds"].get(num_seeds) == simdjson::SUCCESS) {
    ++t.parts_checked;
    if (static_cast<int64_t>(u.hosts().size()) != num_seeds) {
      fail("numSeeds: want " + std::to_string(num_seeds) + ", got " +
           std::to_string(u.hosts().size()));
    }
  }
  simdjson::dom::object options;
  if (c["options"].get(options) == simdjson::SUCCESS) {
    for (auto [key, value] : options) {
      ++t.parts_checked;
      if (auto r = compare_option(u, oid::detail::lower_ascii(key), value); !r.empty()) fail(r);
    }
  }
  simdjson::dom::object parsed_options;
  if (c["parsed_options"].get(parsed_options) == simdjson::SUCCESS) {
    for (auto [key, value] : parsed_options) {
      ++t.parts_checked;
      if (auto r = compare_parsed(u, std::string(key), value); !r.empty()) fail(r);
    }
  }
}

TEST(MongoSrvSpecTest, InitialDnsSeedlistDiscoverySuite) {
  const fs::path root = oid::testing::spec_data_dir("dns-seedlist");
  if (!fs::is_directory(root)) {
    OID_SKIP_OR_FAIL_IN_CI(
        "the DNS seedlist tests are not here: " << root << " (scripts/spec-data.sh fetches them)");
  }
  if (oid::testing::environment("OID_DNS_SERVER").empty()) {
    OID_SKIP_OR_FAIL_IN_CI(
        "OID_DNS_SERVER is not set; run scripts/test.sh (it starts a DNS server serving "
        "tests/data/dns-seedlist.zone) or scripts/dns-server.sh start PIDFILE and export what it "
        "prints");
  }
  tally t;
  simdjson::dom::parser parser;
  for (const char* suite : {"replica-set", "sharded", "load-balanced"}) {
    const auto files = oid::testing::json_files(root / suite);
    EXPECT_FALSE(files.empty()) << suite;
    for (const auto& file : files) {
      simdjson::dom::element c;
      ASSERT_EQ(parser.load(file.string()).get(c), simdjson::SUCCESS) << file;
      check_case(file, c, t);
    }
  }
  for (const auto& f : t.failures) ADD_FAILURE() << f;
  std::cout << "dns-seedlist spec: " << t.cases << " cases; " << t.parts_checked
            << " parts checked (error, seeds, numSeeds, options, parsed_options), "
            << t.parts_checked - static_cast<int>(t.failures.size()) << " passed; "
            << t.parts_unchecked
            << " hosts/numHosts/ping parts not checked (they need the TLS deployment of the "
               "specification's README on fixed localhost ports); "
            << t.not_applicable.size() << " cases not run:\n";
  for (const auto& n : t.not_applicable) std::cout << "  " << n << '\n';
  EXPECT_EQ(t.cases, 66);  // the files of scripts/spec-data.sh's pinned suite
  EXPECT_EQ(t.not_applicable.size(), 11u);
}

}  // namespace
