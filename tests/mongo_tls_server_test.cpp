// TLS against FerretDB's TLS listener (scripts/test.sh starts it with `scripts/ferretdb.sh
// start-secure` and exports MONGODB_TLS_URI and MONGODB_TLS_CERTS, the certificates it uses):
// SCRAM over TLS from several threads, wrong CA, host name mismatch and the two options that
// allow it, missing client certificate. Without those variables these tests skip, except under
// CI=true, where they fail.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ocsp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <mutex>
#include <oid/bson/builder.hpp>
#include <oid/mongo/client.hpp>
#include <oid/mongo/uri.hpp>
#include <oid/objectid/generator.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mongo/wire/connection.hpp"
#include "mongo/wire/tls.hpp"
#include "support/ci.hpp"
#include "support/matchers.hpp"
#include "support/open_as.hpp"
#include "support/script_server.hpp"

namespace {

namespace fs = std::filesystem;
namespace mongo = oid::mongo;
using oid::testing::open_as;
using oid::testing::ping_new_client;
using namespace std::chrono_literals;
using oid::errc;
using oid::bson::builder;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------------------------
// FerretDB's TLS listener (it requires a client certificate from MONGODB_TLS_CERTS/ca.pem).

class MongoTlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OID_SERVER_URI_OR_SKIP("MONGODB_TLS_URI", uri_);
    certs_ = oid::testing::environment("MONGODB_TLS_CERTS");
    if (certs_.empty()) OID_SKIP_OR_FAIL_IN_CI("MONGODB_TLS_CERTS is not set");
    auto u = mongo::uri::parse(uri_);
    ASSERT_TRUE(u.has_value()) << "MONGODB_TLS_URI: " << u.error().message;
    port_ = u->hosts().front().port_or_default();
  }
  // MONGODB_TLS_URI with `from` replaced by `to` (the first time it occurs).
  std::string with(const std::string& from, const std::string& to) const {
    std::string out = uri_;
    const auto at = out.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) out.replace(at, from.size(), to);
    return out + "&serverSelectionTimeoutMS=2000";
  }
  std::string uri_, certs_;
  std::uint16_t port_ = 0;
};

TEST_F(MongoTlsServerTest, ScramOverTlsPingAndCrudFromSeveralThreads) {
  auto c = mongo::client::create(uri_);
  ASSERT_TRUE(c.has_value()) << c.error().message;
  const std::string name = "tls_" + oid::generate().to_hex();
  auto coll = c->collection("oid_tls_test", name);
  constexpr int threads = 4, per_thread = 25;
  std::vector<std::thread> workers;
  std::atomic<int> failures{0};
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        builder b;
        b.append_int32("thread", t).append_int32("i", i);
        if (!coll.insert_one(b.view())) ++failures;
      }
      builder filter;
      filter.append_int32("thread", t);
      auto n = coll.count_documents(filter.view());
      if (!n || *n != per_thread) ++failures;
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  auto total = coll.count_documents(builder().view());
  ASSERT_TRUE(total.has_value()) << total.error().message;
  EXPECT_EQ(*total, threads * per_thread);
  EXPECT_TRUE(coll.drop().has_value());
}

TEST_F(MongoTlsServerTest, WrongCaIsRefused) {
  const auto r = open_as(with(certs_ + "/ca.pem", certs_ + "/other-ca.pem"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::tls_failed) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("unknown CA"));
  EXPECT_THAT(r.error().message,
              Not(HasSubstr(std::string(mongo::uri::parse(uri_)->password()->reveal()))));
}

TEST_F(MongoTlsServerTest, MissingClientCertificateIsNamed) {
  const auto r = open_as(with("&tlsCertificateKeyFile=" + certs_ + "/client-bundle.pem", ""));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::tls_failed) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("no client certificate"));
}

TEST_F(MongoTlsServerTest, ClientCertificateFromAnotherCaIsRefused) {
  const auto r =
      open_as(with(certs_ + "/client-bundle.pem", certs_ + "/other-ca-client-bundle.pem"));
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code, oid::mongo::errc::tls_failed) << r.error().message;
  EXPECT_THAT(r.error().message, HasSubstr("refused the client certificate"));
}

// A name the certificate does not have: 127.0.0.2 (its subjectAltName has 127.0.0.1 and
// localhost), through a plain TCP forwarder listening there.
TEST_F(MongoTlsServerTest, HostNameMismatchAndTheOptionsThatAllowIt) {
  std::atomic<bool> done{false};
  const int listen_fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(0x7f000002);
  ASSERT_EQ(::bind(listen_fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(::listen(listen_fd, 16), 0);
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len);
  const auto forward_port = ntohs(addr.sin_port);
  std::vector<std::thread> pipes;
  std::thread acceptor([&] {
    while (!done) {
      pollfd p{listen_fd, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      pipes.emplace_back([&, fd] {
        const int up = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        to.sin_port = htons(port_);
        if (::connect(up, reinterpret_cast<sockaddr*>(&to), sizeof to) == 0) {
          char buffer[16384];
          while (!done) {
            pollfd ps[2] = {{fd, POLLIN, 0}, {up, POLLIN, 0}};
            if (::poll(ps, 2, 50) <= 0) continue;
            bool closed = false;
            for (int i = 0; i < 2 && !closed; ++i) {
              if (ps[i].revents == 0) continue;
              const ssize_t n = ::recv(ps[i].fd, buffer, sizeof buffer, 0);
              closed = n <= 0 ||
                       ::send(ps[1 - i].fd, buffer, static_cast<std::size_t>(n), MSG_NOSIGNAL) != n;
            }
            if (closed) break;
          }
        }
        ::close(up);
        ::close(fd);
      });
    }
  });
  const std::string host = "127.0.0.2:" + std::to_string(forward_port);
  const std::string direct = "127.0.0.1:" + std::to_string(port_);
  const auto r = open_as(with(direct, host));
  EXPECT_FALSE(r.has_value());
  if (!r) {
    EXPECT_EQ(r.error().code, oid::mongo::errc::tls_failed) << r.error().message;
    EXPECT_THAT(r.error().message, HasSubstr("host name mismatch"));
    EXPECT_THAT(r.error().message, HasSubstr("127.0.0.2"));
  }
  for (const char* allow : {"&tlsAllowInvalidHostnames=true", "&tlsInsecure=true"}) {
    SCOPED_TRACE(allow);
    const auto ok = ping_new_client(with(direct, host) + allow);
    EXPECT_TRUE(ok.has_value()) << ok.error().message;
  }
  done = true;
  acceptor.join();
  for (auto& t : pipes) t.join();
  ::close(listen_fd);
}

}  // namespace
