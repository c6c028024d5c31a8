// find's options: what each sends, against a scripted server that records the commands (FerretDB
// refuses some of them). Tailable cursors on FerretDB: mongo_tailable_test.cpp.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/documents.hpp"
#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

TEST(MongoFindOptionsTest, EachOptionIsSentUnderItsNameAndOnlyWhenSet) {
  recording_server rec;
  auto c = mongo::client::create(rec.uri()).value();
  auto coll = c.collection("db", "c");
  ASSERT_TRUE(coll.find().has_value());
  EXPECT_EQ(rec.last(), R"({"find":"c","filter":{}})");

  const document hint = json(R"({"a": 1})"), collation = json(R"({"locale": "fr"})"),
                 let = json(R"({"x": 5})"), lo = json(R"({"a": 2})"), hi = json(R"({"a": 9})");
  mongo::find_options o;
  o.hint = hint.view();
  o.collation = collation.view();
  o.comment = "nightly report";
  o.let = let.view();
  o.min = lo.view();
  o.max = hi.view();
  o.max_time = 1500ms;
  o.return_key = true;
  o.show_record_id = true;
  o.allow_disk_use = false;
  o.allow_partial_results = true;
  o.no_cursor_timeout = true;
  ASSERT_TRUE(coll.find({}, o).has_value());
  EXPECT_EQ(rec.last(),
            R"({"find":"c","filter":{},"hint":{"a":1},"collation":{"locale":"fr"},)"
            R"("comment":"nightly report","let":{"x":5},"min":{"a":2},"max":{"a":9},)"
            R"("maxTimeMS":1500,"returnKey":true,"showRecordId":true,"allowDiskUse":false,)"
            R"("allowPartialResults":true,"noCursorTimeout":true})");

  // find_one takes them too, with its own limit.
  mongo::find_options by_name;
  by_name.hint = "a_1";
  by_name.max_time = 20ms;
  ASSERT_TRUE(coll.find_one({}, by_name).has_value());
  EXPECT_EQ(rec.last(),
            R"({"find":"c","filter":{},"hint":"a_1","maxTimeMS":20,"limit":1,"singleBatch":true})");
}

TEST(MongoFindOptionsTest, TailableCursorsSayWhatTheyAreAndTheirGetMoresWait) {
  std::mutex m;
  std::vector<document> got;
  int get_mores = 0;
  script_server server([&](peer& p, int) {
    if (!p.handshake()) return;
    while (auto msg = p.read()) {
      {
        std::lock_guard lock(m);
        got.emplace_back(msg->body);
      }
      builder b;
      if (command_name(*msg) == "find") {
        b.open_document("cursor").append_int64("id", 42).append_string("ns", "db.c");
        b.open_array("firstBatch").open_document("0").append_int32("n", 1).close().close();
        b.close();
      } else if (command_name(*msg) == "getMore") {
        // The first getMore finds nothing new; the second, one document.
        std::lock_guard lock(m);
        const bool second = ++get_mores == 2;
        b.open_document("cursor").append_int64("id", 42).append_string("ns", "db.c");
        b.open_array("nextBatch");
        if (second) b.open_document("0").append_int32("n", 2).close();
        b.close().close();
      }
      b.append_double("ok", 1.0);
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  auto cur = c.collection("db", "c").find(
      {}, {.cursor_kind = mongo::cursor_type::tailable_await, .max_await_time = 250ms});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());
  EXPECT_EQ(cur->current().find("n")->get_int32().value_or(-1), 1);
  // Nothing new: false, and still alive.
  auto more = cur->next();
  ASSERT_TRUE(more.has_value()) << more.error().message;
  EXPECT_FALSE(*more);
  EXPECT_TRUE(cur->alive());
  // Asked again: what came since.
  more = cur->next();
  ASSERT_TRUE(more.has_value()) << more.error().message;
  ASSERT_TRUE(*more);
  EXPECT_EQ(cur->current().find("n")->get_int32().value_or(-1), 2);
  std::lock_guard lock(m);
  ASSERT_GE(got.size(), 3u);
  EXPECT_EQ(got[0].view().find("tailable")->get_bool().value_or(false), true);
  EXPECT_EQ(got[0].view().find("awaitData")->get_bool().value_or(false), true);
  EXPECT_FALSE(got[0].view().contains("maxTimeMS"));  // max_await_time is the getMore's
  EXPECT_EQ(got[1].view().find("maxTimeMS")->get_int64().value_or(-1), 250);
  EXPECT_EQ(got[2].view().find("maxTimeMS")->get_int64().value_or(-1), 250);
}

TEST(MongoFindOptionsTest, MaxAwaitTimeWithoutAwaitDataIsRefusedBeforeAnythingIsSent) {
  recording_server rec;
  auto c = mongo::client::create(rec.uri()).value();
  auto cur = c.collection("db", "c").find(
      {}, {.cursor_kind = mongo::cursor_type::tailable, .max_await_time = 100ms});
  ASSERT_FALSE(cur.has_value());
  EXPECT_EQ(cur.error().code, oid::errc::invalid_value);
  EXPECT_NE(cur.error().message.find("max_await_time"), std::string::npos);
  EXPECT_EQ(rec.last(), "(none)");
}

}  // namespace
