// Tests of collection::aggregate, the find-and-modify operations, distinct,
// estimated_document_count, rename and bulk_write: against the server MONGODB_URI names
// (FerretDB v1.24 under scripts/test.sh), and against the scripted server for what FerretDB
// refuses (collation, let, $out, $merge, the projection of findAndModify, dropTarget) and for
// the commands the client sends.
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

#include "support/script_server.hpp"
#include "support/server_test.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace std::chrono_literals;

// Documents written as Extended JSON, kept alive for the test's duration.
class documents {
 public:
  document_view operator()(std::string_view json) {
    auto d = oid::bson::from_json(json);
    EXPECT_TRUE(d.has_value()) << json;
    keep_.push_back(d ? std::move(*d) : document());
    return keep_.back().view();
  }

 private:
  std::deque<document> keep_;
};

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

// ---- the scripted server: the commands sent, and what FerretDB refuses ----

// A server that answers every command with `answer(name, body)` and records the commands (not
// the handshake) with their document sequences.
struct recorded {
  document body;
  std::vector<std::vector<document>> sequences;
};

class recorder {
 public:
  using answer_fn = std::function<document(const std::string&, document_view, std::size_t)>;
  explicit recorder(answer_fn answer, std::int32_t max_write_batch_size = 100'000,
                    std::int32_t max_bson_object_size = 16 * 1024 * 1024)
      : answer_(std::move(answer)),
        server_([this, max_write_batch_size, max_bson_object_size](oid::test::peer& p, int) {
          if (!p.handshake(max_write_batch_size, max_bson_object_size)) return;
          while (auto m = p.read()) {
            recorded r{document(m->body), {}};
            for (const auto& s : m->sequences) {
              r.sequences.emplace_back();
              for (auto d : s.documents) r.sequences.back().emplace_back(d);
            }
            std::size_t count = 0;
            {
              std::lock_guard lock(mutex_);
              seen_.push_back(std::move(r));
              count = seen_.size();
            }
            if ((m->flags & oid::mongo::op_msg_flags::more_to_come) != 0) continue;
            const document reply = answer_(oid::test::command_name(*m), m->body, count);
            p.reply(*m, reply.view());
          }
        }) {}
  mongo::client client() { return mongo::client::create(server_.uri()).value(); }
  /// The server's connection string, with `options` ("&w=majority", ...) added.
  std::string uri(std::string_view options = "") const { return server_.uri(options); }
  std::vector<recorded> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }

 private:
  answer_fn answer_;
  std::mutex mutex_;
  std::vector<recorded> seen_;
  oid::test::script_server server_;
};

document parse(std::string_view text) { return oid::bson::from_json(text).value(); }

// The command without the fields the client adds to every command ($db, lsid, ...).
std::string command_json(const document& command) {
  const document_view body = command.view();
  builder b;
  for (const auto& e : body) {
    if (!e.key().empty() && e.key().front() == '$') continue;
    if (e.key() == "lsid") continue;
    b.append_element(e);
  }
  return json(b.view());
}

document empty_cursor() {
  return parse(R"({"cursor": {"id": 0, "ns": "db.c", "firstBatch": []}, "ok": 1})");
}

TEST(MongoOpsScriptTest, AggregateEndingInMergeSendsNoBatchSize) {
  recorder server([](const std::string&, document_view, std::size_t) { return empty_cursor(); });
  auto c = server.client().collection("db", "c");
  documents j;
  mongo::aggregate_options options{.allow_disk_use = false,
                                   .batch_size = 10,
                                   .max_time = 1500ms,
                                   .bypass_document_validation = true,
                                   .collation = j(R"({"locale": "fr"})"),
                                   .hint = j(R"({"a": 1})"),
                                   .let = j(R"({"x": 1})")};
  options.write_concern.w_tag = "majority";
  const std::vector<document_view> merge{j(R"({"$match": {}})"),
                                         j(R"({"$merge": {"into": "other"}})")};
  auto cur = c.aggregate(merge, options);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_FALSE(cur->next().value());  // a write stage returns nothing
  const std::vector<document_view> out{j(R"({"$out": "other"})")};
  ASSERT_TRUE(c.aggregate(out, {.batch_size = 10}).has_value());
  const std::vector<document_view> read{j(R"({"$match": {}})")};
  ASSERT_TRUE(c.aggregate(read, {.batch_size = 10}).has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body),
            R"({"aggregate":"c","pipeline":[{"$match":{}},{"$merge":{"into":"other"}}],)"
            R"("cursor":{},"allowDiskUse":false,"maxTimeMS":1500,)"
            R"("bypassDocumentValidation":true,"collation":{"locale":"fr"},"hint":{"a":1},)"
            R"("let":{"x":1},"writeConcern":{"w":"majority"}})");
  EXPECT_EQ(command_json(seen[1].body),
            R"({"aggregate":"c","pipeline":[{"$out":"other"}],"cursor":{}})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"aggregate":"c","pipeline":[{"$match":{}}],"cursor":{"batchSize":10}})");
}

