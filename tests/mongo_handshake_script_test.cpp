// What a client sends in its handshake and commands, against a scripted server that records every
// message of every connection, the handshake and authentication included (FerretDB cannot show
// what arrives): the Stable API (oid/mongo/server_api.hpp) and the client metadata with what
// wrapping libraries append (oid/mongo/handshake.hpp). What FerretDB does with apiVersion:
// docs/client.md; the specification's suites: tests/unified (versioned-api, handshake).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/server_api.hpp>
#include <string>
#include <thread>
#include <vector>

#include "support/documents.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// The commands the tests send (views of temporaries do not compile).
const document ping_command = ping();
const document one_document = [] {
  builder b;
  b.append_int32("_id", 1);
  return std::move(b).extract();
}();

// Every message a client sends, in order, with the connection it came on. Answers hello (or
// isMaster) as a writable primary, or with CommandNotFound when `hello_unknown` (a server before
// 4.4.2), saslStart and saslContinue with done: true, find with a cursor of one document that a
// getMore ends, killCursors and anything else with ok: 1; messages sent with moreToCome are not
// answered.
class message_log {
 public:
  explicit message_log(bool hello_unknown = false)
      : server_([this, hello_unknown](peer& p, int number) {
          while (auto m = p.read()) {
            const std::string name = command_name(*m);
            {
              std::lock_guard lock(mutex_);
              seen_.push_back({number, document(m->body)});
            }
            changed_.notify_all();
            if ((m->flags & mongo::op_msg_flags::more_to_come) != 0) continue;
            const document reply = answer(name, hello_unknown);
            p.reply(*m, reply.view());
          }
        }) {}

  std::string uri(std::string_view options = "") const { return server_.uri(options); }

  struct message {
    int connection;
    document body;
  };
  std::vector<message> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  /// The messages whose command is `name`.
  std::vector<document> named(std::string_view name) {
    std::vector<document> out;
    for (auto& m : seen()) {
      const auto first = m.body.view().begin();
      if (first != m.body.view().end() && first->key() == name) out.push_back(m.body);
    }
    return out;
  }
  /// Waits (up to 10 s, for a slow host) until `n` messages named `name` arrived.
  bool wait_for(std::string_view name, std::size_t n) {
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    std::unique_lock lock(mutex_);
    while (true) {
      std::size_t count = 0;
      for (const auto& m : seen_) {
        const auto first = m.body.view().begin();
        count += first != m.body.view().end() && first->key() == name;
      }
      if (count >= n) return true;
      if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) return false;
    }
  }

 private:
  static document answer(const std::string& name, bool hello_unknown) {
    builder b;
    if (name == "hello" || name == "isMaster") {
      if (hello_unknown && name == "hello") {
        b.append_double("ok", 0.0)
            .append_int32("code", 59)
            .append_string("codeName", "CommandNotFound");
        b.append_string("errmsg", "no such command: 'hello'");
        return std::move(b).extract();
      }
      b.append_bool("isWritablePrimary", true).append_bool("ismaster", true);
      b.append_int32("maxWireVersion", 17).append_int32("minWireVersion", 0);
      b.append_double("ok", 1.0);
    } else if (name == "saslStart" || name == "saslContinue") {
      b.append_int32("conversationId", 1).append_bool("done", true);
      b.append_binary("payload", oid::bson::binary_subtype::generic, {});
      b.append_double("ok", 1.0);
    } else if (name == "find" || name == "getMore") {
      b.open_document("cursor")
          .append_int64("id", name == "find" ? 5 : 0)
          .append_string("ns", "db.c");
      b.open_array(name == "find" ? "firstBatch" : "nextBatch");
      if (name == "find") b.open_document("0").append_int32("a", 1).close();
      b.close().close().append_double("ok", 1.0);
    } else {
      b.append_int32("n", 1).append_double("ok", 1.0);
    }
    return std::move(b).extract();
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<message> seen_;
  script_server server_;
};

// The Stable API fields of `body` as JSON: {"apiVersion": ..., "apiStrict": ...,
// "apiDeprecationErrors": ...}, those present only.
std::string api_fields(document_view body) {
  builder b;
  for (const auto& e : body) {
    if (e.key() == "apiVersion" || e.key() == "apiStrict" || e.key() == "apiDeprecationErrors") {
      b.append_element(e.key(), e);
    }
  }
  return oid::bson::to_json(b.view());
}

// Version "1" with the two flags as given.
mongo::server_api api(std::optional<bool> strict = std::nullopt,
                      std::optional<bool> deprecation_errors = std::nullopt) {
  mongo::server_api a;
  a.strict = strict;
  a.deprecation_errors = deprecation_errors;
  return a;
}

