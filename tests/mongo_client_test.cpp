// Integration tests of oid::mongo::client against a real server: the one MONGODB_URI names
// (scripts/test.sh starts FerretDB v1.24.2 and sets it). Without MONGODB_URI they skip, except
// under CI=true, where they fail: CI must run them.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/ensure_id.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "support/server_test.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;

document doc1(std::string_view key, std::int32_t v) {
  builder b;
  b.append_int32(key, v);
  return std::move(b).extract();
}

class MongoClientTest : public oid::testing::server_test {
 protected:
  // {key: v}, kept alive until the test ends (a view of a temporary document would dangle).
  document_view doc(std::string_view key, std::int32_t v);

  std::deque<document> keep_;
};

document numbered(int i) {
  builder b;
  b.append_int32("n", i).append_string("tag", i % 2 == 0 ? "even" : "odd");
  return std::move(b).extract();
}

std::vector<document> numbered_docs(int count) {
  std::vector<document> docs;
  for (int i = 0; i < count; ++i) docs.push_back(numbered(i));
  return docs;
}

std::vector<document_view> views(const std::vector<document>& docs) {
  std::vector<document_view> out;
  for (const auto& d : docs) out.push_back(d.view());
  return out;
}

document_view MongoClientTest::doc(std::string_view key, std::int32_t v) {
  keep_.push_back(doc1(key, v));
  return keep_.back().view();
}

std::vector<std::int32_t> read_n(mongo::cursor& c) {
  std::vector<std::int32_t> out;
  while (true) {
    auto more = c.next();
    EXPECT_TRUE(more.has_value()) << more.error().message;
    if (!more || !*more) break;
    const auto n = c.current().find("n");
    out.push_back(n ? n->get_int32().value_or(-1) : -1);
  }
  return out;
}

TEST_F(MongoClientTest, HandshakeReadsTheServerLimits) {
  auto s = client_->server();
  ASSERT_TRUE(s.has_value()) << s.error().message;
  EXPECT_GE(s->max_wire_version, 6);
  EXPECT_GT(s->max_bson_object_size, 0);
  EXPECT_GT(s->max_message_size_bytes, s->max_bson_object_size);
  EXPECT_GT(s->max_write_batch_size, 0);
}

TEST_F(MongoClientTest, AClientMadeInCodeWorksAsOneFromAConnectionString) {
  builder ping;
  ping.append_int32("ping", 1);
  // Every setting from code: the test server's, with a pool size and a listener of its own.
  mongo::client_options o;
  static_cast<mongo::client_settings&>(o) = mongo::uri::parse(uri_).value().settings();
  o.max_pool_size = 3;
  std::atomic<int> started{0};
  o.on_command = [&started](const mongo::command_event& e) {
    if (std::holds_alternative<mongo::command_started_event>(e)) ++started;
  };
  auto made = mongo::client::create(std::move(o));
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(made->uri().max_pool_size(), 3u);
  auto r = made->run_command("admin", ping.view());
  EXPECT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(started.load(), 1);
  // A connection string with a setting from code over it.
  mongo::client_options over;
  over.app_name = "oid-from-code";
  auto merged = mongo::client::create(uri_, std::move(over));
  ASSERT_TRUE(merged.has_value()) << merged.error().message;
  EXPECT_EQ(merged->uri().app_name(), "oid-from-code");
  EXPECT_EQ(merged->uri().hosts(), mongo::uri::parse(uri_).value().hosts());
  r = merged->run_command("admin", ping.view());
  EXPECT_TRUE(r.has_value()) << r.error().message;
  // A contradiction from code is refused before anything connects.
  mongo::client_options bad;
  bad.hosts = {mongo::host{mongo::host::kind::ipv4, "127.0.0.1", 0}};
  auto refused = mongo::client::create(std::move(bad));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, mongo::errc::invalid_uri) << refused.error().message;
}

