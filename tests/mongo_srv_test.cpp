// mongodb+srv:// beyond the specification's suite (mongo_srv_spec_test.cpp): the checks made
// before any lookup, the errors of failed lookups (naming the record and the server asked),
// rescan_srv (SRV polling), and a real connection: a zone made here points
// _mongodb._tcp.ferret.0.0.1 at the FerretDB of MONGODB_URI, served by a DNS server of its own
// (scripts/dns-server.sh), and `oid mongo ping mongodb+srv://ferret.0.0.1/?tls=false` answers.
// The lookups need OID_DNS_SERVER (scripts/test.sh sets it) and the connection MONGODB_URI;
// without them those tests skip, except in CI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/srv.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/objectid.hpp>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "mongo/cluster/srv_poller.hpp"
#include "mongo/sdam/sdam.hpp"
#include "support/ci.hpp"
#include "support/matchers.hpp"
#include "support/run_shell.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::mongo::host;
using oid::mongo::rescan_srv;
using oid::mongo::resolve_srv;
using oid::mongo::uri;
using oid::mongo::uri_mode;
using oid::testing::HasError;
using oid::testing::HasErrorAt;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Sets an environment variable for the scope of a test and puts the old value back.
class scoped_env {
 public:
  scoped_env(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;
  ~scoped_env() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::string seed(const host& h) { return h.name + ":" + std::to_string(h.port_or_default()); }

TEST(MongoSrvTest, ParsesWithoutLookingUpAndTurnsTlsOn) {
  const auto u = uri::parse(
      "mongodb+srv://u:p@Cluster0.Example.NET/app?srvServiceName=db-x&"
      "srvMaxHosts=3&appName=a");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->srv_name(), "cluster0.example.net");
  EXPECT_FALSE(u->srv_resolved());
  EXPECT_EQ(u->srv_service_name(), "db-x");
  EXPECT_EQ(u->srv_max_hosts(), 3u);
  EXPECT_EQ(u->tls(), true);
  EXPECT_EQ(u->database(), "app");
  ASSERT_EQ(u->hosts().size(), 1u);
  EXPECT_FALSE(u->hosts()[0].port.has_value());
  EXPECT_EQ(u->to_string().find(":p@"), std::string::npos);  // the password is hidden

  EXPECT_EQ(uri::parse("mongodb+srv://c.example.net/?tls=false")->tls(), false);
  EXPECT_EQ(uri::parse("mongodb+srv://c.example.net/?ssl=false")->tls(), false);
  EXPECT_EQ(uri::parse("mongodb+srv://c.example.net/?srvMaxHosts=0&replicaSet=rs")->srv_max_hosts(),
            0u);
  EXPECT_FALSE(uri::parse("mongodb://h/")->srv_name().has_value());
  // A name of one or two labels is accepted (the specification's rule since 2024).
  EXPECT_TRUE(uri::parse("mongodb+srv://localhost").has_value());
}

TEST(MongoSrvTest, RefusesWhatTheSpecificationRefusesBeforeDns) {
  struct test_case {
    const char* text;
    const char* says;
    std::size_t offset;
  };
  const test_case cases[] = {
      {"mongodb+srv://a.example.com:27017", "no port", 14},
      {"mongodb+srv://a.example.com,b.example.com", "exactly one host", 14},
      {"mongodb+srv://[::1]", "host name", 14},
      {"mongodb+srv://%2Ftmp%2Fm.sock", "host name", 14},
      {"mongodb+srv://a.example.com/?directConnection=true", "directConnection", 14},
      {"mongodb+srv://a.example.com/?srvMaxHosts=1&replicaSet=rs", "replicaSet", 14},
      {"mongodb+srv://a.example.com/?srvMaxHosts=2&loadBalanced=true", "loadBalanced=true", 14},
      {"mongodb://h/?srvServiceName=mongodb", "mongodb+srv://", 10},
      {"mongodb://h/?srvMaxHosts=1", "mongodb+srv://", 10},
      {"mongodb+srv://a.example.com/?srvMaxHosts=-1", "srvMaxHosts", 41},
      {"mongodb+srv://a.example.com/?srvServiceName=-x", "srvServiceName", 44},
      {"mongodb+srv://a.example.com/?srvServiceName=a_b", "srvServiceName", 44},
      {"mongodb+srv://a.example.com/?srvServiceName=123", "srvServiceName", 44},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto u = uri::parse(c.text, uri_mode::strict);
    ASSERT_THAT(u, HasErrorAt(oid::mongo::errc::invalid_uri, c.offset));
    EXPECT_THAT(u.error().message, HasSubstr(c.says));
  }
  // Lenient mode ignores a bad value with a warning, as for any option.
  const auto lenient = uri::parse("mongodb+srv://a.example.com/?srvMaxHosts=x", uri_mode::lenient);
  ASSERT_TRUE(lenient.has_value());
  EXPECT_FALSE(lenient->srv_max_hosts().has_value());
  EXPECT_EQ(lenient->warnings().size(), 1u);
}

TEST(MongoSrvTest, AMongodbUriIsResolvedAsItIs) {
  const auto u = uri::parse("mongodb://h:1/");
  const auto r = resolve_srv(*u);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(seed(r->hosts()[0]), "h:1");
  EXPECT_FALSE(r->srv_resolved());
  EXPECT_THAT(rescan_srv(*u, u->hosts()), HasError(oid::mongo::errc::invalid_uri));
}

#define OID_DNS_SERVER_OR_SKIP()                                         \
  do {                                                                   \
    if (oid::testing::environment("OID_DNS_SERVER").empty()) {           \
      OID_SKIP_OR_FAIL_IN_CI(                                            \
          "OID_DNS_SERVER is not set; run scripts/test.sh (it starts a " \
          "DNS server on loopback)");                                    \
    }                                                                    \
  } while (false)

TEST(MongoSrvTest, ResolvesIntoTheUriItStandsFor) {
  OID_DNS_SERVER_OR_SKIP();
  const auto u = uri::parse("mongodb+srv://us%40r:pw@test5.test.build.10gen.cc/my%3Fdb?appName=x");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  const auto r = resolve_srv(*u);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->srv_resolved());
  ASSERT_EQ(r->hosts().size(), 1u);
  EXPECT_EQ(seed(r->hosts()[0]), "localhost.test.build.10gen.cc:27017");
  EXPECT_EQ(r->username(), "us@r");
  ASSERT_TRUE(r->password().has_value());
  EXPECT_EQ(r->password()->reveal(), "pw");
  EXPECT_EQ(r->database(), "my?db");
  EXPECT_EQ(r->auth_source(), "thisDB");  // from the TXT record
  EXPECT_EQ(r->app_name(), "x");
  EXPECT_EQ(r->tls(), true);
  EXPECT_EQ(r->to_string(), u->to_string());  // still the string as given, password hidden
  EXPECT_EQ(r->srv_name(), "test5.test.build.10gen.cc");
  // Resolving again changes nothing (client::create does it for an unresolved uri only).
  EXPECT_EQ(seed(resolve_srv(*r)->hosts()[0]), "localhost.test.build.10gen.cc:27017");
}

