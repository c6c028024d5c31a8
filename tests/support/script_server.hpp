// A scripted MongoDB server for tests: faults and topologies a real server will not produce on
// demand. A loopback listener (TCP, or a Unix domain socket) runs a script for every connection it
// accepts, each on its own thread; the script reads the client's messages and answers as the test
// wants (stall, close, send garbage, answer the wrong request, play a replica set member).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/document.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace oid::testing {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;

// One accepted connection, as the script sees it.
class peer {
 public:
  explicit peer(int fd) : fd_(fd) {}
  ~peer() { close(); }
  // The accepted socket, for a script that speaks something else on it first (TLS).
  int fd() const { return fd_; }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  // The next whole message, decoded (and kept in `last_bytes_`), or nullopt when the client
  // closed or the test is over.
  std::optional<oid::mongo::op_msg> read() {
    std::uint8_t head[16];
    if (!read_exact(head, 16)) return std::nullopt;
    const auto h = oid::mongo::decode_header(head);
    if (!h) return std::nullopt;
    last_bytes_.assign(head, head + 16);
    last_bytes_.resize(static_cast<std::size_t>(h->message_length));
    if (!read_exact(last_bytes_.data() + 16, last_bytes_.size() - 16)) return std::nullopt;
    auto msg = oid::mongo::decode_op_msg(last_bytes_);
    if (!msg) return std::nullopt;
    return *msg;
  }
  // Replies to `request` with `body`; `response_to` overrides the id replied to.
  void reply(const oid::mongo::op_msg& request, document_view body,
             std::optional<std::int32_t> response_to = std::nullopt) {
    oid::mongo::op_msg r;
    r.request_id = 1000 + request.request_id;
    r.response_to = response_to.value_or(request.request_id);
    r.body = body;
    send(oid::mongo::encode_op_msg(r).value());
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
  // A direct connection: a script plays one conversation per connection, and tests count them;
  // without directConnection=true a monitor would open a connection of its own and run the
  // script too (tests of the monitored default build their own URI, as mongo_topology_test does).
  std::string uri(std::string_view options = "") const {
    return "mongodb://127.0.0.1:" + std::to_string(port_) +
           "/?directConnection=true&serverSelectionTimeoutMS=2000" + std::string(options);
  }
  // "127.0.0.1:port", as a connection string or a hello's host list names it.
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
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

/// A loopback port that was free a moment ago: nothing listens there (connections are refused).
inline int unused_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

inline document ok_reply() {
  builder b;
  b.append_double("ok", 1.0);
  return std::move(b).extract();
}

inline document ping() {
  builder b;
  b.append_int32("ping", 1);
  return std::move(b).extract();
}

/// Acknowledges an insert of `count` documents as a server does: {n: count, ok: 1}.
inline void acknowledge_insert(peer& p, const oid::mongo::op_msg& request, std::size_t count) {
  builder b;
  b.append_int32("n", static_cast<std::int32_t>(count)).append_double("ok", 1.0);
  p.reply(request, b.view());
}

/// `count` documents {n: i} (with `pad` bytes of padding in a string when asked), and views of
/// them for insert_many.
struct numbered_documents {
  std::vector<document> docs;
  std::vector<document_view> views;
};
inline numbered_documents numbered(int count, std::size_t pad = 0) {
  numbered_documents out;
  for (int i = 0; i < count; ++i) {
    builder b;
    b.append_int32("n", i);
    if (pad != 0) b.append_string("pad", std::string(pad, 'p'));
    out.docs.push_back(std::move(b).extract());
  }
  for (const auto& d : out.docs) out.views.push_back(d.view());
  return out;
}

inline std::string command_name(const oid::mongo::op_msg& m) {
  const auto first = m.body.begin();
  return first == m.body.end() ? "" : std::string(first->key());
}

// A scripted server that records every command (not the handshake), with its document
// sequences, and answers each with `answer(name, body, how_many_so_far)`; by default with an
// empty cursor, n: 0 and an empty values array, which every read takes. Commands sent with
// moreToCome (w: 0 writes) are recorded and not answered.
struct recorded {
  oid::bson::document body;
  std::vector<std::vector<oid::bson::document>> sequences;
};

class recording_server {
 public:
  using answer_fn =
      std::function<oid::bson::document(const std::string&, oid::bson::document_view, std::size_t)>;

  explicit recording_server(answer_fn answer = empty_answer,
                            std::int32_t max_write_batch_size = 100'000,
                            std::int32_t max_bson_object_size = 16 * 1024 * 1024)
      : answer_(std::move(answer)),
        server_([this, max_write_batch_size, max_bson_object_size](peer& p, int) {
          if (!p.handshake(max_write_batch_size, max_bson_object_size)) return;
          while (auto m = p.read()) {
            recorded r{oid::bson::document(m->body), {}};
            for (const auto& s : m->sequences) {
              r.sequences.emplace_back();
              for (auto d : s.documents) r.sequences.back().emplace_back(d);
            }
            std::size_t count = 0;
            {
              std::lock_guard lock(mutex_);
              seen_.push_back(std::move(r));
              count = seen_.size();
            }
            if ((m->flags & oid::mongo::op_msg_flags::more_to_come) != 0) continue;
            const oid::bson::document reply = answer_(command_name(*m), m->body, count);
            p.reply(*m, reply.view());
          }
        }) {}

  /// A client of this server.
  oid::mongo::client client() { return oid::mongo::client::create(server_.uri()).value(); }
  /// The server's connection string, with `options` ("&w=majority", ...) added.
  std::string uri(std::string_view options = "") const { return server_.uri(options); }
  std::vector<recorded> seen() {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  /// The last command received, as relaxed Extended JSON without $db and lsid ("(none)" before
  /// the first).
  std::string last() {
    std::lock_guard lock(mutex_);
    if (seen_.empty()) return "(none)";
    oid::bson::builder b;
    for (const auto& e : seen_.back().body.view()) {
      if (e.key() != "$db" && e.key() != "lsid") b.append_element(e.key(), e);
    }
    return oid::bson::to_json(b.view());
  }

  /// The default answer: an empty cursor (firstBatch, or nextBatch for getMore), n: 0, values: [].
  static oid::bson::document empty_answer(const std::string& name, oid::bson::document_view,
                                          std::size_t) {
    oid::bson::builder b;
    b.open_document("cursor").append_int64("id", 0).append_string("ns", "db.c");
    b.open_array(name == "getMore" ? "nextBatch" : "firstBatch").close();
    b.close().append_int32("n", 0).open_array("values").close().append_double("ok", 1.0);
    return std::move(b).extract();
  }

 private:
  answer_fn answer_;
  std::mutex mutex_;
  std::vector<recorded> seen_;
  script_server server_;
};

}  // namespace oid::testing
