// What a test does when something it needs from outside the repository is missing (the
// specification suites that scripts/spec-data.sh fetches, a server at MONGODB_URI): it skips,
// with a message, on a developer's machine, and fails under CI (CI=true), where every test must
// run.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <string_view>

namespace oid::testing {

/// True when the environment says CI=true (scripts/test.sh under CI, .ci/run).
inline bool running_in_ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

/// The value of the environment variable `name` (e.g. MONGODB_URI, the server a test needs), or
/// an empty string when it is unset or empty.
inline std::string environment(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string() : std::string(value);
}

}  // namespace oid::testing

/// Ends the current test: a failure under CI, else a skip. `message` is streamed into either
/// (`OID_SKIP_OR_FAIL_IN_CI("BSON corpus not found at " << dir)`); a macro because FAIL() and
/// GTEST_SKIP() return from the test function.
#define OID_SKIP_OR_FAIL_IN_CI(message)                                     \
  do {                                                                      \
    if (::oid::testing::running_in_ci()) FAIL() << message << " (CI=true)"; \
    GTEST_SKIP() << message;                                                \
  } while (false)

/// Sets `out` to the connection string in the environment variable `variable`, which
/// scripts/test.sh sets to the server it starts; ends the test (skip, or failure under CI) when it
/// is not set.
#define OID_SERVER_URI_OR_SKIP(variable, out)                                                      \
  do {                                                                                             \
    out = ::oid::testing::environment(variable);                                                   \
    if (out.empty()) {                                                                             \
      OID_SKIP_OR_FAIL_IN_CI(variable << " is not set; run scripts/test.sh (it starts FerretDB)"); \
    }                                                                                              \
  } while (false)
