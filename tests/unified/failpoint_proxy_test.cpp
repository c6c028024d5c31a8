// oid_failpoint_proxy (tests/unified/failpoint_proxy.cpp) against FerretDB: each test starts its
// own proxy as a child process in front of MONGODB_URI (or MONGODB_RS_URI), so that the proxy's
// one fail point belongs to that test, and checks one behaviour through oid's client, a single
// connection (whose replies with ok: 0 are values) or a raw socket. Without the server the
// tests skip (fail under CI=true); the usage tests need no server. Every test stops its proxy
// with SIGTERM (one with SIGINT) and expects exit status 0.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <functional>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/bson/json_reader.hpp>
#include <oid/bson/json_writer.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/op_msg.hpp>
#include <oid/mongo/session.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/objectid/generator.hpp>
#include <optional>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "mongo/wire/connection.hpp"
#include "support/ci.hpp"
#include "support/scratch.hpp"
#include "support/script_server.hpp"

extern char** environ;

namespace {

using oid::bson::builder;
using oid::bson::document;
using oid::bson::document_view;
namespace mongo = oid::mongo;
using namespace std::chrono_literals;

constexpr std::string_view failpoint_errmsg = "Failing command via 'failCommand' failpoint";

// A document from relaxed Extended JSON (numbers without a fraction are int32). Its view may be
// taken from the temporary, for use within the full expression: `c.run("admin", doc(j).view())`.
struct json_doc {
  document value;
  document_view view() const { return value.view(); }
};
json_doc doc(std::string_view json) { return {oid::bson::from_json(json).value()}; }

std::string json(document_view d) { return oid::bson::to_json(d); }

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// "HOST:PORT" of the first host of a connection string.
std::string first_host(const std::string& uri_text) {
  const auto u = mongo::uri::parse(uri_text).value();
  const auto& h = u.hosts().front();
  return (h.type == mongo::host::kind::ip_literal ? "[" + h.name + "]" : h.name) + ":" +
         std::to_string(h.port_or_default());
}

// The built proxy, run as a child process: its stdout on a pipe (the first line is its URI),
// its stderr in a file.
class proxy_process {
 public:
  proxy_process() = default;
  proxy_process(const proxy_process&) = delete;
  proxy_process& operator=(const proxy_process&) = delete;
  ~proxy_process() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
    if (out_ >= 0) ::close(out_);
  }

