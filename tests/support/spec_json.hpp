// What the runners of the specifications' JSON suites share: where ../shared/data is, whether a
// missing suite is a failure (CI=true) or a skip, and by-value access to simdjson arrays and
// objects (a range-for over `e.get_array().value_unsafe()` would use a destroyed temporary).
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <string_view>

namespace oid::testing {

/// ../shared/data, where the specification suites are.
inline std::filesystem::path spec_data_dir() {
  return std::filesystem::path(OID_SHARED_DIR) / "data";
}

/// True under CI=true, where a missing suite fails instead of being skipped.
inline bool in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

/// `e` as an array (an empty one, and a test failure, when it is not).
inline simdjson::dom::array array_of(simdjson::dom::element e) {
  simdjson::dom::array a;
  EXPECT_EQ(e.get(a), simdjson::SUCCESS);
  return a;
}

/// `e` as an object (an empty one, and a test failure, when it is not).
inline simdjson::dom::object object_of(simdjson::dom::element e) {
  simdjson::dom::object o;
  EXPECT_EQ(e.get(o), simdjson::SUCCESS);
  return o;
}

}  // namespace oid::testing