TEST(MongoOpsScriptTest, AggregateSendsBatchSizeWithEveryGetMore) {
  recorder server([](const std::string& name, document_view, std::size_t) {
    if (name == "aggregate") {
      return parse(R"({"cursor": {"id": 5, "ns": "db.c", "firstBatch": [{"n": 1}]}, "ok": 1})");
    }
    return parse(R"({"cursor": {"id": 0, "ns": "db.c", "nextBatch": [{"n": 2}]}, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> read{j(R"({"$match": {}})")};
  auto cur = c.aggregate(read, {.batch_size = 1});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(drain(*cur), (strings{R"({"n":1})", R"({"n":2})"}));
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(command_json(seen[1].body), R"({"getMore":5,"collection":"c","batchSize":1})");
}

TEST(MongoOpsScriptTest, FindAndModifySendsItsOptions) {
  recorder server([](const std::string&, document_view, std::size_t) {
    return parse(R"({"lastErrorObject": {"n": 1}, "value": {"_id": 1, "n": 2}, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  mongo::find_one_and_modify_options options{.projection = j(R"({"n": 1})"),
                                             .sort = j(R"({"n": -1})"),
                                             .upsert = true,
                                             .return_document = mongo::return_document::after,
                                             .max_time = 200ms,
                                             .bypass_document_validation = true,
                                             .collation = j(R"({"locale": "fr"})"),
                                             .hint = j(R"({"n": 1})")};
  options.write_concern.w = 1;
  auto updated = c.find_one_and_update(j(R"({"a": 1})"), j(R"({"$inc": {"n": 1}})"), options);
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  ASSERT_TRUE(updated->has_value());
  EXPECT_EQ(json(**updated), R"({"_id":1,"n":2})");
  ASSERT_TRUE(c.find_one_and_replace(j(R"({"a": 1})"), j(R"({"n": 5})")).has_value());
  ASSERT_TRUE(c.find_one_and_delete(
                   j(R"({"a": 1})"),
                   {.projection = j(R"({"n": 0})"), .sort = j(R"({"n": 1})"), .max_time = 300ms})
                  .has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body),
            R"({"findAndModify":"c","query":{"a":1},"update":{"$inc":{"n":1}},"new":true,)"
            R"("upsert":true,"bypassDocumentValidation":true,"sort":{"n":-1},"fields":{"n":1},)"
            R"("collation":{"locale":"fr"},"hint":{"n":1},"maxTimeMS":200,)"
            R"("writeConcern":{"w":1}})");
  EXPECT_EQ(command_json(seen[1].body),
            R"({"findAndModify":"c","query":{"a":1},"update":{"n":5},"new":false})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"findAndModify":"c","query":{"a":1},"remove":true,"sort":{"n":1},)"
            R"("fields":{"n":0},"maxTimeMS":300})");
}

TEST(MongoOpsScriptTest, FindAndModifyWriteConcernErrorAndDuplicateKey) {
  recorder server([](const std::string&, document_view, std::size_t count) {
    if (count == 1) {
      return parse(R"({"value": null, "ok": 1,
                       "writeConcernError": {"code": 64, "errmsg": "waiting timed out"}})");
    }
    return parse(R"({"ok": 0, "code": 11000, "codeName": "DuplicateKey",
                     "errmsg": "E11000 duplicate key error collection: db.c index: k_1 dup key"})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  auto wce = c.find_one_and_delete({});
  ASSERT_FALSE(wce.has_value());
  EXPECT_EQ(wce.error().code, oid::mongo::errc::write_concern_failed);
  ASSERT_TRUE(wce.error().write_concern_error.has_value());
  EXPECT_EQ(wce.error().write_concern_error->code, 64);
  auto dup = c.find_one_and_update({}, j(R"({"$set": {"k": 1}})"));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(dup.error().server->index_name, "k_1");
}

TEST(MongoOpsScriptTest, DistinctCountAndRenameSendTheirOptions) {
  recorder server([](const std::string& name, document_view, std::size_t) {
    if (name == "distinct") return parse(R"({"values": ["a", 1], "ok": 1})");
    if (name == "count") return parse(R"({"n": 12, "ok": 1})");
    return parse(R"({"ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  auto values = c.distinct("f.g", j(R"({"x": 1})"),
                           {.max_time = 100ms, .collation = j(R"({"locale": "fr"})")});
  ASSERT_TRUE(values.has_value()) << values.error().message;
  EXPECT_EQ(json(values->view()), R"({"0":"a","1":1})");
  EXPECT_EQ(c.estimated_document_count({.max_time = 100ms}).value(), 12);
  auto renamed = c.rename("d", true);
  ASSERT_TRUE(renamed.has_value()) << renamed.error().message;
  EXPECT_EQ(renamed->name(), "d");
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body),
            R"({"distinct":"c","key":"f.g","query":{"x":1},"maxTimeMS":100,)"
            R"("collation":{"locale":"fr"}})");
  EXPECT_EQ(command_json(seen[1].body), R"({"count":"c","maxTimeMS":100})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"renameCollection":"db.c","to":"db.d","dropTarget":true})");
  EXPECT_EQ(seen[2].body.view().find("$db")->get_string().value(), "admin");
}

TEST(MongoOpsScriptTest, BulkWriteSplitsRunsAtMaxWriteBatchSizeAndMapsIndexes) {
  // maxWriteBatchSize 2. Models: 5 inserts (commands of 2, 2, 1), 3 updates (2, 1), 1 delete.
  // The second insert command refuses its second document (model 3); the second update command
  // upserts its first statement (model 7).
  recorder server(
      [](const std::string& name, document_view, std::size_t count) {
        if (count == 2) {
          return parse(R"({"n": 1, "ok": 1, "writeErrors": [{"index": 1, "code": 11000,
                           "errmsg": "E11000 duplicate key error"}]})");
        }
        if (name == "insert") return parse(R"({"n": 2, "ok": 1})");
        if (name == "update" && count == 5) {
          return parse(R"({"n": 1, "nModified": 0, "ok": 1,
                           "upserted": [{"index": 0, "_id": 77}]})");
        }
        if (name == "update") return parse(R"({"n": 2, "nModified": 1, "ok": 1})");
        return parse(R"({"n": 1, "ok": 1})");
      },
      2);
  auto c = server.client().collection("db", "c");
  documents j;
  std::vector<mongo::write_model> models;
  for (int i = 0; i < 5; ++i) {
    models.push_back(mongo::insert_one_model{j(R"({"_id": )" + std::to_string(i) + "}")});
  }
  models.push_back(mongo::update_one_model{j(R"({"_id": 0})"), j(R"({"$set": {"a": 1}})")});
  models.push_back(mongo::update_many_model{{}, j(R"({"$set": {"b": 1}})")});
  models.push_back(mongo::replace_one_model{j(R"({"_id": 77})"), j(R"({"c": 1})"), true});
  models.push_back(mongo::delete_many_model{j(R"({"_id": 4})")});

  auto r = c.bulk_write(models, {.ordered = false, .bypass_document_validation = true});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::duplicate_key);
  ASSERT_EQ(r.error().write_errors.size(), 1u);
  EXPECT_EQ(r.error().write_errors[0].index, 3u);
  EXPECT_EQ(r.error().written, 2 + 1 + 2 + 2 + 1 + 1);
  auto seen = server.seen();
  ASSERT_EQ(seen.size(), 6u);
  const std::vector<std::pair<std::string, std::size_t>> want{
      {"insert", 2}, {"insert", 2}, {"insert", 1}, {"update", 2}, {"update", 1}, {"delete", 1}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(seen[i].body.view().begin()->key(), want[i].first);
    ASSERT_EQ(seen[i].sequences.size(), 1u);
    EXPECT_EQ(seen[i].sequences[0].size(), want[i].second);
  }
  EXPECT_EQ(command_json(seen[0].body),
            R"({"insert":"c","ordered":false,"bypassDocumentValidation":true})");
  EXPECT_EQ(command_json(seen[5].body), R"({"delete":"c","ordered":false})");
  EXPECT_EQ(json(seen[3].sequences[0][1]),
            R"({"q":{},"u":{"$set":{"b":1}},"upsert":false,"multi":true})");
  EXPECT_EQ(json(seen[4].sequences[0][0]),
            R"({"q":{"_id":77},"u":{"c":1},"upsert":true,"multi":false})");
  EXPECT_EQ(json(seen[5].sequences[0][0]), R"({"q":{"_id":4},"limit":0})");

  // Ordered, the same refusal ends the bulk write after the second command.
  recorder again(
      [](const std::string&, document_view, std::size_t count) {
        if (count == 2) {
          return parse(R"({"n": 1, "ok": 1, "writeErrors": [{"index": 1, "code": 2,
                           "errmsg": "bad"}]})");
        }
        return parse(R"({"n": 2, "ok": 1})");
      },
      2);
  auto ordered = again.client().collection("db", "c").bulk_write(models);
  ASSERT_FALSE(ordered.has_value());
  EXPECT_EQ(ordered.error().code, oid::mongo::errc::server_error);
  ASSERT_EQ(ordered.error().write_errors.size(), 1u);
  EXPECT_EQ(ordered.error().write_errors[0].index, 3u);
  EXPECT_EQ(ordered.error().written, 3);
  EXPECT_EQ(again.seen().size(), 2u);
}

