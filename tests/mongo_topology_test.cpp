// The client following a replica set over real sockets: three scripted members (tests/support/
// script_server.hpp) answer hello as the test says; the client discovers them from one seed,
// sends writes to the primary and reads where the read preference says, follows a stepdown,
// explains a selection timeout, and tells its listeners what happened.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <mutex>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "mongo/wire/connection.hpp"
#include "support/ci.hpp"
#include "support/script_replica_set.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// The scripted set as these tests want it: no sessions (so no retried writes and no endSessions
// among the commands seen), and every member applies a write, so that a test sees whether the
// client looked for the primary again.
class replica_set : public script_replica_set {
 public:
  replica_set() : script_replica_set({.sessions = false, .writes_only_on_primary = false}) {}
  // A connection string with `seed` as its only host.
  std::string uri(int seed, std::string_view options) const {
    return script_replica_set::uri(options, seed);
  }
  std::vector<std::string> seen() { return seen_lines(); }
};

document one_doc() {
  builder b;
  b.append_int32("x", 1);
  return std::move(b).extract();
}

std::string member_of(const std::string& seen) { return seen.substr(0, seen.find(' ')); }

TEST(MongoTopologyTest, DiscoversTheSetFromOneSeedAndSendsWritesToThePrimary) {
  for (const bool named : {true, false}) {
    // Without replicaSet (and without directConnection) the seed's monitor finds a replica set
    // member, and the client follows the set it names.
    SCOPED_TRACE(named ? "replicaSet=rs0" : "no replicaSet");
    replica_set rs;
    auto c = mongo::client::create(
                 named ? rs.uri(0, "")
                       : "mongodb://" + rs.address(0) +
                             "/?heartbeatFrequencyMS=500&serverSelectionTimeoutMS=3000")
                 .value();
    const document d = one_doc();
    auto r = c.collection("db", "c").insert_one(d.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(rs.seen(), std::vector<std::string>{"1 insert -"});
    const auto t = c.topology();
    EXPECT_EQ(t.type, mongo::topology_type::replica_set_with_primary);
    EXPECT_EQ(t.servers.size(), 3u);
    EXPECT_EQ(t.set_name, "rs0");
    // A primary read: to the primary, without $readPreference.
    rs.forget();
    ASSERT_TRUE(c.collection("db", "c").find().has_value());
    EXPECT_EQ(rs.seen(), std::vector<std::string>{"1 find -"});
  }
}

TEST(MongoTopologyTest, ReadsFollowTheReadPreference) {
  replica_set rs;
  for (const char* mode : {"secondary", "secondaryPreferred", "nearest", "primaryPreferred"}) {
    SCOPED_TRACE(mode);
    rs.forget();
    auto c = mongo::client::create(rs.uri(2, std::string("&readPreference=") + mode)).value();
    // Until the primary is known, primaryPreferred rightly reads from a secondary at once.
    for (int i = 0; i < 300 && !c.topology().has_primary(); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(c.topology().has_primary());
    for (int i = 0; i < 6; ++i) {
      auto cur = c.collection("db", "c").find();
      ASSERT_TRUE(cur.has_value()) << cur.error().message;
    }
    const auto seen = rs.seen();
    ASSERT_EQ(seen.size(), 6u);
    for (const auto& s : seen) {
      EXPECT_EQ(s.substr(s.find(' ')), std::string(" find ") + mode);
      const std::string member = member_of(s);
      if (std::string_view(mode).starts_with("secondary")) {
        EXPECT_NE(member, "1") << s;
      }
      if (std::string_view(mode) == "primaryPreferred") {
        EXPECT_EQ(member, "1") << s;
      }
    }
  }
}

TEST(MongoTopologyTest, AStepdownFailsTheWriteAndTheNextGoesToTheNewPrimary) {
  // NotWritablePrimary, InterruptedDueToReplStateChange, ShutdownInProgress, and a reset.
  for (const int code : {10107, 11602, 91, 0}) {
    SCOPED_TRACE(code);
    replica_set rs;
    auto c = mongo::client::create(rs.uri(0, "")).value();
    auto coll = c.collection("db", "c");
    const document d = one_doc();
    ASSERT_TRUE(coll.insert_one(d.view()).has_value());
    rs.step_down_on_next_write(2, code);
    auto refused = coll.insert_one(d.view());
    ASSERT_FALSE(refused.has_value());
    if (code == 0) {
      EXPECT_EQ(refused.error().code, oid::mongo::errc::connection_closed)
          << refused.error().message;
    } else {
      EXPECT_EQ(refused.error().code, oid::mongo::errc::server_error);
      ASSERT_TRUE(refused.error().server.has_value());
      EXPECT_EQ(refused.error().server->code, code);
    }
    auto next = coll.insert_one(d.view());
    ASSERT_TRUE(next.has_value()) << next.error().message;
    EXPECT_EQ(rs.seen(), (std::vector<std::string>{"1 insert -", "1 insert -", "2 insert -"}));
    EXPECT_EQ(c.topology().find(rs.address(2))->type, mongo::server_type::rs_primary);
  }
}

TEST(MongoTopologyTest, AWriteConcernErrorSayingNotPrimaryMovesWritesToTheNewPrimary) {
  // NotWritablePrimary and ShutdownInProgress in a writeConcernError: the write was applied, the
  // server is no longer primary (SDAM's error handling treats it as the command error).
  for (const int code : {10107, 91}) {
    SCOPED_TRACE(code);
    replica_set rs;
    auto c = mongo::client::create(rs.uri(0, "")).value();
    auto coll = c.collection("db", "c");
    const document d = one_doc();
    ASSERT_TRUE(coll.insert_one(d.view()).has_value());
    rs.step_down_on_next_write(2, code, true);
    auto refused = coll.insert_one(d.view());
    ASSERT_FALSE(refused.has_value());
    EXPECT_EQ(refused.error().code, oid::mongo::errc::write_concern_failed)
        << refused.error().message;
    ASSERT_TRUE(refused.error().write_concern_error.has_value());
    EXPECT_EQ(refused.error().write_concern_error->code, code);
    auto next = coll.insert_one(d.view());
    ASSERT_TRUE(next.has_value()) << next.error().message;
    EXPECT_EQ(rs.seen(), (std::vector<std::string>{"1 insert -", "1 insert -", "2 insert -"}));
  }
  // Another writeConcernError (WriteConcernFailed, 64) says nothing about the server's state: the
  // client keeps its primary (the scripted member 1 takes the next insert although it has handed
  // its role on, which shows that the client did not look again).
  replica_set rs;
  auto c = mongo::client::create(rs.uri(0, "")).value();
  auto coll = c.collection("db", "c");
  const document d = one_doc();
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  rs.step_down_on_next_write(2, 64, true);
  auto failed = coll.insert_one(d.view());
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, oid::mongo::errc::write_concern_failed) << failed.error().message;
  EXPECT_EQ(c.topology().find(rs.address(1))->type, mongo::server_type::rs_primary);
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  EXPECT_EQ(rs.seen(), (std::vector<std::string>{"1 insert -", "1 insert -", "1 insert -"}));
}

TEST(MongoTopologyTest, DirectConnectionToASecondaryTalksToItAlone) {
  replica_set rs;
  auto c = mongo::client::create("mongodb://" + rs.address(0) +
                                 "/?directConnection=true&serverSelectionTimeoutMS=3000")
               .value();
  ASSERT_TRUE(c.collection("db", "c").find().has_value());
  // Single topology, a secondary: reads carry primaryPreferred so that the secondary answers.
  EXPECT_EQ(rs.seen(), std::vector<std::string>{"0 find primaryPreferred"});
  const auto t = c.topology();
  EXPECT_EQ(t.type, mongo::topology_type::single);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers.begin()->second.type, mongo::server_type::rs_secondary);
}

