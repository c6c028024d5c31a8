// timeoutMS, the client-side operations timeout, against servers scripted to stall at each stage
// an operation goes through: server selection, connection checkout, the handshake of a new
// connection, the reply; and what the commands carry (maxTimeMS, no wtimeout), how retries and
// cursors use the one deadline, and the options refused. The bounds on elapsed time below guard
// against a hang; what each test checks is the error, and where it says the time ran out.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/server_codes.hpp>
#include <string>
#include <thread>

#include "support/script_server.hpp"

namespace {

namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;
using oid::bson::builder;
using oid::bson::document;

// The maxTimeMS a recorded command carried, or -1.
std::int64_t max_time_of(const recorded& r) {
  const auto e = r.body.view().find("maxTimeMS");
  if (!e) return -1;
  if (auto i = e->get_int64()) return *i;
  if (auto i = e->get_int32()) return *i;
  return -2;
}

// An answer that says ok: 0 with `code` (and a cursor-less body).
document refusal(std::int32_t code) {
  builder b;
  b.append_double("ok", 0).append_int32("code", code).append_string("errmsg", "scripted");
  return std::move(b).extract();
}

// A cursor reply with one document {n: i} and cursor id `id` (0: the last batch).
document batch(std::string_view key, int i, std::int64_t id) {
  builder b;
  b.open_document("cursor").append_int64("id", id).append_string("ns", "db.c");
  b.open_array(key).open_document("0").append_int32("n", i).close().close();
  b.close().append_double("ok", 1.0);
  return std::move(b).extract();
}

// The ping command, kept (a view of a temporary document would dangle).
const document ping_command = ping();

void expect_timeout(const mongo::failure& f, std::string_view stage) {
  EXPECT_EQ(f.code, mongo::errc::timeout) << f.message;
  EXPECT_NE(f.message.find("timeoutMS"), std::string::npos) << f.message;
  EXPECT_NE(f.message.find(stage), std::string::npos) << f.message;
}

TEST(MongoTimeoutTest, TheUriOptionAndItsLimits) {
  const auto u = mongo::uri::parse("mongodb://h/?timeoutMS=250").value();
  ASSERT_TRUE(u.timeout().has_value());
  EXPECT_EQ(*u.timeout(), 250ms);
  EXPECT_EQ(*mongo::uri::parse("mongodb://h/?timeoutMS=0").value().timeout(), 0ms);
  EXPECT_FALSE(mongo::uri::parse("mongodb://h/").value().timeout().has_value());
  auto negative = mongo::uri::parse("mongodb://h/?timeoutMS=-1", mongo::uri_mode::strict);
  ASSERT_FALSE(negative.has_value());
  EXPECT_NE(negative.error().message.find("timeoutMS"), std::string::npos);
  // Handles inherit it and can change it, never unset it.
  auto c = mongo::client::create("mongodb://127.0.0.1:1/?timeoutMS=250").value();
  EXPECT_EQ(c.database("d").timeout(), 250ms);
  EXPECT_EQ(c.collection("d", "c").timeout(), 250ms);
  EXPECT_EQ(c.database("d").with_timeout(90ms).collection("c").timeout(), 90ms);
  auto plain = mongo::client::create("mongodb://127.0.0.1:1/").value();
  EXPECT_FALSE(plain.collection("d", "c").timeout().has_value());
}

TEST(MongoTimeoutTest, ServerSelectionEndsAtTheOperationsDeadline) {
  // Nothing listens: selection would wait serverSelectionTimeoutMS (5 s); timeoutMS is shorter.
  auto c = mongo::client::create("mongodb://127.0.0.1:" + std::to_string(unused_port()) +
                                 "/?serverSelectionTimeoutMS=5000&timeoutMS=200")
               .value();
  const auto started = std::chrono::steady_clock::now();
  auto r = c.run_command("admin", ping_command.view());
  ASSERT_FALSE(r.has_value());
  expect_timeout(r.error(), "server selection");
  EXPECT_NE(r.error().message.find("refused"), std::string::npos) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

TEST(MongoTimeoutTest, AHandshakeThatStallsEndsAtTheDeadline) {
  script_server server([](peer& p, int) {
    (void)p.read();  // the hello, never answered
    std::this_thread::sleep_for(2s);
  });
  auto c = mongo::client::create(server.uri("&connectTimeoutMS=10000&timeoutMS=200")).value();
  const auto started = std::chrono::steady_clock::now();
  auto r = c.run_command("admin", ping_command.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, mongo::errc::timeout) << r.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1500ms);
}

TEST(MongoTimeoutTest, AReplyThatStallsSaysWhichCommandRanOut) {
  recording_server server([](const std::string&, oid::bson::document_view, std::size_t n) {
    if (n == 1) std::this_thread::sleep_for(1500ms);
    return ok_reply();
  });
  // socketTimeoutMS would allow 10 s: under timeoutMS it is ignored.
  auto c = mongo::client::create(server.uri("&socketTimeoutMS=10000&timeoutMS=200")).value();
  const auto started = std::chrono::steady_clock::now();
  auto r = c.run_command("admin", ping_command.view());
  ASSERT_FALSE(r.has_value());
  expect_timeout(r.error(), "ping");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 1200ms);
  // The next operation has its own 200 ms, on a new connection.
  EXPECT_TRUE(c.run_command("admin", ping_command.view()).has_value());
}

