// A GoogleTest fixture for tests against the server MONGODB_URI names (scripts/test.sh starts
// FerretDB): a client, and a database of its own per test, dropped when the test ends, so that
// runs and tests do not see each other's data. Without MONGODB_URI the test skips (fails under
// CI=true).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/ci.hpp"

namespace oid::testing {

class server_test : public ::testing::Test {
 protected:
  /// `prefix` starts the test database's name; a random suffix ends it.
  explicit server_test(std::string prefix = "oid_test_") : prefix_(std::move(prefix)) {}

  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri_);
    auto c = mongo::client::create(uri_);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    client_.emplace(std::move(*c));
    db_ = prefix_ + oid::generate().to_hex().substr(16);
  }
  void TearDown() override {
    if (client_) {
      bson::builder b;
      b.append_int32("dropDatabase", 1);
      (void)client_->run_command(db_, b.view());
    }
  }

  /// A collection of the test's database.
  mongo::collection coll(std::string_view name = "c") { return client_->collection(db_, name); }

  /// True when the server is FerretDB (buildInfo says ferretdbVersion).
  bool ferretdb() {
    bson::builder info;
    info.append_int32("buildInfo", 1);
    auto build = client_->run_command("admin", info.view());
    EXPECT_TRUE(build.has_value());
    return build && build->view().contains("ferretdbVersion");
  }

  std::string prefix_, uri_, db_;
  std::optional<mongo::client> client_;
};

/// The names of `c`'s indexes, sorted ("?" for a specification without a string name).
inline std::vector<std::string> index_names(mongo::collection c) {
  std::vector<std::string> out;
  const auto list = c.list_indexes();
  EXPECT_TRUE(list.has_value()) << list.error().message;
  if (!list) return out;
  for (const auto& spec : *list) {
    const auto name = spec.view().find("name");
    out.emplace_back(name ? name->get_string().value_or("?") : "?");
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace oid::testing
