// collection::aggregate, the find-and-modify operations, distinct, estimated_document_count,
// rename, bulk_write and command monitoring of writes against the server MONGODB_URI names
// (FerretDB under scripts/test.sh). What each sends, and what FerretDB refuses, against a
// scripted server: mongo_ops_script_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/server_test.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using oid::testing::documents;
using namespace std::chrono_literals;

std::string json(document_view d) { return oid::bson::to_json(d); }
std::string json(const document& d) { return oid::bson::to_json(d.view()); }

// Every document a cursor yields, as relaxed Extended JSON.
std::vector<std::string> drain(mongo::cursor& c) {
  std::vector<std::string> out;
  while (true) {
    auto more = c.next();
    EXPECT_TRUE(more.has_value()) << more.error().message;
    if (!more || !*more) break;
    out.push_back(json(c.current()));
  }
  return out;
}

using strings = std::vector<std::string>;

class MongoOpsTest : public oid::testing::server_test {
 protected:
  // Inserts the documents, each given as Extended JSON.
  void insert(mongo::collection c, std::initializer_list<std::string_view> docs) {
    std::vector<document_view> views;
    for (auto d : docs) views.push_back(j_(d));
    auto r = c.insert_many(views);
    ASSERT_TRUE(r.has_value()) << r.error().message;
  }
  // The collection's documents in _id order.
  strings contents(mongo::collection c) {
    mongo::find_options by_id;
    by_id.sort = j_(R"({"_id": 1})");
    auto cur = c.find({}, by_id);
    EXPECT_TRUE(cur.has_value()) << cur.error().message;
    return cur ? drain(*cur) : strings{};
  }

  documents j_;
};

// ---- aggregate ----

TEST_F(MongoOpsTest, AggregateMatchesGroupsAndSorts) {
  auto c = coll();
  insert(c, {R"({"_id": 0, "g": "a", "n": 0})", R"({"_id": 1, "g": "b", "n": 1})",
             R"({"_id": 2, "g": "a", "n": 2})", R"({"_id": 3, "g": "b", "n": 3})",
             R"({"_id": 4, "g": "a", "n": 4})"});
  const std::vector<document_view> pipeline{j_(R"({"$match": {"n": {"$gte": 1}}})"),
                                            j_(R"({"$group": {"_id": "$g", "s": {"$sum": "$n"}}})"),
                                            j_(R"({"$sort": {"_id": 1}})")};
  auto cur = c.aggregate(pipeline, {.allow_disk_use = true, .max_time = 5000ms});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(drain(*cur), (strings{R"({"_id":"a","s":6})", R"({"_id":"b","s":4})"}));
}

TEST_F(MongoOpsTest, AggregateReadsEveryBatch) {
  auto c = coll();
  insert(c, {R"({"_id": 1})", R"({"_id": 2})", R"({"_id": 3})", R"({"_id": 4})", R"({"_id": 5})"});
  const std::vector<document_view> pipeline{j_(R"({"$sort": {"_id": -1}})"),
                                            j_(R"({"$addFields": {"x": 1}})")};
  auto cur = c.aggregate(pipeline, {.batch_size = 2});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_NE(cur->id(), 0);  // more than the first batch of 2 is left on the server
  EXPECT_EQ(drain(*cur), (strings{R"({"_id":5,"x":1})", R"({"_id":4,"x":1})", R"({"_id":3,"x":1})",
                                  R"({"_id":2,"x":1})", R"({"_id":1,"x":1})"}));
  EXPECT_EQ(cur->id(), 0);
}

TEST_F(MongoOpsTest, AggregateWithAnEmptyPipelineReturnsEveryDocument) {
  auto c = coll();
  insert(c, {R"({"_id": 1})", R"({"_id": 2})"});
  auto cur = c.aggregate({});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  auto got = drain(*cur);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (strings{R"({"_id":1})", R"({"_id":2})"}));
}

