// The unified format's operations (operations.cpp) against the server MONGODB_URI names: each
// result in the shape the format gives it, on real data; errors as the runner sees them (the
// server's code, client errors, a bulk write's partial result); and the arguments, options and
// operations oid lacks reported as unsupported rather than ignored.
#include <gtest/gtest.h>

#include <memory>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <string>
#include <string_view>
#include <utility>

#include "support/server_test.hpp"
#include "unified/entities.hpp"

namespace {

using oid::errc;
using oid::unified::client_entity;
using oid::unified::collection_entity;
using oid::unified::cursor_entity;
using oid::unified::database_entity;
using oid::unified::entity_map;
using oid::unified::op_outcome;
using oid::unified::session_entity;
namespace mongo = oid::mongo;

oid::bson::document doc(std::string_view json) {
  auto d = oid::bson::from_json(json);
  if (!d) ADD_FAILURE() << "bad JSON in the test: " << json;
  return d ? std::move(*d) : oid::bson::document();
}

std::string json(const oid::bson::document& d) { return oid::bson::to_json(d.view()); }

// The result as relaxed Extended JSON ("{"v":...}"), or "none".
std::string result(const op_outcome& o) { return o.result ? json(*o.result) : "none"; }

// What went wrong, for assertion messages.
std::string what(const op_outcome& o) {
  if (!o.malformed.empty()) return "malformed: " + o.malformed;
  if (!o.unsupported.empty()) return "unsupported: " + o.unsupported;
  if (o.error) return "error: " + o.error->message;
  return "ok";
}

// The server's code of a failure: the refusal's, or the first write error's.
int server_code(const op_outcome& o) {
  if (!o.error) return 0;
  if (o.error->server) return o.error->server->code;
  if (!o.error->write_errors.empty()) return o.error->write_errors.front().code;
  return 0;
}

class UnifiedOperationsTest : public oid::testing::server_test {
 protected:
  void SetUp() override {
    server_test::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    client_entity c;
    c.client = *client_;
    c.uri = uri_;
    ASSERT_TRUE(entities_.add("client0", std::move(c)));
    ASSERT_TRUE(entities_.add("database0", database("{}")));
    ASSERT_TRUE(entities_.add("collection0", collection("coll0", "{}")));
  }
  void TearDown() override {
    entities_.clear();
    server_test::TearDown();
  }

  op_outcome run(std::string_view object, std::string_view name, std::string_view args = "{}") {
    const auto a = doc(args);
    return oid::unified::run_entity_operation(entities_, object, name, a.view());
  }
  op_outcome coll(std::string_view name, std::string_view args = "{}") {
    return run("collection0", name, args);
  }
  // Inserts {_id: 1, x: 11}, {_id: 2, x: 22}, {_id: 3, x: 33}.
  void seed() {
    const auto r = coll("insertMany", R"({"documents": [{"_id": 1, "x": 11}, {"_id": 2, "x": 22},
                                                       {"_id": 3, "x": 33}]})");
    ASSERT_TRUE(r.result) << what(r);
  }
  // A database entity of the test's database with `options` (databaseOptions), made as the
  // runner makes one: its handle carries them.
  database_entity database(std::string_view options) {
    database_entity d{"client0", db_, doc(options), client_->database(db_), {}};
    d.gaps = oid::unified::apply_entity_options(d.options.view(), "database", *d.handle);
    return d;
  }
  // A collection entity `name` with `options` (collectionOptions) of the database entity `db`
  // (default: one without options).
  collection_entity collection(std::string_view name, std::string_view options,
                               const database_entity* db = nullptr) {
    const database_entity plain = db == nullptr ? database("{}") : database_entity{};
    const auto& parent = db == nullptr ? plain : *db;
    collection_entity c{
        "client0", db_, std::string(name), doc(options), parent.handle->collection(name), {}};
    c.gaps =
        oid::unified::apply_entity_options(c.options.view(), "collection", *c.handle, parent.gaps);
    return c;
  }
  // A collection entity `id` on coll0 with `options` (collectionOptions).
  void add_collection(std::string id, std::string_view options) {
    ASSERT_TRUE(entities_.add(std::move(id), collection("coll0", options)));
  }

  entity_map entities_;
};