TEST_F(MongoClientTest, CommandEventsCarryTheOperationAndTheServersConnectionId) {
  mongo::client_options o;
  std::mutex m;
  std::vector<mongo::command_event> events;
  o.on_command = [&](const mongo::command_event& e) {
    std::lock_guard lock(m);
    events.push_back(e);
  };
  auto made = mongo::client::create(uri_, std::move(o));
  ASSERT_TRUE(made.has_value()) << made.error().message;
  builder ping;
  ping.append_int32("ping", 1);
  ASSERT_TRUE(made->run_command("admin", ping.view()));
  ASSERT_TRUE(made->run_command("admin", ping.view()));
  auto hello = made->server();
  ASSERT_TRUE(hello.has_value()) << hello.error().message;
  std::lock_guard lock(m);
  ASSERT_EQ(events.size(), 4u);
  const auto& first = std::get<mongo::command_started_event>(events[0]);
  const auto& done = std::get<mongo::command_succeeded_event>(events[1]);
  const auto& second = std::get<mongo::command_started_event>(events[2]);
  EXPECT_GT(first.operation_id, 0);
  EXPECT_EQ(done.operation_id, first.operation_id);
  EXPECT_NE(second.operation_id, first.operation_id) << "another operation";
  EXPECT_EQ(first.connection_id, 1u) << "the pool's first connection";
  // The server's id of the connection, as its handshake gave it.
  EXPECT_EQ(first.server_connection_id, hello->connection_id);
  EXPECT_TRUE(first.server_connection_id.has_value()) << "the server's hello has a connectionId";
  EXPECT_FALSE(first.service_id.has_value()) << "not behind a load balancer";
}

TEST_F(MongoClientTest, RunCommandAndServerErrors) {
  builder ping;
  ping.append_int32("ping", 1);
  auto ok = client_->run_command("admin", ping.view());
  ASSERT_TRUE(ok.has_value()) << ok.error().message;
  builder bogus;
  bogus.append_int32("noSuchCommandForOid", 1);
  auto bad = client_->run_command("admin", bogus.view());
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(bad.error().server.has_value());
  EXPECT_EQ(bad.error().server->code, 59);
  EXPECT_EQ(bad.error().server->code_name, "CommandNotFound");
  EXPECT_FALSE(bad.error().server->message.empty());
}