TEST_F(MongoOpsTest, AggregateUnknownStageIsTheServersRefusal) {
  const std::vector<document_view> pipeline{j_(R"({"$nosuchstage": {}})")};
  auto cur = coll().aggregate(pipeline);
  ASSERT_FALSE(cur.has_value());
  EXPECT_EQ(cur.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(cur.error().server.has_value());
  EXPECT_EQ(cur.error().server->code, 40234);  // "Unrecognized pipeline stage name"
}

TEST_F(MongoOpsTest, AggregateRefusesABadStageBeforeSending) {
  for (const char* stage :
       {"{}", R"({"$match": {}, "$sort": {"a": 1}})", R"({"match": {}})", R"({"$": 1})"}) {
    SCOPED_TRACE(stage);
    const std::vector<document_view> pipeline{j_(R"({"$match": {}})"), j_(stage)};
    auto cur = coll().aggregate(pipeline);
    ASSERT_FALSE(cur.has_value());
    EXPECT_EQ(cur.error().code, errc::invalid_value);
    EXPECT_NE(cur.error().message.find("stage 1"), std::string::npos) << cur.error().message;
  }
}

// ---- find-and-modify ----

TEST_F(MongoOpsTest, FindOneAndUpdateReturnsTheDocumentBeforeOrAfter) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "n": 1})", R"({"_id": 2, "n": 2})", R"({"_id": 3, "n": 3})"});
  // The first match in sort order, as it was.
  auto before = c.find_one_and_update({}, j_(R"({"$inc": {"n": 10}})"),
                                      {.sort = j_(R"({"n": -1})"), .max_time = 5000ms});
  ASSERT_TRUE(before.has_value()) << before.error().message;
  ASSERT_TRUE(before->has_value());
  EXPECT_EQ(json(**before), R"({"_id":3,"n":3})");
  // As the update left it.
  auto after = c.find_one_and_update(j_(R"({"_id": 1})"), j_(R"({"$inc": {"n": 10}})"),
                                     {.return_document = mongo::return_document::after});
  ASSERT_TRUE(after.has_value()) << after.error().message;
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ(json(**after), R"({"_id":1,"n":11})");
  // No match: nothing, and nothing changed.
  auto none = c.find_one_and_update(j_(R"({"_id": 9})"), j_(R"({"$set": {"n": 9}})"));
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(contents(c),
            (strings{R"({"_id":1,"n":11})", R"({"_id":2,"n":2})", R"({"_id":3,"n":13})"}));
}

TEST_F(MongoOpsTest, FindOneAndUpdateUpserts) {
  auto c = coll();
  auto after =
      c.find_one_and_update(j_(R"({"_id": 7})"), j_(R"({"$set": {"n": 7}})"),
                            {.upsert = true, .return_document = mongo::return_document::after});
  ASSERT_TRUE(after.has_value()) << after.error().message;
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ(json(**after), R"({"_id":7,"n":7})");
  // Before an upsert that inserted there was no document.
  auto before =
      c.find_one_and_update(j_(R"({"_id": 8})"), j_(R"({"$set": {"n": 8}})"), {.upsert = true});
  ASSERT_TRUE(before.has_value()) << before.error().message;
  EXPECT_FALSE(before->has_value());
  EXPECT_EQ(contents(c), (strings{R"({"_id":7,"n":7})", R"({"_id":8,"n":8})"}));
}

TEST_F(MongoOpsTest, FindOneAndReplace) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "n": 1})", R"({"_id": 2, "n": 2})"});
  auto after = c.find_one_and_replace(j_(R"({"n": 2})"), j_(R"({"m": "two"})"),
                                      {.return_document = mongo::return_document::after});
  ASSERT_TRUE(after.has_value()) << after.error().message;
  ASSERT_TRUE(after->has_value());
  EXPECT_EQ(json(**after), R"({"_id":2,"m":"two"})");
  auto before = c.find_one_and_replace(j_(R"({"_id": 1})"), j_(R"({"m": "one"})"));
  ASSERT_TRUE(before.has_value()) << before.error().message;
  ASSERT_TRUE(before->has_value());
  EXPECT_EQ(json(**before), R"({"_id":1,"n":1})");
  EXPECT_EQ(contents(c), (strings{R"({"_id":1,"m":"one"})", R"({"_id":2,"m":"two"})"}));
}

TEST_F(MongoOpsTest, FindOneAndDeleteTakesTheFirstInSortOrder) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "n": 5})", R"({"_id": 2, "n": 9})", R"({"_id": 3, "n": 7})"});
  auto gone = c.find_one_and_delete(j_(R"({"n": {"$gt": 5}})"), {.sort = j_(R"({"n": 1})")});
  ASSERT_TRUE(gone.has_value()) << gone.error().message;
  ASSERT_TRUE(gone->has_value());
  EXPECT_EQ(json(**gone), R"({"_id":3,"n":7})");
  auto none = c.find_one_and_delete(j_(R"({"n": 100})"));
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_FALSE(none->has_value());
  EXPECT_EQ(contents(c), (strings{R"({"_id":1,"n":5})", R"({"_id":2,"n":9})"}));
}

