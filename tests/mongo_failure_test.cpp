// oid::mongo::failure and outcome<T>: the client's error, what value() throws, and the messages
// that fallible calls without a server (client::create) carry in their failure.
#include <gtest/gtest.h>

#include <oid/mongo/client.hpp>
#include <oid/mongo/outcome.hpp>
#include <string>

#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::testing::HasErrorAt;
namespace mongo = oid::mongo;

TEST(MongoFailureTest, MadeFromACodecErrorKeepsCodeAndOffsetAndTakesTheCategoryMessage) {
  const mongo::failure f(oid::error{errc::truncated, 17});
  EXPECT_EQ(f.code, errc::truncated);
  EXPECT_EQ(f.offset, 17u);
  EXPECT_EQ(f.message, oid::error({errc::truncated, 0}).message());
  EXPECT_FALSE(f.server.has_value());
  EXPECT_TRUE(f.write_errors.empty());
}

TEST(MongoFailureTest, ValueThrowsOperationErrorWithCodeOffsetAndMessage) {
  const mongo::outcome<int> r = mongo::failure(errc::invalid_uri, "bad option x", 9);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.value_or(4), 4);
  try {
    (void)r.value();
    FAIL() << "no exception";
  } catch (const mongo::operation_error& e) {
    EXPECT_EQ(e.code_enum(), errc::invalid_uri);
    EXPECT_EQ(e.offset(), 9u);
    EXPECT_NE(std::string(e.what()).find("bad option x"), std::string::npos) << e.what();
    EXPECT_EQ(e.failure().message, "bad option x");
  }
  const mongo::outcome<void> v = mongo::failure(errc::timeout, "slow");
  EXPECT_THROW(v.value(), mongo::operation_error);
  EXPECT_NO_THROW(mongo::outcome<void>().value());
}

TEST(MongoFailureTest, ClientCreateSaysWhatItRefuses) {
  struct test_case {
    const char* text;
    errc want;
    std::size_t offset;
    const char* words;  // in the message
  };
  const test_case cases[] = {
      {"mongodb://h/?connectTimeoutMS=-2", errc::invalid_uri, 30, "connectTimeoutMS"},
      {"mongodb+srv://cluster0.example.net:27017/", errc::invalid_uri, 14, "SRV"},
      {"mongodb://h/?tls=true&tlsCAFile=/nonexistent/ca.pem", errc::tls_failed, 0,
       "tlsCAFile '/nonexistent/ca.pem'"},
      {"mongodb://user@h/", errc::invalid_uri, 0, "no password"},
      {"mongodb://user:secret@h/?authMechanism=GSSAPI", errc::unsupported, 39, "GSSAPI"},
      {"mongodb://h/?authMechanism=SCRAM-SHA-256", errc::invalid_uri, 10, "authMechanism"},
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
