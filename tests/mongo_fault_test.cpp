// Faults a real server will not produce on demand: a small scripted server inside the test, on a
// loopback port, that answers the handshake and then does what each test tells it (stall, close,
// send garbage, answer the wrong request, record what the client sent). Every fault must become a
// typed error within the configured timeout, and the next operation must work on a fresh
// connection.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <variant>
#include <vector>

#include "mongo/auth/scram.hpp"
#include "support/script_server.hpp"

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

// A script whose first connection misbehaves with `fault` after the handshake and whose later
// connections answer every command with ok: 1.
std::function<void(peer&, int)> first_connection(
    std::function<void(peer&, const mongo::op_msg&)> fault) {
  return [fault](peer& p, int number) {
    if (!p.handshake()) return;
    const document ok = ok_reply();
    while (auto m = p.read()) {
      if (number == 0) {
        fault(p, *m);
        return;
      }
      p.reply(*m, ok.view());
    }
  };
}

// Runs ping once (expecting `want`) and again (expecting success, on a fresh connection).
void expect_fault_then_recovery(script_server& server, std::string_view options,
                                std::error_code want) {
  auto c = mongo::client::create(server.uri(options)).value();
  const document cmd = ping();
  const auto started = std::chrono::steady_clock::now();
  auto first = c.run_command("admin", cmd.view());
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(first.has_value());
  EXPECT_EQ(first.error().code, want) << first.error().message;
  EXPECT_FALSE(first.error().message.empty());
  EXPECT_LT(took, 10s);  // a bound against hanging, not a timing measurement
  auto second = c.run_command("admin", cmd.view());
  EXPECT_TRUE(second.has_value()) << second.error().message;
  EXPECT_EQ(server.connections(), 2);
}

TEST(MongoFaultTest, ConnectionRefused) {
  const int port = unused_port();
  auto c = mongo::client::create("mongodb://127.0.0.1:" + std::to_string(port) +
                                 "/?serverSelectionTimeoutMS=300")
               .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  // The seed's monitor finds nothing there: selection waits for a server until
  // serverSelectionTimeoutMS, then says what the monitor saw.
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout);
  EXPECT_NE(r.error().message.find("refused"), std::string::npos) << r.error().message;
  // With directConnection=true the pool's own attempts decide: a connection error.
  auto direct = mongo::client::create("mongodb://127.0.0.1:" + std::to_string(port) +
                                      "/?directConnection=true&serverSelectionTimeoutMS=300")
                    .value();
  r = direct.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::connection_failed);
  EXPECT_NE(r.error().message.find("refused"), std::string::npos) << r.error().message;
}

TEST(MongoFaultTest, ServerThatNeverAnswersTheHandshake) {
  script_server server([](peer& p, int) {
    (void)p.read();
    std::this_thread::sleep_for(1500ms);
  });
  // Repeating serverSelectionTimeoutMS overrides the script server's default (with a warning).
  auto c = mongo::client::create(server.uri("&connectTimeoutMS=200&serverSelectionTimeoutMS=200"))
               .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::timeout) << r.error().message;
}

TEST(MongoFaultTest, StalledServerIsATimeoutAndTheNextOperationRecovers) {
  script_server server(first_connection([](peer&, const mongo::op_msg&) {
    std::this_thread::sleep_for(1500ms);  // never answers this command
  }));
  expect_fault_then_recovery(server, "&socketTimeoutMS=200", oid::mongo::errc::timeout);
}

TEST(MongoFaultTest, MalformedReply) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    // A header announcing 30 bytes, then an opCode that is not OP_MSG.
    std::vector<std::uint8_t> bad(30, 0);
    bad[0] = 30;
    bad[8] = static_cast<std::uint8_t>(m.request_id);
    bad[12] = 1;  // OP_REPLY
    p.send(bad);
  }));
  expect_fault_then_recovery(server, "", oid::mongo::errc::invalid_message);
}

TEST(MongoFaultTest, ReplyWithAnImpossibleLength) {
  script_server server(first_connection([](peer& p, const mongo::op_msg&) {
    p.send({0xFF, 0xFF, 0xFF, 0x7F, 1, 0, 0, 0, 0, 0, 0, 0, 0xDD, 0x07, 0, 0});
  }));
  expect_fault_then_recovery(server, "", errc::bad_length_prefix);
}

TEST(MongoFaultTest, TruncatedReply) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    mongo::op_msg r;
    r.response_to = m.request_id;
    const document ok = ok_reply();
    r.body = ok.view();
    auto bytes = mongo::encode_op_msg(r).value();
    bytes.resize(bytes.size() - 3);
    p.send(bytes);
    p.close();
  }));
  expect_fault_then_recovery(server, "", oid::mongo::errc::connection_closed);
}

