// The defaults of the handles: read preference, read concern and write concern set on a database
// or a collection (`with_read_preference`, `with_read_concern`, `with_write_concern`), inherited
// client -> database -> collection, an operation's own options winning, and inside a transaction
// the transaction's. Against the scripted replica set (support/script_replica_set.hpp), where a
// read that goes to a secondary can be seen (FerretDB has no secondaries), and a scripted server
// for unacknowledged writes (moreToCome). mongo_defaults_server_test.cpp checks FerretDB takes
// them.
#include <gtest/gtest.h>

#include <deque>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/bulk_write.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/session.hpp>
#include <string>
#include <utility>
#include <vector>

#include "support/script_replica_set.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

document json(std::string_view text) { return oid::bson::from_json(text).value(); }

// `key` of `d` as {"v": ...} JSON, or "(none)".
std::string json_of(document_view d, std::string_view key) {
  const auto e = d.find(key);
  if (!e) return "(none)";
  builder b;
  b.append_element("v", *e);
  return oid::bson::to_json(b.view());
}

mongo::read_preference mode(mongo::read_mode m) {
  mongo::read_preference p;
  p.mode = m;
  return p;
}

mongo::write_concern w(std::int32_t n) {
  mongo::write_concern c;
  c.w = n;
  return c;
}

mongo::write_concern majority() {
  mongo::write_concern c;
  c.w_tag = "majority";
  return c;
}

struct fixture : ::testing::Test {
  script_replica_set rs{};
  mongo::client client = mongo::client::create(rs.uri()).value();
  std::deque<document> docs;

  document_view doc(std::int32_t id) {
    builder b;
    b.append_int32("_id", id).append_int32("x", 1);
    return docs.emplace_back(std::move(b).extract()).view();
  }
  // The last command named `name` the set saw.
  seen_command last(std::string_view name) {
    const auto all = rs.seen(name);
    EXPECT_FALSE(all.empty()) << "no " << name;
    return all.empty() ? seen_command{} : all.back();
  }
  // `key` of the last command named `name`, as json_of shows it.
  std::string field_of(std::string_view name, std::string_view key) {
    const auto s = last(name);
    return json_of(s.body.view(), key);
  }
  // The writeConcern of the last command named `name`.
  std::string wc_of(std::string_view name) { return field_of(name, "writeConcern"); }
  // The document `text`, kept for the test's duration.
  document_view j(std::string_view text) { return docs.emplace_back(json(text)).view(); }
};

using MongoDefaultsTest = fixture;

TEST_F(MongoDefaultsTest, ReadPreferenceComesFromTheOperationTheCollectionOrTheDatabase) {
  const auto secondary = mode(mongo::read_mode::secondary);
  auto db = client.database("db").with_read_preference(secondary);
  EXPECT_EQ(db.read_preference(), secondary);
  EXPECT_EQ(client.database("db").read_preference(), mongo::read_preference{})
      << "the client's handle is unchanged";
  auto c = db.collection("c");
  EXPECT_EQ(c.read_preference(), secondary) << "a collection inherits its database's";
  ASSERT_TRUE(rs.documents() == 0);

  // Every read of the collection goes to a secondary and says so.
  ASSERT_TRUE(c.find_one());
  ASSERT_TRUE(c.count_documents());
  ASSERT_TRUE(c.count());
  ASSERT_TRUE(c.estimated_document_count());
  ASSERT_TRUE(c.distinct("x"));
  const int primary = rs.primary();
  for (const auto* name : {"find", "aggregate", "count", "distinct"}) {
    for (const auto& s : rs.seen(name)) {
      SCOPED_TRACE(name);
      EXPECT_EQ(s.read_preference, "secondary");
      EXPECT_NE(s.member, primary);
    }
  }
  EXPECT_EQ(rs.seen("count").size(), 2u);

  // The operation's own wins; a collection's own wins over its database's.
  rs.forget();
  ASSERT_TRUE(c.find_one({}, {.read_preference = mode(mongo::read_mode::nearest)}));
  EXPECT_EQ(last("find").read_preference, "nearest");
  auto on_primary = c.with_read_preference({});
  EXPECT_EQ(db.collection("c").read_preference(), secondary) << "with_ makes a copy";
  ASSERT_TRUE(on_primary.find_one());
  EXPECT_EQ(last("find").read_preference, "-");
  EXPECT_EQ(last("find").member, primary);

  // The listings run on the primary whatever the handle says (the enumerate collections and
  // databases specifications' rule for replica sets).
  ASSERT_TRUE(c.list_indexes());
  EXPECT_EQ(last("listIndexes").member, primary);
  EXPECT_EQ(last("listIndexes").read_preference, "-");
  ASSERT_TRUE(db.list_collections());
  EXPECT_EQ(last("listCollections").member, primary);
  ASSERT_TRUE(client.list_databases());
  EXPECT_EQ(last("listDatabases").member, primary);

  // Writes go to the primary whatever the handle reads from; run_command does not inherit it.
  ASSERT_TRUE(c.insert_one(doc(1)));
  EXPECT_EQ(last("insert").member, primary);
  ASSERT_TRUE(db.run_command(j(R"({"ping": 1})")));
  EXPECT_EQ(last("ping").member, primary);
  EXPECT_EQ(last("ping").read_preference, "-");
}

