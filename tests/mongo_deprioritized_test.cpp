// Retries on a sharded cluster prefer another mongos than the one that failed (the server
// selection specification's deprioritized servers), against two scripted mongoses: a real
// mongos does not fail on request, and FerretDB is not a sharded cluster.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "support/script_replica_set.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;

// Two scripted mongoses of one sharded cluster (or one, with `count` 1). The next command named
// `fail_next` fails on whichever mongos it reaches, with HostUnreachable (6), which is retryable
// and says nothing about the mongos's state (so SDAM keeps it selectable).
class mongoses {
 public:
  explicit mongoses(int count = 2) {
    for (int i = 0; i < count; ++i) {
      servers_.push_back(std::make_unique<script_server>([this, i](peer& p, int) { serve(p, i); }));
    }
  }
  // localThresholdMS wide enough that both stay in the latency window on a loaded machine.
  std::string uri() const {
    std::string hosts;
    for (const auto& s : servers_) hosts += (hosts.empty() ? "" : ",") + s->address();
    return "mongodb://" + hosts + "/?localThresholdMS=10000&serverSelectionTimeoutMS=5000";
  }
  void fail_next(std::string command) {
    std::lock_guard lock(m_);
    fail_next_ = std::move(command);
  }
  // (mongos, command name, failed) of every command but hello, in order.
  struct seen_command {
    int mongos;
    std::string name;
    bool failed;
  };
  std::vector<seen_command> seen() {
    std::lock_guard lock(m_);
    return seen_;
  }
  void forget() {
    std::lock_guard lock(m_);
    seen_.clear();
  }

 private:
  void serve(peer& p, int i) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      builder b;
      if (name == "hello" || name == "isMaster" || name == "ismaster") {
        b.append_bool("isWritablePrimary", true).append_string("msg", "isdbgrid");
        b.append_int32("logicalSessionTimeoutMinutes", 30);
        b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", 17);
      } else {
        std::lock_guard lock(m_);
        const bool fail = name == fail_next_;
        seen_.push_back({i, name, fail});
        if (fail) {
          fail_next_.clear();
          b.append_double("ok", 0.0).append_int32("code", 6);
          b.append_string("codeName", "HostUnreachable").append_string("errmsg", "scripted");
          append_labels(b, {"RetryableWriteError"});
          const document refused = std::move(b).extract();
          p.reply(*m, refused.view());
          continue;
        }
        if (name == "insert") b.append_int32("n", 1);
        if (name == "find") {
          b.open_document("cursor").append_int64("id", 0).append_string("ns", "db.c");
          b.open_array("firstBatch").close().close();
        }
      }
      b.append_double("ok", 1.0);
      const document reply = std::move(b).extract();
      p.reply(*m, reply.view());
    }
  }
  std::mutex m_;
  std::string fail_next_;
  std::vector<seen_command> seen_;
  std::vector<std::unique_ptr<script_server>> servers_;
};

// The number of servers `client` knows as mongoses now.
std::size_t known_mongoses(const mongo::client& client) {
  std::size_t n = 0;
  for (const auto& [address, s] : client.topology().servers) {
    n += s.type == mongo::server_type::mongos;
  }
  return n;
}

// A client of `cluster` whose monitors have checked all of its mongoses (the seed list names
// them from the start, as Unknown servers, which selection skips).
mongo::client discovered(mongoses& cluster, std::size_t count) {
  auto client = mongo::client::create(cluster.uri()).value();
  const auto ping = oid::bson::from_json(R"({"ping": 1})").value();
  for (int i = 0; i < 500 && known_mongoses(client) < count; ++i) {
    EXPECT_TRUE(client.run_command("admin", ping.view()));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(known_mongoses(client), count);
  cluster.forget();
  return client;
}

// The (failed mongos, retry's mongos) of each retried command named `name` in `seen`.
std::vector<std::pair<int, int>> retries(const std::vector<mongoses::seen_command>& seen,
                                         std::string_view name) {
  std::vector<std::pair<int, int>> out;
  for (std::size_t i = 0; i + 1 < seen.size(); ++i) {
    if (seen[i].name == name && seen[i].failed && seen[i + 1].name == name) {
      out.emplace_back(seen[i].mongos, seen[i + 1].mongos);
    }
  }
  return out;
}

// Twenty reads and twenty writes, each failing once: every retry goes to the other mongos.
// Without deprioritization each would pick one of the two at random (all 40 on the other one by
// chance: 1 in 2^40).
TEST(MongoDeprioritizedTest, ARetryGoesToAnotherMongosThanTheOneThatFailed) {
  mongoses cluster;
  auto client = discovered(cluster, 2);
  auto coll = client.collection("db", "c");
  const document doc = oid::bson::from_json(R"({"_id": 1})").value();
  for (int i = 0; i < 20; ++i) {
    cluster.fail_next("find");
    auto found = coll.find_one();
    ASSERT_TRUE(found) << found.error().message;
    cluster.fail_next("insert");
    auto inserted = coll.insert_one(doc.view());
    ASSERT_TRUE(inserted) << inserted.error().message;
  }
  const auto seen = cluster.seen();
  const auto reads = retries(seen, "find");
  const auto writes = retries(seen, "insert");
  ASSERT_EQ(reads.size(), 20u);
  ASSERT_EQ(writes.size(), 20u);
  for (const auto& [failed, retried] : reads) EXPECT_NE(failed, retried) << "a read's retry";
  for (const auto& [failed, retried] : writes) EXPECT_NE(failed, retried) << "a write's retry";
}

// With one mongos the deprioritized one is all there is: the retry goes back to it.
TEST(MongoDeprioritizedTest, ARetryUsesTheFailedMongosWhenThereIsNoOther) {
  mongoses cluster(1);
  auto client = discovered(cluster, 1);
  auto coll = client.collection("db", "c");
  cluster.fail_next("find");
  auto found = coll.find_one();
  ASSERT_TRUE(found) << found.error().message;
  const auto reads = retries(cluster.seen(), "find");
  ASSERT_EQ(reads.size(), 1u);
  EXPECT_EQ(reads[0].first, reads[0].second);
}

}  // namespace
