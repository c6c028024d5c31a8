// The client's connection pools (CMAP) with real sockets, against the scripted server
// (support/script_server.hpp): maxPoolSize with a wait queue bounded by waitQueueTimeoutMS, a
// network error that clears the pool, minPoolSize filled in the background and maxIdleTimeMS
// closing idle connections. Also the connection string's pool options. The events against
// FerretDB: mongo_pool_server_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/pool_event.hpp>
#include <oid/mongo/uri.hpp>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "support/ci.hpp"
#include "support/pool_log.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

document command(std::string_view name) {
  builder b;
  b.append_int32(name, 1);
  return std::move(b).extract();
}

// A script that answers every command with ok: 1, after `delay` for a command named "slow"
// (telling `slow_started` when it begins).
std::function<void(peer&, int)> answering(std::atomic<bool>* slow_started = nullptr,
                                          std::chrono::milliseconds delay = 0ms) {
  return [slow_started, delay](peer& p, int) {
    if (!p.handshake()) return;
    const document ok = ok_reply();
    while (auto m = p.read()) {
      if (command_name(*m) == "slow") {
        if (slow_started) *slow_started = true;
        std::this_thread::sleep_for(delay);
      }
      p.reply(*m, ok.view());
    }
  };
}

// A ping sent while another thread's "slow" command holds a connection: its outcome and how long
// it took.
struct contended {
  mongo::outcome<document> ping;
  std::chrono::steady_clock::duration took;
};
contended ping_while_busy(mongo::client& c, const std::atomic<bool>& slow_started) {
  std::thread first([&] {
    const document slow = command("slow");
    EXPECT_TRUE(c.run_command("admin", slow.view()).has_value());
  });
  while (!slow_started) std::this_thread::sleep_for(1ms);
  const auto started = std::chrono::steady_clock::now();
  const document ping = command("ping");
  auto second = c.run_command("admin", ping.view());
  const auto took = std::chrono::steady_clock::now() - started;
  first.join();
  return {std::move(second), took};
}

TEST(MongoPoolTest, WithMaxPoolSizeOneTheSecondOperationWaitsForTheConnection) {
  std::atomic<bool> slow_started{false};
  script_server server(answering(&slow_started, 300ms));
  pool_log log;
  auto c =
      mongo::client::create(server.uri("&maxPoolSize=1&waitQueueTimeoutMS=5000"), log.options())
          .value();
  const auto [second, waited] = ping_while_busy(c, slow_started);
  ASSERT_TRUE(second.has_value()) << second.error().message;
  EXPECT_GE(waited, 100ms);  // it waited for the first operation's connection
  EXPECT_EQ(server.connections(), 1);
  EXPECT_EQ(log.count<mongo::connection_created_event>(), 1u) << joined(log.names());
  EXPECT_EQ(log.count<mongo::connection_checked_out_event>(), 2u) << joined(log.names());
}

TEST(MongoPoolTest, WaitQueueTimeoutMSEndsTheWaitWithATimeoutNamingThePool) {
  std::atomic<bool> slow_started{false};
  script_server server(answering(&slow_started, 1000ms));
  pool_log log;
  auto c = mongo::client::create(server.uri("&maxPoolSize=1&waitQueueTimeoutMS=100"), log.options())
               .value();
  const auto [second, waited] = ping_while_busy(c, slow_started);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, oid::mongo::errc::timeout) << second.error().message;
  const std::string& why = second.error().message;
  EXPECT_NE(why.find("waiting for a connection to 127.0.0.1:"), std::string::npos) << why;
  EXPECT_NE(why.find("waitQueueTimeoutMS 100"), std::string::npos) << why;
  EXPECT_NE(why.find("maxPoolSize 1"), std::string::npos) << why;
  EXPECT_GE(waited, 100ms);
  EXPECT_LT(waited, 900ms);  // not until the first operation gave the connection back
  const auto names = log.names();
  EXPECT_TRUE(contains(names, "CheckOutFailed timeout")) << joined(names);
  // A full pool says nothing about the server: no clear, and the pool keeps its connection.
  EXPECT_EQ(log.count<mongo::pool_cleared_event>(), 0u) << joined(names);
  EXPECT_EQ(server.connections(), 1);
}

TEST(MongoPoolTest, ANetworkErrorClearsThePoolAndTheNextOperationOpensANewConnection) {
  // The first connection is reset at its first command; the others answer.
  script_server server([](peer& p, int number) {
    if (!p.handshake()) return;
    const document ok = ok_reply();
    while (auto m = p.read()) {
      if (number == 0) return;  // closes the socket without an answer
      p.reply(*m, ok.view());
    }
  });
  pool_log log;
  auto c = mongo::client::create(server.uri(), log.options()).value();
  const document ping = command("ping");
  auto first = c.run_command("admin", ping.view());
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, oid::mongo::errc::connection_closed) << first.error().message;
  auto names = log.names();
  ASSERT_TRUE(contains(names, "PoolCleared")) << joined(names);
  // The broken connection, opened before the clear, is closed when it comes back.
  EXPECT_LT(position(names, "PoolCleared"), position(names, "ConnectionClosed 1 stale"))
      << joined(names);
  EXPECT_EQ(c.topology().servers.begin()->second.type, mongo::server_type::unknown);

  auto second = c.run_command("admin", ping.view());
  ASSERT_TRUE(second.has_value()) << second.error().message;
  names = log.names();
  SCOPED_TRACE(joined(names));
  // The pool is ready again for the next operation, which opens connection 2.
  const std::size_t cleared = position(names, "PoolCleared");
  const std::size_t ready_again = static_cast<std::size_t>(
      std::find(names.begin() + static_cast<std::ptrdiff_t>(cleared), names.end(), "PoolReady") -
      names.begin());
  EXPECT_LT(ready_again, position(names, "ConnectionCreated 2"));
  EXPECT_TRUE(contains(names, "CheckedOut 2"));
  EXPECT_EQ(server.connections(), 2);
  EXPECT_NE(c.topology().servers.begin()->second.type, mongo::server_type::unknown);
}