TEST(MongoSrvTest, FailedLookupsNameTheRecordAndTheServer) {
  OID_DNS_SERVER_OR_SKIP();
  const auto none = resolve_srv(*uri::parse("mongodb+srv://test4.test.build.10gen.cc/"));
  ASSERT_THAT(none, HasError(oid::mongo::errc::connection_failed));
  EXPECT_THAT(none.error().message,
              HasSubstr("SRV lookup of _mongodb._tcp.test4.test.build.10gen.cc"));
  EXPECT_THAT(none.error().message, HasSubstr("NXDOMAIN"));
  EXPECT_THAT(none.error().message, HasSubstr("OID_DNS_SERVER"));

  const auto service =
      resolve_srv(*uri::parse("mongodb+srv://test1.test.build.10gen.cc/?srvServiceName=other"));
  ASSERT_THAT(service, HasError(oid::mongo::errc::connection_failed));
  EXPECT_THAT(service.error().message, HasSubstr("_other._tcp.test1.test.build.10gen.cc"));

  const auto two_txt = resolve_srv(*uri::parse("mongodb+srv://test6.test.build.10gen.cc/"));
  ASSERT_THAT(two_txt, HasError(oid::mongo::errc::invalid_uri));
  EXPECT_THAT(two_txt.error().message, HasSubstr("2 TXT records"));
  const auto txt_option = resolve_srv(*uri::parse("mongodb+srv://test10.test.build.10gen.cc/"));
  ASSERT_THAT(txt_option, HasError(oid::mongo::errc::invalid_uri));
  EXPECT_THAT(txt_option.error().message, HasSubstr("socketTimeoutMS"));
  const auto domain = resolve_srv(*uri::parse("mongodb+srv://test19.test.build.10gen.cc/"));
  ASSERT_THAT(domain, HasError(oid::mongo::errc::invalid_uri));
  EXPECT_THAT(domain.error().message, HasSubstr("localhost.evil.build.10gen.cc"));

  {
    scoped_env bad("OID_DNS_SERVER", "dns.example.com:53");
    const auto r = resolve_srv(*uri::parse("mongodb+srv://test1.test.build.10gen.cc/"));
    ASSERT_THAT(r, HasError(oid::mongo::errc::connection_failed));
    EXPECT_THAT(r.error().message, HasSubstr("OID_DNS_SERVER"));
  }
}

