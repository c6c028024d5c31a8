#include <gtest/gtest.h>

#include <oid/mongo/uri.hpp>

#include "support/matchers.hpp"

namespace {

using oid::errc;
using oid::mongo::host;
using oid::mongo::uri;
using oid::mongo::uri_mode;
using oid::testing::HasErrorAt;
using namespace std::chrono_literals;

TEST(MongoUriTest, ParsesEveryPart) {
  const auto u = uri::parse(
      "mongodb://us%40er:p%3Ass@db1.example.com:27018,10.0.0.2,[fe80::1]:27019,"
      "%2Ftmp%2Fmongodb-27017.sock/app%3F?appName=demo&connectTimeoutMS=1500&socketTimeoutMS=0&"
      "serverSelectionTimeoutMS=2000&maxPoolSize=7&w=majority&journal=true&wTimeoutMS=50&"
      "authSource=admin&authMechanism=SCRAM-SHA-256&tls=false&retryWrites=false&retryReads=true&"
      "compressors=zstd,zlib");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  ASSERT_EQ(u->hosts().size(), 4u);
  EXPECT_EQ(u->hosts()[0], (host{host::kind::hostname, "db1.example.com", 27018}));
  EXPECT_EQ(u->hosts()[1], (host{host::kind::ipv4, "10.0.0.2", std::nullopt}));
  EXPECT_EQ(u->hosts()[1].port_or_default(), 27017);
  EXPECT_EQ(u->hosts()[2], (host{host::kind::ip_literal, "fe80::1", 27019}));
  EXPECT_EQ(u->hosts()[3], (host{host::kind::unix_socket, "/tmp/mongodb-27017.sock", {}}));
  EXPECT_EQ(u->username(), "us@er");
  ASSERT_TRUE(u->password().has_value());
  EXPECT_EQ(u->password()->reveal(), "p:ss");
  EXPECT_EQ(u->database(), "app?");
  EXPECT_EQ(u->app_name(), "demo");
  EXPECT_EQ(u->connect_timeout(), 1500ms);
  EXPECT_EQ(u->socket_timeout(), 0ms);
  EXPECT_EQ(u->server_selection_timeout(), 2000ms);
  EXPECT_EQ(u->max_pool_size(), 7u);
  EXPECT_EQ(u->w_tag(), "majority");
  EXPECT_FALSE(u->w_number().has_value());
  EXPECT_EQ(u->journal(), true);
  EXPECT_EQ(u->w_timeout(), 50ms);
  EXPECT_EQ(u->auth_source(), "admin");
  EXPECT_EQ(u->auth_mechanism(), "SCRAM-SHA-256");
  EXPECT_EQ(u->tls(), false);
  EXPECT_EQ(u->retry_writes(), false);
  EXPECT_EQ(u->retry_reads(), true);
  EXPECT_EQ(u->compressors(), (std::vector<std::string>{"zstd", "zlib"}));
  EXPECT_TRUE(u->warnings().empty());
}

TEST(MongoUriTest, OptionNamesIgnoreCaseAndSslIsTls) {
  const auto u = uri::parse("mongodb://h/?CONNECTTIMEOUTms=5&W=0&SSL=true&directconnection=true");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->connect_timeout(), 5ms);
  EXPECT_EQ(u->w_number(), 0);
  EXPECT_EQ(u->tls(), true);
  EXPECT_EQ(u->direct_connection(), true);
  EXPECT_FALSE(u->database().has_value());
}

TEST(MongoUriTest, UnknownRepeatedAndEmptyOptionsAreWarnings) {
  const auto u = uri::parse("mongodb://h?foo=bar&w=1&w=2&journal=");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->w_number(), 2);
  EXPECT_FALSE(u->journal().has_value());
  ASSERT_EQ(u->warnings().size(), 3u);
  EXPECT_NE(u->warnings()[0].find("foo"), std::string::npos);
}

