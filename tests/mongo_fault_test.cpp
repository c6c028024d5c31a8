// Faults a real server will not produce on demand: a small scripted server inside the test, on a
// loopback port, that answers the handshake and then does what each test tells it (stall, close,
// send garbage, answer the wrong request, record what the client sent). Every fault must become a
// typed error within the configured timeout, and the next operation must work on a fresh
// connection.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
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
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

using oid::errc;
using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace std::chrono_literals;

// One accepted connection, as the script sees it.
class peer {
 public:
  explicit peer(int fd) : fd_(fd) {}
  ~peer() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // The next whole message, decoded (and kept in `last_bytes_`), or nullopt when the client
  // closed or the test is over.
  std::optional<mongo::op_msg> read() {
    std::uint8_t head[16];
    if (!read_exact(head, 16)) return std::nullopt;
    const auto h = mongo::decode_header(head);
    if (!h) return std::nullopt;
    last_bytes_.assign(head, head + 16);
    last_bytes_.resize(static_cast<std::size_t>(h->message_length));
    if (!read_exact(last_bytes_.data() + 16, last_bytes_.size() - 16)) return std::nullopt;
    auto msg = mongo::decode_op_msg(last_bytes_);
    if (!msg) return std::nullopt;
    return *msg;
  }
  // Replies to `request` with `body`; `response_to` overrides the id replied to.
  void reply(const mongo::op_msg& request, document_view body,
             std::optional<std::int32_t> response_to = std::nullopt) {
    mongo::op_msg r;
    r.request_id = 1000 + request.request_id;
    r.response_to = response_to.value_or(request.request_id);
    r.body = body;
    send(mongo::encode_op_msg(r).value());
  }
  void send(const std::vector<std::uint8_t>& bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return;
      sent += static_cast<std::size_t>(n);
    }
  }
  // Answers the handshake; false when the client went away first.
  bool handshake(std::int32_t max_write_batch_size = 100'000,
                 std::int32_t max_bson_object_size = 16 * 1024 * 1024,
                 std::int32_t max_message_size_bytes = 48'000'000) {
    auto hello = read();
    if (!hello) return false;
    builder b;
    b.append_bool("isWritablePrimary", true)
        .append_int32("maxBsonObjectSize", max_bson_object_size);
    b.append_int32("maxMessageSizeBytes", max_message_size_bytes);
    b.append_int32("maxWriteBatchSize", max_write_batch_size);
    b.append_int32("maxWireVersion", 17).append_double("ok", 1.0);
    reply(*hello, b.view());
    return true;
  }

 private:
  bool read_exact(std::uint8_t* out, std::size_t n) {
    std::size_t got = 0;
    while (got < n) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 5000) <= 0) return false;  // the test is over or stuck: give up
      const ssize_t r = ::recv(fd_, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }
  int fd_;
  std::vector<std::uint8_t> last_bytes_;
};

// A loopback server running `script` for every connection it accepts, each on its own thread.
class script_server {
 public:
  // Listens on a Unix domain socket at `unix_path` when it is not empty, else on loopback TCP.
  explicit script_server(std::function<void(peer&, int connection_number)> script,
                         std::string unix_path = "")
      : script_(std::move(script)), unix_path_(std::move(unix_path)) {
    if (!unix_path_.empty()) {
      listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_un addr{};
      addr.sun_family = AF_UNIX;
      std::memcpy(addr.sun_path, unix_path_.data(),
                  std::min(unix_path_.size(), sizeof addr.sun_path - 1));
      ::unlink(unix_path_.c_str());
      if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
          ::listen(listen_fd_, 16) != 0) {
        ADD_FAILURE() << "cannot listen on " << unix_path_ << ": " << std::strerror(errno);
      }
      acceptor_ = std::thread([this] { accept_loop(); });
      return;
    }
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const int one = 1;
    ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 16) != 0) {
      ADD_FAILURE() << "cannot listen: " << std::strerror(errno);
    }
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { accept_loop(); });
  }
  ~script_server() {
    stop_ = true;
    acceptor_.join();
    for (auto& t : handlers_) t.join();
    ::close(listen_fd_);
    if (!unix_path_.empty()) ::unlink(unix_path_.c_str());
  }
  std::string uri(std::string_view options = "") const {
    return "mongodb://127.0.0.1:" + std::to_string(port_) + "/?serverSelectionTimeoutMS=2000" +
           std::string(options);
  }
  int connections() const { return accepted_.load(); }
  int max_concurrent() const { return max_concurrent_.load(); }

 private:
  void accept_loop() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      const int number = accepted_++;
      handlers_.emplace_back([this, fd, number] {
        const int now = ++concurrent_;
        int seen = max_concurrent_.load();
        while (now > seen && !max_concurrent_.compare_exchange_weak(seen, now)) {
        }
        {
          peer p(fd);
          script_(p, number);
        }
        --concurrent_;
      });
    }
  }
  std::function<void(peer&, int)> script_;
  std::string unix_path_;
  int listen_fd_ = -1;
  std::uint16_t port_ = 0;
  std::thread acceptor_;
  std::vector<std::thread> handlers_;
  std::atomic<bool> stop_{false};
  std::atomic<int> accepted_{0}, concurrent_{0}, max_concurrent_{0};
};