TEST_F(MongoOpsTest, FindAndModifyRefusesAMisshapenDocumentBeforeSending) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "n": 1})"});
  for (const char* update : {"{}", R"({"n": 2})", R"({"$set": {"n": 2}, "n": 3})"}) {
    SCOPED_TRACE(update);
    auto r = c.find_one_and_update({}, j_(update));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::invalid_value);
  }
  for (const char* replacement : {R"({"$set": {"n": 2}})", R"({"n": 2, "$inc": {"n": 1}})"}) {
    SCOPED_TRACE(replacement);
    auto r = c.find_one_and_replace({}, j_(replacement));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::invalid_value);
  }
  EXPECT_EQ(contents(c), strings{R"({"_id":1,"n":1})"});
}

// ---- distinct, estimated_document_count, rename ----

std::vector<std::string> values_of(document_view array) {
  std::vector<std::string> out;
  for (const auto& e : array) {
    builder b;
    b.append_element("v", e);
    out.push_back(json(b.view()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST_F(MongoOpsTest, DistinctValuesOfAFieldAndOfArrays) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "g": "a", "t": [1, 2]})", R"({"_id": 2, "g": "b", "t": [2, 3]})",
             R"({"_id": 3, "g": "a", "t": 4})", R"({"_id": 4, "x": {"y": "deep"}})"});
  auto g = c.distinct("g");
  ASSERT_TRUE(g.has_value()) << g.error().message;
  EXPECT_EQ(values_of(g->view()), (strings{R"({"v":"a"})", R"({"v":"b"})"}));
  auto t = c.distinct("t", j_(R"({"g": "a"})"));  // FerretDB v1.24 refuses maxTimeMS here
  ASSERT_TRUE(t.has_value()) << t.error().message;
  EXPECT_EQ(values_of(t->view()), (strings{R"({"v":1})", R"({"v":2})", R"({"v":4})"}));
  auto deep = c.distinct("x.y");
  ASSERT_TRUE(deep.has_value()) << deep.error().message;
  EXPECT_EQ(values_of(deep->view()), strings{R"({"v":"deep"})"});
  auto none = c.distinct("nowhere");
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_TRUE(none->view().empty());
  auto bad = c.distinct("");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, errc::invalid_value);
}

TEST_F(MongoOpsTest, EstimatedDocumentCount) {
  auto c = coll();
  auto empty = c.estimated_document_count();
  ASSERT_TRUE(empty.has_value()) << empty.error().message;
  EXPECT_EQ(*empty, 0);  // no such collection yet
  insert(c, {R"({"_id": 1})", R"({"_id": 2})", R"({"_id": 3})"});
  auto three = c.estimated_document_count({.max_time = 5000ms});
  ASSERT_TRUE(three.has_value()) << three.error().message;
  EXPECT_EQ(*three, 3);
}

TEST_F(MongoOpsTest, RenameMovesTheDocuments) {
  auto a = coll("a");
  insert(a, {R"({"_id": 1})", R"({"_id": 2})"});
  auto b = a.rename("b");
  ASSERT_TRUE(b.has_value()) << b.error().message;
  EXPECT_EQ(b->name(), "b");
  EXPECT_EQ(b->database(), db_);
  EXPECT_EQ(contents(*b), (strings{R"({"_id":1})", R"({"_id":2})"}));
  EXPECT_EQ(a.estimated_document_count().value(), 0);
  // Onto a collection that exists: NamespaceExists.
  insert(coll("c"), {R"({"_id": 3})"});
  auto onto = b->rename("c");
  ASSERT_FALSE(onto.has_value());
  EXPECT_EQ(onto.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(onto.error().server.has_value());
  EXPECT_EQ(onto.error().server->code, 48);
  // From a collection that does not exist: NamespaceNotFound.
  auto missing = coll("nope").rename("d");
  ASSERT_FALSE(missing.has_value());
  ASSERT_TRUE(missing.error().server.has_value());
  EXPECT_EQ(missing.error().server->code, 26);
  auto empty = b->rename("");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code, errc::invalid_value);
}

