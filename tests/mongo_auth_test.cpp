// Integration tests of authentication against a server that checks it: the one MONGODB_AUTH_URI
// names, a user with its password (scripts/test.sh starts FerretDB v1.24.2 with
// --test-enable-new-auth, `scripts/ferretdb.sh start-secure`, and sets it to the plain-TCP
// connection string). Without MONGODB_AUTH_URI they skip, except under CI=true, where they fail.
//
// The tests make their own users (createUser, as the admin user of MONGODB_AUTH_URI): one with
// SCRAM-SHA-256 only, one with SCRAM-SHA-1 only, and one defined in another database.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/objectid/generator.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mongo/auth/scram.hpp"
#include "mongo/wire/connection.hpp"
#include "support/ci.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
namespace mongo = oid::mongo;

class MongoAuthTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const char* text = std::getenv("MONGODB_AUTH_URI");
    if (text == nullptr || *text == '\0') return;
    auto u = mongo::uri::parse(text);
    if (!u || !u->username() || !u->password()) {
      setup_error_ = "MONGODB_AUTH_URI needs a user name and a password";
      return;
    }
    admin_uri_ = std::make_unique<mongo::uri>(*u);
    const auto& h = u->hosts().front();
    host_ = h.name + ":" + std::to_string(h.port_or_default());
    // Names and passwords of this run only, so that runs against one server do not collide.
    const std::string run = oid::generate().to_hex().substr(16);
    sha256_user_ = "oid-sha256-" + run;
    sha1_user_ = "oid-sha1-" + run;
    other_user_ = "oid-other-" + run;
    other_db_ = "oid_auth_" + run;
    password_ = "pw-" + oid::generate().to_hex();
    auto admin = mongo::client::create(*admin_uri_);
    if (!admin) {
      setup_error_ = admin.error().message;
      return;
    }
    for (const auto& [user, db, mechanism] :
         {std::tuple{sha256_user_, std::string("admin"), "SCRAM-SHA-256"},
          std::tuple{sha1_user_, std::string("admin"), "SCRAM-SHA-1"},
          std::tuple{other_user_, other_db_, "SCRAM-SHA-256"}}) {
      builder b;
      b.append_string("createUser", user).append_string("pwd", password_);
      b.open_array("roles").close();
      b.open_array("mechanisms").append_string("0", mechanism).close();
      auto r = admin->run_command(db, b.view());
      if (!r) {
        setup_error_ = "createUser " + user + ": " + r.error().message;
        return;
      }
    }
  }
  static void TearDownTestSuite() {
    if (!admin_uri_) return;
    if (auto admin = mongo::client::create(*admin_uri_)) {
      for (const auto& [user, db] :
           {std::pair{sha256_user_, std::string("admin")},
            std::pair{sha1_user_, std::string("admin")}, std::pair{other_user_, other_db_}}) {
        builder b;
        b.append_string("dropUser", user);
        (void)admin->run_command(db, b.view());
      }
    }
    admin_uri_.reset();
  }

  void SetUp() override {
    if (!admin_uri_ && setup_error_.empty()) {
      OID_SKIP_OR_FAIL_IN_CI(
          "MONGODB_AUTH_URI is not set; run scripts/ferretdb.sh start-secure PIDFILE CERTDIR and "
          "export its first line, or scripts/test.sh");
    }
    ASSERT_TRUE(setup_error_.empty()) << setup_error_;
  }

  // mongodb://user:password@host/db?options
  static std::string uri_for(const std::string& user, const std::string& password,
                             const std::string& db = "", const std::string& options = "") {
    return "mongodb://" + user + ":" + password + "@" + host_ + "/" + db +
           (options.empty() ? "" : "?" + options) + (options.empty() ? "?" : "&") +
           "serverSelectionTimeoutMS=2000";
  }

  // A command that needs a logged-in connection (before login FerretDB answers only hello,
  // ping and buildInfo): listCollections.
  static mongo::outcome<oid::bson::document> needs_login(mongo::client& c, const std::string& db) {
    builder b;
    b.append_int32("listCollections", 1);
    return c.run_command(db, b.view());
  }

  // Connects as `text` and runs a command that needs a login.
  static mongo::outcome<oid::bson::document> login(const std::string& text,
                                                   const std::string& db = "admin") {
    auto c = mongo::client::create(text);
    if (!c) return std::move(c).error();
    return needs_login(*c, db);
  }

  // Every message of a refused login must be free of the password (and of the admin's).
  void expect_no_password(const mongo::failure& f) {
    EXPECT_EQ(f.message.find(password_), std::string::npos) << f.message;
    EXPECT_EQ(f.message.find(admin_uri_->password()->reveal()), std::string::npos);
    if (f.server) {
      EXPECT_EQ(f.server->message.find(password_), std::string::npos) << f.server->message;
    }
  }

  static inline std::unique_ptr<mongo::uri> admin_uri_;
  static inline std::string setup_error_, host_, sha256_user_, sha1_user_, other_user_, other_db_,
      password_;
};

TEST_F(MongoAuthTest, AdminUserFromTheEnvironmentLogsIn) {
  auto c = mongo::client::create(*admin_uri_);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  auto r = needs_login(*c, "admin");
  EXPECT_TRUE(r.has_value()) << r.error().message;
}

TEST_F(MongoAuthTest, Sha256AndSha1UsersLogInNegotiatedAndAskedFor) {
  for (const auto& text : {uri_for(sha256_user_, password_), uri_for(sha1_user_, password_),
                           uri_for(sha256_user_, password_, "", "authMechanism=SCRAM-SHA-256"),
                           uri_for(sha1_user_, password_, "", "authMechanism=SCRAM-SHA-1")}) {
    SCOPED_TRACE(mongo::uri::parse(text)->to_string());
    auto r = login(text);
    EXPECT_TRUE(r.has_value()) << r.error().message;
  }
}

