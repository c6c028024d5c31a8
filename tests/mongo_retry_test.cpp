// Implicit sessions, retryable writes and retryable reads over real sockets: a scripted
// three-member replica set (tests/support/script_server.hpp) that keeps one replicated store of
// documents and, as a real server does, records each retryable write's (lsid, txnNumber) and
// answers a repeated one with the first answer instead of applying it again. Faults make the
// primary step down in the middle of a workload: refused before the write, or after it was applied
// with the connection reset before the answer. The same against FerretDB, which has sessions but
// is a standalone: mongo_retry_server_test.cpp.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/ci.hpp"
#include "support/hex.hpp"
#include "support/script_replica_set.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

document with_id(std::int32_t id) {
  builder b;
  b.append_int32("_id", id).append_int32("x", 1);
  return std::move(b).extract();
}

document id_filter(std::int32_t id) {
  builder b;
  b.append_int32("_id", id);
  return std::move(b).extract();
}

document set_x() {
  builder b;
  b.open_document("$set").append_int32("x", 2).close();
  return std::move(b).extract();
}

std::string key_of(std::int32_t id) {
  const document f = id_filter(id);
  return id_key(f.view());
}

// Waits until the client sees a primary (the set's discovery from its one seed).
void wait_for_primary(const mongo::client& c) {
  for (int i = 0; i < 500 && !c.topology().has_primary(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(c.topology().has_primary());
}

TEST(MongoRetryTest, OperationsCarryOneSessionAndRetryableWritesATxnNumber) {
  script_replica_set rs;
  {
    auto c = mongo::client::create(rs.uri()).value();
    auto coll = c.collection("db", "c");
    const document d1 = with_id(1), d2 = with_id(2), f1 = id_filter(1), f2 = id_filter(2),
                   u = set_x();
    ASSERT_TRUE(coll.insert_one(d1.view()).has_value());
    ASSERT_TRUE(coll.insert_one(d2.view()).has_value());
    ASSERT_TRUE(coll.update_one(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.update_many(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.replace_one(f1.view(), d1.view()).has_value());
    ASSERT_TRUE(coll.find_one_and_update(f1.view(), u.view()).has_value());
    ASSERT_TRUE(coll.delete_many(f2.view()).has_value());
    ASSERT_TRUE(coll.delete_one(f1.view()).has_value());
    ASSERT_TRUE(coll.count_documents({}).has_value());
    const document d3 = with_id(3);
    mongo::insert_options unacknowledged;
    unacknowledged.write_concern = mongo::write_concern::unacknowledged();
    ASSERT_TRUE(coll.insert_one(d3.view(), unacknowledged).has_value());
    // The w:0 insert has no answer to wait for: wait for the set to see it.
    for (int i = 0; i < 500 && rs.seen("insert").size() < 3; ++i) std::this_thread::sleep_for(2ms);
    const auto seen = rs.seen();
    std::vector<std::string> got;
    for (const auto& s : seen) {
      got.push_back(s.name + (s.lsid.empty() ? "" : " lsid") +
                    (s.txn_number ? " txn " + std::to_string(*s.txn_number) : ""));
    }
    // One session (the pool hands the most recently used one back), its txnNumber counting the
    // retryable writes; multi-document writes have none, the w:0 insert not even a session.
    EXPECT_EQ(got, (std::vector<std::string>{
                       "insert lsid txn 1", "insert lsid txn 2", "update lsid txn 3", "update lsid",
                       "update lsid txn 4", "findAndModify lsid txn 5", "delete lsid",
                       "delete lsid txn 6", "aggregate lsid", "insert"}));
    std::set<std::string> ids;
    for (const auto& s : seen) {
      if (!s.lsid.empty()) ids.insert(s.lsid);
    }
    ASSERT_EQ(ids.size(), 1u);
    EXPECT_EQ(ids.begin()->size(), 32u);
    EXPECT_TRUE(rs.ended().empty());
  }
  // The last copy of the client ends the pooled session.
  ASSERT_EQ(rs.seen("endSessions").size(), 1u);
  const auto ended = rs.ended();
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended.front(), rs.seen("insert").front().lsid);
  EXPECT_TRUE(rs.seen("endSessions").front().lsid.empty());
}

TEST(MongoRetryTest, AWriteRefusedByASteppingDownPrimaryIsRetriedOnceOnTheNewOne) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
  const document d = with_id(7);
  auto r = coll.insert_one(d.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(inserts[0].member, 1);
  EXPECT_EQ(inserts[1].member, 2);
  EXPECT_EQ(inserts[0].lsid, inserts[1].lsid);
  EXPECT_EQ(inserts[0].txn_number, std::optional<std::int64_t>(1));
  EXPECT_EQ(inserts[1].txn_number, std::optional<std::int64_t>(1));
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.inserted(), 1);
}

TEST(MongoRetryTest, AWriteAppliedBeforeTheConnectionDroppedIsAppliedExactlyOnce) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d = with_id(7), f = id_filter(7), u = set_x();
  // An insert and an update, each applied by the old primary whose answer never arrives.
  rs.add_fault({"insert", fault::action::apply_then_reset, 0, {}, 2});
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  rs.add_fault({"update", fault::action::apply_then_reset, 0, {}, 0});
  auto updated = coll.update_one(f.view(), u.view());
  ASSERT_TRUE(updated.has_value()) << updated.error().message;
  EXPECT_EQ(updated->matched, 1);  // the first answer, replayed by the new primary
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.duplicates(), 0);
  EXPECT_EQ(rs.updates_of(key_of(7)), 1);
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_FALSE(inserts[0].replayed);
  EXPECT_TRUE(inserts[1].replayed);
  EXPECT_EQ(inserts[0].txn_number, inserts[1].txn_number);
  EXPECT_EQ(inserts[0].lsid, inserts[1].lsid);
  // The network error made the session dirty: the update runs in a new one.
  const auto updates = rs.seen("update");
  ASSERT_EQ(updates.size(), 2u);
  EXPECT_NE(updates[0].lsid, inserts[0].lsid);
  EXPECT_EQ(updates[0].member, 2);
  EXPECT_EQ(updates[1].member, 0);
  EXPECT_TRUE(updates[1].replayed);
}