TEST(MongoOpsScriptTest, BulkWriteResultAddsUpAndUpsertedIdsKeepTheirModel) {
  recorder server([](const std::string& name, document_view, std::size_t) {
    if (name == "insert") return parse(R"({"n": 1, "ok": 1})");
    if (name == "update") {
      return parse(R"({"n": 3, "nModified": 1, "ok": 1,
                       "upserted": [{"index": 1, "_id": "up"}]})");
    }
    return parse(R"({"n": 4, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<mongo::write_model> models{
      mongo::delete_many_model{{}},
      mongo::insert_one_model{j(R"({"n": 1})")},
      mongo::update_many_model{{}, j(R"({"$set": {"a": 1}})")},
      mongo::update_one_model{j(R"({"_id": "up"})"), j(R"({"$set": {"a": 1}})"), true},
  };
  auto r = c.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->deleted, 4);
  EXPECT_EQ(r->inserted, 1);
  EXPECT_EQ(r->matched, 2);
  EXPECT_EQ(r->modified, 1);
  EXPECT_EQ(r->upserted, 1);
  ASSERT_EQ(r->upserted_ids.size(), 1u);
  EXPECT_EQ(r->upserted_ids[0].index, 3u);
  EXPECT_EQ(json(r->upserted_ids[0].id), R"({"_id":"up"})");
  ASSERT_EQ(r->inserted_ids.size(), 1u);
  EXPECT_EQ(r->inserted_ids[0].index, 1u);
  // The id the client gave the document is the one it sent.
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[1].sequences[0][0].view().begin()->key(), "_id");
  EXPECT_EQ(*seen[1].sequences[0][0].view().begin(), *r->inserted_ids[0].id.view().begin());
}