TEST(MongoSrvTest, RescanKeepsListedHostsAndAddsNewOnesUpToSrvMaxHosts) {
  OID_DNS_SERVER_OR_SKIP();
  host kept{host::kind::hostname, "localhost.test.build.10gen.cc", 27018};
  host gone{host::kind::hostname, "localhost.test.build.10gen.cc", 27019};
  const auto all = uri::parse("mongodb+srv://test1.test.build.10gen.cc/");
  auto r = rescan_srv(*all, {gone, kept});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  ASSERT_EQ(r->hosts.size(), 2u);
  EXPECT_EQ(seed(r->hosts[0]), "localhost.test.build.10gen.cc:27018");  // kept first
  EXPECT_EQ(seed(r->hosts[1]), "localhost.test.build.10gen.cc:27017");  // then the new one
  EXPECT_EQ(r->ttl, std::chrono::seconds(86400));
  EXPECT_EQ(r->rescan_after, std::chrono::seconds(86400));

  const auto one = uri::parse("mongodb+srv://test1.test.build.10gen.cc/?srvMaxHosts=1");
  r = rescan_srv(*one, {kept});
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->hosts.size(), 1u);
  EXPECT_EQ(seed(r->hosts[0]), "localhost.test.build.10gen.cc:27018");
  r = rescan_srv(*one, {gone});  // replaced by one of the two listed
  ASSERT_TRUE(r.has_value());
  ASSERT_EQ(r->hosts.size(), 1u);
  EXPECT_THAT(seed(r->hosts[0]), HasSubstr("localhost.test.build.10gen.cc:2701"));

  // A name whose one record is outside the domain: nothing valid, keep the current hosts.
  EXPECT_THAT(rescan_srv(*uri::parse("mongodb+srv://test12.test.build.10gen.cc/"), {kept}),
              HasError(oid::mongo::errc::connection_failed));
  EXPECT_THAT(rescan_srv(*uri::parse("mongodb+srv://test4.test.build.10gen.cc/"), {kept}),
              HasError(oid::mongo::errc::connection_failed));
}

// The port of a mongodb://127.0.0.1:PORT/ connection string; 0 when it has another form.
int loopback_port(const std::string& text) {
  const std::string prefix = "mongodb://127.0.0.1:";
  if (!text.starts_with(prefix)) return 0;
  return std::atoi(text.c_str() + prefix.size());
}

// A DNS server of the test's own (scripts/dns-server.sh) serving the spec's zone and `zone`;
// stopped at the end of the scope. `started` is false (and `error` says why) when it could not
// start.
struct own_dns_server {
  explicit own_dns_server(const std::string& zone) {
    const auto r = oid::testing::run_shell(script + " start " + pidfile + " " + zone);
    started = r.status == 0;
    error = r.err;
    address = r.out;
    while (!address.empty() && address.back() == '\n') address.pop_back();
  }
  own_dns_server(const own_dns_server&) = delete;
  own_dns_server& operator=(const own_dns_server&) = delete;
  ~own_dns_server() { oid::testing::run_shell(script + " stop " + pidfile); }

  const std::string script = std::string(OID_SOURCE_DIR) + "/scripts/dns-server.sh";
  const std::string pidfile = oid::testing::scratch_path("dns.pid");
  bool started = false;
  std::string error, address;  // address: 127.0.0.1:PORT, for OID_DNS_SERVER
};

