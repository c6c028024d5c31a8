#include "mongo/wire/connection.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/crypto.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <oid/bson/builder.hpp>
#include <oid/mongo/server_codes.hpp>
#include <utility>

#include "mongo/auth/authenticate.hpp"
#include "mongo/wire/batch_check.hpp"
#include "mongo/wire/reply.hpp"
#include "mongo/wire/tls.hpp"

#ifndef OID_MONGO_VERSION
#  define OID_MONGO_VERSION "unknown"
#endif

namespace oid::mongo {
namespace {

using clock = std::chrono::steady_clock;

// The receive buffer's first size: a small reply comes whole in one read.
constexpr std::size_t first_read = 64 * 1024;

// Milliseconds left until `deadline` for poll(): -1 for no deadline, at least 0.
int poll_timeout(clock::time_point deadline) {
  if (deadline == clock::time_point::max()) return -1;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - clock::now()).count();
  if (left <= 0) return 0;
  return static_cast<int>(std::min<long long>(left, std::numeric_limits<int>::max()));
}

// A limit of the hello reply, when it lies in `range`; else `fallback` (the default): a server
// cannot make the client divide by zero, underflow a size, or accept larger messages than
// MongoDB ever sends by naming a negative, zero or absurd limit.
std::int32_t sane_limit(bson::document_view hello, std::string_view key,
                        handshake_info::limit_range range, std::int32_t fallback) {
  const auto e = hello.find(key);
  if (!e) return fallback;
  const auto v = detail::as_integer(*e);
  if (!v || *v < range.min || *v > range.max) return fallback;
  return static_cast<std::int32_t>(*v);
}

clock::time_point deadline_after(std::chrono::milliseconds timeout) {
  if (timeout.count() <= 0) return clock::time_point::max();
  return clock::now() + timeout;
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

// One non-blocking send of up to `n` bytes, on the socket or through its TLS session.
detail::io_step send_some(int fd, detail::tls_session* tls, const std::uint8_t* data,
                          std::size_t n) {
  if (tls != nullptr) return tls->write(data, n);
  const ssize_t r = ::send(fd, data, n, MSG_NOSIGNAL | MSG_DONTWAIT);
  if (r > 0) return {static_cast<std::size_t>(r)};
  if (r < 0 && errno == EINTR) return {};
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {0, POLLOUT};
  return {0, 0, errc::connection_closed};
}

// One non-blocking receive of up to `n` bytes, from the socket or through its TLS session.
detail::io_step recv_some(int fd, detail::tls_session* tls, std::uint8_t* out, std::size_t n) {
  if (tls != nullptr) return tls->read(out, n);
  const ssize_t r = ::recv(fd, out, n, MSG_DONTWAIT);
  if (r > 0) return {static_cast<std::size_t>(r)};
  if (r < 0 && errno == EINTR) return {};
  if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return {0, POLLIN};
  return {0, 0, errc::connection_closed};  // 0: the server closed its side
}

std::string describe(const host& h) {
  if (h.type == host::kind::unix_socket) return h.name;
  const std::string name = h.type == host::kind::ip_literal ? "[" + h.name + "]" : h.name;
  return name + ":" + std::to_string(h.port_or_default());
}

}  // namespace

std::optional<credential> credential::from(const mongo::uri& u) {
  if (!u.has_credential()) return std::nullopt;
  credential c;
  c.user = u.username().value_or("");
  if (u.password()) c.password = *u.password();
  c.source = u.auth_database();
  c.mechanism = u.auth_mechanism().value_or("");
  return c;
}

bson::document client_metadata(std::string_view app_name) {
  utsname u{};
  const bool have_uname = ::uname(&u) == 0;
  bson::builder b;
  if (!app_name.empty()) b.open_document("application").append_string("name", app_name).close();
  b.open_document("driver")
      .append_string("name", "oid")
      .append_string("version", OID_MONGO_VERSION);
  b.close();
  b.open_document("os").append_string("type", have_uname ? u.sysname : "unknown");
  if (have_uname) {
    b.append_string("name", u.sysname).append_string("architecture", u.machine);
    b.append_string("version", u.release);
  }
  b.close();
  std::string platform = "C++" + std::to_string(__cplusplus / 100 % 100);
#if defined(__clang__)
  platform += ", clang " __clang_version__;
#elif defined(__GNUC__)
  platform += ", gcc " __VERSION__;
#endif
  b.append_string("platform", platform);
  return std::move(b).extract();
}

outcome<connection> connection::open(const mongo::host& h, const connection_options& options) {
  const auto deadline = deadline_after(options.connect_timeout);
  connection c;
  c.host_ = h;
  std::string detail = "no address";
  bool timed_out = false;
  if (h.type == host::kind::unix_socket) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (h.name.size() >= sizeof addr.sun_path) {
      return failure(errc::connection_failed, "socket path too long: " + h.name);
    }
    std::memcpy(addr.sun_path, h.name.data(), h.name.size());
    c.fd_ = connect_to(reinterpret_cast<const sockaddr*>(&addr), sizeof addr, AF_UNIX, deadline,
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
    for (addrinfo* a = found; a != nullptr && c.fd_ < 0; a = a->ai_next) {
      c.fd_ = connect_to(a->ai_addr, a->ai_addrlen, a->ai_family, deadline, detail, timed_out);
    }
    ::freeaddrinfo(found);
  }
  if (c.fd_ < 0) {
    return failure(timed_out ? errc::timeout : errc::connection_failed,
                   "cannot connect to " + describe(h) + ": " + detail);
  }
  if (options.tls) {
    // The TLS handshake, driven by poll() under the connect timeout like the TCP connect.
    auto session = detail::tls_session::start(options.tls, c.fd_, h, deadline);
    if (!session) return std::move(session).error();
    c.tls_ = std::move(*session);
    while (true) {
      const auto step = c.tls_->handshake();
      if (step.done != 0) break;
      if (step.error != errc{}) {
        return failure(step.error,
                       "TLS handshake with " + describe(h) + " failed: " + c.tls_->last_error());
      }
      if (step.wait == 0) continue;
      if (auto w = wait_for(c.fd_, step.wait, deadline); !w) {
        return failure(w.error().code,
                       "TLS handshake with " + describe(h) + " did not finish" +
                           (w.error().code == errc::timeout
                                ? " within connectTimeoutMS (" +
                                      std::to_string(options.connect_timeout.count()) + " ms)"
                                : ""));
      }
    }
  }

  // The handshake runs under the connect timeout; commands afterwards under the socket timeout.
  c.socket_timeout_ = options.connect_timeout;
  std::optional<detail::handshake_auth> auth;
  // MONGODB-X509 without a user name names the client certificate's subject, as servers
  // before 3.4 need and later ones accept.
  std::optional<credential> x509;
  const credential* who = options.auth ? &*options.auth : nullptr;
  if (who != nullptr && who->mechanism == "MONGODB-X509" && who->user.empty() && options.tls &&
      !options.tls->client_subject().empty()) {
    x509.emplace(*who);
    x509->user = options.tls->client_subject();
    who = &*x509;
  }
  if (who != nullptr) {
    auto a = detail::handshake_auth::prepare(*who, options.scram_cache.get());
    if (!a) return std::move(a).error();
    auth.emplace(std::move(*a));
  }
  bson::builder hello;
  hello.append_int32("hello", 1).append_bool("helloOk", true);
  const bson::document metadata = client_metadata(options.app_name);
  hello.append_document("client", metadata.view());
  if (options.load_balanced) hello.append_bool("loadBalanced", true);
  if (auth) auth->add_to_hello(hello);
  auto reply = c.run("admin", hello.view());
  if (reply && !detail::is_ok(reply->view()) &&
      detail::server_error_of(reply->view()).code ==
          server_code::command_not_found) {  // before 4.4.2
    bson::builder legacy;
    legacy.append_int32("isMaster", 1);
    legacy.append_document("client", metadata.view());
    if (options.load_balanced) legacy.append_bool("loadBalanced", true);
    if (auth) auth->add_to_hello(legacy);
    reply = c.run("admin", legacy.view());
  }
  if (!reply) {
    // TLS 1.3 finishes the client's handshake before the server checks the client's
    // certificate: a refusal (no certificate, say) comes as an alert on this first read.
    const std::string tls_detail =
        c.tls_ && !c.tls_->last_error().empty() ? " (" + c.tls_->last_error() + ")" : std::string();
    return failure(
        reply.error().code,
        "handshake with " + describe(h) + " failed: " + reply.error().message() + tls_detail,
        reply.error().offset);
  }
  const auto v = reply->view();
  if (!detail::is_ok(v)) {
    return failure(errc::connection_failed, "handshake with " + describe(h) +
                                                " refused: " + detail::server_error_of(v).message);
  }
  auto& s = c.server_;
  s.max_bson_object_size = sane_limit(
      v, "maxBsonObjectSize", handshake_info::bson_object_size_range, s.max_bson_object_size);
  s.max_message_size_bytes = sane_limit(
      v, "maxMessageSizeBytes", handshake_info::message_size_range, s.max_message_size_bytes);
  s.max_write_batch_size = sane_limit(
      v, "maxWriteBatchSize", handshake_info::write_batch_size_range, s.max_write_batch_size);
  s.max_wire_version = detail::int_field(v, "maxWireVersion", 0);
  s.writable_primary =
      detail::bool_field(v, "isWritablePrimary", detail::bool_field(v, "ismaster", false));
  if (const auto id = v.find("serviceId")) {
    if (auto value = id->get_object_id()) s.service_id = *value;
  }
  if (options.load_balanced && !s.service_id) {
    // unsupported: the server will not change its mind, so the operation fails at once.
    return failure(errc::unsupported,
                   describe(h) +
                       " answered the handshake without a serviceId: the driver attempted to "
                       "initialize in load balancing mode, but the server does not support this "
                       "mode (loadBalanced=true needs a MongoDB 5.0 or later behind a load "
                       "balancer)");
  }
  s.hello = std::move(*reply);
  if (s.max_wire_version < 6) {
    return failure(errc::unsupported,
                   describe(h) + " is too old: oid needs OP_MSG (MongoDB 3.6, wire version 6)");
  }
  if (auth) {
    auto done = auth->finish(c, v, describe(h));
    // The send buffer kept the last authentication message (PLAIN's password, SCRAM's proof):
    // clear all of it, not only its size, before the connection goes on or away.
    c.out_.resize(c.out_.capacity());
    OPENSSL_cleanse(c.out_.data(), c.out_.size());
    c.out_.clear();
    if (!done) return std::move(done).error();
  }
  c.socket_timeout_ = options.socket_timeout;
  return c;
}

connection::connection(connection&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      next_request_id_(other.next_request_id_),
      socket_timeout_(other.socket_timeout_),
      host_(std::move(other.host_)),
      server_(std::move(other.server_)),
      unacknowledged_(std::exchange(other.unacknowledged_, {})),
      tls_(std::move(other.tls_)),
      in_(std::move(other.in_)),
      in_message_(std::exchange(other.in_message_, 0)),
      in_end_(std::exchange(other.in_end_, 0)),
      out_(std::move(other.out_)) {}

connection& connection::operator=(connection&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    next_request_id_ = other.next_request_id_;
    socket_timeout_ = other.socket_timeout_;
    host_ = std::move(other.host_);
    server_ = std::move(other.server_);
    unacknowledged_ = std::exchange(other.unacknowledged_, {});
    tls_ = std::move(other.tls_);
    in_ = std::move(other.in_);
    in_message_ = std::exchange(other.in_message_, 0);
    in_end_ = std::exchange(other.in_end_, 0);
    out_ = std::move(other.out_);
  }
  return *this;
}

connection::~connection() { close(); }

void connection::close() noexcept {
  if (fd_ < 0) return;
  if (tls_) tls_->notify_close();
  if (!unacknowledged_.empty()) drain_before_close();
  ::close(fd_);
  fd_ = -1;
}

// Fire-and-forget messages may still sit unread in the server's receive buffer, and replies the
// server sent anyway (FerretDB answers even moreToCome messages) in ours. Closing a socket with
// unread data in it sends a reset instead of a FIN, and on a reset the server's kernel throws
// away what the server had not read yet: those writes would be lost (FerretDB lost 3,000 of
// 5,000 documents of `oid mongo insert --w0` that way). So half-close, read and drop whatever
// comes until the server closes its side, which it does once it has read every message, and only
// then close. Bounded, as every wait here is.
void connection::drain_before_close() noexcept {
  constexpr std::chrono::milliseconds close_timeout{10'000};
  if (::shutdown(fd_, SHUT_WR) != 0) return;
  const auto until = deadline_after(
      socket_timeout_.count() > 0 ? std::min(socket_timeout_, close_timeout) : close_timeout);
  std::uint8_t sink[4096];
  while (true) {
    const ssize_t r = ::recv(fd_, sink, sizeof sink, MSG_DONTWAIT);
    if (r > 0) continue;
    if (r == 0) return;  // the server has closed its side
    if (errno == EINTR) continue;
    if ((errno == EAGAIN || errno == EWOULDBLOCK) && wait_for(fd_, POLLIN, until)) continue;
    return;
  }
}

oid::error connection::fail(oid::error e) noexcept {
  unacknowledged_.clear();  // broken: close at once, nothing more can be delivered
  close();
  return e;
}

std::chrono::steady_clock::time_point connection::deadline() const {
  return deadline_after(socket_timeout_);
}

result<std::span<const std::uint8_t>> connection::encode(
    std::string_view db, bson::document_view command, std::span<const document_sequence> sequences,
    std::uint32_t flags, std::int32_t& request_id) {
  request_id = next_request_id_;
  // Ids stay positive: 0 means "not a reply" in responseTo.
  next_request_id_ =
      next_request_id_ == std::numeric_limits<std::int32_t>::max() ? 1 : next_request_id_ + 1;
  auto encoded = detail::encode_request(request_id, flags, command, db, sequences, out_);
  if (!encoded ||
      out_.size() > static_cast<std::size_t>(std::max(0, server_.max_message_size_bytes))) {
    sent();
    return encoded ? oid::error{oid::errc::too_large, 0} : encoded.error();
  }
  return std::span<const std::uint8_t>(out_);
}

// Keeps the send buffer for the next request, when it is small: a command and its reply then
// cost no allocation for the message. A large one (bulk writes send megabytes) is given back, so
// that an idle pool of maxPoolSize connections holds little; keeping it was measured not to make
// bulk inserts faster (insert many small, 1 and 2 threads on the canned server).
void connection::sent() noexcept {
  constexpr std::size_t kept_send_capacity = 64 * 1024;
  if (out_.capacity() > kept_send_capacity) {
    std::vector<std::uint8_t>().swap(out_);
  } else {
    out_.clear();
  }
}

result<void> connection::write_all(std::span<const std::uint8_t> bytes,
                                   clock::time_point deadline) {
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

result<std::size_t> connection::read_some(std::uint8_t* out, std::size_t n,
                                          clock::time_point deadline) {
  while (true) {
    const auto step = recv_some(fd_, tls_.get(), out, n);
    if (step.done > 0) return step.done;
    if (step.error != errc{}) return fail(oid::error{step.error, 0});
    if (step.wait != 0) {
      if (auto w = wait_for(fd_, step.wait, deadline); !w) return fail(w.error());
    }
  }
}

result<void> connection::read_rest(std::size_t length, detail::batch_check& check,
                                   clock::time_point deadline) {
  // For the rest of a large reply (a cursor batch of up to 16 MB), poll wakes the thread only when
  // a large piece has arrived (SO_RCVLOWAT; never more than what is still to come, or it would wait
  // for bytes that are not sent): without it, each wake-up takes the few kilobytes that came since
  // the last, and the context switches cost more CPU than the copy. Find many of 10,000 tweets on
  // the canned server: 2,200-2,500 context switches -> about 400 per 31 finds, CPU per document
  // 0.47 -> 0.40 us (medians of 4; 256 KiB: 0.54, 4 MiB: 0.51). With TLS the bytes come through
  // OpenSSL's records, so the socket's count says nothing: left as it is.
  //
  // After each piece, the batch documents that have arrived whole are validated (batch_check)
  // while the server sends the next piece, and decoding the reply skips them.
  constexpr std::size_t large = 256 * 1024;
  constexpr int low_water = 1024 * 1024;
  const bool large_rest = !tls_ && length - in_end_ > large;
  int lowat = 1;
  auto set_lowat = [&](int v) {
    if (v != lowat && ::setsockopt(fd_, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0) lowat = v;
  };
  while (in_end_ < length) {
    // The buffer grows with what has arrived (doubling, by at least the first read's 64 KiB),
    // never up front to the length the header declares: a server that declares 47 MB and stalls
    // or closes makes the client hold what it sent and as much again, not 47 MB.
    if (in_end_ == in_.capacity()) {
      in_.reserve(std::min(length, in_end_ + std::max(in_end_, first_read)), in_end_);
    }
    if (large_rest) set_lowat(static_cast<int>(std::min<std::size_t>(low_water, length - in_end_)));
    auto r = read_some(in_.data() + in_end_, std::min(length, in_.capacity()) - in_end_, deadline);
    if (!r) {
      set_lowat(1);
      return r.error();
    }
    in_end_ += *r;
    if (in_end_ < length) check.advance(std::span<const std::uint8_t>(in_.data(), in_end_));
  }
  set_lowat(1);
  return {};
}

// Reads the next message into in_, reusing it: no allocation once it has grown to the largest
// message, no zero-fill. A small reply comes whole with its header in one recv; a large one's
// rest is read to its exact length, the buffer growing as it arrives (read_rest). Bytes that came
// after the message (the server sent several, as FerretDB does when it answers fire-and-forget
// messages) stay in in_ for the next call.
result<op_msg> connection::read_reply(clock::time_point deadline) {
  const std::size_t carried = in_end_ - in_message_;
  if (carried > 0 && in_message_ > 0) std::memmove(in_.data(), in_.data() + in_message_, carried);
  in_message_ = 0;
  in_end_ = carried;
  in_.reserve(first_read, in_end_);
  while (in_end_ < message_header_size) {
    auto r = read_some(in_.data() + in_end_, in_.capacity() - in_end_, deadline);
    if (!r) return r.error();
    in_end_ += *r;
  }
  // MongoDB's 48,000,000 bytes, whatever the server said: the handshake never takes a larger
  // maxMessageSizeBytes, and a reply's size is the memory a server makes the client hold.
  const op_msg_limits limits;
  const auto h = decode_header(std::span(in_.data(), in_end_), limits);
  if (!h) return fail(h.error());
  const auto length = static_cast<std::size_t>(h->message_length);
  detail::batch_check check(limits);
  if (in_end_ < length) {
    check.advance(std::span<const std::uint8_t>(in_.data(), in_end_));
    if (auto r = read_rest(length, check, deadline); !r) return r.error();
  }
  in_message_ = length;
  auto reply =
      detail::decode_op_msg(std::span<const std::uint8_t>(in_.data(), length), {}, check.checked());
  if (!reply) return fail(reply.error());
  return reply;
}

void connection::take_reply(detail::receive_buffer& into) {
  in_.swap(into);
  const std::size_t carried = in_end_ - in_message_;
  if (carried > 0) {
    in_.reserve(carried, 0);
    std::memcpy(in_.data(), into.data() + in_message_, carried);
  }
  in_message_ = 0;
  in_end_ = carried;
}

void detail::receive_buffer::reserve(std::size_t n, std::size_t keep) {
  if (n <= capacity_) return;
  auto grown = std::make_unique_for_overwrite<std::uint8_t[]>(n);
  if (keep > 0) std::memcpy(grown.get(), bytes_.get(), std::min(keep, capacity_));
  bytes_ = std::move(grown);
  capacity_ = n;
}

result<bson::document> connection::run(std::string_view db, bson::document_view command,
                                       std::span<const document_sequence> sequences) {
  auto body = run_view(db, command, sequences);
  if (!body) return body.error();
  return bson::document(*body);
}

result<bson::document_view> connection::run_view(std::string_view db, bson::document_view command,
                                                 std::span<const document_sequence> sequences) {
  if (broken()) return oid::error{errc::connection_closed, 0};
  std::int32_t request_id = 0;
  auto bytes = encode(db, command, sequences, 0, request_id);
  if (!bytes) return bytes.error();
  const auto until = deadline();
  auto written = write_all(*bytes, until);
  sent();
  if (!written) return written.error();
  while (true) {
    auto reply = read_reply(until);
    if (!reply) return reply.error();
    if (reply->response_to == request_id) return reply->body;
    const auto stale =
        std::find(unacknowledged_.begin(), unacknowledged_.end(), reply->response_to);
    if (stale == unacknowledged_.end()) return fail(oid::error{errc::unexpected_reply, 8});
    unacknowledged_.erase(stale);
  }
}

result<void> connection::send_unacknowledged(std::string_view db, bson::document_view command,
                                             std::span<const document_sequence> sequences) {
  if (broken()) return oid::error{errc::connection_closed, 0};
  std::int32_t request_id = 0;
  auto bytes = encode(db, command, sequences, op_msg_flags::more_to_come, request_id);
  if (!bytes) return bytes.error();
  auto written = write_all(*bytes, deadline());
  sent();
  if (!written) return written.error();
  // Remember it, in case the server replies anyway; a real mongod does not, so keep few.
  unacknowledged_.push_back(request_id);
  // Keep the latest 4,096 to 8,192: the oldest half goes at once (amortized O(1) per message).
  if (unacknowledged_.size() > 8192) {
    unacknowledged_.erase(unacknowledged_.begin(), unacknowledged_.end() - 4096);
  }
  return {};
}

}  // namespace oid::mongo
