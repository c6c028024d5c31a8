// The defaults of the handles against the real server (MONGODB_URI, and MONGODB_RS_URI for read
// preferences, which a server used directly is not sent): the write concern, read concern and
// read preference a database or collection is given are sent with its operations, an operation's
// own winning, and FerretDB takes them. mongo_defaults_test.cpp checks where reads go and what a
// transaction sends, against a scripted replica set.
#include <gtest/gtest.h>

#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "support/documents.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

// A client of `uri` that keeps every command it starts.
struct observed {
  std::mutex m;
  std::vector<document> started;
  std::optional<mongo::client> client;

  explicit observed(const std::string& uri) {
    mongo::client_options o;
    o.on_command = [this](const mongo::command_event& e) {
      if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
        std::lock_guard lock(m);
        started.push_back(s->command);
      }
    };
    client.emplace(mongo::client::create(uri, std::move(o)).value());
  }
  // `key` of the last started command named `name`, as JSON ("(none)" without it, "(no
  // command)" when none was started).
  std::string field(std::string_view name, std::string_view key) {
    std::lock_guard lock(m);
    for (auto it = started.rbegin(); it != started.rend(); ++it) {
      const auto v = it->view();
      if (v.begin() == v.end() || v.begin()->key() != name) continue;
      const auto e = v.find(key);
      if (!e) return "(none)";
      builder b;
      b.append_element("v", *e);
      return oid::bson::to_json(b.view());
    }
    return "(no command)";
  }
};

class MongoDefaultsServerTest : public server_test {};

TEST_F(MongoDefaultsServerTest, AHandlesWriteConcernIsSentAndTheServerTakesIt) {
  observed o(uri_);
  mongo::write_concern journaled;
  journaled.w = 1;
  journaled.journal = true;
  auto db = o.client->database(db_).with_write_concern(journaled);
  auto c = db.collection("c");
  const document one = json(R"({"_id": 1, "x": 1})");
  auto inserted = c.insert_one(one.view());
  ASSERT_TRUE(inserted) << inserted.error().message;
  EXPECT_EQ(o.field("insert", "writeConcern"), R"({"v":{"w":1,"j":true}})");
  const document filter = json(R"({"_id": 1})");
  const document set = json(R"({"$set": {"x": 2}})");
  auto updated = c.update_one(filter.view(), set.view());
  ASSERT_TRUE(updated) << updated.error().message;
  EXPECT_EQ(updated->modified, 1);
  EXPECT_EQ(o.field("update", "writeConcern"), R"({"v":{"w":1,"j":true}})");
  const document keys = json(R"({"x": 1})");
  auto index = c.create_index(keys.view());
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(o.field("createIndexes", "writeConcern"), R"({"v":{"w":1,"j":true}})");

  // A collection's own over its database's, an operation's own over both.
  mongo::write_concern w1;
  w1.w = 1;
  auto c1 = c.with_write_concern(w1);
  auto deleted = c1.delete_one(filter.view());
  ASSERT_TRUE(deleted) << deleted.error().message;
  EXPECT_EQ(*deleted, 1);
  EXPECT_EQ(o.field("delete", "writeConcern"), R"({"v":{"w":1}})");
  mongo::insert_options majority;
  majority.write_concern.w_tag = "majority";
  auto again = c1.insert_one(one.view(), majority);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(o.field("insert", "writeConcern"), R"({"v":{"w":"majority"}})");

  auto dropped = c.drop();
  ASSERT_TRUE(dropped) << dropped.error().message;
  EXPECT_EQ(o.field("drop", "writeConcern"), R"({"v":{"w":1,"j":true}})");
  auto made = db.create_collection("d");
  ASSERT_TRUE(made) << made.error().message;
  EXPECT_EQ(o.field("create", "writeConcern"), R"({"v":{"w":1,"j":true}})");
}