  // Starts the proxy with `args`; false (and `why`) when it could not be started.
  bool spawn(const std::vector<std::string>& args, std::string& why) {
    err_path_ = oid::testing::scratch_path("proxy.err");
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
      why = "pipe2 failed";
      return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path_.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    std::vector<std::string> all{OID_FAILPOINT_PROXY};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    const int rc = posix_spawn(&pid_, OID_FAILPOINT_PROXY, &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    out_ = pipe_fds[0];
    if (rc != 0) {
      pid_ = -1;
      why = std::string("posix_spawn: ") + std::strerror(rc);
      return false;
    }
    return true;
  }

  // Waits for the first line on stdout (up to 20 s): the proxy's connection string, or "".
  std::string first_line() {
    std::string line;
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (line.find('\n') == std::string::npos && std::chrono::steady_clock::now() < until) {
      pollfd p{out_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      char buf[256];
      const ssize_t n = ::read(out_, buf, sizeof buf);
      if (n <= 0) break;
      line.append(buf, static_cast<std::size_t>(n));
    }
    return line;
  }

  // Everything on stdout after the first line, until the proxy closes it.
  std::string rest_of_stdout() {
    std::string text;
    char buf[256];
    ssize_t n;
    while ((n = ::read(out_, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    return text;
  }

  // Sends `signal` and waits (up to 20 s) for the exit: the exit status, or -1 (killed by a
  // signal, or it did not exit in time).
  int stop(int signal = SIGTERM) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, signal);
    return wait();
  }

  // Waits for the exit without a signal (up to 20 s): the exit status or -1.
  int wait() {
    const auto until = std::chrono::steady_clock::now() + 20s;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      const pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

  std::string stderr_text() const { return read_text(err_path_); }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string err_path_;
};

// A TCP connection to the proxy that speaks raw bytes.
class raw_socket {
 public:
  explicit raw_socket(std::uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ >= 0 && ::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  raw_socket(const raw_socket&) = delete;
  raw_socket& operator=(const raw_socket&) = delete;
  ~raw_socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return fd_ >= 0; }

  bool send(std::span<const std::uint8_t> bytes) {
    std::size_t sent = 0;
    while (sent < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<std::size_t>(n);
    }
    return true;
  }
  bool send(std::string_view text) {
    return send({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  }
  // An OP_MSG with `body` (which must hold $db) and `flags`.
  bool send_msg(std::int32_t request_id, document_view body, std::uint32_t flags = 0) {
    mongo::op_msg m;
    m.request_id = request_id;
    m.flags = flags;
    m.body = body;
    return send(mongo::encode_op_msg(m).value());
  }

  // Reads exactly `n` bytes (up to 20 s); false at the end of the stream or on timeout.
  bool read_exact(std::uint8_t* out, std::size_t n) {
    const auto until = std::chrono::steady_clock::now() + 20s;
    std::size_t got = 0;
    while (got < n) {
      if (std::chrono::steady_clock::now() >= until) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      const ssize_t r = ::recv(fd_, out + got, n - got, 0);
      if (r <= 0) return false;
      got += static_cast<std::size_t>(r);
    }
    return true;
  }
  // The next whole message's bytes, or empty when the stream ended.
  std::vector<std::uint8_t> read_message() {
    std::vector<std::uint8_t> bytes(16);
    if (!read_exact(bytes.data(), 16)) return {};
    const auto h = mongo::decode_header(bytes);
    if (!h) return {};
    bytes.resize(static_cast<std::size_t>(h->message_length));
    if (!read_exact(bytes.data() + 16, bytes.size() - 16)) return {};
    return bytes;
  }
  // Says the client will send nothing more (the proxy reads the end of the stream).
  void shutdown_write() { ::shutdown(fd_, SHUT_WR); }
  // True when the peer closes the connection within 20 s (bytes it sends first are dropped).
  bool closed_by_peer() {
    const auto until = std::chrono::steady_clock::now() + 20s;
    while (std::chrono::steady_clock::now() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 200) <= 0) continue;
      std::uint8_t buf[4096];
      const ssize_t r = ::recv(fd_, buf, sizeof buf, 0);
      if (r == 0 || (r < 0 && errno == ECONNRESET)) return true;
    }
    return false;
  }

 private:
  int fd_ = -1;
};

std::uint16_t port_of(const std::string& uri) {
  return mongo::uri::parse(uri).value().hosts().front().port_or_default();
}

// Commands seen by a client's command listener.
struct command_log {
  std::mutex mutex;
  std::vector<mongo::command_event> events;

  std::function<void(const mongo::command_event&)> listener() {
    return [this](const mongo::command_event& e) {
      const std::lock_guard lock(mutex);
      events.push_back(e);
    };
  }
  std::vector<mongo::command_started_event> started(std::string_view name) {
    const std::lock_guard lock(mutex);
    std::vector<mongo::command_started_event> out;
    for (const auto& e : events) {
      if (const auto* s = std::get_if<mongo::command_started_event>(&e)) {
        if (s->command_name == name) out.push_back(*s);
      }
    }
    return out;
  }
  int failed(std::string_view name) {
    const std::lock_guard lock(mutex);
    int n = 0;
    for (const auto& e : events) {
      if (const auto* f = std::get_if<mongo::command_failed_event>(&e)) {
        if (f->command_name == name) ++n;
      }
    }
    return n;
  }
  int succeeded(std::string_view name) {
    const std::lock_guard lock(mutex);
    int n = 0;
    for (const auto& e : events) {
      if (const auto* s = std::get_if<mongo::command_succeeded_event>(&e)) {
        if (s->command_name == name) ++n;
      }
    }
    return n;
  }
};

std::vector<std::string> labels_of(document_view reply) {
  std::vector<std::string> out;
  if (const auto e = reply.find("errorLabels")) {
    if (const auto arr = e->get_array()) {
      for (const auto& l : *arr) out.emplace_back(l.get_string().value_or("?"));
    }
  }
  return out;
}

double ok_of(document_view reply) {
  const auto e = reply.find("ok");
  if (!e) return -1;
  if (const auto d = e->get_double()) return *d;
  if (const auto i = e->get_int32()) return *i;
  return -1;
}

std::string string_of(document_view reply, std::string_view key) {
  const auto e = reply.find(key);
  return e ? std::string(e->get_string().value_or("<not a string>")) : "<absent>";
}

std::int64_t int_of(document_view reply, std::string_view key) {
  const auto e = reply.find(key);
  if (!e) return -1;
  if (const auto i = e->get_int32()) return *i;
  if (const auto l = e->get_int64()) return *l;
  if (const auto d = e->get_double()) return static_cast<std::int64_t>(*d);
  return -1;
}

// `reply` as JSON without operationTime and $clusterTime, which the proxy adds to a replica set's
// replies.
std::string json_without_clock(document_view reply) {
  builder b;
  for (const auto& e : reply) {
    if (e.key() != "operationTime" && e.key() != "$clusterTime") b.append_element(e);
  }
  const document rest = std::move(b).extract();
  return json(rest.view());
}

// The same, of a reply held in a document (which may be a temporary).
double ok_of(const document& reply) { return ok_of(reply.view()); }
std::int64_t int_of(const document& reply, std::string_view key) {
  return int_of(reply.view(), key);
}

// ---- Usage: no server needed ---------------------------------------------------------------

TEST(FailpointProxyUsageTest, RefusesAddressesOffTheMachineAndBadArguments) {
  struct test_case {
    std::string_view name;
    std::vector<std::string> args;
    std::string_view says;
  };
  const test_case cases[] = {
      {"private upstream", {"--upstream", "10.0.0.1:27017"}, "loopback"},
      {"public upstream", {"--upstream", "8.8.8.8:27017"}, "loopback"},
      {"named upstream", {"--upstream", "example.com:27017"}, "not resolved"},
      {"wildcard listen", {"--upstream", "127.0.0.1:27017", "--listen", "0.0.0.0:0"}, "loopback"},
      {"IPv6 wildcard", {"--upstream", "127.0.0.1:27017", "--listen", "[::]:0"}, "loopback"},
      {"bare IPv6", {"--upstream", "::1:27017"}, "HOST:PORT"},
      {"no port", {"--upstream", "127.0.0.1"}, "HOST:PORT"},
      {"port too big", {"--upstream", "127.0.0.1:65536"}, "port"},
      {"upstream port 0", {"--upstream", "127.0.0.1:0"}, "port 0"},
      {"no upstream", {}, "--upstream"},
      {"unknown flag", {"--upstream", "127.0.0.1:1", "--verbose"}, "unexpected"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    proxy_process p;
    std::string why;
    ASSERT_TRUE(p.spawn(c.args, why)) << why;
    EXPECT_EQ(p.wait(), 2);
    EXPECT_EQ(p.rest_of_stdout(), "") << "nothing on stdout for a usage error";
    const std::string err = p.stderr_text();
    EXPECT_NE(err.find(c.says), std::string::npos) << err;
    EXPECT_NE(err.find("usage: oid_failpoint_proxy"), std::string::npos) << err;
  }
}

TEST(FailpointProxyUsageTest, PrintsOneLineAndExitsZeroOnSigint) {
  // An upstream that nobody listens on is fine until a client connects.
  proxy_process p;
  std::string why;
  ASSERT_TRUE(p.spawn({"--upstream", "127.0.0.1:1", "--listen", "localhost:0"}, why)) << why;
  const std::string line = p.first_line();
  ASSERT_TRUE(line.starts_with("mongodb://127.0.0.1:")) << line;
  ASSERT_TRUE(line.ends_with("/\n")) << line;
  // A client whose upstream cannot be reached is closed, with a message.
  {
    raw_socket s(port_of(line.substr(0, line.size() - 1)));
    ASSERT_TRUE(s.connected());
    EXPECT_TRUE(s.closed_by_peer());
  }
  EXPECT_EQ(p.stop(SIGINT), 0);
  EXPECT_EQ(p.rest_of_stdout(), "") << "exactly one line on stdout";
  EXPECT_NE(p.stderr_text().find("cannot connect to the upstream"), std::string::npos)
      << p.stderr_text();
}

TEST(FailpointProxyScriptedTest, HelloOfAScriptedMemberNamesOnlyTheProxy) {
  // A scripted upstream whose hello names itself in every field the proxy rewrites, in several
  // spellings, beside a member that is not it and fields that only look like addresses.
  std::mutex mutex;
  document hello, whatsmyuri;
  oid::testing::script_server upstream([&](oid::testing::peer& p, int) {
    while (const auto m = p.read()) {
      const std::lock_guard lock(mutex);
      const std::string name = oid::testing::command_name(*m);
      p.reply(*m, name == "hello" || name == "isMaster" ? hello.view() : whatsmyuri.view());
    }
  });
  const std::string port = std::to_string(port_of("mongodb://" + upstream.address() + "/"));
  // me, primary, hosts[0], passives[0], arbiters[0]: the upstream, spelt as given.
  const auto hello_json = [&](const std::string& me, const std::string& primary,
                              const std::string& host, const std::string& passive,
                              const std::string& arbiter) {
    return R"({"isWritablePrimary": true, "setName": "rs9", "me": ")" + me + R"(", "primary": ")" +
           primary + R"(", "hosts": [")" + host + R"(", "127.0.0.1:1"], "passives": [")" + passive +
           R"("], "arbiters": [")" + arbiter + R"(", 7], "tags": {"dc": "127.0.0.1:)" + port +
           R"("}, "minWireVersion": 0, "maxWireVersion": 17, "ok": 1.0})";
  };
  {
    const std::lock_guard lock(mutex);
    // Any loopback address or localhost with the upstream's port is the upstream.
    hello = doc(hello_json("localhost:" + port, "127.0.0.2:" + port, "127.0.0.1:" + port,
                           "[::1]:" + port, "LocalHost:" + port))
                .value;
    whatsmyuri = doc(R"({"me": "127.0.0.1:)" + port + R"(", "ok": 1.0})").value;
  }
  proxy_process proxy;
  std::string why;
  ASSERT_TRUE(proxy.spawn({"--upstream", upstream.address()}, why)) << why;
  const std::string line = proxy.first_line();
  ASSERT_TRUE(line.starts_with("mongodb://127.0.0.1:")) << line;
  const std::uint16_t proxy_port = port_of(line.substr(0, line.size() - 1));
  const std::string self = "127.0.0.1:" + std::to_string(proxy_port);
  {
    auto c =
        mongo::connection::open(mongo::host{mongo::host::kind::ipv4, "127.0.0.1", proxy_port}, {})
            .value();
    for (const char* command : {R"({"hello": 1})", R"({"isMaster": 1})"}) {
      SCOPED_TRACE(command);
      const document reply = c.run("admin", doc(command).view()).value();
      EXPECT_EQ(json(reply.view()), json(doc(hello_json(self, self, self, self, self)).view()));
    }
    // Other replies keep what the member said; as a replica set member's, they carry the
    // cluster's logical time, which the scripted member does not send.
    const document other = c.run("admin", doc(R"({"whatsmyuri": 1})").view()).value();
    EXPECT_EQ(json_without_clock(other.view()), json(whatsmyuri.view()));
    EXPECT_TRUE(other.view().contains("operationTime")) << json(other.view());
    EXPECT_TRUE(other.view().contains("$clusterTime")) << json(other.view());
  }
  EXPECT_EQ(proxy.stop(), 0) << proxy.stderr_text();
}

// Starts a proxy in front of a scripted upstream; its port, or 0 after a failure.
std::uint16_t start_in_front_of(proxy_process& proxy, const oid::testing::script_server& upstream) {
  std::string why;
  if (!proxy.spawn({"--upstream", upstream.address()}, why)) {
    ADD_FAILURE() << why;
    return 0;
  }
  const std::string line = proxy.first_line();
  if (!line.starts_with("mongodb://127.0.0.1:")) {
    ADD_FAILURE() << line << proxy.stderr_text();
    return 0;
  }
  return port_of(line.substr(0, line.size() - 1));
}

TEST(FailpointProxyScriptedTest, RepliesWithMoreToComeFlowAndAreEachRewritten) {
  // An exhaust conversation: one request, three replies, each answering the one before it
  // (responseTo), the last without moreToCome.
  std::mutex mutex;
  std::string self;
  oid::testing::script_server upstream([&](oid::testing::peer& p, int) {
    const auto request = p.read();
    if (!request) return;
    std::string me;
    {
      const std::lock_guard lock(mutex);
      me = self;
    }
    std::int32_t previous = request->request_id;
    for (std::int32_t i = 0; i < 3; ++i) {
      builder b;
      b.append_bool("isWritablePrimary", true).append_int32("round", i);
      b.open_array("hosts").append_string("0", me).close();
      b.append_double("ok", 1.0);
      mongo::op_msg r;
      r.request_id = 500 + i;
      r.response_to = previous;
      r.flags = i < 2 ? mongo::op_msg_flags::more_to_come : 0;
      r.body = b.view();
      p.send(mongo::encode_op_msg(r).value());
      previous = r.request_id;
    }
    (void)p.read();  // until the client goes
  });
  {
    const std::lock_guard lock(mutex);
    self = upstream.address();
  }
  proxy_process proxy;
  const std::uint16_t port = start_in_front_of(proxy, upstream);
  ASSERT_NE(port, 0);
  raw_socket s(port);
  ASSERT_TRUE(s.connected());
  ASSERT_TRUE(s.send_msg(7, doc(R"({"hello": 1, "$db": "admin"})").view(),
                         mongo::op_msg_flags::exhaust_allowed));
  std::int32_t previous = 7;
  for (int i = 0; i < 3; ++i) {
    SCOPED_TRACE(i);
    const auto bytes = s.read_message();
    ASSERT_FALSE(bytes.empty());
    const auto reply = mongo::decode_op_msg(bytes).value();
    EXPECT_EQ(reply.response_to, previous);
    EXPECT_EQ((reply.flags & mongo::op_msg_flags::more_to_come) != 0, i < 2);
    EXPECT_EQ(int_of(reply.body, "round"), i);
    EXPECT_EQ(json(reply.body.find("hosts")->get_array().value()),
              R"({"0":"127.0.0.1:)" + std::to_string(port) + R"("})");
    previous = reply.request_id;
  }
  EXPECT_EQ(proxy.stop(), 0) << proxy.stderr_text();
}

TEST(FailpointProxyScriptedTest, GarbageFromTheUpstreamClosesThatConnection) {
  const document ok = oid::testing::ok_reply();
  oid::testing::script_server upstream([&](oid::testing::peer& p, int) {
    while (const auto m = p.read()) {
      if (oid::testing::command_name(*m) == "ping") {
        p.send({0xFF, 0xFF, 0xFF, 0x7F, 1, 0, 0, 0, 0, 0, 0, 0, 0xDD, 0x07, 0, 0});
      } else {
        p.reply(*m, ok.view());
      }
    }
  });
  proxy_process proxy;
  const std::uint16_t port = start_in_front_of(proxy, upstream);
  ASSERT_NE(port, 0);
  raw_socket s(port);
  ASSERT_TRUE(s.connected());
  ASSERT_TRUE(s.send_msg(1, doc(R"({"ping": 1, "$db": "admin"})").view()));
  EXPECT_TRUE(s.closed_by_peer());
  EXPECT_NE(proxy.stderr_text().find("the upstream sent a message header"), std::string::npos)
      << proxy.stderr_text();
  // Other connections go on.
  raw_socket other(port);
  ASSERT_TRUE(other.send_msg(2, doc(R"({"find": "c", "$db": "test"})").view()));
  const auto reply = other.read_message();
  ASSERT_FALSE(reply.empty());
  EXPECT_EQ(mongo::decode_op_msg(reply).value().response_to, 2);
  EXPECT_EQ(proxy.stop(), 0) << proxy.stderr_text();
}

// ---- Against FerretDB ----------------------------------------------------------------------

class FailpointProxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_URI", server_uri_);
    start_proxy(first_host(server_uri_));
    db_ = "oid_fp_" + oid::generate().to_hex().substr(16);
  }