// What the server stores is the document with its _id first: a new ObjectId in front when it had
// none (the empty document and a large one too), its own moved to the front, or the document as
// it is; each byte for byte what ensure_id makes with the id insert_many reported.
TEST_F(MongoClientTest, InsertManyPutsTheIdFirst) {
  builder late_id;
  late_id.append_int32("n", 2).append_string("_id", "mine").append_bool("b", true);
  builder no_id;
  no_id.append_int32("n", 0).append_string("text", "no _id here");
  builder first_id;
  first_id.append_int32("_id", 7).append_int32("n", 3);
  builder large;  // beyond what bulk_write writes into its shared buffer
  large.append_int32("n", 4).append_string("text", std::string(40'000, 'x'));
  const std::vector<document> docs{std::move(no_id).extract(), document(),
                                   std::move(late_id).extract(), std::move(first_id).extract(),
                                   std::move(large).extract()};
  auto c = coll();
  auto ins = c.insert_many(views(docs));
  ASSERT_TRUE(ins.has_value()) << ins.error().message;
  ASSERT_EQ(ins->ids.size(), docs.size());
  for (std::size_t i = 0; i < docs.size(); ++i) {
    SCOPED_TRACE("document " + std::to_string(i));
    const auto id = ins->ids[i].view().find("_id").value();
    builder filter;
    filter.append_element("_id", id);
    auto found = c.find(filter.view());
    ASSERT_TRUE(found.has_value()) << found.error().message;
    ASSERT_TRUE(found->next().value());
    const document want = id.type() == oid::bson::type::object_id
                              ? oid::bson::ensure_id(docs[i].view(), id.get_object_id().value())
                              : oid::bson::ensure_id(docs[i].view());
    EXPECT_EQ(found->current(), want.view());
  }
}

TEST_F(MongoClientTest, InsertManyGivesIdsAndFindReadsThemBack) {
  const auto docs = numbered_docs(100);
  auto c = coll();
  auto ins = c.insert_many(views(docs));
  ASSERT_TRUE(ins.has_value()) << ins.error().message;
  EXPECT_EQ(ins->inserted, 100);
  ASSERT_EQ(ins->ids.size(), 100u);
  std::set<oid::object_id> ids;
  for (const auto& id : ins->ids) {
    auto e = id.view().find("_id");
    ASSERT_TRUE(e.has_value());
    ids.insert(e->get_object_id().value());
  }
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_EQ(c.count_documents().value(), 100);
  const document even = [] {
    builder b;
    b.append_string("tag", "even");
    return std::move(b).extract();
  }();
  EXPECT_EQ(c.count_documents(even.view()).value(), 50);

  // Sorted descending, skip 5, limit 30, batches of 7: several getMores.
  const document sort = doc1("n", -1), projection = doc1("n", 1);
  mongo::find_options o;
  o.sort = sort.view();
  o.projection = projection.view();
  o.skip = 5;
  o.limit = 30;
  o.batch_size = 7;
  auto cur = c.find({}, o);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_NE(cur->id(), 0);
  const auto got = read_n(*cur);
  ASSERT_EQ(got.size(), 30u);
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], 94 - static_cast<int>(i));
  EXPECT_EQ(cur->id(), 0);

  // The projection left only _id and n.
  mongo::find_options only_n;
  only_n.projection = projection.view();
  auto one = c.find(doc("n", 3), only_n);
  ASSERT_TRUE(one.has_value());
  ASSERT_TRUE(one->next().value());
  EXPECT_FALSE(one->current().contains("tag"));
}

// A cursor over batches of a few hundred kilobytes (several getMores, each reply arriving in
// pieces, its documents validated and indexed as they come): every document as it was inserted,
// byte for byte, in order.
TEST_F(MongoClientTest, ACursorReturnsEveryDocumentAsStoredAcrossBatches) {
  std::vector<document> docs;
  for (int i = 0; i < 2000; ++i) {
    builder b;
    b.append_int32("_id", i).append_string("name", "Zoë " + std::to_string(i));
    b.append_bool("even", i % 2 == 0).append_double("score", i * 0.5);
    b.open_document("sub").append_int64("n", i).append_string("pad", std::string(i % 700, 'p'));
    b.close();
    docs.push_back(std::move(b).extract());
  }
  auto c = coll();
  auto ins = c.insert_many(views(docs));
  ASSERT_TRUE(ins.has_value()) << ins.error().message;
  ASSERT_EQ(ins->inserted, 2000);
  const document by_id = doc1("_id", 1);
  mongo::find_options o;
  o.sort = by_id.view();
  o.batch_size = 600;
  auto cur = c.find({}, o);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  std::size_t n = 0;
  while (true) {
    auto more = cur->next();
    ASSERT_TRUE(more.has_value()) << more.error().message;
    if (!*more) break;
    ASSERT_LT(n, docs.size());
    EXPECT_EQ(cur->current(), docs[n].view()) << "document " << n;
    ++n;
  }
  EXPECT_EQ(n, docs.size());
  EXPECT_EQ(cur->id(), 0);
}

TEST_F(MongoClientTest, CursorDroppedEarlyIsKilledAndThePoolGoesOn) {
  const auto docs = numbered_docs(50);
  auto c = coll();
  ASSERT_TRUE(c.insert_many(views(docs)).has_value());
  mongo::find_options o;
  o.batch_size = 5;
  for (int round = 0; round < 3; ++round) {
    auto cur = c.find({}, o);
    ASSERT_TRUE(cur.has_value());
    ASSERT_TRUE(cur->next().value());
    EXPECT_NE(cur->id(), 0);
  }  // each destructor sends killCursors on its connection
  EXPECT_EQ(c.count_documents().value(), 50);
}