TEST(MongoOpsScriptTest, BadInputIsRefusedBeforeAnythingIsSent) {
  recorder server([](const std::string&, document_view, std::size_t) { return empty_cursor(); },
                  100'000, 1000);
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> empty_stage{j("{}")};
  EXPECT_EQ(c.aggregate(empty_stage).error().code, errc::invalid_value);
  EXPECT_EQ(c.find_one_and_update({}, j(R"({"n": 1})")).error().code, errc::invalid_value);
  EXPECT_EQ(c.find_one_and_replace({}, j(R"({"$set": {"n": 1}})")).error().code,
            errc::invalid_value);
  EXPECT_EQ(c.bulk_write({}).error().code, errc::invalid_value);
  const std::vector<mongo::write_model> bad_update{mongo::update_one_model{{}, j(R"({"n": 1})")}};
  EXPECT_EQ(c.bulk_write(bad_update).error().code, errc::invalid_value);
  EXPECT_EQ(c.rename("").error().code, errc::invalid_value);
  EXPECT_EQ(c.distinct("").error().code, errc::invalid_value);
  // maxBsonObjectSize is 1000 here: the small insert is not sent either.
  builder big;
  big.append_string("s", std::string(2000, 'x'));
  const document large = std::move(big).extract();
  const std::vector<mongo::write_model> too_large{mongo::insert_one_model{j("{}")},
                                                  mongo::insert_one_model{large.view()}};
  auto r = c.bulk_write(too_large);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::too_large);
  EXPECT_NE(r.error().message.find("document 1"), std::string::npos) << r.error().message;
  EXPECT_TRUE(server.seen().empty());
}

TEST(MongoOpsScriptTest, UnacknowledgedBulkWriteSendsWithMoreToCome) {
  recorder server(
      [](const std::string&, document_view, std::size_t) { return parse(R"({"n": 0, "ok": 1})"); });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<mongo::write_model> models{
      mongo::insert_one_model{j(R"({"_id": 1})")},
      mongo::delete_one_model{j(R"({"_id": 1})")},
  };
  auto r = c.bulk_write(models, {.write_concern = mongo::write_concern::unacknowledged()});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 0);
  EXPECT_EQ(r->deleted, 0);
  EXPECT_EQ(indexes(r->inserted_ids), std::vector<std::size_t>{0});
  // An acknowledged command on the same connection: its reply comes after both writes arrived,
  // and the recorder answered neither (it answers no moreToCome message).
  EXPECT_EQ(c.estimated_document_count().value(), 0);
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body), R"({"insert":"c","ordered":true,"writeConcern":{"w":0}})");
  EXPECT_EQ(command_json(seen[1].body), R"({"delete":"c","ordered":true,"writeConcern":{"w":0}})");
  EXPECT_EQ(command_json(seen[2].body), R"({"count":"c"})");
}

