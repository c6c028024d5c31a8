// The commands collection::aggregate, the find-and-modify operations, distinct, rename and
// bulk_write send, and what FerretDB refuses (collation, let, $out, $merge, the projection of
// findAndModify, dropTarget), against a scripted server that records each command
// (support/script_server.hpp). The same operations against FerretDB: mongo_ops_test.cpp.
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
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
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

// The models' places of the ids a bulk write reports.
std::vector<std::size_t> indexes(const std::vector<mongo::indexed_id>& ids) {
  std::vector<std::size_t> out;
  for (const auto& i : ids) out.push_back(i.index);
  return out;
}

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
  recording_server server(
      [](const std::string&, document_view, std::size_t) { return empty_cursor(); });
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
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t count) {
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
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server(
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
  recording_server again(
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
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server(
      [](const std::string&, document_view, std::size_t) { return empty_cursor(); }, 100'000, 1000);
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
  recording_server server(
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
  // and the recording_server answered neither (it answers no moreToCome message).
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
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server(
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
  recording_server server(
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
  recording_server server([](const std::string&, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t) {
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
  recording_server server(
      [](const std::string&, document_view, std::size_t) { return empty_cursor(); });
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

// The connection string's w, journal and wTimeoutMS are the write concern of every write that
// does not set its own (they were parsed and then ignored).
TEST(MongoOpsScriptTest, TheConnectionStringsWriteConcernIsEveryWritesDefault) {
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t) {
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
  recording_server server([](const std::string& name, document_view, std::size_t) {
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
  recording_server server([](const std::string&, document_view, std::size_t count) {
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

}  // namespace
