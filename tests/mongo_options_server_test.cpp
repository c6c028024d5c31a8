// The read options against the real server (MONGODB_URI; FerretDB under scripts/test.sh): what
// FerretDB does with those it takes.
#include <gtest/gtest.h>

#include <chrono>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// ---- against the real server

class MongoOptionsServerTest : public oid::testing::server_test {};

TEST_F(MongoOptionsServerTest, CountSkipsAndLimitsAndACappedCollectionKeepsItsOptions) {
  auto c = coll();
  for (int i = 0; i < 10; ++i) {
    builder b;
    b.append_int32("_id", i).append_int32("even", i % 2);
    ASSERT_TRUE(c.insert_one(b.view()).has_value());
  }
  const document evens = json(R"({"even": 0})");
  EXPECT_EQ(c.count_documents(evens.view()).value(), 5);
  EXPECT_EQ(c.count_documents(evens.view(), {.skip = 1}).value(), 4);
  EXPECT_EQ(c.count_documents(evens.view(), {.skip = 1, .limit = 2}).value(), 2);
  EXPECT_EQ(c.count_documents({}, {.limit = 100, .comment = "all"}).value(), 10);
  EXPECT_EQ(c.estimated_document_count({.comment = "estimate"}).value(), 10);
  mongo::read_preference nearest;
  nearest.mode = mongo::read_mode::nearest;
  EXPECT_EQ(c.count_documents({}, {.read_preference = nearest}).value(), 10);
  auto found = c.find({}, {.read_preference = nearest});
  ASSERT_TRUE(found.has_value()) << found.error().message;

  auto db = client_->database(db_);
  auto made = db.create_collection(
      "capped", mongo::create_collection_options{.capped = true, .size = 1 << 20, .max = 3});
  ASSERT_TRUE(made.has_value()) << made.error().message;
  // The server keeps the options (FerretDB v1.24 trims a capped collection in the background,
  // so its document count is not checked here).
  const document by_name = json(R"({"name": "capped"})");
  auto listed = db.list_collections(by_name.view());
  ASSERT_TRUE(listed.has_value()) << listed.error().message;
  ASSERT_EQ(listed->size(), 1u);
  const auto options = (*listed)[0].view().find("options")->get_document().value();
  EXPECT_EQ(options.find("capped")->get_bool().value_or(false), true);
  EXPECT_EQ(oid::bson::to_json(options), R"({"capped":true,"size":1048576,"max":3})");
  const document stats = json(R"({"dbStats": 1})");
  auto r = db.run_command(stats.view(), nearest);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_TRUE(r->view().contains("collections"));
}

TEST_F(MongoOptionsServerTest, TheDeprecatedCountAndRunCursorCommandAgainstTheServer) {
  auto c = coll();
  for (int i = 0; i < 5; ++i) {
    builder b;
    b.append_int32("_id", i).append_int32("even", i % 2);
    ASSERT_TRUE(c.insert_one(b.view(), {.comment = "seeding"}).has_value());
  }
  const document evens = json(R"({"even": 0})");
  EXPECT_EQ(c.count().value(), 5);
  EXPECT_EQ(c.count(evens.view()).value(), 3);
  EXPECT_EQ(c.count(evens.view(), {.skip = 1, .limit = 1, .comment = "deprecated"}).value(), 1);

  // A find run as a command, read batch by batch: 2 in the first, then getMores of 2.
  builder find;
  find.append_string("find", c.name()).append_int32("batchSize", 2);
  find.open_document("sort").append_int32("_id", 1).close();
  auto cur = client_->database(db_).run_cursor_command(find.view(), {.batch_size = 2});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  std::vector<int> ids;
  while (true) {
    auto more = cur->next();
    ASSERT_TRUE(more.has_value()) << more.error().message;
    if (!*more) break;
    ids.push_back(cur->current().find("_id")->get_int32().value());
  }
  EXPECT_EQ(ids, (std::vector<int>{0, 1, 2, 3, 4}));
  // A command that opens no cursor.
  const document ping_command = ping();
  auto none = client_->database(db_).run_cursor_command(ping_command.view());
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().code, mongo::errc::unexpected_reply);
  // Closing a cursor the server still holds.
  auto open = client_->database(db_).run_cursor_command(find.view());
  ASSERT_TRUE(open.has_value()) << open.error().message;
  EXPECT_NE(open->id(), 0);
  auto closed = open->close();
  ASSERT_TRUE(closed.has_value()) << closed.error().message;
  EXPECT_FALSE(open->alive());
}

}  // namespace