// A reply of a few megabytes (the size of a cursor batch) as the bytes of `m`'s answer: ok: 1 and
// a 3 MB string of 'x'.
std::vector<std::uint8_t> large_reply(const mongo::op_msg& m) {
  mongo::op_msg r;
  r.response_to = m.request_id;
  builder b;
  b.append_string("big", std::string(3 * 1024 * 1024, 'x')).append_double("ok", 1.0);
  r.body = b.view();
  return mongo::encode_op_msg(r).value();
}

// Sends bytes [from, to) of `bytes` in pieces of 100 KB, 2 ms apart: a server slower than the
// client, so that the client waits many times within one message.
void send_slowly(peer& p, const std::vector<std::uint8_t>& bytes, std::size_t from,
                 std::size_t to) {
  for (std::size_t at = from; at < to;) {
    const std::size_t n = std::min<std::size_t>(100 * 1024, to - at);
    p.send(std::vector<std::uint8_t>(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                     bytes.begin() + static_cast<std::ptrdiff_t>(at + n)));
    at += n;
    std::this_thread::sleep_for(2ms);
  }
}

// The client waits for large pieces of a large reply (SO_RCVLOWAT), never for more than is still
// to come: the tail of the message, shorter than a piece, must not leave it waiting.
TEST(MongoFaultTest, ALargeReplyInSlowPiecesArrivesWhole) {
  script_server server([](peer& p, int) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      const auto bytes = large_reply(*m);
      send_slowly(p, bytes, 0, bytes.size());
    }
  });
  auto c = mongo::client::create(server.uri("&socketTimeoutMS=5000")).value();
  const document cmd = ping();
  for (int i = 0; i < 2; ++i) {  // and again on the same connection
    auto r = c.run_command("admin", cmd.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    const auto big = r->view().find("big")->get_string().value();
    EXPECT_EQ(big.size(), 3u * 1024 * 1024);
    EXPECT_EQ(big.find_first_not_of('x'), std::string_view::npos);
  }
  EXPECT_EQ(server.connections(), 1);
}

TEST(MongoFaultTest, ALargeReplyCutShortIsConnectionClosed) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    const auto bytes = large_reply(m);
    send_slowly(p, bytes, 0, bytes.size() - 1000);
    p.close();
  }));
  expect_fault_then_recovery(server, "", oid::mongo::errc::connection_closed);
}

TEST(MongoFaultTest, ALargeReplyThatStallsIsATimeout) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    const auto bytes = large_reply(m);
    send_slowly(p, bytes, 0, bytes.size() - 1000);
    std::this_thread::sleep_for(1500ms);  // the last 1,000 bytes never come
  }));
  expect_fault_then_recovery(server, "&socketTimeoutMS=300", oid::mongo::errc::timeout);
}

TEST(MongoFaultTest, CorruptChecksum) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    mongo::op_msg r;
    r.response_to = m.request_id;
    r.flags = mongo::op_msg_flags::checksum_present;
    const document ok = ok_reply();
    r.body = ok.view();
    auto bytes = mongo::encode_op_msg(r).value();
    bytes.back() ^= 1;
    p.send(bytes);
  }));
  expect_fault_then_recovery(server, "", oid::mongo::errc::checksum_mismatch);
}

TEST(MongoFaultTest, ReplyToTheWrongRequest) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    const document ok = ok_reply();
    p.reply(m, ok.view(), m.request_id + 77);
  }));
  expect_fault_then_recovery(server, "", oid::mongo::errc::unexpected_reply);
}