TEST(MongoRetryTest, EachBulkWriteBatchWithoutMultiStatementsIsRetriedOnItsOwn) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d1 = with_id(1), d2 = with_id(2), f1 = id_filter(1), f2 = id_filter(2),
                 u = set_x();
  const std::vector<mongo::write_model> models = {
      mongo::insert_one_model{d1.view()}, mongo::insert_one_model{d2.view()},
      mongo::update_many_model{f1.view(), u.view()}, mongo::delete_one_model{f2.view()}};
  // The delete batch is applied by a primary that steps down and drops the connection.
  rs.add_fault({"delete", fault::action::apply_then_reset, 0, {}, 2});
  auto r = coll.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 2);
  EXPECT_EQ(r->matched, 1);
  EXPECT_EQ(r->deleted, 1);
  std::vector<std::string> got;
  for (const auto& s : rs.seen()) {
    if (s.name == "endSessions") continue;
    got.push_back(std::to_string(s.member) + " " + s.name +
                  (s.txn_number ? " txn " + std::to_string(*s.txn_number) : "") +
                  (s.replayed ? " replayed" : ""));
  }
  // One session for the bulk write: a txnNumber per batch, none for the multi update.
  EXPECT_EQ(got, (std::vector<std::string>{"1 insert txn 1", "1 update", "1 delete txn 2",
                                           "2 delete txn 2 replayed"}));
  std::set<std::string> ids;
  for (const auto& s : rs.seen()) ids.insert(s.lsid);
  EXPECT_EQ(ids.size(), 1u);
  EXPECT_EQ(rs.documents(), 1u);
  EXPECT_EQ(rs.updates_of(key_of(1)), 1);
}