  void TearDown() override {
    if (client_) {
      builder b;
      b.append_int32("dropDatabase", 1);
      (void)client_->run_command(db_, b.view());
      client_.reset();
    }
    if (started_) {
      EXPECT_EQ(proxy_.stop(), 0) << "the proxy must exit 0 on SIGTERM; its stderr:\n"
                                  << proxy_.stderr_text();
    }
  }

  void start_proxy(const std::string& upstream) {
    std::string why;
    ASSERT_TRUE(proxy_.spawn({"--upstream", upstream}, why)) << why;
    started_ = true;
    const std::string line = proxy_.first_line();
    ASSERT_TRUE(line.starts_with("mongodb://127.0.0.1:") && line.ends_with("/\n"))
        << line << proxy_.stderr_text();
    proxy_uri_ = line.substr(0, line.size() - 1);
    port_ = port_of(proxy_uri_);
    mongo::client_options options;
    options.on_command = log_.listener();
    auto c = mongo::client::create(proxy_uri_, options);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    client_.emplace(std::move(*c));
  }

  // One connection to the proxy, handshake done, with `app_name` in its hello.
  mongo::connection open(std::string app_name = "") {
    mongo::connection_options o;
    o.app_name = std::move(app_name);
    const mongo::host h{mongo::host::kind::ipv4, "127.0.0.1", port_};
    auto c = mongo::connection::open(h, o);
    if (!c) ADD_FAILURE() << c.error().message;
    return std::move(c).value();
  }

  // Runs configureFailPoint (`json`) on admin and returns the proxy's reply.
  document configure(std::string_view json_text) {
    auto c = open();
    return c.run("admin", doc(json_text).view()).value();
  }
  // The same, expecting ok: 1.
  void arm(std::string_view json_text) {
    const document reply = configure(json_text);
    ASSERT_EQ(ok_of(reply.view()), 1.0) << json(reply.view());
  }

  std::string server_uri_, proxy_uri_, db_;
  std::uint16_t port_ = 0;
  proxy_process proxy_;
  bool started_ = false;
  command_log log_;
  std::optional<mongo::client> client_;
};

TEST_F(FailpointProxyTest, ForwardsCommandsBothWays) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 1, "x": "through the proxy"})").view()).has_value());
  auto cur = coll.find(doc(R"({"_id": 1})").view());
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  ASSERT_TRUE(cur->next().value());
  EXPECT_EQ(string_of(cur->current(), "x"), "through the proxy");
  // The handshake went through the proxy to FerretDB.
  const auto server = client_->server();
  ASSERT_TRUE(server.has_value());
  EXPECT_NE(json(server->hello.view()).find("maxWireVersion"), std::string::npos);
}

TEST_F(FailpointProxyTest, TimesFiresNTimesThenTurnsItselfOff) {
  const document reply = configure(
      R"({"configureFailPoint": "failCommand", "mode": {"times": 2},
          "data": {"failCommands": ["find"], "errorCode": 2}})");
  EXPECT_EQ(ok_of(reply.view()), 1.0) << json(reply.view());
  EXPECT_EQ(int_of(reply.view(), "count"), 0);
  auto c = open();
  const auto find = doc(R"({"find": "c"})");
  for (int i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    const document r = c.run(db_, find.view()).value();
    EXPECT_EQ(ok_of(r.view()), 0.0) << json(r.view());
    EXPECT_EQ(int_of(r.view(), "code"), 2);
    EXPECT_EQ(string_of(r.view(), "codeName"), "BadValue");
    EXPECT_EQ(string_of(r.view(), "errmsg"), failpoint_errmsg);
    EXPECT_FALSE(r.view().contains("errorLabels"));
  }
  const document third = c.run(db_, find.view()).value();
  EXPECT_EQ(ok_of(third.view()), 1.0) << json(third.view());
  // Other commands never met it; the count says how often it fired.
  const document off = configure(R"({"configureFailPoint": "failCommand", "mode": "off"})");
  EXPECT_EQ(int_of(off.view(), "count"), 2);
}

TEST_F(FailpointProxyTest, SkipLetsNCommandsThroughThenFiresEveryTime) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"skip": 2},
          "data": {"failCommands": ["count"], "errorCode": 8}})");
  auto c = open();
  const auto count = doc(R"({"count": "c"})");
  const double want[] = {1, 1, 0, 0, 0};
  for (std::size_t i = 0; i < std::size(want); ++i) {
    SCOPED_TRACE(i);
    const document r = c.run(db_, count.view()).value();
    EXPECT_EQ(ok_of(r.view()), want[i]) << json(r.view());
    if (want[i] == 0) {
      EXPECT_EQ(int_of(r.view(), "code"), 8);
      EXPECT_EQ(string_of(r.view(), "codeName"), "UnknownError");
    }
  }
}

TEST_F(FailpointProxyTest, FiresOnlyForTheNamedCommandsAndTheirAliases) {
  arm(R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
          "data": {"failCommands": ["findandmodify", "distinct"], "errorCode": 96}})");
  auto c = open();
  const document fam =
      c.run(db_, doc(R"({"findAndModify": "c", "query": {}, "remove": true})").view()).value();
  EXPECT_EQ(int_of(fam.view(), "code"), 96) << json(fam.view());
  EXPECT_EQ(string_of(fam.view(), "codeName"), "OperationFailed");
  const document distinct = c.run(db_, doc(R"({"distinct": "c", "key": "x"})").view()).value();
  EXPECT_EQ(int_of(distinct.view(), "code"), 96) << json(distinct.view());
  for (const char* other : {R"({"ping": 1})", R"({"find": "c"})", R"({"count": "c"})"}) {
    SCOPED_TRACE(other);
    const document r = c.run(db_, doc(other).view()).value();
    EXPECT_EQ(ok_of(r.view()), 1.0) << json(r.view());
  }
  // configureFailPoint is never failed, even when named.
  arm(R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
          "data": {"failCommands": ["configureFailPoint"], "errorCode": 2}})");
  arm(R"({"configureFailPoint": "failCommand", "mode": "off"})");
}

TEST_F(FailpointProxyTest, ErrorLabelsAreTheGivenOnes) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 2},
          "data": {"failCommands": ["insert"], "errorCode": 91,
                   "errorLabels": ["Foo", "Bar"]}})");
  auto c = open();
  const auto insert = doc(R"({"insert": "c", "documents": [{"_id": 1}], "txnNumber": 1})");
  const document r = c.run(db_, insert.view()).value();
  EXPECT_EQ(labels_of(r.view()), (std::vector<std::string>{"Foo", "Bar"})) << json(r.view());
  EXPECT_EQ(string_of(r.view(), "codeName"), "ShutdownInProgress");
  // An empty list means none, not the automatic RetryableWriteError.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"], "errorCode": 91, "errorLabels": []}})");
  const document none = c.run(db_, insert.view()).value();
  EXPECT_EQ(int_of(none.view(), "code"), 91);
  EXPECT_FALSE(none.view().contains("errorLabels")) << json(none.view());
}

