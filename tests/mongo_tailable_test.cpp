// Tailable cursors on the real server (MONGODB_URI; FerretDB under scripts/test.sh): a reader
// following a capped collection while a writer appends.
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

// ---- against the real server

class MongoTailableTest : public oid::testing::server_test {};

TEST_F(MongoTailableTest, AReaderFollowsACappedCollectionWhileAWriterAppends) {
  auto db = client_->database(db_);
  const document capped = json(R"({"capped": true, "size": 1048576})");
  auto made = db.create_collection("log", capped.view());
  ASSERT_TRUE(made.has_value()) << made.error().message;
  auto log = db.collection("log");
  for (int i = 0; i < 3; ++i) {
    builder b;
    b.append_int32("n", i);
    ASSERT_TRUE(log.insert_one(b.view()).has_value());
  }
  // FerretDB (v1.24) closes a tailable cursor whose first batch holds every document, where
  // MongoDB keeps it open: batches of one keep it open on both.
  auto cur = log.find({}, {.batch_size = 1,
                           .cursor_kind = mongo::cursor_type::tailable_await,
                           .max_await_time = 200ms});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;

  std::atomic<bool> stop{false};
  std::thread writer([&] {
    auto w = client_->database(db_).collection("log");
    for (int i = 3; i < 10 && !stop; ++i) {
      std::this_thread::sleep_for(30ms);
      builder b;
      b.append_int32("n", i);
      (void)w.insert_one(b.view());
    }
  });
  std::vector<int> seen;
  int empty_polls = 0;
  const auto give_up = std::chrono::steady_clock::now() + 20s;  // a bound, not a measurement
  while (seen.size() < 10 && cur->alive() && std::chrono::steady_clock::now() < give_up) {
    auto more = cur->next();
    ASSERT_TRUE(more.has_value()) << more.error().message;
    if (!*more) {
      ++empty_polls;
      continue;
    }
    seen.push_back(cur->current().find("n")->get_int32().value_or(-1));
  }
  stop = true;
  writer.join();
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(cur->alive());  // tailable: still open after the last document
  // With nothing more to come, a getMore waits about max_await_time and finds nothing.
  auto idle = cur->next();
  ASSERT_TRUE(idle.has_value()) << idle.error().message;
  EXPECT_FALSE(*idle);
  EXPECT_TRUE(cur->alive());
}

TEST_F(MongoTailableTest, OptionsTheServerTakes) {
  auto c = coll();
  for (int i = 0; i < 5; ++i) {
    builder b;
    b.append_int32("_id", i).append_int32("n", i * 10);
    ASSERT_TRUE(c.insert_one(b.view()).has_value());
  }
  const document by_n = json(R"({"n": -1})");
  auto cur = c.find({}, {.sort = by_n.view(),
                         .limit = 2,
                         .max_time = 5s,
                         .hint = "_id_",
                         .comment = "oid find options test"});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  std::vector<int> ns;
  while (cur->next().value_or(false)) ns.push_back(cur->current().find("n")->get_int32().value());
  EXPECT_EQ(ns, (std::vector<int>{40, 30}));
  EXPECT_FALSE(cur->alive());
}

}  // namespace