// ---- bulk_write ----

std::vector<std::size_t> indexes(const std::vector<mongo::indexed_id>& ids) {
  std::vector<std::size_t> out;
  for (const auto& i : ids) out.push_back(i.index);
  return out;
}

TEST_F(MongoOpsTest, BulkWriteOfEveryKind) {
  auto c = coll();
  const std::vector<mongo::write_model> models{
      mongo::insert_one_model{j_(R"({"_id": 1, "n": 1})")},
      mongo::insert_one_model{j_(R"({"n": 2})")},  // given an ObjectId
      mongo::insert_one_model{j_(R"({"_id": 3, "n": 3})")},
      // Upserts first in their run: FerretDB v1.24 numbers `upserted` by upsert, not by
      // statement (mongod gives the statement's position; the scripted tests check that).
      mongo::replace_one_model{j_(R"({"_id": 7})"), j_(R"({"n": 7})"), true},
      mongo::update_one_model{j_(R"({"_id": 8})"), j_(R"({"$set": {"n": 8}})"), true},
      mongo::update_one_model{j_(R"({"_id": 1})"), j_(R"({"$set": {"n": 10}})")},
      mongo::update_many_model{j_(R"({"n": {"$gte": 2, "$lt": 7}})"),
                               j_(R"({"$inc": {"n": 100}})")},
      mongo::delete_one_model{j_(R"({"_id": 3})")},
      mongo::delete_many_model{j_(R"({"n": {"$gte": 100}})")},
      mongo::insert_one_model{j_(R"({"_id": 10})")},
  };
  auto r = c.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 4);
  EXPECT_EQ(r->matched, 3);
  EXPECT_EQ(r->modified, 3);
  EXPECT_EQ(r->upserted, 2);
  EXPECT_EQ(r->deleted, 2);
  EXPECT_EQ(indexes(r->inserted_ids), (std::vector<std::size_t>{0, 1, 2, 9}));
  EXPECT_EQ(json(r->inserted_ids[0].id), R"({"_id":1})");
  EXPECT_EQ(r->inserted_ids[1].id.view().find("_id")->type(), oid::bson::type::object_id);
  ASSERT_EQ(indexes(r->upserted_ids), (std::vector<std::size_t>{3, 4}));
  EXPECT_EQ(json(r->upserted_ids[0].id), R"({"_id":7})");
  EXPECT_EQ(json(r->upserted_ids[1].id), R"({"_id":8})");
  EXPECT_EQ(contents(c), (strings{R"({"_id":1,"n":10})", R"({"_id":7,"n":7})", R"({"_id":8,"n":8})",
                                  R"({"_id":10})"}));
}

TEST_F(MongoOpsTest, OrderedBulkWriteStopsAtTheFirstError) {
  auto c = coll();
  insert(c, {R"({"_id": 1})"});
  const std::vector<mongo::write_model> models{
      mongo::delete_many_model{j_(R"({"_id": 5})")},
      mongo::insert_one_model{j_(R"({"_id": 2})")},
      mongo::insert_one_model{j_(R"({"_id": 1})")},  // duplicate
      mongo::insert_one_model{j_(R"({"_id": 3})")},
      mongo::update_one_model{j_(R"({"_id": 2})"), j_(R"({"$set": {"x": 1}})")},
  };
  auto r = c.bulk_write(models);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::duplicate_key);
  ASSERT_EQ(r.error().write_errors.size(), 1u);
  EXPECT_EQ(r.error().write_errors[0].index, 2u);
  EXPECT_EQ(r.error().write_errors[0].code, 11000);
  EXPECT_EQ(r.error().written, 1);
  // What was done before the error: the delete (of nothing) and the insert of model 1.
  const auto& done = r.error().partial_result;
  EXPECT_EQ(done.inserted, 1);
  EXPECT_EQ(done.deleted, 0);
  EXPECT_EQ(done.matched, 0);
  EXPECT_EQ(indexes(done.inserted_ids), std::vector<std::size_t>{1});
  EXPECT_EQ(json(done.inserted_ids[0].id), R"({"_id":2})");
  EXPECT_EQ(contents(c), (strings{R"({"_id":1})", R"({"_id":2})"}));
}