TEST_F(MongoDefaultsServerTest, AnUnacknowledgedCollectionsWritesAreAppliedUnseen) {
  observed o(uri_);
  auto c =
      o.client->collection(db_, "c").with_write_concern(mongo::write_concern::unacknowledged());
  const document one = json(R"({"_id": 1})");
  auto r = c.insert_one(one.view());
  ASSERT_TRUE(r) << r.error().message;
  EXPECT_EQ(r->inserted, 0) << "nothing is read back";
  EXPECT_EQ(o.field("insert", "writeConcern"), R"({"v":{"w":0}})");
  EXPECT_EQ(o.field("insert", "lsid"), "(none)") << "no session for an unacknowledged write";
  // A duplicate goes unseen too.
  ASSERT_TRUE(c.insert_one(one.view()));
  // The server applies it: an acknowledged read finds it (the server may take a moment).
  auto acknowledged = c.with_write_concern({});
  std::int64_t n = 0;
  for (int i = 0; i < 100 && n == 0; ++i) {
    auto counted = acknowledged.count_documents();
    ASSERT_TRUE(counted) << counted.error().message;
    n = *counted;
    if (n == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(n, 1);
}

TEST_F(MongoDefaultsServerTest, AHandlesReadConcernIsSentAndTheServerTakesIt) {
  observed o(uri_);
  auto db = o.client->database(db_).with_read_concern({.level = "local"});
  auto c = db.collection("c");
  const document one = json(R"({"_id": 1})");
  ASSERT_TRUE(c.insert_one(one.view()));
  EXPECT_EQ(o.field("insert", "readConcern"), "(none)") << "writes take none";
  auto found = c.find_one();
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(o.field("find", "readConcern"), R"({"v":{"level":"local"}})");
  auto counted = c.with_read_concern({.level = "available"}).count_documents();
  ASSERT_TRUE(counted) << counted.error().message;
  EXPECT_EQ(*counted, 1);
  EXPECT_EQ(o.field("aggregate", "readConcern"), R"({"v":{"level":"available"}})");
}

// FerretDB as a one-member replica set: a read preference is sent (to a server used directly it
// is not) and the server answers.
TEST(MongoDefaultsReplicaSetTest, AHandlesReadPreferenceIsSentAndTheServerAnswers) {
  std::string uri;
  OID_SERVER_URI_OR_SKIP("MONGODB_RS_URI", uri);
  observed o(uri);
  mongo::read_preference secondary_preferred;
  secondary_preferred.mode = mongo::read_mode::secondary_preferred;
  const std::string db_name = "oid_test_defaults_rs";
  auto db = o.client->database(db_name).with_read_preference(secondary_preferred);
  auto c = db.collection("c");
  const document one = json(R"({"_id": 1})");
  ASSERT_TRUE(c.insert_one(one.view()));
  EXPECT_EQ(o.field("insert", "$readPreference"), "(none)");
  auto found = c.find_one();
  ASSERT_TRUE(found) << found.error().message;
  ASSERT_TRUE(found->has_value());
  EXPECT_EQ(o.field("find", "$readPreference"), R"({"v":{"mode":"secondaryPreferred"}})");
  auto counted = c.count_documents();
  ASSERT_TRUE(counted) << counted.error().message;
  EXPECT_EQ(*counted, 1);
  EXPECT_EQ(o.field("aggregate", "$readPreference"), R"({"v":{"mode":"secondaryPreferred"}})");
  auto names = db.list_collection_names();
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(o.field("listCollections", "$readPreference"), "(none)")
      << "listCollections runs on the primary whatever the handle says";
  // The operation's own: primary sends none.
  auto on_primary = c.find_one({}, {.read_preference = mongo::read_preference{}});
  ASSERT_TRUE(on_primary) << on_primary.error().message;
  EXPECT_EQ(o.field("find", "$readPreference"), "(none)");
  ASSERT_TRUE(db.drop());
}

}  // namespace