TEST_F(UnifiedOperationsTest, InsertOneReturnsTheInsertedId) {
  const auto r = coll("insertOne", R"({"document": {"_id": 7, "x": 1}})");
  EXPECT_EQ(result(r), R"({"v":{"insertedId":7}})") << what(r);
  EXPECT_FALSE(r.error);
  EXPECT_TRUE(r.unsupported.empty());
}

TEST_F(UnifiedOperationsTest, DuplicateKeyIsAServerError11000) {
  seed();
  const auto r = coll("insertOne", R"({"document": {"_id": 1}})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_EQ(r.error->code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(server_code(r), 11000);
  EXPECT_FALSE(r.client_error);
  EXPECT_FALSE(r.result);
}

TEST_F(UnifiedOperationsTest, InsertManyReturnsTheIdsByIndex) {
  const auto r =
      coll("insertMany", R"({"documents": [{"_id": 1}, {"_id": "b"}], "ordered": true})");
  EXPECT_EQ(result(r), R"({"v":{"insertedIds":{"0":1,"1":"b"}}})") << what(r);
}

TEST_F(UnifiedOperationsTest, FailedInsertManyHasAPartialResult) {
  seed();
  const auto r = coll("insertMany", R"({"documents": [{"_id": 4}, {"_id": 1}, {"_id": 5}]})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_EQ(server_code(r), 11000);
  ASSERT_TRUE(r.partial_result);
  EXPECT_EQ(json(*r.partial_result),
            R"({"v":{"deletedCount":0,"insertedCount":1,"insertedIds":{"0":4},"matchedCount":0,)"
            R"("modifiedCount":0,"upsertedCount":0,"upsertedIds":{}}})");
  // Unordered: the third document goes in too.
  const auto u = coll("insertMany",
                      R"({"documents": [{"_id": 6}, {"_id": 1}, {"_id": 8}], "ordered": false})");
  ASSERT_TRUE(u.partial_result) << what(u);
  EXPECT_EQ(json(*u.partial_result),
            R"({"v":{"deletedCount":0,"insertedCount":2,"insertedIds":{"0":6,"2":8},)"
            R"("matchedCount":0,"modifiedCount":0,"upsertedCount":0,"upsertedIds":{}}})");
}

TEST_F(UnifiedOperationsTest, UpdatesReturnCountsAndTheUpsertedId) {
  seed();
  auto r = coll("updateOne", R"({"filter": {"_id": 1}, "update": {"$inc": {"x": 1}}})");
  EXPECT_EQ(result(r), R"({"v":{"matchedCount":1,"modifiedCount":1,"upsertedCount":0}})")
      << what(r);
  r = coll("updateMany", R"({"filter": {"x": {"$gt": 20}}, "update": {"$set": {"y": 1}}})");
  EXPECT_EQ(result(r), R"({"v":{"matchedCount":2,"modifiedCount":2,"upsertedCount":0}})")
      << what(r);
  r = coll("updateOne", R"({"filter": {"_id": 9}, "update": {"$set": {"x": 99}}, "upsert": true})");
  EXPECT_EQ(result(r),
            R"({"v":{"matchedCount":0,"modifiedCount":0,"upsertedCount":1,"upsertedId":9}})")
      << what(r);
  r = coll("replaceOne", R"({"filter": {"_id": 2}, "replacement": {"x": 0}})");
  EXPECT_EQ(result(r), R"({"v":{"matchedCount":1,"modifiedCount":1,"upsertedCount":0}})")
      << what(r);
  r = coll("find", R"({"filter": {"_id": {"$in": [2, 3]}}, "sort": {"_id": 1}})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":2,"x":0},{"_id":3,"x":33,"y":1}]})") << what(r);
  // A pipeline (an array) goes to the server as one; FerretDB refuses pipeline updates, so this
  // checks only that it was sent, not refused before.
  r = coll("updateOne", R"({"filter": {"_id": 3}, "update": [{"$set": {"z": "$x"}}]})");
  EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
  EXPECT_FALSE(r.client_error) << what(r);
}