TEST_F(MongoClientTest, ADatabaseHandleListsCreatesAndDropsItsCollections) {
  auto db = client_->database(db_);
  EXPECT_EQ(db.name(), db_);
  auto none = db.list_collection_names();
  ASSERT_TRUE(none.has_value()) << none.error().message;
  EXPECT_TRUE(none->empty());

  ASSERT_TRUE(db.create_collection("made").has_value());
  auto again = db.create_collection("made");  // NamespaceExists
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(db.collection("written").insert_one(doc("n", 1)).has_value());
  auto names = db.list_collection_names();
  ASSERT_TRUE(names.has_value()) << names.error().message;
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"made", "written"}));
  // The filter goes to the server; the handle's collection is the client's.
  builder f;
  f.append_string("name", "written");
  auto filtered = db.list_collection_names(f.view());
  ASSERT_TRUE(filtered.has_value()) << filtered.error().message;
  EXPECT_EQ(*filtered, std::vector<std::string>{"written"});
  EXPECT_EQ(client_->collection(db_, "written").count_documents().value(), 1);

  builder ping;
  ping.append_int32("ping", 1);
  auto pong = db.run_command(ping.view());
  ASSERT_TRUE(pong.has_value()) << pong.error().message;

  ASSERT_TRUE(db.drop().has_value());
  auto gone = db.list_collection_names();
  ASSERT_TRUE(gone.has_value()) << gone.error().message;
  EXPECT_TRUE(gone->empty());
  EXPECT_TRUE(db.drop().has_value());  // dropping what is gone is not an error
}

TEST_F(MongoClientTest, InsertOneReturnsTheDocumentsId) {
  auto c = coll();
  auto given = c.insert_one(doc("_id", 7));
  ASSERT_TRUE(given.has_value()) << given.error().message;
  EXPECT_EQ(given->inserted, 1);
  EXPECT_EQ(given->id.view(), doc("_id", 7));
  auto made = c.insert_one(doc("n", 1));  // no _id: a new ObjectId
  ASSERT_TRUE(made.has_value()) << made.error().message;
  const auto id = made->id.view().find("_id");
  ASSERT_TRUE(id.has_value());
  EXPECT_EQ(id->type(), oid::bson::type::object_id);
  auto found = c.find_one(made->id.view());
  ASSERT_TRUE(found.has_value()) << found.error().message;
  EXPECT_TRUE(found->has_value());
}