TEST_F(MongoAuthTest, WrongPasswordIsAuthenticationFailedWithTheServersCode) {
  for (const auto& user : {sha256_user_, sha1_user_}) {
    SCOPED_TRACE(user);
    const std::string wrong = password_ + "-wrong";
    auto r = login(uri_for(user, wrong));
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
    ASSERT_TRUE(r.error().server.has_value()) << r.error().message;
    EXPECT_EQ(r.error().server->code, 18);
    EXPECT_EQ(r.error().server->code_name, "AuthenticationFailed");
    EXPECT_NE(r.error().message.find(user), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find(wrong), std::string::npos) << r.error().message;
    expect_no_password(r.error());
  }
}

TEST_F(MongoAuthTest, UnknownUserIsAuthenticationFailed) {
  auto r = login(uri_for("oid-nobody-" + other_db_, password_));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 18);
  expect_no_password(r.error());
}

TEST_F(MongoAuthTest, AuthSourceNamesTheUsersDatabase) {
  // Defined in other_db_: found there by authSource, or by the URI's database, not in admin.
  auto by_source = login(uri_for(other_user_, password_, "", "authSource=" + other_db_), other_db_);
  EXPECT_TRUE(by_source.has_value()) << by_source.error().message;
  auto by_database = login(uri_for(other_user_, password_, other_db_), other_db_);
  EXPECT_TRUE(by_database.has_value()) << by_database.error().message;
  auto in_admin = login(uri_for(other_user_, password_));
  ASSERT_FALSE(in_admin.has_value());
  EXPECT_EQ(in_admin.error().code, oid::mongo::errc::authentication_failed);
  ASSERT_TRUE(in_admin.error().server.has_value());
  EXPECT_EQ(in_admin.error().server->code, 18);
  expect_no_password(in_admin.error());
}

TEST_F(MongoAuthTest, Sha1OnlyUserAskedForSha256ReportsTheServersCode) {
  auto r = login(uri_for(sha1_user_, password_, "", "authMechanism=SCRAM-SHA-256"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
  ASSERT_TRUE(r.error().server.has_value());
  EXPECT_EQ(r.error().server->code, 334) << r.error().message;
  EXPECT_NE(r.error().message.find("SCRAM-SHA-256"), std::string::npos) << r.error().message;
  expect_no_password(r.error());
}

TEST_F(MongoAuthTest, CrudOverAnAuthenticatedPoolFromSeveralThreads) {
  auto c = mongo::client::create(uri_for(sha256_user_, password_, "", "maxPoolSize=4"));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const std::string db = "oid_auth_crud_" + oid::generate().to_hex().substr(16);
  constexpr int threads = 6, per_thread = 40;
  std::atomic<int> failures{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      auto coll = c->collection(db, "c");
      for (int i = 0; i < per_thread; ++i) {
        builder b;
        b.append_int32("t", t).append_int32("i", i);
        if (!coll.insert_one(b.view())) ++failures;
      }
      builder filter;
      filter.append_int32("t", t);
      auto cur = coll.find(filter.view());
      if (!cur) {
        ++failures;
        return;
      }
      int seen = 0;
      while (true) {
        auto more = cur->next();
        if (!more) {
          ++failures;
          return;
        }
        if (!*more) break;
        ++seen;
      }
      if (seen != per_thread) ++failures;
    });
  }
  for (auto& th : pool) th.join();
  EXPECT_EQ(failures.load(), 0);
  builder drop;
  drop.append_int32("dropDatabase", 1);
  (void)c->run_command(db, drop.view());
}

// The salted password is computed once per client: connections after the first skip PBKDF2.
TEST_F(MongoAuthTest, LaterConnectionsSkipPbkdf2) {
  auto u = mongo::uri::parse(uri_for(sha256_user_, password_));
  ASSERT_TRUE(u.has_value());
  mongo::connection_options options;
  options.auth = mongo::credential::from(*u);
  options.scram_cache = std::make_shared<mongo::detail::scram_cache>();
  using clock = std::chrono::steady_clock;
  const auto open = [&] {
    const auto start = clock::now();
    auto c = mongo::connection::open(u->hosts().front(), options);
    EXPECT_TRUE(c.has_value()) << c.error().message;
    return std::chrono::duration<double, std::milli>(clock::now() - start).count();
  };
  const double first = open();
  constexpr int later_count = 10;
  double later = 0;
  for (int i = 0; i < later_count; ++i) later += open();
  later /= later_count;
  EXPECT_EQ(options.scram_cache->computed(), 1u);
  options.scram_cache.reset();
  double uncached = 0;
  for (int i = 0; i < later_count; ++i) uncached += open();
  uncached /= later_count;
  std::cout << "SCRAM-SHA-256 connection: first " << first << " ms, later (cached) " << later
            << " ms, without the cache " << uncached << " ms (mean of " << later_count << ")\n";
}

TEST_F(MongoAuthTest, PasswordIsInNoMessageOrString) {
  const auto u = mongo::uri::parse(uri_for(sha256_user_, password_));
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->to_string().find(password_), std::string::npos) << u->to_string();
  EXPECT_EQ(::testing::PrintToString(*u->password()), "<secret>");
  auto r = login(uri_for(sha256_user_, password_ + "x", "", "authMechanism=SCRAM-SHA-1"));
  ASSERT_FALSE(r.has_value());
  expect_no_password(r.error());
  EXPECT_EQ(r.error().message.find(password_ + "x"), std::string::npos);
}

}  // namespace