TEST(MongoOpsScriptTest, BulkWriteWriteConcernErrorKeepsTheWholeResult) {
  // An ordered bulk write goes on after a write concern error (the writes were made); the failure
  // says write_concern_failed and carries everything done.
  recorder server([](const std::string& name, document_view, std::size_t) {
    if (name == "insert") {
      return parse(R"({"n": 2, "ok": 1, "writeConcernError": {"code": 64,
                       "codeName": "WriteConcernFailed", "errmsg": "waiting timed out"}})");
    }
    return parse(R"({"n": 3, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<mongo::write_model> models{mongo::insert_one_model{j(R"({"_id": 1})")},
                                               mongo::insert_one_model{j(R"({"_id": 2})")},
                                               mongo::delete_many_model{j("{}")}};
  mongo::bulk_write_options options;
  options.write_concern.w = 2;
  options.write_concern.timeout = 100ms;
  auto r = c.bulk_write(models, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::write_concern_failed);
  ASSERT_TRUE(r.error().write_concern_error.has_value());
  EXPECT_EQ(r.error().write_concern_error->code, 64);
  EXPECT_EQ(r.error().write_concern_error->code_name, "WriteConcernFailed");
  EXPECT_TRUE(r.error().write_errors.empty());
  EXPECT_EQ(r.error().written, 5);
  EXPECT_EQ(r.error().partial_result.inserted, 2);
  EXPECT_EQ(r.error().partial_result.deleted, 3);
  EXPECT_EQ(indexes(r.error().partial_result.inserted_ids), (std::vector<std::size_t>{0, 1}));
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(command_json(seen[1].body),
            R"({"delete":"c","ordered":true,"writeConcern":{"w":2,"wtimeout":100}})");
}

TEST(MongoOpsScriptTest, BulkWriteCommandFailureKeepsWhatCameBefore) {
  // maxWriteBatchSize 2: the second insert command is refused as a whole; the first one stands.
  recorder server(
      [](const std::string&, document_view, std::size_t count) {
        if (count == 2 || count == 4) {  // the second command of each insert_many
          return parse(R"({"ok": 0, "code": 13, "codeName": "Unauthorized", "errmsg": "no"})");
        }
        return parse(R"({"n": 2, "ok": 1})");
      },
      2);
  auto c = server.client().collection("db", "c");
  documents j;
  std::vector<document_view> docs;
  for (int i = 0; i < 5; ++i) docs.push_back(j(R"({"_id": )" + std::to_string(i) + "}"));
  mongo::insert_options unordered;
  unordered.ordered = false;
  auto r = c.insert_many(docs, unordered);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 13);
  EXPECT_EQ(r.error().partial_result.inserted, 2);
  EXPECT_EQ(indexes(r.error().partial_result.inserted_ids), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(server.seen().size(), 2u);  // unordered too: nothing is sent after it
  // value() throws the exception that keeps the partial result; catching operation_error works.
  try {
    (void)c.insert_many(docs).value();
    ADD_FAILURE() << "no exception";
  } catch (const mongo::operation_error& e) {
    const auto* bulk = dynamic_cast<const mongo::bulk_write_exception*>(&e);
    ASSERT_NE(bulk, nullptr);
    EXPECT_EQ(bulk->partial_result().inserted, 2);
  }
}