TEST(MongoUriTest, RejectsMalformedStringsWithOffsets) {
  struct test_case {
    const char* name;
    const char* text;
    oid::mongo::errc want;
    std::size_t offset;
  };
  const test_case cases[] = {
      {"empty", "", oid::mongo::errc::invalid_uri, 0},
      {"other scheme", "mongo://localhost", oid::mongo::errc::invalid_uri, 0},
      {"srv with a port", "mongodb+srv://cluster.example.com:27017", oid::mongo::errc::invalid_uri,
       14},
      {"no host", "mongodb://", oid::mongo::errc::invalid_uri, 10},
      {"empty host in list", "mongodb://a,,b", oid::mongo::errc::invalid_uri, 12},
      {"port zero", "mongodb://localhost:0", oid::mongo::errc::invalid_uri, 20},
      {"port too big", "mongodb://localhost:65536/", oid::mongo::errc::invalid_uri, 20},
      {"port negative", "mongodb://localhost:-1", oid::mongo::errc::invalid_uri, 20},
      {"port letters", "mongodb://localhost:foo", oid::mongo::errc::invalid_uri, 20},
      {"port with plus", "mongodb://localhost:+1", oid::mongo::errc::invalid_uri, 20},
      {"double colon", "mongodb://localhost::27017", oid::mongo::errc::invalid_uri, 20},
      {"bare ipv6", "mongodb://::1", oid::mongo::errc::invalid_uri, 11},
      {"unclosed literal", "mongodb://[::1", oid::mongo::errc::invalid_uri, 10},
      {"junk after literal", "mongodb://[::1]x", oid::mongo::errc::invalid_uri, 15},
      {"literal port", "mongodb://[::1]:0", oid::mongo::errc::invalid_uri, 16},
      {"two colons in userinfo", "mongodb://a:b:c@h", oid::mongo::errc::invalid_uri, 13},
      {"at sign in userinfo", "mongodb://a@b@h", oid::mongo::errc::invalid_uri, 11},
      {"bad escape in user", "mongodb://a%zz:b@h", oid::mongo::errc::invalid_uri, 11},
      {"escape cut short", "mongodb://a%2:b@h", oid::mongo::errc::invalid_uri, 11},
      {"empty user", "mongodb://:pw@h", oid::mongo::errc::invalid_uri, 10},
      {"socket not .sock", "mongodb://%2Ftmp%2Fmongodb", oid::mongo::errc::invalid_uri, 10},
      {"db with dollar", "mongodb://h/a$b", oid::mongo::errc::invalid_uri, 12},
      {"db with slash", "mongodb://h/a/b", oid::mongo::errc::invalid_uri, 12},
      {"option without =", "mongodb://h/?w", oid::mongo::errc::invalid_uri, 13},
      {"bad escape in value", "mongodb://h/?appName=%g0", oid::mongo::errc::invalid_uri, 21},
      {"tls vs ssl", "mongodb://h/?tls=true&ssl=false", oid::mongo::errc::invalid_uri, 10},
      {"direct with two hosts", "mongodb://a,b/?directConnection=true",
       oid::mongo::errc::invalid_uri, 10},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto u = uri::parse(c.text, uri_mode::strict);
    EXPECT_THAT(u, HasErrorAt(c.want, c.offset));
    if (!u) {
      EXPECT_FALSE(u.error().message.empty());
    }
  }
}

TEST(MongoUriTest, SrvIsParsedWithoutDns) {  // resolve_srv looks up; see mongo_srv_test.cpp
  const auto u = uri::parse("mongodb+srv://cluster0.example.net/", uri_mode::strict);
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->srv_name(), "cluster0.example.net");
  EXPECT_FALSE(u->srv_resolved());
}

TEST(MongoUriTest, InvalidValuesAreErrorsNamingTheOptionInStrictMode) {
  struct test_case {
    const char* text;
    const char* option;
    std::size_t offset;
  };
  const test_case cases[] = {
      {"mongodb://h/?connectTimeoutMS=-2", "connectTimeoutMS", 30},
      {"mongodb://h/?socketTimeoutMS=ten", "socketTimeoutMS", 29},
      {"mongodb://h/?serverSelectionTimeoutMS=1.5", "serverSelectionTimeoutMS", 38},
      {"mongodb://h/?wTimeoutMS=99999999999", "wTimeoutMS", 24},
      {"mongodb://h/?maxPoolSize=-1", "maxPoolSize", 25},
      {"mongodb://h/?w=-1", "w", 15},
      {"mongodb://h/?journal=yes", "journal", 21},
      {"mongodb://h/?tls=1", "tls", 17},
      {"mongodb://h/?retryWrites=TRUE", "retryWrites", 25},
      {"mongodb://h/?retryReads=no", "retryReads", 24},
      {"mongodb://h/?directConnection=maybe", "directConnection", 30},
      {"mongodb://h/?authMechanism=MAGIC", "authMechanism", 27},
      {"mongodb://h/?compressors=zlib,,zstd", "compressors", 25},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto strict = uri::parse(c.text, uri_mode::strict);
    ASSERT_THAT(strict, HasErrorAt(oid::mongo::errc::invalid_uri, c.offset));
    EXPECT_NE(strict.error().message.find(c.option), std::string::npos) << strict.error().message;
    // The specification's behaviour: ignored, with a warning naming the option.
    const auto lenient = uri::parse(c.text, uri_mode::lenient);
    ASSERT_TRUE(lenient.has_value());
    ASSERT_EQ(lenient->warnings().size(), 1u);
    EXPECT_NE(lenient->warnings()[0].find(c.option), std::string::npos);
  }
}