TEST_F(FailpointProxyTest, AddsRetryableWriteErrorAsTheServerDoes) {
  struct test_case {
    std::string_view name, command;
    std::int32_t code;
    std::vector<std::string> labels;
  };
  const std::vector<std::string> retryable{"RetryableWriteError"}, none{};
  const test_case cases[] = {
      {"retryable write, retryable code", R"({"insert": "c", "documents": [{}], "txnNumber": 1})",
       91, retryable},
      {"update, NotWritablePrimary", R"({"update": "c", "updates": [], "txnNumber": 2})", 10107,
       retryable},
      {"ExceededTimeLimit", R"({"delete": "c", "deletes": [], "txnNumber": 3})", 262, retryable},
      {"no txnNumber", R"({"insert": "c", "documents": [{}]})", 91, none},
      {"code not retryable", R"({"insert": "c", "documents": [{}], "txnNumber": 4})", 2, none},
      {"DuplicateKey", R"({"insert": "c", "documents": [{}], "txnNumber": 5})", 11000, none},
      // Inside a transaction a retryable code is transient: the whole transaction may be run
      // again, the write alone is not retried.
      {"inside a transaction",
       R"({"insert": "c", "documents": [{}], "txnNumber": 6, "autocommit": false})",
       91,
       {"TransientTransactionError"}},
      {"WriteConflict inside a transaction",
       R"({"insert": "c", "documents": [{}], "txnNumber": 9, "autocommit": false})",
       112,
       {"TransientTransactionError"}},
      {"commitTransaction", R"({"commitTransaction": 1, "txnNumber": 7, "autocommit": false})", 91,
       retryable},
      {"abortTransaction", R"({"abortTransaction": 1, "txnNumber": 8, "autocommit": false})", 189,
       retryable},
      {"commit, NoSuchTransaction",
       R"({"commitTransaction": 1, "txnNumber": 10, "autocommit": false})",
       251,
       {"TransientTransactionError"}},
  };
  auto c = open();
  for (const auto& t : cases) {
    SCOPED_TRACE(t.name);
    const auto command = doc(t.command);
    const std::string name(command.view().begin()->key());
    arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
            "data": {"failCommands": [")" +
        name + R"("], "errorCode": )" + std::to_string(t.code) + "}}");
    const document r = c.run("admin", command.view()).value();
    EXPECT_EQ(int_of(r.view(), "code"), t.code) << json(r.view());
    EXPECT_EQ(labels_of(r.view()), t.labels) << json(r.view());
  }
}

TEST_F(FailpointProxyTest, CloseConnectionClosesTheClientsSocketWithoutAReply) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["find"], "closeConnection": true}})");
  auto c = open();
  const auto r = c.run(db_, doc(R"({"find": "c"})").view());
  ASSERT_FALSE(r.has_value()) << json(r->view());
  EXPECT_TRUE(c.broken());
  EXPECT_EQ(r.error().code, oid::mongo::errc::connection_closed) << r.error().message();
  // The next connection works (times: 1 is spent).
  auto again = open();
  EXPECT_EQ(ok_of(again.run(db_, doc(R"({"find": "c"})").view()).value()), 1.0);

  // oid's client retries the read once on a new connection.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["find"], "closeConnection": true}})");
  auto cur = client_->collection(db_, "c").find();
  ASSERT_TRUE(cur.has_value()) << cur.error().message;
  EXPECT_EQ(log_.started("find").size(), 2u);
  EXPECT_EQ(log_.failed("find"), 1);
  EXPECT_EQ(log_.succeeded("find"), 1);
}

TEST_F(FailpointProxyTest, BlockConnectionWaitsAtLeastBlockTimeMSThenGoesOn) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["ping"], "blockConnection": true, "blockTimeMS": 300}})");
  auto c = open();
  const auto ping = doc(R"({"ping": 1})");
  auto start = std::chrono::steady_clock::now();
  const document forwarded = c.run("admin", ping.view()).value();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 300ms);
  EXPECT_EQ(ok_of(forwarded.view()), 1.0) << json(forwarded.view());

  // Blocked, then failed.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["ping"], "blockConnection": true, "blockTimeMS": 200,
                   "errorCode": 89}})");
  start = std::chrono::steady_clock::now();
  const document failed = c.run("admin", ping.view()).value();
  EXPECT_GE(std::chrono::steady_clock::now() - start, 200ms);
  EXPECT_EQ(int_of(failed.view(), "code"), 89) << json(failed.view());
  EXPECT_EQ(string_of(failed.view(), "codeName"), "NetworkTimeout");
}

TEST_F(FailpointProxyTest, StopsAtOnceWhileAConnectionIsBlocked) {
  arm(R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
          "data": {"failCommands": ["ping"], "blockConnection": true, "blockTimeMS": 600000}})");
  std::optional<oid::result<document>> blocked;
  std::thread waiter([&] {
    auto c = open();
    blocked.emplace(c.run("admin", doc(R"({"ping": 1})").view()));
  });
  // Give the ping time to reach the proxy; if it has not, the proxy stops all the same.
  std::this_thread::sleep_for(300ms);
  client_.reset();  // nothing to drop: the test wrote nothing
  EXPECT_EQ(proxy_.stop(), 0) << "a ten-minute block must not hold SIGTERM up; stderr:\n"
                              << proxy_.stderr_text();
  started_ = false;
  waiter.join();
  ASSERT_TRUE(blocked.has_value());
  EXPECT_FALSE(blocked->has_value()) << "the blocked ping got a reply";
}

TEST_F(FailpointProxyTest, WriteConcernErrorIsAddedToTheServersReply) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"],
                   "writeConcernError": {"code": 91, "errmsg": "Replication is being shut down"}}})");
  auto c = open();
  const document r =
      c.run(db_, doc(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}]})").view()).value();
  EXPECT_EQ(ok_of(r.view()), 1.0) << json(r.view());
  EXPECT_EQ(int_of(r.view(), "n"), 2) << "the command was forwarded and applied";
  const auto wce = r.view().find("writeConcernError");
  ASSERT_TRUE(wce.has_value()) << json(r.view());
  EXPECT_EQ(json(wce->get_document().value()),
            R"({"code":91,"errmsg":"Replication is being shut down"})");
  EXPECT_FALSE(r.view().contains("errorLabels")) << "no txnNumber: not a retryable write";
  // Through the client: write_concern_failed, with the server's error.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"],
                   "writeConcernError": {"code": 64, "errmsg": "waiting for replication timed out"}}})");
  const auto w = client_->collection(db_, "c").insert_one(doc(R"({"_id": 3})").view());
  ASSERT_FALSE(w.has_value());
  EXPECT_EQ(w.error().code, oid::mongo::errc::write_concern_failed) << w.error().message;
  ASSERT_TRUE(w.error().write_concern_error.has_value());
  EXPECT_EQ(w.error().write_concern_error->code, 64);
  EXPECT_EQ(client_->collection(db_, "c").count_documents().value(), 3);
}

TEST_F(FailpointProxyTest, AppNameLimitsTheFailPointToThatApplication) {
  arm(R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
          "data": {"failCommands": ["ping"], "errorCode": 8, "appName": "fp-app-a"}})");
  const auto ping = doc(R"({"ping": 1})");
  auto a = open("fp-app-a");
  auto b = open("fp-app-b");
  auto none = open();
  EXPECT_EQ(int_of(a.run("admin", ping.view()).value(), "code"), 8);
  EXPECT_EQ(ok_of(b.run("admin", ping.view()).value()), 1.0);
  EXPECT_EQ(ok_of(none.run("admin", ping.view()).value()), 1.0);
  // A client whose connection string names the application.
  auto app_client = mongo::client::create(proxy_uri_ + "?appName=fp-app-a").value();
  const auto r = app_client.run_command("admin", ping.view());
  ASSERT_FALSE(r.has_value());
  ASSERT_TRUE(r.error().server.has_value()) << r.error().message;
  EXPECT_EQ(r.error().server->code, 8);
  EXPECT_EQ(r.error().server->message, failpoint_errmsg);
}

TEST_F(FailpointProxyTest, OffClearsTheFailPoint) {
  arm(R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
          "data": {"failCommands": ["ping"], "errorCode": 2}})");
  const auto ping = doc(R"({"ping": 1})");
  auto c = open();
  EXPECT_EQ(ok_of(c.run("admin", ping.view()).value()), 0.0);
  EXPECT_EQ(ok_of(c.run("admin", ping.view()).value()), 0.0);
  const document off = configure(R"({"configureFailPoint": "failCommand", "mode": "off"})");
  EXPECT_EQ(ok_of(off.view()), 1.0);
  EXPECT_EQ(int_of(off.view(), "count"), 2);
  EXPECT_EQ(ok_of(c.run("admin", ping.view()).value()), 1.0);
  // times: 0 fires no time at all.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 0},
          "data": {"failCommands": ["ping"], "errorCode": 2}})");
  EXPECT_EQ(ok_of(c.run("admin", ping.view()).value()), 1.0);
}

