// By-value access to simdjson arrays and objects for the specification suites' runners: a
// range-for over `e.get_array().value_unsafe()` would use a destroyed temporary.
#pragma once

#include <gtest/gtest.h>
#include <simdjson.h>

namespace oid::testing {

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