TEST_F(MongoClientTest, UniqueIndexAndDuplicateKeys) {
  auto c = coll();
  mongo::index_options unique;
  unique.unique = true;
  auto name = c.create_index(doc("n", 1), unique);
  ASSERT_TRUE(name.has_value()) << name.error().message;
  EXPECT_EQ(*name, "n_1");
  ASSERT_TRUE(c.insert_one(doc("n", 1)).has_value());

  auto dup = c.insert_one(doc("n", 1));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);
  ASSERT_EQ(dup.error().write_errors.size(), 1u);
  EXPECT_EQ(dup.error().write_errors[0].code, 11000);
  EXPECT_EQ(dup.error().write_errors[0].index, 0u);
  EXPECT_NE(dup.error().write_errors[0].message.find("duplicate key"), std::string::npos);

  // Ordered: stops at the duplicate (index 1). Unordered: skips it and inserts the rest.
  std::vector<document> batch;
  for (int n : {10, 1, 11, 12}) batch.push_back(doc1("n", n));
  auto ordered = c.insert_many(views(batch));
  ASSERT_FALSE(ordered.has_value());
  EXPECT_EQ(ordered.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(ordered.error().written, 1);
  ASSERT_EQ(ordered.error().write_errors.size(), 1u);
  EXPECT_EQ(ordered.error().write_errors[0].index, 1u);
  std::vector<document> batch2;
  for (int n : {20, 1, 21, 10}) batch2.push_back(doc1("n", n));
  mongo::insert_options unordered;
  unordered.ordered = false;
  auto all = c.insert_many(views(batch2), unordered);
  ASSERT_FALSE(all.has_value());
  EXPECT_EQ(all.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(all.error().written, 2);
  ASSERT_EQ(all.error().write_errors.size(), 2u);
  EXPECT_EQ(all.error().write_errors[0].index, 1u);
  EXPECT_EQ(all.error().write_errors[1].index, 3u);
  EXPECT_EQ(c.count_documents().value(), 4);  // 1, 10, 20, 21
}

TEST_F(MongoClientTest, UpdatesReplacesAndDeletes) {
  auto c = coll();
  ASSERT_TRUE(c.insert_many(views(numbered_docs(10))).has_value());
  builder set;
  set.open_document("$set").append_string("tag", "seen").close();
  const document odd = [] {
    builder b;
    b.append_string("tag", "odd");
    return std::move(b).extract();
  }();
  auto one = c.update_one(odd.view(), set.view());
  ASSERT_TRUE(one.has_value()) << one.error().message;
  EXPECT_EQ(one->matched, 1);
  EXPECT_EQ(one->modified, 1);
  auto many = c.update_many(odd.view(), set.view());
  ASSERT_TRUE(many.has_value());
  EXPECT_EQ(many->matched, 4);
  EXPECT_EQ(many->modified, 4);

  mongo::write_options upsert;
  upsert.upsert = true;
  auto up = c.update_one(doc("n", 100), set.view(), upsert);
  ASSERT_TRUE(up.has_value()) << up.error().message;
  EXPECT_EQ(up->matched, 0);
  ASSERT_TRUE(up->upserted_id.has_value());
  auto rep = c.replace_one(doc("n", 0), doc("n", 1000));
  ASSERT_TRUE(rep.has_value()) << rep.error().message;
  EXPECT_EQ(rep->matched, 1);
  EXPECT_EQ(c.count_documents(doc("n", 1000)).value(), 1);
  auto rep_up = c.replace_one(doc("n", 2000), doc("n", 2001), upsert);
  ASSERT_TRUE(rep_up.has_value());
  EXPECT_TRUE(rep_up->upserted_id.has_value());

  EXPECT_EQ(c.update_one(odd.view(), doc("n", 1)).error().code, errc::invalid_value);
  EXPECT_EQ(c.replace_one(odd.view(), set.view()).error().code, errc::invalid_value);

  EXPECT_EQ(c.count_documents().value(), 12);
  EXPECT_EQ(c.delete_one(doc("n", 1000)).value(), 1);
  const document seen = [] {
    builder b;
    b.append_string("tag", "seen");
    return std::move(b).extract();
  }();
  EXPECT_EQ(c.delete_many(seen.view()).value(), 6);  // five odd ones and the upserted n: 100
  EXPECT_EQ(c.count_documents().value(), 5);
}

TEST_F(MongoClientTest, UnacknowledgedWritesAndTheRepliesFerretDbSendsAnyway) {
  auto c = coll();
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  for (int i = 0; i < 20; ++i) {
    auto r = c.insert_one(doc("n", i), w0);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->inserted, 0);                          // nothing was read back
    EXPECT_TRUE(r->id.view().find("_id").has_value());  // the id was made all the same
  }
  // An acknowledged command on the same pooled connection still gets its own reply, whether or
  // not the server answered the fire-and-forget messages.
  auto n = c.count_documents();
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, 20);
}

