// A test fixture with a client of the server at MONGODB_URI and a database of its own, dropped
// when the test ends, so that runs and tests do not see each other's data. Without MONGODB_URI
// the test skips (fails under CI=true).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <oid/objectid/time.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/ci.hpp"

namespace oid::testing {

class scratch_database_test : public ::testing::Test {
 protected:
  /// `prefix` starts the database's name; a random suffix ends it.
  explicit scratch_database_test(std::string prefix) : prefix_(std::move(prefix)) {}
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

  std::string prefix_, uri_, db_;
  std::optional<mongo::client> client_;
};

/// `text` as a document (Extended JSON); a test failure, and an empty document, when it is not.
inline bson::document json(std::string_view text) {
  auto d = bson::from_json(text);
  EXPECT_TRUE(d.has_value()) << text;
  return d ? std::move(*d) : bson::document();
}

/// An ObjectId of time `when` (ISO-8601) whose other bytes are `n`.
inline object_id id_at(const char* when, int n) {
  const auto t = parse_time(when).value();
  char hex[25];
  std::snprintf(hex, sizeof hex, "%08llx%016x",
                static_cast<unsigned long long>(t.time_since_epoch().count()), n);
  return object_id::from_hex(hex).value();
}

/// The names of `c`'s indexes, sorted ("?" for a specification without a string name).
inline std::vector<std::string> index_names(mongo::collection c) {
  std::vector<std::string> out;
  const auto list = c.list_indexes();
  EXPECT_TRUE(list.has_value());
  if (!list) return out;
  for (const auto& spec : *list) {
    const auto name = spec.view().find("name");
    out.emplace_back(name ? name->get_string().value_or("?") : "?");
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace oid::testing
