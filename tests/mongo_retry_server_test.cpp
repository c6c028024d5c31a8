// Sessions and retryable writes against the server MONGODB_URI names (FerretDB under
// scripts/test.sh, a standalone).
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/ci.hpp"
#include "support/documents.hpp"
#include "support/hex.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// FerretDB reports logicalSessionTimeoutMinutes and accepts lsid, but is a standalone (no
// retryable writes: no txnNumber) and has no endSessions (CommandNotFound, ignored).
TEST(MongoRetryServerTest, AStandaloneGetsSessionsButNoTxnNumberAndRefusesEndSessionsQuietly) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri);
  std::mutex m;
  std::vector<document> started;
  std::vector<std::string> events;
  mongo::client_options options;
  options.on_command = [&](const mongo::command_event& e) {
    std::lock_guard lock(m);
    if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
      started.push_back(s->command);
      events.push_back("started " + s->command_name);
    } else if (const auto* ok = std::get_if<mongo::command_succeeded_event>(&e)) {
      events.push_back("succeeded " + ok->command_name);
    } else {
      events.push_back("failed " + std::get<mongo::command_failed_event>(e).command_name);
    }
  };
  const std::string db = "oid_retry_" + oid::generate().to_hex().substr(16);
  {
    auto c = mongo::client::create(uri, options).value();
    auto coll = c.collection(db, "c");
    const document d = json(R"({"_id": 1, "x": 1})"), f = json(R"({"_id": 1})"),
                   u = json(R"({"$set": {"x": 2}})");
    ASSERT_TRUE(coll.insert_one(d.view()).has_value());
    ASSERT_TRUE(coll.update_one(f.view(), u.view()).has_value());
    auto cur = coll.find();
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    ASSERT_TRUE(cur->next().value());
    auto n = coll.count_documents({});
    ASSERT_TRUE(n.has_value()) << n.error().message;
    EXPECT_EQ(*n, 1);
    builder drop;
    drop.append_int32("dropDatabase", 1);
    ASSERT_TRUE(c.run_command(db, drop.view()).has_value());
    std::lock_guard lock(m);
    ASSERT_GE(started.size(), 5u);
    for (const auto& cmd : started) {
      SCOPED_TRACE(oid::bson::to_json(cmd.view()));
      EXPECT_TRUE(cmd.view().contains("lsid"));
      EXPECT_FALSE(cmd.view().contains("txnNumber"));
    }
  }
  // Closing sends endSessions; FerretDB refuses it, and that is all that happens.
  std::lock_guard lock(m);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[events.size() - 2], "started endSessions");
  const std::string& last = events.back();
  EXPECT_TRUE(last == "failed endSessions" || last == "succeeded endSessions") << last;
}

}  // namespace
