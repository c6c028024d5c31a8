// The options of the counts, distinct, aggregate and the database's commands: what each sends,
// against a scripted server that records the commands (FerretDB refuses some of them), and what
// FerretDB does with those it takes.
#include <gtest/gtest.h>

#include <chrono>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <vector>

#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::test;
using namespace std::chrono_literals;

document json(const char* text) { return oid::bson::from_json(text).value(); }

TEST(MongoOptionsTest, CountsAndDistinctSendTheirOptions) {
  recording_server rec;
  auto c = mongo::client::create(rec.server.uri()).value();
  auto coll = c.collection("db", "c");
  const document filter = json(R"({"a": {"$gt": 1}})"), collation = json(R"({"locale": "fr"})");

  ASSERT_TRUE(coll.count_documents(filter.view()).has_value());
  EXPECT_EQ(rec.last(), R"({"aggregate":"c","pipeline":[{"$match":{"a":{"$gt":1}}},)"
                        R"({"$group":{"_id":1,"n":{"$sum":1}}}],"cursor":{}})");
  ASSERT_TRUE(coll.count_documents(filter.view(), {.skip = 2,
                                                   .limit = 5,
                                                   .max_time = 300ms,
                                                   .hint = "a_1",
                                                   .collation = collation.view(),
                                                   .comment = "c1"})
                  .has_value());
  EXPECT_EQ(rec.last(),
            R"({"aggregate":"c","pipeline":[{"$match":{"a":{"$gt":1}}},{"$skip":2},{"$limit":5},)"
            R"({"$group":{"_id":1,"n":{"$sum":1}}}],"cursor":{},"hint":"a_1",)"
            R"("collation":{"locale":"fr"},"comment":"c1","maxTimeMS":300})");
  auto negative = coll.count_documents({}, {.skip = -1});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.error().code, oid::errc::invalid_value);

  ASSERT_TRUE(coll.estimated_document_count({.max_time = 20ms, .comment = "e"}).has_value());
  EXPECT_EQ(rec.last(), R"({"count":"c","maxTimeMS":20,"comment":"e"})");
  ASSERT_TRUE(coll.distinct("k", filter.view(), {.comment = "d"}).has_value());
  EXPECT_EQ(rec.last(), R"({"distinct":"c","key":"k","query":{"a":{"$gt":1}},"comment":"d"})");

  const document stage = json(R"({"$match": {}})");
  const std::vector<oid::bson::document_view> pipeline{stage.view()};
  ASSERT_TRUE(coll.aggregate(pipeline, {.comment = "agg"}).has_value());
  EXPECT_EQ(rec.last(), R"({"aggregate":"c","pipeline":[{"$match":{}}],"cursor":{},)"
                        R"("comment":"agg"})");
}

TEST(MongoOptionsTest, CreateCollectionSendsTypedOptionsAndRefusesContradictions) {
  recording_server rec;
  auto c = mongo::client::create(rec.server.uri()).value();
  auto db = c.database("db");
  const document validator = json(R"({"n": {"$type": "int"}})");
  const document series = json(R"({"timeField": "t", "granularity": "hours"})");
  const document other = json(R"({"comment": "made by a test"})");
  ASSERT_TRUE(
      db.create_collection("log", mongo::create_collection_options{.capped = true,
                                                                   .size = 4096,
                                                                   .max = 10,
                                                                   .validator = validator.view(),
                                                                   .validation_level = "moderate",
                                                                   .validation_action = "warn",
                                                                   .other = other.view()})
          .has_value());
  EXPECT_EQ(rec.last(), R"({"create":"log","capped":true,"size":4096,"max":10,)"
                        R"("validator":{"n":{"$type":"int"}},"validationLevel":"moderate",)"
                        R"("validationAction":"warn","comment":"made by a test"})");
  ASSERT_TRUE(
      db.create_collection("ts", mongo::create_collection_options{.timeseries = series.view(),
                                                                  .expire_after_seconds = 3600})
          .has_value());
  EXPECT_EQ(rec.last(), R"({"create":"ts","timeseries":{"timeField":"t","granularity":"hours"},)"
                        R"("expireAfterSeconds":3600})");
  const std::string before = rec.last();
  auto no_size = db.create_collection("x", mongo::create_collection_options{.capped = true});
  ASSERT_FALSE(no_size.has_value());
  EXPECT_EQ(no_size.error().code, oid::errc::invalid_value);
  auto not_capped = db.create_collection("x", mongo::create_collection_options{.max = 5});
  ASSERT_FALSE(not_capped.has_value());
  EXPECT_EQ(not_capped.error().code, oid::errc::invalid_value);
  EXPECT_EQ(rec.last(), before);  // neither was sent
}

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

}  // namespace