TEST_F(MongoDefaultsTest, ReadConcernComesFromTheOperationTheCollectionTheDatabaseOrTheClient) {
  auto by_uri = mongo::client::create(rs.uri("&readConcernLevel=majority")).value();
  auto db = by_uri.database("db");
  EXPECT_EQ(db.read_concern().level, "majority");
  ASSERT_TRUE(db.collection("c").find_one());
  EXPECT_EQ(field_of("find", "readConcern"), R"({"v":{"level":"majority"}})");
  auto local_db = db.with_read_concern({.level = "local"});
  ASSERT_TRUE(local_db.collection("c").count_documents());
  EXPECT_EQ(field_of("aggregate", "readConcern"), R"({"v":{"level":"local"}})");
  // A collection's empty read concern is the server's default: none sent.
  ASSERT_TRUE(local_db.collection("c").with_read_concern({}).find_one());
  EXPECT_EQ(field_of("find", "readConcern"), "(none)");
  mongo::read_options o;
  o.read_concern = mongo::read_concern{"available"};
  ASSERT_TRUE(local_db.collection("c").distinct("x", {}, o));
  EXPECT_EQ(field_of("distinct", "readConcern"), R"({"v":{"level":"available"}})");
}

TEST_F(MongoDefaultsTest, WriteConcernComesFromTheOperationTheCollectionTheDatabaseOrTheClient) {
  auto by_uri = mongo::client::create(rs.uri("&w=majority")).value();
  auto db = by_uri.database("db");
  ASSERT_TRUE(db.collection("c").insert_one(doc(1)));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"w":"majority"}})") << "the client's, inherited";

  auto db2 = db.with_write_concern(w(2));
  EXPECT_EQ(db2.write_concern().w, 2);
  auto c = db2.collection("c");
  ASSERT_TRUE(c.insert_one(doc(2)));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"w":2}})") << "the database's";

  mongo::write_concern journaled;
  journaled.journal = true;
  auto cj = c.with_write_concern(journaled);
  ASSERT_TRUE(cj.insert_many(std::vector<document_view>{doc(3), doc(4)}));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"j":true}})") << "the collection's own";
  ASSERT_TRUE(cj.update_one(j(R"({"_id": 3})"), j(R"({"$set": {"y": 1}})")));
  EXPECT_EQ(wc_of("update"), R"({"v":{"j":true}})");
  ASSERT_TRUE(cj.delete_many(j(R"({"_id": 4})")));
  EXPECT_EQ(wc_of("delete"), R"({"v":{"j":true}})");
  ASSERT_TRUE(cj.find_one_and_delete(j(R"({"_id": 3})")));
  EXPECT_EQ(wc_of("findAndModify"), R"({"v":{"j":true}})");
  const mongo::write_model models[] = {mongo::insert_one_model{doc(5)}};
  ASSERT_TRUE(cj.bulk_write(models));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"j":true}})");

  // The operation's own wins.
  mongo::insert_options one;
  one.write_concern = w(1);
  ASSERT_TRUE(cj.insert_one(doc(6), one));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"w":1}})");

  // The commands that write send the handle's: drop, rename, the index commands, create and
  // dropDatabase. An aggregation writes with $out only.
  ASSERT_TRUE(cj.create_index(j(R"({"x": 1})")));
  EXPECT_EQ(wc_of("createIndexes"), R"({"v":{"j":true}})");
  ASSERT_TRUE(cj.drop_index("x_1"));
  EXPECT_EQ(wc_of("dropIndexes"), R"({"v":{"j":true}})");
  const std::vector<document_view> out = {j(R"({"$out": "d"})")};
  ASSERT_TRUE(cj.aggregate(out));
  EXPECT_EQ(wc_of("aggregate"), R"({"v":{"j":true}})");
  ASSERT_TRUE(cj.aggregate(std::vector<document_view>{j(R"({"$match": {}})")}));
  EXPECT_EQ(wc_of("aggregate"), "(none)");
  ASSERT_TRUE(cj.drop());
  EXPECT_EQ(wc_of("drop"), R"({"v":{"j":true}})");
  ASSERT_TRUE(cj.rename("e"));
  EXPECT_EQ(wc_of("renameCollection"), R"({"v":{"j":true}})");
  ASSERT_TRUE(db2.create_collection("f"));
  EXPECT_EQ(wc_of("create"), R"({"v":{"w":2}})");
  ASSERT_TRUE(db2.create_collection("g", j(R"({"writeConcern": {"w": 1}})")));
  EXPECT_EQ(wc_of("create"), R"({"v":{"w":1}})") << "the options' own, not twice";
  ASSERT_TRUE(db2.drop());
  EXPECT_EQ(wc_of("dropDatabase"), R"({"v":{"w":2}})");

  // run_command sends the command as given.
  ASSERT_TRUE(db2.run_command(j(R"({"ping": 1})")));
  EXPECT_EQ(wc_of("ping"), "(none)");
}