document ok_reply() {
  builder b;
  b.append_double("ok", 1.0);
  return std::move(b).extract();
}

document ping() {
  builder b;
  b.append_int32("ping", 1);
  return std::move(b).extract();
}

std::string command_name(const mongo::op_msg& m) {
  const auto first = m.body.begin();
  return first == m.body.end() ? "" : std::string(first->key());
}

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
void expect_fault_then_recovery(script_server& server, std::string_view options, errc want) {
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
  // A port that was just free: nothing listens there.
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  auto c = mongo::client::create("mongodb://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) +
                                 "/?serverSelectionTimeoutMS=300")
               .value();
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, errc::connection_failed);
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
  EXPECT_EQ(r.error().code, errc::timeout) << r.error().message;
}

TEST(MongoFaultTest, StalledServerIsATimeoutAndTheNextOperationRecovers) {
  script_server server(first_connection([](peer&, const mongo::op_msg&) {
    std::this_thread::sleep_for(1500ms);  // never answers this command
  }));
  expect_fault_then_recovery(server, "&socketTimeoutMS=200", errc::timeout);
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
  expect_fault_then_recovery(server, "", errc::invalid_message);
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
  expect_fault_then_recovery(server, "", errc::connection_closed);
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
  expect_fault_then_recovery(server, "", errc::checksum_mismatch);
}

TEST(MongoFaultTest, ReplyToTheWrongRequest) {
  script_server server(first_connection([](peer& p, const mongo::op_msg& m) {
    const document ok = ok_reply();
    p.reply(m, ok.view(), m.request_id + 77);
  }));
  expect_fault_then_recovery(server, "", errc::unexpected_reply);
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
  EXPECT_EQ(more.error().code, errc::connection_closed);
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
      builder b;
      b.append_int32("n", static_cast<std::int32_t>(count)).append_double("ok", 1.0);
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  std::vector<document> docs;
  std::vector<document_view> views;
  for (int i = 0; i < 10; ++i) {
    builder b;
    b.append_int32("n", i);
    docs.push_back(std::move(b).extract());
  }
  for (const auto& d : docs) views.push_back(d.view());
  auto coll = c.collection("db", "c");
  auto r = coll.insert_many(views);
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->inserted, 10);
  ASSERT_EQ(r->ids.size(), 10u);
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  auto fire = coll.insert_many(views, w0);
  ASSERT_TRUE(fire.has_value()) << fire.error().message;
  EXPECT_EQ(fire->inserted, 0);
  const document cmd = ping();
  ASSERT_TRUE(c.run_command("admin", cmd.view()).has_value());
  std::lock_guard lock(m);
  EXPECT_EQ(batches, (std::vector<std::size_t>{3, 3, 3, 1, 3, 3, 3, 1, 0}));
  const std::uint32_t w0_flag = mongo::op_msg_flags::more_to_come;
  EXPECT_EQ(flags, (std::vector<std::uint32_t>{0, 0, 0, 0, w0_flag, w0_flag, w0_flag, w0_flag, 0}));
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
  mongo::insert_options w0;
  w0.write_concern = mongo::write_concern::unacknowledged();
  builder d;
  d.append_int32("n", 1);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(coll.insert_one(d.view(), w0).has_value());
  const document cmd = ping();
  auto r = c.run_command("admin", cmd.view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->view().find("seq")->get_int32().value(), 3);  // its own reply, not a stale one
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
  EXPECT_EQ(dup.error().code, errc::duplicate_key);
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
  EXPECT_EQ(wc.error().code, errc::write_concern_failed);
  ASSERT_TRUE(wc.error().write_concern_error.has_value());
  EXPECT_EQ(wc.error().write_concern_error->code_name, "WriteConcernFailed");

  const document cmd = ping();
  auto refused = c.run_command("admin", cmd.view());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, errc::server_error);
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
      builder b;
      b.append_int32("n", static_cast<std::int32_t>(count)).append_double("ok", 1.0);
      p.reply(*msg, b.view());
    }
  });
  auto c = mongo::client::create(server.uri()).value();
  std::vector<document> docs;
  std::vector<document_view> views;
  for (int i = 0; i < 20; ++i) {
    builder b;
    b.append_int32("n", i).append_string("pad", std::string(250, 'p'));
    docs.push_back(std::move(b).extract());
  }
  for (const auto& d : docs) views.push_back(d.view());
  auto r = c.collection("db", "c").insert_many(views);
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

}  // namespace