TEST_F(UnifiedOperationsTest, AnInvalidUpdateIsAClientError) {
  seed();
  for (const std::string_view args :
       {R"({"filter": {}, "update": {"x": 1}})", R"({"filter": {}, "update": []})"}) {
    SCOPED_TRACE(args);
    const auto r = coll("updateOne", args);
    ASSERT_TRUE(r.error) << what(r);
    EXPECT_EQ(r.error->code, errc::invalid_value);
    EXPECT_TRUE(r.client_error);
  }
  const auto r = coll("replaceOne", R"({"filter": {}, "replacement": {"$set": {"x": 1}}})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_TRUE(r.client_error);
}

TEST_F(UnifiedOperationsTest, DeletesReturnTheCount) {
  seed();
  auto r = coll("deleteOne", R"({"filter": {"_id": {"$gt": 1}}})");
  EXPECT_EQ(result(r), R"({"v":{"deletedCount":1}})") << what(r);
  r = coll("deleteMany", R"({"filter": {}})");
  EXPECT_EQ(result(r), R"({"v":{"deletedCount":2}})") << what(r);
}

TEST_F(UnifiedOperationsTest, BulkWriteReturnsEveryCountAndId) {
  seed();
  const auto r = coll("bulkWrite", R"({"requests": [
      {"insertOne": {"document": {"_id": 4}}},
      {"replaceOne": {"filter": {"_id": 5}, "replacement": {"x": 5}, "upsert": true}},
      {"updateOne": {"filter": {"_id": 1}, "update": {"$set": {"x": 0}}}},
      {"updateMany": {"filter": {"_id": {"$gt": 1}}, "update": {"$inc": {"x": 1}}}},
      {"deleteOne": {"filter": {"_id": 2}}},
      {"deleteMany": {"filter": {"_id": {"$in": [3, 4]}}}}],
    "ordered": true})");
  // The upsert is the first statement of its update command: FerretDB numbers `upserted` among
  // the upserts only, where MongoDB numbers the statements, and the two agree there.
  EXPECT_EQ(result(r),
            R"({"v":{"deletedCount":3,"insertedCount":1,"insertedIds":{"0":4},"matchedCount":5,)"
            R"("modifiedCount":5,"upsertedCount":1,"upsertedIds":{"1":5}}})")
      << what(r);
}

TEST_F(UnifiedOperationsTest, FailedBulkWriteHasAPartialResult) {
  seed();
  const auto r = coll("bulkWrite", R"({"requests": [
      {"deleteOne": {"filter": {"_id": 3}}},
      {"insertOne": {"document": {"_id": 1}}}]})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_EQ(server_code(r), 11000);
  EXPECT_FALSE(r.client_error);
  ASSERT_TRUE(r.partial_result);
  EXPECT_EQ(json(*r.partial_result),
            R"({"v":{"deletedCount":1,"insertedCount":0,"insertedIds":{},"matchedCount":0,)"
            R"("modifiedCount":0,"upsertedCount":0,"upsertedIds":{}}})");
}

TEST_F(UnifiedOperationsTest, ReadsReturnArraysAndNumbers) {
  seed();
  auto r = coll("find", R"({"filter": {"x": {"$gt": 11}}, "sort": {"_id": -1}, "limit": 1,
                           "projection": {"x": 0}})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":3}]})") << what(r);
  // batchSize 1: the cursor is read to its end over several getMores.
  r = coll("find", R"({"filter": {}, "batchSize": 1, "skip": 1, "sort": {"_id": 1}})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":2,"x":22},{"_id":3,"x":33}]})") << what(r);
  r = coll("aggregate", R"({"pipeline": [{"$match": {"_id": {"$lt": 3}}}, {"$sort": {"_id": 1}},
                                         {"$project": {"_id": 1}}], "batchSize": 1})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":1},{"_id":2}]})") << what(r);
  r = coll("countDocuments", R"({"filter": {"x": {"$gte": 22}}})");
  EXPECT_EQ(result(r), R"({"v":2})") << what(r);
  r = coll("estimatedDocumentCount");
  EXPECT_EQ(result(r), R"({"v":3})") << what(r);
  r = coll("distinct", R"({"fieldName": "x", "filter": {"_id": {"$lt": 3}}})");
  EXPECT_EQ(result(r), R"({"v":[11,22]})") << what(r);
  r = coll("findOne", R"({"filter": {"x": {"$gt": 11}}, "sort": {"_id": -1}, "skip": 1})");
  EXPECT_EQ(result(r), R"({"v":{"_id":2,"x":22}})") << what(r);
  r = coll("findOne", R"({"filter": {"_id": 42}})");
  EXPECT_EQ(result(r), R"({"v":null})") << what(r);
}

