#include <gtest/gtest.h>

#include <functional>
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

// ---- settings made in code (uri::from), checked by the rules connection strings follow

namespace settings_from_code {

using oid::mongo::client_settings;
using oid::mongo::secret;

client_settings one_host() {
  client_settings s;
  s.hosts = {host{host::kind::hostname, "db.example.net", 27018}};
  return s;
}

TEST(MongoUriFromSettingsTest, TakesWhatAConnectionStringWouldAndShowsNoPassword) {
  auto s = one_host();
  s.hosts.push_back(host{host::kind::ip_literal, "::1", std::nullopt});
  s.username = "app:user";
  s.password = secret("hunter2");
  s.database = "sales";
  s.max_pool_size = 10;
  s.connect_timeout = 2s;
  s.w_tag = "majority";
  s.tls_insecure = true;
  auto u = uri::from(s);
  ASSERT_TRUE(u.has_value()) << u.error().message;
  EXPECT_EQ(u->hosts(), s.hosts);
  EXPECT_EQ(u->max_pool_size(), 10u);
  EXPECT_EQ(u->connect_timeout(), 2s);
  EXPECT_EQ(u->auth_database(), "sales");
  // Normalized as parse does: tlsInsecure allows both and asks for TLS.
  EXPECT_EQ(u->tls(), true);
  EXPECT_EQ(u->tls_allow_invalid_certificates(), true);
  EXPECT_EQ(u->tls_allow_invalid_hostnames(), true);
  EXPECT_EQ(u->to_string(), "mongodb://app%3Auser:" + std::string(secret::placeholder) +
                                "@db.example.net:27018,[::1]/sales");
  EXPECT_EQ(u->to_string().find("hunter2"), std::string::npos);
  // What to_string shows parses back to the same hosts, user and database.
  auto back = uri::parse(u->to_string());
  ASSERT_TRUE(back.has_value()) << back.error().message;
  EXPECT_EQ(back->hosts(), s.hosts);
  EXPECT_EQ(back->username(), s.username);
  EXPECT_EQ(back->database(), s.database);
}

TEST(MongoUriFromSettingsTest, AParsedConnectionStringsSettingsPassAgainUnchanged) {
  for (const char* text :
       {"mongodb://a,b:27018/db?replicaSet=rs&readPreference=secondary&maxStalenessSeconds=120",
        "mongodb://u:p@h/?authMechanism=SCRAM-SHA-256&maxPoolSize=5&minPoolSize=2&w=2",
        "mongodb://%2Ftmp%2Fm.sock/?appName=x&tls=true&tlsCAFile=/ca.pem",
        "mongodb+srv://cluster.example.com/?srvMaxHosts=2",
        "mongodb://h/?authMechanism=MONGODB-X509&heartbeatFrequencyMS=600&journal=true"}) {
    SCOPED_TRACE(text);
    auto parsed = uri::parse(text);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().message;
    auto again = uri::from(parsed->settings());
    ASSERT_TRUE(again.has_value()) << again.error().message;
    EXPECT_EQ(again->hosts(), parsed->hosts());
    EXPECT_EQ(again->srv_name(), parsed->srv_name());
    EXPECT_EQ(again->tls(), parsed->tls());
    EXPECT_EQ(again->replica_set(), parsed->replica_set());
    EXPECT_EQ(again->max_pool_size(), parsed->max_pool_size());
    EXPECT_EQ(again->w_number(), parsed->w_number());
    EXPECT_EQ(again->read_preference_mode(), parsed->read_preference_mode());
    EXPECT_EQ(again->auth_database(), parsed->auth_database());
  }
}

TEST(MongoUriFromSettingsTest, RefusesWhatNoConnectionStringCouldSayNamingTheOption) {
  struct refused {
    const char* why;
    std::function<void(client_settings&)> change;
    std::error_code code;
    const char* message_has;
  };
  const auto invalid = oid::mongo::errc::invalid_uri;
  const refused cases[] = {
      {"no host", [](auto& s) { s.hosts.clear(); }, invalid, "no host"},
      {"hosts and srv", [](auto& s) { s.srv_name = "cluster.example.com"; }, invalid, "srv_name"},
      {"empty name", [](auto& s) { s.hosts[0].name.clear(); }, invalid, "empty name"},
      {"port 0", [](auto& s) { s.hosts[0].port = 0; }, invalid, "port 0"},
      {"a slash in a name", [](auto& s) { s.hosts[0].name = "a/b"; }, invalid, "host 'a/b'"},
      {"a bad IPv4",
       [](auto& s) {
         s.hosts[0] = {host::kind::ipv4, "1.2.3", 1};
       },
       invalid, "IPv4"},
      {"a socket path",
       [](auto& s) {
         s.hosts[0] = {host::kind::unix_socket, "/tmp/x", {}};
       },
       invalid, ".sock"},
      {"negative timeout", [](auto& s) { s.connect_timeout = -1ms; }, invalid, "connectTimeoutMS"},
      {"heartbeat too often", [](auto& s) { s.heartbeat_frequency = 400ms; }, invalid,
       "heartbeatFrequencyMS"},
      {"maxConnecting 0", [](auto& s) { s.max_connecting = 0; }, invalid, "maxConnecting"},
      {"long appName", [](auto& s) { s.app_name = std::string(129, 'a'); }, invalid, "appName"},
      {"negative w", [](auto& s) { s.w_number = -1; }, invalid, "option w"},
      {"two w", [](auto& s) { s.w_number = 1, s.w_tag = "majority"; }, invalid, "option w"},
      {"min over max pool",
       [](auto& s) {
         s.min_pool_size = 5;
         s.max_pool_size = 2;
       },
       invalid, "minPoolSize=5"},
      {"insecure twice",
       [](auto& s) {
         s.tls_insecure = true;
         s.tls_allow_invalid_certificates = false;
       },
       invalid, "tlsInsecure and tlsAllowInvalidCertificates"},
      {"X.509 with a password",
       [](auto& s) {
         s.auth_mechanism = "MONGODB-X509";
         s.password = secret("p");
       },
       invalid, "takes no password"},
      {"SCRAM without a user", [](auto& s) { s.auth_mechanism = "SCRAM-SHA-1"; }, invalid,
       "needs a user name"},
      {"GSSAPI", [](auto& s) { s.auth_mechanism = "GSSAPI"; }, oid::mongo::errc::unsupported,
       "not supported"},
      {"an unknown mechanism", [](auto& s) { s.auth_mechanism = "MD5"; }, invalid, "authMechanism"},
      {"srvMaxHosts without srv", [](auto& s) { s.srv_max_hosts = 1; }, invalid, "srvMaxHosts"},
      {"load balanced with two hosts",
       [](auto& s) {
         s.hosts.push_back(s.hosts[0]);
         s.load_balanced = true;
       },
       invalid, "loadBalanced=true"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.why);
    auto s = one_host();
    c.change(s);
    auto u = uri::from(s);
    ASSERT_FALSE(u.has_value());
    EXPECT_EQ(u.error().code, c.code);
    EXPECT_NE(u.error().message.find(c.message_has), std::string::npos) << u.error().message;
  }
}

TEST(MongoUriFromSettingsTest, MergeSetsOnlyWhatTheOtherSets) {
  auto parsed = uri::parse("mongodb://a,b/db?maxPoolSize=50&w=majority&appName=x").value();
  client_settings s = parsed.settings();
  client_settings nothing;
  EXPECT_FALSE(s.merge(nothing));
  client_settings code;
  code.max_pool_size = 5;
  code.w_number = 1;
  EXPECT_TRUE(s.merge(code));
  EXPECT_EQ(s.max_pool_size, 5u);
  EXPECT_EQ(s.w_number, 1);
  EXPECT_FALSE(s.w_tag.has_value());  // one w: the number replaced the name
  EXPECT_EQ(s.app_name, "x");
  EXPECT_EQ(s.hosts, parsed.hosts());
}

}  // namespace settings_from_code

}  // namespace