TEST_F(FailpointProxyTest, OtherFailPointsAreRefusedByName) {
  const document r =
      configure(R"({"configureFailPoint": "failCollectionInserts", "mode": "alwaysOn"})");
  EXPECT_EQ(ok_of(r.view()), 0.0) << json(r.view());
  const std::string message = string_of(r.view(), "errmsg");
  EXPECT_NE(message.find("failCollectionInserts"), std::string::npos) << message;
  EXPECT_NE(message.find("not supported by oid_failpoint_proxy"), std::string::npos) << message;
  // Through the client: a server error with that message; nothing was forwarded.
  const auto c = client_->run_command(
      "admin", doc(R"({"configureFailPoint": "maxTimeAlwaysTimeOut", "mode": "off"})").view());
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, oid::mongo::errc::server_error);
  EXPECT_NE(c.error().message.find("maxTimeAlwaysTimeOut"), std::string::npos) << c.error().message;
}

TEST_F(FailpointProxyTest, FailGetMoreAfterCursorCheckoutFailsTheGetMoreAndKillsTheCursor) {
  auto coll = client_->collection(db_, "c");
  for (int i = 0; i < 6; ++i) {
    builder d;
    d.append_int32("_id", i);
    ASSERT_TRUE(coll.insert_one(d.view()));
  }
  auto c = open();
  // A cursor of the server's, a batch of it read.
  const auto open_cursor = [&] {
    const document found = c.run(db_, doc(R"({"find": "c", "batchSize": 2})").view()).value();
    const auto cursor = found.view().find("cursor");
    if (!cursor || !cursor->get_document()) {
      ADD_FAILURE() << json(found.view());
      return std::int64_t{0};
    }
    const auto id = cursor->get_document()->find("id");
    EXPECT_TRUE(id.has_value()) << json(found.view());
    return id ? id->get_int64().value_or(0) : 0;
  };
  const auto get_more = [&](std::int64_t id) {
    builder b;
    b.append_int64("getMore", id).append_string("collection", "c").append_int32("batchSize", 2);
    return c.run(db_, b.view()).value();
  };
  const std::int64_t id = open_cursor();
  ASSERT_NE(id, 0);
  arm(R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": {"times": 1},
          "data": {"errorCode": 91, "closeConnection": false}})");
  // A cursor the server does not have is never checked out: the server's CursorNotFound, and the
  // fail point is not met.
  const document unknown = get_more(id + 12345);
  EXPECT_EQ(int_of(unknown, "code"), 43) << json(unknown.view());
  const document failed = get_more(id);
  EXPECT_EQ(ok_of(failed), 0.0) << json(failed.view());
  EXPECT_EQ(int_of(failed, "code"), 91);
  EXPECT_EQ(string_of(failed.view(), "codeName"), "ShutdownInProgress");
  EXPECT_EQ(string_of(failed.view(), "errmsg"),
            "Hit the 'failGetMoreAfterCursorCheckout' failpoint");
  EXPECT_FALSE(failed.view().contains("errorLabels")) << json(failed.view());
  // The server deletes a cursor whose getMore failed after its checkout: it is gone.
  const document gone = get_more(id);
  EXPECT_EQ(int_of(gone, "code"), 43) << json(gone.view());
  const document off =
      configure(R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "off"})");
  EXPECT_EQ(int_of(off, "count"), 1) << json(off.view());

  // Another application's connections only: this cursor goes on.
  const std::int64_t second = open_cursor();
  arm(R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "alwaysOn",
          "data": {"appName": "someone else"}})");
  const document through = get_more(second);
  EXPECT_EQ(ok_of(through), 1.0) << json(through.view());
  // Without errorCode: InternalError.
  arm(R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "alwaysOn"})");
  const document internal = get_more(second);
  EXPECT_EQ(int_of(internal, "code"), 1) << json(internal.view());
  EXPECT_EQ(string_of(internal.view(), "codeName"), "InternalError");
  arm(R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "off"})");
  EXPECT_EQ(int_of(get_more(second), "code"), 43);
}

TEST_F(FailpointProxyTest, AWritesReadConcernLosesOnlyAfterClusterTime) {
  // FerretDB refuses any readConcern on a write; a causally consistent session's write carries
  // afterClusterTime (from the proxy's clock on a replica set).
  {
    const auto u = mongo::uri::parse(server_uri_).value();
    auto direct = mongo::connection::open(u.hosts().front(), {}).value();
    const document refused = direct
                                 .run(db_, doc(R"({"insert": "c", "documents": [{"_id": 0}],
                              "readConcern": {"afterClusterTime": {"$timestamp": {"t": 1, "i": 1}}}})")
                                               .view())
                                 .value();
    EXPECT_EQ(ok_of(refused), 0.0) << json(refused.view());
  }
  auto c = open();
  const document causal = c.run(db_, doc(R"({"insert": "c", "documents": [{"_id": 1}],
                         "readConcern": {"afterClusterTime": {"$timestamp": {"t": 1, "i": 1}}}})")
                                         .view())
                              .value();
  EXPECT_EQ(ok_of(causal), 1.0) << json(causal.view());
  EXPECT_EQ(int_of(causal, "n"), 1);
  // Anything else goes on: a snapshot session's write is refused, as MongoDB refuses it.
  for (const char* concern :
       {R"({"level": "snapshot"})",
        R"({"level": "snapshot", "afterClusterTime": {"$timestamp": {"t": 1, "i": 1}}})"}) {
    SCOPED_TRACE(concern);
    const document snapshot =
        c.run(db_,
              doc(std::string(R"({"insert": "c", "documents": [{"_id": 2}], "readConcern": )") +
                  concern + "}")
                  .view())
            .value();
    EXPECT_EQ(ok_of(snapshot), 0.0) << json(snapshot.view());
  }
  EXPECT_EQ(client_->collection(db_, "c").count_documents().value(), 1);
}

TEST_F(FailpointProxyTest, BadArgumentsAreRefusedWithAMessage) {
  struct test_case {
    std::string_view command, says;
  };
  const test_case cases[] = {
      {R"({"configureFailPoint": 1, "mode": "off"})", "name must be a string"},
      {R"({"configureFailPoint": "failCommand"})", "mode is missing"},
      {R"({"configureFailPoint": "failCommand", "mode": "sometimes"})", "sometimes"},
      {R"({"configureFailPoint": "failCommand", "mode": 5})", "mode must be"},
      {R"({"configureFailPoint": "failCommand", "mode": {"times": -1}})", "non-negative"},
      {R"({"configureFailPoint": "failCommand", "mode": {"times": 1.5}})", "non-negative"},
      {R"({"configureFailPoint": "failCommand", "mode": {"times": 1, "skip": 1}})", "one field"},
      {R"({"configureFailPoint": "failCommand", "mode": {}})", "one field"},
      {R"({"configureFailPoint": "failCommand", "mode": {"often": 1}})", "often"},
      {R"({"configureFailPoint": "failCommand", "mode": {"activationProbability": 0.5}})",
       "activationProbability"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn", "data": 5})", "data must be"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": "find", "errorCode": 2}})",
       "failCommands"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find", 1], "errorCode": 2}})",
       "failCommands"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": "2"}})",
       "errorCode"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": {"$numberLong": "4294967296"}}})",
       "errorCode"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "blockConnection": true}})",
       "blockTimeMS is required"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "blockConnection": true, "blockTimeMS": -1}})",
       "blockTimeMS"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "closeConnection": "yes"}})",
       "closeConnection"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": 2, "errorLabels": "x"}})",
       "errorLabels"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "writeConcernError": 1}})",
       "writeConcernError"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": 2, "appName": 1}})",
       "appName"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": 2, "namespace": "a.b"}})",
       "namespace is not supported"},
      {R"({"configureFailPoint": "failCommand", "mode": "alwaysOn",
           "data": {"failCommands": ["find"], "errorCode": 2, "bogus": 1}})",
       "bogus"},
      {R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "alwaysOn",
           "data": {"failBeforeCommitExceptionCode": "1"}})",
       "failBeforeCommitExceptionCode"},
      {R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "alwaysOn",
           "data": {"closeConnection": "no"}})",
       "closeConnection"},
      {R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "alwaysOn",
           "data": {"errorCode": 1}})",
       "errorCode is not a field of onPrimaryTransactionalWrite"},
      {R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"often": 1}})", "often"},
      {R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "alwaysOn",
           "data": {"errorCode": "91"}})",
       "errorCode"},
      {R"({"configureFailPoint": "failGetMoreAfterCursorCheckout", "mode": "alwaysOn",
           "data": {"blockConnection": true}})",
       "blockConnection is not a field of failGetMoreAfterCursorCheckout"},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.command);
    const document r = configure(t.command);
    EXPECT_EQ(ok_of(r.view()), 0.0) << json(r.view());
    EXPECT_EQ(int_of(r.view(), "code"), 2);
    const std::string message = string_of(r.view(), "errmsg");
    EXPECT_NE(message.find(t.says), std::string::npos) << message;
  }
  // Not on admin.
  auto c = open();
  const document elsewhere =
      c.run(db_, doc(R"({"configureFailPoint": "failCommand", "mode": "off"})").view()).value();
  EXPECT_EQ(int_of(elsewhere.view(), "code"), 13) << json(elsewhere.view());
  EXPECT_NE(string_of(elsewhere.view(), "errmsg").find("admin"), std::string::npos);
  // None of them armed anything, and the proxy still serves.
  EXPECT_EQ(ok_of(c.run(db_, doc(R"({"find": "c"})").view()).value()), 1.0);
}