TEST(MongoFaultTest, ResetInTheMiddleOfACursor) {
  script_server server([](peer& p, int number) {
    if (!p.handshake()) return;
    while (auto m = p.read()) {
      if (command_name(*m) == "find") {
        builder b;
        b.open_document("cursor").append_int64("id", 42).append_string("ns", "db.c");
        b.open_array("firstBatch");
        b.open_document("0").append_int32("n", 1).close();
        b.close().close().append_double("ok", 1.0);
        p.reply(*m, b.view());
      } else if (number == 0 && command_name(*m) == "getMore") {
        p.close();  // the reset
        return;
      } else {
        const document ok = ok_reply();
        p.reply(*m, ok.view());
      }
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  auto coll = c.collection("db", "c");
  auto cur = coll.find();
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());
  EXPECT_EQ(cur->current().find("n")->get_int32().value(), 1);
  auto more = cur->next();
  ASSERT_FALSE(more.has_value());
  EXPECT_EQ(more.error().code, oid::mongo::errc::connection_closed);
  EXPECT_EQ(cur->id(), 0);
  EXPECT_FALSE(cur->next().value());  // exhausted after the error
  const document cmd = ping();
  EXPECT_TRUE(c.run_command("admin", cmd.view()).has_value());
  EXPECT_EQ(server.connections(), 2);
}

TEST(MongoFaultTest, DroppingACursorEarlySendsKillCursors) {
  std::mutex m;
  std::vector<std::string> seen;
  std::int64_t killed = 0;
  script_server server([&](peer& p, int) {
    if (!p.handshake()) return;
    while (auto msg = p.read()) {
      {
        std::lock_guard lock(m);
        seen.push_back(command_name(*msg));
        if (command_name(*msg) == "killCursors") {
          killed = msg->body.find("cursors")->get_array()->begin()->get_int64().value();
        }
      }
      builder b;
      if (command_name(*msg) == "find") {
        b.open_document("cursor").append_int64("id", 7777).append_string("ns", "db.c");
        b.open_array("firstBatch").open_document("0").append_int32("n", 1).close().close();
        b.close();
      }
      b.append_double("ok", 1.0);
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  {
    auto cur = c.collection("db", "c").find();
    ASSERT_TRUE(cur.has_value());
    ASSERT_TRUE(cur->next().value());
  }
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());  // after killCursors, in order
  std::lock_guard lock(m);
  EXPECT_EQ(seen, (std::vector<std::string>{"find", "killCursors", "ping"}));
  EXPECT_EQ(killed, 7777);
}

TEST(MongoFaultTest, InsertsAreSplitByMaxWriteBatchSizeIntoDocumentSequences) {
  std::mutex m;
  std::vector<std::size_t> batches;
  std::vector<std::uint32_t> flags;
  script_server server([&](peer& p, int) {
    if (!p.handshake(3)) return;
    while (auto msg = p.read()) {
      std::size_t count = 0;
      for (const auto& seq : msg->sequences) {
        if (seq.identifier == "documents") count += seq.documents.size();
        for (const auto& d : seq.documents) {
          EXPECT_EQ(d.begin()->key(), "_id");  // ids made on the client, first
        }
      }
      {
        std::lock_guard lock(m);
        batches.push_back(count);
        flags.push_back(msg->flags);
      }
      if (msg->flags & mongo::op_msg_flags::more_to_come) continue;  // w: 0: no reply
      acknowledge_insert(p, *msg, count);
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  const numbered_documents batch = numbered(10);
  auto coll = c.collection("db", "c");
  auto r = coll.insert_many(batch.views);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 10);
  ASSERT_EQ(r->ids.size(), 10u);
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  auto fire = coll.insert_many(batch.views, w0);
  ASSERT_TRUE(fire.has_value()) << fire.error().message;
  EXPECT_EQ(fire->inserted, 0);
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
  std::lock_guard lock(m);
  EXPECT_EQ(batches, (std::vector<std::size_t>{3, 3, 3, 1, 3, 3, 3, 1, 0}));
  const std::uint32_t w0_flag = mongo::op_msg_flags::more_to_come;
  EXPECT_EQ(flags, (std::vector<std::uint32_t>{0, 0, 0, 0, w0_flag, w0_flag, w0_flag, w0_flag, 0}));
}

// Inserts {n: 1} three times with w: 0 (fire-and-forget: the client reads no reply).
void insert_three_unacknowledged(mongo::collection& coll) {
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  builder d;
  d.append_int32("n", 1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(coll.insert_one(d.view(), w0).has_value());
}

TEST(MongoFaultTest, UnrequestedRepliesToFireAndForgetMessagesAreSkipped) {
  // FerretDB's behaviour: it answers every OP_MSG, moreToCome or not.
  script_server server([](peer& p, int) {
    if (!p.handshake()) return;
    int n = 0;
    while (auto msg = p.read()) {
      builder b;
      b.append_int32("seq", n++).append_double("ok", 1.0);
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  auto coll = c.collection("db", "c");
  insert_three_unacknowledged(coll);
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->view().find("seq")->get_int32().value(), 3);  // its own reply, not a stale one
}

// A connection reads as much as has arrived, so one read may hold several messages: here stale
// replies to fire-and-forget inserts arrive in one segment around a find's reply. The cursor
// keeps the buffer its batch is in; the stale replies after it stay with the connection, which
// skips them before the next command's own reply; and the batch's documents stay valid while
// the connection is used again.
TEST(MongoFaultTest, SeveralMessagesInOneReadAreTakenOneByOne) {
  script_server server([](peer& p, int) {
    if (!p.handshake()) return;
    std::vector<std::int32_t> unanswered;
    const auto stale = [&](std::int32_t to) {
      mongo::op_msg r;
      r.request_id = 500 + to;
      r.response_to = to;
      const document ok = ok_reply();
      r.body = ok.view();
      return mongo::encode_op_msg(r).value();
    };
    while (auto msg = p.read()) {
      if (msg->flags & mongo::op_msg_flags::more_to_come) {
        unanswered.push_back(msg->request_id);
        continue;
      }
      builder b;
      if (command_name(*msg) == "find") {
        b.open_document("cursor").append_int64("id", 0).append_string("ns", "db.c");
        b.open_array("firstBatch");
        b.open_document("0").append_int32("n", 1).close();
        b.open_document("1").append_int32("n", 2).close();
        b.close().close();
      } else {
        b.append_string("seq", "ping");
      }
      b.append_double("ok", 1.0);
      mongo::op_msg r;
      r.request_id = 900;
      r.response_to = msg->request_id;
      r.body = b.view();
      std::vector<std::uint8_t> all;
      const auto append = [&](const std::vector<std::uint8_t>& m) {
        all.insert(all.end(), m.begin(), m.end());
      };
      if (!unanswered.empty()) append(stale(unanswered[0]));
      append(mongo::encode_op_msg(r).value());
      for (std::size_t i = 1; i < unanswered.size(); ++i) append(stale(unanswered[i]));
      unanswered.clear();
      p.send(all);
    }
  });
  auto c = mongo::client::create(server.uri("&maxPoolSize=1")).value();
  auto coll = c.collection("db", "c");
  insert_three_unacknowledged(coll);
  auto cur = coll.find();
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());
  const document_view first = cur->current();
  const document cmd = ping();
  for (int i = 0; i < 2; ++i) {  // the stale replies carried over are skipped, then none
    auto r = c.run_command("admin", cmd.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_EQ(r->view().find("seq")->get_string().value(), "ping");
  }
  EXPECT_EQ(first.find("n")->get_int32().value(), 1);  // the batch outlives the reuse
  ASSERT_TRUE(cur->next().value());
  EXPECT_EQ(cur->current().find("n")->get_int32().value(), 2);
  EXPECT_FALSE(cur->next().value());
  EXPECT_EQ(server.connections(), 1);
}

TEST(MongoFaultTest, ServerErrorsAreTyped) {
  script_server server([](peer& p, int) {
    if (!p.handshake()) return;
    while (auto msg = p.read()) {
      builder b;
      const std::string name = command_name(*msg);
      if (name == "insert") {
        b.append_int32("n", 1);
        b.open_array("writeErrors").open_document("0");
        b.append_int32("index", 1).append_int32("code", 11000);
        b.append_string("errmsg",
                        "E11000 duplicate key error collection: db.c index: name_1 dup key: "
                        "{ name: \"x\" }");
        b.open_document("keyPattern").append_int32("name", 1).close();
        b.open_document("keyValue").append_string("name", "x").close();
        b.close().close();
        b.append_double("ok", 1.0);
      } else if (name == "delete") {
        b.append_int32("n", 1);
        b.open_document("writeConcernError").append_int32("code", 64);
        b.append_string("codeName", "WriteConcernFailed")
            .append_string("errmsg", "waiting timed out");
        b.close().append_double("ok", 1.0);
      } else {
        b.append_double("ok", 0.0).append_string("errmsg", "not allowed here");
        b.append_int32("code", 13).append_string("codeName", "Unauthorized");
      }
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  auto coll = c.collection("db", "c");
  builder a, b2;
  a.append_string("name", "y");
  b2.append_string("name", "x");
  const std::vector<document_view> docs{a.view(), b2.view()};
  auto dup = coll.insert_many(docs);
  ASSERT_FALSE(dup.has_value());
  EXPECT_EQ(dup.error().code, oid::mongo::errc::duplicate_key);
  EXPECT_EQ(dup.error().written, 1);
  ASSERT_EQ(dup.error().write_errors.size(), 1u);
  const auto& we = dup.error().write_errors[0];
  EXPECT_EQ(we.code, 11000);
  EXPECT_EQ(we.index, 1u);
  EXPECT_EQ(we.index_name, "name_1");
  ASSERT_TRUE(we.key_value.has_value());
  EXPECT_EQ(we.key_value->view().find("name")->get_string().value(), "x");
  ASSERT_TRUE(we.key_pattern.has_value());

  auto wc = coll.delete_one({});
  ASSERT_FALSE(wc.has_value());
  EXPECT_EQ(wc.error().code, oid::mongo::errc::write_concern_failed);
  ASSERT_TRUE(wc.error().write_concern_error.has_value());
  EXPECT_EQ(wc.error().write_concern_error->code_name, "WriteConcernFailed");

  const document cmd = ping();
  auto refused = c.run_command("admin", cmd.view());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, oid::mongo::errc::server_error);
  ASSERT_TRUE(refused.error().server.has_value());
  EXPECT_EQ(refused.error().server->code, 13);
  EXPECT_EQ(refused.error().server->code_name, "Unauthorized");
  EXPECT_EQ(refused.error().server->message, "not allowed here");
  EXPECT_THROW((void)refused.value(), mongo::operation_error);
}

TEST(MongoFaultTest, ThePoolNeverOpensMoreThanMaxPoolSize) {
  script_server server([](peer& p, int) {
    if (!p.handshake()) return;
    const document ok = ok_reply();
    while (auto msg = p.read()) {
      std::this_thread::sleep_for(2ms);
      p.reply(*msg, ok.view());
    }
  });
  auto c = mongo::client::create(server.uri("&maxPoolSize=2")).value();
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&] {
      const document cmd = ping();
      for (int i = 0; i < 10; ++i) {
        if (!c.run_command("admin", cmd.view()).has_value()) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(server.connections(), 2);
}

TEST(MongoFaultTest, UnixDomainSocket) {
  const std::string path = "/tmp/oid-test-" + std::to_string(::getpid()) + ".sock";
  script_server server(
      [](peer& p, int) {
        if (!p.handshake()) return;
        const document ok = ok_reply();
        while (auto m = p.read()) p.reply(*m, ok.view());
      },
      path);
  std::string encoded;
  for (char ch : path) encoded += ch == '/' ? std::string("%2F") : std::string(1, ch);
  auto c = mongo::client::create("mongodb://" + encoded + "/?serverSelectionTimeoutMS=2000");
  ASSERT_TRUE(c.has_value()) << c.error().message;
  EXPECT_EQ(c->uri().hosts()[0].type, mongo::host::kind::unix_socket);
  const document cmd = ping();
  auto r = c->run_command("admin", cmd.view());
  EXPECT_TRUE(r.has_value()) << r.error().message;
}

TEST(MongoFaultTest, DocumentAboveMaxBsonObjectSizeIsRefusedBeforeSending) {
  std::atomic<int> inserts{0};
  script_server server([&](peer& p, int) {
    if (!p.handshake(100'000, 64)) return;
    while (auto m = p.read()) {
      if (command_name(*m) == "insert") ++inserts;
      const document ok = ok_reply();
      p.reply(*m, ok.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  builder small, big;
  small.append_int32("n", 1);
  big.append_string("s", std::string(100, 'x'));
  const std::vector<document_view> docs{small.view(), big.view()};
  auto r = c.collection("db", "c").insert_many(docs);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::too_large);
  EXPECT_NE(r.error().message.find("document 1"), std::string::npos) << r.error().message;
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
  EXPECT_EQ(inserts.load(), 0);
}

TEST(MongoFaultTest, BatchesStayWithinMaxMessageSizeBytes) {
  constexpr std::int32_t limit = 2000;
  std::mutex m;
  std::vector<std::size_t> sizes, counts;
  script_server server([&](peer& p, int) {
    if (!p.handshake(100'000, 16 * 1024 * 1024, limit)) return;
    while (auto msg = p.read()) {
      std::size_t count = 0, bytes = 16 + 4 + 1 + msg->body.size();
      for (const auto& seq : msg->sequences) {
        bytes += 1 + 4 + seq.identifier.size() + 1;
        for (const auto& d : seq.documents) bytes += d.size();
        count += seq.documents.size();
      }
      {
        std::lock_guard lock(m);
        sizes.push_back(bytes);
        counts.push_back(count);
      }
      acknowledge_insert(p, *msg, count);
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  const numbered_documents batch = numbered(20, 250);
  auto r = c.collection("db", "c").insert_many(batch.views);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 20);
  std::lock_guard lock(m);
  ASSERT_GT(sizes.size(), 1u);
  std::size_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_LE(sizes[i], static_cast<std::size_t>(limit));
    total += counts[i];
  }
  EXPECT_EQ(total, 20u);
}

// ---- authentication against a scripted server ------------------------------------------------
// The server side of SCRAM-SHA-256, computed with OpenSSL and the private SCRAM helpers, so that
// the client's speculative path (which FerretDB does not answer in OP_MSG) and its refusals of a
// dishonest server can be tested.

std::string base64(const std::uint8_t* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3) + 1, '\0');
  const int n =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data, static_cast<int>(size));
  out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string hmac_sha256(std::span<const std::uint8_t> key, std::string_view data) {
  unsigned char out[32];
  unsigned size = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &size);
  return std::string(reinterpret_cast<char*>(out), size);
}

std::string_view payload_of(document_view body) {
  const auto e = body.find("payload");
  if (!e) return {};
  const auto bin = e->get_binary().value();
  return {reinterpret_cast<const char*>(bin.bytes.data()), bin.bytes.size()};
}

std::span<const std::uint8_t> bytes_of(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

struct scram_server {
  std::string user = "ann", password = "pencil";
  std::uint32_t iterations = 4096;
  bool speculative = true;       // answer speculativeAuthenticate in hello
  bool wrong_signature = false;  // send a v= the password does not give
  bool foreign_nonce = false;    // a combined nonce that does not start with the client's
  bool zero_key = false;         // sign with an all-zero salted password (a failed PBKDF2's)
  std::mutex m;
  std::vector<std::string> commands;  // names of the commands received, in order
  std::string hello_mechs, spec_mechanism, spec_db;

  void record(const mongo::op_msg& msg) {
    std::lock_guard lock(m);
    commands.push_back(command_name(msg));
  }

  // The conversation on one connection, then ok: 1 to every command.
  void run(peer& p) {
    auto hello = p.read();
    if (!hello) return;
    record(*hello);
    std::string client_first;
    if (const auto e = hello->body.find("saslSupportedMechs")) {
      std::lock_guard lock(m);
      hello_mechs = std::string(e->get_string().value_or(""));
    }
    if (const auto e = hello->body.find("speculativeAuthenticate")) {
      const auto d = e->get_document().value();
      std::lock_guard lock(m);
      spec_mechanism = std::string(d.find("mechanism")->get_string().value_or(""));
      spec_db = std::string(d.find("db")->get_string().value_or(""));
      client_first = std::string(payload_of(d));
    }
    const std::string salt = "0123456789abcdef";
    const std::string client_bare = client_first.empty() ? "" : client_first.substr(3);
    const auto server_first = [&](const std::string& bare) {
      const std::string nonce = bare.substr(bare.find(",r=") + 3);
      return "r=" + (foreign_nonce ? std::string("someone-else") : nonce) + "SERVER" +
             ",s=" + base64(bytes_of(salt).data(), salt.size()) +
             ",i=" + std::to_string(iterations);
    };
    builder hb;
    hb.append_bool("isWritablePrimary", true).append_int32("maxWireVersion", 17);
    std::string first;
    if (speculative && !client_first.empty()) {
      first = server_first(client_bare);
      hb.open_document("speculativeAuthenticate")
          .append_int32("conversationId", 1)
          .append_bool("done", false)
          .append_binary("payload", 0, bytes_of(first))
          .close();
    }
    hb.append_double("ok", 1.0);
    p.reply(*hello, hb.view());
    std::string bare = client_bare;
    if (first.empty()) {  // saslStart
      auto start = p.read();
      if (!start) return;
      record(*start);
      bare = std::string(payload_of(start->body)).substr(3);
      first = server_first(bare);
      builder b;
      b.append_int32("conversationId", 1).append_bool("done", false);
      b.append_binary("payload", 0, bytes_of(first)).append_double("ok", 1.0);
      p.reply(*start, b.view());
    }
    auto cont = p.read();
    if (!cont) return;
    record(*cont);
    const std::string client_final(payload_of(cont->body));
    const std::string auth_message =
        bare + "," + first + "," + client_final.substr(0, client_final.find(",p="));
    namespace d = mongo::detail;
    const auto prepared =
        d::scram_prepare_password(d::scram_mechanism::sha256, user, mongo::secret(password))
            .value();
    // The key a client would get from a PBKDF2 that failed and left its output untouched.
    const mongo::secret salted =
        zero_key ? mongo::secret::of_size(32)
                 : d::scram_salt_password(d::scram_mechanism::sha256, prepared,
                                          std::vector<std::uint8_t>(salt.begin(), salt.end()),
                                          iterations)
                       .value();
    const std::string server_key = hmac_sha256(salted.bytes(), "Server Key");
    std::string signature = hmac_sha256(bytes_of(server_key), auth_message);
    if (wrong_signature) signature[0] ^= 1;
    const std::string final = "v=" + base64(bytes_of(signature).data(), signature.size());
    builder fb;
    fb.append_int32("conversationId", 1).append_bool("done", true);
    fb.append_binary("payload", 0, bytes_of(final)).append_double("ok", 1.0);
    p.reply(*cont, fb.view());
    const document ok = ok_reply();
    while (auto msg = p.read()) {
      record(*msg);
      p.reply(*msg, ok.view());
    }
  }

  std::vector<std::string> seen() {
    std::lock_guard lock(m);
    return commands;
  }
};

std::string with_user(const script_server& server, std::string_view userinfo,
                      std::string_view options = "") {
  std::string uri = server.uri(options);
  return uri.insert(std::string_view("mongodb://").size(), std::string(userinfo) + "@");
}

TEST(MongoFaultTest, SpeculativeScramSkipsSaslStartWhenTheServerAnswersIt) {
  scram_server auth;
  script_server server([&](peer& p, int) { auth.run(p); });
  auto c = mongo::client::create(with_user(server, "ann:pencil")).value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(auth.seen(), (std::vector<std::string>{"hello", "saslContinue", "ping"}));
  EXPECT_EQ(auth.hello_mechs, "admin.ann");
  EXPECT_EQ(auth.spec_mechanism, "SCRAM-SHA-256");
  EXPECT_EQ(auth.spec_db, "admin");
}

TEST(MongoFaultTest, ScramFallsBackToSaslStartWithoutASpeculativeAnswer) {
  scram_server auth;
  auth.speculative = false;
  script_server server([&](peer& p, int) { auth.run(p); });
  auto c = mongo::client::create(with_user(server, "ann:pencil", "&authMechanism=SCRAM-SHA-256"))
               .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(auth.seen(), (std::vector<std::string>{"hello", "saslStart", "saslContinue", "ping"}));
  EXPECT_EQ(auth.hello_mechs, "");  // the mechanism was given: nothing to negotiate
}

TEST(MongoFaultTest, DishonestScramServersAreRefused) {
  struct test_case {
    const char* name;
    std::function<void(scram_server&)> setup;
    const char* words;
  };
  const test_case cases[] = {
      {"wrong signature", [](scram_server& s) { s.wrong_signature = true; }, "signature"},
      {"few iterations", [](scram_server& s) { s.iterations = 1000; }, "iteration count"},
      {"foreign nonce", [](scram_server& s) { s.foreign_nonce = true; }, "nonce"},
      // Counts PKCS5_PBKDF2_HMAC cannot take (its count is an int): a client that ignored its
      // failure would hold an all-zero salted password, which the server signs with here.
      {"zero key, 2^31 iterations",
       [](scram_server& s) {
         s.iterations = 2147483648u;
         s.zero_key = true;
       },
       "iteration count 2147483648"},
      {"zero key, 2^32-1 iterations",
       [](scram_server& s) {
         s.iterations = 4294967295u;
         s.zero_key = true;
       },
       "iteration count 4294967295"},
      {"zero key, speculative off, 2^31 iterations",
       [](scram_server& s) {
         s.iterations = 2147483648u;
         s.zero_key = true;
         s.speculative = false;
       },
       "iteration count 2147483648"},
      {"above the cap",
       [](scram_server& s) {
         s.iterations = 1'000'001;
         s.zero_key = true;
       },
       "iteration count 1000001"},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.name);
    scram_server auth;
    t.setup(auth);
    script_server server([&](peer& p, int) { auth.run(p); });
    auto c = mongo::client::create(with_user(server, "ann:pencil")).value();
    const document cmd = ping();
    auto r = c.run_command("admin", cmd.view());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
    EXPECT_NE(r.error().message.find(t.words), std::string::npos) << r.error().message;
    EXPECT_EQ(r.error().message.find("pencil"), std::string::npos) << r.error().message;
    // Refused at once: no retry until serverSelectionTimeoutMS, no command sent unauthenticated.
    EXPECT_EQ(server.connections(), 1);
    for (const auto& name : auth.seen()) EXPECT_NE(name, "ping");
  }
}

// Everything a listener and a caller see of authenticated runs: every command event's names,
// address, failure text, command and reply (as Extended JSON and as raw BSON bytes, where a
// PLAIN payload would sit), and the failure of a refused login. No password may appear in any.
class event_text {
 public:
  mongo::client_options options() {
    mongo::client_options o;
    o.on_command = [this](const mongo::command_event& e) {
      std::lock_guard lock(m_);
      std::visit(
          [this](const auto& ev) {
            text_ += ev.command_name + " " + ev.database_name + " " + ev.address + "\n";
            using T = std::decay_t<decltype(ev)>;
            if constexpr (std::is_same_v<T, mongo::command_started_event>) add(ev.command.view());
            if constexpr (std::is_same_v<T, mongo::command_succeeded_event>) add(ev.reply.view());
            if constexpr (std::is_same_v<T, mongo::command_failed_event>) text_ += ev.failure;
          },
          e);
      ++events_;
    };
    return o;
  }
  std::string text() {
    std::lock_guard lock(m_);
    return text_;
  }
  int events() {
    std::lock_guard lock(m_);
    return events_;
  }

 private:
  void add(document_view d) {
    oid::bson::to_json(d, oid::bson::json_mode::canonical, text_);
    text_.append(reinterpret_cast<const char*>(d.data()), d.size());
    text_ += "\n";
  }
  std::mutex m_;
  std::string text_;
  int events_ = 0;
};

TEST(MongoFaultTest, NoPasswordInCommandEventsOrFailures) {
  const document cmd = ping();
  {  // SCRAM, the right password: a login, then a command.
    scram_server auth;
    auth.password = "Pw-right-7319";
    script_server server([&](peer& p, int) { auth.run(p); });
    event_text seen;
    auto c = mongo::client::create(with_user(server, "ann:Pw-right-7319"), seen.options());
    ASSERT_TRUE(c.has_value()) << c.error().message;
    auto r = c->run_command("admin", cmd.view());
    ASSERT_TRUE(r.has_value()) << r.error().message;
    EXPECT_GE(seen.events(), 2);
    EXPECT_NE(seen.text().find("{\"ping\""), std::string::npos) << seen.text();  // bodies are in
    EXPECT_EQ(seen.text().find("Pw-right-7319"), std::string::npos) << seen.text();
  }
  {  // SCRAM, a wrong password: the server's signature does not match.
    scram_server auth;
    script_server server([&](peer& p, int) { auth.run(p); });
    event_text seen;
    auto c = mongo::client::create(with_user(server, "ann:Pw-wrong-7319"), seen.options());
    ASSERT_TRUE(c.has_value()) << c.error().message;
    auto r = c->run_command("admin", cmd.view());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
    EXPECT_EQ(r.error().message.find("Pw-wrong-7319"), std::string::npos) << r.error().message;
    EXPECT_EQ(seen.text().find("Pw-wrong-7319"), std::string::npos) << seen.text();
  }
  {  // PLAIN, refused by the server.
    script_server server([&](peer& p, int) {
      if (!p.handshake()) return;
      while (auto msg = p.read()) {
        builder b;
        b.append_double("ok", 0.0).append_string("errmsg", "Authentication failed.");
        b.append_int32("code", 18).append_string("codeName", "AuthenticationFailed");
        p.reply(*msg, b.view());
      }
    });
    event_text seen;
    auto c = mongo::client::create(with_user(server, "ann:Pw-plain-7319", "&authMechanism=PLAIN"),
                                   seen.options());
    ASSERT_TRUE(c.has_value()) << c.error().message;
    auto r = c->run_command("admin", cmd.view());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().code, oid::mongo::errc::authentication_failed) << r.error().message;
    EXPECT_EQ(r.error().message.find("Pw-plain-7319"), std::string::npos) << r.error().message;
    EXPECT_EQ(seen.text().find("Pw-plain-7319"), std::string::npos) << seen.text();
  }
}

TEST(MongoFaultTest, PlainAndX509SendTheirCommands) {
  std::mutex m;
  std::vector<std::string> seen;  // "db command mechanism payload"
  script_server server([&](peer& p, int) {
    if (!p.handshake()) return;
    const document ok = ok_reply();
    while (auto msg = p.read()) {
      const auto field = [&](const char* key) {
        const auto e = msg->body.find(key);
        return e ? std::string(e->get_string().value_or("")) : std::string();
      };
      std::lock_guard lock(m);
      seen.push_back(field("$db") + " " + command_name(*msg) + " " + field("mechanism") + " " +
                     field("user") + " " + std::string(payload_of(msg->body)));
      p.reply(*msg, ok.view());
    }
  });
  const document cmd = ping();
  auto plain = mongo::client::create(with_user(server, "ann:pen%3Acil", "&authMechanism=PLAIN"));
  ASSERT_TRUE(plain.has_value()) << plain.error().message;
  ASSERT_TRUE(plain->run_command("admin", cmd.view()).has_value());
  auto x509 = mongo::client::create(with_user(server, "CN%3Dann", "&authMechanism=MONGODB-X509"));
  ASSERT_TRUE(x509.has_value()) << x509.error().message;
  ASSERT_TRUE(x509->run_command("admin", cmd.view()).has_value());
  std::lock_guard lock(m);
  EXPECT_EQ(seen, (std::vector<std::string>{
                      std::string("$external saslStart PLAIN  \0ann\0pen:cil", 39),
                      "admin ping   ",
                      "$external authenticate MONGODB-X509 CN=ann ",
                      "admin ping   ",
                  }));
}

}  // namespace
