#include "mongo/wire/stream.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include "mongo/wire/tls.hpp"

namespace oid::mongo::detail {
namespace {

using clock = std::chrono::steady_clock;

// Milliseconds left until `deadline` for poll(): -1 for no deadline, at least 0.
int poll_timeout(clock::time_point deadline) {
  if (deadline == no_deadline) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max()));
}

// Waits until `fd` is ready for `events`. Errors: timeout.
result<void> wait_for(int fd, short events, clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, poll_timeout(deadline));
    if (n > 0) return {};
    if (n == 0) return oid::error{errc::timeout, 0};
    if (errno != EINTR) return oid::error{errc::connection_closed, 0};
  }
}

// A non-blocking socket connected to `addr` within `deadline`, or -1 with errno-like detail.
int connect_to(const sockaddr* addr, socklen_t len, int family, clock::time_point deadline,
               std::string& detail, bool& timed_out) {
  const int fd = ::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    detail = std::strerror(errno);
    return -1;
  }
  if (::connect(fd, addr, len) != 0) {
    if (errno != EINPROGRESS && errno != EINTR) {
      detail = std::strerror(errno);
      ::close(fd);
      return -1;
    }
    if (auto w = wait_for(fd, POLLOUT, deadline); !w) {
      timed_out = w.error().code == errc::timeout;
      detail = timed_out ? "timed out" : "poll failed";
      ::close(fd);
      return -1;
    }
    int err = 0;
    socklen_t err_len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &err_len) != 0 || err != 0) {
      detail = std::strerror(err != 0 ? err : errno);
      ::close(fd);
      return -1;
    }
  }
  if (family != AF_UNIX) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// A socket connected to `h` within `deadline`.
outcome<int> connect_socket(const host& h, clock::time_point deadline) {
  std::string detail = "no address";
  bool timed_out = false;
  int fd = -1;
  if (h.type == host::kind::unix_socket) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (h.name.size() >= sizeof addr.sun_path) {
      return failure(errc::connection_failed, "socket path too long: " + h.name);
    }
    std::memcpy(addr.sun_path, h.name.data(), h.name.size());
    fd = connect_to(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, AF_UNIX, deadline,
                    detail, timed_out);
  } else {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    if (h.type != host::kind::hostname) hints.ai_flags |= AI_NUMERICHOST;
    addrinfo* found = nullptr;
    // getaddrinfo has no timeout of its own; name resolution is the one step connectTimeoutMS
    // does not bound.
    const int rc =
        ::getaddrinfo(h.name.c_str(), std::to_string(h.port_or_default()).c_str(), &hints, &found);
    if (rc != 0) {
      return failure(errc::connection_failed,
                     "cannot resolve " + h.name + ": " + ::gai_strerror(rc));
    }
    for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
      fd = connect_to(a->ai_addr, a->ai_addrlen, a->ai_family, deadline, detail, timed_out);
    }
    ::freeaddrinfo(found);
  }
  if (fd < 0) {
    return failure(timed_out ? errc::timeout : errc::connection_failed,
                   "cannot connect to " + describe(h) + ": " + detail);
  }
  return fd;
}

// One non-blocking send of up to `n` bytes, on the socket or through its TLS session.
io_step send_some(int fd, tls_session* tls, const std::uint8_t* data, std::size_t n) {
  if (tls != nullptr) return tls->write(data, n);
  const ssize_t r = ::send(fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (r > 0) return {static_cast<std::size_t>(r)};
  if (r < 0 && errno == EINTR) return {};
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {0, POLLOUT};
  return {0, 0, errc::connection_closed};
}

// One non-blocking receive of up to `n` bytes, from the socket or through its TLS session.
io_step recv_some(int fd, tls_session* tls, std::uint8_t* out, std::size_t n) {
  if (tls != nullptr) return tls->read(out, n);
  const ssize_t r = ::recv(fd, out, n, MSG_DONTWAIT);
  if (r > 0) return {static_cast<std::size_t>(r)};
  if (r < 0 && errno == EINTR) return {};
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {0, POLLIN};
  return {0, 0, errc::connection_closed};  // 0: the server closed its side
}

}  // namespace