TEST(MongoUriTest, PasswordIsASecretAndNeverInToString) {
  const auto u = uri::parse("mongodb://ann:hunter%32@h/app?authMechanism=SCRAM-SHA-256");
  ASSERT_TRUE(u.has_value()) << u.error().message;
  ASSERT_TRUE(u->password().has_value());
  EXPECT_EQ(u->password()->reveal(), "hunter2");
  EXPECT_EQ(u->to_string(), "mongodb://ann:<secret>@h/app?authMechanism=SCRAM-SHA-256");
  EXPECT_EQ(::testing::PrintToString(*u->password()), "<secret>");
  // No password: the text as given.
  const auto plain = uri::parse("mongodb://ann@h/");
  ASSERT_TRUE(plain.has_value());
  EXPECT_FALSE(plain->password().has_value());
  EXPECT_EQ(plain->to_string(), "mongodb://ann@h/");
  // A malformed password is refused without quoting it.
  const auto bad = uri::parse("mongodb://ann:s3cr%zz@h/");
  ASSERT_THAT(bad, HasErrorAt(oid::mongo::errc::invalid_uri, 18));
  EXPECT_EQ(bad.error().message.find("s3cr"), std::string::npos) << bad.error().message;
}

// A password the user forgot to percent-encode must not come back in an error or a warning (an
// accepted string is shown by to_string() as given, but for the password it parsed): each
// string below holds "Sw0rd" (or the digits 7319) only in its password, written so that a parser
// splitting at the first '/' or '?' reads part of it as a port, a database or an option.
TEST(MongoUriTest, MalformedUrisNeverShowThePassword) {
  struct test_case {
    const char* uri;
    const char* secret;
  };
  const test_case cases[] = {
      {"mongodb://ann:Sw0rd/bar@h", "Sw0rd"},          // a port of "Sw0rd", a database "bar@h"
      {"mongodb://ann:7319/x@h", "7319"},              // a valid port 7319 and database "x@h"
      {"mongodb://ann:7319/x@h/db", "7319"},           // the spec's unescaped-slash case
      {"mongodb://ann/Sw0rd:x@h/db", "Sw0rd"},         // a '/' in the user name
      {"mongodb://ann:Sw0rd?x@h/db", "Sw0rd"},         // a '?' in the password: port "Sw0rd"
      {"mongodb://ann:7319?Sw0rd@h/db", "Sw0rd"},      // an option "Sw0rd@h/db" with no '='
      {"mongodb://ann:7319?Sw0rd=1@h/db", "Sw0rd"},    // an unknown option
      {"mongodb://ann:7319?appname=Sw0rd@h", "7319"},  // a port 7319 (not the password: fine)
      {"mongodb://ann:Sw0rd:x@h/db", "Sw0rd"},         // a second ':'
      {"mongodb://ann:Sw0rd@x@h/db", "Sw0rd"},         // an unescaped '@'
      {"mongodb://ann:Sw0rd%zz@h/db", "Sw0rd"},        // a bad escape
      {"mongodb://ann:Sw0rd@h:99999/db", "Sw0rd"},     // a bad port after a good password
      {"mongodb://ann:Sw0rd@h/db?w=Sw0rd", "Sw0rd"},   // an invalid value (quoted: but not here)
      {"mongodb://ann:Sw0rd@/db", "Sw0rd"},            // no host
      {"mongodb+srv://ann:Sw0rd@h1,h2/db", "Sw0rd"},   // SRV with two hosts
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.uri);
    for (const auto mode : {uri_mode::strict, uri_mode::lenient}) {
      const auto u = uri::parse(c.uri, mode);
      if (u) {
        for (const auto& w : u->warnings()) {
          EXPECT_EQ(w.find(c.secret), std::string::npos) << w;
        }
        continue;
      }
      EXPECT_EQ(u.error().code, oid::mongo::errc::invalid_uri);
      EXPECT_EQ(u.error().message.find(c.secret), std::string::npos) << u.error().message;
    }
  }
}

// The specification's invalid-uris.json refuses a '/' in the user information; it used to be
// read as the end of the hosts, so "mongodb://a:1234/x@h" was host a, port 1234, database "x@h".
TEST(MongoUriTest, RefusesAnUnescapedSlashBeforeTheLastAt) {
  struct test_case {
    const char* uri;
    std::size_t offset;
  };
  constexpr test_case cases[] = {
      {"mongodb://a:1234/x@h", 16},
      {"mongodb://alice/@localhost/db", 15},
      {"mongodb://alice/bob:foo@localhost/db", 15},
      {"mongodb://alice:foo/bar@localhost/db", 19},
      {"mongodb://h/d@b", 11},  // a database cannot hold '@'
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.uri);
    EXPECT_THAT(uri::parse(c.uri), HasErrorAt(oid::mongo::errc::invalid_uri, c.offset));
  }
  // Escaped, and '@' after the options begin, are fine.
  EXPECT_TRUE(uri::parse("mongodb://a:12%2F34@h/x"));
  EXPECT_TRUE(uri::parse("mongodb://a:1234@h/x?appname=me@home"));
  EXPECT_TRUE(uri::parse("mongodb://h/x?appname=me@home/x"));
}

