// The options of the counts, distinct, aggregate and the database's commands: what each sends,
// against a scripted server that records the commands (FerretDB refuses some of them). What
// FerretDB does with those it takes: mongo_options_server_test.cpp.
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

TEST(MongoOptionsTest, CountsAndDistinctSendTheirOptions) {
  recording_server rec;
  auto c = mongo::client::create(rec.uri()).value();
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
  auto c = mongo::client::create(rec.uri()).value();
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

}  // namespace
