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

TEST(MongoOptionsTest, WritesSendTheirCommentOfAnyType) {
  recording_server rec;
  auto c = mongo::client::create(rec.uri()).value();
  auto coll = c.collection("db", "c");
  const document doc = json(R"({"_id": 1})"), set = json(R"({"$set": {"a": 1}})");
  const document note = json(R"({"v": {"by": "test"}})");
  const mongo::comment by_test(*note.view().begin());
  const auto comment_of_last = [&] {
    const auto seen = rec.seen();
    const auto e = seen.back().body.view().find("comment");
    if (!e) return std::string("(none)");
    oid::bson::builder b;
    b.append_element("comment", *e);
    return oid::bson::to_json(b.view());
  };
  const std::string expected = R"({"comment":{"by":"test"}})";

  ASSERT_TRUE(coll.insert_one(doc.view(), {.bypass_document_validation = true, .comment = by_test})
                  .has_value());
  EXPECT_EQ(comment_of_last(), expected);
  EXPECT_NE(rec.last().find(R"("bypassDocumentValidation":true)"), std::string::npos) << rec.last();
  const oid::bson::document_view docs[] = {doc.view()};
  ASSERT_TRUE(coll.insert_many(docs, {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  ASSERT_TRUE(coll.update_one(doc.view(), set.view(), {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  ASSERT_TRUE(coll.replace_one(doc.view(), doc.view(), {.comment = "text"}).has_value());
  EXPECT_EQ(comment_of_last(), R"({"comment":"text"})");
  ASSERT_TRUE(coll.delete_many(doc.view(), {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  ASSERT_TRUE(coll.find_one_and_update(doc.view(), set.view(), {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  ASSERT_TRUE(coll.find_one_and_delete(doc.view(), {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  const mongo::write_model models[] = {mongo::delete_one_model{doc.view()}};
  ASSERT_TRUE(coll.bulk_write(models, {.comment = by_test}).has_value());
  EXPECT_EQ(comment_of_last(), expected);
  // Without one, none is sent.
  ASSERT_TRUE(coll.delete_one(doc.view()).has_value());
  EXPECT_EQ(comment_of_last(), "(none)");
}

TEST(MongoOptionsTest, TheDeprecatedCountAndTheIndexCommandsSendTheirOptions) {
  recording_server rec;
  auto c = mongo::client::create(rec.uri()).value();
  auto coll = c.collection("db", "c");
  const document filter = json(R"({"a": 1})"), keys = json(R"({"a": 1})");
  ASSERT_TRUE(coll.count().has_value());
  EXPECT_EQ(rec.last(), R"({"count":"c"})");
  ASSERT_TRUE(coll.count(filter.view(),
                         {.skip = 1, .limit = 2, .max_time = 50ms, .hint = "a_1", .comment = "n"})
                  .has_value());
  EXPECT_EQ(rec.last(), R"({"count":"c","query":{"a":1},"skip":1,"limit":2,"hint":"a_1",)"
                        R"("maxTimeMS":50,"comment":"n"})");
  auto negative = coll.count({}, {.limit = -1});
  ASSERT_FALSE(negative.has_value());
  EXPECT_EQ(negative.error().code, oid::errc::invalid_value);

  ASSERT_TRUE(coll.create_index(keys.view(), {}, {.max_time = 70ms, .comment = "i"}).has_value());
  EXPECT_EQ(rec.last(), R"({"createIndexes":"c","indexes":[{"key":{"a":1},"name":"a_1"}],)"
                        R"("maxTimeMS":70,"comment":"i"})");
  ASSERT_TRUE(coll.drop_index("a_1", {.max_time = 80ms}).has_value());
  EXPECT_EQ(rec.last(), R"({"dropIndexes":"c","index":"a_1","maxTimeMS":80})");
  ASSERT_TRUE(coll.drop_indexes({.comment = "all"}).has_value());
  EXPECT_EQ(rec.last(), R"({"dropIndexes":"c","index":"*","comment":"all"})");
}

// A server whose cursors live in another namespace than the command's (as a view's, or a
// database aggregate's "$cmd.aggregate") and come in two batches.
recording_server two_batches(std::string ns) {
  return recording_server([ns](const std::string& name, oid::bson::document_view, std::size_t) {
    builder b;
    const bool first = name != "getMore";
    b.open_document("cursor").append_int64("id", first ? 9 : 0).append_string("ns", ns);
    b.open_array(first ? "firstBatch" : "nextBatch").open_document("0");
    b.append_int32("batch", first ? 1 : 2).close().close();
    b.close().append_double("ok", 1.0);
    return std::move(b).extract();
  });
}

TEST(MongoOptionsTest, DatabaseAggregateRunsOnTheDatabaseAndItsGetMoresFollowTheReply) {
  auto rec = two_batches("admin.$cmd.aggregate");
  auto c = mongo::client::create(rec.uri()).value();
  const document stage = json(R"({"$currentOp": {}})");
  const std::vector<oid::bson::document_view> pipeline{stage.view()};
  auto cur = c.database("admin").aggregate(pipeline, {.batch_size = 1, .comment = "ops"});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(rec.last(), R"({"aggregate":1,"pipeline":[{"$currentOp":{}}],"cursor":{"batchSize":1},)"
                        R"("comment":"ops"})");
  int read = 0;
  while (cur->next().value()) ++read;
  EXPECT_EQ(read, 2);
  const auto seen = rec.seen();
  EXPECT_EQ(rec.last(),
            R"({"getMore":9,"collection":"$cmd.aggregate","batchSize":1,"comment":"ops"})");
  EXPECT_EQ(seen.back().body.view().find("$db")->get_string().value(), "admin");
}

TEST(MongoOptionsTest, RunCursorCommandSendsTheCommandAsGivenAndReadsItsCursor) {
  auto rec = two_batches("other.view");
  auto c = mongo::client::create(rec.uri()).value();
  const document command = json(R"({"find": "v", "batchSize": 1, "comment": "first"})");
  auto cur = c.database("db").run_cursor_command(
      command.view(), {.batch_size = 5, .max_time = 40ms, .comment = "more"});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(rec.last(), R"({"find":"v","batchSize":1,"comment":"first"})");
  int read = 0;
  while (cur->next().value()) ++read;
  EXPECT_EQ(read, 2);
  // The getMore goes where the reply's ns says, with the options for getMores.
  const auto seen = rec.seen();
  EXPECT_EQ(rec.last(),
            R"({"getMore":9,"collection":"view","batchSize":5,"comment":"more","maxTimeMS":40})");
  EXPECT_EQ(seen.back().body.view().find("$db")->get_string().value(), "other");

  // A reply without a cursor is an error, not an empty cursor.
  recording_server plain([](const std::string&, oid::bson::document_view, std::size_t) {
    return json(R"({"ok": 1})");
  });
  auto p = mongo::client::create(plain.uri()).value();
  const document ping_command = ping();
  auto no_cursor = p.database("db").run_cursor_command(ping_command.view());
  ASSERT_FALSE(no_cursor.has_value());
  EXPECT_EQ(no_cursor.error().code, mongo::errc::unexpected_reply) << no_cursor.error().message;
}

TEST(MongoOptionsTest, ACursorKeepsItsCommandsNamespaceWhenTheReplyNamesNoneWellFormed) {
  const std::vector<std::string> bad = {"nodot", ".c", "db.", std::string("d\0b.c", 5)};
  for (const auto& ns : bad) {
    auto rec = two_batches(ns);
    auto c = mongo::client::create(rec.uri()).value();
    auto cur = c.collection("db", "c").find();
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    while (cur->next().value()) {
    }
    const auto seen = rec.seen();
    EXPECT_EQ(rec.last(), R"({"getMore":9,"collection":"c"})") << ns;
    EXPECT_EQ(seen.back().body.view().find("$db")->get_string().value(), "db") << ns;
  }
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