TEST_F(MongoDefaultsTest, InsideATransactionTheTransactionsConcernsWin) {
  auto c = client.collection("db", "c")
               .with_write_concern(majority())
               .with_read_concern({.level = "majority"})
               .with_read_preference(mode(mongo::read_mode::secondary));
  auto s = client.start_session().value();
  auto bound = c.with_session(s);
  EXPECT_EQ(bound.write_concern().w_tag, "majority") << "with_session keeps the defaults";
  ASSERT_TRUE(s.start_transaction({.read_concern = mongo::read_concern{"snapshot"}}));
  ASSERT_TRUE(bound.insert_one(doc(1)));
  ASSERT_TRUE(bound.find_one());
  ASSERT_TRUE(bound.drop_index("x_1"));
  ASSERT_TRUE(s.commit_transaction());
  const auto insert = last("insert").body;
  EXPECT_EQ(json_of(insert.view(), "writeConcern"), "(none)");
  EXPECT_EQ(json_of(insert.view(), "readConcern"), R"({"v":{"level":"snapshot"}})")
      << "the transaction's, on its first command";
  const auto find = last("find");
  EXPECT_EQ(json_of(find.body.view(), "readConcern"), "(none)");
  EXPECT_EQ(find.member, rs.primary()) << "the transaction reads from the primary";
  EXPECT_EQ(json_of(find.body.view(), "autocommit"), R"({"v":false})");
  EXPECT_EQ(wc_of("dropIndexes"), "(none)");
  EXPECT_NE(wc_of("commitTransaction"), R"({"v":{"w":"majority"}})")
      << "the commit carries the transaction's, which comes from the client, not the collection";

  // After the transaction, the collection's own again.
  ASSERT_TRUE(bound.insert_one(doc(2)));
  EXPECT_EQ(wc_of("insert"), R"({"v":{"w":"majority"}})");
  ASSERT_TRUE(bound.find_one());
  EXPECT_EQ(last("find").read_preference, "secondary");
}

TEST(MongoDefaultsUnacknowledgedTest, AnUnacknowledgedCollectionSendsWritesWithMoreToCome) {
  // The server answers only the commands sent without moreToCome: a w: 0 one it is asked to
  // answer was sent expecting a reply.
  int answered_unacknowledged = 0;
  recording_server server([&](const std::string&, document_view body, std::size_t) {
    if (json_of(body, "writeConcern") == R"({"v":{"w":0}})") ++answered_unacknowledged;
    return json(R"({"n": 1, "ok": 1})");
  });
  auto client = server.client();
  auto c = client.collection("db", "c").with_write_concern(mongo::write_concern::unacknowledged());
  const document d = json(R"({"_id": 1})");
  auto r = c.insert_one(d.view());
  ASSERT_TRUE(r) << r.error().message;
  // The client read no reply: the insert is recorded unanswered, with w: 0; a later
  // acknowledged command on the same connection gets its own reply.
  mongo::insert_options acknowledged;
  acknowledged.write_concern = w(1);
  const document d2 = json(R"({"_id": 2})");
  auto r2 = c.insert_one(d2.view(), acknowledged);
  ASSERT_TRUE(r2) << r2.error().message;
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(json_of(seen[0].body.view(), "writeConcern"), R"({"v":{"w":0}})");
  EXPECT_EQ(answered_unacknowledged, 0) << "the w: 0 insert was sent without moreToCome";
  EXPECT_EQ(r->inserted, 0) << "nothing is known of an unacknowledged write";
  EXPECT_EQ(r2->inserted, 1);
  EXPECT_EQ(json_of(seen[1].body.view(), "writeConcern"), R"({"v":{"w":1}})");
}

}  // namespace
