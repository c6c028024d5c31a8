// The client following a replica set over real sockets: three scripted members (tests/support/
// script_server.hpp) answer hello as the test says; the client discovers them from one seed,
// sends writes to the primary and reads where the read preference says, follows a stepdown,
// explains a selection timeout, and tells its listeners what happened.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <oid/mongo/client.hpp>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::test;
using namespace std::chrono_literals;

// A three-member replica set "rs0". Members answer hello with their role; other commands are
// recorded (member and command name, and the $readPreference mode) and answered with ok: 1 (an
// empty cursor for find, n for insert). A member told to step down answers its next insert with
// NotWritablePrimary (10107) and hands the primary role to another member.
class replica_set {
 public:
  replica_set() {
    for (int i = 0; i < 3; ++i) {
      servers_[static_cast<std::size_t>(i)] =
          std::make_unique<script_server>([this, i](peer& p, int) { serve(p, i); });
      const std::string uri = servers_[static_cast<std::size_t>(i)]->uri();
      const auto begin = std::string_view("mongodb://").size();
      addresses_[static_cast<std::size_t>(i)] = uri.substr(begin, uri.find('/', begin) - begin);
    }
  }

  const std::string& address(int i) const { return addresses_[static_cast<std::size_t>(i)]; }
  // A connection string with `seed` as its only host.
  std::string uri(int seed, std::string_view options) const {
    return "mongodb://" + address(seed) +
           "/?replicaSet=rs0&heartbeatFrequencyMS=500&serverSelectionTimeoutMS=3000" +
           std::string(options);
  }
  void set_primary(int i) {
    std::lock_guard lock(mutex_);
    primary_ = i;
  }
  // The primary's next insert is refused with `code` (0: the connection is reset instead).
  void step_down_on_next_write(int new_primary, int code = 10107) {
    std::lock_guard lock(mutex_);
    step_down_to_ = new_primary;
    step_down_code_ = code;
  }
  // "member command mode" for each recorded command, in order.
  std::vector<std::string> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  void forget() {
    std::lock_guard lock(mutex_);
    seen_.clear();
  }
  // Member `i` stops answering: it closes every connection at its next message, hello included.
  void silence(int i) {
    std::lock_guard lock(mutex_);
    silenced_[static_cast<std::size_t>(i)] = true;
  }

 private:
  document hello(int i) {
    std::lock_guard lock(mutex_);
    builder b;
    b.append_bool("isWritablePrimary", primary_ == i).append_bool("secondary", primary_ != i);
    b.append_string("setName", "rs0").append_int32("setVersion", 1);
    b.open_array("hosts");
    for (int m = 0; m < 3; ++m) b.append_string(std::to_string(m), address(m));
    b.close();
    if (primary_ >= 0) b.append_string("primary", address(primary_));
    b.append_string("me", address(i));
    b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", 17);
    b.append_double("ok", 1.0);
    return std::move(b).extract();
  }

  void serve(peer& p, int i) {
    while (auto m = p.read()) {
      {
        std::lock_guard lock(mutex_);
        if (silenced_[static_cast<std::size_t>(i)]) {
          p.close();
          return;
        }
      }
      const std::string name = command_name(*m);
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        const document h = hello(i);
        p.reply(*m, h.view());
        continue;
      }
      std::string mode = "-";
      if (const auto rp = m->body.find("$readPreference")) {
        if (auto d = rp->get_document()) {
          if (auto mv = d->find("mode")) mode = std::string(mv->get_string().value_or("?"));
        }
      }
      bool refuse = false;
      int code = 0;
      {
        std::lock_guard lock(mutex_);
        seen_.push_back(std::to_string(i) + " " + name + " " + mode);
        if (name == "insert" && step_down_to_ >= 0 && primary_ == i) {
          refuse = true;
          code = step_down_code_;
          primary_ = step_down_to_;
          step_down_to_ = -1;
        }
      }
      builder b;
      if (refuse && code == 0) {
        p.close();  // a reset
        return;
      }
      if (refuse) {
        b.append_double("ok", 0.0).append_string("errmsg", "not primary");
        b.append_int32("code", code);
      } else if (name == "find") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", "db.c");
        b.open_array("firstBatch").close().close();
        b.append_double("ok", 1.0);
      } else if (name == "insert") {
        b.append_int32("n", 1).append_double("ok", 1.0);
      } else {
        b.append_double("ok", 1.0);
      }
      p.reply(*m, b.view());
    }
  }

  std::mutex mutex_;
  int primary_ = 1, step_down_to_ = -1, step_down_code_ = 10107;
  std::vector<std::string> seen_;
  std::array<bool, 3> silenced_{};
  std::array<std::string, 3> addresses_;
  std::array<std::unique_ptr<script_server>, 3> servers_;
};

document one_doc() {
  builder b;
  b.append_int32("x", 1);
  return std::move(b).extract();
}

std::string member_of(const std::string& seen) { return seen.substr(0, seen.find(' ')); }

TEST(MongoTopologyTest, DiscoversTheSetFromOneSeedAndSendsWritesToThePrimary) {
  replica_set rs;
  auto c = mongo::client::create(rs.uri(0, "")).value();
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
      EXPECT_EQ(refused.error().code, errc::connection_closed) << refused.error().message;
    } else {
      EXPECT_EQ(refused.error().code, errc::server_error);
      ASSERT_TRUE(refused.error().server.has_value());
      EXPECT_EQ(refused.error().server->code, code);
    }
    auto next = coll.insert_one(d.view());
    ASSERT_TRUE(next.has_value()) << next.error().message;
    EXPECT_EQ(rs.seen(), (std::vector<std::string>{"1 insert -", "1 insert -", "2 insert -"}));
    EXPECT_EQ(c.topology().find(rs.address(2))->type, mongo::server_type::rs_primary);
  }
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
  EXPECT_EQ(r.error().code, errc::timeout);
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
  EXPECT_EQ(r.error().code, errc::timeout);
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
  EXPECT_EQ(r.error().code, errc::timeout);
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

TEST(MongoTopologyTest, CommandEventsRedactAuthenticationCommands) {
  EXPECT_TRUE(mongo::is_sensitive_command("saslStart"));
  EXPECT_TRUE(mongo::is_sensitive_command("createUser"));
  EXPECT_TRUE(mongo::is_sensitive_command("hello", true));
  EXPECT_FALSE(mongo::is_sensitive_command("hello", false));
  EXPECT_FALSE(mongo::is_sensitive_command("find"));
}

}  // namespace