// A zone naming the server at 127.0.0.1:`port` as ferret.0.0.1 (SRV), with TXT `options`. The
// SRV target must be a name the client's getaddrinfo() finds without this DNS server: a dotted
// quad is one, and 127.0.0.1 lies under ferret.0.0.1's domain, 0.0.1. TTL 30 s: a rescan waits
// the 60 s minimum.
std::string ferret_zone(int port, const std::string& options) {
  const std::string zone = oid::testing::scratch_path("ferret.zone");
  std::ofstream(zone) << "$ORIGIN 0.0.1.\n$TTL 30\n"
                      << "@ IN SOA ns.0.0.1. hostmaster.0.0.1. 1 3600 600 86400 30\n"
                      << "@ IN NS ns.0.0.1.\nns IN A 127.0.0.1\n"
                      << "_mongodb._tcp.ferret 30 IN SRV 0 0 " << port << " 127.0.0.1.\n"
                      << "ferret 30 IN TXT \"" << options << "\"\n";
  return zone;
}

TEST(MongoSrvTest, PingsFerretDbThroughItsOwnSrvRecords) {
  std::string server;
  OID_SERVER_URI_OR_SKIP("MONGODB_URI", server);
  const int port = loopback_port(server);
  if (port == 0) GTEST_SKIP() << "MONGODB_URI is not mongodb://127.0.0.1:PORT/: " << server;
  own_dns_server dns_server(ferret_zone(port, "authSource=admin"));
  if (!dns_server.started) {
    OID_SKIP_OR_FAIL_IN_CI(
        "scripts/dns-server.sh could not start a DNS server: " << dns_server.error);
  }
  scoped_env dns("OID_DNS_SERVER", dns_server.address);

  const std::string text = "mongodb+srv://ferret.0.0.1/?tls=false&appName=srv-test";
  const auto u = uri::parse(text);
  ASSERT_TRUE(u.has_value()) << u.error().message;
  const auto resolved = resolve_srv(*u);
  ASSERT_TRUE(resolved.has_value()) << resolved.error().message;
  ASSERT_EQ(resolved->hosts().size(), 1u);
  EXPECT_EQ(seed(resolved->hosts()[0]), "127.0.0.1:" + std::to_string(port));
  EXPECT_EQ(resolved->hosts()[0].type, host::kind::ipv4);
  EXPECT_EQ(resolved->auth_source(), "admin");
  EXPECT_EQ(resolved->tls(), false);

  // The client resolves a mongodb+srv:// string itself, then talks to the host found.
  auto client = oid::mongo::client::create(text);
  ASSERT_TRUE(client.has_value()) << client.error().message;
  EXPECT_EQ(seed(client->uri().hosts()[0]), "127.0.0.1:" + std::to_string(port));
  oid::bson::builder ping;
  ping.append_int32("ping", 1);
  const auto pong = client->run_command("admin", ping.view());
  ASSERT_TRUE(pong.has_value()) << pong.error().message;

  // The oid command, as a user runs it.
  const auto cli = oid::testing::run_cli({"mongo", "ping", text});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_FALSE(cli.out.empty());

  const auto rescan = rescan_srv(*u, resolved->hosts());
  ASSERT_TRUE(rescan.has_value()) << rescan.error().message;
  EXPECT_EQ(rescan->hosts, resolved->hosts());
  EXPECT_EQ(rescan->ttl, std::chrono::seconds(30));
  EXPECT_EQ(rescan->rescan_after, std::chrono::seconds(60));
}