// A standalone server: hello says writable primary without a set name and the wire versions
// given; other commands get ok: 1.
class standalone {
 public:
  explicit standalone(std::int32_t min_wire_version = 0, std::int32_t max_wire_version = 17)
      : server_([this, min_wire_version, max_wire_version](peer& p, int) {
          while (auto m = p.read()) {
            const std::string name = command_name(*m);
            builder b;
            if (name == "hello" || name == "isMaster" || name == "ismaster") {
              ++hellos_;
              b.append_bool("isWritablePrimary", true);
              b.append_int32("minWireVersion", min_wire_version)
                  .append_int32("maxWireVersion", max_wire_version);
            }
            b.append_double("ok", 1.0);
            p.reply(*m, b.view());
          }
        }) {}
  std::string uri(std::string_view options) const {
    const std::string u = server_.uri();
    return u.substr(0, u.find('?') + 1) + "serverSelectionTimeoutMS=3000" + std::string(options);
  }
  int connections() const { return server_.connections(); }
  int hellos() const { return hellos_.load(); }
  std::string address() const { return server_.address(); }

 private:
  std::atomic<int> hellos_{0};
  script_server server_;
};

TEST(MongoTopologyTest, OneStandaloneSeedIsUnknownUntilItsMonitorMakesItSingle) {
  standalone server;
  std::mutex m;
  std::vector<mongo::topology_type> types;
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    if (const auto* changed = std::get_if<mongo::topology_description_changed_event>(&e)) {
      std::lock_guard lock(m);
      types.push_back(changed->current.type);
    }
  };
  {
    auto c = mongo::client::create(server.uri("&heartbeatFrequencyMS=500"), options).value();
    const document cmd = ping();
    ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
    EXPECT_EQ(c.topology().type, mongo::topology_type::single);
    // The monitor's connection and the pool's: the monitor checks on its own connection.
    EXPECT_EQ(server.connections(), 2);
    // Heartbeats go on (heartbeatFrequencyMS=500) on the monitor's connection.
    for (int i = 0; i < 300 && server.hellos() < 3; ++i) std::this_thread::sleep_for(10ms);
    EXPECT_GE(server.hellos(), 3);
    EXPECT_EQ(server.connections(), 2);
  }
  std::lock_guard lock(m);
  ASSERT_GE(types.size(), 2u);
  EXPECT_EQ(types[0], mongo::topology_type::unknown);
  EXPECT_EQ(types[1], mongo::topology_type::single);

  // directConnection=true: Single from the start, no monitor (one connection, whose handshake
  // describes the server).
  standalone direct;
  auto c = mongo::client::create(direct.uri("&directConnection=true")).value();
  EXPECT_EQ(c.topology().type, mongo::topology_type::single);
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
  EXPECT_EQ(direct.connections(), 1);
  EXPECT_EQ(direct.hellos(), 1);
}