TEST_F(UnifiedOperationsTest, FindOneAndModifyReturnsTheDocumentOrNull) {
  seed();
  auto r = coll("findOneAndUpdate", R"({"filter": {"_id": 1}, "update": {"$inc": {"x": 1}},
                                       "returnDocument": "After"})");
  EXPECT_EQ(result(r), R"({"v":{"_id":1,"x":12}})") << what(r);
  r = coll("findOneAndUpdate", R"({"filter": {"_id": 1}, "update": {"$inc": {"x": 1}},
                                  "returnDocument": "before"})");
  EXPECT_EQ(result(r), R"({"v":{"_id":1,"x":12}})") << what(r);
  r = coll("findOneAndReplace", R"({"filter": {"_id": 2}, "replacement": {"y": 1},
                                   "returnDocument": "After"})");
  EXPECT_EQ(result(r), R"({"v":{"_id":2,"y":1}})") << what(r);
  r = coll("findOneAndDelete", R"({"filter": {"x": {"$gt": 0}}, "sort": {"x": -1}})");
  EXPECT_EQ(result(r), R"({"v":{"_id":3,"x":33}})") << what(r);
  r = coll("findOneAndDelete", R"({"filter": {"_id": 42}})");
  EXPECT_EQ(result(r), R"({"v":null})") << what(r);
  // The format says returnDocument must be Before or After.
  r = coll("findOneAndUpdate", R"({"filter": {}, "update": {"$set": {"a": 1}},
                                  "returnDocument": "Sideways"})");
  EXPECT_EQ(r.malformed, "`returnDocument` is neither Before nor After");
}

TEST_F(UnifiedOperationsTest, IndexOperations) {
  seed();
  auto r = coll("createIndex", R"({"keys": {"x": 1}, "name": "x_idx", "unique": true})");
  EXPECT_EQ(result(r), R"({"v":"x_idx"})") << what(r);
  r = coll("listIndexNames");
  EXPECT_EQ(result(r), R"({"v":["_id_","x_idx"]})") << what(r);
  r = coll("listIndexes");
  ASSERT_TRUE(r.result) << what(r);
  EXPECT_NE(json(*r.result).find(R"("name":"x_idx")"), std::string::npos) << json(*r.result);
  r = coll("dropIndex", R"({"name": "x_idx"})");
  EXPECT_FALSE(r.error) << what(r);
  EXPECT_TRUE(r.unsupported.empty());
  r = coll("listIndexNames");
  EXPECT_EQ(result(r), R"({"v":["_id_"]})") << what(r);
  r = coll("createIndexes", R"({"models": [{"keys": {"x": 1}},
                                          {"keys": {"y": -1}, "options": {"name": "y_sparse", "sparse": true}}]})");
  EXPECT_EQ(result(r), R"({"v":["x_1","y_sparse"]})") << what(r);
  r = coll("listIndexNames");
  EXPECT_EQ(result(r), R"({"v":["_id_","x_1","y_sparse"]})") << what(r);
  r = coll("dropIndexes");
  EXPECT_FALSE(r.error) << what(r);
  r = coll("listIndexNames");
  EXPECT_EQ(result(r), R"({"v":["_id_"]})") << what(r);
}

