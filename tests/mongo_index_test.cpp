// The index operations of oid::mongo::collection against the server of MONGODB_URI (FerretDB
// under scripts/test.sh). Without MONGODB_URI the tests skip, except under CI=true.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/server_test.hpp"

namespace {

using oid::errc;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;

class MongoIndexTest : public oid::testing::server_test {
 protected:
  MongoIndexTest() : server_test("oid_idx_") {}
  // The document of `json`, kept alive until the test ends.
  document_view json(std::string_view text) {
    auto d = oid::bson::from_json(text);
    EXPECT_TRUE(d.has_value()) << text;
    return keep_.emplace_back(d ? std::move(*d) : document()).view();
  }
  // True when the server is FerretDB (buildInfo says ferretdbVersion).
  bool ferretdb() {
    oid::bson::builder info;
    info.append_int32("buildInfo", 1);
    auto build = client_->run_command("admin", info.view());
    EXPECT_TRUE(build.has_value());
    return build && build->view().contains("ferretdbVersion");
  }
  std::vector<std::string> names(mongo::collection& c) {
    auto list = c.list_indexes();
    EXPECT_TRUE(list.has_value()) << list.error().message;
    std::vector<std::string> out;
    if (!list) return out;
    for (const auto& spec : *list) {
      out.emplace_back(spec.view().find("name")->get_string().value_or("?"));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  std::deque<document> keep_;
};

TEST_F(MongoIndexTest, CreatesSeveralWithOptionsListsAndDropsThem) {
  auto c = client_->collection(db_, "c");
  EXPECT_TRUE(names(c).empty());  // no collection yet: no indexes, not an error
  ASSERT_TRUE(c.insert_one(json(R"({"a": 1, "b": "x"})")).has_value());

  std::vector<mongo::index_model> models(3);
  models[0].keys = json(R"({"a": 1, "b": -1})");
  models[0].options.unique = true;
  models[1].keys = json(R"({"b": 1})");
  models[1].options.sparse = true;
  models[1].options.name = "b_sparse";
  models[2].keys = json(R"({"p": 1})");
  auto made = c.create_indexes(models);
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(*made, (std::vector<std::string>{"a_1_b_-1", "b_sparse", "p_1"}));
  EXPECT_EQ(names(c), (std::vector<std::string>{"_id_", "a_1_b_-1", "b_sparse", "p_1"}));

  // The options come back in the specifications.
  auto list = c.list_indexes();
  ASSERT_TRUE(list.has_value());
  for (const auto& spec : *list) {
    const auto v = spec.view();
    const auto name = v.find("name")->get_string().value_or("");
    if (name == "a_1_b_-1") {
      EXPECT_TRUE(v.contains("unique") && v.find("unique")->get_bool().value());
    }
    // FerretDB takes sparse and leaves it out (it ignores it); MongoDB lists it.
    if (name == "b_sparse") {
      EXPECT_EQ(v.contains("sparse"), !ferretdb());
    }
  }

  // The unique index refuses a duplicate key.
  auto dup = c.insert_one(json(R"({"a": 1, "b": "x"})"));
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);

  // create_index is create_indexes of one; the same specification again is not an error.
  auto again = c.create_index(json(R"({"b": 1})"), models[1].options);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(*again, "b_sparse");

  ASSERT_TRUE(c.drop_index("b_sparse").has_value());
  EXPECT_EQ(names(c), (std::vector<std::string>{"_id_", "a_1_b_-1", "p_1"}));
  auto missing = c.drop_index("no_such_index");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().code, oid::mongo::errc::server_error);
  EXPECT_EQ(c.drop_index("*").error().code, errc::invalid_value);
  ASSERT_TRUE(c.drop_indexes().has_value());
  EXPECT_EQ(names(c), (std::vector<std::string>{"_id_"}));
}

// The options FerretDB refuses (NotImplemented, 238): expireAfterSeconds (a TTL index),
// partialFilterExpression, collation. MongoDB makes the index and lists the option.
TEST_F(MongoIndexTest, OptionsFerretDbRefuses) {
  auto c = client_->collection(db_, "c");
  const bool ferret = ferretdb();
  std::vector<std::pair<std::string, mongo::index_options>> cases(3);
  cases[0].first = "expireAfterSeconds";
  cases[0].second.expire_after_seconds = 3600;
  cases[1].first = "partialFilterExpression";
  cases[1].second.partial_filter_expression = json(R"({"a": {"$gt": 5}})");
  cases[2].first = "collation";
  cases[2].second.collation = json(R"({"locale": "fr", "strength": 2})");
  for (auto& [option, options] : cases) {
    SCOPED_TRACE(option);
    options.name = "i_" + option;
    auto made = c.create_index(json(R"({"t": 1, "u": 1})"), options);
    if (ferret) {
      ASSERT_FALSE(made.has_value());
      EXPECT_EQ(made.error().code, oid::mongo::errc::server_error);
      ASSERT_TRUE(made.error().server.has_value());
      EXPECT_EQ(made.error().server->code, 238) << made.error().message;
      continue;
    }
    ASSERT_TRUE(made.has_value()) << made.error().message;
    auto list = c.list_indexes();
    ASSERT_TRUE(list.has_value());
    const auto spec = std::find_if(list->begin(), list->end(), [&](const document& d) {
      return d.view().find("name")->get_string().value_or("") == options.name;
    });
    ASSERT_NE(spec, list->end());
    EXPECT_TRUE(spec->view().contains(option));
  }
}

TEST_F(MongoIndexTest, RefusesEmptyModelsBeforeSending) {
  auto c = client_->collection(db_, "c");
  EXPECT_EQ(c.create_indexes({}).error().code, errc::invalid_value);
  std::vector<mongo::index_model> models(1);
  EXPECT_EQ(c.create_indexes(models).error().code, errc::invalid_value);
}

TEST_F(MongoIndexTest, ExtraFieldsOfASpecificationAreSentAsTheyAre) {
  auto c = client_->collection(db_, "c");
  mongo::index_model m;
  m.keys = json(R"({"k": 1})");
  // As a mongodump metadata file has it: v and ns are left out, unique is passed on.
  m.options.extra = json(R"({"v": 2, "key": {"zz": 1}, "name": "k_u", "unique": true,
                             "ns": "x.y"})");
  auto made = c.create_indexes(std::span(&m, 1));
  ASSERT_TRUE(made.has_value()) << made.error().message;
  EXPECT_EQ(made->front(), "k_1");
  auto list = c.list_indexes();
  ASSERT_TRUE(list.has_value());
  bool found = false;
  for (const auto& spec : *list) {
    if (spec.view().find("name")->get_string().value_or("") != "k_1") continue;
    found = true;
    EXPECT_TRUE(spec.view().find("unique")->get_bool().value_or(false));
  }
  EXPECT_TRUE(found);
}

}  // namespace