TEST(MongoTopologyTest, SelectionTimeoutNamesEachServerAndTheReadPreference) {
  replica_set rs;
  rs.set_primary(-1);  // all secondaries: nothing can take a write
  auto c = mongo::client::create(rs.uri(0, "&serverSelectionTimeoutMS=700")).value();
  const document d = one_doc();
  const auto started = std::chrono::steady_clock::now();
  auto r = c.collection("db", "c").insert_one(d.view());
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout);
  EXPECT_GE(took, 650ms);
  EXPECT_LT(took, 5s);
  const std::string& m = r.error().message;
  for (int i = 0; i < 3; ++i)
    EXPECT_NE(m.find(rs.address(i) + " RSSecondary"), std::string::npos) << m;
  EXPECT_NE(m.find("ReplicaSetNoPrimary"), std::string::npos) << m;
  EXPECT_NE(m.find("a write"), std::string::npos) << m;
  EXPECT_NE(m.find("700 ms"), std::string::npos) << m;
  EXPECT_TRUE(rs.seen().empty());

  // A read with tags nobody has names the read preference; an unreachable seed its error.
  auto tagged =
      mongo::client::create(rs.uri(0,
                                   "&serverSelectionTimeoutMS=600&readPreference=secondary&"
                                   "readPreferenceTags=dc:mars"))
          .value();
  auto cur = tagged.collection("db", "c").find();
  ASSERT_FALSE(cur.has_value());
  EXPECT_NE(cur.error().message.find("read preference secondary, tag sets [{dc: mars}]"),
            std::string::npos)
      << cur.error().message;
}

TEST(MongoTopologyTest, AWrongSetNameFailsSelectionSayingWhatTheServerAnswered) {
  replica_set rs;
  auto c = mongo::client::create("mongodb://" + rs.address(0) +
                                 "/?replicaSet=other&serverSelectionTimeoutMS=500")
               .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout);
  EXPECT_NE(r.error().message.find(rs.address(0) +
                                   " removed after answering as RSSecondary of replica set rs0"),
            std::string::npos)
      << r.error().message;
}

TEST(MongoTopologyTest, AnUnreachableMemberIsUnknownWithItsError) {
  // A port that was just free: nothing listens there.
  std::string dead;
  {
    script_server gone([](peer&, int) {});
    const std::string u = gone.uri();
    dead = u.substr(10, u.find('/', 10) - 10);
  }
  auto c =
      mongo::client::create("mongodb://" + dead + "/?replicaSet=rs0&serverSelectionTimeoutMS=500")
          .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout);
  EXPECT_NE(r.error().message.find(dead + " Unknown (last error: "), std::string::npos)
      << r.error().message;
}

