// Limits a server cannot lift: the hello reply's maxMessageSizeBytes, maxBsonObjectSize,
// maxWriteBatchSize and logicalSessionTimeoutMinutes are taken only within sane ranges (a
// negative, zero or absurd value keeps the default), and writes still split into batches the
// default limits allow; a topology holds at most max_servers servers, whatever the seeds, the
// members' hello replies or the SRV records list, and says when it ignored some. Scripted servers
// (tests/support/script_server.hpp) send the values.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "mongo/sdam/sdam.hpp"
#include "mongo/wire/connection.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

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

// ---- servers per topology --------------------------------------------------------------------

mongo::topology_settings settings_of(std::vector<std::string> seeds,
                                     std::optional<std::string> replica_set = std::nullopt) {
  mongo::topology_settings s;
  s.seeds = std::move(seeds);
  s.replica_set = std::move(replica_set);
  return s;
}

// A primary's hello listing itself and `others` more hosts ("127.1.x.y:1" and ":2"), as BSON.
document primary_listing(const std::string& me, std::size_t others) {
  builder b;
  b.append_bool("isWritablePrimary", true).append_string("setName", "rs");
  b.append_int32("setVersion", 1).append_string("me", me).append_string("primary", me);
  b.open_array("hosts").append_string("0", me);
  for (std::size_t i = 0; i < others; ++i) {
    // Loopback addresses only (127.0.0.0/8), on ports 1 and 2, where nothing listens: a monitor's
    // connection is refused at once, and no packet leaves the machine.
    b.append_string(std::to_string(i + 1), "127.1." + std::to_string(i / 250 % 250) + "." +
                                               std::to_string(i % 250 + 1) + ":" +
                                               std::to_string(1 + i / 62500));
  }
  b.close();
  b.append_int32("minWireVersion", 6).append_int32("maxWireVersion", 17).append_double("ok", 1.0);
  return std::move(b).extract();
}

TEST(MongoLimitsTest, AHelloListingManyHostsAddsAtMostMaxServersAndSaysSo) {
  auto t = mongo::open_topology(settings_of({"a:1"}, "rs"));
  const document hello = primary_listing("a:1", 100'000);
  auto u = mongo::apply_hello(t.description, "a:1", hello.view(), 1.0);
  EXPECT_EQ(u.description.type, mongo::topology_type::replica_set_with_primary);
  EXPECT_EQ(u.description.servers.size(), mongo::max_servers);
  ASSERT_TRUE(u.description.ignored_hosts.has_value());
  EXPECT_NE(u.description.ignored_hosts->find("a:1 listed 99901 more hosts"), std::string::npos)
      << *u.description.ignored_hosts;
  // The description keeps max_servers members per list, and counts the others.
  const auto* primary = u.description.find("a:1");
  ASSERT_NE(primary, nullptr);
  EXPECT_EQ(primary->hosts.size(), mongo::max_servers);
  EXPECT_EQ(primary->dropped_members, 100'001 - mongo::max_servers);
  // The listener sees it in the topology's change.
  bool seen = false;
  for (const auto& e : u.events) {
    if (const auto* c = std::get_if<mongo::topology_description_changed_event>(&e)) {
      seen = seen || c->current.ignored_hosts.has_value();
    }
  }
  EXPECT_TRUE(seen);
  // A later hello that fits clears it.
  const document fits = primary_listing("a:1", 3);
  u = mongo::apply_hello(u.description, "a:1", fits.view(), 1.0);
  EXPECT_EQ(u.description.servers.size(), 4u);
  EXPECT_FALSE(u.description.ignored_hosts.has_value());
}

TEST(MongoLimitsTest, SeedsAndSrvHostsPastMaxServersAreIgnored) {
  std::vector<std::string> many;
  for (int i = 0; i < 5000; ++i) many.push_back("h" + std::to_string(i) + ".example.com:27017");
  auto t = mongo::open_topology(settings_of(many));
  EXPECT_EQ(t.description.servers.size(), mongo::max_servers);
  ASSERT_TRUE(t.description.ignored_hosts.has_value());
  EXPECT_NE(t.description.ignored_hosts->find("the connection string listed 4900 more hosts"),
            std::string::npos)
      << *t.description.ignored_hosts;

  auto first = mongo::open_topology(settings_of({"h0.example.com:27017"}));
  auto u = mongo::apply_srv_hosts(first.description, many);
  EXPECT_EQ(u.description.servers.size(), mongo::max_servers);
  EXPECT_TRUE(u.description.find("h0.example.com:27017") != nullptr);
  ASSERT_TRUE(u.description.ignored_hosts.has_value());
  EXPECT_NE(u.description.ignored_hosts->find("the SRV records listed 4900 more hosts"),
            std::string::npos)
      << *u.description.ignored_hosts;
  u = mongo::apply_srv_hosts(u.description, {"h1.example.com:27017", "h2.example.com:27017"});
  EXPECT_EQ(u.description.servers.size(), 2u);
  EXPECT_FALSE(u.description.ignored_hosts.has_value());
}

// The threads of this process now.
std::size_t thread_count() {
  std::size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task")) {
    (void)e;
    ++n;
  }
  return n;
}

TEST(MongoLimitsTest, AReplicaSetListing100000HostsDoesNotStartAThreadPerHost) {
  // The other hosts are 127.1.x.y on ports 1 and 2, where nothing listens: their monitors'
  // connections are refused and keep them Unknown. The handshake reads a hello of over 2 MB, which
  // takes ThreadSanitizer more than a moment: connectTimeoutMS leaves it 5 s.
  std::atomic<std::size_t> largest_hello{0};
  script_server server([&](peer& p, int) {
    while (auto m = p.read()) {
      const std::string name = command_name(*m);
      if (name == "hello" || name == "isMaster") {
        sockaddr_in addr{};
        socklen_t len = sizeof addr;
        ::getsockname(p.fd(), reinterpret_cast<sockaddr*>(&addr), &len);
        const document h =
            primary_listing("127.0.0.1:" + std::to_string(ntohs(addr.sin_port)), 100'000);
        largest_hello = std::max<std::size_t>(largest_hello, h.size());
        p.reply(*m, h.view());
      } else {
        const document ok = ok_reply();
        p.reply(*m, ok.view());
      }
    }
  });
  const std::size_t before = thread_count();
  {
    auto c = mongo::client::create("mongodb://" + server.address() +
                                   "/?replicaSet=rs&connectTimeoutMS=5000&"
                                   "serverSelectionTimeoutMS=10000")
                 .value();
    const document cmd = ping();
    auto r = c.run_command("admin", cmd.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const auto t = c.topology();
    EXPECT_EQ(t.servers.size(), mongo::max_servers);
    EXPECT_TRUE(t.ignored_hosts.has_value());
    // A monitor and a pool's maintenance thread per server, and the script server's threads.
    const std::size_t now = thread_count();
    EXPECT_LE(now, before + 2 * mongo::max_servers + 10) << "threads before: " << before;
  }
  EXPECT_GT(largest_hello.load(), 2'000'000u);  // the hello really listed them all
}