TEST_F(FailpointProxyTest, GarbageBytesCloseOnlyThatConnection) {
  struct test_case {
    std::string_view name;
    std::vector<std::uint8_t> bytes;
    std::string_view logged;
  };
  const auto le32 = [](std::vector<std::uint8_t>& v, std::uint32_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
  };
  std::vector<std::uint8_t> short_length, huge_length, bad_msg, text;
  le32(short_length, 3);
  for (int i = 0; i < 12; ++i) short_length.push_back(0);
  le32(huge_length, 100'000'000);
  le32(huge_length, 1);
  le32(huge_length, 0);
  le32(huge_length, 2013);
  le32(bad_msg, 40);  // an OP_MSG whose body claims 1,000 bytes in a 40-byte message
  le32(bad_msg, 1);
  le32(bad_msg, 0);
  le32(bad_msg, 2013);
  le32(bad_msg, 0);      // flags
  bad_msg.push_back(0);  // kind 0
  le32(bad_msg, 1000);
  while (bad_msg.size() < 40) bad_msg.push_back(0xEE);
  for (char ch : std::string_view("GARBAGE GARBAGE GARBAGE GARBAGE\r\n")) {
    text.push_back(static_cast<std::uint8_t>(ch));
  }
  const test_case cases[] = {
      {"length below 16", short_length, "message header"},
      {"length above 48 MB", huge_length, "message header"},
      {"OP_MSG that does not decode", bad_msg, "cannot read"},
      {"text", text, "message header"},
  };
  for (const auto& t : cases) {
    SCOPED_TRACE(t.name);
    raw_socket s(port_);
    ASSERT_TRUE(s.connected());
    ASSERT_TRUE(s.send(t.bytes));
    EXPECT_TRUE(s.closed_by_peer());
    EXPECT_NE(proxy_.stderr_text().find(t.logged), std::string::npos) << proxy_.stderr_text();
  }
  // Half a message, then the client goes away: said on stderr, nothing else.
  {
    raw_socket s(port_);
    ASSERT_TRUE(s.connected());
    ASSERT_TRUE(s.send(std::span(bad_msg).first(20)));
  }
  // The proxy still serves everyone else.
  const auto ping = client_->run_command("admin", doc(R"({"ping": 1})").view());
  EXPECT_TRUE(ping.has_value()) << ping.error().message;
}

TEST_F(FailpointProxyTest, RandomBytesNeverStopTheProxy) {
  // 300 connections of seeded random bytes, half of them behind a plausible OP_MSG header: the
  // proxy closes each (at once, or at the end of the stream) and goes on serving.
  std::mt19937 random(20261204);
  const auto byte = [&] { return static_cast<std::uint8_t>(random() & 0xFF); };
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE(i);
    std::vector<std::uint8_t> bytes;
    const std::size_t size = 1 + random() % 200;
    if (i % 2 == 0 && size >= 16) {
      for (const std::uint32_t word : {static_cast<std::uint32_t>(size), 1u, 0u, 2013u}) {
        for (int k = 0; k < 4; ++k) bytes.push_back(static_cast<std::uint8_t>(word >> (8 * k)));
      }
    }
    while (bytes.size() < size) bytes.push_back(byte());
    raw_socket s(port_);
    ASSERT_TRUE(s.connected());
    ASSERT_TRUE(s.send(bytes));
    s.shutdown_write();
    ASSERT_TRUE(s.closed_by_peer());
  }
  const auto ping = client_->run_command("admin", doc(R"({"ping": 1})").view());
  EXPECT_TRUE(ping.has_value()) << ping.error().message;
}

TEST_F(FailpointProxyTest, UnacknowledgedWritesGetNoReply) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"], "errorCode": 2}})");
  raw_socket s(port_);
  ASSERT_TRUE(s.connected());
  const std::string insert = R"({"insert": "c", "documents": [{"_id": "ID"}],
                                 "writeConcern": {"w": 0}, "$db": ")" +
                             db_ + R"("})";
  // The first fails (and says nothing), the second is forwarded (and the server says nothing).
  ASSERT_TRUE(s.send_msg(1, doc(std::string(insert).replace(insert.find("ID"), 2, "one")).view(),
                         mongo::op_msg_flags::more_to_come));
  ASSERT_TRUE(s.send_msg(2, doc(std::string(insert).replace(insert.find("ID"), 2, "two")).view(),
                         mongo::op_msg_flags::more_to_come));
  ASSERT_TRUE(s.send_msg(3, doc(R"({"ping": 1, "$db": "admin"})").view()));
  // FerretDB v1.24 answers requests with moreToCome too (a server must not); the proxy passes
  // those replies on, and makes none of its own for the request it failed.
  while (true) {
    const auto bytes = s.read_message();
    ASSERT_FALSE(bytes.empty()) << "no reply to the ping";
    const auto reply = mongo::decode_op_msg(bytes);
    ASSERT_TRUE(reply.has_value());
    EXPECT_NE(reply->response_to, 1) << "a reply to the failed unacknowledged insert";
    if (reply->response_to == 3) {
      EXPECT_EQ(ok_of(reply->body), 1.0);
      break;
    }
  }
  // Only the second document reached the server.
  auto coll = client_->collection(db_, "c");
  EXPECT_EQ(coll.count_documents(doc(R"({"_id": "one"})").view()).value(), 0);
  EXPECT_EQ(coll.count_documents(doc(R"({"_id": "two"})").view()).value(), 1);
}

TEST_F(FailpointProxyTest, PassesOtherOpcodesThroughUnchanged) {
  // A legacy OP_QUERY isMaster on admin.$cmd, as old drivers open a connection: FerretDB
  // answers with an OP_REPLY (opCode 1), which the proxy passes back as it is.
  std::vector<std::uint8_t> q;
  const auto le32 = [&](std::uint32_t x) {
    for (int i = 0; i < 4; ++i) q.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
  };
  const auto body = doc(R"({"isMaster": 1})");
  const std::string_view collection("admin.$cmd\0", 11);
  le32(static_cast<std::uint32_t>(16 + 4 + collection.size() + 8 + body.value.size()));
  le32(77);    // requestID
  le32(0);     // responseTo
  le32(2004);  // OP_QUERY
  le32(0);     // flags
  q.insert(q.end(), collection.begin(), collection.end());
  le32(0);   // numberToSkip
  le32(-1);  // numberToReturn
  const auto body_bytes = body.value.bytes();
  q.insert(q.end(), body_bytes.begin(), body_bytes.end());
  raw_socket s(port_);
  ASSERT_TRUE(s.connected());
  ASSERT_TRUE(s.send(q));
  const auto reply = s.read_message();
  ASSERT_GE(reply.size(), 16u);
  const auto h = mongo::decode_header(reply).value();
  EXPECT_EQ(h.op_code, 1);
  EXPECT_EQ(h.response_to, 77);
}

// ---- Against FerretDB as a one-member replica set (MONGODB_RS_URI) ---------------------------

class FailpointProxyReplicaSetTest : public FailpointProxyTest {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_RS_URI", server_uri_);
    set_name_ = mongo::uri::parse(server_uri_).value().replica_set().value_or("");
    ASSERT_FALSE(set_name_.empty()) << "MONGODB_RS_URI names no replicaSet: " << server_uri_;
    start_proxy(first_host(server_uri_));
    db_ = "oid_fp_" + oid::generate().to_hex().substr(16);
    mongo::client_options options;
    options.on_command = log_.listener();
    auto c = mongo::client::create(proxy_uri_ + "?replicaSet=" + set_name_, options);
    ASSERT_TRUE(c.has_value()) << c.error().message;
    client_.emplace(std::move(*c));
  }
  std::string set_name_;
};

TEST_F(FailpointProxyReplicaSetTest, HelloNamesOnlyTheProxy) {
  const std::string proxy_address = "127.0.0.1:" + std::to_string(port_);
  // The server behind it lists itself by its own address.
  {
    const auto u = mongo::uri::parse(server_uri_).value();
    auto direct = mongo::connection::open(u.hosts().front(), {}).value();
    const document hello = direct.run("admin", doc(R"({"hello": 1})").view()).value();
    const auto hosts = hello.view().find("hosts");
    ASSERT_TRUE(hosts.has_value()) << json(hello.view());
    EXPECT_EQ(json(hosts->get_array().value()), R"({"0":")" + first_host(server_uri_) + R"("})");
  }
  auto c = open();
  for (const char* command : {R"({"hello": 1})", R"({"isMaster": 1})", R"({"ismaster": 1})"}) {
    SCOPED_TRACE(command);
    const document hello = c.run("admin", doc(command).view()).value();
    EXPECT_EQ(string_of(hello.view(), "setName"), set_name_);
    // FerretDB v1.24 sends neither me nor primary (HelloOfAScriptedMemberNamesOnlyTheProxy
    // covers them).
    for (const char* key : {"me", "primary"}) {
      if (hello.view().contains(key)) {
        EXPECT_EQ(string_of(hello.view(), key), proxy_address);
      }
    }
    const auto hosts = hello.view().find("hosts");
    ASSERT_TRUE(hosts.has_value()) << json(hello.view());
    EXPECT_EQ(json(hosts->get_array().value()), R"({"0":")" + proxy_address + R"("})");
  }
  // A replica-set client through the proxy discovers the proxy and nothing else.
  ASSERT_TRUE(client_->run_command("admin", doc(R"({"ping": 1})").view()).has_value());
  const auto topology = client_->topology();
  ASSERT_EQ(topology.servers.size(), 1u);
  EXPECT_EQ(topology.servers.begin()->first, proxy_address);
  EXPECT_EQ(topology.servers.begin()->second.type, mongo::server_type::rs_primary);
}