TEST(MongoTimeoutTest, CheckoutWaitsNoLongerThanTheDeadline) {
  // One connection, held by an open cursor: the next operation waits in the pool's queue.
  recording_server server([](const std::string& name, oid::bson::document_view, std::size_t) {
    return name == "find" ? batch("firstBatch", 0, 42) : ok_reply();
  });
  auto c = mongo::client::create(server.uri("&maxPoolSize=1&timeoutMS=300")).value();
  auto coll = c.collection("db", "c");
  auto held = coll.find({}, {.timeout = 0ms});
  ASSERT_TRUE(held.has_value()) << held.error().message;
  const auto started = std::chrono::steady_clock::now();
  auto r = c.run_command("admin", ping_command.view());
  ASSERT_FALSE(r.has_value());
  expect_timeout(r.error(), "connection checkout");
  EXPECT_LT(std::chrono::steady_clock::now() - started, 2s);
}

TEST(MongoTimeoutTest, CommandsCarryTheTimeLeftAsMaxTimeMSAndNoWtimeout) {
  recording_server server;
  auto c = mongo::client::create(server.uri("&timeoutMS=1000&wTimeoutMS=500")).value();
  auto coll = c.collection("db", "c");
  builder doc;
  doc.append_int32("x", 1);
  ASSERT_TRUE(coll.insert_one(doc.view()).has_value());
  // An operation's own maxTimeMS gives way to timeoutMS's.
  ASSERT_TRUE(coll.count_documents({}, {.max_time = 60'000ms}).has_value());
  const auto seen = server.seen();
  ASSERT_EQ(seen.size(), 2u);
  for (const auto& r : seen) {
    const auto ms = max_time_of(r);
    EXPECT_GT(ms, 0) << oid::bson::to_json(r.body.view());
    EXPECT_LE(ms, 1000) << oid::bson::to_json(r.body.view());
  }
  const auto wc = seen[0].body.view().find("writeConcern");
  EXPECT_FALSE(wc && wc->get_document()->contains("wtimeout"))
      << oid::bson::to_json(seen[0].body.view());
  // timeoutMS 0: no limit, so no maxTimeMS.
  ASSERT_TRUE(coll.with_timeout(0ms).count_documents({}).has_value());
  EXPECT_EQ(max_time_of(server.seen().back()), -1);
  // Without timeoutMS, the deprecated options are sent as before.
  auto legacy = mongo::client::create(server.uri("&wTimeoutMS=500")).value();
  ASSERT_TRUE(legacy.collection("db", "c").insert_one(doc.view()).has_value());
  EXPECT_EQ(max_time_of(server.seen().back()), -1);
  EXPECT_NE(server.last().find("\"wtimeout\":500"), std::string::npos) << server.last();
}

TEST(MongoTimeoutTest, MaxTimeMSExpiredIsATimeoutAndNotRetried) {
  recording_server server([](const std::string&, oid::bson::document_view, std::size_t) {
    return refusal(mongo::server_code::max_time_ms_expired);
  });
  auto c = mongo::client::create(server.uri("&timeoutMS=1000")).value();
  auto n = c.collection("db", "c").count_documents();
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().code, mongo::errc::timeout) << n.error().message;
  ASSERT_TRUE(n.error().server.has_value());
  EXPECT_EQ(n.error().server->code, mongo::server_code::max_time_ms_expired);
  EXPECT_EQ(server.seen().size(), 1u);
  // Without timeoutMS it stays the server's error.
  auto legacy = mongo::client::create(server.uri()).value();
  auto m = legacy.collection("db", "c").count_documents();
  ASSERT_FALSE(m.has_value());
  EXPECT_EQ(m.error().code, mongo::errc::server_error);
}

TEST(MongoTimeoutTest, RetriesGoOnWhileTimeIsLeft) {
  // Three retryable refusals (ShutdownInProgress), then the answer.
  recording_server server([](const std::string&, oid::bson::document_view, std::size_t n) {
    return n <= 3 ? refusal(mongo::server_code::shutdown_in_progress)
                  : recording_server::empty_answer("aggregate", {}, n);
  });
  // Without timeoutMS: one retry, and the second refusal is the error.
  auto legacy = mongo::client::create(server.uri()).value();
  EXPECT_FALSE(legacy.collection("db", "c").count_documents().has_value());
  EXPECT_EQ(server.seen().size(), 2u);
  // With it, as many as it takes.
  recording_server patient([](const std::string&, oid::bson::document_view, std::size_t n) {
    return n <= 3 ? refusal(mongo::server_code::shutdown_in_progress)
                  : recording_server::empty_answer("aggregate", {}, n);
  });
  auto c = mongo::client::create(patient.uri("&timeoutMS=5000")).value();
  auto n = c.collection("db", "c").count_documents();
  EXPECT_TRUE(n.has_value()) << n.error().message;
  EXPECT_EQ(patient.seen().size(), 4u);
}

TEST(MongoTimeoutTest, RetriesStopAtTheDeadlineWithATimeout) {
  recording_server server([](const std::string&, oid::bson::document_view, std::size_t) {
    std::this_thread::sleep_for(20ms);
    return refusal(mongo::server_code::shutdown_in_progress);
  });
  auto c = mongo::client::create(server.uri("&timeoutMS=300")).value();
  const auto started = std::chrono::steady_clock::now();
  auto n = c.collection("db", "c").count_documents();
  ASSERT_FALSE(n.has_value());
  EXPECT_EQ(n.error().code, mongo::errc::timeout) << n.error().message;
  // Where it ran out depends on the moment (a round trip, or the retry's selection or checkout);
  // the message says which, and how long the operation had.
  EXPECT_NE(n.error().message.find("timeoutMS 300 ms"), std::string::npos) << n.error().message;
  EXPECT_GT(server.seen().size(), 2u);
  EXPECT_LT(std::chrono::steady_clock::now() - started, 3s);
}

// A server whose getMores each take 200 ms, for a cursor of three batches.
recording_server slow_cursor() {
  return recording_server([](const std::string& name, oid::bson::document_view, std::size_t n) {
    if (name == "find") return batch("firstBatch", 0, 7);
    std::this_thread::sleep_for(200ms);
    return batch("nextBatch", static_cast<int>(n), n >= 3 ? 0 : 7);
  });
}

TEST(MongoTimeoutTest, ACursorsLifeEndsAtTheDeadline) {
  auto server = slow_cursor();
  auto c = mongo::client::create(server.uri("&timeoutMS=300")).value();
  auto cur = c.collection("db", "c").find();
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());  // the first batch
  ASSERT_TRUE(cur->next().value());  // one getMore: 200 ms of 300
  auto third = cur->next();          // another 200 ms: past the cursor's 300
  ASSERT_FALSE(third.has_value());
  EXPECT_EQ(third.error().code, mongo::errc::timeout) << third.error().message;
  // getMores carry no maxTimeMS: the find's bounded the whole cursor.
  const auto seen = server.seen();
  EXPECT_GT(max_time_of(seen[0]), 0);
  EXPECT_EQ(max_time_of(seen[1]), -1);
}

TEST(MongoTimeoutTest, IterationModeGivesEachNextTheWholeTimeout) {
  auto server = slow_cursor();
  auto c = mongo::client::create(server.uri("&timeoutMS=300")).value();
  auto cur = c.collection("db", "c").find({}, {.timeout_mode = mongo::timeout_mode::iteration});
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  int documents = 0;
  while (true) {
    auto more = cur->next();
    ASSERT_TRUE(more.has_value()) << more.error().message;
    if (!*more) break;
    ++documents;
  }
  EXPECT_EQ(documents, 3);
  // In this mode no command carries maxTimeMS.
  for (const auto& r : server.seen()) EXPECT_EQ(max_time_of(r), -1);
}

TEST(MongoTimeoutTest, ACursorWhoseGetMoreTimedOutIsKilledThroughAnotherConnection) {
  auto server = slow_cursor();
  auto c = mongo::client::create(server.uri("&timeoutMS=300")).value();
  auto cur = c.collection("db", "c").find();
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());
  ASSERT_TRUE(cur->next().value());  // 200 ms of 300
  auto third = cur->next();          // cut off: the connection goes, the server's cursor stays
  ASSERT_FALSE(third.has_value());
  EXPECT_EQ(third.error().code, mongo::errc::timeout) << third.error().message;
  EXPECT_FALSE(cur->alive());
  // close() kills the server's cursor on a new connection (the old one is closed), with
  // timeoutMS afresh.
  auto closed = cur->close(1000ms);
  ASSERT_TRUE(closed.has_value()) << closed.error().message;
  const auto seen = server.seen();
  ASSERT_EQ(seen.back().body.view().begin()->key(), "killCursors");
  EXPECT_EQ(seen.back().body.view().find("cursors")->get_array()->begin()->get_int64().value(), 7);
  EXPECT_GT(max_time_of(seen.back()), 300);  // the 1000 ms given, less nothing spent yet
  // In the cursor's session: the lsid of its find.
  const auto lsid = [](const recorded& r) {
    const auto e = r.body.view().find("lsid");
    return e ? oid::bson::to_json(*e->get_document()) : std::string("(none)");
  };
  EXPECT_EQ(lsid(seen.back()), lsid(seen.front()));
}

