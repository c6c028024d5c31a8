// The client's connection pool against the server MONGODB_URI names (FerretDB under
// scripts/test.sh): the events an application sees for a few operations, in order.
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

TEST(MongoPoolServerTest, EventsForAFewOperations) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri);
  pool_log log;
  {
    auto c = mongo::client::create(uri, log.options());
    ASSERT_TRUE(c.has_value()) << c.error().message;
    const document ping = command("ping");
    for (int i = 0; i < 3; ++i) {
      auto r = c->run_command("admin", ping.view());
      ASSERT_TRUE(r.has_value()) << r.error().message;
    }
    auto dbs = c->list_databases();
    ASSERT_TRUE(dbs.has_value()) << dbs.error().message;
  }
  const auto names = log.names();
  SCOPED_TRACE(joined(names));
  ASSERT_GE(names.size(), 2u);
  EXPECT_EQ(names[0], "PoolCreated");
  // The pool lends nothing before the monitor's first check, and selection waits for that check:
  // the pool is ready before the first check-out starts.
  EXPECT_EQ(names[1], "PoolReady");
  EXPECT_EQ(log.count<mongo::pool_created_event>(), 1u);
  // Four operations, one after the other, and the client's endSessions at its end: one
  // connection, lent five times.
  EXPECT_EQ(log.count<mongo::connection_created_event>(), 1u);
  EXPECT_EQ(log.count<mongo::connection_ready_event>(), 1u);
  EXPECT_EQ(log.count<mongo::connection_check_out_started_event>(), 5u);
  EXPECT_EQ(log.count<mongo::connection_checked_out_event>(), 5u);
  EXPECT_EQ(log.count<mongo::connection_checked_in_event>(), 5u);
  EXPECT_EQ(log.count<mongo::connection_check_out_failed_event>(), 0u);
  EXPECT_LT(position(names, "ConnectionCreated 1"), position(names, "ConnectionReady 1"));
  EXPECT_LT(position(names, "ConnectionReady 1"), position(names, "CheckedOut 1"));
  EXPECT_LT(position(names, "CheckedOut 1"), position(names, "CheckedIn 1"));
  // The client's end closes the pool and its idle connection.
  EXPECT_TRUE(contains(names, "ConnectionClosed 1 poolClosed"));
  EXPECT_EQ(names.back(), "PoolClosed");
  // Every event names the server as the client does.
  for (const auto& e : log.events()) {
    const std::string address = std::visit([](const auto& v) { return v.address; }, e);
    EXPECT_FALSE(address.empty());
  }
}

}  // namespace