// A full mongodb+srv:// connection to a replica set: FerretDB started with --repl-set-name
// (scripts/test.sh exports MONGODB_RS_URI), named by its own SRV record, the set's name in TXT.
TEST(MongoSrvTest, ReachesAFerretDbReplicaSetThroughItsSrvAndTxtRecords) {
  std::string server;
  OID_SERVER_URI_OR_SKIP("MONGODB_RS_URI", server);
  const auto rs = uri::parse(server);
  ASSERT_TRUE(rs.has_value()) << rs.error().message;
  const int port = loopback_port(server);
  if (port == 0 || !rs->replica_set()) {
    GTEST_SKIP() << "MONGODB_RS_URI is not mongodb://127.0.0.1:PORT/?replicaSet=NAME: " << server;
  }
  const std::string set = *rs->replica_set();
  own_dns_server dns_server(ferret_zone(port, "replicaSet=" + set + "&authSource=admin"));
  if (!dns_server.started) {
    OID_SKIP_OR_FAIL_IN_CI(
        "scripts/dns-server.sh could not start a DNS server: " << dns_server.error);
  }
  scoped_env dns("OID_DNS_SERVER", dns_server.address);

  const std::string text = "mongodb+srv://ferret.0.0.1/?tls=false&serverSelectionTimeoutMS=5000";
  auto client = oid::mongo::client::create(text);
  ASSERT_TRUE(client.has_value()) << client.error().message;
  EXPECT_EQ(client->uri().replica_set(), set);
  auto coll = client->collection("oid_srv_test", "rs" + oid::generate().to_hex());
  oid::bson::builder doc;
  doc.append_int32("n", 1);
  const auto inserted = coll.insert_one(doc.view());
  ASSERT_TRUE(inserted.has_value()) << inserted.error().message;
  const auto n = coll.count_documents(oid::bson::builder().view());
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, 1);
  // The set was discovered through the member list, not used directly.
  const auto t = client->topology();
  EXPECT_EQ(t.type, oid::mongo::topology_type::replica_set_with_primary);
  EXPECT_EQ(t.set_name, set);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers.begin()->second.type, oid::mongo::server_type::rs_primary);
  EXPECT_TRUE(coll.drop().has_value());

  const auto cli = oid::testing::run_cli({"mongo", "topology", text});
  EXPECT_EQ(cli.status, 0) << cli.err;
  EXPECT_THAT(cli.out, HasSubstr("ReplicaSetWithPrimary"));
}

// ---------------------------------------------------------------------------------------------
// SRV polling: the apply step as a pure function, then a client following a zone that changes.

oid::mongo::topology_description sharded_of(const std::vector<std::string>& addresses) {
  oid::mongo::topology_settings settings;
  settings.seeds = addresses;
  auto t = oid::mongo::open_topology(settings).description;
  t.type = oid::mongo::topology_type::sharded;
  for (auto& [address, server] : t.servers) server.type = oid::mongo::server_type::mongos;
  return t;
}

// "opening ADDRESS", "closed ADDRESS", "topology" for each event.
std::vector<std::string> names_of(const std::vector<oid::mongo::sdam_event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) {
    if (const auto* o = std::get_if<oid::mongo::server_opening_event>(&e)) {
      out.push_back("opening " + o->address);
    } else if (const auto* c = std::get_if<oid::mongo::server_closed_event>(&e)) {
      out.push_back("closed " + c->address);
    } else if (std::holds_alternative<oid::mongo::topology_description_changed_event>(e)) {
      out.push_back("topology");
    } else {
      out.push_back("other");
    }
  }
  return out;
}

TEST(MongoSrvPollingTest, ApplyRemovesTheGoneAddsTheNewAndLeavesTheRestAlone) {
  const auto before = sharded_of({"a.example.com:27017", "b.example.com:27017"});
  const auto u = oid::mongo::apply_srv_hosts(before, {"B.example.com:27017", "c.example.com:1"});
  EXPECT_EQ(names_of(u.events),
            (std::vector<std::string>{"opening c.example.com:1", "closed a.example.com:27017",
                                      "topology"}));
  ASSERT_EQ(u.description.servers.size(), 2u);
  // b keeps its description (a mongos); c is new and Unknown, with a pool of generation 0.
  EXPECT_EQ(u.description.find("b.example.com:27017")->type, oid::mongo::server_type::mongos);
  EXPECT_EQ(u.description.find("c.example.com:1")->type, oid::mongo::server_type::unknown);
  EXPECT_EQ(u.description.pool_generation("c.example.com:1"), 0u);
  EXPECT_EQ(u.description.pool_generations.count("a.example.com:27017"), 0u);
  EXPECT_EQ(u.description.type, oid::mongo::topology_type::sharded);
  EXPECT_TRUE(u.cleared_pools.empty());

  // The same hosts: nothing happens. No host (nothing valid was found): nothing happens.
  EXPECT_TRUE(oid::mongo::apply_srv_hosts(before, {"b.example.com:27017", "a.example.com:27017"})
                  .events.empty());
  EXPECT_TRUE(oid::mongo::apply_srv_hosts(before, {}).events.empty());
  EXPECT_EQ(oid::mongo::apply_srv_hosts(before, {}).description, before);

  // An Unknown topology changes too; a replica set or a Single topology never does.
  oid::mongo::topology_settings settings;
  settings.seeds = {"a.example.com:27017"};
  const auto unknown = oid::mongo::open_topology(settings).description;
  EXPECT_EQ(oid::mongo::apply_srv_hosts(unknown, {"c.example.com:1"}).description.servers.size(),
            1u);
  EXPECT_NE(
      oid::mongo::apply_srv_hosts(unknown, {"c.example.com:1"}).description.find("c.example.com:1"),
      nullptr);
  settings.replica_set = "rs0";
  const auto rs = oid::mongo::open_topology(settings).description;
  EXPECT_EQ(oid::mongo::apply_srv_hosts(rs, {"c.example.com:1"}).description, rs);
  settings.replica_set.reset();
  settings.direct_connection = true;
  const auto single = oid::mongo::open_topology(settings).description;
  EXPECT_EQ(oid::mongo::apply_srv_hosts(single, {"c.example.com:1"}).description, single);
}

