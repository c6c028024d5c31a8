// The wire's layers one at a time, against a scripted server on loopback: the stream (bytes,
// deadlines), a connection made over a stream, and the handshake run on it. The connection as a
// whole (connection::open, faults after the handshake) is tested in mongo_fault_test.cpp.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <oid/bson/builder.hpp>
#include <optional>
#include <string>

#include "mongo/wire/connection.hpp"
#include "mongo/wire/handshake.hpp"
#include "mongo/wire/stream.hpp"
#include "support/script_server.hpp"

namespace {

using oid::bson::builder;
namespace mongo = oid::mongo;
using namespace oid::testing;
using namespace std::chrono_literals;

mongo::host loopback(const script_server& server) {
  const auto address = server.address();
  const auto port = static_cast<std::uint16_t>(std::stoi(address.substr(address.find(':') + 1)));
  return mongo::host{mongo::host::kind::ipv4, "127.0.0.1", port};
}

TEST(MongoStreamTest, BytesGoBothWaysAndAStalledReadIsATimeoutThatClosesTheStream) {
  script_server server([](peer& p, int) {
    std::uint8_t in[5];
    std::size_t got = 0;
    while (got < sizeof in) {
      const ssize_t r = ::recv(p.fd(), in + got, sizeof in - got, 0);
      if (r <= 0) return;
      got += static_cast<std::size_t>(r);
    }
    (void)::send(p.fd(), in, sizeof in, MSG_NOSIGNAL);  // echo, then say nothing more
    pollfd w{p.fd(), POLLIN, 0};
    (void)::poll(&w, 1, 2000);
  });
  auto s = mongo::detail::stream::connect(loopback(server), nullptr, 2s);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  const std::uint8_t hello[5] = {'h', 'e', 'l', 'l', 'o'};
  ASSERT_TRUE(s->write_all(hello, mongo::detail::deadline_after(2s)));
  std::uint8_t back[5] = {};
  std::size_t got = 0;
  while (got < sizeof back) {
    auto n = s->read_some(back + got, sizeof back - got, mongo::detail::deadline_after(2s));
    ASSERT_TRUE(n.has_value());
    got += *n;
  }
  EXPECT_EQ(std::memcmp(back, hello, sizeof hello), 0);
  std::uint8_t more[1];
  auto stalled = s->read_some(more, 1, mongo::detail::deadline_after(100ms));
  ASSERT_FALSE(stalled.has_value());
  EXPECT_EQ(stalled.error().code, mongo::errc::timeout);
  EXPECT_FALSE(s->is_open());  // an error leaves nothing to trust on the wire
  EXPECT_FALSE(s->write_all(hello, mongo::detail::deadline_after(100ms)));
}

TEST(MongoStreamTest, ARefusedConnectNamesTheHost) {
  std::optional<mongo::host> gone;
  {
    script_server server([](peer&, int) {});
    gone = loopback(server);
  }  // nothing listens there any more
  auto s = mongo::detail::stream::connect(*gone, nullptr, 2s);
  ASSERT_FALSE(s.has_value());
  EXPECT_EQ(s.error().code, mongo::errc::connection_failed);
  EXPECT_NE(s.error().message.find("cannot connect to 127.0.0.1:" +
                                   std::to_string(gone->port_or_default())),
            std::string::npos)
      << s.error().message;
}

TEST(MongoHandshakeTest, RunsOnAConnectionOverAStreamAndKeepsOnlySaneLimits) {
  script_server server([](peer& p, int) {
    auto hello = p.read();
    if (!hello) return;
    builder b;
    b.append_bool("isWritablePrimary", true)
        .append_int32("maxBsonObjectSize", -1)           // absurd: the default stays
        .append_int32("maxMessageSizeBytes", 1'000'000)  // sane: taken
        .append_int32("maxWireVersion", 17)
        .append_double("ok", 1.0);
    p.reply(*hello, b.view());
    (void)p.read();
  });
  const auto h = loopback(server);
  auto s = mongo::detail::stream::connect(h, nullptr, 2s);
  ASSERT_TRUE(s.has_value()) << s.error().message;
  mongo::connection c(std::move(*s), h, 2s);
  auto info = mongo::detail::handshake(c, {});
  ASSERT_TRUE(info.has_value()) << info.error().message;
  EXPECT_EQ(info->max_bson_object_size, mongo::handshake_info{}.max_bson_object_size);
  EXPECT_EQ(info->max_message_size_bytes, 1'000'000);
  EXPECT_EQ(info->max_wire_version, 17);
  EXPECT_TRUE(info->writable_primary);
  EXPECT_TRUE(info->hello.view().contains("maxWireVersion"));
}

TEST(MongoHandshakeTest, AServerWithoutOpMsgIsUnsupportedAndNamed) {
  script_server server([](peer& p, int) {
    auto hello = p.read();
    if (!hello) return;
    builder b;
    b.append_int32("maxWireVersion", 5).append_double("ok", 1.0);
    p.reply(*hello, b.view());
  });
  auto c = mongo::connection::open(loopback(server), {});
  ASSERT_FALSE(c.has_value());
  EXPECT_EQ(c.error().code, mongo::errc::unsupported);
  EXPECT_NE(c.error().message.find(server.address() + " is too old"), std::string::npos)
      << c.error().message;
}

}  // namespace
