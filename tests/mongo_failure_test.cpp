// oid::mongo::failure and outcome<T>: the client's error, what value() throws, and the messages
// that fallible calls without a server (client::create) carry in their failure.
#include <gtest/gtest.h>

#include <oid/mongo/client.hpp>
#include <oid/mongo/error.hpp>
#include <oid/mongo/outcome.hpp>
#include <set>
#include <string>

#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::testing::HasErrorAt;
namespace mongo = oid::mongo;

// The client's codes are its own: a category of their own, every code with its own message.
TEST(MongoErrorTest, EveryCodeHasItsOwnMessageInTheClientsCategory) {
  EXPECT_STREQ(mongo::error_category().name(), "oid.mongo");
  std::set<std::string> seen;
  for (int v = static_cast<int>(mongo::errc::invalid_uri);
       v < static_cast<int>(mongo::errc::end_marker); ++v) {
    SCOPED_TRACE(v);
    const std::error_code c = static_cast<mongo::errc>(v);
    EXPECT_EQ(c.category(), mongo::error_category());
    const std::string m = c.message();
    EXPECT_EQ(m.find("unknown oid.mongo error"), std::string::npos) << m;
    EXPECT_TRUE(seen.insert(m).second) << "duplicate message: " << m;
    EXPECT_EQ(mongo::errc_of(c), static_cast<mongo::errc>(v));
    // Not the ids' code of the same value.
    EXPECT_NE(c, std::error_code(static_cast<oid::errc>(v)));
    EXPECT_EQ(oid::errc_of(c), oid::errc{});
  }
  EXPECT_NE(std::error_code(mongo::errc::end_marker).message().find("unknown oid.mongo error"),
            std::string::npos);
  EXPECT_EQ(mongo::errc_of(errc::truncated), mongo::errc{});
}

TEST(MongoFailureTest, MadeFromACodecErrorKeepsCodeAndOffsetAndTakesTheCategoryMessage) {
  const mongo::failure f(oid::error{errc::truncated, 17});
  EXPECT_EQ(f.code, errc::truncated);
  EXPECT_EQ(f.offset, 17u);
  EXPECT_EQ(f.message, oid::error({errc::truncated, 0}).message());
  EXPECT_FALSE(f.server.has_value());
  EXPECT_TRUE(f.write_errors.empty());
}

TEST(MongoFailureTest, ValueThrowsOperationErrorWithCodeOffsetAndMessage) {
  const mongo::outcome<int> r = mongo::failure(oid::mongo::errc::invalid_uri, "bad option x", 9);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.value_or(4), 4);
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const mongo::operation_error& e) {
    EXPECT_EQ(e.code(), oid::mongo::errc::invalid_uri);
    EXPECT_EQ(e.offset(), 9u);
    EXPECT_NE(std::string(e.what()).find("bad option x"), std::string::npos) << e.what();
    EXPECT_EQ(e.failure().message, "bad option x");
  }
  const mongo::outcome<void> v = mongo::failure(oid::mongo::errc::timeout, "slow");
  EXPECT_THROW(v.value(), mongo::operation_error);
  EXPECT_NO_THROW(mongo::outcome<void>().value());
}

TEST(MongoFailureTest, ClientCreateSaysWhatItRefuses) {
  struct test_case {
    const char* text;
    std::error_code want;
    std::size_t offset;
    const char* words;  // in the message
  };
  const test_case cases[] = {
      {"mongodb://h/?connectTimeoutMS=-2", oid::mongo::errc::invalid_uri, 30, "connectTimeoutMS"},
      {"mongodb+srv://cluster0.example.net:27017/", oid::mongo::errc::invalid_uri, 14, "SRV"},
      {"mongodb://h/?tls=true&tlsCAFile=/nonexistent/ca.pem", oid::mongo::errc::tls_failed, 0,
       "tlsCAFile '/nonexistent/ca.pem'"},
      {"mongodb://user@h/", oid::mongo::errc::invalid_uri, 0, "no password"},
      {"mongodb://user:secret@h/?authMechanism=GSSAPI", oid::mongo::errc::unsupported, 39,
       "GSSAPI"},
      {"mongodb://h/?authMechanism=SCRAM-SHA-256", oid::mongo::errc::invalid_uri, 10,
       "authMechanism"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto r = mongo::client::create(c.text);
    ASSERT_THAT(r, HasErrorAt(c.want, c.offset));
    EXPECT_NE(r.error().message.find(c.words), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find("secret"), std::string::npos) << r.error().message;
  }
}

}  // namespace