// A scripted mongos: hello says isdbgrid; other commands get ok: 1.
std::unique_ptr<oid::testing::script_server> scripted_mongos() {
  return std::make_unique<oid::testing::script_server>([](oid::testing::peer& p, int) {
    while (auto m = p.read()) {
      const std::string name = oid::testing::command_name(*m);
      oid::bson::builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        b.append_bool("isWritablePrimary", true).append_string("msg", "isdbgrid");
        b.append_int32("minWireVersion", 0).append_int32("maxWireVersion", 17);
      }
      b.append_double("ok", 1.0);
      p.reply(*m, b.view());
    }
  });
}

int port_of(const oid::testing::script_server& s) { return loopback_port(s.uri()); }

// The zone 0.0.1 with _mongodb._tcp.mongos.0.0.1 pointing at 127.0.0.1 on each of `ports` (TTL 1
// s), written to `path` with SOA serial `serial`.
void write_mongos_zone(const std::string& path, int serial, const std::vector<int>& ports) {
  std::ofstream z(path);
  z << "$ORIGIN 0.0.1.\n$TTL 1\n"
    << "@ IN SOA ns.0.0.1. hostmaster.0.0.1. " << serial << " 3600 600 86400 1\n"
    << "@ IN NS ns.0.0.1.\nns IN A 127.0.0.1\n";
  for (const int port : ports) z << "_mongodb._tcp.mongos 1 IN SRV 0 0 " << port << " 127.0.0.1.\n";
}