TEST_F(MongoOpsTest, UnorderedBulkWriteTriesEveryModel) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "s": "text"})"});
  const std::vector<mongo::write_model> models{
      mongo::insert_one_model{j_(R"({"_id": 1})")},  // duplicate
      mongo::insert_one_model{j_(R"({"_id": 2})")},
      mongo::update_one_model{j_(R"({"_id": 2})"), j_(R"({"$set": {"x": 1}})")},
      mongo::delete_one_model{j_(R"({"_id": 99})")},
      // Alone in its command: FerretDB v1.24 stops an unordered update at its first error.
      mongo::update_one_model{j_(R"({"_id": 1})"), j_(R"({"$inc": {"s": 1}})")},  // not a number
      mongo::insert_one_model{j_(R"({"_id": 2})")},                               // duplicate
      mongo::insert_one_model{j_(R"({"_id": 4})")},
  };
  auto r = c.bulk_write(models, {.ordered = false});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::server_error);  // not all duplicates
  ASSERT_EQ(r.error().write_errors.size(), 3u);
  EXPECT_EQ(r.error().write_errors[0].index, 0u);
  EXPECT_EQ(r.error().write_errors[0].code, 11000);
  EXPECT_EQ(r.error().write_errors[1].index, 4u);
  EXPECT_EQ(r.error().write_errors[1].code, 14);  // TypeMismatch
  EXPECT_EQ(r.error().write_errors[2].index, 5u);
  EXPECT_EQ(r.error().write_errors[2].code, 11000);
  EXPECT_EQ(r.error().written, 3);  // insert 2, update of 2, insert 4
  const auto& done = r.error().partial_result;
  EXPECT_EQ(done.inserted, 2);
  EXPECT_EQ(done.matched, 1);
  EXPECT_EQ(done.modified, 1);
  EXPECT_EQ(done.deleted, 0);
  EXPECT_EQ(indexes(done.inserted_ids), (std::vector<std::size_t>{1, 6}));
  EXPECT_EQ(contents(c),
            (strings{R"({"_id":1,"s":"text"})", R"({"_id":2,"x":1})", R"({"_id":4})"}));
}

TEST_F(MongoOpsTest, BulkWriteRefusesBadModelsBeforeSending) {
  auto c = coll();
  auto empty = c.bulk_write({});
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().code, errc::invalid_value);
  const std::vector<std::vector<mongo::write_model>> cases{
      {mongo::insert_one_model{j_(R"({"_id": 1})")},
       mongo::update_one_model{{}, j_(R"({"n": 1})")}},
      {mongo::insert_one_model{j_(R"({"_id": 1})")}, mongo::update_many_model{{}, j_("{}")}},
      {mongo::insert_one_model{j_(R"({"_id": 1})")},
       mongo::replace_one_model{{}, j_(R"({"$set": {"n": 1}})")}},
  };
  for (const auto& models : cases) {
    auto r = c.bulk_write(models);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, errc::invalid_value);
    EXPECT_NE(r.error().message.find("(model 1)"), std::string::npos) << r.error().message;
  }
  EXPECT_EQ(c.estimated_document_count().value(), 0);  // the valid insert was not sent either
}

// Fifty documents of about 1 MB, `_id` 0 to 49: more than one message of maxMessageSizeBytes
// (48,000,000 bytes on FerretDB and mongod), so insert_many sends two insert commands.
std::vector<document> megabyte_documents() {
  std::vector<document> docs;
  for (int i = 0; i < 50; ++i) {
    builder b;
    b.append_int32("_id", i).append_string("s", std::string(1'000'000, 'x'));
    docs.push_back(std::move(b).extract());
  }
  return docs;
}