TEST_F(UnifiedOperationsTest, ClientAndDatabaseOperations) {
  seed();
  auto r = run("client0", "listDatabaseNames");
  ASSERT_TRUE(r.result) << what(r);
  EXPECT_NE(json(*r.result).find("\"" + db_ + "\""), std::string::npos) << json(*r.result);
  r = run("client0", "listDatabases");
  ASSERT_TRUE(r.result) << what(r);
  EXPECT_NE(json(*r.result).find(R"({"name":")" + db_ + "\""), std::string::npos);
  r = run("database0", "listCollectionNames");
  EXPECT_EQ(result(r), R"({"v":["coll0"]})") << what(r);
  r = run("database0", "listCollections");
  ASSERT_TRUE(r.result) << what(r);
  EXPECT_NE(json(*r.result).find(R"("name":"coll0")"), std::string::npos);
  r = run(
      "database0", "runCommand",
      R"({"commandName": "ping", "command": {"ping": 1}, "readPreference": {"mode": "primary"}})");
  ASSERT_TRUE(r.result) << what(r);
  EXPECT_NE(json(*r.result).find(R"("ok":1)"), std::string::npos) << json(*r.result);
  r = run(
      "database0", "runCommand",
      R"({"commandName": "ping", "command": {"ping": 1}, "readPreference": {"mode": "nearest"}})");
  ASSERT_TRUE(r.result) << what(r);
  // A command that opens a cursor, read to its end in batches of one.
  r = run("database0", "runCursorCommand",
          R"({"commandName": "find", "command": {"find": "coll0", "batchSize": 1,
              "sort": {"_id": 1}}, "batchSize": 1})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":1,"x":11},{"_id":2,"x":22},{"_id":3,"x":33}]})") << what(r);
  r = run("database0", "createCommandCursor", R"({"commandName": "ping", "command": {"ping": 1}})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_EQ(r.error->code, oid::mongo::errc::unexpected_reply);
  r = coll("count", R"({"filter": {"x": {"$gt": 11}}})");
  EXPECT_EQ(result(r), R"({"v":2})") << what(r);
  // A refused command is the server's error.
  r = run("database0", "runCommand",
          R"({"commandName": "noSuchCommand", "command": {"noSuchCommand": 1}})");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_FALSE(r.client_error);
  EXPECT_EQ(r.error->code, oid::mongo::errc::server_error);
  r = run("database0", "dropCollection", R"({"collection": "coll0"})");
  EXPECT_FALSE(r.error) << what(r);
  r = run("database0", "listCollectionNames");
  EXPECT_EQ(result(r), R"({"v":[]})") << what(r);
}

TEST_F(UnifiedOperationsTest, RenameAndDrop) {
  seed();
  auto r = coll("rename", R"({"to": "coll1"})");
  EXPECT_FALSE(r.error) << what(r);
  EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
  r = run("database0", "listCollectionNames");
  EXPECT_EQ(result(r), R"({"v":["coll1"]})") << what(r);
  ASSERT_TRUE(entities_.add("collection1", collection("coll1", "{}")));
  r = run("collection1", "drop");
  EXPECT_FALSE(r.error) << what(r);
  r = run("database0", "listCollectionNames");
  EXPECT_EQ(result(r), R"({"v":[]})") << what(r);
}

TEST_F(UnifiedOperationsTest, CursorOperations) {
  seed();
  auto r = coll("createFindCursor", R"({"filter": {}, "sort": {"_id": 1}, "batchSize": 2})");
  ASSERT_TRUE(r.cursor) << what(r);
  EXPECT_FALSE(r.result);
  ASSERT_TRUE(entities_.add("cursor0", cursor_entity{std::move(r.cursor)}));
  r = run("cursor0", "iterateUntilDocumentOrError");
  EXPECT_EQ(result(r), R"({"v":{"_id":1,"x":11}})") << what(r);
  r = run("cursor0", "iterateOnce");
  EXPECT_EQ(result(r), R"({"v":{"_id":2,"x":22}})") << what(r);
  r = run("cursor0", "iterateOnce");  // a getMore
  EXPECT_EQ(result(r), R"({"v":{"_id":3,"x":33}})") << what(r);
  r = run("cursor0", "iterateOnce");  // the end: no document, no error
  EXPECT_FALSE(r.result);
  EXPECT_FALSE(r.error) << what(r);
  r = run("cursor0", "close");
  EXPECT_FALSE(r.error);
  r = run("cursor0", "iterateOnce");
  ASSERT_TRUE(r.error) << what(r);
  EXPECT_TRUE(r.client_error);
}