TEST(MongoRetryTest, ABulkWriteBatchWithARetryableWriteConcernErrorIsRetriedOnce) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  const document d1 = with_id(1), d2 = with_id(2);
  const std::vector<mongo::write_model> models = {mongo::insert_one_model{d1.view()},
                                                  mongo::insert_one_model{d2.view()}};
  // The primary applies the batch, answers with a ShutdownInProgress write concern error and
  // steps down: the retry, on the new primary, is answered from its transaction table.
  rs.add_fault(
      {"insert", fault::action::apply_with_write_concern_error, 91, {"RetryableWriteError"}, 2});
  auto r = coll.bulk_write(models);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 2);
  std::vector<std::string> got;
  for (const auto& s : rs.seen("insert")) {
    got.push_back(std::to_string(s.member) + " txn " + std::to_string(s.txn_number.value_or(-1)) +
                  (s.replayed ? " replayed" : ""));
  }
  EXPECT_EQ(got, (std::vector<std::string>{"1 txn 1", "2 txn 1 replayed"}));
  EXPECT_EQ(rs.documents(), 2u);

  // A write concern error that is not retryable (64, WriteConcernFailed) is the bulk write's
  // failure, with what was written.
  rs.add_fault({"insert", fault::action::apply_with_write_concern_error, 64, {}, -1});
  const document d3 = with_id(3);
  const std::vector<mongo::write_model> one = {mongo::insert_one_model{d3.view()}};
  auto refused = coll.bulk_write(one);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, oid::mongo::errc::write_concern_failed);
  ASSERT_TRUE(refused.error().write_concern_error.has_value());
  EXPECT_EQ(refused.error().write_concern_error->code, 64);
  EXPECT_EQ(refused.error().partial_result.inserted, 1);
  EXPECT_EQ(rs.seen("insert").size(), 3u);
}

TEST(MongoRetryTest, ANonRetryableErrorIsNotRetried) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  rs.add_fault({"insert", fault::action::refuse, 2, {}, -1});  // BadValue
  const document d = with_id(1);
  auto r = coll.insert_one(d.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 2);
  EXPECT_EQ(rs.seen("insert").size(), 1u);
  // A duplicate key is a write error, about the document: not retried either.
  ASSERT_TRUE(coll.insert_one(d.view()).has_value());
  auto dup = coll.insert_one(d.view());
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(rs.seen("insert").size(), 3u);
  EXPECT_EQ(rs.documents(), 1u);
}

TEST(MongoRetryTest, ARetryThatFailsTooReturnsItsErrorOrTheOriginalForNoWritesPerformed) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  const document d = with_id(1);
  // InterruptedDueToReplStateChange, then NotWritablePrimary: the retry's error.
  rs.add_fault({"insert", fault::action::refuse, 11602, {"RetryableWriteError"}, -1});
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, -1});
  auto r = coll.insert_one(d.view());
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 10107);
  EXPECT_EQ(rs.seen("insert").size(), 2u);  // once retried, never twice
  // The same with NoWritesPerformed on the retry's error: the original error.
  rs.forget();
  rs.add_fault({"insert", fault::action::refuse, 11602, {"RetryableWriteError"}, -1});
  rs.add_fault(
      {"insert", fault::action::refuse, 10107, {"RetryableWriteError", "NoWritesPerformed"}, -1});
  auto original = coll.insert_one(d.view());
  ASSERT_FALSE(original.has_value());
  ASSERT_TRUE(original.error().server.has_value());
  EXPECT_EQ(original.error().server->code, 11602);
  EXPECT_EQ(rs.seen("insert").size(), 2u);
  EXPECT_EQ(rs.documents(), 0u);
}

TEST(MongoRetryTest, AServerBefore44HasItsRetryableCodesLabelledByTheClient) {
  script_replica_set rs({.max_wire_version = 8});
  auto c = mongo::client::create(rs.uri()).value();
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 189, {}, 0});  // PrimarySteppedDown, no label
  const document d = with_id(1);
  auto r = c.collection("db", "c").insert_one(d.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(inserts[1].member, 0);
  EXPECT_EQ(rs.documents(), 1u);
}

TEST(MongoRetryTest, RetryWritesFalseAndRetryReadsFalseRetryNothing) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri("&retryWrites=false&retryReads=false")).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
  const document d = with_id(1);
  auto w = coll.insert_one(d.view());
  ASSERT_FALSE(w.has_value());
  ASSERT_TRUE(w.error().server.has_value());
  EXPECT_EQ(w.error().server->code, 10107);
  const auto inserts = rs.seen("insert");
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_FALSE(inserts[0].txn_number.has_value());
  EXPECT_FALSE(inserts[0].lsid.empty());  // sessions still
  rs.add_fault({"find", fault::action::reset, 0, {}, -1});
  auto r = coll.find();
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::connection_closed);
  EXPECT_EQ(rs.seen("find").size(), 1u);
}

