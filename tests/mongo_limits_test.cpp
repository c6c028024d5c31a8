// Limits a server cannot lift: the hello reply's maxMessageSizeBytes, maxBsonObjectSize,
// maxWriteBatchSize and logicalSessionTimeoutMinutes are taken only within sane ranges (a
// negative, zero or absurd value keeps the default), and writes still split into batches the
// default limits allow. Scripted servers (tests/support/script_server.hpp) send the values.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/connection.hpp>
#include <string>
#include <vector>

#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::test;

constexpr std::int32_t int32_max = std::numeric_limits<std::int32_t>::max();

// The bytes of an OP_MSG as the server received it: header, flags, body, sequences.
std::size_t message_size(const mongo::op_msg& m) {
  std::size_t bytes = 16 + 4 + 1 + m.body.size();
  for (const auto& seq : m.sequences) {
    bytes += 1 + 4 + seq.identifier.size() + 1;
    for (const auto& d : seq.documents) bytes += d.size();
  }
  return bytes;
}

mongo::host host_of(const script_server& s) {
  auto u = mongo::uri::parse(s.uri()).value();
  return u.hosts()[0];
}

TEST(MongoLimitsTest, HelloLimitsOutOfRangeKeepTheDefaults) {
  const mongo::handshake_info defaults;
  for (const std::int32_t bad : {-1, 0, int32_max, std::numeric_limits<std::int32_t>::min()}) {
    SCOPED_TRACE(bad);
    std::mutex m;
    std::vector<std::size_t> sizes, counts;
    script_server server([&](peer& p, int) {
      if (!p.handshake(bad, bad, bad)) return;
      while (auto msg = p.read()) {
        std::size_t count = 0;
        for (const auto& seq : msg->sequences) count += seq.documents.size();
        {
          std::lock_guard lock(m);
          sizes.push_back(message_size(*msg));
          counts.push_back(count);
        }
        acknowledge_insert(p, *msg, count);
      }
    });
    auto c = mongo::connection::open(host_of(server), {});
    ASSERT_TRUE(c.has_value()) << c.error().message;
    EXPECT_EQ(c->server().max_message_size_bytes, defaults.max_message_size_bytes);
    EXPECT_EQ(c->server().max_bson_object_size, defaults.max_bson_object_size);
    EXPECT_EQ(c->server().max_write_batch_size, defaults.max_write_batch_size);

    // A bulk insert is sent, in batches within the defaults (0 made every message too large,
    // and -1 an unbounded batch).
    auto client = mongo::client::create(server.uri()).value();
    const numbered_documents batch = numbered(50, 1000);
    auto r = client.collection("db", "c").insert_many(batch.views);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->inserted, 50);
    std::lock_guard lock(m);
    std::size_t total = 0;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      EXPECT_LE(sizes[i], static_cast<std::size_t>(defaults.max_message_size_bytes));
      total += counts[i];
    }
    EXPECT_EQ(total, 50u);
  }
}

TEST(MongoLimitsTest, HelloLimitsWithinRangeAreTaken) {
  // The floors (an empty document, the smallest OP_MSG, one statement) and values between.
  struct test_case {
    std::int32_t batch, bson, message;
  };
  for (const auto& t : {test_case{1, 5, 26}, test_case{3, 1000, 2000},
                        test_case{100'000, 16 * 1024 * 1024, 48'000'000}}) {
    script_server server([&](peer& p, int) { (void)p.handshake(t.batch, t.bson, t.message); });
    auto c = mongo::connection::open(host_of(server), {});
    ASSERT_TRUE(c.has_value()) << c.error().message;
    EXPECT_EQ(c->server().max_write_batch_size, t.batch);
    EXPECT_EQ(c->server().max_bson_object_size, t.bson);
    EXPECT_EQ(c->server().max_message_size_bytes, t.message);
  }
}

TEST(MongoLimitsTest, AMessageLimitBelowTheCommandsOverheadSendsOneStatementOrRefusesIt) {
  // 26 bytes hold no insert command: each batch is one document, refused before it is sent,
  // never a size that wrapped around.
  std::atomic<int> inserts{0};
  script_server server([&](peer& p, int) {
    if (!p.handshake(100'000, 16 * 1024 * 1024, 26)) return;
    while (auto msg = p.read()) {
      ++inserts;
      acknowledge_insert(p, *msg, 1);
    }
  });
  auto client = mongo::client::create(server.uri()).value();
  const numbered_documents batch = numbered(3);
  auto r = client.collection("db", "c").insert_many(batch.views);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::errc::too_large);
  EXPECT_EQ(inserts.load(), 0);
}

// A standalone with sessions whose logicalSessionTimeoutMinutes is `minutes`; records the lsid
// (hex of its id, "" when none) of every command after the handshake.
class session_server {
 public:
  explicit session_server(std::int64_t minutes)
      : server_([this, minutes](peer& p, int) {
          auto hello = p.read();
          if (!hello) return;
          builder b;
          b.append_bool("isWritablePrimary", true)
              .append_int64("logicalSessionTimeoutMinutes", minutes);
          b.append_int32("maxWireVersion", 17).append_double("ok", 1.0);
          p.reply(*hello, b.view());
          const document ok = ok_reply();
          while (auto m = p.read()) {
            std::string id;
            if (const auto l = m->body.find("lsid")) {
              if (auto d = l->get_document()) {
                if (auto e = d->find("id")) {
                  if (auto bin = e->get_binary()) {
                    for (const auto byte : bin->bytes) id += std::to_string(byte) + ".";
                  }
                }
              }
            }
            {
              std::lock_guard lock(mutex_);
              if (command_name(*m) == "ping") lsids_.push_back(id);
            }
            p.reply(*m, ok.view());
          }
        }) {}
  std::string uri() const { return server_.uri(); }
  std::vector<std::string> lsids() {
    std::lock_guard lock(mutex_);
    return lsids_;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lsids_;
  script_server server_;
};

TEST(MongoLimitsTest, ALogicalSessionTimeoutOfZeroOrLessMeansNoSessions) {
  for (const std::int64_t minutes : {0LL, -5LL, static_cast<long long>(int32_max) * -4}) {
    SCOPED_TRACE(minutes);
    session_server server(minutes);
    auto c = mongo::client::create(server.uri()).value();
    const document cmd = ping();
    ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
    ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
    EXPECT_EQ(server.lsids(), (std::vector<std::string>{"", ""}));
    EXPECT_FALSE(c.topology().logical_session_timeout_minutes.has_value());
  }
}

TEST(MongoLimitsTest, AHugeLogicalSessionTimeoutIsCappedAndTheSessionIsReused) {
  // Minutes that overflow the session pool's nanosecond arithmetic count as the cap
  // (1,000,000 minutes): the one session is pooled and reused.
  for (const std::int64_t minutes :
       {static_cast<std::int64_t>(int32_max), std::numeric_limits<std::int64_t>::max()}) {
    SCOPED_TRACE(minutes);
    session_server server(minutes);
    auto c = mongo::client::create(server.uri()).value();
    const document cmd = ping();
    ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
    ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
    const auto lsids = server.lsids();
    ASSERT_EQ(lsids.size(), 2u);
    EXPECT_NE(lsids[0], "");
    EXPECT_EQ(lsids[0], lsids[1]);
    EXPECT_EQ(c.topology().logical_session_timeout_minutes, 1'000'000);
  }
}

}  // namespace
