// A replica set of one real member: FerretDB started with --repl-set-name (scripts/test.sh:
// ferretdb.sh start-rs, MONGODB_RS_URI). Discovery by set name, and a wrong set name refused
// with the reason.
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
#include "support/documents.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// ---------------------------------------------------------------------------------------------
// FerretDB started with --repl-set-name (scripts/test.sh: ferretdb.sh start-rs, MONGODB_RS_URI):
// its hello names the set and lists itself, as 127.0.0.1:PORT, as the one member, a primary.

class MongoReplicaSetServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_RS_URI", uri_);
    auto u = mongo::uri::parse(uri_);
    ASSERT_TRUE(u.has_value()) << "MONGODB_RS_URI: " << u.error().message;
    ASSERT_TRUE(u->replica_set().has_value()) << "MONGODB_RS_URI has no replicaSet: " << uri_;
    set_ = *u->replica_set();
    port_ = std::to_string(u->hosts().front().port_or_default());
  }
  // A connection string to the member through `host`, for replica set `set`.
  std::string uri(const std::string& host, const std::string& set, std::string_view options) const {
    return "mongodb://" + host + ":" + port_ + "/?replicaSet=" + set + std::string(options);
  }
  std::string uri_, set_, port_;
};

TEST_F(MongoReplicaSetServerTest, ReplicaSetNameDiscoversTheMemberAndWorks) {
  auto c = mongo::client::create(uri("127.0.0.1", set_, "&serverSelectionTimeoutMS=5000"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  auto coll = c->collection("oid_rs_test", "c" + oid::generate().to_hex());
  const document d = json(R"({"x": 1})");
  auto inserted = coll.insert_one(d.view());
  ASSERT_TRUE(inserted.has_value()) << inserted.error().message;
  auto n = coll.count_documents(builder().view());
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, 1);
  const auto t = c->topology();
  EXPECT_EQ(t.type, mongo::topology_type::replica_set_with_primary);
  EXPECT_EQ(t.set_name, set_);
  ASSERT_EQ(t.servers.size(), 1u);
  EXPECT_EQ(t.servers.begin()->first, "127.0.0.1:" + port_);
  EXPECT_EQ(t.servers.begin()->second.type, mongo::server_type::rs_primary);
  EXPECT_TRUE(coll.drop().has_value());
}

TEST_F(MongoReplicaSetServerTest, ALocalhostSeedIsReplacedByTheMemberList) {
  // The seed localhost:PORT is not in the member list (127.0.0.1:PORT): the primary's answer
  // removes it and adds the member, which is then checked and selected.
  std::mutex m;
  std::vector<std::string> opened, closed;
  mongo::client_options options;
  options.on_topology = [&](const mongo::sdam_event& e) {
    std::lock_guard lock(m);
    if (const auto* o = std::get_if<mongo::server_opening_event>(&e)) opened.push_back(o->address);
    if (const auto* x = std::get_if<mongo::server_closed_event>(&e)) closed.push_back(x->address);
  };
  {
    auto c =
        mongo::client::create(uri("localhost", set_, "&serverSelectionTimeoutMS=5000"), options);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    const document cmd = ping();
    auto r = c->run_command("admin", cmd.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const auto t = c->topology();
    EXPECT_EQ(t.type, mongo::topology_type::replica_set_with_primary);
    ASSERT_EQ(t.servers.size(), 1u);
    EXPECT_EQ(t.servers.begin()->first, "127.0.0.1:" + port_);
    EXPECT_EQ(t.servers.begin()->second.type, mongo::server_type::rs_primary);
  }
  std::lock_guard lock(m);
  EXPECT_EQ(opened, (std::vector<std::string>{"localhost:" + port_, "127.0.0.1:" + port_}));
  // localhost when the member list removes it, 127.0.0.1 when the client closes.
  EXPECT_EQ(closed, (std::vector<std::string>{"localhost:" + port_, "127.0.0.1:" + port_}));
}

TEST_F(MongoReplicaSetServerTest, AWrongSetNameFailsSelectionWithinTheTimeoutSayingWhy) {
  auto c = mongo::client::create(uri("127.0.0.1", "not-" + set_, "&serverSelectionTimeoutMS=1000"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const document cmd = ping();
  const auto started = std::chrono::steady_clock::now();
  auto r = c->run_command("admin", cmd.view());
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout) << r.error().message;
  EXPECT_GE(took, 950ms);
  EXPECT_LT(took, 5s);
  const std::string& m = r.error().message;
  EXPECT_NE(m.find("within serverSelectionTimeoutMS (1000 ms)"), std::string::npos) << m;
  EXPECT_NE(m.find("topology ReplicaSetNoPrimary (replica set not-" + set_ + ")"),
            std::string::npos)
      << m;
  EXPECT_NE(
      m.find("127.0.0.1:" + port_ + " removed after answering as RSPrimary of replica set " + set_),
      std::string::npos)
      << m;
}

}  // namespace