TEST_F(MongoOpsTest, InsertManyFailureKeepsThePartialResultAcrossTheMessageSplit) {
  int inserts = 0;
  mongo::client_options counting;
  counting.on_command = [&inserts](const mongo::command_event& e) {
    const auto* started = std::get_if<mongo::command_started_event>(&e);
    if (started != nullptr && started->command_name == "insert") ++inserts;
  };
  auto client = mongo::client::create(uri_, counting);
  ASSERT_TRUE(client.has_value()) << client.error().message;
  const auto docs = megabyte_documents();
  std::vector<document_view> views;
  for (const auto& d : docs) views.push_back(d.view());

  // Ordered, a duplicate at 48 (in the second command, after the 47 or so of the first):
  // the 48 before it are inserted, and nothing after.
  auto ordered = client->collection(db_, "ordered");
  insert(ordered, {R"({"_id": 48})"});
  inserts = 0;
  auto r = ordered.insert_many(views);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(inserts, 2);
  EXPECT_EQ(r.error().code, oid::mongo::errc::duplicate_key);
  ASSERT_EQ(r.error().write_errors.size(), 1u);
  EXPECT_EQ(r.error().write_errors[0].index, 48u);  // in `views`, not in the second command
  EXPECT_EQ(r.error().partial_result.inserted, 48);
  EXPECT_EQ(r.error().written, 48);
  std::vector<std::size_t> first_48(48);
  for (std::size_t i = 0; i < first_48.size(); ++i) first_48[i] = i;
  EXPECT_EQ(indexes(r.error().partial_result.inserted_ids), first_48);
  EXPECT_EQ(ordered.estimated_document_count().value(), 49);

  // Unordered, duplicates at 10 (first command) and 48 (second): everything else is inserted.
  auto unordered = client->collection(db_, "unordered");
  insert(unordered, {R"({"_id": 10})", R"({"_id": 48})"});
  inserts = 0;
  mongo::insert_options unordered_options;
  unordered_options.ordered = false;
  auto u = unordered.insert_many(views, unordered_options);
  ASSERT_FALSE(u.has_value());
  EXPECT_EQ(inserts, 2);
  EXPECT_EQ(u.error().code, oid::mongo::errc::duplicate_key);
  ASSERT_EQ(u.error().write_errors.size(), 2u);
  EXPECT_EQ(u.error().write_errors[0].index, 10u);
  EXPECT_EQ(u.error().write_errors[1].index, 48u);
  EXPECT_EQ(u.error().partial_result.inserted, 48);
  std::vector<std::size_t> all_but_two;
  for (std::size_t i = 0; i < 50; ++i) {
    if (i != 10 && i != 48) all_but_two.push_back(i);
  }
  EXPECT_EQ(indexes(u.error().partial_result.inserted_ids), all_but_two);
  EXPECT_EQ(unordered.estimated_document_count().value(), 50);
}

TEST_F(MongoOpsTest, BulkWriteValueThrowsTheExceptionWithThePartialResult) {
  auto c = coll();
  insert(c, {R"({"_id": 2})"});
  const std::vector<mongo::write_model> models{mongo::insert_one_model{j_(R"({"_id": 1})")},
                                               mongo::insert_one_model{j_(R"({"_id": 2})")}};
  try {
    (void)c.bulk_write(models).value();
    ADD_FAILURE() << "no exception";
  } catch (const mongo::bulk_write_exception& e) {
    EXPECT_EQ(e.code(), oid::mongo::errc::duplicate_key);
    EXPECT_EQ(e.failure().write_errors.size(), 1u);
    EXPECT_EQ(e.partial_result().inserted, 1);
    EXPECT_EQ(indexes(e.partial_result().inserted_ids), std::vector<std::size_t>{0});
  }
}

TEST_F(MongoOpsTest, HintByNameOrKeyPattern) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "n": 1})", R"({"_id": 2, "n": 2})", R"({"_id": 3, "n": 3})",
             R"({"_id": 4, "n": 4})"});
  ASSERT_TRUE(c.create_index(j_(R"({"n": 1})")).has_value());
  const auto by_keys = j_(R"({"n": 1})");
  auto one = c.update_one(j_(R"({"n": 1})"), j_(R"({"$set": {"h": "name"}})"), {.hint = "n_1"});
  ASSERT_TRUE(one.has_value()) << one.error().message;
  EXPECT_EQ(one->modified, 1);
  auto many = c.update_many(j_(R"({"n": {"$gte": 3}})"), j_(R"({"$set": {"h": "keys"}})"),
                            {.bypass_document_validation = true, .hint = by_keys});
  ASSERT_TRUE(many.has_value()) << many.error().message;
  EXPECT_EQ(many->modified, 2);
  auto replaced = c.replace_one(j_(R"({"n": 2})"), j_(R"({"n": 2, "r": 1})"), {.hint = "n_1"});
  ASSERT_TRUE(replaced.has_value()) << replaced.error().message;
  EXPECT_EQ(replaced->modified, 1);
  auto found =
      c.find_one_and_update(j_(R"({"n": 2})"), j_(R"({"$inc": {"r": 1}})"), {.hint = "n_1"});
  ASSERT_TRUE(found.has_value()) << found.error().message;
  auto deleted = c.delete_one(j_(R"({"n": 4})"), {.hint = "n_1"});
  ASSERT_TRUE(deleted.has_value()) << deleted.error().message;
  EXPECT_EQ(*deleted, 1);
  const std::vector<mongo::write_model> models{
      mongo::update_one_model{
          .filter = j_(R"({"n": 1})"), .update = j_(R"({"$set": {"b": 1}})"), .hint = by_keys},
      mongo::delete_many_model{.filter = j_(R"({"n": 3})"), .hint = "n_1"}};
  auto bulk = c.bulk_write(models);
  ASSERT_TRUE(bulk.has_value()) << bulk.error().message;
  EXPECT_EQ(bulk->modified, 1);
  EXPECT_EQ(bulk->deleted, 1);
  EXPECT_EQ(contents(c),
            (strings{R"({"_id":1,"n":1,"h":"name","b":1})", R"({"_id":2,"n":2,"r":2})"}));
}