TEST_F(FailpointProxyReplicaSetTest, RetryableInsertIsRetriedOnceAfterOneInjectedFailure) {
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"], "errorCode": 91}})");
  auto coll = client_->collection(db_, "c");
  const auto r = coll.insert_one(doc(R"({"_id": 1, "x": "retried"})").view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  const auto inserts = log_.started("insert");
  ASSERT_EQ(inserts.size(), 2u);
  EXPECT_EQ(log_.failed("insert"), 1);
  EXPECT_EQ(log_.succeeded("insert"), 1);
  // The same write both times: one transaction number.
  const auto txn = [](const mongo::command_started_event& e) {
    const auto t = e.command.view().find("txnNumber");
    return t ? t->get_int64().value_or(-1) : -1;
  };
  EXPECT_GT(txn(inserts[0]), 0) << json(inserts[0].command.view());
  EXPECT_EQ(txn(inserts[0]), txn(inserts[1]));
  EXPECT_EQ(coll.count_documents().value(), 1);

  // With labels that say nothing of retrying, the client does not retry.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"], "errorCode": 91, "errorLabels": []}})");
  const auto refused = coll.insert_one(doc(R"({"_id": 2})").view());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().server.value_or(mongo::server_error{}).code, 91);
  EXPECT_EQ(log_.started("insert").size(), 3u);
}

TEST_F(FailpointProxyReplicaSetTest, ARetriedWriteIsAnsweredFromTheFirstOne) {
  // FerretDB applies a retried write again; the proxy answers it from the first, as a server
  // does. The client retries after the write concern error the proxy added to a write the server
  // applied: one document, and the retry succeeds.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"],
                   "writeConcernError": {"code": 91, "errmsg": "Replication is being shut down"}}})");
  auto coll = client_->collection(db_, "c");
  const auto r = coll.insert_one(doc(R"({"_id": 1})").view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(log_.started("insert").size(), 2u);
  EXPECT_EQ(log_.succeeded("insert"), 2) << "a write concern error is a reply with ok: 1";
  EXPECT_EQ(coll.count_documents().value(), 1);

  // The same (lsid, txnNumber) on another connection: the first reply, not a duplicate key.
  builder b;
  b.append_string("insert", "c");
  b.open_array("documents").open_document("0").append_int32("_id", 2).close().close();
  const std::uint8_t session_id[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
  b.open_document("lsid").append_binary("id", 4, session_id).close();
  b.append_int64("txnNumber", 1);
  const document insert = std::move(b).extract();
  auto first = open();
  const document applied = first.run(db_, insert.view()).value();
  EXPECT_EQ(int_of(applied, "n"), 1) << json(applied.view());
  auto second = open();
  const document replayed = second.run(db_, insert.view()).value();
  // The same reply (at a later logical time, as a server's is).
  EXPECT_EQ(json_without_clock(replayed.view()), json_without_clock(applied.view()));
  EXPECT_EQ(coll.count_documents().value(), 2);
  // A fail point still applies to the repeat: the first reply with its write concern error.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"],
                   "writeConcernError": {"code": 11600, "errmsg": "interrupted at shutdown"}}})");
  const document replayed_wce = second.run(db_, insert.view()).value();
  EXPECT_EQ(int_of(replayed_wce, "n"), 1) << json(replayed_wce.view());
  EXPECT_TRUE(replayed_wce.view().contains("writeConcernError")) << json(replayed_wce.view());
  EXPECT_EQ(labels_of(replayed_wce.view()), std::vector<std::string>{"RetryableWriteError"});
  EXPECT_EQ(coll.count_documents().value(), 2);
  // Without txnNumber it is a new write, which the server refuses.
  builder plain;
  plain.append_string("insert", "c");
  plain.open_array("documents").open_document("0").append_int32("_id", 2).close().close();
  const document again = second.run(db_, plain.view()).value();
  EXPECT_TRUE(again.view().contains("writeErrors")) << json(again.view());
}

TEST_F(FailpointProxyReplicaSetTest, WriteConcernErrorOfARetryableWriteIsLabelled) {
  auto c = open();
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"],
                   "writeConcernError": {"code": 91, "errmsg": "Replication is being shut down"}}})");
  builder b;
  b.append_string("insert", "c");
  b.open_array("documents").open_document("0").append_int32("_id", 1).close().close();
  const std::uint8_t session_id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  b.open_document("lsid").append_binary("id", 4, session_id).close();
  b.append_int64("txnNumber", 1);
  const document insert = std::move(b).extract();
  const document r = c.run(db_, insert.view()).value();
  EXPECT_EQ(ok_of(r.view()), 1.0) << json(r.view());
  EXPECT_TRUE(r.view().contains("writeConcernError")) << json(r.view());
  EXPECT_EQ(labels_of(r.view()), std::vector<std::string>{"RetryableWriteError"}) << json(r.view());
}

// ---- onPrimaryTransactionalWrite -----------------------------------------------------------

// The session of the retryable writes these tests send by hand.
constexpr std::string_view test_lsid =
    R"("lsid": {"id": {"$binary": {"base64": "AQIDBAUGBwgJCgsMDQ4PEA==", "subType": "04"}}})";

// `command` (JSON without its closing brace) as a retryable write of `test_lsid`, number `txn`.
std::string retryable(std::string_view command, int txn) {
  return std::string(command) + ", " + std::string(test_lsid) +
         R"(, "txnNumber": {"$numberLong": ")" + std::to_string(txn) + R"("}})";
}

TEST_F(FailpointProxyReplicaSetTest, ATransactionalWriteCommitsThenTheConnectionCloses) {
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1}})");
  const std::string insert =
      retryable(R"({"insert": "c", "documents": [{"_id": 1}, {"_id": 2}])", 1);
  auto first = open();
  const auto r = first.run(db_, doc(insert).view());
  ASSERT_FALSE(r.has_value()) << json(r->view());
  EXPECT_TRUE(first.broken());
  auto coll = client_->collection(db_, "c");
  EXPECT_EQ(coll.count_documents().value(), 2) << "the write commits before the connection closes";
  // The retry, on another connection: the first attempt's outcome, not a duplicate key.
  auto second = open();
  const document retried = second.run(db_, doc(insert).view()).value();
  EXPECT_EQ(ok_of(retried), 1.0) << json(retried.view());
  EXPECT_EQ(int_of(retried, "n"), 2) << json(retried.view());
  EXPECT_FALSE(retried.view().contains("writeErrors")) << json(retried.view());
  EXPECT_EQ(coll.count_documents().value(), 2);
  // One insert command is one commit: the fail point fired once.
  const document off =
      configure(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off"})");
  EXPECT_EQ(int_of(off, "count"), 1) << json(off.view());
}

TEST_F(FailpointProxyReplicaSetTest, AWriteCommittedBeforeTheConnectionClosedIsNotAppliedTwice) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 1, "x": 1})").view()));
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1}})");
  const auto r = coll.update_one(doc(R"({"_id": 1})").view(), doc(R"({"$inc": {"x": 1}})").view());
  ASSERT_TRUE(r.has_value()) << r.error().message;
  EXPECT_EQ(r->matched, 1);
  EXPECT_EQ(r->modified, 1);
  // Two attempts, one increment: the retry was answered from the transaction table.
  EXPECT_EQ(log_.started("update").size(), 2u);
  EXPECT_EQ(log_.failed("update"), 1);
  const auto after = coll.find_one(doc(R"({"_id": 1})").view()).value();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(int_of(*after, "x"), 2) << json(after->view());
}

TEST_F(FailpointProxyReplicaSetTest, FailBeforeCommitLeavesThatStatementUnappliedUntilTheRetry) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 1, "y": 0})").view()));
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 2, "y": 0})").view()));
  // As the server's own test of it: the first statement commits, the second fails with the code
  // and is not applied; the connection stays open (closeConnection: false).
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"skip": 1},
          "data": {"closeConnection": false, "failBeforeCommitExceptionCode": 1}})");
  const std::string update = retryable(
      R"({"update": "c", "ordered": true, "updates": [{"q": {"_id": 1}, "u": {"$inc": {"y": 1}}},
                                                      {"q": {"_id": 2}, "u": {"$inc": {"y": 1}}}])",
      2);
  auto c = open();
  const document failed = c.run(db_, doc(update).view()).value();
  EXPECT_EQ(ok_of(failed), 1.0) << json(failed.view());
  EXPECT_EQ(int_of(failed, "nModified"), 1) << json(failed.view());
  const auto errors = failed.view().find("writeErrors");
  ASSERT_TRUE(errors.has_value()) << json(failed.view());
  const auto first_error = errors->get_array().value().begin()->get_document().value();
  EXPECT_EQ(int_of(first_error, "index"), 1);
  EXPECT_EQ(int_of(first_error, "code"), 1);
  EXPECT_EQ(string_of(first_error, "codeName"), "InternalError");
  EXPECT_NE(string_of(first_error, "errmsg").find("must not be reflected"), std::string::npos);
  EXPECT_EQ(int_of(coll.find_one(doc(R"({"_id": 2})").view()).value().value(), "y"), 0);
  // The same statements again, the fail point off: the first from the table, the second applied.
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off"})");
  const document again = c.run(db_, doc(update).view()).value();
  EXPECT_EQ(int_of(again, "n"), 2) << json(again.view());
  EXPECT_EQ(int_of(again, "nModified"), 2) << json(again.view());
  EXPECT_FALSE(again.view().contains("writeErrors")) << json(again.view());
  for (const int id : {1, 2}) {
    SCOPED_TRACE(id);
    builder filter;
    filter.append_int32("_id", id);
    EXPECT_EQ(int_of(coll.find_one(filter.view()).value().value(), "y"), 1);
  }
}