TEST(MongoTopologyTest, AMemberThatStopsAnsweringBecomesUnknownAndReadsAvoidIt) {
  replica_set rs;
  auto c = mongo::client::create(rs.uri(1, "&readPreference=secondary")).value();
  const auto type_of = [&c](const std::string& address) {
    const auto t = c.topology();
    const auto s = t.servers.find(address);
    return s == t.servers.end() ? mongo::server_type::unknown : s->second.type;
  };
  // Both secondaries known, then member 0 goes quiet.
  for (int i = 0; i < 500 && (type_of(rs.address(0)) != mongo::server_type::rs_secondary ||
                              type_of(rs.address(2)) != mongo::server_type::rs_secondary);
       ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(type_of(rs.address(0)), mongo::server_type::rs_secondary);
  ASSERT_EQ(type_of(rs.address(2)), mongo::server_type::rs_secondary);
  rs.silence(0);
  // Its monitor's next hello (heartbeatFrequencyMS=500) fails, and so does the one retry on a new
  // connection: Unknown. The bound is generous: this waits for a state, it does not time it.
  for (int i = 0; i < 1000 && type_of(rs.address(0)) != mongo::server_type::unknown; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(type_of(rs.address(0)), mongo::server_type::unknown);
  rs.forget();
  for (int i = 0; i < 6; ++i) {
    auto cur = c.collection("db", "c").find();
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
  }
  const auto seen = rs.seen();
  ASSERT_EQ(seen.size(), 6u);
  for (const auto& s : seen) EXPECT_EQ(s, "2 find secondary");
}

// Server monitoring: a check answered with ok: 0 is a failed check, like a network error: a
// serverHeartbeatFailedEvent, the server Unknown and its pool cleared. (Before, the monitor took
// the reply as a hello: a heartbeat "succeeded", the server went Unknown and its pool was kept; the
// unified sdam test hello-command-error.json "Command error on Monitor check" waited in vain for
// the pool to be cleared.)
TEST(MongoTopologyTest, AMonitorCheckAnsweredWithOkZeroFailsAndClearsThePool) {
  replica_set rs;
  std::mutex m;
  std::vector<std::string> heartbeats;  // "failed ADDRESS", "succeeded ADDRESS"
  std::vector<std::string> cleared;     // the addresses whose pool was cleared
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    std::lock_guard lock(m);
    if (const auto* f = std::get_if<mongo::server_heartbeat_failed_event>(&e)) {
      heartbeats.push_back("failed " + f->address);
    } else if (const auto* s = std::get_if<mongo::server_heartbeat_succeeded_event>(&e)) {
      heartbeats.push_back("succeeded " + s->address);
    }
  };
  options.on_pool = [&](const mongo::pool_event& e) {
    std::lock_guard lock(m);
    if (const auto* c = std::get_if<mongo::pool_cleared_event>(&e)) cleared.push_back(c->address);
  };
  auto c = mongo::client::create(rs.uri(0, ""), options).value();
  const auto type_of = [&c](const std::string& address) {
    const auto t = c.topology();
    const auto s = t.servers.find(address);
    return s == t.servers.end() ? mongo::server_type::unknown : s->second.type;
  };
  for (int i = 0; i < 500 && type_of(rs.address(2)) != mongo::server_type::rs_secondary; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(type_of(rs.address(2)), mongo::server_type::rs_secondary);
  rs.refuse_checks(2, 1);
  const auto failed_and_cleared = [&] {
    std::lock_guard lock(m);
    return std::count(heartbeats.begin(), heartbeats.end(), "failed " + rs.address(2)) > 0 &&
           std::count(cleared.begin(), cleared.end(), rs.address(2)) > 0;
  };
  // The next check (heartbeatFrequencyMS=500) meets the refusal; the bound waits for a state.
  for (int i = 0; i < 1000 && !failed_and_cleared(); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(failed_and_cleared());
  // One refusal, no retry: the check after it finds the member a secondary again.
  for (int i = 0; i < 1000 && type_of(rs.address(2)) != mongo::server_type::rs_secondary; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(type_of(rs.address(2)), mongo::server_type::rs_secondary);
}

// Closing a client changes its description to Unknown without servers, published as a
// topologyDescriptionChangedEvent after the servers' closing and before topologyClosedEvent (SDAM
// logging and monitoring, "Closing Topology Description"). Before, topologyClosedEvent came right
// after the servers' closing: the unified sdam tests *-emit-topology-changed-before-close.json
// failed.
TEST(MongoTopologyTest, ClosingPublishesTheChangeToUnknownBeforeTheTopologyCloses) {
  replica_set rs;
  std::mutex m;
  std::vector<std::string> events;
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    std::lock_guard lock(m);
    if (const auto* t = std::get_if<mongo::topology_description_changed_event>(&e)) {
      events.push_back("changed " + std::string(mongo::to_string(t->previous.type)) + " -> " +
                       std::string(mongo::to_string(t->current.type)) + " (" +
                       std::to_string(t->current.servers.size()) + " servers)");
    } else if (std::holds_alternative<mongo::server_closed_event>(e)) {
      events.push_back("server closed");
    } else if (std::holds_alternative<mongo::topology_closed_event>(e)) {
      events.push_back("closed");
    }
  };
  {
    auto c = mongo::client::create(rs.uri(0, ""), options).value();
    for (int i = 0; i < 500 && !c.topology().has_primary(); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(c.topology().has_primary());
  }
  std::lock_guard lock(m);
  ASSERT_GE(events.size(), 5u);
  const std::vector<std::string> last(events.end() - 5, events.end());
  EXPECT_EQ(last, (std::vector<std::string>{"server closed", "server closed", "server closed",
                                            "changed ReplicaSetWithPrimary -> Unknown (0 servers)",
                                            "closed"}));
}

// A check refused with ok: 0, then the handshake of the monitor's next connection refused the
// same way: the server's Unknown description is the same both times (the same error), so one
// serverDescriptionChangedEvent to Unknown, not two. (Before, the check's error read "hello
// failed: ..." and the handshake's "handshake with ... refused: ...": a second change, Unknown to
// Unknown, and the unified sdam hello-command-error "Command error on Monitor check" counted 2.)
TEST(MongoTopologyTest, TheSameRefusalInACheckAndTheNextHandshakeIsOneChange) {
  replica_set rs;
  std::mutex m;
  std::vector<std::string> to_unknown;  // the errors of member 2's changes to Unknown
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    std::lock_guard lock(m);
    if (const auto* c = std::get_if<mongo::server_description_changed_event>(&e)) {
      if (c->address == rs.address(2) && c->current.type == mongo::server_type::unknown) {
        to_unknown.push_back(c->current.error.value_or("(none)"));
      }
    }
  };
  auto c = mongo::client::create(rs.uri(0, ""), options).value();
  const auto type_of = [&c](const std::string& address) {
    const auto t = c.topology();
    const auto s = t.servers.find(address);
    return s == t.servers.end() ? mongo::server_type::unknown : s->second.type;
  };
  for (int i = 0; i < 500 && type_of(rs.address(2)) != mongo::server_type::rs_secondary; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(type_of(rs.address(2)), mongo::server_type::rs_secondary);
  rs.refuse_checks(2, 2, true);
  const auto refused = [&] {
    std::lock_guard lock(m);
    return !to_unknown.empty();
  };
  for (int i = 0; i < 1000 && !refused(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(refused());
  // Both refusals used, then a check that finds the secondary again.
  for (int i = 0; i < 1000 && type_of(rs.address(2)) != mongo::server_type::rs_secondary; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(type_of(rs.address(2)), mongo::server_type::rs_secondary);
  std::lock_guard lock(m);
  ASSERT_EQ(to_unknown.size(), 1u) << ::testing::PrintToString(to_unknown);
  EXPECT_EQ(to_unknown[0], "hello to " + rs.address(2) + " refused: scripted check refusal");
}

TEST(MongoTopologyTest, ListenersSeeTopologyHeartbeatAndCommandEvents) {
  replica_set rs;
  std::mutex m;
  std::vector<std::string> topology_events, command_events;
  std::string started_address;
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    constexpr const char* names[] = {
        "opening",         "closed",         "topology_changed",  "server_opening",
        "server_closed",   "server_changed", "heartbeat_started", "heartbeat_succeeded",
        "heartbeat_failed"};
    std::lock_guard lock(m);
    topology_events.push_back(names[e.index()]);
  };
  options.on_command = [&](const mongo::command_event& e) {
    std::lock_guard lock(m);
    if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
      command_events.push_back("started " + s->command_name + " " + s->database_name);
      started_address = s->address;
      EXPECT_GT(s->request_id, 0);
    } else if (const auto* ok = std::get_if<mongo::command_succeeded_event>(&e)) {
      command_events.push_back("succeeded " + ok->command_name);
      EXPECT_GE(ok->duration.count(), 0);
    } else {
      command_events.push_back("failed");
    }
  };
  {
    auto c = mongo::client::create(rs.uri(0, ""), options).value();
    const document d = one_doc();
    ASSERT_TRUE(c.collection("db", "c").insert_one(d.view()).has_value());
    // Every member checked once before the client closes (the insert needs only the primary).
    const auto all_known = [&c] {
      const auto t = c.topology();
      return t.servers.size() == 3 &&
             std::all_of(t.servers.begin(), t.servers.end(),
                         [](const auto& s) { return s.second.is_known(); });
    };
    for (int i = 0; i < 500 && !all_known(); ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(all_known());
  }
  std::lock_guard lock(m);
  EXPECT_EQ(command_events, (std::vector<std::string>{"started insert db", "succeeded insert"}));
  EXPECT_EQ(started_address, rs.address(1));
  ASSERT_FALSE(topology_events.empty());
  EXPECT_EQ(topology_events.front(), "opening");
  EXPECT_EQ(topology_events.back(), "closed");
  const auto count = [&](const char* name) {
    return std::count(topology_events.begin(), topology_events.end(), std::string(name));
  };
  EXPECT_EQ(count("server_opening"), 3);
  EXPECT_EQ(count("server_closed"), 3);
  EXPECT_GE(count("heartbeat_started"), 3);
  EXPECT_GE(count("heartbeat_succeeded"), 3);
  EXPECT_GE(count("server_changed"), 3);
}

#ifdef OID_BINARY
// `oid mongo topology URI --watch`, the built binary, with its standard output on a pipe.
class watch_process {
 public:
  explicit watch_process(std::vector<std::string> args) {
    args.insert(args.begin(), {OID_BINARY, "mongo", "topology"});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) ADD_FAILURE() << "pipe2";
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      ::dup2(fds[1], STDOUT_FILENO);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDERR_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(fds[1]);
    out_ = fds[0];
  }
  ~watch_process() {
    if (pid_ > 0 && !waited_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  // The next line of output, or nullopt at end of output or after `within`.
  std::optional<std::string> line(std::chrono::milliseconds within) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    while (true) {
      if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
        std::string l = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        return l;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{out_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) {
        return std::nullopt;
      }
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  void signal(int sig) { ::kill(pid_, sig); }
  // The exit status (-1 when it did not exit normally).
  int wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    waited_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  bool waited_ = false;
  std::string buffer_;
};

TEST(MongoTopologyTest, WatchPrintsTheEventsUntilInterrupted) {
  replica_set rs;
  struct run {
    std::vector<std::string> flags;
    int signal;
    std::string primary_found, heartbeat, closed;  // heartbeat "": none looked for
  };
  // Without --heartbeats a few events are all there is: each must show as it happens, not
  // when the command ends (std::cout's buffer is flushed after each).
  const run runs[] = {
      {{},
       SIGINT,
       "topology changed ReplicaSetNoPrimary -> ReplicaSetWithPrimary (replica set rs0)",
       "",
       "topology closed"},
      {{"--heartbeats"},
       SIGINT,
       "topology changed ReplicaSetNoPrimary -> ReplicaSetWithPrimary (replica set rs0)",
       "heartbeat succeeded " + rs.address(1),
       "topology closed"},
      {{"--heartbeats", "--json"},
       SIGTERM,
       R"("event":"topologyDescriptionChanged","previousType":"ReplicaSetNoPrimary",)"
       R"("newType":"ReplicaSetWithPrimary","setName":"rs0")",
       R"("event":"serverHeartbeatSucceeded","address":")" + rs.address(1) + "\"",
       R"("event":"topologyClosed")"},
  };
  for (const auto& r : runs) {
    const bool json = std::find(r.flags.begin(), r.flags.end(), "--json") != r.flags.end();
    SCOPED_TRACE(::testing::PrintToString(r.flags));
    std::vector<std::string> args{rs.uri(0, ""), "--watch"};
    args.insert(args.end(), r.flags.begin(), r.flags.end());
    watch_process p(args);
    std::vector<std::string> lines;
    bool primary_found = false, heartbeat = false;
    while (!(primary_found && heartbeat)) {
      auto l = p.line(10s);
      if (!l) break;
      primary_found = primary_found || l->find(r.primary_found) != std::string::npos;
      heartbeat = heartbeat || l->find(r.heartbeat) != std::string::npos;
      lines.push_back(std::move(*l));
    }
    EXPECT_TRUE(primary_found) << ::testing::PrintToString(lines);
    EXPECT_TRUE(heartbeat) << ::testing::PrintToString(lines);
    ASSERT_FALSE(lines.empty());
    // Each line starts with the time (text) or has it (JSON).
    EXPECT_EQ(lines.front().find(json ? R"({"time":"20)" : "20"), 0u) << lines.front();
    p.signal(r.signal);
    std::string last;
    while (auto l = p.line(10s)) last = *l;
    EXPECT_EQ(p.wait(), 0);
    EXPECT_NE(last.find(r.closed), std::string::npos) << last;
  }
}
#endif

// A server behind a load balancer: hello with loadBalanced: true gets a serviceId (when
// `with_service_id`); every hello's loadBalanced field is recorded.
class load_balanced_server {
 public:
  explicit load_balanced_server(bool with_service_id, std::int32_t min_wire_version = 0,
                                std::int32_t max_wire_version = 17)
      : server_([this, with_service_id, min_wire_version, max_wire_version](peer& p, int) {
          while (auto m = p.read()) {
            const std::string name = command_name(*m);
            builder b;
            if (name == "hello" || name == "isMaster") {
              const auto lb = m->body.find("loadBalanced");
              {
                std::lock_guard lock(mutex_);
                hellos_.push_back(lb && lb->get_bool().value_or(false) ? "loadBalanced" : "-");
              }
              b.append_bool("isWritablePrimary", true).append_string("msg", "isdbgrid");
              b.append_int32("minWireVersion", min_wire_version)
                  .append_int32("maxWireVersion", max_wire_version);
              if (with_service_id) b.append_object_id("serviceId", service_id_);
            }
            b.append_double("ok", 1.0);
            p.reply(*m, b.view());
          }
        }) {}
  std::string address() const {
    const std::string u = server_.uri();
    return u.substr(10, u.find('/', 10) - 10);
  }
  std::vector<std::string> hellos() {
    std::lock_guard lock(mutex_);
    return hellos_;
  }
  const oid::object_id& service_id() const { return service_id_; }

 private:
  const oid::object_id service_id_ = oid::generate();
  std::mutex mutex_;
  std::vector<std::string> hellos_;
  script_server server_;
};

TEST(MongoTopologyTest, LoadBalancedHandshakeRecordsTheServiceId) {
  load_balanced_server server(true);
  auto c = mongo::client::create("mongodb://" + server.address() +
                                 "/?loadBalanced=true&serverSelectionTimeoutMS=2000")
               .value();
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
  // No monitor: one connection, whose hello says loadBalanced.
  EXPECT_EQ(server.hellos(), std::vector<std::string>{"loadBalanced"});
  const auto t = c.topology();
  EXPECT_EQ(t.type, mongo::topology_type::load_balanced);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers.begin()->second.type, mongo::server_type::load_balancer);

  // The connection keeps the serviceId of its handshake.
  mongo::connection_options o;
  o.load_balanced = true;
  auto u = mongo::uri::parse("mongodb://" + server.address() + "/").value();
  auto conn = mongo::connection::open(u.hosts().front(), o);
  ASSERT_TRUE(conn.has_value()) << conn.error().message;
  ASSERT_TRUE(conn->server().service_id.has_value());
  EXPECT_EQ(*conn->server().service_id, server.service_id());
}

// A client in load-balanced mode fails its operation on the first handshake without a serviceId
// (it used to try again every 250 ms until serverSelectionTimeoutMS).
TEST(MongoTopologyTest, LoadBalancedClientFailsAtOnceWithoutServiceId) {
  load_balanced_server server(false);
  auto client = mongo::client::create("mongodb://" + server.address() +
                                      "/?loadBalanced=true&serverSelectionTimeoutMS=5000");
  ASSERT_TRUE(client.has_value()) << client.error().message;
  oid::bson::builder ping;
  ping.append_int32("ping", 1);
  auto r = client->run_command("admin", ping.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::unsupported) << r.error().message;
  EXPECT_EQ(server.hellos(), (std::vector<std::string>{"loadBalanced"}));
}

TEST(MongoTopologyTest, LoadBalancedModeRefusesAServerWithoutServiceId) {
  load_balanced_server server(false);
  mongo::connection_options o;
  o.load_balanced = true;
  auto u = mongo::uri::parse("mongodb://" + server.address() + "/").value();
  auto conn = mongo::connection::open(u.hosts().front(), o);
  ASSERT_FALSE(conn.has_value());
  EXPECT_EQ(conn.error().code, oid::mongo::errc::unsupported);
  EXPECT_NE(conn.error().message.find("without a serviceId"), std::string::npos)
      << conn.error().message;
  // The load balancer specification's words, which its tests look for.
  EXPECT_NE(conn.error().message.find("the driver attempted to initialize in load balancing "
                                      "mode, but the server does not support this mode"),
            std::string::npos)
      << conn.error().message;
  // The same server without loadBalanced: an ordinary mongos, and no serviceId.
  auto plain = mongo::connection::open(u.hosts().front(), mongo::connection_options{});
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  EXPECT_FALSE(plain->server().service_id.has_value());
  EXPECT_EQ(server.hellos(), (std::vector<std::string>{"loadBalanced", "-"}));
}

// A server whose wire versions do not overlap oid's is refused however the client reaches it:
// monitored (server selection reads the topology's compatibility), and with directConnection=true
// or loadBalanced=true, where no monitor runs and the pool's handshake is the only look at the
// server's hello. The server answers every other command with ok: 1, so a client that ignored
// the versions would succeed.
TEST(MongoTopologyTest, AnIncompatibleServerIsRefusedWithOrWithoutDirectConnection) {
  struct test_case {
    const char* name;
    std::int32_t min_wire_version, max_wire_version;
    std::string words;
  };
  const auto above = mongo::max_supported_wire_version + 1;
  const test_case cases[] = {
      {"minWireVersion above oid's", above, above + 3,
       "requires wire version " + std::to_string(above) + ", but oid supports only up to " +
           std::to_string(mongo::max_supported_wire_version)},
      {"minWireVersion above the server's own maxWireVersion", 17, 13,
       "reports minWireVersion 17 above its maxWireVersion 13"},
  };
  for (const auto& c : cases) {
    for (const char* options : {"&directConnection=true", ""}) {
      SCOPED_TRACE(std::string(c.name) + " " + options);
      standalone server(c.min_wire_version, c.max_wire_version);
      auto client = mongo::client::create(server.uri(options)).value();
      const document cmd = ping();
      const auto r = client.run_command("admin", cmd.view());
      ASSERT_FALSE(r.has_value());
      EXPECT_EQ(r.error().code, mongo::errc::unsupported) << r.error().message;
      EXPECT_NE(r.error().message.find(c.words), std::string::npos) << r.error().message;
      EXPECT_NE(r.error().message.find(server.address()), std::string::npos) << r.error().message;
    }
  }
  // loadBalanced=true: no monitor either, and SDAM never reads a load balancer's hello.
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " loadBalanced=true");
    load_balanced_server server(true, c.min_wire_version, c.max_wire_version);
    auto client = mongo::client::create("mongodb://" + server.address() +
                                        "/?loadBalanced=true&serverSelectionTimeoutMS=2000")
                      .value();
    const document cmd = ping();
    const auto r = client.run_command("admin", cmd.view());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, mongo::errc::unsupported) << r.error().message;
    EXPECT_NE(r.error().message.find(c.words), std::string::npos) << r.error().message;
  }
  // A compatible server, as a control: the same client answers.
  standalone fine(mongo::max_supported_wire_version, mongo::max_supported_wire_version);
  auto client = mongo::client::create(fine.uri("&directConnection=true")).value();
  const document cmd = ping();
  EXPECT_TRUE(client.run_command("admin", cmd.view()).has_value());
}

TEST(MongoTopologyTest, CommandEventsRedactAuthenticationCommands) {
  EXPECT_TRUE(mongo::is_sensitive_command("saslStart"));
  EXPECT_TRUE(mongo::is_sensitive_command("createUser"));
  EXPECT_TRUE(mongo::is_sensitive_command("hello", true));
  EXPECT_FALSE(mongo::is_sensitive_command("hello", false));
  EXPECT_FALSE(mongo::is_sensitive_command("find"));
}

}  // namespace