TEST_F(UnifiedOperationsTest, UnsupportedArgumentsAreReportedNotIgnored) {
  seed();
  struct test_case {
    std::string_view object, name, args, want;
  };
  const test_case cases[] = {
      {"collection0", "find", R"({"filter": {}, "limit": -1})", "find: no negative `limit`"},
      {"collection0", "countDocuments", R"({"filter": {}, "limit": -1})",
       "countDocuments: no negative `limit`"},
      {"collection0", "distinct", R"({"fieldName": "x", "filter": {}, "hint": "_id_"})",
       "distinct: no `hint` option"},
      {"collection0", "updateOne",
       R"({"filter": {}, "update": {"$set": {"x": 1}}, "sort": {"_id": 1}})",
       "updateOne: no `sort` option"},
      {"collection0", "bulkWrite",
       R"({"requests": [{"updateOne": {"filter": {}, "update": {"$set": {"x": 1}}, "sort": {"_id": 1}}}]})",
       "bulkWrite: no `updateOne.sort` option"},
      {"collection0", "listIndexes", R"({"timeoutMode": "iteration"})",
       "listIndexes: no `timeoutMode` option"},
      {"collection0", "find", R"({"filter": {}, "batchSize": -1})",
       "find: no negative `batchSize`"},
      {"collection0", "createChangeStream", R"({"pipeline": []})",
       "createChangeStream: no such operation on a collection"},
      {"client0", "clientBulkWrite", R"({"models": []})",
       "clientBulkWrite: no such operation on a client"},
      {"database0", "createChangeStream", R"({"pipeline": []})",
       "createChangeStream: no such operation on a database"},
      {"database0", "listCollections", R"({"timeoutMode": "iteration"})",
       "listCollections: no `timeoutMode` option"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " + std::string(c.args));
    const auto r = run(c.object, c.name, c.args);
    EXPECT_EQ(r.unsupported, c.want);
    EXPECT_TRUE(r.malformed.empty()) << r.malformed;
    EXPECT_FALSE(r.error);
    EXPECT_FALSE(r.result);
  }
  // Nothing was sent: the collection holds what seed() put there.
  const auto r = coll("find", R"({"filter": {}, "sort": {"_id": 1}, "projection": {"_id": 1}})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":1},{"_id":2},{"_id":3}]})") << what(r);
}

TEST_F(UnifiedOperationsTest, TheTestFilesErrorsAreMalformed) {
  seed();
  struct test_case {
    std::string_view object, name, args, want;
  };
  const test_case cases[] = {
      {"collection0", "insertOne", R"({"document": {}, "foo": 1})",
       "`foo` is not an argument of insertOne"},
      {"collection0", "find", R"({"filter": {}, "singleBatch": true})",
       "`singleBatch` is not an argument of find"},
      {"collection0", "find", R"({"filter": 5})", "`filter` is not a document"},
      {"collection0", "find", R"({"filter": {}, "limit": "ten"})", "`limit` is not an integer"},
      {"collection0", "insertMany", R"({"documents": [1, 2]})",
       "`documents` is not an array of documents"},
      {"collection0", "insertOne", R"({})", "`document` is missing"},
      {"collection0", "updateOne", R"({"filter": {}, "update": 3})",
       "`update` is not a document or an array of documents"},
      {"collection0", "bulkWrite", R"({"requests": [{"insertOne": {}, "deleteOne": {}}]})",
       "`requests` is not an array of one-field documents"},
      {"collection0", "bulkWrite", R"({"requests": [{"insertMany": {"documents": []}}]})",
       "`insertMany` is not a bulkWrite model"},
      {"collection0", "bulkWrite",
       R"({"requests": [{"insertOne": {"document": {}, "upsert": true}}]})",
       "`insertOne.upsert` is not an argument of bulkWrite.insertOne"},
      {"collection0", "bulkWrite", R"({"requests": [{"deleteOne": {}}]})",
       "`deleteOne.filter` is missing"},
      {"collection0", "createIndexes",
       R"({"models": [{"keys": {"x": 1}, "options": {"uniq": 1}}]})",
       "`options.uniq` is not an argument of createIndexes.options"},
      {"database0", "runCommand", R"({"command": {"ping": 1}})", "`commandName` is missing"},
      {"cursorless", "find", R"({"filter": 5})", "`filter` is not a document"},
  };
  // A test file's error counts before what oid lacks (here, the entity's read preference of a
  // shape oid cannot express).
  add_collection("cursorless", R"({"readPreference": {"mode": "secondary", "hedge": {}}})");
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.name) + " " + std::string(c.args));
    const auto r = run(c.object, c.name, c.args);
    EXPECT_EQ(r.malformed, c.want);
    EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
    EXPECT_FALSE(r.error);
    EXPECT_FALSE(r.result);
  }
  // Nothing was sent.
  const auto r = coll("countDocuments", R"({"filter": {}})");
  EXPECT_EQ(result(r), R"({"v":3})") << what(r);
}

