// Runs the authentication specification's connection string tests (auth/connection-string.json
// of scripts/spec-data.sh) against oid::mongo::uri::parse in lenient mode:
// the credential each valid case describes (user name, password, source, mechanism, mechanism
// properties) must be what oid reads, and each invalid case must be refused. The cases for the
// mechanisms oid does not implement (GSSAPI, MONGODB-AWS, MONGODB-OIDC: oid refuses them as
// unsupported) are listed with that reason instead.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <algorithm>
#include <iostream>
#include <oid/mongo/uri.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/ci.hpp"
#include "support/spec_data.hpp"

namespace {

using oid::mongo::uri;
using oid::mongo::uri_mode;

// Compares a nullable string of the spec with what oid has; "" when they agree.
std::string compare(const char* field, simdjson::dom::element want,
                    std::optional<std::string_view> got) {
  if (want.is_null()) return got ? std::string(field) + " given but none expected" : "";
  std::string_view w;
  if (want.get(w) != simdjson::SUCCESS) return std::string(field) + ": not a string in the case";
  if (!got) return std::string(field) + ": none, want " + std::string(w);
  if (*got != w)
    return std::string(field) + ": got " + std::string(*got) + ", want " + std::string(w);
  return "";
}

// Checks one case; "" when it passes, else what differed.
std::string check_case(simdjson::dom::element t) {
  const std::string_view text = t["uri"].get_string().value_unsafe();
  const bool want_valid = t["valid"].get_bool().value_unsafe();
  const auto parsed = uri::parse(text, uri_mode::lenient);
  if (!want_valid) return parsed.has_value() ? "parsed, but the case is invalid" : "";
  if (!parsed.has_value()) return "rejected: " + parsed.error().message;
  const uri& u = *parsed;
  simdjson::dom::element credential;
  if (t["credential"].get(credential) != simdjson::SUCCESS || credential.is_null()) {
    return u.has_credential() ? "a credential, none expected" : "";
  }
  if (!u.has_credential()) return "no credential, one expected";
  const auto password =
      u.password() ? std::optional<std::string_view>(u.password()->reveal()) : std::nullopt;
  const auto mechanism =
      u.auth_mechanism() ? std::optional<std::string_view>(*u.auth_mechanism()) : std::nullopt;
  const auto username =
      u.username() ? std::optional<std::string_view>(*u.username()) : std::nullopt;
  for (const auto& r : {compare("username", credential["username"], username),
                        compare("password", credential["password"], password),
                        compare("source", credential["source"], u.auth_database()),
                        compare("mechanism", credential["mechanism"], mechanism)}) {
    if (!r.empty()) return r;
  }
  simdjson::dom::element properties = credential["mechanism_properties"].value_unsafe();
  const auto& got = u.auth_mechanism_properties();
  if (properties.is_null()) {
    return got ? "mechanism properties given but none expected" : "";
  }
  simdjson::dom::object want;
  if (properties.get(want) != simdjson::SUCCESS || !got || got->size() != want.size()) {
    return "mechanism properties differ";
  }
  for (auto [key, value] : want) {
    const auto found =
        std::find_if(got->begin(), got->end(), [&](const auto& p) { return p.first == key; });
    std::string_view w;
    if (value.get(w) != simdjson::SUCCESS || found == got->end() || found->second != w) {
      return "mechanism property " + std::string(key) + " differs";
    }
  }
  return "";
}

// The mechanism oid does not implement that the case uses, or "".
std::string unsupported_mechanism(std::string_view text) {
  for (const char* m : {"GSSAPI", "MONGODB-AWS", "MONGODB-OIDC"}) {
    if (text.find(std::string("authMechanism=") + m) != std::string_view::npos) return m;
  }
  return "";
}

TEST(MongoAuthUriSpecTest, ConnectionStringSuite) {
  const auto file = oid::testing::spec_data_dir("auth") / "connection-string.json";
  if (!std::filesystem::is_regular_file(file)) {
    OID_SKIP_OR_FAIL_IN_CI("the authentication specification tests are not here: "
                           << file << " (scripts/spec-data.sh fetches them)");
  }
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(file.string()).get(doc), simdjson::SUCCESS) << file;
  simdjson::dom::array tests;
  ASSERT_EQ(doc["tests"].get(tests), simdjson::SUCCESS) << file;
  int ran = 0, passed = 0;
  std::vector<std::string> skipped;
  for (auto t : tests) {
    const std::string_view description = t["description"].get_string().value_unsafe();
    const std::string_view text = t["uri"].get_string().value_unsafe();
    ++ran;
    if (const auto m = unsupported_mechanism(text); !m.empty()) {
      // oid must refuse it as unsupported, whatever the case expects.
      const auto parsed = uri::parse(text, uri_mode::lenient);
      EXPECT_FALSE(parsed.has_value()) << description;
      if (!parsed.has_value()) {
        EXPECT_EQ(parsed.error().code, oid::mongo::errc::unsupported) << description;
      }
      skipped.push_back(std::string(description) + " [authMechanism=" + m +
                        " is not implemented by oid: refused as unsupported]");
      continue;
    }
    const std::string failure = check_case(t);
    if (failure.empty()) {
      ++passed;
    } else {
      ADD_FAILURE() << description << "\n  uri: " << text << "\n  " << failure;
    }
  }
  std::cout << "auth connection string spec: " << ran << " cases, " << passed << " passed, "
            << skipped.size() << " skipped:\n";
  for (const auto& s : skipped) std::cout << "  " << s << '\n';
  EXPECT_EQ(passed + static_cast<int>(skipped.size()), ran);
  EXPECT_GT(passed, 0);
}

}  // namespace
