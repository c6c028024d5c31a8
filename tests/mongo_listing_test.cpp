// Listing databases and collections as the enumerate databases and enumerate collections
// specifications say: what listDatabases and listCollections carry (nameOnly,
// authorizedDatabases, authorizedCollections, comment, batchSize) as a scripted server sees them,
// and what the names come back as. mongo_listing_server_test.cpp runs them against FerretDB.
#include <gtest/gtest.h>

#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;

// The command without the fields every command carries ($db, lsid, $clusterTime, ...), as JSON.
std::string sent(const recorded& r) {
  builder b;
  for (const auto& e : r.body.view()) {
    const auto k = e.key();
    if (k == "$db" || k == "lsid" || k == "$clusterTime" || k == "$readPreference") continue;
    b.append_element(e);
  }
  return oid::bson::to_json(b.view());
}

// Two databases (one without a name when `broken`) and one collection, in one batch.
document answer(const std::string& name, bool broken) {
  if (name == "listDatabases") {
    return json(broken ? R"({"databases": [{"name": "a"}, {"sizeOnDisk": 1}], "ok": 1})"
                       : R"({"databases": [{"name": "a"}, {"name": "b"}], "ok": 1})");
  }
  if (name == "listCollections") {
    return json(R"({"cursor": {"id": 0, "ns": "db.$cmd.listCollections",
                    "firstBatch": [{"name": "x", "type": "collection"}]}, "ok": 1})");
  }
  return json(R"({"ok": 1})");
}

TEST(MongoListingTest, ListDatabasesSendsItsOptionsAndNamesAskForNamesOnly) {
  recording_server server(
      [](const std::string& name, document_view, std::size_t) { return answer(name, false); });
  auto client = server.client();
  auto names = client.list_database_names();
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  auto all = client.list_databases();
  ASSERT_TRUE(all) << all.error().message;
  EXPECT_EQ(all->size(), 2u);
  const document filter = json(R"({"name": {"$regex": "^a"}})");
  ASSERT_TRUE(client.list_databases(
      filter.view(),
      {.name_only = false, .authorized_databases = true, .comment = "who has what"}));
  ASSERT_TRUE(client.list_database_names({}, {.name_only = false, .authorized_databases = false}));
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(sent(seen[0]), R"({"listDatabases":1,"nameOnly":true})");
  EXPECT_EQ(sent(seen[1]), R"({"listDatabases":1})") << "nothing the caller did not ask for";
  EXPECT_EQ(sent(seen[2]),
            R"({"listDatabases":1,"filter":{"name":{"$regex":"^a"}},"nameOnly":false,)"
            R"("authorizedDatabases":true,"comment":"who has what"})");
  EXPECT_EQ(sent(seen[3]), R"({"listDatabases":1,"nameOnly":true,"authorizedDatabases":false})")
      << "list_database_names asks for names only whatever name_only says";
}

TEST(MongoListingTest, ADatabaseWithoutANameIsAnUnexpectedReply) {
  recording_server server(
      [](const std::string& name, document_view, std::size_t) { return answer(name, true); });
  auto client = server.client();
  auto names = client.list_database_names();
  ASSERT_FALSE(names);
  EXPECT_EQ(names.error().code, mongo::errc::unexpected_reply);
}

TEST(MongoListingTest, ListCollectionsSendsItsOptionsAndNamesAskForNamesOnlyWhenTheFilterAllows) {
  recording_server server(
      [](const std::string& name, document_view, std::size_t) { return answer(name, false); });
  auto client = server.client();
  auto db = client.database("db");
  auto names = db.list_collection_names();
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_EQ(*names, std::vector<std::string>{"x"});
  const document by_name = json(R"({"name": "x"})");
  ASSERT_TRUE(db.list_collection_names(by_name.view(), {.authorized_collections = true}));
  // nameOnly applies before the filter: a filter on the type needs whole documents.
  const document by_type = json(R"({"type": "view", "name": "x"})");
  ASSERT_TRUE(db.list_collection_names(by_type.view()));
  auto specs = db.list_collections(
      {},
      {.name_only = true, .authorized_collections = false, .batch_size = 5, .comment = "listing"});
  ASSERT_TRUE(specs) << specs.error().message;
  ASSERT_EQ(specs->size(), 1u);
  EXPECT_EQ(oid::bson::to_json((*specs)[0].view()), R"({"name":"x","type":"collection"})");
  ASSERT_TRUE(db.list_collections());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 5u);
  EXPECT_EQ(sent(seen[0]), R"({"listCollections":1,"nameOnly":true,"cursor":{}})");
  EXPECT_EQ(sent(seen[1]), R"({"listCollections":1,"filter":{"name":"x"},"nameOnly":true,)"
                           R"("authorizedCollections":true,"cursor":{}})");
  EXPECT_EQ(sent(seen[2]), R"({"listCollections":1,"filter":{"type":"view","name":"x"},)"
                           R"("cursor":{}})");
  EXPECT_EQ(sent(seen[3]), R"({"listCollections":1,"nameOnly":true,"authorizedCollections":false,)"
                           R"("cursor":{"batchSize":5},"comment":"listing"})");
  EXPECT_EQ(sent(seen[4]), R"({"listCollections":1,"cursor":{}})");
}

}  // namespace