TEST(MongoOpsScriptTest, UpdatesAndDeletesSendTheirOptions) {
  recorder server(
      [](const std::string&, document_view, std::size_t) { return parse(R"({"n": 1, "ok": 1})"); });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> filters{j(R"({"e.x": {"$gt": 2}})"), j(R"({"f": 1})")};
  mongo::write_options all{.upsert = true,
                           .array_filters = filters,
                           .bypass_document_validation = false,
                           .collation = j(R"({"locale": "fr"})"),
                           .hint = "x_1",
                           .let = j(R"({"v": 1})")};
  all.write_concern.w = 1;
  ASSERT_TRUE(c.update_one(j(R"({"a": 1})"), j(R"({"$set": {"a.$[e].x": 0}})"), all).has_value());
  const std::vector<document_view> stages{j(R"({"$set": {"m": {"$add": ["$n", 1]}}})"),
                                          j(R"({"$unset": "old"})")};
  ASSERT_TRUE(c.update_many({}, stages, {.hint = j(R"({"n": 1})")}).has_value());
  ASSERT_TRUE(c.replace_one({}, j(R"({"r": 1})"), {.hint = "r_1"}).has_value());
  ASSERT_TRUE(
      c.delete_one(j(R"({"a": 1})"),
                   {.collation = j(R"({"locale": "fr"})"), .hint = "x_1", .let = j(R"({"v": 2})")})
          .has_value());
  ASSERT_TRUE(c.delete_many({}, {.hint = j(R"({"n": -1})")}).has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(
      command_json(seen[0].body),
      R"({"update":"c","updates":[{"q":{"a":1},"u":{"$set":{"a.$[e].x":0}},)"
      R"("upsert":true,"multi":false,"arrayFilters":[{"e.x":{"$gt":2}},{"f":1}],)"
      R"("collation":{"locale":"fr"},"hint":"x_1"}],"ordered":true,"bypassDocumentValidation":false,)"
      R"("let":{"v":1},"writeConcern":{"w":1}})");
  EXPECT_EQ(command_json(seen[1].body),
            R"({"update":"c","updates":[{"q":{},"u":[{"$set":{"m":{"$add":["$n",1]}}},)"
            R"({"$unset":"old"}],"upsert":false,"multi":true,"hint":{"n":1}}],"ordered":true})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"update":"c","updates":[{"q":{},"u":{"r":1},"upsert":false,"multi":false,)"
            R"("hint":"r_1"}],"ordered":true})");
  EXPECT_EQ(command_json(seen[3].body),
            R"({"delete":"c","deletes":[{"q":{"a":1},"limit":1,"collation":{"locale":"fr"},)"
            R"("hint":"x_1"}],"ordered":true,"let":{"v":2}})");
  EXPECT_EQ(command_json(seen[4].body),
            R"({"delete":"c","deletes":[{"q":{},"limit":0,"hint":{"n":-1}}],"ordered":true})");
}

TEST(MongoOpsScriptTest, BulkWriteModelsSendTheirOptions) {
  recorder server([](const std::string&, document_view, std::size_t) {
    return parse(R"({"n": 1, "nModified": 1, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> filters{j(R"({"e": 1})")};
  const std::vector<document_view> stages{j(R"({"$replaceWith": {"k": "$k"}})")};
  const auto fr = j(R"({"locale": "fr"})");
  const std::vector<mongo::write_model> models{
      mongo::insert_one_model{j(R"({"_id": 1})")},
      mongo::update_one_model{j(R"({"a": 1})"), j(R"({"$set": {"b.$[e]": 0}})"), true, filters, fr,
                              "a_1"},
      mongo::update_many_model{.filter = {}, .update = stages, .hint = j(R"({"a": 1})")},
      mongo::replace_one_model{.filter = {}, .replacement = j(R"({"z": 1})"), .collation = fr},
      mongo::delete_one_model{.filter = j(R"({"a": 2})"), .collation = fr, .hint = "a_1"},
      mongo::delete_many_model{.filter = {}, .hint = j(R"({"a": -1})")},
  };
  auto r = c.bulk_write(models, {.let = j(R"({"v": 1})")});
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  // `let` goes with the update and delete commands, not with the insert.
  EXPECT_EQ(command_json(seen[0].body), R"({"insert":"c","ordered":true})");
  EXPECT_EQ(command_json(seen[1].body), R"({"update":"c","ordered":true,"let":{"v":1}})");
  EXPECT_EQ(command_json(seen[2].body), R"({"delete":"c","ordered":true,"let":{"v":1}})");
  ASSERT_EQ(seen[1].sequences.size(), 1u);
  ASSERT_EQ(seen[1].sequences[0].size(), 3u);
  EXPECT_EQ(json(seen[1].sequences[0][0]),
            R"({"q":{"a":1},"u":{"$set":{"b.$[e]":0}},"upsert":true,"multi":false,)"
            R"("arrayFilters":[{"e":1}],"collation":{"locale":"fr"},"hint":"a_1"})");
  EXPECT_EQ(json(seen[1].sequences[0][1]),
            R"({"q":{},"u":[{"$replaceWith":{"k":"$k"}}],"upsert":false,"multi":true,)"
            R"("hint":{"a":1}})");
  EXPECT_EQ(json(seen[1].sequences[0][2]),
            R"({"q":{},"u":{"z":1},"upsert":false,"multi":false,"collation":{"locale":"fr"}})");
  ASSERT_EQ(seen[2].sequences[0].size(), 2u);
  EXPECT_EQ(json(seen[2].sequences[0][0]),
            R"({"q":{"a":2},"limit":1,"collation":{"locale":"fr"},"hint":"a_1"})");
  EXPECT_EQ(json(seen[2].sequences[0][1]), R"({"q":{},"limit":0,"hint":{"a":-1}})");
}

TEST(MongoOpsScriptTest, FindOneAndUpdateSendsAPipelineArrayFiltersHintAndLet) {
  recorder server([](const std::string&, document_view, std::size_t) {
    return parse(R"({"lastErrorObject": {"n": 1}, "value": null, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> stages{j(R"({"$set": {"n": {"$add": ["$n", "$$d"]}}})")};
  const std::vector<document_view> filters{j(R"({"e": 1})")};
  ASSERT_TRUE(
      c.find_one_and_update({}, stages, {.hint = "n_1", .let = j(R"({"d": 2})")}).has_value());
  ASSERT_TRUE(c.find_one_and_update({}, j(R"({"$set": {"a.$[e]": 0}})"),
                                    {.hint = j(R"({"n": 1})"), .array_filters = filters})
                  .has_value());
  ASSERT_TRUE(c.find_one_and_delete({}, {.hint = "n_1", .let = j(R"({"d": 3})")}).has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body),
            R"({"findAndModify":"c","query":{},"update":[{"$set":{"n":{"$add":["$n","$$d"]}}}],)"
            R"("new":false,"hint":"n_1","let":{"d":2}})");
  EXPECT_EQ(command_json(seen[1].body),
            R"({"findAndModify":"c","query":{},"update":{"$set":{"a.$[e]":0}},"new":false,)"
            R"("arrayFilters":[{"e":1}],"hint":{"n":1}})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"findAndModify":"c","query":{},"remove":true,"hint":"n_1","let":{"d":3}})");
}

TEST(MongoOpsScriptTest, MisshapenPipelinesAndArrayFiltersAreRefusedBeforeSending) {
  recorder server([](const std::string&, document_view, std::size_t) { return empty_cursor(); });
  auto c = server.client().collection("db", "c");
  documents j;
  const std::vector<document_view> none;
  const std::vector<document_view> not_a_stage{j(R"({"$set": {"a": 1}})"), j(R"({"n": 1})")};
  const std::vector<document_view> two_fields{j(R"({"$set": {"a": 1}, "$unset": "b"})")};
  const std::vector<document_view> empty_stage{j("{}")};
  const std::vector<document_view> good{j(R"({"$set": {"a": 1}})")};
  const std::vector<document_view> filters{j(R"({"e": 1})")};
  for (const auto* stages : {&none, &not_a_stage, &two_fields, &empty_stage}) {
    SCOPED_TRACE(stages->size());
    EXPECT_EQ(c.update_one({}, *stages).error().code, errc::invalid_value);
    EXPECT_EQ(c.update_many({}, *stages).error().code, errc::invalid_value);
    EXPECT_EQ(c.find_one_and_update({}, *stages).error().code, errc::invalid_value);
  }
  EXPECT_NE(c.update_one({}, not_a_stage).error().message.find("stage 1"), std::string::npos);
  // Array filters with a pipeline, or with a replacement.
  EXPECT_EQ(c.update_one({}, good, {.array_filters = filters}).error().code, errc::invalid_value);
  EXPECT_EQ(c.replace_one({}, j(R"({"r": 1})"), {.array_filters = filters}).error().code,
            errc::invalid_value);
  EXPECT_EQ(c.find_one_and_replace({}, j(R"({"r": 1})"), {.array_filters = filters}).error().code,
            errc::invalid_value);
  // In a bulk write, the message names the model.
  const std::vector<mongo::write_model> models{
      mongo::insert_one_model{j(R"({"_id": 1})")},
      mongo::update_many_model{.filter = {}, .update = good, .array_filters = filters}};
  auto r = c.bulk_write(models);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::invalid_value);
  EXPECT_NE(r.error().message.find("(model 1)"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().partial_result.inserted, 0);
  EXPECT_TRUE(r.error().partial_result.inserted_ids.empty());
  EXPECT_TRUE(server.seen().empty());
}

}  // namespace

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

// The connection string's w, journal and wTimeoutMS are the write concern of every write that
// does not set its own (they were parsed and then ignored).
TEST(MongoOpsScriptTest, TheConnectionStringsWriteConcernIsEveryWritesDefault) {
  recorder server([](const std::string& name, document_view, std::size_t) {
    return name == "findAndModify" ? parse(R"({"value": null, "ok": 1})")
                                   : parse(R"({"n": 1, "ok": 1})");
  });
  auto client = mongo::client::create(server.uri("&w=majority&journal=true&wTimeoutMS=250"));
  ASSERT_TRUE(client.has_value()) << client.error().message;
  auto c = client->collection("db", "c");
  documents j;
  ASSERT_TRUE(c.insert_one(j(R"({"_id": 1})")).has_value());
  ASSERT_TRUE(c.update_one(j(R"({"_id": 1})"), j(R"({"$set": {"a": 1}})")).has_value());
  ASSERT_TRUE(c.delete_many({}).has_value());
  ASSERT_TRUE(c.find_one_and_delete({}).has_value());
  mongo::write_options own;
  own.write_concern.w = 1;
  ASSERT_TRUE(c.delete_one({}, own).has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 5u);
  const std::string wanted = R"({"w":"majority","j":true,"wtimeout":250})";
  for (std::size_t i = 0; i < 4; ++i) {
    auto wc = seen[i].body.view().find("writeConcern");
    ASSERT_TRUE(wc.has_value()) << command_json(seen[i].body);
    EXPECT_EQ(json(*wc->get_document()), wanted) << command_json(seen[i].body);
  }
  EXPECT_EQ(json(*seen[4].body.view().find("writeConcern")->get_document()), R"({"w":1})");
}

// findAndModify with w: 0 goes with moreToCome and returns nothing, as the CRUD specification
// says of unacknowledged writes (it used to wait for the reply and return the document).
TEST(MongoOpsScriptTest, UnacknowledgedFindAndModifyReadsNoReply) {
  recorder server([](const std::string&, document_view, std::size_t) {
    return parse(R"({"value": {"_id": 1}, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  mongo::find_one_and_delete_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  auto r = c.find_one_and_delete({}, w0);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_FALSE(r->has_value());
  // The connection is still in step: the next command gets its own reply.
  auto acknowledged = c.find_one_and_delete({});
  ASSERT_TRUE(acknowledged.has_value()) << acknowledged.error().message;
  ASSERT_TRUE(acknowledged->has_value());
  EXPECT_EQ(json(**acknowledged), R"({"_id":1})");
}

// find with batchSize equal to the limit asks for one more, so that the server closes the cursor
// with the first batch; find_one asks for one document in a single batch.
TEST(MongoOpsScriptTest, FindBatchSizeAtTheLimitAndFindOne) {
  recorder server([](const std::string&, document_view, std::size_t) {
    return parse(R"({"cursor": {"id": 0, "ns": "db.c", "firstBatch": [{"_id": 7}]}, "ok": 1})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  ASSERT_TRUE(c.find({}, {.limit = 4, .batch_size = 4}).has_value());
  ASSERT_TRUE(c.find({}, {.limit = 5, .batch_size = 4}).has_value());
  auto one = c.find_one(j(R"({"_id": 7})"), {.sort = j(R"({"_id": -1})"), .skip = 2});
  ASSERT_TRUE(one.has_value()) << one.error().message;
  ASSERT_TRUE(one->has_value());
  EXPECT_EQ(json(**one), R"({"_id":7})");
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(command_json(seen[0].body), R"({"find":"c","filter":{},"limit":4,"batchSize":5})");
  EXPECT_EQ(command_json(seen[1].body), R"({"find":"c","filter":{},"limit":5,"batchSize":4})");
  EXPECT_EQ(command_json(seen[2].body),
            R"({"find":"c","filter":{"_id":7},"sort":{"_id":-1},"skip":2,"limit":1,)"
            R"("singleBatch":true})");
}

// The killCursors a cursor sends when it is dropped early is a command like any other: command
// monitoring sees it (it used to go around the client's command path).
TEST(MongoOpsScriptTest, KillCursorsIsMonitored) {
  recorder server([](const std::string& name, document_view, std::size_t) {
    return name == "killCursors"
               ? parse(R"({"cursorsKilled": [42], "ok": 1})")
               : parse(
                     R"({"cursor": {"id": 42, "ns": "db.c", "firstBatch": [{"_id": 1}]}, "ok": 1})");
  });
  std::mutex mutex;
  std::vector<std::string> started;
  mongo::client_options listening;
  listening.on_command = [&](const mongo::command_event& e) {
    if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
      std::lock_guard lock(mutex);
      started.push_back(s->command_name);
    }
  };
  auto client = mongo::client::create(server.uri(), listening);
  ASSERT_TRUE(client.has_value()) << client.error().message;
  {
    auto cur = client->collection("db", "c").find();
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    ASSERT_TRUE(cur->next().value());
  }  // dropped with the server's cursor still open
  std::lock_guard lock(mutex);
  EXPECT_EQ(started, (std::vector<std::string>{"find", "killCursors"}));
}

// A write concern error's failure keeps the reply's error labels (a retryable one says
// RetryableWriteError), also those a server before 4.4 put inside the writeConcernError.
TEST(MongoOpsScriptTest, WriteConcernFailureKeepsTheReplysLabels) {
  recorder server([](const std::string&, document_view, std::size_t count) {
    return count == 1 ? parse(R"({"n": 1, "ok": 1, "errorLabels": ["RetryableWriteError"],
                                  "writeConcernError": {"code": 91, "errmsg": "shutting down"}})")
                      : parse(R"({"n": 1, "ok": 1, "writeConcernError": {"code": 64,
                                  "errmsg": "waiting", "errorLabels": ["SomeLabel"]}})");
  });
  auto c = server.client().collection("db", "c");
  documents j;
  auto r = c.insert_one(j(R"({"_id": 1})"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::write_concern_failed);
  EXPECT_TRUE(r.error().has_label("RetryableWriteError")) << r.error().message;
  auto old = c.insert_one(j(R"({"_id": 2})"));
  ASSERT_FALSE(old.has_value());
  EXPECT_TRUE(old.error().has_label("SomeLabel")) << old.error().message;
}