mongo::client client_of(const std::string& uri, std::optional<mongo::server_api> api) {
  mongo::client_options o;
  o.server_api = api;
  auto c = mongo::client::create(uri, std::move(o));
  EXPECT_TRUE(c.has_value()) << c.error().message;
  return std::move(c).value();
}

TEST(MongoServerApiTest, EveryCommandCarriesTheDeclaredVersionAndTheFlagsThatAreSet) {
  message_log log;
  {
    auto c = client_of(log.uri(), api(true, false));
    auto coll = c.collection("db", "c");
    ASSERT_TRUE(c.run_command("admin", ping_command.view()).has_value());
    auto cur = coll.find({}, {.batch_size = 1});
    ASSERT_TRUE(cur.has_value()) << cur.error().message;
    int seen = 0;
    while (auto more = cur->next()) {
      ASSERT_TRUE(more.has_value());
      if (!*more) break;
      ++seen;
    }
    EXPECT_EQ(seen, 1);
    ASSERT_TRUE(coll.insert_one(one_document.view()).has_value());
    // A cursor the client closes early: killCursors.
    auto open = coll.find({}, {.batch_size = 1});
    ASSERT_TRUE(open.has_value());
    ASSERT_TRUE(open->close().has_value());
  }
  const auto all = log.seen();
  ASSERT_FALSE(all.empty());
  // The handshake is hello (never isMaster) and carries the version; so does every command.
  EXPECT_TRUE(log.named("isMaster").empty());
  ASSERT_FALSE(log.named("hello").empty());
  for (const auto& m : all) {
    SCOPED_TRACE(oid::bson::to_json(m.body.view()));
    EXPECT_EQ(api_fields(m.body.view()),
              R"({"apiVersion":"1","apiStrict":true,"apiDeprecationErrors":false})");
  }
  for (const auto* name : {"ping", "find", "getMore", "insert", "killCursors"}) {
    EXPECT_FALSE(log.named(name).empty()) << name;
  }
}

TEST(MongoServerApiTest, UnsetFlagsAreNotSentAndNoVersionSendsNothing) {
  message_log with, without;
  {
    auto c = client_of(with.uri(), api());
    ASSERT_TRUE(c.run_command("admin", ping_command.view()).has_value());
    auto plain = client_of(without.uri(), std::nullopt);
    ASSERT_TRUE(plain.run_command("admin", ping_command.view()).has_value());
  }
  for (const auto& m : with.seen()) EXPECT_EQ(api_fields(m.body.view()), R"({"apiVersion":"1"})");
  ASSERT_FALSE(without.seen().empty());
  for (const auto& m : without.seen()) EXPECT_EQ(api_fields(m.body.view()), "{}");
}

TEST(MongoServerApiTest, UnacknowledgedWritesCarryTheVersion) {
  message_log log;
  {
    auto c = client_of(log.uri("&w=0"), api(std::nullopt, true));
    ASSERT_TRUE(c.collection("db", "c").insert_one(one_document.view()).has_value());
    ASSERT_TRUE(log.wait_for("insert", 1));
  }
  const auto inserts = log.named("insert");
  ASSERT_EQ(inserts.size(), 1u);
  EXPECT_EQ(api_fields(inserts[0].view()), R"({"apiVersion":"1","apiDeprecationErrors":true})");
}

TEST(MongoServerApiTest, AuthenticationCommandsCarryTheVersion) {
  message_log log;
  mongo::client_options o;
  o.server_api = api(false);
  auto c =
      mongo::client::create("mongodb://u:p@" + log.uri().substr(std::string("mongodb://").size()) +
                                "&authMechanism=PLAIN&authSource=%24external",
                            std::move(o));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_TRUE(c->run_command("admin", ping_command.view()).has_value());
  const auto starts = log.named("saslStart");
  ASSERT_EQ(starts.size(), 1u);
  EXPECT_EQ(api_fields(starts[0].view()), R"({"apiVersion":"1","apiStrict":false})");
  for (const auto& h : log.named("hello")) {
    EXPECT_EQ(api_fields(h.view()), R"({"apiVersion":"1","apiStrict":false})");
  }
}