std::string describe(const host& h) {
  if (h.type == host::kind::unix_socket) return h.name;
  const std::string name = h.type == host::kind::ip_literal ? "[" + h.name + "]" : h.name;
  return name + ":" + std::to_string(h.port_or_default());
}

outcome<stream> stream::connect(const host& h, const std::shared_ptr<const tls_context>& tls,
                                std::chrono::milliseconds connect_timeout) {
  const auto deadline = deadline_after(connect_timeout);
  auto fd = connect_socket(h, deadline);
  if (!fd) return std::move(fd).error();
  stream s;
  s.fd_ = *fd;
  if (!tls) return s;
  // The TLS handshake, driven by poll() under the connect timeout like the TCP connect.
  auto session = tls_session::start(tls, s.fd_, h, deadline);
  if (!session) return std::move(session).error();
  s.tls_ = std::move(*session);
  while (true) {
    const auto step = s.tls_->handshake();
    if (step.done != 0) return s;
    if (step.error != errc{}) {
      return failure(step.error,
                     "TLS handshake with " + describe(h) + " failed: " + s.tls_->last_error());
    }
    if (step.wait == 0) continue;
    if (auto w = wait_for(s.fd_, step.wait, deadline); !w) {
      return failure(w.error().code, "TLS handshake with " + describe(h) + " did not finish" +
                                         (w.error().code == errc::timeout
                                              ? " within connectTimeoutMS (" +
                                                    std::to_string(connect_timeout.count()) + " ms)"
                                              : ""));
    }
  }
}

stream::stream(stream&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), tls_(std::move(other.tls_)) {}

stream& stream::operator=(stream&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    tls_ = std::move(other.tls_);
  }
  return *this;
}

stream::~stream() { close(); }

void stream::close() noexcept {
  if (fd_ < 0) return;
  if (tls_) tls_->notify_close();
  ::close(fd_);
  fd_ = -1;
}

void stream::drain_and_close(std::chrono::milliseconds timeout) noexcept {
  if (fd_ < 0) return;
  if (tls_) tls_->notify_close();
  if (::shutdown(fd_, SHUT_WR) == 0) {
    const auto until = deadline_after(timeout);
    std::uint8_t sink[4096];
    while (true) {
      const ssize_t r = ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT);
      if (r > 0) continue;
      if (r == 0) break;  // the server has closed its side
      if (errno == EINTR) continue;
      if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd_, POLLIN, until)) continue;
      break;
    }
  }
  ::close(fd_);
  fd_ = -1;
}

oid::error stream::fail(oid::error e) noexcept {
  close();
  return e;
}

result<void> stream::write_all(std::span<const std::uint8_t> bytes, clock::time_point deadline) {
  if (fd_ < 0) return oid::error{errc::connection_closed, 0};
  std::size_t sent = 0;
  while (sent < bytes.size()) {
    const auto step = send_some(fd_, tls_.get(), bytes.data() + sent, bytes.size() - sent);
    sent += step.done;
    if (step.error != errc{}) return fail(oid::error{step.error, 0});
    if (step.wait != 0) {
      if (auto w = wait_for(fd_, step.wait, deadline); !w) return fail(w.error());
    }
  }
  return {};
}

result<std::size_t> stream::read_some(std::uint8_t* out, std::size_t n,
                                      clock::time_point deadline) {
  if (fd_ < 0) return oid::error{errc::connection_closed, 0};
  while (true) {
    const auto step = recv_some(fd_, tls_.get(), out, n);
    if (step.done > 0) return step.done;
    if (step.error != errc{}) return fail(oid::error{step.error, 0});
    if (step.wait != 0) {
      if (auto w = wait_for(fd_, step.wait, deadline); !w) return fail(w.error());
    }
  }
}

bool stream::set_receive_low_water(int bytes) noexcept {
  if (fd_ < 0 || tls_) return false;
  return ::setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof bytes) == 0;
}

std::string stream::tls_error() const { return tls_ ? tls_->last_error() : std::string(); }

}  // namespace oid::mongo::detail