TEST_F(FailpointProxyReplicaSetTest, AWriteThatNeverCommitsFailsAndChangesNothing) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 1})").view()));
  // Both attempts fail before their commit (and lose their connection): the client gives up.
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 2},
          "data": {"failBeforeCommitExceptionCode": 1}})");
  const auto never = coll.delete_one(doc(R"({"_id": 1})").view());
  EXPECT_FALSE(never.has_value());
  EXPECT_EQ(log_.started("delete").size(), 2u);
  EXPECT_EQ(coll.count_documents().value(), 1);
  // Only the first attempt fails: the retry deletes it.
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1},
          "data": {"failBeforeCommitExceptionCode": 1}})");
  const auto once = coll.delete_one(doc(R"({"_id": 1})").view());
  ASSERT_TRUE(once.has_value()) << once.error().message;
  EXPECT_EQ(*once, 1);
  EXPECT_EQ(log_.started("delete").size(), 4u);
  EXPECT_EQ(coll.count_documents().value(), 0);
}

TEST_F(FailpointProxyReplicaSetTest, OnlyAWriteThatCommitsMeetsTheTransactionalWriteFailPoint) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 1})").view()));
  arm(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": {"times": 1}})");
  auto c = open();
  // A delete that matches nothing writes nothing: the server's fail point is not met.
  const document none =
      c.run(db_, doc(retryable(R"({"delete": "c", "deletes": [{"q": {"_id": 99}, "limit": 1}])", 3))
                     .view())
          .value();
  EXPECT_EQ(ok_of(none), 1.0) << json(none.view());
  EXPECT_EQ(int_of(none, "n"), 0);
  // Nor a command without txnNumber.
  EXPECT_EQ(ok_of(c.run(db_, doc(R"({"insert": "c", "documents": [{"_id": 2}]})").view()).value()),
            1.0);
  // This one commits, then its connection closes.
  const auto closed = c.run(
      db_,
      doc(retryable(R"({"delete": "c", "deletes": [{"q": {"_id": 1}, "limit": 1}])", 4)).view());
  EXPECT_FALSE(closed.has_value());
  EXPECT_EQ(coll.count_documents().value(), 1);
  const document off =
      configure(R"({"configureFailPoint": "onPrimaryTransactionalWrite", "mode": "off"})");
  EXPECT_EQ(int_of(off, "count"), 1) << json(off.view());
}

// ---- Transactions over FerretDB (transaction_emulator) --------------------------------------

TEST_F(FailpointProxyReplicaSetTest, ATransactionCommitsItsWritesAndAnAbortUndoesThem) {
  auto coll = client_->collection(db_, "c");
  ASSERT_TRUE(coll.insert_one(doc(R"({"_id": 0, "x": "before"})").view()));
  auto s = client_->start_session().value();
  auto in = coll.with_session(s);
  // Committed: the writes stay.
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(in.insert_one(doc(R"({"_id": 1})").view()));
  ASSERT_TRUE(in.update_one(doc(R"({"_id": 0})").view(), doc(R"({"$set": {"x": "in 1"}})").view()));
  ASSERT_TRUE(s.commit_transaction());
  EXPECT_EQ(coll.count_documents().value(), 2);
  // Aborted: the collection as it was before the transaction, every document.
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(in.insert_one(doc(R"({"_id": 2})").view()));
  ASSERT_TRUE(in.update_one(doc(R"({"_id": 0})").view(), doc(R"({"$set": {"x": "in 2"}})").view()));
  ASSERT_TRUE(in.delete_one(doc(R"({"_id": 1})").view()));
  ASSERT_TRUE(s.abort_transaction());
  EXPECT_EQ(coll.count_documents().value(), 2);
  const auto zero = coll.find_one(doc(R"({"_id": 0})").view()).value();
  ASSERT_TRUE(zero.has_value());
  EXPECT_EQ(string_of(zero->view(), "x"), "in 1");
  EXPECT_TRUE(coll.find_one(doc(R"({"_id": 1})").view()).value().has_value());
  // A collection the transaction made is dropped by the abort.
  auto fresh = client_->collection(db_, "made_in_a_transaction").with_session(s);
  ASSERT_TRUE(s.start_transaction());
  ASSERT_TRUE(fresh.insert_one(doc(R"({"_id": 1})").view()));
  ASSERT_TRUE(s.abort_transaction());
  const auto names = client_->database(db_).list_collection_names().value();
  EXPECT_EQ(std::count(names.begin(), names.end(), "made_in_a_transaction"), 0);
  // The commands reached the server without the transaction's fields, which FerretDB refuses.
  EXPECT_TRUE(log_.failed("insert") == 0) << "FerretDB refused a transaction's insert";
}

TEST_F(FailpointProxyReplicaSetTest, UnknownTransactionsAreRefusedAsTheServerDoes) {
  auto c = open();
  const std::uint8_t session_id[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  const auto command = [&](std::string_view name, std::int64_t txn, bool start) {
    builder b;
    if (name == "insert") {
      b.append_string("insert", "c");
      b.open_array("documents").open_document("0").append_int32("_id", 1).close().close();
    } else {
      b.append_int32(name, 1);
    }
    b.open_document("lsid").append_binary("id", 4, session_id).close();
    b.append_int64("txnNumber", txn);
    if (start) b.append_bool("startTransaction", true);
    b.append_bool("autocommit", false);
    return std::move(b).extract();
  };
  const auto run = [&](std::string_view db, std::string_view name, std::int64_t txn, bool start) {
    const document cmd = command(name, txn, start);
    return c.run(db, cmd.view()).value();
  };
  // A transaction never started.
  const document never = run(db_, "insert", 5, false);
  EXPECT_EQ(int_of(never, "code"), 251) << json(never.view());
  EXPECT_EQ(labels_of(never.view()), std::vector<std::string>{"TransientTransactionError"});
  // Started, committed: a commit again is ok, an abort is TransactionCommitted.
  EXPECT_EQ(ok_of(run(db_, "insert", 5, true)), 1.0);
  EXPECT_EQ(ok_of(run("admin", "commitTransaction", 5, false)), 1.0);
  EXPECT_EQ(ok_of(run("admin", "commitTransaction", 5, false)), 1.0);
  const document late = run("admin", "abortTransaction", 5, false);
  EXPECT_EQ(int_of(late, "code"), 256) << json(late.view());
  // A lower number cannot start again.
  const document old = run(db_, "insert", 4, true);
  EXPECT_EQ(int_of(old, "code"), 251) << json(old.view());
  // A command the server refuses aborts the transaction: the next one finds none.
  EXPECT_EQ(ok_of(run(db_, "insert", 6, true)), 1.0) << "ok: 1 with a duplicate key write error";
  const document after = run("admin", "commitTransaction", 6, false);
  EXPECT_EQ(int_of(after, "code"), 251) << json(after.view());
}

TEST_F(FailpointProxyReplicaSetTest, RepliesCarryALogicalClockAndInTransactionErrorsAreTransient) {
  auto c = open();
  const document ping = c.run("admin", doc(R"({"ping": 1})").view()).value();
  EXPECT_TRUE(ping.view().contains("operationTime")) << json(ping.view());
  EXPECT_TRUE(ping.view().contains("$clusterTime")) << json(ping.view());
  const auto t1 = ping.view().find("operationTime")->get_timestamp().value();
  const document again = c.run("admin", doc(R"({"ping": 1})").view()).value();
  const auto t2 = again.view().find("operationTime")->get_timestamp().value();
  EXPECT_TRUE(t2.t > t1.t || (t2.t == t1.t && t2.i > t1.i)) << "the clock goes forward";
  // failCommand inside a transaction: WriteConflict is labelled transient, as the server does.
  arm(R"({"configureFailPoint": "failCommand", "mode": {"times": 1},
          "data": {"failCommands": ["insert"], "errorCode": 112}})");
  auto s = client_->start_session().value();
  ASSERT_TRUE(s.start_transaction());
  const auto r =
      client_->collection(db_, "c").with_session(s).insert_one(doc(R"({"_id": 1})").view());
  ASSERT_FALSE(r.has_value());
  EXPECT_TRUE(r.error().has_label("TransientTransactionError")) << r.error().message;
}

}  // namespace
