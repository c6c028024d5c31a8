// GoogleTest matchers for oid::result (and mongo::outcome): HasValue(m) and HasError(code[,
// offset]).
#pragma once

#include <gmock/gmock.h>

#include <oid/result.hpp>
#include <string>
#include <system_error>

namespace oid::testing {

/// The error's words for a failure message: `oid::error::message()` or `mongo::failure::message`.
template <class E>
std::string error_text(const E& e) {
  if constexpr (requires { e.message(); }) {
    return e.message();
  } else {
    return e.message;
  }
}

/// A code for a failure message: its category, value and description ("oid.mongo:6 (timed out)").
inline std::string code_text(const std::error_code& c) {
  return std::string(c.category().name()) + ":" + std::to_string(c.value()) + " (" + c.message() +
         ")";
}

MATCHER_P(HasValue, m, "has a value that " + ::testing::DescribeMatcher<decltype(m)>(m)) {
  if (!arg.has_value()) {
    *result_listener << "has error " << error_text(arg.error()) << " at " << arg.error().offset;
    return false;
  }
  return ::testing::ExplainMatchResult(m, *arg, result_listener);
}

MATCHER_P(HasError, code, "has error code " + code_text(code)) {
  if (arg.has_value()) {
    *result_listener << "has a value";
    return false;
  }
  *result_listener << "has error " << error_text(arg.error()) << " at " << arg.error().offset;
  return arg.error().code == code;
}

MATCHER_P2(HasErrorAt, code, offset,
           "has error code " + code_text(code) + " at offset " + ::testing::PrintToString(offset)) {
  if (arg.has_value()) {
    *result_listener << "has a value";
    return false;
  }
  *result_listener << "has error " << error_text(arg.error()) << " at " << arg.error().offset;
  return arg.error().code == code && arg.error().offset == static_cast<std::size_t>(offset);
}

}  // namespace oid::testing
