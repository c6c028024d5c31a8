// Listing databases and collections against the real server (MONGODB_URI; FerretDB under
// scripts/test.sh): names only, the authorized ones, and filters. mongo_listing_test.cpp checks
// what each command carries.
#include <gtest/gtest.h>

#include <algorithm>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <string>
#include <vector>

#include "support/documents.hpp"
#include "support/server_test.hpp"

namespace {

using oid::bson::document;
namespace mongo = oid::mongo;
using namespace oid::testing;

bool has(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

class MongoListingServerTest : public server_test {};

TEST_F(MongoListingServerTest, DatabaseNamesIncludeTheOnesWithData) {
  const document one = json(R"({"_id": 1})");
  ASSERT_TRUE(coll().insert_one(one.view()));
  auto names = client_->list_database_names();
  ASSERT_TRUE(names) << names.error().message;
  EXPECT_TRUE(has(*names, db_));
  // The authorized ones: a user without authentication may use every database here.
  auto authorized = client_->list_database_names({}, {.authorized_databases = true});
  ASSERT_TRUE(authorized) << authorized.error().message;
  EXPECT_TRUE(has(*authorized, db_));
  // A filter on the name, and documents of names only.
  const document mine = json(R"({"name": ")" + db_ + R"("})");
  auto filtered = client_->list_databases(mine.view(), {.name_only = true, .comment = "mine"});
  ASSERT_TRUE(filtered) << filtered.error().message;
  ASSERT_EQ(filtered->size(), 1u);
  EXPECT_EQ((*filtered)[0].view().find("name")->get_string().value_or(""), db_);
}

TEST_F(MongoListingServerTest, CollectionNamesWithNamesOnlyAndFilters) {
  const document one = json(R"({"_id": 1})");
  ASSERT_TRUE(coll("a").insert_one(one.view()));
  ASSERT_TRUE(coll("b").insert_one(one.view()));
  auto db = client_->database(db_);
  auto names = db.list_collection_names();
  ASSERT_TRUE(names) << names.error().message;
  std::sort(names->begin(), names->end());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
  const document by_name = json(R"({"name": "b"})");
  auto b = db.list_collection_names(by_name.view(), {.authorized_collections = true});
  ASSERT_TRUE(b) << b.error().message;
  EXPECT_EQ(*b, std::vector<std::string>{"b"});
  // A filter on another field: whole documents (no nameOnly).
  const document by_type = json(R"({"type": "collection", "name": "a"})");
  auto a = db.list_collection_names(by_type.view());
  ASSERT_TRUE(a) << a.error().message;
  EXPECT_EQ(*a, std::vector<std::string>{"a"});
  auto specs = db.list_collections({}, {.name_only = true, .batch_size = 1});
  ASSERT_TRUE(specs) << specs.error().message;
  EXPECT_EQ(specs->size(), 2u) << "read through the cursor, one per batch";
  for (const auto& s : *specs) EXPECT_TRUE(s.view().contains("name"));
}

}  // namespace