TEST(MongoRetryTest, ReadsAreRetriedOnceAndGetMoreIsNot) {
  script_replica_set rs;
  for (std::int32_t i = 0; i < 5; ++i) rs.add_document(key_of(i));
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  rs.add_fault({"find", fault::action::reset, 0, {}, -1});
  mongo::find_options two_at_a_time;
  two_at_a_time.batch_size = 2;
  auto cur = coll.find({}, two_at_a_time);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_EQ(rs.seen("find").size(), 2u);
  int n = 0;
  while (cur->next().value()) ++n;
  EXPECT_EQ(n, 5);
  // The retry runs in the operation's session, and getMore follows the find in it.
  const auto finds = rs.seen("find");
  const auto more = rs.seen("getMore");
  ASSERT_EQ(more.size(), 1u);
  EXPECT_EQ(finds[0].lsid, finds[1].lsid);
  EXPECT_EQ(more[0].lsid, finds[1].lsid);

  // A getMore that fails is not retried: the cursor is lost with its connection.
  rs.add_fault({"getMore", fault::action::reset, 0, {}, -1});
  auto lost = coll.find({}, two_at_a_time);
  ASSERT_TRUE(lost.has_value()) << lost.error().message;
  ASSERT_TRUE(lost->next().value());
  ASSERT_TRUE(lost->next().value());
  auto failed = lost->next();
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().code, oid::mongo::errc::connection_closed);
  EXPECT_EQ(rs.seen("getMore").size(), 2u);

  // Each retryable read, refused once by a member that is no longer primary.
  struct read_case {
    const char* command;
    std::function<bool()> run;
  };
  const read_case reads[] = {
      {"aggregate", [&] { return coll.count_documents({}).has_value(); }},
      {"distinct", [&] { return coll.distinct("x").has_value(); }},
      {"count", [&] { return coll.estimated_document_count().has_value(); }},
      {"listDatabases", [&] { return c.list_databases().has_value(); }},
      {"listCollections", [&] { return c.list_collections("db").has_value(); }},
      {"listIndexes", [&] { return coll.list_indexes().has_value(); }},
  };
  for (const auto& rc : reads) {
    SCOPED_TRACE(rc.command);
    rs.add_fault({rc.command, fault::action::refuse, 10107, {}, -1});
    EXPECT_TRUE(rc.run());
    EXPECT_EQ(rs.seen(rc.command).size(), 2u);
  }
}

TEST(MongoRetryTest, TenThousandWritesAcrossTwoStepdownsLoseNoneAndDuplicateNone) {
  script_replica_set rs;
  auto c = mongo::client::create(rs.uri()).value();
  auto coll = c.collection("db", "c");
  wait_for_primary(c);
  constexpr std::int32_t total = 10'000;
  int failures = 0;
  for (std::int32_t i = 0; i < total; ++i) {
    // At 3,000 the primary refuses and steps down to member 2; at 7,000 member 2 applies the
    // write, steps down to member 0 and drops the connection before answering.
    if (i == 3'000) {
      rs.add_fault({"insert", fault::action::refuse, 10107, {"RetryableWriteError"}, 2});
    }
    if (i == 7'000) rs.add_fault({"insert", fault::action::apply_then_reset, 0, {}, 0});
    const document d = with_id(i);
    if (auto r = coll.insert_one(d.view()); !r) {
      ADD_FAILURE() << "write " << i << ": " << r.error().message;
      if (++failures > 5) break;
    }
  }
  EXPECT_EQ(rs.documents(), static_cast<std::size_t>(total));  // distinct _ids in the store
  EXPECT_EQ(rs.inserted(), total);                             // each applied once
  EXPECT_EQ(rs.duplicates(), 0);
  EXPECT_EQ(rs.primary(), 0);
  const auto inserts = rs.seen("insert");
  EXPECT_EQ(inserts.size(), static_cast<std::size_t>(total + 2));  // two retries
  std::size_t replayed = 0;
  for (const auto& s : inserts) {
    replayed += s.replayed ? 1 : 0;
    EXPECT_TRUE(s.txn_number.has_value());
  }
  EXPECT_EQ(replayed, 1u);
  auto n = coll.count_documents({});
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, total);
}

}  // namespace