TEST_F(UnifiedOperationsTest, OptionsOidHasAreSent) {
  seed();
  // maxTimeMS where oid takes it; a write concern and bypassDocumentValidation on a bulk write.
  auto r = coll("estimatedDocumentCount", R"({"maxTimeMS": 5000})");
  EXPECT_EQ(result(r), R"({"v":3})") << what(r);
  r = coll("aggregate", R"({"pipeline": [{"$match": {"x": {"$gt": 20}}}, {"$sort": {"x": 1}},
                                         {"$project": {"_id": 0}}],
                            "maxTimeMS": 5000, "allowDiskUse": true})");
  EXPECT_EQ(result(r), R"({"v":[{"x":22},{"x":33}]})") << what(r);
  r = coll("findOneAndDelete", R"({"filter": {"_id": 3}, "maxTimeMS": 5000, "hint": "_id_"})");
  EXPECT_EQ(result(r), R"({"v":{"_id":3,"x":33}})") << what(r);
  r = coll("bulkWrite", R"({"requests": [{"deleteMany": {"filter": {}}}], "ordered": false,
                           "bypassDocumentValidation": true})");
  EXPECT_EQ(result(r),
            R"({"v":{"deletedCount":2,"insertedCount":0,"insertedIds":{},"matchedCount":0,)"
            R"("modifiedCount":0,"upsertedCount":0,"upsertedIds":{}}})")
      << what(r);
  // The listings' options (enumerate databases and collections).
  r = run("database0", "listCollections",
          R"({"filter": {"name": "coll0"}, "nameOnly": true, "authorizedCollections": true,
              "batchSize": 1, "comment": "listing"})");
  // nameOnly: the name alone from FerretDB v1 (MongoDB adds the type).
  EXPECT_EQ(result(r), R"({"v":[{"name":"coll0"}]})") << what(r);
  r = run("database0", "listCollectionNames", R"({"authorizedCollections": true})");
  EXPECT_EQ(result(r), R"({"v":["coll0"]})") << what(r);
  r = run("client0", "listDatabaseNames",
          R"({"filter": {"name": ")" + db_ + R"("}, "authorizedDatabases": true})");
  EXPECT_EQ(result(r), R"({"v":[")" + db_ + R"("]})") << what(r);
  r = run("client0", "listDatabases",
          R"({"filter": {"name": ")" + db_ + R"("}, "nameOnly": true, "comment": "x"})");
  EXPECT_EQ(result(r), R"({"v":[{"name":")" + db_ + R"("}]})") << what(r);
}

// `session` names a session entity: the operation runs in it (one lsid, which FerretDB takes);
// a session that is not an entity is the runner's failure, and nothing runs.
TEST_F(UnifiedOperationsTest, ASessionArgumentRunsTheOperationInThatSession) {
  auto s = std::make_shared<mongo::session>(client_->start_session().value());
  session_entity e{"client0", s, s->id().value()};
  ASSERT_TRUE(entities_.add("session0", std::move(e)));
  auto r = coll("insertOne", R"({"document": {"_id": 5}, "session": "session0"})");
  EXPECT_EQ(result(r), R"({"v":{"insertedId":5}})") << what(r);
  r = coll("find", R"({"filter": {}, "session": "session0"})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":5}]})") << what(r);
  r = run("database0", "listCollectionNames", R"({"session": "session0"})");
  EXPECT_EQ(result(r), R"({"v":["coll0"]})") << what(r);
  s->end_session();
  r = coll("find", R"({"filter": {}, "session": "session0"})");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, mongo::errc::session_misuse);
  r = coll("insertOne", R"({"document": {"_id": 6}, "session": "nobody"})");
  ASSERT_TRUE(r.error);
  EXPECT_NE(r.error->message.find("no session entity `nobody`"), std::string::npos);
}

TEST_F(UnifiedOperationsTest, ArgumentsThatRestateDefaultsAreAccepted) {
  const auto r = coll("insertMany", R"({"documents": [{"_id": 1}], "ordered": true})");
  EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
  const auto u =
      coll("updateOne", R"({"filter": {}, "update": {"$set": {"x": 1}}, "upsert": false})");
  EXPECT_EQ(result(u), R"({"v":{"matchedCount":1,"modifiedCount":1,"upsertedCount":0}})")
      << what(u);
}