TEST(MongoUriTest, AuthDatabaseDefaults) {
  const auto db = [](const char* text) {
    const auto u = uri::parse(text);
    EXPECT_TRUE(u.has_value()) << text;
    return u ? u->auth_database() : std::string("?");
  };
  EXPECT_EQ(db("mongodb://u:p@h/"), "admin");
  EXPECT_EQ(db("mongodb://u:p@h/app"), "app");
  EXPECT_EQ(db("mongodb://u:p@h/app?authSource=other"), "other");
  EXPECT_EQ(db("mongodb://u:p@h/?authMechanism=PLAIN"), "$external");
  EXPECT_EQ(db("mongodb://u:p@h/app?authMechanism=PLAIN"), "app");
  EXPECT_EQ(db("mongodb://u@h/app?authMechanism=MONGODB-X509"), "$external");
}

TEST(MongoUriTest, AuthOptionsRefusedAsTheSpecificationSays) {
  // Mechanisms oid does not implement: unsupported, naming them, in either mode.
  for (const char* m : {"GSSAPI", "MONGODB-AWS", "MONGODB-OIDC"}) {
    const std::string text = std::string("mongodb://u@h/?authMechanism=") + m;
    SCOPED_TRACE(text);
    for (auto mode : {uri_mode::strict, uri_mode::lenient}) {
      const auto u = uri::parse(text, mode);
      ASSERT_THAT(u, HasErrorAt(oid::mongo::errc::unsupported, 29));
      EXPECT_NE(u.error().message.find(m), std::string::npos) << u.error().message;
    }
  }
  EXPECT_THAT(uri::parse("mongodb://h/?authMechanism=SCRAM-SHA-256"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 10));
  EXPECT_THAT(uri::parse("mongodb://h/?authMechanism=PLAIN"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 10));
  // PLAIN's message is authzid NUL user NUL password (RFC 4616): a NUL inside either would move
  // the fields, so the connection string is refused, at the user name or at the password.
  EXPECT_THAT(uri::parse("mongodb://user%00name:pw@h/?authMechanism=PLAIN"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 10));
  EXPECT_THAT(uri::parse("mongodb://u:pass%00word@h/?authMechanism=PLAIN", uri_mode::lenient),
              HasErrorAt(oid::mongo::errc::invalid_uri, 12));
  EXPECT_THAT(uri::parse("mongodb://u:p@h/?authMechanism=MONGODB-X509"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 12));
  EXPECT_THAT(uri::parse("mongodb://u@h/?authMechanism=MONGODB-X509&authSource=admin"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 10));
  EXPECT_THAT(uri::parse("mongodb://u:p@h/?authSource=", uri_mode::lenient),
              HasErrorAt(oid::mongo::errc::invalid_uri, 28));
  EXPECT_THAT(uri::parse("mongodb://u:p@h/?authMechanismProperties=NOCOLON"),
              HasErrorAt(oid::mongo::errc::invalid_uri, 41));
  const auto props = uri::parse("mongodb://u:p@h/?authMechanismProperties=A:1,B:x:y");
  ASSERT_TRUE(props.has_value()) << props.error().message;
  using pairs = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(props->auth_mechanism_properties(), (pairs{{"A", "1"}, {"B", "x:y"}}));
}

TEST(MongoUriTest, HostTypes) {
  struct test_case {
    const char* text;
    host::kind want;
    const char* name;
  };
  const test_case cases[] = {
      {"mongodb://127.0.0.1", host::kind::ipv4, "127.0.0.1"},
      {"mongodb://256.0.0.1", host::kind::hostname, "256.0.0.1"},
      {"mongodb://1.2.3", host::kind::hostname, "1.2.3"},
      {"mongodb://1.2.3.4.5", host::kind::hostname, "1.2.3.4.5"},
      {"mongodb://[::1]", host::kind::ip_literal, "::1"},
      {"mongodb://rel%2Fa.sock", host::kind::unix_socket, "rel/a.sock"},
      {"mongodb://a.sock", host::kind::hostname, "a.sock"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const auto u = uri::parse(c.text);
    ASSERT_TRUE(u.has_value());
    ASSERT_EQ(u->hosts().size(), 1u);
    EXPECT_EQ(u->hosts()[0].type, c.want);
    EXPECT_EQ(u->hosts()[0].name, c.name);
  }
}

}  // namespace