TEST(MongoServerApiTest, AServerWithoutHelloFailsTheHandshakeInsteadOfLegacyHello) {
  {
    message_log old(/*hello_unknown=*/true);
    auto c = client_of(old.uri("&serverSelectionTimeoutMS=300"), api());
    EXPECT_FALSE(c.run_command("admin", ping_command.view()).has_value());
    EXPECT_TRUE(old.named("isMaster").empty());
    EXPECT_FALSE(old.named("hello").empty());
    EXPECT_TRUE(old.named("ping").empty());
  }
  // Without a declared version the client asks isMaster instead, and goes on.
  message_log old(/*hello_unknown=*/true);
  auto c = client_of(old.uri(), std::nullopt);
  EXPECT_TRUE(c.run_command("admin", ping_command.view()).has_value());
  EXPECT_FALSE(old.named("isMaster").empty());
}

TEST(MongoServerApiTest, TheMonitorsHeartbeatsCarryTheVersion) {
  message_log log;
  // Monitored (no directConnection): the monitor's connection sends hello every
  // heartbeatFrequencyMS after its handshake.
  const std::string uri = log.uri();
  const std::string monitored =
      uri.substr(0, uri.find('?')) + "?heartbeatFrequencyMS=500&serverSelectionTimeoutMS=5000";
  auto c = client_of(monitored, api());
  ASSERT_TRUE(c.run_command("admin", ping_command.view()).has_value());
  ASSERT_TRUE(log.wait_for("hello", 3));  // two handshakes and at least one heartbeat
  for (const auto& h : log.named("hello")) EXPECT_EQ(api_fields(h.view()), R"({"apiVersion":"1"})");
}

// The `client` document of the hellos the server received, in order, as JSON.
std::vector<std::string> hello_clients(message_log& log) {
  std::vector<std::string> out;
  for (const auto& h : log.named("hello")) {
    const auto c = h.view().find("client");
    out.push_back(c && c->get_document() ? oid::bson::to_json(*c->get_document()) : "(none)");
  }
  return out;
}

TEST(MongoHandshakeMetadataScriptTest, WrappersGivenAtCreationAndLaterReachNewConnectionsOnly) {
  message_log log;
  mongo::client_options o;
  o.driver_info = {{"library", "1.2", "Library Platform"}};
  // maxIdleTimeMS=1: an idle connection is closed at the next check-out and a new one opened.
  auto c = mongo::client::create(log.uri("&maxIdleTimeMS=1&appName=app"), std::move(o));
  ASSERT_TRUE(c.has_value()) << c.error().message;
  ASSERT_TRUE(c->run_command("admin", ping_command.view()).has_value());
  ASSERT_TRUE(c->append_metadata({"framework", "2.0", ""}).has_value());
  // Appending opens and closes nothing: no hello came since.
  EXPECT_EQ(log.named("hello").size(), 1u);
  std::this_thread::sleep_for(20ms);  // the connection becomes idle past maxIdleTimeMS
  ASSERT_TRUE(c->run_command("admin", ping_command.view()).has_value());
  const auto clients = hello_clients(log);
  ASSERT_EQ(clients.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(clients[i]);
    EXPECT_EQ(clients[i].find(R"({"application":{"name":"app"},"driver":{"name":")"), 0u);
    EXPECT_NE(clients[i].find(R"("os":{"type":")"), std::string::npos);
  }
  EXPECT_NE(clients[0].find(R"("name":"oid|library","version":")"), std::string::npos);
  EXPECT_NE(clients[0].find(R"(|1.2"})"), std::string::npos);
  EXPECT_NE(clients[0].find(R"(|Library Platform")"), std::string::npos);
  EXPECT_NE(clients[1].find(R"("name":"oid|library|framework","version":")"), std::string::npos);
  EXPECT_NE(clients[1].find(R"(|1.2|2.0"})"), std::string::npos);
  EXPECT_NE(clients[1].find(R"(|Library Platform")"), std::string::npos);

  // A refused wrapper fails the client's creation, before anything is sent.
  mongo::client_options bad;
  bad.driver_info = {{"a|b", "", ""}};
  auto refused = mongo::client::create(log.uri(), std::move(bad));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, mongo::errc::invalid_argument);
  EXPECT_EQ(log.named("hello").size(), 2u);
}

TEST(MongoServerApiTest, OnlyTheKnownVersionParses) {
  const auto one = mongo::server_api::parse_version("1");
  ASSERT_TRUE(one.has_value());
  EXPECT_EQ(*one, mongo::server_api::v1);
  EXPECT_EQ(mongo::server_api::name(*one), "1");
  for (const auto* text : {"2", "", "1.0", " 1", "v1"}) {
    SCOPED_TRACE(text);
    const auto r = mongo::server_api::parse_version(text);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, mongo::errc::invalid_argument);
  }
}

}  // namespace