// FerretDB v1.24 refuses these options (so the scripted server checks what is sent): arrayFilters,
// collation and let (NotImplemented, 238), and pipeline updates (TypeMismatch, 14, in update;
// 238 in findAndModify).
TEST_F(MongoOpsTest, FerretDbRefusesArrayFiltersCollationLetAndPipelines) {
  auto c = coll();
  insert(c, {R"({"_id": 1, "a": [{"x": 1}, {"x": 5}]})"});
  const std::vector<document_view> filters{j_(R"({"e.x": {"$gt": 2}})")};
  const std::vector<document_view> stages{j_(R"({"$set": {"m": 1}})")};
  const auto code = [](const auto& r) {
    return r.has_value() || !r.error().server ? 0 : r.error().server->code;
  };
  const auto set = j_(R"({"$set": {"a.$[e].x": 0}})");
  EXPECT_EQ(code(c.update_one({}, set, {.array_filters = filters})), 238);
  EXPECT_EQ(code(c.update_one({}, set, {.collation = j_(R"({"locale": "en"})")})), 238);
  EXPECT_EQ(code(c.delete_one({}, {.let = j_(R"({"v": 1})")})), 238);
  EXPECT_EQ(code(c.update_one({}, stages)), 14);
  EXPECT_EQ(code(c.find_one_and_update({}, stages)), 238);
  EXPECT_EQ(contents(c), strings{R"({"_id":1,"a":[{"x":1},{"x":5}]})"});
}

// ---- command monitoring of writes ----

// The command monitoring specification: a started event's command holds the OP_MSG document
// sequences (an insert's `documents`, which the wire sends apart) as arrays, and an
// unacknowledged (w: 0) write publishes started and succeeded, the latter with {ok: 1}.
TEST_F(MongoOpsTest, CommandEventsHoldDocumentSequencesAndUnacknowledgedWrites) {
  std::mutex mutex;
  std::vector<std::string> seen;  // "started insert {...}", "succeeded insert {...}"
  mongo::client_options listening;
  listening.on_command = [&](const mongo::command_event& e) {
    std::lock_guard lock(mutex);
    if (const auto* s = std::get_if<mongo::command_started_event>(&e);
        s && s->command_name == "insert") {
      auto docs = s->command.view().find("documents");
      seen.push_back("started " + (docs ? oid::bson::to_json(*docs->get_array()) : "no documents"));
    }
    if (const auto* s = std::get_if<mongo::command_succeeded_event>(&e);
        s && s->command_name == "insert") {
      seen.push_back("succeeded " + json(s->reply));
    }
  };
  auto client = mongo::client::create(uri_, listening);
  ASSERT_TRUE(client.has_value()) << client.error().message;
  auto c = client->collection(db_, "events");
  std::vector<document_view> two = {j_(R"({"_id": 1})"), j_(R"({"_id": 2})")};
  ASSERT_TRUE(c.insert_many(two).has_value());
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  ASSERT_TRUE(c.insert_one(j_(R"({"_id": 3})"), w0).has_value());
  std::lock_guard lock(mutex);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], R"(started {"0":{"_id":1},"1":{"_id":2}})");
  EXPECT_EQ(seen[1].substr(0, 10), "succeeded ");
  EXPECT_EQ(seen[2], R"(started {"0":{"_id":3}})");
  EXPECT_EQ(seen[3], R"(succeeded {"ok":1})");
}

}  // namespace