// Fire-and-forget batches sent just before the client goes away all arrive: the connection is
// closed only after the server has read them. (Closed at once, with FerretDB's unrequested
// replies unread, the socket was reset and FerretDB dropped the batches it had not read yet.)
TEST_F(MongoClientTest, UnacknowledgedBatchesAllArriveWhenTheClientCloses) {
  constexpr int count = 5000;
  {
    auto other = mongo::client::create(uri_);
    ASSERT_TRUE(other.has_value()) << other.error().message;
    mongo::insert_options w0;
    w0.write_concern = mongo::write_concern::unacknowledged();
    const auto docs = numbered_docs(count);
    std::vector<document_view> views;
    for (const auto& d : docs) views.push_back(d.view());
    auto r = other->collection(db_, "w0").insert_many(views, w0);
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->ids.size(), std::size_t{count});
  }  // the client, its pool and its connection close here
  auto n = coll("w0").count_documents();
  ASSERT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(*n, count);
}

TEST_F(MongoClientTest, ListDatabasesCollectionsAndDrop) {
  auto c = coll("listed");
  ASSERT_TRUE(c.insert_one(doc("n", 1)).has_value());
  auto dbs = client_->list_databases();
  ASSERT_TRUE(dbs.has_value()) << dbs.error().message;
  bool found = false;
  for (const auto& d : *dbs) {
    if (auto n = d.view().find("name"); n && n->get_string().value_or("") == db_) found = true;
  }
  EXPECT_TRUE(found);
  auto colls = client_->list_collections(db_);
  ASSERT_TRUE(colls.has_value()) << colls.error().message;
  ASSERT_EQ(colls->size(), 1u);
  EXPECT_EQ((*colls)[0].view().find("name")->get_string().value(), "listed");
  ASSERT_TRUE(c.drop().has_value());
  ASSERT_TRUE(c.drop().has_value());  // already gone: not an error
  EXPECT_TRUE(client_->list_collections(db_).value().empty());
}

TEST_F(MongoClientTest, FindCreatedBetweenUsesTheIdTimes) {
  using namespace std::chrono;
  const sys_seconds oct{sys_days{year{2010} / 10 / 1}}, nov{sys_days{year{2010} / 11 / 1}};
  std::vector<document> docs;
  int i = 0;
  for (const sys_seconds t : {oct - seconds(1), oct, oct + days(15), nov - seconds(1), nov}) {
    oid::object_id::bytes_type b = oid::object_id::min_for_time(t).value().bytes();
    b[11] = static_cast<std::uint8_t>(i);
    builder d;
    d.append_object_id("_id", oid::object_id(b)).append_int32("n", i++);
    docs.push_back(std::move(d).extract());
  }
  auto c = coll();
  ASSERT_TRUE(c.insert_many(views(docs)).has_value());
  const document sort = doc1("n", 1);
  mongo::find_options o;
  o.sort = sort.view();
  auto cur = c.find_created_between(oct, nov, {}, o);
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(read_n(*cur), (std::vector<std::int32_t>{1, 2, 3}));
  builder filter;
  filter.open_document("n").append_int32("$gt", 1).close();
  auto both = c.find_created_between(oct, nov, filter.view(), o);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(read_n(*both), (std::vector<std::int32_t>{2, 3}));
}

TEST_F(MongoClientTest, OneClientSharedByThreadsWithABoundedPool) {
  auto shared = mongo::client::create(uri_ + (uri_.find('?') == std::string::npos ? "?" : "&") +
                                      "maxPoolSize=2");
  ASSERT_TRUE(shared.has_value()) << shared.error().message;
  auto c = shared->collection(db_, "threads");
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20; ++i) {
        const document d = doc1("n", t * 100 + i);
        if (!c.insert_one(d.view()).has_value()) ++failures;
        if (!c.count_documents().has_value()) ++failures;
        // A cursor per find: each takes the client's spare receive buffer and gives its own back
        // when it ends (client_state::keep_spare_buffer), from six threads at once.
        auto found = c.find(d.view());
        int n = 0;
        while (found.has_value()) {
          auto more = found->next();
          if (!more.has_value() || !*more) break;
          ++n;
        }
        if (n != 1) ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(c.count_documents().value(), 120);
}

}  // namespace
