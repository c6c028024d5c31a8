// Documents and ids for tests, written the short way.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <deque>
#include <oid/bson/document.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/objectid/object_id.hpp>
#include <oid/objectid/time.hpp>
#include <string_view>
#include <utility>

namespace oid::testing {

/// `text` as a document (Extended JSON); a test failure, and an empty document, when it is not.
inline bson::document json(std::string_view text) {
  auto d = bson::from_json(text);
  EXPECT_TRUE(d.has_value()) << text;
  return d ? std::move(*d) : bson::document();
}

/// Documents written as Extended JSON, each kept alive as long as this object:
/// `documents j; c.insert_one(j(R"({"a": 1})"));`.
class documents {
 public:
  bson::document_view operator()(std::string_view text) {
    return keep_.emplace_back(json(text)).view();
  }

 private:
  std::deque<bson::document> keep_;
};

/// An ObjectId of time `when` (ISO-8601) whose other bytes are `n`.
inline object_id id_at(const char* when, int n) {
  const auto t = parse_time(when).value();
  char hex[25];
  std::snprintf(hex, sizeof hex, "%08llx%016x",
                static_cast<unsigned long long>(t.time_since_epoch().count()), n);
  return object_id::from_hex(hex).value();
}

}  // namespace oid::testing