TEST(MongoPoolTest, MinPoolSizeIsFilledInTheBackground) {
  script_server server(answering());
  pool_log log;
  auto c = mongo::client::create(server.uri("&minPoolSize=3"), log.options()).value();
  // No operation: the pool opens them on its own.
  ASSERT_TRUE(log.wait_for<mongo::connection_ready_event>(3)) << joined(log.names());
  EXPECT_EQ(server.connections(), 3);
  EXPECT_EQ(log.count<mongo::connection_check_out_started_event>(), 0u);
  // Operations use them without opening more.
  const document ping = command("ping");
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(c.run_command("admin", ping.view()).has_value());
  EXPECT_EQ(log.count<mongo::connection_created_event>(), 3u) << joined(log.names());
  EXPECT_EQ(server.connections(), 3);
}

TEST(MongoPoolTest, MaxIdleTimeMSClosesIdleConnections) {
  script_server server(answering());
  pool_log log;
  auto c = mongo::client::create(server.uri("&maxIdleTimeMS=100"), log.options()).value();
  const document ping = command("ping");
  ASSERT_TRUE(c.run_command("admin", ping.view()).has_value());
  // Idle for longer than maxIdleTimeMS: closed (by the background thread or the next
  // check-out), and the next operation opens another.
  std::this_thread::sleep_for(300ms);
  ASSERT_TRUE(c.run_command("admin", ping.view()).has_value());
  const auto names = log.names();
  EXPECT_TRUE(contains(names, "ConnectionClosed 1 idle")) << joined(names);
  EXPECT_TRUE(contains(names, "CheckedOut 2")) << joined(names);
  EXPECT_EQ(server.connections(), 2);
}

TEST(MongoPoolTest, AMonitoredPoolBecomesReadyAfterTheFirstCheck) {
  script_server server(answering());
  pool_log log;
  // directConnection=false: one seed, discovered and checked by a monitor.
  auto c = mongo::client::create(server.uri("&directConnection=false"), log.options()).value();
  ASSERT_TRUE(log.wait_for<mongo::pool_ready_event>(1)) << joined(log.names());
  const document ping = command("ping");
  ASSERT_TRUE(c.run_command("admin", ping.view()).has_value());
  const auto names = log.names();
  EXPECT_EQ(names[0], "PoolCreated") << joined(names);
  EXPECT_EQ(names[1], "PoolReady") << joined(names);
  // The monitor's own connection is not the pool's: the operation opened connection 1.
  EXPECT_TRUE(contains(names, "CheckedOut 1")) << joined(names);
  EXPECT_EQ(server.connections(), 2);
}

TEST(MongoPoolTest, ConnectionStringPoolOptions) {
  auto u = mongo::uri::parse(
      "mongodb://h/?maxPoolSize=5&minPoolSize=3&maxConnecting=1&maxIdleTimeMS=50000"
      "&waitQueueTimeoutMS=250");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->max_pool_size(), 5u);
  EXPECT_EQ(u->min_pool_size(), 3u);
  EXPECT_EQ(u->max_connecting(), 1u);
  EXPECT_EQ(u->max_idle_time(), 50000ms);
  EXPECT_EQ(u->wait_queue_timeout(), 250ms);
  // maxPoolSize=0 has no limit, so any minPoolSize fits.
  EXPECT_TRUE(mongo::uri::parse("mongodb://h/?maxPoolSize=0&minPoolSize=500").has_value());

  struct refused {
    const char* text;
    const char* names;  // what the message must say
  };
  const refused cases[] = {
      {"mongodb://h/?maxPoolSize=2&minPoolSize=3", "minPoolSize=3 is more than maxPoolSize=2"},
      {"mongodb://h/?minPoolSize=101",
       "minPoolSize=101 is more than maxPoolSize=100 (the default)"},
      {"mongodb://h/?maxConnecting=0", "maxConnecting"},
      {"mongodb://h/?maxConnecting=-1", "maxConnecting"},
      {"mongodb://h/?minPoolSize=x", "minPoolSize"},
      {"mongodb://h/?maxIdleTimeMS=-2", "maxIdleTimeMS"},
      {"mongodb://h/?waitQueueTimeoutMS=soon", "waitQueueTimeoutMS"},
  };
  for (const auto& r : cases) {
    SCOPED_TRACE(r.text);
    auto bad = mongo::uri::parse(r.text);
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().code, oid::mongo::errc::invalid_uri);
    EXPECT_NE(bad.error().message.find(r.names), std::string::npos) << bad.error().message;
  }
  // Lenient mode ignores an invalid value with a warning, but not a contradiction.
  auto lenient = mongo::uri::parse("mongodb://h/?maxConnecting=0", mongo::uri_mode::lenient);
  ASSERT_TRUE(lenient.has_value());
  EXPECT_FALSE(lenient->max_connecting().has_value());
  EXPECT_EQ(lenient->warnings().size(), 1u);
  EXPECT_FALSE(
      mongo::uri::parse("mongodb://h/?maxPoolSize=2&minPoolSize=3", mongo::uri_mode::lenient)
          .has_value());
}

}  // namespace
