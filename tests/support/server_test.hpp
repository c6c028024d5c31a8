// A GoogleTest fixture for tests against the server MONGODB_URI names (scripts/test.sh starts
// FerretDB): a client, and a database of its own per test, dropped afterwards, so that runs and
// tests do not see each other's data. Without MONGODB_URI the test skips (fails under CI=true).
#pragma once

#include <gtest/gtest.h>

#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "support/ci.hpp"

namespace oid::testing {

class server_test : public ::testing::Test {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_URI", uri_);
    auto c = mongo::client::create(uri_);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    client_.emplace(std::move(*c));
    db_ = "oid_test_" + oid::generate().to_hex().substr(16);
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

  std::string uri_, db_;
  std::optional<mongo::client> client_;
};

}  // namespace oid::testing