TEST(MongoSrvPollingTest, AClientFollowsTheMongosTheSrvRecordsList) {
  // Three scripted mongos; the zone lists the first two, then the last two, then none.
  std::array<std::unique_ptr<oid::testing::script_server>, 3> mongos;
  std::array<std::string, 3> address;
  std::vector<int> ports;
  for (std::size_t i = 0; i < 3; ++i) {
    mongos[i] = scripted_mongos();
    ports.push_back(port_of(*mongos[i]));
    address[i] = "127.0.0.1:" + std::to_string(ports.back());
  }
  const std::string zone = oid::testing::scratch_path("mongos.zone");
  write_mongos_zone(zone, 1, {ports[0], ports[1]});
  own_dns_server server(zone);
  if (!server.started) {
    OID_SKIP_OR_FAIL_IN_CI("scripts/dns-server.sh could not start a DNS server: " << server.error);
  }
  scoped_env dns("OID_DNS_SERVER", server.address);
  // NSD reads its zone files again on SIGHUP.
  const auto reload = [&](int serial, const std::vector<int>& listed) {
    write_mongos_zone(zone, serial, listed);
    const auto r = oid::testing::run_shell("kill -HUP \"$(cat '" + server.pidfile + "')\"");
    ASSERT_EQ(r.status, 0) << r.err;
  };
  // rescanSRVIntervalMS is at least 60 s; the test cannot wait that long.
  oid::mongo::detail::srv_poller::set_minimum_interval(std::chrono::milliseconds(100));
  struct restore_minimum {
    ~restore_minimum() { oid::mongo::detail::srv_poller::set_minimum_interval(60s); }
  } restore;

  std::mutex m;
  std::vector<std::string> events;
  oid::mongo::client_options options;
  options.on_topology = [&](const oid::mongo::sdam_event& e) {
    std::lock_guard lock(m);
    for (auto& name : names_of({e})) {
      if (name != "other" && name != "topology") events.push_back(std::move(name));
    }
  };
  auto c = oid::mongo::client::create(
      "mongodb+srv://mongos.0.0.1/"
      "?tls=false&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=3000",
      options);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const auto servers = [&c] {
    std::vector<std::string> out;
    for (const auto& [a, s] : c->topology().servers) out.push_back(a);
    return out;
  };
  const auto wait_for = [&](std::vector<std::string> want) {
    std::sort(want.begin(), want.end());
    for (int i = 0; i < 1000 && servers() != want; ++i) std::this_thread::sleep_for(10ms);
    return servers() == want;
  };
  oid::bson::builder ping;
  ping.append_int32("ping", 1);
  ASSERT_TRUE(c->run_command("admin", ping.view()).has_value());
  EXPECT_EQ(c->topology().type, oid::mongo::topology_type::sharded);
  ASSERT_TRUE(wait_for({address[0], address[1]}));

  // The records now list mongos 1 and 2: 0 goes, 2 comes, 1 is left alone.
  reload(2, {ports[1], ports[2]});
  ASSERT_TRUE(wait_for({address[1], address[2]})) << ::testing::PrintToString(servers());
  for (int i = 0;
       i < 500 && c->topology().find(address[2])->type != oid::mongo::server_type::mongos; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(c->topology().find(address[2])->type, oid::mongo::server_type::mongos);
  ASSERT_TRUE(c->run_command("admin", ping.view()).has_value());

  // No record at all: the lookup finds nothing, and the client keeps the mongos it has.
  reload(3, {});
  std::this_thread::sleep_for(1500ms);
  std::vector<std::string> kept{address[1], address[2]};
  std::sort(kept.begin(), kept.end());
  EXPECT_EQ(servers(), kept);

  std::lock_guard lock(m);
  // The first two open together (in the topology's order of addresses), then the rescan's.
  std::vector<std::string> want{"opening " + address[0], "opening " + address[1]};
  std::sort(want.begin(), want.end());
  want.insert(want.end(), {"opening " + address[2], "closed " + address[0]});
  EXPECT_EQ(events, want);
}

// An SRV answer of 150 records (127.0.0.1 at ports 20001 to 20150: a 4 KiB answer, which
// comes over TCP): the client takes at most max_servers (100) of them, chosen at random as
// srvMaxHosts=100 would, and fewer when srvMaxHosts says so; a rescan likewise.
TEST(MongoSrvTest, AnAnswerOfManyRecordsGivesAtMostMaxServersHosts) {
  const std::string zone = oid::testing::scratch_path("many.zone");
  {
    std::ofstream out(zone);
    out << "$ORIGIN 0.0.1.\n$TTL 30\n"
        << "@ IN SOA ns.0.0.1. hostmaster.0.0.1. 1 3600 600 86400 30\n"
        << "@ IN NS ns.0.0.1.\nns IN A 127.0.0.1\n";
    for (int i = 1; i <= 150; ++i) {
      out << "_mongodb._tcp.many 30 IN SRV 0 0 " << 20000 + i << " 127.0.0.1.\n";
    }
  }
  own_dns_server dns_server(zone);
  if (!dns_server.started) {
    OID_SKIP_OR_FAIL_IN_CI(
        "scripts/dns-server.sh could not start a DNS server: " << dns_server.error);
  }
  scoped_env dns("OID_DNS_SERVER", dns_server.address);
  const auto distinct_listed = [](const std::vector<host>& hosts) {
    std::vector<int> ports;
    for (const auto& h : hosts) {
      if (h.name != "127.0.0.1" || !h.port || *h.port <= 20000 || *h.port > 20150) return false;
      ports.push_back(*h.port);
    }
    std::sort(ports.begin(), ports.end());
    return std::adjacent_find(ports.begin(), ports.end()) == ports.end();
  };
  for (const auto& [options, want] : {std::pair<std::string, std::size_t>{"", 100},
                                      {"&srvMaxHosts=500", 100},
                                      {"&srvMaxHosts=7", 7}}) {
    SCOPED_TRACE(options);
    const auto u = uri::parse("mongodb+srv://many.0.0.1/?tls=false" + options);
    ASSERT_TRUE(u.has_value()) << u.error().message;
    const auto resolved = resolve_srv(*u);
    ASSERT_TRUE(resolved.has_value()) << resolved.error().message;
    EXPECT_EQ(resolved->hosts().size(), want);
    EXPECT_TRUE(distinct_listed(resolved->hosts()));
    const auto rescan = rescan_srv(*u, {});
    ASSERT_TRUE(rescan.has_value()) << rescan.error().message;
    EXPECT_EQ(rescan->hosts.size(), want);
    EXPECT_TRUE(distinct_listed(rescan->hosts));
  }
}

// An SRV record naming port 0 (no server listens there; RFC 2782 gives it no meaning): the
// records are refused as a connection string naming port 0 is, and a rescan leaves such a record
// out as it leaves out a host outside the domain. The records beside it, at a real port, are read
// as usual: zero.0.0.1 lists 127.0.0.1 at 0 and at 27017, good.0.0.1 at 27017 alone.
TEST(MongoSrvTest, AnSrvRecordWithPortZeroIsRefused) {
  const std::string zone = oid::testing::scratch_path("port-zero.zone");
  std::ofstream(zone) << "$ORIGIN 0.0.1.\n$TTL 30\n"
                      << "@ IN SOA ns.0.0.1. hostmaster.0.0.1. 1 3600 600 86400 30\n"
                      << "@ IN NS ns.0.0.1.\nns IN A 127.0.0.1\n"
                      << "_mongodb._tcp.zero 30 IN SRV 0 0 0 127.0.0.1.\n"
                      << "_mongodb._tcp.zero 30 IN SRV 0 0 27017 127.0.0.1.\n"
                      << "_mongodb._tcp.onlyzero 30 IN SRV 0 0 0 127.0.0.1.\n"
                      << "_mongodb._tcp.good 30 IN SRV 0 0 27017 127.0.0.1.\n";
  own_dns_server dns_server(zone);
  if (!dns_server.started) {
    OID_SKIP_OR_FAIL_IN_CI(
        "scripts/dns-server.sh could not start a DNS server: " << dns_server.error);
  }
  scoped_env dns("OID_DNS_SERVER", dns_server.address);
  for (const char* name : {"zero", "onlyzero"}) {
    SCOPED_TRACE(name);
    const auto u = uri::parse("mongodb+srv://" + std::string(name) + ".0.0.1/?tls=false");
    ASSERT_TRUE(u.has_value()) << u.error().message;
    const auto resolved = resolve_srv(*u);
    ASSERT_THAT(resolved, HasError(oid::mongo::errc::invalid_uri));
    EXPECT_THAT(resolved.error().message, HasSubstr("the SRV record of " + std::string(name) +
                                                    ".0.0.1 names port 0 for host 127.0.0.1"));
  }
  // A rescan keeps the record at 27017 and drops the one at port 0; with none left, it fails
  // (and the poller keeps the hosts it has).
  const auto zero = uri::parse("mongodb+srv://zero.0.0.1/?tls=false");
  const auto rescan = rescan_srv(*zero, {});
  ASSERT_TRUE(rescan.has_value()) << rescan.error().message;
  ASSERT_EQ(rescan->hosts.size(), 1u);
  EXPECT_EQ(seed(rescan->hosts[0]), "127.0.0.1:27017");
  EXPECT_THAT(rescan_srv(*uri::parse("mongodb+srv://onlyzero.0.0.1/?tls=false"), {}),
              HasError(oid::mongo::errc::connection_failed));
  // The control: the same zone's record at a real port resolves.
  const auto good = resolve_srv(*uri::parse("mongodb+srv://good.0.0.1/?tls=false"));
  ASSERT_TRUE(good.has_value()) << good.error().message;
  ASSERT_EQ(good->hosts().size(), 1u);
  EXPECT_EQ(seed(good->hosts()[0]), "127.0.0.1:27017");
}

}  // namespace