TEST(MongoTimeoutTest, ContradictoryOptionsAreRefusedBeforeSending) {
  recording_server server;
  auto plain = mongo::client::create(server.uri()).value();
  auto c = mongo::client::create(server.uri("&timeoutMS=500")).value();
  const auto refused = [](const auto& r) {
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, mongo::errc::invalid_argument) << r.error().message;
  };
  // A mode without timeoutMS.
  refused(plain.collection("db", "c").find({}, {.timeout_mode = mongo::timeout_mode::iteration}));
  // A tailable cursor's timeout applies to each next(), never to its life.
  refused(c.collection("db", "c").find({}, {.cursor_kind = mongo::cursor_type::tailable,
                                            .timeout_mode = mongo::timeout_mode::cursor_lifetime}));
  // getMores that wait as long as the whole timeout would always time out.
  refused(c.collection("db", "c").find(
      {}, {.cursor_kind = mongo::cursor_type::tailable_await, .max_await_time = 500ms}));
  // $out in iteration mode: the pipeline runs within its first command.
  builder out;
  out.append_string("$out", "elsewhere");
  const oid::bson::document_view stages[] = {out.view()};
  refused(
      c.collection("db", "c").aggregate(stages, {.timeout_mode = mongo::timeout_mode::iteration}));
  EXPECT_TRUE(server.seen().empty());
}

}  // namespace