TEST_F(UnifiedOperationsTest, EntityOptions) {
  seed();
  // A read concern becomes the handle's (FerretDB takes "majority" and reads as ever); writes,
  // which it does not apply to, run.
  add_collection("withReadConcern", R"({"readConcern": {"level": "majority"}})");
  auto r = run("withReadConcern", "find", R"({"filter": {"_id": 1}})");
  EXPECT_EQ(result(r), R"({"v":[{"_id":1,"x":11}]})") << what(r);
  r = run("withReadConcern", "insertOne", R"({"document": {"_id": 10}})");
  EXPECT_EQ(result(r), R"({"v":{"insertedId":10}})") << what(r);
  // One it cannot express is a gap of oid's.
  add_collection("withOddReadConcern", R"({"readConcern": {"level": "majority", "x": 1}})");
  r = run("withOddReadConcern", "find", R"({"filter": {}})");
  EXPECT_EQ(r.unsupported, "find: no collection-level `readConcern`");
  // An unacknowledged write concern goes with each write that takes one; the results say so.
  add_collection("unacknowledged", R"({"writeConcern": {"w": 0}})");
  r = run("unacknowledged", "insertOne", R"({"document": {"_id": 11}})");
  EXPECT_EQ(result(r), R"({"v":{"acknowledged":false}})") << what(r);
  r = run("unacknowledged", "deleteOne", R"({"filter": {"_id": 11}})");
  EXPECT_EQ(result(r), R"({"v":{"acknowledged":false}})") << what(r);
  // The commands that write send the handle's write concern too (the server answers them).
  r = run("unacknowledged", "createIndex", R"({"keys": {"x": 1}})");
  EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
  EXPECT_FALSE(r.error) << what(r);
  r = run("unacknowledged", "countDocuments", R"({"filter": {}})");
  EXPECT_TRUE(r.result) << what(r);  // reads take no write concern
  // A write concern oid cannot express.
  add_collection("fsync", R"({"writeConcern": {"w": 1, "fsync": true}})");
  r = run("fsync", "insertOne", R"({"document": {"_id": 13}})");
  EXPECT_EQ(r.unsupported, "insertOne: no collection-level `writeConcern.fsync`");
  // timeoutMS: the collection's handle takes it, and the operation runs under it.
  add_collection("withTimeout", R"({"timeoutMS": 5000})");
  r = run("withTimeout", "insertOne", R"({"document": {"_id": 12}})");
  EXPECT_EQ(result(r), R"({"v":{"insertedId":12}})") << what(r);
  // An option nothing in oid can honour.
  add_collection("withUnknown", R"({"encryptedFields": {}})");
  r = run("withUnknown", "insertOne", R"({"document": {"_id": 14}})");
  EXPECT_EQ(r.unsupported, "insertOne: no collection-level `encryptedFields`");
  // A read preference other than the client's is the handle's (a server used directly serves
  // every read preference).
  ASSERT_TRUE(
      entities_.add("secondaryDb", database(R"({"readPreference": {"mode": "secondary"}})")));
  r = run("secondaryDb", "listCollectionNames");
  EXPECT_TRUE(r.unsupported.empty()) << r.unsupported;
  EXPECT_EQ(result(r), R"({"v":["coll0"]})") << what(r);
  // A database's gap is its collections' unless they set the option themselves.
  const auto fsync_db = database(R"({"writeConcern": {"w": 1, "fsync": true}})");
  ASSERT_TRUE(entities_.add("fsyncDb", fsync_db));
  r = run("fsyncDb", "dropCollection", R"({"collection": "x"})");
  EXPECT_EQ(r.unsupported, "dropCollection: no database-level `writeConcern.fsync`");
  ASSERT_TRUE(entities_.add("fsyncInherited", collection("coll0", "{}", &fsync_db)));
  r = run("fsyncInherited", "insertOne", R"({"document": {"_id": 15}})");
  EXPECT_EQ(r.unsupported, "insertOne: no database-level `writeConcern.fsync`");
  ASSERT_TRUE(entities_.add("fsyncOverridden",
                            collection("coll0", R"({"writeConcern": {"w": 1}})", &fsync_db)));
  r = run("fsyncOverridden", "insertOne", R"({"document": {"_id": 15}})");
  EXPECT_EQ(result(r), R"({"v":{"insertedId":15}})") << what(r);
}

TEST_F(UnifiedOperationsTest, MissingEntitiesAreFailures) {
  auto r = run("nobody", "find", R"({"filter": {}})");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, errc::key_not_found);
  ASSERT_TRUE(entities_.add("orphan", collection_entity{"client9", db_, "c", {}, {}, {}}));
  r = run("orphan", "find", R"({"filter": {}})");
  ASSERT_TRUE(r.error);
  EXPECT_EQ(r.error->code, errc::key_not_found);
}

}  // namespace
